//! Score: the lifecycle fold (DESIGN §6).
//!
//! One pass over the history in time order — candidate arrivals, experiences (attribution of
//! `in_play` lessons) and user decisions — turns admitted clusters into lessons with identity,
//! wording, confidence (integer thousandths), status, scope and history. Decay is settled
//! lazily: when a lesson is touched, the active days since it was last settled are charged.
//! Nothing is deleted: a lesson leaves the prompt-facing files by being superseded or retired.
//!
//! The pass runs per *unit* in parallel (rayon): each unit has its own state and sees its own
//! events in the global order, so it does exactly what the single pass would do to its
//! lessons. Lessons touch each other only through the mechanical slot (one active mechanical
//! lesson per (scope, operation key)), and one key spans many domains, so the mechanical
//! clusters of a key form one unit and every other cluster is a unit of its own (small units
//! keep both cores busy to the end, and a second pass refolds only what it changes). What
//! crosses units is handled around the parallel step:
//!
//! * `in_play` names lesson ids, and an id exists only once the fold founds it (or an edit
//!   makes it). So a unit takes in experiences as it goes: when it founds or edits a lesson, the
//!   later experiences that name the new id join its events (`Fold::take_in`). An experience
//!   that names no lesson a unit holds changes nothing there, so this is all the single pass
//!   would do. The warning for ids that name no lesson is built after the fold from what no
//!   unit found, once per experience, with the same text.
//! * User decisions name a lesson id too, and are taken in the same way: a decision before the
//!   lesson existed found nothing to act on.
//! * Caps per (scope, domain), the ledger fields and the sort by id run on the merged lessons.
//!
//! If two units end up holding lessons with the same id (a 48-bit hash collision, which the
//! single pass would settle by creation order), the fold runs again as the single pass: one
//! unit that folds every experience with lessons in play.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::{Mutex, OnceLock};

// Deterministic and fast; none of these maps is iterated into the output.
use crate::cluster::fx::FxMap as HashMap;

use rayon::prelude::*;

use crate::cluster::fx::{FxMap, FxSet, fingerprint, parts_print};
use crate::diagnostics::{Diagnostic, Sink, codes, counted, plural, short_list};
use crate::digest;
use crate::gate::Admitted;
/// What a history entry records (the fold's own `Event`s are what it takes in).
use crate::model::Event as Step;
use crate::model::{
    Action, Candidate, Cluster, Corpus, Decision, Experience, HistoryEntry, Id, Ids, Kind, Lesson, Millis,
    Name, Names, OpStatus, Operation, Source, Status,
};
use crate::opkey;
use crate::outcome::Verdict;
use crate::policy::Rules;
use crate::time::utc_day;

/// The reason a lesson that decayed below the floor was superseded.
pub const DECAYED: &str = "confidence decayed below the floor (unused on active days)";

/// The reason a lesson that contradictions took below the floor was superseded.
pub const CONTRADICTED: &str = "confidence fell below the floor after contradictions";

/// The reason of a lesson the cap superseded. The cap is the end state of each compile, not an
/// event of the fold: a decision (a pin) on such a lesson still applies.
pub const CAPPED: &str = "over the cap of active lessons for its scope and domain";

/// The history detail of a claim admitted because it gained evidence (`trace` reads it as the
/// confirmation of an experience that had the claim in play).
pub const CLAIM_GAINED_EVIDENCE: &str = "claim gained evidence";
/// The detail of a `blessed` history event.
pub const BLESSED: &str = "a person vouches for it";

/// The reason of a lesson an edit superseded: its decisions pass on to the edited wording.
pub const EDITED: &str = "edited by the user";

/// The reason of a watch lesson on a recurring error that a later session fixed (GAIA).
pub const FIXED: &str = "the error it warns about was fixed in a later session";

/// The reason of a claimed fix (a GAIA tool lesson) that a later session showed: the lesson
/// learned from that session replaces it.
pub const DEMONSTRATED: &str = "a later session demonstrated it";

/// The fold's result: every lesson (sorted by id) and, per candidate, the lesson it joined.
#[derive(Clone, Debug, Default)]
pub struct Scored {
    pub lessons: Vec<Lesson>,
    pub lesson_of: Vec<Option<u32>>,
}

pub struct Inputs<'a> {
    pub corpus: &'a Corpus,
    pub verdicts: &'a [Verdict],
    pub candidates: &'a [Candidate],
    /// What the candidates' domains and projects stand for.
    pub names: &'a Names,
    pub clusters: &'a [Cluster],
    pub admitted: &'a [Admitted],
    pub decisions: &'a [Decision],
    /// Lesson ids back-filled history re-founded, and the ids they have now: an `in_play` that
    /// names the old id (the id the agent saw) means the lesson. Empty on a first pass.
    pub(crate) renamed: &'a HashMap<String, String>,
    pub rules: &'a Rules,
    pub min_reinforcement: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Admissible members of one admitted cluster arriving at one time (the founders, when
    /// the cluster has no live lesson): `members[from..to]` of admitted cluster `cluster`.
    Arrivals { cluster: u32, from: u32, to: u32 },
    /// A claim stopped being true (`LessonClaim::ended`): the lesson candidate `candidate`
    /// joined is superseded.
    Ended { candidate: u32 },
}

/// One unit's arrivals and ends of claims, sorted by (time, phase, rank).
type Events = Vec<(Millis, u8, u32, Event)>;

/// The phases of what a unit takes in: at one time, experiences are attributed before
/// anything else, decisions come last (`events`).
const TAKEN_EXPERIENCE: u8 = 0;
const TAKEN_DECISION: u8 = 3;

/// The runs of one time in an admitted cluster's members (sorted by time): `(time, from, to)`.
fn runs<'c>(cand: &'c [Candidate], members: &'c [u32]) -> impl Iterator<Item = (Millis, usize, usize)> + 'c {
    let mut from = 0;
    std::iter::from_fn(move || {
        let t = cand[*members.get(from)? as usize].recorded_at;
        // Runs are short: a scan reads fewer candidates than a binary search over the rest.
        let len = members[from..]
            .iter()
            .take_while(|&&m| cand[m as usize].recorded_at == t)
            .count();
        let to = from + len;
        let run = (t, from, to);
        from = to;
        Some(run)
    })
}

/// The founder and wording of the lesson a run of members founds, and its id (DESIGN §6).
fn founding<'a>(inp: &Inputs<'a>, cluster: &Cluster, members: &[u32]) -> (Id, &'a str, String) {
    let cand = inp.candidates;
    let founder = members
        .iter()
        .map(|&m| &cand[m as usize].record_id)
        .min()
        .map_or_else(|| Id::from(""), Id::clone);
    // Wording: the most rule-shaped founding member; ties to the smallest id.
    let wording = members
        .iter()
        .map(|&m| &cand[m as usize])
        .min_by_key(|c| (c.narrative_score, &*c.record_id))
        .map_or("", |c| &*c.text);
    let key = cluster.key.as_deref().unwrap_or("");
    let id = digest::id_of(
        'L',
        &[&cluster.domain, cluster.kind.as_str(), key, &founder, wording],
    );
    (founder, wording, id)
}

/// An experience's first mention of a lesson id in its `in_play` list: `pos` in the list of
/// the experience of `rank` (`Shared::in_play`), recorded at `at`. Ordered by rank first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Mention {
    rank: u32,
    pos: u32,
    at: Millis,
}

/// Read-only data every unit shares.
struct Shared<'a> {
    /// Experiences with lessons in play (indices), by rank: their order by id, which breaks
    /// ties at one time.
    in_play: Vec<u32>,
    /// Lesson id (as `digest::lesson_id_bits`) → its range of `mentions`: the first mention
    /// by each experience whose `in_play` names it, by rank. The fold looks up every id it
    /// founds or edits, always an identity hash (`digest::id_of`): an id of another shape never
    /// matches, and a number key is compared in its bucket, where a text key was one more
    /// cache miss a hit.
    named: FxMap<u64, (u32, u32)>,
    /// The mentions `named` ranges over, each id's together: one read of a founded lesson's
    /// mentions, where a vector per id and each mention's time by rank were two misses more.
    mentions: Vec<Mention>,
    /// `named` followed a renaming (`rename` then starts again from the `in_play` lists).
    named_renamed: bool,
    /// Lesson id → the journal's decisions on it (indices, in journal order).
    decided: HashMap<&'a str, Vec<u32>>,
    active_days: ActiveDays<'a>,
    /// By rank, the numbers of the experience's domains (`DomainDays::id`):
    /// `domain_ids[domains_from[rank]..domains_from[rank + 1]]`. Attribution asks whether a
    /// lesson's domain is one of them for most lessons an experience names, and compared
    /// texts were a cache miss for each domain and one for the lesson's.
    domains_from: Vec<u32>,
    domain_ids: Vec<u32>,
    /// Experience id → experience, for a lookup its hint does not answer.
    exp_index: ExperienceIndex<'a>,
    /// No two experiences share an id, so a candidate's own experience is the one its id names.
    unique_ids: bool,
    /// Per candidate, one bit: whether it is drawn from the experience its id names
    /// (`experience` with its hint): its id is that experience's own (not a redacted
    /// stand-in) and ids are unique. Read once in input order here, where the fold asked each
    /// experience at random; bits, so that the fold's random reads stay in cache (a byte a
    /// candidate is a megabyte at a million). Empty when ids are not unique.
    own_id: Vec<u64>,
    /// By rank, the calls of an experience with lessons in play as attribution compares them,
    /// made the first time a keyed lesson it names is attributed (in any unit): a session may
    /// name hundreds of keyed lessons, and its calls are parsed once, not once per lesson.
    call_forms: Vec<OnceLock<Box<[CallForm]>>>,
}

/// A call's operation key, and fingerprints of its working form (its arguments as Python's
/// `json.dumps` writes them, which may be long: file contents), with and without where it ran
/// (`Policy::placeless`). A fingerprint match is confirmed on the text, so a collision costs
/// time, never a wrong attribution.
struct CallForm {
    key: String,
    working: u64,
    placeless: u64,
}

/// Does a call (its call form) run a lesson's working form? The form a fix kept has no place
/// when the fix did not change it (`Policy::fix_form`): then the call runs it wherever it ran.
fn runs_form(form: &serde_json::Value, working: &str, policy: &crate::policy::Policy) -> bool {
    opkey::python_json(form) == working
        || matches!(policy.placeless(form), Cow::Owned(p) if opkey::python_json(&p) == working)
}

impl Shared<'_> {
    /// The calls on key `k` of `exp`, the experience of `rank`, with their forms.
    fn calls_on<'e>(
        &'e self,
        rank: u32,
        exp: &'e Experience,
        k: &'e str,
        policy: &crate::policy::Policy,
    ) -> impl DoubleEndedIterator<Item = (&'e Operation, &'e CallForm)> {
        let forms = self.call_forms[rank as usize].get_or_init(|| {
            let form = |op: &Operation| {
                let args = op.args.value();
                let form = policy.call_form(&args);
                let working = fingerprint(&opkey::python_json(&form));
                let placeless = match policy.placeless(&form) {
                    Cow::Borrowed(_) => working,
                    Cow::Owned(p) => fingerprint(&opkey::python_json(&p)),
                };
                CallForm {
                    key: opkey::operation_key(&op.tool, &args),
                    working,
                    placeless,
                }
            };
            exp.operations.iter().map(form).collect()
        });
        (exp.operations.iter().zip(forms)).filter(move |(_, form)| form.key == k)
    }
}

/// A lesson being folded, with the bookkeeping the ledger does not show.
#[derive(Clone)]
struct Live<'a> {
    lesson: Lesson,
    /// Supporting experience ids, each with the index of its experience where the support
    /// knew it (`Fold::experience`'s hint); an id may repeat (sorted and deduplicated at the
    /// end).
    evidence: Vec<(&'a Id, Option<u32>)>,
    /// Project digests of the supporting experiences, sorted, each once (`add_project`): a
    /// lesson has a few, and a tree allocated a node for each lesson.
    projects: Vec<&'a str>,
    /// Its domain's days (none when no experience has the domain): the scope's are looked up
    /// in them when it changes, and experiences are told in the domain by its number.
    domain: Option<&'a DomainDays<'a>>,
    /// The active days of its domain within its scope (decay), looked up when the scope changes.
    days: &'a [i64],
    /// Days up to and including this one are charged for decay.
    settled_through: i64,
    /// Set when a global lesson was demoted: the project it was demoted to.
    demoted_to: Option<&'a str>,
    last_confirm_project: Option<&'a str>,
}

impl Live<'_> {
    fn frozen(&self) -> bool {
        frozen(&self.lesson)
    }

    /// False when the lesson was frozen already (and is left so).
    fn supersede(&mut self, t: Millis, by: Option<String>, reason: &'static str) -> bool {
        supersede(&mut self.lesson, t, by, reason)
    }

    /// Names `by` as the successor of a lesson superseded at this same instant without one
    /// (the contradiction that broke a fix put it below the floor just before the form that
    /// replaced it arrived). False, and nothing changes, otherwise.
    fn name_successor(&mut self, t: Millis, by: &str) -> bool {
        let l = &mut self.lesson;
        let just_now = l
            .history
            .last()
            .is_some_and(|h| h.at == t && h.event == Step::Superseded);
        if l.status != Status::Superseded || l.superseded_by.is_some() || !just_now {
            return false;
        }
        l.superseded_by = Some(by.to_string());
        if let Some(h) = l.history.last_mut() {
            let detail = h.detail.as_deref().unwrap_or("superseded");
            h.detail = Some(Cow::Owned(format!("{detail}; superseded by {by}")));
        }
        true
    }
}

/// A superseded or retired lesson: no event of the fold changes it any more.
fn frozen(l: &Lesson) -> bool {
    matches!(l.status, Status::Superseded | Status::Retired)
}

/// Supersedes `l` at `t` (by `by`, for `reason`); false when it was frozen already (and is
/// left so).
fn supersede(l: &mut Lesson, t: Millis, by: Option<String>, reason: &'static str) -> bool {
    if frozen(l) {
        return false;
    }
    l.status = Status::Superseded;
    l.superseded_by = by.clone();
    l.reason = Some(Cow::Borrowed(reason));
    let detail = match &by {
        Some(b) => Cow::Owned(format!("{reason}; superseded by {b}")),
        None => Cow::Borrowed(reason),
    };
    let c = l.confidence;
    l.history
        .push(entry(t, Step::Superseded, c, Ids::NONE, Some(detail)));
    true
}

/// Days on which each domain (optionally within one project) has an experience.
#[derive(Default)]
struct ActiveDays<'a>(HashMap<&'a str, DomainDays<'a>>);

#[derive(Default)]
struct DomainDays<'a> {
    /// The domain's number: lessons and experiences compare domains by it (`Shared::in_domain`).
    id: u32,
    any: Vec<i64>,
    per_project: HashMap<&'a str, Vec<i64>>,
}

impl DomainDays<'_> {
    /// The active days of the domain within a scope (`global` or `project:<p>`).
    fn of(&self, scope: &str) -> &[i64] {
        match scope.strip_prefix("project:") {
            Some(p) => self.per_project.get(p).map_or(&[], |v| v),
            None => &self.any,
        }
    }
}

impl<'a> ActiveDays<'a> {
    fn new(corpus: &'a Corpus) -> ActiveDays<'a> {
        // Chunks of the corpus fill their own maps, merged after; every list is sorted and
        // deduplicated at the end, so the merge order does not matter.
        let mut days = corpus
            .experiences
            .par_iter()
            .fold(ActiveDays::default, |mut acc, e| {
                let day = utc_day(e.recorded_at);
                // Neighbouring records mostly share a day: skipping a repeat of the last day
                // keeps the lists short.
                let add = |v: &mut Vec<i64>| {
                    if v.last() != Some(&day) {
                        v.push(day);
                    }
                };
                for d in &e.domains {
                    let dd = acc.0.entry(d).or_default();
                    add(&mut dd.any);
                    if let Some(p) = &e.project {
                        add(dd.per_project.entry(p).or_default());
                    }
                }
                acc
            })
            .reduce(ActiveDays::default, |mut a, b| {
                for (d, bd) in b.0 {
                    let ad = a.0.entry(d).or_default();
                    ad.any.extend(bd.any);
                    for (p, v) in bd.per_project {
                        ad.per_project.entry(p).or_default().extend(v);
                    }
                }
                a
            });
        for (id, d) in days.0.values_mut().enumerate() {
            d.id = id as u32;
        }
        let mut lists: Vec<&mut Vec<i64>> = (days.0.values_mut())
            .flat_map(|d| std::iter::once(&mut d.any).chain(d.per_project.values_mut()))
            .collect();
        lists.par_iter_mut().for_each(|v| {
            v.sort_unstable();
            v.dedup();
        });
        days
    }

    /// A domain's days; none when no experience has the domain.
    fn of(&self, domain: &str) -> Option<&DomainDays<'a>> {
        self.0.get(domain)
    }
}

/// The days of `days` (sorted) in `(from, to]`.
fn between(days: &[i64], from: i64, to: i64) -> &[i64] {
    let lo = days.partition_point(|&d| d <= from);
    let rest = &days[lo..];
    // Settling mostly charges a day or two: the end is found by galloping from `lo`, in the
    // lines the first search just read, not by a second search from the middle of the list.
    let mut step = 1;
    while step < rest.len() && rest[step - 1] <= to {
        step *= 2;
    }
    let (near, far) = (step / 2, step.min(rest.len()));
    let hi = near + rest[near..far].partition_point(|&d| d <= to);
    &rest[..hi]
}

/// The first pass: every unit folded. `Units` lets a second pass (`rescore`) keep what it
/// does not change, and makes the pass's diagnostics (`Units::into_sink`).
pub fn score<'a>(inp: &Inputs<'a>) -> (Scored, Units<'a>) {
    fold_all(
        inp,
        prepare(inp),
        units(inp, false),
        Vec::new(),
        Previous::default(),
    )
}

