//! Cluster: candidates that say the same lesson, blocked by (domain, kind, operation key),
//! paired through an index and joined to an anchor (DESIGN §5.3).
//!
//! # Blocks
//!
//! Refused candidates are skipped. The rest are blocked by (domain, kind, key). Inside a
//! block, mechanical candidates (`working` set) cluster exactly on their working args; the
//! others cluster lexically among themselves. Each distinct lexical text is analysed once,
//! for all blocks, before them. Blocks run in parallel (rayon), largest first; the output is
//! sorted by cluster id, so it is the same at any thread count.
//!
//! # Anchors, no chaining
//!
//! Candidates are taken in (recorded_at, record id, index) order. Exact duplicates (the same
//! analysis: same content tokens, roles and words) follow the first of them. Any other
//! candidate is compared with the *anchors* of the clusters so far — never with their other
//! members — and joins the one it is most similar to (ties to the earliest anchor); when it
//! matches none it founds a new cluster and becomes its anchor. The id is `C` +
//! `digest::of_fields([domain, kind, key or "", anchor text])` (mechanical: the working args
//! instead of the text).
//!
//! Pairs come from an inverted index over the anchors' content tokens (a technical token is
//! also listed under its last `.`/`/` segment, a flag with a value under the bare flag). A
//! token lists at most `postings_cap` anchors (the earliest); an anchor found only through
//! full postings is missed, which can split a cluster but never merges two lessons. A found anchor is compared only when its count of
//! shared tokens can still reach the threshold, best bound first, at most `max_compares`
//! anchors per candidate. So the work is bounded by candidates × tokens × cap, never
//! candidates².
//!
//! # The measure (`similar`)
//!
//! Each text is analysed with `rules/lexicon.yaml`: whitespace chunks are stripped of quotes
//! and punctuation (`, ; : . ! ?` end a clause); a chunk that looks technical — a flag
//! (`--locked`, `-x`), a path (`src/app.py`), a dotted identifier (`os.makedirs`, `.env`),
//! `snake_case`, `k=v`, a call (`foo()` → `foo`), anything with a digit (versions, codes),
//! `camelCase` — is kept whole (a one-letter flag keeps its case: `-a` is not `-A`); a
//! `PascalCase` word (`DbContext`) is a word, stemmed and read through the synonyms, but
//! technical; other chunks are split into Unicode words, but for a
//! hyphenated word ending in one of `compound_tails` (`read-only`) or listed in `compounds`
//! (`opt-in`), kept as one. The word after an
//! identifier-shaped key and its colon is that setting's value and technical too, stop word or
//! not (`imagePullPolicy: Always` vs `imagePullPolicy: IfNotPresent`). Words are
//! lower-cased, inflected (exceptions, then suffix stages: runs/running/ran → run,
//! repositories → repository), rewritten by phrases (`instead of`, `turn on` → enable) and
//! synonyms (repo → repository, DB → database, …). A listed program followed by one of its
//! subcommands adds a technical token (`npm ci`; not one written capitalized after another
//! word, a product's name in prose: "the Docker build stage"), and a listed command followed by one of
//! its own subcommands (a two-word key: `terraform workspace`) one more (`terraform workspace
//! select`); listed technical terms (tool, language, format and type names) count as
//! technical — but a listed verb term (`verb_terms`: `go`) used as the English verb, inflected
//! ("went") or before a stop word, negator or participle ("fixtures go missing"), is a plain
//! word — and so does a command's program, listed or not and English word or not
//! (`lexicon::command_heads`, by the command's shape: the first word of a backticked
//! command; of the words before a flag, the one before their first listed subcommand as
//! written, or their first; after `run`/`use`, a word before a listed subcommand as
//! written: `make` in "run make build --locked"), so lessons that differ only in their
//! tool are two lessons. Such a program the lexicon does not list, followed by a listed
//! subcommand as written, adds one more (`make build`: "run make build" and "run make
//! test" differ as two of cargo's commands do). Each content word gets a role: asserted,
//! negated (after `never`/`not`/`avoid`/`…n't` to the end of the clause, or dispreferred:
//! `instead of X`, `prefer … over X`, `replace X with`; a `NOT` in capitals before a keyword
//! in capitals the lexicon lists, SQL's `NOT NULL`, is one technical token and negates
//! nothing), or in a `before`/`after` clause
//! (the later step of "X first, then Y", "X, then Y" and "X and then Y" is in a `before`
//! clause, as in "X before Y"; a condition's `then`, "if X, then Y", orders nothing).
//! Stop words are dropped.
//!
//! Two texts are the same lesson when, in order:
//! 1. technical tokens agree: not both sides carry a technical token the other lacks
//!    (equal, one a `.`/`/` suffix of the other, or one the other flag with a value counts as
//!    the same: `-xx:maxrampercentage=75` ~ `-xx:maxrampercentage`), both in the rule they
//!    state or both in the reason they give (one rule's detail against the other's example of
//!    what goes wrong, "…, not from tests/" / "…, so conftest.py is picked up", is no veto;
//!    "since v15" / "since v16" is); a token a side refuses while it takes another technical
//!    token ("--force-with-lease, never plain --force") is the alternative it turns down, not
//!    its rule. A version's `v` and a fraction of zeros are dropped (`v15` is `15`, `3.00` is
//!    `3`). And no flag (`-` or
//!    `--` and a letter: `-v`, `--force`, `-auto-approve`; not `-1`) is passed on one side
//!    only — in a clause that states the rule, with the other side neither naming it nor
//!    saying its name as a word it does not refuse (`--amend` ~ "amend the commit"). A
//!    flag one side only refuses ("not --force") or names while explaining the rule is no
//!    veto;
//! 2. no antonym pair splits them (`enable`/`disable`, `always`/`never`, …) in the clauses
//!    that state the rule (not those that explain it: "…, because a tag can never be trusted";
//!    nor a later clause opened by an article, which describes: "…; the detector finds races
//!    that plain go test never reports");
//! 3. they are not a minimal pair: the content-token sequences are not equal but for one run
//!    swapped in place — a common prefix and suffix with, between them, 1..=`max_substitution`
//!    tokens on each side that the other run lacks ("set memory [limits] on every container"
//!    vs "… [requests] …": a word swapped for a non-synonym in place is another lesson, while
//!    a paraphrase reorders and rewords), nor for two runs of two words that share one, the
//!    other swapped as its neighbour changes sides ("a [connection pool]" vs "a [dedicated
//!    connection]"; not when the two differ only in form, "path manipulation" vs
//!    "manipulating paths", or only explain the rule). A swap whose words on either side all
//!    sit in a clause that explains the rule ("…, because it masks broken declaration files"
//!    vs "…; it hides …") is no minimal pair: the rule is the same; nor do two shared words trade places inside a frame
//!    of shared words that stays put (at least two between them, one before or after: "UTC
//!    in the database, local time in the UI" vs "local time in the database, UTC in the UI";
//!    a paraphrase that moves a clause to the front trades the words at the two ends), or two
//!    neighbours that each change role with their place ("the linter before the formatter"
//!    vs "the formatter before the linter"; a word that only gives the reason on one side has
//!    no role to change). A technical token and a plain word trade no places: "Node
//!    terminates … (since v15)" and "Since Node 15 … terminates" move a clause. A verb the lexicon calls `movable` (`run`) may
//!    frame such a pair but is never one of it: "before running aws commands" and "before
//!    any aws command runs" put it on either side of its object. Nor is a swap one only
//!    through words that say the name of a flag both pass: "when force-pushing, use
//!    --force-with-lease rather than --force" vs "use git push --force-with-lease instead of
//!    --force" (`force` restates the flag). When both sides give a
//!    reason, the rules alone (the words outside the clauses that explain) are no such pair
//!    either, framed by a shared word, with no word of either run anywhere in the other text
//!    and none two forms of one word: "run the API as a [Deployment] … so Kubernetes replaces
//!    failed pods" vs "… as a [StatefulSet] … so pods keep stable names";
//! 4. roles agree: over the shared content words, the weight whose roles differ (technical
//!    tokens weigh 2, others 1) is below the weight whose roles match (when one side orders
//!    its steps with `after` and the other with `before` or `then`, the `after` side is read
//!    the other way round: "restart the service after changing its config" is "change the
//!    config, then restart the service"); and no flag both name
//!    is passed on one side and refused on the other ("with --release" vs "without
//!    --release"; "never … without --release" is a double negation, read as the steps it
//!    asks for: "never run X without Y" places Y at the rule's step and X at the later one,
//!    as "Y before X" does, and passes the flag; `Lexicon::analyze_warning`, for the deltas,
//!    reads it as a warning against X);
//! 5. the content overlap — Dice, 2|A∩B| / (|A|+|B|), over content-token sets — is at least
//!    `threshold` (the measure and threshold are read from the lexicon); when both sides
//!    order steps and their rules share no word at the rule's own step, shared words one
//!    side states as its rule and the other places only at an earlier step, in no order
//!    beside other shared words, are not counted as shared ("tag
//!    the release after the release PR is merged" / "merge the release PR only after CI is
//!    green");
//! 6. polarity agrees: no clause that states the rule is negated on one side and asserted on
//!    the other ("never run X as root when …" vs "run X as root when …"): a lesson and its
//!    negation are two lessons however many words they share. Each analysis records, per
//!    word, the clauses it is negated and asserted in (bits); clauses that explain the rule
//!    (`so`, `because`, `since`, `otherwise`, `unless`, `to avoid …`), `without …` and the
//!    negations of a text with `unless` record none. Clauses are compared, not words: a
//!    clause negated on one side must be asserted by one clause of the other in mostly the
//!    same words (Jaccard ≥ `polarity_overlap`, or the same words throughout) and no count
//!    (`counts`: "in three steps") the negating side lacks, and the two
//!    must negate none of its words together. It is checked last, and only when a shared
//!    word is negated on one side and asserted on the other: few pairs pay for it.

