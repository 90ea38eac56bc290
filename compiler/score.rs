//! Score: the lifecycle fold (DESIGN §6).
//!
//! One pass over the history in time order — candidate arrivals, experiences (attribution of
//! `in_play` lessons) and user decisions — turns admitted clusters into lessons with identity,
//! wording, confidence (integer thousandths), status, scope and history. Decay is settled
//! lazily: when a lesson is touched, the active days since it was last settled are charged.
//! Nothing is deleted: a lesson leaves the prompt-facing files by being superseded or retired.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diagnostics::{Diagnostic, Sink, codes, short_list};
use crate::digest;
use crate::gate::Admitted;
use crate::model::{
    Action, Candidate, Cluster, Corpus, Decision, Experience, HistoryEntry, Lesson, Millis, OpStatus, Source,
    Status,
};
use crate::opkey;
use crate::outcome::Verdict;
use crate::policy::Rules;
use crate::time::utc_day;

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
    pub clusters: &'a [Cluster],
    pub admitted: &'a [Admitted],
    pub decisions: &'a [Decision],
    pub rules: &'a Rules,
    pub min_reinforcement: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Admissible members of one admitted cluster arriving at one time (the founders, when
    /// the cluster has no live lesson).
    /// `members[from..to]` of the admitted cluster: its members are sorted by time, so one
    /// time's arrivals are one run.
    Arrivals {
        cluster: u32,
        from: u32,
        to: u32,
    },
    Experience(u32),
    Decision(u32),
}

/// A lesson being folded, with the bookkeeping the ledger does not show.
struct Live {
    lesson: Lesson,
    evidence: BTreeSet<String>,
    projects: BTreeSet<String>,
    /// Days up to and including this one are charged for decay.
    settled_through: i64,
    /// Set when a global lesson was demoted: the project it was demoted to.
    demoted_to: Option<String>,
    last_confirm_project: Option<String>,
}

impl Live {
    fn frozen(&self) -> bool {
        matches!(self.lesson.status, Status::Superseded | Status::Retired)
    }
}

/// Days on which each domain (optionally within one project) has an experience.
struct ActiveDays {
    any: HashMap<String, Vec<i64>>,
    /// domain → project → days.
    per_project: HashMap<String, HashMap<String, Vec<i64>>>,
}

impl ActiveDays {
    fn new(corpus: &Corpus) -> ActiveDays {
        let mut any: HashMap<String, Vec<i64>> = HashMap::new();
        let mut per_project: HashMap<String, HashMap<String, Vec<i64>>> = HashMap::new();
        for e in &corpus.experiences {
            let day = utc_day(e.recorded_at);
            for d in &e.domains {
                any.entry(d.clone()).or_default().push(day);
                if let Some(p) = &e.project {
                    per_project
                        .entry(d.clone())
                        .or_default()
                        .entry(p.clone())
                        .or_default()
                        .push(day);
                }
            }
        }
        for v in any
            .values_mut()
            .chain(per_project.values_mut().flat_map(|m| m.values_mut()))
        {
            v.sort_unstable();
            v.dedup();
        }
        ActiveDays { any, per_project }
    }

    /// Active days of a lesson's domain within its scope, in `(from, to]`.
    fn between<'a>(&'a self, lesson: &Lesson, from: i64, to: i64) -> &'a [i64] {
        let days: &[i64] = match lesson.scope.strip_prefix("project:") {
            Some(p) => self
                .per_project
                .get(&lesson.domain)
                .and_then(|m| m.get(p))
                .map_or(&[], |v| v),
            None => self.any.get(&lesson.domain).map_or(&[], |v| v),
        };
        let lo = days.partition_point(|&d| d <= from);
        let hi = days.partition_point(|&d| d <= to);
        &days[lo..hi.max(lo)]
    }
}

struct Fold<'a> {
    inp: &'a Inputs<'a>,
    live: Vec<Live>,
    by_id: HashMap<String, u32>,
    /// The current lesson generation of each cluster.
    current: HashMap<u32, u32>,
    lesson_of: Vec<Option<u32>>,
    active_days: ActiveDays,
    sink: Sink,
    contradictions: BTreeMap<u32, Vec<String>>,
    exp_index: HashMap<&'a str, u32>,
    /// The active mechanical lesson per (scope, operation key).
    mechanical: HashMap<(String, String), u32>,
}

