//! Skill deltas (`--base-skills`): staged overlay rows that add a domain's global rules to
//! skills people wrote, checked by resolving every row over its authored skill.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use skillc::deltas::{self, BaseSkill, Section};
use skillc::diagnostics::Diagnostic;
use skillc::digest::sha256_hex;
use skillc::emit::OutFile;
use skillc::model::{HistoryEntry, Kind, Lesson, Status};
use skillc::policy::{BUILTIN_POLICY, Policy, Rules};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/base-skills")
}

fn base() -> Vec<BaseSkill> {
    let (skills, unreadable) = deltas::read_base_skills(&fixtures()).expect("fixtures read");
    assert!(unreadable.is_empty(), "{unreadable:?}");
    skills
}

fn skill(name: &str) -> BaseSkill {
    base().into_iter().find(|b| b.name == name).unwrap()
}

fn policy() -> Policy {
    Policy::from_yaml(BUILTIN_POLICY).unwrap()
}

fn rules() -> Rules {
    Rules::builtin()
}

/// The built-in rules with another policy (a delta budget).
fn rules_with(policy: &Policy) -> Rules {
    let mut rules = Rules::builtin();
    rules.policy = policy.clone();
    rules
}

#[allow(clippy::too_many_arguments)]
fn lesson(
    id: &str,
    domain: &str,
    kind: Kind,
    text: &str,
    confidence: i32,
    evidence: &[&str],
    rule: bool,
    scope: &str,
) -> Lesson {
    Lesson {
        id: id.into(),
        kind,
        text: text.into(),
        domain: domain.into(),
        scope: scope.into(),
        operation_key: None,
        status: Status::Active,
        reason: None,
        confidence,
        reinforcement: evidence.len() as u32,
        rule,
        pinned: false,
        blessed: false,
        evidence: evidence.iter().map(|&s| s.into()).collect(),
        projects: vec!["0a1b2c3d4e5f".into(), "9f8e7d6c5b4a".into()],
        superseded_by: None,
        supersedes: None,
        founder: evidence.first().map_or_else(|| "".into(), |&s| s.into()),
        cluster: format!("C{}", &id[1..]),
        admitted_at: 1_735_689_600_000,
        last_used_day: 20_100,
        working: None,
        reasons: if kind == Kind::Avoid {
            vec!["psycopg2 had no musl wheel".into()]
        } else {
            Vec::new()
        },
        history: vec![HistoryEntry {
            at: 1_735_689_600_000,
            event: skillc::model::Event::Admitted,
            confidence: 500,
            experiences: evidence.iter().map(|&s| s.into()).collect(),
            detail: None,
            idle_days: 0,
            idle_confidence: 0,
        }],
    }
}

const G: &str = "global";

fn lessons() -> Vec<Lesson> {
    vec![
        // python: two global rules, plus things that must stay out of the delta.
        lesson(
            "La1b2c3d4e5f6",
            "python",
            Kind::Do,
            "Create the virtualenv with uv venv; it is ten times faster than python -m venv.",
            650,
            &["e-py-03", "e-py-01", "e-py-02"],
            true,
            G,
        ),
        lesson(
            "L0f0e0d0c0b0a",
            "python",
            Kind::Watch,
            "pytest collects tests from build/ unless testpaths is set in pyproject.toml.",
            500,
            &["e-py-02", "e-py-04"],
            true,
            G,
        ),
        lesson(
            "L111111111111",
            "python",
            Kind::Do,
            "Project-only rule that must not leave its project.",
            900,
            &["e-py-05", "e-py-06"],
            true,
            "project:0a1b2c3d4e5f",
        ),
        lesson(
            "L222222222222",
            "python",
            Kind::Do,
            "An active lesson that is not yet a rule.",
            800,
            &["e-py-07"],
            false,
            G,
        ),
        // docker: five global rules, too many for the default token budget.
        lesson(
            "L966dab75a194",
            "docker",
            Kind::Do,
            "Order the build so the dependency install happens before copying source code, keeping the install layer cached.",
            450,
            &["a-9cb40f5cbe", "a-f3f3d805ce", "b-11b2f7d837", "b-2a"],
            true,
            G,
        ),
        lesson(
            "La633ef8b17b5",
            "docker",
            Kind::Do,
            "Keep .git and node_modules out of the build context with a .dockerignore; a huge context makes every build slow.",
            320,
            &["a-95ae48430e", "b-03c4045a0e", "b-155e0b0805"],
            true,
            G,
        ),
        lesson(
            "L0060823f9809",
            "docker",
            Kind::Do,
            "Pin base images to an explicit version tag instead of latest so builds are reproducible.",
            220,
            &["a-44bcce7b05", "c-d90b21603b", "tn-0112-005"],
            true,
            G,
        ),
        lesson(
            "L9c100d123805",
            "docker",
            Kind::Avoid,
            "Switch base image to Alpine",
            500,
            &["a-11a27add58", "a-776f8607a4", "c-c0a9dc8e63"],
            true,
            G,
        ),
        lesson(
            "L3d1d72e714ed",
            "docker",
            Kind::Watch,
            "Alpine base images use musl; expect Python wheels and glibc binaries to need source builds.",
            440,
            &["a-11a27add58", "a-776f8607a4", "c-c0a9dc8e63"],
            true,
            G,
        ),
        // git: matched through the frontmatter name of team-git/.
        lesson(
            "L4a4a4a4a4a4a",
            "git",
            Kind::Do,
            "Rebase onto main before opening a pull request.",
            700,
            &["e-git-1", "e-git-2"],
            true,
            G,
        ),
        // kubernetes: has rules but no authored skill.
        lesson(
            "L5b5b5b5b5b5b",
            "kubernetes",
            Kind::Do,
            "Set resource requests on every container.",
            600,
            &["e-k8s-1", "e-k8s-2"],
            true,
            G,
        ),
    ]
}

