//! Emit: the ledger rendered as files (DESIGN §7), then written atomically.
//!
//! `render` and `ledger_file` are pure — they return every file's relative path and bytes
//! (the ledger apart, so it can be staged in the state store, written and freed while the
//! rest renders), and tests can look at output without touching the disk; `write` puts them
//! in place (temporary file, then rename, files in parallel), `write_streamed` the ledger a
//! piece at a time, and `remove_stale` removes files a previous compile generated that this
//! one does not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hash::Hash;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::cluster::fx::FxMap;
use crate::cluster::{Analysis, ChunkMemo, Lexicon};
use crate::diagnostics::{Diagnostic, Sink, codes};
use crate::digest;
use crate::model::{Kind, Lesson, Millis, Status};
use crate::pipeline::Compilation;
use crate::policy::Rules;
use crate::score::{confidence_value, push_confidence_text};
use crate::time::{format_day, push_day, utc_day};

mod direct;
mod json;

/// The generator mark every emitted JSON file and SKILL.md carries (DESIGN §4 self-ingestion).
pub const GENERATOR: &str = "skillc";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Lines of a SKILL.md with one rule: the frontmatter (9), the title and intro with their
/// blank lines (4), a section heading between blank lines (3) and the rule. A smaller
/// `caps.skill_lines` could hold no rule, so policy refuses it.
pub const MIN_SKILL_LINES: usize = 17;

/// One output file: path relative to the output directory, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    pub path: String,
    /// The text, in order: one piece for most files. The ledger and the diagnostics keep the
    /// pieces they were serialised in on every core; joining them would copy most of a
    /// gigabyte at a million experiences.
    pub pieces: Vec<String>,
}

impl OutFile {
    pub fn new(path: impl Into<String>, text: String) -> OutFile {
        OutFile {
            path: path.into(),
            pieces: vec![text],
        }
    }

    /// The whole text (a copy).
    pub fn text(&self) -> String {
        self.pieces.concat()
    }
}

/// Renders every output file of a compile but the ledger (`ledger_file`, staged, written and
/// freed while the rest renders), sorted by path. Diagnostics about what did not fit
/// are pushed to `sink` and also appear in `diagnostics.json`.
pub fn render<'a>(comp: &'a Compilation, rules: &Rules, sink: &mut Sink) -> Vec<OutFile> {
    let mut files = Vec::new();
    let mut emit_diags = Sink::new();

    let scope_domain = |l: &'a Lesson| (l.scope.as_str(), l.domain.as_str());
    // SKILL.md per (scope, domain) with rules, in (scope, domain) order.
    let groups = sorted_groups(grouped(comp.rules(), scope_domain));
    // Superseded and retired lessons per (scope, domain), for the walk-back history.
    let went = |l: &&Lesson| matches!(l.status, Status::Superseded | Status::Retired);
    let gone = grouped(comp.lessons.iter().filter(went), scope_domain);
    let ledger_ids = LedgerIds::new(&comp.lessons);
    // Each (scope, domain) on its own rayon job: their sizes follow the domains' (a few hold
    // most of the superseded history their EVIDENCE.md walks back through).
    let made: Vec<(Option<[OutFile; 2]>, Option<Diagnostic>)> = groups
        .into_par_iter()
        .with_max_len(1)
        .map(|((scope, domain), mut rules_here)| {
            rules_here.sort_by(|a, b| b.confidence.cmp(&a.confidence).then_with(|| a.id.cmp(&b.id)));
            let dir = match scope.strip_prefix("project:") {
                Some(p) => format!("projects/{p}/{domain}"),
                None => domain.to_string(),
            };
            let (skill, left_out) =
                skill_md(scope, domain, &rules_here, rules, rules.policy.caps.skill_lines);
            let not_written = if skill.is_none() {
                ", so the file is not written"
            } else {
                ""
            };
            let too_long = (!left_out.is_empty()).then(|| {
                Diagnostic::new(
                    codes::SKILL_TOO_LONG,
                    format!(
                        "{dir}/SKILL.md would exceed {} lines; {} left out{not_written}",
                        rules.policy.caps.skill_lines,
                        crate::diagnostics::plural(
                            left_out.len(),
                            "lowest-confidence rule",
                            "lowest-confidence rules"
                        )
                    ),
                )
                .subject(format!("{dir}/SKILL.md"))
                .domain(domain)
                .with(
                    "left_out",
                    left_out.iter().map(|l| l.id.clone()).collect::<Vec<_>>(),
                )
                .with("skill_lines", rules.policy.caps.skill_lines)
            });
            let kept: Vec<&Lesson> = rules_here
                .iter()
                .copied()
                .filter(|l| !left_out.iter().any(|o| o.id == l.id))
                .collect();
            let gone_here = gone.get(&(scope, domain)).map_or(&[][..], |v| v);
            let gone_here = with_predecessors(scope, domain, gone_here, &kept, &ledger_ids);
            // No rules, no file (DESIGN §7), and no evidence page for a file that is not there.
            let skill_and_evidence = skill.map(|skill| {
                let evidence = evidence_md(scope, domain, &kept, &gone_here);
                [
                    OutFile::new(format!("{dir}/SKILL.md"), skill),
                    OutFile::new(format!("{dir}/references/EVIDENCE.md"), evidence),
                ]
            });
            (skill_and_evidence, too_long)
        })
        .collect();
    for (skill_and_evidence, too_long) in made {
        files.extend(skill_and_evidence.into_iter().flatten());
        emit_diags.extend(too_long);
    }

    // Plan-time lesson blocks per scope.
    let now_day = utc_day(comp.now);
    let active = comp.lessons.iter().filter(|l| l.is_active());
    let scopes = sorted_groups(grouped(active, |l| l.scope.as_str()));
    // The blocks' lessons share most of their words: each whitespace chunk is analysed once.
    let mut memo = ChunkMemo::default();
    // A project's block is read beside the global one ("global" sorts before "project:…"):
    // what the global block shows takes no line of it.
    let mut global: Vec<Shown> = Vec::new();
    for (scope, lessons) in scopes {
        let name = match scope.strip_prefix("project:") {
            Some(p) => format!("project-{p}"),
            None => "global".to_string(),
        };
        let max = rules.policy.caps.block_lines;
        let (text, shown) = lesson_block(lessons, now_day, max, &rules.lexicon, &mut memo, &mut global);
        if scope == "global" {
            global = shown;
        }
        // Every lesson of the project already in the global block: nothing to add, no file.
        if !text.is_empty() {
            files.push(OutFile::new(format!("lessons/{name}.md"), text));
        }
    }

    sink.extend(emit_diags.iter().cloned());
    // The compile's diagnostics are final already; only emit's own need merging in.
    let diagnostics = if emit_diags.is_empty() {
        diagnostics_json(&comp.diagnostics)
    } else {
        let mut all = comp.diagnostics.clone();
        all.extend(emit_diags);
        diagnostics_json(&crate::diagnostics::finalize(all))
    };
    files.push(OutFile {
        path: "diagnostics.json".into(),
        pieces: diagnostics,
    });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `lessons` by `key`, each group in `lessons` order. Hashed: a B-tree insert per lesson
/// compared strings a dozen times, and at a million experiences a third of a million
/// superseded lessons made that a good part of render's own thread.
fn grouped<'a, K: Hash + Eq>(
    lessons: impl Iterator<Item = &'a Lesson>,
    key: impl Fn(&'a Lesson) -> K,
) -> FxMap<K, Vec<&'a Lesson>> {
    let mut groups: FxMap<K, Vec<&'a Lesson>> = FxMap::default();
    for l in lessons {
        groups.entry(key(l)).or_default().push(l);
    }
    groups
}

/// The groups in key order (keys are distinct).
fn sorted_groups<K: Ord>(groups: FxMap<K, Vec<&Lesson>>) -> Vec<(K, Vec<&Lesson>)> {
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    groups
}

/// Sort key of a plan-time block: pinned first, then confidence × recency, ties by id.
/// recency = 1 / (1 + days since last use), kept integral so no float reaches the order.
fn block_order(l: &Lesson, now_day: i64) -> (bool, std::cmp::Reverse<i64>, &str) {
    let days = (now_day - l.last_used_day).max(0);
    let weight = i64::from(l.confidence) * 1_000_000 / (1 + days);
    (!l.pinned, std::cmp::Reverse(weight), &l.id)
}

/// The block's lines, `- <text> (id: <id>)`. A block reaches the agent without SKILL.md's
/// section headings, so an avoid or watch lesson says what it is: a dead end's bare name
/// ("Switch base image to Alpine") would read as an instruction to do it. The same line for a
/// second domain (one dead end recorded under docker and python) is shown once, as the
/// higher-ranked lesson, and the next lesson takes the freed line; so is a lesson of the same
/// kind that clustering takes for one already shown in other words (the fix "run `cargo build
/// --locked` instead of `cargo build`" beside "Use cargo build --locked in CI …": a mechanical
/// lesson and a written one never share a cluster, their blocks differ). `above` holds the
/// lines of a block read beside this one (a project's is read with the global block): a lesson
/// they show takes no line here either. Returns the block and its lines.
fn lesson_block<'a>(
    mut lessons: Vec<&'a Lesson>,
    now_day: i64,
    max: usize,
    lexicon: &'a Lexicon,
    memo: &mut ChunkMemo<'a>,
    above: &mut [Shown<'a>],
) -> (String, Vec<Shown<'a>>) {
    lessons.sort_by_cached_key(|&l| block_order(l, now_day));
    let mut shown: Vec<Shown> = Vec::new();
    let mut s = String::new();
    for l in lessons {
        if shown.len() == max {
            break;
        }
        let plain = l.text.to_lowercase();
        let mut analysis: Option<Analysis> = None;
        let mut said = false;
        for x in (above.iter_mut().chain(shown.iter_mut())).filter(|x| x.kind == l.kind) {
            said = x.plain == plain || {
                let theirs = (x.analysis).get_or_insert_with(|| lexicon.analyze_with(x.said, Some(memo)));
                let mine = analysis.get_or_insert_with(|| lexicon.analyze_with(l.said(), Some(memo)));
                crate::cluster::same_lesson(lexicon, theirs, mine)
            };
            if said {
                break;
            }
        }
        if !said {
            let _ = writeln!(s, "{}", block_line(l));
            shown.push(Shown {
                kind: l.kind,
                plain,
                said: l.said(),
                analysis,
            });
        }
    }
    (s, shown)
}

