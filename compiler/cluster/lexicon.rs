//! `rules/lexicon.yaml` and the text analysis it drives: tokens, stems, synonyms, technical
//! tokens and the role (asserted, negated, before-, after-clause) of every content word.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::fx::{FxMap as HashMap, FxSet as HashSet};

use serde::Deserialize;
use unicode_segmentation::UnicodeSegmentation;

/// Marker that `instead of`, `rather than`, … map to.
const INSTEAD: &str = "~instead";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default = "default_measure")]
    measure: String,
    threshold: f64,
    #[serde(default = "default_substitution")]
    max_substitution: usize,
    #[serde(default = "default_polarity")]
    polarity_overlap: f64,
    /// At least 1 (as `max_compares`): zero would silently turn clustering off, every
    /// candidate its own cluster.
    #[serde(default = "default_cap", deserialize_with = "crate::policy::at_least_one")]
    postings_cap: usize,
    #[serde(
        default = "default_compares",
        deserialize_with = "crate::policy::at_least_one"
    )]
    max_compares: usize,
    #[serde(default)]
    stop_words: Vec<String>,
    /// The stop words that are verbs: as written, one may be a command's program ("run make
    /// build"); every other stop word never is.
    #[serde(default)]
    stop_verbs: Vec<String>,
    /// Words besides the stop words that are never a command's program.
    #[serde(default)]
    not_programs: Vec<String>,
    #[serde(default)]
    articles: Vec<String>,
    #[serde(default)]
    negators: Vec<String>,
    #[serde(default)]
    clause_breaks: Vec<String>,
    #[serde(default)]
    phrases: BTreeMap<String, String>,
    #[serde(default)]
    synonyms: Vec<Vec<String>>,
    #[serde(default)]
    antonyms: Vec<Vec<String>>,
    #[serde(default)]
    antonym_prefixes: Vec<String>,
    #[serde(default)]
    commands: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    technical_terms: Vec<String>,
    /// Technical terms that are also English verbs (`go`): `Lexicon::verb_use`.
    #[serde(default)]
    verb_terms: Vec<String>,
    #[serde(default)]
    abbreviations: Vec<String>,
    #[serde(default)]
    movable: Vec<String>,
    /// Verbs that add nothing to the command right after them (`Lexicon::command_verbs`).
    #[serde(default)]
    command_verbs: Vec<String>,
    #[serde(default)]
    negating_verbs: Vec<String>,
    /// Predicates that refuse their clause's subject after a form of `be` (`refusing`).
    #[serde(default)]
    refusing_predicates: Vec<String>,
    #[serde(default)]
    be_verbs: Vec<String>,
    #[serde(default)]
    compound_tails: Vec<String>,
    #[serde(default)]
    compounds: Vec<String>,
    /// Keywords a `NOT` in capitals joins with into one technical token (`keyword_negations`).
    #[serde(default)]
    keyword_negations: Vec<String>,
    #[serde(default)]
    counts: Vec<String>,
    #[serde(default)]
    inflection: InflectionFile,
}

fn default_measure() -> String {
    "dice".into()
}
fn default_substitution() -> usize {
    1
}
fn default_polarity() -> f64 {
    0.6
}
fn default_cap() -> usize {
    64
}
fn default_compares() -> usize {
    16
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct InflectionFile {
    #[serde(default)]
    min_length: usize,
    #[serde(default)]
    exceptions: BTreeMap<String, String>,
    #[serde(default)]
    stages: Vec<Vec<SuffixRule>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuffixRule {
    suffix: String,
    #[serde(default)]
    replace: String,
    #[serde(default = "one")]
    min_stem: usize,
    #[serde(default)]
    keep: Vec<String>,
    #[serde(default)]
    undouble: bool,
}

fn one() -> usize {
    1
}

/// How content overlap is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// 2|A∩B| / (|A|+|B|)
    Dice,
    /// |A∩B| / |A∪B|
    Jaccard,
    /// |A∩B| / min(|A|,|B|)
    Overlap,
}

/// `rules/lexicon.yaml`: stop words, inflections, synonyms, antonyms, technical-token rules
/// and the similarity threshold.
#[derive(Clone, Debug)]
pub struct Lexicon {
    pub(crate) measure: Measure,
    pub(crate) threshold: f64,
    pub(crate) max_substitution: usize,
    /// How alike a clause negated on one side and one asserted on the other must be (Jaccard
    /// over their content words) for the pair to be a lesson and its negation.
    pub(crate) polarity_overlap: f64,
    pub(crate) postings_cap: usize,
    pub(crate) max_compares: usize,
    /// Stop words, articles, negators and clause breaks by stem: one lookup per word.
    function_words: HashMap<String, FunctionWord>,
    /// Stemmed word sequences → replacement (and its number in `fact_ids`), longest first.
    phrases: Vec<(Vec<String>, String, u32)>,
    /// First words of the phrases: most tokens start none, so they skip the phrase scan.
    phrase_starts: HashSet<String>,
    synonyms: HashMap<String, String>,
    pub(crate) antonyms: Vec<(String, String)>,
    /// Word → the antonym pairs it is in, with its side (1 = first word, 2 = second).
    antonym_of: HashMap<String, Vec<(usize, u8)>>,
    /// Prefixes that make a word its opposite (`un`pin, `dis`allow): `similar` reads a word
    /// with one against the word without it on the other side as an antonym pair.
    pub(crate) antonym_prefixes: Vec<String>,
    commands: HashMap<String, HashSet<String>>,
    /// Every listed subcommand as written (`build`, `install`): a word written so after a
    /// tool's name is what makes the name a command's (`command_heads`).
    subcommand_words: HashSet<String>,
    terms: HashSet<String>,
    /// Technical terms that are also English verbs, canonical (`verb_use`).
    verb_terms: HashSet<String>,
    abbreviations: HashSet<String>,
    /// Verbs a paraphrase moves with its voice, canonical: the check for two words traded in
    /// place passes over them.
    pub(crate) movable: HashSet<String>,
    /// Verbs that say only that the command right after them is run or read ("run kubectl
    /// diff", "check kubectl diff"), canonical: before a command's program they are no
    /// content word, so two wordings that pick different ones meet.
    command_verbs: HashSet<String>,
    /// Verbs that turn off what their object names (`disable`, `skip`, `bypass`), canonical:
    /// as a clause's verb they negate the rest of it, and after a negator they undo it.
    negating_verbs: HashSet<String>,
    /// Predicates that turn down their clause's subject (`forbidden`, `banned`), stemmed:
    /// right after a form of `be` (`be_verbs`) they negate the clause's words so far.
    refusing_predicates: HashSet<String>,
    be_verbs: HashSet<String>,
    /// Second parts that keep a hyphenated word whole (`compound_tails`).
    compound_tails: HashSet<String>,
    /// Hyphenated words kept whole (`compounds`).
    compounds: HashSet<String>,
    /// Stems of the keywords that follow a `NOT` in capitals in code (SQL's `NOT NULL`, `NOT
    /// EXISTS`): the two are one technical token, no negation (`join_keyword_negations`).
    keyword_negations: HashSet<String>,
    /// Number words (`counts`), stemmed: a count names how, so a clause that asserts one is
    /// no mirror of a negated clause without it (`similar::mirrored`).
    pub(crate) counts: HashSet<String>,
    min_length: usize,
    exceptions: HashMap<String, String>,
    stages: Vec<Vec<SuffixRule>>,
    /// Stems of the words that steer roles.
    mk: Markers,
    /// Every word some table above is looked up by (`Facts`), numbered from 1: an item
    /// carries its word's number, so the analysis hashes a word once, when its chunk is first
    /// tokenized, rather than once per table (and not at all for a chunk the memo holds).
    fact_ids: HashMap<String, u32>,
    /// `fact_ids`' words by number, and what the tables say of each; entry 0 is every other
    /// word's (in no table).
    fact_words: Vec<String>,
    facts: Vec<Facts>,
}

/// What the lexicon's tables say of one word (stemmed or canonical), each field exactly its
/// table's answer for the word (`Lexicon::index_facts`).
#[derive(Clone, Debug, Default)]
struct Facts {
    fw: FunctionWord,
    phrase_start: bool,
    /// The number of the word's synonym group's canonical word, when that is another word.
    canon: Option<u32>,
    term: bool,
    /// One of `verb_terms`.
    verb_term: bool,
    negating: bool,
    /// One of `refusing_predicates`.
    refusing: bool,
    /// One of `be_verbs`.
    be: bool,
    /// A program the lexicon lists commands of (a key of `commands`).
    program: bool,
    /// One of `command_verbs`.
    command_verb: bool,
    antonyms: Vec<(usize, u8)>,
    /// Which of `Markers`' words this word is (`mark` bits): step 5 asks it of every word,
    /// and a bit test is cheaper than comparing the word with each marker's text.
    marks: u32,
}

/// `Facts::marks`: the word is `Markers`' field of the same name (or one of its list's words).
mod mark {
    pub const NOT: u32 = 1;
    pub const BEFORE: u32 = 1 << 1;
    pub const AFTER: u32 = 1 << 2;
    pub const REPLACE: u32 = 1 << 3;
    pub const WITH: u32 = 1 << 4;
    pub const BY: u32 = 1 << 5;
    pub const OVER: u32 = 1 << 6;
    pub const THAN: u32 = 1 << 7;
    pub const UNLESS: u32 = 1 << 8;
    pub const TO: u32 = 1 << 9;
    pub const WITHOUT: u32 = 1 << 10;
    pub const FIRST: u32 = 1 << 11;
    pub const THEN: u32 = 1 << 12;
    pub const AND: u32 = 1 << 13;
    pub const CONDITION: u32 = 1 << 14;
    pub const EXPLAINING: u32 = 1 << 15;
    pub const PREFER: u32 = 1 << 16;
    pub const OBJECT: u32 = 1 << 17;
    pub const AUX: u32 = 1 << 18;
    pub const ONLY: u32 = 1 << 19;
    pub const QUANTIFIER: u32 = 1 << 20;
    /// `INSTEAD`, what `instead of` and `rather than` become.
    pub const INSTEAD: u32 = 1 << 21;
}

/// The antonym marks of an `only` in one clause, held until the clause ends: in a clause
/// that orders steps ("only run terraform apply after terraform plan") it restricts the step
/// and is no antonym; elsewhere ("only deploy from main") it is one.
#[derive(Default)]
struct PendingOnly {
    ordered: bool,
    marks: Vec<(usize, u8)>,
}

impl PendingOnly {
    fn end_clause(&mut self, antonyms: &mut [u8]) {
        if !std::mem::take(&mut self.ordered) {
            for &(k, side) in &self.marks {
                antonyms[k] |= side;
            }
        }
        self.marks.clear();
    }
}

/// What a function word is (one word can be several: `so` is a stop word and a clause break).
#[derive(Clone, Copy, Debug, Default)]
struct FunctionWord {
    stop: bool,
    article: bool,
    negator: bool,
    clause_break: bool,
}

#[derive(Clone, Debug, Default)]
struct Markers {
    not: String,
    before: String,
    after: String,
    replace: String,
    with: String,
    by: String,
    over: String,
    than: String,
    unless: String,
    to: String,
    without: String,
    first: String,
    then: String,
    and: String,
    /// Clause breaks after which a `then` may be a condition's ("if X, then Y"), not a step's.
    conditions: Vec<String>,
    /// Clause breaks that open a clause explaining the rule rather than stating it.
    explaining: Vec<String>,
    prefer: Vec<String>,
    /// Verbs that start a command ("run make build", "use cargo test").
    runs: Vec<String>,
    /// Words a command follows ("build with make --locked", "via helm upgrade --install").
    via: Vec<String>,
    /// Never a command's program, so "run in test mode" names no tool: the stop words but
    /// the verbs among them (`stop_verbs`), and `not_programs`.
    not_heads: HashSet<String>,
    /// Negators that stand as the object of the verb before them: "deploy nothing on
    /// Fridays" and "use no global state" negate the verb as "never deploy" does.
    object: Vec<String>,
    /// Auxiliaries a negator follows after the clause's subject ("library code should not
    /// use print", "secrets must never be committed"): the subject is the rule's scope, neither
    /// asserted nor negated, as "in library code" is in "don't use print in library code".
    aux: Vec<String>,
    /// `only` in a clause that orders steps ("only run terraform apply after terraform plan")
    /// restricts the step, as `every` right after the order word does ("run terraform plan
    /// before every apply"): neither is read as an antonym there.
    only: String,
    quantifiers: Vec<String>,
}

impl Markers {
    /// Every marker word with its `mark` bit (a word may carry several: `use` prefers and runs).
    fn words(&self) -> Vec<(&str, u32)> {
        let one = [
            (&self.not, mark::NOT),
            (&self.before, mark::BEFORE),
            (&self.after, mark::AFTER),
            (&self.replace, mark::REPLACE),
            (&self.with, mark::WITH),
            (&self.by, mark::BY),
            (&self.over, mark::OVER),
            (&self.than, mark::THAN),
            (&self.unless, mark::UNLESS),
            (&self.to, mark::TO),
            (&self.without, mark::WITHOUT),
            (&self.first, mark::FIRST),
            (&self.then, mark::THEN),
            (&self.and, mark::AND),
            (&self.only, mark::ONLY),
        ];
        let lists = [
            (&self.conditions, mark::CONDITION),
            (&self.explaining, mark::EXPLAINING),
            (&self.prefer, mark::PREFER),
            (&self.object, mark::OBJECT),
            (&self.aux, mark::AUX),
            (&self.quantifiers, mark::QUANTIFIER),
        ];
        (one.into_iter().map(|(w, b)| (w.as_str(), b)))
            .chain(
                lists
                    .into_iter()
                    .flat_map(|(ws, b)| ws.iter().map(move |w| (w.as_str(), b))),
            )
            .chain([(INSTEAD, mark::INSTEAD)])
            .collect()
    }
}

/// Does a word with `marks` open an "instead of …" scope: `instead of`, `rather than`, or
/// `over`/`than` after a `prefer`?
fn opens_contrast(marks: u32, prefer: bool) -> bool {
    marks & mark::INSTEAD != 0 || (prefer && marks & (mark::OVER | mark::THAN) != 0)
}

impl Default for Lexicon {
    fn default() -> Lexicon {
        Lexicon::from_yaml("threshold: 0.5").expect("minimal lexicon")
    }
}

/// What a content word does in its sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Asserted,
    /// Negated ("never X", "avoid X") or dispreferred ("instead of X", "replace X with").
    Negated,
    /// In a "before …" clause, or the later step of "X first, then Y" (which says what "X
    /// before Y" says).
    Before,
    /// In an "after …" clause.
    After,
}

