//! Realistic input the way memory exports really arrive: files written by `jq`, by an export
//! API, by hand. Each test holds one shape a real file took that skillc once read wrongly.

mod common;

use std::fs;

use common::{Scratch, seen};
use serde_json::{Value, json};
use skillc::diagnostics::Sink;
use skillc::load::{LoadOptions, load, load_texts};

/// Two agents' records from two projects, with the tool calls they made.
fn exported() -> Vec<Value> {
    vec![
        json!({"id": "ci-0301-npm", "recorded_at": "2026-03-01T10:00:00Z", "domains": ["node"],
               "project": "git@github.com:acme/web.git", "task": "CI installs drift from the lockfile",
               "outcome": "succeeded",
               "lesson": "Use npm ci instead of npm install in CI so the lockfile is respected.",
               "operations": [
                   {"tool": "Bash", "args": {"command": "npm install", "cwd": "/srv/web"}, "status": "ok"},
                   {"tool": "Bash", "args": {"command": "npm test", "cwd": "/srv/web"}, "status": "ok",
                    "check": {"label": "tests", "target": "web", "passed": true}}]}),
        json!({"id": "ci-0302-npm", "recorded_at": "2026-03-02T08:30:00+01:00", "domains": ["node"],
               "project": "git@github.com:acme/api.git", "task": "Flaky dependency versions in CI",
               "outcome": "succeeded",
               "lesson": "Use npm ci instead of npm install in CI so the lockfile is respected.",
               "gotchas": ["npm ci deletes node_modules first, so a cached node_modules is wasted"]}),
        json!({"id": "tf-0303-lock", "recorded_at": "2026-03-03T12:00:00Z", "domains": ["terraform"],
               "project": "git@github.com:acme/infra.git", "task": "Parallel plans fail on the state lock",
               "outcome": "succeeded",
               "operations": [
                   {"tool": "Bash", "args": {"command": "terraform plan", "cwd": "/srv/infra"},
                    "status": "error", "error": "Error acquiring the state lock"},
                   {"tool": "Bash", "args": {"command": "terraform plan -lock-timeout=60s", "cwd": "/srv/infra"},
                    "status": "ok", "check": {"label": "plan", "passed": true}}]}),
    ]
}

fn ids(c: &skillc::model::Corpus) -> Vec<(String, u32)> {
    c.experiences
        .iter()
        .map(|e| (e.id.to_string(), e.source.line))
        .collect()
}

/// `jq '.[]' export.json > records.jsonl` (jq pretty-prints unless given `-c`) writes each
/// record over many lines, one after another; an export API may write one JSON array into a
/// `.jsonl` file, on one line or over many. Every record is
/// read, at the line it starts on, with no diagnostic — where each line of the file used to be
/// refused as broken JSON (22 L001 for two records) and an array line refused as "not an
/// object". The same stream in a `.json` file is read whole too (only its first object was).
/// Read from disk and from memory alike.
#[test]
fn records_pretty_printed_one_after_another_or_in_an_array_in_a_jsonl_file_are_read() {
    let records = exported();
    let stream: String = records
        .iter()
        .map(|r| serde_json::to_string_pretty(r).unwrap() + "\n")
        .collect();
    let starts: Vec<u32> = {
        let mut line = 1;
        records
            .iter()
            .map(|r| {
                let at = line;
                line += serde_json::to_string_pretty(r).unwrap().lines().count() as u32;
                at
            })
            .collect()
    };
    let one_line_array = serde_json::to_string(&records).unwrap() + "\n";
    let pretty_array = serde_json::to_string_pretty(&records).unwrap();
    let want = |lines: &[u32]| -> Vec<(String, u32)> {
        records
            .iter()
            .zip(lines)
            .map(|(r, &l)| (r["id"].as_str().unwrap().to_string(), l))
            .collect()
    };
    let array_starts: Vec<u32> = {
        // `to_string_pretty` puts each element's `{` on a line of its own after the `[`.
        let text = &pretty_array;
        text.lines()
            .enumerate()
            .filter(|(_, l)| *l == "  {")
            .map(|(i, _)| i as u32 + 1)
            .collect()
    };
    let cases: [(&str, &str, Vec<u32>); 4] = [
        ("jq.jsonl", &stream, starts.clone()),
        ("jq.json", &stream, starts.clone()),
        ("array.jsonl", &one_line_array, vec![1, 1, 1]),
        ("pretty-array.jsonl", &pretty_array, array_starts),
    ];
    let dir = Scratch::new("robust-jq");
    for (name, text, lines) in &cases {
        let path = dir.path(name);
        fs::write(&path, text).unwrap();
        let mut sink = Sink::new();
        let c = load(&[path], &LoadOptions::default(), &mut sink).unwrap();
        assert_eq!(ids(&c), want(lines), "{name} from disk: {:#?}", seen(&sink));
        assert!(sink.is_empty(), "{name} from disk: {:#?}", seen(&sink));
        let mut sink = Sink::new();
        let c = load_texts(&[(name, text)], &LoadOptions::default(), &mut sink);
        assert_eq!(ids(&c), want(lines), "{name} in memory: {:#?}", seen(&sink));
        assert!(sink.is_empty(), "{name} in memory: {:#?}", seen(&sink));
    }
}