/// A line of a plan-time block, as later lessons are compared with it. Analyses are made only
/// when two lessons of one kind worded otherwise meet: a block's first lesson of each kind,
/// and a lesson whose text a shown one already has, need none.
struct Shown<'a> {
    kind: Kind,
    plain: String,
    said: &'a str,
    analysis: Option<Analysis>,
}

/// A lesson as the agent reads it at plan time, with no heading around it (also a delta's
/// bullet).
pub fn block_text(l: &Lesson) -> String {
    worded(l.kind, &l.text, l.reasons.first().map(String::as_str))
}

/// A lesson as a plan-time block's line (also a delta's bullet): "- <text> (id: <id>)", its text
/// as Markdown text (`md_line`).
pub fn block_line(l: &Lesson) -> String {
    format!("- {} (id: {})", md_line(&block_text(l)), l.id)
}

/// A text of `kind` as the plan-time block words it (`block_text`), for a lesson or a
/// cluster that is not one yet (`why`'s near misses); `reason` is a dead end's newest reason.
pub fn worded(kind: Kind, text: &str, reason: Option<&str>) -> String {
    // Agents often word a gotcha or a dead end with its own lead-in ("Watch out: …", "Avoid:
    // …", a claim's "Never …"); it is not said twice.
    let head = text.chars().take(12).collect::<String>().to_lowercase();
    let led = |leads: &[&str]| {
        leads.iter().any(|lead| {
            head.strip_prefix(lead)
                .is_some_and(|rest| !rest.starts_with(char::is_alphanumeric))
        })
    };
    let text = match kind {
        Kind::Do => return text.to_string(),
        Kind::Avoid if led(&["avoid", "never", "don't", "don’t", "dont", "do not"]) => text.to_string(),
        Kind::Avoid => format!("Avoid: {text}"),
        Kind::Watch
            if led(&[
                "watch out",
                "watch for",
                "look out",
                "heads up",
                "gotcha",
                "warning",
                "beware",
                "caution",
                "careful",
                "be careful",
            ]) =>
        {
            text.to_string()
        }
        Kind::Watch => format!("Watch out: {text}"),
    };
    // Nor its reason, when the text already gives it (an edit that wrote the whole line).
    let given = |reason: &str| {
        let reason = reason.trim_end_matches(['.', '!', ';', ' ']).to_lowercase();
        text.to_lowercase().contains(&reason)
    };
    match (kind, reason) {
        (Kind::Avoid, Some(reason)) if !given(reason) => format!("{text} — {reason}"),
        _ => text,
    }
}

fn section_title(kind: Kind) -> &'static str {
    match kind {
        Kind::Do => "## Do",
        Kind::Avoid => "## Avoid",
        Kind::Watch => "## Watch out",
    }
}

/// A rule as one SKILL.md bullet: text, id, confidence, reinforcement and up to three citations.
pub fn rule_line(l: &Lesson) -> String {
    rule_line_with(l, "")
}

/// `rule_line` with a prefix before the text (deltas spell out "Avoid: " and "Watch out: ").
pub fn rule_line_with(l: &Lesson, prefix: &str) -> String {
    let mut s = String::new();
    push_rule_line(&mut s, l, prefix);
    s
}

/// Appends `rule_line_with(l, prefix)` to `s`.
fn push_rule_line(s: &mut String, l: &Lesson, prefix: &str) {
    let text = if prefix.is_empty() {
        md_line(&l.text)
    } else {
        md_inline(&l.text)
    };
    let _ = write!(s, "- {prefix}{text}");
    if let (Kind::Avoid, Some(reason)) = (l.kind, l.reasons.first()) {
        let _ = write!(s, " — {}", md_inline(reason));
    }
    s.push_str(" (id: ");
    s.push_str(&l.id);
    s.push_str(", confidence ");
    push_confidence_text(s, l.confidence);
    let _ = write!(s, ", reinforcement {}; evidence: ", l.reinforcement);
    push_joined(s, &l.evidence[..l.evidence.len().min(3)], ", ");
    if l.evidence.len() > 3 {
        let _ = write!(s, " +{} more", l.evidence.len() - 3);
    }
    s.push(')');
}

/// The SKILL.md text and the rules left out to stay within `max_lines`; no text when not
/// even one rule fits.
fn skill_md<'a>(
    scope: &str,
    domain: &str,
    rules: &[&'a Lesson],
    tables: &Rules,
    max_lines: usize,
) -> (Option<String>, Vec<&'a Lesson>) {
    // The description names the tools of the strongest rules, whichever fit.
    let with = tools_phrase(&tools_named(domain, rules, tables));
    // `rules` is sorted by confidence (desc): the file keeps the strongest that fit. Leaving a
    // rule out never adds a line, so the longest prefix that fits is found by bisection
    // (a domain with thousands of rules is rendered a dozen times, not once per rule left out).
    let render = |k: usize| {
        let text = skill_text(scope, domain, &rules[..k], &with);
        (text.lines().count() <= max_lines).then_some(text)
    };
    // Weakest first, the order they were given up in.
    let left_out = |k: usize| rules[k..].iter().rev().copied().collect();
    if let Some(text) = render(rules.len()) {
        return (Some(text), Vec::new());
    }
    // The answer is in 0..n: `fits` holds the longest prefix known to fit (0: none).
    let (mut fits, mut fails) = ((0, None), rules.len());
    while fails - fits.0 > 1 {
        let mid = fits.0 + (fails - fits.0) / 2;
        match render(mid) {
            Some(text) => fits = (mid, Some(text)),
            None => fails = mid,
        }
    }
    (fits.1, left_out(fits.0))
}

/// A SKILL.md of `rules`; `with` is the description's `tools_phrase`.
fn skill_text(scope: &str, domain: &str, rules: &[&Lesson], with: &str) -> String {
    let count = |k: Kind| rules.iter().filter(|l| l.kind == k).count();
    let (d, a, w) = (count(Kind::Do), count(Kind::Avoid), count(Kind::Watch));
    let whose = match scope.strip_prefix("project:") {
        Some(p) => format!("in project {p}"),
        None => "across projects".to_string(),
    };
    let counts = rule_counts(d, a, w);
    let description = format!(
        "Rules coding agents learned from recorded experience with {domain} {whose}: {counts}, each citing the \
         experiences behind it. Use when planning or doing {domain} work{with}, to repeat what worked and skip \
         known dead ends.",
    );
    let description: String = description.chars().take(1024).collect();
    let mut digest_input = String::new();
    for l in rules {
        digest_input.push_str(&l.id);
        for e in &l.evidence {
            digest_input.push('\0');
            digest_input.push_str(e);
        }
        digest_input.push('\n');
    }
    let mut s = String::new();
    s.push_str("---\n");
    let _ = writeln!(s, "name: {domain}");
    let _ = writeln!(s, "description: {}", yaml_string(&description));
    s.push_str("metadata:\n");
    let _ = writeln!(s, "  generated-by: {GENERATOR}");
    let _ = writeln!(s, "  version: \"{VERSION}\"");
    let _ = writeln!(
        s,
        "  input-digest: \"{}\"",
        digest::short(digest_input.as_bytes())
    );
    let _ = writeln!(s, "  rules: \"{}\"", rules.len());
    s.push_str("---\n\n");
    let _ = write!(s, "# {domain}\n\n");
    let _ = writeln!(
        s,
        "Compiled by skillc from agent experience records ({whose}). Each rule cites the experiences behind it; \
         the full evidence and history are in references/EVIDENCE.md."
    );
    for kind in [Kind::Do, Kind::Avoid, Kind::Watch] {
        let mut here = rules.iter().filter(|l| l.kind == kind).peekable();
        if here.peek().is_none() {
            continue;
        }
        s.push('\n');
        s.push_str(section_title(kind));
        s.push_str("\n\n");
        for l in here {
            push_rule_line(&mut s, l, "");
            s.push('\n');
        }
    }
    s
}

/// "2 to do, 1 to watch out for": the kinds a skill holds, never a kind it has none of (an
/// agent reading "0 to avoid" learns nothing from it). A SKILL.md holds at least one rule.
fn rule_counts(d: usize, a: usize, w: usize) -> String {
    let parts: Vec<String> = [(d, "to do"), (a, "to avoid"), (w, "to watch out for")]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    parts.join(", ")
}

/// Words that name a tool only now and then ("go back", "make sure", "what kind of"): they
/// count as a tool a rule is about only as a command's first word in a code span or before a
/// flag.
const TOOLS_ALSO_WORDS: &[&str] = &[
    "go",
    "make",
    "kind",
    "black",
    "fetch",
    "express",
    "fish",
    "serial",
    "integer",
    "timestamp",
    "node",
    "bundle",
    "coverage",
    "rails",
    "sh",
    "az",
    "java",
    "ruby",
    "ini",
];

/// The tools `rules` are about, most-named first (ties: first named, the rules being
/// strongest first), for SKILL.md's description: an agent deciding whether to load the skill
/// matches the task's tools against it, and the same sentence for every domain told it
/// nothing. A tool is a program `rules/aliases.yaml` places (`pytest`, `kubectl`) or a tool the
/// lexicon names (`SQLite`, `jest`), shown as first written; the domain's own name is left out.
fn tools_named(domain: &str, rules: &[&Lesson], tables: &Rules) -> Vec<String> {
    const MAX: usize = 4;
    // The strongest rules say what the skill is about (and a domain of thousands of rules is
    // not read word by word for one sentence).
    const READ: usize = 100;
    // (the tool's one name, as first written, rules naming it)
    let mut seen: Vec<(String, String, usize)> = Vec::new();
    for l in rules.iter().take(READ) {
        let mut here: Vec<String> = Vec::new();
        let mut in_code = false;
        // The word after a tool is its subcommand (`git fetch`, `uv pip`), not a tool.
        let mut after_tool = false;
        let words: Vec<&str> = l.text.split(|c: char| c.is_whitespace() || c == ',').collect();
        for (i, raw) in words.iter().enumerate() {
            let opens = raw.starts_with('`') && !in_code;
            let word = raw.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '+')));
            if raw.matches('`').count() % 2 == 1 {
                in_code = !in_code;
            }
            let subcommand = std::mem::take(&mut after_tool);
            let lower = word.to_lowercase();
            if lower.is_empty() || lower.starts_with('-') || !lower.starts_with(|c: char| c.is_alphabetic()) {
                continue;
            }
            // One name per tool, however inflected ("Timestamps" is `timestamp`).
            let tool = match tables.aliases.programs.contains_key(&lower) {
                true => Some(lower.clone()),
                false => tables.lexicon.tool_named(word),
            };
            after_tool = tool.is_some();
            let Some(tool) = tool else { continue };
            if subcommand || lower == domain || tool == domain || here.contains(&tool) {
                continue;
            }
            let before_flag = words
                .get(i + 1)
                .is_some_and(|n| n.trim_start_matches('`').starts_with('-'));
            if opens || before_flag || !TOOLS_ALSO_WORDS.contains(&tool.as_str()) {
                here.push(tool.clone());
                match seen.iter_mut().find(|s| s.0 == tool) {
                    Some(s) => s.2 += 1,
                    None => seen.push((tool, word.to_string(), 1)),
                }
            }
        }
    }
    // Stable: ties keep the order they were first named in.
    seen.sort_by_key(|s| std::cmp::Reverse(s.2));
    seen.into_iter().take(MAX).map(|s| s.1).collect()
}

