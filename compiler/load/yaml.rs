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
//! one (each `-` replaced by a space), and each that fails gets its own diagnostic. An item
//! that fails alone only because it aliases an anchor of an earlier item (`<<: *base`) is
//! checked to be sound otherwise (parsed after a line that defines its aliases as empty
//! mappings) and then read from the document itself, parsed once more with the broken items
//! made comment lines; so it merges exactly what it would have merged, and an alias whose
//! anchor is nowhere (or only on a broken item) is still its own item's error. That is at most
//! three parses of each item and one more of the document (a few more only when an `&name` in
//! a string fooled the scan for anchors). A document that is not a list is skipped whole.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::encoding::{self, BadByte};
use super::record::{self, Item, Parsed};
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

/// `bad`: where the file's bytes were not UTF-8 (`encoding::lossy`); a record whose lines hold
/// one is refused (a whole-line comment holding one costs nothing).
pub(crate) fn yaml_text(text: &str, file: &str, bad: &[BadByte]) -> Vec<Parsed> {
    // A byte-order mark that starts a line, where files that each began with one were joined,
    // is dropped (YAML allows one before each document); the lines stay where they were.
    let joined;
    let line_bom = format!("\n{}", super::BOM);
    let text = if text.contains(&line_bom) {
        joined = text.replace(&line_bom, "\n");
        &joined
    } else {
        text
    };
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
        // Whether each item of a parsed list starts on its own line of `items` (`read` finds
        // an item's text by its line); a list the scan did not cut exactly names `content`.
        let exact_items = std::cell::Cell::new(true);
        let before = out.len();
        let shared: std::sync::Arc<str> = file.into();
        let loc = |i: usize| SourceLoc {
            file: shared.clone(),
            line: i as u32 + 1,
        };
        // The record of one parsed item at line index `at`.
        let mut read = |mut v: serde_yaml::Value, at: usize| {
            if exact_items.get() || items.binary_search(&at).is_err() {
                // The item's lines, found only for an id that lost its text (`items` ascends).
                keep_id_text(&mut v, || {
                    let next = items.partition_point(|&i| i <= at);
                    &text[byte(at)..byte(items.get(next).copied().unwrap_or(e))]
                });
            }
            let p = record::from_value(to_json(v), &loc(at), first);
            first = false;
            p
        };
        match serde_yaml::from_str::<serde_yaml::Value>(doc) {
            Ok(mut v) => {
                let _ = v.apply_merge();
                match v {
                    serde_yaml::Value::Null => {}
                    serde_yaml::Value::Sequence(seq) => {
                        let exact = items.len() == seq.len();
                        exact_items.set(exact);
                        for (k, v) in seq.into_iter().enumerate() {
                            let at = if exact { items[k] } else { content };
                            out.push(read(v, at));
                        }
                    }
                    v => out.push(read(v, content)),
                }
            }
            Err(err) => {
                // Each item of a list is parsed on its own: an item that fails costs itself,
                // the items before and after it are read.
                let list = List {
                    text,
                    file,
                    lines: &lines,
                    start: s,
                    end: e,
                    items: &items,
                };
                let mut failed = false;
                for slot in list.one_by_one(&mut read) {
                    match slot {
                        Slot::Read(p) => out.push(*p),
                        Slot::Refused(p) => {
                            failed = true;
                            out.push(*p);
                        }
                        Slot::Broken { line, message } | Slot::Aliased { line, message } => {
                            failed = true;
                            out.push(malformed(file, loc(line), message));
                        }
                    }
                }
                if !failed && items.is_empty() && super::json::recursion_limit(&err.to_string()) {
                    let subject = id_line(doc).unwrap_or_else(|| file.to_string());
                    let d = super::json::too_deep_diagnostic(subject, &loc(content));
                    out.push(Parsed::invalid(content as u32 + 1, d));
                    failed = true;
                }
                if !failed && items.is_empty() && err.to_string().contains("duplicate entry ") {
                    // One record that gives a key twice: refused as a list's item would be.
                    let place = err.location().map_or((1, 1), |l| (l.line(), l.column()));
                    out.push(duplicate_entry(&err.to_string(), place, doc, (s, e), file));
                    failed = true;
                }
                if !failed {
                    // Not a list, or an error no item shows on its own.
                    let err_line = s + err.location().map_or(1, |l| l.line().max(1));
                    let rest = if items.is_empty() {
                        "the document was skipped"
                    } else {
                        "its items were read one by one"
                    };
                    let message = format!(
                        "invalid yaml: {}; {rest}",
                        shift_lines(&err.to_string(), s as isize)
                    );
                    out.push(malformed(file, loc(err_line - 1), message));
                }
            }
        }
        if !bad.is_empty() {
            refuse_bad(&mut out[before..], bad, &lines, &items, e, file);
        }
    }
    for p in &mut out {
        tab_indent_help(p, &lines);
    }
    out
}

