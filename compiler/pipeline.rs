//! The whole compile as a pure function of (records, decisions, policy): every stage after
//! load, in order, with one diagnostics sink. `why`, `trace` and `diff` call this too, so they
//! never disagree with `compile`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

use rayon::prelude::*;

use crate::cluster::fx::parts_print;
use crate::cluster::{
    self,
    fx::{FxMap, FxSet},
};
use crate::diagnostics::{self, Diagnostic, Severity, Sink, codes, counted, plural, short_list};
use crate::gate::{self, GateResult, GateVerdict};
use crate::model::{
    Action, Candidate, Cluster, Corpus, Decision, Event, Fate, Id, Kind, Lesson, LessonClaim, Millis, Name,
    Names, Source, Status,
};
use crate::outcome::{self, Verdict};
use crate::policy::Rules;
use crate::score;
use crate::{candidates, digest, normalize};

/// Pipeline stages, for `--stop-after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Load,
    Normalize,
    Outcome,
    Candidates,
    Cluster,
    Gate,
    Score,
    Emit,
}

impl Stage {
    pub const ALL: [Stage; 8] = [
        Stage::Load,
        Stage::Normalize,
        Stage::Outcome,
        Stage::Candidates,
        Stage::Cluster,
        Stage::Gate,
        Stage::Score,
        Stage::Emit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::Normalize => "normalize",
            Stage::Outcome => "outcome",
            Stage::Candidates => "candidates",
            Stage::Cluster => "cluster",
            Stage::Gate => "gate",
            Stage::Score => "score",
            Stage::Emit => "emit",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.name() == s)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Overrides `policy.min_reinforcement`.
    pub min_reinforcement: Option<u32>,
    pub stop_after: Option<Stage>,
    pub decisions: Vec<Decision>,
    /// What of the corpus the caller reads after the compile.
    pub keep: Keep,
    /// Compile for `why` about one domain (normalised): only that domain's candidates are
    /// clustered, gated and folded, with the mechanical candidates of other domains that share
    /// an operation key with one of its own (their lessons fold together: one active
    /// mechanical lesson per key). Everything `report::why` reads about the domain is then
    /// what a whole compile gives — the fold is a pass per unit, and no unit reaches across
    /// that set — but nothing else is: other domains' candidates get no cluster or lesson, the
    /// gates' and the lessons' diagnostics are not made, and the fold's own are partial (an
    /// `in_play` id naming another domain's lesson looks unknown).
    pub focus: Option<String>,
    /// The state store whose last ledger says which lesson ids users and agents may hold: a
    /// re-founding (S004) is reported only for an old id that ledger had or the journal
    /// names. `None` (or no store at the path): every re-founding the input order shows is
    /// reported.
    pub state: Option<std::path::PathBuf>,
    /// Lesson ids named outside the records: the `(id: L…)` citations of the authored skills
    /// given with `--base-skills`. One this compile does not have is looked for among the
    /// re-foundings, as an `in_play` or a decision naming it is.
    pub cited: Vec<String>,
}

/// What of the corpus the caller reads after the compile. The rest is freed as soon as no
/// later stage needs it, so that it does not add to the peak of the stages after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// Everything (`trace` counts each experience's operations and reads its dead ends).
    #[default]
    Everything,
    /// The experiences, without the operations no later stage reads (about a third of a
    /// loaded corpus; `why`). They go once the candidates are made.
    Experiences,
    /// Nothing (`compile`): the operations go once the candidates are made, the experiences
    /// once they are scored.
    Nothing,
}

/// A candidate's fate and the codes that explain it (empty only for `rule`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FateOf {
    pub fate: Fate,
    pub codes: gate::Codes,
}

/// Everything a compile computed; emit writes part of it, `why`/`trace` read the rest.
#[derive(Clone, Debug, Default)]
pub struct Compilation {
    /// The input, normalised; past the candidates stage its experiences no longer hold their
    /// narrative texts (`Experience::drop_narrative`): the candidates do.
    pub corpus: Corpus,
    pub verdicts: Vec<Verdict>,
    pub candidates: Vec<Candidate>,
    /// The names the candidates' domains and projects stand for.
    pub names: Names,
    pub clusters: Vec<Cluster>,
    pub gate: GateResult,
    pub lessons: Vec<Lesson>,
    /// Per candidate: the lesson it is part of (index into `lessons`).
    pub lesson_of: Vec<Option<u32>>,
    pub fates: Vec<FateOf>,
    pub diagnostics: Vec<Diagnostic>,
    /// The latest `recorded_at` in the input (DESIGN §1).
    pub now: Millis,
    pub min_reinforcement: u32,
    /// The last stage that ran (`Emit` for a whole compile).
    pub stopped_after: Option<Stage>,
    /// How many experiences were loaded (`corpus.experiences` may have been freed since).
    pub experience_count: usize,
    /// Old id → new id of each lesson re-founded (S004), edited wordings included: what an
    /// id someone still holds names now (`trace`'s attribution, the deltas' merged rules).
    pub refounded: BTreeMap<String, String>,
}

impl Compilation {
    /// Rules (active lessons past reinforcement), in ledger order.
    pub fn rules(&self) -> impl Iterator<Item = &Lesson> {
        self.lessons.iter().filter(|l| l.rule)
    }

    /// Frees everything but the lessons and the diagnostics (what emit reads), on every
    /// core: at a million records that is most of the memory, and emit's large documents
    /// then reuse it instead of adding to the peak.
    pub fn free_records(&mut self) {
        let experiences = std::mem::take(&mut self.corpus.experiences);
        let candidates = std::mem::take(&mut self.candidates);
        let clusters = std::mem::take(&mut self.clusters);
        rayon::join(
            || experiences.into_par_iter().for_each(drop),
            || {
                candidates.into_par_iter().for_each(drop);
                clusters.into_par_iter().for_each(drop);
            },
        );
        self.corpus = Corpus::default();
        self.verdicts = Vec::new();
        self.gate = GateResult::default();
        self.lesson_of = Vec::new();
        self.fates = Vec::new();
    }
}

/// More than this after the rest of the input, a record's time reads as a wrong clock.
const OUTLYING_GAP: Millis = 366 * 86_400_000;

/// Records dated more than a year after the rest of the input (an agent's wrong clock, a typo
/// in the year), one L013 warning each. The latest `recorded_at` is the compile's "now"
/// (DESIGN §1), so one such record moves it for every lesson: the lesson blocks rank by
/// recency to it, and a decision journalled after the compile takes its time, so a retire
/// dated there outlasts every record written before it. Only a minority after such a gap is
/// named: a history that resumed after a year's pause holds more records after it.
fn outlying_times(corpus: &Corpus) -> Sink {
    let experiences = (corpus.experiences.iter()).map(|e| (e.recorded_at, &e.id, &e.source));
    let claims = (corpus.claims.iter()).map(|c| (c.recorded_at, &c.id, &c.loc));
    let mut times: Vec<(Millis, usize)> = (experiences.clone().chain(claims.clone()))
        .enumerate()
        .map(|(i, (at, _, _))| (at, i))
        .collect();
    // Only the later half can be named, and no gap in it is wider than it spans: most inputs
    // stop here, after a selection, with no sort.
    let n = times.len();
    if n < 3 {
        return Sink::new();
    }
    let mid = n / 2;
    times.select_nth_unstable(mid);
    let later = &mut times[mid..];
    let last = later.iter().map(|t| t.0).max().unwrap_or(later[0].0);
    if last - later[0].0 <= OUTLYING_GAP {
        return Sink::new();
    }
    later.sort_unstable();
    // The first gap with fewer records after it than before it (`later[0]` is the middle one).
    let Some(k) = (1..later.len()).find(|&k| later[k].0 - later[k - 1].0 > OUTLYING_GAP) else {
        return Sink::new();
    };
    let before = later[k - 1].0;
    let records: Vec<_> = experiences.chain(claims).collect();
    (later[k..].iter())
        .map(|&(at, i)| {
            let (_, id, loc) = records[i];
            let days = (at - before) / 86_400_000;
            Diagnostic::new(
                codes::OUTLYING_TIME,
                format!(
                    "`recorded_at` {} is {days} days after the rest of the input (its latest record is from {}), so it sets the compile's now",
                    crate::time::format_rfc3339(at),
                    crate::time::format_rfc3339(before)
                ),
            )
            .subject(&**id)
            .at(loc)
            .with("recorded_at", crate::time::format_rfc3339(at))
            .with("latest_before", crate::time::format_rfc3339(before))
            .with("days", days)
        })
        .collect()
}

