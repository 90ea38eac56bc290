//! The two user journeys DESIGN §1 and §5–§8 are written for, end to end through the command
//! line: "why did `python` compile so little?" names a reason for every candidate that did not
//! become a rule, and a nightly re-compile over the same records plus new ones supersedes what
//! stopped being true (never deletes it), with the skill deltas following the change.

mod common;

use common::Records as History;
use common::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const BILLING: &str = "git@github.com:acme/billing-api.git";
const LEDGER: &str = "git@github.com:acme/ledger.git";
const SEARCH: &str = "git@github.com:acme/search-svc.git";

fn ok(command: &str, cwd: &str, target: &str) -> Value {
    json!({"tool": "run_shell_command", "args": {"command": command, "cwd": cwd}, "status": "ok",
           "check": {"label": "tests", "target": target, "passed": true}})
}

fn failed(command: &str, cwd: &str, error: &str) -> Value {
    json!({"tool": "run_shell_command", "args": {"command": command, "cwd": cwd}, "status": "error", "error": error})
}

fn python(id: &str, at: &str, project: &str, outcome: &str, fields: Value, ops: Vec<Value>) -> Value {
    let mut r = json!({"id": id, "recorded_at": at, "domains": ["python"], "project": project,
                       "outcome": outcome, "task": "keep the test suite green", "operations": ops});
    for (k, v) in fields.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

const MYPY_STUBS: &str = "src/app/sync.py:3: error: Library stubs not installed for \"requests\"";
const OLD_FIX: &str = "mypy --install-types --non-interactive src";
const NEW_FIX: &str = "mypy --install-types --non-interactive --cache-dir .mypy_cache src";

/// A week of python work in three projects, with one candidate for every way a candidate can
/// fail to become a rule.
fn first_week() -> Vec<Value> {
    let none = json!({});
    vec![
        // A lesson two projects recorded in other words: a global rule.
        python(
            "py-01",
            "2026-09-01T09:00:00Z",
            BILLING,
            "succeeded",
            json!({"lesson": "Run pytest from the repository root so conftest.py and the package import path are picked up."}),
            vec![ok("pytest -q", "/srv/billing-api", "billing-api")],
        ),
        python(
            "py-02",
            "2026-09-01T15:00:00Z",
            LEDGER,
            "succeeded",
            json!({"lesson": "Run pytest from the repository root so that conftest.py and the package import path get picked up."}),
            vec![ok("pytest -q", "/srv/ledger", "ledger")],
        ),
        // The same failed-then-fixed mypy call in two projects (one tagged `py`): a global
        // mechanical rule.
        python(
            "py-03",
            "2026-09-02T09:00:00Z",
            BILLING,
            "succeeded",
            none.clone(),
            vec![
                failed("mypy src", "/srv/billing-api", MYPY_STUBS),
                ok(OLD_FIX, "/srv/billing-api", "billing-api"),
            ],
        ),
        python(
            "py-08",
            "2026-09-05T09:00:00Z",
            LEDGER,
            "succeeded",
            none.clone(),
            vec![
                failed("mypy src", "/srv/ledger", MYPY_STUBS),
                ok(OLD_FIX, "/srv/ledger", "ledger"),
            ],
        ),
        // A secret in the lesson: refused.
        python(
            "py-04",
            "2026-09-02T11:00:00Z",
            SEARCH,
            "succeeded",
            json!({"lesson": "Export OPENAI_API_KEY=sk-proj-Zq8vN2LxT4bR7mK1pW9sD3fH6jY0cA5e before running the embedding tests."}),
            vec![ok("pytest tests/embeddings", "/srv/search-svc", "search-svc")],
        ),
        // A lesson from a failed run: the outcome gate.
        python(
            "py-05",
            "2026-09-02T14:00:00Z",
            SEARCH,
            "failed",
            json!({"lesson": "Use uv pip compile to pin transitive dependencies before upgrading numpy."}),
            vec![failed(
                "uv pip compile requirements.in",
                "/srv/search-svc",
                "No solution found when resolving dependencies",
            )],
        ),
        // The story of one incident: the narrative gate.
        python(
            "py-06",
            "2026-09-03T10:00:00Z",
            BILLING,
            "succeeded",
            json!({"breakthrough": "Fixed the flaky upload test in PR #881 by patching retry_upload() in billing/s3.py; I merged it after CI went green."}),
            vec![ok("pytest tests/test_s3.py", "/srv/billing-api", "billing-api")],
        ),
        // Seen once: a lesson, not yet a rule.
        python(
            "py-07",
            "2026-09-03T12:00:00Z",
            LEDGER,
            "succeeded",
            json!({"gotchas": ["pytest-xdist runs session-scoped fixtures once per worker, not once per run"]}),
            vec![ok("pytest -n 4", "/srv/ledger", "ledger")],
        ),
        // Claims: fabricated evidence, evidence that does not support a do-claim, none at all.
        json!({"type": "lesson", "id": "claim-fab", "recorded_at": "2026-09-04T08:00:00Z", "domains": ["python"],
               "text": "Set PYTHONHASHSEED=0 in CI so set ordering in snapshots is stable.", "kind": "do",
               "source": "model", "evidence": ["py-01", "py-404"]}),
        json!({"type": "lesson", "id": "claim-uns", "recorded_at": "2026-09-04T08:00:00Z", "domains": ["python"],
               "text": "Resolve with uv pip compile before bumping numpy.", "kind": "do",
               "source": "extractor", "evidence": ["py-05"]}),
        json!({"type": "lesson", "id": "claim-bare", "recorded_at": "2026-09-04T08:00:00Z", "domains": ["python"],
               "text": "Prefer pathlib.Path over os.path in new modules.", "kind": "do", "source": "user", "evidence": []}),
    ]
}

fn lessons(ledger: &Value) -> &Vec<Value> {
    ledger["lessons"].as_array().unwrap()
}

fn by_key<'a>(ledger: &'a Value, key: &str, status: &str) -> &'a Value {
    lessons(ledger)
        .iter()
        .find(|l| l["operation_key"] == key && l["status"] == status)
        .unwrap_or_else(|| panic!("no {status} lesson on {key}: {ledger:#}"))
}

