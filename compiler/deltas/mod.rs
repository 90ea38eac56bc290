//! Skill deltas: staged overlay rows that add a domain's global rules to a skill a person wrote.
//!
//! `--base-skills DIR` names authored skills (`DIR/<name>/SKILL.md`). For each whose directory
//! name or frontmatter `name` is a compiled domain, `compute` writes `deltas/<name>.json`: rows a
//! person approves, each anchored on a section of the authored body by slug and digest, so a row
//! never applies over text that changed since. `resolve` applies rows to the authored text.
//! Everything here is pure except `read_base_skills`.

pub mod markdown;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use serde_json::{Value, json};

use crate::cluster::Lexicon;
use crate::diagnostics::{Diagnostic, codes};
use crate::digest;
use crate::emit::{GENERATOR, OutFile};
use crate::model::{Kind, Lesson, Status};
use crate::normalize::Aliases;
use crate::policy::{Policy, Rules};

pub use markdown::{Section, digest_of, sections, slug, split_frontmatter};

/// The slug of the section rules go into when the authored skill has one.
pub const LEARNED_LESSONS: &str = "learned-lessons";
/// The heading a snippet row adds after the authored body.
pub const LEARNED_HEADING: &str = "## Learned lessons";
pub const REPLACE_SECTION: &str = "replace_section";
pub const REPLACE_SNIPPET: &str = "replace_snippet";
pub const STAGED: &str = "staged";

/// A skill a person wrote: `DIR/<name>/SKILL.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseSkill {
    /// The directory name.
    pub name: String,
    /// The SKILL.md path, for messages.
    pub path: String,
    pub text: String,
}

