use super::*;
use crate::model::{Extra, Origin, Refusal, Source};

/// The names the test candidates' domains and projects stand for.
fn names() -> Names {
    Names::new(["api", "git", "github", "web"])
}

/// A name's place in `names`.
fn name(s: &str) -> Name {
    names().find(s).expect("a test name")
}

/// `super::cluster` with the test names.
fn cluster(candidates: &[Candidate], lexicon: &Lexicon) -> Vec<Cluster> {
    super::cluster(candidates, &names(), lexicon)
}

fn lx() -> Lexicon {
    Lexicon::from_yaml(include_str!("../../rules/lexicon.yaml")).unwrap()
}

fn cand(i: u32, at: i64, text: &str) -> Candidate {
    Candidate {
        source: Source::Experience(i),
        record_id: format!("e{i:03}").into(),
        domain: name("git"),
        kind: Kind::Do,
        origin: Origin::Lesson,
        text: text.into(),
        extra: None,
        recorded_at: at,
        project: None,
        refusal: None,
        flags: crate::model::Flags::default(),
        narrative_score: 0,
        narrative_signals: 0,
    }
}

fn members_of(cs: &[Cluster], i: u32) -> &Cluster {
    cs.iter().find(|c| c.members.contains(&i)).unwrap()
}

#[test]
fn no_chaining() {
    let l = lx();
    let a = "Cache compiled wheels locally";
    let b = "Cache compiled wheels locally, vendor pinned artifacts offline";
    let c = "Vendor pinned artifacts offline during audits";
    assert!(similar(&l, a, b), "A ~ B");
    assert!(similar(&l, b, c), "B ~ C");
    assert!(!similar(&l, a, c), "A !~ C");
    let cs = cluster(&[cand(0, 1, a), cand(1, 2, b), cand(2, 3, c)], &l);
    assert_eq!(members_of(&cs, 0).members, vec![0, 1]);
    assert_eq!(members_of(&cs, 2).members, vec![2]);
    assert_eq!(members_of(&cs, 2).anchor, 2);
}

#[test]
fn joins_the_most_similar_anchor() {
    let l = lx();
    let cs = cluster(
        &[
            cand(0, 1, "Use git pull --rebase on feature branches"),
            cand(1, 2, "Never commit .env files to the repository"),
            cand(2, 3, "Don't commit .env files into the repo"),
            cand(3, 4, "Prefer git pull --rebase on your feature branches"),
        ],
        &l,
    );
    assert_eq!(cs.len(), 2);
    assert_eq!(members_of(&cs, 0).members, vec![0, 3]);
    assert_eq!(members_of(&cs, 1).members, vec![1, 2]);
}

#[test]
fn mechanical_clusters_exactly() {
    let l = lx();
    let mut v = Vec::new();
    for (i, w) in [
        r#"{"command":"pytest -q"}"#,
        r#"{"command":"pytest -q"}"#,
        r#"{"command":"pytest -x"}"#,
    ]
    .iter()
    .enumerate()
    {
        let mut c = cand(i as u32, i as i64, "run_shell_command pytest: `pytest -q` works");
        c.origin = Origin::Mechanical;
        c.extra = Extra::new(Some("run_shell_command pytest"), Some(w), &[]);
        v.push(c);
    }
    let cs = cluster(&v, &l);
    assert_eq!(cs.len(), 2);
    let q = members_of(&cs, 0);
    assert_eq!(q.members, vec![0, 1]);
    assert_eq!(q.key.as_deref(), Some("run_shell_command pytest"));
    let want = digest::of_fields(&[
        "git",
        "do",
        "run_shell_command pytest",
        r#"{"command":"pytest -q"}"#,
    ]);
    assert_eq!(q.id, format!("C{want}"));
    assert_eq!(members_of(&cs, 2).members, vec![2]);
}

#[test]
fn refused_candidates_are_skipped() {
    let l = lx();
    let mut r = cand(1, 2, "Use git pull --rebase on feature branches");
    r.refusal = Some(Box::new(Refusal::Credential {
        pattern: "github-token".into(),
    }));
    let cs = cluster(&[cand(0, 1, "Use git pull --rebase on feature branches"), r], &l);
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].members, vec![0]);
}

#[test]
fn blocks_by_domain_kind_key() {
    let l = lx();
    let t = "Use git pull --rebase on feature branches";
    let mut b = cand(1, 2, t);
    b.kind = Kind::Watch;
    let mut c = cand(2, 3, t);
    c.domain = name("github");
    let mut d = cand(3, 4, t);
    d.extra = Extra::new(Some("run_shell_command git"), None, &[]);
    let cs = cluster(&[cand(0, 1, t), b, c, d], &l);
    assert_eq!(cs.len(), 4);
}