/// One content token of an analysed text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token {
    pub text: Box<str>,
    /// The text's first eight bytes as one number (`head`): the measure compares tokens of two
    /// texts by it first and reads the text itself, in its own allocation, only on a tie.
    pub head: u64,
    /// The text's last eight bytes as one number (`tail`): with `head` and the length, it rules
    /// out almost every pair of technical tokens `similar::tech_match` is asked about without
    /// reading either text.
    pub tail: u64,
    pub technical: bool,
    /// `None` when the word plays more than one role in the text. A role where the rule is
    /// stated wins over one in a clause that only explains it: "read the file before editing
    /// it so the edit matches" edits at the later step.
    pub role: Option<Role>,
    /// The step the word is placed at (`Role::Before`, `Role::After` or `Role::Asserted` for
    /// the rule's own), negated or not: "never deploy before the migration runs" places the
    /// migration later, as "deploy before the migration runs" does. `None` when the word is
    /// placed at two steps.
    pub step: Option<Role>,
    /// For the polarity veto: the clauses in which the word is negated, as bits (bit k: the
    /// text's k-th clause; the last bit also stands for every later one). Only clauses that
    /// state the rule count: those that explain it (opened by `so`, `because`, `since`,
    /// `otherwise`, `unless`, or a `to avoid …` purpose) set no bit ("so the node does not
    /// run out of memory" and "otherwise the node runs out of memory" give the same advice),
    /// nor does `without …`, which qualifies the rule rather than negating it, nor any
    /// negation in a text with `unless` ("don't X unless Y" is "X only when Y").
    pub negated_in: Clauses,
    /// The clauses that state the rule in which the word is asserted, as bits.
    pub asserted_in: Clauses,
    /// For the flag veto: the word is in a clause that states the rule in a role that does
    /// not refuse it (asserted, or in a before/after clause): "run cargo test --release".
    pub taken: bool,
    /// Every use of the word is in a clause that explains the rule ("…, because it masks
    /// broken declaration files"), none in one that states it.
    pub explains: bool,
    /// For the flag veto: the word follows `without` in a clause that states the rule and was
    /// not negated before it ("run cargo test without --release"; "never run it without
    /// --release" is a double negation and leaves nothing out). Cleared, as `negated_in` is,
    /// in a text with `unless`.
    pub left_out: bool,
    /// A plain word written in capitals, two to six letters ("PII", "TTL"): an acronym that
    /// another text may spell out ("personally identifiable information", "time to live";
    /// `similar::spelled_out`).
    pub acronym: bool,
    /// A plain word met only as a later part of a hyphenated word ("actions" of
    /// "github-actions", "account" of "service-account"): shared, it and the first part are
    /// one name, which counts once in the overlap (`similar::judge_once`, step 5).
    pub part: bool,
}

/// Is a technical token a command-line flag: `-` or `--` and then a letter (`-v`, `--force`,
/// `-auto-approve`, `--grace-period=0`)? Numbers (`-1`, `-0.5`), dashes in prose (`—`, a lone
/// `-` or `--`, which never become tokens) and hyphenated words (`e-mail`) are not.
pub(crate) fn is_flag(text: &str) -> bool {
    let rest = text.strip_prefix("--").or_else(|| text.strip_prefix('-'));
    rest.and_then(|r| r.bytes().next())
        .is_some_and(|b| b.is_ascii_alphabetic())
}

/// Are two texts equal? Unequal token texts of one length mostly differ in their first or last
/// byte: compared inline, they need no `memcmp` call.
#[inline]
pub(crate) fn text_eq(a: &str, b: &str) -> bool {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    x.len() == y.len() && x.first() == y.first() && x.last() == y.last() && x == y
}

/// Joins `Analysis::words`: no word holds one (words come from whitespace-split chunks
/// and the lexicon's one-line entries), so equal joins are equal lists of words.
pub(crate) const WORD_BREAK: &str = "\n";

/// A set of a text's clauses, one bit each (`Token::negated_in`).
pub type Clauses = u16;

/// A text as the similarity measure sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Analysis {
    /// Content tokens, deduplicated, sorted by text.
    pub tokens: Vec<Token>,
    /// Every canonical word (stop words and markers included), sorted and joined by `\n`
    /// (`WORD_BREAK`): two texts are exact duplicates only when these agree too. One
    /// allocation, not one per word: only equality and the duplicate hash read them.
    pub words: Box<str>,
    /// Content tokens in order of first appearance: (index in `tokens`, technical). A word seen
    /// both as technical and plain is one token but may appear twice. Indexes, not texts: the
    /// measure walks these often, and a text would be one more allocation to read.
    pub seq: Vec<(u32, bool)>,
    /// Per antonym pair of the lexicon: 1 = only the first word occurs, 2 = only the second,
    /// 0 = neither or both.
    pub antonyms: Vec<u8>,
}

impl Token {
    /// The byte order of two tokens' texts.
    #[inline]
    pub(crate) fn cmp_text(&self, other: &Token) -> std::cmp::Ordering {
        by_head(self.head, &self.text, other.head, &other.text)
    }

    /// Do two tokens have the same text?
    #[inline]
    pub(crate) fn same_text(&self, other: &Token) -> bool {
        self.head == other.head
            && self.text.len() == other.text.len()
            && (self.text.len() <= 8 || self.text == other.text)
    }
}

/// A text's first eight bytes, zero-padded, as a big-endian number. Where two heads differ
/// their order is the texts' byte order (a zero pad sorts first, as a shorter text does).
pub(crate) fn head(text: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = text.len().min(8);
    b[..n].copy_from_slice(&text.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

/// A text's last eight bytes, zero-padded in front, as a big-endian number: its last byte is
/// the lowest.
pub(crate) fn tail(text: &str) -> u64 {
    let (mut b, bytes) = ([0u8; 8], text.as_bytes());
    let n = bytes.len().min(8);
    b[8 - n..].copy_from_slice(&bytes[bytes.len() - n..]);
    u64::from_be_bytes(b)
}

/// The byte order of texts `a` and `b` with heads `ha` and `hb`: equal heads of texts no
/// longer than eight bytes leave only the length to compare (the shorter is a prefix).
#[inline]
pub(crate) fn by_head(ha: u64, a: &str, hb: u64, b: &str) -> std::cmp::Ordering {
    ha.cmp(&hb).then_with(|| {
        if a.len() <= 8 && b.len() <= 8 {
            a.len().cmp(&b.len())
        } else {
            a.cmp(b)
        }
    })
}

impl Analysis {
    /// The content token with text `w` (tokens are sorted by text).
    pub(crate) fn token(&self, w: &str) -> Option<&Token> {
        let h = head(w);
        let i = self
            .tokens
            .binary_search_by(|t| by_head(t.head, &t.text, h, w))
            .ok()?;
        Some(&self.tokens[i])
    }

    /// The content token with the text of `t` (a token of another text).
    pub(crate) fn find(&self, t: &Token) -> Option<&Token> {
        let i = self.tokens.binary_search_by(|x| x.cmp_text(t)).ok()?;
        Some(&self.tokens[i])
    }

    /// The token of an entry of `seq`.
    pub(crate) fn at(&self, (i, _): (u32, bool)) -> &Token {
        &self.tokens[i as usize]
    }

    /// Exact duplicates for clustering: the same content tokens (text, technical, role),
    /// words, sequence and antonyms. The clause sets of the polarity veto are left out, as
    /// they were before there were any: two texts that differ only in how their words fall
    /// into clauses, with every role the same, stay duplicates (and the near-identical texts
    /// of a large block keep taking the duplicate's short cut).
    pub(crate) fn duplicates(&self, other: &Analysis) -> bool {
        let same = |x: &Token, y: &Token| {
            x.text == y.text && x.technical == y.technical && x.role == y.role && x.step == y.step
        };
        self.tokens.len() == other.tokens.len()
            && self.tokens.iter().zip(&other.tokens).all(|(x, y)| same(x, y))
            && self.words == other.words
            && self.seq == other.seq
            && self.antonyms == other.antonyms
    }

    /// A hash consistent with `duplicates`.
    pub(crate) fn hash_duplicate<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        self.tokens.len().hash(h);
        for t in &self.tokens {
            (&t.text, t.technical, t.role, t.step).hash(h);
        }
        (&self.words, &self.seq, &self.antonyms).hash(h);
    }
}

/// The items of whitespace chunks already tokenized (see `Lexicon::analyze_with`), and the
/// analysis's scratch vectors: kept from one text to the next, they are allocated once a
/// batch rather than once a text.
#[derive(Default)]
pub struct ChunkMemo<'a> {
    chunks: HashMap<&'a str, Vec<Item<'a>>>,
    scratch: Scratch<'a>,
}

/// Vectors `analyze_with` fills and empties on every text (each is empty between texts).
#[derive(Default)]
struct Scratch<'a> {
    items: Vec<Item<'a>>,
    seq: Vec<Item<'a>>,
    full: Vec<Item<'a>>,
    heads: Vec<u64>,
    by_text: Vec<u32>,
    token_of: Vec<u32>,
}

/// A word (borrowed from the text or the lexicon where it can be) or a clause break.
#[derive(Clone, Debug)]
enum Item<'a> {
    Word {
        text: Cow<'a, str>,
        technical: bool,
        /// What the word's chunk says about a command around it: `OPENS` and `CLOSES` (a
        /// backtick before or after it), `AS_WRITTEN` (a plain word in its own form, not
        /// inflected) and `SUBCOMMAND` (written as a listed subcommand: `build`, not `builds`).
        mark: u16,
        /// The text's number in `Lexicon::fact_ids` (0: in no table), kept with the text.
        id: u32,
    },
    /// `setting`: the colon after an identifier-shaped key (`imagePullPolicy:`), so the word
    /// after it is the setting's value and as technical as a flag's (`Always` vs `IfNotPresent`).
    Break { setting: bool },
}

/// `Item::Word::mark` bits.
const OPENS: u16 = 1;
const CLOSES: u16 = 2;
const AS_WRITTEN: u16 = 4;
const SUBCOMMAND: u16 = 8;
/// Set by `command_heads`: the word is a command's program.
const PROGRAM: u16 = 16;
/// Written capitalized and otherwise in lower case ("Always", "Never"): mid-sentence, after
/// `to` or a technical token, such a stop word is a setting's value (`titled_value`).
const TITLED: u16 = 32;
/// Written in capitals, two to six letters ("PII", "TTL", "MFA"): an acronym, which another
/// text may spell out (`Token::acronym`).
const UPPER: u16 = 64;
/// Written as a participle, `-ing` or `-ed` ("missing", "unnoticed"): after a technical term
/// that is also a verb, the verb's complement ("fixtures go missing"; `Lexicon::verb_use`).
const PARTICIPLE: u16 = 128;
/// Written with a capital and otherwise in lower case, of any length ("Go"): mid-sentence, a
/// name (`Lexicon::verb_use`).
const CAPITALIZED: u16 = 256;
/// A later part of a hyphenated word split into words ("actions" of "github-actions"):
/// with its first part it is one name (`Token::part`).
const PART: u16 = 512;

impl Item<'_> {
    /// The word's text, technical flag and mark; `None` for a clause break.
    fn word(&self) -> Option<(&str, bool, u16)> {
        match self {
            Item::Word {
                text,
                technical,
                mark,
                ..
            } => Some((text, *technical, *mark)),
            Item::Break { .. } => None,
        }
    }

    fn into_owned<'b>(self) -> Item<'b> {
        match self {
            Item::Word {
                text,
                technical,
                mark,
                id,
            } => Item::Word {
                text: Cow::Owned(text.into_owned()),
                technical,
                mark,
                id,
            },
            Item::Break { setting } => Item::Break { setting },
        }
    }
}

