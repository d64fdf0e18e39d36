//! Spawning entity resources (seed part 4): a verified blob becomes entities, the batched way.
//!
//! [`World::spawn_resource`] does similar things together:
//!
//! 1. checks, once per distinct component set, that the resource was verified against this
//!    world's signatures ([`World::resource_signatures`]), and that the world can issue
//!    `num_entities` ids — the only things that can still fail;
//! 2. gives every entity its row: the rows of each store follow the resource's entity order;
//! 3. creates every entity id at once (one run per store, each one `create_many` of the entity
//!    manager), and, given a [`TransformManager`], every transform instance, linked parents
//!    first;
//! 4. reserves every store once;
//! 5. writes each component type for all its instances, in spawn order: plain old data with
//!    one `memcpy` per run of consecutive rows (a whole store's column when the level is
//!    grouped by signature), postcard components decoded straight into their rows; entities
//!    held in components are mapped from resource indices to the spawned entities;
//! 6. commits the rows.
//!
//! Atomic: an error in steps 1–3 undoes what was done and spawns nothing; steps 4–6 cannot
//! fail (the verifier checked every byte they read). If a component's own code panics in step 5
//! (a `Deserialize` or `MapEntities` impl), the issued ids are retired and the values written so
//! far are leaked, never dropped twice or left reachable (transform instances already linked
//! stay, holding the retired ids). Spawning one verified resource many
//! times (prefab instances) reads the same blob each time.

use super::error::set_names;
use super::{Location, World};
use crate::entity::{Entity, EntityError};
use crate::model::WorldModel;
use crate::resource::{
    ComponentData, LocalTransform, Registration, Registry, ResourceError, VerifiedResource,
    VerifyOptions, NO_ENTITY,
};
use crate::storage::copy_bytes;
use crate::transform::{Instance, TransformManager};
use glam::Mat4;

/// The text of a component set that no signature declares, as `insert` words it.
pub(crate) fn undeclared_text(missing: &str) -> String {
    format!(
        "{missing} is not a declared signature. Declare the set with `#[derive(Signature)]` (a \
         struct with one field per component of {missing}) in a scanned file"
    )
}

/// Retires issued ids if a spawn unwinds before its rows are committed.
struct RetireOnUnwind<'a> {
    table: &'a mut super::EntityTable,
    ids: &'a [Entity],
    armed: bool,
}

impl Drop for RetireOnUnwind<'_> {
    fn drop(&mut self) {
        if self.armed {
            for &e in self.ids {
                self.table.destroy(e);
            }
        }
    }
}

impl<M: WorldModel> World<M> {
    /// This world's [`Signatures`](crate::resource::Signatures) check (it depends on the model
    /// only, not on the world's contents) for
    /// [`verify`](crate::resource::verify): a set of registrations maps to the store whose
    /// signature is exactly their components ([`LocalTransform`] lives outside the stores and is
    /// not counted). A set no signature declares is refused with `insert`'s words; a
    /// registration whose type is not a component of this world is refused too.
    pub fn resource_signatures(&self) -> impl FnMut(&[&Registration]) -> Result<u32, String> {
        let tables = M::tables();
        move |set: &[&Registration]| {
            let mut mask = 0u128;
            for r in set {
                match tables.component_of_type(r.type_id()) {
                    Some(c) => mask |= 1u128 << c,
                    None if r.is::<LocalTransform>() => {}
                    None => {
                        return Err(format!(
                            "`{}` (resource name \"{}\") is not a component of this world",
                            r.type_name(),
                            r.name()
                        ))
                    }
                }
            }
            tables.store_with_mask(mask).ok_or_else(|| {
                let names: Vec<&str> = M::components().iter().map(|c| c.name).collect();
                undeclared_text(&set_names(mask, &names))
            })
        }
    }

