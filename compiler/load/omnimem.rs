//! OmniMem exports (DESIGN §3.2): a JSON array or JSON Lines of episodic memories, read
//! directly as experiences.
//!
//! OmniMem writes many values as strings (`"1"`, `"4"`, a JSON-encoded list, unix seconds as
//! text); they are accepted in either form. The memory's `key` is its id, unchanged. Only
//! memories whose `state` is `active` (or absent) are compiled; the others are reported as
//! `inactive-memory` notes. A `state` that is not a string is an L003 that costs the field:
//! the memory reads as having no state (active). Fields of OmniMem's own (embeddings, access
//! counts, …) are not ours to judge and are ignored without a warning. A memory's fields may
//! sit in a nested `metadata` object instead (read where the memory has none of its own, and
//! named `metadata.<field>` in diagnostics), and `in_play` lists the skillc lessons the agent
//! had in front of it, so attribution carries over.

use serde_json::{Map, Value};

use super::encoding::{self, BadByte};
use super::json;
use super::record::{self, Item, Parsed, Validator};
use crate::diagnostics::{Diagnostic, codes, lookup};
use crate::model::{DeadEnd, Experience, Narrative, Outcome, SourceLoc};
use crate::normalize::{self, Aliases};
use crate::time::{from_unix_millis, from_unix_seconds, parse_rfc3339};

/// How many records of a file's head the format check looks at, and through how many lines.
const SNIFF_RECORDS: usize = 16;
const SNIFF_LINES: usize = 64;

/// Do the first records of this text look like OmniMem memories? Up to `SNIFF_RECORDS` whole
/// objects of the head are read (array elements, or lines that are objects on their own, so
/// one broken line decides nothing). Memories (a `key`, no `id`) must outnumber records with
/// an `id`, and either one of them has a field only OmniMem writes (`tags`, `effort_score`,
/// a unix-seconds `created_at`) or they are most of the records. One memory without tags
/// then no longer turns a whole export into refused native records.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let head = head.strip_prefix(super::BOM.as_bytes()).unwrap_or(head);
    // Python's `NaN` and `Infinity` in a memory (read as null) do not hide what it is.
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let fixed = super::nonfinite::to_null(text).map(|(t, _)| t);
    let head = fixed.as_deref().map_or(head, str::as_bytes);
    let records = head_records(head.trim_ascii_start());
    let keyed = |m: &Map<String, Value>| {
        matches!(m.get("key"), Some(Value::String(_) | Value::Number(_))) && !m.contains_key("id")
    };
    let memories: Vec<&Map<String, Value>> = records.iter().flatten().filter(|m| keyed(m)).collect();
    let with_id = records.iter().flatten().filter(|m| m.contains_key("id")).count();
    memories.len() > with_id
        && (memories.iter().any(|m| omnimem_only(m)) || 2 * memories.len() > records.len())
}

/// The first records of a head, in order: `None` for one that is not an object.
fn head_records(head: &[u8]) -> Vec<Option<Map<String, Value>>> {
    let object = |v: Value| match v {
        Value::Object(m) => Some(m),
        _ => None,
    };
    let mut out = Vec::new();
    if let Some(mut rest) = head.strip_prefix(b"[") {
        // Elements until the head ends (it may cut one short) or one does not parse.
        while out.len() < SNIFF_RECORDS {
            rest = rest.trim_ascii_start();
            let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
            let Some(Ok(v)) = values.next() else { break };
            out.push(object(v));
            rest = rest[values.byte_offset()..].trim_ascii_start();
            match rest.strip_prefix(b",") {
                Some(r) => rest = r,
                None => break,
            }
        }
        return out;
    }
    // JSON Lines: the lines that are an object on their own.
    out.extend(
        head.split(|&b| b == b'\n')
            .take(SNIFF_LINES)
            .map(<[u8]>::trim_ascii)
            .filter(|l| l.first() == Some(&b'{'))
            .filter_map(|l| serde_json::from_slice::<Map<String, Value>>(l).ok())
            .take(SNIFF_RECORDS)
            .map(Some),
    );
    if out.is_empty() {
        // One document, or several, pretty-printed.
        let values = serde_json::Deserializer::from_slice(head).into_iter::<Value>();
        out.extend(values.map_while(Result::ok).take(SNIFF_RECORDS).map(object));
    }
    out
}