/// A stream of pretty-printed records with one broken in the middle (a key lost its comma when
/// edited by hand) costs only that record, said once and at the broken line: its braces still
/// close, so the record after it is read; JSON Lines whose first line holds a byte that is not UTF-8
/// and whose third line is cut short, or whose first line is an array cut short, stays JSON
/// Lines, each bad line costing only itself.
#[test]
fn a_broken_record_in_a_pretty_printed_stream_is_reported_once_and_json_lines_stay_lines() {
    let records = exported();
    let mut second = serde_json::to_string_pretty(&records[1]).unwrap();
    second = second.replacen("\"domains\"", "\"note\": \"x\"\n  \"domains\"", 1);
    let first = serde_json::to_string_pretty(&records[0]).unwrap();
    let text = format!(
        "{first}\n{second}\n{}\n",
        serde_json::to_string_pretty(&records[2]).unwrap()
    );
    let broken_line = first.lines().count() as u32
        + second.lines().position(|l| l.contains("\"domains\"")).unwrap() as u32
        + 1;
    let mut sink = Sink::new();
    let c = load_texts(&[("jq.jsonl", &text)], &LoadOptions::default(), &mut sink);
    let third_line = (first.lines().count() + second.lines().count()) as u32 + 1;
    assert_eq!(
        ids(&c),
        [
            ("ci-0301-npm".to_string(), 1),
            ("tf-0303-lock".to_string(), third_line)
        ]
    );
    let got = seen(&sink);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].0, got[0].2), ("L001", broken_line), "{got:#?}");
    assert!(got[0].4.contains("the record was skipped"), "{got:#?}");

    // JSON Lines: line 1 has a Latin-1 byte, line 3 is cut short; lines 2 and 4 are read.
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    let mut bytes = lines[0].replacen("respected", "respect\u{e9}d", 1).into_bytes();
    let at = bytes.iter().position(|&b| b == 0xc3).unwrap();
    bytes.splice(at..at + 2, [0xe9]);
    bytes.push(b'\n');
    bytes.extend_from_slice(lines[1].as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(&lines[2].as_bytes()[..lines[2].len() / 2]);
    bytes.push(b'\n');
    let fourth = json!({"id": "ci-0304-npm", "recorded_at": "2026-03-04T09:00:00Z", "domains": "node",
                        "outcome": "succeeded", "lesson": "Use npm ci in CI."});
    bytes.extend_from_slice(fourth.to_string().as_bytes());
    bytes.push(b'\n');
    let dir = Scratch::new("robust-lines");
    let path = dir.path("agent.jsonl");
    fs::write(&path, &bytes).unwrap();
    let mut sink = Sink::new();
    let c = load(&[path], &LoadOptions::default(), &mut sink).unwrap();
    assert_eq!(
        ids(&c),
        [("ci-0302-npm".to_string(), 2), ("ci-0304-npm".to_string(), 4)],
        "{:#?}",
        seen(&sink)
    );
    let lines: Vec<(&str, u32)> = seen(&sink).iter().map(|d| (d.0, d.2)).collect();
    assert_eq!(lines, [("L001", 1), ("L001", 3)], "{:#?}", seen(&sink));

    // JSON Lines whose first line is an array cut short: that line costs only itself.
    let text = format!(
        "[{}, {}\n{}\n{}\n",
        records[0],
        &records[1].to_string()[..40],
        records[1],
        records[2]
    );
    let mut sink = Sink::new();
    let c = load_texts(&[("agent.jsonl", &text)], &LoadOptions::default(), &mut sink);
    assert_eq!(
        ids(&c),
        [("ci-0302-npm".to_string(), 2), ("tf-0303-lock".to_string(), 3)],
        "{:#?}",
        seen(&sink)
    );
    let lines: Vec<(&str, u32)> = seen(&sink).iter().map(|d| (d.0, d.2)).collect();
    assert_eq!(lines, [("L001", 1)], "{:#?}", seen(&sink));
}

