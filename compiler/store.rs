//! The state store (SQLite, DESIGN §7): the append-only journal of user decisions, the ledger
//! of the last compile (one row per lesson, so `lessons show` reads one row and no ledger
//! meets SQLite's 1 GB value limit) and the list of files it generated. Plus the output lock.
//!
//! The store is excluded from byte-identity and never removed by skillc. A store that is not
//! skillc's (other tables, no skillc marker) is refused rather than written to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::cluster::fx::FxMap;
use crate::model::{Action, Decision, Millis};

const APP: &str = "skillc";
/// 2: the ledger one row per lesson (1 held it as one JSON text in `compiles.ledger`).
const SCHEMA: i64 = 2;

#[derive(Debug)]
pub enum StoreError {
    /// Not a skillc store (other application's database, or not SQLite at all).
    Foreign(PathBuf, String),
    /// Another compile holds the output directory.
    Locked {
        lock: PathBuf,
        holder: String,
    },
    Sqlite(PathBuf, rusqlite::Error),
    Io(PathBuf, std::io::Error),
    /// The state store's path cannot hold one: what is wrong with it and what to do.
    Unusable(PathBuf, String),
}

/// The advice every unusable `--state` path ends with.
const STATE_ADVICE: &str = "give --state the path of a file in a writable directory (a new path starts an empty store; the default is <out>/.skillc/state.db)";

impl StoreError {
    /// An SQLite error opening or first writing the store at `path`, said as what is wrong
    /// with the path when it is about the file rather than its content.
    fn opening(path: &Path, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
        let why = match e.sqlite_error_code() {
            Some(ReadOnly | PermissionDenied) => {
                "cannot be written (the file, or the directory that holds it, is read-only for this user; SQLite also writes -wal and -shm files beside it)"
            }
            Some(CannotOpen) => {
                "cannot be opened (check that its directory exists and that this user may create files in it)"
            }
            _ => return StoreError::Sqlite(path.to_path_buf(), e),
        };
        StoreError::Unusable(path.to_path_buf(), format!("{why}: {e}"))
    }
}

/// A path that exists but is no file: a directory, or a device, pipe or socket such as
/// `/dev/null`, where SQLite could only fail with "disk I/O error".
fn usable(path: &Path) -> Result<(), StoreError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let why = if meta.is_dir() {
        format!(
            "is a directory, and --state names the database file itself (such as {})",
            path.join("state.db").display()
        )
    } else if !meta.is_file() {
        "is not a regular file (a device, pipe or socket, such as /dev/null): the state store is a SQLite database skillc keeps between compiles, with the user's decisions in it".to_string()
    } else {
        return Ok(());
    };
    Err(StoreError::Unusable(path.to_path_buf(), why))
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Foreign(p, why) => write!(f, "{} is not a skillc state store: {why}", p.display()),
            StoreError::Locked { lock, holder } => {
                write!(
                    f,
                    "output is locked by another compile ({holder}); lock file {}",
                    lock.display()
                )
            }
            StoreError::Sqlite(p, e) => write!(f, "state store {}: {e}", p.display()),
            StoreError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            StoreError::Unusable(p, why) => write!(f, "state store {} {why}; {STATE_ADVICE}", p.display()),
        }
    }
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The last ledger of a store an older skillc wrote, opened read-only (and so not
    /// migrated): its lessons by id, split from the one text schema 1 kept them in.
    unmigrated_ledger: Option<BTreeMap<String, String>>,
    /// The store has the `former_lessons` table (one an older skillc wrote, opened read-only,
    /// may not).
    has_former: bool,
    /// A read-only store read from a private copy: the copy, removed after `conn` closes.
    _copy: Option<Box<dyn Send>>,
}

/// Whether `conn` holds a skillc store this skillc reads (`false` for an empty database); a
/// database with other tables, or a store a newer skillc laid out otherwise, is refused. An
/// older layout is read as it is (`schema_1_ledger`) and upgraded by `Store::open`.
fn layout(conn: &Connection, path: &Path) -> Result<bool, StoreError> {
    let sql = |e| StoreError::Sqlite(path.to_path_buf(), e);
    let tables: Vec<String> = (conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'"))
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| match e.sqlite_error_code() {
            // A file SQLite cannot read as a database is something else's.
            Some(rusqlite::ErrorCode::NotADatabase) | None => {
                StoreError::Foreign(path.to_path_buf(), e.to_string())
            }
            // A file it could not open or read at all says so.
            Some(_) => StoreError::opening(path, e),
        })?;
    if tables.is_empty() {
        return Ok(false);
    }
    let meta = |key: &str| -> Result<Option<String>, StoreError> {
        if !tables.iter().any(|t| t == "skillc_meta") {
            return Ok(None);
        }
        conn.query_row("SELECT value FROM skillc_meta WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .optional()
        .map_err(sql)
    };
    if meta("application")?.as_deref() != Some(APP) {
        return Err(StoreError::Foreign(
            path.to_path_buf(),
            format!("it holds other tables ({})", tables.join(", ")),
        ));
    }
    // A store older than the `schema` key is schema 1.
    match meta("schema")? {
        None => Ok(true),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if n <= SCHEMA => Ok(true),
            _ => Err(StoreError::Foreign(
                path.to_path_buf(),
                format!("its schema {v} is newer than this skillc reads ({SCHEMA}); use a newer skillc"),
            )),
        },
    }
}

/// The lessons of the last ledger of a schema-1 store, which kept it as one JSON text in
/// `compiles.ledger`, as (id, JSON object); `None` when there is no such column (the ledger
/// is in rows).
fn schema_1_ledger(conn: &Connection) -> rusqlite::Result<Option<Vec<(String, String)>>> {
    let has_column = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('compiles') WHERE name = 'ledger'",
        [],
        |r| r.get::<_, i64>(0),
    )? > 0;
    if !has_column {
        return Ok(None);
    }
    let ledger: Option<String> = conn
        .query_row("SELECT ledger FROM compiles ORDER BY seq DESC LIMIT 1", [], |r| {
            r.get(0)
        })
        .optional()?;
    let parsed: serde_json::Value = ledger
        .and_then(|l| serde_json::from_str(&l).ok())
        .unwrap_or_default();
    let lessons = (parsed["lessons"].as_array().into_iter().flatten())
        .filter_map(|l| Some((l["id"].as_str()?.to_string(), l.to_string())))
        .collect();
    Ok(Some(lessons))
}