/// Runs normalize → outcome → candidates → cluster → gate → score on a loaded corpus.
pub fn compile(mut corpus: Corpus, load_diagnostics: Sink, rules: &Rules, opts: &Options) -> Compilation {
    let mut sink = load_diagnostics;
    let mut clock = StageClock::from_env();
    let min_reinforcement = opts.min_reinforcement.unwrap_or(rules.policy.min_reinforcement);
    let stop = opts.stop_after.unwrap_or(Stage::Emit);
    // A focused compile (`why`) makes only what its report reads: no diagnostics of lessons or
    // held-back groups, and other domains' candidates have no fate to check.
    let whole = opts.focus.is_none();
    let mut comp = Compilation {
        now: corpus.now(),
        min_reinforcement,
        stopped_after: Some(Stage::Load),
        experience_count: corpus.experiences.len(),
        ..Default::default()
    };
    if stop == Stage::Load {
        comp.corpus = corpus;
        comp.diagnostics = diagnostics::finalize(sink);
        return comp;
    }
    sink.extend(outlying_times(&corpus));

    normalize::normalize(&mut corpus, rules, &mut sink);
    sink.extend(apply_blessings(&mut corpus, &opts.decisions));
    clock.lap("normalize");
    comp.stopped_after = Some(Stage::Normalize);
    if stop > Stage::Normalize {
        comp.verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
        clock.lap("outcome");
        comp.stopped_after = Some(Stage::Outcome);
    }
    if stop > Stage::Outcome {
        (comp.candidates, comp.names) = candidates::extract(&corpus, &comp.verdicts, rules, &mut sink);
        gate::check_claims(
            &corpus,
            &comp.verdicts,
            &mut comp.candidates,
            &comp.names,
            &mut sink,
        );
        // When nobody reads them after the compile, the operations no later stage reads go
        // now, so clustering and the fold reuse their memory instead of faulting in more.
        // `trace` (everything kept) still reads the dead ends, to say which fix one gave up.
        let free_operations = opts.keep != Keep::Everything;
        corpus.experiences.par_iter_mut().for_each(|e| {
            if free_operations {
                e.drop_narrative();
                e.drop_unattributed_operations();
            }
        });
        clock.lap("candidates");
        comp.stopped_after = Some(Stage::Candidates);
    }
    if stop > Stage::Candidates {
        let focus = opts
            .focus
            .as_deref()
            .map(|d| Focus::new(&comp.candidates, &comp.names, d));
        let included = |c: &Candidate| focus.as_ref().is_none_or(|f| f.admits(c));
        comp.clusters = cluster::cluster_where(&comp.candidates, &comp.names, &rules.lexicon, included);
        clock.lap("cluster");
        comp.stopped_after = Some(Stage::Cluster);
    }
    if stop > Stage::Cluster {
        comp.gate = gate::gate(&comp.candidates, &comp.clusters);
        clock.lap("gate");
        comp.stopped_after = Some(Stage::Gate);
    }
    // Where each held-back group's diagnostic points, taken before the records are freed.
    let mut held_at = None;
    if stop > Stage::Gate {
        let inputs = score::Inputs {
            corpus: &corpus,
            verdicts: &comp.verdicts,
            candidates: &comp.candidates,
            names: &comp.names,
            clusters: &comp.clusters,
            admitted: &comp.gate.admitted,
            decisions: &opts.decisions,
            renamed: &FxMap::default(),
            rules,
            min_reinforcement,
        };
        let (scored, units) = score::score(&inputs);
        comp.lessons = scored.lessons;
        comp.lesson_of = scored.lesson_of;
        clock.lap("score: fold");
        // A decision or an `in_play` on a lesson that back-filled history re-founded follows it
        // to its new id: the fold runs again with those ids renamed (rare: only when one names
        // a lesson this compile does not have).
        let mut decisions = Cow::Borrowed(&opts.decisions[..]);
        let unknown = unknown_names(
            units.unknown_in_play(),
            &orphaned(&comp.lessons, &decisions),
            &comp.lessons,
            &opts.cited,
        );
        // Each lesson's members, when asked for here and still true below (no second fold).
        let mut members = None;
        let found = if unknown.is_empty() {
            Vec::new()
        } else {
            let of_lesson = members.insert(Members::of(&comp));
            let mut found = refoundings(&comp, of_lesson, &unknown);
            found.extend(founder_gone(&comp, &unknown, &found, opts.state.as_deref()));
            found
        };
        clock.lap("score: names");
        // Old id → new id, for a second pass (declared here: its units borrow it).
        let renamed;
        let units = match follow_refounded(&comp, &corpus, &found, &opts.decisions) {
            Some((followed, old_to_new)) => {
                // Only the units that hold a lesson the renaming points to fold again; the
                // first pass's lessons of the others are taken over, so the two passes never
                // hold their lessons at once.
                members = None;
                decisions = Cow::Owned(followed);
                renamed = old_to_new;
                let (scored, units) = score::rescore(
                    &score::Inputs {
                        decisions: &decisions,
                        renamed: &renamed,
                        ..inputs
                    },
                    std::mem::take(&mut comp.lessons),
                    units,
                );
                comp.lessons = scored.lessons;
                comp.lesson_of = scored.lesson_of;
                clock.lap("score: again");
                units
            }
            None => units,
        };
        // The pass that stands is reported; what its units kept for a second pass goes with it.
        sink.extend(units.into_sink(&comp.lessons, comp.now));
        drop_attributed_no_candidates(&mut sink, &comp.lessons, &corpus);
        sink.extend(
            orphaned(&comp.lessons, &decisions)
                .into_iter()
                .map(orphan_diagnostic),
        );
        // Per lesson and per candidate, in parallel; each collects in order.
        if whole {
            let members = members.unwrap_or_else(|| Members::of(&comp));
            sink.extend(lesson_diagnostics(
                &comp,
                &corpus.claims,
                &members,
                rules.policy.min_reinforcement,
            ));
            sink.extend(conflicting_rules(&comp.lessons, &rules.lexicon));
            let policy = &rules.policy;
            sink.extend(crate::bypass::findings(
                &comp.lessons,
                &policy.bypasses,
                policy.bypass_matcher(),
            ));
            // Those found by name stand (the fold's renaming kept their lessons' ids); the
            // input order is asked again of the lessons as they are now.
            let mut found: Vec<Refounding> = found
                .into_iter()
                .filter(|r| !matches!(r.found_by, FoundBy::Order { .. }))
                .collect();
            found.extend(refoundings(&comp, &members, &HashSet::new()));
            let (reported, renamed) = refounded(&comp, found, &unknown, opts.state.as_deref());
            sink.extend(reported);
            comp.refounded = renamed;
        }
        clock.lap("score: report");
        comp.fates = fates(&comp);
        if opts.keep == Keep::Nothing {
            if whole {
                held_at = Some(gate::held_locations(&comp.gate, &comp.candidates, &corpus));
            }
            std::mem::take(&mut corpus.experiences)
                .into_par_iter()
                .for_each(drop);
        }
        clock.lap("score");
        comp.stopped_after = Some(Stage::Score);
    }
    // The gate's diagnostics, made once the lifecycle fold (which never reads them) is done
    // and its working memory is free again.
    if stop > Stage::Cluster && whole {
        let at = held_at.unwrap_or_else(|| gate::held_locations(&comp.gate, &comp.candidates, &corpus));
        gate::held_diagnostics(
            &comp.gate,
            at,
            &comp.verdicts,
            &comp.candidates,
            &comp.clusters,
            rules,
            &mut sink,
        );
    }
    comp.corpus = corpus;
    comp.diagnostics = diagnostics::finalize(sink);
    clock.lap("finalize");
    if comp.stopped_after == Some(Stage::Score) {
        if whole && let Some(d) = check_fates(&comp) {
            comp.diagnostics.push(d);
        }
        comp.stopped_after = Some(Stage::Emit);
        clock.lap("fate check");
    }
    comp
}

/// Which candidates a compile focused on `domain` clusters: the domain's own, and the
/// mechanical candidates of any domain whose operation key one of its mechanical candidates has.
struct Focus<'a> {
    /// The domain's place in the compile's names (`None`: no record names it).
    domain: Option<Name>,
    keys: BTreeSet<&'a str>,
}