/// ", especially with pytest, ruff or SQLite" (nothing for no tools).
fn tools_phrase(tools: &[String]) -> String {
    match tools {
        [] => String::new(),
        [one] => format!(", especially with {one}"),
        [rest @ .., last] => format!(", especially with {} or {last}", rest.join(", ")),
    }
}

/// `s` on one Markdown line: operation keys keep the tool name as recorded (they must match
/// GAIA's keys) and decision details are a person's words, so either may hold a line break
/// that would otherwise open a heading or a list of its own.
fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(char::is_control) {
        s.replace(char::is_control, " ").into()
    } else {
        s.into()
    }
}

/// A recorded text as Markdown text that reads as it was written, at the start of a bullet
/// (`md_line`) or inside one (`md_inline`). Markdown gives a few characters a meaning of their
/// own: at the start of a list item a `#` opens a heading, `>` a quote, "1. " or "- " a list of
/// its own, "```" or "~~~" a code block that swallows the rest of the bullet, "---" a rule;
/// anywhere, `<` before a letter, `/`, `!` or `?` is an HTML tag
/// (`Vec<String>`, `<details>`) that a renderer drops with the text it holds. Those characters
/// get the backslash that makes them plain text; code spans are left as they are (a backslash
/// shows there), and every other text is borrowed unchanged.
fn md_line(s: &str) -> std::borrow::Cow<'_, str> {
    match block_marker(s) {
        Some(at) => {
            let inline = md_inline(&s[at..]);
            let mut out = String::with_capacity(at + 1 + inline.len());
            out.push_str(&s[..at]);
            out.push('\\');
            out.push_str(&inline);
            out.into()
        }
        None => md_inline(s),
    }
}

/// Where the character that would open a Markdown block at the start of `s` stands (the
/// backslash goes before it), if one would.
fn block_marker(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = *b.first()?;
    let run = b.iter().take_while(|&&c| c == first).count();
    let ends_word = |at: usize| b.get(at).is_none_or(|c| matches!(c, b' ' | b'\t'));
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let rule = |c: u8| b.iter().all(|&x| x == c || x == b' ') && b.iter().filter(|&&x| x == c).count() >= 3;
    match first {
        b'#' if run <= 6 && ends_word(run) => Some(0),
        b'>' => Some(0),
        b'-' | b'+' | b'*' if ends_word(1) || rule(first) => Some(0),
        b'_' if rule(b'_') => Some(0),
        b'`' | b'~' if run >= 3 => Some(0),
        b'0'..=b'9' if digits <= 9 && matches!(b.get(digits), Some(b'.' | b')')) && ends_word(digits + 1) => {
            Some(digits)
        }
        _ => None,
    }
}

/// A `<` before `c` may open an HTML tag, comment, declaration or autolink.
fn opens_tag(c: u8) -> bool {
    c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?')
}

/// `s` with a backslash before each `<` that would open an HTML tag, outside code spans.
fn md_inline(s: &str) -> std::borrow::Cow<'_, str> {
    let b = s.as_bytes();
    let tag_at = |i: usize| b[i] == b'<' && b.get(i + 1).is_some_and(|&c| opens_tag(c));
    if !s.find('<').is_some_and(|at| (at..b.len()).any(tag_at)) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => {
                // A code span runs to the next run of as many backticks; a run with none is text.
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + run;
                i = loop {
                    let Some(k) = b[j..].iter().position(|&c| c == b'`') else {
                        break i + run;
                    };
                    let close = b[j + k..].iter().take_while(|&&c| c == b'`').count();
                    if close == run {
                        break j + k + close;
                    }
                    j += k + close;
                };
            }
            _ if tag_at(i) => {
                out.push_str(&s[copied..i]);
                out.push('\\');
                copied = i;
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[copied..]);
    out.into()
}

/// `md_inline(s)` for a heading's text: also a closing run of `#` at its end, which Markdown
/// takes for the heading's closing sequence and drops ("Tag the release commit with #").
fn md_heading(s: &str) -> std::borrow::Cow<'_, str> {
    let inline = md_inline(s);
    let hashes = inline.len() - inline.trim_end_matches('#').len();
    let before = inline[..inline.len() - hashes].chars().next_back();
    if hashes == 0 || before.is_some_and(|c| c != ' ' && c != '\t') {
        return inline;
    }
    let at = inline.len() - hashes;
    format!("{}\\{}", &inline[..at], &inline[at..]).into()
}

/// A double-quoted YAML scalar.
fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// "1 active day without use", "3 active days without use".
pub fn idle_days_text(days: u16) -> String {
    let s = if days == 1 { "" } else { "s" };
    format!("{days} active day{s} without use")
}

fn evidence_md(scope: &str, domain: &str, rules: &[&Lesson], gone: &[&Lesson]) -> String {
    // Written into one string as it goes (`write!`, `push_joined`): the file is tens of
    // megabytes at scale, and a formatted temporary per line was most of its cost.
    let mut s = format!(
        "# Evidence: {domain} ({scope})\n\nGenerated by skillc. Every rule in ../SKILL.md with all its evidence and history.\n"
    );
    for (i, l) in rules.iter().enumerate() {
        // As in `json_lines`: the next rule's texts are read ahead, side by side.
        if let Some(next) = rules.get(i + 1) {
            std::hint::black_box(lesson_bytes(next));
        }
        let _ = write!(s, "\n## {} — {}\n\n", l.id, md_heading(&l.text));
        let _ = write!(s, "- kind: {}; confidence ", l.kind.as_str());
        push_confidence_text(&mut s, l.confidence);
        let _ = writeln!(s, "; reinforcement {}; scope {}", l.reinforcement, l.scope);
        if let Some(k) = &l.operation_key {
            let _ = writeln!(s, "- operation key: `{}`", one_line(k));
        }
        s.push_str("- evidence: ");
        push_joined(&mut s, &l.evidence, ", ");
        s.push('\n');
        if !l.projects.is_empty() {
            s.push_str("- projects: ");
            push_joined(&mut s, &l.projects, ", ");
            s.push('\n');
        }
        if !l.reasons.is_empty() {
            s.push_str("- reasons: ");
            let reasons: Vec<_> = l.reasons.iter().map(|r| md_inline(r)).collect();
            push_joined(&mut s, &reasons, "; ");
            s.push('\n');
        }
        if let Some(prev) = &l.supersedes {
            let _ = writeln!(s, "- supersedes: {prev}");
        }
        s.push_str("- history:\n");
        for h in &l.history {
            s.push_str("  - ");
            push_day(&mut s, utc_day(h.at));
            s.push(' ');
            s.push_str(h.event.as_str());
            s.push_str(" (confidence ");
            push_confidence_text(&mut s, h.confidence);
            s.push(')');
            if !h.experiences.is_empty() {
                s.push_str(" [");
                push_joined(&mut s, &h.experiences[..], ", ");
                s.push(']');
            }
            if let Some(d) = h.detail.as_deref() {
                s.push_str(" — ");
                s.push_str(&md_inline(&one_line(d)));
            }
            s.push('\n');
            if h.idle_days > 0 {
                let _ = write!(s, "  - then {} (confidence ", idle_days_text(h.idle_days));
                push_confidence_text(&mut s, i32::from(h.idle_confidence));
                s.push_str(")\n");
            }
        }
    }
    // Lessons of this scope and domain that were superseded or retired: the walk-back history.
    if !gone.is_empty() {
        s.push_str("\n## Superseded and retired\n\n");
        for (i, l) in gone.iter().enumerate() {
            if let Some(next) = gone.get(i + 1) {
                std::hint::black_box(gone_bytes(next));
            }
            let _ = write!(
                s,
                "- {} — {} ({}; superseded_by: {}; reason: {}; evidence: ",
                l.id,
                md_inline(&l.text),
                l.status.as_str(),
                l.superseded_by.as_deref().unwrap_or("null"),
                md_inline(&one_line(l.reason.as_deref().unwrap_or("none"))),
            );
            push_joined(&mut s, &l.evidence, ", ");
            s.push_str(")\n");
        }
    }
    s
}

/// Appends `items` with `sep` between two (`join` without its temporary string).
fn push_joined(s: &mut String, items: &[impl AsRef<str>], sep: &str) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(item.as_ref());
    }
}

/// The lessons in ledger (id) order, each beside its id's first 16 bytes (`score::prefix`), for
/// finding a lesson by id: the prefixes decide every step of a search but the last without
/// reading an id's text (searching the ids themselves waited on two cache misses a step, and at
/// a million experiences EVIDENCE.md walks back through a third of a million lessons).
struct LedgerIds<'a> {
    lessons: &'a [Lesson],
    /// Per lesson, in order: its id's prefix and its index.
    prefixes: Vec<(u128, u32)>,
}

impl<'a> LedgerIds<'a> {
    fn new(lessons: &'a [Lesson]) -> LedgerIds<'a> {
        let prefixes = (lessons.par_iter().enumerate())
            .map(|(i, l)| (crate::score::prefix(&l.id), i as u32))
            .collect();
        LedgerIds { lessons, prefixes }
    }

    /// What `lessons.binary_search_by(|l| l.id.as_str().cmp(id))` finds, by the same steps
    /// (`score::search_by_prefix`).
    fn find(&self, id: &str) -> Option<&'a Lesson> {
        let found =
            crate::score::search_by_prefix(&self.prefixes, id, |i| self.lessons[i as usize].id.as_str());
        found.ok().map(|at| &self.lessons[at])
    }
}