impl Lexicon {
    pub fn from_yaml(text: &str) -> Result<Lexicon, String> {
        let f: File = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let measure = match f.measure.as_str() {
            "dice" => Measure::Dice,
            "jaccard" => Measure::Jaccard,
            "overlap" => Measure::Overlap,
            other => {
                return Err(format!("unknown measure `{other}` (dice, jaccard, overlap)"));
            }
        };
        if !(f.threshold > 0.0 && f.threshold <= 1.0) {
            return Err(format!("threshold {} is not in (0, 1]", f.threshold));
        }
        if !(f.polarity_overlap > 0.0 && f.polarity_overlap <= 1.0) {
            return Err(format!(
                "polarity_overlap {} is not in (0, 1]",
                f.polarity_overlap
            ));
        }
        let mut lx = Lexicon {
            measure,
            threshold: f.threshold,
            max_substitution: f.max_substitution,
            polarity_overlap: f.polarity_overlap,
            postings_cap: f.postings_cap,
            max_compares: f.max_compares,
            function_words: HashMap::default(),
            phrases: Vec::new(),
            phrase_starts: HashSet::default(),
            synonyms: HashMap::default(),
            antonyms: Vec::new(),
            antonym_of: HashMap::default(),
            antonym_prefixes: Vec::new(),
            commands: HashMap::default(),
            subcommand_words: HashSet::default(),
            terms: HashSet::default(),
            verb_terms: HashSet::default(),
            abbreviations: f.abbreviations.iter().map(|s| s.to_lowercase()).collect(),
            movable: HashSet::default(),
            command_verbs: HashSet::default(),
            negating_verbs: HashSet::default(),
            refusing_predicates: HashSet::default(),
            be_verbs: HashSet::default(),
            compound_tails: f.compound_tails.iter().map(|s| s.to_lowercase()).collect(),
            compounds: f.compounds.iter().map(|s| s.to_lowercase()).collect(),
            keyword_negations: HashSet::default(),
            counts: HashSet::default(),
            min_length: f.inflection.min_length,
            exceptions: f
                .inflection
                .exceptions
                .iter()
                .map(|(k, v)| (k.to_lowercase(), v.to_lowercase()))
                .collect(),
            stages: f.inflection.stages.clone(),
            mk: Markers::default(),
            fact_ids: HashMap::default(),
            fact_words: Vec::new(),
            facts: Vec::new(),
        };
        // Everything below is matched on stems.
        let stem = |lx: &Lexicon, w: &str| lx.stem(&w.to_lowercase());
        lx.mk = Markers {
            not: stem(&lx, "not"),
            before: stem(&lx, "before"),
            after: stem(&lx, "after"),
            replace: stem(&lx, "replace"),
            with: stem(&lx, "with"),
            by: stem(&lx, "by"),
            over: stem(&lx, "over"),
            than: stem(&lx, "than"),
            unless: stem(&lx, "unless"),
            to: stem(&lx, "to"),
            without: stem(&lx, "without"),
            first: stem(&lx, "first"),
            then: stem(&lx, "then"),
            and: stem(&lx, "and"),
            conditions: ["if", "when", "whenever", "unless"]
                .map(|w| stem(&lx, w))
                .to_vec(),
            explaining: ["so", "because", "since", "otherwise", "unless"]
                .map(|w| stem(&lx, w))
                .to_vec(),
            prefer: vec![stem(&lx, "use"), stem(&lx, "prefer")],
            runs: vec![stem(&lx, "run"), stem(&lx, "use")],
            via: ["with", "via", "through"].map(|w| stem(&lx, w)).to_vec(),
            not_heads: {
                let verbs: HashSet<String> = f.stop_verbs.iter().map(|w| stem(&lx, w)).collect();
                (f.stop_words.iter().chain(&f.not_programs))
                    .map(|w| stem(&lx, w))
                    .filter(|w| !verbs.contains(w))
                    .collect()
            },
            object: ["no", "nothing", "none"].map(|w| stem(&lx, w)).to_vec(),
            aux: [
                "should", "must", "can", "could", "would", "will", "shall", "may", "might", "need", "do",
                "does", "did", "is", "are", "was", "were", "cannot",
            ]
            .map(|w| stem(&lx, w))
            .to_vec(),
            only: stem(&lx, "only"),
            quantifiers: ["every", "each", "all", "any"].map(|w| stem(&lx, w)).to_vec(),
        };
        let mut fw: HashMap<String, FunctionWord> = HashMap::default();
        for w in &f.stop_words {
            fw.entry(stem(&lx, w)).or_default().stop = true;
        }
        for w in &f.articles {
            fw.entry(stem(&lx, w)).or_default().article = true;
        }
        for w in &f.negators {
            fw.entry(stem(&lx, w)).or_default().negator = true;
        }
        for w in &f.clause_breaks {
            fw.entry(stem(&lx, w)).or_default().clause_break = true;
        }
        lx.function_words = fw;
        let mut synonyms = HashMap::default();
        for group in &f.synonyms {
            let Some(first) = group.first() else { continue };
            let canon = stem(&lx, first);
            for w in group {
                let s = stem(&lx, w);
                if let Some(prev) = synonyms.insert(s.clone(), canon.clone())
                    && prev != canon
                {
                    return Err(format!("`{w}` is in two synonym groups"));
                }
            }
        }
        lx.synonyms = synonyms;
        lx.keyword_negations = f.keyword_negations.iter().map(|w| stem(&lx, w)).collect();
        lx.counts = f.counts.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        lx.movable = f.movable.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        lx.command_verbs = f.command_verbs.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        lx.negating_verbs = f.negating_verbs.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        lx.refusing_predicates = (f.refusing_predicates.iter())
            .map(|w| lx.canon(&stem(&lx, w)))
            .collect();
        lx.be_verbs = f.be_verbs.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        let mut phrases = Vec::new();
        for (k, v) in &f.phrases {
            let words: Vec<String> = k.split_whitespace().map(|w| stem(&lx, w)).collect();
            if words.len() < 2 {
                return Err(format!("phrase `{k}` needs two or more words"));
            }
            let v = if v.starts_with('~') {
                v.clone()
            } else {
                lx.canon(&stem(&lx, v))
            };
            phrases.push((words, v, 0));
        }
        phrases.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        lx.phrase_starts = phrases
            .iter()
            .filter_map(|(w, _, _)| w.first().cloned())
            .collect();
        lx.phrases = phrases;
        for pair in &f.antonyms {
            if pair.len() != 2 {
                return Err(format!("antonym group {pair:?} must have two words"));
            }
            let a = lx.canon(&stem(&lx, &pair[0]));
            let b = lx.canon(&stem(&lx, &pair[1]));
            let k = lx.antonyms.len();
            lx.antonym_of.entry(a.clone()).or_default().push((k, 1));
            lx.antonym_of.entry(b.clone()).or_default().push((k, 2));
            lx.antonyms.push((a, b));
        }
        lx.antonym_prefixes = f.antonym_prefixes.iter().map(|p| p.to_lowercase()).collect();
        for (prog, subs) in &f.commands {
            // A key of two words (`terraform workspace`) lists the subcommands of a
            // subcommand: each word is matched on its stem, as in the text.
            let p = (prog.split_whitespace())
                .map(|w| lx.canon(&stem(&lx, w)))
                .collect::<Vec<_>>()
                .join(" ");
            let set = subs.iter().map(|s| lx.canon(&stem(&lx, s))).collect();
            lx.commands.insert(p, set);
            lx.subcommand_words.extend(subs.iter().map(|s| s.to_lowercase()));
        }
        lx.terms = f
            .technical_terms
            .iter()
            .map(|w| lx.canon(&stem(&lx, w)))
            .collect();
        lx.verb_terms = f.verb_terms.iter().map(|w| lx.canon(&stem(&lx, w))).collect();
        if let Some(w) = lx.verb_terms.iter().find(|w| !lx.terms.contains(*w)) {
            return Err(format!("verb term `{w}` is not one of technical_terms"));
        }
        lx.index_facts();
        Ok(lx)
    }

    /// Numbers every word a table is looked up by and gathers each one's answers (`Facts`),
    /// once the tables are complete. A word in none of the tables has number 0 and default
    /// facts, which is what every table says of it.
    fn index_facts(&mut self) {
        let markers = self.mk.words();
        let mut words: Vec<String> = (self.function_words.keys())
            .chain(&self.phrase_starts)
            .chain(self.synonyms.keys())
            .chain(self.synonyms.values())
            .chain(self.antonym_of.keys())
            .chain(self.commands.keys())
            .chain(&self.terms)
            .chain(&self.negating_verbs)
            .chain(&self.refusing_predicates)
            .chain(&self.be_verbs)
            .chain(&self.command_verbs)
            .chain(self.phrases.iter().map(|(_, r, _)| r))
            .cloned()
            .chain(markers.iter().map(|&(w, _)| w.to_string()))
            .collect();
        // Sorted: the numbering does not depend on the tables' hash order.
        words.sort();
        words.dedup();
        let mut ids: HashMap<String, u32> = HashMap::default();
        for (k, w) in words.iter().enumerate() {
            ids.insert(w.clone(), k as u32 + 1);
        }
        let id = |w: &str| ids.get(w).copied().unwrap_or(0);
        let mut facts = vec![Facts::default()];
        for w in &words {
            let w = w.as_str();
            facts.push(Facts {
                fw: self.function_words.get(w).copied().unwrap_or_default(),
                phrase_start: self.phrase_starts.contains(w),
                canon: (self.synonyms.get(w)).filter(|c| *c != w).map(|c| id(c)),
                term: self.terms.contains(w),
                verb_term: self.verb_terms.contains(w),
                negating: self.negating_verbs.contains(w),
                refusing: self.refusing_predicates.contains(w),
                be: self.be_verbs.contains(w),
                program: self.commands.contains_key(w),
                command_verb: self.command_verbs.contains(w),
                antonyms: self.antonym_of.get(w).cloned().unwrap_or_default(),
                marks: (markers.iter())
                    .filter(|&&(m, _)| m == w)
                    .fold(0, |bits, &(_, b)| bits | b),
            });
        }
        for (_, r, k) in &mut self.phrases {
            *k = id(r);
        }
        self.fact_words = std::iter::once(String::new()).chain(words).collect();
        self.facts = facts;
        self.fact_ids = ids;
    }

    /// The number of `w` in `fact_ids` (0 for a word in no table).
    fn fact_id(&self, w: &str) -> u32 {
        self.fact_ids.get(w).copied().unwrap_or(0)
    }

    /// The similarity threshold (for reports).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// The tool `word` (as written, any case, any inflection) names, in its one form: one of
    /// `technical_terms` or a program the lexicon lists commands of ("Timestamps" names
    /// `timestamp`). SKILL.md's description names the tools its rules are about.
    pub fn tool_named(&self, word: &str) -> Option<String> {
        let w = self.canon(&self.stem(&word.to_lowercase()));
        (self.terms.contains(&w) || self.commands.contains_key(&w)).then_some(w)
    }

    /// Is `w` a program the lexicon lists commands of (`uv`, `cargo`, `kubectl`)?
    pub(crate) fn is_program(&self, w: &str) -> bool {
        self.commands.contains_key(w)
    }

    /// The plain word a flag's name reads as, when it is one word of three letters or more
    /// (`--amend` → `amend`, `--volumes` → `volume`, `--check` → `verify`): a text that says
    /// "amend the commit" names the flag that "git commit --amend" passes. `None` for short
    /// and compound names (`-v`, `--no-cache`, `--grace-period=0`).
    pub(crate) fn flag_word(&self, flag: &str) -> Option<String> {
        let name = flag.trim_start_matches('-');
        (name.len() >= 3 && name.bytes().all(|b| b.is_ascii_lowercase()))
            .then(|| self.canon(&self.stem(name)))
    }

    /// Is `w` (stemmed) one of the lexicon's stop words (`same`, `the`, `always`)?
    pub(crate) fn is_stop(&self, w: &str) -> bool {
        self.function_words.get(w).is_some_and(|f| f.stop)
    }

    /// Is `w` (stemmed) one of the lexicon's negators (`never`, `not`, `avoid`)?
    pub(crate) fn is_negator(&self, w: &str) -> bool {
        self.function_words.get(w).is_some_and(|f| f.negator)
    }

    /// The canonical word of a stemmed word's synonym group, borrowed.
    pub(crate) fn canon_ref<'a>(&'a self, w: &'a str) -> &'a str {
        self.synonyms.get(w).map_or(w, String::as_str)
    }

    fn canon(&self, w: &str) -> String {
        self.synonyms.get(w).cloned().unwrap_or_else(|| w.to_string())
    }

    /// Inflection: exceptions, then the suffix stages.
    pub fn stem(&self, word: &str) -> String {
        self.inflect(word)
            .map_or_else(|| word.to_string(), Cow::into_owned)
    }

