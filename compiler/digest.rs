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
    // Fed field by field: the same digest as of the joined text, without building it (every
    // cluster and lesson id at a million experiences).
    let mut hasher = Sha256::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            hasher.update([0u8]);
        }
        hasher.update(field.as_bytes());
    }
    hex(&hasher.finalize()[..6])
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

    #[test]
    fn fields_digest_as_their_nul_joined_text() {
        for fields in [
            &["python", "do", "", "Pin dependency versions in requirements.txt"][..],
            &["go"],
            &[],
            &["", ""],
            &["rust", "avoid", "cargo build", "{\"args\":[\"--locked\"]}"],
        ] {
            assert_eq!(
                super::of_fields(fields),
                super::short(fields.join("\0").as_bytes())
            );
        }
    }
}
