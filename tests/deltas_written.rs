//! Skill deltas over a third set of authored skills (tests/fixtures/written-skills), each in a
//! style a different author would use: a terse one-screen git skill with `**Do:**` and `❌`
//! list items, a long kubernetes runbook with numbered steps and sub-steps, an npm skill with
//! a ✅/❌ table and list, a python skill with Spanish headings, a terraform skill with German
//! headings and a code fence whose comments read like rules, and a rust skill of numbered
//! `Do:` / `Don't:` steps. The lessons are the ones `records.jsonl` beside them compiles to.

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;
use skillc::deltas::{self, BaseSkill};
use skillc::diagnostics::Diagnostic;
use skillc::model::{HistoryEntry, Kind, Lesson, Status};
use skillc::policy::Rules;

fn fixtures() -> PathBuf {
    fixture("written-skills")
}

fn base() -> Vec<BaseSkill> {
    let (skills, unreadable) = deltas::read_base_skills(&fixtures().join("skills")).expect("fixtures read");
    assert!(unreadable.is_empty(), "{unreadable:?}");
    skills
}

fn authored(folder: &str, text: &str) -> BaseSkill {
    BaseSkill {
        name: folder.into(),
        path: format!("skills/{folder}/SKILL.md"),
        text: text.into(),
    }
}

fn lesson(id: &str, domain: &str, kind: Kind, text: &str, reason: Option<&str>, evidence: &[&str]) -> Lesson {
    Lesson {
        id: id.into(),
        kind,
        text: text.into(),
        domain: domain.into(),
        scope: "global".into(),
        operation_key: None,
        status: Status::Active,
        reason: None,
        confidence: 650,
        reinforcement: evidence.len() as u32,
        rule: true,
        pinned: false,
        blessed: false,
        evidence: evidence.iter().map(|&s| s.into()).collect(),
        projects: vec!["3c9d1e0f7a2b".into(), "e41f0a9b6c3d".into()],
        superseded_by: None,
        supersedes: None,
        founder: evidence[0].into(),
        cluster: format!("C{}", &id[1..]),
        admitted_at: 1_764_547_200_000,
        last_used_day: 20_400,
        working: None,
        reasons: reason.into_iter().map(String::from).collect(),
        history: vec![HistoryEntry {
            at: 1_764_547_200_000,
            event: skillc::model::Event::Admitted,
            confidence: 500,
            experiences: evidence.iter().map(|&s| s.into()).collect(),
            detail: None,
            idle_days: 0,
            idle_confidence: 0,
        }],
    }
}

/// The avoid rules the corpus's dead ends compile to, one per domain, and the do rules the
/// skills restate behind a label.
fn lessons() -> Vec<Lesson> {
    use Kind::{Avoid, Do};
    let mut out = vec![
        lesson(
            "L7e0e3daf9bb4",
            "git",
            Avoid,
            "git push --force on a shared branch",
            Some("overwrote a colleague's commits"),
            &["git-0011", "git-0012"],
        ),
        lesson(
            "L2a6e86b1c25d",
            "git",
            Do,
            "Rebase feature branches onto origin/main before opening a pull request.",
            None,
            &["git-0011", "git-0013"],
        ),
        lesson(
            "Lf213c67ebff6",
            "kubernetes",
            Avoid,
            "editing live objects with kubectl edit in production",
            Some("the change was lost on the next apply"),
            &["kub-0019", "kub-0020"],
        ),
        lesson(
            "L402a89260e2e",
            "npm",
            Avoid,
            "deleting package-lock.json to resolve a merge conflict",
            Some("pulled untested transitive versions"),
            &["npm-0016", "npm-0017"],
        ),
        lesson(
            "L976fe9dee2c5",
            "npm",
            Do,
            "Use npm ci instead of npm install in CI so the lockfile is respected.",
            None,
            &["npm-0016", "npm-0018"],
        ),
        lesson(
            "Lf230772fe880",
            "python",
            Avoid,
            "mocking datetime.now with monkeypatch.setattr",
            Some("the C type cannot be patched; use freezegun"),
            &["pyt-0006", "pyt-0007"],
        ),
        lesson(
            "L41428376ff80",
            "python",
            Do,
            "Pin pytest plugins in requirements-dev.txt so a plugin upgrade cannot change fixture behaviour.",
            None,
            &["pyt-0006", "pyt-0008"],
        ),
        lesson(
            "L31dc8d7bd7b2",
            "rust",
            Avoid,
            "running cargo update on a release branch",
            Some("pulled a tokio release that broke the build"),
            &["rus-0021", "rus-0022"],
        ),
        lesson(
            "Lcbb7f043f97e",
            "rust",
            Do,
            "Run cargo clippy --all-targets -- -D warnings before pushing so CI lint failures are caught locally.",
            None,
            &["rus-0021", "rus-0023"],
        ),
    ];
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

fn codes_for<'a>(diags: &'a [Diagnostic], code: &str, subject: &str) -> Vec<&'a Diagnostic> {
    (diags.iter())
        .filter(|d| d.code == code && d.subject == subject)
        .collect()
}