/// Reads `dir/<name>/SKILL.md` for every subdirectory that has one, sorted by name. A SKILL.md
/// that cannot be read (permissions, not UTF-8) is an L007 and gets no delta; the run goes on.
/// Only `dir` itself being unreadable is an error.
pub fn read_base_skills(dir: &Path) -> std::io::Result<(Vec<BaseSkill>, Vec<Diagnostic>)> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let skill = entry.path().join("SKILL.md");
        if !entry.path().is_dir() || !skill.is_file() {
            continue;
        }
        let path = skill.display().to_string();
        match std::fs::read_to_string(&skill) {
            Ok(text) => out.push(BaseSkill {
                name: entry.file_name().to_string_lossy().into_owned(),
                path,
                text,
            }),
            Err(e) => {
                let why = match e.kind() {
                    std::io::ErrorKind::InvalidData => "file is not UTF-8 text".to_string(),
                    _ => format!("cannot read file: {}", crate::load::io_message(&e)),
                };
                diags.push(Diagnostic::about_file(
                    codes::UNREADABLE_FILE,
                    format!("authored skill left without a delta: {why}"),
                    &path,
                ));
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    Ok((out, diags))
}

/// The compiled domain an authored skill belongs to: its directory name when that is a domain,
/// else its frontmatter `name` when that is one, else either as records' domains are read
/// (`rules/aliases.yaml`: a skill named `k8s` is the kubernetes skill, as a record tagged `k8s`
/// is a kubernetes record).
pub fn matched_domain(skill: &BaseSkill, domains: &BTreeSet<&str>, aliases: &Aliases) -> Option<String> {
    let named = markdown::frontmatter_name(&skill.text);
    let raw = std::iter::once(skill.name.as_str()).chain(named.as_deref());
    let exact = raw.clone().find(|n| domains.contains(n)).map(str::to_string);
    exact.or_else(|| {
        raw.filter_map(|n| crate::normalize::domain(n, aliases).ok())
            .find(|d| domains.contains(d.as_str()))
    })
}

/// One `deltas/<name>.json` per authored skill that matches a domain with global rules and
/// gets at least one row, sorted by path; one E002 per skill whose rules did not all fit, and
/// an E004 per withdrawn rule a skill still carries. `lessons` is the ledger, sorted by id;
/// `refounded` maps the old id of each re-founded lesson (S004) to its new one, so a rule a
/// skill carries under the id it had when it was merged is still the same rule. `rules` gives
/// the delta budget (`policy.deltas`), the domain aliases a skill's name is read with, and
/// clustering's lexicon: a rule the skill states in words it would take for the same lesson is
/// not proposed.
pub fn compute(
    base: &[BaseSkill],
    lessons: &[Lesson],
    refounded: &BTreeMap<String, String>,
    rules: &Rules,
) -> (Vec<OutFile>, Vec<Diagnostic>) {
    let (policy, lexicon) = (&rules.policy, &rules.lexicon);
    let domains: BTreeSet<&str> = lessons.iter().map(|l| l.domain.as_str()).collect();
    let mut skills: Vec<&BaseSkill> = base.iter().collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    let mut files = Vec::new();
    let mut diags = Vec::new();
    for skill in skills {
        diags.extend(spec_problems(skill));
        let Some(domain) = matched_domain(skill, &domains, &rules.aliases) else {
            diags.push(unmatched(skill, &domains));
            continue;
        };
        let (rows, diag) = skill_rows(skill, &domain, lessons, refounded, policy, lexicon);
        diags.extend(diag);
        if rows.is_empty() {
            continue;
        }
        files.push(OutFile::new(
            format!("deltas/{}.json", skill.name),
            delta_json(&rows),
        ));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    diags.extend(withdrawn_rules(base, lessons, refounded));
    (files, diags)
}

/// E005 for an authored skill that matches no domain: it gets no delta, and the note says so
/// rather than leaving it out in silence. A domain that is one of the name's words
/// (`git-workflow`) is the likely match.
fn unmatched(skill: &BaseSkill, domains: &BTreeSet<&str>) -> Diagnostic {
    let likely: Vec<&str> = (skill.name.split(['-', '_', '.']))
        .map(|w| w.to_ascii_lowercase())
        .filter_map(|w| domains.get(w.as_str()).copied())
        .collect();
    let hint = match &likely[..] {
        [] => String::new(),
        some => format!("; did you mean {}?", some.join(" or ")),
    };
    let d = Diagnostic::new(
        codes::UNMATCHED_SKILL,
        format!(
            "authored skill {} matches no domain with lessons{hint}",
            skill.name
        ),
    )
    .at(&at_line(skill, name_line(&skill.text)))
    .subject(&skill.name)
    .with("name", skill.name.as_str())
    .with("path", skill.path.as_str());
    if likely.is_empty() {
        d
    } else {
        d.with("did_you_mean", likely)
    }
}

/// The line of the frontmatter's `name` (what the skill is matched by), else 1 (the folder
/// name is used, and the file is the place to add one).
fn name_line(text: &str) -> usize {
    markdown::key_line(text, "name").unwrap_or(1)
}

/// Line `line` (1-based) of `skill`'s SKILL.md.
fn at_line(skill: &BaseSkill, line: usize) -> crate::model::SourceLoc {
    crate::model::SourceLoc {
        file: skill.path.as_str().into(),
        line: u32::try_from(line).unwrap_or(u32::MAX),
    }
}

/// The most characters the Agent Skills specification allows a `description`.
const DESCRIPTION_MAX: usize = 1024;

/// E007 for each way an authored skill's frontmatter breaks the Agent Skills specification,
/// at its line: no frontmatter or none closed, YAML that does not parse, a `name` missing,
/// malformed or not its directory's name, a `description` missing, empty or too long. The
/// skill is still matched (directory name first) and gets its delta; the author learns what
/// an agent loading it by the specification would trip on.
pub fn spec_problems(skill: &BaseSkill) -> Vec<Diagnostic> {
    let at = |line: usize, message: String| {
        Diagnostic::new(
            codes::INVALID_AUTHORED_SKILL,
            format!("authored skill {} {message}", skill.name),
        )
        .at(&at_line(skill, line))
        .subject(&skill.name)
        .with("path", skill.path.as_str())
    };
    let front = match markdown::frontmatter(&skill.text) {
        markdown::Frontmatter::Mapping(m) => m,
        markdown::Frontmatter::Missing => {
            return vec![at(
                1,
                "has no frontmatter; the Agent Skills specification requires one opening the file between `---` lines, with a name and a description".into(),
            )];
        }
        markdown::Frontmatter::Unclosed => {
            return vec![at(
                1,
                "opens a frontmatter with `---` that no `---` line closes".into(),
            )];
        }
        markdown::Frontmatter::Invalid { line, message } => {
            return vec![at(
                line,
                format!("has frontmatter that is not valid YAML: {message}"),
            )];
        }
    };
    let line_of = |key: &str| markdown::key_line(&skill.text, key).unwrap_or(1);
    let mut out = Vec::new();
    match front.get("name") {
        None => out.push(at(1, "has no `name` in its frontmatter".into())),
        Some(serde_yaml::Value::Null) => out.push(at(line_of("name"), "has an empty `name`".into())),
        Some(serde_yaml::Value::String(name)) => {
            let valid = !name.is_empty()
                && name.chars().count() <= 64
                && (name.split('-')).all(|w| {
                    !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                });
            if !valid {
                out.push(
                    at(
                        line_of("name"),
                        format!(
                            "has the name {name:?}, which is not 1 to 64 lower-case letters, digits and single hyphens"
                        ),
                    )
                    .with("name", name.as_str()),
                );
            } else if *name != skill.name {
                out.push(
                    at(
                        line_of("name"),
                        format!(
                            "is named {name} in its frontmatter; the Agent Skills specification requires the name to equal the directory name"
                        ),
                    )
                    .with("name", name.as_str()),
                );
            }
        }
        Some(_) => out.push(at(line_of("name"), "has a `name` that is not a string".into())),
    }
    match front.get("description") {
        None => out.push(at(1, "has no `description` in its frontmatter; agents choose a skill by it".into())),
        Some(d) if d.is_null() || d.as_str().is_some_and(|d| d.trim().is_empty()) => {
            out.push(at(line_of("description"), "has an empty `description`; agents choose a skill by it".into()));
        }
        Some(serde_yaml::Value::String(d)) if d.chars().count() > DESCRIPTION_MAX => out.push(
            at(
                line_of("description"),
                format!(
                    "has a `description` of {} characters, more than the {DESCRIPTION_MAX} the Agent Skills specification allows",
                    d.chars().count()
                ),
            )
            .with("chars", d.chars().count()),
        ),
        Some(serde_yaml::Value::String(_)) => {}
        Some(_) => out.push(at(line_of("description"), "has a `description` that is not a string".into())),
    }
    out
}

/// E004 for each rule an authored skill carries (a delta merged by hand leaves its bullet with
/// `(id: L…)`) that has since been superseded or retired: the skill still tells agents to
/// follow it, and no delta can take a line out of text a person owns.
fn withdrawn_rules(
    base: &[BaseSkill],
    lessons: &[Lesson],
    refounded: &BTreeMap<String, String>,
) -> Vec<Diagnostic> {
    let cited: Vec<(&BaseSkill, Vec<(usize, &str)>)> = (base.iter())
        .map(|s| (s, digest::cited_lesson_ids(&s.text)))
        .collect();
    if cited.iter().all(|(_, ids)| ids.is_empty()) {
        return Vec::new();
    }
    let withdrawn = |id: &str| {
        Lesson::find(lessons, now(refounded, id))
            .filter(|l| matches!(l.status, Status::Superseded | Status::Retired))
    };
    let mut out = Vec::new();
    for (skill, ids) in cited {
        for (line, id) in ids {
            let Some(l) = withdrawn(id) else {
                continue;
            };
            let why = l.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
            // A retired lesson's `superseded_by` says who retired it, not what replaced it.
            let next = (l.superseded_by.as_deref()).filter(|_| l.status == Status::Superseded);
            let instead = next.map(|n| format!("; superseded by {n}")).unwrap_or_default();
            let mut d = Diagnostic::new(
                codes::WITHDRAWN_RULE,
                format!(
                    "authored skill {} carries rule {id}, which is {}{why}{instead}",
                    skill.name,
                    l.status.as_str()
                ),
            )
            .at(&at_line(skill, line))
            .subject(&skill.name)
            .domain(&l.domain)
            .with("lesson", id)
            .with("status", l.status.as_str());
            if let Some(next) = next {
                d = d.with("superseded_by", next);
            }
            out.push(d);
        }
    }
    out
}

/// The id lesson `id` has now: its new one if it was re-founded.
fn now<'a>(refounded: &'a BTreeMap<String, String>, id: &'a str) -> &'a str {
    refounded.get(id).map_or(id, String::as_str)
}

/// `{"generator": "skillc", "version": 1, "rows": [...]}`, pretty, with a trailing newline.
pub fn delta_json(rows: &[Value]) -> String {
    let doc = json!({ "generator": GENERATOR, "version": 1, "rows": rows });
    let mut s = serde_json::to_string_pretty(&doc).expect("delta serialises");
    s.push('\n');
    s
}

/// The global rules of `domain` for a delta, by confidence (desc), then id; rules whose id the
/// authored text already carries (a delta merged by hand) are not proposed again, nor are rules
/// it already states, word for word or in words clustering takes for the same lesson.
fn delta_rules<'a>(
    domain: &str,
    lessons: &'a [Lesson],
    authored: &str,
    refounded: &BTreeMap<String, String>,
    lexicon: &Lexicon,
) -> Vec<&'a Lesson> {
    let merged: BTreeSet<&str> = digest::cited_lesson_ids(authored)
        .into_iter()
        .map(|(_, id)| now(refounded, id))
        .collect();
    // A rule the person already wrote (no id: they did not merge it from a delta) is not
    // proposed again: word for word (lower-cased, whitespace collapsed, without the sentence's
    // final stop), or in words clustering takes for the same lesson — the wording two records
    // gave one lesson ("Pin the base image by digest …" / "Pin base images by digest …") is as
    // likely in a skill a person wrote, and a reviewer would only delete the duplicate. A dead
    // end is stated by a warning against it ("Never run `docker system prune -a` …"), or by a
    // line that gives the same advice from the other side (`same_advice`); a line that names
    // the command, or recommends it, is neither.
    let plain = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let said = plain(authored);
    let statements = statements(authored);
    let warnings: Vec<String> = (statements.iter())
        .filter_map(|s| warned_against(s))
        .map(|s| s.to_string())
        .collect();
    // A statement that warns against a rule's words does not state it ("Never run `terraform
    // apply` with -auto-approve" holds "run `terraform apply` with -auto-approve"): only a
    // statement that is no warning states a do or watch rule word for word, or text outside
    // the statements (a heading, a code block) that no statement repeats.
    let (asserted_plain, statements_plain): (Vec<String>, Vec<String>) = (
        (statements.iter())
            .filter(|s| warned_against(s).is_none())
            .map(|s| plain(s))
            .collect(),
        statements.iter().map(|s| plain(s)).collect(),
    );
    let said_as_is = |text: &str| {
        asserted_plain.iter().any(|s| s.contains(text))
            || (said.contains(text) && !statements_plain.iter().any(|s| s.contains(text)))
    };
    let asserts: Vec<bool> = statements.iter().map(|s| warned_against(s).is_none()).collect();
    let analysed =
        |texts: &[String]| -> Vec<_> { texts.iter().map(|s| lexicon.analyze_warning(s)).collect() };
    let (statements, warnings_plain, warnings) = (
        analysed(&statements),
        warnings.iter().map(|w| plain(w)).collect::<Vec<_>>(),
        analysed(&warnings),
    );
    let stated = |l: &Lesson| {
        let text = match l.kind {
            Kind::Avoid => plain(compared_text(l)),
            _ => plain(&l.text),
        };
        let text = text.trim_end_matches(['.', '!', ';']);
        if text.is_empty() {
            return false;
        }
        let (word_for_word, other_words) = if l.kind == Kind::Avoid {
            (warnings_plain.iter().any(|w| w.contains(text)), &warnings)
        } else {
            (said_as_is(text), &statements)
        };
        word_for_word
            || {
                let rule = lexicon.analyze_warning(compared_text(l));
                (other_words.iter()).any(|s| crate::cluster::same_lesson(lexicon, &rule, s))
                // A dead end the skill already steers away from with a line that says what to
                // do instead ("Run `terraform plan -out=tfplan` and apply that saved plan
                // file" for "running `terraform apply` without a plan file").
                || (l.kind == Kind::Avoid
                    && (statements.iter().zip(&asserts)).any(|(s, &asserts)| asserts && same_advice(s, &rule)))
            }
    };
    let mut rules: Vec<&Lesson> = lessons
        .iter()
        .filter(|l| l.rule && l.scope == "global" && l.domain == domain)
        .filter(|l| !merged.contains(l.id.as_str()) && !stated(l))
        .collect();
    rules.sort_by(|a, b| b.confidence.cmp(&a.confidence).then_with(|| a.id.cmp(&b.id)));
    rules.dedup_by(|a, b| a.id == b.id);
    rules
}