#[test]
fn deterministic_ids_and_member_order() {
    let l = lx();
    let texts = [
        "Use git pull --rebase on feature branches",
        "Prefer git pull --rebase on your feature branches",
        "Never commit .env files to the repository",
        "Don't commit .env files into the repo",
        "Use git pull --rebase on feature branches",
    ];
    // Same timestamps: order falls to the record id, then the index.
    let mut v: Vec<Candidate> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| cand(i as u32, 5, t))
        .collect();
    v[4].record_id = "e000".into();
    let one = cluster(&v, &l);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = pool.install(|| cluster(&v, &l));
    assert_eq!(one, two);
    let rebase = members_of(&one, 0);
    assert_eq!(rebase.members, vec![0, 4, 1]);
    assert_eq!(rebase.anchor, 0);
    let want = digest::of_fields(&["git", "do", "", texts[0]]);
    assert_eq!(rebase.id, format!("C{want}"));
    let mut sorted = one.clone();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(one, sorted);
    // Input order does not change the result beyond indices.
    let mut rev = v.clone();
    rev.reverse();
    let r = cluster(&rev, &l);
    assert_eq!(
        r.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        one.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn similar_basics() {
    let l = lx();
    assert!(similar(
        &l,
        "Use os.makedirs to create dirs",
        "Create directories with os.makedirs"
    ));
    assert!(!similar(
        &l,
        "Use os.makedirs to create dirs",
        "Use os.mkdir to create dirs"
    ));
    assert!(!similar(
        &l,
        "Run cargo build --locked in CI",
        "Run cargo build --frozen in CI"
    ));
    assert!(!similar(
        &l,
        "Always pin versions in CI",
        "Never pin versions in CI"
    ));
    assert!(similar(
        &l,
        "Run the repositories' tests",
        "running repository tests"
    ));
}

#[test]
#[ignore]
fn debug_analysis() {
    let l = lx();
    for t in std::env::var("TEXTS").unwrap_or_default().split('|') {
        println!("{t:?}\n  {:?}", l.analyze(t));
    }
}

/// Timing check (run in release): `cargo test --release --lib cluster::tests::scale_200k --
/// --ignored --nocapture`. One block of 200 000 near-identical candidates, first with the
/// repeats real memory has, then with every text distinct.
#[test]
#[ignore]
fn scale_200k() {
    let l = lx();
    let lessons = [
        "Run pytest with -x to stop at the first failure",
        "Always pin dependency versions in requirements.txt",
        "Use git pull --rebase to avoid merge commits",
        "Run cargo build --locked in CI so Cargo.lock is respected",
        "Set CPU and memory limits on every container",
        "Create indexes CONCURRENTLY on large production tables",
    ];
    let fillers = [
        "",
        "always",
        "really",
        "in this repo",
        "for every project",
        "when in doubt",
        "on CI",
    ];
    let word = |mut n: usize| {
        let mut w = String::from("q");
        loop {
            w.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                return w;
            }
        }
    };
    for distinct in [false, true] {
        let mut seed: u64 = 42;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let mut v = Vec::with_capacity(200_000);
        for i in 0..200_000u32 {
            let text = match i % 4 {
                // error codes: technical tokens differ, each code founds a cluster
                0 => format!(
                    "Retry the request when the server returns {}",
                    500 + next() % 2000
                ),
                // one word swapped: minimal pairs, each package founds a cluster
                1 => format!(
                    "Pin package{} to an exact version in requirements.txt",
                    next() % 5000
                ),
                // paraphrases of a few lessons
                _ => {
                    let l = lessons[next() % lessons.len()];
                    let f = fillers[next() % fillers.len()];
                    if distinct {
                        format!("{l} {f} {} {}", word(next() % 400), word(i as usize))
                    } else if next() % 2 == 0 {
                        format!("{l} {f}")
                    } else {
                        format!("{f} {l}")
                    }
                }
            };
            let text = if distinct && i % 4 < 2 {
                format!("{text} ({})", word(i as usize))
            } else {
                text
            };
            v.push(cand(i, i as i64 / 3, &text));
        }
        let t = std::time::Instant::now();
        let cs = cluster(&v, &l);
        let dt = t.elapsed();
        let texts: std::collections::HashSet<&str> = v.iter().map(|c| &*c.text).collect();
        println!(
            "200000 candidates ({} distinct texts), one block: {} clusters in {:.2?} ({} threads)",
            texts.len(),
            cs.len(),
            dt,
            rayon::current_num_threads()
        );
        let total: usize = cs.iter().map(|c| c.members.len()).sum();
        assert_eq!(total, 200_000);
    }
}

#[test]
fn the_shared_count_table_rules_out_exactly_what_the_score_bound_would() {
    for measure in ["dice", "jaccard", "overlap"] {
        for threshold in [0.05, 0.34, 0.5, 0.75, 1.0] {
            let lx = Lexicon::from_yaml(&format!("measure: {measure}\nthreshold: {threshold}")).unwrap();
            let table = MinShared::new(&lx);
            let mut ruled_out = 0;
            for n in 0..70 {
                for m in 0..70 {
                    for count in 0..75u32 {
                        let c = (count as usize).min(n).min(m);
                        let passes = similar::score(lx.measure, c, c, n, m) >= lx.threshold;
                        let kept = count >= table.get(n, m);
                        // Never rules out an anchor the bound would keep; below 64 tokens a
                        // side, rules out every one it would drop.
                        assert!(
                            kept || !passes,
                            "{measure} {threshold}: n={n} m={m} count={count}"
                        );
                        if n < MinShared::SIDE && m < MinShared::SIDE {
                            assert_eq!(kept, passes, "{measure} {threshold}: n={n} m={m} count={count}");
                        }
                        ruled_out += usize::from(!kept);
                    }
                }
            }
            assert!(ruled_out > 0, "the table rules something out");
        }
    }
}

