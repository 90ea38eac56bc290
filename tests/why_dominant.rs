//! `skillc why` on domains thin for several reasons at once: the reason behind the most
//! candidates leads (reasons and advice alike), a versioned spelling no record uses points at
//! the domain that compiles, and a threshold raised for one run is named as the cause.

mod common;

use common::*;
use serde_json::json;

fn exp(id: &str, at: &str, domains: &[&str], project: &str, outcome: &str) -> serde_json::Value {
    json!({"id": id, "recorded_at": at, "domains": domains,
           "project": format!("git@github.com:acme/{project}.git"), "outcome": outcome})
}

fn call(command: &str, cwd: &str, ok: bool, label: &str) -> serde_json::Value {
    let mut op = json!({"tool": "run_shell_command", "args": {"command": command, "cwd": cwd},
                        "status": if ok { "ok" } else { "error" },
                        "check": {"label": label, "target": cwd, "passed": ok}});
    if !ok {
        op["error"] = json!("exit status 1");
    }
    op
}

fn with(mut e: serde_json::Value, field: &str, text: &str, ops: &[serde_json::Value]) -> serde_json::Value {
    e[field] = json!(text);
    e["operations"] = json!(ops);
    e
}

fn suggestions(w: &serde_json::Value) -> Vec<String> {
    ids(&w["suggestions"])
}

/// A node domain where agents pasted npm tokens into four lessons, told two incidents as
/// breakthroughs, had one run fail, and wrote one record with a US-style date. The tokens
/// hold back most: they lead the reasons and the advice, ahead of the one record the load
/// refused; and the counts agree with a compile of the same records.
#[test]
fn the_reason_behind_most_candidates_leads_the_reasons_and_the_advice() {
    let r = Records::new("why-dominant");
    let test = |ok| call("npm test", "/srv/web", ok, "tests");
    let token = "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    r.add(
        "codex.jsonl",
        &[
            with(
                exp(
                    "cx-101",
                    "2026-04-01T09:00:00Z",
                    &["node"],
                    "web-dashboard",
                    "succeeded",
                ),
                "lesson",
                &format!("Publish from CI with NPM_TOKEN={token} exported before npm publish."),
                &[test(true)],
            ),
            with(
                exp(
                    "cx-102",
                    "2026-04-02T09:00:00Z",
                    &["nodejs"],
                    "web-dashboard",
                    "succeeded",
                ),
                "lesson",
                &format!("Set //registry.npmjs.org/:_authToken={token} in .npmrc for private packages."),
                &[test(true)],
            ),
            with(
                exp(
                    "cx-103",
                    "2026-04-03T09:00:00Z",
                    &["node"],
                    "billing-ui",
                    "succeeded",
                ),
                "lesson",
                &format!("Use the automation token {token} so 2FA does not block npm publish in CI."),
                &[test(true)],
            ),
            with(
                exp(
                    "cx-104",
                    "2026-04-04T09:00:00Z",
                    &["Node.js"],
                    "billing-ui",
                    "succeeded",
                ),
                "lesson",
                &format!("Log in with npm login --auth-type=legacy and token {token} on the build agents."),
                &[test(true)],
            ),
        ],
    );
    r.add(
        "claude.jsonl",
        &[
            with(exp("cl-201", "2026-04-05T10:00:00Z", &["node"], "web-dashboard", "succeeded"), "breakthrough",
                 "Found that jest picked up the stale dist/ folder; deleted it and the suite went green after PR #311.", &[test(true)]),
            with(exp("cl-202", "2026-04-06T10:00:00Z", &["node"], "billing-ui", "succeeded"), "breakthrough",
                 "I bumped webpack from 5.88 to 5.91 in package.json and the build stopped running out of memory.", &[test(true)]),
            with(exp("cl-203", "2026-04-07T10:00:00Z", &["node"], "billing-ui", "failed"), "lesson",
                 "Run npm ci instead of npm install in CI so the lock file is honoured.", &[test(false)]),
            json!({"id": "cl-204", "recorded_at": "04/08/2026 10:00", "domains": ["node"],
                   "project": "git@github.com:acme/billing-ui.git", "outcome": "succeeded",
                   "lesson": "Run npm ci instead of npm install in CI so the lock file is honoured."}),
        ],
    );
    let w = why_json_in("node", &r.s.path("records"), &[]);
    let reasons: Vec<(String, u64)> = (w["reasons"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["code"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("N002".to_string(), 4),
            ("G002".to_string(), 2),
            ("G001".to_string(), 1)
        ],
        "{w:#}"
    );
    let s = suggestions(&w);
    assert!(
        s[0].starts_with(
            "4 candidates were refused because their `lesson` holds what looks like a credential"
        ),
        "the tokens hold back most: {s:#?}"
    );
    // Asked with a typo, `why` lists `node` with as many candidates as `why node` counts, the
    // refused ones included.
    let typo = why_json_in("nodee", &r.s.path("records"), &[]);
    assert_eq!(typo["did_you_mean"], "node", "{typo:#}");
    assert_eq!(typo["known_domains"][0]["domain"], "node");
    assert_eq!(
        typo["known_domains"][0]["candidates"], w["candidates"],
        "{typo:#}"
    );
    assert!(s[1].starts_with("2 candidates from `breakthrough`"), "{s:#?}");
    let load = s
        .iter()
        .position(|x| x.contains("refused at load"))
        .expect("the bad date is named");
    assert!(load > 1, "{s:#?}");
    // The human report lists the reasons in the same order.
    let o = skillc(&["why", "node", &r.records()]);
    let text = stdout(&o);
    let at = |code: &str| text.find(code).unwrap_or_else(|| panic!("{code} in {text}"));
    assert!(
        at("N002 credential-refused") < at("G002 narrative-candidate"),
        "{text}"
    );
    assert!(at("G002 narrative-candidate") < at("G001 outcome-gate"), "{text}");
    // The same counts as a compile of the same records.
    r.compile();
    let diags = read_json(&r.s.path("out/diagnostics.json"));
    let n002 = diags_of(&diags, "N002");
    assert_eq!(n002.len() as u64, reasons[0].1, "{diags:#}");
    let fates = &w["fates"];
    assert_eq!(fates["refused"], 4);
    assert_eq!(fates["held-back"], 3);
    assert_eq!(w["refused_at_load"]["records"], 1);
}

