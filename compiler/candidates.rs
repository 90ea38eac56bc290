//! Candidates: one per (experience, domain, text) — do, avoid, watch and mechanical
//! (DESIGN §5.1) — with the per-candidate gates recorded as flags.
//!
//! The refusals are decided here, before clustering: a candidate whose text, key, record id or
//! arguments look like a secret is refused as a credential (its text replaced, its key and
//! working form dropped), and a record's refused domains still produce its candidates, refused
//! as invalid domains, so that every domain's funnel adds up. The outcome and narrative gates
//! are only recorded as flags; the gate stage acts on them per cluster.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::cluster::fx::{FxMap, FxSet};
use crate::diagnostics::{Diagnostic, Notes, Sink, codes};
use crate::model::{
    Candidate, Corpus, DeadEnd, Experience, Extra, Flags, Id, Kind, LessonClaim, Name, Names, OpStatus,
    Operation, Origin, Refusal, Source,
};
use crate::narrative::Shape;
use crate::normalize::{self, SecretScanner, marker, redacted_pattern, subject_id};
use crate::opkey::{self, COMMAND_FIELDS, Kinship};
use crate::outcome::Verdict;
use crate::policy::{Policy, Rules};

/// The member a loader adds to arguments it recovered from a cut (GAIA keeps 500 characters):
/// what followed the cut is unknown, so `describe` names no member the cut call lacks.
pub const CUT_ARGS: &str = "…";

/// A mechanical lesson found in one experience: on `key`, `working` args succeeded after
/// `failing` args failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mechanical {
    pub key: String,
    /// `python_json` of the working args: mechanical candidates cluster exactly on it.
    pub working: String,
    /// ``<key>: run `<working>` instead of `<failing>` `` (normalised text).
    pub text: String,
    /// The program the working command runs inside its wrappers (`npm` in `cd web && npm
    /// ci`), when the key came from a command.
    pub program: Option<String>,
    /// Every string of both argument objects, for the credential scan.
    scanned: Vec<String>,
    /// The name of the record's dead end that gives this fix up, when one does
    /// (`given_up_in`): no lesson is learned from it, and `trace` says why.
    pub given_up: Option<String>,
}

/// The first of `dead_ends` that names the fix from `failing` to `working`: it names every
/// word the fix added to the failing command (`--no-verify`, `-p no:randomly`), and, where it
/// names the program, the same subcommand ("npm install --legacy-peer-deps" is another
/// approach than a fix to `npm ci --legacy-peer-deps`). Words are compared whole, without the
/// quotes and punctuation around them, case aside.
fn given_up_in<'d>(failing: &str, working: &str, dead_ends: &'d [DeadEnd]) -> Option<&'d DeadEnd> {
    let failing: Vec<String> = failing.split_whitespace().filter_map(bare_word).collect();
    let words: Vec<String> = working.split_whitespace().filter_map(bare_word).collect();
    let added: Vec<&String> = words.iter().filter(|w| !failing.contains(w)).collect();
    let (Some(program), sub) = (words.first(), words.get(1).filter(|w| !w.starts_with('-'))) else {
        return None;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    if added.is_empty() {
        return None;
    }
    dead_ends.iter().find(|d| {
        let named: Vec<String> = d.name.split_whitespace().filter_map(bare_word).collect();
        added.iter().all(|w| named.contains(w))
            && (named.iter().enumerate())
                .filter(|(_, w)| *w == program)
                .all(|(i, _)| sub.is_none_or(|sub| named.get(i + 1) == Some(sub)))
    })
}

/// A word of a command or a dead end's name, lower-cased, without the quotes, backticks,
/// brackets and sentence punctuation around it; none when nothing is left.
fn bare_word(w: &str) -> Option<String> {
    let w = w.trim_matches(|c: char| {
        matches!(
            c,
            '`' | '\'' | '"' | '(' | ')' | '[' | ']' | ',' | ';' | '.' | '!' | '?'
        )
    });
    (w.chars().any(char::is_alphanumeric)).then(|| w.to_lowercase())
}

/// Candidates from every experience and claim, in record order (experiences first, then
/// claims; within a record: do, mechanical, watch, avoid; then by domain), and the table of
/// the domain and project names they hold places in.
pub fn extract(
    corpus: &Corpus,
    verdicts: &[Verdict],
    rules: &Rules,
    sink: &mut Sink,
) -> (Vec<Candidate>, Names) {
    let (names, places) = names_of(corpus);
    let shapes = Shapes::new(corpus, rules);
    let from_experiences = in_parts(&corpus.experiences, |i, e, part| {
        let passed = verdicts.get(i as usize).is_some_and(|v| v.passed);
        from_experience(i, e, passed, rules, &shapes, &places, part)
    });
    let from_claims = in_parts(&corpus.claims, |i, c, part| {
        from_claim(i, c, rules, &shapes, &places, part)
    });
    let mut parts: Vec<Part> = from_experiences.chain(from_claims).collect();
    let mut notes = Notes::default();
    for part in &mut parts {
        sink.append(&mut part.sink);
        notes = notes.merge(std::mem::take(&mut part.notes));
    }
    sink.extend(notes.into_sink());
    let candidates = crate::bulk::concat(parts.into_iter().map(|p| p.candidates).collect());
    (candidates, names)
}

/// Each name's place in the table, by the name (borrowed from the records).
type Places<'c> = FxMap<&'c str, Name>;

/// Every domain (valid or refused) and project the records name, as one table (`Names`), and
/// the place of each: found on every core, a few thousand names among a million records.
fn names_of<'c>(corpus: &'c Corpus) -> (Names, Places<'c>) {
    type Named<'c> = (&'c [String], &'c [String], &'c Option<String>);
    let add = |mut set: FxSet<&'c str>, (domains, refused, project): Named<'c>| {
        set.extend(domains.iter().chain(refused).map(String::as_str));
        set.extend(project.as_deref());
        set
    };
    let union = |a: FxSet<&'c str>, b: FxSet<&'c str>| {
        let (mut big, small) = if a.len() < b.len() { (b, a) } else { (a, b) };
        big.extend(small);
        big
    };
    let experiences = (corpus.experiences.par_iter())
        .map(|e| (&e.domains[..], &e.refused_domains[..], &e.project))
        .fold(FxSet::default, add);
    let claims = (corpus.claims.par_iter())
        .map(|c| (&c.domains[..], &c.refused_domains[..], &c.project))
        .fold(FxSet::default, add);
    let mut sorted: Vec<&str> = experiences
        .chain(claims)
        .reduce(FxSet::default, union)
        .into_iter()
        .collect();
    sorted.sort_unstable();
    let places = (sorted.iter().enumerate())
        .map(|(i, &s)| (s, Name::at(i)))
        .collect();
    (Names::new(sorted), places)
}

/// `make` over every record (with its index), in runs of records, each record's candidates
/// and notes added to its run's part: a vector per record would be a million small ones to
/// gather, and the notes (a record that yields nothing) fold as they are made.
fn in_parts<'a, T: Sync>(
    records: &'a [T],
    make: impl Fn(u32, &T, &mut Part) + Sync + Send + 'a,
) -> impl IndexedParallelIterator<Item = Part> + 'a {
    let run_length = run_length(records.len());
    records.par_chunks(run_length).enumerate().map(move |(k, run)| {
        // Room for two candidates a record (a million-record corpus averages about 1.7):
        // grown by doubling, the run's candidates were copied and faulted in twice over.
        let mut part = Part {
            candidates: Vec::with_capacity(2 * run.len()),
            ..Part::default()
        };
        for (j, r) in run.iter().enumerate() {
            make((k * run_length + j) as u32, r, &mut part);
        }
        part
    })
}

/// Records per run of `in_parts`: each run keeps its own copy of every text its candidates
/// share, so the longer the runs the fewer copies (at a million records, runs of 16 384 made
/// one per run of each recurring text); short enough that two cores still get a few runs
/// each. Fixed by the corpus alone, not the thread count, so no run boundary (and no order of
/// anything the runs make) can vary with the machine.
fn run_length(records: usize) -> usize {
    records.div_ceil(8).clamp(4096, 65536)
}

/// The candidates and diagnostics of a run of records.
#[derive(Default)]
struct Part {
    candidates: Vec<Candidate>,
    sink: Sink,
    notes: Notes,
    /// Texts recur (a paraphrase family, a gotcha many runs meet): candidates of the run share
    /// one copy of each (do-texts share theirs in `Shapes`, across runs; domains and projects
    /// are places in the compile's `Names`). With a text, once asked: could a secret hide in it
    /// (`SecretScanner::may_hold`), so a recurring text is scanned once per run, not once per
    /// draft.
    shared: FxMap<Arc<str>, Cell<Option<bool>>>,
}

impl Part {
    /// The run's copy of `s`, made on first sight: looked up once per record and text, not
    /// once per candidate, and never a copy made only to be dropped.
    fn shared(&mut self, s: &str) -> Arc<str> {
        self.entry(s, None).0
    }

    /// `shared`, and whether a secret may hide in the text, scanned on first asking.
    fn scanned(&mut self, s: &str, secrets: &SecretScanner) -> (Arc<str>, bool) {
        let (text, may_hold) = self.entry(s, Some(secrets));
        (text, may_hold.expect("scanned when asked"))
    }

    /// The run's copy of `s`, and whether a secret may hide in it: known, or scanned now
    /// when `secrets` is given (and remembered), else `None`.
    fn entry(&mut self, s: &str, secrets: Option<&SecretScanner>) -> (Arc<str>, Option<bool>) {
        let ask = |known: Option<bool>| known.or_else(|| Some(secrets?.may_hold_text(s)));
        if let Some((known, may_hold)) = self.shared.get_key_value(s) {
            let found = ask(may_hold.get());
            may_hold.set(found);
            return (known.clone(), found);
        }
        let (new, found): (Arc<str>, Option<bool>) = (Arc::from(s), ask(None));
        self.shared.insert(new.clone(), Cell::new(found));
        (new, found)
    }

    fn note(&mut self, diags: Sink) {
        for d in diags {
            self.notes.add(d, &mut self.sink);
        }
    }
}

/// One text an experience or claim offers, before it is spread over domains.
struct Draft<'a> {
    kind: Kind,
    origin: Origin,
    /// Borrowed from the record, but for a mechanical lesson's own text.
    text: Cow<'a, str>,
    key: Option<String>,
    working: Option<String>,
    reasons: Vec<String>,
    outcome_failed: bool,
    narrative: Shape,
    /// Other strings the candidate would carry or name (arguments), for the credential scan.
    scanned: Vec<String>,
    /// Restricts the draft to these domains (a mechanical lesson whose program names one).
    only_domain: Option<String>,
    /// The text's one copy and whether a secret may hide in it, when `Shapes` holds them.
    shared: Option<(Arc<str>, bool)>,
}

impl<'a> Draft<'a> {
    fn new(kind: Kind, origin: Origin, text: impl Into<Cow<'a, str>>) -> Draft<'a> {
        Draft {
            kind,
            origin,
            text: text.into(),
            key: None,
            working: None,
            reasons: Vec::new(),
            outcome_failed: false,
            narrative: Shape::default(),
            scanned: Vec::new(),
            only_domain: None,
            shared: None,
        }
    }

    /// The first secret this draft carries, as (field, pattern). `text_may_hold`: whether a
    /// secret may hide in the text (`SecretScanner::may_hold` of it alone).
    fn secret(&self, secrets: &SecretScanner, text_may_hold: bool) -> Option<(&'static str, String)> {
        let others = [self.key.as_deref(), self.working.as_deref()]
            .into_iter()
            .flatten();
        let mut others = others
            .chain(self.scanned.iter().chain(&self.reasons).map(String::as_str))
            .peekable();
        // One scan over all the other texts: almost no draft carries a secret. (`find` below
        // decides, text by text; the scans only rule texts out.)
        let scan = text_may_hold || (others.peek().is_some() && secrets.may_hold(others));
        let hit = |s: &str| -> Option<String> {
            redacted_pattern(s)
                .map(String::from)
                .or_else(|| scan.then(|| secrets.find(s)).flatten().map(String::from))
        };
        if let Some(p) = hit(&self.text) {
            return Some(("text", p));
        }
        if let Some(p) = self.key.as_deref().and_then(hit) {
            return Some(("operation key", p));
        }
        if let Some(p) = self.working.as_deref().and_then(hit) {
            return Some(("arguments", p));
        }
        if let Some(p) = self.scanned.iter().find_map(|s| hit(s)) {
            return Some(("arguments", p));
        }
        if let Some(p) = self.reasons.iter().find_map(|s| hit(s)) {
            return Some(("reasons", p));
        }
        None
    }
}

/// What every candidate of one record shares.
struct Record<'a> {
    source: Source,
    id: Id,
    loc: &'a crate::model::SourceLoc,
    recorded_at: i64,
    project: Option<Name>,
    blessed: bool,
    /// Valid domains, then refused ones (with their refusal): each one's place and name.
    domains: Vec<(Name, &'a str, Option<Refusal>)>,
}

impl Record<'_> {
    /// Adds the drafts' candidates, in every domain, to `part`; returns the diagnostics.
    fn spread(&self, groups: &[Vec<Draft>], secrets: &SecretScanner, part: &mut Part) -> Sink {
        let mut diags = Sink::new();
        let id_secret = redacted_pattern(&self.id).map(String::from);
        for group in groups {
            // One text per draft, shared by its candidates in every domain; each draft scanned
            // once, not once per domain.
            let mut texts: Vec<Arc<str>> = Vec::with_capacity(group.len());
            let mut extras: Vec<Option<Arc<Extra>>> = Vec::with_capacity(group.len());
            let mut secrets_of: Vec<Option<(&'static str, String)>> = Vec::with_capacity(group.len());
            for d in group {
                let (text, may_hold) = match &d.shared {
                    Some((text, may_hold)) => (text.clone(), *may_hold),
                    None => part.scanned(&d.text, secrets),
                };
                texts.push(text);
                extras.push(Extra::new(d.key.as_deref(), d.working.as_deref(), &d.reasons));
                let id_secret = id_secret.clone().map(|p| ("record id", p));
                secrets_of.push(id_secret.or_else(|| d.secret(secrets, may_hold)));
            }
            for &(domain, name, ref domain_refusal) in &self.domains {
                let made = group.iter().zip(&secrets_of).zip(&texts).zip(&extras);
                for (((draft, secret), text), extra) in made {
                    if draft.only_domain.as_ref().is_some_and(|only| **only != *name) {
                        continue;
                    }
                    let mut c = Candidate {
                        source: self.source,
                        record_id: self.id.clone(),
                        domain,
                        kind: draft.kind,
                        origin: draft.origin,
                        text: text.clone(),
                        extra: extra.clone(),
                        recorded_at: self.recorded_at,
                        project: self.project,
                        refusal: domain_refusal.clone().map(Box::new),
                        flags: Flags::new(self.blessed, draft.outcome_failed, draft.narrative.narrative),
                        narrative_score: draft.narrative.score,
                        narrative_signals: draft.narrative.fired,
                    };
                    if let Some((field, pattern)) = secret {
                        c.refusal = Some(Box::new(Refusal::Credential {
                            pattern: pattern.clone(),
                        }));
                        c.text = part.shared(&marker(pattern));
                        c.extra = None;
                        c.set_narrative(false);
                        c.narrative_signals = 0;
                        diags.push(self.credential_diagnostic(&c, name, field, pattern));
                    }
                    part.candidates.push(c);
                }
            }
        }
        diags
    }

    fn credential_diagnostic(&self, c: &Candidate, domain: &str, field: &str, pattern: &str) -> Diagnostic {
        // Field names may be plural (`reasons`, `gotchas`).
        let verb = if field.ends_with('s') { "look" } else { "looks" };
        let message = format!(
            "{} candidate refused: its {field} {verb} like a secret ({pattern})",
            c.kind.as_str()
        );
        Diagnostic::new(codes::CREDENTIAL_REFUSED, message)
            .subject(subject_id(&self.id))
            .at(self.loc)
            .domain(domain)
            .with("pattern", pattern)
            .with("field", field)
            .with("kind", c.kind.as_str())
            .experiences([&self.id])
    }

    fn no_candidates(&self, message: &str) -> Sink {
        let note = || {
            Diagnostic::new(codes::NO_CANDIDATES, message)
                .subject(subject_id(&self.id))
                .at(self.loc)
                .experiences([&self.id])
        };
        let valid: Vec<&str> = self
            .domains
            .iter()
            .filter(|(_, _, r)| r.is_none())
            .map(|&(_, d, _)| d)
            .collect();
        if valid.is_empty() {
            return vec![note()];
        }
        valid.into_iter().map(|d| note().domain(d)).collect()
    }
}

fn record_domains<'c>(
    valid: &'c [String],
    refused: &'c [String],
    places: &Places,
) -> Vec<(Name, &'c str, Option<Refusal>)> {
    let valid = valid.iter().map(|d| (d, None));
    let refused = (refused.iter()).map(|d| (d, Some(Refusal::InvalidDomain { raw: d.clone() })));
    (valid.chain(refused))
        .map(|(d, r)| (place(places, d), d.as_str(), r))
        .collect()
}

