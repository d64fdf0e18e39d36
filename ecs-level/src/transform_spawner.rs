//! The transform hierarchy as an [`OutsideStores`] spawner: a
//! [`TransformManager`] takes `local_transform` ([`LocalTransform`]) and links `parent_index`;
//! and the same for the world's own hierarchy ([`WorldHierarchy`], through the world's
//! `set_transforms` and `set_parent`, which keep it in step with the entities).
//!
//! Spawning: every entity that has a `local_transform`, a parent or a child gets an instance
//! (its local matrix, identity without one), linked to its parent's, parents first.
//! [`prepare`](OutsideStores::prepare) refuses the spawn ([`LevelError::Transform`]) when
//! one of those entities already has an instance in the manager or the manager has no room;
//! then nothing can go wrong in [`write`](OutsideStores::write): instances are created and
//! linked parents first, so each link puts a fresh instance, which has no children yet, below
//! its parent (no cycle, and each link is as cheap as the manager's link of a leaf).
//!
//! Saving: parents from the manager (an entity whose parent is not saved is a root) and local
//! matrices. An identity local is left out where spawning implies it (the entity has a parent,
//! or is one: the link makes its instance); a lone root's is written, since without it the root
//! would come back with no transform.

use sigecs::glam::Mat4;
use sigecs::transform::{Instance, TransformError, TransformManager, MAX_INSTANCES};
use sigecs::{Entity, World, WorldModel};

use super::entities::LocalTransform;
use super::error::LevelError;
use super::outside::{OutsideSave, OutsideSpawn, OutsideStores};
use super::registry::Registration;

/// The local matrix of every member (identity without a `local_transform`), by level entity.
fn locals(spawn: &OutsideSpawn<'_>) -> Vec<Option<Mat4>> {
    let mut locals = vec![None; spawn.level().num_entities() as usize];
    if let Some(data) = spawn.component_of::<LocalTransform>() {
        let values = data
            .pod::<LocalTransform>()
            .expect("checked in prepare: the registered type");
        for (e, v) in data.entity_indices().zip(values.iter()) {
            locals[e as usize] = Some(Mat4::from(*v));
        }
    }
    locals
}

/// Refuses a level whose `local_transform` is registered as another type.
fn check_locals(spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
    if let Some(data) = spawn.component_of::<LocalTransform>() {
        data.pod::<LocalTransform>()?;
    }
    Ok(())
}

impl OutsideStores for TransformManager {
    fn takes(&self, registration: &Registration) -> bool {
        registration.is::<LocalTransform>()
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
        check_locals(spawn)?;
        let order = spawn.level().hierarchy_members();
        if order.len() > MAX_INSTANCES - self.len() {
            return Err(LevelError::Transform(TransformError::Full));
        }
        // These are the lookups `create` would do: refused here, before anything is written.
        // An empty manager holds none of the entities.
        if !self.is_empty() {
            for &e in order {
                let entity = spawn.spawned()[e as usize];
                if let Some(instance) = self.lookup(entity) {
                    return Err(LevelError::Transform(TransformError::AlreadyPresent {
                        entity,
                        instance,
                    }));
                }
            }
        }
        Ok(())
    }

    fn write(&mut self, spawn: &OutsideSpawn<'_>) {
        let res = spawn.level();
        let spawned = spawn.spawned();
        let order = spawn.level().hierarchy_members();
        let locals = locals(spawn);
        let mut instances: Vec<Instance> = vec![Instance::NIL; res.num_entities() as usize];
        self.reserve(order.len());
        for &e in order {
            let e = e as usize;
            let local = locals[e].unwrap_or(Mat4::IDENTITY);
            let i = self
                .create(spawned[e], local)
                .expect("prepare checked the entity has no instance and there is room");
            instances[e] = i;
            if let Some(p) = res.parent(e as u32) {
                // Parents first: the parent's instance exists, and a fresh instance has no
                // descendant, so the link makes no cycle.
                self.link(i, instances[p as usize])
                    .expect("a fresh instance links below its parent");
            }
        }
    }

    fn save(&self, save: &mut OutsideSave<'_>) -> Result<(), LevelError> {
        let local_reg = save.registry().by_type::<LocalTransform>();
        let entities = save.entities();
        let parents: Vec<Option<(Instance, Option<u32>)>> = entities
            .iter()
            .map(|&e| {
                let inst = self.lookup(e)?;
                let parent = self
                    .parent(inst)
                    .ok()
                    .flatten()
                    .and_then(|p| self.entity(p).ok())
                    .and_then(|p| save.index_of(p));
                Some((inst, parent))
            })
            .collect();
        let mut is_parent = vec![false; entities.len()];
        for &(_, parent) in parents.iter().flatten() {
            if let Some(p) = parent {
                is_parent[p as usize] = true;
            }
        }
        let w = save.writer();
        for (i, entry) in parents.iter().enumerate() {
            let Some((inst, parent)) = *entry else {
                continue;
            };
            w.set_parent(i as u32, parent)?;
            if let (Some(reg), Ok(local)) = (local_reg, self.local(inst)) {
                if local != Mat4::IDENTITY || (parent.is_none() && !is_parent[i]) {
                    w.push(reg, i as u32, &LocalTransform::from(local))?;
                }
            }
        }
        Ok(())
    }
}

/// The world's own hierarchy among a spawn's spawners: it takes `local_transform`, checks in
/// [`prepare`](OutsideStores::prepare) that the hierarchy has room, and writes nothing itself
/// (the spawn links the members into the world with [`link_in_world`] once the entities are
/// live). Saving goes through the world's [`TransformManager`].
pub(crate) struct WorldHierarchy {
    /// Instances the world's hierarchy can still take.
    pub(crate) room: usize,
}

impl OutsideStores for WorldHierarchy {
    fn takes(&self, registration: &Registration) -> bool {
        registration.is::<LocalTransform>()
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
        check_locals(spawn)?;
        let order = spawn.level().hierarchy_members();
        // The world's hierarchy holds instances of live entities only, so none of the new
        // entities has one.
        if order.len() > self.room {
            return Err(LevelError::Transform(TransformError::Full));
        }
        Ok(())
    }

    fn write(&mut self, _spawn: &OutsideSpawn<'_>) {}

    fn save(&self, _save: &mut OutsideSave<'_>) -> Result<(), LevelError> {
        Ok(())
    }
}

/// Gives the members of a spawned level their transforms in `world`'s own hierarchy, parents
/// first, with the world's API (so the hierarchy stays in step with the entities). Cannot fail
/// once [`WorldHierarchy`] prepared the spawn: the entities are alive and have no transform.
/// Linear in the members at any depth: each link puts a fresh instance, a leaf, below its
/// parent, which needs no cycle walk and no subtree update.
pub(crate) fn link_in_world<M: WorldModel>(world: &mut World<M>, spawn: &OutsideSpawn<'_>) {
    let res = spawn.level();
    let spawned = spawn.spawned();
    let order = spawn.level().hierarchy_members();
    let locals = locals(spawn);
    let nodes: Vec<(Entity, Mat4)> = order
        .iter()
        .map(|&e| {
            (
                spawned[e as usize],
                locals[e as usize].unwrap_or(Mat4::IDENTITY),
            )
        })
        .collect();
    world
        .set_transforms(&nodes)
        .expect("the spawned entities are alive and the hierarchy has room");
    for &e in order {
        if let Some(p) = res.parent(e) {
            world
                .set_parent(spawned[e as usize], spawned[p as usize])
                .expect("a fresh instance links below its parent");
        }
    }
}
