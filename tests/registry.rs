//! Meta-tests of the diagnostic registry, its pages and `explain` / `codes` (DESIGN §8).

use std::collections::BTreeSet;

use regex::Regex;
use skillc::diagnostics::registry::{CODES, by_name, lookup, stage_rank};
use skillc::diagnostics::{Diagnostic, Severity, pages};
use skillc::explain::{codes_json, codes_text, explain_json, explain_text, resolve};
use skillc::policy::Rules;

const SECTIONS: [&str; 4] = [
    "What it means",
    "Why it blocks compilation",
    "Example",
    "How to fix",
];

/// Policy keys that live in `rules/narrative.yaml`, answered by `Narrative::value_of`; the
/// narrative stage may not define them yet.
const NARRATIVE_KEYS: [&str; 1] = ["narrative.threshold"];

fn page_of(code: &str) -> &'static str {
    pages::page(code).unwrap_or_else(|| panic!("{code} has no page"))
}

/// (heading, body) pairs of a page's `## ` sections, ignoring lines inside code fences.
fn sections(page: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_fence = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if !in_fence && let Some(h) = line.strip_prefix("## ") {
            out.push((h.to_string(), String::new()));
            continue;
        }
        if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// Fenced blocks of a page as (info string, content).
fn fences(page: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in page.lines() {
        if let Some(info) = line.strip_prefix("```") {
            match cur.take() {
                Some(block) => out.push(block),
                None => cur = Some((info.trim().to_string(), String::new())),
            }
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    assert!(cur.is_none(), "unclosed code fence");
    out
}

#[test]
fn codes_are_unique_and_sorted_by_stage_then_number() {
    let mut seen = BTreeSet::new();
    for c in CODES {
        assert!(seen.insert(c.code), "{} is registered twice", c.code);
    }
    for w in CODES.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            (stage_rank(a.code), a.code) < (stage_rank(b.code), b.code),
            "{} must come after {}",
            a.code,
            b.code
        );
    }
    for c in CODES {
        assert_eq!(lookup(c.code).map(|i| i.code), Some(c.code));
        assert_eq!(by_name(c.name).map(|i| i.code), Some(c.code));
    }
    for unknown in ["G999", "G00", "G0011", "g001", ""] {
        assert!(lookup(unknown).is_none(), "{unknown}");
    }
}

#[test]
fn codes_are_a_stage_letter_and_three_digits() {
    let re = Regex::new(r"^[LNOKCGSEUW][0-9]{3}$").unwrap();
    for c in CODES {
        assert!(re.is_match(c.code), "bad code {}", c.code);
        assert_ne!(&c.code[1..], "000", "{}: numbering starts at 001", c.code);
    }
}

#[test]
fn names_are_unique_kebab_case() {
    let re = Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap();
    let mut seen = BTreeSet::new();
    for c in CODES {
        assert!(
            re.is_match(c.name),
            "{}: name {:?} is not kebab-case",
            c.code,
            c.name
        );
        assert!(seen.insert(c.name), "name {} is used twice", c.name);
    }
}

#[test]
fn summaries_and_help_are_lower_case_first_without_a_trailing_period() {
    for c in CODES {
        for (what, text) in [("summary", c.summary), ("help", c.help)] {
            let first = text
                .chars()
                .next()
                .unwrap_or_else(|| panic!("{}: empty {what}", c.code));
            assert!(
                !first.is_uppercase(),
                "{}: {what} starts upper-case: {text:?}",
                c.code
            );
            assert!(!text.ends_with('.'), "{}: {what} ends with a period", c.code);
            assert_eq!(text, text.trim(), "{}: {what} has outer whitespace", c.code);
            assert!(!text.contains('\n'), "{}: {what} is not one line", c.code);
        }
    }
}

#[test]
fn folded_codes_are_notes() {
    for c in CODES.iter().filter(|c| c.fold_notes) {
        assert_eq!(c.severity, Severity::Note, "{}: only notes fold", c.code);
    }
}

#[test]
fn every_code_makes_a_diagnostic() {
    for c in CODES {
        let d = Diagnostic::new(c.code, "x");
        assert_eq!(d.name(), c.name);
        assert_eq!(d.help, c.help);
    }
}

#[test]
fn names_required_by_the_issue_exist() {
    for (code, name) in [
        ("G002", "narrative-candidate"),
        ("G003", "below-reinforcement"),
        ("G001", "outcome-gate"),
        ("N002", "credential-refused"),
        ("N001", "invalid-domain"),
        ("L001", "malformed-record"),
        ("L004", "duplicate-id"),
        ("G005", "fabricated-evidence"),
    ] {
        let info = by_name(name).unwrap_or_else(|| panic!("no code named {name}"));
        assert_eq!(info.code, code, "{name}");
    }
}

#[test]
fn every_code_has_a_page_with_the_four_sections_in_order() {
    for c in CODES {
        let page = page_of(c.code);
        let title = page.lines().next().unwrap_or_default();
        assert_eq!(title, format!("# {} {}", c.code, c.name), "{}: title", c.code);
        let secs = sections(page);
        let headings: Vec<&str> = secs.iter().map(|(h, _)| h.as_str()).collect();
        assert_eq!(headings, SECTIONS, "{}: sections", c.code);
        for (h, body) in &secs {
            assert!(!body.trim().is_empty(), "{}: section {h:?} is empty", c.code);
        }
        assert!(!page.contains("TODO"), "{}: page has a TODO left in it", c.code);
        // No `# ` heading other than the title.
        let mut in_fence = false;
        for line in page.lines().skip(1) {
            if line.starts_with("```") {
                in_fence = !in_fence;
            }
            assert!(
                in_fence || !line.starts_with("# "),
                "{}: second title {line:?}",
                c.code
            );
        }
    }
}

#[test]
fn no_page_without_a_code() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("compiler/diagnostics/pages");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let code = name
            .strip_suffix(".md")
            .unwrap_or_else(|| panic!("{name} is not a page"));
        assert!(lookup(code).is_some(), "page {name} has no registered code");
        files += 1;
    }
    assert_eq!(files, CODES.len());
    assert_eq!(pages::PAGES.len(), CODES.len());
}

