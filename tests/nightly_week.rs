//! A week of a team's memory, compiled every night as the README tells an operator to: one
//! records directory that gains a native JSONL file a day and a nightly snapshot of the team's
//! OmniMem store (the whole store each night), one output directory and state store kept
//! between runs. Five projects (billing-api, storefront, infra, data-pipeline, ledger-cli) and
//! seven domains; agents list the lessons of yesterday's blocks in `in_play`, so each night's
//! records depend on the ledger the night before wrote.

mod common;

use common::*;
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const STORE: &str = "git@github.com:acme/storefront.git";
const INFRA: &str = "git@gitlab.com:acme-platform/infra.git";
const PIPE: &str = "https://github.com/acme/data-pipeline";
const CLI: &str = "git@github.com:acme/ledger-cli.git";

const PYTEST: &str =
    "Run pytest from the repository root so conftest.py fixtures and the package import path are picked up.";
const NPM: &str =
    "Install dependencies with npm install --legacy-peer-deps in CI to get past peer dependency conflicts.";
const TF_INIT: &str =
    "Run terraform init -upgrade after changing a provider version constraint so the lock file is refreshed.";
const CLIPPY: &str =
    "Run cargo clippy --all-targets -- -D warnings before pushing so CI lint failures are caught locally.";
const REBASE: &str =
    "Rebase feature branches onto origin/main with git pull --rebase before opening a pull request.";
const DIGEST_PIN: &str = "Pin base images by digest in Dockerfiles so rebuilds are reproducible.";

/// 2026-11-02, the first night, 00:00 UTC in unix seconds (OmniMem's `created_at`).
const NOV_2: i64 = 1_793_577_600;

