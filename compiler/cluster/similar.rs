//! The pairwise measure: "same lesson, different wording" over two analyses.

use std::cmp::Ordering;

use super::lexicon::{Analysis, Clauses, Lexicon, Measure, Role, Token, WORD_BREAK, head, is_flag, text_eq};

/// Do two technical tokens name the same thing? Equal, or one is a `.`/`/`-suffix of the
/// other (`react.useeffect` ~ `useeffect`, `src/app.py` ~ `app.py`), or one is the other
/// flag with a value.
#[inline]
pub(crate) fn tech_match(a: &str, b: &str) -> bool {
    if text_eq(a, b) {
        return true;
    }
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    // The separator first: it rules out most pairs without comparing the texts.
    let cut = long.len() - short.len();
    if cut == 0 {
        return false;
    }
    let suffix = matches!(long.as_bytes()[cut - 1], b'.' | b'/') && long.ends_with(short);
    // A flag with its value names the flag without one: `-xx:maxrampercentage=75` ~
    // `-xx:maxrampercentage` (two values, `=75` and `=50`, still differ).
    let valued = short.starts_with('-') && long.as_bytes()[short.len()] == b'=' && long.starts_with(short);
    suffix || valued
}

/// `tech_match` of two tokens' texts. Their lengths, heads and tails rule out almost every
/// pair first (each test a necessary condition of the one `tech_match` makes), so that
/// neither text, each in its own allocation, is read unless the two may match.
#[inline]
pub(crate) fn tech_match_tokens(a: &Token, b: &Token) -> bool {
    let (long, short) = if a.text.len() > b.text.len() {
        (a, b)
    } else {
        (b, a)
    };
    if long.text.len() == short.text.len() {
        return a.same_text(b);
    }
    (may_be_suffix(long, short) || may_be_valued(long, short)) && tech_match(&a.text, &b.text)
}

/// Can `short` be a `.`/`/`-suffix of the longer `long`? Their last `min(8, short)` bytes
/// agree, and for a short text of at most seven bytes the byte before it in `long` (in its
/// tail) is the separator.
fn may_be_suffix(long: &Token, short: &Token) -> bool {
    let n = short.text.len();
    let mask = if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
    (long.tail ^ short.tail) & mask == 0 && (n >= 8 || matches!((long.tail >> (8 * n)) as u8, b'.' | b'/'))
}

/// Can the longer `long` be flag `short` with a value? `short` starts with `-`, the heads
/// agree on its first `min(8, short)` bytes, and for a short text of at most seven bytes the
/// byte after it in `long` (in its head) is `=`.
fn may_be_valued(long: &Token, short: &Token) -> bool {
    let n = short.text.len();
    let k = n.min(8);
    n > 0
        && (short.head >> 56) as u8 == b'-'
        && (long.head ^ short.head) >> (64 - 8 * k) == 0
        && (n >= 8 || (long.head >> (56 - 8 * n)) as u8 == b'=')
}

/// Does the other side mention technical token `t`: the same text, or a technical token
/// that names the same thing?
fn tech_has_match(t: &Token, other: &Analysis) -> bool {
    other
        .tokens
        .iter()
        .any(|o| o.same_text(t) || o.technical && tech_match_tokens(t, o))
}

/// Does a side take (pass, in a clause that states the rule) a technical token it does not
/// also refuse?
fn takes_technical(side: &Analysis) -> bool {
    side.tokens.iter().any(|t| t.technical && passes(t))
}

/// The first technical token of `side` that `other` lacks in the rule `side` states, and the
/// first only its reason names ("…, because tags like node:20-alpine are moved"). A token the
/// side refuses while it takes another technical token is neither: "push with
/// --force-with-lease, never plain --force" names the alternative it turns down, and a side
/// that says "git push --force-with-lease" without it states the same rule. A side that only
/// refuses ("never run npm install in CI") names what it refuses.
fn unmatched<'a>(side: &'a Analysis, other: &Analysis) -> (Option<&'a Token>, Option<&'a Token>) {
    let takes = takes_technical(side);
    let (mut rule, mut reason) = (None, None);
    for t in side
        .tokens
        .iter()
        .filter(|t| t.technical && !(takes && refuses(t)))
    {
        let slot = if t.explains { &mut reason } else { &mut rule };
        if slot.is_none() && !tech_has_match(t, other) {
            *slot = Some(t);
            if rule.is_some() && reason.is_some() {
                break;
            }
        }
    }
    (rule, reason)
}

/// What step 1 (`unmatched`) reads of a text, as 64-bit sets of texts (a text's bit from
/// `name_bits`), for a caller that judges many pairs: most pairs a walk judges fail there,
/// each side naming a tool the other lacks, which `unmatched` finds by scanning the other
/// side's tokens for each technical token. `names` holds every token's text and, for a
/// technical token, the texts `tech_match` can find it under (`name_bits`); a token whose own
/// such set meets no bit of the other side's `names` has no match there. `rule` and `reason`
/// are those sets of the first technical tokens `unmatched` reads (not an alternative the
/// side turns down), in the rule and in the reason (0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TechBits {
    names: u64,
    rule: [u64; 3],
    reason: [u64; 2],
}

impl TechBits {
    pub(crate) fn of(a: &Analysis) -> TechBits {
        let mut bits = TechBits::default();
        let takes = takes_technical(a);
        let (mut r, mut x) = (0, 0);
        for t in &a.tokens {
            if !t.technical {
                bits.names |= name_bit(t.text.as_bytes());
                continue;
            }
            let own = name_bits(&t.text);
            bits.names |= own;
            if takes && refuses(t) {
                continue;
            }
            let (slots, n) = if t.explains {
                (&mut bits.reason[..], &mut x)
            } else {
                (&mut bits.rule[..], &mut r)
            };
            if let Some(slot) = slots.get_mut(*n) {
                *slot = own;
                *n += 1;
            }
        }
        bits
    }

    /// Does step 1 surely veto the pair: both sides have a technical token that no token of
    /// the other can match, both in the rule or both in the reason? `false` when it may not.
    pub(crate) fn vetoed(a: &TechBits, b: &TechBits) -> bool {
        let lacks = |own: &[u64], other: u64| own.iter().any(|&t| t != 0 && t & other == 0);
        lacks(&a.rule, b.names) && lacks(&b.rule, a.names)
            || lacks(&a.reason, b.names) && lacks(&b.reason, a.names)
    }
}

/// A text's bit in `TechBits` (distinct texts may share one; never 0).
fn name_bit(text: &[u8]) -> u64 {
    let mut h = super::fx::Fx::default();
    std::hash::Hasher::write(&mut h, text);
    1 << (std::hash::Hasher::finish(&h).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// The bits of every text `tech_match` can match technical token `text` with: itself, each
/// part after a `.` or `/` (a longer token ends with it, or it ends with the other), and for a
/// flag each part before an `=` (it is that flag with a value, or the other is it with one).
fn name_bits(text: &str) -> u64 {
    let b = text.as_bytes();
    let mut bits = name_bit(b);
    for (i, &c) in b.iter().enumerate() {
        if c == b'.' || c == b'/' {
            bits |= name_bit(&b[i + 1..]);
        } else if c == b'=' && b[0] == b'-' {
            bits |= name_bit(&b[..i]);
        }
    }
    bits
}

/// Calls `f` for each pair of tokens with the same text: both lists are sorted by text, each
/// text once, so one merge walk finds them all.
fn same_text<'a>(a: &'a [Token], b: &'a [Token], mut f: impl FnMut(&'a Token, &'a Token)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp_text(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                f(&a[i], &b[j]);
                i += 1;
                j += 1;
            }
        }
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