/// The superseded and retired lessons an EVIDENCE.md walks back through: those of its scope and
/// domain (`gone`, in id order), and every lesson its rules supersede, directly or down a chain,
/// wherever the predecessor was scoped when it went (a global fix demoted to a project before
/// the form that replaced it was learned).
fn with_predecessors<'a>(
    scope: &str,
    domain: &str,
    gone: &[&'a Lesson],
    rules: &[&Lesson],
    ledger: &LedgerIds<'a>,
) -> Vec<&'a Lesson> {
    let by_id = |id: &str| {
        ledger
            .find(id)
            .filter(|l| matches!(l.status, Status::Superseded | Status::Retired))
    };
    // Chains are disjoint (a lesson has one successor), so the walks take each lesson once;
    // the bound only guards against a cycle in a hand-edited store.
    let mut extra: BTreeMap<&str, &Lesson> = BTreeMap::new();
    let mut steps = 0;
    for rule in rules {
        let mut prev = rule.supersedes.as_deref();
        while let Some(l) = prev.and_then(by_id) {
            steps += 1;
            if steps > ledger.lessons.len() {
                break;
            }
            if (l.scope.as_str(), l.domain.as_str()) != (scope, domain) {
                extra.insert(&l.id, l);
            }
            prev = l.supersedes.as_deref();
        }
    }
    if extra.is_empty() {
        return gone.to_vec();
    }
    let mut all: Vec<&Lesson> = gone.iter().copied().chain(extra.into_values()).collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    all
}

/// The ledger's confidence numbers, 0.000 to 1.000, as serde_json writes them: each is
/// formatted once here rather than once per lesson and per history event.
struct Confidences(Vec<String>);

impl Confidences {
    fn new() -> Confidences {
        Confidences(
            (0..=1000)
                .map(|t| serde_json::to_string(&confidence_value(t)).expect("a number serialises"))
                .collect(),
        )
    }

    /// `confidence_value(thousandths)` as JSON text (clamped to [0, 1] as it is).
    fn text(&self, thousandths: i32) -> &str {
        &self.0[thousandths.clamp(0, 1000) as usize]
    }
}

/// A lesson's timestamps as JSON strings, `format_rfc3339`'s text written straight into the
/// buffer (a ledger writes one per lesson and per history event, about two million at a million
/// experiences): the day's ten bytes are made once for a run of stamps on one day, and each
/// stamp goes in as one copy of a stack buffer.
struct Stamps {
    /// The last stamp's day and its `YYYY-MM-DD`.
    day: Option<(i64, [u8; 10])>,
}

impl Stamps {
    fn new() -> Stamps {
        Stamps { day: None }
    }

    /// Appends `format_rfc3339(ms)` as a JSON string: digits, `-`, `:`, `.`, `T` and `Z`
    /// only, so nothing to escape.
    fn push(&mut self, buf: &mut Vec<u8>, ms: Millis) {
        let day = utc_day(ms);
        let date = match self.day {
            Some((last, date)) if last == day => date,
            _ => match crate::time::day_bytes(day) {
                Some(date) => self.day.insert((day, date)).1,
                // A year beyond four digits (no ledger time is): as `format_rfc3339` writes it.
                None => return json::string(buf, &crate::time::format_rfc3339(ms)),
            },
        };
        let mut clock = [0u8; 14];
        let n = crate::time::clock_bytes(ms, &mut clock);
        let mut stamp = [b'"'; 26];
        stamp[1..11].copy_from_slice(&date);
        stamp[11..11 + n].copy_from_slice(&clock[..n]);
        buf.extend_from_slice(&stamp[..12 + n]);
    }
}

/// Appends `format_day(day)` as a JSON string (nothing to escape), without making the text.
fn day_string(buf: &mut Vec<u8>, day: i64) {
    match crate::time::day_bytes(day) {
        Some(date) => {
            let mut text = [b'"'; 12];
            text[1..11].copy_from_slice(&date);
            buf.extend_from_slice(&text);
        }
        None => json::string(buf, &format_day(day)),
    }
}

/// One lesson as a ledger object (DESIGN §7), keys in this order.
fn write_lesson(buf: &mut Vec<u8>, l: &Lesson, confidences: &Confidences) {
    let mut stamps = Stamps::new();
    let mut o = json::Object::new(buf);
    o.str("id", &l.id);
    o.str("kind", l.kind.as_str());
    o.str("text", &l.text);
    o.str("domain", &l.domain);
    o.str("scope", &l.scope);
    o.opt_str("operation_key", l.operation_key.as_deref());
    o.str("status", l.status.as_str());
    o.opt_str("reason", l.reason.as_deref());
    o.raw("confidence", confidences.text(l.confidence));
    o.u32("reinforcement", l.reinforcement);
    o.bool("rule", l.rule);
    o.bool("pinned", l.pinned);
    o.bool("blessed", l.blessed);
    o.strs("evidence", &l.evidence);
    o.strs("projects", &l.projects);
    o.opt_str("superseded_by", l.superseded_by.as_deref());
    o.opt_str("supersedes", l.supersedes.as_deref());
    o.str("founder", &l.founder);
    o.str("cluster", &l.cluster);
    stamps.push(o.key("admitted_at"), l.admitted_at);
    day_string(o.key("last_used"), l.last_used_day);
    o.opt_str("working_args", l.working.as_deref());
    o.strs("reasons", &l.reasons);
    json::list(o.key("history"), b'[', &l.history, b']', |buf, h| {
        let mut e = json::Object::new(buf);
        stamps.push(e.key("at"), h.at);
        e.str("event", h.event.as_str());
        e.raw("confidence", confidences.text(h.confidence));
        e.strs("experiences", &h.experiences[..]);
        e.opt_str("detail", h.detail.as_deref());
        if h.idle_days > 0 {
            e.u32("idle_days", u32::from(h.idle_days));
            e.raw("idle_confidence", confidences.text(i32::from(h.idle_confidence)));
        }
        e.end();
    });
    o.end();
}

/// The first byte of a text (0 for an empty one): reading it brings the text's first cache
/// line in.
fn first_byte(s: &str) -> u8 {
    s.as_bytes().first().copied().unwrap_or(0)
}

/// One byte of each text of `l` that lives apart from it (`json_lines`' look-ahead).
fn lesson_bytes(l: &Lesson) -> u8 {
    let texts = [&l.id, &l.text, &l.cluster].into_iter().map(|s| first_byte(s));
    let ids = (l.evidence.iter()).chain(l.history.iter().flat_map(|h| h.experiences.iter()));
    let lists = (l.projects.iter()).chain(&l.reasons).map(|s| first_byte(s));
    (texts.chain(ids.map(|s| first_byte(s))).chain(lists)).fold(0, |x, b| x ^ b)
}

/// One byte of each text of `l` that its line under "Superseded and retired" prints
/// (`evidence_md`'s look-ahead). Not `lesson_bytes`: that walks the lesson's history, which
/// the line leaves out, and at a million experiences the third of a million lessons walked
/// back through hold two million history events and a million and a quarter ids there.
fn gone_bytes(l: &Lesson) -> u8 {
    let texts = [&l.id, &l.text].into_iter().map(|s| first_byte(s));
    let options = [l.superseded_by.as_deref(), l.reason.as_deref()].map(|s| s.map_or(0, first_byte));
    let ids = l.evidence.iter().map(|s| first_byte(s));
    (texts.chain(options).chain(ids)).fold(0, |x, b| x ^ b)
}

/// One byte of each text of `d` that lives apart from it (`json_lines`' look-ahead).
fn diagnostic_bytes(d: &Diagnostic) -> u8 {
    let value = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => first_byte(s),
        serde_json::Value::Array(items) => (items.iter())
            .map(|v| v.as_str().map_or(0, first_byte))
            .fold(0, |x, b| x ^ b),
        _ => 0,
    };
    let texts = [first_byte(&d.message), first_byte(&d.subject)];
    (texts.into_iter())
        .chain(d.evidence.iter().map(|(_, v)| value(v)))
        .fold(0, |x, b| x ^ b)
}

/// `ledger.json`: every lesson, one object per line.
pub fn ledger_file(lessons: &[Lesson]) -> OutFile {
    ledger(lessons).file
}

/// `ledger.json` with where each lesson's object ends, for the state store's rows.
pub struct Ledger {
    pub file: OutFile,
    /// Per piece of `file`, the offset just past each lesson object in it, in order (none in
    /// the header and closing pieces). Kept as the objects are written: finding them again
    /// meant scanning half a gigabyte for line breaks, twice, at a million experiences.
    pub row_ends: Vec<Vec<usize>>,
}

impl Ledger {
    /// The lesson objects, in ledger order (`piece_rows` over every piece).
    pub fn rows(&self) -> impl Iterator<Item = &str> {
        (self.file.pieces.iter().zip(&self.row_ends)).flat_map(|(piece, ends)| piece_rows(piece, ends))
    }
}

/// `ledger.json` and its rows (see `Ledger`).
pub fn ledger(lessons: &[Lesson]) -> Ledger {
    let confidences = Confidences::new();
    let (pieces, row_ends) = json_lines("lessons", lessons, true, lesson_bytes, |buf, l| {
        write_lesson(buf, l, &confidences)
    });
    Ledger {
        file: OutFile {
            path: "ledger.json".into(),
            pieces,
        },
        row_ends,
    }
}

/// The lesson objects in one piece of a rendered ledger, given their ends in it
/// (`Ledger::row_ends`): each runs from the end of the one before (or the piece's start),
/// less the `,\n` that separates two lines.
pub fn piece_rows<'a>(piece: &'a str, ends: &'a [usize]) -> impl Iterator<Item = &'a str> {
    let starts = std::iter::once(0).chain(ends.iter().copied());
    (starts.zip(ends)).map(|(start, &end)| {
        let row = &piece[start..end];
        row.strip_prefix(",\n").unwrap_or(row)
    })
}

