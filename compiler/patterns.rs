//! Which of a list of regexes can match a text, answered by DFAs on any text.
//!
//! The narrative classifier and the secret scanner first ask one `RegexSet` which of their
//! patterns could match, and run the single patterns only where it says yes. The set runs as
//! a lazy DFA, which cannot evaluate a Unicode word boundary (`\b`) next to a non-ASCII
//! character: on a text with any non-ASCII byte (an em dash, a curly quote, the `…` that ends
//! every normalised text longer than 240 characters) the regex crate falls back to its NFA
//! simulation, which is 100-200 times slower on these sets (about 200 µs per text instead
//! of 1-2 µs).
//!
//! So beside the exact set there are the relaxed patterns: the same patterns with every Unicode
//! word boundary removed. Removing a zero-width assertion only lets a pattern match more, so a
//! pattern its relaxed form rules out cannot match, and the relaxed forms run as DFAs on any
//! text. Their yes is only a maybe: the caller confirms it with the pattern itself.

use regex::{Regex, RegexSet, SetMatches};
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

/// The lazy DFA's cache per regex and thread. At the regex crate's default (2 MiB) the joined
/// narrative signals outgrew it: the cache reset on nearly every text and the search fell back
/// to slower engines (the candidates stage of 100 k experiences took 0.87 s, and 4.1 s once
/// one more signal joined; 0.43 s with this). The cache grows only as far as a search needs.
const DFA_CACHE: usize = 64 << 20;

/// A policy pattern (a narrative signal, a secret pattern) as a regex with `DFA_CACHE`: every
/// regex the rules files define is built here, so none falls back to the slow engines.
pub fn regex(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .dfa_size_limit(DFA_CACHE)
        .build()
}

/// The exact set and the relaxed patterns over one pattern list (indices are the patterns'
/// places in the list). The default matches nothing.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    exact: RegexSet,
    /// One regex per pattern, each its own small DFA: joined in one set, the relaxed patterns
    /// (which may start at any letter) made a product automaton whose states were new on
    /// almost every text, and building them cost more than the search. `None` when no
    /// pattern has a Unicode word boundary (the exact set is a DFA already) or a pattern
    /// could not be relaxed (the exact set answers; slower, never wrong).
    relaxed: Option<Vec<Regex>>,
}

/// What the set says of a text: per pattern, whether it may match; `exact` when that is
/// also whether it does.
pub struct Matched {
    may: May,
    pub exact: bool,
}

enum May {
    /// The exact set's answer.
    Set(SetMatches),
    /// Each relaxed pattern's answer, in pattern order.
    Each(Vec<bool>),
}

impl Matched {
    pub fn may_match(&self, pattern: usize) -> bool {
        match &self.may {
            May::Set(set) => set.matched(pattern),
            May::Each(each) => each[pattern],
        }
    }
}

impl PatternSet {
    pub fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Result<PatternSet, regex::Error> {
        let patterns: Vec<&str> = patterns.into_iter().collect();
        let exact = regex::RegexSetBuilder::new(&patterns)
            .dfa_size_limit(DFA_CACHE)
            .build()?;
        let relaxed =
            relaxed(&patterns).and_then(|r| (r.iter().map(|p| regex(p))).collect::<Result<Vec<_>, _>>().ok());
        Ok(PatternSet { exact, relaxed })
    }

    /// The patterns that may match `text` (exactly those that do, when `exact`).
    pub fn matches(&self, text: &str) -> Matched {
        match &self.relaxed {
            Some(relaxed) if !text.is_ascii() => Matched {
                may: May::Each(relaxed.iter().map(|r| r.is_match(text)).collect()),
                exact: false,
            },
            _ => Matched {
                may: May::Set(self.exact.matches(text)),
                exact: true,
            },
        }
    }

    /// `false` only when no pattern matches `text`; `true` may be a maybe on non-ASCII text.
    pub fn may_match(&self, text: &str) -> bool {
        match &self.relaxed {
            Some(relaxed) if !text.is_ascii() => relaxed.iter().any(|r| r.is_match(text)),
            _ => self.exact.is_match(text),
        }
    }
}