/// The place of a name the records hold (`names_of` took every one).
fn place(places: &Places, name: &str) -> Name {
    *places
        .get(name)
        .expect("names_of took every domain and project of the records")
}

/// The narrative classification of every distinct do-text, computed once: agents write the same
/// lesson word for word again and again, and the classifier is the costliest step here.
/// Looked up by record (experiences, then claims), not by text: no text is hashed twice.
struct Shapes {
    /// Per experience, then per claim: its do-text's place in `known` (`u32::MAX`: none).
    place: Vec<u32>,
    experiences: usize,
    known: Vec<KnownText>,
}

/// A distinct do-text, worked on once for every record that has it.
struct KnownText {
    /// The one copy its candidates share in every run of records (a run's own copies made one
    /// per run of each recurring lesson).
    text: Arc<str>,
    shape: Shape,
    /// Whether a secret may hide in it (`SecretScanner::may_hold`).
    may_hold: bool,
}

impl Shapes {
    fn new(corpus: &Corpus, rules: &Rules) -> Shapes {
        // On every core: one core reading a million records' words was a tenth of a second
        // with the others idle.
        let texts: Vec<Option<&str>> = (corpus.experiences.par_iter())
            .map(|e| {
                non_empty(&e.words.lesson)
                    .or(non_empty(&e.words.breakthrough))
                    .or(non_empty(&e.words.content))
            })
            .chain((corpus.claims.par_iter()).map(|c| (c.kind == Kind::Do).then(|| c.text.trim())))
            .collect();
        // A million texts, few distinct: classified and scanned once each.
        let (place, texts) = crate::bulk::first_seen(&texts, |t| *t);
        let known = (texts.par_iter())
            .map(|&t| KnownText {
                text: Arc::from(t),
                shape: rules.narrative.shape(t),
                may_hold: rules.secrets.may_hold_text(t),
            })
            .collect();
        Shapes {
            place,
            experiences: corpus.experiences.len(),
            known,
        }
    }

