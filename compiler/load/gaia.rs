//! GAIA memory stores (`memory.db`, DESIGN §3.2), read in place and never written.
//!
//! * The store is opened read-only (`mode=ro`, `SQLITE_OPEN_READ_ONLY`, `query_only`), with a
//!   busy timeout, so neither the database nor its `-wal` changes, even in WAL mode while GAIA
//!   has it open. When a read-only open would create a file beside the store (a `-wal`
//!   without its `-shm`, a stray `-wal` beside a rollback-journal database) or fails, the
//!   database and its `-wal` are copied to a private temporary directory, read there, and
//!   the copy is removed.
//! * Rows are read in `id` order, else rowid order, else (a `WITHOUT ROWID` table) primary-key
//!   order, where a row's place in that order stands in for its number. A row whose `id` is
//!   not an integer is skipped with a diagnostic that locates it by rowid or key; the rest of
//!   the store is read. Identifiers are quoted, so any column name is read.
//! * `schema_version` must say 2 to 4; anything else is `unsupported-schema` and the store is
//!   skipped (a data diagnostic, not a failure to run).
//! * Each `session_id` of `tool_history` is one experience `gaia:<session_id>`: operations in
//!   row order, checks recognised from the command's program (`policy.check_programs`),
//!   refusals (`"executed": false`, `"status": "denied"`) as refused calls, domains from the
//!   programs (`aliases.yaml` `programs:`, else `general`), the project from the session's
//!   `workspace:` conversation context. Arguments truncated by GAIA (500 characters) are
//!   recovered as far as the operation key needs and marked as cut (`candidates::CUT_ARGS`),
//!   so no lesson names a member lost in the cut; what cannot be is an `unrecoverable-args`
//!   note. A row value that cannot be read (a `success` that is neither true nor false, a
//!   `timestamp` that is no time, no `tool_name`) is a warning naming the rows, and the call
//!   is read without it: no verdict (it passes no check), no time, the tool `unknown`.
//! * `knowledge`: `error` rows on a key that failed in two or more sessions with no success
//!   between the failures become keyed watch claims citing those sessions, one per such run
//!   (the second and later with `#2`, `#3`… after the row's id); a run a later success ended
//!   carries that session as its end (`LessonClaim::ended`), so the lesson is superseded
//!   then instead of vanishing. GAIA's own `tool_lesson` rows that no session demonstrates
//!   become unevidenced do-claims (the demonstrated ones are learned from the sessions
//!   themselves); one that a session recorded after the row demonstrates is such a claim
//!   ended by that session, so it is superseded by the lesson learned there instead of
//!   leaving the ledger. Superseded rows are history and are not read.
//! * An `outcomes` table, when present, holds native records (one JSON column, or columns
//!   named like the native fields).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use super::record::{self, Item, Parsed};
use crate::candidates;
use crate::diagnostics::{Diagnostic, Severity, codes, short_list};
use crate::model::{
    Args, Check, ClaimSource, Ended, Experience, Id, Kind, LessonClaim, Narrative, OpStatus, Operation,
    Outcome, SourceLoc,
};
use crate::normalize::{self, Aliases};
use crate::opkey::{self, COMMAND_FIELDS, PATH_FIELDS};
use crate::policy::{Policy, Rules};
use crate::time::{from_unix_seconds, parse_rfc3339};

/// Schema versions this reader understands.
const SUPPORTED: std::ops::RangeInclusive<i64> = 2..=4;

/// How long a read waits for a lock GAIA holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The domain of operations whose program maps to none.
pub const GENERAL: &str = "general";

static EXECUTED_FALSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""executed"\s*:\s*false"#).expect("valid regex"));
static STATUS_DENIED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""status"\s*:\s*"denied""#).expect("valid regex"));

/// Reads one store. `forced`: `--from gaia` was given (a SQLite file without GAIA's tables is
/// then an unsupported schema rather than an unknown format).
pub(crate) fn read(path: &Path, name: &str, forced: bool, rules: &Rules) -> Vec<Parsed> {
    let file_diag = |code: &'static str, message: String| {
        vec![Parsed::invalid(0, Diagnostic::about_file(code, message, name))]
    };
    let store = match Store::open(path) {
        Ok(s) => s,
        Err(OpenError::NotADatabase) => {
            return file_diag(
                codes::UNKNOWN_FORMAT,
                "not a GAIA memory store: the file is not a SQLite database".into(),
            );
        }
        Err(OpenError::Other(e)) => {
            return file_diag(
                codes::UNREADABLE_FILE,
                format!("cannot read GAIA memory store: {e}"),
            );
        }
    };
    let reader = Reader {
        conn: &store.conn,
        name,
        rules,
    };
    match reader.read(forced) {
        Ok(items) => items,
        Err(Problem::NotGaia) => file_diag(
            codes::UNKNOWN_FORMAT,
            "sqlite database is not a GAIA memory store (no tool_history or knowledge table)".into(),
        ),
        Err(Problem::Schema(message, version)) => {
            let mut d =
                Diagnostic::about_file(codes::UNSUPPORTED_SCHEMA, message, name).with("supported", "2-4");
            if let Some(v) = version {
                d = d.with("schema_version", v);
            }
            vec![Parsed::invalid(0, d)]
        }
        Err(Problem::Sql(e)) => file_diag(
            codes::UNREADABLE_FILE,
            format!("cannot read GAIA memory store: {e}"),
        ),
    }
}

enum OpenError {
    NotADatabase,
    Other(String),
}

/// An open store: the database itself, read-only, or a private copy of it.
struct Store {
    conn: Connection,
    /// Dropped after `conn` (field order), removing the copy.
    _copy: Option<TempCopy>,
}

impl Store {
    /// Read in place when that creates no file beside the store: a rollback-journal
    /// database with no `-wal`, or a WAL database whose `-wal` and `-shm` exist (GAIA is
    /// running); a WAL database with neither (GAIA shut down cleanly) is read as immutable.
    /// Any other `-wal` (SQLite reads a `-wal` it finds whatever the header says, and would
    /// create the `-shm` to do so), or any store the read-only open fails on, is read from a
    /// private copy.
    fn open(path: &Path) -> Result<Store, OpenError> {
        let side = |suffix: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p).exists()
        };
        let (wal, shm) = (side("-wal"), side("-shm"));
        let in_place = match wal_mode(path) {
            Some(true) if wal && shm => Some(false),
            Some(true) if !wal && !shm => Some(true),
            Some(true) => None,
            Some(false) | None if wal => None,
            Some(false) | None => Some(false),
        };
        let first = match in_place.map(|immutable| open_read_only(path, immutable)) {
            Some(Ok(conn)) => return Ok(Store { conn, _copy: None }),
            Some(Err(e)) if is_not_a_database(&e) => return Err(OpenError::NotADatabase),
            Some(Err(e)) => e.to_string(),
            None => "a read-only open would create a file beside the store".to_string(),
        };
        let copy = TempCopy::new(path)
            .map_err(|e| OpenError::Other(format!("{first}; a private copy failed: {e}")))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&copy.db, flags)
            .and_then(|c| {
                c.busy_timeout(BUSY_TIMEOUT)?;
                probe(&c)?;
                Ok(c)
            })
            .map_err(|e| {
                if is_not_a_database(&e) {
                    OpenError::NotADatabase
                } else {
                    OpenError::Other(e.to_string())
                }
            })?;
        Ok(Store {
            conn,
            _copy: Some(copy),
        })
    }
}

