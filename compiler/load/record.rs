//! The record validator: one parsed record (a `serde_json::Value`) to an `Experience` or a
//! `LessonClaim`, or to the diagnostics that say precisely what is wrong with it.
//!
//! This is the reference implementation of DESIGN §3.1. The typed fast path (`fast.rs`)
//! accepts a subset of what this accepts and must build the same values; anything it does
//! not accept comes here.

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, codes};
use crate::model::{
    Args, Check, ClaimSource, DeadEnd, Experience, Id, Kind, LessonClaim, Narrative, OpStatus, Operation,
    Outcome, SourceLoc,
};
use crate::time::parse_rfc3339;

/// One record's result, with its 1-based line.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub line: u32,
    pub item: Item,
    /// Unknown field paths (`session_id`, `operations[].duration_ms`), sorted, deduplicated.
    pub unknown: Vec<String>,
    /// L003s about optional fields whose bad value cost only the field (`Validator::lenient`):
    /// the record was kept, without it.
    pub ignored: Vec<Diagnostic>,
}

#[derive(Debug)]
pub(crate) enum Item {
    Experience(Experience),
    Claim(LessonClaim),
    /// The record was refused; the diagnostics say why.
    Invalid(Vec<Diagnostic>),
    /// The file's first record carries `"generator": "skillc"`: the file is our own output.
    Generated,
}

impl Parsed {
    /// `item` at `line`, with no unknown field and nothing ignored.
    pub fn of(line: u32, item: Item) -> Parsed {
        Parsed {
            line,
            item,
            unknown: Vec::new(),
            ignored: Vec::new(),
        }
    }

    pub fn invalid(line: u32, diag: Diagnostic) -> Parsed {
        Parsed::of(line, Item::Invalid(vec![diag]))
    }

    /// `invalid`, with the domains the record named (`naming_domains`): `why DOMAIN` counts it.
    pub fn invalid_naming(line: u32, diag: Diagnostic, domains: &[String]) -> Parsed {
        Parsed::of(line, Item::Invalid(naming_domains(vec![diag], domains)))
    }
}

/// Fields of an experience record (`type` included).
pub(crate) const EXPERIENCE_FIELDS: &[&str] = &[
    "type",
    "id",
    "recorded_at",
    "domains",
    "project",
    "task",
    "outcome",
    "effort",
    "lesson",
    "breakthrough",
    "gotchas",
    "dead_ends",
    "operations",
    "in_play",
    "blessed",
];

/// Fields of a lesson claim.
pub(crate) const CLAIM_FIELDS: &[&str] = &[
    "type",
    "id",
    "recorded_at",
    "domains",
    "project",
    "text",
    "kind",
    "source",
    "evidence",
    "operation_key",
];

const OPERATION_FIELDS: &[&str] = &["tool", "args", "status", "error", "check"];
const CHECK_FIELDS: &[&str] = &["label", "target", "passed"];
const DEAD_END_FIELDS: &[&str] = &["name", "type", "reason"];

const OUTCOMES: &str = "one of succeeded, pivoted, abandoned, failed";
const KINDS: &str = "one of do, avoid, watch";
const SOURCES: &str = "one of extractor, model, user";
const STATUSES: &str = "one of ok, error, refused";

/// `true` when a parsed value is a file skillc wrote (`"generator": "skillc"`).
pub(crate) fn is_generated(v: &Value) -> bool {
    v.get("generator").and_then(Value::as_str) == Some("skillc")
}

/// The JSON type of a value, for messages (never the value itself).
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A field path's last name: `operations[0].check.passed` → `passed`.
fn leaf(field: &str) -> &str {
    field.rsplit('.').next().unwrap_or(field)
}

