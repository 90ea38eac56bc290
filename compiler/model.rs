//! Plain data shared by the pipeline stages.
//!
//! Stages take these values and return these values; nothing here does I/O or holds policy.
//! Times are milliseconds since the Unix epoch, UTC (`Millis`), so ordering never depends on
//! the offset a record was written with.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

/// Milliseconds since 1970-01-01T00:00:00Z.
pub type Millis = i64;

/// A record's id. Its candidates, the lessons they support and those lessons' history entries
/// all cite it: a million experiences are cited about five million times, and each citation
/// shares the one copy.
pub type Id = std::sync::Arc<str>;

/// Where a record came from: the input file (as given on the command line or found in a
/// directory walk) and its 1-based line.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SourceLoc {
    /// Shared by every record of a file: a million records held a million copies of its path.
    pub file: std::sync::Arc<str>,
    pub line: u32,
}

/// The self-reported result of an experience.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    #[default]
    Succeeded,
    Pivoted,
    Abandoned,
    Failed,
}

impl Outcome {
    pub fn parse(s: &str) -> Option<Outcome> {
        match s {
            "succeeded" => Some(Outcome::Succeeded),
            "pivoted" => Some(Outcome::Pivoted),
            "abandoned" => Some(Outcome::Abandoned),
            "failed" => Some(Outcome::Failed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Pivoted => "pivoted",
            Outcome::Abandoned => "abandoned",
            Outcome::Failed => "failed",
        }
    }
}

/// What a lesson tells the agent to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Do,
    Avoid,
    Watch,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "do" => Some(Kind::Do),
            "avoid" => Some(Kind::Avoid),
            "watch" => Some(Kind::Watch),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Do => "do",
            Kind::Avoid => "avoid",
            Kind::Watch => "watch",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpStatus {
    Ok,
    Error,
    /// The call was refused (by a permission layer or the user) and never ran.
    Refused,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub label: String,
    pub target: Option<String>,
    pub passed: bool,
}

/// A tool call's arguments (`cwd` included) as JSON text. At a million records a
/// `Value` tree per call would be most of the corpus's memory; the few readers parse on
/// demand with `value()`. The text is as the input spelled it (or canonical, where normalize
/// redacted a secret or the loader built it), so equality compares values, not text.
#[derive(Clone, Debug, Default)]
pub struct Args(Box<str>);

impl Args {
    /// `Value::Null` is held as no text.
    pub fn from_value(v: &Value) -> Args {
        if v.is_null() {
            Args::default()
        } else {
            Args(v.to_string().into())
        }
    }

    /// JSON text a parser has already validated (the loader's raw slice).
    pub fn from_json(text: &str) -> Args {
        Args(text.into())
    }

    /// The JSON text (empty for none).
    pub fn text(&self) -> &str {
        &self.0
    }

    pub fn value(&self) -> Value {
        if self.0.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&self.0).unwrap_or(Value::Null)
        }
    }
}

impl From<Value> for Args {
    fn from(v: Value) -> Args {
        Args::from_value(&v)
    }
}

/// Equal JSON values are equal args, however their text was spelled.
impl PartialEq for Args {
    fn eq(&self, other: &Args) -> bool {
        self.0 == other.0 || self.value() == other.value()
    }
}

impl Serialize for Args {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

/// One tool call, in call order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Operation {
    /// Shared: a handful of tool names recur across millions of calls.
    pub tool: std::sync::Arc<str>,
    /// Everything the tool was called with (`cwd` included); empty when absent.
    pub args: Args,
    pub status: OpStatus,
    pub error: Option<String>,
    /// Boxed: most calls carry none, and two million calls would each hold its room.
    pub check: Option<Box<Check>>,
    /// When normalize redacted a secret from the arguments, a fingerprint of them as written
    /// (never 0; 0 when nothing was redacted): two calls whose redacted arguments read the same
    /// differed in their secrets alone when their fingerprints differ. Held in memory only
    /// (it sits in the call's padding) and written nowhere.
    #[serde(skip)]
    pub secret_print: u32,
}