/// A SQLite database opened for reading without creating or changing any file beside it (or
/// a private copy of it, dropped with the guard; `Store::open` says when): the state store's
/// read-only commands (`diff`) open it this way too. The guard must outlive the connection.
pub(crate) fn open_untouched(path: &Path) -> Result<(Connection, Option<Box<dyn Send>>), String> {
    match Store::open(path) {
        Ok(Store { conn, _copy }) => Ok((conn, _copy.map(|c| Box::new(c) as Box<dyn Send>))),
        Err(OpenError::NotADatabase) => Err("not a SQLite database".into()),
        Err(OpenError::Other(e)) => Err(e),
    }
}

fn is_not_a_database(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase)
}

/// Forces SQLite to read the schema (and the WAL index), so a store that cannot be read in
/// place fails here, not halfway.
fn probe(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
    Ok(())
}

/// Is the database in WAL mode (file format versions 2 in its header)? `None` when the
/// header cannot be read.
fn wal_mode(path: &Path) -> Option<bool> {
    use std::io::Read;
    let mut header = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut header).ok()?;
    Some(header[18] == 2 && header[19] == 2)
}

fn open_read_only(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut uri = file_uri(path);
    if immutable {
        uri.push_str("&immutable=1");
    }
    let conn = Connection::open_with_flags(uri, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "query_only", true)?;
    probe(&conn)?;
    Ok(conn)
}

/// `file:<path>?mode=ro`, with the characters a URI path cannot hold escaped.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro");
    uri
}

/// A private copy of a database and its `-wal`, removed when dropped.
struct TempCopy {
    dir: PathBuf,
    db: PathBuf,
}

impl TempCopy {
    fn new(path: &Path) -> std::io::Result<TempCopy> {
        let base = std::env::temp_dir();
        let mut n = 0u32;
        let dir = loop {
            let dir = base.join(format!("skillc-gaia-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
                Err(e) => return Err(e),
            }
        };
        let copy = TempCopy {
            db: dir.join("memory.db"),
            dir,
        };
        std::fs::copy(path, &copy.db)?;
        // The WAL holds committed transactions not yet in the database; a hot rollback
        // journal, a transaction to undo. Both travel with the copy.
        for suffix in ["-wal", "-journal"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            let side = PathBuf::from(side);
            if side.exists() {
                std::fs::copy(&side, copy.dir.join(format!("memory.db{suffix}")))?;
            }
        }
        Ok(copy)
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

enum Problem {
    NotGaia,
    /// Message and the version found, if any.
    Schema(String, Option<i64>),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Problem {
    fn from(e: rusqlite::Error) -> Problem {
        Problem::Sql(e)
    }
}

/// `name` as an SQL identifier: in double quotes, embedded quotes doubled.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// How a table's rows are read: `place` selects where a row is (its rowid, or in a
/// `WITHOUT ROWID` table its primary key as `column=literal` text), `order` is the
/// `ORDER BY` list, `has_id` says whether the table has an `id` column.
struct RowKey {
    place: String,
    order: String,
    has_id: bool,
}

/// Where a row is, for diagnostics: its rowid, or its primary key and its place (1-based)
/// in key order, which stands in for a line.
enum Place {
    Rowid(i64),
    Key(String, i64),
}

impl Place {
    /// The row's `place` value; `n` is its place in the read order.
    fn read(v: ValueRef, n: i64) -> Place {
        match v {
            ValueRef::Integer(i) => Place::Rowid(i),
            v => Place::Key(as_text(v).unwrap_or_default(), n),
        }
    }

    fn line(&self) -> i64 {
        match self {
            Place::Rowid(i) | Place::Key(_, i) => *i,
        }
    }

    /// The row skipped, with `d` saying why, at the row's line.
    fn skipped(&self, d: Diagnostic) -> Parsed {
        Parsed::invalid(u32::try_from(self.line()).unwrap_or(0), d)
    }

    fn evidence(&self, d: Diagnostic) -> Diagnostic {
        match self {
            Place::Rowid(i) => d.with("rowid", *i),
            Place::Key(k, _) => d.with("key", k.as_str()),
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Rowid(i) => write!(f, "with rowid {i}"),
            Place::Key(k, _) => write!(f, "with key {k}"),
        }
    }
}

/// One `tool_history` row.
struct Row {
    id: i64,
    tool: String,
    args: Option<String>,
    result: Option<String>,
    /// `None`: unknown (NULL, or a value that says neither; see `success`).
    success: Option<bool>,
    error: Option<String>,
    at: Option<i64>,
}

/// A `tool_history` value that could not be read: its row, its column and what was there.
struct Unread {
    row: i64,
    field: &'static str,
    found: String,
}

/// What became of an operation's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgsState {
    /// Valid JSON (or none).
    Whole,
    /// Truncated, but the fields the operation key needs were recovered.
    Recovered,
    /// Truncated beyond what the key needs: keyed by the tool alone.
    Lost,
}

/// One session on its way to becoming an experience.
struct Session {
    id: String,
    first_row: i64,
    rows: Vec<Row>,
    unread: Vec<Unread>,
}

/// Per operation key: where it ran successfully and where it failed, for watch claims.
#[derive(Default)]
struct KeyRuns {
    /// (row id, index of the session's experience) of successes.
    oks: Vec<(i64, usize)>,
    /// (row id, index of the session's experience) of failures that teach something.
    failures: Vec<(i64, usize)>,
}

/// A run of failures on one key with no success between them: the sessions they came from
/// (in order of their first failure in the run), and the session whose success ended the
/// run, if one did.
struct Episode {
    sessions: Vec<usize>,
    fixed_by: Option<usize>,
}

impl KeyRuns {
    /// The runs of failures, in row order. A run is what a compile of the store at any row
    /// inside it saw as "failures after the last success"; a success ends it.
    fn episodes(&self) -> Vec<Episode> {
        let mut rows: Vec<(i64, bool, usize)> = (self.failures.iter().map(|&(r, i)| (r, false, i)))
            .chain(self.oks.iter().map(|&(r, i)| (r, true, i)))
            .collect();
        rows.sort_unstable();
        let mut episodes = Vec::new();
        let mut sessions: Vec<usize> = Vec::new();
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        for (_, ok, i) in rows {
            if !ok {
                if seen.insert(i) {
                    sessions.push(i);
                }
            } else if !sessions.is_empty() {
                seen.clear();
                episodes.push(Episode {
                    sessions: std::mem::take(&mut sessions),
                    fixed_by: Some(i),
                });
            }
        }
        if !sessions.is_empty() {
            episodes.push(Episode {
                sessions,
                fixed_by: None,
            });
        }
        episodes
    }
}

/// An active `knowledge` row.
struct Knowledge {
    id: i64,
    category: String,
    source: String,
    content: String,
    metadata: Map<String, Value>,
    context: Option<String>,
    at: Option<i64>,
}

struct Reader<'a> {
    conn: &'a Connection,
    name: &'a str,
    rules: &'a Rules,
}

impl Reader<'_> {
    fn loc(&self, line: i64) -> SourceLoc {
        SourceLoc {
            file: self.name.into(),
            line: u32::try_from(line).unwrap_or(0),
        }
    }

    fn tables(&self) -> rusqlite::Result<BTreeSet<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
        names.collect()
    }

    fn columns(&self, table: &str) -> rusqlite::Result<BTreeSet<String>> {
        let mut stmt = self.conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
        names.collect()
    }

