//! `skillc diff`: what a compile would change, risk-classified (DESIGN §9).
//!
//! The would-be lessons come from `pipeline::compile` run exactly as `compile` runs it, so
//! the two never disagree; the last compile's lessons are the state store's ledger rows, the
//! same rows `compile` compares its ledger with (and finds `gone_lessons` among). Nothing is
//! written: the store is opened read-only, and no file is rendered to disk.
//!
//! Risk says what a change does to the files an agent loads (rules, SKILL.md):
//! * high — a rule an agent relies on stops being one: superseded, retired, below
//!   reinforcement again, gone from the input, or demoted from global to one project; or a
//!   new rule tells agents to switch a safeguard off (S010, `bypass`);
//! * medium — a rule appears, is promoted to global, or reads differently (an edit, or a
//!   re-founding under a new id);
//! * low — the rest: a rule's confidence, reinforcement or pin, lessons that are no rules.
//!
//! A lesson's kind is part of its id (DESIGN §6), so a kind never changes under one id: a
//! lesson taught as another kind is a rule gone (high) and a new one.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use crate::diagnostics::plural;
use crate::model::{Lesson, Status};
use crate::score::{self, confidence_text};

/// Ordered high first: a risk "at or above" another is `<=` it. `--fail-on` takes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Risk {
    /// A rule would stop being one (superseded, retired, lost, gone, demoted from global), or a new rule switches a safeguard off
    High,
    /// A new rule, a rule promoted to global, edited or re-founded
    Medium,
    /// The rest: a rule's confidence, reinforcement or pin; lessons that are no rules
    Low,
}

impl Risk {
    pub const ALL: [Risk; 3] = [Risk::High, Risk::Medium, Risk::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Risk::High => "high",
            Risk::Medium => "medium",
            Risk::Low => "low",
        }
    }
}

/// A lesson of the last compile's ledger: the fields a diff compares (the row has more).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Previous {
    pub id: String,
    pub kind: String,
    pub text: String,
    pub domain: String,
    pub scope: String,
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    /// Three decimals in the ledger; compared as thousandths, as the fold keeps them.
    pub confidence: f64,
    pub reinforcement: u32,
    pub rule: bool,
    #[serde(default)]
    pub pinned: bool,
    #[serde(default)]
    pub superseded_by: Option<String>,
}

/// What a lesson looks like on one side of the diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    pub status: String,
    pub rule: bool,
    pub scope: String,
    pub confidence: i32,
    pub reinforcement: u32,
    pub pinned: bool,
    pub superseded_by: Option<String>,
}

impl Side {
    fn of_previous(p: &Previous) -> Side {
        Side {
            status: p.status.clone(),
            rule: p.rule,
            scope: p.scope.clone(),
            confidence: (p.confidence * 1000.0).round() as i32,
            reinforcement: p.reinforcement,
            pinned: p.pinned,
            superseded_by: p.superseded_by.clone(),
        }
    }

    fn of_lesson(l: &Lesson) -> Side {
        Side {
            status: l.status.as_str().to_string(),
            rule: l.rule,
            scope: l.scope.clone(),
            confidence: l.confidence,
            reinforcement: l.reinforcement,
            pinned: l.pinned,
            superseded_by: l.superseded_by.clone(),
        }
    }

    fn json(&self) -> Value {
        json!({
            "status": self.status,
            "rule": self.rule,
            "scope": self.scope,
            "confidence": score::confidence_value(self.confidence),
            "reinforcement": self.reinforcement,
            "pinned": self.pinned,
            "superseded_by": self.superseded_by,
        })
    }
}

/// One lesson a compile would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub risk: Risk,
    /// What happens, kebab-case: `rule-gone`, `rule-superseded`, `rule-retired`,
    /// `rule-lost`, `rule-demoted`, `new-rule`, `rule-promoted`, `rule-edited`,
    /// `rule-refounded`, `rule-changed`, `new-lesson`, `lesson-changed`, `lesson-gone`.
    pub change: &'static str,
    pub id: String,
    pub domain: String,
    pub scope: String,
    pub kind: String,
    pub text: String,
    /// The change in words: `confidence 0.620 -> 0.710`, `superseded by L…`.
    pub detail: String,
    /// The lesson that carries this one on (an edit's wording, a re-founding), when another.
    pub now: Option<String>,
    pub before: Option<Side>,
    pub after: Option<Side>,
}