/// Has this record a field only OmniMem writes?
fn omnimem_only(m: &Map<String, Value>) -> bool {
    let unix = |v: Option<&Value>| match v {
        Some(Value::Number(_)) => true,
        Some(Value::String(s)) => s.trim().parse::<f64>().is_ok(),
        _ => false,
    };
    m.contains_key("tags") || m.contains_key("effort_score") || unix(m.get("created_at"))
}

/// Every memory of an export, in file order.
/// `bad`: where the file's bytes were not UTF-8; a memory holding one is refused.
pub(crate) fn read(text: &str, file: &str, aliases: &Aliases, bad: &[BadByte]) -> Vec<Parsed> {
    let convert = |v: Value, loc: &SourceLoc, first: bool| memory(v, loc, first, aliases);
    if !json::looks_like_lines(text) {
        return json::json_document_with(text, file, Some(&convert), bad);
    }
    let mut out = Vec::new();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_prefix(super::BOM).unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let loc = SourceLoc {
            file: file.into(),
            line: i as u32 + 1,
        };
        // Python's `NaN` and `Infinity` are read as null, each said (`nonfinite`).
        let (line, found) = match serde_json::from_str::<Value>(line) {
            Err(_) if bad.is_empty() => match super::nonfinite::to_null(line) {
                Some((fixed, found)) => (std::borrow::Cow::Owned(fixed), found),
                None => (line.into(), Vec::new()),
            },
            _ => (line.into(), Vec::new()),
        };
        match serde_json::from_str::<Value>(&line) {
            Ok(v) => {
                let mut p = convert(v, &loc, first);
                super::nonfinite::attach(&mut p, found, file, loc.line);
                out.push(match bad.iter().find(|b| b.line == loc.line) {
                    Some(b) => encoding::refuse(p, b, file),
                    None => p,
                });
            }
            Err(e) => out.push(json::not_json(line.as_bytes(), &e, &loc)),
        }
        if matches!(out.last().map(|p| &p.item), Some(Item::Generated)) {
            break;
        }
        first = false;
    }
    out
}