    /// `col` when the table has it, else `NULL`.
    fn select(cols: &BTreeSet<String>, wanted: &[&str]) -> String {
        wanted
            .iter()
            .map(|c| {
                if cols.contains(*c) {
                    ident(c)
                } else {
                    "NULL".into()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// How to read a table's rows in a stable order and say where each is. `by_id`: GAIA's
    /// own tables are in `id` order when they have that column.
    fn row_key(&self, table: &str, cols: &BTreeSet<String>, by_id: bool) -> rusqlite::Result<RowKey> {
        let without_rowid: bool = self.conn.query_row(
            "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        // A column may take the rowid's name; SQLite then means the column.
        let rowid = ["rowid", "_rowid_", "oid"]
            .into_iter()
            .find(|a| !without_rowid && !cols.iter().any(|c| c.eq_ignore_ascii_case(a)));
        let (place, order) = match rowid {
            Some(r) => (r.to_string(), r.to_string()),
            None => {
                let mut stmt = self
                    .conn
                    .prepare("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")?;
                let pk: Vec<String> = stmt.query_map([table], |r| r.get(0))?.collect::<Result<_, _>>()?;
                let key: Vec<&String> = if pk.is_empty() {
                    cols.iter().collect()
                } else {
                    pk.iter().collect()
                };
                let place = key
                    .iter()
                    .map(|c| format!("'{}=' || quote({})", c.replace('\'', "''"), ident(c)))
                    .collect::<Vec<_>>()
                    .join(" || ', ' || ");
                let order = key.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", ");
                (place, order)
            }
        };
        let has_id = cols.contains("id");
        let order = if by_id && has_id {
            format!("\"id\", {order}")
        } else {
            order
        };
        Ok(RowKey { place, order, has_id })
    }

    /// A row's `id` (its place when the table has no `id` column), or the diagnostic that
    /// skips it: the id orders the history and names the row everywhere, and no other number
    /// could stand in without meeting another row's id.
    fn row_id(&self, table: &str, key: &RowKey, place: &Place, v: ValueRef) -> Result<i64, Box<Diagnostic>> {
        let d = match v {
            ValueRef::Integer(i) => return Ok(i),
            ValueRef::Null if !key.has_id => return Ok(place.line()),
            ValueRef::Null => Diagnostic::new(
                codes::MISSING_FIELD,
                format!("{table} row {place} has no `id` and was skipped"),
            ),
            v => {
                let found = found_sql(v);
                Diagnostic::new(
                    codes::INVALID_VALUE,
                    format!(
                        "{table} row {place}: `id` must be an integer, found {found}; the row was skipped"
                    ),
                )
                .with("expected", "an integer")
                .with("found", found)
            }
        };
        let d = d
            .subject(self.name)
            .at(&self.loc(place.line()))
            .with("table", table)
            .with("field", "id");
        Err(Box::new(place.evidence(d)))
    }

    fn read(&self, forced: bool) -> Result<Vec<Parsed>, Problem> {
        let tables = self.tables()?;
        let gaia = tables.contains("tool_history") || tables.contains("knowledge");
        if !gaia && !forced {
            return Err(Problem::NotGaia);
        }
        self.schema_version(&tables)?;

        let mut out = Vec::new();
        let (conversations, tasks) = if tables.contains("conversations") {
            self.conversations()?
        } else {
            Default::default()
        };
        let mut experiences = Vec::new();
        let mut runs: HashMap<String, KeyRuns> = HashMap::new();
        if tables.contains("tool_history") {
            let sessions = self.sessions(&mut out)?;
            for s in sessions {
                let index = experiences.len();
                if let Some(e) = self.experience(s, index, &conversations, &tasks, &mut runs, &mut out) {
                    experiences.push(e);
                }
            }
        }
        let claims = if tables.contains("knowledge") {
            self.claims(&experiences, &runs, &mut out)?
        } else {
            Vec::new()
        };
        for e in experiences {
            out.push(Parsed::of(e.source.line, Item::Experience(e)));
        }
        if tables.contains("outcomes") {
            self.outcomes(&mut out)?;
        }
        out.extend(claims);
        Ok(out)
    }

    fn schema_version(&self, tables: &BTreeSet<String>) -> Result<(), Problem> {
        let name = self.name;
        if !tables.contains("schema_version") {
            return Err(Problem::Schema(
                format!("{name} has no schema_version table; supported GAIA schema versions are 2 to 4"),
                None,
            ));
        }
        let mut stmt = self.conn.prepare("SELECT version FROM schema_version")?;
        let mut rows = stmt.query([])?;
        let mut versions = Vec::new();
        while let Some(r) = rows.next()? {
            versions.push(as_text(r.get_ref(0)?));
        }
        let parsed: Vec<Option<i64>> = versions
            .iter()
            .map(|v| v.as_deref().and_then(|s| s.trim().parse().ok()))
            .collect();
        let version = match parsed.as_slice() {
            [] => {
                return Err(Problem::Schema(
                    format!("{name} has an empty schema_version table; supported versions are 2 to 4"),
                    None,
                ));
            }
            // Several rows: a migration history; the highest is the schema in use.
            _ => parsed.iter().copied().max().flatten(),
        };
        match version {
            Some(v) if SUPPORTED.contains(&v) => Ok(()),
            Some(v) => Err(Problem::Schema(
                format!("{name} has schema version {v}; supported versions are 2 to 4"),
                Some(v),
            )),
            None => Err(Problem::Schema(
                format!("{name} has a schema version that is not a number; supported versions are 2 to 4"),
                None,
            )),
        }
    }

    /// Per session: the workspace root (project identity) and the first user request (task).
    #[allow(clippy::type_complexity)]
    fn conversations(&self) -> rusqlite::Result<(HashMap<String, String>, HashMap<String, String>)> {
        let cols = self.columns("conversations")?;
        let mut projects = HashMap::new();
        let mut tasks = HashMap::new();
        if !cols.contains("session_id") {
            return Ok((projects, tasks));
        }
        let key = self.row_key("conversations", &cols, true)?;
        let sql = format!(
            "SELECT {} FROM conversations ORDER BY {}",
            Self::select(&cols, &["session_id", "context", "role", "content"]),
            key.order
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let Some(session) = as_text(r.get_ref(0)?) else {
                continue;
            };
            if !projects.contains_key(&session)
                && let Some(root) = as_text(r.get_ref(1)?).as_deref().and_then(workspace)
            {
                projects.insert(session.clone(), root);
            }
            let role = as_text(r.get_ref(2)?).unwrap_or_default();
            if role.trim().eq_ignore_ascii_case("user")
                && !tasks.contains_key(&session)
                && let Some(content) = as_text(r.get_ref(3)?).filter(|c| !c.trim().is_empty())
            {
                let task: String = content.trim().chars().take(500).collect();
                tasks.insert(session, task);
            }
        }
        Ok((projects, tasks))
    }

    /// `tool_history` grouped by session, sessions in order of their first row.
    fn sessions(&self, out: &mut Vec<Parsed>) -> Result<Vec<Session>, Problem> {
        let cols = self.columns("tool_history")?;
        for required in ["session_id", "tool_name"] {
            if !cols.contains(required) {
                return Err(Problem::Schema(
                    format!("{}: tool_history has no `{required}` column", self.name),
                    None,
                ));
            }
        }
        let key = self.row_key("tool_history", &cols, true)?;
        let has_success = cols.contains("success");
        let sql = format!(
            "SELECT {}, {} FROM tool_history ORDER BY {}",
            key.place,
            Self::select(&cols, HISTORY_COLUMNS),
            key.order
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut sessions: Vec<Session> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut orphans = Vec::new();
        let mut n = 0;
        while let Some(r) = rows.next()? {
            n += 1;
            let place = Place::read(r.get_ref(0)?, n);
            let session = as_text(r.get_ref(2)?).filter(|s| !s.trim().is_empty());
            let row_id = match self.row_id("tool_history", &key, &place, r.get_ref(1)?) {
                Ok(id) => id,
                Err(d) => {
                    let d = match &session {
                        Some(s) => (*d)
                            .with("session", s.as_str())
                            .experiences([format!("gaia:{s}")]),
                        None => *d,
                    };
                    out.push(place.skipped(d));
                    continue;
                }
            };
            let Some(session) = session else {
                orphans.push(row_id);
                continue;
            };
            let mut unread = Vec::new();
            let mut note = |field, v: ValueRef| {
                unread.push(Unread {
                    row: row_id,
                    field,
                    found: found_sql(v),
                })
            };
            let (tool, success, time) = (r.get_ref(3)?, r.get_ref(6)?, r.get_ref(8)?);
            let tool = match as_text(tool).map(|t| t.trim().to_string()) {
                Some(t) if !t.is_empty() => t,
                _ => {
                    note("tool_name", tool);
                    "unknown".into()
                }
            };
            let error = as_text(r.get_ref(7)?).filter(|e| !e.trim().is_empty());
            // A store without the column records failures by their error alone; where GAIA
            // wrote the column, NULL says it did not know (see `experience`).
            let success = if has_success {
                read_success(success).unwrap_or_else(|| {
                    note("success", success);
                    None
                })
            } else {
                Some(error.is_none())
            };
            // NULL says nothing and is no error: a store without the column reads NULL too.
            let at = as_time(time);
            if at.is_none() && !matches!(time, ValueRef::Null) {
                note("timestamp", time);
            }
            let row = Row {
                id: row_id,
                tool,
                args: as_text(r.get_ref(4)?),
                result: as_text(r.get_ref(5)?),
                success,
                error,
                at,
            };
            let i = *index.entry(session.clone()).or_insert_with(|| {
                sessions.push(Session {
                    id: session,
                    first_row: row_id,
                    rows: Vec::new(),
                    unread: Vec::new(),
                });
                sessions.len() - 1
            });
            sessions[i].rows.push(row);
            sessions[i].unread.append(&mut unread);
        }
        if !orphans.is_empty() {
            let mut d = Diagnostic::new(
                codes::MISSING_FIELD,
                format!(
                    "{} no session_id and {} to no experience",
                    crate::diagnostics::plural(
                        orphans.len(),
                        "tool_history row has",
                        "tool_history rows have"
                    ),
                    if orphans.len() == 1 { "belongs" } else { "belong" }
                ),
            )
            .subject(self.name)
            .at(&self.loc(orphans[0]))
            .with("field", "session_id")
            .with(
                "rows",
                short_list(&orphans.iter().map(i64::to_string).collect::<Vec<_>>(), 10),
            );
            // The registry's help speaks of native record fields; here the store is GAIA's.
            d.help = ORPHAN_HELP;
            out.push(Parsed::invalid(u32::try_from(orphans[0]).unwrap_or(0), d));
        }
        if let Some(first) = sessions.first() {
            let loc = self.loc(first.first_row);
            for d in unread_argument_columns(&cols, self.name, &loc) {
                out.push(Parsed::invalid(loc.line, d));
            }
        }
        Ok(sessions)
    }

    /// One session to an experience; records its key runs for the watch claims.
    fn experience(
        &self,
        s: Session,
        index: usize,
        projects: &HashMap<String, String>,
        tasks: &HashMap<String, String>,
        runs: &mut HashMap<String, KeyRuns>,
        out: &mut Vec<Parsed>,
    ) -> Option<Experience> {
        let policy = &self.rules.policy;
        let aliases = &self.rules.aliases;
        let id = format!("gaia:{}", s.id);
        let loc = self.loc(s.first_row);
        self.unread(&s, &id, out);
        let mut operations = Vec::with_capacity(s.rows.len());
        let mut domains = BTreeSet::new();
        let mut lost: Vec<(i64, String)> = Vec::new();
        let mut keyed: Vec<(i64, String, OpStatus, bool)> = Vec::new();
        for row in &s.rows {
            let (mut args, state) = parse_args(row.args.as_deref());
            // Labels go before anything here reads the arguments (keys, this loader's own
            // mechanical lessons), as normalize drops them for every other input.
            policy.strip_label_args(&mut args);
            if state == ArgsState::Lost {
                lost.push((row.id, row.tool.clone()));
            }
            let refused = [&row.result, &row.error]
                .into_iter()
                .flatten()
                .any(|t| EXECUTED_FALSE.is_match(t) || STATUS_DENIED.is_match(t));
            // Success unknown (NULL, or a value that says neither): an error says the call
            // failed; without one it ran and nothing says how, so it is no failure, but it
            // passes no check and fixes no recurring error.
            let known = row.success.is_some() || row.error.is_some();
            let ok = row.success.unwrap_or(row.error.is_none());
            let status = if refused {
                OpStatus::Refused
            } else if ok {
                OpStatus::Ok
            } else {
                OpStatus::Error
            };
            let error = (status == OpStatus::Error)
                .then(|| {
                    row.error
                        .clone()
                        .or_else(|| row.result.clone().filter(|r| !r.trim().is_empty()))
                })
                .flatten();
            let command = opkey::command_of(&args);
            let check = match (&command, status) {
                (Some(c), OpStatus::Ok | OpStatus::Error) if known => {
                    check_label(c, policy).map(|label| Check {
                        label,
                        target: None,
                        passed: status == OpStatus::Ok,
                    })
                }
                _ => None,
            };
            domains.insert(op_domain(command.as_deref(), aliases));
            let key = opkey::operation_key(&row.tool, &args);
            let teaches =
                status == OpStatus::Error && !error.as_deref().is_some_and(|e| policy.is_transient(e));
            if known {
                keyed.push((row.id, key, status, teaches));
            }
            operations.push(Operation {
                tool: super::fast::shared_tool(&row.tool),
                args: Args::from_value(&args),
                status,
                error,
                secret_print: 0,
                check: check.map(Box::new),
            });
        }
        if !lost.is_empty() {
            let tools: BTreeSet<&str> = lost.iter().map(|(_, t)| t.as_str()).collect();
            let tools: Vec<&str> = tools.into_iter().collect();
            let rows: Vec<String> = lost.iter().map(|(r, _)| r.to_string()).collect();
            let message = match lost.as_slice() {
                [(_, tool)] => format!(
                    "arguments of {tool} in session {} are truncated beyond recovery; keyed as `{tool} {{}}`",
                    s.id
                ),
                _ => format!(
                    "arguments of {} operations in session {} are truncated beyond recovery; each is keyed by its tool alone",
                    lost.len(),
                    s.id
                ),
            };
            let d = Diagnostic::new(codes::UNRECOVERABLE_ARGS, message)
                .subject(id.clone())
                .at(&self.loc(lost[0].0))
                .with("tool", tools.join(", "))
                .with("rows", short_list(&rows, 10))
                .experiences([&id]);
            out.push(Parsed::invalid(u32::try_from(lost[0].0).unwrap_or(0), d));
        }
        let times: Vec<i64> = s.rows.iter().filter_map(|r| r.at).collect();
        let Some(recorded_at) = s
            .rows
            .last()
            .and_then(|r| r.at)
            .or_else(|| times.iter().copied().max())
        else {
            let d = Diagnostic::new(
                codes::INVALID_VALUE,
                format!("session {} has no readable timestamp and was not compiled", s.id),
            )
            .subject(id.clone())
            .at(&loc)
            .with("field", "timestamp")
            .with("expected", "an ISO-8601 timestamp")
            .experiences([&id]);
            out.push(Parsed::invalid(loc.line, d));
            return None;
        };
        let outcome = match operations.iter().rev().find(|op| op.status != OpStatus::Refused) {
            Some(op) if op.status == OpStatus::Ok => Outcome::Succeeded,
            _ => Outcome::Failed,
        };
        // Only now is the experience certain to exist: record its runs per key.
        for (row, key, status, teaches) in keyed {
            let r = runs.entry(key).or_default();
            match status {
                OpStatus::Ok => r.oks.push((row, index)),
                OpStatus::Error if teaches => r.failures.push((row, index)),
                _ => {}
            }
        }
        Some(Experience {
            id: id.into(),
            recorded_at,
            domains: domains.into_iter().collect(),
            project: projects.get(&s.id).cloned(),
            words: Narrative {
                task: tasks.get(&s.id).cloned(),
                ..Default::default()
            }
            .into(),
            outcome: Some(outcome),
            operations,
            source: loc,
            ..Default::default()
        })
    }

    /// One warning per column of a session's rows that held values it could not read, at the
    /// first such row, naming them all: the call was read without the value.
    fn unread(&self, s: &Session, id: &str, out: &mut Vec<Parsed>) {
        let mut by_field: BTreeMap<&str, Vec<&Unread>> = BTreeMap::new();
        for u in &s.unread {
            by_field.entry(u.field).or_default().push(u);
        }
        for (field, unread) in by_field {
            let (first, n, session) = (unread[0], unread.len(), &s.id);
            // What was wrong, what the reading expects, and what became of one row and of several.
            let (code, what, expected, one, several) = match field {
                "tool_name" => (
                    codes::MISSING_FIELD,
                    "no `tool_name`",
                    None,
                    "its call is named `unknown`",
                    "their calls are named `unknown`",
                ),
                "success" => (
                    codes::INVALID_VALUE,
                    "a `success` that is neither true nor false",
                    Some("true or false (1/0, yes/no, ok/failed)"),
                    "its call is judged by its error alone and passes no check",
                    "each call is judged by its error alone and passes no check",
                ),
                _ => (
                    codes::INVALID_VALUE,
                    "a `timestamp` that is not a time",
                    Some("an ISO-8601 timestamp or unix seconds"),
                    "the row's time is ignored",
                    "their times are ignored",
                ),
            };
            let found = match field {
                "tool_name" => String::new(),
                _ if n == 1 => format!(" (found {})", first.found),
                _ => format!(" (first found {})", first.found),
            };
            let message = if n == 1 {
                format!(
                    "tool_history row {} of session {session} has {what}{found}; {one}",
                    first.row
                )
            } else {
                format!("{n} tool_history rows of session {session} have {what}{found}; {several}")
            };
            let rows: Vec<String> = unread.iter().map(|u| u.row.to_string()).collect();
            let mut d = Diagnostic::new(code, message)
                .severity(Severity::Warning)
                .subject(id)
                .at(&self.loc(first.row))
                .with("field", field)
                .with("found", first.found.as_str())
                .with("rows", short_list(&rows, 10))
                .experiences([id]);
            if let Some(e) = expected {
                d = d.with("expected", e);
            }
            d.help = UNREAD_HELP;
            out.push(Parsed::invalid(u32::try_from(first.row).unwrap_or(0), d));
        }
    }

    /// The active `knowledge` rows claims are made from: errors and tool lessons.
    fn knowledge(&self, out: &mut Vec<Parsed>) -> rusqlite::Result<Vec<Knowledge>> {
        let cols = self.columns("knowledge")?;
        let key = self.row_key("knowledge", &cols, true)?;
        let sql = format!(
            "SELECT {}, {} FROM knowledge ORDER BY {}",
            key.place,
            Self::select(
                &cols,
                &[
                    "id",
                    "category",
                    "source",
                    "content",
                    "metadata",
                    "context",
                    "created_at",
                    "updated_at",
                    "superseded_by"
                ]
            ),
            key.order
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut found = Vec::new();
        let mut n = 0;
        while let Some(r) = rows.next()? {
            n += 1;
            let superseded = as_text(r.get_ref(9)?).is_some_and(|s| {
                let s = s.trim();
                !s.is_empty() && s != "0"
            });
            let category = as_text(r.get_ref(2)?).unwrap_or_default().trim().to_lowercase();
            let source = as_text(r.get_ref(3)?).unwrap_or_default().trim().to_lowercase();
            if superseded || (category != "error" && source != "tool_lesson") {
                continue;
            }
            let place = Place::read(r.get_ref(0)?, n);
            let id = match self.row_id("knowledge", &key, &place, r.get_ref(1)?) {
                Ok(id) => id,
                Err(d) => {
                    out.push(place.skipped(*d));
                    continue;
                }
            };
            let metadata = as_text(r.get_ref(5)?)
                .map(|m| match serde_json::from_str::<Value>(&m) {
                    Ok(Value::Object(map)) => map,
                    Ok(_) => Map::new(),
                    Err(_) => recover_object(&m).map(|r| r.members).unwrap_or_default(),
                })
                .unwrap_or_default();
            found.push(Knowledge {
                id,
                category,
                source,
                content: as_text(r.get_ref(4)?).unwrap_or_default(),
                metadata,
                context: as_text(r.get_ref(6)?),
                at: as_time(r.get_ref(7)?).or(as_time(r.get_ref(8)?)),
            });
        }
        Ok(found)
    }

    /// Watch claims from recurring unfixed errors, do-claims from undemonstrated tool lessons.
    fn claims(
        &self,
        experiences: &[Experience],
        runs: &HashMap<String, KeyRuns>,
        out: &mut Vec<Parsed>,
    ) -> Result<Vec<Parsed>, Problem> {
        let rows = self.knowledge(out)?;
        let policy = &self.rules.policy;
        let mut claims = Vec::new();

        // Errors: the earliest active row per key speaks for the key.
        let mut errors: BTreeMap<String, &Knowledge> = BTreeMap::new();
        for k in rows.iter().filter(|k| k.category == "error") {
            if let Some(key) = meta_str(&k.metadata, "operation") {
                errors.entry(key).or_insert(k);
            }
        }
        for (key, k) in &errors {
            // Each run of failures in two or more sessions is a claim: what a compile of the
            // store up to that run said, kept when a later session fixes it, so the lesson it
            // became is superseded then (DESIGN §1: nothing is deleted). The first such run
            // is the row's claim; later ones (the error came back) are numbered after it, so
            // every claim keeps its id as the store grows.
            let episodes = runs.get(key).map(KeyRuns::episodes).unwrap_or_default();
            let recurring = episodes.into_iter().filter(|e| e.sessions.len() >= 2);
            for (n, Episode { sessions, fixed_by }) in recurring.enumerate() {
                let error = first_line(&k.content)
                    .or_else(|| {
                        experiences[sessions[0]]
                            .operations
                            .iter()
                            .find_map(|op| op.error.as_deref().and_then(first_line))
                    })
                    .unwrap_or_else(|| "an error".into());
                let text = normalize::text(&format!(
                    "{key} fails with \"{error}\" in more than one session and has not been fixed yet"
                ));
                // The claim holds from the second failing session on.
                let qualified = experiences[sessions[1]].recorded_at;
                let recorded_at = k.at.map_or(qualified, |t| t.max(qualified));
                let mut evidence: Vec<Id> = sessions.iter().map(|&i| experiences[i].id.clone()).collect();
                evidence.sort();
                let projects: BTreeSet<Option<&String>> = sessions
                    .iter()
                    .map(|&i| experiences[i].project.as_ref())
                    .collect();
                let project = match projects.into_iter().collect::<Vec<_>>().as_slice() {
                    [Some(p)] => Some((*p).clone()),
                    _ => None,
                };
                let mut claim = self.claim(k, Kind::Watch, text, key, evidence, project, recorded_at);
                if let Item::Claim(c) = &mut claim.item {
                    if n > 0 {
                        c.id = format!("{}#{}", c.id, n + 1).into();
                    }
                    c.ended = fixed_by.map(|i| Ended {
                        at: experiences[i].recorded_at.max(recorded_at),
                        by: experiences[i].id.clone(),
                    });
                }
                claims.push(claim);
            }
        }

        // GAIA's own mechanical lessons: learned from the sessions that show them, or claimed.
        let tool_lessons = rows.iter().any(|k| k.source == "tool_lesson");
        let passing: Vec<(&Experience, Vec<candidates::Mechanical>)> = experiences
            .iter()
            .filter(|_| tool_lessons)
            .filter(|e| crate::outcome::derive(e, policy).passed)
            .map(|e| (e, candidates::mechanical(&e.operations, policy, &[])))
            .collect();
        for k in rows.iter().filter(|k| k.source == "tool_lesson") {
            let Some(key) = meta_str(&k.metadata, "operation") else {
                continue;
            };
            let fix = meta_str(&k.metadata, "fix");
            let shown = (passing.iter())
                .filter(|(_, ms)| (ms.iter()).any(|m| m.key == key && demonstrates(m, fix.as_deref())))
                .map(|(e, _)| e)
                .min_by(|a, b| (a.recorded_at, &a.id).cmp(&(b.recorded_at, &b.id)));
            // Shown by a session no later than the row: learned from the sessions alone.
            if let Some(e) = shown
                && k.at.is_none_or(|at| e.recorded_at <= at)
            {
                continue;
            }
            let Some(at) = k.at else {
                let id = format!("gaia:knowledge:{}", k.id);
                let d = Diagnostic::new(
                    codes::INVALID_VALUE,
                    format!("tool lesson {id} has no readable created_at and was not compiled"),
                )
                .subject(id)
                .at(&self.loc(k.id))
                .with("field", "created_at")
                .with("expected", "an ISO-8601 timestamp");
                out.push(Parsed::invalid(u32::try_from(k.id).unwrap_or(0), d));
                continue;
            };
            let text = match first_nonblank(&k.content) {
                Some(t) => t,
                None => match &fix {
                    Some(f) => format!("{key}: {f}"),
                    None => continue,
                },
            };
            let project = k.context.as_deref().and_then(workspace);
            let mut claim = self.claim(k, Kind::Do, text, &key, Vec::new(), project, at);
            // Shown by a later session: the claim held until then (a compile in between
            // showed it), and the lesson learned from that session supersedes it.
            if let (Item::Claim(c), Some(e)) = (&mut claim.item, shown) {
                c.ended = Some(Ended {
                    at: e.recorded_at,
                    by: e.id.clone(),
                });
            }
            claims.push(claim);
        }
        Ok(claims)
    }

    #[allow(clippy::too_many_arguments)]
    fn claim(
        &self,
        k: &Knowledge,
        kind: Kind,
        text: String,
        key: &str,
        evidence: Vec<Id>,
        project: Option<String>,
        recorded_at: i64,
    ) -> Parsed {
        let loc = self.loc(k.id);
        Parsed::of(
            loc.line,
            Item::Claim(LessonClaim {
                id: format!("gaia:knowledge:{}", k.id).into(),
                recorded_at,
                domains: vec![key_domain(key, &self.rules.aliases)],
                refused_domains: Vec::new(),
                project,
                text,
                kind,
                source: ClaimSource::Extractor,
                evidence,
                operation_key: Some(key.to_string()),
                loc,
                ended: None,
            }),
        )
    }

    /// Native records kept in an `outcomes` table.
    fn outcomes(&self, out: &mut Vec<Parsed>) -> rusqlite::Result<()> {
        let cols = self.columns("outcomes")?;
        let native: Vec<&str> = record::EXPERIENCE_FIELDS
            .iter()
            .copied()
            .filter(|f| cols.contains(*f))
            .collect();
        let by_columns = cols.contains("recorded_at") || cols.contains("outcome");
        let listed: Vec<String> = cols.iter().map(|c| ident(c)).collect();
        let key = self.row_key("outcomes", &cols, false)?;
        let sql = format!(
            "SELECT {}, {} FROM outcomes ORDER BY {}",
            key.place,
            listed.join(", "),
            key.order
        );
        let names: Vec<&String> = cols.iter().collect();
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            n += 1;
            let place = Place::read(r.get_ref(0)?, n);
            let loc = self.loc(place.line());
            let value = if by_columns {
                let mut map = Map::new();
                for (i, col) in names.iter().enumerate() {
                    if !native.contains(&col.as_str()) {
                        continue;
                    }
                    if let Some(v) = column_value(col, r.get_ref(i + 1)?) {
                        map.insert(col.to_string(), v);
                    }
                }
                Some(Value::Object(map))
            } else {
                let mut found = None;
                for i in 0..names.len() {
                    if let Some(t) = as_text(r.get_ref(i + 1)?)
                        && t.trim_start().starts_with('{')
                        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&t)
                    {
                        found = Some(v);
                        break;
                    }
                }
                found
            };
            match value {
                Some(v) => out.push(record::from_value(v, &loc, false)),
                None => out.push(Parsed::invalid(
                    loc.line,
                    place.evidence(
                        Diagnostic::new(
                            codes::MALFORMED_RECORD,
                            format!("outcomes row {place} holds no json record"),
                        )
                        .subject(self.name)
                        .at(&loc),
                    ),
                )),
            }
        }
        Ok(())
    }
}

/// A column of an `outcomes` row as the native field's JSON value.
fn column_value(col: &str, v: ValueRef) -> Option<Value> {
    const LISTS: &[&str] = &["domains", "gotchas", "dead_ends", "operations", "in_play"];
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) if col == "blessed" => Some(Value::Bool(i != 0)),
        ValueRef::Integer(i) => Some(Value::from(i)),
        ValueRef::Real(f) => Some(Value::from(f)),
        ValueRef::Text(_) | ValueRef::Blob(_) => {
            let t = as_text(v)?;
            let trimmed = t.trim_start();
            if LISTS.contains(&col)
                && (trimmed.starts_with('[') || trimmed.starts_with('{'))
                && let Ok(parsed) = serde_json::from_str::<Value>(trimmed)
            {
                return Some(parsed);
            }
            if col == "blessed" {
                match t.trim() {
                    "1" | "true" => return Some(Value::Bool(true)),
                    "0" | "false" | "" => return Some(Value::Bool(false)),
                    _ => {}
                }
            }
            Some(Value::String(t))
        }
    }
}

fn meta_str(m: &Map<String, Value>, field: &str) -> Option<String> {
    match m.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Null) | None => None,
        Some(Value::String(_)) => None,
        Some(other) => Some(other.to_string()),
    }
}

