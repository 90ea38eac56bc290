//! Load through the public API, and a timing harness for the JSONL path (ignored by default:
//! `cargo test --release --test load -- --ignored --nocapture`, `SKILLC_BENCH_N` records).

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use skillc::diagnostics::Sink;
use skillc::load::{LoadOptions, load, load_texts};

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
