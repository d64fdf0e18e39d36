//! Spawning levels (levels): a verified blob becomes entities, the batched way.
//!
//! [`World::spawn_level`] does similar things together:
//!
//! 1. checks, once per distinct component set, that the level was verified against this
//!    world's signatures ([`World::level_signatures`]); given spawners of the components kept
//!    outside the stores ([`OutsideStores`]: a transform manager, structure-of-arrays
//!    managers), that every such component the level holds has exactly one; and that the
//!    world can issue `num_entities` ids;
//! 2. gives every entity its row: the rows of each store follow the level's entity order,
//!    after the store's existing rows. Which store and which of the level's rows each entity
//!    gets was worked out once by the verifier (the level's spawn plan, runs of entities and
//!    of instances with consecutive rows), so a spawn does no per-entity bookkeeping for it;
//! 3. creates every entity id with one `create_many` of the entity manager (placing each
//!    store's run of ids at its rows), builds the level-order entity list with one copy per
//!    block of neighbouring entities that share a store, and asks each spawner, in spawn order,
//!    to [`prepare`](OutsideStores::prepare) (check) its instances — the last thing that can
//!    fail;
//! 4. reserves every store once;
//! 5. writes each component type of the stores for all its instances, in spawn order, one
//!    planned run of consecutive rows at a time: plain old data with one `memcpy` per run (a
//!    whole store's column when the level is grouped by signature), postcard components
//!    decoded straight into their rows; entities held in components are mapped from level
//!    indices to the spawned entities, one monomorphised pass per run;
//! 6. commits the rows;
//! 7. has each spawner, in spawn order, [`write`](OutsideStores::write) its instances (the
//!    transform manager creates and links the hierarchy's, parents first).
//!
//! Atomic: an error in steps 1–3 undoes what was done (the spawners prepared so far are
//! cancelled, the ids retired) and spawns nothing; steps 4–7 cannot fail (the verifier checked
//! every byte they read, the spawners checked their instances). If a component's own code
//! panics in step 5 (a `Deserialize` or `MapEntities` impl), the issued ids are retired and the
//! values written so far are leaked, never dropped twice or left reachable; no spawner has
//! written anything yet. A `Deserialize` that fails on bytes it accepted at verification (one
//! that is not deterministic) is reported the same way, as a panic. A spawner that panics in
//! step 7 leaves the entities spawned. Spawning one verified level many times (prefab
//! instances) reads the same blob and the same plan each time.

use super::error::set_names;
use super::World;
use crate::entity::{Entity, EntityError};
use crate::level::outside::spawn_order;
use crate::level::{
    ComponentData, LevelError, OutsideSpawn, OutsideStores, Registration, Registry, RunTarget,
    VerifiedLevel, VerifyOptions,
};
use crate::model::WorldModel;
use crate::set::AnyComponentBits;
use crate::storage::copy_bytes;
#[cfg(feature = "transform")]
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The text of a component set that no signature declares, as `insert` words it.
pub(crate) fn undeclared_text(missing: &str) -> String {
    let missing = super::error::shown(missing);
    format!(
        "{missing} is not a declared signature. Declare the set with `#[derive(Signature)]` (a \
         struct with one field per component of {missing}) in a scanned file"
    )
}

