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
//! Most such texts have no non-ASCII *word* character: their non-ASCII is punctuation. On
//! them a Unicode word boundary is exactly an ASCII one (`(?-u:\b)`, which the DFA does
//! evaluate), so each pattern has an ASCII twin, the same pattern with its boundaries made
//! ASCII, that answers exactly at DFA speed (`Pattern`, and the twin set in `PatternSet`).
//!
//! For the rest (a text with `é` or `ß` in it) there are the relaxed patterns: the same
//! patterns with every Unicode word boundary removed. Removing a zero-width assertion only
//! lets a pattern match more, so a pattern its relaxed form rules out cannot match, and the
//! relaxed forms run as DFAs on any text. Their yes is only a maybe: the caller confirms it
//! with the pattern itself.
//!
//! The twins and the relaxed patterns are built the first time a text needs them: building
//! them cost as much as building the patterns (about half of loading the rules, a fixed
//! cost of every run), and a corpus that is all ASCII never asks for them.

use std::sync::OnceLock;

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

/// A policy regex and its ASCII twin: `is_match` and `find_iter` answer as the regex does,
/// at DFA speed on every text whose word characters are all ASCII.
#[derive(Clone, Debug)]
pub struct Pattern {
    regex: Regex,
    /// Built on first use; `None` when the regex has no Unicode word boundary (it is a DFA
    /// already) or its twin would not build.
    ascii: OnceLock<Option<Regex>>,
}

impl Pattern {
    pub fn new(pattern: &str) -> Result<Pattern, regex::Error> {
        Ok(Pattern {
            regex: self::regex(pattern)?,
            ascii: OnceLock::new(),
        })
    }

    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// The regex that answers for `text` fastest, and exactly.
    fn for_text(&self, text: &str) -> &Regex {
        if text.is_ascii() {
            return &self.regex;
        }
        let twin = self
            .ascii
            .get_or_init(|| ascii_twins(&[self.regex.as_str()]).and_then(|t| self::regex(&t[0]).ok()));
        match twin {
            Some(twin) if ascii_words(text) => twin,
            _ => &self.regex,
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.for_text(text).is_match(text)
    }

    pub fn find_iter<'r, 't>(&'r self, text: &'t str) -> regex::Matches<'r, 't> {
        self.for_text(text).find_iter(text)
    }
}

/// Whether every word character of `text` is ASCII, so that a Unicode word boundary in it is
/// exactly an ASCII one (an em dash, a curly quote or `…` is no word character).
fn ascii_words(text: &str) -> bool {
    let mut rest = text;
    // Jump from one non-ASCII byte to the next: decoding every character costs more.
    while let Some(at) = first_non_ascii(rest.as_bytes()) {
        let Some(c) = rest[at..].chars().next() else {
            return true;
        };
        if !matches!(regex_syntax::try_is_word_character(c), Ok(false)) {
            return false;
        }
        rest = &rest[at + c.len_utf8()..];
    }
    true
}

/// Where the first non-ASCII byte of `bytes` is, found eight bytes at a time: a byte at a time,
/// `ascii_words` cost six times as many instructions (most non-ASCII texts have one `…` or a
/// dash in a few hundred bytes).
fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let high = u64::from_le_bytes(word.try_into().expect("eight bytes")) & HIGH;
        if high != 0 {
            // Little-endian: the lowest set bit belongs to the first byte.
            return Some(at + high.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    (words.remainder().iter())
        .position(|b| !b.is_ascii())
        .map(|i| at + i)
}

/// The exact set, its ASCII twin and the relaxed patterns over one pattern list (indices are
/// the patterns' places in the list); the twin and the relaxed patterns are built on first
/// use. The default matches nothing.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    exact: RegexSet,
    /// The patterns with ASCII word boundaries, exact on a text `ascii_words` accepts. `None`
    /// when no pattern has a Unicode word boundary, or when a twin would not build.
    ascii: OnceLock<Option<RegexSet>>,
    /// One regex per pattern, each its own small DFA: joined in one set, the relaxed patterns
    /// (which may start at any letter) made a product automaton whose states were new on
    /// almost every text, and building them cost more than the search. `None` when no
    /// pattern has a Unicode word boundary (the exact set is a DFA already) or a pattern
    /// could not be relaxed (the exact set answers; slower, never wrong).
    relaxed: OnceLock<Option<Vec<Regex>>>,
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
        let exact = regex::RegexSetBuilder::new(patterns)
            .dfa_size_limit(DFA_CACHE)
            .build()?;
        Ok(PatternSet {
            exact,
            ascii: OnceLock::new(),
            relaxed: OnceLock::new(),
        })
    }

    fn patterns(&self) -> Vec<&str> {
        self.exact.patterns().iter().map(String::as_str).collect()
    }

