//! Real agent tool traces (Claude Code `Bash`/`Edit`, Codex `shell` argv with `apply_patch`,
//! Gemini CLI `run_shell_command`/`replace`, Aider-like `run_command`): which mechanical
//! lessons they teach, and whether the derived outcome matches what really happened.
//!
//! The fixture `tests/fixtures/agent_traces/traces.jsonl` holds 100 experiences over four
//! projects (a Python ledger API, a Node storefront, Terraform/Kubernetes infra, a Rust
//! ingester) where agents fail and then fix things, retry identically, hit transient errors,
//! and wrap commands in `cd DIR &&`, `bash -lc`, `uv run`, `npx`, `poetry run`, `sudo`.

mod common;

use serde_json::{Value, json};
use skillc::candidates;
use skillc::model::{Args, Check, Experience, OpStatus, Operation, Outcome};
use skillc::outcome;
use skillc::policy::Rules;

fn call(tool: &str, args: Value, status: OpStatus, error: Option<&str>) -> Operation {
    Operation {
        tool: tool.into(),
        args: Args::from_value(&args),
        status,
        error: error.map(String::from),
        secret_print: 0,
        check: None,
    }
}

/// Codex CLI's `shell`: an argv wrapped in `bash -lc`, run in `workdir`.
fn codex(cmd: &str, status: OpStatus, error: Option<&str>) -> Operation {
    call(
        "shell",
        json!({"command": ["bash", "-lc", cmd], "workdir": "/home/dev/ledger-api"}),
        status,
        error,
    )
}

/// Codex CLI applies a patch by running `apply_patch` through its `shell` tool.
fn codex_patch(path: &str) -> Operation {
    call(
        "shell",
        json!({
            "command": ["apply_patch", format!("*** Begin Patch\n*** Update File: {path}\n@@\n-    return round(total, 2)\n+    return total.quantize(CENT)\n*** End Patch\n")],
            "workdir": "/home/dev/ledger-api",
        }),
        OpStatus::Ok,
        None,
    )
}

fn bash(cmd: &str, status: OpStatus, error: Option<&str>) -> Operation {
    call("Bash", json!({"command": cmd, "timeout": 120000}), status, error)
}

fn checked(mut op: Operation, label: &str, target: &str) -> Operation {
    op.check = Some(Box::new(Check {
        label: label.into(),
        target: Some(target.into()),
        passed: op.status == OpStatus::Ok,
    }));
    op
}

fn texts(ops: &[Operation]) -> Vec<String> {
    let policy = Rules::builtin().policy;
    candidates::mechanical(ops, &policy, &[])
        .into_iter()
        .map(|m| m.text)
        .collect()
}

const PYTEST_FAIL: &str = "FAILED tests/test_ledger.py::test_close_period - AssertionError: assert Decimal('10.00') == Decimal('10.01')\n1 failed, 41 passed in 3.2s";
const JEST_FAIL: &str = "FAIL src/cart/cart.test.ts\n  ● Cart › applies discount\n    expect(received).toBe(expected)\n    Expected: 90\n    Received: 100";

