//! Interop inputs (issue 5) through the binary: a GAIA `memory.db` compiled in place (WAL
//! mode, open in another connection, never written) and an OmniMem export.

mod common;

use std::path::Path;

use common::{Scratch, compile_to, read_json, skillc, stderr, stdout, trace_json};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

const BILLING: &str = "/home/dev/billing-api";
const LEDGER: &str = "/home/dev/ledger-service";

const SCHEMA: &str = r#"
CREATE TABLE schema_version (version INTEGER NOT NULL, migrated_at TEXT NOT NULL);
CREATE TABLE tool_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    args TEXT,
    result_summary TEXT,
    success INTEGER NOT NULL DEFAULT 1,
    error TEXT,
    duration_ms INTEGER,
    timestamp TEXT NOT NULL
);
CREATE TABLE knowledge (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    domain TEXT,
    source TEXT,
    confidence REAL DEFAULT 0.5,
    metadata TEXT,
    use_count INTEGER DEFAULT 0,
    context TEXT,
    sensitive INTEGER DEFAULT 0,
    entity TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT,
    last_used TEXT,
    due_at TEXT,
    reminded_at TEXT,
    embedding BLOB,
    superseded_by INTEGER
);
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    context TEXT,
    timestamp TEXT NOT NULL,
    consolidated_at TEXT
);
"#;

/// One tool call as GAIA logs it: `args` is `json.dumps(args)[:500]`.
struct Call<'a> {
    tool: &'a str,
    args: String,
    result: &'a str,
    success: bool,
    error: Option<&'a str>,
    at: &'a str,
}

fn sh<'a>(command: &str, directory: Option<&str>, ok: bool, error: Option<&'a str>, at: &'a str) -> Call<'a> {
    let args = match directory {
        Some(d) => json!({"command": command, "directory": d}),
        None => json!({"command": command}),
    };
    Call {
        tool: "run_shell_command",
        args: args.to_string(),
        result: if ok {
            r#"{"exit_code": 0}"#
        } else {
            r#"{"exit_code": 1}"#
        },
        success: ok,
        error,
        at,
    }
}

/// The stores' recurring mistake: `pytest -q` run from `tests/`, failing with `error`.
fn pytest_in_tests<'a>(error: &'a str, at: &'a str) -> Call<'a> {
    sh("pytest -q", Some("tests"), false, Some(error), at)
}

/// Its fix: `pytest -q` from the repository root.
fn pytest_at_root(at: &str) -> Call<'_> {
    sh("pytest -q", None, true, None, at)
}

/// A `cargo build` in `renderer/` that cannot resolve a version, failing with `error`.
fn cargo_in_renderer<'a>(error: &'a str, at: &'a str) -> Call<'a> {
    sh("cargo build", Some("renderer"), false, Some(error), at)
}

/// Its fix: `cargo build --locked`.
fn cargo_locked_in_renderer(at: &str) -> Call<'_> {
    sh("cargo build --locked", Some("renderer"), true, None, at)
}

/// GAIA cuts the serialised arguments at 500 characters.
fn cut500(s: &str) -> String {
    s.chars().take(500).collect()
}

struct Gaia {
    conn: Connection,
}

impl Gaia {
    fn create(path: &Path, version: i64) -> Gaia {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get::<_, String>(0))
            .unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute(
            "INSERT INTO schema_version (version, migrated_at) VALUES (?1, '2025-01-06T10:00:00+01:00')",
            params![version],
        )
        .unwrap();
        Gaia { conn }
    }

    fn session(&self, id: &str, workspace: &str, task: &str, calls: &[Call]) {
        let first = calls.first().map_or("2025-03-10T09:00:00+01:00", |c| c.at);
        self.conn
            .execute(
                "INSERT INTO conversations (session_id, role, content, context, timestamp) VALUES (?1, 'user', ?2, ?3, ?4)",
                params![id, task, format!("workspace:{workspace}"), first],
            )
            .unwrap();
        for c in calls {
            self.conn
                .execute(
                    "INSERT INTO tool_history (session_id, tool_name, args, result_summary, success, error, duration_ms, timestamp)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1200, ?7)",
                    params![id, c.tool, c.args, c.result, c.success as i64, c.error, c.at],
                )
                .unwrap();
        }
        self.conn
            .execute(
                "INSERT INTO conversations (session_id, role, content, context, timestamp) VALUES (?1, 'assistant', 'Done.', NULL, ?2)",
                params![id, calls.last().map_or(first, |c| c.at)],
            )
            .unwrap();
    }

    fn knowledge(
        &self,
        category: &str,
        source: &str,
        content: &str,
        metadata: Value,
        at: &str,
        superseded_by: Option<i64>,
    ) {
        self.conn
            .execute(
                "INSERT INTO knowledge (category, content, domain, source, metadata, context, created_at, updated_at, superseded_by)
                 VALUES (?1, ?2, NULL, ?3, ?4, NULL, ?5, ?5, ?6)",
                params![category, content, source, metadata.to_string(), at, superseded_by],
            )
            .unwrap();
    }
}

const MODULE_ERROR_BILLING: &str = "ModuleNotFoundError: No module named 'billing'";
const MODULE_ERROR_LEDGER: &str = "ModuleNotFoundError: No module named 'ledger'";
const PORT_ERROR: &str = "Error response from daemon: driver failed programming external connectivity on endpoint billing-db: Bind for 0.0.0.0:5432 failed: port is already allocated";

/// A realistic GAIA store: fixes in two workspaces, a recurring unfixed error, a refusal, a
/// transient failure, truncated arguments, tool lessons (one shown by sessions, one not, one
/// superseded), offsets in every timestamp.
fn build_store(path: &Path) -> Gaia {
    let g = Gaia::create(path, 3);
    // pytest from tests/ fails, from the root it passes: in two workspaces.
    g.session(
        "s-20250310-a1",
        BILLING,
        "fix the failing invoice tests",
        &[
            Call {
                tool: "read_file",
                args: json!({"file_path": "/home/dev/billing-api/tests/test_invoices.py"}).to_string(),
                result: r#"{"lines": 184}"#,
                success: true,
                error: None,
                at: "2025-03-10T09:14:02.512311+01:00",
            },
            pytest_in_tests(MODULE_ERROR_BILLING, "2025-03-10T09:15:40.100000+01:00"),
            pytest_at_root("2025-03-10T09:17:11.900000+01:00"),
        ],
    );
    g.session(
        "s-20250311-b1",
        LEDGER,
        "run the ledger test suite after the refactor",
        &[
            pytest_in_tests(MODULE_ERROR_LEDGER, "2025-03-11T16:02:00-05:00"),
            pytest_at_root("2025-03-11T16:03:30-05:00"),
        ],
    );
    // cargo build fails on a resolver change; --locked builds what the lock file pins.
    g.session(
        "s-20250312-a2",
        BILLING,
        "build the pdf renderer crate",
        &[
            cargo_in_renderer(
                "error: failed to select a version for the requirement `tokio = \"^1.44\"`",
                "2025-03-12T10:00:00+01:00",
            ),
            cargo_locked_in_renderer("2025-03-12T10:02:30+01:00"),
        ],
    );
    // docker compose up fails in two sessions and is never fixed.
    let denied = r#"{"executed": false, "status": "denied", "reason": "user rejected the command"}"#;
    g.session(
        "s-20250312-a3",
        BILLING,
        "start the local stack",
        &[
            sh(
                "docker compose up -d",
                None,
                false,
                Some(PORT_ERROR),
                "2025-03-12T14:20:00+01:00",
            ),
            Call {
                tool: "run_shell_command",
                args: json!({"command": "docker system prune -af"}).to_string(),
                result: denied,
                success: false,
                error: None,
                at: "2025-03-12T14:21:00+01:00",
            },
        ],
    );
    g.session(
        "s-20250313-b2",
        LEDGER,
        "bring up postgres for the ledger service",
        &[
            sh(
                "docker compose up -d",
                None,
                false,
                Some(PORT_ERROR),
                "2025-03-13T08:45:00-05:00",
            ),
            Call {
                tool: "read_file",
                args: json!({"file_path": "/home/dev/ledger-service/docker-compose.yml"}).to_string(),
                result: r#"{"lines": 41}"#,
                success: true,
                error: None,
                at: "2025-03-13T08:46:00-05:00",
            },
        ],
    );
    // A refusal is not a failure: no lesson about `git push`.
    g.session(
        "s-20250313-a4",
        BILLING,
        "push the invoice fix",
        &[
            Call {
                tool: "run_shell_command",
                args: json!({"command": "git push --force origin fix/invoices"}).to_string(),
                result: denied,
                success: false,
                error: Some("command denied by user"),
                at: "2025-03-13T11:00:00+01:00",
            },
            sh(
                "git push origin fix/invoices",
                None,
                true,
                None,
                "2025-03-13T11:01:00+01:00",
            ),
        ],
    );
    // A timeout is transient: no lesson about pip.
    g.session(
        "s-20250314-b3",
        LEDGER,
        "install the new dependencies",
        &[
            sh(
                "pip install -r requirements.txt",
                None,
                false,
                Some("ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)"),
                "2025-03-14T09:00:00-05:00",
            ),
            sh(
                "pip install --default-timeout=100 -r requirements.txt",
                None,
                true,
                None,
                "2025-03-14T09:03:00-05:00",
            ),
        ],
    );
    // Truncated arguments: the first keeps its command, the second loses everything the key needs.
    let long_dir = format!("{LEDGER}/{}", "fixtures/generated/".repeat(40));
    let recoverable =
        cut500(&json!({"command": "pytest -q tests/test_ledger.py", "directory": long_dir}).to_string());
    let body = "import csv\nfrom decimal import Decimal\n\n".to_string()
        + &"def row(r):\n    return Decimal(r['amount'])\n".repeat(20);
    let unrecoverable = cut500(
        &json!({"content": body, "file_path": "/home/dev/ledger-service/ledger/export.py"}).to_string(),
    );
    assert_eq!(recoverable.chars().count(), 500);
    assert!(serde_json::from_str::<Value>(&recoverable).is_err());
    assert!(serde_json::from_str::<Value>(&unrecoverable).is_err());
    g.session(
        "s-20250314-b4",
        LEDGER,
        "write the csv export",
        &[
            Call {
                tool: "write_file",
                args: unrecoverable,
                result: r#"{"written": true}"#,
                success: true,
                error: None,
                at: "2025-03-14T15:10:00-05:00",
            },
            Call {
                tool: "run_shell_command",
                args: recoverable,
                result: r#"{"exit_code": 0, "stdout": "3 passed"}"#,
                success: true,
                error: None,
                at: "2025-03-14T15:11:00-05:00",
            },
        ],
    );
    // knowledge: the error GAIA recorded, its tool lessons (shown, not shown, superseded), a fact.
    g.knowledge(
        "error",
        "tool_history",
        PORT_ERROR,
        json!({"operation": "run_shell_command docker", "exit_code": 1}),
        "2025-03-12T14:20:05+01:00",
        None,
    );
    g.knowledge(
        "lesson",
        "tool_lesson",
        "Run pytest from the project root, not from tests/, so the package imports resolve",
        json!({"operation": "run_shell_command pytest", "fix": "pytest -q"}),
        "2025-03-11T16:04:00-05:00",
        None,
    );
    g.knowledge(
        "lesson",
        "tool_lesson",
        "Use npm ci --legacy-peer-deps when peer dependency resolution fails",
        json!({"operation": "run_shell_command npm", "fix": "npm ci --legacy-peer-deps"}),
        "2025-03-09T12:00:00+01:00",
        None,
    );
    g.knowledge(
        "lesson",
        "tool_lesson",
        "Run make with -j1 when the generated headers race",
        json!({"operation": "run_shell_command make", "fix": "make -j1"}),
        "2025-03-01T12:00:00+01:00",
        Some(3),
    );
    g.knowledge(
        "fact",
        "conversation",
        "The billing API deploys from the main branch every Tuesday",
        json!({}),
        "2025-03-10T12:00:00+01:00",
        None,
    );
    g
}

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn wal(db: &Path) -> std::path::PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    s.into()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn lessons(out: &Path) -> Vec<Value> {
    read_json(&out.join("ledger.json"))["lessons"]
        .as_array()
        .unwrap()
        .clone()
}

