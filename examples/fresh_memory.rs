//! The machine's price of fresh memory, for the benchmark: the seconds per GiB to touch memory
//! the process has just been given (one write per 4 KiB page, so the kernel must find, zero
//! and map every page), against touching the same memory again. Every byte a compile touches
//! beyond what the load-only pass touches pays the first price; where it is high, it bounds
//! the full/load ratio whatever the compiler does with the CPU.
//!
//! On a virtual machine the first price depends on what the guest used recently: memory it
//! freed a moment ago is cheaper to take again than memory the host has reclaimed. So the
//! figure moves from run to run; the default, 3 GiB, is about a 1 M compile's peak.
//!
//! `cargo run --release --example fresh_memory -- [GIB]` prints
//! `<first touch, s/GiB> <touched again, s/GiB>` (one thread).

const PAGE: usize = 4096;

/// Seconds to write one byte into every page of `buf`.
fn touch(buf: &mut [u8]) -> f64 {
    let start = std::time::Instant::now();
    for i in (0..buf.len()).step_by(PAGE) {
        buf[i] = 1;
    }
    std::hint::black_box(&buf);
    start.elapsed().as_secs_f64()
}

fn main() {
    let gib: f64 = std::env::args()
        .nth(1)
        .map_or(3.0, |a| a.parse().expect("usage: fresh_memory [GIB]"));
    let bytes = (gib * (1u64 << 30) as f64) as usize;
    // A zeroed block this large is mapped straight from the kernel (calloc knows fresh pages
    // read as zero and does not write them), so no page is touched before `touch`.
    let mut buf = vec![0u8; bytes];
    let first = touch(&mut buf);
    let again = touch(&mut buf);
    println!("{:.3} {:.3}", first / gib, again / gib);
}
