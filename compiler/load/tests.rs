use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::*;
use crate::diagnostics::Diagnostic;
use crate::model::{ClaimSource, Id, Kind, OpStatus, Outcome};
use crate::time::parse_rfc3339;

fn exp(id: &str, at: &str, domains: &str, outcome: &str, extra: Value) -> String {
    let mut v = json!({
        "id": id,
        "recorded_at": at,
        "domains": domains,
        "project": "git@github.com:acme/billing-api.git",
        "task": "make the integration tests pass on CI",
        "outcome": outcome,
    });
    if let Value::Object(extra) = extra {
        v.as_object_mut().unwrap().extend(extra);
    }
    v.to_string()
}

fn texts(files: &[(&str, &str)]) -> (Corpus, Vec<Diagnostic>) {
    let mut sink = Sink::new();
    let corpus = load_texts(files, &LoadOptions::default(), &mut sink);
    (corpus, sink)
}

fn ids(c: &Corpus) -> Vec<&str> {
    c.experiences.iter().map(|e| &*e.id).collect()
}

fn codes_at(diags: &[Diagnostic]) -> Vec<(&str, String, u32)> {
    diags
        .iter()
        .map(|d| {
            let loc = d.location.clone().unwrap_or_default();
            (d.code, loc.file.to_string(), loc.line)
        })
        .collect()
}

/// A fresh directory under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("skillc-load-{}-{tag}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn pytest_ops() -> Value {
    json!({"operations": [
        {"tool": "run_shell_command", "args": {"command": "pytest -q tests/test_invoices.py", "cwd": "/home/dev/billing-api"},
         "status": "error", "error": "ModuleNotFoundError: No module named 'billing'"},
        {"tool": "run_shell_command", "args": {"command": "PYTHONPATH=. pytest -q", "cwd": "/home/dev/billing-api"},
         "status": "ok", "check": {"label": "tests", "target": "tests/", "passed": true}}
    ]})
}

#[test]
fn jsonl_bad_line_in_the_middle_is_skipped_and_the_run_goes_on() {
    let text = [
        exp(
            "e-101",
            "2026-03-01T09:15:00Z",
            "python",
            "succeeded",
            pytest_ops(),
        ),
        r#"{"id": "e-102", "recorded_at": "2026-03-01T10:00:00Z", "domains": "python", "outcome": "#
            .to_string(),
        String::new(),
        exp(
            "e-103",
            "2026-03-02T08:00:00+02:00",
            "python",
            "pivoted",
            json!({}),
        ),
    ]
    .join("\n");
    let (c, d) = texts(&[("mem/agent.jsonl", &text)]);
    assert_eq!(ids(&c), ["e-101", "e-103"]);
    assert_eq!(c.experiences[0].source.line, 1);
    assert_eq!(c.experiences[1].source.line, 4);
    assert_eq!(codes_at(&d), [("L001", "mem/agent.jsonl".to_string(), 2)]);
    assert!(
        d[0].message.starts_with("line is not valid json"),
        "{}",
        d[0].message
    );

    let e = &c.experiences[0];
    assert_eq!(e.recorded_at, parse_rfc3339("2026-03-01T09:15:00Z").unwrap());
    assert_eq!(e.domains, ["python"]);
    assert_eq!(e.outcome, Some(Outcome::Succeeded));
    assert_eq!(e.operations.len(), 2);
    assert_eq!(e.operations[0].status, OpStatus::Error);
    assert_eq!(e.operations[0].args.value()["cwd"], "/home/dev/billing-api");
    assert_eq!(e.operations[1].check.as_ref().unwrap().label, "tests");
    assert_eq!(
        c.experiences[1].recorded_at,
        parse_rfc3339("2026-03-02T06:00:00Z").unwrap()
    );
}

#[test]
fn json_array_truncated_midway_keeps_the_records_before_it() {
    let text = format!(
        "[\n  {},\n  {},\n  {{\"id\": \"e-3\",\n   \"recorded_at\": \"2026-03-03T10:00:00Z\",\n   \"domains\": [\"rust\"",
        exp("e-1", "2026-03-01T10:00:00Z", "rust", "succeeded", json!({})),
        exp("e-2", "2026-03-02T10:00:00Z", "rust", "failed", json!({})),
    );
    let (c, d) = texts(&[("export.json", &text)]);
    assert_eq!(ids(&c), ["e-1", "e-2"]);
    assert_eq!(c.experiences[0].source.line, 2);
    assert_eq!(c.experiences[1].source.line, 3);
    assert_eq!(codes_at(&d), [("L001", "export.json".to_string(), 6)]);
    assert!(
        d[0].message.contains("the rest of the array was skipped"),
        "{}",
        d[0].message
    );
    assert!(
        d[0].help.contains("were not read"),
        "the help agrees: {}",
        d[0].help
    );
}

/// A memory service's export, one record per line inside an array: a record whose writer died
/// mid-line and one holding a raw tab cost only themselves; the records after them are read
/// (they used to be skipped with the rest of the array).
#[test]
fn json_array_with_broken_records_in_the_middle_keeps_the_records_after_them() {
    let lesson = |text: &str| json!({ "lesson": text });
    let records = [
        exp(
            "e-1",
            "2026-03-01T10:00:00Z",
            "node",
            "succeeded",
            lesson("Use npm ci in CI so the lockfile is respected."),
        ),
        exp(
            "e-2",
            "2026-03-02T10:00:00Z",
            "node",
            "succeeded",
            lesson("Pin the Node version in .nvmrc and in CI."),
        ),
        exp(
            "e-3",
            "2026-03-03T10:00:00Z",
            "python",
            "succeeded",
            lesson("Run pytest from the repository root."),
        ),
        exp(
            "e-4",
            "2026-03-04T10:00:00Z",
            "python",
            "succeeded",
            lesson("Pin numpy<2 until pandas supports it."),
        ),
        exp(
            "e-5",
            "2026-03-05T10:00:00Z",
            "rust",
            "succeeded",
            lesson("Run cargo clippy with -D warnings before pushing."),
        ),
    ];
    let cut = &records[1][..records[1].len() / 2];
    let tabbed = records[3].replacen("until pandas", "until\tpandas", 1);
    let text = format!(
        "[\n{},\n{cut}\n{},\n{tabbed},\n{}\n]\n",
        records[0], records[2], records[4]
    );
    let (c, d) = texts(&[("export.json", &text)]);
    assert_eq!(ids(&c), ["e-1", "e-3", "e-5"], "{d:#?}");
    assert_eq!(
        c.experiences.iter().map(|e| e.source.line).collect::<Vec<_>>(),
        [2, 4, 6]
    );
    assert_eq!(
        codes_at(&d),
        [
            ("L001", "export.json".to_string(), 3),
            ("L001", "export.json".to_string(), 5)
        ],
        "{d:#?}"
    );
    assert_eq!(
        d[0].message,
        "invalid json: the record is not closed before the next one starts at line 4; the record was skipped"
    );
    assert!(d[0].help.contains("were still read"), "{}", d[0].help);
    assert!(d[1].message.contains("raw control character"), "{}", d[1].message);
    assert_eq!(d[1].subject, "e-4", "the tabbed record is named by its id");

    // Pretty-printed, a comma lost between two keys: the record's braces still close.
    let pretty: Vec<Value> = records.iter().map(|r| serde_json::from_str(r).unwrap()).collect();
    let pretty = serde_json::to_string_pretty(&pretty)
        .unwrap()
        .replacen(
            "\"outcome\": \"succeeded\",\n    \"project\"",
            "\"outcome\": \"succeeded\"\n    \"project\"",
            2,
        )
        .replacen(
            "\"outcome\": \"succeeded\"\n    \"project\"",
            "\"outcome\": \"succeeded\",\n    \"project\"",
            1,
        );
    let (c, d) = texts(&[("pretty.json", &pretty)]);
    assert_eq!(ids(&c), ["e-1", "e-3", "e-4", "e-5"], "{d:#?}");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].message.ends_with("the record was skipped"),
        "{}",
        d[0].message
    );

    // Cut short at the end of the array, nothing can follow it: the rest is said to be skipped.
    let text = format!("[\n{},\n{cut}\n]\n", records[0]);
    let (c, d) = texts(&[("tail.json", &text)]);
    assert_eq!(ids(&c), ["e-1"]);
    assert!(
        d[0].message.contains("the rest of the array was skipped"),
        "{}",
        d[0].message
    );
}