pub(crate) mod fx;
mod lexicon;
mod similar;

use rayon::prelude::*;

use crate::digest;
use crate::model::{Candidate, Cluster, Kind, Millis, Name, Names};
use fx::FxMap;
use std::hash::Hasher;

pub use lexicon::{Analysis, ChunkMemo, Clauses, Lexicon, Measure, Role, Token};
pub use similar::Verdict;

/// Why two texts are, or are not, the same lesson (for near-miss reports).
pub fn verdict(lexicon: &Lexicon, a: &str, b: &str) -> Verdict {
    similar::verdict(lexicon, &lexicon.analyze(a), &lexicon.analyze(b))
}

/// Is one analysed text the negation of the other ("Never run the container as root when it
/// binds port 80" / "Run the container as root when it binds port 80")?
pub fn negation(lexicon: &Lexicon, a: &Analysis, b: &Analysis) -> bool {
    similar::negation(lexicon, a, b)
}

/// Would two lesson texts be the same lesson, in different words?
pub fn similar(lexicon: &Lexicon, a: &str, b: &str) -> bool {
    similarity(lexicon, a, b).is_some()
}

/// Would two analysed texts be the same lesson, in different words? (`similar` without
/// analysing again, for one text compared with many.)
pub fn same_lesson(lexicon: &Lexicon, a: &Analysis, b: &Analysis) -> bool {
    similar::compare(lexicon, a, b).is_some()
}

