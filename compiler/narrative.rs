//! The narrative gate (DESIGN §5.4): does a do-candidate read as the story of one incident
//! rather than a rule? Patterns and weights live in `rules/narrative.yaml`.
//!
//! The classifier is a weighted sum of named signals, integers only. Each signal either
//! matches the text (a regular expression, a list of words and phrases, or both) or fires when
//! none of a list of earlier signals fired (`when_absent`, e.g. "no condition or instruction").
//! A signal contributes `weight × min(matches, max)`; the text is narrative iff the sum reaches
//! `threshold`. Regexes are compiled once, in [`Narrative::from_yaml`]; classification is
//! deterministic and reports the names of the signals that fired, in file order.
//!
//! ```yaml
//! threshold: 3
//! signals:
//!   - name: report-verb-start      # names must be unique; they appear in `why`/`trace`
//!     weight: 4                    # integer; negative for rule signals
//!     clause_start: true           # only at the start of a sentence or clause
//!     words: [Fixed, Merged, Turned out]
//!   - name: issue-ref
//!     weight: 3
//!     pattern: '\bPR\s*#\d+'        # case-insensitive unless `case_sensitive: true`
//!     max: 1                       # how many matches count (default 1)
//!   - name: no-instruction
//!     weight: 2
//!     when_absent: [imperative-start]   # fires when none of these (earlier) signals fired
//! ```

use regex::Regex;
use serde::Deserialize;

/// Text that may precede the first word of a clause: start of text, or the end of a sentence
/// or clause (`.`, `!`, `?`, `;`, `:`, `,`, a dash) with an optional `so`/`then`, then list
/// markers and opening quotes.
const CLAUSE_START: &str = r#"(?:^|[.!?;:,]\s+|\s[—–-]+\s+)(?:(?:so|then)\s+)?[\s"'“‘(*>•\-]*"#;

/// The key `explain` asks for.
pub const THRESHOLD_KEY: &str = "narrative_threshold";

#[derive(Clone, Debug)]
pub struct Narrative {
    threshold: i32,
    signals: Vec<Signal>,
    /// Every `Matches` pattern in one set, in signal order: one pass over a text tells which
    /// signals match at all, so only those that count past one match search again. `None`
    /// when the patterns are too large to join (each is then searched on its own).
    any: Option<regex::RegexSet>,
}

/// An empty classifier: no signals, so nothing is narrative.
impl Default for Narrative {
    fn default() -> Self {
        Narrative {
            threshold: 1,
            signals: Vec::new(),
            any: None,
        }
    }
}

#[derive(Clone, Debug)]
struct Signal {
    name: String,
    weight: i32,
    test: Test,
}

#[derive(Clone, Debug)]
enum Test {
    /// Counts non-overlapping matches, capped at `max`.
    /// `set` is its pattern's index in `Narrative::any`.
    Matches { re: Regex, max: u32, set: usize },
    /// Fires (once) when none of these signals (indices of earlier ones) fired.
    Absent(Vec<usize>),
}

/// How a text was classified, with the signals that fired (for `why` and `trace`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classification {
    pub narrative: bool,
    pub score: i32,
    pub signals: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    threshold: i32,
    signals: Vec<SignalSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignalSpec {
    name: String,
    weight: i32,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    clause_start: bool,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    max: Option<u32>,
    #[serde(default)]
    when_absent: Vec<String>,
}

/// A literal word or phrase as a regex: escaped, any whitespace between words, either
/// apostrophe, word boundaries where the phrase begins or ends with a word character.
fn word_regex(word: &str) -> String {
    let parts: Vec<String> = word
        .split_whitespace()
        .map(|w| regex::escape(w).replace('\'', "['’]"))
        .collect();
    let body = parts.join(r"\s+");
    let first = word.trim().chars().next();
    let last = word.trim().chars().last();
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    format!(
        "{}{}{}",
        if is_word(first) { r"\b" } else { "" },
        body,
        if is_word(last) { r"\b" } else { "" }
    )
}