/// OmniMem's lenient conversions (strings standing in for numbers, lists and booleans), on the
/// loader's one validator, which collects the problems of a memory before it is built or refused.
impl Validator<'_> {
    /// A list of strings, a JSON-encoded list in a string, or a comma-separated string.
    fn string_list(&mut self, field: &str, v: Option<Value>, split_commas: bool) -> Vec<String> {
        let expected = "a list of strings or a JSON-encoded list";
        let items = match v {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) => match decoded(&s) {
                Some(Value::Array(items)) => items,
                // A list cut short (`["django", "pyth`) is not split on its commas.
                _ if split_commas && encoded(&s) => {
                    self.invalid(field, expected, &Value::String(s));
                    return Vec::new();
                }
                _ if split_commas => return record::comma_list(&s),
                _ => return if s.trim().is_empty() { Vec::new() } else { vec![s] },
            },
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.invalid(field, expected, &other);
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                Value::String(s) if s.trim().is_empty() => {}
                Value::String(s) => out.push(s),
                other => {
                    self.invalid(field, expected, &other);
                    return Vec::new();
                }
            }
        }
        out
    }

    fn abandoned(&mut self, field: &str, v: Option<Value>, out: &mut Vec<DeadEnd>) {
        let items = match v {
            None | Some(Value::Null) => return,
            Some(Value::String(s)) => match decoded(&s) {
                Some(Value::Array(items)) => items,
                Some(obj @ Value::Object(_)) => vec![obj],
                _ if s.trim().is_empty() => return,
                _ => vec![Value::String(s)],
            },
            Some(Value::Array(items)) => items,
            Some(obj @ Value::Object(_)) => vec![obj],
            Some(other) => {
                self.invalid(field, "a list of abandoned approaches", &other);
                return;
            }
        };
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::String(s) if s.trim().is_empty() => {}
                Value::String(name) => out.push(DeadEnd {
                    name,
                    kind: None,
                    reason: None,
                }),
                Value::Object(mut m) => {
                    let name = self.opt_string(&format!("{field}[{i}].name"), m.remove("name"));
                    let kind = self.opt_string(&format!("{field}[{i}].type"), m.remove("type"));
                    let reason = self.opt_string(&format!("{field}[{i}].reason"), m.remove("reason"));
                    match name {
                        Some(name) => out.push(DeadEnd { name, kind, reason }),
                        None => {
                            let entry = format!("{field}[{i}].name");
                            let message = format!("omnimem memory has no `{entry}`");
                            self.missing_as(message, &entry).help = NAMELESS_HELP;
                        }
                    }
                }
                other => self.invalid(
                    &format!("{field}[{i}]"),
                    "a string or an object with a `name`",
                    &other,
                ),
            }
        }
    }

    /// OmniMem's effort score, 1 to 5 (rounded: it may be a mean); `None` when absent or bad.
    fn effort_score(&mut self, v: Option<Value>) -> Option<u8> {
        let v = match v {
            None | Some(Value::Null) => return None,
            Some(Value::String(s)) if s.trim().is_empty() => return None,
            Some(v) => v,
        };
        let score = number(&v).map(f64::round).filter(|f| (1.0..=5.0).contains(f));
        if score.is_none() {
            self.invalid("effort_score", "a number from 1 to 5", &v);
        }
        score.map(|f| f as u8)
    }

    fn lenient_bool(&mut self, field: &str, v: Option<Value>) -> bool {
        match v {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" => true,
                "" | "0" | "false" | "no" => false,
                _ => {
                    self.invalid(field, "true or false (or \"1\"/\"0\")", &Value::String(s));
                    false
                }
            },
            Some(other) => {
                self.invalid(field, "true or false (or \"1\"/\"0\")", &other);
                false
            }
        }
    }

    /// Unix seconds (a number or a numeric string) or an RFC 3339 timestamp.
    fn time(&mut self, field: &str, v: Option<Value>) -> Option<i64> {
        let expected = "unix seconds or an RFC 3339 timestamp";
        let t = match &v {
            None | Some(Value::Null) => return None,
            Some(Value::String(s)) if s.trim().is_empty() => return None,
            Some(Value::Number(n)) => n.as_f64().and_then(unix),
            Some(Value::String(s)) => match s.trim().parse::<f64>() {
                Ok(f) => unix(f),
                Err(_) => parse_rfc3339(s),
            },
            Some(_) => None,
        };
        if t.is_none() {
            self.invalid(field, expected, v.as_ref().unwrap_or(&Value::Null));
        }
        t
    }
}

/// Unix seconds to milliseconds; a value too large to be seconds is taken as milliseconds.
/// `None` beyond what an RFC 3339 timestamp can write, and for 1970 or before: OmniMem did not
/// exist, so zero or a negative number is a default or a bug, not when the memory was made.
fn unix(f: f64) -> Option<i64> {
    if !(f.is_finite() && f > 0.0) {
        return None;
    }
    if f >= 1e11 {
        from_unix_millis(f)
    } else {
        from_unix_seconds(f)
    }
}

/// A string that holds JSON (`"[\"python\"]"`), decoded.
fn decoded(s: &str) -> Option<Value> {
    if !encoded(s) {
        return None;
    }
    serde_json::from_str(s.trim()).ok()
}

/// Does this string start like JSON-encoded list or object?
fn encoded(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with('[') || t.starts_with('{')
}

/// The domains a memory's `tags` name, read leniently as `string_list` reads them, for the
/// evidence of a refused memory (`why DOMAIN` counts it): nothing from a list cut short.
fn named_tags(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => match decoded(s) {
            Some(list @ Value::Array(_)) => record::readable_domains(&list),
            Some(_) => Vec::new(),
            None if encoded(s) => Vec::new(),
            None => record::readable_domains(v),
        },
        other => record::readable_domains(other),
    }
}

/// The help of a memory's L002: OmniMem's fields, not a native record's.
const MISSING_HELP: &str = "add the field (an OmniMem memory needs key, tags, outcome and created_at; updated_at stands in for an absent created_at)";