fn by_id(id: &str) -> Lesson {
    lessons().into_iter().find(|l| l.id == id).unwrap()
}

fn rows(f: &OutFile) -> Vec<Value> {
    let text = f.text();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["generator"], "skillc");
    assert_eq!(v["version"], 1);
    assert!(text.ends_with("}\n"), "trailing newline");
    v["rows"].as_array().unwrap().clone()
}

fn file<'a>(files: &'a [OutFile], name: &str) -> &'a OutFile {
    files
        .iter()
        .find(|f| f.path == format!("deltas/{name}.json"))
        .unwrap_or_else(|| panic!("no delta for {name}"))
}

fn e002<'a>(diags: &'a [Diagnostic], name: &str) -> Option<&'a Diagnostic> {
    let found: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.code == "E002" && d.subject == name)
        .collect();
    assert!(found.len() <= 1, "one E002 per skill: {found:?}");
    found.first().copied()
}

fn left_out(d: &Diagnostic) -> Vec<String> {
    d.evidence["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The body (no frontmatter), LF, computed here independently of the crate.
fn body_of(text: &str) -> String {
    let t = text.replace("\r\n", "\n");
    let rest = t.strip_prefix("---\n").unwrap();
    let end = rest.find("\n---\n").unwrap();
    rest[end + 5..].to_string()
}

fn tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

/// Checks one row against its authored skill, independently of the crate's own helpers, and
/// returns the resolved skill.
fn check_row(skill: &BaseSkill, row: &Value, max_payload: usize, max_tokens: usize) -> String {
    assert_eq!(row["status"], "staged");
    assert_eq!(row["scope"], "global");
    assert_eq!(row["base_name"], skill.name.as_str());
    assert_eq!(row["provenance"]["generator"], "skillc");
    let digest = row["anchor_digest"].as_str().unwrap();
    let payload = serde_json::to_string(&row["payload"]).unwrap();
    let id = format!(
        "D{}",
        &sha256_hex(format!("{}\0{digest}\0{payload}", skill.name).as_bytes())[..12]
    );
    assert_eq!(row["id"], id.as_str(), "row id");
    assert!(
        payload.chars().count() <= max_payload,
        "payload {} > {max_payload}",
        payload.chars().count()
    );
    // The anchor section exists in the authored skill with exactly this digest.
    let body = body_of(&skill.text);
    let sec = deltas::sections(&body)
        .into_iter()
        .find(|s| s.slug == row["anchor_section"].as_str().unwrap())
        .expect("anchor section");
    assert_eq!(digest, format!("sha256:{}", sha256_hex(sec.text.as_bytes())));
    let resolved = deltas::resolve(&skill.text, std::slice::from_ref(row)).expect("row resolves");
    let added = tokens(&resolved) - tokens(&skill.text);
    assert!(added <= max_tokens, "added {added} tokens > {max_tokens}");
    // Frontmatter kept, every kept rule's text and id present.
    let front_end = skill.text.find("---").unwrap() + skill.text[3..].find("---").unwrap() + 3;
    assert!(
        resolved.starts_with(&skill.text[..front_end + 3]),
        "frontmatter kept"
    );
    let ids: Vec<&str> = row["provenance"]["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!ids.is_empty());
    let mut evidence = BTreeSet::new();
    for id in &ids {
        let l = by_id(id);
        assert!(
            resolved.contains(&format!("(id: {id})")),
            "{id} in resolved skill"
        );
        assert!(resolved.contains(&l.text), "text of {id}");
        assert!(!skill.text.contains(id.to_string().as_str()));
        evidence.extend(l.evidence.clone());
    }
    let ev: Vec<&str> = row["provenance"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        ev,
        evidence.iter().map(|id| &**id).collect::<Vec<_>>(),
        "evidence sorted, deduped"
    );
    resolved
}

#[test]
fn reads_authored_skills_sorted_and_skips_directories_without_one() {
    let names: Vec<String> = base().into_iter().map(|b| b.name).collect();
    assert_eq!(names, ["docker", "python", "team-git", "terraform"]);
    assert!(skill("docker").text.contains("\r\n"), "docker fixture keeps CRLF");
    assert!(skill("python").path.ends_with("python/SKILL.md"));
}

#[test]
fn every_row_resolves_over_its_authored_skill_within_budget() {
    let p = policy();
    assert_eq!(
        (p.deltas.max_payload_chars, p.deltas.max_added_tokens),
        (2000, 120)
    );
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules_with(&p));
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["deltas/docker.json", "deltas/python.json", "deltas/team-git.json"]
    );
    for b in base() {
        let Some(f) = files.iter().find(|f| f.path == format!("deltas/{}.json", b.name)) else {
            continue;
        };
        let rows = rows(f);
        assert_eq!(rows.len(), 1);
        for r in &rows {
            check_row(&b, r, 2000, 120);
        }
        // All rows together resolve too.
        deltas::resolve(&b.text, &rows).unwrap();
    }
    // The authored terraform skill has no domain with lessons: a note, not an error.
    let unmatched: Vec<&str> = (diags.iter().filter(|d| d.code == "E005"))
        .map(|d| d.subject.as_str())
        .collect();
    assert_eq!(unmatched, ["terraform"]);
    // team-git is named "git" in its frontmatter: matched, and told its name breaks the spec.
    let invalid: Vec<&str> = (diags.iter().filter(|d| d.code == "E007"))
        .map(|d| d.subject.as_str())
        .collect();
    assert_eq!(invalid, ["team-git"]);
    assert!(diags.iter().all(|d| ["E002", "E005", "E007"].contains(&d.code)));
}

/// A rule the authored skill already states in the same words (no id: a person wrote it, or
/// pasted it without one) is not proposed again.
#[test]
fn a_rule_the_skill_already_states_is_not_proposed() {
    let mut all = lessons();
    all.push(lesson(
        "L5a5a5a5a5a5a",
        "python",
        Kind::Do,
        "Never run  `pip install` outside the VIRTUALENV",
        900,
        &["e-py-01", "e-py-05"],
        true,
        G,
    ));
    let (files, _) = deltas::compute(&base(), &all, &Default::default(), &rules());
    let row = &rows(file(&files, "python"))[0];
    assert_eq!(
        row["provenance"]["lessons"],
        serde_json::json!(["La1b2c3d4e5f6", "L0f0e0d0c0b0a"]),
        "the stated rule is left out, the others stay"
    );
}

#[test]
fn learned_lessons_section_is_replaced_in_place() {
    let py = skill("python");
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules());
    assert!(
        e002(&diags, "python").is_none(),
        "both python rules fit: {diags:?}"
    );
    let row = &rows(file(&files, "python"))[0];
    assert_eq!(row["kind"], "replace_section");
    assert_eq!(row["anchor_section"], "learned-lessons");
    let authored_section = "## Learned lessons\n\nLessons the team picked up the hard way:\n\n- Never run `pip install` outside the virtualenv.\n";
    assert_eq!(
        row["anchor_digest"],
        format!("sha256:{}", sha256_hex(authored_section.as_bytes())).as_str()
    );
    assert_eq!(
        row["provenance"]["lessons"],
        serde_json::json!(["La1b2c3d4e5f6", "L0f0e0d0c0b0a"]),
        "confidence desc"
    );
    let body = row["payload"]["body"].as_str().unwrap();
    let expected = "## Learned lessons\n\nLessons the team picked up the hard way:\n\n- Never run `pip install` outside the virtualenv.\n\
        - Create the virtualenv with uv venv; it is ten times faster than python -m venv. (id: La1b2c3d4e5f6)\n\
        - Watch out: pytest collects tests from build/ unless testpaths is set in pyproject.toml. (id: L0f0e0d0c0b0a)\n";
    assert_eq!(body, expected);
    let resolved = check_row(&py, row, 2000, 120);
    // Only the section changed: drop the two bullets and the authored skill is back.
    let stripped: String = resolved
        .split_inclusive('\n')
        .filter(|l| !l.contains("(id: L"))
        .collect();
    assert_eq!(stripped, py.text);
    assert!(resolved.find("(id: L0f0e0d0c0b0a").unwrap() < resolved.find("## References").unwrap());
    for out in ["L111111111111", "L222222222222", "L4a4a4a4a4a4a"] {
        assert!(!resolved.contains(out), "{out} must not be in the python delta");
    }
}