fn proposed(files: &[skillc::emit::OutFile], folder: &str) -> Vec<String> {
    let Some(f) = files.iter().find(|f| f.path == format!("deltas/{folder}.json")) else {
        return Vec::new();
    };
    let rows = deltas::parse_delta(&f.text()).unwrap();
    (rows.iter())
        .flat_map(|r| r["provenance"]["lessons"].as_array().unwrap().clone())
        .map(|v: Value| v.as_str().unwrap().to_string())
        .collect()
}

/// A do/don't label inside a list item (`**Don't:**`, `Don't:` in a sub-step, `❌`,
/// `**Avoid:**`, `2. Don't:`) is read as the warning it is: the skill already warns against
/// the dead end, so the avoid rule is not proposed again, and no E006 calls the author's own
/// warning a contradiction of it. A `**Do:**` / `✅` / `Do:` label is dropped before comparing,
/// so the do rule behind it is a restatement too.
#[test]
fn labelled_list_items_restate_rules_and_are_no_contradictions() {
    let (files, diags) = deltas::compute(&base(), &lessons(), &Default::default(), &Rules::builtin());
    for (folder, restated) in [
        ("git", &["L7e0e3daf9bb4", "L2a6e86b1c25d"][..]),
        ("kubernetes", &["Lf213c67ebff6"]),
        ("npm", &["L402a89260e2e", "L976fe9dee2c5"]),
        ("python", &["Lf230772fe880", "L41428376ff80"]),
        ("rust", &["L31dc8d7bd7b2", "Lcbb7f043f97e"]),
    ] {
        let rows = proposed(&files, folder);
        for id in restated {
            assert!(
                !rows.contains(&id.to_string()),
                "{folder}: {id} proposed again: {rows:?}"
            );
        }
        assert!(
            codes_for(&diags, "E006", folder).is_empty(),
            "{folder}: {diags:#?}"
        );
    }
}

