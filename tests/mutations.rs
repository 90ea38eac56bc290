//! A deterministic mutation harness over the inputs skillc reads (DESIGN §1.6, §3, §8: bad
//! input is a diagnostic with file and line, never a crash). Realistic seed files of each kind
//! — native JSON Lines, a JSON array, YAML, an OmniMem export, policy YAML, an authored
//! SKILL.md — are damaged the ways files really break (cut short, a byte flipped or put in,
//! bytes that are not UTF-8, a line dropped or doubled, a field of another type, huge or
//! non-finite numbers, deep nesting, a YAML alias bomb, a key given twice, CRLF, a byte-order
//! mark, UTF-16, NUL bytes, long lines, an empty file) and run through the library pipeline.
//!
//! Each case asserts: no panic and no hang; every diagnostic that points into the input names
//! that file and a 1-based line that exists in it; the records the damage did not touch still
//! load (in JSON Lines, every other line; in a JSON array or YAML list, every record before the
//! damage); and the compile's output is byte-identical on a re-run and on one thread.
//! A seeded xorshift picks the damage, so every run damages the same way.

mod common;

use common::Scratch;

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use skillc::diagnostics::Sink;
use skillc::load::{LoadOptions, load_with_rules};
use skillc::policy::Rules;
use skillc::{emit, pipeline};

/// xorshift64*: deterministic, and enough to pick damage.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Native records from four projects and the tools agents really call.
fn native_records() -> Vec<Value> {
    let web = "git@github.com:acme/web.git";
    let api = "git@github.com:acme/billing-api.git";
    let infra = "git@github.com:acme/infra.git";
    let cli = "https://gitlab.com/tools/release-cli";
    vec![
        json!({"id": "web-0301-npm", "recorded_at": "2026-03-01T10:00:00Z", "domains": ["node"],
               "project": web, "task": "CI installs drift from the lockfile", "outcome": "succeeded",
               "effort": 2,
               "lesson": "Use npm ci instead of npm install in CI so the lockfile is respected",
               "operations": [
                   {"tool": "Bash", "args": {"command": "npm install", "cwd": "/srv/web"}, "status": "ok"},
                   {"tool": "Bash", "args": {"command": "npm test", "cwd": "/srv/web"}, "status": "ok",
                    "check": {"label": "tests", "target": "web", "passed": true}}]}),
        json!({"id": "api-0302-pytest", "recorded_at": "2026-03-02T08:30:00+01:00",
               "domains": ["python", "testing"], "project": api,
               "task": "Test modules with one basename collide", "outcome": "succeeded",
               "lesson": "Run pytest with --import-mode=importlib when test modules share a name",
               "gotchas": ["pytest caches collected modules in __pycache__; clear it after renaming"],
               "operations": [
                   {"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": "tests"},
                    "status": "error", "error": "ImportError: import file mismatch"},
                   {"tool": "run_shell_command", "args": {"command": "pytest -q --import-mode=importlib"},
                    "status": "ok", "check": {"label": "tests", "passed": true}}]}),
        json!({"id": "infra-0303-tf", "recorded_at": "2026-03-03T12:00:00Z", "domains": "terraform",
               "project": infra, "task": "Parallel plans fail on the state lock", "outcome": "succeeded",
               "operations": [
                   {"tool": "Bash", "args": {"command": "terraform plan", "cwd": "/srv/infra"},
                    "status": "error", "error": "Error acquiring the state lock"},
                   {"tool": "Bash", "args": {"command": "terraform plan -lock-timeout=60s", "cwd": "/srv/infra"},
                    "status": "ok", "check": {"label": "plan", "passed": true}}]}),
        json!({"id": "infra-0304-k8s", "recorded_at": "2026-03-04T16:20:00Z", "domains": ["k8s"],
               "project": infra, "task": "Rollout stuck on a missing secret", "outcome": "pivoted",
               "breakthrough": "kubectl describe pod showed the secret name typo",
               "dead_ends": [{"name": "kubectl rollout restart", "type": "command",
                              "reason": "restarts pods that fail the same way"}],
               "gotchas": "kubectl apply succeeds even when the referenced secret does not exist"}),
        json!({"id": "cli-0305-cargo", "recorded_at": "2026-03-05T09:15:00Z", "domains": ["rust"],
               "project": cli, "task": "Release build resolves a newer dependency", "outcome": "succeeded",
               "lesson": "Build releases with cargo build --locked so Cargo.lock is honoured",
               "operations": [
                   {"tool": "Bash", "args": {"command": "cargo build --release"}, "status": "error",
                    "error": "failed to select a version for the requirement `serde = \"^1.0.190\"`"},
                   {"tool": "Bash", "args": {"command": "cargo build --release --locked"}, "status": "ok",
                    "check": {"label": "build", "passed": true}}]}),
        json!({"id": "api-0306-ruff", "recorded_at": "2026-03-06T11:00:00Z", "domains": ["python"],
               "project": api, "task": "Lint fails only in CI", "outcome": "succeeded", "effort": 1,
               "lesson": "Pin the ruff version in pre-commit and CI so both apply the same rules",
               "in_play": ["L000000000000"]}),
        json!({"id": "web-0307-git", "recorded_at": "2026-03-07T13:45:00Z", "domains": ["git"],
               "project": web, "task": "Rebase lost a fixup commit", "outcome": "failed",
               "gotchas": ["git rebase --autosquash needs fixup! subjects that match exactly"],
               "dead_ends": [{"name": "git reset --hard ORIG_HEAD", "reason": "threw away the fixups too"}]}),
        json!({"id": "cli-0308-pytest", "recorded_at": "2026-03-08T07:05:00Z", "domains": ["python"],
               "project": cli, "task": "Duplicate test basenames across packages", "outcome": "succeeded",
               "lesson": "Run pytest with --import-mode=importlib when test modules share names",
               "blessed": true}),
        json!({"type": "lesson", "id": "claim-0309-npm", "recorded_at": "2026-03-09T10:00:00Z",
               "domains": ["node"], "text": "Use npm ci in CI pipelines so installs follow the lockfile",
               "kind": "do", "source": "model", "evidence": ["web-0301-npm"]}),
    ]
}