/// What a lesson is compared with an authored skill by: an avoid rule by what it warns
/// against, as the skill's warnings are (a claim's own lead, "Never edit live objects …", is
/// not part of the thing to avoid); any other by what it says.
fn compared_text(l: &Lesson) -> &str {
    match l.kind {
        Kind::Avoid => warned_against(l.said()).unwrap_or(l.said()),
        _ => l.said(),
    }
}

/// Does `said` (a do rule, or a line of a skill that is no warning) give the advice that the
/// avoid rule `avoided` (what it warns against, analysed) gives, from the other side? "Use `git
/// push --force-with-lease` instead of --force …" for "git push --force on a shared branch";
/// "Run `terraform plan -out=tfplan` and apply that saved plan file" for "running `terraform
/// apply` without a plan file". Both must turn on one word the other way round (one side
/// dispreferring or leaving out what the other does: `instead of`, `rather than`, `never`,
/// `without`): every word the avoid rule leaves out the do side does, or every word the do
/// side disprefers the avoid rule does. They must share at least two words, and the do side
/// must name at least two thirds of what the avoid rule names. Opposite advice ("Run
/// migrations without a backup on dev" / "running migrations without a backup") turns on no
/// word, nor does a line that only shares a word of what is left out ("Run `terraform apply`
/// once the plan job is green" names no plan file): neither is a restatement.
fn same_advice(said: &crate::cluster::Analysis, avoided: &crate::cluster::Analysis) -> bool {
    use crate::cluster::{Analysis, Role, Token};
    let refused = |t: &Token| t.role == Some(Role::Negated) || t.left_out;
    let find = |a: &'_ Analysis, t: &Token| a.tokens.iter().any(|u| u.text == t.text && !refused(u));
    // Every word one side refuses, the other takes.
    let turned_on = |side: &Analysis, other: &Analysis| {
        let mut refusals = side.tokens.iter().filter(|t| refused(t)).peekable();
        refusals.peek().is_some() && refusals.all(|t| find(other, t))
    };
    let shared = (avoided.tokens.iter())
        .filter(|t| said.tokens.iter().any(|u| u.text == t.text))
        .count();
    shared >= 2
        && 3 * shared >= 2 * avoided.tokens.len()
        && (turned_on(avoided, said) || turned_on(said, avoided))
}

/// For each avoid rule of `rules` that gives the advice of a do rule of `rules` (`same_advice`),
/// that do rule's id (the first, in the order given): a delta says the advice once.
fn restated_avoids(rules: &[&Lesson], lexicon: &Lexicon) -> BTreeMap<String, String> {
    let dos: Vec<(&str, crate::cluster::Analysis)> = (rules.iter())
        .filter(|l| l.kind == Kind::Do)
        .map(|l| (l.id.as_str(), lexicon.analyze_warning(l.said())))
        .collect();
    let mut out = BTreeMap::new();
    if dos.is_empty() {
        return out;
    }
    for l in rules.iter().filter(|l| l.kind == Kind::Avoid) {
        let avoided = lexicon.analyze_warning(compared_text(l));
        if let Some((id, _)) = dos.iter().find(|(_, d)| same_advice(d, &avoided)) {
            out.insert(l.id.clone(), (*id).to_string());
        }
    }
    out
}

