//! The typed fast path: one JSON record deserialised straight into an `Experience` or a
//! `LessonClaim`, without building a `serde_json::Value` for it (only `args` stays a
//! `Value`).
//!
//! It accepts only records that are entirely valid and refuses (returns `None`) at the
//! first thing it does not like; the caller then re-parses the record with the reference
//! validator in `record.rs`, which produces the precise diagnostics. So diagnostics have a
//! single source, and for every record the fast path accepts it builds exactly what
//! `record::from_value` builds (a test holds it to that).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::dupkey;
use super::record::{CLAIM_FIELDS, EXPERIENCE_FIELDS, any_case, parse_status};
use crate::model::{
    Args, Check, ClaimSource, DeadEnd, Experience, Id, Kind, LessonClaim, Millis, Narrative, OpStatus,
    Operation, Outcome, SourceLoc,
};
use crate::time::parse_rfc3339;

/// A valid record, with its unknown field paths (sorted, deduplicated).
pub(crate) enum Record {
    Experience(Experience),
    Claim(LessonClaim),
}

/// Parses one JSONL line; `None` when the line is not a valid record (or not JSON at all).
pub(crate) fn parse_slice(
    bytes: &[u8],
    file: &std::sync::Arc<str>,
    line: u32,
) -> Option<(Record, Vec<String>)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let acc = Acc::deserialize(&mut de).ok()?;
    de.end().ok()?;
    acc.finish(file, line)
}

fn bail<E: de::Error>() -> E {
    E::custom("not a fast-path record")
}

/// Everything a record said, before the type decides which fields count.
#[derive(Default)]
pub(crate) struct Acc {
    present: u32,
    claim: bool,
    id: Option<String>,
    recorded_at: Option<Millis>,
    domains: Option<Vec<String>>,
    project: Option<String>,
    task: Option<String>,
    outcome: Option<Outcome>,
    effort: Option<u8>,
    lesson: Option<String>,
    breakthrough: Option<String>,
    gotchas: Vec<String>,
    dead_ends: Vec<DeadEnd>,
    operations: Vec<Operation>,
    in_play: Vec<String>,
    blessed: bool,
    text: Option<String>,
    kind: Option<Kind>,
    source: Option<ClaimSource>,
    evidence: Vec<String>,
    operation_key: Option<String>,
    unknown: Vec<String>,
}

/// Top-level keys; the discriminant is the bit in `Acc::present`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Type,
    Id,
    RecordedAt,
    Domains,
    Project,
    Task,
    Outcome,
    Effort,
    Lesson,
    Breakthrough,
    Gotchas,
    DeadEnds,
    Operations,
    InPlay,
    Blessed,
    Text,
    Kind,
    Source,
    Evidence,
    OperationKey,
}

const ALL_KEYS: [(Field, &str); 20] = [
    (Field::Type, "type"),
    (Field::Id, "id"),
    (Field::RecordedAt, "recorded_at"),
    (Field::Domains, "domains"),
    (Field::Project, "project"),
    (Field::Task, "task"),
    (Field::Outcome, "outcome"),
    (Field::Effort, "effort"),
    (Field::Lesson, "lesson"),
    (Field::Breakthrough, "breakthrough"),
    (Field::Gotchas, "gotchas"),
    (Field::DeadEnds, "dead_ends"),
    (Field::Operations, "operations"),
    (Field::InPlay, "in_play"),
    (Field::Blessed, "blessed"),
    (Field::Text, "text"),
    (Field::Kind, "kind"),
    (Field::Source, "source"),
    (Field::Evidence, "evidence"),
    (Field::OperationKey, "operation_key"),
];