impl Store {
    /// Opens (creating if needed) a skillc store.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        usable(path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::Unusable(
                    path.to_path_buf(),
                    format!(
                        "cannot be created: its directory {} cannot be made ({e})",
                        parent.display()
                    ),
                )
            })?;
        }
        let sql = |e| StoreError::Sqlite(path.to_path_buf(), e);
        let opening = |e| StoreError::opening(path, e);
        let conn = Connection::open(path).map_err(opening)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(sql)?;
        layout(&conn, path)?;
        // A new store takes large pages (an existing one keeps its own): a large compile stores
        // half a gigabyte of lesson rows, and 4 KiB pages cost a system call each, twice (WAL,
        // then checkpoint).
        conn.pragma_update(None, "page_size", 65536).map_err(opening)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(opening)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS skillc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS journal (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 at INTEGER NOT NULL,
                 action TEXT NOT NULL,
                 target TEXT NOT NULL,
                 text TEXT
             );
             CREATE TABLE IF NOT EXISTS compiles (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 now INTEGER NOT NULL,
                 lessons INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS lessons (id TEXT PRIMARY KEY, json TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS former_lessons (id TEXT PRIMARY KEY, json TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS outputs (path TEXT PRIMARY KEY);",
        )
        .map_err(sql)?;
        conn.execute(
            "INSERT OR IGNORE INTO skillc_meta (key, value) VALUES ('application', ?1), ('schema', ?2)",
            params![APP, SCHEMA.to_string()],
        )
        .map_err(sql)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            unmigrated_ledger: None,
            has_former: true,
            _copy: None,
        };
        store.migrate_ledger_rows()?;
        Ok(store)
    }

    /// Opens an existing store only to read it, changing no file: neither the store nor the
    /// files SQLite keeps beside it are created or written (`diff`, which must leave the
    /// output exactly as it was, and the pipeline's look at the last ledger). `Ok(None)` when
    /// there is no store at `path`. A store a newer skillc wrote is refused; one an older skillc
    /// wrote is read as it is: its journal is the same, and its last ledger is split into
    /// lessons in memory, as `open` would split it into rows.
    pub fn open_read_only(path: &Path) -> Result<Option<Store>, StoreError> {
        if !path.exists() {
            return Ok(None);
        }
        usable(path)?;
        let (conn, copy) =
            crate::load::open_untouched(path).map_err(|e| StoreError::Foreign(path.to_path_buf(), e))?;
        // An empty database is a store no compile has written yet (`open` would create it).
        if !layout(&conn, path)? {
            return Ok(None);
        }
        let unmigrated_ledger = (schema_1_ledger(&conn))
            .map_err(|e| StoreError::Sqlite(path.to_path_buf(), e))?
            .map(|lessons| lessons.into_iter().collect());
        // A store an older skillc wrote has no table of former lessons (and `open` would add it).
        let has_former = (conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'former_lessons'",
            [],
            |r| r.get::<_, i64>(0),
        ))
        .map_err(|e| StoreError::Sqlite(path.to_path_buf(), e))?
            > 0;
        Ok(Some(Store {
            conn,
            path: path.to_path_buf(),
            unmigrated_ledger,
            has_former,
            _copy: copy,
        }))
    }

    /// Schema 1 kept the ledger as one text in `compiles.ledger`: split it into lesson rows
    /// and drop the column. The journal is untouched.
    fn migrate_ledger_rows(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let e = |e| StoreError::Sqlite(path.clone(), e);
        let tx = self.conn.transaction().map_err(e)?;
        let Some(lessons) = schema_1_ledger(&tx).map_err(e)? else {
            return Ok(());
        };
        {
            let mut st = tx
                .prepare("INSERT OR REPLACE INTO lessons (id, json) VALUES (?1, ?2)")
                .map_err(e)?;
            for (id, json) in &lessons {
                st.execute(params![id, json]).map_err(e)?;
            }
        }
        tx.execute_batch(
            "ALTER TABLE compiles DROP COLUMN ledger;
             UPDATE skillc_meta SET value = '2' WHERE key = 'schema';",
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::Sqlite(self.path.clone(), e)
    }

    /// Every decision, in journal order.
    pub fn decisions(&self) -> Result<Vec<Decision>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT seq, at, action, target, text FROM journal ORDER BY seq")
            .map_err(self.err())?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(self.err())?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, at, action, target, text) = row.map_err(self.err())?;
            if let Some(action) = Action::parse(&action) {
                out.push(Decision {
                    seq,
                    at,
                    action,
                    target,
                    text,
                });
            }
        }
        Ok(out)
    }

    /// Appends a decision at the time of the last compile's latest `recorded_at`.
    pub fn record(
        &mut self,
        action: Action,
        target: &str,
        text: Option<&str>,
    ) -> Result<Decision, StoreError> {
        let at = self.last_now()?;
        let tx = self
            .conn
            .transaction()
            .map_err(|e| StoreError::Sqlite(self.path.clone(), e))?;
        tx.execute(
            "INSERT INTO journal (at, action, target, text) VALUES (?1, ?2, ?3, ?4)",
            params![at, action.as_str(), target, text],
        )
        .map_err(|e| StoreError::Sqlite(self.path.clone(), e))?;
        let seq = tx.last_insert_rowid();
        tx.commit()
            .map_err(|e| StoreError::Sqlite(self.path.clone(), e))?;
        Ok(Decision {
            seq,
            at,
            action,
            target: target.to_string(),
            text: text.map(String::from),
        })
    }

    /// The files the last compile generated (what stale-file removal may delete).
    pub fn outputs(&self) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT path FROM outputs ORDER BY path")
            .map_err(self.err())?;
        let rows = st.query_map([], |r| r.get(0)).map_err(self.err())?;
        rows.collect::<Result<Vec<String>, _>>().map_err(self.err())
    }

    /// The latest `recorded_at` of the last compile (0 before the first).
    pub fn last_now(&self) -> Result<Millis, StoreError> {
        let now: Option<i64> = self
            .conn
            .query_row("SELECT now FROM compiles ORDER BY seq DESC LIMIT 1", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err())?;
        Ok(now.unwrap_or(0))
    }

    /// Whether a compile has been recorded (the ledger commands need one).
    pub fn has_compile(&self) -> Result<bool, StoreError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM compiles", [], |r| r.get(0))
            .map_err(self.err())?;
        Ok(n > 0)
    }

    /// One lesson of the last compile's ledger, as its JSON object. The statement is cached:
    /// a compile may ask for each of the tens of thousands of ids an `in_play` list names.
    pub fn ledger_lesson(&self, id: &str) -> Result<Option<String>, StoreError> {
        if let Some(ledger) = &self.unmigrated_ledger {
            return Ok(ledger.get(id).cloned());
        }
        (self.conn)
            .prepare_cached("SELECT json FROM lessons WHERE id = ?1")
            .and_then(|mut st| st.query_row(params![id], |r| r.get(0)).optional())
            .map_err(self.err())
    }

    /// The identity of a lesson some compile of this store had, as a JSON object: the last
    /// ledger's row, or else what `former_lessons` kept of it when a later ledger lost it
    /// (`id`, `founder`, `text`, `domain`, `kind`, `operation_key`, `evidence`). A lesson
    /// re-founded because its founder left the input can only be recognised by what it was,
    /// and the journal and `in_play` lists go on naming it after the compile that lost it.
    pub fn known_lesson(&self, id: &str) -> Result<Option<String>, StoreError> {
        if let Some(row) = self.ledger_lesson(id)? {
            return Ok(Some(row));
        }
        if !self.has_former {
            return Ok(None);
        }
        (self.conn)
            .prepare_cached("SELECT json FROM former_lessons WHERE id = ?1")
            .and_then(|mut st| st.query_row(params![id], |r| r.get(0)).optional())
            .map_err(self.err())
    }

    /// A field of what `former_lessons` kept of a lesson no longer in the last ledger.
    fn former_field(&self, id: &str, field: &str) -> Result<Option<serde_json::Value>, StoreError> {
        if !self.has_former || self.ledger_lesson(id)?.is_some() {
            return Ok(None);
        }
        let row: Option<String> = (self.conn)
            .prepare_cached("SELECT json FROM former_lessons WHERE id = ?1")
            .and_then(|mut st| st.query_row(params![id], |r| r.get(0)).optional())
            .map_err(self.err())?;
        let row = row.and_then(|json| serde_json::from_str::<serde_json::Value>(&json).ok());
        Ok(row.and_then(|mut r| r.get_mut(field).map(serde_json::Value::take)))
    }

    /// The "now" of the compile whose ledger lost lesson `id` (the night it was re-founded),
    /// when the last ledger does not have it and a compile recorded when it left (older
    /// stores did not).
    pub fn lost_at(&self, id: &str) -> Result<Option<Millis>, StoreError> {
        Ok(self.former_field(id, "lost_at")?.and_then(|v| v.as_i64()))
    }

    /// The id a compile re-founded lesson `id` as (its S004's new id), once the last ledger
    /// has lost it: the S004 itself is reported on the night of the re-founding only.
    pub fn refounded_as(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .former_field(id, "now_id")?
            .and_then(|v| v.as_str().map(String::from)))
    }

    /// Calls `f` with each lesson of the last compile's ledger, sorted by id, as its JSON
    /// object. Nothing is kept: at a million records the rows are half a gigabyte, and a
    /// caller that needs a few fields of each, or a few rows, holds only those.
    pub fn each_ledger_lesson<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(ledger) = &self.unmigrated_ledger {
            return ledger.values().try_for_each(|json| f(json));
        }
        let mut st = self
            .conn
            .prepare("SELECT json FROM lessons ORDER BY id")
            .map_err(self.err())?;
        let mut rows = st.query([]).map_err(self.err())?;
        while let Some(row) = rows.next().map_err(self.err())? {
            let json = row.get_ref(0).and_then(|v| Ok(v.as_str()?)).map_err(self.err())?;
            f(json)?;
        }
        Ok(())
    }

    /// Stages a compile's ledger, as (lesson id, JSON object) rows, in a transaction that
    /// `StagedCompile::finish` commits with the compile's time and the files it generated.
    /// Only the latest ledger is kept; each lesson carries its own history.
    ///
    /// Staging comes first so the caller can free the ledger's text and write the other
    /// files meanwhile; a compile that is never finished leaves the store as it was.
    pub fn stage_compile(
        &mut self,
        now: Millis,
        ledger: &[(&str, &str)],
    ) -> Result<StagedCompile<'_>, StoreError> {
        let mut staged = self.begin_compile(now, ledger)?;
        staged.put(ledger.iter().copied())?;
        Ok(staged)
    }

    /// `stage_compile` in two steps, for a caller that frees the ledger's text as its rows are
    /// stored: this one compares `ledger` with the stored rows and stages the removal of
    /// lessons it no longer has; `StagedCompile::put` then takes the same rows, in order, in as
    /// many calls as the caller likes.
    pub fn begin_compile(
        &mut self,
        now: Millis,
        ledger: &[(&str, &str)],
    ) -> Result<StagedCompile<'_>, StoreError> {
        // The first ledger goes straight into the database file: WAL would write it twice
        // (log, then checkpoint), and an empty store has no reader to keep working meanwhile.
        // Another connection keeps the store in WAL, which only costs time. A rollback journal
        // is only safe from a power cut with `synchronous=FULL`, which stays.
        // Later compiles, in WAL, do not wait for the disk: their record can always be rebuilt
        // by compiling again (journal entries still wait, with `FULL`).
        let first = !self.has_compile()?;
        if first {
            self.try_journal_mode("DELETE");
        } else {
            self.conn
                .pragma_update(None, "synchronous", "NORMAL")
                .map_err(self.err())?;
        }
        let mut staged = StagedCompile {
            store: self,
            first,
            open: true,
            gone: Vec::new(),
            plan: Vec::new(),
            next: 0,
        };
        staged
            .store
            .conn
            .execute_batch("BEGIN")
            .map_err(staged.store.err())?;
        staged.compare_rows(now, ledger).map_err(staged.store.err())?;
        Ok(staged)
    }

    /// Asks for a journal mode. Either mode keeps the store consistent, so a refusal (another
    /// connection is open) is no error; `open` asks for WAL again.
    fn try_journal_mode(&self, mode: &str) {
        let sql = format!("PRAGMA journal_mode = {mode}");
        let _ = self.conn.query_row(&sql, [], |_| Ok(()));
    }
}

