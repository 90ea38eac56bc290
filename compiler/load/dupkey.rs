//! Duplicate keys in JSON: the first key that appears twice in one object.
//!
//! JSON parsers keep one of the two values silently (serde_json and Python keep the last), so
//! `"outcome": "failed", "outcome": "succeeded"` would compile as whichever came last. YAML
//! refuses a duplicate key, and so does skillc in a native JSON record (L001).
//!
//! `find` runs on text a JSON parser has already accepted: it only follows the structure
//! (strings, objects, arrays) and compares keys, so it is one pass over the bytes. The typed
//! fast path (`fast.rs`) sees the record's own keys itself and only hands this the values it
//! does not read field by field (`args`, unknown fields); the reference path hands it the
//! whole record.

use std::cell::RefCell;
use std::collections::HashSet;

/// A key that appears a second time in one object.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Duplicate {
    /// The key, unescaped.
    pub key: String,
    /// The object holding it, as a field path (`operations[1].args`); empty for the top level.
    pub path: String,
    /// The byte offset of the second occurrence in the text.
    pub offset: usize,
}

/// A key as the byte range of its string (quotes included) in the text.
#[derive(Clone, Copy)]
struct Key {
    start: usize,
    end: usize,
    escaped: bool,
}

impl Key {
    fn text(self, text: &str) -> std::borrow::Cow<'_, str> {
        let quoted = &text[self.start..self.end];
        if self.escaped {
            // The text was accepted by a JSON parser, so the string unescapes.
            serde_json::from_str::<String>(quoted).unwrap_or_default().into()
        } else {
            quoted[1..quoted.len() - 1].into()
        }
    }

    fn same(self, other: Key, text: &str) -> bool {
        if !self.escaped && !other.escaped {
            return text[self.start..self.end] == text[other.start..other.end];
        }
        self.text(text) == other.text(text)
    }
}

/// How the scan entered a nested value: by a key of an object or an index of a list.
#[derive(Clone, Copy)]
enum Step {
    Root,
    Key(Key),
    Index(usize),
}

#[derive(Clone, Copy)]
struct Frame {
    step: Step,
    object: bool,
    /// Objects: where this object's keys start in the key stack; the key of the member being
    /// read. Lists: the index of the current element.
    keys_start: usize,
    current: Option<Key>,
    index: usize,
    /// Objects with many keys: the index of their set in `Scan::sets`.
    set: Option<usize>,
}

/// Past this many keys an object's keys are looked up in a set.
const SCAN_KEYS: usize = 16;

/// The frame and key stacks, kept per thread: the fast path scans every call's `args`, and
/// two allocations per call would show at a million records.
#[derive(Default)]
struct Stacks {
    frames: Vec<Frame>,
    keys: Vec<Key>,
}

thread_local! {
    static STACKS: RefCell<Stacks> = RefCell::new(Stacks::default());
}

/// The first duplicate key in `text` (valid JSON), in text order of its second occurrence.
/// `None` for anything that is not an object or a list, or that holds no duplicate.
pub(crate) fn find(text: &str) -> Option<Duplicate> {
    find_within(text, usize::MAX, &mut false)
}

/// How deep a value the typed fast path takes whole (`plain`). Deeper values go to the
/// reference path, whose parser stops at its recursion limit: a record is then refused (L001)
/// wherever it stands in the file, not only where the reference path reads it. This bound is
/// well under that limit less the depth at which the fast path reads raw values (`args` is at
/// depth 4), so the fast path never takes what the reference path would refuse.
const FAST_DEPTH: usize = 64;

/// `true` when the fast path may keep `text` (valid JSON) as it is: no key is given twice in
/// one object, and nothing nests deeper than `FAST_DEPTH`.
pub(crate) fn plain(text: &str) -> bool {
    let mut deep = false;
    find_within(text, FAST_DEPTH, &mut deep).is_none() && !deep
}

/// `find`, giving up (with `deep` set) at nesting deeper than `max_depth`.
fn find_within(text: &str, max_depth: usize, deep: &mut bool) -> Option<Duplicate> {
    let b = text.as_bytes();
    let first = b.iter().position(|c| !c.is_ascii_whitespace())?;
    if !matches!(b[first], b'{' | b'[') {
        return None;
    }
    if b[first] == b'{' && flat_and_distinct(b, first) {
        return None;
    }
    STACKS.with_borrow_mut(|s| {
        s.frames.clear();
        s.keys.clear();
        let found = scan(text, first, s, max_depth, deep);
        s.frames.clear();
        s.keys.clear();
        found
    })
}