/// The help of the L002 for an abandoned approach written as an object without a name.
const NAMELESS_HELP: &str = "give each abandoned approach a `name` (what was tried: `{\"name\": \"go clean -cache\", \"reason\": \"…\"}`), or write it as a plain string";

/// The help of the L009 of a memory that names the memory that replaced it.
const SUPERSEDED_HELP: &str = "nothing to do if the replacement is in the export: it is compiled in this memory's place; export it too if it is not";

/// The help of the L002 for tags that are there but name nothing.
const EMPTY_TAGS_HELP: &str = "tag the memory with at least one skill domain (`\"tags\": [\"python\"]`): a memory is compiled into its tags' skills";

/// The L002 of a memory whose tags name no domain: missing, or there and empty (`"[]"`,
/// `[]`, blanks), which "has no `tags`" would send the reader looking for.
fn no_tags(c: &mut Validator, given: bool) {
    if given {
        let message = "omnimem memory has no domain: `tags` is empty".to_string();
        c.missing_as(message, "tags").help = EMPTY_TAGS_HELP;
    } else {
        c.missing("tags");
    }
}

/// A refused memory's diagnostics: L002s say which OmniMem fields are required (unless one
/// has its own help already), and each names the domains the memory's tags named.
fn refusal(mut diags: Vec<Diagnostic>, named: &[String]) -> Vec<Diagnostic> {
    let default_help = lookup(codes::MISSING_FIELD).map(|c| c.help);
    for d in (diags.iter_mut()).filter(|d| d.code == codes::MISSING_FIELD && Some(d.help) == default_help) {
        d.help = MISSING_HELP;
    }
    record::naming_domains(diags, named)
}