/// Folds the units not `kept`, or, when two units hold one id, everything as the single pass.
/// `partition` is `units(inp, false)`; the lessons go into `previous`'s memory.
fn fold_all<'a>(
    inp: &Inputs<'a>,
    shared: Shared<'a>,
    partition: Vec<Vec<u32>>,
    kept: Vec<Option<UnitOut>>,
    previous: Previous,
) -> (Scored, Units<'a>) {
    fold_units(inp, shared, partition, false, kept, previous)
        .or_else(|shared| {
            let (partition, previous) = (units(inp, true), Previous::default());
            fold_units(inp, *shared, partition, true, Vec::new(), previous)
        })
        .unwrap_or_else(|_| unreachable!("one unit holds every lesson"))
}

/// The fold again, with `inp`'s renamed ids and decisions (their targets renamed too), after a
/// first pass that gave the lessons `previous` and `units`: only the units holding a lesson
/// the renaming points to are folded again; an id names a lesson of one unit, so the others
/// would fold exactly as they did. The same result as `score(inp)`.
pub fn rescore<'a>(inp: &Inputs<'a>, previous: Vec<Lesson>, units: Units<'a>) -> (Scored, Units<'a>) {
    let Units {
        mut shared,
        partition,
        at,
        sides,
        capped,
        single,
        ..
    } = units;
    shared.rename(inp);
    let mut refold = vec![single; sides.len()];
    for id in inp.renamed.values() {
        if let Ok(pos) = previous.binary_search_by(|l| l.id.as_str().cmp(id)) {
            refold[at[pos].0 as usize] = true;
        }
    }
    let mut lessons = previous;
    // The cap is the end state of a compile, not an event of the fold: undone here, it is
    // applied again to the lessons of both passes.
    for &pos in &capped {
        let l = &mut lessons[pos as usize];
        l.status = Status::Active;
        l.superseded_by = None;
        l.reason = None;
        l.history.pop();
    }
    // Each unit's lessons' places, in unit order (lesson numbers): a kept unit's lessons stay
    // where they are until `finish` puts them in their new places (moving them into unit
    // vectors and back moved 150 MB three times at a million experiences).
    let mut first = vec![0u32; sides.len() + 1];
    for &(u, _) in &at {
        first[u as usize + 1] += 1;
    }
    for u in 0..sides.len() {
        first[u + 1] += first[u];
    }
    let mut from = vec![0u32; at.len()];
    for (pos, &(u, i)) in at.iter().enumerate() {
        from[(first[u as usize] + i) as usize] = pos as u32;
    }
    let kept: Vec<Option<UnitOut>> = (sides.into_iter().enumerate())
        .map(|(u, side)| {
            (!refold[u]).then(|| UnitOut {
                lessons: Held::Kept(first[u]..first[u + 1]),
                side,
            })
        })
        .collect();
    // The partition depends on the clusters alone; a single pass's is made again.
    let partition = if single {
        self::units(inp, false)
    } else {
        partition
    };
    // The lessons' old places (in memory faulted in already) take the new ones: a new vector
    // of that size was most of the second fold's system time.
    let previous = Previous {
        lessons,
        places: from,
    };
    fold_all(inp, shared, partition, kept, previous)
}

/// What every unit reads.
fn prepare<'a>(inp: &Inputs<'a>) -> Shared<'a> {
    let exps = &inp.corpus.experiences;
    let (active_days, (exp_index, unique_ids)) =
        rayon::join(|| ActiveDays::new(inp.corpus), || ExperienceIndex::new(exps));
    let mut in_play: Vec<u32> = (0..exps.len() as u32)
        .filter(|&i| !exps[i as usize].in_play.is_empty())
        .collect();
    in_play.par_sort_by(|&a, &b| exps[a as usize].id.cmp(&exps[b as usize].id));
    let call_forms = in_play.iter().map(|_| OnceLock::new()).collect();
    let own = |c: &Candidate| match c.source {
        Source::Experience(ei) => {
            let id = &exps[ei as usize].id;
            std::ptr::eq(&**id, &*c.record_id) || *id == c.record_id
        }
        Source::Claim(_) => false,
    };
    let own_id = if unique_ids {
        (inp.candidates.par_chunks(64))
            .map(|chunk| (chunk.iter().enumerate()).fold(0u64, |bits, (i, c)| bits | (own(c) as u64) << i))
            .collect()
    } else {
        Vec::new()
    };
    let ranked: Vec<(usize, u32)> = (in_play.par_iter().enumerate())
        .flat_map_iter(|(rank, &i)| {
            let domains = exps[i as usize].domains.iter();
            // Every experience's domains have days: each has a number.
            let ids = domains.filter_map(|d| active_days.of(d)).map(|d| d.id);
            ids.map(move |id| (rank, id))
        })
        .collect();
    let (domains_from, domain_ids) = crate::bulk::group_by_key(in_play.len(), ranked.into_iter());
    let mut shared = Shared {
        in_play,
        named: HashMap::default(),
        mentions: Vec::new(),
        named_renamed: false,
        decided: HashMap::default(),
        active_days,
        domains_from,
        domain_ids,
        exp_index,
        unique_ids,
        own_id,
        call_forms,
    };
    shared.name(inp);
    shared
}

/// Experience id → experience.
enum ExperienceIndex<'a> {
    /// No two ids share a fingerprint (`id_print`; so no two are equal): fingerprint → index,
    /// made on the first lookup (`find`). A corpus whose supports all come with their experience's index
    /// never needs this million-entry map.
    ByPrint(OnceLock<FxMap<u64, u32>>),
    /// Two ids share a fingerprint (equal ids, or rarely a collision): id → index, of two with
    /// one id the last, as it always was.
    ById(HashMap<&'a str, u32>),
}

/// An experience id's fingerprint: ids are often numbered (`run-00017`), and `fingerprint`
/// gives such ids one print often enough that the index would fall back to the id map.
fn id_print(id: &str) -> u64 {
    parts_print(&[id.as_bytes()])
}

impl<'a> ExperienceIndex<'a> {
    /// The index, and whether no two experiences share an id. The fingerprints are sorted on
    /// every core, where a map of a million ids was filled on one.
    fn new(exps: &'a [Experience]) -> (ExperienceIndex<'a>, bool) {
        let mut prints: Vec<u64> = exps.par_iter().map(|e| id_print(&e.id)).collect();
        prints.par_sort_unstable();
        if prints.windows(2).all(|w| w[0] != w[1]) {
            return (ExperienceIndex::ByPrint(OnceLock::new()), true);
        }
        let (index, unique) = Self::by_id(exps);
        (ExperienceIndex::ById(index), unique)
    }

    fn by_id(exps: &'a [Experience]) -> (HashMap<&'a str, u32>, bool) {
        let mut index = HashMap::with_capacity_and_hasher(exps.len(), Default::default());
        let mut unique = true;
        for (i, e) in exps.iter().enumerate() {
            unique &= index.insert(&*e.id, i as u32).is_none();
        }
        (index, unique)
    }

    /// The experience of `exps` (the ones indexed) with this id.
    fn find(&self, exps: &'a [Experience], id: &str) -> Option<&'a Experience> {
        match self {
            ExperienceIndex::ById(index) => index.get(id).map(|&i| &exps[i as usize]),
            ExperienceIndex::ByPrint(built) => {
                let by_print = built.get_or_init(|| {
                    let prints = exps.iter().enumerate();
                    prints.map(|(i, e)| (id_print(&e.id), i as u32)).collect()
                });
                // Only the experience with this id's fingerprint can have the id.
                let e = &exps[*by_print.get(&id_print(id))? as usize];
                (*e.id == *id).then_some(e)
            }
        }
    }
}

impl<'a> Shared<'a> {
    /// Whether the experience of `rank` is in `domain` (`Live::domain`).
    fn in_domain(&self, rank: u32, domain: Option<&DomainDays>) -> bool {
        let (from, to) = (
            self.domains_from[rank as usize],
            self.domains_from[rank as usize + 1],
        );
        domain.is_some_and(|d| self.domain_ids[from as usize..to as usize].contains(&d.id))
    }

    /// Candidate `m`'s `own_id` bit.
    fn own(&self, m: u32) -> bool {
        (self.own_id.get(m as usize / 64)).is_some_and(|bits| bits >> (m % 64) & 1 == 1)
    }

    /// Indexes what names a lesson id: the `in_play` lists (an old id as the lesson it was
    /// renamed to) and the decisions.
    fn name(&mut self, inp: &Inputs<'a>) {
        let exps = &inp.corpus.experiences;
        // Every mention in rank order, its id found among the distinct ids on every core
        // (`bulk::first_seen`): a million mentions put into the map one by one took a third
        // of a second on one core.
        let mentions: Vec<(&'a str, Mention)> = (self.in_play.par_iter().enumerate())
            .flat_map_iter(|(rank, &i)| {
                let exp = &exps[i as usize];
                (exp.in_play.iter().enumerate()).map(move |(pos, id)| {
                    let m = Mention {
                        rank: rank as u32,
                        pos: pos as u32,
                        at: exp.recorded_at,
                    };
                    (inp.renamed.get(id).unwrap_or(id).as_str(), m)
                })
            })
            .collect();
        let (slot, ids) = crate::bulk::first_seen(&mentions, |m| Some(m.0));
        // Per id, by rank: an experience's first mention of it (mentions come in rank order),
        // grouped by id in one vector.
        let mut last_rank = vec![u32::MAX; ids.len()];
        let first: Vec<bool> = (mentions.iter().zip(&slot))
            .map(|(&(_, m), &s)| std::mem::replace(&mut last_rank[s as usize], m.rank) != m.rank)
            .collect();
        drop(last_rank);
        let firsts = (mentions.iter().zip(&slot).zip(&first))
            .filter(|(_, first)| **first)
            .map(|((&(_, m), &s), _)| (s as usize, m));
        let (ends, placed) = crate::bulk::group_by_key(ids.len(), firsts);
        let mut named = FxMap::with_capacity_and_hasher(ids.len(), Default::default());
        named.extend(
            (ids.into_iter().enumerate())
                .filter_map(|(s, id)| Some((digest::lesson_id_bits(id)?, (ends[s], ends[s + 1])))),
        );
        self.named = named;
        self.mentions = placed;
        self.named_renamed = !inp.renamed.is_empty();
        self.decide(inp);
    }

    /// `name` again for a second pass, from a first pass named without renaming: only the
    /// old ids' mentions move (exactly as `name` would place them: an experience that names
    /// both an old id and its new one counts once, at its first mention of either).
    fn rename(&mut self, inp: &Inputs<'a>) {
        if self.named_renamed {
            self.name(inp);
            return;
        }
        // All old ids' mentions first: a renamed id may itself be renamed, one step each.
        let bits = |id: &str| digest::lesson_id_bits(id);
        let moved: Vec<(u64, (u32, u32))> = (inp.renamed.iter())
            .filter_map(|(old, new)| {
                let mentions = self.named.remove(&bits(old)?)?;
                Some((bits(new)?, mentions))
            })
            .collect();
        // A merged list goes to the end of `mentions`; the ranges it was made of are left unused.
        for (new, (from, to)) in moved {
            let (had_from, had_to) = self.named.get(&new).copied().unwrap_or((0, 0));
            let mut both = self.mentions[had_from as usize..had_to as usize].to_vec();
            both.extend_from_slice(&self.mentions[from as usize..to as usize]);
            // By rank, the first mention of each.
            both.sort_unstable();
            both.dedup_by_key(|m| m.rank);
            let start = self.mentions.len() as u32;
            self.mentions.extend(both);
            self.named.insert(new, (start, self.mentions.len() as u32));
        }
        self.named_renamed = true;
        self.decide(inp);
    }

    /// The journal's decisions by their (renamed) targets.
    fn decide(&mut self, inp: &Inputs<'a>) {
        let mut decided: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, d) in inp.decisions.iter().enumerate() {
            decided.entry(&d.target).or_default().push(i as u32);
        }
        self.decided = decided;
    }
}

/// The admitted clusters (indices) of each unit: mechanical clusters by operation key, every
/// other cluster alone, units in (mechanical, key or domain, cluster) order. With `single`, one
/// unit holds all.
fn units(inp: &Inputs, single: bool) -> Vec<Vec<u32>> {
    if single {
        return vec![(0..inp.admitted.len() as u32).collect()];
    }
    // Each admitted cluster with its unit's key, sorted on every core (the key ends in the
    // cluster's own number where it is alone, so the order is total), then grouped.
    let mut keyed: Vec<((bool, &str, u32), u32)> = (inp.admitted.par_iter().enumerate())
        .map(|(ai, a)| {
            let cluster = &inp.clusters[a.cluster as usize];
            // A claim that a fix ended is superseded by the form the fixing experience learned
            // on its key, so it folds with the key's mechanical lessons.
            let mechanical = (a.members.iter())
                .any(|&m| inp.candidates[m as usize].working().is_some() || ended(inp, m).is_some());
            let unit = match &cluster.key {
                Some(key) if mechanical => (true, key.as_str(), 0),
                _ => (false, cluster.domain.as_str(), ai as u32),
            };
            (unit, ai as u32)
        })
        .collect();
    keyed.par_sort_unstable();
    (keyed.chunk_by(|a, b| a.0 == b.0))
        .map(|unit| unit.iter().map(|&(_, ai)| ai).collect())
        .collect()
}

/// A unit's arrivals and ends of claims, in the global order. Experiences and decisions join
/// as the fold founds the lessons they name (`Fold::take_in`).
fn events(inp: &Inputs, clusters: &[u32]) -> Events {
    let mut events = Events::new();
    // At one time: attribution first (a lesson in play is judged before the same evidence can
    // found its successor), then candidate arrivals, then the ends of claims (after the form
    // that replaced one has arrived), then user decisions (phase 3, taken in).
    // Ties inside a phase break by id: clusters are sorted by id already, experiences get their
    // rank among the ids of those with lessons in play, ends their candidate's index,
    // decisions their journal order.
    for &ai in clusters {
        let a = &inp.admitted[ai as usize];
        for (t, from, to) in runs(inp.candidates, &a.members) {
            let run = Event::Arrivals {
                cluster: ai,
                from: from as u32,
                to: to as u32,
            };
            events.push((t, 1, a.cluster, run));
        }
        for &m in &a.members {
            if let Some(end) = ended(inp, m) {
                events.push((end.at, 2, m, Event::Ended { candidate: m }));
            }
        }
    }
    events.sort_unstable_by_key(|e| (e.0, e.1, e.2));
    events
}

/// When the claim behind candidate `m` stopped being true, if it did.
fn ended<'a>(inp: &Inputs<'a>, m: u32) -> Option<&'a crate::model::Ended> {
    match inp.candidates[m as usize].source {
        Source::Claim(ci) => inp.corpus.claims[ci as usize].ended.as_ref(),
        Source::Experience(_) => None,
    }
}

/// What one unit's fold hands to the merge.
struct UnitOut {
    /// Its lessons, with their ledger fields filled in, not yet capped.
    lessons: Held,
    side: Side,
}

/// Where a unit's lessons are.
enum Held {
    /// Among the lessons the pass folded (`Merged::folded`), at `range`: a unit just folded.
    /// Each unit moves its lessons there as it ends, so that they need no vector of the unit's
    /// own and `finish` puts them in id order in that one vector's memory.
    Own(std::ops::Range<u32>),
    /// Among the first pass's lessons, at `Previous::places[range]`: a unit a second pass kept.
    Kept(std::ops::Range<u32>),
}

impl Held {
    fn len(&self) -> usize {
        match self {
            Held::Own(range) | Held::Kept(range) => range.len(),
        }
    }
}

/// The first pass's lessons (ledger order), when a second pass folds again: the kept units'
/// lessons where they are (`places`: each unit's in unit order), the others' to be dropped;
/// its memory takes the second pass's lessons. Empty for a first pass.
#[derive(Default)]
struct Previous {
    lessons: Vec<Lesson>,
    places: Vec<u32>,
}

/// What a unit's fold made besides its lessons (lesson indices are the unit's own).
#[derive(Clone, Default)]
struct Side {
    /// (candidate, lesson) pairs.
    lesson_of: Vec<(u32, u32)>,
    contradictions: BTreeMap<u32, Vec<Id>>,
    sink: Sink,
    /// (rank in `Shared::in_play`, position in its `in_play`) of every id that named one of the
    /// unit's lessons.
    found_in_play: Vec<(u32, u32)>,
}

/// A pass's units, kept so that a second pass, with lessons renamed, folds again only the
/// units that hold those lessons and takes every other unit's lessons as they are; and what
/// the pass found to report. Only the pass that stands is reported (`into_sink`): a first
/// pass's contradiction warnings would be made for nothing when a second pass follows.
pub struct Units<'a> {
    /// What every unit read (a second pass indexes the names again).
    shared: Shared<'a>,
    /// The admitted clusters of each unit (`units`).
    partition: Vec<Vec<u32>>,
    /// Per lesson of the pass's `Scored` (ledger order): its unit, and its index there.
    at: Vec<(u32, u32)>,
    sides: Vec<Side>,
    /// The lessons the cap superseded (ledger order): the cap is undone before a refold.
    capped: Vec<u32>,
    /// The pass ran as the single pass (one unit), so nothing can be kept.
    single: bool,
    /// The cap's warnings.
    capped_notes: Sink,
    /// Experiences naming ids no unit found (`unknown_in_play`).
    unknown: Sink,
}

impl Units<'_> {
    /// The warnings about `in_play` ids that named no lesson: the ids a second pass may rename.
    pub fn unknown_in_play(&self) -> &[Diagnostic] {
        &self.unknown
    }

    /// Every diagnostic of the pass, given its lessons (ledger order, as `at`) and the
    /// compile's "now"; the rest is freed.
    pub fn into_sink(self, lessons: &[Lesson], now: Millis) -> Sink {
        let sides = &self.sides;
        let mut sink: Sink = (self.at.par_iter().zip(lessons))
            .filter_map(|(&(u, i), l)| contradicted(l, sides[u as usize].contradictions.get(&i)?, now))
            .collect();
        sink.extend(self.unknown);
        sink.extend(self.capped_notes);
        // The units' own notes in unit order, their sides (a few hundred thousand maps and
        // vectors at a million experiences) freed on every core where one freed them all.
        let notes: Sink = (self.sides.into_par_iter())
            .flat_map_iter(|side| side.sink)
            .collect();
        sink.extend(notes);
        sink
    }
}

