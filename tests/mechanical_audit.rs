//! A reviewer's audit of the mechanical lessons (DESIGN §5.1, §6) skillc learns from agent
//! sessions it was not written against.
//!
//! `tests/data/mechanical_audit.jsonl` holds 36 sessions (Claude Code `Bash`, Gemini CLI
//! `run_shell_command`) over a dozen projects and the tools agents run every day: uv, pip,
//! poetry, pnpm, yarn, npx, cargo, gradle, mvn, helm, kubectl with contexts and namespaces,
//! git push/submodule/commit, docker build/buildx with platforms, aws and gcloud with
//! profiles and projects, make, psql, alembic, prisma, Ruby's net/http. Some teach a real fix;
//! others fail and then pass for a reason the new arguments do not hold (an edit, another
//! program's run, a look around, a network hiccup), and must teach nothing.

mod common;

use common::*;
use serde_json::{Value, json};

const DATA: &str = "tests/data/mechanical_audit.jsonl";

fn evidence(l: &Value) -> Vec<&str> {
    (l["evidence"].as_array().unwrap().iter())
        .map(|e| e.as_str().unwrap())
        .collect()
}

fn compiled(name: &str) -> (Scratch, Value, Value) {
    let s = Scratch::new(name);
    let o = compile_to(&repo().join(DATA), &s.path("out"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ledger = read_json(&s.path("out/ledger.json"));
    let diags = read_json(&s.path("out/diagnostics.json"));
    (s, ledger, diags)
}

/// The fixes a reviewer accepts are learned, each citing the sessions that made it; the ones
/// learned in two projects are rules in the domain's SKILL.md.
#[test]
fn the_real_fixes_are_learned_with_their_sessions() {
    let (s, ledger, _) = compiled("mechanical-audit-learned");
    for (text, cited, rule) in [
        (
            "Bash uv: run `uv pip install --system -r requirements/report.txt` instead of `uv pip install -r requirements/report.txt`",
            &["ma-uv-1", "ma-uv-2"][..],
            true,
        ),
        (
            "Bash pnpm: run `pnpm install --no-frozen-lockfile` instead of `pnpm install`",
            &["ma-pnpm-1", "ma-pnpm-2"],
            true,
        ),
        (
            "run_shell_command git: run `git submodule update --init --recursive` instead of `git submodule update`",
            &["ma-git-sub-1", "ma-git-sub-2"],
            true,
        ),
        (
            "Bash cargo: run `cargo test -p store --features postgres` instead of `cargo test --features postgres`",
            &["ma-cargo-1"],
            false,
        ),
        (
            "Bash docker: run `docker build --platform linux/amd64 -t orders-api:dev .` instead of `docker build -t orders-api:dev .`",
            &["ma-docker-1"],
            false,
        ),
        (
            "run_shell_command make: run `make bootloader` (directory=/src/firmware/boot) instead of `make bootloader` (directory=/src/firmware)",
            &["ma-make-1"],
            false,
        ),
    ] {
        let l = reading(&ledger, text);
        assert_eq!(evidence(l), cited, "{text}");
        assert_eq!(l["rule"], rule, "{text}");
    }
    let skill = std::fs::read_to_string(s.path("out/python/SKILL.md")).unwrap();
    assert!(skill.contains("evidence: ma-uv-1, ma-uv-2)"), "{skill}");
}

/// Gemini CLI says where a command ran in `directory`: a fix learned in two checkouts is one
/// lesson, a global rule, as it is with Claude Code's or Codex's `cwd`.
#[test]
fn a_gemini_fix_learned_in_two_directories_is_one_rule() {
    let (s, ledger, _) = compiled("mechanical-audit-gemini");
    let text = "run_shell_command npm: run `npm ci --legacy-peer-deps` instead of `npm ci`";
    let l = reading(&ledger, text);
    assert_eq!(evidence(l), ["ma-gem-npm-1", "ma-gem-npm-2"], "{l:#}");
    assert_eq!(l["rule"], true, "{l:#}");
    assert_eq!(l["scope"], "global", "{l:#}");
    let skill = std::fs::read_to_string(s.path("out/javascript/SKILL.md")).unwrap();
    assert!(
        skill.contains(&format!("{text} (id: {}", l["id"].as_str().unwrap())),
        "{skill}"
    );
}

/// What stands between a failure and its fix is read for what it is: `alembic -c
/// db/alembic.ini upgrade head` runs the same subcommand as `alembic upgrade head` (`-c` takes
/// the config file), and `kubectl config get-contexts` between two `kubectl apply`s only
/// looked, so the new context is still the fix.
#[test]
fn a_fix_is_found_across_a_config_option_and_a_look_around() {
    let (_, ledger, _) = compiled("mechanical-audit-look-between");
    for (text, cited) in [
        (
            "Bash alembic: run `alembic -c db/alembic.ini upgrade head` instead of `alembic upgrade heads`",
            "ma-alembic-1",
        ),
        (
            "Bash kubectl: run `kubectl --context prod-eu -n web apply -f k8s/ingress.yaml` instead of `kubectl -n web apply -f k8s/ingress.yaml`",
            "ma-kubectl-2",
        ),
    ] {
        assert_eq!(evidence(reading(&ledger, text)), [cited], "{text}");
    }
}

/// The sessions whose new arguments fixed nothing teach nothing, and K001 names each:
/// a look around on the same object as the failed call (`kubectl describe deploy/api` after
/// `kubectl rollout status deploy/api`), then an undo that is no better way to look; an image
/// tag that differs only in its timestamp, after another program built what was missing; a
/// commit with another message after a pre-commit hook's finding was fixed by an edit; Ruby's
/// net/http timeouts; and the sessions main already read right (an edit after an assertion,
/// a prepared run, an identical retry).
#[test]
fn the_incidental_fixes_teach_nothing() {
    let (_, ledger, diags) = compiled("mechanical-audit-incidental");
    let k001 = diags_of(&diags, "K001");
    for id in [
        "ma-kubectl-1",
        "ma-docker-3",
        "ma-git-2",
        "ma-ruby-1",
        "ma-ruby-2",
        "ma-git-1",
        "ma-poetry-1",
        "ma-yarn-1",
        "ma-supertest-1",
        "ma-cargo-2",
        "ma-cargo-3",
        "ma-gradle-1",
        "ma-flaky-1",
    ] {
        for l in ledger["lessons"].as_array().unwrap() {
            assert!(!evidence(l).contains(&id), "{id}: {l:#}");
        }
        assert!(k001.iter().any(|d| names(d, id)), "K001 names {id}: {diags:#}");
    }
}

/// `skillc trace` reads Ruby's `Net::ReadTimeout` and `Net::OpenTimeout` as network hiccups,
/// and supertest's `expected 200 "OK", got 503 "Service Unavailable"` as the app under test
/// failing its assertion: "Service Unavailable" is the status the app answered.
#[test]
fn trace_tells_a_client_timeout_from_a_status_assertion() {
    let s = Scratch::new("mechanical-audit-trace");
    let input = repo().join(DATA);
    let out = s.path("out");
    assert_eq!(compile_to(&input, &out, &[]).status.code(), Some(0));
    for (id, cause) in [
        ("ma-ruby-1", json!("net::readtimeout")),
        ("ma-ruby-2", json!("net::opentimeout")),
        ("ma-supertest-1", Value::Null),
        ("ma-git-2", Value::Null),
    ] {
        let t = trace_json(id, &input, &out);
        let failed = t["record"]["failed_operations"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{t:#}");
        assert_eq!(failed[0]["transient"], cause, "{id}: {t:#}");
    }
}

/// A secret in a fix (a connection string's password, an npm token set for one command) is
/// refused with N002 naming the session, and reaches no file. The token's redaction leaves
/// the call on its program's key (`npm`), so the fix is found and refused rather than lost
/// without a word.
#[test]
fn a_secret_in_a_fix_is_refused_and_written_nowhere() {
    let (s, _, diags) = compiled("mechanical-audit-secrets");
    let n002 = diags_of(&diags, "N002");
    for (id, pattern) in [("ma-psql-1", "url-credentials"), ("ma-npm-tok-1", "npm-token")] {
        let d = (n002.iter())
            .find(|d| names(d, id))
            .unwrap_or_else(|| panic!("N002 names {id}: {diags:#}"));
        assert_eq!(d["evidence"]["pattern"], pattern, "{d:#}");
    }
    for (path, bytes) in tree(&s.path("out")) {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["Wint3r-Ledger-2026", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"] {
            assert!(!text.contains(secret), "{path}");
        }
    }
}