fn key_of(s: &str) -> Option<Field> {
    Some(match s {
        "type" => Field::Type,
        "id" => Field::Id,
        "recorded_at" => Field::RecordedAt,
        "domains" => Field::Domains,
        "project" => Field::Project,
        "task" => Field::Task,
        "outcome" => Field::Outcome,
        "effort" => Field::Effort,
        "lesson" => Field::Lesson,
        "breakthrough" => Field::Breakthrough,
        "gotchas" => Field::Gotchas,
        "dead_ends" => Field::DeadEnds,
        "operations" => Field::Operations,
        "in_play" => Field::InPlay,
        "blessed" => Field::Blessed,
        "text" => Field::Text,
        "kind" => Field::Kind,
        "source" => Field::Source,
        "evidence" => Field::Evidence,
        "operation_key" => Field::OperationKey,
        _ => return None,
    })
}

/// A map key: one of `known` (its index) or an unknown name.
enum AnyKey {
    Known(usize),
    Other(String),
}

struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = AnyKey;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = AnyKey;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(match self.0.iter().position(|k| *k == s) {
            Some(i) => AnyKey::Known(i),
            None => AnyKey::Other(s.to_string()),
        })
    }
}

/// A top-level key.
enum TopKey {
    Known(Field),
    Other(String),
}

impl<'de> Deserialize<'de> for TopKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TopKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TopKey, E> {
                Ok(match key_of(s) {
                    Some(k) => TopKey::Known(k),
                    None => TopKey::Other(s.to_string()),
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// An optional string: null or blank is absent.
fn opt_string<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<String>, A::Error> {
    Ok(map
        .next_value::<Option<String>>()?
        .filter(|s| !s.trim().is_empty()))
}

/// A required string (non-blank); anything else bails.
fn req_string<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<String>, A::Error> {
    match opt_string(map)? {
        Some(s) => Ok(Some(s)),
        None => Err(bail()),
    }
}

/// A value the fast path does not read (an unknown field's): skipped, but a duplicate key
/// anywhere in it bails, as it refuses the record, and so does deep nesting (`dupkey::plain`).
fn skip_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    let raw = map.next_value::<&RawValue>()?.get();
    if dupkey::plain(raw) { Ok(()) } else { Err(bail()) }
}

/// A key seen twice in one object bails (`seen`: a bit per known key).
fn first_sight<E: de::Error>(seen: &mut u32, key: usize) -> Result<(), E> {
    let bit = 1 << key;
    if *seen & bit != 0 {
        return Err(bail());
    }
    *seen |= bit;
    Ok(())
}

/// An unknown field path, unless this object already had it (`mine`: where the paths this
/// object added start); a second one bails, and so does an object with many unknown fields
/// (the validator's maps compare them without a quadratic scan).
fn unknown_once<E: de::Error>(unknown: &mut Vec<String>, mine: usize, path: String) -> Result<(), E> {
    const MANY: usize = 16;
    let own = &unknown[mine..];
    if own.len() >= MANY || own.contains(&path) {
        return Err(bail());
    }
    unknown.push(path);
    Ok(())
}

/// A string or a list of strings; null is `None`.
struct Strings {
    drop_blank: bool,
}

impl<'de> DeserializeSeed<'de> for Strings {
    type Value = Option<Vec<String>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strings {
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a list of strings")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        self.visit_string(s.to_string())
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        if self.drop_blank && s.trim().is_empty() {
            Ok(Some(Vec::new()))
        } else {
            Ok(Some(vec![s]))
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(2));
        while let Some(s) = seq.next_element::<String>()? {
            if !(self.drop_blank && s.trim().is_empty()) {
                out.push(s);
            }
        }
        Ok(Some(out))
    }
}

/// A keyword parsed from a string, null is `None`.
struct Keyword<T>(fn(&str) -> Option<T>);

impl<'de, T> DeserializeSeed<'de> for Keyword<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<T> Visitor<'_> for Keyword<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a keyword")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        any_case(s, self.0).map(Some).ok_or_else(bail)
    }
}

fn parse_time(s: &str) -> Option<Millis> {
    if s.trim().is_empty() {
        None
    } else {
        parse_rfc3339(s)
    }
}

fn parse_type(s: &str) -> Option<bool> {
    match s {
        "experience" => Some(false),
        "lesson" => Some(true),
        _ => None,
    }
}

struct Effort;

