//! JSON Lines (the hot path: blocks of lines parsed in parallel) and JSON documents (an
//! array of records, or one record).

use rayon::prelude::*;
use serde_json::Value;

use super::fast::{self, Record};
use super::record::{self, Item, Parsed};
use crate::diagnostics::{Diagnostic, codes};
use crate::model::SourceLoc;

/// How many JSONL lines one rayon task takes at least.
const MIN_LINES_PER_TASK: usize = 64;

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

/// Parses a block of complete JSONL lines whose first line is `first_line`. Returns the
/// records in line order and the number of newlines in the block. While `first_pending` is
/// set, the first non-blank line is the file's first record and is checked for skillc's mark.
pub(crate) fn jsonl_block(
    block: &[u8],
    file: &str,
    first_line: u32,
    first_pending: &mut bool,
) -> (Vec<Parsed>, u32) {
    let mut lines: Vec<(u32, &[u8])> = Vec::with_capacity(block.len() / 512 + 1);
    let mut line = first_line;
    let mut start = 0;
    let mut newlines = 0;
    for (i, &c) in block.iter().enumerate() {
        if c == b'\n' {
            let l = &block[start..i];
            if !is_blank(l) {
                lines.push((line, l));
            }
            line += 1;
            newlines += 1;
            start = i + 1;
        }
    }
    if start < block.len() && !is_blank(&block[start..]) {
        lines.push((line, &block[start..]));
    }
    let mut out = Vec::with_capacity(lines.len());
    let mut rest = &lines[..];
    if *first_pending && let Some(&(ln, bytes)) = lines.first() {
        *first_pending = false;
        out.push(slow_line(bytes, file, ln, true));
        rest = &lines[1..];
    }
    out.par_extend(
        rest.par_iter()
            .with_min_len(MIN_LINES_PER_TASK)
            .map(|&(ln, bytes)| parse_line(bytes, file, ln)),
    );
    (out, newlines)
}

fn parse_line(bytes: &[u8], file: &str, line: u32) -> Parsed {
    match fast::parse_slice(bytes, file, line) {
        Some((record, unknown)) => Parsed {
            line,
            item: item(record),
            unknown,
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
pub(crate) fn slow_line(bytes: &[u8], file: &str, line: u32, first: bool) -> Parsed {
    let loc = SourceLoc {
        file: file.to_string(),
        line,
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => record::from_value(v, &loc, first),
        Err(e) => {
            let d = Diagnostic::new(
                codes::MALFORMED_RECORD,
                format!("line is not valid json: {}", error_message(&e)),
            )
            .subject(file)
            .at(&loc)
            .with("column", e.column());
            Parsed::invalid(line, d)
        }
    }
}

/// `true` when a `.json` file is really JSON Lines: its first line is a complete object on
/// its own and more follows.
pub(crate) fn looks_like_lines(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with('{') {
        return false;
    }
    let (first, rest) = t.split_once('\n').unwrap_or((t, ""));
    !rest.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok()
}

struct Cursor<'t> {
    bytes: &'t [u8],
    pos: usize,
    line: u32,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while let Some(&c) = self.bytes.get(self.pos) {
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

/// A JSON document: an array of records or one record. A syntax error keeps the records
/// before it and skips the rest with one diagnostic at the error's line.
pub(crate) fn json_document(text: &str, file: &str) -> Vec<Parsed> {
    let mut out = Vec::new();
    let mut cur = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    let malformed = |line: u32, message: String| {
        let loc = SourceLoc {
            file: file.to_string(),
            line,
        };
        Parsed::invalid(
            line,
            Diagnostic::new(codes::MALFORMED_RECORD, message)
                .subject(file)
                .at(&loc),
        )
    };
    cur.skip_ws();
    match cur.peek() {
        None => return out,
        Some(b'[') => {
            cur.pos += 1;
            let mut first = true;
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
                    Some(b']') if first => {
                        cur.pos += 1;
                        break;
                    }
                    _ => {}
                }
                match element(text, &mut cur, file, first) {
                    Ok(p) => out.push(p),
                    Err((line, msg)) => {
                        out.push(malformed(
                            line,
                            format!("invalid json: {msg}; the rest of the array was skipped"),
                        ));
                        return out;
                    }
                }
                first = false;
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
                        out.push(malformed(
                            cur.line,
                            "invalid json: expected `,` or `]` after a record; the rest of the array was skipped".into(),
                        ));
                        return out;
                    }
                }
            }
        }
        Some(b'{') => match element(text, &mut cur, file, true) {
            Ok(p) => out.push(p),
            Err((line, msg)) => {
                out.push(malformed(line, format!("invalid json: {msg}")));
                return out;
            }
        },
        Some(_) => {
            out.push(malformed(
                cur.line,
                "file is not a json array or object of records".into(),
            ));
            return out;
        }
    }
    cur.skip_ws();
    if cur.peek().is_some() && !matches!(out.last().map(|p| &p.item), Some(Item::Generated)) {
        out.push(malformed(
            cur.line,
            "unexpected content after the end of the json document".into(),
        ));
    }
    out
}

/// One element at the cursor: the typed fast path first, then the reference path.
fn element(text: &str, cur: &mut Cursor, file: &str, first: bool) -> Result<Parsed, (u32, String)> {
    let rest = &text[cur.pos..];
    let line = cur.line;
    if !first {
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<fast::Acc>();
        if let Some(Ok(acc)) = it.next() {
            let end = cur.pos + it.byte_offset();
            if let Some((record, unknown)) = acc.finish(file, line) {
                cur.advance_to(end);
                return Ok(Parsed {
                    line,
                    item: item(record),
                    unknown,
                });
            }
        }
    }
    let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    match it.next() {
        Some(Ok(v)) => {
            let end = cur.pos + it.byte_offset();
            cur.advance_to(end);
            let loc = SourceLoc {
                file: file.to_string(),
                line,
            };
            Ok(record::from_value(v, &loc, first))
        }
        Some(Err(e)) => Err((line + e.line().saturating_sub(1) as u32, error_message(&e))),
        None => Err((line, "unexpected end of file".into())),
    }
}
