//! normalize → outcome → candidates on a small realistic corpus: several projects, mechanical
//! fixes, refused domains, and secrets hidden in every place a record can hold one.

use serde_json::{Value, json};
use skillc::candidates;
use skillc::diagnostics::{self, Sink, codes};
use skillc::digest;
use skillc::model::{
    Candidate, Check, ClaimSource, Corpus, DeadEnd, Experience, Kind, LessonClaim, Names, Narrative,
    OpStatus, Operation, Origin, Outcome, Refusal, Source, SourceLoc,
};
use skillc::normalize;
use skillc::outcome;
use skillc::policy::Rules;

const AWS_KEY: &str = "AKIAJ7Q2XW4PLM9RT3ZB";
const BEARER: &str = "eyJraWQiOiJhY21lLTIwMjQiLCJhbGciOiJSUzI1NiJ9xQ8vLm2Np";
const DB_PASSWORD: &str = "Tr0ub4dor-and-3";
const OPENAI: &str = "sk-proj-Jd8s9QwErTyUiOpAsDfGhJkLzXcVbNm12pQ";
const SECRETS: [&str; 4] = [AWS_KEY, BEARER, DB_PASSWORD, OPENAI];

fn loc(file: &str, line: u32) -> SourceLoc {
    SourceLoc {
        file: file.into(),
        line,
    }
}

fn op(tool: &str, args: Value, status: OpStatus, error: Option<&str>) -> Operation {
    Operation {
        tool: tool.into(),
        args: args.into(),
        status,
        error: error.map(String::from),
        secret_print: 0,
        check: None,
    }
}

fn checked(mut o: Operation, label: &str) -> Operation {
    o.check = Some(Box::new(Check {
        label: label.into(),
        target: None,
        passed: o.status == OpStatus::Ok,
    }));
    o
}

