//! A directory of nightly snapshots of one memory store, as a memory service writes it: every
//! night's file holds every memory again, some edited since the night before. `--strict` in CI
//! must exit 1 only when input was refused or malformed (DESIGN §8): a memory repeated word for
//! word is no refusal, a memory edited between snapshots is (the first version is kept).

mod common;

use common::{Records, diags_of, read_json, skillc};
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const LEDGER: &str = "git@github.com:acme/ledger.git";
const INFRA: &str = "git@github.com:acme/infra.git";
const DNS: &str = "git@github.com:acme/dns.git";

fn shell(command: &str, cwd: &str, check: Option<&str>) -> Value {
    let mut op =
        json!({"tool": "run_shell_command", "args": {"command": command, "cwd": cwd}, "status": "ok"});
    if let Some(label) = check {
        op["check"] = json!({"label": label, "passed": true});
    }
    op
}

/// The first night: two pytest memories, a terraform gotcha and a claim.
fn first_night() -> Vec<Value> {
    vec![
        json!({"id": "mem-0001", "recorded_at": "2026-11-20T09:00:00Z", "domains": ["python"], "project": BILLING,
               "task": "Fix import errors in CI", "outcome": "succeeded",
               "lesson": "Run pytest from the repository root so the package imports resolve.",
               "operations": [shell("pytest -q tests", "/home/dev/billing-api", Some("tests"))]}),
        json!({"id": "mem-0002", "recorded_at": "2026-11-21T10:00:00Z", "domains": ["python"], "project": LEDGER,
               "task": "CI import errors", "outcome": "succeeded",
               "lesson": "Run pytest from the repository root so package imports resolve.",
               "operations": [shell("pytest -q", "/home/dev/ledger", Some("tests"))]}),
        json!({"id": "mem-0003", "recorded_at": "2026-11-22T11:00:00+01:00", "domains": ["terraform"], "project": INFRA,
               "task": "State lock stuck after a cancelled pipeline", "outcome": "succeeded",
               "gotchas": ["terraform force-unlock during a running plan breaks the lock"],
               "operations": [shell("terraform plan -lock-timeout=60s", "/home/dev/infra", Some("plan"))]}),
        json!({"type": "lesson", "id": "cl-0001", "recorded_at": "2026-11-22T12:00:00Z", "domains": ["terraform"],
               "text": "Pass -lock-timeout to terraform plan when CI jobs share a state backend", "kind": "do",
               "source": "extractor", "evidence": []}),
    ]
}

/// The next night: the same memories, the gotcha and the claim edited in the store, and a
/// new memory.
fn second_night() -> Vec<Value> {
    let mut night = first_night();
    night[2]["gotchas"] =
        json!(["Running terraform force-unlock while a plan still holds the lock corrupts the state"]);
    night[3]["text"] = json!("Pass -lock-timeout=120s to terraform plan when CI jobs share a state backend");
    night.push(
        json!({"id": "mem-0004", "recorded_at": "2026-11-23T09:30:00Z", "domains": ["terraform"], "project": DNS,
               "task": "Apply blocked by a stale lock", "outcome": "succeeded",
               "gotchas": ["Running terraform force-unlock while a plan still holds the lock corrupts the state"],
               "operations": [shell("terraform apply", "/home/dev/dns", Some("apply"))]}),
    );
    night
}

fn compile_strict(r: &Records) -> std::process::Output {
    skillc(&["compile", &r.records(), "--out", &r.out(), "--strict"])
}

/// The next night with nothing edited: the same memories again and a new one.
fn unchanged_night() -> Vec<Value> {
    let mut night = first_night();
    night.push(second_night().pop().unwrap());
    night
}

/// Three nights of snapshots that only repeat and add: nothing was refused or malformed, so
/// `--strict` exits 0, the repeats are warnings, and each memory compiles once.
#[test]
fn nightly_snapshots_that_repeat_memories_pass_strict() {
    let r = Records::new("snapshots-strict");
    r.add("memory-2026-11-28.jsonl", &first_night());
    r.add("memory-2026-11-29.jsonl", &unchanged_night());
    r.add("memory-2026-11-30.jsonl", &unchanged_night());
    let o = compile_strict(&r);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("error["), "{err}");

    let ledger = read_json(&r.s.path("out/ledger.json"));
    let python = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["domain"] == "python" && l["kind"] == "do")
        .unwrap();
    assert_eq!(python["evidence"], json!(["mem-0001", "mem-0002"]), "{python:#}");
    let diags = read_json(&r.s.path("out/diagnostics.json"));
    let l004 = diags_of(&diags, "L004");
    assert!(!l004.is_empty());
    assert!(l004.iter().all(|d| d["severity"] == "warning"), "{l004:#?}");
    // `why` counts nothing as refused at load.
    let why = common::why_json_in("terraform", &r.s.path("records"), &[]);
    assert_eq!(why["refused_at_load"]["records"], 0, "{why:#}");
}

