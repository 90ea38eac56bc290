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
//! write the file the ordinary way; a `Writer`, whose pieces are gone once written, goes on
//! the ordinary way itself.

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
fn aligned(storage: &mut [u8]) -> &mut [u8] {
    let skip = storage.as_ptr().align_offset(ALIGN);
    &mut storage[skip..skip + CHUNK]
}

/// A new file written a piece at a time (each piece may be freed once pushed: the ledger's
/// are, while the state store takes its rows). A text of `MIN_BYTES` or
/// more goes direct; a smaller one, or one the file system refuses direct I/O for, is
/// written the ordinary way (pieces of a megabyte, so no buffer is needed).
pub struct Writer {
    file: File,
    /// `CHUNK + ALIGN` bytes whose aligned window collects the text for direct writes; empty
    /// once the file is written the ordinary way.
    storage: Vec<u8>,
    filled: usize,
    /// Bytes in the file so far.
    written: u64,
}

impl Writer {
    /// Creates (or truncates) the file at `path` for a text of `len` bytes.
    pub fn create(path: &Path, len: usize) -> io::Result<Writer> {
        let direct = (len >= MIN_BYTES).then(|| open_new(path, true));
        let (file, storage) = match direct {
            Some(Ok(file)) => (file, vec![0u8; CHUNK + ALIGN]),
            _ => (open_new(path, false)?, Vec::new()),
        };
        Ok(Writer {
            file,
            storage,
            filled: 0,
            written: 0,
        })
    }

    pub fn push(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            if self.storage.is_empty() {
                self.file.write_all(bytes)?;
                self.written += bytes.len() as u64;
                return Ok(());
            }
            let filled = self.filled;
            let n = bytes.len().min(CHUNK - filled);
            aligned(&mut self.storage)[filled..filled + n].copy_from_slice(&bytes[..n]);
            self.filled += n;
            bytes = &bytes[n..];
            if self.filled == CHUNK {
                self.flush_blocks()?;
            }
        }
        Ok(())
    }

    /// Writes what is left (the tail shorter than a block the ordinary way: direct I/O cannot
    /// write it) and closes the file.
    pub fn finish(mut self) -> io::Result<()> {
        if !self.storage.is_empty() {
            self.flush_blocks()?;
        }
        if !self.storage.is_empty() {
            self.ordinary()?;
        }
        Ok(())
    }

    /// Writes the collected whole blocks direct; on failure the file goes on the ordinary way
    /// from where the blocks begin (a short write may have left part of them).
    fn flush_blocks(&mut self) -> io::Result<()> {
        let whole = self.filled / ALIGN * ALIGN;
        let blocks = &aligned(&mut self.storage)[..whole];
        if write_aligned(&mut self.file, blocks).is_err() {
            return self.ordinary();
        }
        self.written += whole as u64;
        let chunk = aligned(&mut self.storage);
        chunk.copy_within(whole..self.filled, 0);
        self.filled -= whole;
        Ok(())
    }

    /// Turns direct I/O off for the rest of the file and writes what is collected.
    fn ordinary(&mut self) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        set_direct(&self.file, false)?;
        let collected = std::mem::take(&mut self.storage);
        let skip = collected.as_ptr().align_offset(ALIGN);
        self.file.seek(SeekFrom::Start(self.written))?;
        self.file.set_len(self.written)?;
        self.push(&collected[skip..skip + self.filled])?;
        self.filled = 0;
        Ok(())
    }
}

/// A new (or truncated) file for writing, with direct I/O if `direct`.
fn open_new(path: &Path, direct: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(target_os = "linux")]
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_DIRECT);
    }
    #[cfg(not(target_os = "linux"))]
    if direct {
        return Err(io::Error::from(io::ErrorKind::Unsupported));
    }
    options.open(path)
}

/// Sets or clears `O_DIRECT` on an open file.
#[cfg(target_os = "linux")]
fn set_direct(file: &File, direct: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fcntl` on a descriptor this `File` owns; it reads and sets status flags only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = if direct {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn set_direct(_file: &File, _direct: bool) -> io::Result<()> {
    Ok(())
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

    /// Writes `pieces` to a new file at `path` through a `Writer`, as `emit` does.
    fn write(path: &Path, pieces: &[String]) -> io::Result<()> {
        let mut w = Writer::create(path, pieces.iter().map(String::len).sum())?;
        for piece in pieces {
            w.push(piece.as_bytes())?;
        }
        w.finish()
    }

    /// Whether direct I/O ran; `EINVAL` is a file system without it (the caller then reads
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
        write(&path, &pieces).unwrap();
        assert!(std::fs::read(&path).unwrap() == pieces.concat().as_bytes());
        if ran(same(&path, &pieces).map(drop)) {
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
        write(&path, &blocks).unwrap();
        assert!(std::fs::read(&path).unwrap() == blocks[0].as_bytes());
        // A small file is written the ordinary way, and compared the ordinary way by the caller.
        let small = vec!["{}\n".to_string()];
        write(&path, &small).unwrap();
        assert!(std::fs::read(&path).unwrap() == b"{}\n");
        let refused = |r: io::Result<()>| r.is_err_and(|e| e.kind() == io::ErrorKind::Unsupported);
        assert!(refused(same(&path, &small).map(|_| ())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_writer_takes_the_text_a_piece_at_a_time() {
        let dir = std::env::temp_dir().join(format!("skillc-direct-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.json");
        let line = "{\"id\":\"L00004f846540\",\"text\":\"Run `terraform plan` before apply\"}\n";
        let text = line.repeat(MIN_BYTES / line.len() + 1000);
        // Pieces that straddle the chunk and block edges, a small text that stays ordinary.
        for text in [&text[..], "{}\n"] {
            let mut w = Writer::create(&path, text.len()).unwrap();
            for piece in text.as_bytes().chunks((1 << 20) + 123) {
                w.push(piece).unwrap();
            }
            w.finish().unwrap();
            assert!(std::fs::read(&path).unwrap() == text.as_bytes());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