#[test]
fn token_tech_match_is_the_text_tech_match() {
    // Every pair of a set of texts around the cut-offs: separators and `=` at each place
    // near the eighth byte, suffixes and prefixes of every length, empty and long texts.
    let mut texts: Vec<String> = [
        "",
        "a",
        "-",
        "--",
        "-x",
        "-x=1",
        "--force",
        "--force=1",
        "--forcee",
        "--force-with-lease",
        "-xx:maxrampercentage",
        "-xx:maxrampercentage=75",
        "-xx:maxrampercentage=50",
        "-a=b=c",
        "-a=b",
        "-a",
        "app.py",
        "src/app.py",
        "py",
        ".py",
        "/py",
        "react.useeffect",
        "useeffect",
        "a.b",
        "b",
        "ab.b",
        "abcdefg",
        "x.abcdefg",
        "xabcdefg",
        "abcdefgh",
        "x.abcdefgh",
        "x/abcdefgh",
        "xyabcdefgh",
        "-abcdefg",
        "-abcdefg=",
        "-abcdefg=1",
        "-abcdefgh=1",
        "-abcdefgh",
        "-abcdefgx=1",
        "1.22",
        "v1.22",
        "node.js",
        "é.js",
        "é",
        "x.é",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in 0..12 {
        let w: String = "abcdefghijkl"[..n].to_string();
        texts.extend([
            w.clone(),
            format!("-{w}"),
            format!("-{w}=v"),
            format!("z.{w}"),
            format!("z/{w}"),
            format!("zz{w}"),
        ]);
    }
    let token = |text: &str| Token {
        text: text.into(),
        head: lexicon::head(text),
        tail: lexicon::tail(text),
        technical: true,
        role: None,
        step: None,
        negated_in: 0,
        asserted_in: 0,
        taken: false,
        explains: false,
        left_out: false,
        acronym: false,
        part: false,
    };
    let mut matched = 0;
    for a in &texts {
        for b in &texts {
            let same = similar::tech_match(a, b);
            assert_eq!(
                similar::tech_match_tokens(&token(a), &token(b)),
                same,
                "{a:?} ~ {b:?}"
            );
            matched += usize::from(same && a.len() != b.len());
        }
    }
    // The set holds real suffix and flag-value matches on both sides of the eighth byte, not
    // only pairs both functions reject.
    for (long, short) in [
        ("src/app.py", "app.py"),
        ("x.abcdefgh", "abcdefgh"),
        ("-abcdefg=1", "-abcdefg"),
    ] {
        assert!(similar::tech_match(long, short), "{long:?} ~ {short:?}");
    }
    assert!(
        matched >= 100,
        "only {matched} matching pairs of different lengths"
    );
}

#[test]
fn lexicon_settings_that_would_switch_clustering_off_are_refused() {
    let load = |extra: &str| Lexicon::from_yaml(&format!("threshold: 0.6\n{extra}"));
    assert!(load("").is_ok());
    assert!(load("max_compares: 1\npostings_cap: 1").is_ok());
    for (extra, message) in [
        (
            "max_compares: 0",
            "max_compares: must be at least 1, got 0 at line 2",
        ),
        (
            "postings_cap: 0",
            "postings_cap: must be at least 1, got 0 at line 2",
        ),
        ("measure: cosine", "unknown measure `cosine`"),
    ] {
        let err = load(extra)
            .err()
            .unwrap_or_else(|| panic!("{extra} was accepted"));
        assert!(err.contains(message), "{extra}: {err}");
    }
    for threshold in ["0", "1.5", "-0.2"] {
        let err = Lexicon::from_yaml(&format!("threshold: {threshold}")).err();
        assert!(
            err.is_some_and(|e| e.contains("is not in (0, 1]")),
            "threshold {threshold}"
        );
    }
}

#[test]
fn duplicates_ignore_which_clause_a_word_falls_in() {
    let l = lx();
    let a =
        l.analyze("enqueue() returns an empty user cache instead of an error when users is misconfigured.");
    let b =
        l.analyze("enqueue() returns an empty user cache instead of an error when cache is misconfigured.");
    // `user` is asserted in one clause of `a` and two of `b`: the analyses differ only there.
    assert_ne!(a, b);
    assert!(a.duplicates(&b) && b.duplicates(&a));
    let (mut ha, mut hb) = (fx::Fx::default(), fx::Fx::default());
    a.hash_duplicate(&mut ha);
    b.hash_duplicate(&mut hb);
    assert_eq!(ha.finish(), hb.finish());
    // A role that differs is no duplicate.
    let c = l.analyze("enqueue() returns an empty user cache, not an error, when users is misconfigured.");
    assert!(!a.duplicates(&c));
    let cs = cluster(
        &[
            cand(
                0,
                1,
                "enqueue() returns an empty user cache instead of an error when cache is misconfigured.",
            ),
            cand(
                1,
                2,
                "enqueue() returns an empty user cache instead of an error when users is misconfigured.",
            ),
        ],
        &l,
    );
    assert_eq!(cs.len(), 1);
}

/// Two lessons from two projects, in a two-candidate block: how many clusters they make.
fn clusters_of(l: &Lexicon, a: &str, b: &str) -> usize {
    let mut second = cand(1, 2, b);
    second.project = Some(name("api"));
    let mut first = cand(0, 1, a);
    first.project = Some(name("web"));
    cluster(&[first, second], l).len()
}

/// Pairs that must stay apart (both orders) with the verdict wanted, and pairs that must
/// merge: the mismatches, one per line.
fn mismatches(l: &Lexicon, apart: &[(&str, &str, Verdict)], same: &[(&str, &str)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (a, b, want) in apart {
        // The technical verdict names side a's token first.
        let swapped = match want {
            Verdict::Technical(x, y) => Verdict::Technical(y.clone(), x.clone()),
            w => w.clone(),
        };
        for ((x, y), want) in [((a, b), want), ((b, a), &swapped)] {
            let v = verdict(l, x, y);
            if clusters_of(l, x, y) != 2 || v != *want {
                wrong.push(format!("apart: {x:?} | {y:?}: {v:?}, want {want:?}"));
            }
        }
    }
    for (a, b) in same {
        for (x, y) in [(a, b), (b, a)] {
            if clusters_of(l, x, y) != 1 {
                wrong.push(format!("same: {x:?} | {y:?}: {:?}", verdict(l, x, y)));
            }
        }
    }
    wrong
}

/// DESIGN §5.3: technical tokens must agree. A flag changes what a command does, so a lesson
/// that passes one and a lesson that does not are two lessons, even when every other word
/// is the same (these pairs each became one rule, keeping the flag and citing both records).
#[test]
fn a_flag_only_one_side_passes_splits_the_pair() {
    let l = lx();
    let flag = |f: &str| Verdict::Flag(f.to_string());
    let apart = [
        (
            "Run npm audit fix before releasing.",
            "Run npm audit fix --force before releasing.",
            flag("--force"),
        ),
        (
            "Run npm audit fix before every release so known advisories are patched.",
            "Before every release, run npm audit fix --force so known advisories are patched.",
            flag("--force"),
        ),
        (
            "Use docker compose down -v to reset the test database.",
            "Use docker compose down to reset the test database.",
            flag("-v"),
        ),
        (
            "Reset the test database with docker compose down -v between integration runs.",
            "Reset the test database with docker compose down between integration runs.",
            flag("-v"),
        ),
        (
            "Run kubectl delete pod with --grace-period=0 --force for stuck pods.",
            "Run kubectl delete pod for stuck pods.",
            flag("--force"),
        ),
        (
            "Run terraform apply -auto-approve in the CI pipeline.",
            "Run terraform apply in the CI pipeline.",
            flag("-auto-approve"),
        ),
        (
            "Run docker system prune when the runner disk fills up.",
            "Run docker system prune -a --volumes when the runner disk fills up.",
            flag("--volumes"),
        ),
        // Passed on one side, refused on the other.
        (
            "Run npm audit fix --force before releasing.",
            "Run npm audit fix before releasing, but never with --force.",
            flag("--force"),
        ),
    ];
    let same = [
        // The same flags, reworded.
        (
            "Reset the test database with docker compose down -v between integration runs.",
            "Between integration runs, reset the test database using docker compose down -v.",
        ),
        (
            "Run docker system prune -a --volumes when the runner disk fills up.",
            "When the runner disk fills up, free it with docker system prune -a --volumes.",
        ),
        (
            "Run terraform apply -auto-approve in the CI pipeline; nobody is there to type yes.",
            "In the CI pipeline, run terraform apply -auto-approve since nobody is there to type yes.",
        ),
        (
            "Run go test -race for any package that starts goroutines; races rarely show up without it.",
            "Always run go test -race when goroutines are involved; races don't surface in normal runs.",
        ),
        // The other side says the flag's name as a word.
        (
            "Use git commit --amend only on commits that have not been pushed.",
            "Only amend commits that haven't been pushed yet.",
        ),
        // A flag only one side refuses, or mentions to explain the rule: neither passes it.
        (
            "Use git push --force-with-lease when pushing a rebased branch.",
            "Use git push --force-with-lease, not --force, when pushing a rebased branch.",
        ),
        (
            "Use git push --force-with-lease, because --force overwrites the commits of others.",
            "Push rebased branches with git push --force-with-lease.",
        ),
    ];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// "with --release" and "without --release" name the same flag and disagree on it.
#[test]
fn with_and_without_a_flag_disagree() {
    let l = lx();
    let flag = |f: &str| Verdict::Flag(f.to_string());
    let apart = [
        (
            "Run cargo test with --release for the benchmark suite.",
            "Run cargo test without --release for the benchmark suite.",
            flag("--release"),
        ),
        (
            "Run pip install with --user outside a virtualenv.",
            "Run pip install without --user outside a virtualenv.",
            flag("--user"),
        ),
        (
            "Install CLI tools with pip install --user when there is no virtualenv.",
            "Install CLI tools with pip install without --user when there is no virtualenv.",
            flag("--user"),
        ),
        (
            "Run the unit tests with --release; the debug build catches integer overflows.",
            "Unit tests should run without --release so the debug build catches integer overflows.",
            flag("--release"),
        ),
    ];
    let same = [(
        "Run the unit tests without --release; the debug build catches integer overflows.",
        "Unit tests should run without --release so the debug build catches integer overflows.",
    )];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // "never … without --release" is a double negation: it leaves nothing out. Read for its
    // steps (clustering) it passes the flag, as "run cargo bench with --release" does; read
    // as a warning (the deltas) it refuses the bench run and says nothing of the flag.
    let tok = |a: Analysis| {
        let r = a.tokens.iter().find(|x| &*x.text == "--release").unwrap();
        (r.taken, r.left_out)
    };
    let never = "Never run cargo bench without --release.";
    assert_eq!(tok(l.analyze("Run cargo test without --release.")), (false, true));
    assert_eq!(tok(l.analyze(never)), (true, false));
    assert_eq!(tok(l.analyze_warning(never)), (false, false));
    assert_eq!(tok(l.analyze("Run cargo bench with --release.")), (true, false));
    assert!(mismatches(&l, &[], &[(never, "Run cargo bench with --release.")]).is_empty());
}

/// Tokens that only look like flags: numbers, dashes in prose, hyphenated words, bullets.
#[test]
fn a_dash_that_is_not_a_flag_does_not_veto() {
    use super::lexicon::is_flag;
    for f in ["-v", "--force", "-auto-approve", "--grace-period=0", "-D", "-n"] {
        assert!(is_flag(f), "{f}");
    }
    for t in [
        "-1", "-0.5", "-5s", "--", "-", "—", "e-mail", "re-run", "--1", "x-y",
    ] {
        assert!(!is_flag(t), "{t}");
    }
    let l = lx();
    let apart = [(
        "Set the retry limit on the upload job with --max-retries.",
        "Set the retry limit on the upload job.",
        Verdict::Flag("--max-retries".to_string()),
    )];
    // One side carries a number, a dash or a bullet the other lacks: the same lesson.
    let same = [
        (
            "Set the retry limit on the upload job; -1 retries forever.",
            "Set the retry limit on the upload job.",
        ),
        (
            "Lower the log level of the upload job to -5 before debugging it.",
            "Lower the log level of the upload job before debugging it.",
        ),
        (
            "Send the e-mail digest — then close the ticket.",
            "Send the e-mail digest, then close the ticket.",
        ),
        (
            "- Run the linter before pushing.",
            "Run the linter before pushing.",
        ),
        (
            "Run the linter -- the fast one -- before pushing.",
            "Run the fast linter before pushing.",
        ),
    ];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Differing subcommand words of one command (`terraform workspace select` / `new`) are two
/// lessons: a two-word key in the lexicon's `commands` lists a subcommand's subcommands.
#[test]
fn subcommands_of_a_subcommand_must_agree() {
    let l = lx();
    let apart = [(
        "Use terraform workspace select before plan.",
        "Use terraform workspace new before plan.",
        Verdict::Technical(
            "terraform workspac select".to_string(),
            "terraform workspac new".to_string(),
        ),
    )];
    let same = [(
        "Select the workspace with terraform workspace select before running terraform plan.",
        "Use terraform workspace select before terraform plan so the plan targets the right state.",
    )];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A subcommand word after a clause break is plain text.
    let a = l.analyze("Run terraform workspace. Select the staging one.");
    assert!(!a.tokens.iter().any(|t| t.text.starts_with("terraform workspac ")));
}

/// A flag with a value is indexed under the bare flag too: among anchors that share as many
/// plain words with it, the one naming the same flag is compared first, so the candidate finds
/// it even when the decoys fill `max_compares`.
#[test]
fn a_flag_with_a_value_finds_its_bare_flag_past_the_compare_limit() {
    let l = lx();
    let mut cands: Vec<Candidate> = (0..l.max_compares as u32)
        .map(|k| cand(k, k as i64, &format!("Raise the heap limit with -Xmx{k}g")))
        .collect();
    let n = cands.len() as u32;
    cands.push(cand(n, 100, "Raise the heap limit with --max-old-space-size"));
    cands.push(cand(
        n + 1,
        101,
        "Raise the heap limit with --max-old-space-size=4096",
    ));
    let cs = cluster(&cands, &l);
    assert_eq!(cs.len(), l.max_compares + 1, "{cs:#?}");
    assert_eq!(members_of(&cs, n).members, vec![n, n + 1]);
}

/// A command's program is a tool name, and technical whether or not the lexicon lists it and
/// whether or not it is also an English word: lessons that differ only in the tool they run
/// are two lessons ("Run make build --locked in CI" was one cluster with "Run cargo build
/// --locked in CI"), while paraphrases of one command still merge.
#[test]
fn lessons_that_differ_only_in_their_tool_are_two_lessons() {
    let l = lx();
    let tech = |x: &str, y: &str| Verdict::Technical(x.to_string(), y.to_string());
    let apart = [
        (
            "Run cargo build --locked in CI",
            "Run make build --locked in CI",
            tech("cargo", "mak"),
        ),
        (
            "Run cargo build --locked in CI so the build honours Cargo.lock",
            "In CI, run make build with --locked so Cargo.lock is honoured",
            tech("cargo", "mak"),
        ),
        (
            "Run cargo test before pushing to main",
            "Run make test before pushing to main",
            tech("cargo", "mak"),
        ),
        (
            "Use bun install --frozen-lockfile in CI so installs match the lockfile",
            "Use pnpm install --frozen-lockfile in CI so installs match the lockfile",
            tech("bun", "pnpm"),
        ),
        (
            "Run buildah build --pull=always so base image fixes are picked up",
            "Run podman build --pull=always so base image fixes are picked up",
            tech("buildah", "podman"),
        ),
        (
            "Run mvn test --offline on the air-gapped runners",
            "Run gradle test --offline on the air-gapped runners",
            tech("mvn", "gradl"),
        ),
        (
            "Before opening a pull request, run `tox -e lint`",
            "Before opening a pull request, run `nox -e lint`",
            tech("tox", "nox"),
        ),
        (
            "Run npm ci --ignore-scripts in CI",
            "Run yarn install --ignore-scripts in CI",
            tech("npm", "yarn"),
        ),
        (
            "Run go test ./... before tagging a release",
            "Run go vet ./... before tagging a release",
            tech("go test", "go vet"),
        ),
        // Two subcommands of a program the lexicon does not list are two commands, as two of
        // cargo's are (they shared `make` and passed the overlap threshold).
        (
            "Run make build in CI with the same flags as locally so both fail for the same reasons.",
            "Run make test locally before pushing; CI takes far longer to report the same failure.",
            tech("mak build", "mak test"),
        ),
    ];
    let same = [
        (
            "Run cargo build --locked in CI so the build honours Cargo.lock",
            "In CI, run cargo build with --locked so Cargo.lock is honoured",
        ),
        (
            "Use cargo build --locked in CI so the build honours Cargo.lock",
            "Run cargo build --locked in CI so the build honours Cargo.lock",
        ),
        (
            "Run make test before pushing to main",
            "Before pushing to main, run make test",
        ),
        (
            "Use bun install --frozen-lockfile in CI so installs match the lockfile",
            "In CI, install with bun install --frozen-lockfile so the lockfile is respected",
        ),
        (
            "Run mvn test --offline on the air-gapped runners",
            "On the air-gapped runners, run mvn test with --offline",
        ),
        (
            "Before opening a pull request, run `tox -e lint`",
            "Run tox -e lint before you open a pull request",
        ),
        // The tool named in prose on one side, as a command on the other.
        (
            "Build with make --locked in CI so Cargo.lock is honoured",
            "In CI, run make build --locked so Cargo.lock is honoured",
        ),
    ];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A command run through a wrapper program is another way to run the tool: "uv pip install"
/// is not "pip install" (they merged when only one side named the extra program), while a
/// side that states its rule in words stays one lesson with a side that names the command.
#[test]
fn a_command_one_side_runs_through_another_program_splits_the_pair() {
    let l = lx();
    let command = |c: &str| Verdict::Command(c.to_string());
    let apart = [
        (
            "Install dependencies with uv pip install -r requirements.txt inside the project venv.",
            "Install dependencies with pip install -r requirements.txt inside the project venv.",
            command("uv pip"),
        ),
        (
            "Before pushing, run npm test and then docker build in CI.",
            "Before pushing, run npm test in CI.",
            command("docker build"),
        ),
    ];
    let same = [
        (
            "Use a per-project virtualenv for every pip install instead of the system Python.",
            "Install dependencies inside a project virtualenv, never into the system Python.",
        ),
        (
            "Never jump several majors of lodash at once; go one major at a time with npm test after each.",
            "Never jump several majors of lodash at once — go one major at a time with npm test after each.",
        ),
        (
            "Install dependencies with uv pip install -r requirements.txt inside the project venv.",
            "Inside the project venv, install dependencies with uv pip install -r requirements.txt.",
        ),
    ];
    let wrong = mismatches(&l, &apart, &same);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What is, and is not, a command's program.
#[test]
fn a_commands_program_is_technical_and_prose_is_not() {
    let l = lx();
    let technical = |text: &str| -> Vec<String> {
        let a = l.analyze(text);
        (a.tokens.iter())
            .filter(|t| t.technical && !t.text.starts_with('-'))
            .map(|t| t.text.to_string())
            .collect()
    };
    // Before a subcommand, a flag, inside backticks, after `run` or `use`.
    assert_eq!(technical("Run make build --locked in CI"), ["mak", "mak build"]);
    assert_eq!(
        technical("Always run make test before pushing"),
        ["mak", "mak test"]
    );
    assert_eq!(
        technical("CI fails unless bazel build --config=ci passes"),
        ["bazel", "bazel build"]
    );
    assert_eq!(technical("Lint with `tox -e lint` first"), ["tox"]);
    assert_eq!(technical("Run `tox` before pushing"), ["tox"]);
    assert_eq!(technical("Run tox -e lint"), ["tox"]);
    assert_eq!(technical("Use npm run build --prod"), ["npm", "npm run"]);
    // The program is the word before the first subcommand, not the first word of the run.
    assert_eq!(
        technical("By default docker compose run --rm app make test runs in parallel"),
        ["compos run", "docker", "docker compos"]
    );
    assert_eq!(
        technical("By default make build --locked runs in CI"),
        ["mak", "mak build"]
    );
    // Prose: no command, or a word that is never a program.
    for prose in [
        "Run the tests with -x before pushing",
        "Run unit tests before pushing",
        "Run in test mode with --dry-run",
        "Pass --locked to the build in CI",
        "Raise the max heap -Xmx2g for the indexer",
        "Make sure the build passes before pushing",
        "Run every test before merging",
    ] {
        assert_eq!(technical(prose), Vec::<String>::new(), "{prose}");
    }
}

/// The analysis numbers `seq` while sorting its tokens, without searching them: tokens stay in
/// byte order with no repeats (long words that share their first eight bytes too), every
/// entry names a token, every token is named, a word written both as a tool and as a plain
/// word is one technical token, and an acronym's length is what the walk reads.
#[test]
fn the_sequence_names_tokens_sorted_in_byte_order() {
    let l = lx();
    for text in [
        "Run `cargo` before cargo build --locked; configuration and configurations differ from the configured value",
        "Set kubectl rollout status --timeout=120s after kubectl apply in every deployment pipeline",
        "Never run terraform apply without terraform plan, because the plan file pins configuration drift",
        "Keep PII out of logs: ruff check src/app.py and pytest -x tests/test_app.py before every commit",
    ] {
        let a = l.analyze(text);
        assert!(
            a.tokens.windows(2).all(|w| w[0].text < w[1].text),
            "{text}: {:?}",
            a.tokens.iter().map(|t| &*t.text).collect::<Vec<_>>()
        );
        assert!(a.tokens.iter().all(|t| t.head == lexicon::head(&t.text)));
        let mut named = vec![false; a.tokens.len()];
        for &(i, technical) in &a.seq {
            let t = &a.tokens[i as usize];
            assert!(!technical || t.technical, "{text}: {}", t.text);
            named[i as usize] = true;
        }
        assert!(named.iter().all(|&n| n), "{text}: a token missing from seq");
        assert!(
            a.seq.windows(2).all(|w| w[0].0 != w[1].0),
            "{text}: a repeat in seq"
        );
        let longest = a.tokens.iter().filter(|t| t.acronym).map(|t| t.text.len()).max();
        assert_eq!(acronym_len(&a) as usize, longest.unwrap_or(0), "{text}");
    }
    let a = l.analyze("Run `cargo` before cargo build --locked");
    assert!(a.token("cargo").is_some_and(|t| t.technical));
    assert_eq!(acronym_len(&l.analyze("Keep PII out of logs")), 3);
}

/// The walk skips `spelled_out` where `SpellBits` says it can find nothing: every pair it
/// finds an acronym spelled out in (either side writing it, a stop word for one letter) is let
/// through, and pairs that write an acronym no neighbouring words of the other start with
/// are ruled out.
#[test]
fn spell_bits_never_rule_out_a_spelled_out_acronym() {
    let l = lx();
    let bits = |t: &str| similar::SpellBits::of(&l.analyze(t));
    let spelled = [
        (
            "Never write PII to the nginx access logs",
            "Never write personally identifiable information to the nginx access logs",
        ),
        (
            "Set a TTL on every Redis session key",
            "Always set a time to live on each Redis session key",
        ),
        (
            "Use SSR for the product pages in Next.js",
            "Use server-side rendering for the product pages in Next.js",
        ),
        (
            "Turn on MFA for every GitHub organization owner",
            "Turn on multi-factor authentication for every GitHub organization owner",
        ),
        (
            "Purge the CDN cache after every npm run build of the storefront",
            "Purge the content delivery network cache after every npm run build of the storefront",
        ),
    ];
    for (a, b) in spelled {
        let (x, y) = (l.analyze(a), l.analyze(b));
        assert!(
            similar::spelled_out(&l, &x, &y).is_some(),
            "{a} / {b}: not spelled out"
        );
        assert!(
            similar::spelled_out(&l, &y, &x).is_some(),
            "{b} / {a}: not spelled out"
        );
        assert!(similar::SpellBits::may_spell(bits(a), bits(b)), "{a} / {b}");
        assert!(similar::SpellBits::may_spell(bits(b), bits(a)), "{b} / {a}");
    }
    for (a, b) in [
        (
            "Run pytest -x in CI before merging the PR",
            "Run cargo test --locked in CI before merging the PR",
        ),
        (
            "Pin the terraform provider version before running plan in CI",
            "Run ruff check --fix before pushing to the API repository",
        ),
        (
            "Run kubectl rollout status after kubectl apply in CI",
            "Run npm ci instead of npm install in CI",
        ),
    ] {
        let (x, y) = (l.analyze(a), l.analyze(b));
        assert!(similar::spelled_out(&l, &x, &y).is_none(), "{a} / {b}");
        assert!(
            !similar::SpellBits::may_spell(bits(a), bits(b)),
            "{a} / {b}: not ruled out"
        );
    }
}

/// The walk skips the judgement where `TechBits` says its first step vetoes the pair: never
/// where a technical token of one side matches one of the other by a `.`/`/` suffix or as a
/// flag with a value (`react.useEffect` ~ `useEffect`, `tests/test_app.py` ~ `test_app.py`,
/// `--max-old-space-size=4096` ~ `--max-old-space-size`), and where two lessons name other
/// tools in their rules it is ruled out without the scan.
#[test]
fn tech_bits_veto_only_what_the_first_step_vetoes() {
    let l = lx();
    let bits = |t: &str| similar::TechBits::of(&l.analyze(t));
    let technical = |a: &str, b: &str| {
        matches!(
            similar::verdict(&l, &l.analyze(a), &l.analyze(b)),
            Verdict::Technical(..)
        )
    };
    for (a, b) in [
        (
            "Return a cleanup function from react.useEffect in the dashboard to avoid leaks",
            "Return a cleanup function from useEffect in the dashboard to avoid leaks",
        ),
        (
            "Run pytest tests/test_app.py before pushing the payments service",
            "Run pytest test_app.py before pushing the payments service",
        ),
        (
            "Start node with --max-old-space-size=4096 for the webpack build",
            "Start node with --max-old-space-size for the webpack build",
        ),
        (
            "Pass -XX:MaxRAMPercentage=75 to the JVM in every container",
            "Pass -XX:MaxRAMPercentage=50 to the JVM in every container",
        ),
    ] {
        assert!(!similar::TechBits::vetoed(&bits(a), &bits(b)), "{a} / {b}");
        assert!(!similar::TechBits::vetoed(&bits(b), &bits(a)), "{b} / {a}");
        let vetoed_by_step_one = technical(a, b);
        assert_eq!(vetoed_by_step_one, a.contains("=75"), "{a} / {b}");
    }
    for (a, b) in [
        (
            "Run pytest -x before pushing to main",
            "Run cargo test --locked before pushing to main",
        ),
        (
            "Run terraform plan before terraform apply in CI",
            "Run kubectl diff before kubectl apply in CI",
        ),
    ] {
        assert!(technical(a, b), "{a} / {b}: not a technical veto");
        assert!(
            similar::TechBits::vetoed(&bits(a), &bits(b)),
            "{a} / {b}: not ruled out"
        );
    }
}

#[test]
fn a_tokens_head_tells_its_antonym_prefix_as_its_text_does() {
    let l = lx();
    let mut corpus = Vec::new();
    crate::generate::generate(300, 11, &mut corpus).unwrap();
    let mut texts: Vec<String> = Vec::new();
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    for line in String::from_utf8(corpus).unwrap().lines() {
        // The generator writes a few malformed lines on purpose.
        if let Ok(v) = serde_json::from_str(line) {
            strings(&v, &mut texts);
        }
    }
    texts.extend(
        [
            "Unpin the base image, disallow root and unset HOME",
            "un dis unx disx undo",
        ]
        .map(String::from),
    );
    let mut prefixes: Vec<String> = l.antonym_prefixes.clone();
    prefixes.extend(["u", "d", "unpinne", "unpinned", "unpinnedx", "re"].map(String::from));
    let (mut tokens, mut starting) = (0, 0);
    for t in texts.iter().flat_map(|t| l.analyze(t).tokens) {
        tokens += 1;
        for p in &prefixes {
            let starts = t.text.strip_prefix(p.as_str()).is_some_and(|r| r.len() >= 3);
            starting += usize::from(starts);
            // Exact up to eight bytes; a longer prefix is let through to the text.
            let exact = p.len() <= 8;
            assert!(
                similar::may_start_with(&t, p) == starts || !exact && !starts,
                "{:?} / {p:?}",
                t.text
            );
        }
    }
    assert!(
        tokens > 1000 && starting > 10,
        "{tokens} tokens, {starting} with a prefix"
    );
}

#[test]
fn member_order_sorts_as_the_full_comparison_does() {
    // Timestamps with many ties (a record's candidates share one), record ids out of index
    // order, and one record id shared by candidates at different timestamps.
    let mut v: Vec<Candidate> = Vec::new();
    for i in 0..400u32 {
        let at = i64::from((i * 7919) % 23) - 5;
        let mut c = cand(i, at, "text");
        c.record_id = format!("r{:03}", (i * 31) % 97).into();
        v.push(c);
    }
    // Members in a scrambled order, as a block may list them.
    let mut members: Vec<(Millis, u32)> = (0..400u32).map(|i| (v[i as usize].recorded_at, i)).collect();
    members.sort_unstable_by_key(|&(_, i)| (i * 131) % 400);
    let mut want: Vec<u32> = (0..400u32).collect();
    want.sort_by(|&x, &y| {
        let (a, b) = (&v[x as usize], &v[y as usize]);
        (a.recorded_at, &a.record_id, x).cmp(&(b.recorded_at, &b.record_id, y))
    });
    assert_eq!(member_order(&v, members), want);
    assert_eq!(member_order(&v, Vec::new()), Vec::<u32>::new());
}

#[test]
fn clusters_in_id_order_as_a_plain_sort_orders_them() {
    let cluster_of = |id: &str, anchor: u32| Cluster {
        id: id.to_string(),
        domain: format!("d{anchor}"),
        kind: Kind::Do,
        key: anchor.is_multiple_of(3).then(|| format!("k{anchor}")),
        anchor,
        members: vec![anchor, anchor + 1000],
    };
    let mut ids: Vec<String> = (0..300u64)
        .map(|i| format!("C{:012x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16))
        .collect();
    // Equal ids (told apart by anchor), ids longer than sixteen bytes that agree that far,
    // prefixes of each other, a zero byte, empty.
    ids.extend(
        [
            "C000000000001",
            "C000000000001",
            "Cabcdefabcdefabcdef1",
            "Cabcdefabcdefabcdef0",
            "Cabcdefabcdefabc",
            "Cabcdefabcdefab",
            "Cabcdefabcdefabc\0",
            "",
            "C",
        ]
        .map(String::from),
    );
    let mut anchor = 0;
    let parts: Vec<Vec<Cluster>> = ids
        .chunks(7)
        .map(|chunk| {
            (chunk.iter())
                .map(|id| {
                    anchor += 1;
                    cluster_of(id, (anchor * 37) % 1000)
                })
                .collect()
        })
        .collect();
    let mut want: Vec<Cluster> = parts.concat();
    want.sort_by(|a, b| (&a.id, a.anchor).cmp(&(&b.id, b.anchor)));
    assert_eq!(in_id_order(parts), want);
    assert_eq!(in_id_order(Vec::new()), Vec::new());
    assert_eq!(in_id_order(vec![Vec::new(), Vec::new()]), Vec::new());
}

#[test]
fn duplicates_find_the_first_admitted_pair_in_the_order_met() {
    let mut d = Duplicates::default();
    // Three fingerprints, one colliding thrice, their pairs pushed interleaved.
    let pushes = [
        (7u64, 10, 0),
        (9, 11, 1),
        (7, 12, 2),
        (5, 13, 3),
        (7, 14, 4),
        (9, 15, 5),
    ];
    for &(print, slot, k) in &pushes {
        d.push(print, slot, k);
    }
    // Every admitting rule against a plain vector of pairs per fingerprint.
    for print in [5u64, 7, 9, 8] {
        let plain: Vec<(usize, usize)> = (pushes.iter())
            .filter(|p| p.0 == print)
            .map(|&(_, s, k)| (s, k))
            .collect();
        for admit in 0..=16usize {
            let rule = |s: usize| s >= admit && s % 2 == admit % 2;
            let want = plain.iter().find(|&&(s, _)| rule(s)).map(|&(_, k)| k);
            assert_eq!(d.find(print, rule), want, "{print} {admit}");
        }
    }
    assert_eq!(d.find(7, |_| true), Some(0));
    assert_eq!(d.find(7, |s| s == 14), Some(4));
    assert_eq!(d.find(8, |_| true), None);
}

#[test]
fn block_ids_from_the_fed_prefix_are_the_fields_digest() {
    let l = lx();
    let min_shared = MinShared::new(&l);
    let long = "d".repeat(70);
    let contents = [
        "",
        "Pin dependency versions in requirements.txt",
        &"x".repeat(130),
        "é\0ü",
    ];
    for (domain, kind, key) in [
        ("python", Kind::Do, None),
        ("git", Kind::Avoid, Some("git push")),
        ("", Kind::Watch, Some("")),
        (long.as_str(), Kind::Do, Some(long.as_str())),
    ] {
        let block = Block::new(&[], (domain, kind, key), &min_shared);
        for content in contents {
            let c = block.make(7, content, vec![7, 9]);
            let fields = [domain, kind.as_str(), key.unwrap_or(""), content];
            assert_eq!(c.id, digest::id_of('C', &fields), "{fields:?}");
            assert_eq!(c.id, format!("C{}", digest::of_fields(&fields)));
            assert_eq!((&*c.domain, c.kind, c.key.as_deref()), (domain, kind, key));
            assert_eq!((c.anchor, c.members), (7, vec![7, 9]));
        }
    }
}

#[test]
fn texts_joined_from_their_batches_are_each_texts_own_analysis() {
    // More distinct texts than one batch of `Texts::analyse` holds, some repeated, some not
    // clustered lexically: every slot's tables are those of its own text.
    let l = lx();
    let words = [
        "cache",
        "pin",
        "wheels",
        "--locked",
        "cargo",
        "build",
        "npm ci",
        "offline",
        "src/app.py",
    ];
    let mut read: Vec<Option<Read>> = Vec::new();
    let texts: Vec<String> = (0..3200)
        .map(|i| {
            format!(
                "{} {} {} {i}",
                words[i % 9],
                words[(i / 9) % 9],
                words[(i / 81) % 9]
            )
        })
        .collect();
    for (i, t) in texts.iter().enumerate() {
        read.push(match i % 7 {
            0 => None,
            1 => Some((None, None)),
            _ => Some((Some("k"), Some(t.as_str()))),
        });
        if i % 5 == 0 {
            read.push(Some((None, Some(texts[i / 2].as_str()))));
        }
    }
    let t = Texts::analyse(&read, &l);
    assert!(t.analyses.len() > 2048, "{}", t.analyses.len());
    assert_eq!(t.key_start.len(), t.analyses.len() + 1);
    for (s, &text) in t.text.iter().enumerate() {
        let a = l.analyze(text);
        assert_eq!(t.analyses[s], a, "{text}");
        assert_eq!(t.acronyms[s], acronym_len(&a));
        assert_eq!(t.spell[s], similar::SpellBits::of(&a));
        assert_eq!(t.tech[s], similar::TechBits::of(&a));
        let mut h = fx::Fx::default();
        a.hash_duplicate(&mut h);
        assert_eq!(t.prints[s], h.finish());
        let keys: Vec<&str> = a.tokens.iter().flat_map(index_keys).collect();
        assert_eq!(t.keys(s).len(), keys.len());
    }
    // Equal numbers, equal keys, across batches.
    let all: Vec<(u32, &str)> = (0..t.text.len())
        .flat_map(|s| {
            let a = &t.analyses[s];
            let keys: Vec<&str> = a.tokens.iter().flat_map(index_keys).collect();
            t.keys(s).iter().copied().zip(keys).collect::<Vec<_>>()
        })
        .collect();
    let mut by_number: FxMap<u32, &str> = FxMap::default();
    let mut by_key: FxMap<&str, u32> = FxMap::default();
    for &(n, k) in &all {
        assert_eq!(*by_number.entry(n).or_insert(k), k);
        assert_eq!(*by_key.entry(k).or_insert(n), n);
    }
    for (i, r) in read.iter().enumerate() {
        if let Some((_, Some(text))) = r {
            assert_eq!(t.text[t.slot[i] as usize], *text);
        }
    }
}