/// The overlap score of two texts when they are the same lesson, else `None`.
pub fn similarity(lexicon: &Lexicon, a: &str, b: &str) -> Option<f64> {
    similar::compare(lexicon, &lexicon.analyze(a), &lexicon.analyze(b))
}

/// Clusters every candidate that is not refused; output sorted by cluster id.
/// (`names`: what the candidates' domains stand for.)
pub fn cluster(candidates: &[Candidate], names: &Names, lexicon: &Lexicon) -> Vec<Cluster> {
    cluster_where(candidates, names, lexicon, |_| true)
}

/// `cluster`, of only the candidates `included` admits (a compile focused on one domain).
pub fn cluster_where(
    candidates: &[Candidate],
    names: &Names,
    lexicon: &Lexicon,
    included: impl Fn(&Candidate) -> bool + Sync,
) -> Vec<Cluster> {
    type BlockKey<'a> = (Name, Kind, Option<&'a str>);
    // A block's mechanical and lexical candidates, each with its `recorded_at` (read here, in
    // the pass that reads the candidate anyway, so the blocks' sorts need not read it again).
    type Members = (Vec<(Millis, u32)>, Vec<(Millis, u32)>);
    // Per clustered candidate, its key and, when it clusters lexically, its text. The key and
    // the working args sit behind the candidate's `Extra` pointer, a cache miss a candidate:
    // read here once, on every core, where the blocks and the analysis read them several times.
    let read: Vec<Option<Read>> = (candidates.par_iter())
        .map(|c| {
            let lexical = || c.working().is_none().then_some(&*c.text);
            (c.refusal.is_none() && included(c)).then(|| (c.key(), lexical()))
        })
        .collect();
    // Per block, its mechanical and its lexical candidates.
    let mut blocks: FxMap<BlockKey, Members> = FxMap::default();
    for (i, (c, r)) in candidates.iter().zip(&read).enumerate() {
        let Some((key, text)) = *r else {
            continue;
        };
        let (mech, lex) = blocks.entry((c.domain, c.kind, key)).or_default();
        if text.is_some() { lex } else { mech }.push((c.recorded_at, i as u32));
    }
    let mut blocks: Vec<(BlockKey, Members)> = blocks.into_iter().collect();
    // Largest blocks first, so that no large block starts last while the other threads idle,
    // and one block per job: rayon otherwise splits the list only a few times, and a thread
    // that drew the run of large blocks works through it alone while the others run dry.
    // (The output is sorted below, so the order blocks run in never shows.)
    let size = |(mech, lex): &Members| mech.len() + lex.len();
    blocks.sort_unstable_by(|(a, x), (b, y)| size(y).cmp(&size(x)).then_with(|| a.cmp(b)));
    let texts = Texts::analyse(&read, lexicon);
    drop(read);
    let min_shared = MinShared::new(lexicon);
    let parts: Vec<Vec<Cluster>> = blocks
        .into_par_iter()
        .with_max_len(1)
        .map(|((domain, kind, key), (mech, lex))| {
            let mech = member_order(candidates, mech);
            let lex = member_order(candidates, lex);
            let block = Block::new(candidates, (names.get(domain), kind, key), &min_shared);
            let mut v = block.mechanical(&mech);
            v.extend(block.lexical(&lex, &texts, lexicon));
            v
        })
        .collect();
    // The analyses are millions of small strings: freed on every core, beside the sort.
    let analyses = texts.analyses;
    rayon::join(|| in_id_order(parts), || analyses.into_par_iter().for_each(drop)).0
}