#[test]
fn without_learned_lessons_rules_follow_the_last_line_and_crlf_survives() {
    let docker = skill("docker");
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules());
    let row = &rows(file(&files, "docker"))[0];
    assert_eq!(row["kind"], "replace_snippet");
    let last = "Ask in #platform if a build is slower than five minutes.";
    assert_eq!(row["payload"]["old"], last);
    assert_eq!(skill("docker").text.matches(last).count(), 1);
    assert_eq!(row["anchor_section"], "compose");
    let new = row["payload"]["new"].as_str().unwrap();
    assert!(
        new.starts_with(&format!("{last}\n\n## Learned lessons\n\n- ")),
        "{new}"
    );
    let section = "## Compose\n\nUse `docker compose`, not `docker-compose`.\n\nAsk in #platform if a build is slower than five minutes.";
    assert_eq!(
        row["anchor_digest"],
        format!("sha256:{}", sha256_hex(section.as_bytes())).as_str()
    );
    let resolved = check_row(&docker, row, 2000, 120);
    assert_eq!(
        resolved.matches('\n').count(),
        resolved.matches("\r\n").count(),
        "CRLF throughout"
    );
    assert!(resolved.contains("five minutes.\r\n\r\n## Learned lessons\r\n\r\n- "));
    assert!(
        resolved
            .contains("- Avoid: Switch base image to Alpine — psycopg2 had no musl wheel (id: L9c100d123805")
    );

    // Five rules do not fit 120 tokens: the strongest are kept, the rest reported once.
    let kept: Vec<String> = row["provenance"]["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let d = e002(&diags, "docker").expect("E002 for docker");
    assert_eq!(d.domain.as_deref(), Some("docker"));
    let out = left_out(d);
    let by_conf = [
        "L9c100d123805",
        "L966dab75a194",
        "L3d1d72e714ed",
        "La633ef8b17b5",
        "L0060823f9809",
    ];
    assert!(!kept.is_empty() && !out.is_empty());
    // Confidence chooses what is kept; the row lists it do, avoid, watch, oldest first.
    let mut strongest = by_conf[..kept.len()].to_vec();
    let mut listed: Vec<&str> = kept.iter().map(String::as_str).collect();
    strongest.sort();
    listed.sort();
    assert_eq!(listed, strongest, "the strongest kept");
    assert_eq!(out, by_conf[kept.len()..], "the rest left out, by confidence");
    for id in &out {
        assert!(!resolved.contains(id.as_str()));
    }
    assert!(d.evidence["added_tokens"].as_u64().unwrap() > 120);
    assert_eq!(d.evidence["max_added_tokens"], 120);

    // With room for everything, everything goes in and nothing is reported.
    let mut roomy = policy();
    roomy.deltas.max_added_tokens = 10_000;
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules_with(&roomy));
    let row = &rows(file(&files, "docker"))[0];
    check_row(&docker, row, 2000, 10_000);
    assert_eq!(row["provenance"]["lessons"].as_array().unwrap().len(), 5);
    assert!(e002(&diags, "docker").is_none());
}

