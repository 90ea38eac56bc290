//! `skillc gen`: the shape of a generated corpus.

use std::io::{self, Write};

/// Counts bytes and lines without keeping them.
struct Counter {
    bytes: u64,
    lines: u64,
}

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len() as u64;
        self.lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn small_corpus_is_line_per_record() {
    let mut c = Counter { bytes: 0, lines: 0 };
    skillc::generate::generate(1000, 99, &mut c).unwrap();
    assert_eq!(c.lines, 1000);
    assert!(c.bytes > 300 * 1000, "average record size {}", c.bytes / 1000);
}

#[test]
fn zero_records_is_an_empty_file() {
    let mut out = Vec::new();
    skillc::generate::generate(0, 1, &mut out).unwrap();
    assert!(out.is_empty());
}