#[test]
fn examples_print_the_diagnostic_rustc_style() {
    let any = Regex::new(r"(?m)^(error|warning|note)\[([A-Z][0-9]{3})\]").unwrap();
    for c in CODES {
        let page = page_of(c.code);
        let example = &sections(page)[2].1;
        let head = format!("{}[{}]: {}: ", c.severity.as_str(), c.code, c.name);
        let line = example
            .lines()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("{}: example lacks a line starting {head:?}", c.code));
        let message = &line[head.len()..];
        assert!(
            message.chars().next().is_some_and(|ch| !ch.is_uppercase()),
            "{}: example message starts upper-case",
            c.code
        );
        assert!(
            !message.ends_with('.'),
            "{}: example message ends with a period",
            c.code
        );
        assert!(
            example.contains("\n  = subject: "),
            "{}: example lacks `  = subject:`",
            c.code
        );
        assert!(
            example.contains("\n  = help: "),
            "{}: example lacks `  = help:`",
            c.code
        );
        // Only this code's diagnostics appear in its example.
        for cap in any.captures_iter(example) {
            assert_eq!(&cap[2], c.code, "{}: example shows {}", c.code, &cap[2]);
        }
    }
}

#[test]
fn example_records_parse() {
    for c in CODES {
        for (info, body) in fences(page_of(c.code)) {
            match info.as_str() {
                // L001's example is malformed on purpose.
                "jsonl" if c.code != "L001" => {
                    for line in body.lines().filter(|l| !l.trim().is_empty()) {
                        let v: serde_json::Value = serde_json::from_str(line)
                            .unwrap_or_else(|e| panic!("{}: bad JSONL {line:?}: {e}", c.code));
                        assert!(v.is_object(), "{}: JSONL line is not an object", c.code);
                    }
                }
                "json" => {
                    serde_json::from_str::<serde_json::Value>(&body)
                        .unwrap_or_else(|e| panic!("{}: bad JSON: {e}", c.code));
                }
                "yaml" => {
                    serde_yaml::from_str::<serde_yaml::Value>(&body)
                        .unwrap_or_else(|e| panic!("{}: bad YAML: {e}", c.code));
                }
                "jsonl" | "text" => {}
                other => panic!("{}: unexpected fence {other:?}", c.code),
            }
        }
    }
}

#[test]
fn pages_name_the_policy_keys_they_depend_on() {
    for c in CODES {
        let page = page_of(c.code);
        for key in c.policy_keys {
            assert!(page.contains(key), "{}: page never mentions {key}", c.code);
        }
    }
}

