//! [`Entity`] in other crates' traits, each behind the cargo feature of the same name, so that
//! a component holding an entity can derive them (the `sigecs-level` crate stores such
//! components: plain old data as bytes, the rest with serde):
//!
//! - `bytemuck`: [`Entity`] is `Zeroable` and `Pod` (any bits are a valid, possibly dead, id).
//! - `serde`: an [`Entity`] serializes as its bits, as a newtype struct named
//!   [`SERDE_NAME`] (JSON and postcard write it as the bare number), so that a deserializer can
//!   recognise entities (the level compiler checks that each names an entity of the level).
//!   Deserializing refuses bits an id does not use instead of clearing them.

use super::{Entity, EntityBits};

// SAFETY: `Entity` is `#[repr(transparent)]` over an integer: no padding, and every bit pattern
// is a valid value (an id that may be dead or never issued, which every API handles).
#[cfg(feature = "bytemuck")]
unsafe impl bytemuck::Zeroable for Entity {}
// SAFETY: as above; `Entity` is `Copy + 'static`.
#[cfg(feature = "bytemuck")]
unsafe impl bytemuck::Pod for Entity {}

/// The name an [`Entity`] gives serde as a newtype struct of its bits: how a deserializer that
/// maps entities (`sigecs-level`'s) recognises one. Not for users, hence hidden.
#[cfg(feature = "serde")]
#[doc(hidden)]
pub const SERDE_NAME: &str = "$sigecs::Entity";

#[cfg(feature = "serde")]
impl serde::Serialize for Entity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(SERDE_NAME, &self.to_bits())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Entity {
    /// Reads an entity's bits. Bits an id does not use (above
    /// [`INDEX_BITS`](super::INDEX_BITS) + [`GENERATION_BITS`](super::GENERATION_BITS)) are
    /// refused, not cleared.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(SERDE_NAME, EntityVisitor)
    }
}

/// Reads an [`Entity`] as a newtype struct of its bits (or the bits alone).
#[cfg(feature = "serde")]
struct EntityVisitor;

#[cfg(feature = "serde")]
impl EntityVisitor {
    #[allow(
        clippy::useless_conversion,
        reason = "`EntityBits` is `u64` with `wide-entity`"
    )]
    fn entity<E: serde::de::Error>(self, bits: EntityBits) -> Result<Entity, E> {
        let entity = Entity::from_bits(bits);
        if entity.to_bits() == bits {
            Ok(entity)
        } else {
            Err(E::invalid_value(
                serde::de::Unexpected::Unsigned(bits.into()),
                &self,
            ))
        }
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::de::Visitor<'de> for EntityVisitor {
    type Value = Entity;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let largest = Entity::from_bits(EntityBits::MAX).to_bits();
        write!(f, "an entity id (at most {largest})")
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(self, d: D) -> Result<Entity, D::Error> {
        let bits = <EntityBits as serde::Deserialize>::deserialize(d)?;
        self.entity(bits)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Entity, E> {
        match EntityBits::try_from(v) {
            Ok(bits) => self.entity(bits),
            Err(_) => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
        }
    }
}
