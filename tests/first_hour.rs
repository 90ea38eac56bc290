//! A user's first hour with skillc, and a team's nightly job, on a team's records nobody here
//! wrote (tests/fixtures/first_hour): two agents' JSONL (Claude Code's `Bash`/`Edit`/`Read`,
//! Gemini CLI's `run_shell_command`/`WebFetch`), Codex's argv commands in a JSON array, people's
//! notes in YAML, claimed lessons, an OmniMem export; six projects, domains spelled as agents
//! spell them (`py`, `ts`, `k8s`, `tf`, `Node.js`, `Python 3`), and a few broken records (a
//! truncated line, wrong types, a duplicate id, an unknown field). Every command is used as the
//! README tells a new user to use it, and what it prints is read as a person reads it.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn team() -> std::path::PathBuf {
    fixture("first_hour")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What a count followed by "(s)" looks like in a message: "1 experience(s)". Counts are
/// worded as the summary words them, "1 experience" / "2 experiences".
fn hedged_plural(text: &str) -> Option<&str> {
    text.lines().find(|l| {
        l.match_indices("(s)")
            .any(|(i, _)| l[..i].chars().last().is_some_and(|c| c.is_ascii_alphabetic()))
    })
}

fn lessons(ledger: &Value) -> &Vec<Value> {
    ledger["lessons"].as_array().unwrap()
}

