//! `skillc diff`: what a compile would change, risk-classified, without writing anything.
//! Each test compiles a corpus into a scratch --out, changes the records the way a memory
//! store changes (more sessions, a file removed, a user's decision), and diffs.

mod common;

use common::*;
use serde_json::{Value, json};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const INFRA: &str = "git@github.com:acme/infra-live.git";
const PLATFORM: &str = "git@github.com:acme/platform-modules.git";
const WEB: &str = "git@github.com:acme/storefront-web.git";
const AGENT: &str = "git@github.com:acme/build-agent.git";

const PYTEST: &str = "Run pytest with -p no:cacheprovider in CI containers, where the checkout is read-only";
const TERRAFORM: &str = "Run terraform init -upgrade after changing a provider version constraint, or plan fails on the lock file";
const NPM: &str = "Pin the npm version in package.json engines so CI and laptops write the same lockfile";
const CARGO: &str = "Run cargo clippy with --all-targets so test code is linted too";

fn learned(id: &str, at: &str, domain: &str, project: &str, task: &str, text: &str) -> Value {
    json!({"id": id, "recorded_at": at, "domains": [domain], "project": project, "task": task,
           "outcome": "succeeded", "effort": 2, "lesson": text})
}

/// The records of five projects' agents (one file per agent), compiled into a scratch --out.
type Store = Records;

impl Store {
    fn with_corpus(name: &str) -> Store {
        let st = Records::new(name);
        st.add(
            "billing.jsonl",
            &[
                learned(
                    "bill-0412",
                    "2026-11-02T09:14:00Z",
                    "python",
                    BILLING,
                    "fix CI failing on a read-only checkout",
                    PYTEST,
                ),
                learned(
                    "bill-0419",
                    "2026-11-03T16:40:00Z",
                    "python",
                    BILLING,
                    "make the nightly test job pass in the hardened runner",
                    PYTEST,
                ),
            ],
        );
        st.add(
            "infra.jsonl",
            &[
                learned(
                    "infra-2207",
                    "2026-11-02T11:05:00Z",
                    "terraform",
                    INFRA,
                    "bump the aws provider to 5.x",
                    TERRAFORM,
                ),
                learned(
                    "plat-0311",
                    "2026-11-03T10:22:00Z",
                    "terraform",
                    PLATFORM,
                    "raise the google provider constraint for the new bucket module",
                    TERRAFORM,
                ),
            ],
        );
        st.add(
            "web.jsonl",
            &[learned(
                "web-1180",
                "2026-11-03T14:02:00Z",
                "node",
                WEB,
                "stop lockfile churn between CI and laptops",
                NPM,
            )],
        );
        st.add(
            "agent.jsonl",
            &[learned(
                "agent-0075",
                "2026-11-03T08:30:00Z",
                "rust",
                AGENT,
                "tests carried warnings clippy never reported",
                CARGO,
            )],
        );
        st
    }

    /// A second storefront session that learned the npm lesson again, which makes it a rule.
    fn second_storefront_session(&self) {
        self.add(
            "web-2.jsonl",
            &[learned(
                "web-1203",
                "2026-11-04T10:11:00Z",
                "node",
                WEB,
                "CI rewrote package-lock.json again",
                NPM,
            )],
        );
    }

    /// `skillc diff` of the records against the output, whatever its exit code.
    fn run_diff(&self, extra: &[&str]) -> std::process::Output {
        let (records, out) = (self.records(), self.out());
        let mut args = vec!["diff", records.as_str(), "--out", out.as_str()];
        args.extend(extra);
        skillc(&args)
    }

    fn diff(&self, extra: &[&str]) -> std::process::Output {
        let o = self.run_diff(extra);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    }