    /// Verifies `blob` against `registry` and this world's signatures: the one step between
    /// bytes and [`World::spawn_resource`].
    pub fn verify_resource<'r, B: AsRef<[u8]>>(
        &self,
        blob: B,
        registry: &'r Registry,
        options: &VerifyOptions,
    ) -> Result<VerifiedResource<'r, B>, ResourceError> {
        crate::resource::verify(blob, registry, self.resource_signatures(), options)
    }

    /// Spawns every entity of a verified resource and returns them in resource order (entity
    /// `i` of the resource is element `i`). The hierarchy (`parent_index`) is not linked; see
    /// [`World::spawn_resource_with`]. All or nothing; see the [module docs](self).
    pub fn spawn_resource<B: AsRef<[u8]>>(
        &mut self,
        resource: &VerifiedResource<'_, B>,
    ) -> Result<Vec<Entity>, ResourceError> {
        self.spawn_resource_inner(resource, None)
    }

    /// [`World::spawn_resource`], and links the spawned entities into `transforms`: every
    /// entity that has a `local_transform`, a parent or a child gets an instance (local matrix
    /// from `local_transform`, identity without one), linked to its parent's, parents first.
    pub fn spawn_resource_with<B: AsRef<[u8]>>(
        &mut self,
        resource: &VerifiedResource<'_, B>,
        transforms: &mut TransformManager,
    ) -> Result<Vec<Entity>, ResourceError> {
        self.spawn_resource_inner(resource, Some(transforms))
    }

    fn spawn_resource_inner<B: AsRef<[u8]>>(
        &mut self,
        res: &VerifiedResource<'_, B>,
        transforms: Option<&mut TransformManager>,
    ) -> Result<Vec<Entity>, ResourceError> {
        let n = res.num_entities() as usize;
        let tables = self.tables;

        // 1. The store ids in the resource are this world's, and the ids can be issued.
        let mut signatures = self.resource_signatures();
        for set in res.sets() {
            match signatures(&set.components) {
                Ok(store) if store == set.store => {}
                Ok(store) => {
                    return Err(ResourceError::NotThisWorld {
                        components: set.to_string(),
                        message: format!(
                            "this world's store is {store}, the resource says {}",
                            set.store
                        ),
                    })
                }
                Err(message) => {
                    return Err(ResourceError::NotThisWorld {
                        components: set.to_string(),
                        message,
                    })
                }
            }
        }
        let available = self.table.entities().available();
        if n > available {
            return Err(ResourceError::Entities(EntityError::Exhausted {
                requested: n,
                available,
            }));
        }

        // 2. Rows: each store's new rows follow the resource's entity order.
        let counts = res.store_counts();
        let mut first_row = vec![0u32; self.stores.len()];
        let mut next_row = vec![0u32; self.stores.len()];
        for &(s, _) in &counts {
            first_row[s as usize] = self.stores[s as usize].len() as u32;
            next_row[s as usize] = first_row[s as usize];
        }
        let mut store_of: Vec<u32> = Vec::with_capacity(n);
        res.entity_stores_into(&mut store_of);
        let locs: Vec<Location> = store_of
            .iter()
            .map(|&s| {
                let row = next_row[s as usize];
                next_row[s as usize] = row + 1;
                Location { store: s, row }
            })
            .collect();
        // block_end[e]: the last entity of the block of consecutive entities from e that share
        // e's store (their rows are consecutive too): a run of instances is found per block,
        // not per instance.
        let mut block_end = vec![0u32; n];
        for e in (0..n).rev() {
            block_end[e] = if e + 1 < n && store_of[e + 1] == store_of[e] {
                block_end[e + 1]
            } else {
                e as u32
            };
        }

        // 3. Ids, one run per store (in store order), then each entity's id in resource order.
        let mut ids: Vec<Entity> = Vec::with_capacity(n);
        let mut base = vec![0u32; self.stores.len()];
        for &(s, count) in &counts {
            base[s as usize] = ids.len() as u32;
            let first = first_row[s as usize] as usize;
            if let Err(e) = self.table.create_run(s, first, count as usize, &mut ids) {
                for &id in &ids {
                    self.table.destroy(id);
                }
                return Err(ResourceError::Entities(e));
            }
        }
        let spawned: Vec<Entity> = locs
            .iter()
            .map(|l| ids[(base[l.store as usize] + l.row - first_row[l.store as usize]) as usize])
            .collect();
        if let Some(tm) = transforms {
            if let Err(e) = link_hierarchy(res, &spawned, tm) {
                for &id in &ids {
                    self.table.destroy(id);
                }
                return Err(e);
            }
        }

        // 4.–6. Reserve, write, commit. Nothing below returns an error.
        let World { table, stores, .. } = self;
        let mut guard = RetireOnUnwind {
            table,
            ids: &ids,
            armed: true,
        };
        for &(s, count) in &counts {
            stores[s as usize].reserve(count as usize);
        }
        let mut map = |e: Entity| -> Entity {
            if e == NO_ENTITY {
                e
            } else {
                // Verified: every held entity is NO_ENTITY or an index below num_entities.
                spawned[e.to_bits() as usize]
            }
        };
        for data in res.spawn_order() {
            let Some(reg) = data.registration() else {
                continue;
            };
            let Some(c) = tables.component_of_type(reg.type_id()) else {
                continue; // LocalTransform: linked above.
            };
            let index = data.entity_index();
            let runs = runs(&index, &locs, &block_end);
            // Where each run's first instance goes, and the column stride.
            let targets: Vec<(*mut u8, usize)> = runs
                .iter()
                .map(|r| {
                    let store = &stores[r.loc.store as usize];
                    // Step 1 checked the store's signature is the entity's set, which holds c.
                    let k = tables
                        .slot_index(r.loc.store, c)
                        .expect("the entity's store holds its component");
                    let slot = store.info().slots[k];
                    let stride = store.info().columns[slot.column as usize].size;
                    (store.slot_ptr(slot, r.loc.row()), stride)
                })
                .collect();
            if data.is_pod() {
                write_pod_runs(&data, &runs, &targets);
            } else {
                let write = reg.write;
                let mut run = 0;
                // SAFETY: instance i goes to the slot of component c (the registered type) in
                // its entity's new row, which is reserved, aligned for the type, and written
                // once (entity indices are distinct within a record); the data was verified to
                // decode as `count` instances of the type. Instances are asked for in order.
                let r = unsafe {
                    write(data.instance_data(), data.len(), &mut |i| {
                        while runs[run].end <= i as usize {
                            run += 1;
                        }
                        let (base, stride) = targets[run];
                        base.wrapping_add((i as usize - runs[run].start) * stride)
                    })
                };
                debug_assert!(r.is_ok(), "verified instances decode");
            }
            if let Some(fns) = reg.entities {
                for (r, &(base, stride)) in runs.iter().zip(&targets) {
                    for t in 0..r.end - r.start {
                        // SAFETY: the slot was initialised just above with a value of the
                        // registered type; no reference to it exists.
                        unsafe { (fns.in_place)(base.wrapping_add(t * stride), &mut map) };
                    }
                }
            }
        }
        for &(s, count) in &counts {
            let b = base[s as usize] as usize;
            // SAFETY: every slot of the store's new rows was written above: each entity's set
            // is exactly the store's signature (step 1) and every component of the set has an
            // instance for it in the resource.
            unsafe { stores[s as usize].commit_rows(&ids[b..b + count as usize]) };
        }
        guard.armed = false;
        Ok(spawned)
    }
}

