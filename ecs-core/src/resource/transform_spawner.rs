//! The transform hierarchy as an [`OutsideStores`] spawner: a
//! [`TransformManager`] takes `local_transform` ([`LocalTransform`]) and links `parent_index`.
//!
//! Spawning: every entity that has a `local_transform`, a parent or a child gets an instance
//! (its local matrix, identity without one), linked to its parent's, parents first.
//! [`prepare`](OutsideStores::prepare) refuses the spawn ([`ResourceError::Transform`]) when
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
use super::error::ResourceError;
use super::outside::{OutsideSave, OutsideSpawn, OutsideStores};
use super::registry::Registration;
use crate::transform::{Instance, TransformError, TransformManager, MAX_INSTANCES};

/// Which entities of the resource get an instance, and how many.
fn members(spawn: &OutsideSpawn<'_>) -> (Vec<bool>, usize) {
    let res = spawn.resource();
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
    let count = member.iter().filter(|&&m| m).count();
    (member, count)
}

impl OutsideStores for TransformManager {
    fn takes(&self, registration: &Registration) -> bool {
        registration.is::<LocalTransform>()
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), ResourceError> {
        if let Some(data) = spawn.component_of::<LocalTransform>() {
            data.pod::<LocalTransform>()?;
        }
        let (member, count) = members(spawn);
        if count > MAX_INSTANCES - self.len() {
            return Err(ResourceError::Transform(TransformError::Full));
        }
        for (&m, &entity) in member.iter().zip(spawn.spawned()) {
            if let (true, Some(instance)) = (m, self.lookup(entity)) {
                return Err(ResourceError::Transform(TransformError::AlreadyPresent {
                    entity,
                    instance,
                }));
            }
        }
        Ok(())
    }

    fn write(&mut self, spawn: &OutsideSpawn<'_>) {
        let res = spawn.resource();
        let spawned = spawn.spawned();
        let (member, count) = members(spawn);
        let mut locals: Vec<Option<LocalTransform>> = vec![None; member.len()];
        if let Some(data) = spawn.component_of::<LocalTransform>() {
            let values = data.pod::<LocalTransform>().expect("checked in prepare");
            for (e, v) in data.entity_indices().zip(values.iter()) {
                locals[e as usize] = Some(*v);
            }
        }
        let mut instances: Vec<Instance> = vec![Instance::NIL; member.len()];
        self.reserve(count);
        for e in res.parents_first() {
            let e = e as usize;
            if !member[e] {
                continue;
            }
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
    }

    fn save(&self, save: &mut OutsideSave<'_>) -> Result<(), ResourceError> {
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
