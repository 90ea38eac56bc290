//! JSON Lines (the hot path: blocks of lines parsed in parallel) and JSON documents (an
//! array of records, or one record).

use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use super::dupkey;
use super::encoding::{self, BadByte};
use super::fast::{self, Record};
use super::nonfinite;
use super::record::{self, Item, Parsed};
use crate::diagnostics::{Diagnostic, codes};
use crate::model::SourceLoc;

/// A JSONL block is cut into parts of at most this size (a sixteenth of the block when
/// that is smaller), parsed in parallel.
const PART: usize = 512 << 10;

/// A serde_json error's message without its " at line L column C" (which is relative to the
/// text serde_json saw, not to the file).
pub(crate) fn error_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn count_newlines(b: &[u8]) -> u32 {
    b.iter().filter(|&&c| c == b'\n').count() as u32
}

/// The first `\n` in `b` at or after `from` (a word at a time).
fn next_newline(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut i = from;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes")) ^ NL;
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'\n').map(|p| i + p)
}

/// Parses a block of complete JSONL lines whose first line is `first_line`. Returns the
/// records in line order (as parts, to be taken in order) and the number of newlines in the
/// block. While `first_pending` is set, the first non-blank line is the file's first record
/// and is checked for skillc's mark.
pub(crate) fn jsonl_block(
    block: &[u8],
    file: &Arc<str>,
    first_line: u32,
    first_pending: &mut bool,
) -> (Vec<Vec<Parsed>>, u32) {
    let mut out = Vec::new();
    let mut line = first_line;
    let mut rest = block;
    while *first_pending && !rest.is_empty() {
        let end = next_newline(rest, 0).unwrap_or(rest.len());
        let l = &rest[..end];
        if !is_blank(l) {
            *first_pending = false;
            out.push(vec![slow_line(l, file, line, true)]);
        }
        line += 1;
        rest = &rest[(end + 1).min(rest.len())..];
    }
    // Parts cut at newlines; each part's first line number comes from a (vectorised)
    // newline count, so the parts can be parsed independently.
    let part = (block.len() / 16).clamp(1, PART);
    let n = rest.len().div_ceil(part).max(1);
    let mut parts = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let at = (rest.len() * k / n).max(start);
        if let Some(nl) = next_newline(rest, at) {
            parts.push(&rest[start..nl + 1]);
            start = nl + 1;
        }
    }
    parts.push(&rest[start..]);
    let counts: Vec<u32> = parts.par_iter().map(|p| count_newlines(p)).collect();
    let mut starts = Vec::with_capacity(parts.len());
    for &c in &counts {
        starts.push(line);
        line += c;
    }
    out.par_extend(
        parts
            .par_iter()
            .zip(starts)
            .map(|(part, first)| parse_part(part, file, first)),
    );
    (out, line - first_line)
}

fn parse_part(part: &[u8], file: &Arc<str>, mut line: u32) -> Vec<Parsed> {
    let mut out = Vec::with_capacity(part.len() / 512 + 1);
    let mut start = 0;
    while start < part.len() {
        let end = next_newline(part, start).unwrap_or(part.len());
        let l = &part[start..end];
        if !is_blank(l) {
            out.push(parse_line(l, file, line));
        }
        line += 1;
        start = end + 1;
    }
    out
}

/// A line without the byte-order mark it starts with when files that each began with one were
/// joined (`cat a.jsonl b.jsonl`, or an export appended to by a tool that writes one).
pub(crate) fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(super::BOM.as_bytes()).unwrap_or(line)
}

fn parse_line(bytes: &[u8], file: &Arc<str>, line: u32) -> Parsed {
    let bytes = without_bom(bytes);
    match fast::parse_slice(bytes, file, line) {
        Some((record, unknown)) => Parsed {
            line,
            item: item(record),
            unknown,
            ignored: Vec::new(),
        },
        None => slow_line(bytes, file, line, false),
    }
}

pub(crate) fn item(record: Record) -> Item {
    match record {
        Record::Experience(e) => Item::Experience(e),
        Record::Claim(c) => Item::Claim(c),
    }
}

