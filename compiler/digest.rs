//! SHA-256 digests: project identities, lesson ids, cluster ids, input digests.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in hash {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The first 12 hex characters of the SHA-256 of `bytes`.
pub fn short(bytes: &[u8]) -> String {
    let mut s = sha256_hex(bytes);
    s.truncate(12);
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