/// OmniMem memories, with the string-typed values OmniMem writes.
fn memories() -> Vec<Value> {
    vec![
        json!({"key": "mem-0501-pytest", "content": "Two test_utils.py files collided under rootdir imports.",
               "project": "git@github.com:acme/billing-api.git", "tags": "[\"python\", \"testing\"]",
               "outcome": "succeeded", "effort_score": "3",
               "lesson": "Run pytest with --import-mode=importlib when test modules share a name",
               "gotchas": "", "abandoned_approaches": "[]", "blessed": "0", "state": "active",
               "created_at": "1714552800", "updated_at": "1714556400", "access_count": 4}),
        json!({"key": "mem-0509-pytest", "project": "git@github.com:acme/ledger.git", "tags": ["python"],
               "outcome": "succeeded", "effort_score": 2,
               "lesson": "Run pytest with --import-mode=importlib when test modules share names",
               "blessed": false, "created_at": 1715245200}),
        json!({"key": "mem-0512-buildx", "project": "git@github.com:acme/billing-api.git",
               "tags": "[\"docker\"]", "outcome": "pivoted", "effort_score": "4",
               "lesson": "Use docker buildx bake to build multi-platform images in one invocation",
               "abandoned": "[{\"name\": \"docker build twice\", \"reason\": \"40 minutes\"}]",
               "created_at": "1715504400"}),
        json!({"key": "mem-0514-tf", "project": "git@github.com:acme/infra.git", "tags": "terraform",
               "outcome": "succeeded", "lesson": "Run terraform fmt -check in CI before plan",
               "gotchas": "terraform fmt rewrites files in place without -check", "created_at": "1715677200"}),
        json!({"key": "mem-0515-stale", "tags": ["git"], "outcome": "failed", "state": "active",
               "lesson": "Never force-push to main", "created_at": "1715763600"}),
    ]
}

/// A seed file: its name (the extension decides the format), its text, and each record's id
/// with the byte range it spans.
struct Seed {
    name: &'static str,
    text: String,
    records: Vec<(String, Range<usize>)>,
    /// JSON Lines: damage costs only the lines it touches. Otherwise records after the damage
    /// may be skipped with it (DESIGN §1.6).
    lines: bool,
}

fn id_of(v: &Value) -> String {
    v.get("id")
        .or_else(|| v.get("key"))
        .and_then(Value::as_str)
        .unwrap()
        .to_string()
}

/// Joins rendered records as `open rec sep rec … close`, remembering each one's span.
fn joined(
    name: &'static str,
    values: &[Value],
    render: impl Fn(&Value) -> String,
    open: &str,
    sep: &str,
    close: &str,
    lines: bool,
) -> Seed {
    let mut text = open.to_string();
    let mut records = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            text.push_str(sep);
        }
        let start = text.len();
        text.push_str(&render(v));
        records.push((id_of(v), start..text.len()));
    }
    text.push_str(close);
    Seed {
        name,
        text,
        records,
        lines,
    }
}

fn yaml_item(v: &Value) -> String {
    serde_yaml::to_string(&vec![v]).unwrap()
}

fn seeds() -> Vec<Seed> {
    let native = native_records();
    let mems = memories();
    vec![
        joined("agents.jsonl", &native, |v| v.to_string(), "", "\n", "\n", true),
        joined(
            "export.json",
            &native,
            |v| serde_json::to_string_pretty(v).unwrap(),
            "[\n",
            ",\n",
            "\n]\n",
            false,
        ),
        joined("records.yaml", &native, yaml_item, "", "", "", false),
        joined(
            "omnimem.json",
            &mems,
            |v| serde_json::to_string_pretty(v).unwrap(),
            "[\n",
            ",\n",
            "\n]\n",
            false,
        ),
        joined("omnimem.jsonl", &mems, |v| v.to_string(), "", "\n", "\n", true),
    ]
}

/// One damaged file: the bytes, what was done (for the failure message), and the byte range
/// of the seed the damage touched (`None`: the whole file).
struct Case {
    what: String,
    bytes: Vec<u8>,
    touched: Option<Range<usize>>,
}

