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
//! The regex engine has no look-around, so a matching signal may name an `except` pattern: a
//! match in whose text `except` also matches does not count ("a past participle, a plural
//! noun, then any word but a preposition": the preposition goes in `except`).
//!
//! ```yaml
//! threshold: 3
//! # optional: a short phrase that may open a clause before its verb ("In CI use …"),
//! # case-insensitive; `clause_start` signals match after it too
//! clause_lead: '(?:in|on|for)\s+\w+'
//! signals:
//!   - name: report-verb-start      # names must be unique; they appear in `why`/`trace`
//!     weight: 4                    # integer; negative for rule signals
//!     clause_start: true           # only at the start of a sentence or clause
//!     words: [Fixed, Merged, Turned out]
//!   - name: issue-ref
//!     weight: 3
//!     pattern: '\bPR\s*#\d+'        # case-insensitive unless `case_sensitive: true`
//!     max: 1                       # how many matches count (default 1)
//!   - name: participle-adjective
//!     weight: -6
//!     clause_start: true
//!     pattern: '[a-z]+ed\s+[a-z]+s\s+[a-z]+'
//!     except: '\s(?:in|from|to)$'  # a match whose text this matches does not count
//!   - name: no-instruction
//!     weight: 2
//!     when_absent: [imperative-start]   # fires when none of these (earlier) signals fired
//! ```

use regex::Regex;
use serde::Deserialize;

use crate::patterns::{Pattern, PatternSet};

/// Text that may precede the first word of a clause: start of text or of a line (a markdown
/// bullet, a timeline entry), or the end of a sentence or clause (`.`, `!`, `?`, `;`, `:`,
/// `,`, a dash) with an optional `so`/`then`, then list markers and opening quotes. `{LEAD}`
/// is where the file's `clause_lead` goes (optional).
const CLAUSE_START: &str = r#"(?:^|\n|[.!?;:,]\s+|\s[—–-]+\s+)(?:(?:so|then)\s+)?{LEAD}[\s"'“‘(*>•\-]*"#;

/// `CLAUSE_START` with the file's `clause_lead` (a phrase before the clause's verb) in place.
fn clause_start(lead: Option<&str>) -> String {
    let lead = lead.map_or(String::new(), |l| format!(r"(?i:(?:{l})\s+)?"));
    CLAUSE_START.replace("{LEAD}", &lead)
}

/// The key `explain` asks for.
pub const THRESHOLD_KEY: &str = "narrative.threshold";

#[derive(Clone, Debug)]
pub struct Narrative {
    threshold: i32,
    signals: Vec<Signal>,
    /// Every `Matches` pattern in one set, in signal order: one pass over a text tells which
    /// signals match at all, so only those that count past one match search again (and, on
    /// non-ASCII text, those the set can only call a maybe: `patterns`). `None` when the
    /// patterns are too large to join (each is then searched on its own).
    any: Option<PatternSet>,
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
    /// Counts non-overlapping matches, capped at `max`, leaving out those in whose text
    /// `except` matches. `set` is its pattern's index in `Narrative::any`.
    Matches {
        re: Pattern,
        max: u32,
        set: usize,
        except: Option<Regex>,
    },
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

/// A classification as a candidate keeps it: the signals that fired as bits (bit `i`: the
/// file's `i`-th signal), named again with [`Narrative::names`] when a report needs them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub narrative: bool,
    pub score: i32,
    pub fired: Fired,
}

/// The signals that fired, one bit per signal in file order.
pub type Fired = u64;

