//! Records shaped like ones the authors had not seen (an audit on hand-written sessions from
//! several projects): each test holds one shape skillc once compiled wrongly.

mod common;

use common::*;
use serde_json::{Value, json};

fn write_jsonl(path: &std::path::Path, records: &[Value]) {
    std::fs::write(path, records.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
}

fn compile(s: &Scratch, input: &std::path::Path, out: &str, extra: &[&str]) -> (Value, Value) {
    let out = s.path(out);
    let o = compile_to(input, &out, extra);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (
        read_json(&out.join("ledger.json")),
        read_json(&out.join("diagnostics.json")),
    )
}

/// `npm ci` failed on a peer dependency, the agent switched to `npm install
/// --legacy-peer-deps`, whose first try timed out on the registry and whose retry worked. The
/// timeout taught nothing and did not run the install, so the install that worked is still
/// the very next call after the failure: the fix is learned, in both projects, and becomes a
/// global rule. It used to be lost, the session yielding no candidate (K001).
#[test]
fn a_fix_whose_first_try_timed_out_is_still_the_fix() {
    let s = Scratch::new("unseen-transient-fix");
    let session = |id: &str, at: &str, project: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["npm"], "project": project,
               "task": "install dependencies after the react 18 upgrade", "outcome": "succeeded",
               "operations": [
                   {"tool": "bash", "args": {"command": "npm ci", "cwd": "/w"}, "status": "error",
                    "error": "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE could not resolve peer dependency react@18"},
                   {"tool": "bash", "args": {"command": "npm install --legacy-peer-deps", "cwd": "/w"}, "status": "error",
                    "error": "npm ERR! code ETIMEDOUT\nnpm ERR! network request to https://registry.npmjs.org/react failed, reason: connect ETIMEDOUT 104.16.1.35:443"},
                   {"tool": "bash", "args": {"command": "npm install --legacy-peer-deps", "cwd": "/w"}, "status": "ok",
                    "check": {"label": "install", "passed": true}}]})
    };
    let input = s.path("sessions.jsonl");
    write_jsonl(
        &input,
        &[
            session(
                "web-0001",
                "2026-11-25T09:00:00Z",
                "git@github.com:northwind/storefront.git",
            ),
            session(
                "adm-0001",
                "2026-11-26T09:00:00+01:00",
                "git@github.com:northwind/admin-ui.git",
            ),
        ],
    );
    let (ledger, diags) = compile(&s, &input, "out", &["--threads", "1"]);
    let lessons = ledger["lessons"].as_array().unwrap();
    let fix = lessons
        .iter()
        .find(|l| l["text"] == "bash npm: run `npm install --legacy-peer-deps` instead of `npm ci`")
        .unwrap_or_else(|| panic!("the fix is learned: {lessons:?}"));
    assert_eq!(fix["rule"], true);
    assert_eq!(fix["scope"], "global");
    assert_eq!(fix["evidence"], json!(["adm-0001", "web-0001"]));
    assert!(diags_of(&diags, "K001").is_empty(), "{diags}");
    let (again, _) = compile(&s, &input, "out2", &["--threads", "2"]);
    assert_eq!(again, ledger, "the same at any thread count");
}