    /// `stem`, or `None` when the word is its own stem (most words: no allocation for them).
    fn inflect(&self, word: &str) -> Option<Cow<'_, str>> {
        if let Some(e) = self.exceptions.get(word) {
            return Some(Cow::Borrowed(e));
        }
        if word.chars().count() < self.min_length.max(1) || !word.chars().all(char::is_alphabetic) {
            return None;
        }
        let mut stemmed: Option<String> = None;
        for stage in &self.stages {
            let w = stemmed.as_deref().unwrap_or(word);
            for r in stage {
                if !w.ends_with(&r.suffix) || r.keep.iter().any(|k| w.ends_with(k.as_str())) {
                    continue;
                }
                let base = &w[..w.len() - r.suffix.len()];
                let stem_len = base.chars().count() + r.replace.chars().count();
                let has_vowel = base.chars().any(|c| "aeiouy".contains(c));
                if stem_len < r.min_stem || !has_vowel {
                    continue;
                }
                let mut s = [base, &r.replace].concat();
                if r.undouble {
                    let mut back = s.chars().rev();
                    let (last, prev) = (back.next(), back.next());
                    if let (Some(c), true) = (last, back.next().is_some())
                        && prev == Some(c)
                        && !"lsz".contains(c)
                        && !"aeiouy".contains(c)
                    {
                        s.pop();
                    }
                }
                stemmed = Some(s);
                break;
            }
        }
        stemmed.map(Cow::Owned)
    }

    /// Splits a text into stemmed words and clause breaks, keeping technical tokens whole.
    /// A whitespace chunk's items depend on the chunk alone, so with a `memo` a chunk seen
    /// before (agents' texts share most of their words) is copied instead of worked out again.
    fn tokenize<'a>(
        &'a self,
        text: &'a str,
        memo: Option<&mut HashMap<&'a str, Vec<Item<'a>>>>,
        out: &mut Vec<Item<'a>>,
    ) {
        out.reserve(text.len() / 4); // about one item per word
        if text.contains('\u{2019}') || text.contains('\u{2018}') {
            let text = text.replace(['\u{2019}', '\u{2018}'], "'");
            let mut items = Vec::new();
            self.tokenize(&text, None, &mut items);
            out.extend(items.into_iter().map(Item::into_owned));
        } else {
            let mut memo = memo;
            for chunk in text.split_whitespace() {
                if let Some(items) = memo.as_ref().and_then(|m| m.get(chunk)) {
                    out.extend(items.iter().cloned());
                    continue;
                }
                let start = out.len();
                self.chunk(chunk, out);
                if let Some(m) = memo.as_mut() {
                    m.insert(chunk, out[start..].to_vec());
                }
            }
        }
    }

    fn chunk<'a>(&'a self, chunk: &'a str, out: &mut Vec<Item<'a>>) {
        const LEAD: &[char] = &['"', '\'', '`', '(', '[', '{', '<', '*', '“', '”'];
        const TRAIL: &[char] = &[
            '"', '\'', '`', ')', ']', '}', '>', '*', ',', ';', ':', '.', '!', '?', '“', '”',
        ];
        const BREAK: &[char] = &[',', ';', ':', '.', '!', '?'];
        if matches!(chunk, "-" | "—" | "–") {
            out.push(Item::Break { setting: false });
            return;
        }
        let mut s = chunk.trim_start_matches(LEAD);
        let opens = chunk[..chunk.len() - s.len()].contains('`');
        let start = out.len();
        let mut brk = false;
        let mut colon = false;
        let mut call = false;
        let mut closes = false;
        loop {
            if s.ends_with("()") {
                call = true;
                s = &s[..s.len() - 2];
                break;
            }
            match s.chars().last() {
                Some(c) if TRAIL.contains(&c) => {
                    brk |= BREAK.contains(&c);
                    colon |= c == ':';
                    closes |= c == ')';
                    s = &s[..s.len() - c.len_utf8()];
                }
                _ => break,
            }
        }
        let lead = chunk.len() - chunk.trim_start_matches(LEAD).len();
        let closes_tick = chunk[lead + s.len()..].contains('`');
        // `f(x, y)`: the head is a call, the rest is more text.
        if let Some(i) = s.find('(')
            && i > 0
        {
            let (head, rest) = (&s[..i], &s[i + 1..]);
            self.word_or_technical(head, true, out);
            if rest.contains(')') {
                let rest = rest.replace(')', "");
                let mut more = Vec::new();
                self.chunk(&rest, &mut more);
                out.extend(more.into_iter().map(Item::into_owned));
            } else if !rest.is_empty() {
                self.chunk(rest, out);
            }
        } else if !s.is_empty() {
            self.word_or_technical(s, call, out);
        }
        // A backtick before the chunk's first word or after its last: a command span's ends.
        let is_word = |it: &&mut Item| matches!(it, Item::Word { .. });
        if opens && let Some(Item::Word { mark, .. }) = out[start..].iter_mut().find(is_word) {
            *mark |= OPENS;
        }
        if closes_tick && let Some(Item::Word { mark, .. }) = out[start..].iter_mut().rfind(is_word) {
            *mark |= CLOSES;
        }
        // A parenthesis closed here (not a call's, `f(x)`) ends what it says: "install with
        // npm ci (not npm install) before npm test" negates `npm install` alone.
        if brk || closes && !s.contains('(') {
            out.push(Item::Break {
                setting: colon && is_setting_key(s),
            });
        }
    }

    fn word_or_technical<'a>(&'a self, s: &'a str, call: bool, out: &mut Vec<Item<'a>>) {
        let lower = lowercase(s);
        if self.abbreviations.contains(lower.trim_end_matches('.')) {
            return;
        }
        if call || looks_technical(s) {
            let t = if lower.contains(['"', '\'', '`']) {
                Cow::Owned(lower.chars().filter(|c| !"\"'`".contains(*c)).collect())
            } else {
                lower
            };
            let t = keep_prefix(t, |t| t.trim_end_matches("()"));
            // "and later" written as a `+` after a version (`1.22+`, `3.10+`) names that version
            // (`c++` and `g++` keep theirs: no digit before it).
            let t = keep_prefix(t, |t| match t.strip_suffix('+') {
                Some(v) if v.ends_with(|c: char| c.is_ascii_digit()) => v,
                _ => t,
            });
            let t = number(t);
            let t = short_flag_case(s, t);
            // `dSYMs` names what `dSYM` does (`acronym_plural`).
            let t = match acronym_plural(s) {
                true => keep_prefix(t, |t| &t[..t.len() - 1]),
                false => t,
            };
            if t.chars().any(char::is_alphanumeric) {
                out.push(Item::Word {
                    id: self.fact_id(&t),
                    text: t,
                    technical: true,
                    mark: 0,
                });
            }
            return;
        }
        // Most chunks are one plain word: ASCII letters and digits never split.
        if s.bytes().all(|b| b.is_ascii_alphanumeric()) {
            // An acronym's plural is the acronym: the stems leave "PRs" and "CRDs" alone, a
            // word with no vowel being no English plural.
            let (s, lower) = match acronym_plural(s) {
                true => (&s[..s.len() - 1], keep_prefix(lower, |w| &w[..w.len() - 1])),
                false => (s, lower),
            };
            self.plain_word(lower, out);
            let b = s.as_bytes();
            // A PascalCase name (`DbContext`, `HttpClient`, `StatefulSet`, `BaseModel`) names a
            // type or a product, as a camelCase one does: technical, so two lessons that differ
            // in it are two. Still a word (stemmed, read through the synonyms): `PostgreSQL`
            // is `postgres`, `HttpClients` is `HttpClient`.
            if pascal_case(b)
                && let Some(Item::Word { technical, .. }) = out.last_mut()
            {
                *technical = true;
            }
            if b.len() >= 3
                && b[0].is_ascii_uppercase()
                && b[1..].iter().all(u8::is_ascii_lowercase)
                && let Some(Item::Word { mark, .. }) = out.last_mut()
            {
                *mark |= TITLED;
            }
            if b.len() >= 2
                && b[0].is_ascii_uppercase()
                && b[1..].iter().all(u8::is_ascii_lowercase)
                && let Some(Item::Word { mark, .. }) = out.last_mut()
            {
                *mark |= CAPITALIZED;
            }
            if (2..=6).contains(&b.len())
                && b.iter().all(u8::is_ascii_uppercase)
                && let Some(Item::Word { mark, .. }) = out.last_mut()
            {
                *mark |= UPPER;
            }
        } else if lower.contains('-') && self.is_program(&lower) {
            // A listed program with a hyphen (`apt-get`, `ansible-vault`) is one name: split,
            // its subcommand would follow its last part ("vault encrypt") and name no command.
            self.plain_word(lower, out);
        } else if let Some(joined) = self.joined_compound(&lower) {
            self.plain_word(Cow::Owned(joined), out);
        } else {
            for (k, w) in s.unicode_words().enumerate() {
                let n = out.len();
                self.plain_word(lowercase(w), out);
                if k > 0
                    && out.len() > n
                    && let Some(Item::Word { mark, .. }) = out.last_mut()
                {
                    *mark |= PART;
                }
            }
        }
    }

    /// A two-part compound whose second part is one of the lexicon's `compound_tails`
    /// ("read-only") or that is one of its `compounds` ("opt-in"), joined: split, it would be
    /// its first part alone, the second being a stop word. (Spaced, "read only" stays two
    /// words: "it is read only at startup".)
    fn joined_compound(&self, lower: &str) -> Option<String> {
        let (head, tail) = lower.split_once('-')?;
        let letters = !head.is_empty() && head.bytes().all(|b| b.is_ascii_lowercase());
        let listed = self.compound_tails.contains(tail) || self.compounds.contains(lower);
        (letters && listed).then(|| format!("{head}{tail}"))
    }

    /// A lower-cased word, possessive and negation resolved, stemmed.
    fn plain_word<'a>(&'a self, w: Cow<'a, str>, out: &mut Vec<Item<'a>>) {
        let possessive = w.ends_with("'s");
        let mut w = keep_prefix(w, |w| w.strip_suffix("'s").unwrap_or(w));
        if let Some(head) = w.strip_suffix("n't") {
            // "shouldn't" is "should not": the auxiliary stays a word, so a negation after a
            // subject ("library code shouldn't use print") reads as one (`Markers::aux`).
            let aux = match head {
                "ca" => "can",
                "wo" => "will",
                "sha" => "shall",
                h => h,
            };
            if !aux.is_empty() && aux.bytes().all(|b| b.is_ascii_lowercase()) {
                self.plain_word(Cow::Owned(aux.to_string()), out);
            }
            w = Cow::Borrowed("not");
        }
        let mut mark = if self.subcommand_words.contains(&*w) {
            SUBCOMMAND
        } else {
            0
        };
        let text = match self.inflect(&w) {
            // Only a final `e` dropped (`make` → `mak`): the word as written.
            Some(stem) => {
                if !possessive && w.strip_suffix('e') == Some(&*stem) {
                    mark |= AS_WRITTEN;
                } else if w.ends_with("ing") || w.ends_with("ed") {
                    mark |= PARTICIPLE;
                }
                stem
            }
            None => {
                if !possessive {
                    mark |= AS_WRITTEN;
                }
                w
            }
        };
        out.push(Item::Word {
            id: self.fact_id(&text),
            text,
            technical: false,
            mark,
        });
    }

    /// Is `item`, after `seq`, a setting's value written in prose: a capitalized stop word or
    /// negator (not an article) right after `to` or a technical token, mid-sentence ("set
    /// imagePullPolicy to Always", "with imagePullPolicy Never")? Such a word names one of a
    /// setting's values, as `Always` after `imagePullPolicy:` does, and is kept as written
    /// and technical: "… to Always" and "… to IfNotPresent" are two settings. At a sentence's
    /// start the same word is the reader's instruction ("Always pin …").
    fn titled_value(&self, seq: &[Item], item: &Item) -> bool {
        let Item::Word {
            technical: false,
            mark,
            id,
            ..
        } = item
        else {
            return false;
        };
        let fw = self.facts[*id as usize].fw;
        mark & TITLED != 0
            && (fw.stop || fw.negator)
            && !fw.article
            && match seq.last() {
                Some(Item::Word {
                    text: prev,
                    technical,
                    ..
                }) => *technical || *prev == *self.mk.to,
                _ => false,
            }
    }

    /// `NOT` in capitals right before a listed keyword in capitals (`keyword_negations`: SQL's
    /// `NOT NULL`, `NOT EXISTS`) is code, one technical token (`not null`), and negates
    /// nothing: "add a NOT NULL constraint to the email column" asks for a constraint, and
    /// "do not add a NOT NULL constraint …" is its negation. A `NOT` written for emphasis
    /// ("do NOT commit .env files") still negates.
    fn join_keyword_negations(&self, items: &mut Vec<Item>) {
        // Compacted in place (`k` reads, `w` writes): one pass, however many pairs join.
        let (mut k, mut w) = (0, 0);
        while k < items.len() {
            let joined = match (&items[k], items.get(k + 1)) {
                (
                    Item::Word {
                        text: not, mark: m, ..
                    },
                    Some(Item::Word {
                        text: word,
                        mark: n,
                        technical: false,
                        ..
                    }),
                ) if m & n & UPPER != 0
                    && *not == *self.mk.not
                    && self.keyword_negations.contains(&**word) =>
                {
                    Some(format!("{not} {word}"))
                }
                _ => None,
            };
            match joined {
                Some(t) => {
                    items[k] = Item::Word {
                        id: self.fact_id(&t),
                        text: Cow::Owned(t),
                        technical: true,
                        mark: 0,
                    };
                    items.swap(w, k);
                    k += 2;
                }
                None => {
                    items.swap(w, k);
                    k += 1;
                }
            }
            w += 1;
        }
        items.truncate(w);
    }

    /// The analysis the similarity measure compares.
    pub fn analyze(&self, text: &str) -> Analysis {
        self.analyze_with(text, None)
    }

    /// `analyze`, remembering the items of each whitespace chunk in `memo` (for analysing many
    /// texts in a row; the memo borrows from them and from the lexicon).
    pub fn analyze_with<'a>(&'a self, text: &'a str, memo: Option<&mut ChunkMemo<'a>>) -> Analysis {
        self.read(text, memo, Reading::Steps)
    }

    /// A text read as the warning it words, for comparing a rule with the lines of a skill
    /// (the deltas): "never X without Y" refuses X done without Y, so a line that does X
    /// with no Y ("Run `terraform apply` directly in CI") says the opposite. `analyze` reads
    /// the same words as the steps they ask for (Y, then X), as a paraphrase says them.
    pub fn analyze_warning(&self, text: &str) -> Analysis {
        self.read(text, None, Reading::Warning)
    }

    fn read<'a>(&'a self, text: &'a str, memo: Option<&mut ChunkMemo<'a>>, reading: Reading) -> Analysis {
        let mut own = Scratch::default();
        let (chunks, scratch) = match memo {
            Some(m) => (Some(&mut m.chunks), &mut m.scratch),
            None => (None, &mut own),
        };
        // 1. stems (while tokenizing)
        let mut items = std::mem::take(&mut scratch.items);
        self.tokenize(text, chunks, &mut items);
        if text.contains("NOT") {
            self.join_keyword_negations(&mut items);
        }
        let named = named_beside_noun(&items);
        // 2. phrases, 3. synonyms
        let mut seq = std::mem::take(&mut scratch.seq);
        seq.reserve(items.len());
        let mut i = 0;
        'outer: while i < items.len() {
            // A setting's value is taken as written: no phrase, synonym or stop word. So is a
            // name the text also writes as a common word (`named_beside_noun`).
            // (`titled_value` needs `TITLED`: asked first, it spares most words its lookup.)
            let titled = matches!(&items[i], Item::Word { mark, .. } if mark & TITLED != 0);
            let value = matches!(seq.last(), Some(Item::Break { setting: true }))
                || titled && self.titled_value(&seq, &items[i])
                || named.contains(&i);
            let may_start = !value
                && matches!(&items[i], Item::Word { technical: false, id, .. } if self.facts[*id as usize].phrase_start);
            for (words, repl, id) in self.phrases.iter().filter(|_| may_start) {
                let n = words.len();
                if i + n <= items.len()
                    && words
                        .iter()
                        .zip(&items[i..i + n])
                        .all(|(w, it)| matches!(it, Item::Word { text, technical: false, .. } if text == w))
                {
                    seq.push(Item::Word {
                        text: Cow::Borrowed(repl),
                        technical: false,
                        mark: 0,
                        id: *id,
                    });
                    i += n;
                    continue 'outer;
                }
            }
            let verb = self.verb_use(&items, i, matches!(seq.last(), Some(Item::Word { .. })));
            // Moved out: the scan never looks back at item i.
            seq.push(
                match std::mem::replace(&mut items[i], Item::Break { setting: false }) {
                    Item::Word { text, mark, id, .. } if value => Item::Word {
                        text,
                        technical: true,
                        mark,
                        id,
                    },
                    Item::Word {
                        text,
                        technical,
                        mark,
                        id,
                    } => match self.synonym(text, technical, mark, id) {
                        Item::Word { text, mark, id, .. } if verb => Item::Word {
                            text,
                            technical: false,
                            mark,
                            id,
                        },
                        w => w,
                    },
                    brk => brk,
                },
            );
            i += 1;
        }
        items.clear();
        scratch.items = items;
        // 3½. the program a command names is a tool name, technical (`command_heads`).
        self.command_heads(&mut seq);
        // 4. commands: `program subcommand` becomes a technical token as well.
        //    A command just made is a program too, for a subcommand of a subcommand:
        //    `terraform workspace select` adds `terraform workspace` and then that.
        let mut full = std::mem::take(&mut scratch.full);
        full.reserve(seq.len() + 4);
        let mut rest = seq.drain(..).peekable();
        let mut made: Option<String> = None;
        // Whether the item before `it` is a word: a listed program written capitalized after
        // one is the product's name in prose, no command ("the Docker build stage", "the
        // Terraform state bucket"), unless the command's shape names it (`command_heads`:
        // "run Docker build --no-cache").
        let mut after_word = false;
        while let Some(it) = rest.next() {
            let lists = |p: &str, sub: &str| self.commands.get(p).is_some_and(|s| s.contains(sub));
            let prev = made.take();
            let program = |id: u32| self.facts[id as usize].program;
            // A program the lexicon does not list takes any listed subcommand as written:
            // "run make build" and "run make test" are two commands, as two of cargo's are.
            let unlisted =
                |p: u32, mark: u16, sub: u16| mark & PROGRAM != 0 && sub & SUBCOMMAND != 0 && !program(p);
            let command = match (&it, rest.peek()) {
                (
                    Item::Word {
                        text: p,
                        mark: pm,
                        id: pid,
                        ..
                    },
                    Some(Item::Word {
                        text: sub, mark: sm, ..
                    }),
                ) => {
                    if let Some(m) = prev.filter(|m| lists(m, sub)) {
                        Some(format!("{m} {sub}"))
                    } else if program(*pid)
                        && lists(p, sub)
                        && !(after_word && *pm & (TITLED | PROGRAM) == TITLED)
                        || unlisted(*pid, *pm, *sm)
                    {
                        Some(format!("{p} {sub}"))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            after_word = matches!(it, Item::Word { .. });
            full.push(it);
            if let Some(c) = command {
                let id = self.fact_id(&c);
                made = program(id).then(|| c.clone());
                full.push(Item::Word {
                    text: Cow::Owned(c),
                    technical: true,
                    mark: 0,
                    id,
                });
            }
        }
        drop(rest);
        scratch.seq = seq;
        // 4½. A verb that only says the command after it is run or read ("run kubectl diff",
        //     "check kubectl diff") is no content word: the command says what is done.
        //     (A facts bit, not a lookup of the text: most texts have no such verb.)
        let program = |it: Option<&Item>| {
            matches!(it, Some(Item::Word { technical: true, mark, id, .. })
                if mark & PROGRAM != 0 || self.facts[*id as usize].program)
        };
        let mut k = 0;
        while k + 1 < full.len() {
            let idle = matches!(&full[k], Item::Word { technical: false, id, .. }
                if self.facts[*id as usize].command_verb);
            if idle && program(full.get(k + 1)) {
                full.remove(k);
            } else {
                k += 1;
            }
        }
        // 5. roles, 6. stop words.
        // Each word with its head, for the sort below (most pairs ordered without a text).
        let mut words: Vec<(u64, &str)> = Vec::with_capacity(full.len());
        let mut antonyms = vec![0u8; self.antonyms.len()];
        // Content tokens in order of first appearance, with their role and negated clauses
        // (room for every word at once: growing it a text at a time took several allocations).
        let mut roles: Vec<Noted> = Vec::with_capacity(full.len());
        // The clause's number (a bit of `Token::negated_in`), whether it explains the rule
        // rather than stating it, whether the last word was `to` (`to avoid …`), and whether
        // an `unless` makes the text's negations conditional.
        let mut clause_no = 0u32;
        let mut explaining = false;
        // A clause after the first that opens with an article ("…; the detector finds races
        // that plain go test never reports") describes something rather than instructing: its
        // `always` or `never` tells how often a thing happens, and no antonym is read there.
        let mut describing = false;
        let mut after_to = false;
        let mut unless = false;
        let mut clause = Role::Asserted;
        // The step `clause` places its words at, whatever negates them (`Token::step`).
        let mut order = Role::Asserted;
        let mut contrast = false;
        let mut replace = false;
        let mut prefer = false;
        // After a `without` that leaves something out (`Token::left_out`).
        let mut leaving_out = false;
        // The antonym marks the negator of the clause set, with what they replaced, when a
        // negator negated it (`Reading::Steps` turns them at a `without`).
        let mut negator: Option<Vec<(usize, u8, u8)>> = None;
        // Steps in order: "deploy the frontend first, then the API" says what "deploy the
        // frontend before the API" says, so the later step takes the `before` clause's role.
        // `later`: an adverbial `first` ended a clause with words in it, so the next clause is
        // the later step; `sequence`: a `first` was seen, so a `then` orders steps;
        // `condition`: an `if` or `when` was seen, so a `then` without `first` or `and` may be
        // the condition's ("if the build fails, then clear the cache").
        let (mut later, mut sequence, mut condition) = (false, false, false);
        let mut clause_words = 0usize;
        // The clause's content words so far, and where the first one is noted in `roles` when
        // this clause noted it first (for an object negator right after it).
        let mut clause_content = 0usize;
        let mut verb: Option<usize> = None;
        // Where this clause's words start in `roles` (its subject, before an auxiliary
        // negation), and the antonym marks of an `only` in it (`PendingOnly`).
        let mut clause_start = 0usize;
        let mut only = PendingOnly::default();
        let mut previous: &str = "";
        // What the lexicon says of `previous` (the empty word's facts before the first word).
        let mut previous_facts: &Facts = &self.facts[self.fact_id(previous) as usize];
        let mut word_marks: Vec<(usize, u8, u8)> = Vec::new();
        // Plain words written as acronyms (`Token::acronym`).
        let mut acronyms: Vec<&str> = Vec::new();
        // Plain words met as a later part of a hyphenated word, and met otherwise.
        let (mut parts, mut alone): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        // What the lexicon says of the current word.
        let mut facts: &Facts;
        for (i, it) in full.iter().enumerate() {
            let (t, technical) = match it {
                Item::Break { .. } => {
                    only.end_clause(&mut antonyms);
                    clause_start = roles.len();
                    clause_no += 1;
                    explaining = false;
                    describing = false;
                    leaving_out = false;
                    negator = None;
                    clause = if std::mem::take(&mut later) {
                        Role::Before
                    } else {
                        Role::Asserted
                    };
                    order = clause;
                    clause_words = 0;
                    (clause_content, verb) = (0, None);
                    contrast = false;
                    replace = false;
                    prefer = false;
                    continue;
                }
                Item::Word {
                    text,
                    technical,
                    mark,
                    id,
                } => {
                    if mark & UPPER != 0 && !*technical {
                        acronyms.push(text);
                    }
                    if !*technical {
                        match mark & PART != 0 {
                            true => parts.push(text),
                            false => alone.push(text),
                        }
                    }
                    debug_assert_eq!(*id, self.fact_id(text), "`{text}` carries another's number");
                    facts = &self.facts[*id as usize];
                    (&**text, *technical)
                }
            };
            words.push((head(t), t));
            // Each antonym word marks its side: 1 = first word only, 2 = second only, 3 =
            // both. Only where the rule is stated: "always pass EX to SET, so no key is ever
            // left without an expiry" and "…, so a crash never leaves a key without expiry"
            // explain one rule with different words.
            // The markers this word is (bits, not texts: `Facts::marks`).
            let m = facts.marks;
            // `only` waits for the clause's end (`ordered`); `every` right after `before` or
            // `after` is the step's, not a policy's.
            let quantifies =
                m & mark::QUANTIFIER != 0 && previous_facts.marks & (mark::BEFORE | mark::AFTER) != 0;
            // The marks this word and the one before it set, with what they replaced: a
            // negating verb after a negator turns both to their opposites.
            let prior_marks = std::mem::take(&mut word_marks);
            if !explaining && !describing && !quantifies {
                for &(k, side) in &facts.antonyms {
                    if m & mark::ONLY != 0 {
                        only.marks.push((k, side));
                    } else {
                        word_marks.push((k, side, antonyms[k]));
                        antonyms[k] |= side;
                    }
                }
            }
            let prior = std::mem::replace(&mut previous, t);
            let prior_facts = std::mem::replace(&mut previous_facts, facts);
            let pm = prior_facts.marks;
            clause_words += 1;
            // So does one that opens with what an earlier clause turned down ("use timestamptz,
            // not timestamp; timestamp drops the time zone"): it says what is wrong with it.
            if clause_no > 0 && clause_words == 1 && !describing {
                describing =
                    (roles.iter()).any(|r| r.role == Some(Role::Negated) && r.negated_in != 0 && r.text == t);
                // After a rule that chose ("use SCAN instead of KEYS; KEYS blocks the server"),
                // such a clause explains why the word was turned down: it asserts nothing, so
                // the word stays refused. (After a rule that only refuses, "don't run tests in
                // parallel; run them serially", it may state the rule's other half.)
                explaining |= describing && roles.iter().any(|r| r.asserted_in != 0);
            }
            if m & mark::FIRST != 0 {
                // Adverbial only at a clause's end ("X first, then Y", "X first and Y") or
                // start ("First, X, then Y"), not as an adjective ("the first build").
                let ends = match full.get(i + 1) {
                    None | Some(Item::Break { .. }) => true,
                    Some(Item::Word { id, .. }) => {
                        self.facts[*id as usize].marks & (mark::THEN | mark::AND) != 0
                    }
                };
                if ends {
                    sequence = true;
                    later = clause_words > 1;
                }
            } else if m & mark::AND != 0 && pm & mark::FIRST != 0 && std::mem::take(&mut later) {
                order = Role::Before;
                if clause != Role::Negated {
                    clause = Role::Before;
                }
            }
            let stated = (!explaining).then_some(clause_no);
            if technical {
                after_to = false;
                let role = if contrast || replace {
                    Role::Negated
                } else {
                    clause
                };
                note(&mut roles, t, true, (role, order), stated, leaving_out);
                clause_content += 1;
                continue;
            }
            let to = std::mem::replace(&mut after_to, m & mark::TO != 0);
            let fw = facts.fw;
            describing |= fw.article && clause_no > 0 && clause_words == 1;
            if fw.clause_break {
                only.end_clause(&mut antonyms);
                clause_start = roles.len();
                clause_no += 1;
                clause_words = 0;
                (clause_content, verb) = (0, None);
                explaining = m & mark::EXPLAINING != 0;
                describing = false;
                leaving_out = false;
                negator = None;
                unless |= m & mark::UNLESS != 0;
                // "X, then Y", "X and then Y", "X first, then Y" order two steps.
                let step = m & mark::THEN != 0 && (sequence || later || pm & mark::AND != 0 || !condition);
                condition |= m & mark::CONDITION != 0;
                later = false;
                clause = if step { Role::Before } else { Role::Asserted };
                order = clause;
                contrast = false;
                replace = false;
                prefer = false;
                continue;
            }
            if fw.negator || m & mark::NOT != 0 {
                // "Deploy nothing on Fridays": the verb right before an object negator, the
                // clause's only word so far, is negated with the rest.
                let object = clause == Role::Asserted && clause_content == 1 && m & mark::OBJECT != 0;
                if let Some(r) = verb
                    .filter(|_| object)
                    .map(|v| &mut roles[v])
                    .filter(|r| r.text == prior)
                {
                    (r.role, r.negated_in, r.asserted_in, r.taken) =
                        (Some(Role::Negated), r.asserted_in, 0, false);
                }
                // "Never run terraform apply without reviewing the plan" asks for the review
                // and then the apply, as "review the plan before terraform apply" does: read
                // for its steps, the words negated so far are taken at the later step, the
                // negator's and `without`'s antonym marks turn ("never" is "always"), and the
                // words after `without` are the rule's own step.
                if reading == Reading::Steps
                    && m & mark::WITHOUT != 0
                    && clause == Role::Negated
                    && !explaining
                    && !to
                    && let Some(marks) = negator.take()
                {
                    let bit: Clauses = 1 << clause_no.min(Clauses::BITS - 1);
                    let mut moved = false;
                    for r in roles.iter_mut().filter(|r| r.negated_in & bit != 0) {
                        r.negated_in &= !bit;
                        if r.role == Some(Role::Negated) {
                            r.role = Some(Role::Before);
                        }
                        if r.step == Some(Role::Asserted) {
                            r.step = Some(Role::Before);
                        }
                        r.taken = true;
                        moved = true;
                    }
                    if moved {
                        for &(k, side, old) in word_marks.iter().rev().chain(marks.iter().rev()) {
                            antonyms[k] = old | (3 - side);
                        }
                        clause = Role::Asserted;
                        order = Role::Asserted;
                        continue;
                    }
                }
                if clause != Role::Negated {
                    negator = Some(word_marks.clone());
                }
                // "run it without --release" leaves the flag out; "never run it without
                // --release" is a double negation.
                leaving_out |= m & mark::WITHOUT != 0 && clause != Role::Negated && !explaining && !to;
                // "Library code shouldn't use print": the words before the auxiliary are the
                // rule's scope, in neither role (a word the text names elsewhere keeps its).
                if clause == Role::Asserted && !explaining && clause_content > 0 && (pm | m) & mark::AUX != 0
                {
                    let bit: Clauses = 1 << clause_no.min(Clauses::BITS - 1);
                    for r in &mut roles[clause_start..] {
                        r.role = None;
                        r.asserted_in &= !bit;
                    }
                }
                clause = Role::Negated;
                // "… to avoid X" is a purpose, and "without X" qualifies the rule ("pods
                // without them get evicted"): neither negates what the rule says to do.
                explaining |= to || m & mark::WITHOUT != 0;
                continue;
            }
            if opens_contrast(m, prefer) {
                contrast = true;
                continue;
            }
            if m & mark::REPLACE != 0 {
                replace = true;
                continue;
            }
            if replace && m & (mark::WITH | mark::BY) != 0 {
                replace = false;
                continue;
            }
            if m & (mark::BEFORE | mark::AFTER) != 0 {
                only.ordered = true;
                order = if m & mark::BEFORE != 0 {
                    Role::Before
                } else {
                    Role::After
                };
                if clause != Role::Negated {
                    clause = order;
                }
                continue;
            }
            if m & mark::PREFER != 0 {
                prefer = true;
            }
            if fw.stop || t.starts_with('~') {
                // A word right after "instead of" opens the scope rather than ending it
                // ("serially instead of in parallel" disprefers `parallel`).
                if contrast && !fw.article && !opens_contrast(pm, prefer) {
                    contrast = false;
                }
                continue;
            }
            let role = if contrast || replace {
                Role::Negated
            } else {
                clause
            };
            // A verb that turns off what it names, as its clause's verb: "disable certificate
            // verification" refuses the verification "always verify certificates" asks for.
            // After a negator it undoes it: "never skip the hooks" is "always run the hooks"
            // (the verb is no word of the lesson, and the negator's and the verb's antonym
            // marks turn to their opposites: "never disable the cache" ~ "keep the cache
            // enabled").
            let negating = clause_content == 0 && !explaining && !contrast && !replace && facts.negating;
            if negating && clause == Role::Negated && prior_facts.fw.negator {
                for &(k, side, old) in word_marks.iter().rev().chain(prior_marks.iter().rev()) {
                    antonyms[k] = old | (3 - side);
                }
                clause = order;
                continue;
            }
            // "KEYS is forbidden", "key files are banned": a predicate after `be` turns down
            // the clause's subject, as "never call KEYS" does. The words so far that this
            // clause asserts are negated instead, and the predicate is no word of the lesson.
            if facts.refusing
                && prior_facts.be
                && clause == Role::Asserted
                && !explaining
                && !contrast
                && !replace
            {
                let bit: Clauses = 1 << clause_no.min(Clauses::BITS - 1);
                for r in roles[clause_start..]
                    .iter_mut()
                    .filter(|r| r.asserted_in & bit != 0)
                {
                    if r.role == Some(Role::Asserted) {
                        r.role = Some(Role::Negated);
                    }
                    (r.negated_in, r.asserted_in, r.taken) =
                        (r.negated_in | bit, r.asserted_in & !bit, false);
                }
                clause = Role::Negated;
                continue;
            }
            let noted = roles.len();
            note(&mut roles, t, false, (role, order), stated, leaving_out);
            if negating && clause == Role::Asserted {
                clause = Role::Negated;
            }
            clause_content += 1;
            if clause_content == 1 && roles.len() > noted {
                verb = Some(noted);
            }
        }
        only.end_clause(&mut antonyms);
        // Sorted on their heads, most pairs without reading a text (the same byte order).
        words.sort_unstable_by(|a, b| by_head(a.0, a.1, b.0, b.1));
        words.dedup_by(|a, b| a.1 == b.1);
        for a in &mut antonyms {
            if *a == 3 {
                *a = 0;
            }
        }
        if unless {
            for r in &mut roles {
                r.negated_in = 0;
                r.left_out = false;
            }
        }
        // Tokens in text order; a word seen both as technical and plain counts once, as
        // technical. The entries of `roles` are sorted by index (no two share text and
        // technical, so the order is total), and each learns its token's index on the way:
        // the sequence needs no search.
        let mut heads = std::mem::take(&mut scratch.heads);
        heads.extend(roles.iter().map(|r| head(r.text)));
        let mut by_text = std::mem::take(&mut scratch.by_text);
        by_text.extend(0..roles.len() as u32);
        by_text.sort_unstable_by(|&a, &b| {
            let (x, y) = (&roles[a as usize], &roles[b as usize]);
            by_head(heads[a as usize], x.text, heads[b as usize], y.text).then(y.technical.cmp(&x.technical))
        });
        let mut token_of = std::mem::take(&mut scratch.token_of);
        token_of.resize(roles.len(), 0);
        let mut tokens: Vec<Token> = Vec::with_capacity(roles.len());
        for &i in &by_text {
            let (i, r) = (i as usize, &roles[i as usize]);
            if tokens.last().is_some_and(|t: &Token| *t.text == *r.text) {
                token_of[i] = tokens.len() as u32 - 1;
                continue;
            }
            token_of[i] = tokens.len() as u32;
            tokens.push(Token {
                text: r.text.into(),
                head: heads[i],
                tail: tail(r.text),
                technical: r.technical,
                role: r.role,
                step: r.step,
                negated_in: r.negated_in,
                asserted_in: r.asserted_in,
                taken: r.taken,
                explains: r.explains,
                left_out: r.left_out,
                acronym: !r.technical && acronyms.contains(&r.text),
                part: !r.technical && parts.contains(&r.text) && !alone.contains(&r.text),
            });
        }
        let mut seq: Vec<(u32, bool)> = (roles.iter().zip(&token_of))
            .map(|(r, &k)| (k, r.technical))
            .collect();
        seq.dedup_by(|a, b| a.0 == b.0);
        // `words` joined by `WORD_BREAK` (`join`'s output), written straight from the pairs.
        let len = words.iter().map(|(_, w)| w.len()).sum::<usize>()
            + WORD_BREAK.len() * words.len().saturating_sub(1);
        let mut joined = String::with_capacity(len);
        for (k, (_, w)) in words.iter().enumerate() {
            if k > 0 {
                joined.push_str(WORD_BREAK);
            }
            joined.push_str(w);
        }
        let analysis = Analysis {
            tokens,
            words: joined.into_boxed_str(),
            seq,
            antonyms,
        };
        // The scratch vectors go back empty, their room kept for the next text.
        full.clear();
        scratch.full = full;
        heads.clear();
        scratch.heads = heads;
        by_text.clear();
        scratch.by_text = by_text;
        token_of.clear();
        scratch.token_of = token_of;
        analysis
    }

    /// Step 3½: the program of a command is a tool name, and technical, whatever else the
    /// word is: "run make build --locked" names `make` as "run cargo build --locked" names
    /// `cargo`, so the two are two lessons (`make`, a stop word, was dropped before). A
    /// command is recognised by its shape, not by a list of tools:
    /// * the first word of a backticked span of two or more words (`` `make build` ``, ``
    ///   `just test` ``), or of one word right after `run` or `use` (``run `tox` ``);
    /// * of the words right before a flag, back to a `run`, `use`, `with`, `via` or
    ///   `through`, a clause break, an inflected word or a word that is never a program
    ///   (`not_heads`, articles, negators), the word before the first listed subcommand as
    ///   written (`make` in "by default make build --locked", `docker` in "docker compose
    ///   run --rm"); with none, the first word when a verb starts them (`run tox -e py311`)
    ///   or the second is technical (`npx tsc --noEmit`; not "raise max heap -Xmx2g");
    /// * after `run` or `use`, a word as written followed by a listed subcommand as written
    ///   ("run make test", "use cargo build"; not "run the tests", "run unit tests").
    ///
    /// A `run` that is its program's own subcommand (`npm run build`) starts nothing. A
    /// program found here that `commands` does not list takes any listed subcommand as
    /// written after it as its own in step 4 (`make build`, `make test`).
    fn command_heads(&self, seq: &mut [Item]) {
        let mk = &self.mk;
        let word = |k: usize| seq.get(k).and_then(Item::word);
        // A verb that starts a command here (not `npm run`'s subcommand).
        let starts = |k: usize, verbs: &[&Vec<String>]| {
            word(k).is_some_and(|(t, technical, _)| {
                !technical
                    && verbs.iter().any(|v| v.iter().any(|w| w == t))
                    && !(k.checked_sub(1).and_then(word))
                        .is_some_and(|(p, _, _)| self.commands.get(p).is_some_and(|s| s.contains(t)))
            })
        };
        let launcher = |k: usize| starts(k, &[&mk.runs, &mk.via]);
        let verb = |t: &str| mk.runs.iter().chain(&mk.via).any(|w| w == t);
        // Never a program; a `run` or `use` is one only as its program's subcommand.
        let grammar = |t: &str| {
            t.starts_with('~')
                || self
                    .function_words
                    .get(t)
                    .is_some_and(|f| f.article || f.negator || f.clause_break)
        };
        let never = |t: &str| grammar(t) || mk.not_heads.contains(t);
        let mut heads: Vec<usize> = Vec::new();
        let mut span: Vec<usize> = Vec::new();
        let mut k = 0;
        while k < seq.len() {
            let Some((t, technical, mark)) = word(k) else {
                k += 1;
                continue;
            };
            // A backticked span: its words up to the closing backtick.
            if mark & OPENS != 0 {
                let mut end = k;
                while let Some((_, _, m)) = word(end) {
                    end += 1;
                    if m & CLOSES != 0 {
                        break;
                    }
                }
                let closed = end > k && word(end - 1).is_some_and(|(_, _, m)| m & CLOSES != 0);
                let launched = k > 0 && starts(k - 1, &[&mk.runs]);
                // Two words or more are a command as typed (`just test`): its first is the
                // program, whatever it is in English.
                if closed && (end - k >= 2 && !grammar(t) || launched && !never(t) && !verb(t)) {
                    heads.push(k);
                }
            }
            // Right before a flag: back to what starts the command. Its program is the word
            // before its first listed subcommand (`make` in "by default make build
            // --locked", `docker` in "by default docker compose run --rm"), else its first.
            if technical && is_flag(t) {
                span.clear();
                let (mut launched, mut cut) = (false, false);
                let mut j = k;
                while j > 0 {
                    j -= 1;
                    let Some((w, tech, m)) = word(j) else { break };
                    if tech && is_flag(w) {
                        continue;
                    }
                    if !tech && launcher(j) {
                        launched = true;
                        break;
                    }
                    // A command is written as typed: "breaks npx tsc --noEmit" starts at npx.
                    if !tech && (never(w) || m & AS_WRITTEN == 0) {
                        break;
                    }
                    span.push(j);
                    if span.len() == 6 {
                        // Too long to start at its first word: only a subcommand tells.
                        cut = true;
                        break;
                    }
                }
                span.reverse();
                let sub = |&j: &usize| word(j).is_some_and(|(_, tech, m)| !tech && m & SUBCOMMAND != 0);
                let technical_at = |i: usize| {
                    span.get(i)
                        .and_then(|&j| word(j))
                        .is_some_and(|(_, tech, _)| tech)
                };
                match span.iter().skip(1).position(sub) {
                    Some(p) => heads.push(span[p]),
                    None if !cut && (launched || span.len() >= 2 && technical_at(1)) => {
                        heads.extend(span.first())
                    }
                    None => {}
                }
            }
            // `run X sub`, `use X sub`.
            if !technical && starts(k, &[&mk.runs]) {
                let w = word(k + 1);
                let sub = word(k + 2).is_some_and(|(_, tech, m)| !tech && m & SUBCOMMAND != 0);
                if let Some((w, false, m)) = w
                    && sub
                    && m & AS_WRITTEN != 0
                    && m & SUBCOMMAND == 0
                    && !never(w)
                    && !verb(w)
                {
                    heads.push(k + 1);
                }
            }
            k += 1;
        }
        for h in heads {
            if let Item::Word { technical, mark, .. } = &mut seq[h] {
                *technical = true;
                *mark |= PROGRAM;
            }
        }
    }

    /// Is the plain word at `i`, a technical term that is also an English verb (`verb_terms`:
    /// `go`), the verb rather than the term? It is when written in another form ("went",
    /// "goes", "going": the term is only ever written as its name) or followed by a stop
    /// word, a negator or a participle that is not one of its subcommands, which name no
    /// language's thing: "fixtures go missing", "always go through the checklist", "packages
    /// go into the venv"; not "go get", "a go bug", "run go test", "written in Go", nor a
    /// capitalized word after another (`after_word`: "use Go for the CLI").
    fn verb_use(&self, items: &[Item], i: usize, after_word: bool) -> bool {
        let Some(Item::Word {
            text,
            technical: false,
            mark,
            id,
        }) = items.get(i)
        else {
            return false;
        };
        if !self.facts[*id as usize].verb_term {
            return false;
        }
        if mark & AS_WRITTEN == 0 {
            return true;
        }
        // A capital after a word: the name ("use Go for the CLI").
        if mark & CAPITALIZED != 0 && after_word {
            return false;
        }
        match items.get(i + 1) {
            Some(Item::Word {
                text: next,
                technical: false,
                mark: m,
                id: n,
            }) => {
                let fw = self.facts[*n as usize].fw;
                (fw.stop || fw.negator || m & PARTICIPLE != 0)
                    && !self.commands.get(&**text).is_some_and(|s| s.contains(&**next))
            }
            _ => false,
        }
    }

    /// Step 3: the canonical word of a synonym group; listed technical terms are technical.
    fn synonym<'a>(&'a self, text: Cow<'a, str>, technical: bool, mark: u16, id: u32) -> Item<'a> {
        debug_assert_eq!(id, self.fact_id(&text), "`{text}` carries another's number");
        let (text, technical, id) = match self.facts[id as usize].canon {
            // A synonym spelled as a plain word is not technical (`node.js` → `node`).
            Some(c) => {
                let c_text = &self.fact_words[c as usize];
                (
                    Cow::Borrowed(c_text.as_str()),
                    technical && !c_text.chars().all(char::is_alphabetic),
                    c,
                )
            }
            None => (text, technical, id),
        };
        Item::Word {
            technical: technical || self.facts[id as usize].term,
            text,
            mark,
            id,
        }
    }
}

/// How `Lexicon::read` takes "never X without Y".
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// As the steps it asks for, Y and then X (`Lexicon::analyze`: clustering).
    Steps,
    /// As the warning it words, a refusal of X (`Lexicon::analyze_warning`: the deltas).
    Warning,
}