/// The warning on a lesson in play that experiences contradicted. A lesson no longer live
/// (superseded or retired, so frozen: no contradiction comes after) is warned about on the
/// night it left — the latest input day — saying what became of it; on later nights its
/// contradictions are history (`skillc lessons history ID`, and S001 for a superseded one),
/// not news, and a nightly job's morning report would repeat them forever.
fn contradicted(l: &Lesson, exps: &[Id], now: Millis) -> Option<Diagnostic> {
    let left = match l.status {
        Status::Superseded | Status::Retired => {
            let at = (l.history.iter().rev())
                .find(|h| matches!(h.event, Step::Superseded | Step::Retired))
                .map(|h| h.at);
            if at.is_some_and(|at| utc_day(at) < utc_day(now)) {
                return None;
            }
            Some(match (l.status, &l.superseded_by) {
                (Status::Retired, _) => "; the lesson is retired".to_string(),
                (_, Some(by)) => format!("; the lesson is superseded by {by}"),
                _ => format!(
                    "; the lesson is superseded: {}",
                    l.reason.as_deref().unwrap_or("replaced")
                ),
            })
        }
        _ => None,
    };
    // The confidence the last contradiction left, not where later events took it; and its
    // day: a live lesson is warned about every night, and the day tells last night's
    // contradiction from one a week old.
    let after = (l.last(Step::Contradicted)).map_or(l.confidence, |h| h.confidence);
    let on = l.last_day(Step::Contradicted);
    let when = match (&on, exps.len()) {
        (None, _) => String::new(),
        (Some(on), 1) => format!(" on {on}"),
        (Some(on), _) => format!(", the last on {on}"),
    };
    let d = Diagnostic::new(
        codes::CONTRADICTED,
        format!(
            "lesson in play was contradicted by {}{when}: {}; confidence after {}: {}{}",
            counted(exps.len(), "experience"),
            short_list(exps, 3),
            if exps.len() == 1 { "it" } else { "the last" },
            confidence_text(after),
            left.as_deref().unwrap_or("")
        ),
    )
    .subject(&l.id)
    .domain(&l.domain)
    .with("lesson", l.id.clone())
    .with("confidence", confidence_value(after));
    let d = match on {
        Some(on) => d.with("last_contradicted_on", on),
        None => d,
    };
    // A lesson no longer live says so in the evidence too.
    let d = match left {
        Some(_) => (d.with("status", l.status.as_str())).with("superseded_by", l.superseded_by.clone()),
        None => d,
    };
    Some(d.experiences(exps))
}

/// Every unit's lessons under one numbering (unit by unit), left where the units put them.
struct Merged {
    units: Vec<UnitOut>,
    /// Lesson number → (unit, index in the unit).
    at: Vec<(u32, u32)>,
    /// The folded units' lessons, each unit's together, in the order the units ended.
    folded: Vec<Lesson>,
    /// Where the kept units' lessons are.
    previous: Previous,
}

impl Merged {
    fn new(units: Vec<UnitOut>, folded: Vec<Lesson>, previous: Previous) -> Merged {
        let at = (units.iter().enumerate())
            .flat_map(|(u, o)| (0..o.lessons.len() as u32).map(move |i| (u as u32, i)))
            .collect();
        Merged {
            units,
            at,
            folded,
            previous,
        }
    }

    fn get(&self, g: u32) -> &Lesson {
        let (u, i) = self.at[g as usize];
        match &self.units[u as usize].lessons {
            Held::Own(range) => &self.folded[(range.start + i) as usize],
            Held::Kept(range) => {
                let place = self.previous.places[(range.start + i) as usize];
                &self.previous.lessons[place as usize]
            }
        }
    }

    fn get_mut(&mut self, g: u32) -> &mut Lesson {
        let (u, i) = self.at[g as usize];
        match &mut self.units[u as usize].lessons {
            Held::Own(range) => &mut self.folded[(range.start + i) as usize],
            Held::Kept(range) => {
                let place = self.previous.places[(range.start + i) as usize];
                &mut self.previous.lessons[place as usize]
            }
        }
    }

    /// Lesson numbers in id order (ties, possible only in one unit, in creation order), each
    /// beside its id's `prefix`, or `None` when two units hold lessons with the same id.
    fn by_id(&self) -> Option<Vec<(u128, u32)>> {
        let id = |g: u32| self.get(g).id.as_str();
        // Comparing a 16-byte prefix first decides almost every comparison without a cache
        // miss on the id's heap text.
        // Each id's prefix is read on every core (a cache miss per lesson, on one core before).
        let mut order: Vec<(u128, u32)> = (0..self.at.len() as u32)
            .into_par_iter()
            .map(|g| (prefix(id(g)), g))
            .collect();
        order.par_sort_unstable_by(|a, b| {
            (a.0.cmp(&b.0))
                .then_with(|| id(a.1).cmp(id(b.1)))
                .then(a.1.cmp(&b.1))
        });
        // Neighbours whose prefixes differ have different ids: almost every pair is told apart
        // without reading either id's text.
        let shared_id = |w: &[(u128, u32)]| {
            let (a, b) = (w[0].1, w[1].1);
            w[0].0 == w[1].0 && self.at[a as usize].0 != self.at[b as usize].0 && id(a) == id(b)
        };
        if order.windows(2).any(shared_id) {
            return None;
        }
        Some(order)
    }

    /// Whether a lesson has the id `id`, given the lessons `by_id` and `table`, their
    /// `PrefixTable`: one probe finds the lessons whose ids share `id`'s prefix, and only
    /// those ids' texts are read (a binary search of the 400 000 prefixes at a million
    /// experiences waited on a cache miss for most of its nineteen steps).
    fn has_id(&self, by_id: &[(u128, u32)], table: &PrefixTable, id: &str) -> bool {
        has_prefixed(by_id, table, id, |g| self.get(g).id.as_str())
    }
}

/// Where the entries of each prefix start in `by_prefix` (`search_by_prefix`'s order: ids
/// sorted, each as its `prefix` beside a number): an open-addressing table of four-byte slots,
/// each one plus the place of a prefix's first entry (0: empty), at most half full, probed
/// from the prefix's hash on. A hash map from each prefix to its first entry (32 bytes a
/// slot, 16.5 MB at a million experiences, filled in random order) took a fresh 2 MB page for
/// every 65 000 slots; this takes 4 MB. (Bands of prefixes in order, found without a hash,
/// would not do: lesson ids are hex text, so their prefixes crowd into a few of the bands.)
struct PrefixTable {
    slots: Vec<u32>,
    /// 64 less the number of bits of a slot's place.
    shift: u32,
}

impl PrefixTable {
    fn new(by_prefix: &[(u128, u32)]) -> PrefixTable {
        if by_prefix.is_empty() {
            return PrefixTable {
                slots: Vec::new(),
                shift: 0,
            };
        }
        // 2^bits > twice the number of entries.
        let bits = usize::BITS - by_prefix.len().leading_zeros() + 1;
        let mut slots = vec![0u32; 1 << bits];
        let mask = slots.len() - 1;
        let shift = u64::BITS - bits;
        let mut previous = None;
        for (at, &(p, _)) in by_prefix.iter().enumerate() {
            if previous.replace(p) == Some(p) {
                continue;
            }
            let mut s = prefix_hash(p, shift);
            while slots[s] != 0 {
                s = (s + 1) & mask;
            }
            slots[s] = at as u32 + 1;
        }
        PrefixTable { slots, shift }
    }

    /// The place in `by_prefix` of the first entry with prefix `key`, if any.
    fn first(&self, by_prefix: &[(u128, u32)], key: u128) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut s = prefix_hash(key, self.shift);
        loop {
            let at = (self.slots[s] as usize).checked_sub(1)?;
            if by_prefix.get(at).is_some_and(|&(p, _)| p == key) {
                return Some(at);
            }
            s = (s + 1) & mask;
        }
    }
}

/// A prefix's slot in a `PrefixTable` of 2^(64 - `shift`) slots: its two halves folded and
/// mixed by MurmurHash3's finalizer, the top bits taken. (One multiplication, Fibonacci
/// hashing, left runs of 33 full slots in a table of 1 000 lesson ids: their bytes are hex
/// digits.)
fn prefix_hash(p: u128, shift: u32) -> usize {
    let mut x = (p as u64) ^ ((p >> 64) as u64).rotate_left(29);
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^= x >> 33;
    (x >> shift) as usize
}

/// Whether `id` is in `by_prefix` (as `search_by_prefix(..).is_ok()`), given its
/// `PrefixTable`: the entries of `id`'s prefix are one run from its first, and a text is read
/// only for those.
fn has_prefixed<'t>(
    by_prefix: &[(u128, u32)],
    table: &PrefixTable,
    id: &str,
    id_of: impl Fn(u32) -> &'t str,
) -> bool {
    let key = prefix(id);
    let Some(at) = table.first(by_prefix, key) else {
        return false;
    };
    (by_prefix[at..].iter())
        .take_while(|&&(p, _)| p == key)
        .any(|&(_, n)| id_of(n) == id)
}

/// Where `id` is in `by_prefix`: ids in order, each as its `prefix` beside a number whose id's
/// text `id_of` reads. Each step compares as the ids do (prefixes are ordered as their texts,
/// and the texts decide a tie), so the search takes the steps a search through the texts
/// would, and reads a text only on a tie.
pub(crate) fn search_by_prefix<'t>(
    by_prefix: &[(u128, u32)],
    id: &str,
    id_of: impl Fn(u32) -> &'t str,
) -> Result<usize, usize> {
    let key = prefix(id);
    by_prefix.binary_search_by(|&(p, n)| p.cmp(&key).then_with(|| id_of(n).cmp(id)))
}

/// The first 16 bytes of `s`, zero-padded, big-endian: ordered like `s` as far as they go.
pub(crate) fn prefix(s: &str) -> u128 {
    let mut b = [0u8; 16];
    let n = s.len().min(16);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    u128::from_be_bytes(b)
}

/// Folds every unit not `kept` in parallel and merges them with the kept ones (into
/// `previous`'s memory, see `fold_all`). Gives `shared` back when two units hold lessons with
/// the same id (the partition would then not be the single pass).
fn fold_units<'a>(
    inp: &Inputs<'a>,
    shared: Shared<'a>,
    units: Vec<Vec<u32>>,
    single: bool,
    mut kept: Vec<Option<UnitOut>>,
    previous: Previous,
) -> Result<(Scored, Units<'a>), Box<Shared<'a>>> {
    let now = inp.corpus.now();
    kept.resize_with(units.len(), || None);
    // Largest first, so that the biggest unit does not start last and leave one thread alone;
    // one unit per job (`with_max_len`), or rayon hands a thread a run of the large units to
    // fold in a row while the other runs out of work. The merge takes the units back in
    // their own order.
    let size = |u: usize| -> usize {
        let members = |ai: &u32| inp.admitted[*ai as usize].members.len();
        units[u].iter().map(members).sum()
    };
    // Each size once (a key per comparison summed a unit's clusters some twenty times over);
    // the unit's number breaks ties, as the stable sort by size did.
    let mut by_size: Vec<(Reverse<usize>, usize)> = (0..units.len())
        .into_par_iter()
        .filter(|&u| kept[u].is_none())
        .map(|u| (Reverse(size(u)), u))
        .collect();
    by_size.par_sort_unstable();
    // Room for every lesson the units can found: a lesson is founded by a run of arrivals (one
    // member at least) or by an edit. The units move their lessons in as they end; the room
    // they never use is never touched (at a million experiences 473 000 lessons came from
    // 297 000 clusters, up to 72 from one, so a bound by clusters grew the vector, moving
    // every lesson in it again).
    let members: usize = by_size.iter().map(|&(Reverse(size), _)| size).sum();
    let room = Mutex::new(Vec::with_capacity(members + inp.decisions.len()));
    let folded: Vec<(usize, UnitOut)> = (by_size.into_par_iter())
        .map(|(_, u)| u)
        .with_max_len(1)
        .map(|u| {
            let events = events(inp, &units[u]);
            (u, fold_unit(inp, &shared, &events, utc_day(now), single, &room))
        })
        .collect();
    for (u, out) in folded {
        kept[u] = Some(out);
    }
    let outs: Vec<UnitOut> = kept
        .into_iter()
        .map(|o| o.expect("every unit folded or kept"))
        .collect();
    let folded = room.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut merged = Merged::new(outs, folded, previous);
    let Some(by_id) = merged.by_id() else {
        return Err(Box::new(shared));
    };
    let order: Vec<u32> = by_id.iter().map(|&(_, g)| g).collect();

    // Which `in_play` mentions named a lesson: one flag per mention, the experiences' lists
    // one after another in rank order, set and read by place where a hash set of a million
    // (experience, position) pairs was built and probed on every pass.
    let exps = &inp.corpus.experiences;
    let mut list_start = Vec::with_capacity(shared.in_play.len() + 1);
    let mut mentions = 0;
    for &i in &shared.in_play {
        list_start.push(mentions);
        mentions += exps[i as usize].in_play.len();
    }
    list_start.push(mentions);
    let mut found = vec![false; mentions];
    let mut lesson_of: Vec<Option<u32>> = vec![None; inp.candidates.len()];
    let mut base = 0;
    for out in &merged.units {
        let side = &out.side;
        for &(c, li) in &side.lesson_of {
            lesson_of[c as usize] = Some(base + li);
        }
        for &(rank, pos) in &side.found_in_play {
            found[list_start[rank as usize] + pos as usize] = true;
        }
        base += out.lessons.len() as u32;
    }
    let is_found = |rank: usize, pos: usize| found[list_start[rank] + pos];
    // Made when an id is first asked about: most experiences name only lessons found.
    let table = OnceLock::new();
    let is_lesson = |id: &str| merged.has_id(&by_id, table.get_or_init(|| PrefixTable::new(&by_id)), id);
    let unknown = unknown_in_play(inp, &shared.in_play, is_found, is_lesson);
    drop((by_id, table, found, list_start));
    let mut capped_notes = Sink::new();
    let capped = apply_caps(&mut merged, &inp.rules.policy, now, &mut capped_notes);
    // Lesson number → its place in ledger order.
    let mut new_index = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old as usize] = new as u32;
    }
    let units = Units {
        at: order.iter().map(|&g| merged.at[g as usize]).collect(),
        sides: (merged.units.iter_mut())
            .map(|u| std::mem::take(&mut u.side))
            .collect(),
        capped: capped.iter().map(|&g| new_index[g as usize]).collect(),
        single,
        shared,
        partition: units,
        capped_notes,
        unknown,
    };
    let scored = finish(inp, merged, &new_index, lesson_of);
    Ok((scored, units))
}

/// One warning per experience whose `in_play` names ids that were no lesson when it was
/// recorded (no unit found them). Those `is_lesson` knows by the end of the compile were
/// admitted later (`evidence.admitted_later`): the record names a lesson it cannot have had.
/// `found(rank, pos)`: a unit found the lesson that the `pos`-th id of the experience of `rank`
/// (in `in_play`) names.
fn unknown_in_play(
    inp: &Inputs,
    in_play: &[u32],
    found: impl Fn(usize, usize) -> bool + Sync,
    is_lesson: impl Fn(&str) -> bool + Sync,
) -> Vec<Diagnostic> {
    (in_play.par_iter().enumerate())
        .filter_map(|(rank, &i)| {
            let exp = &inp.corpus.experiences[i as usize];
            // Almost every list names only lessons: no set of the ids seen is needed for it.
            if (0..exp.in_play.len()).all(|pos| found(rank, pos)) {
                return None;
            }
            let mut seen = BTreeSet::new();
            let unknown: Vec<String> = (exp.in_play.iter().enumerate())
                .filter(|&(pos, id)| seen.insert(id.as_str()) && !found(rank, pos))
                .map(|(_, id)| id.clone())
                .collect();
            if unknown.is_empty() {
                return None;
            }
            let later: Vec<&str> = (unknown.iter().map(String::as_str)).filter(|id| is_lesson(id)).collect();
            let (n, listed) = (unknown.len(), short_list(&unknown, 3));
            let ids = plural(n, "id", "ids");
            let message = if later.is_empty() {
                format!("in_play names {ids} that {} no lesson: {listed}", if n == 1 { "is" } else { "are" })
            } else if later.len() == n {
                format!(
                    "in_play names {ids} of {} admitted only after it was recorded: {listed}",
                    if n == 1 { "a lesson" } else { "lessons" }
                )
            } else {
                format!(
                    "in_play names {ids} that {} no lesson when it was recorded: {listed} (admitted only later: {})",
                    if n == 1 { "was" } else { "were" },
                    short_list(&later, 3)
                )
            };
            let d = Diagnostic::new(codes::UNKNOWN_IN_PLAY, message)
                .subject(&*exp.id)
                .at(&exp.source);
            let d = if later.is_empty() {
                d
            } else {
                d.with("admitted_later", later)
            };
            Some(d.with("ids", unknown).experiences([&exp.id]))
        })
        .collect()
}