/// Nobody tagged a record `Python 3.11`, but a user asks for it: `why` does not call the
/// records' `python` a split of a domain no record uses; it suggests `python`, the domain
/// that compiles, and the command that reports on it.
#[test]
fn a_versioned_spelling_no_record_uses_points_at_the_domain_that_compiles() {
    let r = Records::new("why-versioned-unnamed");
    let lesson = "Use pytest's tmp_path fixture instead of writing to /tmp so parallel runs do not collide.";
    r.add(
        "agents.jsonl",
        &[
            with(
                exp(
                    "py-1",
                    "2026-05-01T09:00:00Z",
                    &["python"],
                    "etl-jobs",
                    "succeeded",
                ),
                "lesson",
                lesson,
                &[call("python -m pytest -q", "/srv/etl", true, "tests")],
            ),
            with(
                exp(
                    "py-2",
                    "2026-05-02T09:00:00Z",
                    &["py"],
                    "billing-api",
                    "succeeded",
                ),
                "lesson",
                lesson,
                &[call("pytest -q tests", "/srv/billing", true, "tests")],
            ),
            with(
                exp(
                    "go-1",
                    "2026-05-03T09:00:00Z",
                    &["go"],
                    "billing-api",
                    "succeeded",
                ),
                "lesson",
                "Run go test with -race in CI.",
                &[call("go test -race ./...", "/srv/billing", true, "tests")],
            ),
        ],
    );
    for asked in ["Python 3.11", "python3.11", "py3-12"] {
        // The version after a name the alias table knows is dropped: it is python.
        let w = why_json_in(asked, &r.s.path("records"), &[]);
        assert_eq!(w["domain"], "python", "{asked}: {w:#}");
        assert_eq!(w["rules"], 1, "{asked}: {w:#}");
        assert!(
            !ids(&w["suggestions"])
                .iter()
                .any(|s| s.contains("recurs in neither")),
            "{asked}: {w:#}"
        );
    }
    // From the plain side nothing is split: no advice about versions at all.
    let w = why_json_in("python", &r.s.path("records"), &[]);
    assert_eq!(w["variants"], json!([]));
    assert_eq!(w["rules"], 1);
}

