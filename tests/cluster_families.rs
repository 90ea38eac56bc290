//! Paraphrase families as different agents write one lesson (`tests/data/paraphrase_families.jsonl`):
//! 36 families in ten domains (python, rust, node, docker, kubernetes, terraform, git,
//! postgres, ci, go), 4 wordings each — imperative, "always …", "X fails unless Y", "when X,
//! do Y", with a trailing reason, other verb forms and plurals, shorthand (k8s, env var, repo,
//! deps, DB, pkg) — and near misses that must stay apart
//! (`tests/data/paraphrase_near_misses.jsonl`: the same words with another flag, path,
//! version, value, order or negation). Written by hand, not by `skillc gen`, and measured
//! before the lexicon was touched for them (figures in the tests below).
//!
//! Each domain's wordings and near misses are clustered as one block, in time order, as a
//! compile blocks them (a lesson with no operation key blocks at domain level).

use std::collections::{BTreeMap, BTreeSet};

use skillc::cluster::{Lexicon, cluster, verdict};
use skillc::model::{Candidate, Flags, Kind, Names, Origin, Source};

struct Family {
    name: String,
    domain: String,
    texts: Vec<String>,
}

struct NearMiss {
    domain: String,
    a: String,
    b: String,
    note: String,
}

fn field<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("`{k}` in {v}"))
}

fn families() -> Vec<Family> {
    parse_families(include_str!("data/paraphrase_families.jsonl"))
}

fn parse_families(jsonl: &str) -> Vec<Family> {
    (jsonl.lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("valid family line");
            Family {
                name: field(&v, "family").to_string(),
                domain: field(&v, "domain").to_string(),
                texts: (v["texts"].as_array().expect("texts").iter())
                    .map(|t| t.as_str().expect("text").to_string())
                    .collect(),
            }
        })
        .collect()
}

fn near_misses() -> Vec<NearMiss> {
    parse_near_misses(include_str!("data/paraphrase_near_misses.jsonl"))
}

fn parse_near_misses(jsonl: &str) -> Vec<NearMiss> {
    (jsonl.lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("valid near-miss line");
            NearMiss {
                domain: field(&v, "domain").to_string(),
                a: field(&v, "a").to_string(),
                b: field(&v, "b").to_string(),
                note: field(&v, "note").to_string(),
            }
        })
        .collect()
}

fn lexicon() -> Lexicon {
    Lexicon::from_yaml(include_str!("../rules/lexicon.yaml")).expect("lexicon loads")
}

fn candidate(i: u32, names: &Names, domain: &str, text: &str) -> Candidate {
    Candidate {
        source: Source::Experience(i),
        record_id: format!("exp-{i:05}").into(),
        domain: names.find(domain).expect("the domain is in the table"),
        kind: Kind::Do,
        origin: Origin::Lesson,
        text: text.into(),
        extra: None,
        recorded_at: 1_770_000_000_000 + i64::from(i) * 60_000,
        project: None,
        refusal: None,
        flags: Flags::default(),
        narrative_score: 0,
        narrative_signals: 0,
    }
}

/// Every family's wordings and every near miss's two sides as candidates (families first, in
/// file order), clustered together: the cluster of each candidate, by index.
fn clustered(lx: &Lexicon, fams: &[Family], misses: &[NearMiss]) -> Vec<usize> {
    let domains = fams.iter().map(|f| &*f.domain);
    let names = Names::new(domains.chain(misses.iter().map(|m| &*m.domain)));
    let mut cands = Vec::new();
    for f in fams {
        for t in &f.texts {
            cands.push(candidate(cands.len() as u32, &names, &f.domain, t));
        }
    }
    for m in misses {
        for t in [&m.a, &m.b] {
            cands.push(candidate(cands.len() as u32, &names, &m.domain, t));
        }
    }
    let mut of = vec![usize::MAX; cands.len()];
    for (c, cl) in cluster(&cands, &names, lx).iter().enumerate() {
        for &m in &cl.members {
            of[m as usize] = c;
        }
    }
    assert!(
        of.iter().all(|&c| c != usize::MAX),
        "every candidate is in a cluster"
    );
    of
}

/// (families that form one cluster holding no other family's wording, pairs of wordings of one
/// family that share a cluster, all such pairs, clusters that mix two families), with the
/// misses printed.
fn family_recall(fams: &[Family], of: &[usize], lx: &Lexicon) -> (usize, usize, usize, usize) {
    let mut owners: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut next = 0;
    let mut spans = Vec::new();
    for (fi, f) in fams.iter().enumerate() {
        let span = next..next + f.texts.len();
        for i in span.clone() {
            owners.entry(of[i]).or_default().insert(fi);
        }
        next = span.end;
        spans.push(span);
    }
    let (mut whole, mut met, mut pairs) = (0, 0, 0);
    for (f, span) in fams.iter().zip(&spans) {
        let cs: BTreeSet<usize> = span.clone().map(|i| of[i]).collect();
        let one = cs.len() == 1 && owners[&of[span.start]].len() == 1;
        whole += usize::from(one);
        for i in span.clone() {
            for j in i + 1..span.end {
                pairs += 1;
                met += usize::from(of[i] == of[j]);
            }
        }
        if !one {
            println!("family {} ({}) does not form one cluster:", f.name, f.domain);
            for (k, i) in span.clone().enumerate() {
                let v = if of[i] == of[span.start] {
                    "with the first".to_string()
                } else {
                    format!("{:?}", verdict(lx, &f.texts[0], &f.texts[k]))
                };
                println!("    [{}] {:?}: {v}", of[i], f.texts[k]);
            }
        }
    }
    let mixed = owners.values().filter(|o| o.len() > 1).count();
    (whole, met, pairs, mixed)
}