/// Words producers write for a keyword the format spells otherwise. Only readings that are
/// plain: `"partial"` could be pivoted or failed, so it is not here.
const OUTCOME_WORDS: &[(&str, &str)] = &[
    ("success", "succeeded"),
    ("successful", "succeeded"),
    ("succeed", "succeeded"),
    ("succeeds", "succeeded"),
    ("passed", "succeeded"),
    ("pass", "succeeded"),
    ("done", "succeeded"),
    ("completed", "succeeded"),
    ("complete", "succeeded"),
    ("resolved", "succeeded"),
    ("solved", "succeeded"),
    ("fixed", "succeeded"),
    ("fail", "failed"),
    ("failure", "failed"),
    ("fails", "failed"),
    ("error", "failed"),
    ("errored", "failed"),
    ("abandon", "abandoned"),
    ("gave up", "abandoned"),
    ("given up", "abandoned"),
    ("gave-up", "abandoned"),
    ("gave_up", "abandoned"),
    ("pivot", "pivoted"),
    ("changed approach", "pivoted"),
];

const STATUS_WORDS: &[(&str, &str)] = &[
    ("success", "ok"),
    ("succeeded", "ok"),
    ("successful", "ok"),
    ("passed", "ok"),
    ("done", "ok"),
    ("completed", "ok"),
    ("fail", "error"),
    ("failed", "error"),
    ("failure", "error"),
    ("err", "error"),
    ("errored", "error"),
    ("exception", "error"),
    ("denied", "refused"),
    ("rejected", "refused"),
    ("blocked", "refused"),
    ("declined", "refused"),
    ("permission denied", "refused"),
];

const KIND_WORDS: &[(&str, &str)] = &[
    ("dont", "avoid"),
    ("don't", "avoid"),
    ("never", "avoid"),
    ("dead end", "avoid"),
    ("dead_end", "avoid"),
    ("gotcha", "watch"),
    ("gotchas", "watch"),
    ("warning", "watch"),
    ("caution", "watch"),
    ("rule", "do"),
    ("lesson", "do"),
];

const SOURCE_WORDS: &[(&str, &str)] = &[
    ("human", "user"),
    ("person", "user"),
    ("manual", "user"),
    ("agent", "model"),
    ("llm", "model"),
    ("ai", "model"),
    ("auto", "extractor"),
    ("automatic", "extractor"),
];

