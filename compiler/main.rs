//! The `skillc` binary: parse the command line, run, exit with the documented code.

use std::ffi::{c_int, c_long};

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

fn main() {
    // mimalloc reads its options from the environment as the process starts, before `main`, so
    // a default set here would come too late: the option is set outright, unless the
    // environment's `MIMALLOC_PURGE_DELAY` asked for something else.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain store into the allocator's option table, before any other thread starts.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, HOLD_FREED_MS) };
    }
    std::process::exit(skillc::cli::main());
}