impl Operation {
    /// What the call is about (DESIGN §3.3), from its parsed arguments.
    pub fn key(&self) -> String {
        crate::opkey::operation_key(&self.tool, &self.args.value())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadEnd {
    pub name: String,
    /// The record's `type` field.
    pub kind: Option<String>,
    pub reason: Option<String>,
}

/// One experience record (DESIGN §3.1).
///
/// After `load`, `domains` and `project` hold what the record said; after `normalize`,
/// `domains` holds only valid, aliased domains (the refused ones move to `refused_domains`)
/// and `project` holds the 12-hex digest of the identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Experience {
    pub id: Id,
    pub recorded_at: Millis,
    pub domains: Vec<String>,
    pub refused_domains: Vec<String>,
    pub project: Option<String>,
    pub outcome: Option<Outcome>,
    pub effort: Option<u8>,
    /// Task, lesson, breakthrough, gotchas, dead ends.
    #[serde(flatten)]
    pub words: Words,
    pub operations: Vec<Operation>,
    pub in_play: Vec<String>,
    pub blessed: bool,
    pub source: SourceLoc,
}

/// What an experience says in words: every text a candidate can come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Narrative {
    pub task: Option<String>,
    pub lesson: Option<String>,
    pub breakthrough: Option<String>,
    pub gotchas: Vec<String>,
    pub dead_ends: Vec<DeadEnd>,
    /// OmniMem's `content`: stands in as the lesson of a blessed memory that has nothing else.
    pub content: Option<String>,
}

/// An experience's `Narrative` behind a pointer that is empty once its texts have become
/// candidates (`Experience::drop_narrative`): held inline, the empty fields alone were 144 MB
/// of the score stage's peak at a million records. A freed one reads as an empty narrative;
/// writing to it makes a new one.
#[derive(Clone, Debug, Default)]
pub struct Words(Option<Box<Narrative>>);

static NO_WORDS: Narrative = Narrative {
    task: None,
    lesson: None,
    breakthrough: None,
    gotchas: Vec::new(),
    dead_ends: Vec::new(),
    content: None,
};

impl std::ops::Deref for Words {
    type Target = Narrative;
    fn deref(&self) -> &Narrative {
        self.0.as_deref().unwrap_or(&NO_WORDS)
    }
}

impl std::ops::DerefMut for Words {
    fn deref_mut(&mut self) -> &mut Narrative {
        self.0.get_or_insert_default()
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        **self == **other
    }
}

impl Serialize for Words {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl From<Narrative> for Words {
    fn from(n: Narrative) -> Words {
        Words(Some(Box::new(n)))
    }
}

impl Experience {
    /// Frees the narrative texts once they have become candidates: no later stage reads them,
    /// and at a million records they are a good part of the corpus's memory.
    pub fn drop_narrative(&mut self) {
        self.words = Words::default();
    }

    /// Frees the operations unless the experience has lessons in play: once the candidates
    /// are made, only attribution reads operations, and only of those experiences.
    pub fn drop_unattributed_operations(&mut self) {
        if self.in_play.is_empty() {
            self.operations = Vec::new();
        }
    }

    /// The self-reported outcome; `load` refuses records without one, so this never fails
    /// on loaded data.
    pub fn outcome(&self) -> Outcome {
        self.outcome.unwrap_or(Outcome::Failed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimSource {
    Extractor,
    Model,
    User,
}

impl ClaimSource {
    pub fn parse(s: &str) -> Option<ClaimSource> {
        match s {
            "extractor" => Some(ClaimSource::Extractor),
            "model" => Some(ClaimSource::Model),
            "user" => Some(ClaimSource::User),
            _ => None,
        }
    }
}

/// A lesson claimed outside an experience (`{"type": "lesson", ...}`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LessonClaim {
    pub id: Id,
    pub recorded_at: Millis,
    pub domains: Vec<String>,
    pub refused_domains: Vec<String>,
    pub project: Option<String>,
    pub text: String,
    pub kind: Kind,
    pub source: ClaimSource,
    pub evidence: Vec<Id>,
    pub operation_key: Option<String>,
    pub loc: SourceLoc,
    /// A claim that held until a later record ended it (GAIA: a recurring error a later
    /// session fixed, a tool lesson a later session showed). The lesson it founds is
    /// superseded then, not dropped (DESIGN §1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ended>,
}

/// When, and by which experience, a claim stopped being true.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ended {
    pub at: Millis,
    /// The experience that ended it (the session that fixed the error or showed the fix).
    pub by: Id,
}

/// Everything the loaders produced, in (path, line) order.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub experiences: Vec<Experience>,
    pub claims: Vec<LessonClaim>,
}

impl Corpus {
    /// The latest `recorded_at` in the input: the compile's "now" (DESIGN §1).
    pub fn now(&self) -> Millis {
        let e = self.experiences.iter().map(|e| e.recorded_at);
        let c = self.claims.iter().map(|c| c.recorded_at);
        e.chain(c).max().unwrap_or(0)
    }
}

/// Where a candidate's text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    Lesson,
    Breakthrough,
    Content,
    Gotcha,
    DeadEnd,
    Mechanical,
    Claim,
}