/// The patterns with their Unicode word boundaries removed, printed back as regexes; `None`
/// when none has one, or when a pattern does not parse here as the regex crate parsed it.
fn relaxed(patterns: &[&str]) -> Option<Vec<String>> {
    let hirs: Vec<Hir> = (patterns.iter())
        .map(|p| regex_syntax::Parser::new().parse(p).ok())
        .collect::<Option<_>>()?;
    let bounded = |h: &Hir| h.properties().look_set().contains_word_unicode();
    hirs.iter()
        .any(bounded)
        .then(|| hirs.into_iter().map(|h| unbounded(h).to_string()).collect())
}

/// `hir` with every Unicode word-boundary assertion replaced by the empty regex.
fn unbounded(hir: Hir) -> Hir {
    if !hir.properties().look_set().contains_word_unicode() {
        return hir;
    }
    match hir.into_kind() {
        HirKind::Look(look) if is_unicode_word(look) => Hir::empty(),
        HirKind::Look(look) => Hir::look(look),
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(unbounded(*rep.sub)),
            ..rep
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            sub: Box::new(unbounded(*cap.sub)),
            ..cap
        }),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(unbounded).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(unbounded).collect()),
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(lit) => Hir::literal(lit.0),
        HirKind::Class(class) => Hir::class(class),
    }
}

fn is_unicode_word(look: Look) -> bool {
    matches!(
        look,
        Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATTERNS: [&str; 4] = [
        r"\b(?:I|[Ww]e|[Ii]t)\s+(?:fixed|found)\b",
        r"\bsk-[A-Za-z0-9]{20,}",
        r"(?i)\bpin\s+\S+",
        r"no-boundary-here",
    ];

    fn exact_ones(text: &str) -> Vec<usize> {
        let set = RegexSet::new(PATTERNS).unwrap();
        set.matches(text).into_iter().collect()
    }

    #[test]
    fn relaxed_answers_cover_every_exact_match_on_non_ascii_text() {
        let set = PatternSet::new(PATTERNS).unwrap();
        assert!(set.relaxed.is_some(), "the patterns have Unicode word boundaries");
        let texts = [
            "We fixed the flaky test — it only failed on a warm cache…",
            "It found the leak; key sk-ABCDEFGHIJKLMNOPQRSTUV was rotated “just in case”",
            "Pin café-utils to 1.2 → the build is green again",
            "Bit fixed nothing — éIt found nothing either",
            "no-boundary-here, naïvely",
        ];
        for text in texts {
            let got = set.matches(text);
            assert!(!got.exact, "non-ASCII text gets the relaxed answer: {text}");
            for i in exact_ones(text) {
                assert!(got.may_match(i), "pattern {i} matches {text:?} but was ruled out");
            }
            assert_eq!(set.may_match(text), (0..PATTERNS.len()).any(|i| got.may_match(i)));
        }
        // "Bit fixed": without its boundary "it fixed" is a maybe; the pattern itself says no.
        let text = "Bit fixed nothing — really";
        assert!(set.matches(text).may_match(0));
        assert!(!exact_ones(text).contains(&0));
    }

    #[test]
    fn ascii_text_gets_the_exact_answer() {
        let set = PatternSet::new(PATTERNS).unwrap();
        for text in [
            "Bit fixed nothing",
            "We fixed it",
            "pin requests==2.31",
            "nothing at all",
        ] {
            let got = set.matches(text);
            assert!(got.exact);
            let said: Vec<usize> = (0..PATTERNS.len()).filter(|&i| got.may_match(i)).collect();
            assert_eq!(said, exact_ones(text), "{text}");
        }
    }

    #[test]
    fn patterns_without_unicode_boundaries_need_no_relaxed_set() {
        let set = PatternSet::new([r"(?-u:\b)AKIA[0-9A-Z]{16}", "-----BEGIN"]).unwrap();
        assert!(set.relaxed.is_none());
        assert!(set.matches("key AKIA0123456789ABCDEF — rotated").exact);
    }
}
