//! Helpers shared by the integration tests: run the real binary in a scratch directory.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh scratch directory under the target dir, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(rel: &str) -> PathBuf {
    repo().join("tests/fixtures").join(rel)
}

/// Runs `skillc ARGS` from `cwd` (the repository root by default), without colour.
pub fn skillc_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillc"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("skillc runs")
}

pub fn skillc(args: &[&str]) -> Output {
    skillc_in(&repo(), args)
}

/// `skillc compile INPUT --out OUT EXTRA...`, without checking the exit code.
pub fn compile_to(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["compile", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(extra);
    skillc(&args)
}

/// `skillc why DOMAIN INPUT EXTRA… --format json`, which must succeed, as JSON.
pub fn why_json_in(domain: &str, input: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["why", domain, input.to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    let o = skillc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    json(&o)
}

/// `skillc trace ID INPUT --out OUT --format json`, which must succeed, as JSON.
pub fn trace_json(id: &str, input: &Path, out: &Path) -> serde_json::Value {
    let o = skillc(&[
        "trace",
        id,
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    json(&o)
}

/// A JSON array of strings (experience or lesson ids) as a vector.
pub fn ids(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every file under `dir` (relative path → bytes), skipping the state directory.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, false, &mut out);
    out
}

/// `tree` with the state directory (the store, its lock) included.
pub fn tree_with_state(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, true, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, state: bool, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel == ".skillc" && !state {
            continue;
        }
        if p.is_dir() {
            walk(root, &p, state, out);
        } else {
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// A records directory that grows between compiles (`records/`, one file per agent) and the
/// output it compiles into (`out/`).
pub struct Records {
    pub s: Scratch,
}

impl Records {
    pub fn new(name: &str) -> Records {
        let s = Scratch::new(name);
        std::fs::create_dir_all(s.path("records")).unwrap();
        Records { s }
    }

    pub fn records(&self) -> String {
        self.s.path("records").display().to_string()
    }

    pub fn out(&self) -> String {
        self.s.path("out").display().to_string()
    }

    /// Writes `records` as `records/<file>`, one JSON object per line.
    pub fn add(&self, file: &str, records: &[serde_json::Value]) {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(self.s.path("records").join(file), text).unwrap();
    }

    /// The last compile's ledger (no lessons before the first compile).
    pub fn ledger(&self) -> serde_json::Value {
        let path = self.s.path("out/ledger.json");
        if path.is_file() {
            read_json(&path)
        } else {
            serde_json::json!({"lessons": []})
        }
    }

    /// The last compile's diagnostics.json.
    pub fn diagnostics(&self) -> serde_json::Value {
        read_json(&self.s.path("out/diagnostics.json"))
    }

    /// The ids of the active lessons whose text starts with `start`: what an agent copied from
    /// the blocks the night before, for its records' `in_play`.
    pub fn active_ids(&self, start: &str) -> Vec<String> {
        (self.ledger()["lessons"].as_array().unwrap().iter())
            .filter(|l| l["status"] == "active" && l["text"].as_str().unwrap().starts_with(start))
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Compiles the records into the output; the ledger.
    pub fn compile(&self) -> serde_json::Value {
        let o = skillc(&["compile", &self.records(), "--out", &self.out()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&self.s.path("out/ledger.json"))
    }
}

/// Diagnostics of a given code from diagnostics.json.
pub fn diags_of<'a>(diags: &'a serde_json::Value, code: &str) -> Vec<&'a serde_json::Value> {
    diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .collect()
}

/// Does a diagnostic name this experience id (subject or evidence.experiences)?
pub fn names(d: &serde_json::Value, id: &str) -> bool {
    d["subject"] == id
        || d["evidence"]["experiences"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == id))
}

/// (code, file, line, subject, message) of each diagnostic, for assertions on what a load said.
pub fn seen(sink: &skillc::diagnostics::Sink) -> Vec<(&'static str, String, u32, String, String)> {
    sink.iter()
        .map(|d| {
            let loc = d.location.clone();
            (
                d.code,
                loc.as_ref().map_or(String::new(), |l| l.file.to_string()),
                loc.map_or(0, |l| l.line),
                d.subject.clone(),
                d.message.clone(),
            )
        })
        .collect()
}

/// The one lesson of a ledger (`ledger.json`) whose text starts with `start`.
pub fn reading<'a>(ledger: &'a serde_json::Value, start: &str) -> &'a serde_json::Value {
    let found: Vec<&serde_json::Value> = (ledger["lessons"].as_array().unwrap().iter())
        .filter(|l| l["text"].as_str().unwrap().starts_with(start))
        .collect();
    assert_eq!(found.len(), 1, "{start}: {ledger:#}");
    found[0]
}

/// A `run_shell_command` operation: `error` makes it fail; `check` makes it a check with that
/// (label, target), passed when there is no error.
pub fn sh(command: &str, cwd: &str, error: Option<&str>, check: Option<(&str, &str)>) -> serde_json::Value {
    let mut op = serde_json::json!({"tool": "run_shell_command", "args": {"command": command, "cwd": cwd},
                        "status": if error.is_some() { "error" } else { "ok" }});
    if let Some(e) = error {
        op["error"] = serde_json::json!(e);
    }
    if let Some((label, target)) = check {
        op["check"] = serde_json::json!({"label": label, "target": target, "passed": error.is_none()});
    }
    op
}
