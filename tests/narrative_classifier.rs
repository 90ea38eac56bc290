//! The narrative gate against a labelled set of realistic do-candidate texts
//! (`tests/data/narrative.jsonl`) and a second set written before the signals for agents'
//! third-person, present-perfect and status reports and for adjectival participles were tuned
//! (`tests/data/narrative_holdout.jsonl`: odd lines tuned on, even lines held out): at least
//! 90% right per class in each, and the DESIGN §5.4 examples and reported misreads exactly.
//! Run with `--nocapture` to see the per-class accuracy and every miss.

use skillc::narrative::Narrative;

const RULES: &str = include_str!("../rules/narrative.yaml");
const DATA: &str = include_str!("data/narrative.jsonl");
const HOLDOUT: &str = include_str!("data/narrative_holdout.jsonl");
const PROBE: &str = include_str!("data/narrative_probe.jsonl");
const FRESH: &str = include_str!("data/narrative_fresh.jsonl");
const FRESH2: &str = include_str!("data/narrative_fresh2.jsonl");
const FRESH3: &str = include_str!("data/narrative_fresh3.jsonl");
const FRESH4: &str = include_str!("data/narrative_fresh4.jsonl");
const FRESH5: &str = include_str!("data/narrative_fresh5.jsonl");
const FRESH6: &str = include_str!("data/narrative_fresh6.jsonl");
const FRESH7: &str = include_str!("data/narrative_fresh7.jsonl");
const FRESH8: &str = include_str!("data/narrative_fresh8.jsonl");
const FRESH9: &str = include_str!("data/narrative_fresh9.jsonl");
const FRESH10: &str = include_str!("data/narrative_fresh10.jsonl");
const FRESH11: &str = include_str!("data/narrative_fresh11.jsonl");
const FRESH12: &str = include_str!("data/narrative_fresh12.jsonl");
const FRESH13: &str = include_str!("data/narrative_fresh13.jsonl");
const FRESH14: &str = include_str!("data/narrative_fresh14.jsonl");

fn classifier() -> Narrative {
    Narrative::from_yaml(RULES).expect("rules/narrative.yaml is valid")
}

/// Each text is read as one incident's story (`story`) or as a rule, and the signal named
/// beside it is among the reasons.
fn reads_as(n: &Narrative, story: bool, cases: &[(&str, &str)]) {
    for (text, signal) in cases {
        let c = n.classify(text);
        assert_eq!(c.narrative, story, "{text} {c:?}");
        assert!(c.signals.iter().any(|s| s == signal), "{text} {c:?}");
    }
}

fn labelled() -> Vec<(String, bool)> {
    parse(DATA)
}

fn parse(data: &str) -> Vec<(String, bool)> {
    data.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            let text = v["text"].as_str().expect("text").to_string();
            let narrative = v["narrative"].as_bool().expect("narrative");
            (text, narrative)
        })
        .collect()
}

#[test]
fn accuracy_per_class_is_at_least_90_percent() {
    let data = labelled();
    assert!(data.len() >= 100, "labelled set has {} sentences", data.len());
    let failures = per_class("narrative.jsonl", &data, 40);
    assert!(failures.is_empty(), "{failures:?}");
}