/// The fields of a ledger row that name its lesson's identity and evidence, as a JSON object
/// (a row that is no JSON object is kept as it is), with `lost_at`: the "now" of the compile
/// whose ledger lost it — the night a re-founding happened, which its S004 is reported on.
fn former_identity(json: &str, now: Millis) -> String {
    let Ok(serde_json::Value::Object(mut row)) = serde_json::from_str(json) else {
        return json.to_string();
    };
    const KEPT: [&str; 7] = [
        "id",
        "founder",
        "text",
        "domain",
        "kind",
        "operation_key",
        "evidence",
    ];
    row.retain(|k, _| KEPT.contains(&k.as_str()));
    row.insert("lost_at".into(), now.into());
    serde_json::Value::Object(row).to_string()
}

/// Ledger rows per multi-row upsert. A statement a row cost about 10 000 instructions a row,
/// a third of it the statement's own work (cursors opened and closed, the id index searched
/// from its root, the statement reset); 64 rows a statement share it.
const UPSERT_BATCH: usize = 64;

/// The upsert of `rows` ledger rows: each row's id and JSON as two parameters, rows in order.
/// Rows of one statement are stored one after another, as separate statements store them.
fn upsert_sql(rows: usize) -> String {
    let values = vec!["(?, ?)"; rows].join(", ");
    format!(
        "INSERT INTO lessons (id, json) VALUES {values} ON CONFLICT (id) DO UPDATE SET json = excluded.json"
    )
}