/// YAML forbids tabs in indentation, and the parser's words for it ("found character that
/// cannot start any token") do not say so: an L001 whose line is indented with a tab says it.
fn tab_indent_help(p: &mut Parsed, lines: &[Line]) {
    let Item::Invalid(diags) = &mut p.item else {
        return;
    };
    for d in diags.iter_mut().filter(|d| d.code == codes::MALFORMED_RECORD) {
        let Some(line) = d.location.as_ref().map(|l| l.line as usize) else {
            continue;
        };
        let indented_with_tab = (line.checked_sub(1).and_then(|i| lines.get(i)))
            .is_some_and(|l| l.text.trim_start_matches(' ').starts_with('\t'));
        if indented_with_tab {
            d.help = "YAML indents with spaces, never tabs: replace the tab at the start of the reported line with spaces";
        }
    }
}

/// Refuses the records of one document whose lines hold a byte that was not UTF-8: a record
/// spans from its item's line to the next item (or the document's end). Records already
/// refused for their syntax keep that L001.
fn refuse_bad(out: &mut [Parsed], bad: &[BadByte], lines: &[Line], items: &[usize], end: usize, file: &str) {
    for p in out {
        if matches!(&p.item, record::Item::Invalid(ds) if ds.iter().any(|d| d.code == codes::MALFORMED_RECORD))
        {
            continue;
        }
        let at = p.line as usize - 1;
        let until = items.iter().copied().find(|&i| i > at).unwrap_or(end);
        let hit = bad.iter().find(|b| {
            let i = b.line as usize - 1;
            (at..until).contains(&i) && !lines[i].text.trim_start().starts_with('#')
        });
        if let Some(b) = hit {
            let taken = std::mem::replace(
                p,
                Parsed::invalid(0, Diagnostic::new(codes::MALFORMED_RECORD, "")),
            );
            *p = encoding::refuse(taken, b, file);
        }
    }
}

/// A YAML document that is a block sequence of items, by line index (`lines[start..end]`).
struct List<'a> {
    text: &'a str,
    file: &'a str,
    lines: &'a [Line<'a>],
    start: usize,
    end: usize,
    items: &'a [usize],
}

/// What one item of a list that does not parse whole came to.
enum Slot {
    /// The item's record (or its refusal by the validator); boxed, so the list of slots is
    /// small beside the records.
    Read(Box<Parsed>),
    /// The item is broken (`line`: a 0-based line index; `message`: its L001).
    Broken { line: usize, message: String },
    /// The item is sound YAML that JSON refuses too: a key given twice in one mapping (an L001
    /// naming the key, at the second occurrence's line) or nesting deeper than the parsers
    /// read; either about the record's id.
    Refused(Box<Parsed>),
    /// The item is sound but names an anchor (`*name`) an earlier item may define; `line` and
    /// `message` are its error on its own, should the anchor not be found.
    Aliased { line: usize, message: String },
}

impl Slot {
    /// The item is not read: it is left out of the document when aliases are resolved, and
    /// its anchors are not there for later items.
    fn dropped(&self) -> bool {
        matches!(self, Slot::Broken { .. } | Slot::Refused(_))
    }
}

/// At most this many parses of the whole document look for the aliased items' anchors.
const ALIAS_ROUNDS: usize = 8;

