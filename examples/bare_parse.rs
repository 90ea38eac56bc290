//! The physical floor for the benchmark: a bare, typed serde_json parse of a native JSONL corpus
//! into plain structs, in parallel over lines (rayon, all threads), with no validation.
//!
//! `cargo run --release --example bare_parse -- corpus.jsonl` prints the seconds it took.

use rayon::prelude::*;
use serde::Deserialize;

#[allow(dead_code)]
#[derive(Deserialize)]
struct Op {
    tool: String,
    #[serde(default)]
    args: serde_json::Value,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct Record {
    id: Option<String>,
    recorded_at: Option<String>,
    #[serde(default)]
    domains: serde_json::Value,
    project: Option<String>,
    outcome: Option<String>,
    lesson: Option<String>,
    breakthrough: Option<String>,
    #[serde(default)]
    gotchas: serde_json::Value,
    #[serde(default)]
    operations: Vec<Op>,
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: bare_parse FILE");
    let start = std::time::Instant::now();
    let text = std::fs::read_to_string(&path).expect("readable corpus");
    let lines: Vec<&str> = text.lines().collect();
    let parsed = lines
        .par_iter()
        .filter(|l| serde_json::from_str::<Record>(l).is_ok())
        .count();
    println!("{:.3}", start.elapsed().as_secs_f64());
    eprintln!("{parsed} of {} lines parsed", lines.len());
}