/// The compile a user runs first, read on both streams: the summary (and only the summary) on
/// stdout, every diagnostic on stderr in the registry's style and without colour, counts worded
/// as counts, `--strict` failing with 1 on the same run, `--format json` one document, and
/// the output the same at one and two threads and unchanged by a second run.
#[test]
fn a_teams_records_compile_with_every_message_in_its_place() {
    let s = Scratch::new("first-hour-compile");
    let out = s.path("out");
    let o = compile_to(&team(), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (summary, diags) = (stdout(&o), stderr(&o));
    assert!(
        summary.starts_with("compiled 31 experiences and 3 claims: "),
        "{summary}"
    );
    assert!(
        !summary.contains("error[") && !summary.contains("note["),
        "{summary}"
    );
    // No G006: claim cl-01 cites cc-0102, tagged "Python 3", which is python (it was once
    // refused as unsupported, python-3 being another domain).
    for code in [
        "L001", "L003", "L004", "L005", "L009", "G001", "G002", "G003", "G005", "S005",
    ] {
        assert!(diags.contains(&format!("[{code}]")), "{code} missing: {diags}");
    }
    assert!(
        !diags.contains('\u{1b}') && !summary.contains('\u{1b}'),
        "no colour off a terminal"
    );
    assert_eq!(hedged_plural(&diags), None, "a count is worded as one: {diags}");
    let ledger = read_json(&out.join("diagnostics.json"));
    for d in ledger["diagnostics"].as_array().unwrap() {
        let m = d["message"].as_str().unwrap();
        assert!(
            !m.ends_with('.') && !m.starts_with(|c: char| c.is_uppercase()),
            "{m}"
        );
        assert_eq!(hedged_plural(m), None, "{}: {m}", d["code"]);
    }
    // The messages a user meets first, worded for the count they hold.
    for line in [
        "lesson has 1 supporting experience; a rule needs 2",
        "claim cites 1 id that names no experience in the input: cc-9999",
        "in_play names 1 id that is no lesson: L000000000000",
    ] {
        assert!(diags.contains(line), "{line}: {diags}");
    }

    // The same run with --strict: the same output, exit 1 for the refused records.
    let strict = compile_to(&team(), &out, &["--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(stdout(&strict).ends_with("(0 changed)\n"), "{}", stdout(&strict));

    // --format json: one JSON document on stdout, the diagnostics still on stderr.
    let j = compile_to(&team(), &out, &["--format", "json"]);
    let doc = json(&j);
    assert_eq!(
        (doc["experiences"].as_u64(), doc["changed_files"].as_u64()),
        (Some(31), Some(0))
    );
    assert!(stderr(&j).contains("error[L004]"));

    // One and two threads, into directories elsewhere: byte-identical.
    let (t1, t2) = (s.path("deep/t1"), s.path("deep/t2"));
    assert_eq!(
        compile_to(&team(), &t1, &["--threads", "1"]).status.code(),
        Some(0)
    );
    assert_eq!(
        compile_to(&team(), &t2, &["--threads", "2"]).status.code(),
        Some(0)
    );
    assert_eq!(tree(&t1), tree(&t2));
    assert_eq!(tree(&t1), tree(&out));
}

/// `why` and `trace` as the README shows them: a domain with rules, an aliased spelling, a
/// domain with no rule but near misses of every kind, an unknown one; an experience that
/// compiled, one held back, one refused at load, an unknown id (exit 2).
#[test]
fn why_and_trace_answer_in_counts_a_person_reads() {
    let s = Scratch::new("first-hour-why");
    let out = s.path("out");
    assert_eq!(compile_to(&team(), &out, &[]).status.code(), Some(0));
    let input = team();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend([p(&input), "--out", p(&out)]);
        skillc(&all)
    };

    // Aliases are read as records' domains are: `k8s` asks for kubernetes, `ts` typescript.
    for (asked, domain) in [
        ("k8s", "kubernetes"),
        ("ts", "typescript"),
        ("Node.js", "node"),
        ("tf", "terraform"),
    ] {
        let w = why_json_in(asked, &team(), &["--out", p(&out)]);
        assert_eq!(w["domain"], domain, "{asked}");
        assert!(w["rules"].as_u64().unwrap() >= 1, "{asked}: {w:#}");
    }

    // postgres compiled one lesson from one experience in one project: every count is one.
    let o = run(&["why", "postgres"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = stdout(&o);
    assert!(
        report.starts_with("domain postgres: 0 rules, 1 lesson from 4 candidates in 4 experiences\n"),
        "{report}"
    );
    assert!(
        report.contains("\n  - 3 experiences failed or were abandoned (gm-0212, gm-0213, gm-0214)"),
        "{report}"
    );
    assert!(
        report.contains("\npool: 4 experiences from 4 projects;"),
        "{report}"
    );
    assert_eq!(hedged_plural(&report), None, "{report}");
    assert_eq!(hedged_plural(&stderr(&o)), None, "{}", stderr(&o));

    // W001 says what its id is: a lesson (`L…`) or a cluster held back before it became one.
    let err = stderr(&o);
    let notes: Vec<&str> = (err.lines())
        .filter_map(|l| l.strip_prefix("note[W001]: near-miss: "))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("lesson L396c200a54d0 is 1 of 2")),
        "{notes:#?}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with("cluster C")
            && n.ends_with("has 2 supporting experiences, enough for a rule, but is held back")),
        "{notes:#?}"
    );
    for n in &notes {
        let id = n.split(' ').nth(1).unwrap();
        assert_eq!(n.starts_with("lesson "), id.starts_with('L'), "{n}");
        assert_eq!(n.starts_with("cluster "), id.starts_with('C'), "{n}");
    }
    // With a threshold of one, a held-back cluster of one experience has enough: in the singular.
    let o = run(&["why", "postgres", "--min-reinforcement", "1"]);
    assert!(
        stderr(&o).contains("has 1 supporting experience, enough for a rule, but is held back"),
        "{}",
        stderr(&o)
    );

    // A domain no record names is a report, not a failure; a misspelt one gets a suggestion.
    let o = run(&["why", "cobol"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("note[W003]: empty-domain"));
    let report = stdout(&o);
    let listed: Vec<&str> = (report.lines()).filter(|l| !l.starts_with("pool: ")).collect();
    assert_eq!(hedged_plural(&listed.join("\n")), None, "{report}");
    let o = run(&["why", "pyhton"]);
    assert!(stdout(&o).contains("did you mean `python`?"), "{}", stdout(&o));

    // trace: a rule's experience, a held-back one, a refused record, an unknown id.
    let o = run(&["trace", "cc-0110"]);
    assert_eq!(o.status.code(), Some(0));
    let t = stdout(&o);
    assert!(
        t.contains("\n1 candidate:\n") && t.contains("\nin play: 1 lesson\n"),
        "{t}"
    );
    assert_eq!(hedged_plural(&t), None, "{t}");
    assert!(trace_json("gm-0205", &team(), &out).to_string().contains("G001"));
    let o = run(&["trace", "gm-0211"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("refused at load (L003)"), "{}", stdout(&o));
    assert_eq!(run(&["trace", "gm-0211", "--strict"]).status.code(), Some(1));
    let o = run(&["trace", "no-such-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty() && stderr(&o).starts_with("error: no experience or claim"));
}

/// A lesson retired, taught again by later records under a new id, then restored: the restored
/// lesson supersedes the copy, and the ledger's links say so one way only. The copy
/// superseded by the restored lesson while naming it as the lesson it came after made
/// the two supersede each other, and `lessons history` walked them out of order.
#[test]
fn a_restore_after_the_lesson_was_learned_again_leaves_one_chain_without_a_loop() {
    let s = Scratch::new("first-hour-restore");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    for e in std::fs::read_dir(team()).unwrap().flatten() {
        std::fs::copy(e.path(), records.join(e.file_name())).unwrap();
    }
    let out = s.path("out");
    let compile = || {
        let o = compile_to(&records, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&out.join("ledger.json"))
    };
    let lessons_cmd = |args: &[&str]| {
        let mut all = vec!["lessons"];
        all.extend(args);
        all.extend(["--out", p(&out)]);
        let o = skillc(&all);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        o
    };
    let cargo_update = |ledger: &Value, status: &str| -> Vec<String> {
        (lessons(ledger).iter())
            .filter(|l| l["text"] == "cargo update" && l["kind"] == "avoid" && l["status"] == status)
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect()
    };
    let active = cargo_update(&compile(), "active");
    let [old] = &active[..] else {
        panic!("one cargo update rule: {active:?}")
    };
    lessons_cmd(&[
        "retire",
        old,
        "--reason",
        "we pin the toolchain with rust-toolchain.toml now",
    ]);
    compile();
    // Two later sessions, in two projects, hit the same wall.
    let late = |id: &str, at: &str, project: &str| {
        serde_json::json!({"id": id, "recorded_at": at, "domains": ["rust"], "project": project,
            "task": "bump a dependency", "outcome": "abandoned",
            "dead_ends": [{"name": "cargo update",
                           "reason": "pulled a tokio release that needs a newer rustc than our pinned toolchain"}],
            "operations": [{"tool": "Bash", "args": {"command": "cargo update"}, "status": "ok"}]})
    };
    let lines = [
        late(
            "cc-0120",
            "2026-11-20T10:00:00Z",
            "git@gitlab.com:acme/search-svc.git",
        ),
        late(
            "cc-0121",
            "2026-11-21T10:00:00Z",
            "https://github.com/acme/ops-cli.git",
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(records.join("claude-code-late.jsonl"), text).unwrap();
    let relearned = cargo_update(&compile(), "active");
    let [copy] = &relearned[..] else {
        panic!("taught again: {relearned:?}")
    };
    assert_ne!(copy, old);
    lessons_cmd(&["restore", old]);
    let ledger = compile();
    assert_eq!(cargo_update(&ledger, "active"), vec![old.clone()]);

    // Every link `A superseded_by B` and `B supersedes A` is one edge A → B; no cycle.
    let mut next: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for l in lessons(&ledger) {
        let id = l["id"].as_str().unwrap().to_string();
        if let Some(by) = l["superseded_by"].as_str() {
            next.entry(id.clone()).or_default().insert(by.to_string());
        }
        if let Some(before) = l["supersedes"].as_str() {
            next.entry(before.to_string()).or_default().insert(id.clone());
        }
        assert!(
            l["supersedes"].is_null() || l["supersedes"] != l["superseded_by"],
            "a lesson supersedes the lesson that supersedes it: {l:#}"
        );
    }
    fn reaches(
        next: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        to: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        (next.get(from).into_iter().flatten())
            .any(|n| n == to || (seen.insert(n.clone()) && reaches(next, n, to, seen)))
    }
    for id in next.keys() {
        assert!(
            !reaches(&next, id, id, &mut BTreeSet::new()),
            "{id} supersedes itself through {next:#?}"
        );
    }
    let by_id: BTreeMap<&str, &Value> = (lessons(&ledger).iter())
        .map(|l| (l["id"].as_str().unwrap(), l))
        .collect();
    assert_eq!(by_id[old.as_str()]["supersedes"], copy.as_str());
    assert_eq!(by_id[copy.as_str()]["superseded_by"], old.as_str());

    // `lessons history` walks the chain from either end: the copy, then the lesson restored
    // in its place, each once, and its history still says what the copy re-learned.
    for from in [old, copy] {
        let h = json(&lessons_cmd(&["history", from, "--format", "json"]));
        let chain: Vec<&str> = (h["chain"].as_array().unwrap().iter())
            .map(|l| l["id"].as_str().unwrap())
            .collect();
        assert_eq!(chain, [copy.as_str(), old.as_str()], "from {from}");
    }
    let text = stdout(&lessons_cmd(&["history", old]));
    assert!(text.contains(&format!("— after {old}")), "{text}");
    assert!(text.contains(&format!("taken over from {copy}")), "{text}");
}
