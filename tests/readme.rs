//! The README's examples are what the sample corpus really produces (up to where the README
//! cuts them short), so the first output a new user reads matches theirs.

mod common;

use common::*;

/// The README's text between `intro` and `end` (both left out).
fn readme_between(intro: &str, end: &str) -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find(intro)
        .unwrap_or_else(|| panic!("README shows {intro:?}"))
        + intro.len();
    let len = readme[start..]
        .find(end)
        .unwrap_or_else(|| panic!("{intro:?} ends with {end:?}"));
    readme[start..start + len].to_string()
}

#[test]
fn the_readme_why_example_is_the_sample_corpus_output() {
    let shown = &readme_between("$ skillc why python\n", "...\n```");
    let o = skillc_in(&repo(), &["why", "python"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let actual = stdout(&o);
    assert!(
        actual.starts_with(shown),
        "README:\n{shown}\nactual:\n{}",
        &actual[..actual.len().min(shown.len() + 200)]
    );
}

#[test]
fn the_readme_skill_excerpt_is_the_sample_corpus_output() {
    let intro = "An excerpt of `skills-out/rust/SKILL.md` compiled from the sample corpus:\n\n```markdown\n";
    let shown = &readme_between(intro, "```\n");
    let s = Scratch::new("readme-skill");
    let out = s.path("out");
    let o = skillc_in(&repo(), &["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skill = std::fs::read_to_string(out.join("rust/SKILL.md")).unwrap();
    assert!(skill.starts_with(shown), "README:\n{shown}\nactual:\n{skill}");
}

/// The README's `skillc diff` example: three agents' records compiled, then a second
/// storefront session arrives and the terraform records file is removed.
#[test]
fn the_readme_diff_example_is_what_diff_prints() {
    let shown = readme_between("$ skillc diff records/ --out skills-out\n", "```\n");

    let s = Scratch::new("readme-diff");
    let records = s.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let learned = |id: &str, at: &str, domain: &str, project: &str, text: &str| {
        let r = serde_json::json!({"id": id, "recorded_at": at, "domains": [domain],
            "project": format!("git@github.com:acme/{project}.git"), "outcome": "succeeded", "lesson": text});
        format!("{r}\n")
    };
    let pytest = "Run pytest with -p no:cacheprovider in CI containers, where the checkout is read-only";
    let terraform = "Run terraform init -upgrade after changing a provider version constraint, or plan fails on the lock file";
    let npm = "Pin the npm version in package.json engines so CI and laptops write the same lockfile";
    let write = |file: &str, text: String| std::fs::write(records.join(file), text).unwrap();
    write(
        "billing.jsonl",
        learned(
            "bill-0412",
            "2026-11-02T09:14:00Z",
            "python",
            "billing-api",
            pytest,
        ) + &learned(
            "bill-0419",
            "2026-11-03T16:40:00Z",
            "python",
            "billing-api",
            pytest,
        ),
    );
    write(
        "infra.jsonl",
        learned(
            "infra-2207",
            "2026-11-02T11:05:00Z",
            "terraform",
            "infra-live",
            terraform,
        ) + &learned(
            "plat-0311",
            "2026-11-03T10:22:00Z",
            "terraform",
            "platform-modules",
            terraform,
        ),
    );
    write(
        "web.jsonl",
        learned("web-1180", "2026-11-03T14:02:00Z", "node", "storefront-web", npm),
    );
    let (r, out) = (records.to_str().unwrap(), s.path("out"));
    let o = skillc(&["compile", r, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    write(
        "web-2.jsonl",
        learned("web-1203", "2026-11-04T10:11:00Z", "node", "storefront-web", npm),
    );
    std::fs::remove_file(records.join("infra.jsonl")).unwrap();
    let o = skillc(&["diff", r, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), shown);
}
