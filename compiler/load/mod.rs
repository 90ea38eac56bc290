//! Load: experience records and lesson claims from files and stores (DESIGN §3).
//!
//! Bad input is a diagnostic with file and line, never an `Err`: `Err` is only for an input
//! path that cannot be read at all.
//!
//! Layout:
//! * this module: inputs, the directory walk, format detection and dispatch (`detect`,
//!   `dispatch`), the sequential collector (duplicate ids, unknown-field tally);
//! * `json`: JSON Lines (read in large blocks, lines parsed in parallel) and JSON documents;
//! * `yaml`: YAML lists and `---` documents, with line numbers from a text scan;
//! * `fast`: the typed fast path for one JSON record;
//! * `dupkey`: duplicate keys in JSON text (a native record with one is refused);
//! * `record`: the reference validator, the single source of record diagnostics;
//! * `omnimem`: OmniMem exports (a JSON array or JSON Lines of memories);
//! * `gaia`: GAIA `memory.db` stores, read in place and never written.

mod dupkey;
mod encoding;
mod fast;
mod gaia;
mod json;
mod nonfinite;
mod omnimem;
mod record;
mod yaml;

pub use gaia::GENERAL as GAIA_GENERAL_DOMAIN;
pub(crate) use gaia::open_untouched;

use std::cell::OnceCell;
use std::collections::hash_map::{DefaultHasher, Entry as HashEntry};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Severity, Sink, codes};
use crate::model::{Corpus, Experience, LessonClaim, Millis, SourceLoc};
use crate::policy::Rules;
use record::{Item, Parsed};

/// Input formats; `None` in `LoadOptions::from` means recognise by content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Native,
    Omnimem,
    Gaia,
}

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub from: Option<Format>,
    /// Directories never read as input (the output directory).
    pub exclude: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct LoadError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read {}: {}", self.path.display(), self.message)
    }
}

/// JSONL is read in blocks of about this size, cut at a newline.
const BLOCK: usize = 32 << 20;

const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// A UTF-8 byte-order mark: skipped at the start of a file, and at the start of a line where
/// files that each began with one were joined.
pub(crate) const BOM: &str = "\u{feff}";

/// Extensions a directory walk picks up (`db` and friends only when they are SQLite).
const WALK_EXTENSIONS: &[&str] = &["jsonl", "json", "yaml", "yml", "db", "sqlite", "sqlite3"];

/// The syntax of a native record file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    Jsonl,
    /// `.json`: an array, one object, or JSON Lines (decided by content).
    Json,
    Yaml,
}

/// What a file is, decided from its name, its first bytes and `--from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detected {
    Native(Syntax),
    /// A store or export of another system, read by its own reader.
    Foreign(Format),
    /// Not ours to read: skipped silently (a non-SQLite `.db` in a directory).
    Skip,
    /// Not a format skillc reads.
    Unknown,
    /// A SQLite database named with `--from omnimem`.
    SqliteNotOmnimem,
}

/// A compressed file (`records.jsonl.gz`): the command that gives the file inside, and that
/// file's name. skillc reads records uncompressed; a crate to inflate them would be one more
/// dependency for what one command does once.
fn compressed(name: &str) -> Option<(&'static str, &str)> {
    let (inner, ext) = name.rsplit_once('.')?;
    let tool = match ext.to_ascii_lowercase().as_str() {
        "gz" => "gunzip -k",
        "bz2" => "bunzip2 -k",
        "xz" => "unxz -k",
        "zst" => "unzstd",
        "zip" => "unzip",
        _ => return None,
    };
    Some((tool, inner))
}

/// The L011 about a compressed file, naming the command that gives what skillc reads.
fn compressed_file(name: &str, tool: &str, inner: &str) -> Diagnostic {
    let mut d = Diagnostic::about_file(
        codes::UNKNOWN_FORMAT,
        format!("compressed file: skillc reads records uncompressed (`{tool} {name}` gives {inner})"),
        name,
    );
    d.help = "decompress it first and give the uncompressed file (or its directory)";
    d
}

