//! [`Entity`]: a slot index and a generation packed in one integer, and the constants that
//! describe the layout. The `wide-entity` feature widens the generation from 8 to 32 bits and the
//! id from [`u32`] to [`u64`]; the index keeps its 22 bits.

use std::fmt;

/// The integer an [`Entity`] is stored in: `u32`, or `u64` with the `wide-entity` feature. Use
/// it to store raw ids ([`Entity::to_bits`]) in code that compiles under both.
#[cfg(not(feature = "wide-entity"))]
pub type EntityBits = u32;
/// The integer an [`Entity`] is stored in: `u32`, or `u64` with the `wide-entity` feature. Use
/// it to store raw ids ([`Entity::to_bits`]) in code that compiles under both.
#[cfg(feature = "wide-entity")]
pub type EntityBits = u64;

/// A slot's generation: `u8`, or `u32` with the `wide-entity` feature. It wraps after
/// `Generation::MAX + 1` destroys of the slot (see the module docs, "Collisions").
#[cfg(not(feature = "wide-entity"))]
pub type Generation = u8;
/// A slot's generation: `u8`, or `u32` with the `wide-entity` feature. It wraps after
/// `Generation::MAX + 1` destroys of the slot (see the module docs, "Collisions").
#[cfg(feature = "wide-entity")]
pub type Generation = u32;

/// Bits of an [`Entity`] that hold the slot index (the low bits).
pub const INDEX_BITS: u32 = 22;
/// Bits of an [`Entity`] that hold the generation, just above the index: 8, or 32 with the
/// `wide-entity` feature.
pub const GENERATION_BITS: u32 = Generation::BITS;
/// Mask of the index bits.
pub(crate) const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// The largest number of slots (live or free) a manager can hold: 2^22, under both layouts.
pub const MAX_ENTITIES: usize = 1 << INDEX_BITS;
#[doc(hidden)]
/// Freed indices are reused only while more than this many wait in the queue (first in, first
/// out), so a stale id stays dead for many creates (see the module docs, "Collisions").
pub const MINIMUM_FREE_INDICES: usize = 1024;

/// The bits of an [`EntityBits`] that an id uses; the rest (2 bits, or 10 with `wide-entity`)
/// are always zero.
const USED_BITS: EntityBits = (1 << (INDEX_BITS + GENERATION_BITS)) - 1;

/// A weak reference to an entity: a slot index and the generation the slot had when the id was
/// issued.
///
/// ```
/// use sigecs::entity::Entity;
/// let e = Entity::new(3, 1);
/// assert_eq!((e.index(), e.generation()), (3, 1));
/// assert_eq!(Entity::from_bits(e.to_bits()), e);
/// assert_eq!(e.to_string(), "3v1");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Entity(EntityBits);

impl Entity {
    /// Builds an id from its parts. `index` is masked to [`INDEX_BITS`].
    #[inline]
    pub const fn new(index: u32, generation: Generation) -> Self {
        Entity((index & INDEX_MASK) as EntityBits | ((generation as EntityBits) << INDEX_BITS))
    }

    /// The slot index, usable as an index into per-entity arrays.
    #[inline]
    #[allow(
        clippy::unnecessary_cast,
        reason = "`EntityBits` is `u64` with `wide-entity`"
    )]
    pub const fn index(self) -> u32 {
        (self.0 as u32) & INDEX_MASK
    }

    /// The generation of the slot when this id was issued.
    #[inline]
    pub const fn generation(self) -> Generation {
        // The bits above the generation are always zero, so the truncation drops nothing.
        (self.0 >> INDEX_BITS) as Generation
    }

    /// The raw id, e.g. for serialization: index in the low [`INDEX_BITS`], generation in the
    /// [`GENERATION_BITS`] above, the high bits zero.
    #[inline]
    pub const fn to_bits(self) -> EntityBits {
        self.0
    }

    /// Rebuilds an id from [`Entity::to_bits`]. The unused high bits are cleared.
    #[inline]
    pub const fn from_bits(bits: EntityBits) -> Self {
        Entity(bits & USED_BITS)
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({}v{})", self.index(), self.generation())
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_packs_index_and_generation() {
        let e = Entity::new(INDEX_MASK, Generation::MAX);
        assert_eq!(e.index(), INDEX_MASK);
        assert_eq!(e.generation(), Generation::MAX);
        assert_eq!(Entity::from_bits(e.to_bits()), e);
        assert_eq!(
            e.to_bits(),
            USED_BITS,
            "every used bit is set, nothing else"
        );
        assert_eq!(format!("{:?}", Entity::new(5, 2)), "Entity(5v2)");
        assert_eq!(Entity::new(5, 2).to_string(), "5v2");
        // Index bits beyond 22 do not leak into the generation.
        assert_eq!(Entity::new(1 << 22, 0), Entity::new(0, 0));
        assert_eq!(Entity::new(3, 1).to_bits(), 3 | (1 << 22));
        // The spare high bits are cleared, not read as index or generation.
        assert_eq!(Entity::from_bits(EntityBits::MAX), e);
        assert_eq!(Entity::from_bits(!USED_BITS), Entity::new(0, 0));
    }

    #[test]
    #[cfg(not(feature = "wide-entity"))]
    fn the_default_layout_has_22_index_and_8_generation_bits() {
        assert_eq!(std::mem::size_of::<Entity>(), 4);
        assert_eq!(
            (INDEX_BITS, GENERATION_BITS, Generation::MAX as u32),
            (22, 8, 255)
        );
        assert_eq!(Entity::new(7, 255).to_bits(), 7 | (255 << 22));
        assert_eq!(Entity::from_bits(u32::MAX), Entity::new(INDEX_MASK, 255));
    }

    #[test]
    #[cfg(feature = "wide-entity")]
    fn the_wide_layout_has_32_generation_bits() {
        assert_eq!(std::mem::size_of::<Entity>(), 8);
        assert_eq!(
            (INDEX_BITS, GENERATION_BITS, Generation::MAX as u32),
            (22, 32, u32::MAX)
        );
        let e = Entity::new(7, u32::MAX);
        assert_eq!(e.to_bits(), 7 | (u64::from(u32::MAX) << 22));
        assert_eq!(e.generation(), u32::MAX);
        assert_eq!(Entity::new(7, 256).generation(), 256, "no 8-bit wrap");
        assert_eq!(
            Entity::from_bits(u64::MAX),
            Entity::new(INDEX_MASK, u32::MAX)
        );
    }
}
