//! Paraphrase families as different agents write one lesson (`tests/data/paraphrase_families.jsonl`):
//! 32 families in ten domains (python, rust, node, docker, kubernetes, terraform, git,
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
    (include_str!("data/paraphrase_families.jsonl").lines())
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
    (include_str!("data/paraphrase_near_misses.jsonl").lines())
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
    // flag's name ("when force-pushing, use --force-with-lease"): 22 and 157. The misses left
    // are listed above: a reason that names other things (NumPy 2 ABI / wheels built against
    // NumPy 1), a rule in other verbs (apply / run migrations, take / pass a context), a
    // clause that describes what the refused command does ("npm install can rewrite
    // package-lock.json") read as asserting it, voice changes ("key the cache" / "cache keyed
    // on"), and "never X without Y" read as refusing X ("never run terraform apply without
    // reviewing terraform plan first").
    assert!(whole >= 22, "{whole} of {} families form one cluster", fams.len());
    assert!(met >= 157, "{met} of {pairs} pairs of wordings share a cluster");
    assert_eq!(mixed, 0, "a cluster mixes two families");
}

/// Each near miss clusters apart, as a two-candidate block in either order, and in the block
/// of its domain with every family's wordings (where each side may join a family whose lesson
/// it is, but not the same one as the other side, unless it is that family's wording).
#[test]
fn near_misses_stay_apart() {
    let lx = lexicon();
    let misses = near_misses();
    assert!(misses.len() >= 25, "{} near misses", misses.len());
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
    // Two merge, on main (7c64df4) and still: "in the same RUN instruction" / "in separate
    // RUN instructions" (`same` is a stop word; as an antonym of `separate` it split the
    // generator's "never in a separate PR" / "in the same commit", since a refused stop word
    // cannot be read as its opposite's advice), and "Rebase onto origin/main before opening a
    // PR" / "Merge origin/main into the branch before opening a PR" (rebase / merge is no
    // antonym pair: "rebase onto main before merging" names both).
    assert!(merged.len() <= 4, "near misses merged:\n{}", merged.join("\n"));
    let of = clustered(&lx, &families(), &misses);
    let base = of.len() - 2 * misses.len();
    let together: Vec<String> = (misses.iter().enumerate())
        .filter(|(k, _)| of[base + 2 * k] == of[base + 2 * k + 1])
        .map(|(_, m)| format!("[{}] {:?} | {:?}", m.note, m.a, m.b))
        .collect();
    // Known: "Set memory limits on every container" and "Set CPU limits on every container"
    // each join "Set CPU and memory requests and limits on every container" (each is part of
    // that lesson; the two are never compared with each other, DESIGN §5.3 anchors), and
    // "Merge origin/main into the branch before opening a PR" joins "Rebase onto origin/main
    // before opening a PR", and the RUN instruction pair merges.
    assert!(
        together.len() <= 3,
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
