//! The foundation, end to end through the binary: what `skillc compile` produces on a corpus
//! with bad lines, secrets, `../` domains, failed and pivoted outcomes, refused and transient
//! tool errors, stale and contradicting checks (DESIGN §3–§5, §7).

mod common;

use common::*;

fn compile_foundation(s: &Scratch) -> (serde_json::Value, serde_json::Value, std::process::Output) {
    let out = s.path("out");
    let o = compile_to(&fixture("foundation"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    (
        read_json(&out.join("ledger.json")),
        read_json(&out.join("diagnostics.json")),
        o,
    )
}

fn lesson_with<'a>(ledger: &'a serde_json::Value, needle: &str) -> &'a serde_json::Value {
    ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"].as_str().unwrap().contains(needle) && l["status"] == "active")
        .unwrap_or_else(|| panic!("no active lesson containing {needle:?}"))
}

#[test]
fn recurring_paraphrases_from_two_projects_become_a_global_rule() {
    let s = Scratch::new("foundation-rules");
    let (ledger, _, _) = compile_foundation(&s);
    let pytest = lesson_with(&ledger, "conftest.py");
    assert_eq!(pytest["rule"], true);
    assert_eq!(pytest["scope"], "global");
    assert_eq!(pytest["kind"], "do");
    let ev = ids(&pytest["evidence"]);
    assert_eq!(
        ev,
        ["e-py-001", "e-py-002", "e-py-009"],
        "paraphrase from another project joins"
    );
    // Admitted at 0.500 on 10-01; python has experiences on six later days this lesson was not
    // used (10-04…10-08, 10-16): 0.500 − 6 × 0.020.
    assert_eq!(pytest["confidence"], 0.38);
    let skill = std::fs::read_to_string(s.path("out/python/SKILL.md")).unwrap();
    assert!(skill.contains(pytest["text"].as_str().unwrap()));
    assert!(skill.contains(pytest["id"].as_str().unwrap()));

    // `py` is an alias; the cargo --locked paraphrases and the avoid lesson are global too.
    let locked = lesson_with(&ledger, "--locked");
    assert_eq!(
        (locked["rule"].as_bool(), locked["scope"].as_str()),
        (Some(true), Some("global"))
    );
    let avoid = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "avoid")
        .unwrap();
    assert_eq!(
        avoid["text"].as_str().unwrap().to_lowercase(),
        "cargo update in ci"
    );
    assert_eq!(avoid["rule"], true);
    let rust = std::fs::read_to_string(s.path("out/rust/SKILL.md")).unwrap();
    assert!(rust.contains("## Do") && rust.contains("## Avoid"));
}

#[test]
fn failed_then_fixed_operations_teach_a_project_rule_but_retries_do_not() {
    let s = Scratch::new("foundation-mechanical");
    let (ledger, _, _) = compile_foundation(&s);
    let mech: Vec<&serde_json::Value> = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| !l["working_args"].is_null())
        .collect();
    // Only pytest (cwd changed) teaches: the timeout retry, the refused call and the identical
    // `cargo test` retry do not.
    assert_eq!(mech.len(), 1, "{mech:#?}");
    let m = mech[0];
    assert_eq!(m["operation_key"], "run_shell_command pytest");
    assert!(m["scope"].as_str().unwrap().starts_with("project:"));
    assert_eq!(m["rule"], true, "two experiences of one project");
    let digest = m["scope"].as_str().unwrap().trim_start_matches("project:");
    assert_eq!(digest.len(), 12);
    assert!(
        s.path(&format!("out/projects/{digest}/python/SKILL.md"))
            .is_file()
    );
}

#[test]
fn every_held_back_and_refused_candidate_is_explained() {
    let s = Scratch::new("foundation-diags");
    let (ledger, diags, _) = compile_foundation(&s);
    let has = |code: &str, id: &str| diags_of(&diags, code).iter().any(|d| names(d, id));
    // Outcome gate: failed, pivoted, contradicted by checks, only stale checks.
    for id in ["e-py-004", "e-py-005", "e-py-006", "e-py-007"] {
        assert!(has("G001", id), "outcome-gate for {id}");
    }
    // Each says why its run did not pass, in the message and beside the id in the evidence.
    let why_not = |id: &str| -> (String, String) {
        let d = diags_of(&diags, "G001")
            .into_iter()
            .find(|d| names(d, id))
            .unwrap();
        let ev = &d["evidence"];
        let at = ids(&ev["experiences"]).iter().position(|x| x == id).unwrap();
        let outcome = ev["outcomes"][at].as_str().unwrap_or_default().to_string();
        (outcome, d["message"].as_str().unwrap().to_string())
    };
    for (id, reason) in [
        ("e-py-004", "outcome failed"),
        ("e-py-005", "outcome pivoted, and policy allow_pivoted is off"),
        (
            "e-py-006",
            "outcome succeeded, but a check failed after the last change",
        ),
        (
            "e-py-007",
            "outcome succeeded, but every check ran before the last change",
        ),
    ] {
        let (outcome, message) = why_not(id);
        assert_eq!(outcome, reason, "{id}");
        assert!(message.contains(reason), "{id}: {message}");
    }
    assert!(has("O001", "e-py-006"), "success contradicted by its checks");
    assert!(has("O002", "e-py-007"), "stale checks");
    assert!(has("G002", "e-py-003"), "narrative breakthrough");
    assert!(has("N002", "e-git-001"), "credential");
    assert!(has("N001", "e-git-002"), "invalid domain");
    // Blessing bypasses the outcome gate and reinforcement.
    let blessed = lesson_with(&ledger, "lock file for pip");
    assert_eq!(blessed["rule"], true);
    assert!(!has("G001", "e-py-008"));
    // The git gotcha survives the refused `../etc` domain and recurs in another project.
    let watch = lesson_with(&ledger, "autosquash");
    assert_eq!(
        (watch["kind"].as_str(), watch["rule"].as_bool()),
        (Some("watch"), Some(true))
    );
    assert!(!s.path("etc").exists());
}

#[test]
fn a_refused_domain_never_becomes_a_lesson_or_a_path_even_when_its_lesson_recurs() {
    let s = Scratch::new("refused-domains");
    let input = s.path("in.jsonl");
    let bad = ["../etc", "/etc/cron.d", "..", "hooks/../../escape", "C:\\Windows"];
    let gotcha = "core.hooksPath overrides .git/hooks entirely, so old local hooks silently stop running.";
    // The same gotcha from two projects: in a valid domain it is a rule, so in a refused one it
    // would be one too if the refusal did not hold.
    let records: String = ["git@github.com:acme/ingest.git", "git@gitlab.com:acme-platform/infra-k8s.git"]
        .iter()
        .enumerate()
        .map(|(i, project)| {
            let mut domains = vec!["git"];
            domains.extend(bad);
            format!(
                "{}\n",
                serde_json::json!({"id": format!("hooks-{i}"), "recorded_at": format!("2026-10-1{i}T09:00:00Z"),
                    "domains": domains, "project": project, "task": "clean up the hooks", "outcome": "succeeded",
                    "gotchas": [gotcha]})
            )
        })
        .collect();
    std::fs::write(&input, records).unwrap();
    let out = s.path("work/out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let diags = read_json(&out.join("diagnostics.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let git = lesson_with(&ledger, "hooksPath");
    assert_eq!(
        (git["domain"].as_str(), git["rule"].as_bool()),
        (Some("git"), Some(true))
    );
    assert!(
        lessons.iter().all(|l| l["domain"] == "git"),
        "{:?}",
        lessons.iter().map(|l| &l["domain"]).collect::<Vec<_>>()
    );
    let refused: Vec<&str> = (diags_of(&diags, "N001").iter())
        .map(|d| d["evidence"]["domain"].as_str().unwrap())
        .collect();
    for d in bad {
        // Shown escaped: a refused domain may hold anything.
        let shown = skillc::normalize::display_escape(d);
        assert!(refused.contains(&shown.as_str()), "N001 for {shown}: {refused:?}");
    }
    // Nothing was written beside or above the output directory.
    let mut beside: Vec<String> = (std::fs::read_dir(s.path("work")).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, ["out"]);
    assert!(!s.path("etc").exists() && !s.path("escape").exists());
}

#[test]
fn bad_records_are_diagnostics_with_file_and_line_and_the_run_goes_on() {
    let s = Scratch::new("foundation-bad");
    let (ledger, diags, _) = compile_foundation(&s);
    let at = |code: &str, line: u64| {
        diags_of(&diags, code)
            .iter()
            .any(|d| d["file"].as_str().is_some_and(|f| f.ends_with("bad.jsonl")) && d["line"] == line)
    };
    assert!(at("L001", 1), "malformed line");
    assert!(at("L002", 2), "missing outcome");
    assert!(at("L003", 3), "unknown outcome");
    assert!(at("L004", 4), "duplicate id");
    assert!(at("L005", 5), "unknown field");
    // The record with only an unknown field still compiles; the duplicate did not replace the first.
    assert!(
        ledger["lessons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["evidence"][0] == "e-bad-004")
    );
    let dup = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["text"] == "Duplicate of an earlier id.");
    assert!(!dup);
}

/// The GitHub token in the foundation fixture.
const SECRET: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

/// Asserts that no file under `out`, the state store included, holds any of `secrets`.
fn assert_none_in(out: &std::path::Path, secrets: &[&str]) {
    let mut all = tree(out);
    for entry in std::fs::read_dir(out.join(".skillc")).unwrap().flatten() {
        all.insert(
            entry.path().display().to_string(),
            std::fs::read(entry.path()).unwrap(),
        );
    }
    assert!(all.keys().any(|k| k.ends_with("state.db")));
    for (path, bytes) in all {
        let text = String::from_utf8_lossy(&bytes);
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} leaked into {path}");
        }
    }
}