/// The value a refused `v` most likely stands for, written as the field wants it (JSON), for
/// L003's help: `"success"` in `outcome` is `"succeeded"`, `"true"` is `true`, `"3"` in
/// `effort` is `3`, unix seconds (or a time to the minute) in `recorded_at` are an RFC 3339
/// string. `None` where no reading is plain. Built from tables, numbers and times only, so it
/// never echoes other user text.
fn likely_meant(field: &str, v: &Value) -> Option<String> {
    let text = v.as_str().map(|s| s.trim().to_ascii_lowercase());
    let word = |table: &[(&str, &'static str)]| {
        let t = text.as_deref()?;
        let meant = table.iter().find(|(w, _)| *w == t)?.1;
        Some(format!("\"{meant}\""))
    };
    match leaf(field) {
        "outcome" => word(OUTCOME_WORDS),
        "status" => word(STATUS_WORDS),
        "kind" => word(KIND_WORDS),
        "source" => word(SOURCE_WORDS),
        "blessed" | "passed" => {
            let b = match (v, text.as_deref()) {
                (_, Some("true" | "yes" | "y" | "1")) => true,
                (_, Some("false" | "no" | "n" | "0")) => false,
                (Value::Number(n), _) if n.as_f64() == Some(1.0) => true,
                (Value::Number(n), _) if n.as_f64() == Some(0.0) => false,
                _ => return None,
            };
            Some(b.to_string())
        }
        "effort" => {
            let n = text?.parse::<f64>().ok()?;
            (n.fract() == 0.0 && (1.0..=5.0).contains(&n)).then(|| (n as i64).to_string())
        }
        "recorded_at" if v.is_string() => {
            // A time written to the minute ("2026-11-03 09:12", "…T09:12+01:00"): RFC 3339
            // wants the seconds.
            let s = v.as_str()?.trim();
            let minute = s
                .get(..16)
                .filter(|m| m.len() == 16 && matches!(m.as_bytes()[10], b'T' | b't' | b' '))?;
            let fixed = format!("{}T{}:00{}", &minute[..10], &minute[11..], &s[16..]);
            // Only a string that then parses, so nothing but a time is quoted back.
            parse_rfc3339(&fixed)?;
            Some(format!("{fixed:?}"))
        }
        "recorded_at" => {
            let n = v.as_f64()?;
            // Unix seconds between 2001 and 2286, or milliseconds over the same span.
            let ms = if (1e9..1e10).contains(&n) {
                crate::time::from_unix_seconds(n)?
            } else if (1e12..1e13).contains(&n) {
                crate::time::from_unix_millis(n)?
            } else {
                return None;
            };
            Some(format!("\"{}\"", crate::time::format_rfc3339(ms)))
        }
        _ => None,
    }
}

/// What a diagnostic may say about a bad value: short strings are quoted, anything else is
/// named by its type, so a diagnostic never echoes a record or a long text.
pub(crate) fn found(v: &Value) -> String {
    match v {
        Value::String(s) if s.chars().count() <= 32 && !s.contains(['\n', '\r']) => {
            format!("{s:?}")
        }
        Value::Number(n) if n.to_string().len() <= 20 => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => type_name(v).to_string(),
    }
}

/// An id skillc accepts holds no control character: ids are cited in every Markdown file,
/// where a line break would start a section of its own.
pub(crate) fn is_plain_id(id: &str) -> bool {
    !id.contains(char::is_control)
}

/// An id as a diagnostic's subject: control characters escaped (`\n`), since such an id is
/// refused and the subject is printed to a terminal.
pub(crate) fn shown_id(id: &str) -> String {
    if is_plain_id(id) {
        id.to_string()
    } else {
        id.escape_default().to_string()
    }
}

fn blank_is_none(s: String) -> Option<String> {
    if s.trim().is_empty() { None } else { Some(s) }
}

/// The field validator for one record: collects every problem, then the record is either
/// built or refused with all of them. Other formats' readers (OmniMem) add their own lenient
/// conversions to it in their modules.
pub(crate) struct Validator<'a> {
    pub(crate) loc: &'a SourceLoc,
    pub(crate) subject: String,
    what: &'static str,
    pub(crate) diags: Vec<Diagnostic>,
    /// See `Parsed::ignored`.
    pub(crate) ignored: Vec<Diagnostic>,
}