/// Instances `start..end` of a record, whose entities have consecutive rows of one store from
/// `loc` on.
struct Run {
    start: usize,
    end: usize,
    loc: Location,
}

/// Splits a record's instances into runs of consecutive rows: one check per block of entities
/// that share a store when the record holds all of the block (the common case), one per
/// instance otherwise.
fn runs(index: &[u32], locs: &[Location], block_end: &[u32]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < index.len() {
        let e = index[i];
        let loc = locs[e as usize];
        // Indices ascend strictly: if instance i + k - 1 belongs to entity e + k - 1, instances
        // i..i + k are exactly entities e..e + k, all of one block.
        let k = ((block_end[e as usize] - e) as usize + 1).min(index.len() - i);
        let mut j = if index[i + k - 1] as usize == e as usize + k - 1 {
            i + k
        } else {
            i + 1
        };
        while j < index.len() {
            let l = locs[index[j] as usize];
            if l.store != loc.store || l.row != loc.row + (j - i) as u32 {
                break;
            }
            j += 1;
        }
        out.push(Run {
            start: i,
            end: j,
            loc,
        });
        i = j;
    }
    out
}

/// Copies one POD component type into its rows, one copy per run.
fn write_pod_runs(data: &ComponentData<'_>, runs: &[Run], targets: &[(*mut u8, usize)]) {
    let size = data.element_size() as usize;
    let bytes = data.instance_data();
    if size == 0 {
        return; // Zero-sized values need no bytes.
    }
    for (r, &(dst, stride)) in runs.iter().zip(targets) {
        let src = &bytes[r.start * size..r.end * size];
        if stride == size {
            // SAFETY: the run's rows are reserved (step 4) and hold nothing yet; the slot's
            // type is the registered POD type of `size` bytes, so the bytes are a valid value;
            // blob and column do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        } else {
            for (t, value) in src.chunks_exact(size).enumerate() {
                // SAFETY: as above, one element at a time (a `rows` store's column holds row
                // structs, `stride` bytes each, with the component at the slot's offset).
                unsafe { copy_bytes(value.as_ptr(), dst.wrapping_add(t * stride), size) };
            }
        }
    }
}