impl<'a> Focus<'a> {
    fn new(candidates: &'a [Candidate], names: &Names, domain: &str) -> Focus<'a> {
        let domain = names.find(domain);
        let keys = (candidates.iter())
            .filter(|c| Some(c.domain) == domain && c.working().is_some())
            .filter_map(|c| c.key())
            .collect();
        Focus { domain, keys }
    }

    fn admits(&self, c: &Candidate) -> bool {
        Some(c.domain) == self.domain
            || (c.working().is_some() && c.key().is_some_and(|k| self.keys.contains(k)))
    }
}

/// `skillc bless` decisions mark their experience blessed, as if it had been recorded so. A
/// bless whose experience is not in this compile's input is S007; one of an experience already
/// blessed (by its record or an earlier bless) is S008: neither changes anything.
fn apply_blessings(corpus: &mut Corpus, decisions: &[Decision]) -> Vec<Diagnostic> {
    let blesses: Vec<&Decision> = decisions.iter().filter(|d| d.action == Action::Bless).collect();
    if blesses.is_empty() {
        return Vec::new();
    }
    // Experience id → (index, blessed by its record).
    let by_id: HashMap<&str, (usize, bool)> = (corpus.experiences.iter().enumerate())
        .map(|(i, e)| (&*e.id, (i, e.blessed)))
        .collect();
    let mut out = Vec::new();
    let mut done: HashSet<&str> = HashSet::new();
    let mut bless = Vec::new();
    for d in blesses {
        let target = d.target.as_str();
        let Some(&(i, by_record)) = by_id.get(target) else {
            let what = " names no experience of this compile's input and has no effect";
            out.push(score::decision_diagnostic(codes::ORPHANED_DECISION, d, what));
            continue;
        };
        if by_record || !done.insert(target) {
            let why = if by_record {
                "its record says blessed"
            } else {
                "it was blessed already"
            };
            let what = format!(" had no effect: {why}");
            out.push(score::decision_diagnostic(codes::INEFFECTIVE_DECISION, d, &what));
            continue;
        }
        bless.push(i);
    }
    for i in bless {
        corpus.experiences[i].blessed = true;
    }
    out
}

/// Each candidate's fate: refused and held-back from the gates; members of a lesson by the
/// lesson's final state.
fn fates(comp: &Compilation) -> Vec<FateOf> {
    (0..comp.candidates.len())
        .into_par_iter()
        .map(|i| match &comp.gate.verdicts[i] {
            Some(GateVerdict::Refused(c)) => FateOf {
                fate: Fate::Refused,
                codes: c,
            },
            Some(GateVerdict::HeldBack(c)) => FateOf {
                fate: Fate::HeldBack,
                codes: c,
            },
            Some(GateVerdict::Admitted) | None => match comp.lesson_of.get(i).copied().flatten() {
                Some(li) => {
                    let l = &comp.lessons[li as usize];
                    match l.status {
                        _ if l.rule => FateOf {
                            fate: Fate::Rule,
                            codes: &[],
                        },
                        Status::Active => FateOf {
                            fate: Fate::Lesson,
                            codes: &[codes::BELOW_REINFORCEMENT],
                        },
                        Status::Claimed => FateOf {
                            fate: Fate::Lesson,
                            codes: &[codes::NO_EVIDENCE],
                        },
                        Status::Superseded => FateOf {
                            fate: Fate::HeldBack,
                            codes: &[codes::SUPERSEDED],
                        },
                        Status::Retired => FateOf {
                            fate: Fate::HeldBack,
                            codes: &[codes::RETIRED_EVIDENCE],
                        },
                    }
                }
                // Admitted but never reached by the fold: cannot happen; reported by check_fates.
                None => FateOf {
                    fate: Fate::HeldBack,
                    codes: &[],
                },
            },
        })
        .collect()
}

/// The candidates (indices) that joined each lesson, in candidate order: lesson `li`'s are
/// `of[start[li]..start[li + 1]]`. One vector for all lessons: a vector each was 400 000
/// allocations at a million experiences.
struct Members {
    start: Vec<usize>,
    of: Vec<usize>,
}

impl Members {
    /// From each candidate's lesson (`Compilation::lesson_of`) among `lessons`.
    fn new(lessons: usize, lesson_of: &[Option<u32>]) -> Members {
        let mut start = vec![0; lessons + 1];
        for &l in lesson_of.iter().flatten() {
            start[l as usize + 1] += 1;
        }
        for li in 1..start.len() {
            start[li] += start[li - 1];
        }
        let mut next = start.clone();
        let mut of = vec![0; start[lessons]];
        for (i, l) in lesson_of.iter().enumerate() {
            if let Some(l) = l {
                let at = &mut next[*l as usize];
                of[*at] = i;
                *at += 1;
            }
        }
        Members { start, of }
    }

    /// Each lesson's members in a compilation.
    fn of(comp: &Compilation) -> Members {
        Members::new(comp.lessons.len(), &comp.lesson_of)
    }

    /// Lesson `li`'s members.
    fn lesson(&self, li: usize) -> &[usize] {
        &self.of[self.start[li]..self.start[li + 1]]
    }

    /// Every lesson's members, in lesson order.
    fn par_iter(&self) -> impl IndexedParallelIterator<Item = &[usize]> {
        (0..self.start.len() - 1)
            .into_par_iter()
            .map(|li| self.lesson(li))
    }
}

/// Rules that contradict each other: (lessons for it, lessons against it).
type Sides<'a> = (Vec<&'a Lesson>, Vec<&'a Lesson>);

/// The (scope, domain) of a contradiction, and its sides.
type Conflict<'a> = ((&'a str, &'a str), Sides<'a>);

/// Rules of one scope and domain that say opposite things: "Always X" or "X" beside "Never X",
/// "Don't X", "Avoid X" or a dead end X, and do rules the lexicon reads as a lesson and its
/// negation in other words (`negations`). Both stay rules (no outcome decided between them);
/// the warning names them so a reader of SKILL.md is not left with both.
fn conflicting_rules(lessons: &[Lesson], lexicon: &cluster::Lexicon) -> Vec<Diagnostic> {
    // (scope, domain, what the rule is about) → (lessons for it, lessons against it).
    let mut groups: BTreeMap<(&str, &str, String), Sides> = BTreeMap::new();
    for l in lessons.iter().filter(|l| l.rule) {
        let Some((against, body)) = stance(l) else {
            continue;
        };
        let sides = groups.entry((&l.scope, &l.domain, body)).or_default();
        if against {
            sides.1.push(l);
        } else {
            sides.0.push(l);
        }
    }
    let quote = |l: &Lesson| {
        format!(
            "`{}` ({}, confidence {})",
            l.text,
            l.id,
            score::confidence_text(l.confidence)
        )
    };
    let quoted = |side: &[&Lesson]| side.iter().map(|l| quote(l)).collect::<Vec<_>>().join(", ");
    let literal: Vec<Conflict> = (groups.into_iter())
        .filter(|(_, (f, a))| !f.is_empty() && !a.is_empty())
        .map(|((scope, domain, _), sides)| ((scope, domain), sides))
        .collect();
    let named: HashSet<(&str, &str)> = (literal.iter())
        .flat_map(|(_, (f, a))| {
            f.iter()
                .flat_map(|x| a.iter().map(|y| (x.id.as_str(), y.id.as_str())))
        })
        .collect();
    let reworded = negations(lessons, lexicon)
        .into_iter()
        .filter(|(_, (f, a))| !named.contains(&(f[0].id.as_str(), a[0].id.as_str())));
    (literal.into_iter().chain(reworded))
        .map(|((scope, domain), (f, a))| {
            let ids: Vec<String> = f.iter().chain(&a).map(|l| l.id.clone()).collect();
            Diagnostic::new(
                codes::CONFLICTING_RULES,
                format!(
                    "rules in {scope} / {domain} contradict each other: {} against {}",
                    quoted(&f),
                    quoted(&a)
                ),
            )
            .subject(&f[0].id)
            .domain(domain)
            .with("lessons", ids)
        })
        .collect()
}

/// Pairs of do rules of one scope and domain that the lexicon reads as a lesson and its
/// negation in other words ("Avoid mocking the HTTP client in the integration suite when …" /
/// "Mock the HTTP client in the integration suite when …"), as (scope, domain) → ([the rule
/// that asserts], [the rule that negates]). Only pairs with a negating side are compared: at a
/// million records all pairs of each domain's rules would be millions of comparisons.
fn negations<'a>(lessons: &'a [Lesson], lexicon: &cluster::Lexicon) -> Vec<Conflict<'a>> {
    let mut groups: BTreeMap<(&str, &str), Vec<&Lesson>> = BTreeMap::new();
    for l in lessons.iter().filter(|l| l.rule && l.kind == Kind::Do) {
        groups.entry((&l.scope, &l.domain)).or_default().push(l);
    }
    let groups: Vec<_> = groups.into_iter().filter(|(_, rules)| rules.len() > 1).collect();
    let per_group: Vec<Vec<_>> = groups
        .par_iter()
        .map(|(at, rules)| {
            let analyses: Vec<cluster::Analysis> = rules.iter().map(|l| lexicon.analyze(&l.text)).collect();
            let negates: Vec<bool> = (analyses.iter())
                .map(|a| a.tokens.iter().any(|t| t.negated_in != 0))
                .collect();
            let mut pairs = Vec::new();
            for (i, x) in analyses.iter().enumerate() {
                if !negates[i] {
                    continue;
                }
                for (j, y) in analyses.iter().enumerate() {
                    // Two negating rules are compared once, from the first.
                    if i == j || negates[j] && j < i || !cluster::negation(lexicon, x, y) {
                        continue;
                    }
                    pairs.push((*at, (vec![rules[j]], vec![rules[i]])));
                }
            }
            pairs
        })
        .collect();
    per_group.into_iter().flatten().collect()
}