pub fn score(inp: &Inputs) -> (Scored, Sink) {
    // At one time: attribution first (a lesson in play is judged before the same evidence can
    // found its successor), then candidate arrivals, then user decisions.
    // Ties inside a phase break by id: clusters are sorted by id already, experiences get their
    // rank among the ids of those with lessons in play, decisions their journal order.
    let mut events: Vec<(Millis, u8, u32, Event)> = Vec::new();
    let cand = inp.candidates;
    for (ai, a) in inp.admitted.iter().enumerate() {
        let mut from = 0;
        while from < a.members.len() {
            let t = cand[a.members[from] as usize].recorded_at;
            let to = from + a.members[from..].partition_point(|&m| cand[m as usize].recorded_at == t);
            let run = Event::Arrivals {
                cluster: ai as u32,
                from: from as u32,
                to: to as u32,
            };
            events.push((t, 1, a.cluster, run));
            from = to;
        }
    }
    let mut in_play: Vec<usize> = (0..inp.corpus.experiences.len())
        .filter(|&i| !inp.corpus.experiences[i].in_play.is_empty())
        .collect();
    in_play.sort_by(|&a, &b| inp.corpus.experiences[a].id.cmp(&inp.corpus.experiences[b].id));
    for (rank, &i) in in_play.iter().enumerate() {
        let e = &inp.corpus.experiences[i];
        events.push((e.recorded_at, 0, rank as u32, Event::Experience(i as u32)));
    }
    for (i, d) in inp.decisions.iter().enumerate() {
        events.push((d.at, 2, i as u32, Event::Decision(i as u32)));
    }
    events.sort_unstable_by_key(|e| (e.0, e.1, e.2));

    let mut fold = Fold {
        inp,
        live: Vec::new(),
        by_id: HashMap::new(),
        current: HashMap::new(),
        lesson_of: vec![None; cand.len()],
        active_days: ActiveDays::new(inp.corpus),
        sink: Sink::new(),
        contradictions: BTreeMap::new(),
        exp_index: inp
            .corpus
            .experiences
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i as u32))
            .collect(),
        mechanical: HashMap::new(),
    };
    for (t, _, _, ev) in &events {
        match *ev {
            Event::Arrivals { cluster, from, to } => fold.arrivals(cluster, from as usize..to as usize, *t),
            Event::Experience(i) => fold.attribute(i, *t),
            Event::Decision(i) => fold.decide(&inp.decisions[i as usize]),
        }
    }
    let now_day = utc_day(inp.corpus.now());
    for i in 0..fold.live.len() {
        fold.settle(i as u32, now_day);
    }
    fold.apply_caps();
    fold.finish()
}

impl<'a> Fold<'a> {
    fn policy(&self) -> &crate::policy::Policy {
        &self.inp.rules.policy
    }