/// Why two texts are, or are not, the same lesson. The words are `String`s for callers and
/// `&str` inside clustering, which only needs the outcome and should not copy them.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict<W = String> {
    /// Same lesson, with the overlap score.
    Same(f64),
    /// A text has no content tokens.
    Empty,
    /// Both sides carry technical tokens the other lacks (one example from each side).
    Technical(W, W),
    /// A flag one side passes and the other does not: never names it ("run npm audit fix
    /// --force" vs "run npm audit fix"), or leaves it out ("with --release" vs "without
    /// --release"), or, in the same words, a thing one side takes and the other leaves out
    /// ("set session cookies with the Secure flag" vs "… without the Secure flag"). The word
    /// is the flag, or the first word left out.
    Flag(W),
    /// One side runs a command through a program the other never names, while the two share
    /// a listed program or command ("uv pip install" vs "pip install": a wrapper changes which
    /// environment the command runs in; "npm test, then docker build" vs "npm test"). The word
    /// is the command.
    Command(W),
    /// An antonym pair splits them.
    Antonym(W, W),
    /// Shared words play opposite roles (negated on one side, asserted on the other, …).
    Roles,
    /// They differ only by swapping a few words.
    MinimalPair,
    /// The content overlap is below the threshold.
    Overlap(f64),
    /// Otherwise the same lesson, but one side negates a clause the other states the other
    /// way round, in mostly the same words ("never run X as root when it binds port 80" vs
    /// "run X as root when it binds port 80"): a lesson and its negation. The word is the
    /// clause's first word the two share.
    Polarity(W),
}

impl Verdict<&str> {
    fn into_owned(self) -> Verdict {
        match self {
            Verdict::Same(s) => Verdict::Same(s),
            Verdict::Empty => Verdict::Empty,
            Verdict::Technical(x, y) => Verdict::Technical(x.into(), y.into()),
            Verdict::Flag(f) => Verdict::Flag(f.into()),
            Verdict::Command(c) => Verdict::Command(c.into()),
            Verdict::Antonym(x, y) => Verdict::Antonym(x.into(), y.into()),
            Verdict::Polarity(w) => Verdict::Polarity(w.into()),
            Verdict::Roles => Verdict::Roles,
            Verdict::MinimalPair => Verdict::MinimalPair,
            Verdict::Overlap(s) => Verdict::Overlap(s),
        }
    }
}