/// Folds one unit, its lessons moved to the end of `room` (`Held::Own`). With
/// `every_experience`, every experience with lessons in play is an event from the start, as in
/// the single pass, instead of being taken in.
fn fold_unit<'a>(
    inp: &'a Inputs<'a>,
    shared: &'a Shared<'a>,
    events: &Events,
    now_day: i64,
    every_experience: bool,
    room: &Mutex<Vec<Lesson>>,
) -> UnitOut {
    let mut fold = Fold {
        inp,
        shared,
        live: Vec::new(),
        by_id: HashMap::default(),
        current: FxMap::default(),
        lesson_of: Vec::new(),
        sink: Sink::new(),
        contradictions: BTreeMap::new(),
        mechanical: HashMap::default(),
        broken_fixes: HashMap::default(),
        fixed_errors: HashMap::default(),
        ending: FxMap::default(),
        found_in_play: Vec::new(),
        at: (Millis::MIN, 0, 0),
        pending: BinaryHeap::new(),
        decisions_taken: FxSet::default(),
        wanted: FxMap::default(),
    };
    // Claims a fix ends wait for the form the fixing experience learns, which may arrive
    // before them (at the same time).
    for &(_, _, _, ev) in events {
        let Event::Ended { candidate } = ev else {
            continue;
        };
        let c = &inp.candidates[candidate as usize];
        if let Some(end) = ended(inp, candidate)
            && let Some(key) = c.key()
        {
            let slot = fold.fixed_errors.entry((&*end.by, key)).or_default();
            slot.push(Fixed {
                candidate,
                domain: c.domain,
                successor: None,
                same_domain: false,
            });
        }
    }
    if every_experience {
        for (rank, &e) in shared.in_play.iter().enumerate() {
            let t = inp.corpus.experiences[e as usize].recorded_at;
            fold.pending.push(Reverse((t, TAKEN_EXPERIENCE, rank as u32)));
            fold.wanted.insert(rank as u32, Vec::new());
        }
    }
    let mut next = 0;
    loop {
        // The earlier of the next arrival or end and the next experience or decision taken in
        // (their own phases: keys never tie).
        let taken = fold.pending.peek().map(|&Reverse(key)| key);
        match events.get(next) {
            Some(&(t, phase, rank, ev)) if taken.is_none_or(|k| (t, phase, rank) < k) => {
                next += 1;
                fold.at = (t, phase, rank);
                match ev {
                    Event::Arrivals { cluster, from, to } => {
                        fold.arrivals(cluster, from as usize..to as usize, t)
                    }
                    Event::Ended { candidate } => fold.end(candidate, t),
                }
            }
            _ => {
                let Some((t, phase, rank)) = taken else { break };
                fold.pending.pop();
                fold.at = (t, phase, rank);
                if phase == TAKEN_EXPERIENCE {
                    fold.attribute(rank, t);
                } else {
                    fold.decide(&inp.decisions[rank as usize]);
                }
            }
        }
    }
    for i in 0..fold.live.len() {
        fold.settle(i as u32, now_day);
    }
    fold.demotions();
    // Candidates of an edited lesson belong to its new wording.
    let lesson_of = fold
        .lesson_of
        .iter()
        .map(|&(c, li)| (c, fold.latest(li)))
        .collect();
    for l in &mut fold.live {
        let mut evidence = std::mem::take(&mut l.evidence);
        evidence.sort_unstable_by(|a, b| a.0.cmp(b.0));
        evidence.dedup_by(|a, b| a.0 == b.0);
        l.lesson.evidence = evidence.iter().map(|&(id, _)| id.clone()).collect();
        l.lesson.projects = std::mem::take(&mut l.projects)
            .iter()
            .map(|s| s.to_string())
            .collect();
        l.lesson.reinforcement = evidence.len() as u32;
        exact_history(&mut l.lesson.history);
    }
    // Moved once, into the pass's one vector of lessons, where a vector of the unit's own took
    // them first and `finish` moved them again into a second vector of them all (both faulted
    // in afresh, 150 MB each at a million experiences).
    let lessons = {
        let mut room = room.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let start = room.len() as u32;
        room.extend(fold.live.into_iter().map(|l| l.lesson));
        start..room.len() as u32
    };
    UnitOut {
        lessons: Held::Own(lessons),
        side: Side {
            lesson_of,
            contradictions: fold.contradictions,
            sink: fold.sink,
            found_in_play: fold.found_in_play,
        },
    }
}

/// At most `caps.active_lessons` active lessons per (scope, domain), pinned ones exempt.
/// Returns the lessons (numbers) it superseded.
fn apply_caps(merged: &mut Merged, policy: &crate::policy::Policy, now: Millis, sink: &mut Sink) -> Vec<u32> {
    let mut capped = Vec::new();
    let cap = policy.caps.active_lessons;
    // (scope, domain) → (pinned active lessons, the other active lessons); only the groups
    // over the cap take their names out of the lessons. A hash map, which reads each lesson's
    // scope and domain once where a tree compared them at every level; the few groups over
    // the cap are put in (scope, domain) order below.
    let mut groups: FxMap<(&str, &str), (usize, Vec<u32>)> = FxMap::default();
    for g in 0..merged.at.len() as u32 {
        let l = merged.get(g);
        if l.status == Status::Active {
            let slot = groups.entry((&l.scope, &l.domain)).or_default();
            if l.pinned {
                slot.0 += 1;
            } else {
                slot.1.push(g);
            }
        }
    }
    let mut over: Vec<_> = (groups.into_iter())
        .filter(|(_, (pinned, ids))| ids.len() > cap.saturating_sub(*pinned))
        .collect();
    over.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let over: Vec<(String, String, usize, Vec<u32>)> = (over.into_iter())
        .map(|((scope, domain), (pinned, ids))| (scope.to_string(), domain.to_string(), pinned, ids))
        .collect();
    for (scope, domain, pinned, mut ids) in over {
        let room = cap.saturating_sub(pinned);
        ids.sort_by(|&a, &b| {
            let (la, lb) = (merged.get(a), merged.get(b));
            lb.confidence.cmp(&la.confidence).then_with(|| la.id.cmp(&lb.id))
        });
        let dropped: Vec<u32> = ids.split_off(room);
        let names: Vec<String> = dropped.iter().map(|&g| merged.get(g).id.clone()).collect();
        for &g in &dropped {
            supersede(merged.get_mut(g), now, None, CAPPED);
        }
        capped.extend(dropped.iter().copied());
        sink.push(
            Diagnostic::new(
                codes::CAP_EXCEEDED,
                format!(
                    "{} active lessons in {scope} / {domain} exceed the cap of {cap}; {} lowest-confidence superseded",
                    ids.len() + dropped.len() + pinned,
                    dropped.len()
                ),
            )
            .subject(format!("{scope}/{domain}"))
            .domain(&domain)
            .with("cap", cap)
            .with("superseded", names),
        );
    }
    capped
}

/// Which lessons are rules, and the lessons in id order (lesson `g` at `new_index[g]`): a
/// second pass's in `merged.previous`'s memory, a first pass's in `merged.folded`'s.
fn finish(inp: &Inputs, merged: Merged, new_index: &[u32], lesson_of: Vec<Option<u32>>) -> Scored {
    let min = inp.min_reinforcement;
    let rule = |l: &Lesson| l.status == Status::Active && (l.reinforcement >= min || l.blessed);
    let Merged {
        units,
        folded: mut lessons,
        previous,
        ..
    } = merged;
    let Previous { lessons: old, places } = previous;
    // Each folded lesson's place in ledger order, by its place in `folded`; and a kept
    // lesson's by its old place.
    let mut to_of_folded = vec![0u32; lessons.len()];
    let kept = units.iter().any(|u| matches!(u.lessons, Held::Kept(_)));
    let mut to = vec![DROPPED; if kept { old.len() } else { 0 }];
    let mut g = 0;
    for unit in &units {
        match &unit.lessons {
            Held::Own(range) => {
                for slot in &mut to_of_folded[range.start as usize..range.end as usize] {
                    *slot = new_index[g];
                    g += 1;
                }
            }
            Held::Kept(range) => {
                for &place in &places[range.start as usize..range.end as usize] {
                    to[place as usize] = new_index[g];
                    g += 1;
                }
            }
        }
    }
    drop((units, places));
    let lessons = if kept {
        // A second pass: the kept lessons take their new places among the old ones (they
        // are in id order before and after), the new ones the rest (`place_in`). (The
        // dropped lessons' `rule` is set too: one pass in memory order, on every core.)
        let mut old = old;
        old.par_iter_mut().for_each(|l| l.rule = rule(l));
        lessons.par_iter_mut().for_each(|l| l.rule = rule(l));
        let fresh = to_of_folded.into_iter().zip(lessons).collect();
        place_in(old, &to, fresh)
    } else {
        // Every lesson was folded: they take their places in their own memory, each moved
        // once, where a second vector of them all was faulted in afresh (150 MB at a million
        // experiences) and both were held. A second pass's old lessons are freed on every
        // core.
        old.into_par_iter().for_each(drop);
        crate::bulk::permute(&mut lessons, to_of_folded);
        lessons.par_iter_mut().for_each(|l| l.rule = rule(l));
        lessons
    };
    let lesson_of = lesson_of
        .into_iter()
        .map(|o| o.map(|g| new_index[g as usize]))
        .collect();
    Scored { lessons, lesson_of }
}

/// `place_in`'s place for an item that is dropped.
const DROPPED: u32 = u32::MAX;

/// `items` with each put at its place `to[i]` (or dropped: `DROPPED`) and each `fresh` item at
/// its place, in `items`' memory: the places of the items kept must ascend (they keep their
/// order), and the places of both together must be `0..n`. An item moves once to close the
/// gaps, then at most once more (a swap) from the end back: a second pass's kept lessons,
/// where gathering them into their units and back moved each four times.
fn place_in<T: Send>(mut items: Vec<T>, to: &[u32], mut fresh: Vec<(u32, T)>) -> Vec<T> {
    // The dropped items are moved out (into a vector of their number: one that grew moved
    // them again) and freed on every core: freeing a refolded lesson's strings and history
    // one by one was most of this step, on one core while the others waited.
    let mut dropped = Vec::with_capacity(to.iter().filter(|&&t| t == DROPPED).count());
    let mut i = 0;
    dropped.extend(items.extract_if(.., |_| {
        i += 1;
        to[i - 1] == DROPPED
    }));
    dropped.into_par_iter().for_each(drop);
    let kept_to: Vec<u32> = to.iter().copied().filter(|&t| t != DROPPED).collect();
    assert!(kept_to.is_sorted(), "the kept items keep their order");
    fresh.sort_unstable_by_key(|&(t, _)| t);
    let fresh_to: Vec<u32> = fresh.iter().map(|&(t, _)| t).collect();
    let (mut kept, mut unplaced) = (items.len(), fresh.len());
    let total = kept + unplaced;
    // Where each fresh item is (`at`), and which fresh item is at a place (`whose`), while the
    // fresh items not yet placed fill the places between the kept ones not yet placed and the
    // place being filled.
    let mut at: Vec<u32> = (kept as u32..total as u32).collect();
    let mut whose = vec![0u32; total];
    for (f, w) in whose[kept..].iter_mut().enumerate() {
        *w = f as u32;
    }
    items.extend(fresh.into_iter().map(|(_, item)| item));
    // From the last place back: it takes the last kept item or the last fresh one, and the
    // fresh item that was there takes the place the item came from.
    for q in (0..total).rev() {
        if unplaced == 0 {
            break;
        }
        let from = if kept > 0 && kept_to[kept - 1] as usize == q {
            kept -= 1;
            kept
        } else {
            unplaced -= 1;
            assert_eq!(fresh_to[unplaced] as usize, q, "every place is taken once");
            at[unplaced] as usize
        };
        if from != q {
            items.swap(from, q);
            let moved = whose[q];
            at[moved as usize] = from as u32;
            whose[from] = moved;
        }
    }
    // The kept items before the first fresh one are at their places already.
    assert!(
        kept == 0 || kept_to[kept - 1] as usize == kept - 1,
        "every place is taken once"
    );
    items
}

/// A claim a fix ends (its candidate), waiting for its end (`Fold::end`), and the lesson the
/// form the fixing experience learned on the key joined, once that arrives: the lesson that
/// replaced the claim's.
struct Fixed {
    candidate: u32,
    domain: Name,
    successor: Option<u32>,
    /// The successor is in the claim's own domain.
    same_domain: bool,
}

/// One unit's fold state.
struct Fold<'a> {
    inp: &'a Inputs<'a>,
    shared: &'a Shared<'a>,
    live: Vec<Live<'a>>,
    by_id: HashMap<String, u32>,
    /// The current lesson generation of each admitted cluster.
    current: FxMap<u32, u32>,
    /// (candidate, lesson) for every member that joined or founded a lesson.
    lesson_of: Vec<(u32, u32)>,
    sink: Sink,
    contradictions: BTreeMap<u32, Vec<Id>>,
    /// The active mechanical lessons per (scope, operation key): one fix, in each domain it was
    /// learned in.
    mechanical: HashMap<(String, String), Vec<u32>>,
    /// Mechanical lessons whose fix an experience ran and saw fail, by (experience id, key):
    /// the form that experience learned on the key, arriving next, supersedes them.
    broken_fixes: HashMap<(&'a str, String), Vec<u32>>,
    /// Claims a fix ends, by (fixing experience id, key).
    fixed_errors: HashMap<(&'a str, &'a str), Vec<Fixed>>,
    /// Candidates whose claim a fix ends, and the lesson each joined.
    ending: FxMap<u32, u32>,
    found_in_play: Vec<(u32, u32)>,
    /// The key (time, phase, rank) of the event being folded.
    at: (Millis, u8, u32),
    /// Experiences and decisions taken in and not yet folded, as (time, phase, rank): an
    /// experience's rank (`TAKEN_EXPERIENCE`) or a decision's journal index (`TAKEN_DECISION`).
    pending: BinaryHeap<Reverse<(Millis, u8, u32)>>,
    /// The decisions taken in (a lesson id can be founded again after its supersession).
    decisions_taken: FxSet<u32>,
    /// Per experience taken in and not yet folded (rank), the `in_play` positions that name a
    /// lesson of this unit (first mentions), each with the lesson its id names (`by_id`):
    /// attribution visits those, not the whole list, which may name hundreds of lessons of
    /// other units.
    wanted: FxMap<u32, Vec<(u32, u32)>>,
}

