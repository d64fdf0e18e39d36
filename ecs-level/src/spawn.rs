//! Spawning a verified level: its blob becomes entities, the batched way, through the world's
//! batch spawn ([`World::begin_spawn`]).
//!
//! [`spawn_level`](crate::WorldLevels::spawn_level) does similar things together:
//!
//! 1. checks, once per distinct component set, that the level was verified against this
//!    world's signatures ([`level_signatures`]) and, given spawners of the components kept
//!    outside the stores ([`OutsideStores`]: a transform manager, structure-of-arrays
//!    managers), that every such component the level holds has exactly one;
//! 2. begins the world's batch spawn, one batch per store the level spawns into: every id is
//!    issued with one `create_many` and every store reserved once; the rows of each store
//!    follow the level's entity order, after the store's existing rows. Which store and which
//!    of the level's rows each entity gets was worked out once by the verifier (the level's
//!    spawn plan, runs of entities and of instances with consecutive rows), so a spawn does no
//!    per-entity bookkeeping for it;
//! 3. builds the level-order entity list with one copy per block of neighbouring entities that
//!    share a store, and asks each spawner, in spawn order, to
//!    [`prepare`](OutsideStores::prepare) (check) its instances — the last thing that can fail;
//! 4. writes each component type of the stores for all its instances, in spawn order, one
//!    planned run of consecutive rows at a time: plain old data with one copy per run (a whole
//!    store's column when the level is grouped by signature), postcard components decoded
//!    straight into their rows, tags made in place; entities held in components are mapped
//!    from level indices to the spawned entities;
//! 5. commits the rows: the entities are live;
//! 6. has each spawner, in spawn order, [`write`](OutsideStores::write) its instances (the
//!    transform manager creates and links the hierarchy's, parents first; the world's own
//!    hierarchy gets them through `set_transforms` and `set_parent`).
//!
//! Atomic: an error in steps 1–3 undoes what was done (the spawners prepared so far are
//! cancelled, the ids retired) and spawns nothing; steps 4–6 cannot fail (the verifier checked
//! every byte they read, the spawners checked their instances). If a component's own code
//! panics in step 4 (a `Deserialize` or `MapEntities` impl), the prepared spawners are
//! cancelled, the batch spawn retires the ids and drops every value written so far, once, and
//! the panic goes on: the world is as it was and spawns again. A `Deserialize` that fails on
//! bytes it accepted at verification (one that is not deterministic) is reported the same way,
//! as a panic. A spawner that panics in step 6 leaves the entities spawned. Spawning one
//! verified level many times (prefab instances) reads the same blob and the same plan each
//! time.
//!
//! Every step is linear in the number of entities and instances, whatever the hierarchy's
//! depth: the verifier computed the depths and the parents-first order once, and each link
//! puts a fresh instance below its parent.

use sigecs::entity::Entity;
use sigecs::world::{PendingSpawn, RowRun};
use sigecs::{AnyComponentBits, World, WorldError, WorldModel};

use super::outside::spawn_order;
use super::plan::SpawnPlan;
use super::{LevelError, OutsideSpawn, OutsideStores, Registration, VerifiedLevel};

