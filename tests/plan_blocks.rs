//! The plan-time lesson blocks (`lessons/<scope>.md`) as an agent harness reads them: the
//! global block and the block of the project the task is in, injected together before a task.

mod common;

use std::collections::BTreeSet;

use common::{Records, read_json};
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const LEDGER: &str = "git@github.com:acme/ledger-service.git";
const INFRA: &str = "git@github.com:acme/infra.git";

const IMPORTLIB: &str = "Run pytest with --import-mode=importlib when test modules share a name";

fn experience(id: &str, day: u32, project: &str, domains: &[&str], outcome: &str) -> Value {
    json!({
        "id": id,
        "recorded_at": format!("2026-03-{day:02}T10:00:00Z"),
        "project": project,
        "domains": domains,
        "outcome": outcome,
    })
}

fn with(mut record: Value, field: &str, value: Value) -> Value {
    record[field] = value;
    record
}

/// Three projects: the importlib lesson is global in python (two projects), and the same
/// words are also a project lesson in another domain of billing-api (`pytest`) and of
/// ledger-service (`testing`).
fn corpus(r: &Records) {
    r.add(
        "billing.jsonl",
        &[
            with(experience("bill-0302", 2, BILLING, &["python", "pytest"], "succeeded"), "lesson", json!(IMPORTLIB)),
            with(
                experience("bill-0304", 4, BILLING, &["python"], "succeeded"),
                "lesson",
                json!("Pin pydantic below 2 until the settings module moves to pydantic-settings"),
            ),
            with(
                experience("bill-0305", 5, BILLING, &["python"], "succeeded"),
                "gotchas",
                json!(["Celery acks late tasks again after visibility_timeout, so long tasks run twice on Redis"]),
            ),
            with(
                experience("bill-0306", 6, BILLING, &["python"], "failed"),
                "dead_ends",
                json!([{"name": "Mock the database with SQLite", "reason": "ON CONFLICT DO UPDATE behaved differently"}]),
            ),
        ],
    );
    r.add(
        "ledger.jsonl",
        &[
            with(
                experience("ledger-0303", 3, LEDGER, &["python"], "succeeded"),
                "lesson",
                json!(IMPORTLIB),
            ),
            with(
                experience("ledger-0307", 7, LEDGER, &["testing"], "succeeded"),
                "lesson",
                json!(IMPORTLIB),
            ),
        ],
    );
    r.add(
        "infra.jsonl",
        &[
            with(
                experience("infra-0305", 5, INFRA, &["terraform"], "succeeded"),
                "lesson",
                json!("Pin provider versions in required_providers before running terraform init -upgrade"),
            ),
            with(
                experience("infra-0306", 6, INFRA, &["kubernetes"], "succeeded"),
                "gotchas",
                json!(
                    "kubectl apply goes to the current context; check kubectl config current-context first"
                ),
            ),
        ],
    );
}

fn block(r: &Records, project: Option<&str>) -> Option<String> {
    let name = match project {
        Some(p) => format!("project-{}", skillc::digest::project(p)),
        None => "global".into(),
    };
    std::fs::read_to_string(r.s.path(&format!("out/lessons/{name}.md"))).ok()
}

/// A harness injects the global block and its project's: a lesson the global block shows
/// takes no second line in the project's, and the line goes to the project's next lesson.
#[test]
fn a_project_block_does_not_repeat_the_global_block() {
    let r = Records::new("plan-blocks-global");
    corpus(&r);
    let ledger = r.compile();
    let lessons = ledger["lessons"].as_array().unwrap();
    let global = block(&r, None).expect("a global block");
    assert_eq!(
        global,
        format!("- {IMPORTLIB} (id: {})\n", id_of(lessons, "python", "global"))
    );

    let billing = block(&r, Some(BILLING)).expect("billing-api's block");
    assert!(!billing.contains("import-mode"), "{billing}");
    let lines: Vec<&str> = billing.lines().collect();
    assert_eq!(lines.len(), 3, "{billing}");
    assert!(
        billing
            .contains("- Avoid: Mock the database with SQLite — ON CONFLICT DO UPDATE behaved differently")
    );
    assert!(billing.contains("- Watch out: Celery acks late tasks again"));
    assert!(billing.contains("- Pin pydantic below 2"));
    // The pytest lesson is still a lesson of billing-api, in the ledger.
    let pytest = scope_of(lessons, "pytest");
    assert_eq!(pytest, format!("project:{}", skillc::digest::project(BILLING)));

    // ledger-service has one lesson of its own, and the global block shows it: no block.
    assert_eq!(
        scope_of(lessons, "testing"),
        format!("project:{}", skillc::digest::project(LEDGER))
    );
    assert_eq!(block(&r, Some(LEDGER)), None);

    // Every id a block shows is an active lesson an agent can cite back in `in_play`.
    let active: BTreeSet<&str> = lessons
        .iter()
        .filter(|l| l["status"] == "active")
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    let infra = block(&r, Some(INFRA)).expect("infra's block");
    assert_eq!(infra.lines().count(), 2, "{infra}");
    for text in [&global, &billing, &infra] {
        for line in text.lines() {
            let id = line.rsplit_once("(id: ").unwrap().1.trim_end_matches(')');
            assert!(active.contains(id), "{line}");
        }
    }
    let files = read_json(&r.s.path("out/ledger.json"));
    assert_eq!(files["generator"], "skillc");
}

fn id_of(lessons: &[Value], domain: &str, scope: &str) -> String {
    let found: Vec<&Value> = lessons
        .iter()
        .filter(|l| l["domain"] == domain && l["scope"] == scope)
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    found[0]["id"].as_str().unwrap().to_string()
}

fn scope_of(lessons: &[Value], domain: &str) -> String {
    let found: Vec<&Value> = lessons.iter().filter(|l| l["domain"] == domain).collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    found[0]["scope"].as_str().unwrap().to_string()
}
