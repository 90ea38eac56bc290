//! Load through the public API, and a timing harness for the JSONL path (ignored by default:
//! `cargo test --release --test load -- --ignored --nocapture`, `SKILLC_BENCH_N` records).

mod common;

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Scratch, seen};
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use skillc::diagnostics::Sink;
use skillc::load::{Format, LoadOptions, load, load_texts};
use skillc::model::Outcome;

const DOMAINS: &[&str] = &["python", "rust", "docker", "kubernetes", "git", "typescript"];
const PROJECTS: &[&str] = &[
    "git@github.com:acme/billing-api.git",
    "git@github.com:acme/web-frontend.git",
    "/home/dev/infra",
];
const OUTCOMES: &[&str] = &["succeeded", "pivoted", "abandoned", "failed"];

fn record(i: usize) -> String {
    let d = DOMAINS[i % DOMAINS.len()];
    json!({
        "id": format!("exp-{i:07}"),
        "recorded_at": format!("2026-{:02}-{:02}T{:02}:{:02}:00Z", 1 + i % 12, 1 + i % 28, i % 24, i % 60),
        "domains": [d],
        "project": PROJECTS[i % PROJECTS.len()],
        "task": format!("fix the failing {d} integration test in module {}", i % 97),
        "outcome": OUTCOMES[i % 4],
        "effort": 1 + i % 5,
        "lesson": format!("Run the {d} test suite from the repository root so relative imports resolve (case {})", i % 13),
        "gotchas": ["the CI image caches dependencies between runs"],
        "operations": [
            {"tool": "run_shell_command",
             "args": {"command": format!("pytest -q tests/test_module_{}.py", i % 50), "cwd": "/home/dev/billing-api"},
             "status": "error", "error": "ModuleNotFoundError: No module named 'billing'"},
            {"tool": "run_shell_command",
             "args": {"command": "PYTHONPATH=. pytest -q", "cwd": "/home/dev/billing-api"},
             "status": "ok", "check": {"label": "tests", "target": "tests/", "passed": !i.is_multiple_of(3)}}
        ]
    })
    .to_string()
}

#[test]
fn public_api_loads_texts_in_order() {
    let a = [record(1), record(2)].join("\n");
    let b = format!("[{}]", record(3));
    let mut sink = Sink::new();
    let c = load_texts(
        &[("a.jsonl", &a), ("b.json", &b)],
        &LoadOptions::default(),
        &mut sink,
    );
    assert!(sink.is_empty(), "{sink:?}");
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["exp-0000001", "exp-0000002", "exp-0000003"]);
    assert_eq!(c.experiences[2].operations.len(), 2);
}

/// Producers write keywords in their own case ("Succeeded", "OK", "Do", "USER") and leave empty
/// slots in lists (`"gotchas": ["…", null]`): each names what the format means, so the record
/// loads, the same from JSONL (the fast path), a JSON array and YAML. A value the format does
/// not know ("success") is still refused.
#[test]
fn keywords_in_another_case_and_empty_list_slots_cost_no_record() {
    let records = [
        json!({"id": "dj-0412", "recorded_at": "2026-11-02T09:14:00Z", "domains": ["Python"],
               "project": "git@github.com:acme/billing-api.git", "outcome": "Succeeded",
               "lesson": "Run manage.py migrate --plan before migrate on a shared database.",
               "gotchas": ["makemigrations --check exits 1 when a model changed", null],
               "operations": [{"tool": "run_shell_command", "args": {"command": "python manage.py test"},
                               "status": "OK", "check": {"label": "tests", "passed": true}}]}),
        json!({"id": "dj-0413", "recorded_at": "2026-11-02T10:01:00Z", "domains": "python",
               "outcome": " FAILED ", "operations": [{"tool": "run_shell_command",
               "args": {"command": "pytest -q"}, "status": "Error", "error": "2 failed"}]}),
        json!({"type": "lesson", "id": "claim-7", "recorded_at": "2026-11-02T11:00:00Z",
               "domains": ["python"], "text": "Use tmp_path instead of tmpdir in new pytest tests.",
               "kind": "Do", "source": "USER", "evidence": []}),
        json!({"id": "dj-0414", "recorded_at": "2026-11-02T12:00:00Z", "domains": ["python"],
               "outcome": "success", "lesson": "Never run migrations from two pods at once."}),
    ];
    let jsonl = records
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let array = serde_json::to_string_pretty(&json!(records)).unwrap();
    let yaml = serde_yaml::to_string(&records).unwrap();
    for (name, text) in [("m.jsonl", &jsonl), ("m.json", &array), ("m.yaml", &yaml)] {
        let mut sink = Sink::new();
        let c = load_texts(&[(name, text)], &LoadOptions::default(), &mut sink);
        let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
        assert_eq!(ids, ["dj-0412", "dj-0413"], "{name}: {sink:?}");
        let first = &c.experiences[0];
        assert_eq!(first.outcome, Some(Outcome::Succeeded), "{name}");
        assert_eq!(first.words.gotchas.len(), 1, "{name}");
        assert_eq!(c.experiences[1].outcome, Some(Outcome::Failed), "{name}");
        assert_eq!(c.claims.len(), 1, "{name}: {sink:?}");
        // Only the unknown word costs its record.
        let refused: Vec<_> = found(&sink).into_iter().map(|(code, _, m)| (code, m)).collect();
        assert_eq!(refused.len(), 1, "{name}: {refused:?}");
        assert!(refused[0].1.contains("found \"success\""), "{name}: {refused:?}");
    }
}

