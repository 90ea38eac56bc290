//! The morning reader of a nightly job: diagnostics.json after several nights over four
//! projects (billing and storefront in python, infra in terraform, k8s-ops in kubernetes),
//! with decisions between nights. Each thing is said once, and only what is true.

mod common;

use common::Records as Nights;
use common::*;
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const STOREFRONT: &str = "https://github.com/acme/storefront";
const INFRA: &str = "git@gitlab.com:acme-platform/infra.git";
const K8S_OPS: &str = "git@github.com:acme/k8s-ops.git";

const PYTEST: &str = "Run pytest from the repository root so conftest.py fixtures are discovered.";
const KUBECTL: &str = "Run kubectl diff before kubectl apply so drift in the cluster is visible.";
const PLAN: &str = "Pass -lock-timeout=120s to terraform plan when several pipelines share the state bucket.";

fn call(command: &str, ok: bool, error: &str) -> Value {
    if ok {
        json!({"tool": "run_shell_command", "args": {"command": command, "cwd": "/home/dev/src"},
               "status": "ok", "check": {"label": "tests", "target": "ci", "passed": true}})
    } else {
        json!({"tool": "run_shell_command", "args": {"command": command, "cwd": "/home/dev/src"},
               "status": "error", "error": error})
    }
}

/// An experience on `project` in `domains`: its outcome, one call, an optional lesson and the
/// lessons it had in play.
fn exp(
    id: &str,
    at: &str,
    domains: &[&str],
    project: &str,
    outcome: &str,
    op: Value,
    (lesson, in_play): (Option<&str>, &[&str]),
) -> Value {
    let mut r = json!({"id": id, "recorded_at": at, "domains": domains, "project": project,
                       "task": "nightly work", "outcome": outcome, "operations": [op]});
    if let Some(text) = lesson {
        r["lesson"] = json!(text);
    }
    if !in_play.is_empty() {
        r["in_play"] = json!(in_play);
    }
    r
}

fn pytest(id: &str, at: &str, project: &str, lesson: Option<&str>, in_play: &[&str]) -> Value {
    exp(
        id,
        at,
        &["python"],
        project,
        "succeeded",
        call("pytest -q", true, ""),
        (lesson, in_play),
    )
}

fn kubectl(id: &str, at: &str, ok: bool, lesson: Option<&str>, in_play: &[&str]) -> Value {
    let outcome = if ok { "succeeded" } else { "failed" };
    let op = call(
        "kubectl diff -f deploy/api.yaml",
        ok,
        "error: unable to recognize \"deploy/api.yaml\": no matches for kind \"Deployment\" in version \"apps/v1beta1\"",
    );
    exp(id, at, &["kubernetes"], K8S_OPS, outcome, op, (lesson, in_play))
}

fn plan(id: &str, at: &str, lesson: Option<&str>, in_play: &[&str]) -> Value {
    let op = call("terraform plan -lock-timeout=120s", true, "");
    exp(id, at, &["terraform"], INFRA, "succeeded", op, (lesson, in_play))
}

/// Night one: three lessons learned twice each, in three projects.
fn first_night(name: &str) -> (Nights, Value) {
    let n = Nights::new(name);
    n.add(
        "night-01.jsonl",
        &[
            pytest("bil-0302-01", "2026-03-02T09:00:00Z", BILLING, Some(PYTEST), &[]),
            pytest("bil-0302-02", "2026-03-02T14:00:00Z", BILLING, Some(PYTEST), &[]),
            kubectl("ops-0302-01", "2026-03-02T10:00:00Z", true, Some(KUBECTL), &[]),
            kubectl("ops-0302-02", "2026-03-02T15:00:00Z", true, Some(KUBECTL), &[]),
            plan("inf-0302-01", "2026-03-02T11:00:00Z", Some(PLAN), &[]),
            plan("inf-0302-02", "2026-03-02T16:00:00Z", Some(PLAN), &[]),
        ],
    );
    let ledger = n.compile();
    (n, ledger)
}

fn id_of(ledger: &Value, start: &str) -> String {
    let found: Vec<&Value> = (ledger["lessons"].as_array().unwrap().iter())
        .filter(|l| l["text"].as_str().unwrap().starts_with(start))
        .collect();
    assert_eq!(found.len(), 1, "{start}: {ledger:#}");
    found[0]["id"].as_str().unwrap().to_string()
}

fn diagnostics(n: &Nights) -> Value {
    read_json(&n.s.path("out/diagnostics.json"))
}