/// The component set of this world that `set` stands for; an error naming a registration
/// whose type is not a component of it. Components kept outside the stores are not counted.
fn set_mask<M: WorldModel>(set: &[&Registration]) -> Result<M::Set, String> {
    let tables = M::tables();
    let mut mask = M::Set::EMPTY;
    for r in set {
        if r.is_kept_outside() {
            continue; // A manager's, never a store's.
        }
        match tables.component_of_type(r.type_id()) {
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

/// Retires issued ids if a spawn unwinds before its rows are committed.
struct RetireOnUnwind<'a> {
    locations: &'a mut super::EntityLocations,
    ids: &'a [Entity],
    armed: bool,
}

impl Drop for RetireOnUnwind<'_> {
    fn drop(&mut self) {
        if self.armed {
            for &e in self.ids {
                self.locations.destroy(e);
            }
        }
    }
}

impl<M: WorldModel> World<M> {
    /// This world's [`Signatures`](crate::level::Signatures) check (it depends on the model
    /// only, not on the world's contents) for
    /// [`verify`](fn@crate::level::verify): a set of registrations maps to the store whose
    /// signature is exactly their components. A component kept outside the stores
    /// ([`Registration::kept_outside`]: `local_transform`, the components of structure-of-arrays
    /// managers) is not counted. A set no signature declares gets a store id past the declared
    /// ones, one per distinct such set of the level in the order they are asked for, which a
    /// spawn maps to the world's dynamic store of the set (a strict world refuses the set, with
    /// `insert`'s words). A registration whose type is not a component of this world is
    /// refused.
    pub fn level_signatures(&self) -> impl FnMut(&[&Registration]) -> Result<u32, String> {
        let tables = M::tables();
        let declared = M::stores().len() as u32;
        let mut undeclared: Vec<M::Set> = Vec::new();
        move |set: &[&Registration]| {
            let mask = set_mask::<M>(set)?;
            if let Some(store) = tables.store_with_mask(mask) {
                return Ok(store);
            }
            if M::STRICT {
                return Err(undeclared_text(&set_names::<M>(mask)));
            }
            let k = match undeclared.iter().position(|&m| m == mask) {
                Some(k) => k,
                None => {
                    undeclared.push(mask);
                    undeclared.len() - 1
                }
            };
            Ok(declared + k as u32)
        }
    }

    /// Verifies `blob` against `registry` and this world's signatures: the one step between
    /// bytes and [`World::spawn_level`].
    pub fn verify_level<'r, B: AsRef<[u8]>>(
        &self,
        blob: B,
        registry: &'r Registry,
        options: &VerifyOptions,
    ) -> Result<VerifiedLevel<'r, B>, LevelError> {
        crate::level::verify(blob, registry, self.level_signatures(), options)
    }

    /// Spawns every entity of a verified level with its components that live in the
    /// signature stores, and returns the entities in level order (entity `i` of the level
    /// is element `i`). The hierarchy (`local_transform`, `parent_index`) goes to the world's
    /// own ([`World::hierarchy`]); without the `transform` feature there is none, and a level
    /// that has a hierarchy is refused ([`LevelError::NeedsTransform`]). The components of
    /// structure-of-arrays managers are left out (see [`World::spawn_level_with`]). All or
    /// nothing.
    pub fn spawn_level<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
    ) -> Result<Vec<Entity>, LevelError> {
        self.spawn_level_owned(level, &mut [], false)
    }

    /// [`World::spawn_level`], and gives the components kept outside the stores to
    /// `spawner`: a structure-of-arrays manager takes its component; a
    /// [`TransformManager`](crate::transform::TransformManager) passed here takes
    /// `local_transform` and links the hierarchy instead of the world's own (every entity that
    /// has a `local_transform`, a parent or a child gets an instance, local matrix from
    /// `local_transform`, identity without one, linked to its parent's, parents first). A
    /// kept-outside component the level holds and no spawner takes is an error
    /// ([`LevelError::NoSpawner`]); see [`World::spawn_level_with_all`] for several
    /// managers.
    pub fn spawn_level_with<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawner: &mut dyn OutsideStores,
    ) -> Result<Vec<Entity>, LevelError> {
        self.spawn_level_owned(level, &mut [spawner], true)
    }

    /// [`World::spawn_level`], and gives the components kept outside the stores to
    /// `spawners`, in spawn order (see [`OutsideStores`]); the hierarchy goes to the world's
    /// own unless one of them takes `local_transform`. Every kept-outside component the
    /// level holds must be taken by exactly one of them. All or nothing: a spawner that
    /// refuses its instances leaves the world and every manager unchanged.
    pub fn spawn_level_with_all<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawners: &mut [&mut dyn OutsideStores],
    ) -> Result<Vec<Entity>, LevelError> {
        self.spawn_level_owned(level, spawners, true)
    }

    /// A spawn whose hierarchy goes to the world's own manager unless a spawner takes it.
    /// `all_outside`: every kept-outside component the level holds must find a spawner.
    fn spawn_level_owned<B: AsRef<[u8]>>(
        &mut self,
        level: &VerifiedLevel<'_, B>,
        spawners: &mut [&mut dyn OutsideStores],
        all_outside: bool,
    ) -> Result<Vec<Entity>, LevelError> {
        let local = Registration::local_transform();
        if spawners.iter().any(|s| s.takes(&local)) {
            return self.spawn_level_inner(level, spawners, all_outside);
        }
        // Without the `transform` feature the world has no hierarchy: a level that holds one is
        // refused rather than spawned without it.
        #[cfg(not(feature = "transform"))]
        {
            if let Some(entity) = crate::level::first_in_hierarchy(level) {
                return Err(LevelError::NeedsTransform { entity });
            }
            self.spawn_level_inner(level, spawners, all_outside)
        }
        // The world's manager joins the spawners for this call (taken out of the world so the
        // spawn can borrow both), and is put back whatever happens.
        #[cfg(feature = "transform")]
        {
            let mut own = std::mem::take(&mut self.hierarchy);
            let spawned = {
                let mut all: Vec<&mut dyn OutsideStores> = Vec::with_capacity(spawners.len() + 1);
                all.extend(
                    spawners
                        .iter_mut()
                        .map(|s| &mut **s as &mut dyn OutsideStores),
                );
                all.push(&mut own);
                catch_unwind(AssertUnwindSafe(|| {
                    self.spawn_level_inner(level, &mut all, all_outside)
                }))
            };
            self.hierarchy = own;
            match spawned {
                Ok(result) => result,
                Err(payload) => resume_unwind(payload),
            }
        }
    }

    fn spawn_level_inner<B: AsRef<[u8]>>(
        &mut self,
        res: &VerifiedLevel<'_, B>,
        spawners: &mut [&mut dyn OutsideStores],
        all_outside: bool,
    ) -> Result<Vec<Entity>, LevelError> {
        let n = res.num_entities() as usize;
        let tables = self.tables;
        let plan = res.plan();

        // 1. The store ids in the level are this world's, the spawners cover the components
        // kept outside the stores, and the ids can be issued. The ids of undeclared sets
        // (past the declared stores) stand for the world's dynamic stores of those sets, made
        // here if the world has none yet.
        let declared = self.declared() as u32;
        let mut dynamic: Vec<u32> = Vec::new();
        let mut signatures = self.level_signatures();
        for set in res.sets() {
            match signatures(&set.components) {
                Ok(store) if store == set.store && store >= declared => {
                    let mask = set_mask::<M>(&set.components).map_err(|message| {
                        LevelError::NotThisWorld {
                            components: set.to_string(),
                            message,
                        }
                    })?;
                    let k = (store - declared) as usize;
                    if dynamic.len() <= k {
                        dynamic.resize(k + 1, u32::MAX);
                    }
                    dynamic[k] = self.dynamic_store(mask);
                }
                Ok(store) if store == set.store => {}
                Ok(store) => {
                    return Err(LevelError::NotThisWorld {
                        components: set.to_string(),
                        message: format!(
                            "this world's store is {store}, the level says {}",
                            set.store
                        ),
                    })
                }
                Err(message) => {
                    return Err(LevelError::NotThisWorld {
                        components: set.to_string(),
                        message,
                    })
                }
            }
        }
        let holds = |r: &Registration| {
            all_outside && res.component(r.name()).is_some_and(|d| !d.is_empty())
        };
        let order = spawn_order(res.registry(), holds, spawners)?;
        let available = self.locations.entities().available();
        if n > available {
            return Err(LevelError::Entities(EntityError::Exhausted {
                requested: n,
                available,
            }));
        }

        // 2. Rows: each store's new rows follow the level's entity order, from its length
        // on. The plan's slot `k` is store `plan.stores[k].0`; its ids are
        // `ids[base[k]..base[k] + count]`.
        let k = plan.stores.len();
        let mut create: Vec<(u32, usize, usize)> = Vec::with_capacity(k);
        let mut base: Vec<usize> = Vec::with_capacity(k);
        let mut total = 0usize;
        for &(s, count) in &plan.stores {
            let s = match s.checked_sub(declared) {
                Some(k) => dynamic[k as usize],
                None => s,
            };
            create.push((s, self.stores[s as usize].len(), count as usize));
            base.push(total);
            total += count as usize;
        }

        // 3. Ids: one `create_many` for every store's run (in store order), then each entity's id
        // in level order, one copy per block of entities with one store. Then the spawners'
        // first phase, in spawn order; a refusal undoes the ones before it and the ids.
        let mut ids: Vec<Entity> = Vec::with_capacity(n);
        self.locations
            .create_runs(&create, &mut ids)
            .map_err(LevelError::Entities)?;
        let mut spawned: Vec<Entity> = Vec::with_capacity(n);
        for b in &plan.blocks {
            let from = base[b.slot as usize] + b.row as usize;
            spawned.extend_from_slice(&ids[from..from + b.len as usize]);
        }
        let any: &VerifiedLevel<'_, dyn AsRef<[u8]> + '_> = res;
        let spawn = OutsideSpawn::new(any, &spawned);
        for (done, &s) in order.iter().enumerate() {
            if let Err(e) = spawners[s].prepare(&spawn) {
                for &c in order[..done].iter().rev() {
                    spawners[c].cancel(&spawn);
                }
                for &id in &ids {
                    self.locations.destroy(id);
                }
                return Err(e);
            }
        }

        // 4.–6. Reserve, write, commit. Nothing below returns an error.
        let masks: Vec<M::Set> = create
            .iter()
            .map(|&(s, _, _)| self.store_mask(s as usize))
            .collect();
        // Component c's slot in plan slot k's store.
        let slot_index = |k: usize, c: u32| {
            let s = create[k].0;
            if s < declared {
                tables.slot_index(s, c)
            } else {
                super::dynamic::dynamic_slot(masks[k], c)
            }
        };
        let World {
            locations, stores, ..
        } = self;
        let mut guard = RetireOnUnwind {
            locations,
            ids: &ids,
            armed: true,
        };
        for &(s, _, count) in &create {
            stores[s as usize].reserve(count);
        }
        // Per plan slot, the component's first new row and stride, for the current component.
        let mut column: Vec<Option<(*mut u8, usize)>> = vec![None; k];
        let mut targets: Vec<RunTarget> = Vec::new();
        for (data, runs) in res.spawn_runs() {
            let Some(reg) = data.registration() else {
                continue;
            };
            if reg.is_kept_outside() {
                continue; // A spawner's, in step 7.
            }
            let Some(c) = tables.component_of_type(reg.type_id()) else {
                continue; // Step 1 checked every set: not reached.
            };
            column.iter_mut().for_each(|x| *x = None);
            targets.clear();
            for r in runs {
                let (first, stride) = *column[r.slot as usize].get_or_insert_with(|| {
                    let (s, first_row, _) = create[r.slot as usize];
                    let store = &stores[s as usize];
                    // Step 1 checked the store's signature is the entity's set, which holds c.
                    let i = slot_index(r.slot as usize, c)
                        .expect("the entity's store holds its component");
                    let slot = store.info().slots[i];
                    let stride = store.info().columns[slot.column as usize].size;
                    (store.slot_ptr(slot, first_row), stride)
                });
                targets.push(RunTarget {
                    ptr: first.wrapping_add(r.row as usize * stride),
                    stride,
                    len: r.len as usize,
                });
            }
            if data.is_pod() {
                write_pod_runs(&data, &targets);
            } else {
                // SAFETY: instance i goes to the slot of component c (the registered type) in
                // its entity's new row, which is reserved, aligned for the type, and written
                // once (entity indices are distinct within a record, so runs do not overlap);
                // the runs' lengths add up to the record's instances, which were verified to
                // decode as the type.
                if let Err((i, message)) = unsafe { (reg.write)(data.instance_data(), &targets) } {
                    // Only a `Deserialize` that decodes the verified bytes differently from one
                    // time to the next gets here: like its panic, nothing is committed.
                    panic!(
                        "instance {i} of verified component `{}` did not decode: {message}",
                        reg.name()
                    );
                }
            }
            if let Some(fns) = reg.entities {
                // SAFETY: every slot of the runs was initialised just above with a value of the
                // registered type; no reference to one exists.
                unsafe { (fns.map_runs)(&targets, &spawned) };
            }
        }
        for (&(s, _, count), &b) in create.iter().zip(&base) {
            // SAFETY: every slot of the store's new rows was written above: each entity's set
            // is exactly the store's signature (step 1) and every component of the set has an
            // instance for it in the level.
            unsafe { stores[s as usize].commit_rows(&ids[b..b + count], guard.locations.stamp()) };
        }
        guard.armed = false;
        drop(guard);
        for &(s, _, _) in &create {
            self.note_dynamic_rows(s);
        }

        // 7. The spawners' second phase, in spawn order.
        for &s in &order {
            spawners[s].write(&spawn);
        }
        Ok(spawned)
    }
}