/// Gives the spawned entities their transform instances, parents first, and links them. Undoes
/// everything on an error.
fn link_hierarchy<B: AsRef<[u8]>>(
    res: &VerifiedResource<'_, B>,
    spawned: &[Entity],
    tm: &mut TransformManager,
) -> Result<(), ResourceError> {
    let n = spawned.len();
    let mut in_hierarchy = vec![false; n];
    let mut locals: Vec<Option<LocalTransform>> = vec![None; n];
    if let Some(data) = res.component(LocalTransform::NAME) {
        if data
            .registration()
            .is_some_and(|r| r.is::<LocalTransform>())
        {
            let values = data.pod::<LocalTransform>()?;
            for (e, v) in data.entity_indices().zip(values.iter()) {
                locals[e as usize] = Some(*v);
                in_hierarchy[e as usize] = true;
            }
        }
    }
    for (e, p) in res.parents().enumerate() {
        if let Some(p) = p {
            in_hierarchy[e] = true;
            in_hierarchy[p as usize] = true;
        }
    }
    let mut instances: Vec<Instance> = vec![Instance::NIL; n];
    let mut created: Vec<Instance> = Vec::new();
    let undo = |tm: &mut TransformManager, created: &[Instance]| {
        // Newest first: each is the last instance, so a swap-erase moves nothing else.
        for &i in created.iter().rev() {
            let _ = tm.destroy(i);
        }
    };
    tm.reserve(in_hierarchy.iter().filter(|&&h| h).count());
    for e in res.parents_first() {
        let e = e as usize;
        if !in_hierarchy[e] {
            continue;
        }
        let local = locals[e].map_or(Mat4::IDENTITY, Mat4::from);
        let r = tm.create(spawned[e], local).and_then(|i| {
            created.push(i);
            instances[e] = i;
            match res.parent(e as u32) {
                Some(p) => tm.link(i, instances[p as usize]),
                None => Ok(()),
            }
        });
        if let Err(err) = r {
            undo(tm, &created);
            return Err(ResourceError::Transform(err));
        }
    }
    Ok(())
}