fn corpus() -> Corpus {
    let billing = "git@github.com:acme/billing.git";
    let web = "https://github.com/acme/web-console";
    let experiences = vec![
        // A pytest run from the wrong directory, fixed by running from the repo root.
        Experience {
            id: "exp-billing-0412".into(),
            recorded_at: 1_712_900_000_000,
            domains: vec!["Python".into(), "py".into(), "testing".into()],
            project: Some(format!("  {billing} ")),
            outcome: Some(Outcome::Succeeded),
            words: Narrative {
                task: Some("Fix the failing invoice rounding test".into()),
                lesson: Some(
                    "Run pytest from the repository root so that conftest.py fixtures are collected".into(),
                ),
                gotchas: vec!["pytest -q hides which conftest.py was loaded".into()],
                ..Default::default()
            }
            .into(),
            operations: vec![
                op(
                    "read_file",
                    json!({"file_path": "billing/invoice.py"}),
                    OpStatus::Ok,
                    None,
                ),
                checked(
                    op(
                        "run_shell_command",
                        json!({"command": "pytest -q", "cwd": "/srv/billing/tests"}),
                        OpStatus::Error,
                        Some("fixture 'db' not found"),
                    ),
                    "pytest",
                ),
                op(
                    "edit_file",
                    json!({"file_path": "billing/invoice.py", "old_string": "round(x, 2)",
                           "new_string": "x.quantize(Decimal('0.01'))"}),
                    OpStatus::Ok,
                    None,
                ),
                checked(
                    op(
                        "run_shell_command",
                        json!({"command": "pytest -q", "cwd": "/srv/billing"}),
                        OpStatus::Ok,
                        None,
                    ),
                    "pytest",
                ),
            ],
            source: loc("memory/billing.jsonl", 1),
            ..Default::default()
        },
        // A TypeScript experience with a domain that must never become a directory.
        Experience {
            id: "exp-web-0413".into(),
            recorded_at: 1_712_990_000_000,
            domains: vec!["TS".into(), "Node.js".into(), "../etc".into()],
            project: Some(web.into()),
            outcome: Some(Outcome::Succeeded),
            words: Narrative {
                lesson: Some("Run tsc --noEmit before vitest so type errors fail fast".into()),
                dead_ends: vec![DeadEnd {
                    name: "Downgrading vitest".into(),
                    kind: Some("approach".into()),
                    reason: Some("the type error was ours, not vitest's".into()),
                }],
                ..Default::default()
            }
            .into(),
            source: loc("memory/web.jsonl", 4),
            ..Default::default()
        },
        // Secrets in a command's headers: the mechanical fix is found, then refused.
        Experience {
            id: "exp-web-0414".into(),
            recorded_at: 1_713_000_000_000,
            domains: vec!["http".into()],
            project: Some(web.into()),
            outcome: Some(Outcome::Succeeded),
            operations: vec![
                op(
                    "run_shell_command",
                    json!({"command": format!("curl -sf -H 'Authorization: Bearer {BEARER}' https://api.acme.dev/v1/invoices")}),
                    OpStatus::Error,
                    Some("curl: (22) The requested URL returned error: 404"),
                ),
                op(
                    "run_shell_command",
                    json!({"command": format!("curl -sf -H 'Authorization: Bearer {BEARER}' https://api.acme.dev/v2/invoices")}),
                    OpStatus::Ok,
                    None,
                ),
            ],
            source: loc("memory/web.jsonl", 5),
            ..Default::default()
        },
        // A record whose id is itself a secret, with a secret in a dead-end reason.
        Experience {
            id: format!("aws-{AWS_KEY}").into(),
            recorded_at: 1_713_100_000_000,
            domains: vec!["terraform".into()],
            project: Some("/home/dev/infra".into()),
            outcome: Some(Outcome::Failed),
            words: Narrative {
                dead_ends: vec![DeadEnd {
                    name: "Hard-coding the DSN".into(),
                    kind: None,
                    reason: Some(format!("password={DB_PASSWORD} ended up in the plan output")),
                }],
                ..Default::default()
            }
            .into(),
            source: loc("memory/infra.yaml", 9),
            ..Default::default()
        },
        // An experience that teaches nothing: a note, not a candidate.
        Experience {
            id: "exp-infra-0416".into(),
            recorded_at: 1_713_200_000_000,
            domains: vec!["K8s".into()],
            outcome: Some(Outcome::Abandoned),
            words: Narrative {
                task: Some("Scale the ingress controller".into()),
                ..Default::default()
            }
            .into(),
            source: loc("memory/infra.yaml", 30),
            ..Default::default()
        },
    ];
    let claims = vec![
        LessonClaim {
            id: "claim-0001".into(),
            recorded_at: 1_713_300_000_000,
            domains: vec!["python".into(), "bad/domain".into()],
            refused_domains: vec![],
            project: None,
            text: "Use `python -m pytest` when the package is not installed in the venv".into(),
            kind: Kind::Do,
            source: ClaimSource::Model,
            evidence: vec!["exp-billing-0412".into()],
            operation_key: Some("run_shell_command pytest".into()),
            loc: loc("claims.jsonl", 1),
            ended: None,
        },
        LessonClaim {
            id: "claim-0002".into(),
            recorded_at: 1_713_300_000_000,
            domains: vec!["openai".into()],
            refused_domains: vec![],
            project: None,
            text: format!("Set OPENAI_API_KEY={OPENAI} in the CI environment"),
            kind: Kind::Watch,
            source: ClaimSource::Extractor,
            evidence: vec![],
            operation_key: None,
            loc: loc("claims.jsonl", 2),
            ended: None,
        },
    ];
    Corpus { experiences, claims }
}

fn compile(threads: usize) -> (Corpus, Vec<Candidate>, Names, Sink) {
    let rules = Rules::builtin();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut corpus = corpus();
        let mut sink = Sink::new();
        normalize::normalize(&mut corpus, &rules, &mut sink);
        let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
        let (cands, names) = candidates::extract(&corpus, &verdicts, &rules, &mut sink);
        (corpus, cands, names, sink)
    })
}

fn of<'a>(cands: &'a [Candidate], record: &str) -> Vec<&'a Candidate> {
    cands.iter().filter(|c| *c.record_id == *record).collect()
}