impl<'a> Validator<'a> {
    /// `what` names the record in messages (`record`, `omnimem memory`).
    pub(crate) fn new(loc: &'a SourceLoc, subject: String, what: &'static str) -> Validator<'a> {
        Validator {
            loc,
            subject,
            what,
            diags: Vec::new(),
            ignored: Vec::new(),
        }
    }

    /// Runs `check` on an optional field whose bad value should cost only that field, not the
    /// record (`task`, `effort`, `lesson`, `breakthrough`, `blessed`): its L003 still reports
    /// the value, and the field reads as absent (`blessed` as false: nobody vouched).
    pub(crate) fn lenient<T>(&mut self, check: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.diags.len();
        let value = check(self);
        for mut d in self.diags.drain(before..) {
            d.message.push_str("; the field is ignored and the record kept");
            self.ignored.push(d.with("ignored", true));
        }
        value
    }

    pub(crate) fn missing(&mut self, field: &str) {
        self.missing_as(format!("{} has no `{field}`", self.what), field);
    }

    fn missing_in(&mut self, what: String, field: String) {
        self.missing_as(format!("{what} has no `{field}`"), &field);
    }

    /// An L002 about `field`, saying `message`; returned so a caller can give it its own help.
    pub(crate) fn missing_as(&mut self, message: String, field: &str) -> &mut Diagnostic {
        let d = Diagnostic::new(codes::MISSING_FIELD, message)
            .subject(self.subject.clone())
            .at(self.loc)
            .with("field", field);
        self.diags.push(d);
        self.diags.last_mut().expect("just pushed")
    }

    /// `id` when it `is_plain_id`, else an L003 naming its first control character.
    pub(crate) fn plain_id(&mut self, field: &str, id: String) -> Option<String> {
        let Some(c) = id.chars().find(|c| c.is_control()) else {
            return Some(id);
        };
        let found = format!("U+{:04X}", c as u32);
        self.invalid_as(field, "a string without control characters", found);
        None
    }

    pub(crate) fn invalid(&mut self, field: &str, expected: &str, v: &Value) {
        self.invalid_as(field, expected, found(v));
        if let Some(meant) = likely_meant(field, v) {
            let d = self.diags.last_mut().expect("just pushed");
            d.message.push_str(&format!(" (did you mean {meant}?)"));
            d.help = "write the value the format allows that the record means: `suggested` is the likely one (skillc explain L003 lists every allowed value)";
            d.evidence.insert("suggested", Value::String(meant));
        }
    }

    /// L003: `field` must be `expected` and is `found`.
    fn invalid_as(&mut self, field: &str, expected: &str, found: String) {
        let d = Diagnostic::new(
            codes::INVALID_VALUE,
            format!("`{field}` must be {expected}, found {found}"),
        )
        .subject(self.subject.clone())
        .at(self.loc)
        .with("field", field)
        .with("expected", expected)
        .with("found", found);
        self.diags.push(d);
    }

    /// An optional string; null or blank is absent.
    pub(crate) fn opt_string(&mut self, field: &str, v: Option<Value>) -> Option<String> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => blank_is_none(s),
            Some(other) => {
                self.invalid(field, "a string", &other);
                None
            }
        }
    }

    /// A required string inside a list item (`dead_ends[2].name`): null or blank is missing
    /// from `item` (`dead end 3`).
    fn req_item_string(&mut self, item: String, field: String, v: Option<Value>) -> Option<String> {
        match v {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
            None | Some(Value::Null) | Some(Value::String(_)) => {
                self.missing_in(item, field);
                None
            }
            Some(other) => {
                self.invalid(&field, "a string", &other);
                None
            }
        }
    }

    /// A required string; null or blank is missing.
    fn req_string(&mut self, field: &str, v: Option<Value>) -> Option<String> {
        match v {
            None | Some(Value::Null) => {
                self.missing(field);
                None
            }
            Some(Value::String(s)) if s.trim().is_empty() => {
                self.missing(field);
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                self.invalid(field, "a string", &other);
                None
            }
        }
    }

    /// A string or a list of strings; null is empty. Blank entries are dropped when
    /// `drop_blank`.
    fn strings(&mut self, field: &str, v: Option<Value>, drop_blank: bool) -> Vec<String> {
        let expected = "a string or a list of strings";
        match v {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => {
                if drop_blank && s.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![s]
                }
            }
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => {
                            if !(drop_blank && s.trim().is_empty()) {
                                out.push(s);
                            }
                        }
                        // An empty slot in a list says nothing; it costs no record.
                        Value::Null => {}
                        other => {
                            self.invalid(field, expected, &other);
                            return Vec::new();
                        }
                    }
                }
                out
            }
            Some(other) => {
                self.invalid(field, expected, &other);
                Vec::new()
            }
        }
    }

    fn recorded_at(&mut self, v: Option<Value>) -> Option<i64> {
        let field = "recorded_at";
        match v {
            None | Some(Value::Null) => {
                self.missing(field);
                None
            }
            Some(Value::String(s)) if s.trim().is_empty() => {
                self.missing(field);
                None
            }
            Some(Value::String(s)) => {
                let t = parse_rfc3339(&s);
                if t.is_none() {
                    self.invalid(field, "an RFC 3339 timestamp", &Value::String(s));
                }
                t
            }
            Some(other) => {
                self.invalid(field, "an RFC 3339 timestamp", &other);
                None
            }
        }
    }

    fn domains(&mut self, v: Option<Value>) -> Vec<String> {
        let missing = matches!(&v, None | Some(Value::Null));
        let before = self.diags.len();
        let domains = self.strings("domains", v, false);
        if missing {
            self.missing("domains");
        } else if self.diags.len() == before && domains.iter().all(|d| d.trim().is_empty()) {
            // Present but empty (`[]`, `""`, blanks): "has no `domains`" would send the reader
            // looking for a field that is there.
            let message = format!("{} has no domain: `domains` is empty", self.what);
            self.missing_as(message, "domains").help = "name at least one skill domain (`\"domains\": [\"python\"]`): a record is compiled into its domains' skills";
        }
        domains
    }

    fn keyword<T>(
        &mut self,
        field: &str,
        v: Option<Value>,
        required: bool,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        match v {
            None | Some(Value::Null) => {
                if required {
                    self.missing(field);
                }
                None
            }
            Some(Value::String(s)) => {
                let t = any_case(&s, parse);
                if t.is_none() {
                    self.invalid(field, expected, &Value::String(s));
                }
                t
            }
            Some(other) => {
                self.invalid(field, expected, &other);
                None
            }
        }
    }

    fn effort(&mut self, v: Option<Value>) -> Option<u8> {
        let v = match v {
            None | Some(Value::Null) => return None,
            Some(v) => v,
        };
        let n = match &v {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e9)
                    .map(|f| f as i64)
            }),
            _ => None,
        };
        match n {
            Some(n @ 1..=5) => Some(n as u8),
            _ => {
                self.invalid("effort", "an integer from 1 to 5", &v);
                None
            }
        }
    }

    fn bool(&mut self, field: &str, v: Option<Value>) -> bool {
        match v {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(other) => {
                self.invalid(field, "true or false", &other);
                false
            }
        }
    }

    fn dead_ends(&mut self, v: Option<Value>, unknown: &mut Vec<String>) -> Vec<DeadEnd> {
        let items = match v {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) => vec![Value::String(s)],
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.invalid("dead_ends", "a list of dead ends", &other);
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::String(s) => {
                    if let Some(name) = blank_is_none(s) {
                        out.push(DeadEnd {
                            name,
                            kind: None,
                            reason: None,
                        });
                    }
                }
                Value::Object(map) => {
                    let mut f = Fields::new(map, DEAD_END_FIELDS, "dead_ends[].", unknown);
                    let name = self.req_item_string(
                        format!("dead end {}", i + 1),
                        format!("dead_ends[{i}].name"),
                        f.take("name"),
                    );
                    let kind = self.opt_string(&format!("dead_ends[{i}].type"), f.take("type"));
                    let reason = self.opt_string(&format!("dead_ends[{i}].reason"), f.take("reason"));
                    if let Some(name) = name {
                        out.push(DeadEnd { name, kind, reason });
                    }
                }
                other => {
                    self.invalid(
                        &format!("dead_ends[{i}]"),
                        "a string or an object with a `name`",
                        &other,
                    );
                }
            }
        }
        out
    }

    fn operations(&mut self, v: Option<Value>, unknown: &mut Vec<String>) -> Vec<Operation> {
        let items = match v {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.invalid("operations", "a list of operations", &other);
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let map = match item {
                Value::Object(map) => map,
                other => {
                    self.invalid(&format!("operations[{i}]"), "an object with a `tool`", &other);
                    continue;
                }
            };
            let mut f = Fields::new(map, OPERATION_FIELDS, "operations[].", unknown);
            let tool = self.req_item_string(
                format!("operation {}", i + 1),
                format!("operations[{i}].tool"),
                f.take("tool"),
            );
            let args = self.args(&format!("operations[{i}].args"), f.take("args"));
            let status = self
                .keyword(
                    &format!("operations[{i}].status"),
                    f.take("status"),
                    false,
                    STATUSES,
                    parse_status,
                )
                .unwrap_or(OpStatus::Ok);
            let error = self.opt_string(&format!("operations[{i}].error"), f.take("error"));
            let check = match f.take("check") {
                None | Some(Value::Null) => None,
                Some(Value::Object(map)) => {
                    let mut c = Fields::new(map, CHECK_FIELDS, "operations[].check.", f.unknown);
                    let label = self.req_item_string(
                        format!("the check of operation {}", i + 1),
                        format!("operations[{i}].check.label"),
                        c.take("label"),
                    );
                    let target = self.opt_string(&format!("operations[{i}].check.target"), c.take("target"));
                    let passed = match c.take("passed") {
                        Some(Value::Bool(b)) => Some(b),
                        None | Some(Value::Null) => {
                            self.missing_in(
                                format!("the check of operation {}", i + 1),
                                format!("operations[{i}].check.passed"),
                            );
                            None
                        }
                        Some(other) => {
                            self.invalid(&format!("operations[{i}].check.passed"), "true or false", &other);
                            None
                        }
                    };
                    match (label, passed) {
                        (Some(label), Some(passed)) => Some(Check {
                            label,
                            target,
                            passed,
                        }),
                        _ => None,
                    }
                }
                Some(other) => {
                    self.invalid(
                        &format!("operations[{i}].check"),
                        "an object with `label` and `passed`",
                        &other,
                    );
                    None
                }
            };
            if let Some(tool) = tool {
                out.push(Operation {
                    tool: super::fast::shared_tool(&tool),
                    args,
                    status,
                    error,
                    secret_print: 0,
                    check: check.map(Box::new),
                });
            }
        }
        out
    }
}