/// An exporter that writes its own words ("success", "denied"), booleans and numbers as
/// strings, unix seconds and times to the minute still has its records refused (DESIGN §3.1
/// types them), but each L003 says what the value most likely means, as the field wants it,
/// in the message and as `suggested`. A value with no plain reading ("partial", "high") gets
/// no guess.
#[test]
fn a_refused_value_with_one_plain_reading_names_the_value_it_means() {
    let lines = [
        r#"{"id": "ci-881", "recorded_at": "2026-10-14T08:02:11Z", "domains": ["rust"], "project": "git@github.com:acme/ledger.git", "outcome": "success", "lesson": "Run cargo build --locked in CI so a stale Cargo.lock fails the build."}"#,
        r#"{"id": "ci-882", "recorded_at": 1760429000, "domains": ["rust"], "outcome": "succeeded", "lesson": "Pin the toolchain in rust-toolchain.toml."}"#,
        r#"{"id": "ci-883", "recorded_at": "2026-10-14T09:30:00Z", "domains": ["terraform"], "outcome": "failed", "operations": [{"tool": "run_shell_command", "args": {"command": "terraform apply"}, "status": "denied"}]}"#,
        r#"{"id": "ci-884", "recorded_at": "2026-10-14T10:00:00Z", "domains": ["python"], "outcome": "succeeded", "effort": "4", "operations": [{"tool": "run_shell_command", "args": {"command": "pytest -q"}, "status": "ok", "check": {"label": "tests", "passed": "yes"}}]}"#,
        r#"{"id": "ci-885", "recorded_at": "2026-10-14T11:00:00Z", "domains": ["python"], "outcome": "partial", "effort": "high", "lesson": "Use ruff format instead of black."}"#,
        r#"{"id": "ci-886", "recorded_at": "2026-10-14 12:30+02:00", "domains": ["python"], "outcome": "succeeded", "lesson": "Use ruff format instead of black."}"#,
        r#"{"type": "lesson", "id": "cl-9", "recorded_at": "2026-10-14T12:00:00Z", "domains": ["git"], "text": "Never force-push to main.", "kind": "dont", "source": "human", "evidence": []}"#,
    ]
    .join("\n");
    let mut sink = Sink::new();
    let c = load_texts(&[("export.jsonl", &lines)], &LoadOptions::default(), &mut sink);
    assert!(
        c.experiences.is_empty() && c.claims.is_empty(),
        "the values are still refused"
    );
    let suggested: Vec<(u32, String, Option<String>)> = sink
        .iter()
        .filter(|d| d.code == "L003")
        .map(|d| {
            (
                d.location.as_ref().map_or(0, |l| l.line),
                d.evidence["field"].as_str().unwrap().to_string(),
                d.evidence
                    .get("suggested")
                    .map(|v| v.as_str().unwrap().to_string()),
            )
        })
        .collect();
    let want = |line, field: &str, s: Option<&str>| (line, field.to_string(), s.map(String::from));
    assert_eq!(
        suggested,
        [
            want(1, "outcome", Some("\"succeeded\"")),
            want(2, "recorded_at", Some("\"2025-10-14T08:03:20Z\"")),
            want(3, "operations[0].status", Some("\"refused\"")),
            want(4, "operations[0].check.passed", Some("true")),
            want(4, "effort", Some("4")),
            want(5, "outcome", None),
            want(5, "effort", None),
            want(6, "recorded_at", Some("\"2026-10-14T12:30:00+02:00\"")),
            want(7, "kind", Some("\"avoid\"")),
            want(7, "source", Some("\"user\"")),
        ],
        "{sink:#?}"
    );
    let first = sink.iter().find(|d| d.code == "L003").unwrap();
    assert!(
        first
            .message
            .ends_with(r#"found "success" (did you mean "succeeded"?)"#),
        "{}",
        first.message
    );
}

/// A bad value the loader quotes back ("found \"…\"") is a value no stage has scanned yet: a
/// key pasted into the wrong field must not reach the terminal or `diagnostics.json`.
#[test]
fn a_secret_in_a_badly_typed_field_is_redacted_in_the_diagnostic() {
    let lines = [
        r#"{"id": "exp-1", "recorded_at": "2026-04-01T10:00:00Z", "domains": ["python"], "outcome": "succeeded", "effort": "AKIAIOSFODNN7EXAMPLE"}"#,
        r#"{"id": "exp-2", "recorded_at": "2026-04-01T10:05:00Z", "domains": ["python"], "outcome": "succeeded", "blessed": "password=hunter2hunter2"}"#,
        r#"{"id": "exp-3", "recorded_at": "2026-04-01T10:10:00Z", "domains": ["python"], "outcome": "succeeded", "effort": "high"}"#,
    ]
    .join("\n");
    let mut sink = Sink::new();
    let c = load_texts(&[("agent.jsonl", &lines)], &LoadOptions::default(), &mut sink);
    assert_eq!(
        c.experiences.len(),
        3,
        "a bad optional field costs only the field"
    );
    let messages: Vec<(&str, u32, String)> = found(&sink);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].2.contains(r#"found "[redacted: aws-access-key]""#),
        "{messages:?}"
    );
    assert!(
        messages[1].2.contains("[redacted: credential-assignment]"),
        "{messages:?}"
    );
    assert!(
        messages[2].2.contains(r#"found "high""#),
        "a plain value is still quoted: {messages:?}"
    );
    let all = serde_json::to_string(&sink).unwrap();
    for secret in ["AKIAIOSFODNN7EXAMPLE", "hunter2hunter2"] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
}

/// In-memory files loaded with a team's own rules redact with that team's secret patterns:
/// the built-in corpus `skillc compile` falls back to outside a checkout is read with the
/// rules of the compile, not the built-in ones.
#[test]
fn in_memory_files_loaded_with_the_compiles_rules_redact_with_its_secret_patterns() {
    let scratch = Scratch::new("load-texts-rules");
    let secrets = "patterns:\n  - name: acme-deploy-token\n    regex: '\\bacmedt_[a-z0-9]{24}\\b'\n";
    fs::write(scratch.path("secrets.yaml"), secrets).unwrap();
    let rules = skillc::policy::Rules::load(&scratch.0).unwrap();
    let token = "acmedt_9f2k4m1q8z7x3c5v6b0n2l4j";
    let line = format!(
        r#"{{"id": "exp-1", "recorded_at": "2026-04-01T10:00:00Z", "domains": ["terraform"], "outcome": "succeeded", "effort": "{token}"}}"#
    );
    let files = [("ops/agent.jsonl", line.as_str())];

    let mut with_rules = Sink::new();
    skillc::load::load_texts_with_rules(&files, &LoadOptions::default(), &rules, &mut with_rules);
    let messages = found(&with_rules);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].2.contains(r#"found "[redacted: acme-deploy-token]""#),
        "{messages:?}"
    );

    // The built-in patterns do not know the team's token.
    let mut built_in = Sink::new();
    load_texts(&files, &LoadOptions::default(), &mut built_in);
    assert!(found(&built_in)[0].2.contains(token), "{:?}", found(&built_in));
}

/// (code, line, message) of each diagnostic, for assertions that name what went wrong.
fn found(sink: &Sink) -> Vec<(&'static str, u32, String)> {
    sink.iter()
        .map(|d| {
            (
                d.code,
                d.location.as_ref().map_or(0, |l| l.line),
                d.message.clone(),
            )
        })
        .collect()
}