/// Which record a candidate was drawn from: an index into `Corpus::experiences` or
/// `Corpus::claims`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Experience(u32),
    Claim(u32),
}

/// Why a candidate is refused before clustering (never stored, never clustered).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Refusal {
    /// The text, key or id looks like a secret; `pattern` names the rule, never the secret.
    Credential { pattern: String },
    /// The domain is not a valid skill name; the raw domain, escaped for display.
    InvalidDomain { raw: String },
    /// A claim cites ids that exist nowhere in the input.
    FabricatedEvidence { ids: Vec<String> },
    /// A claim cites experiences that do not support it.
    UnsupportedEvidence { ids: Vec<String> },
}

/// One (experience, domain, text) candidate lesson (DESIGN §5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub source: Source,
    /// The experience id (or claim id) it cites.
    pub record_id: Id,
    /// The domain's place in the compile's `Names` (a number, not a sixteen-byte pointer).
    pub domain: Name,
    pub kind: Kind,
    pub origin: Origin,
    /// Normalised text (DESIGN §4); for a refused credential candidate a redacted stand-in.
    pub text: std::sync::Arc<str>,
    /// The key, working form and reasons, which only some candidates have (`None`: none of
    /// them). One box for the three keeps every other candidate smaller; shared by a draft's
    /// candidates in every domain.
    pub extra: Option<std::sync::Arc<Extra>>,
    pub recorded_at: Millis,
    /// The project digest's place in the compile's `Names`.
    pub project: Option<Name>,
    /// Set before clustering; a refused candidate never reaches a cluster.
    pub refusal: Option<Box<Refusal>>,
    /// Blessed, outcome failed, narrative, in one byte (read as `Candidate::blessed` and so on).
    pub flags: Flags,
    /// The narrative classifier's score (lower reads more like a rule; 0 when not classified):
    /// picks a lesson's wording among its founders without classifying twice.
    pub narrative_score: i32,
    /// The narrative signals that fired (`narrative::Fired`: bits in `rules/narrative.yaml`
    /// order, named by `Narrative::names`): G002's evidence, `why` and `trace` name them.
    pub narrative_signals: crate::narrative::Fired,
}

/// A domain's or project's place in a compile's [`Names`]. Candidates hold these rather than
/// shared strings: at a million records there are about 1.7 million candidates, and every
/// byte of a `Candidate` is 1.7 MB written, faulted in and read again by every later stage.
/// Places follow the names' byte order, so two places compare as their names do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(std::num::NonZeroU32);

impl Name {
    /// The name at `index` of its table (one past it inside, so that `Option<Name>` is four
    /// bytes).
    pub fn at(index: usize) -> Name {
        Name(std::num::NonZeroU32::MIN.saturating_add(index as u32))
    }

    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// Every domain (valid or refused) and project digest that a compile's records name, one copy
/// each, in byte order: what a candidate's [`Name`]s stand for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Names(Vec<Box<str>>);

impl Names {
    /// The table of `names` (sorted and made distinct here).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Names {
        let mut names: Vec<&str> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        Names(names.into_iter().map(Box::from).collect())
    }

    /// The name `n` stands for.
    pub fn get(&self, n: Name) -> &str {
        &self.0[n.index()]
    }