/// A content word while a text is analysed (see `Token`).
struct Noted<'a> {
    text: &'a str,
    technical: bool,
    role: Option<Role>,
    step: Option<Role>,
    negated_in: Clauses,
    asserted_in: Clauses,
    taken: bool,
    explains: bool,
    left_out: bool,
}

/// Records a content word's role: a word met in two roles has none. `stated` is the number
/// of the clause it is in when that clause states the rule (`None`: it explains the rule);
/// `left_out`, whether it follows a `without` that leaves it out.
fn note<'a>(
    roles: &mut Vec<Noted<'a>>,
    text: &'a str,
    technical: bool,
    (role, step): (Role, Role),
    stated: Option<u32>,
    left_out: bool,
) {
    let bit: Clauses = stated.map_or(0, |k| 1 << k.min(Clauses::BITS - 1));
    let (negated_in, asserted_in) = match role {
        Role::Negated => (bit, 0),
        Role::Asserted => (0, bit),
        Role::Before | Role::After => (0, 0),
    };
    let taken = stated.is_some() && role != Role::Negated;
    match roles
        .iter_mut()
        .find(|r| r.technical == technical && r.text == text)
    {
        Some(r) => {
            // Where the rule is stated decides: an explaining clause neither sets a role the
            // word already has where the rule is stated, nor keeps one it had only there.
            if stated.is_some() && r.explains {
                (r.role, r.step) = (Some(role), Some(step));
            } else if stated.is_some() || r.explains {
                if r.role != Some(role) {
                    r.role = None
                }
                if r.step != Some(step) {
                    r.step = None
                }
            }
            r.negated_in |= negated_in;
            r.asserted_in |= asserted_in;
            r.taken |= taken;
            r.explains &= stated.is_none();
            r.left_out |= left_out;
        }
        None => roles.push(Noted {
            text,
            technical,
            role: Some(role),
            step: Some(step),
            negated_in,
            asserted_in,
            taken,
            explains: stated.is_none(),
            left_out,
        }),
    }
}