impl List<'_> {
    fn byte(&self, i: usize) -> usize {
        self.lines.get(i).map_or(self.text.len(), |l| l.start)
    }

    /// Item `k` as `[first, end)` line indices.
    fn span(&self, k: usize) -> (usize, usize) {
        (self.items[k], self.items.get(k + 1).copied().unwrap_or(self.end))
    }

    /// Every item parsed on its own (its `-` made a space). An item that fails there only for
    /// an alias to an anchor defined on an earlier item (`<<: *base`) is parsed again in the
    /// document it came from, without the broken items (`resolve_aliases`).
    /// `read` makes an item's record as soon as it is parsed (an item's `Value` is several
    /// times its record).
    fn one_by_one(&self, read: &mut dyn FnMut(serde_yaml::Value, usize) -> Parsed) -> Vec<Slot> {
        let mut anchors: Option<HashMap<&str, Vec<usize>>> = None;
        let mut slots: Vec<Slot> = Vec::with_capacity(self.items.len());
        for k in 0..self.items.len() {
            let (at, end) = self.span(k);
            let own = &self.text[self.byte(at)..self.byte(end)];
            let indent = own.len() - own.trim_start_matches(' ').len();
            let mut item = own.to_string();
            item.replace_range(indent..indent + 1, " ");
            let slot = match serde_yaml::from_str::<serde_yaml::Value>(&item) {
                Ok(mut v) => {
                    let _ = v.apply_merge();
                    Slot::Read(Box::new(read(v, at)))
                }
                Err(err) if super::json::recursion_limit(&err.to_string()) => {
                    let loc = SourceLoc {
                        file: self.file.into(),
                        line: at as u32 + 1,
                    };
                    let subject = id_line(&item).unwrap_or_else(|| self.file.to_string());
                    let d = super::json::too_deep_diagnostic(subject, &loc);
                    Slot::Refused(Box::new(Parsed::invalid(loc.line, d)))
                }
                Err(err) if err.to_string().contains("duplicate entry ") => {
                    let place = err.location().map_or((1, 1), |l| (l.line(), l.column()));
                    let at_end = (at, end);
                    Slot::Refused(Box::new(duplicate_entry(
                        &err.to_string(),
                        place,
                        &item,
                        at_end,
                        self.file,
                    )))
                }
                Err(err) => {
                    let shown = err.to_string();
                    let place = err.location();
                    // An error at the end of the item's text is on its last line.
                    let line = (at + place.as_ref().map_or(1, |l| l.line().max(1)) - 1).min(end - 1);
                    let message = format!(
                        "invalid yaml: {}; the item was skipped",
                        shift_lines(&shown, at as isize)
                    );
                    // The alias's anchor must be spelled out on an earlier item that is read;
                    // otherwise the item is broken as it stands.
                    let elsewhere = shown.starts_with("unknown anchor")
                        && place
                            .and_then(|l| alias_at(&item, l.line(), l.column()))
                            .is_some_and(|name| {
                                anchors
                                    .get_or_insert_with(|| self.anchor_index())
                                    .get(name)
                                    .is_some_and(|ks| {
                                        ks.iter().take_while(|&&j| j < k).any(|&j| !slots[j].dropped())
                                    })
                            });
                    if elsewhere {
                        match stubbed(own, indent, (at, end)) {
                            None => Slot::Aliased { line, message },
                            Some((line, message)) => Slot::Broken { line, message },
                        }
                    } else {
                        Slot::Broken { line, message }
                    }
                }
            };
            slots.push(slot);
        }
        if slots.iter().any(|s| matches!(s, Slot::Aliased { .. })) {
            self.resolve_aliases(&mut slots, read);
        }
        slots
    }

    /// Anchor names (`&name`) to the items whose text spells them, in item order. A text scan,
    /// so it finds every anchor and maybe more (an `&` inside a string): it only says which
    /// items may hold an anchor.
    fn anchor_index(&self) -> HashMap<&str, Vec<usize>> {
        let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
        for k in 0..self.items.len() {
            let (at, end) = self.span(k);
            let item = &self.text[self.byte(at)..self.byte(end)];
            for (i, _) in item.match_indices('&') {
                let name = anchor_name(&item[i + 1..]);
                if !name.is_empty() {
                    let ks = index.entry(name).or_default();
                    if ks.last() != Some(&k) {
                        ks.push(k);
                    }
                }
            }
        }
        index
    }

    /// Parses the document again with its broken items turned into comment lines (so every
    /// line keeps its number), which gives each aliased item the anchors of the items before
    /// it. The aliased items are sound apart from their aliases (`stubbed`), so an error there
    /// is an alias whose anchor is nowhere after all (the text scan saw an `&name` that was
    /// not an anchor), in the item it points at: that item is broken, and the document is
    /// parsed again, at most `ALIAS_ROUNDS` times. Items that parsed alone keep that value:
    /// it is the same in the document, since their aliases were all to their own anchors.
    fn resolve_aliases(&self, slots: &mut [Slot], read: &mut dyn FnMut(serde_yaml::Value, usize) -> Parsed) {
        let prefix = &self.text[self.byte(self.start)..self.byte(self.items[0])];
        for _ in 0..ALIAS_ROUNDS {
            let mut doc = String::with_capacity(self.byte(self.end) - self.byte(self.start));
            doc.push_str(prefix);
            let mut kept = Vec::with_capacity(slots.len());
            for (k, slot) in slots.iter().enumerate() {
                let (at, end) = self.span(k);
                if slot.dropped() {
                    for _ in at..end {
                        doc.push_str("#\n");
                    }
                } else {
                    doc.push_str(&self.text[self.byte(at)..self.byte(end)]);
                    kept.push(k);
                }
            }
            let err = match serde_yaml::from_str::<serde_yaml::Value>(&doc) {
                Ok(mut v) => {
                    let _ = v.apply_merge();
                    if let serde_yaml::Value::Sequence(seq) = v
                        && seq.len() == kept.len()
                    {
                        for (k, v) in kept.into_iter().zip(seq) {
                            if matches!(slots[k], Slot::Aliased { .. }) {
                                slots[k] = Slot::Read(Box::new(read(v, self.items[k])));
                            }
                        }
                    }
                    // Otherwise the scan's items are not the list's: the aliased items keep
                    // their own errors.
                    break;
                }
                Err(err) => err,
            };
            let line = self.start + err.location().map_or(1, |l| l.line().max(1)) - 1;
            let k = self.items.partition_point(|&at| at <= line).saturating_sub(1);
            if !matches!(slots.get(k), Some(Slot::Aliased { .. })) {
                break;
            }
            let message = format!(
                "invalid yaml: {}; the item was skipped",
                shift_lines(without_item_index(&err.to_string()), self.start as isize)
            );
            slots[k] = Slot::Broken { line, message };
        }
        for slot in slots.iter_mut() {
            if let Slot::Aliased { line, message } = slot {
                *slot = Slot::Broken {
                    line: *line,
                    message: std::mem::take(message),
                };
            }
        }
    }
}

