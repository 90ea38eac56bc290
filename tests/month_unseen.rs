//! A month of a team's use that nobody here wrote (an audit: five projects, compiled weekly, the
//! user retiring and restoring, agents listing lessons in `in_play`), and `why` on domains that
//! compiled nothing. Each test holds one thing skillc once got wrong on such data.

mod common;

use common::*;
use serde_json::{Value, json};

const LEDGER: &str = "https://gitlab.com/northwind/ledger-rs";
const GATEWAY: &str = "git@github.com:northwind/gateway.git";
const INFRA: &str = "git@github.com:northwind/infra.git";

fn run(r: &Records, args: &[&str]) -> std::process::Output {
    let out = r.out();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--out", &out]);
    let o = skillc(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

fn lesson<'a>(ledger: &'a Value, id: &str) -> &'a Value {
    (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("{id}: {ledger:#}"))
}

fn why(r: &Records, domain: &str) -> Value {
    json(&run(r, &["why", domain, &r.records(), "--format", "json"]))
}

/// `cargo update` abandoned in two projects is a global avoid rule; the user retires it, a
/// session in the third week abandons it again for another reason (a lesson re-learned under a
/// new id), and in the fourth week the user restores the rule. The restored rule takes over the
/// re-learned lesson's evidence, and with it the reason that session gave: the newest reason
/// leads, as it does when a dead end joins a lesson that was never retired. It used to keep
/// only the reasons given before the retire, so the rule cited ledg-1119-a but told agents
/// why `cargo update` had failed two weeks before.
#[test]
fn a_restored_avoid_rule_gives_the_reason_of_the_session_it_took_over() {
    let r = Records::new("month-restore-reasons");
    r.add(
        "w1.jsonl",
        &[
            json!({"id": "ledg-1103-a", "recorded_at": "2026-11-03T14:00:00Z", "domains": ["rust"], "project": LEDGER,
                   "task": "Bump dependencies", "outcome": "abandoned",
                   "dead_ends": [{"name": "cargo update", "reason": "pulled a tokio release that needs a newer rustc than our pinned toolchain"}]}),
            json!({"id": "gw-1106-a", "recorded_at": "2026-11-06T09:00:00Z", "domains": ["Rust"], "project": GATEWAY,
                   "task": "Update the wasm filter crate", "outcome": "failed",
                   "dead_ends": [{"name": "Cargo update", "reason": "broke the MSRV build"}]}),
        ],
    );
    r.compile();
    let rule = r.active_ids("cargo update");
    assert_eq!(rule.len(), 1);
    let rule = &rule[0];
    run(
        &r,
        &[
            "lessons",
            "retire",
            rule,
            "--reason",
            "we pin with cargo update -p per crate",
        ],
    );
    r.add(
        "w3.jsonl",
        &[json!({"id": "ledg-1119-a", "recorded_at": "2026-11-19T09:00:00Z", "domains": ["rust"], "project": LEDGER,
                 "task": "Refresh the lockfile", "outcome": "abandoned",
                 "dead_ends": [{"name": "cargo update", "reason": "bumped serde past our MSRV"}]})],
    );
    let ledger = r.compile();
    assert_eq!(lesson(&ledger, rule)["status"], "retired");
    let copy = r.active_ids("cargo update");
    assert_eq!(copy.len(), 1, "{ledger:#}");
    assert_eq!(
        lesson(&ledger, &copy[0])["reasons"],
        json!(["bumped serde past our MSRV"])
    );
    run(&r, &["lessons", "restore", rule]);
    r.add(
        "w4.jsonl",
        &[json!({"id": "ledg-1124-a", "recorded_at": "2026-11-24T09:00:00Z", "domains": ["rust"], "project": LEDGER,
                 "task": "Release 0.9", "outcome": "succeeded", "in_play": [rule],
                 "operations": [sh("cargo build --locked", "/src/ledger-rs", None, Some(("build", "ledger-rs")))]})],
    );
    let ledger = r.compile();
    let restored = lesson(&ledger, rule);
    assert_eq!(restored["status"], "active", "{restored:#}");
    assert_eq!(restored["rule"], true);
    assert_eq!(
        restored["evidence"],
        json!(["gw-1106-a", "ledg-1103-a", "ledg-1119-a", "ledg-1124-a"])
    );
    assert_eq!(
        restored["reasons"],
        json!([
            "bumped serde past our MSRV",
            "broke the MSRV build",
            "pulled a tokio release that needs a newer rustc than our pinned toolchain"
        ]),
        "{restored:#}"
    );
    assert_eq!(lesson(&ledger, &copy[0])["superseded_by"], json!(rule));
    let skill = std::fs::read_to_string(r.s.path("out/rust/SKILL.md")).unwrap();
    assert!(
        skill.contains("- cargo update — bumped serde past our MSRV (id: "),
        "{skill}"
    );
    let block = std::fs::read_to_string(r.s.path("out/lessons/global.md")).unwrap();
    assert!(
        block.contains(&format!(
            "- Avoid: cargo update — bumped serde past our MSRV (id: {rule})"
        )),
        "{block}"
    );
}

