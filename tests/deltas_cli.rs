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