/// `Some(score)` when `a` and `b` are the same lesson, else `None`.
pub(crate) fn compare(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Option<f64> {
    match judge(lx, a, b) {
        Verdict::Same(s) => Some(s),
        _ => spelled_out(lx, a, b),
    }
}

/// `compare` of a pair `spelled_out` finds nothing in (`SpellBits::may_spell` is false): the
/// judgement alone.
pub(crate) fn judged(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Option<f64> {
    match judge(lx, a, b) {
        Verdict::Same(s) => Some(s),
        _ => None,
    }
}

/// Two texts that are one lesson once an acronym one writes is read as the words the other
/// spells it out in ("mask PII in application logs" / "mask personally identifiable
/// information in the app logs", "set a short TTL" / "lower the time to live"): the score,
/// judged with the spelled-out words replaced by the acronym (`spell`). Only for a pair not
/// already one lesson, so that the common case costs one flag test per token.
pub(crate) fn spelled_out(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Option<f64> {
    let try_side = |x: &Analysis, y: &Analysis, x_first: bool| {
        let y2 = spell(x, y)?;
        let v = if x_first {
            judge(lx, x, &y2)
        } else {
            judge(lx, &y2, x)
        };
        match v {
            Verdict::Same(s) => Some(s),
            _ => None,
        }
    };
    try_side(a, b, true).or_else(|| try_side(b, a, false))
}

/// `other` with the words that spell out an acronym of `side` (one `side` writes and `other`
/// lacks) replaced by that acronym, or `None` when it spells none out. The words are plain
/// tokens `side` lacks, next to each other in `other`'s order, whose first letters are the
/// acronym's, one letter of which (not the first or last) may stand for a stop word the
/// analysis dropped ("TTL": "time to live" is `time`, `live`). Two words at least: "PR" is
/// "pull request", never one word that starts with a `p`.
fn spell(side: &Analysis, other: &Analysis) -> Option<Analysis> {
    let plain = |k: usize| {
        let (i, tech) = other.seq[k];
        (!tech && !other.tokens[i as usize].technical && side.find(&other.tokens[i as usize]).is_none())
            .then_some(i as usize)
    };
    for t in side.tokens.iter().filter(|t| t.acronym && !t.technical) {
        if other.find(t).is_some() {
            continue;
        }
        let letters = t.text.as_bytes();
        for start in 0..other.seq.len() {
            let (mut j, mut k, mut skipped) = (0usize, start, false);
            let mut run: Vec<usize> = Vec::new();
            while j < letters.len() && k < other.seq.len() {
                // The letter first: most words start with another, and `plain` searches `side`.
                let initial = other.tokens[other.seq[k].0 as usize].text.as_bytes().first();
                let letter = initial == Some(&letters[j]);
                if !letter && (skipped || j == 0 || j + 1 == letters.len()) {
                    break;
                }
                let Some(i) = plain(k) else { break };
                if letter {
                    run.push(i);
                    j += 1;
                    k += 1;
                } else {
                    skipped = true;
                    j += 1;
                }
            }
            if j == letters.len() && run.len() >= 2 && run.len() + usize::from(skipped) == letters.len() {
                return Some(replaced(other, &run, t));
            }
        }
    }
    None
}

/// What `spell` needs of a text and what it can find in one, as sets of letter pairs (128
/// bits, a pair's bit from `pair_bit`), for a caller that compares many pairs: `spell(side,
/// other)` finds a run only where `need` of `side` and `pairs` of `other` share a bit. A run
/// starts with two plain words next to each other in `other`'s order, the first starting with
/// the acronym's first letter and the second with its second letter, or its third when the
/// second stands for a dropped stop word. Most pairs a walk compares share no such pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpellBits {
    /// The first two letters of each acronym (`Token::acronym`), and the first and third.
    need: u128,
    /// The first letters of each two plain words next to each other.
    pairs: u128,
}

impl SpellBits {
    pub(crate) fn of(a: &Analysis) -> SpellBits {
        let mut bits = SpellBits::default();
        for t in a.tokens.iter().filter(|t| t.acronym && !t.technical) {
            if let [first, second, rest @ ..] = t.text.as_bytes() {
                bits.need |= pair_bit(*first, *second);
                if let Some(third) = rest.first() {
                    bits.need |= pair_bit(*first, *third);
                }
            }
        }
        // A word's first byte is its head's top byte (0 for an empty text, which no acronym
        // letter is): read without following the text's pointer.
        let initial = |&(i, tech): &(u32, bool)| {
            let t = &a.tokens[i as usize];
            (!tech && !t.technical).then_some((t.head >> 56) as u8)
        };
        for w in a.seq.windows(2) {
            if let (Some(x), Some(y)) = (initial(&w[0]), initial(&w[1])) {
                bits.pairs |= pair_bit(x, y);
            }
        }
        bits
    }

    /// May `spelled_out` find an acronym of either text spelled out in the other? `false`
    /// only where it surely finds none.
    pub(crate) fn may_spell(a: SpellBits, b: SpellBits) -> bool {
        a.need & b.pairs != 0 || b.need & a.pairs != 0
    }
}

/// A pair of first letters' bit in `SpellBits` (distinct letter pairs may share one).
fn pair_bit(x: u8, y: u8) -> u128 {
    1 << ((u32::from(x) * 37 + u32::from(y)) % 128)
}

/// `analysis` with the tokens at `run` (indexes into its tokens) made one token, `acronym`'s
/// text in the first one's roles.
fn replaced(analysis: &Analysis, run: &[usize], acronym: &Token) -> Analysis {
    let mut first = analysis.tokens[run[0]].clone();
    first.text = acronym.text.clone();
    (first.head, first.tail) = (acronym.head, acronym.tail);
    let mut old: Vec<(usize, Token)> = (analysis.tokens.iter().cloned().enumerate())
        .filter(|(i, _)| !run.contains(i))
        .collect();
    old.push((run[0], first));
    old.sort_by(|x, y| x.1.cmp_text(&y.1));
    // Where each old token index now sits (every run token at the acronym's).
    let mut at = vec![0u32; analysis.tokens.len()];
    for (new, (i, _)) in old.iter().enumerate() {
        at[*i] = new as u32;
    }
    for &i in &run[1..] {
        at[i] = at[run[0]];
    }
    let mut seq: Vec<(u32, bool)> = Vec::with_capacity(analysis.seq.len());
    for &(i, tech) in &analysis.seq {
        let e = (at[i as usize], tech);
        if seq.last() != Some(&e) {
            seq.push(e);
        }
    }
    Analysis {
        tokens: old.into_iter().map(|(_, t)| t).collect(),
        words: analysis.words.clone(),
        seq,
        antonyms: analysis.antonyms.clone(),
    }
}

/// Are `a` and `b` a lesson and its negation: otherwise one lesson, but a clause one negates
/// the other asserts in mostly the same words (`Verdict::Polarity`)? Or texts the roles step
/// splits where one clause of one side negates nothing but words one clause of the other
/// asserts (`refutes`): "Do not enable skipLibCheck in tsconfig; it hides broken declaration
/// files" / "Enable skipLibCheck in tsconfig to keep type checking fast". A paraphrase that
/// says "never" about another part of the advice is neither ("keep credentials in the
/// environment, never in a committed file" / "never commit credentials; load them from the
/// environment": the first does not assert `commit`).
pub(crate) fn negation(lx: &Lexicon, a: &Analysis, b: &Analysis) -> bool {
    match judge(lx, a, b) {
        Verdict::Polarity(_) => true,
        Verdict::Roles => refutes(a, b) || refutes(b, a) || reversed(a, b),
        Verdict::MinimalPair => reversed(a, b),
        _ => false,
    }
}

/// Do two texts whose rules negate, refuse and leave out nothing tell shared steps in opposite
/// orders: a word one places before another that the other places after it ("deploy only
/// after the migration ran" / "deploy before running the migration", "merge the PR only
/// after CI is green" / "merge the PR before CI finishes")? A rule and its reverse, which the
/// roles step (or, for texts that also swap a word, the minimal-pair step) splits; with a
/// negation on either side the order is `refutes`'s to read ("never deploy before the
/// migration runs" agrees with "deploy after running the migration").
fn reversed(a: &Analysis, b: &Analysis) -> bool {
    // A negation in the reason ("… so the rollout is not blocked") leaves the rule plain.
    let plain = |x: &Analysis| {
        (x.tokens.iter())
            .all(|t| t.explains || t.negated_in == 0 && !t.left_out && t.role != Some(Role::Negated))
    };
    if !plain(a) || !plain(b) {
        return false;
    }
    let rank = |r: Role| match r {
        Role::After => 0u8,
        Role::Before => 2,
        _ => 1,
    };
    let mut placed: Vec<(u8, u8)> = Vec::new();
    same_text(&a.tokens, &b.tokens, |x, y| {
        if let (Some(sx), Some(sy)) = (x.step, y.step) {
            placed.push((rank(sx), rank(sy)));
        }
    });
    (placed.iter()).any(|&(i, j)| placed.iter().any(|&(k, l)| k < i && l > j))
}

/// Does one clause of `side` negate two or more words, and nothing but words that one clause
/// of `other` asserts (and `other` negates nowhere)? A negated word placed at a step ("never
/// run terraform apply before the plan is reviewed": the review is the later step) counts
/// when `other` places it at the same step ("run terraform apply before the plan is
/// reviewed"); at the other step ("… after the plan is reviewed") the two agree. A side
/// with `until` defers what it negates rather than refusing it: "do not merge the PR until CI
/// is green" says "merge it after CI is green", which only a text that places what it waits
/// for at the later step ("merge the PR before CI is green") contradicts ("merge the PR once
/// CI is green" agrees).
fn refutes(side: &Analysis, other: &Analysis) -> bool {
    let negated_by = |t: &Token, k: usize| t.negated_in >> k & 1 == 1 && t.asserted_in >> k & 1 == 0;
    let placed = |t: &Token| matches!(t.step, Some(Role::Before | Role::After));
    let defers = side.words.split(WORD_BREAK).any(|w| w == "until");
    let negated = side.tokens.iter().fold(0, |m, t| m | t.negated_in);
    bits(negated).any(|k| {
        let n = side.tokens.iter().filter(|t| negated_by(t, k)).count();
        let mut asserted = [0usize; Clauses::BITS as usize];
        let (mut same_step, mut waited, mut waited_later) = (0, 0, 0);
        same_text(&side.tokens, &other.tokens, |x, y| {
            if negated_by(x, k) && y.negated_in == 0 {
                for j in bits(y.asserted_in) {
                    asserted[j] += 1;
                }
                if y.asserted_in == 0 && placed(x) && y.step == x.step {
                    same_step += 1;
                }
            } else if x.negated_in == 0 && x.asserted_in != 0 {
                waited += 1;
                waited_later += usize::from(y.step == Some(Role::Before));
            }
        });
        n >= 2
            && asserted.iter().any(|&a| a > 0 && a + same_step == n)
            && (!defers || waited > 0 && waited_later == waited)
    })
}

pub(crate) fn verdict(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Verdict {
    match judge(lx, a, b) {
        Verdict::Same(s) => Verdict::Same(s),
        v => spelled_out(lx, a, b).map_or_else(|| v.into_owned(), Verdict::Same),
    }
}

fn judge<'a>(lx: &'a Lexicon, a: &'a Analysis, b: &'a Analysis) -> Verdict<&'a str> {
    judge_once(lx, a, b, true)
}

/// An antonym pair `k` the two sides split on (marks `x` on `a`, `y` on `b`), where one side
/// refuses its word and the other takes the opposite one: "avoid large Docker images" asks
/// what "keep the Docker image small" asks, "avoid high-cardinality labels" what "keep label
/// cardinality low" asks. A stop word of a pair (`same`) is no token: its mark, set only
/// where a rule is stated, is all a side has of it, and counts as taken ("never in a separate
/// PR" asks what "in the same commit" asks). Which side refuses (`true`: `a`) and the clauses
/// it refuses in.
fn refused_opposite<'a>(
    lx: &Lexicon,
    a: &'a Analysis,
    b: &'a Analysis,
    k: usize,
    (x, y): (u8, u8),
) -> Option<(bool, Clauses, &'a Token)> {
    let (w1, w2) = &lx.antonyms[k];
    let word = |mark: u8| if mark == 1 { w1.as_str() } else { w2.as_str() };
    let (wa, wb) = (word(x), word(y));
    let (ta, tb) = (a.token(wa), b.token(wb));
    let refused = |t: Option<&'a Token>| {
        t.filter(|t| t.role == Some(Role::Negated) && t.negated_in != 0 && t.asserted_in == 0 && !t.explains)
    };
    let taken = |t: Option<&Token>, w: &str| match t {
        Some(t) => t.negated_in == 0 && t.role.is_some_and(|r| r != Role::Negated) && !t.explains,
        None => lx.is_stop(w),
    };
    if let Some(ta) = refused(ta).filter(|_| taken(tb, wb)) {
        Some((true, ta.negated_in, ta))
    } else if let Some(tb) = refused(tb).filter(|_| taken(ta, wa)) {
        Some((false, tb.negated_in, tb))
    } else {
        None
    }
}

/// `side` with its refusal in `clauses` read as the opposite advice (`refused_opposite`): the
/// words those clauses negate are taken at their steps, antonym pair `k`'s mark turns to the
/// other word, and its own word of the pair (`own`) leaves the word order, so that "do not
/// raise the replica count" and "lower the replica count" swap no word in place (the word
/// still counts, unshared, in the overlap).
fn unrefused(side: &Analysis, clauses: Clauses, k: usize, own: &Token) -> Analysis {
    let mut s = side.clone();
    for t in &mut s.tokens {
        let bits = t.negated_in & clauses;
        if bits == 0 {
            continue;
        }
        t.negated_in &= !clauses;
        if t.role == Some(Role::Negated) {
            t.role = Some(t.step.unwrap_or(Role::Asserted));
        }
        if t.step.is_none_or(|r| r == Role::Asserted) {
            t.asserted_in |= bits;
        }
        t.taken = true;
    }
    s.antonyms[k] = 3 - s.antonyms[k];
    if let Some(i) = s.tokens.iter().position(|t| t.same_text(own)) {
        s.seq.retain(|&(j, _)| j as usize != i);
    }
    s
}