/// The insert of `rows` ledger rows whose ids are not stored. `OR FAIL` and no upsert clause:
/// SQLite then keeps no statement journal for it. The upsert, which may stop half way with an
/// abort, copies every page a statement changes that was there before it into a temporary
/// file first: 300 MB of writes for the 84 MB of rows of a 100 k compile.
fn insert_sql(rows: usize) -> String {
    let values = vec!["(?, ?)"; rows].join(", ");
    format!("INSERT OR FAIL INTO lessons (id, json) VALUES {values}")
}

/// What `put` does with a ledger row, by what the store holds under its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Put {
    /// Stored with this text already: nothing.
    Keep,
    /// Stored with another text: upserted.
    Update,
    /// Not stored: inserted.
    Insert,
}

/// A compile whose ledger rows are staged in an open transaction (`Store::stage_compile`).
/// Dropped unfinished, it rolls back.
pub struct StagedCompile<'a> {
    store: &'a mut Store,
    /// The store's first compile (written without WAL).
    first: bool,
    /// Neither committed nor rolled back yet.
    open: bool,
    /// The last compile's lessons this ledger does not have, as their JSON objects, by id.
    gone: Vec<String>,
    /// Per ledger row, what `put` does with it.
    plan: Vec<Put>,
    /// The ledger row `put` takes next.
    next: usize,
}

