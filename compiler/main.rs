//! The `skillc` binary: parse the command line, run, exit with the documented code.

use std::ffi::{c_int, c_long, c_ulong, c_void};

// The pipeline allocates millions of small strings and vectors from several threads; mimalloc
// does that markedly faster than the system allocator (see ARCHITECTURE.md).
#[cfg(not(feature = "live-bytes"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "live-bytes")]
#[global_allocator]
static ALLOCATOR: live::Counting = live::Counting;

/// `--features live-bytes`: mimalloc behind a count of the bytes alive, which the stage timings
/// print beside the resident memory (what the allocator holds beyond the data is its slack).
#[cfg(feature = "live-bytes")]
mod live {
    use skillc::pipeline::{LIVE_BYTES, LIVE_PEAK};
    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::atomic::Ordering::Relaxed;

    pub struct Counting;

    fn add(bytes: isize) {
        let now = LIVE_BYTES.fetch_add(bytes, Relaxed) + bytes;
        LIVE_PEAK.fetch_max(now, Relaxed);
    }

    // SAFETY: each method passes its caller's arguments, and so its caller's contract, to
    // mimalloc's own; counting touches no memory the allocator hands out.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-(layout.size() as isize));
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            add(new_size as isize - layout.size() as isize);
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

// mimalloc's C API, linked in with the allocator (the crate re-exports it only under a feature
// that needs one more crate).
unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn mi_free(p: *mut c_void);
    fn mi_usable_size(p: *const c_void) -> usize;
}

/// `mi_option_purge_delay` (mimalloc v2 and v3 number it alike).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// mimalloc returns freed memory to the OS a while after it is freed (arenas ten seconds after,
/// by default). A compile frees large structures at each stage that later stages allocate
/// again, and memory returned in between is faulted in and zeroed a second time: about 4 GB
/// at a million experiences, and on a VM a third of the CPU time in some runs. So freed memory
/// stays with the process (an hour is "never" for a compile); no stage after the lifecycle fold
/// needs more than the fold freed (bench/PROFILES.md, rounds 6, 11 and 14).
const HOLD_FREED_MS: c_long = 3_600_000;

/// `PR_SET_THP_DISABLE` (linux/prctl.h).
#[cfg(target_os = "linux")]
const PR_SET_THP_DISABLE: c_int = 41;

#[cfg(target_os = "linux")]
unsafe extern "C" {
    fn prctl(option: c_int, ...) -> c_int;
}

/// mimalloc asks the kernel for transparent huge pages on its arenas (`MADV_HUGEPAGE`). Once
/// memory is fragmented, each 2 MiB fault stalls in direct compaction, and each purge splits a
/// huge page again: a 1 M compile spent 44 s of system time that way and took 41 s instead of
/// 19 s (bench/PROFILES.md, round 72). So the process takes 4 KiB pages, unless the environment
/// asked mimalloc for something else (`MIMALLOC_ALLOW_THP`). The flag is read at each fault, so
/// it covers the arena mimalloc reserved before `main`.
fn refuse_huge_pages() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: prctl with integer arguments only sets a flag of this process; a kernel that
        // does not know the option returns an error, which changes nothing.
        unsafe {
            prctl(
                PR_SET_THP_DISABLE,
                1 as c_ulong,
                0 as c_ulong,
                0 as c_ulong,
                0 as c_ulong,
            )
        };
    }
}

fn main() {
    // mimalloc reads its options from the environment as the process starts, before `main`, so
    // a default set here would come too late: the option is set outright, unless the
    // environment's `MIMALLOC_PURGE_DELAY` asked for something else.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain store into the allocator's option table, before any other thread starts.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, HOLD_FREED_MS) };
    }
    refuse_huge_pages();
    // Before any thread starts and before anything opens a database, so nothing can race it.
    sqlite_alloc::use_mimalloc();
    std::process::exit(skillc::cli::main());
}

/// SQLite's allocations through mimalloc, the process's allocator, instead of glibc's `malloc`.
/// The store's staging thread allocates SQLite's 64 KiB pages and row copies while render runs;
/// through glibc's heap those were trimmed at its top and faulted in again, most of render's
/// page faults at a million experiences (bench/PROFILES.md, rounds 62 and 65).
mod sqlite_alloc {
    use super::{c_int, c_void, mi_free, mi_malloc, mi_realloc, mi_usable_size};
    use rusqlite::ffi;

