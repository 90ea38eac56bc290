//! The ledger's and the diagnostics' JSON objects, written by hand: at a million experiences
//! the two files are three quarters of a gigabyte, and serde's writer (a call per key, per
//! value and per escape check) took about half again as long as appending the known keys
//! and unescaped runs whole. The bytes are serde_json's compact output, to the byte: the
//! tests hold both to each other.

use serde_json::Value;

/// Appends `s` as a JSON string, escaped as serde_json escapes (`"`, `\`, control characters;
/// nothing else). Eight bytes at a time: most texts need no escape at all.
pub fn string(buf: &mut Vec<u8>, s: &str) {
    buf.reserve(s.len() + 2);
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        buf.extend_from_slice(&bytes[start..at]);
        escape(buf, bytes[at]);
        start = at + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// The first byte at or after `from` that needs escaping, eight bytes at a time. A text of
/// eight bytes or more ends with the word of its last eight (bytes seen already are clean, so
/// the first flag is in the new ones): a byte loop over the tail cost as much as the words.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    if rest.len() < 8 {
        return (rest.iter())
            .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
            .map(|p| from + p);
    }
    let word_at = |at: usize| u64::from_le_bytes(rest[at..at + 8].try_into().expect("eight bytes"));
    let last = rest.len() - 8;
    let mut at = 0;
    loop {
        let flags = escape_flags(word_at(at));
        if flags != 0 {
            return Some(from + at + first_flagged(flags));
        }
        if at == last {
            return None;
        }
        at = (at + 8).min(last);
    }
}

/// The high bit of each byte of `w` that needs escaping (below 0x20, `"` or `\`) is set, and
/// bits above the lowest such byte may be too: the classic "has a byte less than n" and "has a
/// zero byte" tests, whose borrows run only upward, so the lowest flag is always exact.
#[inline]
fn escape_flags(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    below | zero(quote) | zero(backslash)
}

/// The offset in its word (read little-endian) of the lowest flagged byte.
#[inline]
fn first_flagged(flags: u64) -> usize {
    flags.trailing_zeros() as usize / 8
}

fn escape(buf: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => buf.extend_from_slice(b"\\\""),
        b'\\' => buf.extend_from_slice(b"\\\\"),
        b'\n' => buf.extend_from_slice(b"\\n"),
        b'\r' => buf.extend_from_slice(b"\\r"),
        b'\t' => buf.extend_from_slice(b"\\t"),
        0x08 => buf.extend_from_slice(b"\\b"),
        0x0c => buf.extend_from_slice(b"\\f"),
        _ => buf.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(b >> 4) as usize],
            HEX[(b & 0xf) as usize],
        ]),
    }
}

/// An object being written: `{` on creation, `"key":value` pairs with commas between them,
/// `}` on `end`. Keys are the caller's literals and need no escaping.
pub struct Object<'a> {
    buf: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Object<'a> {
    pub fn new(buf: &'a mut Vec<u8>) -> Object<'a> {
        buf.push(b'{');
        Object { buf, first: true }
    }

    /// Writes `"key":` and returns the buffer for the value.
    pub fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        debug_assert!(!key.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'));
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.buf
    }

    pub fn str(&mut self, key: &'static str, v: &str) {
        string(self.key(key), v);
    }

    pub fn opt_str(&mut self, key: &'static str, v: Option<&str>) {
        match v {
            Some(s) => self.str(key, s),
            None => self.key(key).extend_from_slice(b"null"),
        }
    }

    pub fn strs(&mut self, key: &'static str, v: &[impl AsRef<str>]) {
        list(self.key(key), b'[', v, b']', |buf, s| string(buf, s.as_ref()));
    }

    pub fn bool(&mut self, key: &'static str, v: bool) {
        self.key(key)
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    /// `v` in decimal, as `Display` writes it, without the formatting machinery.
    pub fn u32(&mut self, key: &'static str, v: u32) {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        let mut rest = v;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.key(key).extend_from_slice(&digits[at..]);
    }

    /// A value already written as JSON text.
    pub fn raw(&mut self, key: &'static str, json: &str) {
        self.key(key).extend_from_slice(json.as_bytes());
    }

    pub fn end(self) {
        self.buf.push(b'}');
    }
}

/// Appends `open`, each item written by `each` with a comma between two, then `close`.
pub fn list<T>(
    buf: &mut Vec<u8>,
    open: u8,
    items: impl IntoIterator<Item = T>,
    close: u8,
    mut each: impl FnMut(&mut Vec<u8>, T),
) {
    buf.push(open);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        each(buf, item);
    }
    buf.push(close);
}