/// A whole number from a number or a numeric string.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// One memory to an experience, a refusal, or (inactive) `inactive-memory` notes.
fn memory(v: Value, loc: &SourceLoc, first: bool, aliases: &Aliases) -> Parsed {
    if first && record::is_generated(&v) {
        return Parsed::of(loc.line, Item::Generated);
    }
    let mut m = match v {
        Value::Object(m) => m,
        other => {
            return Parsed::invalid(
                loc.line,
                Diagnostic::new(
                    codes::MALFORMED_RECORD,
                    format!(
                        "omnimem memory is not an object (found {})",
                        record::type_name(&other)
                    ),
                )
                .subject(&*loc.file)
                .at(loc),
            );
        }
    };
    let lifted = lift_metadata(&mut m);
    let scores = scores_in(&m);
    let key = match m.remove("key") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut c = Validator::new(
        loc,
        key.as_deref()
            .map_or_else(|| loc.file.to_string(), record::shown_id),
        "omnimem memory",
    );
    let key = match key {
        Some(k) => c.plain_id("key", k),
        None => {
            c.missing("key");
            None
        }
    };
    let raw_tags = m.remove("tags");
    let tags_given = !matches!(raw_tags, None | Some(Value::Null));
    // Kept so a refused memory still says which domains it named.
    let named = raw_tags.as_ref().map(named_tags).unwrap_or_default();
    let tags = c.string_list("tags", raw_tags, true);
    let state = match m.remove("state") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.trim().to_string(),
        // OmniMem writes states as strings: another value does not say the memory was retired,
        // so it costs the field (the memory reads as having no state), as a bad `blessed` does.
        Some(other) => {
            c.lenient(|c| c.invalid("state", "a string such as \"active\"", &other));
            String::new()
        }
    };
    if !state.is_empty() && !state.eq_ignore_ascii_case("active") {
        return Parsed::of(
            loc.line,
            Item::Invalid(inactive(&c.subject, &state, None, &tags, loc, aliases)),
        );
    }
    // A memory another one replaced is history in OmniMem, whatever its state says: its
    // lesson must not come back as current advice beside its replacement's.
    let superseded_by = match m.remove("superseded_by") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            c.lenient(|c| c.invalid("superseded_by", "the key of the memory that replaced it", &other));
            None
        }
    };
    if let Some(by) = superseded_by {
        let by = record::shown_id(&by);
        return Parsed::of(
            loc.line,
            Item::Invalid(inactive(&c.subject, "superseded", Some(&by), &tags, loc, aliases)),
        );
    }
    if tags.is_empty()
        && c.diags
            .iter()
            .all(|d| d.evidence.get("field") != Some(&Value::from("tags")))
    {
        no_tags(&mut c, tags_given);
    }
    let outcome = match m.remove("outcome") {
        None | Some(Value::Null) => {
            c.missing("outcome");
            None
        }
        Some(Value::String(s)) => {
            let o = Outcome::parse(&s.trim().to_ascii_lowercase());
            if o.is_none() {
                c.invalid(
                    "outcome",
                    "one of succeeded, pivoted, abandoned, failed",
                    &Value::String(s),
                );
            }
            o
        }
        Some(other) => {
            c.invalid("outcome", "one of succeeded, pivoted, abandoned, failed", &other);
            None
        }
    };
    // `updated_at` stands in only for an absent `created_at` (DESIGN §3.2); otherwise it is
    // not read, so a bad one refuses nothing.
    let absent = |v: &Option<Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(_) => false,
    };
    let created = m.remove("created_at");
    let recorded_at = if !absent(&created) {
        c.time("created_at", created)
    } else {
        match m.remove("updated_at") {
            updated if absent(&updated) => {
                c.missing("created_at");
                None
            }
            updated => c.time("updated_at", updated),
        }
    };
    // effort_score is informational: a bad one costs the field, never the memory.
    let effort = c.lenient(|c| c.effort_score(m.remove("effort_score")));
    let project = c
        .opt_string("project", m.remove("project"))
        .map(|p| p.trim().to_string());
    let lesson = c.opt_string("lesson", m.remove("lesson"));
    let breakthrough = c.opt_string("breakthrough", m.remove("breakthrough"));
    let content = c.opt_string("content", m.remove("content"));
    let gotchas = c.string_list("gotchas", m.remove("gotchas"), false);
    let mut dead_ends = Vec::new();
    for field in ["abandoned", "abandoned_approaches"] {
        c.abandoned(field, m.remove(field), &mut dead_ends);
    }
    let blessed = c.lenient_bool("blessed", m.remove("blessed"));
    // Lessons the agent had in front of it (skillc's own ids, cited back from a plan-time
    // block): attribution, so a bad list costs the field, never the memory.
    let in_play = c.lenient(|c| c.string_list("in_play", m.remove("in_play"), true));
    let task = match m.remove("task").or_else(|| m.remove("title")) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        _ => None,
    };
    for d in c.diags.iter_mut().chain(c.ignored.iter_mut()) {
        in_metadata(d, &lifted);
    }
    if let (Some(id), false, true) = (&key, scores.is_empty(), c.diags.is_empty()) {
        c.ignored.push(score_not_used(id, scores, loc));
    }
    let (item, ignored) = match (key, outcome, recorded_at) {
        (Some(id), Some(outcome), Some(recorded_at)) if c.diags.is_empty() => (
            Item::Experience(Experience {
                id: id.into(),
                recorded_at,
                domains: tags,
                project,
                outcome: Some(outcome),
                effort,
                words: Narrative {
                    task,
                    lesson,
                    breakthrough,
                    gotchas,
                    dead_ends,
                    content,
                }
                .into(),
                in_play,
                blessed,
                source: loc.clone(),
                ..Default::default()
            }),
            c.ignored,
        ),
        _ => {
            // A refused memory reports every problem it has, the ignorable ones too.
            let mut diags = c.diags;
            diags.extend(c.ignored);
            (Item::Invalid(refusal(diags, &named)), Vec::new())
        }
    };
    Parsed {
        line: loc.line,
        item,
        unknown: Vec::new(),
        ignored,
    }
}

/// Scores a memory system keeps of its own: never read (DESIGN §6 folds confidence from the
/// history alone, and nothing but evidence or a blessing passes a gate), and said so (L012).
const SCORE_FIELDS: &[&str] = &["confidence", "importance", "score"];

/// The `SCORE_FIELDS` a memory sets, itself or in its `metadata` object (null or blank is not
/// set).
fn scores_in(m: &Map<String, Value>) -> Vec<&'static str> {
    let set = |v: Option<&Value>| match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(_) => true,
    };
    let meta = m.get("metadata").and_then(Value::as_object);
    (SCORE_FIELDS.iter().copied())
        .filter(|f| set(m.get(*f)) || meta.is_some_and(|meta| set(meta.get(*f))))
        .collect()
}