/// Whether a rule argues against what it names, and what it names (lower-case words, its
/// "always", "never", "don't" or "avoid" taken off); `None` for a watch lesson, which warns
/// rather than tells, or a text of fewer than two words once that is off.
fn stance(l: &Lesson) -> Option<(bool, String)> {
    if l.kind == Kind::Watch {
        return None;
    }
    let text = l.text.to_lowercase().replace('\u{2019}', "'");
    let words: Vec<&str> = (text.split_whitespace())
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ',' | ';' | ':' | '!' | '"')))
        .filter(|w| !w.is_empty())
        .collect();
    let (against, rest) = match words.as_slice() {
        ["never" | "don't" | "dont" | "avoid", rest @ ..] | ["do", "not", rest @ ..] => (true, rest),
        ["always", rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    let against = against || l.kind == Kind::Avoid;
    (rest.len() >= 2).then(|| (against, rest.join(" ")))
}

/// S001 for a superseded lesson. A nightly job lists every lesson ever superseded, every
/// night: the day it left tells today's news from last week's, and the experiences that
/// contradicted it say what it fell to (the S002 that named them is said on that night only).
fn superseded_note(l: &Lesson, base: impl FnOnce(String) -> Diagnostic) -> Diagnostic {
    let on = l.last_day(Event::Superseded);
    let mut against: Vec<&str> = (l.history.iter())
        .filter(|h| h.event == Event::Contradicted)
        .flat_map(|h| h.experiences.iter().map(|id| &**id))
        .collect();
    against.dedup();
    let mut message = String::from("lesson superseded");
    if let Some(on) = &on {
        message.push_str(" on ");
        message.push_str(on);
    }
    message.push_str(": ");
    message.push_str(l.reason.as_deref().unwrap_or("replaced"));
    if !against.is_empty() {
        message.push_str(&format!("; contradicted by {}", short_list(&against, 3)));
    }
    let mut d = base(message)
        .with("superseded_by", l.superseded_by.clone())
        .with("confidence", score::confidence_value(l.confidence));
    if let Some(on) = on {
        d = d.with("superseded_on", on);
    }
    if !against.is_empty() {
        d = d.with("contradicted_by", against);
    }
    d
}

/// One diagnostic per lesson that is not a rule, naming every experience behind it.
/// `policy_min` is policy.yaml's threshold, which `--min-reinforcement` may have overridden.
fn lesson_diagnostics<'a>(
    comp: &'a Compilation,
    claims: &[LessonClaim],
    members: &Members,
    policy_min: u32,
) -> Vec<Diagnostic> {
    // Every experience behind a lesson: its members' and its evidence, with repeats.
    let all_ids = |l: &'a Lesson, members: &[usize]| -> Vec<&'a str> {
        let mut ids: Vec<&str> = members.iter().map(|&i| &*comp.candidates[i].record_id).collect();
        ids.extend(l.evidence.iter().map(|id| &**id));
        ids
    };
    // Sorted, each once.
    let ids_of = |l: &'a Lesson, members: &[usize]| -> Vec<&'a str> {
        let mut ids = all_ids(l, members);
        ids.sort();
        ids.dedup();
        ids
    };
    // The same ids for a note that is only folded away: its group sorts and deduplicates
    // every id at the end, so here only the copies of one id are dropped, by address without
    // reading their texts (a member's record id and the evidence naming it share one).
    let unsorted_ids = |l: &'a Lesson, members: &[usize]| {
        let mut ids = all_ids(l, members);
        ids.sort_unstable_by_key(|id| (id.as_ptr(), id.len()));
        ids.dedup_by_key(|id| (id.as_ptr(), id.len()));
        ids.into_iter().map(str::to_string)
    };
    // A lesson's diagnostic (none for a rule).
    let code_of = |l: &Lesson| match l.status {
        Status::Active if l.rule => None,
        Status::Active => Some(codes::BELOW_REINFORCEMENT),
        Status::Claimed => Some(codes::NO_EVIDENCE),
        Status::Superseded => Some(codes::SUPERSEDED),
        Status::Retired => Some(codes::RETIRED_EVIDENCE),
    };
    // These are notes (the registry says which), folded as they are made. Superseded and
    // unreinforced lessons are hundreds of thousands at a million records and fold into one
    // note per (code, domain), so only the notes that can show are made in full: the first
    // few of a group in output order, which is ledger order (the notes' subject is the lesson
    // id, and nothing before it differs). The others leave only their ids.
    let is_note = |code| diagnostics::lookup(code).is_some_and(|c| c.severity == Severity::Note);
    let mut seen: FxMap<(&str, &str), usize> = FxMap::default();
    let unshown: Vec<Option<&'static str>> = (comp.lessons.iter())
        .map(|l| {
            let code = code_of(l).filter(|&code| is_note(code))?;
            let n = seen.entry((code, l.domain.as_str())).or_insert(0);
            *n += 1;
            (*n > diagnostics::NOTES_KEPT_APART).then_some(code)
        })
        .collect();
    let earlier = (comp.lessons.par_iter().zip(members.par_iter()).zip(&unshown))
        .filter_map(|((l, members), code)| Some((l, members, (*code)?)))
        .fold(diagnostics::Notes::default, |mut notes, (l, members, code)| {
            notes.add_unshown(code, Some(&l.domain), &l.id, unsorted_ids(l, members));
            notes
        })
        .reduce(diagnostics::Notes::default, diagnostics::Notes::merge);
    let shown = (comp.lessons.par_iter().zip(members.par_iter()).zip(&unshown))
        .filter(|(_, unshown)| unshown.is_none());
    diagnostics::folding_with(
        shown.filter_map(|((l, members), _)| {
            let code = code_of(l)?;
            let ids = ids_of(l, members);
            let base = |msg: String| {
                Diagnostic::new(code, msg)
                    .subject(&l.id)
                    .domain(&l.domain)
                    .with("lesson", l.id.clone())
                    .with("text", l.text.clone())
                    .experiences(&ids)
            };
            Some(match l.status {
                Status::Active => {
                    let min = comp.min_reinforcement;
                    // A threshold other than the policy's came from the flag: say so, so no
                    // one edits the data (or the policy) for what one run was asked.
                    let from_flag = min != policy_min;
                    let needs = match from_flag {
                        true => format!(
                            "{min} here, as `--min-reinforcement {min}` was given (policy.yaml asks {policy_min})"
                        ),
                        false => min.to_string(),
                    };
                    let d = base(format!(
                        "lesson has {}; a rule needs {needs}",
                        plural(l.reinforcement as usize, "supporting experience", "supporting experiences")
                    ))
                    .with("support", l.reinforcement)
                    .with("min_reinforcement", min);
                    if from_flag {
                        d.with("policy_min_reinforcement", policy_min)
                    } else {
                        d
                    }
                }
                Status::Claimed => {
                    let d = base("claimed lesson names no evidence and stays claimed".into())
                        .with("confidence", score::confidence_value(l.confidence));
                    // The claim's file and line, as G005 and G006 give theirs: the claim is
                    // what to edit.
                    let claim = members.iter().find_map(|&i| match comp.candidates[i].source {
                        Source::Claim(ci) => claims.get(ci as usize),
                        Source::Experience(_) => None,
                    });
                    match claim {
                        Some(c) => d.at(&c.loc),
                        None => d,
                    }
                }
                Status::Superseded => superseded_note(l, base),
                Status::Retired => base(format!(
                    "{} {} behind a lesson the user retired and {} not re-learned: {}",
                    counted(ids.len(), "experience"),
                    if ids.len() == 1 { "sits" } else { "sit" },
                    if ids.len() == 1 { "is" } else { "are" },
                    short_list(&ids, 3)
                )),
            })
        }),
        earlier,
    )
}

/// K001 says an experience yields no candidate lesson and asks for one to be recorded. An
/// experience that confirmed or contradicted a lesson it had in play, in a domain, did
/// contribute there (its outcome is that lesson's evidence, DESIGN §6), so it gets no K001 in
/// that domain: the candidates stage cannot know that, so its notes (folded per domain) lose
/// those experiences here (`diagnostics::drop_experiences`).
///
/// A folded note left with one experience reads as that experience's own note again, and so
/// names its file and line, as the note would have had the experience been alone in its
/// domain from the start (the fold had dropped the location its members did not share).
fn drop_attributed_no_candidates(sink: &mut Sink, lessons: &[Lesson], corpus: &Corpus) {
    // Only the (experience, domain) pairs a note names can leave one, so the lessons'
    // attributions (a million and a half at a million experiences) are looked up among those
    // on every core, where a set of all of them was filled on one.
    let attributed: FxSet<(&str, &str)> = {
        let noted: FxSet<(&str, &str)> = (sink.iter())
            .filter(|d| d.code == codes::NO_CANDIDATES)
            .filter_map(|d| Some((d, d.domain.as_deref()?)))
            .flat_map(|(d, domain)| d.experience_id_iter().map(move |id| (id, domain)))
            .collect();
        if noted.is_empty() {
            return;
        }
        let found: Vec<(&str, &str)> = (lessons.par_iter())
            .flat_map_iter(|l| {
                (l.history.iter())
                    .filter(|h| {
                        matches!(h.event, Event::Confirmed | Event::Contradicted)
                            || (h.event == Event::Admitted
                                && h.detail.as_deref() == Some(score::CLAIM_GAINED_EVIDENCE))
                    })
                    .flat_map(move |h| h.experiences.iter().map(move |e| (&**e, l.domain.as_str())))
            })
            .filter(|pair| noted.contains(pair))
            .collect();
        found.into_iter().collect()
    };
    if attributed.is_empty() {
        return;
    }
    sink.retain_mut(|d| {
        // The domain is copied for K001's few folded notes only, not for every diagnostic.
        let Some(domain) = (d.code == codes::NO_CANDIDATES)
            .then(|| d.domain.clone())
            .flatten()
        else {
            return true;
        };
        diagnostics::drop_experiences(d, |id| attributed.contains(&(id, domain.as_str())))
    });
    // The notes left with one experience and no location: few (one per domain at most).
    let mut unplaced: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, d) in sink.iter().enumerate() {
        if d.code == codes::NO_CANDIDATES
            && d.location.is_none()
            && d.evidence.get("count").is_none()
            && let Some([id]) = d
                .evidence
                .get("experiences")
                .and_then(serde_json::Value::as_array)
                .map(Vec::as_slice)
            && let Some(id) = id.as_str()
        {
            unplaced.entry(id.to_string()).or_default().push(i);
        }
    }
    if unplaced.is_empty() {
        return;
    }
    // Their experiences, found on every core and placed in input order (of two with one id,
    // the later's place stands, as it always did).
    let placed: Vec<usize> = (corpus.experiences.par_iter().enumerate())
        .filter(|(_, e)| unplaced.contains_key(&*e.id))
        .map(|(i, _)| i)
        .collect();
    for i in placed {
        let e = &corpus.experiences[i];
        for &n in &unplaced[&*e.id] {
            sink[n].location = Some(e.source.clone());
        }
    }
}