fn first_nonblank(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The first non-blank line of an error, trimmed and cut at 160 characters.
fn first_line(s: &str) -> Option<String> {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.chars().count() <= 160 {
        return Some(line.to_string());
    }
    let mut cut: String = line.chars().take(159).collect();
    cut.push('…');
    Some(cut)
}

/// Does this mechanical lesson show the fix a tool lesson names? (No fix named: the key is
/// enough.)
fn demonstrates(m: &candidates::Mechanical, fix: Option<&str>) -> bool {
    let Some(fix) = fix else { return true };
    let fix = fix.split_whitespace().collect::<Vec<_>>().join(" ");
    if fix.is_empty() {
        return true;
    }
    let escaped = opkey::python_json(&Value::String(fix.clone()));
    let escaped = &escaped[1..escaped.len() - 1];
    m.text.contains(&fix) || m.working.contains(escaped)
}

/// The root after `workspace:` in a conversation context.
fn workspace(context: &str) -> Option<String> {
    let rest = context.trim_start().strip_prefix("workspace:")?;
    let root = rest.lines().next().unwrap_or("").trim();
    (!root.is_empty()).then(|| root.to_string())
}

/// The domain of an operation: its program's, else `general`.
fn op_domain(command: Option<&str>, aliases: &Aliases) -> String {
    command
        .and_then(opkey::program)
        .and_then(|p| aliases.program_domain(&p).map(String::from))
        .unwrap_or_else(|| GENERAL.to_string())
}

/// The domain of an operation key (`<tool> <program>`): the program's, else `general`.
pub(crate) fn key_domain(key: &str, aliases: &Aliases) -> String {
    key.split_once(' ')
        .and_then(|(_, rest)| aliases.program_domain(rest.trim()))
        .unwrap_or(GENERAL)
        .to_string()
}

/// The check a command is, when its program (or `program subcommand`) is listed in
/// `policy.check_programs`.
fn check_label(command: &str, policy: &Policy) -> Option<String> {
    let program = opkey::program(command)?;
    let tokens: Vec<&str> = command.split_whitespace().collect();
    let listed = |name: &str| {
        policy
            .check_programs
            .iter()
            .any(|c| c.trim().eq_ignore_ascii_case(name))
    };
    let at = tokens
        .iter()
        .position(|t| t.rsplit('/').next().unwrap_or(t).to_lowercase() == program);
    if let Some(sub) = at.and_then(|i| tokens.get(i + 1)).filter(|t| !t.starts_with('-')) {
        let both = format!("{program} {}", sub.to_lowercase());
        if listed(&both) {
            return Some(both);
        }
    }
    listed(&program).then_some(program)
}

/// An operation's arguments: the JSON, or what of it can be recovered when GAIA cut it.
fn parse_args(text: Option<&str>) -> (Value, ArgsState) {
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return (Value::Null, ArgsState::Whole);
    };
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        // Arguments stored as a JSON string of JSON.
        if let Value::String(s) = &v
            && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
        {
            return (inner, ArgsState::Whole);
        }
        return (v, ArgsState::Whole);
    }
    let Some(r) = recover_object(t) else {
        return (Value::Null, ArgsState::Lost);
    };
    let mut members = r.members;
    // Members after the cut are unknown, not absent: marked, so that a comparison with another
    // call names none this one lacks (`candidates::describe`).
    let recovered = |mut m: Map<String, Value>| {
        m.insert(candidates::CUT_ARGS.into(), Value::Bool(true));
        (Value::Object(m), ArgsState::Recovered)
    };
    let non_blank =
        |m: &Map<String, Value>, f: &str| matches!(m.get(f), Some(Value::String(s)) if !s.trim().is_empty());
    if COMMAND_FIELDS.iter().any(|f| non_blank(&members, f)) {
        return recovered(members);
    }
    if let Some((field, Some(prefix))) = &r.cut
        && COMMAND_FIELDS.contains(&field.as_str())
    {
        return match decided_command(prefix) {
            Some(command) => {
                members.insert(field.clone(), Value::String(command));
                recovered(members)
            }
            None => (Value::Null, ArgsState::Lost),
        };
    }
    let present = PATH_FIELDS.iter().position(|f| non_blank(&members, f));
    let cut_at = r
        .cut
        .as_ref()
        .and_then(|(f, _)| PATH_FIELDS.iter().position(|p| p == f));
    match (present, cut_at) {
        (Some(p), Some(c)) if c < p => (Value::Null, ArgsState::Lost),
        (Some(_), _) => recovered(members),
        (None, _) => (Value::Null, ArgsState::Lost),
    }
}