    fn ascii(&self) -> Option<&RegexSet> {
        let built = self.ascii.get_or_init(|| {
            let twins = ascii_twins(&self.patterns())?;
            (regex::RegexSetBuilder::new(twins))
                .dfa_size_limit(DFA_CACHE)
                .build()
                .ok()
        });
        built.as_ref()
    }

    fn relaxed(&self) -> Option<&[Regex]> {
        let built = self.relaxed.get_or_init(|| {
            let relaxed = relaxed(&self.patterns())?;
            relaxed
                .iter()
                .map(|p| regex(p))
                .collect::<Result<Vec<_>, _>>()
                .ok()
        });
        built.as_deref()
    }

    /// The engine that answers for `text`: the exact set on ASCII text, the twin set where
    /// word characters are ASCII, else the relaxed patterns, else (every pattern is a DFA
    /// already, or none could be relaxed) the exact set. Each answers exactly as the exact
    /// set would, the relaxed patterns up to their maybes.
    fn route(&self, text: &str) -> Route<'_> {
        if text.is_ascii() {
            return Route::Exact(&self.exact);
        }
        if ascii_words(text)
            && let Some(twins) = self.ascii()
        {
            return Route::Exact(twins);
        }
        match self.relaxed() {
            Some(relaxed) => Route::Relaxed(relaxed),
            None => Route::Exact(&self.exact),
        }
    }

    /// The patterns that may match `text` (exactly those that do, when `exact`).
    pub fn matches(&self, text: &str) -> Matched {
        match self.route(text) {
            Route::Exact(set) => Matched {
                may: May::Set(set.matches(text)),
                exact: true,
            },
            Route::Relaxed(relaxed) => Matched {
                may: May::Each(relaxed.iter().map(|r| r.is_match(text)).collect()),
                exact: false,
            },
        }
    }

    /// `false` only when no pattern matches `text`; `true` may be a maybe on a text with a
    /// non-ASCII word character.
    pub fn may_match(&self, text: &str) -> bool {
        match self.route(text) {
            Route::Exact(set) => set.is_match(text),
            Route::Relaxed(relaxed) => relaxed.iter().any(|r| r.is_match(text)),
        }
    }
}