impl<'a> Fold<'a> {
    fn policy(&self) -> &'a crate::policy::Policy {
        &self.inp.rules.policy
    }

    /// Members of admitted cluster `ai` recorded at `t` join its live lesson, or found one.
    fn arrivals(&mut self, ai: u32, run: std::ops::Range<usize>, t: Millis) {
        let inp = self.inp;
        let members = &inp.admitted[ai as usize].members[run];
        // Charge the days before this arrival first: the live lesson may have decayed past the
        // floor, and candidates recorded after its supersession found a new lesson.
        if let Some(&cur) = self.current.get(&ai) {
            self.settle(cur, utc_day(t) - 1);
        }
        let live = self
            .current
            .get(&ai)
            .copied()
            .filter(|&l| !self.live[l as usize].frozen());
        let li = match live {
            Some(li) => li,
            None => self.found(ai, members, t),
        };
        let day = utc_day(t);
        self.settle(li, day - 1);
        let mut joined: Vec<&Id> = Vec::new();
        // Experiences a person vouches for that make the lesson blessed now: the history says
        // why a lesson seen once is a rule.
        let mut blessing: Vec<Id> = Vec::new();
        for &m in members {
            self.lesson_of.push((m, li));
            let c = &inp.candidates[m as usize];
            match c.source {
                Source::Experience(ei) => {
                    joined.push(&c.record_id);
                    self.add_own_support(li, m, ei);
                }
                Source::Claim(ci) => {
                    for id in &inp.corpus.claims[ci as usize].evidence {
                        joined.push(id);
                        self.add_support(li, id, None);
                    }
                }
            }
            // Newest first (DESIGN §5.1), each reason once, where it was last given: members
            // arrive oldest first, and a member's own reasons are newest first already.
            let l = &mut self.live[li as usize].lesson;
            for r in c.reasons().iter().rev() {
                if let Some(at) = l.reasons.iter().position(|x| x == r) {
                    l.reasons.remove(at);
                }
                l.reasons.insert(0, r.clone());
            }
            if c.blessed() && !l.blessed {
                blessing.push(c.record_id.clone());
            }
        }
        self.replace_broken_fixes(li, members, t);
        self.await_or_name_fixes(li, members);
        let conf = clamped(self.policy().confidence.admitted);
        let l = &mut self.live[li as usize];
        if l.lesson.status == Status::Claimed && !l.evidence.is_empty() {
            l.lesson.status = Status::Active;
            l.lesson.confidence = conf;
            l.lesson.history.push(entry(
                t,
                Step::Admitted,
                conf,
                owned(&joined),
                Some(CLAIM_GAINED_EVIDENCE.into()),
            ));
        } else if !joined.is_empty() && l.lesson.admitted_at != t {
            let c = l.lesson.confidence;
            l.lesson
                .history
                .push(entry(t, Step::Joined, c, owned(&joined), None));
        }
        if !blessing.is_empty() {
            let l = &mut self.live[li as usize].lesson;
            l.blessed = true;
            let c = l.confidence;
            l.history
                .push(entry(t, Step::Blessed, c, blessing.into(), Some(BLESSED.into())));
        }
        self.mark_used(li, day);
        self.rescope(li, t);
    }

    /// DESIGN §6 supersede: a mechanical lesson whose fix failed in an experience that then
    /// made another form work on the same key is superseded by the lesson `li` that form
    /// joined, whatever either's scope (the contradiction may already have put it below the
    /// floor at this instant; it then names its successor too).
    fn replace_broken_fixes(&mut self, li: u32, members: &[u32], t: Millis) {
        if self.broken_fixes.is_empty() {
            return;
        }
        for &m in members {
            let c = &self.inp.candidates[m as usize];
            let (Some(key), Some(_)) = (c.key(), c.working()) else {
                continue;
            };
            let Some(olds) = self.broken_fixes.remove(&(&*c.record_id, key.to_string())) else {
                continue;
            };
            let new_id = self.live[li as usize].lesson.id.clone();
            for old in olds {
                if old == li {
                    continue;
                }
                let o = &mut self.live[old as usize];
                let reason = "its fix failed and another form of this operation now works";
                if !o.supersede(t, Some(new_id.clone()), reason) && !o.name_successor(t, &new_id) {
                    continue;
                }
                let old_id = self.live[old as usize].lesson.id.clone();
                self.live[li as usize].lesson.supersedes.get_or_insert(old_id);
            }
        }
    }

    /// Members whose claim a fix ends: the lesson `li` they joined waits for the end
    /// (`Fold::end`). Members that are the form a fixing experience learned on its key: `li`
    /// is the successor of the claims waiting for it, the first in their own domain, else
    /// the first.
    fn await_or_name_fixes(&mut self, li: u32, members: &[u32]) {
        if self.fixed_errors.is_empty() {
            return;
        }
        let inp = self.inp;
        for &m in members {
            if ended(inp, m).is_some() {
                self.ending.insert(m, li);
            }
        }
        for &m in members {
            let c = &inp.candidates[m as usize];
            let (Some(key), Some(_)) = (c.key(), c.working()) else {
                continue;
            };
            let Some(waiting) = self.fixed_errors.get_mut(&(&*c.record_id, key)) else {
                continue;
            };
            for w in waiting {
                let same = w.domain == c.domain;
                if w.successor.is_none() || (same && !w.same_domain) {
                    w.successor = Some(li);
                    w.same_domain = same;
                }
            }
        }
    }

    /// The claim behind candidate `m` stopped being true (a later session fixed the error it
    /// warns about, or showed the fix it claims): its lesson is superseded by the form that
    /// session learned on the key, if it learned one, and the history cites the session.
    fn end(&mut self, m: u32, t: Millis) {
        let Some(end) = ended(self.inp, m) else {
            return;
        };
        let Some(li) = self.ending.remove(&m) else {
            return;
        };
        let claim = &self.inp.candidates[m as usize];
        let key = claim.key().unwrap_or_default();
        // A watch claim warned of an error the session fixed; a do-claim was the fix it showed.
        let reason = if claim.kind == Kind::Do {
            DEMONSTRATED
        } else {
            FIXED
        };
        let mut successor = None;
        if let Some(waiting) = self.fixed_errors.get_mut(&(&*end.by, key)) {
            if let Some(i) = waiting.iter().position(|w| w.candidate == m) {
                successor = waiting.swap_remove(i).successor;
            }
            if waiting.is_empty() {
                self.fixed_errors.remove(&(&*end.by, key));
            }
        }
        // An edit moved the lesson to its new wording.
        let li = self.latest(li);
        self.settle(li, utc_day(t) - 1);
        let by = successor.map(|s| self.live[s as usize].lesson.id.clone());
        if !self.live[li as usize].supersede(t, by, reason) {
            return;
        }
        let l = &mut self.live[li as usize].lesson;
        if let Some(h) = l.history.last_mut() {
            h.experiences = Ids::One(end.by.clone());
        }
        let old_id = l.id.clone();
        if let Some(s) = successor {
            self.live[s as usize].lesson.supersedes.get_or_insert(old_id);
        }
    }

    /// Founds a new lesson for admitted cluster `ai` from the members recorded at `t`.
    fn found(&mut self, ai: u32, members: &[u32], t: Millis) -> u32 {
        let inp = self.inp;
        let cluster = &inp.clusters[inp.admitted[ai as usize].cluster as usize];
        let cand = inp.candidates;
        let (founder, wording, id) = founding(inp, cluster, members);
        let claimed = members.iter().all(|&m| match cand[m as usize].source {
            Source::Claim(ci) => inp.corpus.claims[ci as usize].evidence.is_empty(),
            Source::Experience(_) => false,
        });
        let conf = &self.policy().confidence;
        let (status, confidence) = if claimed {
            (Status::Claimed, clamped(conf.claimed))
        } else {
            (Status::Active, clamped(conf.admitted))
        };
        let previous = self
            .current
            .get(&ai)
            .map(|&l| self.live[l as usize].lesson.id.clone());
        let working = members
            .iter()
            .find_map(|&m| cand[m as usize].working().map(str::to_string));
        let lesson = Lesson {
            id: id.clone(),
            kind: cluster.kind,
            text: wording.to_string(),
            domain: cluster.domain.clone(),
            scope: "global".into(),
            operation_key: cluster.key.clone(),
            status,
            reason: None,
            confidence,
            reinforcement: 0,
            rule: false,
            pinned: false,
            blessed: false,
            evidence: Vec::new(),
            projects: Vec::new(),
            superseded_by: None,
            supersedes: previous.clone(),
            founder,
            cluster: cluster.id.clone(),
            admitted_at: t,
            last_used_day: utc_day(t),
            working,
            reasons: Vec::new(),
            history: vec![entry(
                t,
                if claimed { Step::Claimed } else { Step::Admitted },
                confidence,
                members
                    .iter()
                    .map(|&m| cand[m as usize].record_id.clone())
                    .collect(),
                previous.map(|p| format!("after {p}").into()),
            )],
        };
        let li = self.live.len() as u32;
        let domain = self.shared.active_days.of(&lesson.domain);
        let days = domain.map_or(&[][..], |d| d.of(&lesson.scope));
        self.live.push(Live {
            lesson,
            domain,
            evidence: Vec::new(),
            projects: Vec::new(),
            days,
            settled_through: utc_day(t),
            demoted_to: None,
            last_confirm_project: None,
        });
        self.take_in(id, li);
        self.current.insert(ai, li);
        li
    }

    /// Lesson `li`, just founded or edited into existence, is known by its `id` (an id founded
    /// again keeps naming its first lesson, as `latest` expects), and the experiences and
    /// decisions after the current event that name `id` join this unit's events. The ones
    /// before could not see it.
    fn take_in(&mut self, id: String, li: u32) {
        let shared = self.shared;
        let bits = digest::lesson_id_bits(&id);
        debug_assert!(bits.is_some(), "a folded lesson's id is an identity hash: {id}");
        let mentions = bits
            .and_then(|b| shared.named.get(&b))
            .map_or(&[][..], |&(from, to)| {
                &shared.mentions[from as usize..to as usize]
            });
        let decided = shared.decided.get(id.as_str()).into_iter().flatten();
        let named = *self.by_id.entry(id).or_insert(li);
        for &Mention { rank, pos, at: t } in mentions {
            // An experience folded already is behind `at`, so an entry means it is pending.
            if (t, 0, rank) > self.at {
                // The lesson goes with the mention: attribution then needs neither the id
                // nor a lookup by it (`by_id` maps an id to one lesson for good).
                match self.wanted.entry(rank) {
                    Entry::Occupied(mut e) => e.get_mut().push((pos, named)),
                    Entry::Vacant(e) => {
                        e.insert(vec![(pos, named)]);
                        self.pending.push(Reverse((t, TAKEN_EXPERIENCE, rank)));
                    }
                }
            }
        }
        for &i in decided {
            let key = (self.inp.decisions[i as usize].at, TAKEN_DECISION, i);
            if key > self.at && self.decisions_taken.insert(i) {
                self.pending.push(Reverse(key));
            }
        }
    }

    /// An experience joins a lesson's evidence (a supporting candidate or a confirmation).
    /// `hint`: the experience the support probably is (see `experience`).
    fn add_support(&mut self, li: u32, exp_id: &'a Id, hint: Option<u32>) {
        let project = self.experience(exp_id, hint).and_then(|e| e.project.as_deref());
        let l = &mut self.live[li as usize];
        // A repeated id brings the same project again: no need to check it is new.
        l.evidence.push((exp_id, hint));
        if let Some(p) = project {
            add_project(&mut l.projects, p);
        }
    }

    /// `add_support` for candidate `m`, drawn from experience `ei`. When that experience is
    /// the one its id names (`Shared::own_id`), the experience is not read at all: the
    /// candidate's project names the same text (its place in `Inputs::names`), where each
    /// experience and its own copy were two cache misses a support.
    fn add_own_support(&mut self, li: u32, m: u32, ei: u32) {
        let c: &'a Candidate = &self.inp.candidates[m as usize];
        if !self.shared.own(m) {
            return self.add_support(li, &c.record_id, Some(ei));
        }
        let l = &mut self.live[li as usize];
        l.evidence.push((&c.record_id, Some(ei)));
        if let Some(p) = c.project {
            add_project(&mut l.projects, self.inp.names.get(p));
        }
    }

    /// The experience an id names. `hint`, the index it probably has (a candidate's own
    /// experience), saves a lookup in a million-entry map when ids are unique, and the map
    /// itself when every lookup has one that holds.
    fn experience(&self, id: &str, hint: Option<u32>) -> Option<&'a Experience> {
        let corpus: &'a Corpus = self.inp.corpus;
        if let Some(h) = hint
            && self.shared.unique_ids
        {
            let e = &corpus.experiences[h as usize];
            // A candidate's record id is its experience's own text: told equal by address
            // without reading it (another cache miss per supporting experience).
            if std::ptr::eq(&*e.id, id) || *e.id == *id {
                return Some(e);
            }
        }
        self.shared.exp_index.find(&corpus.experiences, id)
    }

    /// Recomputes scope from the supporting projects (DESIGN §6) and enforces one active
    /// mechanical lesson per (scope, key).
    fn rescope(&mut self, li: u32, t: Millis) {
        let day = utc_day(t);
        let l = &self.live[li as usize];
        let project = match (l.demoted_to, l.projects.len()) {
            (Some(p), _) => Some(p),
            (None, 1) => l.projects.first().copied(),
            (None, _) => None,
        };
        // Compared without building the string: this runs on every arrival.
        let unchanged = match project {
            Some(p) => l.lesson.scope.strip_prefix("project:") == Some(p),
            None => l.lesson.scope == "global",
        };
        if !unchanged {
            let scope = project.map_or_else(|| "global".to_string(), project_scope);
            self.settle(li, day - 1);
            let l = &mut self.live[li as usize];
            let was_project = l.lesson.scope.starts_with("project:");
            l.lesson.scope = scope;
            l.days = l.domain.map_or(&[][..], |d| d.of(&l.lesson.scope));
            if was_project && l.lesson.scope == "global" && l.lesson.history.len() > 1 {
                let c = l.lesson.confidence;
                l.lesson.history.push(entry(
                    t,
                    Step::Promoted,
                    c,
                    Ids::NONE,
                    Some("supported from two or more projects".into()),
                ));
            }
        }
        self.one_mechanical_per_key(li, t);
    }

    /// One active mechanical lesson per (scope, key): of two, the newer supersedes the older.
    /// "One" counts fixes, not domains: a record tagged with two domains (`nextjs`,
    /// `typescript`) makes the same fix a lesson in each, and those share the slot — the same
    /// working form does not replace itself. A different form replaces all of them.
    fn one_mechanical_per_key(&mut self, li: u32, t: Millis) {
        let l = &self.live[li as usize].lesson;
        let (Some(key), Some(working), Status::Active) = (&l.operation_key, &l.working, l.status) else {
            return;
        };
        let (slot, working) = ((l.scope.clone(), key.clone()), working.clone());
        // Charge the days before this one first: a fix replaced today was still active, and
        // unused, on the days since it was last settled (and may have decayed past the floor).
        for o in self.mechanical.get(&slot).cloned().unwrap_or_default() {
            self.settle(o, utc_day(t) - 1);
        }
        let working = Some(&working);
        let (mut kept, others): (Vec<u32>, Vec<u32>) =
            (self.mechanical.get(&slot).into_iter().flatten().copied())
                .filter(|&o| {
                    let ol = &self.live[o as usize].lesson;
                    o != li && ol.status == Status::Active && ol.scope == slot.0
                })
                .partition(|&o| self.live[o as usize].lesson.working.as_ref() == working);
        kept.push(li);
        for o in others {
            // The newest of the kept twins stands for them against an older or newer form.
            let newest = kept.iter().copied().max_by_key(|&k| self.age(k)).unwrap_or(li);
            if self.age(o) <= self.age(newest) {
                self.replace(o, newest, t);
            } else {
                for k in std::mem::take(&mut kept) {
                    self.replace(k, o, t);
                }
                kept.push(o);
            }
        }
        self.mechanical.insert(slot, kept);
    }

    /// Which of two lessons is newer: admitted later, ties by id.
    fn age(&self, li: u32) -> (Millis, &str) {
        let l = &self.live[li as usize].lesson;
        (l.admitted_at, l.id.as_str())
    }

    /// `old` gives way to `new`, another form of its operation that now works.
    fn replace(&mut self, old: u32, new: u32, t: Millis) {
        let new_id = self.live[new as usize].lesson.id.clone();
        // Not "its fix failed": the old fix may still work; the slot holds one fix (DESIGN §6).
        let reason =
            "a newer fix on this operation key replaces it (one active mechanical lesson per scope and key)";
        self.live[old as usize].supersede(t, Some(new_id), reason);
        let old_id = self.live[old as usize].lesson.id.clone();
        self.live[new as usize].lesson.supersedes.get_or_insert(old_id);
    }

    /// Charges decay for the active, unused days after the last settled day through `day`.
    fn settle(&mut self, li: u32, day: i64) {
        let idle = self.policy().confidence.idle_day;
        let floor = self.policy().confidence.supersede_below;
        let l = &self.live[li as usize];
        if day <= l.settled_through {
            return;
        }
        if l.lesson.status != Status::Active || l.lesson.pinned || idle <= 0 {
            self.live[li as usize].settled_through = day;
            return;
        }
        let days = between(l.days, l.settled_through, day);
        let n = days.len() as i32;
        let conf = l.lesson.confidence;
        if n == 0 {
            self.live[li as usize].settled_through = day;
            return;
        }
        if conf - n * idle < floor {
            // The k-th idle active day takes it below the floor.
            let k = ((conf - floor) / idle + 1).clamp(1, n);
            let when = days[(k - 1) as usize];
            let l = &mut self.live[li as usize];
            l.lesson.confidence = (conf - k * idle).max(0);
            l.settled_through = day;
            let t = when * 86_400_000;
            let c = l.lesson.confidence;
            l.lesson
                .history
                .push(entry(t, Step::Decayed, c, Ids::NONE, Some(days_without_use(k))));
            l.supersede(t, None, DECAYED);
        } else {
            let l = &mut self.live[li as usize];
            l.lesson.confidence = conf - n * idle;
            l.settled_through = day;
            // The history says where the confidence went between two events.
            if let Some(h) = l.lesson.history.last_mut() {
                h.idle_days = h.idle_days.saturating_add(u16::try_from(n).unwrap_or(u16::MAX));
                h.idle_confidence = i16::try_from(l.lesson.confidence).unwrap_or(i16::MAX);
            }
        }
    }

    fn mark_used(&mut self, li: u32, day: i64) {
        self.settle(li, day - 1);
        let l = &mut self.live[li as usize];
        l.settled_through = l.settled_through.max(day);
        l.lesson.last_used_day = l.lesson.last_used_day.max(day);
    }

    /// Credits or blames the lessons of this unit that an experience had in play (DESIGN §6
    /// attribution). Ids no unit holds are reported after the fold (`unknown_in_play`).
    fn attribute(&mut self, rank: u32, t: Millis) {
        let inp = self.inp;
        let ei = self.shared.in_play[rank as usize];
        let exp = &inp.corpus.experiences[ei as usize];
        let verdict = &inp.verdicts[ei as usize];
        let day = utc_day(t);
        // Every lesson of this unit it names was founded before it, and took it in then.
        // (A position names one id, so one lesson: sorting the pairs sorts the positions.)
        let mut positions = self.wanted.remove(&rank).unwrap_or_default();
        positions.sort_unstable();
        positions.dedup();
        // Each lesson once, however many of the ids it was known by the experience lists.
        let mut attributed: Vec<u32> = Vec::with_capacity(positions.len());
        for (pos, named) in positions {
            self.found_in_play.push((rank, pos));
            // An edit passes the lesson on to its new wording: agents see the old id until the
            // next compile writes the new one.
            let li = self.latest(named);
            if attributed.contains(&li) {
                continue;
            }
            attributed.push(li);
            // Decay is charged lazily, so settle the days before this one first: the lesson
            // may have crossed the floor (and frozen) before this experience.
            self.settle(li, day - 1);
            if self.live[li as usize].frozen() {
                continue;
            }
            self.mark_used(li, day);
            match self.effect(&self.live[li as usize], rank, exp, verdict) {
                Effect::Confirms => self.confirm(li, ei, t),
                Effect::Contradicts => self.contradict(li, exp, t),
                Effect::Neither(_) => {}
            }
        }
    }

    /// What the experience of `rank` did to `l`, which it had in play; calls on the lesson's
    /// key come from the rank's cached call forms, the working form matched by fingerprint first.
    fn effect<'s>(&'s self, live: &'s Live, rank: u32, exp: &'s Experience, v: &Verdict) -> Effect {
        let (l, policy) = (&live.lesson, self.policy());
        let in_domain = self.shared.in_domain(rank, live.domain);
        let working = l.working.as_ref().map(|w| (fingerprint(w), w));
        let calls = move |k: &'s str| {
            (self.shared.calls_on(rank, exp, k, policy)).map(move |(op, form)| {
                let runs_working = working.is_some_and(|(print, w)| {
                    (form.working == print || form.placeless == print)
                        && runs_form(&policy.call_form(&op.args.value()), w, policy)
                });
                (op, runs_working)
            })
        };
        effect(l, exp, v, in_domain, policy, calls)
    }

    fn confirm(&mut self, li: u32, ei: u32, t: Millis) {
        let exp = &self.inp.corpus.experiences[ei as usize];
        let conf = self.policy().confidence.clone();
        self.add_support(li, &exp.id, Some(ei));
        let l = &mut self.live[li as usize];
        if l.lesson.status == Status::Claimed {
            l.lesson.status = Status::Active;
            l.lesson.confidence = clamped(conf.admitted);
            l.lesson.history.push(entry(
                t,
                Step::Admitted,
                l.lesson.confidence,
                Ids::One(exp.id.clone()),
                Some(CLAIM_GAINED_EVIDENCE.into()),
            ));
        } else {
            l.lesson.confidence = clamped(l.lesson.confidence + conf.confirmation);
            let c = l.lesson.confidence;
            l.lesson
                .history
                .push(entry(t, Step::Confirmed, c, Ids::One(exp.id.clone()), None));
        }
        if let Some(p) = exp.project.as_deref() {
            if l.demoted_to.is_some_and(|d| d != p) {
                l.demoted_to = None;
            }
            l.last_confirm_project = Some(p);
        }
        self.rescope(li, t);
    }

    fn contradict(&mut self, li: u32, exp: &'a Experience, t: Millis) {
        let conf = self.policy().confidence.clone();
        let l = &mut self.live[li as usize];
        l.lesson.confidence = clamped(l.lesson.confidence - conf.contradiction);
        let c = l.lesson.confidence;
        l.lesson
            .history
            .push(entry(t, Step::Contradicted, c, Ids::One(exp.id.clone()), None));
        self.contradictions.entry(li).or_default().push(exp.id.clone());
        let l = &self.live[li as usize].lesson;
        if let (Some(key), Some(_)) = (&l.operation_key, &l.working) {
            let slot = (&*exp.id, key.clone());
            self.broken_fixes.entry(slot).or_default().push(li);
        }
        // A global lesson contradicted from a third project goes back to the project that
        // last confirmed it.
        let l = &self.live[li as usize];
        if l.lesson.scope == "global"
            && let Some(p) = exp.project.as_deref()
            && l.projects.len() >= 2
            && l.projects.binary_search(&p).is_err()
        {
            let back_to = l.last_confirm_project.or_else(|| {
                let newest = l
                    .evidence
                    .iter()
                    .filter_map(|&(id, hint)| self.experience(id, hint))
                    .filter(|e| e.project.is_some())
                    .max_by_key(|e| (e.recorded_at, &e.id));
                newest.and_then(|e| e.project.as_deref())
            });
            if let Some(to) = back_to {
                let l = &mut self.live[li as usize];
                l.demoted_to = Some(to);
                l.lesson.history.push(entry(
                    t,
                    Step::Demoted,
                    c,
                    Ids::One(exp.id.clone()),
                    Some(format!("to project:{to}").into()),
                ));
                // S006 waits for the end of the fold (`demotions`): a confirmation from
                // another project may make the lesson global again before then.
                self.rescope(li, t);
            }
        }
        if self.live[li as usize].lesson.confidence < conf.supersede_below {
            self.live[li as usize].supersede(t, None, CONTRADICTED);
        }
    }

    /// S006 for each active lesson whose demotion stands when the fold ends. One that a
    /// confirmation from another project made global again is global in the ledger, and a note
    /// saying it was demoted (asking for that very confirmation) would contradict it every night
    /// after; one superseded since is frozen where it is, and S001 says why.
    fn demotions(&mut self) {
        for l in &self.live {
            let (Some(to), Status::Active) = (l.demoted_to, l.lesson.status) else {
                continue;
            };
            // The contradiction that demoted it, and its day (an edit's new wording has it in
            // the old wording's history, and its note names neither).
            let by = (l.lesson.last(Step::Demoted)).map_or(&[][..], |h| &h.experiences[..]);
            let on = l.lesson.last_day(Step::Demoted);
            let mut d = Diagnostic::new(
                codes::DEMOTED,
                format!(
                    "global lesson contradicted from a third project was demoted to project:{to}{}",
                    on.as_ref().map_or(String::new(), |on| format!(" on {on}"))
                ),
            )
            .subject(l.lesson.id.clone())
            .domain(l.lesson.domain.clone())
            .with("lesson", l.lesson.id.clone())
            .with("project", to)
            .experiences(by);
            if let Some(on) = on {
                d = d.with("demoted_on", on);
            }
            self.sink.push(d);
        }
    }

    fn decide(&mut self, d: &Decision) {
        let Some(&li) = self.by_id.get(&d.target) else {
            // Another unit's lesson; bless targets experiences (applied before the pipeline);
            // unknown ids were refused by the CLI.
            return;
        };
        // Follow an edit chain to the lesson's current wording.
        let li = self.latest(li);
        let t = d.at;
        self.settle(li, utc_day(t) - 1);
        if matches!(d.action, Action::Retire | Action::Pin) {
            // A decision is taken at the last compile's latest record, after the whole of the
            // day that compile charged: a lesson idle on that day showed the day's decay.
            // Retiring (which freezes it) or pinning (which stops decay) keeps that charge, so
            // the decision never raises the confidence the user decided on.
            self.settle(li, utc_day(t));
        }
        if let Some(why) = self.no_effect(li, d) {
            let l = &self.live[li as usize].lesson;
            let mut diag =
                decision_diagnostic(codes::INEFFECTIVE_DECISION, d, &format!(" had no effect: {why}"))
                    .domain(l.domain.clone());
            if l.id != d.target {
                diag = diag.with("lesson", l.id.clone());
            }
            self.sink.push(diag);
            return;
        }
        let l = &mut self.live[li as usize];
        let c = l.lesson.confidence;
        match d.action {
            Action::Retire => {
                l.lesson.status = Status::Retired;
                l.lesson.superseded_by = Some("retired:user".into());
                l.lesson.reason = Some(
                    d.text
                        .clone()
                        .map_or(Cow::Borrowed("retired by the user"), Cow::Owned),
                );
                l.lesson.history.push(entry(
                    t,
                    Step::Retired,
                    c,
                    Ids::NONE,
                    d.text.clone().map(Cow::Owned),
                ));
            }
            Action::Restore => {
                l.lesson.status = if l.evidence.is_empty() {
                    Status::Claimed
                } else {
                    Status::Active
                };
                l.lesson.superseded_by = None;
                l.lesson.reason = None;
                l.settled_through = utc_day(t);
                l.lesson
                    .history
                    .push(entry(t, Step::Restored, c, Ids::NONE, None));
                self.reclaim(li, t);
            }
            Action::Pin | Action::Unpin => {
                l.lesson.pinned = d.action == Action::Pin;
                let ev = if l.lesson.pinned {
                    Step::Pinned
                } else {
                    Step::Unpinned
                };
                l.settled_through = l.settled_through.max(utc_day(t));
                l.lesson.history.push(entry(t, ev, c, Ids::NONE, None));
            }
            Action::Edit => {
                let Some(text) = d.text.as_ref().map(|s| crate::normalize::text(s)) else {
                    return;
                };
                let new_id = edited_id(&l.lesson, &l.lesson.id, &text);
                let mut next = Live {
                    lesson: Lesson {
                        id: new_id.clone(),
                        text,
                        supersedes: Some(l.lesson.id.clone()),
                        history: vec![entry(
                            t,
                            Step::Edited,
                            c,
                            Ids::NONE,
                            Some(format!("new wording of {}", l.lesson.id).into()),
                        )],
                        ..l.lesson.clone()
                    },
                    evidence: l.evidence.clone(),
                    projects: l.projects.clone(),
                    domain: l.domain,
                    days: l.days,
                    // The new wording goes on from where the old one was settled: the edit's
                    // day is charged like any other, unless the lesson is used later that day
                    // (DESIGN §6: the edit carries the confidence over, it adds none).
                    settled_through: l.settled_through,
                    demoted_to: l.demoted_to,
                    last_confirm_project: l.last_confirm_project,
                };
                next.lesson.status = l.lesson.status;
                l.lesson.status = Status::Superseded;
                l.lesson.superseded_by = Some(new_id.clone());
                l.lesson.reason = Some(EDITED.into());
                l.lesson.history.push(entry(
                    t,
                    Step::Superseded,
                    c,
                    Ids::NONE,
                    Some(format!("edited; superseded by {new_id}").into()),
                ));
                let ni = self.live.len() as u32;
                self.live.push(next);
                self.take_in(new_id, ni);
                // The new wording takes the old one's place wherever the fold holds it: as its
                // cluster's live lesson, in its (scope, key) slot of fixes (so a newer form
                // still supersedes it), and as the lesson a fix's end waits on.
                let held = (self.current.values_mut())
                    .chain(self.mechanical.values_mut().flatten())
                    .chain(self.ending.values_mut());
                for cur in held {
                    if *cur == li {
                        *cur = ni;
                    }
                }
            }
            Action::Bless => {}
        }
    }

    /// Why decision `d` cannot change lesson `li` (the end of its target's edit chain), if it
    /// cannot: a superseded lesson never revives and takes no decision; the rest would repeat
    /// the lesson's state. The CLI refuses what it can tell from the last compile; the journal
    /// can still hold such a decision (two taken before one compile, or history that arrived
    /// since), and S008 says so instead of dropping it silently.
    fn no_effect(&self, li: u32, d: &Decision) -> Option<Cow<'static, str>> {
        let l = &self.live[li as usize].lesson;
        let superseded = || {
            let by = l
                .superseded_by
                .as_deref()
                .map(|b| format!(" by {b}"))
                .unwrap_or_default();
            format!(
                "the lesson had been superseded{by} ({})",
                l.reason.as_deref().unwrap_or("")
            )
        };
        let retired = l.status == Status::Retired;
        Some(match d.action {
            Action::Bless => return None,
            _ if l.status == Status::Superseded => Cow::Owned(superseded()),
            Action::Retire if retired => Cow::Borrowed("the lesson was retired already"),
            Action::Restore if !retired => Cow::Borrowed("the lesson was not retired"),
            Action::Pin if retired => Cow::Borrowed("the lesson was retired; restore it first"),
            Action::Pin if l.pinned => Cow::Borrowed("the lesson was pinned already"),
            Action::Unpin if !l.pinned => Cow::Borrowed("the lesson was not pinned"),
            Action::Edit if retired => Cow::Borrowed("the lesson was retired; restore it first"),
            Action::Edit if d.text.as_deref().map(crate::normalize::text).as_deref() == Some(&*l.text) => {
                Cow::Borrowed("the lesson already has that wording")
            }
            _ => return None,
        })
    }

    /// A lesson re-learned from newer evidence while `li` was retired (its cluster's current
    /// generation, founded after it) gives way to `li` when `li` is restored: one lesson per
    /// cluster, and the restored one, which the user chose, is it.
    fn reclaim(&mut self, li: u32, t: Millis) {
        let id = self.live[li as usize].lesson.id.clone();
        let descends = |mut cur: u32| {
            for _ in 0..self.live.len() {
                let Some(&before) =
                    (self.live[cur as usize].lesson.supersedes.as_deref()).and_then(|p| self.by_id.get(p))
                else {
                    return false;
                };
                if before == li {
                    return true;
                }
                cur = before;
            }
            false
        };
        let Some((&ai, &cur)) = (self.current.iter())
            .filter(|&(_, &cur)| cur != li && descends(cur))
            .min_by_key(|&(&ai, _)| ai)
        else {
            return;
        };
        self.settle(cur, utc_day(t) - 1);
        self.live[cur as usize].supersede(t, Some(id), "the user restored the lesson it re-learned");
        self.current.insert(ai, li);
        // The links turn round: the lesson that re-learned `li` (`supersedes` naming it, the
        // copy or an older generation of it) now comes before `li`, which supersedes the copy.
        // Left as they were, `li` and the copy would each supersede the other, and a walk
        // along the chain would go in a circle. Its history keeps the "after L…" it began with.
        let mut at = cur;
        for _ in 0..self.live.len() {
            let before = self.live[at as usize]
                .lesson
                .supersedes
                .as_deref()
                .and_then(|p| self.by_id.get(p));
            match before {
                Some(&b) if b == li => {
                    self.live[at as usize].lesson.supersedes = None;
                    break;
                }
                Some(&b) => at = b,
                None => break,
            }
        }
        let copy_id = self.live[cur as usize].lesson.id.clone();
        self.live[li as usize].lesson.supersedes.get_or_insert(copy_id);
        // The restored lesson takes over what the copy learned while it was retired: its
        // supporting experiences (reinforcement, scope) and its members' fate. The copy keeps
        // its own record (nothing is deleted); its history links the two.
        let taken = self.live[cur as usize].evidence.clone();
        let mut seen: FxSet<&str> = self.live[li as usize]
            .evidence
            .iter()
            .map(|&(id, _)| &**id)
            .collect();
        let mut joined: Vec<&Id> = Vec::new();
        for (id, hint) in taken {
            if seen.insert(id) {
                joined.push(id);
            }
            self.add_support(li, id, hint);
        }
        for of in &mut self.lesson_of {
            if of.1 == cur {
                of.1 = li;
            }
        }
        // And the reasons its dead ends gave, newest first as a join adds them: the copy's
        // members were all recorded after the retire, so after every member of `li`.
        let reasons = self.live[cur as usize].lesson.reasons.clone();
        let l = &mut self.live[li as usize].lesson;
        for r in reasons.into_iter().rev() {
            if let Some(at) = l.reasons.iter().position(|x| *x == r) {
                l.reasons.remove(at);
            }
            l.reasons.insert(0, r);
        }
        if !joined.is_empty() {
            let copy = self.live[cur as usize].lesson.id.clone();
            let l = &mut self.live[li as usize].lesson;
            let detail = format!("taken over from {copy}, which re-learned it while it was retired");
            l.history.push(entry(
                t,
                Step::Joined,
                l.confidence,
                owned(&joined),
                Some(detail.into()),
            ));
            self.rescope(li, t);
        }
    }

    /// The end of a lesson's edit chain.
    fn latest(&self, mut li: u32) -> u32 {
        for _ in 0..self.live.len() {
            let l = &self.live[li as usize].lesson;
            match (&l.superseded_by, l.reason.as_deref()) {
                (Some(next), Some(EDITED)) => match self.by_id.get(next) {
                    Some(&n) => li = n,
                    None => break,
                },
                _ => break,
            }
        }
        li
    }
}