#[test]
fn paraphrase_families_form_one_cluster_each() {
    let lx = lexicon();
    let fams = families();
    assert!(fams.len() >= 30, "{} families", fams.len());
    assert!(fams.iter().all(|f| (3..=5).contains(&f.texts.len())));
    let domains: BTreeSet<&str> = fams.iter().map(|f| f.domain.as_str()).collect();
    assert!(domains.len() >= 10, "{domains:?}");
    let misses = near_misses();
    let of = clustered(&lx, &fams, &misses);
    let (whole, met, pairs, mixed) = family_recall(&fams, &of, &lx);
    println!(
        "families: {whole} of {} form one cluster; {met} of {pairs} pairs of wordings share one; {mixed} clusters mix two families",
        fams.len()
    );
    // On main (7c64df4): 20 of 32 families, 150 of 192 pairs. After reflexive pronouns as
    // stop words ("apply the CRDs yourself") and a swap only through a word that says a shared
    // flag's name ("when force-pushing, use --force-with-lease"): 22 and 157. Round 69 added
    // four families ("never X without Y" in three projects' words, `go` the verb) — on
    // a3710fa: 22 of 36, 164 of 216 — and read "never X without Y" as "Y before X" and `go`
    // the verb as English: 26 of 36, 181 of 216. The misses left are listed above: a reason
    // that names other things (NumPy 2 ABI / wheels built against NumPy 1), a rule in other
    // verbs (apply / run migrations, take / pass a context, check / run kubectl diff), a
    // clause that describes what the refused command does ("npm install can rewrite
    // package-lock.json") read as asserting it, and voice changes ("key the cache" / "cache
    // keyed on").
    // Round 70 (44cd6d2: 26 and 181): a verb that only says a command is run or read ("check
    // kubectl diff" / "run kubectl diff") is no content word: 28 of 36, 187 of 216.
    assert!(whole >= 28, "{whole} of {} families form one cluster", fams.len());
    assert!(met >= 187, "{met} of {pairs} pairs of wordings share a cluster");
    assert_eq!(mixed, 0, "a cluster mixes two families");
}

/// Each near miss clusters apart, as a two-candidate block in either order, and in the block
/// of its domain with every family's wordings (where each side may join a family whose lesson
/// it is, but not the same one as the other side, unless it is that family's wording).
#[test]
fn near_misses_stay_apart() {
    let lx = lexicon();
    let misses = near_misses();
    assert!(misses.len() >= 33, "{} near misses", misses.len());
    let mut merged = Vec::new();
    for m in &misses {
        for (x, y) in [(&m.a, &m.b), (&m.b, &m.a)] {
            let names = Names::new([&*m.domain]);
            let cands = [
                candidate(0, &names, &m.domain, x),
                candidate(1, &names, &m.domain, y),
            ];
            if cluster(&cands, &names, &lx).len() != 2 {
                merged.push(format!("[{}] {x:?} | {y:?}: {:?}", m.note, verdict(&lx, x, y)));
            }
        }
    }
    // Two merged on main (a3710fa): "in the same RUN instruction" / "in separate RUN
    // instructions" and "Rebase onto origin/main before opening a PR" / "Merge origin/main
    // into the branch before opening a PR". Both antonym pairs now (`[same, separate]`, with
    // a refused `separate` read as asking for the stop word `same`, so "never in a separate
    // PR" still meets "in the same commit"; `[rebase, merge]`, which a text naming both
    // leaves unmarked).
    assert!(merged.is_empty(), "near misses merged:\n{}", merged.join("\n"));
    let of = clustered(&lx, &families(), &misses);
    let base = of.len() - 2 * misses.len();
    let together: Vec<String> = (misses.iter().enumerate())
        .filter(|(k, _)| of[base + 2 * k] == of[base + 2 * k + 1])
        .map(|(_, m)| format!("[{}] {:?} | {:?}", m.note, m.a, m.b))
        .collect();
    // Known: "Set memory limits on every container" and "Set CPU limits on every container"
    // each join "Set CPU and memory requests and limits on every container" (each is part of
    // that lesson; the two are never compared with each other, DESIGN §5.3 anchors), and
    // "Never npm publish without bumping the version first" joins "Run the test suite before
    // npm publish" (Dice 0.55: short rules whose one shared thing is the long command they
    // precede; "Bump the version before npm publish" does too) as its near miss "… without
    // running the test suite first" does, rightly.
    assert!(
        together.len() <= 2,
        "near misses in one cluster:\n{}",
        together.join("\n")
    );
}