/// An experience whose only part was to confirm (or to be blamed for) the lessons it had in
/// play contributed to them: no K001 "yields no candidate lesson… record a lesson" about it.
/// A routine session with nothing in play still gets its K001, and so does an experience
/// with lessons in play for the domains none of them is in.
#[test]
fn an_experience_that_confirmed_or_contradicted_its_in_play_lessons_is_not_told_it_yielded_nothing() {
    let (n, ledger) = first_night("nightly-diag-k001");
    let py = id_of(&ledger, "Run pytest");
    let k8 = id_of(&ledger, "Run kubectl");
    n.add(
        "night-02.jsonl",
        &[
            // Confirmations from billing and from storefront (the lesson goes global).
            pytest("bil-0303-01", "2026-03-03T09:00:00Z", BILLING, None, &[&py]),
            pytest("web-0303-01", "2026-03-03T10:00:00Z", STOREFRONT, None, &[&py]),
            // A failed rollout with the kubectl lesson in play: blamed on it.
            kubectl("ops-0303-01", "2026-03-03T11:00:00Z", false, None, &[&k8]),
            // Storefront's docker build also ran pytest: the python lesson is confirmed, docker
            // learned nothing.
            exp(
                "web-0303-02",
                "2026-03-03T12:00:00Z",
                &["python", "docker"],
                STOREFRONT,
                "succeeded",
                call("pytest -q", true, ""),
                (None, &[&py]),
            ),
            // Routine: nothing in play, nothing learned.
            pytest("bil-0303-02", "2026-03-03T13:00:00Z", BILLING, None, &[]),
            pytest("web-0303-03", "2026-03-03T14:00:00Z", STOREFRONT, None, &[]),
        ],
    );
    let ledger = n.compile();
    let l = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["id"] == py.as_str())
        .unwrap();
    assert!(ids(&l["evidence"]).contains(&"web-0303-02".to_string()), "{l:#}");
    let diags = diagnostics(&n);
    let k001 = diags_of(&diags, "K001");
    for confirmed in ["bil-0303-01", "web-0303-01", "ops-0303-01"] {
        assert!(
            !k001.iter().any(|d| names(d, confirmed)),
            "{confirmed}: {diags:#}"
        );
    }
    // In python it contributed; in docker it yielded nothing.
    let about = |id: &str| -> Vec<String> {
        (k001.iter())
            .filter(|d| names(d, id))
            .map(|d| d["domain"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(about("web-0303-02"), ["docker"], "{diags:#}");
    // The routine sessions are still noted, folded with their count.
    let python: Vec<&&Value> = k001.iter().filter(|d| d["subject"] == "python").collect();
    assert_eq!(python.len(), 1, "{diags:#}");
    assert_eq!(
        ids(&python[0]["evidence"]["experiences"]),
        ["bil-0303-02", "web-0303-03"]
    );
    assert_eq!(python[0]["evidence"]["count"], 2);
    assert_eq!(
        python[0]["message"],
        "experience yields no candidate lesson (2 times)"
    );
}

fn compile_threads(n: &Nights, threads: &str) -> Vec<u8> {
    let o = skillc(&["compile", &n.records(), "--out", &n.out(), "--threads", threads]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read(n.s.path("out/diagnostics.json")).unwrap()
}

/// A lesson that contradictions superseded is warned about (S002) on the night it left, saying
/// so; a retired one and a superseded one are not warned about again every night after, while
/// a live lesson's contradiction still is.
#[test]
fn contradictions_of_a_lesson_no_longer_live_are_reported_the_night_it_left_only() {
    let (n, ledger) = first_night("nightly-diag-s002");
    let py = id_of(&ledger, "Run pytest");
    let k8 = id_of(&ledger, "Run kubectl");
    let tf = id_of(&ledger, "Pass -lock-timeout");
    let failed_plan = |id: &str, at: &str| {
        let op = call(
            "terraform plan -lock-timeout=120s",
            false,
            "Error: Invalid provider configuration: region is required",
        );
        exp(id, at, &["terraform"], INFRA, "abandoned", op, (None, &[&tf]))
    };
    let failed_pytest = exp(
        "bil-0303-01",
        "2026-03-03T08:00:00Z",
        &["python"],
        BILLING,
        "failed",
        call(
            "pytest -q",
            false,
            "ERROR: file or directory not found: tests/test_refunds.py",
        ),
        (None, &[&py]),
    );
    // Night 2: two rollouts fail with the kubectl lesson in play (0.000: superseded), a plan is
    // given up with the terraform lesson in play (0.250: still live), a test run fails.
    n.add(
        "night-02.jsonl",
        &[
            kubectl("ops-0303-01", "2026-03-03T11:00:00Z", false, None, &[&k8]),
            kubectl("ops-0303-02", "2026-03-03T13:00:00Z", false, None, &[&k8]),
            failed_plan("inf-0303-01", "2026-03-03T12:00:00Z"),
            failed_pytest,
        ],
    );
    n.compile();
    let diags = diagnostics(&n);
    let s002 = |diags: &Value, id: &str| -> Option<Value> {
        diags_of(diags, "S002")
            .into_iter()
            .find(|d| d["subject"] == id)
            .cloned()
    };
    let k8_warning = s002(&diags, &k8).unwrap_or_else(|| panic!("{diags:#}"));
    assert!(
        (k8_warning["message"].as_str().unwrap())
            .ends_with("; the lesson is superseded: confidence fell below the floor after contradictions"),
        "{k8_warning:#}"
    );
    assert_eq!(k8_warning["evidence"]["status"], "superseded");
    let tf_warning = s002(&diags, &tf).unwrap_or_else(|| panic!("{diags:#}"));
    assert!(tf_warning["evidence"]["status"].is_null(), "{tf_warning:#}");
    assert!(s002(&diags, &py).is_some(), "{diags:#}");
    // The team retires the pytest lesson in the morning.
    let o = skillc(&["lessons", "retire", &py, "--out", &n.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Night 3: storefront's tests pass and infra plans again; nothing is in play.
    n.add(
        "night-03.jsonl",
        &[
            pytest("web-0304-01", "2026-03-04T10:00:00Z", STOREFRONT, None, &[]),
            plan("inf-0304-01", "2026-03-04T11:00:00Z", None, &[]),
        ],
    );
    let ledger = n.compile();
    let status = |id: &str| {
        (ledger["lessons"].as_array().unwrap().iter())
            .find(|l| l["id"] == id)
            .map(|l| l["status"].as_str().unwrap().to_string())
    };
    assert_eq!(
        (status(&k8), status(&py), status(&tf)),
        (
            Some("superseded".into()),
            Some("retired".into()),
            Some("active".into())
        )
    );
    let diags = diagnostics(&n);
    assert_eq!(s002(&diags, &k8), None, "{diags:#}");
    assert_eq!(s002(&diags, &py), None, "{diags:#}");
    // The live lesson is still warned about, and the superseded one still listed by S001.
    assert!(s002(&diags, &tf).is_some(), "{diags:#}");
    assert!(
        diags_of(&diags, "S001")
            .iter()
            .any(|d| d["subject"] == k8.as_str()),
        "{diags:#}"
    );
    // A re-run of the night, on one thread, says the same.
    let night_three = std::fs::read(n.s.path("out/diagnostics.json")).unwrap();
    assert_eq!(compile_threads(&n, "1"), night_three);
}

/// A back-filled older record re-founds a pinned lesson: S004 names the old and the new id on
/// that night (and on a re-run of it), not on every night after, while agents that still list
/// the old id keep crediting the lesson, and a decision on the old id still names the new one.
#[test]
fn a_re_founding_is_reported_on_the_night_it_happened_not_every_night_after() {
    let (n, ledger) = first_night("nightly-diag-s004");
    let old = id_of(&ledger, "Pass -lock-timeout");
    let o = skillc(&["lessons", "pin", &old, "--out", &n.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Night 2: a laptop syncs an older plan that taught the same lesson; an agent lists the
    // id from yesterday's block.
    n.add(
        "laptop-sync.jsonl",
        &[plan("inf-0301-01", "2026-03-01T17:00:00Z", Some(PLAN), &[])],
    );
    n.add(
        "night-02.jsonl",
        &[plan("inf-0303-01", "2026-03-03T09:00:00Z", None, &[&old])],
    );
    let ledger = n.compile();
    let new = id_of(&ledger, "Pass -lock-timeout");
    assert_ne!(new, old);
    let reported = |diags: &Value| {
        (diags_of(diags, "S004").iter())
            .map(|d| (d["evidence"]["old_id"].clone(), d["evidence"]["new_id"].clone()))
            .collect::<Vec<_>>()
    };
    let diags = diagnostics(&n);
    assert_eq!(reported(&diags), [(json!(old), json!(new))], "{diags:#}");
    let night_two = std::fs::read(n.s.path("out/diagnostics.json")).unwrap();
    assert_eq!(compile_threads(&n, "1"), night_two, "a re-run of night 2");

    // Night 3 and 4: agents still list the old id; the lesson is credited, pinned, and quiet.
    for (file, id, at) in [
        ("night-03.jsonl", "inf-0304-01", "2026-03-04T09:00:00Z"),
        ("night-04.jsonl", "inf-0305-01", "2026-03-05T09:00:00Z"),
    ] {
        n.add(file, &[plan(id, at, None, &[&old])]);
        let ledger = n.compile();
        let l = (ledger["lessons"].as_array().unwrap().iter())
            .find(|l| l["id"] == new.as_str())
            .unwrap();
        assert!(ids(&l["evidence"]).contains(&id.to_string()), "{l:#}");
        assert_eq!(l["pinned"], true);
        let diags = diagnostics(&n);
        assert!(reported(&diags).is_empty(), "{file}: {diags:#}");
        assert!(diags_of(&diags, "S005").is_empty(), "{diags:#}");
        // A decision on the old id is refused with the id to use.
        let o = skillc(&["lessons", "unpin", &old, "--out", &n.out()]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains(&format!("an earlier compile re-founded it as {new}")),
            "{}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(&format!("use `{new}`")), "{}", stderr(&o));
    }
}
