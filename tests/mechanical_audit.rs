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
    compiled_from(DATA, name)
}

/// `data` compiled into a scratch directory of its own: the ledger and the diagnostics.
fn compiled_from(data: &str, name: &str) -> (Scratch, Value, Value) {
    let s = Scratch::new(name);
    let o = compile_to(&repo().join(data), &s.path("out"), &[]);
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

/// The second audit: `tests/data/mechanical_audit2.jsonl` holds 44 sessions labelled before
/// any code was written, over tools the first audit did not cover or covered thinly (aws,
/// gcloud and az with global options, terraform, dotnet, go, cargo, docker compose, npm and
/// pnpm workspaces, prisma, rake, mix, flutter, gh, ssh, scp, psql), from Claude Code `Bash`,
/// Gemini CLI `run_shell_command`, Codex `shell` argv arrays and Cline `execute_command`.
const DATA2: &str = "tests/data/mechanical_audit2.jsonl";

/// What each session of the second audit teaches, as labelled before any code was written
/// (the sessions missing here teach nothing).
const TAUGHT2: &[(&str, &str)] = &[
    (
        "mb-aws-1",
        "Bash aws: run `aws ecr get-login-password --region eu-central-1` instead of `aws ecr get-login-password`",
    ),
    (
        "mb-aws-2",
        "Bash aws: run `aws --profile docs-deploy s3 sync build/ s3://northwind-docs/ --delete` instead of `aws --profile dev s3 sync build/ s3://northwind-docs/ --delete`",
    ),
    (
        "mb-aws-3",
        "execute_command aws: run `aws logs tail /aws/lambda/ingest-parquet --since 1h --region us-west-2` instead of `aws logs tail /aws/lambda/ingest-parquet --since 1h`",
    ),
    (
        "mb-gcloud-1",
        "run_shell_command gcloud: run `gcloud builds submit --project nw-ml --tag gcr.io/nw-ml/trainer:1.4 .` instead of `gcloud builds submit --tag gcr.io/nw-ml/trainer:1.4 .`",
    ),
    (
        "mb-gcloud-2",
        "run_shell_command gcloud: run `gcloud container clusters get-credentials edge-prod --region europe-west4` instead of `gcloud container clusters get-credentials edge-prod`",
    ),
    (
        "mb-gcloud-3",
        "Bash gcloud: run `gcloud --project nw-data sql import csv warehouse gs://nw-lake/events.csv --database=events --table=raw_events` instead of `gcloud --project nw-data-dev sql import csv warehouse gs://nw-lake/events.csv --database=events --table=raw_events`",
    ),
    (
        "mb-az-1",
        "execute_command az: run `az webapp deploy --subscription billing-prod --resource-group rg-billing --name billing-api --src-path dist/api.zip` instead of `az webapp deploy --resource-group rg-billing --name billing-api --src-path dist/api.zip`",
    ),
    (
        "mb-tf-1",
        "shell terraform: run `terraform -chdir=envs/prod plan` instead of `terraform plan`",
    ),
    (
        "mb-tf-2",
        "shell terraform: run `terraform plan -var-file=env/staging.tfvars` instead of `terraform plan -var-file=envs/staging.tfvars`",
    ),
    (
        "mb-tf-4",
        "run_shell_command terraform: run `terraform init -reconfigure` instead of `terraform init`",
    ),
    (
        "mb-dotnet-1",
        "Bash dotnet: run `dotnet test Billing.sln` instead of `dotnet test`",
    ),
    (
        "mb-dotnet-2",
        "execute_command dotnet: run `dotnet ef database update --project src/Orders.Infrastructure --startup-project src/Orders.Api` instead of `dotnet ef database update`",
    ),
    (
        "mb-go-1",
        "shell go: run `go test -tags integration ./internal/store/...` instead of `go test ./internal/store/...`",
    ),
    (
        "mb-go-2",
        "Bash go: run `GOFLAGS=-mod=mod go build ./cmd/gateway` instead of `go build ./cmd/gateway`",
    ),
    (
        "mb-go-4",
        "Bash go: run `go test -timeout 30m ./e2e/...` instead of `go test ./e2e/...`",
    ),
    (
        "mb-cargo-1",
        "Bash cargo: run `cargo +nightly build -p sim-core` instead of `cargo build -p sim-core`",
    ),
    (
        "mb-cargo-2",
        "run_shell_command cargo: run `cargo run -p api-server --features tls` instead of `cargo run -p api-server`",
    ),
    (
        "mb-compose-1",
        "Bash docker: run `docker compose -f deploy/compose.dev.yml up -d db` instead of `docker compose up -d db`",
    ),
    (
        "mb-compose-2",
        "run_shell_command docker: run `docker compose --profile jobs up -d worker` instead of `docker compose up -d worker`",
    ),
    (
        "mb-pnpm-1",
        "Bash pnpm: run `pnpm add -D vitest -w` instead of `pnpm add -D vitest`",
    ),
    (
        "mb-pnpm-2",
        "run_shell_command pnpm: run `pnpm add -D vitest -w` instead of `pnpm add -D vitest`",
    ),
    (
        "mb-npm-ws-1",
        "Bash npm: run `npm -w @northwind/ui run build` instead of `npm run build`",
    ),
    (
        "mb-prisma-2",
        "execute_command npx: run `npx prisma migrate deploy --schema packages/db/prisma/schema.prisma` instead of `npx prisma migrate deploy`",
    ),
    (
        "mb-rake-1",
        "Bash bundle: run `bundle exec rake 'reports:monthly[2026-10]'` instead of `bundle exec rake reports:monthly`",
    ),
    (
        "mb-mix-1",
        "Bash mix: run `MIX_ENV=test mix test.integration` instead of `mix test.integration`",
    ),
    (
        "mb-flutter-1",
        "Bash flutter: run `flutter build apk --release` (cwd=/home/dev/mobile-app) instead of `flutter build apk --release` (cwd=/home/dev/mobile-app/lib)",
    ),
    (
        "mb-flutter-2",
        "run_shell_command flutter: run `flutter test integration_test/checkout_test.dart -d linux` instead of `flutter test integration_test/checkout_test.dart`",
    ),
    (
        "mb-gh-3",
        "Bash gh: run `gh pr create --fill --repo northwind/ledger-ex` instead of `gh pr create --fill`",
    ),
    (
        "mb-ssh-1",
        "Bash ssh: run `ssh -i ~/.ssh/fleet_deploy_ed25519 deploy@10.20.0.15 'sudo systemctl restart telemetry-api'` instead of `ssh deploy@10.20.0.15 'sudo systemctl restart telemetry-api'`",
    ),
    (
        "mb-scp-1",
        "execute_command scp: run `scp -P 2222 dist/shopfront.tar.gz deploy@bastion.northwind.io:/opt/releases/` instead of `scp -p 2222 dist/shopfront.tar.gz deploy@bastion.northwind.io:/opt/releases/`",
    ),
    (
        "mb-psql-1",
        r#"Bash psql: run `psql "postgresql://reporting@db.northwind.internal:5432/warehouse?sslmode=require" -f sql/monthly.sql` instead of `psql "postgresql://reporting@db.northwind.internal:5432/warehouse" -f sql/monthly.sql`"#,
    ),
    (
        "mb-psql-2",
        r#"shell psql: run `psql postgresql://lake@localhost:5433/lake -c '\dt staging.*'` instead of `psql -c '\dt staging.*'`"#,
    ),
];

/// The rows of `TAUGHT2` for `ids`.
fn taught2(ids: &[&str]) -> Vec<(&'static str, &'static str)> {
    let rows: Vec<_> = TAUGHT2
        .iter()
        .filter(|(id, _)| ids.contains(id))
        .copied()
        .collect();
    assert_eq!(rows.len(), ids.len(), "every id has a label");
    rows
}

fn compiled2(name: &str) -> (Scratch, Value, Value) {
    compiled_from(DATA2, name)
}

/// The texts of the mechanical lessons citing session `id`.
fn learned<'l>(ledger: &'l Value, id: &str) -> Vec<&'l str> {
    (ledger["lessons"].as_array().unwrap().iter())
        .filter(|l| !l["operation_key"].is_null() && evidence(l).contains(&id))
        .map(|l| l["text"].as_str().unwrap())
        .collect()
}