fn extension(name: &str) -> String {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Recognises a file from its name and its first bytes. `explicit`: named as an input (an
/// unknown extension is then sniffed by content instead of skipped).
fn detect(name: &str, head: &[u8], explicit: bool, from: Option<Format>) -> Detected {
    let sqlite = head.starts_with(SQLITE_HEADER);
    match from {
        Some(Format::Gaia) => return Detected::Foreign(Format::Gaia),
        Some(Format::Omnimem) if !sqlite => return Detected::Foreign(Format::Omnimem),
        Some(Format::Omnimem | Format::Native) | None => {}
    }
    match (sqlite, from) {
        // No OmniMem export is a database: named, that is said (L011, suggesting `--from
        // gaia`); met in a directory, it is passed over as `--from native` does.
        (true, Some(Format::Omnimem)) if explicit => return Detected::SqliteNotOmnimem,
        (true, Some(Format::Omnimem)) => return Detected::Skip,
        // `--from native` keeps GAIA stores out: named, that is said (L011); met in a
        // directory, they are passed over like any database that is not GAIA's.
        (true, Some(Format::Native)) if explicit => return Detected::Unknown,
        (true, Some(Format::Native)) => return Detected::Skip,
        (true, _) => return Detected::Foreign(Format::Gaia),
        (false, _) => {}
    }
    let detected = match extension(name).as_str() {
        "jsonl" | "ndjson" => Detected::Native(Syntax::Jsonl),
        "json" => Detected::Native(Syntax::Json),
        "yaml" | "yml" => Detected::Native(Syntax::Yaml),
        "db" | "sqlite" | "sqlite3" if !explicit => Detected::Skip,
        _ => sniff(head),
    };
    // An OmniMem export is JSON too: recognised by its first memory, unless `--from native`.
    match detected {
        Detected::Native(Syntax::Json | Syntax::Jsonl) if from.is_none() && omnimem::looks_like(head) => {
            Detected::Foreign(Format::Omnimem)
        }
        other => other,
    }
}

/// A file without a known extension, by content: JSON when it starts with `[` or `{`,
/// YAML when it starts like a YAML document, list or mapping.
fn sniff(head: &[u8]) -> Detected {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let first = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some(first) = first else {
        return Detected::Unknown;
    };
    let t = first.trim_start();
    if t.starts_with('[') || t.starts_with('{') {
        return Detected::Native(Syntax::Json);
    }
    let yaml_key = t.split_once(':').is_some_and(|(k, rest)| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && (rest.is_empty() || rest.starts_with(' '))
    });
    if t.starts_with("---") || t.starts_with("%YAML") || t == "-" || t.starts_with("- ") || yaml_key {
        return Detected::Native(Syntax::Yaml);
    }
    Detected::Unknown
}

/// One file to read.
struct InputFile {
    path: PathBuf,
    explicit: bool,
}

/// Loads every input (a file, or a directory walked in sorted order). Duplicate ids keep the
/// first record in (path, line) order.
///
/// All files found are read in path order (so `b.jsonl a.jsonl` reads `a.jsonl` first), not
/// in the order the inputs were given; a file named twice is read once. JSON Lines files are
/// streamed in bounded blocks; `.json` and YAML files are read whole.
///
/// The GAIA reader needs the rules (checks, the program → domain map, transient errors); this
/// entry point uses `./rules` when present, else the built-in rules. `load_with_rules` takes
/// the rules the compile uses.
pub fn load(inputs: &[PathBuf], opts: &LoadOptions, sink: &mut Sink) -> Result<Corpus, LoadError> {
    load_blocks(inputs, opts, None, sink, BLOCK)
}

/// `load` with the rules of the compile (`--rules`).
pub fn load_with_rules(
    inputs: &[PathBuf],
    opts: &LoadOptions,
    rules: &Rules,
    sink: &mut Sink,
) -> Result<Corpus, LoadError> {
    load_blocks(inputs, opts, Some(rules), sink, BLOCK)
}

/// The rules a loader without explicit rules uses: `./rules` when it exists, else built-in
/// (what the command line does without `--rules`).
fn default_rules() -> Rules {
    let dir = Path::new("rules");
    if dir.join("policy.yaml").is_file()
        && let Ok(r) = Rules::load(dir)
    {
        return r;
    }
    Rules::builtin()
}

/// `load` with a JSONL block size (tests use tiny blocks to cross block boundaries).
fn load_blocks(
    inputs: &[PathBuf],
    opts: &LoadOptions,
    rules: Option<&Rules>,
    sink: &mut Sink,
    block: usize,
) -> Result<Corpus, LoadError> {
    let exclude: Vec<PathBuf> = opts
        .exclude
        .iter()
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect();
    let excluded = |p: &Path| {
        fs::canonicalize(p)
            .map(|c| exclude.iter().any(|e| c.starts_with(e)))
            .unwrap_or(false)
    };
    let mut entries = Vec::new();
    let mut visited = HashSet::new();
    for input in inputs {
        let meta = fs::metadata(input).map_err(|e| LoadError {
            path: input.clone(),
            message: io_message(&e),
        })?;
        if excluded(input) {
            let file = input.display().to_string();
            sink.push(Diagnostic::about_file(
                codes::SELF_INGESTION_REFUSED,
                "input is inside skillc's output directory and is not read",
                &file,
            ));
            continue;
        }
        if meta.is_dir() {
            fs::read_dir(input).map_err(|e| LoadError {
                path: input.clone(),
                message: io_message(&e),
            })?;
            walk(input, &exclude, &mut visited, &mut entries, sink);
        } else {
            entries.push(InputFile {
                path: input.clone(),
                explicit: true,
            });
        }
    }
    // Files are read in the order of their resolved paths (directory canonicalised, file
    // name kept), so how an input was spelled (`x`, `./x`, `a/../x`) changes nothing; a
    // file reached twice is read once, under its explicit spelling if it had one.
    let mut keyed: Vec<(PathBuf, InputFile)> = entries.into_iter().map(|e| (sort_key(&e.path), e)).collect();
    keyed.sort_by(|(a, x), (b, y)| a.cmp(b).then(y.explicit.cmp(&x.explicit)));
    keyed.dedup_by(|(b, _), (a, _)| a == b);
    let entries: Vec<InputFile> = keyed.into_iter().map(|(_, e)| e).collect();

    let mut col = Collector::new(sink, block, rules);
    for entry in &entries {
        load_file(entry, opts, &mut col)?;
    }
    Ok(col.finish())
}

/// Loads in-memory files (the built-in sample corpus, tests), as `(name, text)` in the
/// order given; the name's extension decides the format and is the file diagnostics report.
pub fn load_texts(files: &[(&str, &str)], opts: &LoadOptions, sink: &mut Sink) -> Corpus {
    texts_with(files, opts, None, sink)
}

/// `load_texts` with the rules of the compile: without them, a load that made diagnostics
/// builds the default rules a second time to redact them, and with the default patterns.
pub fn load_texts_with_rules(
    files: &[(&str, &str)],
    opts: &LoadOptions,
    rules: &Rules,
    sink: &mut Sink,
) -> Corpus {
    texts_with(files, opts, Some(rules), sink)
}

fn texts_with(files: &[(&str, &str)], opts: &LoadOptions, rules: Option<&Rules>, sink: &mut Sink) -> Corpus {
    let mut col = Collector::new(sink, BLOCK, rules);
    for &(name, text) in files {
        let text = text.strip_prefix(BOM).unwrap_or(text);
        match detect(name, text.as_bytes(), true, opts.from) {
            Detected::Native(syntax) => native_text(syntax, name, text, &[], &mut col),
            Detected::Foreign(Format::Omnimem) => omnimem_text(name, text, &[], &mut col),
            other => not_native(other, name, &mut col),
        }
    }
    col.finish()
}

/// A file's place in the read order: its directory resolved, its own name kept (a symlinked
/// file sorts under its own name).
fn sort_key(path: &Path) -> PathBuf {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (fs::canonicalize(parent), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

pub(crate) fn io_message(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Walks a directory recursively in sorted order, skipping hidden entries, excluded
/// directories, files of other types and anything that is not a regular file. A directory
/// reached twice (symlinks) is walked once.
fn walk(
    dir: &Path,
    exclude: &[PathBuf],
    visited: &mut HashSet<PathBuf>,
    out: &mut Vec<InputFile>,
    sink: &mut Sink,
) {
    let unreadable = |sink: &mut Sink, path: &Path, e: &io::Error| {
        let file = path.display().to_string();
        sink.push(Diagnostic::about_file(
            codes::UNREADABLE_FILE,
            format!("cannot read directory: {}", io_message(e)),
            &file,
        ));
    };
    let canonical = match fs::canonicalize(dir) {
        Ok(c) => c,
        Err(e) => return unreadable(sink, dir, &e),
    };
    if exclude.iter().any(|e| canonical.starts_with(e)) || !visited.insert(canonical) {
        return;
    }
    let read = match fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) => return unreadable(sink, dir, &e),
    };
    let mut children: Vec<(std::ffi::OsString, PathBuf)> = Vec::new();
    for entry in read {
        match entry {
            Ok(entry) => children.push((entry.file_name(), entry.path())),
            Err(e) => unreadable(sink, dir, &e),
        }
    }
    children.sort();
    for (name, path) in children {
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => walk(&path, exclude, visited, out, sink),
            Ok(m) => {
                let file_name = name.to_string_lossy();
                let ext = extension(&file_name);
                if !WALK_EXTENSIONS.contains(&ext.as_str()) {
                    // Records compressed beside the others (`2026-03.jsonl.gz`) are said, not
                    // skipped unseen, unless decompressed already (`gunzip -k` keeps both);
                    // any other file is not ours.
                    if let Some((tool, inner)) = compressed(&file_name)
                        && WALK_EXTENSIONS.contains(&extension(inner).as_str())
                    {
                        let unpacked = path.with_file_name(inner);
                        if !unpacked.exists() {
                            let (file, unpacked) =
                                (path.display().to_string(), unpacked.display().to_string());
                            sink.push(compressed_file(&file, tool, &unpacked));
                        }
                    }
                    continue;
                }
                if m.is_file() {
                    out.push(InputFile {
                        path,
                        explicit: false,
                    });
                } else {
                    // A pipe or device found by the walk: opening a pipe waits for a writer
                    // that may never come. Named on the command line, it is read as asked.
                    let file = path.display().to_string();
                    sink.push(Diagnostic::about_file(
                        codes::UNREADABLE_FILE,
                        "not a regular file (a pipe, socket or device): not read in a directory",
                        &file,
                    ));
                }
            }
            Err(e) => {
                let file = path.display().to_string();
                sink.push(Diagnostic::about_file(
                    codes::UNREADABLE_FILE,
                    format!("cannot read file: {}", io_message(&e)),
                    &file,
                ));
            }
        }
    }
}

/// Reads up to `want` more bytes into `buf`; `Ok(true)` at end of file.
fn fill(f: &mut File, buf: &mut Vec<u8>, want: usize) -> io::Result<bool> {
    let target = buf.len() + want;
    buf.reserve(want);
    while buf.len() < target {
        let n = f.by_ref().take((target - buf.len()) as u64).read_to_end(buf)?;
        if n == 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Drops a UTF-8 byte-order mark from the start of a file; false, with an L007, when the bytes
/// do not read as text at all (a stray byte that is not UTF-8 costs only its record, later).
fn text_start(buf: &mut Vec<u8>, name: &str, col: &mut Collector) -> bool {
    if buf.starts_with(BOM.as_bytes()) {
        buf.drain(..BOM.len());
    }
    let text = encoding::looks_like_text(buf);
    if !text {
        col.sink.push(Diagnostic::about_file(
            codes::UNREADABLE_FILE,
            "file is not UTF-8 text",
            name,
        ));
    }
    text
}

fn load_file(entry: &InputFile, opts: &LoadOptions, col: &mut Collector) -> Result<(), LoadError> {
    let name = entry.path.display().to_string();
    let fail = |col: &mut Collector, e: io::Error| -> Result<(), LoadError> {
        if entry.explicit {
            return Err(LoadError {
                path: entry.path.clone(),
                message: io_message(&e),
            });
        }
        col.sink.push(Diagnostic::about_file(
            codes::UNREADABLE_FILE,
            format!("cannot read file: {}", io_message(&e)),
            &name,
        ));
        Ok(())
    };
    let mut f = match File::open(&entry.path) {
        Ok(f) => f,
        Err(e) => return fail(col, e),
    };
    let mut buf = Vec::new();
    let eof = match fill(&mut f, &mut buf, col.block) {
        Ok(eof) => eof,
        Err(e) => return fail(col, e),
    };
    let detected = detect(&name, &buf, entry.explicit, opts.from);
    if matches!(detected, Detected::Native(_) | Detected::Foreign(Format::Omnimem)) && encoding::utf16(&buf) {
        let mut d = Diagnostic::about_file(
            codes::UNREADABLE_FILE,
            "file is UTF-16 text, not UTF-8: it is not read",
            &name,
        );
        d.help = encoding::UTF16_HELP;
        col.sink.push(d);
        return Ok(());
    }
    if let Detected::Native(_) = detected
        && !text_start(&mut buf, &name, col)
    {
        return Ok(());
    }
    match detected {
        Detected::Native(Syntax::Jsonl) if !json::jsonl_is_document(&String::from_utf8_lossy(&buf)) => {
            if let Err(e) = jsonl_stream(&mut f, buf, eof, &name, col) {
                return fail(col, e);
            }
        }
        Detected::Native(syntax) => {
            if !eof && let Err(e) = f.read_to_end(&mut buf) {
                return fail(col, e);
            }
            match String::from_utf8(buf) {
                Ok(text) => native_text(syntax, &name, &text, &[], col),
                Err(e) => {
                    // Bytes that are not UTF-8 cost the records that hold them.
                    let (text, bad) = encoding::lossy(e.as_bytes());
                    native_text(syntax, &name, &text, &bad, col);
                }
            }
        }
        Detected::Foreign(Format::Omnimem) => {
            if !eof && let Err(e) = f.read_to_end(&mut buf) {
                return fail(col, e);
            }
            if !text_start(&mut buf, &name, col) {
                return Ok(());
            }
            match String::from_utf8(buf) {
                Ok(text) => omnimem_text(&name, &text, &[], col),
                Err(e) => {
                    let (text, bad) = encoding::lossy(e.as_bytes());
                    omnimem_text(&name, &text, &bad, col);
                }
            }
        }
        Detected::Foreign(Format::Gaia) => {
            drop(f);
            drop(buf);
            let forced = opts.from == Some(Format::Gaia);
            let parsed = gaia::read(&entry.path, &name, forced, col.rules());
            col.file(&name, parsed);
        }
        other => not_native(other, &name, col),
    }
    Ok(())
}

/// An OmniMem export held in memory (`bad`: where its bytes were not UTF-8).
fn omnimem_text(name: &str, text: &str, bad: &[encoding::BadByte], col: &mut Collector) {
    let parsed = omnimem::read(text, name, &col.rules().aliases, bad);
    col.file(name, parsed);
}

/// Files that are not records skillc reads (the foreign readers are dispatched above).
fn not_native(detected: Detected, name: &str, col: &mut Collector) {
    let message = match detected {
        Detected::Skip | Detected::Native(_) => return,
        Detected::Foreign(Format::Gaia) => "GAIA memory stores are read from files only",
        Detected::Foreign(Format::Omnimem) => "OmniMem exports are read as json or jsonl",
        Detected::SqliteNotOmnimem => "file is a SQLite database, not an OmniMem export (JSON)",
        Detected::Foreign(Format::Native) | Detected::Unknown => {
            "not a format skillc reads (.jsonl, .json, .yaml or .yml)"
        }
    };
    if let Some((tool, inner)) = compressed(name)
        && detected == Detected::Unknown
    {
        return col.sink.push(compressed_file(name, tool, inner));
    }
    let mut d = Diagnostic::about_file(codes::UNKNOWN_FORMAT, message, name);
    if detected == Detected::SqliteNotOmnimem {
        d.help = "a GAIA memory.db is read with --from gaia (or without --from)";
    }
    col.sink.push(d);
}

/// A native record file held in memory (`bad`: where its bytes were not UTF-8; the records
/// holding them are refused).
fn native_text(syntax: Syntax, name: &str, text: &str, bad: &[encoding::BadByte], col: &mut Collector) {
    // A `.json` file may be JSON Lines and a `.jsonl` file a document: the text decides.
    let document = match syntax {
        Syntax::Json => !json::looks_like_lines(text),
        Syntax::Jsonl => json::jsonl_is_document(text),
        Syntax::Yaml => false,
    };
    match syntax {
        Syntax::Json | Syntax::Jsonl if document => {
            let parsed = json::json_document(text, name, bad);
            col.file(name, parsed);
        }
        Syntax::Json | Syntax::Jsonl => {
            let mut tally = Tally::default();
            let mut first = true;
            let mut line = 1;
            let mut rest = text.as_bytes();
            let file: Arc<str> = name.into();
            while !rest.is_empty() {
                let cut = if rest.len() <= col.block {
                    rest.len()
                } else {
                    rest[..col.block]
                        .iter()
                        .rposition(|&c| c == b'\n')
                        .map_or(rest.len(), |i| i + 1)
                };
                let (parsed, newlines) = json::jsonl_block(&rest[..cut], &file, line, &mut first);
                line += newlines;
                rest = &rest[cut..];
                // A line is a record: one with a bad byte is refused.
                let parsed =
                    parsed
                        .into_iter()
                        .flatten()
                        .map(|p| match bad.iter().find(|b| b.line == p.line) {
                            Some(b) => encoding::refuse(p, b, name),
                            None => p,
                        });
                if !col.take(name, parsed, &mut tally) {
                    break;
                }
            }
            col.flush(name, tally);
        }
        Syntax::Yaml => {
            let parsed = yaml::yaml_text(text, name, bad);
            col.file(name, parsed);
        }
    }
}

/// JSON Lines from a file, in blocks of about `col.block` bytes cut at a newline, so memory
/// stays bounded by the block and the records. Block N+1 is parsed (in parallel) while
/// block N is collected and block N+2 is read.
fn jsonl_stream(
    f: &mut File,
    mut cur: Vec<u8>,
    mut eof: bool,
    name: &str,
    col: &mut Collector,
) -> io::Result<()> {
    let mut tally = Tally::default();
    let mut first = true;
    let mut line = 1;
    let mut next: Vec<u8> = Vec::new();
    let mut pending: Option<Vec<Vec<Parsed>>> = None;
    let file: Arc<str> = name.into();
    loop {
        let cut = if eof {
            cur.len()
        } else {
            match cur.iter().rposition(|&c| c == b'\n') {
                Some(i) => i + 1,
                None => {
                    // One line longer than a block: read on.
                    eof = fill(f, &mut cur, col.block)?;
                    continue;
                }
            }
        };
        next.clear();
        next.extend_from_slice(&cur[cut..]);
        let want = col.block.saturating_sub(next.len()).max(col.block / 32).max(1);
        let at_eof = eof;
        let ((keep, read), (parsed, newlines)) = rayon::join(
            || {
                let keep = match pending.take() {
                    Some(p) => col.take(name, p.into_iter().flatten(), &mut tally),
                    None => true,
                };
                let read = if at_eof || !keep {
                    Ok(true)
                } else {
                    fill(f, &mut next, want)
                };
                (keep, read)
            },
            || json::jsonl_block(&cur[..cut], &file, line, &mut first),
        );
        if !keep {
            break;
        }
        line += newlines;
        let generated = matches!(
            parsed.first().and_then(|p| p.first()).map(|p| &p.item),
            Some(Item::Generated)
        );
        pending = Some(parsed);
        if generated || at_eof {
            break;
        }
        eof = read?;
        std::mem::swap(&mut cur, &mut next);
    }
    if let Some(p) = pending {
        col.take(name, p.into_iter().flatten(), &mut tally);
    }
    col.flush(name, tally);
    Ok(())
}

/// The help of the L002 of a native record that has a `key` and no `id`.
const FROM_OMNIMEM_HELP: &str =
    "a record with a `key` and no `id` looks like an OmniMem memory: read the file with --from omnimem";

/// A refused native record that has a `key` (an unknown field) and no `id` is likely an
/// OmniMem memory the format check did not recognise: its missing-id error says so.
fn omnimem_hint(diags: &mut [Diagnostic]) {
    let no_id = |d: &Diagnostic| {
        d.code == codes::MISSING_FIELD && d.evidence.get("field") == Some(&serde_json::Value::from("id"))
    };
    for d in diags.iter_mut().filter(|d| no_id(d)) {
        d.help = FROM_OMNIMEM_HELP;
    }
}

/// Unknown fields of one file: per field, how many records had it and the first one's line.
#[derive(Default)]
struct Tally {
    fields: BTreeMap<String, (u32, u32)>,
}

/// A 64-bit hash of an id (SipHash with fixed keys); only used to find duplicates.
fn hash_id(id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The hasher of a map whose keys are already hashes.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Where a kept id lives, to name it when a duplicate comes.
#[derive(Clone, Copy)]
enum Kept {
    Experience(u32),
    Claim(u32),
}

/// The help of an L004 about a memory edited between snapshots.
const VERSION_HELP: &str = "the first version in path order is compiled, as for any id read twice; to compile a memory's latest version, give only the newest snapshot; if the two are different records, give one of them a new id";

/// Is `d` an L004 about records read again with the same content (`REPEAT_HELP`)? Nothing
/// they say is lost, so `why` does not count them among the records refused at load.
pub fn is_repeat(d: &Diagnostic) -> bool {
    d.code == codes::DUPLICATE_ID && d.help == REPEAT_HELP
}

/// The help of an L004 about records read again with the same content.
const REPEAT_HELP: &str = "the same records were read twice (nightly snapshots of one store, or a copied file): read only the newest snapshot, or remove the copy; nothing they say is lost";

/// How many ids a folded L004 names.
const REPEAT_IDS: usize = 5;

/// How many earlier files a folded L004's message names (its evidence names `REPEAT_IDS`).
const REPEAT_FILES: usize = 3;

/// The duplicates of the file being read that repeat records read before, from any earlier
/// files: one fold per file, so a directory of nightly snapshots (each a superset of the last)
/// costs one warning a night, not one per (night, earlier night).
struct Repeats {
    /// The first one's own diagnostic.
    first: Option<Diagnostic>,
    records: usize,
    /// The first few ids.
    ids: Vec<String>,
    /// Records per domain named.
    domains: BTreeMap<String, usize>,
    /// The files that hold the kept records, by their place in the reading (path) order
    /// (`None`: the file being read, which sorts first), with how many records each.
    first_files: BTreeMap<Option<usize>, (Arc<str>, usize)>,
}

/// The sequential part: records arrive in (path, line) order; ids are checked for
/// duplicates across experiences, claims and files; unknown fields are counted per file.
struct Collector<'s> {
    corpus: Corpus,
    /// Kept ids by hash; an id whose hash another id already has goes to `collisions`.
    ids: HashMap<u64, Kept, BuildHasherDefault<IdentityHasher>>,
    collisions: HashMap<String, Kept>,
    /// The repeats of the file being read.
    repeats: Option<Repeats>,
    /// The files read so far, by name, with their place in the reading (path) order.
    files_read: HashMap<String, usize>,
    sink: &'s mut Sink,
    /// Where this load's diagnostics start in `sink`.
    first_diagnostic: usize,
    /// JSONL block size in bytes.
    block: usize,
    /// The compile's rules, for the foreign readers; loaded on first use when not given.
    given_rules: Option<&'s Rules>,
    fallback_rules: OnceCell<Rules>,
}

impl<'s> Collector<'s> {
    fn new(sink: &'s mut Sink, block: usize, rules: Option<&'s Rules>) -> Collector<'s> {
        Collector {
            corpus: Corpus::default(),
            ids: HashMap::default(),
            collisions: HashMap::new(),
            repeats: None,
            files_read: HashMap::new(),
            first_diagnostic: sink.len(),
            sink,
            block: block.max(1),
            given_rules: rules,
            fallback_rules: OnceCell::new(),
        }
    }

    /// The corpus, once the diagnostics the load made are cleared of secrets: they may quote
    /// a record's values, and no stage has scanned those yet (DESIGN §4: error messages too).
    fn finish(self) -> Corpus {
        if self.sink.len() > self.first_diagnostic {
            let mut made = self.sink.split_off(self.first_diagnostic);
            let secrets = &self.rules().secrets;
            for d in &mut made {
                crate::normalize::redact_diagnostic(d, secrets);
            }
            self.sink.append(&mut made);
        }
        self.corpus
    }

    fn rules(&self) -> &Rules {
        match self.given_rules {
            Some(r) => r,
            None => self.fallback_rules.get_or_init(default_rules),
        }
    }

    /// A whole file's records.
    fn file(&mut self, name: &str, parsed: Vec<Parsed>) {
        let mut tally = Tally::default();
        self.take(name, parsed, &mut tally);
        self.flush(name, tally);
    }

    /// Takes records in order; `false` when the file turned out to be skillc's own output
    /// and must not be read further.
    fn take(&mut self, name: &str, parsed: impl IntoIterator<Item = Parsed>, tally: &mut Tally) -> bool {
        for p in parsed {
            let keyed = p.unknown.iter().any(|f| f == "key");
            for field in p.unknown {
                tally.fields.entry(field).or_insert((0, p.line)).0 += 1;
            }
            self.sink.extend(p.ignored);
            match p.item {
                Item::Generated => {
                    let loc = SourceLoc {
                        file: name.into(),
                        line: p.line,
                    };
                    let message =
                        "file was generated by skillc (\"generator\": \"skillc\") and is not read as input";
                    self.sink
                        .push(Diagnostic::about_file(codes::SELF_INGESTION_REFUSED, message, name).at(&loc));
                    tally.fields.clear();
                    return false;
                }
                Item::Invalid(mut diags) => {
                    if keyed {
                        omnimem_hint(&mut diags);
                    }
                    self.sink.extend(diags);
                }
                Item::Experience(e) => {
                    let h = hash_id(&e.id);
                    let when = (e.recorded_at, false);
                    if self.fresh(&e.id, h, &e.source, &e.domains, when, |col, k| {
                        col.repeats_experience(k, &e)
                    }) {
                        let i = self.corpus.experiences.len() as u32;
                        self.remember(&e.id, h, Kept::Experience(i));
                        self.corpus.experiences.push(e);
                    }
                }
                Item::Claim(c) => {
                    let h = hash_id(&c.id);
                    let when = (c.recorded_at, true);
                    if self.fresh(&c.id, h, &c.loc, &c.domains, when, |col, k| {
                        col.repeats_claim(k, &c)
                    }) {
                        let i = self.corpus.claims.len() as u32;
                        self.remember(&c.id, h, Kept::Claim(i));
                        self.corpus.claims.push(c);
                    }
                }
            }
        }
        true
    }

    /// Whether the kept record is this experience read again: the derived equality, with the
    /// place made the same (so a field added later is compared without a line here). The copy
    /// is made only for a duplicate id.
    fn repeats_experience(&self, kept: Kept, e: &Experience) -> bool {
        let Kept::Experience(i) = kept else { return false };
        let old = &self.corpus.experiences[i as usize];
        *old == Experience {
            source: old.source.clone(),
            ..e.clone()
        }
    }

    /// Whether the kept record is this claim read again (everything but its place the same).
    fn repeats_claim(&self, kept: Kept, c: &LessonClaim) -> bool {
        let Kept::Claim(i) = kept else { return false };
        let old = &self.corpus.claims[i as usize];
        *old == LessonClaim {
            loc: old.loc.clone(),
            ..c.clone()
        }
    }

    fn kept_loc(&self, kept: Kept) -> (&str, &SourceLoc) {
        match kept {
            Kept::Experience(i) => {
                let e = &self.corpus.experiences[i as usize];
                (&e.id, &e.source)
            }
            Kept::Claim(i) => {
                let c = &self.corpus.claims[i as usize];
                (&c.id, &c.loc)
            }
        }
    }

    /// When the kept record was recorded, and whether it is a claim.
    fn kept_time(&self, kept: Kept) -> (Millis, bool) {
        match kept {
            Kept::Experience(i) => (self.corpus.experiences[i as usize].recorded_at, false),
            Kept::Claim(i) => (self.corpus.claims[i as usize].recorded_at, true),
        }
    }

    /// The record that already has this id (`h` is its hash).
    fn lookup(&self, id: &str, h: u64) -> Option<Kept> {
        match self.ids.get(&h) {
            None => None,
            Some(&k) if self.kept_loc(k).0 == id => Some(k),
            Some(_) => self.collisions.get(id).copied(),
        }
    }

    fn remember(&mut self, id: &str, h: u64, kept: Kept) {
        match self.ids.entry(h) {
            HashEntry::Vacant(v) => {
                v.insert(kept);
            }
            HashEntry::Occupied(_) => {
                self.collisions.insert(id.to_string(), kept);
            }
        }
    }

    /// `true` when no record has this id yet; otherwise reports the duplicate. `when`: the
    /// record's `recorded_at` and whether it is a claim (`kept_time`'s answer for it);
    /// `repeats`: whether the kept record says exactly what this one does (the same record
    /// read again).
    ///
    /// Of two records with one id, the first in (path, line) order is kept (DESIGN §3.1).
    /// A repeat loses nothing, so it is a warning, which `--strict` does not count. Any other
    /// record under a used id is an error, its content not compiled; a *version* (a later
    /// file's record with the kept one's kind and `recorded_at`: a memory edited between two
    /// snapshots of one store) says so, and how to compile the latest version.
    fn fresh(
        &mut self,
        id: &str,
        h: u64,
        loc: &SourceLoc,
        domains: &[String],
        when: (Millis, bool),
        repeats: impl FnOnce(&Self, Kept) -> bool,
    ) -> bool {
        let Some(kept) = self.lookup(id, h) else {
            return true;
        };
        let repeat = repeats(self, kept);
        let first = self.kept_loc(kept).1;
        let version = !repeat && first.file != loc.file && self.kept_time(kept) == when;
        let first_file = first.file.clone();
        let first = format!("{}:{}", first.file, first.line);
        let here = format!("{}:{}", loc.file, loc.line);
        let message = if repeat {
            format!("duplicate id `{id}`: the record at {first} has it, with the same content, and is kept")
        } else if version {
            format!(
                "`{id}` changed between snapshots (the same id and recorded_at, other content): the version at {first}, first in path order, is kept and the one at {here} is not compiled"
            )
        } else {
            format!("duplicate id `{id}`: the record at {first} has it and is kept")
        };
        let d = Diagnostic::new(codes::DUPLICATE_ID, message)
            .subject(id)
            .at(loc)
            .with("first", first);
        let named = record::named(domains);
        let mut d = record::naming_domains(vec![d], &named);
        if version {
            d[0].help = VERSION_HELP;
        }
        if !repeat {
            self.sink.extend(d);
            return false;
        }
        // A repeat (a nightly snapshot of the same store, a file copied twice) is folded with
        // the file's other repeats when the file is done (`flush`).
        d[0].severity = Severity::Warning;
        d[0].help = REPEAT_HELP;
        let read_at = self.files_read.get(&*first_file).copied();
        let fold = self.repeats.get_or_insert_with(|| Repeats {
            first: d.pop(),
            records: 0,
            ids: Vec::new(),
            domains: BTreeMap::new(),
            first_files: BTreeMap::new(),
        });
        fold.records += 1;
        if fold.ids.len() < REPEAT_IDS {
            fold.ids.push(id.to_string());
        }
        fold.first_files.entry(read_at).or_insert((first_file, 0)).1 += 1;
        let mut seen = HashSet::new();
        for n in named.into_iter().filter(|n| seen.insert(n.clone())) {
            *fold.domains.entry(n).or_default() += 1;
        }
        false
    }

    /// The repeats of the file just read, one diagnostic for them all: the record's own when
    /// it is the only one, else one that counts them (`records`; per domain named,
    /// `domain_records`, which `why DOMAIN` counts; how many files hold the kept records,
    /// `first_file_count`, and the first few of them with their counts, `first_files`).
    fn flush_repeats(&mut self, name: &str) {
        let Some(fold) = self.repeats.take() else { return };
        let Some(mut d) = fold.first else { return };
        if fold.records > 1 {
            let shown = fold
                .ids
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let more = if fold.records > fold.ids.len() {
                ", …"
            } else {
                ""
            };
            let files: Vec<(Arc<str>, usize)> = fold.first_files.into_values().collect();
            let (origin, kept) = match files.as_slice() {
                [(file, _)] => (
                    format!("records of {file}"),
                    format!("the records of {file} are kept"),
                ),
                many => {
                    let named = many
                        .iter()
                        .take(REPEAT_FILES)
                        .map(|(file, n)| format!("{n} in {file}"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let rest = match many.len().saturating_sub(REPEAT_FILES) {
                        0 => String::new(),
                        1 => " and 1 more file".to_string(),
                        n => format!(" and {n} more files"),
                    };
                    (
                        format!("records of {} files read before", many.len()),
                        format!("the records read first are kept, {named}{rest}"),
                    )
                }
            };
            d.message = format!(
                "{} records repeat {origin} (the same ids with the same content: {shown}{more}): {kept}",
                fold.records
            );
            d.subject = name.to_string();
            d.evidence.insert("first", Value::from(files[0].0.to_string()));
            d.evidence.insert("records", Value::from(fold.records));
            d.evidence.insert("ids", Value::from(fold.ids));
            d.evidence.insert(
                "domains",
                Value::from(fold.domains.keys().cloned().collect::<Vec<_>>()),
            );
            let counts: serde_json::Map<String, Value> = fold
                .domains
                .into_iter()
                .map(|(k, n)| (k, Value::from(n)))
                .collect();
            d.evidence.insert("domain_records", Value::Object(counts));
            // The first few, as with ids: naming every one would make a month of nightly
            // snapshots cost the square of the nights in bytes, if no longer in warnings.
            if files.len() > 1 {
                d.evidence.insert("first_file_count", Value::from(files.len()));
                let per_file: serde_json::Map<String, Value> = files
                    .into_iter()
                    .take(REPEAT_IDS)
                    .map(|(file, n)| (file.to_string(), Value::from(n)))
                    .collect();
                d.evidence.insert("first_files", Value::Object(per_file));
            }
        }
        self.sink.push(d);
    }

    /// One warning per unknown field of a file, and its repeats.
    fn flush(&mut self, name: &str, tally: Tally) {
        let read = self.files_read.len();
        self.files_read.entry(name.to_string()).or_insert(read);
        self.flush_repeats(name);
        for (field, (count, line)) in tally.fields {
            let loc = SourceLoc {
                file: name.into(),
                line,
            };
            let message = if count == 1 {
                format!("unknown field `{field}` is ignored")
            } else {
                format!("unknown field `{field}` in {count} records is ignored")
            };
            self.sink.push(
                Diagnostic::new(codes::UNKNOWN_FIELD, message)
                    .subject(name)
                    .at(&loc)
                    .with("field", field)
                    .with("records", count),
            );
        }
    }
}

#[cfg(test)]
mod tests;