/// Copies one POD component type into its rows, one copy per run.
fn write_pod_runs(data: &ComponentData<'_>, targets: &[RunTarget]) {
    let size = data.element_size() as usize;
    let mut bytes = data.instance_data();
    if size == 0 {
        return; // Zero-sized values need no bytes.
    }
    for t in targets {
        let (src, rest) = bytes.split_at(t.len * size);
        bytes = rest;
        if t.stride == size {
            // SAFETY: the run's rows are reserved (step 4) and hold nothing yet; the slot's
            // type is the registered POD type of `size` bytes, so the bytes are a valid value;
            // blob and column do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), t.ptr, src.len()) };
        } else {
            for (i, value) in src.chunks_exact(size).enumerate() {
                // SAFETY: as above, one element at a time (a `rows` store's column holds row
                // structs, `stride` bytes each, with the component at the slot's offset).
                unsafe { copy_bytes(value.as_ptr(), t.ptr.wrapping_add(i * t.stride), size) };
            }
        }
    }
}

/// A hand-written three-store model (columns `{p}`, columns `{p, n}`, rows `{p, l}`) with a
/// postcard component and an entity-holding one whose code can be made to panic.
#[cfg(test)]
mod tests {
    use super::super::World;
    use crate::__private::FieldSink;
    use crate::component::{Component, Signature};
    use crate::entity::Entity;
    use crate::level::{
        EntityCompiler, LevelError, MapEntities, Registration, Registry, VerifyOptions,
    };
    use crate::model::{
        ComponentInfo, ComponentOf, SignatureOf, Slot, StoreInfo, SystemInfo, Tables, WorldModel,
    };
    use crate::stats::Layout;
    use crate::storage::ColumnType;
    use serde::{Deserialize, Deserializer, Serialize};
    use std::any::TypeId;
    use std::cell::Cell;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::OnceLock;