    /// The place of `name`, if the table holds it.
    pub fn find(&self, name: &str) -> Option<Name> {
        let at = self.0.binary_search_by(|n| (**n).cmp(name)).ok()?;
        Some(Name::at(at))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every name with its place, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Name, &str)> {
        self.0.iter().enumerate().map(|(i, n)| (Name::at(i), &**n))
    }
}

/// What only some candidates carry (`Candidate::extra`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extra {
    /// Operation key, only for mechanical candidates, keyed claims and keyed error evidence.
    pub key: Option<Box<str>>,
    /// Mechanical candidates: the working args, canonically serialised; they cluster exactly
    /// on (key, working).
    pub working: Option<Box<str>>,
    /// Dead ends: the reasons, newest first.
    pub reasons: Box<[String]>,
}

impl Extra {
    /// `None` when there is nothing to carry, so that most candidates hold no box.
    pub fn new(
        key: Option<&str>,
        working: Option<&str>,
        reasons: &[String],
    ) -> Option<std::sync::Arc<Extra>> {
        if key.is_none() && working.is_none() && reasons.is_empty() {
            return None;
        }
        Some(std::sync::Arc::new(Extra {
            key: key.map(Box::from),
            working: working.map(Box::from),
            reasons: reasons.into(),
        }))
    }
}

/// A candidate's three yes-or-no facts, one bit each: three `bool`s were the byte that took
/// `Candidate` past 88 bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    const BLESSED: u8 = 1;
    const OUTCOME_FAILED: u8 = 2;
    const NARRATIVE: u8 = 4;

    pub fn new(blessed: bool, outcome_failed: bool, narrative: bool) -> Flags {
        let bit = |on: bool, bit: u8| if on { bit } else { 0 };
        Flags(
            bit(blessed, Flags::BLESSED)
                | bit(outcome_failed, Flags::OUTCOME_FAILED)
                | bit(narrative, Flags::NARRATIVE),
        )
    }

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flags")
            .field("blessed", &self.has(Flags::BLESSED))
            .field("outcome_failed", &self.has(Flags::OUTCOME_FAILED))
            .field("narrative", &self.has(Flags::NARRATIVE))
            .finish()
    }
}

impl Candidate {
    /// Its experience is blessed.
    pub fn blessed(&self) -> bool {
        self.flags.has(Flags::BLESSED)
    }

    /// Outcome gate failed (the experience did not pass and is not blessed).
    pub fn outcome_failed(&self) -> bool {
        self.flags.has(Flags::OUTCOME_FAILED)
    }

    /// Reads as the story of one incident (do-candidates only).
    pub fn narrative(&self) -> bool {
        self.flags.has(Flags::NARRATIVE)
    }

    /// Sets `narrative` (cleared for a candidate refused as a credential: its text is gone).
    pub fn set_narrative(&mut self, narrative: bool) {
        self.flags = Flags::new(self.blessed(), self.outcome_failed(), narrative);
    }

    /// The operation key (`Extra::key`).
    pub fn key(&self) -> Option<&str> {
        self.extra.as_ref()?.key.as_deref()
    }

    /// The working form (`Extra::working`).
    pub fn working(&self) -> Option<&str> {
        self.extra.as_ref()?.working.as_deref()
    }

    /// The reasons, newest first (`Extra::reasons`); empty for all but dead ends.
    pub fn reasons(&self) -> &[String] {
        self.extra.as_deref().map_or(&[], |e| &e.reasons)
    }

    /// Passed the per-candidate gates that travel into clusters.
    pub fn admissible(&self) -> bool {
        self.refusal.is_none() && !self.outcome_failed() && !self.narrative()
    }
}

/// Candidates that say the same lesson, in one (domain, kind, key) block.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// `C` + 12 hex of a content hash of (domain, kind, key, anchor text): stable across runs.
    pub id: String,
    pub domain: String,
    pub kind: Kind,
    pub key: Option<String>,
    /// The candidate every member was compared with (the earliest, ties by record id, text).
    pub anchor: u32,
    /// Indices into the candidate list, sorted by (recorded_at, record id, index).
    pub members: Vec<u32>,
}