    /// The exit code of `diff --fail-on RISK` at each risk, high first. The gate only sets
    /// the exit code: the report is the one diff prints without it, whole, as text and JSON.
    fn gates(&self) -> [(&'static str, Option<i32>); 3] {
        let text = stdout(&self.diff(&[]));
        let json = self.diff_json();
        ["high", "medium", "low"].map(|risk| {
            let gated = self.run_diff(&["--fail-on", risk]);
            assert_eq!(stdout(&gated), text, "--fail-on {risk}: {}", stderr(&gated));
            let gated_json = self.run_diff(&["--fail-on", risk, "--format", "json"]);
            assert_eq!(self::json(&gated_json), json, "--fail-on {risk}");
            assert_eq!(gated.status.code(), gated_json.status.code(), "--fail-on {risk}");
            (risk, gated.status.code())
        })
    }

    fn diff_json(&self) -> Value {
        json(&self.diff(&["--format", "json"]))
    }

    /// Rewrites the state store as a skillc of schema 1 left it: the last compile's ledger as
    /// one text, the ledger.json it wrote, in `compiles.ledger`, and no lesson rows. Keeps a
    /// copy of the store as it was at `state-2.db`, for `--state`.
    fn as_schema_1(&self) -> String {
        let (db, copy) = (self.s.path("out/.skillc/state.db"), self.s.path("state-2.db"));
        std::fs::copy(&db, &copy).unwrap();
        let ledger = std::fs::read_to_string(self.s.path("out/ledger.json")).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "ALTER TABLE compiles ADD COLUMN ledger TEXT NOT NULL DEFAULT '';
             DROP TABLE lessons;
             UPDATE skillc_meta SET value = '1' WHERE key = 'schema';",
        )
        .unwrap();
        c.execute("UPDATE compiles SET ledger = ?1", [ledger]).unwrap();
        copy.display().to_string()
    }

    /// Every byte under --out, the state store and the lock included.
    fn everything(&self) -> std::collections::BTreeMap<String, Vec<u8>> {
        tree_with_state(&self.s.path("out"))
    }
}

fn id_of(ledger: &Value, text: &str) -> String {
    let l = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["text"] == text)
        .unwrap_or_else(|| panic!("no lesson {text:?}: {ledger:#}"));
    l["id"].as_str().unwrap().to_string()
}

fn rule(ledger: &Value, id: &str) -> bool {
    let l = (ledger["lessons"].as_array().unwrap().iter()).find(|l| l["id"] == id);
    l.unwrap()["rule"] == true
}

/// The change listed for lesson `id`; fails when there is none or more than one.
fn change_of<'a>(diff: &'a Value, id: &str) -> &'a Value {
    let found: Vec<&Value> = (diff["changes"].as_array().unwrap().iter())
        .filter(|c| c["id"] == id)
        .collect();
    assert_eq!(found.len(), 1, "{id}: {diff:#}");
    found[0]
}

#[test]
fn the_same_input_changes_nothing_and_diff_writes_nothing() {
    let st = Store::with_corpus("diff-same");
    let ledger = st.compile();
    let pytest = id_of(&ledger, PYTEST);
    assert!(rule(&ledger, &pytest), "{ledger:#}");
    let before = st.everything();
    assert!(before.iter().any(|(p, _)| p == ".skillc/state.db"), "{before:?}");

    let human = st.diff(&[]);
    assert_eq!(stdout(&human), "no changes\n");
    let d = st.diff_json();
    assert_eq!(d["generator"], "skillc");
    assert_eq!(d["version"], 1);
    assert_eq!(d["previous_compile"], true);
    assert_eq!(d["changes"], json!([]));
    assert_eq!(
        d["counts"],
        json!({"high": 0, "medium": 0, "low": 0, "unchanged": ledger["lessons"].as_array().unwrap().len()})
    );
    // Not a byte of --out, the state store and its lock included, and no file beside them.
    assert_eq!(st.everything(), before);
}