/// Where each line of `text` starts and ends (without its `\n`).
fn line_spans(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            out.push(start..i);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// Byte offsets in `text` just after a `"key": ` (JSON) or `key: ` (YAML) — where a value starts.
fn value_starts(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in 1..b.len() {
        if b[i - 1] == b':' && b[i] == b' ' && i + 1 < b.len() && b[i + 1] != b'\n' {
            out.push(i + 1);
        }
    }
    out
}

/// The end of the JSON or YAML scalar/value starting at `at` (a quoted string, a number, a
/// word), or `at` when it is a container (a container is replaced by inserting before it).
fn scalar_end(text: &str, at: usize) -> usize {
    let b = text.as_bytes();
    if b[at] == b'"' {
        let mut i = at + 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        return b.len();
    }
    if matches!(b[at], b'[' | b'{') {
        return at;
    }
    let mut i = at;
    while i < b.len() && !matches!(b[i], b',' | b'\n' | b'}' | b']') {
        i += 1;
    }
    i
}

fn splice(text: &str, range: Range<usize>, with: &str) -> Vec<u8> {
    let mut out = text.as_bytes()[..range.start].to_vec();
    out.extend_from_slice(with.as_bytes());
    out.extend_from_slice(&text.as_bytes()[range.end..]);
    out
}

/// Replacement values, by kind: another JSON type, huge or non-finite numbers, deep nesting,
/// a long string.
fn odd_values(yaml: bool) -> Vec<(&'static str, String)> {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let mut v = vec![
        ("number", "42".to_string()),
        ("negative", "-7".to_string()),
        ("null", "null".to_string()),
        ("bool", "true".to_string()),
        ("array", "[\"pytest\", 3, null]".to_string()),
        ("object", "{\"tool\": {\"args\": []}}".to_string()),
        ("empty string", "\"\"".to_string()),
        (
            "huge integer",
            "123456789012345678901234567890123456789".to_string(),
        ),
        ("1e400", "1e400".to_string()),
        ("-1e400", "-1e400".to_string()),
        ("NaN", "NaN".to_string()),
        ("Infinity", "Infinity".to_string()),
        ("-Infinity", "-Infinity".to_string()),
        ("deep 10000", deep(10_000)),
        ("deep 200", deep(200)),
        ("long string", format!("\"{}\"", "flaky retry ".repeat(20_000))),
        ("long word", format!("\"{}\"", "x".repeat(300_000))),
        ("timestamp out of range", "\"99999-12-31T23:59:59Z\"".to_string()),
    ];
    if yaml {
        v.extend([
            ("yaml nan", ".nan".to_string()),
            ("yaml inf", "-.inf".to_string()),
            ("yaml tag", "!!binary aGVsbG8=".to_string()),
            ("yaml alias unknown", "*nowhere".to_string()),
            ("yaml anchor", "&a pytest".to_string()),
            ("yaml map", "{a: 1, b: [2, 3]}".to_string()),
        ]);
    }
    v
}

/// A "billion laughs" alias bomb: nine levels of nine aliases each.
fn alias_bomb() -> String {
    let mut s =
        String::from("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for i in 1..10 {
        let p = i - 1;
        s.push_str(&format!(
            "a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"
        ));
    }
    s
}

/// The damage done to one seed, seeded so every run does the same.
fn cases(seed: &Seed, rng: &mut Rng) -> Vec<Case> {
    let text = &seed.text;
    let len = text.len();
    let yaml = seed.name.ends_with(".yaml");
    let mut out = Vec::new();
    // Cut short at every k-th byte.
    let step = (len / 14).max(1);
    for cut in (1..len).step_by(step) {
        let cut = cut + rng.below(step / 2 + 1);
        let cut = cut.min(len - 1);
        out.push(Case {
            what: format!("truncated at byte {cut}"),
            bytes: text.as_bytes()[..cut].to_vec(),
            touched: Some(cut.saturating_sub(1)..len),
        });
    }
    // A byte flipped, a byte put in, a byte that is not UTF-8, a NUL.
    let strays: &[&[u8]] = &[
        b"\"",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\\",
        b"\n",
        b"\r",
        b"#",
        b"&",
        b"*",
        b"-",
        b"\t",
        b"'",
        b"\0",
        b"\xff",
        b"\xc3",
        b"\xe2\x82",
        b"\xef\xbb\xbf",
    ];
    for n in 0..12 {
        let at = rng.below(len);
        let mut bytes = text.as_bytes().to_vec();
        bytes[at] ^= 1 << rng.below(8);
        out.push(Case {
            what: format!("bit flip {n} at byte {at}"),
            bytes,
            touched: Some(at.saturating_sub(1)..at + 2),
        });
        let at = rng.below(len);
        let stray = strays[rng.below(strays.len())];
        let mut bytes = text.as_bytes()[..at].to_vec();
        bytes.extend_from_slice(stray);
        bytes.extend_from_slice(&text.as_bytes()[at..]);
        out.push(Case {
            what: format!("inserted {stray:?} at byte {at}"),
            bytes,
            touched: Some(at.saturating_sub(1)..at + 1),
        });
    }
    // A line dropped or doubled.
    let lines = line_spans(text);
    for n in 0..6 {
        let l = lines[rng.below(lines.len())].clone();
        let end = (l.end + 1).min(len);
        out.push(Case {
            what: format!("line {n} at bytes {l:?} dropped"),
            bytes: splice(text, l.start..end, ""),
            touched: Some(l.start.saturating_sub(1)..end + 1),
        });
        let doubled = format!("{}{}", &text[l.start..end], &text[l.start..end]);
        out.push(Case {
            what: format!("line {n} at bytes {l:?} doubled"),
            bytes: splice(text, l.start..end, &doubled),
            touched: Some(l.start.saturating_sub(1)..end + 1),
        });
    }
    // A value of another type, or huge, non-finite, deeply nested, long.
    let starts = value_starts(text);
    for (what, value) in odd_values(yaml) {
        let at = starts[rng.below(starts.len())];
        let end = scalar_end(text, at);
        let with = if end == at {
            format!("{value}, ")
        } else {
            value.clone()
        };
        let with = if yaml && end == at {
            format!("{value}\n")
        } else {
            with
        };
        out.push(Case {
            what: format!("{what} at byte {at}"),
            bytes: splice(text, at..end, &with),
            touched: Some(at.saturating_sub(1)..end.max(at) + 1),
        });
    }
    // Whole-file damage: CRLF, a byte-order mark, UTF-16, NULs, empty, blank.
    let whole = |what: &str, bytes: Vec<u8>, keeps: bool| Case {
        what: what.to_string(),
        bytes,
        touched: if keeps { Some(len..len) } else { None },
    };
    out.push(whole("CRLF", text.replace('\n', "\r\n").into_bytes(), true));
    out.push(whole(
        "byte-order mark",
        format!("\u{feff}{text}").into_bytes(),
        true,
    ));
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    out.push(whole("UTF-16LE", utf16, false));
    let utf16be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    out.push(whole("UTF-16BE without a mark", utf16be, false));
    out.push(whole("NUL-filled", vec![0; 4096], false));
    out.push(whole("empty", Vec::new(), false));
    out.push(whole("blank", b"\n\n  \n".to_vec(), false));
    out.push(whole("only a mark", "\u{feff}".as_bytes().to_vec(), false));
    // A key given twice and an unknown field, at the start of a record.
    if !yaml {
        for (id, span) in seed.records.iter().take(3) {
            let at = span.start + 1 + text[span.start + 1..].find('"').unwrap();
            out.push(Case {
                what: format!("outcome given twice in {id}"),
                bytes: splice(text, at..at, "\"outcome\": \"failed\", "),
                touched: Some(span.clone()),
            });
            out.push(Case {
                what: format!("unknown field in {id}"),
                bytes: splice(
                    text,
                    at..at,
                    "\"x_agent\": {\"model\": \"claude\", \"tokens\": 1234}, ",
                ),
                touched: Some(at..at),
            });
        }
    } else {
        let bomb = alias_bomb();
        out.push(whole("alias bomb document", bomb.clone().into_bytes(), false));
        let indented: String = bomb.lines().map(|l| format!("  {l}\n")).collect();
        let Some((_, span)) = seed.records.get(1) else {
            return out;
        };
        let at = span.start + text[span.start..].find('\n').unwrap() + 1;
        out.push(Case {
            what: "alias bomb inside a record".to_string(),
            bytes: splice(text, at..at, &indented),
            touched: Some(span.clone()),
        });
        out.push(Case {
            what: "outcome given twice".to_string(),
            bytes: splice(text, at..at, "  outcome: failed\n"),
            touched: Some(span.clone()),
        });
        out.push(Case {
            what: "document separators".to_string(),
            bytes: format!("---\n{text}---\n...\n").into_bytes(),
            touched: None,
        });
    }
    out
}