/// The L012 of a memory with a score of its own: a note, folded into one per run.
fn score_not_used(key: &str, fields: Vec<&'static str>, loc: &SourceLoc) -> Diagnostic {
    let named = fields
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let (field, is) = if fields.len() == 1 {
        ("field", "is")
    } else {
        ("fields", "are")
    };
    Diagnostic::new(
        codes::SCORE_NOT_USED,
        format!(
            "omnimem {field} {named} {is} not used: confidence comes from the experiences behind a lesson (admitted at 0.500, confirmed, contradicted, decayed), and a memory's own score admits or promotes nothing"
        ),
    )
    .subject(key)
    .at(loc)
    .with("fields", fields)
    .experiences([key])
}

/// The memory fields read from a nested `metadata` object when the memory has none of its
/// own: exports that keep a memory's project, tags or outcome there lose nothing.
const METADATA_FIELDS: &[&str] = &[
    "tags",
    "project",
    "outcome",
    "created_at",
    "updated_at",
    "effort_score",
    "lesson",
    "breakthrough",
    "content",
    "gotchas",
    "abandoned",
    "abandoned_approaches",
    "blessed",
    "state",
    "task",
    "title",
    "in_play",
    "superseded_by",
];

/// Moves the fields of `METADATA_FIELDS` that a memory's `metadata` (an object, or one
/// JSON-encoded in a string) has and the memory itself does not (or has as null) up beside
/// the others; returns their names, for `in_metadata`. A `metadata` of any other shape is
/// OmniMem's own business and stays unread.
fn lift_metadata(m: &mut Map<String, Value>) -> Vec<&'static str> {
    let meta = match m.get("metadata") {
        Some(Value::Object(meta)) => meta.clone(),
        Some(Value::String(s)) => match decoded(s) {
            Some(Value::Object(meta)) => meta,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let mut lifted = Vec::new();
    for &field in METADATA_FIELDS {
        let own = !matches!(m.get(field), None | Some(Value::Null));
        match meta.get(field) {
            Some(v) if !own && !v.is_null() => {
                m.insert(field.to_string(), v.clone());
                lifted.push(field);
            }
            _ => {}
        }
    }
    lifted
}

/// A diagnostic about a field read from `metadata` names it as written there
/// (`metadata.created_at`), so the reader looks in the right place.
fn in_metadata(d: &mut Diagnostic, lifted: &[&str]) {
    let Some(field) =
        (d.evidence.get("field").and_then(Value::as_str)).and_then(|f| lifted.iter().find(|&&l| l == f))
    else {
        return;
    };
    d.message = d
        .message
        .replace(&format!("`{field}`"), &format!("`metadata.{field}`"));
    d.evidence
        .insert("field", Value::from(format!("metadata.{field}")));
}

/// One `inactive-memory` note per domain of the memory (so `why DOMAIN` counts it), folded
/// per domain downstream. `superseded_by`: the memory that replaced this one, when that is
/// why it is not active.
fn inactive(
    key: &str,
    state: &str,
    superseded_by: Option<&str>,
    tags: &[String],
    loc: &SourceLoc,
    aliases: &Aliases,
) -> Vec<Diagnostic> {
    let shown = record::found(&Value::String(state.to_string()));
    // The evidence holds the state unquoted (the message quotes it); a long one by its type.
    let plain = if shown.starts_with('"') {
        state.to_string()
    } else {
        shown.clone()
    };
    let note = || {
        let message = match superseded_by {
            Some(by) => format!("omnimem memory {key} is superseded by {by} and was not compiled"),
            None => format!("omnimem memory {key} has state {shown} and was not compiled"),
        };
        let d = Diagnostic::new(codes::INACTIVE_MEMORY, message)
            .subject(key)
            .at(loc)
            .with("state", plain.clone())
            .experiences([key]);
        match superseded_by {
            Some(by) => {
                let mut d = d.with("superseded_by", by);
                d.help = SUPERSEDED_HELP;
                d
            }
            None => d,
        }
    };
    let mut domains: Vec<String> = tags
        .iter()
        .filter_map(|t| normalize::domain(t, aliases).ok())
        .collect();
    domains.sort();
    domains.dedup();
    if domains.is_empty() {
        return vec![note()];
    }
    domains.into_iter().map(|d| note().domain(d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Rules;

    fn one(v: Value) -> Parsed {
        let loc = SourceLoc {
            file: "export.json".into(),
            line: 3,
        };
        memory(v, &loc, false, &Rules::builtin().aliases)
    }

    /// OmniMem writes an untagged memory as `"tags": "[]"` (or `[]`, `""`): the L002 says the
    /// tags are empty, as a native record's says of empty `domains`, rather than that the
    /// field is missing from a memory that has it.
    #[test]
    fn empty_tags_are_reported_as_empty_not_missing() {
        for tags in [
            serde_json::json!("[]"),
            serde_json::json!([]),
            serde_json::json!("  "),
        ] {
            let p = one(
                serde_json::json!({"key": "ep_6917_044", "tags": tags, "outcome": "succeeded",
                "lesson": "Remember to update the changelog", "created_at": "1763100000"}),
            );
            let Item::Invalid(d) = p.item else {
                panic!("{tags}")
            };
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(d[0].code, codes::MISSING_FIELD);
            assert_eq!(
                d[0].message, "omnimem memory has no domain: `tags` is empty",
                "{tags}"
            );
            assert!(d[0].help.contains("\"tags\": [\"python\"]"), "{}", d[0].help);
        }
        let p = one(serde_json::json!({"key": "m", "outcome": "succeeded", "created_at": 1763100000}));
        let Item::Invalid(d) = p.item else { panic!() };
        assert_eq!(d[0].message, "omnimem memory has no `tags`");
        assert_eq!(d[0].help, MISSING_HELP);
    }

    /// An abandoned approach written as an object without `name` is an L002 about that entry,
    /// whose help says how to write one, not that a memory needs key, tags, outcome and
    /// created_at (which it has).
    #[test]
    fn an_abandoned_approach_without_a_name_says_how_to_write_one() {
        let p = one(
            serde_json::json!({"key": "a1", "tags": "[\"go\"]", "outcome": "failed", "created_at": 1763400000,
            "abandoned_approaches": "[{\"approach\": \"go clean -cache\", \"reason\": \"slow\"}]"}),
        );
        let Item::Invalid(d) = p.item else { panic!() };
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, codes::MISSING_FIELD);
        assert_eq!(d[0].evidence["field"], "abandoned_approaches[0].name");
        assert!(!d[0].help.contains("created_at"), "{}", d[0].help);
        assert!(d[0].help.contains("`name`"), "{}", d[0].help);
    }

    #[test]
    fn recognised_by_content() {
        assert!(looks_like(
            br#"[{"key": "m-1", "tags": "[\"py\"]", "outcome": "succeeded"}]"#
        ));
        assert!(looks_like(
            b"\xef\xbb\xbf{\"key\": \"m-1\", \"created_at\": \"1714552800\"}\n{}"
        ));
        assert!(looks_like(br#"  [ {"key": "m-1", "effort_score": 3} ]"#));
        assert!(!looks_like(br#"[{"id": "exp-1", "key": "x", "tags": []}]"#));
        assert!(!looks_like(
            br#"{"id": "exp-1", "recorded_at": "2026-01-01T00:00:00Z"}"#
        ));
        // Decided by the first records, not the first alone: memories with a key and no id
        // are most of them, or one has a field only OmniMem writes.
        assert!(looks_like(
            br#"[{"key": "m-1", "created_at": "2024-05-01T10:00:00Z"}]"#
        ));
        assert!(looks_like(
            br#"[{"key": "m-1", "created_at": "2024-05-01T10:00:00Z"}, {"key": "m-2", "tags": ["go"]}, {"key": "m-3", "ta"#
        ));
        assert!(looks_like(
            b"{\"key\": \"m-1\", \"outcome\": \"failed\"}\n{\"key\": \"m-2\", \"tags\": \"go\"}\n"
        ));
        assert!(looks_like(b"{\n  \"key\": \"m-1\",\n  \"tags\": [\"go\"]\n}\n"));
        // Records with an id outnumber them: native.
        assert!(!looks_like(
            br#"[{"key": "m-1", "tags": ["go"]}, {"id": "e-1", "domains": "go"}, {"id": "e-2", "domains": "go"}]"#
        ));
        assert!(!looks_like(
            br#"[{"key": "m-1", "outcome": "failed"}, {"task": "t"}, {"recorded_at": "2026-01-01T00:00:00Z"}]"#
        ));
        assert!(!looks_like(b"- key: m-1\n  tags: [python]\n"));
    }

    #[test]
    fn strings_stand_in_for_numbers_lists_and_booleans() {
        let p = one(serde_json::json!({
            "key": "mem-42",
            "tags": "[\"Python\", \"testing\"]",
            "outcome": "Succeeded",
            "effort_score": "4",
            "blessed": "1",
            "gotchas": "fixtures leak state between tests",
            "abandoned_approaches": "[{\"name\": \"monkeypatching time\", \"type\": \"approach\", \"reason\": \"flaky\"}]",
            "created_at": "1714552800",
            "updated_at": 1714556400,
            "content": "c",
            "embedding": [0.1, 0.2]
        }));
        let Item::Experience(e) = p.item else {
            panic!("{:?}", p.item)
        };
        assert_eq!(&*e.id, "mem-42");
        assert_eq!(e.domains, ["Python", "testing"]);
        assert_eq!(e.outcome, Some(Outcome::Succeeded));
        assert_eq!(e.effort, Some(4));
        assert!(e.blessed);
        assert_eq!(e.recorded_at, 1_714_552_800_000);
        assert_eq!(e.words.gotchas, ["fixtures leak state between tests"]);
        assert_eq!(e.words.dead_ends[0].name, "monkeypatching time");
        assert_eq!(e.words.dead_ends[0].reason.as_deref(), Some("flaky"));
        assert_eq!(e.words.content.as_deref(), Some("c"));
        assert!(p.unknown.is_empty(), "OmniMem's own fields are not reported");

        // updated_at stands in for a missing created_at.
        let p = one(
            serde_json::json!({"key": "m", "tags": ["go"], "outcome": "pivoted", "updated_at": 1714556400.5}),
        );
        let Item::Experience(e) = p.item else { panic!() };
        assert_eq!(e.recorded_at, 1_714_556_400_500);
    }

    #[test]
    fn inactive_and_invalid_memories() {
        let p = one(
            serde_json::json!({"key": "m", "tags": "[\"py\", \"docker\"]", "outcome": "succeeded", "state": "archived", "created_at": 1}),
        );
        let Item::Invalid(d) = p.item else { panic!() };
        assert!(d.iter().all(|d| d.code == codes::INACTIVE_MEMORY));
        let domains: Vec<_> = d.iter().map(|d| d.domain.clone().unwrap()).collect();
        assert_eq!(domains, ["docker", "python"], "aliased, one note per domain");
        assert_eq!(d[0].evidence["state"], "archived", "unquoted");

        let p = one(serde_json::json!({"tags": [], "outcome": "won", "blessed": "maybe"}));
        let Item::Invalid(d) = p.item else { panic!() };
        let codes: Vec<(&str, String)> = d
            .iter()
            .map(|d| (d.code, d.evidence["field"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(
            codes,
            [
                ("L002", "key".into()),
                ("L002", "tags".into()),
                ("L003", "outcome".into()),
                ("L002", "created_at".into()),
                ("L003", "blessed".into()),
            ]
        );

        // A time no timestamp can write (it would saturate to the year -292 million) is
        // invalid, as seconds and as milliseconds.
        for created in [serde_json::json!(1e300), serde_json::json!("-1e300")] {
            let p = one(
                serde_json::json!({"key": "m", "tags": "python", "outcome": "succeeded", "created_at": created}),
            );
            let Item::Invalid(d) = p.item else {
                panic!("{created} was read")
            };
            assert_eq!(
                (d[0].code, &d[0].evidence["field"]),
                ("L003", &serde_json::json!("created_at"))
            );
        }
    }
}
