//! [`WorldLevels`]: a world's level methods — verify, spawn, save — for every sigecs world
//! (a generated `World` reaches them through its `Deref` to `sigecs::World`). The logic is in
//! `spawn.rs` and `save.rs`.

#[cfg(feature = "transform")]
use sigecs::transform::TransformManager;
use sigecs::{Entity, World, WorldModel};

use super::error::LevelError;
use super::outside::OutsideStores;
use super::registry::{Registration, Registry};
use super::verify::{VerifiedLevel, VerifyOptions};

mod sealed {
    pub trait Sealed {}
    impl<M: sigecs::WorldModel> Sealed for sigecs::World<M> {}
}

/// Levels in a world: verify a blob against the world's signatures, spawn it (all or nothing),
/// save entities back. Implemented for every [`World`]; bring it into scope with
/// `use sigecs_level::WorldLevels;`.
///
/// ## Spawning
///
/// [`verify_level`](WorldLevels::verify_level) verifies against the world's own signatures
/// ([`level_signatures`](WorldLevels::level_signatures): a set maps to the store whose
/// signature is exactly its components, those kept outside the stores aside; a set no
/// signature declares goes to a dynamic store, and a strict world refuses it with `insert`'s
/// words). [`spawn_level`](WorldLevels::spawn_level) is Bitsquid's batched spawn: it creates
/// every entity at once (one run per store) and reserves each store once, then writes each
/// component type, in spawn order, for all its instances — plain old data with one copy per
/// run of rows, postcard instances decoded straight into their rows, tags made in place — and
/// maps the entities components hold; entity `i` of the level is element `i` of the result.
/// Verification has already checked everything that could fail, so a spawn checks the few
/// things left (the ids can be issued, the level was verified for this world, the managers
/// outside the stores accept their instances) before it writes anything, and either completes
/// or spawns nothing: if a component's own code panics (a `Deserialize` or `MapEntities`
/// impl), the ids are retired and every value decoded so far is dropped, once. One verified
/// level spawns any number of times (prefab instances).
///
/// ## Saving
///
/// [`save_entities_with`](WorldLevels::save_entities_with) (and `save_level_with`, every
/// entity, and `save_subtrees_with`, roots with their descendants) writes entities back with
/// [`LevelWriter`](crate::LevelWriter): every registered component of the stores, the
/// components of the [`OutsideStores`] managers given (parents and local matrices from a
/// transform manager; without one from the world's own hierarchy), entities held in components
/// as indices among the saved ones. Blob → world → blob gives the same bytes (when the blob has
/// no unknown component and no identity `local_transform` on an entity with a parent or a child,
/// which save leaves out); world → blob → world gives the same values.
pub trait WorldLevels: sealed::Sealed {
    /// This world's [`Signatures`](crate::Signatures) check (it depends on the model only, not
    /// on the world's contents) for [`verify`](fn@crate::verify): a set of registrations maps
    /// to the store whose signature is exactly their components. A component kept outside the
    /// stores ([`Registration::kept_outside`]: `local_transform`, the structs of
    /// structure-of-arrays managers) is not counted. A set no signature declares gets a store
    /// id past the declared ones, one per distinct such set of the level in the order they are
    /// asked for, which a spawn maps to the world's dynamic store of the set (a strict world
    /// refuses the set, with `insert`'s words). A registration whose type is not a component
    /// of this world is refused.
    fn level_signatures(&self) -> impl FnMut(&[&Registration]) -> Result<u32, String>;

