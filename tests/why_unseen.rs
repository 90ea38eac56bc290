//! `skillc why` on a team's memory that nobody here wrote: five projects, three weeks, and a
//! domain thin for a different reason each (tests/fixtures/why_unseen). The advice a user
//! follows first must be the one that fixes their input, and name what to change.

mod common;

use common::*;

fn unseen() -> std::path::PathBuf {
    fixture("why_unseen")
}

/// `why DOMAIN` over the fixture with `--min-reinforcement 3`, as JSON.
fn why3(domain: &str) -> serde_json::Value {
    why_json_in(domain, &unseen(), &["--min-reinforcement", "3"])
}

fn suggestions(w: &serde_json::Value) -> Vec<String> {
    ids(&w["suggestions"])
}

fn reason(w: &serde_json::Value, code: &str) -> u64 {
    (w["reasons"].as_array().unwrap().iter())
        .find(|r| r["code"] == code)
        .map_or(0, |r| r["count"].as_u64().unwrap())
}

/// Half the agents write `Python 3`: the version after a name the alias table knows is
/// dropped, so the freezegun lesson told under each spelling recurs in one domain, and `why`
/// has no split to report, from either side.
#[test]
fn a_version_in_the_domain_name_is_the_domain_it_versions() {
    let w = why3("python");
    assert_eq!(w["experiences"], 22);
    assert_eq!(w["variants"], serde_json::json!([]));
    let w = why3("Python 3");
    assert_eq!(w["domain"], "python");
    assert_eq!(w["experiences"], 22);
    // Domains that are no version of each other are left alone.
    assert_eq!(why3("go")["variants"], serde_json::json!([]));
    assert_eq!(why3("node")["variants"], serde_json::json!([]));
}

/// Fifteen node experiences did not pass, for three different reasons; each has its own fix,
/// the most common first: stale checks (run them after the last edit), a failing check of
/// their own, a pivot that policy does not count.
#[test]
fn outcome_held_candidates_are_told_apart_by_why_they_did_not_pass() {
    let w = why3("node.js");
    assert_eq!(w["domain"], "node");
    assert_eq!(reason(&w, "G001"), 15);
    let s = suggestions(&w);
    let stale = s
        .iter()
        .position(|x| x.contains("every check ran before their last edit"));
    let failed = s.iter().position(|x| x.contains("a check of their own failed"));
    let pivoted = s.iter().position(|x| x.contains("reported `pivoted`"));
    let (Some(stale), Some(failed), Some(pivoted)) = (stale, failed, pivoted) else {
        panic!("one line per cause: {s:#?}")
    };
    assert!(
        s[stale].starts_with("8 experiences")
            && s[stale].contains("run the checks again after the last edit")
    );
    assert!(s[failed].starts_with("3 experiences") && s[failed].contains("web-011, web-013, web-015"));
    assert!(s[pivoted].starts_with("4 experiences") && s[pivoted].contains("allow_pivoted: true"));
    assert!(
        stale < pivoted && pivoted < failed,
        "most experiences first: {s:#?}"
    );
    assert_eq!(stale, 0, "{s:#?}");
}