/// An OmniMem export run through `jq '.[]'` is its memories pretty-printed one after another:
/// the format check already recognised it, and every memory is now read, where the reader
/// took the first and skipped the rest as "content after the end of the json document".
#[test]
fn an_omnimem_export_pretty_printed_one_memory_after_another_is_read_whole() {
    let memories = [
        json!({"key": "mem-20260301-pytest-root", "tags": "[\"python\", \"pytest\"]", "outcome": "succeeded",
               "effort_score": "2", "created_at": "1772359200", "project": "git@github.com:acme/billing.git",
               "lesson": "Run pytest from the repository root so conftest.py is picked up.", "state": "active"}),
        json!({"key": "mem-20260302-pytest-root", "tags": ["python"], "outcome": "succeeded", "effort_score": 4,
               "created_at": 1772445600.25, "project": "git@github.com:acme/ledger.git",
               "lesson": "Run pytest from the repository root so conftest.py is picked up."}),
        json!({"key": "mem-20260303-uv", "tags": "python", "outcome": "succeeded",
               "created_at": "2026-03-03T10:00:00+02:00", "lesson": "Use uv pip compile to pin dependencies."}),
    ];
    let text: String = memories
        .iter()
        .map(|m| serde_json::to_string_pretty(m).unwrap() + "\n")
        .collect();
    let second = serde_json::to_string_pretty(&memories[0])
        .unwrap()
        .lines()
        .count() as u32
        + 1;
    let third = second
        + serde_json::to_string_pretty(&memories[1])
            .unwrap()
            .lines()
            .count() as u32;
    for name in ["memories.jsonl", "memories.json"] {
        let mut sink = Sink::new();
        let c = load_texts(&[(name, &text)], &LoadOptions::default(), &mut sink);
        assert_eq!(
            ids(&c),
            [
                ("mem-20260301-pytest-root".to_string(), 1),
                ("mem-20260302-pytest-root".to_string(), second),
                ("mem-20260303-uv".to_string(), third)
            ],
            "{name}: {:#?}",
            seen(&sink)
        );
        assert!(sink.is_empty(), "{name}: {:#?}", seen(&sink));
    }
}

