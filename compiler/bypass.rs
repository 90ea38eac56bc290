//! Lessons that switch a safeguard off (S010).
//!
//! A workaround can be learned honestly (`pip install --break-system-packages` did make the
//! install pass, `terraform apply -lock=false` did get past a held lock) and still be one a team
//! would not hand to every agent. skillc does not decide that: the lesson compiles as its
//! evidence says. It names each active lesson that tells agents to use one of the policy's
//! `bypasses`, with what the safeguard is there for, so that a person decides.

use rayon::prelude::*;
use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};

use crate::diagnostics::{Diagnostic, codes};
use crate::model::{Kind, Lesson, Status};

/// One entry of `bypasses` in `rules/policy.yaml`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Bypass {
    /// A short stable name (`break-system-packages`), for evidence and for a team's own list.
    pub name: String,
    /// A regular expression over the lesson's text (a mechanical lesson: its working call).
    pub pattern: String,
    /// What the safeguard protects, said as what the workaround does.
    pub risk: String,
}

/// The `bypasses` patterns, compiled once: one pass of the set over a lesson tells whether any
/// matches; only then is the matching one run alone, to quote what it found.
#[derive(Clone, Debug, Default)]
pub struct Bypasses {
    any: Option<RegexSet>,
    each: Vec<Regex>,
}

impl PartialEq for Bypasses {
    fn eq(&self, _: &Bypasses) -> bool {
        true
    }
}