/// Credentials in `lesson`: `why` says which records, which field, and to rotate; it never
/// echoes the secret.
#[test]
fn a_credential_in_a_lesson_is_advice_to_remove_and_rotate_it() {
    let o = skillc(&[
        "why",
        "terraform",
        unseen().to_str().unwrap(),
        "--min-reinforcement",
        "3",
    ]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    for secret in ["AKIAIOSFODNN7EXAMPLE", "hunter2", "ghp_16C7e42F"] {
        assert!(!all.contains(secret), "{all}");
    }
    let w = why3("terraform");
    assert_eq!(reason(&w, "N002"), 3);
    assert_eq!(w["fates"]["refused"], 3);
    let s = suggestions(&w);
    assert!(
        s[0].contains("N002: tf-041, tf-042, tf-043") && s[0].contains("`lesson`") && s[0].contains("rotate"),
        "{s:#?}"
    );
}

/// Claims whose evidence is refused or missing name the claim and the ids at fault.
#[test]
fn claims_with_unknown_unsupporting_or_no_evidence_name_the_ids_to_fix() {
    let w = why3("docker");
    assert_eq!(
        (reason(&w, "G005"), reason(&w, "G006"), reason(&w, "G004")),
        (2, 1, 1)
    );
    let s = suggestions(&w).join("\n");
    assert!(
        s.contains("claim-dk-1 cites dk-999, claim-dk-3 cites tf-050"),
        "the unknown ids, not the claim's good ones: {s}"
    );
    assert!(s.contains("G006: claim-dk-2 cites dk-045, dk-047"), "{s}");
    assert!(s.contains("G004: claim-dk-4") && s.contains("`evidence`"), "{s}");
    // The claims come before the advice about experiences, which cannot fix them.
    let first = suggestions(&w)[0].clone();
    assert!(first.contains("G005"), "{first}");
}

/// Lessons that decayed (S001) are named, with the cost per idle day from the policy and the
/// field that stops it (`in_play`).
#[test]
fn decayed_lessons_are_named_with_what_stops_decay() {
    let s = Scratch::new("why-unseen-decay");
    let out = s.path("out");
    let o = compile_to(&unseen(), &out, &["--min-reinforcement", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let rebase = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["text"].as_str().unwrap().starts_with("Rebase feature branches"))
        .unwrap();
    assert_eq!(rebase["status"], "superseded");
    let rebase = rebase["id"].as_str().unwrap();
    let w = why3("git");
    assert_eq!(reason(&w, "S001"), 6, "candidates of the 5 decayed lessons");
    let line = (suggestions(&w).into_iter())
        .find(|x| x.contains("decayed"))
        .expect("a line about decay");
    assert!(line.starts_with("5 lessons decayed"), "{line}");
    assert!(
        line.contains(rebase) && line.contains("`in_play`") && line.contains("0.020"),
        "{line}"
    );
}

/// The user retired the clippy lesson after week two; week three's agents wrote it again, so it
/// is a new lesson. `why` names the retirement and the reason given, and never offers to bless
/// it into a rule; once it is a rule again, it says so.
#[test]
fn a_retired_lesson_taught_again_is_not_offered_for_blessing() {
    let s = Scratch::new("why-unseen-retired");
    let out = s.path("out");
    let out_s = out.to_str().unwrap();
    let first = unseen().join("weeks-1-2.jsonl");
    assert_eq!(compile_to(&first, &out, &[]).status.code(), Some(0));
    let ledger = read_json(&out.join("ledger.json"));
    let old = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .starts_with("Allow clippy::too_many_arguments")
        })
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = skillc(&[
        "lessons",
        "retire",
        &old,
        "--out",
        out_s,
        "--reason",
        "we restructure constructors now",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = unseen();
    let w = why_json_in("rust", &dir, &["--out", out_s, "--min-reinforcement", "3"]);
    assert_eq!(
        reason(&w, "G007"),
        2,
        "the records behind the retirement stay held back"
    );
    let near = (w["near_misses"].as_array().unwrap().iter())
        .find(|n| n["text"].as_str().unwrap().starts_with("Allow clippy"))
        .expect("the re-learned lesson is a near miss");
    let action = near["action"].as_str().unwrap();
    assert!(
        action.contains(&format!("re-learned after you retired {old}"))
            && action.contains("we restructure constructors now")
            && !action.contains("bless"),
        "{action}"
    );
    let s3 = suggestions(&w).join("\n");
    assert!(
        !s3.contains("skillc bless rs-072") && !s3.contains("skillc bless rs-073"),
        "{s3}"
    );
    assert!(
        s3.contains(&format!("after {old}")) && s3.contains("becomes a rule again once"),
        "{s3}"
    );

    // At the default threshold the two week-three records already make it a rule again.
    let w = why_json_in("rust", &dir, &["--out", out_s]);
    let s2 = suggestions(&w).join("\n");
    assert!(
        s2.contains(&format!("after {old}")) && s2.contains("it is a rule again"),
        "{s2}"
    );

    // `lessons show` of the new lesson says its predecessor was retired, not just its id.
    let new = near["lesson_or_cluster"].as_str().unwrap();
    assert_eq!(compile_to(&dir, &out, &[]).status.code(), Some(0));
    let shown = stdout(&skillc(&["lessons", "show", new, "--out", out_s]));
    assert!(
        shown.contains(&format!("supersedes: {old} (retired by you;")),
        "{shown}"
    );
}

/// `CI/CD` is no valid name as written, and the built-in alias table maps it to `ci-cd`, as the
/// line `why` used to print for it would: a user's own copy holding that line changes nothing.
#[test]
fn an_invalid_domain_is_told_a_valid_spelling_and_the_alias_works_as_printed() {
    let w = why_json_in("CI/CD", &unseen(), &[]);
    assert_eq!(w["domain"], "ci-cd");
    assert_eq!(
        (w["fates"]["refused"].as_u64(), w["rules"].as_u64()),
        (Some(0), Some(1)),
        "{w:#}"
    );

    let scratch = Scratch::new("why-unseen-alias");
    let rules = scratch.path("rules");
    std::fs::create_dir_all(&rules).unwrap();
    for f in std::fs::read_dir(repo().join("rules")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, rules.join(f.file_name().unwrap())).unwrap();
    }
    let aliases = std::fs::read_to_string(rules.join("aliases.yaml")).unwrap();
    let aliases = aliases.replacen("domains:\n", "domains:\n  \"ci/cd\": ci-cd\n", 1);
    std::fs::write(rules.join("aliases.yaml"), aliases).unwrap();
    let w = why_json_in("CI/CD", &unseen(), &["--rules", rules.to_str().unwrap()]);
    assert_eq!(w["domain"], "ci-cd");
    assert_eq!(
        (w["fates"]["refused"].as_u64(), w["rules"].as_u64()),
        (Some(0), Some(1)),
        "{w:#}"
    );
}

/// A one-project domain with no rule yet is not sent to a SKILL.md that does not exist.
#[test]
fn a_project_domain_without_rules_says_where_rules_will_go() {
    let w = why3("C++");
    assert_eq!(
        (w["domain"].as_str(), w["rules"].as_u64()),
        (Some("cpp"), Some(0))
    );
    let s = suggestions(&w).join("\n");
    assert!(
        s.contains("its rules will be in projects/") && !s.contains("its rules are in"),
        "{s}"
    );
}

/// Every domain of the fixture: fates add up to the candidates and the funnel never grows.
#[test]
fn every_domain_adds_up() {
    for d in [
        "python",
        "python-3",
        "node",
        "kubernetes",
        "cpp",
        "CI/CD",
        "terraform",
        "docker",
        "git",
        "rust",
        "go",
    ] {
        let w = why3(d);
        let f = &w["fates"];
        let sum: u64 = ["rule", "lesson", "held-back", "refused"]
            .iter()
            .map(|k| f[k].as_u64().unwrap())
            .sum();
        assert_eq!(sum, w["candidates"].as_u64().unwrap(), "{d}: {w:#}");
        let funnel: Vec<u64> = (w["funnel"].as_array().unwrap()[1..7].iter())
            .map(|s| s["remaining"].as_u64().unwrap())
            .collect();
        assert!(funnel.windows(2).all(|p| p[0] >= p[1]), "{d}: {funnel:?}");
    }
}

/// The N001 page's example is refused by the built-in rules, as the page says (`C++` is not:
/// the alias table maps it to `cpp`).
#[test]
fn the_invalid_domain_page_example_is_refused() {
    let page = stdout(&skillc(&["explain", "N001"]));
    let record = (page.lines())
        .find(|l| l.starts_with("{\"id\""))
        .expect("a JSONL example");
    let s = Scratch::new("why-unseen-n001");
    std::fs::write(s.path("r.jsonl"), format!("{record}\n")).unwrap();
    let o = compile_to(&s.path("r.jsonl"), &s.path("out"), &["--format", "json"]);
    let err = stderr(&o);
    assert!(
        err.contains("error[N001]") && err.contains("\"DevOps/SRE\""),
        "{err}"
    );
}
