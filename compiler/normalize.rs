//! Normalize: domains (aliases, validation), text, credentials, project digests (DESIGN §4).
//!
//! After this stage every domain in `Experience::domains` is a valid Agent Skills name, every
//! text is one trimmed line of at most 240 characters, every project is a 12-hex digest, and no
//! string of the corpus holds anything `rules/secrets.yaml` recognises: a secret is replaced by
//! a `[redacted: <pattern>]` marker where it stood, so no later stage (nor `trace`, nor the
//! state store) can echo it. `candidates` refuses every candidate that carries a marker.
//! Arguments that only label a call (`policy.label_args`) are dropped here, once, so every
//! later stage (identical-retry test, working forms, lesson text, keys, attribution) agrees.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use rayon::prelude::*;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

use crate::cluster::fx::{FxMap, FxSet};
use crate::diagnostics::{Diagnostic, Sink, codes, short_list};
use crate::digest;
use crate::model::{Args, Corpus, Experience, LessonClaim, SourceLoc};
use crate::policy::{LabelArgs, Rules};

/// Longest normalised text, in characters (the cut one included).
pub const MAX_TEXT_CHARS: usize = 240;
/// Longest valid domain (Agent Skills `name`).
pub const MAX_DOMAIN_CHARS: usize = 64;
/// Longest refused domain kept for display, in characters.
const MAX_REFUSED_DISPLAY: usize = 80;

static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[redacted: ([a-z0-9-]*)").expect("valid regex"));

/// `rules/aliases.yaml`: domain aliases and the program → domain map used for stores that
/// record no domains (GAIA) and to place mechanical lessons.
#[derive(Clone, Debug, Default)]
pub struct Aliases {
    /// Looked up for every domain of every record, never iterated.
    domains: FxMap<String, String>,
    /// Every name the table knows: its keys (folded) and its targets, `programs`' included.
    /// Only a known name may lose a trailing version (`postgres-16`) or be one of several
    /// names joined by `/` (`typescript/react`): a name the table has never heard of is
    /// left as written.
    known: FxSet<String>,
    pub programs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AliasesFile {
    #[serde(default)]
    domains: BTreeMap<String, String>,
    #[serde(default)]
    programs: BTreeMap<String, String>,
}

impl Aliases {
    /// Keys are folded like a raw domain (so `node.js:` and `Node_JS:` mean the same), and
    /// every target must be a valid domain.
    pub fn from_yaml(text: &str) -> Result<Aliases, String> {
        let file: AliasesFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let mut aliases = Aliases::default();
        for (from, to) in file.domains {
            let to = checked_target(&from, &to)?;
            aliases.known.insert(fold(&from));
            aliases.known.insert(to.clone());
            aliases.domains.insert(fold(&from), to);
        }
        for (program, to) in file.programs {
            let to = checked_target(&program, &to)?;
            aliases.known.insert(to.clone());
            aliases.programs.insert(program.trim().to_lowercase(), to);
        }
        Ok(aliases)
    }

    /// The canonical name of a folded raw domain when the table says more than `name` does:
    /// its alias, or, for a known name with a trailing version (`python-3-12`, `node-js-20`,
    /// `postgres-v16`, `c++17`), the known name's own canonical one. `None`: keep `name`.
    fn canonical<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        if let Some(to) = self.domains.get(name) {
            return Some(to);
        }
        // A shortened name's canonical one, if the table knows it.
        let known = |cut: &'a str| match self.domains.get(cut) {
            Some(to) => Some(to.as_str()),
            None => self.known.contains(cut).then_some(cut),
        };
        let mut base = name;
        while let Some(cut) = without_version(base) {
            if let Some(to) = known(cut) {
                return Some(to);
            }
            base = cut;
        }
        // Digits glued to a known name of three letters or more are its version (`node20`,
        // `vue3`, `ruby3.2`): teams tag that way as often as with a space. Shorter names keep
        // theirs (`tf2` is TensorFlow, not terraform), and so does a name nobody listed (`s3`,
        // `ec2`, `web3`, `oauth2`).
        let cut = base.trim_end_matches(|c: char| c.is_ascii_digit());
        let glued =
            cut.len() < base.len() && cut.len() >= 3 && cut.ends_with(|c: char| c.is_ascii_lowercase());
        glued.then(|| known(cut)).flatten()
    }

    /// Whether the table knows `raw` (folded) as a name or an alias.
    fn knows(&self, raw: &str) -> bool {
        let folded = fold(raw);
        self.known.contains(&folded) || self.canonical(&folded).is_some()
    }

    /// The domain a program's lessons belong to, if the table names one.
    pub fn program_domain(&self, program: &str) -> Option<&str> {
        self.programs.get(program).map(String::as_str)
    }
}

fn checked_target(from: &str, to: &str) -> Result<String, String> {
    let folded = fold(to);
    validate(&folded).map_err(|why| format!("alias {from:?} → {to:?}: target {why}"))?;
    Ok(folded)
}

/// `rules/secrets.yaml`, compiled.
#[derive(Clone, Debug, Default)]
pub struct SecretScanner {
    patterns: Vec<SecretPattern>,
    /// Every pattern in one automaton: almost no text carries a secret, so one pass that
    /// says "none of them" spares running each pattern (which confirm its "maybe" on
    /// non-ASCII text: `patterns`).
    any: crate::patterns::PatternSet,
    /// No pattern is anchored, so a text holds a match exactly when it holds one inside a
    /// newline-joined run of texts (see `may_hold`).
    joinable: bool,
}

#[derive(Clone, Debug)]
struct SecretPattern {
    name: String,
    regex: Regex,
    /// A match that also matches this is not a secret (a placeholder, an environment lookup).
    allow: Option<Regex>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsFile {
    #[serde(default)]
    patterns: Vec<SecretEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretEntry {
    name: String,
    regex: String,
    #[serde(default)]
    allow: Option<String>,
}

impl SecretScanner {
    /// The patterns' names, in the file's order (`explain N002` lists them).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|p| p.name.as_str())
    }

    pub fn from_yaml(text: &str) -> Result<SecretScanner, String> {
        let file: SecretsFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        // Redaction is a safety property: a file that exists but lists nothing (empty, only
        // comments, `patterns: []`) would turn it off without a word. A missing file keeps
        // the built-in patterns.
        if file.patterns.is_empty() {
            return Err(
                "defines no credential patterns, so no secret would be redacted; list at least one \
                 under `patterns:`, or delete the file to use the built-in patterns"
                    .into(),
            );
        }
        let mut patterns = Vec::with_capacity(file.patterns.len());
        for e in file.patterns {
            if !is_skill_name(&e.name) {
                return Err(format!(
                    "secret pattern name {:?} must be lower-case words joined by hyphens",
                    e.name
                ));
            }
            let compile = |src: &str| {
                crate::patterns::regex(src).map_err(|err| format!("secret pattern {}: {err}", e.name))
            };
            patterns.push(SecretPattern {
                regex: compile(&e.regex)?,
                allow: e.allow.as_deref().map(compile).transpose()?,
                name: e.name,
            });
        }
        let any = crate::patterns::PatternSet::new(patterns.iter().map(|p| p.regex.as_str()))
            .map_err(|err| format!("secret patterns: {err}"))?;
        let joinable = !patterns.iter().any(|p| anchored(p.regex.as_str()));
        Ok(SecretScanner {
            patterns,
            any,
            joinable,
        })
    }

    /// Could a secret hide in any of `texts`? One scan of them joined by newlines instead of
    /// one scan each (a record has a dozen short texts, and a scan's setup costs more than
    /// its bytes): `false` means none of them holds one. Sound because no pattern is
    /// anchored and a newline is, for `\b`, the same as either end of a text.
    pub fn may_hold<'t>(&self, texts: impl IntoIterator<Item = &'t str>) -> bool {
        if !self.joinable {
            return true;
        }
        let mut joined = String::with_capacity(1024);
        for t in texts {
            joined.push_str(t);
            joined.push('\n');
        }
        self.any.may_match(&joined)
    }

    /// `may_hold` of one text, scanned where it lies: no joined copy, and sound for any
    /// pattern list, since `find` asks the same question of the text before it looks closer.
    /// (A copy with a newline appended could only say "maybe" more often.)
    pub fn may_hold_text(&self, text: &str) -> bool {
        self.any.may_match(text)
    }

    /// The name of the first pattern the text matches; never the secret itself.
    pub fn find(&self, text: &str) -> Option<&str> {
        if !self.any.may_match(text) {
            return None;
        }
        self.patterns
            .iter()
            .find(|p| p.matches(text).next().is_some())
            .map(|p| p.name.as_str())
    }

    /// The text with every secret replaced by `[redacted: <pattern>]`, and the first pattern
    /// that fired; `None` when there is nothing to redact.
    pub fn redact(&self, text: &str) -> Option<(String, &str)> {
        if !self.any.may_match(text) {
            return None;
        }
        let mut first: Option<&str> = None;
        let mut out = Cow::Borrowed(text);
        for p in &self.patterns {
            let spans: Vec<(usize, usize)> = p.matches(&out).collect();
            if spans.is_empty() {
                continue;
            }
            first.get_or_insert(p.name.as_str());
            let mut next = String::with_capacity(out.len());
            let mut at = 0;
            for (s, e) in spans {
                next.push_str(&out[at..s]);
                next.push_str(&marker(&p.name));
                at = e;
            }
            next.push_str(&out[at..]);
            out = Cow::Owned(next);
        }
        first.map(|name| (out.into_owned(), name))
    }
}

impl SecretPattern {
    /// The spans to redact: each match the allow pattern lets stand is skipped, and a match
    /// of a pattern with capture groups gives only the first group that took part, so
    /// `mysql -pS3cret` keeps its `mysql -p` and two commands differing elsewhere still differ.
    fn matches<'t>(&'t self, text: &'t str) -> impl Iterator<Item = (usize, usize)> + 't {
        self.regex
            .captures_iter(text)
            .filter(|c| !self.allow.as_ref().is_some_and(|a| a.is_match(&c[0])))
            .map(|c| {
                let m = c
                    .iter()
                    .skip(1)
                    .flatten()
                    .next()
                    .unwrap_or_else(|| c.get(0).unwrap());
                (m.start(), m.end())
            })
    }
}

