//! Components kept outside the signature stores: the [`OutsideStores`] spawners.
//!
//! Not every component of a level lives in a signature store. The transform hierarchy's
//! [`LocalTransform`](super::LocalTransform) lives in a
//! [`TransformManager`](sigecs::transform::TransformManager); a structure-of-arrays manager
//! (any `#[derive(SoaManager)]`) keeps its instances in its own columns. Such a component is registered with
//! [`Registration::kept_outside`]: a world's signature check leaves it out of an entity's set,
//! the spawner of the stores does not write it, and a spawn hands its instances to the manager
//! that [takes](OutsideStores::takes) it. Save asks the same managers to write them back.
//!
//! A spawn with spawners ([`World::spawn_level_with`](crate::World::spawn_level_with),
//! [`World::spawn_level_with_all`](crate::World::spawn_level_with_all)) stays atomic in
//! two phases:
//!
//! 1. after the world's own checks and once the ids are issued, every spawner's
//!    [`prepare`](OutsideStores::prepare) runs, in spawn order: it checks that its instances can
//!    be written (and may prepare them). If one fails, the spawners prepared before it are
//!    [`cancel`](OutsideStores::cancel)led, newest first, the ids are retired and the error is
//!    returned: the world and every manager are as they were;
//! 2. the stores are written and their rows committed, then every spawner's
//!    [`write`](OutsideStores::write) runs, in spawn order, and cannot fail.
//!
//! Spawn order: the spawners run in the order of the components they take
//! ([`Registration::order`], ties by identifier, as the verifier's
//! [`spawn_order`](super::VerifiedLevel::spawn_order)); a spawner that takes several runs at
//! its first, and one that takes no component of the registry runs last. Before anything is
//! issued the spawn also refuses a kept-outside component that the level holds and no spawner
//! takes ([`LevelError::NoSpawner`]: nothing is dropped silently), one that two spawners take,
//! and a spawner that takes a component registered for the stores.
//!
//! [`World::spawn_level`](crate::World::spawn_level), given no spawner, spawns the stores'
//! components and the hierarchy, into the world's own (without the `transform` feature, a level
//! with a hierarchy is refused); it leaves every other kept-outside component out.
//!
//! The bundled implementations: [`TransformManager`](sigecs::transform::TransformManager) (takes
//! `local_transform`, links `parent_index`; with the `transform` feature) and every structure-of-arrays manager whose instance
//! struct is plain old data (see [`SoaManager`](sigecs::soa::SoaManager)).

use std::any::Any;

use rustc_hash::FxHashMap;

use super::error::LevelError;
use super::registry::ComponentData;
use super::registry::{Registration, Registry};
use super::verify::VerifiedLevel;
use super::write::LevelWriter;
use sigecs::entity::Entity;

/// A manager that keeps level components outside the signature stores: it takes them when a
/// level spawns and writes them back when entities are saved. See the module docs (in the source).
///
/// A spawner checks in [`prepare`](Self::prepare) everything that could make
/// [`write`](Self::write) fail; `write` then only writes. If `prepare` changes the manager, it
/// undoes the change on an error and in [`cancel`](Self::cancel).
pub trait OutsideStores {
    /// Whether this manager takes the component of `registration` (typically
    /// `registration.is::<T>()`). A component it takes must be registered with
    /// [`Registration::kept_outside`].
    fn takes(&self, registration: &Registration) -> bool;

    /// Phase 1: checks that the level's instances of the components this manager takes can
    /// be written for `spawn.spawned()` (none of them already has an instance here, there is
    /// room). On an error the manager must be as it was before the call.
    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError>;

    /// Undoes what [`prepare`](Self::prepare) did, when the spawn is abandoned after this
    /// manager's `prepare` succeeded (a later spawner's failed). The default does nothing, for a
    /// `prepare` that only checks.
    fn cancel(&mut self, spawn: &OutsideSpawn<'_>) {
        let _ = spawn;
    }

    /// Phase 2: writes the instances, entity `i` of the level being `spawn.spawned()[i]`.
    /// Called once after a successful `prepare`, with the same `spawn`; cannot fail.
    fn write(&mut self, spawn: &OutsideSpawn<'_>);

    /// Writes the instances this manager holds for the saved entities into the saver's
    /// [`LevelWriter`] (entity `i` of the blob is `save.entities()[i]`).
    fn save(&self, save: &mut OutsideSave<'_>) -> Result<(), LevelError>;
}

/// What a spawner sees of a spawn: the verified level and the entities spawned for it.
#[derive(Clone, Copy, Debug)]
pub struct OutsideSpawn<'a> {
    level: &'a VerifiedLevel<'a, dyn AsRef<[u8]> + 'a>,
    spawned: &'a [Entity],
}

impl<'a> OutsideSpawn<'a> {
    pub(crate) fn new(
        level: &'a VerifiedLevel<'a, dyn AsRef<[u8]> + 'a>,
        spawned: &'a [Entity],
    ) -> Self {
        OutsideSpawn { level, spawned }
    }

    /// The verified level (parents, depths, every component record).
    pub fn level(&self) -> &'a VerifiedLevel<'a, dyn AsRef<[u8]> + 'a> {
        self.level
    }

    /// The spawned entities: entity `i` of the level is `spawned()[i]`.
    pub fn spawned(&self) -> &'a [Entity] {
        self.spawned
    }

    /// The level's instances of the registered type `T`, if its registry has `T` and the
    /// blob a record of it.
    pub fn component_of<T: Any>(&self) -> Option<ComponentData<'a>> {
        let reg = self.level.registry().by_type::<T>()?;
        self.level.component(reg.name())
    }
}