/// A candidate's end state (DESIGN §1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    Rule,
    Lesson,
    HeldBack,
    Refused,
}

impl Fate {
    /// Where the fate is counted in `[rule, lesson, held back, refused]`, the order every
    /// report lists fates in.
    pub fn slot(self) -> usize {
        match self {
            Fate::Rule => 0,
            Fate::Lesson => 1,
            Fate::HeldBack => 2,
            Fate::Refused => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Rule => "rule",
            Fate::Lesson => "lesson",
            Fate::HeldBack => "held-back",
            Fate::Refused => "refused",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Claimed,
    Superseded,
    Retired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Claimed => "claimed",
            Status::Superseded => "superseded",
            Status::Retired => "retired",
        }
    }
}

/// A user decision from the journal (DESIGN §6), applied in the fold at its time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Journal order: decisions at the same time apply in this order.
    pub seq: i64,
    /// The latest `recorded_at` of the compile before the decision was taken.
    pub at: Millis,
    pub action: Action,
    /// A lesson id, or an experience id for `bless`.
    pub target: String,
    /// `edit`: the new wording; `retire`: the reason.
    pub text: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Retire,
    Restore,
    Edit,
    Pin,
    Unpin,
    Bless,
}

impl Action {
    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "retire" => Some(Action::Retire),
            "restore" => Some(Action::Restore),
            "edit" => Some(Action::Edit),
            "pin" => Some(Action::Pin),
            "unpin" => Some(Action::Unpin),
            "bless" => Some(Action::Bless),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Retire => "retire",
            Action::Restore => "restore",
            Action::Edit => "edit",
            Action::Pin => "pin",
            Action::Unpin => "unpin",
            Action::Bless => "bless",
        }
    }
}

/// The experience ids a history entry cites, read as a slice. Almost every entry cites one
/// or none (1.5 M entries cite one at a million records): one id is held in place, without an
/// allocation of its own. Several (a dozen entries at a million records) are boxed twice, so
/// that `Ids` takes two words, not three: the box's pointer sits beside the id's null niche.
#[derive(Clone)]
pub enum Ids {
    One(Id),
    /// No id (`None`: no allocation), or more than one.
    Many(Option<Box<Vec<Id>>>),
}

impl Ids {
    /// No ids.
    pub const NONE: Ids = Ids::Many(None);
}

impl std::ops::Deref for Ids {
    type Target = [Id];

    fn deref(&self) -> &[Id] {
        match self {
            Ids::One(id) => std::slice::from_ref(id),
            Ids::Many(Some(ids)) => ids,
            Ids::Many(None) => &[],
        }
    }
}

impl From<Vec<Id>> for Ids {
    fn from(mut ids: Vec<Id>) -> Ids {
        match ids.len() {
            0 => Ids::NONE,
            1 => Ids::One(ids.remove(0)),
            _ => Ids::Many(Some(Box::new(ids))),
        }
    }
}

impl FromIterator<Id> for Ids {
    fn from_iter<I: IntoIterator<Item = Id>>(ids: I) -> Ids {
        let mut ids = ids.into_iter();
        match (ids.next(), ids.next()) {
            (None, _) => Ids::NONE,
            (Some(id), None) => Ids::One(id),
            (Some(a), Some(b)) => Ids::Many(Some(Box::new([a, b].into_iter().chain(ids).collect()))),
        }
    }
}

/// Equal when they hold the same ids, however held.
impl PartialEq for Ids {
    fn eq(&self, other: &Ids) -> bool {
        **self == **other
    }
}

impl Eq for Ids {}