impl<'de> DeserializeSeed<'de> for Effort {
    type Value = Option<u8>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for Effort {
    type Value = Option<u8>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer from 1 to 5")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        if (1..=5).contains(&v) {
            Ok(Some(v as u8))
        } else {
            Err(bail())
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        if (1..=5).contains(&v) {
            Ok(Some(v as u8))
        } else {
            Err(bail())
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if v.fract() == 0.0 && (1.0..=5.0).contains(&v) {
            Ok(Some(v as u8))
        } else {
            Err(bail())
        }
    }
}

/// A list of dead ends (or one bare string); null is empty.
struct DeadEnds<'u>(&'u mut Vec<String>);

impl<'de> DeserializeSeed<'de> for DeadEnds<'_> {
    type Value = Vec<DeadEnd>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DeadEnds<'_> {
    type Value = Vec<DeadEnd>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of dead ends")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(bare_dead_end(s.to_string()).into_iter().collect())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(d) = seq.next_element_seed(DeadEndSeed(&mut *self.0))? {
            out.extend(d);
        }
        Ok(out)
    }
}

fn bare_dead_end(name: String) -> Option<DeadEnd> {
    if name.trim().is_empty() {
        return None;
    }
    Some(DeadEnd {
        name,
        kind: None,
        reason: None,
    })
}

const DEAD_END_KEYS: &[&str] = &["name", "type", "reason"];

struct DeadEndSeed<'u>(&'u mut Vec<String>);

impl<'de> DeserializeSeed<'de> for DeadEndSeed<'_> {
    type Value = Option<DeadEnd>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DeadEndSeed<'_> {
    type Value = Option<DeadEnd>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a dead end")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(bare_dead_end(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(bare_dead_end(s))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut name, mut kind, mut reason) = (None, None, None);
        let (mut seen, mine) = (0, self.0.len());
        while let Some(k) = map.next_key_seed(KeySeed(DEAD_END_KEYS))? {
            match k {
                AnyKey::Known(i) => {
                    first_sight(&mut seen, i)?;
                    match i {
                        0 => name = opt_string(&mut map)?,
                        1 => kind = opt_string(&mut map)?,
                        _ => reason = opt_string(&mut map)?,
                    }
                }
                AnyKey::Other(k) => {
                    unknown_once(self.0, mine, format!("dead_ends[].{k}"))?;
                    skip_value(&mut map)?;
                }
            }
        }
        match name {
            Some(name) => Ok(Some(DeadEnd { name, kind, reason })),
            None => Err(bail()),
        }
    }
}

/// A list of operations; null is empty.
struct Operations<'u>(&'u mut Vec<String>);

impl<'de> DeserializeSeed<'de> for Operations<'_> {
    type Value = Vec<Operation>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Operations<'_> {
    type Value = Vec<Operation>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of operations")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(op) = seq.next_element_seed(OperationSeed(&mut *self.0))? {
            out.push(op);
        }
        Ok(out)
    }
}

/// The tool name as one shared copy per thread and name: a corpus names a handful of tools
/// across millions of calls. Names beyond the first few hundred are not remembered.
pub(crate) fn shared_tool(name: &str) -> std::sync::Arc<str> {
    use std::cell::RefCell;
    use std::sync::Arc;
    const REMEMBERED: usize = 256;
    thread_local! {
        static TOOLS: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
    }
    TOOLS.with_borrow_mut(|tools| {
        if let Some(known) = tools.iter().find(|t| ***t == *name) {
            return known.clone();
        }
        let tool: Arc<str> = name.into();
        if tools.len() < REMEMBERED {
            tools.push(tool.clone());
        }
        tool
    })
}

/// A non-blank tool name, shared; blank is no name (the record then bails).
fn tool_name(s: &str) -> Option<std::sync::Arc<str>> {
    (!s.trim().is_empty()).then(|| shared_tool(s))
}

const OPERATION_KEYS: &[&str] = &["tool", "args", "status", "error", "check"];
const CHECK_KEYS: &[&str] = &["label", "target", "passed"];