/// Each label spelling on its own, in a list item and a paragraph: a don't label states the
/// warning, a do label the rule, a sentence that merely starts with the word states itself.
#[test]
fn each_label_spelling_is_read_as_a_do_or_a_dont() {
    let rules = Rules::builtin();
    let push = lesson(
        "L7e0e3daf9bb4",
        "git",
        Kind::Avoid,
        "git push --force on a shared branch",
        None,
        &["git-0011", "git-0012"],
    );
    let rebase = lesson(
        "L2a6e86b1c25d",
        "git",
        Kind::Do,
        "Rebase feature branches onto origin/main before opening a pull request.",
        None,
        &["git-0011", "git-0013"],
    );
    let skill = |line: &str| {
        authored(
            "git",
            &format!("---\nname: git\ndescription: Team git habits.\n---\n\n# Git\n\n{line}\n"),
        )
    };
    for line in [
        "- **Don't:** git push --force on a shared branch.",
        "- **Don't**: git push --force on a shared branch.",
        "- Don’t: git push --force on a shared branch",
        "1. DON'T: git push --force on a shared branch.",
        "- ❌ git push --force on a shared branch.",
        "- 🚫 **Avoid** git push --force on a shared branch",
        "* _Never:_ git push --force on a shared branch.",
        "**Do not:** git push --force on a shared branch.",
        "- ⛔️ Git push --force on a shared branch.",
    ] {
        let (files, diags) = deltas::compute(
            &[skill(line)],
            std::slice::from_ref(&push),
            &Default::default(),
            &rules,
        );
        assert!(proposed(&files, "git").is_empty(), "{line}: proposed again");
        assert!(diags.iter().all(|d| d.code != "E006"), "{line}: {diags:#?}");
    }
    for line in [
        "- **Do:** rebase feature branches onto origin/main before opening a pull request.",
        "- ✅ Rebase feature branches onto origin/main before opening a pull request.",
        "2. Do: rebase feature branches onto origin/main before opening a pull request",
        "- ✔️ **Always:** rebase feature branches onto origin/main before opening a pull request.",
    ] {
        let (files, diags) = deltas::compute(
            &[skill(line)],
            std::slice::from_ref(&rebase),
            &Default::default(),
            &rules,
        );
        assert!(proposed(&files, "git").is_empty(), "{line}: proposed again");
        assert!(diags.iter().all(|d| d.code != "E006"), "{line}: {diags:#?}");
    }
    // A do rule under a don't label is no restatement: it is proposed, and E006 points at the
    // line that says the opposite.
    let sign = lesson(
        "L5e1f0c2d3a4b",
        "git",
        Kind::Do,
        "Sign release tags with git tag -s.",
        None,
        &["git-0014", "git-0015"],
    );
    for line in [
        "- ❌ Sign release tags with git tag -s.",
        "- **Don't:** sign release tags with git tag -s.",
        "- Never sign release tags with git tag -s.",
    ] {
        let (files, diags) = deltas::compute(
            &[skill(line)],
            std::slice::from_ref(&sign),
            &Default::default(),
            &rules,
        );
        assert_eq!(proposed(&files, "git"), ["L5e1f0c2d3a4b"], "{line}");
        let e006: Vec<_> = diags.iter().filter(|d| d.code == "E006").collect();
        assert_eq!(e006.len(), 1, "{line}: {diags:#?}");
        assert_eq!(e006[0].location.as_ref().unwrap().line, 8, "{line}");
    }
    // A word that only opens a sentence, or a word the label list starts (\"Donate\"), is no
    // label: \"Do\" here is part of what the line says.
    for line in [
        "- Dont push to main on Fridays.",
        "- Doing a force push is fine on your own fork.",
    ] {
        let (files, _) = deltas::compute(
            &[skill(line)],
            std::slice::from_ref(&push),
            &Default::default(),
            &rules,
        );
        assert_eq!(proposed(&files, "git"), ["L7e0e3daf9bb4"], "{line}");
    }
}