#[test]
fn billing_experience_yields_lesson_mechanical_and_watch() {
    let (_, cands, names, _) = compile(2);
    let got: Vec<(Kind, Origin, &str)> = of(&cands, "exp-billing-0412")
        .iter()
        .map(|c| (c.kind, c.origin, names.get(c.domain)))
        .collect();
    assert_eq!(
        got,
        [
            (Kind::Do, Origin::Lesson, "python"),
            (Kind::Do, Origin::Lesson, "testing"),
            (Kind::Do, Origin::Mechanical, "python"),
            (Kind::Watch, Origin::Gotcha, "python"),
            (Kind::Watch, Origin::Gotcha, "testing"),
        ]
    );
    let mech = of(&cands, "exp-billing-0412")[2];
    assert_eq!(
        mech.text,
        "run_shell_command pytest: run `pytest -q` (cwd=/srv/billing) instead of `pytest -q` (cwd=/srv/billing/tests)".into()
    );
    assert_eq!(mech.key(), Some("run_shell_command pytest"));
    assert_eq!(
        mech.working(),
        Some(r#"{"command": "pytest -q", "cwd": "/srv/billing"}"#)
    );
    let billing = digest::project("git@github.com:acme/billing.git");
    assert!(
        of(&cands, "exp-billing-0412")
            .iter()
            .all(|c| c.project.map(|p| names.get(p)) == Some(billing.as_str())
                && c.recorded_at == 1_712_900_000_000
                && c.source == Source::Experience(0)
                && c.admissible())
    );
}

#[test]
fn refused_domain_candidates_travel_with_the_record() {
    let (corpus, cands, names, sink) = compile(2);
    assert_eq!(corpus.experiences[1].domains, ["typescript", "node"]);
    assert_eq!(corpus.experiences[1].refused_domains, ["../etc"]);
    let web = of(&cands, "exp-web-0413");
    let domains: Vec<&str> = web.iter().map(|c| names.get(c.domain)).collect();
    assert_eq!(
        domains,
        ["typescript", "node", "../etc", "typescript", "node", "../etc"]
    );
    for c in web.iter().filter(|c| names.get(c.domain) == "../etc") {
        assert_eq!(
            c.refusal.as_deref(),
            Some(&Refusal::InvalidDomain { raw: "../etc".into() })
        );
    }
    let n001: Vec<_> = sink
        .iter()
        .filter(|d| d.code == codes::INVALID_DOMAIN)
        .map(|d| d.subject.as_str())
        .collect();
    assert_eq!(n001, ["exp-web-0413", "claim-0001"], "one per (record, domain)");
    // Every valid domain ends up usable as a directory name; no candidate outside the
    // refused ones carries anything else.
    let valid = regex::Regex::new("^[a-z0-9]+(-[a-z0-9]+)*$").unwrap();
    for c in cands.iter().filter(|c| c.refusal.is_none()) {
        assert!(valid.is_match(names.get(c.domain)), "{c:?}");
    }
}

#[test]
fn secrets_never_leave_normalize() {
    let (corpus, cands, _, sink) = compile(2);
    let finalized = diagnostics::finalize(sink.clone());
    let dump = [
        format!("{:?}", corpus.experiences),
        format!("{:?}", corpus.claims),
        format!("{cands:?}"),
        serde_json::to_string(&sink).unwrap(),
        serde_json::to_string(&finalized).unwrap(),
    ]
    .concat();
    for secret in SECRETS {
        assert!(!dump.contains(secret), "{secret} leaked");
        assert!(!dump.contains(&secret[2..12]), "part of {secret} leaked");
    }

    // The curl fix is found as a mechanical lesson, and refused for its token.
    let curl = of(&cands, "exp-web-0414");
    assert_eq!(curl.len(), 1, "{curl:#?}");
    assert_eq!(curl[0].origin, Origin::Mechanical);
    assert_eq!(
        curl[0].refusal.as_deref(),
        Some(&Refusal::Credential {
            pattern: "bearer-token".into()
        })
    );
    assert_eq!(&*curl[0].text, "[redacted: bearer-token]");
    assert_eq!((curl[0].key(), curl[0].working()), (None, None));

    // The secret id is replaced everywhere, and diagnostics say `<redacted>` with a location.
    let aws = &corpus.experiences[3];
    assert!(aws.id.starts_with("[redacted: aws-access-key] "), "{}", aws.id);
    let refused: Vec<_> = of(&cands, &aws.id);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].reasons().is_empty());
    let n002: Vec<_> = sink
        .iter()
        .filter(|d| d.code == codes::CREDENTIAL_REFUSED)
        .collect();
    assert_eq!(n002.len(), 3, "{n002:#?}");
    let by_subject: Vec<(&str, Option<u32>, &Value)> = n002
        .iter()
        .map(|d| {
            (
                d.subject.as_str(),
                d.location.as_ref().map(|l| l.line),
                &d.evidence["pattern"],
            )
        })
        .collect();
    assert_eq!(
        by_subject,
        [
            ("exp-web-0414", Some(5), &json!("bearer-token")),
            ("<redacted>", Some(9), &json!("aws-access-key")),
            ("claim-0002", Some(2), &json!("openai-key")),
        ]
    );
}