#[test]
fn more_reinforcing_sessions_make_a_new_rule_a_medium_change() {
    let st = Store::with_corpus("diff-new-rule");
    let ledger = st.compile();
    let npm = id_of(&ledger, NPM);
    assert!(!rule(&ledger, &npm), "one session is no rule yet: {ledger:#}");
    let before = st.everything();

    st.second_storefront_session();
    let d = st.diff_json();
    let c = change_of(&d, &npm);
    assert_eq!(c["risk"], "medium", "{c:#}");
    assert_eq!(c["change"], "new-rule");
    assert_eq!(c["domain"], "node");
    assert_eq!(c["scope"], format!("project:{}", skillc::digest::project(WEB)));
    assert_eq!(c["kind"], "do");
    assert_eq!(c["text"], NPM);
    assert_eq!(c["before"]["rule"], false);
    assert_eq!(c["after"]["rule"], true);
    assert_eq!(c["before"]["reinforcement"], 1);
    assert_eq!(c["after"]["reinforcement"], 2);
    assert!(
        c["detail"].as_str().unwrap().contains("reinforcement 1 -> 2"),
        "{c:#}"
    );
    // No rule is lost, so nothing is high.
    assert_eq!(d["counts"]["high"], 0, "{d:#}");
    assert_eq!(d["counts"]["medium"], 1, "{d:#}");

    let human = stdout(&st.diff(&[]));
    assert!(human.starts_with("medium (1):\n"), "{human}");
    assert!(
        human.contains(&format!("  new-rule        {npm} node project:")),
        "{human}"
    );
    assert!(human.contains("reinforcement 1 -> 2"), "{human}");
    assert!(
        human.contains("\n1 lesson change: 0 high, 1 medium, 0 low; "),
        "{human}"
    );
    // The project's node rules appear in a SKILL.md of their own.
    let skill = format!("projects/{}/node/SKILL.md", skillc::digest::project(WEB));
    assert!(
        d["files"]["write"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == skill.as_str()),
        "{d:#}"
    );
    assert_eq!(d["files"]["remove"], json!([]));
    assert_eq!(st.everything(), before, "diff wrote to --out");

    // Same at any thread count, byte for byte.
    let one = st.diff(&["--format", "json", "--threads", "1"]);
    let four = st.diff(&["--format", "json", "--threads", "4"]);
    assert_eq!(one.stdout, four.stdout);

    // The compile does what diff said, and then there is nothing left to change.
    let o = skillc(&["compile", &st.records(), "--out", &st.out(), "--format", "json"]);
    let summary = json(&o);
    assert_eq!(
        summary["changed_files"],
        d["files"]["write"].as_array().unwrap().len(),
        "{summary:#}"
    );
    assert_eq!(summary["removed_files"], 0);
    let after = read_json(&st.s.path("out/ledger.json"));
    assert!(rule(&after, &npm), "{after:#}");
    assert_eq!(stdout(&st.diff(&[])), "no changes\n");
}

#[test]
fn a_rule_whose_records_are_gone_is_a_high_change() {
    let st = Store::with_corpus("diff-rule-gone");
    let ledger = st.compile();
    let terraform = id_of(&ledger, TERRAFORM);
    assert!(rule(&ledger, &terraform), "{ledger:#}");
    let before = st.everything();

    std::fs::remove_file(st.s.path("records/infra.jsonl")).unwrap();
    let d = st.diff_json();
    let c = change_of(&d, &terraform);
    assert_eq!(c["risk"], "high", "{c:#}");
    assert_eq!(c["change"], "rule-gone");
    assert_eq!(c["domain"], "terraform");
    assert_eq!(c["scope"], "global");
    assert_eq!(c["text"], TERRAFORM);
    assert_eq!(c["after"], Value::Null);
    assert_eq!(c["now"], Value::Null);
    assert_eq!(d["counts"]["high"], 1, "{d:#}");
    // The rest of the ledger stays as it was.
    let pytest = id_of(&ledger, PYTEST);
    assert!(
        !(d["changes"].as_array().unwrap().iter()).any(|c| c["id"] == pytest),
        "{d:#}"
    );

    let human = stdout(&st.diff(&[]));
    assert!(human.starts_with("high (1):\n  rule-gone "), "{human}");
    assert!(
        human.contains(&format!(
            "{terraform} terraform global do \"Run terraform init -upgrade"
        )),
        "{human}"
    );
    assert!(
        human.contains("its records are no longer in the input"),
        "{human}"
    );
    assert!(
        human.contains("\n1 lesson change: 1 high, 0 medium, 0 low; 3 lessons unchanged\n"),
        "{human}"
    );
    // The global terraform skill goes with its only rule.
    let remove = d["files"]["remove"].as_array().unwrap();
    assert!(remove.iter().any(|f| f == "terraform/SKILL.md"), "{d:#}");
    assert!(
        human.contains(" and remove 3 files (lessons/global.md, terraform/SKILL.md, "),
        "{human}"
    );
    assert_eq!(st.everything(), before, "diff wrote to --out");

    // The compile agrees: the rule is gone from the ledger.
    let after = st.compile();
    assert!(!(after["lessons"].as_array().unwrap().iter()).any(|l| l["id"] == terraform));
}