/// A rule that experiences in play failed twice (the Job lesson, contradicted by two abandoned
/// rollouts) is superseded; `why kubernetes` then has to say so, naming the lesson and the
/// experiences, since that is why the domain lost its rule. It used to count `S001 superseded`
/// among the reasons and give no advice about it, and a mechanical lesson contradicted and then
/// one idle day below the floor was called decayed for want of `in_play`, though it was in play.
#[test]
fn why_names_the_experiences_that_contradicted_a_lesson_out() {
    let r = Records::new("month-why-contradicted");
    let job = "Delete and recreate a Job when kubectl apply says the field is immutable; a Job's pod template cannot be patched.";
    r.add(
        "w1.jsonl",
        &[
            json!({"id": "infra-1104-a", "recorded_at": "2026-11-04T10:15:00Z", "domains": ["k8s"], "project": INFRA,
                   "task": "Roll out the migration job", "outcome": "succeeded", "lesson": job,
                   "operations": [sh("kubectl apply -f migrate-job.yaml", "/infra/k8s", None, Some(("rollout", "migrate")))]}),
            json!({"id": "gw-1104-b", "recorded_at": "2026-11-04T18:00:00Z", "domains": ["Kubernetes"], "project": GATEWAY,
                   "task": "Redeploy the schema job", "outcome": "succeeded", "lesson": job,
                   "operations": [sh("kubectl apply -f job.yaml", "/gw/deploy", None, Some(("rollout", "schema")))]}),
        ],
    );
    r.compile();
    let rule = r.active_ids("Delete and recreate a Job")[0].clone();
    let failed = |id: &str, at: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["kubernetes"], "project": INFRA,
               "task": "Re-run the migrate job", "outcome": "abandoned", "in_play": [rule],
               "operations": [sh("kubectl apply -f migrate-job.yaml", "/infra/k8s", Some("Error from server (Forbidden): jobs.batch is forbidden"), None)]})
    };
    r.add(
        "w2.jsonl",
        &[
            failed("infra-1111-a", "2026-11-11T10:00:00Z"),
            failed("infra-1117-a", "2026-11-17T10:00:00Z"),
        ],
    );
    let ledger = r.compile();
    assert_eq!(lesson(&ledger, &rule)["status"], "superseded");
    let w = why(&r, "kubernetes");
    let advice: Vec<&str> = (w["suggestions"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    let about: Vec<&&str> = advice.iter().filter(|s| s.contains(&rule)).collect();
    assert_eq!(about.len(), 1, "{advice:#?}");
    assert!(
        about[0].contains(&format!("{rule} by infra-1111-a, infra-1117-a"))
            && about[0].contains("had it in play failed")
            && about[0].contains("S001"),
        "{}",
        about[0]
    );
    assert!(!about[0].contains("in_play` so their use counts"), "{}", about[0]);
}

/// `why` on a domain whose every candidate a gate holds back, with support enough for a rule:
/// the near-miss note must not say "3 of 2 supporting experiences from a rule" (the text
/// report says "3 experiences, held back"), and a domain asked for by the valid name of a
/// spelling the records use and the normaliser refused (`build/release`) points at that spelling.
#[test]
fn why_on_held_back_and_refused_spellings_says_what_holds_them() {
    let r = Records::new("month-why-held");
    let mut records = Vec::new();
    for (i, at) in [
        "2026-11-10T10:00:00Z",
        "2026-11-11T10:00:00Z",
        "2026-11-12T10:00:00Z",
    ]
    .iter()
    .enumerate()
    {
        records.push(json!({"id": format!("ans-{}", i + 1), "recorded_at": at, "domains": ["ansible"], "project": INFRA,
            "task": "Run the playbook", "outcome": "failed",
            "lesson": "Run ansible-playbook with --check --diff before applying changes to production hosts.",
            "operations": [sh("ansible-playbook site.yml", "/infra/ansible", Some("fatal: [web1]: UNREACHABLE!"), None)]}));
    }
    records.push(json!({"id": "sh-1", "recorded_at": "2026-11-12T11:00:00Z", "domains": ["build/release"], "project": GATEWAY,
        "task": "Harden the deploy script", "outcome": "succeeded",
        "lesson": "Start bash scripts with set -euo pipefail so a failing step stops the script.",
        "operations": [sh("bash -n deploy.sh", "/gw", None, Some(("lint", "deploy")))]}));
    r.add("records.jsonl", &records);
    r.compile();
    let o = run(&r, &["why", "ansible", &r.records()]);
    let err = stderr(&o);
    assert!(!err.contains("3 of 2"), "{err}");
    assert!(
        err.contains("has 3 supporting experiences, enough for a rule, but is held back"),
        "{err}"
    );
    assert!(
        stdout(&o).contains("(3 experiences, held back)"),
        "{}",
        stdout(&o)
    );

    let w = why(&r, "build-release");
    assert_eq!(w["candidates"], 0);
    assert_eq!(w["did_you_mean"], "build/release", "{w:#}");
    let o = run(&r, &["why", "build-release", &r.records()]);
    assert!(
        stdout(&o).contains("did you mean `build/release`?"),
        "{}",
        stdout(&o)
    );
    // And `why build/release` says how to rename it.
    let w = why(&r, "build/release");
    assert_eq!(w["candidates"], 1);
    assert!(
        (w["suggestions"].as_array().unwrap().iter())
            .any(|s| s.as_str().unwrap().contains("rename it to `build-release`")),
        "{w:#}"
    );
}

/// An OmniMem export beside the native records holds a memory archived since: the compile
/// passes it over with note L009, and `trace` on its key has to say that, as it says what
/// refused a record the load refused. It used to answer "no experience or claim with id" and
/// exit 2, as if the key were misspelt, though the memory is in the input.
#[test]
fn trace_on_an_archived_omnimem_memory_says_it_is_not_active() {
    let r = Records::new("month-trace-archived");
    r.add(
        "w1.jsonl",
        &[json!({"id": "infra-1103-a", "recorded_at": "2026-11-03T09:30:00Z", "domains": ["terraform"], "project": INFRA,
                 "task": "Import the legacy bucket", "outcome": "succeeded",
                 "gotchas": ["terraform import does not write configuration; write the resource block before importing"],
                 "operations": [sh("terraform import aws_s3_bucket.logs nw-logs", "/infra/prod", None, Some(("plan", "prod")))]})],
    );
    let export = json!([
        {"key": "om-7f3a02", "content": "Helm release stuck in pending-upgrade after a cancelled deploy.", "project": INFRA,
         "tags": "kubernetes,helm", "outcome": "succeeded", "effort_score": 3,
         "gotchas": "helm leaves a release in pending-upgrade when a deploy is cancelled; roll back before upgrading again",
         "blessed": "1", "state": "active", "created_at": 1793876400},
        {"key": "om-7f3a03", "content": "old note", "project": INFRA, "tags": ["terraform"], "outcome": "succeeded",
         "lesson": "Use terraform workspaces per environment", "state": "archived", "created_at": 1793876400}
    ]);
    std::fs::write(r.s.path("records/omnimem.json"), export.to_string()).unwrap();
    r.compile();
    let o = run(&r, &["trace", "om-7f3a03", &r.records()]);
    assert!(
        stdout(&o).contains("om-7f3a03: an omnimem memory that is not active (L009)"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("L009") && stderr(&o).contains("archived"),
        "{}",
        stderr(&o)
    );
    let j = json(&run(
        &r,
        &["trace", "om-7f3a03", &r.records(), "--format", "json"],
    ));
    assert_eq!(j["inactive_at"], "load", "{j:#}");
    assert_eq!(j["codes"], json!(["L009"]));
    // An id no input holds is still an error.
    let out = r.out();
    let o = skillc(&["trace", "om-7f3a04", &r.records(), "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// The race-detector rule, learned in the gateway and the reporting service, is global; an
/// experience from the storefront that had it in play fails, so it goes back to the project
/// that last confirmed it (S006). `go/SKILL.md` is gone while `why go` still counts the rule:
/// the report has to say where the rule went and which experience sent it there.
#[test]
fn why_says_where_a_demoted_rule_went() {
    let r = Records::new("month-why-demoted");
    let reporting = "/home/dev/src/reporting";
    r.add(
        "w1.jsonl",
        &[
            json!({"id": "gw-1103-a", "recorded_at": "2026-11-03T11:00:00Z", "domains": ["go"], "project": GATEWAY,
                   "task": "Fix flaky handler test", "outcome": "succeeded",
                   "lesson": "Run go test with -race in CI; data races in handlers only show up under the race detector.",
                   "operations": [sh("go test -race ./...", "/gw", None, Some(("tests", "gateway")))]}),
            json!({"id": "rep-1112-a", "recorded_at": "2026-11-12T14:00:00Z", "domains": ["golang"], "project": reporting,
                   "task": "Add exporter tests", "outcome": "succeeded",
                   "lesson": "Always run go test -race in CI: races in HTTP handlers only appear with the race detector on.",
                   "operations": [sh("go test -race ./...", "/home/dev/src/reporting/exporter", None, Some(("tests", "exporter")))]}),
        ],
    );
    let ledger = r.compile();
    let rule = r.active_ids("Run go test with -race")[0].clone();
    assert_eq!(lesson(&ledger, &rule)["scope"], "global");
    assert!(r.s.path("out/go/SKILL.md").is_file());
    r.add(
        "w3.jsonl",
        &[json!({"id": "shop-1118-a", "recorded_at": "2026-11-18T10:00:00Z", "domains": ["go"], "project": "git@github.com:northwind/shop-web.git",
                 "task": "Speed up the image resizer tests", "outcome": "failed", "in_play": [rule],
                 "operations": [sh("go test -race ./resize/...", "/ci/shop-web/resizer", Some("--- FAIL: TestResize (0.30s)"), None)]})],
    );
    let ledger = r.compile();
    let scope = lesson(&ledger, &rule)["scope"].as_str().unwrap().to_string();
    let digest = scope
        .strip_prefix("project:")
        .unwrap_or_else(|| panic!("{scope}"));
    assert!(!r.s.path("out/go/SKILL.md").exists());
    assert!(r.s.path(&format!("out/projects/{digest}/go/SKILL.md")).is_file());
    let w = why(&r, "go");
    assert_eq!(w["rules"], 1);
    let advice: Vec<&str> = (w["suggestions"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        advice.iter().any(|s| s.contains(&format!(
            "{rule} to projects/{digest}/go/SKILL.md, contradicted by shop-1118-a"
        )) && s.contains("S006")),
        "{advice:#?}"
    );
}

/// A platform team's claim file: one claim cites no evidence (G004), one cites an id that no
/// record has (G005), one a session that failed (G006). Each is a claim to edit, so each
/// diagnostic names the claim's file and line; G004 used to name neither.
#[test]
fn every_claim_diagnostic_names_the_claims_file_and_line() {
    let r = Records::new("month-claim-lines");
    r.add(
        "sessions.jsonl",
        &[
            json!({"id": "gw-1103-a", "recorded_at": "2026-11-03T11:00:00Z", "domains": ["go"], "project": GATEWAY,
                   "task": "Fix flaky handler test", "outcome": "succeeded",
                   "lesson": "Run go test with -race in CI; data races in handlers only show up under the race detector.",
                   "operations": [sh("go test -race ./...", "/gw", None, Some(("tests", "gateway")))]}),
            json!({"id": "ledg-1103-a", "recorded_at": "2026-11-03T14:00:00Z", "domains": ["terraform"], "project": LEDGER,
                   "task": "Plan the state migration", "outcome": "failed",
                   "operations": [sh("terraform plan", "/src/ledger-rs/infra", Some("Error: Backend configuration changed"), None)]}),
        ],
    );
    r.add(
        "claims.jsonl",
        &[
            json!({"type": "lesson", "id": "claim-k8s-1", "recorded_at": "2026-11-06T12:00:00Z", "domains": ["kubernetes"],
                   "text": "Set resource requests on every container so the scheduler can place pods.", "kind": "do",
                   "source": "user", "evidence": []}),
            json!({"type": "lesson", "id": "claim-go-1", "recorded_at": "2026-11-06T12:00:00Z", "domains": ["go"],
                   "text": "Set GOFLAGS=-mod=mod so go test resolves modules without vendoring.", "kind": "do",
                   "source": "model", "evidence": ["gw-1103-a", "gw-1199-z"]}),
            json!({"type": "lesson", "id": "claim-tf-1", "recorded_at": "2026-11-06T12:00:00Z", "domains": ["terraform"],
                   "text": "Run terraform fmt -check before terraform plan in CI.", "kind": "do",
                   "source": "extractor", "evidence": ["ledg-1103-a"]}),
        ],
    );
    r.compile();
    let diags = r.diagnostics();
    for (code, line) in [("G004", 1), ("G005", 2), ("G006", 3)] {
        let found = diags_of(&diags, code);
        assert_eq!(found.len(), 1, "{code}: {diags:#}");
        let d = found[0];
        assert!(
            d["file"].as_str().is_some_and(|f| f.ends_with("claims.jsonl")),
            "{code}: {d:#}"
        );
        assert_eq!(d["line"], line, "{code}: {d:#}");
    }
}