/// Ids of the lessons a delta's rows propose.
fn proposed(out: &std::path::Path) -> BTreeSet<String> {
    let delta = read_json(&out.join("deltas/python.json"));
    (delta["rows"].as_array().unwrap().iter())
        .flat_map(|r| ids(&r["provenance"]["lessons"]))
        .collect()
}

/// `why python` names a reason for every python candidate that is not in a rule, and `trace`
/// of `records` (when given: all the records) says the same candidate by candidate.
fn assert_every_dropped_candidate_has_a_reason(h: &History, records: Option<&[&str]>, expected: &[&str]) {
    let o = skillc(&[
        "why",
        "python",
        &h.records(),
        "--out",
        &h.out(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let why = json(&o);
    let fates = why["fates"].as_object().unwrap();
    let total: u64 = fates.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(Some(total), why["candidates"].as_u64(), "{why:#}");
    let dropped = total - fates["rule"].as_u64().unwrap();
    let reasons: BTreeMap<String, u64> = (why["reasons"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["code"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let codes: Vec<&str> = reasons.keys().map(String::as_str).collect();
    assert_eq!(codes, expected, "{why:#}");
    assert!(reasons.values().sum::<u64>() >= dropped, "{why:#}");

    let Some(records) = records else { return };
    let mut traced = 0;
    for id in records {
        let t = trace_json(id, &h.s.path("records"), &h.s.path("out"));
        for c in t["candidates"].as_array().unwrap() {
            traced += 1;
            let fate = c["fate"].as_str().unwrap();
            let own = ids(&c["codes"]);
            if fate == "rule" {
                continue;
            }
            assert!(!own.is_empty(), "{id}: a {fate} candidate with no reason: {c:#}");
            for code in &own {
                assert!(
                    reasons.contains_key(code),
                    "{id}: {code} is not among why's reasons {reasons:?}"
                );
            }
        }
    }
    assert_eq!(Some(traced), why["candidates"].as_u64(), "every candidate traced");
}

#[test]
fn a_nightly_recompile_explains_every_drop_and_supersedes_without_deleting() {
    let h = History::new("journey-nightly");
    let base = fixture("base-skills");
    let base = base.to_str().unwrap();
    let compile = || {
        let o = skillc(&["compile", &h.records(), "--out", &h.out(), "--base-skills", base]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&h.s.path("out/ledger.json"))
    };
    let out = h.s.path("out");

    // Night 1.
    h.add("agent-a.jsonl", &first_week());
    let night1 = compile();
    let old_fix = by_key(&night1, "run_shell_command mypy", "active");
    let old_fix_id = old_fix["id"].as_str().unwrap().to_string();
    assert_eq!(
        (old_fix["scope"].as_str(), old_fix["rule"].as_bool()),
        (Some("global"), Some(true))
    );
    let root = (lessons(&night1).iter())
        .find(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .starts_with("Run pytest from the repository root")
        })
        .unwrap();
    let root_id = root["id"].as_str().unwrap().to_string();
    assert_eq!(root["rule"], true);
    assert_eq!(
        proposed(&out),
        BTreeSet::from([old_fix_id.clone(), root_id.clone()])
    );
    assert_every_dropped_candidate_has_a_reason(
        &h,
        None,
        &["G001", "G002", "G003", "G004", "G005", "G006", "N002"],
    );

    // The team moved to nox and retires the pytest rule; the next week the old mypy fix stops
    // working in two projects that had it in play, and a new form works.
    let o = skillc(&[
        "lessons",
        "retire",
        &root_id,
        "--reason",
        "we run the suite through nox now",
        "--out",
        &h.out(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let broke = "error: --install-types failed (no mypy cache directory)";
    let in_play = json!({"in_play": [&old_fix_id]});
    h.add(
        "agent-b.jsonl",
        &[
            python(
                "sn-1",
                "2026-09-08T09:00:00Z",
                SEARCH,
                "succeeded",
                in_play.clone(),
                vec![
                    failed(OLD_FIX, "/srv/search-svc", broke),
                    ok(NEW_FIX, "/srv/search-svc", "search-svc"),
                ],
            ),
            python(
                "sn-2",
                "2026-09-08T14:00:00Z",
                LEDGER,
                "succeeded",
                in_play,
                vec![
                    failed(OLD_FIX, "/srv/ledger", broke),
                    ok(NEW_FIX, "/srv/ledger", "ledger"),
                ],
            ),
        ],
    );

    // Night 2: nothing of night 1 is deleted; what stopped being true is superseded.
    let night2 = compile();
    for l in lessons(&night1) {
        assert!(
            lessons(&night2)
                .iter()
                .any(|n| n["id"] == l["id"] && n["evidence"] == l["evidence"]),
            "{} was dropped: {night2:#}",
            l["id"]
        );
    }
    let new_fix = by_key(&night2, "run_shell_command mypy", "active");
    let new_fix_id = new_fix["id"].as_str().unwrap().to_string();
    assert!(new_fix["text"].as_str().unwrap().contains(NEW_FIX), "{new_fix}");
    assert_eq!(
        (new_fix["rule"].as_bool(), new_fix["supersedes"].as_str()),
        (Some(true), Some(&*old_fix_id))
    );
    let old = lessons(&night2)
        .iter()
        .find(|l| l["id"] == old_fix_id.as_str())
        .unwrap();
    assert_eq!(
        (
            old["status"].as_str(),
            old["superseded_by"].as_str(),
            old["rule"].as_bool()
        ),
        (Some("superseded"), Some(&*new_fix_id), Some(false))
    );
    let retired = lessons(&night2)
        .iter()
        .find(|l| l["id"] == root_id.as_str())
        .unwrap();
    assert_eq!(
        (retired["status"].as_str(), retired["superseded_by"].as_str()),
        (Some("retired"), Some("retired:user"))
    );

    // The prompt-facing files and the deltas follow: the new form in, the old and the retired out.
    let skill = std::fs::read_to_string(out.join("python/SKILL.md")).unwrap();
    assert!(
        skill.contains(&new_fix_id) && !skill.contains(&old_fix_id) && !skill.contains(&root_id),
        "{skill}"
    );
    let evidence = std::fs::read_to_string(out.join("python/references/EVIDENCE.md")).unwrap();
    assert!(
        evidence.contains(&format!("supersedes: {old_fix_id}")),
        "{evidence}"
    );
    // The old fix was demoted to ledger's project when search-svc contradicted it, yet the
    // walk-back from the rule that replaced it is in the file beside that rule.
    assert!(
        evidence.contains(&format!(
            "- {old_fix_id} — run_shell_command mypy: run `{OLD_FIX}`"
        )),
        "{evidence}"
    );
    assert!(
        evidence.contains(&format!("(superseded; superseded_by: {new_fix_id};")),
        "{evidence}"
    );
    assert!(
        evidence.contains(&format!("{root_id} — ")),
        "the retired rule's history: {evidence}"
    );
    assert_eq!(proposed(&out), BTreeSet::from([new_fix_id.clone()]));
    let delta = std::fs::read_to_string(out.join("deltas/python.json")).unwrap();
    assert!(delta.contains(NEW_FIX) && !delta.contains(&root_id), "{delta}");

    let all = [
        "py-01",
        "py-02",
        "py-03",
        "py-04",
        "py-05",
        "py-06",
        "py-07",
        "py-08",
        "claim-fab",
        "claim-uns",
        "claim-bare",
        "sn-1",
        "sn-2",
    ];
    assert_every_dropped_candidate_has_a_reason(
        &h,
        Some(&all),
        &[
            "G001", "G002", "G003", "G004", "G005", "G006", "G007", "N002", "S001",
        ],
    );
}

/// A month of a coding-agent fleet's records, written by hand as agents write them
/// (`tests/fixtures/fleet`: a Django shop, a Rust CLI, a React admin, a Node API, a Terraform
/// repo, a pandas/Airflow pipeline and a Go service; Bash, Edit, Read and MCP calls; lessons
/// as imperatives, "Always…", "X requires Y", long notes, stories; contradictions, failed and
/// abandoned runs, claims, a YAML notes file and an OmniMem export). What a user checks
/// first: the lesson three projects learned in their own words is one global rule citing all
/// three; the story is held back as narrative and says so; a fix the record abandons is not
/// taught; and `why` accounts for every candidate of every domain with a code.
#[test]
fn a_fleets_month_compiles_into_rules_a_user_would_sign() {
    let input = fixture("fleet");
    let s = Scratch::new("journey-fleet");
    let out = s.path("out");
    let o = compile_to(&input, &out, &["--threads", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let rule = |needle: &str| -> &Value {
        (lessons(&ledger).iter())
            .find(|l| l["rule"] == true && l["text"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("a rule says {needle:?}"))
    };

    // Paraphrases across projects reinforce one rule, global, in the domain's own SKILL.md.
    let dockerignore = rule(".dockerignore");
    assert_eq!(dockerignore["scope"], "global");
    // lg-017 had it in play and passed: a confirmation joins the evidence.
    assert_eq!(
        ids(&dockerignore["evidence"]),
        ["ca-002", "lg-011", "lg-017", "wa-010"]
    );
    assert_eq!(dockerignore["projects"].as_array().unwrap().len(), 3);
    let docker = std::fs::read_to_string(out.join("docker/SKILL.md")).unwrap();
    assert!(docker.contains(dockerignore["id"].as_str().unwrap()), "{docker}");
    let requests = rule("resource requests and limits");
    assert_eq!(requests["scope"], "global");
    assert_eq!(ids(&requests["evidence"]), ["lg-005", "sf-013"]);
    assert_eq!(ids(&rule("go mod tidy")["evidence"]), ["lg-001", "ls-010"]);
    // "Run pytest from the root" in two projects' words (one from the YAML notes) is one
    // global rule: the paths each reason names (conftest.py, tests/) are examples, not the
    // rule. The third wording of the pipeline project ("pytest must be run from the project
    // root, otherwise …") shares too few words with the rule's anchor to join it.
    let pytest = rule("pytest from the repository root");
    assert_eq!(
        ids(&pytest["evidence"]),
        ["etl-005", "note-2026-10-31-b", "sf-001"]
    );
    assert_eq!(pytest["scope"], "global");

    // Contradictory lessons stay apart: neither squash policy absorbs the other.
    let squash: Vec<&Value> = (lessons(&ledger).iter())
        .filter(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("squash-merge")
        })
        .collect();
    assert_eq!(squash.len(), 2, "{squash:#?}");

    // Every SKILL.md: no story, no secret, no fix the record gave up.
    let mut skills = String::new();
    for entry in walk(&out) {
        if entry.ends_with("SKILL.md") {
            skills.push_str(&std::fs::read_to_string(&entry).unwrap());
        }
    }
    for never in [
        "Community PR",
        "hunter2",
        "django-insecure",
        "--no-verify",
        "no:randomly",
    ] {
        assert!(!skills.contains(never), "{never} reached a SKILL.md");
    }

    // The story is held back as narrative, and trace says so.
    let t = trace_json("sf-004", &input, &out);
    let story = &t["candidates"][0];
    assert_eq!(
        (story["fate"].as_str(), ids(&story["codes"])),
        (Some("held-back"), vec!["G002".to_string()])
    );
    let t = trace_json("sf-018", &input, &out);
    assert_eq!(
        t["record"]["abandoned_fixes"].as_array().unwrap().len(),
        1,
        "{t:#}"
    );

    // `why` accounts for every candidate of every domain: fates add up, and every candidate
    // not in a rule is counted under a reason with a code.
    let domains: BTreeSet<&str> = (lessons(&ledger).iter())
        .map(|l| l["domain"].as_str().unwrap())
        .collect();
    assert!(domains.len() >= 15, "{domains:?}");
    for domain in domains {
        let why = why_json_in(domain, &input, &["--out", out.to_str().unwrap()]);
        let fates = why["fates"].as_object().unwrap();
        let total: u64 = fates.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(Some(total), why["candidates"].as_u64(), "{domain}: {why:#}");
        let dropped = total - fates["rule"].as_u64().unwrap();
        let reasons = why["reasons"].as_array().unwrap();
        assert!(
            reasons
                .iter()
                .all(|r| r["code"].as_str().is_some_and(|c| c.len() == 4)),
            "{domain}: a reason without a code: {why:#}"
        );
        let counted: u64 = reasons.iter().map(|r| r["count"].as_u64().unwrap()).sum();
        assert!(
            counted >= dropped,
            "{domain}: {dropped} dropped, {counted} counted: {why:#}"
        );
        // A near miss says what kind of lesson it is, and reads as the block words it.
        for n in why["near_misses"].as_array().unwrap() {
            let line = n["line"].as_str().unwrap();
            match n["kind"].as_str().unwrap() {
                "avoid" => assert!(
                    line.starts_with("Avoid: ") || line.starts_with("Never "),
                    "{line}"
                ),
                "watch" => assert!(line.starts_with("Watch out: "), "{line}"),
                _ => assert_eq!(n["text"].as_str(), Some(line)),
            }
        }
    }

    // The same records at two threads give the same bytes.
    let again = s.path("again");
    let o = compile_to(&input, &again, &["--threads", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for entry in walk(&out) {
        let rel = entry.strip_prefix(&out).unwrap();
        if rel.starts_with(".skillc") {
            continue;
        }
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            std::fs::read(again.join(rel)).unwrap(),
            "{} differs at two threads",
            rel.display()
        );
    }
}

/// Every file under `dir`, sorted.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The ledger's lessons by id.
fn by_id(ledger: &Value) -> BTreeMap<String, Value> {
    (lessons(ledger).iter())
        .map(|l| (l["id"].as_str().unwrap().to_string(), l.clone()))
        .collect()
}

/// The id of the one lesson whose text starts with `prefix` and has `status`.
fn id_of(ledger: &Value, prefix: &str, status: &str) -> String {
    let found: Vec<&Value> = (lessons(ledger).iter())
        .filter(|l| l["text"].as_str().unwrap().starts_with(prefix) && l["status"] == status)
        .collect();
    assert_eq!(found.len(), 1, "{status} {prefix}: {ledger:#}");
    found[0]["id"].as_str().unwrap().to_string()
}

/// Four nightly compiles over a memory that grows by a week at a time
/// (`tests/fixtures/nightly`: five projects, pytest, mypy, npm, cargo, terraform, kubectl,
/// docker and git sessions; `in_play` citations that pass and fail; a rephrased lesson; a
/// late-synced older record; decisions between nights; then three quiet weeks), with the team's
/// hand-written skills as `--base-skills`. Each night `diff` runs first and must announce exactly
/// what the compile then does; confidence moves with what the records show; nothing is deleted;
/// a re-run changes no byte.
#[test]
fn four_nightly_consolidations_over_a_growing_memory() {
    let s = Scratch::new("journey-weeks");
    let nightly = fixture("nightly");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let (rec, out) = (records.to_str().unwrap(), s.path("out"));
    let out_s = out.to_str().unwrap().to_string();
    let skills = nightly.join("skills");
    let skills = skills.to_str().unwrap();
    let add = |file: &str| std::fs::copy(nightly.join(file), records.join(file)).unwrap();
    let run = |args: &[&str]| {
        let o = skillc(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        o
    };
    let mut all_ids: BTreeSet<String> = BTreeSet::new();
    // diff, then compile: every change diff announced is what the compile did, and every
    // lesson it did not list is unchanged; no lesson of any earlier night is gone.
    let night = |all_ids: &mut BTreeSet<String>| -> (Value, Value, String) {
        let diff = json(&run(&[
            "diff",
            rec,
            "--out",
            &out_s,
            "--base-skills",
            skills,
            "--format",
            "json",
        ]));
        let before = std::fs::read(out.join("ledger.json"))
            .map_or(json!({"lessons": []}), |b| serde_json::from_slice(&b).unwrap());
        let o = run(&["compile", rec, "--out", &out_s, "--base-skills", skills]);
        let ledger = read_json(&out.join("ledger.json"));
        let (old, new) = (by_id(&before), by_id(&ledger));
        // The fields `diff` compares (its `before`/`after`).
        const COMPARED: [&str; 7] = [
            "status",
            "rule",
            "scope",
            "confidence",
            "reinforcement",
            "pinned",
            "superseded_by",
        ];
        let changed: BTreeMap<String, &Value> = (diff["changes"].as_array().unwrap().iter())
            .map(|c| (c["id"].as_str().unwrap().to_string(), c))
            .collect();
        for (id, l) in &new {
            let Some(c) = changed.get(id) else {
                if let Some(o) = old.get(id) {
                    for k in COMPARED {
                        assert_eq!(o[k], l[k], "{id}.{k} changed, diff said nothing: {diff:#}");
                    }
                }
                continue;
            };
            for k in COMPARED {
                assert_eq!(c["after"][k], l[k], "{id}.{k}: diff {c:#}");
            }
        }
        // A lesson leaves the ledger only when it goes on under a new id (a re-founding).
        all_ids.retain(|id| {
            let kept = new.contains_key(id);
            assert!(
                kept || changed.get(id).is_some_and(|c| !c["now"].is_null()),
                "{id} was dropped without a successor: {ledger:#}"
            );
            kept
        });
        all_ids.extend(new.keys().cloned());
        (diff, ledger, stdout(&o))
    };

    // Night 1: week one alone.
    add("week1.jsonl");
    let (diff, n1, _) = night(&mut all_ids);
    assert_eq!(diff["previous_compile"], false);
    assert_eq!(diff["counts"]["medium"], 10, "ten new rules: {diff:#}");
    let pytest = id_of(&n1, "Run pytest from the repository root", "active");
    let npm_ci = id_of(&n1, "Use npm ci instead of npm install", "active");
    let legacy = id_of(
        &n1,
        "run_shell_command npm: run `npm ci --legacy-peer-deps`",
        "active",
    );
    let docker = id_of(&n1, "Pin the base image by digest", "active");
    let cargo_ci = id_of(&n1, "Use cargo build --locked in CI", "active");
    let terraform = id_of(&n1, "Run terraform init -upgrade", "active");
    let mypy = id_of(&n1, "run_shell_command mypy", "active");
    let git = id_of(&n1, "Push rebased branches", "active");
    // "… before calling a deploy done" and "… before marking a deploy done": one rule.
    let rollout = id_of(&n1, "Check kubectl rollout status", "active");
    assert_eq!(by_id(&n1)[&rollout]["reinforcement"], 2);
    let c1 = |id: &str| by_id(&n1)[id]["confidence"].as_f64().unwrap();
    // A re-run on unchanged input rewrites nothing, and one thread writes what two do.
    let first = tree(&out);
    let o = run(&["compile", rec, "--out", &out_s, "--base-skills", skills]);
    assert!(stdout(&o).contains("(0 changed)"), "{}", stdout(&o));
    assert_eq!(first, tree(&out));
    let one = s.path("one-thread");
    run(&[
        "compile",
        rec,
        "--out",
        one.to_str().unwrap(),
        "--base-skills",
        skills,
        "--threads",
        "1",
    ]);
    assert_eq!(first, tree(&one));
    // The python skill states the pytest rule in its words: not proposed; the mypy fix is.
    let python_delta = std::fs::read_to_string(out.join("deltas/python.json")).unwrap();
    assert!(
        python_delta.contains(&mypy) && !python_delta.contains(&pytest),
        "{python_delta}"
    );
    assert!(
        !std::fs::read_to_string(out.join("deltas/rust.json"))
            .unwrap()
            .contains(&cargo_ci)
    );

    // Night 2: the lessons in play are confirmed and contradicted; a rephrasing joins its lesson.
    add("week2.jsonl");
    let (diff, n2, _) = night(&mut all_ids);
    let l2 = by_id(&n2);
    let c2 = |id: &str| l2[id]["confidence"].as_f64().unwrap();
    assert!(
        c2(&pytest) > c1(&pytest) && l2[&pytest]["reinforcement"] == 4,
        "{:#}",
        l2[&pytest]
    );
    assert!(c2(&terraform) > c1(&terraform) && c2(&mypy) > c1(&mypy));
    assert!(c2(&npm_ci) < c1(&npm_ci), "{:#}", l2[&npm_ci]);
    let forced = id_of(&n2, "run_shell_command npm: run `npm ci --force`", "active");
    assert_eq!(
        (
            l2[&legacy]["status"].as_str(),
            l2[&legacy]["superseded_by"].as_str()
        ),
        (Some("superseded"), Some(&*forced))
    );
    assert_eq!(
        l2[&docker]["scope"], "global",
        "the rephrasing from a second project promotes it"
    );
    let high: Vec<&str> = (diff["changes"].as_array().unwrap().iter())
        .filter(|c| c["risk"] == "high")
        .map(|c| c["change"].as_str().unwrap())
        .collect();
    assert_eq!(high, ["rule-superseded"], "{diff:#}");
    // docker's skill says it in other words already: no delta for it.
    assert!(!out.join("deltas/docker.json").exists());

    // Between nights the team decides; night 3 adds week three and a laptop's late sync.
    let terraform_avoid = id_of(&n2, "terraform state rm", "active");
    run(&[
        "lessons",
        "retire",
        &terraform_avoid,
        "--reason",
        "we import instead",
        "--out",
        &out_s,
    ]);
    run(&["lessons", "pin", &git, "--out", &out_s]);
    run(&[
        "lessons",
        "edit",
        &pytest,
        "--text",
        "Run pytest from the repository root so conftest.py and the package import path are picked up; never cd into tests/.",
        "--out",
        &out_s,
    ]);
    add("week3.jsonl");
    add("late-sync.jsonl");
    let (diff, n3, summary) = night(&mut all_ids);
    let l3 = by_id(&n3);
    assert_eq!(
        (l3[&npm_ci]["status"].as_str(), l3[&npm_ci]["rule"].as_bool()),
        (Some("superseded"), Some(false)),
        "contradicted twice, superseded, kept"
    );
    assert_eq!(l3[&terraform_avoid]["superseded_by"], "retired:user");
    let edited = id_of(&n3, "Run pytest from the repository root", "active");
    assert_eq!(l3[&pytest]["superseded_by"].as_str(), Some(&*edited));
    // The failed run that cited the old id blames the edited wording.
    let trace = trace_json("exp-2026-10-20-001", &records, &out);
    assert!(trace.to_string().contains(&edited), "{trace:#}");
    assert!(l3[&edited]["confidence"].as_f64().unwrap() < c2(&pytest));
    let refounded = id_of(&n3, "Use cargo build --locked in CI", "active");
    assert_ne!(refounded, cargo_ci);
    assert!(
        summary.contains(&format!("{cargo_ci} (rust do, rule) → {refounded}")),
        "{summary}"
    );
    assert!(
        (diff["changes"].as_array().unwrap().iter()).any(|c| c["change"] == "rule-refounded"
            && c["id"] == cargo_ci.as_str()
            && c["now"] == refounded.as_str()),
        "{diff:#}"
    );
    // The skill merged it under the old id: still not proposed.
    assert!(
        !std::fs::read_to_string(out.join("deltas/rust.json"))
            .unwrap()
            .contains(&refounded)
    );
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    let lines: Vec<&str> = block.lines().collect();
    assert!(
        lines.len() <= 5 && lines[0].contains(&git),
        "pinned first: {block}"
    );
    for gone in [&npm_ci, &legacy, &pytest, &terraform_avoid] {
        assert!(!block.contains(gone.as_str()), "{gone} in {block}");
    }

    // Night 4: three weeks of python work that cites nothing, and a terraform failure in a third
    // project: the idle mypy rule decays away, the terraform rule goes back to its project.
    add("november.jsonl");
    let (diff, n4, _) = night(&mut all_ids);
    let l4 = by_id(&n4);
    assert_eq!(l4[&mypy]["status"], "superseded");
    assert_eq!(l4[&terraform]["scope"], "project:d59613a2dc93");
    let changes: BTreeSet<(&str, &str)> = (diff["changes"].as_array().unwrap().iter())
        .map(|c| (c["risk"].as_str().unwrap(), c["change"].as_str().unwrap()))
        .collect();
    assert!(
        changes.contains(&("high", "rule-demoted")) && changes.contains(&("high", "rule-superseded")),
        "{diff:#}"
    );
    assert!(
        !out.join("deltas/terraform.json").exists(),
        "no global terraform rule left to propose"
    );
    let project = std::fs::read_to_string(out.join("lessons/project-d59613a2dc93.md")).unwrap();
    assert!(project.contains(&terraform), "{project}");
    // Nothing learned on any night left the ledger.
    assert!(all_ids.iter().all(|id| l4.contains_key(id)), "{n4:#}");
}