    /// Members of admitted cluster `ai` recorded at `t` join its live lesson, or found one.
    fn arrivals(&mut self, ai: u32, run: std::ops::Range<usize>, t: Millis) {
        let a = &self.inp.admitted[ai as usize];
        let cand = self.inp.candidates;
        let members: Vec<u32> = a.members[run].to_vec();
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
            None => self.found(ai, &members, t),
        };
        let day = utc_day(t);
        self.settle(li, day - 1);
        let mut joined = Vec::new();
        for &m in &members {
            self.lesson_of[m as usize] = Some(li);
            let c = &cand[m as usize];
            let ids: Vec<String> = match c.source {
                Source::Experience(_) => vec![c.record_id.clone()],
                Source::Claim(ci) => self.inp.corpus.claims[ci as usize].evidence.clone(),
            };
            for id in ids {
                joined.push(id.clone());
                self.add_support(li, &id);
            }
            let l = &mut self.live[li as usize].lesson;
            for r in &c.reasons {
                if !l.reasons.contains(r) {
                    l.reasons.insert(0, r.clone());
                }
            }
            l.blessed |= c.blessed;
        }
        let conf = self.policy().confidence.admitted;
        let l = &mut self.live[li as usize];
        if l.lesson.status == Status::Claimed && !l.evidence.is_empty() {
            l.lesson.status = Status::Active;
            l.lesson.confidence = conf;
            l.lesson.history.push(entry(
                t,
                "admitted",
                conf,
                joined.clone(),
                Some("claim gained evidence".into()),
            ));
        } else if !joined.is_empty() && l.lesson.admitted_at != t {
            let c = l.lesson.confidence;
            l.lesson.history.push(entry(t, "joined", c, joined, None));
        }
        self.mark_used(li, day);
        self.rescope(li, t);
    }

    /// Founds a new lesson for admitted cluster `ai` from the members recorded at `t`.
    fn found(&mut self, ai: u32, members: &[u32], t: Millis) -> u32 {
        let a = &self.inp.admitted[ai as usize];
        let cluster = &self.inp.clusters[a.cluster as usize];
        let cand = self.inp.candidates;
        let founder = members
            .iter()
            .map(|&m| cand[m as usize].record_id.as_str())
            .min()
            .unwrap_or("")
            .to_string();
        // Wording: the most rule-shaped founding member; ties to the smallest id.
        let wording = members
            .iter()
            .map(|&m| &cand[m as usize])
            .min_by_key(|c| (c.narrative_score, c.record_id.as_str()))
            .map(|c| c.text.clone())
            .unwrap_or_default();
        let key = cluster.key.clone().unwrap_or_default();
        let id = format!(
            "L{}",
            digest::of_fields(&[&cluster.domain, cluster.kind.as_str(), &key, &founder, &wording])
        );
        let claimed = members.iter().all(|&m| match cand[m as usize].source {
            Source::Claim(ci) => self.inp.corpus.claims[ci as usize].evidence.is_empty(),
            Source::Experience(_) => false,
        });
        let conf = &self.policy().confidence;
        let (status, confidence) = if claimed {
            (Status::Claimed, conf.claimed)
        } else {
            (Status::Active, conf.admitted)
        };
        let previous = self
            .current
            .get(&ai)
            .map(|&l| self.live[l as usize].lesson.id.clone());
        let working = members.iter().find_map(|&m| cand[m as usize].working.clone());
        let lesson = Lesson {
            id: id.clone(),
            kind: cluster.kind,
            text: wording,
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
            founder: founder.clone(),
            cluster: cluster.id.clone(),
            admitted_at: t,
            last_used_day: utc_day(t),
            working,
            reasons: Vec::new(),
            history: vec![entry(
                t,
                if claimed { "claimed" } else { "admitted" },
                confidence,
                members
                    .iter()
                    .map(|&m| cand[m as usize].record_id.clone())
                    .collect(),
                previous.map(|p| format!("after {p}")),
            )],
        };
        let li = self.live.len() as u32;
        self.live.push(Live {
            lesson,
            evidence: BTreeSet::new(),
            projects: BTreeSet::new(),
            settled_through: utc_day(t),
            demoted_to: None,
            last_confirm_project: None,
        });
        self.by_id.entry(id).or_insert(li);
        self.current.insert(ai, li);

        li
    }

    /// An experience joins a lesson's evidence (a supporting candidate or a confirmation).
    fn add_support(&mut self, li: u32, exp_id: &str) {
        let project = self.experience(exp_id).and_then(|e| e.project.clone());
        let l = &mut self.live[li as usize];
        if l.evidence.insert(exp_id.to_string())
            && let Some(p) = project
        {
            l.projects.insert(p);
        }
    }

    fn experience(&self, id: &str) -> Option<&'a Experience> {
        self.exp_index
            .get(id)
            .map(|&i| &self.inp.corpus.experiences[i as usize])
    }

    /// Recomputes scope from the supporting projects (DESIGN §6) and enforces one active
    /// mechanical lesson per (scope, key).
    fn rescope(&mut self, li: u32, t: Millis) {
        let day = utc_day(t);
        let l = &self.live[li as usize];
        let scope = match (&l.demoted_to, l.projects.len()) {
            (Some(p), _) => format!("project:{p}"),
            (None, 1) => format!("project:{}", l.projects.iter().next().unwrap()),
            (None, _) => "global".to_string(),
        };
        if scope != l.lesson.scope {
            self.settle(li, day - 1);
            let l = &mut self.live[li as usize];
            let was_project = l.lesson.scope.starts_with("project:");
            l.lesson.scope = scope.clone();
            if was_project && scope == "global" && l.lesson.history.len() > 1 {
                let c = l.lesson.confidence;
                l.lesson.history.push(entry(
                    t,
                    "promoted",
                    c,
                    vec![],
                    Some("supported from two or more projects".into()),
                ));
            }
        }
        self.one_mechanical_per_key(li, t);
    }

    /// One active mechanical lesson per (scope, key): of two, the newer supersedes the older.
    fn one_mechanical_per_key(&mut self, li: u32, t: Millis) {
        let l = &self.live[li as usize].lesson;
        let (Some(key), Some(_), Status::Active) = (&l.operation_key, &l.working, l.status) else {
            return;
        };
        let slot = (l.scope.clone(), key.clone());
        let other = self.mechanical.get(&slot).copied().filter(|&o| {
            let ol = &self.live[o as usize].lesson;
            o != li && ol.status == Status::Active && ol.scope == slot.0
        });
        let Some(o) = other else {
            self.mechanical.insert(slot, li);
            return;
        };
        let newer = |x: u32| {
            let l = &self.live[x as usize].lesson;
            (l.admitted_at, l.id.clone())
        };
        let (old, new) = if newer(o) <= newer(li) { (o, li) } else { (li, o) };
        let new_id = self.live[new as usize].lesson.id.clone();
        self.supersede(old, t, Some(new_id), "another form of this operation now works");
        let old_id = self.live[old as usize].lesson.id.clone();
        self.live[new as usize].lesson.supersedes.get_or_insert(old_id);
        self.mechanical.insert(slot, new);
    }

    fn supersede(&mut self, li: u32, t: Millis, by: Option<String>, reason: &str) {
        let l = &mut self.live[li as usize];
        if l.frozen() {
            return;
        }
        l.lesson.status = Status::Superseded;
        l.lesson.superseded_by = by.clone();
        l.lesson.reason = Some(reason.to_string());
        let c = l.lesson.confidence;
        let detail = match &by {
            Some(b) => format!("{reason}; superseded by {b}"),
            None => reason.to_string(),
        };
        l.lesson
            .history
            .push(entry(t, "superseded", c, vec![], Some(detail)));
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
        let days = self.active_days.between(&l.lesson, l.settled_through, day);
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
            l.lesson.history.push(entry(
                t,
                "decayed",
                c,
                vec![],
                Some(format!("{k} active days without use")),
            ));
            self.supersede(
                li,
                t,
                None,
                "confidence decayed below the floor (unused on active days)",
            );
        } else {
            let l = &mut self.live[li as usize];
            l.lesson.confidence = conf - n * idle;
            l.settled_through = day;
        }
    }

    fn mark_used(&mut self, li: u32, day: i64) {
        self.settle(li, day - 1);
        let l = &mut self.live[li as usize];
        l.settled_through = l.settled_through.max(day);
        l.lesson.last_used_day = l.lesson.last_used_day.max(day);
    }

    /// Credits or blames the lessons an experience had in play (DESIGN §6 attribution).
    fn attribute(&mut self, ei: u32, t: Millis) {
        let exp = &self.inp.corpus.experiences[ei as usize];
        let verdict = &self.inp.verdicts[ei as usize];
        let day = utc_day(t);
        let mut unknown = Vec::new();
        let mut seen = BTreeSet::new();
        for id in &exp.in_play {
            if !seen.insert(id.as_str()) {
                continue;
            }
            let Some(&li) = self.by_id.get(id) else {
                unknown.push(id.clone());
                continue;
            };
            // Decay is charged lazily, so settle the days before this one first: the lesson
            // may have crossed the floor (and frozen) before this experience.
            self.settle(li, day - 1);
            if self.live[li as usize].frozen() {
                continue;
            }
            self.mark_used(li, day);
            let effect = self.effect(&self.live[li as usize].lesson, exp, verdict);
            match effect {
                Some(true) => self.confirm(li, exp, t),
                Some(false) => self.contradict(li, exp, t),
                None => {}
            }
        }
        if !unknown.is_empty() {
            self.sink.push(
                Diagnostic::new(
                    codes::UNKNOWN_IN_PLAY,
                    format!(
                        "in_play names {} id(s) that are no lesson: {}",
                        unknown.len(),
                        short_list(&unknown, 3)
                    ),
                )
                .subject(&exp.id)
                .at(&exp.source)
                .with("ids", unknown)
                .experiences([&exp.id]),
            );
        }
    }

    /// `Some(true)` confirms, `Some(false)` contradicts, `None` neither.
    fn effect(&self, l: &Lesson, exp: &Experience, v: &Verdict) -> Option<bool> {
        let policy = self.policy();
        let bad_end = matches!(
            exp.outcome(),
            crate::model::Outcome::Failed | crate::model::Outcome::Abandoned
        );
        let real_failure = |op: &crate::model::Operation| {
            op.status == OpStatus::Error && !policy.is_transient(op.error.as_deref().unwrap_or(""))
        };
        if l.status == Status::Claimed {
            // A claim in play gains evidence from a passed experience; it is never blamed.
            let in_domain = exp.domains.contains(&l.domain);
            return (v.passed && in_domain).then_some(true);
        }
        match (&l.operation_key, &l.working) {
            (Some(k), Some(working)) => {
                let runs: Vec<&crate::model::Operation> = exp
                    .operations
                    .iter()
                    .filter(|op| op.status != OpStatus::Refused)
                    .filter(|op| {
                        let args = op.args.value();
                        &opkey::operation_key(&op.tool, &args) == k && &opkey::python_json(&args) == working
                    })
                    .collect();
                let last = runs
                    .iter()
                    .rev()
                    .find(|op| op.status == OpStatus::Ok || real_failure(op))?;
                Some(last.status == OpStatus::Ok)
            }
            (Some(k), None) => {
                let on_key: Vec<&crate::model::Operation> = exp
                    .operations
                    .iter()
                    .filter(|op| &opkey::operation_key(&op.tool, &op.args.value()) == k)
                    .collect();
                if v.passed && on_key.iter().any(|op| op.status != OpStatus::Refused) {
                    Some(true)
                } else if bad_end && on_key.iter().any(|op| real_failure(op)) {
                    Some(false)
                } else {
                    None
                }
            }
            (None, _) => {
                if !exp.domains.contains(&l.domain) {
                    None
                } else if v.passed {
                    Some(true)
                } else if bad_end {
                    Some(false)
                } else {
                    None
                }
            }
        }
    }

    fn confirm(&mut self, li: u32, exp: &Experience, t: Millis) {
        let conf = self.policy().confidence.clone();
        self.add_support(li, &exp.id);
        let l = &mut self.live[li as usize];
        if l.lesson.status == Status::Claimed {
            l.lesson.status = Status::Active;
            l.lesson.confidence = conf.admitted;
            l.lesson.history.push(entry(
                t,
                "admitted",
                conf.admitted,
                vec![exp.id.clone()],
                Some("claim gained evidence".into()),
            ));
        } else {
            l.lesson.confidence = (l.lesson.confidence + conf.confirmation).min(1000);
            let c = l.lesson.confidence;
            l.lesson
                .history
                .push(entry(t, "confirmed", c, vec![exp.id.clone()], None));
        }
        if let Some(p) = &exp.project {
            if l.demoted_to.as_ref().is_some_and(|d| d != p) {
                l.demoted_to = None;
            }
            l.last_confirm_project = Some(p.clone());
        }
        self.rescope(li, t);
    }

    fn contradict(&mut self, li: u32, exp: &Experience, t: Millis) {
        let conf = self.policy().confidence.clone();
        let l = &mut self.live[li as usize];
        l.lesson.confidence = (l.lesson.confidence - conf.contradiction).max(0);
        let c = l.lesson.confidence;
        l.lesson
            .history
            .push(entry(t, "contradicted", c, vec![exp.id.clone()], None));
        self.contradictions.entry(li).or_default().push(exp.id.clone());
        // A global lesson contradicted from a third project goes back to the project that
        // last confirmed it.
        if l.lesson.scope == "global"
            && let Some(p) = &exp.project
            && l.projects.len() >= 2
            && !l.projects.contains(p)
        {
            let back_to = l.last_confirm_project.clone().or_else(|| {
                let newest = l
                    .evidence
                    .iter()
                    .filter_map(|id| {
                        self.exp_index
                            .get(id.as_str())
                            .map(|&i| &self.inp.corpus.experiences[i as usize])
                    })
                    .filter(|e| e.project.is_some())
                    .max_by_key(|e| (e.recorded_at, e.id.clone()));
                newest.and_then(|e| e.project.clone())
            });
            if let Some(to) = back_to {
                let l = &mut self.live[li as usize];
                l.demoted_to = Some(to.clone());
                l.lesson.history.push(entry(
                    t,
                    "demoted",
                    c,
                    vec![exp.id.clone()],
                    Some(format!("to project:{to}")),
                ));
                self.sink.push(
                    Diagnostic::new(
                        codes::DEMOTED,
                        format!(
                            "global lesson contradicted from a third project was demoted to project:{to}"
                        ),
                    )
                    .subject(l.lesson.id.clone())
                    .domain(l.lesson.domain.clone())
                    .with("lesson", l.lesson.id.clone())
                    .with("project", to)
                    .experiences([&exp.id]),
                );
                self.rescope(li, t);
            }
        }
        if self.live[li as usize].lesson.confidence < conf.supersede_below {
            self.supersede(
                li,
                t,
                None,
                "confidence fell below the floor after contradictions",
            );
        }
    }

    fn decide(&mut self, d: &Decision) {
        let Some(&li) = self.by_id.get(&d.target) else {
            return; // bless targets experiences (applied before the pipeline); unknown ids were refused by the CLI
        };
        // Follow an edit chain to the lesson's current wording.
        let li = self.latest(li);
        let t = d.at;
        self.settle(li, utc_day(t) - 1);
        let l = &mut self.live[li as usize];
        let c = l.lesson.confidence;
        match d.action {
            Action::Retire => {
                if l.lesson.status == Status::Retired {
                    return;
                }
                l.lesson.status = Status::Retired;
                l.lesson.superseded_by = Some("retired:user".into());
                l.lesson.reason = Some(d.text.clone().unwrap_or_else(|| "retired by the user".into()));
                l.lesson
                    .history
                    .push(entry(t, "retired", c, vec![], d.text.clone()));
            }
            Action::Restore => {
                if l.lesson.status != Status::Retired {
                    return;
                }
                l.lesson.status = if l.evidence.is_empty() {
                    Status::Claimed
                } else {
                    Status::Active
                };
                l.lesson.superseded_by = None;
                l.lesson.reason = None;
                l.settled_through = utc_day(t);
                l.lesson.history.push(entry(t, "restored", c, vec![], None));
            }
            Action::Pin | Action::Unpin => {
                l.lesson.pinned = d.action == Action::Pin;
                let ev = if l.lesson.pinned { "pinned" } else { "unpinned" };
                l.settled_through = l.settled_through.max(utc_day(t));
                l.lesson.history.push(entry(t, ev, c, vec![], None));
            }
            Action::Edit => {
                let Some(text) = d.text.as_ref().map(|s| crate::normalize::text(s)) else {
                    return;
                };
                if l.frozen() || text == l.lesson.text {
                    return;
                }
                let key = l.lesson.operation_key.clone().unwrap_or_default();
                let new_id = format!(
                    "L{}",
                    digest::of_fields(&[
                        &l.lesson.domain,
                        l.lesson.kind.as_str(),
                        &key,
                        &l.lesson.id,
                        &text
                    ])
                );
                let mut next = Live {
                    lesson: Lesson {
                        id: new_id.clone(),
                        text,
                        supersedes: Some(l.lesson.id.clone()),
                        history: vec![entry(
                            t,
                            "edited",
                            c,
                            vec![],
                            Some(format!("new wording of {}", l.lesson.id)),
                        )],
                        ..l.lesson.clone()
                    },
                    evidence: l.evidence.clone(),
                    projects: l.projects.clone(),
                    settled_through: utc_day(t),
                    demoted_to: l.demoted_to.clone(),
                    last_confirm_project: l.last_confirm_project.clone(),
                };
                next.lesson.status = l.lesson.status;
                l.lesson.status = Status::Superseded;
                l.lesson.superseded_by = Some(new_id.clone());
                l.lesson.reason = Some("edited by the user".into());
                l.lesson.history.push(entry(
                    t,
                    "superseded",
                    c,
                    vec![],
                    Some(format!("edited; superseded by {new_id}")),
                ));
                let ni = self.live.len() as u32;
                self.live.push(next);
                self.by_id.entry(new_id).or_insert(ni);
                for cur in self.current.values_mut() {
                    if *cur == li {
                        *cur = ni;
                    }
                }
            }
            Action::Bless => {}
        }
    }

    /// The end of a lesson's edit chain.
    fn latest(&self, mut li: u32) -> u32 {
        for _ in 0..self.live.len() {
            let l = &self.live[li as usize].lesson;
            match (&l.superseded_by, l.reason.as_deref()) {
                (Some(next), Some("edited by the user")) => match self.by_id.get(next) {
                    Some(&n) => li = n,
                    None => break,
                },
                _ => break,
            }
        }
        li
    }

    /// At most `caps.active_lessons` active lessons per (scope, domain), pinned ones exempt.
    fn apply_caps(&mut self) {
        let cap = self.policy().caps.active_lessons;
        let now = self.inp.corpus.now();
        // (scope, domain) → (pinned active lessons, the other active lessons).
        let mut groups: BTreeMap<(String, String), (usize, Vec<u32>)> = BTreeMap::new();
        for (i, l) in self.live.iter().enumerate() {
            if l.lesson.status == Status::Active {
                let g = groups
                    .entry((l.lesson.scope.clone(), l.lesson.domain.clone()))
                    .or_default();
                if l.lesson.pinned {
                    g.0 += 1;
                } else {
                    g.1.push(i as u32);
                }
            }
        }
        for ((scope, domain), (pinned, mut ids)) in groups {
            let room = cap.saturating_sub(pinned);
            if ids.len() <= room {
                continue;
            }
            ids.sort_by(|&a, &b| {
                let (la, lb) = (&self.live[a as usize].lesson, &self.live[b as usize].lesson);
                lb.confidence.cmp(&la.confidence).then_with(|| la.id.cmp(&lb.id))
            });
            let dropped: Vec<u32> = ids.split_off(room);
            let names: Vec<String> = dropped
                .iter()
                .map(|&i| self.live[i as usize].lesson.id.clone())
                .collect();
            for &i in &dropped {
                self.supersede(
                    i,
                    now,
                    None,
                    "over the cap of active lessons for its scope and domain",
                );
            }
            self.sink.push(
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
    }

    fn finish(mut self) -> (Scored, Sink) {
        let min = self.inp.min_reinforcement;
        // Candidates of an edited lesson belong to its new wording.
        for i in 0..self.lesson_of.len() {
            if let Some(li) = self.lesson_of[i] {
                self.lesson_of[i] = Some(self.latest(li));
            }
        }
        for l in &mut self.live {
            l.lesson.evidence = l.evidence.iter().cloned().collect();
            l.lesson.projects = l.projects.iter().cloned().collect();
            l.lesson.reinforcement = l.evidence.len() as u32;
            l.lesson.rule =
                l.lesson.status == Status::Active && (l.lesson.reinforcement >= min || l.lesson.blessed);
        }
        for (li, exps) in std::mem::take(&mut self.contradictions) {
            let l = &self.live[li as usize].lesson;
            self.sink.push(
                Diagnostic::new(
                    codes::CONTRADICTED,
                    format!(
                        "lesson in play was contradicted by {} experience(s): {}",
                        exps.len(),
                        short_list(&exps, 3)
                    ),
                )
                .subject(&l.id)
                .domain(&l.domain)
                .with("lesson", l.id.clone())
                .with("confidence", confidence_value(l.confidence))
                .experiences(&exps),
            );
        }
        // Sort by id; remap candidate → lesson indices.
        let mut order: Vec<u32> = (0..self.live.len() as u32).collect();
        order.sort_by(|&a, &b| {
            self.live[a as usize]
                .lesson
                .id
                .cmp(&self.live[b as usize].lesson.id)
        });
        let mut new_index = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old as usize] = new as u32;
        }
        let mut slots: Vec<Option<Lesson>> = self.live.into_iter().map(|l| Some(l.lesson)).collect();
        let lessons: Vec<Lesson> = order.iter().map(|&o| slots[o as usize].take().unwrap()).collect();
        let lesson_of = self
            .lesson_of
            .into_iter()
            .map(|o| o.map(|i| new_index[i as usize]))
            .collect();
        (Scored { lessons, lesson_of }, self.sink)
    }
}

fn entry(
    at: Millis,
    event: &'static str,
    confidence: i32,
    experiences: Vec<String>,
    detail: Option<String>,
) -> HistoryEntry {
    let mut experiences = experiences;
    experiences.sort();
    experiences.dedup();
    HistoryEntry {
        at,
        event,
        confidence,
        experiences,
        detail,
    }
}

/// Thousandths as a JSON number with three decimals.
pub fn confidence_value(thousandths: i32) -> serde_json::Value {
    let s = format!("{}.{:03}", thousandths / 1000, thousandths % 1000);
    serde_json::from_str(&s).unwrap_or(serde_json::Value::Null)
}

/// Thousandths printed with three decimals: `0.650`.
pub fn confidence_text(thousandths: i32) -> String {
    format!("{}.{:03}", thousandths / 1000, thousandths % 1000)
}