/// A block's members in member order, (recorded_at, record id, index), from (recorded_at,
/// index) pairs: sorted as numbers, then each run of one `recorded_at` by its record ids (a
/// comparison that reads each candidate, a cache miss, is left to the few that tie).
fn member_order(candidates: &[Candidate], mut members: Vec<(Millis, u32)>) -> Vec<u32> {
    // The index makes every key distinct, so an unstable sort gives the same order.
    members.sort_unstable();
    let mut rest = &mut members[..];
    while let Some(&(at, _)) = rest.first() {
        let run = rest.iter().take_while(|&&(t, _)| t == at).count();
        let (tied, after) = rest.split_at_mut(run);
        if run > 1 {
            tied.sort_unstable_by(|&(_, x), &(_, y)| {
                (&candidates[x as usize].record_id, x).cmp(&(&candidates[y as usize].record_id, y))
            });
        }
        rest = after;
    }
    members.into_iter().map(|(_, i)| i).collect()
}

/// The blocks' clusters in one vector sorted by (id, anchor), each moved once, on every core
/// (`bulk::scatter`). The sort reads each id once, its first sixteen bytes as one number: a
/// sort comparing the clusters read both ids behind their pointers at every comparison, a
/// cache miss each. Equal numbers (the same id, or ids longer than sixteen bytes that agree
/// that far) are compared in full. No two clusters share an anchor: a total order.
fn in_id_order(parts: Vec<Vec<Cluster>>) -> Vec<Cluster> {
    let all: Vec<&Cluster> = parts.iter().flatten().collect();
    let mut keys: Vec<(u128, u32)> = (all.par_iter().enumerate())
        .map(|(g, c)| (crate::score::prefix(&c.id), g as u32))
        .collect();
    let full = |a: &Cluster, b: &Cluster| (&a.id, a.anchor).cmp(&(&b.id, b.anchor));
    keys.par_sort_unstable_by(|&(x, g), &(y, h)| {
        x.cmp(&y).then_with(|| full(all[g as usize], all[h as usize]))
    });
    drop(all);
    let mut to = vec![0u32; keys.len()];
    for (rank, &(_, g)) in keys.iter().enumerate() {
        to[g as usize] = rank as u32;
    }
    drop(keys);
    crate::bulk::scatter(Vec::new(), parts, &to)
}

/// What the clustering reads of a candidate it clusters: its key, and its text when it
/// clusters lexically (`None`: mechanically, on its working args).
type Read<'a> = (Option<&'a str>, Option<&'a str>);

/// The analysis of every distinct lexical text, made once for all blocks: a text recurs in
/// several blocks (domains, kinds), and one parallel pass keeps every core busy even when a
/// single large block dominates the clustering.
struct Texts<'a> {
    /// Per candidate: the slot of its text (lexical candidates only).
    slot: Vec<u32>,
    /// Per slot, its text (a cluster's id hashes its anchor's text).
    text: Vec<&'a str>,
    analyses: Vec<Analysis>,
    /// A fingerprint of each analysis, to find exact duplicates.
    prints: Vec<u64>,
    /// Per slot, the length of the longest acronym its text writes (`acronym_len`).
    acronyms: Vec<u8>,
    /// Per slot, what `similar::spelled_out` needs of its text and can find in it: most pairs
    /// the walk judges could never be one lesson through an acronym, and skip that try.
    spell: Vec<similar::SpellBits>,
    /// Per slot, what `similar::judge`'s first step reads of its text: most pairs the walk
    /// judges fail there, and those it can tell from the bits are not judged.
    tech: Vec<similar::TechBits>,
    /// Per slot, its index keys (`index_keys` of each token, in token order) as numbers: the
    /// blocks' inverted indexes are keyed by these, so pairing hashes integers, not strings.
    keys: Vec<u32>,
    /// Slot `s`'s keys are `keys[key_start[s]..key_start[s + 1]]`.
    key_start: Vec<u32>,
}