/// The reference path for one line: a `Value`, then the validator.
pub(crate) fn slow_line(bytes: &[u8], file: &Arc<str>, line: u32, first: bool) -> Parsed {
    let bytes = without_bom(bytes);
    let loc = SourceLoc {
        file: file.clone(),
        line,
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => {
            let text = std::str::from_utf8(bytes).unwrap_or_default();
            duplicate_key(text, &v, &loc, first).unwrap_or_else(|| record::from_value(v, &loc, first))
        }
        Err(e) => match std::str::from_utf8(bytes).ok().and_then(nonfinite::to_null) {
            // Python's `NaN` or `Infinity`: the record is read with null in its place.
            Some((fixed, found)) => {
                let mut p = slow_line(fixed.as_bytes(), file, line, first);
                nonfinite::attach(&mut p, found, file, line);
                p
            }
            None => not_json(bytes, &e, &loc),
        },
    }
}

/// The L001 of a JSON Lines line that does not parse (`e`: serde_json's error on `bytes`).
pub(crate) fn not_json(bytes: &[u8], e: &serde_json::Error, loc: &SourceLoc) -> Parsed {
    if std::str::from_utf8(bytes).is_err() {
        return encoding::line_not_utf8(bytes, loc);
    }
    if too_deep(e) {
        return deep_record(bytes, loc);
    }
    if let Some(p) = raw_control(bytes, e, loc) {
        return p;
    }
    let d = Diagnostic::new(
        codes::MALFORMED_RECORD,
        format!("line is not valid json: {}", error_message(e)),
    )
    .subject(&*loc.file)
    .at(loc)
    .with("column", e.column());
    Parsed::invalid(loc.line, d)
}

