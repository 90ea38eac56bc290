//! The lifecycle through the command line (issue 4): sessions compiled one after another, each
//! listing in `in_play` the lesson ids the previous compile put in its plan-time block.

mod common;

use common::Records as History;
use common::*;
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const LEDGER: &str = "git@github.com:acme/ledger.git";
const SEARCH: &str = "git@github.com:acme/search-svc.git";

// A growing input directory and its output, compiled after every session.
impl History {
    /// `(text, id)` lines of a plan-time block, or none when the file does not exist.
    fn block(&self, scope_file: &str) -> Vec<(String, String)> {
        let Ok(text) = std::fs::read_to_string(self.s.path("out/lessons").join(scope_file)) else {
            return vec![];
        };
        text.lines()
            .map(|l| {
                let l = l.strip_prefix("- ").unwrap();
                let (t, id) = l.rsplit_once(" (id: ").unwrap();
                (t.to_string(), id.trim_end_matches(')').to_string())
            })
            .collect()
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut all: Vec<&str> = args.to_vec();
        let out = self.out();
        all.extend(["--out", &out]);
        skillc(&all)
    }
}

fn lesson<'a>(ledger: &'a Value, id: &str) -> &'a Value {
    ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no lesson {id}"))
}

/// A passed experience in one domain whose `lesson` is `text`.
fn learned(id: &str, at: &str, domain: &str, project: &str, text: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": [domain], "project": project,
           "outcome": "succeeded", "lesson": text})
}

/// The id of the active lesson that reads `text`.
fn active_id(ledger: &Value, text: &str) -> String {
    ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"] == text && l["status"] == "active")
        .unwrap_or_else(|| panic!("no active lesson {text:?}: {ledger:#}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The message of the one diagnostic of `code`; fails when there is none or more than one.
fn only_message<'a>(diags: &'a Value, code: &str) -> &'a str {
    let found = diags_of(diags, code);
    assert_eq!(found.len(), 1, "{code}: {diags:#}");
    found[0]["message"].as_str().unwrap()
}

fn digest(project: &str) -> String {
    skillc::digest::project(project)
}

fn pytest(cwd: &str, ok: bool) -> Value {
    if ok {
        json!({"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": cwd}, "status": "ok",
               "check": {"label": "tests", "target": "billing-api", "passed": true}})
    } else {
        json!({"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": cwd}, "status": "error",
               "error": "ImportError while loading conftest '/srv/billing-api/tests/conftest.py'"})
    }
}

/// `docker build --pull`, working or failing for real (not a transient error).
fn docker_build(ok: bool) -> Value {
    let mut op = json!({"tool": "run_shell_command", "args": {"command": "docker build --pull -t billing:dev ."}, "status": "ok"});
    if !ok {
        op["status"] = json!("error");
        op["error"] = json!(
            "failed to solve: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1"
        );
    }
    op
}

/// A passing ledger session that had `lesson` in play.
fn used_in_ledger(id: &str, at: &str, lesson: &str) -> Value {
    session(
        id,
        at,
        LEDGER,
        "succeeded",
        &[lesson],
        vec![pytest("/srv/ledger", true)],
    )
}

fn session(id: &str, at: &str, project: &str, outcome: &str, in_play: &[&str], ops: Vec<Value>) -> Value {
    json!({"id": id, "recorded_at": at, "domains": ["python"], "project": project, "task": "run the test suite",
           "outcome": outcome, "in_play": in_play, "operations": ops})
}

