//! Entities inside components, and the transform hierarchy's local matrix.
//!
//! A component that holds an [`Entity`] (a target, a leader, an owner) refers, inside a
//! level, to another entity *of the level*: the value stored is the entity's level
//! index (`Entity::from_bits(index)`), or [`NO_ENTITY`] for "none". The component implements
//! [`MapEntities`] and is registered with [`Registration::map_entities`](super::Registration::map_entities)
//! (`#[component(level = "…", map_entities)]`); then
//!
//! - the verifier checks every stored entity is [`NO_ENTITY`] or below `num_entities`,
//! - the spawner replaces each index with the entity spawned for it,
//! - save replaces each entity with its index among the saved entities ([`NO_ENTITY`] for an
//!   entity that is not saved, dead or `NO_ENTITY` itself).
//!
//! In JSON an entity is written as its level index (a number), or as the bits of
//! [`NO_ENTITY`] for none; the compiler refuses any other value (an index past the level's
//! entities, a negative or fractional number) with its path and the valid range. [`Entity`] is
//! `Pod` and serializes as its bits (sigecs's features `bytemuck` and `serde`, which this crate
//! turns on; see `sigecs::entity`).
//!
//! [`LocalTransform`] is the one component a generated registry always has
//! (`"local_transform"`, [`Registration::local_transform`](super::Registration::local_transform)):
//! the local matrix of an entity in a [`TransformManager`](sigecs::transform::TransformManager).
//! It is kept outside the signature stores, so it never counts towards an entity's signature; a
//! spawn given a transform manager (an [`OutsideStores`](super::OutsideStores) spawner) creates
//! the entity's instance with it and links `parent_index`. The type is there without the
//! `transform` feature too, so that every build reads the same levels (and refuses one with a
//! hierarchy it cannot spawn); only its conversions to and from glam's `Mat4` need the feature.

use serde::{Deserialize, Serialize};
#[cfg(feature = "transform")]
use sigecs::glam::Mat4;

use sigecs::entity::{Entity, EntityBits};

/// "No entity" in a level: the id with every used bit set (slot index 2²²−1 at the largest
/// generation), which a world only issues once all 2²² slots are in use.
pub const NO_ENTITY: Entity = Entity::from_bits(EntityBits::MAX);

/// A component that holds entities: `map_entities` calls `map` on each one and stores the result.
///
/// ```
/// use sigecs::entity::Entity;
/// use sigecs_level::MapEntities;
/// struct Leader(Entity);
/// impl MapEntities for Leader {
///     fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
///         self.0 = map(self.0);
///     }
/// }
/// let mut l = Leader(Entity::from_bits(2));
/// l.map_entities(&mut |e| Entity::new(e.index() + 10, 1));
/// assert_eq!(l.0, Entity::new(12, 1));
/// ```
pub trait MapEntities {
    /// Replaces every entity held with `map(entity)`.
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity);
}

impl MapEntities for Entity {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        *self = map(*self);
    }
}

/// The local matrix of an entity in the transform hierarchy (column-major, glam's order),
/// stored in levels as `"local_transform"`: 16 numbers in JSON, 64 bytes in a blob.
#[derive(
    Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, Serialize, Deserialize,
)]
#[repr(C)]
pub struct LocalTransform(pub [f32; 16]);

impl LocalTransform {
    /// The level name.
    pub const NAME: &'static str = "local_transform";

    /// The identity matrix.
    pub const IDENTITY: LocalTransform = LocalTransform([
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ]);
}

#[cfg(feature = "transform")]
impl From<Mat4> for LocalTransform {
    fn from(m: Mat4) -> Self {
        LocalTransform(m.to_cols_array())
    }
}

#[cfg(feature = "transform")]
impl From<LocalTransform> for Mat4 {
    fn from(t: LocalTransform) -> Self {
        Mat4::from_cols_array(&t.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_serializes_as_its_bits() {
        let e = Entity::new(5, 2);
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, e.to_bits().to_string());
        assert_eq!(serde_json::from_str::<Entity>(&json).unwrap(), e);
        assert_eq!(
            serde_json::from_str::<Entity>("3").unwrap(),
            Entity::from_bits(3)
        );
        assert_eq!(bytemuck::bytes_of(&e), &e.to_bits().to_le_bytes());
    }

    /// A reported problem: deserializing an entity cleared the bits an id does not use, so
    /// 2^30 read as entity 0 and `u32::MAX` as `NO_ENTITY`. Such bits are now refused.
    #[test]
    fn bits_an_id_does_not_use_are_refused() {
        // The lowest unused bit, set alone: 2^30 (2^54 with `wide-entity`).
        let unused: EntityBits = NO_ENTITY.to_bits() + 1;
        let err = serde_json::from_str::<Entity>(&unused.to_string()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid value: integer `{unused}`, expected an entity id (at most {})",
                NO_ENTITY.to_bits()
            )
        );
        assert_eq!(
            serde_json::from_str::<Entity>(&NO_ENTITY.to_bits().to_string()).unwrap(),
            NO_ENTITY
        );
        // postcard: the bits are a varint, as before.
        let bytes = postcard::to_allocvec(&Entity::new(5, 2)).unwrap();
        assert_eq!(
            bytes,
            postcard::to_allocvec(&Entity::new(5, 2).to_bits()).unwrap()
        );
        assert_eq!(
            postcard::from_bytes::<Entity>(&bytes).unwrap(),
            Entity::new(5, 2)
        );
        let err = postcard::from_bytes::<Entity>(&postcard::to_allocvec(&unused).unwrap());
        assert_eq!(err, Err(postcard::Error::SerdeDeCustom));
    }

    #[cfg(feature = "transform")]
    #[test]
    fn local_transform_is_glam_column_major() {
        let m = Mat4::from_translation(sigecs::glam::Vec3::new(1.0, 2.0, 3.0));
        let t = LocalTransform::from(m);
        assert_eq!(&t.0[12..15], &[1.0, 2.0, 3.0]);
        assert_eq!(Mat4::from(t), m);
        assert_eq!(Mat4::from(LocalTransform::IDENTITY), Mat4::IDENTITY);
    }
}