/// One agent's clock was wrong by decades: its record sets the compile's "now", which every
/// lesson's recency and every later decision's time count from. It is compiled, and named in
/// one L013 warning with its file and line; the records before it are not.
#[test]
fn a_record_dated_decades_after_the_rest_is_named() {
    let s = Scratch::new("unseen-outlying-time");
    let record = |id: &str, at: &str, lesson: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["python"], "project": "git@github.com:northwind/ledger-svc.git",
               "outcome": "succeeded", "lesson": lesson})
    };
    let input = s.path("sessions.jsonl");
    write_jsonl(
        &input,
        &[
            record(
                "nw-0001",
                "2026-11-02T08:15:00Z",
                "Run pytest from the repository root so conftest.py is picked up.",
            ),
            record(
                "nw-0002",
                "2026-11-03T09:12:00Z",
                "Pin the pip version in CI images.",
            ),
            record(
                "nw-0003",
                "2062-11-04T10:40:00Z",
                "Use pytest -p no:randomly while bisecting an order-dependent failure.",
            ),
            record(
                "nw-0004",
                "2026-11-04T10:40:00+09:00",
                "Log with logger.exception inside except blocks.",
            ),
        ],
    );
    let (ledger, diags) = compile(&s, &input, "out", &[]);
    let l013 = diags_of(&diags, "L013");
    assert_eq!(l013.len(), 1, "{diags}");
    let d = l013[0];
    assert!(names(d, "nw-0003"), "{d}");
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["name"], "outlying-time");
    assert_eq!(d["line"], 3, "{d}");
    assert!(d["file"].as_str().unwrap().ends_with("sessions.jsonl"), "{d}");
    assert_eq!(d["evidence"]["recorded_at"], "2062-11-04T10:40:00Z");
    assert_eq!(d["evidence"]["latest_before"], "2026-11-04T01:40:00Z");
    assert_eq!(d["evidence"]["days"], 13149);
    // Compiled as it is: the warning changes nothing else.
    assert_eq!(ledger["lessons"].as_array().unwrap().len(), 4);

    // Records that resumed after a year's pause, more of them than before it, are a history,
    // not a wrong clock; nor is one of two records.
    let resumed = s.path("resumed.jsonl");
    write_jsonl(
        &resumed,
        &[
            record(
                "nw-0001",
                "2024-03-02T08:15:00Z",
                "Run pytest from the repository root so conftest.py is picked up.",
            ),
            record(
                "nw-0002",
                "2026-11-03T09:12:00Z",
                "Pin the pip version in CI images.",
            ),
            record(
                "nw-0003",
                "2026-11-04T10:40:00Z",
                "Log with logger.exception inside except blocks.",
            ),
        ],
    );
    let (_, diags) = compile(&s, &resumed, "out2", &[]);
    assert!(diags_of(&diags, "L013").is_empty(), "{diags}");
    let two = s.path("two.jsonl");
    write_jsonl(
        &two,
        &[
            record(
                "nw-0001",
                "2024-03-02T08:15:00Z",
                "Run pytest from the repository root so conftest.py is picked up.",
            ),
            record(
                "nw-0002",
                "2026-11-03T09:12:00Z",
                "Pin the pip version in CI images.",
            ),
        ],
    );
    let (_, diags) = compile(&s, &two, "out3", &[]);
    assert!(diags_of(&diags, "L013").is_empty(), "{diags}");
}

/// A team that tags its retrospectives `lessons` gets no skill of that name: its SKILL.md would
/// sit among the plan-time blocks in `lessons/`, which a harness loads as `lessons/*.md`. The
/// domain is refused with N001 saying why and what to do; the record's other domain compiles.
#[test]
fn a_domain_named_lessons_is_refused_not_written_among_the_blocks() {
    let s = Scratch::new("unseen-reserved-domain");
    let retro = |id: &str, at: &str, project: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["Lessons", "docker"], "project": project,
               "task": "shrink the api image", "outcome": "succeeded",
               "lesson": "Use a multi-stage Dockerfile so build tools stay out of the runtime image"})
    };
    let input = s.path("retros.jsonl");
    write_jsonl(
        &input,
        &[
            retro("ret-0001", "2026-11-20T10:00:00Z", "git@github.com:acme/api.git"),
            retro(
                "ret-0002",
                "2026-11-21T10:00:00Z",
                "git@github.com:acme/worker.git",
            ),
        ],
    );
    let out = s.path("out");
    let (ledger, diags) = compile(&s, &input, "out", &[]);
    assert!(!out.join("lessons/SKILL.md").exists());
    assert!(out.join("docker/SKILL.md").exists());
    let domains: Vec<&str> = (ledger["lessons"].as_array().unwrap().iter())
        .map(|l| l["domain"].as_str().unwrap())
        .collect();
    assert!(
        !domains.is_empty() && domains.iter().all(|d| *d == "docker"),
        "{domains:?}"
    );
    let n001: Vec<&Value> = (diags["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["code"] == "N001")
        .collect();
    assert_eq!(n001.len(), 2, "one per record: {n001:#?}");
    let message = n001[0]["message"].as_str().unwrap();
    assert!(message.starts_with("domain \"lessons\" is refused"), "{message}");
    assert!(message.contains("rules/aliases.yaml"), "{message}");
    assert!(n001[0]["file"].as_str().unwrap().ends_with("retros.jsonl"));

    // `why lessons` tells the same story, not "rename it to `lessons`".
    let o = skillc(&["why", "lessons", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let why = stdout(&o);
    assert!(
        why.contains("`lessons` names a folder of skillc's own output (N001)"),
        "{why}"
    );
    assert!(!why.contains("rename it to `lessons`"), "{why}");
}