/// Files that each began with a UTF-8 byte-order mark (PowerShell 5's `Out-File -Encoding
/// utf8`, Notepad) joined with `cat a b > all`: the mark of the second file starts a line in
/// the middle. Every record is read — in JSON Lines, in YAML documents, in pretty-printed JSON
/// documents and in an OmniMem export — where the record after the mark was refused as "not
/// valid json: expected value" (and in YAML the whole first document was lost).
#[test]
fn files_that_each_began_with_a_byte_order_mark_joined_into_one_are_read_whole() {
    const BOM: &str = "\u{feff}";
    let records = exported();
    let jsonl = format!("{BOM}{}\n{BOM}{}\n", records[0], records[1]);
    let json = format!(
        "{BOM}{}\n{BOM}{}\n",
        serde_json::to_string_pretty(&records[0]).unwrap(),
        serde_json::to_string_pretty(&records[2]).unwrap()
    );
    let third = serde_json::to_string_pretty(&records[0]).unwrap().lines().count() as u32 + 1;
    let yaml = format!(
        "{BOM}- id: ci-0310-pip\n  recorded_at: 2026-03-10T09:00:00Z\n  domains: [python]\n  outcome: succeeded\n  \
         lesson: Pin pip in CI images.\n{BOM}---\n- id: ci-0311-pip\n  recorded_at: 2026-03-11T09:00:00Z\n  \
         domains: [python]\n  outcome: succeeded\n  lesson: Pin pip in CI images.\n"
    );
    let memory = |key: &str| {
        json!({"key": key, "tags": ["python"], "outcome": "succeeded", "created_at": "1772359200",
               "lesson": "Run pytest from the repository root."})
        .to_string()
    };
    let omnimem = format!("{BOM}{}\n{BOM}{}\n", memory("mem-a"), memory("mem-b"));
    // (file, text, the records' ids and first lines)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, u32)]);
    let cases: [Case; 4] = [
        ("joined.jsonl", &jsonl, &[("ci-0301-npm", 1), ("ci-0302-npm", 2)]),
        (
            "joined.json",
            &json,
            &[("ci-0301-npm", 1), ("tf-0303-lock", third)],
        ),
        ("joined.yaml", &yaml, &[("ci-0310-pip", 1), ("ci-0311-pip", 7)]),
        ("memories.jsonl", &omnimem, &[("mem-a", 1), ("mem-b", 2)]),
    ];
    let dir = Scratch::new("robust-bom");
    for (name, text, want) in &cases {
        let want: Vec<(String, u32)> = want.iter().map(|&(id, l)| (id.to_string(), l)).collect();
        let path = dir.path(name);
        fs::write(&path, text).unwrap();
        let mut sink = Sink::new();
        let c = load(&[path], &LoadOptions::default(), &mut sink).unwrap();
        assert_eq!(ids(&c), want, "{name}: {:#?}", seen(&sink));
        assert!(sink.is_empty(), "{name}: {:#?}", seen(&sink));
    }
}

/// Some exports wrap their records in an object (`{"version": 2, "exported_at": …,
/// "experiences": [...]}`). Such a file is one L001 that names the list and says its records
/// were not read — where it was four "record has no `id`"-style errors, each with the help "add
/// the field", and an unknown-field warning per key, as if the records lacked their fields. In
/// YAML alike. A record that merely has an extra list-valued field is still a record.
#[test]
fn records_wrapped_in_an_object_are_one_diagnostic_naming_the_list() {
    let records = exported();
    let wrapped = serde_json::to_string_pretty(&json!({
        "version": 2, "exported_at": "2026-03-05T00:00:00Z", "experiences": records
    }))
    .unwrap();
    let yaml = "version: 2\nexperiences:\n  - id: ci-0310-pip\n    recorded_at: 2026-03-10T09:00:00Z\n    \
                domains: [python]\n    outcome: succeeded\n";
    for (name, text, n) in [("export.json", wrapped.as_str(), 3), ("export.yaml", yaml, 1)] {
        let mut sink = Sink::new();
        let c = load_texts(&[(name, text)], &LoadOptions::default(), &mut sink);
        assert!(c.experiences.is_empty());
        let got = seen(&sink);
        assert_eq!(got.len(), 1, "{name}: {got:#?}");
        assert_eq!((got[0].0, got[0].2), ("L001", 1), "{name}: {got:#?}");
        assert!(
            got[0].4.contains(&format!(
                "{n} object{} under `experiences`",
                if n == 1 { "" } else { "s" }
            )),
            "{name}: {got:#?}"
        );
    }
    // A record with an unknown list of objects is still a record, with its L005.
    let mut record = records[1].clone();
    record["attachments"] = json!([{"name": "ci.log"}]);
    let mut sink = Sink::new();
    let c = load_texts(
        &[("one.jsonl", &record.to_string())],
        &LoadOptions::default(),
        &mut sink,
    );
    assert_eq!(ids(&c), [("ci-0302-npm".to_string(), 1)]);
    let codes: Vec<&str> = seen(&sink).iter().map(|d| d.0).collect();
    assert_eq!(codes, ["L005"]);
}

