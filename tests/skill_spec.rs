//! Every emitted SKILL.md is valid under the Agent Skills specification: frontmatter with
//! `name` (= folder, lower-case kebab, ≤ 64), `description` (non-empty, ≤ 1024), `metadata`
//! (string → string) and no other top-level key; at most 500 lines.

mod common;

use common::*;

fn validate(path: &std::path::Path, text: &str) {
    let rest = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("{}: no frontmatter", path.display()));
    let end = rest
        .find("\n---\n")
        .unwrap_or_else(|| panic!("{}: frontmatter not closed", path.display()));
    let front: serde_yaml::Mapping = serde_yaml::from_str(&rest[..end]).unwrap();
    for key in front.keys() {
        let k = key.as_str().unwrap();
        assert!(
            ["name", "description", "metadata"].contains(&k),
            "{}: unexpected key {k}",
            path.display()
        );
    }
    let name = front["name"].as_str().unwrap();
    let folder = path.parent().unwrap().file_name().unwrap().to_str().unwrap();
    assert_eq!(name, folder, "{}: name must equal the folder", path.display());
    assert!(name.len() <= 64);
    assert!(
        regex::Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$")
            .unwrap()
            .is_match(name),
        "{name}"
    );
    let desc = front["description"].as_str().unwrap();
    assert!(!desc.is_empty() && desc.chars().count() <= 1024);
    assert!(desc.contains("Use when"), "description says when to use it");
    let meta = front["metadata"].as_mapping().unwrap();
    for (k, v) in meta {
        assert!(
            k.is_string() && v.is_string(),
            "{}: metadata must be string → string",
            path.display()
        );
    }
    assert_eq!(
        meta[&serde_yaml::Value::from("generated-by")],
        serde_yaml::Value::from("skillc")
    );
    let rules: usize = meta[&serde_yaml::Value::from("rules")]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let bullets = text
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains("(id: L"))
        .count();
    assert_eq!(
        rules,
        bullets,
        "{}: metadata.rules counts the bullets",
        path.display()
    );
    assert!(text.lines().count() <= 500);
    let body = &rest[end + 5..];
    assert!(body.contains("## Do") || body.contains("## Avoid") || body.contains("## Watch out"));
    assert!(path.parent().unwrap().join("references/EVIDENCE.md").is_file());
}

#[test]
fn every_emitted_skill_is_valid() {
    let s = Scratch::new("skill-spec");
    let out = s.path("out");
    let o = skillc(&["compile", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let skills: Vec<String> = tree(&out)
        .into_keys()
        .filter(|k| k.ends_with("SKILL.md"))
        .collect();
    assert!(
        skills.len() >= 3,
        "the sample corpus compiles several skills: {skills:?}"
    );
    assert!(
        skills.iter().any(|k| k.starts_with("projects/")),
        "and at least one project skill"
    );
    for rel in skills {
        let path = out.join(&rel);
        validate(&path, &std::fs::read_to_string(&path).unwrap());
    }
}