impl<'a> Texts<'a> {
    /// `read`: per candidate, what `cluster_where` read of it (the text of a lexical one).
    fn analyse(read: &[Option<Read<'a>>], lx: &Lexicon) -> Texts<'a> {
        let (slot, texts) = crate::bulk::first_seen(read, |r| r.and_then(|(_, text)| text));
        // Per batch of texts: the analyses, their fingerprints, and their index keys numbered
        // in a batch-local dictionary (so the numbering runs on every core, too).
        struct Batch {
            analyses: Vec<Analysis>,
            prints: Vec<u64>,
            acronyms: Vec<u8>,
            spell: Vec<similar::SpellBits>,
            tech: Vec<similar::TechBits>,
            keys: Vec<u32>,
            key_counts: Vec<u32>,
            dictionary: Vec<String>,
        }
        let batches: Vec<Batch> = texts
            .par_chunks(1024)
            .map(|chunk| {
                let mut memo = lexicon::ChunkMemo::default();
                let analyses: Vec<Analysis> = chunk
                    .iter()
                    .map(|t| lx.analyze_with(t, Some(&mut memo)))
                    .collect();
                let mut prints = Vec::with_capacity(analyses.len());
                let acronyms = analyses.iter().map(acronym_len).collect();
                let spell = analyses.iter().map(similar::SpellBits::of).collect();
                let tech = analyses.iter().map(similar::TechBits::of).collect();
                let (mut keys, mut key_counts) = (Vec::new(), Vec::with_capacity(analyses.len()));
                let mut dictionary = Vec::new();
                let mut local: FxMap<&str, u32> = FxMap::default();
                for a in &analyses {
                    let mut h = fx::Fx::default();
                    a.hash_duplicate(&mut h);
                    prints.push(h.finish());
                    let before = keys.len();
                    for t in &a.tokens {
                        for key in index_keys(t) {
                            let next = local.len() as u32;
                            keys.push(*local.entry(key).or_insert_with(|| {
                                dictionary.push(key.to_string());
                                next
                            }));
                        }
                    }
                    key_counts.push((keys.len() - before) as u32);
                }
                drop(local);
                Batch {
                    analyses,
                    prints,
                    acronyms,
                    spell,
                    tech,
                    keys,
                    key_counts,
                    dictionary,
                }
            })
            .collect();
        // One numbering for all batches: each batch's dictionary is looked up once (a few
        // thousand words per batch instead of every token), then its keys are renumbered in
        // parallel. Only equality of numbers is ever used.
        let mut number: FxMap<&str, u32> = FxMap::default();
        let renumber: Vec<Vec<u32>> = (batches.iter())
            .map(|b| {
                (b.dictionary.iter())
                    .map(|key| {
                        let next = number.len() as u32;
                        *number.entry(key).or_insert(next)
                    })
                    .collect()
            })
            .collect();
        drop(number);
        let renumbered: Vec<Vec<u32>> = (batches.par_iter().zip(&renumber))
            .map(|(b, to)| b.keys.iter().map(|&k| to[k as usize]).collect())
            .collect();
        let mut key_start = Vec::with_capacity(texts.len() + 1);
        key_start.push(0u32);
        // The batches' tables joined on every core (`bulk::concat`): a hundred-odd bytes a
        // text, copied on one core into fresh pages, was the stage's largest serial step.
        let n = batches.len();
        let (mut analyses, mut prints) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut acronyms, mut spell, mut tech) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for b in batches {
            for n in b.key_counts {
                key_start.push(key_start.last().copied().unwrap_or(0) + n);
            }
            analyses.push(b.analyses);
            prints.push(b.prints);
            acronyms.push(b.acronyms);
            spell.push(b.spell);
            tech.push(b.tech);
        }
        use crate::bulk::concat;
        Texts {
            slot,
            text: texts,
            analyses: concat(analyses),
            prints: concat(prints),
            acronyms: concat(acronyms),
            spell: concat(spell),
            tech: concat(tech),
            keys: concat(renumbered),
            key_start,
        }
    }

    fn keys(&self, slot: usize) -> &[u32] {
        &self.keys[self.key_start[slot] as usize..self.key_start[slot + 1] as usize]
    }
}

struct Block<'a> {
    candidates: &'a [Candidate],
    domain: &'a str,
    kind: Kind,
    key: Option<&'a str>,
    /// Rules out anchors that share too few tokens (made once from the lexicon).
    min_shared: &'a MinShared,
    /// The cluster id's digest fed the block's domain, kind and key: every cluster of the
    /// block shares them, so each id is this, cloned, fed only its text (`Block::make`).
    prefix: digest::FieldsDigest,
}