#[test]
fn payload_budget_leaves_rules_out_with_e002() {
    let mut tight = policy();
    // The section with the first rule is 214 characters, with both 324.
    tight.deltas.max_payload_chars = 260;
    tight.deltas.max_added_tokens = 10_000;
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules_with(&tight));
    let py = &rows(file(&files, "python"))[0];
    check_row(&skill("python"), py, 260, 10_000);
    assert_eq!(py["provenance"]["lessons"], serde_json::json!(["La1b2c3d4e5f6"]));
    assert_eq!(left_out(e002(&diags, "python").unwrap()), ["L0f0e0d0c0b0a"]);
    assert!(
        e002(&diags, "python").unwrap().evidence["payload_chars"]
            .as_u64()
            .unwrap()
            > 260
    );

    // Nothing fits: no file, and every rule is reported.
    tight.deltas.max_payload_chars = 50;
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &rules_with(&tight));
    assert!(files.is_empty(), "{files:?}");
    assert_eq!(
        left_out(e002(&diags, "python").unwrap()),
        ["La1b2c3d4e5f6", "L0f0e0d0c0b0a"]
    );
    assert_eq!(left_out(e002(&diags, "team-git").unwrap()), ["L4a4a4a4a4a4a"]);
}

#[test]
fn frontmatter_name_matches_and_unmatched_skills_get_no_file() {
    let (files, _) = deltas::compute(&base(), &lessons(), &Default::default(), &rules());
    let row = &rows(file(&files, "team-git"))[0];
    assert_eq!(row["base_name"], "team-git");
    assert_eq!(row["anchor_section"], "git-conventions");
    assert!(
        files
            .iter()
            .all(|f| !f.path.contains("terraform") && !f.path.contains("kubernetes"))
    );

    // A matching domain without global rules: no rows, no file.
    let only_project: Vec<Lesson> = lessons()
        .into_iter()
        .filter(|l| l.domain != "python" || l.scope != G)
        .collect();
    let (files, diags) = deltas::compute(&base(), &only_project, &Default::default(), &rules());
    assert!(files.iter().all(|f| f.path != "deltas/python.json"));
    assert!(e002(&diags, "python").is_none());
    // No lessons at all: no file, and every authored skill says why it got none.
    let (files, diags) = deltas::compute(&base(), &[], &Default::default(), &rules());
    assert!(files.is_empty());
    let unmatched = diags.iter().filter(|d| d.code == "E005").count();
    assert_eq!(unmatched, base().len());
    assert!(diags.iter().all(|d| d.code == "E005" || d.code == "E007"));
}

