//! YAML: a list of records, or several `---` documents, each a record or a list.
//!
//! serde_yaml gives no locations for parsed values, so line numbers come from a text scan:
//! the file is cut into documents at `---` / `...` lines (and `%` directives), a document's
//! record starts at its first content line, and the items of a top-level block sequence are
//! the lines that start with `-` at the sequence's own indentation. When the scan does not
//! find exactly one line per item (flow sequences, unusual layouts), every item reports the
//! line where the sequence starts.
//!
//! A syntax error in a list costs only the item it is in: the items are then parsed one by
//! one (each `-` replaced by a space), and each that fails gets its own diagnostic. A document
//! that is not a list is skipped whole.

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::record::{self, Parsed};
use crate::diagnostics::{Diagnostic, codes};
use crate::model::SourceLoc;

struct Line<'t> {
    start: usize,
    text: &'t str,
}

fn is_doc_start(l: &str) -> bool {
    l.strip_prefix("---")
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

fn is_doc_end(l: &str) -> bool {
    l.strip_prefix("...")
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

fn is_blank_or_comment(l: &str) -> bool {
    let t = l.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// A `---` line with nothing after it but a comment.
fn is_bare_doc_start(l: &str) -> bool {
    is_doc_start(l) && is_blank_or_comment(&l[3..])
}

/// A block sequence item at exactly `indent` spaces.
fn is_item(l: &str, indent: usize) -> bool {
    let n = l.len() - l.trim_start_matches(' ').len();
    n == indent && {
        let r = &l[indent..];
        r == "-" || r.starts_with("- ") || r.starts_with("-\t")
    }
}

pub(crate) fn yaml_text(text: &str, file: &str) -> Vec<Parsed> {
    let mut lines = Vec::new();
    let mut start = 0;
    for l in text.split_inclusive('\n') {
        let t = l.strip_suffix('\n').unwrap_or(l);
        let t = t.strip_suffix('\r').unwrap_or(t);
        lines.push(Line { start, text: t });
        start += l.len();
    }
    // Documents as [first, end) line indices.
    let mut docs = Vec::new();
    let mut cur = 0;
    for (i, l) in lines.iter().enumerate() {
        if is_doc_start(l.text) {
            if cur < i {
                docs.push((cur, i));
            }
            cur = i;
        } else if is_doc_end(l.text) || l.text.starts_with('%') {
            if cur < i {
                docs.push((cur, i));
            }
            cur = i + 1;
        }
    }
    if cur < lines.len() {
        docs.push((cur, lines.len()));
    }

    let mut out = Vec::new();
    let mut first = true;
    for (s, e) in docs {
        let byte = |i: usize| lines.get(i).map_or(text.len(), |l| l.start);
        let doc = &text[byte(s)..byte(e)];
        let content = (s..e).find(|&i| {
            let l = lines[i].text;
            !is_blank_or_comment(l) && !is_bare_doc_start(l)
        });
        let Some(content) = content else { continue };
        let items = item_lines(&lines, content, e);
        let shared: std::sync::Arc<str> = file.into();
        let loc = |i: usize| SourceLoc {
            file: shared.clone(),
            line: i as u32 + 1,
        };
        let mut emit = |v: Value, at: usize, out: &mut Vec<Parsed>| {
            out.push(record::from_value(v, &loc(at), first));
            first = false;
        };
        match serde_yaml::from_str::<serde_yaml::Value>(doc) {
            Ok(mut v) => {
                let _ = v.apply_merge();
                match v {
                    serde_yaml::Value::Null => {}
                    serde_yaml::Value::Sequence(seq) => {
                        let exact = items.len() == seq.len();
                        for (k, v) in seq.into_iter().enumerate() {
                            let at = if exact { items[k] } else { content };
                            emit(to_json(v), at, &mut out);
                        }
                    }
                    v => emit(to_json(v), content, &mut out),
                }
            }
            Err(err) => {
                // Each item of a list is parsed on its own: an item that fails costs itself,
                // the items before and after it are read.
                let mut failed = false;
                for (k, &at) in items.iter().enumerate() {
                    let end = items.get(k + 1).copied().unwrap_or(e);
                    let indent = lines[at].text.len() - lines[at].text.trim_start_matches(' ').len();
                    let mut item = text[byte(at)..byte(end)].to_string();
                    item.replace_range(indent..indent + 1, " ");
                    match serde_yaml::from_str::<serde_yaml::Value>(&item) {
                        Ok(mut v) => {
                            let _ = v.apply_merge();
                            emit(to_json(v), at, &mut out);
                        }
                        Err(err) => {
                            failed = true;
                            let line = at + err.location().map_or(1, |l| l.line().max(1));
                            let message = format!(
                                "invalid yaml: {}; the item was skipped",
                                shift_lines(&err.to_string(), at)
                            );
                            out.push(malformed(file, loc(line - 1), message));
                        }
                    }
                }
                if !failed {
                    // Not a list, or an error no item shows on its own.
                    let err_line = s + err.location().map_or(1, |l| l.line().max(1));
                    let rest = if items.is_empty() {
                        "the document was skipped"
                    } else {
                        "its items were read one by one"
                    };
                    let message = format!("invalid yaml: {}; {rest}", shift_lines(&err.to_string(), s));
                    out.push(malformed(file, loc(err_line - 1), message));
                }
            }
        }
    }
    out
}

/// An L001 for YAML that does not parse.
fn malformed(file: &str, loc: SourceLoc, message: String) -> Parsed {
    let d = Diagnostic::new(codes::MALFORMED_RECORD, message)
        .subject(file)
        .at(&loc);
    Parsed::invalid(loc.line, d)
}

/// The line indices of a top-level block sequence's items, when the document's content
/// starts with one.
fn item_lines(lines: &[Line], content: usize, end: usize) -> Vec<usize> {
    let l = lines[content].text;
    if is_doc_start(l) {
        return Vec::new();
    }
    let indent = l.len() - l.trim_start_matches(' ').len();
    if !is_item(l, indent) {
        return Vec::new();
    }
    (content..end)
        .filter(|&i| is_item(lines[i].text, indent))
        .collect()
}

/// serde_yaml's message with its line numbers made relative to the file, not the document.
fn shift_lines(msg: &str, offset: usize) -> String {
    if offset == 0 {
        return msg.to_string();
    }
    let re = Regex::new(r"line (\d+)").expect("static regex");
    re.replace_all(msg, |c: &regex::Captures| {
        let n: usize = c[1].parse().unwrap_or(0);
        format!("line {}", n + offset)
    })
    .into_owned()
}

/// A YAML value as JSON; non-string keys become their YAML text, tags are dropped.
pub(crate) fn to_json(v: serde_yaml::Value) -> Value {
    match v {
        serde_yaml::Value::Null => Value::Null,
        serde_yaml::Value::Bool(b) => Value::Bool(b),
        serde_yaml::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                // `.nan` and `.inf` have no JSON number: kept as their YAML text, so a field
                // that wants a number reports them instead of reading them as absent.
                let f = n.as_f64().unwrap_or(f64::NAN);
                Number::from_f64(f).map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        serde_yaml::Value::String(s) => Value::String(s),
        serde_yaml::Value::Sequence(seq) => Value::Array(seq.into_iter().map(to_json).collect()),
        serde_yaml::Value::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match k {
                    serde_yaml::Value::String(s) => s,
                    other => serde_yaml::to_string(&other)
                        .map(|s| s.trim_end().to_string())
                        .unwrap_or_default(),
                };
                out.insert(key, to_json(v));
            }
            Value::Object(out)
        }
        serde_yaml::Value::Tagged(t) => to_json(t.value),
    }
}
