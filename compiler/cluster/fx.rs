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
        // The 1..=7 byte tail as one zero-padded word, not one step per byte.
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(rest.iter().rev().fold(0, |w, &b| w << 8 | b as u64));
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

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;
pub(crate) type FxSet<K> = HashSet<K, BuildHasherDefault<Fx>>;
