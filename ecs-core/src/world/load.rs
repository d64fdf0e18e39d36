//! Spawning entity resources (seed part 4): a verified blob becomes entities, the batched way.
//!
//! [`World::spawn_resource`] does similar things together:
//!
//! 1. checks, once per distinct component set, that the resource was verified against this
//!    world's signatures ([`World::resource_signatures`]), and that the world can issue
//!    `num_entities` ids — the only things that can still fail;
//! 2. gives every entity its row: the rows of each store follow the resource's entity order,
//!    after the store's existing rows. Which store and which of the resource's rows each entity
//!    gets was worked out once by the verifier (the resource's spawn plan, runs of entities and
//!    of instances with consecutive rows), so a spawn does no per-entity bookkeeping for it;
//! 3. creates every entity id with one `create_many` of the entity manager (placing each
//!    store's run of ids at its rows), builds the resource-order entity list with one copy per
//!    block of neighbouring entities that share a store, and, given a [`TransformManager`],
//!    creates every transform instance, linked parents first;
//! 4. reserves every store once;
//! 5. writes each component type for all its instances, in spawn order, one planned run of
//!    consecutive rows at a time: plain old data with one `memcpy` per run (a whole store's
//!    column when the level is grouped by signature), postcard components decoded straight
//!    into their rows; entities held in components are mapped from resource indices to the
//!    spawned entities, one monomorphised pass per run;
//! 6. commits the rows.
//!
//! Atomic: an error in steps 1–3 undoes what was done and spawns nothing; steps 4–6 cannot
//! fail (the verifier checked every byte they read). If a component's own code panics in step 5
//! (a `Deserialize` or `MapEntities` impl), the issued ids are retired and the values written so
//! far are leaked, never dropped twice or left reachable (transform instances already linked
//! stay, holding the retired ids). A `Deserialize` that fails on bytes it accepted at
//! verification (one that is not deterministic) is reported the same way, as a panic.
//! Spawning one verified resource many times (prefab instances) reads the same blob and the
//! same plan each time.

use super::error::set_names;
use super::World;
use crate::entity::{Entity, EntityError};
use crate::model::WorldModel;
use crate::resource::{
    ComponentData, LocalTransform, Registration, Registry, ResourceError, RunTarget,
    VerifiedResource, VerifyOptions,
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
        let plan = res.plan();

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

        // 2. Rows: each store's new rows follow the resource's entity order, from its length
        // on. The plan's slot `k` is store `plan.stores[k].0`; its ids are
        // `ids[base[k]..base[k] + count]`.
        let k = plan.stores.len();
        let mut create: Vec<(u32, usize, usize)> = Vec::with_capacity(k);
        let mut base: Vec<usize> = Vec::with_capacity(k);
        let mut total = 0usize;
        for &(s, count) in &plan.stores {
            create.push((s, self.stores[s as usize].len(), count as usize));
            base.push(total);
            total += count as usize;
        }

        // 3. Ids: one `create_many` for every store's run (in store order), then each entity's id
        // in resource order, one copy per block of entities with one store.
        let mut ids: Vec<Entity> = Vec::with_capacity(n);
        self.table
            .create_runs(&create, &mut ids)
            .map_err(ResourceError::Entities)?;
        let mut spawned: Vec<Entity> = Vec::with_capacity(n);
        for b in &plan.blocks {
            let from = base[b.slot as usize] + b.row as usize;
            spawned.extend_from_slice(&ids[from..from + b.len as usize]);
        }
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
            let Some(c) = tables.component_of_type(reg.type_id()) else {
                continue; // LocalTransform: linked above.
            };
            column.iter_mut().for_each(|x| *x = None);
            targets.clear();
            for r in runs {
                let (first, stride) = *column[r.slot as usize].get_or_insert_with(|| {
                    let (s, first_row, _) = create[r.slot as usize];
                    let store = &stores[s as usize];
                    // Step 1 checked the store's signature is the entity's set, which holds c.
                    let i = tables
                        .slot_index(s, c)
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
            // instance for it in the resource.
            unsafe { stores[s as usize].commit_rows(&ids[b..b + count]) };
        }
        guard.armed = false;
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

/// A hand-written three-store model (columns `{p}`, columns `{p, n}`, rows `{p, l}`) with a
/// postcard component and an entity-holding one whose code can be made to panic.
#[cfg(test)]
mod tests {
    use super::super::World;
    use crate::component::{Component, PartSink, Signature};
    use crate::entity::Entity;
    use crate::model::{
        ComponentInfo, ComponentOf, Layout, SignatureOf, Slot, StoreInfo, SystemInfo, Tables,
        WorldModel,
    };
    use crate::resource::{EntityCompiler, MapEntities, Registration, Registry, VerifyOptions};
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
        fn write_parts<S: PartSink>(self, sink: &mut S) {
            sink.put(self.0);
        }
    }
    impl Signature for PN {
        const LEN: usize = 2;
        fn write_parts<S: PartSink>(self, sink: &mut S) {
            sink.put(self.0);
            sink.put(self.1);
        }
    }
    impl Signature for PL {
        const LEN: usize = 2;
        fn write_parts<S: PartSink>(self, sink: &mut S) {
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
            mask: 0b001,
            layout: Layout::Columns,
            columns: &[ColumnType::of::<P>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<JustP>,
        },
        StoreInfo {
            name: "PN",
            mask: 0b011,
            layout: Layout::Columns,
            columns: &[ColumnType::of::<P>(), ColumnType::of::<N>()],
            slots: &[Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
            signature: TypeId::of::<PN>,
        },
        StoreInfo {
            name: "PL",
            mask: 0b101,
            layout: Layout::Rows,
            columns: &[ColumnType::of::<PLRow>()],
            slots: &[
                Slot::new(0, 0, std::mem::offset_of!(PLRow, 0)),
                Slot::new(2, 0, std::mem::offset_of!(PLRow, 1)),
            ],
            signature: TypeId::of::<PL>,
        },
    ];

    // SAFETY: the tables above describe P, N, L and the three signatures exactly (slot order
    // = field order; the rows store's one column holds `PLRow`s); `tables` is `Tables::build`.
    unsafe impl WorldModel for Model {
        type Resources = ();
        fn components() -> &'static [ComponentInfo] {
            &COMPONENTS
        }
        fn stores() -> &'static [StoreInfo] {
            &STORES
        }
        fn systems() -> &'static [SystemInfo] {
            &[]
        }
        fn tables() -> &'static Tables {
            static TABLES: OnceLock<Tables> = OnceLock::new();
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

    fn verified(blob: &[u8]) -> crate::resource::VerifiedResource<'static, &[u8]> {
        World::<Model>::new()
            .verify_resource(blob, registry(), &VerifyOptions::default())
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
        let e = w.spawn_resource(&res).unwrap();
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
        // Rows follow the resource's order after the rows that were there.
        assert_eq!(w.stores[1].entities(), [old[0], e[0], e[4], e[5], e[8]]);
        assert_eq!(w.stores[0].entities(), [old[1], e[2], e[6]]);
        assert_eq!(w.stores[2].entities(), [e[1], e[3], e[7]]);
        assert_eq!(w.get::<P>(old[0]), Some(&P(100)));

        // A second instance maps to its own entities.
        let f = w.spawn_resource(&res).unwrap();
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
        let r = catch_unwind(AssertUnwindSafe(|| w.spawn_resource(&res)));
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
        let e = w.spawn_resource(&res).unwrap();
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
