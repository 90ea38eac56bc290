//! A `--state` path that cannot hold a state store: the command exits 2 and says what the path
//! is, what is wrong with it and what to do, where it said only "disk I/O error" (`/dev/null`)
//! or "unable to open database file" (a directory).

mod common;

use common::{Scratch, skillc};
use serde_json::json;

/// Two pytest memories from two projects, enough for one rule.
fn records(s: &Scratch) -> String {
    let dir = s.path("records");
    std::fs::create_dir_all(&dir).unwrap();
    let text: String = [
        json!({"id": "ci-1101-pytest", "recorded_at": "2026-11-01T09:00:00Z", "domains": ["python"],
               "project": "git@github.com:acme/billing-api.git", "outcome": "succeeded",
               "lesson": "Run pytest from the repository root so conftest.py fixtures are collected."}),
        json!({"id": "ci-1102-pytest", "recorded_at": "2026-11-02T09:00:00Z", "domains": ["python"],
               "project": "git@github.com:acme/ledger.git", "outcome": "succeeded",
               "lesson": "Run pytest from the repository root so conftest.py fixtures are collected."}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect();
    std::fs::write(dir.join("agents.jsonl"), text).unwrap();
    dir.display().to_string()
}

/// Runs `args` and returns its stderr, asserting exit 2 and that it names `state` and says
/// both `what` is wrong and what to do.
fn refused(args: &[&str], state: &str, what: &str) -> String {
    let o = skillc(args);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(&format!("state store {state} {what}")),
        "{args:?}: {err}"
    );
    assert!(err.contains("give --state the path of a file"), "{args:?}: {err}");
    assert!(!err.contains("disk I/O error"), "{args:?}: {err}");
    err
}

#[test]
fn a_directory_as_the_state_store_is_named_with_what_to_give_instead() {
    let s = Scratch::new("state-dir");
    let input = records(&s);
    let out = s.path("out").display().to_string();
    let dir = s.path("state");
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.display().to_string();
    let what = "is a directory, and --state names the database file itself";
    let err = refused(
        &["compile", &input, "--out", &out, "--state", &state],
        &state,
        what,
    );
    assert!(err.contains(&dir.join("state.db").display().to_string()), "{err}");
    refused(
        &["lessons", "list", "--out", &out, "--state", &state],
        &state,
        what,
    );
}

#[cfg(unix)]
#[test]
fn dev_null_as_the_state_store_says_it_is_no_file() {
    let s = Scratch::new("state-dev-null");
    let input = records(&s);
    let out = s.path("out").display().to_string();
    let what = "is not a regular file";
    refused(
        &["compile", &input, "--out", &out, "--state", "/dev/null"],
        "/dev/null",
        what,
    );
    refused(
        &["lessons", "list", "--out", &out, "--state", "/dev/null"],
        "/dev/null",
        what,
    );
    assert!(!s.path("out/python/SKILL.md").exists());
}

/// A state path under a regular file (a typo: `--state skills-out/ledger.json/state.db`).
#[test]
fn a_state_store_whose_directory_cannot_be_made_says_so() {
    let s = Scratch::new("state-under-file");
    let input = records(&s);
    let out = s.path("out").display().to_string();
    std::fs::write(s.path("ledger.json"), "{}").unwrap();
    let state = s.path("ledger.json/state.db").display().to_string();
    let what = "cannot be created: its directory";
    refused(
        &["compile", &input, "--out", &out, "--state", &state],
        &state,
        what,
    );
}