/// A diagnostic about the journal's decision `d`: "the journal's <action> of <target> (entry
/// <seq>)" and then `what`, with the decision as subject and evidence.
pub fn decision_diagnostic(code: &'static str, d: &Decision, what: &str) -> Diagnostic {
    let action = d.action.as_str();
    Diagnostic::new(
        code,
        format!("the journal's {action} of {} (entry {}){what}", d.target, d.seq),
    )
    .subject(&d.target)
    .with("action", action)
    .with("seq", d.seq)
}

/// The id an edit gives `lesson` when it was called `id` (DESIGN §6: the identity hash over the
/// old id and the new, normalised, text).
pub fn edited_id(lesson: &Lesson, id: &str, text: &str) -> String {
    identity(lesson, id, text)
}

/// The identity hash (DESIGN §6) of `lesson`'s domain, kind and key with `founder` (a record
/// id; an edit puts the old lesson id there) and `wording`.
pub fn identity(lesson: &Lesson, founder: &str, wording: &str) -> String {
    digest::id_of('L', &identity_fields(lesson, founder, wording))
}

/// `identity` of one lesson for many founders, as the number `digest::lesson_id_bits` reads
/// from it: the digest fed its domain, kind and key once, to be finished per member
/// (`IdentityPrefix::bits`).
#[derive(Clone)]
pub struct IdentityPrefix(digest::FieldsDigest);

impl IdentityPrefix {
    pub fn of(lesson: &Lesson) -> IdentityPrefix {
        let mut prefix = digest::FieldsDigest::default();
        identity_fields(lesson, "", "")[..3]
            .iter()
            .for_each(|field| prefix.feed(field));
        IdentityPrefix(prefix)
    }

    /// `lesson_id_bits(identity(lesson, founder, wording))`, without making the id's text.
    pub fn bits(&self, founder: &str, wording: &str) -> u64 {
        let mut digest = self.0.clone();
        digest.feed(founder);
        digest.feed(wording);
        digest.bits()
    }
}

/// What a lesson's identity digests: domain, kind, operation key, founder and wording.
fn identity_fields<'a>(lesson: &'a Lesson, founder: &'a str, wording: &'a str) -> [&'a str; 5] {
    let key = lesson.operation_key.as_deref().unwrap_or_default();
    [&lesson.domain, lesson.kind.as_str(), key, founder, wording]
}

/// Adds `p` to `projects` (sorted, each once) unless it is there. The candidates of a run
/// share one copy of a project: the same copy is found by its address, without reading the
/// texts the search compares.
fn add_project<'a>(projects: &mut Vec<&'a str>, p: &'a str) {
    if projects.iter().any(|&q| std::ptr::eq(q, p)) {
        return;
    }
    if let Err(at) = projects.binary_search(&p) {
        projects.insert(at, p);
    }
}

/// The scope of project digest `p`, `project:<p>`: made for most lessons, without the
/// formatting machinery `format!` runs.
fn project_scope(p: &str) -> String {
    const PREFIX: &str = "project:";
    let mut scope = String::with_capacity(PREFIX.len() + p.len());
    scope.push_str(PREFIX);
    scope.push_str(p);
    scope
}

/// Moves a finished lesson's history into an allocation of its length: grown by doubling,
/// histories held a quarter more room than entries (60 MB at a million records) until the
/// output, and the blocks freed here take the thread's next units' histories.
fn exact_history(history: &mut Vec<HistoryEntry>) {
    if history.capacity() > history.len() {
        let mut exact = Vec::with_capacity(history.len());
        exact.append(history);
        *history = exact;
    }
}

/// Owned copies of borrowed ids, for a history entry.
fn owned(ids: &[&Id]) -> Ids {
    ids.iter().map(|&id| id.clone()).collect()
}

/// "`k` active days without use": hundreds of thousands of decay events at a million records
/// share one text per count up to a year's worth.
fn days_without_use(k: i32) -> Cow<'static, str> {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    let text = |k: i32| format!("{k} active days without use");
    let texts = TEXTS.get_or_init(|| (0..=366).map(text).collect());
    match usize::try_from(k).ok().and_then(|k| texts.get(k)) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(text(k)),
    }
}

fn entry(
    at: Millis,
    event: Step,
    confidence: i32,
    experiences: Ids,
    detail: Option<Cow<'static, str>>,
) -> HistoryEntry {
    // Sorted, each once (one id is both already).
    let experiences = match experiences {
        Ids::Many(Some(mut ids)) => {
            ids.sort();
            ids.dedup();
            Ids::from(*ids)
        }
        one => one,
    };
    HistoryEntry {
        at,
        event,
        confidence,
        experiences,
        detail,
        idle_days: 0,
        idle_confidence: 0,
    }
}

/// What an experience did to a lesson it had in play (DESIGN §6 attribution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Confirms,
    Contradicts,
    Neither(Neutral),
}

/// Why an experience that had a lesson in play neither confirmed nor contradicted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neutral {
    /// A claim gains evidence only from a passed experience in its domain, and is never blamed.
    ClaimNotSupported,
    /// No call on the lesson's key ran its working form.
    WorkingFormNotRun,
    /// The runs of the working form were refused or failed transiently.
    WorkingFormNotCounted,
    /// No call on the lesson's key.
    KeyNotRun,
    /// The experience passed, but every call on the key was refused.
    KeyCallsRefused,
    /// The experience ended badly, but no call on the key failed for real.
    NoRealFailure,
    /// The experience is not in the lesson's domain.
    OtherDomain,
    /// Its outcome (neither passed nor failed or abandoned) says nothing.
    Outcome,
}