struct OperationSeed<'u>(&'u mut Vec<String>);

impl<'de> DeserializeSeed<'de> for OperationSeed<'_> {
    type Value = Operation;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OperationSeed<'_> {
    type Value = Operation;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an operation")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut tool = None;
        let mut args = Args::default();
        let mut status = OpStatus::Ok;
        let mut error = None;
        let mut check = None;
        let (mut seen, mine) = (0, self.0.len());
        while let Some(k) = map.next_key_seed(KeySeed(OPERATION_KEYS))? {
            let i = match k {
                AnyKey::Known(i) => i,
                AnyKey::Other(k) => {
                    unknown_once(self.0, mine, format!("operations[].{k}"))?;
                    skip_value(&mut map)?;
                    continue;
                }
            };
            first_sight(&mut seen, i)?;
            match i {
                // Read in place and shared (`Keyword`): no string per call.
                0 => tool = map.next_value_seed(Keyword(tool_name))?,
                // Kept as the raw text: no `Value` tree per call (see `Args`). Only an object
                // (or null) is taken whole; anything else is the validator's to judge.
                1 => {
                    let raw = map.next_value::<&RawValue>()?.get();
                    match raw.as_bytes().first() {
                        Some(b'{') if dupkey::plain(raw) => args = Args::from_json(raw),
                        Some(b'n') => args = Args::from_json(raw),
                        _ => return Err(bail()),
                    }
                }
                2 => {
                    status = map
                        .next_value_seed(Keyword(parse_status))?
                        .unwrap_or(OpStatus::Ok)
                }
                3 => error = opt_string(&mut map)?,
                _ => check = map.next_value_seed(CheckSeed(&mut *self.0))?,
            }
        }
        Ok(Operation {
            tool: tool.ok_or_else(bail)?,
            args,
            status,
            error,
            secret_print: 0,
            check: check.map(Box::new),
        })
    }
}

struct CheckSeed<'u>(&'u mut Vec<String>);

impl<'de> DeserializeSeed<'de> for CheckSeed<'_> {
    type Value = Option<Check>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CheckSeed<'_> {
    type Value = Option<Check>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a check")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut label, mut target, mut passed) = (None, None, None);
        let (mut seen, mine) = (0, self.0.len());
        while let Some(k) = map.next_key_seed(KeySeed(CHECK_KEYS))? {
            match k {
                AnyKey::Known(i) => {
                    first_sight(&mut seen, i)?;
                    match i {
                        0 => label = opt_string(&mut map)?,
                        1 => target = opt_string(&mut map)?,
                        _ => passed = map.next_value::<Option<bool>>()?,
                    }
                }
                AnyKey::Other(k) => {
                    unknown_once(self.0, mine, format!("operations[].check.{k}"))?;
                    skip_value(&mut map)?;
                }
            }
        }
        Ok(Some(Check {
            label: label.ok_or_else(bail)?,
            target,
            passed: passed.ok_or_else(bail)?,
        }))
    }
}

impl<'de> Deserialize<'de> for Acc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AccVisitor)
    }
}

struct AccVisitor;

