//! A test's own timeout is a real fault, not a network hiccup (DESIGN §5.1, §6 attribution).
//!
//! `tests/data/transient_timeouts.jsonl` holds sessions from six projects: `go test`, pytest
//! (pytest-timeout) and Jest runs that failed because a test ran past its time limit and then
//! passed with the limit raised, and calls that failed on a real network timeout (a database
//! dial, PyPI, the npm registry, a gRPC deadline, a git clone, a docker pull) and then passed
//! with other arguments. The first teach a mechanical lesson; the others teach nothing.

mod common;

use common::*;
use serde_json::{Value, json};

const DATA: &str = "tests/data/transient_timeouts.jsonl";
const NETWORK: [&str; 6] = [
    "tt-net-1", "tt-net-2", "tt-net-3", "tt-net-4", "tt-net-5", "tt-net-6",
];

fn evidence(l: &Value) -> Vec<&str> {
    (l["evidence"].as_array().unwrap().iter())
        .map(|e| e.as_str().unwrap())
        .collect()
}

/// The mechanical rules a user reads in SKILL.md, each citing the two projects that raised
/// their runner's limit.
#[test]
fn a_test_that_ran_past_its_limit_teaches_raising_the_limit() {
    let s = Scratch::new("transient-timeouts-rules");
    let o = compile_to(&repo().join(DATA), &s.path("out"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&s.path("out/ledger.json"));
    for (domain, text, cited) in [
        (
            "go",
            "run_shell_command go: run `go test -timeout 5m ./...` instead of `go test -timeout 30s ./...`",
            ["tt-go-1", "tt-go-2"],
        ),
        (
            "python",
            "run_shell_command pytest: run `pytest --timeout=30 tests/` instead of `pytest --timeout=5 tests/`",
            ["tt-py-1", "tt-py-2"],
        ),
        (
            "javascript",
            "Bash npx: run `npx jest --testTimeout=20000` instead of `npx jest`",
            ["tt-js-1", "tt-js-2"],
        ),
    ] {
        let l = reading(&ledger, text);
        assert_eq!(l["rule"], true, "{text}");
        assert_eq!(evidence(l), cited, "{text}");
        let skill = std::fs::read_to_string(s.path(&format!("out/{domain}/SKILL.md"))).unwrap();
        let line = format!("{text} (id: {}", l["id"].as_str().unwrap());
        assert!(skill.contains(&line), "{skill}");
        assert!(
            skill.contains(&format!("evidence: {}, {})", cited[0], cited[1])),
            "{skill}"
        );
    }
    // The network timeouts teach nothing: no lesson cites them, and K001 says why.
    for l in ledger["lessons"].as_array().unwrap() {
        assert!(evidence(l).iter().all(|e| !NETWORK.contains(e)), "{l:#}");
    }
    let diags = read_json(&s.path("out/diagnostics.json"));
    let k001 = diags_of(&diags, "K001");
    for id in NETWORK {
        let d = k001
            .iter()
            .find(|d| names(d, id))
            .unwrap_or_else(|| panic!("K001 names {id}"));
        assert!(
            d["message"]
                .as_str()
                .unwrap()
                .contains("failed transiently (policy transient_errors: "),
            "{d:#}"
        );
    }
}

/// `skillc trace` tells the two apart call by call: the network timeouts failed transiently,
/// the test runners' timeouts did not.
#[test]
fn trace_reads_a_network_timeout_as_transient_and_a_test_timeout_as_real() {
    let s = Scratch::new("transient-timeouts-trace");
    let input = repo().join(DATA);
    let out = s.path("out");
    assert_eq!(compile_to(&input, &out, &[]).status.code(), Some(0));
    let cause = |id: &str| {
        let t = trace_json(id, &input, &out);
        let failed = t["record"]["failed_operations"].as_array().unwrap().clone();
        assert_eq!(failed.len(), 1, "{t:#}");
        (
            failed[0]["transient"].clone(),
            t["candidates"].as_array().unwrap().len(),
        )
    };
    for (id, phrase) in [
        ("tt-net-1", "timeout"),
        ("tt-net-2", "timed out"),
        ("tt-net-3", "etimedout"),
        ("tt-net-4", "deadline exceeded"),
        ("tt-net-5", "timed out"),
        ("tt-net-6", "timeout"),
    ] {
        assert_eq!(cause(id), (json!(phrase), 0), "{id}");
    }
    for id in ["tt-go-1", "tt-go-2", "tt-py-1", "tt-py-2", "tt-js-1", "tt-js-2"] {
        assert_eq!(cause(id), (Value::Null, 1), "{id}");
    }
}

/// DESIGN §6: a mechanical lesson in play is contradicted when its working form ran and failed
/// for real. `go test -timeout 5m` timing out again (a deadlock the longer limit did not
/// cure) is such a failure; the same run failing to download a module is not.
#[test]
fn a_lesson_whose_test_timed_out_again_is_contradicted_and_a_network_timeout_does_not() {
    let h = Records::new("transient-timeouts-contradiction");
    std::fs::copy(repo().join(DATA), h.s.path("records/a.jsonl")).unwrap();
    let ledger = h.compile();
    let text = "run_shell_command go: run `go test -timeout 5m ./...`";
    let id = reading(&ledger, text)["id"].as_str().unwrap().to_string();
    let run = |cwd: &str, error: &str| {
        json!({"tool": "run_shell_command", "args": {"command": "go test -timeout 5m ./...", "cwd": cwd},
               "status": "error", "error": error})
    };
    h.add("b.jsonl", &[
        json!({"id": "tt-go-3", "recorded_at": "2026-11-09T10:00:00Z", "domains": ["go"],
               "project": "git@github.com:acme/scheduler.git", "task": "Hand leadership over on SIGTERM",
               "outcome": "failed", "in_play": [&id], "operations": [run("/srv/scheduler",
               "panic: test timed out after 5m0s\n\trunning tests:\n\t\tTestLeaderHandoffOnSigterm (5m0s)\n\ngoroutine 112 [chan receive]:\ngithub.com/acme/scheduler/leader.(*Elector).Resign(...)\n\t/srv/scheduler/leader/elector.go:88\nFAIL\tgithub.com/acme/scheduler/leader\t300.019s\nFAIL")]}),
        json!({"id": "tt-go-4", "recorded_at": "2026-11-10T10:00:00Z", "domains": ["go"],
               "project": "git@github.com:acme/queue.git", "task": "Bump pgx to v5.7.2",
               "outcome": "failed", "in_play": [&id], "operations": [run("/srv/queue",
               "go: github.com/jackc/pgx/v5@v5.7.2: Get \"https://proxy.golang.org/github.com/jackc/pgx/v5/@v/v5.7.2.zip\": dial tcp 142.250.74.81:443: i/o timeout")]}),
    ]);
    let ledger = h.compile();
    let l = reading(&ledger, text);
    let history = l["history"].as_array().unwrap();
    let contradicted: Vec<&Value> = history.iter().filter(|e| e["event"] == "contradicted").collect();
    assert_eq!(contradicted.len(), 1, "{l:#}");
    assert_eq!(contradicted[0]["experiences"], json!(["tt-go-3"]), "{l:#}");
    assert!(
        history
            .iter()
            .all(|e| !e["experiences"].as_array().unwrap().contains(&json!("tt-go-4"))),
        "a module download that timed out says nothing about the lesson: {l:#}"
    );
    assert!(
        diags_of(&h.diagnostics(), "S002")
            .iter()
            .any(|d| names(d, "tt-go-3")),
        "{:#}",
        h.diagnostics()
    );
}

/// A Jest test named after a cancelled order that failed on a `TypeError` failed for real: the
/// mechanical lesson in play whose working form ran it is contradicted, as DESIGN §6 says,
/// though "cancelled" is a transient phrase. The word is in the test's name, not its error.
#[test]
fn a_test_named_after_a_cancellation_that_failed_contradicts_the_lesson_in_play() {
    let h = Records::new("transient-timeouts-title");
    std::fs::copy(repo().join(DATA), h.s.path("records/a.jsonl")).unwrap();
    let ledger = h.compile();
    let text = "Bash npx: run `npx jest --testTimeout=20000`";
    let id = reading(&ledger, text)["id"].as_str().unwrap().to_string();
    h.add("b.jsonl", &[json!({"id": "tt-js-3", "recorded_at": "2026-11-09T11:00:00Z", "domains": ["javascript"],
        "project": "git@github.com:acme/storefront.git", "task": "Refund cancelled orders automatically",
        "outcome": "failed", "in_play": [&id], "operations": [
            {"tool": "Bash", "args": {"command": "npx jest --testTimeout=20000"}, "status": "error",
             "error": "FAIL src/orders/refund.test.ts\n  ● Orders › refunds a cancelled order\n\n    TypeError: Cannot read properties of undefined (reading 'refundId')\n\n      29 |     const res = await refund(order);\n    > 31 |     expect(res.refundId).toBeDefined();\n\nTests:       1 failed, 57 passed, 58 total"}]})]);
    let l = reading(&h.compile(), text).clone();
    let contradicted: Vec<&Value> = (l["history"].as_array().unwrap().iter())
        .filter(|e| e["event"] == "contradicted")
        .collect();
    assert_eq!(contradicted.len(), 1, "{l:#}");
    assert_eq!(contradicted[0]["experiences"], json!(["tt-js-3"]), "{l:#}");
}