/// `{"generator": "skillc", "version": 1, "<key>": [` then one compact object per line, `]}`:
/// valid JSON that diffs line by line and stays small at a million records. Chunks of lines
/// serialise in parallel and stay the file's pieces: the header, each chunk (lines joined by
/// `,\n`, the next chunk beginning with one), the closing `]}`. Beside each piece, if
/// `with_ends`, the offset just past each item's object in it (none otherwise: only the
/// ledger's rows are looked up).
fn json_lines<T: Sync>(
    key: &str,
    items: &[T],
    with_ends: bool,
    ahead: impl Fn(&T) -> u8 + Sync,
    write: impl Fn(&mut Vec<u8>, &T) + Sync,
) -> (Vec<String>, Vec<Vec<usize>>) {
    // One chunk per job: a lesson's size follows its history, and a thread left a run of
    // large chunks would finish alone. (Sizing the buffers up front from a sample of items
    // was tried: no faster, and the unused room raised the peak past 3 GiB at 1 M.)
    //
    // Each chunk is written into its thread's scratch buffer and copied out at its exact size:
    // a buffer grown by doubling leaves the smaller blocks it outgrew behind, and at a million
    // experiences that was about half again the files' size in fresh pages to fault in.
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let chunks: Vec<(String, Vec<usize>)> = items
        .par_chunks(2048)
        .with_max_len(1)
        .enumerate()
        .map(|(i, chunk)| {
            SCRATCH.with_borrow_mut(|buf| {
                buf.clear();
                let mut ends = Vec::with_capacity(if with_ends { chunk.len() } else { 0 });
                for (j, item) in chunk.iter().enumerate() {
                    // The next item's texts are read now, side by side, so that their cache
                    // misses overlap instead of stalling the writer one string at a time.
                    if let Some(next) = chunk.get(j + 1) {
                        std::hint::black_box(ahead(next));
                    }
                    if i > 0 || j > 0 {
                        buf.extend_from_slice(b",\n");
                    }
                    write(buf, item);
                    if with_ends {
                        ends.push(buf.len());
                    }
                }
                let text = String::from_utf8(buf.as_slice().to_vec()).expect("JSON writers write UTF-8");
                (text, ends)
            })
        })
        .collect();
    let head = format!("{{\"generator\": \"{GENERATOR}\", \"version\": 1, \"{key}\": [\n");
    let tail = if items.is_empty() { "]}\n" } else { "\n]}\n" };
    (std::iter::once((head, Vec::new())))
        .chain(chunks)
        .chain([(tail.to_string(), Vec::new())])
        .unzip()
}

/// A diagnostic as it appears in diagnostics.json: keys in alphabetical order, `domain`,
/// `file` and `line` only when set.
fn write_diagnostic(buf: &mut Vec<u8>, d: &Diagnostic) {
    let mut o = json::Object::new(buf);
    o.str("code", d.code);
    if let Some(domain) = &d.domain {
        o.str("domain", domain);
    }
    json::map(o.key("evidence"), d.evidence.iter());
    if let Some(at) = &d.location {
        o.str("file", &at.file);
    }
    o.str("help", d.help);
    if let Some(at) = &d.location {
        o.u32("line", at.line);
    }
    o.str("message", &d.message);
    o.str("name", d.name());
    o.str("severity", d.severity.as_str());
    o.str("subject", &d.subject);
    o.end();
}

pub fn diagnostics_json(diags: &[Diagnostic]) -> Vec<String> {
    json_lines("diagnostics", diags, false, diagnostic_bytes, write_diagnostic).0
}

/// Writes `files` under `out` atomically, side by side, and returns how many it changed.
/// Unchanged files are left alone, so a re-run on unchanged input touches nothing.
pub fn write(out: &Path, files: &[&OutFile]) -> std::io::Result<usize> {
    std::fs::create_dir_all(out)?;
    let made = Made::new(out);
    files
        .par_iter()
        .map(|f| -> std::io::Result<usize> {
            let path = out.join(&f.path);
            let parent = path.parent().unwrap_or(out);
            // In a directory this write made there is no file to compare with (a fresh
            // output directory's 14 800 files at a million experiences, each probed in vain).
            if !made.below(parent) && same_contents(&path, &f.pieces) {
                return Ok(0);
            }
            made.create(parent)?;
            put(&path, f.pieces.iter().map(String::len).sum(), &f.pieces)?;
            Ok(1)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

/// The directories one `write` has made under its output directory, shared by its threads:
/// a file below one of them is new, and so is every directory between it and the file, so
/// neither is looked for. `create_dir_all` tries the file's own directory first and climbs
/// on `NotFound`: two failed `mkdir`s for each new project's first file.
struct Made<'o> {
    out: &'o Path,
    dirs: std::sync::Mutex<crate::cluster::fx::FxSet<PathBuf>>,
}

impl<'o> Made<'o> {
    fn new(out: &'o Path) -> Made<'o> {
        Made {
            out,
            dirs: Default::default(),
        }
    }

    /// The deepest of `dir` and its ancestors below `out` that this write made.
    fn made_ancestor<'d>(&self, dir: &'d Path) -> Option<&'d Path> {
        let dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
        (dir.ancestors())
            .take_while(|d| *d != self.out && d.starts_with(self.out))
            .find(|d| dirs.contains(*d))
    }

    /// Whether `dir` is, or is below, a directory this write made.
    fn below(&self, dir: &Path) -> bool {
        self.made_ancestor(dir).is_some()
    }

    fn record(&self, dir: &Path) {
        let mut dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
        dirs.insert(dir.to_path_buf());
    }

    /// Makes `dir` and its missing ancestors, as `create_dir_all` does, and records the ones
    /// it made. Below a directory made already, each missing one is made once, top down.
    fn create(&self, dir: &Path) -> std::io::Result<()> {
        if let Some(made) = self.made_ancestor(dir) {
            if made == dir {
                return Ok(());
            }
            let missing: Vec<&Path> = dir.ancestors().take_while(|d| *d != made).collect();
            for d in missing.into_iter().rev() {
                self.make(d)?;
            }
            return Ok(());
        }
        self.climb(dir)
    }

    /// `create_dir_all`'s steps: the directory itself, else its parent first.
    fn climb(&self, dir: &Path) -> std::io::Result<()> {
        match self.make(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            made => return made,
        }
        match dir.parent() {
            Some(parent) if parent != dir => self.climb(parent)?,
            _ => return Err(std::io::Error::other("failed to create whole tree")),
        }
        self.make(dir)
    }

    /// One `mkdir`; another thread may have made it first. `NotFound`: its parent is missing.
    fn make(&self, dir: &Path) -> std::io::Result<()> {
        match std::fs::create_dir(dir) {
            Ok(()) => {
                self.record(dir);
                Ok(())
            }
            Err(_) if dir.is_dir() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Writes the file `path` under `out` from `pieces` as they come, `len` bytes in all, each
/// piece freed once it is written (the ledger, whose pieces the state store takes its rows
/// from first). Atomic like `write`; the caller has found the text changed (`unchanged`).
pub fn write_streamed(
    out: &Path,
    path: &str,
    len: usize,
    pieces: impl IntoIterator<Item = String>,
) -> std::io::Result<()> {
    replace(&out.join(path), len, pieces)
}

/// Puts `pieces` (`len` bytes in all) at `path`: written to a temporary file beside it, each
/// piece dropped once written (large texts go direct, the rest the ordinary way:
/// `direct::Writer`), then renamed into place.
fn replace<P: AsRef<[u8]>>(
    path: &Path,
    len: usize,
    pieces: impl IntoIterator<Item = P>,
) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    put(path, len, pieces)
}

/// `replace` in a directory that exists.
fn put<P: AsRef<[u8]>>(path: &Path, len: usize, pieces: impl IntoIterator<Item = P>) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    let mut w = direct::Writer::create(&tmp, len)?;
    for piece in pieces {
        w.push(piece.as_ref())?;
    }
    w.finish()?;
    std::fs::rename(&tmp, path)
}

/// Whether `file` is under `out` already, byte for byte (`write` would leave it alone).
pub fn unchanged(out: &Path, file: &OutFile) -> bool {
    same_contents(&out.join(&file.path), &file.pieces)
}

/// Removes the files in `previous` (what the last compile generated) that this compile, which
/// generated `generated`, no longer does; returns how many it removed.
pub fn remove_stale(out: &Path, generated: &[String], previous: &[String]) -> std::io::Result<usize> {
    let mut removed = 0;
    for old in stale(out, generated, previous) {
        let path = out.join(old);
        std::fs::remove_file(&path)?;
        remove_empty_parents(out, &path);
        removed += 1;
    }
    Ok(removed)
}

/// The files `remove_stale` would remove, in `previous` order.
pub fn stale<'p>(out: &Path, generated: &[String], previous: &'p [String]) -> Vec<&'p str> {
    let now: BTreeSet<&str> = generated.iter().map(String::as_str).collect();
    (previous.iter().map(String::as_str))
        .filter(|old| !now.contains(old) && is_safe_relative(old) && could_generate(old))
        .filter(|old| out.join(old).is_file())
        .collect()
}

/// The paths of `files` that `write` would write (their text differs from the file's under
/// `out`, or there is none), in `files` order; reads only.
pub fn unwritten<'f>(out: &Path, files: &[&'f OutFile]) -> Vec<&'f str> {
    (files.iter())
        .filter(|f| !same_contents(&out.join(&f.path), &f.pieces))
        .map(|f| f.path.as_str())
        .collect()
}

/// Does the file at `path` hold exactly `pieces`, one after the other? Compared a block at a
/// time: the old ledger of a large compile is half a gigabyte, and reading it whole would add
/// that to the peak.
fn same_contents(path: &Path, pieces: &[String]) -> bool {
    use std::io::Read;
    if let Ok(same) = direct::same(path, pieces) {
        return same;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let len: usize = pieces.iter().map(String::len).sum();
    if file.metadata().map(|m| m.len()).ok() != Some(len as u64) {
        return false;
    }
    // No larger than the file: a zeroed megabyte per file was most of a re-run's write stage
    // (the skill files are a few kilobytes).
    let mut block = vec![0u8; len.clamp(1, 1 << 20)];
    for piece in pieces {
        let mut rest = piece.as_bytes();
        while !rest.is_empty() {
            let n = block.len().min(rest.len());
            if file.read_exact(&mut block[..n]).is_err() || block[..n] != rest[..n] {
                return false;
            }
            rest = &rest[n..];
        }
    }
    // Nothing may follow (the file could have grown since its length was read).
    file.read(&mut block[..1]).is_ok_and(|extra| extra == 0)
}

fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.skillc-tmp"))
}