impl Validator<'_> {
    /// A call's arguments: an object, as DESIGN §3.1 has them. A string that holds a JSON
    /// object is taken as that object (tool-call APIs hand arguments over JSON-encoded, and
    /// GAIA stores them so); null or a blank string is no arguments. Anything else is an L003:
    /// a bare command line or a list says nothing about which argument is which, and the
    /// operation key and the mechanical comparison read them by name.
    fn args(&mut self, field: &str, v: Option<Value>) -> Args {
        const EXPECTED: &str = "an object (or a json string holding one)";
        match v {
            None | Some(Value::Null) => Args::default(),
            Some(v @ Value::Object(_)) => Args::from_value(&v),
            Some(Value::String(s)) if s.trim().is_empty() => Args::default(),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                Ok(v @ Value::Object(_)) => match super::dupkey::find(&s) {
                    None => Args::from_value(&v),
                    Some(dup) => {
                        let path = match dup.path.as_str() {
                            "" => field.to_string(),
                            inner if inner.starts_with('[') => format!("{field}{inner}"),
                            inner => format!("{field}.{inner}"),
                        };
                        let d = Diagnostic::new(
                            codes::MALFORMED_RECORD,
                            format!(
                                "key `{}` appears twice in `{path}`; the record was skipped",
                                dup.key
                            ),
                        )
                        .subject(self.subject.clone())
                        .at(self.loc)
                        .with("key", dup.key)
                        .with("object", path);
                        self.diags.push(d);
                        Args::default()
                    }
                },
                _ => {
                    self.invalid(field, EXPECTED, &Value::String(s));
                    Args::default()
                }
            },
            Some(other) => {
                self.invalid(field, EXPECTED, &other);
                Args::default()
            }
        }
    }
}