impl StagedCompile<'_> {
    /// The last compile's lessons that the staged ledger no longer has (their rows are
    /// deleted when the compile is recorded), as JSON objects sorted by id: a record
    /// directory only grows, so a lesson that leaves the ledger lost its evidence or was
    /// re-founded, and a nightly job should hear of it.
    pub fn gone(&self) -> &[String] {
        &self.gone
    }

    /// Keeps, beside what `former_lessons` knows of each re-founded lesson's old id, the id it
    /// goes on as (`old → new`, the compile's S004s), so that a decision on the old id is
    /// pointed at the new one on later nights too (`Store::refounded_as`).
    pub fn renamed<'m>(
        &mut self,
        old_to_new: impl IntoIterator<Item = (&'m String, &'m String)>,
    ) -> Result<(), StoreError> {
        let conn = &self.store.conn;
        let run = || -> rusqlite::Result<()> {
            let mut read = conn.prepare_cached("SELECT json FROM former_lessons WHERE id = ?1")?;
            let mut write = conn.prepare_cached("UPDATE former_lessons SET json = ?2 WHERE id = ?1")?;
            for (old, new) in old_to_new {
                let row: Option<String> = read.query_row(params![old], |r| r.get(0)).optional()?;
                let Some(serde_json::Value::Object(mut row)) =
                    row.and_then(|json| serde_json::from_str(&json).ok())
                else {
                    continue;
                };
                if row.get("now_id").and_then(|v| v.as_str()) == Some(new.as_str()) {
                    continue;
                }
                row.insert("now_id".into(), new.as_str().into());
                write.execute(params![old, serde_json::Value::Object(row).to_string()])?;
            }
            Ok(())
        };
        run().map_err(self.store.err())
    }

    /// Records the compile with `outputs`, the files it generated; `None` (writing them
    /// failed) rolls everything back. Returns whether the compile was recorded.
    pub fn finish(mut self, outputs: Option<&[String]>) -> Result<bool, StoreError> {
        let Some(outputs) = outputs else {
            return self.close("ROLLBACK").map(|()| false);
        };
        self.record_outputs(outputs).map_err(self.store.err())?;
        self.close("COMMIT").map(|()| true)
    }

    /// Ends the transaction (`COMMIT` or `ROLLBACK`) and puts the connection's journal
    /// settings back, once.
    fn close(&mut self, end: &str) -> Result<(), StoreError> {
        if !std::mem::take(&mut self.open) {
            return Ok(());
        }
        let conn = &self.store.conn;
        let ended = conn.execute_batch(end);
        let restored = if self.first {
            self.store.try_journal_mode("WAL");
            Ok(())
        } else {
            conn.pragma_update(None, "synchronous", "FULL")
        };
        ended.and(restored).map_err(self.store.err())
    }

    /// Stages the next rows of the ledger `Store::begin_compile` compared, in its order.
    /// New rows and changed ones go in batches of their own; a new row's rowid follows the
    /// new rows before it either way, and a changed row keeps its own.
    pub fn put<'r>(&mut self, rows: impl IntoIterator<Item = (&'r str, &'r str)>) -> Result<(), StoreError> {
        let mut inserts = Vec::with_capacity(UPSERT_BATCH);
        let mut updates = Vec::with_capacity(UPSERT_BATCH);
        for row in rows {
            let put = self.plan.get(self.next).copied().unwrap_or(Put::Update);
            self.next += 1;
            match put {
                Put::Keep => {}
                Put::Insert => {
                    inserts.push(row);
                    if inserts.len() == UPSERT_BATCH {
                        self.insert(&inserts)?;
                        inserts.clear();
                    }
                }
                Put::Update => {
                    updates.push(row);
                    if updates.len() == UPSERT_BATCH {
                        self.upsert(&updates)?;
                        updates.clear();
                    }
                }
            }
        }
        inserts.chunks(1).try_for_each(|row| self.insert(row))?;
        updates.chunks(1).try_for_each(|row| self.upsert(row))
    }

    /// Inserts `rows` (one, or `UPSERT_BATCH`) whose ids are not stored, in their order, in one
    /// statement. If one is after all (a ledger that holds an id twice), the rows before it are
    /// in and the upsert of them all leaves what it would have left alone.
    fn insert(&self, rows: &[(&str, &str)]) -> Result<(), StoreError> {
        let mut insert = (self.store.conn)
            .prepare_cached(&insert_sql(rows.len()))
            .map_err(self.store.err())?;
        let values = rows.iter().flat_map(|&(id, json)| [id, json]);
        match insert.execute(rusqlite::params_from_iter(values)) {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                self.upsert(rows)
            }
            Err(e) => Err(self.store.err()(e)),
        }
    }

    /// Inserts or replaces `rows` (one, or `UPSERT_BATCH`), in their order, in one statement.
    fn upsert(&self, rows: &[(&str, &str)]) -> Result<(), StoreError> {
        let mut upsert = (self.store.conn)
            .prepare_cached(&upsert_sql(rows.len()))
            .map_err(self.store.err())?;
        let values = rows.iter().flat_map(|&(id, json)| [id, json]);
        upsert
            .execute(rusqlite::params_from_iter(values))
            .map_err(self.store.err())?;
        Ok(())
    }

    /// Asks the disk to keep what is staged so far, ahead of `finish`: a first compile's
    /// half gigabyte of rows is otherwise written out inside the commit, while nothing else
    /// runs. Early is no less safe: until the commit, a crash rolls the rows back (WAL:
    /// they are in the log, and this syncs the database file, which the log has not touched).
    pub fn sync(&self) -> Result<(), StoreError> {
        use rusqlite::ffi;
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: the connection's own handle; `SQLITE_FCNTL_FILE_POINTER` stores the main
        // database's open file in `file`, which lives as long as the connection, and its
        // `xSync` is the file's sync as SQLite itself calls it. Nothing else uses the
        // connection meanwhile: `self` borrows its store mutably.
        let rc = unsafe {
            let db = self.store.conn.handle();
            let rc = ffi::sqlite3_file_control(
                db,
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&raw mut file).cast(),
            );
            match (rc, file.as_ref().and_then(|f| f.pMethods.as_ref())) {
                (ffi::SQLITE_OK, Some(methods)) => match methods.xSync {
                    Some(sync) => sync(file, ffi::SQLITE_SYNC_NORMAL),
                    None => ffi::SQLITE_OK,
                },
                (rc, _) => rc,
            }
        };
        match rc {
            ffi::SQLITE_OK => Ok(()),
            rc => Err(self.store.err()(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                None,
            ))),
        }
    }

    /// The compile's time, and which ledger rows to write, inside the open transaction; the
    /// rows of lessons the ledger no longer has are removed.
    fn compare_rows(&mut self, now: Millis, ledger: &[(&str, &str)]) -> rusqlite::Result<()> {
        let conn = &self.store.conn;
        conn.execute("DELETE FROM compiles", [])?;
        conn.execute(
            "INSERT INTO compiles (now, lessons) VALUES (?1, ?2)",
            params![now, ledger.len() as i64],
        )?;
        // Rows are rewritten only where the lesson changed: a nightly re-compile of a store
        // that mostly grew leaves most of a half-gigabyte ledger untouched on disk. The old rows
        // are read in one table scan and compared here, which is several times cheaper than a
        // keyed upsert that compares inside SQLite, row by row. The ledger's ids are looked
        // up by a map made at the first stored row: a first compile finds none to compare.
        let mut index: Option<FxMap<&[u8], usize>> = None;
        // Rows to write: every lesson but those stored already with the same text.
        let mut plan = vec![Put::Insert; ledger.len()];
        let mut gone = Vec::new();
        let mut gone_rows = Vec::new();
        {
            let mut scan = conn.prepare("SELECT id, json, rowid FROM lessons")?;
            let mut rows = scan.query([])?;
            while let Some(row) = rows.next()? {
                let index = index.get_or_insert_with(|| {
                    (ledger.iter().enumerate())
                        .map(|(i, (id, _))| (id.as_bytes(), i))
                        .collect()
                });
                let text = |i| row.get_ref(i).map(|v| v.as_bytes().unwrap_or_default());
                match index.get(text(0)?) {
                    Some(&i) => {
                        plan[i] = match text(1)? == ledger[i].1.as_bytes() {
                            true => Put::Keep,
                            false => Put::Update,
                        }
                    }
                    None => {
                        gone.push(row.get::<_, i64>(2)?);
                        let id = String::from_utf8_lossy(text(0)?).into_owned();
                        gone_rows.push((id, String::from_utf8_lossy(text(1)?).into_owned()));
                    }
                }
            }
        }
        gone_rows.sort_unstable();
        // What a lost lesson was is kept (its identity, not its history), so a later compile
        // still follows a decision or an `in_play` entry naming it to the lesson that re-founded
        // it, as the compile that lost it did (`Store::known_lesson`).
        let mut keep = conn.prepare("INSERT OR REPLACE INTO former_lessons (id, json) VALUES (?1, ?2)")?;
        for (id, json) in &gone_rows {
            keep.execute(params![id, former_identity(json, now)])?;
        }
        self.gone = gone_rows.into_iter().map(|(_, json)| json).collect();
        let mut remove = conn.prepare("DELETE FROM lessons WHERE rowid = ?1")?;
        for rowid in &gone {
            remove.execute(params![rowid])?;
        }
        self.plan = plan;
        Ok(())
    }

    fn record_outputs(&mut self, outputs: &[String]) -> rusqlite::Result<()> {
        let conn = &self.store.conn;
        conn.execute("DELETE FROM outputs", [])?;
        {
            let mut st = conn.prepare("INSERT INTO outputs (path) VALUES (?1)")?;
            for o in outputs {
                st.execute(params![o])?;
            }
        }
        Ok(())
    }
}

impl Drop for StagedCompile<'_> {
    fn drop(&mut self) {
        // Unfinished (an error on the way): nothing of this compile is recorded. The store
        // stays consistent either way, so a failure here has nobody to tell.
        let _ = self.close("ROLLBACK");
    }
}

/// Holds an exclusive advisory lock (`flock`) on `<out>/.skillc/lock` while a compile writes.
/// The kernel releases it when the process ends, however it ends, so a lock is never stale:
/// no process has to judge whether another is dead, and two compiles cannot both take over a
/// dead one's lock (creating, filling and removing a lock file each left such a window). The
/// file itself stays; it names the last holder, for the message a refused compile prints.
pub struct OutputLock {
    _file: std::fs::File,
}