fn diagnostics(out: &Path) -> Vec<Value> {
    read_json(&out.join("diagnostics.json"))["diagnostics"]
        .as_array()
        .unwrap()
        .clone()
}

fn by_key<'a>(lessons: &'a [Value], key: &str) -> Vec<&'a Value> {
    lessons
        .iter()
        .filter(|l| l["operation_key"] == json!(key))
        .collect()
}

fn project(identity: &str) -> String {
    skillc::digest::project(identity)
}

#[test]
fn gaia_store_compiles_in_place() {
    let dir = Scratch::new("interop-gaia");
    let db = dir.path("memory.db");
    let gaia = build_store(&db);
    // GAIA is still running: its connection stays open, the data sits in the WAL.
    assert!(
        std::fs::metadata(wal(&db)).unwrap().len() > 0,
        "the store is in WAL mode"
    );
    let before = (
        skillc::digest::sha256_hex(&bytes(&db)),
        skillc::digest::sha256_hex(&bytes(&wal(&db))),
    );

    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = (
        skillc::digest::sha256_hex(&bytes(&db)),
        skillc::digest::sha256_hex(&bytes(&wal(&db))),
    );
    assert_eq!(
        before, after,
        "the database and its -wal are byte-for-byte unchanged"
    );

    let lessons = lessons(&out);
    // pytest from tests/ → from the root, in two workspaces: one global python rule.
    let pytest = by_key(&lessons, "run_shell_command pytest");
    assert_eq!(pytest.len(), 1, "{pytest:#?}");
    let l = pytest[0];
    assert_eq!(l["kind"], "do");
    assert_eq!(l["domain"], "python");
    assert_eq!(l["scope"], "global");
    assert_eq!(l["rule"], true);
    assert_eq!(l["status"], "active");
    assert_eq!(l["evidence"], json!(["gaia:s-20250310-a1", "gaia:s-20250311-b1"]));
    let mut projects = vec![project(BILLING), project(LEDGER)];
    projects.sort();
    assert_eq!(l["projects"], json!(projects));
    assert_eq!(
        l["text"],
        "run_shell_command pytest: run `pytest -q` (without directory) instead of `pytest -q` (directory=tests)"
    );

    // cargo build → cargo build --locked: a rust lesson of the billing project.
    let cargo = by_key(&lessons, "run_shell_command cargo");
    assert_eq!(cargo.len(), 1, "{cargo:#?}");
    assert_eq!(cargo[0]["domain"], "rust");
    assert_eq!(cargo[0]["scope"], format!("project:{}", project(BILLING)));
    assert_eq!(cargo[0]["evidence"], json!(["gaia:s-20250312-a2"]));
    assert!(
        cargo[0]["text"]
            .as_str()
            .unwrap()
            .contains("`cargo build --locked`")
    );

    // docker compose up fails in two sessions, never fixed: a watch lesson keyed by it.
    let docker = by_key(&lessons, "run_shell_command docker");
    assert_eq!(docker.len(), 1, "{docker:#?}");
    let w = docker[0];
    assert_eq!(w["kind"], "watch");
    assert_eq!(w["domain"], "docker");
    assert_eq!(w["status"], "active");
    assert_eq!(w["rule"], true);
    assert_eq!(w["scope"], "global");
    assert_eq!(w["evidence"], json!(["gaia:s-20250312-a3", "gaia:s-20250313-b2"]));
    let text = w["text"].as_str().unwrap();
    assert!(text.starts_with("run_shell_command docker fails with"), "{text}");
    assert!(text.contains("port is already allocated"), "{text}");

    // The tool lesson no session shows stays a claim; the one sessions show is learned from
    // them (no second pytest lesson); the superseded one is history.
    let npm = by_key(&lessons, "run_shell_command npm");
    assert_eq!(npm.len(), 1, "{npm:#?}");
    assert_eq!(npm[0]["status"], "claimed");
    assert_eq!(npm[0]["kind"], "do");
    assert_eq!(npm[0]["domain"], "javascript");
    assert_eq!(npm[0]["rule"], false);
    assert_eq!(npm[0]["evidence"], json!([]));
    assert!(by_key(&lessons, "run_shell_command make").is_empty());

    // A refusal and a timeout teach nothing.
    assert!(by_key(&lessons, "run_shell_command git").is_empty());
    assert!(by_key(&lessons, "run_shell_command pip").is_empty());
    assert_eq!(lessons.len(), 4, "{lessons:#?}");
    // No prompt-facing file carries the claim.
    let python = std::fs::read_to_string(out.join("python/SKILL.md")).unwrap();
    assert!(python.contains("run_shell_command pytest"));
    assert!(
        std::fs::read_to_string(out.join("docker/SKILL.md"))
            .unwrap()
            .contains("port is already allocated")
    );
    assert!(!out.join("javascript/SKILL.md").exists());

    // The unrecoverable arguments are a note naming the session; the recoverable ones are not.
    let diags = diagnostics(&out);
    let l010: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L010").collect();
    assert_eq!(l010.len(), 1, "{l010:#?}");
    assert_eq!(l010[0]["severity"], "note");
    assert_eq!(l010[0]["subject"], "gaia:s-20250314-b4");
    assert_eq!(l010[0]["evidence"]["tool"], "write_file");
    assert!(diags.iter().all(|d| d["code"] != "L008" && d["code"] != "L011"));

    // The truncated pytest run is still a passing pytest check: that session passed verified.
    let trace = trace_json("gaia:s-20250314-b4", &db, &out);
    let record = &trace["record"];
    assert_eq!(record["verified"], true, "{trace:#}");
    assert_eq!(record["passed"], true);
    assert_eq!(record["domains"], json!(["general", "python"]));
    assert_eq!(record["project"], project(LEDGER));
    assert_eq!(record["recorded_at"], "2025-03-14T20:11:00Z", "offsets honoured");
    assert_eq!(
        record["line"], 16,
        "located at the session's first tool_history row"
    );

    // Compiling again gives the same files; the store is still untouched.
    let first = common::tree(&out);
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first, common::tree(&out));
    assert_eq!(skillc::digest::sha256_hex(&bytes(&db)), before.0);
    assert_eq!(skillc::digest::sha256_hex(&bytes(&wal(&db))), before.1);
    drop(gaia);
}

/// The docker error of `build_store`, failing in one session of each workspace, with the
/// error row GAIA wrote for it, and a pytest fix beside it.
fn docker_fails_twice(g: &Gaia) {
    g.session(
        "s-20250310-a1",
        BILLING,
        "fix the failing invoice tests",
        &[
            pytest_in_tests(MODULE_ERROR_BILLING, "2025-03-10T09:15:40+01:00"),
            pytest_at_root("2025-03-10T09:17:11+01:00"),
        ],
    );
    g.session(
        "s-20250312-a3",
        BILLING,
        "start the local stack",
        &[
            sh(
                "docker compose up -d",
                None,
                false,
                Some(PORT_ERROR),
                "2025-03-12T14:20:00+01:00",
            ),
            Call {
                tool: "read_file",
                args: json!({"file_path": "/home/dev/billing-api/docker-compose.yml"}).to_string(),
                result: r#"{"lines": 58}"#,
                success: true,
                error: None,
                at: "2025-03-12T14:21:00+01:00",
            },
        ],
    );
    g.session(
        "s-20250313-b2",
        LEDGER,
        "bring up postgres for the ledger service",
        &[sh(
            "docker compose up -d",
            None,
            false,
            Some(PORT_ERROR),
            "2025-03-13T08:45:00-05:00",
        )],
    );
    g.knowledge(
        "error",
        "tool_history",
        PORT_ERROR,
        json!({"operation": "run_shell_command docker", "exit_code": 1}),
        "2025-03-12T14:20:05+01:00",
        None,
    );
}

fn lesson_by_id<'a>(lessons: &'a [Value], id: &str) -> &'a Value {
    lessons
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no lesson {id} in the ledger: {lessons:#?}"))
}