/// Two months of an export that writes a JSON array, joined with `cat march.json april.json >
/// all.json` (or `jq . march.json april.json`): every record of both arrays is read, where
/// those of the second were skipped as "content after the end of the json document".
/// Content after them that is no JSON value is still reported once, at its line.
#[test]
fn json_arrays_joined_into_one_file_are_all_read() {
    let records = exported();
    let march = serde_json::to_string_pretty(&records[..2]).unwrap();
    let april = serde_json::to_string(&records[2..]).unwrap();
    let april_line = march.lines().count() as u32 + 1;
    let text = format!("{march}\n{april}\n");
    for name in ["all.json", "all.jsonl"] {
        let mut sink = Sink::new();
        let c = load_texts(&[(name, &text)], &LoadOptions::default(), &mut sink);
        let got = ids(&c);
        assert_eq!(
            got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            ["ci-0301-npm", "ci-0302-npm", "tf-0303-lock"],
            "{name}: {:#?}",
            seen(&sink)
        );
        assert_eq!((got[0].1, got[2].1), (2, april_line), "{name}");
        assert!(sink.is_empty(), "{name}: {:#?}", seen(&sink));
    }
    let mut sink = Sink::new();
    let trailing = format!("{march}\n{april}\n# end of export\n");
    let c = load_texts(&[("all.json", &trailing)], &LoadOptions::default(), &mut sink);
    assert_eq!(c.experiences.len(), 3);
    let got = seen(&sink);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].0, got[0].2), ("L001", april_line + 1), "{got:#?}");
}

/// A directory of nightly OmniMem exports (`tests/fixtures/omnimem-nightly`): each night holds
/// every memory again. The repeats of one night's file fold into one L004 per night's file
/// (naming every earlier file its records were first read from), not one per memory per night, and `why` still counts every repeated record; the memory
/// edited between two nights is an L004 error of its own (its first version is kept), so
/// `--strict` exits 1 for it and for nothing else.
#[test]
fn nightly_omnimem_snapshots_fold_their_repeats_and_why_counts_them_apart() {
    let input = common::fixture("omnimem-nightly");
    let out = Scratch::new("nightly-snapshots");
    let o = common::compile_to(&input, &out.path("out"), &["--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error[")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("`mem-7f3a03` changed between snapshots"),
        "{err}"
    );
    let l004: Vec<&str> = err.lines().filter(|l| l.starts_with("warning[L004]")).collect();
    assert_eq!(l004.len(), 2, "{err}");
    assert!(l004[0].contains("6 records repeat records of"), "{err}");
    assert!(
        l004[1].contains("6 records repeat records of 2 files read before"),
        "{err}"
    );
    assert!(err.contains("read only the newest snapshot"), "{err}");
    // Eight memories, each compiled once.
    assert!(
        common::stdout(&o).contains("compiled 8 experiences"),
        "{}",
        common::stdout(&o)
    );
    // The edited memory's first version is the one compiled.
    let ledger = std::fs::read_to_string(out.path("out").join("ledger.json")).unwrap();
    assert!(ledger.contains("-lock-timeout=60s"), "{ledger}");
    assert!(!ledger.contains("-lock-timeout=120s"), "{ledger}");
    // terraform: two repeats on the second night, one repeat and one edit on the third. Only
    // the edit lost something (its new content); the repeats are counted apart, every one.
    let why = common::why_json_in("terraform", &input, &[]);
    let refused = &why["refused_at_load"];
    assert_eq!(refused["records"], 1, "{refused:#}");
    assert_eq!(refused["first"][0]["record"], "mem-7f3a03", "{refused:#}");
    assert_eq!(why["repeated_at_load"], 3, "{why:#}");
    let python = common::why_json_in("python", &input, &[]);
    assert_eq!(python["refused_at_load"]["records"], 0);
    assert_eq!(python["repeated_at_load"], 4);
    // `why` does not ask to fix records that lost nothing.
    let o = common::skillc(&["why", "python", input.to_str().unwrap()]);
    let text = common::stdout(&o);
    assert!(!text.contains("refused at load"), "{text}");
    assert!(
        text.contains("4 records naming python repeat records already read"),
        "{text}"
    );
    assert!(text.contains("nothing they say is lost"), "{text}");
}