    /// The classification of a record's do-text `text`, and the text's shared copy with its
    /// scan. Classified afresh, with no copy, when it is not the text the shapes took for that
    /// record (the two choices of a do-text can never drift into a wrong answer, only into a
    /// slower one).
    fn of(&self, record: Source, text: &str, rules: &Rules) -> (Shape, Option<(Arc<str>, bool)>) {
        let at = match record {
            Source::Experience(i) => i as usize,
            Source::Claim(i) => self.experiences + i as usize,
        };
        let place = self.place.get(at).map_or(usize::MAX, |&p| p as usize);
        match self.known.get(place) {
            Some(k) if *k.text == *text => (k.shape, Some((k.text.clone(), k.may_hold))),
            _ => (rules.narrative.shape(text), None),
        }
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn from_experience(
    index: u32,
    e: &Experience,
    passed: bool,
    rules: &Rules,
    shapes: &Shapes,
    places: &Places,
    part: &mut Part,
) {
    let secrets = &rules.secrets;
    let id = normalize::safe_id(&e.id, &e.source, secrets).map_or_else(|| e.id.clone(), Id::from);
    let record = Record {
        source: Source::Experience(index),
        id,
        loc: &e.source,
        recorded_at: e.recorded_at,
        project: e.project.as_deref().map(|p| place(places, p)),
        blessed: e.blessed,
        domains: record_domains(&e.domains, &e.refused_domains, places),
    };

    let mut dos = Vec::new();
    let lesson = non_empty(&e.words.lesson)
        .map(|t| (Origin::Lesson, t))
        .or_else(|| non_empty(&e.words.breakthrough).map(|t| (Origin::Breakthrough, t)));
    let bare = lesson.is_none() && e.words.gotchas.is_empty() && e.words.dead_ends.is_empty();
    let lesson = lesson.or_else(|| {
        (e.blessed && bare)
            .then(|| non_empty(&e.words.content).map(|t| (Origin::Content, t)))
            .flatten()
    });
    if let Some((origin, t)) = lesson {
        let mut d = Draft::new(Kind::Do, origin, t);
        d.outcome_failed = !(passed || e.blessed);
        (d.narrative, d.shared) = shapes.of(Source::Experience(index), t, rules);
        dos.push(d);
    }

    let mut mechanicals = Vec::new();
    if passed {
        // A record has a few domains: a look along them, where a set was built for every
        // record that passed, most of which have no fix to ask about.
        let has_domain = |d: &str| e.domains.iter().any(|x| x == d);
        // A fix the record gives up as a dead end ("skipping the hooks with `git commit
        // --no-verify`") is no lesson: it would teach what the record says to avoid.
        let fixes = mechanical(&e.operations, &rules.policy, &e.words.dead_ends).into_iter();
        for m in fixes.filter(|m| m.given_up.is_none()) {
            let mut d = Draft::new(Kind::Do, Origin::Mechanical, m.text);
            d.key = Some(m.key);
            d.working = Some(m.working);
            d.scanned = m.scanned;
            // The program's own domain when the record is tagged with it (a helm fix in a
            // record tagged `helm` and `kubernetes` is a helm lesson, as in a record tagged
            // `helm` alone), else the domain the program map gives it.
            let own = (m.program.as_deref())
                .and_then(|p| crate::normalize::domain(p, &rules.aliases).ok())
                .filter(|d| has_domain(d));
            d.only_domain = own.or_else(|| {
                m.program
                    .as_deref()
                    .and_then(|p| rules.aliases.program_domain(p))
                    // An unmapped program belongs to `general` when the record has that
                    // domain (GAIA sessions do); native records without it keep every domain.
                    .or(Some(crate::load::GAIA_GENERAL_DOMAIN))
                    .filter(|d| has_domain(d))
                    .map(String::from)
            });
            mechanicals.push(d);
        }
    }

    // Gotchas and dead ends are told apart by their lower-cased text; a record with one of
    // them (most) has nothing to tell apart, and lowers no copy of it.
    let mut watches = Vec::new();
    let mut seen = BTreeSet::new();
    let many = e.words.gotchas.len() > 1;
    for g in &e.words.gotchas {
        let g = g.trim();
        if !g.is_empty() && (!many || seen.insert(g.to_lowercase())) {
            watches.push(Draft::new(Kind::Watch, Origin::Gotcha, g));
        }
    }

    let mut avoids: Vec<Draft> = Vec::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let many = e.words.dead_ends.len() > 1;
    for dead in &e.words.dead_ends {
        let name = dead.name.trim();
        if name.is_empty() {
            continue;
        }
        let mut new = || {
            avoids.push(Draft::new(Kind::Avoid, Origin::DeadEnd, name));
            avoids.len() - 1
        };
        let slot = match many {
            true => *by_name.entry(name.to_lowercase()).or_insert_with(new),
            false => new(),
        };
        if let Some(r) = non_empty(&dead.reason) {
            avoids[slot].reasons.push(r.to_string());
        }
    }
    for a in &mut avoids {
        // Later entries are newer: newest first, each reason once.
        a.reasons.reverse();
        if a.reasons.len() > 1 {
            let mut seen = BTreeSet::new();
            a.reasons.retain(|r| seen.insert(r.clone()));
        }
    }

    let groups = [dos, mechanicals, watches, avoids];
    let before = part.candidates.len();
    let mut diags = record.spread(&groups, secrets, part);
    if part.candidates.len() == before {
        diags.extend(record.no_candidates(&no_lesson_message(e, &rules.policy)));
    }
    part.note(diags);
}

fn from_claim(index: u32, c: &LessonClaim, rules: &Rules, shapes: &Shapes, places: &Places, part: &mut Part) {
    let secrets = &rules.secrets;
    let id = normalize::safe_id(&c.id, &c.loc, secrets).map_or_else(|| c.id.clone(), Id::from);
    let record = Record {
        source: Source::Claim(index),
        id,
        loc: &c.loc,
        recorded_at: c.recorded_at,
        project: c.project.as_deref().map(|p| place(places, p)),
        blessed: false,
        domains: record_domains(&c.domains, &c.refused_domains, places),
    };
    let text = c.text.trim();
    if text.is_empty() {
        part.note(record.no_candidates("claim yields no candidate lesson: its text is empty"));
        return;
    }
    let mut d = Draft::new(c.kind, Origin::Claim, text);
    d.key = c.operation_key.clone().filter(|k| !k.trim().is_empty());
    if c.kind == Kind::Do {
        (d.narrative, d.shared) = shapes.of(Source::Claim(index), text, rules);
    }
    let before = part.candidates.len();
    let mut diags = record.spread(&[vec![d]], secrets, part);
    if part.candidates.len() == before {
        diags.extend(record.no_candidates("claim yields no candidate lesson: it names no domain"));
    }
    part.note(diags);
}

/// K001's message. When every call that failed did so transiently, the calls after them fixed
/// nothing the record could teach, and the note says so: "record operations that failed and
/// were then fixed" would otherwise read as advice the record already followed.
fn no_lesson_message(e: &Experience, policy: &Policy) -> String {
    let causes: Option<Vec<&str>> = (e.operations.iter())
        .filter(|op| op.status == OpStatus::Error)
        .map(|op| op.error.as_deref().and_then(|err| policy.transient_cause(err)))
        .collect();
    match causes.filter(|c| !c.is_empty()) {
        Some(c) => format!(
            "experience yields no candidate lesson: its {} failed transiently (policy transient_errors: \"{}\"), which says nothing about {} arguments",
            crate::diagnostics::plural(c.len(), "failed call", "failed calls"),
            c[0],
            if c.len() == 1 { "its" } else { "their" }
        ),
        None => "experience yields no candidate lesson".to_string(),
    }
}

/// How a call's failure counts for the mechanical lessons.
#[derive(Clone, Copy, PartialEq)]
enum Failed {
    /// It passed, or was refused and never ran.
    No,
    /// It failed on its arguments, or on what they ran against.
    Teaches,
    /// A transient error, which says nothing about the arguments.
    Transient,
    /// Nothing listened where it connected (`policy.address_errors`): transient, unless the
    /// next working call on its key went to another port or host.
    Refused,
}

fn failed(op: &Operation, policy: &Policy) -> Failed {
    if op.status != OpStatus::Error {
        return Failed::No;
    }
    match op.error.as_deref().and_then(|e| policy.transient_cause(e)) {
        None => Failed::Teaches,
        Some(cause) if policy.refuses_address(cause) => Failed::Refused,
        Some(_) => Failed::Transient,
    }
}

/// Mechanical lessons in one experience's operations (the caller checks that it passed):
/// an operation on key k failed, and the next success on k had different args. One per
/// (key, working args); the failing form named is the latest failure before the fix.
///
/// A success on k settles k's failures, so later calls on k (`cargo nextest run` after
/// `cargo build --locked` fixed `cargo build`) are not fixes for them; and a fix whose failing
/// form succeeds later in the same experience was a step before it, not a replacement for it
/// (`cargo clean`, then `cargo build` again), so it teaches no "instead of". A success is a fix
/// only when it answers the failure (`answers` below); one that answers none is the next task
/// on the program and settles nothing. A fix one of the record's `dead_ends` gives up is
/// marked (`Mechanical::given_up`); `dead_ends` is empty where the source records none (GAIA).
pub fn mechanical(ops: &[Operation], policy: &Policy, dead_ends: &[DeadEnd]) -> Vec<Mechanical> {
    let mut out = Vec::new();
    // Nothing before the first teaching failure can take part, and without a success after
    // it there is nothing to learn: most records stop here, their args never parsed.
    let Some(first) =
        (ops.iter()).position(|op| matches!(failed(op, policy), Failed::Teaches | Failed::Refused))
    else {
        return out;
    };
    let ops = &ops[first..];
    if !ops.iter().any(|op| op.status == OpStatus::Ok) {
        return out;
    }
    // Each call's args parsed once (they are held as text, see `Args`); no args and `{}` are
    // the same call.
    let args: Vec<Value> = ops
        .iter()
        .map(|op| match op.args.value() {
            Value::Null => Value::Object(Map::new()),
            v => v,
        })
        .collect();
    let keys: Vec<String> = ops
        .iter()
        .zip(&args)
        .map(|(op, a)| opkey::operation_key(&op.tool, a))
        .collect();
    // Keyed on the whole call (DESIGN §3.3), then compared, named and clustered without what
    // it wrote (`content_args`): an edit retried with other text is the same call.
    let args: Vec<Value> = (args.into_iter())
        .map(|a| {
            if let Cow::Owned(form) = policy.call_form(&a) {
                form
            } else {
                a
            }
        })
        .collect();
    // Borrowed from the args, except an argv array's joined words.
    let commands: Vec<Option<Cow<str>>> = args.iter().map(opkey::command_of).collect();
    // Each command parsed once, when first compared: a long session compares its calls with
    // each other many times.
    let parsed: Vec<OnceCell<Option<opkey::Command>>> = commands.iter().map(|_| OnceCell::new()).collect();
    let command = |i: usize| {
        parsed[i]
            .get_or_init(|| commands[i].as_deref().map(opkey::Command::parse))
            .as_ref()
    };
    let kin = |i: usize, j: usize| match (command(i), command(j)) {
        (Some(a), Some(b)) => a.kinship(b),
        _ => Kinship::SameSubcommand,
    };
    // Whether a success after `j` on the failure `i`'s key is related to it (`answers`), from
    // where each key last succeeded by what a command can share with another, built once when
    // first asked: scanning the rest of the session for each such success made a long session
    // of test runs on one file each (`pytest tests/test_a.py` failed, `pytest
    // tests/test_b.py` passed, ...) quadratic.
    let last_ok: OnceCell<LastOk> = OnceCell::new();
    let related_later = |i: usize, j: usize| {
        let last = last_ok.get_or_init(|| {
            let mut last = LastOk::default();
            for (l, op) in ops.iter().enumerate() {
                if op.status == OpStatus::Ok {
                    last.add(&keys[l], command(l), l);
                }
            }
            last
        });
        // A call that corrects a word of the failed one is a closer answer too (`make clean`
        // after `make tests` failed, `make test` later), looked for among the next calls only:
        // a correction follows its failure closely.
        let corrects_i = |l: usize| {
            ops[l].status == OpStatus::Ok
                && keys[l] == keys[i]
                && command(i).zip(command(l)).is_some_and(|(f, c)| c.corrects(f))
        };
        last.after(&keys[i], command(i), j) || (j + 1..ops.len()).take(CORRECTION_WINDOW).any(corrects_i)
    };
    // Does the success at `j` answer the failure at `i` (same key)? The same subcommand, or a
    // different one on the same file, does. A different one with nothing in common replaces
    // the failed call only as the very next call (`npm install` right after `npm ci`
    // failed), and only when no later success on the key is a closer answer: after `git
    // push` failed, `git status` was a look around, and the `git push` that works later says so.
    // A look around (`policy.inspect_programs`: `git status`, `kubectl get`) replaces nothing
    // even when no such call follows: "run `git status` instead of `git push`" is no lesson.
    // A wrapper running another program (`uv run ruff` after `uv run pytest` failed) never
    // answers: only the key is shared.
    // Nor does a look around answer a failure of another subcommand on the same object
    // (`kubectl describe deploy/api` after `kubectl rollout status deploy/api` timed out), nor
    // another subcommand a look that failed (`kubectl rollout undo` after it): an action is
    // no better way to look.
    // A program asked about itself (`dotnet --info`, `node --version`) looks around too.
    let looks_around = |j: usize| command(j).is_some_and(|c| policy.inspects(c) || c.only_asks());
    let look_pair = |i: usize, j: usize| looks_around(i) || looks_around(j);
    // Asked only of `i`, the call that ran just before `j` (the loop's `ran_before`).
    let answers = |i: usize, j: usize| match kin(i, j) {
        Kinship::SameSubcommand => true,
        Kinship::SameFile => !look_pair(i, j),
        Kinship::OtherProgram => false,
        Kinship::Unrelated => !related_later(i, j) && !look_pair(i, j),
    };
    // Calls that read the same once their secrets are redacted differ when the secrets did
    // (a retry with the right password): a fix, whose candidate the secret then refuses (N002).
    let secret_only = |i: usize, j: usize| ops[i].secret_print != ops[j].secret_print;
    let same_call = |i: usize, j: usize| args[i] == args[j] && !secret_only(i, j);
    // A check run that failed because it found work (`python manage.py makemigrations
    // --check`), then the program doing that work: the failure was the report, not a wrong
    // call, and "run it without --check" is no lesson. It still settles the failure.
    let probe = |i: usize| commands[i].as_deref().and_then(|c| policy.probe_flag(c));
    let probe_then_act = |i: usize, j: usize| probe(i).is_some() && probe(j).is_none();
    // The other way round, the real call failed and a probe of it passed (`kubectl apply -f
    // ingress.yaml`, an edit, then `kubectl apply -f ingress.yaml --dry-run=server`): a report
    // that the call would work now is no fix for it, nor does it settle the failure, so the
    // real call that works later is an identical retry, or the fix when its form changed.
    let act_then_probe = |i: usize, j: usize| probe(i).is_none() && probe(j).is_some();
    // A look of the same subcommand after an action is such a report too (`make -n release`
    // after `make release`, `nginx -t` after `nginx`: looks by flag, `policy.inspects`).
    let act_then_look = |i: usize, j: usize| looks_around(j) && !looks_around(i);
    // A check that failed because it found problems (`ruff check .`), then the same program
    // applying its fixes (`ruff check --fix .`): the failure was the report and the fix flag
    // did the work, so, as with a probe, the pair settles the failure and teaches nothing.
    let fix = |i: usize| commands[i].as_deref().and_then(|c| policy.fix_flag(c));
    let check_then_fix = |i: usize, j: usize| fix(i).is_none() && fix(j).is_some();
    // A test that failed on the code (its error reports a failed assertion,
    // `policy.assertion_markers`), an edit, then the test passing with other arguments
    // (`pytest -q`, an edit, `pytest -q -x`): the edit fixed what the test found, and the new
    // arguments are incidental, so the pair settles the failure and teaches no "instead of".
    // A failure that names no assertion (`fixture 'db' not found` from the wrong directory)
    // may still be fixed by the new arguments. `edits[n]` counts the workspace changes that
    // ran among the first n calls; counted only for an experience that has a fix to judge.
    let edits = std::cell::OnceCell::new();
    let edits = || -> &Vec<usize> {
        edits.get_or_init(|| {
            std::iter::once(0)
                .chain(ops.iter().scan(0, |n, op| {
                    *n += usize::from(
                        op.status != OpStatus::Refused && policy.is_mutating_call(&op.tool, &op.args),
                    );
                    Some(*n)
                }))
                .collect()
        })
    };
    // A test that ran past its own time limit (`policy.test_timeouts`: "panic: test timed out
    // after 30s") found a hang in the code as an assertion finds a fault: after an edit, the
    // edit fixed it, not the raised limit. Without one, the new limit may be the fix.
    let finding = |i: usize| {
        ops[i].error.as_deref().is_some_and(|e| {
            let e = e.to_lowercase();
            (policy.assertion_markers.iter())
                .chain(&policy.test_timeouts)
                .any(|m| e.contains(m.as_str()))
        })
    };
    // An edit of a file the failure names (`-->  prisma/schema.prisma:41`, `-->
    // src/integrator.rs:42:18`) fixed what the failure reported, whatever it was: the call
    // after it passing with other arguments (a new migration name, `--locked`) is no fix.
    let edited_named_file = |i: usize, j: usize| {
        let Some(error) = ops[i].error.as_deref() else {
            return false;
        };
        (i + 1..j).any(|m| {
            ops[m].status == OpStatus::Ok
                && edited_paths(&args[m]).any(|path| names_file(error, path))
                && policy.is_mutating_call(&ops[m].tool, &ops[m].args)
        })
    };
    let edited_in_between =
        |i: usize, j: usize| (finding(i) && edits()[j] > edits()[i + 1]) || edited_named_file(i, j);
    // Another run of the failed program that passed in between, with another subcommand and
    // neither a look around nor a check (`terraform init -upgrade` between a failed `terraform
    // plan` and `terraform plan -out=tfplan`; `docker compose down -v` between two `up`s),
    // changed what the working call ran against: it, not the new arguments, may be the fix. The
    // pair settles the failure and teaches no "instead of". A failure is settled at its first
    // answer, so the spans scanned on one key do not overlap.
    // So did another program's run (`git push` between a failed `gh pr create` and one with
    // `--draft`, `pod repo update`, `az login`, `docker stop` of the container holding the
    // port): which of the two calls fixed it cannot be told from the calls, and a wrong
    // "instead of" reaches every plan. Only a look around, a check or an edit (judged above)
    // stands between a failure and its fix without a doubt.
    let prepared_in_between = |i: usize, j: usize| {
        (i + 1..j).any(|m| {
            ops[m].status == OpStatus::Ok
                && !looks_around(m)
                && !command(m).is_some_and(|c| policy.checks(c))
                && if keys[m] == keys[j] {
                    !matches!(kin(m, j), Kinship::SameSubcommand)
                } else {
                    command(m).is_some()
                        && kin(m, j) != Kinship::SameSubcommand
                        && !policy.is_mutating_call(&ops[m].tool, &ops[m].args)
                }
        })
    };
    // A refused connection (`policy.address_errors`) is transient, unless the next working
    // call on its key went to another port or host: then the address was wrong, and the
    // failure teaches like any other. Each call's next working call on its key, found in one
    // pass from the end, and only for a session that has a refused call.
    let fails: Vec<Failed> = ops.iter().map(|op| failed(op, policy)).collect();
    let moved_address: Vec<bool> = if fails.contains(&Failed::Refused) {
        let mut next_ok: FxMap<&str, usize> = FxMap::default();
        let mut moved = vec![false; ops.len()];
        for j in (0..ops.len()).rev() {
            if ops[j].status == OpStatus::Ok {
                next_ok.insert(keys[j].as_str(), j);
            } else if fails[j] == Failed::Refused
                && let Some(&k) = next_ok.get(keys[j].as_str())
                && let (Some(a), Some(b)) = (commands[j].as_deref(), commands[k].as_deref())
            {
                moved[j] = address_words(a) != address_words(b);
            }
        }
        moved
    } else {
        Vec::new()
    };
    let mut failures: BTreeMap<&str, Unsettled> = BTreeMap::new();
    let mut fixes: Vec<(usize, usize)> = Vec::new();
    // The call that ran last before `j`. A refused call never ran and a transient failure
    // says nothing about its arguments, so neither stands between a failure and the call
    // that replaced it: `npm ci` failed, `npm install --legacy-peer-deps` timed out, then
    // worked.
    let ran = |j: usize| match fails[j] {
        Failed::No => ops[j].status == OpStatus::Ok,
        Failed::Teaches => true,
        Failed::Transient => false,
        Failed::Refused => moved_address[j],
    };
    // Nor do looks that worked (a look around, a file read: `policy.only_reads`) stand
    // between a failure and a call that corrects a word of it (`Command::corrects`). Asked
    // only of such a pair, from the failure on: a later call on the key stops at the same
    // first call that did more than look.
    let looked = |j: usize| {
        ops[j].status == OpStatus::Ok && (looks_around(j) || policy.only_reads(&ops[j].tool, &ops[j].args))
    };
    let only_looks_between = |i: usize, j: usize| (i + 1..j).all(|m| !ran(m) || looked(m));
    let mut last_ran = None;
    for (j, op) in ops.iter().enumerate() {
        let key = keys[j].as_str();
        let (ran_before, ran_j) = (last_ran, ran(j));
        if ran_j {
            last_ran = Some(j);
        }
        match op.status {
            OpStatus::Refused => {}
            OpStatus::Error if ran_j => failures.entry(key).or_default().add(command(j), j),
            OpStatus::Error => {}
            OpStatus::Ok => {
                let Some(failed) = failures.get(key) else {
                    continue;
                };
                // The latest failure that answers, and whether one was this very call, looked
                // up among the failures that can relate to it (`Unsettled`), not all of them:
                // failures of other programs under one wrapper (`uv run pytest` while `uv run
                // ruff` passes) or of other subcommands pile up in a long session.
                let latest_other = |list: &[usize]| list.iter().rev().copied().find(|&i| !same_call(i, j));
                let (same_form, answered) = match command(j) {
                    // Every failure on the key relates to a call that runs no command.
                    None => (
                        failed.all.iter().any(|&i| same_call(i, j)),
                        latest_other(&failed.all),
                    ),
                    Some(c) => {
                        let same = failed.same_subcommand(c);
                        let mut answered = latest_other(same).max(failed.uncommanded.last().copied());
                        // Another subcommand on the same file, unless one of the two looks.
                        for file in c.files() {
                            let mut on_file = failed.on_file(c, file).iter().rev().copied();
                            answered = answered.max(on_file.find(|&i| !same_call(i, j) && !look_pair(i, j)));
                        }
                        // The call just before, with nothing in common (the `Unrelated` case),
                        // or one before the looks since that this call corrects.
                        let latest = failed.all.last().copied();
                        let corrected = |i: &usize| {
                            command(*i).is_some_and(|f| c.corrects(f)) && only_looks_between(*i, j)
                        };
                        let before = ran_before
                            .filter(|&i| latest == Some(i))
                            .or(latest.filter(corrected));
                        if let Some(i) = before
                            && answered < before
                            && !same_call(i, j)
                            && answers(i, j)
                        {
                            answered = before;
                        }
                        (same.iter().any(|&i| same_call(i, j)), answered)
                    }
                };
                if answered.is_some_and(|a| act_then_probe(a, j) || act_then_look(a, j)) {
                    continue;
                }
                // A call that answers none of them is the next task on this program (`cargo
                // test` after an edit fixed what `cargo clippy` found): it settles nothing.
                if answered.is_none() && !same_form {
                    continue;
                }
                failures.remove(key);
                // A working call whose arguments were cut (`CUT_ARGS`) has no known form to
                // learn: what made it work may be what the cut took.
                if let Some(a) = answered
                    && !probe_then_act(a, j)
                    && !check_then_fix(a, j)
                    && !edited_in_between(a, j)
                    && !prepared_in_between(a, j)
                    && !stamp_only(&args[a], &args[j])
                    && !renamed_only(commands[a].as_deref(), commands[j].as_deref(), &args[a], &args[j])
                    && args[j].get(CUT_ARGS).is_none()
                {
                    fixes.push((a, j));
                }
            }
        }
    }
    if fixes.is_empty() {
        return out;
    }
    // The last success of each form on a key some fix is on.
    let fixed_keys: BTreeSet<&str> = fixes.iter().map(|&(_, j)| keys[j].as_str()).collect();
    let mut last_ok: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for (j, op) in ops.iter().enumerate() {
        if op.status == OpStatus::Ok && fixed_keys.contains(keys[j].as_str()) {
            last_ok.insert((keys[j].as_str(), opkey::python_json(&args[j])), j);
        }
    }
    let mut seen = BTreeSet::new();
    for (a, j) in fixes {
        let key = &keys[j];
        // A later success of the failing form says it works after all (not knowable when
        // only a secret differs: the two forms read the same).
        let failing = opkey::python_json(&args[a]);
        if !secret_only(a, j)
            && last_ok
                .get(&(key.as_str(), failing))
                .is_some_and(|&later| later > j)
        {
            continue;
        }
        let working = opkey::python_json(&policy.fix_form(&args[a], &args[j]));
        if !seen.insert((key.clone(), working.clone())) {
            continue;
        }
        let text = if args[a] == args[j] {
            // Only a secret changed; the text is never shown (the secret refuses it).
            format!("{key}: run with another secret")
        } else {
            let Some(text) = describe(key, &args[a], &args[j]) else {
                continue;
            };
            text
        };
        // The program inside the wrappers (`npm` in `cd web && npm ci`, `pytest` in `uv run
        // pytest`): the one whose domain the lesson belongs to.
        let program = (commands[j].as_deref())
            .map(|c| opkey::program_run(c).0)
            .filter(|p| !p.is_empty());
        let mut scanned = Vec::new();
        strings(&args[a], &mut scanned);
        strings(&args[j], &mut scanned);
        // Only a record that names dead ends can give a fix up.
        let given_up = match (&commands[a], &commands[j]) {
            (Some(failing), Some(working)) if !dead_ends.is_empty() => {
                given_up_in(failing, working, dead_ends).map(|d| d.name.clone())
            }
            _ => None,
        };
        out.push(Mechanical {
            key: key.clone(),
            working,
            text,
            program,
            scanned,
            given_up,
        });
    }
    out
}

/// Options whose value only names what the call makes: a migration (`prisma migrate dev
/// --name`), a commit or revision (`git commit -m`, `alembic revision -m`), a pull request
/// (`gh pr create --title`), a container (`docker run --name`).
const NAMING_OPTIONS: [&str; 6] = ["--name", "-m", "--message", "--title", "--body", "--description"];

/// Do two calls differ only in the values of `NAMING_OPTIONS`? A new name fixes nothing (the
/// schema edit before `--name add_due_date_col` did, or removing the container that held the
/// old name), so the pair settles the failure and teaches no "instead of".
fn renamed_only(failing: Option<&str>, working: Option<&str>, fa: &Value, wa: &Value) -> bool {
    let (Some(failing), Some(working)) = (failing, working) else {
        return false;
    };
    fn others(v: &Value) -> Vec<(&String, &Value)> {
        match v {
            Value::Object(m) => (m.iter())
                .filter(|(k, _)| !COMMAND_FIELDS.contains(&k.as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }
    let masked = |command: &str| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut named = false;
        for word in shell_words(command) {
            if std::mem::take(&mut named) {
                out.push("<name>".into());
                continue;
            }
            match word.split_once('=') {
                Some((option, _)) if NAMING_OPTIONS.contains(&option) => out.push(format!("{option}=<name>")),
                _ => {
                    named = NAMING_OPTIONS.contains(&word);
                    out.push(word.to_string());
                }
            }
        }
        out
    };
    failing != working && others(fa) == others(wa) && masked(failing) == masked(working)
}

/// The words of a command that say where it connects: a port after a colon (`localhost:5433`,
/// `http://127.0.0.1:3000/health`), a port or host option with its value (`-p 5433`, `--port
/// 8001`, `--port=8001`, `-h db.internal`) and a port or host in the environment (`PGPORT=5433`).
fn address_words(command: &str) -> Vec<&str> {
    let is_port = |w: &str| (2..=5).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_digit());
    let is_host = |w: &str| w == "localhost" || w.contains('.') || w.contains(':');
    // A colon, then a port that ends the word or a path (`:3000`, `:3000/api`).
    let has_port = |w: &str| {
        (w.match_indices(':')).any(|(at, _)| {
            let rest = &w[at + 1..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (2..=5).contains(&digits) && matches!(rest.as_bytes().get(digits), None | Some(b'/'))
        })
    };
    let words = shell_words(command);
    let mut out = Vec::new();
    for (i, &word) in words.iter().enumerate() {
        let value = words.get(i + 1).copied().unwrap_or("");
        let bare = word.trim_matches(|c| c == '"' || c == '\'');
        let env = bare.split_once('=').filter(|(name, _)| {
            name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                && (name.ends_with("PORT") || name.ends_with("HOST"))
        });
        if (matches!(bare, "-p" | "-P" | "--port") && is_port(value))
            || (matches!(bare, "-h" | "--host") && is_host(value))
        {
            out.extend([bare, value]);
        } else if has_port(bare)
            || bare.strip_prefix("--port=").is_some_and(is_port)
            || bare.strip_prefix("--host=").is_some_and(is_host)
            || env.is_some()
        {
            out.push(bare);
        }
    }
    out
}

/// A command's words, a quoted string (`-m "Fix export"`) one word with its quotes.
fn shell_words(command: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let (mut start, mut quote) = (None, None);
    for (at, c) in command.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => {
                quote = Some(c);
                start.get_or_insert(at);
            }
            (None, c) if c.is_whitespace() => {
                if let Some(s) = start.take() {
                    words.push(&command[s..at]);
                }
            }
            (None, _) => {
                start.get_or_insert(at);
            }
        }
    }
    if let Some(s) = start {
        words.push(&command[s..]);
    }
    words
}

/// The files an editor call changed: its `file_path`, `path` or `target_file` argument, else
/// those a patch among its arguments updates, adds or deletes (Codex CLI's `apply_patch`, run
/// through `shell` as a word of its `command` or called with the patch as `input`).
fn edited_paths(args: &Value) -> impl Iterator<Item = &str> {
    let named = ["file_path", "path", "target_file"]
        .iter()
        .find_map(|f| args.get(f)?.as_str())
        .filter(|p| !p.trim().is_empty());
    // Only without a named path are the arguments read for a patch.
    let values = args
        .as_object()
        .filter(|_| named.is_none())
        .into_iter()
        .flat_map(|map| map.values());
    let words = values.flat_map(|v| match v {
        Value::Array(words) => words.as_slice(),
        v => std::slice::from_ref(v),
    });
    let patched = (words.filter_map(Value::as_str))
        .filter(|t| t.contains("*** Begin Patch"))
        .flat_map(str::lines)
        .filter_map(|line| {
            ["*** Update File:", "*** Add File:", "*** Delete File:"]
                .iter()
                .find_map(|head| line.strip_prefix(head))
        })
        .map(str::trim)
        .filter(|path| !path.is_empty());
    named.into_iter().chain(patched)
}

/// Does `error` name the file at `path`, by its name as a whole word (`schema.prisma` in
/// `-->  prisma/schema.prisma:41`, not in `schema.prisma.bak`)?
fn names_file(error: &str, path: &str) -> bool {
    let name = path
        .trim_end_matches('/')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path);
    // A name without an extension (`api`, `Makefile`) is too often a plain word.
    if !name.contains('.') || name.len() < 4 {
        return false;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    error.match_indices(name).any(|(at, _)| {
        let before = error[..at].chars().next_back();
        let mut after = error[at + name.len()..].chars();
        let next = after.next();
        let inside = before.is_some_and(|c| word(c) || c == '.')
            || next.is_some_and(word)
            || (next == Some('.') && after.next().is_some_and(char::is_alphanumeric));
        !inside
    })
}

/// Do two calls differ only in date or time stamps (`stamps_masked`)? A stamp differs on
/// every run: an image tagged `web:20261119-1019` after `web:20261119-1012` failed, or a
/// backup written to `dump-2026-11-19T1012.sql`, changed nothing a lesson can teach; what
/// fixed the call ran elsewhere. The pair still settles the failure.
fn stamp_only(failing: &Value, working: &Value) -> bool {
    let (f, w) = (opkey::python_json(failing), opkey::python_json(working));
    let (fm, wm) = (stamps_masked(&f), stamps_masked(&w));
    f != w && matches!((&fm, &wm), (Cow::Owned(_), _) | (_, Cow::Owned(_))) && fm == wm
}

/// `text` with each date or date-and-time stamp replaced by `<stamp>`: a year from 1970 to
/// 2099, a month and a day (`20261119`, `2026-11-19`, `2026_11_19`), then optionally an hour
/// and minute with seconds and fractions (`-1012`, `T10:12:05Z`, `_101205`), standing apart
/// from other digits. Borrowed when it has none.
fn stamps_masked(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let digits = |at: usize, n: usize| b.len() >= at + n && b[at..at + n].iter().all(u8::is_ascii_digit);
    let num = |at: usize, n: usize| text[at..at + n].parse::<u32>().unwrap_or(u32::MAX);
    let sep = |at: usize, seps: &[u8]| b.get(at).filter(|c| seps.contains(c)).map_or(0, |_| 1);
    // The end of a stamp starting at `at`, if one does.
    let stamp = |at: usize| -> Option<usize> {
        if !digits(at, 4) || !(1970..=2099).contains(&num(at, 4)) {
            return None;
        }
        let mut i = at + 4;
        let s = sep(i, b"-_");
        i += s;
        if !digits(i, 2) || !(1..=12).contains(&num(i, 2)) {
            return None;
        }
        i += 2;
        // The same separator between month and day as between year and month.
        if s == 1 && b.get(i) != b.get(at + 4) {
            return None;
        }
        i += s;
        if !digits(i, 2) || !(1..=31).contains(&num(i, 2)) {
            return None;
        }
        i += 2;
        // A time of day: hour and minute, then seconds and a fraction.
        let t = i + sep(i, b"T_- ");
        if digits(t, 2) && num(t, 2) < 24 {
            let c = t + 2 + sep(t + 2, b":");
            if digits(c, 2) && num(c, 2) < 60 {
                i = c + 2;
                let c = i + sep(i, b":");
                if digits(c, 2) && num(c, 2) < 61 {
                    i = c + 2;
                    if b.get(i) == Some(&b'.') && digits(i + 1, 1) {
                        i += 1;
                        while digits(i, 1) {
                            i += 1;
                        }
                    }
                }
                if b.get(i) == Some(&b'Z') {
                    i += 1;
                }
            }
        }
        (!digits(i, 1)).then_some(i)
    };
    let mut out = String::new();
    let (mut copied, mut at) = (0, 0);
    while at < b.len() {
        let starts = b[at].is_ascii_digit() && (at == 0 || !b[at - 1].is_ascii_digit());
        if let Some(end) = starts.then(|| stamp(at)).flatten() {
            out.push_str(&text[copied..at]);
            out.push_str("<stamp>");
            (copied, at) = (end, end);
        } else {
            at += 1;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// One key's failures not yet settled (`mechanical`), in call order, and indexed by what a
/// success must share with a failure to answer it: no command (any success answers), the
/// program and subcommand, or the program and a file word.
#[derive(Default)]
struct Unsettled<'c> {
    all: Vec<usize>,
    uncommanded: Vec<usize>,
    by_subcommand: HashMap<(&'c str, Option<&'c str>), Vec<usize>>,
    by_file: HashMap<(&'c str, &'c str), Vec<usize>>,
}

impl<'c> Unsettled<'c> {
    fn add(&mut self, command: Option<&'c opkey::Command>, i: usize) {
        self.all.push(i);
        let Some(c) = command else {
            self.uncommanded.push(i);
            return;
        };
        let program = c.program.as_str();
        (self
            .by_subcommand
            .entry((program, c.subcommand.as_deref()))
            .or_default())
        .push(i);
        for file in c.files() {
            let on_file = self.by_file.entry((program, file)).or_default();
            if on_file.last() != Some(&i) {
                on_file.push(i);
            }
        }
    }

    fn same_subcommand(&self, c: &'c opkey::Command) -> &[usize] {
        (self
            .by_subcommand
            .get(&(c.program.as_str(), c.subcommand.as_deref())))
        .map_or(&[], Vec::as_slice)
    }

    fn on_file(&self, c: &'c opkey::Command, file: &'c str) -> &[usize] {
        (self.by_file.get(&(c.program.as_str(), file))).map_or(&[], Vec::as_slice)
    }
}

/// How many calls after a failure's answer are searched for a correction of it, a closer answer
/// (`mechanical`'s `related_later`).
const CORRECTION_WINDOW: usize = 16;

/// Where each key last succeeded (`mechanical`): at all, and by what a failure's command can
/// share with the success: no command on the success's side (related to any), the program
/// and subcommand, the program and a file word.
#[derive(Default)]
struct LastOk<'c> {
    any: HashMap<&'c str, usize>,
    uncommanded: HashMap<&'c str, usize>,
    by_subcommand: HashMap<(&'c str, &'c str, Option<&'c str>), usize>,
    by_file: HashMap<(&'c str, &'c str, &'c str), usize>,
}

impl<'c> LastOk<'c> {
    /// Calls are added in order, so each map keeps the latest.
    fn add(&mut self, key: &'c str, command: Option<&'c opkey::Command>, l: usize) {
        self.any.insert(key, l);
        let Some(c) = command else {
            self.uncommanded.insert(key, l);
            return;
        };
        let program = c.program.as_str();
        self.by_subcommand
            .insert((key, program, c.subcommand.as_deref()), l);
        for file in c.files() {
            self.by_file.insert((key, program, file), l);
        }
    }

    /// A success on `key` after `j` related to the failure that ran `command` (`kinship`).
    fn after(&self, key: &str, command: Option<&opkey::Command>, j: usize) -> bool {
        let later = |l: Option<&usize>| l.is_some_and(|&l| l > j);
        if later(self.uncommanded.get(key)) {
            return true;
        }
        let Some(c) = command else {
            // A failure without a command relates to every success on its key.
            return later(self.any.get(key));
        };
        let program = c.program.as_str();
        later(self.by_subcommand.get(&(key, program, c.subcommand.as_deref())))
            || c.files()
                .any(|file| later(self.by_file.get(&(key, program, file))))
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

/// ``<key>: run `<working>` (name=value) instead of `<failing>` (name=value)``, or for calls
/// without a command ``<key>: call with name=value instead of without name``; `None` when the
/// two forms would read the same (args that differ only in how they are written). When both
/// run the same command, a differing argument only one sets is named on the other side as
/// `without name`, or `run `pytest -q` instead of `pytest -q` (directory=tests)` would read
/// as one call twice. A member that a call recovered from a cut (`CUT_ARGS`) lacks is not named.
pub fn describe(key: &str, failing: &Value, working: &Value) -> Option<String> {
    // Args are almost always an object, read in place.
    fn as_map(v: &Value) -> Cow<'_, Map<String, Value>> {
        match v {
            Value::Object(m) => Cow::Borrowed(m),
            Value::Null => Cow::Owned(Map::new()),
            other => Cow::Owned(Map::from_iter([("args".into(), other.clone())])),
        }
    }
    let (fa, wa) = (as_map(failing), as_map(working));
    let (working_cmd, failing_cmd) = (opkey::command_of(working), opkey::command_of(failing));
    let command_mode = working_cmd.is_some() || failing_cmd.is_some();
    let names: BTreeSet<&String> = fa.keys().chain(wa.keys()).collect();
    // A member a cut call lacks may have been lost in the cut: not a known difference.
    let known = |n: &str| {
        n != CUT_ARGS
            && [&fa, &wa]
                .iter()
                .all(|m| m.contains_key(n) || !m.contains_key(CUT_ARGS))
    };
    let differing: Vec<&str> = names
        .into_iter()
        .filter(|n| fa.get(*n) != wa.get(*n) && known(n))
        .filter(|n| !(command_mode && COMMAND_FIELDS.contains(&n.as_str())))
        .map(String::as_str)
        .collect();
    let pairs = |m: &Map<String, Value>| -> Vec<String> {
        differing
            .iter()
            .filter_map(|n| m.get(*n).map(|v| format!("{n}={}", show(v))))
            .collect()
    };
    let unset = |m: &Map<String, Value>| -> Vec<&str> {
        (differing.iter().copied())
            .filter(|n| !m.contains_key(*n))
            .collect()
    };
    let same_command = working_cmd == failing_cmd;
    let form = |cmd: &Option<Cow<str>>, m: &Map<String, Value>| -> String {
        let mut pairs = pairs(m);
        if command_mode {
            if same_command {
                pairs.extend(unset(m).into_iter().map(|n| format!("without {n}")));
            }
            let cmd = cmd.as_ref().map(|c| format!("`{}`", one_line_script(c)));
            match (cmd, pairs.is_empty()) {
                (Some(c), true) => c,
                (Some(c), false) => format!("{c} ({})", pairs.join(", ")),
                (None, _) if pairs.is_empty() => "no command".into(),
                (None, _) => format!("({})", pairs.join(", ")),
            }
        } else {
            // What this call set and what it left out that the other set.
            let unset = unset(m);
            let with = (!pairs.is_empty()).then(|| format!("with {}", pairs.join(", ")));
            let without = (!unset.is_empty()).then(|| format!("without {}", unset.join(", ")));
            with.into_iter().chain(without).collect::<Vec<_>>().join(" and ")
        }
    };
    let (working_form, failing_form) = (form(&working_cmd, &wa), form(&failing_cmd, &fa));
    if working_form == failing_form {
        return None;
    }
    let verb = if command_mode { "run " } else { "call " };
    Some(normalize::text(&format!(
        "{key}: {verb}{working_form} instead of {failing_form}"
    )))
}

/// A shell script as one line that runs the same: a line break ends a command, so it becomes
/// `; `, except where the line asks to go on (a trailing `\`, an operator such as `&&` or `|`,
/// an opening `{`, `(`, `then`, `do`, `else`). The lesson text is one line, and collapsing the
/// break to a space would turn two commands into one with stray arguments.
fn one_line_script(script: &str) -> Cow<'_, str> {
    if !script.contains(['\n', '\r']) {
        return Cow::Borrowed(script);
    }
    let mut out = String::with_capacity(script.len() + 8);
    for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            let goes_on = ["&&", "||", "|", ";", "&", "{", "(", " then", " do", " else"]
                .iter()
                .any(|end| out.ends_with(end))
                || ["then", "do", "else"].contains(&out.as_str());
            if out.ends_with('\\') {
                out.pop();
                out.truncate(out.trim_end().len());
                out.push(' ');
            } else {
                out.push_str(if goes_on { " " } else { "; " });
            }
        }
        out.push_str(line);
    }
    Cow::Owned(out)
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => opkey::python_json(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, DeadEnd, Outcome, SourceLoc};
    use crate::outcome;
    use serde_json::json;

    fn rules() -> Rules {
        Rules::builtin()
    }

    fn sh(cmd: &str, cwd: &str, status: OpStatus, error: Option<&str>) -> Operation {
        Operation {
            tool: "run_shell_command".into(),
            args: json!({"command": cmd, "cwd": cwd}).into(),
            status,
            error: error.map(String::from),
            secret_print: 0,
            check: None,
        }
    }

    /// Shell calls run in `cwd`: one that failed with an error, one that worked.
    fn shell_in(
        cwd: &str,
    ) -> (
        impl Fn(&str, &str) -> Operation + '_,
        impl Fn(&str) -> Operation + '_,
    ) {
        (
            move |cmd, error| sh(cmd, cwd, OpStatus::Error, Some(error)),
            move |cmd| sh(cmd, cwd, OpStatus::Ok, None),
        )
    }

    /// A call of `tool` that worked.
    fn worked(tool: &str, args: Value) -> Operation {
        Operation {
            tool: tool.into(),
            args: args.into(),
            status: OpStatus::Ok,
            error: None,
            secret_print: 0,
            check: None,
        }
    }

    fn pytest_check(cwd: &str, passed: bool) -> Operation {
        let mut op = sh(
            "pytest -q",
            cwd,
            if passed { OpStatus::Ok } else { OpStatus::Error },
            (!passed).then_some("ERROR: file or directory not found: tests/test_invoices.py"),
        );
        op.check = Some(Box::new(Check {
            label: "pytest".into(),
            target: None,
            passed,
        }));
        op
    }

    fn exp(id: &str, domains: &[&str], outcome: Outcome, ops: Vec<Operation>) -> Experience {
        Experience {
            id: id.into(),
            recorded_at: 1_714_600_000_000,
            domains: domains.iter().map(|d| d.to_string()).collect(),
            project: Some(crate::digest::project("git@github.com:acme/billing.git")),
            outcome: Some(outcome),
            operations: ops,
            source: SourceLoc {
                file: "records/2024-05.jsonl".into(),
                line: 3,
            },
            ..Default::default()
        }
    }

    /// Every domain (valid or refused) and project of every record, experience or claim, has
    /// its place, and the candidates name the record's own.
    #[test]
    fn every_records_names_have_places() {
        let rules = rules();
        let mut a = exp("exp-a", &["python", "testing"], Outcome::Succeeded, vec![]);
        a.refused_domains = vec!["../etc".into()];
        a.words.lesson = Some("Run pytest from the repository root".into());
        let mut b = exp("exp-b", &["go"], Outcome::Succeeded, vec![]);
        b.project = None;
        b.words.lesson = Some("Run go vet before go test".into());
        let claim = LessonClaim {
            id: "claim-1".into(),
            recorded_at: 5,
            domains: vec!["python".into(), "rust".into()],
            refused_domains: vec!["bad/domain".into()],
            project: Some("c0ffee000000".into()),
            text: "Pin the toolchain in rust-toolchain.toml".into(),
            kind: Kind::Do,
            source: crate::model::ClaimSource::User,
            evidence: vec![],
            operation_key: None,
            loc: Default::default(),
            ended: None,
        };
        let corpus = Corpus {
            experiences: vec![a.clone(), b],
            claims: vec![claim],
        };
        let (names, places) = names_of(&corpus);
        let project = a.project.clone().expect("exp gives a project");
        let mut want = vec![
            "../etc",
            "bad/domain",
            "c0ffee000000",
            "go",
            "python",
            "rust",
            "testing",
        ];
        want.push(&project);
        want.sort_unstable();
        let all: Vec<&str> = names.iter().map(|(_, s)| s).collect();
        assert_eq!(all, want);
        assert_eq!(places.len(), names.len());
        for (n, s) in names.iter() {
            assert_eq!(places.get(s), Some(&n));
        }
        let mut sink = Sink::new();
        let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
        let (cands, names) = extract(&corpus, &verdicts, &rules, &mut sink);
        let told: Vec<(&str, &str, Option<&str>)> = (cands.iter())
            .map(|c| {
                (
                    &*c.record_id,
                    names.get(c.domain),
                    c.project.map(|p| names.get(p)),
                )
            })
            .collect();
        let p = Some(project.as_str());
        assert_eq!(
            told,
            [
                ("exp-a", "python", p),
                ("exp-a", "testing", p),
                ("exp-a", "../etc", p),
                ("exp-b", "go", None),
                ("claim-1", "python", Some("c0ffee000000")),
                ("claim-1", "rust", Some("c0ffee000000")),
                ("claim-1", "bad/domain", Some("c0ffee000000")),
            ]
        );
    }

    #[test]
    fn shapes_answer_for_the_text_asked_about_not_only_the_record() {
        let rules = rules();
        let story = "Community PR merged cleanly despite the flaky CI run yesterday afternoon";
        let rule = "Run npm ci instead of npm install in CI";
        let mut told = exp("sess-9", &["npm"], Outcome::Succeeded, vec![]);
        told.words.lesson = Some(story.into());
        let corpus = Corpus {
            experiences: vec![told, exp("sess-10", &["npm"], Outcome::Succeeded, vec![])],
            claims: vec![],
        };
        let shapes = Shapes::new(&corpus, &rules);
        let class = |t: &str| rules.narrative.shape(t);
        assert_ne!(class(story), class(rule), "the two texts classify apart");
        let (shape, shared) = shapes.of(Source::Experience(0), story, &rules);
        assert_eq!(shape, class(story));
        let (text, may_hold) = shared.expect("the record's own do-text is shared");
        assert_eq!(&*text, story);
        assert_eq!(may_hold, rules.secrets.may_hold([story]));
        // Another text for the same record, or a record the shapes took no text for, is
        // classified as itself, and gets no shared copy.
        assert_eq!(
            shapes.of(Source::Experience(0), rule, &rules),
            (class(rule), None)
        );
        assert_eq!(
            shapes.of(Source::Experience(1), rule, &rules),
            (class(rule), None)
        );
        assert_eq!(shapes.of(Source::Claim(0), rule, &rules), (class(rule), None));
    }

    fn extract_one(e: Experience) -> (Vec<Candidate>, Sink) {
        let (cands, _, sink) = extract_named(e);
        (cands, sink)
    }

    /// `extract_one`, with the names the candidates' domains and projects stand for.
    fn extract_named(e: Experience) -> (Vec<Candidate>, Names, Sink) {
        let rules = rules();
        let corpus = Corpus {
            experiences: vec![e],
            claims: vec![],
        };
        let mut sink = Sink::new();
        let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
        sink.clear();
        let (cands, names) = extract(&corpus, &verdicts, &rules, &mut sink);
        (cands, names, sink)
    }

    /// A `run_shell_command` call with `args`: failed with `error`, or succeeded.
    fn shell(args: Value, error: Option<&str>) -> Operation {
        Operation {
            tool: "run_shell_command".into(),
            args: args.into(),
            status: if error.is_some() {
                OpStatus::Error
            } else {
                OpStatus::Ok
            },
            error: error.map(String::from),
            secret_print: 0,
            check: None,
        }
    }

    /// The mechanical candidates of one passed experience tagged `tags`.
    fn mechanical_of(tags: &[&str], ops: Vec<Operation>) -> Vec<Candidate> {
        let (cands, _) = extract_one(exp("sess-fix", tags, Outcome::Succeeded, ops));
        cands
            .into_iter()
            .filter(|c| c.origin == Origin::Mechanical)
            .collect()
    }

    /// Claude Code's `Edit` retried with other text after "String to replace not found" is
    /// the same call (its text is `content_args`), so it teaches nothing; a retry that turned
    /// on `replace_all` teaches that flag, named without the edit's text.
    #[test]
    fn an_edit_retried_with_other_text_teaches_nothing_but_a_changed_flag_does() {
        let edit = |old: &str, new: &str, replace_all: Option<bool>, error: Option<&str>| {
            let mut args = json!({"file_path": "/srv/billing-api/billing/util.py",
                                  "old_string": old, "new_string": new});
            if let Some(all) = replace_all {
                args["replace_all"] = json!(all);
            }
            Operation {
                tool: "Edit".into(),
                args: args.into(),
                status: if error.is_some() {
                    OpStatus::Error
                } else {
                    OpStatus::Ok
                },
                error: error.map(String::from),
                secret_print: 0,
                check: None,
            }
        };
        let mechanical = |ops: Vec<Operation>| -> Vec<String> {
            let (cands, _) = extract_one(exp("sess-edit", &["python"], Outcome::Succeeded, ops));
            (cands.iter())
                .filter(|c| c.origin == Origin::Mechanical)
                .map(|c| c.text.to_string())
                .collect()
        };
        let not_found = "String to replace not found in file.\nString: def fmt_money(x):";
        let retried = mechanical(vec![
            edit("def fmt_money(x):", "def format_money(x):", None, Some(not_found)),
            edit("def fmt_money(amount):", "def format_money(amount):", None, None),
            pytest_check("/srv/billing-api", true),
        ]);
        assert!(retried.is_empty(), "{retried:?}");
        let many = "Found 3 matches of the string to replace, but replace_all is false.";
        let flagged = mechanical(vec![
            edit("fmt_money(", "format_money(", None, Some(many)),
            edit("fmt_money(", "format_money(", Some(true), None),
            pytest_check("/srv/billing-api", true),
        ]);
        assert_eq!(flagged.len(), 1, "{flagged:?}");
        assert!(flagged[0].contains("replace_all=true"), "{flagged:?}");
        assert!(!flagged[0].contains("fmt_money"), "{flagged:?}");
    }

    #[test]
    fn mechanical_fix_by_cwd() {
        let e = exp(
            "exp-cwd-1",
            &["python", "testing"],
            Outcome::Succeeded,
            vec![
                pytest_check("/srv/app/tests", false),
                pytest_check("/srv/app", true),
            ],
        );
        let (cands, names, sink) = extract_named(e);
        assert!(sink.is_empty(), "{sink:#?}");
        assert_eq!(cands.len(), 1, "{cands:#?}");
        let c = &cands[0];
        assert_eq!(c.origin, Origin::Mechanical);
        assert_eq!(c.kind, Kind::Do);
        assert_eq!(names.get(c.domain), "python", "pytest belongs to python only");
        assert_eq!(c.key(), Some("run_shell_command pytest"));
        assert_eq!(
            c.working(),
            Some(r#"{"command": "pytest -q", "cwd": "/srv/app"}"#)
        );
        assert_eq!(
            c.text,
            "run_shell_command pytest: run `pytest -q` (cwd=/srv/app) instead of `pytest -q` (cwd=/srv/app/tests)".into()
        );
        assert!(!c.outcome_failed() && !c.narrative() && c.refusal.is_none());
        assert_eq!(&*c.record_id, "exp-cwd-1");
        assert_eq!(c.source, Source::Experience(0));
    }

    #[test]
    fn mechanical_fixes_come_only_after_a_failure() {
        let texts = |ops: Vec<Operation>| -> Vec<String> {
            let (cands, _) = extract_one(exp("exp-order-1", &["python"], Outcome::Succeeded, ops));
            cands.iter().map(|c| c.text.to_string()).collect()
        };
        // A success before the failure is no fix for it; the one after is, and the failing
        // form named is the failure, not the earlier success.
        assert_eq!(
            texts(vec![
                pytest_check("/srv/app/tests", true),
                pytest_check("/srv/app/src", false),
                pytest_check("/srv/app", true),
            ]),
            [
                "run_shell_command pytest: run `pytest -q` (cwd=/srv/app) instead of `pytest -q` (cwd=/srv/app/src)"
            ]
        );
        // Success first, failure last: nothing was learnt.
        let ops = [
            pytest_check("/srv/app", true),
            pytest_check("/srv/app/src", false),
        ];
        assert!(mechanical(&ops, &rules().policy, &[]).is_empty());
        assert_eq!(
            mechanical(&[ops[1].clone(), ops[0].clone()], &rules().policy, &[]).len(),
            1
        );
    }

    #[test]
    fn mechanical_needs_a_real_fix() {
        let cases: Vec<(&str, Vec<Operation>, Outcome)> = vec![
            (
                "identical retry",
                vec![pytest_check("/srv/app", false), pytest_check("/srv/app", true)],
                Outcome::Succeeded,
            ),
            (
                "transient failure",
                vec![
                    sh(
                        "pip install -r requirements.txt",
                        "/srv/app",
                        OpStatus::Error,
                        Some("ReadTimeoutError: Read timed out. (read timeout=15)"),
                    ),
                    sh(
                        "pip install --timeout 60 -r requirements.txt",
                        "/srv/app",
                        OpStatus::Ok,
                        None,
                    ),
                ],
                Outcome::Succeeded,
            ),
            (
                "refused operation",
                vec![
                    sh("pip install -r requirements.txt", "/", OpStatus::Refused, None),
                    sh("pip install -r requirements.txt", "/srv/app", OpStatus::Ok, None),
                ],
                Outcome::Succeeded,
            ),
            (
                "failed experience",
                vec![
                    pytest_check("/srv/app/tests", false),
                    sh("pytest -q", "/srv/app", OpStatus::Ok, None),
                ],
                Outcome::Failed,
            ),
            (
                "fix before failure",
                vec![
                    sh("pytest -q", "/srv/app", OpStatus::Ok, None),
                    sh(
                        "pytest -q",
                        "/srv/app/tests",
                        OpStatus::Error,
                        Some("no tests ran"),
                    ),
                ],
                Outcome::Succeeded,
            ),
            (
                "different keys",
                vec![
                    sh("pytest -q", "/srv/app", OpStatus::Error, Some("exit 1")),
                    sh("tox -e py312", "/srv/app", OpStatus::Ok, None),
                ],
                Outcome::Succeeded,
            ),
        ];
        for (name, ops, outcome) in cases {
            let mut e = exp("exp-none", &["python"], outcome, ops);
            e.words.lesson = None;
            let (cands, _) = extract_one(e);
            assert!(
                cands.iter().all(|c| c.origin != Origin::Mechanical),
                "{name}: {cands:#?}"
            );
        }
    }

    #[test]
    fn mechanical_failed_verdict_even_when_blessed() {
        let mut e = exp(
            "exp-blessed",
            &["python"],
            Outcome::Succeeded,
            vec![
                pytest_check("/srv/app/tests", false),
                pytest_check("/srv/app", true),
                pytest_check("/srv/app", false),
            ],
        );
        e.blessed = true;
        let (cands, _) = extract_one(e);
        assert!(cands.iter().all(|c| c.origin != Origin::Mechanical), "{cands:#?}");
    }

    #[test]
    fn mechanical_one_per_working_form_and_every_domain_when_unmapped() {
        let read = |path: &str, enc: Option<&str>, status: OpStatus| Operation {
            tool: "read_file".into(),
            args: match enc {
                Some(e) => json!({"file_path": path, "encoding": e}).into(),
                None => json!({"file_path": path}).into(),
            },
            status,
            error: (status == OpStatus::Error)
                .then(|| "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9".into()),
            secret_print: 0,
            check: None,
        };
        let ops = vec![
            read("data/legacy.csv", None, OpStatus::Error),
            read("data/legacy.csv", Some("latin-1"), OpStatus::Ok),
            read("data/legacy.csv", None, OpStatus::Error),
            read("data/legacy.csv", Some("latin-1"), OpStatus::Ok),
        ];
        let e = exp("exp-enc", &["data-engineering", "csv"], Outcome::Succeeded, ops);
        let (cands, names, _) = extract_named(e);
        let mech: Vec<_> = cands.iter().filter(|c| c.origin == Origin::Mechanical).collect();
        assert_eq!(mech.len(), 2, "one form, spread over both domains: {mech:#?}");
        assert_eq!(names.get(mech[0].domain), "data-engineering");
        assert_eq!(names.get(mech[1].domain), "csv");
        assert_eq!(
            mech[0].text,
            "read_file data/legacy.csv: call with encoding=latin-1 instead of without encoding".into()
        );
        assert_eq!(mech[0].key(), Some("read_file data/legacy.csv"));
    }

    #[test]
    fn a_mechanical_lesson_goes_to_its_programs_own_domain_when_the_record_has_it() {
        let helm = |flags: &str, error: Option<&str>| {
            let command = format!("helm upgrade --install api charts/api -n prod{flags}");
            shell(json!({"command": command}), error)
        };
        let immutable =
            "Error: UPGRADE FAILED: cannot patch \"api\" with kind Deployment: field is immutable";
        let domains_of = |tags: &[&str]| -> Vec<String> {
            let ops = vec![helm("", Some(immutable)), helm(" --atomic", None)];
            let (cands, names, _) = extract_named(exp("sess-fix", tags, Outcome::Succeeded, ops));
            (cands.iter())
                .filter(|c| c.origin == Origin::Mechanical)
                .map(|c| names.get(c.domain).to_string())
                .collect()
        };
        // Tagged with the program's own domain: there, however else it is tagged.
        assert_eq!(domains_of(&["kubernetes", "helm"]), ["helm"]);
        assert_eq!(domains_of(&["helm"]), ["helm"]);
        // Otherwise the program map places it (helm → kubernetes).
        assert_eq!(domains_of(&["kubernetes", "ci"]), ["kubernetes"]);
    }

    #[test]
    fn a_working_call_cut_short_teaches_no_form() {
        let missing = Some("ERROR: file or directory not found: tests/unit");
        let failing = json!({"command": "pytest tests/unit", "directory": "/srv/orders"});
        let working = json!({"command": "pytest services/orders/tests/unit", "directory": "/srv"});
        let mut cut = working.clone();
        cut.as_object_mut().unwrap().remove("directory");
        cut[CUT_ARGS] = json!(true);
        let learned = |working: Value| {
            mechanical_of(
                &["python"],
                vec![shell(failing.clone(), missing), shell(working, None)],
            )
        };
        assert_eq!(learned(working).len(), 1);
        assert_eq!(learned(cut).len(), 0);
    }

    #[test]
    fn a_check_that_found_problems_then_its_fix_flag_is_no_fix() {
        let sh = |command: &str, error: Option<&str>| {
            shell(
                json!({"command": command, "cwd": "/home/priya/src/orders-api"}),
                error,
            )
        };
        let learned = |ops: Vec<Operation>| -> Vec<String> {
            (mechanical_of(&["python"], ops).iter())
                .map(|c| c.text.to_string())
                .collect()
        };
        let lint = Some("orders/views.py:12:1: F401 [*] `json` imported but unused\nFound 3 errors.");
        for (check, fix) in [
            ("ruff check .", "ruff check --fix ."),
            ("npx eslint src", "npx eslint --fix src"),
            ("npx prettier --check src", "npx prettier --write src"),
            (
                "cargo clippy --all-targets",
                "cargo clippy --all-targets --fix --allow-dirty",
            ),
        ] {
            assert!(learned(vec![sh(check, lint), sh(fix, None)]).is_empty(), "{fix}");
        }
        // A flag that changes how the check runs is still a fix.
        assert_eq!(
            learned(vec![
                sh("ruff check .", lint),
                sh("ruff check --config ruff.toml .", None)
            ])
            .len(),
            1
        );
    }

    #[test]
    fn another_run_of_the_program_in_between_may_be_the_fix() {
        let sh = |command: &str, error: Option<&str>| {
            shell(
                json!({"command": command, "cwd": "/home/dana/infra/billing"}),
                error,
            )
        };
        let learned = |ops: Vec<Operation>| -> Vec<String> {
            (mechanical_of(&["terraform"], ops).iter())
                .map(|c| c.text.to_string())
                .collect()
        };
        let lock = Some(
            "Error: Inconsistent dependency lock file\n\nThe given plan file does not match the dependency lock file; run \"terraform init\" to update it.",
        );
        // `terraform init -upgrade` fixed the lock file; the plan's new `-out` was incidental.
        let prepared = learned(vec![
            sh("terraform plan", lock),
            sh("terraform init -upgrade", None),
            sh("terraform plan -out=tfplan", None),
        ]);
        assert!(prepared.is_empty(), "{prepared:?}");
        let compose = Some(
            "Error response from daemon: driver failed programming external connectivity: port is already allocated",
        );
        let prepared = learned(vec![
            sh("docker compose up", compose),
            sh("docker compose down -v", None),
            sh("docker compose up -d", None),
        ]);
        assert!(prepared.is_empty(), "{prepared:?}");
        // A look around or a check in between changes nothing: the new arguments are the fix.
        for between in ["terraform validate", "terraform show", "terraform output -json"] {
            let fixed = learned(vec![
                sh(
                    "terraform plan -var-file=prod.tfvars",
                    Some("Error: No value for required variable \"region\""),
                ),
                sh(between, None),
                sh("terraform plan -var-file=envs/prod.tfvars", None),
            ]);
            assert_eq!(fixed.len(), 1, "{between}: {fixed:?}");
        }
        // As does another program's run.
        let fixed = learned(vec![
            sh(
                "terraform plan -var-file=prod.tfvars",
                Some("Error: Failed to read variables file"),
            ),
            sh("ls envs", None),
            sh("terraform plan -var-file=envs/prod.tfvars", None),
        ]);
        assert_eq!(fixed.len(), 1, "{fixed:?}");
    }

    #[test]
    fn a_check_that_found_work_then_the_work_is_no_fix() {
        let found = Some("Migrations for 'orders': orders/migrations/0007_order_note.py");
        let sh = |command: &str, error: Option<&str>| {
            shell(json!({"command": command, "cwd": "/srv/shop"}), error)
        };
        let learned = |ops: Vec<Operation>| -> Vec<String> {
            (mechanical_of(&["django"], ops).iter())
                .map(|c| c.text.to_string())
                .collect()
        };
        let none: [&str; 0] = [];
        for (probe, act) in [
            (
                "python manage.py makemigrations --check --dry-run",
                "python manage.py makemigrations",
            ),
            ("black --check .", "black ."),
            ("terraform fmt -check -recursive", "terraform fmt -recursive"),
            (
                "kubectl apply --dry-run=server -f k8s/api.yaml",
                "kubectl apply -f k8s/api.yaml",
            ),
        ] {
            assert_eq!(learned(vec![sh(probe, found), sh(act, None)]), none, "{probe}");
        }
        // The real call failed, an edit fixed the manifest, and a dry run of the same call
        // passed: "run it with --dry-run=server" is no fix, and the real call that passes
        // afterwards is an identical retry.
        let apply = "kubectl apply -f deploy/ingress.yaml";
        let removed = Some(
            "error: resource mapping not found for name: \"web\" namespace: \"\" from \"deploy/ingress.yaml\": \
             no matches for kind \"Ingress\" in version \"extensions/v1beta1\"",
        );
        let edit = Operation {
            tool: "Edit".into(),
            args: json!({"file_path": "/srv/shop/deploy/ingress.yaml"}).into(),
            status: OpStatus::Ok,
            error: None,
            secret_print: 0,
            check: None,
        };
        let dry = format!("{apply} --dry-run=server");
        assert_eq!(
            learned(vec![sh(apply, removed), edit.clone(), sh(&dry, None)]),
            none
        );
        assert_eq!(
            learned(vec![sh(apply, removed), edit, sh(&dry, None), sh(apply, None)]),
            none
        );
        // A check that failed and another check that passed is a fix like any other.
        assert_eq!(
            learned(vec![
                sh("cargo fmt --check", found),
                sh("cargo fmt --all --check", None)
            ]),
            ["run_shell_command cargo: run `cargo fmt --all --check` instead of `cargo fmt --check`"]
        );
    }

    #[test]
    fn describe_forms() {
        assert_eq!(
            describe(
                "run_shell_command cargo",
                &json!({"command": "cargo test", "cwd": "/w"}),
                &json!({"command": "cargo test --workspace", "cwd": "/w"})
            )
            .unwrap(),
            "run_shell_command cargo: run `cargo test --workspace` instead of `cargo test`"
        );
        assert_eq!(
            describe(
                "run_shell_command npm",
                &json!({"command": "npm ci", "timeout": 60}),
                &json!({"command": "npm ci --legacy-peer-deps", "timeout": 300, "cwd": "/web"})
            )
            .unwrap(),
            "run_shell_command npm: run `npm ci --legacy-peer-deps` (cwd=/web, timeout=300) instead of `npm ci` (timeout=60)"
        );
        // A fix that drops an argument, and one that swaps one for another.
        assert_eq!(
            describe(
                "read_file /srv/etl/data.csv",
                &json!({"file_path": "/srv/etl/data.csv", "encoding": "latin-1"}),
                &json!({"file_path": "/srv/etl/data.csv"})
            )
            .unwrap(),
            "read_file /srv/etl/data.csv: call without encoding instead of with encoding=latin-1"
        );
        assert_eq!(
            describe(
                "web_fetch https://api.example.com/v2/items",
                &json!({"url": "https://api.example.com/v2/items", "headers": {"Accept": "text/html"}}),
                &json!({"url": "https://api.example.com/v2/items", "format": "json"})
            )
            .unwrap(),
            r#"web_fetch https://api.example.com/v2/items: call with format=json and without headers instead of with headers={"Accept": "text/html"} and without format"#
        );
        // One command run with and without an argument: the side without it says so.
        assert_eq!(
            describe(
                "run_shell_command pytest",
                &json!({"command": "pytest -q", "directory": "tests"}),
                &json!({"command": "pytest -q"})
            )
            .unwrap(),
            "run_shell_command pytest: run `pytest -q` (without directory) instead of `pytest -q` (directory=tests)"
        );
        assert_eq!(
            describe(
                "run_shell_command alembic",
                &json!({"command": "alembic upgrade head", "cwd": "/srv/billing"}),
                &json!({"command": "alembic upgrade head", "cwd": "/srv/billing/db", "env": {"DB": "billing"}})
            )
            .unwrap(),
            r#"run_shell_command alembic: run `alembic upgrade head` (cwd=/srv/billing/db, env={"DB": "billing"}) instead of `alembic upgrade head` (cwd=/srv/billing, without env)"#
        );
        // A script's line breaks end commands: they read as `; `, and a continued line as one.
        assert_eq!(
            describe(
                "Bash docker",
                &json!({"command": "docker build -t app .\ndocker run --rm app pytest -q"}),
                &json!({"command": "docker build -t app --target test .\ndocker run --rm app pytest -q"})
            )
            .unwrap(),
            "Bash docker: run `docker build -t app --target test .; docker run --rm app pytest -q` instead of `docker build -t app .; docker run --rm app pytest -q`"
        );
        assert_eq!(
            one_line_script("cd /srv/api &&\n  npm ci \\\n    --legacy-peer-deps\r\n\nnpm test |\n tee log"),
            "cd /srv/api && npm ci --legacy-peer-deps; npm test | tee log"
        );
        assert_eq!(
            one_line_script("for f in *.sql; do\n  psql -f $f\ndone"),
            "for f in *.sql; do psql -f $f; done"
        );
        // Two forms that would read the same teach nothing.
        assert_eq!(
            describe(
                "run_shell_command make",
                &json!({"command": "make test"}),
                &json!({"cmd": "make test"})
            ),
            None
        );
    }

    #[test]
    fn a_success_settles_the_failures_before_it() {
        let cargo = |cmd: &str, status: OpStatus| {
            sh(
                cmd,
                "/srv/ledger",
                status,
                (status == OpStatus::Error).then_some("error: the lock file needs to be updated"),
            )
        };
        let texts = |ops: &[Operation]| -> Vec<String> {
            mechanical(ops, &rules().policy, &[])
                .into_iter()
                .map(|m| m.text)
                .collect()
        };
        // The fix is the first success after the failure; a later, different call on the same
        // key is the next step of the work, not another fix.
        assert_eq!(
            texts(&[
                cargo("cargo build", OpStatus::Error),
                cargo("cargo build --locked", OpStatus::Ok),
                cargo("cargo nextest run", OpStatus::Ok),
            ]),
            ["run_shell_command cargo: run `cargo build --locked` instead of `cargo build`"]
        );
        // A step before the failing call succeeded again is no replacement for it.
        assert!(
            texts(&[
                cargo("cargo build", OpStatus::Error),
                cargo("cargo clean", OpStatus::Ok),
                cargo("cargo build", OpStatus::Ok),
            ])
            .is_empty()
        );
        // No args and `{}` are the same call: a retry, not a fix.
        let windows = |args: Option<Value>, status: OpStatus| Operation {
            tool: "list_windows".into(),
            args: args.unwrap_or(Value::Null).into(),
            status,
            error: (status == OpStatus::Error).then(|| "display not ready".into()),
            secret_print: 0,
            check: None,
        };
        assert!(
            mechanical(
                &[
                    windows(None, OpStatus::Error),
                    windows(Some(json!({})), OpStatus::Ok)
                ],
                &rules().policy,
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn only_a_call_that_answers_the_failure_is_its_fix() {
        let run = |cmd: &str, ok: bool, error: &str| {
            let status = if ok { OpStatus::Ok } else { OpStatus::Error };
            sh(cmd, "/srv/ledger", status, (!ok).then_some(error))
        };
        let edit = Operation {
            tool: "edit_file".into(),
            args: json!({"path": "src/lib.rs", "old": "x", "new": "y"}).into(),
            status: OpStatus::Ok,
            error: None,
            secret_print: 0,
            check: None,
        };
        let texts = |ops: &[Operation]| -> Vec<String> {
            mechanical(ops, &rules().policy, &[])
                .into_iter()
                .map(|m| m.text)
                .collect()
        };
        // An edit fixed what clippy found; `cargo test` is the next task, not a replacement.
        let lint = "error: this `if` has identical blocks";
        assert!(
            texts(&[
                run("cargo clippy -- -D warnings", false, lint),
                edit.clone(),
                run("cargo test", true, ""),
            ])
            .is_empty()
        );
        // `npx npm@9 ci` (another program) fixed `npm ci`; `npm test` is the next task.
        let npm =
            "npm ERR! code EUSAGE: The `npm ci` command can only install with an existing package-lock.json";
        assert!(
            texts(&[
                run("npm ci", false, npm),
                run("npx npm@9 ci", true, ""),
                run("npm test", true, ""),
            ])
            .is_empty()
        );
        // The very next call, a different subcommand, replaced the failed one.
        assert_eq!(
            texts(&[run("npm ci", false, npm), run("npm install --no-audit", true, "")]),
            ["run_shell_command npm: run `npm install --no-audit` instead of `npm ci`"]
        );
        // A retry that timed out, or a call the user refused, does not stand between the
        // failure and the very next call that ran.
        let timeout = "npm ERR! code ETIMEDOUT: connect ETIMEDOUT 104.16.1.35:443";
        let mut refused = run("rm -rf node_modules", false, "");
        refused.status = OpStatus::Refused;
        refused.error = None;
        for between in [run("npm install --no-audit", false, timeout), refused] {
            assert_eq!(
                texts(&[
                    run("npm ci", false, npm),
                    between,
                    run("npm install --no-audit", true, "")
                ]),
                ["run_shell_command npm: run `npm install --no-audit` instead of `npm ci`"]
            );
        }
        // A call that ran in between still does: the install was not the next thing tried.
        let read = Operation {
            tool: "read_file".into(),
            args: json!({"file_path": "package.json"}).into(),
            ..edit.clone()
        };
        assert!(
            texts(&[
                run("npm ci", false, npm),
                read,
                run("npm install --no-audit", true, ""),
            ])
            .is_empty()
        );
        // A look around right after the failure is no fix: the push that works later says so.
        let rejected = "! [rejected] main -> main (non-fast-forward)";
        assert_eq!(
            texts(&[
                run("git push origin main", false, rejected),
                run("git status", true, ""),
                run("git push --force-with-lease origin main", true, ""),
            ]),
            [
                "run_shell_command git: run `git push --force-with-lease origin main` instead of `git push origin main`"
            ]
        );
        // A different subcommand on the same file answers the failure, whatever came between.
        let exists = "Error from server (AlreadyExists): deployments.apps \"web\" already exists";
        assert_eq!(
            texts(&[
                run("kubectl create -f deploy/web.yaml", false, exists),
                run("kubectl get deploy web", true, ""),
                run("kubectl apply -f deploy/web.yaml", true, ""),
            ]),
            [
                "run_shell_command kubectl: run `kubectl apply -f deploy/web.yaml` instead of `kubectl create -f deploy/web.yaml`"
            ]
        );
    }

    #[test]
    fn do_watch_avoid_in_order() {
        let mut e = exp(
            "exp-42",
            &["python", "django"],
            Outcome::Succeeded,
            vec![pytest_check("/srv/app", true)],
        );
        e.words.lesson = Some("Run migrations with --plan before applying them in CI".into());
        e.words.breakthrough = Some("Found the squashed migration".into());
        e.words.gotchas = vec![
            "Django caches settings at import time".into(),
            "django caches settings at import time".into(),
            "The test DB is reused with --keepdb".into(),
        ];
        e.words.dead_ends = vec![
            DeadEnd {
                name: "Faking the migration".into(),
                kind: Some("approach".into()),
                reason: Some("left the schema behind".into()),
            },
            DeadEnd {
                name: "Editing 0042 by hand".into(),
                kind: None,
                reason: None,
            },
            DeadEnd {
                name: "faking the migration".into(),
                kind: None,
                reason: Some("broke the next deploy".into()),
            },
            DeadEnd {
                name: "FAKING THE MIGRATION".into(),
                kind: None,
                reason: Some("left the schema behind".into()),
            },
        ];
        let (cands, names, sink) = extract_named(e);
        assert!(sink.is_empty());
        let summary: Vec<(Kind, Origin, &str, &str)> = cands
            .iter()
            .map(|c| (c.kind, c.origin, names.get(c.domain), &*c.text))
            .collect();
        let lesson = "Run migrations with --plan before applying them in CI";
        assert_eq!(
            summary,
            vec![
                (Kind::Do, Origin::Lesson, "python", lesson),
                (Kind::Do, Origin::Lesson, "django", lesson),
                (
                    Kind::Watch,
                    Origin::Gotcha,
                    "python",
                    "Django caches settings at import time"
                ),
                (
                    Kind::Watch,
                    Origin::Gotcha,
                    "python",
                    "The test DB is reused with --keepdb"
                ),
                (
                    Kind::Watch,
                    Origin::Gotcha,
                    "django",
                    "Django caches settings at import time"
                ),
                (
                    Kind::Watch,
                    Origin::Gotcha,
                    "django",
                    "The test DB is reused with --keepdb"
                ),
                (Kind::Avoid, Origin::DeadEnd, "python", "Faking the migration"),
                (Kind::Avoid, Origin::DeadEnd, "python", "Editing 0042 by hand"),
                (Kind::Avoid, Origin::DeadEnd, "django", "Faking the migration"),
                (Kind::Avoid, Origin::DeadEnd, "django", "Editing 0042 by hand"),
            ]
        );
        assert_eq!(
            cands[6].reasons(),
            ["left the schema behind", "broke the next deploy"],
            "newest first, deduplicated"
        );
        assert!(cands[7].reasons().is_empty());
        assert!(cands.iter().all(|c| c.key().is_none() && !c.outcome_failed()));
        assert!(cands.iter().all(|c| c.project.map(|p| names.get(p))
            == Some(crate::digest::project("git@github.com:acme/billing.git").as_str())));
    }

    #[test]
    fn a_timeout_that_names_its_flag_teaches_the_flag() {
        let hint = "level=error msg=\"Timeout exceeded: try increasing it by passing --timeout option\"";
        let ops = [
            sh("golangci-lint run ./...", "/src/api", OpStatus::Error, Some(hint)),
            sh(
                "golangci-lint run --timeout 5m ./...",
                "/src/api",
                OpStatus::Ok,
                None,
            ),
        ];
        let learned = mechanical(&ops, &rules().policy, &[]);
        assert_eq!(learned.len(), 1);
        assert!(
            learned[0].working.contains("--timeout 5m"),
            "{}",
            learned[0].working
        );
    }

    #[test]
    fn a_record_whose_failures_were_all_transient_is_told_so() {
        let timeout = "ReadTimeoutError: Read timed out. (read timeout=15)";
        let ops = vec![
            sh(
                "pip install -r requirements.txt",
                "/srv/app",
                OpStatus::Error,
                Some(timeout),
            ),
            sh(
                "pip install --timeout 60 -r requirements.txt",
                "/srv/app",
                OpStatus::Ok,
                None,
            ),
        ];
        let (cands, sink) = extract_one(exp("exp-t", &["python"], Outcome::Succeeded, ops));
        assert!(cands.is_empty());
        assert_eq!(sink.len(), 1);
        assert_eq!(sink[0].code, codes::NO_CANDIDATES);
        assert!(
            sink[0]
                .message
                .contains("failed transiently (policy transient_errors: \"timed out\")"),
            "{}",
            sink[0].message
        );
        // A failure that is not transient, retried unchanged, teaches nothing either, but the
        // note does not blame the network for it.
        let ops = vec![
            sh(
                "pytest -q",
                "/srv/app",
                OpStatus::Error,
                Some("E   AssertionError: 3 != 4"),
            ),
            sh("pytest -q", "/srv/app", OpStatus::Ok, None),
        ];
        let (_, sink) = extract_one(exp("exp-r", &["python"], Outcome::Succeeded, ops));
        assert_eq!(sink[0].message, "experience yields no candidate lesson");
    }

    #[test]
    fn outcome_flag_and_fallbacks() {
        let mut failed = exp("exp-f", &["rust"], Outcome::Failed, vec![]);
        failed.words.breakthrough = Some("cargo clean fixed the stale build script output".into());
        let (cands, _) = extract_one(failed.clone());
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].origin, Origin::Breakthrough);
        assert!(cands[0].outcome_failed());

        failed.blessed = true;
        let (cands, _) = extract_one(failed);
        assert!(!cands[0].outcome_failed() && cands[0].blessed());

        // Blessed with nothing but content: content stands in as the lesson.
        let mut bare = exp("omni-7f3a", &["docker"], Outcome::Succeeded, vec![]);
        bare.words.content = Some("Pin base images by digest, not by tag".into());
        let (cands, sink) = extract_one(bare.clone());
        assert!(cands.is_empty());
        assert_eq!(sink.len(), 1);
        assert_eq!(sink[0].code, codes::NO_CANDIDATES);
        assert_eq!(sink[0].domain.as_deref(), Some("docker"));
        bare.blessed = true;
        let (cands, sink) = extract_one(bare.clone());
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].origin, Origin::Content);
        assert!(sink.is_empty());
        // ... but not when it has a gotcha of its own.
        bare.words.gotchas = vec!["docker build caches COPY layers by checksum".into()];
        let (cands, _) = extract_one(bare);
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].origin, Origin::Gotcha);
    }

    #[test]
    fn secret_in_unchanged_args_refuses_the_mechanical_candidate() {
        // Not normalised: the candidate stage scans what the mechanical lesson would carry.
        let key = "sk-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW";
        let env = json!({"OPENAI_API_KEY": key});
        let ops = extract_ops_with_env(&env);
        let (cands, sink) = extract_one(exp(&format!("run-{key}"), &["python"], Outcome::Succeeded, ops));
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].origin, Origin::Mechanical);
        assert!(
            matches!(cands[0].refusal.as_deref(), Some(Refusal::Credential { pattern }) if pattern == "openai-key")
        );
        assert!(cands[0].record_id.starts_with("[redacted: openai-key] "));
        assert_eq!(sink[0].subject, "<redacted>");
        assert_eq!(sink[0].evidence["field"], json!("record id"));
        let dump = format!("{cands:?}") + &serde_json::to_string(&sink).unwrap();
        assert!(!dump.contains(key));