impl SignalSpec {
    fn compile(self, earlier: &[Signal]) -> Result<Signal, String> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err("a signal has an empty name".into());
        }
        let err = |m: &str| format!("signal `{name}`: {m}");
        let matcher = self.pattern.is_some() || !self.words.is_empty();
        let test = if !self.when_absent.is_empty() {
            if matcher || self.clause_start || self.case_sensitive || self.max.is_some() {
                return Err(err(
                    "`when_absent` cannot be combined with pattern, words, clause_start, case_sensitive or max",
                ));
            }
            let mut idx = Vec::new();
            for other in &self.when_absent {
                match earlier.iter().position(|s| &s.name == other) {
                    Some(i) => idx.push(i),
                    None => {
                        return Err(err(&format!(
                            "`when_absent` names `{other}`, which is not a signal defined above it"
                        )));
                    }
                }
            }
            Test::Absent(idx)
        } else {
            if !matcher {
                return Err(err("needs `pattern`, `words` or `when_absent`"));
            }
            let mut alts = Vec::new();
            if let Some(p) = &self.pattern {
                if p.trim().is_empty() {
                    return Err(err("empty pattern"));
                }
                alts.push(format!("(?:{p})"));
            }
            for w in &self.words {
                if w.trim().is_empty() {
                    return Err(err("empty entry in `words`"));
                }
                alts.push(word_regex(w));
            }
            let body = alts.join("|");
            let body = if self.clause_start {
                format!("{CLAUSE_START}(?:{body})")
            } else {
                body
            };
            let flags = if self.case_sensitive { "" } else { "(?i)" };
            let re = Regex::new(&format!("{flags}{body}")).map_err(|e| err(&e.to_string()))?;
            let max = self.max.unwrap_or(1);
            if max == 0 {
                return Err(err("`max` must be at least 1"));
            }
            let set = earlier
                .iter()
                .filter(|s| matches!(s.test, Test::Matches { .. }))
                .count();
            Test::Matches { re, max, set }
        };
        Ok(Signal {
            name,
            weight: self.weight,
            test,
        })
    }
}

impl Narrative {
    /// Parses and checks `rules/narrative.yaml`, compiling every pattern once.
    pub fn from_yaml(text: &str) -> Result<Narrative, String> {
        let spec: FileSpec = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        if spec.threshold < 1 {
            return Err(format!(
                "threshold must be at least 1 (a text with no signals is not narrative), got {}",
                spec.threshold
            ));
        }
        let mut signals: Vec<Signal> = Vec::with_capacity(spec.signals.len());
        for s in spec.signals {
            let sig = s.compile(&signals)?;
            if signals.iter().any(|o| o.name == sig.name) {
                return Err(format!("signal `{}` is defined twice", sig.name));
            }
            signals.push(sig);
        }
        let any = regex::RegexSet::new(signals.iter().filter_map(|s| match &s.test {
            Test::Matches { re, .. } => Some(re.as_str()),
            Test::Absent(_) => None,
        }))
        .ok();
        Ok(Narrative {
            threshold: spec.threshold,
            signals,
            any,
        })
    }

    pub fn threshold(&self) -> i32 {
        self.threshold
    }

    /// Signal names and weights, in file order (for documentation and `explain`).
    pub fn weights(&self) -> Vec<(&str, i32)> {
        self.signals.iter().map(|s| (s.name.as_str(), s.weight)).collect()
    }

    pub fn classify(&self, text: &str) -> Classification {
        let mut fired = vec![false; self.signals.len()];
        let mut score = 0i32;
        let mut names = Vec::new();
        let matched = self.any.as_ref().map(|set| set.matches(text));
        for (i, s) in self.signals.iter().enumerate() {
            let count = match &s.test {
                Test::Matches { re, max, set } => match matched.as_ref().map(|m| m.matched(*set)) {
                    Some(false) => 0,
                    Some(true) if *max == 1 => 1,
                    _ => re.find_iter(text).take(*max as usize).count() as i32,
                },
                Test::Absent(others) => i32::from(!others.iter().any(|&j| fired[j])),
            };
            if count > 0 {
                fired[i] = true;
                score = score.saturating_add(s.weight.saturating_mul(count));
                names.push(s.name.clone());
            }
        }
        Classification {
            narrative: score >= self.threshold,
            score,
            signals: names,
        }
    }

    pub fn is_narrative(&self, text: &str) -> bool {
        self.classify(text).narrative
    }