/// What `exp` (verdict `v`) did to `l`, which it had in play. `calls(k)` gives the experience's
/// calls on key `k` in order, each with whether it ran the lesson's working form; `in_domain`,
/// whether `exp` is in the lesson's domain. The fold applies the effect; `trace` explains a
/// `Neither`.
pub fn effect<'o, I>(
    l: &'o Lesson,
    exp: &Experience,
    v: &Verdict,
    in_domain: bool,
    policy: &crate::policy::Policy,
    calls: impl FnOnce(&'o str) -> I,
) -> Effect
where
    I: DoubleEndedIterator<Item = (&'o Operation, bool)>,
{
    use crate::model::Outcome;
    if l.status == Status::Claimed {
        if !(v.passed && in_domain) {
            return Effect::Neither(Neutral::ClaimNotSupported);
        }
        // Evidence a claim gains must support it as its cited evidence must (DESIGN §5.4):
        // a keyed claim's, a run on its key.
        let Some(k) = l.operation_key.as_deref() else {
            return Effect::Confirms;
        };
        let mut on_key = calls(k).map(|(op, _)| op).peekable();
        return match on_key.peek().is_some() {
            false => Effect::Neither(Neutral::KeyNotRun),
            true if on_key.any(|op| op.status != OpStatus::Refused) => Effect::Confirms,
            true => Effect::Neither(Neutral::KeyCallsRefused),
        };
    }
    let bad_end = matches!(exp.outcome(), Outcome::Failed | Outcome::Abandoned);
    let real_failure = |op: &Operation| {
        op.status == OpStatus::Error && !policy.is_transient(op.error.as_deref().unwrap_or(""))
    };
    let judged = |confirms: bool| match confirms {
        true => Effect::Confirms,
        false => Effect::Contradicts,
    };
    match l.operation_key.as_deref() {
        Some(k) if l.working.is_some() => {
            // The last run of the working form that counts decides: it worked, or failed for
            // real. One walk from the end, as far as that run: each step may compare a form.
            let mut ran = false;
            for (op, _) in calls(k).rev().filter(|&(_, working)| working) {
                if op.status == OpStatus::Ok || real_failure(op) {
                    return judged(op.status == OpStatus::Ok);
                }
                ran = true;
            }
            Effect::Neither(match ran {
                true => Neutral::WorkingFormNotCounted,
                false => Neutral::WorkingFormNotRun,
            })
        }
        Some(k) => {
            let on_key: Vec<&Operation> = calls(k).map(|(op, _)| op).collect();
            if v.passed && on_key.iter().any(|op| op.status != OpStatus::Refused) {
                Effect::Confirms
            } else if bad_end && on_key.iter().any(|op| real_failure(op)) {
                Effect::Contradicts
            } else if on_key.is_empty() {
                Effect::Neither(Neutral::KeyNotRun)
            } else if v.passed {
                Effect::Neither(Neutral::KeyCallsRefused)
            } else if bad_end {
                Effect::Neither(Neutral::NoRealFailure)
            } else {
                Effect::Neither(Neutral::Outcome)
            }
        }
        None if !in_domain => Effect::Neither(Neutral::OtherDomain),
        None if v.passed || bad_end => judged(v.passed),
        None => Effect::Neither(Neutral::Outcome),
    }
}

/// `effect`, each call's form computed and compared in full: for `trace`, which judges one
/// experience and has no cached forms (the fold compares fingerprints first).
pub fn effect_in_full<'a>(
    l: &'a Lesson,
    exp: &'a Experience,
    v: &Verdict,
    policy: &'a crate::policy::Policy,
) -> Effect {
    let working = l.working.as_deref();
    let calls = move |k: &'a str| {
        (exp.operations.iter())
            .filter(move |op| op.key() == k)
            .map(move |op| {
                let runs_working =
                    working.is_some_and(|w| runs_form(&policy.call_form(&op.args.value()), w, policy));
                (op, runs_working)
            })
    };
    effect(l, exp, v, exp.domains.contains(&l.domain), policy, calls)
}

/// Confidence kept in [0, 1] (DESIGN §6), in thousandths.
fn clamped(thousandths: i32) -> i32 {
    thousandths.clamp(0, 1000)
}

/// Thousandths as a JSON number with three decimals, always in [0, 1].
pub fn confidence_value(thousandths: i32) -> serde_json::Value {
    // The nearest double to thousandths / 1000 (both exact, so the division rounds once),
    // the number `0.650` parses to; a ledger makes a million of these. The fold already
    // clamps; clamping here too keeps the ledger's confidence a number whatever reaches it.
    serde_json::Value::from(f64::from(clamped(thousandths)) / 1000.0)
}

/// Thousandths printed with three decimals, like `confidence_value`: `0.650`.
pub fn confidence_text(thousandths: i32) -> String {
    let mut s = String::with_capacity(5);
    push_confidence_text(&mut s, thousandths);
    s
}