impl std::fmt::Debug for Ids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Ids {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// What happened to a lesson in one step of its life: one byte where its name took two words
/// (2.3 M history entries are held at a million records). Written as its name (`as_str`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Admitted,
    Claimed,
    Joined,
    Blessed,
    Confirmed,
    Contradicted,
    Promoted,
    Demoted,
    Superseded,
    Retired,
    Restored,
    Edited,
    Pinned,
    Unpinned,
    Decayed,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Admitted => "admitted",
            Event::Claimed => "claimed",
            Event::Joined => "joined",
            Event::Blessed => "blessed",
            Event::Confirmed => "confirmed",
            Event::Contradicted => "contradicted",
            Event::Promoted => "promoted",
            Event::Demoted => "demoted",
            Event::Superseded => "superseded",
            Event::Retired => "retired",
            Event::Restored => "restored",
            Event::Edited => "edited",
            Event::Pinned => "pinned",
            Event::Unpinned => "unpinned",
            Event::Decayed => "decayed",
        }
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One step in a lesson's life, for `lessons history` and EVIDENCE.md. Eight words: a lesson
/// keeps four on average, for every one of the 447 000 lessons at a million records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    pub at: Millis,
    pub event: Event,
    /// Confidence after the event, in thousandths.
    pub confidence: i32,
    pub experiences: Ids,
    /// Most details are one of a few fixed texts, shared rather than copied per event.
    pub detail: Option<Cow<'static, str>>,
    /// Active days without use charged after this event, before the next one (or, on the
    /// last event, up to the latest input time), so that a confidence that moved between
    /// two events says why (DESIGN §6 decay). Zero when none were.
    pub idle_days: u16,
    /// The confidence those days left, in thousandths (meaningful when `idle_days` > 0).
    pub idle_confidence: i16,
}

/// A lesson in the ledger (DESIGN §6, §7).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lesson {
    pub id: String,
    pub kind: Kind,
    pub text: String,
    pub domain: String,
    /// `global` or `project:<digest>`.
    pub scope: String,
    pub operation_key: Option<String>,
    pub status: Status,
    /// Usually one of a few fixed texts (decay, contradictions), shared rather than copied.
    pub reason: Option<Cow<'static, str>>,
    /// Integer thousandths.
    pub confidence: i32,
    pub reinforcement: u32,
    pub rule: bool,
    pub pinned: bool,
    pub blessed: bool,
    /// Supporting experience ids, sorted.
    pub evidence: Vec<Id>,
    /// Project digests of the supporting experiences, sorted.
    pub projects: Vec<String>,
    pub superseded_by: Option<String>,
    /// The lesson this one replaced (edit, or a new lesson formed after a supersession).
    pub supersedes: Option<String>,
    pub founder: Id,
    pub cluster: String,
    pub admitted_at: Millis,
    /// UTC day the lesson was last used (in play, drew a candidate, admitted).
    pub last_used_day: i64,
    /// Mechanical lessons: the working args (canonical JSON).
    pub working: Option<String>,
    /// Avoid lessons: the dead-end reasons, newest first.
    pub reasons: Vec<String>,
    pub history: Vec<HistoryEntry>,
}

impl Lesson {
    /// The lesson with `id` in `ledger`, which is sorted by id (the score stage's order).
    pub fn find<'l>(ledger: &'l [Lesson], id: &str) -> Option<&'l Lesson> {
        let at = ledger.binary_search_by(|l| l.id.as_str().cmp(id)).ok()?;
        Some(&ledger[at])
    }

    pub fn is_active(&self) -> bool {
        self.status == Status::Active
    }

    /// The lesson's latest `event`, if it has one.
    pub fn last(&self, event: Event) -> Option<&HistoryEntry> {
        self.history.iter().rev().find(|h| h.event == event)
    }

    /// The day (`YYYY-MM-DD`, UTC) of the lesson's latest `event`: the notes a nightly job
    /// repeats say it, so that last night's news reads apart from last week's.
    pub fn last_day(&self, event: Event) -> Option<String> {
        (self.last(event)).map(|h| crate::time::format_day(crate::time::utc_day(h.at)))
    }

    /// A user's edit made this lesson: a new wording of the lesson it supersedes.
    pub fn is_edit(&self) -> bool {
        self.history.first().is_some_and(|h| h.event == Event::Edited)
    }

    /// What the lesson says, without the operation key a mechanical lesson's text leads with
    /// (``run_shell_command cargo: run `cargo build --locked` instead of …``): the words to
    /// compare with a lesson or a line written by hand, which name no tool.
    pub fn said(&self) -> &str {
        (self.operation_key.as_deref())
            .and_then(|key| self.text.strip_prefix(key))
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(&self.text)
    }
}