/// A command cut mid-string still names its program when the tokens that decide it are
/// complete: the program is the same whatever could have followed. The kept command ends
/// in ` …` to show the cut.
fn decided_command(prefix: &str) -> Option<String> {
    let end = prefix.rfind(char::is_whitespace)?;
    let cut = prefix[..end].trim_end();
    if cut.trim().is_empty() {
        return None;
    }
    let a = opkey::program(&format!("{cut} -m a"))?;
    let b = opkey::program(&format!("{cut} b"))?;
    (a == b).then(|| format!("{cut} …"))
}

/// The complete members of a JSON object cut short, and the member it was cut in.
struct Recovered {
    members: Map<String, Value>,
    /// (field, the decoded prefix of its string value, if it was a string).
    cut: Option<(String, Option<String>)>,
}

fn recover_object(text: &str) -> Option<Recovered> {
    let mut rest = text.trim_start().strip_prefix('{')?;
    let mut members = Map::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with('}') {
            return Some(Recovered { members, cut: None });
        }
        let (key, after) = match json_string_prefix(rest) {
            Some((k, Some(after))) => (k, after),
            _ => {
                return Some(Recovered {
                    members,
                    cut: Some((String::new(), None)),
                });
            }
        };
        rest = after.trim_start();
        rest = match rest.strip_prefix(':') {
            Some(r) => r.trim_start(),
            None => {
                return Some(Recovered {
                    members,
                    cut: Some((key, None)),
                });
            }
        };
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match it.next() {
            Some(Ok(v)) => {
                let off = it.byte_offset();
                members.insert(key, v);
                rest = &rest[off..];
            }
            _ => {
                let prefix = if rest.starts_with('"') {
                    json_string_prefix(rest).map(|(p, _)| p)
                } else {
                    None
                };
                return Some(Recovered {
                    members,
                    cut: Some((key, prefix)),
                });
            }
        }
        rest = rest.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None => return Some(Recovered { members, cut: None }),
        }
    }
}