/// A manifest entry we are willing to delete: relative, no `..`.
fn is_safe_relative(p: &str) -> bool {
    let path = Path::new(p);
    path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// A path of a kind emit writes. The list of stale files comes from the state store, and a
/// store that was edited, or belongs to another tool's output, must not make skillc delete a
/// file it never writes (the store itself, a note beside a skill).
fn could_generate(p: &str) -> bool {
    let parts: Vec<&str> = p.split('/').collect();
    if parts.iter().any(|c| c.starts_with('.')) {
        return false;
    }
    match parts[..] {
        ["ledger.json" | "diagnostics.json"] => true,
        ["lessons", block] => block.ends_with(".md"),
        ["deltas", delta] => delta.ends_with(".json"),
        [.., "SKILL.md"] => true,
        [.., "references", "EVIDENCE.md"] => true,
        _ => false,
    }
}

fn remove_empty_parents(out: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == out || !d.starts_with(out) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text opens no Markdown block and holds no HTML tag where it is rendered.
    #[test]
    fn a_text_reads_as_written_in_markdown() {
        for (text, line) in [
            ("# Never commit .env files", "\\# Never commit .env files"),
            ("## Build with --locked", "\\## Build with --locked"),
            (
                "#1 cause of flaky tests: shared tmp dirs",
                "#1 cause of flaky tests: shared tmp dirs",
            ),
            ("> Note: pin the runner image", "\\> Note: pin the runner image"),
            ("- half a list", "\\- half a list"),
            ("*** stars", "*** stars"),
            ("* * *", "\\* * *"),
            ("**Always** run fmt first", "**Always** run fmt first"),
            ("---", "\\---"),
            ("__init__.py must exist", "__init__.py must exist"),
            ("2024. was the year", "2024\\. was the year"),
            ("3) check the lock", "3\\) check the lock"),
            ("1.75 is the MSRV", "1.75 is the MSRV"),
            ("~~~ fences break the page", "\\~~~ fences break the page"),
            ("``` fences need a tag", "\\``` fences need a tag"),
            ("`npm ci` in CI", "`npm ci` in CI"),
            ("<details> hides the plan", "\\<details> hides the plan"),
            (
                "Return Result<T, E> from Vec<u8>",
                "Return Result\\<T, E> from Vec\\<u8>",
            ),
            (
                "Keep `Vec<u8>` and ``a `<b>` c`` as code",
                "Keep `Vec<u8>` and ``a `<b>` c`` as code",
            ),
            ("An unclosed ` then <b>", "An unclosed ` then \\<b>"),
            ("Already \\<b> escaped", "Already \\<b> escaped"),
            ("a < b and x<3 and <!-- c -->", "a < b and x<3 and \\<!-- c -->"),
            ("See <https://x.dev?a=1&b=2>", "See \\<https://x.dev?a=1&b=2>"),
            (
                "Mind the | in `-k \"a|b\"` and [docs](https://x.dev/#y)",
                "Mind the | in `-k \"a|b\"` and [docs](https://x.dev/#y)",
            ),
            ("", ""),
        ] {
            assert_eq!(md_line(text), line, "{text}");
        }
        // Only a bullet's start opens a block.
        assert_eq!(md_inline("# and > mid-line"), "# and > mid-line");
        // A heading's closing run of `#` is text, a `#` inside a word is.
        assert_eq!(md_heading("Tag the commit with #"), "Tag the commit with \\#");
        assert_eq!(md_heading("Prefer C# over F#"), "Prefer C# over F#");
    }

    #[test]
    fn a_bullet_and_a_block_line_render_their_text_as_written() {
        let mut l = lessons()[0].clone();
        l.text = "# Never commit .env files, nor Vec<u8> dumps".into();
        (l.kind, l.reasons) = (Kind::Do, Vec::new());
        assert!(rule_line(&l).starts_with("- \\# Never commit .env files, nor Vec\\<u8> dumps (id: "));
        assert_eq!(
            block_line(&l),
            format!(
                "- \\# Never commit .env files, nor Vec\\<u8> dumps (id: {})",
                l.id
            )
        );
        // After a lead-in the text no longer opens the line.
        l.kind = Kind::Watch;
        assert!(block_line(&l).starts_with("- Watch out: # Never commit"));
        assert!(rule_line_with(&l, "Watch out: ").starts_with("- Watch out: # Never commit"));
    }

    /// A block line says a lesson's kind once: an agent's own lead-in ("Watch out:", "Avoid:",
    /// "Never …") is not repeated, and a dead end keeps its reason unless its text gives it.
    #[test]
    fn block_text_says_the_kind_once() {
        let lesson = |kind: Kind, text: &str, reason: Option<&str>| Lesson {
            kind,
            text: text.into(),
            reasons: reason.into_iter().map(String::from).collect(),
            ..lessons()[0].clone()
        };
        for (kind, text, reason, shown) in [
            (Kind::Do, "Run npm ci in CI.", None, "Run npm ci in CI."),
            (
                Kind::Watch,
                "next/image needs remotePatterns for external hosts",
                None,
                "Watch out: next/image needs remotePatterns for external hosts",
            ),
            (
                Kind::Watch,
                "Watch out: `next/image` needs `remotePatterns`",
                None,
                "Watch out: `next/image` needs `remotePatterns`",
            ),
            (
                Kind::Watch,
                "Gotcha: Celery retries re-run the task body",
                None,
                "Gotcha: Celery retries re-run the task body",
            ),
            (
                Kind::Watch,
                "Watch for stale .pyc files after switching branches",
                None,
                "Watch for stale .pyc files after switching branches",
            ),
            (
                Kind::Watch,
                "Watchdog timers reset on SIGHUP",
                None,
                "Watch out: Watchdog timers reset on SIGHUP",
            ),
            (
                Kind::Avoid,
                "npm i --force",
                Some("it hides peer-dependency conflicts"),
                "Avoid: npm i --force — it hides peer-dependency conflicts",
            ),
            (
                Kind::Avoid,
                "Avoid: `npm i --force`",
                Some("it hides peer-dependency conflicts"),
                "Avoid: `npm i --force` — it hides peer-dependency conflicts",
            ),
            (
                Kind::Avoid,
                "Never run terraform apply without a saved plan",
                None,
                "Never run terraform apply without a saved plan",
            ),
            (
                Kind::Avoid,
                "Neverending retry loop",
                None,
                "Avoid: Neverending retry loop",
            ),
            (Kind::Avoid, "avoid", None, "avoid"),
            (
                Kind::Avoid,
                "Don't pin pydantic<2 — FastAPI needs pydantic 2.",
                Some("fastapi needs pydantic 2"),
                "Don't pin pydantic<2 — FastAPI needs pydantic 2.",
            ),
        ] {
            assert_eq!(block_text(&lesson(kind, text, reason)), shown);
        }
    }

    #[test]
    fn an_output_file_is_the_same_only_when_every_byte_is() {
        let dir = std::env::temp_dir().join(format!("skillc-same-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.json");
        // Longer than one comparison block, so the block loop runs more than once.
        let ledger = "{\"id\":\"L1a2b3c4d5e6f\",\"text\":\"Run go vet before go test.\"},\n".repeat(40_000);
        std::fs::write(&path, &ledger).unwrap();
        let one = |s: &str| vec![s.to_string()];
        assert!(same_contents(&path, &one(&ledger)));
        // In pieces cut anywhere, as the ledger's chunks are.
        let (a, rest) = ledger.split_at(7);
        let (b, c) = rest.split_at(1_500_001);
        assert!(same_contents(
            &path,
            &[a.into(), b.into(), String::new(), c.into()]
        ));
        let mut changed = ledger.clone().into_bytes();
        let last = changed.len() - 3;
        changed[last] = b'X';
        let changed = String::from_utf8(changed).unwrap();
        assert!(
            !same_contents(&path, &one(&changed)),
            "one byte differs near the end"
        );
        assert!(
            !same_contents(&path, &[a.into(), c.into(), b.into()]),
            "pieces out of order"
        );
        assert!(!same_contents(&path, &one(&ledger[1..])), "shorter");
        assert!(!same_contents(&path, &one(&format!("{ledger} "))), "longer");
        assert!(!same_contents(&dir.join("missing.json"), &[]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `write` into an output directory that holds part of its tree already: files in the
    /// directories it makes are written without a look for an old copy; in a directory that was
    /// there, a file with the same bytes is left alone (the same inode) and one that differs is
    /// replaced; a second write changes nothing.
    #[cfg(unix)]
    #[test]
    fn a_write_looks_for_old_files_only_in_directories_it_did_not_make() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("skillc-emit-made-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = dir.join("out");
        let old = |path: &str, text: &str| {
            let path = out.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let cargo = "---\nname: cargo\n---\n- Run `cargo build --locked` in CI (id: L0002430582b9)\n";
        old("projects/5cbdc041e36a/cargo/SKILL.md", cargo);
        old(
            "projects/5cbdc041e36a/git/SKILL.md",
            "- Run `git pull --rebase` first\n",
        );
        let files = [
            OutFile::new("projects/5cbdc041e36a/cargo/SKILL.md", cargo.to_string()),
            OutFile::new(
                "projects/5cbdc041e36a/git/SKILL.md",
                "- Run `git fetch` before `git push`\n".into(),
            ),
            OutFile::new(
                "projects/5cbdc041e36a/git/references/EVIDENCE.md",
                "# Evidence: git\n".into(),
            ),
            OutFile::new(
                "projects/9fd8ad6bce65/pytest/SKILL.md",
                "- Run `pytest -x` first\n".into(),
            ),
            OutFile::new(
                "projects/9fd8ad6bce65/pytest/references/EVIDENCE.md",
                "# Evidence: pytest\n".into(),
            ),
            OutFile::new(
                "terraform/SKILL.md",
                "- Run `terraform plan` before apply\n".into(),
            ),
            OutFile::new(
                "lessons/global.md",
                "- Avoid `kubectl delete` on shared namespaces\n".into(),
            ),
        ];
        let refs: Vec<&OutFile> = files.iter().collect();
        let inode = || std::fs::metadata(out.join(&files[0].path)).unwrap().ino();
        let before = inode();
        assert_eq!(write(&out, &refs).unwrap(), 6);
        for f in &files {
            assert_eq!(
                std::fs::read_to_string(out.join(&f.path)).unwrap(),
                f.pieces[0],
                "{}",
                f.path
            );
        }
        assert_eq!(inode(), before, "the unchanged SKILL.md is left alone");
        assert_eq!(write(&out, &refs).unwrap(), 0, "a second write changes nothing");

        // What a write knows: the directories it made, and that nothing below them was there.
        let made = Made::new(&out);
        let project = out.join("projects/5cbdc041e36a");
        made.create(&project.join("npm/references")).unwrap();
        assert!(made.below(&project.join("npm")) && made.below(&project.join("npm/references")));
        assert!(!made.below(&project) && !made.below(&project.join("git/references")));
        made.create(&out.join("projects/e12f277d61cf/kubectl")).unwrap();
        assert!(made.below(&out.join("projects/e12f277d61cf/kubectl/references")));
        assert!(!made.below(&out.join("projects")) && !made.below(&out));
        made.create(&project.join("git")).unwrap();
        assert!(!made.below(&project.join("git")), "it was there");
        assert!(project.join("npm/references").is_dir());
        let _ = std::fs::remove_dir_all(&dir);
    }

    use crate::diagnostics::codes;
    use crate::model::{HistoryEntry, Ids, SourceLoc};
    use serde_json::Value;

    /// The ledger object as serde derives it: the reference the hand-written one must equal.
    #[derive(serde::Serialize)]
    struct LedgerLesson<'a> {
        id: &'a str,
        kind: &'static str,
        text: &'a str,
        domain: &'a str,
        scope: &'a str,
        operation_key: Option<&'a str>,
        status: &'static str,
        reason: Option<&'a str>,
        confidence: Value,
        reinforcement: u32,
        rule: bool,
        pinned: bool,
        blessed: bool,
        evidence: &'a [crate::model::Id],
        projects: &'a [String],
        superseded_by: Option<&'a str>,
        supersedes: Option<&'a str>,
        founder: &'a str,
        cluster: &'a str,
        admitted_at: String,
        last_used: String,
        working_args: Option<&'a str>,
        reasons: &'a [String],
        history: Vec<LedgerEvent<'a>>,
    }

    #[derive(serde::Serialize)]
    struct LedgerEvent<'a> {
        at: String,
        event: &'static str,
        confidence: Value,
        experiences: &'a [crate::model::Id],
        detail: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        idle_days: Option<u16>,
        #[serde(skip_serializing_if = "Option::is_none")]
        idle_confidence: Option<Value>,
    }

    fn ledger_lesson(l: &Lesson) -> LedgerLesson<'_> {
        LedgerLesson {
            id: &l.id,
            kind: l.kind.as_str(),
            text: &l.text,
            domain: &l.domain,
            scope: &l.scope,
            operation_key: l.operation_key.as_deref(),
            status: l.status.as_str(),
            reason: l.reason.as_deref(),
            confidence: confidence_value(l.confidence),
            reinforcement: l.reinforcement,
            rule: l.rule,
            pinned: l.pinned,
            blessed: l.blessed,
            evidence: &l.evidence,
            projects: &l.projects,
            superseded_by: l.superseded_by.as_deref(),
            supersedes: l.supersedes.as_deref(),
            founder: &l.founder,
            cluster: &l.cluster,
            admitted_at: crate::time::format_rfc3339(l.admitted_at),
            last_used: format_day(l.last_used_day),
            working_args: l.working.as_deref(),
            reasons: &l.reasons,
            history: l
                .history
                .iter()
                .map(|h| LedgerEvent {
                    at: crate::time::format_rfc3339(h.at),
                    event: h.event.as_str(),
                    confidence: confidence_value(h.confidence),
                    experiences: &h.experiences,
                    detail: h.detail.as_deref(),
                    idle_days: (h.idle_days > 0).then_some(h.idle_days),
                    idle_confidence: (h.idle_days > 0)
                        .then(|| confidence_value(i32::from(h.idle_confidence))),
                })
                .collect(),
        }
    }

    /// The diagnostic object as serde derives it (the reference).
    #[derive(serde::Serialize)]
    struct DiagnosticView<'a> {
        code: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        domain: Option<&'a str>,
        evidence: &'a crate::diagnostics::Evidence,
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<&'a str>,
        help: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        message: &'a str,
        name: &'static str,
        severity: &'static str,
        subject: &'a str,
    }

    fn diagnostic_view(d: &Diagnostic) -> DiagnosticView<'_> {
        DiagnosticView {
            code: d.code,
            domain: d.domain.as_deref(),
            evidence: &d.evidence,
            file: d.location.as_ref().map(|l| &*l.file),
            help: d.help,
            line: d.location.as_ref().map(|l| l.line),
            message: &d.message,
            name: d.name(),
            severity: d.severity.as_str(),
            subject: &d.subject,
        }
    }

    #[test]
    fn a_description_names_tools_not_english_words_or_subcommands() {
        let tables = Rules::builtin();
        let rule = |text: &str| Lesson {
            text: text.into(),
            ..lessons()[0].clone()
        };
        let rules = [
            rule(
                "Make sure the kind of cluster matches; go back to the old context and fetch the kubeconfig again.",
            ),
            rule("Run `go test -race ./...` before merging; kind load docker-image avoids a registry push."),
            rule("Use git fetch --prune and `uv pip compile`, then run npm ci in the Dockerfile."),
            rule("Prefer kubectl apply --server-side for CRDs; kubectl diff shows drift."),
            rule("Timestamps without a zone are read as UTC; Integers overflow at 2^31."),
        ];
        let refs: Vec<&Lesson> = rules.iter().collect();
        // `go` counts as a command in code, `kind` before no flag stays a word, `fetch` and `pip`
        // are subcommands, `docker-image` is no `docker`, and the domain (`git` here) is not
        // named; a tool named twice in one rule counts once; a word that only sometimes names
        // one (`timestamp`) is no tool in any inflection or case ("Timestamps", "Integers").
        assert_eq!(tools_named("git", &refs, &tables), ["go", "uv", "npm", "kubectl"]);
        assert_eq!(tools_phrase(&tools_named("git", &refs[..1], &tables)), "");
        assert_eq!(tools_named("postgres", &refs[4..], &tables), Vec::<String>::new());
        assert_eq!(
            tools_phrase(&["pytest".into(), "ruff".into()]),
            ", especially with pytest or ruff"
        );
    }

    fn lessons() -> Vec<Lesson> {
        let founded = Lesson {
            id: "L3f9a0c21b7de".into(),
            kind: Kind::Do,
            text: "Run `cargo test --locked` so CI uses the \"pinned\" lockfile.".into(),
            domain: "rust".into(),
            scope: "global".into(),
            operation_key: None,
            status: Status::Active,
            reason: None,
            confidence: 650,
            reinforcement: 3,
            rule: true,
            pinned: false,
            blessed: true,
            evidence: vec![
                "exp-api-0041".into(),
                "exp-web-0107".into(),
                "exp-cli-0220".into(),
            ],
            projects: vec!["2220c74b0067".into(), "a62eba3a0820".into()],
            superseded_by: None,
            supersedes: Some("L8d5de8116429".into()),
            founder: "exp-api-0041".into(),
            cluster: "Cf712f9a09f39".into(),
            admitted_at: 1_735_689_600_123,
            last_used_day: 20_100,
            working: None,
            reasons: vec![],
            history: vec![
                HistoryEntry {
                    at: 1_735_689_600_123,
                    event: crate::model::Event::Admitted,
                    confidence: 500,
                    experiences: Ids::One("exp-api-0041".into()),
                    detail: Some("after L8d5de8116429".into()),
                    idle_days: 3,
                    idle_confidence: 440,
                },
                HistoryEntry {
                    at: 1_736_000_000_000,
                    event: crate::model::Event::Promoted,
                    confidence: 650,
                    experiences: Ids::NONE,
                    detail: None,
                    idle_days: 0,
                    idle_confidence: 0,
                },
            ],
        };
        let superseded = Lesson {
            id: "L00004f846540".into(),
            kind: Kind::Avoid,
            text: "pip install\tinto the system\\site-packages\n(no venv) \u{1}é🚀".into(),
            domain: "python".into(),
            scope: "project:d8c1d8483848".into(),
            operation_key: Some("pip install".into()),
            status: Status::Superseded,
            reason: Some("confidence decayed below the floor (unused on active days)".into()),
            confidence: 180,
            reinforcement: 1,
            rule: false,
            pinned: true,
            blessed: false,
            evidence: vec!["g674eec-00419749".into()],
            projects: vec!["d8c1d8483848".into()],
            superseded_by: Some("L00015b4087a1".into()),
            supersedes: None,
            founder: "g674eec-00419749".into(),
            cluster: "Ca267e0390b2d".into(),
            admitted_at: 1_722_518_572_000,
            last_used_day: 19_936,
            working: Some("{\"args\":[\"--user\"]}".into()),
            reasons: vec!["upstream dropped support for it".into(), "it \"hangs\"".into()],
            history: vec![],
        };
        vec![founded, superseded]
    }

    /// The walk-back's look-ahead reads one byte of each text a line under "Superseded and
    /// retired" prints (a lesson with every optional text and one with none), and nothing of
    /// the history the line leaves out: a lesson whose history differs reads the same.
    #[test]
    fn a_gone_lesson_s_look_ahead_reads_the_texts_its_line_prints() {
        let first = |s: &str| s.as_bytes().first().copied().unwrap_or(0);
        for l in lessons() {
            let evidence = md_with_gone(&l);
            let at = (evidence.find(&format!("\n- {} — ", l.id))).expect("the gone lesson's line");
            let line = &evidence[at..];
            let mut printed = vec![l.id.as_str(), l.text.as_str()];
            printed.extend(l.superseded_by.as_deref());
            printed.extend(l.reason.as_deref());
            printed.extend(l.evidence.iter().map(|e| &**e));
            for text in &printed {
                assert!(line.contains(text), "{text:?} not in {line:?}");
            }
            let expected = printed.iter().fold(0, |x, t| x ^ first(t));
            assert_eq!(gone_bytes(&l), expected);
            let mut other = l.clone();
            other.history.clear();
            other.cluster = "Cffffffffffff".into();
            other.projects.push("ffffffffffff".into());
            assert_eq!(gone_bytes(&other), expected);
        }
    }

    /// EVIDENCE.md for one rule, walking back through `gone`.
    fn md_with_gone(gone: &Lesson) -> String {
        let rule = &lessons()[0];
        evidence_md("global", "rust", &[rule], &[gone])
    }

    #[test]
    fn ledger_objects_are_serde_json_s_bytes() {
        for l in lessons() {
            let mut mine = Vec::new();
            write_lesson(&mut mine, &l, &Confidences::new());
            let reference = serde_json::to_string(&ledger_lesson(&l)).unwrap();
            assert_eq!(String::from_utf8(mine).unwrap(), reference);
        }
    }

    /// The rows the store takes are the ledger's lines after the header that hold a lesson,
    /// each one lesson's object, across chunks (after a chunk's first, a row follows a `,\n`).
    #[test]
    fn ledger_rows_are_its_lesson_lines() {
        let base = lessons();
        let many: Vec<Lesson> = (0..4100).map(|i| base[i % base.len()].clone()).collect();
        let confidences = Confidences::new();
        for lessons in [&many[..], &many[..1], &[]] {
            let ledger = ledger(lessons);
            let rows: Vec<&str> = ledger.rows().collect();
            let text = ledger.file.text();
            let lines: Vec<&str> = (text.lines().skip(1))
                .filter(|l| l.starts_with('{'))
                .map(|l| l.strip_suffix(',').unwrap_or(l))
                .collect();
            assert_eq!(rows, lines);
            assert_eq!(rows.len(), lessons.len());
            for (row, l) in rows.iter().zip(lessons) {
                let mut one = Vec::new();
                write_lesson(&mut one, l, &confidences);
                assert_eq!(row.as_bytes(), one);
            }
        }
    }

    #[test]
    fn stamps_are_format_rfc3339_s_strings() {
        let mut stamps = Stamps::new();
        let day = 86_400_000;
        let times = [
            0,
            1,
            999,
            1_735_689_600_123,
            1_735_689_600_000,
            1_735_689_659_999,
            1_735_689_600_000 + day - 1,
            1_736_000_000_000,
            -1,
            -day,
            -62_167_219_200_001,
            253_402_300_800_000,
            20_100 * day + 45_296_007,
        ];
        for ms in times.into_iter().chain(times.into_iter().rev()) {
            let mut mine = Vec::new();
            stamps.push(&mut mine, ms);
            let mut reference = Vec::new();
            json::string(&mut reference, &crate::time::format_rfc3339(ms));
            assert_eq!(
                String::from_utf8(mine).unwrap(),
                String::from_utf8(reference).unwrap()
            );
        }
    }

    /// A search by prefix finds what a search through the ids finds, the same one of two
    /// lessons with one id too: ids longer than a prefix, sharing one, ending inside one.
    #[test]
    fn ledger_ids_find_what_a_search_of_the_ids_finds() {
        let mut ids: Vec<String> = ["L00004f846540", "L00004f846541", "Lshort", "L", "", "L\u{0}"]
            .map(String::from)
            .to_vec();
        for i in 0..40 {
            ids.push(format!("project:shared-prefix-{i:03}"));
            ids.push(format!("L{:012x}", i * 7919));
        }
        ids.push("L00004f846540".into());
        ids.sort();
        let ledger: Vec<Lesson> = (ids.iter())
            .map(|id| Lesson {
                id: id.clone(),
                ..lessons()[0].clone()
            })
            .collect();
        let by_prefix = LedgerIds::new(&ledger);
        let wanted = (ids.iter().map(String::as_str)).chain([
            "L00004f84654",
            "project:shared-prefix-",
            "zzz",
            "\u{0}",
        ]);
        for id in wanted {
            let searched = ledger.binary_search_by(|l| l.id.as_str().cmp(id)).ok();
            let found = by_prefix.find(id).map(|l| l as *const Lesson);
            assert_eq!(found, searched.map(|at| &ledger[at] as *const Lesson), "{id:?}");
        }
    }

    #[test]
    fn confidences_are_serde_json_s_numbers() {
        let table = Confidences::new();
        for t in [
            i32::MIN,
            -1,
            0,
            1,
            7,
            99,
            100,
            440,
            650,
            999,
            1000,
            1001,
            i32::MAX,
        ] {
            let reference = serde_json::to_string(&confidence_value(t)).unwrap();
            assert_eq!(table.text(t), reference, "{t}");
        }
    }

    #[test]
    fn diagnostic_objects_are_serde_json_s_bytes() {
        let at = SourceLoc {
            file: "memory/2026-11/run \"7\".jsonl".into(),
            line: 4937,
        };
        let diags = [
            Diagnostic::new(
                codes::MALFORMED_RECORD,
                "line is not valid json: EOF while parsing a string",
            )
            .subject("memory/2026-11/run.jsonl")
            .at(&at)
            .with("column", 422),
            Diagnostic::new(codes::OUTCOME_GATE, "held back: 3 candidates from failed runs")
                .subject("Cf712f9a09f39")
                .domain("typescript")
                .with("ratio", 0.65)
                .with("tool", "npm ci\t--prefer-offline")
                .experiences(["exp-web-0107", "exp-api-0041"]),
            Diagnostic::new(codes::NO_CANDIDATES, "no candidates").subject("go"),
        ];
        for d in &diags {
            let mut mine = Vec::new();
            write_diagnostic(&mut mine, d);
            let reference = serde_json::to_string(&diagnostic_view(d)).unwrap();
            assert_eq!(String::from_utf8(mine).unwrap(), reference);
        }
    }

    /// Two blessed rules in one project's `terraform` domain, rendered with a SKILL.md budget
    /// of `skill_lines` (set on the struct: the YAML loader refuses budgets this small).
    fn rendered_with(skill_lines: usize) -> (Vec<OutFile>, Sink) {
        const RECORDS: &str = r#"{"id": "tf-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["terraform"], "project": "git@github.com:acme/infra.git", "outcome": "succeeded", "blessed": true, "lesson": "Run terraform plan -out=tfplan and apply that file, so the apply is what was reviewed."}
{"id": "tf-2", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["terraform"], "project": "git@github.com:acme/infra.git", "outcome": "succeeded", "blessed": true, "lesson": "Set lifecycle.prevent_destroy on the state bucket so a plan never drops it."}
"#;
        let mut rules = Rules::builtin();
        rules.policy.caps.skill_lines = skill_lines;
        let mut sink = Sink::new();
        let opts = crate::load::LoadOptions::default();
        let corpus = crate::load::load_texts(&[("tf.jsonl", RECORDS)], &opts, &mut sink);
        let comp = crate::pipeline::compile(corpus, sink, &rules, &Default::default());
        assert_eq!(comp.rules().count(), 2);
        let mut sink = Sink::new();
        (render(&comp, &rules, &mut sink), sink)
    }

    #[test]
    fn min_skill_lines_is_exactly_a_skill_md_with_one_rule() {
        let (files, sink) = rendered_with(MIN_SKILL_LINES);
        let skill = files
            .iter()
            .find(|f| f.path.ends_with("terraform/SKILL.md"))
            .unwrap()
            .text();
        assert_eq!(skill.lines().count(), MIN_SKILL_LINES, "{skill}");
        assert!(skill.contains("  rules: \"1\"\n"), "{skill}");
        assert_eq!(skill.lines().filter(|l| l.starts_with("- ")).count(), 1);
        let e001: Vec<_> = sink.iter().filter(|d| d.code == codes::SKILL_TOO_LONG).collect();
        assert_eq!(e001.len(), 1);
    }

    #[test]
    fn a_skill_md_that_could_hold_no_rule_is_not_written() {
        let (files, sink) = rendered_with(MIN_SKILL_LINES - 1);
        // No rules, no file (DESIGN §7), and no EVIDENCE.md for a SKILL.md that is not there.
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert!(!paths.iter().any(|p| p.contains("terraform/")), "{paths:?}");
        assert!(
            paths.iter().any(|p| p.starts_with("lessons/project-")),
            "{paths:?}"
        );
        let e001: Vec<_> = sink.iter().filter(|d| d.code == codes::SKILL_TOO_LONG).collect();
        assert_eq!(e001.len(), 1);
        assert!(
            e001[0]
                .message
                .contains("2 lowest-confidence rules left out, so the file is not written")
        );
    }

    /// A SKILL.md over its line budget keeps exactly the strongest rules that fit, as giving
    /// them up one at a time would: sections empty out (a kind's header goes with its last
    /// rule), so a cut may free more than one line.
    #[test]
    fn a_long_skill_keeps_the_strongest_rules_that_fit() {
        let kinds = [Kind::Do, Kind::Watch, Kind::Avoid];
        let rules: Vec<Lesson> = (0..90)
            .map(|i| Lesson {
                id: format!("L{i:012x}"),
                // The weakest are a section of their own (avoid), then watch, then do.
                kind: kinds[(i / 30) as usize],
                text: format!("Set lifecycle.prevent_destroy on module_{i}.bucket so a plan never drops it."),
                confidence: 900 - i,
                ..lessons()[0].clone()
            })
            .collect();
        let refs: Vec<&Lesson> = rules.iter().collect();
        let tables = Rules::builtin();
        let with = tools_phrase(&tools_named("terraform", &refs, &tables));
        let one_at_a_time = |max: usize| {
            let mut kept = refs.clone();
            let mut left_out = Vec::new();
            while !kept.is_empty() {
                let text = skill_text("global", "terraform", &kept, &with);
                if text.lines().count() <= max {
                    return (Some(text), left_out);
                }
                left_out.push(kept.pop().unwrap());
            }
            (None, left_out)
        };
        let full = skill_text("global", "terraform", &refs, &with).lines().count();
        for max in [
            0,
            5,
            20,
            21,
            22,
            23,
            40,
            61,
            62,
            63,
            64,
            80,
            full - 1,
            full,
            full + 3,
        ] {
            let (text, left_out) = skill_md("global", "terraform", &refs, &tables, max);
            let (want_text, want_left_out) = one_at_a_time(max);
            assert_eq!(text, want_text, "budget {max}");
            let ids = |v: &[&Lesson]| v.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
            assert_eq!(ids(&left_out), ids(&want_left_out), "budget {max}");
        }
        // Some budgets cut inside a section and some leave nothing.
        assert!(skill_md("global", "terraform", &refs, &tables, 5).0.is_none());
        assert!(skill_md("global", "terraform", &refs, &tables, 40).0.is_some());
    }
}