/// A memory edited between two snapshots (the same id and `recorded_at`, other content) is two
/// records under one id: the first in path order is kept (DESIGN §3.1), the later version is
/// an L004 error that says it changed between snapshots and how to compile the latest one, so
/// `--strict` exits 1. Given only the newest snapshot, the latest version compiles.
#[test]
fn an_edited_memory_keeps_its_first_version_and_says_how_to_compile_the_latest() {
    let r = Records::new("snapshots-edited");
    r.add("memory-2026-11-28.jsonl", &first_night());
    r.add("memory-2026-11-29.jsonl", &second_night());
    let o = compile_strict(&r);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`mem-0003` changed between snapshots")
            && err.contains("`cl-0001` changed between snapshots"),
        "{err}"
    );
    let texts = |out: &str| -> Vec<String> {
        let ledger = read_json(&r.s.path(&format!("{out}/ledger.json")));
        (ledger["lessons"].as_array().unwrap().iter())
            .map(|l| l["text"].as_str().unwrap().to_string())
            .collect()
    };
    let kept = texts("out");
    assert!(kept.iter().any(|t| t.contains("breaks the lock")), "{kept:#?}");
    assert!(!kept.iter().any(|t| t.contains("120s")), "{kept:#?}");
    let diags = read_json(&r.s.path("out/diagnostics.json"));
    let l004 = diags_of(&diags, "L004");
    let edit = l004.iter().find(|d| d["subject"] == "mem-0003").unwrap();
    assert_eq!(edit["severity"], "error", "{edit:#}");
    assert!(
        edit["file"]
            .as_str()
            .unwrap()
            .ends_with("memory-2026-11-29.jsonl")
            && edit["help"].as_str().unwrap().contains("newest snapshot"),
        "{edit:#}"
    );

    // The help's way: only the newest snapshot.
    let newest = r.s.path("records/memory-2026-11-29.jsonl").display().to_string();
    let out = r.s.path("newest").display().to_string();
    let o = skillc(&["compile", &newest, "--out", &out, "--strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let latest = texts("newest");
    assert!(latest.iter().any(|t| t.contains("120s")), "{latest:#?}");
    assert!(
        !latest.iter().any(|t| t.contains("breaks the lock")),
        "{latest:#?}"
    );
}

/// Another agent's sync reuses an id for a different experience (another `recorded_at`): that
/// is a real conflict, still an error, the first record in path order is kept, and `--strict`
/// exits 1. An edit inside one file (the same id twice in one snapshot) is one too.
#[test]
fn a_different_record_under_a_used_id_is_still_refused_under_strict() {
    let r = Records::new("snapshots-conflict");
    r.add("memory-2026-11-28.jsonl", &first_night());
    let mut other = first_night()[0].clone();
    other["recorded_at"] = json!("2026-11-29T16:45:00Z");
    other["task"] = json!("Bump ruff");
    other["lesson"] = json!("Run ruff check --fix before ruff format so the formatter sees fixed code.");
    r.add("sync-agent-b.jsonl", &[other]);
    let o = compile_strict(&r);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error[L004]: duplicate-id: duplicate id `mem-0001`"),
        "{err}"
    );
    let ledger = read_json(&r.s.path("out/ledger.json"));
    assert!(!ledger.to_string().contains("ruff format"), "{ledger:#}");

    let r = Records::new("snapshots-same-file");
    let mut night = first_night();
    let mut edited = night[2].clone();
    edited["gotchas"] =
        json!(["Running terraform force-unlock while a plan still holds the lock corrupts the state"]);
    night.push(edited);
    r.add("memory-2026-11-28.jsonl", &night);
    let o = compile_strict(&r);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
}