impl<'a> Block<'a> {
    fn new(
        candidates: &'a [Candidate],
        (domain, kind, key): (&'a str, Kind, Option<&'a str>),
        min_shared: &'a MinShared,
    ) -> Block<'a> {
        let mut prefix = digest::FieldsDigest::default();
        [domain, kind.as_str(), key.unwrap_or("")]
            .iter()
            .for_each(|field| prefix.feed(field));
        Block {
            candidates,
            domain,
            kind,
            key,
            min_shared,
            prefix,
        }
    }

    /// A cluster of the block: its id is `C` + `digest::of_fields([domain, kind, key or "",
    /// content])`, the block's `prefix` finished with `content`.
    fn make(&self, anchor: u32, content: &str, members: Vec<u32>) -> Cluster {
        let mut id = self.prefix.clone();
        id.feed(content);
        Cluster {
            id: digest::id_of_bits('C', id.bits()),
            domain: self.domain.to_string(),
            kind: self.kind,
            key: self.key.map(str::to_string),
            anchor,
            members,
        }
    }

    /// Exact clustering on the working args; `order` is already in member order.
    fn mechanical(&self, order: &[u32]) -> Vec<Cluster> {
        let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
        let mut at: FxMap<&str, usize> = FxMap::default();
        for &i in order {
            let w = self.candidates[i as usize].working().unwrap_or("");
            match at.get(w) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    at.insert(w, groups.len());
                    groups.push((w, vec![i]));
                }
            }
        }
        groups
            .into_iter()
            .map(|(w, members)| self.make(members[0], w, members))
            .collect()
    }

    /// Anchor-based lexical clustering; `order` is already in member order.
    fn lexical(&self, order: &[u32], texts: &Texts, lx: &Lexicon) -> Vec<Cluster> {
        let slots: Vec<usize> = order.iter().map(|&i| texts.slot[i as usize] as usize).collect();
        let distinct = &texts.analyses;
        let ahead = Ahead::gather(&slots, texts);
        // Cluster k: anchor position in `order` and its members.
        let mut clusters: Vec<(usize, Vec<u32>)> = Vec::new();
        // Exact duplicates: fingerprint → (analysis slot, cluster), checked for equality.
        let mut dup = Duplicates::default();
        let mut index: FxMap<u32, Vec<u32>> = FxMap::default();
        // Per cluster: shared-token count with the current candidate, and the anchor's token
        // count (kept here, next to the count, rather than looked up through the anchor).
        // Beside the token count, the length of the longest acronym the anchor writes
        // (`Token::acronym`; 0 for none): one read for both.
        let mut counts: Vec<u32> = Vec::new();
        let mut anchor_size: Vec<(u32, u8)> = Vec::new();
        // Per cluster, what a comparison reads of its anchor before the judgement, in one
        // record: read through the anchor's slot, it was three cache misses a comparison.
        let mut anchors: Vec<AnchorBits> = Vec::new();
        // The clusters the current candidate's postings touch, in the order first touched:
        // `touched[..n_touched]`. A slot per cluster and one more, the one a posting of an
        // already touched cluster writes when every cluster is touched.
        let mut touched: Vec<u32> = vec![0];
        let mut found: Vec<(f64, u32)> = Vec::new();
        // Anchors only an acronym's spelled-out words may bring within reach (below).
        let mut spare: Vec<(f64, u32)> = Vec::new();
        for (p, &slot) in slots.iter().enumerate() {
            let cand = order[p];
            let an = &distinct[slot];
            let print = ahead.prints[p];
            let same = dup.find(print, |s| s == slot || distinct[s].duplicates(an));
            if let Some(k) = same {
                clusters[k].1.push(cand);
                continue;
            }
            // Branch-free: every posting writes its cluster at the end of `touched`, and the
            // end moves on only at the cluster's first touch. Whether a posting is a first
            // touch is a coin toss, which a branch mispredicts about half the time.
            let mut n_touched = 0;
            for key in ahead.keys(p) {
                if let Some(list) = index.get(key) {
                    for &k in list {
                        let count = &mut counts[k as usize];
                        touched[n_touched] = k;
                        n_touched += usize::from(*count == 0);
                        *count += 1;
                    }
                }
            }
            // Upper bound of each found anchor's score from its shared-token count; the
            // best bounds are compared first, and at most `max_compares` of them. Most
            // anchors share too few tokens: the table rules them out without the division.
            let (n, acronym) = ahead.sizes[p];
            let n = n as usize;
            // An acronym one side writes and the other spells out (`similar::spelled_out`)
            // is one more shared token, and its words (two, up to the acronym's letters) one
            // token of the side that spells it out: the bound allows for that where either
            // side writes an acronym (`acronym`: the candidate's longest).
            // Such anchors go to `spare`, compared only when no anchor of `found` matches:
            // the ranking and the cut of `found` stay what they are without acronyms.
            found.clear();
            spare.clear();
            for &k in &touched[..n_touched] {
                let (m, theirs) = anchor_size[k as usize];
                let m = m as usize;
                let count = counts[k as usize];
                counts[k as usize] = 0;
                if count >= self.min_shared.get(n, m) {
                    let c = (count as usize).min(n).min(m);
                    let bound = similar::score(lx.measure, c, c, n, m);
                    if bound >= lx.threshold {
                        found.push((bound, k));
                        continue;
                    }
                }
                if acronym > 0 || theirs > 0 {
                    let c = (count as usize + 1).min(n).min(m);
                    let spelled = |len: usize, by: u8| (len + 1).saturating_sub(by as usize).max(c);
                    let (m2, n2) = (spelled(m, acronym), spelled(n, theirs));
                    // The table rules most out exactly, without the divisions.
                    let within = |n: usize, m: usize| c as u32 >= self.min_shared.get(n, m);
                    if within(n, m2) || within(n2, m) {
                        let ours = similar::score(lx.measure, c, c, n, m2);
                        let other = similar::score(lx.measure, c, c, n2, m);
                        let bound = ours.max(other);
                        if bound >= lx.threshold {
                            spare.push((bound, k));
                        }
                    }
                }
            }
            // Only the best `max_compares` are needed, in order (each anchor once: a total order).
            let best_first = |x: &(f64, u32), y: &(f64, u32)| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1));
            let mut best: Option<(f64, usize)> = None;
            // A `spare` anchor's bound without the acronym is below the threshold, so only
            // the spelled-out reading can make it one lesson: the plain judgement is skipped.
            for (list, spelled) in [(&mut found, false), (&mut spare, true)] {
                if best.is_some() {
                    break;
                }
                if list.len() > lx.max_compares {
                    list.select_nth_unstable_by(lx.max_compares, best_first);
                    list.truncate(lx.max_compares);
                }
                list.sort_by(best_first);
                for &(bound, k) in list.iter() {
                    let k = k as usize;
                    if best.is_some_and(|(b, _)| bound < b) {
                        break;
                    }
                    let facts = &anchors[k];
                    let anchor = &distinct[facts.slot as usize];
                    // Most pairs could not be one lesson through an acronym (`SpellBits`):
                    // those are judged without trying to spell one out, which finds nothing.
                    let may_spell = similar::SpellBits::may_spell(facts.spell, texts.spell[slot]);
                    // And most fail the first step of the judgement, each naming a tool the other
                    // lacks (`TechBits`): without an acronym to spell out, that is the end.
                    let judged = match (spelled, may_spell) {
                        (false, true) => similar::compare(lx, anchor, an),
                        (false, false) if similar::TechBits::vetoed(&facts.tech, &texts.tech[slot]) => None,
                        (false, false) => similar::judged(lx, anchor, an),
                        (true, true) => similar::spelled_out(lx, anchor, an),
                        (true, false) => None,
                    };
                    debug_assert!(
                        may_spell
                            || judged
                                == if spelled {
                                    similar::spelled_out(lx, anchor, an)
                                } else {
                                    similar::compare(lx, anchor, an)
                                },
                        "SpellBits ruled out an acronym spelled out"
                    );
                    if let Some(s) = judged
                        && best.is_none_or(|(b, bk)| s > b || (s == b && k < bk))
                    {
                        best = Some((s, k));
                    }
                }
            }
            let k = match best {
                Some((_, k)) => {
                    clusters[k].1.push(cand);
                    k
                }
                None => {
                    let k = clusters.len();
                    clusters.push((p, vec![cand]));
                    counts.push(0);
                    anchor_size.push((n as u32, acronym));
                    anchors.push(AnchorBits {
                        slot: slot as u32,
                        spell: texts.spell[slot],
                        tech: texts.tech[slot],
                    });
                    touched.push(0);
                    for &key in ahead.keys(p) {
                        let list = index.entry(key).or_default();
                        if list.len() < lx.postings_cap && list.last() != Some(&(k as u32)) {
                            list.push(k as u32);
                        }
                    }
                    k
                }
            };
            dup.push(print, slot, k);
        }
        // The anchors' texts first, in one pass of independent reads (their slot's copy:
        // the same text, in a denser table than the candidates).
        let anchor_texts: Vec<&str> = clusters.iter().map(|&(p, _)| texts.text[slots[p]]).collect();
        (clusters.into_iter().zip(anchor_texts))
            .map(|((p, members), text)| self.make(order[p], text, members))
            .collect()
    }
}