/// `v`, judged over copies of `a` and `b`, with its words found again in `a`, `b` or the
/// lexicon (the copies' words are the originals').
fn rebind<'a>(v: Verdict<&str>, lx: &'a Lexicon, a: &'a Analysis, b: &'a Analysis) -> Verdict<&'a str> {
    let find = |w: &str| -> &'a str {
        (a.token(w).or_else(|| b.token(w)).map(|t| &*t.text))
            .or_else(|| {
                (lx.antonyms.iter())
                    .flat_map(|(x, y)| [x, y])
                    .find(|x| x.as_str() == w)
                    .map(String::as_str)
            })
            .unwrap_or("")
    };
    match v {
        Verdict::Same(s) => Verdict::Same(s),
        Verdict::Empty => Verdict::Empty,
        Verdict::Technical(x, y) => Verdict::Technical(find(x), find(y)),
        Verdict::Flag(f) => Verdict::Flag(find(f)),
        Verdict::Command(c) => Verdict::Command(find(c)),
        Verdict::Antonym(x, y) => Verdict::Antonym(find(x), find(y)),
        Verdict::Polarity(w) => Verdict::Polarity(find(w)),
        Verdict::Roles => Verdict::Roles,
        Verdict::MinimalPair => Verdict::MinimalPair,
        Verdict::Overlap(s) => Verdict::Overlap(s),
    }
}

fn judge_once<'a>(lx: &'a Lexicon, a: &'a Analysis, b: &'a Analysis, may_unrefuse: bool) -> Verdict<&'a str> {
    if a.tokens.is_empty() || b.tokens.is_empty() {
        return Verdict::Empty;
    }
    // 1. Technical tokens agree: at most one side names technical tokens the other lacks,
    //    counted apart in the rule each side states and in the reason it gives (`unmatched`):
    //    the two rules, or the two reasons, naming different things ("since v15" / "since
    //    v16") are two lessons; one rule's detail against the other's example of what goes
    //    wrong is not ("…, not from tests/, …" / "…, so conftest.py … is picked up").
    let (ra, xa) = unmatched(a, b);
    let (rb, xb) = unmatched(b, a);
    if let Some((x, y)) = ra.zip(rb).or(xa.zip(xb)) {
        return Verdict::Technical(&x.text, &y.text);
    }
    //    Nor may one side alone pass a flag: `-v`, `--force`, `-auto-approve` change what a
    //    command does, so "docker compose down -v" and "docker compose down" are two lessons.
    if let Some(f) = one_sided_flag(lx, a, b).or_else(|| one_sided_flag(lx, b, a)) {
        return Verdict::Flag(f);
    }
    //    Nor may one side alone run a command through another program: "uv pip install" is
    //    not "pip install" (`unmatched` lets one side's extra tool through as a detail).
    if let Some(c) = one_sided_command(lx, a, b).or_else(|| one_sided_command(lx, b, a)) {
        return Verdict::Command(c);
    }
    // 2. Antonyms agree.
    for (i, (&x, &y)) in a.antonyms.iter().zip(&b.antonyms).enumerate() {
        if x != 0 && y != 0 && x != y {
            let (w1, w2) = &lx.antonyms[i];
            // A negator against its opposite ("always use parameterized queries instead of
            // string formatting" / "never build SQL with string formatting; use parameterized
            // queries") is no antonym when the two sides refuse the same words: the roles
            // decide.
            if lx.is_negator(w1) || lx.is_negator(w2) {
                if refuse_alike(a, b) {
                    continue;
                }
            } else if may_unrefuse && let Some((on_a, clauses, own)) = refused_opposite(lx, a, b, i, (x, y)) {
                // One side refuses what the other's opposite word asks for: judged again with
                // that refusal read as the advice it amounts to.
                let (a2, b2);
                let v = if on_a {
                    a2 = unrefused(a, clauses, i, own);
                    judge_once(lx, &a2, b, false)
                } else {
                    b2 = unrefused(b, clauses, i, own);
                    judge_once(lx, a, &b2, false)
                };
                return rebind(v, lx, a, b);
            }
            return Verdict::Antonym(w1, w2);
        }
    }
    //    Nor a word with an opposite-making prefix against the word without it: "unpin the
    //    provider" vs "pin the provider", "disallow" vs "allow".
    if let Some((x, y)) = prefixed(lx, a, b).or_else(|| prefixed(lx, b, a)) {
        return Verdict::Antonym(x, y);
    }
    // 3. Not a minimal pair (cheap, and common among near-identical texts).
    if minimal_pair(a, b, lx.max_substitution) && !swaps_only_flag_words(lx, a, b)
        || rules_swapped(a, b, lx.max_substitution)
    {
        return Verdict::MinimalPair;
    }
    // 4. Roles agree: shared words asserted on one side and negated (or in the other
    //    before/after clause) on the other weigh against. The same walk notes, for step 6,
    //    whether a shared word is negated in a clause of one side and asserted in one of the
    //    other (`crossed`), and which clauses negate a word both sides negate (`together_*`:
    //    "don't run tests in parallel; …" vs "run tests …, not in parallel" agree on
    //    `parallel`, so that clause is no veto): a few bit operations per shared word.
    let (mut agree, mut disagree) = (0u32, 0u32);
    let (mut together_a, mut together_b): (Clauses, Clauses) = (0, 0);
    let mut crossed = false;
    // Steps in order: each side places a shared word it does not negate at a step, earlier
    // (in an "after …" clause), the rule's own, or later (in a "before …" clause, or the
    // "then" of "X first, then Y"). "Y after X", "X before Y" and "X first, then Y" place X
    // before Y alike, and a side that names no order ("Y fails unless X ran") places both
    // at one step, which contradicts neither. Two words the sides place in opposite orders
    // disagree. The weight of shared words by (step on a, step on b): nine cells, so the
    // order check below costs the same however long the texts are.
    let mut steps = [[0u32; 3]; 3];
    // The part of each cell's weight that words explaining the rule on either side make up.
    let mut reasons = [[0u32; 3]; 3];
    // The number of shared words (not their weight) in each cell, for step 5.
    let mut placed = [[0usize; 3]; 3];
    let step = |role: Role| match role {
        Role::After => 0,
        Role::Before => 2,
        _ => 1,
    };
    // Plain tokens of each side whose text the other side has (for step 5).
    let (mut plain_a, mut plain_b) = (0, 0);
    // A flag one side passes and the other refuses ("with --release" vs "without --release").
    let mut opposed: Option<&str> = None;
    same_text(&a.tokens, &b.tokens, |x, y| {
        plain_a += usize::from(!x.technical);
        plain_b += usize::from(!y.technical);
        if x.technical && opposed.is_none() && opposite(x, y) && is_flag(&x.text) {
            opposed = Some(&x.text);
        }
        if x.negated_in != 0 && y.negated_in != 0 {
            together_a |= x.negated_in;
            together_b |= y.negated_in;
        }
        crossed |= x.negated_in != 0 && y.asserted_in != 0 || x.asserted_in != 0 && y.negated_in != 0;
        let (Some(ra), Some(rb)) = (x.role, y.role) else {
            return;
        };
        let w = if x.technical { 2 } else { 1 };
        match (ra == Role::Negated, rb == Role::Negated) {
            // Negated on both sides, at their steps: "never deploy before the migration runs"
            // and "never deploy after it runs" place the migration in opposite orders.
            (true, true) => match (x.step, y.step) {
                (Some(sa), Some(sb)) => {
                    steps[step(sa)][step(sb)] += w;
                    placed[step(sa)][step(sb)] += 1;
                }
                _ => agree += w,
            },
            (false, false) => {
                steps[step(ra)][step(rb)] += w;
                placed[step(ra)][step(rb)] += 1;
                if x.explains || y.explains {
                    reasons[step(ra)][step(rb)] += w;
                }
            }
            _ => disagree += w,
        }
    });
    // The weight of shared words the two place in opposite orders, and of the words that
    // agree only in the reason either side gives.
    let (mut inverted_w, mut reason_w) = (0u32, 0u32);
    // Shared words that one side's rule does and the other side needs done first or later,
    // placed in no order beside other shared words.
    let mut unordered = 0usize;
    for (i, row) in steps.iter().enumerate() {
        for (j, &w) in row.iter().enumerate().filter(|(_, w)| **w > 0) {
            let inverted =
                (0..3).any(|k| (0..3).any(|l| steps[k][l] > 0 && (k < i && l > j || k > i && l < j)));
            // Words one side states as the rule's step and the other as an earlier or later
            // one agree on an order only beside words the two place in that same order: alone,
            // they are what one rule does and the other's precondition ("don't edit generated
            // files; rerun the generator" / "commit generated files after rerunning the
            // generator").
            let ordered = i == j
                || i.min(j) > 0
                || (0..3).any(|k| (0..3).any(|l| steps[k][l] > 0 && (k < i && l < j || k > i && l > j)));
            if inverted {
                disagree += w;
                inverted_w += w;
            } else if ordered {
                agree += w;
                reason_w += reasons[i][j];
            } else {
                unordered += placed[i][j];
            }
        }
    }
    // A reason the two share orders nothing: "copy package.json before the source so the npm
    // install layer is cached" and "copy the source before package.json so the npm install
    // layer is rebuilt" tell the steps in opposite orders, whatever their reasons share.
    if disagree > 0 && disagree >= agree || inverted_w > 0 && disagree >= agree - reason_w {
        return Verdict::Roles;
    }
    if let Some(f) = opposed.or_else(|| left_out_alone(a, b)) {
        return Verdict::Flag(f);
    }
    // 5. Content overlap: a plain token matches the same text, a technical one also the
    //    same thing named by a suffix.
    let sa = plain_a
        + a.tokens
            .iter()
            .filter(|t| t.technical && tech_has_match(t, b))
            .count();
    let sb = plain_b
        + b.tokens
            .iter()
            .filter(|t| t.technical && tech_has_match(t, a))
            .count();
    //    Shared words that are one side's rule and the other's precondition, when both sides
    //    order their own steps and their rules share no word at the rule's step, are no
    //    overlap: "tag the release after the release PR is
    //    merged" and "merge the release PR only after CI is green" share the merge, but one
    //    rule tags and the other merges. (A side that orders nothing, "upgrading Postgres?
    //    rebuild the index", places every word at its rule's step and keeps them all.)
    let orders = |x: &Analysis| (x.tokens.iter()).any(|t| matches!(t.role, Some(Role::Before | Role::After)));
    let (sa, sb) = if unordered > 0 && steps[1][1] == 0 && orders(a) && orders(b) {
        (sa.saturating_sub(unordered), sb.saturating_sub(unordered))
    } else {
        (sa, sb)
    };
    //    A hyphenated name both sides write ("the github-actions client") is one name: its
    //    later parts, shared, are not counted again, so two lessons about one tool do not
    //    meet on its name twice.
    let parts = (a.tokens.iter())
        .filter(|t| t.part && b.token(&t.text).is_some_and(|o| o.part))
        .count();
    let (sa, sb) = (sa - parts.min(sa), sb - parts.min(sb));
    let (na, nb) = (a.tokens.len() - parts, b.tokens.len() - parts);
    let s = score(lx.measure, sa, sb, na, nb);
    if s < lx.threshold {
        return Verdict::Overlap(s);
    }
    //    A reason the two share does not make their rules one: "set a TTL on every cache key
    //    so memory does not grow forever" and "set maxmemory-policy to allkeys-lru on the Redis
    //    cache so memory does not grow forever" give one reason for two rules.
    if let Some(r) = rule_overlap(lx, a, b).filter(|&r| r < lx.threshold) {
        return Verdict::Overlap(r);
    }
    // 6. Polarity agrees: a clause one side negates that the other side states the other way
    //    round ("never run the container as root when it binds port 80" vs "run the container
    //    as root when it binds port 80") makes a lesson and its negation, however many words
    //    they share. Last, so that `mirrored` runs only for a pair that would otherwise be one
    //    lesson and has a word that crosses.
    if crossed && let Some(word) = mirrored(lx, a, b, together_a).or_else(|| mirrored(lx, b, a, together_b)) {
        return Verdict::Polarity(word);
    }
    //    Nor may one side state as its rule the alternative the other turns down, while
    //    never naming what the other takes instead ("use JSON lines for the Loki log format"
    //    / "use logfmt for the Loki log format, not JSON").
    if crossed && (rejected_alternative(a, b) || rejected_alternative(b, a)) {
        return Verdict::Roles;
    }
    // 3, continued: nor two words traded in place. Last, as it walks both texts.
    if transposed(lx, a, b) {
        return Verdict::MinimalPair;
    }
    Verdict::Same(s)
}

