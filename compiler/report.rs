//! Reports: the compile summary, `why`, `trace` and the `lessons` views. Each report is built
//! once as JSON (the `--format json` document) and rendered as text from the same values, so
//! the two never disagree.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde_json::{Value, json};

use crate::diagnostics::{Diagnostic, Severity, codes, counted, lookup, plural, short_list};
use crate::explain::edit_distance;
use crate::model::{Candidate, Event, Fate, Origin, Source, Status};
use crate::normalize;
use crate::pipeline::{Compilation, Stage};
use crate::policy::Rules;
use crate::score::{self, CLAIM_GAINED_EVIDENCE, Effect, Neutral, confidence_text, confidence_value};

/// The compile summary printed on stdout.
pub fn summary(comp: &Compilation, out: &Path, files: usize) -> Value {
    let count = |f: Fate| comp.fates.iter().filter(|x| x.fate == f).count();
    let domains: BTreeSet<&str> = comp.rules().map(|l| l.domain.as_str()).collect();
    json!({
        "stage": comp.stopped_after.map(|s| s.name()),
        "experiences": comp.experience_count,
        "claims": comp.corpus.claims.len(),
        "candidates": comp.candidates.len(),
        "clusters": comp.clusters.len(),
        "lessons": comp.lessons.iter().filter(|l| matches!(l.status, Status::Active | Status::Claimed)).count(),
        "rules": comp.rules().count(),
        "rule_domains": domains.len(),
        "fates": {
            "rule": count(Fate::Rule),
            "lesson": count(Fate::Lesson),
            "held-back": count(Fate::HeldBack),
            "refused": count(Fate::Refused),
        },
        "diagnostics": severity_counts(&comp.diagnostics),
        "out": out.display().to_string(),
        "files": files,
    })
}

/// How many lessons the summary names one by one before counting the rest.
const GONE_SHOWN: usize = 5;

/// The last compile's lessons that this compile's ledger no longer has (`rows`, their JSON
/// objects from the state store, by id), for the summary's `gone_lessons`. The record
/// directory only grows, so a lesson leaves the ledger for one of two reasons: its evidence
/// left the input (a file removed, records expired), or an older experience re-founded it
/// under a new id. Each entry says which: `now` is the lesson that carries it on (S004's new
/// id, else a lesson of the same domain, kind and key that holds most of its evidence), null
/// when no lesson of this compile does.
pub fn gone_lessons(
    rows: &[String],
    lessons: &[crate::model::Lesson],
    refounded: &BTreeMap<String, String>,
) -> Value {
    #[derive(serde::Deserialize)]
    struct Row {
        id: String,
        domain: String,
        kind: String,
        text: String,
        status: String,
        #[serde(default)]
        rule: bool,
        #[serde(default)]
        operation_key: Option<String>,
        #[serde(default)]
        evidence: Vec<String>,
    }
    if rows.is_empty() {
        return json!([]);
    }
    let mut by_slot: HashMap<(&str, &str, Option<&str>), Vec<&crate::model::Lesson>> = HashMap::new();
    for l in lessons {
        let slot = (l.domain.as_str(), l.kind.as_str(), l.operation_key.as_deref());
        by_slot.entry(slot).or_default().push(l);
    }
    let gone = rows.iter().filter_map(|r| serde_json::from_str::<Row>(r).ok());
    let gone = gone.map(|row| {
        let now = refounded.get(&row.id).cloned().or_else(|| {
            let slot = (
                row.domain.as_str(),
                row.kind.as_str(),
                row.operation_key.as_deref(),
            );
            let evidence: HashSet<&str> = row.evidence.iter().map(String::as_str).collect();
            (by_slot.get(&slot)?.iter())
                .map(|l| (l.evidence.iter().filter(|e| evidence.contains(&e[..])).count(), l))
                .filter(|(shared, _)| *shared > 0)
                .max_by(|(a, x), (b, y)| a.cmp(b).then(y.id.cmp(&x.id)))
                .map(|(_, l)| l.id.clone())
        });
        json!({
            "id": row.id,
            "domain": row.domain,
            "kind": row.kind,
            "status": row.status,
            "rule": row.rule,
            "text": row.text,
            "evidence": row.evidence,
            "now": now,
        })
    });
    Value::Array(gone.collect())
}

/// The summary's lines about `gone_lessons`: lessons lost with their evidence, and lessons
/// that go on under a new id.
fn gone_text(gone: &[Value]) -> String {
    let name = |g: &Value| {
        let what = if g["rule"].as_bool() == Some(true) {
            "rule".to_string()
        } else {
            g["status"].as_str().unwrap_or("").to_string()
        };
        format!(
            "{} ({} {}, {what})",
            g["id"].as_str().unwrap_or(""),
            g["domain"].as_str().unwrap_or(""),
            g["kind"].as_str().unwrap_or("")
        )
    };
    let list = |items: Vec<String>| crate::diagnostics::short_list(&items, GONE_SHOWN);
    let (moved, lost): (Vec<&Value>, Vec<&Value>) = gone.iter().partition(|g| g["now"].is_string());
    let mut t = String::new();
    if !lost.is_empty() {
        t.push_str(&format!(
            "lost {} of the last compile: no record in the input supports {} any more ({} evidence left the input, which should only grow: restore the records to keep {}): {}\n",
            counted(lost.len(), "lesson"),
            agree(lost.len(), "it", "them"),
            agree(lost.len(), "its", "their"),
            agree(lost.len(), "it", "them"),
            list(lost.iter().map(|g| name(g)).collect())
        ));
    }
    if !moved.is_empty() {
        t.push_str(&format!(
            "{} of the last compile {} on under a new id: {}\n",
            counted(moved.len(), "lesson"),
            agree(moved.len(), "goes", "go"),
            list(
                (moved.iter())
                    .map(|g| format!("{} → {}", name(g), g["now"].as_str().unwrap_or("")))
                    .collect()
            )
        ));
    }
    t
}

/// The summary's diagnostics by severity, and how many of the warnings are L004 repeats
/// (`load::is_repeat`: records read again, which lose nothing), so that a nightly job over
/// snapshot directories can tell them from the warnings that need a look.
pub fn severity_counts<'a>(diags: impl IntoIterator<Item = &'a Diagnostic>) -> Value {
    let mut n = [0usize; 3];
    let mut repeats = 0;
    for d in diags {
        n[match d.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Note => 2,
        }] += 1;
        repeats += usize::from(crate::load::is_repeat(d));
    }
    json!({"error": n[0], "warning": n[1], "note": n[2], "repeat_warnings": repeats})
}

/// `one` for a count of one, else `many`: the words that agree with a counted noun.
fn agree<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// `1 rule`, `2 rules`, `0 rules`: a count and its noun, in the singular only for one.
fn counted_json(n: &Value, noun: &str) -> String {
    crate::diagnostics::counted(n.as_u64().unwrap_or_default() as usize, noun)
}

pub fn summary_text(s: &Value) -> String {
    let f = &s["fates"];
    let d = &s["diagnostics"];
    let read = format!(
        "{} and {}",
        counted_json(&s["experiences"], "experience"),
        counted_json(&s["claims"], "claim")
    );
    // A compile stopped before a stage has no count of that stage's things: saying "0
    // candidates in 0 clusters" after `--stop-after load` would report an empty corpus.
    let stage = s["stage"].as_str().and_then(Stage::parse);
    let mut t = match stage {
        Some(before) if before < Stage::Candidates => format!("read {read}\n"),
        Some(Stage::Candidates) => {
            format!("read {read}: {}\n", counted_json(&s["candidates"], "candidate"))
        }
        _ => format!(
            "compiled {read}: {} in {}\n",
            counted_json(&s["candidates"], "candidate"),
            counted_json(&s["clusters"], "cluster")
        ),
    };
    if s["stage"] != "emit" {
        t.push_str(&format!("stopped after {}\n", s["stage"].as_str().unwrap_or("?")));
        return t;
    }
    t.push_str(&format!(
        "{} in {}, {} active or claimed; candidates: {} in rules, {} in lessons only, {} held back, {} refused\n",
        counted_json(&s["rules"], "rule"),
        counted_json(&s["rule_domains"], "domain"),
        counted_json(&s["lessons"], "lesson"),
        f["rule"],
        f["lesson"],
        f["held-back"],
        f["refused"]
    ));
    // A re-run on unchanged input rewrites nothing, and says so.
    let mut written = match (s["files"].as_u64(), s["changed_files"].as_u64()) {
        (Some(all), Some(changed)) if changed < all => {
            format!(
                "{all} files in {} ({changed} changed)",
                s["out"].as_str().unwrap_or("")
            )
        }
        _ => format!(
            "wrote {} files to {}",
            s["files"],
            s["out"].as_str().unwrap_or("")
        ),
    };
    // Files the last compile wrote and this one no longer does (a domain left with no rule):
    // a nightly job should see skills disappear.
    if let Some(removed) = s["removed_files"].as_u64().filter(|&n| n > 0) {
        written.push_str(&format!("; removed {removed} it no longer generates"));
    }
    let repeats = match d["repeat_warnings"].as_u64() {
        Some(r) if r > 0 => format!(" ({r} of them L004 about records read again, which lose nothing)"),
        _ => String::new(),
    };
    t.push_str(&format!(
        "{}, {}{repeats}, {}; {written}\n",
        counted_json(&d["error"], "error"),
        counted_json(&d["warning"], "warning"),
        counted_json(&d["note"], "note"),
    ));
    if let Some(gone) = s["gone_lessons"].as_array() {
        t.push_str(&gone_text(gone));
    }
    t
}

/// `skillc why DOMAIN`.
pub struct WhyReport {
    pub json: Value,
    pub diagnostics: Vec<Diagnostic>,
}

const FUNNEL: [&str; 9] = [
    "experiences",
    "candidates",
    "not-refused",
    "outcome",
    "not-narrative",
    "evidence",
    "not-retired",
    "lessons",
    "rules",
];

/// How many records the load refused `why` shows (the rest are counted).
const REFUSED_SHOWN: usize = 5;

/// Once-only candidates from one project before `why` suggests narrowing the domain: with
/// fewer, a narrower name would not group anything.
const NARROW_AT: usize = 5;

/// A record the load refused that named the domain `why` asks about.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RefusedRecord {
    /// Its id (or its file, when it had none).
    subject: String,
    /// `file:line`.
    at: String,
    /// Its codes, in diagnostic order, each once.
    codes: Vec<&'static str>,
    /// The first diagnostic's message.
    message: String,
    /// How many records it stands for: 1, or the records naming the domain of a folded L004
    /// (repeats of another file's records, `domain_records` evidence).
    records: usize,
}

impl RefusedRecord {
    fn is(&self, d: &Diagnostic) -> bool {
        refused_at(d).is_some_and(|(subject, at)| subject == self.subject && at == self.at)
    }
}

/// A load error's record: (subject, `file:line`), when it is about one.
pub(crate) fn refused_at(d: &Diagnostic) -> Option<(&str, String)> {
    let loc = d.location.as_ref()?;
    (d.code.starts_with('L') && d.severity == Severity::Error)
        .then(|| (d.subject.as_str(), format!("{}:{}", loc.file, loc.line)))
}

/// The records the load refused that named `domain` (their `domains` evidence, normalised and
/// aliased as `why` reads its argument), by id then place, so renaming files changes no
/// selection: `why` must not call a domain whose records were all refused empty, nor suggest a
/// spelling mistake.
/// Records that repeat ones already read (`load::is_repeat`: nightly snapshots of one store)
/// lose nothing: they are counted apart, as the second value.
fn refused_naming(comp: &Compilation, rules: &Rules, domain: &str) -> (Vec<RefusedRecord>, usize) {
    // Keyed by (id, place): one entry per record, in the order shown.
    let mut records: BTreeMap<(String, String), RefusedRecord> = BTreeMap::new();
    let mut repeated = 0;
    for d in &comp.diagnostics {
        // Repeats are warnings (they lose nothing), counted here all the same.
        let repeat = (d.location.as_ref())
            .filter(|_| crate::load::is_repeat(d))
            .map(|loc| (d.subject.as_str(), format!("{}:{}", loc.file, loc.line)));
        let Some((subject, at)) = refused_at(d).or(repeat) else {
            continue;
        };
        let names = |v: &Value| v.as_str().is_some_and(|raw| why_domain(raw, rules) == domain);
        let named = match d.evidence.get("domains") {
            Some(Value::Array(a)) => a.iter().any(names),
            _ => false,
        };
        if !named {
            continue;
        }
        // A folded L004 stands for the records of each domain it counts.
        let stands_for = match d.evidence.get("domain_records") {
            Some(Value::Object(counts)) => (counts.iter())
                .filter(|(raw, _)| why_domain(raw, rules) == domain)
                .map(|(_, n)| n.as_u64().unwrap_or(1) as usize)
                .sum::<usize>()
                .max(1),
            _ => 1,
        };
        if crate::load::is_repeat(d) {
            repeated += stands_for;
            continue;
        }
        let key = (subject.to_string(), at);
        let record = records
            .entry(key)
            .or_insert_with_key(|(subject, at)| RefusedRecord {
                subject: subject.clone(),
                at: at.clone(),
                codes: Vec::new(),
                message: d.message.clone(),
                records: stands_for,
            });
        if !record.codes.contains(&d.code) {
            record.codes.push(d.code);
        }
    }
    (records.into_values().collect(), repeated)
}