/// A lesson written with a space before its colon, as French typography puts one ("Avant de
/// pousser : lancez ruff"), or a colon standing alone between words, used to panic the
/// compile while clustering tokenised it (a chunk that was only a colon left nothing to read
/// as a setting key). Both lessons compile into one rule, and the colon still ends a clause.
#[test]
fn a_lesson_with_a_colon_standing_alone_compiles() {
    let records: String = [
        json!({"id": "fr-0401-ruff", "recorded_at": "2026-04-01T09:00:00Z", "domains": ["python"],
               "project": "git@github.com:acme/facturation.git", "outcome": "succeeded",
               "lesson": "Avant de pousser : run ruff check --fix so CI lints the same code"}),
        json!({"id": "fr-0402-ruff", "recorded_at": "2026-04-02T09:00:00Z", "domains": ["python"],
               "project": "git@github.com:acme/api.git", "outcome": "succeeded",
               "lesson": "Avant de pousser : run ruff check --fix so CI lints the same code"}),
        json!({"id": "fr-0403-kubectl", "recorded_at": "2026-04-03T09:00:00Z", "domains": ["kubernetes"],
               "outcome": "succeeded",
               "lesson": "kubectl rollout status : wait for it before running smoke tests"}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect();
    let rules = skillc::policy::Rules::builtin();
    let mut sink = Sink::new();
    let corpus = load_texts(&[("agents.jsonl", &records)], &LoadOptions::default(), &mut sink);
    assert_eq!(corpus.experiences.len(), 3, "{:#?}", seen(&sink));
    let comp = skillc::pipeline::compile(corpus, sink, &rules, &skillc::pipeline::Options::default());
    let rules: Vec<&str> = comp.rules().map(|l| l.text.as_str()).collect();
    assert_eq!(
        rules,
        ["Avant de pousser : run ruff check --fix so CI lints the same code"]
    );
}

/// An agent that writes its JSONL by string formatting leaves a raw tab (pasted from a
/// Makefile) or an ESC (a coloured terminal error) inside a string, which JSON requires
/// escaped. The record is refused as before, but named by its id, with the field and the
/// character, where the L001 named only the file; `why` counts it for its domain. The
/// records around it are read, and an escaped `\t` elsewhere is not blamed.
#[test]
fn a_raw_control_character_is_reported_with_the_record_id_and_field() {
    let records = exported();
    let mut tab = records[1].clone();
    tab["id"] = json!("ci-0304-make");
    tab["task"] = json!("Makefile recipe\twith an escaped tab");
    tab["lesson"] = json!("Indent Makefile recipes with TAB-HERE, never spaces.");
    let tab = tab.to_string().replace("TAB-HERE", "\t");
    let mut esc = records[2].clone();
    esc["id"] = json!("tf-0305-lock");
    esc["operations"][0]["error"] = json!("ESC-HERE[31mError acquiring the state lockESC-HERE[0m");
    let esc = esc.to_string().replace("ESC-HERE", "\u{1b}");
    let text = format!("{}\n{tab}\n{esc}\n{}\n", records[0], records[2]);
    let mut sink = Sink::new();
    let c = load_texts(&[("agent.jsonl", &text)], &LoadOptions::default(), &mut sink);
    assert_eq!(
        ids(&c),
        [("ci-0301-npm".to_string(), 1), ("tf-0303-lock".to_string(), 4)]
    );
    assert_eq!(sink.len(), 2, "{:#?}", seen(&sink));
    let (t, e) = (&sink[0], &sink[1]);
    assert_eq!((t.code, t.subject.as_str()), ("L001", "ci-0304-make"));
    assert_eq!(t.location.as_ref().map(|l| l.line), Some(2));
    assert!(t.message.contains("U+0009 (tab), in `lesson`"), "{}", t.message);
    assert_eq!(t.evidence["field"], "lesson");
    assert_eq!(t.evidence["domains"], json!(["node"]));
    assert!(t.help.contains("escape the character"), "{}", t.help);
    assert_eq!((e.code, e.subject.as_str()), ("L001", "tf-0305-lock"));
    assert_eq!(e.evidence["field"], "operations[0].error");
    assert_eq!(e.evidence["character"], "U+001B");

    // A line that is broken otherwise keeps the syntax error it always had.
    let broken = format!("{}\n{}\n", records[0], &tab[..tab.len() - 1]);
    let mut sink = Sink::new();
    load_texts(&[("agent.jsonl", &broken)], &LoadOptions::default(), &mut sink);
    assert_eq!(sink.len(), 1, "{:#?}", seen(&sink));
    assert!(
        sink[0].message.starts_with("line is not valid json"),
        "{}",
        sink[0].message
    );
}