#[test]
fn claims_and_notes() {
    let (_, cands, names, sink) = compile(2);
    let claim = of(&cands, "claim-0001");
    assert_eq!(claim.len(), 2);
    assert_eq!(names.get(claim[0].domain), "python");
    assert_eq!(claim[0].origin, Origin::Claim);
    assert_eq!(claim[0].source, Source::Claim(0));
    assert_eq!(claim[0].key(), Some("run_shell_command pytest"));
    assert!(claim[0].refusal.is_none());
    assert_eq!(names.get(claim[1].domain), "bad/domain");
    assert!(matches!(
        claim[1].refusal.as_deref(),
        Some(Refusal::InvalidDomain { .. })
    ));

    // The abandoned k8s experience yields nothing and says so, in its aliased domain.
    let k001: Vec<_> = sink.iter().filter(|d| d.code == codes::NO_CANDIDATES).collect();
    assert_eq!(k001.len(), 1);
    assert_eq!(k001[0].subject, "exp-infra-0416");
    assert_eq!(k001[0].domain.as_deref(), Some("kubernetes"));

    // Every diagnostic about a record names it.
    for d in &sink {
        assert!(!d.subject.is_empty() && !d.experience_ids().is_empty(), "{d:?}");
    }
}

#[test]
fn same_output_whatever_the_thread_count() {
    let (_, one, names_one, sink_one) = compile(1);
    let (_, four, names_four, sink_four) = compile(4);
    assert_eq!(one, four);
    assert_eq!(names_one, names_four);
    assert_eq!(sink_one, sink_four);
}

/// Codex CLI's `shell` tool records its command as an argv array, wrapped in `bash -lc`, and
/// its directory as `workdir`: a failed-then-fixed call teaches the same mechanical lesson as
/// a command string does, keyed by the program.
#[test]
fn codex_argv_commands_learn_mechanical_lessons() {
    let ledger = "https://github.com/acme/ledger-api";
    let shell = |argv: Value, workdir: &str, status: OpStatus, error: Option<&str>| {
        op(
            "shell",
            json!({"command": argv, "workdir": workdir, "timeout_ms": 120000}),
            status,
            error,
        )
    };
    let experiences = vec![
        Experience {
            id: "codex-ledger-0901".into(),
            recorded_at: 1_763_719_200_000,
            domains: vec!["python".into()],
            project: Some(ledger.into()),
            outcome: Some(Outcome::Succeeded),
            words: Narrative {
                task: Some("Make the unit tests pass after the settlement refactor".into()),
                ..Default::default()
            }
            .into(),
            operations: vec![
                checked(
                    shell(
                        json!(["bash", "-lc", "pytest -q tests/unit"]),
                        "/home/dev/ledger-api/services",
                        OpStatus::Error,
                        Some("ERROR: file or directory not found: tests/unit"),
                    ),
                    "tests",
                ),
                checked(
                    shell(
                        json!(["bash", "-lc", "pytest -q tests/unit"]),
                        "/home/dev/ledger-api",
                        OpStatus::Ok,
                        None,
                    ),
                    "tests",
                ),
            ],
            source: loc("codex/sessions.jsonl", 1),
            ..Default::default()
        },
        Experience {
            id: "codex-console-0902".into(),
            recorded_at: 1_763_805_600_000,
            domains: vec!["node.js".into()],
            project: Some("https://github.com/acme/web-console".into()),
            outcome: Some(Outcome::Succeeded),
            operations: vec![
                shell(
                    json!(["npm", "ci"]),
                    "/home/dev/web-console",
                    OpStatus::Error,
                    Some(
                        "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync",
                    ),
                ),
                shell(
                    json!(["npm", "install"]),
                    "/home/dev/web-console",
                    OpStatus::Ok,
                    None,
                ),
                checked(
                    shell(
                        json!(["bash", "-lc", "npm test -- --ci"]),
                        "/home/dev/web-console",
                        OpStatus::Ok,
                        None,
                    ),
                    "tests",
                ),
            ],
            source: loc("codex/sessions.jsonl", 2),
            ..Default::default()
        },
    ];
    let rules = Rules::builtin();
    let mut corpus = Corpus {
        experiences,
        claims: vec![],
    };
    let mut sink = Sink::new();
    normalize::normalize(&mut corpus, &rules, &mut sink);
    let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
    let (cands, names) = candidates::extract(&corpus, &verdicts, &rules, &mut sink);
    let mech: Vec<(&str, &str, &str, Option<&str>)> = cands
        .iter()
        .filter(|c| c.origin == Origin::Mechanical)
        .map(|c| (&*c.record_id, names.get(c.domain), &*c.text, c.key()))
        .collect();
    assert_eq!(
        mech,
        [
            (
                "codex-ledger-0901",
                "python",
                "shell pytest: run `pytest -q tests/unit` (workdir=/home/dev/ledger-api) instead of `pytest -q tests/unit` (workdir=/home/dev/ledger-api/services)",
                Some("shell pytest"),
            ),
            (
                "codex-console-0902",
                "node",
                "shell npm: run `npm install` instead of `npm ci`",
                Some("shell npm"),
            ),
        ]
    );
    // The working form is the whole args object, argv and all, as attribution compares it.
    let pytest = cands.iter().find(|c| c.origin == Origin::Mechanical).unwrap();
    assert_eq!(
        pytest.working(),
        Some(
            r#"{"command": ["bash", "-lc", "pytest -q tests/unit"], "timeout_ms": 120000, "workdir": "/home/dev/ledger-api"}"#
        )
    );
}