    thread_local! {
        /// `N`s alive (decoded and not dropped) on this thread.
        static LIVE_N: Cell<isize> = const { Cell::new(0) };
        /// Decoding `N("boom")` panics while set.
        static PANIC_DECODE: Cell<bool> = const { Cell::new(false) };
        /// Decoding `N("flaky")` fails while set (a `Deserialize` that is not deterministic).
        static FAIL_DECODE: Cell<bool> = const { Cell::new(false) };
        /// Mapping an `L` panics while set.
        static PANIC_MAP: Cell<bool> = const { Cell::new(false) };
    }

    #[derive(
        Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, Serialize, Deserialize,
    )]
    #[repr(transparent)]
    struct P(u32);

    #[derive(
        Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, Serialize, Deserialize,
    )]
    #[repr(transparent)]
    struct L(Entity);

    impl MapEntities for L {
        fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
            assert!(!PANIC_MAP.get(), "L::map_entities panics");
            self.0 = map(self.0);
        }
    }

    #[derive(Debug, PartialEq, Serialize)]
    struct N(String);

    impl Clone for N {
        fn clone(&self) -> Self {
            LIVE_N.set(LIVE_N.get() + 1);
            N(self.0.clone())
        }
    }

    impl<'de> Deserialize<'de> for N {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let s = String::deserialize(d)?;
            assert!(
                !(s == "boom" && PANIC_DECODE.get()),
                "N::deserialize panics"
            );
            if s == "flaky" && FAIL_DECODE.get() {
                return Err(serde::de::Error::custom("flaky"));
            }
            LIVE_N.set(LIVE_N.get() + 1);
            Ok(N(s))
        }
    }

    impl Drop for N {
        fn drop(&mut self) {
            LIVE_N.set(LIVE_N.get() - 1);
        }
    }

    impl Component for P {
        const COLD: bool = false;
    }
    impl Component for N {
        const COLD: bool = false;
    }
    impl Component for L {
        const COLD: bool = false;
    }

    struct JustP(P);
    struct PN(P, N);
    struct PL(P, L);
    #[repr(C)]
    struct PLRow(P, L);

    impl Signature for JustP {
        const LEN: usize = 1;
        fn write_fields<S: FieldSink>(self, sink: &mut S) {
            sink.put(self.0);
        }
    }
    impl Signature for PN {
        const LEN: usize = 2;
        fn write_fields<S: FieldSink>(self, sink: &mut S) {
            sink.put(self.0);
            sink.put(self.1);
        }
    }
    impl Signature for PL {
        const LEN: usize = 2;
        fn write_fields<S: FieldSink>(self, sink: &mut S) {
            sink.put(self.0);
            sink.put(self.1);
        }
    }

    struct Model;
    static COMPONENTS: [ComponentInfo; 3] = [
        ComponentInfo::of::<P>("P"),
        ComponentInfo::of::<N>("N"),
        ComponentInfo::of::<L>("L"),
    ];
    static STORES: [StoreInfo; 3] = [
        StoreInfo {
            name: "JustP",
            layout: Layout::Columns,
            columns: &[ColumnType::of::<P>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<JustP>,
        },
        StoreInfo {
            name: "PN",
            layout: Layout::Columns,
            columns: &[ColumnType::of::<P>(), ColumnType::of::<N>()],
            slots: &[Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
            signature: TypeId::of::<PN>,
        },
        StoreInfo {
            name: "PL",
            layout: Layout::Rows,
            columns: &[ColumnType::of::<PLRow>()],
            slots: &[
                Slot::new(0, 0, std::mem::offset_of!(PLRow, 0)),
                Slot::new(2, 0, std::mem::offset_of!(PLRow, 1)),
            ],
            signature: TypeId::of::<PL>,
        },
    ];

    crate::__component_set! {
        /// The models' named sets.
        pub(crate) struct Named: 1 { P = 0, N = 1, L = 2, }
    }

    // SAFETY: the tables above describe P, N, L and the three signatures exactly (slot order
    // = field order; the rows store's one column holds `PLRow`s); `tables` is `Tables::build`.
    unsafe impl WorldModel for Model {
        type Resources = ();
        type Set = crate::ComponentBits<1>;
        type ComponentSet = Named;
        fn components() -> &'static [ComponentInfo] {
            &COMPONENTS
        }
        fn stores() -> &'static [StoreInfo] {
            &STORES
        }
        fn systems() -> &'static [SystemInfo] {
            &[]
        }
        fn tables() -> &'static Tables<Self::Set> {
            static TABLES: OnceLock<Tables<crate::ComponentBits<1>>> = OnceLock::new();
            TABLES.get_or_init(Tables::build::<Model>)
        }
    }
    // SAFETY: ids and stores as in the tables above.
    unsafe impl ComponentOf<Model> for P {
        const ID: u32 = 0;
    }
    // SAFETY: as above.
    unsafe impl ComponentOf<Model> for N {
        const ID: u32 = 1;
    }
    // SAFETY: as above.
    unsafe impl ComponentOf<Model> for L {
        const ID: u32 = 2;
    }
    // SAFETY: as above.
    unsafe impl SignatureOf<Model> for JustP {
        const STORE: u32 = 0;
    }
    // SAFETY: as above.
    unsafe impl SignatureOf<Model> for PN {
        const STORE: u32 = 1;
    }
    // SAFETY: as above.
    unsafe impl SignatureOf<Model> for PL {
        const STORE: u32 = 2;
    }

    /// The same tables as a strict world.
    struct StrictModel;
    // SAFETY: `Model`'s tables, which describe P, N, L and the three signatures exactly.
    unsafe impl WorldModel for StrictModel {
        type Resources = ();
        type Set = crate::ComponentBits<1>;
        type ComponentSet = Named;
        const STRICT: bool = true;
        fn components() -> &'static [ComponentInfo] {
            &COMPONENTS
        }
        fn stores() -> &'static [StoreInfo] {
            &STORES
        }
        fn systems() -> &'static [SystemInfo] {
            &[]
        }
        fn tables() -> &'static Tables<Self::Set> {
            static TABLES: OnceLock<Tables<crate::ComponentBits<1>>> = OnceLock::new();
            TABLES.get_or_init(Tables::build::<StrictModel>)
        }
    }
    // SAFETY: as for `Model`.
    unsafe impl ComponentOf<StrictModel> for P {
        const ID: u32 = 0;
    }
    // SAFETY: as for `Model`.
    unsafe impl ComponentOf<StrictModel> for N {
        const ID: u32 = 1;
    }
    // SAFETY: as for `Model`.
    unsafe impl ComponentOf<StrictModel> for L {
        const ID: u32 = 2;
    }
    // SAFETY: as for `Model`.
    unsafe impl SignatureOf<StrictModel> for PN {
        const STORE: u32 = 1;
    }

    /// Entities of the undeclared sets `P | N | L` and `N`, between declared ones, with
    /// references into and out of them.
    const UNDECLARED: &str = r#"{"entities": [
        {"components": {"p": 0, "n": "a", "l": 3}},
        {"components": {"p": 1}},
        {"components": {"n": "only"}},
        {"components": {"p": 3, "n": "b", "l": 0}},
        {"components": {"p": 4, "l": 2}}
    ]}"#;

    #[test]
    fn undeclared_sets_spawn_into_dynamic_stores_and_save_back() {
        let blob = EntityCompiler::new(registry())
            .compile_str(UNDECLARED)
            .unwrap();
        let res = verified(&blob);
        let (mut w, old) = prefilled();
        let e = w.spawn_level(&res).unwrap();
        w.check_invariants().unwrap();
        assert_eq!(w.signature_name_of(e[0]), Some("P | N | L"));
        assert_eq!(w.signature_name_of(e[2]), Some("N"));
        assert_eq!(w.signature_name_of(e[4]), Some("PL"));
        assert_eq!(w.get::<N>(e[3]).map(|n| n.0.as_str()), Some("b"));
        assert_eq!(w.get::<L>(e[0]), Some(&L(e[3])));
        assert_eq!(w.get::<L>(e[3]), Some(&L(e[0])));
        assert_eq!(w.get::<L>(e[4]), Some(&L(e[2])));
        assert_eq!(w.get::<P>(e[3]), Some(&P(3)));
        assert_eq!(w.get::<P>(e[2]), None);
        assert_eq!(w.get::<P>(old[0]), Some(&P(100)));
        let undeclared = w.undeclared();
        assert_eq!(undeclared.len(), 2);
        assert_eq!((undeclared[0].rows, undeclared[1].rows), (2, 1));
        let saved = w.save_entities_with(&e, registry(), &[]).unwrap();
        assert_eq!(saved, blob, "saved back byte-identical");
        // Moves out of and back into a dynamic store keep every value.
        assert_eq!(w.remove::<L>(e[0]), Ok(L(e[3])));
        assert_eq!(w.signature_name_of(e[0]), Some("PN"));
        assert_eq!(w.insert(e[0], L(e[1])), Ok(None));
        assert_eq!(w.signature_name_of(e[0]), Some("P | N | L"));
        assert_eq!(w.get::<N>(e[0]).map(|n| n.0.as_str()), Some("a"));
        w.check_invariants().unwrap();
    }

    #[test]
    fn a_strict_world_refuses_undeclared_sets_with_inserts_words() {
        let blob = EntityCompiler::new(registry())
            .compile_str(UNDECLARED)
            .unwrap();
        let err = World::<StrictModel>::new()
            .verify_level(&blob[..], registry(), &VerifyOptions::default())
            .unwrap_err();
        let LevelError::UndeclaredSignature { message, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(
            message,
            "`P | N | L` is not a declared signature. Declare the set with \
             `#[derive(Signature)]` (a struct with one field per component of `P | N | L`) in a \
             scanned file"
        );
        // `insert` words the same set the same way.
        let mut w = World::<StrictModel>::new();
        let e = w.spawn(PN(P(1), N("x".into())));
        let text = w.insert(e, L(e)).unwrap_err().to_string();
        let (set, fix) = message.split_once(". ").unwrap();
        assert!(text.contains(set) && text.contains(fix), "{text}");
        assert!(w.undeclared().is_empty());
    }

    /// Without the `transform` feature the world has no hierarchy: a level with one is refused
    /// before anything is spawned; a level without one spawns and saves back byte for byte.
    #[cfg(not(feature = "transform"))]
    #[test]
    fn without_transform_a_level_with_a_hierarchy_is_refused() {
        let registry = registry().with([Registration::local_transform()]).unwrap();
        let compile = |json: &str| EntityCompiler::new(&registry).compile_str(json).unwrap();
        let (mut w, old) = prefilled();
        let cases = [
            (
                r#"{"entities": [{"components": {"p": 0}}, {"parent": 0, "components": {"p": 1}}]}"#,
                1,
            ),
            (
                r#"{"entities": [{"components": {"p": 0}}, {"components": {"p": 1,
                "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 2,0,0,1]}}]}"#,
                1,
            ),
        ];
        for (json, entity) in cases {
            let blob = compile(json);
            let level = w
                .verify_level(&blob[..], &registry, &VerifyOptions::default())
                .unwrap();
            assert_eq!(
                w.spawn_level(&level),
                Err(LevelError::NeedsTransform { entity })
            );
            assert_eq!(
                w.spawn_level_with_all(&level, &mut []),
                Err(LevelError::NeedsTransform { entity })
            );
            assert_eq!(w.len(), 2, "nothing spawned");
            w.check_invariants().unwrap();
        }
        assert_eq!(w.get::<P>(old[0]), Some(&P(100)));

        let blob = compile(LEVEL);
        let level = w
            .verify_level(&blob[..], &registry, &VerifyOptions::default())
            .unwrap();
        let e = w.spawn_level(&level).unwrap();
        assert_eq!(w.save_entities_with(&e, &registry, &[]).unwrap(), blob);
        w.check_invariants().unwrap();
    }

    fn registry() -> &'static Registry {
        static REGISTRY: OnceLock<Registry> = OnceLock::new();
        REGISTRY.get_or_init(|| {
            Registry::new([
                Registration::pod::<P>("p"),
                Registration::serde::<N>("n"),
                Registration::pod::<L>("l").map_entities::<L>(),
            ])
            .unwrap()
        })
    }

    /// Nine entities, interleaved across the three stores (with a gap in the middle of a
    /// `PL` run), references forwards and backwards and one `NO_ENTITY`-free chain.
    const LEVEL: &str = r#"{"entities": [
        {"components": {"p": 0, "n": "a"}},
        {"components": {"p": 1, "l": 8}},
        {"components": {"p": 2}},
        {"components": {"p": 3, "l": 0}},
        {"components": {"p": 4, "n": "boom"}},
        {"components": {"p": 5, "n": "flaky"}},
        {"components": {"p": 6}},
        {"components": {"p": 7, "l": 3}},
        {"components": {"p": 8, "n": "z"}}
    ]}"#;

    fn verified(blob: &[u8]) -> crate::level::VerifiedLevel<'static, &[u8]> {
        World::<Model>::new()
            .verify_level(blob, registry(), &VerifyOptions::default())
            .unwrap()
    }

    /// A world holding two entities (one `JustP`, one `PN`) and one freed id slot.
    fn prefilled() -> (World<Model>, Vec<Entity>) {
        let mut w = World::<Model>::new();
        let a = w.spawn(PN(P(100), N("old".into())));
        let gone = w.spawn(JustP(P(101)));
        let b = w.spawn(JustP(P(102)));
        assert!(w.despawn(gone));
        (w, vec![a, b])
    }

    #[test]
    fn interleaved_level_spawns_every_value_in_its_row() {
        let blob = EntityCompiler::new(registry()).compile_str(LEVEL).unwrap();
        let res = verified(&blob);
        let plan = res.plan();
        assert_eq!(plan.stores, [(0, 2), (1, 4), (2, 3)]);
        // Entities 4 and 5 (both `PN`) make the one block of two.
        assert_eq!(plan.blocks.len(), 8);
        assert_eq!((plan.blocks[4].start, plan.blocks[4].len), (4, 2));
        let (mut w, old) = prefilled();
        let live = LIVE_N.get();
        let e = w.spawn_level(&res).unwrap();
        assert_eq!(LIVE_N.get(), live + 4, "four names decoded, none dropped");
        assert_eq!(e.len(), 9);
        assert_eq!(w.len(), 11);
        w.check_invariants().unwrap();
        for (i, &x) in e.iter().enumerate() {
            assert_eq!(w.get::<P>(x), Some(&P(i as u32)), "entity {i}");
        }
        let names = [(0, "a"), (4, "boom"), (5, "flaky"), (8, "z")];
        for (i, name) in names {
            assert_eq!(w.get::<N>(e[i]).map(|n| n.0.as_str()), Some(name));
        }
        for (i, leader) in [(1, 8), (3, 0), (7, 3)] {
            assert_eq!(w.get::<L>(e[i]), Some(&L(e[leader])), "entity {i}");
        }
        for i in [2, 6] {
            assert!(w.get::<N>(e[i]).is_none() && w.get::<L>(e[i]).is_none());
        }
        // Rows follow the level's order after the rows that were there.
        assert_eq!(w.stores[1].entities(), [old[0], e[0], e[4], e[5], e[8]]);
        assert_eq!(w.stores[0].entities(), [old[1], e[2], e[6]]);
        assert_eq!(w.stores[2].entities(), [e[1], e[3], e[7]]);
        assert_eq!(w.get::<P>(old[0]), Some(&P(100)));

        // A second instance maps to its own entities.
        let f = w.spawn_level(&res).unwrap();
        assert_eq!(w.get::<L>(f[1]), Some(&L(f[8])));
        assert_eq!(w.len(), 20);
        w.check_invariants().unwrap();
        drop(w);
        assert_eq!(
            LIVE_N.get(),
            live - 1,
            "every name dropped once (the old one too)"
        );
    }

    /// Runs `spawn` with `flag` set, expecting a panic; the world is as it was before and
    /// spawns again afterwards.
    fn panics_consistently(flag: &'static std::thread::LocalKey<Cell<bool>>, leaked: isize) {
        let blob = EntityCompiler::new(registry()).compile_str(LEVEL).unwrap();
        let res = verified(&blob);
        let (mut w, old) = prefilled();
        let live = LIVE_N.get();
        flag.set(true);
        let r = catch_unwind(AssertUnwindSafe(|| w.spawn_level(&res)));
        flag.set(false);
        assert!(r.is_err(), "the spawn panicked");
        assert_eq!(
            LIVE_N.get(),
            live + leaked,
            "values written so far leak, none drops"
        );
        w.check_invariants().unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w.stores.iter().map(|s| s.len()).sum::<usize>(), 2);
        assert_eq!(w.get::<P>(old[0]), Some(&P(100)));
        assert_eq!(w.get::<P>(old[1]), Some(&P(102)));
        let e = w.spawn_level(&res).unwrap();
        assert_eq!(w.len(), 11);
        assert_eq!(w.get::<L>(e[1]), Some(&L(e[8])));
        w.check_invariants().unwrap();
    }

    #[test]
    fn a_panicking_deserialize_leaves_the_world_consistent() {
        // "a" was decoded before "boom" panicked.
        panics_consistently(&PANIC_DECODE, 1);
    }

    #[test]
    fn a_deserialize_that_fails_after_verification_panics_and_commits_nothing() {
        // "a" and "boom" were decoded before "flaky" failed.
        panics_consistently(&FAIL_DECODE, 2);
    }

    #[test]
    fn a_panicking_map_entities_leaves_the_world_consistent() {
        // Spawn order is by identifier here: every name is decoded first, or none.
        let n_first = registry().by_name("n").unwrap().identifier()
            < registry().by_name("l").unwrap().identifier();
        panics_consistently(&PANIC_MAP, if n_first { 4 } else { 0 });
    }
}