/// What an authored skill states, as clustering would read a lesson: each paragraph and list
/// item of its body outside fenced code and headings (continuation lines joined, the list
/// marker dropped), and each sentence of one that has several. An item that cites a lesson id
/// is left out: the id says which rule it is (a merged rule, or one withdrawn since: E004).
fn statements(authored: &str) -> Vec<String> {
    let mut out: Vec<String> = (located_statements(authored).into_iter())
        .map(|(_, s)| s)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `statements`, each with the line of the skill (1-based, frontmatter counted) its block
/// starts on, in the order of the text.
fn located_statements(authored: &str) -> Vec<(usize, String)> {
    let (front, body) = split_frontmatter(authored);
    let skip = front.matches('\n').count();
    let lines = markdown::body_lines(&body);
    let fenced = markdown::fenced(&lines);
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    // The header cells of the table being read, once its delimiter row is past.
    let mut table: Option<Vec<String>> = None;
    // The level of the heading over a section of things not to do ("## Don'ts"), while in it.
    let mut forbidding: Option<usize> = None;
    for (i, (line, fenced)) in lines.iter().zip(fenced).enumerate() {
        let at = skip + i + 1;
        // A blockquote (`> …`, an admonition's body) says what a paragraph would; an
        // admonition's label (`> **Warning**`, `> [!NOTE]`) is no statement, nor part of one.
        let line = unquote(line);
        let t = strip_label(line.trim());
        if let Some(h) = markdown::heading(t).filter(|_| !fenced) {
            let level = t.len() - t.trim_start_matches('#').len();
            forbidding = forbidding.filter(|&f| level > f);
            if forbidding_heading(h) {
                forbidding = Some(level);
            }
        }
        if fenced || t.is_empty() || markdown::heading(t).is_some() {
            open = false;
            table = None;
            continue;
        }
        if t.starts_with('|') {
            // A table: each cell is a statement at its row's line; a cell under a header that
            // forbids (`Don't`, `Avoid`, `Never`) warns against what it names.
            open = false;
            let cells = table_cells(t);
            if cells.iter().all(|c| is_delimiter_cell(c)) {
                continue;
            }
            let next_is_delimiter = (lines.get(i + 1)).is_some_and(|n| {
                let n = n.trim();
                n.starts_with('|') && table_cells(n).iter().all(|c| is_delimiter_cell(c))
            });
            if next_is_delimiter {
                table = Some(cells);
                continue;
            }
            for (k, cell) in cells.into_iter().enumerate() {
                if cell.is_empty() {
                    continue;
                }
                let header = table.as_ref().and_then(|h| h.get(k)).map(String::as_str);
                let cell = match header.is_some_and(forbidding_header) {
                    true => as_warning(strip_do_label(&cell).map_or(cell.as_str(), |(_, rest)| rest)),
                    false => labelled(&cell),
                };
                blocks.push((at, cell));
            }
            continue;
        }
        table = None;
        if let Some(item) = list_item(t) {
            // An item of a section of things not to do warns against what it names, unless
            // its own label says to do it.
            let item = match (forbidding, strip_do_label(item)) {
                (Some(_), Some((false, rest))) => rest.to_string(),
                (Some(_), Some((true, rest))) => as_warning(rest),
                (Some(_), None) => as_warning(item),
                (None, _) => labelled(item),
            };
            blocks.push((at, item));
            open = true;
        } else if open {
            let (_, last) = blocks.last_mut().expect("an open block");
            last.push(' ');
            last.push_str(t);
        } else {
            blocks.push((at, labelled(t)));
            open = true;
        }
    }
    let mut out = Vec::new();
    for (line, block) in blocks {
        if !digest::cited_lesson_ids(&block).is_empty() {
            continue;
        }
        let sentences = sentences(&block);
        if sentences.len() > 1 {
            out.extend(sentences.into_iter().map(|s| (line, s.to_string())));
        }
        out.push((line, block));
    }
    out
}

/// `line` without its blockquote markers (`>`, `> >`).
fn unquote(line: &str) -> &str {
    let mut t = line.trim_start();
    if !t.starts_with('>') {
        return line;
    }
    while let Some(rest) = t.strip_prefix('>') {
        t = rest.trim_start();
    }
    t
}

static LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:\[!(?:note|tip|important|warning|caution)\]|(?:[\p{So}\p{Sk}\u{fe0f}]\s*)*(?:\*\*|__)?(?:note|tip|important|warning|caution|danger|info|hinweis|achtung|warnung|remarque|attention|nota|aviso)(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?:?)(?:\s+|$)",
    )
    .expect("admonition label pattern")
});

/// `text` without a leading admonition label (`**Note**`, `**Warning:**`, `[!CAUTION]`,
/// `⚠️ **Achtung**`): what follows it is the statement.
fn strip_label(text: &str) -> &str {
    match LABEL.find(text) {
        // A label is followed by nothing, or is marked (bold, brackets, an emoji, a colon):
        // "Note that …" and "Info about …" are sentences, not labels.
        Some(m)
            if m.end() == text.len()
                || m.as_str().contains(['*', '_', '[', ':'])
                || !m.as_str().starts_with(char::is_alphabetic) =>
        {
            text[m.end()..].trim_start()
        }
        _ => text,
    }
}

/// Marks that say "do this" when they lead a list item or paragraph.
const DO_MARKS: &[char] = &['✅', '✔', '☑', '👍', '🟢'];
/// Marks that say "don't do this".
const DONT_MARKS: &[char] = &['❌', '✖', '✗', '✘', '🚫', '⛔', '👎', '🔴'];

/// Label words that make what follows a thing not to do (`**Don't:**`, `Avoid:`, `Nunca:`),
/// longest first so `do not` is not read as `do`.
const DONT_WORDS: &[&str] = &[
    "anti-pattern",
    "vermeiden",
    "niemals",
    "do not",
    "avoid",
    "never",
    "don't",
    "wrong",
    "evitar",
    "nunca",
    "nicht",
    "dont",
    "bad",
    "no",
];
/// Label words that make what follows a thing to do (`**Do:**`, `Always:`, `Immer:`).
const DO_WORDS: &[&str] = &[
    "recommended",
    "siempre",
    "always",
    "prefer",
    "right",
    "immer",
    "good",
    "yes",
    "do",
];

