//! Lessons that switch a safeguard off (S010): learned as their evidence says, and named so a
//! person decides. Four projects' agents work past a held Terraform lock, an externally managed
//! Python, a slow pre-commit hook and a self-signed staging certificate; some of their lessons
//! tell the next agent to bypass the safeguard, others warn against doing so.

mod common;

use common::*;
use serde_json::{Value, json};

fn exp(id: &str, at: &str, domain: &str, project: &str, extra: Value) -> Value {
    let mut r = json!({
        "id": id,
        "recorded_at": at,
        "domains": [domain],
        "project": project,
        "task": format!("task of {id}"),
        "outcome": "succeeded",
    });
    r.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    r
}

/// A Terraform apply that hit a held state lock, then went through with `-lock=false`.
fn apply_without_lock(id: &str, at: &str, project: &str) -> Value {
    exp(
        id,
        at,
        "terraform",
        project,
        json!({"operations": [
            {"tool": "Bash", "args": {"command": "terraform apply -auto-approve tfplan"}, "status": "error",
             "error": "Error: Error acquiring the state lock\n\nError message: ConditionalCheckFailedException: The conditional request failed\nLock Info:\n  ID: 6f1c2a9e-52d4-8b1e-3f0a-9d2c7e4b1a55\n  Operation: OperationTypeApply\n  Who: runner@ci-7"},
            {"tool": "Bash", "args": {"command": "terraform apply -auto-approve -lock=false tfplan"}, "status": "ok"},
            {"tool": "Bash", "args": {"command": "terraform plan -detailed-exitcode"}, "status": "ok",
             "check": {"label": "plan", "target": "infra", "passed": true}}
        ]}),
    )
}

/// A push rejected as non-fast-forward after a rebase, then pushed with a lease.
fn push_with_lease(id: &str, at: &str, project: &str) -> Value {
    exp(
        id,
        at,
        "git",
        project,
        json!({"operations": [
            {"tool": "Bash", "args": {"command": "git push origin feature/ledger-export"}, "status": "error",
             "error": " ! [rejected]        feature/ledger-export -> feature/ledger-export (non-fast-forward)\nerror: failed to push some refs to 'github.com:acme/ledger.git'\nhint: Updates were rejected because the tip of your current branch is behind"},
            {"tool": "Bash", "args": {"command": "git push --force-with-lease origin feature/ledger-export"}, "status": "ok"}
        ]}),
    )
}

fn corpus() -> Vec<Value> {
    let pip = "When pip refuses with externally-managed-environment on the Debian CI image, run pip install --break-system-packages -r requirements.txt";
    let hooks =
        "Never commit with --no-verify to get past a failing pre-commit hook; fix what the hook reports";
    let lease = "After rebasing a shared branch, use git push --force-with-lease instead of git push --force";
    let curl = "Call the staging API with curl -k because its certificate is self-signed";
    vec![
        apply_without_lock("tf-0411", "2026-11-02T10:14:00Z", "/srv/infra/payments"),
        apply_without_lock("tf-0432", "2026-11-09T16:40:00Z", "/srv/infra/search"),
        exp(
            "py-2201",
            "2026-11-03T08:05:00Z",
            "python",
            "/home/ana/src/ledger-api",
            json!({"lesson": pip}),
        ),
        exp(
            "py-2260",
            "2026-11-12T13:30:00Z",
            "python",
            "/home/raj/src/etl-jobs",
            json!({"lesson": pip}),
        ),
        exp(
            "gh-3102",
            "2026-11-04T11:00:00Z",
            "git",
            "/home/ana/src/ledger-api",
            json!({"lesson": hooks}),
        ),
        exp(
            "gh-3177",
            "2026-11-10T09:20:00Z",
            "git",
            "/home/raj/src/etl-jobs",
            json!({"lesson": hooks}),
        ),
        exp(
            "gh-3190",
            "2026-11-11T15:45:00Z",
            "git",
            "/home/ana/src/ledger-api",
            json!({"lesson": lease}),
        ),
        exp(
            "gh-3215",
            "2026-11-13T10:05:00Z",
            "git",
            "/home/raj/src/etl-jobs",
            json!({"lesson": lease}),
        ),
        push_with_lease("gh-3230", "2026-11-14T17:10:00Z", "/home/ana/src/ledger-api"),
        push_with_lease("gh-3251", "2026-11-16T12:00:00Z", "/home/raj/src/etl-jobs"),
        exp(
            "st-0907",
            "2026-11-15T14:00:00Z",
            "http",
            "/home/ana/src/ledger-api",
            json!({"lesson": curl}),
        ),
    ]
}