/// The store ids of a world of model `M` (see
/// [`WorldLevels::level_signatures`](crate::WorldLevels::level_signatures)).
pub(crate) fn level_signatures<M: WorldModel>(
) -> impl FnMut(&[&Registration]) -> Result<u32, String> {
    let declared = World::<M>::signature_names().len() as u32;
    let mut undeclared: Vec<M::Set> = Vec::new();
    move |set: &[&Registration]| {
        let mask = set_mask::<M>(set)?;
        match World::<M>::signature_of_set(mask) {
            Ok(Some(store)) => Ok(store),
            Ok(None) => {
                let k = match undeclared.iter().position(|&m| m == mask) {
                    Some(k) => k,
                    None => {
                        undeclared.push(mask);
                        undeclared.len() - 1
                    }
                };
                Ok(declared + k as u32)
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The component set of this world that `set` stands for; an error naming a registration
/// whose type is not a component of it. Components kept outside the stores are not counted.
fn set_mask<M: WorldModel>(set: &[&Registration]) -> Result<M::Set, String> {
    let mut mask = M::Set::EMPTY;
    for r in set {
        if r.is_kept_outside() {
            continue; // A manager's, never a store's.
        }
        match World::<M>::component_id(r.type_id()) {
            Some(c) => mask = mask.with(c),
            None => {
                return Err(format!(
                    "`{}` (level name \"{}\") is not a component of this world",
                    r.type_name(),
                    r.name()
                ))
            }
        }
    }
    Ok(mask)
}

/// Spawns `level` into `world`; `given` are the caller's spawners, and `all_outside` asks that
/// every kept-outside component the level holds find one (see the [module docs](self)).
pub(crate) fn spawn<M: WorldModel, B: AsRef<[u8]>>(
    world: &mut World<M>,
    level: &VerifiedLevel<'_, B>,
    given: &mut [&mut dyn OutsideStores],
    all_outside: bool,
) -> Result<Vec<Entity>, LevelError> {
    // 1. Sets, and the spawners: the caller's, and the world's own hierarchy unless one of
    // them takes `local_transform` (without the `transform` feature the world has none, and a
    // level that holds a hierarchy is refused rather than spawned without it).
    let batches = batches::<M, B>(level)?;
    let local = Registration::local_transform();
    let own_hierarchy = !given.iter().any(|s| s.takes(&local));
    let mut all: Vec<&mut dyn OutsideStores> = given
        .iter_mut()
        .map(|s| &mut **s as &mut dyn OutsideStores)
        .collect();
    #[cfg(not(feature = "transform"))]
    let own: Option<usize> = match own_hierarchy.then(|| level.first_in_hierarchy()).flatten() {
        Some(entity) => return Err(LevelError::NeedsTransform { entity }),
        None => None,
    };
    #[cfg(feature = "transform")]
    let mut hierarchy = super::transform_spawner::WorldHierarchy {
        room: sigecs::transform::MAX_INSTANCES - world.hierarchy().len(),
    };
    #[cfg(feature = "transform")]
    let own: Option<usize> = own_hierarchy.then(|| {
        all.push(&mut hierarchy);
        all.len() - 1
    });
    let holds =
        |r: &Registration| all_outside && level.component(r.name()).is_some_and(|d| !d.is_empty());
    let order = spawn_order(level.registry(), holds, &all)?;

    // 2.–3. Ids and rows, the level-order entity list, the spawners' first phase.
    let mut pending = world.begin_spawn(&batches).map_err(|e| match e {
        WorldError::Entity(e) => LevelError::Entities(e),
        // The sets were checked above with the same rules.
        other => LevelError::NotThisWorld {
            components: "a set of the level".to_string(),
            message: other.to_string(),
        },
    })?;
    let spawned = level_order(level.plan(), pending.entities());
    let any: &VerifiedLevel<'_, dyn AsRef<[u8]> + '_> = level;
    let spawn = OutsideSpawn::new(any, &spawned);
    prepare(&mut all, &order, &spawn)?; // On an error `pending` retires the ids.

    // 4.–5. Components, then commit. A panic of a component's code cancels the spawners and
    // unwinds through `pending`, which drops what was written and retires the ids.
    let mut cancel = CancelOnUnwind {
        spawners: &mut all,
        order: &order,
        spawn: &spawn,
        armed: true,
    };
    write_components(&mut pending, level, &spawned);
    pending.commit();
    cancel.armed = false;
    drop(cancel);

    // 6. The spawners' second phase, in spawn order.
    for &s in &order {
        if Some(s) == own {
            #[cfg(feature = "transform")]
            super::transform_spawner::link_in_world(world, &spawn);
        } else {
            all[s].write(&spawn);
        }
    }
    Ok(spawned)
}

/// One batch per store of the level's plan (in the plan's order): the store's component set
/// and how many entities it gets. Refuses a level verified against other signatures than this
/// world's.
fn batches<M: WorldModel, B: AsRef<[u8]>>(
    level: &VerifiedLevel<'_, B>,
) -> Result<Vec<(M::Set, usize)>, LevelError> {
    let mut signatures = level_signatures::<M>();
    let mut masks: Vec<(u32, M::Set)> = Vec::new();
    for set in level.sets() {
        let not_this = |message| LevelError::NotThisWorld {
            components: set.to_string(),
            message,
        };
        match signatures(&set.components) {
            Ok(store) if store == set.store => {
                masks.push((store, set_mask::<M>(&set.components).map_err(not_this)?));
            }
            Ok(store) => {
                return Err(not_this(format!(
                    "this world's store is {store}, the level says {}",
                    set.store
                )))
            }
            Err(message) => return Err(not_this(message)),
        }
    }
    Ok(level
        .plan()
        .stores
        .iter()
        .map(|&(store, count)| {
            let (_, mask) = masks
                .iter()
                .find(|m| m.0 == store)
                .expect("every store of the plan is a set's");
            (*mask, count as usize)
        })
        .collect())
}

/// The spawned entities in level order: batch `k` of `ids` is plan store `k`'s, in row order.
fn level_order(plan: &SpawnPlan, ids: &[Entity]) -> Vec<Entity> {
    let mut base = Vec::with_capacity(plan.stores.len());
    let mut total = 0usize;
    for &(_, count) in &plan.stores {
        base.push(total);
        total += count as usize;
    }
    let mut spawned = Vec::with_capacity(ids.len());
    for b in &plan.blocks {
        let from = base[b.slot as usize] + b.row as usize;
        spawned.extend_from_slice(&ids[from..from + b.len as usize]);
    }
    spawned
}

/// The spawners' first phase, in spawn order; a refusal cancels the ones before it.
fn prepare(
    spawners: &mut [&mut dyn OutsideStores],
    order: &[usize],
    spawn: &OutsideSpawn<'_>,
) -> Result<(), LevelError> {
    for (done, &s) in order.iter().enumerate() {
        if let Err(e) = spawners[s].prepare(spawn) {
            for &c in order[..done].iter().rev() {
                spawners[c].cancel(spawn);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Cancels the prepared spawners, newest first, if the components' writing unwinds.
struct CancelOnUnwind<'a, 'b> {
    spawners: &'a mut [&'b mut dyn OutsideStores],
    order: &'a [usize],
    spawn: &'a OutsideSpawn<'a>,
    armed: bool,
}

impl Drop for CancelOnUnwind<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            for &s in self.order.iter().rev() {
                self.spawners[s].cancel(self.spawn);
            }
        }
    }
}

/// Writes every component type of the stores, in spawn order, one planned run at a time, and
/// maps the entities components hold.
fn write_components<M: WorldModel, B: AsRef<[u8]>>(
    pending: &mut PendingSpawn<'_, M>,
    level: &VerifiedLevel<'_, B>,
    spawned: &[Entity],
) {
    let mut runs: Vec<RowRun> = Vec::new();
    for (data, planned) in level.spawn_runs() {
        let Some(reg) = data.registration() else {
            continue;
        };
        if reg.is_kept_outside() {
            continue; // A spawner's, in step 6.
        }
        let Some(c) = World::<M>::component_id(reg.type_id()) else {
            continue; // Step 1 checked every set: not reached.
        };
        runs.clear();
        runs.extend(planned.iter().map(|r| RowRun {
            batch: r.slot as usize,
            row: r.row as usize,
            len: r.len as usize,
        }));
        let mut rows = pending.rows(c, &runs);
        (reg.spawn)(reg, &data, &mut rows);
        if let Some(fns) = reg.entities {
            (fns.map_rows)(&mut rows, spawned);
        }
    }
}