    /// Current value of a narrative policy key (`narrative_threshold`), for `explain`.
    pub fn value_of(&self, key: &str) -> Option<String> {
        match key {
            THRESHOLD_KEY | "narrative.threshold" => Some(self.threshold.to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
threshold: 3
signals:
  - name: report-verb-start
    weight: 4
    clause_start: true
    words: [Fixed, Turned out]
  - name: first-person
    weight: 2
    case_sensitive: true
    pattern: '\bI\b|\b[Ww]e\b'
  - name: imperative-start
    weight: -4
    clause_start: true
    words: [Use, "Don't"]
  - name: fn-call
    weight: 1
    max: 2
    pattern: '\b\w+\(\)'
  - name: no-instruction
    weight: 1
    when_absent: [imperative-start]
"#;

    fn small() -> Narrative {
        Narrative::from_yaml(SMALL).unwrap()
    }

    #[test]
    fn the_one_pass_set_classifies_as_searching_signal_by_signal() {
        let texts = [
            "Fixed the flaky test by pinning pytest-xdist to 3.5.0 after PR #1545 merged.",
            "We turned out to need fetch_page() and parse_rows() twice in importer.go.",
            "Use `npm ci` in CI, not npm install: it respects package-lock.json.",
            "Don't hard-code the region; read AWS_REGION from the environment.",
            "When terraform plan hangs, check the state lock in DynamoDB first.",
            "Reverted d10cb74, which changed parse_rows(); downstream consumers worked again.",
            "",
        ];
        for yaml in [SMALL, crate::policy::BUILTIN_NARRATIVE] {
            let set = Narrative::from_yaml(yaml).unwrap();
            assert!(set.any.is_some());
            let one_by_one = Narrative {
                any: None,
                ..set.clone()
            };
            for t in texts {
                assert_eq!(set.classify(t), one_by_one.classify(t), "{t}");
            }
        }
    }

    #[test]
    fn signals_are_reported_in_file_order() {
        let c = small().classify("Fixed the leak in parse() and load(); I moved run() too.");
        assert_eq!(
            c.signals,
            ["report-verb-start", "first-person", "fn-call", "no-instruction"]
        );
        // 4 + 2 + 1×2 (capped at max) + 1
        assert_eq!(c.score, 9);
        assert!(c.narrative);
    }

    #[test]
    fn rule_signals_subtract_and_block_absence() {
        let c = small().classify("Use parse() instead of a hand-written loop.");
        assert_eq!(c.signals, ["imperative-start", "fn-call"]);
        assert_eq!(c.score, -3);
        assert!(!c.narrative);
        // clause start: after `;` and after a comma
        let c = small().classify("It is slow; don't call load() twice.");
        assert!(c.signals.contains(&"imperative-start".to_string()));
        assert!(
            !small()
                .classify("We fixed it")
                .signals
                .contains(&"report-verb-start".into())
        );
        // phrases match across whitespace, either apostrophe, case-insensitively
        assert!(small().classify("turned  out fine").signals[0] == "report-verb-start");
        assert!(small().classify("Don’t panic").signals[0] == "imperative-start");
    }

    #[test]
    fn threshold_from_yaml_is_honoured() {
        let text = "Fixed the leak.";
        assert_eq!(small().classify(text).score, 5);
        assert!(small().is_narrative(text));
        let strict = Narrative::from_yaml(&SMALL.replace("threshold: 3", "threshold: 6")).unwrap();
        assert_eq!(strict.classify(text).score, 5);
        assert!(!strict.is_narrative(text));
        let exact = Narrative::from_yaml(&SMALL.replace("threshold: 3", "threshold: 5")).unwrap();
        assert!(
            exact.is_narrative(text),
            "score equal to the threshold is narrative"
        );
    }

    #[test]
    fn value_of_reports_threshold() {
        assert_eq!(small().value_of("narrative_threshold").as_deref(), Some("3"));
        assert_eq!(small().value_of("min_reinforcement"), None);
        let builtin = Narrative::from_yaml(crate::policy::BUILTIN_NARRATIVE).unwrap();
        assert_eq!(builtin.value_of("narrative_threshold").as_deref(), Some("3"));
    }

    #[test]
    fn default_and_empty_text_are_not_narrative() {
        assert!(!Narrative::default().is_narrative("Fixed it yesterday in main.rs, PR #1."));
        let c = small().classify("");
        assert_eq!(c.signals, ["no-instruction"]);
        assert!(!c.narrative);
    }

    #[test]
    fn bad_files_are_rejected_with_the_signal_named() {
        let bad = |t: &str| Narrative::from_yaml(t).unwrap_err();
        assert!(bad("threshold: 3\nsignals:\n  - {name: x, weight: 1, pattern: '('}").contains("`x`"));
        assert!(bad("threshold: 3\nsignals:\n  - {name: x, weight: 1}").contains("needs"));
        assert!(bad("threshold: 3\nsignals:\n  - {name: x, weight: 1, when_absent: [y]}").contains("`y`"));
        assert!(
            bad("threshold: 3\nsignals:\n  - {name: x, weight: 1, words: [a]}\n  - {name: x, weight: 1, words: [b]}")
                .contains("twice")
        );
        assert!(bad("threshold: 0\nsignals: []").contains("threshold"));
        assert!(bad("threshold: 3\nsignals: []\nextra: 1").contains("extra"));
        assert!(bad("threshold: 3\nsignals:\n  - {name: x, weight: 1, words: [a], max: 0}").contains("max"));
    }

    #[test]
    fn builtin_rules_classify_the_design_examples() {
        let n = Narrative::from_yaml(crate::policy::BUILTIN_NARRATIVE).unwrap();
        assert!(n.is_narrative(
            "Community PR merged cleanly despite significant changes to maintenance.py on bot…"
        ));
        assert!(n.is_narrative(
            "Leveraged existing find_all_duplicates() and _has_negation_pair() functions from…"
        ));
        let rule = n.classify(
            "When a fake stands in for a component with known divergent behaviour, the fake must reproduce the divergence.",
        );
        assert!(!rule.narrative, "{rule:?}");
    }
}
