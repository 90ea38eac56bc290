//! Text encoding: files that are not all UTF-8.
//!
//! A `.json` or YAML file with a byte that is not UTF-8 (a Latin-1 `é` typed by another
//! editor) is read with each bad sequence replaced by U+FFFD and remembered (`lossy`); the
//! readers then refuse exactly the records that hold one (`refuse`), each with an L001 at the
//! bad byte's line, and read the rest, as a JSON Lines file already does line by line. A file
//! that looks binary (`looks_like_text`) or is UTF-16 (`utf16`) is still refused whole (L007).

use std::ops::Range;

use super::record::{self, Item, Parsed};
use crate::diagnostics::{Diagnostic, codes};
use crate::model::SourceLoc;
use serde_json::Value;

/// The help line of a record refused for its bytes.
const HELP: &str = "re-save the file as UTF-8 (an editor set to Latin-1 or Windows-1252 writes such bytes); the rest of the file was still read";

/// The help line of a file refused for being UTF-16.
pub(crate) const UTF16_HELP: &str = "re-save the file as UTF-8 (skillc reads UTF-8 text only)";

/// A byte sequence that is not UTF-8, where it sits in the text `lossy` made of the file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BadByte {
    /// Byte offset of its U+FFFD in that text.
    pub offset: usize,
    /// 1-based line and column (in characters).
    pub line: u32,
    pub column: u32,
    /// The first byte of the sequence.
    pub byte: u8,
}

/// A UTF-16 file, by its byte-order mark.
pub(crate) fn utf16(head: &[u8]) -> bool {
    head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF])
}

/// Whether a file reads as text at all, from its first line (its first KiB at most): at most
/// one byte in eight that is a NUL or not UTF-8. A binary file fails this at once (so does
/// UTF-16 without a byte-order mark, every other byte a NUL, and a file a crash left full of
/// NULs); a text file with a few Latin-1 letters, or a stray NUL a tool wrote into a record,
/// passes, and costs only the records that hold them (L001), as it does on a later line.
pub(crate) fn looks_like_text(head: &[u8]) -> bool {
    let head = &head[..head.len().min(1024)];
    let head = head.split(|&b| b == b'\n').next().unwrap_or(head);
    let nul = head.iter().filter(|&&b| b == 0).count();
    let bad: usize = nul + head.utf8_chunks().map(|c| c.invalid().len()).sum::<usize>();
    // A character cut at the end of the head is not bad.
    let cut = match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_none() => head.len() - e.valid_up_to(),
        _ => 0,
    };
    (bad - cut.min(bad)) * 8 <= head.len()
}

/// The text of `bytes`, each sequence that is not UTF-8 replaced by U+FFFD, and where those are.
pub(crate) fn lossy(bytes: &[u8]) -> (String, Vec<BadByte>) {
    let mut text = String::with_capacity(bytes.len() + 16);
    let mut bad = Vec::new();
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if let Some(&byte) = chunk.invalid().first() {
            bad.push(BadByte {
                offset: text.len(),
                line: 0,
                column: 0,
                byte,
            });
            text.push('\u{fffd}');
        }
    }
    let (mut line, mut line_start, mut from) = (1u32, 0usize, 0usize);
    for b in &mut bad {
        for (i, c) in text[from..b.offset].bytes().enumerate() {
            if c == b'\n' {
                line += 1;
                line_start = from + i + 1;
            }
        }
        from = b.offset;
        b.line = line;
        b.column = text[line_start..b.offset].chars().count() as u32 + 1;
    }
    (text, bad)
}

/// The record parsed from a byte range of the text, refused (`refuse`) when the range holds a
/// bad byte.
pub(crate) fn refuse_in(p: Parsed, bad: &[BadByte], range: Range<usize>, file: &str) -> Parsed {
    let i = bad.partition_point(|b| b.offset < range.start);
    match bad.get(i).filter(|b| b.offset < range.end) {
        Some(b) => refuse(p, b, file),
        None => p,
    }
}

/// A record that holds a bad byte, refused (L001 at the byte's line), named by its id when it
/// parsed into a record. skillc's own mark (a generated file) is left as it is.
pub(crate) fn refuse(p: Parsed, bad: &BadByte, file: &str) -> Parsed {
    let (subject, domains) = match &p.item {
        Item::Generated => return p,
        Item::Experience(e) => (record::shown_id(&e.id), record::named(&e.domains)),
        Item::Claim(c) => (record::shown_id(&c.id), record::named(&c.domains)),
        Item::Invalid(ds) => {
            let subject = ds.iter().map(|d| d.subject.as_str()).find(|s| *s != file);
            let domains = ds.iter().find_map(|d| d.evidence.get("domains"));
            (
                subject.unwrap_or(file).to_string(),
                domains.map(record::readable_domains).unwrap_or_default(),
            )
        }
    };
    let loc = SourceLoc {
        file: file.into(),
        line: bad.line,
    };
    let d = diagnostic(bad.byte, bad.column, subject, &loc);
    Parsed::of(p.line, Item::Invalid(record::naming_domains(vec![d], &domains)))
}

/// The L001 of a record with a byte that is not UTF-8.
pub(crate) fn diagnostic(byte: u8, column: u32, subject: String, loc: &SourceLoc) -> Diagnostic {
    let mut d = Diagnostic::new(
        codes::MALFORMED_RECORD,
        format!("byte 0x{byte:02X} at column {column} is not UTF-8 text; the record was skipped"),
    )
    .subject(subject)
    .at(loc)
    .with("column", column)
    .with("byte", format!("0x{byte:02X}"));
    d.help = HELP;
    d
}

/// The L001 of a JSON Lines line that is not UTF-8 (`bytes`: the line), named by the id it
/// would have had.
pub(crate) fn line_not_utf8(bytes: &[u8], loc: &SourceLoc) -> Parsed {
    let (text, bad) = lossy(bytes);
    let b = bad.first().copied().unwrap_or(BadByte {
        offset: 0,
        line: 1,
        column: 1,
        byte: 0,
    });
    let subject = super::json::id_subject(text.as_bytes(), loc);
    // The domains it named, read from the decoded text, so `why DOMAIN` counts it.
    let domains = (serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v.get("domains").map(record::readable_domains))
        .unwrap_or_default();
    Parsed::invalid_naming(loc.line, diagnostic(b.byte, b.column, subject, loc), &domains)
}