/// A line that is JSON but for a raw control character inside a string (a tab, an escape
/// sequence's ESC, a carriage return pasted from a terminal), which JSON requires escaped:
/// refused as any malformed line, but named by the record's id, with the field that holds the
/// character and which character it is, so the record can be found and its writer fixed.
/// `None` when the line is not otherwise JSON.
fn raw_control(bytes: &[u8], e: &serde_json::Error, loc: &SourceLoc) -> Option<Parsed> {
    if !e.to_string().starts_with("control character") {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let (escaped, first) = escape_controls(text)?;
    let v: Value = serde_json::from_str(&escaped).ok()?;
    let mut fields = Vec::new();
    controls_in(&v, &mut String::new(), &mut fields);
    let field = fields.first()?.clone();
    let subject = match v.get("id").or_else(|| v.get("key")) {
        Some(Value::String(id)) if !id.trim().is_empty() => record::shown_id(id),
        _ => loc.file.to_string(),
    };
    let shown = control_name(first);
    let more = match fields.len() {
        1 => String::new(),
        n => format!(
            " (and {})",
            crate::diagnostics::plural(n - 1, "other field", "other fields")
        ),
    };
    let mut d = Diagnostic::new(
        codes::MALFORMED_RECORD,
        format!(
            "record holds a raw control character, {shown}, in `{field}`{more}: json strings must escape it; the record was skipped"
        ),
    )
    .subject(subject)
    .at(loc)
    .with("column", e.column())
    .with("field", field)
    .with("character", format!("U+{:04X}", first as u32));
    if fields.len() > 1 {
        d = d.with("fields", fields);
    }
    d.help = "escape the character in the string (\\t, \\n, \\u001b) or remove it, best by writing records with a json encoder; the rest of the file was still read";
    let domains = v.get("domains").map(record::readable_domains).unwrap_or_default();
    Some(Parsed::invalid_naming(loc.line, d, &domains))
}

/// Stands for a raw control character in `escape_controls`' text: a noncharacter, which no
/// record has any use for.
const MARK: char = '\u{fdd0}';

/// `text` with every control character inside a string replaced by `MARK`, and the first
/// one; `None` when no string holds one (or the text holds `MARK` itself).
fn escape_controls(text: &str) -> Option<(String, char)> {
    if text.contains(MARK) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    let mut first = None;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                first.get_or_insert(c);
                out.push(MARK);
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    first.map(|f| (out, f))
}

/// The places (`lesson`, `operations[1].error`) of the strings in `v` that held a raw
/// control character (`MARK` now), keys included, in the order serde_json keeps them.
fn controls_in(v: &Value, at: &mut String, found: &mut Vec<String>) {
    let has = |s: &str| s.contains(MARK);
    match v {
        Value::String(s) if has(s) => found.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("[{i}]"));
                controls_in(item, at, found);
                at.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                let len = at.len();
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(&k.escape_default().to_string());
                if has(k) {
                    found.push(at.clone());
                }
                controls_in(item, at, found);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// A control character as a person reads it: `U+0009 (tab)`.
fn control_name(c: char) -> String {
    let name = match c {
        '\t' => " (tab)",
        '\n' => " (line feed)",
        '\r' => " (carriage return)",
        '\u{1b}' => " (escape, which starts terminal colour codes)",
        '\0' => " (nul)",
        '\u{8}' => " (backspace)",
        '\u{c}' => " (form feed)",
        _ => "",
    };
    format!("U+{:04X}{name}", c as u32)
}

/// serde_json stops at this depth of nested objects and lists (its recursion limit).
const MAX_DEPTH: usize = 128;

fn too_deep(e: &serde_json::Error) -> bool {
    recursion_limit(&e.to_string())
}

/// An error message of serde_json's, or serde_yaml's, recursion limit.
pub(crate) fn recursion_limit(message: &str) -> bool {
    message.starts_with("recursion limit exceeded")
}

/// A record nested deeper than serde_json reads: valid JSON, refused (L001) wherever it
/// stands, since a value read at that depth would be read as nothing (`Args::value`) and so
/// compare equal to every other such value. Named by its id when it has one; the help says to
/// flatten it, not to fix a syntax it does not lack.
fn deep_record(bytes: &[u8], loc: &SourceLoc) -> Parsed {
    Parsed::invalid(loc.line, too_deep_diagnostic(id_subject(bytes, loc), loc))
}

/// The subject of a refused record that could not be read whole: its id (an OmniMem
/// memory's `key`) read on its own, else the file. An id holding U+FFFD (a byte that was not
/// UTF-8, replaced) is no id.
pub(crate) fn id_subject(bytes: &[u8], loc: &SourceLoc) -> String {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
        key: Option<Value>,
    }
    match serde_json::from_slice::<IdOnly>(bytes) {
        Ok(
            IdOnly {
                id: Some(Value::String(id)),
                ..
            }
            | IdOnly {
                id: None,
                key: Some(Value::String(id)),
            },
        ) if !id.trim().is_empty() && !id.contains('\u{fffd}') => record::shown_id(&id),
        _ => loc.file.to_string(),
    }
}

/// The L001 of a record nested deeper than the parsers read (serde_json's limit, which
/// serde_yaml shares).
pub(crate) fn too_deep_diagnostic(subject: String, loc: &SourceLoc) -> Diagnostic {
    let mut d = Diagnostic::new(
        codes::MALFORMED_RECORD,
        format!(
            "record nests objects and lists more than {} levels deep; the record was skipped",
            MAX_DEPTH - 1
        ),
    )
    .subject(subject)
    .at(loc)
    .with("max_depth", MAX_DEPTH - 1);
    d.help = "flatten the record (a tool's `args` rarely needs more than a few levels); the rest of the file was still read";
    d
}

/// A native record that holds a key twice in one object, refused with an L001 at the line of
/// the second occurrence (`text` is the record's own text, starting at `loc`); `None` when
/// it has no duplicate. JSON parsers keep one of the two values silently, and YAML refuses
/// the same record, so skillc does not guess which was meant. The file's first record is
/// left to the check for skillc's mark.
pub(crate) fn duplicate_key(text: &str, v: &Value, loc: &SourceLoc, first: bool) -> Option<Parsed> {
    if first && record::is_generated(v) {
        return None;
    }
    let dup = dupkey::find(text)?;
    let line = loc.line + count_newlines(&text.as_bytes()[..dup.offset]);
    let at = SourceLoc {
        file: loc.file.clone(),
        line,
    };
    let message = if dup.path.is_empty() {
        format!(
            "key `{}` appears twice in the record; the record was skipped",
            dup.key
        )
    } else {
        format!(
            "key `{}` appears twice in `{}`; the record was skipped",
            dup.key, dup.path
        )
    };
    // The record's id names it, unless the id is what was given twice.
    let id_twice = dup.path.is_empty() && dup.key == "id";
    let subject = match v.get("id") {
        Some(Value::String(id)) if !id_twice && !id.trim().is_empty() => record::shown_id(id),
        _ => loc.file.to_string(),
    };
    let mut d = Diagnostic::new(codes::MALFORMED_RECORD, message)
        .subject(subject)
        .at(&at)
        .with("key", dup.key);
    if !dup.path.is_empty() {
        d = d.with("object", dup.path);
    }
    // The domains it named (the first spelling, when `domains` is the key given twice), so
    // `why DOMAIN` counts it.
    let domains = v.get("domains").map(record::readable_domains).unwrap_or_default();
    Some(Parsed::invalid_naming(loc.line, d, &domains))
}

/// How many lines the format checks look through for the first record that parses.
const SNIFF_LINES: usize = 64;

/// The first of the first `SNIFF_LINES` lines of `text` that is a complete JSON object on its
/// own, starting at the start of its line. A pretty-printed document has no such line (its
/// objects are indented, or open on one line and close on another); JSON Lines has one on
/// nearly every line.
pub(crate) fn first_object_line(text: &[u8]) -> Option<&[u8]> {
    text.split(|&b| b == b'\n')
        .take(SNIFF_LINES)
        .find(|l| l.first() == Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok())
}

/// `true` when a `.json` file is really JSON Lines: its first line is a complete object on
/// its own and more follows, or, when the first line does not parse (a line cut short, a
/// stray character), a later line is one (`first_object_line`) and the text is not one JSON
/// document. So a broken first line costs that line (L001), not the file's every record.
pub(crate) fn looks_like_lines(text: &str) -> bool {
    let t = text.trim_start();
    let (first, rest) = t.split_once('\n').unwrap_or((t, ""));
    if rest.trim().is_empty() || t.starts_with('[') {
        return false;
    }
    if t.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok() {
        return true;
    }
    first_object_line(rest.as_bytes()).is_some() && serde_json::from_str::<serde::de::IgnoredAny>(t).is_err()
}

/// `true` when a `.jsonl` file holds a JSON document instead of lines: an array (written on
/// one line, or over many), or objects pretty-printed over many lines (`jq` without `-c`), told
/// apart from JSON Lines whose first line is broken as `looks_like_lines` does. Such a file is read
/// as a `.json` one, so its records are read rather than each of its lines refused. A file of
/// one-line objects, or of one-line arrays, stays JSON Lines.
pub(crate) fn jsonl_is_document(text: &str) -> bool {
    let t = text.trim_start();
    let (first, rest) = t.split_once('\n').unwrap_or((t, ""));
    let whole_line = serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok();
    match t.as_bytes().first() {
        Some(b'[') if whole_line => rest.trim().is_empty(),
        // An array over many lines, unless the first line is a broken one of JSON Lines (a
        // later line is a record on its own and the text is no JSON document).
        Some(b'[') => {
            first_object_line(rest.as_bytes()).is_none()
                || serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok()
        }
        Some(b'{') => !whole_line && !looks_like_lines(text),
        _ => false,
    }
}

struct Cursor<'t> {
    bytes: &'t [u8],
    pos: usize,
    line: u32,
}