impl Bypasses {
    /// The matcher for `entries`; an entry whose pattern is no regular expression is an error
    /// naming it (the policy does not load, like a number out of range).
    pub fn new(entries: &[Bypass]) -> Result<Bypasses, String> {
        let each = (entries.iter())
            .map(|b| {
                Regex::new(&b.pattern)
                    .map_err(|e| format!("bypasses: `{}`: pattern is not a regular expression: {e}", b.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let any = (!entries.is_empty())
            .then(|| RegexSet::new(entries.iter().map(|b| &b.pattern)))
            .transpose()
            .map_err(|e| format!("bypasses: {e}"))?;
        Ok(Bypasses { any, each })
    }

    /// The first bypass `text` tells the reader to use, as (entry index, the words it matched).
    /// A match in a clause that says not to ("never use `--no-verify`", "`--force-with-lease`
    /// instead of `--force`") is advice against the bypass, and no finding.
    /// A call (`prose` false) is what was run: no word in it is advice against anything.
    fn told(&self, text: &str, prose: bool) -> Option<(usize, String)> {
        let set = self.any.as_ref()?;
        let found = set.matches(text);
        (found.iter()).find_map(|i| {
            (self.each[i].find_iter(text)).find_map(|m| {
                // What is told is the match's last word (`git push … --force`): the words
                // before it count as context, so "--force-with-lease instead of --force" is
                // read as advice against it, while a negating word inside a flag
                // (`--no-verify`) is not.
                let told = m
                    .as_str()
                    .trim_matches(|c: char| c.is_whitespace() || "`'\"".contains(c));
                let head = told.rfind(char::is_whitespace).map_or("", |k| &told[..k]);
                let before = format!("{}{head}", &text[..m.start()]);
                (!prose || !advised_against(&before)).then(|| (i, told.to_string()))
            })
        })
    }
}

/// Words that, earlier in a clause, make what follows something not to do.
const AGAINST: &[&str] = &[
    "not",
    "no",
    "never",
    "nor",
    "cannot",
    "avoid",
    "avoiding",
    "without",
    "instead",
    "rather",
    "stop",
    "neither",
    "forbid",
    "forbidden",
    "ban",
    "banned",
    "disallow",
    "don't",
    "dont",
];

/// Words that start a new clause: a negation before them does not reach past them ("don't wait
/// for the lock, but pass -lock=false").
const CLAUSE_BREAKS: &[&str] = &["but", "so", "then", "otherwise", "however", "although", "though"];

/// Does the clause ending at `before` (the text before a match) say not to do what follows?
fn advised_against(before: &str) -> bool {
    let clause = before.rsplit(['.', ';', '!', '?', '\n']).next().unwrap_or(before);
    let words: Vec<String> = (clause.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect();
    let start = (words.iter())
        .rposition(|w| CLAUSE_BREAKS.contains(&w.as_str()))
        .map_or(0, |i| i + 1);
    words[start..]
        .iter()
        .any(|w| AGAINST.contains(&w.as_str()) || w.ends_with("n't"))
}

/// An S010 warning for every active lesson that tells agents to use a bypass, in ledger order.
/// A mechanical lesson is read by its working call (its text also quotes the failing one); an
/// avoid or watch lesson warns against what it names, so only do lessons are read. A pinned
/// lesson is one the user chose to keep: it is not named again.
pub fn findings(lessons: &[Lesson], bypasses: &[Bypass], matcher: &Bypasses) -> Vec<Diagnostic> {
    lessons
        .par_iter()
        .filter(|l| l.status == Status::Active && l.kind == Kind::Do && !l.pinned)
        .filter_map(|l| {
            let (i, matched) = match l.working.as_deref() {
                Some(call) => matcher.told(call, false)?,
                None => matcher.told(&l.text, true)?,
            };
            let b = &bypasses[i];
            let what = if l.rule { "rule" } else { "lesson" };
            Some(
                Diagnostic::new(
                    codes::BYPASSES_SAFEGUARD,
                    format!(
                        "{what} {} tells agents to use `{matched}`, which {}",
                        l.id, b.risk
                    ),
                )
                .subject(&l.id)
                .domain(&l.domain)
                .with("bypass", b.name.as_str())
                .with("matched", matched)
                .with("rule", l.rule)
                .with("reinforcement", l.reinforcement),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(entries: &[(&str, &str)]) -> Bypasses {
        let entries: Vec<Bypass> = (entries.iter())
            .map(|(name, pattern)| Bypass {
                name: name.to_string(),
                pattern: pattern.to_string(),
                risk: String::new(),
            })
            .collect();
        Bypasses::new(&entries).unwrap()
    }

    impl Bypasses {
        fn told_prose(&self, text: &str) -> Option<(usize, String)> {
            self.told(text, true)
        }
    }

    #[test]
    fn a_call_is_read_as_run() {
        let m = matcher(&[("no-verify", r"--no-verify\b")]);
        let call = r#"{"command":"git commit -m \"don't merge yet\" --no-verify"}"#;
        assert!(m.told(call, false).is_some());
        assert!(m.told(call, true).is_none());
    }

    #[test]
    fn advice_against_a_bypass_is_no_finding() {
        let m = matcher(&[
            ("no-verify", r"--no-verify\b"),
            (
                "force-push",
                r"\bgit\s+push\b[^\n;&|]*?\s(?:--force|-f)(?:\s|$|`)",
            ),
        ]);
        assert!(
            m.told_prose("Commit with --no-verify when the pre-commit hook hangs")
                .is_some()
        );
        assert!(
            m.told_prose("Never commit with --no-verify; fix the hook instead")
                .is_none()
        );
        assert!(
            m.told_prose("Don't skip hooks with `git commit --no-verify`")
                .is_none()
        );
        assert!(
            m.told_prose("If the hook is slow, do not reach for --no-verify")
                .is_none()
        );
        // A negation in an earlier clause does not reach the bypass.
        assert!(
            m.told_prose("Don't wait for the hook server, but commit with --no-verify")
                .is_some()
        );
        assert!(
            m.told_prose("The hook is not needed here. Commit with --no-verify")
                .is_some()
        );
        // The same word later is no negation of it.
        assert!(
            m.told_prose("Use `git push --force` when the remote branch is not shared")
                .is_some()
        );
        assert!(
            m.told_prose("Use git push --force-with-lease instead of git push --force")
                .is_none()
        );
    }

    #[test]
    fn a_pattern_that_does_not_compile_names_its_entry() {
        let bad = [Bypass {
            name: "tls".into(),
            pattern: "verify=(False".into(),
            risk: String::new(),
        }];
        let err = Bypasses::new(&bad).unwrap_err();
        assert!(err.contains("`tls`"), "{err}");
    }
}