/// A JSON string at the start of `s`: its decoded text and what follows the closing quote,
/// or the decoded prefix and `None` when the text ends first.
fn json_string_prefix(s: &str) -> Option<(String, Option<&str>)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, Some(&body[i + 1..]))),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                        let Some(unit) = (hex.len() == 4)
                            .then(|| u32::from_str_radix(&hex, 16).ok())
                            .flatten()
                        else {
                            break;
                        };
                        if (0xD800..0xDC00).contains(&unit) {
                            let rest = chars.as_str();
                            let low = rest
                                .strip_prefix("\\u")
                                .and_then(|r| r.get(..4))
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            let Some(low) = low.filter(|l| (0xDC00..0xE000).contains(l)) else {
                                break;
                            };
                            for _ in 0..6 {
                                chars.next();
                            }
                            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            out.extend(char::from_u32(code));
                        } else {
                            out.extend(char::from_u32(unit));
                        }
                    }
                    other => out.push(other),
                }
            }
            c => out.push(c),
        }
    }
    Some((out, None))
}

/// What a diagnostic may say about a SQLite value (`record::found`).
fn found_sql(v: ValueRef) -> String {
    match v {
        ValueRef::Null => "null".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => record::found(&Value::from(f)),
        ValueRef::Text(_) => record::found(&Value::String(as_text(v).unwrap_or_default())),
        ValueRef::Blob(_) => "a blob".into(),
    }
}