#[test]
fn seed_a_mistake_then_avoid_it_then_unlearn_it_when_the_environment_changes() {
    let h = History::new("lifecycle-mistake");
    let block = format!("project-{}.md", digest(BILLING));

    // Session A: pytest from tests/ fails, from the root it works.
    h.add(
        "a.jsonl",
        &[session(
            "sess-a",
            "2026-11-02T09:00:00Z",
            BILLING,
            "succeeded",
            &[],
            vec![
                pytest("/srv/billing-api/tests", false),
                pytest("/srv/billing-api", true),
            ],
        )],
    );
    let ledger = h.compile();
    let lines = h.block(&block);
    assert_eq!(lines.len(), 1, "the project's block carries the new lesson");
    let (text, old) = lines[0].clone();
    assert!(
        text.contains("cwd=/srv/billing-api)") && text.contains("instead of"),
        "{text}"
    );
    let l = lesson(&ledger, &old);
    assert_eq!(
        (l["rule"].as_bool(), l["confidence"].as_f64()),
        (Some(false), Some(0.5))
    );
    assert!(
        h.block("global.md").is_empty(),
        "a project lesson stays out of the global block"
    );

    // Session B: the lesson is in play, the working form is used first and confirms it.
    h.add(
        "b.jsonl",
        &[session(
            "sess-b",
            "2026-11-03T09:00:00Z",
            BILLING,
            "succeeded",
            &[&old],
            vec![pytest("/srv/billing-api", true)],
        )],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &old);
    assert_eq!(l["confidence"], 0.65, "0.500 + 0.150");
    assert_eq!(l["reinforcement"], 2);
    assert_eq!(l["rule"], true);
    assert_eq!(ids(&l["evidence"]), ["sess-a", "sess-b"]);
    let skill =
        std::fs::read_to_string(h.s.path(&format!("out/projects/{}/python/SKILL.md", digest(BILLING))))
            .unwrap();
    assert!(skill.contains(&old));

    // Session C: the fixture flipped — the root form now fails, tests/ works again.
    h.add(
        "c.jsonl",
        &[session(
            "sess-c",
            "2026-11-05T09:00:00Z",
            BILLING,
            "succeeded",
            &[&old],
            vec![
                pytest("/srv/billing-api", false),
                pytest("/srv/billing-api/tests", true),
            ],
        )],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &old);
    assert_eq!(l["status"], "superseded");
    assert_eq!(l["confidence"], 0.4, "0.650 − 0.250");
    let new = l["superseded_by"]
        .as_str()
        .expect("superseded by the new lesson")
        .to_string();
    let n = lesson(&ledger, &new);
    assert_eq!(n["status"], "active");
    assert!(
        n["text"]
            .as_str()
            .unwrap()
            .contains("cwd=/srv/billing-api/tests)")
    );
    let diags = h.diagnostics();
    assert!(
        diags_of(&diags, "S002").iter().any(|d| names(d, "sess-c")),
        "contradiction reported"
    );

    // Session D: the block carries the new lesson and not the old one.
    let lines = h.block(&block);
    assert!(
        lines.iter().any(|(_, id)| *id == new) && !lines.iter().any(|(_, id)| *id == old),
        "{lines:?}"
    );
    h.add(
        "d.jsonl",
        &[session(
            "sess-d",
            "2026-11-06T09:00:00Z",
            BILLING,
            "succeeded",
            &[&new],
            vec![pytest("/srv/billing-api/tests", true)],
        )],
    );
    let ledger = h.compile();
    assert_eq!(lesson(&ledger, &new)["confidence"], 0.65);
    assert_eq!(lesson(&ledger, &new)["rule"], true);

    // History tells the whole story, both directions, with every experience id.
    for asked in [&old, &new] {
        let o = h.run(&["lessons", "history", asked, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let chain = json(&o)["chain"].as_array().unwrap().clone();
        let chain_ids: Vec<&str> = chain.iter().map(|l| l["id"].as_str().unwrap()).collect();
        assert_eq!(chain_ids, [old.as_str(), new.as_str()]);
        let text = stdout(&h.run(&["lessons", "history", asked]));
        for exp in ["sess-a", "sess-b", "sess-c", "sess-d"] {
            assert!(text.contains(exp), "history names {exp}: {text}");
        }
        assert!(text.contains("contradicted") && text.contains("superseded by"));
        // Said once: the supersede event names its successor, and no line repeats it.
        let named = text.matches(&format!("superseded by {new}")).count();
        assert_eq!(named, 1, "the successor is named once: {text}");
    }

    // The list filters by status and domain, as text and as JSON.
    let o = h.run(&["lessons", "list", "--status", "superseded", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listed = json(&o)["lessons"].as_array().unwrap().clone();
    let ids: Vec<&str> = listed.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert!(
        ids.contains(&old.as_str()) && !ids.contains(&new.as_str()),
        "{ids:?}"
    );
    assert!(
        listed
            .iter()
            .all(|l| l["status"] == "superseded" && l["history"].is_array())
    );
    let text = stdout(&h.run(&["lessons", "list", "--domain", "python", "--status", "active"]));
    let line = text
        .lines()
        .find(|l| l.starts_with(new.as_str()))
        .expect("the new lesson is listed");
    assert!(
        line.contains("active") && line.contains("0.650") && line.ends_with("[rule]"),
        "{line}"
    );
    assert!(!text.contains(old.as_str()), "{text}");
    let none = stdout(&h.run(&["lessons", "list", "--domain", "rust"]));
    assert_eq!(none, "no lessons match\n");
    // A status that does not exist is a usage error, not an empty list.
    let o = h.run(&["lessons", "list", "--status", "deprecated"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("possible values: active, claimed, superseded, retired"),
        "{}",
        stderr(&o)
    );

    // Re-running the compile on unchanged input changes nothing, and the summary says so.
    let before = tree(&h.s.path("out"));
    let o = skillc(&[
        "compile",
        h.s.path("records").to_str().unwrap(),
        "--out",
        &h.out(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = before.keys().filter(|k| !k.starts_with(".skillc")).count();
    assert!(
        stdout(&o).contains(&format!("{files} files in {} (0 changed)", h.out())),
        "{}",
        stdout(&o)
    );
    assert_eq!(before, tree(&h.s.path("out")));

    // Records dropped from the input take their skills with them, and the summary says how many
    // files went (a nightly job should see a skill disappear).
    std::fs::remove_dir_all(h.s.path("records")).unwrap();
    std::fs::create_dir_all(h.s.path("records")).unwrap();
    h.add("empty.jsonl", &[]);
    let o = skillc(&[
        "compile",
        h.s.path("records").to_str().unwrap(),
        "--out",
        &h.out(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skills = before.keys().filter(|k| k.ends_with("SKILL.md")).count();
    assert!(skills > 0);
    assert!(
        json(&o)["removed_files"].as_u64().unwrap() >= skills as u64,
        "{}",
        stdout(&o)
    );
}

/// DESIGN §6 identity, computed here independently: `L` + 12 hex of SHA-256 over `domain NUL kind
/// NUL key NUL founder NUL text`. The founder is the smallest id among the *admissible* members
/// at the earliest time (a story told at that time is no founder), the wording the most
/// rule-shaped of them (not the founder's), and a later member — even one with a smaller id
/// and firmer words — changes neither.
#[test]
fn a_lessons_id_hashes_its_founder_and_wording_and_later_evidence_keeps_both() {
    let h = History::new("lifecycle-identity");
    let id_of = |domain: &str, kind: &str, key: &str, founder: &str, text: &str| {
        let fields = [domain, kind, key, founder, text].join("\0");
        format!("L{}", &skillc::digest::sha256_hex(fields.as_bytes())[..12])
    };
    let rule = "Run pytest from the repository root so conftest.py is picked up.";
    h.add(
        "a.jsonl",
        &[
            learned(
                "id-0",
                "2026-08-03T10:00:00Z",
                "python",
                BILLING,
                "We ran pytest from the repository root, so conftest.py was picked up.",
            ),
            learned(
                "id-a",
                "2026-08-03T10:00:00Z",
                "python",
                BILLING,
                "pytest should be run from the repository root so conftest.py is picked up.",
            ),
            learned("id-b", "2026-08-03T10:00:00Z", "python", LEDGER, rule),
            session(
                "id-fix",
                "2026-08-03T11:00:00Z",
                BILLING,
                "succeeded",
                &[],
                vec![
                    pytest("/srv/billing-api/tests", false),
                    pytest("/srv/billing-api", true),
                ],
            ),
        ],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &active_id(&ledger, rule)).clone();
    assert_eq!(
        (l["founder"].as_str(), ids(&l["evidence"])),
        (Some("id-a"), vec!["id-a".to_string(), "id-b".to_string()])
    );
    assert_eq!(l["id"], id_of("python", "do", "", "id-a", rule));
    let fix = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["operation_key"] == "run_shell_command pytest")
        .unwrap();
    let text = fix["text"].as_str().unwrap();
    assert_eq!(
        fix["id"],
        id_of("python", "do", "run_shell_command pytest", "id-fix", text)
    );

    h.add(
        "b.jsonl",
        &[learned(
            "id-00",
            "2026-08-05T10:00:00Z",
            "python",
            LEDGER,
            "Always run pytest from the repository root so that conftest.py is picked up.",
        )],
    );
    let ledger = h.compile();
    let again = lesson(&ledger, l["id"].as_str().unwrap());
    assert_eq!(
        (
            again["text"].as_str(),
            again["founder"].as_str(),
            again["status"].as_str()
        ),
        (Some(rule), Some("id-a"), Some("active"))
    );
    assert!(
        ids(&again["evidence"]).contains(&"id-00".to_string()),
        "{again:#}"
    );

    // An edit's id is the same hash with the old id in the founder's place, over the new
    // text as normalised (one line, whitespace collapsed).
    let old = l["id"].as_str().unwrap();
    let edited = "Run pytest from the repository root  so conftest.py and the src layout are found.";
    assert_eq!(
        h.run(&["lessons", "edit", old, "--text", edited]).status.code(),
        Some(0)
    );
    let ledger = h.compile();
    let normalised = "Run pytest from the repository root so conftest.py and the src layout are found.";
    let new_id = id_of("python", "do", "", old, normalised);
    assert_eq!(lesson(&ledger, old)["superseded_by"], new_id.as_str());
    assert_eq!(lesson(&ledger, &new_id)["text"], normalised);
}

#[test]
fn learn_what_worked_and_let_the_next_session_make_it_a_rule() {
    let h = History::new("lifecycle-learn");
    let lesson_text = "Start the test database with scripts/dev-db.sh; docker compose up alone leaves the schema unmigrated.";
    h.add("a.jsonl", &[json!({"id": "learn-a", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["postgres"],
        "project": LEDGER, "outcome": "succeeded", "lesson": lesson_text,
        "operations": [{"tool": "run_shell_command", "args": {"command": "scripts/dev-db.sh", "cwd": "/home/dev/ledger"}, "status": "ok",
                        "check": {"label": "tests", "target": "ledger", "passed": true}}]})]);
    h.compile();
    let lines = h.block(&format!("project-{}.md", digest(LEDGER)));
    assert_eq!(
        lines[0].0, lesson_text,
        "the block carries the text exactly as in the ledger"
    );
    let id = lines[0].1.clone();
    h.add("b.jsonl", &[json!({"id": "learn-b", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["postgres"],
        "project": LEDGER, "outcome": "succeeded", "in_play": [&id],
        "operations": [{"tool": "run_shell_command", "args": {"command": "scripts/dev-db.sh", "cwd": "/home/dev/ledger"}, "status": "ok",
                        "check": {"label": "tests", "target": "ledger", "passed": true}}]})]);
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (
            l["rule"].as_bool(),
            l["confidence"].as_f64(),
            l["reinforcement"].as_u64()
        ),
        (Some(true), Some(0.65), Some(2))
    );

    // A lesson merely present in a file is never credited: an experience that does not list
    // it changes nothing.
    h.add(
        "c.jsonl",
        &[
            json!({"id": "learn-c", "recorded_at": "2026-11-03T12:00:00Z", "domains": ["postgres"],
        "project": LEDGER, "outcome": "failed"}),
        ],
    );
    let ledger = h.compile();
    assert_eq!(lesson(&ledger, &id)["confidence"], 0.65);

    // Retire: out of every prompt-facing file, never re-learned; restore brings it back.
    let o = h.run(&[
        "lessons",
        "retire",
        &id,
        "--reason",
        "we moved the DB into testcontainers",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (l["status"].as_str(), l["superseded_by"].as_str()),
        (Some("retired"), Some("retired:user"))
    );
    assert!(h.block(&format!("project-{}.md", digest(LEDGER))).is_empty());
    assert!(
        !h.s.path(&format!("out/projects/{}/postgres/SKILL.md", digest(LEDGER)))
            .exists()
    );
    let diags = h.diagnostics();
    assert!(
        diags_of(&diags, "G007").iter().any(|d| names(d, "learn-a")),
        "retired evidence is not re-learned"
    );
    h.run(&["lessons", "restore", &id]);
    let ledger = h.compile();
    assert_eq!(lesson(&ledger, &id)["status"], "active");

    // An edit without words is refused and leaves the journal as it was.
    for blank in ["", "   "] {
        let o = h.run(&["lessons", "edit", &id, "--text", blank]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("the new text is empty"), "{}", stderr(&o));
        // A retire whose reason is blank (an unset shell variable) is refused too, rather
        // than journalled as a reason that says nothing.
        let o = h.run(&["lessons", "retire", &id, "--reason", blank]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--reason is empty"), "{}", stderr(&o));
    }
    // Nor may the text carry an id of its own: a rule line adds its id, and a second one would
    // pass for a merged rule in an authored skill.
    let o = h.run(&[
        "lessons",
        "edit",
        &id,
        "--text",
        "Start the test database first (id: L000000000000).",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cites a lesson id"), "{}", stderr(&o));
    assert_eq!(lesson(&h.compile(), &id)["status"], "active");

    // Edit supersedes with the new wording; confidence and evidence carry over.
    let o = h.run(&[
        "lessons",
        "edit",
        &id,
        "--text",
        "Start the test database with scripts/dev-db.sh, which also migrates.",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let ledger = h.compile();
    let old = lesson(&ledger, &id);
    let new_id = old["superseded_by"].as_str().unwrap().to_string();
    let new = lesson(&ledger, &new_id);
    assert_eq!(
        new["text"],
        "Start the test database with scripts/dev-db.sh, which also migrates."
    );
    assert_eq!(
        (new["confidence"].as_f64(), ids(&new["evidence"])),
        (Some(0.65), ids(&old["evidence"]))
    );

    // Pin: first in its block, immune to decay. Three later sessions in the project's
    // postgres work found a newer lesson and use neither: active days without use.
    assert_eq!(h.run(&["lessons", "pin", &new_id]).status.code(), Some(0));
    let newer = "Run scripts/migrate.sh before seeding the test database so the fixtures see every column.";
    let later = |id: &str, at: &str, lesson: Option<&str>| {
        json!({"id": id, "recorded_at": at, "domains": ["postgres"], "project": LEDGER, "outcome": "succeeded",
               "task": "add the invoices table", "lesson": lesson,
               "operations": [{"tool": "run_shell_command", "args": {"command": "make test", "cwd": "/home/dev/ledger"},
                               "status": "ok", "check": {"label": "tests", "target": "ledger", "passed": true}}]})
    };
    h.add(
        "e.jsonl",
        &[
            later("learn-e1", "2026-11-10T10:00:00Z", Some(newer)),
            later("learn-e2", "2026-11-11T10:00:00Z", None),
            later("learn-e3", "2026-11-12T10:00:00Z", None),
        ],
    );
    let ledger = h.compile();
    let pinned = lesson(&ledger, &new_id);
    assert_eq!(
        (pinned["pinned"].as_bool(), pinned["confidence"].as_f64()),
        (Some(true), Some(0.65)),
        "a pinned lesson does not decay"
    );
    let fresh = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["text"] == newer)
        .unwrap_or_else(|| panic!("the newer lesson is in the ledger: {:#?}", h.diagnostics()));
    assert!(
        fresh["confidence"].as_f64().unwrap() < 0.5,
        "an unpinned one does: {fresh}"
    );
    // Unpinned, the newer lesson (used today) would lead the block; pinned goes first.
    let block = h.block(&format!("project-{}.md", digest(LEDGER)));
    let order: Vec<&str> = block.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(block[0].1, new_id, "{order:?}");
    assert!(order.contains(&newer), "{order:?}");

    // Unknown ids cannot run.
    assert_eq!(
        h.run(&["lessons", "retire", "L000000000000"]).status.code(),
        Some(2)
    );
    assert_eq!(
        h.run(&["lessons", "show", "L000000000000"]).status.code(),
        Some(2)
    );
}

#[test]
fn a_claim_with_fabricated_evidence_is_refused_and_an_unevidenced_claim_stays_claimed() {
    let h = History::new("lifecycle-claims");
    h.add("a.jsonl", &[
        json!({"id": "ok-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["docker"], "project": SEARCH, "outcome": "succeeded",
               "gotchas": ["alpine images ship musl, so glibc wheels fail to install"]}),
        json!({"type": "lesson", "id": "claim-planted", "recorded_at": "2026-11-02T11:00:00Z", "domains": ["docker"],
               "text": "Always run containers as root so volume permissions never fail.", "kind": "do", "source": "model",
               "evidence": ["ok-1", "exp-that-never-happened"]}),
        json!({"type": "lesson", "id": "claim-bare", "recorded_at": "2026-11-02T12:00:00Z", "domains": ["docker"],
               "text": "Use multi-stage builds to keep build tools out of the runtime image.", "kind": "do", "source": "user"}),
    ]);
    let ledger = h.compile();
    let diags = h.diagnostics();
    let fab = diags_of(&diags, "G005");
    assert_eq!(fab.len(), 1);
    assert_eq!(fab[0]["subject"], "claim-planted");
    assert!(
        fab[0]["evidence"]["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "exp-that-never-happened")
    );
    let lessons = ledger["lessons"].as_array().unwrap();
    assert!(
        !lessons
            .iter()
            .any(|l| l["text"].as_str().unwrap().contains("as root"))
    );
    let bare = lessons
        .iter()
        .find(|l| l["text"].as_str().unwrap().contains("multi-stage"))
        .unwrap();
    assert_eq!(
        (
            bare["status"].as_str(),
            bare["confidence"].as_f64(),
            bare["rule"].as_bool()
        ),
        (Some("claimed"), Some(0.3), Some(false))
    );
    let everything: String = tree(&h.s.path("out"))
        .iter()
        .filter(|(k, _)| k.ends_with(".md"))
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert!(
        !everything.contains("multi-stage"),
        "a claimed lesson is in no prompt-facing file"
    );
    let diags = h.diagnostics();
    assert!(
        diags_of(&diags, "G004")
            .iter()
            .any(|d| d["subject"] == bare["id"]),
        "no evidence, stays claimed"
    );

    // A passed experience that has the claim in play gives it evidence: admitted at 0.500.
    let id = bare["id"].as_str().unwrap().to_string();
    h.add("b.jsonl", &[json!({"id": "ok-2", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["docker"], "project": SEARCH,
        "outcome": "succeeded", "in_play": [&id]})]);
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (l["status"].as_str(), l["confidence"].as_f64()),
        (Some("active"), Some(0.5))
    );
    assert_eq!(ids(&l["evidence"]), ["ok-2"]);
}

fn gotcha(id: &str, at: &str, project: &str, text: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": ["python"], "project": project, "outcome": "succeeded", "gotchas": [text]})
}

#[test]
fn promotion_to_global_and_demotion_after_a_contradiction_from_a_third_project() {
    let h = History::new("lifecycle-scope");
    h.add(
        "a.jsonl",
        &[gotcha(
            "sc-1",
            "2026-11-02T10:00:00Z",
            BILLING,
            "pytest-xdist runs session fixtures once per worker, not once per run",
        )],
    );
    let ledger = h.compile();
    let l = &ledger["lessons"][0];
    assert_eq!(l["scope"], format!("project:{}", digest(BILLING)));
    let id = l["id"].as_str().unwrap().to_string();
    h.add(
        "b.jsonl",
        &[gotcha(
            "sc-2",
            "2026-11-03T10:00:00Z",
            LEDGER,
            "pytest-xdist runs session-scoped fixtures once per worker rather than once per run",
        )],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(l["scope"], "global", "supported from two projects");
    assert_eq!(l["rule"], true);
    assert!(h.s.path("out/python/SKILL.md").is_file());
    // A confirmation from ledger, then a contradiction from a third project.
    h.add("c.jsonl", &[
        json!({"id": "sc-3", "recorded_at": "2026-11-04T10:00:00Z", "domains": ["python"], "project": LEDGER, "outcome": "succeeded", "in_play": [&id]}),
        json!({"id": "sc-4", "recorded_at": "2026-11-05T10:00:00Z", "domains": ["python"], "project": SEARCH, "outcome": "failed", "in_play": [&id]}),
    ]);
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        l["scope"],
        format!("project:{}", digest(LEDGER)),
        "demoted to the project that last confirmed it"
    );
    assert_eq!(l["confidence"], 0.4, "0.500 + 0.150 − 0.250");
    assert!(
        diags_of(&h.diagnostics(), "S006")
            .iter()
            .any(|d| names(d, "sc-4"))
    );
}

/// DESIGN §6: a demoted lesson "stays there until a confirmation from another project recorded
/// after the demotion" — a new supporting record from another project is no confirmation, and
/// a confirmation from the project it was demoted to keeps it there.
#[test]
fn a_demoted_lesson_stays_in_its_project_until_another_project_confirms_it() {
    let h = History::new("lifecycle-demoted-stays");
    let xdist = "pytest-xdist runs session fixtures once per worker, not once per run";
    h.add(
        "a.jsonl",
        &[
            gotcha("ds-1", "2026-11-02T10:00:00Z", BILLING, xdist),
            gotcha(
                "ds-2",
                "2026-11-03T10:00:00Z",
                LEDGER,
                "pytest-xdist runs session-scoped fixtures once per worker rather than once per run",
            ),
        ],
    );
    let ledger = h.compile();
    let id = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(lesson(&ledger, &id)["scope"], "global");
    let in_play = |sid: &str, at: &str, project: &str, outcome: &str| {
        json!({"id": sid, "recorded_at": at, "domains": ["python"], "project": project, "outcome": outcome,
               "task": "run the suite in parallel", "in_play": [&id]})
    };
    let scope_after = |file: &str, record: Value| {
        h.add(file, &[record]);
        lesson(&h.compile(), &id)["scope"].as_str().unwrap().to_string()
    };
    let ledger_scope = format!("project:{}", digest(LEDGER));
    // Contradicted from a third project, never confirmed: back to its newest supporting project.
    assert_eq!(
        scope_after(
            "b.jsonl",
            in_play("ds-3", "2026-11-04T10:00:00Z", SEARCH, "failed")
        ),
        ledger_scope
    );
    // Billing records the gotcha again: support, not a confirmation.
    let again = gotcha(
        "ds-4",
        "2026-11-05T10:00:00Z",
        BILLING,
        "pytest-xdist runs session fixtures once per worker and not once per run",
    );
    assert_eq!(scope_after("c.jsonl", again), ledger_scope);
    // Confirmed from the project it went back to: it stays there.
    assert_eq!(
        scope_after(
            "d.jsonl",
            in_play("ds-5", "2026-11-06T10:00:00Z", LEDGER, "succeeded")
        ),
        ledger_scope
    );
    // Confirmed from another project: global again.
    assert_eq!(
        scope_after(
            "e.jsonl",
            in_play("ds-6", "2026-11-07T10:00:00Z", BILLING, "succeeded")
        ),
        "global"
    );
    let events: Vec<String> = (lesson(&h.compile(), &id)["history"].as_array().unwrap().iter())
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        events,
        [
            "admitted",
            "joined",
            "promoted",
            "contradicted",
            "demoted",
            "joined",
            "confirmed",
            "confirmed",
            "promoted"
        ]
    );
}

#[test]
fn decay_supersedes_an_unused_lesson_on_the_day_it_crosses_the_floor() {
    let h = History::new("lifecycle-decay");
    let mut records = vec![gotcha(
        "dc-0",
        "2026-10-01T10:00:00Z",
        BILLING,
        "SQLAlchemy sessions expire objects on commit, so attribute access after commit hits the database",
    )];
    // Sixteen later days with python activity in the same project that never use the lesson.
    for day in 2..=17 {
        records.push(
            json!({"id": format!("dc-{day}"), "recorded_at": format!("2026-10-{day:02}T10:00:00Z"),
            "domains": ["python"], "project": BILLING, "outcome": "succeeded"}),
        );
    }
    h.add("a.jsonl", &records);
    let ledger = h.compile();
    let l = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "watch")
        .unwrap();
    assert_eq!(l["status"], "superseded");
    assert!(l["superseded_by"].is_null());
    assert!(l["reason"].as_str().unwrap().contains("decayed"));
    assert_eq!(l["confidence"], 0.18, "0.500 − 16 × 0.020");
    let diags = h.diagnostics();
    let s001 = diags_of(&diags, "S001")
        .into_iter()
        .find(|d| d["subject"] == l["id"]);
    let s001 = s001.expect("superseded is reported");
    // A number, as in the ledger and every other diagnostic.
    assert_eq!(s001["evidence"]["confidence"], json!(0.18), "{s001:#}");
    let last = l["history"].as_array().unwrap().last().unwrap();
    assert_eq!(last["event"], "superseded");
    assert!(
        last["at"].as_str().unwrap().starts_with("2026-10-17"),
        "the 16th idle active day"
    );

    // Frozen: a later failure with the lesson in play neither blames nor revives it, and a new
    // candidate after the supersession founds a new lesson that history links to the old one.
    let id = l["id"].as_str().unwrap().to_string();
    h.add("b.jsonl", &[
        json!({"id": "dc-late", "recorded_at": "2026-10-20T10:00:00Z", "domains": ["python"], "project": BILLING,
               "outcome": "failed", "in_play": [&id]}),
        gotcha("dc-again", "2026-10-21T10:00:00Z", BILLING, "SQLAlchemy sessions expire objects on commit, so attribute access after commit hits the database"),
    ]);
    let ledger = h.compile();
    let old = lesson(&ledger, &id);
    assert_eq!(
        (old["status"].as_str(), old["confidence"].as_f64()),
        (Some("superseded"), Some(0.18))
    );
    // A decision on the decayed lesson is refused, and names the lesson taught again since,
    // which nothing's `superseded_by` points at.
    let again = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["supersedes"] == id.as_str())
        .expect("a new lesson")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = h.run(&["lessons", "pin", &id]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!(
            "so `pin` would have no effect; not recorded; the lesson now is {again}: use `{again}`"
        )),
        "{}",
        stderr(&o)
    );
    assert!(
        !diags_of(&h.diagnostics(), "S002")
            .iter()
            .any(|d| names(d, "dc-late"))
    );
    let new = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["supersedes"] == id.as_str())
        .expect("a new lesson");
    assert_eq!(
        (new["status"].as_str(), new["founder"].as_str()),
        (Some("active"), Some("dc-again"))
    );
}

/// One `go` session of the billing project: `failing` fails for real, then `working` passes.
fn go_fix(id: &str, at: &str, failing: &str, error: &str, working: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": ["go"], "project": BILLING, "outcome": "succeeded",
           "operations": [
               {"tool": "run_shell_command", "args": {"command": failing}, "status": "error", "error": error},
               {"tool": "run_shell_command", "args": {"command": working}, "status": "ok",
                "check": {"label": "go", "target": "billing-api", "passed": true}}]})
}

#[test]
fn a_fix_replaced_by_a_newer_form_is_charged_its_idle_days_first() {
    let h = History::new("lifecycle-replaced-decay");
    let mut records = vec![go_fix(
        "gd-1",
        "2026-10-01T10:00:00Z",
        "go test ./...",
        "build constraints exclude all Go files in /srv/billing-api/integration",
        "go test -tags integration ./...",
    )];
    // Four active days in the project's `go` domain on which the fix was not used.
    for day in 2..=5 {
        records.push(
            json!({"id": format!("gd-{day}"), "recorded_at": format!("2026-10-{day:02}T10:00:00Z"),
            "domains": ["go"], "project": BILLING, "outcome": "succeeded", "task": "review a pull request"}),
        );
    }
    // Day six: another form on the same key (`run_shell_command go`) replaces it.
    records.push(go_fix(
        "gd-6",
        "2026-10-06T10:00:00Z",
        "go build ./cmd/api",
        "pattern static/*: no matching files found",
        "go build -trimpath ./cmd/api",
    ));
    h.add("a.jsonl", &records);
    let ledger = h.compile();
    let old = active_or_not(&ledger, "go test -tags integration");
    let new = active_or_not(&ledger, "go build -trimpath");
    assert_eq!(old["status"], "superseded");
    assert_eq!(old["superseded_by"], new["id"]);
    assert_eq!(
        old["confidence"], 0.42,
        "0.500 − 4 idle active days × 0.020, then frozen"
    );
    // It never failed: the reason says the slot took the newer fix, not that this one broke.
    let reason = old["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("a newer fix on this operation key replaces it"),
        "{reason}"
    );
    assert_eq!(
        (new["status"].as_str(), new["confidence"].as_f64()),
        (Some("active"), Some(0.5))
    );
}

/// The lesson whose text contains `part`, whatever its status.
fn active_or_not<'a>(ledger: &'a Value, part: &str) -> &'a Value {
    (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["text"].as_str().unwrap().contains(part))
        .unwrap_or_else(|| panic!("no lesson on {part}"))
}

#[test]
fn the_cap_supersedes_the_weakest_lessons_beyond_two_hundred() {
    let h = History::new("lifecycle-cap");
    let records: Vec<Value> = (0..205)
        .map(|i| {
            gotcha(
                &format!("cap-{i:03}"),
                "2026-11-02T10:00:00Z",
                BILLING,
                &format!("the importer reads flag_{i} from settings_{i}.toml only at startup"),
            )
        })
        .collect();
    h.add("a.jsonl", &records);
    let ledger = h.compile();
    let lessons = ledger["lessons"].as_array().unwrap();
    let active = lessons.iter().filter(|l| l["status"] == "active").count();
    let capped = lessons
        .iter()
        .filter(|l| l["reason"].as_str().is_some_and(|r| r.contains("cap")))
        .count();
    assert_eq!((active, capped), (200, 5));
    let diags = h.diagnostics();
    let s003 = diags_of(&diags, "S003");
    assert_eq!(s003.len(), 1);
    assert_eq!(s003[0]["evidence"]["superseded"].as_array().unwrap().len(), 5);
    assert!(
        h.block(&format!("project-{}.md", digest(BILLING))).len() == 5,
        "a block holds at most five lessons"
    );

    // Pinned lessons are exempt from the cap and take their room from it: pin three of the
    // five it superseded, and three others go instead.
    let pinned: Vec<String> = (s003[0]["evidence"]["superseded"].as_array().unwrap()[..3].iter())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for id in &pinned {
        assert_eq!(h.run(&["lessons", "pin", id]).status.code(), Some(0));
    }
    let ledger = h.compile();
    let lessons = ledger["lessons"].as_array().unwrap();
    for id in &pinned {
        let l = lesson(&ledger, id);
        assert_eq!(
            (l["status"].as_str(), l["pinned"].as_bool()),
            (Some("active"), Some(true)),
            "{id}"
        );
    }
    let active = lessons.iter().filter(|l| l["status"] == "active").count();
    let capped: Vec<&Value> = (lessons.iter())
        .filter(|l| l["reason"].as_str().is_some_and(|r| r.contains("cap")))
        .collect();
    assert_eq!((active, capped.len()), (200, 5));
    assert!(capped.iter().all(|l| l["pinned"] == false));
}

/// DESIGN §5.4: blessing bypasses the outcome gate — a blessed failed session's own lesson is a
/// rule — but never the evidence gate: a do-claim citing that session as evidence cites an
/// experience that did not pass, and is refused as unsupported.
#[test]
fn blessing_vouches_for_an_experiences_own_lessons_not_for_claims_citing_it() {
    let h = History::new("lifecycle-bless-evidence");
    h.add("a.jsonl", &[
        json!({"id": "tf-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["terraform"], "project": SEARCH,
               "outcome": "failed", "blessed": true, "task": "rotate the state bucket",
               "lesson": "Run terraform init -migrate-state after changing the backend block so the state moves with it."}),
        json!({"type": "lesson", "id": "claim-lock", "recorded_at": "2026-11-02T11:00:00Z", "domains": ["terraform"],
               "text": "Commit .terraform.lock.hcl so every checkout uses the same provider builds.", "kind": "do",
               "source": "model", "evidence": ["tf-1"]}),
    ]);
    let ledger = h.compile();
    let own = &ledger["lessons"].as_array().unwrap();
    assert!(
        own.iter()
            .any(|l| l["text"].as_str().unwrap().contains("-migrate-state") && l["rule"] == true),
        "{ledger:#}"
    );
    assert!(
        !own.iter()
            .any(|l| l["text"].as_str().unwrap().contains("lock.hcl")),
        "{ledger:#}"
    );
    let diags = h.diagnostics();
    let g006 = diags_of(&diags, "G006");
    assert_eq!(g006.len(), 1, "{g006:#?}");
    assert_eq!(
        (g006[0]["subject"].as_str(), &g006[0]["evidence"]["unsupported"]),
        (Some("claim-lock"), &json!(["tf-1"]))
    );
}

#[test]
fn blessing_an_experience_makes_its_once_seen_lesson_a_rule() {
    let h = History::new("lifecycle-bless");
    let text = "When a fake stands in for a component with known divergent behaviour, the fake must reproduce the divergence.";
    h.add(
        "a.jsonl",
        &[
            json!({"id": "bl-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["python"],
        "project": BILLING, "outcome": "succeeded", "lesson": text}),
        ],
    );
    let ledger = h.compile();
    let l = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"] == text)
        .unwrap()
        .clone();
    assert_eq!(l["rule"], false, "one experience is below reinforcement");
    let records = h.s.path("records");
    let o = skillc(&["bless", "bl-1", records.to_str().unwrap(), "--out", &h.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = h.compile();
    let l = lesson(&ledger, l["id"].as_str().unwrap());
    assert_eq!(
        (l["rule"].as_bool(), l["blessed"].as_bool()),
        (Some(true), Some(true))
    );
    // `lessons show` says why a lesson of one experience is a rule.
    let shown = stdout(&h.run(&["lessons", "show", l["id"].as_str().unwrap()]));
    assert!(
        shown.contains("  reinforcement: 1\n  rule: true\n  pinned: false\n  blessed: true\n"),
        "{shown}"
    );
    // The id as an agent copies it from a bullet, or typed in lower case, names the same lesson.
    let id = l["id"].as_str().unwrap();
    for copied in [format!("(id: {id})"), format!("l{}", id[1..].to_uppercase())] {
        let o = h.run(&["lessons", "show", &copied]);
        assert_eq!(o.status.code(), Some(0), "{copied}: {}", stderr(&o));
        assert_eq!(stdout(&o), shown, "{copied}");
    }
    // Its history names the blessing and the experience vouched for.
    let events: Vec<&str> = l["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["admitted", "blessed"]);
    let history = stdout(&h.run(&["lessons", "history", l["id"].as_str().unwrap()]));
    assert!(
        history.contains("blessed")
            && history.contains("a person vouches for it")
            && history.contains("bl-1"),
        "{history}"
    );
    let o = skillc(&[
        "bless",
        "no-such-experience",
        records.to_str().unwrap(),
        "--out",
        &h.out(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no experience with id `no-such-experience`"),
        "{}",
        stderr(&o)
    );

    // A record that is there but was refused at load: bless says why, not "no experience".
    h.add(
        "z.jsonl",
        &[
            json!({"id": "bl-typo", "recorded_at": "2026-10-09T10:00:00Z", "domains": ["python"],
        "outcome": "success", "lesson": text}),
        ],
    );
    let o = skillc(&["bless", "bl-typo", records.to_str().unwrap(), "--out", &h.out()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("`bl-typo` was refused at load at") && err.contains("z.jsonl:1"),
        "{err}"
    );
    assert!(err.contains("L003") && err.contains("\"success\""), "{err}");
}

/// A do-claim with an operation key is backed only by passed experiences in its domain that ran
/// an operation on that key (DESIGN §5.4); the others are named as unsupported, and a claim
/// whose every experience ran it is admitted.
#[test]
fn a_keyed_claim_is_supported_only_by_passed_experiences_that_ran_its_key() {
    let h = History::new("lifecycle-keyed-claims");
    let build = docker_build(true);
    let read = json!({"tool": "read_file", "args": {"file_path": "Dockerfile"}, "status": "ok"});
    let claim = |id: &str, evidence: &[&str]| {
        json!({"type": "lesson", "id": id, "recorded_at": "2026-11-05T12:00:00Z", "domains": ["docker"],
               "text": "Pass --pull to docker build so a stale local base image is never reused.", "kind": "do",
               "source": "extractor", "evidence": evidence, "operation_key": "run_shell_command docker"})
    };
    h.add("a.jsonl", &[
        json!({"id": "built-1", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["docker"], "project": SEARCH,
               "outcome": "succeeded", "operations": [read, build]}),
        json!({"id": "read-only", "recorded_at": "2026-11-03T11:00:00Z", "domains": ["docker"], "project": SEARCH,
               "outcome": "succeeded", "operations": [read]}),
        json!({"id": "built-failed", "recorded_at": "2026-11-03T12:00:00Z", "domains": ["docker"], "project": SEARCH,
               "outcome": "failed", "operations": [build]}),
        json!({"id": "built-2", "recorded_at": "2026-11-04T10:00:00Z", "domains": ["docker"], "project": SEARCH,
               "outcome": "succeeded", "operations": [build]}),
        claim("claim-mixed", &["built-1", "read-only", "built-failed"]),
        claim("claim-backed", &["built-1", "built-2"]),
    ]);
    let ledger = h.compile();
    let diags = h.diagnostics();
    let g006 = diags_of(&diags, "G006");
    assert_eq!(g006.len(), 1, "{g006:#?}");
    assert_eq!(g006[0]["subject"], "claim-mixed");
    assert_eq!(
        g006[0]["evidence"]["unsupported"],
        json!(["read-only", "built-failed"])
    );
    let backed = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| {
            l["evidence"]
                .as_array()
                .is_some_and(|e| e.contains(&json!("built-2")))
        })
        .unwrap_or_else(|| panic!("claim-backed is a lesson: {diags:#}"));
    assert_eq!(
        (backed["status"].as_str(), backed["operation_key"].as_str()),
        (Some("active"), Some("run_shell_command docker"))
    );
}

/// A keyed claim with no evidence gains it from a session that has it in play only as its cited
/// evidence would support it (DESIGN §5.4, principle 3): a passed session that ran its key. One
/// that only read the Dockerfile, or whose build was refused, leaves it claimed and out of every
/// prompt-facing file.
#[test]
fn a_keyed_claim_in_play_gains_evidence_only_from_a_passed_run_of_its_key() {
    let h = History::new("lifecycle-keyed-claim-in-play");
    let text = "Pass --pull to docker build so a stale local base image is never reused.";
    h.add(
        "a.jsonl",
        &[
            json!({"type": "lesson", "id": "claim-pull", "recorded_at": "2026-11-02T09:00:00Z",
        "domains": ["docker"], "text": text, "kind": "do", "source": "extractor", "evidence": [],
        "operation_key": "run_shell_command docker"}),
        ],
    );
    let id = h.compile()["lessons"][0]["id"].as_str().unwrap().to_string();
    let read = json!({"tool": "read_file", "args": {"file_path": "Dockerfile"}, "status": "ok"});
    let mut refused = docker_build(true);
    refused["status"] = json!("refused");
    let session = |sid: &str, at: &str, ops: Vec<Value>| {
        json!({"id": sid, "recorded_at": at, "domains": ["docker"], "project": SEARCH, "outcome": "succeeded",
               "task": "slim the search image", "in_play": [&id], "operations": ops})
    };
    h.add(
        "b.jsonl",
        &[
            session("read-only", "2026-11-03T10:00:00Z", vec![read.clone()]),
            session(
                "build-refused",
                "2026-11-04T10:00:00Z",
                vec![read.clone(), refused],
            ),
        ],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (l["status"].as_str(), l["evidence"].as_array().map(Vec::len)),
        (Some("claimed"), Some(0)),
        "{l:#}"
    );
    assert!(
        !h.s.path("out/lessons").exists(),
        "a claimed lesson is in no block"
    );
    let t = trace_json("read-only", &h.s.path("records"), &h.s.path("out"));
    let why = t["attribution"][0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.contains("ran no operation on `run_shell_command docker`"),
        "{t:#}"
    );

    h.add(
        "c.jsonl",
        &[session(
            "built",
            "2026-11-05T10:00:00Z",
            vec![read, docker_build(true)],
        )],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (
            l["status"].as_str(),
            l["confidence"].as_f64(),
            ids(&l["evidence"])
        ),
        (Some("active"), Some(0.5), vec!["built".to_string()])
    );
}

/// A session may list every lesson of its plan-time blocks in `in_play`, across domains and
/// operation keys. Each is credited or blamed by its own rule (DESIGN §6 attribution): once,
/// however often it is listed; not at all when the session is outside its domain; and an id
/// that is no lesson is reported once.
#[test]
fn a_session_naming_many_lessons_credits_and_blames_each_by_its_own_rule() {
    let h = History::new("lifecycle-many-in-play");
    let db_lesson = "Run migrations in a transaction so a failed one leaves the schema as it was.";
    let git_lesson = "Rebase feature branches onto main before review so the diff shows only your change.";
    let dump_lesson = "Take a pg_dump before a destructive migration on a shared database.";
    h.add("a.jsonl", &[
        session("sess-a", "2026-11-02T09:00:00Z", BILLING, "succeeded", &[],
                vec![pytest("/srv/billing-api/tests", false), pytest("/srv/billing-api", true)]),
        json!({"id": "built-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["docker"], "project": BILLING,
               "outcome": "succeeded", "operations": [docker_build(true)]}),
        json!({"type": "lesson", "id": "claim-pull", "recorded_at": "2026-11-02T11:00:00Z", "domains": ["docker"],
               "text": "Pass --pull to docker build so a stale local base image is never reused.", "kind": "do",
               "source": "extractor", "evidence": ["built-1"], "operation_key": "run_shell_command docker"}),
        json!({"id": "db-1", "recorded_at": "2026-11-02T12:00:00Z", "domains": ["postgres"], "project": BILLING,
               "outcome": "succeeded", "lesson": db_lesson}),
        json!({"id": "db-2", "recorded_at": "2026-11-02T12:30:00Z", "domains": ["postgres"], "project": BILLING,
               "outcome": "succeeded", "lesson": dump_lesson}),
        json!({"id": "git-1", "recorded_at": "2026-11-02T13:00:00Z", "domains": ["git"], "project": BILLING,
               "outcome": "succeeded", "lesson": git_lesson}),
    ]);
    let ledger = h.compile();
    let find = |pred: &dyn Fn(&Value) -> bool| -> String {
        let l = ledger["lessons"].as_array().unwrap().iter().find(|l| pred(l));
        l.unwrap_or_else(|| panic!("lesson missing: {ledger:#}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let pytest_fix = find(&|l| l["operation_key"] == "run_shell_command pytest");
    let pull = find(&|l| l["operation_key"] == "run_shell_command docker");
    let db = find(&|l| l["text"] == db_lesson);
    let git = find(&|l| l["text"] == git_lesson);
    let dump = find(&|l| l["text"] == dump_lesson);

    // A failed python + postgres session that names all five, one of them twice, and an id
    // that is no lesson. Its pytest fix and docker build fail for real.
    let mut all: Vec<&str> = vec![&git, &pytest_fix, &db, "L000000000000", &pull, &dump, &db];
    let mut failed = session(
        "many",
        "2026-11-03T09:00:00Z",
        BILLING,
        "failed",
        &[],
        vec![pytest("/srv/billing-api", false), docker_build(false)],
    );
    failed["domains"] = json!(["python", "postgres"]);
    failed["in_play"] = json!(all);
    all.reverse();
    let mut passed = session(
        "many-ok",
        "2026-11-04T09:00:00Z",
        BILLING,
        "succeeded",
        &[],
        vec![pytest("/srv/billing-api", true), docker_build(true)],
    );
    passed["domains"] = json!(["python", "postgres"]);
    passed["in_play"] = json!(all);
    h.add("b.jsonl", &[failed, passed]);
    let ledger = h.compile();
    let events = |id: &str, exp: &str| -> Vec<String> {
        (lesson(&ledger, id)["history"].as_array().unwrap().iter())
            .filter(|e| e["experiences"].as_array().unwrap().iter().any(|x| x == exp))
            .map(|e| e["event"].as_str().unwrap().to_string())
            .collect()
    };
    // The mechanical fix ran and failed: contradicted; ran and worked: confirmed.
    assert_eq!(events(&pytest_fix, "many"), ["contradicted"]);
    assert_eq!(events(&pytest_fix, "many-ok"), ["confirmed"]);
    // The keyed claim: its key failed in a failed session, then ran in a passed one.
    assert_eq!(events(&pull, "many"), ["contradicted"]);
    assert_eq!(events(&pull, "many-ok"), ["confirmed"]);
    // The postgres lessons, one listed twice, count once each time.
    assert_eq!(events(&db, "many"), ["contradicted"]);
    assert_eq!(events(&db, "many-ok"), ["confirmed"]);
    assert_eq!(events(&dump, "many"), ["contradicted"]);
    assert_eq!(events(&dump, "many-ok"), ["confirmed"]);
    // Neither session is in git: the git lesson is used, never credited or blamed.
    assert!(events(&git, "many").is_empty() && events(&git, "many-ok").is_empty());
    let diags = h.diagnostics();
    let unknown: Vec<(&str, &Value)> = (diags_of(&diags, "S005").iter())
        .map(|d| (d["subject"].as_str().unwrap(), &d["evidence"]["ids"]))
        .collect();
    assert_eq!(
        unknown,
        [
            ("many", &json!(["L000000000000"])),
            ("many-ok", &json!(["L000000000000"]))
        ]
    );
}

/// A late-synced record older than a lesson's founder re-founds it under a new id (S004): the
/// user's decisions on it follow it there, an edit and a pin on the edited wording included.
#[test]
fn decisions_follow_a_lesson_that_back_filled_history_re_founded() {
    let h = History::new("lifecycle-refound");
    let tox = "Run tox -e py312 rather than bare pytest so the test env matches CI.";
    let fixture = "Reset the freezegun clock in a fixture; a leaked freeze_time breaks later tests.";
    let rec = |id: &str, at: &str, project: &str, lesson: &str| learned(id, at, "python", project, lesson);
    h.add(
        "agent-a.jsonl",
        &[
            rec("tox-1", "2026-10-01T09:00:00Z", BILLING, tox),
            rec("tox-2", "2026-10-02T09:00:00Z", LEDGER, tox),
            rec("fix-1", "2026-10-01T10:00:00Z", BILLING, fixture),
            rec("fix-2", "2026-10-02T10:00:00Z", LEDGER, fixture),
        ],
    );
    let ledger = h.compile();
    let (tox_id, fixture_id) = (active_id(&ledger, tox), active_id(&ledger, fixture));
    let edited = "Reset the freezegun clock in an autouse fixture; a leaked freeze_time breaks later tests.";
    for args in [
        vec!["lessons", "retire", &tox_id, "--reason", "we moved to nox"],
        vec!["lessons", "edit", &fixture_id, "--text", edited],
    ] {
        let o = h.run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let ledger = h.compile();
    let edited_id = active_id(&ledger, edited);
    let o = h.run(&["lessons", "pin", &edited_id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    h.compile();

    // Another machine's older records arrive.
    h.add(
        "agent-b.jsonl",
        &[
            rec("tox-0", "2026-09-15T09:00:00Z", SEARCH, tox),
            rec("fix-0", "2026-09-15T10:00:00Z", SEARCH, fixture),
        ],
    );
    let ledger = h.compile();
    let diags = h.diagnostics();
    let refounded: Vec<&str> = diags_of(&diags, "S004")
        .iter()
        .map(|d| d["evidence"]["old_id"].as_str().unwrap())
        .collect();
    assert!(
        refounded.contains(&tox_id.as_str()) && refounded.contains(&fixture_id.as_str()),
        "{refounded:?} {tox_id} {fixture_id} {ledger:#}"
    );
    // The edited wording's id, which the lesson blocks showed, changed too, and is named.
    let edited_now_id = active_id(&ledger, edited);
    let s004 = diags_of(&diags, "S004");
    let edit_report = s004
        .iter()
        .find(|d| d["evidence"]["old_id"] == edited_id.as_str())
        .unwrap_or_else(|| panic!("no S004 for the edited id {edited_id}: {s004:#?}"));
    assert_eq!(edit_report["evidence"]["new_id"], edited_now_id.as_str());
    assert!(
        diags_of(&diags, "S007").is_empty(),
        "{:#?}",
        diags_of(&diags, "S007")
    );
    let lessons = ledger["lessons"].as_array().unwrap();
    let tox_now = lessons.iter().find(|l| l["text"] == tox).unwrap();
    assert_ne!(tox_now["id"], tox_id.as_str());
    assert_eq!(
        (tox_now["status"].as_str(), tox_now["reason"].as_str()),
        (Some("retired"), Some("we moved to nox"))
    );
    let edited_now = lessons.iter().find(|l| l["text"] == edited).unwrap();
    assert_eq!(
        (edited_now["status"].as_str(), edited_now["pinned"].as_bool()),
        (Some("active"), Some(true))
    );
    let skill = std::fs::read_to_string(h.s.path("out/python/SKILL.md")).unwrap();
    assert!(!skill.contains("tox -e py312"), "{skill}");
    assert!(skill.contains("autouse fixture"), "{skill}");

    // A decision whose lesson left the input altogether is reported, not silently dropped.
    std::fs::remove_file(h.s.path("records/agent-a.jsonl")).unwrap();
    std::fs::remove_file(h.s.path("records/agent-b.jsonl")).unwrap();
    h.add(
        "agent-c.jsonl",
        &[rec(
            "other-1",
            "2026-10-05T09:00:00Z",
            BILLING,
            "Pin pip-tools in CI.",
        )],
    );
    h.compile();
    let diags = h.diagnostics();
    let orphaned: Vec<&str> = diags_of(&diags, "S007")
        .iter()
        .map(|d| d["subject"].as_str().unwrap())
        .collect();
    assert!(orphaned.contains(&tox_id.as_str()), "{orphaned:?}");
}

/// The agents that used a lesson named the id it had then. When late-synced older records
/// re-found it (S004), those `in_play` references still credit it: it keeps its confirmations
/// and the global scope a second project's use gave it, and no S005 calls the id unknown.
#[test]
fn in_play_follows_a_lesson_that_back_filled_history_re_founded() {
    let h = History::new("lifecycle-refound-in-play");
    let ruff = "Run ruff check --fix before committing so CI's lint step stays green.";
    let rec = |id: &str, at: &str, project: &str| learned(id, at, "python", project, ruff);
    h.add(
        "agent-a.jsonl",
        &[
            rec("ruff-1", "2026-10-01T09:00:00Z", BILLING),
            rec("ruff-2", "2026-10-02T09:00:00Z", BILLING),
        ],
    );
    let ledger = h.compile();
    let found = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"] == ruff)
        .unwrap();
    let old_id = found["id"].as_str().unwrap().to_string();
    assert_eq!(found["scope"], format!("project:{}", digest(BILLING)));
    // Another project's sessions use it and pass.
    h.add(
        "agent-b.jsonl",
        &[
            used_in_ledger("use-1", "2026-10-03T09:00:00Z", &old_id),
            used_in_ledger("use-2", "2026-10-04T09:00:00Z", &old_id),
        ],
    );
    let before = lesson(&h.compile(), &old_id).clone();
    assert_eq!(before["scope"], "global", "{before:#}");

    // An older record from a third machine arrives.
    h.add("agent-c.jsonl", &[rec("ruff-0", "2026-09-20T09:00:00Z", BILLING)]);
    let ledger = h.compile();
    let diags = h.diagnostics();
    let s004 = diags_of(&diags, "S004");
    assert_eq!(s004.len(), 1, "{diags:#}");
    assert_eq!(s004[0]["evidence"]["old_id"], old_id.as_str());
    let new_id = s004[0]["evidence"]["new_id"].as_str().unwrap();
    assert!(
        diags_of(&diags, "S005").is_empty(),
        "{:#?}",
        diags_of(&diags, "S005")
    );
    let now = lesson(&ledger, new_id);
    assert_eq!(now["scope"], "global", "{now:#}");
    assert_eq!(now["status"], "active");
    let credited: Vec<&str> = now["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "confirmed")
        .flat_map(|e| {
            e["experiences"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
        })
        .collect();
    assert_eq!(credited, ["use-1", "use-2"], "{now:#}");
    let skill = std::fs::read_to_string(h.s.path("out/python/SKILL.md")).unwrap();
    assert!(skill.contains("ruff check --fix"), "{skill}");
    // The old id, asked about, points to the new one.
    let o = h.run(&["lessons", "history", &old_id]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("re-founded it as {new_id}")),
        "{}",
        stderr(&o)
    );
}

/// Restore undoes a retire: the lesson newer records re-learned meanwhile gives way to the
/// restored one, so the rule and the block hold it once. A decision that cannot change its
/// lesson is refused when the last compile shows it, and reported (S008) when the journal
/// holds one anyway; a superseded lesson never revives.
/// The same records give the same ledger whatever their files are called: a back-filled
/// session in a file that sorts first (per-session files are often named by uuid) still
/// re-founds the lesson, and the `in_play` of the id agents were shown still credits it.
#[test]
fn a_back_fill_is_followed_whatever_its_file_is_called() {
    let ruff = "Run ruff check --fix before committing so CI's lint step stays green.";
    let compile_with_back_fill_in = |name: &str, file: &str| {
        let h = History::new(name);
        let rec = |id: &str, at: &str| learned(id, at, "python", BILLING, ruff);
        h.add("agent-b.jsonl", &[rec("ruff-1", "2026-10-01T09:00:00Z")]);
        let old_id = active_id(&h.compile(), ruff);
        h.add(
            "agent-c.jsonl",
            &[used_in_ledger("use-1", "2026-10-03T09:00:00Z", &old_id)],
        );
        h.add(file, &[rec("ruff-0", "2026-09-20T09:00:00Z")]);
        let ledger = h.compile();
        let diags = h.diagnostics();
        assert!(diags_of(&diags, "S005").is_empty(), "{file}: {diags:#}");
        let s004 = diags_of(&diags, "S004");
        assert_eq!(s004.len(), 1, "{file}: {diags:#}");
        assert_eq!(s004[0]["evidence"]["old_id"], old_id.as_str());
        let new_id = active_id(&ledger, ruff);
        assert_eq!(s004[0]["evidence"]["new_id"], new_id.as_str());
        let confirmed = lesson(&ledger, &new_id)["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "confirmed")
            .count();
        assert_eq!(confirmed, 1, "{file}: {ledger:#}");
        std::fs::read(h.s.path("out/ledger.json")).unwrap()
    };
    let sorts_last = compile_with_back_fill_in("lifecycle-back-fill-last", "zz-synced.jsonl");
    let sorts_first = compile_with_back_fill_in("lifecycle-back-fill-first", "0f3a9c.jsonl");
    assert!(sorts_first == sorts_last, "the ledger depends on a file name");
}

/// Blessing an older experience that failed makes it admissible, and as the earliest member
/// it founds the lesson under a new id (DESIGN §6). A pin and the `in_play` of agents shown
/// the old id follow the lesson, and S004 names both ids.
#[test]
fn a_pin_and_in_play_follow_a_lesson_that_a_bless_re_founded() {
    let h = History::new("lifecycle-bless-refound");
    let text = "Run bump-pydantic over the codebase before switching to pydantic v2.";
    let mut failed = learned("pyd-0", "2026-03-01T10:00:00Z", "python", BILLING, text);
    failed["outcome"] = json!("failed");
    h.add(
        "a.jsonl",
        &[
            failed,
            learned("pyd-1", "2026-03-05T10:00:00Z", "python", SEARCH, text),
            learned("pyd-2", "2026-03-06T10:00:00Z", "python", LEDGER, text),
        ],
    );
    let old_id = active_id(&h.compile(), text);
    assert_eq!(lesson(&h.compile(), &old_id)["founder"], "pyd-1");
    let o = h.run(&["lessons", "pin", &old_id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    h.add(
        "b.jsonl",
        &[used_in_ledger("use-1", "2026-03-10T09:00:00Z", &old_id)],
    );
    let records = h.s.path("records");
    let o = h.run(&["bless", "pyd-0", records.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = h.compile();
    let new_id = active_id(&ledger, text);
    assert_ne!(new_id, old_id);
    let now = lesson(&ledger, &new_id);
    assert_eq!(now["founder"], "pyd-0", "{now:#}");
    assert_eq!(now["pinned"], true, "the pin followed: {now:#}");
    let events: Vec<&str> = (now["history"].as_array().unwrap().iter())
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert!(events.contains(&"confirmed"), "{events:?}");
    let diags = h.diagnostics();
    for code in ["S005", "S007"] {
        assert!(diags_of(&diags, code).is_empty(), "{code}: {diags:#}");
    }
    let s004 = diags_of(&diags, "S004");
    assert_eq!(s004.len(), 1, "{diags:#}");
    assert_eq!(s004[0]["evidence"]["old_id"], old_id.as_str());
    assert_eq!(s004[0]["evidence"]["new_id"], new_id.as_str());
}

#[test]
fn restore_reclaims_a_re_learned_lesson_and_decisions_that_change_nothing_are_reported() {
    let h = History::new("lifecycle-restore");
    let lock = "Run terraform init -upgrade after changing provider version constraints.";
    let rec = |id: &str, at: &str, project: &str| learned(id, at, "terraform", project, lock);
    h.add(
        "infra-a.jsonl",
        &[
            rec("tf-1", "2026-10-01T09:00:00Z", BILLING),
            rec("tf-2", "2026-10-02T09:00:00Z", LEDGER),
        ],
    );
    let ledger = h.compile();
    let first = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    let run = |args: &[&str]| h.run(args);
    assert_eq!(run(&["lessons", "retire", &first]).status.code(), Some(0));
    h.compile();
    // Newer sessions learn the same thing again: a new lesson, after the retired one.
    h.add(
        "infra-b.jsonl",
        &[
            rec("tf-3", "2026-10-10T09:00:00Z", BILLING),
            rec("tf-4", "2026-10-11T09:00:00Z", LEDGER),
        ],
    );
    let ledger = h.compile();
    let again = active_id(&ledger, lock);
    assert_ne!(again, first);

    // Undo the retire, and pin it twice before the next compile.
    for args in [
        ["lessons", "restore", &first],
        ["lessons", "pin", &first],
        ["lessons", "pin", &first],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let ledger = h.compile();
    let restored = lesson(&ledger, &first);
    assert_eq!(
        (restored["status"].as_str(), restored["pinned"].as_bool()),
        (Some("active"), Some(true))
    );
    let pins = restored["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "pinned")
        .count();
    assert_eq!(pins, 1, "{restored:#}");
    let relearned = lesson(&ledger, &again);
    assert_eq!(relearned["status"], "superseded", "{relearned:#}");
    assert_eq!(relearned["superseded_by"], first.as_str());
    // The restored lesson takes over the evidence the copy gathered while it was retired, so
    // its reinforcement counts every session that taught it, and those sessions' candidates
    // are in the rule, not held back behind the superseded copy. The copy keeps its own.
    assert_eq!(
        restored["evidence"],
        json!(["tf-1", "tf-2", "tf-3", "tf-4"]),
        "{restored:#}"
    );
    assert_eq!(restored["reinforcement"], 4);
    assert_eq!(relearned["evidence"], json!(["tf-3", "tf-4"]));
    let took_over = (restored["history"].as_array().unwrap().iter())
        .find(|e| e["event"] == "joined" && e["experiences"] == json!(["tf-3", "tf-4"]))
        .unwrap_or_else(|| panic!("{restored:#}"));
    assert!(
        took_over["detail"].as_str().unwrap().contains(&again),
        "{took_over:#}"
    );
    let tf3 = trace_json("tf-3", &h.s.path("records"), &h.s.path("out"));
    assert_eq!(tf3["candidates"][0]["fate"], "rule", "{tf3:#}");
    let skill = std::fs::read_to_string(h.s.path("out/terraform/SKILL.md")).unwrap();
    assert_eq!(skill.matches("terraform init -upgrade").count(), 1, "{skill}");
    let blocks: Vec<(String, String)> = std::fs::read_dir(h.s.path("out/lessons"))
        .unwrap()
        .flat_map(|e| h.block(e.unwrap().file_name().to_str().unwrap()))
        .collect();
    assert_eq!(blocks, [(lock.to_string(), first.clone())]);
    let diags = h.diagnostics();
    let message = only_message(&diags, "S008");
    assert!(message.contains("pinned already"), "{message}");

    // The superseded lesson takes no decision: the command says why and records nothing.
    let o = run(&["lessons", "restore", &again]);
    assert_eq!(o.status.code(), Some(2));
    // It names the lesson that superseded it, as the one to use.
    assert!(
        stderr(&o).contains("never revives") && stderr(&o).ends_with(&format!("; use `{first}`\n")),
        "{}",
        stderr(&o)
    );
    h.compile();
    assert_eq!(
        diags_of(&h.diagnostics(), "S008").len(),
        1,
        "the refused restore was not recorded"
    );
}

/// DESIGN §6 supersede: a global fix that fails for a session which then makes another form
/// work is superseded by the lesson that session teaches, although that lesson starts out in
/// one project, so the rule file and the lesson block stop disagreeing.
#[test]
fn a_fix_that_stops_working_is_superseded_by_the_form_that_replaced_it() {
    fix_that_stops_working("lifecycle-broken-fix", None);
}

/// The same after the user reworded the fix: the new wording holds the fix's place, so the
/// form that replaced it supersedes the wording (before, both stayed active rules on one key).
#[test]
fn an_edited_fix_that_stops_working_is_superseded_by_the_form_that_replaced_it() {
    fix_that_stops_working(
        "lifecycle-broken-edited-fix",
        Some("Install packages with pip install --user requests on the shared build hosts."),
    );
}

/// Two projects learn `pip install --user`; a later session in a virtualenv sees it refused
/// and learns `python -m pip`. `edit`: the wording the user gives the fix in between.
fn fix_that_stops_working(name: &str, edit: Option<&str>) {
    let h = History::new(name);
    let pip = |cmd: &str, ok: bool| {
        let mut op =
            json!({"tool": "run_shell_command", "args": {"command": cmd, "cwd": "/srv/app"}, "status": "ok"});
        if !ok {
            op["status"] = "error".into();
            op["error"] =
                "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied".into();
        }
        op
    };
    let tests_pass = json!({"tool": "run_shell_command", "args": {"command": "pytest -q", "cwd": "/srv/app"},
        "status": "ok", "check": {"label": "tests", "target": "app", "passed": true}});
    let user_fix = |id: &str, at: &str, project: &str| {
        session(
            id,
            at,
            project,
            "succeeded",
            &[],
            vec![
                pip("pip install requests", false),
                pip("pip install --user requests", true),
                tests_pass.clone(),
            ],
        )
    };
    h.add(
        "a.jsonl",
        &[
            user_fix("pip-1", "2026-03-10T09:00:00Z", BILLING),
            user_fix("pip-2", "2026-03-11T09:00:00Z", LEDGER),
        ],
    );
    let ledger = h.compile();
    let old = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rule"] == true)
        .expect("the --user fix is a rule");
    let mut old_id = old["id"].as_str().unwrap().to_string();
    assert_eq!(old["scope"], "global");
    assert!(
        std::fs::read_to_string(h.s.path("out/python/SKILL.md"))
            .unwrap()
            .contains("--user")
    );
    if let Some(text) = edit {
        let o = h.run(&["lessons", "edit", &old_id, "--text", text]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        old_id = active_id(&h.compile(), text);
    }

    // In a virtualenv, --user is refused; python -m pip works.
    let mut venv_fail = pip("pip install --user requests", false);
    venv_fail["error"] =
        "ERROR: Can not perform a '--user' install. User site-packages are not visible in this virtualenv."
            .into();
    let learned_there = session(
        "pip-3",
        "2026-03-12T09:00:00Z",
        BILLING,
        "succeeded",
        &[&old_id],
        vec![
            venv_fail.clone(),
            pip("python -m pip install requests", true),
            tests_pass.clone(),
        ],
    );
    let python_m_pip = |id: &str, at: &str, project: &str| {
        let ops = vec![
            pip("pip install requests", false),
            pip("python -m pip install requests", true),
            tests_pass.clone(),
        ];
        session(id, at, project, "succeeded", &[], ops)
    };
    // After an edit, the fix fails in one session and the other form is learned in the next
    // two (one per project, so it is global like the fix), which never run the old fix: only
    // the (scope, key) slot links the two.
    let learned_next = [
        session(
            "pip-3",
            "2026-03-12T09:00:00Z",
            BILLING,
            "abandoned",
            &[&old_id],
            vec![venv_fail],
        ),
        python_m_pip("pip-4", "2026-03-12T11:00:00Z", BILLING),
        python_m_pip("pip-5", "2026-03-12T12:00:00Z", LEDGER),
    ];
    match edit {
        None => h.add("b.jsonl", &[learned_there]),
        Some(_) => h.add("b.jsonl", &learned_next),
    }
    let ledger = h.compile();
    let old = lesson(&ledger, &old_id);
    let new = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["text"].as_str().unwrap().contains("python -m pip"))
        .unwrap();
    assert_eq!(
        (
            old["status"].as_str(),
            old["superseded_by"].as_str(),
            new["supersedes"].as_str()
        ),
        (Some("superseded"), new["id"].as_str(), Some(old_id.as_str()))
    );
    assert_eq!(new["status"], "active");
    let rules = std::fs::read_to_string(h.s.path("out/python/SKILL.md")).unwrap_or_default();
    assert!(
        !rules.contains("--user"),
        "the broken fix left the rule file: {rules}"
    );
    let block = h.block(&format!("project-{}.md", digest(BILLING)));
    assert!(block.iter().all(|(_, id)| *id != old_id), "{block:?}");
}

/// The same fix learned in three checkouts, each call run in its own directory, is one lesson
/// and a global rule (it was three project lessons that never reached a rule), and a session in
/// a fourth checkout that runs the fix there confirms it.
#[test]
fn one_fix_learned_in_three_checkouts_is_one_global_rule_confirmed_in_a_fourth() {
    let h = History::new("lifecycle-fix-in-checkouts");
    let call = |cmd: &str, cwd: &str, ok: bool| -> Value {
        if ok {
            json!({"tool": "run_shell_command", "args": {"command": cmd, "cwd": cwd}, "status": "ok",
                   "check": {"label": "tests", "target": cwd, "passed": true}})
        } else {
            json!({"tool": "run_shell_command", "args": {"command": cmd, "cwd": cwd}, "status": "error",
                   "error": "ModuleNotFoundError: No module named 'app'"})
        }
    };
    let fixed_in = |id: &str, at: &str, project: &str, cwd: &str| {
        let ops = vec![
            call("pytest -q", cwd, false),
            call("python -m pytest -q", cwd, true),
        ];
        session(id, at, project, "succeeded", &[], ops)
    };
    h.add(
        "a.jsonl",
        &[
            fixed_in("fix-1", "2026-05-04T09:00:00Z", BILLING, "/srv/billing-api"),
            fixed_in("fix-2", "2026-05-04T11:00:00Z", LEDGER, "/home/dev/ledger"),
            fixed_in("fix-3", "2026-05-05T09:00:00Z", SEARCH, "/work/search-svc"),
        ],
    );
    let ledger = h.compile();
    let fixes: Vec<&Value> = (ledger["lessons"].as_array().unwrap().iter())
        .filter(|l| l["text"].as_str().unwrap().contains("python -m pytest"))
        .collect();
    assert_eq!(fixes.len(), 1, "{fixes:#?}");
    let fix = fixes[0];
    assert_eq!(
        (&fix["status"], &fix["scope"], &fix["rule"]),
        (&json!("active"), &json!("global"), &json!(true))
    );
    assert!(!fix["text"].as_str().unwrap().contains("cwd"), "{}", fix["text"]);
    let id = fix["id"].as_str().unwrap().to_string();
    let before = fix["confidence"].as_f64().unwrap();

    h.add(
        "b.jsonl",
        &[session(
            "use-1",
            "2026-05-06T09:00:00Z",
            "git@github.com:acme/admin-ui.git",
            "succeeded",
            &[&id],
            vec![call("python -m pytest -q", "/srv/admin-ui", true)],
        )],
    );
    let ledger = h.compile();
    let fix = lesson(&ledger, &id);
    let last = fix["history"].as_array().unwrap().last().unwrap();
    assert_eq!(last["event"], "confirmed", "{fix:#}");
    assert!(fix["confidence"].as_f64().unwrap() > before, "{fix:#}");
}

/// Another agent's sync writes a different record under an id a lesson's founder had, in a
/// file that sorts first: the old record is now the duplicate L004 drops, and the lesson is
/// founded anew by its next member under a new id. The pin and the confirmations follow it
/// (S004 says its founder is gone); before, the old id simply vanished: the pin was orphaned
/// (S007), `in_play` named nothing (S005), and the confidence fell back to 0.500.
#[test]
fn a_lesson_whose_founder_record_another_record_now_shadows_keeps_its_pin_and_confidence() {
    let h = History::new("lifecycle-founder-shadowed");
    let text = "Run pytest from the repository root so conftest.py fixtures are collected.";
    h.add(
        "records.jsonl",
        &[
            learned("r1", "2026-01-02T10:00:00Z", "python", BILLING, text),
            learned("r2", "2026-01-03T10:00:00Z", "python", LEDGER, text),
            learned("r3", "2026-01-04T10:00:00Z", "python", SEARCH, text),
        ],
    );
    let old_id = active_id(&h.compile(), text);
    let o = h.run(&["lessons", "pin", &old_id]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    h.add(
        "later.jsonl",
        &[used_in_ledger("r4", "2026-01-05T10:00:00Z", &old_id)],
    );
    let before = lesson(&h.compile(), &old_id).clone();
    assert_eq!(
        (before["pinned"].as_bool(), before["confidence"].as_f64()),
        (Some(true), Some(0.65))
    );

    let mut sync = session("r1", "2026-01-06T10:00:00Z", BILLING, "failed", &[], vec![]);
    sync["task"] = json!("re-sync the fixtures");
    h.add("0-sync.jsonl", &[sync]);
    let ledger = h.compile();
    let now = active_id(&ledger, text);
    assert_ne!(now, old_id);
    let l = lesson(&ledger, &now);
    assert_eq!(
        (l["pinned"].as_bool(), l["confidence"].as_f64()),
        (Some(true), Some(0.65)),
        "{l:#}"
    );
    let diags = h.diagnostics();
    assert!(only_message(&diags, "S004").contains("its founder r1 is no longer in the input"));
    assert!(
        diags_of(&diags, "S007").is_empty() && diags_of(&diags, "S005").is_empty(),
        "{diags:#}"
    );
    assert_eq!(diags_of(&diags, "L004").len(), 1);
}

/// A Codex CLI `shell` call: its command an argv array wrapped in `bash -lc`, its directory
/// `workdir`.
fn codex_pytest(workdir: &str, ok: bool) -> Value {
    let mut op = json!({"tool": "shell", "args": {"command": ["bash", "-lc", "pytest -q tests/unit"], "workdir": workdir,
                        "timeout_ms": 120000}, "status": "ok", "check": {"label": "tests", "passed": true}});
    if !ok {
        op["status"] = json!("error");
        op["error"] = json!("ERROR: file or directory not found: tests/unit");
        op["check"]["passed"] = json!(false);
    }
    op
}

/// Codex sessions learn a mechanical lesson from a `bash -lc` argv as from a command string,
/// and a session that has it in play and runs the working form confirms it.
#[test]
fn a_codex_argv_fix_is_learned_and_credited_like_a_command_string() {
    let h = History::new("lifecycle-codex");
    h.add(
        "a.jsonl",
        &[session(
            "codex-a",
            "2026-11-21T10:00:00Z",
            LEDGER,
            "succeeded",
            &[],
            vec![
                codex_pytest("/home/dev/ledger/services", false),
                codex_pytest("/home/dev/ledger", true),
            ],
        )],
    );
    h.compile();
    let lines = h.block(&format!("project-{}.md", digest(LEDGER)));
    let (text, id) = lines
        .iter()
        .find(|(t, _)| t.starts_with("shell pytest:"))
        .unwrap_or_else(|| panic!("a mechanical lesson keyed `shell pytest`: {lines:?}"))
        .clone();
    assert_eq!(
        text,
        "shell pytest: run `pytest -q tests/unit` (workdir=/home/dev/ledger) instead of `pytest -q tests/unit` (workdir=/home/dev/ledger/services)"
    );
    h.add(
        "b.jsonl",
        &[session(
            "codex-b",
            "2026-11-22T10:00:00Z",
            LEDGER,
            "succeeded",
            &[&id],
            vec![codex_pytest("/home/dev/ledger", true)],
        )],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(l["operation_key"], "shell pytest");
    assert_eq!(
        l["confidence"], 0.65,
        "0.500 + 0.150: in play and its working form ran"
    );
    assert_eq!(ids(&l["evidence"]), ["codex-a", "codex-b"]);
    assert_eq!(l["rule"], true);
}

/// `lessons list` takes a domain as records spell it and a scope in every form the outputs
/// show it; `bless` and `trace` name the input they searched for an id that is not there.
#[test]
fn lessons_list_filters_as_records_and_outputs_spell_them_and_bless_names_its_input() {
    let h = History::new("lifecycle-list-forms");
    const API: &str = "git@github.com:acme/payments-gateway.git";
    const SHOP: &str = "git@github.com:acme/storefront.git";
    h.add(
        "a.jsonl",
        &[
            json!({"id": "go-1", "recorded_at": "2026-11-02T10:00:00Z", "domains": ["golang"], "project": API,
                   "outcome": "succeeded", "gotchas": ["`go test ./...` skips packages under testdata/"]}),
            json!({"id": "dj-1", "recorded_at": "2026-11-03T10:00:00Z", "domains": ["Django"], "project": SHOP,
                   "outcome": "succeeded",
                   "gotchas": ["makemigrations --check exits 1 when a model change has no migration"]}),
            json!({"id": "gha-1", "recorded_at": "2026-11-04T10:00:00Z", "domains": ["GitHub Actions"], "project": API,
                   "outcome": "succeeded",
                   "gotchas": ["A workflow's GITHUB_TOKEN cannot trigger other workflows"]}),
        ],
    );
    h.compile();
    // The human list starts every text in one column, however long the domain.
    let table = stdout(&h.run(&["lessons", "list"]));
    let columns: Vec<usize> = (table.lines())
        .filter_map(|line| {
            ["`go test", "makemigrations", "A workflow"]
                .iter()
                .find_map(|t| line.find(t))
        })
        .collect();
    assert_eq!(columns.len(), 3, "{table}");
    assert!(columns.iter().all(|&c| c == columns[0]), "{table}");
    let listed = |args: &[&str]| -> Vec<(String, String, String)> {
        let mut all = vec!["lessons", "list", "--format", "json"];
        all.extend(args);
        let o = h.run(&all);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        (json(&o)["lessons"].as_array().unwrap().iter())
            .map(|l| {
                let s = |k: &str| l[k].as_str().unwrap().to_string();
                (s("domain"), s("scope"), s("text"))
            })
            .collect()
    };
    let go = listed(&["--domain", "go"]);
    assert_eq!(go.len(), 1, "{go:?}");
    assert_eq!(go[0].1, format!("project:{}", digest(API)));
    for asked in ["golang", "GoLang", " go "] {
        assert_eq!(listed(&["--domain", asked]), go, "--domain {asked:?}");
    }
    let django = listed(&["--domain", "django"]);
    assert_eq!(django.len(), 1, "{django:?}");
    assert_eq!(listed(&["--domain", "Django"]), django);
    let shop = digest(SHOP);
    for asked in [
        format!("project:{shop}"),
        format!("project-{shop}"),
        shop.clone(),
        shop.to_uppercase(),
    ] {
        assert_eq!(listed(&["--scope", &asked]), django, "--scope {asked}");
    }
    assert_eq!(
        stdout(&h.run(&["lessons", "list", "--scope", "global"])),
        "no lessons match\n"
    );
    // What cannot be a scope is a usage error, not an empty list.
    for bad in ["storefront", "project:storefront", &shop[..8], "projects/abc"] {
        let o = h.run(&["lessons", "list", "--scope", bad]);
        assert_eq!(o.status.code(), Some(2), "--scope {bad}");
        assert!(
            stderr(&o).contains("is not a scope") && stderr(&o).contains("project-<digest>"),
            "{}",
            stderr(&o)
        );
    }

    // `bless` without INPUT reads the sample corpus, and says so when the id is not there.
    let o = h.run(&["bless", "dj-1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no experience with id `dj-1` in ./samples")
            && err.contains("no INPUT was given")
            && err.contains("skillc bless ID INPUT"),
        "{err}"
    );
    let records = h.s.path("records");
    let records = records.to_str().unwrap();
    let o = h.run(&["bless", "dj-2", records]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("no experience with id `dj-2` in {records}")),
        "{}",
        stderr(&o)
    );
    let o = h.run(&["trace", "dj-2", records]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("no experience or claim with id `dj-2` in {records}")),
        "{}",
        stderr(&o)
    );
    let o = h.run(&["bless", "dj-1", records]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Two projects' sessions learn "run pytest from the repository root" in one compile; its id.
fn pytest_root_rule(h: &History) -> String {
    let rule = "Run pytest from the repository root so the root conftest.py is loaded.";
    let learned = |id: &str, at: &str, project: &str| {
        let mut r = session(id, at, project, "succeeded", &[], vec![pytest("/srv/app", true)]);
        r["lesson"] = json!(rule);
        r
    };
    h.add(
        "a.jsonl",
        &[
            learned("sess-a", "2026-11-02T09:00:00Z", BILLING),
            learned("sess-b", "2026-11-02T11:00:00Z", LEDGER),
        ],
    );
    h.compile()["lessons"][0]["id"].as_str().unwrap().to_string()
}

/// Agents see a lesson's old id until the compile after an edit writes the new one: an
/// experience that names the old id after the edit credits the new wording, once even when it
/// names both, and `trace` says where the credit went.
#[test]
fn an_in_play_id_an_edit_replaced_credits_the_new_wording() {
    let h = History::new("lifecycle-edit-in-play");
    let old = pytest_root_rule(&h);
    let edited = "Run pytest from the repository root, where conftest.py registers the fixtures.";
    let o = h.run(&["lessons", "edit", &old, "--text", edited]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let new = h.compile()["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["status"] == "active")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();

    // sess-c still had the old id in front of it; sess-d lists both.
    h.add(
        "b.jsonl",
        &[
            session(
                "sess-c",
                "2026-11-04T09:00:00Z",
                SEARCH,
                "succeeded",
                &[&old],
                vec![pytest("/srv/search", true)],
            ),
            session(
                "sess-d",
                "2026-11-05T09:00:00Z",
                SEARCH,
                "succeeded",
                &[&old, &new],
                vec![pytest("/srv/search", true)],
            ),
        ],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &new);
    assert_eq!(l["text"], edited);
    assert_eq!(l["confidence"], json!(0.8), "0.500 + 2 × 0.150: {l:#}");
    // A decision on the old id lands on the edited wording, and the command says so.
    let o = h.run(&["lessons", "pin", &old]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains(&format!("pin {old} ({edited})"))
            && said.contains(&format!("{old} was edited, so it applies to {new}")),
        "{said}"
    );
    assert_eq!(ids(&l["evidence"]), ["sess-a", "sess-b", "sess-c", "sess-d"]);
    assert_eq!(lesson(&ledger, &old)["status"], "superseded");
    assert!(
        diags_of(&h.diagnostics(), "S005").is_empty(),
        "the old id is known"
    );

    let records = h.s.path("records");
    let o = h.run(&["trace", "sess-c", records.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = &json(&o)["attribution"][0];
    assert_eq!(
        (&a["lesson"], &a["now"], &a["effect"]),
        (&json!(old), &json!(new), &json!("confirmed")),
        "{a:#}"
    );
}

/// A pin keeps an active lesson first in its block and out of decay; a retired lesson is in
/// no block and does not decay, so pinning one changes nothing and S008 says to restore it.
#[test]
fn pinning_a_retired_lesson_changes_nothing_and_says_so() {
    let h = History::new("lifecycle-pin-retired");
    let id = pytest_root_rule(&h);
    for args in [["lessons", "retire", &id], ["lessons", "pin", &id]] {
        let o = h.run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    assert_eq!(
        (l["status"].as_str(), l["pinned"].as_bool()),
        (Some("retired"), Some(false)),
        "{l:#}"
    );
    assert!(
        !l["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "pinned"),
        "{l:#}"
    );
    let diags = h.diagnostics();
    let message = only_message(&diags, "S008");
    assert!(message.contains("retired; restore it first"), "{message}");
}

/// A bless that cannot change anything says so: its experience is not in the compile's input
/// (S007), or it was blessed already (S008); the one that counts still blesses.
#[test]
fn a_bless_that_changes_nothing_is_reported() {
    let h = History::new("lifecycle-bless-nothing");
    pytest_root_rule(&h);
    let records = h.s.path("records");
    let elsewhere = h.s.path("elsewhere.jsonl");
    let mut other = session("sess-z", "2026-11-03T09:00:00Z", SEARCH, "succeeded", &[], vec![]);
    other["lesson"] = json!("Run pytest with -p no:cacheprovider on read-only checkouts.");
    std::fs::write(&elsewhere, format!("{other}\n")).unwrap();
    for (id, input) in [("sess-a", &records), ("sess-a", &records), ("sess-z", &elsewhere)] {
        let o = h.run(&["bless", id, input.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let ledger = h.compile();
    assert_eq!(ledger["lessons"][0]["blessed"], true, "{ledger:#}");
    let diags = h.diagnostics();
    let message = only_message(&diags, "S007");
    assert!(
        message.contains("bless of sess-z (entry 3) names no experience"),
        "{message}"
    );
    let message = only_message(&diags, "S008");
    assert!(
        message.ends_with("bless of sess-a (entry 2) had no effect: it was blessed already"),
        "{message}"
    );
}

/// An `in_play` id that names a lesson admitted only after the record was written is told
/// apart from one that never named a lesson (S005): "no lesson" would send the user looking
/// for a typo in an id the ledger shows.
#[test]
fn an_id_in_play_before_its_lesson_was_admitted_is_named_as_such() {
    let h = History::new("lifecycle-in-play-early");
    let text = "Run alembic upgrade head in the release job, not from the app's startup hook.";
    h.add(
        "agent-a.jsonl",
        &[learned("mig-1", "2026-10-03T09:00:00Z", "python", LEDGER, text)],
    );
    let id = active_id(&h.compile(), text);
    // A session recorded two days before the lesson was admitted names it, and a typo.
    h.add(
        "agent-b.jsonl",
        &[session(
            "early-1",
            "2026-10-01T09:00:00Z",
            SEARCH,
            "succeeded",
            &[&id, "L000000000000"],
            vec![pytest("/srv/search", true)],
        )],
    );
    h.compile();
    let diags = h.diagnostics();
    let s005 = diags_of(&diags, "S005");
    assert_eq!(s005.len(), 1, "{diags:#}");
    let (d, ev) = (s005[0], &s005[0]["evidence"]);
    assert_eq!(d["subject"], "early-1");
    assert_eq!(ev["ids"], json!([id, "L000000000000"]));
    assert_eq!(ev["admitted_later"], json!([id]));
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("were no lesson when it was recorded"),
        "{message}"
    );
    assert!(
        message.contains(&format!("admitted only later: {id}")),
        "{message}"
    );
}

/// A nightly compile whose input lost a file of records (expired, or a sync that did not
/// finish) says which lessons of the last compile left with it, a rule above all, instead of
/// only counting the skill files it removed; a lesson a back-filled record re-founded is named
/// with the id it goes on under. A re-run on the same input has nothing to say.
#[test]
fn a_lesson_whose_records_left_the_input_is_named_in_the_summary() {
    let h = History::new("lifecycle-evidence-gone");
    let cargo_fix = |id: &str, at: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["rust"], "project": BILLING, "outcome": "succeeded",
               "operations": [
                   {"tool": "Bash", "args": {"command": "cargo build --release"}, "status": "error",
                    "error": "error: package `tokio v1.38.0` cannot be built because it requires rustc 1.70 or newer"},
                   {"tool": "Bash", "args": {"command": "cargo build --release --locked"}, "status": "ok"},
                   {"tool": "Bash", "args": {"command": "cargo test --locked"}, "status": "ok",
                    "check": {"label": "tests", "passed": true}}]})
    };
    let text = "Run pytest from the repository root so conftest.py fixtures are collected.";
    h.add(
        "rust.jsonl",
        &[
            cargo_fix("rs-1", "2026-03-02T10:00:00Z"),
            cargo_fix("rs-2", "2026-03-03T10:00:00Z"),
        ],
    );
    h.add(
        "python.jsonl",
        &[
            learned("py-1", "2026-03-02T10:00:00Z", "python", BILLING, text),
            learned("py-2", "2026-03-03T10:00:00Z", "python", BILLING, text),
        ],
    );
    let ledger = h.compile();
    let rust = active_or_not(&ledger, "cargo build --release --locked")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let pytest = active_id(&ledger, text);
    let summary = |h: &History| {
        let records = h.s.path("records");
        let o = h.run(&["compile", records.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)
    };
    let text_summary = |h: &History| {
        let records = h.s.path("records");
        stdout(&h.run(&["compile", records.to_str().unwrap()]))
    };
    assert_eq!(summary(&h)["gone_lessons"], json!([]), "nothing left");

    std::fs::remove_file(h.s.path("records/rust.jsonl")).unwrap();
    h.add(
        "python-late.jsonl",
        &[learned("py-0", "2026-03-01T10:00:00Z", "python", BILLING, text)],
    );
    let s = summary(&h);
    let gone = s["gone_lessons"].as_array().unwrap();
    assert_eq!(gone.len(), 2, "{s:#}");
    let lost = gone.iter().find(|g| g["id"] == rust.as_str()).unwrap();
    assert_eq!(
        (lost["rule"].as_bool(), lost["domain"].as_str(), &lost["now"]),
        (Some(true), Some("rust"), &Value::Null)
    );
    assert_eq!(lost["evidence"], json!(["rs-1", "rs-2"]));
    let moved = gone.iter().find(|g| g["id"] == pytest.as_str()).unwrap();
    let now = active_id(&read_json(&h.s.path("out/ledger.json")), text);
    assert_eq!(moved["now"], now.as_str());

    // The human summary says it too (a lesson of one record is no rule), and the next night on
    // the same input is quiet.
    std::fs::write(
        h.s.path("records/rust.jsonl"),
        format!("{}\n", cargo_fix("rs-1", "2026-03-02T10:00:00Z")),
    )
    .unwrap();
    let t = text_summary(&h);
    assert!(!t.contains("lost"), "{t}");
    std::fs::remove_file(h.s.path("records/rust.jsonl")).unwrap();
    let t = text_summary(&h);
    assert!(
        t.contains("lost 1 lesson of the last compile: no record in the input supports it any more")
            && t.contains(&format!("{rust} (rust do, active)")),
        "{t}"
    );
    let t = text_summary(&h);
    assert!(!t.contains("lost") && !t.contains("new id"), "{t}");
}

/// The confidence after the last step of a history entry: its own, or what the idle active
/// days after it left.
fn after(h: &Value) -> f64 {
    h.get("idle_confidence")
        .unwrap_or(&h["confidence"])
        .as_f64()
        .unwrap()
}

/// A lesson's history accounts for every move of its confidence: the idle active days that
/// decay charges between two events are on the event before them, so a confirmation reads
/// +0.150 from where the lesson stood (as `trace` says), not from the event before the decay,
/// and the last entry ends where the ledger's confidence is.
#[test]
fn history_shows_the_decay_between_two_events_and_after_the_last() {
    let h = History::new("lifecycle-history-decay");
    let text = "Run pytest from the repository root so conftest.py fixtures are collected.";
    let idle = |id: &str, at: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["python"], "project": BILLING,
               "outcome": "succeeded", "task": "review a pull request"})
    };
    h.add(
        "night-1.jsonl",
        &[
            learned("hd-1", "2026-05-01T10:00:00Z", "python", BILLING, text),
            learned("hd-2", "2026-05-02T10:00:00Z", "python", BILLING, text),
        ],
    );
    let id = active_id(&h.compile(), text);
    h.add(
        "night-2.jsonl",
        &[
            idle("hd-3", "2026-05-03T10:00:00Z"),
            idle("hd-4", "2026-05-04T10:00:00Z"),
            session(
                "hd-5",
                "2026-05-05T10:00:00Z",
                BILLING,
                "succeeded",
                &[&id],
                vec![pytest("/srv/billing-api", true)],
            ),
            idle("hd-6", "2026-05-06T10:00:00Z"),
        ],
    );
    let ledger = h.compile();
    let l = lesson(&ledger, &id);
    let history = l["history"].as_array().unwrap();
    let confirmed = history.iter().position(|e| e["event"] == "confirmed").unwrap();
    let before = &history[confirmed - 1];
    assert_eq!(
        (before["idle_days"].as_u64(), before["idle_confidence"].as_f64()),
        (Some(2), Some(0.46)),
        "{l:#}"
    );
    assert_eq!(history[confirmed]["confidence"], 0.61);
    let last = history.last().unwrap();
    assert_eq!(last["idle_days"], 1, "{l:#}");
    assert_eq!(after(last), l["confidence"].as_f64().unwrap());
    assert_eq!(l["confidence"], 0.59);
    // Every step reads from where the last one left it.
    for pair in history.windows(2) {
        let delta = ((pair[1]["confidence"].as_f64().unwrap() - after(&pair[0])) * 1000.0).round();
        let expected = match pair[1]["event"].as_str().unwrap() {
            "confirmed" => 150.0,
            "contradicted" => -250.0,
            _ => 0.0,
        };
        assert_eq!(delta, expected, "{pair:#?}");
    }

    let o = h.run(&["lessons", "history", &id]);
    let t = stdout(&o);
    assert!(
        t.contains("then idle    confidence 0.460 — 2 active days without use\n")
            && t.contains("then idle    confidence 0.590 — 1 active day without use\n"),
        "{t}"
    );
}