impl Cursor<'_> {
    /// Skips whitespace, and a byte-order mark where documents that each began with one were
    /// joined.
    fn skip_ws(&mut self) {
        while let Some(&c) = self.bytes.get(self.pos) {
            if self.bytes[self.pos..].starts_with(super::BOM.as_bytes()) {
                self.pos += super::BOM.len();
                continue;
            }
            if !c.is_ascii_whitespace() {
                break;
            }
            if c == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
    }

    fn advance_to(&mut self, pos: usize) {
        self.line += count_newlines(&self.bytes[self.pos..pos]);
        self.pos = pos;
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }
}

/// Turns one parsed element into a record (`first`: the file's first element).
pub(crate) type Convert<'c> = &'c dyn Fn(Value, &SourceLoc, bool) -> Parsed;

/// A JSON document: an array of records or one record. A syntax error inside a record whose
/// brackets still close skips that record alone (`skip_broken`); any other keeps the records
/// before it and skips the rest, with one diagnostic at the error's line.
/// `bad`: where the file's bytes were not UTF-8 (`encoding::lossy`); an element holding one is
/// refused.
pub(crate) fn json_document(text: &str, file: &str, bad: &[BadByte]) -> Vec<Parsed> {
    json_document_with(text, file, None, bad)
}

/// `json_document` with another reader's record converter (`None`: native records, with the
/// typed fast path).
pub(crate) fn json_document_with(
    text: &str,
    name: &str,
    convert: Option<Convert>,
    bad: &[BadByte],
) -> Vec<Parsed> {
    // Python's `NaN` and `Infinity`: read as null, each said on the record that holds it
    // (where the text has no bad bytes, whose places the rewrite would move).
    if bad.is_empty()
        && let Some((fixed, found)) = nonfinite::to_null(text)
    {
        let mut out = json_document_with(&fixed, name, convert, bad);
        for f in found {
            let at = out.iter().rposition(|p| p.line <= f.line).unwrap_or(0);
            if let Some(p) = out.get_mut(at) {
                nonfinite::attach(p, [f], name, 1);
            }
        }
        return out;
    }
    let file: &Arc<str> = &name.into();
    let mut out = Vec::new();
    let mut cur = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    let broken = |line: u32, message: String| {
        let loc = SourceLoc {
            file: file.clone(),
            line,
        };
        Diagnostic::new(codes::MALFORMED_RECORD, message)
            .subject(&**file)
            .at(&loc)
    };
    let malformed = |line: u32, message: String| Parsed::invalid(line, broken(line, message));
    // A broken record inside an array whose end cannot be told ends the read: the help says
    // so instead of the usual "the rest was still read".
    let array_cut = |line: u32, message: String| {
        let mut d = broken(line, message);
        d.help = "fix the syntax at the reported line; the records after it in this array were not read";
        Parsed::invalid(line, d)
    };
    // An array or an object, or several written one after another (`jq` without `-c` writes
    // objects so; `cat a.json b.json` joins arrays): each object is a record. A broken record
    // costs itself where its brackets tell where it ends, else the rest of the file.
    let mut first = true;
    let generated = |out: &[Parsed]| matches!(out.last().map(|p| &p.item), Some(Item::Generated));
    loop {
        cur.skip_ws();
        match cur.peek() {
            None => return out,
            Some(b'[') => {
                cur.pos += 1;
                let mut empty = true;
                loop {
                    cur.skip_ws();
                    match cur.peek() {
                        None => {
                            out.push(malformed(
                                cur.line,
                                "unexpected end of file: the json array is not closed".into(),
                            ));
                            return out;
                        }
                        Some(b']') if empty => {
                            cur.pos += 1;
                            break;
                        }
                        _ => {}
                    }
                    let start = cur.pos;
                    match element(text, &mut cur, file, first, convert) {
                        Ok(p) => out.push(encoding::refuse_in(p, bad, start..cur.pos, name)),
                        Err((line, msg)) => match skip_broken(text, &mut cur, file, line, &msg, b",]") {
                            Some((p, at_next)) => {
                                out.push(p);
                                if at_next {
                                    first = false;
                                    empty = false;
                                    continue;
                                }
                            }
                            None => {
                                out.push(array_cut(
                                    line,
                                    format!("invalid json: {msg}; the rest of the array was skipped"),
                                ));
                                return out;
                            }
                        },
                    }
                    first = false;
                    empty = false;
                    cur.skip_ws();
                    match cur.peek() {
                        Some(b',') => cur.pos += 1,
                        Some(b']') => {
                            cur.pos += 1;
                            break;
                        }
                        None => {
                            out.push(malformed(
                                cur.line,
                                "unexpected end of file: the json array is not closed".into(),
                            ));
                            return out;
                        }
                        Some(_) => {
                            out.push(array_cut(
                                cur.line,
                                "invalid json: expected `,` or `]` after a record; the rest of the array was skipped".into(),
                            ));
                            return out;
                        }
                    }
                }
            }
            Some(b'{') => {
                let start = if first { 0 } else { cur.pos };
                match element(text, &mut cur, file, first, convert) {
                    Ok(p) => out.push(encoding::refuse_in(p, bad, start..cur.pos, name)),
                    Err((line, msg)) if first => {
                        out.push(malformed(line, format!("invalid json: {msg}")));
                        return out;
                    }
                    Err((line, msg)) => match skip_broken(text, &mut cur, file, line, &msg, b"{[") {
                        Some((p, _)) => out.push(p),
                        None => {
                            let mut d = broken(
                                line,
                                format!("invalid json: {msg}; the rest of the file was skipped"),
                            );
                            d.help = "fix the syntax at the reported line; the records after it in this file were not read";
                            out.push(Parsed::invalid(line, d));
                            return out;
                        }
                    },
                }
                first = false;
            }
            Some(_) if first => {
                out.push(malformed(
                    cur.line,
                    "file is not a json array or object of records".into(),
                ));
                return out;
            }
            Some(_) => break,
        }
        cur.skip_ws();
        if !matches!(cur.peek(), Some(b'[' | b'{')) || generated(&out) {
            break;
        }
    }
    cur.skip_ws();
    if cur.peek().is_some() && !generated(&out) {
        out.push(malformed(
            cur.line,
            "unexpected content after the end of the json document".into(),
        ));
    }
    out
}