/// The journal's lesson decisions whose target no lesson of this compile has (a `bless` names
/// an experience, not a lesson).
fn orphaned<'d>(lessons: &[Lesson], decisions: &'d [Decision]) -> Vec<&'d Decision> {
    let mut wanted: Vec<&Decision> = decisions.iter().filter(|d| d.action != Action::Bless).collect();
    if wanted.is_empty() {
        return wanted;
    }
    let ids: HashSet<&str> = lessons.iter().map(|l| l.id.as_str()).collect();
    wanted.retain(|d| !ids.contains(d.target.as_str()));
    wanted
}

fn orphan_diagnostic(d: &Decision) -> Diagnostic {
    Diagnostic::new(
        codes::ORPHANED_DECISION,
        format!(
            "the journal's {} of {} names no lesson of this compile and has no effect",
            d.action.as_str(),
            d.target
        ),
    )
    .subject(&d.target)
    .with("action", d.action.as_str())
}

/// Old id → new id of each lesson `found` re-founded (S004), and of each edit of one (an
/// edit's id hashes its lesson's id), with the journal's decisions renamed to follow; `None`
/// when nothing names an old id (no decision, no experience's `in_play`).
fn follow_refounded(
    comp: &Compilation,
    corpus: &Corpus,
    found: &[Refounding],
    decisions: &[Decision],
) -> Option<(Vec<Decision>, FxMap<String, String>)> {
    // Old id → (new id, the lesson: an edit's id hashes its domain, kind and key too).
    let mut renamed: HashMap<String, (String, &Lesson)> = (found.iter())
        .filter_map(|r| {
            Some((
                r.old_id.clone(),
                (r.new_id.clone(), Lesson::find(&comp.lessons, &r.new_id)?),
            ))
        })
        .collect();
    if renamed.is_empty() {
        return None;
    }
    // In journal order: an edit of an edited wording comes after the edit that made it (the
    // command refuses ids the last compile does not have), so the chain's renames are known.
    let mut followed = decisions.to_vec();
    let mut changed = false;
    for d in &mut followed {
        let Some((new_id, lesson)) = renamed.get(&d.target).cloned() else {
            continue;
        };
        if d.action == Action::Edit
            && let Some(text) = &d.text
        {
            let text = crate::normalize::text(text);
            let (was, now) = (
                score::edited_id(lesson, &d.target, &text),
                score::edited_id(lesson, &new_id, &text),
            );
            renamed.insert(was, (now, lesson));
        }
        d.target = new_id;
        changed = true;
    }
    let renamed: FxMap<String, String> = renamed.into_iter().map(|(old, (new, _))| (old, new)).collect();
    let named =
        || (corpus.experiences.par_iter()).any(|e| e.in_play.iter().any(|id| renamed.contains_key(id)));
    (changed || named()).then_some((followed, renamed))
}

/// Lessons whose founder's record is gone from the input (its file deleted, or another
/// record now holds its id and the old one is the duplicate L004 drops): no member gives the
/// old id any more, so `refoundings` cannot find it. The last compile's ledger still holds
/// the lesson an unknown id named, with its founder and wording; a lesson of this compile
/// with that identity (domain, kind, key, founder, wording) that holds most of its evidence
/// is the same lesson, re-founded by the member that founds it now.
fn founder_gone(
    comp: &Compilation,
    unknown: &HashSet<String>,
    found: &[Refounding],
    state: Option<&std::path::Path>,
) -> Vec<Refounding> {
    #[derive(serde::Deserialize)]
    struct Row {
        founder: String,
        text: String,
        domain: String,
        kind: String,
        #[serde(default)]
        operation_key: Option<String>,
        #[serde(default)]
        evidence: Vec<String>,
    }
    // A first compile (an empty store) has no ledger to ask: skip a lookup per unknown id.
    let Some(store) = last_compile(state).filter(|s| s.has_compile().unwrap_or(false)) else {
        return Vec::new();
    };
    let known: HashSet<&str> = found.iter().map(|r| r.old_id.as_str()).collect();
    let mut wanted: Vec<&str> = (unknown.iter())
        .map(String::as_str)
        .filter(|u| !known.contains(u))
        .collect();
    wanted.sort_unstable();
    let rows: Vec<(&str, String)> = (wanted.into_iter())
        .filter_map(|id| Some((id, store.known_lesson(id).ok()??)))
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    // The lessons of each (domain, kind, key): an identity hashes those with the founder and
    // wording, so only they can carry an old id.
    let mut by_slot: HashMap<(&str, &str, Option<&str>), Vec<&Lesson>> = HashMap::new();
    for l in comp.lessons.iter().filter(|l| !l.is_edit()) {
        let slot = (l.domain.as_str(), l.kind.as_str(), l.operation_key.as_deref());
        by_slot.entry(slot).or_default().push(l);
    }
    let mut out = Vec::new();
    for (old_id, row) in rows {
        let Ok(old) = serde_json::from_str::<Row>(&row) else {
            continue;
        };
        let slot = (
            old.domain.as_str(),
            old.kind.as_str(),
            old.operation_key.as_deref(),
        );
        let Some(lessons) = by_slot.get(&slot) else {
            continue;
        };
        // The row is the lesson the id was made for (not an edit's wording, whose id hashes
        // another id).
        if score::identity(lessons[0], &old.founder, &old.text) != old_id {
            continue;
        }
        let evidence: HashSet<&str> = old.evidence.iter().map(String::as_str).collect();
        let best = (lessons.iter().copied())
            .filter(|l| l.id != old_id)
            .map(|l| (l.evidence.iter().filter(|e| evidence.contains(&e[..])).count(), l))
            .filter(|(shared, _)| *shared > 0)
            .max_by(|(a, x), (b, y)| a.cmp(b).then(y.id.cmp(&x.id)));
        if let Some((_, l)) = best {
            out.push(Refounding {
                old_id: old_id.to_string(),
                new_id: l.id.clone(),
                old_founder: old.founder.as_str().into(),
                found_by: FoundBy::FounderGone,
            });
        }
    }
    out
}

/// The state store of the last compile, if there is one to read.
fn last_compile(state: Option<&std::path::Path>) -> Option<crate::store::Store> {
    // Read only: `diff` runs this compile too, and must leave the store as it was.
    crate::store::Store::open_read_only(state?).ok()?
}

/// A lesson an older member re-founded: the id it had before and the id it has now.
struct Refounding {
    old_id: String,
    new_id: String,
    old_founder: Id,
    found_by: FoundBy,
}

/// How a re-founding was found, which its S004 says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FoundBy {
    /// A name in play or in the journal is the id a member would give the lesson as founder.
    Name,
    /// The input order shows a back-fill; `tie`: the new founder was recorded at the same time
    /// as the old one and comes first by id (the fold's tie-break), rather than earlier.
    Order { tie: bool },
    /// The old founder's record is no longer in the input (`founder_gone`).
    FounderGone,
}

/// The ids some experience has in play (its S005 says which) or an orphaned decision names,
/// that no lesson of the fold has: the old ids a re-founding may explain.
fn unknown_names(
    score_sink: &[Diagnostic],
    orphaned: &[&Decision],
    lessons: &[Lesson],
    cited: &[String],
) -> HashSet<String> {
    let in_play = (score_sink.iter())
        .filter(|d| d.code == codes::UNKNOWN_IN_PLAY)
        .flat_map(|d| d.evidence["ids"].as_array().into_iter().flatten())
        .filter_map(|id| id.as_str());
    let decided = orphaned.iter().map(|d| d.target.as_str());
    let cited = (cited.iter().map(String::as_str)).filter(|id| Lesson::find(lessons, id).is_none());
    in_play.chain(decided).chain(cited).map(String::from).collect()
}