/// Rules that do not fit a skill's delta budget are an E002 that names the skill's file and
/// the line the rules would have gone after: the `## Learned lessons` heading when the skill
/// has one, else its last line (frontmatter counted, CRLF or not); line 1 for a skill with
/// no body text.
#[test]
fn e002_names_the_skill_file_and_the_line_the_rules_would_go() {
    let rules = Rules::builtin();
    let long = |id: &str, n: usize| {
        let text = format!(
            "Run terraform plan -out=tfplan in the {n} pipeline stage, then apply that saved plan file, so apply does exactly what was reviewed by {} the change owner.",
            "the reviewer and ".repeat(6)
        );
        lesson(id, "terraform", Kind::Do, &text, None, &["ter-0001", "ter-0002"])
    };
    let ls: Vec<Lesson> = (1..=4).map(|n| long(&format!("L00000000000{n}"), n)).collect();
    let sectioned = "---\nname: terraform\ndescription: Plan and apply Terraform in CI.\n---\n\n# Terraform\n\n- Select the workspace first.\n\n## Learned lessons\n\n- Keep state in the nw-tfstate bucket.\n";
    let plain = "---\nname: terraform\ndescription: Plan and apply Terraform in CI.\n---\n\n# Terraform\n\n1. Select the workspace.\n2. Plan.\n\n";
    for (text, line) in [
        (sectioned.to_string(), 10),
        (sectioned.replace('\n', "\r\n"), 10),
        (plain.to_string(), 9),
        ("---\nname: terraform\ndescription: Plan.\n---\n\n".to_string(), 1),
    ] {
        let s = authored("terraform", &text);
        let (_, diags) = deltas::compute(&[s], &ls, &Default::default(), &rules);
        let e002 = codes_for(&diags, "E002", "terraform");
        assert_eq!(e002.len(), 1, "{diags:#?}");
        let loc = e002[0].location.as_ref().expect("E002 has a location");
        assert_eq!(
            (loc.file.to_string(), loc.line),
            ("skills/terraform/SKILL.md".to_string(), line),
            "{text:?}"
        );
        assert_eq!(e002[0].evidence["path"], "skills/terraform/SKILL.md");
    }
}

fn payload_text(files: &[skillc::emit::OutFile], folder: &str) -> String {
    let f = (files.iter())
        .find(|f| f.path == format!("deltas/{folder}.json"))
        .unwrap_or_else(|| panic!("no delta for {folder}"));
    let rows = deltas::parse_delta(&f.text()).unwrap();
    let p = &rows[0]["payload"];
    p["body"].as_str().or(p["new"].as_str()).unwrap().to_string()
}