/// A keyword as written, else trimmed and lower-cased: `"Succeeded"` and `"OK"` name a value
/// the format knows, so they are that value rather than a malformed record. The fast path
/// reads keywords through this too, so both paths take the same records.
pub(crate) fn any_case<T>(s: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    parse(s).or_else(|| {
        let folded = s.trim().to_ascii_lowercase();
        if folded == s { None } else { parse(&folded) }
    })
}

pub(crate) fn parse_status(s: &str) -> Option<OpStatus> {
    match s {
        "ok" => Some(OpStatus::Ok),
        "error" => Some(OpStatus::Error),
        "refused" => Some(OpStatus::Refused),
        _ => None,
    }
}

/// An object's fields, taken one by one; whatever is left when it is dropped is reported
/// as unknown (with `prefix`).
struct Fields<'u> {
    map: Map<String, Value>,
    known: &'static [&'static str],
    prefix: &'static str,
    unknown: &'u mut Vec<String>,
}

impl<'u> Fields<'u> {
    fn new(
        map: Map<String, Value>,
        known: &'static [&'static str],
        prefix: &'static str,
        unknown: &'u mut Vec<String>,
    ) -> Fields<'u> {
        Fields {
            map,
            known,
            prefix,
            unknown,
        }
    }

    fn take(&mut self, field: &str) -> Option<Value> {
        debug_assert!(self.known.contains(&field));
        self.map.remove(field)
    }
}