/// `s.to_lowercase()`, borrowed when nothing changes (ASCII without capitals, most words).
fn lowercase(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        Cow::Owned(s.to_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// A version or number written as its plain value: a version's leading `v` is dropped (`v15`
/// is `15`, `v1.2.3` is `1.2.3`: "since v15" and "since Node 15" name one release) and so is
/// a fraction of zeros (`3.00` is `3`: "timed out after 3.00 seconds" and "the default is 3
/// seconds" name one value). `1.10` and `1.1`, `2.0.1` and `v8a` stay as they are.
fn number(t: Cow<'_, str>) -> Cow<'_, str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let version = |s: &str| s.split('.').all(digits);
    let b = t.as_bytes();
    let t = if b.len() > 1 && b[0] == b'v' && b[1].is_ascii_digit() && version(&t[1..]) {
        match t {
            Cow::Borrowed(s) => Cow::Borrowed(&s[1..]),
            Cow::Owned(mut s) => {
                s.remove(0);
                Cow::Owned(s)
            }
        }
    } else {
        t
    };
    keep_prefix(t, |t| match t.split_once('.') {
        Some((whole, zeros)) if digits(whole) && !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => {
            whole
        }
        _ => t,
    })
}

/// Cuts a text to the prefix `cut` returns, copying nothing.
fn keep_prefix<'a>(s: Cow<'a, str>, cut: impl FnOnce(&str) -> &str) -> Cow<'a, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(cut(b)),
        Cow::Owned(mut o) => {
            let n = cut(&o).len();
            o.truncate(n);
            Cow::Owned(o)
        }
    }
}