/// Asserts that no file under `out`, the state store included, holds the token or its prefix.
fn assert_no_secret_in(out: &std::path::Path) {
    assert_none_in(out, &[SECRET, "ghp_A1b2"]);
}

#[test]
fn secrets_reach_no_file() {
    let s = Scratch::new("foundation-secret");
    let (_, _, o) = compile_foundation(&s);
    assert!(!stderr(&o).contains(SECRET) && !stdout(&o).contains(SECRET));
    assert_no_secret_in(&s.path("out"));
}

/// Passwords as agents actually pass them: an environment prefix, a flag, a client's `-p`, a
/// user name joined to it, a quoted JSON key. Each command fails and a variant works, so each
/// would teach a mechanical lesson quoting the password if it were not caught.
#[test]
fn passwords_in_everyday_command_forms_reach_no_file() {
    let pairs = [
        (
            "PGPASSWORD=Tr0ub4dorPg psql -h db -U app".to_string(),
            "PGPASSWORD=Tr0ub4dorPg psql -h db.internal -U app".to_string(),
        ),
        (
            "DB_PASSWORD=Xy7pQ2rT9db alembic upgrade head".to_string(),
            "DB_PASSWORD=Xy7pQ2rT9db alembic upgrade heads".to_string(),
        ),
        (
            "docker login -u ci --password hunter2Registry! r.example.com".to_string(),
            "docker login -u ci --password hunter2Registry! r.example.com:443".to_string(),
        ),
        (
            "mysql -u root -pMyS3cretRoot -e 'show tables'".to_string(),
            "mysql -h 127.0.0.1 -u root -pMyS3cretRoot -e 'show tables'".to_string(),
        ),
        (
            "curl -u admin:CurlPa55word https://ci.example.com/api".to_string(),
            "curl -fsS -u admin:CurlPa55word https://ci.example.com/api".to_string(),
        ),
        (
            "aws s3 ls --secret-access-key wJalrXUtnFEMIK7MDENGbPxRfiCY".to_string(),
            "aws s3 ls --region eu-west-1 --secret-access-key wJalrXUtnFEMIK7MDENGbPxRfiCY".to_string(),
        ),
    ];
    let extra = [serde_json::json!({
        "id": "sec-lesson", "recorded_at": "2026-03-09T00:00:00Z", "domains": ["aws"],
        "project": "git@github.com:acme/infra.git", "outcome": "succeeded",
        "lesson": r#"Write {"username": "deploy", "password": "JsonPa55!word"} to creds.json before the sync job."#,
        "gotchas": ["export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY first"],
    })];
    let secrets = [
        "Tr0ub4dorPg",
        "Xy7pQ2rT9db",
        "hunter2Registry",
        "MyS3cretRoot",
        "CurlPa55word",
        "wJalrXUtnFEMIK7MDENGbPxRfiCY",
        "JsonPa55!word",
    ];
    let diags = assert_failed_then_fixed_leak_nothing("everyday-secrets", &pairs, &extra, &secrets);
    // Each is refused, and nothing that quoted one was learned.
    let refused = diags_of(&diags, "N002");
    for id in [
        "everyday-secrets-0-0",
        "everyday-secrets-1-1",
        "everyday-secrets-2-0",
        "everyday-secrets-3-1",
        "everyday-secrets-4-0",
        "everyday-secrets-5-1",
        "sec-lesson",
    ] {
        assert!(
            refused.iter().any(|d| names(d, id)),
            "{id} not refused: {refused:#?}"
        );
    }
}

/// A copy of the repository's `rules/` under the scratch directory, for a test to change.
fn rules_copy(s: &Scratch) -> std::path::PathBuf {
    let dir = s.path("rules");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(repo().join("rules")).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    dir
}

#[test]
fn a_secrets_file_with_no_patterns_stops_the_compile_and_a_missing_one_redacts_as_built_in() {
    let s = Scratch::new("rules-empty-secrets");
    let rules = rules_copy(&s);
    let out = s.path("out");
    let args = ["--rules", rules.to_str().unwrap()];
    // Emptied to "turn off" scanning, or a team's file with its patterns still to come:
    // either way redaction would stop without a word, so the compile does not run.
    for text in ["", "# credential patterns for the build farm\n", "patterns: []\n"] {
        std::fs::write(rules.join("secrets.yaml"), text).unwrap();
        let o = compile_to(&fixture("foundation"), &out, &args);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {}", stderr(&o));
        let secrets = rules.join("secrets.yaml");
        assert!(
            stderr(&o).contains(&format!(
                "error: {}: defines no credential patterns",
                secrets.display()
            )),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists(), "{text:?}: nothing is written");
    }
    // Without the file, the built-in patterns apply, as for every other rules file.
    std::fs::remove_file(rules.join("secrets.yaml")).unwrap();
    let o = compile_to(&fixture("foundation"), &out, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("(github-token)"), "{}", stderr(&o));
    assert_no_secret_in(&out);
}

