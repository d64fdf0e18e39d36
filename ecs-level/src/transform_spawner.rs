//! The transform hierarchy as an [`OutsideStores`] spawner: a
//! [`TransformManager`] takes `local_transform` ([`LocalTransform`]) and links `parent_index`.
//!
//! Spawning: every entity that has a `local_transform`, a parent or a child gets an instance
//! (its local matrix, identity without one), linked to its parent's, parents first.
//! [`prepare`](OutsideStores::prepare) refuses the spawn ([`LevelError::Transform`]) when
//! one of those entities already has an instance in the manager or the manager has no room;
//! then nothing can go wrong in [`write`](OutsideStores::write) (fresh instances linked parents
//! first make no cycle).
//!
//! Saving: parents from the manager (an entity whose parent is not saved is a root) and local
//! matrices. An identity local is left out where spawning implies it (the entity has a parent,
//! or is one: the link makes its instance); a lone root's is written, since without it the root
//! would come back with no transform.

use glam::Mat4;

use super::entities::LocalTransform;
use super::error::LevelError;
use super::outside::{OutsideSave, OutsideSpawn, OutsideStores};
use super::registry::Registration;
use crate::transform::{Instance, TransformError, TransformManager, MAX_INSTANCES};

/// The entities of the level that get an instance (those with a `local_transform`, a parent
/// or a child), parents first.
fn members(spawn: &OutsideSpawn<'_>, out: &mut Vec<u32>) {
    let res = spawn.level();
    let mut member = vec![false; res.num_entities() as usize];
    if let Some(data) = spawn.component_of::<LocalTransform>() {
        for e in data.entity_indices() {
            member[e as usize] = true;
        }
    }
    for (e, p) in res.parents().enumerate() {
        if let Some(p) = p {
            member[e] = true;
            member[p as usize] = true;
        }
    }
    out.clear();
    out.extend(
        res.parents_first()
            .into_iter()
            .filter(|&e| member[e as usize]),
    );
}

impl OutsideStores for TransformManager {
    fn takes(&self, registration: &Registration) -> bool {
        registration.is::<LocalTransform>()
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
        if let Some(data) = spawn.component_of::<LocalTransform>() {
            data.pod::<LocalTransform>()?;
        }
        let mut order = std::mem::take(&mut self.spawn_members);
        members(spawn, &mut order);
        if order.len() > MAX_INSTANCES - self.len() {
            return Err(LevelError::Transform(TransformError::Full));
        }
        // These are the lookups `create` would do (`write` does not repeat them); an empty
        // manager holds none of the entities.
        if !self.is_empty() {
            for &e in &order {
                let entity = spawn.spawned()[e as usize];
                if let Some(instance) = self.lookup(entity) {
                    return Err(LevelError::Transform(TransformError::AlreadyPresent {
                        entity,
                        instance,
                    }));
                }
            }
        }
        // Kept for `write` (scratch: not part of the manager's state).
        self.spawn_members = order;
        Ok(())
    }

    fn cancel(&mut self, _spawn: &OutsideSpawn<'_>) {
        self.spawn_members.clear();
    }

    fn write(&mut self, spawn: &OutsideSpawn<'_>) {
        let res = spawn.level();
        let spawned = spawn.spawned();
        let mut order = std::mem::take(&mut self.spawn_members);
        if order.is_empty() {
            members(spawn, &mut order); // Not prepared by this manager: find them again.
        }
        let n = res.num_entities() as usize;
        let mut locals: Vec<Option<LocalTransform>> = vec![None; n];
        if let Some(data) = spawn.component_of::<LocalTransform>() {
            let values = data.pod::<LocalTransform>().expect("checked in prepare");
            for (e, v) in data.entity_indices().zip(values.iter()) {
                locals[e as usize] = Some(*v);
            }
        }
        let mut instances: Vec<Instance> = vec![Instance::NIL; n];
        self.reserve(order.len());
        for &e in &order {
            let e = e as usize;
            let local = locals[e].map_or(Mat4::IDENTITY, Mat4::from);
            // `prepare` checked the entity has no instance here and there is room.
            let i = self.create_checked(spawned[e], local);
            instances[e] = i;
            if let Some(p) = res.parent(e as u32) {
                // Parents first: the parent's instance exists, and a fresh instance has no
                // descendant, so the link makes no cycle.
                self.link(i, instances[p as usize])
                    .expect("a fresh instance links below its parent");
            }
        }
        order.clear();
        self.spawn_members = order; // The allocation, for the next spawn.
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