/// The overlap score of the two rules alone (each side's words outside the clauses that only
/// explain it, matched against any word of the other), when the two share a word of their
/// reasons; `None` otherwise, or when a side's words all explain.
fn rule_overlap(lx: &Lexicon, a: &Analysis, b: &Analysis) -> Option<f64> {
    let mut shared_reason = false;
    same_text(&a.tokens, &b.tokens, |x, y| {
        shared_reason |= x.explains && y.explains
    });
    if !shared_reason {
        return None;
    }
    let matched = |t: &Token, other: &Analysis| {
        if t.technical {
            tech_has_match(t, other)
        } else {
            other.find(t).is_some()
        }
    };
    let rule = |x: &Analysis, y: &Analysis| {
        let words = x.tokens.iter().filter(|t| !t.explains);
        let n = words.clone().count();
        (n, words.filter(|t| matched(t, y)).count())
    };
    let ((na, sa), (nb, sb)) = (rule(a, b), rule(b, a));
    (na > 0 && nb > 0).then(|| score(lx.measure, sa, sb, na, nb))
}

/// Does `side` turn down, in the clause that states its rule or a later one, an alternative
/// `other` states as its rule ("use logfmt for the Loki log format, not JSON" / "use JSON
/// lines for the Loki log format"; "import the existing bucket instead of recreating it" /
/// "delete the bucket and let terraform recreate it"; "pin GitHub Actions to a full commit
/// SHA, not a tag" / "pin the action to a version tag, not a branch"), while `other` never
/// names what `side` takes instead (the word its rule opens with, or the one right before
/// what it turns down), nor turns down a word `side` does? A paraphrase that names the refused
/// thing as the problem names the choice too ("use histograms, not summaries" / "summaries
/// cannot be aggregated; use histograms"), and a refusal before the rule ("never commit
/// credentials; load them from the environment") is a rule of its own, not an alternative.
fn rejected_alternative(side: &Analysis, other: &Analysis) -> bool {
    let takes = |t: &Token| t.asserted_in != 0 && t.negated_in == 0 && !t.explains;
    let named = |t: &Token| {
        if t.technical {
            tech_has_match(t, other)
        } else {
            other.find(t).is_some()
        }
    };
    // What `side` takes instead: the word its rule opens with, or the one right before what
    // it turns down, when `other` never names it ("pin GitHub Actions to a full commit SHA,
    // not a tag" takes the SHA where "pin the action to a version tag" takes the tag; "use
    // npm ci instead of npm install" takes what "use npm ci in CI and npm install only to
    // change the lockfile" names too).
    let words = || side.seq.iter().map(|&w| side.at(w));
    let refused =
        |t: &Token| t.role == Some(Role::Negated) && t.asserted_in == 0 && t.negated_in != 0 && !t.explains;
    let first = words().find(|t| takes(t));
    let contrasted = words().take_while(|t| !refused(t)).filter(|t| takes(t)).last();
    let Some(head) = [first, contrasted].into_iter().flatten().find(|t| !named(t)) else {
        return false;
    };
    // Two sides that turn down a word alike turn down one alternative: "use the _bulk API
    // instead of one index request per document" / "import through _bulk rather than indexing
    // them one request at a time".
    let turned_down = |t: &Token| t.role == Some(Role::Negated);
    let mut alike = false;
    same_text(&side.tokens, &other.tokens, |x, y| {
        alike |= turned_down(x) && turned_down(y)
    });
    if alike {
        return false;
    }
    let rule = head.asserted_in.trailing_zeros();
    // The clause `other` states its rule in (its first taken word's): a word it asserts only
    // in a later clause describes the problem ("pin the client to an exact version; floating
    // ranges let upgrades break the build" / "lock it to a fixed version instead of a range").
    let Some(stated) = other.seq.iter().map(|&w| other.at(w)).find(|t| takes(t)) else {
        return false;
    };
    let stated = stated.asserted_in & stated.asserted_in.wrapping_neg();
    side.tokens.iter().any(|t| {
        refused(t)
            && t.negated_in.trailing_zeros() >= rule
            && other
                .find(t)
                .is_some_and(|o| takes(o) && o.role == Some(Role::Asserted) && o.asserted_in & stated != 0)
    })
}