/// Whether an item that failed on an alias is sound otherwise: it is parsed after a line that
/// defines every name it aliases as an empty mapping (`- [&base {}]`). `None` when it then
/// parses; else its error (a 0-based line index and the L001 message), which its alias hid.
fn stubbed(own: &str, indent: usize, (at, end): (usize, usize)) -> Option<(usize, String)> {
    let mut names: Vec<&str> = Vec::new();
    for (i, _) in own.match_indices('*') {
        let name = anchor_name(&own[i + 1..]);
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    let mut doc = format!("{:indent$}- [", "");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            doc.push_str(", ");
        }
        doc.push('&');
        doc.push_str(name);
        doc.push_str(" {}");
    }
    doc.push_str("]\n");
    doc.push_str(own);
    let err = serde_yaml::from_str::<serde_yaml::Value>(&doc).err()?;
    let shown = err.to_string();
    if shown.starts_with("unknown anchor") {
        // An alias the scan did not see: the document decides.
        return None;
    }
    // One line more than the item: its lines are `at - 1` from the file's.
    let line = (at + err.location().map_or(2, |l| l.line().max(2)) - 2).min(end - 1);
    let message = format!(
        "invalid yaml: {}; the item was skipped",
        shift_lines(without_item_index(&shown), at as isize - 1)
    );
    Some((line, message))
}