#[test]
fn a_fix_that_changed_only_a_secret_is_refused_not_dropped_in_silence() {
    // `psql` fails on a wrong password and works with the right one: the only difference is
    // a secret, so the candidate it makes is refused (N002) and neither password reaches it.
    // The same wrong password typed twice, the second time after the server came up, is an
    // identical retry and teaches nothing.
    let psql = |password: &str, status: OpStatus, error: Option<&str>| {
        checked(
            op(
                "run_shell_command",
                json!({
                    "command": format!("PGPASSWORD={password} psql -h db.internal -U billing -f migrations/0042_ledger.sql"),
                    "directory": "/home/dev/billing-api"
                }),
                status,
                error,
            ),
            "migrate",
        )
    };
    let denied = "psql: error: FATAL:  password authentication failed for user \"billing\"";
    let session = |id: &str, line: u32, second: &str| Experience {
        id: id.into(),
        recorded_at: 1_763_719_200_000 + line as i64,
        domains: vec!["postgres".into()],
        project: Some("git@github.com:acme/billing.git".into()),
        outcome: Some(Outcome::Succeeded),
        operations: vec![
            psql("Winter2024!", OpStatus::Error, Some(denied)),
            psql(second, OpStatus::Ok, None),
        ],
        source: loc("agents/sessions.jsonl", line),
        ..Default::default()
    };
    let mut corpus = Corpus {
        experiences: vec![
            session("exp-migrate-0311", 1, "c0rrect-H0rse-9"),
            session("exp-migrate-0312", 2, "Winter2024!"),
        ],
        claims: vec![],
    };
    let rules = Rules::builtin();
    let mut sink = Sink::new();
    normalize::normalize(&mut corpus, &rules, &mut sink);
    let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
    let (cands, _) = candidates::extract(&corpus, &verdicts, &rules, &mut sink);

    let changed = of(&cands, "exp-migrate-0311");
    assert_eq!(changed.len(), 1, "{cands:#?}");
    assert_eq!(changed[0].origin, Origin::Mechanical);
    assert!(
        matches!(changed[0].refusal.as_deref(), Some(Refusal::Credential { .. })),
        "{:?}",
        changed[0].refusal
    );
    let n002: Vec<_> = sink
        .iter()
        .filter(|d| d.code == codes::CREDENTIAL_REFUSED)
        .collect();
    assert_eq!(n002.len(), 1, "{sink:#?}");
    assert_eq!(n002[0].subject, "exp-migrate-0311");
    let dump = format!("{cands:?} {sink:?}");
    for password in ["Winter2024!", "c0rrect-H0rse-9"] {
        assert!(!dump.contains(password), "{password} leaked");
    }

    assert!(
        of(&cands, "exp-migrate-0312").is_empty(),
        "an identical retry teaches nothing"
    );
    assert!(
        sink.iter()
            .any(|d| d.code == codes::NO_CANDIDATES && d.subject == "exp-migrate-0312"),
        "{sink:#?}"
    );
}

