//! What a user reads first: the names skills get and what their descriptions say, on records
//! as eight teams' agents write them (fixture `names_fresh/`: 44 JSONL experiences and a
//! hand-kept YAML file). Teams spell one technology many ways ("Python 3", "python3.12",
//! "Postgres 16", "Node.js 20", "C++17", ".NET 8", "CI/CD", "shell script", "TypeScript/React"):
//! each must reach the one skill a person would look for, names that end in digits of their own
//! (`s3`, `i18n`, `oauth2`) must stay as they are, and a YAML id is the text its author wrote
//! (`0012`, `1e3`, `10.20`, `0x1F`, `true`), never a number or a refusal.

mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::Value;

fn compiled(scratch: &Scratch, name: &str, threads: &str) -> std::path::PathBuf {
    let out = scratch.path(name);
    let o = compile_to(&fixture("names_fresh"), &out, &["--threads", threads]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn domains(ledger: &Value) -> BTreeSet<String> {
    ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["domain"].as_str().unwrap().to_string())
        .collect()
}

/// The evidence of the lesson whose text starts with `start`, in `domain`.
fn evidence(ledger: &Value, domain: &str, start: &str) -> Vec<String> {
    let l = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["domain"] == domain && l["text"].as_str().unwrap().starts_with(start))
        .unwrap_or_else(|| panic!("no {domain} lesson \"{start}…\""));
    l["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_technology_spelled_many_ways_is_one_skill() {
    let scratch = Scratch::new("names-unseen-domains");
    let out = compiled(&scratch, "out", "1");
    let ledger = read_json(&out.join("ledger.json"));
    let diags = read_json(&out.join("diagnostics.json"));
    // No domain is refused: CI/CD, ci/cd, .NET 8, C++17 and TypeScript/React all name skills.
    assert!(
        diags_of(&diags, "N001").is_empty(),
        "{:#?}",
        diags_of(&diags, "N001")
    );
    // And none is split off under its version or its spelling.
    let names = domains(&ledger);
    for split in [
        "python-3",
        "python3-12",
        "python-3-12",
        "postgres-16",
        "postgresql-15",
        "node-js-20",
        "shell-script",
        "aspnetcore",
    ] {
        assert!(!names.contains(split), "{split} in {names:?}");
    }
    // One rule each, from records that spelled the domain differently.
    let cases = [
        (
            "python",
            "Run pytest from the repository root",
            &["bil-001", "etl-002"][..],
        ),
        ("python", "Pin the interpreter", &["bil-003", "etl-004"]),
        (
            "postgres",
            "Create indexes with CREATE INDEX",
            &["bil-006", "etl-005"],
        ),
        (
            "postgres",
            "Run ANALYZE after a bulk load",
            &["1e3", "bil-008", "etl-007"],
        ),
        ("node", "Use npm ci in CI", &["pay-011", "sto-009", "sto-010"]),
        ("node", "Set --max-old-space-size", &["0x1F", "true"]),
        (
            "ci-cd",
            "Cache dependencies keyed",
            &["0013", "bil-030", "inf-028", "sto-029"],
        ),
        (
            "dotnet",
            "Pin the SDK with a global.json",
            &["pay-018", "qnt-019"],
        ),
        (
            "asp-net-core",
            "Register DbContext as scoped",
            &["pay-020", "pay-021"],
        ),
        ("cpp", "Export compile_commands.json", &["eng-026", "eng-027"]),
        ("shell", "Start every shell script", &["inf-038", "ios-037"]),
        ("shell", "Quote every variable expansion", &["0042", "yes"]),
        ("react", "Give list items a stable key", &["sto-012", "sto-013"]),
    ];
    for (domain, start, want) in cases {
        assert_eq!(evidence(&ledger, domain, start), want, "{domain}: {start}");
    }
    for skill in ["python", "postgres", "node", "ci-cd", "dotnet", "shell"] {
        assert!(out.join(skill).join("SKILL.md").is_file(), "{skill}/SKILL.md");
    }
    // "TypeScript/React" is both: its lesson is in typescript too (one record: not a rule there).
    assert_eq!(evidence(&ledger, "typescript", "Give list items"), ["sto-012"]);
    // Names whose digits are their own stay as written.
    for own in ["s3", "i18n", "oauth2"] {
        assert!(out.join(own).join("SKILL.md").is_file(), "{own}/SKILL.md");
    }
}

#[test]
fn a_yaml_id_is_the_text_its_author_wrote() {
    let scratch = Scratch::new("names-unseen-ids");
    let out = compiled(&scratch, "out", "1");
    let ledger = read_json(&out.join("ledger.json"));
    let cited: BTreeSet<String> = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["evidence"].as_array().unwrap().iter())
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    for id in [
        "0012",
        "0013",
        "1e3",
        "2026-11-02",
        "yes",
        "0042",
        "007",
        "10.20",
        "true",
        "0x1F",
    ] {
        assert!(cited.contains(id), "{id} not cited: {cited:?}");
    }
    for altered in ["12", "1000", "1000.0", "10.2", "31", "7"] {
        assert!(!cited.contains(altered), "{altered} cited");
    }
    // `id: null` is no id, as `"id": null` is in JSON: one missing-field error, nothing else.
    let diags = read_json(&out.join("diagnostics.json"));
    assert!(
        diags_of(&diags, "L003").is_empty(),
        "{:#?}",
        diags_of(&diags, "L003")
    );
    let missing = diags_of(&diags, "L002");
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert_eq!(missing[0]["line"], 133, "{missing:#?}");
}

