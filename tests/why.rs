//! `skillc why` and `skillc trace` answer "why did this domain compile nothing?" (issue 3).

mod common;

use common::*;
use serde_json::json;

fn why_json(domain: &str, input: &str) -> serde_json::Value {
    why_json_in(domain, &fixture(input), &[])
}

#[test]
fn twenty_nine_once_only_stories_explain_themselves() {
    let w = why_json("python", "why-python");
    assert_eq!(w["domain"], "python");
    assert_eq!(w["rules"], 0);
    assert_eq!(w["candidates"], 29);
    assert_eq!(w["experiences"], 29);
    let stages: Vec<&str> = w["funnel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        [
            "experiences",
            "candidates",
            "not-refused",
            "outcome",
            "not-narrative",
            "evidence",
            "not-retired",
            "lessons",
            "rules"
        ]
    );
    let narrative = w["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "narrative-candidate")
        .unwrap();
    let n = narrative["count"].as_u64().unwrap();
    assert!(n >= 26, "most of the 29 stories read as narrative: {n}");
    assert_eq!(w["singletons"], 29, "all appear once");
    assert_eq!(w["pool"]["projects"], 1);
    assert_eq!(w["pool"]["top_project_share"], "29/29");
    let suggestions = w["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(suggestions.contains("`lesson`"), "write lessons: {suggestions}");
    assert!(suggestions.contains("narrow"), "narrow the domain: {suggestions}");
    assert!(
        !suggestions.contains("min_reinforcement") && !suggestions.contains("lower"),
        "{suggestions}"
    );
    if n < 29 {
        assert!(
            suggestions.contains("skillc bless"),
            "bless the ones that read as rules: {suggestions}"
        );
    }
    assert!(w["narrative_rescues"].as_array().unwrap().len() >= 5);

    // The text report says the same in words.
    let o = skillc(&["why", "python", fixture("why-python").to_str().unwrap()]);
    let text = stdout(&o);
    assert!(text.contains("0 rules"), "{text}");
    assert!(text.contains("narrative-candidate"), "{text}");
    assert!(text.contains("29 experiences from 1 project"), "{text}");
    assert!(text.contains("appear in only one experience"), "{text}");
}

/// The `skillc bless` commands `why` suggests name the records and the output it was given,
/// quoted for the shell, so they work when pasted (`bless` without inputs reads the samples).
#[test]
fn a_suggested_bless_command_runs_as_printed() {
    let s = Scratch::new("why-bless-command");
    std::fs::create_dir_all(s.path("agent records")).unwrap();
    let lessons = [
        "Run alembic upgrade head before the test suite when a migration was added.",
        "Pin pydantic below 2 while FastAPI 0.95 is in the lock file.",
        "Use pytest --import-mode=importlib when two test packages share a module name.",
    ];
    let records: String = (lessons.iter().enumerate())
        .map(|(i, lesson)| {
            format!(
                "{}\n",
                json!({"id": format!("py-{i}"), "recorded_at": format!("2026-05-0{}T10:00:00Z", i + 1),
                       "domains": ["python"], "project": "git@github.com:acme/billing-api.git",
                       "outcome": "succeeded", "lesson": lesson})
            )
        })
        .collect();
    std::fs::write(s.path("agent records/sessions.jsonl"), records).unwrap();
    let o = skillc_in(
        &s.0,
        &[
            "why",
            "python",
            "agent records",
            "--out",
            "out",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let suggestion = (w["suggestions"].as_array().unwrap().iter())
        .filter_map(|s| s.as_str())
        .find(|s| s.contains("skillc bless "))
        .unwrap_or_else(|| panic!("no bless command: {w:#}"));
    // The first command, split as a POSIX shell would (single quotes only).
    let command = suggestion.split("`skillc bless ").nth(1).unwrap();
    let command = command.split('`').next().unwrap();
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in command.chars() {
        match c {
            '\'' => (quoted, any) = (!quoted, true),
            ' ' if !quoted => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    assert_eq!(words[1..], ["agent records", "--out", "out"], "{suggestion}");
    let mut args = vec!["bless"];
    args.extend(words.iter().map(String::as_str));
    let o = skillc_in(&s.0, &args);
    assert_eq!(o.status.code(), Some(0), "{suggestion}: {}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("blessed {}", words[0])),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_misspelt_domain_gets_a_suggestion_and_still_exits_zero() {
    let w = why_json("pyhton", "why-python");
    assert_eq!(w["did_you_mean"], "python");
    assert_eq!(w["candidates"], 0);
    assert_eq!(w["known_domains"][0]["domain"], "python");
    let o = skillc(&["why", "pyhton", fixture("why-python").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("did you mean `python`"));
    assert!(stderr(&o).contains("note[W002]: did-you-mean"), "{}", stderr(&o));
}

#[test]
fn an_alias_is_understood() {
    let w = why_json("py", "why-python");
    assert_eq!(w["domain"], "python");
    assert_eq!(w["candidates"], 29);
}

#[test]
fn near_misses_say_what_would_make_them_pass() {
    let w = why_json("rust", "foundation");
    // The once-seen serde gotcha is a lesson one experience short of a rule.
    let near = w["near_misses"].as_array().unwrap();
    let serde = near
        .iter()
        .find(|n| n["text"].as_str().unwrap().contains("serde(flatten)"))
        .expect("gotcha is a near miss");
    assert_eq!(
        (serde["support"].as_u64(), serde["needed"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(serde["action"].as_str().unwrap().contains("one more experience"));
    assert!(w["rules"].as_u64().unwrap() >= 2);
}

/// `trace` says why a failed-then-fixed call taught nothing when its failure was transient
/// (the policy phrase that matched) or the call was refused, and a real failure is plain.
#[test]
fn trace_says_which_failed_calls_were_transient_or_refused() {
    let s = Scratch::new("trace-transient");
    let record = json!({"id": "dl-7", "recorded_at": "2026-01-05T09:46:03Z", "domains": ["python"],
        "project": "/home/maya/src/dataloader", "task": "Add parquet output", "outcome": "succeeded",
        "operations": [
            {"tool": "run_shell_command", "args": {"command": "pip install -r requirements-dev.txt"},
             "status": "error", "error": "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out."},
            {"tool": "run_shell_command", "args": {"command": "pip install --timeout 60 -r requirements-dev.txt"}, "status": "ok"},
            {"tool": "write_file", "args": {"file_path": "/etc/hosts"}, "status": "refused"},
            {"tool": "run_shell_command", "args": {"command": "python -m pytest -q tests"}, "status": "error",
             "error": "FAILED tests/test_parquet.py::test_roundtrip - AssertionError: assert 3 == 4"},
            {"tool": "run_shell_command", "args": {"command": "python -m pytest -q tests"}, "status": "ok",
             "check": {"label": "tests", "target": "dataloader", "passed": true}}]});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let o = skillc(&[
        "trace",
        "dl-7",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for line in [
        "call 1: `run_shell_command pip` failed transiently (\"timed out\"): a transient failure teaches nothing",
        "call 3: `write_file /etc/hosts` refused: it never ran, so it teaches nothing",
        "call 4: `run_shell_command pytest` failed\n",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    let j = trace_json("dl-7", &input, &out);
    let failed = &j["record"]["failed_operations"];
    assert_eq!(failed.as_array().unwrap().len(), 3, "{j:#}");
    assert_eq!(failed[0]["transient"], "timed out");
    assert!(
        failed[2]["transient"].is_null(),
        "an assertion is never transient: {j:#}"
    );
}

/// A lint run that found problems, then the same linter with `--fix`, teaches no "instead of";
/// `trace` says so on the failed call, instead of a bare "failed" beside no candidate.
#[test]
fn trace_says_a_check_fixed_by_its_fix_flag_taught_nothing() {
    let s = Scratch::new("trace-fix-flag");
    let record = json!({"id": "cc-7f3a91e2-0014", "recorded_at": "2026-11-11T08:41:19Z", "domains": ["python"],
        "project": "git@github.com:northwind/orders-api.git", "task": "Lint in pre-commit", "outcome": "succeeded",
        "operations": [
            {"tool": "run_shell_command", "args": {"command": "ruff check .", "cwd": "/home/priya/src/orders-api"},
             "status": "error", "error": "orders/views.py:12:1: F401 [*] `json` imported but unused\nFound 3 errors."},
            {"tool": "run_shell_command", "args": {"command": "ruff check --fix .", "cwd": "/home/priya/src/orders-api"}, "status": "ok"},
            {"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": "/home/priya/src/orders-api"}, "status": "ok",
             "check": {"label": "tests", "target": "orders-api", "passed": true}}]});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let j = trace_json("cc-7f3a91e2-0014", &input, &out);
    assert_eq!(j["candidates"].as_array().unwrap().len(), 0, "{j:#}");
    assert_eq!(
        j["record"]["failed_operations"][0]["fixed_by_flag"], "--fix",
        "{j:#}"
    );
    let o = skillc(&[
        "trace",
        "cc-7f3a91e2-0014",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let line = "call 1: `run_shell_command ruff` failed, and a later call with `--fix` applied what it found";
    assert!(stdout(&o).contains(line), "{}", stdout(&o));
}

/// A long lint session: 3 000 files checked one by one, each check failing, a test run after
/// each, and one `ruff check --fix` at the end. `trace` says of every failed check that the
/// fix flag applied what it found. It used to look forward from each failure and work out each
/// later call's key again, quadratic in the record's calls (10.6 s for these 6 001 in a release
/// build, minutes in the test build); the later fix flags are now found walking back once.
#[test]
fn trace_of_a_long_session_finds_each_failures_fix_flag_walking_back_once() {
    let s = Scratch::new("trace-long-session");
    let cwd = "/home/priya/src/orders-api";
    let mut ops = Vec::new();
    for n in 0..3000 {
        ops.push(sh(
            &format!("ruff check orders/module_{n}.py"),
            cwd,
            Some("F401 [*] `json` imported but unused\nFound 1 error."),
            None,
        ));
        ops.push(sh(
            &format!("pytest -q tests/test_module_{n}.py"),
            cwd,
            None,
            None,
        ));
    }
    ops.push(sh(
        "ruff check --fix orders",
        cwd,
        None,
        Some(("lint", "orders-api")),
    ));
    let record = json!({"id": "cc-5d21e0b7-0031", "recorded_at": "2026-11-12T14:02:51Z", "domains": ["python"],
        "project": "git@github.com:northwind/orders-api.git", "task": "Clean up unused imports", "outcome": "succeeded",
        "operations": ops});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let j = trace_json("cc-5d21e0b7-0031", &input, &s.path("out"));
    let failed = j["record"]["failed_operations"].as_array().unwrap();
    assert_eq!(failed.len(), 3000);
    assert!(
        (failed.iter()).all(|f| f["fixed_by_flag"] == "--fix" && f["key"] == "run_shell_command ruff"),
        "{:#}",
        failed[0]
    );
    assert_eq!(failed[2999]["number"], 5999);
}

/// An experience behind two once-seen lessons gets a G003 note on each; trace tells them apart
/// by the lesson each is about.
#[test]
fn trace_names_what_each_diagnostic_is_about() {
    let s = Scratch::new("trace-subjects");
    let record = json!({"id": "k8-0211", "recorded_at": "2026-02-11T09:00:00Z", "domains": ["kubernetes"],
        "project": "git@github.com:acme/deploy.git", "task": "roll out the api chart", "outcome": "succeeded",
        "lesson": "Pin Helm chart versions in every release so a rollback installs what ran before.",
        "gotchas": ["helm upgrade without --atomic leaves a failed release half applied"]});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let j = trace_json("k8-0211", &input, &out);
    let lessons: Vec<&str> = (j["candidates"].as_array().unwrap().iter())
        .map(|c| c["lesson"].as_str().unwrap())
        .collect();
    assert_eq!(lessons.len(), 2, "{j:#}");
    let about: Vec<&str> = (j["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["code"] == "G003")
        .map(|d| d["subject"].as_str().unwrap())
        .collect();
    assert_eq!(about.len(), 2, "{j:#}");
    assert!(lessons.iter().all(|l| about.contains(l)), "{about:?} {lessons:?}");
    let o = skillc(&[
        "trace",
        "k8-0211",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    for l in lessons {
        assert!(
            text.contains(&format!("note[G003] below-reinforcement ({l}): ")),
            "{text}"
        );
    }
}

/// A domain that is no valid name: `why` says to rename it, and does not advise rewording its
/// refused candidates, which would stay refused however they read.
#[test]
fn why_an_invalid_domain_says_to_rename_it() {
    let s = Scratch::new("why-invalid-domain");
    let record = json!({"id": "k8-0301", "recorded_at": "2026-03-01T09:00:00Z", "domains": ["../etc", "kubernetes"],
        "project": "git@github.com:acme/deploy.git", "outcome": "succeeded",
        "lesson": "Fixed the rollout by bumping maxSurge in deploy/api.yaml after PR #412 merged."});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let w = why_json_in("../etc", &input, &["--out", out.to_str().unwrap()]);
    let suggestions: Vec<&str> = (w["suggestions"].as_array().unwrap().iter())
        .filter_map(|s| s.as_str())
        .collect();
    assert!(
        suggestions
            .iter()
            .any(|s| s.contains("`../etc` is not a valid domain name (N001")),
        "{suggestions:#?}"
    );
    assert!(
        !suggestions.iter().any(|s| s.contains("incident stories")),
        "{suggestions:#?}"
    );
}

/// A refused domain written in capitals (`DevOps/SRE`) is found however `why` is asked about it:
/// the records keep it as written, and `why` reads both the same way.
#[test]
fn why_finds_a_refused_domain_written_in_capitals() {
    let s = Scratch::new("why-invalid-domain-case");
    let record = json!({"id": "infra-2026-11-13-12", "recorded_at": "2026-11-13T15:00:00+01:00",
        "domains": ["DevOps/SRE", "kubernetes"], "project": "git@gitlab.com:northwind/platform-infra.git",
        "task": "Pipeline deploy job", "outcome": "succeeded",
        "lesson": "Run kubectl diff before kubectl apply in the deploy job so reviewers see the change."});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    for asked in ["DevOps/SRE", "devops/sre"] {
        let w = why_json_in(asked, &input, &["--out", out.to_str().unwrap()]);
        let funnel = &w["funnel"];
        assert_eq!(funnel[0]["remaining"], 1, "{asked}: {w:#}");
        assert_eq!(funnel[1]["remaining"], 1, "{asked}: {w:#}");
        assert_eq!(funnel[2]["remaining"], 0, "{asked}: {w:#}");
        assert_eq!(w["fates"]["refused"], 1, "{asked}: {w:#}");
        let suggestions = w["suggestions"].to_string();
        assert!(
            suggestions.contains("is not a valid domain name (N001"),
            "{asked}: {suggestions}"
        );
    }
}

/// `skillc trace ID` over the foundation fixture.
fn trace(id: &str, extra: &[&str]) -> std::process::Output {
    let fixture = fixture("foundation");
    let mut args = vec!["trace", id, fixture.to_str().unwrap()];
    args.extend(extra);
    skillc(&args)
}

#[test]
fn trace_follows_one_experience_through_every_stage() {
    let o = trace("e-py-004", &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = json(&o);
    assert_eq!(t["experience"], "e-py-004");
    let c = &t["candidates"][0];
    assert_eq!(c["kind"], "do");
    assert_eq!(c["fate"], "held-back");
    assert!(c["codes"].as_array().unwrap().iter().any(|x| x == "G001"));
    assert!(
        c["cluster"].as_str().unwrap().starts_with('C'),
        "held-back candidates still name their cluster"
    );
    assert!(c["lesson"].is_null());

    let o = trace("e-py-001", &["--format", "json"]);
    let t = json(&o);
    let fates: Vec<&str> = t["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["fate"].as_str().unwrap())
        .collect();
    assert!(
        !fates.is_empty() && fates.iter().all(|f| *f == "rule"),
        "{fates:?}"
    );
    assert!(
        t["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["lesson"].as_str().unwrap().starts_with('L'))
    );

    let o = trace("e-git-001", &["--format", "json"]);
    let t = json(&o);
    assert_eq!(t["candidates"][0]["fate"], "refused");
    assert_eq!(t["candidates"][0]["codes"][0], "N002");

    // A record the load refused: its trace ends there, with the reason.
    let o = trace("e-bad-003", &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = json(&o);
    assert_eq!(
        (&t["refused_at"], &t["codes"]),
        (&json!("load"), &json!(["L003"]))
    );
    assert!(stderr(&o).contains("found \"done\""), "{}", stderr(&o));
    let o = trace("e-bad-003", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "e-bad-003: refused at load (L003), so it reaches no later stage\n"
    );

    let o = trace("no-such-id", &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown id given as an argument cannot run"
    );
}

#[test]
fn explain_and_codes_document_every_code() {
    let o = skillc(&["codes", "--format", "json"]);
    let codes = json(&o);
    for c in codes["codes"].as_array().unwrap() {
        let code = c["code"].as_str().unwrap();
        let o = skillc(&["explain", code]);
        assert_eq!(o.status.code(), Some(0), "{code}");
        assert!(stdout(&o).contains("## How to fix"), "{code}");
    }
    let o = skillc(&["explain", "G003"]);
    assert!(stdout(&o).contains("min_reinforcement"));
    assert_eq!(skillc(&["explain", "Z999"]).status.code(), Some(2));
}

#[test]
fn held_back_clusters_are_near_misses_and_admitted_ones_are_not() {
    // Three agents write the same pytest lesson: two runs pass, one fails. The cluster is
    // admitted (a rule) although the failed run's member is held back, so it is no near miss;
    // a lesson seen once in a failed run is held back whole and is one.
    let s = Scratch::new("why-held-clusters");
    let rule = "Run pytest from the repository root so conftest.py fixtures are collected.";
    let once = "Pin pytest-asyncio to the version the event loop fixture was written for.";
    let record = |id: &str, day: u32, project: &str, outcome: &str, lesson: &str| {
        let passed = outcome == "succeeded";
        serde_json::json!({
            "id": id, "recorded_at": format!("2026-10-{day:02}T09:00:00Z"), "domains": ["python"],
            "project": project, "task": "fix the failing tests", "outcome": outcome, "lesson": lesson,
            "operations": [{"tool": "run_shell_command", "args": {"command": "pytest -q"},
                            "status": if passed { "ok" } else { "error" },
                            "check": {"label": "tests", "target": "app", "passed": passed}}]
        })
        .to_string()
    };
    let lines = [
        record("py-a", 1, "git@github.com:acme/billing.git", "succeeded", rule),
        record("py-b", 2, "git@github.com:acme/ledger.git", "succeeded", rule),
        record("py-c", 3, "git@github.com:acme/search.git", "failed", rule),
        record("py-d", 4, "git@github.com:acme/search.git", "failed", once),
    ];
    let input = s.path("agents.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let admitted: Vec<&str> = (ledger["lessons"].as_array().unwrap().iter())
        .filter(|l| l["rule"] == true)
        .filter_map(|l| l["cluster"].as_str())
        .collect();
    assert_eq!(admitted.len(), 1, "{ledger}");

    let o = skillc(&["why", "python", input.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let held: Vec<&serde_json::Value> = (w["near_misses"].as_array().unwrap().iter())
        .filter(|n| n["lesson_or_cluster"].as_str().unwrap().starts_with('C'))
        .collect();
    assert_eq!(held.len(), 1, "{w}");
    assert_ne!(held[0]["lesson_or_cluster"], admitted[0]);
    assert_eq!(held[0]["text"], once);
    assert_eq!(
        held[0]["action"],
        "bless py-d if the lesson holds despite the outcome"
    );
}

#[test]
fn experiences_without_a_project_are_no_one_project_pool() {
    // A scratch agent records no project. Its two experiences are in no project, not in one:
    // the one-project advice (narrow the domain) would be wrong.
    let s = Scratch::new("why-no-project");
    let record = |id: &str, day: u32, project: Option<&str>, lesson: &str| {
        let mut r = json!({
            "id": id, "recorded_at": format!("2026-10-{day:02}T09:00:00Z"), "domains": ["terraform"],
            "task": "plan the staging change", "outcome": "succeeded", "lesson": lesson
        });
        if let Some(p) = project {
            r["project"] = json!(p);
        }
        r.to_string()
    };
    let plan = "Run terraform plan -out=tfplan and apply that file, so what you reviewed is what runs.";
    let state = "Keep terraform state in a remote backend with locking, never in the repository.";
    let write = |lines: &[String]| {
        let input = s.path("agents.jsonl");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let o = skillc(&["why", "terraform", input.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)
    };
    let one_project = |w: &serde_json::Value| {
        (w["suggestions"].as_array().unwrap().iter()).any(|s| {
            s.as_str()
                .unwrap()
                .starts_with("every experience comes from one project")
        })
    };
    let w = write(&[record("tf-1", 1, None, plan), record("tf-2", 2, None, state)]);
    assert_eq!(w["pool"]["projects"], 0, "{w}");
    assert_eq!(w["pool"]["without_project"], 2, "{w}");
    assert!(!one_project(&w), "{w}");
    // Named, and all the same: that advice is the point.
    let infra = Some("git@github.com:acme/infra.git");
    let w = write(&[record("tf-1", 1, infra, plan), record("tf-2", 2, infra, state)]);
    assert_eq!(w["pool"]["projects"], 1, "{w}");
    assert!(one_project(&w), "{w}");
}

/// `why` compiles only the domain it is asked about (and the mechanical lessons sharing its
/// operation keys); its report must be the one a whole compile gives, for every domain.
#[test]
fn a_focused_why_reports_what_a_whole_compile_would() {
    use skillc::{load, pipeline, policy::Rules, report};
    let rules = Rules::builtin();
    let mut generated = Vec::new();
    skillc::generate::generate(3000, 11, &mut generated).unwrap();
    let generated = String::from_utf8(generated).unwrap();
    // (records, whether some operation key's mechanical lessons span several domains there)
    let corpora: [(&[(&str, &str)], bool); 2] = [
        (skillc::samples::FILES, false),
        (&[("generated.jsonl", &generated)], true),
    ];
    for (files, keys_span_domains) in corpora {
        let compile = |focus: Option<String>| {
            let mut sink = Vec::new();
            let corpus = load::load_texts(files, &load::LoadOptions::default(), &mut sink);
            let opts = pipeline::Options {
                keep: pipeline::Keep::Experiences,
                focus,
                ..Default::default()
            };
            pipeline::compile(corpus, sink, &rules, &opts)
        };
        let whole = compile(None);
        // Domains by candidates, largest first; and keys whose mechanical lessons span domains.
        let counts = pipeline::fate_counts(&whole);
        let mut domains: Vec<(&String, usize)> = counts.iter().map(|(d, f)| (d, f.iter().sum())).collect();
        domains.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut asked: Vec<String> = domains.iter().take(12).map(|(d, _)| d.to_string()).collect();
        asked.extend(["Python", "py", "pyhton", "no-such-domain"].map(String::from));
        let mut shared_keys = std::collections::BTreeMap::<&str, std::collections::BTreeSet<&str>>::new();
        for c in whole.candidates.iter().filter(|c| c.working().is_some()) {
            if let Some(k) = c.key() {
                shared_keys
                    .entry(k)
                    .or_default()
                    .insert(whole.names.get(c.domain));
            }
        }
        let spanning = shared_keys.values().filter(|d| d.len() > 1).count();
        if keys_span_domains {
            assert!(
                spanning > 0,
                "the generated corpus has mechanical keys in several domains"
            );
        }
        for d in &asked {
            let focused = compile(Some(report::why_domain(d, &rules)));
            let (a, b) = (
                report::why(&whole, &rules, d, &Default::default()),
                report::why(&focused, &rules, d, &Default::default()),
            );
            assert_eq!(a.json, b.json, "why {d}");
            assert_eq!(a.diagnostics, b.diagnostics, "why {d}");
        }
    }
}

/// A held-back narrative candidate names the signals that fired (G002's evidence, `trace`,
/// `why`), and the advice follows the field its text came from: a story in `lesson` is to be
/// rewritten, one in `breakthrough` needs a `lesson` beside it. Instructions after an opening
/// phrase or before a file name are rules, not stories.
#[test]
fn narrative_holds_name_their_signals_and_the_advice_follows_the_field() {
    let s = Scratch::new("why-narrative-fields");
    let record = |id: &str, day: u32, project: &str, field: &str, text: &str| {
        format!(
            r#"{{"id":"{id}","recorded_at":"2026-03-{day:02}T09:00:00Z","domains":["rust"],"project":"git@github.com:acme/{project}.git","outcome":"succeeded","{field}":"{text}"}}"#
        )
    };
    let story = "Fixed the flaky integration test by pinning tokio to 1.36.0 in Cargo.toml.";
    let found = "Leveraged existing parse_rows() and fetch_page() helpers from importer.rs.";
    let records = [
        record(
            "a1",
            1,
            "a",
            "lesson",
            "In CI use cargo build --locked so that the build honours Cargo.lock.",
        ),
        record(
            "a2",
            2,
            "b",
            "lesson",
            "In CI use cargo build --locked so the build honours Cargo.lock.",
        ),
        record("a3", 3, "a", "lesson", "Commit Cargo.lock for binaries."),
        record("a4", 4, "b", "lesson", "Commit Cargo.lock for binaries."),
        record("s1", 5, "a", "lesson", story),
        record("s2", 6, "b", "lesson", story),
        record("b1", 7, "a", "breakthrough", found),
    ];
    let input = s.path("in.jsonl");
    std::fs::write(&input, records.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = stdout(&o);
    assert!(summary.contains("2 rules in 1 domain,"), "{summary}");

    // G002 names what fired, for the text it shows.
    let diags = read_json(&out.join("diagnostics.json"));
    let g002 = diags_of(&diags, "G002");
    assert_eq!(g002.len(), 2, "{diags:#}");
    let of_story = g002.iter().find(|d| d["evidence"]["text"] == story).unwrap();
    let signals = &of_story["evidence"]["signals"];
    assert_eq!(signals[0], "report-verb-start", "{of_story:#}");
    assert!(signals.as_array().unwrap().iter().any(|s| s == "version-or-hash"));
    assert!(of_story["evidence"]["score"].as_i64().unwrap() >= 3);

    // trace: the candidate, its field and its signals.
    let t = trace_json("s1", &input, &out);
    let c = &t["candidates"][0];
    assert_eq!(
        (c["origin"].as_str(), c["fate"].as_str()),
        (Some("lesson"), Some("held-back"))
    );
    assert_eq!(c["narrative"]["signals"], *signals);
    let text = stdout(&skillc(&[
        "trace",
        "s1",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(
        text.contains("narrative: score") && text.contains("report-verb-start"),
        "{text}"
    );
    // A candidate that is no story carries no narrative entry.
    assert!(trace_json("a3", &input, &out)["candidates"][0]["narrative"].is_null());

    // why: advice per field, and every rescue names its field and signals.
    let o = skillc(&[
        "why",
        "rust",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let w = json(&o);
    let suggestions: Vec<&str> = (w["suggestions"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    let from_lesson = suggestions
        .iter()
        .find(|s| s.contains("from `lesson` fields"))
        .unwrap();
    assert!(
        from_lesson.starts_with("2 candidates") && from_lesson.contains("rewrite"),
        "{suggestions:?}"
    );
    assert!(!from_lesson.contains("breakthrough"), "{from_lesson}");
    let from_breakthrough = suggestions
        .iter()
        .find(|s| s.contains("from `breakthrough`"))
        .unwrap();
    assert!(
        from_breakthrough.starts_with("1 candidate from")
            && from_breakthrough.contains("write a `lesson` field")
    );
    for r in w["narrative_rescues"].as_array().unwrap() {
        let want = if r["experience"] == "b1" {
            "breakthrough"
        } else {
            "lesson"
        };
        assert_eq!(r["origin"], want, "{r}");
        assert!(!r["signals"].as_array().unwrap().is_empty(), "{r}");
    }
    let near = w["near_misses"].as_array().unwrap();
    let action = |text: &str| {
        let n = near.iter().find(|n| n["text"] == text).unwrap();
        n["action"].as_str().unwrap().to_string()
    };
    // Both tellings are held back: rewriting one would leave the cluster one short.
    assert_eq!(
        action(story),
        "rewrite the lessons of s1, s2 as the rule they teach"
    );
    assert_eq!(action(found), "write a lesson that states the rule for b1");
}

/// The same incident story recorded by three experiences (an agent that logs one postmortem
/// line to every project) is one rewrite: listed once, with the experiences that told it; and
/// its cluster, held back with three supporters where two make a rule, is "held back", not
/// "3/2", which read as a count that had passed.
#[test]
fn a_story_three_experiences_tell_is_one_rescue_and_held_back_not_short() {
    let s = Scratch::new("why-one-story-thrice");
    let story = "Reset the staging DB and reran the migrations; everything passes now.";
    let told = |id: &str, day: u32, project: &str| {
        let mut e = exp(
            id,
            &format!("2026-09-{day:02}T10:00:00Z"),
            &["postgres"],
            project,
            "succeeded",
        );
        e["lesson"] = json!(story);
        e
    };
    let input = write_jsonl(
        &s,
        "agents.jsonl",
        &[
            told("pg-1", 1, "billing"),
            told("pg-2", 2, "ledger"),
            told("pg-3", 3, "search"),
        ],
    );
    let o = skillc(&["why", "postgres", input.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let rescues = w["narrative_rescues"].as_array().unwrap();
    assert_eq!(rescues.len(), 1, "{w:#}");
    assert_eq!(rescues[0]["experiences"], json!(["pg-1", "pg-2", "pg-3"]));
    let o = skillc(&["why", "postgres", input.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("pg-1 (and 2 more): Reset the staging DB"), "{text}");
    assert!(
        text.contains("(3 experiences, held back): Reset the staging DB"),
        "{text}"
    );
    assert!(!text.contains("(3/2)"), "{text}");
}

/// Writes JSON Lines records to `name` in the scratch directory and returns its path.
fn write_jsonl(s: &Scratch, name: &str, records: &[serde_json::Value]) -> std::path::PathBuf {
    let path = s.path(name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// One experience record as agents write them.
fn exp(id: &str, at: &str, domains: &[&str], project: &str, outcome: &str) -> serde_json::Value {
    json!({"id": id, "recorded_at": at, "domains": domains,
           "project": format!("git@github.com:acme/{project}.git"), "outcome": outcome})
}

/// A shell call with its check.
fn call(command: &str, cwd: &str, ok: bool, label: &str) -> serde_json::Value {
    let mut op = json!({"tool": "bash", "args": {"command": command, "cwd": cwd},
                        "status": if ok { "ok" } else { "error" },
                        "check": {"label": label, "target": cwd, "passed": ok}});
    if !ok {
        op["error"] = json!("exit status 1");
    }
    op
}

/// Records refused for how they are written, not what they say — a key given twice (JSON
/// Lines and YAML), a Latin-1 byte — still count for the domain they name: `why helm` on a
/// domain whose every record was refused so says, and does not call it empty or misspelt.
#[test]
fn records_refused_for_a_twice_given_key_or_a_latin1_byte_count_for_their_domain() {
    let s = Scratch::new("why-refused-encoding");
    std::fs::create_dir_all(s.path("in")).unwrap();
    let mut jsonl = br#"{"id": "helm-1", "recorded_at": "2026-06-01T09:00:00Z", "domains": ["helm"], "outcome": "succeeded", "lesson": "Run helm lint before helm upgrade.", "lesson": "Run helm lint first."}"#.to_vec();
    jsonl.extend_from_slice(b"\n");
    jsonl.extend_from_slice(br#"{"id": "helm-2", "recorded_at": "2026-06-02T09:00:00Z", "domains": ["Helm"], "outcome": "succeeded", "lesson": "Pin the chart version in helm upgrade for caf"#);
    jsonl.push(0xE9); // Latin-1 "é"
    jsonl.extend_from_slice(b"-api.\"}\n");
    std::fs::write(s.path("in/sessions.jsonl"), jsonl).unwrap();
    std::fs::write(
        s.path("in/notes.yaml"),
        "- id: helm-3\n  recorded_at: 2026-06-03T09:00:00Z\n  domains: [helm]\n  outcome: succeeded\n  \
         lesson: Set --atomic on helm upgrade in CI.\n  outcome: failed\n",
    )
    .unwrap();
    let input = s.path("in");
    let o = skillc(&[
        "why",
        "helm",
        input.to_str().unwrap(),
        "--out",
        s.path("out").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let refused = &w["refused_at_load"];
    assert_eq!(refused["records"], 3, "{w:#}");
    let named: Vec<&str> = (refused["first"].as_array().unwrap().iter())
        .map(|r| r["record"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["helm-1", "helm-2", "helm-3"], "{w:#}");
    let err = stderr(&o);
    assert!(!err.contains("W003") && !err.contains("spelling"), "{err}");
}

#[test]
fn records_the_load_refused_count_for_the_domain_they_name() {
    // Agents on three projects wrote `"outcome": "success"` (not a value skillc reads) and one
    // left out `recorded_at`: every python record was refused at load. `why python` must say
    // so, with the codes and places, and not suggest a spelling mistake.
    let s = Scratch::new("why-load-refused");
    let py = |id: &str, day: u32, project: &str, outcome: &str, lesson: &str| {
        let mut r = exp(
            id,
            &format!("2026-10-{day:02}T09:00:00Z"),
            &["Python"],
            project,
            outcome,
        );
        r["lesson"] = json!(lesson);
        r["operations"] = json!([call("pytest -q", "/srv/app", true, "tests")]);
        r
    };
    let pytest = "Run pytest from the repository root so pytest-django finds pytest.ini.";
    let mut missing_time = py("py-04", 4, "ledger-api", "succeeded", pytest);
    missing_time.as_object_mut().unwrap().remove("recorded_at");
    let mut rust = exp(
        "rs-01",
        "2026-10-05T09:00:00Z",
        &["rust"],
        "cli-tool",
        "succeeded",
    );
    rust["lesson"] = json!("Use cargo build --locked in CI so the build honours Cargo.lock.");
    rust["operations"] = json!([call("cargo build --locked", "/src/cli", true, "build")]);
    let a = write_jsonl(
        &s,
        "in/claude-code.jsonl",
        &[
            py("py-01", 1, "billing-django", "success", pytest),
            py("py-02", 2, "billing-django", "success", pytest),
            rust,
        ],
    );
    write_jsonl(
        &s,
        "in/codex.jsonl",
        &[py("py-03", 3, "ledger-api", "success", pytest), missing_time],
    );
    let input = a.parent().unwrap().to_str().unwrap().to_string();
    let o = skillc(&["why", "python", &input, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let refused = &w["refused_at_load"];
    assert_eq!(refused["records"], 4, "{w:#}");
    assert_eq!(
        refused["codes"],
        json!([{"code": "L002", "name": "missing-field", "count": 1},
               {"code": "L003", "name": "invalid-value", "count": 3}])
    );
    let first = &refused["first"][0];
    assert_eq!(first["record"], "py-01");
    assert!(
        first["at"].as_str().unwrap().ends_with("claude-code.jsonl:1"),
        "{first}"
    );
    assert_eq!(first["codes"], json!(["L003"]));
    assert!(w["did_you_mean"].is_null(), "{w:#}");
    let suggestions = w["suggestions"].to_string();
    assert!(
        w["suggestions"][0]
            .as_str()
            .unwrap()
            .starts_with("4 records naming python were refused at load"),
        "{suggestions}"
    );
    // Not a spelling mistake: no W003, and the load's own errors are on stderr.
    let err = stderr(&o);
    assert!(!err.contains("W003") && !err.contains("spelling"), "{err}");
    assert!(
        err.contains("error[L003]") && err.contains("found \"success\""),
        "{err}"
    );

    let o = skillc(&["why", "python", &input]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "refused at load: 4 records naming python (L002 missing-field ×1, L003 invalid-value ×3)"
        ),
        "{text}"
    );
    assert!(text.contains("claude-code.jsonl:1 py-01: L003"), "{text}");

    // A domain nothing names is still empty, with the spelling advice.
    let o = skillc(&["why", "golang", &input]);
    assert!(stderr(&o).contains("W003"), "{}", stderr(&o));

    // --strict: 1 when some input was refused or malformed, for why and trace alike.
    let code = |args: &[&str]| skillc(args).status.code();
    assert_eq!(code(&["why", "python", &input, "--strict"]), Some(1));
    assert_eq!(code(&["why", "rust", &input, "--strict"]), Some(1));
    assert_eq!(code(&["trace", "rs-01", &input, "--strict"]), Some(1));
    assert_eq!(code(&["trace", "rs-01", &input]), Some(0));
    let clean = write_jsonl(
        &s,
        "clean.jsonl",
        &[
            json!({"id": "rs-02", "recorded_at": "2026-10-06T09:00:00Z", "domains": ["rust"], "project": "git@github.com:acme/cli-tool.git", "outcome": "succeeded", "lesson": "Use cargo build --locked in CI so the build honours Cargo.lock."}),
        ],
    );
    let clean = clean.to_str().unwrap();
    assert_eq!(code(&["why", "rust", clean, "--strict"]), Some(0));
    assert_eq!(code(&["trace", "rs-02", clean, "--strict"]), Some(0));
}

/// The django migration lesson: admitted from one project, then in play in a failed merge.
fn migration_lesson_records(s: &Scratch) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let merge = "When two branches add migrations to the same app, run makemigrations --merge instead of renumbering the files.";
    let mut first = exp(
        "dj-401",
        "2026-10-04T09:30:00Z",
        &["django"],
        "billing-django",
        "succeeded",
    );
    first["task"] = json!("Resolve migration conflict after rebase");
    first["lesson"] = json!(merge);
    first["operations"] = json!([call("pytest -q", "/srv/billing", true, "tests")]);
    let b1 = write_jsonl(s, "b1.jsonl", &[first]);
    let out = s.path("out1");
    let o = compile_to(&b1, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let id = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    let mut failed = exp(
        "dj-402",
        "2026-10-09T09:00:00Z",
        &["django"],
        "billing-django",
        "failed",
    );
    failed["task"] = json!("Merge the payments branch");
    failed["in_play"] = json!([id]);
    failed["operations"] = json!([
        {"tool": "bash", "args": {"command": "python manage.py makemigrations --merge --noinput", "cwd": "/srv/billing"}, "status": "ok"},
        call("pytest -q", "/srv/billing", false, "tests"),
    ]);
    let b2 = write_jsonl(s, "b2.jsonl", &[failed]);
    (b1, b2, id)
}

#[test]
fn a_contradicted_near_miss_says_so_and_is_not_offered_for_blessing() {
    let s = Scratch::new("why-contradicted-near-miss");
    let (b1, b2, id) = migration_lesson_records(&s);
    let (b1, b2) = (b1.to_str().unwrap(), b2.to_str().unwrap());
    let o = skillc(&["why", "django", b1, b2, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let near = &w["near_misses"][0];
    assert_eq!(near["lesson_or_cluster"], id.as_str());
    assert_eq!(near["contradicted_by"], json!(["dj-402"]), "{near}");
    assert_eq!(near["confidence"], json!(0.25));
    let action = near["action"].as_str().unwrap();
    assert!(action.contains("contradicted by dj-402"), "{action}");
    assert!(
        action.contains("one more contradiction supersedes it"),
        "{action}"
    );
    assert!(
        action.contains(&format!("skillc lessons retire {id}")),
        "{action}"
    );
    assert!(
        !action.contains("bless"),
        "no blessing a contradicted lesson: {action}"
    );
    let suggestions: Vec<&str> = (w["suggestions"].as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        !suggestions.iter().any(|s| s.contains("bless dj-401")),
        "{suggestions:?}"
    );
    // One project: the rules are project-scoped, and a domain is never told to become itself.
    let scoped = suggestions
        .iter()
        .find(|s| s.starts_with("every experience comes from one project"))
        .unwrap();
    assert!(
        scoped.contains("projects/") && scoped.contains("/django/SKILL.md"),
        "{scoped}"
    );
    assert!(
        !suggestions
            .iter()
            .any(|s| s.contains("`django`") || s.contains("narrow")),
        "one lesson: narrowing helps nothing: {suggestions:?}"
    );
    let text = stdout(&skillc(&["why", "django", b1, b2]));
    assert!(
        text.contains(&format!("{id} (1/2, confidence 0.250, contradicted 1×)")),
        "{text}"
    );

    // A lesson nothing contradicted is still one blessing away, confidence shown.
    let o = skillc(&["why", "django", b1]);
    let text = stdout(&o);
    assert!(text.contains(&format!("{id} (1/2, confidence 0.500)")), "{text}");
    assert!(text.contains("or bless dj-401 if you know it holds"), "{text}");
}

/// terraform on infra-live (experience `id`): a plan held on the state lock, fixed with
/// -lock-timeout. Its records file and the ledger of compiling it alone.
fn terraform_lock_lesson(s: &Scratch, id: &str) -> (std::path::PathBuf, serde_json::Value) {
    let mut tf1 = exp(
        id,
        "2026-10-01T08:00:00Z",
        &["terraform"],
        "infra-live",
        "succeeded",
    );
    tf1["operations"] = json!([
        {"tool": "bash", "args": {"command": "terraform plan -out=tfplan", "cwd": "/infra/prod"}, "status": "error",
         "error": "Error: Error acquiring the state lock: ConditionalCheckFailedException"},
        call("terraform plan -lock-timeout=5m -out=tfplan", "/infra/prod", true, "plan"),
    ]);
    let first = write_jsonl(s, "tf1.jsonl", &[tf1]);
    let out = s.path("out-tf");
    assert_eq!(compile_to(&first, &out, &[]).status.code(), Some(0));
    (first, read_json(&out.join("ledger.json")))
}

#[test]
fn trace_shows_what_an_experience_did_to_the_lessons_it_had_in_play() {
    let s = Scratch::new("trace-attribution");
    // A later run with the lock-timeout lesson in play confirms it.
    let (first, ledger) = terraform_lock_lesson(&s, "tf-101");
    let (b1, b2, django) = migration_lesson_records(&s);
    let tf = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    let mut tf2 = exp(
        "tf-102",
        "2026-10-10T08:00:00Z",
        &["terraform"],
        "payments-infra",
        "succeeded",
    );
    // The terraform lesson, the django lesson (no key, another domain) and an id no lesson has.
    tf2["in_play"] = json!([tf, django, "L000000000000"]);
    tf2["operations"] = json!([call(
        "terraform plan -lock-timeout=5m -out=tfplan",
        "/infra/prod",
        true,
        "plan"
    )]);
    let second = write_jsonl(&s, "tf2.jsonl", &[tf2]);
    let inputs = [
        first.to_str().unwrap(),
        second.to_str().unwrap(),
        b1.to_str().unwrap(),
        b2.to_str().unwrap(),
    ];
    let trace = |id: &str, json_out: bool| {
        let mut args = vec!["trace", id];
        args.extend(inputs);
        if json_out {
            args.extend(["--format", "json"]);
        }
        let o = skillc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    let t = json(&trace("tf-102", true));
    let a = t["attribution"].as_array().unwrap();
    assert_eq!(a.len(), 3, "{t:#}");
    assert_eq!(
        (
            &a[0]["lesson"],
            &a[0]["effect"],
            &a[0]["confidence_before"],
            &a[0]["confidence_after"]
        ),
        (&json!(tf), &json!("confirmed"), &json!(0.5), &json!(0.65)),
        "{t:#}"
    );
    assert_eq!(
        (&a[1]["lesson"], &a[1]["effect"]),
        (&json!(django), &json!("neither"))
    );
    assert!(
        a[1]["reason"]
            .as_str()
            .unwrap()
            .starts_with("not in play in its domain"),
        "{}",
        a[1]
    );
    assert_eq!(a[2]["effect"], "neither");
    assert!(
        a[2]["reason"].as_str().unwrap().starts_with("unknown id"),
        "{}",
        a[2]
    );
    let text = stdout(&trace("tf-102", false));
    assert!(
        text.contains(&format!("{tf} confirmed: confidence 0.500 → 0.650")),
        "{text}"
    );
    // Confirming the lesson it had in play was its contribution: no K001 says it yielded
    // nothing.
    assert!(!text.contains("[K001]"), "{text}");

    // A contradiction names the lesson and what it cost.
    let t = json(&trace("dj-402", true));
    assert_eq!(
        (
            &t["attribution"][0]["effect"],
            &t["attribution"][0]["confidence_before"],
            &t["attribution"][0]["confidence_after"]
        ),
        (&json!("contradicted"), &json!(0.5), &json!(0.25)),
        "{t:#}"
    );
    let text = stdout(&trace("dj-402", false));
    assert!(
        text.contains(&format!("{django} contradicted: confidence 0.500 → 0.250")),
        "{text}"
    );
}

/// Each way an experience can leave a lesson it had in play untouched has its own reason in
/// `trace`: the lesson's working form not run, run but only failed transiently, and an outcome
/// that says nothing.
#[test]
fn trace_says_why_an_in_play_lesson_was_neither_confirmed_nor_contradicted() {
    let s = Scratch::new("trace-neither");
    let (first, ledger) = terraform_lock_lesson(&s, "tf-201");
    let tf = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    assert!(ledger["lessons"][0]["working_args"].is_string(), "{ledger:#}");
    let (b1, _, django) = migration_lesson_records(&s);

    // The working form ran, but the registry's connection reset: transient, never blamed.
    let mut flaky = exp(
        "tf-202",
        "2026-10-05T08:00:00Z",
        &["terraform"],
        "payments-infra",
        "failed",
    );
    flaky["in_play"] = json!([tf]);
    flaky["operations"] = json!([
        {"tool": "bash", "args": {"command": "terraform plan -lock-timeout=5m -out=tfplan", "cwd": "/infra/prod"},
         "status": "error", "error": "Error: Failed to query available provider packages: connection reset by peer"},
    ]);
    // The plan ran without the lesson's flag.
    let mut bare = exp(
        "tf-203",
        "2026-10-06T08:00:00Z",
        &["terraform"],
        "payments-infra",
        "succeeded",
    );
    bare["in_play"] = json!([tf]);
    bare["operations"] = json!([call("terraform plan -out=tfplan", "/infra/prod", true, "plan")]);
    // A django session that pivoted: neither passed nor failed.
    let mut pivot = exp(
        "dj-403",
        "2026-10-11T09:00:00Z",
        &["django"],
        "billing-django",
        "pivoted",
    );
    pivot["in_play"] = json!([django]);
    let later = write_jsonl(&s, "later.jsonl", &[flaky, bare, pivot]);
    let inputs = [
        first.to_str().unwrap(),
        b1.to_str().unwrap(),
        later.to_str().unwrap(),
    ];
    let reason = |id: &str| {
        let mut args = vec!["trace", id];
        args.extend(inputs);
        args.extend(["--format", "json"]);
        let o = skillc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let t = json(&o);
        assert_eq!(t["attribution"][0]["effect"], "neither", "{t:#}");
        t["attribution"][0]["reason"].as_str().unwrap().to_string()
    };
    let key = ledger["lessons"][0]["operation_key"].as_str().unwrap();
    assert_eq!(
        reason("tf-202"),
        format!("its runs of the working form on `{key}` were refused or failed transiently")
    );
    assert_eq!(
        reason("tf-203"),
        format!("it did not run the lesson's working form on `{key}`")
    );
    assert_eq!(
        reason("dj-403"),
        "outcome pivoted: neither confirms nor contradicts"
    );
}

/// S002 gives the confidence the contradiction left, not where a later confirmation took it.
#[test]
fn a_contradiction_reports_the_confidence_it_left() {
    let s = Scratch::new("contradiction-confidence");
    let (b1, b2, django) = migration_lesson_records(&s);
    let mut passed = exp(
        "dj-404",
        "2026-10-12T09:00:00Z",
        &["django"],
        "billing-django",
        "succeeded",
    );
    passed["in_play"] = json!([django]);
    passed["operations"] = json!([call("pytest -q", "/srv/billing", true, "tests")]);
    let b3 = write_jsonl(&s, "b3.jsonl", &[passed]);
    let out = s.path("out-all");
    let o = skillc(&[
        "compile",
        b1.to_str().unwrap(),
        b2.to_str().unwrap(),
        b3.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    assert_eq!(
        ledger["lessons"][0]["confidence"],
        json!(0.4),
        "0.500 − 0.250 + 0.150"
    );
    let diags = read_json(&out.join("diagnostics.json"));
    let s002 = diags_of(&diags, "S002");
    assert_eq!(s002.len(), 1, "{diags:#}");
    assert_eq!(s002[0]["evidence"]["confidence"], json!(0.25), "{:#}", s002[0]);
    assert!(
        s002[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("dj-402; confidence after it: 0.250"),
        "{:#}",
        s002[0]
    );
}

/// The "rules are in projects/…" hint is for a domain whose lessons are that project's; a
/// domain whose only lesson is a global claim is not sent to a project's SKILL.md.
#[test]
fn a_global_claim_is_not_sent_to_a_projects_skill() {
    let s = Scratch::new("why-global-claim");
    // One project's upgrade session, with or without a lesson of its own, and a model's claim
    // with no evidence (claimed, global).
    let hints = |file: &str, lesson: Option<&str>| -> Vec<String> {
        let mut e = exp("helm-1", "2026-06-01T09:00:00Z", &["helm"], "charts", "succeeded");
        e["task"] = json!("Upgrade the ingress chart");
        if let Some(l) = lesson {
            e["lesson"] = json!(l);
        }
        let claim = json!({"type": "lesson", "id": "cl-helm-1", "recorded_at": "2026-06-02T09:00:00Z",
            "domains": ["helm"], "kind": "do", "source": "model", "evidence": [],
            "text": "Pass --atomic to helm upgrade in CI so a failed release rolls back."});
        let input = write_jsonl(&s, file, &[e, claim]);
        let o = skillc(&["why", "helm", input.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (json(&o)["suggestions"].as_array().unwrap().iter())
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let scoped =
        |hints: &[String]| (hints.iter()).any(|h| h.starts_with("every experience comes from one project"));
    let with_lesson = hints(
        "helm.jsonl",
        Some("Run helm diff upgrade before helm upgrade so the change is reviewed."),
    );
    assert!(
        with_lesson.iter().any(|h| h.contains("only one experience")),
        "the project's own lesson is below reinforcement: {with_lesson:?}"
    );
    assert!(
        scoped(&with_lesson),
        "the project's lesson is project-scoped: {with_lesson:?}"
    );
    // Without the project's lesson, only the global claim is left.
    let claim_only = hints("helm2.jsonl", None);
    assert!(!scoped(&claim_only), "{claim_only:?}");
}

/// `trace` of a claim says it is one, where it was read and what it cites.
#[test]
fn trace_of_a_claim_names_its_file_line_and_evidence() {
    let s = Scratch::new("trace-claim");
    let claim = json!({"type": "lesson", "id": "cl-alembic-2", "recorded_at": "2026-06-14T10:00:00Z",
        "domains": ["python"], "kind": "do", "source": "model", "evidence": ["cc-999"],
        "text": "Run alembic upgrade head in the container entrypoint, not in the Dockerfile."});
    let mut e = exp(
        "cc-101",
        "2026-06-10T09:00:00Z",
        &["python"],
        "billing",
        "succeeded",
    );
    e["task"] = json!("Fix the migration job");
    let input = write_jsonl(&s, "mixed.jsonl", &[e, claim]);
    let o = skillc(&["trace", "cl-alembic-2", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("claim cl-alembic-2\n"), "{text}");
    assert!(
        text.contains("mixed.jsonl:2 recorded 2026-06-14T10:00:00Z"),
        "{text}"
    );
    assert!(text.contains(r#"do from model, evidence ["cc-999"]"#), "{text}");
    assert!(text.contains("fate refused (G005 fabricated-evidence)"), "{text}");
    let o = skillc(&[
        "trace",
        "cl-alembic-2",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let r = &json(&o)["record"];
    assert_eq!(
        (&r["type"], &r["line"], &r["source"]),
        (&json!("claim"), &json!(2), &json!("model"))
    );
}

#[test]
fn why_selections_do_not_depend_on_file_names() {
    // Sixteen flaky-test stories (more than the ten rescues shown) and one lesson two failed
    // runs share, split over two files; the same records under swapped file names must give
    // the same report.
    let story = |i: u32| {
        let mut r = exp(
            &format!("n-{i:02}"),
            &format!("2026-10-{:02}T09:00:00Z", i + 1),
            &["python"],
            if i.is_multiple_of(2) {
                "billing-django"
            } else {
                "ledger-api"
            },
            "succeeded",
        );
        r["breakthrough"] = json!(format!(
            "I fixed the flaky test in tests/test_mod{i}.py by pinning the timezone to UTC; PR #{} went green.",
            400 + i
        ));
        r["operations"] = json!([call(
            &format!("pytest tests/test_mod{i}.py"),
            "/srv/app",
            true,
            "tests"
        )]);
        r
    };
    let failed = |id: &str, day: u32| {
        let mut r = exp(
            id,
            &format!("2026-11-{day:02}T09:00:00Z"),
            &["python"],
            "ledger-api",
            "failed",
        );
        r["lesson"] = json!("Pin pytest-asyncio to the version the event loop fixture was written for.");
        r["operations"] = json!([call("pytest -q", "/srv/ledger", false, "tests")]);
        r
    };
    let early: Vec<serde_json::Value> = (0..8).map(story).chain([failed("f-2", 2)]).collect();
    let late: Vec<serde_json::Value> = (8..16).map(story).chain([failed("f-1", 1)]).collect();
    let s = Scratch::new("why-file-names");
    write_jsonl(&s, "A/agent-a.jsonl", &early);
    write_jsonl(&s, "A/agent-b.jsonl", &late);
    write_jsonl(&s, "B/agent-a.jsonl", &late);
    write_jsonl(&s, "B/agent-b.jsonl", &early);
    let why = |dir: &str| {
        let o = skillc(&["why", "python", s.path(dir).to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)
    };
    let (a, b) = (why("A"), why("B"));
    assert_eq!(a, b);
    let rescued: Vec<&str> = (a["narrative_rescues"].as_array().unwrap().iter())
        .map(|r| r["experience"].as_str().unwrap())
        .collect();
    assert_eq!(rescued.len(), 10);
    assert_eq!(rescued[0], "n-00", "{rescued:?}");
    let held = (a["near_misses"].as_array().unwrap().iter())
        .find(|n| n["text"].as_str().unwrap().contains("pytest-asyncio"))
        .expect("the failed runs' lesson is a near miss");
    assert_eq!(
        held["action"],
        "bless f-1 if the lesson holds despite the outcome"
    );
}

/// OmniMem memories the load refuses name their domains through their `tags` (a JSON list in a
/// string, a comma list, aliases), as native records do through `domains`: `why go` counts
/// them with the native one, and leaves out the memory of another domain and the one whose
/// tags were cut short (no domain can be read from it).
#[test]
fn why_counts_omnimem_memories_refused_at_load() {
    let s = Scratch::new("why-omnimem-refused");
    let native = json!({"id": "nat-bad-time", "recorded_at": "2026-13-45T00:00:00Z", "domains": ["go"],
        "project": "https://github.com/acme/kctl", "outcome": "succeeded",
        "lesson": "Run go vet before go test in CI"});
    std::fs::write(s.path("native.jsonl"), format!("{native}\n")).unwrap();
    let memory = |key: &str, tags: serde_json::Value, project: serde_json::Value, created: &str| {
        json!({"key": key, "tags": tags, "project": project, "outcome": "succeeded",
               "created_at": created, "effort_score": "2", "state": "active",
               "lesson": "Use t.Setenv instead of os.Setenv in Go tests so the variable is restored"})
    };
    let kctl = json!("https://github.com/acme/kctl");
    let export = json!([
        memory(
            "mem-go-setenv-0",
            json!("[\"golang\", \"testing\"]"),
            kctl.clone(),
            "1767517200"
        ),
        memory(
            "mem-go-setenv-1",
            json!(["go"]),
            json!("git@github.com:acme/deployer.git"),
            "1767949200"
        ),
        memory("mem-bad-time", json!(["go"]), kctl.clone(), "yesterday"),
        memory(
            "mem-project-number",
            json!("go, testing"),
            json!(12345),
            "1769504400"
        ),
        memory("mem-golang-alias", json!("[\"Golang\"]"), kctl.clone(), "-5"),
        memory(
            "mem-dj-bad-time",
            json!(["django"]),
            json!("git@github.com:acme/orders-api.git"),
            "soon"
        ),
        memory(
            "mem-cut-tags",
            json!("[\"go\", \"testi"),
            kctl.clone(),
            "1769504400"
        ),
    ]);
    // Memories retired in OmniMem are not compiled, and `why` says how many named the domain.
    let mut export = export;
    for (key, state) in [("mem-go-arch-0", "archived"), ("mem-go-del-1", "deleted")] {
        let mut m = memory(key, json!(["go"]), kctl.clone(), "1769504400");
        m["state"] = json!(state);
        export.as_array_mut().unwrap().push(m);
    }
    std::fs::write(
        s.path("omnimem-export.json"),
        serde_json::to_string_pretty(&export).unwrap(),
    )
    .unwrap();
    let export = s.path("omnimem-export.json");
    let w = why_json_in("go", &s.path("native.jsonl"), &[export.to_str().unwrap()]);
    let refused = &w["refused_at_load"];
    let records: Vec<&str> = (refused["first"].as_array().unwrap().iter())
        .map(|r| r["record"].as_str().unwrap())
        .collect();
    assert_eq!(
        records,
        [
            "mem-bad-time",
            "mem-golang-alias",
            "mem-project-number",
            "nat-bad-time"
        ],
        "{refused:#}"
    );
    assert_eq!(refused["records"], 4);
    assert_eq!(w["inactive_memories"], json!(["mem-go-arch-0", "mem-go-del-1"]));
    let o = skillc(&[
        "why",
        "go",
        s.path("native.jsonl").to_str().unwrap(),
        s.path("omnimem-export.json").to_str().unwrap(),
    ]);
    assert!(
        stdout(&o).contains("not active: 2 OmniMem memories naming go (mem-go-arch-0, mem-go-del-1)"),
        "{}",
        stdout(&o)
    );
}

/// Without INPUT, `why` and `trace` explain the sample corpus, not the records compiled into
/// `--out`: a user who compiled their own records and asks `skillc why go --out out` is told
/// which records the answer is about, on stderr, so the JSON on stdout stays whole.
#[test]
fn without_input_why_and_trace_say_they_read_the_sample_corpus() {
    let s = Scratch::new("why-sample-fallback");
    let input = s.path("records.jsonl");
    let record = json!({"id": "gm-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["go"],
        "project": "git@github.com:acme/ledger.git", "outcome": "succeeded",
        "lesson": "Run `go mod tidy` after changing imports so go.sum has every entry."});
    std::fs::write(&input, format!("{record}\n")).unwrap();
    let out = s.path("out");
    assert_eq!(compile_to(&input, &out, &[]).status.code(), Some(0));
    let out = out.to_str().unwrap();
    // Run where there is no ./samples: the copy built into the binary is read.
    for args in [
        vec!["why", "go", "--out", out, "--format", "json"],
        vec!["trace", "b-4b2447dc5d", "--out", out, "--format", "json"],
    ] {
        let o = skillc_in(&s.path(""), &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("no INPUT was given, so this reads the sample corpus built into skillc")
                && err.contains(&format!("`skillc {} ", args[0])),
            "{args:?}: {err}"
        );
        assert!(json(&o).is_object(), "{args:?}");
    }
    // Named records: no note.
    let o = skillc(&["why", "go", input.to_str().unwrap(), "--out", out]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!stderr(&o).contains("no INPUT"), "{}", stderr(&o));
    assert!(stdout(&o).contains("domain go"), "{}", stdout(&o));
}

/// A near miss that is a dead end or a gotcha says so: `why` listed "kubectl rollout restart
/// (1/2): kubectl rollout restart → bless lg-16 if you know it holds", which reads as an
/// instruction to run the very command the agent abandoned. It is worded as the plan-time
/// block and SKILL.md word it ("Avoid: … — reason", "Watch out: …"), and the JSON says its kind.
#[test]
fn near_misses_that_are_dead_ends_or_gotchas_say_so() {
    let s = Scratch::new("why-near-kinds");
    let record = json!({"id": "lg-16", "recorded_at": "2026-11-05T10:00:00Z", "domains": ["kubernetes"],
        "project": "git@github.com:payments/ledger-svc.git", "task": "Rollout stuck", "outcome": "failed",
        "operations": [{"tool": "Bash", "args": {"command": "kubectl rollout status deploy/ledger-svc --timeout=120s"},
            "status": "error", "error": "error: deployment \"ledger-svc\" exceeded its progress deadline",
            "check": {"label": "rollout", "target": "ledger-svc", "passed": false}}],
        "dead_ends": [{"name": "kubectl rollout restart", "reason": "the new pods failed readiness the same way"}],
        "gotchas": ["A readiness probe that checks the database makes every pod unready when the database blips"]});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let w = why_json_in("kubernetes", &input, &["--out", out.to_str().unwrap()]);
    let near = w["near_misses"].as_array().unwrap();
    let kind_of = |needle: &str| {
        (near.iter())
            .find(|n| n["text"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("{needle} is a near miss: {w}"))["kind"]
            .clone()
    };
    assert_eq!(kind_of("rollout restart"), "avoid");
    assert_eq!(kind_of("readiness probe"), "watch");

    let o = skillc(&[
        "why",
        "kubernetes",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(": Avoid: kubectl rollout restart — the new pods failed readiness the same way\n"),
        "{text}"
    );
    assert!(
        text.contains(": Watch out: A readiness probe that checks the database"),
        "{text}"
    );
}

/// `trace` says why a failed call that was then fixed taught nothing when the record's own
/// dead end gives the fix up (`git commit --no-verify` after the hooks failed).
#[test]
fn trace_names_the_dead_end_that_gives_a_fix_up() {
    let s = Scratch::new("trace-abandoned-fix");
    let record = json!({"id": "sf-18", "recorded_at": "2026-11-11T09:00:00Z", "domains": ["git"],
        "project": "git@github.com:shopco/storefront.git", "task": "Commit the coupon feature", "outcome": "succeeded",
        "operations": [
            {"tool": "Bash", "args": {"command": "git commit -m 'Add coupon codes'", "description": "Commit"},
             "status": "error", "error": "ruff....................Failed\n- hook id: ruff\n- exit code: 1"},
            {"tool": "Bash", "args": {"command": "git commit --no-verify -m 'Add coupon codes'", "description": "Commit, skipping hooks"},
             "status": "ok"}],
        "dead_ends": [{"name": "Skip the pre-commit hooks with git commit --no-verify",
                       "reason": "CI runs the same hooks and the pipeline failed"}],
        "lesson": "Fix what the pre-commit hooks report instead of bypassing them; CI runs the same hooks."});
    let input = write_jsonl(&s, "in/sessions.jsonl", &[record]);
    let out = s.path("out");
    let t = trace_json("sf-18", &input, &out);
    assert_eq!(
        t["record"]["abandoned_fixes"],
        json!([{"fix": "Bash git: run `git commit --no-verify -m 'Add coupon codes'` instead of `git commit -m 'Add coupon codes'`",
                "dead_end": "Skip the pre-commit hooks with git commit --no-verify"}])
    );
    let origins: Vec<&str> = (t["candidates"].as_array().unwrap().iter())
        .map(|c| c["origin"].as_str().unwrap())
        .collect();
    assert!(!origins.contains(&"mechanical"), "{t}");
    let o = skillc(&[
        "trace",
        "sf-18",
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("  fix not learned: Bash git: run `git commit --no-verify -m 'Add coupon codes'` instead of `git commit -m 'Add coupon codes'` — its own dead end \"Skip the pre-commit hooks with git commit --no-verify\" gives it up\n"),
        "{}",
        stdout(&o)
    );
}

/// Seven python lessons, each seen once, are seven near misses one experience short: the five
/// listed are the ones the agents met last, newest first, not the five smallest ids.
#[test]
fn near_misses_of_equal_gap_list_the_most_recently_seen_first() {
    let s = Scratch::new("why-near-recent");
    let lessons = [
        (
            "2026-03-02",
            "Run alembic upgrade head before the test suite when a migration was added.",
        ),
        (
            "2026-03-09",
            "Pin pydantic below 2 while FastAPI 0.95 is in the lock file.",
        ),
        (
            "2026-04-14",
            "Use pytest --import-mode=importlib when two test packages share a module name.",
        ),
        (
            "2026-05-21",
            "Set PYTHONHASHSEED=0 in CI when a test depends on set iteration order.",
        ),
        (
            "2026-06-03",
            "Call asyncio.run once at the entry point; nested event loops fail under uvicorn.",
        ),
        (
            "2026-06-30",
            "Freeze time with freezegun instead of patching datetime.now in the module under test.",
        ),
        (
            "2026-07-15",
            "Install psycopg2-binary in the test image; building psycopg2 needs libpq headers.",
        ),
    ];
    let records: String = (lessons.iter().enumerate())
        .map(|(i, (day, lesson))| {
            format!(
                "{}\n",
                json!({"id": format!("py-{i:02}"), "recorded_at": format!("{day}T10:00:00Z"),
                       "domains": ["python"], "project": "git@github.com:acme/billing-api.git",
                       "outcome": "succeeded", "lesson": lesson})
            )
        })
        .collect();
    std::fs::write(s.path("sessions.jsonl"), records).unwrap();
    let w = why_json_in(
        "python",
        &s.path("sessions.jsonl"),
        &["--out", s.path("out").to_str().unwrap()],
    );
    let listed: Vec<&str> = (w["near_misses"].as_array().unwrap().iter())
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = lessons.iter().rev().take(5).map(|(_, l)| *l).collect();
    assert_eq!(listed, newest_first, "{w:#}");
}

/// A commit message kept as a lesson opens with an imperative (a rule signal) and reads as a
/// story anyway: the rescue names what made it one, not the imperative that argued against it.
#[test]
fn a_rescue_names_the_story_signals_only() {
    let s = Scratch::new("why-rescue-signals");
    let records: Vec<serde_json::Value> = ["ci-1", "ci-2"]
        .iter()
        .enumerate()
        .map(|(k, id)| {
            serde_json::json!({
                "id": id,
                "recorded_at": format!("2026-11-0{}T10:00:00Z", k + 3),
                "domains": ["github-actions"],
                "project": format!("/home/dev/svc-{k}"),
                "outcome": "succeeded",
                "lesson": "fix(ci): pin actions/checkout to v4.1.1 after the v4.2 tag broke sparse checkout (fixes #882)",
            })
        })
        .collect();
    let input = write_jsonl(&s, "ci.jsonl", &records);
    let o = skillc(&[
        "why",
        "github-actions",
        input.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w = json(&o);
    let rescue = &w["narrative_rescues"][0];
    let signals: Vec<&str> = (rescue["signals"].as_array().unwrap().iter())
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(signals.contains(&"commit-message"), "{rescue:#}");
    assert!(!signals.contains(&"imperative-start"), "{rescue:#}");
}
