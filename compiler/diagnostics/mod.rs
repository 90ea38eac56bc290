//! Diagnostics: one type, one registry of codes, one sink shared by every stage.
//!
//! A diagnostic is data, not control flow: stages push them and go on. `finalize` makes the
//! list deterministic (stable sort) and keeps its volume proportional to problems (notes are
//! folded per code and domain).

pub mod pages;
pub mod registry;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::cluster::fx::{FxMap, FxSet};
use crate::model::SourceLoc;
pub use registry::{CODES, CodeInfo, codes, lookup};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    /// Lower-case, no trailing period: what is wrong.
    pub message: String,
    /// What it is about: an experience id, a cluster or lesson id, a domain, a file.
    pub subject: String,
    /// File and line, for diagnostics about a record.
    pub location: Option<SourceLoc>,
    /// The domain it concerns, when it concerns one (used by `why` and for folding notes).
    pub domain: Option<String>,
    /// name=value pairs; `experiences` lists every experience id concerned.
    pub evidence: Evidence,
    /// How to fix it (the code's help line).
    pub help: &'static str,
}

/// Every stage pushes into one of these; parallel stages fill their own and append in a
/// stable order.
pub type Sink = Vec<Diagnostic>;

impl Diagnostic {
    /// A diagnostic with the code's default severity and help line.
    pub fn new(code: &'static str, message: impl Into<String>) -> Diagnostic {
        let info = lookup(code).unwrap_or_else(|| panic!("unregistered diagnostic code {code}"));
        Diagnostic {
            code,
            severity: info.severity,
            message: message.into(),
            subject: String::new(),
            location: None,
            domain: None,
            evidence: Evidence::default(),
            help: info.help,
        }
    }

    /// A diagnostic about a whole file: the path is its subject and its `path` evidence.
    pub fn about_file(code: &'static str, message: impl Into<String>, path: &str) -> Diagnostic {
        Diagnostic::new(code, message).subject(path).with("path", path)
    }

    /// Input the compile did not take: an error of load, normalize or the gates (a record,
    /// domain or claim refused), or a file in a format skillc does not read, which is only a
    /// warning. `--strict` exits 1 on these.
    pub fn leaves_input_out(&self) -> bool {
        (self.severity == Severity::Error && matches!(&self.code[..1], "L" | "N" | "G"))
            || self.code == codes::UNKNOWN_FORMAT
    }

    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = subject.into();
        self
    }

    pub fn at(mut self, loc: &SourceLoc) -> Self {
        self.location = Some(loc.clone());
        self
    }

    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    pub fn with(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        self.evidence.insert(name, value.into());
        self
    }

    /// Every experience id concerned (sorted, deduplicated).
    pub fn experiences<S: AsRef<str>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        // Sorted and deduplicated as given, then each copied once straight into its JSON
        // string: a vector of `String`s turned into a `Value` array was a second allocation
        // and pass for each of the half a million diagnostics of a million records.
        let mut ids: Vec<S> = ids.into_iter().collect();
        ids.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
        ids.dedup_by(|a, b| a.as_ref() == b.as_ref());
        let ids = ids
            .iter()
            .map(|s| Value::String(s.as_ref().to_string()))
            .collect();
        self.evidence.insert("experiences", Value::Array(ids));
        self
    }

    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// The code's kebab-case name.
    pub fn name(&self) -> &'static str {
        lookup(self.code).map(|c| c.name).unwrap_or("unknown")
    }

    /// The experience ids this diagnostic names in `evidence.experiences`.
    pub fn experience_ids(&self) -> Vec<&str> {
        self.experience_id_iter().collect()
    }

    /// `experience_ids` without collecting them.
    pub fn experience_id_iter(&self) -> impl Iterator<Item = &str> {
        let ids = match self.evidence.get("experiences") {
            Some(Value::Array(a)) => a.as_slice(),
            _ => &[],
        };
        ids.iter().filter_map(Value::as_str)
    }
}