/// What a spawner sees of a save: the saved entities and the writer of the blob.
pub struct OutsideSave<'a> {
    entities: &'a [Entity],
    index: &'a FxHashMap<Entity, u32>,
    registry: &'a Registry,
    writer: &'a mut LevelWriter,
}

impl<'a> OutsideSave<'a> {
    pub(crate) fn new(
        entities: &'a [Entity],
        index: &'a FxHashMap<Entity, u32>,
        registry: &'a Registry,
        writer: &'a mut LevelWriter,
    ) -> Self {
        OutsideSave {
            entities,
            index,
            registry,
            writer,
        }
    }

    /// The saved entities: entity `i` of the blob is `entities()[i]`.
    pub fn entities(&self) -> &'a [Entity] {
        self.entities
    }

    /// The blob index of a saved entity, `None` for one that is not saved.
    pub fn index_of(&self, entity: Entity) -> Option<u32> {
        self.index.get(&entity).copied()
    }

    /// The registry the blob is written with.
    pub fn registry(&self) -> &'a Registry {
        self.registry
    }

    /// The blob's writer: [`LevelWriter::push`] a component, [`LevelWriter::set_parent`].
    pub fn writer(&mut self) -> &mut LevelWriter {
        self.writer
    }
}

/// The order in which `spawners` run for a level with this registry (indices into
/// `spawners`), after refusing a kept-outside component the level holds (`holds`) and no
/// spawner takes, one that two take, and a store component that one takes.
pub(crate) fn spawn_order(
    registry: &Registry,
    holds: impl Fn(&Registration) -> bool,
    spawners: &[&mut dyn OutsideStores],
) -> Result<Vec<usize>, LevelError> {
    // Each spawner's first component in spawn order; `None` sorts last.
    let mut first: Vec<Option<(i32, u64)>> = vec![None; spawners.len()];
    for reg in registry.registrations() {
        let mut taker: Option<usize> = None;
        for (k, s) in spawners.iter().enumerate() {
            if !s.takes(reg) {
                continue;
            }
            if !reg.is_kept_outside() {
                return Err(LevelError::NotKeptOutside {
                    component: reg.component_ref(),
                });
            }
            if taker.replace(k).is_some() {
                return Err(LevelError::TwoSpawners {
                    component: reg.component_ref(),
                });
            }
            let key = (reg.order(), reg.identifier());
            if first[k].is_none_or(|f| key < f) {
                first[k] = Some(key);
            }
        }
        if taker.is_none() && reg.is_kept_outside() && holds(reg) {
            return Err(LevelError::NoSpawner {
                component: reg.component_ref(),
            });
        }
    }
    let mut order: Vec<usize> = (0..spawners.len()).collect();
    order.sort_by_key(|&k| (first[k].is_none(), first[k]));
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes the components with these names; does nothing else.
    struct Takes(&'static [&'static str]);

    impl OutsideStores for Takes {
        fn takes(&self, registration: &Registration) -> bool {
            self.0.contains(&registration.name())
        }
        fn prepare(&mut self, _: &OutsideSpawn<'_>) -> Result<(), LevelError> {
            Ok(())
        }
        fn write(&mut self, _: &OutsideSpawn<'_>) {}
        fn save(&self, _: &mut OutsideSave<'_>) -> Result<(), LevelError> {
            Ok(())
        }
    }

    fn registry() -> Registry {
        Registry::new([
            Registration::pod::<u8>("stored"),
            Registration::pod::<u16>("late")
                .kept_outside()
                .spawn_order(2),
            Registration::pod::<u32>("early")
                .kept_outside()
                .spawn_order(-1),
            Registration::pod::<u64>("middle")
                .kept_outside()
                .spawn_order(1),
        ])
        .unwrap()
    }

    fn order(
        spawners: &mut [&mut dyn OutsideStores],
        holds: &[&str],
    ) -> Result<Vec<usize>, LevelError> {
        spawn_order(&registry(), |r| holds.contains(&r.name()), spawners)
    }

    #[test]
    fn spawners_are_ordered_by_their_first_component() {
        let (mut a, mut b, mut c, mut none) = (
            Takes(&["late"]),
            Takes(&["late_not_registered", "middle"]),
            Takes(&["early"]),
            Takes(&[]),
        );
        assert_eq!(
            order(&mut [&mut none, &mut a, &mut b, &mut c], &["late", "early"]).unwrap(),
            [3, 2, 1, 0]
        );
        // A spawner of two components runs at its first.
        let (mut two, mut late) = (Takes(&["late", "early"]), Takes(&["middle"]));
        assert_eq!(order(&mut [&mut late, &mut two], &[]).unwrap(), [1, 0]);
    }

    #[test]
    fn uncovered_shared_and_stored_components_are_refused() {
        let reg = registry();
        let cref = |name| reg.by_name(name).unwrap().component_ref();
        let mut a = Takes(&["late"]);
        // Held and not taken; not held and not taken is fine.
        assert_eq!(
            order(&mut [&mut a], &["late", "middle"]).unwrap_err(),
            LevelError::NoSpawner {
                component: cref("middle")
            }
        );
        assert_eq!(order(&mut [&mut a], &["late"]).unwrap(), [0]);
        let mut b = Takes(&["late"]);
        assert_eq!(
            order(&mut [&mut a, &mut b], &[]).unwrap_err(),
            LevelError::TwoSpawners {
                component: cref("late")
            }
        );
        let mut s = Takes(&["stored"]);
        assert_eq!(
            order(&mut [&mut s], &[]).unwrap_err(),
            LevelError::NotKeptOutside {
                component: cref("stored")
            }
        );
    }
}