impl<'de> Visitor<'de> for AccVisitor {
    type Value = Acc;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Acc, A::Error> {
        let mut a = Acc::default();
        // Unknown top-level names, apart from the nested paths the fields add to `a.unknown`.
        let mut top = Vec::new();
        while let Some(k) = map.next_key::<TopKey>()? {
            let key = match k {
                TopKey::Known(key) => key,
                TopKey::Other(name) => {
                    unknown_once(&mut top, 0, name)?;
                    skip_value(&mut map)?;
                    continue;
                }
            };
            // A key given twice refuses the record: the validator says so (`dupkey`).
            first_sight(&mut a.present, key as usize)?;
            match key {
                Field::Type => a.claim = map.next_value_seed(Keyword(parse_type))?.unwrap_or(false),
                Field::Id => {
                    // An id with a control character is refused: the full validator says so.
                    a.id = req_string(&mut map)?;
                    if a.id.as_deref().is_some_and(|id| !super::record::is_plain_id(id)) {
                        return Err(bail());
                    }
                }
                Field::RecordedAt => a.recorded_at = map.next_value_seed(Keyword(parse_time))?,
                Field::Domains => a.domains = map.next_value_seed(Strings { drop_blank: false })?,
                Field::Project => {
                    a.project = opt_string(&mut map)?.map(|p| match p.trim() {
                        t if t.len() == p.len() => p,
                        t => t.to_string(),
                    })
                }
                Field::Task => a.task = opt_string(&mut map)?,
                Field::Outcome => a.outcome = map.next_value_seed(Keyword(Outcome::parse))?,
                Field::Effort => a.effort = map.next_value_seed(Effort)?,
                Field::Lesson => a.lesson = opt_string(&mut map)?,
                Field::Breakthrough => a.breakthrough = opt_string(&mut map)?,
                Field::Gotchas => {
                    a.gotchas = map
                        .next_value_seed(Strings { drop_blank: true })?
                        .unwrap_or_default()
                }
                Field::DeadEnds => a.dead_ends = map.next_value_seed(DeadEnds(&mut a.unknown))?,
                Field::Operations => a.operations = map.next_value_seed(Operations(&mut a.unknown))?,
                Field::InPlay => {
                    a.in_play = map
                        .next_value_seed(Strings { drop_blank: true })?
                        .unwrap_or_default()
                }
                Field::Blessed => a.blessed = map.next_value::<Option<bool>>()?.unwrap_or(false),
                Field::Text => a.text = opt_string(&mut map)?,
                Field::Kind => a.kind = map.next_value_seed(Keyword(Kind::parse))?,
                Field::Source => a.source = map.next_value_seed(Keyword(ClaimSource::parse))?,
                Field::Evidence => {
                    a.evidence = map
                        .next_value_seed(Strings { drop_blank: true })?
                        .unwrap_or_default()
                }
                Field::OperationKey => a.operation_key = opt_string(&mut map)?,
            }
        }
        a.unknown.append(&mut top);
        Ok(a)
    }
}

impl Acc {
    /// The record, when it is entirely valid.
    pub(crate) fn finish(mut self, file: &std::sync::Arc<str>, line: u32) -> Option<(Record, Vec<String>)> {
        let known = if self.claim {
            CLAIM_FIELDS
        } else {
            EXPERIENCE_FIELDS
        };
        for (key, name) in ALL_KEYS {
            if self.present & (1 << key as u32) != 0 && !known.contains(&name) {
                self.unknown.push(name.to_string());
            }
        }
        if !self.unknown.is_empty() {
            self.unknown.sort();
            self.unknown.dedup();
        }
        let domains = self.domains?;
        if domains.iter().all(|d| d.trim().is_empty()) {
            return None;
        }
        let source = SourceLoc {
            file: file.clone(),
            line,
        };
        let record = if self.claim {
            Record::Claim(LessonClaim {
                id: self.id?.into(),
                recorded_at: self.recorded_at?,
                domains,
                refused_domains: Vec::new(),
                project: self.project,
                text: self.text?,
                kind: self.kind?,
                source: self.source?,
                evidence: self.evidence.into_iter().map(Id::from).collect(),
                operation_key: self.operation_key,
                loc: source,
                ended: None,
            })
        } else {
            Record::Experience(Experience {
                id: self.id?.into(),
                recorded_at: self.recorded_at?,
                domains,
                refused_domains: Vec::new(),
                project: self.project,
                outcome: Some(self.outcome?),
                effort: self.effort,
                words: Narrative {
                    task: self.task,
                    lesson: self.lesson,
                    breakthrough: self.breakthrough,
                    gotchas: self.gotchas,
                    dead_ends: self.dead_ends,
                    content: None,
                }
                .into(),
                operations: self.operations,
                in_play: self.in_play,
                blessed: self.blessed,
                source,
            })
        };
        Some((record, self.unknown))
    }
}
