//! The README's examples are what the sample corpus really produces (up to where the README
//! cuts them short), so the first output a new user reads matches theirs.

mod common;

use common::*;

#[test]
fn the_readme_why_example_is_the_sample_corpus_output() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("$ skillc why python\n")
        .expect("README shows `skillc why python`")
        + "$ skillc why python\n".len();
    let shown = &readme[start..start + readme[start..].find("...\n```").expect("cut short with ...")];
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
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let intro = "An excerpt of `skills-out/rust/SKILL.md` compiled from the sample corpus:\n\n```markdown\n";
    let start = readme.find(intro).expect("README shows the excerpt") + intro.len();
    let shown = &readme[start..start + readme[start..].find("```\n").unwrap()];
    let s = Scratch::new("readme-skill");
    let out = s.path("out");
    let o = skillc_in(&repo(), &["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skill = std::fs::read_to_string(out.join("rust/SKILL.md")).unwrap();
    assert!(skill.starts_with(shown), "README:\n{shown}\nactual:\n{skill}");
}