/// The S010 warnings of a compile, by lesson id: (bypass, matched, rule).
fn warnings(out: &std::path::Path) -> Vec<(String, String, String, bool)> {
    let diags = read_json(&out.join("diagnostics.json"));
    let mut found: Vec<_> = diags_of(&diags, "S010")
        .into_iter()
        .map(|d| {
            let e = &d["evidence"];
            (
                d["domain"].as_str().unwrap().to_string(),
                e["bypass"].as_str().unwrap().to_string(),
                e["matched"].as_str().unwrap().to_string(),
                e["rule"].as_bool().unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

fn lesson_in<'l>(ledger: &'l Value, domain: &str) -> &'l Value {
    (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["domain"] == domain && l["status"] == "active")
        .unwrap_or_else(|| panic!("no active {domain} lesson"))
}

#[test]
fn a_learned_bypass_compiles_and_is_named_advice_against_one_is_not() {
    let r = Records::new("safeguards");
    r.add("agents.jsonl", &corpus());
    let ledger = r.compile();
    let out = r.s.path("out");

    // Learned from evidence, so compiled: the lock bypass is a mechanical rule.
    let tf = lesson_in(&ledger, "terraform");
    assert_eq!(tf["rule"], true, "{tf}");
    assert!(tf["text"].as_str().unwrap().contains("-lock=false"), "{tf}");

    assert_eq!(
        warnings(&out),
        vec![
            (
                "http".into(),
                "tls-verification-off".into(),
                "curl -k".into(),
                false
            ),
            (
                "python".into(),
                "break-system-packages".into(),
                "--break-system-packages".into(),
                true
            ),
            (
                "terraform".into(),
                "terraform-without-lock".into(),
                "-lock=false".into(),
                true
            ),
        ],
        "the git rules say not to bypass, and --force-with-lease is no --force"
    );

    // The message says what the safeguard is for, and the help how to decide.
    let o = skillc(&["compile", &r.records(), "--out", &r.out()]);
    let err = stderr(&o);
    let py = lesson_in(&ledger, "python")["id"].as_str().unwrap().to_string();
    assert!(
        err.contains(&format!(
            "warning[S010]: bypasses-safeguard: rule {py} tells agents to use `--break-system-packages`, which installs into the Python the operating system manages"
        )),
        "{err}"
    );
    assert!(err.contains("skillc lessons pin ID"), "{err}");
}

#[test]
fn pinning_a_bypass_keeps_it_and_ends_the_warning() {
    let r = Records::new("safeguards-pin");
    r.add("agents.jsonl", &corpus());
    let ledger = r.compile();
    let py = lesson_in(&ledger, "python")["id"].as_str().unwrap().to_string();

    let o = skillc(&["lessons", "pin", &py, "--out", &r.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = r.compile();
    let l = lesson_in(&ledger, "python");
    assert_eq!(
        (l["id"].as_str(), &l["pinned"], &l["rule"]),
        (Some(&*py), &json!(true), &json!(true))
    );
    let domains: Vec<String> = warnings(&r.s.path("out")).into_iter().map(|w| w.0).collect();
    assert_eq!(domains, ["http", "terraform"]);
}

#[test]
fn a_team_without_bypasses_in_its_policy_is_told_nothing() {
    // A policy file written before `bypasses` existed still loads, and names nothing.
    let r = Records::new("safeguards-old-policy");
    r.add("agents.jsonl", &corpus());
    let rules = r.s.path("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let policy = std::fs::read_to_string(repo().join("rules/policy.yaml")).unwrap();
    let start = policy.find("\nbypasses:").unwrap();
    let end = start + 1 + policy[start + 1..].find("\n\n").unwrap();
    std::fs::write(
        rules.join("policy.yaml"),
        format!("{}{}", &policy[..start], &policy[end..]),
    )
    .unwrap();
    let o = skillc(&[
        "compile",
        &r.records(),
        "--out",
        &r.out(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(warnings(&r.s.path("out")).is_empty());
    // The default policy on the same records does name them.
    r.compile();
    assert_eq!(warnings(&r.s.path("out")).len(), 3);
}

#[test]
fn diff_calls_a_new_rule_that_bypasses_a_safeguard_high_risk() {
    let r = Records::new("safeguards-diff");
    // The second session of the pip workaround and of the lease lesson arrive after a compile:
    // both lessons become rules, one of them switching a safeguard off.
    let (later, first): (Vec<Value>, Vec<Value>) =
        (corpus().into_iter()).partition(|e| e["id"] == "py-2260" || e["id"] == "gh-3215");
    r.add("agents.jsonl", &first);
    r.compile();
    r.add("later.jsonl", &later);

    let o = skillc(&[
        "diff",
        &r.records(),
        "--out",
        &r.out(),
        "--format",
        "json",
        "--fail-on",
        "high",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let d = json(&o);
    let change = |domain: &str| {
        (d["changes"].as_array().unwrap().iter())
            .find(|c| c["domain"] == domain && c["change"] == "new-rule")
            .unwrap_or_else(|| panic!("no new {domain} rule: {d:#}"))
    };
    let py = change("python");
    assert_eq!(py["risk"], "high", "{py:#}");
    assert!(
        py["detail"]
            .as_str()
            .unwrap()
            .ends_with("tells agents to use `--break-system-packages` (S010)"),
        "{py:#}"
    );
    assert_eq!(change("git")["risk"], "medium", "{d:#}");
}