    // SQLite calls these with a size in (0, 0x7fffff00] (`sqlite3Malloc` and `sqlite3Realloc`
    // turn away the rest) and with pointers they returned; mimalloc aligns every block to at
    // least the 8 bytes SQLite needs.
    unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
        // SAFETY: a plain allocation; a non-positive size (never passed) asks for none.
        unsafe { mi_malloc(usize::try_from(n).unwrap_or(0)) }
    }

    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: `p` is null or a block `malloc` or `realloc` returned (SQLite's contract).
        unsafe { mi_free(p) }
    }

    unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        // SAFETY: as `free`, for `p`.
        unsafe { mi_realloc(p, usize::try_from(n).unwrap_or(0)) }
    }

    unsafe extern "C" fn size(p: *mut c_void) -> c_int {
        // SAFETY: as `free`, for `p`. A block's usable size never exceeds what SQLite asked
        // for by more than mimalloc's size class, so it fits a `c_int` as SQLite's sizes do.
        let n = unsafe { mi_usable_size(p) };
        c_int::try_from(n).unwrap_or(c_int::MAX)
    }

    /// What `malloc` would give for `n`: SQLite's own default rounds to eight bytes.
    unsafe extern "C" fn roundup(n: c_int) -> c_int {
        n.saturating_add(7) & !7
    }

    unsafe extern "C" fn init(_: *mut c_void) -> c_int {
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn shutdown(_: *mut c_void) {}

    /// Hands SQLite the methods above. `SQLITE_CONFIG_MALLOC` is process-wide and may only be set
    /// before SQLite initialises: `main` calls this first, before any other thread or database
    /// exists. If SQLite was initialised already it answers `SQLITE_MISUSE` and keeps its own
    /// allocator, which is only slower; the code is returned for the test.
    pub fn use_mimalloc() -> c_int {
        let methods = ffi::sqlite3_mem_methods {
            xMalloc: Some(malloc),
            xFree: Some(free),
            xRealloc: Some(realloc),
            xSize: Some(size),
            xRoundup: Some(roundup),
            xInit: Some(init),
            xShutdown: Some(shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // SAFETY: SQLite copies the methods before returning; each is a function with the
        // signature the option takes, valid for the whole process.
        unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const methods) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        unsafe extern "C" {
            fn mi_is_in_heap_region(p: *const c_void) -> bool;
        }

        /// The only test in this binary that touches SQLite, so it configures it first.
        #[test]
        fn sqlite_allocates_from_mimalloc() {
            assert_eq!(use_mimalloc(), ffi::SQLITE_OK);
            // SAFETY: SQLite's allocator functions, each block freed once.
            unsafe {
                let p = ffi::sqlite3_malloc(100);
                assert!(!p.is_null());
                assert!(mi_is_in_heap_region(p), "SQLite's block is not mimalloc's");
                assert!(ffi::sqlite3_msize(p) >= 100);
                let q = ffi::sqlite3_realloc(p, 70_000);
                assert!(mi_is_in_heap_region(q));
                assert!(ffi::sqlite3_msize(q) >= 70_000);
                ffi::sqlite3_free(q);
            }
            // A database through it: rows in, the same rows out.
            let c = rusqlite::Connection::open_in_memory().expect("in-memory database");
            c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
                .expect("table");
            let row = "x".repeat(100_000);
            for i in 0..200 {
                c.execute("INSERT INTO t (id, v) VALUES (?1, ?2)", (i, &row[i..]))
                    .expect("insert");
            }
            let total: i64 = c
                .query_row("SELECT sum(length(v)) FROM t", [], |r| r.get(0))
                .expect("sum");
            assert_eq!(total, (0..200).map(|i| 100_000 - i).sum::<i64>());
            // Set once SQLite initialised: a second call is turned away, harmlessly.
            assert_eq!(use_mimalloc(), ffi::SQLITE_MISUSE);
        }
    }
}