/// The id of an item that does not parse as a `Value` (a key given twice, deep nesting), for
/// its diagnostic's subject. A derived struct keeps no mapping of its own, so only a second
/// `id` stops it (and then the record has no one id).
fn yaml_id(item: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<serde_yaml::Value>,
    }
    match serde_yaml::from_str::<IdOnly>(item) {
        Ok(IdOnly {
            id: Some(serde_yaml::Value::String(id)),
        }) if !id.trim().is_empty() => Some(record::shown_id(&id)),
        _ => None,
    }
}

/// The domains an item that does not parse as a `Value` names (`record::readable_domains`),
/// read as `yaml_id` reads its id: none when `domains` is the key given twice.
fn yaml_domains(item: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct DomainsOnly {
        domains: Option<serde_yaml::Value>,
    }
    let Ok(DomainsOnly { domains: Some(v) }) = serde_yaml::from_str::<DomainsOnly>(item) else {
        return Vec::new();
    };
    serde_json::to_value(v).map_or_else(|_| Vec::new(), |v| record::readable_domains(&v))
}

/// The id of a record too deep for the parser to read at all, by a text scan: the `id:` line at
/// the record's own indentation (that of its first content line), its value read as a scalar.
fn id_line(item: &str) -> Option<String> {
    let mut content = item
        .lines()
        .filter(|l| !is_blank_or_comment(l) && !is_bare_doc_start(l));
    let first = content.next()?;
    let indent = first.len() - first.trim_start_matches(' ').len();
    std::iter::once(first).chain(content).find_map(|l| {
        let own = l.len() - l.trim_start_matches(' ').len();
        let value = l.get(indent..).filter(|_| own == indent)?.strip_prefix("id:")?;
        match serde_yaml::from_str::<serde_yaml::Value>(value).ok()? {
            serde_yaml::Value::String(id) if !id.trim().is_empty() => Some(record::shown_id(&id)),
            _ => None,
        }
    })
}

