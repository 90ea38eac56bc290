//! The pairwise measure: "same lesson, different wording" over two analyses.

use super::lexicon::{Analysis, Lexicon, Measure, Token};

/// Do two technical tokens name the same thing? Equal, or one is a `.`/`/`-suffix of the
/// other (`react.useeffect` ~ `useeffect`, `src/app.py` ~ `app.py`).
pub(crate) fn tech_match(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    long.ends_with(short) && {
        let cut = long.len() - short.len();
        matches!(long.as_bytes()[cut - 1], b'.' | b'/')
    }
}

fn has_match(t: &Token, other: &Analysis) -> bool {
    if t.technical {
        other
            .tokens
            .iter()
            .any(|o| o.technical && tech_match(&t.text, &o.text) || o.text == t.text)
    } else {
        other
            .tokens
            .binary_search_by(|o| o.text.as_str().cmp(&t.text))
            .is_ok()
    }
}

/// The overlap score for `shared` matched tokens out of `na` and `nb`.
pub(crate) fn score(measure: Measure, shared_a: usize, shared_b: usize, na: usize, nb: usize) -> f64 {
    if na == 0 || nb == 0 {
        return 0.0;
    }
    let shared = (shared_a + shared_b) as f64 / 2.0;
    match measure {
        Measure::Dice => 2.0 * shared / (na + nb) as f64,
        Measure::Jaccard => shared / (na as f64 + nb as f64 - shared),
        Measure::Overlap => shared / na.min(nb) as f64,
    }
}

/// Why two texts are, or are not, the same lesson.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Same lesson, with the overlap score.
    Same(f64),
    /// A text has no content tokens.
    Empty,
    /// Both sides carry technical tokens the other lacks (one example from each side).
    Technical(String, String),
    /// An antonym pair splits them.
    Antonym(String, String),
    /// Shared words play opposite roles (negated on one side, asserted on the other, …).
    Roles,
    /// They differ only by swapping a few words.
    MinimalPair,
    /// The content overlap is below the threshold.
    Overlap(f64),
}

/// `Some(score)` when `a` and `b` are the same lesson, else `None`.
pub(crate) fn compare(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Option<f64> {
    match verdict(lx, a, b) {
        Verdict::Same(s) => Some(s),
        _ => None,
    }
}

pub(crate) fn verdict(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Verdict {
    if a.tokens.is_empty() || b.tokens.is_empty() {
        return Verdict::Empty;
    }
    // 1. Technical tokens agree: at most one side mentions technical tokens the other lacks.
    let ua = a.tokens.iter().find(|t| t.technical && !has_match(t, b));
    let ub = b.tokens.iter().find(|t| t.technical && !has_match(t, a));
    if let (Some(x), Some(y)) = (ua, ub) {
        return Verdict::Technical(x.text.clone(), y.text.clone());
    }
    // 2. Antonyms agree.
    for (i, (&x, &y)) in a.antonyms.iter().zip(&b.antonyms).enumerate() {
        if x != 0 && y != 0 && x != y {
            let (w1, w2) = &lx.antonyms[i];
            return Verdict::Antonym(w1.clone(), w2.clone());
        }
    }
    // 3. Not a minimal pair (cheap, and common among near-identical texts).
    if minimal_pair(a, b, lx.max_substitution) {
        return Verdict::MinimalPair;
    }
    // 4. Roles agree: shared words asserted on one side and negated (or in the other
    //    before/after clause) on the other weigh against.
    let (mut agree, mut disagree) = (0u32, 0u32);
    for t in &a.tokens {
        let Ok(j) = b.tokens.binary_search_by(|o| o.text.as_str().cmp(&t.text)) else {
            continue;
        };
        let (Some(ra), Some(rb)) = (t.role, b.tokens[j].role) else {
            continue;
        };
        let w = if t.technical { 2 } else { 1 };
        if ra == rb {
            agree += w;
        } else {
            disagree += w;
        }
    }
    if disagree > 0 && disagree >= agree {
        return Verdict::Roles;
    }
    // 5. Content overlap.
    let sa = a.tokens.iter().filter(|t| has_match(t, b)).count();
    let sb = b.tokens.iter().filter(|t| has_match(t, a)).count();
    let s = score(lx.measure, sa, sb, a.tokens.len(), b.tokens.len());
    if s >= lx.threshold {
        Verdict::Same(s)
    } else {
        Verdict::Overlap(s)
    }
}

fn same_token(x: &(String, bool), y: &(String, bool)) -> bool {
    x.0 == y.0 || (x.1 && y.1 && tech_match(&x.0, &y.0))
}

/// The two token sequences are equal but for one swapped run in the same place: a common
/// prefix and suffix, and between them 1..=k tokens on each side that the other side's run
/// does not contain ("set memory [limits] on every container" vs "… [requests] …").
fn minimal_pair(a: &Analysis, b: &Analysis, k: usize) -> bool {
    if k == 0 {
        return false;
    }
    let (x, y) = (&a.seq, &b.seq);
    let mut p = 0;
    while p < x.len() && p < y.len() && same_token(&x[p], &y[p]) {
        p += 1;
    }
    let mut s = 0;
    while s < x.len() - p && s < y.len() - p && same_token(&x[x.len() - 1 - s], &y[y.len() - 1 - s]) {
        s += 1;
    }
    let (mx, my) = (&x[p..x.len() - s], &y[p..y.len() - s]);
    (1..=k).contains(&mx.len())
        && (1..=k).contains(&my.len())
        && !mx.iter().any(|t| my.iter().any(|u| same_token(t, u)))
}