/// Three experiences from two projects support the race-detector lesson: a rule under the
/// policy's threshold of 2, but a nightly job passes `--min-reinforcement 5`. `why` names the
/// flag as the reason (not just "2 more experiences"), and offers one experience to bless,
/// not each of the lesson's three.
#[test]
fn a_raised_threshold_is_named_and_one_experience_per_lesson_is_offered_for_blessing() {
    let r = Records::new("why-raised-threshold");
    let lesson = "Run go test with -race in CI; data races in handlers only show up under the race detector.";
    r.add(
        "agents.jsonl",
        &[
            with(
                exp(
                    "go-3",
                    "2026-05-01T09:00:00Z",
                    &["go", "golang"],
                    "search-svc",
                    "succeeded",
                ),
                "lesson",
                lesson,
                &[call("go test -race ./...", "/srv/search", true, "tests")],
            ),
            with(
                exp(
                    "go-1",
                    "2026-05-02T09:00:00Z",
                    &["golang"],
                    "billing-api",
                    "succeeded",
                ),
                "lesson",
                lesson,
                &[call("go test -race ./...", "/srv/billing", true, "tests")],
            ),
            with(
                exp("go-2", "2026-05-03T09:00:00Z", &["go"], "search-svc", "succeeded"),
                "lesson",
                lesson,
                &[call("go test -race ./internal/...", "/srv/search", true, "tests")],
            ),
        ],
    );
    let w = why_json_in("go", &r.s.path("records"), &["--min-reinforcement", "5"]);
    assert_eq!(w["rules"], 0);
    let s = suggestions(&w);
    assert!(
        s[0].contains("`--min-reinforcement 5`")
            && s[0].contains("min_reinforcement 2")
            && s[0].contains("without the flag"),
        "{s:#?}"
    );
    let bless: Vec<&String> = s.iter().filter(|x| x.starts_with("bless ")).collect();
    assert_eq!(bless.len(), 1, "{s:#?}");
    assert_eq!(
        bless[0].matches("skillc bless").count(),
        1,
        "one lesson, one blessing: {s:#?}"
    );
    // The experience the near miss names.
    let founder = w["near_misses"][0]["action"].as_str().unwrap();
    assert!(founder.contains("bless go-3"), "{founder}");
    assert!(bless[0].contains("`skillc bless go-3 "), "{s:#?}");
    // The compile's own G003 says the threshold came from the flag, not from policy.yaml.
    let out = r.s.path("out");
    compile_to(&r.s.path("records"), &out, &["--min-reinforcement", "5"]);
    let diags = read_json(&out.join("diagnostics.json"));
    let g003 = diags_of(&diags, "G003");
    assert_eq!(g003.len(), 1, "{diags:#}");
    assert!(
        g003[0]["message"]
            .as_str()
            .unwrap()
            .contains("`--min-reinforcement 5` was given (policy.yaml asks 2)"),
        "{:#}",
        g003[0]
    );
    assert_eq!(g003[0]["evidence"]["policy_min_reinforcement"], 2);
    // Without the flag the lesson is a rule, and nothing blames a threshold.
    let w = why_json_in("go", &r.s.path("records"), &[]);
    assert_eq!(w["rules"], 1);
    assert!(
        !suggestions(&w).iter().any(|x| x.contains("min-reinforcement")),
        "{w:#}"
    );
}

/// The user retired the race-detector lesson; months later someone asks why `go` compiles
/// nothing. `why` names the retired lesson with the reason given, and the restore command it
/// prints (with the same output directory) brings the rule back.
#[test]
fn a_domain_emptied_by_a_retire_names_the_lesson_and_how_to_restore_it() {
    let r = Records::new("why-retired-domain");
    let lesson = "Run go test with -race in CI; data races in handlers only show up under the race detector.";
    r.add(
        "agents.jsonl",
        &[
            with(
                exp("go-1", "2026-05-01T09:00:00Z", &["go"], "search-svc", "succeeded"),
                "lesson",
                lesson,
                &[call("go test -race ./...", "/srv/search", true, "tests")],
            ),
            with(
                exp(
                    "go-2",
                    "2026-05-02T09:00:00Z",
                    &["go"],
                    "billing-api",
                    "succeeded",
                ),
                "lesson",
                lesson,
                &[call("go test -race ./...", "/srv/billing", true, "tests")],
            ),
        ],
    );
    let ledger = r.compile();
    let id = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    let o = skillc(&[
        "lessons",
        "retire",
        &id,
        "--out",
        &r.out(),
        "--reason",
        "the race job runs nightly now",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    r.compile();
    let w = why_json_in("go", &r.s.path("records"), &["--out", &r.out()]);
    assert_eq!(w["rules"], 0);
    let s = suggestions(&w);
    let restore = format!("`skillc lessons restore {id} --out {}`", r.out());
    assert!(
        s[0].contains(&restore) && s[0].contains("the race job runs nightly now"),
        "{restore} in {s:#?}"
    );
    // The command runs as printed.
    let o = skillc(&["lessons", "restore", &id, "--out", &r.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    r.compile();
    assert_eq!(
        why_json_in("go", &r.s.path("records"), &["--out", &r.out()])["rules"],
        1
    );
}