/// A record broken inside its own braces (a raw tab in a string, a comma lost between two
/// keys) ends where its braces close; a record cut short (its writer died mid-line) ends where
/// the next record starts, on a later line indented as this one starts and opening with the
/// same bracket, when that comes first. It is skipped alone, with its L001 (`line`, `msg`: the parser's error), and
/// the cursor moves past it, so the records after it are still read; the flag says the cursor
/// stands on the next record (no separator to read first). `None` when neither end can be
/// told, or what follows the braces is not one of `then`: the caller skips the rest.
fn skip_broken(
    text: &str,
    cur: &mut Cursor,
    file: &Arc<str>,
    line: u32,
    msg: &str,
    then: &[u8],
) -> Option<(Parsed, bool)> {
    let bytes = text.as_bytes();
    let closed = balanced_end(bytes, cur.pos).filter(|&end| {
        let next = bytes[end..].iter().find(|c| !c.is_ascii_whitespace());
        next.is_none_or(|c| then.contains(c))
    });
    // Brackets read across a cut-short line pair up by chance (its open string swallows the
    // next record's quotes), so a record line that comes first wins.
    let (end, at_next) = match (closed, next_record_line(bytes, cur.pos)) {
        (Some(end), Some(next)) if next < end => (next, true),
        (Some(end), _) => (end, false),
        (None, Some(next)) => (next, true),
        (None, None) => return None,
    };
    let own = text[cur.pos..end].trim_end();
    let own = own.strip_suffix(',').unwrap_or(own);
    let loc = SourceLoc {
        file: file.clone(),
        line: cur.line,
    };
    // A raw control character is named with its field and the record's id, as on a line.
    let named = serde_json::from_str::<Value>(own)
        .err()
        .and_then(|e| raw_control(own.as_bytes(), &e, &loc));
    let parsed = named.unwrap_or_else(|| {
        // Cut short, the parser only stumbles in the next record (its quotes read as the end
        // of the open string): the record's own first line is the one to fix.
        let next = cur.line + count_newlines(&bytes[cur.pos..end]);
        let (line, message) = match at_next {
            false => (line, format!("invalid json: {msg}; the record was skipped")),
            true if line < next => (
                line,
                format!("invalid json: {msg}; the record is not closed before the next one starts at line {next}, and was skipped"),
            ),
            true => (
                cur.line,
                format!("invalid json: the record is not closed before the next one starts at line {next}; the record was skipped"),
            ),
        };
        let at = SourceLoc {
            file: file.clone(),
            line,
        };
        let mut d = Diagnostic::new(codes::MALFORMED_RECORD, message)
            .subject(&**file)
            .at(&at);
        d.help = "fix the syntax at the reported line; the records after it were still read";
        Parsed::invalid(line, d)
    });
    cur.advance_to(end);
    Some((parsed, at_next))
}