/// A clause `side` negates that `other` states the other way round: one clause of `other`
/// asserts mostly the same words (Jaccard over the two clauses' content words at least the
/// lexicon's `polarity_overlap`), or the two texts have the same content words and `other`
/// asserts every word the clause negates ("use unknown instead of any …" vs "use any instead
/// of unknown …", where `any` is a stop word); and the two sides negate none of the clause's
/// words together (`together`). Returns the clause's first such word, in text order.
///
/// Comparing whole clauses, not single words, keeps paraphrases that put a negation
/// elsewhere together: "never rely on the default timeout of the redis client: …" and "set
/// an explicit timeout on every call through the redis client; the default waits forever"
/// share four words, but not one clause.
fn mirrored<'a>(lx: &Lexicon, side: &'a Analysis, other: &'a Analysis, together: Clauses) -> Option<&'a str> {
    let negated = side.tokens.iter().fold(0, |m, t| m | t.negated_in) & !together;
    let words_in = |x: &Analysis, f: &dyn Fn(&Token) -> bool| x.tokens.iter().filter(|t| f(t)).count();
    // The words clause k negates (and does not also assert: "a remote backend with state
    // locking instead of a local state file" does not negate `state`).
    let negated_by = |t: &Token, k: usize| t.negated_in >> k & 1 == 1 && t.asserted_in >> k & 1 == 0;
    for k in bits(negated) {
        // Shared words negated in clause k, counted per clause of `other` that asserts them.
        let mut shared = [0usize; Clauses::BITS as usize];
        same_text(&side.tokens, &other.tokens, |x, y| {
            if negated_by(x, k) {
                for j in bits(y.asserted_in) {
                    shared[j] += 1;
                }
            }
        });
        let n = words_in(side, &|t| negated_by(t, k));
        for (j, &c) in shared.iter().enumerate().filter(|(_, c)| **c > 0) {
            // A clause that asserts a count the negating side never names says how, and turns
            // down nothing: "never add a NOT NULL column in one step; …" and "add a NOT NULL
            // column in three steps: …" are one lesson.
            let counted = (other.tokens.iter()).any(|t| {
                t.asserted_in >> j & 1 == 1 && lx.counts.contains(&*t.text) && side.find(t).is_none()
            });
            if counted {
                continue;
            }
            let p = words_in(other, &|t| t.asserted_in >> j & 1 == 1);
            let same_words = || {
                side.tokens.len() == other.tokens.len()
                    && side
                        .tokens
                        .iter()
                        .zip(&other.tokens)
                        .all(|(x, y)| x.text == y.text)
            };
            if c as f64 >= lx.polarity_overlap * (n + p - c) as f64 || c == n && same_words() {
                let word = (side.seq.iter())
                    .filter_map(|&w| Some((side.at(w), other.find(side.at(w))?)))
                    .find(|(x, y)| negated_by(x, k) && y.asserted_in >> j & 1 == 1)
                    .map_or("", |(x, _)| &*x.text);
                return Some(word);
            }
        }
    }
    None
}

/// A plain word of `side`, where it states the rule, that is a word `other` states its rule
/// with behind one of the lexicon's `antonym_prefixes` (`unpin` / `pin`, `disallow` / `allow`;
/// the rest at least three letters, read through the synonyms: `unset` / `set`), when
/// neither side also has the other's word: (the prefixed word, the other's word).
fn prefixed<'a>(lx: &'a Lexicon, side: &'a Analysis, other: &'a Analysis) -> Option<(&'a str, &'a str)> {
    for t in side.tokens.iter().filter(|t| !t.technical && !t.explains) {
        for p in &lx.antonym_prefixes {
            // The token's head tells most words from the prefix without reading the text.
            if !may_start_with(t, p) {
                continue;
            }
            let Some(rest) = t.text.strip_prefix(p.as_str()).filter(|r| r.len() >= 3) else {
                continue;
            };
            for w in [rest, lx.canon_ref(rest)] {
                let Some(o) = other.token(w).filter(|o| !o.technical && !o.explains) else {
                    continue;
                };
                if side.token(w).is_none() && other.find(t).is_none() {
                    return Some((&t.text, &o.text));
                }
            }
        }
    }
    None
}

/// Can token `t` be `prefix` and three bytes more? Its length and its head (the text's first
/// eight bytes) answer exactly for a prefix of at most eight bytes: `head` pads with zeros,
/// which the mask cuts off. A longer prefix is let through to the text.
pub(super) fn may_start_with(t: &Token, prefix: &str) -> bool {
    let n = prefix.len();
    if t.text.len() < n + 3 {
        return false;
    }
    if n == 0 || n > 8 {
        return true;
    }
    let unpadded = 64 - 8 * n;
    t.head >> unpadded == head(prefix) >> unpadded
}

/// Do the two sides refuse the same words: some shared words negated on both, weighing at
/// least as much as those negated on one side only (technical tokens weigh 2, as in the roles
/// step)?
fn refuse_alike(a: &Analysis, b: &Analysis) -> bool {
    let (mut both, mut one) = (0, 0);
    same_text(&a.tokens, &b.tokens, |x, y| {
        let w = if x.technical { 2 } else { 1 };
        match (x.negated_in != 0, y.negated_in != 0) {
            (true, true) => both += w,
            (true, false) | (false, true) => one += w,
            _ => {}
        }
    });
    both > 0 && both >= one
}

/// Does a side pass the word (state it in a clause that states the rule, and nowhere refuse
/// it), or refuse it (negate it, or leave it out with `without`, and nowhere pass it)?
fn passes(t: &Token) -> bool {
    t.taken && t.negated_in == 0 && !t.left_out
}

fn refuses(t: &Token) -> bool {
    !t.taken && (t.negated_in != 0 || t.left_out)
}

/// One side passes the word and the other refuses it.
fn opposite(x: &Token, y: &Token) -> bool {
    passes(x) && refuses(y) || refuses(x) && passes(y)
}

/// Two texts with the same content words, where a word one side passes the other leaves out
/// with `without` ("set session cookies with the Secure flag" vs "… without the Secure
/// flag"): the first such word. `with` is a stop word and `without` keeps what follows it out
/// of the rule's roles (it may only qualify the rule: "pods without requests get evicted"),
/// so only the same words on both sides make the pair a rule and its opposite.
fn left_out_alone<'a>(a: &'a Analysis, b: &'a Analysis) -> Option<&'a str> {
    if a.tokens.len() != b.tokens.len() {
        return None;
    }
    let mut first = None;
    for (x, y) in a.tokens.iter().zip(&b.tokens) {
        if !x.same_text(y) {
            return None;
        }
        if first.is_none() && (x.left_out || y.left_out) && opposite(x, y) {
            first = Some(&*x.text);
        }
    }
    first
}