#[cfg(test)]
mod tests {
    /// Two million calls are held at a million records: `secret_print` must stay in the
    /// padding after `status`, not add a word to every call.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_call_stays_nine_words() {
        assert_eq!(std::mem::size_of::<super::Operation>(), 72);
    }

    /// About 1.7 million candidates live from the candidates stage to the fold's end at a
    /// million records: every byte of a `Candidate` is 1.7 MB written, faulted in fresh (several
    /// seconds of system time a GiB on the benchmark VM) and read again by the clustering, the
    /// gate and the fold. The fields only some have (key, working form, reasons) stay in one
    /// optional box, domains and projects are places in `Names`, the three flags one byte.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_candidate_stays_eleven_words() {
        use super::{Candidate, Name};
        use std::mem::size_of;
        assert_eq!(size_of::<Name>(), 4);
        assert_eq!(
            size_of::<Option<Name>>(),
            4,
            "a project's place is no bigger than a domain's"
        );
        assert!(
            size_of::<Candidate>() <= 88,
            "`Candidate` grew to {} bytes (at most 88): a field only some candidates need \
             belongs in `Extra`, a name in `Names`, a flag in `Flags`",
            size_of::<Candidate>()
        );
    }

    #[test]
    fn names_are_numbered_in_byte_order() {
        use super::{Name, Names};
        let names = Names::new(["python", "git", "a1b2c3d4e5f6", "git", "Z", "é"]);
        let all: Vec<&str> = names.iter().map(|(_, s)| s).collect();
        assert_eq!(
            all,
            ["Z", "a1b2c3d4e5f6", "git", "python", "é"],
            "sorted, one copy each"
        );
        assert_eq!(names.len(), 5);
        for (n, s) in names.iter() {
            assert_eq!(names.find(s), Some(n));
            assert_eq!(names.get(n), s);
        }
        // Places compare as their names do, so a place can stand in a sort for its name.
        let places: Vec<Name> = names.iter().map(|(n, _)| n).collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(names.find("rust"), None);
        assert_eq!(Name::at(0).index(), 0);
        assert_eq!(Name::at(41).index(), 41);
    }

    #[test]
    fn flags_hold_each_fact_apart() {
        use super::Flags;
        for bits in 0..8u8 {
            let (b, o, n) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
            let f = Flags::new(b, o, n);
            assert_eq!(
                (
                    f.has(Flags::BLESSED),
                    f.has(Flags::OUTCOME_FAILED),
                    f.has(Flags::NARRATIVE)
                ),
                (b, o, n)
            );
        }
    }

    /// 2.3 million history entries are held at a million records, each lesson's in an
    /// allocation of its length: an entry stays eight words (its idle days and their
    /// confidence sit beside the confidence and the one-byte event).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_history_entry_stays_eight_words() {
        assert_eq!(std::mem::size_of::<super::HistoryEntry>(), 64);
    }

    /// One id is held in place, in the room of a pointer and a length (several behind one
    /// pointer beside it).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn ids_stay_two_words() {
        assert_eq!(std::mem::size_of::<super::Ids>(), 16);
    }

    #[test]
    fn ids_read_alike_however_made() {
        use super::{Id, Ids};
        let (a, b): (Id, Id) = ("exp-a".into(), "exp-b".into());
        let one: Ids = vec![a.clone()].into();
        assert!(matches!(one, Ids::One(_)));
        assert_eq!(one, Ids::Many(Some(Box::new(vec![a.clone()]))));
        assert_eq!(&*one, std::slice::from_ref(&a));
        let two: Ids = [a.clone(), b.clone()].into_iter().collect();
        assert_eq!(&*two, &[a.clone(), b.clone()]);
        assert_eq!(Ids::from(vec![a.clone(), b.clone()]), two);
        let none: Ids = std::iter::empty().collect();
        assert!(none.is_empty() && Ids::from(Vec::new()).is_empty());
        assert_eq!(format!("{one:?}"), format!("{:?}", std::slice::from_ref(&a)));
        assert_eq!(serde_json::to_string(&two).unwrap(), r#"["exp-a","exp-b"]"#);
        assert_eq!(serde_json::to_string(&Ids::One(a)).unwrap(), r#"["exp-a"]"#);
    }
}