    /// Verifies `blob` against `registry` and this world's signatures: the one step between
    /// bytes and [`spawn_level`](WorldLevels::spawn_level).
    fn verify_level<'r, B: AsRef<[u8]>>(
        &self,
        blob: B,
        registry: &'r Registry,
        options: &VerifyOptions,
    ) -> Result<VerifiedLevel<'r, B>, LevelError>;

    /// Spawns every entity of a verified level with its components that live in the signature
    /// stores, and returns the entities in level order. The hierarchy (`local_transform`,
    /// `parent_index`) goes to the world's own (`World::hierarchy`); without the `transform`
    /// feature there is none, and a level that has a hierarchy is refused
    /// ([`LevelError::NeedsTransform`]). The components of structure-of-arrays managers are
    /// left out (see [`spawn_level_with`](WorldLevels::spawn_level_with)). All or nothing.
    fn spawn_level<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
    ) -> Result<Vec<Entity>, LevelError>;

    /// [`spawn_level`](WorldLevels::spawn_level), and gives the components kept outside the
    /// stores to `spawner`: a structure-of-arrays manager takes its struct; a
    /// `TransformManager` passed here takes `local_transform` and links the hierarchy instead
    /// of the world's own (every entity that has a `local_transform`, a parent or a child gets
    /// an instance, identity without a `local_transform`, linked to its parent's, parents
    /// first). A kept-outside component the level holds and no spawner takes is an error
    /// ([`LevelError::NoSpawner`]).
    fn spawn_level_with<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawner: &mut dyn OutsideStores,
    ) -> Result<Vec<Entity>, LevelError>;

    /// [`spawn_level`](WorldLevels::spawn_level), and gives the components kept outside the
    /// stores to `spawners`, in spawn order (see [`OutsideStores`]); the hierarchy goes to the
    /// world's own unless one of them takes `local_transform`. Every kept-outside component the
    /// level holds must be taken by exactly one of them. All or nothing: a spawner that refuses
    /// its instances leaves the world and every manager unchanged.
    fn spawn_level_with_all<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawners: &mut [&mut dyn OutsideStores],
    ) -> Result<Vec<Entity>, LevelError>;

    /// Saves `entities` (entity `i` of the blob is `entities[i]`). Parents and local
    /// transforms come from `transforms`, or without it from the world's own hierarchy (an
    /// entity whose parent is not saved is a root). Errors: a dead or repeated entity, or a
    /// value the codec refuses.
    #[cfg(feature = "transform")]
    fn save_entities(
        &self,
        entities: &[Entity],
        registry: &Registry,
        transforms: Option<&TransformManager>,
    ) -> Result<Vec<u8>, LevelError>;

    /// Saves `entities` with the components of the stores and those `outside` keeps outside
    /// them (parents from a transform manager among them; without one from the world's own
    /// hierarchy). Errors: a dead or repeated entity, or a value the codec refuses.
    fn save_entities_with(
        &self,
        entities: &[Entity],
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError>;

    /// Saves every live entity, store by store in store order, rows in order (see
    /// [`save_entities`](WorldLevels::save_entities)).
    #[cfg(feature = "transform")]
    fn save_level(
        &self,
        registry: &Registry,
        transforms: Option<&TransformManager>,
    ) -> Result<Vec<u8>, LevelError>;

    /// Saves every live entity, store by store in store order, rows in order, with the
    /// components `outside` keeps outside the stores (see
    /// [`save_entities_with`](WorldLevels::save_entities_with)).
    fn save_level_with(
        &self,
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError>;

    /// Saves `roots` and all their descendants in `transforms` (each root, then its subtree
    /// breadth first; a descendant reached twice is saved once). Descendants that are not
    /// alive in this world are skipped.
    #[cfg(feature = "transform")]
    fn save_subtrees(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
    ) -> Result<Vec<u8>, LevelError>;

    /// [`save_subtrees`](WorldLevels::save_subtrees), with the components the `outside`
    /// managers keep outside the stores (the subtrees, parents and local matrices still come
    /// from `transforms`).
    #[cfg(feature = "transform")]
    fn save_subtrees_with(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError>;
}

impl<M: WorldModel> WorldLevels for World<M> {
    fn level_signatures(&self) -> impl FnMut(&[&Registration]) -> Result<u32, String> {
        super::spawn::level_signatures::<M>()
    }

    fn verify_level<'r, B: AsRef<[u8]>>(
        &self,
        blob: B,
        registry: &'r Registry,
        options: &VerifyOptions,
    ) -> Result<VerifiedLevel<'r, B>, LevelError> {
        crate::verify(blob, registry, self.level_signatures(), options)
    }

    fn spawn_level<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
    ) -> Result<Vec<Entity>, LevelError> {
        super::spawn::spawn(self, level, &mut [], false)
    }

    fn spawn_level_with<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawner: &mut dyn OutsideStores,
    ) -> Result<Vec<Entity>, LevelError> {
        super::spawn::spawn(self, level, &mut [spawner], true)
    }

    fn spawn_level_with_all<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawners: &mut [&mut dyn OutsideStores],
    ) -> Result<Vec<Entity>, LevelError> {
        super::spawn::spawn(self, level, spawners, true)
    }

    #[cfg(feature = "transform")]
    fn save_entities(
        &self,
        entities: &[Entity],
        registry: &Registry,
        transforms: Option<&TransformManager>,
    ) -> Result<Vec<u8>, LevelError> {
        match transforms {
            Some(tm) => self.save_entities_with(entities, registry, &[tm]),
            None => self.save_entities_with(entities, registry, &[]),
        }
    }

    fn save_entities_with(
        &self,
        entities: &[Entity],
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        super::save::save(self, entities, registry, outside)
    }

    #[cfg(feature = "transform")]
    fn save_level(
        &self,
        registry: &Registry,
        transforms: Option<&TransformManager>,
    ) -> Result<Vec<u8>, LevelError> {
        let all: Vec<Entity> = self.entities().collect();
        self.save_entities(&all, registry, transforms)
    }

    fn save_level_with(
        &self,
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        let all: Vec<Entity> = self.entities().collect();
        self.save_entities_with(&all, registry, outside)
    }

    #[cfg(feature = "transform")]
    fn save_subtrees(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
    ) -> Result<Vec<u8>, LevelError> {
        self.save_subtrees_with(roots, registry, transforms, &[])
    }

    #[cfg(feature = "transform")]
    fn save_subtrees_with(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        let list = super::save::subtrees(self, roots, transforms);
        let mut managers: Vec<&dyn OutsideStores> = Vec::with_capacity(outside.len() + 1);
        managers.push(transforms);
        managers.extend_from_slice(outside);
        self.save_entities_with(&list, registry, &managers)
    }
}
