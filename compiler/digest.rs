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

/// Is `s` shaped like `short`'s output (a project digest): 12 lower-case hex characters?
pub fn is_short(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Is `s` shaped like a lesson id: `L` and a `short` digest?
pub fn is_lesson_id(s: &str) -> bool {
    s.strip_prefix('L').is_some_and(is_short)
}

/// The lesson ids `text` cites as `id: L…` (a SKILL.md bullet, a block line or a delta that
/// a person merged into their skill), each with its 1-based line.
pub fn cited_lesson_ids(text: &str) -> Vec<(usize, &str)> {
    let mut ids = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("id: L") {
            let id = line[at + 4..].get(..13).unwrap_or("");
            if is_lesson_id(id) {
                ids.push((n + 1, id));
            }
        }
    }
    ids
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len());
    push_hex(&mut s, bytes);
    s
}

fn push_hex(s: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
}

/// A project's digest: the first 12 hex characters of the SHA-256 of its identity string.
pub fn project(identity: &str) -> String {
    short(identity.as_bytes())
}

/// SHA-256 of fields joined with NUL (no trailing NUL), first 12 hex characters.
pub fn of_fields(fields: &[&str]) -> String {
    hex(&fields_digest(fields).to_be_bytes()[2..])
}

/// An id: `prefix` and `of_fields(fields)` (`L` a lesson, `C` a cluster), made as one string:
/// hundreds of thousands are made at a million experiences, and `format!` over the hex text
/// made two strings and ran the formatting machinery for each.
pub fn id_of(prefix: char, fields: &[&str]) -> String {
    id_of_bits(prefix, fields_digest(fields))
}

/// `prefix` and the 12 hex characters of `bits` (`of_fields_bits`, `FieldsDigest::bits`):
/// the id `id_of` makes of the fields that digest to `bits`.
pub fn id_of_bits(prefix: char, bits: u64) -> String {
    let mut id = String::with_capacity(13);
    id.push(prefix);
    push_hex(&mut id, &bits.to_be_bytes()[2..]);
    id
}

/// `of_fields` as the number its 12 hex characters write: to compare with many ids without
/// making each one's text.
pub fn of_fields_bits(fields: &[&str]) -> u64 {
    fields_digest(fields)
}

/// The first six bytes of the SHA-256 of fields joined with NUL, big-endian.
fn fields_digest(fields: &[&str]) -> u64 {
    let mut digest = FieldsDigest::default();
    fields.iter().for_each(|field| digest.feed(field));
    digest.bits()
}

/// `of_fields_bits` fed one field at a time: the same digest as of the joined text, without
/// building it (every cluster and lesson id at a million experiences). A digest fed the fields
/// many ids share can be cloned and finished per id.
#[derive(Clone, Default)]
pub struct FieldsDigest {
    hasher: Sha256,
    fed: bool,
}

impl FieldsDigest {
    pub fn feed(&mut self, field: &str) {
        if self.fed {
            self.hasher.update([0u8]);
        }
        self.hasher.update(field.as_bytes());
        self.fed = true;
    }

    /// The first six bytes of the digest, big-endian.
    pub fn bits(self) -> u64 {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&self.hasher.finalize()[..6]);
        u64::from_be_bytes(b)
    }
}

/// The number a lesson id's digest writes (`of_fields_bits` of its fields), if `s` is shaped
/// like a lesson id.
pub fn lesson_id_bits(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('L').filter(|d| is_short(d))?;
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_id_is_its_prefix_and_the_hex_digest_of_its_fields() {
        use super::{id_of, of_fields};
        for fields in [
            &[
                "python",
                "do",
                "",
                "ada-1",
                "Pin dependency versions in requirements.txt",
            ][..],
            &[
                "rust",
                "avoid",
                "cargo build",
                "L0123456789ab",
                "{\"args\":[\"--locked\"]}",
            ],
            &["", "", "", "", ""],
            &[],
        ] {
            assert_eq!(id_of('L', fields), format!("L{}", of_fields(fields)));
            assert_eq!(id_of('C', fields), format!("C{}", of_fields(fields)));
        }
        // Many digests: every hex digit in every place, high ones too.
        for i in 0..4096 {
            let fields = [&*i.to_string()];
            assert_eq!(id_of('L', &fields), format!("L{}", of_fields(&fields)));
        }
    }

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
            let id = format!("L{}", super::of_fields(fields));
            assert_eq!(super::lesson_id_bits(&id), Some(super::of_fields_bits(fields)));
        }
    }

    #[test]
    fn cited_ids_are_whole_lesson_ids_with_their_lines() {
        let skill = "# Deploy\n\
            - Run `terraform plan` before apply (id: L3f9a0c12b7de)\n\
            - Pin provider versions (id: L3f9a0c12b7d) and (id: LABCDEF012345)\n\
            Both: id: L0123456789ab, id: L00000000000f.\n";
        assert_eq!(
            super::cited_lesson_ids(skill),
            [(2, "L3f9a0c12b7de"), (4, "L0123456789ab"), (4, "L00000000000f")]
        );
        assert!(super::is_lesson_id("L3f9a0c12b7de") && !super::is_lesson_id("3f9a0c12b7de"));
        assert!(super::is_short("3f9a0c12b7de") && !super::is_short("3f9a0c12b7dE"));
        assert_eq!(super::lesson_id_bits("L3f9a0c12b7de"), Some(0x3f9a_0c12_b7de));
        assert_eq!(super::lesson_id_bits("L3F9A0C12B7DE"), None);
        assert_eq!(super::lesson_id_bits("L+f9a0c12b7de"), None);
    }
}