impl Drop for Fields<'_> {
    fn drop(&mut self) {
        for key in self.map.keys() {
            if !self.known.contains(&key.as_str()) {
                self.unknown.push(format!("{}{key}", self.prefix));
            }
        }
    }
}

/// An object with no field of a record that holds a list of objects (`{"version": 2,
/// "experiences": [...]}`, as some exports wrap their records): one L001 naming the list,
/// instead of a missing-field error for each required field and an unknown-field warning for
/// the list, which read as if the records themselves lacked their fields.
fn wrapped_records(map: &serde_json::Map<String, Value>, loc: &SourceLoc) -> Option<Diagnostic> {
    let known = |k: &String| EXPERIENCE_FIELDS.contains(&k.as_str()) || CLAIM_FIELDS.contains(&k.as_str());
    if map.keys().any(known) {
        return None;
    }
    let (key, n) = map.iter().find_map(|(k, v)| match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            Some((k, items.len()))
        }
        _ => None,
    })?;
    let mut d = Diagnostic::new(
        codes::MALFORMED_RECORD,
        format!(
            "object is no record: it holds {} under `{}` and none of a record's fields, so {} not read",
            crate::diagnostics::counted(n, "object"),
            shown_id(key),
            if n == 1 { "it was" } else { "they were" }
        ),
    )
    .subject(&*loc.file)
    .at(loc);
    d.help = "give the records themselves, one per line (JSON Lines), as a JSON array or as a YAML list; `jq -c '.<list>[]'` turns such an export into JSON Lines";
    Some(d)
}

/// Validates one record. `first` marks the first record of a file, which is checked for
/// skillc's own mark (DESIGN §4).
pub(crate) fn from_value(v: Value, loc: &SourceLoc, first: bool) -> Parsed {
    let line = loc.line;
    if first && is_generated(&v) {
        return Parsed::of(line, Item::Generated);
    }
    let map = match v {
        Value::Object(map) => map,
        other => {
            let d = Diagnostic::new(
                codes::MALFORMED_RECORD,
                format!("record is not an object (found {})", type_name(&other)),
            )
            .subject(&*loc.file)
            .at(loc);
            return Parsed::invalid(line, d);
        }
    };
    if let Some(d) = wrapped_records(&map, loc) {
        return Parsed::invalid(line, d);
    }
    let subject = match map.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => shown_id(s),
        _ => loc.file.to_string(),
    };
    // Kept so a refused record still says which domains it named (`why DOMAIN` counts them).
    let named_domains = map.get("domains").map(readable_domains).unwrap_or_default();
    let mut unknown = Vec::new();
    let mut c = Validator::new(loc, subject, "record");
    let is_claim = match map.get("type") {
        None | Some(Value::Null) => Some(false),
        Some(Value::String(s)) if s == "experience" => Some(false),
        Some(Value::String(s)) if s == "lesson" => Some(true),
        Some(other) => {
            c.invalid("type", "\"experience\", \"lesson\" or absent", other);
            None
        }
    };
    let item = match is_claim {
        None => None,
        Some(false) => {
            let mut f = Fields::new(map, EXPERIENCE_FIELDS, "", &mut unknown);
            experience(&mut c, &mut f, loc)
        }
        Some(true) => {
            c.what = "lesson claim";
            let mut f = Fields::new(map, CLAIM_FIELDS, "", &mut unknown);
            claim(&mut c, &mut f, loc)
        }
    };
    unknown.sort();
    unknown.dedup();
    // A refused record reports every problem it has, the ignorable ones too.
    let (item, ignored) = match item {
        Some(item) if c.diags.is_empty() => (item, c.ignored),
        _ => {
            c.diags.extend(c.ignored);
            (Item::Invalid(naming_domains(c.diags, &named_domains)), Vec::new())
        }
    };
    Parsed {
        line,
        item,
        unknown,
        ignored,
    }
}

/// The domains a record names, as written (trimmed, blanks dropped), read leniently: a string
/// or the strings of a list, each split at its commas as normalize splits it ("python,
/// django"). Empty when it names none readably.
pub(crate) fn readable_domains(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => comma_list(s),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(comma_list)
            .collect(),
        _ => Vec::new(),
    }
}

