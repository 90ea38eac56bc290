//! The little Markdown a delta needs: frontmatter, ATX sections outside fenced code, slugs,
//! section digests. Everything works on LF text; callers normalise CRLF first (`lf`).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::digest::sha256_hex;

/// The slug of the text before the first heading.
pub const PREAMBLE: &str = "_preamble";

/// Slugs are capped at this many characters.
pub const SLUG_MAX: usize = 64;

/// One section of an authored skill's body: from its heading line to the line before the next
/// heading of any level (the preamble: from the first line to the line before the first heading).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Unique within the body: repeated slugs get `-2`, `-3`, …; the preamble is `_preamble`.
    pub slug: String,
    /// 1-based, inclusive, counted in the body given to `sections`.
    pub start_line: usize,
    pub end_line: usize,
    /// The section's lines (heading included) joined with `\n`, no trailing newline.
    pub text: String,
}

impl Section {
    /// `sha256:` + hex SHA-256 of `text`.
    pub fn digest(&self) -> String {
        digest_of(&self.text)
    }

    pub fn contains_line(&self, line: usize) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}

/// `sha256:` + hex SHA-256 of `text` with CRLF normalised to LF.
pub fn digest_of(text: &str) -> String {
    format!("sha256:{}", sha256_hex(lf(text).as_bytes()))
}

/// CRLF → LF.
pub fn lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The byte-order mark an editor on Windows may save a SKILL.md with.
const BOM: char = '\u{feff}';

/// Splits a skill into its YAML frontmatter (the `---` line, the YAML, the closing `---` line
/// and its newline) and its body, after normalising CRLF to LF. Without a closed frontmatter at
/// the very top, the frontmatter is empty and the body is the whole text. A leading byte-order
/// mark goes with the frontmatter (alone, when there is none): it hides neither the frontmatter
/// nor the first heading, and `front + body` is still the text.
pub fn split_frontmatter(text: &str) -> (String, String) {
    let text = lf(text);
    let bom = text.len() - text.trim_start_matches(BOM).len();
    let mut offset = bom;
    let mut first = true;
    for line in text[bom..].split_inclusive('\n') {
        let bare = line.trim_end_matches('\n').trim_end();
        offset += line.len();
        if first {
            if bare != "---" {
                break;
            }
            first = false;
        } else if bare == "---" {
            return (text[..offset].to_string(), text[offset..].to_string());
        }
    }
    (text[..bom].to_string(), text[bom..].to_string())
}

/// What a skill's frontmatter holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Frontmatter {
    /// The text does not open with a `---` line.
    Missing,
    /// It opens with `---`, but no `---` line closes it.
    Unclosed,
    /// Closed, but not a YAML mapping: the line of the skill (1-based) and what is wrong.
    Invalid { line: usize, message: String },
    /// A YAML mapping (an empty frontmatter is an empty one).
    Mapping(serde_yaml::Mapping),
}

/// The skill's frontmatter, parsed as YAML (so `name: "pdf-tools"`, `name: 'x'  # comment`,
/// `"name": x` and a block scalar all read as the spec's readers read them).
pub fn frontmatter(text: &str) -> Frontmatter {
    let (front, _) = split_frontmatter(text);
    let front = front.trim_start_matches(BOM);
    if front.is_empty() {
        let text = lf(text);
        let first = text.trim_start_matches(BOM).lines().next().unwrap_or("");
        return if first.trim_end() == "---" {
            Frontmatter::Unclosed
        } else {
            Frontmatter::Missing
        };
    }
    // Between the opening `---` line (line 1) and the closing one.
    let yaml = front.split_once('\n').map_or("", |(_, rest)| rest);
    let yaml = yaml[..yaml.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1)].to_string();
    match serde_yaml::from_str::<serde_yaml::Value>(&yaml) {
        Ok(serde_yaml::Value::Mapping(m)) => Frontmatter::Mapping(m),
        Ok(serde_yaml::Value::Null) => Frontmatter::Mapping(serde_yaml::Mapping::new()),
        Ok(_) => Frontmatter::Invalid {
            line: 2,
            message: "the frontmatter is not a mapping of keys to values".to_string(),
        },
        Err(e) => {
            let line = e.location().map_or(2, |l| l.line() + 1);
            let message = e.to_string();
            // serde_yaml counts lines from the frontmatter's first; the location says where.
            let message = message
                .find(" at line ")
                .map_or(message.as_str(), |i| &message[..i])
                .to_string();
            Frontmatter::Invalid { line, message }
        }
    }
}