/// Back-filled history (DESIGN §6 identity): the record directory only grows, so a member that
/// sits later in (path, line) order but earlier in time than the members before it arrived after
/// them, and re-founded their lesson under a new id. Reports the id the lesson had before.
///
/// The input order only suggests a back-fill: files named out of time order (one per agent, or
/// per session by uuid) look the same. So when the state store is known, an old id is reported
/// only if the last compile's ledger had it or a decision names it — an id nobody was ever
/// shown needs no "use the new id" (and the first compile reports none).
fn refounded(
    comp: &Compilation,
    mut found: Vec<Refounding>,
    unknown: &HashSet<String>,
    state: Option<&std::path::Path>,
) -> (Vec<Diagnostic>, BTreeMap<String, String>) {
    // One report per old id: found by name and by order, or through a chain's first wording
    // and its edit.
    let mut seen = HashSet::new();
    found.retain(|r| seen.insert(r.old_id.clone()));
    // Old ids whose re-founding an earlier night reported: followed, not reported again.
    let mut quiet = HashSet::new();
    // A known store that does not exist yet (`trace` or `why` before the first compile) has
    // shown no id, as the first compile's own, just created, store has not.
    if !found.is_empty()
        && let Some(path) = state
    {
        let store = last_compile(Some(path));
        found.retain(|r| {
            unknown.contains(r.old_id.as_str())
                || (store.as_ref()).is_some_and(|s| s.ledger_lesson(&r.old_id).is_ok_and(|row| row.is_some()))
        });
        // A re-founding is news on the night it happened: the compile whose ledger lost the
        // old id (and a re-run of that night, with the same "now"). Later nights the records
        // and the journal still name the old id, and still follow it to the new one, but a
        // morning report repeating it would drown what is new (`lessons` commands still
        // point a decision on the old id at the new one, from the store).
        quiet = (found.iter())
            .filter(|r| {
                (store.as_ref()).is_some_and(|s| {
                    s.lost_at(&r.old_id)
                        .is_ok_and(|at| at.is_some_and(|at| at < comp.now))
                })
            })
            .map(|r| r.old_id.clone())
            .collect();
    }
    // An edit's id hashes the id it edited, so a re-founded lesson's edited wordings (the ids
    // its lesson blocks showed) have new ids too: one report for each.
    let edit_of: HashMap<&str, &Lesson> = if found.is_empty() {
        HashMap::new()
    } else {
        (comp.lessons.iter())
            .filter(|l| l.is_edit())
            .filter_map(|l| Some((l.supersedes.as_deref()?, l)))
            .collect()
    };
    let report = |l: &Lesson, old_id: String, what: String, r: &Refounding| {
        let old_founder = &r.old_founder;
        let who = match r.found_by {
            FoundBy::FounderGone => format!(
                "its founder {old_founder} is no longer in the input (a file removed, or another record now has its id); {}",
                l.founder
            ),
            FoundBy::Order { tie: true } => format!(
                "a back-filled experience ({}, recorded at the same time as {old_founder} and first by id)",
                l.founder
            ),
            FoundBy::Order { tie: false } => format!("a back-filled older experience ({})", l.founder),
            FoundBy::Name => format!(
                "an older experience ({}), back-filled or newly admissible,",
                l.founder
            ),
        };
        Diagnostic::new(
            codes::REFOUNDED,
            format!("{who} re-founded lesson {old_id}{what} as {}", l.id),
        )
        .subject(&l.id)
        .domain(&l.domain)
        .with("old_id", old_id)
        .with("new_id", l.id.clone())
        .experiences([&*l.founder, old_founder])
    };
    let mut out = Vec::new();
    let mut renamed = BTreeMap::new();
    for r in found {
        let Some(base) = Lesson::find(&comp.lessons, &r.new_id) else {
            continue;
        };
        let (mut old, mut new) = (r.old_id.clone(), base.id.as_str());
        let news = !quiet.contains(&r.old_id);
        if news {
            out.push(report(base, r.old_id.clone(), String::new(), &r));
        }
        renamed.insert(old.clone(), new.to_string());
        while let Some(edit) = edit_of.get(new) {
            let was = score::edited_id(edit, &old, &edit.text);
            let what = format!(" (an edit of {old})");
            if news {
                out.push(report(edit, was.clone(), what, &r));
            }
            renamed.insert(was.clone(), edit.id.clone());
            (old, new) = (was, edit.id.as_str());
        }
    }
    (out, renamed)
}

/// Each lesson whose founder arrived after members recorded before it (see `refounded`).
///
/// The input order misses a back-fill whose file sorts first, and a member that became
/// admissible (a `bless`) founds its lesson anew with nothing back-filled. So an id in
/// `unknown` is also matched against the id each member would give the lesson as its founder:
/// an id is a hash of its founder and wording, so a match is the id a past compile showed.
/// That makes the result depend on the records, not on how their files are named.
fn refoundings(comp: &Compilation, members: &Members, unknown: &HashSet<String>) -> Vec<Refounding> {
    // An edit's lesson holds the members; the identity to re-found is its chain's first wording.
    // (An edit supersedes a lesson: its history, a cache miss per lesson, is read only then.)
    let by_id: HashMap<&str, usize> = if (comp.lessons.iter()).any(|l| l.supersedes.is_some() && l.is_edit())
    {
        (comp.lessons.iter().enumerate())
            .map(|(i, l)| (l.id.as_str(), i))
            .collect()
    } else {
        HashMap::new()
    };
    let unedited = |mut li: usize| {
        while let Some(&before) = (comp.lessons[li].supersedes.as_deref()).and_then(|id| by_id.get(id))
            && comp.lessons[li].is_edit()
        {
            li = before;
        }
        li
    };
    // The unknown ids that can be an identity, as numbers: a member's identity is compared
    // without making its text (a million of them at 1 M).
    let wanted: FxSet<u64> = unknown
        .iter()
        .filter_map(|id| digest::lesson_id_bits(id))
        .collect();
    // Members whose identity is wanted, as (lesson, candidate), sorted. The candidates are
    // read in their own order and each lesson's digest of domain, kind and key is made once:
    // visited lesson by lesson, every member was a cache miss or three (its candidate, its id,
    // its text) and every identity digested the lesson's fields again.
    let hits: Vec<(u32, u32)> = if wanted.is_empty() {
        Vec::new()
    } else {
        let prefixes: Vec<(score::IdentityPrefix, &Id)> = (0..comp.lessons.len())
            .into_par_iter()
            .map(|li| {
                let l = &comp.lessons[unedited(li)];
                (score::IdentityPrefix::of(l), &l.founder)
            })
            .collect();
        let mut hits: Vec<(u32, u32)> = (comp.candidates.par_iter().zip(&comp.lesson_of).enumerate())
            .filter_map(|(i, (c, &li))| {
                let li = li?;
                let (prefix, founder) = &prefixes[li as usize];
                // Only an admissible member ever founded its lesson (DESIGN §6), and the
                // founder gives the id the lesson has now.
                // (The founder's own id is a copy of its candidate's: told by address before
                // digesting, and by its text only on a hit.)
                let hit = c.admissible()
                    && !Id::ptr_eq(&c.record_id, founder)
                    && wanted.contains(&prefix.bits(&c.record_id, &c.text))
                    && c.record_id != **founder;
                hit.then_some((li, i as u32))
            })
            .collect();
        hits.par_sort_unstable();
        hits
    };
    // The ids each member would have given its lesson as founder, where one is named.
    let named = |li: usize, members_li: usize| -> Vec<Refounding> {
        let from = hits.partition_point(|&(l, _)| (l as usize) < members_li);
        let mine = hits[from..]
            .iter()
            .take_while(|&&(l, _)| l as usize == members_li);
        let l = &comp.lessons[li];
        let mut out: Vec<Refounding> = Vec::new();
        for c in mine.map(|&(_, i)| &comp.candidates[i as usize]) {
            let old_id = score::identity(l, &c.record_id, &c.text);
            if old_id != l.id && out.iter().all(|r| r.old_id != old_id) {
                out.push(Refounding {
                    old_id,
                    new_id: l.id.clone(),
                    old_founder: c.record_id.clone(),
                    found_by: FoundBy::Name,
                });
            }
        }
        out
    };
    // Each candidate's input position (claims have none: `u32::MAX`), read in candidate
    // order: `refounding_by_order` asks it of every member of every lesson.
    let position: Vec<u32> = (comp.candidates.par_iter())
        .map(|c| match c.source {
            crate::model::Source::Experience(e) => e,
            crate::model::Source::Claim(_) => u32::MAX,
        })
        .collect();
    // A chain's first wording and its edit can both hold members, so an old id may come twice
    // (`refounded` reports it once; renaming by it twice is renaming once).
    (members.par_iter().enumerate())
        .flat_map_iter(|(members_li, all)| {
            let li = unedited(members_li);
            let mut found = if hits.is_empty() {
                Vec::new()
            } else {
                named(li, members_li)
            };
            found.extend(refounding_by_order(comp, li, all, &position));
            found
        })
        .collect()
}

