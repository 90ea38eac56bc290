//! Every diagnostic code is produced by a test (issue 3 meta-test), and the codes no other
//! test reaches are produced here, each by the input a user would hit it with.

mod common;

use common::*;
use serde_json::{Value, json};

/// Every code in the registry is asserted by some test: its literal (`G002`) or its constant
/// (`codes::NARRATIVE_CANDIDATE`) appears in test code.
#[test]
fn every_code_is_produced_by_a_test() {
    let mut test_code = String::new();
    let mut stack = vec![repo().join("tests"), repo().join("compiler")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("registry.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let under_test = p.starts_with(repo().join("tests")) || p.ends_with("tests.rs");
                match text.find("#[cfg(test)]") {
                    _ if under_test => test_code.push_str(&text),
                    Some(at) => test_code.push_str(&text[at..]),
                    None => {}
                }
            }
        }
    }
    let registry = std::fs::read_to_string(repo().join("compiler/diagnostics/registry.rs")).unwrap();
    let constants: Vec<(String, String)> = registry
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(": &str = \"")?;
            Some((name.to_string(), rest.trim_end_matches("\";").to_string()))
        })
        .collect();
    let mut missing = Vec::new();
    for c in skillc::diagnostics::CODES.iter().filter(|c| !c.removed) {
        let constant = constants
            .iter()
            .find(|(_, code)| code == c.code)
            .map(|(n, _)| n.as_str());
        // As a string (`"G002"`), as printed (`warning[G002]`), or by its constant.
        let by_literal = produced(&test_code, &format!("\"{}\"", c.code))
            || produced(&test_code, &format!("[{}]", c.code));
        let by_constant = constant.is_some_and(|n| produced(&test_code, &format!("codes::{n}")));
        if !by_literal && !by_constant {
            missing.push(c.code);
        }
    }
    assert!(missing.is_empty(), "codes no test produces: {missing:?}");
}