/// A do/don't label leading `text` (a list item's or paragraph's text): a check or cross mark
/// (`✅`, `❌`), a label word in bold or followed by a colon (`**Do:**`, `Don't:`, `**Avoid**`,
/// `Nunca:`), or both (`❌ **Don't:**`). Returns whether the label forbids, and the text after
/// it; none when `text` has no label or nothing follows it. A word that only starts a
/// sentence ("Avoid running …", "Do run …") is no label: the sentence says what it says.
fn strip_do_label(text: &str) -> Option<(bool, &str)> {
    let mut forbids = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if DO_MARKS.contains(&c) {
            forbids = Some(false);
        } else if DONT_MARKS.contains(&c) {
            forbids = Some(true);
        } else if c != '\u{fe0f}' && !(forbids.is_some() && c.is_whitespace()) {
            break;
        }
        rest = &rest[c.len_utf8()..];
    }
    if let Some((word_forbids, after)) = label_word(rest) {
        forbids = Some(word_forbids);
        rest = after;
    }
    let rest = rest.trim_start();
    forbids.filter(|_| !rest.is_empty()).map(|f| (f, rest))
}

/// A label word at the start of `text`, emphasised (`**Do**`, `_Avoid_`) or followed by a colon
/// (`Do:`, `**Don't:**`, `**Don't**:`): whether it forbids, and the text after it.
fn label_word(text: &str) -> Option<(bool, &str)> {
    let emphasis = ["**", "__", "*", "_"].into_iter().find(|e| text.starts_with(e));
    let inner = emphasis.map_or(text, |e| &text[e.len()..]);
    let words = (DONT_WORDS.iter().map(|w| (true, w))).chain(DO_WORDS.iter().map(|w| (false, w)));
    for (forbids, word) in words {
        let Some(after) = strip_lead(inner, word) else {
            continue;
        };
        // A whole word: "Donate" and "Nothing" are no labels.
        if after.starts_with(|c: char| c.is_alphanumeric() || matches!(c, '\'' | '\u{2019}' | '-')) {
            continue;
        }
        let (after, colon_inside) = match after.strip_prefix(':') {
            Some(a) => (a, true),
            None => (after, false),
        };
        let (after, closed) = match emphasis {
            Some(e) => match after.strip_prefix(e) {
                Some(a) => (a, true),
                None => continue,
            },
            None => (after, false),
        };
        let (after, colon_outside) = match after.trim_start().strip_prefix(':') {
            Some(a) => (a, true),
            None => (after, false),
        };
        if closed || colon_inside || colon_outside {
            return Some((forbids, after));
        }
    }
    None
}

/// A list item's or paragraph's text as the statement it makes: a do label dropped
/// ("**Do:** run tests first" states "run tests first"), a don't label read as the warning
/// it is ("❌ Delete package-lock.json …" states "Never delete package-lock.json …").
fn labelled(text: &str) -> String {
    match strip_do_label(text) {
        Some((true, rest)) => as_warning(rest),
        Some((false, rest)) => rest.to_string(),
        None => text.to_string(),
    }
}

/// `text` as a warning against what it names: as it is when it already leads with "never",
/// "don't", "avoid" …, else "Never " before it.
fn as_warning(text: &str) -> String {
    match warned_against(text) {
        Some(_) => text.to_string(),
        None => format!("Never {}", lower_first(text)),
    }
}

/// A heading over a section of things not to do, and nothing else: "Don'ts", "Avoid",
/// "Things to avoid", "Anti-patterns", "Common mistakes", "Was man vermeiden sollte",
/// "Qué evitar" (case, emphasis, marks and a final colon aside). "Avoid flaky tests" or
/// "How to avoid merge conflicts" head steps to take, not things to avoid.
fn forbidding_heading(heading: &str) -> bool {
    let h: String = (heading.chars())
        .filter(|c| !matches!(c, '*' | '_' | '`'))
        .collect::<String>()
        .replace('\u{2019}', "'")
        .to_lowercase();
    let h = (h.trim_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '!' | '.'))).trim_start_matches(
        |c: char| DONT_MARKS.contains(&c) || c == '\u{fe0f}' || c == '⚠' || c.is_whitespace(),
    );
    [
        "don't",
        "don'ts",
        "dont",
        "donts",
        "do not",
        "avoid",
        "never",
        "anti-patterns",
        "anti-pattern",
        "antipatterns",
        "bad practices",
        "common mistakes",
        "mistakes to avoid",
        "pitfalls to avoid",
        "things to avoid",
        "what to avoid",
        "what not to do",
        "things not to do",
        "vermeiden",
        "zu vermeiden",
        "was man vermeiden sollte",
        "was man nicht tun sollte",
        "evitar",
        "qué evitar",
        "que evitar",
        "a evitar",
        "lo que hay que evitar",
        "à éviter",
    ]
    .contains(&h)
}

/// A table row's cells, trimmed (`\|` is a pipe inside a cell).
fn table_cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row
        .strip_suffix('|')
        .filter(|r| !r.ends_with('\\'))
        .unwrap_or(row);
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().expect("a cell").push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().expect("a cell").push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// `text` with its first letter lower-cased when it starts a sentence ("Use …"), not a name
/// ("NPM …", "Docker Compose …" keep theirs).
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() && !text.contains(' ') => text.to_string(),
        (Some(a), Some(b)) if a.is_uppercase() && b.is_lowercase() => {
            a.to_lowercase().chain(text[a.len_utf8()..].chars()).collect()
        }
        _ => text.to_string(),
    }
}

/// A delimiter row's cell: `---`, `:--`, `--:`, `:-:`.
fn is_delimiter_cell(cell: &str) -> bool {
    let c = cell.trim_matches(':');
    !c.is_empty() && c.bytes().all(|b| b == b'-')
}

/// A table header that makes its column a list of things not to do: "Don't", "Do not",
/// "Avoid", "Never", "Bad", "Anti-pattern", "❌" (case and emphasis aside).
fn forbidding_header(header: &str) -> bool {
    let h: String = (header.chars())
        .filter(|c| !matches!(c, '*' | '_' | '`'))
        .collect::<String>()
        .replace('\u{2019}', "'")
        .trim()
        .to_lowercase();
    let h = h.trim_start_matches(['❌', '🚫', '⛔', '\u{fe0f}', ' ']);
    [
        "don't",
        "dont",
        "do not",
        "avoid",
        "never",
        "bad",
        "anti-pattern",
        "antipattern",
        "wrong",
    ]
    .iter()
    .any(|w| {
        h == *w
            || h.strip_prefix(w)
                .is_some_and(|r| r.starts_with([' ', ':', '(', '/']))
    }) || (h.is_empty() && header.contains(['❌', '🚫', '⛔']))
}