#[test]
fn an_empty_domain_list_is_reported_as_empty_not_as_missing() {
    let text = [
        exp(
            "e-1",
            "2026-03-01T10:00:00Z",
            "rust",
            "succeeded",
            json!({"domains": []}),
        ),
        exp("e-2", "2026-03-02T10:00:00Z", "rust", "succeeded", json!({}))
            .replace("\"domains\":\"rust\",", ""),
    ]
    .join("\n");
    let (c, d) = texts(&[("runs.jsonl", &text)]);
    assert!(c.experiences.is_empty());
    let messages: Vec<(&str, &str)> = d.iter().map(|d| (d.code, d.message.as_str())).collect();
    assert_eq!(
        messages,
        [
            ("L002", "record has no domain: `domains` is empty"),
            ("L002", "record has no `domains`")
        ]
    );
}

#[test]
fn json_array_with_a_syntax_error_reports_it_at_its_line() {
    let text = format!(
        "[\n{},\n{{\"id\": \"e-2\", \"outcome\": }},\n{}\n]\n",
        exp("e-1", "2026-03-01T10:00:00Z", "rust", "succeeded", json!({})),
        exp("e-3", "2026-03-01T10:00:00Z", "rust", "succeeded", json!({})),
    );
    let (c, d) = texts(&[("a.json", &text)]);
    // The broken record's braces close, so the record after it is still read.
    assert_eq!(ids(&c), ["e-1", "e-3"]);
    assert_eq!(codes_at(&d), [("L001", "a.json".to_string(), 3)]);
}

#[test]
fn json_single_object_and_json_lines_in_a_json_file() {
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<Value>(&exp(
            "e-1",
            "2026-03-01T10:00:00Z",
            "docker",
            "succeeded",
            json!({}),
        ))
        .unwrap(),
    )
    .unwrap();
    let lines = [
        exp("e-2", "2026-03-01T10:00:00Z", "docker", "succeeded", json!({})),
        exp("e-3", "2026-03-01T11:00:00Z", "docker", "failed", json!({})),
    ]
    .join("\n");
    let (c, d) = texts(&[("one.json", &pretty), ("lines.json", &lines)]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(ids(&c), ["e-1", "e-2", "e-3"]);
    assert_eq!(c.experiences[0].source.line, 1);
    assert_eq!(c.experiences[2].source.line, 2);
}

const YAML: &str = "\
# experiences recorded by the review agent
---
id: y-1
recorded_at: 2026-03-04T12:00:00Z
domains: [kubernetes, helm]
outcome: succeeded
lesson: Run helm template before helm upgrade to catch rendering errors early
operations:
  - tool: run_shell_command
    args: {command: helm template charts/api}
---
- id: y-2
  recorded_at: '2026-03-05T08:30:00Z'
  domains: kubernetes
  outcome: failed
  gotchas:
    - kubectl apply does not prune deleted resources
- id: y-3
  recorded_at: 2026-03-05T09:00:00Z
  domains: kubernetes
  outcome: abandoned
  dead_ends:
    - name: kubectl edit in production
      reason: drift from the chart
    - port-forward debugging
";

#[test]
fn yaml_two_documents_and_a_list_with_item_lines() {
    let (c, d) = texts(&[("notes/review.yaml", YAML)]);
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(ids(&c), ["y-1", "y-2", "y-3"]);
    let lines: Vec<u32> = c.experiences.iter().map(|e| e.source.line).collect();
    assert_eq!(lines, [3, 12, 18]);
    assert_eq!(c.experiences[0].domains, ["kubernetes", "helm"]);
    assert_eq!(
        c.experiences[0].operations[0].args.value()["command"],
        "helm template charts/api"
    );
    assert_eq!(c.experiences[1].words.gotchas.len(), 1);
    let de = &c.experiences[2].words.dead_ends;
    assert_eq!(de.len(), 2);
    assert_eq!(de[0].reason.as_deref(), Some("drift from the chart"));
    assert_eq!(de[1].name, "port-forward debugging");
}

#[test]
fn yaml_syntax_error_costs_only_its_item() {
    let text = "\
- id: y-1
  recorded_at: 2026-03-04T12:00:00Z
  domains: go
  outcome: succeeded
- id: y-2
  recorded_at: 2026-03-04T13:00:00Z
  domains: go
  outcome: succeeded
- id: y-3
  recorded_at: [2026-03-04
  domains: go
  outcome: succeeded
- id: y-4
  recorded_at: 2026-03-04T15:00:00Z
  domains: go
  outcome: succeeded
";
    let (c, d) = texts(&[("go.yml", text)]);
    assert_eq!(ids(&c), ["y-1", "y-2", "y-4"]);
    assert_eq!(c.experiences[1].source.line, 5);
    assert_eq!(c.experiences[2].source.line, 13);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].code, "L001");
    let line = d[0].location.as_ref().unwrap().line;
    assert!((9..=12).contains(&line), "error line {line}");
    assert!(d[0].message.contains("the item was skipped"), "{}", d[0].message);

    // A number YAML cannot hold is an error in its own item; `.nan` is a value the field
    // refuses, not an absent one.
    let text = "\
- id: y-5
  recorded_at: 2026-03-04T12:00:00Z
  domains: go
  outcome: succeeded
  effort: 99999999999999999999999999
- id: y-6
  recorded_at: 2026-03-04T13:00:00Z
  domains: go
  outcome: succeeded
  effort: .nan
- id: y-7
  recorded_at: 2026-03-04T14:00:00Z
  domains: go
  outcome: succeeded
";
    let (c, d) = texts(&[("effort.yaml", text)]);
    assert_eq!(ids(&c), ["y-6", "y-7"], "a bad effort costs only the field");
    let got: Vec<(&str, u32)> = d
        .iter()
        .map(|d| (d.code, d.location.as_ref().unwrap().line))
        .collect();
    assert_eq!(got[1], ("L003", 6), "{d:?}");
    assert_eq!(got[0].0, "L001", "{d:?}");
    assert!((1..=5).contains(&got[0].1), "{d:?}");
    assert_eq!(d[1].evidence["field"], "effort");
}

/// A lesson file edited by hand with a tab before one key: the parser says "found character
/// that cannot start any token", which names no tab; the help does. A syntax error of another
/// kind keeps the plain help.
#[test]
fn yaml_tab_indentation_is_named_in_the_help() {
    let text = "- id: y-1\n  recorded_at: 2026-03-04T12:00:00Z\n  domains: [terraform]\n  outcome: succeeded\n\
                - id: y-2\n  recorded_at: 2026-03-04T13:00:00Z\n  domains: [terraform]\n\toutcome: succeeded\n\
                - id: y-3\n  recorded_at: [2026-03-04\n  domains: [terraform]\n  outcome: succeeded\n\
                - id: y-4\n  recorded_at: 2026-03-04T15:00:00Z\n  domains: [terraform]\n  outcome: succeeded\n";
    let (c, d) = texts(&[("infra.yaml", text)]);
    assert_eq!(ids(&c), ["y-1", "y-4"]);
    let helps: Vec<(u32, &str)> = (d.iter())
        .map(|d| (d.location.as_ref().unwrap().line, d.help))
        .collect();
    assert_eq!(helps.len(), 2, "{d:?}");
    assert_eq!(helps[0].0, 8, "{d:?}");
    assert!(
        helps[0].1.starts_with("YAML indents with spaces, never tabs"),
        "{d:?}"
    );
    assert!(
        helps[1].1.starts_with("fix the syntax at the reported line"),
        "{d:?}"
    );
}

/// A YAML document that is not a list has no items to read one by one.
#[test]
fn yaml_syntax_error_in_a_single_record_skips_it() {
    let text = "id: y-8\nrecorded_at: [2026-03-04\ndomains: go\noutcome: succeeded\n";
    let (c, d) = texts(&[("one.yaml", text)]);
    assert!(c.experiences.is_empty());
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].message.contains("the document was skipped"),
        "{}",
        d[0].message
    );
}

