//! A team's nightly consolidation job: one output directory and state store kept between runs,
//! a records directory that gains a file a night (and is sometimes corrected in place), and a
//! person taking decisions between nights. Each test checks what the user would check the
//! morning after, and again the night after that.

mod common;

use common::Records as Nights;
use common::*;
use serde_json::{Value, json};

const INFRA: &str = "git@gitlab.com:acme-platform/infra.git";
const BILLING: &str = "git@github.com:acme/billing-api.git";

impl Nights {
    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut all: Vec<&str> = args.to_vec();
        let out = self.out();
        all.extend(["--out", &out]);
        let o = skillc(&all);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    }
}

fn lesson<'a>(ledger: &'a Value, id: &str) -> &'a Value {
    (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no lesson {id}: {ledger:#}"))
}

fn terraform_plan(ok: bool) -> Value {
    if ok {
        json!({"tool": "run_shell_command", "args": {"command": "terraform plan -lock-timeout=120s", "cwd": "/home/ops/infra"},
               "status": "ok", "check": {"label": "plan", "target": "infra", "passed": true}})
    } else {
        json!({"tool": "run_shell_command", "args": {"command": "terraform plan -lock-timeout=120s", "cwd": "/home/ops/infra"},
               "status": "error", "error": "Error: Invalid provider configuration: region is required"})
    }
}

fn infra(id: &str, at: &str, outcome: &str, lesson: Option<&str>, in_play: &[&str], ok: bool) -> Value {
    let mut r = json!({"id": id, "recorded_at": at, "domains": ["terraform"], "project": INFRA,
                       "task": "plan the state bucket change in CI", "outcome": outcome,
                       "operations": [terraform_plan(ok)]});
    if let Some(text) = lesson {
        r["lesson"] = json!(text);
    }
    if !in_play.is_empty() {
        r["in_play"] = json!(in_play);
    }
    r
}

fn pytest_session(id: &str, at: &str, lesson: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": ["python"], "project": BILLING, "task": "add the refund test",
           "outcome": "succeeded", "lesson": lesson,
           "operations": [{"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": "/home/maya/src/billing-api"},
                           "status": "ok", "check": {"label": "tests", "target": "billing-api", "passed": true}}]})
}

/// A lesson whose founding record is corrected in place (its wording fixed) is re-founded; the
/// user's pin and the id agents copied from yesterday's block follow it — not only on the
/// night of the correction, but every night after, and a re-run of one night is byte-identical.
/// (The renaming was read from the last ledger, which the next compile no longer has.)
#[test]
fn a_lesson_re_founded_by_a_corrected_record_keeps_its_pin_every_night_after() {
    let n = Nights::new("nightly-corrected-founder");
    let old_text = "Pass -lock-timeout to terraform plan when several pipelines share the state bucket.";
    let new_text = "Pass -lock-timeout=120s to terraform plan when several pipelines share the state bucket.";
    let night_one = |text: &str| {
        [
            infra(
                "inf-0302-01",
                "2026-03-02T08:00:00Z",
                "succeeded",
                Some(text),
                &[],
                true,
            ),
            infra(
                "inf-0302-02",
                "2026-03-02T17:00:00Z",
                "succeeded",
                Some(old_text),
                &[],
                true,
            ),
        ]
    };
    // Night 1: two plans teach the lesson; the team pins it.
    n.add("night-01.jsonl", &night_one(old_text));
    let old_id = reading(&n.compile(), "Pass -lock-timeout")["id"]
        .as_str()
        .unwrap()
        .to_string();
    n.run(&["lessons", "pin", &old_id]);

    // Night 2: the founder's record is corrected in place; an agent had the lesson in play.
    n.add("night-01.jsonl", &night_one(new_text));
    n.add(
        "night-02.jsonl",
        &[infra(
            "inf-0303-01",
            "2026-03-03T10:00:00Z",
            "succeeded",
            None,
            &[&old_id],
            true,
        )],
    );
    let ledger = n.compile();
    let l = reading(&ledger, new_text);
    let new_id = l["id"].as_str().unwrap().to_string();
    assert_ne!(new_id, old_id);
    assert_eq!(
        (
            l["pinned"].as_bool(),
            l["confidence"].as_f64(),
            l["reinforcement"].as_u64()
        ),
        (Some(true), Some(0.65), Some(3)),
        "{l:#}"
    );
    let night_two = tree(&n.s.path("out"));

    // The same night re-run: nothing changes.
    n.compile();
    let diags = n.diagnostics();
    assert!(
        diags_of(&diags, "S007").is_empty() && diags_of(&diags, "S005").is_empty(),
        "{diags:#}"
    );
    assert_eq!(
        tree(&n.s.path("out")),
        night_two,
        "a re-run of night 2 changed the output"
    );

    // Night 3: another agent still lists yesterday's id; a plan fails for real and is given up.
    n.add(
        "night-03.jsonl",
        &[infra(
            "inf-0304-01",
            "2026-03-04T10:00:00Z",
            "abandoned",
            None,
            &[&old_id],
            false,
        )],
    );
    let ledger = n.compile();
    let l = lesson(&ledger, &new_id);
    assert_eq!(
        (l["pinned"].as_bool(), l["confidence"].as_f64()),
        (Some(true), Some(0.4)),
        "the pin is kept and the failure is blamed on the lesson: {l:#}"
    );
    let diags = n.diagnostics();
    assert!(
        diags_of(&diags, "S007").is_empty() && diags_of(&diags, "S005").is_empty(),
        "{diags:#}"
    );
    // Unpinning by yesterday's id is refused with the id to use, and by today's id works.
    let o = skillc(&["lessons", "unpin", &old_id, "--out", &n.out()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&new_id), "{}", stderr(&o));
    n.run(&["lessons", "unpin", &new_id]);
    assert_eq!(lesson(&n.compile(), &new_id)["pinned"], false);
}