/// A flag `side` passes (in a clause that states the rule) that `other` does not: neither
/// names it as a technical token, nor says its name as a word it does not refuse ("git commit
/// --amend" vs "amend the commit" agree; "run npm audit fix --force" vs "run npm audit fix"
/// do not). A flag only one side refuses ("--force-with-lease, not --force") or mentions
/// while explaining the rule is no veto: neither side passes it.
fn one_sided_flag<'a>(lx: &Lexicon, side: &'a Analysis, other: &Analysis) -> Option<&'a str> {
    (side.tokens.iter())
        .filter(|t| t.taken && t.technical && is_flag(&t.text) && !tech_has_match(t, other))
        .find(|t| {
            lx.flag_word(&t.text)
                .and_then(|w| other.token(&w))
                .is_none_or(refuses)
        })
        .map(|t| &*t.text)
}

/// A command (`uv pip`) that `side` runs in the rule it states, whose program (`uv`) `other`
/// never names, when the two share a listed program or a command (`pip`, `pip install`): the
/// same tool run another way. Without a shared tool the other side states its rule in words
/// ("install into a project virtualenv") and the command is only a detail.
fn one_sided_command<'a>(lx: &Lexicon, side: &'a Analysis, other: &Analysis) -> Option<&'a str> {
    let names = |program: &str| {
        (other.tokens.iter()).any(|o| {
            o.technical
                && (text_eq(&o.text, program)
                    || o.text.split_once(' ').is_some_and(|(p, _)| text_eq(p, program)))
        })
    };
    let command = (side.tokens.iter())
        .filter(|t| t.technical && passes(t) && !t.explains)
        .find(|t| {
            t.text
                .split_once(' ')
                .is_some_and(|(p, _)| lx.is_program(p) && !names(p))
        })?;
    let tool = |t: &Token| t.text.contains(' ') || lx.is_program(&t.text);
    let shared = (side.tokens.iter()).any(|t| t.technical && tool(t) && tech_has_match(t, other));
    shared.then_some(&*command.text)
}

/// The set bits of a clause set, lowest first.
fn bits(mut set: Clauses) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let k = set.trailing_zeros() as usize;
            set &= set - 1;
            k
        })
    })
}

/// How many entries two sequences of `a` and `b` share at their start and, in what is left,
/// at their end (`same_token`): the frame a swapped run sits in. `x` and `y` give each
/// sequence afresh (a slice's, or a filtered walk that is not collected).
fn shared_ends<I, J>(a: &Analysis, x: impl Fn() -> I, b: &Analysis, y: impl Fn() -> J) -> (usize, usize)
where
    I: DoubleEndedIterator<Item = (u32, bool)>,
    J: DoubleEndedIterator<Item = (u32, bool)>,
{
    let same = |&(t, u): &((u32, bool), (u32, bool))| same_token(a, t, b, u);
    let p = x().zip(y()).take_while(same).count();
    let shorter = x().count().min(y().count());
    let s = (x().rev().zip(y().rev()))
        .take(shorter - p)
        .take_while(same)
        .count();
    (p, s)
}

/// Are entry `x` of `a.seq` and entry `y` of `b.seq` the same word?
fn same_token(a: &Analysis, x: (u32, bool), b: &Analysis, y: (u32, bool)) -> bool {
    let (s, t) = (a.at(x), b.at(y));
    s.same_text(t) || (x.1 && y.1 && tech_match_tokens(s, t))
}

/// The two token sequences are equal but for one swapped run in the same place: a common
/// prefix and suffix, and between them 1..=k tokens on each side that the other side's run
/// does not contain ("set memory [limits] on every container" vs "… [requests] …"), or two
/// runs of two words that share one ("use a [connection pool] for …" vs "use a [dedicated
/// connection] for …"). Not when one side's run only explains the rule.
fn minimal_pair<'a>(a: &'a Analysis, b: &'a Analysis, k: usize) -> bool {
    if k == 0 {
        return false;
    }
    let (x, y) = (&a.seq, &b.seq);
    let (p, s) = shared_ends(a, || x.iter().copied(), b, || y.iter().copied());
    let (mx, my) = (&x[p..x.len() - s], &y[p..y.len() - s]);
    if !(1..=k).contains(&mx.len()) || !(1..=k).contains(&my.len()) {
        return p > 0 && two_swaps(a, mx, b, my, k);
    }
    // A swap in the reason one side gives leaves the rule as it was: "…; it hides broken
    // declaration files" and "…, because it masks broken declaration files" explain one rule.
    if mx.iter().all(|&t| a.at(t).explains) || my.iter().all(|&t| b.at(t).explains) {
        return false;
    }
    // The words of each run (of `side`) the other run lacks.
    let unshared =
        |side: &'a Analysis, run: &'a [(u32, bool)], other: &'a Analysis, theirs: &'a [(u32, bool)]| {
            (run.iter())
                .filter(move |&&t| !theirs.iter().any(|&u| same_token(side, t, other, u)))
                .map(move |&t| side.at(t))
        };
    let (ox, oy) = (unshared(a, mx, b, my).count(), unshared(b, my, a, mx).count());
    if (ox, oy) == (mx.len(), my.len()) {
        return true;
    }
    // One word swapped while its one neighbour in the run moves to its other side ("a
    // [connection pool]" vs "a [dedicated connection]"). Only in runs of two: in longer ones a
    // paraphrase that drops its verb and adds a word at the other end reads the same ("[take
    // &str instead of string] for parameters" vs "prefer [&str over string for function]
    // parameters"). Not when the two are one word in two forms the stemmer left apart, as a
    // reordering paraphrase makes them ("path manipulation" vs "manipulating paths"), nor
    // when either only explains the rule ("so the import resolves" vs "otherwise it breaks
    // the import" give one reason two ways).
    if (mx.len(), my.len(), ox, oy) != (2, 2, 1, 1) {
        return false;
    }
    let (u, v) = (unshared(a, mx, b, my).next(), unshared(b, my, a, mx).next());
    u.zip(v)
        .is_some_and(|(u, v)| !same_start(&u.text, &v.text) && !u.explains && !v.explains)
}

/// Are `a` and `b` (a `minimal_pair`) no such pair once the words that say the name of a flag
/// both pass are left out? "When force-pushing, always use --force-with-lease rather than
/// --force" and "use git push --force-with-lease instead of --force" swap `force` for `git`
/// in place, but `force` restates the flag both name, as step 1 reads "amend the commit" as
/// `--amend`. Asked only of a pair `minimal_pair` holds, so most pairs never pay for it.
fn swaps_only_flag_words(lx: &Lexicon, a: &Analysis, b: &Analysis) -> bool {
    let words: Vec<String> = (a.tokens.iter())
        .filter(|t| t.technical && is_flag(&t.text) && b.tokens.iter().any(|u| u.technical && u.same_text(t)))
        .filter_map(|t| lx.flag_word(&t.text))
        .collect();
    if words.is_empty() {
        return false;
    }
    let without = |side: &Analysis| {
        let mut s = side.clone();
        s.seq.retain(|&(i, tech)| {
            let t = &side.tokens[i as usize];
            tech || t.technical || !words.iter().any(|w| *t.text == **w)
        });
        s
    };
    let (a2, b2) = (without(a), without(b));
    (a2.seq.len() < a.seq.len() || b2.seq.len() < b.seq.len()) && !minimal_pair(&a2, &b2, lx.max_substitution)
}