#[test]
fn a_skill_description_names_only_the_kinds_it_holds() {
    let scratch = Scratch::new("names-unseen-description");
    let out = compiled(&scratch, "out", "1");
    let files = tree(&out);
    let mut seen = 0;
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with("SKILL.md")) {
        let text = String::from_utf8_lossy(bytes);
        let description = text
            .lines()
            .find(|l| l.starts_with("description: "))
            .unwrap_or_else(|| panic!("{path}: no description"));
        assert!(!description.contains(" 0 to "), "{path}: {description}");
        assert!(description.contains(" to "), "{path}: {description}");
        seen += 1;
    }
    assert!(seen >= 15, "{seen} skills");
    // Only do-rules: one kind, said once.
    let python = String::from_utf8_lossy(&files["python/SKILL.md"]).into_owned();
    assert!(
        python.contains("across projects: 2 to do, each citing"),
        "{python}"
    );
}

#[test]
fn names_and_ids_are_the_same_at_any_thread_count() {
    let scratch = Scratch::new("names-unseen-threads");
    let one = tree(&compiled(&scratch, "t1", "1"));
    let two = tree(&compiled(&scratch, "t2", "2"));
    assert_eq!(one.keys().collect::<Vec<_>>(), two.keys().collect::<Vec<_>>());
    for (path, bytes) in &one {
        assert!(two[path] == *bytes, "{path} differs");
    }
}

/// One experience as an agent on `project` tags it.
fn tagged(id: &str, day: u32, domains: &[&str], project: &str, lesson: &str) -> Value {
    serde_json::json!({
        "id": id,
        "recorded_at": format!("2026-10-{day:02}T10:00:00Z"),
        "domains": domains,
        "project": project,
        "task": "Fix the failing build",
        "outcome": "succeeded",
        "lesson": lesson,
    })
}

#[test]
fn a_version_glued_to_a_known_name_is_the_same_skill() {
    // Agents tag "node20", "vue3", "go1.22" as often as "Node.js 20"; each is the skill a person
    // would open. A short name's digits (TensorFlow's "tf2") and a name nobody listed ("s3")
    // keep theirs.
    let r = Records::new("names-glued-versions");
    let nvm = "Pin the Node.js version in .nvmrc so CI and every laptop run one runtime.";
    let vue = "Wrap primitives passed to a composable in ref() so they stay reactive.";
    let go = "Run go mod tidy before committing so go.sum matches go.mod in CI.";
    let keras = "Call model.save() with a .keras path; the HDF5 format drops custom layers.";
    r.add(
        "agents.jsonl",
        &[
            tagged("api-101", 1, &["node20"], "/srv/payments-api", nvm),
            tagged("web-102", 2, &["Node.js"], "/srv/storefront", nvm),
            tagged("cli-103", 3, &["nodejs18"], "/home/ana/src/deploy-cli", nvm),
            tagged("web-104", 4, &["vue3"], "/srv/storefront", vue),
            tagged("adm-105", 5, &["Vue"], "/srv/admin-panel", vue),
            tagged("gw-106", 6, &["go1.22"], "/srv/gateway", go),
            tagged("ing-107", 7, &["golang"], "/srv/ingest", go),
            tagged("ml-108", 8, &["tf2"], "/srv/recsys", keras),
            tagged("ml-109", 9, &["tf2"], "/srv/forecast", keras),
        ],
    );
    let ledger = r.compile();
    let names = domains(&ledger);
    for split in ["node20", "nodejs18", "vue3", "go1-22", "go1"] {
        assert!(!names.contains(split), "{split} in {names:?}");
    }
    assert_eq!(
        evidence(&ledger, "node", "Pin the Node.js"),
        ["api-101", "cli-103", "web-102"]
    );
    assert_eq!(
        evidence(&ledger, "vue", "Wrap primitives"),
        ["adm-105", "web-104"]
    );
    assert_eq!(evidence(&ledger, "go", "Run go mod tidy"), ["gw-106", "ing-107"]);
    // tf2 is not terraform.
    assert_eq!(
        evidence(&ledger, "tf2", "Call model.save()"),
        ["ml-108", "ml-109"]
    );
    assert!(!names.contains("terraform"), "{names:?}");
}
