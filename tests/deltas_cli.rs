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