#[test]
fn a_retire_in_the_journal_shows_before_the_compile_applies_it() {
    let st = Store::with_corpus("diff-retire");
    let ledger = st.compile();
    let pytest = id_of(&ledger, PYTEST);
    let o = skillc(&[
        "lessons",
        "retire",
        &pytest,
        "--reason",
        "the CI image is writable now",
        "--out",
        &st.out(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = st.everything();

    let d = st.diff_json();
    let c = change_of(&d, &pytest);
    assert_eq!(c["risk"], "high", "{c:#}");
    assert_eq!(c["change"], "rule-retired");
    assert_eq!(c["before"]["status"], "active");
    assert_eq!(c["after"]["status"], "retired");
    assert_eq!(c["after"]["superseded_by"], "retired:user");
    assert!(
        c["detail"].as_str().unwrap().contains("status active -> retired"),
        "{c:#}"
    );
    assert_eq!(st.everything(), before, "diff wrote to the state store");
}

#[test]
fn without_a_previous_compile_every_lesson_is_new_and_no_output_is_made() {
    let st = Store::with_corpus("diff-first");
    let d = st.diff_json();
    assert_eq!(d["previous_compile"], false);
    let changes = d["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 4, "{d:#}");
    assert!(changes.iter().all(|c| c["before"].is_null()), "{d:#}");
    // Two rules (pytest, terraform), two lessons that are not yet.
    let kinds: Vec<(&str, &str)> = (changes.iter())
        .map(|c| (c["risk"].as_str().unwrap(), c["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("medium", "new-rule"),
            ("medium", "new-rule"),
            ("low", "new-lesson"),
            ("low", "new-lesson")
        ]
    );
    assert_eq!(changes[0]["domain"], "python");
    assert_eq!(changes[1]["domain"], "terraform");
    let human = stdout(&st.diff(&[]));
    assert!(human.starts_with("no previous compile in "), "{human}");
    assert!(!st.s.path("out").exists(), "diff made the output directory");
}

#[test]
fn stop_after_is_no_option_of_diff() {
    let st = Store::with_corpus("diff-stop-after");
    let o = st.run_diff(&["--stop-after", "gate"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unexpected argument '--stop-after'"),
        "{}",
        stderr(&o)
    );
    assert!(!st.s.path("out").exists());

    let help = stdout(&skillc(&["diff", "--help"]));
    assert!(!help.contains("--stop-after"), "{help}");
    assert!(help.contains("--fail-on <RISK>"), "{help}");
    assert!(help.contains("\n  3  --fail-on was given"), "{help}");
    // compile still has it.
    let help = stdout(&skillc(&["compile", "--help"]));
    assert!(help.contains("--stop-after <STOP_AFTER>"), "{help}");
}

#[test]
fn the_gate_passes_every_level_when_nothing_changes() {
    let st = Store::with_corpus("diff-gate-same");
    st.compile();
    assert_eq!(
        st.gates(),
        [("high", Some(0)), ("medium", Some(0)), ("low", Some(0))]
    );
}

#[test]
fn a_new_rule_fails_the_medium_gate_but_not_the_high_one() {
    let st = Store::with_corpus("diff-gate-new-rule");
    st.compile();
    st.second_storefront_session();
    assert_eq!(
        st.diff_json()["counts"],
        json!({"high": 0, "medium": 1, "low": 0, "unchanged": 3})
    );
    assert_eq!(
        st.gates(),
        [("high", Some(0)), ("medium", Some(3)), ("low", Some(3))]
    );
}

#[test]
fn a_rule_gone_or_retired_fails_the_high_gate() {
    let st = Store::with_corpus("diff-gate-gone");
    let ledger = st.compile();
    std::fs::remove_file(st.s.path("records/infra.jsonl")).unwrap();
    let d = st.diff_json();
    assert_eq!(change_of(&d, &id_of(&ledger, TERRAFORM))["change"], "rule-gone");
    assert_eq!(
        d["counts"],
        json!({"high": 1, "medium": 0, "low": 0, "unchanged": 3})
    );
    assert_eq!(
        st.gates(),
        [("high", Some(3)), ("medium", Some(3)), ("low", Some(3))]
    );

    // A retire in the journal is high too, before the compile applies it.
    let st = Store::with_corpus("diff-gate-retired");
    let pytest = id_of(&st.compile(), PYTEST);
    let o = skillc(&["lessons", "retire", &pytest, "--out", &st.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(change_of(&st.diff_json(), &pytest)["change"], "rule-retired");
    assert_eq!(st.gates()[0], ("high", Some(3)));
}

#[test]
fn a_failed_gate_says_more_than_strict() {
    let st = Store::with_corpus("diff-gate-strict");
    st.compile();
    // A new rule, and a record cut off mid-line.
    st.second_storefront_session();
    std::fs::write(
        st.s.path("records/agent-2.jsonl"),
        "{\"id\": \"agent-0081\", \"recorded_at\": \"2026-11-04T\n",
    )
    .unwrap();
    let code = |extra: &[&str]| st.run_diff(extra).status.code();
    assert_eq!(code(&["--strict"]), Some(1));
    assert_eq!(code(&["--strict", "--fail-on", "high"]), Some(1));
    assert_eq!(code(&["--strict", "--fail-on", "medium"]), Some(3));
    assert_eq!(code(&["--fail-on", "medium"]), Some(3));
}

#[test]
fn an_edited_rule_is_one_medium_change_naming_its_new_wording() {
    let st = Store::with_corpus("diff-edit");
    let ledger = st.compile();
    let cargo_id = id_of(&ledger, CARGO);
    let terraform = id_of(&ledger, TERRAFORM);
    let wording = "Run terraform init -upgrade after changing a provider version constraint; plan refuses a stale .terraform.lock.hcl";
    let o = skillc(&[
        "lessons",
        "edit",
        &terraform,
        "--text",
        wording,
        "--out",
        &st.out(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let d = st.diff_json();
    let changes = d["changes"].as_array().unwrap();
    // One entry for the edit, on the id agents hold; the new wording is not listed again.
    assert_eq!(changes.len(), 1, "{d:#}");
    let c = change_of(&d, &terraform);
    assert_eq!(c["risk"], "medium");
    assert_eq!(c["change"], "rule-edited");
    assert_eq!(c["after"]["status"], "superseded");
    let now = c["now"].as_str().unwrap().to_string();
    assert_ne!(now, terraform);
    assert_eq!(c["detail"], format!("edited as {now}: \"{wording}\""));
    assert!(!changes.iter().any(|c| c["id"] == cargo_id));

    // The compile makes the new wording the rule diff named.
    let after = st.compile();
    assert_eq!(id_of(&after, wording), now);
    assert!(rule(&after, &now), "{after:#}");
}

#[test]
fn a_rule_re_founded_by_a_back_filled_session_is_a_medium_change() {
    let st = Store::with_corpus("diff-refound");
    let ledger = st.compile();
    let pytest = id_of(&ledger, PYTEST);
    // An agent's older session arrives late: it founds the lesson now, under a new id.
    st.add(
        "billing-backfill.jsonl",
        &[learned(
            "bill-0398",
            "2026-10-30T13:05:00Z",
            "python",
            BILLING,
            "tests failed writing .pytest_cache in the CI container",
            PYTEST,
        )],
    );
    let d = st.diff_json();
    let c = change_of(&d, &pytest);
    assert_eq!(c["risk"], "medium", "{c:#}");
    assert_eq!(c["change"], "rule-refounded");
    let now = c["now"].as_str().unwrap().to_string();
    assert_eq!(c["detail"], format!("re-founded as {now}"));
    assert!(
        !(d["changes"].as_array().unwrap().iter()).any(|c| c["id"] == now),
        "{d:#}"
    );
    assert_eq!(d["counts"]["high"], 0, "{d:#}");

    let after = st.compile();
    assert_eq!(id_of(&after, PYTEST), now);
    assert!(rule(&after, &now), "{after:#}");
}

#[test]
fn a_global_rule_demoted_to_one_project_is_a_high_change() {
    const DATA: &str = "git@github.com:acme/data-pipelines.git";
    let st = Store::with_corpus("diff-demote");
    let ledger = st.compile();
    let terraform = id_of(&ledger, TERRAFORM);
    // Confirmed in infra-live, then contradicted from a third project.
    st.add(
        "sessions.jsonl",
        &[
            json!({"id": "infra-2231", "recorded_at": "2026-11-04T09:40:00Z", "domains": ["terraform"],
                   "project": INFRA, "task": "bump the azurerm provider", "outcome": "succeeded",
                   "in_play": [&terraform]}),
            json!({"id": "data-0907", "recorded_at": "2026-11-05T15:12:00Z", "domains": ["terraform"],
                   "project": DATA, "task": "plan the warehouse module after the provider bump",
                   "outcome": "failed", "in_play": [&terraform]}),
        ],
    );
    let d = st.diff_json();
    assert_eq!(d["changes"].as_array().unwrap().len(), 1, "{d:#}");
    let c = change_of(&d, &terraform);
    assert_eq!(c["risk"], "high", "{c:#}");
    assert_eq!(c["change"], "rule-demoted");
    let infra = format!("project:{}", skillc::digest::project(INFRA));
    assert_eq!(c["scope"], infra.as_str());
    assert_eq!(c["before"]["scope"], "global");
    assert_eq!(c["after"]["rule"], true);
    assert_eq!(
        c["detail"],
        format!("scope global -> {infra}; confidence 0.500 -> 0.400; reinforcement 2 -> 3")
    );
}

#[test]
fn a_state_file_that_is_not_skillcs_stops_diff_and_is_left_alone() {
    let st = Store::with_corpus("diff-foreign");
    let notes = st.s.path("notes.db");
    std::fs::write(&notes, "terraform state lives in s3://acme-tf-state, not here\n").unwrap();
    let (records, out) = (st.records(), st.out());
    let o = skillc(&[
        "diff",
        &records,
        "--out",
        &out,
        "--state",
        notes.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error[U002]: "), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a skillc state store"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "terraform state lives in s3://acme-tf-state, not here\n"
    );
    assert!(!st.s.path("out").exists());
}

/// A skillc that kept the ledger as one text (schema 1) left the store; `compile` upgrades it,
/// but diff reads it as it is, so the first run of a nightly gate after an upgrade needs no
/// ungated compile first.
#[test]
fn a_store_an_older_skillc_wrote_is_diffed_as_it_is_and_left_alone() {
    let st = Store::with_corpus("diff-schema-1");
    let terraform = id_of(&st.compile(), TERRAFORM);
    let current = st.as_schema_1();
    std::fs::remove_file(st.s.path("records/infra.jsonl")).unwrap();
    let before = st.everything();

    let d = st.diff_json();
    assert_eq!(change_of(&d, &terraform)["change"], "rule-gone", "{d:#}");
    assert_eq!(
        d["counts"],
        json!({"high": 1, "medium": 0, "low": 0, "unchanged": 3})
    );
    // The same diff as from the store in rows.
    assert_eq!(
        st.diff_json(),
        json(&st.diff(&["--format", "json", "--state", &current]))
    );
    assert_eq!(st.gates()[0], ("high", Some(3)));
    assert_eq!(st.everything(), before, "diff wrote to the older store");

    // The compile upgrades the store and reports what diff said.
    let o = skillc(&["compile", &st.records(), "--out", &st.out(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gone = &json(&o)["gone_lessons"];
    assert_eq!(gone.as_array().unwrap().len(), 1, "{gone:#}");
    assert_eq!(gone[0]["id"], terraform.as_str());
    assert_eq!(stdout(&st.diff(&[])), "no changes\n");
}

/// A pinned rule whose founder's record is gone since an older skillc's compile: diff names
/// the id it goes on as, and the compile that upgrades the store finds the re-founding in the
/// old ledger (S004), so the pin follows the rule to its new id.
#[test]
fn a_rule_re_founded_since_an_older_skillcs_compile_is_followed() {
    let st = Store::with_corpus("diff-schema-1-refound");
    let pytest = id_of(&st.compile(), PYTEST);
    let o = skillc(&["lessons", "pin", &pytest, "--out", &st.out()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let current = st.as_schema_1();
    // The founder's session is gone from the records; a later one supports the rule instead.
    st.add(
        "billing.jsonl",
        &[
            learned(
                "bill-0419",
                "2026-11-03T16:40:00Z",
                "python",
                BILLING,
                "make the nightly test job pass in the hardened runner",
                PYTEST,
            ),
            learned(
                "bill-0431",
                "2026-11-05T08:12:00Z",
                "python",
                BILLING,
                "the release pipeline's pytest step failed on a read-only checkout",
                PYTEST,
            ),
        ],
    );

    let d = st.diff_json();
    let c = change_of(&d, &pytest);
    assert_eq!(c["risk"], "medium", "{d:#}");
    assert_eq!(c["change"], "rule-refounded", "{d:#}");
    let now = c["now"].as_str().unwrap().to_string();
    assert_ne!(now, pytest);
    assert_eq!(d["counts"]["high"], 0, "{d:#}");
    assert_eq!(
        st.diff_json(),
        json(&st.diff(&["--format", "json", "--state", &current]))
    );

    let after = st.compile();
    assert_eq!(id_of(&after, PYTEST), now);
    let lesson = (after["lessons"].as_array().unwrap().iter()).find(|l| l["id"] == now.as_str());
    assert_eq!(lesson.unwrap()["pinned"], true, "{after:#}");
}

#[test]
fn a_rule_superseded_says_why() {
    let st = Store::with_corpus("diff-superseded-why");
    let ledger = st.compile();
    let terraform = id_of(&ledger, TERRAFORM);
    assert!(rule(&ledger, &terraform), "{ledger:#}");
    // The rule was in front of the agent three times in infra-live, and each plan failed.
    let failed = |id: &str, at: &str, task: &str| {
        json!({"id": id, "recorded_at": at, "domains": ["terraform"], "project": INFRA,
               "task": task, "outcome": "failed", "in_play": [&terraform]})
    };
    st.add(
        "sessions.jsonl",
        &[
            failed(
                "infra-2240",
                "2026-11-06T10:02:00Z",
                "bump the aws provider to 5.x",
            ),
            failed("infra-2244", "2026-11-07T14:31:00Z", "upgrade the helm provider"),
            failed("infra-2251", "2026-11-09T08:47:00Z", "pin the random provider"),
        ],
    );
    let d = st.diff_json();
    let c = change_of(&d, &terraform);
    assert_eq!(c["risk"], "high", "{c:#}");
    assert_eq!(c["change"], "rule-superseded", "{c:#}");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "status active -> superseded (confidence fell below the floor after contradictions); "
        ),
        "{detail}"
    );
    // The same words the compile then writes into the ledger.
    st.compile();
    let after = read_json(&st.s.path("out/ledger.json"));
    let l = (after["lessons"].as_array().unwrap().iter()).find(|l| l["id"] == terraform.as_str());
    assert_eq!(
        l.unwrap()["reason"],
        "confidence fell below the floor after contradictions"
    );
}