/// The walk's exact duplicates: per fingerprint, the (analysis slot, cluster) pairs met under
/// it, in the order met. Nearly every fingerprint has one pair: they sit in one vector, each
/// fingerprint's chained from its first, where a vector per fingerprint was an allocation
/// (and its free) per distinct text of the block.
#[derive(Default)]
struct Duplicates {
    /// Fingerprint → its first and last entry.
    ends: FxMap<u64, (u32, u32)>,
    /// (slot, cluster, next entry of the same fingerprint or `NONE`).
    entries: Vec<(u32, u32, u32)>,
}

impl Duplicates {
    const NONE: u32 = u32::MAX;

    /// The cluster of the first pair under `print` whose slot `same` admits.
    fn find(&self, print: u64, mut same: impl FnMut(usize) -> bool) -> Option<usize> {
        let mut at = self.ends.get(&print)?.0;
        while at != Self::NONE {
            let (slot, k, next) = self.entries[at as usize];
            if same(slot as usize) {
                return Some(k as usize);
            }
            at = next;
        }
        None
    }

    fn push(&mut self, print: u64, slot: usize, k: usize) {
        let at = self.entries.len() as u32;
        self.entries.push((slot as u32, k as u32, Self::NONE));
        match self.ends.get_mut(&print) {
            Some((_, last)) => {
                self.entries[*last as usize].2 = at;
                *last = at;
            }
            None => {
                self.ends.insert(print, (at, at));
            }
        }
    }
}