/// A do rule and an avoid rule that give one piece of advice from two sides ("Use `git push
/// --force-with-lease` instead of --force" / "git push --force on a shared branch"; "Run
/// `terraform plan -out=tfplan` and apply that saved plan file" / "running `terraform apply`
/// without a plan file") are one bullet that cites both ids: the reader meets the advice
/// once, and once the bullet is merged neither rule is proposed again. Advice that only
/// shares words, or says the opposite, stays two bullets.
#[test]
fn a_do_and_an_avoid_giving_the_same_advice_are_one_bullet_citing_both() {
    let rules = Rules::builtin();
    let git = vec![
        lesson(
            "L7e0e3daf9bb4",
            "git",
            Kind::Avoid,
            "git push --force on a shared branch",
            Some("overwrote a colleague's commits"),
            &["git-0011", "git-0012"],
        ),
        lesson(
            "L24ab41fd87f7",
            "git",
            Kind::Do,
            "Use git push --force-with-lease instead of --force when updating a rebased branch.",
            None,
            &["git-0014", "git-0015"],
        ),
        lesson(
            "L2a6e86b1c25d",
            "git",
            Kind::Do,
            "Rebase feature branches onto origin/main before opening a pull request.",
            None,
            &["git-0011", "git-0013"],
        ),
    ];
    let tf = vec![
        lesson(
            "L27cef0ce2843",
            "terraform",
            Kind::Do,
            "Run `terraform plan -out=tfplan` and apply that saved plan file, so apply does exactly what was reviewed.",
            None,
            &["ter-0001", "ter-0002"],
        ),
        lesson(
            "L6a150d1606ec",
            "terraform",
            Kind::Avoid,
            "running `terraform apply` without a plan file",
            Some("applied a drifted change nobody reviewed"),
            &["ter-0001", "ter-0003"],
        ),
    ];
    let npm = vec![
        lesson(
            "L976fe9dee2c5",
            "npm",
            Kind::Do,
            "Use npm ci instead of npm install in CI so the lockfile is respected.",
            None,
            &["npm-0016", "npm-0018"],
        ),
        lesson(
            "L402a89260e2e",
            "npm",
            Kind::Avoid,
            "deleting package-lock.json to resolve a merge conflict",
            None,
            &["npm-0016", "npm-0017"],
        ),
        lesson(
            "L5d1c0ffee001",
            "npm",
            Kind::Avoid,
            "running npm install in CI pipelines",
            None,
            &["npm-0017", "npm-0018"],
        ),
    ];
    let db = vec![
        lesson(
            "L0d0d0d0d0d01",
            "postgres",
            Kind::Do,
            "Run database migrations without a backup on throwaway dev databases.",
            None,
            &["pg-0001", "pg-0002"],
        ),
        lesson(
            "L0d0d0d0d0d02",
            "postgres",
            Kind::Avoid,
            "running database migrations without a backup",
            None,
            &["pg-0003", "pg-0004"],
        ),
    ];
    let skill = |name: &str| {
        authored(
            name,
            &format!(
                "---\nname: {name}\ndescription: Team habits for {name}.\n---\n\n# {name}\n\n- Ask in #platform when unsure.\n"
            ),
        )
    };
    // (skill, rules, bullets the row has, text it must not have)
    type Case<'a> = (&'a str, &'a Vec<Lesson>, &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 4] = [
        (
            "git",
            &git,
            &[
                "- Use git push --force-with-lease instead of --force when updating a rebased branch. (id: L24ab41fd87f7; avoid rule id: L7e0e3daf9bb4 says the same)",
            ],
            &["Avoid: git push --force"],
        ),
        (
            "terraform",
            &tf,
            &[
                "- Run `terraform plan -out=tfplan` and apply that saved plan file, so apply does exactly what was reviewed. (id: L27cef0ce2843; avoid rule id: L6a150d1606ec says the same)",
            ],
            &["Avoid: running"],
        ),
        (
            "npm",
            &npm,
            &[
                "- Use npm ci instead of npm install in CI so the lockfile is respected. (id: L976fe9dee2c5; avoid rule id: L5d1c0ffee001 says the same)",
                "- Avoid: deleting package-lock.json to resolve a merge conflict (id: L402a89260e2e)",
            ],
            &["Avoid: running npm install"],
        ),
        (
            "postgres",
            &db,
            &[
                "- Run database migrations without a backup on throwaway dev databases. (id: L0d0d0d0d0d01)\n- Avoid: running database migrations without a backup (id: L0d0d0d0d0d02)",
            ],
            &["says the same"],
        ),
    ];
    for (name, ls, bullets, absent) in cases {
        let s = skill(name);
        let (files, _) = deltas::compute(std::slice::from_ref(&s), ls, &Default::default(), &rules);
        let text = payload_text(&files, name);
        for b in bullets {
            assert!(text.contains(b), "{name}: {b}\n{text}");
        }
        for a in absent {
            assert!(!text.contains(a), "{name}: {a}\n{text}");
        }
        // Every rule is in the row's provenance, and every id is in the text.
        let mut ids = proposed(&files, name);
        ids.sort();
        let mut want: Vec<String> = ls.iter().map(|l| l.id.clone()).collect();
        want.sort();
        assert_eq!(ids, want, "{name}");
        for id in &want {
            assert!(text.contains(id.as_str()), "{name}: {id} not shown\n{text}");
        }
        // Merged, the skill carries every id: nothing is proposed again.
        let f = files
            .iter()
            .find(|f| f.path == format!("deltas/{name}.json"))
            .unwrap();
        let merged = deltas::resolve(&s.text, &deltas::parse_delta(&f.text()).unwrap()).unwrap();
        let (files, _) = deltas::compute(&[authored(name, &merged)], ls, &Default::default(), &rules);
        assert!(files.is_empty(), "{name}: proposed again after the merge");
    }
}