/// E006 for each rule of a row that says the opposite of a statement the authored skill
/// already has ("Never pin lodash to an exact version" against "Pin lodash to an exact version
/// in package.json …"), at the statement's line: the row stays staged (the rule is backed by
/// evidence) but applied as it is, the skill would say both. A dead end's text names what not
/// to do ("running terraform apply without a saved plan"; a claim's "Don't run …"), so it is
/// compared as a warning against it ("Never running terraform apply without a saved plan"),
/// which a line recommending the thing ("Run `terraform apply` directly in CI") contradicts;
/// one diagnostic per rule, at the first line it contradicts.
fn contradictions(skill: &BaseSkill, domain: &str, rules: &[&Lesson], lexicon: &Lexicon) -> Vec<Diagnostic> {
    if rules.is_empty() {
        return Vec::new();
    }
    let statements: Vec<(usize, String, crate::cluster::Analysis)> = (located_statements(&skill.text)
        .into_iter())
    .map(|(line, s)| {
        let a = lexicon.analyze_warning(&s);
        (line, s, a)
    })
    .collect();
    let mut out = Vec::new();
    for l in rules {
        let rule = match l.kind {
            Kind::Avoid => lexicon.analyze_warning(&format!("Never {}", compared_text(l))),
            _ => lexicon.analyze_warning(l.said()),
        };
        let Some((line, said, _)) = (statements.iter())
            .filter(|(_, _, a)| crate::cluster::negation(lexicon, &rule, a))
            .min_by_key(|(line, ..)| *line)
        else {
            continue;
        };
        out.push(
            Diagnostic::new(
                codes::CONTRADICTED_STATEMENT,
                format!(
                    "rule {} proposed for authored skill {} contradicts its line \"{said}\"",
                    l.id, skill.name
                ),
            )
            .at(&at_line(skill, *line))
            .subject(&skill.name)
            .domain(domain)
            .with("lesson", l.id.as_str())
            .with("rule", l.text.as_str()),
        );
    }
    out
}

/// What a statement warns against, when it leads with "never", "don't", "do not" or "avoid"
/// ("Avoid: docker system prune -a — …" as a delta words a dead end included).
fn warned_against(statement: &str) -> Option<&str> {
    ["never ", "don't ", "dont ", "do not ", "avoid: ", "avoid "]
        .iter()
        .find_map(|lead| strip_lead(statement, lead))
        .map(str::trim_start)
        .filter(|rest| !rest.is_empty())
}

/// `text` after `lead` (lower-case ASCII), compared case-insensitively with a typographic
/// apostrophe read as `'`.
fn strip_lead<'t>(text: &'t str, lead: &str) -> Option<&'t str> {
    let mut chars = text.char_indices();
    for want in lead.chars() {
        let (_, c) = chars.next()?;
        let c = if c == '\u{2019}' {
            '\''
        } else {
            c.to_ascii_lowercase()
        };
        if c != want {
            return None;
        }
    }
    Some(chars.next().map_or("", |(i, _)| &text[i..]))
}