/// A team's YAML notes share their defaults through an anchor on the first record
/// (`<<: *infra`). One unrelated record with a key given twice must cost only itself: the
/// records that merge the anchor are still read, with the anchor's values, and an alias to
/// an anchor that exists nowhere is still an error of its own record.
#[test]
fn a_broken_yaml_item_does_not_cost_the_items_that_merge_an_earlier_anchor() {
    let text = "\
# infra team notes, October
- &infra
  id: tf-0101
  recorded_at: 2026-10-01T09:00:00Z
  domains: [terraform]
  project: git@github.com:acme/infra-live.git
  outcome: succeeded
  lesson: Run terraform plan with -lock-timeout=60s when several pipelines share one state bucket.
- <<: *infra
  id: tf-0102
  recorded_at: 2026-10-02T11:30:00Z
  task: unlock the staging state after a cancelled apply
- id: dk-0103
  recorded_at: 2026-10-03T09:00:00Z
  domains: [docker]
  project: git@github.com:acme/billing-api.git
  outcome: succeeded
  outcome: failed
  lesson: Build with --platform linux/amd64 on Apple silicon for x86 hosts.
- <<: *infra
  id: tf-0104
  project: git@github.com:acme/network-modules.git
  operations:
    - tool: run_shell_command
      args: {command: terraform plan -lock-timeout=60s, cwd: /home/dev/network-modules}
      status: ok
      check: {label: plan, passed: true}
- <<: *staging
  id: tf-0105
- id: gh-0106
  recorded_at: 2026-10-04T08:15:00Z
  domains: [github-actions]
  project: git@github.com:acme/web-frontend.git
  outcome: succeeded
  lesson: Cache ~/.npm keyed on package-lock.json, not node_modules.
";
    let mut sink = Sink::new();
    let c = load_texts(&[("notes/infra.yaml", text)], &LoadOptions::default(), &mut sink);
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(
        ids,
        ["tf-0101", "tf-0102", "tf-0104", "gh-0106"],
        "{:?}",
        found(&sink)
    );
    let lines: Vec<u32> = c.experiences.iter().map(|e| e.source.line).collect();
    assert_eq!(lines, [2, 9, 20, 30]);
    // The merged records carry the anchor's fields, and their own win.
    let e = &c.experiences[1];
    assert_eq!(e.domains, ["terraform"]);
    assert_eq!(e.project.as_deref(), Some("git@github.com:acme/infra-live.git"));
    assert_eq!(
        e.recorded_at,
        skillc::time::parse_rfc3339("2026-10-02T11:30:00Z").unwrap()
    );
    let e = &c.experiences[2];
    assert_eq!(
        e.project.as_deref(),
        Some("git@github.com:acme/network-modules.git")
    );
    assert_eq!(e.operations[0].args.value()["cwd"], "/home/dev/network-modules");
    // Exactly the two broken records are reported, each at its own line.
    let got = found(&sink);
    assert_eq!(got.len(), 2, "{got:?}");
    // The key given twice is reported where it is given the second time, about its record.
    assert_eq!((got[0].0, got[0].1), ("L001", 18), "{got:?}");
    assert_eq!(
        got[0].2,
        "key `outcome` appears twice in the record; the record was skipped"
    );
    assert_eq!(sink[0].subject, "dk-0103");
    assert_eq!((got[1].0, got[1].1), ("L001", 28), "{got:?}");
    assert!(got[1].2.contains("unknown anchor"), "{got:?}");
    assert!(
        sink.iter()
            .all(|d| d.location.as_ref().unwrap().file.as_ref() == "notes/infra.yaml")
    );
}

/// A large YAML list whose records all merge one anchor, with one broken record, loads in
/// time linear in its size: every other record is read. (Wall time is measured by the
/// benchmark, not asserted here.)
#[test]
fn a_large_yaml_list_of_merged_records_with_one_broken_record_loads_the_rest() {
    let n = 2_000;
    let mut text = String::from(
        "- &defaults\n  id: exp-0000000\n  recorded_at: 2026-03-01T09:00:00Z\n  domains: [python]\n  outcome: succeeded\n",
    );
    for i in 1..n {
        let project = PROJECTS[i % PROJECTS.len()];
        text.push_str(&format!(
            "- <<: *defaults\n  id: exp-{i:07}\n  project: \"{project}\"\n"
        ));
        if i == n / 2 {
            text.push_str("  task: [unclosed\n");
        }
    }
    let mut sink = Sink::new();
    let c = load_texts(&[("bulk.yaml", &text)], &LoadOptions::default(), &mut sink);
    assert_eq!(c.experiences.len(), n - 1, "{:?}", found(&sink));
    assert_eq!(sink.len(), 1, "{:?}", found(&sink));
    assert!(c.experiences.iter().all(|e| e.domains == ["python"]));
}