/// Upper case first, then a lower-case letter followed later by an upper-case one: `DbContext`,
/// `RwLock`, `GitHub`. Not "PRs" or "TTL" (no lower case before a capital), nor "Always".
fn pascal_case(b: &[u8]) -> bool {
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// A one-letter flag keeps the case it is written in: `-a` and `-A` are two options for
/// most tools (`rubocop -a`/`-A`, `docker run -p`/`-P`, `git clean -x`/`-X`, `set -e`/`-E`),
/// so a lesson about one is not a lesson about the other. Only the letter right after a
/// single `-`, alone or before a value (`-p8080`, `-O2`); longer flags (`-XX:MaxRAMPercentage`,
/// `--Force`) are compared lower-cased, as people spell them either way.
fn short_flag_case<'a>(s: &str, t: Cow<'a, str>) -> Cow<'a, str> {
    let b = s.as_bytes();
    let upper = b.len() >= 2
        && b[0] == b'-'
        && b[1].is_ascii_uppercase()
        && !b.get(2).is_some_and(u8::is_ascii_alphabetic);
    match upper {
        true if t.as_bytes().get(1) == Some(&b[1].to_ascii_lowercase()) => {
            let mut o = t.into_owned();
            o.replace_range(1..2, &s[1..2]);
            Cow::Owned(o)
        }
        _ => t,
    }
}

/// Flags, paths (`/` or Windows `\`), `$VARIABLES`, dotted identifiers, snake_case, `k=v`,
/// words with digits, camelCase.
/// Is `s` an acronym's plural: two or more capitals and a lower-case `s` ("PRs", "CRDs",
/// "VMs", "LLMs"), or that after one lower-case letter ("dSYMs", "eBPFs")? Not "OS", "AWS"
/// or "ids" (no lower-case `s` after capitals), nor a camelCase name ("getIDs": more than one
/// lower-case letter before the capitals), whose `s` may be part of the name.
fn acronym_plural(s: &str) -> bool {
    let b = s.as_bytes();
    let b = match b.first() {
        Some(c) if c.is_ascii_lowercase() => &b[1..],
        _ => b,
    };
    b.len() >= 3 && b.last() == Some(&b's') && b[..b.len() - 1].iter().all(u8::is_ascii_uppercase)
}

fn looks_technical(s: &str) -> bool {
    if !s.chars().any(char::is_alphanumeric) {
        return false;
    }
    let mut cs = s.chars();
    let (first, second) = (cs.next(), cs.next());
    if first == Some('-') && second.is_some_and(|c| c.is_alphanumeric() || c == '-') {
        return true;
    }
    if first == Some('.') && second.is_some_and(char::is_alphabetic) {
        return true;
    }
    let bytes = s.as_bytes();
    if bytes
        .iter()
        .any(|b| matches!(b, b'/' | b'\\' | b'_' | b'=' | b'$' | b'0'..=b'9'))
        || bytes.windows(2).any(|w| w == b"::")
    {
        return true;
    }
    // A `.` or `:` between two alphanumerics (`os.path`, `v1.2`, a Maven goal
    // `dependency:tree`, an npm script `build:prod`, an image `node:20`): prose puts a space
    // after a colon.
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    if s.match_indices(['.', ':'])
        .any(|(i, _)| alnum(s[..i].chars().next_back()) && alnum(s[i + 1..].chars().next()))
    {
        return true;
    }
    // camelCase: lower case first, an upper-case letter later.
    first.is_some_and(char::is_lowercase) && s.chars().skip(1).any(char::is_uppercase)
}

/// The items that are a capitalized word mid-sentence which the text also writes in lower
/// case: "catch the specific exception instead of catching Exception" names a class beside
/// the common noun, and "catch Exception instead of the specific exception" is the opposite
/// rule, not the same words. Such a word is taken as written, a technical token (which
/// stands for the word's plain form too: one token per text). Usually none: no allocation.
fn named_beside_noun(items: &[Item]) -> Vec<usize> {
    let mut named = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let Some((text, false, mark)) = it.word() else {
            continue;
        };
        let mid = i > 0 && items[i - 1].word().is_some();
        if mark & TITLED != 0
            && mid
            && (items.iter()).any(|o| matches!(o.word(), Some((t, false, m)) if m & TITLED == 0 && t == text))
        {
            named.push(i);
        }
    }
    named
}