/// Every prompt-facing file of an output directory: SKILL.md files and plan-time blocks.
fn prompt_facing(out: &Path) -> Vec<(String, String)> {
    (common::tree(out).into_iter())
        .filter(|(p, _)| p.ends_with("SKILL.md") || p.starts_with("lessons/"))
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

#[test]
fn gaia_a_recurring_error_fixed_later_supersedes_its_watch_lesson() {
    let dir = Scratch::new("interop-gaia-fixed");
    let db = dir.path("memory.db");
    let gaia = Gaia::create(&db, 3);
    docker_fails_twice(&gaia);
    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Unfixed in two workspaces: a global watch rule, in the docker skill and the block.
    let before = lessons(&out);
    let docker = by_key(&before, "run_shell_command docker");
    assert_eq!(docker.len(), 1, "{docker:#?}");
    let watch = docker[0]["id"].as_str().unwrap().to_string();
    assert_eq!(docker[0]["kind"], "watch");
    assert_eq!(docker[0]["status"], "active");
    assert_eq!(docker[0]["rule"], true);
    assert_eq!(docker[0]["scope"], "global");
    assert_eq!(
        docker[0]["evidence"],
        json!(["gaia:s-20250312-a3", "gaia:s-20250313-b2"])
    );
    let skill = std::fs::read_to_string(out.join("docker/SKILL.md")).unwrap();
    assert!(skill.contains(&watch), "{skill}");
    let block = std::fs::read_to_string(out.join("lessons/global.md")).unwrap();
    assert!(
        block.contains("Watch out: run_shell_command docker fails with"),
        "{block}"
    );
    assert!(block.contains(&watch), "{block}");
    // The user pins it.
    let o = skillc(&["lessons", "pin", &watch, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // GAIA is still running: a billing session hits the error once more, then starts the
    // database on a free port.
    gaia.session(
        "s-20250317-a5",
        BILLING,
        "start the local stack on a free port",
        &[
            sh(
                "docker compose up -d",
                None,
                false,
                Some(PORT_ERROR),
                "2025-03-17T10:00:00+01:00",
            ),
            sh(
                "docker ps --filter publish=5432",
                None,
                true,
                None,
                "2025-03-17T10:01:00+01:00",
            ),
            sh(
                "POSTGRES_PORT=5433 docker compose up -d",
                None,
                true,
                None,
                "2025-03-17T10:02:00+01:00",
            ),
        ],
    );
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // The watch lesson is still in the ledger, superseded by the form the fixing session
    // learned on the same key, with its history.
    let after = lessons(&out);
    let fixes: Vec<&Value> = by_key(&after, "run_shell_command docker")
        .into_iter()
        .filter(|l| l["kind"] == "do")
        .collect();
    assert_eq!(fixes.len(), 1, "{after:#?}");
    let fix = fixes[0]["id"].as_str().unwrap().to_string();
    assert_eq!(fixes[0]["domain"], "docker");
    assert_eq!(fixes[0]["status"], "active");
    assert_eq!(fixes[0]["evidence"], json!(["gaia:s-20250317-a5"]));
    assert!(
        (fixes[0]["text"].as_str().unwrap()).contains("`POSTGRES_PORT=5433 docker compose up -d`"),
        "{:#}",
        fixes[0]
    );
    assert_eq!(fixes[0]["supersedes"], json!(watch));
    let w = lesson_by_id(&after, &watch);
    assert_eq!(w["status"], "superseded");
    assert_eq!(w["rule"], false);
    assert_eq!(w["pinned"], true, "the pin is kept, not orphaned");
    assert_eq!(w["superseded_by"], json!(fix));
    assert_eq!(
        w["reason"],
        "the error it warns about was fixed in a later session"
    );
    assert_eq!(
        w["text"], docker[0]["text"],
        "the wording it had while it was true"
    );
    let history = w["history"].as_array().unwrap();
    let last = history.last().unwrap();
    assert_eq!(last["event"], "superseded");
    assert_eq!(
        last["at"], "2025-03-17T09:02:00Z",
        "when the fixing session ended"
    );
    assert_eq!(last["experiences"], json!(["gaia:s-20250317-a5"]));
    assert!(
        (last["detail"].as_str().unwrap()).ends_with(&format!("superseded by {fix}")),
        "{last:#}"
    );
    assert_eq!(history[0]["event"], "admitted");

    // A note says so; the pin names a lesson that exists.
    let diags = diagnostics(&out);
    let s001: Vec<&Value> = diags
        .iter()
        .filter(|d| d["code"] == "S001" && d["subject"] == json!(watch))
        .collect();
    assert_eq!(s001.len(), 1, "{diags:#?}");
    assert_eq!(s001[0]["evidence"]["superseded_by"], json!(fix));
    assert!(
        diags.iter().all(|d| d["code"] != "S007" && d["code"] != "S008"),
        "{diags:#?}"
    );

    // History walks from either end.
    for asked in [&watch, &fix] {
        let o = skillc(&[
            "lessons",
            "history",
            asked,
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let chain: Vec<String> = (common::json(&o)["chain"].as_array().unwrap().iter())
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(chain, [watch.clone(), fix.clone()]);
    }

    // It left every prompt-facing file.
    let files = prompt_facing(&out);
    assert!(!files.is_empty());
    for (path, text) in &files {
        assert!(!text.contains(&watch), "{path}: {text}");
        assert!(!text.contains("has not been fixed yet"), "{path}: {text}");
    }

    // The same files at one thread and at four (fresh output directories, so no pin).
    let trees: Vec<_> = ["1", "4"]
        .iter()
        .map(|n| {
            let o = dir.path(&format!("threads-{n}"));
            let r = compile_to(&db, &o, &["--threads", n]);
            assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
            common::tree(&o)
        })
        .collect();
    assert_eq!(trees[0], trees[1]);
    drop(gaia);
}

#[test]
fn gaia_an_error_back_after_its_fix_is_a_new_watch_lesson_after_the_old() {
    let dir = Scratch::new("interop-gaia-back");
    let db = dir.path("memory.db");
    let gaia = Gaia::create(&db, 3);
    docker_fails_twice(&gaia);
    // The ledger workspace's database comes up once the other container is gone: no form
    // was learned, so nothing replaced the watch lesson.
    gaia.session(
        "s-20250314-b3",
        LEDGER,
        "bring up postgres again",
        &[
            sh(
                "docker stop billing-db",
                None,
                true,
                None,
                "2025-03-14T08:00:00-05:00",
            ),
            sh(
                "docker compose up -d",
                None,
                true,
                None,
                "2025-03-14T08:01:00-05:00",
            ),
        ],
    );
    // Then the port is taken again, in both workspaces, and stays so.
    gaia.session(
        "s-20250318-a6",
        BILLING,
        "start the local stack",
        &[sh(
            "docker compose up -d",
            None,
            false,
            Some(PORT_ERROR),
            "2025-03-18T09:30:00+01:00",
        )],
    );
    gaia.session(
        "s-20250319-b4",
        LEDGER,
        "run the ledger integration tests",
        &[sh(
            "docker compose up -d",
            None,
            false,
            Some(PORT_ERROR),
            "2025-03-19T11:00:00-05:00",
        )],
    );
    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let lessons = lessons(&out);
    let docker = by_key(&lessons, "run_shell_command docker");
    assert_eq!(docker.len(), 2, "{docker:#?}");
    assert!(docker.iter().all(|l| l["kind"] == "watch"));
    let (old, new): (Vec<&Value>, Vec<&Value>) = docker.iter().partition(|l| l["status"] == "superseded");
    assert_eq!((old.len(), new.len()), (1, 1), "{docker:#?}");
    let (old, new) = (old[0], new[0]);
    let (old_id, new_id) = (old["id"].as_str().unwrap(), new["id"].as_str().unwrap());
    // The first run of failures: superseded when the ledger session got the stack up, with
    // no successor (that session learned no form) and a reason.
    assert_eq!(old["founder"], "gaia:knowledge:1");
    assert_eq!(
        old["evidence"],
        json!(["gaia:s-20250312-a3", "gaia:s-20250313-b2"])
    );
    assert_eq!(old["superseded_by"], Value::Null);
    assert_eq!(
        old["reason"],
        "the error it warns about was fixed in a later session"
    );
    let last = old["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "superseded");
    assert_eq!(last["at"], "2025-03-14T13:01:00Z");
    assert_eq!(last["experiences"], json!(["gaia:s-20250314-b3"]));
    // The second: a lesson of its own, active and a rule, linked to the first.
    assert_eq!(new["founder"], "gaia:knowledge:1#2");
    assert_eq!(new["status"], "active");
    assert_eq!(new["rule"], true);
    assert_eq!(
        new["evidence"],
        json!(["gaia:s-20250318-a6", "gaia:s-20250319-b4"])
    );
    assert_eq!(new["supersedes"], json!(old_id));
    assert_eq!(new["text"], old["text"]);
    let o = skillc(&[
        "lessons",
        "history",
        old_id,
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let chain: Vec<String> = (common::json(&o)["chain"].as_array().unwrap().iter())
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(chain, [old_id, new_id]);
    let skill = std::fs::read_to_string(out.join("docker/SKILL.md")).unwrap();
    assert!(
        skill.contains(new_id) && !skill.contains(&format!("{old_id} ")),
        "{skill}"
    );
    for (path, text) in prompt_facing(&out) {
        if !path.ends_with("EVIDENCE.md") {
            assert!(!text.contains(old_id), "{path}: {text}");
        }
    }
    drop(gaia);
}

#[test]
fn gaia_a_watch_lesson_compiled_mid_session_is_superseded_when_that_session_fixes_it() {
    let dir = Scratch::new("interop-gaia-mid-session");
    let db = dir.path("memory.db");
    let gaia = Gaia::create(&db, 4);
    let migrate = "FAILED: No config file 'alembic.ini' found, or file has no '[alembic]' section";
    gaia.session(
        "s-20250320-a7",
        BILLING,
        "apply the invoice migrations",
        &[sh(
            "alembic upgrade head",
            Some("db"),
            false,
            Some(migrate),
            "2025-03-20T10:00:00+01:00",
        )],
    );
    gaia.knowledge(
        "error",
        "tool_history",
        migrate,
        json!({"operation": "run_shell_command alembic", "exit_code": 1}),
        "2025-03-20T10:00:02+01:00",
        None,
    );
    // The ledger session fails the same way, and the store is compiled while it runs.
    gaia.session(
        "s-20250321-b5",
        LEDGER,
        "apply the ledger migrations",
        &[sh(
            "alembic upgrade head",
            Some("db"),
            false,
            Some(migrate),
            "2025-03-21T09:00:00-05:00",
        )],
    );
    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = lessons(&out);
    let alembic = by_key(&before, "run_shell_command alembic");
    assert_eq!(alembic.len(), 1, "{before:#?}");
    assert_eq!(
        (&alembic[0]["kind"], &alembic[0]["rule"]),
        (&json!("watch"), &json!(true))
    );
    let watch = alembic[0]["id"].as_str().unwrap().to_string();

    // The session goes on: run from the project root, where alembic.ini is, it works.
    gaia.session(
        "s-20250321-b5",
        LEDGER,
        "apply the ledger migrations",
        &[sh(
            "alembic upgrade head",
            None,
            true,
            None,
            "2025-03-21T09:05:00-05:00",
        )],
    );
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = lessons(&out);
    let w = lesson_by_id(&after, &watch);
    assert_eq!(w["status"], "superseded", "{w:#}");
    assert_eq!(
        w["reason"],
        "the error it warns about was fixed in a later session"
    );
    let fix = w["superseded_by"].as_str().expect("a successor").to_string();
    let f = lesson_by_id(&after, &fix);
    assert_eq!(f["kind"], "do");
    assert_eq!(f["operation_key"], "run_shell_command alembic");
    assert_eq!(f["evidence"], json!(["gaia:s-20250321-b5"]));
    assert_eq!(f["supersedes"], json!(watch));
    for (path, text) in prompt_facing(&out) {
        assert!(!text.contains(&watch), "{path}: {text}");
    }
    drop(gaia);
}

/// A tool lesson GAIA recorded before any session showed it is a claimed lesson; when a later
/// session demonstrates it, the lesson learned from that session takes over. The claim stays
/// in the ledger, superseded by that lesson (DESIGN §1: nothing is deleted), instead of
/// leaving it as a lesson lost with no successor.
#[test]
fn gaia_a_tool_lesson_a_later_session_demonstrates_is_superseded_not_lost() {
    let dir = Scratch::new("interop-gaia-tool-lesson-shown");
    let db = dir.path("memory.db");
    let gaia = Gaia::create(&db, 4);
    let lock = "Error: Error acquiring the state lock";
    gaia.session(
        "s-20251103-o1",
        BILLING,
        "plan the vpc change",
        &[sh(
            "terraform plan -out=tfplan",
            Some("envs/prod"),
            false,
            Some(lock),
            "2025-11-03T09:02:00+09:00",
        )],
    );
    let text = "Use terraform plan -lock-timeout=10m when CI may hold the lock";
    gaia.knowledge(
        "tool_lesson",
        "tool_lesson",
        text,
        json!({"operation": "run_shell_command terraform", "fix": "terraform plan -lock-timeout=10m -out=tfplan"}),
        "2025-11-04T11:30:00+09:00",
        None,
    );
    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = lessons(&out);
    let claimed: Vec<&Value> = before.iter().filter(|l| l["text"] == text).collect();
    assert_eq!(claimed.len(), 1, "{before:#?}");
    assert_eq!(claimed[0]["status"], "claimed");
    let claim = claimed[0]["id"].as_str().unwrap().to_string();

    // A week later a session shows the fix.
    gaia.session(
        "s-20251110-o2",
        BILLING,
        "plan the vpc change again",
        &[
            sh(
                "terraform plan -out=tfplan",
                Some("envs/prod"),
                false,
                Some(lock),
                "2025-11-10T10:00:00+09:00",
            ),
            sh(
                "terraform plan -lock-timeout=10m -out=tfplan",
                Some("envs/prod"),
                true,
                None,
                "2025-11-10T10:03:00+09:00",
            ),
        ],
    );
    let o = compile_to(&db, &out, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(common::json(&o)["gone_lessons"], json!([]), "{}", stdout(&o));
    let after = lessons(&out);
    let c = lesson_by_id(&after, &claim);
    assert_eq!(c["status"], "superseded", "{c:#}");
    assert_eq!(c["reason"], "a later session demonstrated it");
    let fix = c["superseded_by"].as_str().expect("a successor").to_string();
    let f = lesson_by_id(&after, &fix);
    assert_eq!(f["operation_key"], "run_shell_command terraform");
    assert_eq!(f["evidence"], json!(["gaia:s-20251110-o2"]));
    assert_eq!(f["status"], "active");

    // A tool lesson GAIA wrote after the session that shows it was never a claim on its own.
    let fresh = dir.path("fresh");
    gaia.knowledge(
        "tool_lesson",
        "tool_lesson",
        "Always pass -lock-timeout to terraform plan",
        json!({"operation": "run_shell_command terraform", "fix": "terraform plan -lock-timeout=10m -out=tfplan"}),
        "2025-11-10T10:05:00+09:00",
        None,
    );
    let o = compile_to(&db, &fresh, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = lessons(&fresh);
    assert!(
        all.iter()
            .all(|l| l["text"] != "Always pass -lock-timeout to terraform plan"),
        "{all:#?}"
    );
    assert_eq!(lesson_by_id(&all, &claim)["superseded_by"], json!(fix));
    drop(gaia);
}

#[test]
fn gaia_wal_without_shm_and_unsupported_schema() {
    let dir = Scratch::new("interop-gaia-copy");
    let live = dir.path("live/memory.db");
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    let gaia = build_store(&live);
    // A snapshot of the database and its WAL, without the -shm GAIA's process holds.
    let snap = dir.path("snapshot/memory.db");
    std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
    std::fs::copy(&live, &snap).unwrap();
    std::fs::copy(wal(&live), wal(&snap)).unwrap();
    drop(gaia);
    let before = (bytes(&snap), bytes(&wal(&snap)));

    // A second store from a GAIA version skillc does not know.
    let future = dir.path("future/memory.db");
    std::fs::create_dir_all(future.parent().unwrap()).unwrap();
    let g9 = Gaia::create(&future, 9);
    g9.session(
        "s-20260101-x",
        BILLING,
        "anything",
        &[pytest_at_root("2026-01-01T10:00:00+01:00")],
    );
    drop(g9);

    let out = dir.path("out");
    let o = skillc(&[
        "compile",
        snap.to_str().unwrap(),
        future.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "an unsupported schema is data, not a failure: {}",
        stderr(&o)
    );
    assert_eq!(bytes(&snap), before.0);
    assert_eq!(bytes(&wal(&snap)), before.1);
    assert_eq!(
        listing(snap.parent().unwrap()),
        ["memory.db", "memory.db-wal"],
        "no -shm is created beside the snapshot"
    );

    let diags = diagnostics(&out);
    let l008: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L008").collect();
    assert_eq!(l008.len(), 1, "{diags:#?}");
    assert_eq!(l008[0]["evidence"]["schema_version"], 9);
    assert!(l008[0]["message"].as_str().unwrap().contains("schema version 9"));
    assert_eq!(l008[0]["subject"], future.to_str().unwrap());
    // The snapshot compiled in full, the future store not at all.
    let lessons = lessons(&out);
    assert_eq!(by_key(&lessons, "run_shell_command pytest")[0]["rule"], true);
    assert!(
        lessons
            .iter()
            .all(|l| !l["evidence"].to_string().contains("s-20260101-x"))
    );

    // GAIA shut down cleanly (checkpointed, no -wal, no -shm): read in place, nothing created.
    assert_eq!(listing(live.parent().unwrap()), ["memory.db"]);
    let live_before = bytes(&live);
    let out3 = dir.path("out3");
    let o = compile_to(&live, &out3, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(listing(live.parent().unwrap()), ["memory.db"]);
    assert_eq!(bytes(&live), live_before);
    assert_eq!(
        read_json(&out3.join("ledger.json")),
        read_json(&out.join("ledger.json"))
    );

    // `--from gaia` on a SQLite file that is no GAIA store is an unsupported schema too.
    let other = dir.path("other.sqlite");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        .unwrap();
    let out2 = dir.path("out2");
    let o = compile_to(&other, &out2, &["--from", "gaia"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(diagnostics(&out2).iter().any(|d| d["code"] == "L008"));
    let o = compile_to(&other, &out2, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(diagnostics(&out2).iter().any(|d| d["code"] == "L011"));
}

/// A GAIA store (schema 3) with the given tables, in SQLite's default rollback-journal mode.
fn store_with(path: &Path, tables: &str) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(tables).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_version (version INTEGER NOT NULL, migrated_at TEXT NOT NULL);
         INSERT INTO schema_version VALUES (3, '2025-01-06T10:00:00+01:00');",
    )
    .unwrap();
    conn
}

/// `skillc compile STORES... --out OUT`, which must complete.
fn compile_stores(stores: &[&Path], out: &Path) {
    let mut args = vec!["compile"];
    args.extend(stores.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap()]);
    let o = skillc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A `tool_history` row; `place` names the columns that say where it is (`rowid, id`, `id`
/// or nothing), `values` gives them.
fn history_row(conn: &Connection, place: &[&str], values: &[SqlValue], session: &str, c: &Call) {
    let mut cols: Vec<&str> = place.to_vec();
    cols.extend([
        "session_id",
        "tool_name",
        "args",
        "result_summary",
        "success",
        "error",
        "timestamp",
    ]);
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
    let mut params: Vec<SqlValue> = values.to_vec();
    params.extend([
        SqlValue::Text(session.into()),
        SqlValue::Text(c.tool.into()),
        SqlValue::Text(c.args.clone()),
        SqlValue::Text(c.result.into()),
        SqlValue::Integer(c.success as i64),
        c.error.map_or(SqlValue::Null, |e| SqlValue::Text(e.into())),
        SqlValue::Text(c.at.into()),
    ]);
    conn.execute(
        &format!(
            "INSERT INTO tool_history ({}) VALUES ({})",
            cols.join(", "),
            marks.join(", ")
        ),
        rusqlite::params_from_iter(params),
    )
    .unwrap();
}

/// (code, file, line, table) of the load diagnostics about rows.
fn row_diagnostics(diags: &[Value]) -> Vec<(String, String, u64, String)> {
    diags
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with('L'))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["file"].as_str().unwrap_or("").to_string(),
                d["line"].as_u64().unwrap_or(0),
                d["evidence"]["table"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn gaia_rows_whose_id_is_not_an_integer_are_skipped_and_the_rest_loads() {
    let dir = Scratch::new("interop-gaia-bad-ids");
    let db = dir.path("memory.db");
    // `id` as a plain column (a store rebuilt by hand): it can hold anything.
    let conn = store_with(
        &db,
        "CREATE TABLE tool_history (id, session_id TEXT NOT NULL, tool_name TEXT NOT NULL, args TEXT,
             result_summary TEXT, success INTEGER NOT NULL DEFAULT 1, error TEXT, timestamp TEXT NOT NULL);
         CREATE TABLE knowledge (id, category TEXT NOT NULL, content TEXT NOT NULL, source TEXT,
             metadata TEXT, created_at TEXT NOT NULL, superseded_by INTEGER);",
    );
    let int = SqlValue::Integer;
    let rows: [(i64, SqlValue, &str, Call); 8] = [
        (
            1,
            int(101),
            "s-a",
            pytest_in_tests(MODULE_ERROR_BILLING, "2025-03-10T09:15:40+01:00"),
        ),
        (2, int(102), "s-a", pytest_at_root("2025-03-10T09:17:11+01:00")),
        (
            3,
            SqlValue::Text("row-3".into()),
            "s-b",
            pytest_in_tests(MODULE_ERROR_LEDGER, "2025-03-11T16:01:00-05:00"),
        ),
        (
            4,
            int(104),
            "s-b",
            pytest_in_tests(MODULE_ERROR_LEDGER, "2025-03-11T16:02:00-05:00"),
        ),
        (5, int(105), "s-b", pytest_at_root("2025-03-11T16:03:30-05:00")),
        (
            6,
            SqlValue::Real(6.5),
            "s-c",
            cargo_in_renderer("error: failed to select a version", "2025-03-12T10:00:00+01:00"),
        ),
        (
            7,
            SqlValue::Null,
            "s-c",
            cargo_locked_in_renderer("2025-03-12T10:02:30+01:00"),
        ),
        (
            8,
            int(108),
            "s-c",
            sh("ls -la", None, true, None, "2025-03-12T10:03:00+01:00"),
        ),
    ];
    for (rowid, id, session, call) in &rows {
        history_row(&conn, &["rowid", "id"], &[int(*rowid), id.clone()], session, call);
    }
    let knowledge = "INSERT INTO knowledge (rowid, id, category, content, source, metadata, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, '2025-03-09T12:00:00+01:00')";
    for (rowid, id, category, source, content, key) in [
        (
            1,
            SqlValue::Text("k-1".into()),
            "lesson",
            "tool_lesson",
            "Use npm ci --legacy-peer-deps when peer dependency resolution fails",
            "run_shell_command npm",
        ),
        (
            2,
            int(2),
            "lesson",
            "tool_lesson",
            "Run make with -j1 when the generated headers race",
            "run_shell_command make",
        ),
        // A row skillc does not read: its id is nobody's business.
        (
            3,
            SqlValue::Text("fact-3".into()),
            "fact",
            "conversation",
            "The billing API deploys on Tuesdays",
            "",
        ),
    ] {
        conn.execute(
            knowledge,
            params![
                rowid,
                id,
                category,
                content,
                source,
                json!({"operation": key}).to_string()
            ],
        )
        .unwrap();
    }
    drop(conn);

    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Every other row loaded: pytest from tests/ → from the root in s-a and s-b is a rule.
    let lessons = lessons(&out);
    let pytest = by_key(&lessons, "run_shell_command pytest");
    assert_eq!(pytest.len(), 1, "{lessons:#?}");
    assert_eq!(pytest[0]["rule"], true);
    assert_eq!(pytest[0]["evidence"], json!(["gaia:s-a", "gaia:s-b"]));
    // The cargo fix lost both its rows; the make tool lesson is claimed, the npm one skipped.
    assert!(by_key(&lessons, "run_shell_command cargo").is_empty());
    assert_eq!(by_key(&lessons, "run_shell_command make")[0]["status"], "claimed");
    assert!(by_key(&lessons, "run_shell_command npm").is_empty());

    // One diagnostic per bad row, located by its rowid in the store.
    let diags = diagnostics(&out);
    let file = db.to_str().unwrap().to_string();
    let mut got = row_diagnostics(&diags);
    got.sort();
    let want = |code: &str, line: u64, table: &str| (code.to_string(), file.clone(), line, table.to_string());
    assert_eq!(
        got,
        [
            want("L002", 7, "tool_history"),
            want("L003", 1, "knowledge"),
            want("L003", 3, "tool_history"),
            want("L003", 6, "tool_history"),
        ],
        "{diags:#?}"
    );
    let row3 = diags.iter().find(|d| d["line"] == 3).unwrap();
    assert_eq!(row3["evidence"]["field"], "id");
    assert_eq!(row3["evidence"]["found"], "\"row-3\"");
    assert_eq!(row3["evidence"]["rowid"], 3);
    assert_eq!(row3["evidence"]["experiences"], json!(["gaia:s-b"]));
    assert!(
        row3["message"]
            .as_str()
            .unwrap()
            .contains("tool_history row with rowid 3")
    );
    let row6 = diags.iter().find(|d| d["line"] == 6).unwrap();
    assert_eq!(row6["evidence"]["found"], "6.5");
}

#[test]
fn gaia_outcomes_columns_named_with_quotes_are_read() {
    let dir = Scratch::new("interop-gaia-quotes");
    let history = "CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                   tool_name TEXT NOT NULL, args TEXT, result_summary TEXT, success INTEGER NOT NULL DEFAULT 1,
                   error TEXT, timestamp TEXT NOT NULL);";
    let lesson = "Pin the Postgres image tag in docker-compose.yml so local and CI run the same server";
    // Native records by column, beside columns whose names hold double quotes.
    let by_columns = dir.path("a/memory.db");
    std::fs::create_dir_all(by_columns.parent().unwrap()).unwrap();
    let conn = store_with(
        &by_columns,
        &format!(
            r#"{history}
            CREATE TABLE outcomes (id TEXT, recorded_at TEXT, domains TEXT, outcome TEXT, lesson TEXT,
                "we""ird" TEXT, """quoted""" TEXT);"#
        ),
    );
    conn.execute(
        r#"INSERT INTO outcomes (id, recorded_at, domains, outcome, lesson, "we""ird", """quoted""")
           VALUES ('o-1', '2025-04-01T10:00:00Z', 'docker', 'succeeded', ?1, 'x', 'y')"#,
        params![lesson],
    )
    .unwrap();
    drop(conn);
    // One JSON record per row, in a column named with a quote.
    let by_json = dir.path("b/memory.db");
    std::fs::create_dir_all(by_json.parent().unwrap()).unwrap();
    let conn = store_with(
        &by_json,
        &format!(r#"{history} CREATE TABLE outcomes ("rec""ord" TEXT);"#),
    );
    let record = json!({"id": "o-2", "recorded_at": "2025-04-03T10:00:00Z", "domains": ["docker"],
                        "outcome": "succeeded", "lesson": lesson});
    conn.execute(
        r#"INSERT INTO outcomes ("rec""ord") VALUES (?1)"#,
        params![record.to_string()],
    )
    .unwrap();
    drop(conn);

    let out = dir.path("out");
    compile_stores(&[&by_columns, &by_json], &out);
    let diags = diagnostics(&out);
    assert!(row_diagnostics(&diags).is_empty(), "{diags:#?}");
    // A record from each store: together they make a rule.
    let lessons = lessons(&out);
    assert_eq!(lessons.len(), 1, "{lessons:#?}");
    assert_eq!(lessons[0]["text"], lesson);
    assert_eq!(lessons[0]["evidence"], json!(["o-1", "o-2"]));
    assert_eq!(lessons[0]["rule"], true);
}

#[test]
fn gaia_calls_without_a_session_are_one_diagnostic_about_the_store() {
    let dir = Scratch::new("interop-gaia-orphans");
    let store = dir.path("memory.db");
    let conn = store_with(
        &store,
        "CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
             tool_name TEXT NOT NULL, args TEXT, result_summary TEXT, success INTEGER NOT NULL DEFAULT 1,
             error TEXT, timestamp TEXT NOT NULL);",
    );
    history_row(
        &conn,
        &[],
        &[],
        "s-a",
        &pytest_at_root("2025-03-10T09:17:11+01:00"),
    );
    for at in ["2025-03-10T09:18:00+01:00", "2025-03-10T09:19:00+01:00"] {
        conn.execute(
            "INSERT INTO tool_history (session_id, tool_name, args, success, timestamp)
             VALUES (NULL, 'run_shell_command', '{\"command\": \"git status\"}', 1, ?1)",
            params![at],
        )
        .unwrap();
    }
    drop(conn);
    let out = dir.path("out");
    compile_stores(&[&store], &out);
    let diags = diagnostics(&out);
    let l002: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L002").collect();
    assert_eq!(l002.len(), 1, "{diags:#?}");
    assert_eq!(l002[0]["evidence"]["rows"], "2, 3", "{:#}", l002[0]);
    let help = l002[0]["help"].as_str().unwrap();
    assert!(
        help.contains("tool_history.session_id") && !help.contains("recorded_at"),
        "{help}"
    );
}

#[test]
fn gaia_without_rowid_tables_are_read_in_key_order() {
    let dir = Scratch::new("interop-gaia-without-rowid");
    // No `id` column: sessions in primary-key order, rows numbered by their place in it.
    let keyed = dir.path("a/memory.db");
    std::fs::create_dir_all(keyed.parent().unwrap()).unwrap();
    let conn = store_with(
        &keyed,
        "CREATE TABLE tool_history (session_id TEXT NOT NULL, tool_name TEXT NOT NULL, args TEXT,
             result_summary TEXT, success INTEGER NOT NULL DEFAULT 1, error TEXT, timestamp TEXT NOT NULL,
             PRIMARY KEY (session_id, timestamp)) WITHOUT ROWID;
         CREATE TABLE outcomes (id TEXT PRIMARY KEY, recorded_at TEXT NOT NULL, domains TEXT, outcome TEXT,
             lesson TEXT) WITHOUT ROWID;",
    );
    for (session, call) in [
        ("s-b", pytest_at_root("2025-03-11T16:03:30-05:00")),
        (
            "s-b",
            pytest_in_tests(MODULE_ERROR_LEDGER, "2025-03-11T16:02:00-05:00"),
        ),
        (
            "s-a",
            pytest_in_tests(MODULE_ERROR_BILLING, "2025-03-10T09:15:40+01:00"),
        ),
        ("s-a", pytest_at_root("2025-03-10T09:17:11+01:00")),
    ] {
        history_row(&conn, &[], &[], session, &call);
    }
    conn.execute_batch(
        "INSERT INTO outcomes VALUES ('o-2', '2025-04-02T10:00:00Z', 'docker', 'success', 'Pin image tags');
         INSERT INTO outcomes VALUES ('o-1', '2025-04-01T10:00:00Z', 'docker', 'succeeded',
             'Pin the Postgres image tag in docker-compose.yml so local and CI run the same server');",
    )
    .unwrap();
    drop(conn);
    // An `id` primary key that holds a string in one row; JSON records keyed by name.
    let by_id = dir.path("b/memory.db");
    std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
    let conn = store_with(
        &by_id,
        "CREATE TABLE tool_history (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, tool_name TEXT NOT NULL,
             args TEXT, result_summary TEXT, success INTEGER NOT NULL DEFAULT 1, error TEXT,
             timestamp TEXT NOT NULL) WITHOUT ROWID;
         CREATE TABLE outcomes (name TEXT PRIMARY KEY, body TEXT) WITHOUT ROWID;",
    );
    let int = SqlValue::Integer;
    for (id, call) in [
        (
            int(1),
            cargo_in_renderer("error: failed to select a version", "2025-03-12T10:00:00+01:00"),
        ),
        (int(2), cargo_locked_in_renderer("2025-03-12T10:02:30+01:00")),
        (
            SqlValue::Text("x-9".into()),
            sh("ls -la", None, true, None, "2025-03-12T10:03:00+01:00"),
        ),
    ] {
        history_row(&conn, &["id"], &[id], "s-c", &call);
    }
    conn.execute_batch("INSERT INTO outcomes VALUES ('notes', 'remember to rotate the staging keys');")
        .unwrap();
    drop(conn);

    let out = dir.path("out");
    compile_stores(&[&keyed, &by_id], &out);
    let lessons = lessons(&out);
    let pytest = by_key(&lessons, "run_shell_command pytest");
    assert_eq!(pytest.len(), 1, "{lessons:#?}");
    assert_eq!(pytest[0]["rule"], true);
    assert_eq!(pytest[0]["evidence"], json!(["gaia:s-a", "gaia:s-b"]));
    assert_eq!(
        pytest[0]["text"],
        "run_shell_command pytest: run `pytest -q` (without directory) instead of `pytest -q` (directory=tests)"
    );
    let cargo = by_key(&lessons, "run_shell_command cargo");
    assert_eq!(cargo.len(), 1, "{lessons:#?}");
    assert_eq!(cargo[0]["evidence"], json!(["gaia:s-c"]));
    let docker: Vec<&Value> = lessons.iter().filter(|l| l["domain"] == "docker").collect();
    assert_eq!(docker.len(), 1, "{lessons:#?}");
    assert_eq!(docker[0]["evidence"], json!(["o-1"]));

    let diags = diagnostics(&out);
    let (a, b) = (keyed.to_str().unwrap(), by_id.to_str().unwrap());
    let mut got: Vec<(String, String, u64, String)> = diags
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with('L'))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["file"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = |code: &str, file: &str, line: u64, subject: &str| {
        (code.to_string(), file.to_string(), line, subject.to_string())
    };
    assert_eq!(
        got,
        [
            want("L001", b, 1, b),
            want("L003", a, 2, "o-2"),
            want("L003", b, 3, b),
        ],
        "{diags:#?}"
    );
    // Rows with no rowid are named by their key.
    let key = |code: &str| {
        diags
            .iter()
            .find(|d| d["code"] == code && d["file"] == b)
            .unwrap()["evidence"]["key"]
            .clone()
    };
    assert_eq!(key("L003"), "id='x-9'");
    assert_eq!(key("L001"), "name='notes'");

    // s-b's first row in key order is the table's third.
    assert_eq!(trace_json("gaia:s-b", &keyed, &out)["record"]["line"], 3);
}

#[test]
fn gaia_rollback_store_with_a_stray_wal_creates_no_file_beside_it() {
    let dir = Scratch::new("interop-gaia-stray-wal");
    let db = dir.path("store/memory.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let gaia = build_store(&db);
    // GAIA went back to a rollback journal and shut down: the header says so, nothing beside it.
    gaia.conn
        .pragma_update_and_check(None, "journal_mode", "delete", |r| r.get::<_, String>(0))
        .unwrap();
    drop(gaia);
    let store = db.parent().unwrap();
    assert_eq!(listing(store), ["memory.db"]);
    let reference = dir.path("reference");
    let o = compile_to(&db, &reference, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(listing(store), ["memory.db"]);

    // A -wal left beside it (a torn copy, a restore over an old directory).
    std::fs::write(wal(&db), b"junkjunk").unwrap();
    let digests = || {
        (
            skillc::digest::sha256_hex(&bytes(&db)),
            skillc::digest::sha256_hex(&bytes(&wal(&db))),
        )
    };
    let before = (listing(store), digests());
    assert_eq!(before.0, ["memory.db", "memory.db-wal"]);
    let out = dir.path("out");
    let o = compile_to(&db, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(listing(store), before.0, "no -shm is created beside the store");
    assert_eq!(digests(), before.1, "the database and the -wal are unchanged");
    assert_eq!(
        read_json(&out.join("ledger.json")),
        read_json(&reference.join("ledger.json")),
        "the store read in full"
    );
}

/// `--from native` reads native records only: a GAIA store named on the command line is
/// reported as a format it does not read, and one met in a directory is passed over.
#[test]
fn from_native_leaves_gaia_stores_out() {
    let dir = Scratch::new("interop-from-native");
    let records = dir.path("records");
    std::fs::create_dir_all(&records).unwrap();
    let db = records.join("memory.db");
    drop(build_store(&db));
    std::fs::copy(
        common::fixture("foundation/agents.jsonl"),
        records.join("agents.jsonl"),
    )
    .unwrap();

    let out = dir.path("out");
    let o = compile_to(&db, &out, &["--from", "native"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(lessons(&out).is_empty());
    let l011: Vec<Value> = diagnostics(&out)
        .into_iter()
        .filter(|d| d["code"] == "L011")
        .collect();
    assert_eq!(l011.len(), 1, "{l011:#?}");
    assert!(l011[0]["subject"].as_str().unwrap().ends_with("memory.db"));

    let o = compile_to(&records, &out, &["--from", "native"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lessons = lessons(&out);
    assert!(!lessons.is_empty());
    assert!(
        lessons.iter().all(|l| l["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| !e.as_str().unwrap().starts_with("gaia:"))),
        "no GAIA session is read"
    );
    assert!(diagnostics(&out).iter().all(|d| d["code"] != "L011"));
}

#[test]
fn omnimem_export_compiles_with_and_without_from() {
    let fixture = common::fixture("omnimem/export.json");
    let dir = Scratch::new("interop-omnimem");
    let mut ledgers = Vec::new();
    for (name, extra) in [("detected", None), ("forced", Some("omnimem"))] {
        let out = dir.path(name);
        let mut args = vec![
            "compile",
            fixture.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(from) = extra {
            args.extend(["--from", from]);
        }
        let o = skillc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let lessons = lessons(&out);
        let find = |kind: &str, domain: &str| -> Vec<&Value> {
            lessons
                .iter()
                .filter(|l| l["kind"] == kind && l["domain"] == domain)
                .collect()
        };
        // Two memories in two projects say the same pytest lesson: a global rule.
        let pytest = find("do", "python");
        assert_eq!(pytest.len(), 1, "{pytest:#?}");
        assert_eq!(pytest[0]["rule"], true);
        assert_eq!(pytest[0]["scope"], "global");
        assert_eq!(
            pytest[0]["evidence"],
            json!(["mem-20240501-pytest-imports", "mem-20240509-pytest-importlib"])
        );
        // Abandoned approaches from a JSON string and from a list cluster into one avoid rule.
        let avoid = find("avoid", "postgres");
        assert_eq!(avoid.len(), 1);
        assert_eq!(avoid[0]["rule"], true);
        assert_eq!(
            avoid[0]["text"],
            "Mocking the database layer in integration tests"
        );
        // Gotchas (one string each) become a watch rule.
        let watch = find("watch", "postgres");
        assert_eq!(watch.len(), 1);
        assert_eq!(watch[0]["rule"], true);
        // A blessed ("1") memory with only content: its content is the lesson, a rule by blessing.
        let docker = find("do", "docker");
        assert_eq!(docker.len(), 1, "{docker:#?}");
        assert_eq!(
            docker[0]["text"],
            "Pin base images by digest, not by tag, in production Dockerfiles"
        );
        assert_eq!(docker[0]["rule"], true);
        assert_eq!(docker[0]["evidence"], json!(["mem-20240514-pin-digests"]));
        // The archived memory is not compiled; the pivoted one is held back.
        let all = serde_json::to_string(&lessons).unwrap();
        assert!(!all.contains("mem-20240402-uv-lock"));
        assert!(!all.contains("buildx"));

        let diags = diagnostics(&out);
        let l009: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L009").collect();
        assert_eq!(l009.len(), 1, "{l009:#?}");
        assert_eq!(l009[0]["severity"], "note");
        assert_eq!(
            l009[0]["evidence"]["experiences"],
            json!(["mem-20240402-uv-lock"])
        );
        assert!(l009[0]["message"].as_str().unwrap().contains("archived"));
        let g001: Vec<&Value> = diags.iter().filter(|d| d["code"] == "G001").collect();
        assert_eq!(g001.len(), 1, "{g001:#?}");
        assert_eq!(g001[0]["evidence"]["experiences"], json!(["mem-20240512-buildx"]));
        // No record problems: string numbers, JSON-string lists and "1" are all accepted.
        assert!(
            diags
                .iter()
                .all(|d| !["L001", "L002", "L003", "L005", "L011"].contains(&d["code"].as_str().unwrap())),
            "{diags:#?}"
        );
        ledgers.push(read_json(&out.join("ledger.json")));
    }
    assert_eq!(
        ledgers[0], ledgers[1],
        "detection and --from omnimem read the same"
    );

    // The same export as JSON Lines reads the same.
    let jsonl: String = read_json(&fixture)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.to_string() + "\n")
        .collect();
    let path = dir.path("export.jsonl");
    std::fs::write(&path, jsonl).unwrap();
    let out = dir.path("jsonl");
    let o = compile_to(&path, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        read_json(&out.join("ledger.json")),
        ledgers[0],
        "the JSON Lines export compiles to the same ledger"
    );
}

/// Gemini CLI's `run_shell_command` carries a `description`: in a GAIA store too, a flaky
/// test re-run under another description is no fix, so the tool lesson GAIA drew from it is
/// one no session shows (an unevidenced claim), while a real fix is learned, worded without
/// its descriptions, and shows its tool lesson.
#[test]
fn gaia_description_arguments_make_no_fix() {
    let dir = Scratch::new("interop-gaia-labels");
    let db = dir.path("memory.db");
    let g = Gaia::create(&db, 3);
    let call = |command: &str, description: &str, error: Option<&'static str>, at: &'static str| Call {
        tool: "run_shell_command",
        args: json!({"command": command, "description": description}).to_string(),
        result: if error.is_none() {
            r#"{"exit_code": 0}"#
        } else {
            r#"{"exit_code": 1}"#
        },
        success: error.is_none(),
        error,
        at,
    };
    let flaky = "FAIL src/cart.test.ts > adds item\nAssertionError: expected 2 to be 3";
    let crash = "Error: Worker exited unexpectedly\nFAIL src/db.test.ts";
    for (session, at) in [
        (
            "s-1",
            [
                "2025-03-10T09:00:00+01:00",
                "2025-03-10T09:01:00+01:00",
                "2025-03-10T09:02:00+01:00",
                "2025-03-10T09:03:00+01:00",
            ],
        ),
        (
            "s-2",
            [
                "2025-03-11T09:00:00+01:00",
                "2025-03-11T09:01:00+01:00",
                "2025-03-11T09:02:00+01:00",
                "2025-03-11T09:03:00+01:00",
            ],
        ),
    ] {
        g.session(
            session,
            BILLING,
            "make the web tests pass",
            &[
                call("npm test -- --run", "Run the vitest suite", Some(flaky), at[0]),
                call("npm test -- --run", "Re-run to check for flakiness", None, at[1]),
                call("npx vitest run", "Run the unit tests", Some(crash), at[2]),
                call(
                    "npx vitest run --pool=forks",
                    "Run tests in forked workers",
                    None,
                    at[3],
                ),
            ],
        );
    }
    g.knowledge(
        "lesson",
        "tool_lesson",
        "Re-run npm test -- --run when the cart test fails",
        json!({"operation": "run_shell_command npm", "fix": "npm test -- --run"}),
        "2025-03-11T10:00:00+01:00",
        None,
    );
    g.knowledge(
        "lesson",
        "tool_lesson",
        "Run vitest with --pool=forks when workers crash",
        json!({"operation": "run_shell_command npx", "fix": "npx vitest run --pool=forks"}),
        "2025-03-11T10:00:00+01:00",
        None,
    );
    drop(g);
    let out = dir.path("out");
    compile_stores(&[&db], &out);
    let lessons = lessons(&out);
    assert!(
        !lessons.iter().any(|l| l.to_string().contains("description")),
        "{lessons:#?}"
    );
    let npm = by_key(&lessons, "run_shell_command npm");
    assert_eq!(npm.len(), 1, "{npm:#?}");
    assert_eq!(
        npm[0]["text"],
        "Re-run npm test -- --run when the cart test fails"
    );
    assert_eq!(npm[0]["status"], "claimed");
    let npx = by_key(&lessons, "run_shell_command npx");
    assert_eq!(npx.len(), 1, "{npx:#?}");
    assert_eq!(
        npx[0]["text"],
        "run_shell_command npx: run `npx vitest run --pool=forks` instead of `npx vitest run`"
    );
    assert_eq!(npx[0]["reinforcement"], 2);
}

#[test]
fn gaia_arguments_under_another_column_name_are_a_warning_not_silence() {
    let dir = Scratch::new("interop-gaia-arguments-column");
    // The same session twice: `pytest -q` fails in tests/ and works from the root. One store
    // names the arguments column `args`, as GAIA does; the other `arguments`.
    let store = |name: &str, column: &str| {
        let path = dir.path(&format!("{name}/memory.db"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let conn = store_with(
            &path,
            &format!(
                "CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                     tool_name TEXT NOT NULL, {column} TEXT, result_summary TEXT,
                     success INTEGER NOT NULL DEFAULT 1, error TEXT, duration_ms INTEGER,
                     timestamp TEXT NOT NULL);"
            ),
        );
        let calls = [
            pytest_in_tests(MODULE_ERROR_BILLING, "2025-03-10T09:15:02+01:00"),
            pytest_at_root("2025-03-10T09:17:11+01:00"),
        ];
        for c in &calls {
            conn.execute(
                &format!(
                    "INSERT INTO tool_history (session_id, tool_name, {column}, result_summary, success, error, duration_ms, timestamp)
                     VALUES ('s-billing', ?1, ?2, ?3, ?4, ?5, 1200, ?6)"
                ),
                params![c.tool, c.args, c.result, c.success, c.error, c.at],
            )
            .unwrap();
        }
        path
    };
    let named_args = store("gaia", "args");
    let renamed = store("renamed", "arguments");

    let out = dir.path("out-args");
    compile_stores(&[&named_args], &out);
    let diags = diagnostics(&out);
    // GAIA's own columns that skillc does not read (`duration_ms`) are not worth a warning.
    assert!(diags.iter().all(|d| d["code"] != "L005"), "{diags:#?}");
    let pytest = "run_shell_command pytest";
    assert_eq!(by_key(&lessons(&out), pytest).len(), 1, "the fix is learned");

    let out = dir.path("out-arguments");
    compile_stores(&[&renamed], &out);
    let diags = diagnostics(&out);
    let l005: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L005").collect();
    assert_eq!(l005.len(), 1, "only `arguments` is reported: {diags:#?}");
    let d = l005[0];
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["evidence"]["field"], "arguments");
    assert!(d["file"].as_str().unwrap().ends_with("memory.db"), "{d:#}");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("`args`") && message.contains("mechanical"),
        "{message}"
    );
    assert!(d["help"].as_str().unwrap().contains("TO args"), "{d:#}");
    assert!(by_key(&lessons(&out), pytest).is_empty(), "no arguments, no fix");
}

/// GAIA keeps 500 characters of a call's arguments, so what followed the cut is unknown: a
/// lesson names no argument the cut call lost, whether the cut fell in the command (the
/// `directory` after it is gone) or after a whole command (in a long `description`).
#[test]
fn gaia_a_lesson_names_no_argument_lost_in_the_cut() {
    let dir = Scratch::new("interop-gaia-cut-args");
    let db = dir.path("memory.db");
    let g = Gaia::create(&db, 3);
    const ORDERS: &str = "/home/dev/orders-api";
    let filter = vec!["not slow"; 70].join(" and ");
    let slow = format!("python -m pytest tests/unit --maxfail=1 -k '{filter}'");
    let in_command = cut500(&json!({"command": slow, "directory": ORDERS}).to_string());
    assert!(!in_command.contains("directory"), "the cut falls in the command");
    g.session(
        "s-orders",
        ORDERS,
        "run the unit tests",
        &[
            Call {
                tool: "run_shell_command",
                args: in_command,
                result: r#"{"exit_code": 4}"#,
                success: false,
                error: Some("ModuleNotFoundError: No module named 'orders'"),
                at: "2025-03-20T09:00:00+01:00",
            },
            sh(
                "python -m pytest tests/unit --maxfail=1",
                Some(ORDERS),
                true,
                None,
                "2025-03-20T09:02:00+01:00",
            ),
        ],
    );
    let why = "Run the ledger crate's tests to check that the refactored posting rules still \
               balance every journal entry, including the multi-currency fixtures. "
        .repeat(4);
    let after_command = cut500(
        &json!({"command": "cargo test", "description": why, "directory": "crates/ledger"}).to_string(),
    );
    assert!(after_command.contains(r#""command":"cargo test""#) && !after_command.contains("crates/ledger"));
    g.session(
        "s-ledger",
        LEDGER,
        "test the posting rules",
        &[
            Call {
                tool: "run_shell_command",
                args: after_command,
                result: r#"{"exit_code": 101}"#,
                success: false,
                error: Some(
                    "error: could not find `Cargo.toml` in `/home/dev/ledger-service` or any parent directory",
                ),
                at: "2025-03-21T10:00:00+01:00",
            },
            sh(
                "cargo test",
                Some("crates/ledger"),
                true,
                None,
                "2025-03-21T10:01:00+01:00",
            ),
        ],
    );
    drop(g);
    let out = dir.path("out");
    compile_stores(&[&db], &out);
    let lessons = lessons(&out);
    // The command changed: that is the lesson, and the directory the cut took is not in it.
    let pytest = by_key(&lessons, "run_shell_command pytest");
    assert_eq!(pytest.len(), 1, "{lessons:#?}");
    let text = pytest[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "run_shell_command pytest: run `python -m pytest tests/unit --maxfail=1` instead of \
             `python -m pytest tests/unit --maxfail=1 -k 'not slow and"
        ),
        "{text}"
    );
    assert!(!text.contains("directory"), "{text}");
    // Only the directory the cut took could differ: nothing is known to have changed.
    assert!(
        by_key(&lessons, "run_shell_command cargo").is_empty(),
        "{lessons:#?}"
    );
}

/// GAIA's own `tool_history` (nullable columns, as in its schema), for rows with odd values.
const NULLABLE_HISTORY: &str =
    "CREATE TABLE tool_history (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
    tool_name TEXT, args TEXT, result_summary TEXT, success INTEGER DEFAULT 1, error TEXT,
    duration_ms INTEGER, timestamp TEXT);";

/// A `tool_history` row of `NULLABLE_HISTORY`, every value given as is.
fn raw_row(conn: &Connection, session: &str, tool: SqlValue, command: &str, success: SqlValue, at: &str) {
    conn.execute(
        "INSERT INTO tool_history (session_id, tool_name, args, result_summary, success, error, duration_ms, timestamp)
         VALUES (?1, ?2, ?3, NULL, ?4, NULL, 900, ?5)",
        params![session, tool, json!({"command": command}).to_string(), success, at],
    )
    .unwrap();
}

/// `success` as words: failure words fail the check, success words pass it; NULL and a value
/// that says neither leave the call unjudged, so it verifies nothing (the latter a warning).
#[test]
fn gaia_success_words_are_read_and_unreadable_ones_verify_no_check() {
    let dir = Scratch::new("interop-gaia-success-words");
    let db = dir.path("memory.db");
    let conn = store_with(&db, NULLABLE_HISTORY);
    let text = |s: &str| SqlValue::Text(s.into());
    let cases = [
        ("failed", text("failed")),
        ("fail-upper", text("FAIL")),
        ("false", text("false")),
        ("no", text("No")),
        ("zero", text("0")),
        ("success", text("success")),
        ("ok", text("OK")),
        ("yes", text("yes")),
        ("one", SqlValue::Integer(1)),
        ("null", SqlValue::Null),
        ("maybe", text("maybe")),
    ];
    for (i, (session, success)) in cases.iter().enumerate() {
        let at = |m: usize| format!("2025-04-{:02}T09:{m:02}:00Z", i + 1);
        let shell = text("run_shell_command");
        raw_row(&conn, session, shell, "pytest -q", success.clone(), &at(0));
        raw_row(
            &conn,
            session,
            text("run_shell_command"),
            "git status",
            SqlValue::Integer(1),
            &at(1),
        );
    }
    drop(conn);
    let out = dir.path("out");
    compile_stores(&[&db], &out);
    for (session, _) in &cases {
        let trace = trace_json(&format!("gaia:{session}"), &db, &out);
        let r = &trace["record"];
        let (passed, verified) = match *session {
            "failed" | "fail-upper" | "false" | "no" | "zero" => (false, true),
            "success" | "ok" | "yes" | "one" => (true, true),
            _ => (true, false),
        };
        assert_eq!(
            (r["passed"] == passed, r["verified"] == verified),
            (true, true),
            "{session}: {r:#}"
        );
    }
    let diags = diagnostics(&out);
    let unread: Vec<&Value> = diags
        .iter()
        .filter(|d| d["evidence"]["field"] == "success")
        .collect();
    assert_eq!(unread.len(), 1, "only `maybe` is unreadable: {unread:#?}");
    let d = unread[0];
    assert_eq!(
        (d["code"].as_str(), d["severity"].as_str(), d["line"].as_u64()),
        (Some("L003"), Some("warning"), Some(21)),
        "{d:#}"
    );
    assert_eq!(d["evidence"]["rows"], "21");
    assert_eq!(d["evidence"]["found"], r#""maybe""#);
    assert_eq!(d["subject"], "gaia:maybe");
}

/// A row time that is no time and a call without a tool name are warnings naming the rows;
/// the session is dated by its other rows and the call is `unknown`.
#[test]
fn gaia_unreadable_times_and_missing_tool_names_are_warnings_naming_the_rows() {
    let dir = Scratch::new("interop-gaia-unread-rows");
    let db = dir.path("memory.db");
    let conn = store_with(&db, NULLABLE_HISTORY);
    let shell = || SqlValue::Text("run_shell_command".into());
    let ok = || SqlValue::Integer(1);
    raw_row(&conn, "s-time", shell(), "npm ci", ok(), "not a timestamp");
    raw_row(&conn, "s-time", shell(), "npm test", ok(), "2025-05-02T10:00:00Z");
    raw_row(
        &conn,
        "s-tool",
        SqlValue::Null,
        "docker compose build",
        ok(),
        "2025-05-03T10:00:00Z",
    );
    raw_row(
        &conn,
        "s-tool",
        SqlValue::Text("  ".into()),
        "docker compose up -d",
        ok(),
        "2025-05-03T10:01:00Z",
    );
    raw_row(
        &conn,
        "s-tool",
        shell(),
        "docker compose ps",
        ok(),
        "2025-05-03T10:02:00Z",
    );
    drop(conn);
    let out = dir.path("out");
    compile_stores(&[&db], &out);
    let diags = diagnostics(&out);
    let about =
        |field: &str| -> Vec<&Value> { diags.iter().filter(|d| d["evidence"]["field"] == field).collect() };
    let time = about("timestamp");
    assert_eq!(time.len(), 1, "{diags:#?}");
    let d = time[0];
    assert_eq!(
        (d["code"].as_str(), d["severity"].as_str()),
        (Some("L003"), Some("warning"))
    );
    assert_eq!(
        (d["line"].as_u64(), d["evidence"]["rows"].as_str()),
        (Some(1), Some("1"))
    );
    assert_eq!(d["evidence"]["found"], r#""not a timestamp""#);
    assert!(d["message"].as_str().unwrap().contains("session s-time"), "{d:#}");
    let tool = about("tool_name");
    assert_eq!(tool.len(), 1, "one warning for the session's rows: {diags:#?}");
    let d = tool[0];
    assert_eq!(
        (d["code"].as_str(), d["severity"].as_str()),
        (Some("L002"), Some("warning"))
    );
    assert_eq!(
        (d["line"].as_u64(), d["evidence"]["rows"].as_str()),
        (Some(3), Some("3, 4"))
    );
    assert!(d["message"].as_str().unwrap().contains("`unknown`"), "{d:#}");

    let trace = trace_json("gaia:s-time", &db, &out);
    assert_eq!(trace["record"]["recorded_at"], "2025-05-02T10:00:00Z");
    let trace = trace_json("gaia:s-tool", &db, &out);
    assert_eq!(trace["record"]["operations"], 3, "{trace:#}");
}

/// An OmniMem export from a team that kept part of each memory under `metadata` (an object,
/// or one JSON-encoded in a string) and that recorded which skillc lessons the agent had in
/// front of it (`in_play`, as a JSON-encoded list or a comma string): the project there
/// scopes the lesson, and the citations confirm and contradict it as native records would.
/// A memory that names its replacement (`superseded_by`) stays history.
#[test]
fn omnimem_metadata_and_in_play_carry_over() {
    let fixture = common::fixture("omnimem-migration/export.jsonl");
    let dir = Scratch::new("interop-omnimem-migration");
    let out = dir.path("out");
    let o = compile_to(&fixture, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lessons = lessons(&out);
    let diags = diagnostics(&out);
    let find = |domain: &str| -> &Value {
        let found: Vec<&Value> = lessons.iter().filter(|l| l["domain"] == domain).collect();
        assert_eq!(found.len(), 1, "{domain}: {found:#?}");
        found[0]
    };
    // Both terraform memories name their project only in `metadata`: one project's rule,
    // confirmed by a later memory that had it in play.
    let terraform = find("terraform");
    assert_eq!(terraform["id"], "Lce2ac2f1946d");
    assert_eq!(
        terraform["scope"],
        json!(format!("project:{}", project("git@github.com:acme/infra.git")))
    );
    assert_eq!(terraform["rule"], true);
    assert_eq!(
        terraform["evidence"],
        json!(["om-2026-0303-tf", "om-2026-0304-tf", "om-2026-0306-tf"])
    );
    assert_eq!(terraform["confidence"], json!(0.65));
    // Two projects, one of them from `metadata`: global; a failed memory that had it in play
    // contradicts it.
    let python = find("python");
    assert_eq!(python["id"], "L0514dfa822bb");
    assert_eq!(python["scope"], "global");
    assert_eq!(python["confidence"], json!(0.25));
    let events: Vec<&Value> = python["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["event"])
        .collect();
    assert!(events.contains(&&json!("contradicted")), "{events:?}");
    let contradicted: Vec<&Value> = diags.iter().filter(|d| d["code"] == "S002").collect();
    assert_eq!(contradicted.len(), 1, "{contradicted:#?}");
    assert_eq!(
        contradicted[0]["evidence"]["experiences"],
        json!(["om-2026-0307-pytest"])
    );
    // A memory another one replaced (`superseded_by`, though its state still says active)
    // is not compiled: only its replacement's lesson is advice, and a note says why.
    let npm = find("npm");
    assert_eq!(npm["evidence"], json!(["om-2026-0308-npm"]));
    let l009: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L009").collect();
    assert_eq!(l009.len(), 1, "{l009:#?}");
    assert_eq!(l009[0]["evidence"]["experiences"], json!(["om-2026-0301-npm"]));
    assert_eq!(l009[0]["evidence"]["superseded_by"], "om-2026-0308-npm");
    assert!(
        l009[0]["message"]
            .as_str()
            .unwrap()
            .contains("is superseded by om-2026-0308-npm")
    );
    assert_eq!(l009[0]["domain"], "npm");
    // Every citation names a lesson that exists, and no memory was refused.
    assert!(
        diags
            .iter()
            .all(|d| d["severity"] != "error" && d["severity"] != "warning" || d["code"] == "S002"),
        "{diags:#?}"
    );
}

/// A bad value read from `metadata` is reported as written there, with file and line.
#[test]
fn omnimem_a_bad_metadata_field_is_named_where_it_is() {
    let dir = Scratch::new("interop-omnimem-metadata-bad");
    let input = dir.path("export.jsonl");
    let good = json!({"key": "om-1", "tags": "python", "outcome": "succeeded", "created_at": 1772359200,
        "lesson": "Run pytest with --import-mode=importlib when test modules share a name"});
    let bad = json!({"key": "om-2", "tags": "python", "outcome": "succeeded",
        "lesson": "Run pytest with --import-mode=importlib when test modules share a name",
        "metadata": {"created_at": "last tuesday", "project": "git@github.com:acme/api.git"}});
    std::fs::write(&input, format!("{good}\n{bad}\n")).unwrap();
    let out = dir.path("out");
    let o = compile_to(&input, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = diagnostics(&out);
    let l003: Vec<&Value> = diags.iter().filter(|d| d["code"] == "L003").collect();
    assert_eq!(l003.len(), 1, "{diags:#?}");
    assert_eq!(l003[0]["subject"], "om-2");
    assert_eq!(l003[0]["line"], 2);
    assert_eq!(l003[0]["evidence"]["field"], "metadata.created_at");
    assert!(
        l003[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("`metadata.created_at` must be"),
        "{}",
        l003[0]["message"]
    );
}

/// An OmniMem export whose memories carry their own `score` and `confidence` (top level or
/// in `metadata`): skillc does not read them (confidence is a fold over the history, and no
/// score passes a gate), and says so once for the whole export, as one folded L012 note
/// naming every memory, instead of ignoring them silently. A lone memory scored 0.99 is
/// still a lesson below reinforcement, at the confidence any admission starts with.
#[test]
fn omnimem_scores_are_said_once_to_be_unused_and_change_nothing() {
    let s = Scratch::new("omnimem-scores");
    let memories = [
        json!({"key": "mem-91a001", "tags": "[\"python\"]", "outcome": "succeeded", "created_at": "1772352000",
               "lesson": "Run pytest with --import-mode=importlib when test modules share a name",
               "score": 0.92, "confidence": "0.8", "access_count": 14}),
        json!({"key": "mem-91a002", "tags": ["python"], "outcome": "succeeded", "created_at": 1772377200,
               "lesson": "Run pytest with --import-mode=importlib when test modules share names",
               "metadata": {"project": "git@github.com:acme/ledger.git", "score": 0.41}}),
        json!({"key": "mem-91a003", "tags": ["terraform"], "outcome": "succeeded", "created_at": 1772402400,
               "lesson": "Pass -lock-timeout=60s to terraform plan when CI jobs share a state backend",
               "score": 0.99}),
        json!({"key": "mem-91a004", "tags": ["kubernetes"], "outcome": "succeeded", "created_at": 1772427600,
               "lesson": "Wait on kubectl rollout status after kubectl apply in deploy scripts",
               "score": null}),
    ];
    let text: String = memories.iter().map(|m| format!("{m}\n")).collect();
    let input = s.path("omnimem-export.jsonl");
    std::fs::write(&input, text).unwrap();
    let out = s.path("out");
    let o = compile_to(&input, &out, &["--strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let diags = read_json(&out.join("diagnostics.json"));
    let l012 = common::diags_of(&diags, "L012");
    assert_eq!(l012.len(), 1, "{diags:#}");
    let note = l012[0];
    assert_eq!(note["severity"], "note");
    assert_eq!(
        note["evidence"]["experiences"],
        json!(["mem-91a001", "mem-91a002", "mem-91a003"]),
        "{note:#}"
    );
    assert!(note["message"].as_str().unwrap().contains("not used"), "{note:#}");
    assert!(
        note["help"].as_str().unwrap().contains("skillc bless"),
        "{note:#}"
    );
    let ledger = read_json(&out.join("ledger.json"));
    let tf = (ledger["lessons"].as_array().unwrap().iter())
        .find(|l| l["domain"] == "terraform")
        .unwrap();
    assert_eq!(
        (tf["confidence"].as_f64(), tf["rule"].as_bool()),
        (Some(0.5), Some(false)),
        "{tf:#}"
    );
}
