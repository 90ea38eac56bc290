//! A small deterministic hasher for hot, never-iterated maps.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A fast, deterministic hasher for the block-local maps (FxHash's mixing step); nothing
/// iterates these maps, so their order never reaches the output.
#[derive(Default)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        // The multiply mixes upward: the low bits hashbrown picks buckets with depend only on
        // the low bits of the input. The rotate brings the well-mixed high bits down (as
        // rustc-hash 2 does), so keys that differ late, like ids with a common prefix, spread.
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(tail_word(rest));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64)
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64)
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i)
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64)
    }
}

/// A 1..=7 byte tail as one zero-padded little-endian word, read in at most three loads
/// instead of one step per byte (most hashed words are shorter than eight bytes). Loads that
/// overlap put the same bytes in the same places, so the OR is the padded word exactly.
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!((1..8).contains(&n));
    if n >= 4 {
        let lo = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as u64;
        let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes")) as u64;
        lo | hi << (8 * (n - 4))
    } else {
        rest[0] as u64 | (rest[n / 2] as u64) << (8 * (n / 2)) | (rest[n - 1] as u64) << (8 * (n - 1))
    }
}

impl Fx {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A text's 64-bit Fx hash: a fingerprint that is confirmed on the text where a collision
/// would matter, or whose collision costs only a missed distinction.
pub(crate) fn fingerprint(text: &str) -> u64 {
    use std::hash::BuildHasher;
    BuildHasherDefault::<Fx>::default().hash_one(text)
}

/// A 64-bit fingerprint of `parts`, each followed by its length, mixed eight bytes at a time by
/// a folded 128-bit multiply (wyhash's and foldhash's step). `fingerprint`'s multiply only
/// mixes upward, so ids that differ in a byte or two (`run-00017`, `run-01005`) can collide by
/// their structure; these do only by chance, so a set of ids can be told distinct by them.
pub(crate) fn parts_print(parts: &[&[u8]]) -> u64 {
    const K: [u64; 2] = [0xa076_1d64_78bd_642f, 0xe703_7ed1_a0b4_28db];
    let mix = |a: u64, b: u64| {
        let m = u128::from(a) * u128::from(b);
        (m as u64) ^ ((m >> 64) as u64)
    };
    let mut h = K[0];
    for part in parts {
        let mut words = part.chunks_exact(8);
        for w in &mut words {
            h = mix(h ^ u64::from_le_bytes(w.try_into().expect("eight bytes")), K[1]);
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        h = mix(h ^ u64::from_le_bytes(last), K[1]);
        h = mix(h ^ part.len() as u64, K[0]);
    }
    h
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;
pub(crate) type FxSet<K> = HashSet<K, BuildHasherDefault<Fx>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_word_is_the_zero_padded_little_endian_word_of_its_bytes() {
        let bytes = [0x81u8, 0x02, 0xf3, 0x04, 0x75, 0x06, 0xe7];
        for n in 1..8 {
            let rest = &bytes[..n];
            let padded = rest.iter().rev().fold(0u64, |w, &b| w << 8 | b as u64);
            assert_eq!(tail_word(rest), padded, "{n} bytes");
        }
    }
}
