//! What an agent and a reviewer read, on lessons written as agents write them: Markdown in the
//! text (`#` first, `>` first, `~~~`, `<div>`, `Vec<u8>`, `|`, links), Windows paths, URLs with
//! query strings, right-to-left and CJK text, emoji sequences, a zero-width space, a lesson
//! longer than the 240-character cut, domains that are no skill names as written ("node.js",
//! "Python 3", both folded into the skill they name); six projects, eight domains (fixture `agent_reads/`).
//!
//! Each rule is one plain bullet whatever its text holds, every text reads as written once
//! rendered, a cut never splits a character as a person sees it, and the files are valid and
//! the same at any thread count and on a second compile.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use unicode_segmentation::UnicodeSegmentation;

fn compiled(scratch: &Scratch, name: &str, extra: &[&str]) -> BTreeMap<String, String> {
    let out = scratch.path(name);
    let o = compile_to(&fixture("agent_reads"), &out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    tree(&out)
        .into_iter()
        .map(|(k, v)| (k, String::from_utf8(v).expect("UTF-8 output")))
        .collect()
}

fn markdown(files: &BTreeMap<String, String>) -> impl Iterator<Item = (&String, &String)> {
    files.iter().filter(|(k, _)| k.ends_with(".md"))
}

/// The rule bullets of a Markdown file: lines "- … (id: L…".
fn bullets(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|l| l.starts_with("- ") && l.contains("(id: L"))
}

/// `s` without its code spans (a run of backticks to the next run of as many); a run with
/// no match is text.
fn outside_code(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let run = b[i..].iter().take_while(|&&c| c == b'`').count();
        let mut j = i + run;
        let close = loop {
            let Some(k) = b[j..].iter().position(|&c| c == b'`') else {
                break None;
            };
            let n = b[j + k..].iter().take_while(|&&c| c == b'`').count();
            if n == run {
                break Some(j + k + n);
            }
            j += k + n;
        };
        match close {
            Some(end) => {
                out.push_str(&s[from..i]);
                out.push(' ');
                (i, from) = (end, end);
            }
            None => i += run,
        }
    }
    out.push_str(&s[from..]);
    out
}

#[test]
fn a_lesson_that_opens_like_markdown_is_one_plain_bullet() {
    let scratch = Scratch::new("agent-reads-lead");
    let files = compiled(&scratch, "out", &[]);
    // What a list item's text may not open with: a heading, a quote, a list of its own, a
    // fenced code block (which would swallow the id and citations), a thematic break.
    let opens_block = regex::Regex::new(r"^(#{1,6}( |$)|>|[-+*]( |$)|[0-9]{1,9}[.)]( |$)|```|~~~)").unwrap();
    let mut seen = 0;
    for (path, text) in markdown(&files) {
        for line in bullets(text) {
            let item = &line[2..];
            let item = item
                .strip_prefix("Avoid: ")
                .or(item.strip_prefix("Watch out: "))
                .unwrap_or(item);
            assert!(
                !opens_block.is_match(item),
                "{path}: a bullet opens a Markdown block: {line}"
            );
            seen += 1;
        }
    }
    assert!(seen >= 15, "{seen} bullets");
    // The texts themselves are kept, with the backslash that makes the first character plain.
    let python = &files["python/SKILL.md"];
    assert!(
        python.contains("\n- \\# Never commit .env files: add them to .gitignore"),
        "{python}"
    );
    let node = &files["node/SKILL.md"];
    assert!(
        node.contains("\n- \\~~~ fenced blocks in README.md break"),
        "{node}"
    );
    let rust = &files["rust/SKILL.md"];
    assert!(rust.contains("\n- \\> Return Result"), "{rust}");
    let block = &files["lessons/global.md"];
    assert!(block.lines().all(|l| !opens_block.is_match(&l[2..])), "{block}");
    // The ledger is for programs: its texts are as recorded.
    let ledger = &files["ledger.json"];
    assert!(
        ledger.contains("\"text\":\"# Never commit .env files"),
        "{ledger}"
    );
}

#[test]
fn an_angle_bracket_in_a_lesson_is_text_not_html() {
    let scratch = Scratch::new("agent-reads-html");
    let files = compiled(&scratch, "out", &[]);
    // `<` before a letter, `/`, `!` or `?` opens an HTML tag that a renderer drops, with the
    // words it holds ("Return Result from Vec parsers"), unless a backslash makes it text.
    let tag = regex::Regex::new(r"(^|[^\\])<[A-Za-z/!?]").unwrap();
    for (path, text) in markdown(&files) {
        for line in text.lines() {
            assert!(!tag.is_match(&outside_code(line)), "{path}: raw HTML in {line}");
        }
    }
    let typescript = &files["typescript/SKILL.md"];
    // In a code span a backslash would show: `<div>` there stays as written.
    assert!(
        typescript.contains("- Wrap the \\<div> returned by `render()` in a fragment; React 18 warns about `<div>` inside `<p>`"),
        "{typescript}"
    );
    let terraform = &files["terraform/SKILL.md"];
    assert!(
        terraform.contains("- \\<details> in a PR comment hides"),
        "{terraform}"
    );
    let evidence = &files["rust/references/EVIDENCE.md"];
    assert!(
        evidence.contains("Return Result\\<T, E> from Vec\\<u8> parsers"),
        "{evidence}"
    );
    // Markdown that renders as meant is left alone: a link with a query string, a `|`.
    assert!(
        typescript.contains("[the tsconfig docs](https://www.typescriptlang.org/tsconfig#strict?x=1&y=2)")
    );
    let python = &files["python/SKILL.md"];
    assert!(python.contains("`-k \"a|b\"` selects both"), "{python}");
}