        // With a harmless id, the arguments are what gives it away.
        let mut e = exp("exp-evals", &["python"], Outcome::Succeeded, vec![]);
        e.operations = extract_ops_with_env(&env);
        let (cands, sink) = extract_one(e);
        assert_eq!(cands.len(), 1);
        assert_eq!(sink[0].evidence["field"], json!("arguments"));
        assert_eq!(sink[0].subject, "exp-evals");
        assert!(!format!("{cands:?}{sink:?}").contains(key));
    }

    fn extract_ops_with_env(env: &Value) -> Vec<Operation> {
        ["/srv/evals/src", "/srv/evals"]
            .iter()
            .enumerate()
            .map(|(i, cwd)| Operation {
                tool: "run_shell_command".into(),
                args: json!({"command": "python -m evals.run", "env": env, "cwd": cwd}).into(),
                status: if i == 0 { OpStatus::Error } else { OpStatus::Ok },
                error: (i == 0).then(|| "No module named 'evals'".into()),
                secret_print: 0,
                check: None,
            })
            .collect()
    }

    #[test]
    fn refused_domains_produce_refused_candidates() {
        let mut e = exp("exp-dom", &["go"], Outcome::Succeeded, vec![]);
        e.refused_domains = vec!["../etc".into()];
        e.words.lesson = Some("Run go vet before go test in CI".into());
        let (cands, names, sink) = extract_named(e);
        assert_eq!(cands.len(), 2);
        assert_eq!(names.get(cands[0].domain), "go");
        assert!(cands[0].refusal.is_none());
        assert_eq!(names.get(cands[1].domain), "../etc");
        assert_eq!(
            cands[1].refusal.as_deref(),
            Some(&Refusal::InvalidDomain { raw: "../etc".into() })
        );
        assert!(sink.iter().all(|d| d.code != codes::INVALID_DOMAIN));
    }

    /// A date or time stamp is masked whole, with its time of day; numbers that are no
    /// moment (versions, sizes, limits, an impossible month) are kept.
    #[test]
    fn stamps_are_masked_and_other_numbers_kept() {
        for (text, masked) in [
            ("web:20261119-1019", "web:<stamp>"),
            ("dump-2026-11-19T10:12:05Z.sql", "dump-<stamp>.sql"),
            ("backup_2026_11_19.tar", "backup_<stamp>.tar"),
            ("v2026.11.19", "v2026.11.19"),
            ("psycopg2==2.9.9", "psycopg2==2.9.9"),
            ("--max-old-space-size=4096", "--max-old-space-size=4096"),
            ("build-20261399", "build-20261399"),
            ("id 120261119", "id 120261119"),
            ("2026-11/19", "2026-11/19"),
        ] {
            assert_eq!(stamps_masked(text), masked, "{text}");
        }
        let call = |tag: &str| json!({"command": format!("docker buildx build -t registry.acme.io/admin-ui:{tag} --push .")});
        assert!(stamp_only(&call("20261119-1012"), &call("20261119-1019")));
        assert!(!stamp_only(&call("20261119-1012"), &call("20261119-1012")));
        assert!(!stamp_only(&call("1.8.0"), &call("1.8.1")));
        assert!(!stamp_only(
            &call("20261119-1012"),
            &call("20261119-1019 --platform linux/amd64")
        ));
    }

    #[test]
    fn credential_candidate_is_redacted_everywhere() {
        let token = "ghp_R2d2C3poX9yZ8wV7uT6sR5qP4oN3mL2kJ1iH";
        let mut e = exp("exp-gh", &["git", "github-actions"], Outcome::Succeeded, vec![]);
        e.words.lesson = Some(format!(
            "Push with https://{token}@github.com/acme/billing.git when SSH is blocked"
        ));
        e.words.gotchas = vec!["gh auth status shows which account is active".into()];
        let (cands, sink) = extract_one(e);
        assert_eq!(cands.len(), 4);
        for c in &cands[..2] {
            assert_eq!(
                c.refusal.as_deref(),
                Some(&Refusal::Credential {
                    pattern: "github-token".into()
                })
            );
            assert_eq!(&*c.text, "[redacted: github-token]");
        }
        assert!(cands[2].refusal.is_none());
        assert_eq!(sink.len(), 2, "one N002 per refused candidate");
        assert!(
            sink.iter()
                .all(|d| d.code == codes::CREDENTIAL_REFUSED && d.subject == "exp-gh")
        );
        let dump = format!("{cands:?}") + &serde_json::to_string(&sink).unwrap();
        assert!(!dump.contains(token));
        assert!(!dump.contains("R2d2C3po"));
    }

    /// A long agent session: a lock-file fix, then thousands of test runs on one file each
    /// (every other one failing, the failing ones passing when rerun at the end) and a wrapper
    /// whose two programs alternate (`uv run pytest` failing while `uv run ruff` passes), then
    /// an `npm` fix. Each success used to be compared with every unsettled failure on its key
    /// and, after an unrelated call, with the rest of the session: a quadratic step on calls
    /// per record, which the generated corpus (two calls a record) never shows. Its 10 500
    /// calls at 3 000 files took 7.7 s in a release build, so these 17 500 take minutes in the
    /// test build; the successes are now looked up by what they share.
    #[test]
    fn a_long_session_finds_its_fixes_without_comparing_every_call_with_every_other() {
        let cwd = "/home/dev/src/billing-api";
        let (failed, passed) = shell_in(cwd);
        let mut ops = vec![
            failed(
                "cargo build",
                "error: the lock file needs to be updated but --locked was not passed",
            ),
            passed("cargo build --locked"),
        ];
        let files = 5000;
        for n in 0..files {
            let test = format!("pytest tests/test_module_{n}.py");
            if n % 2 == 0 {
                ops.push(failed(&test, "ERROR collecting tests: fixture 'db' not found"));
            } else {
                ops.push(passed(&test));
            }
        }
        for n in 0..files {
            ops.push(failed(
                &format!("uv run pytest tests/test_module_{n}.py"),
                "ModuleNotFoundError: No module named 'billing'",
            ));
            ops.push(passed("uv run ruff check src"));
        }
        ops.extend(
            (0..files)
                .step_by(2)
                .map(|n| passed(&format!("pytest tests/test_module_{n}.py"))),
        );
        ops.push(failed("npm ci", "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync"));
        ops.push(passed("npm install"));
        assert_eq!(ops.len(), 17_504);
        let learned: Vec<String> = (mechanical(&ops, &rules().policy, &[]).into_iter())
            .map(|m| m.text)
            .collect();
        // The test files' reruns settle their failures with nothing learned, and `uv run
        // ruff` answers no `uv run pytest`.
        assert_eq!(
            learned,
            [
                "run_shell_command cargo: run `cargo build --locked` instead of `cargo build`",
                "run_shell_command npm: run `npm install` instead of `npm ci`",
            ]
        );
    }

    /// The texts of the mechanical lessons `ops` teach under the default policy.
    fn learned(ops: Vec<Operation>) -> Vec<String> {
        (mechanical(&ops, &rules().policy, &[]).into_iter())
            .map(|m| m.text)
            .collect()
    }

    /// A look around right after a failure (`git status` after a rejected `git push`, `kubectl
    /// get pods` after a failed `kubectl apply`) replaces nothing: it taught "run `git status`
    /// instead of `git push …`" when no push worked later. A real replacement right after the
    /// failure (`npm install` after `npm ci`) still teaches.
    #[test]
    fn a_look_around_after_a_failure_is_no_fix() {
        let cwd = "/home/dev/src/billing-api";
        let (failed, passed) = shell_in(cwd);
        let rejected = "! [rejected] main -> main (fetch first) error: failed to push some refs";
        for look in ["git status", "git log --oneline -5", "git diff origin/main"] {
            let ops = vec![failed("git push origin main", rejected), passed(look)];
            assert!(learned(ops).is_empty(), "{look}");
        }
        let ops = vec![
            failed(
                "kubectl apply -f k8s/ingress.yaml",
                "error: unable to recognize \"k8s/ingress.yaml\"",
            ),
            passed("kubectl get pods -n billing"),
        ];
        assert!(learned(ops).is_empty());
        // The failure waits for its answer past the look around.
        let ops = vec![
            failed("git push origin main", rejected),
            passed("git status"),
            passed("git push --force-with-lease origin main"),
        ];
        assert_eq!(
            learned(ops),
            [
                "run_shell_command git: run `git push --force-with-lease origin main` instead of `git push origin main`"
            ]
        );
        let ops = vec![
            failed(
                "npm ci",
                "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync",
            ),
            passed("npm install"),
        ];
        assert_eq!(
            learned(ops),
            ["run_shell_command npm: run `npm install` instead of `npm ci`"]
        );
    }

    /// The looks agents take between a failure and its fix (`go list`, `gh pr checks`, `docker
    /// compose config`, `terraform state list`, `git stash list`, `lsof`) replace nothing and
    /// stand for no fix: the working call after them is still the answer to the failure.
    #[test]
    fn a_listing_between_a_failure_and_its_fix_is_a_look() {
        let cwd = "/home/dev/src/ledger";
        let (failed, passed) = shell_in(cwd);
        let sessions = [
            (
                failed(
                    "go test ./internal/store/...",
                    "package ledger/internal/store: build constraints exclude all Go files",
                ),
                "go list -tags integration ./internal/store/...",
                "go test -tags integration ./internal/store/...",
            ),
            (
                failed(
                    "gh pr merge 42 --squash",
                    "X Pull request #42 is not mergeable: the base branch policy prohibits the merge.",
                ),
                "gh pr checks 42",
                "gh pr merge 42 --squash --admin",
            ),
            (
                failed(
                    "gh release create v1.4.0 --generate-notes",
                    "HTTP 403: Resource not accessible by integration",
                ),
                "gh auth status",
                "gh release create v1.4.0 --generate-notes --repo northwind/ledger",
            ),
            (
                failed("docker compose up -d worker", "no such service: worker"),
                "docker compose config --services",
                "docker compose --profile jobs up -d worker",
            ),
            (
                failed(
                    "terraform plan",
                    "Error: No value for required variable \"region\"",
                ),
                "terraform state list",
                "terraform plan -var region=eu-west-1",
            ),
            (
                failed(
                    "git checkout release/1.4",
                    "error: Your local changes to the following files would be overwritten by checkout: src/ledger.py",
                ),
                "git stash list",
                "git checkout -m release/1.4",
            ),
            (
                failed(
                    "python manage.py runserver",
                    "Error: That port is already in use.",
                ),
                "lsof -i :8000",
                "python manage.py runserver 8001",
            ),
        ];
        for (failure, look, fix) in sessions {
            let learned = learned(vec![failure, passed(look), passed(fix)]);
            assert_eq!(learned.len(), 1, "{look}: {learned:?}");
            assert!(
                learned[0].contains(&format!("run `{fix}` instead of")),
                "{look}: {learned:?}"
            );
        }
    }

    /// A call with nothing in common with the failed one replaces it only as the very next
    /// call (`only_a_call_that_answers_the_failure_is_its_fix`). One that corrects a single
    /// word of it (`make tests` → `make test`, the `/v1/` of a URL → `/v2/`, a test file found
    /// under another directory) replaces it after looks too: the agent listed the targets or
    /// read the docs, then fixed the word. A file read by a tool (`Read`, `read_file`) is a
    /// look like `ls`. A word replaced by an unlike one (`cargo clippy` → `cargo test`) is the
    /// next task; an edit or another program's run in between may be the fix; and the very
    /// next call (`make clean`) is no replacement when a correction follows.
    #[test]
    fn a_corrected_word_after_a_look_is_a_fix() {
        let cwd = "/home/dev/src/storefront";
        let (failed, passed) = shell_in(cwd);
        let read = |tool: &str, path: &str| worked(tool, json!({"file_path": path}));
        let no_rule = "make: *** No rule to make target 'tests'.  Stop.";
        let not_found = "ERROR: file or directory not found: tests/unit/test_cart.py";
        let gone = "curl: (22) The requested URL returned error: 404";
        let v1 = "curl -sf https://api.northwind.dev/v1/invoices?limit=5";
        let v2 = "curl -sf https://api.northwind.dev/v2/invoices?limit=5";
        let sessions = [
            (
                vec![
                    failed("make tests", no_rule),
                    passed("grep -n '^[a-z-]*:' Makefile"),
                ],
                "make test",
            ),
            (
                vec![
                    failed("make tests", no_rule),
                    read("Read", "/home/dev/src/storefront/Makefile"),
                ],
                "make test",
            ),
            (
                vec![
                    failed("pytest -q tests/unit/test_cart.py", not_found),
                    passed("ls tests"),
                    passed("git status"),
                ],
                "pytest -q tests/test_cart.py",
            ),
            (
                vec![
                    failed(v1, gone),
                    read("WebFetch", "https://docs.northwind.dev/api"),
                ],
                v2,
            ),
            (vec![failed(v1, gone), read("read_file", "docs/api.md")], v2),
        ];
        for (mut ops, fix) in sessions {
            let between = format!("{:?}", ops.last().map(|o| o.args.text().to_string()));
            ops.push(passed(fix));
            let learned = learned(ops);
            assert_eq!(learned.len(), 1, "{between}: {learned:?}");
            assert!(
                learned[0].contains(&format!("run `{fix}` instead of")),
                "{between}: {learned:?}"
            );
        }
        let lint = "error: this `if` has identical blocks";
        let edit = worked(
            "Edit",
            json!({"file_path": "Makefile", "old_string": "tests:", "new_string": "test:"}),
        );
        let not_learned = [
            vec![
                failed("cargo clippy -- -D warnings", lint),
                passed("cat src/lib.rs"),
                passed("cargo test -- -D warnings"),
            ],
            vec![failed("make tests", no_rule), edit, passed("make test")],
            vec![
                failed("make tests", no_rule),
                passed("pip install -r requirements.txt"),
                passed("make test"),
            ],
            // Nor is a run of another target the fix when a correction follows.
            vec![
                failed("make tests", no_rule),
                passed("make clean"),
                passed("make test"),
            ],
        ];
        for ops in not_learned {
            let shown = format!(
                "{:?}",
                ops.iter().map(|o| o.args.text().to_string()).collect::<Vec<_>>()
            );
            let got = learned(ops);
            assert!(got.is_empty(), "{shown}: {got:?}");
        }
    }

    /// Some programs look with a flag, not a subcommand: `rake -T` lists the tasks, `nginx -t`
    /// and `sshd -t` check the configuration. Listed as `program -flag` in `inspect_programs`,
    /// such a run replaces nothing: it taught "run `bundle exec rake -T` instead of `bundle
    /// exec rake db:migrate`". The flag matches exactly: `rake -t` traces, and teaches.
    #[test]
    fn a_look_by_flag_is_no_fix() {
        let cwd = "/home/dev/src/storefront";
        let (failed, passed) = shell_in(cwd);
        let no_task = "rake aborted!\nDon't know how to build task 'db:migrate:reset_all'";
        let emerg = "nginx: [emerg] unknown directive \"proxy_pas\" in /etc/nginx/sites-enabled/shop:12";
        let sessions = [
            (
                failed("bundle exec rake db:migrate:reset_all", no_task),
                "bundle exec rake -T",
            ),
            (
                failed("bundle exec rake db:migrate:reset_all", no_task),
                "bundle exec rake --tasks db",
            ),
            (failed("sudo nginx -s reload", emerg), "sudo nginx -t"),
            (failed("sudo nginx -s reload", emerg), "sudo nginx -T"),
            (
                failed(
                    "sudo sshd -D -p 2222",
                    "Missing privilege separation directory: /run/sshd",
                ),
                "sudo sshd -t",
            ),
            // A look of the same subcommand after an action failed is no fix of it either,
            // as a probe is not (`make -n release` prints what `make release` would run).
            (
                failed(
                    "sudo nginx",
                    "nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)",
                ),
                "sudo nginx -t",
            ),
            (
                failed("make release", "make: *** [Makefile:42: release] Error 2"),
                "make -n release",
            ),
            (
                failed("make release", "make: *** [Makefile:42: release] Error 2"),
                "make --just-print release",
            ),
        ];
        for (failure, look) in sessions {
            assert!(learned(vec![failure, passed(look)]).is_empty(), "{look}");
        }
        let tasks = learned(vec![
            failed("bundle exec rake db:migrate:reset_all", no_task),
            passed("bundle exec rake -t db:migrate:reset"),
        ]);
        assert_eq!(
            tasks,
            [
                "run_shell_command bundle: run `bundle exec rake -t db:migrate:reset` instead of `bundle exec rake db:migrate:reset_all`"
            ]
        );
    }

    /// "Connection refused" is transient when the call is retried where it went, but the next
    /// working call at another port or host says the address was wrong: `psql -p 5433` after
    /// `psql -p 5432`, the Vite port after the CRA one. Another option with the same address
    /// (`curl --retry 5`) is still a retry of a service that was not up yet.
    #[test]
    fn a_refused_connection_answered_at_another_address_is_a_fix() {
        let cwd = "/home/dev/src/shopfront";
        let (failed, passed) = shell_in(cwd);
        let psql = "psql: error: connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused";
        let curl = "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server (ECONNREFUSED)";
        assert_eq!(
            learned(vec![
                failed("psql -h localhost -p 5432 -U app -c 'select 1'", psql),
                passed("psql -h localhost -p 5433 -U app -c 'select 1'"),
            ]),
            [
                "run_shell_command psql: run `psql -h localhost -p 5433 -U app -c 'select 1'` instead of `psql -h localhost -p 5432 -U app -c 'select 1'`"
            ]
        );
        assert_eq!(
            learned(vec![
                failed("curl -sf http://localhost:3000/health", curl),
                passed("curl -sf http://localhost:5173/health"),
            ]),
            [
                "run_shell_command curl: run `curl -sf http://localhost:5173/health` instead of `curl -sf http://localhost:3000/health`"
            ]
        );
        assert_eq!(
            learned(vec![
                failed("PGPORT=5432 pytest tests/integration", psql),
                passed("PGPORT=5433 pytest tests/integration"),
            ])
            .len(),
            1
        );
        // The same address: the service was not up yet.
        for retry in [
            "curl -sf http://localhost:3000/health",
            "curl -sf --retry 5 http://localhost:3000/health",
        ] {
            let ops = vec![
                failed("curl -sf http://localhost:3000/health", curl),
                passed(retry),
            ];
            assert!(learned(ops).is_empty(), "{retry}");
        }
        // A port option whose value is no port is no address (`pytest -p no:xdist`).
        let ops = vec![
            failed("pytest tests/integration", psql),
            passed("pytest -p no:xdist tests/integration"),
        ];
        assert!(learned(ops).is_empty());
    }

    /// Codex CLI edits by running `apply_patch` (through its `shell` tool, or as a tool of its
    /// own), and the files it changes are in the patch (`*** Update File: …`), not in a path
    /// argument. A patch of the file the failure names fixed what it reported, as an `Edit` of
    /// it does: the test passing afterwards with `-x` added is no "run `pytest -x` instead".
    #[test]
    fn a_patch_of_the_file_the_failure_names_is_its_fix() {
        let cwd = "/home/dev/src/shop";
        let (failed, passed) = shell_in(cwd);
        let error = "TypeError: unsupported operand type(s) for +: 'decimal.Decimal' and 'float'\n  File \"/home/dev/src/shop/shop/orders.py\", line 42, in total";
        let patch = |file: &str| {
            format!(
                "*** Begin Patch\n*** Update File: {file}\n@@ def total(self):\n-        return sum(self.prices) + 0.0\n+        return sum(self.prices, Decimal(0))\n*** End Patch\n"
            )
        };
        let through_shell = |file: &str| {
            worked(
                "shell",
                json!({"command": ["apply_patch", patch(file)], "workdir": cwd}),
            )
        };
        let own_tool = |file: &str| worked("apply_patch", json!({"input": patch(file)}));
        for edit in [through_shell("shop/orders.py"), own_tool("shop/orders.py")] {
            let ops = vec![
                failed("pytest -q tests/test_orders.py", error),
                edit,
                passed("pytest -q -x tests/test_orders.py"),
            ];
            let got = learned(ops);
            assert!(got.is_empty(), "{got:?}");
        }
        // A patch of another file leaves the new arguments as what may have fixed it.
        let ops = vec![
            failed("pytest -q tests/test_orders.py", error),
            through_shell("docs/CHANGELOG.md"),
            passed("pytest -q -x tests/test_orders.py"),
        ];
        assert_eq!(learned(ops).len(), 1);
    }

    /// A file is named by its whole name, wherever its directory starts in the error.
    #[test]
    fn an_error_names_a_file_by_its_whole_name() {
        let prisma = "error: Type \"Datetime\" is neither a built-in type\n  -->  prisma/schema.prisma:41";
        assert!(names_file(prisma, "/srv/billing/prisma/schema.prisma"));
        assert!(!names_file(
            "wrote schema.prisma.bak",
            "/srv/billing/prisma/schema.prisma"
        ));
        assert!(!names_file(
            "see myschema.prisma:3",
            "/srv/billing/prisma/schema.prisma"
        ));
        assert!(names_file("(queue.go:88)", "internal/queue/queue.go"));
        // A name without an extension is too often a plain word.
        assert!(!names_file("error in api", "/srv/api"));
    }

    /// Only the values of naming options differ: a quoted message is one word.
    #[test]
    fn a_new_name_alone_is_told_from_a_new_option() {
        let renamed =
            |f: &str, w: &str| renamed_only(Some(f), Some(w), &json!({"command": f}), &json!({"command": w}));
        assert!(renamed(
            "npx prisma migrate dev --name add_refunds",
            "npx prisma migrate dev --name add_refunds_table"
        ));
        assert!(renamed(
            r#"git commit -m "Fix export""#,
            r#"git commit -m "Fix CSV export of empty ledgers""#
        ));
        assert!(renamed(
            "docker run --name=api web:1",
            "docker run --name=api2 web:1"
        ));
        assert!(!renamed(
            "npx prisma migrate dev --name add_refunds",
            "npx prisma migrate dev --name add_refunds --create-only"
        ));
        assert!(!renamed("pytest -q", "pytest -q"));
    }
}
