//! A month of nightly snapshots, kept the way many operators keep them: one directory a night
//! (`records/2026-11-DD/`), holding one JSONL file per project with every record that project's
//! agents have written so far, so each night is a superset of the last. Five projects
//! (billing-api, data-pipeline and, from mid-month, ml-service in python, storefront in node, ledger-cli in
//! rust); agents list yesterday's lessons in `in_play`, so a night's records depend on the
//! ledger the night before wrote. The whole month is compiled once per test that needs it.

mod common;

use common::*;
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const PIPE: &str = "https://github.com/acme/data-pipeline";
const ML: &str = "git@github.com:acme/ml-service.git";
const STORE: &str = "git@github.com:acme/storefront.git";
const CLI: &str = "git@github.com:acme/ledger-cli.git";

const PYTEST: &str =
    "Run pytest from the repository root so conftest.py fixtures and the package import path are picked up.";
const NPM: &str = "Use npm ci instead of npm install in CI so the lockfile is respected.";
const CLIPPY: &str =
    "Run cargo clippy --all-targets -- -D warnings before pushing so CI lint failures are caught locally.";

/// The projects, by the name of their snapshot file.
const PROJECTS: [&str; 5] = [
    "billing-api",
    "data-pipeline",
    "ledger-cli",
    "ml-service",
    "storefront",
];

/// A month of nights in one scratch directory: `records/<night>/<project>.jsonl`, `out/`.
struct Month {
    r: Records,
    /// Every record so far, per project (index into `PROJECTS`).
    written: Vec<Vec<Value>>,
}

impl Month {
    fn new(name: &str) -> Month {
        Month {
            r: Records::new(name),
            written: vec![Vec::new(); PROJECTS.len()],
        }
    }