impl Change {
    /// A change to would-be lesson `l`, as new: no `before`, carried on by no other lesson.
    fn of(l: &Lesson, risk: Risk, change: &'static str, detail: String) -> Change {
        Change {
            risk,
            change,
            id: l.id.clone(),
            domain: l.domain.clone(),
            scope: l.scope.clone(),
            kind: l.kind.as_str().to_string(),
            text: l.text.clone(),
            detail,
            now: None,
            before: None,
            after: Some(Side::of_lesson(l)),
        }
    }
}

/// The diff of a would-be ledger against the last compile's.
#[derive(Clone, Debug, Default)]
pub struct Diff {
    /// Whether there was a last compile to compare with (without one, every lesson is new).
    pub previous_compile: bool,
    /// Sorted by risk, domain, scope, id.
    pub changes: Vec<Change>,
    /// Lessons on both sides that no compared field changed.
    pub unchanged: usize,
    /// The output files a compile would write (new, or with other contents), sorted.
    pub write: Vec<String>,
    /// The files of the last compile a compile would remove, sorted.
    pub remove: Vec<String>,
}

/// Compares `lessons` (this compile's, sorted by id) with `previous` (the last compile's
/// ledger, any order). `gone` is `report::gone_lessons` over the previous rows this compile
/// no longer has: which lesson, if any, each goes on as. `bypassing` maps the lessons S010
/// names to the workaround each tells agents to use: such a lesson becoming a rule is high.
pub fn compare(
    previous_compile: bool,
    previous: &[Previous],
    gone: &Value,
    lessons: &[Lesson],
    bypassing: &BTreeMap<&str, &str>,
) -> Diff {
    // A new rule is medium, unless it switches a safeguard off.
    let new_rule = |l: &Lesson, detail: &mut String| match bypassing.get(l.id.as_str()) {
        Some(what) => {
            detail.push_str(&format!("; tells agents to use `{what}` (S010)"));
            Risk::High
        }
        None => Risk::Medium,
    };
    let now_of: BTreeMap<&str, &str> = (gone.as_array().into_iter().flatten())
        .filter_map(|g| Some((g["id"].as_str()?, g["now"].as_str()?)))
        .collect();
    let had: HashSet<&str> = previous.iter().map(|p| p.id.as_str()).collect();
    let is_rule = |id: &str| Lesson::find(lessons, id).is_some_and(|l| l.rule);
    let mut changes = Vec::new();
    let mut unchanged = 0;
    // New lessons another entry already names as what a rule became (an edit, a re-founding).
    let mut told = HashSet::new();
    for p in previous {
        let before = Side::of_previous(p);
        let Some(l) = Lesson::find(lessons, &p.id) else {
            let now = now_of.get(p.id.as_str()).map(|s| s.to_string());
            let (risk, change, detail) = match (&now, p.rule) {
                (Some(n), true) if is_rule(n) => {
                    (Risk::Medium, "rule-refounded", format!("re-founded as {n}"))
                }
                (Some(n), true) => (
                    Risk::High,
                    "rule-gone",
                    format!("gone; its evidence is in {n}, which is no rule"),
                ),
                (None, true) => (
                    Risk::High,
                    "rule-gone",
                    "gone: its records are no longer in the input".into(),
                ),
                (Some(n), false) => (Risk::Low, "lesson-gone", format!("re-founded as {n}")),
                (None, false) => (
                    Risk::Low,
                    "lesson-gone",
                    "gone: its records are no longer in the input".into(),
                ),
            };
            if risk == Risk::Medium
                && let Some(n) = &now
            {
                told.insert(n.clone());
            }
            changes.push(Change {
                risk,
                change,
                id: p.id.clone(),
                domain: p.domain.clone(),
                scope: p.scope.clone(),
                kind: p.kind.clone(),
                text: p.text.clone(),
                detail,
                now,
                before: Some(before),
                after: None,
            });
            continue;
        };
        let after = Side::of_lesson(l);
        if before == after {
            unchanged += 1;
            continue;
        }
        let fields = field_changes(&before, &after, l.reason.as_deref());
        let edited_into = (l.status == Status::Superseded && l.reason.as_deref() == Some(score::EDITED))
            .then(|| l.superseded_by.clone())
            .flatten();
        let mut now = None;
        let (risk, change, detail) = match (before.rule, after.rule) {
            (true, false) => match (&edited_into, l.status) {
                (Some(n), _) if is_rule(n) => {
                    let new = Lesson::find(lessons, n).map_or("", |e| e.text.as_str());
                    now = Some(n.clone());
                    if !had.contains(n.as_str()) {
                        told.insert(n.clone());
                    }
                    (Risk::Medium, "rule-edited", format!("edited as {n}: \"{new}\""))
                }
                (_, Status::Superseded) => (Risk::High, "rule-superseded", fields),
                (_, Status::Retired) => (Risk::High, "rule-retired", fields),
                _ => (Risk::High, "rule-lost", fields),
            },
            (false, true) => {
                let mut fields = fields;
                (new_rule(l, &mut fields), "new-rule", fields)
            }
            (true, true) if before.scope == "global" && after.scope != "global" => {
                (Risk::High, "rule-demoted", fields)
            }
            (true, true) if before.scope != after.scope => (Risk::Medium, "rule-promoted", fields),
            (true, true) => (Risk::Low, "rule-changed", fields),
            (false, false) => (Risk::Low, "lesson-changed", fields),
        };
        changes.push(Change {
            now,
            before: Some(before),
            ..Change::of(l, risk, change, detail)
        });
    }
    for l in lessons.iter().filter(|l| !had.contains(l.id.as_str())) {
        if told.contains(&l.id) {
            continue;
        }
        let mut detail = format!(
            "{}; confidence {}, reinforcement {}",
            if l.rule { "new rule" } else { l.status.as_str() },
            confidence_text(l.confidence),
            l.reinforcement
        );
        if let Some(old) = &l.supersedes {
            detail.push_str(&format!("; supersedes {old}"));
        }
        let (risk, change) = if l.rule {
            (new_rule(l, &mut detail), "new-rule")
        } else {
            (Risk::Low, "new-lesson")
        };
        changes.push(Change::of(l, risk, change, detail));
    }
    changes.sort_by(|a, b| (a.risk, &a.domain, &a.scope, &a.id).cmp(&(b.risk, &b.domain, &b.scope, &b.id)));
    Diff {
        previous_compile,
        changes,
        unchanged,
        ..Diff::default()
    }
}

