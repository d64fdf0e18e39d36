//! The checksum's hash: XXH3 (64-bit) from the `xxhash-rust` crate, streamed.
//!
//! Why XXH3: its output is fixed by a published specification (xxHash 0.8), so a checksum is
//! the same in every run and process of a build and on every platform, which is what a
//! checksum compared between peers needs (`std`'s `RandomState` is seeded per process, and
//! `foldhash` and `rapidhash` do not promise stable output across versions); it is one of the
//! fastest non-cryptographic hashes on large inputs (tens of GB/s on one core), and a
//! checksum needs no resistance to attackers (a peer who wants to desync can simply lie).
//! `xxhash-rust` is pure Rust with no dependencies and tested against the reference
//! implementation.

use std::hash::Hasher;
use xxhash_rust::xxh3::Xxh3Default;

/// A checksum in progress: the state's values are fed in a defined order (see
/// [`crate::state`]); a type's `Hash` impl can write into it like into any [`Hasher`].
/// Named by generated code only (a user's `Hash` impl is generic over the hasher).
#[doc(hidden)]
#[derive(Clone)]
pub struct StateHasher(Xxh3Default);

impl std::fmt::Debug for StateHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StateHasher").field(&self.digest()).finish()
    }
}

impl Default for StateHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl StateHasher {
    /// An empty hash.
    pub fn new() -> Self {
        StateHasher(Xxh3Default::new())
    }

    /// Feeds bytes.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Feeds a number (its little-endian bytes, so the order of fields is what counts).
    #[inline]
    pub fn write_word(&mut self, value: u64) {
        self.0.update(&value.to_le_bytes());
    }

    /// Feeds numbers: the same digest as [`StateHasher::write_word`] on each, in one update
    /// of their bytes where memory already holds them little-endian.
    #[inline]
    pub fn write_words(&mut self, values: &[u64]) {
        if cfg!(target_endian = "little") {
            self.0.update(bytemuck::cast_slice(values));
        } else {
            for &v in values {
                self.write_word(v);
            }
        }
    }

    /// The hash of everything fed so far.
    #[inline]
    pub fn digest(&self) -> u64 {
        self.0.digest()
    }
}

impl Hasher for StateHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.digest()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.write_bytes(bytes);
    }
}

/// XXH3 of `bytes` in one call.
#[cfg(test)]
fn hash_of(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words fed as a slice hash as the same words fed one by one.
    #[test]
    fn words_at_once_are_words_one_by_one() {
        let words = [1u64, u64::MAX, 0x0102_0304_0506_0708, 0];
        let mut at_once = StateHasher::new();
        at_once.write_words(&words);
        let mut one_by_one = StateHasher::new();
        for w in words {
            one_by_one.write_word(w);
        }
        assert_eq!(at_once.digest(), one_by_one.digest());
        let mut other = StateHasher::new();
        other.write_words(&[1, u64::MAX, 0x0102_0304_0506_0708]);
        assert_ne!(other.digest(), at_once.digest());
    }

    /// The hash is XXH3 itself, with its specified output: fed in pieces or at once, the same
    /// value, and the value of the reference implementation for the empty input.
    #[test]
    fn streamed_and_one_shot_agree_with_the_specification() {
        assert_eq!(StateHasher::new().digest(), 0x2D06_8005_38D3_94C2);
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let mut h = StateHasher::new();
        for piece in data.chunks(33) {
            h.write_bytes(piece);
        }
        assert_eq!(h.digest(), hash_of(&data));
        let mut w = StateHasher::new();
        w.write_word(0x0102_0304_0506_0708);
        assert_eq!(w.digest(), hash_of(&[8, 7, 6, 5, 4, 3, 2, 1]));
    }
}