/// Each pair of `two` clusters apart and each of `one` together, in either order.
fn split_and_merged(lx: &Lexicon, two: &[(&str, &str)], one: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (pairs, want) in [(two, 2), (one, 1)] {
        for (a, b) in pairs {
            for (x, y) in [(a, b), (b, a)] {
                let names = Names::new(["ops"]);
                let cands = [candidate(0, &names, "ops", x), candidate(1, &names, "ops", y)];
                if cluster(&cands, &names, lx).len() != want {
                    wrong.push(format!("want {want}: {x:?} | {y:?}: {:?}", verdict(lx, x, y)));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Reflexive pronouns are stop words: "apply the CRDs yourself" asks what "apply the CRDs
/// separately" asks.
#[test]
fn reflexive_pronouns_are_stop_words() {
    let lx = lexicon();
    let one = [
        (
            "Apply CRDs separately before helm upgrade; helm does not upgrade CRDs.",
            "Always apply the CRDs yourself before a helm upgrade, because Helm doesn't upgrade them.",
        ),
        (
            "Rotate the signing key yourself after a maintainer leaves.",
            "Rotate the signing key manually after a maintainer leaves.",
        ),
    ];
    let two = [(
        "Rotate the signing key yourself after a maintainer leaves.",
        "Rotate the deploy key yourself after a maintainer leaves.",
    )];
    split_and_merged(&lx, &two, &one);
}

/// A word that says the name of a flag both sides pass is no word swapped in place ("force"
/// of "force-pushing" beside `--force-with-lease` and `--force`); another word swapped beside
/// it still is.
#[test]
fn a_flags_name_said_as_a_word_is_no_swap() {
    let lx = lexicon();
    let one = [(
        "When force-pushing, always use --force-with-lease rather than --force.",
        "Use git push --force-with-lease instead of --force.",
    )];
    let two = [
        (
            "Always enable the race detector with go test -race in CI.",
            "Always enable the race detector with go test -race on staging.",
        ),
        (
            "When force-pushing, use --force-with-lease rather than --force.",
            "When force-pushing, use --force rather than --force-with-lease.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// "Never X without Y" asks for Y before X, as "Y before X" does, in any project's words; a
/// plain "X without Y", the reverse order and another Y stay apart.
#[test]
fn never_x_without_y_is_y_before_x() {
    let lx = lexicon();
    let one = [
        (
            "Never run terraform apply without reviewing terraform plan first.",
            "Always review the terraform plan output before running terraform apply.",
        ),
        (
            "Never run kubectl apply on a shared cluster without running kubectl diff first.",
            "Run kubectl diff before kubectl apply on a shared cluster.",
        ),
        (
            "Never npm publish without running the test suite first.",
            "Run the test suite before npm publish.",
        ),
        (
            "Don't run alembic upgrade on production without a pg_dump backup.",
            "Take a pg_dump backup before running alembic upgrade on production.",
        ),
    ];
    let two = [
        (
            "Never run terraform apply without reviewing terraform plan first.",
            "Run terraform apply without reviewing terraform plan first.",
        ),
        (
            "Never run kubectl apply without running kubectl diff first.",
            "Run kubectl apply first, then kubectl diff.",
        ),
        (
            "Never npm publish without running the test suite first.",
            "Never npm publish without bumping the version first.",
        ),
        (
            "Never run terraform apply without reviewing terraform plan first.",
            "Never run terraform plan without reviewing terraform apply first.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// `go` the verb ("fixtures go missing", "latency went up") is English, not the language:
/// it neither sets a wording apart from one that says it otherwise nor makes two lessons
/// about other places one.
#[test]
fn go_the_verb_is_no_language() {
    let lx = lexicon();
    // Each pair: `go` the verb on one side and a technical token of the rule only on the
    // other (on a3710fa, `go` against `conftest.py`, `/var/log`, `s3`: two lessons).
    let one = [
        (
            "Fixtures go missing unless pytest runs from the repo root.",
            "Fixtures are missing unless pytest runs from the repo root, where conftest.py lives.",
        ),
        (
            "Application logs go missing when the pod restarts unless the app logs to stdout.",
            "Log to stdout: files under /var/log are lost when the pod restarts.",
        ),
        (
            "Uploads go to the wrong bucket unless AWS_PROFILE is set.",
            "Set AWS_PROFILE first, or uploads land in the wrong S3 bucket.",
        ),
    ];
    let two = [
        (
            "Release branches go through QA before the merge to main.",
            "Release branches go through QA after the merge to main.",
        ),
        ("Use Go for the new CLI tools.", "Use Rust for the new CLI tools."),
        (
            "Run go vet before committing Go changes.",
            "Run cargo clippy before committing Rust changes.",
        ),
        (
            "Write the billing service in Go.",
            "Write the billing service in Rust.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// Same or separate, rebase or merge: two Dockerfiles, two ways to update a branch. A side
/// that refuses `separate` asks for the same one ("never in a separate PR"), and a side that
/// names both of rebase and merge chooses between them ("rebase instead of merging").
#[test]
fn same_or_separate_and_rebase_or_merge_are_two_lessons() {
    let lx = lexicon();
    let two = [
        (
            "Run apt-get update and apt-get install in the same RUN instruction.",
            "Run apt-get update and apt-get install in separate RUN instructions.",
        ),
        (
            "Run the schema migration and the backfill in the same transaction.",
            "Run the schema migration and the backfill in separate transactions.",
        ),
        (
            "Rebase onto origin/main before opening a PR.",
            "Merge origin/main into the branch before opening a PR.",
        ),
        (
            "Rebase the release branch onto main before tagging.",
            "Merge main into the release branch before tagging.",
        ),
    ];
    let one = [
        (
            "Commit the lockfile changes together with the code that needs them, never in a separate PR.",
            "Keep the lockfile changes in the same commit as the code that depends on them.",
        ),
        (
            "Rebase the feature branch onto origin/main before opening the PR instead of merging main into it.",
            "Before opening a PR, rebase onto origin/main rather than merging main into the branch.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// Each near miss of `misses` as a two-candidate block in either order, merged: the merged
/// ones, printed.
fn merged_pairs(lx: &Lexicon, misses: &[NearMiss]) -> Vec<String> {
    let mut merged = Vec::new();
    for m in misses {
        for (x, y) in [(&m.a, &m.b), (&m.b, &m.a)] {
            let names = Names::new([&*m.domain]);
            let cands = [
                candidate(0, &names, &m.domain, x),
                candidate(1, &names, &m.domain, y),
            ];
            if cluster(&cands, &names, lx).len() != 2 {
                merged.push(format!("[{}] {x:?} | {y:?}: {:?}", m.note, verdict(lx, x, y)));
            }
        }
    }
    merged
}

/// A held-out set's recall, printed under `tag`: families whole, pairs of wordings in one
/// cluster out of all, clusters that mix two families. Every family has 3 to 5 wordings.
fn held_out_recall(tag: &str, fams: &[Family], misses: &[NearMiss]) -> (usize, usize, usize, usize) {
    let lx = lexicon();
    assert!(fams.iter().all(|f| (3..=5).contains(&f.texts.len())));
    let of = clustered(&lx, fams, misses);
    let (whole, met, pairs, mixed) = family_recall(fams, &of, &lx);
    println!(
        "{tag} families: {whole} of {} form one cluster; {met} of {pairs} pairs of wordings share one; {mixed} clusters mix two families",
        fams.len()
    );
    (whole, met, pairs, mixed)
}

/// The near misses whose two sides land in one cluster when clustered beside `fams`.
fn together_beside(lx: &Lexicon, fams: &[Family], misses: &[NearMiss]) -> Vec<String> {
    let of = clustered(lx, fams, misses);
    let base = of.len() - 2 * misses.len();
    (misses.iter().enumerate())
        .filter(|(k, _)| of[base + 2 * k] == of[base + 2 * k + 1])
        .map(|(_, m)| format!("[{}] {:?} | {:?}", m.note, m.a, m.b))
        .collect()
}

fn fresh_families() -> Vec<Family> {
    parse_families(include_str!("data/paraphrase_families_fresh.jsonl"))
}

fn fresh_near_misses() -> Vec<NearMiss> {
    parse_near_misses(include_str!("data/paraphrase_near_misses_fresh.jsonl"))
}

/// Held-out families written for round 70 before the lexicon was read for them
/// (`tests/data/paraphrase_families_fresh.jsonl`): 20 lessons in ten domains the first set
/// has little of (Rust/cargo, Go, Gradle, Postgres, CSS/frontend, AWS/IAM, Helm, GitHub
/// Actions, Docker, security), 3–5 wordings each — imperative, "X must Y", "prefer X over Y",
/// "if … then", "X, not Y", with and without backticks, with a trailing "because …".
#[test]
fn fresh_paraphrase_families_form_one_cluster_each() {
    let fams = fresh_families();
    assert!(fams.len() >= 12, "{} families", fams.len());
    let (whole, met, pairs, mixed) = held_out_recall("fresh", &fams, &fresh_near_misses());
    // On main (44cd6d2): 8 of 20 families, 80 of 121 pairs. After `img` as `image`, "command
    // line" as `cli`, helm's subcommands (`helm dependency update`, `helm package`), a verb
    // that only says a command is run or read, and a clause that opens with what the rule
    // turned down read as describing it ("…, not timestamp; timestamp drops the time zone"):
    // 11 of 20, 89 of 121. Left: a flag only in one side's reason (`-mod=vendor`) or one
    // side's command (`helm upgrade --install`), a short rule against a long reason
    // (Dice below 0.5), a value one side adds ("SET lock_timeout = '5s'"), a digest written
    // three ways (`image@sha256:…`, `@sha256`, `sha256`), a `"*"` that is no word, so
    // "prefer ARNs over "*" in IAM policy statements" turns the policy down, and "never build
    // SQL with string concatenation" against "… to build SQL".
    assert!(whole >= 11, "{whole} of {} families form one cluster", fams.len());
    assert!(met >= 89, "{met} of {pairs} pairs of wordings share a cluster");
    assert_eq!(mixed, 0, "a cluster mixes two families");
}

/// The held-out near misses (`tests/data/paraphrase_near_misses_fresh.jsonl`: another flag,
/// subcommand, type, setting, unit, scope, version, number, the opposite advice, a swap) stay
/// apart, alone and beside the fresh families.
#[test]
fn fresh_near_misses_stay_apart() {
    let lx = lexicon();
    let misses = fresh_near_misses();
    assert!(misses.len() >= 10, "{} near misses", misses.len());
    let merged = merged_pairs(&lx, &misses);
    assert!(merged.is_empty(), "near misses merged:\n{}", merged.join("\n"));
    let together = together_beside(&lx, &fresh_families(), &misses);
    // Known, each side joining a family whose wording names both of what the two differ in
    // (Dice over a subset: the family's wording has words the near miss lacks, the near miss
    // none the family's lacks): "Use timestamp for new columns" joins "Use timestamptz, not
    // timestamp, …; timestamp drops the time zone" (`timestamp` is turned down there and
    // asserted in the clause after), "permissions: contents: write" joins "… contents: read
    // …; the default GITHUB_TOKEN has write access", and "cancel-in-progress: true to release
    // workflows" joins "… to PR workflows so stale runs are cancelled". On main the helm
    // pair ("helm dependency build" / "… update") was a fourth.
    assert!(
        together.len() <= 3,
        "near misses in one cluster:\n{}",
        together.join("\n")
    );
}

/// A verb that only says the command after it is run or read ("check kubectl diff", "run
/// kubectl diff", "review terraform plan") adds nothing to the command: one step. Before a
/// word that is no command's program it stays a word, and order still tells two rules apart.
#[test]
fn a_verb_before_a_command_adds_nothing() {
    let lx = lexicon();
    let one = [
        (
            "Always check kubectl diff before you kubectl apply to a shared cluster.",
            "Run kubectl diff before kubectl apply on a shared cluster.",
        ),
        (
            "Check `terraform plan` before terraform apply on the prod workspace.",
            "Run terraform plan before terraform apply on the prod workspace.",
        ),
        (
            "Always enable the race detector with go test -race in CI.",
            "Run go test -race in CI to catch data races.",
        ),
    ];
    let two = [
        (
            "Check kubectl diff before kubectl apply on a shared cluster.",
            "Check kubectl diff after kubectl apply on a shared cluster.",
        ),
        (
            "Run kubectl diff before kubectl apply on a shared cluster.",
            "Run kubectl apply before kubectl diff on a shared cluster.",
        ),
        (
            "Check terraform plan before terraform apply.",
            "Check terraform validate before terraform apply.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// Developer shorthand that never means anything else: `img` is an image, "command line" and
/// "command-line" are the CLI. Helm's subcommands are commands: `helm dependency update` and
/// `helm dependency build` are two.
#[test]
fn shorthand_and_helm_subcommands() {
    let lx = lexicon();
    let one = [
        (
            "Images must have width and height set, or the layout jumps while they load.",
            "Add width and height attributes to every img to avoid layout shift.",
        ),
        (
            "Secrets must not be passed as CLI arguments because they leak through the process list.",
            "Never pass secrets as command-line arguments; they show up in ps output.",
        ),
        (
            "Always run `helm dependency update` before packaging the chart, since the subcharts aren't in git.",
            "Run helm dependency update before helm package; the charts/ directory is not committed.",
        ),
    ];
    let two = [
        (
            "Run helm dependency build before helm package.",
            "Run helm dependency update before helm package; the charts/ directory is not committed.",
        ),
        (
            "Set width and height on every img.",
            "Set width and height on every video.",
        ),
        (
            "Pass the deploy token on the command line.",
            "Pass the deploy token in an environment variable.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// A clause after the rule that opens with what the rule turned down describes it ("use
/// timestamptz, not timestamp; timestamp drops the time zone"): no antonym is read there, as
/// in a clause opened by an article, so "drops" is no opposite of the other side's "adding".
#[test]
fn a_clause_about_the_refused_thing_describes() {
    let lx = lexicon();
    let one = [
        (
            "Prefer timestamptz over timestamp when adding time columns, because plain timestamp stores no time zone.",
            "Use timestamptz, not timestamp, for new columns; timestamp drops the time zone.",
        ),
        (
            "Prefer rem over px when adding font sizes, because px ignores the user's zoom setting.",
            "Use rem, not px, for font sizes; px removes the user's control over text size.",
        ),
    ];
    let two = [
        (
            "Use timestamptz, not timestamp, for new columns; timestamp drops the time zone.",
            "Use timestamp, not timestamptz, for new columns; timestamptz converts every value to UTC.",
        ),
        (
            "Add the index before the backfill.",
            "Drop the index before the backfill.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

fn fresh2_families() -> Vec<Family> {
    parse_families(include_str!("data/paraphrase_families_fresh2.jsonl"))
}

fn fresh2_near_misses() -> Vec<NearMiss> {
    parse_near_misses(include_str!("data/paraphrase_near_misses_fresh2.jsonl"))
}

/// Held-out families written for round 71 before the clustering was read for them
/// (`tests/data/paraphrase_families_fresh2.jsonl`): 20 lessons in domains no earlier set has
/// (Rails, Ansible, MySQL, Redis, Kafka, nginx, CocoaPods, Android, .NET, Bazel, systemd,
/// gcloud, PyTorch, dbt, bash), 4 wordings each — "make sure to …", "don't forget …",
/// "X is forbidden; …", "X don't take effect until Y", passive "must be preceded by".
#[test]
fn fresh2_paraphrase_families_form_one_cluster_each() {
    let fams = fresh2_families();
    assert!(fams.len() >= 20, "{} families", fams.len());
    let (whole, met, pairs, mixed) = held_out_recall("fresh2", &fams, &fresh2_near_misses());
    // On main (b611f42): 8 of 20 families, 72 of 120 pairs. After `systemctl`'s and
    // `ansible-vault`'s subcommands (and dotnet's, dbt's, bazel's, bundle's), "X is
    // forbidden / banned" read as refusing X, and a clause about the refused word read as
    // explaining: 9 of 20, 77 of 120. Left: a negation that runs over a place ("never call
    // KEYS against the prod Redis"), other verbs for one step ("validate with nginx -t" /
    // "test the config with nginx -t"), short rules against long reasons (torch.no_grad,
    // Redis TTL, `--locked-mode` "on the build server"), `pod install` after "git pull"
    // (one side's extra command), a setting written `DEFAULT CHARSET=utf8mb4`.
    assert!(whole >= 9, "{whole} of {} families form one cluster", fams.len());
    assert!(met >= 77, "{met} of {pairs} pairs of wordings share a cluster");
    assert_eq!(mixed, 0, "a cluster mixes two families");
}

/// The round 71 held-out near misses (`tests/data/paraphrase_near_misses_fresh2.jsonl`:
/// another flag, subcommand, tool, charset, setting, scope, order, a swap, opposite advice)
/// stay apart, alone and beside the round 71 families.
#[test]
fn fresh2_near_misses_stay_apart() {
    let lx = lexicon();
    let misses = fresh2_near_misses();
    assert!(misses.len() >= 18, "{} near misses", misses.len());
    let merged = merged_pairs(&lx, &misses);
    // On main (b611f42) two merged: "systemctl daemon-reload" / "systemctl restart" and
    // "ansible-vault encrypt_string" / "ansible-vault encrypt" (subcommands not listed).
    assert!(merged.is_empty(), "near misses merged:\n{}", merged.join("\n"));
    let together = together_beside(&lx, &fresh2_families(), &misses);
    // On main four: utf8mb4 / utf8 and the SCAN / KEYS swap (each joined a family wording
    // that chose one and then described the other: "…, not utf8; utf8 cannot store emoji"),
    // systemctl's two subcommands, and the one left: "Wrap evaluation loops in
    // torch.no_grad()" and "Wrap training loops …" both join the family's first wording
    // ("Wrap evaluation loops in torch.no_grad() to avoid building the autograd graph"):
    // alone they are a minimal pair, beside it each is compared with the anchor only.
    assert!(
        together.len() <= 1,
        "near misses in one cluster:\n{}",
        together.join("\n")
    );
}

/// Subcommands of tools the earlier sets lacked: `systemctl daemon-reload` is not
/// `systemctl restart`, and a program with a hyphen (`ansible-vault`) is one name, so its
/// subcommands follow it (`ansible-vault encrypt_string` is not `ansible-vault encrypt`).
#[test]
fn systemctl_and_hyphenated_programs_have_subcommands() {
    let lx = lexicon();
    let two = [
        (
            "Run systemctl daemon-reload after editing a unit file.",
            "Run systemctl restart after editing a unit file.",
        ),
        (
            "Encrypt secrets with ansible-vault encrypt_string.",
            "Encrypt whole files with ansible-vault encrypt.",
        ),
        (
            "Run dotnet restore --locked-mode in CI.",
            "Run dotnet build --locked-mode in CI.",
        ),
    ];
    let one = [
        (
            "Always `systemctl daemon-reload` after changing a .service file, or the restart uses the stale unit.",
            "After you edit a systemd unit, run systemctl daemon-reload before restarting the service.",
        ),
        (
            "Never commit plaintext passwords in group_vars; use ansible-vault encrypt_string.",
            "Use ansible-vault encrypt_string for any secret value you put in group_vars.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// "X is forbidden", "X are banned" turn X down as "never X" does; a swap of what two texts
/// choose and refuse is two lessons, whatever else they share; a clause after a choice that
/// opens with the refused word explains why ("…, not KEYS; KEYS blocks the server").
#[test]
fn forbidden_subjects_and_swapped_choices() {
    let lx = lexicon();
    let one = [
        (
            "Use SCAN instead of KEYS in production Redis; KEYS blocks the server.",
            "On production Redis, KEYS is forbidden; iterate with SCAN.",
        ),
        (
            "Never download JSON keys for service accounts; run gcloud with --impersonate-service-account.",
            "Service account key files are banned; impersonate the service account with gcloud --impersonate-service-account.",
        ),
        (
            "Force-pushing to main is prohibited; open a pull request instead.",
            "Never force-push to main; open a pull request.",
        ),
    ];
    let two = [
        (
            "Use KEYS instead of SCAN in production Redis.",
            "Use SCAN instead of KEYS in production Redis; KEYS blocks the server.",
        ),
        (
            "Use utf8 for new MySQL tables.",
            "Create new MySQL tables with utf8mb4, not utf8; utf8 cannot store emoji.",
        ),
        (
            "Prefer Podman over Docker on the build hosts, because rootless containers are safer there.",
            "Prefer Docker over Podman on the build hosts, because rootless containers are safer there.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// A "no" whose reach the clause reading over-stretches ("collects no tests it still exits
/// 0") is no trade of choices: the two wordings of one gotcha stay one lesson. A veto on two
/// shared words each refused by one side split them at 100 k, so it was not kept (round 71).
#[test]
fn a_no_that_reaches_too_far_is_no_swap() {
    let lx = lexicon();
    let one = [(
        "If pytest -q collects no tests it still exits 0, hiding a wrong path.",
        "pytest -q exits 0 when no tests are collected, so a wrong path looks green.",
    )];
    split_and_merged(&lx, &[], &one);
}

/// A hyphenated name both sides write ("the github-actions client") is one name: it counts
/// once in the overlap, so two lessons about one tool do not meet on it twice (at 100 k,
/// "Confirm which major version …" joined "Upgrade … one major version at a time …" at a
/// Dice of exactly 0.5).
#[test]
fn a_hyphenated_name_counts_once() {
    let lx = lexicon();
    let two = [
        (
            "Confirm which major version of the github-actions client is installed before following its documentation.",
            "Upgrade the github-actions client one major version at a time and run make test after each step.",
        ),
        (
            "Confirm which major version of the react-query client is installed before following its documentation.",
            "Upgrade the react-query client one major version at a time and run npm test after each step.",
        ),
    ];
    let one = [
        (
            "Keep the github-actions client credentials in environment variables rather than in a committed config file.",
            "Store github-actions client credentials in env vars, not in a config file in the repo.",
        ),
        (
            "Use --impersonate-service-account with gcloud instead of downloading service account keys.",
            "Never download JSON keys for service accounts; run gcloud with --impersonate-service-account.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

fn fresh3_families() -> Vec<Family> {
    parse_families(include_str!("data/paraphrase_families_fresh3.jsonl"))
}

fn fresh3_near_misses() -> Vec<NearMiss> {
    parse_near_misses(include_str!("data/paraphrase_near_misses_fresh3.jsonl"))
}

/// Held-out families written for round 73 before the clustering was read for them
/// (`tests/data/paraphrase_families_fresh3.jsonl`): 12 lessons in domains no earlier set has
/// (Django, FastAPI, Celery, MongoDB, Elasticsearch, GraphQL, React, Prisma, Playwright,
/// Gradle, Vault), 4 wordings each, as agents in different projects write them.
#[test]
fn fresh3_paraphrase_families_form_one_cluster_each() {
    let fams = fresh3_families();
    assert!(fams.len() >= 12, "{} families", fams.len());
    let (whole, met, pairs, mixed) = held_out_recall("fresh3", &fams, &fresh3_near_misses());
    // On main (2711651): 1 of 12 families, 27 of 72 pairs, and so after round 73 (which
    // changed precision only). Left, as printed above: a reason clause before `so` read as
    // asserting what the rule avoids ("resolvers … produce N+1 queries, so batch them with
    // DataLoader" / "… with DataLoader to avoid N+1 queries"); "before/after its TTL" read as
    // the order of two steps; a negation that runs over a place ("to avoid N+1 queries in
    // GraphQL"); a setting's two spellings (`acks_late=True` / `task_acks_late`); "always X,
    // not Y" against "never Y; X" when the two refuse Y in other words (`gradle` / `plain
    // gradle build`); and wordings that share under half their content words.
    assert!(whole >= 1, "{whole} of {} families form one cluster", fams.len());
    assert!(met >= 27, "{met} of {pairs} pairs of wordings share a cluster");
    assert_eq!(mixed, 0, "a cluster mixes two families");
}

/// The round 73 held-out near misses (another subcommand, method, value, setting, task,
/// action or resource, a swap) stay apart, alone and beside the round 73 families.
#[test]
fn fresh3_near_misses_stay_apart() {
    let lx = lexicon();
    let misses = fresh3_near_misses();
    assert!(misses.len() >= 10, "{} near misses", misses.len());
    let merged = merged_pairs(&lx, &misses);
    // On main (2711651) one merged: "manage.py makemigrations --check" / "manage.py migrate
    // --check" (Django's management commands were not listed as subcommands).
    assert!(merged.is_empty(), "near misses merged:\n{}", merged.join("\n"));
    let together = together_beside(&lx, &fresh3_families(), &misses);
    // One left, as round 71's `torch.no_grad` pair: "… useEffect that removes the event
    // listener" and "… useEffect that clears the interval" each join the family's first
    // wording (alone they are two lessons; beside it each is compared with that anchor only).
    assert!(
        together.len() <= 1,
        "near misses in one cluster:\n{}",
        together.join("\n")
    );
}

/// Django's management commands and Prisma's are subcommands: `manage.py makemigrations` is
/// not `manage.py migrate`, `prisma migrate deploy` is not `prisma migrate dev`, while one
/// command in other words is still one lesson.
#[test]
fn django_and_prisma_commands_have_subcommands() {
    let lx = lexicon();
    let two = [
        (
            "Run python manage.py makemigrations --check in CI.",
            "Run python manage.py migrate --check in CI.",
        ),
        (
            "Run python manage.py collectstatic before every deploy.",
            "Run python manage.py migrate before every deploy.",
        ),
        (
            "Run django-admin makemigrations --check in CI.",
            "Run django-admin migrate --check in CI.",
        ),
        (
            "Use prisma migrate deploy in production.",
            "Use prisma migrate dev in production.",
        ),
        (
            "Use prisma migrate deploy in production.",
            "Use prisma db push in production.",
        ),
    ];
    let one = [
        (
            "Run python manage.py makemigrations --check in CI so a missing migration fails the build.",
            "CI should call manage.py makemigrations --check.",
        ),
        (
            "Always run manage.py migrate before starting the server.",
            "Run python manage.py migrate before you start the server.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}

/// Subcommands of more package managers and deploy tools: a word the lexicon reads as another
/// (`update` as `change`, `repair` as `fix`) or two command groups with one verb (`gcloud run
/// deploy`, `gcloud app deploy`) no longer make two commands one lesson.
#[test]
fn more_programs_have_subcommands() {
    let lx = lexicon();
    let two = [
        (
            "Run conda env update after changing environment.yml.",
            "Run conda env create after changing environment.yml.",
        ),
        ("Run flyway migrate on deploy.", "Run flyway repair on deploy."),
        (
            "Run gcloud run deploy with --no-traffic first.",
            "Run gcloud app deploy with --no-traffic first.",
        ),
        (
            "Run go work sync after adding a module.",
            "Run go mod tidy after adding a module.",
        ),
        (
            "Run swift package resolve after editing Package.swift.",
            "Run swift package update after editing Package.swift.",
        ),
        (
            "Run flutter pub get after editing pubspec.yaml.",
            "Run flutter pub upgrade after editing pubspec.yaml.",
        ),
        (
            "Run pnpm update after editing package.json.",
            "Run pnpm install after editing package.json.",
        ),
        (
            "Run az acr login before docker push.",
            "Run az login before docker push.",
        ),
        (
            "Run nvm use before npm install.",
            "Run nvm install before npm install.",
        ),
        (
            "Run asdf install after cloning.",
            "Run asdf reshim after cloning.",
        ),
        (
            "Run vagrant reload after editing the Vagrantfile.",
            "Run vagrant provision after editing the Vagrantfile.",
        ),
        (
            "Run sqlx migrate run before the tests.",
            "Run sqlx prepare before the tests.",
        ),
        (
            "Run diesel migration run after pulling.",
            "Run diesel migration redo after pulling.",
        ),
    ];
    let one = [
        (
            "Always run conda env update --prune after editing environment.yml.",
            "After changing environment.yml, update the env with conda env update --prune.",
        ),
        (
            "Deploy to Cloud Run with gcloud run deploy --no-traffic, then shift traffic.",
            "Use gcloud run deploy --no-traffic first and move traffic afterwards.",
        ),
        (
            "Run flutter pub get after every pubspec.yaml change.",
            "After editing pubspec.yaml, always run flutter pub get.",
        ),
        (
            "Run nvm use in every new shell so the .nvmrc version is active.",
            "In each new terminal, run nvm use to pick up the Node version from .nvmrc.",
        ),
        (
            "Log in to the registry with az acr login before docker push.",
            "Run az acr login before pushing images with docker push.",
        ),
        (
            "Run cargo sqlx prepare before committing so offline builds work.",
            "Before committing, run cargo sqlx prepare; offline builds need the query data.",
        ),
    ];
    split_and_merged(&lx, &two, &one);
}
