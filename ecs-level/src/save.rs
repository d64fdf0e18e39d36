//! Saving entities back to a level: the inverse of [`World::spawn_level`].
//!
//! [`World::save_entities`] writes the given entities, in the given order, with every component
//! of the stores the registry knows (components without a registration are not saved), their
//! parents and local matrices from a [`TransformManager`], and the entities held in components
//! mapped to indices among the saved entities. [`World::save_entities_with`] takes any
//! [`OutsideStores`] managers instead (the transform manager, structure-of-arrays managers):
//! each writes the components it keeps outside the stores; a kept-outside component whose
//! manager is not given is not saved. The blob is canonical ([`LevelWriter`]), so saving
//! what a blob spawned, in spawn order, with the managers it spawned into, gives back the same
//! bytes — provided the blob held no unknown (skipped) component and no `local_transform` equal
//! to the identity on an entity in the hierarchy (one with a parent or a child: its link makes
//! its instance, so save leaves the identity out; a lone root's identity is written, since it
//! alone gives the root its transform instance).
//!
//! Without the `transform` feature the world has no hierarchy: the functions that take a
//! [`TransformManager`] are absent, and the `_with` ones save no parents.

use super::World;
use crate::entity::{Entity, EntityBits};
use crate::level::{
    LevelError, LevelWriter, OutsideSave, OutsideStores, Registration, Registry, NO_ENTITY,
};
use crate::model::WorldModel;
#[cfg(feature = "transform")]
use crate::transform::TransformManager;
use rustc_hash::FxHashMap;

impl<M: WorldModel> World<M> {
    /// Saves `entities` (entity `i` of the blob is `entities[i]`). Parents and local
    /// transforms come from `transforms`, or without it from the world's own hierarchy (an
    /// entity whose parent is not saved is a root). Errors: a dead or repeated entity, or a value the codec refuses.
    #[cfg(feature = "transform")]
    pub fn save_entities(
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

    /// Saves `entities` (entity `i` of the blob is `entities[i]`) with the components of the
    /// stores and those `outside` keeps outside them (parents from a transform manager among
    /// them; without one from the world's own hierarchy). Errors: a dead or repeated entity, or a value
    /// the codec refuses.
    pub fn save_entities_with(
        &self,
        entities: &[Entity],
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        let mut index: FxHashMap<Entity, u32> = FxHashMap::default();
        index.reserve(entities.len());
        for (i, &e) in entities.iter().enumerate() {
            let position = u32::try_from(i).map_err(|_| LevelError::TooLarge {
                what: "the entity count",
            })?;
            if self.locate(e).is_none() {
                return Err(LevelError::NotAlive { position });
            }
            if index.insert(e, position).is_some() {
                return Err(LevelError::DuplicateEntity { position });
            }
        }
        let mut w = LevelWriter::new();
        w.add_entities(entities.len() as u32)?;

        // Components kept outside the stores, and the hierarchy: the world's own unless a
        // manager passed here keeps `local_transform` (without the `transform` feature the
        // world has none).
        #[cfg(feature = "transform")]
        let own: Option<&dyn OutsideStores> = {
            let local = Registration::local_transform();
            if outside.iter().any(|m| m.takes(&local)) {
                None
            } else {
                Some(&self.hierarchy)
            }
        };
        #[cfg(not(feature = "transform"))]
        let own: Option<&dyn OutsideStores> = None;
        for m in outside.iter().copied().chain(own) {
            m.save(&mut OutsideSave::new(entities, &index, registry, &mut w))?;
        }

        // Components: per store, the registration of each slot, looked up once.
        let mut slot_regs: Vec<Option<Vec<Option<&Registration>>>> = vec![None; self.stores.len()];
        let mut map = |e: Entity| -> Entity {
            match index.get(&e) {
                Some(&i) => Entity::from_bits(i as EntityBits),
                None => NO_ENTITY,
            }
        };
        let mut buf = Vec::new();
        for (i, &e) in entities.iter().enumerate() {
            let loc = self.locate(e).expect("checked above");
            let store = &self.stores[loc.store as usize];
            let regs = slot_regs[loc.store as usize].get_or_insert_with(|| {
                store
                    .slot_types()
                    .iter()
                    .map(|&t| registry.by_type_id(t).filter(|r| !r.is_kept_outside()))
                    .collect()
            });
            for (k, reg) in regs.iter().enumerate() {
                let Some(reg) = reg else { continue };
                let ptr = store
                    .slot_ptr(store.info().slots[k], loc.row())
                    .cast_const();
                buf.clear();
                // SAFETY: the entity is live, so its row is initialised, and slot k holds a
                // value of the slot's type, which is the registration's type (looked up by its
                // `TypeId`); `&self` excludes writers.
                let r = unsafe {
                    match reg.entities {
                        Some(fns) => (fns.encode)(ptr, &mut map, reg.encode, &mut buf),
                        None => (reg.encode_raw)(ptr, &mut buf),
                    }
                };
                r.map_err(|message| LevelError::Encode {
                    component: reg.component_ref(),
                    message,
                })?;
                w.push_compiled(reg, i as u32, &buf)?;
            }
        }
        w.finish()
    }

    /// Saves every live entity, store by store in store order, rows in order (see
    /// [`World::save_entities`]).
    #[cfg(feature = "transform")]
    pub fn save_level(
        &self,
        registry: &Registry,
        transforms: Option<&TransformManager>,
    ) -> Result<Vec<u8>, LevelError> {
        let all: Vec<Entity> = self.entities().collect();
        self.save_entities(&all, registry, transforms)
    }

    /// Saves every live entity, store by store in store order, rows in order, with the
    /// components `outside` keeps outside the stores (see [`World::save_entities_with`]).
    pub fn save_level_with(
        &self,
        registry: &Registry,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        let all: Vec<Entity> = self.entities().collect();
        self.save_entities_with(&all, registry, outside)
    }

    /// Saves `roots` and all their descendants in `transforms` (each root, then its subtree
    /// breadth first; a descendant reached twice is saved once). Descendants that are not
    /// alive in this world are skipped.
    #[cfg(feature = "transform")]
    pub fn save_subtrees(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
    ) -> Result<Vec<u8>, LevelError> {
        self.save_subtrees_with(roots, registry, transforms, &[])
    }

    /// [`World::save_subtrees`], with the components the `outside` managers keep outside the
    /// stores (the subtrees, parents and local matrices still come from `transforms`).
    #[cfg(feature = "transform")]
    pub fn save_subtrees_with(
        &self,
        roots: &[Entity],
        registry: &Registry,
        transforms: &TransformManager,
        outside: &[&dyn OutsideStores],
    ) -> Result<Vec<u8>, LevelError> {
        let mut list: Vec<Entity> = Vec::new();
        let mut seen: FxHashMap<Entity, ()> = FxHashMap::default();
        for &root in roots {
            if seen.insert(root, ()).is_some() {
                continue;
            }
            let start = list.len();
            list.push(root);
            let mut k = start;
            while k < list.len() {
                let e = list[k];
                k += 1;
                let Some(inst) = transforms.lookup(e) else {
                    continue;
                };
                let Ok(children) = transforms.children(inst) else {
                    continue;
                };
                for c in children {
                    if let Ok(ce) = transforms.entity(c) {
                        if self.locate(ce).is_some() && seen.insert(ce, ()).is_none() {
                            list.push(ce);
                        }
                    }
                }
            }
        }
        let mut managers: Vec<&dyn OutsideStores> = Vec::with_capacity(outside.len() + 1);
        managers.push(transforms);
        managers.extend_from_slice(outside);
        self.save_entities_with(&list, registry, &managers)
    }
}