/// Does some line of `code` name `code_ref` (a quoted code or its constant, whole) other than
/// to check that it is absent (`….is_empty()` without a `!` before it)?
fn produced(code: &str, code_ref: &str) -> bool {
    code.lines().any(|line| {
        line.match_indices(code_ref).any(|(at, _)| {
            let whole =
                !line[at + code_ref.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            let absent = line.contains(".is_empty()") && !line.contains("!diags") && !line.contains("(!");
            whole && !absent
        })
    })
}

fn compile(
    s: &Scratch,
    input: &std::path::Path,
    extra: &[&str],
) -> (serde_json::Value, std::process::Output) {
    let out = s.path("out");
    let o = compile_to(input, &out, extra);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (read_json(&out.join("diagnostics.json")), o)
}

fn write_jsonl(path: &std::path::Path, records: &[serde_json::Value]) {
    std::fs::write(path, records.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
}

#[test]
fn quiet_records_get_notes_and_unknown_in_play_ids_a_warning() {
    let s = Scratch::new("codes-notes");
    let input = s.path("in.jsonl");
    write_jsonl(
        &input,
        &[
            json!({"id": "q-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["go"], "project": "git@github.com:acme/search-svc.git",
               "outcome": "succeeded", "task": "bump the grpc dependency"}),
            json!({"id": "q-2", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["go"], "project": "git@github.com:acme/search-svc.git",
               "outcome": "succeeded", "lesson": "Run go vet before go test; it catches printf mistakes the tests miss.",
               "in_play": ["L0123456789ab"]}),
        ],
    );
    let (diags, _) = compile(&s, &input, &[]);
    assert!(
        diags_of(&diags, "K001").iter().any(|d| names(d, "q-1")),
        "no candidates"
    );
    assert!(
        diags_of(&diags, "O003").iter().any(|d| names(d, "q-2")),
        "unverified success"
    );
    let s005 = diags_of(&diags, "S005");
    assert!(
        s005.iter()
            .any(|d| names(d, "q-2") && d["evidence"]["ids"][0] == "L0123456789ab")
    );
}

/// A named pipe in a records directory (an agent streaming its log there) is skipped with a
/// diagnostic: opening it would wait for a writer that may never come.
#[cfg(unix)]
#[test]
fn a_pipe_in_a_records_directory_is_not_waited_on() {
    let s = Scratch::new("codes-fifo");
    let dir = s.path("records");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("foundation/agents.jsonl"), dir.join("agents.jsonl")).unwrap();
    let fifo = dir.join("live.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let out = s.path("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillc"))
        .args(["compile", dir.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("compile still waiting on the pipe after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let diags = read_json(&out.join("diagnostics.json"));
    let l007 = diags_of(&diags, "L007");
    assert!(
        l007.iter()
            .any(|d| d["subject"].as_str().unwrap().ends_with("live.jsonl")
                && d["message"].as_str().unwrap().contains("not a regular file")),
        "{l007:?}"
    );
    // The regular file beside it was read.
    let ledger = read_json(&out.join("ledger.json"));
    assert!(!ledger["lessons"].as_array().unwrap().is_empty());
}

#[test]
fn own_output_and_unreadable_files_are_skipped_with_a_diagnostic() {
    let s = Scratch::new("codes-ingest");
    let dir = s.path("records");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("foundation/agents.jsonl"), dir.join("agents.jsonl")).unwrap();
    std::fs::write(
        dir.join("old-ledger.json"),
        r#"{"generator": "skillc", "version": 1, "lessons": []}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("broken.jsonl"),
        [0xff, 0xfe, 0x00, 0x01, 0x02, 0x00, 0x9f],
    )
    .unwrap();
    let (diags, _) = compile(&s, &dir, &[]);
    assert!(
        diags_of(&diags, "L006")
            .iter()
            .any(|d| d["subject"].as_str().unwrap().ends_with("old-ledger.json"))
    );
    assert!(
        diags_of(&diags, "L007")
            .iter()
            .any(|d| d["subject"].as_str().unwrap().ends_with("broken.jsonl"))
    );
    // A plain SQLite database that is not a GAIA store is a format skillc does not read.
    let db = s.path("notes.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT)")
        .unwrap();
    let (diags, _) = compile(&s, &db, &[]);
    assert!(!diags_of(&diags, "L011").is_empty());
}

#[test]
fn a_skill_over_its_line_budget_leaves_out_the_weakest_rules() {
    let s = Scratch::new("codes-long-skill");
    let rules = s.path("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let policy = skillc::policy::BUILTIN_POLICY.replace("active_lessons: 200", "active_lessons: 1000");
    std::fs::write(rules.join("policy.yaml"), policy).unwrap();
    let rules_arg = ["--rules", rules.to_str().unwrap()];
    let project = "git@github.com:acme/infra.git";
    let input = s.path("in.jsonl");
    let mut records: Vec<serde_json::Value> = (0..520)
        .map(|i| json!({"id": format!("long-{i:03}"), "recorded_at": "2026-11-02T10:00:00Z", "domains": ["terraform"],
            "project": project, "outcome": "succeeded", "blessed": true,
            "lesson": format!("Set lifecycle.prevent_destroy on module_{i}.bucket_{i} so a plan never drops it.")}))
        .collect();
    write_jsonl(&input, &records);
    let (diags, _) = compile(&s, &input, &rules_arg);
    let left_out_at_first = diags_of(&diags, "E001")[0]["evidence"]["left_out"]
        .as_array()
        .unwrap()
        .len();
    assert!(left_out_at_first > 0);
    // All 520 rules start at one confidence. Later sessions confirm the 60 that sort last by
    // id — where, at equal confidence, the ones left out come from — so those now outrank
    // the rest and must stay in the file.
    let ledger = read_json(&s.path("out/ledger.json"));
    let mut ids: Vec<&str> = (ledger["lessons"].as_array().unwrap().iter())
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    ids.sort();
    let confirmed: Vec<String> = ids[ids.len() - 60..].iter().map(|s| s.to_string()).collect();
    for (n, id) in confirmed.iter().enumerate() {
        records.push(json!({"id": format!("apply-{n:02}"), "recorded_at": "2026-11-09T10:00:00Z", "domains": ["terraform"],
            "project": project, "task": "apply the storage plan", "outcome": "succeeded", "in_play": [id],
            "operations": [{"tool": "run_shell_command", "args": {"command": "terraform plan", "cwd": "/srv/infra"},
                "status": "ok", "check": {"label": "plan", "target": "infra", "passed": true}}]}));
    }
    write_jsonl(&input, &records);
    let (diags, _) = compile(&s, &input, &rules_arg);
    let ledger = read_json(&s.path("out/ledger.json"));
    let confidence = |id: &str| {
        let l = ledger["lessons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == id)
            .unwrap();
        l["confidence"].as_f64().unwrap()
    };
    let e001 = diags_of(&diags, "E001");
    assert_eq!(e001.len(), 1);
    let left_out: Vec<&str> = (e001[0]["evidence"]["left_out"].as_array().unwrap().iter())
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(left_out.len(), left_out_at_first);
    let weakest = confidence(left_out[0]);
    assert!(
        confidence(&confirmed[0]) > weakest,
        "the sessions confirmed the 60"
    );
    assert!(
        left_out
            .iter()
            .all(|id| confidence(id) == weakest && !confirmed.iter().any(|c| c == id))
    );
    let digest = skillc::digest::project(project);
    let skill =
        std::fs::read_to_string(s.path(&format!("out/projects/{digest}/terraform/SKILL.md"))).unwrap();
    assert!(skill.lines().count() <= 500);
    for id in &confirmed {
        assert!(skill.contains(id.as_str()), "confirmed rule {id} kept");
    }
    let kept = skill.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!(kept + left_out.len(), 520);
    // The summary counts the warnings emit made (E001) with the rest.
    let mut args = rules_arg.to_vec();
    args.extend(["--format", "json"]);
    let (diags, o) = compile(&s, &input, &args);
    let warnings = (diags["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["severity"] == "warning")
        .count();
    assert!(warnings >= 1);
    assert_eq!(json(&o)["diagnostics"]["warning"], warnings, "{}", stdout(&o));
}

#[test]
fn a_back_filled_older_record_refounds_a_lesson_and_says_so() {
    let s = Scratch::new("codes-refound");
    let lesson = |id: &str, at: &str, text: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["rust"],
        "project": "git@github.com:acme/ingest.git", "outcome": "succeeded", "lesson": text})
    };
    let rf2 = lesson(
        "rf-2",
        "2026-11-05T10:00:00Z",
        "Use cargo build --locked in CI so Cargo.lock is honoured.",
    );
    let rf3 = lesson(
        "rf-3",
        "2026-11-06T10:00:00Z",
        "In CI run cargo build --locked so that Cargo.lock is respected.",
    );
    // Synced late: appended last, but recorded first.
    let rf1 = lesson(
        "rf-1",
        "2026-11-01T10:00:00Z",
        "Build with cargo build --locked in CI so the lockfile is honoured.",
    );
    let diags_into = |input: &std::path::Path, out: &str| {
        let o = compile_to(input, &s.path(out), &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&s.path(out).join("diagnostics.json"))
    };
    let (before, after) = (s.path("before.jsonl"), s.path("after.jsonl"));
    write_jsonl(&before, &[rf2.clone(), rf3.clone()]);
    write_jsonl(&after, &[rf2, rf3, rf1]);

    // The same three records compiled for the first time: nobody was ever shown another id
    // for the lesson, whatever order the files hold them in.
    let first = diags_into(&after, "fresh");
    assert!(diags_of(&first, "S004").is_empty(), "{first:#}");
    // `trace` before any compile agrees with that first compile: it reports no S004 either.
    let traced = trace_json("rf-1", &after, &s.path("never-compiled"));
    let codes: Vec<&Value> = traced["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["code"])
        .collect();
    assert!(!codes.contains(&&json!("S004")), "{traced:#}");

    // The nightly job compiled the first two; the late record then re-founds their lesson.
    diags_into(&before, "out");
    let old = read_json(&s.path("out/ledger.json"));
    let diags = diags_into(&after, "out");
    let s004 = diags_of(&diags, "S004");
    assert_eq!(s004.len(), 1, "{diags:#}");
    assert!(names(s004[0], "rf-1"));
    let old_id = &s004[0]["evidence"]["old_id"];
    assert_ne!(*old_id, s004[0]["evidence"]["new_id"]);
    assert!(
        old["lessons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == *old_id)
    );
    let message = s004[0]["message"].as_str().unwrap();
    assert!(message.contains("older experience (rf-1)"), "{message}");

    // A record appended later but recorded at the same time, first by id, re-founds too; it
    // is not older, and the message does not say so.
    let text = "Use cargo build --locked in CI so Cargo.lock is honoured.";
    let (tied_before, tied) = (s.path("tied-before.jsonl"), s.path("tied.jsonl"));
    let (b, c) = (
        lesson("tie-b", "2026-11-05T10:00:00Z", text),
        lesson("tie-c", "2026-11-06T10:00:00Z", text),
    );
    write_jsonl(&tied_before, &[b.clone(), c.clone()]);
    write_jsonl(&tied, &[b, c, lesson("tie-a", "2026-11-05T10:00:00Z", text)]);
    diags_into(&tied_before, "tied-out");
    let diags = diags_into(&tied, "tied-out");
    let s004 = diags_of(&diags, "S004");
    assert_eq!(s004.len(), 1, "{diags:#}");
    let message = s004[0]["message"].as_str().unwrap();
    assert!(
        message.contains("(tie-a, recorded at the same time as tie-b and first by id)")
            && !message.contains("older"),
        "{message}"
    );
}

#[test]
fn a_locked_output_and_a_foreign_store_cannot_run() {
    let s = Scratch::new("codes-store");
    let out = s.path("out");
    std::fs::create_dir_all(out.join(".skillc")).unwrap();
    // Another compile: it holds the lock and has written its name into the file.
    let other = std::fs::File::create(out.join(".skillc/lock")).unwrap();
    other.try_lock().unwrap();
    std::fs::write(out.join(".skillc/lock"), "pid 48213 on ci-runner-3").unwrap();
    let o = skillc(&["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error[U001]"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pid 48213 on ci-runner-3"),
        "the error names the lock's holder: {}",
        stderr(&o)
    );
    assert!(!out.join("ledger.json").exists(), "nothing was written");
    // It ends (killed or finished, the kernel releases the lock): the file it left, naming
    // it, does not hold the next compile back.
    drop(other);
    let o = skillc(&["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let foreign = s.path("gaia.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE tool_history (id INTEGER)")
        .unwrap();
    let o = skillc(&[
        "compile",
        "--out",
        out.to_str().unwrap(),
        "--state",
        foreign.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error[U002]"), "{}", stderr(&o));
}

#[test]
fn why_reports_near_misses_and_empty_domains_as_diagnostics() {
    let o = skillc(&["why", "rust", fixture("foundation").to_str().unwrap()]);
    assert!(stderr(&o).contains("note[W001]: near-miss"), "{}", stderr(&o));
    let o = skillc(&["why", "haskell", fixture("foundation").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("note[W003]: empty-domain"), "{}", stderr(&o));
    let o = skillc(&["why", "rsut", fixture("foundation").to_str().unwrap()]);
    assert!(stderr(&o).contains("note[W002]: did-you-mean"), "{}", stderr(&o));
}

/// Message style (DESIGN §8) holds for every diagnostic a compile emits, not only the examples:
/// lower-case first letter, no trailing period, a help line, the registry's name and severity.
#[test]
fn every_emitted_diagnostic_keeps_the_message_style() {
    let s = Scratch::new("codes-style");
    let mut seen = std::collections::BTreeSet::new();
    for (i, input) in [
        fixture("foundation"),
        fixture("why-python"),
        fixture("omnimem"),
        repo().join("samples"),
    ]
    .iter()
    .enumerate()
    {
        let out = s.path(&format!("out{i}"));
        let o = compile_to(input, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let diags = read_json(&out.join("diagnostics.json"));
        for d in diags["diagnostics"].as_array().unwrap() {
            let code = d["code"].as_str().unwrap();
            let info = skillc::diagnostics::lookup(code).unwrap();
            let msg = d["message"].as_str().unwrap();
            assert!(
                !msg.is_empty() && !msg.chars().next().unwrap().is_uppercase(),
                "{code}: {msg}"
            );
            assert!(!msg.ends_with('.'), "{code}: {msg}");
            assert_eq!(d["name"], info.name);
            assert_eq!(d["severity"], info.severity.as_str());
            assert!(!d["help"].as_str().unwrap().is_empty());
            seen.insert(code.to_string());
        }
    }
    assert!(seen.len() >= 15, "the corpora exercise many codes: {seen:?}");
}

/// Two projects learned "always" and two others "never" about one step: both are rules of the
/// global node skill, and S009 names the pair. A dead end with the same words counts as
/// "never"; a rule about a different step, and a watch lesson, are not compared.
#[test]
fn rules_that_say_opposite_things_are_named_together() {
    let s = Scratch::new("codes-conflicting-rules");
    let input = s.path("in.jsonl");
    let exp = |id: &str, day: u32, project: &str, extra: serde_json::Value| {
        succeeded(
            id,
            day,
            project,
            "node",
            "make the CI install step reliable",
            extra,
        )
    };
    write_jsonl(
        &input,
        &[
            exp(
                "ci-web-1",
                1,
                "git@github.com:acme/web.git",
                json!({"lesson": "Always run npm ci in CI jobs."}),
            ),
            exp(
                "ci-shop-1",
                2,
                "git@github.com:acme/shop.git",
                json!({"lesson": "Always run npm ci in CI jobs"}),
            ),
            exp(
                "ci-api-1",
                3,
                "git@github.com:acme/api.git",
                json!({"lesson": "Don’t run npm ci in CI jobs!"}),
            ),
            exp(
                "ci-docs-1",
                4,
                "git@github.com:acme/docs.git",
                json!({"lesson": "Don't run npm ci in CI jobs."}),
            ),
            exp(
                "ci-api-2",
                5,
                "git@github.com:acme/api.git",
                json!({"lesson": "Cache ~/.npm between CI jobs keyed on package-lock.json.", "gotchas": ["run npm ci in CI jobs"]}),
            ),
            exp(
                "ci-docs-2",
                6,
                "git@github.com:acme/docs.git",
                json!({"lesson": "Cache ~/.npm between CI jobs keyed on package-lock.json", "gotchas": ["run npm ci in CI jobs"]}),
            ),
        ],
    );
    let (diags, _) = compile(&s, &input, &[]);
    let s009 = diags_of(&diags, "S009");
    assert_eq!(s009.len(), 1, "{s009:#?}");
    let d = s009[0];
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["domain"], "node");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("Always run npm ci in CI jobs") && message.contains("run npm ci in CI jobs!"),
        "{message}"
    );
    assert!(!message.contains("Cache"), "{message}");
    let ledger = read_json(&s.path("out/ledger.json"));
    let rule_id = |text: &str| rule_id(&ledger, text);
    let named = d["evidence"]["lessons"].as_array().unwrap();
    assert_eq!(named.len(), 2, "{d:#}");
    assert!(named.contains(&rule_id("Always run npm ci")), "{d:#}");
    assert!(named.contains(&rule_id("Don")), "{d:#}");
}

/// S009 beyond the literal words: a rule and its negation put differently ("Avoid mocking …" /
/// "Mock …", the rest alike) are named together, while rules that merely share words and
/// negate something else are not.
#[test]
fn a_rule_and_its_negation_in_other_words_are_named_together() {
    let avoid = "Avoid mocking the HTTP client in the integration suite when the staging API is reachable; record responses with VCR.";
    let mock = "Mock the HTTP client in the integration suite when the staging API is reachable; record responses with VCR.";
    // Shares words with both and negates something else: no conflict with either.
    let vcr = "Never let integration suite workers share one database; give each worker its own schema.";
    let (diags, ledger) = rules_of(
        "reworded",
        "python",
        "stabilise the integration suite",
        &[avoid, mock, vcr],
    );
    let rule_id = |text: &str| rule_id(&ledger, text);
    let s009 = diags_of(&diags, "S009");
    assert_eq!(s009.len(), 1, "{s009:#?}");
    let d = s009[0];
    assert_eq!(d["domain"], "python");
    let named = d["evidence"]["lessons"].as_array().unwrap();
    assert_eq!(
        named,
        &vec![rule_id("Mock the"), rule_id("Avoid mocking")],
        "{d:#}"
    );
    assert!(!d["message"].as_str().unwrap().contains("workers"), "{d:#}");
    assert!(
        !named.contains(&rule_id("Never let integration suite workers")),
        "{d:#}"
    );
}

/// S009 when one rule says "do not X" and the other "X" with a different reason after it: the
/// two texts share too few words for a reworded negation, yet the negated clause is all in
/// the other rule. A rule that negates only part of what another asserts is no conflict.
#[test]
fn a_rule_that_refuses_what_another_asserts_is_named_with_it() {
    let refuse =
        "Do not enable skipLibCheck in tsconfig; it hides broken declaration files from dependencies.";
    let enable = "Enable skipLibCheck in tsconfig to keep type checking fast.";
    // Negates tags and `latest`, which the digest rule never asserts: both hold.
    let latest = "Never use latest tags for base images; pin a digest.";
    let digest = "Pin base images by digest in every Dockerfile.";
    let lessons = [refuse, enable, latest, digest];
    let (diags, ledger) = rules_of("refused", "typescript", "speed up the type check in CI", &lessons);
    let rule_id = |text: &str| rule_id(&ledger, text);
    // All four are rules; only the first two are in conflict.
    let (_, _) = (rule_id("Never use latest"), rule_id("Pin base images"));
    let s009 = diags_of(&diags, "S009");
    assert_eq!(s009.len(), 1, "{s009:#?}");
    let named = s009[0]["evidence"]["lessons"].as_array().unwrap();
    assert_eq!(
        named,
        &vec![rule_id("Enable skipLibCheck"), rule_id("Do not enable")],
        "{:#}",
        s009[0]
    );
}

/// Compiles each lesson from two succeeded experiences of two projects (so each is a rule), in
/// one domain; returns the diagnostics and the ledger.
fn rules_of(
    name: &str,
    domain: &str,
    task: &str,
    lessons: &[&str],
) -> (serde_json::Value, serde_json::Value) {
    let s = Scratch::new(&format!("codes-conflicting-{name}"));
    let input = s.path("in.jsonl");
    let projects = ["web", "shop", "api", "docs"];
    let records: Vec<serde_json::Value> = (lessons.iter().enumerate())
        .flat_map(|(i, lesson)| [2 * i, 2 * i + 1].map(|n| (n, lesson)))
        .map(|(n, lesson)| {
            let project = projects[n % projects.len()];
            let (id, remote) = (
                format!("{domain}-{project}-{n}"),
                format!("git@github.com:acme/{project}.git"),
            );
            succeeded(
                &id,
                n as u32 + 1,
                &remote,
                domain,
                task,
                json!({"lesson": lesson}),
            )
        })
        .collect();
    write_jsonl(&input, &records);
    let (diags, _) = compile(&s, &input, &[]);
    (diags, read_json(&s.path("out/ledger.json")))
}

/// A succeeded experience of October 2026 in one domain and project, with `fields` (its
/// lesson, gotchas, …) added.
fn succeeded(
    id: &str,
    day: u32,
    project: &str,
    domain: &str,
    task: &str,
    fields: serde_json::Value,
) -> serde_json::Value {
    let mut r = json!({"id": id, "recorded_at": format!("2026-10-{day:02}T09:30:00Z"), "domains": [domain],
        "project": project, "outcome": "succeeded", "task": task});
    r.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    r
}

/// The id of the rule whose text starts with `text` in a ledger.
fn rule_id(ledger: &serde_json::Value, text: &str) -> serde_json::Value {
    (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["text"].as_str().unwrap().starts_with(text) && l["rule"] == true)
        .map(|l| l["id"].clone())
        .unwrap_or_else(|| panic!("no rule `{text}`: {ledger:#}"))
}

/// No policy key decides N002: the credential patterns do. `explain N002` names the ones in
/// use, so a team that added its own token pattern sees it there, in text and JSON alike.
#[test]
fn explain_n002_names_the_credential_patterns_in_use() {
    let s = Scratch::new("codes-explain-secrets");
    let rules = s.path("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("secrets.yaml"),
        "patterns:\n  - name: acme-internal-token\n    regex: \"acme_[A-Za-z0-9]{32}\"\n",
    )
    .unwrap();
    let o = skillc(&["explain", "N002", "--rules", rules.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).ends_with("- `secrets`: [\"acme-internal-token\"]\n"),
        "{}",
        stdout(&o)
    );
    let builtin = json(&skillc(&["explain", "N002", "--format", "json"]));
    let names = builtin["policy"]["secrets"].as_array().unwrap();
    assert!(
        names.iter().any(|n| n == "github-token") && names.iter().any(|n| n == "aws-access-key"),
        "{builtin:#}"
    );
}

/// A compile given `--min-reinforcement 3` decided G003 with 3: `explain G003` given the same
/// flag quotes that value and says where it came from, in text and JSON alike.
#[test]
fn explain_quotes_the_min_reinforcement_a_compile_was_given() {
    let plain = stdout(&skillc(&["explain", "G003"]));
    assert!(plain.ends_with("- `min_reinforcement`: 2\n"), "{plain}");
    let o = skillc(&["explain", "G003", "--min-reinforcement", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.ends_with("with --min-reinforcement 3\n\n- `min_reinforcement`: 3\n"),
        "{text}"
    );
    let j = json(&skillc(&[
        "explain",
        "G003",
        "--min-reinforcement",
        "3",
        "--format",
        "json",
    ]));
    assert_eq!(j["policy"]["min_reinforcement"], 3, "{j:#}");
}
