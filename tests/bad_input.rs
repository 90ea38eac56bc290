//! Bad input never panics (DESIGN: it becomes a diagnostic with file and line, and the run goes
//! on). The sample corpus's records, damaged the ways hand-edited and half-written memory files
//! are — a field given a value of another type, a key dropped, a list grown or emptied, a
//! timestamp out of range, a line cut short or given a stray quote — are loaded, compiled,
//! rendered and explained per domain. A seeded generator makes every run damage the same way.

mod common;

use serde_json::{Value, json};
use skillc::diagnostics::Sink;
use skillc::load::{LoadOptions, load_texts};
use skillc::policy::Rules;
use skillc::{emit, pipeline, report, samples};

/// xorshift64*: deterministic, and enough to pick damage.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Values that turn up where they do not belong.
fn odd_value(rng: &mut Rng) -> Value {
    let long = "flaky ".repeat(4_000);
    let values = [
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5e308),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!(" \t "),
        json!("\u{0}"),
        json!("\u{202e}reversed"),
        json!("e\u{301}".repeat(40)),
        json!(long),
        json!("🙂".repeat(300)),
        json!([]),
        json!({}),
        json!([[[[[]]]]]),
        json!({"a": {"b": [1, {"c": null}]}}),
        json!(["python", 3, null]),
        json!("2026-13-45T99:99:99Z"),
        json!("1970-01-01T00:00:00Z"),
        json!("9999-12-31T23:59:59Z"),
        json!("-0001-01-01T00:00:00Z"),
        json!("2026-02-30"),
        json!("../../etc/passwd"),
        json!("succeeded"),
        json!("failed"),
        json!("error"),
    ];
    values[rng.below(values.len())].clone()
}

/// Damages one place in `v`: a key dropped or given an odd value, a list item dropped, doubled
/// or replaced, a string cut or repeated.
fn damage(v: &mut Value, rng: &mut Rng) {
    match v {
        Value::Object(map) if !map.is_empty() && rng.chance(75) => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap();
            if rng.chance(15) {
                map.remove(&key);
            } else {
                damage(map.get_mut(&key).unwrap(), rng);
            }
        }
        Value::Array(items) if !items.is_empty() && rng.chance(75) => {
            let i = rng.below(items.len());
            match rng.below(5) {
                0 => drop(items.remove(i)),
                1 => items.push(items[i].clone()),
                _ => damage(&mut items[i], rng),
            }
        }
        Value::String(s) if !s.is_empty() && rng.chance(50) => {
            let cut = s
                .char_indices()
                .map(|(i, _)| i)
                .nth(rng.below(s.chars().count()))
                .unwrap();
            *s = if rng.chance(50) {
                s[..cut].to_string()
            } else {
                s.repeat(2 + rng.below(20))
            };
        }
        _ => *v = odd_value(rng),
    }
}

/// Text damage a line gets when a file is edited by hand or written halfway: cut short, or a
/// stray quote, brace or control character put in.
fn damage_line(line: &str, rng: &mut Rng) -> String {
    let bounds: Vec<usize> = line.char_indices().map(|(i, _)| i).collect();
    let at = bounds[rng.below(bounds.len())];
    if rng.chance(40) {
        return line[..at].to_string();
    }
    let stray = ["\"", "{", "}", ",", "\u{feff}", "\r", "\u{0}", "\\"];
    format!("{}{}{}", &line[..at], stray[rng.below(stray.len())], &line[at..])
}

/// The samples' JSON Lines records.
fn sample_records() -> Vec<Value> {
    (samples::FILES.iter())
        .filter(|(name, _)| name.ends_with(".jsonl"))
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[test]
fn damaged_records_compile_render_and_explain_and_every_broken_line_is_named() {
    let rules = Rules::builtin();
    let records = sample_records();
    assert!(records.len() > 30, "{} sample records", records.len());
    let mut reported_lines = 0;
    for round in 0..40u64 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (round + 1).wrapping_mul(0x1000_0000_01b3));
        let mut broken = Vec::new();
        let lines: Vec<String> = (0..30)
            .map(|n| {
                let mut r = records[rng.below(records.len())].clone();
                for _ in 0..rng.below(4) {
                    damage(&mut r, &mut rng);
                }
                let line = r.to_string();
                if rng.chance(10) {
                    let damaged = damage_line(&line, &mut rng);
                    // A line cut to nothing is a blank line, which JSON Lines skips.
                    if !damaged.trim().is_empty() && serde_json::from_str::<Value>(&damaged).is_err() {
                        broken.push(n as u32 + 1);
                    }
                    damaged
                } else {
                    line
                }
            })
            .collect();
        let text = lines.join("\n");
        let mut sink = Sink::new();
        let corpus = load_texts(&[("damaged.jsonl", &text)], &LoadOptions::default(), &mut sink);
        // Every line that is no JSON at all is a diagnostic naming the file and that line.
        for &line in &broken {
            let named = sink.iter().any(|d| {
                d.location
                    .as_ref()
                    .is_some_and(|l| &*l.file == "damaged.jsonl" && l.line == line)
            });
            assert!(
                named,
                "round {round}: line {line} is broken and no diagnostic names it: {:?}\n{:#?}",
                lines[line as usize - 1],
                sink.iter()
                    .map(|d| (d.code, &d.message, &d.location))
                    .collect::<Vec<_>>()
            );
            reported_lines += 1;
        }
        let comp = pipeline::compile(corpus, sink, &rules, &pipeline::Options::default());
        let ledger = emit::ledger_file(&comp.lessons);
        let files = emit::render(&comp, &rules, &mut Sink::new());
        let texts = std::iter::once(&ledger).chain(&files);
        // What is written as JSON reads back as JSON, whatever the damage held.
        for f in texts.filter(|f| f.path.ends_with(".json")) {
            let parsed = serde_json::from_str::<Value>(&f.text());
            assert!(
                parsed.is_ok(),
                "round {round}: {} is not JSON: {parsed:?}",
                f.path
            );
        }
        let mut domains: Vec<&str> = comp.candidates.iter().map(|c| comp.names.get(c.domain)).collect();
        domains.sort_unstable();
        domains.dedup();
        for d in domains.into_iter().chain(["python", "no-such-domain"]) {
            report::why_text(&report::why(&comp, &rules, d, &Default::default()));
        }
    }
    // The damage reached the loader's line checks, not only values it accepts.
    assert!(
        reported_lines > 20,
        "only {reported_lines} broken lines in 40 rounds"
    );
}

/// `--out` naming a file (`--out ledger.json`, meaning where the ledger goes) is a usage error
/// that says the output is a directory, and the file is left as it was; it used to be
/// "ledger.json/.skillc: Not a directory (os error 20)".
#[test]
fn out_naming_a_file_is_a_usage_error_that_says_so() {
    let dir = common::Scratch::new("out-is-a-file");
    let input = dir.path("agents.jsonl");
    let record = json!({"id": "ci-0101-npm", "recorded_at": "2026-01-01T09:00:00Z", "domains": ["node"],
                        "outcome": "succeeded", "lesson": "Use npm ci in CI so installs follow the lockfile"});
    std::fs::write(&input, format!("{record}\n")).unwrap();
    let ledger = dir.path("ledger.json");
    std::fs::write(&ledger, "{\"lessons\": []}\n").unwrap();
    let o = common::compile_to(&input, &ledger, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(
        err.contains(&format!("--out {} is a file, not a directory", ledger.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), "{\"lessons\": []}\n");
}