/// A SQLite value as text (numbers printed, blobs as UTF-8); NULL is `None`.
fn as_text(v: ValueRef) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

/// A `success` value: `Some(None)` for NULL (unknown), `None` when it says neither true nor
/// false (the caller reports it and reads it as unknown too).
fn read_success(v: ValueRef) -> Option<Option<bool>> {
    match v {
        ValueRef::Null => Some(None),
        ValueRef::Integer(i) => Some(Some(i != 0)),
        ValueRef::Real(f) if !f.is_nan() => Some(Some(f != 0.0)),
        ValueRef::Real(_) => None,
        ValueRef::Text(_) | ValueRef::Blob(_) => match as_text(v)?.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "ok" | "success" | "succeeded" | "passed" | "pass" => Some(Some(true)),
            "0" | "false" | "no" | "fail" | "failed" | "failure" | "error" => Some(Some(false)),
            _ => None,
        },
    }
}

/// An ISO-8601 timestamp (offsets honoured) or unix seconds.
fn as_time(v: ValueRef) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => from_unix_seconds(i as f64),
        ValueRef::Real(f) => from_unix_seconds(f),
        ValueRef::Text(_) | ValueRef::Blob(_) => {
            let t = as_text(v)?;
            match t.trim().parse::<f64>() {
                Ok(f) if f.is_finite() => from_unix_seconds(f),
                _ => parse_rfc3339(&t),
            }
        }
        ValueRef::Null => None,
    }
}