    /// Night `n` (1 = 2026-11-01): each project's day, then every project's snapshot.
    fn write_night(&mut self, n: u32) {
        for (p, project) in PROJECTS.iter().enumerate() {
            let record = self.day(n, project);
            self.written[p].extend(record);
        }
        let dir = self.r.s.path("records").join(format!("2026-11-{n:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (p, project) in PROJECTS.iter().enumerate() {
            if self.written[p].is_empty() {
                continue;
            }
            let text: String = self.written[p].iter().map(|r| format!("{r}\n")).collect();
            std::fs::write(dir.join(format!("{project}.jsonl")), text).unwrap();
        }
    }

    /// Nights 1 to `n`, compiled every night from night `from` on (and on night `n`).
    fn through(&mut self, n: u32, from: u32) {
        for night in 1..=n {
            self.write_night(night);
            if night >= from || night == n {
                self.r.compile();
            }
        }
    }

    fn trace(&self, id: &str) -> (Value, String) {
        let json = trace_json(id, &self.r.s.path("records"), &self.r.s.path("out"));
        let o = skillc(&["trace", id, &self.r.records(), "--out", &self.r.out()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (json, stdout(&o))
    }

    /// One project's records of night `n`: one session a day, with a few failures.
    fn day(&self, n: u32, project: &str) -> Vec<Value> {
        let at = |hour: u32| format!("2026-11-{n:02}T{hour:02}:{:02}:00Z", (n * 7) % 60);
        let id = |tag: &str| format!("{tag}-{n:02}");
        let python = |tag: &str, identity: &str, root: &str, hour: u32, fail: bool| {
            let mut r = json!({
                "id": id(tag), "recorded_at": at(hour), "domains": ["python"], "project": identity,
                "task": format!("fix the {tag} test suite, day {n}"),
                "outcome": if fail { "failed" } else { "succeeded" },
                "in_play": self.r.active_ids("Run pytest"),
            });
            r["operations"] = if fail {
                json!([sh(
                    "pytest -q",
                    root,
                    Some("ImportError while loading conftest '/srv/app/tests/conftest.py'"),
                    Some(("tests", tag))
                )])
            } else {
                json!([
                    sh(
                        "pytest -q",
                        &format!("{root}/tests"),
                        Some("ModuleNotFoundError: No module named 'app'"),
                        None
                    ),
                    sh("pytest -q", root, None, Some(("tests", tag))),
                ])
            };
            if !fail && n % 3 == 1 {
                r["lesson"] = json!(PYTEST);
            }
            r
        };
        match project {
            "billing-api" => vec![python("billing", BILLING, "/srv/billing-api", 9, false)],
            "data-pipeline" => vec![python("pipeline", PIPE, "/srv/data-pipeline", 10, false)],
            // A third python project, started mid-month, whose conftest is broken for its
            // first three days.
            "ml-service" if n < 14 => Vec::new(),
            "ml-service" => vec![python("ml", ML, "/srv/ml-service", 11, n <= 16)],
            "storefront" => {
                let fail = (20..=21).contains(&n);
                let mut r = json!({
                    "id": id("store"), "recorded_at": at(13), "domains": ["node"], "project": STORE,
                    "task": format!("CI install, day {n}"),
                    "outcome": if fail { "abandoned" } else { "succeeded" },
                    "in_play": self.r.active_ids("Use npm ci"),
                    "operations": [sh("npm ci", "/srv/storefront",
                        fail.then_some("npm ERR! code EUSAGE: package-lock.json is out of sync with package.json"),
                        Some(("ci", "storefront")))],
                });
                if n <= 2 {
                    r["lesson"] = json!(NPM);
                }
                if fail {
                    r["gotchas"] = json!([
                        "npm ci fails when package-lock.json was not regenerated after a dependency bump"
                    ]);
                }
                vec![r]
            }
            "ledger-cli" => {
                let mut r = json!({
                    "id": id("cli"), "recorded_at": at(15), "domains": ["rust"], "project": CLI,
                    "task": format!("ledger export, day {n}"), "outcome": "succeeded",
                    "in_play": self.r.active_ids("Run cargo clippy"),
                    "operations": [sh("cargo clippy --all-targets -- -D warnings", "/srv/ledger-cli", None, Some(("lint", "ledger-cli")))],
                });
                if n % 4 == 1 {
                    r["lesson"] = json!(CLIPPY);
                }
                vec![r]
            }
            _ => unreachable!(),
        }
    }
}

/// Thirty nights of snapshots, each a superset of the last: every snapshot file after the
/// first night repeats the records of the files before it. That is one L004 warning per
/// repeating file (linear in the files read), not one per (file, earlier file it repeats),
/// which grew to 5 × 435 by night 30. Each warning still says where the records it repeats
/// were first read and how many there were, and `why` still counts every repeated record.
#[test]
fn a_month_of_snapshot_directories_warns_once_per_repeating_file() {
    let mut m = Month::new("month-l004");
    m.through(29, 29);
    m.write_night(30);
    let o = skillc(&["compile", &m.r.records(), "--out", &m.r.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The summary tells the harmless repeats from the warnings that need a look.
    let summary = stdout(&o);
    assert!(
        summary.contains(
            "0 errors, 132 warnings (132 of them L004 about records read again, which lose nothing)"
        ),
        "{summary}"
    );
    let diags = m.r.diagnostics();
    let l004 = diags_of(&diags, "L004");
    // Nights 2 to 30, one file per project each; ml-service's from night 15.
    assert_eq!(l004.len(), 29 * 4 + 16, "{:#?}", &l004[..3]);
    assert!(l004.iter().all(|d| d["severity"] == "warning"));
    let night = |n: u32, project: &str| {
        let file =
            m.r.s
                .path("records")
                .join(format!("2026-11-{n:02}/{project}.jsonl"));
        file.display().to_string()
    };
    let last = (l004.iter())
        .find(|d| d["subject"] == night(30, "billing-api"))
        .expect("night 30's billing-api snapshot has its warning");
    // Night 30 repeats 29 records, each first read from its own night's file.
    assert_eq!(last["evidence"]["records"], 29, "{last:#}");
    assert_eq!(last["evidence"]["first"], night(1, "billing-api"), "{last:#}");
    // Where they were first read: 29 files, the first five named with their counts (each
    // warning's size stays bounded, so the report grows with the files, not their square).
    assert_eq!(last["evidence"]["first_file_count"], 29, "{last:#}");
    let first_files = last["evidence"]["first_files"].as_object().unwrap();
    assert_eq!(first_files.len(), 5, "{last:#}");
    assert!(
        (1..=5).all(|n| first_files[&night(n, "billing-api")] == 1),
        "{last:#}"
    );
    let message = last["message"].as_str().unwrap();
    assert!(
        message.starts_with("29 records repeat records of 29 files read before"),
        "{message}"
    );
    assert!(
        message.contains(&format!("1 in {}", night(1, "billing-api"))),
        "{message}"
    );
    assert!(message.contains("and 26 more files"), "{message}");
    assert_eq!(last["file"], night(30, "billing-api"));
    assert_eq!(last["line"], 1);
    // Night 2 repeats one record of night 1: the record's own warning, as before.
    let second = (l004.iter())
        .find(|d| d["file"] == night(2, "storefront"))
        .unwrap();
    assert_eq!(second["subject"], "store-01", "{second:#}");
    assert_eq!(second["evidence"]["records"], Value::Null, "{second:#}");
    assert!(
        second["message"]
            .as_str()
            .unwrap()
            .contains("with the same content"),
        "{second:#}"
    );
    // `why` counts every repeated record: 1 + 2 + … + 29 of billing-api and data-pipeline
    // each, 1 + … + 16 of ml-service.
    let why = why_json_in("python", &m.r.s.path("records"), &[]);
    assert_eq!(why["repeated_at_load"], 2 * 435 + 136, "{why:#}");
    assert_eq!(why["refused_at_load"]["records"], 0, "{why:#}");
}

/// The failure that demoted a global lesson says so in its trace, and the success from
/// another project that made it global again says that: `trace` follows an experience into
/// what it changed in a lesson's life (its scope), not only its confidence.
#[test]
fn trace_says_which_experience_demoted_a_global_lesson_and_which_promoted_it_again() {
    let mut m = Month::new("month-trace");
    // ml-service's first session (night 14) fails with the global pytest lesson in play.
    m.through(14, 12);
    let ledger = m.r.ledger();
    let pytest = reading(&ledger, "Run pytest from the repository root")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (j, text) = m.trace("ml-14");
    let changed = j["lifecycle"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{j:#}");
    let demoted = &changed[0];
    assert_eq!(demoted["lesson"], pytest.as_str());
    assert_eq!(demoted["event"], "demoted");
    assert_eq!(demoted["at"], "2026-11-14T11:38:00Z");
    let to = demoted["detail"].as_str().unwrap();
    assert!(to.starts_with("to project:"), "{to}");
    assert_eq!(demoted["scope_now"], to.strip_prefix("to ").unwrap(), "{j:#}");
    assert!(
        text.contains(&format!("{pytest} demoted {to} on 2026-11-14T11:38:00Z")),
        "{text}"
    );
    // billing-api confirms it the morning after, from another project: global again, until
    // ml-service's second failure that day.
    m.write_night(15);
    m.r.compile();
    let (j, text) = m.trace("billing-15");
    let changed = j["lifecycle"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{j:#}");
    assert_eq!(changed[0]["event"], "promoted");
    assert_eq!(changed[0]["lesson"], pytest.as_str());
    assert!(
        text.contains(&format!("{pytest} promoted to global on 2026-11-15T09:45:00Z")),
        "{text}"
    );
    let (j, _) = m.trace("ml-15");
    assert_eq!(j["lifecycle"][0]["event"], "demoted", "{j:#}");
    let (j, text) = m.trace("ml-14");
    assert_eq!(j["lifecycle"][0]["event"], "demoted", "{j:#}");
    assert!(text.contains("(now active, project:"), "{text}");
    // An ordinary confirmation changes the lesson's confidence only: nothing more to say.
    let (j, text) = m.trace("pipeline-10");
    assert_eq!(j["lifecycle"], json!([]), "{j:#}");
    assert!(!text.contains("what it changed"), "{text}");
}

/// The session whose kubectl fix replaced the one in play says, in its trace, that it
/// superseded the old fix and by what, beside the contradiction that lowered its confidence.
#[test]
fn trace_names_the_lesson_an_experience_superseded() {
    let r = Records::new("month-supersede");
    let infra = "git@gitlab.com:acme-platform/infra.git";
    const TOO_LONG: &str = "The CustomResourceDefinition is invalid: metadata.annotations: Too long: must have at most 262144 bytes";
    const CONFLICT: &str =
        "Apply failed with 1 conflict: conflict with \"helm\" using apps/v1: .spec.replicas";
    let session = |id: &str, day: u32, failing: &str, working: &str, error: &str, in_play: Vec<String>| {
        json!({
            "id": id, "recorded_at": format!("2026-11-{day:02}T14:00:00Z"), "domains": ["kubernetes"],
            "project": infra, "task": "roll out the monitoring CRDs", "outcome": "succeeded",
            "in_play": in_play,
            "operations": [
                sh(&format!("kubectl apply {failing}-f crds/prometheus.yaml"), "/srv/infra/k8s", Some(error), None),
                sh(&format!("kubectl apply {working}-f crds/prometheus.yaml"), "/srv/infra/k8s", None, Some(("rollout", "prometheus"))),
            ],
        })
    };
    r.add(
        "infra-01.jsonl",
        &[session("k8s-01", 1, "", "--server-side ", TOO_LONG, vec![])],
    );
    r.compile();
    r.add(
        "infra-02.jsonl",
        &[session("k8s-02", 2, "", "--server-side ", TOO_LONG, vec![])],
    );
    let ledger = r.compile();
    let old = reading(&ledger, "run_shell_command kubectl")["id"]
        .as_str()
        .unwrap()
        .to_string();
    r.add(
        "infra-03.jsonl",
        &[session(
            "k8s-03",
            3,
            "--server-side ",
            "--server-side --force-conflicts ",
            CONFLICT,
            vec![old.clone()],
        )],
    );
    let ledger = r.compile();
    let new = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["status"] == "active" && l["id"] != old.as_str())
        .map(|l| l["id"].as_str().unwrap().to_string())
        .expect("the new fix is a lesson");
    let j = trace_json("k8s-03", &r.s.path("records"), &r.s.path("out"));
    assert_eq!(j["attribution"][0]["effect"], "contradicted", "{j:#}");
    let changed = j["lifecycle"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{j:#}");
    assert_eq!(changed[0]["lesson"], old.as_str());
    assert_eq!(changed[0]["event"], "superseded");
    assert_eq!(changed[0]["status_now"], "superseded");
    let detail = changed[0]["detail"].as_str().unwrap();
    assert!(detail.ends_with(&format!("superseded by {new}")), "{detail}");
    let o = skillc(&["trace", "k8s-03", &r.records(), "--out", &r.out()]);
    let text = stdout(&o);
    assert!(
        text.contains(&format!("{old} superseded on 2026-11-03T14:00:00Z: ")),
        "{text}"
    );
    assert!(text.contains("(now superseded)"), "{text}");
    // The session before changed nothing in a lesson's life.
    assert_eq!(
        trace_json("k8s-02", &r.s.path("records"), &r.s.path("out"))["lifecycle"],
        json!([])
    );
}

/// A user's edit takes the time of the last compile's latest record and supersedes the old
/// wording then, after the records of that time: the record that confirmed the lesson at that
/// instant did not supersede it, and its trace does not say it did.
#[test]
fn trace_does_not_blame_an_experience_for_the_users_edit_at_its_instant() {
    let mut m = Month::new("month-edit");
    m.through(3, 2);
    let old = reading(&m.r.ledger(), "Run cargo clippy")["id"]
        .as_str()
        .unwrap()
        .to_string();
    // ledger-cli's session, the night's latest record, confirmed the clippy lesson; the user
    // edits it after that compile.
    let edited = "Run cargo clippy --all-targets --all-features -- -D warnings before pushing.";
    let o = skillc(&["lessons", "edit", &old, "--text", edited, "--out", &m.r.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = m.r.compile();
    let l = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["id"] == old.as_str())
        .unwrap();
    assert_eq!(l["status"], "superseded", "{l:#}");
    // cli-03 is the latest record (15:21 on night 3): the edit takes its time.
    let j = trace_json("cli-03", &m.r.s.path("records"), &m.r.s.path("out"));
    assert_eq!(j["attribution"][0]["effect"], "confirmed", "{j:#}");
    assert_eq!(j["lifecycle"], json!([]), "{j:#}");
}