/// Could `pattern` match a text alone but not the same text inside a longer one? Only an
/// anchor can (`^`, `$`, `\A`, `\z`, and their multi-line forms), read from the parsed pattern:
/// a `$` inside a class (`[^\s"$]`, as several built-in patterns have) is none. A pattern that
/// does not parse counts as anchored.
fn anchored(pattern: &str) -> bool {
    match regex_syntax::Parser::new().parse(pattern) {
        Ok(hir) => hir.properties().look_set().contains_anchor(),
        Err(_) => true,
    }
}

/// Redacts every secret in a diagnostic's message, subject and evidence. Loaders quote short
/// bad values ("`effort` must be a number, found \"…\"") before any stage has scanned them.
pub fn redact_diagnostic(d: &mut Diagnostic, secrets: &SecretScanner) {
    let redact = |s: &mut String| {
        if let Some((clean, _)) = secrets.redact(s) {
            *s = clean;
        }
    };
    redact(&mut d.message);
    redact(&mut d.subject);
    for v in d.evidence.values_mut() {
        scrub_strings(v, &redact);
    }
}

/// Every string inside a JSON value, rewritten by `f`.
fn scrub_strings(v: &mut Value, f: &impl Fn(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter_mut().for_each(|x| scrub_strings(x, f)),
        Value::Object(map) => map.values_mut().for_each(|x| scrub_strings(x, f)),
        _ => {}
    }
}

/// How a redaction marker opens; the pattern's name and `]` follow.
pub const MARKER_OPEN: &str = "[redacted: ";

/// What stands in for a secret: `[redacted: <pattern>]`.
pub fn marker(pattern: &str) -> String {
    format!("{MARKER_OPEN}{pattern}]")
}

/// The pattern named by a redaction marker in `s`, if `s` carries one (normalize put it
/// there in place of a secret).
pub fn redacted_pattern(s: &str) -> Option<&str> {
    // Every text and id is asked this; nearly none carries a marker, and most have no `[`:
    // a byte search says so for less than the substring search's set-up on a short text.
    if !s.as_bytes().contains(&b'[') || !s.contains(MARKER_OPEN) {
        return None;
    }
    MARKER.captures(s).map(|c| c.get(1).map_or("", |m| m.as_str()))
}

/// Trim, lower-case, whitespace/`.`/`_` runs → `-`; no alias, no validation.
pub fn fold(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_run = false;
    for c in raw.trim().chars() {
        if c.is_whitespace() || c == '.' || c == '_' {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.extend(c.to_lowercase());
            in_run = false;
        }
    }
    out
}

/// `name` without its last version group: `-3`, `-12`, `-v20` after a hyphen, or digits right
/// after a symbol (`c++17`, `f#6`). Digits glued to a letter are left to `Aliases::canonical`,
/// which drops them only after a known name (`node20`); anything that does not end in a digit
/// keeps its digits (`k3s`, `i18n`).
fn without_version(name: &str) -> Option<&str> {
    let cut = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if cut.len() == name.len() {
        return None;
    }
    let base = match cut.strip_suffix("-v").or_else(|| cut.strip_suffix('-')) {
        Some(base) => base,
        None if cut.ends_with(|c: char| !c.is_alphanumeric()) => cut,
        None => return None,
    };
    (!base.is_empty()).then_some(base)
}

/// Lower-case letters and digits in words joined by single hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`),
/// checked byte by byte: this runs for every domain of every record.
fn is_skill_name(s: &str) -> bool {
    let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
    let b = s.as_bytes();
    // Pairs of neighbours rather than `contains("--")`, whose searcher costs more to set up
    // than a short name costs to walk.
    !b.is_empty()
        && b.iter().all(|&c| allowed(c))
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && !b.windows(2).any(|w| w == b"--")
}

fn validate(domain: &str) -> Result<(), String> {
    if domain.is_empty() {
        Err("is empty".into())
    } else if domain.chars().count() > MAX_DOMAIN_CHARS {
        Err(format!("is longer than {MAX_DOMAIN_CHARS} characters"))
    } else if !is_skill_name(domain) {
        Err("may only hold lower-case letters, digits and single hyphens".into())
    } else {
        Ok(())
    }
}

/// Trim, lower-case, whitespace/`.`/`_` runs → `-`, alias; then validate as an Agent Skills
/// name. `Err` carries why, for the diagnostic.
pub fn domain(raw: &str, aliases: &Aliases) -> Result<String, String> {
    domain_borrowed(raw, aliases).map(Cow::into_owned)
}

/// Why a valid domain cannot be compiled under its name: the top-level folders skillc writes
/// its own output in. A skill named `lessons` would put its `SKILL.md` among the plan-time
/// blocks, which a harness loads as `lessons/*.md`; `projects` and `deltas` likewise.
pub fn reserved(domain: &str) -> Option<String> {
    let holds = match domain {
        "lessons" => "its plan-time lesson blocks",
        "projects" => "the projects' own skills",
        "deltas" => "the skill deltas",
        _ => return None,
    };
    Some(format!(
        "skillc writes {holds} in {domain}/, and a skill of that name would put its SKILL.md among them; map the domain to another name in rules/aliases.yaml"
    ))
}

/// `domain`, borrowing the raw name or its alias target when neither needs a change.
fn domain_borrowed<'a>(raw: &'a str, aliases: &'a Aliases) -> Result<Cow<'a, str>, String> {
    // Most raw domains are valid names already, which `fold` would copy unchanged.
    if raw.len() <= MAX_DOMAIN_CHARS && is_skill_name(raw) {
        return match aliases.canonical(raw) {
            Some(to) => validate(to).map(|()| Cow::Borrowed(to)),
            None => Ok(Cow::Borrowed(raw)),
        };
    }
    let folded = fold(raw);
    let aliased = match aliases.canonical(&folded) {
        Some(to) => to.to_string(),
        None => folded,
    };
    validate(&aliased)?;
    Ok(Cow::Owned(aliased))
}

/// A refused raw domain as it may be shown: control characters, quotes and backslashes
/// escaped, at most 80 characters; `(empty)` for a blank one.
pub fn display_escape(raw: &str) -> String {
    if raw.trim().is_empty() && !raw.chars().any(char::is_control) {
        return "(empty)".into();
    }
    let escaped: String = raw.escape_debug().collect();
    if escaped.chars().count() <= MAX_REFUSED_DISPLAY {
        return escaped;
    }
    let mut cut: String = escaped.chars().take(MAX_REFUSED_DISPLAY - 1).collect();
    cut.push('…');
    cut
}

/// One line, whitespace collapsed, cut at 240 characters with `…` where the cut splits no
/// user-perceived character (a grapheme).
///
/// Control characters count as whitespace, so nothing that could drive a terminal survives.
/// Bidirectional embedding, override and isolate marks are dropped: invisible, they make a rule
/// display in another order than it reads to an agent ("Trojan Source"). Right-to-left text
/// itself needs none of them. Zero-width spaces are dropped too (`is_zero_width`).
pub fn text(raw: &str) -> String {
    if let Some(items) = delist(raw) {
        return collapse(&items);
    }
    if is_clean_line(raw) {
        return raw.to_string();
    }
    collapse(raw)
}

/// A list written as lines ("- Pin actions to SHAs\n- Set permissions: read-all", "1. …\n2) …")
/// as one line of items joined by "; ", its markers dropped; `None` when the text has no list
/// marker at the start of a line. Collapsing the breaks to spaces kept the markers ("- Pin … -
/// Set …"), which Markdown renders as a nested bullet in SKILL.md and which read as one clause.
fn delist(raw: &str) -> Option<String> {
    if !raw.lines().any(|l| list_marker(l.trim_start()).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(raw.len());
    let mut listed = false;
    for line in raw.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let item = list_marker(line).map(|end| line[end..].trim_start());
        if !out.is_empty() {
            if item.is_some() && !out.ends_with(['.', ';', ':', '!', '?', ',']) {
                out.push(';');
            }
            out.push(' ');
        }
        listed |= item.is_some();
        out.push_str(item.unwrap_or(line));
    }
    listed.then_some(out)
}

/// Where the text of a list item starts, when `line` opens with a list marker ("- ", "* ",
/// "+ ", "• ", "1. ", "12) ") followed by whitespace.
fn list_marker(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let end = match b.first()? {
        b'-' | b'*' | b'+' => 1,
        _ if line.starts_with('•') => '•'.len_utf8(),
        _ if (1..=2).contains(&digits) && matches!(b.get(digits), Some(b'.' | b')')) => digits + 1,
        _ => return None,
    };
    line[end..].starts_with(char::is_whitespace).then_some(end)
}