/// At most this many signals, so that what fired fits in [`Fired`].
pub const MAX_SIGNALS: usize = Fired::BITS as usize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    threshold: i32,
    #[serde(default)]
    clause_lead: Option<String>,
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
    #[serde(default)]
    except: Option<String>,
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
    /// `start` is what may precede a `clause_start` signal's match (`clause_start`).
    fn compile(self, earlier: &[Signal], start: &str) -> Result<Signal, String> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err("a signal has an empty name".into());
        }
        let err = |m: &str| format!("signal `{name}`: {m}");
        let matcher = self.pattern.is_some() || !self.words.is_empty();
        let test = if !self.when_absent.is_empty() {
            if matcher
                || self.clause_start
                || self.case_sensitive
                || self.max.is_some()
                || self.except.is_some()
            {
                return Err(err(
                    "`when_absent` cannot be combined with pattern, words, clause_start, case_sensitive, max or except",
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
                format!("{start}(?:{body})")
            } else {
                body
            };
            let flags = if self.case_sensitive { "" } else { "(?i)" };
            let re = Pattern::new(&format!("{flags}{body}")).map_err(|e| err(&e.to_string()))?;
            let max = self.max.unwrap_or(1);
            if max == 0 {
                return Err(err("`max` must be at least 1"));
            }
            let except = match &self.except {
                Some(e) if e.trim().is_empty() => return Err(err("empty `except`")),
                Some(e) => Some(
                    crate::patterns::regex(&format!("{flags}(?:{e})"))
                        .map_err(|e| err(&format!("`except`: {e}")))?,
                ),
                None => None,
            };
            let set = earlier
                .iter()
                .filter(|s| matches!(s.test, Test::Matches { .. }))
                .count();
            Test::Matches { re, max, set, except }
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
        if let Some(l) = &spec.clause_lead {
            if l.trim().is_empty() {
                return Err("`clause_lead` is empty".into());
            }
            Regex::new(l).map_err(|e| format!("`clause_lead`: {e}"))?;
        }
        let start = clause_start(spec.clause_lead.as_deref());
        if spec.signals.len() > MAX_SIGNALS {
            return Err(format!(
                "{} signals; at most {MAX_SIGNALS} (a candidate records which fired, one bit each)",
                spec.signals.len()
            ));
        }
        let mut signals: Vec<Signal> = Vec::with_capacity(spec.signals.len());
        for s in spec.signals {
            let sig = s.compile(&signals, &start)?;
            if signals.iter().any(|o| o.name == sig.name) {
                return Err(format!("signal `{}` is defined twice", sig.name));
            }
            signals.push(sig);
        }
        let any = PatternSet::new(signals.iter().filter_map(|s| match &s.test {
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
        let shape = self.shape(text);
        Classification {
            narrative: shape.narrative,
            score: shape.score,
            signals: self.names(shape.fired).map(str::to_string).collect(),
        }
    }

    /// The names of the signals in `fired`, in file order.
    pub fn names(&self, fired: Fired) -> impl Iterator<Item = &str> {
        (self.signals.iter().enumerate())
            .filter(move |(i, _)| fired >> i & 1 == 1)
            .map(|(_, s)| s.name.as_str())
    }

    /// The names of the signals in `fired` that count toward a story (a positive weight), in
    /// file order: what a rewrite as a rule has to take out. The rule signals that fired
    /// beside them (`imperative-start`) only lowered the score.
    pub fn story_names(&self, fired: Fired) -> impl Iterator<Item = &str> {
        (self.signals.iter().enumerate())
            .filter(move |(i, s)| fired >> i & 1 == 1 && s.weight > 0)
            .map(|(_, s)| s.name.as_str())
    }

    /// `classify` without naming the signals (no allocation): what the candidates keep.
    pub fn shape(&self, text: &str) -> Shape {
        let mut fired: Fired = 0;
        let mut score = 0i32;
        let matched = self.any.as_ref().map(|set| set.matches(text));
        for (i, s) in self.signals.iter().enumerate() {
            let count = match &s.test {
                Test::Matches { re, max, set, except } => {
                    // One match is all that counts: whether there is one will do.
                    let single = *max == 1 && except.is_none();
                    match matched.as_ref().map(|m| (m.may_match(*set), m.exact)) {
                        Some((false, _)) => 0,
                        Some((true, true)) if single => 1,
                        _ if single => i32::from(re.is_match(text)),
                        _ => (re.find_iter(text))
                            .filter(|m| except.as_ref().is_none_or(|e| !e.is_match(m.as_str())))
                            .take(*max as usize)
                            .count() as i32,
                    }
                }
                Test::Absent(others) => i32::from(!others.iter().any(|&j| fired >> j & 1 == 1)),
            };
            if count > 0 {
                fired |= 1 << i;
                score = score.saturating_add(s.weight.saturating_mul(count));
            }
        }
        Shape {
            narrative: score >= self.threshold,
            score,
            fired,
        }
    }

    pub fn is_narrative(&self, text: &str) -> bool {
        self.classify(text).narrative
    }

    /// Current value of a narrative policy key (`narrative.threshold`: `threshold` in
    /// `narrative.yaml`; the older name `narrative_threshold` too), for `explain`.
    pub fn value_of(&self, key: &str) -> Option<String> {
        match key {
            THRESHOLD_KEY | "narrative_threshold" => Some(self.threshold.to_string()),
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
            // Non-ASCII text, where the set can only say "maybe" (`patterns`): em dashes,
            // curly quotes, arrows, the `…` of a text cut at 240 characters, and letters
            // that touch a signal's word, so that a Unicode word boundary is not there.
            "Fixed the flaky test — pinned pytest-xdist to 3.5.0 after PR #1545 merged…",
            "We’ve found that “npm ci” respects package-lock.json; use it in CI → always.",
            "Don’t hard-code the region — read AWS_REGION from the environment.",
            "éFixed nothing: the café’s büild turned out fine, naïvely.",
            "Après the upgrade, we switched to uv — it resolved the lock in seconds.",
            "When terraform plan hangs, check the state lock in DynamoDB first…",
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
        // The builtin signals use `\b`: a text with a non-ASCII letter takes the relaxed
        // answer; one whose non-ASCII is punctuation, the ASCII twins' exact one.
        let builtin = Narrative::from_yaml(crate::policy::BUILTIN_NARRATIVE).unwrap();
        let set = builtin.any.as_ref().unwrap();
        assert!(!set.matches("Fixed it in Zürich — finally").exact);
        assert!(set.matches("Fixed it — finally").exact);
        assert!(set.matches("Fixed it, finally").exact);
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
    fn a_match_that_its_except_pattern_also_matches_does_not_count() {
        let yaml = r#"
threshold: 3
signals:
  - name: participle-adjective
    weight: -6
    clause_start: true
    pattern: '[a-z]+ed\s+[a-z]+s\s+[a-z]+'
    except: '\s(?:in|from)$'
    max: 2
"#;
        let n = Narrative::from_yaml(yaml).unwrap();
        assert_eq!(n.classify("Deleted branches linger.").score, -6);
        assert_eq!(n.classify("Removed imports from a.py.").score, 0);
        // counted per match: one kept, one left out
        assert_eq!(n.classify("Pinned versions drift; added tests in CI.").score, -6);
        let bad = Narrative::from_yaml(&yaml.replace(r"\s(?:in|from)$", "(")).unwrap_err();
        assert!(bad.contains("except"), "{bad}");
        let bad = "threshold: 3\nsignals:\n  - {name: x, weight: 1, words: [a]}\n  - {name: y, weight: 1, when_absent: [x], except: b}";
        assert!(Narrative::from_yaml(bad).unwrap_err().contains("except"));
    }

    #[test]
    fn a_line_start_is_a_clause_start() {
        // A markdown list or a timeline: each line opens a clause, with or without a
        // sentence's punctuation before it.
        let c = small().classify("## Summary of changes\n- Fixed the retry loop\n- Use the new client");
        assert_eq!(c.signals, ["report-verb-start", "imperative-start"]);
        let c = small().classify("Summary of changes\nFixed the retry loop");
        assert!(c.signals.contains(&"report-verb-start".to_string()), "{c:?}");
        // Mid-line it is still no clause start.
        assert!(small().classify("Summary: we Fixed it").signals[0] != "report-verb-start");
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
        assert_eq!(builtin.value_of("narrative.threshold").as_deref(), Some("3"));
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
        assert!(bad("threshold: 3\nclause_lead: '('\nsignals: []").contains("clause_lead"));
        assert!(bad("threshold: 3\nclause_lead: ' '\nsignals: []").contains("clause_lead"));
        let many: String = (0..=MAX_SIGNALS)
            .map(|i| format!("\n  - {{name: s{i}, weight: 1, words: [w{i}]}}"))
            .collect();
        assert!(bad(&format!("threshold: 3\nsignals:{many}")).contains(&format!("at most {MAX_SIGNALS}")));
    }

    #[test]
    fn a_clause_lead_lets_clause_start_signals_match_after_an_opening_phrase() {
        let text = "In CI use npm ci; On Windows Don't hard-code paths.";
        assert!(
            !small()
                .classify(text)
                .signals
                .contains(&"imperative-start".to_string())
        );
        let led = SMALL.replace("signals:", "clause_lead: '(?:in|on)\\s+\\w+'\nsignals:");
        let led = Narrative::from_yaml(&led).unwrap();
        let c = led.classify(text);
        assert!(c.signals.contains(&"imperative-start".to_string()), "{c:?}");
        // Case-insensitive even for a case-sensitive signal, and only before the verb.
        assert_eq!(
            led.classify("In CI fixed the cache").signals[0],
            "report-verb-start"
        );
        assert!(
            !led.classify("In CI we use npm ci")
                .signals
                .contains(&"imperative-start".into())
        );
    }

    #[test]
    fn a_shape_names_the_signals_classify_reports() {
        let n = Narrative::from_yaml(crate::policy::BUILTIN_NARRATIVE).unwrap();
        for t in [
            "Fixed the flaky test by pinning freezegun to 1.2.2 in requirements.txt.",
            "Commit Cargo.lock for binaries.",
            "",
        ] {
            let (shape, c) = (n.shape(t), n.classify(t));
            assert_eq!((shape.narrative, shape.score), (c.narrative, c.score), "{t}");
            assert_eq!(n.names(shape.fired).collect::<Vec<_>>(), c.signals, "{t}");
        }
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