#[test]
fn missing_field_unknown_outcome_and_wrong_types_are_precise() {
    let text = [
        r#"{"id": "e-1", "recorded_at": "2026-03-01T10:00:00Z", "domains": "python"}"#.to_string(),
        exp("e-2", "2026-03-01T10:00:00Z", "python", "done", json!({})),
        exp(
            "e-3",
            "2026-03-01T10:00:00Z",
            "python",
            "failed",
            json!({"effort": "high"}),
        ),
        r#"{"id": "e-4", "recorded_at": "last tuesday", "domains": 42, "outcome": "failed"}"#.to_string(),
        exp(
            "e-5",
            "2026-03-01T10:00:00Z",
            "python",
            "failed",
            json!({"effort": 9}),
        ),
        exp(
            "e-6",
            "2026-03-01T10:00:00Z",
            "python",
            "failed",
            json!({"operations": [{"args": {"command": "ls"}}, {"tool": "read_file", "status": "maybe"}]}),
        ),
        exp("e-7", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
    ]
    .join("\n");
    let (c, d) = texts(&[("x.jsonl", &text)]);
    // A bad `effort` costs only the field: e-3 and e-5 are kept without one.
    assert_eq!(ids(&c), ["e-3", "e-5", "e-7"]);
    assert!(c.experiences.iter().all(|e| e.effort.is_none()));
    let got: Vec<(&str, &str, u32, &str)> = d
        .iter()
        .map(|d| {
            (
                d.code,
                d.subject.as_str(),
                d.location.as_ref().unwrap().line,
                d.evidence["field"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("L002", "e-1", 1, "outcome"),
            ("L003", "e-2", 2, "outcome"),
            ("L003", "e-3", 3, "effort"),
            ("L003", "e-4", 4, "recorded_at"),
            ("L003", "e-4", 4, "domains"),
            ("L003", "e-5", 5, "effort"),
            ("L002", "e-6", 6, "operations[0].tool"),
            ("L003", "e-6", 6, "operations[1].status"),
        ]
    );
    assert_eq!(d[0].message, "record has no `outcome`");
    assert!(
        d[1].message.contains("succeeded, pivoted, abandoned, failed"),
        "{}",
        d[1].message
    );
    assert!(d[1].message.contains("\"done\""), "{}", d[1].message);
    assert_eq!(
        d[4].message,
        "`domains` must be a string or a list of strings, found 42"
    );
    assert_eq!(
        d[2].message,
        "`effort` must be an integer from 1 to 5, found \"high\"; the field is ignored and the record kept"
    );
    assert_eq!(d[2].evidence["ignored"], true);
}

/// An agent that wrote a number for `task` or "yes" for `blessed` loses that field, not the
/// experience and its lesson; a record refused for a required field reports both problems.
#[test]
fn a_bad_optional_field_costs_only_the_field() {
    let text = [
        exp(
            "e-11",
            "2026-03-01T10:00:00Z",
            "python",
            "succeeded",
            json!({"task": 42, "blessed": "yes", "effort": 2.5, "lesson": "Pin urllib3<2 when the AWS SDK is on botocore 1.29."}),
        ),
        exp(
            "e-12",
            "2026-03-01T11:00:00Z",
            "python",
            "succeeded",
            json!({"breakthrough": ["a", "list"], "lesson": 7}),
        ),
        exp("e-13", "2026-03-01T12:00:00Z", "python", "finished", json!({"task": 42})),
    ]
    .join("\n");
    let (c, d) = texts(&[("agents.jsonl", &text)]);
    assert_eq!(ids(&c), ["e-11", "e-12"]);
    let e = &c.experiences[0];
    assert_eq!(
        (e.words.task.as_deref(), e.blessed, e.effort),
        (None, false, None)
    );
    assert_eq!(
        e.words.lesson.as_deref(),
        Some("Pin urllib3<2 when the AWS SDK is on botocore 1.29.")
    );
    let e = &c.experiences[1];
    assert_eq!(
        (e.words.lesson.as_deref(), e.words.breakthrough.as_deref()),
        (None, None)
    );
    let got: Vec<(&str, &str, &str)> = (d.iter())
        .map(|d| (d.code, d.subject.as_str(), d.evidence["field"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("L003", "e-11", "task"),
            ("L003", "e-11", "effort"),
            ("L003", "e-11", "blessed"),
            ("L003", "e-12", "lesson"),
            ("L003", "e-12", "breakthrough"),
            ("L003", "e-13", "outcome"),
            ("L003", "e-13", "task"),
        ],
        "{d:?}"
    );
}

#[test]
fn blank_optional_strings_are_absent_and_project_is_trimmed() {
    let text = exp(
        "e-1",
        "2026-03-01T10:00:00Z",
        "git",
        "succeeded",
        json!({"project": "  /home/dev/site  ", "lesson": "   ", "task": null, "gotchas": ["", "rebase drops empty commits"], "effort": 2}),
    );
    let (c, d) = texts(&[("a.jsonl", &text)]);
    assert!(d.is_empty(), "{d:?}");
    let e = &c.experiences[0];
    assert_eq!(e.project.as_deref(), Some("/home/dev/site"));
    assert_eq!(e.words.lesson, None);
    assert_eq!(e.words.task, None);
    assert_eq!(e.words.gotchas, ["rebase drops empty commits"]);
    assert_eq!(e.effort, Some(2));
}

#[test]
fn duplicate_id_across_files_keeps_the_first() {
    let a = [
        exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
        exp("shared", "2026-03-01T11:00:00Z", "python", "succeeded", json!({})),
    ]
    .join("\n");
    let b = "\
- id: shared
  recorded_at: 2026-03-09T10:00:00Z
  domains: rust
  outcome: failed
- type: lesson
  id: e-1
  recorded_at: 2026-03-09T10:00:00Z
  domains: python
  text: pin the interpreter version in CI
  kind: do
  source: user
";
    let (c, d) = texts(&[("a.jsonl", &a), ("b.yaml", b)]);
    assert_eq!(ids(&c), ["e-1", "shared"]);
    assert_eq!(c.experiences[1].domains, ["python"]);
    assert!(c.claims.is_empty());
    assert_eq!(
        codes_at(&d),
        [
            ("L004", "b.yaml".to_string(), 1),
            ("L004", "b.yaml".to_string(), 5)
        ]
    );
    assert_eq!(d[0].subject, "shared");
    assert!(d[0].message.contains("a.jsonl:2"), "{}", d[0].message);
    assert_eq!(d[1].evidence["first"], "a.jsonl:1");
}

#[test]
fn unknown_fields_are_reported_once_per_file_and_field() {
    let extra = json!({"session_id": "s-9", "operations": [{"tool": "read_file", "args": {"file_path": "src/main.rs"}, "duration_ms": 12}]});
    let a = [
        exp("e-1", "2026-03-01T10:00:00Z", "rust", "succeeded", extra.clone()),
        exp(
            "e-2",
            "2026-03-01T11:00:00Z",
            "rust",
            "succeeded",
            json!({"session_id": "s-9"}),
        ),
        exp("e-3", "2026-03-01T12:00:00Z", "rust", "succeeded", extra.clone()),
    ]
    .join("\n");
    let b = exp(
        "e-4",
        "2026-03-01T10:00:00Z",
        "rust",
        "succeeded",
        json!({"session_id": "s-1", "text": "x"}),
    );
    let (c, d) = texts(&[("a.jsonl", &a), ("b.jsonl", &b)]);
    assert_eq!(ids(&c), ["e-1", "e-2", "e-3", "e-4"]);
    let got: Vec<(&str, String, u32, &str, u64)> = d
        .iter()
        .map(|d| {
            (
                d.code,
                d.location.clone().unwrap().file.to_string(),
                d.location.as_ref().unwrap().line,
                d.evidence["field"].as_str().unwrap(),
                d.evidence["records"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("L005", "a.jsonl".into(), 1, "operations[].duration_ms", 2),
            ("L005", "a.jsonl".into(), 1, "session_id", 3),
            ("L005", "b.jsonl".into(), 1, "session_id", 1),
            ("L005", "b.jsonl".into(), 1, "text", 1),
        ]
    );
    assert_eq!(d[1].message, "unknown field `session_id` in 3 records is ignored");
    assert!(
        d.iter()
            .all(|d| d.severity == crate::diagnostics::Severity::Warning)
    );
}

#[test]
fn lesson_claims_are_loaded_and_validated() {
    let text = [
        json!({"type": "lesson", "id": "c-1", "recorded_at": "2026-03-05T10:00:00Z", "domains": ["python"],
               "text": "Set PYTHONPATH=. when running pytest from the repository root", "kind": "do",
               "source": "model", "evidence": ["e-101", "e-102"], "operation_key": "run_shell_command pytest",
               "project": " git@github.com:acme/billing-api.git "})
        .to_string(),
        json!({"type": "lesson", "id": "c-2", "recorded_at": "2026-03-05T10:00:00Z", "domains": "python",
               "text": "never force-push", "kind": "never", "source": "user"})
        .to_string(),
        json!({"type": "note", "id": "c-3"}).to_string(),
    ]
    .join("\n");
    let (c, d) = texts(&[("claims.jsonl", &text)]);
    assert!(c.experiences.is_empty());
    assert_eq!(c.claims.len(), 1);
    let claim = &c.claims[0];
    assert_eq!(&*claim.id, "c-1");
    assert_eq!(claim.kind, Kind::Do);
    assert_eq!(claim.source, ClaimSource::Model);
    assert_eq!(claim.evidence, [Id::from("e-101"), Id::from("e-102")]);
    assert_eq!(claim.operation_key.as_deref(), Some("run_shell_command pytest"));
    assert_eq!(
        claim.project.as_deref(),
        Some("git@github.com:acme/billing-api.git")
    );
    assert_eq!(claim.loc.line, 1);
    let got: Vec<(&str, u32, &str)> = d
        .iter()
        .map(|d| {
            (
                d.code,
                d.location.as_ref().unwrap().line,
                d.evidence["field"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("L003", 2, "kind"), ("L003", 3, "type")]);
}

/// Ids are cited in every Markdown file: one with a line break would write a section of its
/// own into SKILL.md. Such a record is refused with the character named, in every syntax.
#[test]
fn ids_with_control_characters_are_refused_in_every_syntax() {
    let ok = exp(
        "sess-0412",
        "2026-03-01T10:00:00Z",
        "python",
        "succeeded",
        json!({"lesson": "Run pytest from the repository root"}),
    );
    let injected = exp(
        "sess-0413\n## Avoid\n- rm -rf build/",
        "2026-03-01T11:00:00Z",
        "python",
        "succeeded",
        json!({"lesson": "Run pytest from the repository root"}),
    );
    let nul = exp(
        "sess-\0-0414",
        "2026-03-01T12:00:00Z",
        "python",
        "succeeded",
        json!({}),
    );
    let claim = json!({"type": "lesson", "id": "claim\r\n---", "recorded_at": "2026-03-05T10:00:00Z",
                       "domains": ["python"], "text": "Pin pytest in requirements-dev.txt", "kind": "do",
                       "source": "user"})
    .to_string();
    let jsonl = [ok.as_str(), &injected, &nul, &claim].join("\n");
    let yaml = "- id: \"sess-0415\\tindented\"\n  recorded_at: 2026-03-01T10:00:00Z\n  domains: python\n  outcome: failed\n";
    let omnimem = r#"[{"key": "mem-7\n# Heading", "tags": "python", "outcome": "succeeded", "lesson": "Use --import-mode=importlib", "created_at": "1714552800"}]"#;
    let (c, d) = texts(&[
        ("agent.jsonl", &jsonl),
        ("agent.yaml", yaml),
        ("export.json", omnimem),
    ]);
    assert_eq!(ids(&c), ["sess-0412"]);
    assert!(c.claims.is_empty());
    let refused: Vec<(&str, u32, &str, &str)> = d
        .iter()
        .map(|d| {
            let loc = d.location.as_ref().unwrap();
            (
                d.code,
                loc.line,
                d.evidence["field"].as_str().unwrap(),
                d.evidence["found"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            ("L003", 2, "id", "U+000A"),
            ("L003", 3, "id", "U+0000"),
            ("L003", 4, "id", "U+000D"),
            ("L003", 1, "id", "U+0009"),
            ("L003", 1, "key", "U+000A"),
        ]
    );
    // The subject shows the id escaped, as a terminal should print it.
    assert_eq!(d[0].subject, "sess-0413\\n## Avoid\\n- rm -rf build/");
}

#[test]
fn records_that_are_not_objects_are_malformed() {
    let text = "[1, 2]\n\"just a string\"\n";
    let (c, d) = texts(&[("odd.jsonl", text)]);
    assert!(ids(&c).is_empty());
    assert_eq!(
        codes_at(&d),
        [
            ("L001", "odd.jsonl".to_string(), 1),
            ("L001", "odd.jsonl".to_string(), 2)
        ]
    );
}

#[test]
fn skillc_generated_files_are_refused() {
    let dir = temp_dir("gen");
    write(
        &dir,
        "ledger.json",
        "{\n  \"generator\": \"skillc\",\n  \"version\": 1,\n  \"lessons\": []\n}\n",
    );
    write(
        &dir,
        "deltas.jsonl",
        "{\"generator\": \"skillc\", \"skill\": \"python\"}\n{\"id\": \"x\"}\n",
    );
    write(
        &dir,
        "real.jsonl",
        &exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
    );
    let mut sink = Sink::new();
    let c = load(std::slice::from_ref(&dir), &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(ids(&c), ["e-1"]);
    let got: Vec<(&str, String)> = sink.iter().map(|d| (d.code, d.subject.clone())).collect();
    assert_eq!(
        got,
        [
            ("L006", dir.join("deltas.jsonl").display().to_string()),
            ("L006", dir.join("ledger.json").display().to_string()),
        ]
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn directory_walk_is_sorted_and_skips_hidden_excluded_and_other_files() {
    let dir = temp_dir("walk");
    let rec = |id: &str| exp(id, "2026-03-01T10:00:00Z", "python", "succeeded", json!({}));
    write(&dir, "b.jsonl", &rec("b"));
    write(&dir, "a/c.yaml", &format!("- {}\n", rec("a-c")));
    write(&dir, "a/b/z.json", &format!("[{}]", rec("a-b-z")));
    write(&dir, ".hidden/x.jsonl", &rec("hidden-dir"));
    write(&dir, ".dot.jsonl", &rec("hidden-file"));
    write(&dir, "notes.txt", "not records");
    write(&dir, "README.md", "# records");
    write(&dir, "plain.db", "not sqlite");
    write(&dir, "skills-out/ledger.jsonl", &rec("output"));
    write(&dir, "memory.db", "SQLite format 3\0rest of the header");
    let opts = LoadOptions {
        from: None,
        exclude: vec![dir.join("skills-out")],
    };
    let mut sink = Sink::new();
    let c = load(std::slice::from_ref(&dir), &opts, &mut sink).unwrap();
    assert_eq!(ids(&c), ["a-b-z", "a-c", "b"]);
    assert_eq!(
        &*c.experiences[0].source.file,
        &*dir.join("a/b/z.json").display().to_string()
    );
    let got: Vec<&str> = sink.iter().map(|d| d.code).collect();
    assert_eq!(got, ["L011"], "{sink:?}");
    assert!(sink[0].message.contains("GAIA"));

    // Inputs are read in path order, whatever order they are given in; a file named twice
    // is read once.
    let mut sink = Sink::new();
    let inputs = [
        dir.join("b.jsonl"),
        dir.join("a"),
        dir.join("a/../b.jsonl"),
        dir.join("skills-out/ledger.jsonl"),
    ];
    let c = load(&inputs, &opts, &mut sink).unwrap();
    assert_eq!(ids(&c), ["a-b-z", "a-c", "b"]);
    let got: Vec<(&str, String)> = sink.iter().map(|d| (d.code, d.subject.clone())).collect();
    let out = dir.join("skills-out/ledger.jsonl").display().to_string();
    assert_eq!(got, [("L006", out)]);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn explicit_files_with_unknown_extensions_are_sniffed() {
    let dir = temp_dir("sniff");
    write(
        &dir,
        "records.txt",
        &exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
    );
    write(&dir, "notes.md", "# Some notes\n\nnothing here\n");
    let mut sink = Sink::new();
    let inputs = [dir.join("records.txt"), dir.join("notes.md")];
    let c = load(&inputs, &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(ids(&c), ["e-1"]);
    assert_eq!(sink.iter().map(|d| d.code).collect::<Vec<_>>(), ["L011"]);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn explicit_missing_path_is_an_error() {
    let dir = temp_dir("missing");
    let mut sink = Sink::new();
    let err = load(&[dir.join("nope.jsonl")], &LoadOptions::default(), &mut sink).unwrap_err();
    assert_eq!(err.path, dir.join("nope.jsonl"));
    assert!(err.to_string().contains("no such file"), "{err}");
    let _ = fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn non_utf8_file_in_a_directory_is_unreadable_not_fatal() {
    let dir = temp_dir("utf8");
    fs::write(dir.join("bad.yaml"), b"id: \xff\xfe\n").unwrap();
    fs::write(dir.join("archive.jsonl"), b"\x1f\x8b\x08\x00\x00\x00binary").unwrap();
    let bom = format!(
        "\u{feff}{}",
        exp("e-0", "2026-03-01T10:00:00Z", "python", "succeeded", json!({}))
    );
    write(&dir, "bom.jsonl", &bom);
    write(
        &dir,
        "good.jsonl",
        &exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
    );
    // A bad byte in the second line, well inside the first KiB: that line is lost, the
    // records around it are read.
    let mut torn = exp("e-2", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})).into_bytes();
    torn.extend_from_slice(b"\n{\"id\": \"e-3\", \"task\": \"\xff\x00\"}\n");
    torn.extend_from_slice(exp("e-4", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})).as_bytes());
    fs::write(dir.join("torn.jsonl"), torn).unwrap();
    let mut sink = Sink::new();
    let c = load(std::slice::from_ref(&dir), &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(ids(&c), ["e-0", "e-1", "e-2", "e-4"]);
    let got: Vec<(&str, String)> = sink.iter().map(|d| (d.code, d.subject.clone())).collect();
    let path = |f: &str| dir.join(f).display().to_string();
    assert_eq!(
        got,
        [
            ("L007", path("archive.jsonl")),
            ("L007", path("bad.yaml")),
            ("L001", path("torn.jsonl")),
        ]
    );
    assert_eq!(sink[2].location.as_ref().unwrap().line, 2);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn jsonl_blocks_keep_line_numbers_across_boundaries() {
    let dir = temp_dir("blocks");
    let mut lines = Vec::new();
    for i in 0..200 {
        if i % 37 == 5 {
            lines.push("{\"id\": broken".to_string());
        } else if i % 11 == 0 {
            lines.push(String::new());
        } else {
            lines.push(exp(
                &format!("e-{i}"),
                "2026-03-01T10:00:00Z",
                "python",
                "succeeded",
                pytest_ops(),
            ));
        }
    }
    let text = lines.join("\n");
    write(&dir, "big.jsonl", &text);
    for block in [100, 1000, 5000] {
        let mut sink = Sink::new();
        let c = load_blocks(
            &[dir.join("big.jsonl")],
            &LoadOptions::default(),
            None,
            &mut sink,
            block,
        )
        .unwrap();
        let (whole, whole_diags) = texts(&[("big.jsonl", &text)]);
        assert_eq!(c.experiences.len(), whole.experiences.len());
        for (e, w) in c.experiences.iter().zip(&whole.experiences) {
            assert_eq!((&e.id, e.source.line), (&w.id, w.source.line));
            let i: u32 = e.id[2..].parse().unwrap();
            assert_eq!(e.source.line, i + 1);
        }
        let bad: Vec<u32> = sink.iter().map(|d| d.location.as_ref().unwrap().line).collect();
        let expect: Vec<u32> = (0..200).filter(|i| i % 37 == 5).map(|i| i + 1).collect();
        assert_eq!(bad, expect);
        assert_eq!(whole_diags.len(), expect.len());
    }
    let _ = fs::remove_dir_all(dir);
}

/// Every record the fast path accepts must come out exactly as the reference validator
/// builds it, unknown fields included.
#[test]
fn fast_path_agrees_with_the_reference_validator() {
    let records = [
        exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", pytest_ops()),
        exp("e-2", "2026-03-01T10:00:00.5+01:00", "python", "failed", json!({
            "project": "  /srv/app ", "lesson": "Use uv sync before running tests", "breakthrough": "",
            "gotchas": "pip caches wheels", "dead_ends": ["poetry lock", {"name": "conda", "type": "tool", "reason": "slow", "extra": 1}],
            "in_play": ["L-1", " "], "blessed": true, "effort": 3.0, "type": "experience", "session": {"a": 1},
            "operations": [{"tool": "edit_file", "args": null, "status": null, "error": " ", "check": null, "meta": 1},
                           {"tool": "read_file", "check": {"label": "lint", "passed": false, "why": "x"}}],
        })),
        json!({"type": "lesson", "id": "c-1", "recorded_at": "2026-03-05", "domains": ["go", ""], "text": "t",
               "kind": "watch", "source": "extractor", "evidence": "e-1", "outcome": "failed", "task": "t"}).to_string(),
        json!({"id": "e-\u{e9}", "recorded_at": "2026-03-01 10:00:00", "domains": ["a\"b"], "outcome": "abandoned",
               "dead_ends": "give up", "text": "claim-only field"}).to_string(),
    ];
    for line in &records {
        let (rec, unknown) = fast::parse_slice(line.as_bytes(), &"f.jsonl".into(), 7).expect(line);
        let slow = json::slow_line(line.as_bytes(), &"f.jsonl".into(), 7, false);
        assert_eq!(unknown, slow.unknown, "{line}");
        match (json::item(rec), slow.item) {
            (Item::Experience(a), Item::Experience(b)) => assert_eq!(a, b),
            (Item::Claim(a), Item::Claim(b)) => assert_eq!(a, b),
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
    }
    // And it declines what it cannot take whole.
    for line in [
        exp("x", "2026-03-01T10:00:00Z", "py", "done", json!({})),
        exp("x", "2026-03-01T10:00:00Z", "py", "failed", json!({"effort": 6})),
        exp("x", "2026-03-01T10:00:00Z", "", "failed", json!({})),
        exp("", "2026-03-01T10:00:00Z", "py", "failed", json!({})),
        exp(
            "x",
            "2026-03-01T10:00:00Z",
            "py",
            "failed",
            json!({"operations": [{"tool": " "}]}),
        ),
        exp(
            "x",
            "2026-03-01T10:00:00Z",
            "py",
            "failed",
            json!({"operations": [{"tool": null}]}),
        ),
        exp(
            "x",
            "2026-03-01T10:00:00Z",
            "py",
            "failed",
            json!({"operations": [{"tool": 3}]}),
        ),
        exp(
            "x",
            "2026-03-01T10:00:00Z",
            "py",
            "failed",
            json!({"operations": [{"args": {}}]}),
        ),
        // Args that are not an object are the validator's to judge or parse.
        exp(
            "x",
            "2026-03-01T10:00:00Z",
            "py",
            "failed",
            json!({"operations": [{"tool": "run_shell_command", "args": "git status"}]}),
        ),
    ] {
        assert!(
            fast::parse_slice(line.as_bytes(), &"f".into(), 1).is_none(),
            "{line}"
        );
    }
}

/// A key given twice anywhere in a record refuses it on both paths: the fast path declines
/// it, the reference path reports it (the key, the object, the line of the second one).
#[test]
fn duplicate_keys_are_declined_by_the_fast_path_and_reported_by_the_validator() {
    let head =
        r#"{"id": "d-1", "recorded_at": "2026-03-01T10:00:00Z", "domains": ["python"], "outcome": "failed""#;
    let cases = [
        (r#", "outcome": "succeeded"}"#, "outcome", ""),
        (r#", "lesson": "a", "lesson": "b"}"#, "lesson", ""),
        (r#", "session": 1, "session": 2}"#, "session", ""),
        (r#", "meta": {"host": "ci-1", "host": "ci-2"}}"#, "host", "meta"),
        (
            r#", "operations": [{"tool": "read_file", "tool": "edit_file"}]}"#,
            "tool",
            "operations[0]",
        ),
        (
            r#", "operations": [{"tool": "t", "ms": 1, "ms": 2}]}"#,
            "ms",
            "operations[0]",
        ),
        (
            r#", "operations": [{"tool": "t", "args": {"a": {"b": 1, "b": 2}}}]}"#,
            "b",
            "operations[0].args.a",
        ),
        (
            r#", "operations": [{"tool": "t", "check": {"label": "x", "label": "y", "passed": true}}]}"#,
            "label",
            "operations[0].check",
        ),
        (
            r#", "dead_ends": [{"name": "a", "reason": "r", "reason": "s"}]}"#,
            "reason",
            "dead_ends[0]",
        ),
        (
            r#", "dead_ends": [{"name": "a", "why": 1, "why": 2}]}"#,
            "why",
            "dead_ends[0]",
        ),
        (r#", "outc\u006fme": "succeeded"}"#, "outcome", ""),
    ];
    for (tail, key, object) in cases {
        let line = format!("{head}{tail}");
        assert!(
            fast::parse_slice(line.as_bytes(), &"f.jsonl".into(), 3).is_none(),
            "{line}"
        );
        let slow = json::slow_line(line.as_bytes(), &"f.jsonl".into(), 3, false);
        let Item::Invalid(diags) = slow.item else {
            panic!("accepted: {line}")
        };
        assert_eq!(diags.len(), 1, "{diags:?}");
        let d = &diags[0];
        assert_eq!((d.code, d.location.as_ref().unwrap().line), ("L001", 3), "{line}");
        assert_eq!(d.evidence["key"], key, "{line}");
        assert_eq!(
            d.evidence.get("object").and_then(Value::as_str).unwrap_or(""),
            object,
            "{line}"
        );
        assert_eq!(d.subject, "d-1");
    }
    // The same key in different objects, or inside a string, is no duplicate.
    let line = format!(
        "{head}{}",
        r#", "operations": [{"tool": "t", "args": {"tool": "u", "cwd": "/a", "note": "\"cwd\": 1"}}, {"tool": "t", "args": {"cwd": "/a"}}]}"#
    );
    assert!(
        fast::parse_slice(line.as_bytes(), &"f.jsonl".into(), 1).is_some(),
        "{line}"
    );
}

/// The YAML fallback gives an aliased item the anchors of the items before it, and only those
/// that are read; a later anchor of the same name wins from there on, as in the document.
#[test]
fn yaml_items_parsed_one_by_one_keep_the_anchors_before_them() {
    let text = "\
- &svc
  id: y-1
  recorded_at: 2026-03-01T10:00:00Z
  domains: [docker]
  outcome: succeeded
- id: y-2
  recorded_at: 2026-03-01T11:00:00Z
  domains: [docker]
  outcome: succeeded
  lesson: \"use &svc-style anchors\"
- <<: *svc
  id: y-3
- &svc
  id: y-4
  recorded_at: 2026-03-02T10:00:00Z
  domains: [helm]
  outcome: failed
  outcome: failed
- <<: *svc
  id: y-5
- &db
  id: y-6
  recorded_at: 2026-03-03T10:00:00Z
  domains: [postgres]
  outcome: succeeded
- <<: *db
  id: y-7
  task: [unclosed
- <<: *db
  id: y-8
- <<: *svc
  id: y-9
";
    let (c, d) = texts(&[("svc.yaml", text)]);
    let got: Vec<(&str, &str, u32)> = c
        .experiences
        .iter()
        .map(|e| (&*e.id, e.domains[0].as_str(), e.source.line))
        .collect();
    // y-4 is broken, so its `&svc` is not there: y-5 and y-9 merge y-1's.
    assert_eq!(
        got,
        [
            ("y-1", "docker", 1),
            ("y-2", "docker", 6),
            ("y-3", "docker", 11),
            ("y-5", "docker", 19),
            ("y-6", "postgres", 21),
            ("y-8", "postgres", 29),
            ("y-9", "docker", 31),
        ],
        "{d:?}"
    );
    let errs: Vec<(&str, u32)> = d
        .iter()
        .map(|d| (d.code, d.location.as_ref().unwrap().line))
        .collect();
    // y-4's second `outcome` (line 18) and y-7's unclosed list.
    assert_eq!(errs, [("L001", 18), ("L001", 28)], "{d:?}");
    assert!(d[1].message.contains("flow sequence"), "{}", d[1].message);
}

#[test]
fn first_record_is_checked_for_the_skillc_mark_in_every_syntax() {
    let (c, d) = texts(&[
        ("a.yaml", "generator: skillc\nlessons: []\n"),
        ("b.json", "[{\"generator\": \"skillc\"}, {\"id\": 1}]"),
        (
            "c.jsonl",
            &exp(
                "e-1",
                "2026-03-01T10:00:00Z",
                "py",
                "failed",
                json!({"generator": "skillc"}),
            ),
        ),
    ]);
    assert!(c.experiences.is_empty());
    assert_eq!(
        d.iter().map(|d| d.code).collect::<Vec<_>>(),
        ["L006", "L006", "L006"]
    );
}

#[test]
fn duplicate_check_survives_hash_collisions() {
    let mut sink = Sink::new();
    let mut col = Collector::new(&mut sink, BLOCK, None);
    let rec = |id: &str, line| {
        let v: Value =
            serde_json::from_str(&exp(id, "2026-03-01T10:00:00Z", "py", "failed", json!({}))).unwrap();
        let loc = SourceLoc {
            file: "f.jsonl".into(),
            line,
        };
        match record::from_value(v, &loc, false).item {
            Item::Experience(e) => e,
            other => panic!("{other:?}"),
        }
    };
    // Two different ids forced onto one hash, then a true duplicate of each.
    for (id, line) in [("a", 1), ("b", 2), ("a", 3), ("b", 4)] {
        let e = rec(id, line);
        if col.fresh(
            &e.id,
            42,
            &e.source,
            &e.domains,
            (e.recorded_at, false),
            |_, _| false,
        ) {
            let i = col.corpus.experiences.len() as u32;
            col.remember(&e.id, 42, Kept::Experience(i));
            col.corpus.experiences.push(e);
        }
    }
    let kept: Vec<(String, u32)> = col
        .corpus
        .experiences
        .iter()
        .map(|e| (e.id.to_string(), e.source.line))
        .collect();
    assert_eq!(kept, [("a".to_string(), 1), ("b".to_string(), 2)]);
    let dups: Vec<(String, u32)> = sink
        .iter()
        .map(|d| {
            (
                d.evidence["first"].as_str().unwrap().to_string(),
                d.location.as_ref().unwrap().line,
            )
        })
        .collect();
    assert_eq!(dups, [("f.jsonl:1".to_string(), 3), ("f.jsonl:2".to_string(), 4)]);
}

#[test]
fn yaml_flow_lists_directives_and_end_markers() {
    let text = "\
%YAML 1.2
---
[{id: f-1, recorded_at: 2026-03-01, domains: css, outcome: succeeded},
 {id: f-2, recorded_at: 2026-03-02, domains: css, outcome: failed}]
...
---
# a commented record
id: f-3
recorded_at: 2026-03-03T00:00:00Z
domains: [css]
outcome: pivoted
...
";
    let (c, d) = texts(&[("style.yml", text)]);
    assert!(d.is_empty(), "{d:?}");
    let got: Vec<(&str, u32)> = c.experiences.iter().map(|e| (&*e.id, e.source.line)).collect();
    assert_eq!(got, [("f-1", 3), ("f-2", 3), ("f-3", 8)]);
}

/// An OmniMem memory as an export writes it (values as strings), with `extra` fields over it.
fn memory(key: &str, tags: &str, created_at: &str, lesson: &str, extra: Value) -> Value {
    let mut v = json!({
        "key": key, "tags": tags, "project": "https://github.com/acme/kctl", "outcome": "succeeded",
        "created_at": created_at, "effort_score": "3", "blessed": "0", "state": "active", "lesson": lesson,
    });
    if let Value::Object(extra) = extra {
        v.as_object_mut().unwrap().extend(extra);
    }
    v
}

fn memories(ms: &[Value], lines: bool) -> String {
    if lines {
        ms.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
    } else {
        serde_json::to_string_pretty(&Value::from(ms.to_vec())).unwrap()
    }
}

/// The format is decided from the first memories, not the first alone: an export whose first
/// memory has no tags and an RFC 3339 `created_at` (nothing only OmniMem writes) is still read
/// as OmniMem, so that memory is refused for its missing tags and the others load. A native
/// file stays native with one memory-like record in it; a memory read as native (`--from
/// native`) is told to use `--from omnimem`.
#[test]
fn omnimem_export_is_recognised_from_its_first_memories() {
    let first = json!({"key": "mem-iso-3", "project": "git@github.com:acme/orders-api.git",
        "outcome": "succeeded", "created_at": "2026-01-03T09:12:00Z",
        "lesson": "Run manage.py migrate --plan before applying migrations in production"});
    let rest = [
        memory(
            "mem-go-vet-1",
            "[\"go\"]",
            "2026-01-04T10:00:00Z",
            "Run go vet in CI before go test",
            json!({}),
        ),
        memory(
            "mem-go-vet-2",
            "go, ci",
            "1767517200",
            "Run go vet before go test in CI",
            json!({}),
        ),
    ];
    let export: Vec<Value> = [first].into_iter().chain(rest).collect();
    for lines in [false, true] {
        let text = memories(&export, lines);
        let (c, diags) = texts(&[("omnimem-export.json", &text)]);
        assert_eq!(
            ids(&c),
            ["mem-go-vet-1", "mem-go-vet-2"],
            "lines={lines} {diags:#?}"
        );
        let got: Vec<(&str, &str, &Value)> = diags
            .iter()
            .map(|d| (d.code, &*d.subject, &d.evidence["field"]))
            .collect();
        assert_eq!(got, [("L002", "mem-iso-3", &json!("tags"))], "lines={lines}");
    }

    // Native records with one memory-like record among them stay native.
    let native = [
        exp("e-1", "2026-03-01T10:00:00Z", "python", "succeeded", json!({})),
        memories(
            &[memory("mem-1", "[\"go\"]", "1767517200", "Run go vet", json!({}))],
            true,
        ),
        exp("e-2", "2026-03-02T10:00:00Z", "python", "succeeded", json!({})),
    ]
    .join("\n");
    let (c, _) = texts(&[("agent.jsonl", &native)]);
    assert_eq!(ids(&c), ["e-1", "e-2"]);

    // Read as native, a memory's missing id says how to read it.
    let mut sink = Sink::new();
    let opts = LoadOptions {
        from: Some(Format::Native),
        ..LoadOptions::default()
    };
    load_texts(
        &[("omnimem-export.json", &memories(&export, false))],
        &opts,
        &mut sink,
    );
    let no_id: Vec<&Diagnostic> = (sink.iter())
        .filter(|d| d.code == "L002" && d.evidence["field"] == json!("id"))
        .collect();
    assert_eq!(no_id.len(), 3, "{sink:#?}");
    assert!(
        no_id.iter().all(|d| d.help.contains("--from omnimem")),
        "{no_id:#?}"
    );
}

/// OmniMem values that cannot be read are reported, never dropped in silence: a bad effort
/// score or a state that is not a string costs the field (an L003 that keeps the memory: no
/// state reads as active); a unix time of 1970 or before and a tags list cut short are
/// refusals (the list is not split on its commas into `["django"` and `"pyth`).
#[test]
fn bad_omnimem_values_are_reported() {
    let lesson = "Use select_related for foreign keys shown in Django admin list views";
    let export = [
        memory(
            "mem-effort-words",
            "[\"django\"]",
            "1767258000",
            lesson,
            json!({"effort_score": "very high"}),
        ),
        memory(
            "mem-effort-zero",
            "[\"django\"]",
            "1767344400",
            lesson,
            json!({"effort_score": "0"}),
        ),
        memory(
            "mem-state-number",
            "[\"django\"]",
            "1767430800",
            lesson,
            json!({"state": 0}),
        ),
        memory(
            "mem-negative-time",
            "[\"go\"]",
            "-5",
            "Use t.Setenv in Go tests",
            json!({}),
        ),
        memory(
            "mem-zero-time",
            "[\"go\"]",
            "1",
            "Use t.Setenv in Go tests",
            json!({"created_at": 0}),
        ),
        memory(
            "mem-cut-tags",
            "[\"django\", \"pyth",
            "1767517200",
            lesson,
            json!({}),
        ),
        memory(
            "mem-comma-tags",
            "django, python",
            "1767603600",
            lesson,
            json!({}),
        ),
    ];
    let (c, diags) = texts(&[("omnimem-export.json", &memories(&export, false))]);
    assert_eq!(
        ids(&c),
        [
            "mem-effort-words",
            "mem-effort-zero",
            "mem-state-number",
            "mem-comma-tags"
        ],
        "{diags:#?}"
    );
    assert!(c.experiences[..2].iter().all(|e| e.effort.is_none()));
    assert_eq!(c.experiences[3].domains, ["django", "python"]);
    let got: Vec<(&str, &str, &Value, bool)> = (diags.iter())
        .map(|d| {
            (
                d.code,
                &*d.subject,
                &d.evidence["field"],
                d.evidence.get("ignored").is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("L003", "mem-effort-words", &json!("effort_score"), true),
            ("L003", "mem-effort-zero", &json!("effort_score"), true),
            ("L003", "mem-state-number", &json!("state"), true),
            ("L003", "mem-negative-time", &json!("created_at"), false),
            ("L003", "mem-zero-time", &json!("created_at"), false),
            ("L003", "mem-cut-tags", &json!("tags"), false),
        ]
    );
    // The refused memories name their domains (`why go` counts them); the cut list names none.
    assert_eq!(diags[3].evidence["domains"], json!(["go"]));
    assert!(diags[5].evidence.get("domains").is_none());
}

/// `updated_at` stands in for an absent `created_at` only: beside a valid `created_at` a
/// garbage one is not read; beside a bad `created_at` it rescues nothing.
#[test]
fn omnimem_updated_at_is_read_only_without_created_at() {
    let lesson = "Use go vet before go test";
    let export = [
        memory(
            "e-garbage-update",
            "[\"go\"]",
            "1767225600",
            lesson,
            json!({"updated_at": "garbage"}),
        ),
        memory(
            "e-only-update",
            "[\"go\"]",
            "",
            lesson,
            json!({"updated_at": 1767312000}),
        ),
        memory(
            "e-bad-only-update",
            "[\"go\"]",
            "",
            lesson,
            json!({"updated_at": "garbage"}),
        ),
        memory(
            "e-bad-created",
            "[\"go\"]",
            "yesterday",
            lesson,
            json!({"updated_at": 1767312000}),
        ),
    ];
    let (c, diags) = texts(&[("omni.json", &memories(&export, false))]);
    assert_eq!(ids(&c), ["e-garbage-update", "e-only-update"], "{diags:#?}");
    assert_eq!(c.experiences[0].recorded_at, 1_767_225_600_000);
    assert_eq!(c.experiences[1].recorded_at, 1_767_312_000_000);
    let got: Vec<(&str, &str, &Value)> = diags
        .iter()
        .map(|d| (d.code, &*d.subject, &d.evidence["field"]))
        .collect();
    assert_eq!(
        got,
        [
            ("L003", "e-bad-only-update", &json!("updated_at")),
            ("L003", "e-bad-created", &json!("created_at")),
        ]
    );
}

/// `--from omnimem` on a SQLite file says it is a database and points at `--from gaia`
/// (not "not UTF-8 text"); a memory's missing field is told in OmniMem's field names.
#[test]
fn omnimem_diagnostics_speak_of_omnimem() {
    let dir = temp_dir("omnimem-sqlite");
    let db = dir.join("memory.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE tool_history (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL);")
        .unwrap();
    drop(conn);
    let opts = LoadOptions {
        from: Some(Format::Omnimem),
        ..LoadOptions::default()
    };
    let mut sink = Sink::new();
    load(std::slice::from_ref(&db), &opts, &mut sink).unwrap();
    let got: Vec<(&str, &str)> = sink.iter().map(|d| (d.code, d.message.as_str())).collect();
    assert_eq!(
        got,
        [("L011", "file is a SQLite database, not an OmniMem export (JSON)")]
    );
    assert!(sink[0].help.contains("--from gaia"), "{}", sink[0].help);
    let _ = fs::remove_dir_all(dir);

    let no_outcome =
        json!([{"key": "mem-1", "tags": ["go"], "created_at": "1767225600", "lesson": "Run go vet"}]);
    let (_, diags) = texts(&[("export.json", &no_outcome.to_string())]);
    assert_eq!(diags[0].code, "L002");
    assert!(
        diags[0].help.contains("key, tags, outcome and created_at"),
        "{}",
        diags[0].help
    );
}

/// Nightly snapshots of one store: every memory again each night. The records that repeat an
/// earlier file's records word for word fold into one L004 per repeating file (counting them,
/// per domain too, for `why`); a lone repeat keeps its own; a record whose content changed
/// under the same id and recorded_at is the memory edited: the first version is kept, and the
/// later one is an error of its own that says so.
#[test]
fn repeats_of_earlier_files_fold_into_one_duplicate_per_repeating_file() {
    let night = |lesson: &str| {
        [
            exp("ci-npm-01", "2026-03-01T10:00:00Z", "node", "succeeded",
                json!({"lesson": "Use npm ci instead of npm install in CI so the lockfile is respected"})),
            exp("ci-tf-02", "2026-03-01T11:00:00+01:00", "terraform", "succeeded",
                json!({"lesson": lesson, "project": "git@github.com:acme/infra.git"})),
            exp("ci-py-03", "2026-03-02T09:00:00Z", "python", "failed",
                json!({"gotchas": ["pytest -x stops at the first failure, so the report hides the rest"], "operations": pytest_ops()["operations"]})),
            exp("ci-py-04", "2026-03-02T10:00:00Z", "py", "succeeded",
                json!({"lesson": "Run ruff check --fix before ruff format"})),
        ]
        .join("\n")
    };
    let first = night("Pass -lock-timeout=60s to terraform plan when CI jobs share a state backend");
    let edited = night("Pass -lock-timeout=120s to terraform plan when CI jobs share a state backend");
    let lone = exp(
        "ci-npm-01",
        "2026-03-01T10:00:00Z",
        "node",
        "succeeded",
        json!({"lesson": "Use npm ci instead of npm install in CI so the lockfile is respected"}),
    );
    let (c, d) = texts(&[
        ("n1.jsonl", &first),
        ("n2.jsonl", &first),
        ("n3.jsonl", &edited),
        ("n4.jsonl", &lone),
    ]);
    assert_eq!(ids(&c), ["ci-npm-01", "ci-tf-02", "ci-py-03", "ci-py-04"]);
    let l004: Vec<&Diagnostic> = d.iter().filter(|d| d.code == codes::DUPLICATE_ID).collect();
    assert_eq!(
        codes_at(&d),
        [
            ("L004", "n2.jsonl".to_string(), 1),
            ("L004", "n3.jsonl".to_string(), 2),
            ("L004", "n3.jsonl".to_string(), 1),
            ("L004", "n4.jsonl".to_string(), 1)
        ],
        "{d:#?}"
    );
    // n2 repeats all four records of n1: one diagnostic that counts them.
    let all = l004[0];
    assert_eq!(all.subject, "n2.jsonl");
    assert_eq!(all.evidence["records"], 4);
    assert_eq!(all.evidence["first"], "n1.jsonl");
    assert_eq!(
        all.evidence["ids"],
        json!(["ci-npm-01", "ci-tf-02", "ci-py-03", "ci-py-04"])
    );
    assert_eq!(
        all.evidence["domain_records"],
        json!({"node": 1, "py": 1, "python": 1, "terraform": 1})
    );
    assert!(
        all.message.starts_with("4 records repeat records of n1.jsonl"),
        "{}",
        all.message
    );
    assert_eq!(all.help, REPEAT_HELP);
    // n3 changed one lesson (the same id and recorded_at): the memory was edited between the
    // snapshots; the first version is kept (DESIGN §3.1), and n3's is an error on its own that
    // says so; the other three fold.
    let (edit, rest) = (l004[1], l004[2]);
    assert_eq!(edit.subject, "ci-tf-02");
    assert_eq!(edit.help, VERSION_HELP);
    assert_eq!(edit.severity, Severity::Error);
    assert_eq!(edit.evidence["first"], "n1.jsonl:2");
    let tf = &c.experiences[1];
    assert_eq!((&*tf.source.file, tf.source.line), ("n1.jsonl", 2));
    assert!(tf.words.lesson.as_deref().unwrap().contains("60s"));
    assert!(
        (l004.iter().filter(|d| d.subject != "ci-tf-02")).all(|d| d.severity == Severity::Warning),
        "{l004:#?}"
    );
    assert_eq!(rest.evidence["records"], 3);
    assert_eq!(
        rest.evidence["domain_records"],
        json!({"node": 1, "py": 1, "python": 1})
    );
    // A single repeat is told as one record, with the repeat's help.
    let single = l004[3];
    assert_eq!(single.subject, "ci-npm-01");
    assert!(
        single.message.contains("with the same content"),
        "{}",
        single.message
    );
    assert_eq!(single.evidence.get("records"), None);
    assert_eq!(single.help, REPEAT_HELP);
}

/// Python's json.dumps writes `NaN`, `Infinity` and `-Infinity` for floats that are not
/// finite. A record holding one is read with null in its place and an L003 naming the field
/// (and the record); in a JSON array the records after it are read too.
#[test]
fn python_nan_and_infinity_are_read_as_null_with_the_field_named() {
    let line = r#"{"id": "agent-py-0412", "recorded_at": "2026-03-04T10:00:00Z", "domains": ["python"], "outcome": "succeeded", "effort": NaN, "lesson": "Run pytest -p no:cacheprovider in read-only CI containers", "operations": [{"tool": "run_shell_command", "args": {"command": "pytest -q", "timeout": Infinity, "note": "NaN, Infinity"}, "status": "ok"}]}"#;
    let plain = exp(
        "agent-py-0413",
        "2026-03-05T10:00:00Z",
        "rust",
        "failed",
        json!({}),
    );
    let jsonl = format!("{plain}\n{line}\n");
    let (c, d) = texts(&[("py-agent.jsonl", &jsonl)]);
    assert_eq!(ids(&c), ["agent-py-0413", "agent-py-0412"]);
    let e = &c.experiences[1];
    assert_eq!(e.effort, None);
    assert_eq!(e.operations.len(), 1);
    let fields: Vec<(&str, &str, u32, &Value, &Value)> = d
        .iter()
        .map(|d| {
            (
                d.code,
                d.subject.as_str(),
                d.location.as_ref().unwrap().line,
                &d.evidence["field"],
                &d.evidence["found"],
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("L003", "agent-py-0412", 2, &json!("effort"), &json!("NaN")),
            (
                "L003",
                "agent-py-0412",
                2,
                &json!("operations[0].args.timeout"),
                &json!("Infinity")
            ),
        ]
    );
    assert!(
        d[0].message.starts_with("`effort` is NaN, which is not json"),
        "{}",
        d[0].message
    );
    assert!(d[0].help.contains("allow_nan=False"), "{}", d[0].help);

    // json.dump of a list, pretty-printed: the record after the one with -Infinity loads.
    let doc = r#"[
  {"id": "tf-0301", "recorded_at": "2026-03-01T10:00:00Z", "domains": ["terraform"], "outcome": "failed",
   "gotchas": ["terraform plan -refresh=false hides drift"], "effort": -Infinity},
  {"id": "tf-0302", "recorded_at": "2026-03-02T10:00:00Z", "domains": ["terraform"], "outcome": "succeeded",
   "lesson": "Pass -lock-timeout=60s to terraform plan when CI jobs share a state backend"}
]"#;
    let (c, d) = texts(&[("export.json", doc)]);
    assert_eq!(ids(&c), ["tf-0301", "tf-0302"]);
    assert_eq!(codes_at(&d), [("L003", "export.json".to_string(), 3)]);
    assert_eq!(d[0].subject, "tf-0301");
    assert_eq!(d[0].evidence["field"], "effort");
}

/// An OmniMem export written by Python with `NaN` in a memory's `effort_score` is still an
/// OmniMem export: its memories load, the `NaN` said on the memory that holds it.
#[test]
fn an_omnimem_export_with_python_nan_is_still_recognised() {
    let doc = r#"[
  {"key": "mem-0412", "tags": ["python"], "outcome": "succeeded", "effort_score": NaN,
   "lesson": "Run pytest with --import-mode=importlib when test modules share a name", "created_at": 1772618400},
  {"key": "mem-0413", "tags": ["python"], "outcome": "succeeded", "effort_score": 2,
   "lesson": "Run pytest with --import-mode=importlib when test modules share names", "created_at": 1772704800}
]"#;
    let jsonl = doc
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split("},\n")
        .map(|r| format!("{} ", r.trim().replace('\n', " ").trim_end_matches('}')) + "}")
        .collect::<Vec<_>>()
        .join("\n");
    for (name, text) in [("memories.json", doc.to_string()), ("memories.jsonl", jsonl)] {
        let (c, d) = texts(&[(name, &text)]);
        assert_eq!(ids(&c), ["mem-0412", "mem-0413"], "{name}: {d:#?}");
        assert_eq!(d.len(), 1, "{name}: {d:#?}");
        assert_eq!((d[0].code, d[0].subject.as_str()), ("L003", "mem-0412"), "{name}");
        assert_eq!(d[0].evidence["field"], "effort_score", "{name}");
    }
}