/// The old id of lesson `li` (members `all`) when its founder sits later in input order than
/// members recorded before it (see `refounded`).
fn refounding_by_order(
    comp: &Compilation,
    li: usize,
    all: &[usize],
    positions: &[u32],
) -> Option<Refounding> {
    let position = |i: usize| positions[i];
    let l = &comp.lessons[li];
    if l.supersedes.is_some() {
        return None;
    }
    // Claims have no input position among the records; only experiences can be back-filled.
    // (Walked without collecting them: this runs for every lesson, and almost always stops at
    // the check below.)
    let ms = || (all.iter().copied()).filter(|&i| position(i) != u32::MAX);
    let first_in_input = ms().map(position).min()?;
    let is_founder = |i: usize| *comp.candidates[i].record_id == *l.founder;
    // The founder is usually first in input order: then nothing was recorded before it.
    if ms().any(|i| position(i) == first_in_input && is_founder(i)) {
        return None;
    }
    // The members recorded before the founder arrived: those that precede it in input order.
    let founder_pos = ms().filter(|&i| is_founder(i)).map(position).min().unwrap_or(0);
    if first_in_input >= founder_pos {
        return None;
    }
    let before: Vec<usize> = ms().filter(|&i| position(i) < founder_pos).collect();
    let t0 = before
        .iter()
        .map(|&i| comp.candidates[i].recorded_at)
        .min()
        .unwrap_or(0);
    let founders: Vec<&Candidate> = before
        .iter()
        .map(|&i| &comp.candidates[i])
        .filter(|c| c.recorded_at == t0)
        .collect();
    let old_founder = founders.iter().map(|c| &c.record_id).min()?;
    let wording = founders
        .iter()
        .min_by_key(|c| (c.narrative_score, &*c.record_id))
        .map(|c| &*c.text)
        .unwrap_or("");
    let old_id = score::identity(l, old_founder, wording);
    (old_id != l.id).then(|| Refounding {
        old_id,
        new_id: l.id.clone(),
        old_founder: old_founder.clone(),
        // A lesson is admitted when its founder arrives.
        found_by: FoundBy::Order {
            tie: l.admitted_at == t0,
        },
    })
}

/// The fate invariant (DESIGN §1.5): every candidate has exactly one fate, and every fate but
/// `rule` has a code and a diagnostic of that code naming its record.
fn check_fates(comp: &Compilation) -> Option<Diagnostic> {
    // The (code, record id) pairs the diagnostics name, as sorted 64-bit fingerprints (a few
    // million at a million records; the chance that any probe of a whole check matches by
    // accident is about one in ten million, and it would only hide a mismatch from this
    // self-check).
    // (`fx::parts_print`: SipHash took half the check.)
    let print = |code: &str, id: &str| parts_print(&[code.as_bytes(), id.as_bytes()]);
    // Only a code some fate carries can explain one (a third of the ids name other codes).
    let fate_codes: Vec<&str> = (comp.fates.par_iter())
        .fold(Vec::new, |mut seen: Vec<&str>, f| {
            for &code in f.codes {
                if !seen.contains(&code) {
                    seen.push(code);
                }
            }
            seen
        })
        .reduce(Vec::new, |mut a, b| {
            for code in b {
                if !a.contains(&code) {
                    a.push(code);
                }
            }
            a
        });
    let mut named: Vec<u64> = comp
        .diagnostics
        .par_iter()
        .filter(|d| fate_codes.contains(&d.code))
        .flat_map_iter(|d| {
            let ids = std::iter::once(d.subject.as_str()).chain(d.experience_id_iter());
            ids.map(|id| print(d.code, id))
        })
        .collect();
    named.par_sort_unstable();
    named.dedup();
    // Each fate's (code, record id) fingerprints, sorted too and walked beside `named` in one
    // pass: a lookup per candidate missed the cache twice (its bucket, then the run).
    let mut asked: Vec<(u64, u32)> = (comp.candidates.par_iter().zip(&comp.fates).enumerate())
        .filter(|(_, (_, f))| f.fate != Fate::Rule)
        .flat_map_iter(|(i, (c, f))| (f.codes.iter()).map(move |code| (print(code, &c.record_id), i as u32)))
        .collect();
    asked.par_sort_unstable();
    let mut explained = vec![false; comp.candidates.len()];
    let mut next = named.iter().peekable();
    for &(p, i) in &asked {
        while next.next_if(|&&q| q < p).is_some() {}
        if next.peek() == Some(&&p) {
            explained[i as usize] = true;
        }
    }
    let mut broken: Vec<String> = (comp.candidates.par_iter().zip(&comp.fates).zip(&explained))
        .filter(|((_, f), explained)| f.fate != Fate::Rule && !**explained)
        .map(|((c, _), _)| c.record_id.to_string())
        .collect();
    let consistent = comp.fates.len() == comp.candidates.len();
    if broken.is_empty() && consistent {
        return None;
    }
    broken.sort();
    broken.dedup();
    Some(
        Diagnostic::new(
            codes::FATE_MISMATCH,
            format!(
                "{} {} a fate no diagnostic explains: {}",
                counted(broken.len(), "candidate"),
                if broken.len() == 1 { "has" } else { "have" },
                short_list(&broken, 3)
            ),
        )
        .subject("compile")
        .experiences(&broken),
    )
}

/// Per-domain fate counts: (domain → [rule, lesson, held back, refused]).
pub fn fate_counts(comp: &Compilation) -> BTreeMap<String, [usize; 4]> {
    let mut m: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    for (c, f) in comp.candidates.iter().zip(&comp.fates) {
        m.entry(comp.names.get(c.domain).to_string()).or_default()[f.fate.slot()] += 1;
    }
    m
}

/// Heap bytes alive, and their most since the last lap: counted by the binary's allocator when
/// it is built with the `live-bytes` feature (zero otherwise) and printed by `StageClock::lap`,
/// to tell the data a stage holds from the memory the allocator holds for it.
pub static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
pub static LIVE_PEAK: AtomicIsize = AtomicIsize::new(0);

/// Stage timings on stderr when `SKILLC_TIMINGS` is set (for profiling; never in an output file).
pub struct StageClock(Option<(std::time::Instant, ProcTimes)>);

impl StageClock {
    pub fn from_env() -> StageClock {
        StageClock(std::env::var_os("SKILLC_TIMINGS").map(|_| (std::time::Instant::now(), ProcTimes::now())))
    }

    /// Prints the time since the last lap (or restart), the CPU time the process spent in it
    /// (twice the wall time means both cores were busy) and how much of it the kernel spent
    /// (mostly zeroing pages on first touch), the page faults taken, and the resident memory
    /// now and at peak.
    pub fn lap(&mut self, stage: &str) {
        if let Some((t, start)) = self.0 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let kib = |key: &str| -> f64 {
                let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("");
                let n: f64 = line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0.0);
                n / (1024.0 * 1024.0)
            };
            let now = ProcTimes::now();
            eprintln!(
                "timing: {stage:<12} {:>8.3} s  cpu {:>6.2} s  sys {:>5.2} s  faults {:>7}  rss {:>5.2} GiB  peak {:>5.2} GiB",
                t.elapsed().as_secs_f64(),
                now.user + now.system - start.user - start.system,
                now.system - start.system,
                now.faults - start.faults,
                kib("VmRSS:"),
                kib("VmHWM:")
            );
            if cfg!(feature = "live-bytes") {
                let gib = |bytes: &AtomicIsize| bytes.load(Relaxed) as f64 / f64::from(1 << 30);
                eprintln!(
                    "live: {stage:<12} live {:>5.2} GiB  live peak {:>5.2} GiB",
                    gib(&LIVE_BYTES),
                    gib(&LIVE_PEAK)
                );
                LIVE_PEAK.store(LIVE_BYTES.load(Relaxed), Relaxed);
            }
            self.restart();
        }
    }

    /// Starts the next lap now (after work another clock has already timed).
    pub fn restart(&mut self) {
        if self.0.is_some() {
            self.0 = Some((std::time::Instant::now(), ProcTimes::now()));
        }
    }
}

/// The process's user and system CPU seconds and minor page faults so far, from
/// `/proc/self/stat` (Linux; zeros elsewhere). Clock ticks are 100 per second on every Linux
/// this runs on.
#[derive(Clone, Copy)]
struct ProcTimes {
    user: f64,
    system: f64,
    faults: u64,
}

