//! `skillc explain CODE` and `skillc codes`: the diagnostic documentation.
//!
//! `explain` prints a code's page (`compiler/diagnostics/pages/CODE.md`) followed by the current
//! values of the policy keys the code depends on, so the page always matches the rules in use.
//! A code is accepted case-insensitively (`g002`) or by name (`narrative-candidate`).

use serde_json::{Map, Value, json};

use crate::diagnostics::{CODES, CodeInfo, pages, registry};
use crate::policy::Rules;

/// The registered code a user's argument names: a code in any case (`g002`, `G002`) or a
/// kebab-case name in any case (`narrative-candidate`; `narrative_candidate` also works).
pub fn resolve(query: &str) -> Option<&'static CodeInfo> {
    let q = query.trim();
    if q.is_empty() {
        return None;
    }
    registry::lookup(&q.to_ascii_uppercase())
        .or_else(|| registry::by_name(&q.to_ascii_lowercase().replace('_', "-")))
}

/// For an unknown argument, the registered code it most likely meant (a near spelling of a code
/// or a name), for a `did you mean` hint.
pub fn suggest(query: &str) -> Option<&'static CodeInfo> {
    let q = query.trim().to_ascii_lowercase().replace('_', "-");
    if q.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &'static CodeInfo)> = None;
    for info in CODES {
        let d = edit_distance(&q, &info.code.to_ascii_lowercase()).min(edit_distance(&q, info.name));
        let limit = if q.len() <= 4 { 1 } else { 2 + q.len() / 8 };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, info));
        }
    }
    best.map(|(_, info)| info)
}

/// The page of a code, then `## Current policy` with the current value of each policy key the
/// code depends on. `None` when the code is unknown.
pub fn explain_text(code: &str, rules: &Rules) -> Option<String> {
    let info = resolve(code)?;
    let page = pages::page(info.code)?;
    let mut out = String::with_capacity(page.len() + 256);
    out.push_str(page.trim_end());
    out.push_str("\n\n");
    if info.removed {
        out.push_str("This code was removed. It stays listed and is never reused.\n\n");
    }
    out.push_str("## Current policy\n\n");
    if info.policy_keys.is_empty() {
        out.push_str("none: no policy key changes how this code is decided\n");
    } else {
        out.push_str(&format!("rules: {}\n\n", rules.origin));
        for key in info.policy_keys {
            out.push_str(&format!("- `{key}`: {}\n", display_value(key, rules)));
        }
    }
    Some(out)
}

/// `explain` as one JSON document: `{"code", "name", "severity", "summary", "help", "page",
/// "policy": {key: value}}` (a key the rules do not define has the value null).
pub fn explain_json(code: &str, rules: &Rules) -> Option<Value> {
    let info = resolve(code)?;
    let page = pages::page(info.code)?;
    let mut policy = Map::new();
    for key in info.policy_keys {
        policy.insert((*key).to_string(), json_value(key, rules));
    }
    Some(json!({
        "code": info.code,
        "name": info.name,
        "severity": info.severity.as_str(),
        "summary": info.summary,
        "help": info.help,
        "removed": info.removed,
        "page": page,
        "policy": Value::Object(policy),
    }))
}

/// One aligned line per code: `L001  malformed-record  error    a record could not be parsed`.
/// Removed codes stay listed, marked `(removed)`.
pub fn codes_text() -> String {
    codes_text_of(CODES)
}

fn codes_text_of(codes: &[CodeInfo]) -> String {
    let name_w = codes.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let sev_w = codes.iter().map(|c| c.severity.as_str().len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in codes {
        let mut line = format!(
            "{}  {:name_w$}  {:sev_w$}  {}",
            c.code,
            c.name,
            c.severity.as_str(),
            c.summary
        );
        if c.removed {
            line.push_str("  (removed)");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `{"codes": [{"code", "name", "severity", "summary", "help", "policy_keys", "removed"}, …]}`.
pub fn codes_json() -> Value {
    let codes: Vec<Value> = CODES
        .iter()
        .map(|c| {
            json!({
                "code": c.code,
                "name": c.name,
                "severity": c.severity.as_str(),
                "summary": c.summary,
                "help": c.help,
                "policy_keys": c.policy_keys,
                "removed": c.removed,
            })
        })
        .collect();
    json!({ "codes": codes })
}

/// A policy value for people: JSON as the rules hold it; confidence constants (integer
/// thousandths) also as a decimal.
fn display_value(key: &str, rules: &Rules) -> String {
    match rules.policy.value_of(key, rules) {
        None => "not set".to_string(),
        Some(v) => match (key.starts_with("confidence."), v.parse::<i64>()) {
            (true, Ok(n)) => format!("{v} (= {})", thousandths(n)),
            _ => v,
        },
    }
}

fn json_value(key: &str, rules: &Rules) -> Value {
    rules
        .policy
        .value_of(key, rules)
        .map(|v| serde_json::from_str(&v).unwrap_or(Value::String(v)))
        .unwrap_or(Value::Null)
}

fn thousandths(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let a = n.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Levenshtein distance over chars: did-you-mean here and in `report`, a mistyped word in
/// `opkey::Command::corrects`.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_codes_and_names() {
        assert_eq!(resolve("g002").map(|c| c.code), Some("G002"));
        assert_eq!(resolve(" G002 ").map(|c| c.code), Some("G002"));
        assert_eq!(resolve("narrative-candidate").map(|c| c.code), Some("G002"));
        assert_eq!(resolve("Narrative_Candidate").map(|c| c.code), Some("G002"));
        assert!(resolve("G999").is_none());
        assert!(resolve("").is_none());
    }

    #[test]
    fn suggests_near_spellings() {
        assert_eq!(suggest("narative-candidate").map(|c| c.code), Some("G002"));
        assert_eq!(suggest("G02").map(|c| c.code), Some("G002"));
        assert!(suggest("completely-unrelated-words").is_none());
    }

    #[test]
    fn a_removed_code_is_listed_and_marked() {
        // No code has been removed yet; a retired one must still be listed, never reused.
        let retired = CodeInfo {
            code: "K009",
            name: "per-tool-quota",
            summary: "a tool exceeded its per-compile quota",
            removed: true,
            ..CODES[0]
        };
        let text = codes_text_of(&[CODES[0], retired]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(!lines[0].ends_with("(removed)"), "{text}");
        assert!(
            lines[1].starts_with("K009  per-tool-quota") && lines[1].ends_with("(removed)"),
            "{text}"
        );
    }

    #[test]
    fn thousandths_print_three_decimals() {
        assert_eq!(thousandths(300), "0.300");
        assert_eq!(thousandths(1500), "1.500");
        assert_eq!(thousandths(-250), "-0.250");
    }
}