fn scan(text: &str, mut i: usize, s: &mut Stacks, max_depth: usize, deep: &mut bool) -> Option<Duplicate> {
    let b = text.as_bytes();
    // Objects of more than `SCAN_KEYS` keys: their keys, unescaped.
    let mut sets: Vec<HashSet<std::borrow::Cow<str>>> = Vec::new();
    // The next string in an object is a key (after `{` and after `,`).
    let mut key_next = false;
    while i < b.len() {
        match b[i] {
            c @ (b'{' | b'[') => {
                let step = match s.frames.last() {
                    None => Step::Root,
                    Some(f) if f.object => f.current.map_or(Step::Root, Step::Key),
                    Some(f) => Step::Index(f.index),
                };
                let object = c == b'{';
                if s.frames.len() >= max_depth {
                    *deep = true;
                    return None;
                }
                s.frames.push(Frame {
                    step,
                    object,
                    keys_start: s.keys.len(),
                    current: None,
                    index: 0,
                    set: None,
                });
                key_next = object;
                i += 1;
            }
            b'}' | b']' => {
                if let Some(f) = s.frames.pop() {
                    s.keys.truncate(f.keys_start);
                }
                key_next = false;
                i += 1;
            }
            b',' => {
                match s.frames.last_mut() {
                    Some(f) if f.object => key_next = true,
                    Some(f) => f.index += 1,
                    None => {}
                }
                i += 1;
            }
            b'"' => {
                let key = string_at(b, i)?;
                i = key.end;
                if !key_next {
                    continue;
                }
                key_next = false;
                let f = s.frames.last_mut()?;
                f.current = Some(key);
                let fresh = match f.set {
                    Some(k) => sets[k].insert(key.text(text)),
                    None => {
                        let fresh = !s.keys[f.keys_start..].iter().any(|k| k.same(key, text));
                        s.keys.push(key);
                        if s.keys.len() - f.keys_start > SCAN_KEYS {
                            let set = s.keys.drain(f.keys_start..).map(|k| k.text(text)).collect();
                            sets.push(set);
                            f.set = Some(sets.len() - 1);
                        }
                        fresh
                    }
                };
                if !fresh {
                    return Some(Duplicate {
                        key: key.text(text).into_owned(),
                        path: path(text, &s.frames),
                        offset: key.start,
                    });
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// `true` for the usual `args`: an object of at most `FLAT_KEYS` members whose keys are
/// distinct and unescaped and whose values are not objects or lists. `false` means "not
/// known": `scan` then reads it in full (and finds a duplicate where there is one).
fn flat_and_distinct(b: &[u8], start: usize) -> bool {
    const FLAT_KEYS: usize = 8;
    let ws = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let mut keys = [(0, 0); FLAT_KEYS];
    let mut n = 0;
    let mut i = ws(start + 1);
    if b.get(i) == Some(&b'}') {
        return true;
    }
    loop {
        if b.get(i) != Some(&b'"') || n == FLAT_KEYS {
            return false;
        }
        let Some(key) = string_at(b, i) else {
            return false;
        };
        let name = &b[key.start..key.end];
        if key.escaped || keys[..n].iter().any(|&(s, e)| &b[s..e] == name) {
            return false;
        }
        keys[n] = (key.start, key.end);
        n += 1;
        i = ws(key.end);
        if b.get(i) != Some(&b':') {
            return false;
        }
        i = ws(i + 1);
        match b.get(i) {
            Some(b'"') => match string_at(b, i) {
                Some(v) => i = v.end,
                None => return false,
            },
            Some(b'{' | b'[') | None => return false,
            Some(_) => {
                while b
                    .get(i)
                    .is_some_and(|&c| !matches!(c, b',' | b'}') && !c.is_ascii_whitespace())
                {
                    i += 1;
                }
            }
        }
        i = ws(i);
        match b.get(i) {
            Some(b',') => i = ws(i + 1),
            Some(b'}') => return true,
            _ => return false,
        }
    }
}

/// The string starting at `b[start]` (a `"`). Its text is skipped a word at a time: `args`
/// are mostly commands and paths, and this runs on every call of a million records.
fn string_at(b: &[u8], start: usize) -> Option<Key> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = 0x2222_2222_2222_2222;
    const BACKSLASHES: u64 = 0x5c5c_5c5c_5c5c_5c5c;
    let mut i = start + 1;
    let mut escaped = false;
    loop {
        while i + 8 <= b.len() {
            let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            let (q, s) = (w ^ QUOTES, w ^ BACKSLASHES);
            // The lowest flagged byte is a `"` or `\` (a flag above it may be a borrow).
            let hit = ((q.wrapping_sub(ONES) & !q) | (s.wrapping_sub(ONES) & !s)) & HIGHS;
            if hit != 0 {
                i += (hit.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match *b.get(i)? {
            b'"' => {
                return Some(Key {
                    start,
                    end: i + 1,
                    escaped,
                });
            }
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
}

/// The field path of the innermost frame (`operations[1].args`).
fn path(text: &str, frames: &[Frame]) -> String {
    let mut out = String::new();
    for f in frames {
        match f.step {
            Step::Root => {}
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&k.text(text));
            }
            Step::Index(n) => {
                out.push('[');
                out.push_str(&n.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<(String, String, usize)> {
        find(text).map(|d| (d.key, d.path, d.offset))
    }

    #[test]
    fn finds_the_first_repeated_key_and_its_object() {
        assert_eq!(dup(r#"{"a": 1, "b": 2}"#), None);
        let t = r#"{"id": "x", "outcome": "failed", "outcome": "succeeded"}"#;
        assert_eq!(
            dup(t),
            Some(("outcome".into(), String::new(), t.rfind("\"outcome").unwrap()))
        );
        let t = r#"{"operations": [{"tool": "t", "args": {"cwd": "/a"}}, {"tool": "u", "args": {"command": "ls", "cwd": "/a", "command": "rm"}}]}"#;
        assert_eq!(dup(t).unwrap().1, "operations[1].args");
        // Nested objects with the same keys, keys inside strings, escapes.
        assert_eq!(dup(r#"{"a": {"a": {"a": 1}}, "b": "\"a\": \"a\""}"#), None);
        assert_eq!(dup(r#"{"a\"b": 1, "a\u0022b": 2}"#).unwrap().0, "a\"b");
        assert_eq!(
            dup(r#"[{"k": 1}, {"k": 2}, [{"x": [], "x": {}}]]"#).unwrap().1,
            "[2][0]"
        );
        // Flat objects (the usual `args`) with scalars of every kind.
        assert_eq!(dup("{}"), None);
        assert_eq!(
            dup(r#" { "a" : -1.5e3 , "b" : true, "c": null , "d": "" } "#),
            None
        );
        assert_eq!(dup(r#"{"a": -1.5e3, "b": false, "a": null}"#).unwrap().0, "a");
        assert_eq!(dup(r#"{"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k1": 0}"#).unwrap().0, "k1");
        // Values that are not objects or lists hold no keys.
        assert_eq!(dup(r#""{\"a\": 1, \"a\": 2}""#), None);
        assert_eq!(dup("3"), None);
    }

    #[test]
    fn strings_of_any_length_end_at_their_closing_quote() {
        for len in 0..40 {
            for at in 0..=len {
                let mut v: String = "x".repeat(len);
                v.insert_str(at, "\\\"{\\\\");
                let t = format!(r#"{{"cmd": "{v}", "cwd": "/srv", "cmd": "{v}"}}"#);
                assert_eq!(dup(&t).map(|d| d.0), Some("cmd".to_string()), "{t}");
                let t = format!(r#"{{"cmd": "{v}", "cwd": "/srv"}}"#);
                assert_eq!(dup(&t), None, "{t}");
            }
        }
    }

    #[test]
    fn many_keys_are_compared_through_a_set() {
        let mut keys: Vec<String> = (0..500).map(|i| format!("\"k{i}\": {i}")).collect();
        let t = format!("{{{}}}", keys.join(", "));
        assert_eq!(dup(&t), None);
        keys.push("\"k7\": 0".into());
        keys.push("\"k9\": 0".into());
        let t = format!("{{\"outer\": {{{}}}}}", keys.join(", "));
        let (key, path, _) = dup(&t).unwrap();
        assert_eq!((key.as_str(), path.as_str()), ("k7", "outer"));
    }
}
