//! Saving entities back to a level: the inverse of
//! [`WorldLevels::spawn_level`](crate::WorldLevels::spawn_level).
//!
//! [`save_entities`](crate::WorldLevels::save_entities) writes the given entities, in the given order, with every component
//! of the stores the registry knows (components without a registration are not saved), their
//! parents and local matrices from a `TransformManager`, and the entities held in components
//! mapped to indices among the saved entities. [`save_entities_with`](crate::WorldLevels::save_entities_with) takes any
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
//! `TransformManager` are absent, and the `_with` ones save no parents.

use rustc_hash::FxHashMap;
use sigecs::entity::{Entity, EntityBits};
#[cfg(feature = "transform")]
use sigecs::transform::TransformManager;
use sigecs::{World, WorldModel};

use super::{
    LevelError, LevelWriter, OutsideSave, OutsideStores, Registration, Registry, NO_ENTITY,
};

/// Saves `entities` (entity `i` of the blob is `entities[i]`) with the components of the
/// stores and those `outside` keeps outside them (parents from a transform manager among
/// them; without one from the world's own hierarchy).
pub(crate) fn save<M: WorldModel>(
    world: &World<M>,
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
        if !world.is_alive(e) {
            return Err(LevelError::NotAlive { position });
        }
        if index.insert(e, position).is_some() {
            return Err(LevelError::DuplicateEntity { position });
        }
    }
    let mut w = LevelWriter::new();
    w.add_entities(entities.len() as u32)?;

    // Components kept outside the stores, and the hierarchy: the world's own unless a manager
    // passed here keeps `local_transform` (without the `transform` feature the world has none).
    #[cfg(feature = "transform")]
    let own: Option<&dyn OutsideStores> = {
        let local = Registration::local_transform();
        if outside.iter().any(|m| m.takes(&local)) {
            None
        } else {
            Some(world.hierarchy())
        }
    };
    #[cfg(not(feature = "transform"))]
    let own: Option<&dyn OutsideStores> = None;
    for m in outside.iter().copied().chain(own) {
        m.save(&mut OutsideSave::new(entities, &index, registry, &mut w))?;
    }

    // Components: the registration of each component id, looked up once.
    let mut regs: Vec<Option<Option<&Registration>>> = Vec::new();
    let mut map = |e: Entity| -> Entity {
        match index.get(&e) {
            Some(&i) => Entity::from_bits(i as EntityBits),
            None => NO_ENTITY,
        }
    };
    let mut buf = Vec::new();
    for (i, &e) in entities.iter().enumerate() {
        for value in world.components_of(e).expect("checked alive above") {
            let id = value.id() as usize;
            if regs.len() <= id {
                regs.resize(id + 1, None);
            }
            let reg = *regs[id].get_or_insert_with(|| {
                registry
                    .by_type_id(value.type_id())
                    .filter(|r| !r.is_kept_outside())
            });
            let Some(reg) = reg else { continue };
            buf.clear();
            match reg.entities {
                Some(fns) => (fns.encode)(value, &mut map, reg.encode, &mut buf),
                None => (reg.encode_raw)(value, &mut buf),
            }
            .map_err(|message| LevelError::Encode {
                component: reg.component_ref(),
                message,
            })?;
            w.push_compiled(reg, i as u32, &buf)?;
        }
    }
    w.finish()
}

/// `roots` and all their descendants in `transforms`: each root, then its subtree breadth
/// first; a descendant reached twice is listed once, one not alive in `world` is skipped.
#[cfg(feature = "transform")]
pub(crate) fn subtrees<M: WorldModel>(
    world: &World<M>,
    roots: &[Entity],
    transforms: &TransformManager,
) -> Vec<Entity> {
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
                    if world.is_alive(ce) && seen.insert(ce, ()).is_none() {
                        list.push(ce);
                    }
                }
            }
        }
    }
    list
}
