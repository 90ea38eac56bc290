//! `compile --base-skills` writes deltas next to the rules; `deltas show` resolves them.

mod common;

use common::*;

#[test]
fn compile_writes_deltas_and_show_resolves_them() {
    let s = Scratch::new("deltas-cli");
    let out = s.path("out");
    let base = fixture("base-skills");
    let o = skillc(&[
        "compile",
        "--out",
        out.to_str().unwrap(),
        "--base-skills",
        base.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let delta = read_json(&out.join("deltas/python.json"));
    assert_eq!(delta["generator"], "skillc");
    let rows = delta["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["status"] == "staged" && r["base_name"] == "python")
    );
    assert!(
        !out.join("deltas/terraform.json").exists(),
        "no compiled domain, no delta"
    );

    let o = skillc(&[
        "deltas",
        "show",
        "python",
        "--base-skills",
        base.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let resolved = stdout(&o);
    let first_lesson = rows[0]["provenance"]["lessons"][0].as_str().unwrap();
    assert!(
        resolved.contains(first_lesson),
        "the resolved skill carries the rule's id"
    );
    let authored = std::fs::read_to_string(base.join("python/SKILL.md")).unwrap();
    assert!(resolved.len() > authored.len());

    // Without --base-skills the deltas are stale generated files and go.
    let o = skillc(&["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!out.join("deltas/python.json").exists());
}

/// An authored skill saved in Latin-1 costs only its own delta: the run goes on, the other
/// skills get theirs, and the unreadable one is an L007 naming its file (`--strict`: exit 1).
#[test]
fn an_unreadable_authored_skill_is_a_diagnostic_and_the_others_still_get_deltas() {
    let s = Scratch::new("deltas-cli-latin1");
    let base = s.path("base");
    for name in ["python", "docker"] {
        std::fs::create_dir_all(base.join(name)).unwrap();
        std::fs::copy(
            fixture("base-skills").join(name).join("SKILL.md"),
            base.join(name).join("SKILL.md"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(base.join("git")).unwrap();
    let latin1 = b"---\nname: git\ndescription: R\xe8gles de l'\xe9quipe pour git\n---\n\n# Git\n";
    std::fs::write(base.join("git/SKILL.md"), latin1).unwrap();

    let out = s.path("out");
    let args = [
        "compile",
        "--out",
        out.to_str().unwrap(),
        "--base-skills",
        base.to_str().unwrap(),
    ];
    let o = skillc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        out.join("deltas/python.json").exists(),
        "python still gets its delta"
    );
    assert!(!out.join("deltas/git.json").exists());
    let diags = read_json(&out.join("diagnostics.json"));
    let l007 = diags_of(&diags, "L007");
    assert_eq!(l007.len(), 1, "{l007:?}");
    assert!(l007[0]["subject"].as_str().unwrap().ends_with("git/SKILL.md"));
    assert!(l007[0]["message"].as_str().unwrap().contains("not UTF-8"));
    assert!(stderr(&o).contains("error[L007]"));

    let strict = skillc(&[&args[..], &["--strict"]].concat());
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
}

/// A nightly compile whose only news is an unrelated gotcha days later must not restage
/// the authored skill's rows: decay moved every rule's confidence, but no rule changed, so the
/// bullets (text and id) and the row ids stay the same.
#[test]
fn rows_stay_the_same_when_only_confidence_moved() {
    let s = Scratch::new("deltas-stable");
    let (input, later, base) = (s.path("in.jsonl"), s.path("later.jsonl"), s.path("base"));
    std::fs::create_dir_all(base.join("python")).unwrap();
    std::fs::write(
        base.join("python/SKILL.md"),
        "---\nname: python\ndescription: How we write Python services at acme.\n---\n\n# Python\n\nUse uv for environments.\n\n## Learned lessons\n\n- Pin the interpreter in .python-version.\n",
    )
    .unwrap();
    let lessons = [
        "Run pytest from the repository root so conftest.py and the package import path are picked up.",
        "Use freezegun's tick=True when code under test sleeps, or time never advances.",
        "Set PYTHONDONTWRITEBYTECODE=1 in the test image so stale .pyc files never shadow edits.",
    ];
    let mut records = Vec::new();
    for (i, text) in lessons.iter().enumerate() {
        for (j, project) in ["acme/billing", "acme/ingest"].iter().enumerate() {
            records.push(serde_json::json!({"id": format!("py-{i}-{j}"),
                "recorded_at": format!("2026-10-0{}T0{j}:00:00Z", i + 1), "domains": ["python"],
                "project": format!("git@github.com:{project}.git"), "outcome": "succeeded", "lesson": text}));
        }
    }
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    std::fs::write(
        &later,
        serde_json::json!({"id": "py-late", "recorded_at": "2026-10-07T09:00:00Z", "domains": ["python"],
            "project": "git@github.com:acme/billing.git", "outcome": "succeeded",
            "gotchas": ["pandas.read_csv guesses dtypes per chunk; pass dtype= for mixed columns."]})
        .to_string(),
    )
    .unwrap();
    let compile = |out: &str, inputs: &[&std::path::Path]| {
        let out = s.path(out);
        let mut args = vec![
            "compile",
            "--out",
            out.to_str().unwrap(),
            "--base-skills",
            base.to_str().unwrap(),
        ];
        args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
        let o = skillc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (
            std::fs::read(out.join("deltas/python.json")).unwrap(),
            read_json(&out.join("ledger.json")),
        )
    };
    let (before, ledger_before) = compile("night-1", &[&input]);
    let (after, ledger_after) = compile("night-2", &[&input, &later]);
    let confidences = |ledger: &serde_json::Value| -> Vec<serde_json::Value> {
        let all = ledger["lessons"].as_array().unwrap();
        all.iter()
            .filter(|l| l["domain"] == "python")
            .map(|l| l["confidence"].clone())
            .collect()
    };
    assert_ne!(
        confidences(&ledger_before),
        confidences(&ledger_after),
        "decay moved confidence"
    );
    assert_eq!(String::from_utf8_lossy(&before), String::from_utf8_lossy(&after));
    let delta: serde_json::Value = serde_json::from_slice(&after).unwrap();
    let body = delta["rows"][0]["payload"]["body"].as_str().unwrap();
    assert_eq!(body.matches("(id: L").count(), 3, "all three rules fit: {body}");
}

/// A rule merged into an authored skill by hand and later retired is still in the skill: the
/// compile says where (E004 at the bullet's file and line), and does not propose it again.
#[test]
fn a_merged_rule_that_was_retired_is_reported_where_the_skill_carries_it() {
    let s = Scratch::new("deltas-withdrawn");
    let (input, base, out) = (s.path("rust.jsonl"), s.path("base"), s.path("out"));
    let text = "Use cargo build --locked in CI so the build honours Cargo.lock.";
    let records: Vec<String> = ["acme/ingest", "acme/cli"]
        .iter()
        .enumerate()
        .map(|(i, project)| {
            serde_json::json!({"id": format!("rs-{i}"), "recorded_at": format!("2026-09-1{i}T08:00:00Z"),
                "domains": ["rust"], "project": format!("git@github.com:{project}.git"),
                "outcome": "succeeded", "lesson": text})
            .to_string()
        })
        .collect();
    std::fs::write(&input, records.join("\n")).unwrap();
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let id = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    std::fs::create_dir_all(base.join("rust")).unwrap();
    let skill = format!(
        "---\nname: rust\ndescription: Rust at acme.\n---\n\n# Rust\n\n## Learned lessons\n\n- {text} (id: {id})\n"
    );
    std::fs::write(base.join("rust/SKILL.md"), skill).unwrap();
    let o = skillc(&[
        "lessons",
        "retire",
        &id,
        "--reason",
        "CI now vendors crates",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = compile_to(&input, &out, &["--base-skills", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = read_json(&out.join("diagnostics.json"));
    let e004 = diags_of(&diags, "E004");
    assert_eq!(e004.len(), 1, "{diags:#}");
    let message = e004[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&id) && message.contains("retired: CI now vendors crates"),
        "{message}"
    );
    assert!(!message.contains("superseded by"), "{message}");
    assert_eq!(e004[0]["line"], 10, "{}", e004[0]);
    assert!(e004[0]["file"].as_str().unwrap().ends_with("rust/SKILL.md"));
    assert!(!out.join("deltas/rust.json").exists(), "nothing new to propose");
}

/// A rule merged by hand under the id it had then is still merged after back-filled older
/// records re-found its lesson under a new id — even when the back-fill's file sorts first and
/// nothing but the authored skill names the old id: it is not proposed again, and S004 says
/// what the citation names now.
#[test]
fn a_merged_rule_a_back_fill_re_founded_is_not_proposed_again() {
    let s = Scratch::new("deltas-cli-refounded");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let prune = |id: &str, at: &str, project: &str| {
        format!(
            r#"{{"id": "{id}", "recorded_at": "{at}", "domains": ["docker"], "project": "git@github.com:acme/{project}.git", "outcome": "succeeded", "task": "free disk space on the CI runner", "dead_ends": [{{"name": "docker system prune -a", "reason": "wiped the layer cache CI relies on"}}]}}"#
        ) + "\n"
    };
    std::fs::write(
        records.join("runner-2026-03.jsonl"),
        prune("ci-302", "2026-03-03T10:00:00Z", "web") + &prune("ci-304", "2026-03-04T10:00:00Z", "api"),
    )
    .unwrap();
    let out = s.path("out");
    let compile = |base: Option<&std::path::Path>| {
        let mut args = vec![
            "compile",
            records.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(b) = base {
            args.extend(["--base-skills", b.to_str().unwrap()]);
        }
        let o = skillc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&out.join("ledger.json"))
    };
    let ledger = compile(None);
    let rule = &ledger["lessons"][0];
    assert_eq!(rule["rule"], true, "{ledger:#}");
    let old = rule["id"].as_str().unwrap().to_string();

    // The team merged the rule by hand into its docker skill.
    let base = s.path("base");
    std::fs::create_dir_all(base.join("docker")).unwrap();
    std::fs::write(
        base.join("docker/SKILL.md"),
        format!(
            "---\nname: docker\ndescription: Team Docker conventions. Use when editing Dockerfiles.\n---\n\n\
             # Docker\n\n## Learned lessons\n\n- Avoid: docker system prune -a (id: {old})\n"
        ),
    )
    .unwrap();
    // An older session syncs late, in a file that sorts first.
    std::fs::write(
        records.join("backfill-2026-03.jsonl"),
        prune("ci-301", "2026-03-01T10:00:00Z", "web"),
    )
    .unwrap();
    let ledger = compile(Some(&base));
    let new = ledger["lessons"][0]["id"].as_str().unwrap().to_string();
    assert_ne!(new, old, "the older session founds the lesson anew");
    assert_eq!(ledger["lessons"][0]["rule"], true);
    assert!(
        !out.join("deltas/docker.json").exists(),
        "the skill already carries the rule: {}",
        std::fs::read_to_string(out.join("deltas/docker.json")).unwrap_or_default()
    );
    let diags = read_json(&out.join("diagnostics.json"));
    let s004 = diags_of(&diags, "S004");
    assert!(
        s004.iter()
            .any(|d| d["evidence"]["old_id"] == old.as_str() && d["evidence"]["new_id"] == new.as_str()),
        "{diags:#}"
    );
    assert!(diags_of(&diags, "E004").is_empty(), "{diags:#}");
}

/// Two weeks of nightly compiles (`tests/fixtures/nightly`) learn rules the team's own skills
/// already state in other words: docker's "Pin base images by digest in the Dockerfile so that
/// rebuilds are reproducible" is word for word the second record that reinforced the compiled
/// "Pin the base image by digest …", and node's skill says "Use `npm ci` in CI and `npm install`
/// only when you mean to change the lockfile". Clustering took those wordings for one lesson, so
/// a delta proposing them again would only make a reviewer delete the duplicate; the additions
/// the skill does not state (node's dead end, the npm fix) are still proposed.
#[test]
fn a_rule_the_skill_states_in_other_words_is_not_proposed() {
    let s = Scratch::new("deltas-cli-reworded");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let nightly = fixture("nightly");
    for week in ["week1.jsonl", "week2.jsonl"] {
        std::fs::copy(nightly.join(week), records.join(week)).unwrap();
    }
    let out = s.path("out");
    let skills = nightly.join("skills");
    let o = compile_to(&records, &out, &["--base-skills", skills.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let rule = |prefix: &str| {
        let l = (ledger["lessons"].as_array().unwrap().iter())
            .find(|l| l["text"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no lesson {prefix}: {ledger:#}"));
        assert_eq!(
            (l["rule"].as_bool(), l["scope"].as_str()),
            (Some(true), Some("global")),
            "{l}"
        );
        l["id"].as_str().unwrap().to_string()
    };
    let pin = rule("Pin the base image by digest");
    let npm_ci = rule("Use npm ci instead of npm install");
    let avoid = rule("Deleting package-lock.json");

    assert!(
        !out.join("deltas/docker.json").exists(),
        "docker's only rule is stated in the skill: {}",
        std::fs::read_to_string(out.join("deltas/docker.json")).unwrap_or_default()
    );
    let node = std::fs::read_to_string(out.join("deltas/node.json")).unwrap();
    assert!(!node.contains(&pin) && !node.contains(&npm_ci), "{node}");
    assert!(
        node.contains(&avoid),
        "a clear addition is still proposed: {node}"
    );
    let o = skillc(&[
        "deltas",
        "show",
        "node",
        "--base-skills",
        skills.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let resolved = stdout(&o);
    assert!(
        resolved.contains(&avoid) && !resolved.contains("Use npm ci instead of npm install"),
        "{resolved}"
    );
}

/// Confirmations that only reorder a skill's rules by confidence do not restage its row: two
/// sessions that had node's "Avoid: Deleting package-lock.json …" in play and passed lift it
/// above the npm fix, and the row proposes the same two rules as the night before, so its id
/// and payload (what a reviewer approved) stay; only its provenance gains the confirmations.
#[test]
fn a_row_is_not_restaged_when_confirmations_only_reorder_its_rules() {
    let s = Scratch::new("deltas-cli-reorder");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let nightly = fixture("nightly");
    for week in ["week1.jsonl", "week2.jsonl", "week3.jsonl"] {
        std::fs::copy(nightly.join(week), records.join(week)).unwrap();
    }
    let out = s.path("out");
    let skills = nightly.join("skills");
    let compile = || {
        let o = compile_to(&records, &out, &["--base-skills", skills.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let delta = read_json(&out.join("deltas/node.json"));
        assert_eq!(delta["rows"].as_array().unwrap().len(), 1, "{delta:#}");
        (delta["rows"][0].clone(), read_json(&out.join("ledger.json")))
    };
    let (before, ledger) = compile();
    let lesson = |ledger: &serde_json::Value, prefix: &str| {
        (ledger["lessons"].as_array().unwrap().iter())
            .find(|l| l["text"].as_str().unwrap().starts_with(prefix) && l["status"] == "active")
            .unwrap_or_else(|| panic!("{prefix}: {ledger:#}"))
            .clone()
    };
    let avoid = lesson(&ledger, "Deleting package-lock.json")["id"].clone();
    let fix = lesson(&ledger, "run_shell_command npm: run `npm ci --force`")["id"].clone();
    let proposed = |row: &serde_json::Value| {
        let mut ids = ids(&row["provenance"]["lessons"]);
        ids.sort();
        ids
    };
    let mut both = vec![
        fix.as_str().unwrap().to_string(),
        avoid.as_str().unwrap().to_string(),
    ];
    both.sort();
    assert_eq!(proposed(&before), both);

    let session = |id: &str, at: &str, project: &str| {
        serde_json::json!({"id": id, "recorded_at": at, "domains": ["node"],
            "project": format!("git@github.com:acme/{project}.git"), "outcome": "succeeded",
            "task": "resolve the package-lock.json merge conflict",
            "operations": [
                {"tool": "run_shell_command", "args": {"command": "npm install", "cwd": format!("/srv/{project}")}, "status": "ok"},
                {"tool": "run_shell_command", "args": {"command": "npm test", "cwd": format!("/srv/{project}")}, "status": "ok",
                 "check": {"label": "tests", "target": project, "passed": true}}],
            "in_play": [avoid]})
        .to_string()
    };
    std::fs::write(
        records.join("week4.jsonl"),
        session("exp-2026-10-22-003", "2026-10-22T10:00:00Z", "storefront-web")
            + "\n"
            + &session("exp-2026-10-23-001", "2026-10-23T09:00:00Z", "admin-ui")
            + "\n",
    )
    .unwrap();
    let (after, ledger) = compile();
    let confidence = |prefix: &str| lesson(&ledger, prefix)["confidence"].as_f64().unwrap();
    assert!(
        confidence("Deleting package-lock.json") > confidence("run_shell_command npm: run `npm ci --force`"),
        "the confirmations lift the dead end above the fix: {ledger:#}"
    );
    assert_eq!(
        (&after["id"], &after["payload"]),
        (&before["id"], &before["payload"]),
        "the same rules, restaged"
    );
    assert_eq!(proposed(&after), both);
    let evidence = after["provenance"]["evidence"].to_string();
    assert!(evidence.contains("exp-2026-10-23-001"), "{evidence}");
}

/// Teams name their skills as they tag their records: `k8s/SKILL.md` and `nodejs/SKILL.md`
/// are the kubernetes and node skills, as records tagged `k8s` and `nodejs` compile into those
/// domains (`rules/aliases.yaml`), so each gets the delta its domain's global rules make.
#[test]
fn an_authored_skill_named_by_an_alias_gets_its_domains_delta() {
    let s = Scratch::new("deltas-cli-alias");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let nightly = fixture("nightly");
    for week in ["week1.jsonl", "week2.jsonl", "week3.jsonl"] {
        std::fs::copy(nightly.join(week), records.join(week)).unwrap();
    }
    let skills = s.path("skills");
    std::fs::create_dir_all(skills.join("k8s")).unwrap();
    std::fs::create_dir_all(skills.join("nodejs")).unwrap();
    std::fs::write(
        skills.join("k8s/SKILL.md"),
        "---\nname: k8s\ndescription: How we deploy to the clusters. Use before kubectl apply or a rollout.\n---\n\n# Kubernetes\n\n## Deploying\n\n- Deploy through Argo CD; never kubectl apply to prod by hand.\n",
    )
    .unwrap();
    let node = std::fs::read_to_string(nightly.join("skills/node/SKILL.md")).unwrap();
    std::fs::write(
        skills.join("nodejs/SKILL.md"),
        node.replace("name: node\n", "name: nodejs\n"),
    )
    .unwrap();
    let out = s.path("out");
    let o = compile_to(&records, &out, &["--base-skills", skills.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let global_rules = |domain: &str| -> Vec<String> {
        (ledger["lessons"].as_array().unwrap().iter())
            .filter(|l| l["domain"] == domain && l["rule"] == true && l["scope"] == "global")
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect()
    };
    let rollout = global_rules("kubernetes");
    assert_eq!(rollout.len(), 1, "{ledger:#}");
    let k8s = std::fs::read_to_string(out.join("deltas/k8s.json")).unwrap_or_default();
    assert!(k8s.contains(&rollout[0]), "k8s is kubernetes: {k8s:?}");
    let nodejs = std::fs::read_to_string(out.join("deltas/nodejs.json")).unwrap_or_default();
    assert!(!global_rules("node").is_empty());
    assert!(
        nodejs.contains("Deleting package-lock.json"),
        "nodejs is node: {nodejs:?}"
    );
    let o = skillc(&[
        "deltas",
        "show",
        "k8s",
        "--base-skills",
        skills.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(&rollout[0]), "{}", stdout(&o));
}

/// A fix learned from the calls ("run_shell_command cargo: run `cargo build --locked` instead
/// of `cargo build`") is stated by a skill that says it in words: the tool and program the
/// lesson's text leads with are no words a person writes.
#[test]
fn a_fix_the_skill_states_in_words_is_not_proposed() {
    let s = Scratch::new("deltas-cli-fix-in-words");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let nightly = fixture("nightly");
    for week in ["week1.jsonl", "week2.jsonl", "week3.jsonl"] {
        std::fs::copy(nightly.join(week), records.join(week)).unwrap();
    }
    let skills = s.path("skills/rust");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("SKILL.md"),
        "---\nname: rust\ndescription: How we build the Rust services.\n---\n\n# Rust services\n\n\
         ## Building\n\n- Build with `cargo build --locked` in CI so Cargo.lock is honoured.\n\n## Learned lessons\n",
    )
    .unwrap();
    let out = s.path("out");
    let o = compile_to(
        &records,
        &out,
        &["--base-skills", s.path("skills").to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&out.join("ledger.json"));
    let fix = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .ends_with("run `cargo build --locked` instead of `cargo build`")
        })
        .unwrap_or_else(|| panic!("no mechanical lesson: {ledger:#}"));
    assert_eq!(
        (fix["rule"].as_bool(), fix["scope"].as_str()),
        (Some(true), Some("global")),
        "{fix}"
    );
    let delta = std::fs::read_to_string(out.join("deltas/rust.json")).unwrap_or_default();
    assert!(!delta.contains(fix["id"].as_str().unwrap()), "{delta}");
}

/// An authored skill named for a team's workflow rather than a domain (`git-workflow`) gets no
/// delta; an E005 note says so and names the domain among its words, instead of leaving it out
/// in silence. A skill that matches (`docker`) gets no such note.
#[test]
fn an_authored_skill_that_matches_no_domain_says_so_and_names_the_likely_one() {
    let s = Scratch::new("deltas-unmatched");
    let base = s.path("base");
    std::fs::create_dir_all(base.join("docker")).unwrap();
    std::fs::copy(
        fixture("base-skills").join("docker/SKILL.md"),
        base.join("docker/SKILL.md"),
    )
    .unwrap();
    std::fs::create_dir_all(base.join("git-workflow")).unwrap();
    std::fs::write(
        base.join("git-workflow/SKILL.md"),
        "---\nname: git-workflow\ndescription: How we branch, commit and rebase at acme. Use when committing.\n---\n\n# Git workflow\n\n- Rebase feature branches on main before opening a PR.\n",
    )
    .unwrap();
    let out = s.path("out");
    let samples = repo().join("samples");
    let o = compile_to(&samples, &out, &["--base-skills", base.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("git/SKILL.md").exists(), "the samples compile git rules");
    assert!(!out.join("deltas/git-workflow.json").exists());
    let diags = read_json(&out.join("diagnostics.json"));
    let e005 = diags_of(&diags, "E005");
    assert_eq!(e005.len(), 1, "{diags:#}");
    assert_eq!(e005[0]["subject"], "git-workflow");
    assert_eq!(e005[0]["severity"], "note");
    assert_eq!(e005[0]["evidence"]["did_you_mean"], serde_json::json!(["git"]));
    // At the frontmatter's `name`, the line a user edits to match a domain.
    assert!(
        e005[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("git-workflow/SKILL.md"),
        "{}",
        e005[0]
    );
    assert_eq!(e005[0]["line"], 2, "{}", e005[0]);
    assert!(
        e005[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("did you mean git?"),
        "{}",
        e005[0]
    );
    assert!(stderr(&o).contains("note[E005]: unmatched-skill"));
}
