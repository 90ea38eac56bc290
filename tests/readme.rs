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

/// The performance table is copied from the benchmark run the README names (issue 6: "the
/// README's figures come from it"), not typed in: a figure edited by hand, or a table left
/// behind when a newer run is quoted, fails here.
#[test]
fn the_readme_performance_table_is_the_benchmark_run_it_names() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let perf = &readme[readme.find("## Performance").expect("a Performance section")..];
    let named = readme_between("## Performance", "](bench/last-run.txt)");
    let run = named
        .rsplit("(run ")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse::<u32>().ok())
        .expect("the README names the run its table comes from: (run N in [bench/last-run.txt]");
    let header = "| experiences | file |";
    let table_start = perf.find(header).expect("the README shows the benchmark table");
    let table_len = perf[table_start..]
        .find("\n\n")
        .expect("the table ends with a blank line");
    let table = &perf[table_start..table_start + table_len];
    assert!(
        table.lines().count() >= 5,
        "header, rule and three sizes:\n{table}"
    );

    let runs = std::fs::read_to_string(repo().join("bench/last-run.txt")).unwrap();
    let mark = format!("# Run {run} (");
    let start = runs
        .find(&mark)
        .unwrap_or_else(|| panic!("bench/last-run.txt has {mark:?}"));
    let section = match runs[start + mark.len()..].find("\n# Run ") {
        Some(end) => &runs[start..start + mark.len() + end],
        None => &runs[start..],
    };
    assert!(
        section.contains(table),
        "README's table is not run {run}'s:\nREADME:\n{table}\nrun {run}:\n{section}"
    );
}