/// A JSON record that gives a key twice is refused like the same YAML record (L001), naming
/// the key, the object it is in, the file and the line; JSON parsers would silently keep the
/// last value (`outcome` would read `succeeded`). The other records are read.
#[test]
fn json_records_with_a_key_given_twice_are_refused_with_the_key_named() {
    let jsonl = [
        // The first record is fine.
        record(1),
        r#"{"id": "sess-0412", "recorded_at": "2026-04-02T09:14:00Z", "domains": ["git"], "project": "git@github.com:acme/billing-api.git", "outcome": "failed", "outcome": "succeeded", "lesson": "Use git worktree add for parallel branches instead of a second clone."}"#.to_string(),
        r#"{"id": "sess-0413", "recorded_at": "2026-04-02T10:02:00Z", "domains": ["docker"], "project": "/home/dev/infra", "outcome": "succeeded", "operations": [{"tool": "run_shell_command", "args": {"command": "docker build .", "cwd": "/home/dev/infra"}, "status": "ok"}, {"tool": "run_shell_command", "args": {"command": "docker compose up -d", "cwd": "/home/dev/infra", "command": "docker compose down"}, "status": "ok"}]}"#.to_string(),
        r#"{"id": "sess-0414", "recorded_at": "2026-04-02T11:40:00Z", "domains": ["python"], "project": "git@github.com:acme/web-frontend.git", "outcome": "succeeded", "operations": [{"tool": "run_shell_command", "args": {"command": "pytest -q"}, "status": "ok", "check": {"label": "tests", "passed": false, "passed": true}}]}"#.to_string(),
        // An unknown field is still only a warning, unless it too is given twice.
        r#"{"id": "sess-0415", "recorded_at": "2026-04-02T12:00:00Z", "domains": ["rust"], "outcome": "succeeded", "session": "a", "session": "b"}"#.to_string(),
        record(2),
    ]
    .join("\n");
    // A pretty-printed JSON array: the diagnostic is at the line of the second `effort`.
    let array = r#"[
  {
    "id": "ci-0501",
    "recorded_at": "2026-05-01T08:00:00Z",
    "domains": ["kubernetes"],
    "project": "git@github.com:acme/platform.git",
    "outcome": "succeeded",
    "lesson": "Set resources.requests on every container or the scheduler overpacks nodes."
  },
  {
    "id": "ci-0502",
    "recorded_at": "2026-05-01T09:00:00Z",
    "domains": ["kubernetes"],
    "effort": 2,
    "outcome": "failed",
    "effort": 5
  }
]"#;
    let yaml = "- id: sess-0601\n  recorded_at: 2026-06-01T09:00:00Z\n  domains: [git]\n  outcome: failed\n  outcome: succeeded\n";
    let mut sink = Sink::new();
    let c = load_texts(
        &[("agent.jsonl", &jsonl), ("ci.json", array), ("notes.yaml", yaml)],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(
        ids,
        ["exp-0000001", "exp-0000002", "ci-0501"],
        "{:?}",
        found(&sink)
    );
    let got: Vec<(&str, String, u32, &str, &str)> = sink
        .iter()
        .map(|d| {
            let loc = d.location.clone().unwrap();
            (
                d.code,
                loc.file.to_string(),
                loc.line,
                d.subject.as_str(),
                d.message.as_str(),
            )
        })
        .collect();
    let l001 = |file: &str, line: u32, id: &str, message: &'static str| {
        ("L001", file.to_string(), line, id.to_string(), message)
    };
    let want = [
        l001(
            "agent.jsonl",
            2,
            "sess-0412",
            "key `outcome` appears twice in the record; the record was skipped",
        ),
        l001(
            "agent.jsonl",
            3,
            "sess-0413",
            "key `command` appears twice in `operations[1].args`; the record was skipped",
        ),
        l001(
            "agent.jsonl",
            4,
            "sess-0414",
            "key `passed` appears twice in `operations[0].check`; the record was skipped",
        ),
        l001(
            "agent.jsonl",
            5,
            "sess-0415",
            "key `session` appears twice in the record; the record was skipped",
        ),
        l001(
            "ci.json",
            16,
            "ci-0502",
            "key `effort` appears twice in the record; the record was skipped",
        ),
    ];
    for w in &want {
        assert!(
            got.iter()
                .any(|g| (g.0, &g.1, g.2, g.3, g.4) == (w.0, &w.1, w.2, w.3.as_str(), w.4)),
            "missing {w:?} in {got:#?}"
        );
    }
    // And the YAML record with the same mistake is refused the same way.
    assert!(
        got.iter().any(|g| (g.0, g.1.as_str(), g.2, g.3, g.4)
            == (
                "L001",
                "notes.yaml",
                5,
                "sess-0601",
                "key `outcome` appears twice in the record; the record was skipped"
            )),
        "{got:#?}"
    );
    assert_eq!(got.len(), want.len() + 1, "{got:#?}");
    assert_eq!(
        sink.iter()
            .find(|d| d.subject == "sess-0413")
            .unwrap()
            .evidence
            .get("object")
            .unwrap(),
        "operations[1].args"
    );
}