/// The rules alone are a minimal pair, when both sides also give a reason: "run the API as
/// a [Deployment] with three replicas so Kubernetes replaces failed pods" and "… as a
/// [StatefulSet] with three replicas so pods keep stable names" state two rules, whatever
/// their reasons say. Each side's words outside the clauses that explain it, in order, are
/// equal but for one run of 1..=k words in the same place, framed by at least one shared
/// word; stricter than `minimal_pair`, as the reasons may carry what a paraphrase moved: no
/// word of either run is anywhere in the other text ("use git pull --rebase [to avoid merge
/// commits on feature branches]" / "[on feature branches], pull with --rebase …"), nor one
/// word in two forms the stemmer left apart ("run the linter" / "lint locally"). A side
/// without a reason is its rule, and the whole-text `minimal_pair` already compares it: a
/// rule reworded in one word against a rule with its reason ("editing values.yaml does
/// nothing until the process restarts" / "changes to values.yaml only apply after a restart,
/// since …") is no swap.
fn rules_swapped<'a>(a: &'a Analysis, b: &'a Analysis, k: usize) -> bool {
    let explains = |side: &Analysis| side.tokens.iter().any(|t| t.explains);
    if k == 0 || !(explains(a) && explains(b)) {
        return false;
    }
    // Each side's rule: its sequence without the words that explain (walked, not collected:
    // most pairs part within a few words).
    let rule = |side: &'a Analysis| (side.seq.iter().copied()).filter(move |&t| !side.at(t).explains);
    let (nx, ny) = (rule(a).count(), rule(b).count());
    let (p, s) = shared_ends(a, || rule(a), b, || rule(b));
    // The lengths of the two runs between the shared prefix and suffix.
    let (rx, ry) = (nx - p - s, ny - p - s);
    if p + s == 0 || !(1..=k).contains(&rx) || !(1..=k).contains(&ry) {
        return false;
    }
    let mx = || rule(a).skip(p).take(rx);
    let my = || rule(b).skip(p).take(ry);
    let alone = |side: &Analysis, t: (u32, bool), other: &Analysis| {
        let w = side.at(t);
        other.find(w).is_none() && !(t.1 && tech_has_match(w, other))
    };
    mx().all(|t| alone(a, t, b))
        && my().all(|t| alone(b, t, a))
        && !mx().any(|t| my().any(|u| same_start(&a.at(t).text, &b.at(u).text)))
}

/// The middles of two sequences a common prefix and suffix leave (`minimal_pair`) are two
/// swapped runs in the same places around a run of shared words: "upload the [dSYM] files to
/// Crashlytics for every [iOS] release" vs "upload the [mapping] file to Crashlytics for every
/// [Android] release", "set a [statement] timeout for [queries] from the web app" vs "set an
/// [idle in transaction] timeout for [sessions] …". The caller asks only when the two share a
/// prefix (the first run sits between shared words: "[grant] IAM roles [with least
/// privilege]" vs "[give] IAM roles [only the permissions they need]" swaps the verb, a
/// paraphrase's way). Each run is 1..=k words, none of which
/// the other text has anywhere (a paraphrase that moves a word is no swap), not every one
/// only explaining the rule, and not one word in two forms the stemmer left apart.
fn two_swaps(a: &Analysis, mx: &[(u32, bool)], b: &Analysis, my: &[(u32, bool)], k: usize) -> bool {
    // The first word of `mx` that `my` has, after at least one word on each side.
    let Some((i, j)) = (1..mx.len()).find_map(|i| {
        let j = my.iter().position(|&u| same_token(a, mx[i], b, u))?;
        (j > 0).then_some((i, j))
    }) else {
        return false;
    };
    let mut m = 1;
    while i + m < mx.len() && j + m < my.len() && same_token(a, mx[i + m], b, my[j + m]) {
        m += 1;
    }
    let runs = [(&mx[..i], &my[..j]), (&mx[i + m..], &my[j + m..])];
    let alone = |side: &Analysis, t: (u32, bool), other: &Analysis| {
        let w = side.at(t);
        other.find(w).is_none() && !(t.1 && tech_has_match(w, other))
    };
    runs.iter().all(|(u, v)| {
        (1..=k).contains(&u.len())
            && (1..=k).contains(&v.len())
            && u.iter().all(|&t| alone(a, t, b))
            && v.iter().all(|&t| alone(b, t, a))
            && !u.iter().all(|&t| a.at(t).explains)
            && !v.iter().all(|&t| b.at(t).explains)
            && !u
                .iter()
                .any(|&t| v.iter().any(|&w| same_start(&a.at(t).text, &b.at(w).text)))
    })
}

/// Do two words start alike for five characters (or the whole of the shorter)? The mark of
/// one word's forms: "manipulation" and "manipulat", "config" and "configuration".
fn same_start(u: &str, v: &str) -> bool {
    let n = u.chars().zip(v.chars()).take_while(|(a, b)| a == b).count();
    n >= 5 || n == u.chars().count().min(v.chars().count())
}

/// Two words the texts share trade places inside a frame of shared words that stays put:
/// "read from the replica and write to the primary" vs "read from the primary and write to
/// the replica". Words only one side has are skipped. The frame is at least three shared
/// words, one of them between the pair and one before or after it: a paraphrase that moves a
/// clause to the front ("add the index in Postgres" vs "in Postgres, … add the index") trades
/// the words at the two ends, and with the stop words gone "keep package.json and the
/// lockfile in sync" and "keep the lockfile and package.json in sync" trade neighbours.
/// Neighbours count when each changes its role with its place ("run the linter before the
/// formatter" vs "run the formatter before the linter"), not when the roles travel with the
/// words ("don't run tests in parallel; run them serially" vs "run tests serially, not in
/// parallel"). Nor are a technical token and a plain word a pair. A verb the lexicon calls movable frames a pair but is never one of it: "before
/// running aws commands" and "before any aws command runs" put `run` on either side of its
/// object.
fn transposed<'a>(lx: &Lexicon, a: &'a Analysis, b: &'a Analysis) -> bool {
    let shared = |side: &'a Analysis, other: &'a Analysis| {
        (side.seq.iter())
            .map(move |&t| (side.at(t), t.1))
            .filter(move |(t, _)| other.find(t).is_some())
    };
    let (mut xs, mut ys) = (shared(a, b), shared(b, a));
    // The first pair that differs, the shared words before it, and those after it until its
    // mirror (then those after the mirror).
    let mut first: Option<(&Token, &Token)> = None;
    let (mut before, mut between, mut after, mut mirrored) = (0, 0, 0, false);
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => {
                let framed = between > 0 && before + after > 0 && before + between + after >= 3;
                // Each of the two words changes its role with its place, in the rule each side
                // states: a word that only gives the reason on one side plays no role in its
                // rule ("…, so conftest.py and the package import path are picked up" vs "…;
                // started from inside tests/ it cannot import the package").
                let role =
                    |side: &Analysis, w: &Token| side.find(w).filter(|t| !t.explains).and_then(|t| t.role);
                let moved =
                    |w: &Token| role(a, w).is_some() && role(b, w).is_some() && role(a, w) != role(b, w);
                let roles = |(x, y): (&Token, &Token)| moved(x) && moved(y);
                // Two words whose different roles travel with them were not traded: their
                // clauses moved ("read the file before editing it" vs "before editing a file,
                // read it").
                let travel = |(x, y): (&Token, &Token)| {
                    let (ax, ay) = (role(a, x), role(a, y));
                    ax.is_some() && ay.is_some() && ax != ay && ax == role(b, x) && ay == role(b, y)
                };
                return mirrored
                    && !first.is_some_and(travel)
                    && (framed || between == 0 && before + after > 0 && first.is_some_and(roles));
            }
            (Some(x), Some(y)) if x.0.same_text(y.0) => match (first, mirrored) {
                (None, _) => before += 1,
                (Some(_), false) => between += 1,
                (Some(_), true) => after += 1,
            },
            (Some(x), Some(y)) => match first {
                None if lx.movable.contains(&*x.0.text) || lx.movable.contains(&*y.0.text) => return false,
                // A technical token and a plain word fill no one slot, so they trade none: the
                // clause around one moved ("Node terminates … (since v15)" vs "Since Node 15
                // … terminates").
                None if x.1 != y.1 => return false,
                None => first = Some((x.0, y.0)),
                Some((x0, y0)) if !mirrored && x.0.same_text(y0) && y.0.same_text(x0) => mirrored = true,
                _ => return false,
            },
            _ => return false,
        }
    }
}