/// Inside one wrapper (`uv run`, `npx`, `poetry run`, `bash -lc`, `cd DIR &&`, `sudo`,
/// `timeout`), a call of another program right after a failure is the next task, not a fix:
/// the key is the wrapper (DESIGN §3.3), but the program run is what a fix must share.
#[test]
fn a_wrapper_running_another_program_answers_no_failure() {
    let cases: [(&str, &str, &str); 7] = [
        ("uv run pytest -q", "uv run ruff check ledger", PYTEST_FAIL),
        ("npx jest src/cart", "npx eslint src/cart", JEST_FAIL),
        (
            "poetry run pytest tests/test_migrations.py",
            "poetry run mypy ledger",
            "E   sqlalchemy.exc.OperationalError: FATAL: database \"ledger_test\" does not exist",
        ),
        (
            "bash -lc \"cargo clippy -- -D warnings\"",
            "bash -lc \"npm run lint\"",
            "error: this `if` has identical blocks\n  --> src/parse.rs:88:5",
        ),
        (
            "cd packages/admin && npm run build",
            "cd packages/shop && cargo build",
            "src/index.ts(12,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
        (
            "sudo apt-get install -y postgresql-client-16",
            "sudo systemctl restart nginx",
            "E: Unable to locate package postgresql-client-16",
        ),
        (
            "npm run build",
            "npm run lint",
            "src/index.ts(12,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
    ];
    for (failing, other, error) in cases {
        let ops = vec![
            bash(failing, OpStatus::Error, Some(error)),
            bash(other, OpStatus::Ok, None),
        ];
        assert_eq!(texts(&ops), Vec::<String>::new(), "{failing} then {other}");
    }
    // The same program inside the wrapper with a changed form is still a fix.
    let fixes: [(&str, &str, &str); 5] = [
        (
            "poetry run pytest tests/test_migrations.py",
            "DATABASE_URL=postgresql://localhost/ledger poetry run pytest tests/test_migrations.py",
            "run_shell_command poetry: run `DATABASE_URL=postgresql://localhost/ledger poetry run pytest tests/test_migrations.py` instead of `poetry run pytest tests/test_migrations.py`",
        ),
        (
            "cd web && npm install",
            "cd web && npm install --legacy-peer-deps",
            "run_shell_command cd: run `cd web && npm install --legacy-peer-deps` instead of `cd web && npm install`",
        ),
        (
            "cd frontend && npm test",
            "cd web && npm test",
            "run_shell_command cd: run `cd web && npm test` instead of `cd frontend && npm test`",
        ),
        (
            "timeout 60 cargo build --release",
            "timeout 60 cargo build --release -j 2",
            "run_shell_command timeout: run `timeout 60 cargo build --release -j 2` instead of `timeout 60 cargo build --release`",
        ),
        (
            "sudo pip install -r requirements.txt",
            "sudo pip install --break-system-packages -r requirements.txt",
            "run_shell_command sudo: run `sudo pip install --break-system-packages -r requirements.txt` instead of `sudo pip install -r requirements.txt`",
        ),
    ];
    for (failing, working, want) in fixes {
        let ops = vec![
            call(
                "run_shell_command",
                json!({"command": failing}),
                OpStatus::Error,
                Some("error: externally-managed-environment"),
            ),
            call(
                "run_shell_command",
                json!({"command": working}),
                OpStatus::Ok,
                None,
            ),
        ];
        assert_eq!(texts(&ops), [want], "{failing} then {working}");
    }
}

/// A test that failed an assertion, an edit, then the test passing with other arguments:
/// the edit fixed it, and the arguments teach nothing. Without the edit, the new arguments
/// did it (`-p no:randomly` for an order-dependent test).
#[test]
fn a_check_fixed_by_an_edit_teaches_no_new_arguments() {
    let failing = || {
        checked(
            codex("uv run pytest -q", OpStatus::Error, Some(PYTEST_FAIL)),
            "tests",
            "unit",
        )
    };
    let passing = || checked(codex("uv run pytest -q -x", OpStatus::Ok, None), "tests", "unit");
    let edit = call(
        "Edit",
        json!({"file_path": "/home/dev/ledger-api/ledger/periods.py", "old_string": "round(total, 2)", "new_string": "total.quantize(CENT)"}),
        OpStatus::Ok,
        None,
    );
    for between in [codex_patch("ledger/periods.py"), edit] {
        assert_eq!(texts(&[failing(), between, passing()]), Vec::<String>::new());
    }
    // A failing jest run (no check recorded: its assertion says it found a fault) is the same.
    let ops = [
        bash("npx jest src/cart", OpStatus::Error, Some(JEST_FAIL)),
        call(
            "Write",
            json!({"file_path": "src/cart/cart.ts", "content": "export {}"}),
            OpStatus::Ok,
            None,
        ),
        bash("npx jest src/cart --runInBand", OpStatus::Ok, None),
    ];
    assert_eq!(texts(&ops), Vec::<String>::new());
    // A refused edit never ran: the new arguments did it.
    let mut refused = codex_patch("ledger/periods.py");
    refused.status = OpStatus::Refused;
    assert_eq!(
        texts(&[failing(), refused, passing()]),
        ["shell uv: run `uv run pytest -q -x` instead of `uv run pytest -q`"]
    );
    // No edit: the flag is the fix.
    let ops = [
        checked(
            codex(
                "pytest tests/test_orders.py",
                OpStatus::Error,
                Some("FAILED tests/test_orders.py::test_totals - AssertionError: assert 3 == 2"),
            ),
            "tests",
            "orders",
        ),
        checked(
            codex("pytest -p no:randomly tests/test_orders.py", OpStatus::Ok, None),
            "tests",
            "orders",
        ),
    ];
    assert_eq!(
        texts(&ops),
        [
            "shell pytest: run `pytest -p no:randomly tests/test_orders.py` instead of `pytest tests/test_orders.py`"
        ]
    );
    // A build that failed (no check, no assertion) and was fixed by a flag after an edit still
    // teaches the flag: only a finding is explained by the edit.
    let ops = [
        bash(
            "cargo build --release",
            OpStatus::Error,
            Some("Killed\nerror: could not compile `ingest` (lib)"),
        ),
        call(
            "Edit",
            json!({"file_path": "/srv/ingest-rs/Cargo.toml"}),
            OpStatus::Ok,
            None,
        ),
        bash("cargo build --release -j 2", OpStatus::Ok, None),
    ];
    assert_eq!(
        texts(&ops),
        ["Bash cargo: run `cargo build --release -j 2` instead of `cargo build --release`"]
    );
}

fn experience(ops: Vec<Operation>) -> Experience {
    Experience {
        id: "codex-ledger-0412".into(),
        recorded_at: 1_772_500_000_000,
        domains: vec!["python".into()],
        outcome: Some(Outcome::Succeeded),
        operations: ops,
        ..Default::default()
    }
}

/// Codex CLI's patches and git's tree-changing subcommands run through the shell: a test that
/// passed before one no longer speaks for the code, as before an `Edit`.
#[test]
fn a_patch_or_checkout_through_the_shell_makes_earlier_checks_stale() {
    let policy = Rules::builtin().policy;
    let pytest = || checked(codex("pytest -q", OpStatus::Ok, None), "tests", "unit");
    let stale = |after: Operation| {
        let v = outcome::derive(&experience(vec![pytest(), after]), &policy);
        !v.passed && v.stale == 1
    };
    assert!(stale(codex_patch("ledger/settlement.py")));
    for cmd in [
        "git stash pop",
        "cd /home/dev/ledger-api && git checkout -- ledger/settlement.py",
        "git apply /tmp/settlement.diff",
        "git pull --rebase origin main",
        "sudo patch -p1 < fix.diff",
    ] {
        assert!(stale(codex(cmd, OpStatus::Ok, None)), "{cmd}");
        assert!(stale(bash(cmd, OpStatus::Ok, None)), "{cmd}");
    }
    // Reading the tree, committing or pushing changes no file the check saw.
    for cmd in [
        "git status --short",
        "git diff --stat",
        "git commit -am 'close periods'",
        "git push",
        "cat ledger/settlement.py",
    ] {
        let v = outcome::derive(
            &experience(vec![pytest(), codex(cmd, OpStatus::Ok, None)]),
            &policy,
        );
        assert!(v.passed && v.verified && v.stale == 0, "{cmd}: {v:?}");
    }
    // A patch, then the check again: fresh.
    let v = outcome::derive(
        &experience(vec![pytest(), codex_patch("ledger/settlement.py"), pytest()]),
        &policy,
    );
    assert!(v.passed && v.verified && v.stale == 0);
}

/// The whole fixture, compiled by the binary: the mechanical lessons a user would keep, and
/// none of the next-task, edit-explained or stale ones.
#[test]
fn agent_traces_compile_to_the_lessons_that_really_fixed_something() {
    let out = common::Scratch::new("agent-traces");
    let o = common::compile_to(&common::fixture("agent_traces"), &out.path("out"), &[]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let ledger = common::read_json(&out.path("out/ledger.json"));
    let lessons = ledger["lessons"].as_array().unwrap();
    let mechanical: Vec<(String, String, String)> = (lessons.iter())
        .filter(|l| l["operation_key"].is_string())
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or_default().to_string();
            (s("domain"), s("status"), s("text"))
        })
        .collect();
    let has = |text: &str| mechanical.iter().any(|(_, _, t)| t == text);
    for want in [
        "Bash cargo: run `cargo build --release --locked` instead of `cargo build --release`",
        "Bash pip: run `pip install --user -r requirements-dev.txt` instead of `pip install -r requirements-dev.txt`",
        "shell cargo: run `cargo build --release -j 2` instead of `cargo build --release`",
        "shell git: run `git push --force-with-lease` instead of `git push`",
        "run_shell_command poetry: run `DATABASE_URL=postgresql://localhost/ledger poetry run pytest tests/test_migrations.py` instead of `poetry run pytest tests/test_migrations.py`",
        "shell pytest: run `pytest -p no:randomly tests/test_orders.py` instead of `pytest tests/test_orders.py`",
        "Bash cd: run `cd web && npm install --legacy-peer-deps` instead of `cd web && npm install`",
    ] {
        assert!(has(want), "missing {want}: {mechanical:#?}");
    }
    for (domain, status, text) in &mechanical {
        for wrong in [
            "ruff check",
            "npx eslint",
            "poetry run mypy",
            "cargo fmt",
            "--runInBand",
            "-q -x",
            "--watch",
            "--request-timeout",
            "Acquire::Retries",
            "timeout 600",
            "+1.74",
        ] {
            assert!(!text.contains(wrong), "{domain} {status}: {text}");
        }
    }
    // The `cd web && npm install` fix belongs to npm (the program inside `cd`), as the
    // `npm ci` fix of a record tagged javascript and npm does, not to javascript too.
    let cd_fix: Vec<&str> = (mechanical.iter())
        .filter(|(_, _, t)| t.starts_with("Bash cd: run `cd web && npm install"))
        .map(|(d, _, _)| d.as_str())
        .collect();
    assert_eq!(cd_fix, ["npm"]);
    // Tests that passed before a patch applied through Codex's shell do not verify the
    // rename, so its lesson is held back (stale checks), not a rule.
    let rename = lessons
        .iter()
        .find(|l| l["text"].as_str().unwrap().starts_with("Rename feature flags"));
    assert!(rename.is_none(), "{rename:?}");
    let diags = common::read_json(&out.path("out/diagnostics.json"));
    let stale = common::diags_of(&diags, "O002");
    assert!(
        stale.iter().any(|d| common::names(d, "codex-ledger-015")),
        "{stale:#?}"
    );
}