/// The `tool_history` columns skillc reads, in the order `sessions` reads them.
const HISTORY_COLUMNS: &[&str] = &[
    "id",
    "session_id",
    "tool_name",
    "args",
    "result_summary",
    "success",
    "error",
    "timestamp",
];

/// `tool_history` columns GAIA writes that skillc has no use for.
const HISTORY_UNUSED: &[&str] = &["duration_ms"];

/// Without an `args` column every call reads as called without arguments: keyed `<tool> {}`,
/// so a failed `pytest` and the `pytest` that worked are one call and teach nothing. When the
/// table has other columns (a store that names them `arguments` or `input`, say), each is a
/// warning, so an empty mechanical harvest has a reason; a store with no such column simply
/// records no arguments.
fn unread_argument_columns(cols: &BTreeSet<String>, store: &str, at: &SourceLoc) -> Vec<Diagnostic> {
    if cols.contains("args") {
        return Vec::new();
    }
    (cols.iter())
        .filter(|c| !HISTORY_COLUMNS.contains(&c.as_str()) && !HISTORY_UNUSED.contains(&c.as_str()))
        .map(|c| {
            let mut d = Diagnostic::new(
                codes::UNKNOWN_FIELD,
                format!(
                    "tool_history column `{c}` is ignored: skillc reads a call's arguments from `args`, \
                     which this store lacks, so every call is keyed `<tool> {{}}` and none teaches a \
                     mechanical lesson"
                ),
            )
            .subject(store)
            .at(at)
            .with("field", c.as_str())
            .with("expected", "args");
            d.help = UNREAD_ARGS_HELP;
            d
        })
        .collect()
}

const UNREAD_ARGS_HELP: &str = "if that column holds each call's arguments (JSON), compile a copy of the store with it renamed (`ALTER TABLE tool_history RENAME COLUMN … TO args`); skillc never changes the store";

/// The help of the warnings about `tool_history` values that cannot be read (`Reader::unread`).
const UNREAD_HELP: &str = "have the agent write every call's tool_name, success as 1 or 0 and timestamp as an ISO-8601 time (skillc reads the store and never changes it)";

/// The help of an L002 about `tool_history` rows without a session.
const ORPHAN_HELP: &str = "a call is attributed to the experience of its session: have the agent write tool_history.session_id for every call (skillc reads the store and never changes it)";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failures_split_into_runs_at_each_success() {
        // Rows of one key: sessions 0 and 1 fail, 2 fails then succeeds; 3 fails twice and
        // 4 once, then 5 succeeds.
        let runs = KeyRuns {
            oks: vec![(31, 2), (50, 5)],
            failures: vec![(10, 0), (20, 1), (30, 2), (40, 3), (41, 3), (45, 4)],
        };
        let got: Vec<(Vec<usize>, Option<usize>)> = (runs.episodes().into_iter())
            .map(|e| (e.sessions, e.fixed_by))
            .collect();
        assert_eq!(got, [(vec![0, 1, 2], Some(2)), (vec![3, 4], Some(5))]);
        // A success before any failure ends nothing; failures after the last are open.
        let runs = KeyRuns {
            oks: vec![(1, 0), (12, 1)],
            failures: vec![(10, 1), (20, 2), (21, 2), (30, 3)],
        };
        let got: Vec<(Vec<usize>, Option<usize>)> = (runs.episodes().into_iter())
            .map(|e| (e.sessions, e.fixed_by))
            .collect();
        assert_eq!(got, [(vec![1], Some(1)), (vec![2, 3], None)]);
    }

    #[test]
    fn truncated_args_recover_what_the_key_needs() {
        let (v, s) = parse_args(Some(
            r#"{"command": "pytest -q", "directory": "/home/dev/billing/ve"#,
        ));
        assert_eq!(s, ArgsState::Recovered);
        assert_eq!(v, json!({"command": "pytest -q", "…": true}));

        let (v, s) = parse_args(Some(
            r#"{"command": "python -m pytest tests/unit --maxfail=1 -k 'not sl"#,
        ));
        assert_eq!(s, ArgsState::Recovered);
        assert_eq!(
            opkey::operation_key("run_shell_command", &v),
            "run_shell_command pytest"
        );

        for lost in [
            r#"{"command": "python -m pyt"#,
            r#"{"command": "env A=b"#,
            r#"{"content": "import os\nprint(1)", "file_pa"#,
            r#"{"content": "import os\n"#,
            r#"{"query": "docker compose healthcheck ti"#,
            "not json at all",
        ] {
            assert_eq!(parse_args(Some(lost)).1, ArgsState::Lost, "{lost}");
        }
        let (v, s) = parse_args(Some(r#"{"file_path": "/srv/app/main.py", "content": "def ma"#));
        assert_eq!(s, ArgsState::Recovered);
        assert_eq!(
            opkey::operation_key("write_file", &v),
            "write_file /srv/app/main.py"
        );
        assert_eq!(parse_args(None), (Value::Null, ArgsState::Whole));
    }

    #[test]
    fn string_prefixes_decode_escapes() {
        assert_eq!(
            json_string_prefix(r#""a\"b\u00e9\ud83d\ude00" rest"#),
            Some(("a\"bé😀".to_string(), Some(" rest")))
        );
        assert_eq!(
            json_string_prefix(r#""cut \u00"#),
            Some(("cut ".to_string(), None))
        );
    }

    #[test]
    fn checks_and_domains_from_programs() {
        let rules = Rules::builtin();
        let p = &rules.policy;
        assert_eq!(check_label("pytest -q", p).as_deref(), Some("pytest"));
        assert_eq!(
            check_label("PYTHONPATH=. python3 -m pytest tests", p).as_deref(),
            Some("pytest")
        );
        assert_eq!(
            check_label("cargo test --workspace", p).as_deref(),
            Some("cargo test")
        );
        assert_eq!(check_label("cargo build --locked", p), None);
        assert_eq!(check_label("npm test", p).as_deref(), Some("npm test"));
        assert_eq!(check_label("go test ./...", p).as_deref(), Some("go test"));
        assert_eq!(check_label("docker compose up -d", p), None);
        let a = &rules.aliases;
        assert_eq!(op_domain(Some("pytest -q"), a), "python");
        assert_eq!(op_domain(Some("ls -la"), a), "general");
        assert_eq!(op_domain(None, a), "general");
        assert_eq!(key_domain("run_shell_command docker", a), "docker");
        assert_eq!(key_domain("read_file /a/b.py", a), "general");
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(ident("lesson"), r#""lesson""#);
        assert_eq!(ident(r#"we"ird"#), r#""we""ird""#);
        assert_eq!(ident(r#""""#), r#""""""""#);
    }

    #[test]
    fn workspace_context() {
        assert_eq!(
            workspace("workspace: /home/dev/billing\nbranch main").as_deref(),
            Some("/home/dev/billing")
        );
        assert_eq!(workspace("project: x"), None);
        assert_eq!(
            file_uri(Path::new("/a b/m?#%.db")),
            "file:/a b/m%3f%23%25.db?mode=ro"
        );
    }
}