#[test]
fn a_long_lesson_is_cut_between_graphemes() {
    let scratch = Scratch::new("agent-reads-cut");
    let files = compiled(&scratch, "out", &[]);
    let recorded: Vec<serde_json::Value> = std::fs::read_to_string(fixture("agent_reads/experiences.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let long = recorded
        .iter()
        .filter_map(|r| r["lesson"].as_str())
        .find(|t| t.chars().count() > 240)
        .expect("a long lesson");
    let ledger: serde_json::Value = serde_json::from_str(&files["ledger.json"]).unwrap();
    let text = ledger["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["text"].as_str())
        .find(|t| t.starts_with("Document every public item"))
        .expect("the long lesson is a rule");
    let kept = text.strip_suffix('…').expect("a cut text ends with an ellipsis");
    assert!(text.chars().count() <= 240, "{text}");
    assert!(long.starts_with(kept), "{text}");
    // The family emoji (man, ZWJ, woman, ZWJ, girl) straddles the cut: it goes whole, never
    // as a lone man with a dangling joiner.
    assert!(
        long.grapheme_indices(true).any(|(i, _)| i == kept.len()),
        "cut inside a grapheme: {text:?}"
    );
    assert!(kept.ends_with("mark the doc"), "{text:?}");
    assert!(files["rust/SKILL.md"].contains("must notice it first: mark the doc… (id: L"));
}

#[test]
fn a_zero_width_space_reaches_no_file() {
    let scratch = Scratch::new("agent-reads-zwsp");
    let files = compiled(&scratch, "out", &[]);
    for (path, text) in &files {
        assert!(!text.contains('\u{200b}'), "{path} holds a zero-width space");
    }
    // The gotcha written with one and the same gotcha typed plainly are one rule.
    let rust = &files["rust/SKILL.md"];
    let tokio: Vec<&str> = bullets(rust).filter(|l| l.contains("tokio::spawn")).collect();
    assert_eq!(tokio.len(), 1, "{rust}");
    assert!(tokio[0].contains("`'static` futures: borrowing"), "{}", tokio[0]);
}

#[test]
fn what_an_agent_reads_is_valid_and_the_same_every_time() {
    let scratch = Scratch::new("agent-reads-valid");
    let one = compiled(&scratch, "t1", &["--threads", "1"]);
    let two = compiled(&scratch, "t2", &["--threads", "2"]);
    assert!(one == two, "--threads 1 and 2 differ");
    let again = compiled(&scratch, "t1", &["--threads", "1"]);
    assert!(one == again, "a second compile changed the output");
    let skills: Vec<_> = one.iter().filter(|(k, _)| k.ends_with("/SKILL.md")).collect();
    // python (with "Python 3"), node ("node.js"), typescript, rust, go, terraform, docker.
    assert_eq!(skills.len(), 7, "{:?}", one.keys());
    for (path, text) in skills {
        let rest = text.strip_prefix("---\n").unwrap();
        let end = rest.find("\n---\n").unwrap();
        let front: serde_yaml::Mapping = serde_yaml::from_str(&rest[..end]).unwrap();
        let keys: Vec<&str> = front.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["name", "description", "metadata"], "{path}");
        let folder = Path::new(path)
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        assert_eq!(front["name"].as_str(), Some(folder), "{path}");
        let description = front["description"].as_str().unwrap();
        assert!(
            description.chars().count() <= 1024 && description.contains("Use when"),
            "{description}"
        );
        // "went" is no mention of the go tool.
        assert!(
            !description.contains("especially with go"),
            "{path}: {description}"
        );
        for (k, v) in front["metadata"].as_mapping().unwrap() {
            assert!(k.is_string() && v.is_string(), "{path}");
        }
    }
    let id = regex::Regex::new(r" \(id: L[0-9a-f]{12}\)$").unwrap();
    let blocks: Vec<_> = one.iter().filter(|(k, _)| k.starts_with("lessons/")).collect();
    assert!(!blocks.is_empty());
    for (path, text) in blocks {
        assert!(text.lines().count() <= 5, "{path}: {text}");
        assert!(
            text.lines().all(|l| l.starts_with("- ") && id.is_match(l)),
            "{path}: {text}"
        );
    }
}