impl OutputLock {
    pub fn acquire(out: &Path) -> Result<OutputLock, StoreError> {
        use std::io::Write;
        let dir = out.join(".skillc");
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::Io(dir.clone(), e))?;
        let path = dir.join("lock");
        let io = |e| StoreError::Io(path.clone(), e);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // The holder may not have written its name yet.
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = match holder.trim() {
                    "" => "unknown".to_string(),
                    named => named.to_string(),
                };
                return Err(StoreError::Locked { lock: path, holder });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let me = format!("pid {} on {}", std::process::id(), hostname());
        file.set_len(0).map_err(io)?;
        file.write_all(me.as_bytes()).map_err(io)?;
        Ok(OutputLock { _file: file })
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lesson of the last compile's ledger, sorted by id, as JSON objects.
    fn ledger_rows(s: &Store) -> Vec<String> {
        let mut all = Vec::new();
        s.each_ledger_lesson(|json| {
            all.push(json.to_string());
            Ok::<(), StoreError>(())
        })
        .unwrap();
        all
    }

    fn page_size(s: &Store) -> i64 {
        s.conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap()
    }

    /// A fresh, empty directory of this process for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A store as schema 1 laid it out, its last ledger one text, with one decision.
    fn schema_1_store(path: &Path) {
        let ledger = r#"{"generator": "skillc", "version": 1, "lessons": [
{"id":"L1a2b3c4d5e6f","kind":"do","text":"Run go vet before go test.","status":"active"},
{"id":"L9f8e7d6c5b4a","kind":"avoid","text":"pip install into the system Python","status":"superseded"}
]}
"#;
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "CREATE TABLE skillc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO skillc_meta VALUES ('application', 'skillc'), ('schema', '1');
             CREATE TABLE journal (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
                 action TEXT NOT NULL, target TEXT NOT NULL, text TEXT);
             INSERT INTO journal (at, action, target, text)
                 VALUES (1700000000000, 'pin', 'L1a2b3c4d5e6f', NULL);
             CREATE TABLE compiles (seq INTEGER PRIMARY KEY AUTOINCREMENT, now INTEGER NOT NULL,
                 lessons INTEGER NOT NULL, ledger TEXT NOT NULL);
             CREATE TABLE outputs (path TEXT PRIMARY KEY);",
        )
        .unwrap();
        c.execute(
            "INSERT INTO compiles (now, lessons, ledger) VALUES (1700000500000, 2, ?1)",
            params![ledger],
        )
        .unwrap();
    }

    #[test]
    fn a_schema_1_store_opened_read_only_is_read_as_it_is() {
        let dir = scratch("skillc-store-v1-ro");
        let path = dir.join("state.db");
        schema_1_store(&path);
        let bytes = std::fs::read(&path).unwrap();
        let s = Store::open_read_only(&path).unwrap().expect("a store");
        assert_eq!(s.decisions().unwrap().len(), 1);
        assert!(s.has_compile().unwrap());
        let row = s
            .ledger_lesson("L9f8e7d6c5b4a")
            .unwrap()
            .expect("the old ledger's lesson");
        let v: serde_json::Value = serde_json::from_str(&row).unwrap();
        assert_eq!(v["text"], "pip install into the system Python");
        assert_eq!(s.ledger_lesson("L000000000000").unwrap(), None);
        let ids: Vec<String> = (ledger_rows(&s).iter())
            .map(|r| {
                serde_json::from_str::<serde_json::Value>(r).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(ids, ["L1a2b3c4d5e6f", "L9f8e7d6c5b4a"]);
        drop(s);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "a read-only open migrated the store"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no file beside the store"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_schema_1_store_keeps_its_journal_and_gets_its_ledger_as_rows() {
        let dir = scratch("skillc-store-v1");
        let path = dir.join("state.db");
        schema_1_store(&path);
        let s = Store::open(&path).unwrap();
        assert_eq!(page_size(&s), 4096, "an existing store keeps its pages");
        assert_eq!(s.decisions().unwrap().len(), 1, "the journal survives");
        assert_eq!(s.last_now().unwrap(), 1_700_000_500_000);
        assert!(s.has_compile().unwrap());
        let row = s
            .ledger_lesson("L9f8e7d6c5b4a")
            .unwrap()
            .expect("a row per lesson");
        let v: serde_json::Value = serde_json::from_str(&row).unwrap();
        assert_eq!(v["text"], "pip install into the system Python");
        assert_eq!(ledger_rows(&s).len(), 2);
        drop(s);
        // Opening again finds nothing left to migrate.
        let s = Store::open(&path).unwrap();
        assert_eq!(ledger_rows(&s).len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ledger_rows_stream_in_id_order_and_a_callers_error_stops_the_walk() {
        let dir = scratch("skillc-store-stream");
        let mut s = Store::open(&dir.join("state.db")).unwrap();
        let npm = r#"{"id":"Lc0ffee000001","text":"Use npm ci in CI, not npm install."}"#;
        let go = r#"{"id":"L1a2b3c4d5e6f","text":"Run go vet before go test."}"#;
        let pip = r#"{"id":"L9f8e7d6c5b4a","text":"Use a virtualenv, not the system pip."}"#;
        s.stage_compile(
            1,
            &[
                ("Lc0ffee000001", npm),
                ("L1a2b3c4d5e6f", go),
                ("L9f8e7d6c5b4a", pip),
            ],
        )
        .unwrap()
        .finish(Some(&[]))
        .unwrap();
        let mut seen = Vec::new();
        let stopped = s.each_ledger_lesson(|json| {
            seen.push(json.to_string());
            match seen.len() {
                2 => Err(StoreError::Foreign(dir.clone(), "enough".into())),
                _ => Ok(()),
            }
        });
        assert!(matches!(stopped, Err(StoreError::Foreign(..))));
        assert_eq!(seen, [go, pip], "sorted by id, and nothing after the error");
        assert_eq!(ledger_rows(&s), [go, pip, npm]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_compile_replaces_changed_lessons_and_drops_gone_ones() {
        let dir = scratch("skillc-store-rows");
        let mut s = Store::open(&dir.join("state.db")).unwrap();
        assert_eq!(page_size(&s), 65536, "a new store takes large pages");
        let go = r#"{"id":"L1a2b3c4d5e6f","text":"Run go vet before go test.","confidence":0.5}"#;
        let go_later = r#"{"id":"L1a2b3c4d5e6f","text":"Run go vet before go test.","confidence":0.6}"#;
        let pip = r#"{"id":"L9f8e7d6c5b4a","text":"Use a virtualenv, not the system pip."}"#;
        let npm = r#"{"id":"Lc0ffee000001","text":"Use npm ci in CI, not npm install."}"#;
        s.stage_compile(1, &[("L1a2b3c4d5e6f", go), ("L9f8e7d6c5b4a", pip)])
            .unwrap()
            .finish(Some(&[]))
            .unwrap();
        s.stage_compile(2, &[("L1a2b3c4d5e6f", go_later), ("Lc0ffee000001", npm)])
            .unwrap()
            .finish(Some(&[]))
            .unwrap();
        assert_eq!(ledger_rows(&s), [go_later, npm]);
        assert_eq!(s.ledger_lesson("L9f8e7d6c5b4a").unwrap(), None);
        // What the lost lesson was stays known (its identity, not its history or confidence).
        assert_eq!(
            s.known_lesson("L9f8e7d6c5b4a").unwrap().as_deref(),
            Some(r#"{"id":"L9f8e7d6c5b4a","lost_at":2,"text":"Use a virtualenv, not the system pip."}"#)
        );
        assert_eq!(s.known_lesson("Lc0ffee000001").unwrap().as_deref(), Some(npm));
        assert_eq!(s.known_lesson("L000000000000").unwrap(), None);
        assert_eq!(s.last_now().unwrap(), 2);
        // The same ledger again: only the compile's own row and the outputs list are written.
        let before = s.conn.total_changes();
        s.stage_compile(2, &[("L1a2b3c4d5e6f", go_later), ("Lc0ffee000001", npm)])
            .unwrap()
            .finish(Some(&[]))
            .unwrap();
        let compile_rows = 2; // `compiles` cleared and its one row inserted
        assert_eq!(
            s.conn.total_changes() - before,
            compile_rows,
            "no lesson row rewritten"
        );
        // One lesson changed: one more row.
        let before = s.conn.total_changes();
        s.stage_compile(2, &[("L1a2b3c4d5e6f", go), ("Lc0ffee000001", npm)])
            .unwrap()
            .finish(Some(&[]))
            .unwrap();
        assert_eq!(s.conn.total_changes() - before, compile_rows + 1);
        assert_eq!(ledger_rows(&s), [go, npm]);
        s.stage_compile(2, &[("L1a2b3c4d5e6f", go_later), ("Lc0ffee000001", npm)])
            .unwrap()
            .finish(Some(&[]))
            .unwrap();
        // Files that could not be written leave the last recorded compile as it was.
        let recorded = s
            .stage_compile(3, &[("Lc0ffee000001", npm)])
            .unwrap()
            .finish(None)
            .unwrap();
        assert!(!recorded);
        assert_eq!(ledger_rows(&s), [go_later, npm]);
        assert_eq!(s.last_now().unwrap(), 2);
        // So does a compile that stops between staging and finishing (an error on the way).
        drop(s.stage_compile(4, &[("Lc0ffee000001", npm)]).unwrap());
        assert_eq!(ledger_rows(&s), [go_later, npm]);
        assert_eq!(s.last_now().unwrap(), 2);
        // Rows put in several calls: only the changed one is written, the gone one removed.
        let ledger = [
            ("L1a2b3c4d5e6f", go),
            ("L9f8e7d6c5b4a", pip),
            ("Lc0ffee000001", npm),
        ];
        let mut next = ledger.iter().copied();
        let before = s.conn.total_changes();
        let mut staged = s.begin_compile(5, &ledger[1..]).unwrap();
        staged.put(next.by_ref().skip(1).take(1)).unwrap();
        staged.put(next).unwrap();
        assert_eq!(staged.gone(), [go_later]);
        assert!(staged.finish(Some(&[])).unwrap());
        let gone_row = 2; // removed from the ledger's rows, its identity kept in former_lessons
        assert_eq!(s.conn.total_changes() - before, compile_rows + gone_row + 1);
        assert_eq!(ledger_rows(&s), [pip, npm]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Rows stored already are kept or upserted, new ones inserted in batches of their own
    /// (no statement journal); the table ends as one upsert per row in ledger order leaves it:
    /// the same texts under the same rowids, a ledger that holds an id twice included.
    #[test]
    fn new_rows_are_inserted_and_stored_ones_upserted_as_one_upsert_each_would() {
        let dir = scratch("skillc-store-insert-plan");
        let mut s = Store::open(&dir.join("state.db")).unwrap();
        let row = |id: &str, text: &str| format!(r#"{{"id":"{id}","text":"{text}"}}"#);
        let ids: Vec<String> = (0..2 * UPSERT_BATCH + 7)
            .map(|i| format!("L{:012x}", i * 7919))
            .collect();
        let stored: Vec<String> = ids[..40]
            .iter()
            .map(|id| row(id, "Run `cargo test --locked`"))
            .collect();
        let ledger: Vec<(&str, &str)> = (ids.iter().map(String::as_str))
            .zip(stored.iter().map(String::as_str))
            .collect();
        s.stage_compile(1, &ledger).unwrap().finish(Some(&[])).unwrap();

        // Every third stored row changed; the rest of the ids new, one of them twice (the later
        // text wins, as a second upsert of it would leave it).
        let texts: Vec<String> = (ids.iter().enumerate())
            .map(|(i, id)| match i {
                _ if i < 40 && i.is_multiple_of(3) => row(id, "Run `pytest -x` before pushing"),
                _ if i < 40 => stored[i].clone(),
                _ => row(id, "Pin `terraform` providers"),
            })
            .collect();
        let twice = row(&ids[50], "Use `kubectl rollout status` after apply");
        let mut second: Vec<(&str, &str)> = (ids.iter().map(String::as_str))
            .zip(texts.iter().map(String::as_str))
            .collect();
        second.insert(UPSERT_BATCH + 60, (&ids[50], &twice));
        let mut staged = s.begin_compile(2, &second).unwrap();
        let expected_plan = |i: usize| match i {
            _ if i < 40 && i.is_multiple_of(3) => Put::Update,
            _ if i < 40 => Put::Keep,
            _ => Put::Insert,
        };
        let plan: Vec<Put> = (0..second.len())
            .map(|i| expected_plan(i.min(ids.len())))
            .collect();
        assert_eq!(staged.plan, plan);
        for piece in second.chunks(50) {
            staged.put(piece.iter().copied()).unwrap();
        }
        assert!(staged.finish(Some(&[])).unwrap());

        let mut st = s
            .conn
            .prepare("SELECT rowid, id, json FROM lessons ORDER BY rowid")
            .unwrap();
        let got: Vec<(i64, String, String)> = (st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let want: Vec<(i64, String, String)> = (ids.iter().zip(&texts).enumerate())
            .map(|(i, (id, text))| {
                let text = if i == 50 { twice.clone() } else { text.clone() };
                (i as i64 + 1, id.clone(), text)
            })
            .collect();
        assert_eq!(got, want);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Rows staged in multi-row statements (several batches and a rest) are stored as they
    /// are one statement a row: in ledger order, and a re-compile rewrites only changed rows.
    #[test]
    fn many_rows_are_staged_in_batches_as_one_by_one() {
        let dir = scratch("skillc-store-batches");
        let mut s = Store::open(&dir.join("state.db")).unwrap();
        let ids: Vec<String> = (0..3 * UPSERT_BATCH + 5).map(|i| format!("L{i:012x}")).collect();
        let texts = |tag: &str| -> Vec<String> {
            (ids.iter())
                .map(|id| format!(r#"{{"id":"{id}","text":"{tag}"}}"#))
                .collect()
        };
        let (first, later) = (texts("a"), texts("b"));
        let ledger: Vec<(&str, &str)> = (ids.iter().map(String::as_str))
            .zip(first.iter().map(String::as_str))
            .collect();
        s.stage_compile(1, &ledger).unwrap().finish(Some(&[])).unwrap();
        assert_eq!(ledger_rows(&s), first);
        let in_rowid_order: Vec<String> = {
            let mut st = s.conn.prepare("SELECT id FROM lessons ORDER BY rowid").unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert_eq!(in_rowid_order, ids, "stored in ledger order");
        // Two rows of three changed, the last lesson gone; put in two pieces.
        let second: Vec<(&str, &str)> = (ledger[..ledger.len() - 1].iter().enumerate())
            .map(|(i, &(id, json))| {
                if i % 3 == 0 {
                    (id, json)
                } else {
                    (id, later[i].as_str())
                }
            })
            .collect();
        let before = s.conn.total_changes();
        let mut staged = s.begin_compile(2, &second).unwrap();
        for piece in second.chunks(120) {
            staged.put(piece.iter().copied()).unwrap();
        }
        assert_eq!(staged.gone(), [first.last().unwrap().as_str()]);
        assert!(staged.finish(Some(&[])).unwrap());
        let changed = second.len() - second.len().div_ceil(3);
        let (compile_rows, gone_row) = (2, 2); // a gone row: removed, and its identity kept
        assert_eq!(
            s.conn.total_changes() - before,
            (compile_rows + gone_row + changed) as u64
        );
        let expected: Vec<&str> = second.iter().map(|&(_, json)| json).collect();
        assert_eq!(ledger_rows(&s), expected);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_first_compile_is_stored_with_or_without_a_reader_and_the_store_stays_in_wal() {
        let dir = scratch("skillc-store-first");
        let go = r#"{"id":"L1a2b3c4d5e6f","text":"Run go vet before go test."}"#;
        let mode =
            |c: &Connection| -> String { c.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap() };
        for reader_open in [false, true] {
            let path = dir.join(format!("state-{reader_open}.db"));
            let mut s = Store::open(&path).unwrap();
            // A `skillc lessons list` in another process, mid-read.
            let reader = Connection::open(&path).unwrap();
            let mut st = reader.prepare("SELECT id FROM lessons").unwrap();
            let mut rows = st.query([]).unwrap();
            assert!(rows.next().unwrap().is_none());
            if !reader_open {
                drop(rows);
                drop(st);
                drop(reader);
            }
            let wal = path.with_extension("db-wal");
            assert!(wal.exists(), "the store opens in WAL");
            let staged = s.stage_compile(1, &[("L1a2b3c4d5e6f", go)]).unwrap();
            // Mid-transaction: without a reader the rows go to the database file, not the log.
            assert_eq!(
                wal.exists(),
                reader_open,
                "WAL in use, reader open: {reader_open}"
            );
            let recorded = staged.finish(Some(&["ledger.json".into()]));
            assert!(recorded.unwrap(), "reader open: {reader_open}");
            assert_eq!(ledger_rows(&s), [go]);
            assert_eq!(mode(&s.conn), "wal", "reader open: {reader_open}");
            assert!(s.has_compile().unwrap());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn journal_survives_reopen_and_foreign_db_is_refused() {
        let dir = scratch("skillc-store");
        let path = dir.join("state.db");
        {
            let mut s = Store::open(&path).unwrap();
            s.stage_compile(1_700_000_000_000, &[])
                .unwrap()
                .finish(Some(&["ledger.json".into()]))
                .unwrap();
            let d = s
                .record(Action::Retire, "L0123456789ab", Some("obsolete"))
                .unwrap();
            assert_eq!(d.at, 1_700_000_000_000);
        }
        let s = Store::open(&path).unwrap();
        let ds = s.decisions().unwrap();
        assert_eq!(ds.len(), 1);
        assert_eq!(ds[0].action, Action::Retire);
        assert_eq!(s.outputs().unwrap(), vec!["ledger.json".to_string()]);

        let foreign = dir.join("other.db");
        let c = Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE tool_history (id INTEGER)").unwrap();
        drop(c);
        assert!(matches!(Store::open(&foreign), Err(StoreError::Foreign(..))));

        // A store a newer skillc wrote is refused and left as it was; this skillc's own opens.
        drop(s);
        let c = Connection::open(&path).unwrap();
        c.execute("UPDATE skillc_meta SET value = '3' WHERE key = 'schema'", [])
            .unwrap();
        drop(c);
        let before = std::fs::read(&path).unwrap();
        match Store::open(&path) {
            Err(StoreError::Foreign(_, why)) => assert!(why.contains("schema 3 is newer"), "{why}"),
            other => panic!("opened a newer store: {:?}", other.map(|_| ())),
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let c = Connection::open(&path).unwrap();
        c.execute("UPDATE skillc_meta SET value = '2' WHERE key = 'schema'", [])
            .unwrap();
        drop(c);
        assert_eq!(Store::open(&path).unwrap().decisions().unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_held_lock_refuses_and_a_released_one_is_taken() {
        let dir = scratch("skillc-lock");
        let held = OutputLock::acquire(&dir).unwrap();
        match OutputLock::acquire(&dir) {
            Err(StoreError::Locked { holder, .. }) => {
                assert!(holder.contains(&std::process::id().to_string()), "{holder}")
            }
            _ => panic!("second lock must be refused"),
        }
        drop(held);
        // The file a finished (or killed) compile leaves names a live process, this one: only
        // the lock itself counts.
        assert!(dir.join(".skillc/lock").exists());
        let again = OutputLock::acquire(&dir).unwrap();
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