/// Refused records per code, by code.
fn refused_codes(records: &[RefusedRecord]) -> Vec<(&'static str, usize)> {
    let mut by: BTreeMap<&'static str, usize> = BTreeMap::new();
    for r in records {
        for c in &r.codes {
            *by.entry(c).or_default() += r.records;
        }
    }
    by.into_iter().collect()
}

/// The experiences that contradicted a lesson, in history order, each once.
fn contradicted_by(l: &crate::model::Lesson) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for h in l.history.iter().filter(|h| h.event == Event::Contradicted) {
        for e in h.experiences.iter() {
            if !ids.contains(&&**e) {
                ids.push(e);
            }
        }
    }
    ids
}

/// `d` without a version written into it (`python-3-12`, `node18`), aliased as a record's
/// domain is: `python-3` and `python3-11` give `python`.
fn unversioned(d: &str, rules: &Rules) -> String {
    let mut s = d;
    while let Some((head, tail)) = s.rsplit_once('-')
        && !head.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
    {
        s = head;
    }
    let t = s.trim_end_matches(|c: char| c.is_ascii_digit());
    let s = if t.is_empty() || t.ends_with('-') { s } else { t };
    why_domain(s, rules)
}

/// The advice for domains that differ from `domain` only by a version in the name: map the
/// versioned spelling to the plain one.
fn variant_advice(domain: &str, variants: &[(&str, usize, usize)], rules: &Rules, unnamed: bool) -> String {
    let named: Vec<String> = (variants.iter())
        .map(|(d, n, _)| format!("`{d}` ({})", counted(*n, "experience")))
        .collect();
    if unnamed {
        // No record names the asked spelling: nothing is split; the report the user wants is
        // the spelling the records use.
        let asks: Vec<String> = (variants.iter())
            .map(|(d, ..)| format!("`skillc why {d}`"))
            .collect();
        return format!(
            "no record names `{domain}`, but records name {}: ask {} for the domain as it compiles (a version in a domain name makes a domain of its own)",
            named.join(", "),
            asks.join(" or ")
        );
    }
    let maps: Vec<String> = (variants.iter())
        .map(|(d, ..)| {
            if unversioned(d, rules) == domain {
                format!("`{d}: {domain}`")
            } else {
                format!("`{domain}: {d}`")
            }
        })
        .collect();
    let (which, own) = if variants.len() == 1 {
        ("compiles as a domain", "its own")
    } else {
        ("compile as domains", "their own")
    };
    format!(
        "records also name {}, which {which} of {own} beside `{domain}`, so a lesson told under both spellings recurs in neither: if they are one skill, add {} under `domains:` in rules/aliases.yaml (or write one spelling in the records)",
        named.join(", "),
        maps.join(", ")
    )
}

/// The record field a candidate's text came from, as the user wrote it.
fn field_of(origin: Origin) -> &'static str {
    match origin {
        Origin::Lesson => "`lesson`",
        Origin::Breakthrough => "`breakthrough`",
        Origin::Content => "`content`",
        Origin::Gotcha => "`gotchas`",
        Origin::DeadEnd => "`dead_ends`",
        Origin::Mechanical => "operation `args`",
        Origin::Claim => "claim `text`",
    }
}

/// The retired lesson `l` re-forms (a new lesson from candidates recorded after the user
/// retired it, DESIGN §6), with the reason the user gave (`" (\"reason\")"`, or empty).
fn relearns_retired<'c>(comp: &'c Compilation, l: &crate::model::Lesson) -> Option<(&'c str, String)> {
    let old = crate::model::Lesson::find(&comp.lessons, l.supersedes.as_deref()?)?;
    if old.status != Status::Retired {
        return None;
    }
    let why = (old.last(Event::Retired))
        .and_then(|h| h.detail.as_deref())
        .filter(|d| !d.is_empty())
        .map_or(String::new(), |d| format!(" (\"{d}\")"));
    Some((&old.id, why))
}

/// A valid domain the records could use instead of `refused`, a domain the normaliser refused,
/// when one is plain (`ci/cd` → `ci-cd`): every other character run becomes one hyphen, and
/// nothing is cut from either end. Empty when there is none.
fn valid_spelling(refused: &str, rules: &Rules) -> String {
    let mut valid = String::new();
    for c in normalize::fold(refused).chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            valid.push(c);
        } else if !valid.ends_with('-') {
            valid.push('-');
        }
    }
    if valid.starts_with('-') || valid.ends_with('-') {
        String::new()
    } else {
        normalize::domain(&valid, &rules.aliases).unwrap_or_default()
    }
}

/// The domain `why` reports on when asked about `asked`: normalised and aliased as records'
/// domains are (`Python`, `py` → `python`), else as typed, lower-cased.
pub fn why_domain(asked: &str, rules: &Rules) -> String {
    normalize::domain(asked, &rules.aliases).unwrap_or_else(|_| asked.trim().to_lowercase())
}

/// What follows the id in the commands `why` suggests, as the user named them, each part
/// quoted for a shell (`cli::command_tail`).
#[derive(Default)]
pub struct CommandTail {
    /// The inputs (so `skillc bless` finds the records), then `store`.
    pub inputs_and_store: String,
    /// `--out` and `--state` (so `skillc lessons` finds the state store).
    pub store: String,
}