#[test]
fn out_of_range_policy_numbers_stop_the_compile_naming_file_key_range_and_line() {
    let s = Scratch::new("rules-out-of-range");
    let rules = rules_copy(&s);
    let out = s.path("out");
    let policy = rules.join("policy.yaml");
    let cases = [
        (
            "  admitted: 500 ",
            "  admitted: -1000 ",
            "confidence.admitted: must be from 0 to 1000 (in thousandths, 1000 = 1.000), got -1000",
        ),
        (
            "  admitted: 500 ",
            "  admitted: 1001 ",
            "confidence.admitted: must be from 0 to 1000 (in thousandths, 1000 = 1.000), got 1001",
        ),
        (
            "  skill_lines: 500 ",
            "  skill_lines: 0 ",
            "caps.skill_lines: must be at least 17 (a SKILL.md's frontmatter, heading and one rule), got 0",
        ),
    ];
    for (from, to, message) in cases {
        let text = skillc::policy::BUILTIN_POLICY.replace(from, to);
        let line = 1 + text.lines().position(|l| l.starts_with(to)).unwrap();
        std::fs::write(&policy, text).unwrap();
        let o = compile_to(
            &fixture("foundation"),
            &out,
            &["--rules", rules.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(2), "{to}: {}", stderr(&o));
        let expected = format!("error: {}: {message} at line {line} column ", policy.display());
        assert!(stderr(&o).contains(&expected), "{to}: {}", stderr(&o));
        assert!(!out.exists(), "{to}: nothing is written");
    }
    // The flag that overrides `min_reinforcement` takes the policy's range.
    let o = compile_to(&fixture("foundation"), &out, &["--min-reinforcement", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn every_domains_fates_agree_with_its_ledger_on_the_sample_corpus() {
    let s = Scratch::new("sample-fates");
    let out = s.path("out");
    let o = skillc(&["compile", "--out", out.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = json(&o);
    let f = &summary["fates"];
    assert!(
        f["rule"].as_u64().unwrap() > 0
            && f["held-back"].as_u64().unwrap() > 0
            && f["refused"].as_u64().unwrap() > 0
    );
    let diags = read_json(&out.join("diagnostics.json"));
    assert!(
        diags_of(&diags, "E003").is_empty(),
        "fate invariant broken: {:#?}",
        diags_of(&diags, "E003")
    );
    // The sample's claim that cites a failed experience is refused as unsupported.
    assert!(!diags_of(&diags, "G006").is_empty());
    // Per domain, `why` (a compile of its own, counted from the candidates' fates) agrees
    // with the ledger the compile wrote: its lessons and rules are the ledger's, and a domain
    // has candidates in rules exactly when it has rules.
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let mut domains: Vec<&str> = lessons.iter().map(|l| l["domain"].as_str().unwrap()).collect();
    domains.sort();
    domains.dedup();
    assert!(
        domains.len() >= 6,
        "sample covers at least 6 domains: {domains:?}"
    );
    for d in domains {
        let w = json(&skillc(&[
            "why",
            d,
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ]));
        // `why` counts the lessons in force: active and claimed, not superseded or retired.
        let in_force: Vec<&serde_json::Value> = (lessons.iter())
            .filter(|l| l["domain"] == d && (l["status"] == "active" || l["status"] == "claimed"))
            .collect();
        let rules = in_force.iter().filter(|l| l["rule"] == true).count() as u64;
        assert_eq!(w["lessons"].as_u64().unwrap(), in_force.len() as u64, "{d}");
        assert_eq!(w["rules"].as_u64().unwrap(), rules, "{d}");
        let in_rules = w["fates"]["rule"].as_u64().unwrap();
        assert_eq!(in_rules > 0, rules > 0, "{d}: {}", w["fates"]);
        // A rule's candidates reinforce it: at least one each, at least as many as it has
        // distinct supporting experiences in all.
        assert!(in_rules >= rules, "{d}: {}", w["fates"]);
    }
}

#[test]
fn output_is_byte_identical_across_thread_counts_and_reruns() {
    let s = Scratch::new("determinism");
    let run = |name: &str, threads: &str| {
        let out = s.path(name);
        let o = skillc(&["compile", "--out", out.to_str().unwrap(), "--threads", threads]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        tree(&out)
    };
    let one = run("t1", "1");
    let four = run("t4", "4");
    assert!(one.len() > 5);
    assert_eq!(one.keys().collect::<Vec<_>>(), four.keys().collect::<Vec<_>>());
    for (k, v) in &one {
        assert!(four[k] == *v, "{k} differs between 1 and 4 threads");
    }
    // A re-run on unchanged input changes nothing.
    let again = run("t1", "2");
    assert_eq!(one, again);
}

/// The sample corpus fits in one of every parallel split; a generated one of 60 000
/// experiences (38 MB) spans two 32 MiB load blocks, four candidate runs of 16 384 records
/// and dozens of text batches, so the splits' seams are where they differ by thread count.
#[test]
fn a_corpus_spanning_every_parallel_split_compiles_byte_identically_at_1_and_2_threads() {
    let s = Scratch::new("determinism-large");
    let corpus = s.path("corpus.jsonl");
    let o = skillc(&[
        "gen",
        "--experiences",
        "60000",
        "--seed",
        "7",
        "--out",
        corpus.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::metadata(&corpus).unwrap().len() > 32 << 20,
        "more than one load block"
    );
    let run = |name: &str, threads: &str| {
        let out = s.path(name);
        let o = compile_to(&corpus, &out, &["--threads", threads]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        tree(&out)
    };
    let (one, two) = (run("t1", "1"), run("t2", "2"));
    assert!(one.len() > 100, "{} files", one.len());
    assert_eq!(one.keys().collect::<Vec<_>>(), two.keys().collect::<Vec<_>>());
    for (k, v) in &one {
        assert!(two[k] == *v, "{k} differs between 1 and 2 threads");
    }
}

/// The foundation corpus's python records (`python` and its alias `py`) as their own file.
fn python_records_only(s: &Scratch) -> std::path::PathBuf {
    let path = s.path("py.jsonl");
    let text = std::fs::read_to_string(fixture("foundation/agents.jsonl")).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"python\"") || l.contains("\"py\""))
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

#[test]
fn stale_generated_files_are_removed_and_foreign_files_kept() {
    let s = Scratch::new("stale");
    let out = s.path("out");
    let o = compile_to(&fixture("foundation"), &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out.join("rust/SKILL.md").is_file());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    // Recompile with only the python records: rust's files go, the user's file stays.
    let o = compile_to(&python_records_only(&s), &out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!out.join("rust/SKILL.md").exists());
    assert!(!out.join("rust").exists());
    assert!(out.join("python/SKILL.md").is_file());
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");

    // A store whose list of generated files was edited (or written by another tool) names
    // files skillc never writes: they are not removed, the store least of all.
    let db = rusqlite::Connection::open(out.join(".skillc/state.db")).unwrap();
    for path in [".skillc/state.db", "notes.txt", "python/NOTES.md"] {
        db.execute("INSERT INTO outputs (path) VALUES (?1)", [path])
            .unwrap();
    }
    drop(db);
    std::fs::write(out.join("python/NOTES.md"), "mine too").unwrap();
    let o = compile_to(&python_records_only(&s), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join(".skillc/state.db").is_file());
    assert!(out.join("notes.txt").is_file());
    assert!(out.join("python/NOTES.md").is_file());
}

#[test]
fn a_compile_that_cannot_write_its_files_leaves_the_recorded_compile_as_it_was() {
    let s = Scratch::new("unwritable");
    let out = s.path("out");
    let o = compile_to(&fixture("foundation"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out_arg = out.to_str().unwrap();
    let list = || {
        stdout(&skillc(&[
            "lessons", "list", "--format", "json", "--out", out_arg,
        ]))
    };
    let recorded = list();
    assert!(recorded.contains("conftest.py"), "{recorded}");
    // python/SKILL.md cannot be replaced: a directory with something in it stands there.
    std::fs::remove_file(out.join("python/SKILL.md")).unwrap();
    std::fs::create_dir_all(out.join("python/SKILL.md/kept")).unwrap();
    let o = compile_to(&python_records_only(&s), &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(out_arg), "{}", stderr(&o));
    // The store still holds the first compile, and its files are not cleaned up as stale.
    assert_eq!(list(), recorded);
    assert!(out.join("rust/SKILL.md").is_file());
}

#[test]
fn strict_exits_one_when_input_was_refused() {
    let s = Scratch::new("strict");
    let out = s.path("out");
    let o = compile_to(&fixture("foundation"), &out, &["--strict"]);
    assert_eq!(o.status.code(), Some(1));
    let o = compile_to(std::path::Path::new("/nonexistent/records.jsonl"), &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    // A SQLite file that is not a GAIA store is input skillc could not read (L011).
    let db = s.path("notes.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT)")
        .unwrap();
    let o = compile_to(&db, &out, &["--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("L011"), "{}", stderr(&o));
    // About the whole file: where, without a line.
    assert!(
        stderr(&o).contains(&format!("--> {}\n", db.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(compile_to(&db, &out, &[]).status.code(), Some(0));
}

#[test]
fn a_thread_count_out_of_range_is_refused_before_any_work() {
    let s = Scratch::new("threads-range");
    let out = s.path("out");
    for bad in ["0", "257", "99999999999"] {
        let o = compile_to(&fixture("foundation"), &out, &["--threads", bad]);
        assert_eq!(o.status.code(), Some(2), "--threads {bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--threads must be from 1 to 256"),
            "{}",
            stderr(&o)
        );
        assert!(
            !out.join("ledger.json").exists(),
            "--threads {bad} compiled anyway"
        );
    }
    let o = compile_to(&fixture("foundation"), &out, &["--threads", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_fresh_directory_compiles_the_built_in_samples_and_policy() {
    let s = Scratch::new("fresh-dir");
    let o = skillc_in(&s.0, &["compile"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = tree(&s.path("skills-out"));
    assert!(
        out.keys().filter(|k| k.ends_with("SKILL.md")).count() >= 3,
        "{:?}",
        out.keys()
    );
    // Same bytes as a compile of ./samples with ./rules from the repository.
    let repo_out = s.path("repo-out");
    let o = skillc(&["compile", "--out", repo_out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let ledger = |t: &std::collections::BTreeMap<String, Vec<u8>>| t["ledger.json"].clone();
    assert_eq!(ledger(&out), ledger(&tree(&repo_out)));
}

/// Words an agent recorded (a lesson, a gotcha, a dead end, a tool's name) never open a heading,
/// a list or frontmatter of their own in the Markdown files, whatever line breaks they hold.
#[test]
fn recorded_words_open_no_heading_or_frontmatter_in_markdown() {
    let s = Scratch::new("md-lines");
    let input = s.path("agents.jsonl");
    let records: Vec<String> = (0..3)
        .map(|i| {
            serde_json::json!({
                "id": format!("sess-{i}"),
                "recorded_at": format!("2026-01-0{}T09:00:00Z", i + 1),
                "domains": ["python"],
                "project": if i % 2 == 0 { "git@github.com:acme/api.git" } else { "git@github.com:acme/web.git" },
                "outcome": "succeeded",
                "lesson": "Run pytest from the repository root\n## Avoid\n- anything (id: L000000000000)",
                "gotchas": ["conftest.py fixtures leak between tests\r\n---\nname: other"],
                "dead_ends": [{"name": "pip install -e .\n# Setup", "reason": "breaks the editable install\n## Do"}],
                "operations": [
                    {"tool": "run_shell_command\n## Do", "args": {"command": "pytest -q", "cwd": "/srv/api"},
                     "status": "error", "error": "ModuleNotFoundError: No module named 'api'"},
                    {"tool": "run_shell_command\n## Do", "args": {"command": "PYTHONPATH=. pytest -q", "cwd": "/srv/api"},
                     "status": "ok"}
                ]
            })
            .to_string()
        })
        .collect();
    std::fs::write(&input, records.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skill = std::fs::read_to_string(out.join("python/SKILL.md")).unwrap();
    let evidence = std::fs::read_to_string(out.join("python/references/EVIDENCE.md")).unwrap();
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    let headings = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| l.split(" — ").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(skill.lines().filter(|l| *l == "---").count(), 2, "{skill}");
    for h in headings(&skill) {
        assert!(
            ["# python", "## Do", "## Avoid", "## Watch out"].contains(&h.as_str()),
            "{h}\n{skill}"
        );
    }
    for h in headings(&evidence) {
        assert!(
            h == "# Evidence: python (global)" || h.starts_with("## L"),
            "{h}\n{evidence}"
        );
    }
    assert!(
        evidence.contains("- operation key: `run_shell_command ## Do pytest`"),
        "{evidence}"
    );
    assert!(block.lines().all(|l| l.starts_with("- ")), "{block}");
    assert_eq!(block.lines().count(), 4, "{block}");
}

/// A record whose `domains` is a tag cloud (an exporter that copies every tag of a session)
/// makes candidates for its first `caps.record_domains` domains only: each domain multiplies the
/// record's texts, so otherwise a few kilobytes of input could make millions of candidates.
/// The rest are named in one warning at the record's line; the other records are untouched.
#[test]
fn a_tag_cloud_record_compiles_into_its_first_domains_only() {
    let s = Scratch::new("tag-cloud");
    let input = s.path("sessions.jsonl");
    let lesson = "Pin the base image by digest, not by tag; a re-pushed tag changes what CI builds.";
    let mut domains = vec!["docker".to_string(), "ci".to_string()];
    domains.extend((0..300).map(|i| format!("tag-{i}")));
    let gotchas: Vec<String> = (0..150)
        .map(|i| format!("Step {i} of the release checklist is easy to skip under time pressure."))
        .collect();
    let records = [
        serde_json::json!({"id": "ops-1", "recorded_at": "2026-09-01T08:00:00Z", "domains": ["docker"],
            "project": "git@github.com:acme/ingest.git", "outcome": "succeeded", "lesson": lesson}),
        serde_json::json!({"id": "ops-2", "recorded_at": "2026-09-02T08:00:00Z", "domains": domains,
            "project": "git@github.com:acme/billing.git", "outcome": "succeeded", "lesson": lesson,
            "gotchas": gotchas}),
    ];
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let compile = |out: &str, extra: &[&str]| {
        let o = compile_to(&input, &s.path(out), &[&["--format", "json"], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let diags = read_json(&s.path(out).join("diagnostics.json"));
        (summary, diags)
    };
    let (summary, diags) = compile("out", &[]);
    // ops-1's lesson, and ops-2's lesson and 150 gotchas in each of its first 16 domains.
    assert_eq!(summary["candidates"], 1 + 16 * 151, "{summary:#}");
    let n003 = diags_of(&diags, "N003");
    assert_eq!(n003.len(), 1, "{n003:#?}");
    assert_eq!(
        (n003[0]["subject"].as_str(), n003[0]["line"].as_u64()),
        (Some("ops-2"), Some(2))
    );
    assert_eq!(n003[0]["evidence"]["domains"], 302);
    assert_eq!(n003[0]["evidence"]["ignored"][0], "tag-14");
    assert_eq!(n003[0]["evidence"]["ignored"].as_array().unwrap().len(), 286);
    // Its lesson still reinforces ops-1's in docker, from a second project: a global rule.
    let ledger = read_json(&s.path("out").join("ledger.json"));
    let docker = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["domain"] == "docker" && l["kind"] == "do")
        .expect("the docker lesson");
    assert_eq!(
        (docker["rule"].as_bool(), docker["scope"].as_str()),
        (Some(true), Some("global"))
    );

    // A team that really tags more raises the cap in its policy.
    let rules = rules_copy(&s);
    let policy = skillc::policy::BUILTIN_POLICY.replace("record_domains: 16 ", "record_domains: 400 ");
    assert_ne!(policy, skillc::policy::BUILTIN_POLICY);
    std::fs::write(rules.join("policy.yaml"), policy).unwrap();
    let (summary, diags) = compile("raised", &["--rules", rules.to_str().unwrap()]);
    assert_eq!(summary["candidates"], 1 + 302 * 151, "{summary:#}");
    assert!(diags_of(&diags, "N003").is_empty());
    // A policy file written before the cap existed still loads, with the default.
    let old = (skillc::policy::BUILTIN_POLICY.lines())
        .filter(|l| !l.trim_start().starts_with("record_domains:"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(rules.join("policy.yaml"), old).unwrap();
    let (summary, _) = compile("old-policy", &["--rules", rules.to_str().unwrap()]);
    assert_eq!(summary["candidates"], 1 + 16 * 151, "{summary:#}");
}

/// A lesson and its negation, recorded twice each from two projects, are two lessons each,
/// never one rule: the opposite forms share every other word ("… when it binds port 80",
/// "…; add a USER line to the Dockerfile"), which used to outweigh the negation.
#[test]
fn a_lesson_and_its_negation_never_become_one_rule() {
    let s = Scratch::new("opposite-lessons");
    let record = |id: &str, day: u32, project: &str, lesson: &str| {
        format!(
            r#"{{"id":"{id}","recorded_at":"2026-03-{day:02}T09:00:00Z","domains":["docker"],"project":"git@github.com:acme/{project}.git","outcome":"succeeded","lesson":"{lesson}"}}"#
        )
    };
    let never = "Never run the container as root when it binds port 80.";
    let run = "Run the container as root when it binds port 80.";
    let do_not = "Do not run the container as root; add a USER line to the Dockerfile.";
    let run_user = "Run the container as root; add a USER line to the Dockerfile.";
    let records = [
        record("r1", 1, "a", never),
        record("r2", 2, "b", run),
        record("r3", 3, "c", do_not),
        record("r4", 4, "d", run_user),
        // The negated forms recur in other words: those do make rules.
        record(
            "r5",
            5,
            "e",
            "Don't run the container as root when it binds port 80.",
        ),
        record(
            "r6",
            6,
            "f",
            "Avoid running the container as root; add a USER line to the Dockerfile.",
        ),
    ];
    let input = s.path("in.jsonl");
    std::fs::write(&input, records.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let evidence_of = |text: &str| {
        let l = (lessons.iter())
            .find(|l| l["text"] == text)
            .unwrap_or_else(|| panic!("no lesson worded {text:?}: {ledger:#}"));
        (ids(&l["evidence"]), l["rule"].as_bool().unwrap())
    };
    assert_eq!(evidence_of(never), (vec!["r1".into(), "r5".into()], true));
    assert_eq!(evidence_of(run), (vec!["r2".into()], false));
    assert_eq!(evidence_of(do_not), (vec!["r3".into(), "r6".into()], true));
    assert_eq!(evidence_of(run_user), (vec!["r4".into()], false));
    let skill = std::fs::read_to_string(out.join("docker/SKILL.md")).unwrap();
    assert!(!skill.contains(run) && !skill.contains(run_user), "{skill}");
}

/// DESIGN §5.1: a dead end's reasons accumulate newest first — across the experiences of its
/// lesson and within one record (a later entry is newer), each reason once where it was last
/// given — so SKILL.md and the plan-time block give the newest reason.
#[test]
fn an_avoid_rule_gives_its_newest_reason_first() {
    let s = Scratch::new("avoid-reasons");
    let input = s.path("deps.jsonl");
    let bump = |id: &str, at: &str, project: &str, reasons: &[&str]| {
        let dead_ends: Vec<serde_json::Value> = (reasons.iter())
            .enumerate()
            .map(|(i, r)| serde_json::json!({"name": if i == 0 { "cargo update" } else { "Cargo Update" }, "reason": r}))
            .collect();
        serde_json::json!({"id": id, "recorded_at": at, "domains": ["rust"], "project": project,
            "task": "bump dependencies", "outcome": "failed", "dead_ends": dead_ends})
        .to_string()
    };
    let tokio = "pulled a tokio release that needs a newer rustc than the pinned toolchain";
    let serde = "broke the serde derive on the MSRV toolchain";
    let lock = "Cargo.lock had to be reverted by hand";
    let records = [
        bump(
            "dep-9",
            "2026-08-01T10:00:00Z",
            "git@github.com:acme/cli.git",
            &[tokio],
        ),
        bump(
            "dep-1",
            "2026-08-05T10:00:00Z",
            "git@github.com:acme/ingest.git",
            &[serde, lock],
        ),
    ];
    std::fs::write(&input, records.join("\n")).unwrap();
    let out = s.path("out");
    let reasons = |extra: Option<String>| {
        if let Some(r) = extra {
            std::fs::write(&input, format!("{}\n{r}", records.join("\n"))).unwrap();
        }
        let o = compile_to(&input, &out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let ledger = read_json(&out.join("ledger.json"));
        let avoid = &ledger["lessons"][0];
        assert_eq!(
            (avoid["kind"].as_str(), avoid["rule"].as_bool()),
            (Some("avoid"), Some(true))
        );
        ids(&avoid["reasons"])
    };
    assert_eq!(reasons(None), [lock, serde, tokio]);
    let skill = std::fs::read_to_string(out.join("rust/SKILL.md")).unwrap();
    assert!(
        skill.contains(&format!("- cargo update — {lock} (id: ")),
        "{skill}"
    );
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    assert!(
        block.contains(&format!("- Avoid: cargo update — {lock} (id: ")),
        "{block}"
    );
    // Given again later, the oldest reason is the newest.
    let again = bump(
        "dep-5",
        "2026-08-09T10:00:00Z",
        "git@github.com:acme/cli.git",
        &[tokio],
    );
    assert_eq!(reasons(Some(again)), [tokio, lock, serde]);
}

/// The plan-time block reaches an agent without SKILL.md's headings: a dead end says "Avoid:"
/// with its reason (its bare name reads as an instruction to do it), a gotcha "Watch out:",
/// and the same dead end recorded under two domains takes one line.
#[test]
fn plan_time_block_says_which_lessons_to_avoid_and_shows_a_dead_end_once() {
    let s = Scratch::new("block-kinds");
    let input = s.path("agents.jsonl");
    let alpine = serde_json::json!({"name": "Switch base image to Alpine",
        "reason": "psycopg2 had no musl wheel and needed gcc and libpq-dev"});
    let records: Vec<String> = [
        ("img-1", "2026-03-02T10:00:00Z", "git@github.com:acme/api.git"),
        ("img-2", "2026-03-05T15:30:00Z", "git@github.com:acme/billing.git"),
    ]
    .iter()
    .map(|(id, at, project)| {
        serde_json::json!({
            "id": id, "recorded_at": at, "domains": ["docker", "python"], "project": project,
            "task": "Shrink the API image", "outcome": "succeeded",
            "lesson": "Copy requirements.txt and pip install before copying the source so the install layer stays cached.",
            "gotchas": ["python:3.12-slim has no gcc; wheels without a manylinux build fail to install."],
            "dead_ends": [alpine.clone()],
        })
        .to_string()
    })
    .collect();
    std::fs::write(&input, records.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    let lines: Vec<&str> = block.lines().collect();
    let avoid: Vec<&&str> = lines.iter().filter(|l| l.contains("Alpine")).collect();
    assert_eq!(avoid.len(), 1, "{block}");
    assert!(
        avoid[0].starts_with("- Avoid: Switch base image to Alpine — psycopg2 had no musl wheel"),
        "{block}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- Watch out: python:3.12-slim has no gcc")),
        "{block}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- Copy requirements.txt and pip install")),
        "{block}"
    );
    // Every line keeps the DESIGN §7 shape, and its id is an active lesson of the ledger.
    let ledger = read_json(&out.join("ledger.json"));
    for l in &lines {
        let (_, id) = l.rsplit_once(" (id: ").expect(l);
        let id = id.strip_suffix(')').expect(l);
        assert!(
            ledger["lessons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["id"] == id && x["status"] == "active"),
            "{l}"
        );
    }
}

/// Two rust projects both learned to build with `--locked`: once in words ("Use cargo build
/// --locked in CI …") and once from the failed-then-fixed calls. They are two rules (a
/// mechanical lesson never shares a cluster with a written one), but the plan-time block has
/// five lines and gives the lesson one of them; the freed line goes to the next lesson.
#[test]
fn plan_time_block_gives_a_lesson_said_twice_in_other_words_one_line() {
    let s = Scratch::new("block-same-lesson");
    let input = s.path("agents.jsonl");
    let build = |command: &str, ok: bool, cwd: &str| {
        let mut op = serde_json::json!({"tool": "run_shell_command",
            "args": {"command": command, "cwd": cwd}, "status": if ok { "ok" } else { "error" }});
        if ok {
            op["check"] = serde_json::json!({"label": "build", "target": "ci", "passed": true});
        } else {
            op["error"] = "error: failed to select a version for the requirement `tokio = \"^1.38\"`".into();
        }
        op
    };
    let mut records = Vec::new();
    for (i, (project, cwd)) in [
        ("git@github.com:acme/gateway-rs.git", "/srv/gateway-rs"),
        ("git@github.com:acme/indexer-rs.git", "/srv/indexer-rs"),
    ]
    .iter()
    .enumerate()
    {
        records.push(serde_json::json!({
            "id": format!("rs-lesson-{i}"), "recorded_at": format!("2026-10-0{}T09:00:00Z", i + 2),
            "domains": ["rust"], "project": project, "task": "Pin dependencies in CI",
            "outcome": "succeeded", "lesson": "Use cargo build --locked in CI so the build honours Cargo.lock.",
            "operations": [build("cargo build --locked", true, cwd)],
        }));
        records.push(serde_json::json!({
            "id": format!("rs-fix-{i}"), "recorded_at": format!("2026-10-0{}T15:00:00Z", i + 4),
            "domains": ["rust"], "project": project, "task": "Fix the CI build",
            "outcome": "succeeded",
            "operations": [build("cargo build", false, cwd), build("cargo build --locked", true, cwd)],
        }));
    }
    for (i, project) in [
        "git@github.com:acme/gateway-rs.git",
        "git@github.com:acme/indexer-rs.git",
    ]
    .iter()
    .enumerate()
    {
        records.push(serde_json::json!({
            "id": format!("rs-clippy-{i}"), "recorded_at": format!("2026-10-1{i}T11:00:00Z"),
            "domains": ["rust"], "project": project, "task": "Lint the test code",
            "outcome": "succeeded", "lesson": "Run cargo clippy with --all-targets so test code is linted too.",
        }));
    }
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skill = std::fs::read_to_string(out.join("rust/SKILL.md")).unwrap();
    assert!(skill.contains("Use cargo build --locked in CI"), "{skill}");
    assert!(skill.contains("instead of `cargo build`"), "{skill}");
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    let locked: Vec<&str> = block.lines().filter(|l| l.contains("--locked")).collect();
    assert_eq!(locked.len(), 1, "{block}");
    assert!(block.contains("Run cargo clippy with --all-targets"), "{block}");
}

/// Claude Code's edit tools (`Edit`, `MultiEdit`, `Write`) make earlier test runs stale like
/// `edit_file` does, and a test failure whose assertion mentions a timeout, a cancellation or a
/// line 429 is a real failure that teaches, not a transient one.
#[test]
fn claude_code_edits_stale_checks_and_failed_assertions_are_never_transient() {
    let s = Scratch::new("policy-words");
    let input = s.path("agents.jsonl");
    let pytest = |cmd: &str, status: &str, error: Option<&str>, passed: bool| {
        let mut op = serde_json::json!({"tool": "Bash", "args": {"command": cmd, "cwd": "/srv/billing"},
            "status": status, "check": {"label": "tests", "target": "billing", "passed": passed}});
        if let Some(e) = error {
            op["error"] = e.into();
        }
        op
    };
    let mut records = Vec::new();
    for (i, (tool, project)) in [
        ("Edit", "acme/billing"),
        ("MultiEdit", "acme/ledger"),
        ("Write", "acme/billing"),
    ]
    .iter()
    .enumerate()
    {
        records.push(serde_json::json!({
            "id": format!("stale-{i}"), "recorded_at": format!("2026-10-0{}T10:00:00Z", i + 1),
            "domains": ["django"], "project": format!("git@github.com:{project}.git"), "outcome": "succeeded",
            "lesson": "Widen a CharField in its own migration, before the data backfill that needs the room.",
            "operations": [pytest("pytest -q", "ok", None, true),
                {"tool": tool, "args": {"file_path": "/srv/billing/invoices/models.py"}, "status": "ok"}],
        }));
    }
    for (i, error) in [
        "FAILED invoices/tests/test_vat.py::test_rounding - AssertionError: assert Decimal('0.19') == Decimal('0.20') (invoices/vat.py:429)",
        "FAILED tests/test_session.py::test_expiry - AssertionError: session was not cancelled after logout",
        "FAILED tests/test_client.py::test_retry - AssertionError: expected timeout=30, got 10",
    ]
    .iter()
    .enumerate()
    {
        records.push(serde_json::json!({
            "id": format!("order-{i}"), "recorded_at": format!("2026-10-1{}T10:00:00Z", i + 1),
            "domains": ["python"], "project": format!("git@github.com:acme/svc-{i}.git"), "outcome": "succeeded",
            "operations": [pytest("pytest -q", "error", Some(error), false),
                pytest("pytest -q -p no:randomly", "ok", None, true)],
        }));
    }
    let text: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, text.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = read_json(&out.join("diagnostics.json"));
    for i in 0..3 {
        let id = format!("stale-{i}");
        assert!(
            diags_of(&diags, "O002").iter().any(|d| names(d, &id)),
            "no O002 for {id}"
        );
    }
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    assert!(
        !lessons
            .iter()
            .any(|l| l["text"].as_str().unwrap().starts_with("Widen a CharField")),
        "a success verified only by tests that ran before the last edit became a lesson"
    );
    let order: Vec<&serde_json::Value> = lessons
        .iter()
        .filter(|l| l["text"].as_str().unwrap().contains("no:randomly"))
        .collect();
    assert_eq!(order.len(), 1, "{order:?}");
    assert_eq!(order[0]["reinforcement"], 3, "{}", order[0]);
    assert_eq!(order[0]["rule"], true);
}

/// A fix learned from records tagged with two domains is one fix in each: the twins share the
/// one-per-(scope, key) slot instead of superseding each other, so two records make a rule in
/// both domains. A newer, different form on the key still replaces both.
#[test]
fn the_same_fix_under_two_domains_is_a_rule_in_each() {
    let s = Scratch::new("mech-twins");
    let input = s.path("cursor.jsonl");
    let record = |id: &str, at: &str, project: &str, failing: &str, working: &str| {
        serde_json::json!({"id": id, "recorded_at": at, "domains": ["nextjs", "typescript"],
            "project": format!("git@github.com:acme/{project}.git"), "outcome": "succeeded",
            "operations": [
                {"tool": "run_terminal_cmd", "args": {"command": failing, "cwd": "/work/app"},
                 "status": "error", "error": "Failed to compile.\n./app/page.tsx\n12:7  Error: 'user' is assigned a value but never used.  @typescript-eslint/no-unused-vars"},
                {"tool": "run_terminal_cmd", "args": {"command": working, "cwd": "/work/app"},
                 "status": "ok", "check": {"label": "build", "target": "app", "passed": true}}]})
        .to_string()
    };
    let lines = [
        record(
            "cur-1",
            "2026-08-03T09:00:00Z",
            "storefront",
            "npm run build",
            "npm run build -- --no-lint",
        ),
        record(
            "cur-2",
            "2026-08-05T09:00:00Z",
            "admin",
            "npm run build",
            "npm run build -- --no-lint",
        ),
    ];
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let no_lint: Vec<&serde_json::Value> = lessons
        .iter()
        .filter(|l| l["text"].as_str().unwrap().contains("--no-lint"))
        .collect();
    let mut domains: Vec<&str> = no_lint.iter().map(|l| l["domain"].as_str().unwrap()).collect();
    domains.sort();
    assert_eq!(domains, ["nextjs", "typescript"], "{no_lint:#?}");
    for l in &no_lint {
        assert_eq!(
            (l["status"].as_str(), l["rule"].as_bool()),
            (Some("active"), Some(true)),
            "{l}"
        );
        assert_eq!(l["reinforcement"], 2, "{l}");
    }
    for domain in ["nextjs", "typescript"] {
        let skill = std::fs::read_to_string(out.join(domain).join("SKILL.md")).unwrap();
        assert!(skill.contains("npm run build -- --no-lint"), "{skill}");
    }

    // A later, different form on the key (global too: two projects) replaces the fix in both
    // domains.
    let later = s.path("later.jsonl");
    let newer_form = "npm run build -- --no-lint --no-mangling";
    let later_lines = [
        record(
            "cur-3",
            "2026-08-09T09:00:00Z",
            "storefront",
            "npm run build -- --no-lint",
            newer_form,
        ),
        record(
            "cur-4",
            "2026-08-10T09:00:00Z",
            "admin",
            "npm run build -- --no-lint",
            newer_form,
        ),
    ];
    std::fs::write(&later, later_lines.join("\n")).unwrap();
    let o = compile_to(&input, &out, &[later.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let newer: Vec<&str> = (lessons.iter())
        .filter(|l| l["text"].as_str().unwrap().contains("--no-mangling") && l["status"] == "active")
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(newer.len(), 2, "the new form in each domain");
    for l in lessons.iter().filter(|l| {
        l["text"]
            .as_str()
            .unwrap()
            .ends_with("instead of `npm run build`")
    }) {
        assert_eq!(l["status"], "superseded", "{l}");
        assert!(newer.contains(&l["superseded_by"].as_str().unwrap()), "{l}");
    }
}

/// One record in project `acme/<project>`: a failed call, then a second call checked as `tests`.
fn retried(
    (id, at, project): (&str, &str, &str),
    tool: &str,
    first: serde_json::Value,
    error: &str,
    second: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "id": id, "recorded_at": at, "domains": ["general"], "project": format!("git@github.com:acme/{project}.git"),
        "outcome": "succeeded",
        "operations": [
            {"tool": tool, "args": first, "status": "error", "error": error},
            {"tool": tool, "args": second, "status": "ok", "check": {"label": "tests", "passed": true}},
        ],
    })
}

fn write_jsonl(path: &std::path::Path, records: &[serde_json::Value]) {
    let text: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(path, text.join("\n")).unwrap();
}

/// Claude Code's Bash `description`, Cursor's `explanation` and OpenHands' `thought` only
/// label a call: a flaky test re-run with another label is an identical retry and teaches
/// nothing; a real fix is worded and keyed without them; and a later session that runs the
/// fix's working form under yet another label confirms the lesson.
#[test]
fn label_arguments_neither_make_a_retry_a_fix_nor_hide_a_fix() {
    let s = Scratch::new("label-args");
    let dir = s.path("in");
    std::fs::create_dir_all(&dir).unwrap();
    let mut records = Vec::new();
    for i in 0..2 {
        let at = format!("2026-11-2{}T10:00:00Z", i + 1);
        records.push(retried(
            (&format!("cc-desc-{i}"), &at, "shop"),
            "Bash",
            serde_json::json!({"command": "npm test -- --run", "description": "Run the vitest suite"}),
            "FAIL src/cart.test.ts > adds item\nAssertionError: expected 2 to be 3",
            serde_json::json!({"command": "npm test -- --run", "description": "Re-run tests to check for flakiness"}),
        ));
        records.push(retried(
            (&format!("cur-ex-{i}"), &at, "shop"),
            "run_terminal_cmd",
            serde_json::json!({"command": "go test ./internal/ledger/...", "explanation": "Run the ledger tests", "is_background": false}),
            "--- FAIL: TestTransfer (0.01s)\n    transfer_test.go:42: got 90, want 100",
            serde_json::json!({"command": "go test ./internal/ledger/...", "explanation": "Re-run the ledger tests after the fix", "is_background": false}),
        ));
        records.push(retried(
            (&format!("oh-thought-{i}"), &at, "shop"),
            "execute_bash",
            serde_json::json!({"command": "python manage.py test shop", "thought": "Let me run the shop tests."}),
            "FAIL: test_checkout (shop.tests.CheckoutTests)\nAssertionError: 402 != 200",
            serde_json::json!({"command": "python manage.py test shop", "thought": "The failure may be flaky; running again."}),
        ));
        // A real fix, each call with its own label.
        records.push(retried(
            (&format!("cc-fix-{i}"), &at, "shop"),
            "Bash",
            serde_json::json!({"command": "npx vitest run", "description": "Run the unit tests"}),
            "Error: Worker exited unexpectedly\nFAIL src/db.test.ts",
            serde_json::json!({"command": "npx vitest run --pool=forks", "description": "Run tests in forked workers"}),
        ));
    }
    write_jsonl(&dir.join("day1.jsonl"), &records);
    let out = s.path("out");
    let o = compile_to(&dir, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let texts: Vec<&str> = lessons.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        ["Bash npx: run `npx vitest run --pool=forks` instead of `npx vitest run`"],
        "only the real fix is learned, worded without its labels"
    );
    let fix = &lessons[0];
    assert!(!fix.to_string().contains("description"), "{fix}");
    assert_eq!(fix["rule"], true);
    assert_eq!(fix["reinforcement"], 2);
    let id = fix["id"].as_str().unwrap().to_string();

    // Day 2: the lesson in play, its working form run under a label of its own.
    let mut day2 = retried(
        ("cc-use-0", "2026-11-25T10:00:00Z", "shop"),
        "Bash",
        serde_json::json!({"command": "npm run lint", "description": "Lint first"}),
        "src/db.ts:3:1 error 'x' is defined but never used",
        serde_json::json!({"command": "npx vitest run --pool=forks", "description": "Run the suite as the skill says"}),
    );
    day2["in_play"] = serde_json::json!([id]);
    write_jsonl(&dir.join("day2.jsonl"), &[day2]);
    let o = compile_to(&dir, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let fix = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["id"] == id.as_str())
        .expect("the lesson keeps its id");
    let confirmed: Vec<&serde_json::Value> = (fix["history"].as_array().unwrap().iter())
        .filter(|e| e["event"] == "confirmed")
        .collect();
    assert_eq!(confirmed.len(), 1, "{fix}");
    assert_eq!(confirmed[0]["experiences"], serde_json::json!(["cc-use-0"]));
    assert_eq!(fix["reinforcement"], 3);
}

/// An editor tool's `view` sub-command reads a file: after it the passing tests are still
/// fresh, so the success is verified and its lesson becomes a rule; a `create` is a change.
#[test]
fn an_editor_view_after_the_tests_is_no_change() {
    let s = Scratch::new("editor-view");
    let input = s.path("view.jsonl");
    let record = |id: &str, tool: &str, command: &str| {
        serde_json::json!({
            "id": id, "recorded_at": "2026-11-21T10:00:00Z", "domains": ["django"], "outcome": "succeeded",
            "lesson": "Run the Django test runner with --parallel to cut CI time.",
            "operations": [
                {"tool": "execute_bash", "args": {"command": "python manage.py test --parallel"}, "status": "ok",
                 "check": {"label": "tests", "passed": true}},
                {"tool": tool, "args": {"command": command, "path": "/workspace/app/models.py"}, "status": "ok"},
            ],
        })
    };
    write_jsonl(
        &input,
        &[
            record("oh-view", "str_replace_editor", "view"),
            record("ant-view", "str_replace_based_edit_tool", "view"),
            record("oh-create", "str_replace_editor", "create"),
        ],
    );
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = read_json(&out.join("diagnostics.json"));
    let stale: Vec<&serde_json::Value> = diags_of(&diags, "O002");
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(names(stale[0], "oh-create"), "{}", stale[0]);
    let ledger = read_json(&out.join("ledger.json"));
    let l = lesson_with(&ledger, "--parallel");
    assert_eq!(l["evidence"], serde_json::json!(["ant-view", "oh-view"]));
    assert_eq!(l["rule"], true);
}

/// A JUnit failure in a test whose name says "cancelled" is a failed assertion and teaches;
/// AWS throttling is transient and teaches nothing.
#[test]
fn junit_assertions_teach_and_aws_throttling_does_not() {
    let s = Scratch::new("junit-aws");
    let input = s.path("t.jsonl");
    let make = |target: &str| serde_json::json!({"command": format!("make {target}")});
    let fixed = |target: &str| serde_json::json!({"command": format!("make {target} FIX=1")});
    let cases = [
        (
            "kotlin",
            "CartViewModelTest > cancelled order is removed FAILED\n    org.opentest4j.AssertionFailedError at CartViewModelTest.kt:57",
        ),
        (
            "junit4",
            "OrderServiceTest > testCancelledOrderRefund FAILED\n    java.lang.AssertionError: expected:<REFUNDED> but was:<CANCELLED>",
        ),
        (
            "strings",
            "StatusTest > cancelled label FAILED\n    org.junit.ComparisonFailure: expected:<[Cancelled]> but was:<[Canceled]>",
        ),
        (
            "tf",
            "Error: creating EC2 Instance: RequestLimitExceeded: Request limit exceeded.\n\tstatus code: 503",
        ),
        (
            "cfn",
            "operation error CloudFormation: DescribeStacks, exceeded maximum number of attempts, 3, api error Throttling: Rate exceeded",
        ),
        (
            "ddb",
            "An error occurred (ThrottlingException) when calling the DescribeTable operation (reached max retries: 4): Rate exceeded",
        ),
        (
            "s3",
            "upload failed: ./dist/app.js to s3://shop-assets/app.js An error occurred (SlowDown) when calling the PutObject operation (reached max retries: 4): Please reduce your request rate.",
        ),
    ];
    let mut records = Vec::new();
    for (target, error) in cases {
        for i in 0..2 {
            // A project each: one project keeps one active mechanical lesson per key.
            records.push(retried(
                (
                    &format!("{target}-{i}"),
                    &format!("2026-11-2{}T10:00:00Z", i + 1),
                    target,
                ),
                "Bash",
                make(&format!("test-{target}")),
                error,
                fixed(&format!("test-{target}")),
            ));
        }
    }
    write_jsonl(&input, &records);
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let mut texts: Vec<&str> = (ledger["lessons"].as_array().unwrap().iter())
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    texts.sort();
    assert_eq!(
        texts,
        [
            "Bash make: run `make test-junit4 FIX=1` instead of `make test-junit4`",
            "Bash make: run `make test-kotlin FIX=1` instead of `make test-kotlin`",
            "Bash make: run `make test-strings FIX=1` instead of `make test-strings`",
        ]
    );
}

/// Lessons written as Markdown lists (a YAML block scalar with `- ` items, a JSON string that
/// starts with `- `) reach SKILL.md and the ledger as one line of items joined by "; ", their
/// markers dropped: collapsed as they were written, "- Use …" rendered as a nested bullet and
/// "…connect; - prepared statements … - `SET` …" read as one run-on clause.
#[test]
fn lessons_written_as_markdown_lists_compile_to_one_line_without_markers() {
    let s = Scratch::new("markdown-list-lessons");
    let yaml = r#"- id: tn-001
  recorded_at: 2026-11-25T09:00:00Z
  domains: [postgres]
  project: git@github.com:northwind/shop-api.git
  task: Connection storms
  outcome: succeeded
  lesson: |
    Put PgBouncer in transaction mode in front of Postgres when
    many short-lived workers connect:
    - disable server-side prepared statements
    - `SET` commands don't persist across transactions
- id: tn-002
  recorded_at: 2026-11-26T09:00:00Z
  domains: [postgres]
  project: git@github.com:northwind/etl-jobs.git
  task: Too many connections
  outcome: succeeded
  lesson: |
    Put PgBouncer in transaction mode in front of Postgres when
    many short-lived workers connect:
    - disable server-side prepared statements
    - `SET` commands don't persist across transactions
"#;
    let jsonl = [
        r#"{"id": "cx-a7", "recorded_at": "2026-11-12T12:00:00Z", "domains": ["rust"], "project": "git@github.com:northwind/shop-api.git", "task": "Reproducible release build", "outcome": "succeeded", "lesson": "- Use `cargo build --locked` in CI so builds honour `Cargo.lock`."}"#,
        r#"{"id": "cx-a8", "recorded_at": "2026-11-13T12:00:00Z", "domains": ["rust"], "project": "git@github.com:oss/rustfetch.git", "task": "CI drift", "outcome": "succeeded", "lesson": "* Use `cargo build --locked` in CI so builds honour `Cargo.lock`."}"#,
    ];
    std::fs::create_dir_all(s.path("in")).unwrap();
    std::fs::write(s.path("in/notes.yaml"), yaml).unwrap();
    std::fs::write(s.path("in/agents.jsonl"), jsonl.join("\n") + "\n").unwrap();
    let out = s.path("out");
    let o = compile_to(&s.path("in"), &out, &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let texts: Vec<&str> = (ledger["lessons"].as_array().unwrap().iter())
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("Put PgBouncer"))
            .copied()
            .collect::<Vec<_>>(),
        [
            "Put PgBouncer in transaction mode in front of Postgres when many short-lived workers connect: \
          disable server-side prepared statements; `SET` commands don't persist across transactions"
        ]
    );
    assert!(
        texts.contains(&"Use `cargo build --locked` in CI so builds honour `Cargo.lock`."),
        "{texts:?}"
    );
    for skill in ["postgres/SKILL.md", "rust/SKILL.md"] {
        let body = std::fs::read_to_string(out.join(skill)).unwrap();
        assert!(
            !body.contains("- - ") && !body.contains("- * ") && !body.contains(" - disable"),
            "{body}"
        );
    }
}

/// Compiles, for each pair, two experiences (in two projects) whose first command failed and
/// whose variant worked, plus `extra` records, and asserts that none of `secrets` is printed or
/// written anywhere and that nothing was learned: each pair would teach a mechanical lesson
/// quoting its secret, and each extra record's texts quote one.
fn assert_failed_then_fixed_leak_nothing(
    name: &str,
    pairs: &[(String, String)],
    extra: &[serde_json::Value],
    secrets: &[&str],
) -> serde_json::Value {
    let s = Scratch::new(name);
    let shell = |cmd: &str, ok: bool| {
        let mut op = serde_json::json!({"tool": "Bash", "args": {"command": cmd}, "status": "ok"});
        if !ok {
            op["status"] = "error".into();
            op["error"] = "exit status 1".into();
        }
        op
    };
    let projects = ["git@github.com:acme/infra.git", "git@github.com:acme/alerts.git"];
    let mut lines = Vec::new();
    for (i, (bad, good)) in pairs.iter().enumerate() {
        for (j, project) in projects.iter().enumerate() {
            lines.push(serde_json::json!({
                "id": format!("{name}-{i}-{j}"), "recorded_at": format!("2026-03-{:02}T0{j}:00:00Z", i + 1),
                "domains": ["devops"], "project": project, "outcome": "succeeded",
                "operations": [shell(bad, false), shell(good, true)],
            }));
        }
    }
    lines.extend(extra.iter().cloned());
    let input = s.path("records.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&input, text.join("\n") + "\n").unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for secret in secrets {
        assert!(
            !stderr(&o).contains(secret) && !stdout(&o).contains(secret),
            "{secret} printed"
        );
    }
    assert_none_in(&out, secrets);
    let ledger = read_json(&out.join("ledger.json"));
    assert_eq!(ledger["lessons"].as_array().unwrap().len(), 0, "{ledger:#}");
    read_json(&out.join("diagnostics.json"))
}

/// Credentials in cloud CLIs and chat webhooks, as agents record them: `aws configure set`
/// takes the secret key as a bare word after its name, `az login` takes the password with `-p`,
/// and a Slack or Discord webhook URL is itself the credential (whoever holds it can post).
#[test]
fn cloud_cli_keys_and_webhook_urls_reach_no_file() {
    let slack = "https://hooks.slack.com/services/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";
    let discord = "https://discord.com/api/webhooks/1187654321098765432/aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3k";
    let pairs = [
        (
            "aws configure set aws_secret_access_key Zx8vQ2mN7pL4kR9tW1yB6cF3hJ5sD0gA2eU4iO7q".to_string(),
            "aws configure set aws_secret_access_key Zx8vQ2mN7pL4kR9tW1yB6cF3hJ5sD0gA2eU4iO7q --profile ci".to_string(),
        ),
        (
            "az login --service-principal -u http://deploy-bot -p 7Hq~2xYk3.LmN9pQrS4tUvW --tenant northwind".to_string(),
            "az login --service-principal -u http://deploy-bot -p 7Hq~2xYk3.LmN9pQrS4tUvW --tenant northwind.onmicrosoft.com".to_string(),
        ),
        (
            format!("curl -X POST -d @msg.json {slack}"),
            format!("curl -fsS -X POST -H 'Content-Type: application/json' -d @msg.json {slack}"),
        ),
        (
            format!("curl -X POST -d @msg.json {discord}"),
            format!("curl -fsS -X POST -H 'Content-Type: application/json' -d @msg.json {discord}"),
        ),
    ];
    let extra = [serde_json::json!({
        "id": "cloud-gotcha", "recorded_at": "2026-03-09T00:00:00Z", "domains": ["devops"],
        "project": "git@github.com:acme/infra.git", "outcome": "succeeded",
        "gotchas": [format!("Alerts go to {slack}, which drops messages over 40 KB.")],
        "lesson": format!("Post deploy notices to {discord} with a JSON body."),
    })];
    let secrets = [
        "Zx8vQ2mN7pL4kR9tW1yB6cF3hJ5sD0gA2eU4iO7q",
        "7Hq~2xYk3.LmN9pQrS4tUvW",
        "q8Zr2mVx7LkP3nWc9TbYhJ4s",
        "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3k",
    ];
    assert_failed_then_fixed_leak_nothing("cloud-secrets", &pairs, &extra, &secrets);
}

/// The prefixed tokens of services agents often call, passed on a command line or an
/// environment prefix: Hugging Face `hf_`, SendGrid `SG.…`, Slack app-level `xapp-`, Grafana
/// `glc_`, DigitalOcean `dop_v1_`, Vault `hvs.`, Terraform Cloud `….atlasv1.…`, and an Azure
/// storage connection string's `AccountKey=`.
#[test]
fn prefixed_service_tokens_reach_no_file() {
    let tokens = [
        "HF_HUB_TOKEN_VALUE hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "SENDGRID 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",
        "SLACK_APP xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789abcdef",
        "GRAFANA glc_eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTEyMzQ1Ni1obS13cml0ZS10b2tlbiIsImsiOiJhYmMxMjMifQ==",
        "DO dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "VAULT hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp",
        "TFC AbCdEfGhIjKlMn.atlasv1.OpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
        "TF_TOKEN TF_TOKEN_app_terraform_io=Tf9cLoudT0kenValue",
        "VAULT_LEGACY vault login s.AbCdEfGhIjKlMnOpQrStUvWx",
        "AZ DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey=q8Zr2mVx7LkP3nWc9TbYhJ4sAbCdEfGh0123456789+/ab==;EndpointSuffix=core.windows.net",
    ];
    let pairs: Vec<(String, String)> = (tokens.iter())
        .map(|t| {
            let value = t.split_once(' ').unwrap().1;
            (
                format!("deploy-notify --credential '{value}' --env staging"),
                format!("deploy-notify --credential '{value}' --env staging --retries 3"),
            )
        })
        .collect();
    // What a pattern must catch: the key itself, not the command or connection string around it.
    let secrets = [
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
        "abcdef0123456789abcdef0123456789abcdef",
        "eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTEyMzQ1Ni1obS13cml0ZS10b2tlbiIsImsiOiJhYmMxMjMifQ",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp",
        "OpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
        "Tf9cLoudT0kenValue",
        "s.AbCdEfGhIjKlMnOpQrStUvWx",
        "q8Zr2mVx7LkP3nWc9TbYhJ4sAbCdEfGh",
    ];
    assert_failed_then_fixed_leak_nothing("service-tokens", &pairs, &[], &secrets);
}

/// A held-back cluster's message pairs each experience with its own reason while it names
/// them all, and counts the reasons once it cannot: a list of reasons after a list of ids
/// reads as pairs ("w-b, w-c: outcome abandoned; outcome failed" said the opposite of the
/// truth when w-b had failed).
#[test]
fn an_outcome_gated_cluster_says_which_experience_failed_how() {
    let s = Scratch::new("outcome-gate-pairs");
    let input = s.path("in.jsonl");
    let record = |id: &str, day: u32, outcome: &str, lesson: &str| {
        serde_json::json!({"id": id, "recorded_at": format!("2026-10-{day:02}T09:00:00Z"),
            "domains": ["terraform"], "project": "git@github.com:acme/infra.git",
            "task": "move the bucket module", "outcome": outcome, "lesson": lesson})
    };
    let moved = "Run terraform state mv before renaming a module, or the plan destroys its resources.";
    let locked = "Pass -lock-timeout=5m to terraform apply in CI so a stale lock does not fail the run.";
    let mut records = vec![
        record("tf-b", 1, "failed", moved),
        record("tf-c", 2, "abandoned", moved),
    ];
    for (i, outcome) in ["failed", "abandoned", "failed", "failed", "abandoned"]
        .iter()
        .enumerate()
    {
        records.push(record(&format!("tf-lock-{i}"), 3 + i as u32, outcome, locked));
    }
    write_jsonl(&input, &records);
    let o = compile_to(&input, &s.path("out"), &[]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let diags = read_json(&s.path("out/diagnostics.json"));
    let message = |id: &str| {
        let d = diags_of(&diags, "G001")
            .into_iter()
            .find(|d| names(d, id))
            .unwrap();
        d["message"].as_str().unwrap().to_string()
    };
    assert!(
        message("tf-b").contains("(tf-b: outcome failed; tf-c: outcome abandoned)"),
        "{}",
        message("tf-b")
    );
    assert!(
        message("tf-lock-0").contains(
            "(tf-lock-0, tf-lock-1, tf-lock-2 and 2 more: outcome abandoned (2); outcome failed (3))"
        ),
        "{}",
        message("tf-lock-0")
    );
}

/// Agents and note-takers write several tags in one string ("python, django"), as OmniMem's
/// `tags` are read: each comma-separated name is its own domain. Such a string was one
/// refused domain ("python, django" is not a valid skill name), and the lesson reached neither.
#[test]
fn domains_written_as_one_comma_separated_string_are_each_a_domain() {
    let s = Scratch::new("comma-domains");
    let input = s.path("in.jsonl");
    let lesson =
        "Use select_related for foreign keys and prefetch_related for reverse relations in list views.";
    let record = |id: &str, day: u32, domains: serde_json::Value, project: &str| {
        serde_json::json!({"id": id, "recorded_at": format!("2026-10-{day:02}T09:00:00Z"), "domains": domains,
            "project": project, "task": "N+1 queries on the order list", "outcome": "succeeded", "lesson": lesson})
    };
    write_jsonl(
        &input,
        &[
            record(
                "sf-3",
                3,
                serde_json::json!("python, Django"),
                "git@github.com:shopco/storefront.git",
            ),
            record(
                "bo-7",
                7,
                serde_json::json!(["Django,python"]),
                "git@github.com:shopco/backoffice.git",
            ),
        ],
    );
    let out = s.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = read_json(&out.join("diagnostics.json"));
    assert!(diags_of(&diags, "N001").is_empty(), "{diags:#}");
    for domain in ["python", "django"] {
        let skill = std::fs::read_to_string(out.join(domain).join("SKILL.md")).unwrap_or_default();
        assert!(skill.contains("select_related"), "{domain}: {skill}");
    }
}

/// A held-back group's diagnostic points (`-->`) at the record of the first experience it
/// lists: the line in the input that holds that id, so the story to rewrite as a rule, or the
/// run that did not pass, is one jump away.
#[test]
fn held_back_diagnostics_point_at_their_first_record() {
    let s = Scratch::new("held-back-locations");
    let (_, diags, o) = compile_foundation(&s);
    let held: Vec<_> = (diags_of(&diags, "G001").into_iter())
        .chain(diags_of(&diags, "G002"))
        .collect();
    assert!(held.len() >= 5, "{diags:#}");
    for d in held {
        let first = &ids(&d["evidence"]["experiences"])[0];
        let (file, line) = (d["file"].as_str().unwrap(), d["line"].as_u64().unwrap() as usize);
        let text = std::fs::read_to_string(repo().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let record = text.lines().nth(line - 1).unwrap();
        assert!(
            record.contains(&format!("\"{first}\"")),
            "{d:#} points at {file}:{line}: {record}"
        );
    }
    let err = stderr(&o);
    let g002 = err.find("warning[G002]").unwrap();
    assert!(err[g002..].lines().nth(1).unwrap().starts_with("  --> "), "{err}");
}

#[test]
fn a_compile_stopped_early_reports_what_it_read_not_an_empty_corpus() {
    let s = Scratch::new("foundation-stop-early");
    let summary = |stage: &str| {
        let o = compile_to(&fixture("foundation"), &s.path(stage), &["--stop-after", stage]);
        assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
        let text = stdout(&o);
        text.lines()
            .skip_while(|l| !l.starts_with("read ") && !l.starts_with("compiled "))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let load = summary("load");
    assert!(
        load.starts_with("read ") && load.contains(" experiences and "),
        "{load}"
    );
    assert!(!load.contains("candidate") && !load.contains("cluster"), "{load}");
    assert!(load.ends_with("stopped after load"), "{load}");
    let candidates = summary("candidates");
    let counted: usize = candidates
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" candidates\nstopped after candidates"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no candidate count in {candidates:?}"));
    assert!(counted > 0 && !candidates.contains("cluster"), "{candidates}");
    let cluster = summary("cluster");
    assert!(
        cluster.starts_with("compiled ") && cluster.contains(" clusters\n"),
        "{cluster}"
    );
}