/// An identifier-shaped setting key, as in `imagePullPolicy: Always` or `max_connections: 200`:
/// camelCase, snake_case or dotted (`spring.datasource.url`), letters first. A tool or a plain
/// word before a colon (`kubectl: pass --context`, `Note: …`) introduces a sentence instead.
fn is_setting_key(s: &str) -> bool {
    let b = s.as_bytes();
    let letters_first = b.len() > 2 && b[0].is_ascii_lowercase() && b[1].is_ascii_alphabetic();
    let shaped = b
        .iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
    // Each dotted part starts with a letter: `v1.2` and `3.12` are versions, not keys.
    let parts = s
        .split('.')
        .all(|p| p.bytes().next().is_some_and(|c| c.is_ascii_alphabetic()));
    // `skip(1)`, not `b[1..]`: a chunk that is only a colon (`pytest : run`) is empty here.
    let joined = s.contains(['_', '.']) || b.iter().skip(1).any(u8::is_ascii_uppercase);
    letters_first && shaped && parts && joined && !s.ends_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lx() -> Lexicon {
        Lexicon::from_yaml(include_str!("../../rules/lexicon.yaml")).unwrap()
    }

    fn texts(a: &Analysis) -> Vec<String> {
        a.tokens.iter().map(|t| t.text.to_string()).collect()
    }

    #[test]
    fn stems() {
        let l = lx();
        for (a, b) in [
            ("runs", "run"),
            ("running", "run"),
            ("ran", "run"),
            ("repositories", "repository"),
            ("caching", "cache"),
            ("pinned", "pin"),
            ("strings", "string"),
            ("using", "use"),
            ("indexes", "index"),
            ("utilisation", "utilization"),
            ("serialised", "serialized"),
            ("normalising", "normalizing"),
            ("initialise", "initializes"),
            ("analysed", "analyze"),
            ("behaviour", "behavior"),
            ("colours", "color"),
            ("cancelled", "canceled"),
            ("cancelling", "cancel"),
            ("cancellation", "cancels"),
            ("labelled", "labeling"),
            ("modelling", "modeled"),
            ("licence", "license"),
            ("licences", "licensed"),
            ("licencing", "licensing"),
            ("defence", "defenses"),
            ("offence", "offense"),
            ("catalogue", "catalogs"),
            ("dialogues", "dialog"),
            ("analogue", "analog"),
            ("centres", "center"),
        ] {
            assert_eq!(l.stem(a), l.stem(b), "{a} vs {b}");
        }
        // Short words are not respelt: "four" is not "for", "hour" not "hor", "rise" not "rize".
        for (a, b) in [
            ("four", "for"),
            ("hour", "hor"),
            ("rise", "rize"),
            ("your", "yor"),
        ] {
            assert_ne!(l.stem(a), l.stem(b), "{a} vs {b}");
        }
    }

    #[test]
    fn technical_tokens_stay_whole() {
        let l = lx();
        let a = l.analyze(
            "Use `os.makedirs(path, exist_ok=True)` with --locked in src/app.py, call foo() on v1.2.3, \
             clear C:\\Users\\ci\\AppData\\Local\\Temp and set $HOME",
        );
        let t = texts(&a);
        for want in [
            "os.makedirs",
            "exist_ok=true",
            "--locked",
            "src/app.py",
            "foo",
            "1.2.3",
            "c:\\users\\ci\\appdata\\local\\temp",
            "$home",
        ] {
            assert!(t.contains(&want.to_string()), "{want} missing from {t:?}");
        }
        for flagged in ["--locked", "c:\\users\\ci\\appdata\\local\\temp", "$home"] {
            assert!(
                a.tokens.iter().find(|x| &*x.text == flagged).unwrap().technical,
                "{flagged}"
            );
        }
    }

    /// The technical tokens of `text`, sorted.
    /// `go` the verb is a plain word; `go` the language, the technical term.
    #[test]
    fn go_the_verb_is_no_language() {
        let l = lx();
        let go = |text: &str| technical_tokens(&l, text).iter().any(|t| t == "go");
        for verb in [
            "Fixtures go missing unless pytest runs from the repo root.",
            "Always go through the release checklist before tagging.",
            "Use python -m pip so packages go into the active interpreter.",
            "Flaky tests went unnoticed until the nightly run failed.",
            "p95 latency went from 120ms to 900ms after the upgrade.",
            "The job goes green once the cache is warm.",
            "Nothing is going to the registry without a tag.",
        ] {
            assert!(!go(verb), "{verb}: {:?}", technical_tokens(&l, verb));
        }
        for language in [
            "Run go vet on all Go files before pushing.",
            "That was a go bug fixed in 1.22.",
            "Write the CLI in Go.",
            "Write the CLI in go.",
            "Use Go for the new CLI tools.",
            "Fetch tools with go get, never by hand.",
            "Build with `go` 1.22 or newer.",
        ] {
            assert!(go(language), "{language}: {:?}", technical_tokens(&l, language));
        }
    }

    /// "Never X without Y" read for its steps (`analyze`): Y is the rule's own step, X the
    /// later one, nothing negated; read as a warning (`analyze_warning`), it refuses X.
    #[test]
    fn never_x_without_y_reads_as_steps_or_as_a_warning() {
        let l = lx();
        let text = "Never run terraform apply without reviewing terraform plan first.";
        let tok = |a: &Analysis, w: &str| a.tokens.iter().find(|t| &*t.text == w).unwrap().clone();
        let steps = l.analyze(text);
        let (apply, plan) = (tok(&steps, "terraform apply"), tok(&steps, "terraform plan"));
        assert_eq!(
            (apply.role, apply.step, apply.negated_in),
            (Some(Role::Before), Some(Role::Before), 0)
        );
        assert_eq!((plan.role, plan.asserted_in), (Some(Role::Asserted), 1));
        assert!(steps.tokens.iter().all(|t| t.negated_in == 0 && !t.left_out));
        let warning = l.analyze_warning(text);
        let apply = tok(&warning, "terraform apply");
        assert_eq!((apply.role, apply.negated_in), (Some(Role::Negated), 1));
        assert!(tok(&warning, "terraform plan").explains);
        // A `without` in a clause no negator negated still leaves its words out, read either way.
        for a in [
            l.analyze("Run cargo test without --release."),
            l.analyze_warning("Run cargo test without --release."),
        ] {
            assert!(tok(&a, "--release").left_out);
        }
    }

    fn technical_tokens(l: &Lexicon, text: &str) -> Vec<String> {
        let a = l.analyze(text);
        (a.tokens.iter())
            .filter(|t| t.technical)
            .map(|t| t.text.to_string())
            .collect()
    }

    /// A colon inside a word names a thing (a Maven goal, an npm script, an image tag); a
    /// colon closing a word is prose.
    #[test]
    fn a_colon_between_letters_is_technical() {
        let l = lx();
        let technical = |text: &str| technical_tokens(&l, text);
        assert_eq!(
            technical("the dependency:tree goal, the build:prod script, the node:alpine image"),
            ["build:prod", "dependency:tree", "node:alpine"]
        );
        assert_eq!(technical("Note: run the tests first"), Vec::<String>::new());
    }

    #[test]
    fn versions_and_numbers_are_their_plain_value() {
        let l = lx();
        let technical = |text: &str| technical_tokens(&l, text);
        assert_eq!(technical("since v15, on v1.2.3"), ["1.2.3", "15"]);
        assert_eq!(technical("after 3.00 seconds, 0.0 left"), ["0", "3"]);
        // Not a plain value: a fraction that is not all zeros, three parts, a name.
        assert_eq!(
            technical("1.10 and 2.0.1 and v8a and 1.05"),
            ["1.05", "1.10", "2.0.1", "v8a"]
        );
    }

    #[test]
    fn a_settings_value_is_technical_and_a_sentence_after_a_colon_is_not() {
        let l = lx();
        let technical = |text: &str| technical_tokens(&l, text);
        // Tokens are sorted, and a value is stemmed like any word.
        assert_eq!(
            technical("Set imagePullPolicy: Always on the staging Deployment."),
            ["alway", "imagepullpolicy"]
        );
        assert_eq!(
            technical("pool.max_size: 20 for the workers"),
            ["20", "pool.max_size"]
        );
        // A tool or a plain word before a colon introduces a sentence.
        assert_eq!(
            technical("kubectl: always pass --context"),
            ["--context", "kubectl"]
        );
        assert_eq!(
            technical("Note: always pin the chart version"),
            Vec::<String>::new()
        );
        assert!(
            !is_setting_key("ImagePullPolicy")
                && !is_setting_key("v1.2")
                && !is_setting_key("3.12")
                && is_setting_key("max_connections")
        );
    }

    #[test]
    fn a_memo_of_chunks_changes_no_analysis() {
        let l = lx();
        let texts = [
            "Run `npm ci` instead of npm install in CI; it respects package-lock.json.",
            "Don't run npm install in CI: use npm ci, which respects package-lock.json.",
            "Call os.makedirs(path, exist_ok=True) before writing to ./build/out.txt.",
            "Never commit the repo's .env file — add it to .gitignore first.",
            "Turn on `--locked` for cargo build when Cargo.lock is committed.",
            "Turn on --locked for cargo build when Cargo.lock is committed.",
            "Set memory limits on every container, not requests.",
            "The deploy failed because the runner’s cache was stale.",
            "Restarting Redis (v7.2) fixed the ECONNRESET errors after 30s.",
        ];
        let mut memo = ChunkMemo::default();
        // Forwards, again (every chunk in the memo), then backwards: each text reuses the
        // scratch vectors a longer or shorter one left.
        let backwards: Vec<&str> = texts.iter().rev().copied().collect();
        for (round, order) in [&texts[..], &texts[..], &backwards[..]].into_iter().enumerate() {
            for t in order {
                assert_eq!(
                    l.analyze_with(t, Some(&mut memo)),
                    l.analyze(t),
                    "round {round}: {t}"
                );
                let s = &memo.scratch;
                assert!(s.items.is_empty() && s.seq.is_empty() && s.full.is_empty(), "{t}");
                assert!(
                    s.heads.is_empty() && s.by_text.is_empty() && s.token_of.is_empty(),
                    "{t}"
                );
            }
        }
        assert!(memo.chunks.contains_key("npm") && memo.chunks.contains_key("package-lock.json."));
        // Their room is kept for the next text: a batch allocates them once.
        let s = &memo.scratch;
        assert!(s.items.capacity() > 0 && s.full.capacity() > 0 && s.by_text.capacity() > 0);
    }

    #[test]
    fn negations_record_the_clause_that_states_them() {
        let l = lx();
        let tok = |a: &Analysis, w: &str| a.tokens.iter().find(|t| &*t.text == w).unwrap().clone();
        let a = l.analyze("Never run the container as root when it binds port 80.");
        assert_eq!(
            (tok(&a, "root").role, tok(&a, "root").negated_in),
            (Some(Role::Negated), 1)
        );
        assert_eq!(
            (tok(&a, "port").role, tok(&a, "port").negated_in),
            (Some(Role::Asserted), 0)
        );
        let b = l.analyze("Run the container as root; don't mount the Docker socket.");
        assert_eq!(tok(&b, "socket").negated_in, 1 << 1);
        assert_eq!((tok(&b, "root").negated_in, tok(&b, "root").asserted_in), (0, 1));
        // A word in two clauses: asserted in one, negated in the other. (Not "don't run npm
        // install; run npm ci": `run` right before a command is no content word.)
        let x = l.analyze("Don't run the tests serially; run them in parallel.");
        assert_eq!(
            (
                tok(&x, "run").role,
                tok(&x, "run").negated_in,
                tok(&x, "run").asserted_in
            ),
            (None, 1, 2)
        );
        // Clauses that explain the rule, `without`, and conditional negations record none.
        let c = l.analyze("Set a memory limit so the node does not run out of memory.");
        let run = tok(&c, "run");
        assert_eq!(
            (run.role, run.negated_in, run.asserted_in),
            (Some(Role::Negated), 0, 0)
        );
        assert_eq!(
            (tok(&c, &l.stem("node")).asserted_in, tok(&c, "limit").asserted_in),
            (0, 1)
        );
        let d = l.analyze("Use git pull --rebase to avoid merge commits");
        assert_eq!(
            (tok(&d, "commit").negated_in, tok(&d, "commit").asserted_in),
            (0, 0)
        );
        let e = l.analyze("Don't deploy on Fridays unless the change is a hotfix.");
        assert_eq!(
            (tok(&e, "deploy").role, tok(&e, "deploy").negated_in),
            (Some(Role::Negated), 0)
        );
        assert_eq!(tok(&e, "hotfix").asserted_in, 0);
        let f = l.analyze("Pods without them get evicted first under memory pressure.");
        assert_eq!(
            (tok(&f, "evict").role, tok(&f, "evict").negated_in),
            (Some(Role::Negated), 0)
        );
    }

    #[test]
    fn synonyms_and_roles() {
        let l = lx();
        let a = l.analyze("Never commit the repo's deps");
        let b = l.analyze("don't commit repository dependencies");
        assert_eq!(a.tokens, b.tokens);
        assert!(a.tokens.iter().all(|t| t.role == Some(Role::Negated)));
        let c = l.analyze("Use npm ci instead of npm install");
        let ci = c.tokens.iter().find(|t| &*t.text == "npm ci").unwrap();
        let inst = c.tokens.iter().find(|t| &*t.text == "npm install").unwrap();
        assert_eq!(ci.role, Some(Role::Asserted));
        assert_eq!(inst.role, Some(Role::Negated));
    }

    /// Each word's gathered facts are its tables' answers, read again here table by table;
    /// a word in no table is number 0, whose facts are every table's "no".
    #[test]
    fn facts_answer_as_the_tables_do() {
        let l = lx();
        assert!(
            l.fact_words.len() > 100,
            "the shipped lexicon's words are numbered"
        );
        for (k, w) in l.fact_words.iter().enumerate().skip(1) {
            let f = &l.facts[l.fact_id(w) as usize];
            assert_eq!(l.fact_id(w) as usize, k, "{w}");
            let fw = l.function_words.get(w).copied().unwrap_or_default();
            assert_eq!(
                (f.fw.stop, f.fw.article, f.fw.negator, f.fw.clause_break),
                (fw.stop, fw.article, fw.negator, fw.clause_break),
                "{w}"
            );
            assert_eq!(f.phrase_start, l.phrase_starts.contains(w), "{w}");
            let canon = f.canon.map(|c| l.fact_words[c as usize].as_str());
            assert_eq!(canon.unwrap_or(w), l.canon_ref(w), "{w}");
            assert_eq!(f.term, l.terms.contains(w), "{w}");
            assert_eq!(f.negating, l.negating_verbs.contains(w), "{w}");
            assert_eq!(f.refusing, l.refusing_predicates.contains(w), "{w}");
            assert_eq!(f.be, l.be_verbs.contains(w), "{w}");
            assert_eq!(f.program, l.commands.contains_key(w), "{w}");
            assert_eq!(
                Some(&f.antonyms).filter(|a| !a.is_empty()),
                l.antonym_of.get(w),
                "{w}"
            );
        }
        for (_, repl, id) in &l.phrases {
            assert_eq!(l.fact_words[*id as usize], *repl);
        }
        // Every marker word is numbered and carries its bit; no other word carries one.
        let markers = l.mk.words();
        assert!(markers.len() > 30, "the lists' words are there too");
        for &(w, bit) in &markers {
            assert!(l.facts[l.fact_id(w) as usize].marks & bit != 0, "{w}");
        }
        for (k, w) in l.fact_words.iter().enumerate() {
            let bits = (markers.iter().filter(|&&(m, _)| m == w)).fold(0, |b, &(_, bit)| b | bit);
            assert_eq!(l.facts[k].marks, bits, "{w:?}");
        }
        let (word, and) = (l.fact_id(&l.stem("use")), l.fact_id(&l.stem("and")));
        assert_eq!(l.facts[word as usize].marks, mark::PREFER, "`use` prefers");
        assert_eq!(l.facts[and as usize].marks, mark::AND);
        // Words of real lessons the lexicon says nothing of, and some it does.
        for w in [
            "pytest",
            "fixture",
            "terraform",
            "kubectl",
            "never",
            "cargo",
            "instead",
        ] {
            let k = l.fact_id(w);
            assert_eq!(k == 0, !l.fact_words.iter().any(|x| x == w), "{w}");
        }
        assert_eq!(l.fact_id("parametrize"), 0);
        let none = &l.facts[0];
        assert!(!none.phrase_start && none.canon.is_none() && !none.term && !none.program);
        assert!(none.antonyms.is_empty() && !none.fw.stop && !none.fw.negator);
        assert_eq!(none.marks, 0);
    }
}