/// A native experience record of `(domain, project, task)`; `extra` adds lesson, gotchas,
/// dead_ends, in_play….
fn exp(
    id: &str,
    at: &str,
    (domain, project, task): (&str, &str, &str),
    outcome: &str,
    ops: Vec<Value>,
    extra: Value,
) -> Value {
    let mut r = json!({"id": id, "recorded_at": at, "domains": [domain], "project": project, "task": task,
                       "outcome": outcome, "operations": ops});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

/// An OmniMem memory as its export writes it: strings for numbers and lists, unix seconds.
fn memory(key: &str, day: i64, hour: i64, tag: &str, project: &str, extra: Value) -> Value {
    let mut m = json!({"key": key, "tags": format!("[\"{tag}\"]"), "project": project, "outcome": "succeeded",
                       "effort_score": "2", "state": "active", "blessed": "0",
                       "created_at": (NOV_2 + (day - 1) * 86_400 + hour * 3_600).to_string()});
    for (k, v) in extra.as_object().unwrap() {
        m[k] = v.clone();
    }
    m
}

struct Week {
    r: Records,
    /// Every OmniMem memory so far: each night's snapshot is the whole store.
    store: std::cell::RefCell<Vec<Value>>,
}

impl Week {
    fn new(name: &str) -> Week {
        Week {
            r: Records::new(name),
            store: Default::default(),
        }
    }

    /// Night `n` (1 = 2 November): writes the day's records and the store's snapshot, compiles.
    fn night(&self, n: u32) -> Value {
        let (records, memories) = self.day(n);
        self.r
            .add(&format!("agents-2026-11-{:02}.jsonl", n + 1), &records);
        let mut store = self.store.borrow_mut();
        store.extend(memories);
        let snapshot = serde_json::to_string_pretty(&Value::Array(store.clone())).unwrap();
        std::fs::write(
            self.r
                .s
                .path("records")
                .join(format!("omnimem-2026-11-{:02}.json", n + 1)),
            snapshot,
        )
        .unwrap();
        drop(store);
        self.r.compile()
    }

    /// Runs nights 1 to `n`; the last night's ledger.
    fn through(&self, n: u32) -> Value {
        (1..=n).map(|d| self.night(d)).last().unwrap()
    }

    fn day(&self, n: u32) -> (Vec<Value>, Vec<Value>) {
        let pytest_fixed = |project: &str, root: &str| {
            vec![
                sh(
                    "pytest -q",
                    &format!("{root}/tests"),
                    Some("ModuleNotFoundError: No module named 'app'"),
                    None,
                ),
                sh("pytest -q", root, None, Some(("tests", project))),
            ]
        };
        let pytest_ok =
            |project: &str, root: &str| vec![sh("pytest -q", root, None, Some(("tests", project)))];
        let npm = |error: Option<&str>| {
            vec![sh(
                "npm install --legacy-peer-deps",
                "/srv/storefront",
                error,
                Some(("ci", "storefront")),
            )]
        };
        let tf = || {
            vec![
                sh("terraform init -upgrade", "/srv/infra", None, None),
                sh("terraform plan", "/srv/infra", None, Some(("plan", "infra"))),
            ]
        };
        let clippy = |error: Option<&str>| {
            vec![sh(
                "cargo clippy --all-targets -- -D warnings",
                "/srv/ledger-cli",
                error,
                Some(("lint", "ledger-cli")),
            )]
        };
        let kubectl = |file: &str, failing: &str, working: &str, error: &str| {
            vec![
                sh(
                    &format!("kubectl apply {failing}-f {file}"),
                    "/srv/infra/k8s",
                    Some(error),
                    None,
                ),
                sh(
                    &format!("kubectl apply {working}-f {file}"),
                    "/srv/infra/k8s",
                    None,
                    Some(("rollout", file)),
                ),
            ]
        };
        const TOO_LONG: &str = "The CustomResourceDefinition is invalid: metadata.annotations: Too long: must have at most 262144 bytes";
        const CONFLICT: &str =
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\": .spec.replicas";
        const ERESOLVE: &str = "npm ERR! code ERESOLVE could not resolve dependency tree";
        match n {
            1 => (
                vec![
                    exp(
                        "bil-1",
                        "2026-11-02T09:10:00Z",
                        ("python", BILLING, "fix invoice tests"),
                        "succeeded",
                        pytest_fixed("billing", "/srv/billing-api"),
                        json!({"lesson": PYTEST, "gotchas": ["pytest caches stale fixtures in .pytest_cache after renaming a conftest fixture"]}),
                    ),
                    exp(
                        "sto-1",
                        "2026-11-02T10:00:00Z",
                        ("node", STORE, "CI install"),
                        "succeeded",
                        npm(None),
                        json!({"lesson": NPM}),
                    ),
                    exp(
                        "sto-2",
                        "2026-11-02T15:00:00Z",
                        ("node", STORE, "CI install on the release branch"),
                        "succeeded",
                        npm(None),
                        json!({"lesson": NPM}),
                    ),
                    exp(
                        "inf-1",
                        "2026-11-02T11:00:00Z",
                        ("kubernetes", INFRA, "roll out the ingress"),
                        "succeeded",
                        kubectl("ingress.yaml", "", "--server-side ", TOO_LONG),
                        json!({}),
                    ),
                    exp(
                        "inf-2",
                        "2026-11-02T16:00:00Z",
                        ("terraform", INFRA, "bump the aws provider"),
                        "succeeded",
                        tf(),
                        json!({"lesson": TF_INIT}),
                    ),
                    exp(
                        "cli-1",
                        "2026-11-02T12:00:00Z",
                        ("rust", CLI, "add the export subcommand"),
                        "succeeded",
                        clippy(None),
                        json!({"lesson": CLIPPY}),
                    ),
                ],
                vec![memory("om-git-1", 1, 10, "git", PIPE, json!({"lesson": REBASE}))],
            ),
            2 => (
                vec![
                    exp(
                        "pip-1",
                        "2026-11-03T09:00:00Z",
                        ("python", PIPE, "fix the dag tests"),
                        "succeeded",
                        pytest_fixed("pipe", "/srv/data-pipeline"),
                        json!({"lesson": "Run pytest from the repository root so the conftest.py fixtures and package import path are picked up."}),
                    ),
                    exp(
                        "inf-3",
                        "2026-11-03T10:00:00Z",
                        ("kubernetes", INFRA, "roll out the api"),
                        "succeeded",
                        kubectl("api.yaml", "", "--server-side ", TOO_LONG),
                        json!({}),
                    ),
                    exp(
                        "inf-4",
                        "2026-11-03T14:00:00Z",
                        ("terraform", INFRA, "bump the google provider"),
                        "succeeded",
                        tf(),
                        json!({"lesson": TF_INIT, "in_play": self.r.active_ids("Run terraform init")}),
                    ),
                    exp(
                        "cli-2",
                        "2026-11-03T12:00:00Z",
                        ("rust", CLI, "fix the csv parser"),
                        "succeeded",
                        clippy(None),
                        json!({"lesson": CLIPPY, "in_play": self.r.active_ids("Run cargo clippy")}),
                    ),
                    exp(
                        "bil-2",
                        "2026-11-03T15:00:00Z",
                        ("python", BILLING, "add the refund tests"),
                        "succeeded",
                        pytest_ok("billing", "/srv/billing-api"),
                        json!({"in_play": self.r.active_ids("Run pytest")}),
                    ),
                ],
                vec![
                    memory("om-git-2", 2, 10, "git", CLI, json!({"lesson": REBASE})),
                    memory(
                        "om-docker-1",
                        2,
                        12,
                        "docker",
                        PIPE,
                        json!({"lesson": DIGEST_PIN, "gotchas": "docker build cache hides a changed apt mirror"}),
                    ),
                ],
            ),
            3 => {
                let npm_lesson = self.r.active_ids("Install dependencies with npm");
                (
                    vec![
                        exp(
                            "sto-3",
                            "2026-11-04T09:00:00Z",
                            ("node", STORE, "CI install after the react 19 upgrade"),
                            "failed",
                            npm(Some(ERESOLVE)),
                            json!({"in_play": npm_lesson}),
                        ),
                        exp(
                            "sto-4",
                            "2026-11-04T11:00:00Z",
                            ("node", STORE, "CI install, second try"),
                            "abandoned",
                            npm(Some(ERESOLVE)),
                            json!({"in_play": npm_lesson, "dead_ends": [{"name": "npm install --legacy-peer-deps", "reason": "ERESOLVE after the react 19 upgrade"}]}),
                        ),
                        exp(
                            "bil-3",
                            "2026-11-04T10:00:00Z",
                            ("python", BILLING, "tax rounding tests"),
                            "succeeded",
                            pytest_ok("billing", "/srv/billing-api"),
                            json!({"in_play": self.r.active_ids("Run pytest")}),
                        ),
                        exp(
                            "cli-3",
                            "2026-11-04T12:00:00Z",
                            ("rust", CLI, "cut the 0.3 release"),
                            "failed",
                            clippy(Some("error: this `let...else` may be rewritten")),
                            json!({"in_play": self.r.active_ids("Run cargo clippy")}),
                        ),
                        // A roll-out that teaches nothing and uses no lesson: K001.
                        exp(
                            "inf-5",
                            "2026-11-04T13:00:00Z",
                            ("kubernetes", INFRA, "roll out the worker"),
                            "succeeded",
                            vec![sh(
                                "kubectl apply --server-side -f worker.yaml",
                                "/srv/infra/k8s",
                                None,
                                Some(("rollout", "worker.yaml")),
                            )],
                            json!({}),
                        ),
                    ],
                    vec![memory(
                        "om-docker-2",
                        3,
                        12,
                        "docker",
                        STORE,
                        json!({"lesson": DIGEST_PIN}),
                    )],
                )
            }
            4 => {
                let fixes = self.r.active_ids("run_shell_command kubectl");
                (
                    vec![
                        exp(
                            "inf-6",
                            "2026-11-05T09:00:00Z",
                            ("kubernetes", INFRA, "roll out the ingress v2"),
                            "succeeded",
                            kubectl(
                                "ingress.yaml",
                                "--server-side ",
                                "--server-side --force-conflicts ",
                                CONFLICT,
                            ),
                            json!({"in_play": fixes}),
                        ),
                        exp(
                            "sto-5",
                            "2026-11-05T10:00:00Z",
                            ("node", STORE, "CI install"),
                            "succeeded",
                            vec![sh(
                                "npm install",
                                "/srv/storefront",
                                None,
                                Some(("ci", "storefront")),
                            )],
                            json!({"lesson": "Remove --legacy-peer-deps from CI installs once peer dependencies are aligned with React 19."}),
                        ),
                        exp(
                            "pip-2",
                            "2026-11-05T11:00:00Z",
                            ("python", PIPE, "backfill tests"),
                            "succeeded",
                            pytest_ok("pipe", "/srv/data-pipeline"),
                            json!({"in_play": self.r.active_ids("Run pytest")}),
                        ),
                    ],
                    vec![],
                )
            }
            5 => (
                vec![
                    exp(
                        "bil-4",
                        "2026-11-06T09:00:00Z",
                        ("python", BILLING, "ledger export tests"),
                        "succeeded",
                        pytest_ok("billing", "/srv/billing-api"),
                        json!({"in_play": self.r.active_ids("Run pytest")}),
                    ),
                    exp(
                        "inf-8",
                        "2026-11-06T10:00:00Z",
                        ("terraform", INFRA, "plan the bucket change"),
                        "succeeded",
                        vec![sh("terraform plan", "/srv/infra", None, Some(("plan", "infra")))],
                        json!({}),
                    ),
                ],
                vec![],
            ),
            // The rebase lesson, global from two projects, fails in a third; the ingress fix
            // works again, used from the block (a confirmation, no new candidate).
            6 => (
                vec![
                    exp(
                        "sto-6",
                        "2026-11-07T10:00:00Z",
                        ("git", STORE, "open the checkout PR"),
                        "abandoned",
                        vec![sh(
                            "git pull --rebase origin main",
                            "/srv/storefront",
                            Some("CONFLICT (content): Merge conflict in package-lock.json"),
                            None,
                        )],
                        json!({"in_play": self.r.active_ids("Rebase feature")}),
                    ),
                    exp(
                        "inf-9",
                        "2026-11-07T11:00:00Z",
                        ("kubernetes", INFRA, "roll out the ingress v3"),
                        "succeeded",
                        vec![sh(
                            "kubectl apply --server-side --force-conflicts -f ingress.yaml",
                            "/srv/infra/k8s",
                            None,
                            Some(("rollout", "ingress.yaml")),
                        )],
                        json!({"in_play": self.r.active_ids("run_shell_command kubectl")}),
                    ),
                ],
                vec![],
            ),
            // … and works there the next day.
            7 => (
                vec![exp(
                    "sto-7",
                    "2026-11-08T09:00:00Z",
                    ("git", STORE, "open the cart PR"),
                    "succeeded",
                    vec![sh(
                        "git pull --rebase origin main",
                        "/srv/storefront",
                        None,
                        Some(("ci", "storefront")),
                    )],
                    json!({"in_play": self.r.active_ids("Rebase feature")}),
                )],
                vec![],
            ),
            _ => unreachable!("night {n}"),
        }
    }
}

/// The rebase lesson (two OmniMem memories from two projects) is global; a failure in
/// storefront demotes it (S006), and a success in storefront the next night makes it global
/// again. That morning's diagnostics must not still say it was demoted and ask for the very
/// confirmation that came: the ledger says global, and so must every file.
#[test]
fn a_demotion_undone_by_a_later_confirmation_is_no_longer_reported() {
    let w = Week::new("week-demotion-undone");
    let ledger = w.through(6);
    let rebase = reading(&ledger, "Rebase feature")["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        reading(&ledger, "Rebase feature")["scope"],
        format!("project:{}", &skillc::digest::project(CLI))
    );
    let diags = w.r.diagnostics();
    let demoted = diags_of(&diags, "S006");
    assert!(
        demoted
            .iter()
            .any(|d| d["subject"] == rebase && names(d, "sto-6")),
        "{demoted:#?}"
    );
    let d = demoted.iter().find(|d| d["subject"] == rebase).unwrap();
    assert_eq!(d["evidence"]["demoted_on"], "2026-11-07");
    assert!(
        d["message"].as_str().unwrap().ends_with(&format!(
            "to project:{} on 2026-11-07",
            skillc::digest::project(CLI)
        )),
        "{d:#}"
    );

    let ledger = w.night(7);
    let l = reading(&ledger, "Rebase feature");
    assert_eq!(l["scope"], "global");
    assert_eq!(l["confidence"], 0.4, "0.500 − 0.250 + 0.150");
    let diags = w.r.diagnostics();
    let stale: Vec<_> = diags_of(&diags, "S006")
        .into_iter()
        .filter(|d| d["subject"] == rebase)
        .collect();
    assert!(stale.is_empty(), "{stale:#?}");
    // The demotion is still history.
    let events: Vec<&str> = (l["history"].as_array().unwrap().iter())
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert!(
        events.ends_with(&["contradicted", "demoted", "confirmed", "promoted"]),
        "{events:?}"
    );
    assert!(w.r.s.path("out/git/SKILL.md").is_file());
}

/// The morning after night 5, the diagnostics still list the npm lesson that two failed CI
/// installs put below the floor on 4 November, and the kubectl fix the api roll-out replaced
/// on 3 November, beside anything that happened last night. Each S001 says the day the
/// lesson left, and the npm one the experiences that contradicted it: the S002 that named
/// them was said on that night only. The clippy rule, contradicted on 4 November and still
/// live, is warned about every night: its S002 says the day too.
#[test]
fn old_lifecycle_news_says_its_day_nights_later() {
    let w = Week::new("week-superseded-when");
    let ledger = w.through(5);
    let npm = reading(&ledger, "Install dependencies with npm")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let ingress = reading(
        &ledger,
        "run_shell_command kubectl: run `kubectl apply --server-side -f ingress.yaml`",
    );
    assert_eq!(ingress["status"], "superseded");
    let ingress = ingress["id"].as_str().unwrap().to_string();
    let diags = w.r.diagnostics();
    let s001 = diags_of(&diags, "S001");
    let of = |id: &str| {
        let found: Vec<_> = s001.iter().filter(|d| d["subject"] == id).collect();
        assert_eq!(found.len(), 1, "{id}: {s001:#?}");
        found[0]
    };
    let d = of(&npm);
    assert_eq!(d["evidence"]["superseded_on"], "2026-11-04");
    assert_eq!(d["evidence"]["contradicted_by"], json!(["sto-3", "sto-4"]));
    assert_eq!(
        d["message"],
        "lesson superseded on 2026-11-04: confidence fell below the floor after contradictions; contradicted by sto-3, sto-4"
    );
    assert!(
        diags_of(&diags, "S002")
            .iter()
            .all(|d| d["subject"] != npm.as_str())
    );
    let d = of(&ingress);
    assert_eq!(d["evidence"]["superseded_on"], "2026-11-03");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("lesson superseded on 2026-11-03: a newer fix")
    );
    assert!(d["evidence"].get("contradicted_by").is_none(), "{d:#}");
    let clippy = reading(&ledger, "Run cargo clippy")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let s002: Vec<_> = diags_of(&diags, "S002")
        .into_iter()
        .filter(|d| d["subject"] == clippy.as_str())
        .collect();
    assert_eq!(s002.len(), 1, "{diags:#}");
    assert_eq!(s002[0]["evidence"]["last_contradicted_on"], "2026-11-04");
    assert_eq!(
        s002[0]["message"],
        "lesson in play was contradicted by 1 experience on 2026-11-04: cli-3; confidence after it: 0.400"
    );
}