/// A skill that already gives a dead end's advice from the other side (a step "Run `terraform
/// plan -out=tfplan` and apply that saved plan file …") already states the avoid rule; a step
/// that only shares a word of what the rule leaves out ("… once the plan job is green") does
/// not, and the avoid rule is proposed with its E006.
#[test]
fn a_skill_line_that_gives_a_dead_ends_advice_from_the_other_side_states_it() {
    let rules = Rules::builtin();
    let avoid = lesson(
        "L6a150d1606ec",
        "terraform",
        Kind::Avoid,
        "running `terraform apply` without a plan file",
        Some("applied a drifted change nobody reviewed"),
        &["ter-0001", "ter-0003"],
    );
    let skill = |step: &str| {
        authored(
            "terraform",
            &format!(
                "---\nname: terraform\ndescription: Terraform in CI.\n---\n\n# Terraform\n\n## Ablauf\n\n1. `terraform init -input=false`\n2. {step}\n"
            ),
        )
    };
    let s = skill(
        "Run `terraform plan -out=tfplan` and apply that saved plan file, so apply does exactly what was reviewed.",
    );
    let (files, diags) = deltas::compute(&[s], std::slice::from_ref(&avoid), &Default::default(), &rules);
    assert!(files.is_empty() && diags.is_empty(), "{files:?} {diags:#?}");
    let s = skill("Run `terraform apply` directly in CI once the plan job is green.");
    let (files, diags) = deltas::compute(&[s], std::slice::from_ref(&avoid), &Default::default(), &rules);
    assert_eq!(proposed(&files, "terraform"), ["L6a150d1606ec"]);
    assert_eq!(codes_for(&diags, "E006", "terraform").len(), 1, "{diags:#?}");
}

/// The items of a section headed as things not to do ("## Don'ts", "### Anti-patterns",
/// "## Qué evitar") warn against what they name, down to the next heading of its level: the
/// avoid rule they state is not proposed again and is no E006. A section whose heading only
/// starts with the word ("## Avoid flaky tests") lists steps to take.
#[test]
fn items_under_a_donts_heading_are_warnings() {
    let rules = Rules::builtin();
    let push = lesson(
        "L7e0e3daf9bb4",
        "git",
        Kind::Avoid,
        "git push --force on a shared branch",
        None,
        &["git-0011", "git-0012"],
    );
    let skill = |body: &str| {
        authored(
            "git",
            &format!("---\nname: git\ndescription: Team git habits.\n---\n\n# Git\n\n{body}"),
        )
    };
    for body in [
        "## Don'ts\n\n- git push --force on a shared branch.\n- Commit files under `dist/`.\n",
        "## Anti-patterns:\n\n### CI\n\n* Git push --force on a shared branch\n",
        "## ❌ Things to avoid\n\n1. git push --force on a shared branch\n",
        "## Qué evitar\n\n- git push --force on a shared branch\n",
    ] {
        let (files, diags) = deltas::compute(
            &[skill(body)],
            std::slice::from_ref(&push),
            &Default::default(),
            &rules,
        );
        assert!(proposed(&files, "git").is_empty(), "{body}: proposed again");
        assert!(diags.iter().all(|d| d.code != "E006"), "{body}: {diags:#?}");
    }
    // The section ends at the next heading of its level; a heading that starts with "Avoid"
    // and names a goal heads steps to take.
    for body in [
        "## Don'ts\n\n- Commit files under `dist/`.\n\n## Habits\n\n- git push --force on a shared branch.\n",
        "## Avoid lost work\n\n- git push --force on a shared branch.\n",
    ] {
        let (files, diags) = deltas::compute(
            &[skill(body)],
            std::slice::from_ref(&push),
            &Default::default(),
            &rules,
        );
        assert_eq!(proposed(&files, "git"), ["L7e0e3daf9bb4"], "{body}");
        assert_eq!(codes_for(&diags, "E006", "git").len(), 1, "{body}: {diags:#?}");
    }
}
