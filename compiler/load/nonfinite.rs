//! `NaN`, `Infinity` and `-Infinity` where a JSON value stands: not JSON, but what Python's
//! `json.dumps` writes for a float that is not finite (its default, `allow_nan=True`), so
//! exports written by Python agents carry them. A record holding one is read with `null` in
//! its place (the field is then absent, as any null optional field is) and an L003 naming the
//! field says so; without this, the record was refused, and in a JSON array every record
//! after it too.

use crate::diagnostics::{Diagnostic, codes};
use crate::model::SourceLoc;

use super::record::{Item, Parsed};

/// One non-finite number read as `null`.
pub(crate) struct NonFinite {
    /// The line it stands on, counted from 1 in the text scanned.
    pub line: u32,
    pub token: &'static str,
    /// Its place in the record (`effort`, `operations[1].args.timeout`); empty for a bare
    /// value.
    pub field: String,
}

const TOKENS: [&str; 3] = ["NaN", "Infinity", "-Infinity"];

/// A place in the text: a member of an object (its key, once read) or an element of a list.
enum Seg {
    Key(Option<String>),
    Index(usize),
}

/// The text with every `NaN`, `Infinity` and `-Infinity` that stands where a value does
/// (outside strings) replaced by `null`; `None` when it holds none. Lines keep their numbers.
pub(crate) fn to_null(text: &str) -> Option<(String, Vec<NonFinite>)> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let mut found = Vec::new();
    let mut stack: Vec<Seg> = Vec::new();
    let mut expect_key = false;
    // The last byte outside strings that is not whitespace (`"` for a string).
    let mut prev = b' ';
    let mut line = 1u32;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => line += 1,
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    match b[j] {
                        b'\\' => j += 1,
                        b'\n' => line += 1,
                        _ => {}
                    }
                    j += 1;
                }
                let end = j.min(b.len());
                if expect_key {
                    if let Some(Seg::Key(k)) = stack.last_mut() {
                        let raw = &text[start..end];
                        *k = Some(
                            serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string()),
                        );
                    }
                    expect_key = false;
                }
                prev = b'"';
                i = end + 1;
                continue;
            }
            b'{' => {
                stack.push(Seg::Key(None));
                expect_key = true;
            }
            b'[' => stack.push(Seg::Index(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Seg::Key(k)) => {
                    *k = None;
                    expect_key = true;
                }
                Some(Seg::Index(n)) => *n += 1,
                None => {}
            },
            b'N' | b'I' | b'-' if matches!(prev, b':' | b'[' | b',') => {
                let token = TOKENS.into_iter().find(|t| text[i..].starts_with(t));
                let ends = |t: &str| {
                    !b.get(i + t.len())
                        .is_some_and(|&n| n.is_ascii_alphanumeric() || n == b'_')
                };
                if let Some(t) = token.filter(|t| ends(t)) {
                    out.push_str(&text[copied..i]);
                    out.push_str("null");
                    copied = i + t.len();
                    found.push(NonFinite {
                        line,
                        token: t,
                        field: path(&stack),
                    });
                    prev = b'l';
                    i += t.len();
                    continue;
                }
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            prev = c;
        }
        i += 1;
    }
    if found.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, found))
}

/// `effort`, `operations[1].args.timeout`: the place in the record (an array holding the
/// records is no part of it).
fn path(stack: &[Seg]) -> String {
    let segs = match stack.first() {
        Some(Seg::Index(_)) => &stack[1..],
        _ => stack,
    };
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(Some(k)) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Key(None) => {}
            Seg::Index(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s
}

/// The help of the L003 of a non-finite number.
const HELP: &str = "write null (or a number) in its place; a Python writer finds such values with json.dumps(..., allow_nan=False), or can turn them into None before writing";

/// Adds to a record read from text where `found` were replaced the L003 of each (`first_line`:
/// the line the scanned text started at), named by the record's id.
pub(crate) fn attach(
    p: &mut Parsed,
    found: impl IntoIterator<Item = NonFinite>,
    file: &str,
    first_line: u32,
) {
    let subject = match &p.item {
        Item::Experience(e) => e.id.to_string(),
        Item::Claim(c) => c.id.to_string(),
        // A refused record: its other diagnostics name it (by id, when it has one).
        Item::Invalid(d) => d.first().map_or_else(|| file.to_string(), |d| d.subject.clone()),
        _ => file.to_string(),
    };
    for f in found {
        let loc = SourceLoc {
            file: file.into(),
            line: first_line + f.line - 1,
        };
        let message = if f.field.is_empty() {
            format!(
                "`{}` is not json (Python's json.dumps writes it for a float that is not finite); read as null",
                f.token
            )
        } else {
            format!(
                "`{}` is {}, which is not json (Python's json.dumps writes it for a float that is not finite); read as null",
                f.field, f.token
            )
        };
        let mut d = Diagnostic::new(codes::INVALID_VALUE, message)
            .subject(subject.clone())
            .at(&loc)
            .with("found", f.token)
            .with("ignored", true);
        if !f.field.is_empty() {
            d = d.with("field", f.field);
        }
        d.help = HELP;
        p.ignored.push(d);
    }
}