#[test]
fn sections_slugs_preamble_and_fences() {
    let body = body_of(&skill("python").text);
    let secs = deltas::sections(&body);
    let slugs: Vec<&str> = secs.iter().map(|s| s.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "_preamble",
            "python-at-acme",
            "setup",
            "testing-with-pytest-coverage",
            "notes",
            "notes-2",
            "notes-3",
            "the-init-py-gotcha",
            "a-very-long-heading-that-goes-on-and-on-about-dependency-pinning",
            "learned-lessons",
            "references",
        ]
    );
    let pre = &secs[0];
    assert_eq!((pre.start_line, pre.end_line), (1, 3));
    assert_eq!(
        pre.text,
        "\nThese conventions apply to every Python service in the monorepo.\n"
    );
    // The fenced `# not a heading` lines stay in Setup.
    let setup = &secs[2];
    assert!(
        setup.text.contains("# not a heading")
            && setup.text.contains("## also not a heading")
            && setup.text.contains("# still not a heading")
    );
    assert!(setup.text.starts_with("## Setup\n") && setup.text.ends_with("~~~\n"));
    // Sections tile the body from the first heading on, contiguously.
    for w in secs.windows(2) {
        assert_eq!(w[0].end_line + 1, w[1].start_line);
    }
    assert_eq!(secs.last().unwrap().end_line, body.lines().count());
    let gotcha = secs.iter().find(|s| s.slug == "the-init-py-gotcha").unwrap();
    assert!(gotcha.text.contains("#NotAHeading") && gotcha.text.contains("####### Seven"));

    // The slug rules one by one.
    assert_eq!(
        deltas::slug("Use [the docs](https://x.y/z_(a)) and `uv`!"),
        "use-the-docs-and-uv"
    );
    assert_eq!(deltas::slug("  **Bold** _and_ `code`  "), "bold-and-code");
    assert_eq!(deltas::slug("Ünïcode — dash"), "n-code-dash");
    assert_eq!(deltas::slug("snake_case_name"), "snakecasename");
    assert_eq!(deltas::slug("C++ / C#"), "c-c");
    assert_eq!(deltas::slug("***"), "section");
    assert_eq!(deltas::slug(&"x".repeat(70)).len(), 64);

    // No heading at all: everything is preamble; a body that starts with a heading has none.
    let s = deltas::sections("just text\nmore text\n");
    assert_eq!(
        s,
        vec![Section {
            slug: "_preamble".into(),
            start_line: 1,
            end_line: 2,
            text: "just text\nmore text".into()
        }]
    );
    let s = deltas::sections("# Title\r\n\r\n```\r\n# code\r\n```\r\n## Title\r\n");
    assert_eq!(
        s.iter().map(|s| s.slug.as_str()).collect::<Vec<_>>(),
        ["title", "title-2"]
    );
    assert_eq!(s[0].text, "# Title\n\n```\n# code\n```", "CRLF normalised");
    // An unclosed fence swallows the rest; a longer closing fence closes it; ~~~ does not close ```.
    let s = deltas::sections("# A\n````\n# in\n```\n~~~\n# in too\n`````\n# B\n");
    assert_eq!(s.iter().map(|s| s.slug.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let s = deltas::sections("# A\n```\n# never closed\n");
    assert_eq!(s.len(), 1);
}

/// How a stale row's error ends.
const RESTAGE: &str = "; the skill was edited after the compile that staged its deltas: compile again with --base-skills to restage them";

#[test]
fn a_changed_authored_section_makes_resolve_fail() {
    let (files, _) = deltas::compute(&base(), &lessons(), &Default::default(), &rules());
    let py = skill("python");
    let row = rows(file(&files, "python")).remove(0);
    let tampered = py
        .text
        .replace("picked up the hard way", "picked up the easy way");
    let err = deltas::resolve(&tampered, std::slice::from_ref(&row)).unwrap_err();
    assert!(
        err.contains("learned-lessons") && err.contains("changed"),
        "{err}"
    );
    // It says what to do: the next compile stages the rows against the edited text.
    assert!(err.ends_with(RESTAGE), "{err}");
    // A change elsewhere does not touch the anchor.
    let elsewhere = py.text.replace("Use pip-tools.", "Use uv pip compile.");
    assert!(
        deltas::resolve(&elsewhere, std::slice::from_ref(&row))
            .unwrap()
            .contains("Use uv pip compile.")
    );
    // A renamed section is gone.
    let renamed = py.text.replace("## Learned lessons", "## Lessons");
    let err = deltas::resolve(&renamed, std::slice::from_ref(&row)).unwrap_err();
    assert!(err.contains("no section") && err.ends_with(RESTAGE), "{err}");

    let docker = skill("docker");
    let row = rows(file(&files, "docker")).remove(0);
    let tampered = docker
        .text
        .replace("not `docker-compose`", "never `docker-compose`");
    assert!(
        deltas::resolve(&tampered, std::slice::from_ref(&row))
            .unwrap_err()
            .contains("changed")
    );
    // Line endings alone are not a change.
    let lf = docker.text.replace("\r\n", "\n");
    let resolved = deltas::resolve(&lf, std::slice::from_ref(&row)).unwrap();
    assert!(!resolved.contains('\r'));
    // A tampered payload changes nothing in the anchor but no longer matches its id (checked by
    // the caller); a snippet that is not unique is refused.
    let mut dup = row.clone();
    dup["payload"]["old"] = Value::from("docker");
    dup["anchor_section"] = Value::from("compose");
    assert!(
        deltas::resolve(&docker.text, &[dup])
            .unwrap_err()
            .contains("times")
    );
}

#[test]
fn output_is_deterministic_whatever_the_input_order() {
    let (a, da) = deltas::compute(&base(), &lessons(), &Default::default(), &rules());
    let mut rev_base = base();
    rev_base.reverse();
    let mut rev_lessons = lessons();
    rev_lessons.reverse();
    let (b, db) = deltas::compute(&rev_base, &rev_lessons, &Default::default(), &rules());
    assert_eq!(a, b);
    assert_eq!(da, db);
}

#[test]
fn repeated_last_line_widens_the_snippet_and_merged_rules_are_not_proposed_again() {
    let text = "---\nname: python\ndescription: x\n---\n# Py\n\n```\npip install -e .\n```\n\n## More\n\n```\nmake test\n```\n";
    let b = BaseSkill {
        name: "python".into(),
        path: "python/SKILL.md".into(),
        text: text.into(),
    };
    let (files, _) = deltas::compute(
        std::slice::from_ref(&b),
        &lessons(),
        &Default::default(),
        &rules(),
    );
    let row = &rows(&files[0])[0];
    assert_eq!(row["payload"]["old"], "make test\n```");
    assert_eq!(row["anchor_section"], "more");
    let resolved = check_row(&b, row, 2000, 120);
    assert!(resolved.ends_with("make test\n```\n\n## Learned lessons\n\n- Create the virtualenv with uv venv; it is ten times faster than python -m venv. (id: La1b2c3d4e5f6)\n- Watch out: pytest collects tests from build/ unless testpaths is set in pyproject.toml. (id: L0f0e0d0c0b0a)\n"));

    // Someone merged the delta by hand: the next compile proposes nothing more.
    let merged = BaseSkill {
        text: resolved,
        ..b.clone()
    };
    let (files, diags) = deltas::compute(&[merged], &lessons(), &Default::default(), &rules());
    assert!(files.is_empty() && diags.is_empty(), "{files:?}");

    // A skill with no body text cannot take a delta: E002, no file.
    let empty = BaseSkill {
        text: "---\nname: python\n---\n\n".into(),
        ..b
    };
    let (files, diags) = deltas::compute(&[empty], &lessons(), &Default::default(), &rules());
    assert!(files.is_empty());
    assert_eq!(left_out(e002(&diags, "python").unwrap()).len(), 2);
}

#[test]
fn a_rule_that_does_not_fit_takes_the_weaker_ones_with_it() {
    let long = format!("Rebase {} onto main.", "carefully ".repeat(60));
    let ls = vec![
        lesson(
            "L9a9a9a9a9a9a",
            "git",
            Kind::Do,
            "Sign every commit.",
            900,
            &["g1", "g2"],
            true,
            G,
        ),
        lesson(
            "L8b8b8b8b8b8b",
            "git",
            Kind::Do,
            &long,
            800,
            &["g3", "g4"],
            true,
            G,
        ),
        lesson(
            "L7c7c7c7c7c7c",
            "git",
            Kind::Do,
            "Keep commits small.",
            700,
            &["g5", "g6"],
            true,
            G,
        ),
    ];
    let (files, diags) = deltas::compute(&base(), &ls, &Default::default(), &rules());
    let row = &rows(file(&files, "team-git"))[0];
    assert_eq!(row["provenance"]["lessons"], serde_json::json!(["L9a9a9a9a9a9a"]));
    assert_eq!(
        left_out(e002(&diags, "team-git").unwrap()),
        ["L8b8b8b8b8b8b", "L7c7c7c7c7c7c"]
    );
    assert_eq!(
        deltas::digest_of("## A\r\n\r\nb"),
        format!("sha256:{}", sha256_hex(b"## A\n\nb"))
    );
}

#[test]
fn sample_corpus_rules_land_in_the_authored_skills() {
    use skillc::{load, pipeline, policy::Rules, samples};
    let rules = Rules::builtin();
    let mut sink = Vec::new();
    let corpus = load::load_texts(samples::FILES, &load::LoadOptions::default(), &mut sink);
    let comp = pipeline::compile(corpus, sink, &rules, &pipeline::Options::default());
    let (files, diags) = deltas::compute(&base(), &comp.lessons, &comp.refounded, &rules);
    assert!(!files.is_empty(), "the samples have global python/docker rules");
    for f in &files {
        let name = f
            .path
            .strip_prefix("deltas/")
            .unwrap()
            .strip_suffix(".json")
            .unwrap();
        let b = skill(name);
        for row in rows(f) {
            check_row_real(&b, &row, &comp.lessons);
        }
    }
    // Every global rule of a matched domain is either in a row or in that skill's E002.
    for f in &files {
        let name = f
            .path
            .strip_prefix("deltas/")
            .unwrap()
            .strip_suffix(".json")
            .unwrap();
        let domain = if name == "team-git" { "git" } else { name };
        let mut seen: BTreeSet<String> = rows(f)
            .iter()
            .flat_map(|r| {
                r["provenance"]["lessons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
            })
            .collect();
        if let Some(d) = e002(&diags, name) {
            seen.extend(left_out(d));
        }
        let want: BTreeSet<String> = comp
            .lessons
            .iter()
            .filter(|l| l.rule && l.scope == G && l.domain == domain)
            .map(|l| l.id.clone())
            .collect();
        assert_eq!(seen, want, "{name}");
    }
}

fn check_row_real(b: &BaseSkill, row: &Value, lessons: &[Lesson]) {
    let resolved = deltas::resolve(&b.text, std::slice::from_ref(row)).unwrap();
    assert!(serde_json::to_string(&row["payload"]).unwrap().chars().count() <= 2000);
    assert!(tokens(&resolved) - tokens(&b.text) <= 120);
    for id in row["provenance"]["lessons"].as_array().unwrap() {
        let l = lessons.iter().find(|l| l.id == id.as_str().unwrap()).unwrap();
        assert!(l.rule && l.scope == G);
        assert!(resolved.contains(&l.text) && resolved.contains(l.id.as_str()));
    }
}

/// A dead end the skill already warns against ("Never run `docker system prune -a` on CI
/// runners …") is stated, and not proposed again; a skill that recommends the very thing
/// ("Run `docker system prune -a` weekly on the CI runners") does not state the warning, whose
/// bullet is proposed; a do rule is not taken as stated by a line that forbids it.
#[test]
fn a_dead_end_is_stated_by_a_warning_against_it_and_not_by_advice_to_do_it() {
    let prune = lesson(
        "L7e57d1e5ad01",
        "docker",
        Kind::Avoid,
        "docker system prune -a",
        700,
        &["e-ci-301", "e-ci-304"],
        true,
        G,
    );
    let buildkit = lesson(
        "L7e57d1e5ad02",
        "docker",
        Kind::Do,
        "Enable BuildKit inline cache so CI builds reuse the layers of the last image.",
        650,
        &["e-ci-302", "e-ci-305"],
        true,
        G,
    );
    let proposed = |body: &str| -> Vec<String> {
        let b = BaseSkill {
            name: "docker".into(),
            path: "docker/SKILL.md".into(),
            text: format!(
                "---\nname: docker\ndescription: Team Docker conventions. Use when editing Dockerfiles or CI images.\n---\n\n# Docker\n\n## Runners\n\n{body}\n"
            ),
        };
        let (files, _) = deltas::compute(
            std::slice::from_ref(&b),
            &[prune.clone(), buildkit.clone()],
            &Default::default(),
            &rules(),
        );
        files
            .first()
            .map(|f| rows(f)[0]["provenance"]["lessons"].as_array().unwrap().clone())
            .unwrap_or_default()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        proposed("- Never run `docker system prune -a` on CI runners; it wipes the layer cache."),
        ["L7e57d1e5ad02"],
        "the warning is there already"
    );
    assert_eq!(
        proposed("- Run `docker system prune -a` weekly on the CI runners to free disk."),
        ["L7e57d1e5ad02", "L7e57d1e5ad01"],
        "advice to do it is no warning against it"
    );
    assert_eq!(
        proposed(
            "- Never enable BuildKit inline cache; CI builds must not reuse the layers of the last image."
        ),
        ["L7e57d1e5ad02", "L7e57d1e5ad01"],
        "a line forbidding a do rule does not state it"
    );
}

/// A skill saved by a Windows editor: a byte-order mark before the frontmatter, CRLF line
/// ends, a folded multi-line description and a `name` that differs from its folder. The mark
/// must hide neither the frontmatter (the skill is matched by its `name`, a python skill in a
/// `python-testing` folder) nor, in a skill without frontmatter, the first heading; and the
/// resolved skill keeps the mark and every authored byte before the rules.
#[test]
fn a_byte_order_mark_hides_neither_the_frontmatter_nor_the_first_heading() {
    let py_text = "\u{feff}---\r\nname: python\r\ndescription: >-\r\n  How our team runs pytest suites:\r\n  fixtures, virtualenvs and flaky tests.\r\nlicense: Apache-2.0\r\n---\r\n\r\n# Python testing\r\n\r\n## Setup\r\n\r\n- Run `pytest -q` from the repository root.\r\n";
    let git_text = "\u{feff}# Git conventions\n\n- Rebase feature branches on main before opening a PR.\n";
    let skills = vec![
        BaseSkill {
            name: "python-testing".into(),
            path: "skills/python-testing/SKILL.md".into(),
            text: py_text.into(),
        },
        BaseSkill {
            name: "team-git".into(),
            path: "skills/team-git/SKILL.md".into(),
            text: git_text.into(),
        },
    ];
    let (files, diags) = deltas::compute(&skills, &lessons(), &Default::default(), &rules());
    assert!(
        diags
            .iter()
            .all(|d| d.code != "E005" || d.subject != "python-testing"),
        "matched by its frontmatter name: {diags:?}"
    );

    let row = &rows(file(&files, "python-testing"))[0];
    assert_eq!(row["base_name"], "python-testing");
    assert_eq!(row["anchor_section"], "setup");
    let resolved = deltas::resolve(py_text, std::slice::from_ref(row)).expect("row resolves");
    let kept = py_text.trim_end_matches("\r\n");
    assert!(resolved.starts_with(kept), "authored bytes kept:\n{resolved}");
    assert!(resolved.contains("\r\n## Learned lessons\r\n\r\n- "));
    assert!(resolved.contains("(id: La1b2c3d4e5f6)"));

    // Without frontmatter the heading after the mark is a heading: the rules follow the last
    // line of its section, not of a preamble.
    let team = &skills[1];
    assert_eq!(
        deltas::matched_domain(team, &["git"].into_iter().collect(), &rules().aliases),
        None,
        "team-git has no frontmatter name"
    );
    let git = BaseSkill {
        name: "git".into(),
        ..team.clone()
    };
    let git_lesson = lesson(
        "L4a4a4a4a4a4a",
        "git",
        Kind::Do,
        "Use git push --force-with-lease, not --force, when pushing a rebased branch.",
        600,
        &["e-git-01", "e-git-02"],
        true,
        G,
    );
    let (files, _) = deltas::compute(
        std::slice::from_ref(&git),
        &[git_lesson],
        &Default::default(),
        &rules(),
    );
    let row = &rows(file(&files, "git"))[0];
    assert_eq!(row["anchor_section"], "git-conventions");
    let resolved = deltas::resolve(git_text, std::slice::from_ref(row)).unwrap();
    assert!(resolved.starts_with(git_text.trim_end_matches('\n')));
    assert!(resolved.ends_with("(id: L4a4a4a4a4a4a)\n"), "{resolved}");
}

/// A rule that says the opposite of a line the author wrote is still proposed (it is backed by
/// evidence), but an E006 points at that line, so the reviewer does not merge a skill that
/// says both; a line that agrees with a rule, or is about something else, raises nothing.
#[test]
fn a_rule_that_contradicts_an_authored_line_is_an_e006_at_that_line() {
    let text = "---\nname: terraform\ndescription: |\n  Plan and apply Terraform safely.\n  Covers state locking and provider pins.\nallowed-tools: Bash(terraform:*)\n---\n\n# Terraform\n\n| Command | When |\n|---|---|\n| `terraform plan -out=tfplan` | before every apply |\n\n## Rules\n\n1. Keep state in the S3 backend with DynamoDB locking.\n2. Never run terraform apply with -auto-approve in CI.\n3. Use `terraform fmt -check` in CI.\n";
    let skills = vec![BaseSkill {
        name: "terraform".into(),
        path: "skills/terraform/SKILL.md".into(),
        text: text.into(),
    }];
    let rules_ = vec![
        lesson(
            "L7a7a7a7a7a7a",
            "terraform",
            Kind::Do,
            "Run terraform apply with -auto-approve in CI so the pipeline never waits for input.",
            700,
            &["e-tf-01", "e-tf-02", "e-tf-03"],
            true,
            G,
        ),
        lesson(
            "L7b7b7b7b7b7b",
            "terraform",
            Kind::Watch,
            "terraform plan reads .terraform.lock.hcl; commit it, or CI resolves providers anew.",
            600,
            &["e-tf-02", "e-tf-04"],
            true,
            G,
        ),
    ];
    let (files, diags) = deltas::compute(&skills, &rules_, &Default::default(), &rules());
    let row = &rows(file(&files, "terraform"))[0];
    assert_eq!(
        row["provenance"]["lessons"],
        serde_json::json!(["L7a7a7a7a7a7a", "L7b7b7b7b7b7b"]),
        "the contradicting rule is still proposed"
    );
    let e006: Vec<&Diagnostic> = diags.iter().filter(|d| d.code == "E006").collect();
    assert_eq!(e006.len(), 1, "{diags:?}");
    let d = e006[0];
    let loc = d.location.as_ref().expect("a location");
    assert_eq!(&*loc.file, "skills/terraform/SKILL.md");
    let line = text
        .lines()
        .position(|l| l.contains("Never run terraform apply"))
        .unwrap()
        + 1;
    assert_eq!(loc.line as usize, line);
    assert_eq!(d.evidence["lesson"], "L7a7a7a7a7a7a");
    assert!(
        d.message
            .contains("contradicts its line \"Never run terraform apply with -auto-approve in CI.\""),
        "{}",
        d.message
    );
    assert_eq!(d.domain.as_deref(), Some("terraform"));

    // Without the contradicting line: no E006.
    let agreeing = text.replace("2. Never run terraform apply with -auto-approve in CI.\n", "");
    let skills = vec![BaseSkill {
        text: agreeing,
        ..skills[0].clone()
    }];
    let (_, diags) = deltas::compute(&skills, &rules_, &Default::default(), &rules());
    assert!(diags.iter().all(|d| d.code != "E006"), "{diags:?}");
}

/// A skill whose line ends are mixed (frontmatter saved with LF, body pasted with CRLF) keeps
/// every authored byte: only the lines a row writes get new ends (CRLF), the others stay as
/// they were.
#[test]
fn mixed_line_ends_are_kept_byte_for_byte() {
    let text = "---\nname: python\ndescription: How we run pytest.\n---\n\r\n# Python testing\r\n\r\n## Setup\r\n\r\n- Run `pytest -q` from the repository root.\n";
    let skill = BaseSkill {
        name: "python".into(),
        path: "skills/python/SKILL.md".into(),
        text: text.into(),
    };
    let (files, _) = deltas::compute(
        std::slice::from_ref(&skill),
        &lessons(),
        &Default::default(),
        &rules(),
    );
    let row = &rows(file(&files, "python"))[0];
    let resolved = deltas::resolve(text, std::slice::from_ref(row)).unwrap();
    assert!(
        resolved.starts_with(text.trim_end_matches('\n')),
        "authored bytes kept:\n{resolved:?}"
    );
    assert!(resolved.starts_with("---\nname: python\n"), "{resolved:?}");
    assert!(
        resolved.contains("\r\n## Learned lessons\r\n\r\n- "),
        "{resolved:?}"
    );
    assert!(resolved.contains("(id: La1b2c3d4e5f6)"));
}