enum Route<'s> {
    Exact(&'s RegexSet),
    Relaxed(&'s [Regex]),
}

/// The patterns with each Unicode word boundary made ASCII, printed back as regexes; `None`
/// as for `relaxed`.
fn ascii_twins(patterns: &[&str]) -> Option<Vec<String>> {
    rewritten(patterns, |look| match look {
        Look::WordUnicode => Hir::look(Look::WordAscii),
        Look::WordUnicodeNegate => Hir::look(Look::WordAsciiNegate),
        Look::WordStartUnicode => Hir::look(Look::WordStartAscii),
        Look::WordEndUnicode => Hir::look(Look::WordEndAscii),
        Look::WordStartHalfUnicode => Hir::look(Look::WordStartHalfAscii),
        Look::WordEndHalfUnicode => Hir::look(Look::WordEndHalfAscii),
        other => Hir::look(other),
    })
}

/// The patterns with their Unicode word boundaries removed, printed back as regexes; `None`
/// when none has one, or when a pattern does not parse here as the regex crate parsed it.
fn relaxed(patterns: &[&str]) -> Option<Vec<String>> {
    rewritten(patterns, |look| match look {
        look if is_unicode_word(look) => Hir::empty(),
        other => Hir::look(other),
    })
}

/// The patterns with each Unicode word-boundary assertion rewritten by `with`, printed back as
/// regexes; `None` when no pattern has one or one does not parse.
fn rewritten(patterns: &[&str], with: impl Fn(Look) -> Hir + Copy) -> Option<Vec<String>> {
    let hirs: Vec<Hir> = (patterns.iter())
        .map(|p| regex_syntax::Parser::new().parse(p).ok())
        .collect::<Option<_>>()?;
    let bounded = |h: &Hir| h.properties().look_set().contains_word_unicode();
    hirs.iter()
        .any(bounded)
        .then(|| hirs.into_iter().map(|h| rewrite(h, with).to_string()).collect())
}

/// `hir` with every Unicode word-boundary assertion replaced by `with(look)`.
fn rewrite(hir: Hir, with: impl Fn(Look) -> Hir + Copy) -> Hir {
    if !hir.properties().look_set().contains_word_unicode() {
        return hir;
    }
    match hir.into_kind() {
        HirKind::Look(look) => with(look),
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(rewrite(*rep.sub, with)),
            ..rep
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            sub: Box::new(rewrite(*cap.sub, with)),
            ..cap
        }),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(|h| rewrite(h, with)).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(|h| rewrite(h, with)).collect()),
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
        assert!(
            set.relaxed().is_some(),
            "the patterns have Unicode word boundaries"
        );
        // Each has a non-ASCII word character, where the ASCII twins would not be exact.
        let texts = [
            "We fixed the flaky test in Zürich — it only failed on a warm cache…",
            "It found the leak; key sk-ABCDEFGHIJKLMNOPQRSTUV was rotated “just in case” (señor)",
            "Pin café-utils to 1.2 → the build is green again",
            "Bit fixed nothing — éIt found nothing either",
            "no-boundary-here, naïvely",
        ];
        for text in texts {
            let got = set.matches(text);
            assert!(
                !got.exact,
                "text with a non-ASCII letter gets the relaxed answer: {text}"
            );
            for i in exact_ones(text) {
                assert!(got.may_match(i), "pattern {i} matches {text:?} but was ruled out");
            }
            assert_eq!(set.may_match(text), (0..PATTERNS.len()).any(|i| got.may_match(i)));
        }
        // "Bit fixed": without its boundary "it fixed" is a maybe; the pattern itself says no.
        let text = "Bit fixed nothing — réally";
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
    fn punctuation_only_non_ascii_text_gets_the_exact_answer_from_the_twins() {
        let set = PatternSet::new(PATTERNS).unwrap();
        assert!(set.ascii().is_some(), "every pattern has an ASCII twin");
        for text in [
            "We fixed the flaky test — it only failed on a warm cache…",
            "It found the leak; key sk-ABCDEFGHIJKLMNOPQRSTUV was rotated “just in case”",
            "Bit fixed nothing — really",
            "“pin” → pin requests==2.31 …",
        ] {
            let got = set.matches(text);
            assert!(got.exact, "{text}");
            let said: Vec<usize> = (0..PATTERNS.len()).filter(|&i| got.may_match(i)).collect();
            assert_eq!(said, exact_ones(text), "{text}");
        }
        // A non-ASCII letter is a word character: "éIt found" has no boundary before "It".
        assert!(!set.matches("Bit fixed nothing — éIt found nothing").exact);
    }

    #[test]
    fn a_pattern_answers_as_its_regex_on_any_text() {
        let texts = [
            "We fixed the flaky test — it only failed on a warm cache…",
            "Bit fixed nothing — éIt found nothing either",
            "naïve: we found it — and we fixed it, twice",
            "Pin café-utils to 1.2 → pin requests==2.31",
            "plain ASCII: we found it",
        ];
        for p in PATTERNS.iter().chain(&[r"\Bixed", r"(?i)we"]) {
            let pattern = Pattern::new(p).unwrap();
            let regex = Regex::new(p).unwrap();
            for text in texts {
                assert_eq!(pattern.is_match(text), regex.is_match(text), "{p} on {text}");
                let spans = |it: regex::Matches| it.map(|m| m.range()).collect::<Vec<_>>();
                assert_eq!(
                    spans(pattern.find_iter(text)),
                    spans(regex.find_iter(text)),
                    "{p} on {text}"
                );
            }
        }
    }

    #[test]
    fn twins_and_relaxed_patterns_are_built_only_when_a_text_needs_them() {
        let set = PatternSet::new(PATTERNS).unwrap();
        let pattern = Pattern::new(PATTERNS[0]).unwrap();
        for text in ["We fixed it", "pin requests==2.31"] {
            set.matches(text);
            pattern.is_match(text);
        }
        assert!(set.ascii.get().is_none() && set.relaxed.get().is_none());
        assert!(pattern.ascii.get().is_none());
        // Non-ASCII punctuation only: the twins answer, nothing is relaxed.
        assert!(set.matches("We fixed it — twice").exact);
        assert!(pattern.is_match("We fixed it — twice"));
        assert!(set.ascii.get().is_some_and(Option::is_some));
        assert!(pattern.ascii.get().is_some_and(Option::is_some));
        assert!(set.relaxed.get().is_none());
        // A non-ASCII letter needs the relaxed patterns.
        assert!(!set.matches("Zürich: we fixed it").exact);
        assert!(set.relaxed.get().is_some_and(Option::is_some));
    }

    #[test]
    fn first_non_ascii_finds_the_first_high_byte_wherever_it_is() {
        for len in 0..40 {
            let ascii = "a".repeat(len);
            assert_eq!(first_non_ascii(ascii.as_bytes()), None);
            for at in 0..len {
                let mut bytes = ascii.clone().into_bytes();
                bytes[at] = 0xC3;
                if at + 1 < len {
                    bytes[at + 1] = 0x80;
                }
                assert_eq!(first_non_ascii(&bytes), Some(at), "length {len}, at {at}");
            }
        }
        assert_eq!(first_non_ascii("naïve — café".as_bytes()), Some(2));
    }

    #[test]
    fn patterns_without_unicode_boundaries_need_no_relaxed_set() {
        let set = PatternSet::new([r"(?-u:\b)AKIA[0-9A-Z]{16}", "-----BEGIN"]).unwrap();
        assert!(set.relaxed().is_none());
        assert!(set.ascii().is_none());
        assert!(set.matches("key AKIA0123456789ABCDEF — rotated").exact);
    }
}