/// Appends (name, value) pairs, in their order, as an object.
pub fn map<'k, 'v>(buf: &mut Vec<u8>, pairs: impl IntoIterator<Item = (&'k str, &'v Value)>) {
    list(buf, b'{', pairs, b'}', |buf, (name, v)| {
        string(buf, name);
        buf.push(b':');
        value(buf, v);
    });
}

/// Appends a `serde_json::Value` in serde_json's compact form: strings take the fast path,
/// numbers, booleans and null go through serde_json (few, and its number format is the one).
pub fn value(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => string(buf, s),
        Value::Array(items) => list(buf, b'[', items, b']', value),
        Value::Object(m) => map(buf, m.iter().map(|(k, v)| (k.as_str(), v))),
        Value::Null | Value::Bool(_) | Value::Number(_) => {
            serde_json::to_writer(buf, v).expect("writing to a vector cannot fail")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts that exercise every branch: clean runs longer and shorter than a word, each
    /// escape at every offset in a word, multi-byte characters, DEL (not escaped).
    fn awkward_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            "go",
            "Run `cargo test --locked` before pushing; CI pins the lockfile.",
            "Set PYTHONPATH=src \"before\" calling pytest -q",
            "C:\\Users\\ci\\AppData\\Local\\pip\\cache",
            "line one\nline two\r\n\ttabbed\u{8}\u{c}\u{1}\u{1f}\u{7f}",
            "héllo wörld — ünïcode 日本語 🚀 \"quoted\"",
            "kubectl rollout status deploy/api --timeout=120s",
        ]
        .map(String::from)
        .to_vec();
        for esc in ["\"", "\\", "\n", "\u{0}", "\u{1f}", "é", "\u{7f}"] {
            // Every offset in and across the first words of eight, and texts that end inside
            // a word.
            for at in 0..40 {
                let mut s = "x".repeat(at);
                s.push_str(esc);
                s.push_str(&"y".repeat(at % 23));
                texts.push(s);
            }
        }
        texts
    }

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_escapes_them() {
        // The awkward texts, then every single byte value below 0x80 on its own.
        let single_bytes = (0u8..0x80).map(|b| (b as char).to_string());
        for t in awkward_texts().into_iter().chain(single_bytes) {
            let mut buf = Vec::new();
            string(&mut buf, &t);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                serde_json::to_string(&t).unwrap(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn numbers_and_keys_are_written_as_serde_json_writes_them() {
        for v in [0, 7, 10, 99, 100, 4_096, 65_535, 1_000_000, 999_999_999, u32::MAX] {
            let mut buf = Vec::new();
            let mut o = Object::new(&mut buf);
            o.u32("reinforcement", v);
            o.u32("idle_days", v / 3);
            o.end();
            let expected = serde_json::json!({"reinforcement": v, "idle_days": v / 3});
            // Keys in the caller's order (serde_json's map would sort them), numbers as it writes.
            let text = String::from_utf8(buf).unwrap();
            assert_eq!(text, format!("{{\"reinforcement\":{v},\"idle_days\":{}}}", v / 3));
            let parsed: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed, expected);
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let v = serde_json::json!({
            "experiences": ["exp-001", "exp-\"002\""],
            "count": 3,
            "ratio": 0.65,
            "negative": -12,
            "nested": {"b": [true, false, null], "a": "tab\there"},
            "empty": [],
            "none": {},
        });
        let mut buf = Vec::new();
        value(&mut buf, &v);
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
    }
}