/// The names in a comma-separated string (`"python, django"`), trimmed, blanks dropped.
pub(crate) fn comma_list(s: &str) -> Vec<String> {
    (s.split(',').map(str::trim))
        .filter(|t| !t.is_empty())
        .map(String::from)
        .collect()
}

/// A parsed record's domains as a refused one names them (`readable_domains`).
pub(crate) fn named(domains: &[String]) -> Vec<String> {
    readable_domains(&Value::from(domains.to_vec()))
}

/// A refused record's diagnostics, each with the domains the record named (`domains`
/// evidence), so `why DOMAIN` can count the records of the domain the load refused.
pub(crate) fn naming_domains(mut diags: Vec<Diagnostic>, domains: &[String]) -> Vec<Diagnostic> {
    if !domains.is_empty() {
        for d in &mut diags {
            d.evidence.insert("domains", Value::from(domains.to_vec()));
        }
    }
    diags
}

/// The fields experiences and claims share: id, recorded_at, domains, project (trimmed).
fn header(c: &mut Validator, f: &mut Fields) -> (Option<String>, Option<i64>, Vec<String>, Option<String>) {
    let id = c
        .req_string("id", f.take("id"))
        .and_then(|id| c.plain_id("id", id));
    let recorded_at = c.recorded_at(f.take("recorded_at"));
    let domains = c.domains(f.take("domains"));
    let project = c
        .opt_string("project", f.take("project"))
        .map(|p| p.trim().to_string());
    (id, recorded_at, domains, project)
}

fn experience(c: &mut Validator, f: &mut Fields, loc: &SourceLoc) -> Option<Item> {
    let (id, recorded_at, domains, project) = header(c, f);
    let task = c.lenient(|c| c.opt_string("task", f.take("task")));
    let outcome = c.keyword("outcome", f.take("outcome"), true, OUTCOMES, Outcome::parse);
    let effort = c.lenient(|c| c.effort(f.take("effort")));
    let lesson = c.lenient(|c| c.opt_string("lesson", f.take("lesson")));
    let breakthrough = c.lenient(|c| c.opt_string("breakthrough", f.take("breakthrough")));
    let gotchas = c.strings("gotchas", f.take("gotchas"), true);
    let dead_ends = c.dead_ends(f.take("dead_ends"), f.unknown);
    let operations = c.operations(f.take("operations"), f.unknown);
    let in_play = c.strings("in_play", f.take("in_play"), true);
    let blessed = c.lenient(|c| c.bool("blessed", f.take("blessed")));
    f.take("type");
    Some(Item::Experience(Experience {
        id: id?.into(),
        recorded_at: recorded_at?,
        domains,
        refused_domains: Vec::new(),
        project,
        outcome: Some(outcome?),
        effort,
        words: Narrative {
            task,
            lesson,
            breakthrough,
            gotchas,
            dead_ends,
            content: None,
        }
        .into(),
        operations,
        in_play,
        blessed,
        source: loc.clone(),
    }))
}

fn claim(c: &mut Validator, f: &mut Fields, loc: &SourceLoc) -> Option<Item> {
    let (id, recorded_at, domains, project) = header(c, f);
    let text = c.req_string("text", f.take("text"));
    let kind = c.keyword("kind", f.take("kind"), true, KINDS, Kind::parse);
    let source = c.keyword("source", f.take("source"), true, SOURCES, ClaimSource::parse);
    let evidence = c.strings("evidence", f.take("evidence"), true);
    let operation_key = c.opt_string("operation_key", f.take("operation_key"));
    f.take("type");
    Some(Item::Claim(LessonClaim {
        id: id?.into(),
        recorded_at: recorded_at?,
        domains,
        refused_domains: Vec::new(),
        project,
        text: text?,
        kind: kind?,
        source: source?,
        evidence: evidence.into_iter().map(Id::from).collect(),
        operation_key,
        loc: loc.clone(),
        ended: None,
    }))
}