/// Where the record after a cut-short one at `start` begins: the first later line indented
/// exactly as `start`'s line up to `start` and opening with the same bracket (a pretty-printed
/// record's own lines are indented deeper). `None` when `start` does not begin its line, or a
/// line at that indent closes the array (or anything less indented comes) first.
fn next_record_line(bytes: &[u8], start: usize) -> Option<usize> {
    let line_start = bytes[..start]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let indent = &bytes[line_start..start];
    if !indent.iter().all(|c| *c == b' ' || *c == b'\t') {
        return None;
    }
    let opening = *bytes.get(start)?;
    // One scan for each newline: a line runs from `from` to the next one.
    let mut from = next_newline(bytes, start)? + 1;
    loop {
        let end = next_newline(bytes, from).unwrap_or(bytes.len());
        let content = &bytes[from..end];
        if !is_blank(content) {
            // A line indented less (or otherwise) than the record's: past the array's records.
            let rest = content.strip_prefix(indent)?;
            match rest.first() {
                Some(&c) if c == opening => return Some(from + indent.len()),
                Some(b']') => return None,
                _ => {}
            }
        }
        if end == bytes.len() {
            return None;
        }
        from = end + 1;
    }
}

/// The end (exclusive) of the object or array that starts at `start`, found by its brackets
/// alone: strings are skipped whatever they hold (a raw control character too), and a closing
/// bracket must match the innermost open one. `None` when `start` is not `{` or `[`, the
/// brackets do not match, or the text ends first.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    if !matches!(bytes.get(start), Some(b'{' | b'[')) {
        return None;
    }
    let mut open = Vec::new();
    let mut in_string = false;
    let mut i = start;
    while let Some(&c) = bytes.get(i) {
        match (in_string, c) {
            (true, b'\\') => i += 1,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'{' | b'[') => open.push(c),
            (false, b'}' | b']') => {
                let opened = if c == b'}' { b'{' } else { b'[' };
                if open.pop() != Some(opened) {
                    return None;
                }
                if open.is_empty() {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// One element at the cursor: the typed fast path first, then the reference path.
fn element(
    text: &str,
    cur: &mut Cursor,
    file: &Arc<str>,
    first: bool,
    convert: Option<Convert>,
) -> Result<Parsed, (u32, String)> {
    let rest = &text[cur.pos..];
    let line = cur.line;
    if !first && convert.is_none() {
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<fast::Acc>();
        if let Some(Ok(acc)) = it.next() {
            let end = cur.pos + it.byte_offset();
            if let Some((record, unknown)) = acc.finish(file, line) {
                cur.advance_to(end);
                return Ok(Parsed {
                    line,
                    item: item(record),
                    unknown,
                    ignored: Vec::new(),
                });
            }
        }
    }
    let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    match it.next() {
        Some(Ok(v)) => {
            let end = cur.pos + it.byte_offset();
            let own = &text[cur.pos..end];
            cur.advance_to(end);
            let loc = SourceLoc {
                file: file.clone(),
                line,
            };
            Ok(match convert {
                Some(f) => f(v, &loc, first),
                None => {
                    duplicate_key(own, &v, &loc, first).unwrap_or_else(|| record::from_value(v, &loc, first))
                }
            })
        }
        Some(Err(e)) if too_deep(&e) => {
            // Valid JSON too deep to read as a value: skipped as raw text, which has no
            // depth limit, so the elements after it are read.
            let mut raw =
                serde_json::Deserializer::from_str(rest).into_iter::<&serde_json::value::RawValue>();
            match raw.next() {
                Some(Ok(v)) => {
                    let end = cur.pos + raw.byte_offset();
                    cur.advance_to(end);
                    let loc = SourceLoc {
                        file: file.clone(),
                        line,
                    };
                    Ok(deep_record(v.get().as_bytes(), &loc))
                }
                _ => Err((line, error_message(&e))),
            }
        }
        Some(Err(e)) => Err((line + e.line().saturating_sub(1) as u32, error_message(&e))),
        None => Err((line, "unexpected end of file".into())),
    }
}