/// The refusal of an item that gives a key twice in one mapping, as a JSON record's (L001 at
/// the second occurrence, naming the key, the mapping's path and the record's id). serde_yaml
/// names the key and the mapping's path, and places the error at the mapping's start
/// (`place`: 1-based line and column in `item`); the second occurrence is found by a scan of
/// the mapping's lines for the key at the mapping's own indentation (the mapping's start line
/// when the scan does not find it: a flow mapping, a quoted key spelled otherwise).
fn duplicate_entry(
    shown: &str,
    place: (usize, usize),
    item: &str,
    (at, end): (usize, usize),
    file: &str,
) -> Parsed {
    let i = shown.find("duplicate entry ").unwrap_or(0);
    let path = shown[..i]
        .trim_end()
        .trim_end_matches(':')
        .trim_start_matches('.');
    let path = without_item_index(path);
    let rest = &shown[i + "duplicate entry ".len()..];
    let rest = rest.find(" at line ").map_or(rest, |j| &rest[..j]);
    let key = match rest.strip_prefix("with key ") {
        Some(k) if k.starts_with('"') => {
            serde_json::from_str::<String>(k).unwrap_or_else(|_| k.trim_matches('"').to_string())
        }
        Some(k) => k.trim_matches('`').to_string(),
        None => rest.strip_prefix("with ").unwrap_or(rest).to_string(),
    };
    let (line, column) = place;
    let indent = column.saturating_sub(1);
    let spellings = [key.clone(), format!("\"{key}\""), format!("'{key}'")];
    let names_key = |entry: &str| {
        spellings.iter().any(|k| {
            entry
                .strip_prefix(k.as_str())
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
    };
    let mut seen = 0;
    let mut dup = None;
    for (n, l) in item.lines().enumerate().skip(line.saturating_sub(1)) {
        let own_indent = l.len() - l.trim_start_matches(' ').len();
        let entry = if n + 1 == line {
            l.get(indent..)
        } else if is_blank_or_comment(l) {
            continue;
        } else if own_indent < indent {
            break;
        } else if own_indent == indent {
            Some(&l[indent..])
        } else {
            None
        };
        if entry.is_some_and(names_key) {
            seen += 1;
            if seen == 2 {
                dup = Some(n);
                break;
            }
        }
    }
    let line = (at + dup.unwrap_or(line.saturating_sub(1))).min(end - 1);
    let message = if path.is_empty() {
        format!("key `{key}` appears twice in the record; the record was skipped")
    } else {
        format!("key `{key}` appears twice in `{path}`; the record was skipped")
    };
    // The record's id names it, unless the id is what was given twice.
    let id = yaml_id(item);
    let loc = SourceLoc {
        file: file.into(),
        line: line as u32 + 1,
    };
    let mut d = Diagnostic::new(codes::MALFORMED_RECORD, message)
        .subject(id.unwrap_or_else(|| file.to_string()))
        .at(&loc)
        .with("key", key);
    if !path.is_empty() {
        d = d.with("object", path);
    }
    Parsed::invalid_naming(at as u32 + 1, d, &yaml_domains(item))
}

/// An anchor or alias name after its `&` or `*`: libyaml's anchor characters (letters,
/// digits, `-`, `_`).
fn anchor_name(rest: &str) -> &str {
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// serde_yaml's message about a list item without the item's index in front of the path
/// (`.[3].operations[0].args: duplicate entry …` → `operations[0].args: duplicate entry …`):
/// the index counts only the items in the parsed text, so it would mislead; the line says
/// which item.
fn without_item_index(msg: &str) -> &str {
    let Some(rest) = msg.strip_prefix(".[") else {
        return msg;
    };
    let Some(close) = rest.find(']') else {
        return msg;
    };
    if !rest[..close].bytes().all(|b| b.is_ascii_digit()) {
        return msg;
    }
    let rest = &rest[close + 1..];
    rest.strip_prefix(": ")
        .or_else(|| rest.strip_prefix('.'))
        .unwrap_or(rest)
}

/// The name of the alias (`*name`) at a 1-based line and column (in characters) of `text`.
fn alias_at(text: &str, line: usize, column: usize) -> Option<&str> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let (i, _) = l.char_indices().nth(column.checked_sub(1)?)?;
    let name = anchor_name(l[i..].strip_prefix('*')?);
    (!name.is_empty()).then_some(name)
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

/// serde_yaml's message with its line numbers made relative to the file, not the text parsed
/// (`offset`: the file line of that text's line 1, less one).
fn shift_lines(msg: &str, offset: isize) -> String {
    if offset == 0 {
        return msg.to_string();
    }
    static LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"line (\d+)").expect("static regex"));
    LINE.replace_all(msg, |c: &regex::Captures| {
        let n: isize = c[1].parse().unwrap_or(0);
        format!("line {}", (n + offset).max(1))
    })
    .into_owned()
}

/// A record's `id` as its author wrote it. YAML reads a plain `1e3`, `10.20`, `0x1F` or `true`
/// as a number or a boolean, whose value has lost the text (`1000.0`, `10.2`, `31`), and an id
/// is a string: the scalar's own text is read again from `item` (the record's lines), which a
/// string-typed field gets verbatim from the parser. A null id stays null (missing, as in JSON);
/// an item that does not parse on its own (an alias to another item's anchor) keeps the value.
fn keep_id_text<'t>(v: &mut serde_yaml::Value, item: impl FnOnce() -> &'t str) {
    #[derive(serde::Deserialize)]
    struct IdText {
        id: String,
    }
    let serde_yaml::Value::Mapping(m) = v else { return };
    let Some(id) = m.get_mut("id") else { return };
    if !matches!(id, serde_yaml::Value::Number(_) | serde_yaml::Value::Bool(_)) {
        return;
    }
    // A list item's `-` as a space, as `List::one_by_one` reads an item alone.
    let mut own = item().to_string();
    let indent = own.len() - own.trim_start_matches(' ').len();
    if own[indent..].starts_with('-') {
        own.replace_range(indent..indent + 1, " ");
    }
    // The text must be this value's (read as YAML again, it gives the same number or boolean).
    let Ok(raw) = serde_yaml::from_str::<IdText>(&own) else {
        return;
    };
    if serde_yaml::from_str::<serde_yaml::Value>(&raw.id).is_ok_and(|again| again == *id) {
        *id = serde_yaml::Value::String(raw.id);
    }
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
