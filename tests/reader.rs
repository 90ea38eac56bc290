//! What the two readers of skillc's output get from a corpus nobody here wrote (four projects,
//! eight domains, coding agents' own records: pytest, ruff, npm, terraform, kubectl, cargo,
//! git, docker, psql; paraphrased lessons, incident stories, gotchas, dead ends, fixes learned
//! from the calls, and a few bad records): the agent that loads SKILL.md, and the person who
//! runs `skillc trace` to follow one experience.

mod common;

use common::{Scratch, fixture, skillc};

fn corpus() -> String {
    fixture("reader/experiences.jsonl").to_str().unwrap().to_string()
}

fn trace_text(id: &str) -> String {
    let out = skillc(&["trace", id, &corpus()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn diagnostics_part(text: &str) -> Vec<&str> {
    let from = text.find("diagnostics naming it:").expect("a diagnostics part");
    text[from..]
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// An experience tagged python and postgres gets one note per domain; the two lines said the
/// same words, so the reader saw one note twice and could not tell which domain each was for.
#[test]
fn trace_tells_apart_the_notes_of_a_record_of_two_domains() {
    let text = trace_text("led-0108");
    let lines = diagnostics_part(&text);
    let unverified: Vec<&&str> = lines.iter().filter(|l| l.contains("[O003]")).collect();
    assert_eq!(unverified.len(), 2, "{text}");
    assert!(unverified[0] != unverified[1], "two identical lines: {text}");
    assert!(unverified.iter().any(|l| l.contains("(in python)")), "{text}");
    assert!(unverified.iter().any(|l| l.contains("(in postgres)")), "{text}");
    // A lesson's note names its lesson and its domain.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("[G003]") && l.contains(", in postgres)")),
        "{text}"
    );
}

/// typescript's below-reinforcement notes fold into one whose message quotes the first lesson
/// (another experience's): the trace names the lesson of this experience among the note's
/// subjects and says the note stands for several, instead of quoting another lesson's count.
#[test]
fn trace_names_its_own_lesson_in_a_folded_note() {
    let text = trace_text("con-0107");
    let lesson = text
        .lines()
        .find(|l| l.contains("in typescript:"))
        .and(text.lines().skip_while(|l| !l.contains("in typescript:")).nth(1))
        .and_then(|l| l.split("lesson ").nth(1))
        .and_then(|l| l.split_whitespace().next())
        .expect("the typescript candidate's lesson")
        .to_string();
    let lines = diagnostics_part(&text);
    let note = lines
        .iter()
        .find(|l| l.contains("[G003]"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains(&format!("({lesson}, in typescript)")), "{note}");
    assert!(note.contains("one note for 6 in typescript"), "{note}");
    assert!(!note.contains("the first,"), "another lesson's words: {note}");
}

fn description(skill: &str) -> String {
    let line = skill
        .lines()
        .find(|l| l.starts_with("description: "))
        .expect("a description");
    serde_json::from_str(&line["description: ".len()..]).expect("a double-quoted YAML scalar")
}

/// Every SKILL.md's description was one sentence with the domain's name and counts swapped in:
/// an agent matching a task (a failing `pytest` run, a Jest config) against the skills it may
/// load learned nothing about what the rules are for. It names the tools they are about.
#[test]
fn a_skill_description_names_the_tools_its_rules_are_about() {
    let s = Scratch::new("reader-descriptions");
    let out = s.path("out");
    let o = common::compile_to(&fixture("reader/experiences.jsonl"), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |rel: &str| std::fs::read_to_string(out.join(rel)).unwrap();
    let python = description(&read("python/SKILL.md"));
    assert!(
        python.contains("Use when planning or doing python work, especially with pytest, SQLite or ruff,"),
        "{python}"
    );
    // A command's subcommand is no tool (`git fetch --prune`: `fetch`), and the domain's own
    // program is not named again.
    let git = description(&read("git/SKILL.md"));
    assert!(!git.contains("fetch") && !git.contains("especially"), "{git}");
    let typescript = std::fs::read_dir(out.join("projects"))
        .unwrap()
        .map(|d| d.unwrap().path().join("typescript/SKILL.md"))
        .find(|p| p.exists())
        .expect("a project's typescript skill");
    let typescript = description(&std::fs::read_to_string(typescript).unwrap());
    assert!(
        typescript.contains("especially with npm or Jest,"),
        "{typescript}"
    );
    // Within the Agent Skills limit, and it still says when.
    for d in [&python, &git, &typescript] {
        assert!(d.chars().count() <= 1024 && d.contains("Use when"), "{d}");
    }
}