/// Every compared field that differs, in words: `status active -> superseded (confidence fell
/// below the floor after contradictions); confidence 0.620 -> 0.180`. A status change says
/// why, with the lesson's `reason` (decay, contradictions, the cap, a fix), as the ledger does.
fn field_changes(a: &Side, b: &Side, reason: Option<&str>) -> String {
    let mut parts = Vec::new();
    if a.status != b.status {
        let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        parts.push(format!("status {} -> {}{why}", a.status, b.status));
    }
    if a.superseded_by != b.superseded_by {
        match &b.superseded_by {
            Some(by) if by.starts_with('L') => parts.push(format!("superseded by {by}")),
            Some(by) => parts.push(format!("superseded_by {by}")),
            None => parts.push("no longer superseded".into()),
        }
    }
    if a.rule != b.rule {
        parts.push(if b.rule { "now a rule" } else { "no longer a rule" }.into());
    }
    if a.scope != b.scope {
        parts.push(format!("scope {} -> {}", a.scope, b.scope));
    }
    if a.confidence != b.confidence {
        parts.push(format!(
            "confidence {} -> {}",
            confidence_text(a.confidence),
            confidence_text(b.confidence)
        ));
    }
    if a.reinforcement != b.reinforcement {
        parts.push(format!(
            "reinforcement {} -> {}",
            a.reinforcement, b.reinforcement
        ));
    }
    if a.pinned != b.pinned {
        parts.push(if b.pinned { "pinned" } else { "unpinned" }.into());
    }
    parts.join("; ")
}