/// Each session teaches exactly the fix its label names (a lesson over 240 characters is
/// compared up to its cut).
fn assert_learned(ledger: &Value, cases: &[(&str, &str)]) {
    for (id, text) in cases {
        let got = learned(ledger, id);
        let matches = |t: &&str| t == text || t.strip_suffix('…').is_some_and(|cut| text.starts_with(cut));
        assert!(
            got.len() == 1 && got.iter().any(matches),
            "{id}: want {text}, got {got:#?}"
        );
    }
}

/// Sessions whose new arguments fixed nothing teach nothing, and K001 names each.
fn assert_nothing_learned(ledger: &Value, diags: &Value, ids: &[&str]) {
    let k001 = diags_of(diags, "K001");
    for id in ids {
        assert_eq!(learned(ledger, id), Vec::<&str>::new(), "{id}");
        assert!(k001.iter().any(|d| names(d, id)), "K001 names {id}");
    }
}

/// The cloud CLIs take global options anywhere, and their commands are a service and an
/// operation: `aws --profile dev sts get-caller-identity` between two `s3 sync`s is a look
/// around (not "the command `dev`", which made it the fix), and `aws configure list`,
/// `gcloud config list`, `az account show` between a failure and its fix only looked.
#[test]
fn cloud_cli_global_options_and_whoami_calls_are_read_for_what_they_are() {
    let (_, ledger, _) = compiled2("mechanical-audit2-cloud");
    assert_learned(
        &ledger,
        &taught2(&[
            "mb-aws-1",
            "mb-aws-2",
            "mb-aws-3",
            "mb-gcloud-1",
            "mb-gcloud-3",
            "mb-az-1",
        ]),
    );
}