/// The unused python lesson for the tests below: learned twice on 2 March.
fn pytest_nights(name: &str) -> (Nights, String) {
    let n = Nights::new(name);
    let text = "Run pytest from the repository root so conftest.py fixtures are discovered.";
    n.add(
        "night-01.jsonl",
        &[
            pytest_session("bil-0302-01", "2026-03-02T09:10:00Z", text),
            pytest_session("bil-0302-02", "2026-03-02T14:30:00Z", text),
        ],
    );
    let id = reading(&n.compile(), "Run pytest")["id"]
        .as_str()
        .unwrap()
        .to_string();
    (n, id)
}

#[test]
fn recompiling_a_night_with_a_crash_left_lock_file_changes_nothing() {
    let (n, _) = pytest_nights("nightly-stale-lock");
    let before = tree(&n.s.path("out"));
    // A job killed mid-compile leaves its lock file; the kernel released its lock.
    std::fs::write(n.s.path("out/.skillc/lock"), "pid 4242 on ci-runner-7\n").unwrap();
    n.compile();
    assert_eq!(tree(&n.s.path("out")), before);
}

/// A ruff session in billing on `at` that does not use the pytest lesson: an active day for it.
fn lint_session(id: &str, at: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": ["python"], "project": BILLING, "task": "lint cleanup",
           "outcome": "succeeded", "gotchas": ["ruff --fix rewrites imports; review the diff before committing."],
           "operations": [{"tool": "run_shell_command", "args": {"command": "ruff check --fix billing", "cwd": "/home/maya/src/billing-api"},
                           "status": "ok", "check": {"label": "lint", "target": "billing-api", "passed": true}}]})
}

/// A terraform plan on `at`: time moves on, the python lessons have no active day.
fn plan_session(id: &str, at: &str) -> Value {
    infra(id, at, "succeeded", None, &[], true)
}

/// The morning after a night that left a lesson idle (0.480), a person edits, pins or retires it:
/// the next night shows the confidence they decided on, not the idle day undone (0.500).
#[test]
fn a_decision_keeps_the_decay_of_the_day_the_user_saw() {
    let new_text =
        "Run pytest from the repository root; conftest.py fixtures are only discovered from there.";
    for action in ["edit", "pin", "retire"] {
        let (n, id) = pytest_nights(&format!("nightly-decision-{action}"));
        // Night 2: billing works on lint only; the pytest lesson is idle for a day.
        n.add(
            "night-02.jsonl",
            &[lint_session("bil-0303-01", "2026-03-03T16:00:00Z")],
        );
        let seen = lesson(&n.compile(), &id)["confidence"].as_f64();
        assert_eq!(seen, Some(0.48), "{action}");
        match action {
            "edit" => n.run(&["lessons", "edit", &id, "--text", new_text]),
            _ => n.run(&["lessons", action, &id]),
        };
        // Night 3: only infra works; python has no active day.
        n.add(
            "night-03.jsonl",
            &[plan_session("inf-0304-01", "2026-03-04T10:00:00Z")],
        );
        let ledger = n.compile();
        let l = match action {
            "edit" => reading(&ledger, new_text),
            _ => lesson(&ledger, &id),
        };
        assert_eq!(l["confidence"].as_f64(), seen, "{action}: {l:#}");
        if action == "retire" {
            // Restored the next morning, it goes on from there.
            n.run(&["lessons", "restore", &id]);
            n.add(
                "night-04.jsonl",
                &[plan_session("inf-0305-01", "2026-03-05T10:00:00Z")],
            );
            let l = lesson(&n.compile(), &id).clone();
            assert_eq!(
                (l["status"].as_str(), l["confidence"].as_f64()),
                (Some("active"), seen),
                "{l:#}"
            );
        }
    }
}

/// An edit whose lesson is used later that same day (a record arriving after the decision's
/// time): the day is used, so the new wording is not charged for it.
#[test]
fn an_edited_lesson_used_later_on_the_edit_day_is_not_charged_for_it() {
    let (n, id) = pytest_nights("nightly-edit-used-that-day");
    n.run(&[
        "lessons",
        "edit",
        &id,
        "--text",
        "Run pytest from the repository root; conftest.py fixtures are only discovered from there.",
    ]);
    let mut used = pytest_session("bil-0302-03", "2026-03-02T18:00:00Z", "");
    used.as_object_mut().unwrap().remove("lesson");
    used["in_play"] = json!([id]);
    n.add(
        "night-02.jsonl",
        &[used, lint_session("bil-0303-01", "2026-03-03T16:00:00Z")],
    );
    let l = reading(&n.compile(), "Run pytest from the repository root;").clone();
    // Confirmed on the edit day (0.650), idle on 3 March (0.630).
    assert_eq!(l["confidence"].as_f64(), Some(0.63), "{l:#}");
}