impl Diff {
    /// Whether some lesson change is at `risk` or above: what `--fail-on` fails on.
    pub fn reaches(&self, risk: Risk) -> bool {
        self.changes.iter().any(|c| c.risk <= risk)
    }

    /// Changes per risk, high first.
    pub fn counts(&self) -> [(Risk, usize); 3] {
        Risk::ALL.map(|r| (r, self.changes.iter().filter(|c| c.risk == r).count()))
    }

    /// `{"generator": "skillc", "version": 1, "previous_compile", "changes": [...], "counts"}`.
    pub fn json(&self) -> Value {
        let changes: Vec<Value> = (self.changes.iter())
            .map(|c| {
                json!({
                    "risk": c.risk.as_str(),
                    "change": c.change,
                    "id": c.id,
                    "domain": c.domain,
                    "scope": c.scope,
                    "kind": c.kind,
                    "text": c.text,
                    "detail": c.detail,
                    "now": c.now,
                    "before": c.before.as_ref().map(Side::json),
                    "after": c.after.as_ref().map(Side::json),
                })
            })
            .collect();
        let mut counts = serde_json::Map::new();
        for (r, n) in self.counts() {
            counts.insert(r.as_str().into(), n.into());
        }
        counts.insert("unchanged".into(), self.unchanged.into());
        json!({
            "generator": crate::emit::GENERATOR,
            "version": 1,
            "previous_compile": self.previous_compile,
            "changes": changes,
            "counts": counts,
            "files": {"write": self.write, "remove": self.remove},
        })
    }

    /// Grouped by risk, one line per change, then a count line; `no changes` when a compile
    /// would change no lesson.
    pub fn text(&self, out: &str) -> String {
        let mut t = String::new();
        if !self.previous_compile {
            t.push_str(&format!(
                "no previous compile in {out}: every lesson would be new\n"
            ));
        }
        if self.changes.is_empty() && self.write.is_empty() && self.remove.is_empty() {
            t.push_str("no changes\n");
            return t;
        }
        for (risk, n) in self.counts() {
            if n == 0 {
                continue;
            }
            t.push_str(&format!("{} ({n}):\n", risk.as_str()));
            for c in self.changes.iter().filter(|c| c.risk == risk) {
                t.push_str(&format!(
                    "  {:<15} {} {} {} {} \"{}\": {}\n",
                    c.change,
                    c.id,
                    c.domain,
                    c.scope,
                    c.kind,
                    short(&c.text, 60),
                    c.detail
                ));
            }
        }
        let [(_, high), (_, medium), (_, low)] = self.counts();
        t.push_str(&format!(
            "{}: {high} high, {medium} medium, {low} low; {}\n",
            plural(self.changes.len(), "lesson change", "lesson changes"),
            plural(self.unchanged, "lesson unchanged", "lessons unchanged")
        ));
        // Files come last: a nightly job reads the risk first.
        if !self.write.is_empty() || !self.remove.is_empty() {
            t.push_str(&format!(
                "a compile would write {} and remove {}\n",
                files_text(&self.write),
                files_text(&self.remove)
            ));
        }
        t
    }
}

/// `2 files (ledger.json, node/SKILL.md)`, at most five named.
fn files_text(paths: &[String]) -> String {
    if paths.is_empty() {
        return "no file".into();
    }
    let named = crate::diagnostics::short_list(paths, 5);
    format!("{} ({named})", plural(paths.len(), "file", "files"))
}

/// `text` cut at `max` characters, with `…` when cut.
fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