/// What one compile of a damaged file gives: the diagnostics (code, file, line, message), the
/// ids loaded, and every output file's bytes.
type Run = (
    Vec<(String, Option<(String, u32)>, String)>,
    Vec<String>,
    Vec<(String, Vec<u8>)>,
);

fn run(name: &str, bytes: &[u8], rules: &Rules) -> Run {
    // Read from disk, as a user's file is: the reader sees the bytes (not UTF-8, UTF-16, NUL)
    // and streams JSON Lines in blocks. The scratch directory is unique per call.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let dir = Scratch::new(&format!("mutations-{}", CALLS.fetch_add(1, Ordering::Relaxed)));
    let path = dir.path(name);
    std::fs::write(&path, bytes).unwrap();
    let mut sink = Sink::new();
    let corpus = load_with_rules(&[path], &LoadOptions::default(), rules, &mut sink)
        .expect("a file that exists loads");
    let mut ids: Vec<String> = corpus.experiences.iter().map(|e| e.id.to_string()).collect();
    ids.extend(corpus.claims.iter().map(|c| c.id.to_string()));
    let comp = pipeline::compile(corpus, sink, rules, &pipeline::Options::default());
    let mut files = vec![emit::ledger_file(&comp.lessons)];
    files.extend(emit::render(&comp, rules, &mut Sink::new()));
    // The scratch directory differs per call: what is compared is relative to it.
    let prefix = format!("{}/", dir.0.display());
    let rel = |s: &str| s.replace(&prefix, "");
    let diags = comp
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.to_string(),
                d.location.as_ref().map(|l| (rel(&l.file), l.line)),
                format!("{} [subject {}]", rel(&d.message), rel(&d.subject)),
            )
        })
        .collect();
    let files = files
        .into_iter()
        .map(|f| (f.path.clone(), rel(&f.text()).into_bytes()))
        .collect();
    (diags, ids, files)
}

/// Runs `f` on another thread: a panic, or a case that takes far too long, is an `Err` naming it.
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        })
        .unwrap();
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            let why = (e.downcast_ref::<String>().cloned())
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("{what}: panicked: {why}"))
        }
        Err(_) => Err(format!(
            "{what}: no result after 60 s (a hang, or unbounded work)"
        )),
    }
}

/// The number of lines a diagnostic may point at in `bytes` (a last line without `\n` counts).
fn line_count(bytes: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    text.split('\n').count().max(1) as u32
}

fn check(seed: &Seed, case: Case, rules: &std::sync::Arc<Rules>, threads: bool) -> Vec<String> {
    let mut failures = Vec::new();
    let what = format!("{} — {}", seed.name, case.what);
    let name = seed.name;
    let bytes = std::sync::Arc::new(case.bytes);
    let (r, b) = (rules.clone(), bytes.clone());
    let first = match guarded(&what, move || run(name, &b, &r)) {
        Ok(run) => run,
        Err(e) => return vec![e],
    };
    let lines = line_count(&bytes);
    for (code, loc, message) in &first.0 {
        // A load diagnostic points at a line, or is about the whole file (its subject).
        if code.starts_with('L') && loc.is_none() && !message.ends_with(&format!("[subject {name}]")) {
            failures.push(format!("{what}: {code} names no line of {name}: {message}"));
        }
        if let Some((file, line)) = loc
            && (file != name || *line == 0 || *line > lines)
        {
            failures.push(format!(
                "{what}: {code} points at {file}:{line} (the file has {lines} lines): {message}"
            ));
        }
    }
    if let Some(touched) = &case.touched {
        for (id, span) in &seed.records {
            let untouched = span.end < touched.start || (seed.lines && span.start > touched.end);
            if untouched && !first.1.contains(id) {
                failures.push(format!(
                    "{what}: record {id} (bytes {span:?}) was not touched by the damage ({touched:?}) and was lost; diagnostics: {:?}",
                    first.0
                ));
            }
        }
    }
    let (r, b) = (rules.clone(), bytes.clone());
    let again = guarded(&what, move || run(name, &b, &r));
    if again.as_ref() != Ok(&first) {
        failures.push(format!("{what}: a second compile differs"));
    }
    if threads {
        let (r, b) = (rules.clone(), bytes.clone());
        let one = guarded(&what, move || {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap()
                .install(|| run(name, &b, &r))
        });
        if one.as_ref() != Ok(&first) {
            failures.push(format!("{what}: a compile on one thread differs"));
        }
    }
    failures
}