/// `args` holds what the tool was called with, by name (an object). A bare command line is
/// refused like any other wrongly typed field (L003 naming `operations[i].args`); a string
/// that holds a JSON object (tool-call APIs pass arguments JSON-encoded) is that object.
#[test]
fn operation_args_must_be_an_object_or_a_json_encoded_one() {
    let rec = |id: &str, args: Value| {
        json!({
            "id": id, "recorded_at": "2026-04-03T15:20:00Z", "domains": ["git"],
            "project": "git@github.com:acme/billing-api.git", "outcome": "succeeded",
            "lesson": "Use git worktree add for parallel branches instead of a second clone.",
            "operations": [
                {"tool": "read_file", "args": {"file_path": "/home/dev/billing-api/README.md"}, "status": "ok"},
                {"tool": "run_shell_command", "args": args, "status": "ok"}
            ]
        })
        .to_string()
    };
    let encoded =
        json!({"command": "git worktree add ../wt feature", "cwd": "/home/dev/billing-api"}).to_string();
    let jsonl = [
        rec("wt-1", json!("git worktree add ../wt feature")),
        rec("wt-2", json!(encoded)),
        rec("wt-3", json!(["git", "worktree", "add"])),
        rec(
            "wt-4",
            json!({"command": "git worktree add ../wt feature", "cwd": "/home/dev/billing-api"}),
        ),
        rec("wt-5", json!("")),
        rec(
            "wt-6",
            json!(r#"{"command": "git worktree prune", "command": "git worktree add"}"#),
        ),
    ]
    .join("\n");
    let yaml = "\
- id: wt-7
  recorded_at: 2026-04-03T16:00:00Z
  domains: [git]
  project: /home/dev/infra
  outcome: succeeded
  operations:
    - tool: run_shell_command
      args: git worktree remove ../wt
      status: ok
";
    let mut sink = Sink::new();
    let c = load_texts(
        &[("agent.jsonl", &jsonl), ("notes.yaml", yaml)],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["wt-2", "wt-4", "wt-5"], "{:?}", found(&sink));
    // The encoded object is the same args as the object itself.
    assert_eq!(
        c.experiences[0].operations[1].args,
        c.experiences[1].operations[1].args
    );
    assert_eq!(c.experiences[0].operations[1].key(), "run_shell_command git");
    assert_eq!(c.experiences[2].operations[1].args.value(), Value::Null);
    let got: Vec<(&str, &str, u32, Option<&Value>)> = sink
        .iter()
        .map(|d| {
            (
                d.code,
                d.subject.as_str(),
                d.location.as_ref().unwrap().line,
                d.evidence.get("field"),
            )
        })
        .collect();
    let field = json!("operations[1].args");
    assert_eq!(
        got,
        [
            ("L003", "wt-1", 1, Some(&field)),
            ("L003", "wt-3", 3, Some(&field)),
            ("L001", "wt-6", 6, None),
            ("L003", "wt-7", 1, Some(&json!("operations[0].args"))),
        ],
        "{:#?}",
        found(&sink)
    );
    assert!(
        sink[0]
            .message
            .contains("found \"git worktree add ../wt feature\""),
        "{}",
        sink[0].message
    );
    assert!(
        sink[2]
            .message
            .contains("key `command` appears twice in `operations[1].args`"),
        "{}",
        sink[2].message
    );
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct BareCheck {
    label: String,
    target: Option<String>,
    passed: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct BareOp {
    tool: String,
    args: Value,
    status: String,
    error: Option<String>,
    check: Option<BareCheck>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct Bare {
    id: String,
    recorded_at: String,
    domains: Vec<String>,
    project: Option<String>,
    task: Option<String>,
    outcome: String,
    effort: Option<u8>,
    lesson: Option<String>,
    gotchas: Vec<String>,
    operations: Vec<BareOp>,
}

#[test]
#[ignore]
fn bench_jsonl_load() {
    let n: usize = std::env::var("SKILLC_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let path: PathBuf = std::env::temp_dir().join(format!("skillc-bench-{n}.jsonl"));
    if !path.exists() {
        let mut f = std::io::BufWriter::new(fs::File::create(&path).unwrap());
        for i in 0..n {
            writeln!(f, "{}", record(i)).unwrap();
        }
    }
    let size = fs::metadata(&path).unwrap().len();
    let bare = || {
        let t = Instant::now();
        let bytes = fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
        let recs: Vec<Bare> = lines
            .par_iter()
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(recs.len(), n);
        t.elapsed()
    };
    let ours = || {
        let t = Instant::now();
        let mut sink = Sink::new();
        let c = load(std::slice::from_ref(&path), &LoadOptions::default(), &mut sink).unwrap();
        assert_eq!(c.experiences.len(), n);
        assert!(sink.is_empty());
        t.elapsed()
    };
    let mut b = Duration::MAX;
    let mut o = Duration::MAX;
    for _ in 0..3 {
        b = b.min(bare());
        o = o.min(ours());
    }
    eprintln!(
        "{n} records, {:.0} MB, {} threads: bare typed parse {:.3}s, load {:.3}s ({:.2}x)",
        size as f64 / 1e6,
        rayon::current_num_threads(),
        b.as_secs_f64(),
        o.as_secs_f64(),
        o.as_secs_f64() / b.as_secs_f64()
    );
}

/// (code, file, line, subject) of each diagnostic, every one of which must be the refusal of a
/// record nested too deep.
fn too_deep(sink: &Sink) -> Vec<(&'static str, String, u32, String)> {
    let message = "record nests objects and lists more than 127 levels deep; the record was skipped";
    seen(sink)
        .into_iter()
        .map(|(c, f, l, s, m)| {
            assert_eq!(m, message);
            (c, f, l, s)
        })
        .collect()
}

/// OmniMem memories as an export writes them, one per line.
fn memory_lines() -> Vec<String> {
    [
        (
            "mem-20241101-pytest-root",
            "python",
            "Run pytest from the repository root so conftest.py is picked up",
            1730451600,
        ),
        (
            "mem-20241102-pip-module",
            "python",
            "Use python -m pip so the interpreter that runs the code installs the package",
            1730538000,
        ),
        (
            "mem-20241103-buildx-load",
            "docker",
            "Pass --load to docker buildx build when the image must run locally",
            1730624400,
        ),
        (
            "mem-20241104-git-switch",
            "git",
            "Use git switch -c for a new branch instead of git checkout -b",
            1730710800,
        ),
    ]
    .iter()
    .map(|(key, tag, lesson, at)| {
        json!({"key": key, "tags": format!("[\"{tag}\"]"), "outcome": "succeeded", "effort_score": "2",
               "lesson": lesson, "state": "active", "created_at": at.to_string(),
               "project": "git@github.com:acme/billing-api.git"})
        .to_string()
    })
    .collect()
}

/// A JSON Lines file whose first line was cut short (an editor crash, a `head -c`): that line
/// is one L001 at line 1, and every other line is read, whether the file is native records
/// named `.json` or an OmniMem export, with `--from omnimem` or recognised by content. The
/// format is decided by the first line that parses, not by the broken one.
#[test]
fn a_broken_first_line_costs_only_itself_in_json_lines_and_omnimem_exports() {
    let cut = |line: &str| line[..line.len() / 2].to_string();
    let natives: Vec<String> = (1..=4).map(record).collect();
    let native_json = [cut(&record(0))]
        .into_iter()
        .chain(natives)
        .collect::<Vec<_>>()
        .join("\n");
    let memories = memory_lines();
    let export = [cut(&memories[0])]
        .into_iter()
        .chain(memories[1..].iter().cloned())
        .collect::<Vec<_>>()
        .join("\n");
    for (name, text, from, want) in [
        (
            "agent-log.json",
            &native_json,
            None,
            vec!["exp-0000001", "exp-0000002", "exp-0000003", "exp-0000004"],
        ),
        (
            "omnimem.jsonl",
            &export,
            Some(Format::Omnimem),
            vec![
                "mem-20241102-pip-module",
                "mem-20241103-buildx-load",
                "mem-20241104-git-switch",
            ],
        ),
        (
            "omnimem.jsonl",
            &export,
            None,
            vec![
                "mem-20241102-pip-module",
                "mem-20241103-buildx-load",
                "mem-20241104-git-switch",
            ],
        ),
        (
            "omnimem.json",
            &export,
            None,
            vec![
                "mem-20241102-pip-module",
                "mem-20241103-buildx-load",
                "mem-20241104-git-switch",
            ],
        ),
    ] {
        let opts = LoadOptions {
            from,
            ..LoadOptions::default()
        };
        // Through the file reader too: it recognises the format from the file's first block.
        let dir = Scratch::new("broken-first-line");
        let path = dir.path(name);
        fs::write(&path, text).unwrap();
        let mut sink = Sink::new();
        let c = load(std::slice::from_ref(&path), &opts, &mut sink).unwrap();
        let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
        assert_eq!(ids, want, "{name} {from:?}: {:#?}", seen(&sink));
        let got = seen(&sink);
        assert_eq!(got.len(), 1, "{name} {from:?}: {got:#?}");
        let file = path.display().to_string();
        assert_eq!(
            (got[0].0, got[0].1.as_str(), got[0].2),
            ("L001", file.as_str(), 1),
            "{got:#?}"
        );
        assert!(got[0].4.starts_with("line is not valid json"), "{got:#?}");
        // The memories were read as memories: their tags are their domains.
        if name.starts_with("omnimem") {
            assert_eq!(c.experiences[2].domains, ["git"]);
        }
    }
}

/// A pretty-printed `.json` document is still one document, even when it holds an object on a
/// line of its own, and a broken one is still reported once, at its error.
#[test]
fn a_pretty_printed_json_document_is_not_taken_for_json_lines() {
    let doc = r#"{"id": "ops-0701", "recorded_at": "2026-07-01T09:00:00Z", "domains": ["docker"],
"outcome": "succeeded", "lesson": "Pin base images by digest in production Dockerfiles.",
"operations": [
{"tool": "run_shell_command", "args": {"command": "docker build --pull ."}, "status": "ok"}
]}
"#;
    let broken = "{\n  \"id\": \"ops-0702\",\n  \"recorded_at\": \"2026-07-02T09:00:00Z\"\n  \"domains\": [\"docker\"]\n}\n";
    let mut sink = Sink::new();
    let c = load_texts(
        &[("ops.json", doc), ("broken.json", broken)],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["ops-0701"], "{:#?}", seen(&sink));
    assert_eq!(c.experiences[0].operations.len(), 1);
    let got = seen(&sink);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(
        (got[0].0, got[0].1.as_str(), got[0].2),
        ("L001", "broken.json", 4),
        "{got:#?}"
    );
}

/// A YAML record that gives a key twice is refused as the same JSON record is: one L001 at the
/// line of the second occurrence, naming the key (and the mapping it is in) and the record's
/// id, so `skillc trace ID` can explain it. The other records are read.
#[test]
fn yaml_records_with_a_key_given_twice_are_reported_like_json_ones() {
    let list = "\
# platform team, November
- id: k8s-1101
  recorded_at: 2026-11-01T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
  lesson: Set resources.requests on every container or the scheduler overpacks nodes.
  lesson: Set requests and limits.
- id: k8s-1102
  recorded_at: 2026-11-02T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
  operations:
    - tool: run_shell_command
      args:
        command: kubectl rollout status deploy/api
        timeout: 120s
        command: kubectl get pods
      status: ok
- id: k8s-1103
  id: k8s-1104
  recorded_at: 2026-11-03T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
- id: k8s-1105
  recorded_at: 2026-11-04T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
  lesson: Use kubectl rollout undo to return to the previous ReplicaSet.
";
    // One record per document, as `---` documents.
    let docs = "\
---
id: gh-1201
recorded_at: 2026-12-01T09:00:00Z
domains: [github-actions]
outcome: failed
outcome: succeeded
---
id: gh-1202
recorded_at: 2026-12-02T09:00:00Z
domains: [github-actions]
outcome: succeeded
lesson: Cache ~/.npm keyed on package-lock.json, not node_modules.
";
    let mut sink = Sink::new();
    let c = load_texts(
        &[("platform.yaml", list), ("ci.yaml", docs)],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["k8s-1105", "gh-1202"], "{:#?}", seen(&sink));
    let got = seen(&sink);
    let l001 = |file: &str, line: u32, subject: &str, message: &str| {
        (
            "L001",
            file.to_string(),
            line,
            subject.to_string(),
            message.to_string(),
        )
    };
    assert_eq!(
        got,
        [
            l001(
                "platform.yaml",
                7,
                "k8s-1101",
                "key `lesson` appears twice in the record; the record was skipped"
            ),
            l001(
                "platform.yaml",
                17,
                "k8s-1102",
                "key `command` appears twice in `operations[0].args`; the record was skipped"
            ),
            // The id itself given twice: the record has no one id, so the file is named.
            l001(
                "platform.yaml",
                20,
                "platform.yaml",
                "key `id` appears twice in the record; the record was skipped"
            ),
            l001(
                "ci.yaml",
                6,
                "gh-1201",
                "key `outcome` appears twice in the record; the record was skipped"
            ),
        ]
    );
    let args = sink.iter().find(|d| d.subject == "k8s-1102").unwrap();
    assert_eq!(args.evidence.get("key").unwrap(), "command");
    assert_eq!(args.evidence.get("object").unwrap(), "operations[0].args");

    // `skillc trace` finds the refused record by its id and says why.
    let dir = Scratch::new("yaml-dupkey-trace");
    fs::write(dir.path("platform.yaml"), list).unwrap();
    let out = dir.path("out");
    let o = common::skillc(&[
        "trace",
        "k8s-1101",
        dir.path("platform.yaml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("k8s-1101: refused at load (L001)"),
        "{}",
        common::stdout(&o)
    );
    assert!(
        common::stderr(&o).contains("platform.yaml:7"),
        "{}",
        common::stderr(&o)
    );
}

/// A tool call whose `args` nest `depth` objects (a generated manifest passed whole).
fn nested_record(id: &str, depth: usize) -> String {
    let mut spec = json!({"replicas": 3});
    for level in (1..depth).rev() {
        spec = json!({format!("level{level}"): spec});
    }
    json!({
        "id": id,
        "recorded_at": "2026-10-01T09:00:00Z",
        "domains": ["kubernetes"],
        "outcome": "succeeded",
        "lesson": "Apply generated manifests with kubectl apply --server-side so field managers merge.",
        "operations": [{"tool": "kubectl_apply", "args": spec, "status": "ok"}]
    })
    .to_string()
}

/// A record nested deeper than skillc reads (300 levels of `args`) gets the same verdict
/// wherever it stands in the file, first line or not, in JSON Lines or in a JSON array:
/// refused with one L001 naming it, whose help does not ask to fix a syntax it does not lack.
/// The records around it are read. The limit is serde_json's: a record 127 levels deep is
/// read, on the first line or any other, and 128 levels is refused.
#[test]
fn a_deeply_nested_record_gets_one_verdict_wherever_it_stands() {
    // `args` at depth 4: 124 levels of it make a record 127 deep.
    let jsonl = [
        nested_record("k8s-deep-1", 300),
        record(1),
        nested_record("k8s-deep-3", 300),
        nested_record("k8s-edge-4", 124),
        nested_record("k8s-over-5", 125),
        record(2),
    ]
    .join("\n");
    let edge_first = [nested_record("k8s-edge-1", 124), record(3)].join("\n");
    let over_first = [nested_record("k8s-over-1", 125), record(4)].join("\n");
    let array = format!(
        "[\n{},\n{},\n{}\n]\n",
        record(5),
        nested_record("k8s-deep-a2", 300),
        record(6)
    );
    let array_first = format!("[\n{},\n{}\n]\n", nested_record("k8s-deep-b1", 300), record(7));
    let mut sink = Sink::new();
    let c = load_texts(
        &[
            ("apply.jsonl", &jsonl),
            ("edge.jsonl", &edge_first),
            ("over.jsonl", &over_first),
            ("apply.json", &array),
            ("first.json", &array_first),
        ],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(
        ids,
        [
            "exp-0000001",
            "k8s-edge-4",
            "exp-0000002",
            "k8s-edge-1",
            "exp-0000003",
            "exp-0000004",
            "exp-0000005",
            "exp-0000006",
            "exp-0000007"
        ],
        "{:#?}",
        seen(&sink)
    );
    let got = too_deep(&sink);
    let l001 = |file: &str, line: u32, id: &str| ("L001", file.to_string(), line, id.to_string());
    assert_eq!(
        got,
        [
            l001("apply.jsonl", 1, "k8s-deep-1"),
            l001("apply.jsonl", 3, "k8s-deep-3"),
            l001("apply.jsonl", 5, "k8s-over-5"),
            l001("over.jsonl", 1, "k8s-over-1"),
            l001("apply.json", 3, "k8s-deep-a2"),
            l001("first.json", 2, "k8s-deep-b1"),
        ]
    );
    assert!(
        sink.iter().all(|d| d.help.starts_with("flatten the record")),
        "{sink:#?}"
    );
    // What is read keeps its args whole.
    let edge = c.experiences.iter().find(|e| &*e.id == "k8s-edge-4").unwrap();
    assert_eq!(
        edge.operations[0].args.value()["level1"]["level2"]
            .as_object()
            .map(|o| o.len()),
        Some(1)
    );
}

/// Files written by an editor set to Latin-1: a `é` is the one byte 0xE9, which is not UTF-8.
/// Only the record holding it is refused, with an L001 at the byte's line naming the record
/// and saying to re-save as UTF-8; the file's other records are read, in YAML, in a JSON
/// array, in JSON Lines (named `.json` or `.jsonl`, the bad byte on the first line or not).
/// A comment line with such a byte costs nothing. A UTF-16 file says it is UTF-16; a binary
/// file is still refused whole.
#[test]
fn a_byte_that_is_not_utf8_costs_only_the_record_that_holds_it() {
    let latin1 = |s: &str| -> Vec<u8> { s.chars().map(|c| u8::try_from(u32::from(c)).unwrap()).collect() };
    let yaml = latin1(
        "\
# Notizen von René
- id: py-0901
  recorded_at: 2026-09-01T09:00:00Z
  domains: [python]
  outcome: succeeded
  lesson: Run pytest from the repository root so conftest.py is picked up.
- id: py-0902
  recorded_at: 2026-09-02T09:00:00Z
  domains: [python]
  outcome: succeeded
  task: fix the café menu export
  lesson: Pin the locale in CI so strftime output does not change.
- id: py-0903
  recorded_at: 2026-09-03T09:00:00Z
  domains: [python]
  outcome: succeeded
  lesson: Use python -m pip so the interpreter that runs the code installs the package.
",
    );
    let array = latin1(&format!(
        "[\n{},\n{},\n{}\n]\n",
        record(1),
        r#"{"id": "gh-0902", "recorded_at": "2026-09-02T09:00:00Z", "domains": ["git"], "outcome": "succeeded", "lesson": "Rebase the café branch onto main before opening the PR."}"#,
        record(2)
    ));
    let lines = |first_bad: bool, n: usize| {
        let bad = format!(
            r#"{{"id": "gh-091{n}", "recorded_at": "2026-09-11T09:00:00Z", "domains": ["git"], "outcome": "succeeded", "lesson": "Résumé: use git switch -c for a new branch."}}"#
        );
        let mut l = vec![record(3 * n), record(3 * n + 1), record(3 * n + 2)];
        l.insert(if first_bad { 0 } else { 1 }, bad);
        latin1(&l.join("\n"))
    };
    let mut utf16 = vec![0xFF, 0xFE];
    for u in record(20).encode_utf16() {
        utf16.extend(u.to_le_bytes());
    }
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0".to_vec();
    let dir = Scratch::new("not-utf8");
    let files: [(&str, Vec<u8>); 7] = [
        ("a-notes.yaml", yaml),
        ("b-export.json", array),
        ("c-lines.json", lines(false, 1)),
        ("d-first.jsonl", lines(true, 2)),
        ("e-second.jsonl", lines(false, 3)),
        ("f-utf16.jsonl", utf16),
        ("g-image.json", png),
    ];
    for (name, bytes) in &files {
        fs::write(dir.path(name), bytes).unwrap();
    }
    let mut sink = Sink::new();
    let c = load(std::slice::from_ref(&dir.0), &LoadOptions::default(), &mut sink).unwrap();
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(
        ids,
        [
            "py-0901",
            "py-0903",
            "exp-0000001",
            "exp-0000002",
            "exp-0000003",
            "exp-0000004",
            "exp-0000005",
            "exp-0000006",
            "exp-0000007",
            "exp-0000008",
            "exp-0000009",
            "exp-0000010",
            "exp-0000011"
        ],
        "{:#?}",
        seen(&sink)
    );
    let path = |name: &str| dir.path(name).display().to_string();
    let got: Vec<(&str, String, u32, String)> = seen(&sink)
        .into_iter()
        .map(|(c, f, l, s, _)| (c, f, l, s))
        .collect();
    assert_eq!(
        got,
        [
            ("L001", path("a-notes.yaml"), 11, "py-0902".to_string()),
            ("L001", path("b-export.json"), 3, "gh-0902".to_string()),
            ("L001", path("c-lines.json"), 2, "gh-0911".to_string()),
            ("L001", path("d-first.jsonl"), 1, "gh-0912".to_string()),
            ("L001", path("e-second.jsonl"), 2, "gh-0913".to_string()),
            ("L007", String::new(), 0, path("f-utf16.jsonl")),
            ("L007", String::new(), 0, path("g-image.json")),
        ]
    );
    assert_eq!(
        sink[0].message,
        "byte 0xE9 at column 20 is not UTF-8 text; the record was skipped"
    );
    assert!(
        sink[..5]
            .iter()
            .all(|d| d.help.starts_with("re-save the file as UTF-8")),
        "{sink:#?}"
    );
    assert_eq!(sink[5].message, "file is UTF-16 text, not UTF-8: it is not read");
    assert!(sink[5].help.starts_with("re-save the file as UTF-8"));
    assert_eq!(sink[6].message, "file is not UTF-8 text");
}

/// The same in YAML: a record nested deeper than the parser reads is refused with the same
/// L001, about its id, in a list (the other items are read) or as a document of its own.
#[test]
fn a_deeply_nested_yaml_record_is_refused_like_a_json_one() {
    let spec = format!("{}replicas: 3{}", "{level: ".repeat(200), "}".repeat(200));
    let list = format!(
        "\
- id: k8s-y01
  recorded_at: 2026-10-01T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
  operations:
    - tool: kubectl_apply
      args: {spec}
      status: ok
- id: k8s-y02
  recorded_at: 2026-10-02T09:00:00Z
  domains: [kubernetes]
  outcome: succeeded
  lesson: Apply generated manifests with kubectl apply --server-side so field managers merge.
"
    );
    let doc = format!(
        "id: k8s-y03\nrecorded_at: 2026-10-03T09:00:00Z\ndomains: [kubernetes]\noutcome: succeeded\noperations:\n  - tool: kubectl_apply\n    args: {spec}\n"
    );
    let mut sink = Sink::new();
    let c = load_texts(
        &[("apply.yaml", &list), ("one.yaml", &doc)],
        &LoadOptions::default(),
        &mut sink,
    );
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["k8s-y02"], "{:#?}", seen(&sink));
    let got = too_deep(&sink);
    assert_eq!(
        got,
        [
            ("L001", "apply.yaml".to_string(), 1, "k8s-y01".to_string()),
            ("L001", "one.yaml".to_string(), 1, "k8s-y03".to_string()),
        ]
    );
    assert!(sink.iter().all(|d| d.help.starts_with("flatten the record")));
}

/// A month of records gzipped beside this month's (`2026-10.jsonl.gz` next to
/// `2026-11.jsonl`) is said, with the command that gives the file skillc reads, not skipped
/// unseen; once decompressed beside it (`gunzip -k` keeps both), nothing more is said; a
/// compressed file of anything else (a tarball of logs) is not ours to mention.
#[test]
fn compressed_records_are_named_with_the_command_that_opens_them() {
    let s = Scratch::new("load-compressed");
    let dir = s.path("records");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("2026-11.jsonl"), record(1) + "\n").unwrap();
    fs::write(dir.join("2026-10.jsonl.gz"), b"\x1f\x8b\x08\x00 not read").unwrap();
    fs::write(dir.join("ci-logs.tar.gz"), b"\x1f\x8b\x08\x00 not read").unwrap();
    let mut sink = Sink::new();
    let corpus = load(std::slice::from_ref(&dir), &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(corpus.experiences.len(), 1);
    let said: Vec<(&str, String)> = sink.iter().map(|d| (d.code, d.message.clone())).collect();
    let gz = dir.join("2026-10.jsonl.gz").display().to_string();
    let inner = dir.join("2026-10.jsonl").display().to_string();
    assert_eq!(
        said,
        [(
            "L011",
            format!("compressed file: skillc reads records uncompressed (`gunzip -k {gz}` gives {inner})")
        )]
    );
    // Named on the command line, it is said the same way.
    let mut sink = Sink::new();
    load(&[PathBuf::from(&gz)], &LoadOptions::default(), &mut sink).unwrap();
    assert!(sink[0].message.starts_with("compressed file"), "{:?}", sink[0]);
    assert!(sink[0].help.starts_with("decompress it first"), "{:?}", sink[0]);
    // Decompressed beside it: read, and the compressed copy is no longer mentioned.
    fs::write(&inner, record(2) + "\n").unwrap();
    let mut sink = Sink::new();
    let corpus = load(&[dir], &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(corpus.experiences.len(), 2);
    assert!(sink.iter().all(|d| d.code != "L011"), "{sink:?}");
}

/// A raw NUL a tool wrote into the first record of a JSON Lines file (an agent copying a
/// process's output unescaped) costs that record alone, with an L001 at line 1, as it does on
/// any later line, named by its id and field; it used to refuse the whole file as "not UTF-8
/// text", losing every record in it. A file a crash left full of NULs, and UTF-16 without a byte-order mark (every
/// other byte a NUL), are still not text.
#[test]
fn a_nul_in_the_first_record_costs_only_that_record() {
    let first = json!({"id": "ci-0101-cargo", "recorded_at": "2026-01-01T09:00:00Z", "domains": ["rust"],
                       "outcome": "failed", "task": "cargo test aborts",
                       "operations": [{"tool": "Bash", "args": {"command": "cargo test"}, "status": "error",
                                       "error": "thread 'main' panicked at NUL_HERE"}]})
    .to_string()
    .replace("NUL_HERE", "\0");
    let text = format!("{first}\n{}\n{}\n", record(1), record(2));
    let dir = Scratch::new("nul-first-line");
    let utf16: Vec<u8> = record(3).encode_utf16().flat_map(u16::to_le_bytes).collect();
    let files: [(&str, Vec<u8>); 3] = [
        ("a-agent.jsonl", text.into_bytes()),
        ("b-crashed.jsonl", vec![0; 2048]),
        ("c-utf16.jsonl", utf16),
    ];
    for (name, bytes) in &files {
        fs::write(dir.path(name), bytes).unwrap();
    }
    let mut sink = Sink::new();
    let c = load(std::slice::from_ref(&dir.0), &LoadOptions::default(), &mut sink).unwrap();
    let ids: Vec<&str> = c.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids, ["exp-0000001", "exp-0000002"], "{:#?}", seen(&sink));
    let path = |name: &str| dir.path(name).display().to_string();
    let got: Vec<(&str, String, u32, String)> = seen(&sink)
        .into_iter()
        .map(|(c, f, l, s, _)| (c, f, l, s))
        .collect();
    assert_eq!(
        got,
        [
            ("L001", path("a-agent.jsonl"), 1, "ci-0101-cargo".to_string()),
            ("L007", String::new(), 0, path("b-crashed.jsonl")),
            ("L007", String::new(), 0, path("c-utf16.jsonl")),
        ],
        "{:#?}",
        seen(&sink)
    );
    assert!(sink[0].message.contains("control character"), "{:#?}", sink[0]);
    assert_eq!(sink[0].evidence["field"], "operations[0].error", "{:#?}", sink[0]);
}