/// A diagnostic's name=value pairs, sorted by name. A diagnostic carries a handful, so a
/// sorted vector: a tree map per diagnostic cost more than the rest of it at the few hundred
/// thousand a million-experience compile reports.
#[derive(Clone, Debug, Default, PartialEq)]
/// Names are the builders' literals, so they cost no allocation.
pub struct Evidence(Vec<(&'static str, Value)>);

impl Evidence {
    /// Evidence from pairs already in name order, each name once: what inserting them one by
    /// one makes, without a search and a shift per pair and the vector grown twice on the way.
    pub fn sorted(pairs: Vec<(&'static str, Value)>) -> Evidence {
        debug_assert!(
            pairs.windows(2).all(|w| w[0].0 < w[1].0),
            "evidence names out of order"
        );
        Evidence(pairs)
    }

    /// Sets `name`, returning the value it replaced.
    pub fn insert(&mut self, name: &'static str, value: Value) -> Option<Value> {
        match self.0.binary_search_by(|(k, _)| k.cmp(&name)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (name, value));
                None
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        let i = self.0.binary_search_by(|(k, _)| k.cmp(&name)).ok()?;
        Some(&self.0[i].1)
    }

    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.0.binary_search_by(|(k, _)| k.cmp(&name)).ok()?;
        Some(self.0.remove(i).1)
    }

    /// The values, to rewrite in place (names and order stay).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    /// The pairs in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `Null` for a name that is not there, as `serde_json::Value` indexing does.
impl std::ops::Index<&str> for Evidence {
    type Output = Value;
    fn index(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(name).unwrap_or(&NULL)
    }
}

impl Serialize for Evidence {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Notes of one (code, domain) are listed one by one up to this many, then folded.
pub const NOTES_KEPT_APART: usize = 5;

/// Sorts diagnostics into a stable order and folds notes per (code, domain) into one
/// diagnostic with a count, so that volume follows problems, not input size. Codes marked
/// `fold_notes` always fold; other notes fold past `NOTES_KEPT_APART`.
pub fn finalize(diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    use rayon::prelude::*;
    // Only the notes go through `folding` (most stages folded theirs already, so there are
    // few): the rest stays in place, since passing a million-compile's hundreds of thousands
    // of warnings through it would hold them twice at the peak. The same result at any
    // thread count: `order` ties only identical diagnostics (severity and help follow the
    // code), so the sort need not be stable, and a sort in place (`sort_in_order`) neither
    // moves half a million diagnostics through a buffer nor faults one in (0.2 s of 0.7 at 1 M).
    let mut kept = diags;
    let notes: Vec<Diagnostic> = kept.extract_if(.., |d| d.severity == Severity::Note).collect();
    kept.extend(folding(notes.into_par_iter()));
    sort_in_order(&mut kept);
    // Equal neighbours are rare: looked for on every core, and only then removed on one.
    if kept.par_windows(2).any(|w| w[0] == w[1]) {
        kept.dedup();
    }
    kept
}

/// Sorts by `order` through keys (`Ranks::key`): most pairs are told apart by numbers in one
/// small array, where `order` read four or five strings in as many allocations per pair and
/// the sort moved the diagnostics themselves at every step. Pairs whose keys tie are compared
/// by `order`; then each diagnostic is moved once, to its place.
fn sort_in_order(diags: &mut [Diagnostic]) {
    use rayon::prelude::*;
    let Ok(n) = u32::try_from(diags.len()) else {
        diags.par_sort_unstable_by(order);
        return;
    };
    let ranks = Ranks::of(diags);
    let mut keyed: Vec<Key> = (diags.par_iter().zip(0..n))
        .map(|(d, at)| ranks.key(d, at))
        .collect();
    drop(ranks);
    keyed.par_sort_unstable_by(|a, b| {
        (a.fields, a.subject)
            .cmp(&(b.fields, b.subject))
            .then_with(|| order(&diags[a.at as usize], &diags[b.at as usize]))
    });
    let from: Vec<u32> = keyed.into_iter().map(|k| k.at).collect();
    permute(diags, from);
}

/// `order`'s first fields as numbers: the code, the location's file and line, the domain, then
/// the subject's first eight bytes. Where two keys differ there, `order` puts the diagnostics
/// in the keys' order; where they tie, only `order` can tell.
struct Key {
    /// The code's rank, the file's (0 without a location, else 1 + its rank), the line, the
    /// domain's (0 without one, else 1 + its rank): 32 bits each, in that order.
    fields: u128,
    /// The subject's first eight bytes, big-endian, padded with zeros (a pad sorts first, as
    /// a shorter text does, so a tie here only says the prefix is the same).
    subject: u64,
    /// The diagnostic's place in the list.
    at: u32,
}

/// Each distinct code, file and domain of a list of diagnostics numbered in `order`'s order.
struct Ranks<'a> {
    codes: FxMap<&'a str, u32>,
    files: FxMap<&'a str, u32>,
    domains: FxMap<&'a str, u32>,
}

impl<'a> Ranks<'a> {
    fn of(diags: &'a [Diagnostic]) -> Ranks<'a> {
        use rayon::prelude::*;
        type Seen<'a> = (FxSet<&'a str>, FxSet<&'a str>, FxSet<&'a str>);
        let (codes, files, domains) = (diags.par_iter())
            .fold(Seen::default, |(mut codes, mut files, mut domains), d| {
                codes.insert(d.code);
                if let Some(loc) = &d.location {
                    files.insert(&*loc.file);
                }
                if let Some(domain) = &d.domain {
                    domains.insert(domain.as_str());
                }
                (codes, files, domains)
            })
            .reduce(Seen::default, |mut a, b| {
                a.0.extend(b.0);
                a.1.extend(b.1);
                a.2.extend(b.2);
                a
            });
        // Codes sort by stage first, as in `order`; files and domains as texts.
        let numbered = |texts: FxSet<&'a str>, stage: fn(&str) -> usize| -> FxMap<&'a str, u32> {
            let mut texts: Vec<&'a str> = texts.into_iter().collect();
            texts.sort_unstable_by_key(|t| (stage(t), *t));
            (texts.into_iter()).zip(0..).collect()
        };
        Ranks {
            codes: numbered(codes, registry::stage_rank),
            files: numbered(files, |_| 0),
            domains: numbered(domains, |_| 0),
        }
    }

    fn key(&self, d: &Diagnostic, at: u32) -> Key {
        let (file, line) = match &d.location {
            Some(loc) => (1 + self.files[&*loc.file], loc.line),
            None => (0, 0),
        };
        let domain = d.domain.as_ref().map_or(0, |dom| 1 + self.domains[dom.as_str()]);
        let fields = [self.codes[d.code], file, line, domain]
            .into_iter()
            .fold(0u128, |acc, f| (acc << 32) | u128::from(f));
        Key {
            fields,
            subject: (crate::score::prefix(&d.subject) >> 64) as u64,
            at,
        }
    }
}

/// Puts the item at `from[k]` at `k` (`from` a permutation), following each cycle with swaps:
/// every item moves once, in place.
fn permute<T>(items: &mut [T], mut from: Vec<u32>) {
    const DONE: u32 = u32::MAX;
    for start in 0..items.len() {
        let mut at = start;
        while from[at] != DONE {
            let next = from[at] as usize;
            from[at] = DONE;
            if next == start {
                break;
            }
            items.swap(at, next);
            at = next;
        }
    }
}

/// Collects diagnostics made in parallel, folding the notes as they arrive (`Notes`): the
/// others in order, then what the notes fold into. A stage that makes a note per record
/// collects with this, so hundreds of thousands of notes are never held at once.
pub fn folding(diags: impl rayon::iter::ParallelIterator<Item = Diagnostic>) -> Sink {
    folding_with(diags, Notes::default())
}

/// `folding`, with `earlier` notes (made before `diags`) folded in too.
pub fn folding_with(diags: impl rayon::iter::ParallelIterator<Item = Diagnostic>, earlier: Notes) -> Sink {
    use rayon::prelude::*;
    let (mut sink, notes) = diags
        .fold(
            || (Sink::new(), Notes::default()),
            |(mut sink, mut notes), d| {
                notes.add(d, &mut sink);
                (sink, notes)
            },
        )
        .reduce(
            || (Sink::new(), Notes::default()),
            |(mut sink, notes), (more, other)| {
                sink.extend(more);
                (sink, notes.merge(other))
            },
        );
    sink.extend(earlier.merge(notes).into_sink());
    sink
}

/// Notes folded as they are made, exactly as `finalize` folds them: per (code, domain) the
/// count, every experience id, and only the first few notes in output order (all that a
/// group too small to fold shows).
#[derive(Debug, Default)]
pub struct Notes(BTreeMap<&'static str, BTreeMap<Option<String>, NoteGroup>>);

/// A notes group's domain, owned (the map's key) or borrowed (a lookup), ordered as
/// `Option<String>` orders: `BTreeMap::get` then needs no `String` made for the key.
trait DomainKey {
    fn key(&self) -> Option<&str>;
}

impl DomainKey for Option<String> {
    fn key(&self) -> Option<&str> {
        self.as_deref()
    }
}

impl DomainKey for Option<&str> {
    fn key(&self) -> Option<&str> {
        *self
    }
}

impl<'a> std::borrow::Borrow<dyn DomainKey + 'a> for Option<String> {
    fn borrow(&self) -> &(dyn DomainKey + 'a) {
        self
    }
}

impl PartialEq for dyn DomainKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn DomainKey + '_ {}

impl PartialOrd for dyn DomainKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn DomainKey + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

#[derive(Debug, Default)]
struct NoteGroup {
    count: usize,
    /// The first notes in output order, at most `NOTES_KEPT_APART` once trimmed.
    first: Vec<Diagnostic>,
    /// The experience ids of the notes trimmed away (moved out of them, not copied).
    ids: Vec<String>,
    /// The subjects of the notes trimmed away that are not among their experience ids (a
    /// lesson's id): a folded note names every lesson it stands for.
    subjects: Vec<String>,
    /// A note was trimmed away (or never made), so it may say something else than the first:
    /// the folded note then does not speak for all in the first one's words.
    mixed: bool,
}

impl NoteGroup {
    /// Keeps the first `NOTES_KEPT_APART` in output order; stable, so of notes that sort
    /// alike the one made first stays. The others leave their ids behind.
    fn trim(&mut self) {
        self.first.sort_by(order);
        for mut d in self.first.drain(NOTES_KEPT_APART.min(self.first.len())..) {
            take_ids(&mut d, &mut self.ids, &mut self.subjects);
            // Notes only counted (`add_unshown`) are never compared, so none trimmed is.
            self.mixed = true;
        }
    }
}

/// A note's experience ids (its subject when it names none), moved into `ids`; its subject
/// into `subjects` when it is not one of them.
fn take_ids(d: &mut Diagnostic, ids: &mut Vec<String>, subjects: &mut Vec<String>) {
    let own = match d.evidence.remove("experiences") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let own = own.into_iter().filter_map(|v| match v {
        Value::String(s) => Some(s),
        _ => None,
    });
    note_ids(&d.subject, own, ids, subjects);
}

/// Keeps a note's experience ids, or its subject when it names none; a subject that is not
/// one of them (a lesson's id) goes to `subjects`.
fn note_ids(
    subject: &str,
    experiences: impl Iterator<Item = String>,
    ids: &mut Vec<String>,
    subjects: &mut Vec<String>,
) {
    let before = ids.len();
    ids.extend(experiences);
    if ids.len() == before {
        if !subject.is_empty() {
            ids.push(subject.to_string());
        }
    } else if !subject.is_empty() && !ids[before..].iter().any(|id| id == subject) {
        subjects.push(subject.to_string());
    }
}

impl Notes {
    /// Takes `d` if it is a note; anything else goes to `sink`.
    pub fn add(&mut self, d: Diagnostic, sink: &mut Sink) {
        if d.severity != Severity::Note {
            sink.push(d);
            return;
        }
        let groups = self.0.entry(d.code).or_default();
        let group = match groups.get_mut(&d.domain) {
            Some(g) => g,
            None => groups.entry(d.domain.clone()).or_default(),
        };
        group.count += 1;
        group.first.push(d);
        if group.first.len() >= 2 * NOTES_KEPT_APART {
            group.trim();
        }
    }

    /// Counts a note that cannot be among the first `NOTES_KEPT_APART` of its (code, domain)
    /// in output order — the caller knows that many come before it — so that it can only be
    /// folded away: as if it had been made and trimmed, only its experience ids are kept
    /// (its subject when it names none). Saves making the whole note when they are many.
    pub fn add_unshown(
        &mut self,
        code: &'static str,
        domain: Option<&str>,
        subject: &str,
        experiences: impl Iterator<Item = String>,
    ) {
        let groups = self.0.entry(code).or_default();
        // Looked up by `&str`: the domain is copied only for a group's first note (this runs
        // for each of hundreds of thousands of lessons, nearly all in a group that exists).
        let group = match groups.get_mut(&domain as &dyn DomainKey) {
            Some(g) => g,
            None => groups.entry(domain.map(str::to_string)).or_default(),
        };
        group.count += 1;
        group.mixed = true;
        note_ids(subject, experiences, &mut group.ids, &mut group.subjects);
    }

    /// These notes and `later` ones (made after them) as if added to one `Notes`.
    pub fn merge(mut self, later: Notes) -> Notes {
        for (code, groups) in later.0 {
            let mine = self.0.entry(code).or_default();
            for (domain, more) in groups {
                let group = mine.entry(domain).or_default();
                group.count += more.count;
                group.first.extend(more.first);
                append_unordered(&mut group.ids, more.ids);
                append_unordered(&mut group.subjects, more.subjects);
                group.mixed |= more.mixed;
                group.trim();
            }
        }
        self
    }

    /// The notes as `finalize` leaves them: a folded note per group that folds, the notes
    /// of the others.
    pub fn into_sink(self) -> Sink {
        use rayon::prelude::*;
        let groups: Vec<(&'static str, Option<String>, NoteGroup)> = (self.0.into_iter())
            .flat_map(|(code, groups)| groups.into_iter().map(move |(domain, g)| (code, domain, g)))
            .collect();
        // A group of a big domain sorts hundreds of thousands of ids: one group per job.
        let made: Vec<Vec<Diagnostic>> = (groups.into_par_iter().with_max_len(1))
            .map(|(code, domain, mut group)| {
                group.trim();
                if !notes_fold(code, group.count) {
                    return group.first;
                }
                // The folded note stands for the first; the ids of all are in it. (A group of
                // unshown notes alone breaks `add_unshown`'s contract: nothing to show.)
                debug_assert!(!group.first.is_empty(), "{code}: only unshown notes");
                for d in &mut group.first {
                    take_ids(d, &mut group.ids, &mut group.subjects);
                }
                // Ids taken out, what is left is what each note says.
                let mixed = group.mixed
                    || (group.first.windows(2))
                        .any(|w| w[0].message != w[1].message || w[0].evidence != w[1].evidence);
                let Some(first) = group.first.into_iter().next() else {
                    return Vec::new();
                };
                sort_ids(&mut group.ids);
                sort_ids(&mut group.subjects);
                let folded = Folded {
                    count: group.count,
                    ids: group.ids,
                    subjects: group.subjects,
                    mixed,
                };
                vec![folded_note(first, domain, folded)]
            })
            .collect();
        made.into_iter().flatten().collect()
    }
}

/// Adds `more` to `items` whose order does not matter (the ids and subjects are sorted when
/// they fold): the shorter is copied onto the longer, so that merging the notes of many parts
/// does not copy a big group's ids again at every level.
fn append_unordered<T>(items: &mut Vec<T>, mut more: Vec<T>) {
    if more.len() > items.len() {
        std::mem::swap(items, &mut more);
    }
    items.append(&mut more);
}

/// Sorts and deduplicates ids as `sort_unstable` and `dedup` do: by their first 16 bytes as
/// one number, each read once (a big domain's group holds hundreds of thousands, and comparing
/// two strings reads both from their allocations), the whole text only where those tie. A
/// number orders as its bytes do, so the order is the texts'.
fn sort_ids(ids: &mut Vec<String>) {
    let mut keyed: Vec<(u128, String)> = ids.drain(..).map(|id| (crate::score::prefix(&id), id)).collect();
    keyed.sort_unstable();
    ids.extend(keyed.into_iter().map(|(_, id)| id));
    ids.dedup();
}

/// Do `count` notes of one (code, domain) fold into one?
fn notes_fold(code: &str, count: usize) -> bool {
    let always = lookup(code).is_some_and(|c| c.fold_notes);
    count > 1 && (always || count > NOTES_KEPT_APART)
}

/// What the notes of one (code, domain) folded into one leave behind.
struct Folded {
    count: usize,
    /// Every experience id, sorted.
    ids: Vec<String>,
    /// Every subject that is not an experience id (a lesson's), sorted.
    subjects: Vec<String>,
    /// Not every note said what the first says.
    mixed: bool,
}

/// The note that stands for `count` notes of one (code, domain): the first one (in output
/// order) with the count, every experience id and every other subject. When the notes did not
/// all say the same, the message says what the code means and quotes the first as an
/// example, and the first's own evidence moves under `first`, so one lesson's reason (or one
/// memory's state) is not told of all.
fn folded_note(mut first: Diagnostic, domain: Option<String>, f: Folded) -> Diagnostic {
    let count = f.count;
    if f.mixed && !first.evidence.is_empty() {
        let own = std::mem::take(&mut first.evidence);
        let own: serde_json::Map<String, Value> =
            own.0.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        first.evidence.insert("first", Value::Object(own));
    }
    let message = match lookup(first.code).filter(|_| f.mixed) {
        Some(info) => format!(
            "{} ({count} times; the first, {}: {})",
            info.summary, first.subject, first.message
        ),
        None => times(&first.message, count),
    };
    let mut d = Diagnostic {
        message,
        subject: domain.unwrap_or_else(|| first.subject.clone()),
        location: None,
        ..first
    };
    d.evidence.insert("count", Value::from(count));
    d.evidence.insert("experiences", Value::from(f.ids));
    if !f.subjects.is_empty() {
        d.evidence.insert("subjects", Value::from(f.subjects));
    }
    d
}

/// A folded note's message when all its notes said the same: the first's words and the count.
fn times(message: &str, count: usize) -> String {
    format!("{message} ({count} times)")
}

/// The words the `count` notes folded into `message` all said (`folded_note`, `times`);
/// `None` when they differed and the message says what the code means instead.
pub fn shared_words(message: &str, count: usize) -> Option<&str> {
    message.strip_suffix(&times("", count))
}

/// Takes the experiences `drop` picks out of a note, folded (`folded_note`) or not: its
/// count, ids and words as if they had never been noted. A folded note keeps its first
/// note's words while all said the same; otherwise it says what the code means. False when
/// nothing is left of it.
pub fn drop_experiences(d: &mut Diagnostic, drop: impl Fn(&str) -> bool) -> bool {
    if !d.experience_id_iter().any(&drop) {
        return true;
    }
    let ids = d.experience_id_iter().count();
    let kept: Vec<String> = (d.experience_id_iter())
        .filter(|id| !drop(id))
        .map(str::to_string)
        .collect();
    if kept.is_empty() {
        return false;
    }
    // One note has a single id, and no count.
    let count = (d.evidence.get("count").and_then(Value::as_u64)).map_or(ids, |c| c as usize);
    let left = count.saturating_sub(ids - kept.len()).max(kept.len());
    let mixed = d.evidence.remove("first").is_some();
    let message = match shared_words(&d.message, count).filter(|_| !mixed) {
        Some(first) => first.to_string(),
        None => lookup(d.code).map_or(d.code, |i| i.summary).to_string(),
    };
    if left == 1 {
        d.evidence.remove("count");
        d.subject = kept[0].clone();
        d.message = message;
    } else {
        d.evidence.insert("count", left.into());
        d.message = times(&message, left);
    }
    d.evidence.insert("experiences", kept.into());
    true
}

/// The order diagnostics are listed in. Only identical diagnostics tie (the help line is the
/// code's), which lets `finalize` sort without keeping ties in place.
pub fn order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
    let stage = |d: &Diagnostic| registry::stage_rank(d.code);
    (stage(a), a.code, &a.location, &a.domain, &a.subject, &a.message)
        .cmp(&(stage(b), b.code, &b.location, &b.domain, &b.subject, &b.message))
        .then(a.severity.cmp(&b.severity))
        .then_with(|| {
            let ea = serde_json::to_string(&a.evidence).unwrap_or_default();
            let eb = serde_json::to_string(&b.evidence).unwrap_or_default();
            ea.cmp(&eb)
        })
}

/// `1 experience`, `2 experiences`, `0 experiences`: a count and its noun, in the singular only
/// for one, so no message says "1 experience(s)".
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `plural` for a noun whose plural adds an `s`.
pub fn counted(n: usize, noun: &str) -> String {
    plural(n, noun, &format!("{noun}s"))
}

/// Shortens a list of ids for a message (`a, b, c and 7 more`); the evidence keeps all.
pub fn short_list<S: AsRef<str>>(ids: &[S], max: usize) -> String {
    let shown: Vec<&str> = ids.iter().take(max).map(|s| s.as_ref()).collect();
    if ids.len() > max {
        format!("{} and {} more", shown.join(", "), ids.len() - max)
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_serialises_sorted_by_name_and_replaces_in_place() {
        let d = Diagnostic::new(
            codes::OUTCOME_GATE,
            "cluster held back: its experiences did not pass",
        )
        .with("reinforcement", 1)
        .experiences(["exp-b", "exp-a", "exp-b"])
        .with("domains", vec!["python"])
        .with("reinforcement", 2);
        assert_eq!(
            serde_json::to_string(&d.evidence).unwrap(),
            r#"{"domains":["python"],"experiences":["exp-a","exp-b"],"reinforcement":2}"#
        );
        assert_eq!(d.evidence.len(), 3);
        assert_eq!(d.evidence["missing"], Value::Null);
        assert_eq!(d.experience_ids(), ["exp-a", "exp-b"]);
    }

    /// Superseded lessons in three domains (one with few enough to list apart), records that
    /// yield nothing (always folded), and a warning: what a compile's lesson and candidate
    /// stages report in bulk.
    fn bulk_notes() -> Vec<Diagnostic> {
        let mut all = Vec::new();
        for (domain, n) in [("python", 40), ("docker", 3), ("postgres", 12)] {
            for i in (0..n).rev() {
                all.push(
                    Diagnostic::new(codes::SUPERSEDED, format!("lesson superseded: replaced ({i})"))
                        .subject(format!("L{domain}{i:04}"))
                        .domain(domain)
                        .experiences([format!("{domain}-run-{i}"), format!("{domain}-run-{}", i / 2)]),
                );
            }
        }
        for i in 0..9 {
            let loc = SourceLoc {
                file: "memory/2026-11.jsonl".into(),
                line: 100 - i,
            };
            all.push(
                Diagnostic::new(codes::NO_CANDIDATES, "experience yields no candidate lesson")
                    .subject(format!("exp-{i}"))
                    .at(&loc)
                    .experiences([format!("exp-{i}")]),
            );
        }
        all.push(Diagnostic::new(codes::OUTCOME_GATE, "cluster held back").subject("C0123456789ab"));
        all
    }

    #[test]
    fn notes_folded_where_they_are_made_finalize_like_notes_folded_at_the_end() {
        let all = bulk_notes();
        let at_the_end = finalize(all.clone());
        // Fewer than six superseded docker lessons stay apart; the rest fold with a count.
        assert_eq!(
            at_the_end.iter().filter(|d| d.code == codes::SUPERSEDED).count(),
            2 + 3
        );
        let python = at_the_end
            .iter()
            .find(|d| d.domain.as_deref() == Some("python"))
            .unwrap();
        assert_eq!(python.evidence["count"], 40);
        assert_eq!(python.subject, "python");
        // Forty notes fold: the message says what the code means and quotes the first.
        assert_eq!(
            python.message,
            "a lesson was superseded and left every prompt-facing file (40 times; the first, Lpython0000: lesson superseded: replaced (0))"
        );
        assert_eq!(python.evidence["subjects"].as_array().unwrap().len(), 40);
        assert_eq!(python.experience_ids().len(), 40);
        // In chunks, merged in order, as a parallel stage collects them.
        let mut notes = Notes::default();
        let mut sink = Sink::new();
        for chunk in all.chunks(7) {
            let mut part = Notes::default();
            for d in chunk {
                part.add(d.clone(), &mut sink);
            }
            notes = notes.merge(part);
        }
        assert_eq!(sink.len(), 1, "only the warning is not a note");
        sink.extend(notes.into_sink());
        assert_eq!(finalize(sink), at_the_end);
        assert_eq!(
            finalize(folding(rayon::iter::IntoParallelIterator::into_par_iter(all))),
            at_the_end
        );
    }

    #[test]
    fn notes_past_the_first_few_counted_unshown_fold_like_notes_made_in_full() {
        use rayon::iter::IntoParallelIterator;
        let all = bulk_notes();
        let at_the_end = finalize(folding(all.clone().into_par_iter()));
        // Per (code, domain), the notes after the first few in output order give only their
        // ids; the superseded notes' subjects sort like their number, so that order is known.
        let mut sorted = all.clone();
        sorted.sort_by(order);
        let mut seen: BTreeMap<(&str, Option<String>), usize> = BTreeMap::new();
        let (mut shown, mut unshown) = (Vec::new(), Notes::default());
        for d in sorted {
            let n = seen.entry((d.code, d.domain.clone())).or_insert(0);
            *n += 1;
            if d.severity == Severity::Note && *n > NOTES_KEPT_APART {
                let ids = d.experience_ids().into_iter().map(str::to_string);
                unshown.add_unshown(d.code, d.domain.as_deref(), &d.subject, ids);
            } else {
                shown.push(d);
            }
        }
        assert!(shown.len() < all.len() / 2, "most notes went unshown");
        assert_eq!(finalize(folding_with(shown.into_par_iter(), unshown)), at_the_end);
    }

    #[test]
    fn unshown_notes_find_their_group_by_a_borrowed_domain() {
        // Domains that sort differently as text than by length, a prefix of another, an empty
        // one and none: each unshown note must land in the group a note made in full opens.
        let domains = [
            None,
            Some(""),
            Some("go"),
            Some("golang"),
            Some("Go"),
            Some("élan"),
            Some("c"),
        ];
        let (mut made, mut counted) = (Notes::default(), Notes::default());
        let mut sink = Sink::new();
        for (i, domain) in domains.iter().chain(&domains).enumerate() {
            let subject = format!("L{i:04}");
            let mut d = Diagnostic::new(codes::SUPERSEDED, "lesson superseded").subject(&subject);
            d.domain = domain.map(str::to_string);
            made.add(d.clone(), &mut sink);
            counted.add(d.clone(), &mut sink);
            counted.add_unshown(codes::SUPERSEDED, *domain, &subject, std::iter::empty());
        }
        let keys = |notes: &Notes| -> Vec<(Option<String>, usize)> {
            (notes.0.values().flat_map(|g| g.iter()))
                .map(|(domain, g)| (domain.clone(), g.count))
                .collect()
        };
        let mut want: Vec<Option<String>> = domains.iter().map(|d| d.map(str::to_string)).collect();
        want.sort();
        let want_made: Vec<_> = want.iter().map(|d| (d.clone(), 2)).collect();
        let want_counted: Vec<_> = want.iter().map(|d| (d.clone(), 4)).collect();
        assert_eq!(keys(&made), want_made);
        assert_eq!(
            keys(&counted),
            want_counted,
            "each domain's one group, in `Option<String>` order"
        );
        // Found by the borrowed key itself, not only through `entry`'s owned one.
        let groups = &counted.0[codes::SUPERSEDED];
        for domain in domains {
            let found = groups.get(&domain as &dyn DomainKey).map(|g| g.count);
            assert_eq!(found, Some(4), "{domain:?}");
        }
        assert_eq!(groups.get(&Some("gol") as &dyn DomainKey).map(|g| g.count), None);
        assert!(sink.is_empty());
    }

    #[test]
    fn finalize_lists_the_same_whatever_order_the_stages_reported_in() {
        // Held-back clusters of one domain that differ only in their evidence, a duplicate,
        // and a warning made an error: `finalize` sorts in place (not stably), so its order
        // must tie nothing but identical diagnostics.
        let held = |ids: &[&str], text: &str| {
            Diagnostic::new(codes::OUTCOME_GATE, "cluster held back: 1 do candidate")
                .subject("C00a9ff9a87e9")
                .domain("airflow")
                .with("text", text)
                .experiences(ids)
        };
        let made = vec![
            held(
                &["g674eec-00441730"],
                "Reverted d10cb74, which changed parse_rows().",
            ),
            held(
                &["g674eec-00441730"],
                "Pinned apache-airflow-providers-google to 10.1.0.",
            ),
            held(&["g674eec-00000081", "g674eec-00441730"], "Reverted d10cb74."),
            held(&["g674eec-00441730"], "Reverted d10cb74.").severity(Severity::Error),
            held(&["g674eec-00441730"], "Reverted d10cb74."),
            held(&["g674eec-00441730"], "Reverted d10cb74."),
        ];
        let listed = finalize(made.clone());
        assert_eq!(listed.len(), 5, "the duplicate goes");
        for shift in 1..made.len() {
            let mut other = made.clone();
            other.rotate_left(shift);
            other.reverse();
            assert_eq!(finalize(other), listed, "rotated by {shift}, reversed");
        }
    }

    #[test]
    fn the_keyed_sort_orders_as_order_does() {
        // Subjects that share their first eight bytes or are prefixes of each other, files
        // and lines, domains and none, codes of several stages: the keys decide most pairs,
        // `order` the rest, and the result is `order`'s.
        let mut made = Vec::new();
        let files: [std::sync::Arc<str>; 2] = ["b.jsonl".into(), "a.jsonl".into()];
        for (i, code) in [
            codes::UNKNOWN_IN_PLAY,
            codes::OUTCOME_GATE,
            codes::MALFORMED_RECORD,
            codes::CONTRADICTED,
        ]
        .into_iter()
        .enumerate()
        {
            for subject in [
                "g674eec-00000017",
                "g674eec-0000001",
                "g674eec",
                "g674eec\0",
                "",
                "C00a9ff9a87e9",
            ] {
                for domain in [None, Some("go"), Some("airflow")] {
                    let mut d =
                        Diagnostic::new(code, format!("message {}", subject.len() % 3)).subject(subject);
                    if let Some(domain) = domain {
                        d = d.domain(domain);
                    }
                    if i % 2 == 0 {
                        d.location = Some(SourceLoc {
                            file: files[subject.len() % 2].clone(),
                            line: (subject.len() % 4) as u32,
                        });
                    }
                    made.push(d.clone().with("n", 1));
                    made.push(d);
                }
            }
        }
        made.reverse();
        let mut expected = made.clone();
        expected.sort_by(order);
        sort_in_order(&mut made);
        assert_eq!(made, expected);
    }

    /// Inactive memories (a code whose notes always fold) that say the same in words but not in
    /// evidence: the folded note must not tell one memory's state of all of them.
    #[test]
    fn a_fold_of_notes_that_differ_in_evidence_keeps_the_first_ones_apart() {
        let inactive = |id: &str, domain: &str, state: &str| {
            Diagnostic::new(
                codes::INACTIVE_MEMORY,
                "omnimem memory is not active and was not compiled",
            )
            .subject(id)
            .domain(domain)
            .with("state", state)
            .experiences([id])
        };
        let folded = finalize(vec![
            inactive("ep_0412", "python", "deleted"),
            inactive("ep_0413", "python", "archived"),
            inactive("ep_0415", "python", "deleted"),
            inactive("ep_0501", "go", "archived"),
            inactive("ep_0502", "go", "archived"),
        ]);
        let of = |domain: &str| folded.iter().find(|d| d.subject == domain).unwrap();
        let python = of("python");
        assert_eq!(
            python.message,
            "an OmniMem memory is not active and was not compiled (3 times; the first, ep_0412: omnimem memory is not active and was not compiled)"
        );
        assert_eq!(python.evidence["state"], Value::Null);
        assert_eq!(python.evidence["first"], serde_json::json!({"state": "deleted"}));
        assert_eq!(python.experience_ids(), ["ep_0412", "ep_0413", "ep_0415"]);
        // Notes that all say the same keep it as theirs.
        let go = of("go");
        assert_eq!(
            go.message,
            "omnimem memory is not active and was not compiled (2 times)"
        );
        assert_eq!(go.evidence["state"], "archived");
        assert_eq!(go.evidence["first"], Value::Null);
    }

    #[test]
    fn ids_sort_and_lose_their_repeats_as_texts_do() {
        let mut ids: Vec<String> = [
            "g674eec-00000017",
            "g674eec-00000017-retry",
            "g674eec-00000017-a",
            "g674eec-00000017",
            "g674eec-0000001",
            "g674eec-0000001\0",
            "",
            "b",
            "ab",
            "\u{e9}t\u{e9}-0000000000000001",
            "\u{e9}t\u{e9}-0000000000000000",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let mut expected = ids.clone();
        expected.sort_unstable();
        expected.dedup();
        sort_ids(&mut ids);
        assert_eq!(ids, expected);
    }
}