/// A cluster's anchor as the walk's comparisons read it: its analysis's slot and its bits.
struct AnchorBits {
    slot: u32,
    spell: similar::SpellBits,
    tech: similar::TechBits,
}

/// What a block's walk reads first about each candidate's text — its fingerprint, token
/// count and index keys — gathered in member order before the walk. Texts sit in first-seen
/// order, so each of these reads is likely a cache miss: in the walk every one stalls it,
/// while here they are independent loads that overlap.
struct Ahead {
    prints: Vec<u64>,
    /// Token count and longest acronym (`acronym_len`): the walk's bounds need both.
    sizes: Vec<(u32, u8)>,
    /// Position `p`'s keys are `keys[bounds[p]..bounds[p + 1]]`.
    keys: Vec<u32>,
    bounds: Vec<u32>,
}

impl Ahead {
    fn gather(slots: &[usize], texts: &Texts) -> Ahead {
        let prints = slots.iter().map(|&s| texts.prints[s]).collect();
        let sizes = slots
            .iter()
            .map(|&s| (texts.analyses[s].tokens.len() as u32, texts.acronyms[s]))
            .collect();
        let (mut keys, mut bounds) = (Vec::new(), Vec::with_capacity(slots.len() + 1));
        bounds.push(0);
        for &s in slots {
            keys.extend_from_slice(texts.keys(s));
            bounds.push(keys.len() as u32);
        }
        Ahead {
            prints,
            sizes,
            keys,
            bounds,
        }
    }

    fn keys(&self, p: usize) -> &[u32] {
        &self.keys[self.bounds[p] as usize..self.bounds[p + 1] as usize]
    }
}

/// The length of the longest acronym a text writes (`Token::acronym`; 0 for none, at most
/// 255). Made with the analyses: in the walk, reading a candidate's tokens for it would be
/// a cache miss per candidate, most of which are never compared with anything.
fn acronym_len(a: &Analysis) -> u8 {
    (a.tokens.iter())
        .filter(|t| t.acronym)
        .map(|t| t.text.len().min(u8::MAX as usize) as u8)
        .max()
        .unwrap_or(0)
}

/// For token counts `n` and `m` up to `SIDE - 1`: the fewest shared tokens whose score bound
/// can reach the threshold (`u32::MAX` when none can). A count below it is ruled out exactly
/// as `similar::score` would rule it out; larger texts are always let through to that test.
struct MinShared {
    table: Vec<u32>,
}

impl MinShared {
    const SIDE: usize = 64;

    fn new(lx: &Lexicon) -> MinShared {
        let mut table = Vec::with_capacity(Self::SIDE * Self::SIDE);
        for n in 0..Self::SIDE {
            for m in 0..Self::SIDE {
                // The bound grows with the count, so the first count that passes is the least.
                let least = (0..=n.min(m)).find(|&c| similar::score(lx.measure, c, c, n, m) >= lx.threshold);
                table.push(least.map_or(u32::MAX, |c| c as u32));
            }
        }
        MinShared { table }
    }

    fn get(&self, n: usize, m: usize) -> u32 {
        if n < Self::SIDE && m < Self::SIDE {
            self.table[n * Self::SIDE + m]
        } else {
            0
        }
    }
}

/// Index keys of a token: itself, and for a technical token its last `.`/`/` segment, so
/// that `react.useeffect` finds `useeffect`, and for a flag with a value the bare flag, so
/// that `--max-old-space-size=4096` finds `--max-old-space-size` (`similar::tech_match`).
fn index_keys(t: &Token) -> impl Iterator<Item = &str> {
    let (tail, flag) = if t.technical {
        let tail = t.text.rfind(['.', '/']).map(|i| &t.text[i + 1..]);
        let flag = t
            .text
            .find('=')
            .filter(|_| t.text.starts_with('-'))
            .map(|i| &t.text[..i]);
        (tail.filter(|s| !s.is_empty()), flag)
    } else {
        (None, None)
    };
    std::iter::once(&*t.text).chain(tail).chain(flag)
}

#[cfg(test)]
mod tests;
