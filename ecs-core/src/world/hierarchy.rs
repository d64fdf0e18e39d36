//! The world's own transform hierarchy: a [`TransformManager`] that holds an instance for
//! every live entity that was given a transform or a parent, and nothing else.
//!
//! The world keeps it in step with the entities: [`World::despawn`] (direct, through
//! [`Commands`](crate::schedule::Commands), or a level's restart through [`World::clear`])
//! removes the entity's instance, and **despawns its whole subtree** with it, as a ship takes
//! its turrets along (bevy's `despawn_recursive` and flecs' `ChildOf` cleanup do the same; an
//! entity that should outlive its parent is unparented first with
//! [`World::remove_parent`]). Systems change the hierarchy through `Commands`
//! (`set_transform`, `set_parent`, `remove_parent`), applied with the stage's other commands
//! in row order. World matrices are exact whenever they are read: the manager updates a
//! subtree as soon as its root moves, and after a parenting that moved a large subtree, at
//! the first read (see [`crate::transform`]), so parenting costs the same at any depth.
//! Levels spawn into it and save from it without a manager passed by hand.
//!
//! A [`TransformManager`] the world does not own stays available (several scene graphs over
//! one world's entities, Bitsquid's inventory world); it does not hear of despawns, so it
//! calls [`TransformManager::gc`] with [`World::is_alive`] from time to time.

use super::{World, WorldError};
use crate::entity::Entity;
use crate::model::WorldModel;
use crate::transform::{Instance, TransformManager};
use glam::Mat4;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl<M: WorldModel> World<M> {
    /// The world's transform hierarchy (read-only: changes go through the world, which keeps
    /// it in step with the entities).
    pub fn hierarchy(&self) -> &TransformManager {
        &self.hierarchy
    }

    /// Sets `entity`'s local transform (relative to its parent, or to the world for a root),
    /// giving it an instance in the hierarchy if it has none. Its subtree's world matrices
    /// are updated at once.
    pub fn set_transform(&mut self, entity: Entity, local: Mat4) -> Result<(), WorldError> {
        let i = self.instance_of(entity)?;
        self.hierarchy
            .set_local(i, local)
            .map_err(WorldError::Hierarchy)
    }

    /// Sets many local transforms at once, updating each moved subtree once (see
    /// [`TransformManager::set_local_many`]); returns how many world matrices were computed.
    /// All or nothing: a dead entity in the batch changes nothing.
    pub fn set_transforms(&mut self, batch: &[(Entity, Mat4)]) -> Result<usize, WorldError> {
        if let Some(&(dead, _)) = batch.iter().find(|(e, _)| !self.is_alive(*e)) {
            return Err(WorldError::NoSuchEntity(dead));
        }
        let mut instances = Vec::with_capacity(batch.len());
        for &(e, m) in batch {
            instances.push((self.instance_of(e)?, m));
        }
        self.hierarchy
            .set_local_many(&instances)
            .map_err(WorldError::Hierarchy)
    }

    /// Makes `child` a child of `parent`: its local transform is now relative to `parent`.
    /// Either gets an identity instance if it has none. Refused (nothing changes) when either
    /// is not alive, or when `parent` is `child` or lies below it (a
    /// [`TransformError::Cycle`](crate::transform::TransformError::Cycle) naming both
    /// entities). O(1) for a new leaf or a new root, so chains build in linear time from
    /// either end.
    pub fn set_parent(&mut self, child: Entity, parent: Entity) -> Result<(), WorldError> {
        for e in [child, parent] {
            if !self.is_alive(e) {
                return Err(WorldError::NoSuchEntity(e));
            }
        }
        if child == parent {
            let i = self.hierarchy.lookup(child).unwrap_or(Instance::NIL);
            return Err(WorldError::Hierarchy(
                crate::transform::TransformError::SelfParent { instance: i },
            ));
        }
        // A cycle needs both to have instances already, and then `link` refuses it before
        // anything changes; a new instance is a root without children.
        let c = self.instance_of(child)?;
        let p = self.instance_of(parent)?;
        self.hierarchy.link(c, p).map_err(WorldError::Hierarchy)
    }

    /// Makes `child` a root: its local transform is now its world transform. Nothing happens
    /// to an entity without a parent; an entity that is not alive is an error.
    pub fn remove_parent(&mut self, child: Entity) -> Result<(), WorldError> {
        if !self.is_alive(child) {
            return Err(WorldError::NoSuchEntity(child));
        }
        match self.hierarchy.lookup(child) {
            Some(i) => self.hierarchy.unlink(i).map_err(WorldError::Hierarchy),
            None => Ok(()),
        }
    }

    /// Removes `entity`'s transform (it stays alive); its children become roots that keep
    /// their local transforms. Returns false when it had none.
    pub fn remove_transform(&mut self, entity: Entity) -> bool {
        match self.hierarchy.lookup(entity) {
            Some(i) => self.hierarchy.destroy(i).is_ok(),
            None => false,
        }
    }

    /// `entity`'s world transform (its parent's world transform times its local one), or
    /// `None` when it has no transform.
    pub fn world_transform(&self, entity: Entity) -> Option<Mat4> {
        let i = self.hierarchy.lookup(entity)?;
        self.hierarchy.world(i).ok()
    }

    /// `entity`'s local transform, or `None` when it has no transform.
    pub fn local_transform(&self, entity: Entity) -> Option<Mat4> {
        let i = self.hierarchy.lookup(entity)?;
        self.hierarchy.local(i).ok()
    }

    /// `entity`'s parent, or `None` for a root or an entity without a transform.
    pub fn parent(&self, entity: Entity) -> Option<Entity> {
        let i = self.hierarchy.lookup(entity)?;
        let p = self.hierarchy.parent(i).ok()??;
        self.hierarchy.entity(p).ok()
    }

    /// `entity`'s children, most recently parented first (empty without a transform).
    pub fn children(&self, entity: Entity) -> Vec<Entity> {
        let Some(i) = self.hierarchy.lookup(entity) else {
            return Vec::new();
        };
        let Ok(children) = self.hierarchy.children(i) else {
            return Vec::new();
        };
        children
            .filter_map(|c| self.hierarchy.entity(c).ok())
            .collect()
    }

    /// `entity`'s instance, made (as an identity root) if it has none; an error when it is not
    /// alive or the hierarchy is full.
    fn instance_of(&mut self, entity: Entity) -> Result<Instance, WorldError> {
        if !self.is_alive(entity) {
            return Err(WorldError::NoSuchEntity(entity));
        }
        match self.hierarchy.lookup(entity) {
            Some(i) => Ok(i),
            None => self
                .hierarchy
                .create(entity, Mat4::IDENTITY)
                .map_err(WorldError::Hierarchy),
        }
    }

    /// The despawn of an entity that has an instance: it and its subtree leave the hierarchy
    /// first, then each is despawned (the entity first, then its descendants parents first).
    /// A panicking `Drop` does not stop the others; the first panic continues afterwards.
    pub(super) fn despawn_tree(&mut self, i: Instance) {
        let mut tree = Vec::new();
        let removed = self.hierarchy.destroy_subtree(i, &mut tree);
        debug_assert!(removed.is_ok(), "the entity's own instance");
        let mut panic = None;
        for e in tree {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| self.despawn_row(e))) {
                match panic {
                    None => panic = Some(payload),
                    Some(_) => super::spawn::drop_quietly(payload),
                }
            }
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
    }
}