/// Appends `confidence_text(thousandths)` without a string of its own (SKILL.md and
/// EVIDENCE.md write one per rule and per history event).
pub fn push_confidence_text(s: &mut String, thousandths: i32) {
    let t = clamped(thousandths);
    let digit = |d: i32| char::from(b'0' + d as u8);
    s.extend([
        digit(t / 1000),
        '.',
        digit(t / 100 % 10),
        digit(t / 10 % 10),
        digit(t % 10),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::finalize;
    use crate::pipeline::{self, Options, Stage};

    /// The score stage's inputs from `comp`, a compile of `opts` stopped after the gate: a
    /// first pass (nothing renamed), `min_reinforcement` 2.
    fn gate_inputs<'a>(comp: &'a pipeline::Compilation, opts: &'a Options, rules: &'a Rules) -> Inputs<'a> {
        static NONE_RENAMED: OnceLock<HashMap<String, String>> = OnceLock::new();
        Inputs {
            corpus: &comp.corpus,
            verdicts: &comp.verdicts,
            candidates: &comp.candidates,
            names: &comp.names,
            clusters: &comp.clusters,
            admitted: &comp.gate.admitted,
            decisions: &opts.decisions,
            renamed: NONE_RENAMED.get_or_init(HashMap::default),
            rules,
            min_reinforcement: 2,
        }
    }

    /// Every answer of the one attribution judge, which the fold applies and `trace` words:
    /// the lesson's kind (claim, keyed, mechanical, unkeyed) and the experience's calls decide.
    #[test]
    fn effect_judges_every_case_the_fold_and_trace_rely_on() {
        use crate::model::Outcome;
        use Effect::{Confirms, Contradicts, Neither};
        let policy = Rules::builtin().policy;
        let working = r#"{"command": "terraform plan -lock-timeout=5m", "cwd": "/infra"}"#;
        let lesson = |key: Option<&str>, mechanical: bool, status: Status| Lesson {
            id: "L0123456789ab".into(),
            kind: crate::model::Kind::Do,
            text: "Pass -lock-timeout=5m to terraform plan.".into(),
            domain: "terraform".into(),
            scope: "global".into(),
            operation_key: key.map(String::from),
            status,
            reason: None,
            confidence: 500,
            reinforcement: 1,
            rule: false,
            pinned: false,
            blessed: false,
            evidence: Vec::new(),
            projects: Vec::new(),
            superseded_by: None,
            supersedes: None,
            founder: "tf-1".into(),
            cluster: "C0123456789ab".into(),
            admitted_at: 0,
            last_used_day: 0,
            working: mechanical.then(|| working.to_string()),
            reasons: Vec::new(),
            history: Vec::new(),
        };
        let call = |command: &str, status: OpStatus, error: Option<&str>| Operation {
            tool: "bash".into(),
            args: crate::model::Args::from_value(&serde_json::json!({"command": command, "cwd": "/infra"})),
            status,
            error: error.map(String::from),
            secret_print: 0,
            check: None,
        };
        let plan = "terraform plan -lock-timeout=5m";
        let ok = || call(plan, OpStatus::Ok, None);
        let failed = || call(plan, OpStatus::Error, Some("Error acquiring the state lock"));
        let transient = || call(plan, OpStatus::Error, Some("dial tcp: connection reset by peer"));
        let refused = || call(plan, OpStatus::Refused, None);
        let bare = || call("terraform plan", OpStatus::Ok, None);
        let judge = |l: &Lesson, domain: &str, outcome: Outcome, passed: bool, ops: Vec<Operation>| {
            let exp = Experience {
                id: "tf-2".into(),
                domains: vec![domain.into()],
                outcome: Some(outcome),
                operations: ops,
                ..Default::default()
            };
            let v = Verdict {
                passed,
                ..Default::default()
            };
            effect_in_full(l, &exp, &v, &policy)
        };
        let key = Some("bash terraform");
        let fix = lesson(key, true, Status::Active);
        let (won, lost) = ((Outcome::Succeeded, true), (Outcome::Failed, false));
        for (ops, outcome, want) in [
            // The last run of the working form that counts decides.
            (vec![failed(), ok()], won, Confirms),
            (vec![ok(), failed()], lost, Contradicts),
            (vec![failed(), transient()], lost, Contradicts),
            (
                vec![transient(), refused()],
                lost,
                Neither(Neutral::WorkingFormNotCounted),
            ),
            (vec![bare()], won, Neither(Neutral::WorkingFormNotRun)),
            (vec![], won, Neither(Neutral::WorkingFormNotRun)),
        ] {
            assert_eq!(judge(&fix, "terraform", outcome.0, outcome.1, ops), want);
        }
        let keyed = lesson(key, false, Status::Active);
        for (ops, outcome, want) in [
            (vec![bare()], won, Confirms),
            (vec![failed()], lost, Contradicts),
            (vec![], won, Neither(Neutral::KeyNotRun)),
            (vec![refused()], won, Neither(Neutral::KeyCallsRefused)),
            (
                vec![transient(), refused()],
                lost,
                Neither(Neutral::NoRealFailure),
            ),
            (
                vec![failed()],
                (Outcome::Pivoted, false),
                Neither(Neutral::Outcome),
            ),
        ] {
            assert_eq!(judge(&keyed, "terraform", outcome.0, outcome.1, ops), want);
        }
        let general = lesson(None, false, Status::Active);
        assert_eq!(
            judge(&general, "terraform", Outcome::Succeeded, true, vec![]),
            Confirms
        );
        assert_eq!(
            judge(&general, "terraform", Outcome::Abandoned, false, vec![]),
            Contradicts
        );
        assert_eq!(
            judge(&general, "terraform", Outcome::Pivoted, false, vec![]),
            Neither(Neutral::Outcome)
        );
        assert_eq!(
            judge(&general, "helm", Outcome::Failed, false, vec![]),
            Neither(Neutral::OtherDomain)
        );
        // A claim gains evidence from a pass in its domain that ran its key, and is never
        // blamed.
        let claim = lesson(key, false, Status::Claimed);
        assert_eq!(
            judge(&claim, "terraform", Outcome::Succeeded, true, vec![bare()]),
            Confirms
        );
        assert_eq!(
            judge(&claim, "terraform", Outcome::Succeeded, true, vec![]),
            Neither(Neutral::KeyNotRun)
        );
        assert_eq!(
            judge(&claim, "terraform", Outcome::Succeeded, true, vec![refused()]),
            Neither(Neutral::KeyCallsRefused)
        );
        let unkeyed = lesson(None, false, Status::Claimed);
        assert_eq!(
            judge(&unkeyed, "terraform", Outcome::Succeeded, true, vec![]),
            Confirms
        );
        assert_eq!(
            judge(&claim, "terraform", Outcome::Failed, false, vec![failed()]),
            Neither(Neutral::ClaimNotSupported)
        );
        assert_eq!(
            judge(&claim, "helm", Outcome::Succeeded, true, vec![]),
            Neither(Neutral::ClaimNotSupported)
        );
    }

    #[test]
    fn confidence_values_are_the_numbers_their_three_decimals_spell() {
        for t in (0..=1000).chain([-500, 1234, 99_999]) {
            let spelled: serde_json::Value = serde_json::from_str(&confidence_text(t)).unwrap();
            assert_eq!(confidence_value(t), spelled, "{t}");
            assert_eq!(confidence_value(t).to_string(), spelled.to_string(), "{t}");
        }
    }

    #[test]
    fn a_confidence_outside_0_to_1_is_written_clamped_never_as_null() {
        // The ledger's `confidence` is a JSON number in [0, 1] (DESIGN §6, §7).
        for (t, clamped) in [(-1000, 0.0), (-1, 0.0), (1001, 1.0), (i32::MAX, 1.0)] {
            assert_eq!(confidence_value(t), serde_json::json!(clamped), "{t}");
        }
        assert_eq!(confidence_text(-250), "0.000");
        assert_eq!(confidence_text(1150), "1.000");
    }

    #[test]
    fn confidences_are_spelled_with_three_decimals() {
        for t in (-20..=1020).chain([i32::MIN, i32::MAX]) {
            let c = t.clamp(0, 1000);
            assert_eq!(confidence_text(t), format!("{}.{:03}", c / 1000, c % 1000), "{t}");
            let mut s = String::from("x");
            push_confidence_text(&mut s, t);
            assert_eq!(s, format!("x{}", confidence_text(t)), "{t}");
        }
    }

    #[test]
    fn kept_items_take_their_places_and_fresh_ones_the_rest() {
        // Kept items ascend to their places, dropped ones go, fresh ones fill the gaps.
        let ids = vec!["L-go", "L-old", "L-npm", "L-tox", "L-gone", "L-zip"];
        let fresh = vec![(4, "L-pip"), (0, "L-ant"), (1, "L-cargo"), (6, "L-uv")];
        let to = [2, DROPPED, 3, 5, DROPPED, 7];
        let placed = place_in(ids, &to, fresh);
        assert_eq!(
            placed,
            [
                "L-ant", "L-cargo", "L-go", "L-npm", "L-pip", "L-tox", "L-uv", "L-zip"
            ]
        );
        // Fewer places than items, nothing fresh, and nothing kept.
        let placed = place_in(vec!["a", "b", "c"], &[DROPPED, 0, 1], Vec::new());
        assert_eq!(placed, ["b", "c"]);
        let placed = place_in(vec!["a", "b"], &[DROPPED, DROPPED], vec![(1, "y"), (0, "x")]);
        assert_eq!(placed, ["x", "y"]);
        assert_eq!(place_in(vec!["a"], &[0], Vec::new()), ["a"]);
        // The dropped items are freed (on every core), the kept and fresh ones not.
        let items: Vec<std::sync::Arc<&str>> = ["L-go", "L-old", "L-npm", "L-gone"]
            .map(std::sync::Arc::new)
            .into();
        let watch = items.clone();
        let placed = place_in(
            items,
            &[0, DROPPED, 2, DROPPED],
            vec![(1, std::sync::Arc::new("L-pip"))],
        );
        assert_eq!(
            placed.iter().map(|a| **a).collect::<Vec<_>>(),
            ["L-go", "L-pip", "L-npm"]
        );
        let held: Vec<usize> = watch.iter().map(std::sync::Arc::strong_count).collect();
        assert_eq!(held, [2, 1, 2, 1]);
    }

    /// A lesson's projects are those of the experiences its evidence ids name (of two with
    /// one id, the later's): the fold reads a candidate's own copy of its experience's project
    /// only where that experience is the one its id names (`Shared::own_id`).
    #[test]
    fn a_lessons_projects_are_those_of_the_experiences_its_evidence_names() {
        use crate::load::{LoadOptions, load_texts};
        let record = |id: &str, day: u32, project: &str, lesson: &str| {
            serde_json::json!({"id": id, "recorded_at": format!("2026-11-{day:02}T10:00:00Z"),
                "domains": ["python"], "project": format!("git@github.com:acme/{project}.git"),
                "outcome": "succeeded", "lesson": lesson})
            .to_string()
        };
        const ASYNCIO: &str =
            "Pin pytest-asyncio below 0.23 while the suite still uses the event_loop fixture.";
        const XDIST: &str = "Run pytest -p no:randomly when xdist workers disagree on the test order.";
        const RUFF: &str =
            "Run ruff check --fix before committing; the pre-commit hook rejects unsorted imports.";
        let unique = [
            record("ci-101", 2, "billing-api", ASYNCIO),
            record("ci-102", 3, "ledger", ASYNCIO),
            record("ci-103", 4, "ledger", XDIST),
            record("ci-104", 5, "ledger", XDIST),
            record("ci-105", 6, "search-svc", RUFF),
        ];
        // The loader keeps the first of two records with one id; a corpus built in code may
        // repeat one: here the third record takes the first's id, `ci-101`, and is the
        // experience that id names (in another project than the first's).
        for distinct in [true, false] {
            let text = unique.join("\n");
            let rules = Rules::builtin();
            let mut sink = Sink::new();
            let mut corpus = load_texts(&[("ci.jsonl", &text)], &LoadOptions::default(), &mut sink);
            if !distinct {
                corpus.experiences[2].id = corpus.experiences[0].id.clone();
            }
            let opts = Options {
                stop_after: Some(Stage::Gate),
                ..Options::default()
            };
            let comp = pipeline::compile(corpus, sink, &rules, &opts);
            let inp = gate_inputs(&comp, &opts, &rules);
            let shared = prepare(&inp);
            assert_eq!(shared.unique_ids, distinct);
            let own = (0..comp.candidates.len() as u32)
                .filter(|&m| shared.own(m))
                .count();
            assert_eq!(own, if distinct { comp.candidates.len() } else { 0 });
            let (scored, _) = score(&inp);
            assert_eq!(scored.lessons.len(), 3, "{:#?}", scored.lessons);
            let exps = &comp.corpus.experiences;
            for l in &scored.lessons {
                let mut projects: Vec<String> = (l.evidence.iter())
                    .filter_map(|id| exps.iter().rfind(|e| *e.id == **id)?.project.clone())
                    .collect();
                projects.sort();
                projects.dedup();
                assert_eq!(l.projects, projects, "{}", l.text);
            }
            // The asyncio lesson spans billing-api and ledger, unless its `ci-101` names the
            // ledger record (the id repeats): then it is ledger's alone.
            let global: Vec<&str> = (scored.lessons.iter())
                .filter(|l| l.scope == "global")
                .map(|l| l.text.as_str())
                .collect();
            let expected: &[&str] = if distinct { &[ASYNCIO] } else { &[] };
            assert_eq!(global, expected, "{distinct}");
        }
    }

    #[test]
    fn an_identity_finished_from_its_prefix_is_the_whole_identity() {
        let (corpus, sink) = crate::generate::loader(2000, 3)();
        let comp = pipeline::compile(corpus, sink, &Rules::builtin(), &Options::default());
        let mut checked = 0;
        for (c, l) in comp.candidates.iter().zip(&comp.lesson_of) {
            let Some(l) = l.map(|l| &comp.lessons[l as usize]) else {
                continue;
            };
            let prefix = IdentityPrefix::of(l);
            for (founder, wording) in [(&*c.record_id, &*c.text), (&*l.founder, &*l.text), ("", "")] {
                let bits = prefix.bits(founder, wording);
                assert_eq!(Some(bits), digest::lesson_id_bits(&identity(l, founder, wording)));
            }
            checked += 1;
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn the_prefix_orders_like_the_string() {
        let mut ids = vec![
            "",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "L0123456789abcdef",
            "L0123456789abcdee",
            "L01234567",
            "b",
        ];
        let mut by_prefix = ids.clone();
        ids.sort();
        by_prefix.sort_by_key(|s| (prefix(s), *s));
        assert_eq!(ids, by_prefix);
    }

    /// `has_prefixed` answers as `search_by_prefix` does, for ids in the list and not: lesson
    /// ids, ids sharing their first sixteen bytes (and so a prefix), ids that are a prefix of
    /// another, the empty id, ids before the first and after the last.
    #[test]
    fn an_id_is_found_by_its_prefixs_first_as_by_the_search() {
        let mut ids: Vec<String> = (0..2_000u64)
            .map(|i| crate::digest::id_of('L', &[&i.to_string()]))
            .collect();
        let long = "Lsame-sixteen-bytes";
        for tail in ["", "-a", "-b", "\0", "-aa"] {
            ids.push(format!("{long}{tail}"));
        }
        ids.extend(["", "a", "ab", "L0", "~~~~", "L0123456789abcdef"].map(String::from));
        // Every third id left out: each of those must not be found.
        let listed: Vec<&str> = (ids.iter().enumerate())
            .filter(|(i, _)| i % 3 != 1)
            .map(|(_, id)| id.as_str())
            .collect();
        let mut by_prefix: Vec<(u128, u32)> = (listed.iter().enumerate())
            .map(|(n, id)| (prefix(id), n as u32))
            .collect();
        by_prefix.sort_by(|a, b| (a.0, listed[a.1 as usize]).cmp(&(b.0, listed[b.1 as usize])));
        let table = PrefixTable::new(&by_prefix);
        let id_of = |n: u32| listed[n as usize];
        let mut asked: Vec<String> = ids.clone();
        asked.extend(["0", "Lsame-sixteen-byte", "Lsame-sixteen-bytes-c", "\u{10ffff}"].map(String::from));
        let mut found = 0;
        for id in &asked {
            let by_search = search_by_prefix(&by_prefix, id, id_of).is_ok();
            assert_eq!(has_prefixed(&by_prefix, &table, id, id_of), by_search, "{id:?}");
            assert_eq!(by_search, listed.contains(&id.as_str()), "{id:?}");
            found += by_search as usize;
        }
        assert_eq!(found, listed.len());
        assert!(!has_prefixed(&[], &PrefixTable::new(&[]), "L0123456789ab", id_of));
    }

    /// Lesson ids alone (none, one, a thousand listed; the others of two thousand asked about
    /// and not listed): the table holds four bytes a slot, at most half of them full, and finds
    /// every listed id and no other, as the search answers; a probe reads a few slots.
    #[test]
    fn the_prefix_table_finds_lesson_ids_in_a_few_slots() {
        let ids: Vec<String> = (0..2_000u64)
            .map(|i| crate::digest::id_of('L', &[&i.to_string()]))
            .collect();
        for n in [0, 1, 2, 1_000] {
            let listed: Vec<&str> = ids[..n].iter().map(String::as_str).collect();
            let mut by_prefix: Vec<(u128, u32)> = (listed.iter().enumerate())
                .map(|(n, id)| (prefix(id), n as u32))
                .collect();
            by_prefix.sort_by(|a, b| (a.0, listed[a.1 as usize]).cmp(&(b.0, listed[b.1 as usize])));
            let table = PrefixTable::new(&by_prefix);
            let full = table.slots.iter().filter(|&&s| s != 0).count();
            assert_eq!(full, n);
            assert!(n == 0 || (2 * n < table.slots.len() && table.slots.len() <= 4 * n));
            // The longest run of full slots bounds a probe's reads.
            let run = (table.slots.split(|&s| s == 0))
                .map(<[u32]>::len)
                .max()
                .unwrap_or(0);
            // (15 with these ids; 33 with a hash of one multiplication.)
            assert!(run <= 24, "{n}: a run of {run} full slots");
            let id_of = |n: u32| listed[n as usize];
            for (i, id) in ids.iter().enumerate() {
                let by_search = search_by_prefix(&by_prefix, id, id_of).is_ok();
                assert_eq!(by_search, i < n, "{id}");
                assert_eq!(has_prefixed(&by_prefix, &table, id, id_of), by_search, "{id}");
            }
        }
    }

    /// Both ways of finding an experience by id answer as a search of the list from its end
    /// would: the one with that id (of two, the last), none for an id no experience has.
    /// Numbered ids are told apart by their prints (the Fx fingerprint gave some of these one).
    #[test]
    fn an_experience_is_found_by_id_either_way() {
        let exp = |id: &str, at: i64| Experience {
            id: id.into(),
            recorded_at: at,
            ..Default::default()
        };
        let distinct: Vec<Experience> = (0..3000).map(|i| exp(&format!("run-{i:05}"), i)).collect();
        let mut repeated = distinct.clone();
        repeated.extend([exp("run-00007", 9000), exp("run-02999", 9001)]);
        let expected = |exps: &[Experience], id: &str| exps.iter().rposition(|e| *e.id == *id);
        let asked = [
            "run-00000",
            "run-00007",
            "run-01234",
            "run-02999",
            "run-3000",
            "",
            "run-0000",
        ];

        let (by_print, unique) = ExperienceIndex::new(&distinct);
        assert!(matches!(by_print, ExperienceIndex::ByPrint(_)) && unique);
        let (by_id, unique) = ExperienceIndex::new(&repeated);
        assert!(
            matches!(by_id, ExperienceIndex::ById(_)) && !unique,
            "two share an id"
        );
        for (index, exps) in [(&by_print, &distinct), (&by_id, &repeated)] {
            for id in asked {
                let found = index.find(exps, id).map(|e| e.recorded_at);
                let want = expected(exps, id).map(|i| exps[i].recorded_at);
                assert_eq!(found, want, "{id:?}");
            }
        }
        assert_eq!(
            by_id.find(&repeated, "run-00007").map(|e| e.recorded_at),
            Some(9000)
        );
        assert_eq!(by_print.find(&distinct, "run-3000"), None);
    }

    #[test]
    fn projects_stay_sorted_and_each_once() {
        let mut projects = Vec::new();
        for p in ["b", "a", "c", "a", "b", "d", "0"] {
            add_project(&mut projects, p);
        }
        let set: BTreeSet<&str> = ["b", "a", "c", "d", "0"].into_iter().collect();
        assert_eq!(projects, set.into_iter().collect::<Vec<_>>());
    }

    /// The units fold exactly like one pass, on a corpus where `in_play` names real lessons
    /// (of the experience's domain and mechanical ones of any domain) and the user edits,
    /// retires, pins and restores lessons.
    #[test]
    fn units_fold_like_one_pass() {
        let rules = Rules::builtin();
        let load = crate::generate::loader(3000, 11);
        let (corpus, sink) = load();
        let first = pipeline::compile(corpus, sink, &rules, &Options::default());
        // First-generation lessons: their ids do not depend on what is in play.
        let founded: Vec<&Lesson> = first.lessons.iter().filter(|l| l.supersedes.is_none()).collect();
        let mechanical: Vec<&Lesson> = founded.iter().copied().filter(|l| l.working.is_some()).collect();
        assert!(founded.len() > 100 && mechanical.len() > 10);

        let (a, b, c, m) = (founded[10], founded[20], founded[30], mechanical[3]);
        let (edit_a, edit_m) = (
            "Check the lock file before upgrading anything.",
            "Run it from the project root.",
        );
        // The id an edit gives a lesson.
        let edited = |l: &Lesson, text: &str| {
            let key = l.operation_key.as_deref().unwrap_or("");
            let text = crate::normalize::text(text);
            format!(
                "L{}",
                digest::of_fields(&[&l.domain, l.kind.as_str(), key, &l.id, &text])
            )
        };
        let (mut corpus, sink) = load();
        for (i, e) in corpus.experiences.iter_mut().enumerate() {
            let own: Vec<&&Lesson> = founded.iter().filter(|l| e.domains.contains(&l.domain)).collect();
            if i % 3 == 0 && !own.is_empty() {
                e.in_play.push(own[i / 3 % own.len()].id.clone());
            }
            if i % 5 == 0 {
                e.in_play.push(mechanical[i / 5 % mechanical.len()].id.clone());
            }
            if i % 4 == 0 {
                e.in_play.push(edited(a, edit_a));
                e.in_play.push(edited(m, edit_m));
            }
            // An id no lesson has, until a second pass renames it (to `founded[40]`'s), some
            // named beside the id it is renamed to, before or after it: one mention each.
            if i % 14 == 0 {
                e.in_play.push(founded[40].id.clone());
            }
            if i % 7 == 0 {
                e.in_play.push(OLD_ID.into());
            }
            if i % 21 == 0 {
                e.in_play.push(founded[40].id.clone());
            }
        }
        let decide = |seq: i64, l: &Lesson, days: i64, action: Action, text: Option<&str>| Decision {
            seq,
            at: l.admitted_at + days * 86_400_000,
            action,
            target: l.id.clone(),
            text: text.map(String::from),
        };
        let decisions = vec![
            decide(1, a, 1, Action::Edit, Some(edit_a)),
            decide(
                2,
                a,
                3,
                Action::Edit,
                Some("Check the lock file before every upgrade."),
            ),
            decide(3, a, 4, Action::Pin, None),
            decide(4, b, 1, Action::Retire, Some("wrong")),
            decide(5, b, 2, Action::Restore, None),
            decide(6, c, 1, Action::Retire, None),
            decide(7, m, 1, Action::Edit, Some(edit_m)),
        ];
        let opts = Options {
            stop_after: Some(Stage::Gate),
            decisions,
            ..Options::default()
        };
        let comp = pipeline::compile(corpus, sink, &rules, &opts);
        let inp = gate_inputs(&comp, &opts, &rules);
        let fold = |single| {
            fold_units(
                &inp,
                prepare(&inp),
                units(&inp, single),
                single,
                Vec::new(),
                Previous::default(),
            )
        };
        let Ok((one, one_units)) = fold(true) else {
            panic!("one unit holds every lesson");
        };
        let Ok((par, par_units)) = fold(false) else {
            panic!("no id in two units");
        };
        let (one_sink, par_sink) = (
            one_units.into_sink(&one.lessons, 0),
            par_units.into_sink(&par.lessons, 0),
        );
        assert!(units(&inp, false).len() > 10);
        assert!(one.lessons == par.lessons, "the lessons differ");
        assert_eq!(one.lesson_of, par.lesson_of);
        assert_eq!(finalize(one_sink), finalize(par_sink));

        // It exercised what it is meant to.
        let events: BTreeSet<&str> = (par.lessons.iter())
            .flat_map(|l| l.history.iter().map(|h| h.event.as_str()))
            .collect();
        for e in [
            "confirmed",
            "contradicted",
            "edited",
            "retired",
            "restored",
            "pinned",
            "promoted",
        ] {
            assert!(events.contains(e), "no {e} event: {events:?}");
        }
        let domain: HashMap<&str, &str> = (par.lessons.iter())
            .map(|l| (l.id.as_str(), l.domain.as_str()))
            .collect();
        let across = par.lessons.iter().any(|l| {
            l.superseded_by
                .as_deref()
                .is_some_and(|by| domain.get(by).is_some_and(|d| *d != l.domain))
        });
        // Or the same fix held in two domains' lessons at once (they share the key's slot).
        let twins = || {
            let mut seen: HashMap<(&str, &str, &str), &str> = HashMap::default();
            (par.lessons.iter())
                .filter(|l| l.status == Status::Active)
                .filter_map(|l| {
                    Some((
                        (
                            l.scope.as_str(),
                            l.operation_key.as_deref()?,
                            l.working.as_deref()?,
                        ),
                        l,
                    ))
                })
                .any(|(slot, l)| *seen.entry(slot).or_insert(&l.domain) != l.domain)
        };
        assert!(across || twins(), "no mechanical slot shared across domains");

        // A second pass that renames an id (a re-founded lesson's old one) folds again only
        // the units holding the lesson it now names, takes the rest from the first pass, and
        // ends where a whole pass ends, the cap (here a small one, so it supersedes) included.
        let mut rules = Rules::builtin();
        rules.policy.caps.active_lessons = 3;
        let inp = Inputs { rules: &rules, ..inp };
        let d = founded[40];
        let renamed: HashMap<String, String> = [(OLD_ID.to_string(), d.id.clone())].into_iter().collect();
        let (first, units) = score(&inp);
        assert!(first.lessons.iter().any(|l| l.reason.as_deref() == Some(CAPPED)));
        let before = Lesson::find(&first.lessons, &d.id).cloned();
        let again = Inputs {
            renamed: &renamed,
            ..inp
        };
        let (whole, whole_units) = score(&again);
        let (part, part_units) = rescore(&again, first.lessons, units);
        let (whole_sink, part_sink) = (
            whole_units.into_sink(&whole.lessons, 0),
            part_units.into_sink(&part.lessons, 0),
        );
        assert!(whole.lessons == part.lessons, "the lessons differ");
        assert_eq!(whole.lesson_of, part.lesson_of);
        assert_eq!(finalize(whole_sink), finalize(part_sink));
        // The renamed experiences reached the lesson.
        assert_ne!(Lesson::find(&whole.lessons, &d.id).cloned(), before);
    }

    /// `Shared`'s indexes answer as the texts they stand for: each id's mentions are the
    /// first by each experience naming it, in rank order, with its time (after `name`, and
    /// after `rename` as `name` places them); an experience is in a lesson's domain by number
    /// exactly when by text.
    #[test]
    fn shared_mentions_and_domains_are_those_of_the_texts() {
        let rules = Rules::builtin();
        let load = crate::generate::loader(2000, 5);
        let (corpus, sink) = load();
        let first = pipeline::compile(corpus, sink, &rules, &Options::default());
        let ids: Vec<&str> = first.lessons.iter().map(|l| l.id.as_str()).collect();
        assert!(ids.len() > 50);
        let (mut corpus, sink) = load();
        for (i, e) in corpus.experiences.iter_mut().enumerate() {
            // Repeats in one list, and an id renamed to one the list may name too.
            for k in 0..i % 4 {
                e.in_play.push(ids[(i * 7 + k * 13) % 40].to_string());
            }
            if i % 3 == 0 {
                e.in_play.push(ids[i % 5].to_string());
                e.in_play.push(OLD_ID.into());
            }
        }
        let opts = Options {
            stop_after: Some(Stage::Gate),
            ..Options::default()
        };
        let comp = pipeline::compile(corpus, sink, &rules, &opts);
        let inp = gate_inputs(&comp, &opts, &rules);
        let renamed: HashMap<String, String> =
            [(OLD_ID.to_string(), ids[2].to_string())].into_iter().collect();
        let again = Inputs {
            renamed: &renamed,
            ..inp
        };
        let exps = &comp.corpus.experiences;
        let expected = |shared: &Shared, inp: &Inputs, id: &str| -> Vec<Mention> {
            let mut want = Vec::new();
            for (rank, &i) in shared.in_play.iter().enumerate() {
                let named = |x: &String| inp.renamed.get(x).unwrap_or(x) == id;
                if let Some(pos) = exps[i as usize].in_play.iter().position(named) {
                    let (rank, pos, at) = (rank as u32, pos as u32, exps[i as usize].recorded_at);
                    want.push(Mention { rank, pos, at });
                }
            }
            want
        };
        let got = |shared: &Shared, id: &str| -> Vec<Mention> {
            let bits = digest::lesson_id_bits(id).expect("a lesson id");
            let (from, to) = shared.named.get(&bits).copied().unwrap_or((0, 0));
            shared.mentions[from as usize..to as usize].to_vec()
        };
        let mut renaming = prepare(&inp);
        renaming.rename(&again);
        for (shared, inp) in [
            (prepare(&inp), &inp),
            (prepare(&again), &again),
            (renaming, &again),
        ] {
            for &id in &ids[..40] {
                let want = expected(&shared, inp, id);
                assert_eq!(got(&shared, id), want, "{id}");
            }
            assert!(!got(&shared, ids[2]).is_empty());
        }

        let shared = prepare(&inp);
        let domains: BTreeSet<&str> = (exps.iter())
            .flat_map(|e| e.domains.iter().map(String::as_str))
            .chain(["no-such-domain"])
            .collect();
        assert!(domains.len() > 5);
        let mut hits = 0;
        for (rank, &i) in shared.in_play.iter().enumerate() {
            for &d in &domains {
                let by_text = exps[i as usize].domains.iter().any(|x| x == d);
                let by_number = shared.in_domain(rank as u32, shared.active_days.of(d));
                assert_eq!(by_number, by_text, "{d} at rank {rank}");
                hits += by_text as usize;
            }
        }
        assert!(hits > 100);
    }

    /// The galloping search finds the days two binary searches find, however far apart.
    #[test]
    fn days_between_are_those_two_searches_find() {
        let reference = |days: &[i64], from: i64, to: i64| -> Vec<i64> {
            let lo = days.partition_point(|&d| d <= from);
            let hi = days.partition_point(|&d| d <= to);
            days[lo..hi.max(lo)].to_vec()
        };
        // Active days as a domain has them: runs of consecutive days with gaps between.
        let mut days = Vec::new();
        let mut day = 20_000;
        for i in 0..300i64 {
            day += 1 + (i * 7919 % 11) * (i % 3);
            days.push(day);
        }
        for len in [0, 1, 2, 3, 5, 64, 300] {
            let days = &days[..len];
            for from in (19_990..day + 10).step_by(3) {
                for to in [
                    from - 2,
                    from,
                    from + 1,
                    from + 2,
                    from + 7,
                    from + 40,
                    from + 500,
                    day + 20,
                ] {
                    assert_eq!(
                        between(days, from, to),
                        &reference(days, from, to)[..],
                        "{from} {to}"
                    );
                }
            }
        }
    }

    /// What the experiences of `units_fold_like_one_pass` name besides real lesson ids.
    const OLD_ID: &str = "L0123456789ab";
}