/// `text`, past the fast paths. Visible ASCII, most of most texts, goes over a run at a time.
fn collapse(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(4 * MAX_TEXT_CHARS));
    let mut chars = 0usize;
    let mut pending_space = false;
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        let run = rest.bytes().take_while(|b| (0x21..0x7f).contains(b)).count();
        let visible = if run > 0 {
            // A byte a character; no further than the cut needs (at least the one character
            // the check below counts, as one character at a time would go).
            &rest[..run
                .min((MAX_TEXT_CHARS + 1).saturating_sub(chars + usize::from(pending_space)))
                .max(1)]
        } else {
            &rest[..c.len_utf8()]
        };
        rest = &rest[visible.len()..];
        if run == 0 && (is_bidi_control(c) || is_zero_width(c)) {
            continue;
        }
        if run == 0 && (c.is_whitespace() || c.is_control()) {
            pending_space = chars > 0;
            continue;
        }
        if pending_space {
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push_str(visible);
        chars += if run > 0 { visible.len() } else { 1 };
        if chars > MAX_TEXT_CHARS {
            break;
        }
    }
    if chars <= MAX_TEXT_CHARS {
        return out;
    }
    // The first `MAX_TEXT_CHARS - 1` characters, cut in place.
    let end = (out.char_indices().nth(MAX_TEXT_CHARS - 1)).map_or(out.len(), |(i, _)| i);
    out.truncate(grapheme_cut(&out, end));
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// Where to cut `s` at or before byte `end` so that no user-perceived character is split: an
/// accent from its letter ("e" + U+0301), a skin tone or a joined emoji from its base, one
/// half of a flag. `end` itself when the first character would be all that is left ahead
/// of it (a letter under hundreds of combining marks is cut where it stands). `s` must
/// hold the character after `end`: it decides whether a boundary falls there.
fn grapheme_cut(s: &str, end: usize) -> usize {
    s.grapheme_indices(true)
        .map(|(i, _)| i)
        .take_while(|&i| i <= end)
        .last()
        .filter(|&i| i > 0)
        .unwrap_or(end)
}

/// Characters that take no space and say nothing: the zero-width space, the word joiner and
/// the zero-width no-break space (a byte-order mark). Pasted in from a web page or an editor,
/// they would make a lesson differ, invisibly, from the same words typed. The zero-width
/// joiner and non-joiner are kept: emoji sequences and Persian spelling need them.
fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200b}' | '\u{2060}' | '\u{feff}')
}

/// U+202A–U+202E (embeddings, overrides) and U+2066–U+2069 (isolates).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Already what `text` makes of it: printable ASCII, single spaces, none at either end, and
/// short enough. Most recorded texts are, and skip the character-by-character copy.
fn is_clean_line(raw: &str) -> bool {
    let b = raw.as_bytes();
    if b.len() > MAX_TEXT_CHARS || b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return false;
    }
    // Eight bytes at a time: every text of every record is asked this.
    let mut words = b.chunks_exact(8);
    let mut after_space = false;
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        let spaces = zero_bytes(w ^ (ONES * u64::from(b' ')));
        let doubled = spaces & (spaces << 8) != 0 || (after_space && spaces & 0x80 != 0);
        if !printable_ascii(w) || doubled {
            return false;
        }
        after_space = spaces >> 63 != 0;
    }
    for &c in words.remainder() {
        if !(0x20..0x7f).contains(&c) || (after_space && c == b' ') {
            return false;
        }
        after_space = c == b' ';
    }
    true
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// The high bit of each zero byte of `w`, and no other bit (no borrow crosses bytes).
fn zero_bytes(w: u64) -> u64 {
    !(((w & !HIGH) + !HIGH) | w | !HIGH)
}

/// Every byte of `w` in 0x20..0x7f. A byte below 0x20 leaves its high bit set after the
/// subtraction (a borrow only flows up from such a byte); one above 0x7e has it set after
/// adding one, or before (a carry only flows up from 0xff).
fn printable_ascii(w: u64) -> bool {
    let below = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let above = (w.wrapping_add(ONES) | w) & HIGH;
    below | above == 0
}

/// Normalises every record in place: valid domains stay in `domains`, refused ones move to
/// `refused_domains` (with an `invalid-domain` diagnostic); texts are normalised; projects
/// become digests; secrets become redaction markers; label arguments (`policy.label_args`:
/// Claude Code's `description`, Cursor's `explanation`) are dropped from every call, so no
/// later stage compares, keys or shows them.
pub fn normalize(corpus: &mut Corpus, rules: &Rules, sink: &mut Sink) {
    let labels = rules.policy.label_matcher();
    let exp_diags: Vec<Sink> = corpus
        .experiences
        .par_iter_mut()
        .map(|e| normalize_experience(e, rules, &labels))
        .collect();
    let claim_diags: Vec<Sink> = corpus
        .claims
        .par_iter_mut()
        .map(|c| normalize_claim(c, rules))
        .collect();
    sink.extend(exp_diags.into_iter().flatten());
    sink.extend(claim_diags.into_iter().flatten());
}

/// A record id that looks like a secret becomes `[redacted: <pattern>] <digest of file:line>`:
/// still unique, still stable, and never the secret.
pub fn safe_id(id: &str, loc: &SourceLoc, secrets: &SecretScanner) -> Option<String> {
    let pattern = secrets.find(id)?;
    let place = format!("{}\0{}", loc.file, loc.line);
    Some(format!("{} {}", marker(pattern), digest::short(place.as_bytes())))
}

/// The id to put in a diagnostic's subject: `<redacted>` for an id that carries a marker.
pub fn subject_id(id: &str) -> &str {
    if redacted_pattern(id).is_some() {
        "<redacted>"
    } else {
        id
    }
}

/// Redacts in place; true when something was redacted.
fn scrub(s: &mut String, secrets: &SecretScanner) -> bool {
    match secrets.redact(s) {
        Some((clean, _)) => {
            *s = clean;
            true
        }
        None => false,
    }
}

/// A gotcha written as a Markdown list in one string ("- a\n- b\n- c", as some agents record
/// `gotchas`) is one trap per item: joined into one line it would be a watch rule no single
/// trap ever clusters with. Anything else is kept whole.
fn list_items(g: String) -> Vec<String> {
    fn item(line: &str) -> Option<&str> {
        let t = line.trim_start();
        for marker in ["- ", "* ", "+ ", "• "] {
            if let Some(rest) = t.strip_prefix(marker) {
                return Some(rest);
            }
        }
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        (1..=3)
            .contains(&digits)
            .then(|| t[digits..].strip_prefix(". ").or(t[digits..].strip_prefix(") ")))?
    }
    let lines: Vec<&str> = g.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.iter().map(|l| item(l)).collect::<Option<Vec<&str>>>() {
        Some(items) if items.len() > 1 => items.into_iter().map(String::from).collect(),
        _ => vec![g],
    }
}

/// Redacts, then `text()`, in place: a text that is clean already is neither copied nor
/// moved. False when nothing is left of it.
fn clean_in_place(s: &mut String, secrets: Option<&SecretScanner>) -> bool {
    if let Some(secrets) = secrets {
        scrub(s, secrets);
    }
    // Most texts are one clean line: one line, so `delist` would only look at its start.
    if is_clean_line(s) && list_marker(s).is_none() {
        return !s.is_empty();
    }
    // As `text` does: a list's markers go before the collapse would keep them ("- Use …").
    if let Some(items) = delist(s) {
        *s = collapse(&items);
    } else if !is_clean_line(s) {
        *s = collapse(s);
    }
    !s.is_empty()
}

fn clean_opt(field: &mut Option<String>, secrets: Option<&SecretScanner>) {
    if !field.as_mut().is_some_and(|s| clean_in_place(s, secrets)) {
        *field = None;
    }
}

/// Whether `scrub_value` would redact anything in `v` (a call is fingerprinted only then).
fn holds_secret(v: &Value, secrets: &SecretScanner) -> bool {
    match v {
        Value::String(s) => secrets.redact(s).is_some(),
        Value::Array(items) => items.iter().any(|i| holds_secret(i, secrets)),
        Value::Object(map) => map.values().any(|i| holds_secret(i, secrets)),
        _ => false,
    }
}

/// Redacts every string inside `v`; true when something was redacted.
fn scrub_value(v: &mut Value, secrets: &SecretScanner) -> bool {
    match v {
        Value::String(s) => scrub(s, secrets),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |any, i| scrub_value(i, secrets) | any),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |any, i| scrub_value(i, secrets) | any),
        _ => false,
    }
}

fn project_digest(project: &Option<String>) -> Option<String> {
    let p = project.as_deref()?.trim();
    (!p.is_empty()).then(|| digest::project(p))
}

/// Splits raw domains into valid (aliased, deduplicated, first-seen order) and refused
/// (escaped, deduplicated), with one `invalid-domain` per refused domain. `secrets` is `None`
/// when the record is known to carry none. Past `caps.record_domains` distinct domains (valid
/// or refused: both make candidates) the rest are ignored, with one `too-many-domains`.
fn split_domains(
    raw: &[String],
    id: &str,
    loc: &SourceLoc,
    rules: &Rules,
    secrets: Option<&SecretScanner>,
    diags: &mut Sink,
) -> (Vec<String>, Vec<String>) {
    let max = rules.policy.caps.record_domains;
    let mut valid = Vec::new();
    let mut refused = Vec::new();
    let mut ignored = Vec::new();
    // Every distinct name met: a valid domain, or a refused one as shown (never valid). A
    // valid one is borrowed (from `raw` or the aliases) unless folding changed it.
    let mut seen = Seen::default();
    // Several tags written in one string ("python, django") are each a domain, as OmniMem's
    // `tags` are read; a comma is never part of a valid domain. A string that looks like a
    // secret is refused whole, never cut into pieces the scanner might not recognise.
    let names = raw.iter().flat_map(|r| {
        let split = r.contains(',') && secrets.and_then(|s| s.find(r)).is_none();
        let parts = split.then(|| r.split(',').filter(|p| !p.trim().is_empty()));
        parts.into_iter().flatten().chain((!split).then_some(r.as_str()))
    });
    // "TypeScript/React" names two domains the table knows, and is one of neither; a name
    // with a `/` the table does not know as a whole or in every part ("ci/cd" is an alias,
    // "tcp/ip" and "../etc" are neither) stays one name and is refused as written.
    let names = names.flat_map(|r| {
        let split = r.contains('/')
            && secrets.and_then(|s| s.find(r)).is_none()
            && domain_borrowed(r, &rules.aliases).is_err()
            && r.split('/').all(|p| rules.aliases.knows(p));
        let parts = split.then(|| r.split('/'));
        parts.into_iter().flatten().chain((!split).then_some(r))
    });
    for r in names {
        let full = valid.len() + refused.len() >= max;
        let (shown, message, why) = if let Some(pattern) = secrets.and_then(|s| s.find(r)) {
            let shown = marker(pattern);
            let message = format!("domain looks like a secret ({pattern}) and was refused");
            (shown, message, format!("matches secret pattern {pattern}"))
        } else {
            match domain_borrowed(r, &rules.aliases) {
                Ok(d) => match reserved(&d) {
                    None => {
                        if seen.insert(d.clone()) {
                            if full { &mut ignored } else { &mut valid }.push(d.into_owned());
                        }
                        continue;
                    }
                    Some(why) => {
                        let message = format!("domain \"{d}\" is refused: {why}");
                        (d.into_owned(), message, why)
                    }
                },
                Err(why) => {
                    let shown = display_escape(r);
                    let message = format!("domain \"{shown}\" is not a valid skill name: {why}");
                    (shown, message, why)
                }
            }
        };
        if !seen.insert(Cow::Owned(shown.clone())) {
            continue;
        }
        if full {
            ignored.push(shown);
            continue;
        }
        diags.push(
            Diagnostic::new(codes::INVALID_DOMAIN, message)
                .subject(subject_id(id))
                .at(loc)
                .domain(shown.clone())
                .with("domain", shown.clone())
                .with("reason", why)
                .experiences([id]),
        );
        refused.push(shown);
    }
    if !ignored.is_empty() {
        let named = seen.len();
        diags.push(
            Diagnostic::new(
                codes::TOO_MANY_DOMAINS,
                format!(
                    "record names {named} domains and one record compiles into at most {max}; {} are ignored: {}",
                    ignored.len(),
                    short_list(&ignored, 3)
                ),
            )
            .subject(subject_id(id))
            .at(loc)
            .with("domains", named)
            .with("ignored", ignored)
            .with("record_domains", max)
            .experiences([id]),
        );
    }
    (valid, refused)
}

