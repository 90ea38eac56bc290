//! SHA-256 digests: project identities, lesson ids, cluster ids, input digests.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The first 12 hex characters of the SHA-256 of `bytes`.
pub fn short(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes)[..6])
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// A project's digest: the first 12 hex characters of the SHA-256 of its identity string.
pub fn project(identity: &str) -> String {
    short(identity.as_bytes())
}

/// SHA-256 of fields joined with NUL (no trailing NUL), first 12 hex characters.
pub fn of_fields(fields: &[&str]) -> String {
    short(fields.join("\0").as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vectors() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(super::project("abc"), "ba7816bf8f01");
    }
}