pub fn why(comp: &Compilation, rules: &Rules, asked: &str, tail: &CommandTail) -> WhyReport {
    let domain = why_domain(asked, rules);
    let min = comp.min_reinforcement;
    // A domain the normaliser refused (N001: `CI/CD`) stays as the record wrote it: read as
    // `why` reads its argument, so `why CI/CD` finds the records and candidates it refused.
    let refused_as = |raw: &str| why_domain(raw, rules) == domain;
    let exps: Vec<&crate::model::Experience> = comp
        .corpus
        .experiences
        .iter()
        .filter(|e| e.domains.contains(&domain) || e.refused_domains.iter().any(|d| refused_as(d)))
        .collect();
    let idx: Vec<usize> = (0..comp.candidates.len())
        .filter(|&i| {
            let c = &comp.candidates[i];
            let name = comp.names.get(c.domain);
            *name == *domain || c.refusal.is_some() && refused_as(name)
        })
        .collect();
    let cands = &comp.candidates;
    let fates = &comp.fates;
    let has = |i: usize, code: &str| fates.get(i).is_some_and(|f| f.codes.contains(&code));
    let (load_refused, repeated) = refused_naming(comp, rules, &domain);
    // OmniMem memories not compiled because they are not active (L009, one note per domain,
    // folded per domain): not refusals, but part of why a domain holds less than expected.
    let inactive: BTreeSet<&str> = (comp.diagnostics.iter())
        .filter(|d| d.code == codes::INACTIVE_MEMORY && d.domain.as_deref() == Some(domain.as_str()))
        .flat_map(|d| d.experience_id_iter())
        .collect();

    // Funnel: each gate removes what it refuses or holds, in DESIGN §5.4 order.
    let mut remaining: Vec<usize> = idx.clone();
    let mut funnel = vec![
        json!({"stage": FUNNEL[0], "remaining": exps.len()}),
        json!({"stage": FUNNEL[1], "remaining": remaining.len()}),
    ];
    use crate::model::Refusal;
    let removed_by = |stage: &str, i: usize| match stage {
        "not-refused" => matches!(
            cands[i].refusal.as_deref(),
            Some(Refusal::Credential { .. } | Refusal::InvalidDomain { .. })
        ),
        "outcome" => cands[i].outcome_failed(),
        "not-narrative" => cands[i].narrative(),
        "evidence" => {
            matches!(
                cands[i].refusal.as_deref(),
                Some(Refusal::FabricatedEvidence { .. } | Refusal::UnsupportedEvidence { .. })
            )
        }
        _ => has(i, codes::RETIRED_EVIDENCE),
    };
    for stage in &FUNNEL[2..7] {
        remaining.retain(|&i| !removed_by(stage, i));
        funnel.push(json!({"stage": stage, "remaining": remaining.len()}));
    }
    let lessons: Vec<&crate::model::Lesson> = comp
        .lessons
        .iter()
        .filter(|l| l.domain == domain && matches!(l.status, Status::Active | Status::Claimed))
        .collect();
    let rule_count = lessons.iter().filter(|l| l.rule).count();
    funnel.push(json!({"stage": "lessons", "remaining": lessons.len()}));
    funnel.push(json!({"stage": "rules", "remaining": rule_count}));

    // Reasons: every code on every candidate, counted.
    let mut reason_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in &idx {
        for c in fates[i].codes {
            *reason_counts.entry(c).or_default() += 1;
        }
    }
    // The most frequent first (ties by code): the dominant reason leads.
    let mut reason_counts: Vec<(&str, usize)> = reason_counts.into_iter().collect();
    reason_counts.sort_by_key(|r| std::cmp::Reverse(r.1));
    let reasons: Vec<Value> = reason_counts
        .iter()
        .map(|(c, n)| json!({"code": c, "name": lookup(c).map(|x| x.name).unwrap_or("?"), "count": n}))
        .collect();

    // Candidates whose cluster has a single supporting experience.
    let mut cluster_exps: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
    for &i in &idx {
        if let Some(ci) = comp.gate.cluster_of.get(i).copied().flatten() {
            cluster_exps.entry(ci).or_default().insert(&cands[i].record_id);
        }
    }
    let singletons = idx
        .iter()
        .filter(|&&i| {
            comp.gate
                .cluster_of
                .get(i)
                .copied()
                .flatten()
                .is_some_and(|ci| cluster_exps[&ci].len() == 1)
        })
        .count();

    // Pool concentration.
    // An experience that names no project is in none: it is no one-project pool.
    let mut per_project: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &exps {
        if let Some(p) = e.project.as_deref() {
            *per_project.entry(p).or_default() += 1;
        }
    }
    let without_project = exps.iter().filter(|e| e.project.is_none()).count();
    let top = per_project.values().copied().max().unwrap_or(0);
    let pool = json!({"experiences": exps.len(), "projects": per_project.len(), "without_project": without_project, "top_project_share": format!("{top}/{}", exps.len())});

    // Near misses: lesson-only lessons and held-back clusters closest to becoming rules.
    // (gap to a rule, newest day seen, id): the closest first; among equals the one last seen
    // (a lesson's last use, a cluster's newest member), which is the one a reader is most
    // likely still meeting; then by id.
    let mut near: Vec<(i64, std::cmp::Reverse<i64>, String, Value)> = Vec::new();
    // `bless` takes an experience: a lesson a claim founded is helped by its evidence instead.
    let claim_ids: BTreeSet<&str> = comp.corpus.claims.iter().map(|c| &*c.id).collect();
    let conf = &rules.policy.confidence;
    for l in lessons.iter().filter(|l| !l.rule && l.status == Status::Active) {
        let support = l.reinforcement as i64;
        let gap = i64::from(min) - support;
        let more = if gap == 1 {
            "one more experience confirming it".to_string()
        } else {
            format!("{gap} more experiences")
        };
        let against = contradicted_by(l);
        let retired = relearns_retired(comp, l);
        let action = if let Some((old, why)) = retired {
            // The user retired this very lesson; blessing or confirming it would undo that
            // decision unseen. Say which decision it re-learns and how to keep it retired.
            format!(
                "re-learned after you retired {old}{why}: if it should stay retired, `skillc lessons retire {}` (and stop the agents writing it); if it holds again, {more} makes it a rule",
                l.id
            )
        } else if !against.is_empty() {
            // Blessing or confirming a lesson its own evidence contradicted would make a rule
            // of it unseen: say so, and what settles it.
            let fall = if l.confidence - conf.contradiction < conf.supersede_below {
                "; one more contradiction supersedes it"
            } else {
                ""
            };
            format!(
                "contradicted by {} (confidence now {}{fall}): check whether it still holds before anything else; if it does, {more} makes it a rule; if not, `skillc lessons retire {}`",
                crate::diagnostics::short_list(&against, 3),
                confidence_text(l.confidence),
                l.id
            )
        } else if claim_ids.contains(&*l.founder) {
            format!(
                "{more}, or cite more supporting experiences in claim {}'s evidence",
                l.founder
            )
        } else {
            // Blessing makes a rule without evidence: only for a lesson the reader knows holds.
            format!("{more}, or bless {} if you know it holds", l.founder)
        };
        let seen = std::cmp::Reverse(l.last_used_day);
        near.push((gap, seen, l.id.clone(), json!({"lesson_or_cluster": l.id, "kind": l.kind.as_str(), "text": l.text, "line": crate::emit::block_text(l), "support": support, "needed": min, "confidence": confidence_value(l.confidence), "contradicted_by": against, "action": action})));
    }
    // Looked up per held-back candidate: a scan of every admitted cluster each time took ten
    // seconds for a large domain at a million records.
    let mut admitted = vec![false; comp.clusters.len()];
    for a in &comp.gate.admitted {
        admitted[a.cluster as usize] = true;
    }
    let mut held_clusters: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in &idx {
        if fates[i].fate == Fate::HeldBack
            && let Some(ci) = comp.gate.cluster_of.get(i).copied().flatten()
            && !admitted[ci as usize]
        {
            held_clusters.entry(ci).or_default().push(i);
        }
    }
    for (ci, members) in &held_clusters {
        let cl = &comp.clusters[*ci as usize];
        let support = cluster_exps.get(ci).map_or(0, |s| s.len()) as i64;
        // Named by content (the smallest id), never by load order: renaming files must not
        // change the advice.
        let first = (members.iter().map(|&i| &cands[i]))
            .min_by(|a, b| a.record_id.cmp(&b.record_id))
            .expect("a held-back cluster has members");
        let narrative: Vec<&Candidate> = (members.iter().map(|&i| &cands[i]))
            .filter(|c| c.narrative())
            .collect();
        let outcome = members.iter().any(|&i| cands[i].outcome_failed());
        let action = match (narrative.is_empty(), outcome) {
            (false, _) => restate(&narrative),
            (true, true) => format!(
                "bless {} if the lesson holds despite the outcome",
                first.record_id
            ),
            (true, false) => "one more experience".to_string(),
        };
        let gap = i64::from(min) - support + 1;
        let newest = members.iter().map(|&i| cands[i].recorded_at).max();
        let seen = std::cmp::Reverse(newest.map_or(0, crate::time::utc_day));
        let anchor = &cands[cl.anchor as usize];
        let line = crate::emit::worded(
            anchor.kind,
            &anchor.text,
            anchor.reasons().first().map(String::as_str),
        );
        near.push((gap, seen, cl.id.clone(), json!({"lesson_or_cluster": cl.id, "kind": anchor.kind.as_str(), "text": anchor.text, "line": line, "support": support, "needed": min, "confidence": null, "contradicted_by": [], "action": action})));
    }
    near.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
    let near_misses: Vec<Value> = near.into_iter().take(5).map(|(.., v)| v).collect();

    // Narrative candidates a `lesson` field would rescue (narrative is their only problem).
    // Each names the field its text came from and the narrative signals that fired.
    // Chosen by content, never by load order: the least narrative first (closest to reading
    // as a rule), then by experience id and text.
    let mut rescuable: Vec<usize> = (idx.iter().copied())
        .filter(|&i| cands[i].narrative() && !cands[i].outcome_failed() && cands[i].refusal.is_none())
        .collect();
    rescuable.sort_by(|&a, &b| {
        let key = |i: usize| (cands[i].narrative_score, &cands[i].record_id, &cands[i].text);
        key(a).cmp(&key(b))
    });
    // One entry per text: the same story told by several experiences is one rewrite, listed
    // once with every experience that told it (`experiences`, in the order above).
    let mut by_text: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for &i in &rescuable {
        let c = &cands[i];
        match seen.get(&*c.text) {
            Some(&k) => by_text[k].1.push(&c.record_id),
            None if by_text.len() < 10 => {
                seen.insert(&c.text, by_text.len());
                by_text.push((i, vec![&c.record_id]));
            }
            None => {}
        }
    }
    let rescuable: Vec<Value> = (by_text.iter())
        .map(|(i, told_by)| {
            let c = &cands[*i];
            // What made it read as a story; the rule signals beside them only lowered the score.
            let signals: Vec<&str> = rules.narrative.story_names(c.narrative_signals).collect();
            json!({"experience": c.record_id, "experiences": told_by, "origin": c.origin, "text": c.text, "score": c.narrative_score, "signals": signals})
        })
        .collect();
    let narrative_count = idx.iter().filter(|&&i| cands[i].narrative()).count();
    // Narrative candidates by the field their text came from: the advice differs. A refused
    // one would stay refused however it were worded, so it is not told to reword.
    let mut narrative_from: BTreeMap<Origin, usize> = BTreeMap::new();
    for &i in idx
        .iter()
        .filter(|&&i| cands[i].narrative() && cands[i].refusal.is_none())
    {
        *narrative_from.entry(cands[i].origin).or_default() += 1;
    }
    // Candidates refused because the domain itself is no valid name (N001): only renaming it
    // in the records helps.
    let invalid_domain = idx.iter().filter(|&&i| has(i, codes::INVALID_DOMAIN)).count();
    // Domains that are this one with a version written into the name (`Python 3` folds to
    // `python-3`, `node-18`): each compiles on its own, so a lesson told under both spellings
    // recurs in neither. One of the two must be the other without its version.
    let mut domain_exps: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &comp.corpus.experiences {
        for d in &e.domains {
            *domain_exps.entry(d).or_default() += 1;
        }
    }
    let plain = unversioned(&domain, rules);
    let variants: Vec<(&str, usize, usize)> = (domain_exps.iter())
        .filter(|(d, _)| **d != domain && (**d == plain || unversioned(d, rules) == domain))
        .map(|(d, n)| {
            let place = comp.names.find(d);
            (*d, *n, cands.iter().filter(|c| Some(c.domain) == place).count())
        })
        .collect();

    // Suggestions: what a person can do; lowering the policy's threshold is never one of them
    // (a `--min-reinforcement` that raised it for this run is named as the cause). Each
    // carries the number of candidates (or records) it would free, and they are listed the
    // largest first (ties in the order written here), so the dominant reason leads.
    let mut suggestions: Vec<(usize, String)> = Vec::new();
    let variant_weight: usize = variants.iter().map(|(_, _, c)| c).sum();
    // Singletons that only their single experience holds back: the others have a reason of
    // their own, with its own advice.
    let free_singletons = (idx.iter())
        .filter(|&&i| {
            fates[i].fate == Fate::Lesson
                && (comp.gate.cluster_of.get(i).copied().flatten())
                    .is_some_and(|ci| cluster_exps[&ci].len() == 1)
        })
        .count();
    if let Some(first) = load_refused.first() {
        let n: usize = load_refused.iter().map(|r| r.records).sum();
        suggestions.push((n, format!(
            "{} naming {domain} {} refused at load ({}; first at {}): fix {} and {} with the rest; `skillc compile` or `skillc trace ID` prints each error",
            counted(n, "record"),
            agree(n, "was", "were"),
            refused_codes(&load_refused)
                .iter()
                .map(|(c, n)| format!("{c} ×{n}"))
                .collect::<Vec<_>>()
                .join(", "),
            first.at,
            agree(n, "it", "them"),
            agree(n, "it compiles", "they compile")
        )));
    }
    if repeated > 0 {
        suggestions.push((0, format!(
            "{} naming {domain} {} records already read, with the same id and content (snapshots of one store, or a copied file): nothing {} is lost; read only the newest snapshot to quiet L004",
            counted(repeated, "record"),
            agree(repeated, "repeats", "repeat"),
            agree(repeated, "it says", "they say")
        )));
    }
    // A valid name refused as one of skillc's own folders: renaming it to itself is no advice.
    let reserved = (invalid_domain > 0)
        .then(|| normalize::domain(&domain, &rules.aliases).ok())
        .flatten()
        .and_then(|d| normalize::reserved(&d));
    if let Some(why) = reserved {
        suggestions.push((invalid_domain, format!(
            "{} {} refused because `{domain}` names a folder of skillc's own output (N001): {why} ({} other domains compiled as usual)",
            counted(invalid_domain, "candidate"),
            agree(invalid_domain, "was", "were"),
            agree(invalid_domain, "its", "their")
        )));
    } else if invalid_domain > 0 {
        let to = valid_spelling(&domain, rules);
        let how = if to.is_empty() {
            "rename it in the records, or map it to a valid name under `domains:` in rules/aliases.yaml"
                .to_string()
        } else {
            format!(
                "rename it to `{to}` in the records, or map it under `domains:` in rules/aliases.yaml (`\"{}\": {to}`) so records written either way compile together",
                domain.replace('\\', "\\\\").replace('"', "\\\"")
            )
        };
        suggestions.push((invalid_domain, format!(
            "{} {} refused because `{domain}` is not a valid domain name (N001: lower-case letters, digits and single hyphens, at most 64 characters): {how} ({} valid domains compiled as usual)",
            counted(invalid_domain, "candidate"),
            agree(invalid_domain, "was", "were"),
            agree(invalid_domain, "its", "their")
        )));
    }
    if !variants.is_empty() {
        suggestions.push((
            variant_weight,
            variant_advice(&domain, &variants, rules, exps.is_empty()),
        ));
    }
    // Credentials (N002): the text is refused whatever else it says; only removing the
    // secret from the field it was written in helps.
    let mut credential: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &i in &idx {
        if matches!(cands[i].refusal.as_deref(), Some(Refusal::Credential { .. })) {
            credential
                .entry(field_of(cands[i].origin))
                .or_default()
                .insert(&cands[i].record_id);
        }
    }
    for (field, ids) in &credential {
        let ids: Vec<&str> = ids.iter().copied().collect();
        suggestions.push((ids.len(), format!(
            "{} {} refused because {} {field} holds what looks like a credential (N002: {}): take the secret out of the {field} (name the variable or vault path instead) and rotate it if it is real; it reached no output",
            counted(ids.len(), "candidate"),
            agree(ids.len(), "was", "were"),
            agree(ids.len(), "its", "their"),
            short_list(&ids, 3)
        )));
    }
    // Claims whose evidence is refused (G005, G006): name each claim and what its evidence lacks.
    let mut fabricated: Vec<String> = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    for &i in &idx {
        match cands[i].refusal.as_deref() {
            Some(Refusal::FabricatedEvidence { ids }) => {
                fabricated.push(format!("{} cites {}", cands[i].record_id, short_list(ids, 3)));
            }
            Some(Refusal::UnsupportedEvidence { ids }) => {
                unsupported.push(format!("{} cites {}", cands[i].record_id, short_list(ids, 3)));
            }
            _ => {}
        }
    }
    if !fabricated.is_empty() {
        suggestions.push((fabricated.len(), format!(
            "{} {} experience ids no input holds (G005: {}): correct those ids in the claim's `evidence`, or add the records they name to the input; one unknown id refuses the whole claim",
            counted(fabricated.len(), "claim"),
            agree(fabricated.len(), "cites", "cite"),
            short_list(&fabricated, 3)
        )));
    }
    if !unsupported.is_empty() {
        suggestions.push((unsupported.len(), format!(
            "{} {} experiences that do not support {} (G006: {}): a `do` claim needs experiences in {domain} that passed (on its operation key, when it has one), a `watch` or `avoid` claim experiences in {domain}; cite those in `evidence` instead",
            counted(unsupported.len(), "claim"),
            agree(unsupported.len(), "cites", "cite"),
            agree(unsupported.len(), "it", "them"),
            short_list(&unsupported, 3)
        )));
    }
    // Claims with no evidence (G004) stay `claimed`: kept, never in a prompt-facing file.
    let unevidenced: BTreeSet<&str> = (idx.iter())
        .filter(|&&i| has(i, codes::NO_EVIDENCE))
        .map(|&i| &*cands[i].record_id)
        .collect();
    if !unevidenced.is_empty() {
        let ids: Vec<&str> = unevidenced.into_iter().collect();
        suggestions.push((ids.len(), format!(
            "{} {} no evidence (G004: {}): {} `claimed`, in no SKILL.md or lesson block, until an experience that passed clusters with {} or lists {} in `in_play`; add the ids of experiences that show the lesson to the claim's `evidence`",
            counted(ids.len(), "claim"),
            agree(ids.len(), "cites", "cite"),
            short_list(&ids, 3),
            agree(ids.len(), "it stays", "they stay"),
            agree(ids.len(), "it", "them"),
            agree(ids.len(), "it", "them")
        )));
    }
    // Candidates held behind a lesson the user retired (G007): by design never re-learned;
    // only the user's own decision, undone, brings the lesson back. By id, each with its
    // lesson and how many candidates it holds.
    let mut retired: BTreeMap<&str, (&crate::model::Lesson, usize)> = BTreeMap::new();
    for &i in idx.iter().filter(|&&i| has(i, codes::RETIRED_EVIDENCE)) {
        if let Some(li) = comp.lesson_of.get(i).copied().flatten() {
            let l = &comp.lessons[li as usize];
            retired.entry(l.id.as_str()).or_insert((l, 0)).1 += 1;
        }
    }
    if !retired.is_empty() {
        let held: usize = retired.values().map(|(_, n)| n).sum();
        // Each with the reason the user gave when retiring it.
        let named: Vec<String> = (retired.iter())
            .map(|(id, (l, _))| {
                let why = (l.last(Event::Retired))
                    .and_then(|h| h.detail.as_deref())
                    .filter(|d| !d.is_empty())
                    .map_or(String::new(), |d| format!(" (\"{d}\")"));
                format!("{id}{why}")
            })
            .collect();
        let first = retired.keys().next().copied().unwrap_or_default();
        suggestions.push((held, format!(
            "{} behind {} you retired ({}), and a retired lesson's evidence is never re-learned: if it holds again, `skillc lessons restore {first}{}`; experiences recorded after the retire teach it again under a new id",
            plural(held, "candidate sits", "candidates sit"),
            counted(retired.len(), "lesson"),
            short_list(&named, 3),
            tail.store
        )));
    }
    // Lessons the user retired that later records taught again (DESIGN §6: a new lesson).
    let relearned: Vec<(String, bool)> = (lessons.iter())
        .filter_map(|l| relearns_retired(comp, l).map(|(old, _)| (format!("{} after {old}", l.id), l.rule)))
        .collect();
    if !relearned.is_empty() {
        let again = relearned.iter().filter(|(_, rule)| *rule).count();
        let now = match again {
            0 => "it becomes a rule again once it has the support any lesson needs".to_string(),
            n if n == relearned.len() => "it is a rule again".to_string(),
            n => format!("{n} of them are rules again"),
        };
        let named: Vec<&str> = relearned.iter().map(|(s, _)| s.as_str()).collect();
        suggestions.push((relearned.len(), format!(
            "{} a lesson you retired ({}): later records taught it again under a new id, and {now}; retire the new id too if it should stay retired, and stop the agents that keep writing it",
            plural(relearned.len(), "lesson re-learns", "lessons re-learn"),
            short_list(&named, 3)
        )));
    }
    for (origin, n) in &narrative_from {
        suggestions.push((*n, match origin {
            Origin::Lesson => format!(
                "{} from `lesson` fields {} as incident stories: rewrite those lessons as the rule they teach (when X, do Y), not what happened",
                counted(*n, "candidate"),
                agree(*n, "reads", "read")
            ),
            Origin::Breakthrough => format!(
                "{} from `breakthrough` fields {} as incident stories: write a `lesson` field that states the rule (when X, do Y) instead of relying on `breakthrough`",
                counted(*n, "candidate"),
                agree(*n, "reads", "read")
            ),
            Origin::Claim => format!(
                "{} {} as incident stories: restate each claim as the rule it teaches (when X, do Y), not what happened",
                counted(*n, "claim"),
                agree(*n, "reads", "read")
            ),
            _ => format!(
                "{} {} as incident stories: write a `lesson` field that states the rule (when X, do Y)",
                counted(*n, "candidate"),
                agree(*n, "reads", "read")
            ),
        }));
    }
    // Experiences that did not pass, by why: each cause has its own fix.
    let mut not_passed: BTreeMap<u8, BTreeSet<&str>> = BTreeMap::new();
    for &i in idx.iter().filter(|&&i| cands[i].outcome_failed()) {
        let Source::Experience(ei) = cands[i].source else {
            continue;
        };
        let Some(v) = comp.verdicts.get(ei as usize) else {
            continue;
        };
        use crate::model::Outcome;
        let cause = match v.outcome {
            Outcome::Pivoted => 0,
            Outcome::Failed | Outcome::Abandoned => 1,
            _ if v.contradicted => 2,
            _ => 3,
        };
        not_passed.entry(cause).or_default().insert(&cands[i].record_id);
    }
    // The cause behind the most experiences first: fixing it helps most.
    let mut not_passed: Vec<(u8, BTreeSet<&str>)> = not_passed.into_iter().collect();
    not_passed.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    for (cause, ids) in &not_passed {
        let ids: Vec<&str> = ids.iter().copied().collect();
        let (n, list) = (ids.len(), short_list(&ids, 3));
        let exps = counted(n, "experience");
        suggestions.push((ids.len(), match cause {
            0 => format!(
                "{} reported `pivoted` ({list}), which passes only with allow_pivoted: true in policy.yaml; set it if a pivot that ended in a working result should teach, or bless the experience",
                exps
            ),
            1 => format!(
                "{} failed or {} abandoned ({list}): a `do` lesson needs an experience that passed; write what went wrong as `gotchas` or `dead_ends` instead, or bless the experience if its lesson holds anyway",
                exps,
                agree(n, "was", "were")
            ),
            2 => format!(
                "{} reported success but a check of {} own failed after the last change ({list}): the lesson is unproven; record the run where the check passes, or bless the experience if its lesson holds anyway",
                exps,
                agree(n, "its", "their")
            ),
            _ => format!(
                "{} reported success but every check ran before {} last edit ({list}), so the checks are stale: run the checks again after the last edit and record that run",
                exps,
                agree(n, "its", "their")
            ),
        }));
    }
    // Lessons that experiences in play failed took below the floor (S001), with the idle days
    // after the last contradiction or not: naming those experiences is what a reader can act
    // on, and asking for `in_play` would be wrong advice for a lesson that was in play.
    let mut contradicted: Vec<(&str, Vec<&str>)> = (comp.lessons.iter())
        .filter(|l| {
            l.domain == domain
                && l.status == Status::Superseded
                && matches!(l.reason.as_deref(), Some(score::DECAYED | score::CONTRADICTED))
        })
        .map(|l| (l.id.as_str(), contradicted_by(l)))
        .filter(|(_, by)| !by.is_empty())
        .collect();
    contradicted.sort();
    if !contradicted.is_empty() {
        let named: Vec<String> = (contradicted.iter())
            .map(|(id, by)| format!("{id} by {}", short_list(by, 3)))
            .collect();
        suggestions.push((contradicted.len(), format!(
            "{} below the floor after experiences that had {} in play failed ({}; S001): `skillc lessons history ID{}` shows each step; a superseded lesson never comes back, but if those experiences failed for another reason than the lesson, experiences that pass teach it again under a new id",
            plural(contradicted.len(), "lesson fell", "lessons fell"),
            agree(contradicted.len(), "it", "them"),
            named.join(", "),
            tail.store
        )));
    }
    // Lessons that decayed (S001): unused on days their domain was active.
    let decayed: Vec<&str> = (comp.lessons.iter())
        .filter(|l| {
            l.domain == domain
                && l.status == Status::Superseded
                && l.reason.as_deref() == Some(score::DECAYED)
                && contradicted_by(l).is_empty()
        })
        .map(|l| l.id.as_str())
        .collect();
    if !decayed.is_empty() {
        suggestions.push((decayed.len(), format!(
            "{} out of the ledger ({}; S001): each active day of {domain} on which no experience had {} in play cost {} confidence; list the lessons an agent was given in `in_play` so their use counts, or `skillc lessons pin ID` one that must stay",
            plural(decayed.len(), "lesson decayed", "lessons decayed"),
            short_list(&decayed, 3),
            agree(decayed.len(), "it", "them"),
            confidence_text(rules.policy.confidence.idle_day)
        )));
    }
    // A threshold raised above the policy's for this run (`--min-reinforcement`): lessons that
    // have the support the policy asks for are rules in a compile without the flag.
    let policy_min = rules.policy.min_reinforcement;
    if min > policy_min {
        let short: Vec<&crate::model::Lesson> = (lessons.iter().copied())
            .filter(|l| !l.rule && l.status == Status::Active && l.reinforcement >= policy_min)
            .collect();
        if !short.is_empty() {
            let ids: Vec<&str> = short.iter().map(|l| l.id.as_str()).collect();
            let held = (idx.iter())
                .filter(|&&i| {
                    (comp.lesson_of.get(i).copied().flatten())
                        .is_some_and(|li| ids.contains(&comp.lessons[li as usize].id.as_str()))
                })
                .count();
            let more = min
                - short
                    .iter()
                    .map(|l| l.reinforcement)
                    .min()
                    .unwrap_or(min)
                    .min(min);
            suggestions.push((held, format!(
                "{} the support for a rule under the policy (min_reinforcement {policy_min}) but not under the `--min-reinforcement {min}` given to this run ({}): a compile without the flag makes {}; with it, {} up to {} more {}{}",
                plural(short.len(), "lesson has", "lessons have"),
                short_list(&ids, 3),
                agree(short.len(), "it a rule", "them rules"),
                agree(short.len(), "it needs", "they need"),
                more,
                agree(more as usize, "experience", "experiences"),
                agree(short.len(), "", " each")
            )));
        }
    }
    if singletons > 0 && singletons == idx.len() && !idx.is_empty() {
        suggestions.push((free_singletons, format!(
            "{}: lessons become rules when they recur, so record the same lesson in the same words when it recurs",
            match singletons {
                1 => "the only candidate appears in only one experience".to_string(),
                n => format!("all {n} candidates appear in only one experience each"),
            }
        )));
    } else if singletons > 0 {
        suggestions.push((
            free_singletons,
            format!(
                "{}, so record the same lesson in the same words when it does",
                match singletons {
                    1 => "1 candidate appears in only one experience: it becomes a rule when it recurs"
                        .to_string(),
                    n => format!(
                        "{n} candidates appear in only one experience each: they become rules when they recur"
                    ),
                }
            ),
        ));
    }
    if per_project.len() == 1
        && without_project == 0
        && let Some(digest) = per_project.keys().next()
    {
        // Only where the domain's lessons are that project's (a claim with no project is global).
        if lessons
            .iter()
            .any(|l| l.scope.strip_prefix("project:") == Some(*digest))
        {
            // With no rule yet there is no file to look for: say where rules will go.
            let are = if rule_count == 0 { "will be" } else { "are" };
            suggestions.push((0, format!(
                "every experience comes from one project ({digest}): the domain's lessons are project-scoped, so its rules {are} in projects/{digest}/{domain}/SKILL.md, not {domain}/SKILL.md; a lesson becomes global once experiences from a second project support it"
            )));
        }
        // Narrowing helps only a domain whose lessons do not recur: a narrower name groups
        // one area's work.
        if singletons >= NARROW_AT && singletons * 2 >= idx.len() {
            suggestions.push((free_singletons, format!(
                "every experience comes from one project and {singletons} candidates appear only once: if the domain covers several areas of that project's work, narrow it to one (e.g. `{domain}-<area>`) so its lessons group"
            )));
        }
    }
    // Rules that a contradiction from a third project demoted (S006): `<domain>/SKILL.md` lost
    // them, and the report's rule count still holds them, so say where they are now.
    let demoted: Vec<String> = (lessons.iter())
        .filter(|l| l.rule)
        .filter_map(|l| {
            let digest = l.scope.strip_prefix("project:")?;
            let by: Vec<&str> = l.last(Event::Demoted)?.experiences.iter().map(|e| &**e).collect();
            Some(format!(
                "{} to projects/{digest}/{domain}/SKILL.md, contradicted by {}",
                l.id,
                short_list(&by, 3)
            ))
        })
        .collect();
    if !demoted.is_empty() {
        suggestions.push((0, format!(
            "{} back to the project that last confirmed {} when an experience from a third project contradicted {} ({}; S006): a confirmation from another project recorded after that makes {} global again",
            plural(demoted.len(), "global rule went", "global rules went"),
            agree(demoted.len(), "it", "them"),
            agree(demoted.len(), "it", "them"),
            demoted.join("; "),
            agree(demoted.len(), "it", "them")
        )));
    }
    let blessable: Vec<&str> = idx
        .iter()
        .filter(|&&i| {
            fates[i].fate == Fate::Lesson
                && !cands[i].narrative()
                && matches!(cands[i].source, Source::Experience(_))
                && !comp.lesson_of.get(i).copied().flatten().is_some_and(|li| {
                    // Blessing would make a rule of a lesson its evidence contradicted, or
                    // of one the user retired.
                    let l = &comp.lessons[li as usize];
                    !contradicted_by(l).is_empty() || relearns_retired(comp, l).is_some()
                })
        })
        // One experience per lesson: blessing one makes the lesson a rule.
        .fold(BTreeMap::<&str, &str>::new(), |mut by_lesson, &i| {
            let id = &*cands[i].record_id;
            let lesson = (comp.lesson_of.get(i).copied().flatten()).map(|li| &comp.lessons[li as usize]);
            // The lesson's founder, as its near miss names it, else the smallest id.
            let founder = lesson.map(|l| &*l.founder);
            let e = (by_lesson.entry(lesson.map_or(id, |l| l.id.as_str()))).or_insert(id);
            if Some(id) == founder || Some(*e) != founder && id < *e {
                *e = id;
            }
            by_lesson
        })
        .into_values()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(3)
        .collect();
    if !blessable.is_empty() {
        suggestions.push((
            0,
            format!(
                "bless experiences whose lessons already read as rules, once you know they hold: {}",
                blessable
                    .iter()
                    .map(|id| format!("`skillc bless {id}{}`", tail.inputs_and_store))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    suggestions.sort_by_key(|s| std::cmp::Reverse(s.0));
    let suggestions: Vec<String> = suggestions.into_iter().map(|(_, s)| s).collect();
    // Unknown or empty domain: did-you-mean and the known domains by size.
    let mut diagnostics = Vec::new();
    let mut did_you_mean = Value::Null;
    let mut known = Vec::new();
    if idx.is_empty() && load_refused.is_empty() && inactive.is_empty() {
        let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
        // Every candidate of a valid domain counts, refused or not, as `why` on that domain
        // counts them; a domain refused as a name is no domain to suggest.
        let valid = |c: &&Candidate| !matches!(c.refusal.as_deref(), Some(Refusal::InvalidDomain { .. }));
        for c in cands.iter().filter(valid) {
            *sizes.entry(comp.names.get(c.domain)).or_default() += 1;
        }
        let mut by_size: Vec<(&str, usize)> = sizes.into_iter().collect();
        by_size.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        known = by_size
            .iter()
            .take(10)
            .map(|(d, n)| json!({"domain": d, "candidates": n}))
            .collect();
        // The same domain without its version (`python3-11` → `python`) before any spelling
        // merely close to it.
        let best = (by_size.iter())
            .find(|(d, _)| *d != domain && *d == plain)
            .map(|(d, _)| (0, *d))
            .or_else(|| {
                (by_size.iter())
                    .map(|(d, _)| (edit_distance(&domain, d), *d))
                    .filter(|(dist, d)| *dist <= 2.max(domain.len() / 4) && *d != domain)
                    .min()
            })
            .map(|(_, d)| d.to_string())
            .or_else(|| {
                // A spelling the records use that was refused as a name (N001: `bash/zsh`) and
                // would be this domain made valid, or close to it as typed: `why` on it says
                // how to rename it.
                let refused: BTreeSet<String> = (cands.iter())
                    .filter(|c| matches!(c.refusal.as_deref(), Some(Refusal::InvalidDomain { .. })))
                    .map(|c| why_domain(comp.names.get(c.domain), rules))
                    .collect();
                (refused.into_iter())
                    .map(|r| {
                        let dist = if valid_spelling(&r, rules) == domain {
                            0
                        } else {
                            edit_distance(&domain, &r)
                        };
                        (dist, r)
                    })
                    .filter(|(dist, _)| *dist <= 2.max(domain.len() / 4))
                    .min()
                    .map(|(_, r)| r)
            });
        if let Some(d) = best {
            did_you_mean = json!(d);
            diagnostics.push(
                Diagnostic::new(
                    codes::DID_YOU_MEAN,
                    format!("domain `{domain}` has no candidates; did you mean `{d}`"),
                )
                .subject(&domain)
                .with("suggestion", d),
            );
        }
        if exps.is_empty() {
            diagnostics.push(
                Diagnostic::new(
                    codes::EMPTY_DOMAIN,
                    format!("domain `{domain}` has no experiences in the input"),
                )
                .subject(&domain)
                .with("known_domains", by_size.len()),
            );
        }
    }
    // The load's errors about the records shown (stderr), as `trace` prints them.
    let shown: HashSet<&RefusedRecord> = load_refused.iter().take(REFUSED_SHOWN).collect();
    diagnostics.extend(
        (comp.diagnostics.iter())
            .filter(|d| shown.iter().any(|r| r.is(d)))
            .cloned(),
    );
    for n in &near_misses {
        let id = n["lesson_or_cluster"].as_str().unwrap_or("");
        // A held-back cluster with support enough lacks no experience: its members' gates hold
        // it back, as the report's "(3 experiences, held back)" says.
        // A near miss with no confidence is a held-back cluster, not yet a lesson.
        let cluster = n["confidence"].is_null();
        let enough = cluster && n["support"].as_i64() >= n["needed"].as_i64();
        let what = if cluster { "cluster" } else { "lesson" };
        let message = if enough {
            format!(
                "{what} {id} has {}, enough for a rule, but is held back",
                plural(
                    n["support"].as_u64().unwrap_or(0) as usize,
                    "supporting experience",
                    "supporting experiences"
                )
            )
        } else {
            format!(
                "{what} {id} is {} of {} supporting experiences from a rule",
                n["support"], n["needed"]
            )
        };
        diagnostics.push(
            Diagnostic::new(codes::NEAR_MISS, message)
                .subject(id)
                .domain(&domain)
                .with("action", n["action"].clone()),
        );
    }

    // Every candidate's fate (DESIGN §1.5): these add up to `candidates`.
    // Counted over the candidates shown, so a refused domain's own spelling (`CI/CD`) counts.
    let mut fate_of = [0usize; 4];
    for &i in &idx {
        fate_of[fates[i].fate.slot()] += 1;
    }
    let [rule, lesson, held, refused] = fate_of;
    let json = json!({
        "domain": domain,
        "fates": {"rule": rule, "lesson": lesson, "held-back": held, "refused": refused},
        "rules": rule_count,
        "lessons": lessons.len(),
        "experiences": exps.len(),
        "candidates": idx.len(),
        "funnel": funnel,
        "reasons": reasons,
        "singletons": singletons,
        "narrative": narrative_count,
        "pool": pool,
        "near_misses": near_misses,
        "narrative_rescues": rescuable,
        "refused_at_load": {
            "records": load_refused.iter().map(|r| r.records).sum::<usize>(),
            "codes": refused_codes(&load_refused).iter().map(|(c, n)| json!({"code": c, "name": lookup(c).map(|x| x.name).unwrap_or("?"), "count": n})).collect::<Vec<_>>(),
            "first": load_refused.iter().take(REFUSED_SHOWN).map(|r| json!({"record": r.subject, "at": r.at, "codes": r.codes, "message": r.message, "records": r.records})).collect::<Vec<_>>(),
        },
        "repeated_at_load": repeated,
        "inactive_memories": inactive.iter().collect::<Vec<_>>(),
        "suggestions": suggestions,
        "variants": variants.iter().map(|(d, e, c)| json!({"domain": d, "experiences": e, "candidates": c})).collect::<Vec<_>>(),
        "did_you_mean": did_you_mean,
        "known_domains": known,
    });
    WhyReport { json, diagnostics }
}

pub fn why_text(r: &WhyReport) -> String {
    let j = &r.json;
    let mut t = format!(
        "domain {}: {}, {} from {} in {}\n",
        j["domain"].as_str().unwrap_or(""),
        counted_json(&j["rules"], "rule"),
        counted_json(&j["lessons"], "lesson"),
        counted_json(&j["candidates"], "candidate"),
        counted_json(&j["experiences"], "experience")
    );
    let f = &j["fates"];
    t.push_str(&format!(
        "  candidates: {} in rules, {} in lessons only, {} held back, {} refused\n",
        f["rule"], f["lesson"], f["held-back"], f["refused"]
    ));
    let refused = &j["refused_at_load"];
    if let Some(n) = refused["records"].as_u64().filter(|&n| n > 0) {
        let codes: Vec<String> = (refused["codes"].as_array().into_iter().flatten())
            .map(|c| {
                format!(
                    "{} {} ×{}",
                    c["code"].as_str().unwrap_or(""),
                    c["name"].as_str().unwrap_or(""),
                    c["count"]
                )
            })
            .collect();
        t.push_str(&format!(
            "  refused at load: {} naming {} ({})\n",
            counted_json(&refused["records"], "record"),
            j["domain"].as_str().unwrap_or(""),
            codes.join(", ")
        ));
        let first = refused["first"].as_array().cloned().unwrap_or_default();
        for r in &first {
            t.push_str(&format!(
                "    {} {}: {}: {}\n",
                r["at"].as_str().unwrap_or(""),
                r["record"].as_str().unwrap_or(""),
                join(&r["codes"]),
                r["message"].as_str().unwrap_or("")
            ));
        }
        let listed: u64 = first.iter().map(|r| r["records"].as_u64().unwrap_or(1)).sum();
        if n > listed {
            t.push_str(&format!("    … and {} more\n", n - listed));
        }
    }
    let inactive: Vec<&str> = (j["inactive_memories"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    if !inactive.is_empty() {
        t.push_str(&format!(
            "  not active: {} OmniMem memor{} naming {} ({}): only active memories compile (L009)\n",
            inactive.len(),
            if inactive.len() == 1 { "y" } else { "ies" },
            j["domain"].as_str().unwrap_or(""),
            short_list(&inactive, 5)
        ));
    }
    t.push('\n');
    t.push_str("funnel:\n");
    for f in j["funnel"].as_array().into_iter().flatten() {
        t.push_str(&format!(
            "  {:<14} {}\n",
            f["stage"].as_str().unwrap_or(""),
            f["remaining"]
        ));
    }
    let reasons = j["reasons"].as_array().cloned().unwrap_or_default();
    if !reasons.is_empty() {
        t.push_str("\nreasons:\n");
        for r in &reasons {
            t.push_str(&format!(
                "  {:>5}  {} {}\n",
                r["count"],
                r["code"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            ));
        }
    }
    if j["singletons"].as_u64().unwrap_or(0) > 0 {
        t.push_str(&format!(
            "  {:>5}  appear in only one experience\n",
            j["singletons"]
        ));
    }
    let p = &j["pool"];
    let unnamed = match p["without_project"].as_u64() {
        Some(n) if n > 0 => format!(" ({n} name no project)"),
        _ => String::new(),
    };
    t.push_str(&format!(
        "\npool: {} experiences from {}{unnamed}; busiest project holds {}\n",
        p["experiences"],
        counted_json(&p["projects"], "project"),
        p["top_project_share"].as_str().unwrap_or("")
    ));
    let near = j["near_misses"].as_array().cloned().unwrap_or_default();
    if !near.is_empty() {
        t.push_str("\nnear misses:\n");
        for n in &near {
            // A lesson shows its confidence, and its contradictions when it has any.
            let standing = match (n["confidence"].as_f64(), n["contradicted_by"].as_array()) {
                (Some(c), Some(a)) if !a.is_empty() => {
                    format!(", confidence {c:.3}, contradicted {}×", a.len())
                }
                (Some(c), _) => format!(", confidence {c:.3}"),
                _ => String::new(),
            };
            // A held-back cluster with enough experiences lacks no support: what holds it
            // back is its members' gates, and the action says which.
            let (support, needed) = (
                n["support"].as_i64().unwrap_or(0),
                n["needed"].as_i64().unwrap_or(0),
            );
            let count = match (n["confidence"].is_null(), support >= needed) {
                (true, true) => format!("{}, held back", counted(support as usize, "experience")),
                _ => format!("{support}/{needed}"),
            };
            t.push_str(&format!(
                "  {} ({count}{standing}): {}\n      → {}\n",
                n["lesson_or_cluster"].as_str().unwrap_or(""),
                // Worded as the plan-time block words it: a dead end's bare name would read
                // as an instruction to run what the agent abandoned.
                n["line"].as_str().or(n["text"].as_str()).unwrap_or(""),
                n["action"].as_str().unwrap_or("")
            ));
        }
    }
    let rescues = j["narrative_rescues"].as_array().cloned().unwrap_or_default();
    if !rescues.is_empty() {
        t.push_str("\nnarrative candidates that stating the rule would rescue:\n");
        for n in &rescues {
            let told_by = n["experiences"].as_array().map_or(1, Vec::len);
            let more = match told_by {
                0 | 1 => String::new(),
                k => format!(" (and {} more)", k - 1),
            };
            t.push_str(&format!(
                "  {}{more}: {}\n      {} · narrative score {}: {}\n",
                n["experience"].as_str().unwrap_or(""),
                n["text"].as_str().unwrap_or(""),
                n["origin"].as_str().unwrap_or(""),
                n["score"],
                join(&n["signals"])
            ));
        }
    }
    let sugg = j["suggestions"].as_array().cloned().unwrap_or_default();
    if !sugg.is_empty() {
        t.push_str("\nwhat to do:\n");
        for s in &sugg {
            t.push_str(&format!("  - {}\n", s.as_str().unwrap_or("")));
        }
    }
    if let Some(d) = j["did_you_mean"].as_str() {
        t.push_str(&format!("\ndid you mean `{d}`?\n"));
    }
    let known = j["known_domains"].as_array().cloned().unwrap_or_default();
    if !known.is_empty() {
        t.push_str("\nknown domains by size:\n");
        for k in &known {
            t.push_str(&format!(
                "  {:<24} {}\n",
                k["domain"].as_str().unwrap_or(""),
                counted_json(&k["candidates"], "candidate")
            ));
        }
    }
    t
}

/// `skillc trace ID`.
pub struct TraceReport {
    pub json: Value,
    /// Printed before the report: the load's errors about a record it refused.
    pub diagnostics: Vec<Diagnostic>,
}

/// One experience or claim through every stage; `None` when no record has the id. A record
/// the load refused has its id in the input all the same: its trace ends there, with the
/// reasons.
pub fn trace(comp: &Compilation, rules: &Rules, id: &str) -> Option<TraceReport> {
    let exp = comp.corpus.experiences.iter().position(|e| *e.id == *id);
    let claim = comp.corpus.claims.iter().position(|c| *c.id == *id);
    if exp.is_none() && claim.is_none() {
        return refused_at_load(comp, id);
    }
    let mut record = json!({"id": id});
    if let Some(c) = claim.filter(|_| exp.is_none()).map(|i| &comp.corpus.claims[i]) {
        record = json!({
            "id": c.id,
            "type": "claim",
            "file": c.loc.file,
            "line": c.loc.line,
            "recorded_at": crate::time::format_rfc3339(c.recorded_at),
            "domains": c.domains,
            "refused_domains": c.refused_domains,
            "project": c.project,
            "kind": c.kind,
            "source": c.source,
            "evidence": c.evidence,
            "operation_key": c.operation_key,
        });
    }
    if let Some(i) = exp {
        let e = &comp.corpus.experiences[i];
        let v = comp.verdicts.get(i).cloned().unwrap_or_default();
        record = json!({
            "id": e.id,
            "type": "experience",
            "file": e.source.file,
            "line": e.source.line,
            "recorded_at": crate::time::format_rfc3339(e.recorded_at),
            "domains": e.domains,
            "refused_domains": e.refused_domains,
            "project": e.project,
            "outcome": e.outcome().as_str(),
            "passed": v.passed,
            "verified": v.verified,
            "contradicted": v.contradicted,
            "stale_checks": v.stale,
            "blessed": e.blessed,
            "operations": e.operations.len(),
            "failed_operations": failed_operations(e, &rules.policy),
            "abandoned_fixes": abandoned_fixes(e, v.passed, &rules.policy),
        });
    }
    let candidates: Vec<Value> = comp
        .candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            *c.record_id == *id
                || matches!(c.source, Source::Experience(i) if Some(i as usize) == exp)
                || matches!(c.source, Source::Claim(i) if Some(i as usize) == claim)
        })
        .map(|(i, c)| {
            let cluster = comp
                .gate
                .cluster_of
                .get(i)
                .copied()
                .flatten()
                .map(|ci| comp.clusters[ci as usize].id.clone());
            let lesson = comp
                .lesson_of
                .get(i)
                .copied()
                .flatten()
                .map(|li| comp.lessons[li as usize].id.clone());
            let fate = comp.fates.get(i);
            // A narrative candidate names the signals that held it back.
            let narrative = c.narrative().then(|| {
                let signals: Vec<&str> = rules.narrative.names(c.narrative_signals).collect();
                json!({"score": c.narrative_score, "signals": signals})
            });
            json!({
                "kind": c.kind.as_str(),
                "origin": c.origin,
                "domain": comp.names.get(c.domain),
                "text": c.text,
                "operation_key": c.key(),
                "cluster": cluster,
                "lesson": lesson,
                "fate": fate.map(|f| f.fate.as_str()),
                "codes": fate.map(|f| f.codes).unwrap_or_default(),
                "narrative": narrative,
            })
        })
        .collect();
    let attribution = exp.map(|i| attribution(comp, rules, i)).unwrap_or_default();
    let lifecycle = lifecycle(comp, id);
    let diags: Vec<Value> = comp
        .diagnostics
        .iter()
        .filter(|d| d.subject == id || d.experience_id_iter().any(|e| e == id))
        .map(|d| {
            let mut v = json!({"code": d.code, "name": d.name(), "severity": d.severity.as_str(), "subject": d.subject, "domain": d.domain, "message": d.message});
            // A note folded with others of its (code, domain): how many, and what they are about.
            if let Some(count) = d.evidence.get("count") {
                v["folded"] = count.clone();
                v["subjects"] = d.evidence.get("subjects").cloned().unwrap_or_else(|| json!([]));
            }
            v
        })
        .collect();
    Some(TraceReport {
        json: json!({"experience": id, "record": record, "candidates": candidates, "attribution": attribution, "lifecycle": lifecycle, "diagnostics": diags}),
        diagnostics: Vec::new(),
    })
}

/// The calls of `e` that did not succeed, numbered from 1, and why each taught nothing when it
/// cannot teach a mechanical lesson (DESIGN §5.1): refused calls never ran, and transient
/// failures (the `policy.transient_errors` phrase named) say nothing about the arguments.
fn failed_operations(e: &crate::model::Experience, policy: &crate::policy::Policy) -> Vec<Value> {
    use crate::model::OpStatus;
    let command =
        |op: &crate::model::Operation| crate::opkey::command_of(&op.args.value()).map(|c| c.into_owned());
    // A check without a fix flag, then a success on its key with one (`ruff check .`, then
    // `ruff check --fix .`): the fix flag did the work its report asked for. Per call, the
    // fix flag of the next success on its key that has one, found walking back once: looking
    // forward from each failure made a long session's trace quadratic in its calls.
    let keys: Vec<String> = e.operations.iter().map(|op| op.key()).collect();
    let mut next_fix: HashMap<&str, String> = HashMap::new();
    let mut fix_later = vec![None; e.operations.len()];
    for (i, op) in e.operations.iter().enumerate().rev() {
        if op.status != OpStatus::Ok {
            fix_later[i] = next_fix.get(keys[i].as_str()).cloned();
        } else if let Some(flag) = command(op).and_then(|c| policy.fix_flag(&c).map(String::from)) {
            next_fix.insert(&keys[i], flag);
        }
    }
    (e.operations.iter().enumerate())
        .filter(|(_, op)| op.status != OpStatus::Ok)
        .map(|(i, op)| {
            let transient = op.error.as_deref().and_then(|err| policy.transient_cause(err));
            let own = command(op);
            let probe = own
                .as_deref()
                .and_then(|c| policy.probe_flag(c).map(String::from));
            let key = &keys[i];
            let fixed_by = (fix_later[i].clone())
                .filter(|_| own.as_deref().is_some_and(|c| policy.fix_flag(c).is_none()));
            json!({
                "number": i + 1,
                "key": key,
                "status": if op.status == OpStatus::Refused { "refused" } else { "error" },
                "transient": transient,
                "probe": probe,
                "fixed_by_flag": fixed_by,
            })
        })
        .collect()
}

/// The fixes `e`'s calls show that one of its own dead ends gives up, so no mechanical lesson
/// is learned from them (`Mechanical::given_up`): each fix's text and the dead end's name.
fn abandoned_fixes(e: &crate::model::Experience, passed: bool, policy: &crate::policy::Policy) -> Vec<Value> {
    if !passed || e.words.dead_ends.is_empty() {
        return Vec::new();
    }
    (crate::candidates::mechanical(&e.operations, policy, &e.words.dead_ends).into_iter())
        .filter_map(|m| Some(json!({"fix": m.text, "dead_end": m.given_up?})))
        .collect()
}

/// What experience `ei` did to each lesson it had in play (DESIGN §6 attribution), read from
/// the lessons' histories: confirmed, contradicted, admitted (a claim that gained evidence) or
/// neither, with the confidence before and after, or why it did nothing.
fn attribution(comp: &Compilation, rules: &Rules, ei: usize) -> Vec<Value> {
    let exp = &comp.corpus.experiences[ei];
    let verdict = comp.verdicts.get(ei).cloned().unwrap_or_default();
    let lesson = |id: &str| crate::model::Lesson::find(&comp.lessons, id);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for named in exp.in_play.iter().filter(|id| seen.insert(id.as_str())) {
        let mut row = json!({"lesson": named, "now": null, "effect": "neither", "reason": null,
            "confidence_before": null, "confidence_after": null, "text": null});
        // A lesson back-filled history re-founded: an `in_play` with its old id means the new one.
        let refounded = lesson(named)
            .is_none()
            .then(|| comp.refounded.get(named).cloned())
            .flatten();
        if let Some(new) = &refounded {
            row["now"] = json!(new);
        }
        let Some(mut l) = lesson(refounded.as_deref().unwrap_or(named)) else {
            row["reason"] = json!("unknown id: no lesson has it (S005)");
            out.push(row);
            continue;
        };
        // An edit made before this experience passed the lesson on to its new wording. One at
        // the experience's own instant came after it: the fold applies decisions after the
        // records of their time (DESIGN §6).
        let edited_before = |l: &crate::model::Lesson| {
            l.reason.as_deref() == Some(score::EDITED)
                && (l.history.iter()).any(|h| h.event == Event::Superseded && h.at < exp.recorded_at)
        };
        let mut edited = false;
        while edited_before(l)
            && let Some(next) = l.superseded_by.as_deref().and_then(lesson)
        {
            l = next;
            edited = true;
            row["now"] = json!(l.id);
        }
        row["text"] = json!(l.text);
        // A claim's admission on gaining evidence is its confirmation.
        let gained = |h: &crate::model::HistoryEntry| {
            h.event == Event::Admitted && h.detail.as_deref() == Some(CLAIM_GAINED_EVIDENCE)
        };
        let at = l.history.iter().position(|h| {
            (matches!(h.event, Event::Confirmed | Event::Contradicted) || gained(h))
                && h.experiences.contains(&exp.id)
        });
        match at {
            Some(k) => {
                let h = &l.history[k];
                row["effect"] = json!(if h.event == Event::Admitted {
                    "confirmed"
                } else {
                    h.event.as_str()
                });
                // Decay is charged lazily and leaves no entry unless it supersedes, so the
                // confidence before is the change undone; where the change was clamped, the
                // entry before is the best the history knows.
                let conf = &rules.policy.confidence;
                let undone = match h.event {
                    Event::Confirmed => Some(h.confidence - conf.confirmation),
                    Event::Contradicted => Some(h.confidence + conf.contradiction),
                    _ => None,
                };
                let prev = k.checked_sub(1).map(|p| l.history[p].confidence);
                let before = match undone {
                    Some(b) if (1..1000).contains(&h.confidence) => Some(b),
                    _ => prev,
                };
                if let Some(b) = before {
                    row["confidence_before"] = confidence_value(b);
                }
                row["confidence_after"] = confidence_value(h.confidence);
                if h.event == Event::Admitted {
                    row["reason"] = json!("the claim gained its first evidence and was admitted");
                }
            }
            None => row["reason"] = json!(no_effect(l, exp, &verdict, rules)),
        }
        if refounded.is_some() && row["reason"].is_null() {
            row["reason"] = json!(format!("re-founded by an older experience as {}", l.id));
        } else if edited && row["reason"].is_null() {
            row["reason"] = json!(format!("the user's edit passed it on to {}", l.id));
        }
        out.push(row);
    }
    out
}

/// What record `id` did to lessons beyond their confidence and its own candidates' place in
/// them (DESIGN §6 scope and supersede): the scope changes (`promoted`, `demoted`) and
/// supersessions its arrival set off, in ledger order, then time order. An event the record
/// caused names it; the unnamed events the fold wrote at the same instant right after one of
/// them (a promotion after a join, a supersession after a contradiction) follow from it, and
/// so does the supersession of a lesson by one that the record's arrival just changed.
fn lifecycle(comp: &Compilation, id: &str) -> Vec<Value> {
    use crate::model::{HistoryEntry, Lesson};
    // A user's edit supersedes at the time of the last compile's latest record, after the
    // records of that time (DESIGN §6): the record did not cause it.
    let shown = |l: &Lesson, e: Event| {
        matches!(e, Event::Promoted | Event::Demoted)
            || (e == Event::Superseded && l.reason.as_deref() != Some(score::EDITED))
    };
    // Per lesson, the instants at which the record changed it, and the events that followed.
    let mut touched: HashMap<&str, Vec<crate::model::Millis>> = HashMap::new();
    let mut caused: Vec<(&Lesson, &HistoryEntry)> = Vec::new();
    for l in &comp.lessons {
        let mut chain = None;
        for h in &l.history {
            let names = h.experiences.iter().any(|e| **e == *id);
            if names {
                chain = Some(h.at);
                touched.entry(l.id.as_str()).or_default().push(h.at);
            } else if chain != Some(h.at) || !h.experiences.is_empty() {
                chain = None;
            }
            if chain == Some(h.at) && shown(l, h.event) {
                caused.push((l, h));
            }
        }
    }
    // A lesson superseded by one the record changed at that very instant (a newer fix on the
    // same key, or the form that worked after the old one failed).
    for l in &comp.lessons {
        let Some(by) = l.superseded_by.as_deref() else {
            continue;
        };
        let Some(at) = touched.get(by) else { continue };
        let Some(h) = l.last(Event::Superseded) else {
            continue;
        };
        let already = caused.iter().any(|(c, e)| c.id == l.id && std::ptr::eq(*e, h));
        if !already && h.experiences.is_empty() && at.contains(&h.at) && shown(l, h.event) {
            caused.push((l, h));
        }
    }
    let order: HashMap<&str, usize> = (comp.lessons.iter().enumerate())
        .map(|(i, l)| (l.id.as_str(), i))
        .collect();
    caused.sort_by_key(|(l, h)| (order.get(l.id.as_str()).copied(), h.at));
    caused
        .into_iter()
        .map(|(l, h)| {
            json!({
                "lesson": l.id,
                "event": h.event.as_str(),
                "at": crate::time::format_rfc3339(h.at),
                "detail": h.detail.as_deref(),
                "confidence": confidence_value(h.confidence),
                "scope_now": l.scope,
                "status_now": l.status.as_str(),
                "text": l.text,
            })
        })
        .collect()
}

/// Why an experience that had `l` in play neither confirmed nor contradicted it (DESIGN §6).
fn no_effect(
    l: &crate::model::Lesson,
    exp: &crate::model::Experience,
    v: &crate::outcome::Verdict,
    rules: &Rules,
) -> String {
    use crate::model::Outcome;
    let t = exp.recorded_at;
    if l.admitted_at > t {
        return "recorded before the lesson was admitted".into();
    }
    let frozen = (l.history.iter())
        .find(|h| h.at <= t && matches!(h.event, Event::Superseded | Event::Retired))
        .map(|h| h.event.as_str());
    if let Some(event) = frozen {
        return format!("the lesson was already {event}, so it takes no more attribution");
    }
    let outcome = exp.outcome();
    let ended = if v.contradicted {
        "a success its own checks contradict".to_string()
    } else if outcome == Outcome::Succeeded && !v.passed {
        "a success its checks do not confirm".to_string()
    } else {
        format!("outcome {}", outcome.as_str())
    };
    let k = l.operation_key.as_deref().unwrap_or_default();
    match score::effect_in_full(l, exp, v, &rules.policy) {
        Effect::Neither(why) => match why {
            Neutral::ClaimNotSupported => {
                "a claim gains evidence only from an experience in its domain that passed".into()
            }
            Neutral::WorkingFormNotRun => format!("it did not run the lesson's working form on `{k}`"),
            Neutral::WorkingFormNotCounted => {
                format!("its runs of the working form on `{k}` were refused or failed transiently")
            }
            Neutral::KeyNotRun => format!("it ran no operation on `{k}`, the lesson's key"),
            Neutral::KeyCallsRefused => format!("its operations on `{k}` were all refused"),
            Neutral::NoRealFailure => {
                format!("no operation on `{k}` failed for real (only refused or transient failures)")
            }
            Neutral::OtherDomain => format!(
                "not in play in its domain: the lesson is in `{}`, the experience in {}",
                l.domain,
                exp.domains.join(", ")
            ),
            Neutral::Outcome => format!("{ended}: neither confirms nor contradicts"),
        },
        // The fold would have applied it; nothing above says why it did not.
        Effect::Confirms | Effect::Contradicts => format!("{ended}: neither confirms nor contradicts"),
    }
}

fn refused_at_load(comp: &Compilation, id: &str) -> Option<TraceReport> {
    let refused: Vec<Diagnostic> = (comp.diagnostics.iter())
        .filter(|d| d.code.starts_with('L') && d.severity == Severity::Error && d.subject == id)
        .cloned()
        .collect();
    if refused.is_empty() {
        return inactive_memory(comp, id);
    }
    let found: Vec<&str> = refused.iter().map(|d| d.code).collect();
    Some(TraceReport {
        json: json!({"experience": id, "refused_at": "load", "codes": found}),
        diagnostics: refused,
    })
}

/// An OmniMem memory the load passed over because it is not active (L009, archived, deleted
/// or superseded): in the input, so not an unknown id, but never an experience.
fn inactive_memory(comp: &Compilation, id: &str) -> Option<TraceReport> {
    let notes: Vec<Diagnostic> = (comp.diagnostics.iter())
        .filter(|d| {
            d.code == codes::INACTIVE_MEMORY && (d.subject == id || d.experience_id_iter().any(|e| e == id))
        })
        .cloned()
        .collect();
    if notes.is_empty() {
        return None;
    }
    Some(TraceReport {
        json: json!({"experience": id, "inactive_at": "load", "codes": [codes::INACTIVE_MEMORY]}),
        diagnostics: notes,
    })
}

pub fn trace_text(r: &TraceReport) -> String {
    let j = &r.json;
    if j["inactive_at"].is_string() {
        return format!(
            "{}: an omnimem memory that is not active (L009), so the load passed it over and it reaches no later stage\n",
            j["experience"].as_str().unwrap_or("")
        );
    }
    if let Some(stage) = j["refused_at"].as_str() {
        let found: Vec<&str> = (j["codes"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        return format!(
            "{}: refused at {stage} ({}), so it reaches no later stage\n",
            j["experience"].as_str().unwrap_or(""),
            found.join(", ")
        );
    }
    let rec = &j["record"];
    let id = j["experience"].as_str().unwrap_or("");
    // Where the record was read and what normalize made of it.
    let read = |rec: &Value| {
        format!(
            "  load:      {}:{} recorded {}\n  normalize: domains {} (refused {}), project {}\n",
            rec["file"].as_str().unwrap_or(""),
            rec["line"],
            rec["recorded_at"].as_str().unwrap_or(""),
            rec["domains"],
            rec["refused_domains"],
            rec["project"].as_str().unwrap_or("none"),
        )
    };
    if rec["type"] == "claim" {
        let mut t = format!(
            "claim {id}\n{}  claim:     {} from {}, evidence {}{}\n",
            read(rec),
            rec["kind"].as_str().unwrap_or(""),
            rec["source"].as_str().unwrap_or(""),
            rec["evidence"],
            rec["operation_key"]
                .as_str()
                .map(|k| format!(", operation key `{k}`"))
                .unwrap_or_default(),
        );
        t.push_str(&candidates_and_after(j));
        return t;
    }
    let mut t = format!("experience {id}\n");
    if rec.get("file").is_some() {
        t.push_str(&format!(
            "{}  outcome:   {} (passed {}, verified {}, contradicted {}, stale checks {}){}\n",
            read(rec),
            rec["outcome"].as_str().unwrap_or(""),
            rec["passed"],
            rec["verified"],
            rec["contradicted"],
            rec["stale_checks"],
            if rec["blessed"] == true { ", blessed" } else { "" }
        ));
    }
    for op in rec["failed_operations"].as_array().into_iter().flatten() {
        let why = match (op["status"].as_str(), op["transient"].as_str()) {
            (Some("refused"), _) => "refused: it never ran, so it teaches nothing".to_string(),
            (_, Some(phrase)) => {
                format!("failed transiently (\"{phrase}\"): a transient failure teaches nothing")
            }
            _ => match (op["probe"].as_str(), op["fixed_by_flag"].as_str()) {
                // Not "taught nothing": `mechanical` may still pair it with a later probe run.
                (Some(flag), _) => format!(
                    "failed in check mode (`{flag}`): a failing check reports work to do, so running the program without `{flag}` is not learned as a fix"
                ),
                (None, Some(flag)) => format!(
                    "failed, and a later call with `{flag}` applied what it found: a check's fix flag does the work its report asks for, so it is not learned as a fix"
                ),
                (None, None) => "failed".to_string(),
            },
        };
        t.push_str(&format!(
            "  call {}: `{}` {why}\n",
            op["number"],
            op["key"].as_str().unwrap_or("")
        ));
    }
    for f in rec["abandoned_fixes"].as_array().into_iter().flatten() {
        t.push_str(&format!(
            "  fix not learned: {} — its own dead end \"{}\" gives it up\n",
            f["fix"].as_str().unwrap_or(""),
            f["dead_end"].as_str().unwrap_or("")
        ));
    }
    t.push_str(&candidates_and_after(j));
    t
}

/// The candidates, the lessons in play and the diagnostics of a trace, as `trace_text` prints them.
fn candidates_and_after(j: &Value) -> String {
    let mut t = String::new();
    let cands = j["candidates"].as_array().cloned().unwrap_or_default();
    t.push_str(&format!(
        "\n{}:\n",
        crate::diagnostics::counted(cands.len(), "candidate")
    ));
    for c in &cands {
        let codes: Vec<String> = c["codes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str())
            .map(|code| format!("{code} {}", lookup(code).map(|i| i.name).unwrap_or("")))
            .collect();
        t.push_str(&format!(
            "  [{}] {} in {}: {}\n      cluster {} · lesson {} · fate {}{}\n",
            c["kind"].as_str().unwrap_or(""),
            c["origin"].as_str().unwrap_or(""),
            c["domain"].as_str().unwrap_or(""),
            c["text"].as_str().unwrap_or(""),
            c["cluster"].as_str().unwrap_or("none"),
            c["lesson"].as_str().unwrap_or("none"),
            c["fate"].as_str().unwrap_or("?"),
            if codes.is_empty() {
                String::new()
            } else {
                format!(" ({})", codes.join(", "))
            }
        ));
        if c["narrative"].is_object() {
            t.push_str(&format!(
                "      narrative: score {} from {}\n",
                c["narrative"]["score"],
                join(&c["narrative"]["signals"])
            ));
        }
    }
    let attribution = j["attribution"].as_array().cloned().unwrap_or_default();
    if !attribution.is_empty() {
        t.push_str(&format!(
            "\nin play: {}\n",
            crate::diagnostics::counted(attribution.len(), "lesson")
        ));
        for a in &attribution {
            let now = a["now"]
                .as_str()
                .map(|n| format!(" (now {n})"))
                .unwrap_or_default();
            let change = match (a["confidence_before"].as_f64(), a["confidence_after"].as_f64()) {
                (Some(b), Some(c)) => format!(": confidence {b:.3} → {c:.3}"),
                (None, Some(c)) => format!(": confidence {c:.3}"),
                _ => String::new(),
            };
            let reason = a["reason"]
                .as_str()
                .map(|r| format!(" — {r}"))
                .unwrap_or_default();
            t.push_str(&format!(
                "  {}{now} {}{change}{reason}\n",
                a["lesson"].as_str().unwrap_or(""),
                a["effect"].as_str().unwrap_or("")
            ));
            if let Some(text) = a["text"].as_str() {
                t.push_str(&format!("      {text}\n"));
            }
        }
    }
    let lifecycle = j["lifecycle"].as_array().cloned().unwrap_or_default();
    if !lifecycle.is_empty() {
        t.push_str("\nwhat it changed in lessons' lives:\n");
        for e in &lifecycle {
            let lesson = e["lesson"].as_str().unwrap_or("");
            let detail = e["detail"].as_str().unwrap_or("");
            let at = e["at"].as_str().unwrap_or("");
            let what = match e["event"].as_str().unwrap_or("") {
                "demoted" => format!(
                    "demoted {} on {at}: a global lesson contradicted from a third project goes back to the project that last confirmed it",
                    detail
                        .strip_prefix("to ")
                        .map_or(String::new(), |p| format!("to {p}"))
                ),
                "promoted" => format!("promoted to global on {at}: {detail}"),
                event if detail.is_empty() => format!("{event} on {at}"),
                event => format!("{event} on {at}: {detail}"),
            };
            // The state today, when later events moved it on.
            let now = match (e["status_now"].as_str(), e["scope_now"].as_str()) {
                (Some("active"), Some(scope)) => format!(" (now active, {scope})"),
                (Some(status), _) => format!(" (now {status})"),
                _ => String::new(),
            };
            t.push_str(&format!(
                "  {lesson} {what}{now}\n      {}\n",
                e["text"].as_str().unwrap_or("")
            ));
        }
    }
    // An experience that yields no candidate still counts when it confirmed or contradicted.
    let attributed = attribution.iter().any(|a| a["effect"] != "neither");
    let diags = j["diagnostics"].as_array().cloned().unwrap_or_default();
    // The lessons and clusters this record's candidates reached.
    let own: BTreeSet<&str> = (cands.iter())
        .flat_map(|c| [c["lesson"].as_str(), c["cluster"].as_str()])
        .flatten()
        .collect();
    let many_domains = j["record"]["domains"].as_array().is_some_and(|d| d.len() > 1);
    if !diags.is_empty() {
        t.push_str("\ndiagnostics naming it:\n");
        for d in &diags {
            let note = if attributed && d["code"] == codes::NO_CANDIDATES {
                " (its in-play attribution above still counts)"
            } else {
                ""
            };
            let domain = d["domain"].as_str().filter(|d| !d.is_empty());
            let folded = d["folded"].as_u64();
            // What it is about, unless the experience itself: two lessons it supports get
            // notes that differ only there. A note folded with others of its domain is about
            // them all: of its subjects, the ones this record's candidates reached.
            let mut about: Vec<&str> = match (folded, d["subject"].as_str()) {
                (Some(_), _) => (d["subjects"].as_array().into_iter().flatten())
                    .filter_map(Value::as_str)
                    .filter(|s| own.contains(s))
                    .collect(),
                (None, Some(s)) if !s.is_empty() && s != j["experience"] && Some(s) != domain => vec![s],
                _ => Vec::new(),
            };
            // A record of several domains gets one note per domain: they differ only there.
            let place;
            if let Some(domain) = domain.filter(|_| many_domains || folded.is_some()) {
                place = format!("in {domain}");
                about.push(&place);
            }
            let about = if about.is_empty() {
                String::new()
            } else {
                format!(" ({})", about.join(", "))
            };
            let message = d["message"].as_str().unwrap_or("");
            let message = match folded {
                // The folded note's message quotes its first note, which may be another's:
                // say what the code means, and how many notes it stands for.
                Some(count) => {
                    let plain = crate::diagnostics::shared_words(message, count as usize)
                        .or_else(|| d["code"].as_str().and_then(lookup).map(|i| i.summary))
                        .unwrap_or(message);
                    format!(
                        "{plain} (one note for {count} in {})",
                        domain.unwrap_or("its domain")
                    )
                }
                None => message.to_string(),
            };
            t.push_str(&format!(
                "  {}[{}] {}{about}: {message}{note}\n",
                d["severity"].as_str().unwrap_or(""),
                d["code"].as_str().unwrap_or(""),
                d["name"].as_str().unwrap_or(""),
            ));
        }
    }
    t
}

/// What `lessons list` filters on and shows, read from a ledger row without the rest of it: at
/// a million records the ledger is half a gigabyte, and parsing every row into a `Value` took
/// 20 s and 6.6 GB.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct LedgerRow<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow)]
    pub status: Cow<'a, str>,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    pub confidence: Value,
    #[serde(borrow)]
    pub scope: Cow<'a, str>,
    #[serde(borrow)]
    pub domain: Cow<'a, str>,
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    pub rule: bool,
}

/// A ledger row's supersede links, which `lessons history` follows: read from every row, so
/// only these fields.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default)]
pub struct LedgerLink {
    pub id: String,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
}

impl LedgerRow<'_> {
    /// The row with its own copies of the texts, to be listed after the scan.
    pub fn into_owned(self) -> LedgerRow<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        LedgerRow {
            id: own(self.id),
            status: own(self.status),
            kind: own(self.kind),
            confidence: self.confidence,
            scope: own(self.scope),
            domain: own(self.domain),
            text: own(self.text),
            rule: self.rule,
        }
    }
}

/// `lessons list`'s lines: one per lesson, its scope and domain columns as wide as the widest
/// listed (a domain may have up to 64 characters), so the texts start in one column.
pub fn lessons_list_text(rows: &[LedgerRow]) -> String {
    let width = |col: fn(&LedgerRow) -> usize| rows.iter().map(col).max().unwrap_or(0);
    let scope_w = width(|l| l.scope.chars().count());
    let domain_w = width(|l| l.domain.chars().count());
    let mut t = String::new();
    for l in rows {
        t.push_str(&format!(
            "{}  {:<10} {:<6} {:<5} {:<scope_w$} {:<domain_w$} {}{}\n",
            l.id,
            l.status,
            l.kind,
            three(&l.confidence),
            l.scope,
            l.domain,
            l.text,
            if l.rule { "  [rule]" } else { "" }
        ));
    }
    t
}

/// `lessons list`'s text when nothing matched.
pub const NO_LESSONS_MATCH: &str = "no lessons match\n";

/// `before` is the status of the lesson it supersedes, when there is one: a lesson re-learned
/// after the user retired its predecessor says so beside `supersedes`.
pub fn lesson_show_text(l: &Value, before: Option<&str>) -> String {
    let mut t = format!(
        "{} — {}\n",
        l["id"].as_str().unwrap_or(""),
        l["text"].as_str().unwrap_or("")
    );
    for key in [
        "kind",
        "domain",
        "scope",
        "operation_key",
        "status",
        "reason",
        "confidence",
        "reinforcement",
        "rule",
        "pinned",
        "blessed",
        "superseded_by",
        "supersedes",
        "founder",
        "admitted_at",
        "last_used",
    ] {
        let v = &l[key];
        if !v.is_null() {
            let shown = match (key, v.as_str()) {
                ("confidence", _) => three(v),
                ("supersedes", Some(s)) if before == Some("retired") => {
                    format!("{s} (retired by you; this lesson was learned again from later records)")
                }
                (_, Some(s)) => s.to_string(),
                _ => v.to_string(),
            };
            t.push_str(&format!("  {key}: {shown}\n"));
        }
    }
    t.push_str(&format!("  evidence: {}\n", join(&l["evidence"])));
    t.push_str(&format!("  projects: {}\n", join(&l["projects"])));
    t
}

/// The advice for a cluster held back as narrative: every narrative member needs restating
/// (one rewritten leaves the others held back), by the field its text came from.
fn restate(narrative: &[&Candidate]) -> String {
    let mut by_origin: BTreeMap<Origin, Vec<&str>> = BTreeMap::new();
    for c in narrative {
        let ids = by_origin.entry(c.origin).or_default();
        if !ids.contains(&&*c.record_id) {
            ids.push(&c.record_id);
        }
    }
    let phrase = |origin: Origin, ids: &[&str]| {
        let (list, many) = (crate::diagnostics::short_list(ids, 3), ids.len() > 1);
        match origin {
            Origin::Lesson if many => format!("rewrite the lessons of {list} as the rule they teach"),
            Origin::Lesson => format!("rewrite the lesson of {list} as the rule it teaches"),
            Origin::Claim if many => format!("restate claims {list} as the rule they teach"),
            Origin::Claim => format!("restate claim {list} as the rule it teaches"),
            _ => format!("write a lesson that states the rule for {list}"),
        }
    };
    let parts: Vec<String> = by_origin.iter().map(|(&o, ids)| phrase(o, ids)).collect();
    parts.join("; ")
}

fn join(v: &Value) -> String {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

/// The supersede chain through `id`, oldest first, as indices into `links` (sorted by id):
/// follows `supersedes` back and `superseded_by` forward. A link only one side records counts
/// too; where several lessons name the same one, the first by id is followed.
pub fn history_chain(links: &[LedgerLink], id: &str) -> Vec<usize> {
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(links.len());
    // Who names a lesson from the other side: `superseded_by` (its predecessor) and
    // `supersedes` (its successor).
    let (mut named_by_predecessor, mut named_by_successor) = (HashMap::new(), HashMap::new());
    for (i, l) in links.iter().enumerate() {
        by_id.insert(&*l.id, i);
        if let Some(next) = &l.superseded_by {
            named_by_predecessor.entry(&**next).or_insert(i);
        }
        if let Some(prev) = &l.supersedes {
            named_by_successor.entry(&**prev).or_insert(i);
        }
    }
    let Some(&start) = by_id.get(id) else {
        return Vec::new();
    };
    let link = |to: &Option<String>| to.as_deref().and_then(|t| by_id.get(t).copied());
    let back = |l: &LedgerLink| link(&l.supersedes).or_else(|| named_by_predecessor.get(&*l.id).copied());
    let forward = |l: &LedgerLink| link(&l.superseded_by).or_else(|| named_by_successor.get(&*l.id).copied());
    // Back to the oldest, then forward to the newest; each lesson once, whatever the links say.
    let oldest = *follow(links, start, back).last().unwrap_or(&start);
    follow(links, oldest, forward)
}

/// `from` and the lessons `step` leads to from it, until a link leads nowhere or back.
fn follow(links: &[LedgerLink], from: usize, step: impl Fn(&LedgerLink) -> Option<usize>) -> Vec<usize> {
    let mut path = vec![from];
    let mut seen = HashSet::from([from]);
    while let Some(next) = path
        .last()
        .and_then(|&at| step(&links[at]))
        .filter(|&n| seen.insert(n))
    {
        path.push(next);
    }
    path
}

pub fn history_text(chain: &[Value]) -> String {
    let mut t = String::new();
    for l in chain {
        t.push_str(&format!(
            "{} [{}] {} (confidence {}, scope {})\n",
            l["id"].as_str().unwrap_or(""),
            l["status"].as_str().unwrap_or(""),
            l["text"].as_str().unwrap_or(""),
            three(&l["confidence"]),
            l["scope"].as_str().unwrap_or("")
        ));
        for h in l["history"].as_array().into_iter().flatten() {
            let exps = join(&h["experiences"]);
            t.push_str(&format!(
                "  {} {:<12} confidence {}{}{}\n",
                h["at"].as_str().unwrap_or(""),
                h["event"].as_str().unwrap_or(""),
                three(&h["confidence"]),
                if exps.is_empty() {
                    String::new()
                } else {
                    format!(" [{exps}]")
                },
                h["detail"]
                    .as_str()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default()
            ));
            // Decay between this event and the next (or the end) is not an event of its own.
            if let Some(days) = h["idle_days"].as_u64().filter(|&d| d > 0) {
                t.push_str(&format!(
                    "  {:<20} {:<12} confidence {} — {}\n",
                    "",
                    "then idle",
                    three(&h["idle_confidence"]),
                    crate::emit::idle_days_text(u16::try_from(days).unwrap_or(u16::MAX))
                ));
            }
        }
        // The supersede event names its successor in its detail already; the line is for a
        // lesson whose event does not (one superseded before the successor existed).
        let named = |next: &str| {
            (l["history"].as_array().into_iter().flatten())
                .filter_map(|h| h["detail"].as_str())
                .any(|d| d.ends_with(&format!("superseded by {next}")))
        };
        if let Some(next) = l["superseded_by"].as_str().filter(|next| !named(next)) {
            t.push_str(&format!("  superseded by {next}\n"));
        }
    }
    t
}

/// A JSON confidence printed with three decimals, as everywhere else (`0.650`).
fn three(v: &Value) -> String {
    v.as_f64()
        .map(|c| format!("{c:.3}"))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(id: &str, back: Option<&str>, next: Option<&str>) -> LedgerLink {
        LedgerLink {
            id: id.into(),
            supersedes: back.map(String::from),
            superseded_by: next.map(String::from),
        }
    }

    #[test]
    fn a_history_follows_links_either_side_records_from_any_lesson_of_the_chain() {
        // A ← B ← C ← D, where B → C is recorded only by B (`superseded_by`) and C → D only
        // by D (`supersedes`): a newer lesson that took over a key may already supersede
        // another. E stands alone; F names a lesson the ledger no longer holds.
        let links = [
            link("LA", None, Some("LB")),
            link("LB", Some("LA"), Some("LC")),
            link("LC", None, None),
            link("LD", Some("LC"), None),
            link("LE", None, None),
            link("LF", Some("Lgone"), None),
        ];
        for asked in ["LA", "LB", "LC", "LD"] {
            assert_eq!(history_chain(&links, asked), [0, 1, 2, 3], "asked {asked}");
        }
        assert_eq!(history_chain(&links, "LE"), [4]);
        assert_eq!(history_chain(&links, "LF"), [5]);
        assert_eq!(history_chain(&links, "Lmissing"), Vec::<usize>::new());
    }

    #[test]
    fn a_history_whose_links_loop_lists_each_lesson_once() {
        let links = [
            link("LA", Some("LB"), Some("LB")),
            link("LB", Some("LA"), Some("LA")),
        ];
        assert_eq!(history_chain(&links, "LA"), [1, 0]);
        assert_eq!(history_chain(&links, "LB"), [0, 1]);
    }
}
