//! Large output files written with direct I/O (`O_DIRECT`): the bytes go from one aligned
//! buffer to the disk instead of into freshly allocated page-cache pages.
//!
//! Why: a million-experience compile writes about a gigabyte of ledger and diagnostics. On the
//! 2-core benchmark VM a buffered write of 560 MB into new page-cache pages took 1.6–1.9 s of
//! kernel time (the host backs each fresh page on first touch), the same write with direct
//! I/O 0.3–0.5 s wall and 0.15 s of CPU. On ordinary disks direct I/O costs at most the
//! device's own write time, and a nightly job's gigabyte does not evict other programs' cache.
//!
//! Only the whole aligned blocks go direct; the last partial block is appended through the
//! page cache. Any failure (a file system without direct I/O, say) is the caller's cue to
//! write the file the ordinary way.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Files at least this large take the direct path; smaller ones gain nothing worth a second
/// open, and both functions refuse them (`ErrorKind::Unsupported`) for the caller's ordinary I/O.
const MIN_BYTES: usize = 32 << 20;

/// Offset, length and buffer address alignment that satisfies every Linux block device
/// (logical blocks are 512 or 4096 bytes).
const ALIGN: usize = 4096;
/// Bytes handed to the kernel per write.
const CHUNK: usize = 4 << 20;

/// `Ok` for a text large enough to take the direct path.
#[cfg(target_os = "linux")]
fn large(pieces: &[String]) -> io::Result<usize> {
    let len = pieces.iter().map(String::len).sum();
    match len >= MIN_BYTES {
        true => Ok(len),
        false => Err(io::Error::from(io::ErrorKind::Unsupported)),
    }
}

/// A `CHUNK`-byte window of `storage` (`CHUNK + ALIGN` bytes) that starts on a block boundary.
#[cfg(target_os = "linux")]
fn aligned(storage: &mut [u8]) -> &mut [u8] {
    let skip = storage.as_ptr().align_offset(ALIGN);
    &mut storage[skip..skip + CHUNK]
}

/// Writes `pieces`, one after the other, to a new file at `path` (created or truncated).
/// On error the file may hold part of the text.
#[cfg(target_os = "linux")]
pub fn write(path: &Path, pieces: &[String]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    large(pieces)?;
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)?;
    let mut storage = vec![0u8; CHUNK + ALIGN];
    let chunk = aligned(&mut storage);
    let mut filled = 0;
    for piece in pieces {
        let mut rest = piece.as_bytes();
        while !rest.is_empty() {
            let n = rest.len().min(CHUNK - filled);
            chunk[filled..filled + n].copy_from_slice(&rest[..n]);
            filled += n;
            rest = &rest[n..];
            if filled == CHUNK {
                write_aligned(&mut file, chunk)?;
                filled = 0;
            }
        }
    }
    let whole = filled / ALIGN * ALIGN;
    write_aligned(&mut file, &chunk[..whole])?;
    drop(file);
    if whole < filled {
        // The tail is shorter than a block: direct I/O cannot write it.
        OpenOptions::new()
            .append(true)
            .open(path)?
            .write_all(&chunk[whole..filled])?;
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn write(_path: &Path, _pieces: &[String]) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Does the file at `path` hold exactly `pieces`, one after the other? Read with direct I/O:
/// a re-run compares its whole ledger with the last one, and reading a file written with
/// direct I/O through the page cache would fill fresh pages with it (the cost `write` avoids).
#[cfg(target_os = "linux")]
pub fn same(path: &Path, pieces: &[String]) -> io::Result<bool> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let len = large(pieces)?;
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)?;
    if file.metadata()?.len() != len as u64 {
        return Ok(false);
    }
    let mut storage = vec![0u8; CHUNK + ALIGN];
    let chunk = aligned(&mut storage);
    let mut expected = (pieces.iter().map(String::as_bytes)).filter(|p| !p.is_empty());
    let mut want: &[u8] = &[];
    loop {
        // A read of whole blocks; only the file's end makes it short.
        let n = file.read(chunk)?;
        if n == 0 {
            return Ok(want.is_empty() && expected.next().is_none());
        }
        let mut got = &chunk[..n];
        while !got.is_empty() {
            if want.is_empty() {
                match expected.next() {
                    Some(next) => want = next,
                    None => return Ok(false),
                }
            }
            let k = want.len().min(got.len());
            if want[..k] != got[..k] {
                return Ok(false);
            }
            (want, got) = (&want[k..], &got[k..]);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn same(_path: &Path, _pieces: &[String]) -> io::Result<bool> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// One write of whole blocks; a short write would leave the rest unaligned, so it is an error.
#[cfg(target_os = "linux")]
fn write_aligned(file: &mut File, blocks: &[u8]) -> io::Result<()> {
    if blocks.is_empty() {
        return Ok(());
    }
    match file.write(blocks)? {
        n if n == blocks.len() => Ok(()),
        _ => Err(io::Error::other("short direct write")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether direct I/O ran; `EINVAL` is a file system without it (the caller then writes
    /// the ordinary way), any other error a failure.
    fn ran(result: io::Result<()>) -> bool {
        match result {
            Ok(()) => true,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => false,
            Err(e) => panic!("direct write failed: {e}"),
        }
    }

    #[test]
    fn every_byte_arrives_whatever_the_piece_sizes() {
        let dir = std::env::temp_dir().join(format!("skillc-direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Pieces that straddle the chunk and block edges, and a tail shorter than a block.
        let line = "{\"id\":\"L00004f846540\",\"text\":\"Run `terraform plan` before apply\"}\n";
        let pieces = vec![
            line.repeat(MIN_BYTES / line.len() + 3),
            String::new(),
            line.repeat(ALIGN / line.len() * 5 + 1),
            "]}\n".to_string(),
        ];
        let path = dir.join("ledger.json");
        std::fs::write(&path, "an older, longer ledger ".repeat(2_000_000)).unwrap();
        if ran(write(&path, &pieces)) {
            assert!(std::fs::read(&path).unwrap() == pieces.concat().as_bytes());
            assert!(same(&path, &pieces).unwrap(), "read back as written");
            let trailing = [pieces.clone(), vec![String::new()]].concat();
            assert!(
                same(&path, &trailing).unwrap(),
                "an empty last piece adds nothing"
            );
            let mut changed = pieces.clone();
            changed[2].replace_range(ALIGN..ALIGN + 2, "~~");
            assert!(!same(&path, &changed).unwrap(), "one changed byte");
            changed[2].push('x');
            assert!(!same(&path, &changed).unwrap(), "one more byte");
        } else {
            eprintln!("no direct I/O in {}", dir.display());
        }
        // A text of whole blocks leaves no tail.
        let blocks = vec!["x".repeat(ALIGN * (MIN_BYTES / ALIGN + 3))];
        if ran(write(&path, &blocks)) {
            assert!(std::fs::read(&path).unwrap() == blocks[0].as_bytes());
        }
        // A small file is the caller's to write.
        let small = vec!["{}\n".to_string()];
        let refused = |r: io::Result<()>| r.is_err_and(|e| e.kind() == io::ErrorKind::Unsupported);
        assert!(refused(write(&path, &small)));
        assert!(refused(same(&path, &small).map(|_| ())));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