/// A fix the record itself gives up as a dead end is no lesson: the agent ran `git commit
/// --no-verify` after the hooks failed, the commit went in, and it wrote "skipping the hooks
/// with `git commit --no-verify`" under `dead_ends`. A mechanical "run `git commit
/// --no-verify` instead of `git commit`" would teach the approach the record abandons, beside
/// its own "Avoid:". A dead end naming another command (`npm install --legacy-peer-deps`
/// when `npm ci --legacy-peer-deps` worked) or another flag leaves the fix alone.
#[test]
fn a_fix_the_record_abandons_as_a_dead_end_teaches_nothing() {
    let bash = |command: &str, status: OpStatus, error: Option<&str>| {
        op(
            "Bash",
            json!({"command": command, "description": "run it"}),
            status,
            error,
        )
    };
    let record = |id: &str, ops: Vec<Operation>, dead: &[(&str, &str)]| Experience {
        id: id.into(),
        recorded_at: 1_793_000_000_000,
        domains: vec!["git".into(), "node".into(), "python".into()],
        project: Some("git@github.com:shopco/storefront.git".into()),
        outcome: Some(Outcome::Succeeded),
        words: Narrative {
            dead_ends: (dead.iter())
                .map(|(name, reason)| DeadEnd {
                    name: name.to_string(),
                    kind: Some("approach".into()),
                    reason: Some(reason.to_string()),
                })
                .collect(),
            ..Default::default()
        }
        .into(),
        operations: ops,
        source: loc("sessions.jsonl", 1),
        ..Default::default()
    };
    let hooks = "ruff....................Failed\n- hook id: ruff\n- exit code: 1";
    let eresolve = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree";
    let experiences = vec![
        record(
            "sf-hooks",
            vec![
                bash("git commit -m 'Add coupon codes'", OpStatus::Error, Some(hooks)),
                bash("git commit --no-verify -m 'Add coupon codes'", OpStatus::Ok, None),
            ],
            &[(
                "Skip the hooks with `git commit --no-verify`",
                "CI runs the same hooks and failed the build",
            )],
        ),
        record(
            "sf-randomly",
            vec![
                checked(
                    bash(
                        "pytest -q",
                        OpStatus::Error,
                        Some("FAILED tests/test_checkout.py::test_totals - AssertionError"),
                    ),
                    "tests",
                ),
                checked(bash("pytest -q -p no:randomly", OpStatus::Ok, None), "tests"),
            ],
            &[(
                "Disable pytest-randomly with -p no:randomly",
                "hid the order dependence instead of fixing it",
            )],
        ),
        record(
            "ca-peers",
            vec![
                bash("npm ci", OpStatus::Error, Some(eresolve)),
                bash("npm ci --legacy-peer-deps", OpStatus::Ok, None),
            ],
            &[
                ("npm install --legacy-peer-deps", "rewrote package-lock.json"),
                ("npm ci --force", "installed a React 17 peer next to React 18"),
            ],
        ),
    ];
    let mut corpus = Corpus {
        experiences,
        claims: vec![],
    };
    let rules = Rules::builtin();
    let mut sink = Sink::new();
    normalize::normalize(&mut corpus, &rules, &mut sink);
    let verdicts = outcome::derive_all(&corpus, &rules.policy, &mut sink);
    let (cands, names) = candidates::extract(&corpus, &verdicts, &rules, &mut sink);
    // Each fix's text once, whatever the domains it is learned in.
    let mechanical = |record: &str| -> Vec<String> {
        let texts: std::collections::BTreeSet<String> = (of(&cands, record).into_iter())
            .filter(|c| c.origin == Origin::Mechanical)
            .map(|c| c.text.to_string())
            .collect();
        texts.into_iter().collect()
    };
    assert_eq!(mechanical("sf-hooks"), Vec::<String>::new());
    assert_eq!(mechanical("sf-randomly"), Vec::<String>::new());
    assert_eq!(
        mechanical("ca-peers"),
        ["Bash npm: run `npm ci --legacy-peer-deps` instead of `npm ci`"]
    );
    // The dead ends themselves are still avoid candidates.
    let avoids = (cands.iter())
        .filter(|c| c.kind == Kind::Avoid && names.get(c.domain) == "git")
        .count();
    assert_eq!(avoids, 4, "one per dead end in git");
}