/// A paragraph's sentences: cut after `.`, `!` or `?` followed by whitespace.
fn sentences(block: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = block.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace) {
            let s = block[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
    }
    let s = block[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// A rule as a delta bullet: its text as the plan-time block words it (the kind spelled out
/// for avoid and watch: a delta has no `## Avoid` heading to say it) and its id. No confidence,
/// reinforcement or citations: they change with every compile (decay alone moves confidence
/// daily), and a row whose payload changes is a new row for a person to review although no
/// rule changed; the ledger and the row's provenance hold them. The id also marks the rule as
/// merged, so it is not proposed again.
pub fn bullet(l: &Lesson) -> String {
    let line = crate::emit::block_line(l);
    // One rule, one line: a newline in a lesson must not start a heading in the authored skill.
    line.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

/// `bullet`, citing the avoid rules `also` that give the same advice from the other side.
fn bullet_citing(l: &Lesson, also: &[&str]) -> String {
    let line = bullet(l);
    let cited = |ids: &[&str]| {
        ids.iter()
            .map(|id| format!("id: {id}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match also {
        [] => line,
        [one] => format!("{}; avoid rule id: {one} says the same)", &line[..line.len() - 1]),
        many => format!(
            "{}; avoid rules {} say the same)",
            &line[..line.len() - 1],
            cited(many)
        ),
    }
}

/// Where a skill's rows go.
enum Anchor {
    /// The `learned-lessons` section.
    Section(Section),
    /// After the last non-empty line: `old` (that line, widened upwards only when it occurs
    /// more than once in the body) inside the section `slug`.
    Snippet {
        old: String,
        section: Section,
        /// The body line (1-based) `old` ends on.
        line: usize,
    },
    /// The body has no text to anchor to.
    None,
}

fn anchor(body: &str) -> Anchor {
    let secs = sections(body);
    if let Some(s) = secs.iter().find(|s| s.slug == LEARNED_LESSONS) {
        return Anchor::Section(s.clone());
    }
    let lines = markdown::body_lines(body);
    let Some(last) = lines.iter().rposition(|l| !l.trim().is_empty()) else {
        return Anchor::None;
    };
    let Some(section) = secs.iter().find(|s| s.contains_line(last + 1)) else {
        return Anchor::None;
    };
    // `old` must occur exactly once so the row applies in one place only.
    for first in (0..=last).rev() {
        let old = lines[first..=last].join("\n");
        if markdown::occurrences(body, &old) == 1 {
            return Anchor::Snippet {
                old,
                section: section.clone(),
                line: last + 1,
            };
        }
    }
    Anchor::None
}

fn is_list_item(line: &str) -> bool {
    list_item(line).is_some()
}

/// A list item's text without its marker (`- `, `* `, `+ `, `1. `, `1) `); none for a line
/// that is no list item.
fn list_item(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = match digits {
        0 => ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)),
        _ => (t[digits..].strip_prefix(". ")).or(t[digits..].strip_prefix(") ")),
    };
    rest.map(str::trim_start)
}

/// The row's kind, anchor and payload for these bullets.
fn payload(anchor: &Anchor, bullets: &[String]) -> Option<(&'static str, String, String, Value)> {
    match anchor {
        Anchor::Section(s) => {
            let mut lines: Vec<&str> = s.text.split('\n').collect();
            let trailing = lines.iter().rev().take_while(|l| l.trim().is_empty()).count();
            let blank_tail = lines.split_off(lines.len() - trailing);
            if lines.len() == 1 || !lines.last().is_some_and(|l| is_list_item(l)) {
                lines.push("");
            }
            lines.extend(bullets.iter().map(String::as_str));
            lines.extend(blank_tail);
            let body = lines.join("\n");
            Some((
                REPLACE_SECTION,
                s.slug.clone(),
                s.digest(),
                json!({ "body": body }),
            ))
        }
        Anchor::Snippet { old, section, .. } => {
            let new = format!("{old}\n\n{LEARNED_HEADING}\n\n{}", bullets.join("\n"));
            Some((
                REPLACE_SNIPPET,
                section.slug.clone(),
                section.digest(),
                json!({ "old": old, "new": new }),
            ))
        }
        Anchor::None => None,
    }
}

/// The row that adds `rules` to the skill `base_name`. Confidence chose the rules (the
/// strongest that fit); it does not order them, since it moves every night: the bullets go do,
/// avoid, watch (as SKILL.md's sections), each kind oldest first (a new rule comes last), so a
/// row's payload and id change only when the rules it proposes do.
///
/// An avoid rule that gives a do rule's advice from the other side (`restating`: avoid id →
/// do id) is no bullet of its own when that do rule is in the row: the do rule's bullet cites
/// it (`(id: L…; avoid rule id: L… says the same)`), so the reader meets the advice once and
/// both ids, which mark both rules merged once the bullet is.
fn row(
    base_name: &str,
    anchor: &Anchor,
    rules: &[&Lesson],
    restating: &BTreeMap<String, String>,
) -> Option<Value> {
    let mut rules = rules.to_vec();
    rules.sort_by(|a, b| (a.kind, a.admitted_at, &a.id).cmp(&(b.kind, b.admitted_at, &b.id)));
    let in_row: BTreeSet<&str> = rules.iter().map(|l| l.id.as_str()).collect();
    let partner = |l: &Lesson| (restating.get(&l.id)).filter(|d| in_row.contains(d.as_str()));
    let bullets: Vec<String> = (rules.iter())
        .filter(|l| partner(l).is_none())
        .map(|l| {
            let also: Vec<&str> = (rules.iter())
                .filter(|a| partner(a).is_some_and(|d| *d == l.id))
                .map(|a| a.id.as_str())
                .collect();
            bullet_citing(l, &also)
        })
        .collect();
    let (kind, section, anchor_digest, payload) = payload(anchor, &bullets)?;
    let payload_json = serde_json::to_string(&payload).expect("payload serialises");
    let id = format!(
        "D{}",
        digest::of_fields(&[base_name, &anchor_digest, &payload_json])
    );
    let evidence: BTreeSet<&str> = rules
        .iter()
        .flat_map(|l| l.evidence.iter().map(|id| &**id))
        .collect();
    Some(json!({
        "id": id,
        "base_name": base_name,
        "scope": "global",
        "kind": kind,
        "anchor_section": section,
        "anchor_digest": anchor_digest,
        "payload": payload,
        "provenance": {
            "generator": GENERATOR,
            "lessons": rules.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(),
            "evidence": evidence.into_iter().collect::<Vec<_>>(),
        },
        "status": STAGED,
    }))
}

/// Characters of a row's payload: its compact JSON.
pub fn payload_chars(row: &Value) -> usize {
    serde_json::to_string(&row["payload"])
        .map(|s| s.chars().count())
        .unwrap_or(usize::MAX)
}

/// Tokens, as the delta budget counts them: ⌈characters / 4⌉.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// How many tokens the resolved skill adds to the authored one (None: the row does not apply).
pub fn added_tokens(authored: &str, row: &Value) -> Option<usize> {
    let resolved = resolve(authored, std::slice::from_ref(row)).ok()?;
    Some(tokens(&resolved).saturating_sub(tokens(authored)))
}

/// The skill's row (if any rule fits), its E002 (if any rule was left out) and an E006 per
/// rule of the row that contradicts a line of the skill.
fn skill_rows(
    skill: &BaseSkill,
    domain: &str,
    lessons: &[Lesson],
    refounded: &BTreeMap<String, String>,
    policy: &Policy,
    lexicon: &Lexicon,
) -> (Vec<Value>, Vec<Diagnostic>) {
    let rules = delta_rules(domain, lessons, &skill.text, refounded, lexicon);
    if rules.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (front, body) = split_frontmatter(&skill.text);
    let anchor = anchor(&body);
    let restating = restated_avoids(&rules, lexicon);
    let budget = &policy.deltas;
    let fits = |r: &Value| {
        payload_chars(r) <= budget.max_payload_chars
            && added_tokens(&skill.text, r).is_some_and(|t| t <= budget.max_added_tokens)
    };
    // Highest confidence first: keep the longest prefix that fits.
    let mut kept: Option<(usize, Value)> = None;
    for n in 1..=rules.len() {
        match row(&skill.name, &anchor, &rules[..n], &restating) {
            Some(r) if fits(&r) => kept = Some((n, r)),
            _ => break,
        }
    }
    let n = kept.as_ref().map_or(0, |(n, _)| *n);
    let contradicted = contradictions(skill, domain, &rules[..n], lexicon);
    let diag = (n < rules.len()).then(|| {
        let left_out: Vec<String> = rules[n..].iter().map(|l| l.id.clone()).collect();
        let d = match row(&skill.name, &anchor, &rules, &restating) {
            Some(all) => Diagnostic::new(
                codes::DELTA_OVERFLOW,
                format!(
                    "{} for authored skill {} did not fit the delta budget",
                    rules_count(left_out.len()),
                    skill.name
                ),
            )
            .with("payload_chars", payload_chars(&all))
            .with(
                "added_tokens",
                added_tokens(&skill.text, &all).map_or(Value::Null, Value::from),
            ),
            None => Diagnostic::new(
                codes::DELTA_OVERFLOW,
                format!(
                    "authored skill {} has no text to anchor a delta to; {} left out",
                    skill.name,
                    rules_count(left_out.len())
                ),
            ),
        };
        // At the line the rules would have gone after: the `## Learned lessons` heading, or
        // the body's last line; line 1 when the body has no text.
        let front_lines = front.matches('\n').count();
        let line = match &anchor {
            Anchor::Section(s) => front_lines + s.start_line,
            Anchor::Snippet { line, .. } => front_lines + line,
            Anchor::None => 1,
        };
        d.at(&at_line(skill, line))
            .subject(&skill.name)
            .domain(domain)
            .with("path", skill.path.as_str())
            .with("left_out", left_out)
            .with("max_payload_chars", budget.max_payload_chars)
            .with("max_added_tokens", budget.max_added_tokens)
    });
    let diags = diag.into_iter().chain(contradicted).collect();
    (kept.map(|(_, r)| r).into_iter().collect(), diags)
}

fn rules_count(n: usize) -> String {
    if n == 1 {
        "1 rule".to_string()
    } else {
        format!("{n} rules")
    }
}

fn field<'a>(row: &'a Value, name: &str) -> Result<&'a str, String> {
    row[name]
        .as_str()
        .ok_or_else(|| format!("row {}: no `{name}`", row["id"].as_str().unwrap_or("?")))
}

/// Replaces lines `start..=end` (1-based) of `body` with `replacement`.
fn splice(body: &str, start: usize, end: usize, replacement: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let mut out: Vec<&str> = lines[..start - 1].to_vec();
    out.extend(replacement.split('\n'));
    out.extend(&lines[end..]);
    let mut s = out.join("\n");
    if body.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// What a row anchored on text the person has since edited asks for: the next compile stages
/// rows against the skill as it is now.
const RESTAGE: &str = "; the skill was edited after the compile that staged its deltas: compile again with --base-skills to restage them";

/// The authored skill with `rows` applied (frontmatter kept). Every row's anchor is checked
/// against the authored text: its section must exist with the same digest, and a snippet's
/// `old` must occur exactly once. The result keeps the authored line endings (CRLF when the
/// authored text has any).
pub fn resolve(base_text: &str, rows: &[Value]) -> Result<String, String> {
    let crlf = base_text.contains("\r\n");
    let (front, authored) = split_frontmatter(base_text);
    let authored_secs = sections(&authored);
    let mut body = authored.clone();
    for r in rows {
        let id = r["id"].as_str().unwrap_or("?");
        let kind = field(r, "kind")?;
        let slug = field(r, "anchor_section")?;
        let want = field(r, "anchor_digest")?;
        let sec = authored_secs
            .iter()
            .find(|s| s.slug == slug)
            .ok_or_else(|| format!("row {id}: the authored skill has no section `{slug}`{RESTAGE}"))?;
        let have = sec.digest();
        if have != want {
            return Err(format!(
                "row {id}: section `{slug}` of the authored skill changed (anchor_digest {want}, now {have}){RESTAGE}"
            ));
        }
        match kind {
            REPLACE_SECTION => {
                let new = markdown::lf(field(&r["payload"], "body")?);
                let cur = sections(&body)
                    .into_iter()
                    .find(|s| s.slug == slug)
                    .ok_or_else(|| format!("row {id}: section `{slug}` is gone after earlier rows"))?;
                body = splice(&body, cur.start_line, cur.end_line, &new);
            }
            REPLACE_SNIPPET => {
                let old = markdown::lf(field(&r["payload"], "old")?);
                let new = markdown::lf(field(&r["payload"], "new")?);
                for (what, text) in [("authored skill", &authored), ("skill", &body)] {
                    let n = markdown::occurrences(text, &old);
                    if n != 1 {
                        return Err(format!(
                            "row {id}: the snippet occurs {n} times in the {what}, not once"
                        ));
                    }
                }
                body = body.replacen(&old, &new, 1);
            }
            other => return Err(format!("row {id}: unknown kind `{other}`")),
        }
    }
    let out = front + &body;
    Ok(if crlf { endings_of(base_text, &out) } else { out })
}

/// `resolved` (LF) with the line ends of `authored` (which has CRLF): the lines before and
/// after what the rows changed are the authored lines byte for byte, whatever their ends (a
/// skill whose frontmatter ends in LF and whose body in CRLF keeps both); the lines the rows
/// wrote end in CRLF.
fn endings_of(authored: &str, resolved: &str) -> String {
    let line = |raw: &str| {
        let bare = raw
            .strip_suffix('\n')
            .map_or(raw, |l| l.strip_suffix('\r').unwrap_or(l));
        (bare.to_string(), raw.ends_with('\n'))
    };
    let old: Vec<&str> = authored.split_inclusive('\n').collect();
    let new: Vec<&str> = resolved.split_inclusive('\n').collect();
    let same = |a: &str, b: &str| line(a) == line(b);
    let head = old.iter().zip(&new).take_while(|(a, b)| same(a, b)).count();
    let tail = (old[head..].iter().rev())
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| same(a, b))
        .count();
    let mut out: String = old[..head].concat();
    for l in &new[head..new.len() - tail] {
        out.push_str(&l.replace('\n', "\r\n"));
    }
    out.push_str(&old[old.len() - tail..].concat());
    out
}

/// A delta file's rows.
pub fn parse_delta(json_text: &str) -> Result<Vec<Value>, String> {
    let v: Value = serde_json::from_str(json_text).map_err(|e| e.to_string())?;
    v["rows"]
        .as_array()
        .cloned()
        .ok_or_else(|| "not a skill delta: no `rows`".to_string())
}

/// `skillc deltas show NAME`: the authored skill `NAME` under `base_dir` with the rows of
/// `out_dir/deltas/NAME.json` applied (the authored text as is when there is no delta file).
pub fn show(
    base_dir: &Path,
    out_dir: &Path,
    name: &str,
    aliases: &crate::normalize::Aliases,
) -> Result<String, String> {
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(format!("{name:?} is not a skill name"));
    }
    let skill = base_dir.join(name).join("SKILL.md");
    let text = std::fs::read_to_string(&skill).map_err(|e| {
        // A skill is shown by its directory's name (its delta file has that name); one asked
        // for by its frontmatter `name`, or by the domain it compiles for (`kubernetes` for a
        // skill in `k8s/`), is pointed at.
        let skills = (e.kind() == std::io::ErrorKind::NotFound)
            .then(|| read_base_skills(base_dir).ok())
            .flatten()
            .map_or_else(Vec::new, |(skills, _)| skills);
        let domain = |n: &str| crate::normalize::domain(n, aliases).ok();
        let named = |s: &&BaseSkill| markdown::frontmatter_name(&s.text).as_deref() == Some(name);
        let found = (skills.iter().find(named))
            .map(|s| (s, format!("the skill named {name} in its frontmatter")))
            .or_else(|| {
                let asked = domain(name)?;
                let compiles_for = |s: &&BaseSkill| {
                    let own = std::iter::once(s.name.clone()).chain(markdown::frontmatter_name(&s.text));
                    own.filter_map(|n| domain(&n)).any(|d| d == asked)
                };
                (skills.iter().find(compiles_for)).map(|s| (s, format!("the skill for the {asked} domain")))
            });
        match found {
            Some((s, what)) => format!(
                "{}: {e}; {what} is in the directory {dir}: `skillc deltas show {dir}`",
                skill.display(),
                dir = s.name
            ),
            None => format!("{}: {e}", skill.display()),
        }
    })?;
    let delta = out_dir.join("deltas").join(format!("{name}.json"));
    let rows = match std::fs::read_to_string(&delta) {
        Ok(s) => parse_delta(&s).map_err(|e| format!("{}: {e}", delta.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: {e}", delta.display())),
    };
    resolve(&text, &rows).map_err(|e| format!("{}: {e}", delta.display()))
}