/// The frontmatter's top-level `name` when it is a non-empty string. Frontmatter that is not
/// valid YAML (often a `description` with a second `: ` in it) still gives the value of a
/// plain one-line `name:`, unquoted, so the skill is matched while its E007 says what to fix.
pub fn frontmatter_name(text: &str) -> Option<String> {
    match frontmatter(text) {
        Frontmatter::Mapping(m) => match m.get("name") {
            Some(serde_yaml::Value::String(v)) => {
                let v = v.trim();
                (!v.is_empty()).then(|| v.to_string())
            }
            _ => None,
        },
        Frontmatter::Invalid { .. } => {
            let (front, _) = split_frontmatter(text);
            front.lines().find_map(|l| {
                let v = l.strip_prefix("name:")?.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                    .unwrap_or(v);
                (!v.is_empty()).then(|| v.to_string())
            })
        }
        Frontmatter::Missing | Frontmatter::Unclosed => None,
    }
}

/// The line (1-based) of the frontmatter's top-level key `key` (`key:`, `"key":`, `'key' :`).
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let (front, _) = split_frontmatter(text);
    front
        .lines()
        .position(|l| {
            let l = l.trim_start_matches(BOM);
            let rest = (l.strip_prefix(key))
                .or_else(|| l.strip_prefix('"')?.strip_prefix(key)?.strip_prefix('"'))
                .or_else(|| l.strip_prefix('\'')?.strip_prefix(key)?.strip_prefix('\''));
            rest.is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|i| i + 1)
}

/// The body's lines, LF-normalised (a trailing newline does not start a line).
pub fn body_lines(body: &str) -> Vec<String> {
    lf(body).lines().map(str::to_string).collect()
}

/// An ATX heading's text: `#` to `######`, then a space.
pub fn heading(line: &str) -> Option<&str> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    line[hashes..].strip_prefix(' ')
}

/// A fence line: up to three spaces, then three or more backticks or tildes.
/// Returns the fence character, its run length and what follows the run.
fn fence(line: &str) -> Option<(u8, usize, &str)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = rest.bytes().take_while(|&b| b == ch).count();
    if run < 3 {
        return None;
    }
    let info = &rest[run..];
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some((ch, run, info))
}

/// For each line: is it inside a fenced code block (the fence lines included)?
pub fn fenced(lines: &[String]) -> Vec<bool> {
    let mut open: Option<(u8, usize)> = None;
    lines
        .iter()
        .map(|line| match (open, fence(line)) {
            (None, Some((ch, run, _))) => {
                open = Some((ch, run));
                true
            }
            (Some((ch, run)), Some((c, r, info))) if c == ch && r >= run && info.trim().is_empty() => {
                open = None;
                true
            }
            (Some(_), _) => true,
            (None, None) => false,
        })
        .collect()
}

static LINK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("link pattern"));

/// A heading's slug: links become their text; backticks, `*` and `_` go; lower case; every
/// run of characters outside `[a-z0-9]` becomes one `-`; `-` trimmed at both ends; at most
/// 64 characters. An empty slug becomes `section`.
pub fn slug(heading_text: &str) -> String {
    let text = LINK.replace_all(heading_text, "$1");
    let mut s = String::new();
    let mut dash = false;
    for c in text
        .chars()
        .filter(|c| !matches!(c, '`' | '*' | '_'))
        .flat_map(char::to_lowercase)
    {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if dash && !s.is_empty() {
                s.push('-');
            }
            dash = false;
            s.push(c);
        } else {
            dash = true;
        }
    }
    // Only ASCII is pushed, so byte truncation is character truncation.
    s.truncate(SLUG_MAX);
    if s.is_empty() {
        s.push_str("section");
    }
    s
}

/// The body's sections in order. Text before the first heading is `_preamble` when it has a
/// non-blank line; headings inside fenced code blocks do not count.
pub fn sections(body: &str) -> Vec<Section> {
    let lines = body_lines(body);
    let in_fence = fenced(&lines);
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| !in_fence[i] && heading(&lines[i]).is_some())
        .collect();
    let mut out = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    let first = starts.first().copied().unwrap_or(lines.len());
    if lines[..first].iter().any(|l| !l.trim().is_empty()) {
        used.insert(PREAMBLE.to_string());
        out.push(Section {
            slug: PREAMBLE.to_string(),
            start_line: 1,
            end_line: first,
            text: lines[..first].join("\n"),
        });
    }
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(lines.len());
        let base = slug(heading(&lines[start]).unwrap_or_default());
        let mut unique = base.clone();
        let mut n = 2;
        while used.contains(&unique) {
            unique = format!("{base}-{n}");
            n += 1;
        }
        used.insert(unique.clone());
        out.push(Section {
            slug: unique,
            start_line: start + 1,
            end_line: end,
            text: lines[start..end].join("\n"),
        });
    }
    out
}

/// How many times `needle` occurs in `hay`, overlapping occurrences included.
pub fn occurrences(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let mut count = 0;
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        count += 1;
        let at = from + i;
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    count
}