#[test]
fn pages_say_what_design_requires() {
    let flat = |p: &str| {
        p.replace("**", "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let g002 = flat(page_of("G002"));
    assert!(g002.contains("Blessing does not bypass this gate"));
    let g003 = page_of("G003").to_lowercase();
    for word in ["lower", "reduce", "decrease"] {
        assert!(
            !g003.contains(word),
            "G003 must not advise changing min_reinforcement ({word:?})"
        );
    }
    assert!(g003.contains("bless"));
    let n002 = flat(page_of("N002"));
    assert!(n002.contains("state store"));
    assert!(n002.contains("written nowhere"));
    let g001 = flat(page_of("G001"));
    assert!(g001.contains("Blessing bypasses this gate"));
}

#[test]
fn explain_prints_the_current_value_of_each_policy_key() {
    let rules = Rules::builtin();
    for c in CODES {
        let text = explain_text(c.code, &rules).unwrap();
        assert!(text.starts_with(page_of(c.code).trim_end()), "{}", c.code);
        let (_, policy) = text
            .split_once("\n## Current policy\n")
            .unwrap_or_else(|| panic!("{}: no Current policy section", c.code));
        if c.policy_keys.is_empty() {
            assert!(policy.trim_start().starts_with("none"), "{}", c.code);
        }
        for key in c.policy_keys {
            match rules.policy.value_of(key, &rules) {
                Some(v) => assert!(
                    policy.contains(&format!("- `{key}`: {v}")),
                    "{}: explain lacks {key} = {v}",
                    c.code
                ),
                None => assert!(
                    NARRATIVE_KEYS.contains(key),
                    "{}: policy key {key} is not defined by the rules",
                    c.code
                ),
            }
        }
    }
    let g003 = explain_text("G003", &rules).unwrap();
    assert!(g003.contains("- `min_reinforcement`: 2\n"), "{g003}");
    let g002 = explain_text("G002", &rules).unwrap();
    assert!(g002.contains("- `narrative.threshold`: 3\n"), "{g002}");
    let g004 = explain_text("G004", &rules).unwrap();
    assert!(g004.contains("- `confidence.claimed`: 300 (= 0.300)\n"), "{g004}");
}

#[test]
fn explain_accepts_any_case_and_names() {
    let rules = Rules::builtin();
    let by_code = explain_text("G002", &rules).unwrap();
    assert_eq!(explain_text("g002", &rules).unwrap(), by_code);
    assert_eq!(explain_text("narrative-candidate", &rules).unwrap(), by_code);
    assert_eq!(explain_text("NARRATIVE-CANDIDATE", &rules).unwrap(), by_code);
    assert!(explain_text("G999", &rules).is_none());
    assert!(explain_text("no-such-code", &rules).is_none());
    assert!(explain_json("G999", &rules).is_none());
    assert_eq!(resolve("below-reinforcement").map(|c| c.code), Some("G003"));
}

#[test]
fn explain_json_carries_the_page_and_policy() {
    let rules = Rules::builtin();
    let v = explain_json("below-reinforcement", &rules).unwrap();
    assert_eq!(v["code"], "G003");
    assert_eq!(v["name"], "below-reinforcement");
    assert_eq!(v["severity"], "note");
    assert_eq!(v["summary"], lookup("G003").unwrap().summary);
    assert_eq!(v["help"], lookup("G003").unwrap().help);
    assert_eq!(v["page"], page_of("G003"));
    assert_eq!(v["policy"]["min_reinforcement"], 2);
    let o002 = explain_json("O002", &rules).unwrap();
    assert!(o002["policy"]["mutating_tools"].is_array());
    let l001 = explain_json("L001", &rules).unwrap();
    assert_eq!(l001["policy"], serde_json::json!({}));
}

#[test]
fn codes_text_is_one_aligned_line_per_code() {
    let text = codes_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), CODES.len());
    let sev_col = |line: &str, c: &skillc::diagnostics::CodeInfo| {
        let after_name = 6 + line[6..].find(c.name).unwrap() + c.name.len();
        after_name + line[after_name..].find(c.severity.as_str()).unwrap()
    };
    let mut cols = BTreeSet::new();
    for (line, c) in lines.iter().zip(CODES) {
        assert!(line.starts_with(&format!("{}  {}", c.code, c.name)), "{line}");
        assert!(line.contains(c.summary), "{line}");
        assert_eq!(line.trim_end(), *line);
        assert_eq!(line.ends_with("(removed)"), c.removed, "{line}");
        cols.insert((sev_col(line, c), line.find(c.summary).unwrap()));
    }
    assert_eq!(cols.len(), 1, "columns are not aligned: {cols:?}");
    assert!(text.contains("malformed-record"));
}

#[test]
fn codes_json_lists_every_code() {
    let v = codes_json();
    let list = v["codes"].as_array().unwrap();
    assert_eq!(list.len(), CODES.len());
    for (item, c) in list.iter().zip(CODES) {
        assert_eq!(item["code"], c.code);
        assert_eq!(item["name"], c.name);
        assert_eq!(item["severity"], c.severity.as_str());
        assert_eq!(item["summary"], c.summary);
        assert_eq!(item["removed"], c.removed);
    }
}