/// The distinct names `split_domains` has met. Most records name one domain: the first name
/// is kept aside, so they build no set (its node and walk were about an eighth of the split).
#[derive(Default)]
struct Seen<'a> {
    first: Option<Cow<'a, str>>,
    rest: BTreeSet<Cow<'a, str>>,
}

impl<'a> Seen<'a> {
    /// Whether `name` is new, as `BTreeSet::insert` says.
    fn insert(&mut self, name: Cow<'a, str>) -> bool {
        match &self.first {
            None => {
                self.first = Some(name);
                true
            }
            Some(first) if *first == name => false,
            Some(_) => self.rest.insert(name),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
}

fn normalize_experience(e: &mut Experience, rules: &Rules, labels: &LabelArgs) -> Sink {
    let mut diags = Sink::new();
    // Almost no record carries a secret: one scan over all its texts says so, and spares a
    // scan per text and a parse of every call's arguments. The arguments are scanned as JSON
    // text, which holds each of their strings verbatim unless it has an escape.
    let args_escaped = e.operations.iter().any(|op| op.args.text().contains('\\'));
    let secrets = (args_escaped || rules.secrets.may_hold(record_texts(e))).then_some(&rules.secrets);
    if let Some(id) = secrets.and_then(|s| safe_id(&e.id, &e.source, s)) {
        e.id = id.into();
    }
    let raw = std::mem::take(&mut e.domains);
    let mut refused_before = std::mem::take(&mut e.refused_domains);
    let (valid, refused) = split_domains(&raw, &e.id, &e.source, rules, secrets, &mut diags);
    e.domains = valid;
    refused_before.extend(refused);
    e.refused_domains = refused_before;
    e.project = project_digest(&e.project);
    clean_opt(&mut e.words.task, secrets);
    clean_opt(&mut e.words.lesson, secrets);
    clean_opt(&mut e.words.breakthrough, secrets);
    clean_opt(&mut e.words.content, secrets);
    if e.words.gotchas.iter().any(|g| g.contains('\n')) {
        e.words.gotchas = std::mem::take(&mut e.words.gotchas)
            .into_iter()
            .flat_map(list_items)
            .collect();
    }
    e.words.gotchas.retain_mut(|g| clean_in_place(g, secrets));
    e.words.dead_ends.retain_mut(|d| {
        clean_opt(&mut d.kind, secrets);
        clean_opt(&mut d.reason, secrets);
        clean_in_place(&mut d.name, secrets)
    });
    for op in &mut e.operations {
        // A call is parsed only when its text names a label argument or the record may hold a
        // secret (which includes every record whose arguments hold an escape, so a label key
        // spelled with one is caught too); written back only when something was removed.
        if secrets.is_none() && !labels.may_carry(op.args.text()) {
            continue;
        }
        let mut args = op.args.value();
        let mut changed = rules.policy.strip_label_args(&mut args);
        if let Some(secrets) = secrets
            && holds_secret(&args, secrets)
        {
            // The call as mechanical lessons compare it, before its secrets go; a collision
            // only takes a changed secret for the same one.
            let written = rules.policy.call_form(&args).to_string();
            op.secret_print = (crate::cluster::fx::fingerprint(&written) as u32).max(1);
            changed |= scrub_value(&mut args, secrets);
        }
        if changed {
            op.args = Args::from_value(&args);
        }
    }
    // Copied lesson ids are made plain in every record, not only in those that may hold a secret.
    for id in &mut e.in_play {
        if let Some(p) = secrets.and_then(|s| s.find(id)) {
            *id = marker(p);
        } else if let Some(canonical) = lesson_id_as_copied(id) {
            *id = canonical;
        }
    }
    let Some(secrets) = secrets else {
        return diags;
    };
    for op in &mut e.operations {
        if let Some(err) = &mut op.error {
            scrub(err, secrets);
        }
        if let Some(check) = &mut op.check {
            scrub(&mut check.label, secrets);
            if let Some(t) = &mut check.target {
                scrub(t, secrets);
            }
        }
    }
    diags
}

/// A lesson id as an agent copied it from a block or a SKILL.md bullet, when it is not exactly
/// the id: stray whitespace or backticks, the `(id: …)` around it, an upper-case hex digit or a
/// lower-case `l`. `None` when `id` is already plain (the usual case: no allocation) or is no
/// lesson id at all (an unknown id stays as written, for S005 to quote).
pub fn lesson_id_as_copied(id: &str) -> Option<String> {
    if crate::digest::is_lesson_id(id) {
        return None;
    }
    let bare = id
        .trim()
        .trim_matches('`')
        .trim_start_matches('(')
        .trim_end_matches(')');
    let bare = bare.strip_prefix("id:").unwrap_or(bare).trim();
    let canonical = match bare.split_at_checked(1) {
        Some((l, hex)) if l.eq_ignore_ascii_case("l") => format!("L{}", hex.to_ascii_lowercase()),
        _ => return None,
    };
    crate::digest::is_lesson_id(&canonical).then_some(canonical)
}

/// Every text of a record that normalize scans for secrets (the arguments as JSON text).
fn record_texts(e: &Experience) -> impl Iterator<Item = &str> {
    fn opt(o: &Option<String>) -> Option<&str> {
        o.as_deref()
    }
    let texts = [
        opt(&e.words.task),
        opt(&e.words.lesson),
        opt(&e.words.breakthrough),
        opt(&e.words.content),
    ];
    let dead_ends = e
        .words
        .dead_ends
        .iter()
        .flat_map(|d| [Some(d.name.as_str()), opt(&d.kind), opt(&d.reason)]);
    let operations = e.operations.iter().flat_map(|op| {
        let check = op.check.as_deref();
        [
            Some(op.args.text()),
            opt(&op.error),
            check.map(|c| c.label.as_str()),
            check.and_then(|c| c.target.as_deref()),
        ]
    });
    let plain = std::iter::once(&*e.id)
        .chain(e.domains.iter().map(String::as_str))
        .chain(e.words.gotchas.iter().map(String::as_str))
        .chain(e.in_play.iter().map(String::as_str));
    plain.chain(texts.into_iter().chain(dead_ends).chain(operations).flatten())
}

fn normalize_claim(c: &mut LessonClaim, rules: &Rules) -> Sink {
    let secrets = &rules.secrets;
    let mut diags = Sink::new();
    if let Some(id) = safe_id(&c.id, &c.loc, secrets) {
        c.id = id.into();
    }
    let raw = std::mem::take(&mut c.domains);
    let (valid, refused) = split_domains(&raw, &c.id, &c.loc, rules, Some(secrets), &mut diags);
    c.domains = valid;
    c.refused_domains.extend(refused);
    c.project = project_digest(&c.project);
    clean_in_place(&mut c.text, Some(secrets));
    c.operation_key = c.operation_key.as_deref().and_then(|k| {
        let k = match secrets.redact(k) {
            Some((clean, _)) => clean,
            None => k.to_string(),
        };
        let k = k.trim();
        (!k.is_empty()).then(|| k.to_string())
    });
    let ended = c.ended.iter_mut().map(|e| &mut e.by);
    for id in c.evidence.iter_mut().chain(ended) {
        if let Some(p) = secrets.find(id) {
            *id = marker(p).into();
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    #[test]
    fn skill_names_are_what_the_pattern_says() {
        let pattern = regex::Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap();
        let names = [
            "python",
            "github-actions",
            "k8s",
            "c99",
            "a",
            "0",
            "",
            "-",
            "--",
            "-go",
            "go-",
            "go--lang",
            "Go",
            "go lang",
            "go_lang",
            "go.lang",
            "go\n",
            "\ngo",
            "caf\u{e9}",
            "go-\u{2010}",
            "1-2-3",
            "a-b-c-d-e",
            "x--",
            "--x",
            "ab-\u{0}",
        ];
        for n in names {
            assert_eq!(super::is_skill_name(n), pattern.is_match(n), "{n:?}");
        }
    }

    use super::*;

    /// A gotchas string written as a list is one trap per item; prose with line breaks, or a
    /// list mixed with prose, stays whole.
    #[test]
    fn a_gotcha_written_as_a_list_is_one_trap_per_item() {
        let list = "- `go test ./...` skips packages with build tags\n- grpc-gateway v2 drops unknown JSON fields\n\n* `buf lint` needs the module root as cwd";
        assert_eq!(
            list_items(list.into()),
            [
                "`go test ./...` skips packages with build tags",
                "grpc-gateway v2 drops unknown JSON fields",
                "`buf lint` needs the module root as cwd"
            ]
        );
        assert_eq!(
            list_items("1. migrations lock the table\n2) backfills time out".into()).len(),
            2
        );
        for whole in [
            "pytest -x stops at the first failure,\nso later failures stay hidden",
            "Two traps:\n- a\n- b",
            "- only one item",
            "-v is not --verbose here\n-q is quiet",
        ] {
            assert_eq!(list_items(whole.into()), [whole], "{whole:?}");
        }
    }

    /// In_play ids copied by hand or by an agent from a block line still name their lesson.
    #[test]
    fn in_play_ids_as_copied_name_their_lesson() {
        for (written, id) in [
            (" L3231049e163b", Some("L3231049e163b")),
            ("L3231049e163b\n", Some("L3231049e163b")),
            ("`L3231049e163b`", Some("L3231049e163b")),
            ("(id: L3231049e163b)", Some("L3231049e163b")),
            ("l3231049E163B", Some("L3231049e163b")),
            ("L3231049e163b", None),
            ("lesson-7", None),
            (" L3231049e163 ", None),
        ] {
            assert_eq!(lesson_id_as_copied(written).as_deref(), id, "{written:?}");
        }
    }
    use crate::model::{Check, DeadEnd, Kind, OpStatus, Operation, Outcome};
    use serde_json::json;

    #[test]
    fn clean_lines_skip_the_copy_and_come_out_as_the_slow_path_makes_them() {
        let long = "Pin the terraform provider version in required_providers. ".repeat(5);
        let samples = [
            "Run go vet before go test; it catches printf mistakes the tests miss.",
            "  leading and trailing spaces  ",
            "two  spaces inside",
            "tab\there and a newline\nthere",
            "non-breaking\u{a0}space and an em dash — kept",
            "bell\u{7}and escape\u{1b}[31m",
            "",
            "   ",
            long.trim_end(),
            &long[..240],
            &long[..241],
        ];
        for s in samples {
            assert_eq!(text(s), collapse(s), "{s:?}");
        }
        assert!(is_clean_line(samples[0]));
        assert!(!is_clean_line(samples[3]));
        // Eight bytes at a time, as the plain definition reads: each odd byte at each place,
        // and two spaces at each place (across a word's edge too).
        let plain = |s: &str| {
            let b = s.as_bytes();
            b.len() <= MAX_TEXT_CHARS
                && b.first() != Some(&b' ')
                && b.last() != Some(&b' ')
                && b.iter().all(|c| (0x20..0x7f).contains(c))
                && !s.contains("  ")
        };
        let base = "abcdefghijklmnopqrstuvwxyz0123456789";
        for len in 0..base.len() {
            for at in 0..=len {
                for odd in [
                    "\u{0}", "\u{1f}", " ", "  ", "\u{7f}", "~", "!", "\u{e9}", "\u{ff}", "\t",
                ] {
                    let s = format!("{}{odd}{}", &base[..at], &base[at..len]);
                    assert_eq!(is_clean_line(&s), plain(&s), "{s:?}");
                }
            }
        }
        assert_eq!(is_clean_line(&long[..240]), plain(&long[..240]));
        assert_eq!(is_clean_line(&long[..241]), plain(&long[..241]));
        assert!(!is_clean_line(samples[4]), "non-ASCII takes the slow path");
        assert!(text(long.trim_end()).ends_with('…'));
        // An override that would show `rm -rf /tmp/cache` as something else, and an isolate,
        // are dropped; the Hebrew and Arabic words themselves stay.
        assert_eq!(
            text("Clear the cache with \u{202e}rm -rf /tmp/cache\u{202c} before the build."),
            "Clear the cache with rm -rf /tmp/cache before the build."
        );
        assert_eq!(
            text("Set the locale to \u{2067}עברית\u{2069} or العربية explicitly."),
            "Set the locale to עברית or العربية explicitly."
        );
        assert_eq!(text(&long[..240]), long[..240].trim_end());
    }

    fn rules() -> Rules {
        Rules::builtin()
    }

    fn norm(raw: &str) -> Result<String, String> {
        domain(raw, &rules().aliases)
    }

    #[test]
    fn domains_fold_alias_and_validate() {
        // One technology however it is tagged: the folded `node-js` is aliased like `nodejs`.
        for node in ["Node.js", "Node.JS", "node_js", "nodejs", "NodeJS"] {
            assert_eq!(norm(node).unwrap(), "node", "{node}");
        }
        assert_eq!(norm(" Py ").unwrap(), "python");
        assert_eq!(norm("python3").unwrap(), "python");
        assert_eq!(norm("K8s").unwrap(), "kubernetes");
        assert_eq!(norm("TS").unwrap(), "typescript");
        assert_eq!(norm("PostgreSQL").unwrap(), "postgres");
        assert_eq!(norm("golang").unwrap(), "go");
        assert_eq!(norm("github_actions").unwrap(), "github-actions");
        assert_eq!(norm("Machine   Learning").unwrap(), "machine-learning");
        assert_eq!(norm("C#").unwrap(), "csharp");
        assert_eq!(norm(".NET").unwrap(), "dotnet");
        assert_eq!(norm("x".repeat(64).as_str()).unwrap(), "x".repeat(64));
    }

    #[test]
    fn a_trailing_version_folds_into_the_name_the_table_knows() {
        // As teams tag their work: the version after a name the aliases know is dropped.
        for (raw, want) in [
            ("Python 3", "python"),
            ("python3.12", "python"),
            ("Python 3.12", "python"),
            ("Node.js 20", "node"),
            ("node-v20", "node"),
            ("Postgres 16", "postgres"),
            ("postgresql 15", "postgres"),
            ("k8s-v1.29", "kubernetes"),
            ("C++17", "cpp"),
            (".NET 8", "dotnet"),
            ("CI/CD", "ci-cd"),
            ("ci / cd", "ci-cd"),
            ("shell script", "shell"),
            ("ASP.NET Core", "asp-net-core"),
            ("aspnetcore", "asp-net-core"),
            // Glued to a known name of three letters or more.
            ("node20", "node"),
            ("Vue3", "vue"),
            ("react18", "react"),
            ("java17", "java"),
            ("postgres15", "postgres"),
            ("dotnet8", "dotnet"),
            ("ruby3.2", "ruby"),
            ("terraform1.5", "terraform"),
            ("nodejs18", "node"),
            ("go1.22", "go"),
        ] {
            assert_eq!(norm(raw).as_deref(), Ok(want), "{raw}");
        }
        // Digits of a name's own, or after a name nobody listed, stay: a name is never
        // shortened into another one.
        for own in [
            "s3",
            "ec2",
            "k3s",
            "web3",
            "i18n",
            "oauth2",
            "http2",
            "utf-8",
            "sha-256",
            "angular-17",
            "tf2",
            "pg15",
            "c99",
            "css3",
            "ubuntu22-04",
        ] {
            assert_eq!(norm(own).as_deref(), Ok(own), "{own}");
        }
        assert_eq!(norm("AWS S3").as_deref(), Ok("aws-s3"));
    }

    /// `collapse` as it was, a character at a time: what the runs must come out as.
    fn collapse_by_char(raw: &str) -> String {
        let mut out = String::new();
        let mut chars = 0usize;
        let mut pending_space = false;
        for c in raw.chars() {
            if is_bidi_control(c) {
                continue;
            }
            if c.is_whitespace() || c.is_control() {
                pending_space = chars > 0;
                continue;
            }
            if pending_space {
                out.push(' ');
                chars += 1;
                pending_space = false;
            }
            out.push(c);
            chars += 1;
            if chars > MAX_TEXT_CHARS {
                break;
            }
        }
        if chars <= MAX_TEXT_CHARS {
            return out;
        }
        let mut cut: String = out.chars().take(MAX_TEXT_CHARS - 1).collect();
        cut.truncate(cut.trim_end().len());
        cut.push('…');
        cut
    }

    #[test]
    fn collapse_by_runs_is_collapse_by_char() {
        // Words, spaces and breaks of every kind, non-ASCII letters and punctuation, bidi
        // marks and controls, at every length around the cut and the space before it.
        let pieces = [
            "word",
            " ",
            "  ",
            "\n",
            "\t\r\n ",
            "é",
            "—",
            "…",
            "\u{202e}",
            "\u{2067}",
            "\u{0}",
            "\u{1b}[31m",
            "x",
            "ab",
            "\u{a0}",
            "naïve",
            "語",
            "-",
            "1.",
        ];
        let mut seed = 7u64;
        let mut texts = vec![String::new(), " ".into(), "\u{202e}".into()];
        for len in 0..400 {
            let mut t = String::new();
            while t.chars().count() < len {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            texts.push(t);
        }
        for width in [
            MAX_TEXT_CHARS - 2,
            MAX_TEXT_CHARS - 1,
            MAX_TEXT_CHARS,
            MAX_TEXT_CHARS + 1,
        ] {
            for tail in ["", " ", "  x", " xy", "é", " é", "\u{202e}x", "xxxx"] {
                texts.push(format!("{}{tail}", "a".repeat(width)));
                texts.push(format!("{} {tail}", "ab ".repeat(width / 3)));
                texts.push(format!("é{}{tail}", "a".repeat(width - 1)));
            }
        }
        for t in &texts {
            assert_eq!(collapse(t), collapse_by_char(t), "{t:?}");
        }
    }

    #[test]
    fn seen_names_are_told_apart_as_a_set_tells_them() {
        // The first name apart, the rest in a set; repeats of both.
        let names: Vec<String> = (0..40).map(|i| format!("d{}", (i * 7) % 23)).collect();
        for n in [0, 1, 2, 3, 24, names.len()] {
            let mut seen = Seen::default();
            let mut set = BTreeSet::new();
            for name in &names[..n] {
                let cow = Cow::Borrowed(name.as_str());
                assert_eq!(seen.insert(cow.clone()), set.insert(cow), "{name} after {n}");
                assert_eq!(seen.len(), set.len());
            }
        }
    }

    #[test]
    fn domains_refused() {
        for bad in [
            "../etc",
            "a/b",
            "",
            "   ",
            "-lead",
            "trail-",
            "a--b",
            "ünïcode",
            "c++x",
        ] {
            assert!(norm(bad).is_err(), "{bad:?} should be refused");
        }
        let long = "a".repeat(65);
        assert!(norm(&long).unwrap_err().contains("64"));
        assert_eq!(norm("").unwrap_err(), "is empty");
    }

    #[test]
    fn a_list_written_as_lines_becomes_one_line_of_items() {
        assert_eq!(
            text("- Pin actions to SHAs\n- Set permissions: read-all\n- Use OIDC for cloud creds"),
            "Pin actions to SHAs; Set permissions: read-all; Use OIDC for cloud creds"
        );
        assert_eq!(
            text("Two things:\n1. use `npm ci` in CI\n2) cache ~/.npm keyed on package-lock.json."),
            "Two things: use `npm ci` in CI; cache ~/.npm keyed on package-lock.json."
        );
        assert_eq!(text("- bumped vite to 5.2"), "bumped vite to 5.2");
        assert_eq!(text("• Restart the pod."), "Restart the pod.");
        // Not markers: a flag, a number, a dash inside a sentence, a wrapped line.
        assert_eq!(text("--locked keeps Cargo.lock"), "--locked keeps Cargo.lock");
        assert_eq!(text("2.5 GB is the limit"), "2.5 GB is the limit");
        assert_eq!(
            text("Use -q\nwith pytest - always"),
            "Use -q with pytest - always"
        );
    }

    #[test]
    fn text_collapses_and_cuts() {
        assert_eq!(text("  Run\tpytest\n\n  with -q \r\n"), "Run pytest with -q");
        assert_eq!(text("a\u{1b}[31mb"), "a [31mb");
        assert_eq!(text(" \n\t "), "");
        let exact = "é".repeat(240);
        assert_eq!(text(&exact), exact);
        let long = "é".repeat(241);
        let cut = text(&long);
        assert_eq!(cut.chars().count(), 240);
        assert!(cut.ends_with('…'));
        assert!(cut.starts_with("éé"));
        // A cut that lands after a space does not leave it dangling before the ellipsis.
        let words = format!("{} tail", "w".repeat(238));
        assert_eq!(text(&words), format!("{}…", "w".repeat(238)));
        let many = "word ".repeat(1000);
        assert_eq!(text(&many).chars().count(), 240);
    }

    #[test]
    fn a_cut_splits_no_grapheme() {
        let head = "w".repeat(237);
        // A family emoji, a flag, a skin tone and an accent that straddle character 239 go
        // whole; a grapheme that ends before it stays.
        for (tail, kept) in [
            (
                " \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} family",
                head.clone(),
            ),
            (" \u{1f1e9}\u{1f1ea} flag", head.clone()),
            (" \u{1f44d}\u{1f3fd} thumbs", head.clone()),
            ("xe\u{301}\u{301} accent", format!("{head}x")),
            (" ab tail", format!("{head} a")),
        ] {
            assert_eq!(text(&format!("{head}{tail}")), format!("{kept}…"), "{tail}");
        }
        // Two flags (four regional indicators) are cut between them, not inside the second.
        let flags = format!("{} \u{1f1e9}\u{1f1ea}\u{1f1eb}\u{1f1f7} flags", &head[2..]);
        assert_eq!(text(&flags), format!("{} \u{1f1e9}\u{1f1ea}…", &head[2..]));
        // A letter under more marks than the cut holds is cut where it stands.
        let zalgo = format!("e{}", "\u{301}".repeat(300));
        assert_eq!(text(&zalgo).chars().count(), 240);
    }

    #[test]
    fn zero_width_spaces_are_dropped_and_joiners_kept() {
        assert_eq!(
            text("futures\u{200b}: clone\u{2060} an Arc\u{feff}"),
            "futures: clone an Arc"
        );
        let family =
            "\u{1f468}\u{200d}\u{1f469} and \u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}";
        assert_eq!(text(family), family);
    }

    #[test]
    fn secrets_found() {
        let s = &rules().secrets;
        let cases = [
            (
                "export OPENAI_API_KEY=sk-proj-4fJd8s9QwErTyUiOpAsDfGhJkLzXcVbNm12",
                "openai-key",
            ),
            ("key sk-aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW", "openai-key"),
            (
                "git push https://ghp_R2d2C3poX9yZ8wV7uT6sR5qP4oN3mL2kJ1iH@github.com/a/b",
                "github-token",
            ),
            (
                "GH_TOKEN github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
                "github-token",
            ),
            ("aws_access_key_id AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
            ("slack xoxb-1234567890-0987654321-AbCdEfGhIjKl", "slack-token"),
            ("glpat-Xy9_zW8vU7tS6rQ5pO4n", "gitlab-token"),
            (
                "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijk'",
                "bearer-token",
            ),
            ("-----BEGIN RSA PRIVATE KEY-----", "private-key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "private-key"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            ("db password: hunter2hunter2", "credential-assignment"),
            (
                "set api_key = 'a8f5f167f44f4964e6c998dee827110c'",
                "credential-assignment",
            ),
            ("token=abcdef123456", "credential-assignment"),
            ("PASSWD=correcthorse", "credential-assignment"),
            (
                "DATABASE_URL=postgres://app:s3cr3tpw@db.internal:5432/app",
                "url-credentials",
            ),
            // Prefixed names, as environment variables are written.
            (
                "DB_PASSWORD=Tr0ub4dor3xyz alembic upgrade head",
                "credential-assignment",
            ),
            (
                "PGPASSWORD=Tr0ub4dor3xyz psql -h db -U app",
                "credential-assignment",
            ),
            (
                "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
                "credential-assignment",
            ),
            (
                "MYSQL_ROOT_PASSWORD=rootpass123 docker compose up",
                "credential-assignment",
            ),
            // JSON and YAML keys, as config snippets are quoted.
            (
                r#"write {"username": "deploy", "password": "Tr0ub4dor&3"} to creds.json"#,
                "credential-assignment",
            ),
            (
                "curl -H 'Authorization: Basic ZGVwbG95OnMzY3IzdA=='",
                "basic-auth",
            ),
            // Flags with their value.
            (
                "docker login -u ci --password hunter2SuperSecret! registry.example.com",
                "credential-flag",
            ),
            (
                "aws configure set --secret-access-key wJalrXUtnFEMI/K7MDENG",
                "credential-flag",
            ),
            ("vault login --token hvs.CAESIJ3kq9ZrT", "credential-flag"),
            // Passwords a client takes glued to a flag or after a user name.
            (
                "mysql -u root -pTr0ub4dor3xyz -e 'show tables'",
                "command-password",
            ),
            (
                "docker login -u ci -p Hunter22 registry.example.com",
                "command-password",
            ),
            ("sshpass -p 'Tr0ub4dor3' ssh deploy@web1", "command-password"),
            (
                "curl -fsS -u admin:Tr0ub4dor3xyz https://ci.example.com/api",
                "command-password",
            ),
            (
                "twine upload -u __token__ -p hunter2hunter2 dist/*",
                "command-password",
            ),
            (
                "redis-cli -h redis.internal -a Xk9pL2vQ7rT ping",
                "command-password",
            ),
            (
                "mongosh --host db -u admin -p Tr0ub4dor3 --authenticationDatabase admin",
                "command-password",
            ),
            (
                "sqlcmd -S db -U sa -P Tr0ub4dor3! -Q 'select 1'",
                "command-password",
            ),
            (
                "ldapsearch -x -D cn=admin,dc=acme -w Tr0ub4dor3 -b dc=acme",
                "command-password",
            ),
            (
                "openssl pkcs12 -in cert.p12 -passin pass:Tr0ub4dor3 -nodes",
                "command-password",
            ),
            ("smbclient //files/share -U admin%Tr0ub4dor3", "command-password"),
            (
                "TWINE_REPOSITORY=pypi publish with pypi-AgEIcHlwaS5vcmcCJGQ4ZjM2YjE4LWRiNzYtNDkxZS04ZTBh",
                "pypi-token",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(s.find(text), Some(want), "{text}");
        }
    }

    #[test]
    fn secrets_false_positives_not_found() {
        let s = &rules().secrets;
        for text in [
            "Pin scikit-learn below 1.5; sk-learn is a common misspelling of the package",
            "sk-learn-is-not-the-package-name-use-scikit-learn",
            "Wait for the password prompt before sending input to ssh",
            "The rate limiter is a token bucket refilled every second",
            "Use a token from the vault instead of hard-coding one",
            "Set max_tokens: 4096 for long completions",
            "Read the password from ${DB_PASSWORD} rather than the config file",
            "api_key = os.environ[\"OPENAI_API_KEY\"] keeps the key out of the repo",
            "token: <your-token>",
            "password: ********",
            "Use Bearer authentication for the internal API",
            "ssh -i ~/.ssh/id_ed25519 git@github.com:org/repo.git",
            "postgres://localhost:5432/app has no credentials",
            "the task-scheduler-and-disk-partitioner run nightly",
            "AKIA is the prefix of AWS access key ids",
            "docker login -u ci --password-stdin registry.example.com",
            "Use --token instead of --password for the registry login",
            "gh auth login --with-token < token.txt; never pass --token-file to CI logs",
            "docker login -u ci --password \"$REGISTRY_PASSWORD\" registry.example.com",
            "mysql -u root -p --port 3306 app",
            "curl -u \"$CI_USER:$CI_TOKEN\" https://ci.example.com/api",
            "Set password: required in the form schema",
            "Read PGPASSWORD from ~/.pgpass instead of putting it on the command line",
            "mkdir -p build && cmake -S . -B build",
            "redis-cli -h redis.internal -p 6380 ping",
            "Publish to pypi-test-server first, then to pypi",
            "twine upload -p \"$PYPI_TOKEN\" dist/*",
            "Prefer basic authentication only behind TLS",
            r#"{"max_tokens": 100000, "temperature": 0}"#,
        ] {
            assert_eq!(s.find(text), None, "{text}");
        }
    }

    #[test]
    fn secrets_in_non_ascii_text_are_judged_as_in_ascii_text() {
        // Non-ASCII text takes the set's relaxed answer (`patterns`), which each pattern then
        // confirms: the same secrets are found, and a letter such as `é` right before a key
        // still means no word boundary, so no match.
        let s = &rules().secrets;
        for (text, want) in [
            (
                "export OPENAI_API_KEY=sk-proj-4fJd8s9QwErTyUiOpAsDfGhJkLzXcVbNm12 — rotated “yesterday”",
                Some("openai-key"),
            ),
            (
                "clé AWS → AKIAIOSFODNN7EXAMPLE, à ne pas committer",
                Some("aws-access-key"),
            ),
            ("éAKIAIOSFODNN7EXAMPLE", None),
            (
                "Pin scikit-learn below 1.5 — sk-learn is a common misspelling…",
                None,
            ),
            (
                "Read the password from ${DB_PASSWORD} — never from the config file",
                None,
            ),
        ] {
            assert_eq!(s.find(text), want, "{text}");
            assert_eq!(s.redact(text).map(|(_, name)| name), want, "{text}");
        }
        // The built-in patterns join (their `$`s are inside classes); a scanner whose patterns
        // join asks the relaxed patterns of the joined texts, and rules out texts that hold
        // no key.
        assert!(s.joinable);
        let yaml = "patterns:\n  - name: aws-access-key\n    regex: '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b'\n";
        let joined = SecretScanner::from_yaml(yaml).unwrap();
        assert!(joined.joinable);
        assert!(joined.may_hold(["naïve café", "key AKIAIOSFODNN7EXAMPLE"]));
        assert!(!joined.may_hold(["naïve café", "nothing — here…"]));
        assert_eq!(joined.find("clé → AKIAIOSFODNN7EXAMPLE"), Some("aws-access-key"));
        assert_eq!(joined.find("éAKIAIOSFODNN7EXAMPLE"), None);
    }

    #[test]
    fn redaction_replaces_only_the_secret() {
        let s = &rules().secrets;
        let (clean, name) = s
            .redact("run with AKIAIOSFODNN7EXAMPLE then token=abcdef123456 ok")
            .unwrap();
        assert_eq!(name, "aws-access-key");
        assert_eq!(
            clean,
            "run with [redacted: aws-access-key] then token=[redacted: credential-assignment] ok"
        );
        assert_eq!(s.find(&clean), None, "markers never look like secrets");
        assert_eq!(redacted_pattern(&clean), Some("aws-access-key"));
        assert_eq!(s.redact("nothing here"), None);
        // A pattern with a group redacts the group: the rest of the command stays readable.
        let (clean, _) = s
            .redact("mysql -h 127.0.0.1 -u root -pMyS3cretRoot -e 'show tables'")
            .unwrap();
        assert_eq!(
            clean,
            "mysql -h 127.0.0.1 -u root -p[redacted: command-password] -e 'show tables'"
        );
    }

    fn exp(id: &str, domains: &[&str]) -> Experience {
        Experience {
            id: id.into(),
            recorded_at: 1_700_000_000_000,
            domains: domains.iter().map(|d| d.to_string()).collect(),
            outcome: Some(Outcome::Succeeded),
            source: SourceLoc {
                file: "memory/2024-05.jsonl".into(),
                line: 7,
            },
            ..Default::default()
        }
    }

    #[test]
    fn normalize_records() {
        let mut e = exp("exp-101", &["Python", "py", "../etc", "Node.js", "../etc", "a/b"]);
        e.project = Some("  git@github.com:acme/billing.git \n".into());
        e.words.lesson = Some("  Run   pytest\nfrom the repo root  ".into());
        e.words.breakthrough = Some("   ".into());
        e.words.gotchas = vec!["".into(), " conftest.py  shadows fixtures ".into()];
        e.words.dead_ends = vec![
            DeadEnd {
                name: "  ".into(),
                kind: None,
                reason: Some("nothing".into()),
            },
            DeadEnd {
                name: "pip install -e .".into(),
                kind: Some("approach".into()),
                reason: Some(" ".into()),
            },
        ];
        let mut blank_project = exp("exp-102", &["rust"]);
        blank_project.project = Some("   ".into());
        let claim = LessonClaim {
            id: "claim-1".into(),
            recorded_at: 0,
            domains: vec!["TS".into(), "bad domain/x".into()],
            refused_domains: vec![],
            project: Some("/home/dev/web".into()),
            text: " Prefer   `tsc --noEmit` in CI ".into(),
            kind: Kind::Do,
            source: crate::model::ClaimSource::Model,
            evidence: vec!["exp-101".into()],
            operation_key: Some("  ".into()),
            loc: SourceLoc {
                file: "claims.jsonl".into(),
                line: 1,
            },
            ended: None,
        };
        let mut corpus = Corpus {
            experiences: vec![e, blank_project],
            claims: vec![claim],
        };
        let mut sink = Sink::new();
        normalize(&mut corpus, &rules(), &mut sink);
        let e = &corpus.experiences[0];
        assert_eq!(e.domains, ["python", "node"]);
        assert_eq!(e.refused_domains, ["../etc", "a/b"]);
        assert_eq!(
            e.project.as_deref(),
            Some(digest::project("git@github.com:acme/billing.git").as_str())
        );
        assert_eq!(e.project.as_ref().unwrap().len(), 12);
        assert_eq!(e.words.lesson.as_deref(), Some("Run pytest from the repo root"));
        assert_eq!(e.words.breakthrough, None);
        assert_eq!(e.words.gotchas, ["conftest.py shadows fixtures"]);
        assert_eq!(e.words.dead_ends.len(), 1);
        assert_eq!(e.words.dead_ends[0].reason, None);
        assert_eq!(corpus.experiences[1].project, None);
        let c = &corpus.claims[0];
        assert_eq!(c.domains, ["typescript"]);
        assert_eq!(c.refused_domains, ["bad domain/x"]);
        assert_eq!(c.text, "Prefer `tsc --noEmit` in CI");
        assert_eq!(c.operation_key, None);
        assert_eq!(
            c.project.as_deref(),
            Some(digest::project("/home/dev/web").as_str())
        );

        let n001: Vec<_> = sink.iter().filter(|d| d.code == codes::INVALID_DOMAIN).collect();
        assert_eq!(n001.len(), 3, "one per (record, refused domain): {sink:#?}");
        assert_eq!(n001[0].subject, "exp-101");
        assert_eq!(n001[0].location.as_ref().unwrap().line, 7);
        assert_eq!(
            n001[0].message,
            "domain \"../etc\" is not a valid skill name: may only hold lower-case letters, digits and single hyphens"
        );
        assert_eq!(n001[0].experience_ids(), ["exp-101"]);
        assert_eq!(n001[2].subject, "claim-1");
    }

    /// Domains named after skillc's own output folders are refused with N001 saying why, in
    /// whatever case they arrive; the record's other domains, one that merely starts with such
    /// a name among them, still compile.
    #[test]
    fn domains_named_after_skillcs_own_folders_are_refused() {
        let raw = ["Lessons", "python", "DELTAS", "projects-api", "lessons"];
        let mut corpus = Corpus {
            experiences: vec![exp("exp-201", &raw)],
            claims: vec![],
        };
        let mut sink = Sink::new();
        normalize(&mut corpus, &rules(), &mut sink);
        let e = &corpus.experiences[0];
        assert_eq!(e.domains, ["python", "projects-api"]);
        assert_eq!(e.refused_domains, ["lessons", "deltas"]);
        let n001: Vec<_> = sink.iter().filter(|d| d.code == codes::INVALID_DOMAIN).collect();
        assert_eq!(n001.len(), 2, "one per distinct refused domain: {sink:#?}");
        assert_eq!(
            n001[0].message,
            "domain \"lessons\" is refused: skillc writes its plan-time lesson blocks in lessons/, and a skill of that name would put its SKILL.md among them; map the domain to another name in rules/aliases.yaml"
        );
        assert!(n001[1].message.contains("the skill deltas in deltas/"));
        assert_eq!(n001[0].experience_ids(), ["exp-201"]);
    }

    /// A tag cloud in `domains`: the first `caps.record_domains` distinct domains (valid or
    /// refused, in record order, after aliasing) compile; the rest make one warning and no
    /// candidate, and an invalid or secret-looking one past the cap is neither refused nor echoed.
    #[test]
    fn a_record_compiles_into_at_most_record_domains_domains() {
        let mut rules = rules();
        rules.policy.caps.record_domains = 4;
        let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        let raw = [
            "Python",
            "py",
            "docker",
            "rust/cargo",
            "ci",
            "git",
            "Python",
            "../etc",
            token,
            "ci",
            "make",
        ];
        let mut corpus = Corpus {
            experiences: vec![exp("exp-7", &raw), exp("exp-8", &["py", "docker", "ci", "git"])],
            claims: vec![],
        };
        let mut sink = Sink::new();
        normalize(&mut corpus, &rules, &mut sink);
        let e = &corpus.experiences[0];
        assert_eq!(e.domains, ["python", "docker", "ci"]);
        assert_eq!(e.refused_domains, ["rust/cargo"]);
        assert_eq!(corpus.experiences[1].domains, ["python", "docker", "ci", "git"]);
        let n003: Vec<_> = sink
            .iter()
            .filter(|d| d.code == codes::TOO_MANY_DOMAINS)
            .collect();
        assert_eq!(n003.len(), 1, "only the record past the cap: {sink:#?}");
        let d = n003[0];
        assert_eq!(
            (d.subject.as_str(), d.location.as_ref().unwrap().line),
            ("exp-7", 7)
        );
        assert_eq!(
            d.message,
            "record names 8 domains and one record compiles into at most 4; 4 are ignored: git, ../etc, [redacted: github-token] and 1 more"
        );
        assert_eq!(d.experience_ids(), ["exp-7"]);
        assert!(
            !format!("{sink:?}").contains(token),
            "the secret is echoed nowhere"
        );
        let n001: Vec<_> = sink.iter().filter(|d| d.code == codes::INVALID_DOMAIN).collect();
        assert_eq!(n001.len(), 1, "no refusal past the cap: {n001:#?}");
    }

    #[test]
    fn normalize_scrubs_secrets_everywhere() {
        let key = "AKIAIOSFODNN7EXAMPLE";
        let mut e = exp(&format!("sess-{key}"), &["aws", key]);
        e.words.lesson = Some(format!("Export AWS_ACCESS_KEY_ID={key} before terraform plan"));
        e.operations = vec![Operation {
            tool: "run_shell_command".into(),
            args: json!({"command": format!("aws s3 ls --key {key}"), "cwd": "/srv"}).into(),
            status: OpStatus::Error,
            error: Some(format!("InvalidAccessKeyId {key}")),
            secret_print: 0,
            check: Some(Box::new(Check {
                label: format!("auth {key}"),
                target: None,
                passed: false,
            })),
        }];
        let mut corpus = Corpus {
            experiences: vec![e],
            claims: vec![],
        };
        let mut sink = Sink::new();
        normalize(&mut corpus, &rules(), &mut sink);
        let e = &corpus.experiences[0];
        let dump = format!("{e:?}") + &serde_json::to_string(&sink).unwrap();
        assert!(!dump.contains(key), "{dump}");
        assert!(e.id.starts_with("[redacted: aws-access-key] "));
        assert_eq!(e.domains, ["aws"]);
        assert_eq!(e.refused_domains, ["[redacted: aws-access-key]"]);
        assert_eq!(sink.len(), 1);
        assert_eq!(sink[0].subject, "<redacted>");
        assert_eq!(
            e.words.lesson.as_deref(),
            Some("Export AWS_ACCESS_KEY_ID=[redacted: aws-access-key] before terraform plan")
        );
    }

    #[test]
    fn a_secret_alone_in_any_one_field_is_still_redacted() {
        // The one-scan check over a whole record must see every field a secret can hide in.
        let key = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        let call = |args: Args, error: Option<String>, label: &str, target: Option<&str>| Operation {
            tool: "run_shell_command".into(),
            args,
            status: OpStatus::Error,
            error,
            secret_print: 0,
            check: Some(Box::new(Check {
                label: label.into(),
                target: target.map(String::from),
                passed: false,
            })),
        };
        let push = || Args::from_value(&json!({"command": "git push"}));
        let dead_end =
            |name: String, kind: Option<String>, reason: Option<String>| DeadEnd { name, kind, reason };
        type Put = Box<dyn Fn(&mut Experience, &str)>;
        let place: Vec<(&str, Put)> = vec![
            ("id", Box::new(|e, k| e.id = format!("sess-{k}").into())),
            ("domain", Box::new(|e, k| e.domains.push(k.into()))),
            (
                "task",
                Box::new(|e, k| e.words.task = Some(format!("Rotate {k} for the release bot"))),
            ),
            (
                "lesson",
                Box::new(|e, k| e.words.lesson = Some(format!("Never paste {k} into a commit"))),
            ),
            (
                "breakthrough",
                Box::new(|e, k| {
                    e.words.breakthrough = Some(format!("gh auth login --with-token {k} fixed the push"))
                }),
            ),
            (
                "content",
                Box::new(|e, k| e.words.content = Some(format!("token {k} rotated"))),
            ),
            (
                "gotcha",
                Box::new(|e, k| e.words.gotchas = vec![format!("The old token {k} still sits in .netrc")]),
            ),
            (
                "dead-end name",
                Box::new(move |e, k| {
                    e.words.dead_ends = vec![dead_end(format!("export GH_TOKEN={k}"), None, None)]
                }),
            ),
            (
                "dead-end type",
                Box::new(move |e, k| {
                    e.words.dead_ends = vec![dead_end("hard-code it".into(), Some(k.into()), None)]
                }),
            ),
            (
                "dead-end reason",
                Box::new(move |e, k| {
                    e.words.dead_ends =
                        vec![dead_end("hard-code it".into(), None, Some(format!("{k} leaked")))]
                }),
            ),
            ("in_play", Box::new(|e, k| e.in_play = vec![k.to_string()])),
            (
                "arguments",
                Box::new(move |e, k| {
                    let args = json!({"command": "git push", "env": {"GH_TOKEN": k}}).into();
                    e.operations = vec![call(args, None, "push", None)]
                }),
            ),
            (
                // Escaped in the JSON text: `\u0070` spells `p` only once parsed.
                "escaped arguments",
                Box::new(move |e, k| {
                    let raw = format!(r#"{{"env":{{"GH_TOKEN":"gh\u0070{}"}}}}"#, &k[3..]);
                    e.operations = vec![call(Args::from_json(&raw), None, "push", None)]
                }),
            ),
            (
                "error",
                Box::new(move |e, k| {
                    e.operations = vec![call(push(), Some(format!("bad token {k}")), "push", None)]
                }),
            ),
            (
                "check label",
                Box::new(move |e, k| e.operations = vec![call(push(), None, &format!("auth {k}"), None)]),
            ),
            (
                "check target",
                Box::new(move |e, k| e.operations = vec![call(push(), None, "auth", Some(k))]),
            ),
        ];
        for (field, put) in &place {
            let mut e = exp("sess-1", &["git"]);
            put(&mut e, key);
            let mut corpus = Corpus {
                experiences: vec![e],
                claims: vec![],
            };
            normalize(&mut corpus, &rules(), &mut Sink::new());
            let e = &corpus.experiences[0];
            let args: Vec<Value> = e.operations.iter().map(|op| op.args.value()).collect();
            let dump = format!("{e:?} {args:?}");
            assert!(!dump.contains(key), "{field}: {dump}");
            assert!(dump.contains("[redacted: github-token]"), "{field}: {dump}");
        }
    }

    /// Label arguments go in normalize, for every call that has one, however it is spelled;
    /// a call without one keeps its text as written.
    #[test]
    fn label_arguments_are_dropped_from_every_call() {
        let bash = |args: Args| Operation {
            tool: "Bash".into(),
            args,
            status: OpStatus::Ok,
            error: None,
            secret_print: 0,
            check: None,
        };
        let mut e = exp("cc-1", &["typescript"]);
        let as_written = r#"{"command":"npm test -- --run",  "timeout": 120000}"#;
        e.operations = vec![
            bash(json!({"command": "npm test -- --run", "description": "Run the vitest suite"}).into()),
            bash(Args::from_json(as_written)),
            bash(json!({"target_file": "src/a.ts", "explanation": "Read the cart", "thought": "x"}).into()),
            bash(Args::from_json(r#"{"description": "only a label"}"#)),
        ];
        let mut other = exp("cc-2", &["typescript"]);
        // An escaped key, and a backslash that sends the record through the secret scan.
        other.operations = vec![bash(Args::from_json(
            r#"{"command": "npm test -- --run", "description": "Re-run"}"#,
        ))];
        let mut corpus = Corpus {
            experiences: vec![e, other],
            claims: vec![],
        };
        normalize(&mut corpus, &rules(), &mut Sink::new());
        let args: Vec<Value> = (corpus.experiences.iter())
            .flat_map(|e| e.operations.iter().map(|op| op.args.value()))
            .collect();
        assert_eq!(
            args,
            [
                json!({"command": "npm test -- --run"}),
                json!({"command": "npm test -- --run", "timeout": 120000}),
                json!({"target_file": "src/a.ts"}),
                json!({}),
                json!({"command": "npm test -- --run"}),
            ]
        );
        assert_eq!(corpus.experiences[0].operations[1].args.text(), as_written);
        assert_eq!(
            corpus.experiences[0].operations[0].args,
            corpus.experiences[1].operations[0].args
        );
    }

    #[test]
    fn anchored_patterns_are_scanned_text_by_text() {
        assert!(!anchored(r"\bsk-[A-Za-z0-9]{20,}"));
        assert!(!anchored(r"://[^\s/:@]+:[^\s/@]{3,}@"));
        assert!(anchored(r"^ghp_[A-Za-z0-9]{20,}"));
        assert!(anchored(r"token=\S+$"));
        assert!(anchored(r"\Atoken"));
        assert!(anchored(r"(?m)^token"));
        assert!(!anchored(r#"TF_TOKEN_[A-Za-z0-9_]+=([^\s"$<{][^\s"]{5,})"#));
        let yaml = "patterns:\n  - name: bare-token\n    regex: '^tok_[a-z0-9]{8,}$'\n";
        let secrets = SecretScanner::from_yaml(yaml).unwrap();
        // Joined, `^…$` would see neither end of the second text: it must be scanned alone.
        assert!(secrets.may_hold(["nothing here", "tok_abcdef123"]));
        let mut e = exp("sess-2", &["git"]);
        e.words.gotchas = vec!["Set the env first".into(), "tok_abcdef123".into()];
        let mut rules = rules();
        rules.secrets = secrets;
        let mut corpus = Corpus {
            experiences: vec![e],
            claims: vec![],
        };
        normalize(&mut corpus, &rules, &mut Sink::new());
        assert_eq!(corpus.experiences[0].words.gotchas[1], "[redacted: bare-token]");
    }
}