/// The second set, whole and by halves (odd lines were tuned on, even lines were not).
#[test]
fn holdout_accuracy_per_class_is_at_least_90_percent() {
    let failures = whole_and_halves("holdout", &parse(HOLDOUT), 240);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A third set, written by a tester on unseen ecosystems before the signals for imperatives
/// beyond the common ones, `-eed` verbs, base-form past verbs ("Reset … and reran …") and
/// measured changes were tuned: odd lines tuned on, even lines held out.
#[test]
fn probe_accuracy_per_class_is_at_least_90_percent() {
    let failures = whole_and_halves("probe", &parse(PROBE), 200);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A fourth set, written before it was ever classified, on ecosystems the others barely touch
/// (Go, JVM, .NET, Rails, Laravel, Xcode, Terraform, Ansible, Actions, Kafka, Redis, shell,
/// security) and on hard shapes: noun-verbs that open a rule ("Lock …", "Cache …"), gerund
/// subjects, passives, terse notes, and stories with no first person or told in the present.
/// Odd lines tuned on, even lines held out.
#[test]
fn fresh_accuracy_per_class_is_at_least_90_percent() {
    let failures = whole_and_halves("fresh", &parse(FRESH), 160);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A fifth set of 156 texts (96 rules, 60 stories), written before it was ever classified,
/// across Python, Node, Go, Rust, JVM, .NET, Ruby, PHP, Terraform, Kubernetes, Docker,
/// Actions, Postgres, mobile and shell, on the shapes the others missed: release facts with a
/// bare major version ("Gradle 8 removed …", "Xcode 15 dropped …"), gerund subjects with a
/// past tense in a relative clause, version constraints (`~>`, `^`, `>=`), terse notes, and
/// stories told in the present ("The deploy job fails at …"), in the third person, as terse
/// logs, or with hashes, PR numbers, ticket ids and times. Odd lines tuned on (at least 90%
/// per class), even lines held out: they reached 86.7% of stories and 95.8% of rules, and
/// must stay at 83% or more.
#[test]
fn fresh2_accuracy_per_class() {
    let failures = whole_and_halves_at("fresh2", &parse(FRESH2), 150, 55, 830);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A sixth set of 163 texts (82 stories, 81 rules), written before it was ever classified,
/// across twenty ecosystems, with stories told in the present without a failure verb ("The
/// PHP-FPM pool on web-2 is maxed out …"), terse status lines, rules stated as facts and
/// rules that cite a past event. It measures the gate rather than tuning it: signals tuned on
/// its odd lines (a named host, a named pipeline part, counted machines, a red build, "after
/// the X bump") took that half's stories from 76.7% to 100% and left the held-out half's
/// where they were (66.6%), so they were not kept. The gate reads 71.9% of its stories and
/// 97.5% of its rules right; the floor (70%) sits just below, so that a change that loses
/// ground fails here.
#[test]
fn fresh3_accuracy_per_class() {
    let data = parse(FRESH3);
    assert!(data.len() >= 160, "fresh3 set has {} sentences", data.len());
    let failures = per_class_at("fresh3", &data, 78, 700);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A seventh set of 80 texts (40 stories, 40 rules), written and labelled before it was ever
/// classified: each story paired with a rule on the same subject in the next line ("Turns out
/// the flaky test was caused by a shared temp dir …" / "Give each pytest-xdist worker its own
/// temp directory …"), so a signal that reads the subject rather than the telling shows here.
#[test]
fn fresh4_accuracy_per_class() {
    let data = parse(FRESH4);
    assert!(data.len() >= 80, "fresh4 set has {} sentences", data.len());
    let failures = per_class_at("fresh4", &data, 40, 900);
    assert!(failures.is_empty(), "{failures:?}");
}

/// An eighth set of 90 texts (45 stories, 45 rules, each story paired with a rule on the same
/// subject in the next line), written and labelled before it was ever classified, in voices
/// the others barely have: agents' session summaries ("I've updated …", "## Summary of
/// changes"), commit messages ("fix(ci): pin …", "Revert "…""), postmortem timelines and
/// headings ("09:40: identified …", "**Root cause:**"), chat status ("heads up: …",
/// "update: canary at 10% …"), ticket comments, terse logs, non-native English, markdown, and
/// rules that tell the incident they came from ("After the outage on 3 May we learned: always
/// …"). Untuned it read 86.6% of its stories and 97.7% of its rules right; tuned (negated
/// pasts, clock times, commit messages, status prefixes, "Land …"), 100% of both.
#[test]
fn fresh5_accuracy_per_class() {
    let data = parse(FRESH5);
    assert!(data.len() >= 90, "fresh5 set has {} sentences", data.len());
    let failures = per_class_at("fresh5", &data, 45, 930);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A ninth set of 40 texts (20 story/rule pairs) in the same voices on other ecosystems
/// (Gradle, Xcode, Rails, nginx, Ansible, Elasticsearch, Lambda, MySQL, Redis, Vite, GCP),
/// written and labelled after the tuning on `fresh5` and before it was ever classified: a
/// held-out check of that tuning. It read 95% of each class right; the two misses (a bold
/// postmortem heading, "- Bump Xcode …") were then fixed in the general case.
#[test]
fn fresh6_accuracy_per_class() {
    let data = parse(FRESH6);
    assert!(data.len() >= 40, "fresh6 set has {} sentences", data.len());
    let failures = per_class_at("fresh6", &data, 20, 900);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A tenth set of 52 texts (26 story/rule pairs), written and labelled before it was ever
/// classified: bug reports' reproduction steps, present-tense state stories ("The nightly
/// backup job is failing because the disk is full, so I'm pruning …"), session summaries,
/// postmortem timelines, tickets, terse logs and non-native English. Untuned it read 69.2%
/// of its stories and all its rules right; tuned (a bug report's reproduction heading,
/// report headings such as "Bug:" and "From the ticket:", a definite subject in the present
/// progressive, "keep …-ing", "right now", "turns out", "someone changed"), 96.1% and 100%.
#[test]
fn fresh7_accuracy_per_class() {
    let data = parse(FRESH7);
    assert!(data.len() >= 52, "fresh7 set has {} sentences", data.len());
    let failures = per_class_at("fresh7", &data, 26, 900);
    assert!(failures.is_empty(), "{failures:?}");
}

/// An eleventh set of 60 texts (30 story/rule pairs), written and labelled before it was ever
/// classified: databases, CI pipelines, mobile, data engineering, security and frontend, in
/// agents' session summaries, postmortems, tickets, terse logs, Slack messages and non-native
/// English, with present-tense state stories ("Our Redis memory is at 98% …", "The nightly
/// Spark job reads 40 000 tiny parquet files …") and "so what happens is …" explanations.
/// Untuned it read 73.3% of its stories and 96.6% of its rules right; with the walk-through
/// of one failure ("what happens is …"), a log line's level and timestamp, "since the last
/// release" and three instruction verbs ("Assign …", "Monitor …", "Tune …"), 86.6% and 100%.
/// The stories it still misses are present-tense states that name no failure ("The nightly
/// Spark job reads 40 000 tiny parquet files …"), which read as general facts.
#[test]
fn fresh8_accuracy_per_class() {
    let data = parse(FRESH8);
    assert!(data.len() >= 60, "fresh8 set has {} sentences", data.len());
    let failures = per_class_at("fresh8", &data, 30, 830);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A twelfth set of 68 texts (34 story/rule pairs), written and labelled before it was ever
/// classified, in voices the others barely have: coding agents' session summaries ("I updated
/// … and verified …", "Changes made:"), commit messages with a body, incident timelines with
/// timestamps, code-review comments, runbook steps, non-native English, rules written as
/// questions or checklists, and rules whose reason is a past incident ("…, because last time
/// someone applied from the staging workspace it deleted …"). Untuned it read 85.2% of its
/// stories and 97% of its rules right; with the present cause of one setup's state
/// (`state-cause`), unticked checklist boxes, an opening phrase whose pronoun subject keeps its
/// verb ("after I increase memory"), irregular pasts with an object ("held a lock") and "so the
/// thing is", 94.1% and 100%. The two stories it still misses tell a present state with a
/// named tool or "every request" as subject, which read as general facts.
#[test]
fn fresh9_accuracy_per_class() {
    let data = parse(FRESH9);
    assert!(data.len() >= 68, "fresh9 set has {} sentences", data.len());
    let failures = per_class_at("fresh9", &data, 34, 900);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A thirteenth set of 28 texts (14 story/rule pairs), written and labelled after the tuning
/// on `fresh9` and before it was ever classified: present-tense states with their cause, rules
/// stated as facts with a reason, checklists ticked and unticked, opening phrases with a
/// pronoun. A held-out check of that tuning: the gate before it read 50% of the stories and
/// 92.9% of the rules right, after it 85.7% and 100%; the two misses ("because its disk is
/// full", a checklist with ticked boxes) were then fixed in the general case.
#[test]
fn fresh10_accuracy_per_class() {
    let data = parse(FRESH10);
    assert!(data.len() >= 28, "fresh10 set has {} sentences", data.len());
    let failures = per_class_at("fresh10", &data, 14, 900);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A fourteenth set of 124 texts (61 stories, 63 rules), written and labelled by DESIGN's
/// definition before it was ever classified, as coding agents fill `lesson` and
/// `breakthrough`: rules as imperatives, "X must Y", "prefer X over Y", "X, not Y", "X breaks
/// Y unless Z", noun phrases ("Idempotent migrations only."), questions, bullets, non-native
/// English and a past-tense reason ("it was removed from setuptools in v72"); stories as commit
/// subjects, changelog lines, "Root cause: …", "Turned out …", "All 42 tests pass after …",
/// bullets and one long session summary. A story followed by the lesson drawn from it ("Fixed
/// … by mocking the clock. Always inject time …") has an instruction, so by DESIGN it is a
/// rule. On main it read 93.4% of the stories and 96.8% of the rules right (precision 96.6%,
/// recall 93.4%); with the shapes below, 100% of both.
#[test]
fn fresh11_accuracy_per_class() {
    let data = parse(FRESH11);
    assert!(data.len() >= 124, "fresh11 set has {} sentences", data.len());
    let failures = per_class_at("fresh11", &data, 61, 1000);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A fifteenth set of 32 texts (16 story/rule pairs), written and labelled after the tuning on
/// `fresh11` and before it was ever classified: Aider, OpenHands and Cursor sessions, a chore
/// commit, "the real culprit: …", "Everything green after …". A held-out check of that
/// tuning, which it did not move: main and the tuned gate both read 81.2% of its stories and
/// all its rules right. Its three misses were then fixed in the general case: a commit
/// message outweighs its imperative and the `no-instruction` that withholds, a heading "the
/// culprit:" names a found cause, and "green after …" is a status like "works after …".
#[test]
fn fresh12_accuracy_per_class() {
    let data = parse(FRESH12);
    assert!(data.len() >= 32, "fresh12 set has {} sentences", data.len());
    let failures = per_class_at("fresh12", &data, 16, 1000);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A sixteenth set of 124 texts (60 stories, 64 rules), written and labelled by DESIGN's
/// definition before it was ever classified, in shapes the others lack: review comments
/// ("nit: prefer …", "Blocking: …"), postmortem bullets ("Impact: …", "Contributing factor:
/// …", "Action item: …"), "TIL …", second-person advice, hedged rules ("Probably should pin
/// …"), questions answered ("Why does … fail? Because …"), "Do: … Don't: …", code-heavy rules,
/// Indian and German English ("Kindly ensure to take …", "Yesterday the build has broken …"),
/// rules with dates, versions and ticket ids, stories told in the present ("Test fails
/// because …; fix is to …") or the passive ("The cache was invalidated on deploy …"), git's
/// merge subject and terse status ("Rollback done, monitoring."). A story followed by the
/// lesson drawn from it is a rule, as in `fresh11`. On main it read 86.6% of the stories and
/// 93.7% of the rules right (precision 92.8%, recall 86.6%); with the shapes in
/// `politeness_obligation_merges_done_and_note_speak`, 100% of both.
#[test]
fn fresh13_accuracy_per_class() {
    let data = parse(FRESH13);
    assert!(data.len() >= 124, "fresh13 set has {} sentences", data.len());
    let failures = per_class_at("fresh13", &data, 60, 1000);
    assert!(failures.is_empty(), "{failures:?}");
}

/// A seventeenth set of 122 texts (62 stories, 60 rules), written and labelled by DESIGN's
/// definition before it was ever classified, in registers the others lack: commit-message
/// bodies, Jira/Linear comments, Slack notes ("fwiw: …", "heads up — …"), standups, review
/// nits and questions ("Can we avoid `SELECT *` here? …"), runbook steps, ADR lines
/// ("Decision: …", "Consequences: …"), checklists ("Definition of done: …"), numbered steps,
/// questions that carry a rule, symptom-only reports ("Test fails on CI but passes locally.",
/// a symptom with no cause and no advice is no rule), Spanish, Portuguese, Chinese and
/// Japanese speakers' English, and long sentences that mix a story with a rule. On main it
/// read 79.0% of the stories and 88.3% of the rules right; with the shapes in
/// `headings_suggestions_list_numbers_symptoms_and_ticket_moves`, 95.1% and 100%. The three
/// stories it still misses: a symptom with a "when" clause ("The app crashes on Android 14
/// when the camera permission is denied", read as a condition), a verbless note
/// ("Intermittent 504s from the gateway, …") and a non-native "after add the defer close it
/// is ok", whose "after add the defer" reads as an opening phrase before "close it".
#[test]
fn fresh14_accuracy_per_class() {
    let data = parse(FRESH14);
    assert!(data.len() >= 122, "fresh14 set has {} sentences", data.len());
    let failures = per_class_at("fresh14", &data, 60, 950);
    assert!(failures.is_empty(), "{failures:?}");
}

/// Shapes from the seventeenth set, each general: a heading that opens a procedure, a
/// requirement or a decision ("Definition of done:", "Acceptance criteria:", "Decision:") is
/// an instruction whatever tense its items read in; a list's number in parentheses opens a
/// clause, and a question that suggests a step ("Can we avoid …?", "Why not just pin …?")
/// opens an instruction; "review" with its object is one; a symptom with no cause and no
/// advice is one report's (fails here but passes there, what users report, a blank screen,
/// figures that don't match), so is a ticket's move in its workflow, a request for help, a
/// dependency bumped from one version to another, "suddenly", and the named runners or pods
/// it happened on.
#[test]
fn headings_suggestions_list_numbers_symptoms_and_ticket_moves() {
    let n = classifier();
    reads_as(
        &n,
        true,
        &[
            ("Login works in Chrome but breaks in Firefox 125.", "symptom"),
            (
                "Customers are reporting 502s on checkout since the 14:00 deploy.",
                "symptom",
            ),
            (
                "Support reported duplicate emails from the password-reset flow.",
                "symptom",
            ),
            ("Revenue totals don't match the finance report for Q3.", "symptom"),
            (
                "Settings page renders a blank screen after login on iPad.",
                "symptom",
            ),
            (
                "Anyone else hitting `ECONNRESET` from the npm registry?",
                "incident-status",
            ),
            (
                "Any ideas why `pnpm install` ignores the overrides field?",
                "incident-status",
            ),
            ("Marking as duplicate of ENG-3120.", "incident-status"),
            ("Bumps axios from 1.6.2 to 1.7.4.", "measured-change"),
            (
                "`make build` is suddenly failing on every branch.",
                "incident-words",
            ),
            ("Jest hangs forever on the ARM64 runners.", "incident-words"),
            (
                "Heap usage on the billing worker pods climbs about 50 MB an hour.",
                "incident-words",
            ),
        ],
    );
    reads_as(
        &n,
        false,
        &[
            (
                "Definition of done: PR reviewed, docs updated, feature flag removed.",
                "procedure-heading",
            ),
            (
                "Exit criteria: error rate under 0.1% for a week, dashboards updated.",
                "procedure-heading",
            ),
            (
                "Acceptance criteria: the export endpoint returns 202 with the job id.",
                "procedure-heading",
            ),
            (
                "Decision: we will vendor the protobuf definitions in each service.",
                "procedure-heading",
            ),
            (
                "Can we avoid the global lock here? Two workers already wait on it under load.",
                "imperative-start",
            ),
            (
                "Why not just pin the runner image? We lost a day when ubuntu-latest moved to 24.04.",
                "imperative-start",
            ),
            (
                "1) Stop the ingest worker. 2) Delete the stuck rows from `outbox`. 3) Start it again and watch the lag.",
                "imperative-start",
            ),
            (
                "fyi: `helm template` doesn't contact the cluster, review the rendered manifests before trusting a lookup.",
                "imperative-start",
            ),
        ],
    );
    // A rule that starts from a symptom, names an upgrade path or a checklist of one change
    // stays what it is.
    for text in [
        "When a test passes locally but fails on CI, check the TZ variable first.",
        "If users report stale prices, purge the CDN cache before touching the service.",
        "Upgrading from 2.7.1 to 3.0.0 requires running the migration script first.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
    let c = n.classify("Checklist for PR #5120: migrations reviewed ✓, rollback plan ✓ — ready to ship.");
    assert!(c.narrative, "{c:?}");
}

/// Shapes from the sixteenth set, each general: "please"/"kindly" before a verb leaves it an
/// instruction; "it is mandatory/important to …" is an obligation; a `finally` block is no
/// time word; git's merge subject is a commit message; "X done" and "Seems like the …" are
/// one incident's status, "Contributing factor:" a postmortem heading; an opening "since …"
/// may date a present failure; note-speak drops the article before a project part or names
/// a test ("Test fails because the fixture …"); a later sentence that opens with a verb of
/// instruction ("… Check the server log …") is the lesson drawn; and a "when" clause in the
/// present passive is a condition.
#[test]
fn politeness_obligation_merges_done_and_note_speak() {
    let n = classifier();
    reads_as(
        &n,
        true,
        &[
            (
                "Merge pull request #4412 from acme/fix-invoice-rounding",
                "commit-message",
            ),
            ("Migration complete, watching replication lag.", "incident-status"),
            (
                "Looks like the cache key ignores the lockfile hash.",
                "incident-status",
            ),
            (
                "Contributing factors: no alert on queue depth and a stale runbook.",
                "incident-status",
            ),
            (
                "Since the migration to Gradle 8 the builds are failing on the old plugin.",
                "present-incident",
            ),
            (
                "Worker dies because the task has no memory limit set in the chart.",
                "state-cause",
            ),
            (
                "`test_refund_partial` fails on CI because the fixture has a hard-coded date.",
                "state-cause",
            ),
        ],
    );
    reads_as(
        &n,
        false,
        &[
            (
                "Kindly take a backup of the schema prior to running the downgrade, else data will be lost.",
                "imperative-start",
            ),
            (
                "It is important to set a statement timeout on every pooled connection.",
                "modal",
            ),
            (
                "Wasted the morning on a 502 that was really the app crashing. Check the app log before blaming the proxy.",
                "sentence-instruction",
            ),
            (
                "A release is finished only when the tag is pushed and the changelog is published.",
                "condition-passive",
            ),
        ],
    );
    for text in [
        "Definition of done: tests pass and the changelog has an entry.",
        "Seems like the safest option is to pin the image by digest.",
        "Close cursors in a `finally` block, not after the loop.",
        "Since Go 1.22 the loop variable is per-iteration, so the closure capture bug is gone.",
        "Build caching works because the layers are content-addressed.",
        "`npm ci` fails because the lockfile is out of sync with package.json.",
        "Merge branches with --no-ff so the history shows each feature.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
}

/// Shapes from the fourteenth set, each general: a count of tests that pass is one run's
/// result (and "all 42" counts, it is no generic subject); a definite subject in the past
/// progressive tells what one thing was doing ("the stale asset was coming from the CDN");
/// "the problem was …" names the cause one incident found; a value back to where it was is a
/// measured outcome; a release's history may name its product with "from" and its version as
/// a bare "v72", and "was fixed in requests 2.32" is such history too; a lesson in a sentence
/// of its own after the story ("… . Never call …") is an instruction a story does not give.
#[test]
fn counted_results_past_progressives_found_causes_and_lessons_after_a_story() {
    let n = classifier();
    reads_as(
        &n,
        true,
        &[
            ("All 118 specs green after the rebase.", "incident-status"),
            (
                "The migration was holding an exclusive lock on users for the whole backfill.",
                "past-progressive",
            ),
            (
                "Nope, the old container was still serving traffic after the deploy.",
                "past-progressive",
            ),
            (
                "The problem was the default timeout of zero in the Go client.",
                "cause-found",
            ),
            (
                "Honestly the real issue was a missing trailing slash in the proxy_pass URL.",
                "cause-found",
            ),
            (
                "Queue depth dropped back to 12 after we added two consumers.",
                "past-object",
            ),
        ],
    );
    for text in [
        "If the deploy was running when the node drained, rerun it.",
        "The problem with global fixtures is that they leak state between tests.",
        "The bug was fixed in requests 2.32, so upgrade rather than patching.",
        "Avoid `imp`; it was removed from the standard library in v3.12.",
        "Don't use `--shamefully-hoist` with pnpm; the flag was dropped from pnpm in v9.",
        "Run the 3 smoke tests before each deploy.",
        "Pods scaled down to 0 lose their in-memory cache.",
        "Fixed the N+1 in the orders view. Never call a query inside a serializer method.",
        "Investigated for an hour. Don't trust the cached build status on the PR page.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
}

/// A present-tense story gives the cause of one setup's state: a definite subject ("The build",
/// "Our nightly export") whose "because"/"since" names what is wrong now, with a definite
/// subject or a file name and a present verb. A rule's reason comes after an instruction, or
/// is stated of a tool or a kind of thing ("Alembic autogenerate misses …", "The requests
/// library …", "The first build after a clean checkout is slow …" has a generic cause too, yet
/// stays below the threshold); those stay rules.
#[test]
fn the_present_cause_of_one_setups_state_is_a_story() {
    let n = classifier();
    for text in [
        "The build is red because ci.yml pins node 16 and the runner has 20",
        "Now the service returns 502s since nginx.conf points at the old port",
        "The checkout service returns stale prices because the Redis cache has no TTL.",
        "The nightly export skips rows since the cursor query uses OFFSET.",
        "The login page loops back to itself because the session cookie has SameSite=Strict on the new domain.",
        "The worker pool sits idle since the queue URL in the env file references the old region.",
        "The Jenkins agent is offline because its disk is full of old workspaces.",
        "The React app re-renders the whole table on every keystroke, because the filter object is recreated in each render of the parent.",
        "So the thing is, pytest collects `tests/conftest.py` twice because there are two rootdirs in the repo.",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "{text} {c:?}");
    }
    for text in [
        "Pin the Node version in ci.yml, because the runner image has a newer one.",
        "Set max.poll.interval.ms above your longest batch, because the broker evicts slow consumers.",
        "Alembic autogenerate misses server defaults because the comparison ignores them.",
        "Ruff reports E501 on long URLs since the line-length rule counts every character.",
        "The requests library hangs forever because the default timeout is None.",
        "The planner ignores the index since the statistics are usually stale after a bulk load.",
        "Spring's `@Transactional` has no effect on private methods, because the proxy can't intercept them.",
        "Mark side-effect imports with `# noqa: F401` before running `ruff --fix`, since the autofix deletes imports that look unused.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
}

/// Shapes from the twelfth set, each general: an unticked checklist box is a step to take,
/// whatever tense its item reads in; a pronoun subject in an opening phrase keeps its verb
/// ("after I increase memory", not the imperative "Increase"), while "Before we release check
/// …" is still an instruction; an irregular past with its object is a report ("held a lock",
/// "left the table"); a text that opens with "so the thing is" or "so basically" walks
/// through one failure.
#[test]
fn checklists_pronoun_leads_irregular_pasts_and_walk_throughs() {
    let n = classifier();
    for text in [
        "Yesterday I was try to deploy the lambda but it give timeout error, after I increase memory to 1024 it is working.",
        "An analytics query without a timeout held a lock on the orders table for an hour, and checkout writes queued behind it.",
        "The SQL migration 0042_add_status.sql failed halfway and left the table without a primary key.",
        "so the problem is celery retries the task forever",
        "Ok so basically the sidecar starts after the app and every first request gets a connection refused.",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "{text} {c:?}");
    }
    for text in [
        "Release checklist:\n- [ ] CHANGELOG updated\n- [ ] version bumped in pyproject.toml\n- [ ] tag pushed after CI is green",
        "Before merging a dependency bump:\n* [ ] lockfile regenerated with npm 10\n* [ ] changelog of the package read",
        "Before we release check the changelog for breaking changes.",
        "After we rotate a key run the smoke tests against staging.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
    // A ticked box reports what was done, beside unticked ones too: one change's progress.
    for text in [
        "- [x] added the migration\n- [x] updated the fixtures in conftest.py",
        "- [x] bumped the Node image to 20\n- [x] regenerated package-lock.json\n- [ ] still need to fix the flaky e2e test",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "{text} {c:?}");
    }
}

/// `per_class` on a set of at least `len` texts, whole and by halves: odd lines (1st, 3rd, …)
/// were tuned on, even lines held out. Each class must have half of `len` texts in the whole
/// set and a quarter in each half.
fn whole_and_halves(set: &str, data: &[(String, bool)], len: usize) -> Vec<String> {
    whole_and_halves_at(set, data, len, len / 2, 900)
}

/// `whole_and_halves` with each class's least size in the whole set (half of it in each half)
/// and the least accuracy, in per-mille, of the held-out half (the rest must reach 90%).
fn whole_and_halves_at(
    set: &str,
    data: &[(String, bool)],
    len: usize,
    class_min: usize,
    held_permille: usize,
) -> Vec<String> {
    assert!(data.len() >= len, "{set} set has {} sentences", data.len());
    let halve = |odd: bool| -> Vec<(String, bool)> {
        (data.iter().enumerate())
            .filter(|(i, _)| (i % 2 == 0) == odd)
            .map(|(_, x)| x.clone())
            .collect()
    };
    let mut failures = per_class(&format!("{set}, all"), data, class_min);
    failures.extend(per_class(
        &format!("{set}, tuning (odd lines)"),
        &halve(true),
        class_min / 2,
    ));
    failures.extend(per_class_at(
        &format!("{set}, held out (even lines)"),
        &halve(false),
        class_min / 2,
        held_permille,
    ));
    failures
}

/// Prints each class's accuracy and misses; returns the classes below 90% (or with fewer than
/// `min` examples).
fn per_class(set: &str, data: &[(String, bool)], min: usize) -> Vec<String> {
    per_class_at(set, data, min, 900)
}

/// `per_class` with the least accuracy in per-mille: the classes below `permille` fail.
fn per_class_at(set: &str, data: &[(String, bool)], min: usize, permille_min: usize) -> Vec<String> {
    let n = classifier();
    let mut failures = Vec::new();
    for (label, class) in [(true, "narrative"), (false, "rule")] {
        let members: Vec<&(String, bool)> = data.iter().filter(|(_, l)| *l == label).collect();
        let mut right = 0usize;
        for (text, _) in &members {
            let c = n.classify(text);
            if c.narrative == label {
                right += 1;
            } else {
                println!("MISS {set} [{class}] score {} {:?}: {text}", c.score, c.signals);
            }
        }
        let total = members.len();
        // integer per-mille, printed as a percentage with one decimal
        let permille = right * 1000 / total.max(1);
        println!(
            "{set}: {class}: {right}/{total} = {}.{}%",
            permille / 10,
            permille % 10
        );
        if total < min {
            failures.push(format!("{set}: {class}: only {total} examples"));
        } else if right * 1000 < total * permille_min {
            failures.push(format!(
                "{set}: {class}: {right}/{total} below {}.{}%",
                permille_min / 10,
                permille_min % 10
            ));
        }
    }
    failures
}

/// Misreads testers reported on unseen data, each standing for a shape: an -ed word used as an
/// adjective ("Deleted branches still show up …"), a clause-start imperative of a verb no list
/// names ("…; unlock it with …"), a third-person agent report, incident status ("… pass
/// now", "Currently investigating …"), a release's history ("… was removed in Kubernetes
/// 1.16"), a gerund subject's past verb, a noun subject's past verb and object, the machine
/// an incident happened on, and a present passive.
#[test]
fn reported_misreads_exactly() {
    let n = classifier();
    for (text, narrative, signal) in [
        (
            "Deleted branches still show up in git branch -r until you run git fetch --prune.",
            false,
            "participle-adjective",
        ),
        (
            "A job that was cancelled leaves the terraform state lock held; unlock it with terraform force-unlock LOCK_ID.",
            false,
            "clause-imperative",
        ),
        (
            "Agent updated Dockerfile and docker-compose.yml; build now passes.",
            true,
            "agent-report",
        ),
        (
            "Changing line 42 of settings.py makes the tests pass now.",
            true,
            "incident-status",
        ),
        (
            "Currently investigating why the worker pool deadlocks under load.",
            true,
            "incident-status",
        ),
        // "-eed" is no past tense, and an imperative no common list names.
        (
            "Seed the RNG in conftest.py with pytest-randomly 3.15 so failures reproduce.",
            false,
            "imperative-start",
        ),
        (
            "Backfill in batches of 10000 rows with a 100ms sleep between them to keep replication lag under 5s.",
            false,
            "imperative-start",
        ),
        // A verb whose past is its base form, then what happened next.
        (
            "Reset the staging DB and reran the migrations; everything passes now.",
            true,
            "report-base-verb",
        ),
        (
            "Replacing the regex with str.split() cut the parse time from 3s to 200ms.",
            true,
            "measured-change",
        ),
        // A release's history is no incident: its past tense and version say when a kind of
        // thing changed for everyone. Told inside a story, it leaves the story a story.
        (
            "Deployments must use apiVersion apps/v1; extensions/v1beta1 was removed in Kubernetes 1.16.",
            false,
            "release-history",
        ),
        (
            "PodSecurityPolicy was removed in Kubernetes 1.25, so clusters must use Pod Security Admission.",
            false,
            "release-history",
        ),
        (
            "Bumped numpy to 1.26.4; np.float was removed in 1.24 so the import broke.",
            true,
            "report-verb-start",
        ),
        // From the fresh set: stories with no first person and no past verb at a clause's
        // start. A gerund subject with a past verb is a report (a rule's gerund subject takes
        // a present verb: "Running go test -race catches …").
        (
            "Switching the linker to mold cut the build in half.",
            true,
            "gerund-report",
        ),
        // A past verb and its object after a noun subject.
        (
            "The nightly migration locked the orders table for 11 minutes.",
            true,
            "past-object",
        ),
        // An agent's next move, after the present-tense state it found.
        (
            "terraform plan shows 14 resources to replace after the provider upgrade; reverting to 4.67 for now.",
            true,
            "incident-status",
        ),
        // The one machine it happened on.
        (
            "The Android emulator hangs at boot on the ARM runner.",
            true,
            "incident-words",
        ),
        // A present passive says what happens every time; its participle is no report.
        (
            "Dependabot security updates are opened against the default branch only.",
            false,
            "present-passive",
        ),
        // From the fifth set and the misses reported before it: a release fact with a bare
        // major version, a past tense in a relative clause, a version constraint, a compound
        // participle subject, and a story told in the present.
        (
            "Gradle 8 removed the compile configuration.",
            false,
            "release-history",
        ),
        (
            "Running a migration that added a column locks the table.",
            false,
            "no-report",
        ),
        (
            "Lock provider versions with a ~> 5.40 constraint in versions.tf so minor releases come in.",
            false,
            "version-range",
        ),
        (
            "Pinned action versions drift when the upstream tag moves.",
            false,
            "participle-adjective",
        ),
        (
            "Our pinned action version drifted when the maintainer retagged v3 to a new commit.",
            true,
            "first-person",
        ),
        (
            "The deploy job fails at the migrate step; the schema_migrations table has a stale row.",
            true,
            "present-incident",
        ),
        // A bug report's reproduction steps are imperatives that one person followed once.
        (
            "Steps to reproduce:\n1. Check out the release/2.4 branch\n2. Run `cargo test -p ingest`\n3. The parser test panics on an empty line",
            true,
            "bug-report",
        ),
        (
            "To reproduce a flaky pytest failure, run the test with pytest-repeat and --count=50.",
            false,
            "imperative-start",
        ),
        // A state told in the present progressive, after a dash or a clause break, and a
        // report's heading ("Bug:", "From the ticket:").
        (
            "kubectl get pods shows two replicas pending — the cluster autoscaler is refusing to add nodes.",
            true,
            "present-incident",
        ),
        (
            "Our Celery workers keep dropping tasks and the Redis broker is evicting keys.",
            true,
            "present-incident",
        ),
        (
            "Bug: terraform plan wants to replace the RDS instance on every run since the provider upgrade.",
            true,
            "incident-status",
        ),
        (
            "If the helm release is stuck in pending-upgrade, roll it back before upgrading again.",
            false,
            "condition",
        ),
        // A tool's own behaviour is general, whoever meets it.
        (
            "The requests library hangs forever without a timeout.",
            false,
            "no-report",
        ),
        // A participle after a noun subject, and a present passive with a preposition of
        // place, describe a kind of thing: rules.
        (
            "Secrets passed as build args end up in the image history.",
            false,
            "participle-after-noun",
        ),
        (
            "pip install --user is ignored inside a virtualenv.",
            false,
            "present-passive",
        ),
        // Instructions that open with a verb of the trade, whose reason has a past tense:
        // rules, as much as "Run …" or "Use …" (a terraform team's lesson, recorded twice,
        // was held back as a story).
        (
            "Save the plan with terraform plan -out=tfplan and apply exactly that file, so apply does only what was reviewed.",
            false,
            "imperative-start",
        ),
        (
            "Apply the saved plan file, not a fresh plan, so the change is exactly what was reviewed.",
            false,
            "imperative-start",
        ),
        (
            "Await every promise in a test, or the assertion runs after the test was marked done.",
            false,
            "imperative-start",
        ),
        (
            "Generate the client from the OpenAPI spec instead of editing what was generated.",
            false,
            "imperative-start",
        ),
        (
            "Override the default timeout explicitly, since the default was 0 (wait forever).",
            false,
            "imperative-start",
        ),
        // The same words as nouns, with what happened to them, still report an incident.
        (
            "Apply failed halfway because the state lock was held by a crashed run.",
            true,
            "past-report",
        ),
        (
            "Export of the orders table took 3 hours on the replica.",
            true,
            "past-report",
        ),
        // From the seventh and eighth sets (fresh4, fresh5): voices the earlier sets barely
        // had. A negated past ("Couldn't reproduce …") is a report; a status line opening
        // with the time of day, or naming the time it happened at, is one incident; a
        // non-restrictive "which" adds what happened to one thing, and a count or a prefixed
        // verb after "when" dates it rather than stating a condition.
        (
            "Couldn't reproduce the flake locally; it only happens on the CI runner",
            true,
            "report-verb-start",
        ),
        (
            "14:32 — rolled back the deploy, error rate back to baseline",
            true,
            "clock-time-start",
        ),
        (
            "11:05 restarted kafka-connect, lag dropping",
            true,
            "report-verb-start",
        ),
        (
            "Hotfix shipped at 02:10 UTC; error rate back to baseline within five minutes.",
            true,
            "clock-time",
        ),
        (
            "The first attempt used a global mutex, which deadlocked when two workers tried to flush at the same time.",
            true,
            "past-report",
        ),
        // The same subjects told as rules: a time in an instruction, a condition with a past
        // tense in it, a mutex a rule warns about.
        (
            "Schedule the pg_dump cron at 02:00 UTC, after the nightly batch has finished.",
            false,
            "imperative-start",
        ),
        (
            "If `terraform apply` was interrupted, run `terraform force-unlock` with the lock ID before the next plan.",
            false,
            "condition",
        ),
        (
            "Don't guard the flush path with a global mutex; two workers flushing at once will deadlock when each holds a connection.",
            false,
            "imperative-start",
        ),
        // A commit message records one change, though its subject is an imperative.
        (
            "fix(ci): pin actions/checkout to v4.1.1 to unbreak release workflow",
            true,
            "commit-message",
        ),
        (
            "Add retry to S3 upload in uploader.go (fixes #882)",
            true,
            "commit-message",
        ),
        (
            "Revert \"Bump terraform-provider-aws to 5.31.0\"; This reverts commit 9f3e2a1c.",
            true,
            "commit-message",
        ),
        (
            "Pin third-party GitHub Actions to a full commit SHA rather than a tag; tags can be moved.",
            false,
            "imperative-start",
        ),
        // Chat and postmortem voices: a status prefix, a postmortem heading in bold.
        (
            "update: canary at 10% looks healthy, p99 steady at 180ms, going to 50% after lunch",
            true,
            "incident-status",
        ),
        (
            "**Impact:** checkout unavailable for 23 min for EU customers.",
            true,
            "incident-status",
        ),
        (
            "Hold a canary at 10% for at least one traffic peak before widening it.",
            false,
            "no-report",
        ),
        // Instructions that open with "Land", "Ship" or "Bump" and a name.
        (
            "Land a formatter's first run in its own PR and add that commit to .git-blame-ignore-revs.",
            false,
            "imperative-start",
        ),
        (
            "Bump Xcode in the CI image and on developer machines in the same week, or archives built locally stop matching CI.",
            false,
            "imperative-start",
        ),
        // One weekday or date places a text in one incident; a rule's days are plural or
        // indefinite. A state "now" is status.
        (
            "Per our call: the staging cluster will be upgraded to 1.29 on Thursday.",
            true,
            "incident-words",
        ),
        (
            "Don't deploy on Fridays; a Monday rollback is cheaper than a weekend page.",
            false,
            "imperative-start",
        ),
        (
            "Cert renewals that ran on a Sunday are not seen until Monday, so alert on expiry 14 days ahead.",
            false,
            "present-general",
        ),
        (
            "after upgrade to postgres 16 the query plan changed and report is very slow now",
            true,
            "incident-status",
        ),
        // An elliptical passive is no report ("until restarted").
        (
            "Workers that were started before a deploy keep running the old code until restarted.",
            false,
            "no-report",
        ),
    ] {
        let c = n.classify(text);
        assert_eq!(c.narrative, narrative, "{text} {c:?}");
        assert!(c.signals.iter().any(|s| s == signal), "{text} {c:?}");
    }
}

#[test]
fn design_examples_exactly() {
    let n = classifier();
    for text in [
        "Community PR merged cleanly despite significant changes to maintenance.py on bot…",
        "Leveraged existing find_all_duplicates() and _has_negation_pair() functions from…",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "must be narrative: {text} {c:?}");
        assert!(!c.signals.is_empty());
    }
    let rule = "When a fake stands in for a component with known divergent behaviour, the fake must reproduce the divergence.";
    let c = n.classify(rule);
    assert!(!c.narrative, "must be a rule: {rule} {c:?}");
    assert!(c.signals.iter().any(|s| s == "condition"), "{c:?}");
    assert!(c.signals.iter().any(|s| s == "modal"), "{c:?}");
}

/// Instructions given after a short opening phrase ("In CI use …", "For binaries commit …"),
/// or with a verb that is also a noun followed by a file name, a path or a flag. Before
/// `clause_lead` and the file-name objects, most of these scored `no-instruction` (2) plus a
/// file name or a version (1–2) and were held back as stories.
const INSTRUCTIONS: &[&str] = &[
    "In CI use cargo build --locked so that the build honours Cargo.lock.",
    "Commit Cargo.lock for binaries.",
    "For binaries commit Cargo.lock; for libraries leave it out of version control.",
    "In GitHub Actions pin third-party actions to a full commit SHA.",
    "Inside Docker bind the dev server to 0.0.0.0 so the host can reach it.",
    "For Python 3.12 images install build-essential before pip install.",
    "With pnpm workspaces set shared-workspace-lockfile=true in .npmrc.",
    "Copy requirements.txt before the rest of the source so the pip layer stays cached.",
    "Cache ~/.cargo/registry between CI runs.",
    "Before a release bump the version in pyproject.toml and tag the commit.",
    "On Windows pass encoding='utf-8' to open() for text files.",
    "In monorepos run tsc --build from the root so project references resolve.",
    "Format pyproject.toml with taplo before committing.",
    "During code review check that new migrations have a matching down step.",
    "Per service keep one Dockerfile and build every environment from it.",
    "For flaky end-to-end suites retry only the failed specs, never the whole run.",
    "Test alembic/env.py changes against a throwaway database.",
    "Lint .github/workflows/*.yml with actionlint in CI.",
];

/// Incident stories, several of them opening with a phrase too ("In CI the build failed…",
/// "In the first run only…") or with a noun that is also a verb ("Commit 8c1e4fa broke…").
const STORIES: &[&str] = &[
    "In CI the cargo build failed because Cargo.lock was out of date; regenerated it with cargo update.",
    "On Friday I rolled back the deploy after the health check on /ready started returning 503.",
    "For the release branch we cherry-picked the fix from PR #921 and tagged v2.4.1.",
    "Committed Cargo.lock for the CLI crate after the reproducibility check flagged a drift.",
    "During the migration the orders table was locked for six minutes.",
    "In the end the flaky test was a race in conftest.py between two session fixtures.",
    "Commit 8c1e4fa broke the Alpine build by pulling in glibc-only wheels.",
    "After the upgrade to Node 20 the jest run hung on open handles until I added --detectOpenHandles.",
    "Build of the arm64 image took 40 minutes because QEMU emulated every pip install.",
    "Cache misses spiked to 80% after the key change in ci.yml.",
    "In staging the pods kept crashing until we raised the memory limit to 512Mi.",
    "In the first run only two of the shards finished; the rest hit the runner timeout.",
    "With the new index the dashboard query dropped from 12s to 300ms.",
    "Copied settings.py from the old repo and the admin login broke on CSRF.",
    "On the second attempt set-up succeeded once the proxy variables were exported.",
];

#[test]
fn instructions_after_an_opening_phrase_or_before_a_file_name_read_as_rules() {
    let n = classifier();
    assert!(INSTRUCTIONS.len() >= 10);
    let wrong: Vec<String> = (INSTRUCTIONS.iter())
        .map(|t| (t, n.classify(t)))
        .filter(|(_, c)| c.narrative || !c.signals.iter().any(|s| s == "imperative-start"))
        .map(|(t, c)| format!("{t} {c:?}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "not read as instructions:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn incident_stories_that_open_with_a_phrase_stay_narrative() {
    let n = classifier();
    assert!(STORIES.len() >= 10);
    let wrong: Vec<String> = (STORIES.iter())
        .map(|t| (t, n.classify(t)))
        .filter(|(_, c)| !c.narrative)
        .map(|(t, c)| format!("{t} {c:?}"))
        .collect();
    assert!(wrong.is_empty(), "stories read as rules:\n{}", wrong.join("\n"));
}

/// The walk-through of one failure's mechanism ("so basically what happens is …"), a log
/// line's level and timestamp, and a failure dated by the last change ("since the last
/// deploy") are stories; the rules on the same subjects are not.
#[test]
fn walk_throughs_log_lines_and_dated_failures_are_stories() {
    let n = classifier();
    for text in [
        "So basically what happens is the cron job starts before the backup finishes and both fight over the table lock.",
        "what's happening is the npm postinstall script downloads chromium on every CI run",
        "Ok so what happened is: terraform refreshed the state, saw the bucket gone and planned to recreate it",
        "WARN 2026-05-11T07:45:03Z celery worker: task send_invoice retried 5 times, giving up",
        "[ERROR] 2026-01-20 13:12:55 kubectl apply: admission webhook denied the request",
        "The checkout page shows a spinner forever since the last deploy.",
    ] {
        let c = n.classify(text);
        assert!(c.narrative, "{text} {c:?}");
    }
    for text in [
        "Start the cron job only after the backup has finished, so the two never contend for the table lock.",
        "Set PUPPETEER_SKIP_DOWNLOAD in CI so npm does not download chromium on every run.",
        "Import a bucket into Terraform state before changing it, or terraform plans to recreate it.",
        "Log the task name and retry count when a celery task gives up.",
        "Since version 1.25, kubectl apply rejects objects that an admission webhook denies.",
        "Assign on-call rotations to a team rather than to one person.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
    }
}

/// A bare present-tense statement is held back only on specifics alone, and one file name
/// or call is not enough: `no-report` cancels `no-instruction` when nothing reports an event.
#[test]
fn one_file_name_does_not_make_a_statement_a_story() {
    let n = classifier();
    for text in [
        "Cargo.lock belongs in version control for binaries.",
        "conftest.py fixtures apply to every test module below it.",
        "pyproject.toml replaces setup.py for new packages.",
        "os.replace() is atomic on POSIX file systems.",
    ] {
        let c = n.classify(text);
        assert!(!c.narrative, "{text} {c:?}");
        assert!(c.signals.iter().any(|s| s == "no-report"), "{text} {c:?}");
    }
    // A reported event still counts: the same file in a story is narrative.
    let c = n.classify("Cargo.lock went missing from the release tarball.");
    assert!(c.narrative, "{c:?}");
}

#[test]
fn builtin_rules_expose_the_threshold() {
    let n = classifier();
    let t = n.value_of("narrative.threshold").expect("narrative.threshold");
    // The value `rules/narrative.yaml` sets, read from the file itself.
    let yaml: serde_yaml::Value = serde_yaml::from_str(RULES).unwrap();
    let in_file = yaml["threshold"]
        .as_i64()
        .expect("narrative.yaml sets a threshold");
    assert_eq!(t, in_file.to_string());
    assert_eq!(n.threshold() as i64, in_file);
    // and through the policy, as `skillc explain` asks for it
    let rules = skillc::policy::Rules::builtin();
    assert_eq!(rules.policy.value_of("narrative.threshold", &rules), Some(t));
}

/// For tuning `rules/narrative.yaml`: every sentence with its label, score and signals.
/// `cargo test --test narrative_classifier print_every_score -- --ignored --nocapture`
#[test]
#[ignore]
fn print_every_score() {
    let n = classifier();
    for (t, l) in labelled() {
        let c = n.classify(&t);
        println!(
            "{} {:>3} {:?} | {}",
            if l { "N" } else { "R" },
            c.score,
            c.signals,
            t
        );
    }
}