/// A program asked about itself (`dotnet --info`) and a device listing (`flutter devices`)
/// only look; a workspace option before `npm run` (`npm -w @northwind/ui run build`) is no
/// script, so the call is the same `build` that failed, with the workspace as its fix.
#[test]
fn info_calls_look_and_a_workspace_option_is_no_script() {
    let (_, ledger, _) = compiled2("mechanical-audit2-info");
    assert_learned(&ledger, &taught2(&["mb-dotnet-2", "mb-flutter-2", "mb-npm-ws-1"]));
}

/// Another program's run between a failure and a working call may be what fixed it (`git
/// push` before `gh pr create --draft`), as another subcommand's run is (`az login`, `mix
/// deps.get`, `docker stop`): no "instead of". A look around (`ls`, `cat`) is no such run.
#[test]
fn another_programs_run_in_between_teaches_nothing() {
    let (_, ledger, diags) = compiled2("mechanical-audit2-other-program");
    assert_nothing_learned(
        &ledger,
        &diags,
        &[
            "mb-gh-1",
            "mb-gh-2",
            "mb-az-2",
            "mb-aws-4",
            "mb-mix-2",
            "mb-compose-3",
            "mb-tf-3",
        ],
    );
    assert_learned(&ledger, &taught2(&["mb-compose-1", "mb-tf-1", "mb-ssh-1"]));
}

/// An edit fixed the failure, not the new arguments: the edit changed the file the failure
/// names (`--> sim-core/src/integrator.rs:42:18`, then `--locked`), a test timed out (`panic:
/// test timed out after 30s`: the code hung) or an xUnit assertion failed before it. Without
/// an edit, the raised limit is the fix (`go test -timeout 30m`).
#[test]
fn an_edit_after_a_named_file_a_test_timeout_or_an_assertion_is_the_fix() {
    let (_, ledger, diags) = compiled2("mechanical-audit2-edits");
    assert_nothing_learned(&ledger, &diags, &["mb-cargo-3", "mb-go-3", "mb-dotnet-3"]);
    assert_learned(&ledger, &taught2(&["mb-go-4"]));
}

/// A new name is no fix: `prisma migrate dev --name add_refunds_table` after `--name
/// add_refunds` failed schema validation and the schema was edited (first audit, whose error
/// is cut before it names the file, and second). A real option is (`--schema`).
#[test]
fn a_new_migration_name_is_no_fix() {
    let (_, ledger, diags) = compiled2("mechanical-audit2-rename");
    assert_nothing_learned(&ledger, &diags, &["mb-prisma-1"]);
    assert_learned(&ledger, &taught2(&["mb-prisma-2"]));
    let (_, ledger, diags) = compiled("mechanical-audit-rename");
    assert_nothing_learned(&ledger, &diags, &["ma-prisma-1"]);
}

/// The whole second audit, as labelled: every session teaches its fix and nothing else, or
/// nothing; 44 of 44 (main taught 30 rightly, taught 7 wrong lessons and missed 9).
#[test]
fn the_second_audit_is_read_as_labelled() {
    let (_, ledger, diags) = compiled2("mechanical-audit2-all");
    assert_nothing_learned(
        &ledger,
        &diags,
        &[
            "mb-aws-4",
            "mb-az-2",
            "mb-tf-3",
            "mb-dotnet-3",
            "mb-go-3",
            "mb-cargo-3",
            "mb-compose-3",
            "mb-prisma-1",
            "mb-mix-2",
            "mb-gh-1",
            "mb-gh-2",
            "mb-gcloud-4",
        ],
    );
    assert_learned(&ledger, TAUGHT2);
    let sessions = std::fs::read_to_string(repo().join(DATA2)).unwrap();
    assert_eq!(sessions.lines().count(), 44);
}