/// Runs every seed's cases for `rounds` rounds (each round damages other places); the failures.
fn sweep(rounds: u64) -> (usize, Vec<String>) {
    let rules = std::sync::Arc::new(Rules::builtin());
    let mut failures = Vec::new();
    let mut total = 0;
    for (n, seed) in seeds().iter().enumerate() {
        // The seed itself loads whole and clean.
        let (diags, ids, _) = run(seed.name, seed.text.as_bytes(), &rules);
        for (id, _) in &seed.records {
            assert!(
                ids.contains(id),
                "{}: seed record {id} not loaded: {diags:?}",
                seed.name
            );
        }
        for round in 0..rounds {
            let mut rng =
                Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1 + 64 * round).wrapping_mul(0x1000_0000_01b3));
            for (i, case) in cases(seed, &mut rng).into_iter().enumerate() {
                total += 1;
                failures.extend(check(seed, case, &rules, round == 0 && i % 8 == 0));
            }
        }
    }
    (total, failures)
}

#[test]
fn damaged_record_files_never_panic_point_at_real_lines_and_keep_the_untouched_records() {
    let (total, failures) = sweep(1);
    assert!(total > 300, "only {total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The same damage at many more places (`cargo test --test mutations -- --ignored`).
#[test]
#[ignore]
fn damaged_record_files_sweep() {
    let (total, failures) = sweep(25);
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The rules files damaged the same ways, plus numbers at their limits. A rules directory that
/// cannot be read is an error naming the file (and the line, when the error has one that
/// exists); one that loads compiles the native seed without a panic. Loading the rules is the
/// slow part, so the quick run takes `keep` cases in each file, picked by the seeded generator.
#[test]
fn damaged_rules_files_never_panic_and_name_the_file_and_a_real_line() {
    rules_sweep(6);
}

/// Every case of every rules file (`cargo test --test mutations -- --ignored`).
#[test]
#[ignore]
fn damaged_rules_files_sweep() {
    rules_sweep(usize::MAX);
}

fn rules_sweep(keep: usize) {
    let repo = common::repo();
    let seed = &seeds()[0];
    let mut failures = Vec::new();
    let mut total = 0;
    for (n, file) in [
        "policy.yaml",
        "aliases.yaml",
        "narrative.yaml",
        "secrets.yaml",
        "lexicon.yaml",
    ]
    .into_iter()
    .enumerate()
    {
        let text = std::fs::read_to_string(repo.join("rules").join(file)).unwrap();
        let as_seed = Seed {
            name: "rules.yaml",
            text: text.clone(),
            records: Vec::new(),
            lines: false,
        };
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (n as u64 + 7).wrapping_mul(0x1000_0000_01b3));
        let mut damage = cases(&as_seed, &mut rng);
        // Numbers at their limits, where the policy holds numbers.
        for (at, _) in text
            .match_indices(": ")
            .filter(|(at, _)| text[at + 2..].starts_with(|c: char| c.is_ascii_digit()))
        {
            let at = at + 2;
            let end = scalar_end(&text, at);
            for limit in [
                "0",
                "1",
                "1000",
                "1001",
                "4294967295",
                "18446744073709551615",
                "-1",
                "1e400",
                "0.5",
            ] {
                damage.push(Case {
                    what: format!("{limit} at byte {at}"),
                    bytes: splice(&text, at..end, limit),
                    touched: None,
                });
            }
        }
        while damage.len() > keep {
            damage.swap_remove(rng.below(damage.len()));
        }
        for case in damage {
            total += 1;
            let what = format!("rules/{file} — {}", case.what);
            let lines = line_count(&case.bytes);
            let (bytes, seed_text) = (case.bytes.clone(), seed.text.clone());
            let result = guarded(&what, move || {
                static CALLS: AtomicUsize = AtomicUsize::new(0);
                let dir = Scratch::new(&format!(
                    "mutations-rules-{}",
                    CALLS.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::write(dir.path(file), &bytes).unwrap();
                match Rules::load(&dir.0) {
                    Err(e) => Err((
                        e.file.file_name().map(|f| f.to_string_lossy().into_owned()),
                        e.message,
                    )),
                    Ok(rules) => {
                        let mut sink = Sink::new();
                        let corpus = skillc::load::load_texts_with_rules(
                            &[("agents.jsonl", &seed_text)],
                            &LoadOptions::default(),
                            &rules,
                            &mut sink,
                        );
                        let comp = pipeline::compile(corpus, sink, &rules, &pipeline::Options::default());
                        emit::render(&comp, &rules, &mut Sink::new());
                        Ok(())
                    }
                }
            });
            match result {
                Err(e) => failures.push(e),
                Ok(Ok(())) => {}
                Ok(Err((named, message))) => {
                    if named.as_deref() != Some(file) {
                        failures.push(format!("{what}: the error names {named:?}: {message}"));
                    }
                    if let Some(line) = message
                        .split("line ")
                        .nth(1)
                        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                        .and_then(|d| d.parse::<u32>().ok())
                        && (line == 0 || line > lines)
                    {
                        failures.push(format!(
                            "{what}: the error points at line {line} of {lines}: {message}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// An authored skill the team wrote by hand, for the domain the native seed compiles rules in.
const AUTHORED_SKILL: &str = "---
name: python
description: How our team writes, tests and ships Python services. Use when editing Python code.
metadata:
  owner: platform-team
  reviewed: \"2026-02-01\"
---

# Python at Acme

Read this before touching `services/`.

## Testing with `pytest`

Run `pytest -q` before every push.

```bash
# not a heading
python -m pytest --import-mode=importlib
```

## Linting

- Pin the ruff version in pre-commit.
- Run `ruff check --fix` locally (id: L0123456789ab).
";

/// Authored skills (`--base-skills`) damaged the same ways: reading them and computing their
/// deltas never panics or hangs, and a diagnostic about one names its file.
#[test]
fn damaged_authored_skills_never_panic_and_name_their_file() {
    let rules = std::sync::Arc::new(Rules::builtin());
    let native = seeds().remove(0);
    let mut sink = Sink::new();
    // The seed twice over, from two files, so python has rules for a delta to add.
    let corpus = skillc::load::load_texts_with_rules(
        &[("agents.jsonl", &native.text)],
        &LoadOptions::default(),
        &rules,
        &mut sink,
    );
    let comp = pipeline::compile(corpus, sink, &rules, &pipeline::Options::default());
    let lessons = std::sync::Arc::new(comp.lessons.clone());
    let seed = Seed {
        name: "SKILL.md",
        text: AUTHORED_SKILL.to_string(),
        records: Vec::new(),
        lines: false,
    };
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut failures = Vec::new();
    let mut total = 0;
    let mut damage = cases(&seed, &mut rng);
    damage.push(Case {
        what: "alias bomb frontmatter".to_string(),
        bytes: format!("---\n{}name: python\n---\n# Python\n", alias_bomb()).into_bytes(),
        touched: None,
    });
    damage.push(Case {
        what: "frontmatter never closed".to_string(),
        bytes: b"---\nname: python\ndescription: x\n# Python\n".to_vec(),
        touched: None,
    });
    for case in damage {
        total += 1;
        let what = format!("SKILL.md — {}", case.what);
        let (rules, lessons, bytes) = (rules.clone(), lessons.clone(), case.bytes.clone());
        let result = guarded(&what, move || {
            static CALLS: AtomicUsize = AtomicUsize::new(0);
            let dir = Scratch::new(&format!(
                "mutations-skills-{}",
                CALLS.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(dir.path("python")).unwrap();
            std::fs::write(dir.path("python/SKILL.md"), &bytes).unwrap();
            let (base, mut diags) = skillc::deltas::read_base_skills(&dir.0).unwrap();
            let (_, more) = skillc::deltas::compute(&base, &lessons, &Default::default(), &rules);
            diags.extend(more);
            diags
                .iter()
                .map(|d| {
                    // A diagnostic about the deltas (E002) names the skill by its name.
                    let names_file = d.subject.ends_with("SKILL.md")
                        || d.subject == "python"
                        || d.location.as_ref().is_some_and(|l| l.file.ends_with("SKILL.md"))
                        || d.evidence
                            .get("path")
                            .is_some_and(|p| p.as_str().is_some_and(|p| p.ends_with("SKILL.md")));
                    (
                        d.code,
                        names_file,
                        d.location.as_ref().map(|l| l.line),
                        d.message.clone(),
                    )
                })
                .collect::<Vec<_>>()
        });
        match result {
            Err(e) => failures.push(e),
            Ok(diags) => {
                let lines = line_count(&case.bytes);
                for (code, names_file, line, message) in diags {
                    if !names_file {
                        failures.push(format!("{what}: {code} names no SKILL.md: {message}"));
                    }
                    if let Some(line) = line
                        && (line == 0 || line > lines)
                    {
                        failures.push(format!(
                            "{what}: {code} points at line {line} of {lines}: {message}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The binary on damaged inputs it opens itself: a state store cut short, flipped or
/// overwritten, and a GAIA `memory.db` cut short. It finishes (exit 0, 1, or 2 naming the
/// file) and never panics.
#[test]
fn damaged_stores_never_panic_the_binary() {
    let dir = Scratch::new("mutations-store");
    let seed = &seeds()[0];
    let input = dir.path("agents.jsonl");
    std::fs::write(&input, &seed.text).unwrap();
    let out = dir.path("out");
    let o = common::compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let store = out.join(".skillc/state.db");
    let good = std::fs::read(&store).unwrap();
    let len = good.len();
    let mut rng = Rng(0xd1b5_4a32_d192_ed03);
    let mut damage: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("not SQLite".into(), b"{\"lessons\": []}\n".to_vec()),
        ("header only".into(), good[..100.min(len)].to_vec()),
        ("NUL-filled".into(), vec![0; len]),
    ];
    for k in [1, 2, 3] {
        damage.push((format!("cut at {k}/4"), good[..len * k / 4].to_vec()));
    }
    for n in 0..4 {
        let mut bytes = good.clone();
        let at = rng.below(len);
        bytes[at] ^= 0xff;
        // A flip in the first page's header damages the schema, not only data.
        let early = rng.below(100.min(len));
        if n % 2 == 0 {
            bytes[early] ^= 0x55;
        }
        damage.push((format!("flipped at {at} and {early}"), bytes));
    }
    let mut failures = Vec::new();
    for (what, bytes) in &damage {
        std::fs::write(&store, bytes).unwrap();
        let o = common::compile_to(&input, &out, &[]);
        let err = common::stderr(&o);
        if err.contains("panicked") || !matches!(o.status.code(), Some(0..=2)) {
            failures.push(format!("store {what}: exit {:?}: {err}", o.status.code()));
        } else if o.status.code() == Some(2) && !err.contains("state.db") {
            failures.push(format!("store {what}: exit 2 without naming the store: {err}"));
        }
    }
    // A GAIA store cut short, read with --from gaia and by its header.
    let gaia = dir.path("memory.db");
    {
        let conn = rusqlite::Connection::open(&gaia).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL, migrated_at TEXT NOT NULL);
             INSERT INTO schema_version VALUES (3, '2026-01-06T10:00:00+01:00');
             CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                 tool_name TEXT NOT NULL, args TEXT, result_summary TEXT, success INTEGER NOT NULL DEFAULT 1,
                 error TEXT, duration_ms INTEGER, timestamp TEXT NOT NULL);",
        )
        .unwrap();
        for i in 0..40 {
            let (cmd, ok, error) = if i % 2 == 0 {
                ("pytest -q", 0, Some("ImportError: import file mismatch"))
            } else {
                ("pytest -q --import-mode=importlib", 1, None)
            };
            conn.execute(
                "INSERT INTO tool_history (session_id, tool_name, args, result_summary, success, error, timestamp)
                 VALUES (?1, 'run_shell_command', ?2, '{\"exit_code\": 0}', ?3, ?4, ?5)",
                rusqlite::params![
                    format!("s-{}", i / 4),
                    json!({"command": cmd, "directory": "/home/dev/billing-api"}).to_string(),
                    ok,
                    error,
                    format!("2026-01-{:02}T10:{:02}:00", 6 + i / 4, i),
                ],
            )
            .unwrap();
        }
    }
    let whole = std::fs::read(&gaia).unwrap();
    for k in [1, 2, 3] {
        let cut = dir.path(&format!("cut-{k}.db"));
        std::fs::write(&cut, &whole[..whole.len() * k / 4]).unwrap();
        for from in [&["--from", "gaia"][..], &[]] {
            let out = dir.path(&format!("out-gaia-{k}-{}", from.len()));
            let o = common::compile_to(&cut, &out, from);
            let err = common::stderr(&o);
            if err.contains("panicked") || !matches!(o.status.code(), Some(0..=2)) {
                failures.push(format!(
                    "memory.db cut at {k}/4 {from:?}: exit {:?}: {err}",
                    o.status.code()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// GAIA's tables, as its `memory.db` has them.
const GAIA_SCHEMA: &str = "
CREATE TABLE schema_version (version INTEGER NOT NULL, migrated_at TEXT NOT NULL);
INSERT INTO schema_version VALUES (3, '2026-01-06T10:00:00+01:00');
CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    tool_name TEXT NOT NULL, args TEXT, result_summary TEXT, success INTEGER NOT NULL DEFAULT 1,
    error TEXT, duration_ms INTEGER, timestamp TEXT NOT NULL);
CREATE TABLE knowledge (id INTEGER PRIMARY KEY AUTOINCREMENT, category TEXT NOT NULL,
    content TEXT NOT NULL, domain TEXT, source TEXT, confidence REAL DEFAULT 0.5, metadata TEXT,
    use_count INTEGER DEFAULT 0, context TEXT, sensitive INTEGER DEFAULT 0, entity TEXT,
    created_at TEXT NOT NULL, updated_at TEXT, last_used TEXT, due_at TEXT, reminded_at TEXT,
    embedding BLOB, superseded_by INTEGER);
CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, context TEXT, timestamp TEXT NOT NULL,
    consolidated_at TEXT);
";

/// One tool call: session, command, directory, error, success, timestamp.
type GaiaCall = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    &'static str,
);

/// A GAIA store of three sessions in two workspaces (pytest run from `tests/` fails, from the
/// root it passes; a cargo build fixed with `--locked`), an error row and a tool lesson.
fn gaia_store(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(GAIA_SCHEMA).unwrap();
    let calls: [GaiaCall; 7] = [
        (
            "s-0310-a1",
            "pytest -q",
            "/home/dev/billing-api/tests",
            Some("ModuleNotFoundError: No module named 'billing'"),
            false,
            "2026-03-10T09:15:40.100000+01:00",
        ),
        (
            "s-0310-a1",
            "pytest -q",
            "/home/dev/billing-api",
            None,
            true,
            "2026-03-10T09:17:11+01:00",
        ),
        (
            "s-0311-b2",
            "pytest -q",
            "/home/dev/ledger/tests",
            Some("ModuleNotFoundError: No module named 'ledger'"),
            false,
            "2026-03-11T14:02:00Z",
        ),
        (
            "s-0311-b2",
            "pytest -q",
            "/home/dev/ledger",
            None,
            true,
            "2026-03-11T14:05:30Z",
        ),
        (
            "s-0312-c3",
            "cargo build",
            "/home/dev/renderer",
            Some("failed to select a version for `serde`"),
            false,
            "2026-03-12T08:00:00-05:00",
        ),
        (
            "s-0312-c3",
            "cargo build --locked",
            "/home/dev/renderer",
            None,
            true,
            "2026-03-12T08:03:00-05:00",
        ),
        (
            "s-0312-c3",
            "cargo test --locked",
            "/home/dev/renderer",
            None,
            true,
            "2026-03-12T08:09:00-05:00",
        ),
    ];
    for (session, command, dir, error, ok, at) in calls {
        conn.execute(
            "INSERT INTO tool_history (session_id, tool_name, args, result_summary, success, error, duration_ms, timestamp)
             VALUES (?1, 'run_shell_command', ?2, ?3, ?4, ?5, 1200, ?6)",
            rusqlite::params![
                session,
                json!({"command": command, "directory": dir}).to_string(),
                if ok { "{\"exit_code\": 0}" } else { "{\"exit_code\": 1}" },
                ok,
                error,
                at
            ],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO conversations (session_id, role, content, context, timestamp) VALUES (?1, 'user', 'fix the failing tests', ?2, ?3)",
            rusqlite::params![session, json!({"workspace": dir}).to_string(), at],
        )
        .unwrap();
    }
    conn.execute_batch(
        "INSERT INTO knowledge (category, content, source, metadata, created_at, updated_at) VALUES
           ('error', 'Bind for 0.0.0.0:5432 failed: port is already allocated', 'tool_history',
            '{\"operation\": \"run_shell_command docker\", \"exit_code\": 1}', '2026-03-12T14:20:05+01:00', NULL),
           ('lesson', 'Run pytest from the project root, not from tests/, so the package imports resolve', 'tool_lesson',
            '{\"operation\": \"run_shell_command pytest\", \"fix\": \"pytest -q\"}', '2026-03-11T16:04:00-05:00', NULL);",
    )
    .unwrap();
}

/// Every column of a GAIA store given a value of another type or shape, one row at a time:
/// the store loads and compiles without a panic, the same way twice, and what it reports
/// points into that store.
#[test]
fn gaia_rows_with_odd_values_never_panic() {
    let dir = Scratch::new("mutations-gaia");
    let seed = dir.path("seed.db");
    gaia_store(&seed);
    let rules = std::sync::Arc::new(Rules::builtin());
    // The undamaged store: its three sessions are three experiences.
    let mut sink = Sink::new();
    let gaia = LoadOptions {
        from: Some(skillc::load::Format::Gaia),
        ..LoadOptions::default()
    };
    let corpus = load_with_rules(std::slice::from_ref(&seed), &gaia, &rules, &mut sink).unwrap();
    let ids: Vec<&str> = corpus.experiences.iter().map(|e| &*e.id).collect();
    assert_eq!(ids.len(), 3, "{ids:?} {:#?}", common::seen(&sink));
    use rusqlite::types::Value as Sql;
    let odd = [
        Sql::Null,
        Sql::Integer(0),
        Sql::Integer(-1),
        Sql::Integer(i64::MAX),
        Sql::Real(1e308),
        Sql::Real(f64::NAN),
        Sql::Text(String::new()),
        Sql::Text("{\"command\": \"pytest -q\", \"directory\": \"/home/de".into()),
        Sql::Text("[1, 2, {\"a\": null}]".into()),
        Sql::Text("99999-12-31T25:61:00Z".into()),
        Sql::Text(format!("{}{}", "[".repeat(5_000), "]".repeat(5_000))),
        Sql::Text("x".repeat(200_000)),
        Sql::Text("pytest\0-q".into()),
        Sql::Blob(vec![0xff, 0xfe, 0, b'{']),
    ];
    let columns = [
        (
            "tool_history",
            &[
                "session_id",
                "tool_name",
                "args",
                "result_summary",
                "success",
                "error",
                "timestamp",
            ][..],
        ),
        (
            "knowledge",
            &[
                "category",
                "content",
                "source",
                "metadata",
                "created_at",
                "superseded_by",
            ][..],
        ),
        (
            "conversations",
            &["session_id", "role", "content", "context", "timestamp"][..],
        ),
        ("schema_version", &["version"][..]),
    ];
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    let mut failures = Vec::new();
    let mut total = 0;
    for (table, cols) in columns {
        for col in cols {
            // Half the values per column (the seeded generator picks), to keep the run short.
            let picked: Vec<&Sql> = odd.iter().filter(|_| rng.below(2) == 0).collect();
            for value in picked {
                total += 1;
                let path = dir.path(&format!("memory-{total}.db"));
                std::fs::copy(&seed, &path).unwrap();
                let conn = rusqlite::Connection::open(&path).unwrap();
                let rows: i64 = conn
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .unwrap();
                let row = 1 + rng.below(rows as usize) as i64;
                // SQLite keeps what a column is given, whatever its declared type.
                conn.execute(
                    &format!("UPDATE {table} SET {col} = ?1 WHERE rowid = ?2"),
                    rusqlite::params![value, row],
                )
                .or_else(|_| {
                    // A NOT NULL column: drop the constraint's effect by giving the row a text instead.
                    conn.execute(&format!("UPDATE {table} SET {col} = '' WHERE rowid = ?1"), [row])
                })
                .unwrap();
                drop(conn);
                let what = format!("{table}.{col} of row {row} = {:.60}", format!("{value:?}"));
                let r = rules.clone();
                let p = path.clone();
                let once = move || {
                    let mut sink = Sink::new();
                    let opts = LoadOptions {
                        from: Some(skillc::load::Format::Gaia),
                        ..LoadOptions::default()
                    };
                    let corpus = load_with_rules(std::slice::from_ref(&p), &opts, &r, &mut sink)
                        .expect("the store opens");
                    let comp = pipeline::compile(corpus, sink, &r, &pipeline::Options::default());
                    let mut files = vec![emit::ledger_file(&comp.lessons)];
                    files.extend(emit::render(&comp, &r, &mut Sink::new()));
                    let diags: Vec<(String, Option<String>, String)> = (comp.diagnostics.iter())
                        .map(|d| {
                            (
                                d.code.to_string(),
                                d.location.as_ref().map(|l| l.file.to_string()),
                                d.message.clone(),
                            )
                        })
                        .collect();
                    let files: Vec<String> = files.iter().map(|f| f.text()).collect();
                    (diags, files)
                };
                let first = guarded(&what, once.clone());
                match first {
                    Err(e) => failures.push(e),
                    Ok(first) => {
                        for (code, file, message) in &first.0 {
                            if let Some(file) = file
                                && *file != path.display().to_string()
                            {
                                failures.push(format!("{what}: {code} points at {file}: {message}"));
                            }
                        }
                        if guarded(&what, once).as_ref() != Ok(&first) {
                            failures.push(format!("{what}: a second compile differs"));
                        }
                    }
                }
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