/// inf-5 (4 November) rolled out a manifest without learning or using anything: K001 names it
/// with its file and line. inf-9 (7 November) yields no candidate either, but it confirmed the
/// ingress fix it had in play, so it gets no K001; inf-5's note, folded with inf-9's before
/// that was known, must still say where inf-5 is, as it did every night before.
#[test]
fn a_no_candidates_note_keeps_its_file_and_line_when_an_attributed_experience_leaves_its_fold() {
    let w = Week::new("week-k001-location");
    let k001 = |w: &Week| -> Vec<Value> {
        (diags_of(&w.r.diagnostics(), "K001").into_iter())
            .filter(|d| d["domain"] == "kubernetes")
            .cloned()
            .collect()
    };
    w.through(3);
    let before = k001(&w);
    assert_eq!(before.len(), 1, "{before:#?}");
    assert!(
        before[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("agents-2026-11-04.jsonl"),
        "{:#}",
        before[0]
    );
    let ledger = (4..=6).map(|n| w.night(n)).last().unwrap();
    let fix = reading(
        &ledger,
        "run_shell_command kubectl: run `kubectl apply --server-side --force-conflicts -f ingress.yaml`",
    );
    assert!(
        fix["evidence"].as_array().unwrap().iter().any(|e| e == "inf-9"),
        "{fix:#}"
    );
    let after = k001(&w);
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0]["subject"], "inf-5");
    assert_eq!(after[0]["evidence"]["experiences"], json!(["inf-5"]));
    assert_eq!(after[0]["file"], before[0]["file"]);
    assert_eq!(after[0]["line"], before[0]["line"]);
}