impl ProcTimes {
    fn now() -> ProcTimes {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        // Fields after the command name, which is in parentheses and may contain spaces.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let field = |i: usize| -> u64 {
            rest.split_whitespace()
                .nth(i)
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        // minflt, utime and stime are fields 10, 14 and 15 of the line: 7, 11 and 12 counting
        // the state (field 3) as 0.
        ProcTimes {
            user: field(11) as f64 / 100.0,
            system: field(12) as f64 / 100.0,
            faults: field(7),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadOptions, load_texts};

    const RECORDS: &str = r#"{"id": "fx-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["go"], "outcome": "failed", "lesson": "Run go vet before go test; it catches printf mistakes the tests miss."}
{"id": "fx-2", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["go"], "outcome": "succeeded", "lesson": "Wrap errors with %w so errors.Is still matches the sentinel."}
"#;

    fn compiled() -> Compilation {
        let rules = Rules::builtin();
        let mut sink = Sink::new();
        let corpus = load_texts(&[("fx.jsonl", RECORDS)], &LoadOptions::default(), &mut sink);
        compile(corpus, sink, &rules, &Options::default())
    }

    /// `outlying_times` names what a plain reading names: sort every time, take the first gap
    /// over a year with fewer records after it than before it, and name those after it.
    #[test]
    fn outlying_times_names_the_minority_after_a_gap_of_a_year() {
        const DAY: Millis = 86_400_000;
        let plain = |times: &[Millis]| -> Vec<String> {
            let mut sorted: Vec<(Millis, usize)> = times.iter().copied().zip(0..).collect();
            sorted.sort();
            let n = sorted.len();
            let k = (1..n).find(|&k| 2 * k > n && sorted[k].0 - sorted[k - 1].0 > OUTLYING_GAP);
            let mut named: Vec<String> = k
                .map(|k| sorted[k..].iter().map(|&(_, i)| format!("r{i}")).collect())
                .unwrap_or_default();
            named.sort();
            named
        };
        let start = 1_793_000_000_000; // 2026-10-26
        let cases: Vec<Vec<Millis>> = vec![
            vec![],
            vec![start],
            vec![start, start + 4000 * DAY],
            vec![start, start + DAY, start + 13_149 * DAY],
            vec![start + 13_149 * DAY, start, start + DAY, start + 2 * DAY],
            // Two wrong clocks, decades apart, both named.
            vec![
                start,
                start + 400 * DAY,
                start + DAY,
                start + 9000 * DAY,
                start + 2 * DAY,
                start + 3 * DAY,
            ],
            // A history that resumed after a pause: more records after the gap.
            vec![
                start,
                start + DAY,
                start + 500 * DAY,
                start + 501 * DAY,
                start + 502 * DAY,
            ],
            // Exactly the gap is no outlier; one millisecond more is.
            vec![start, start + DAY, start + DAY + OUTLYING_GAP],
            vec![start, start + DAY, start + DAY + OUTLYING_GAP + 1],
            // Ties at the middle.
            vec![start, start, start, start + 800 * DAY],
        ];
        for times in cases {
            let corpus = Corpus {
                experiences: (times.iter().enumerate())
                    .map(|(i, &recorded_at)| crate::model::Experience {
                        id: format!("r{i}").into(),
                        recorded_at,
                        ..Default::default()
                    })
                    .collect(),
                claims: vec![],
            };
            let mut named: Vec<String> = (outlying_times(&corpus).iter())
                .inspect(|d| assert_eq!(d.code, codes::OUTLYING_TIME))
                .map(|d| d.subject.clone())
                .collect();
            named.sort();
            assert_eq!(named, plain(&times), "{times:?}");
        }
        // A claim dated there is named too, where it was written.
        let corpus = Corpus {
            experiences: (0..3_i64)
                .map(|i| crate::model::Experience {
                    id: format!("r{i}").into(),
                    recorded_at: start + i * DAY,
                    ..Default::default()
                })
                .collect(),
            claims: vec![crate::model::LessonClaim {
                id: "cl-1".into(),
                recorded_at: start + 9000 * DAY,
                domains: vec!["python".into()],
                refused_domains: vec![],
                project: None,
                text: "Pin the pip version in CI images.".into(),
                kind: Kind::Do,
                source: crate::model::ClaimSource::Model,
                evidence: vec![],
                operation_key: None,
                loc: crate::model::SourceLoc {
                    file: "claims.jsonl".into(),
                    line: 7,
                },
                ended: None,
            }],
        };
        let named = outlying_times(&corpus);
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].subject, "cl-1");
        assert_eq!(named[0].evidence.get("days"), Some(&serde_json::json!(8998)));
    }

    #[test]
    fn members_are_each_lessons_candidates_in_order() {
        // Three lessons: one with two members (not next to each other), one with none.
        let members = Members::new(3, &[Some(2), None, Some(0), Some(2), None]);
        assert_eq!(members.lesson(0), [2]);
        assert!(members.lesson(1).is_empty());
        assert_eq!(members.lesson(2), [0, 3]);
        let all: Vec<&[usize]> = members.par_iter().collect();
        assert_eq!(all, [&[2][..], &[], &[0, 3]]);
    }

    #[test]
    fn the_fate_invariant_holds_and_a_broken_one_is_reported() {
        let comp = compiled();
        assert_eq!(comp.fates.len(), comp.candidates.len());
        assert!(check_fates(&comp).is_none());
        assert!(!comp.diagnostics.iter().any(|d| d.code == codes::FATE_MISMATCH));
        // A held-back fate whose diagnostic went missing is caught, naming the record.
        let mut broken = comp.clone();
        broken.diagnostics.retain(|d| d.code != codes::OUTCOME_GATE);
        let d = check_fates(&broken).expect("E003");
        assert_eq!(d.code, codes::FATE_MISMATCH);
        assert_eq!(d.experience_ids(), ["fx-1"]);
    }

    /// On a generated corpus where `in_play` names real lessons, mechanical ones among them:
    /// attribution reads the operations of the experiences that keep theirs.
    #[test]
    fn freeing_the_experiences_early_changes_nothing_but_the_corpus() {
        let rules = Rules::builtin();
        let load = crate::generate::loader(3000, 5);
        let (corpus, sink) = load();
        let first = compile(corpus, sink, &rules, &Options::default());
        // A mechanical lesson in play where its evidence after the founder ran the operation
        // again: judging it reads that experience's operations.
        let mut in_play: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for l in first.lessons.iter().filter(|l| l.working.is_some()) {
            for id in l.evidence.iter().skip(1) {
                in_play.entry(&**id).or_default().push(l.id.as_str());
            }
        }
        assert!(in_play.len() >= 3);
        let run = |keep: Keep| {
            let (mut corpus, sink) = load();
            for e in &mut corpus.experiences {
                let named = in_play.get(&*e.id).into_iter().flatten();
                e.in_play.extend(named.map(|id| id.to_string()));
            }
            let opts = Options {
                keep,
                ..Options::default()
            };
            compile(corpus, sink, &rules, &opts)
        };
        let (kept, no_ops, freed) = (run(Keep::Everything), run(Keep::Experiences), run(Keep::Nothing));
        let loaded = kept.corpus.experiences.len();
        assert!(freed.corpus.experiences.is_empty() && loaded > 2900);
        assert_eq!(freed.experience_count, loaded);
        assert_eq!(kept.experience_count, loaded);
        let judged = |c: &Compilation| {
            (c.lessons.iter().flat_map(|l| &l.history))
                .filter(|h| matches!(h.event, Event::Confirmed | Event::Contradicted))
                .count()
        };
        assert!(
            judged(&kept) >= 3,
            "attribution confirmed or contradicted lessons"
        );
        for other in [&no_ops, &freed] {
            assert_eq!(other.lessons, kept.lessons);
            assert_eq!(other.diagnostics, kept.diagnostics);
            assert_eq!(other.fates, kept.fates);
        }
        // Without the operations the experiences still answer `why`: the same report for the
        // busiest domain. Only experiences with lessons in play kept operations.
        let ops = |c: &Compilation| {
            c.corpus
                .experiences
                .iter()
                .map(|e| e.operations.len())
                .sum::<usize>()
        };
        assert!(ops(&no_ops) > 0 && ops(&no_ops) < ops(&kept) / 2);
        let busiest = kept
            .lessons
            .iter()
            .map(|l| l.domain.as_str())
            .max_by_key(|d| kept.lessons.iter().filter(|l| l.domain == *d).count());
        let busiest = busiest.expect("lessons");
        let why = |c: &Compilation| crate::report::why(c, &rules, busiest, &Default::default()).json;
        assert_eq!(why(&no_ops), why(&kept));
    }

    #[test]
    fn stop_after_stops_where_asked() {
        let rules = Rules::builtin();
        let mut sink = Sink::new();
        let corpus = load_texts(&[("fx.jsonl", RECORDS)], &LoadOptions::default(), &mut sink);
        let opts = Options {
            stop_after: Some(Stage::Cluster),
            ..Options::default()
        };
        let comp = compile(corpus, sink, &rules, &opts);
        assert_eq!(comp.stopped_after, Some(Stage::Cluster));
        assert_eq!(comp.candidates.len(), 2);
        assert!(!comp.clusters.is_empty() && comp.lessons.is_empty());
    }
}
