//! Saving a world into a [`WorldState`], loading it back, and hashing it (the rules are in
//! [`crate::state`]).
//!
//! # Incremental copies and the epoch
//!
//! A state remembers the world it was saved from (each world has an instance number) and the
//! stamp from which on a write is newer than the save (its *reference*). Saving again into it
//! copies the (column, chunk) pairs whose records are at or past the reference; loading it
//! into that world restores the pairs written since. Both rely on stamps growing along the
//! world's history, while a load sets the change clock back. So a stamp carries the world's
//! *epoch* above its clock bits (`storage/versions.rs`): each load starts a new epoch and
//! stamps what it restored with it, so everything a load or a later write touched is newer
//! than any earlier reference, and change filters, which compare only the clock bits, see the
//! saved world's clock. The world then goes on in a second new epoch, so that what is written
//! after the load is newer than what the load restored (and a state saved just after the load
//! finds the restored chunks clean). When the epoch bits would run out (2^24 loads), the world takes a new
//! instance number and clears the epoch bits of its records: states saved before then are
//! copied whole once.
//!
//! # Load in two steps
//!
//! A load first clones everything it needs from the state (store values, no_rollback
//! defaults, sparse sets, resources, events) into buffers apart, which may panic and then
//! leave the world untouched; then it commits without calling user code: values move in as
//! bytes, the ids and locations are restored, and the values it replaced are dropped last.
//!
//! Rows whose entity may have changed (a chunk with a structural write since the save, or
//! whose row count differs) are restored whole; the entities that were in them, and in rows
//! the load removes, lose their locations, and the state's entities of those rows are placed.
//! An entity in a row of neither kind kept its place since the save.

use super::{Location, World};
use crate::entity::Entity;
use crate::events::AnyEvents;
use crate::set::AnyComponentBits;
use crate::state::hash::StateHasher;
use crate::state::ops::{Copying, StateModel};
use crate::state::{Origin, StateError, WorldState};
use crate::storage::{
    slot_plans, tick, Graveyard, LoadPlan, SlotPlan, SparseImage, SparseSet, Staged, StagedSet,
    Store, StoreImage, TICK_BITS,
};
use rustc_hash::{FxHashMap, FxHashSet};
use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU64, Ordering};

/// The epoch bits of a stamp: `epoch << TICK_BITS`.
const EPOCH_LIMIT: u64 = (1 << (64 - TICK_BITS)) - 1;

/// Instance numbers of worlds, never reused in a process (0 means none).
static INSTANCES: AtomicU64 = AtomicU64::new(1);

/// What world states need of a world that is not part of its state.
pub(super) struct Keeping {
    /// This world's instance number: states saved from it load incrementally.
    instance: u64,
    /// Epochs started so far in this instance (the epoch bits of new stamps): two per load,
    /// one per save. Atomic so that a save (`&World`) can start one.
    epoch: AtomicU64,
    /// Resources cloned from a state before a load swaps them in; afterwards the old ones,
    /// whose allocations the next load reuses.
    resources: Option<Box<dyn Any + Send + Sync>>,
    /// Event queues, likewise.
    events: Vec<Box<dyn AnyEvents>>,
}

impl Keeping {
    pub(super) fn new() -> Self {
        Keeping {
            instance: INSTANCES.fetch_add(1, Ordering::Relaxed),
            epoch: AtomicU64::new(0),
            resources: None,
            events: Vec::new(),
        }
    }
}

/// The origin of a model's states: its type, name and fingerprint (computed once, checking
/// the state tables against the model's).
fn origin<M: StateModel>() -> Origin {
    let tables = M::state_tables();
    let fingerprint = *tables.fingerprint.get_or_init(|| fingerprint::<M>());
    Origin {
        model: TypeId::of::<M>(),
        name: std::any::type_name::<M>(),
        tables,
        fingerprint,
    }
}

/// A hash of what the model's tables say about its layout: components (names, types, sizes,
/// how states copy them), stores and their slots, systems, events, readers and resources. A
/// state records it, and a world whose model differs refuses the state.
fn fingerprint<M: StateModel>() -> u64 {
    let tables = M::state_tables();
    let components = M::components();
    assert_eq!(
        tables.components.len(),
        components.len(),
        "a state entry per component"
    );
    assert_eq!(
        tables.events.len(),
        M::events().len(),
        "a state entry per event type"
    );
    let mut h = StateHasher::new();
    for (c, s) in components.iter().zip(tables.components) {
        assert!(
            (s.type_id)() == (c.ty.type_id)(),
            "the state entry of component {} is of another type",
            c.name
        );
        h.write_bytes(c.name.as_bytes());
        h.write_bytes((c.ty.type_name)().as_bytes());
        h.write_words(&[c.ty.size as u64, c.ty.align as u64, u64::from(c.sparse)]);
        h.write_word(match s.copying {
            Copying::Bits => 1,
            Copying::Clone { .. } => 2,
            Copying::NoRollback { .. } => 3,
        });
        h.write_word(u64::from(s.hash.is_some()));
    }
    for store in M::stores() {
        h.write_bytes(store.name.as_bytes());
        h.write_word(store.layout as u64);
        for column in store.columns {
            h.write_words(&[column.size as u64, column.align as u64]);
        }
        for slot in store.slots {
            h.write_words(&[
                slot.component.into(),
                slot.column.into(),
                slot.offset.into(),
            ]);
        }
    }
    for system in M::systems() {
        h.write_bytes(system.name.as_bytes());
    }
    for (e, s) in M::events().iter().zip(tables.events) {
        assert!(
            (s.type_id)() == (e.type_id)(),
            "the state entry of event {} is of another type",
            e.name
        );
        h.write_bytes(e.name.as_bytes());
    }
    h.write_bytes(std::any::type_name::<M::Resources>().as_bytes());
    h.write_words(&[
        size_of::<M::Resources>() as u64,
        M::READERS as u64,
        M::PASSES as u64,
    ]);
    h.digest()
}

fn clone_resources<R: Clone + Send + Sync + 'static>(
    r: &(dyn Any + Send + Sync),
) -> Box<dyn Any + Send + Sync> {
    Box::new(
        r.downcast_ref::<R>()
            .expect("the resources of the state's model")
            .clone(),
    )
}

/// The no_rollback values a load moves between rows, by entity and component.
#[derive(Default)]
struct Carry {
    /// (entity, component) -> position in the component's buffer.
    index: FxHashMap<(Entity, u32), usize>,
    buffers: FxHashMap<u32, ValueBuffer>,
}

/// Per store, the runs of rows whose entity ids an incremental save copies, and the image's
/// length before the save.
type MovedRows = Vec<(Vec<std::ops::Range<usize>>, usize)>;

impl<M: StateModel> World<M> {
    /// Saves the world's whole simulated state into `state` (see [`crate::state`]). Reuses
    /// `state`'s allocations; if `state` was last saved from this world, copies only what was
    /// written since. The world does not change. The save hashes nothing:
    /// [`WorldState::checksum`] hashes what it copied when asked.
    ///
    /// If a `Clone` panics, the panic goes on and `state` holds no complete save (loading it
    /// is an error until it is saved into again).
    pub fn save_state(&self, state: &mut WorldState) {
        let origin = origin::<M>();
        if state.origin.is_none_or(|o| o.model != origin.model) {
            *state = WorldState::new();
            state.origin = Some(origin);
        }
        let since =
            (state.complete && state.source == self.keeping.instance).then_some(state.reference);
        state.complete = false;
        state.checksum.take();
        let states = origin.tables.components;
        self.locations.entities().save_image(&mut state.entities);
        let moved = self.clear_moved_locations(state, since);
        // Stores: an image per store, kept while it is of the same store.
        state.stores.truncate(self.stores.len());
        for (s, store) in self.stores.iter().enumerate() {
            // A store made after the state's save has records the state never saw: whole.
            let since = since.filter(|&r| self.store_born(s) < r);
            match state.stores.get_mut(s) {
                Some(image) if std::ptr::eq(image.info(), store.info()) => image.save(store, since),
                Some(image) => {
                    *image = StoreImage::new(store.info(), states, M::components());
                    image.save(store, None);
                }
                None => {
                    let mut image = StoreImage::new(store.info(), states, M::components());
                    image.save(store, None);
                    state.stores.push(image);
                }
            }
        }
        self.save_locations(state, moved);
        state.usage.clear();
        state
            .usage
            .extend((0..self.dynamic.len()).map(|i| self.dynamic.usage_of(i)));
        let sets = self.sparse.sets();
        if state.sparse.len() != sets.len() {
            state.sparse = self
                .sparse
                .mask()
                .ids()
                .zip(sets)
                .map(|(c, set)| SparseImage::new(set.ty(), states[c as usize].copying))
                .collect();
        }
        for ((c, set), image) in self.sparse.mask().ids().zip(sets).zip(&mut state.sparse) {
            set.save_image(image, states[c as usize].copying);
        }
        match state
            .resources
            .as_mut()
            .and_then(|r| r.downcast_mut::<M::Resources>())
        {
            Some(r) => r.clone_from(&self.resources),
            None => state.resources = Some(Box::new(self.resources.clone())),
        }
        state.clone_resources = Some(clone_resources::<M::Resources>);
        state.events.resize_with(self.events.len(), || None);
        for ((queue, slot), e) in self
            .events
            .iter()
            .zip(&mut state.events)
            .zip(origin.tables.events)
        {
            (e.save)(queue.as_any(), slot);
        }
        state.cursors.clear();
        state.cursors.extend_from_slice(&self.cursors);
        state.last_run.clear();
        state.last_run.extend_from_slice(&self.last_run);
        state.tick = self.locations.tick();
        #[cfg(feature = "transform")]
        self.hierarchy.save_into(&mut state.hierarchy);
        state.source = self.keeping.instance;
        // A new epoch from here on: a write after the save is stamped at or past the
        // reference, every record before it below (when the epochs are about to run out,
        // the reference is the next stamp, which a write before the save may share: copied
        // again, harmlessly).
        let epoch = self.keeping.epoch.load(Ordering::Relaxed);
        if epoch + 3 < EPOCH_LIMIT {
            self.keeping.epoch.store(epoch + 1, Ordering::Relaxed);
            self.locations.set_epoch((epoch + 1) << TICK_BITS);
        }
        state.reference = self.locations.stamp();
        state.hash_state = Some(Self::state_checksum);
        state.complete = true;
    }

    /// Save, before the stores: when every store's image is saved incrementally (since the
    /// state's `since`), the rows whose ids the save copies, and the rows it drops or appends,
    /// hold every entity whose location changed since, before and after. Returns those rows
    /// per store (runs, and the image's length before the save) after clearing the state's
    /// locations of the entities the images hold there; `None` when the table is copied whole.
    fn clear_moved_locations(
        &self,
        state: &mut WorldState,
        since: Option<u64>,
    ) -> Option<MovedRows> {
        let r = since.filter(|_| state.stores.len() == self.stores.len())?;
        let moved: MovedRows = self
            .stores
            .iter()
            .zip(&state.stores)
            .enumerate()
            .map(|(s, (store, image))| {
                (std::ptr::eq(image.info(), store.info()) && self.store_born(s) < r)
                    .then(|| (image.structural_runs(store, Some(r)), image.len()))
            })
            .collect::<Option<_>>()?;
        for ((runs, m), (store, image)) in moved.iter().zip(self.stores.iter().zip(&state.stores)) {
            let tail = store.len().min(*m)..*m;
            for r in runs.iter().cloned().chain(std::iter::once(tail)) {
                for e in &image.entities()[r] {
                    state.locations[e.index() as usize] = Location::NONE;
                }
            }
        }
        Some(moved)
    }

    /// Save, after the stores: the state's locations become the world's, set where `moved`'s
    /// rows ([`World::clear_moved_locations`]) are now, or copied whole.
    fn save_locations(&self, state: &mut WorldState, moved: Option<MovedRows>) {
        match moved {
            Some(moved) => {
                state
                    .locations
                    .resize(self.locations.entities().slots(), Location::NONE);
                for (s, ((runs, m), store)) in moved.into_iter().zip(&self.stores).enumerate() {
                    let tail = m.min(store.len())..store.len();
                    for r in runs.into_iter().chain(std::iter::once(tail)) {
                        for (row, e) in r.clone().zip(&store.entities()[r]) {
                            state.locations[e.index() as usize] = Location::new(s as u32, row);
                        }
                    }
                }
            }
            None => {
                state.locations.clear();
                state.locations.extend_from_slice(self.locations.table());
            }
        }
        debug_assert!(
            state.locations == self.locations.table(),
            "the saved locations are the world's"
        );
    }

    /// The checksum of a state saved from a world of this model (the same as
    /// [`World::checksum`] of the world it was saved from).
    fn state_checksum(state: &WorldState) -> u64 {
        let origin = state.origin.expect("a saved state has an origin");
        let mut h = StateHasher::new();
        h.write_word(origin.fingerprint);
        h.write_word(tick(state.tick));
        state.entities.hash_into(&mut h);
        h.write_word(state.stores.len() as u64);
        for image in &state.stores {
            image.hash_into(&mut h);
        }
        for (c, image) in Self::sparse_ids().zip(&state.sparse) {
            image.hash_into(origin.tables.components[c as usize].hash, &mut h);
        }
        let resources = state
            .resources
            .as_ref()
            .and_then(|r| r.downcast_ref::<M::Resources>())
            .expect("a saved state holds resources");
        M::hash_resources(resources, &mut h);
        for (queue, e) in state.events.iter().zip(origin.tables.events) {
            let queue = queue.as_ref().expect("a saved state holds every queue");
            (e.hash)(&**queue as &dyn Any, &mut h);
        }
        h.write_words(&state.cursors);
        for &t in &state.last_run {
            h.write_word(tick(t));
        }
        #[cfg(feature = "transform")]
        state.hierarchy.hash_into(&mut h);
        h.digest()
    }

    /// The ids of the model's sparse components, ascending (the order of its sparse sets).
    fn sparse_ids() -> impl Iterator<Item = u32> {
        M::components()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.sparse)
            .map(|(i, _)| i as u32)
    }

    /// The checksum of the world's simulated state: what [`World::save_state`] would return
    /// now (see [`crate::state`] for what it covers and how values are hashed).
    pub fn checksum(&self) -> u64 {
        let origin = origin::<M>();
        let states = origin.tables.components;
        let mut h = StateHasher::new();
        h.write_word(origin.fingerprint);
        h.write_word(tick(self.locations.tick()));
        self.locations.entities().hash_into(&mut h);
        h.write_word(self.stores.len() as u64);
        for store in &self.stores {
            store.hash_into(&slot_plans(store.info(), states, M::components()), &mut h);
        }
        for (c, set) in Self::sparse_ids().zip(self.sparse.sets()) {
            let s = &states[c as usize];
            set.hash_into(s.copying, s.hash, &mut h);
        }
        M::hash_resources(&self.resources, &mut h);
        for (queue, e) in self.events.iter().zip(origin.tables.events) {
            (e.hash)(queue.as_any(), &mut h);
        }
        h.write_words(&self.cursors);
        for &t in self.last_run.iter() {
            h.write_word(tick(t));
        }
        #[cfg(feature = "transform")]
        self.hierarchy.hash_into(&mut h);
        h.digest()
    }

    /// Makes the world the one `state` holds (see [`crate::state`]): entities with their ids
    /// and rows, values, change records, resources, events, clock and the next ids to issue.
    /// If `state` was saved from this world, copies only what changed since.
    ///
    /// An `Err` (a state never saved, saved by another world type or build, or whose save
    /// panicked) changes nothing. A panicking `Clone` or `Default` leaves the world as it was
    /// (the panic goes on); a panicking `Drop` of a replaced value runs after the load is
    /// complete, and every other replaced value is still dropped.
    pub fn load_state(&mut self, state: &WorldState) -> Result<(), StateError> {
        let origin = origin::<M>();
        state.check(&origin)?;
        let since = (state.source == self.keeping.instance).then_some(state.reference);
        let declared = self.declared();
        // The stores the world and the state share (the declared ones, and the dynamic ones
        // made in the same order); the world's others go, the state's others are made.
        let shared = self
            .stores
            .iter()
            .zip(&state.stores)
            .take_while(|(s, i)| std::ptr::eq(s.info(), i.info()))
            .count();
        debug_assert!(shared >= declared);
        let plans = self.load_plans(state, shared, since);
        // Step 1: what moves and what is cloned, reading only.
        let (unplaced, defaults) = self.rows_leaving(state, shared, &plans, &origin);
        // Step 2: clone (user code may panic: nothing in the world has changed yet).
        let (mut default_buffers, mut staged, staged_sets) =
            self.stage_load(state, &plans, &defaults, &origin);
        // Step 3: commit. No user code runs from here until the drops at the end.
        let epoch = self.next_epoch();
        // The clock first: stores made below are born in the new epoch.
        self.locations.set_tick(epoch | tick(state.tick));
        let (graveyard, mut carry, removed_stores) =
            self.take_replaced_rows(state, shared, &plans, &origin);
        self.dynamic.truncate(shared - declared, declared);
        for (s, image) in state.stores.iter().enumerate().skip(shared) {
            let mask = image
                .info()
                .slots
                .iter()
                .fold(M::Set::EMPTY, |m, slot| m.with(slot.component));
            let id = self.dynamic_store(mask);
            debug_assert_eq!(id as usize, s);
        }
        for (s, image) in state.stores.iter().enumerate() {
            // SAFETY: `staged[s]` was made from this image and plan; the store's rows past the
            // image's length and the no_rollback values of the structural rows were taken out.
            unsafe { self.stores[s].commit_load(image, &plans[s], &mut staged[s], epoch) };
        }
        for (i, usage) in state.usage.iter().enumerate() {
            self.dynamic.set_usage(i, *usage);
        }
        self.restore_no_rollback(state, &plans, &mut carry, &mut default_buffers);
        self.place_entities(state, &plans, unplaced.as_deref());
        let old_sets = self.commit_rest(state, staged_sets);
        // Step 4: the replaced values go (a panicking drop runs after the load is complete).
        drop((
            staged,
            graveyard,
            old_sets,
            removed_stores,
            carry,
            default_buffers,
        ));
        Ok(())
    }

    /// How each of the state's stores loads: the rows written since `since` in a store the
    /// world shares with the state (the first `shared`), everything in the others.
    fn load_plans(&self, state: &WorldState, shared: usize, since: Option<u64>) -> Vec<LoadPlan> {
        state
            .stores
            .iter()
            .enumerate()
            .map(
                |(s, image)| match self.stores.get(s).filter(|_| s < shared) {
                    Some(store) => {
                        store.load_plan(image, since.filter(|&r| self.store_born(s) < r))
                    }
                    None => LoadPlan::everything(image),
                },
            )
            .collect()
    }

    /// Load step 1, reading only: the entities of the rows the load replaces or removes (they
    /// lose their locations; `None` when that is every placed entity, so no list is made),
    /// and how many default values each no_rollback component needs for the state's restored
    /// rows that no leaving row carries a value to.
    fn rows_leaving(
        &self,
        state: &WorldState,
        shared: usize,
        plans: &[LoadPlan],
        origin: &Origin,
    ) -> (Option<Vec<Entity>>, FxHashMap<u32, usize>) {
        let states = origin.tables.components;
        // The rows whose entities lose their locations: the restored ones and those the load
        // removes.
        let mut unplaced_rows: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (s, store) in self.stores.iter().enumerate() {
            let n = store.len();
            let keep_below = if s < shared {
                state.stores[s].len().min(n)
            } else {
                0
            };
            if s < shared {
                unplaced_rows.extend(
                    plans[s]
                        .structural
                        .iter()
                        .map(|r| (s, r.start.min(keep_below)..r.end.min(keep_below))),
                );
            }
            unplaced_rows.push((s, keep_below..n));
        }
        unplaced_rows.retain(|(_, r)| !r.is_empty());
        // Every placed entity unplaced: the locations are cleared whole, no list needed.
        let unplace_all =
            unplaced_rows.iter().map(|(_, r)| r.len()).sum::<usize>() == self.locations.len();
        let mut unplaced: Vec<Entity> = Vec::new();
        let mut carried: FxHashSet<(Entity, u32)> = FxHashSet::default();
        let plans_of = |store: &Store| slot_plans(store.info(), states, M::components());
        for (s, r) in &unplaced_rows {
            let store = &self.stores[*s];
            let entities = &store.entities()[r.clone()];
            if !unplace_all {
                unplaced.extend_from_slice(entities);
            }
            for p in plans_of(store).iter().filter(|p| !p.saved()) {
                carried.extend(entities.iter().map(|&e| (e, p.component)));
            }
        }
        // The no_rollback values the state's restored rows need and nobody carries: defaults.
        let mut defaults: FxHashMap<u32, usize> = FxHashMap::default();
        for (image, plan) in state.stores.iter().zip(plans) {
            for p in image.plans().iter().filter(|p| !p.saved()) {
                for r in &plan.structural {
                    let missing = image.entities()[r.clone()]
                        .iter()
                        .filter(|&&e| !carried.contains(&(e, p.component)))
                        .count();
                    *defaults.entry(p.component).or_default() += missing;
                }
            }
        }
        ((!unplace_all).then_some(unplaced), defaults)
    }

    /// Load step 2, which may run user code (`Clone`, `Default`) and so changes nothing in the
    /// world: the no_rollback defaults, the stores' and sparse sets' staged values, and the
    /// resources and event queues cloned into the world's scratch.
    #[allow(clippy::type_complexity)]
    fn stage_load(
        &mut self,
        state: &WorldState,
        plans: &[LoadPlan],
        defaults: &FxHashMap<u32, usize>,
        origin: &Origin,
    ) -> (FxHashMap<u32, ValueBuffer>, Vec<Staged>, Vec<StagedSet>) {
        let states = origin.tables.components;
        let mut default_buffers: FxHashMap<u32, ValueBuffer> = FxHashMap::default();
        for (&c, &count) in defaults.iter().filter(|(_, &n)| n > 0) {
            let Copying::NoRollback { default } = states[c as usize].copying else {
                unreachable!("only no_rollback slots take defaults")
            };
            let mut buffer = ValueBuffer::new(&M::components()[c as usize].ty);
            // SAFETY: the default function of component `c`, whose type the buffer holds.
            unsafe { buffer.fill(default, count) };
            default_buffers.insert(c, buffer);
        }
        let staged: Vec<Staged> = state
            .stores
            .iter()
            .zip(plans)
            .map(|(image, plan)| Store::stage_load(image, plan))
            .collect();
        let staged_sets: Vec<StagedSet> = Self::sparse_ids()
            .zip(self.sparse.sets())
            .zip(&state.sparse)
            .map(|((c, set), image)| set.stage_image(image, states[c as usize].copying))
            .collect();
        let resources = state
            .resources
            .as_ref()
            .and_then(|r| r.downcast_ref::<M::Resources>())
            .expect("a saved state holds resources");
        match self
            .keeping
            .resources
            .as_mut()
            .and_then(|r| r.downcast_mut::<M::Resources>())
        {
            Some(scratch) => scratch.clone_from(resources),
            None => self.keeping.resources = Some(Box::new(resources.clone())),
        }
        if self.keeping.events.len() != self.events.len() {
            self.keeping.events = M::events().iter().map(|e| (e.queue)()).collect();
        }
        for ((scratch, queue), e) in self
            .keeping
            .events
            .iter_mut()
            .zip(&state.events)
            .zip(origin.tables.events)
        {
            let queue = queue.as_ref().expect("a saved state holds every queue");
            (e.restore)(&**queue as &dyn Any, scratch.as_any_mut());
        }
        (default_buffers, staged, staged_sets)
    }

    /// Load step 3 begins: the no_rollback values of the rows restored whole move out (to be
    /// carried to the rows the state restores for their entities), then the rows the load
    /// removes go: the shared stores' tails and the other stores whole.
    fn take_replaced_rows(
        &mut self,
        state: &WorldState,
        shared: usize,
        plans: &[LoadPlan],
        origin: &Origin,
    ) -> (Graveyard, Carry, Vec<Store>) {
        let states = origin.tables.components;
        let plans_of = |store: &Store| slot_plans(store.info(), states, M::components());
        let mut graveyard = Graveyard::default();
        let mut carry = Carry::default();
        // The no_rollback values of the rows restored whole move out first.
        for (s, store) in self.stores.iter().enumerate().take(shared) {
            let keep_below = state.stores[s].len().min(store.len());
            // The slots outer: a store without no_rollback slots costs nothing per row.
            for p in plans_of(store).iter().filter(|p| !p.saved()) {
                for r in &plans[s].structural {
                    for row in r.start.min(keep_below)..r.end.min(keep_below) {
                        let e = store.entities()[row];
                        let ptr = store.ptr(p.column as u32, p.offset as u32, row);
                        // SAFETY: a live row's value, which the row gives up (it is restored).
                        unsafe { carry.take(e, p, ptr) };
                    }
                }
            }
        }
        // The rows the load removes: the shared stores' tails and the other stores whole.
        let mut removed_stores: Vec<Store> = Vec::new();
        for s in (0..self.stores.len()).rev() {
            let from = if s < shared { state.stores[s].len() } else { 0 };
            let slot_plans = plans_of(&self.stores[s]);
            // SAFETY: the plans are the store's.
            unsafe {
                self.stores[s].take_tail(from, &slot_plans, &mut graveyard, &mut |e, p, ptr| {
                    carry.take(e, p, ptr)
                })
            };
            if s >= shared {
                removed_stores.push(self.stores.pop().expect("the last store"));
            }
        }
        (graveyard, carry, removed_stores)
    }

    /// The no_rollback values of the rows the state restored whole: carried, else defaults.
    fn restore_no_rollback(
        &mut self,
        state: &WorldState,
        plans: &[LoadPlan],
        carry: &mut Carry,
        default_buffers: &mut FxHashMap<u32, ValueBuffer>,
    ) {
        for (s, (image, plan)) in state.stores.iter().zip(plans).enumerate() {
            let store = &self.stores[s];
            for p in image.plans().iter().filter(|p| !p.saved()) {
                for r in &plan.structural {
                    for row in r.clone() {
                        let e = store.entities()[row];
                        let dst = store.ptr(p.column as u32, p.offset as u32, row);
                        // SAFETY: the slot is empty (restored rows leave no_rollback slots
                        // unwritten) and gets one value, carried or default.
                        unsafe {
                            if !carry.put(e, p, dst) {
                                default_buffers
                                    .get_mut(&p.component)
                                    .expect("a default for each value nobody carries")
                                    .move_next(dst);
                            }
                        }
                    }
                }
            }
        }
    }

    /// The state's ids and locations: its table copied whole when every placed entity left
    /// (`unplaced` is `None`), else the locations of `unplaced` (the entities that were in the
    /// rows the load replaced or removed) cleared and those of the rows it restored whole set.
    fn place_entities(
        &mut self,
        state: &WorldState,
        plans: &[LoadPlan],
        unplaced: Option<&[Entity]>,
    ) {
        self.locations.manager_mut().load_image(&state.entities);
        match unplaced {
            None => self.locations.load_table(&state.locations),
            Some(unplaced) => {
                self.locations.unplace(unplaced);
                self.locations.fit_locations();
                for (s, (image, plan)) in state.stores.iter().zip(plans).enumerate() {
                    for r in &plan.structural {
                        self.locations
                            .place_rows(s as u32, r.start, &image.entities()[r.clone()]);
                    }
                }
            }
        }
    }

    /// The rest of the commit: sparse sets, resources, events, the hierarchy, cursors, last
    /// runs and the clock. Returns the replaced sparse sets, to drop last.
    fn commit_rest(
        &mut self,
        state: &WorldState,
        mut staged_sets: Vec<StagedSet>,
    ) -> Vec<SparseSet> {
        let old_sets: Vec<SparseSet> = self
            .sparse
            .sets_mut()
            .iter_mut()
            .zip(staged_sets.drain(..))
            .map(|(set, next)| set.commit_staged(next))
            .collect();
        if let Some(r) = self
            .keeping
            .resources
            .as_mut()
            .and_then(|r| r.downcast_mut::<M::Resources>())
        {
            std::mem::swap(&mut self.resources, r);
        }
        for (queue, scratch) in self.events.iter_mut().zip(self.keeping.events.iter_mut()) {
            std::mem::swap(queue, scratch);
        }
        #[cfg(feature = "transform")]
        state.hierarchy.save_into(&mut self.hierarchy);
        self.cursors.copy_from_slice(&state.cursors);
        // A second epoch for what comes after the load: a write after it is newer than
        // everything the load restored, so loading this state again copies only that.
        let after = self.next_epoch();
        for (mine, &saved) in self.last_run.iter_mut().zip(&state.last_run) {
            *mine = after | tick(saved);
        }
        self.locations.set_tick(after | tick(state.tick));
        old_sets
    }

    /// The stamp at which store `s` was made (0 for a declared store).
    fn store_born(&self, s: usize) -> u64 {
        s.checked_sub(self.declared())
            .map_or(0, |d| self.dynamic.born(d))
    }

    /// Starts a new epoch for a load; returns its stamp bits. When the epochs run out, the
    /// world becomes a new instance (states saved from it load whole once) and its records
    /// drop their epoch bits.
    fn next_epoch(&mut self) -> u64 {
        let epoch = self.keeping.epoch.get_mut();
        if *epoch >= EPOCH_LIMIT {
            *epoch = 0;
            self.keeping.instance = INSTANCES.fetch_add(1, Ordering::Relaxed);
            for store in self.stores.iter_mut() {
                store.clear_epochs();
            }
            self.dynamic.clear_epochs();
        }
        let epoch = self.keeping.epoch.get_mut();
        *epoch += 1;
        *epoch << TICK_BITS
    }
}

/// Values of one component type held apart during a load: no_rollback values carried
/// between rows, or defaults made before the commit. Those never moved out are dropped with
/// the buffer.
struct ValueBuffer {
    buf: crate::storage::Column,
    len: usize,
    moved: Vec<bool>,
    /// The next value [`ValueBuffer::move_next`] hands out.
    next: usize,
}

impl ValueBuffer {
    fn new(ty: &'static crate::storage::ColumnType) -> Self {
        ValueBuffer {
            buf: crate::storage::Column::new(ty),
            len: 0,
            moved: Vec::new(),
            next: 0,
        }
    }

    /// Fills the empty buffer with `count` defaults: all or nothing.
    ///
    /// # Safety
    /// `default` is the default function of the buffer's type.
    unsafe fn fill(&mut self, default: crate::state::ops::DefaultFn, count: usize) {
        debug_assert_eq!(self.len, 0);
        self.buf.reserve(0, count);
        // SAFETY: room for `count` values, contiguous (the caller guarantees the type).
        unsafe { default(self.buf.base(), self.buf.elem_size(), count) };
        self.len = count;
        self.moved = vec![false; count];
    }

    /// Takes the value at `src`; returns its position.
    ///
    /// # Safety
    /// `src` holds an initialised value of the buffer's type that its place gives up.
    unsafe fn push(&mut self, src: *const u8) -> usize {
        self.buf.reserve(self.len, 1);
        // SAFETY: room for one more; the value moves in.
        unsafe { crate::storage::copy_bytes(src, self.buf.ptr_at(self.len), self.buf.elem_size()) };
        self.moved.push(false);
        self.len += 1;
        self.len - 1
    }

    /// Moves value `k` out to `dst`.
    ///
    /// # Safety
    /// `dst` has room for a value of the buffer's type; `k` was not moved out before.
    unsafe fn move_out(&mut self, k: usize, dst: *mut u8) {
        debug_assert!(!self.moved[k]);
        // SAFETY: value `k` is held (the caller) and moves out once.
        unsafe { crate::storage::copy_bytes(self.buf.ptr_at(k), dst, self.buf.elem_size()) };
        self.moved[k] = true;
    }

    /// Moves the next value not handed out yet to `dst`.
    ///
    /// # Safety
    /// As [`ValueBuffer::move_out`]; the buffer holds another value.
    unsafe fn move_next(&mut self, dst: *mut u8) {
        let k = self.next;
        self.next += 1;
        // SAFETY: as the caller guarantees.
        unsafe { self.move_out(k, dst) };
    }
}

impl Drop for ValueBuffer {
    fn drop(&mut self) {
        let Some(drop) = self.buf.ty().drop_slice else {
            return;
        };
        for k in (0..self.len).filter(|&k| !self.moved[k]) {
            // SAFETY: value `k` is held and was not moved out: dropped once.
            unsafe { drop(self.buf.ptr_at(k), 1) };
        }
    }
}

impl Carry {
    /// Takes the value at `ptr` (of slot `p`, on entity `e`).
    ///
    /// # Safety
    /// `ptr` holds an initialised value of `p`'s type that its place gives up.
    unsafe fn take(&mut self, e: Entity, p: &SlotPlan, ptr: *mut u8) {
        let buffer = self
            .buffers
            .entry(p.component)
            .or_insert_with(|| ValueBuffer::new(p.ty));
        // SAFETY: as the caller guarantees.
        let at = unsafe { buffer.push(ptr) };
        self.index.insert((e, p.component), at);
    }

    /// Moves the value carried for (`e`, `p`'s component) to `dst`; false when there is none.
    ///
    /// # Safety
    /// `dst` has room for a value of `p`'s type.
    unsafe fn put(&mut self, e: Entity, p: &SlotPlan, dst: *mut u8) -> bool {
        let Some(at) = self.index.remove(&(e, p.component)) else {
            return false;
        };
        let buffer = self
            .buffers
            .get_mut(&p.component)
            .expect("a buffer per component taken");
        // SAFETY: the value at `at` was taken and not moved out (its key was still there).
        unsafe { buffer.move_out(at, dst) };
        true
    }
}

/// Saves and loads of the hand-written model's worlds (every value copied as bytes), checked
/// value by value; small enough for Miri.
#[cfg(test)]
mod tests {
    use super::{EPOCH_LIMIT, TICK_BITS};
    use crate::entity::Entity;
    use crate::state::{StateError, WorldState};
    use crate::test_model::{world, JustA, Model, A, AB, B, S};
    use crate::World;

    /// Entities with their stores and values, the checksum (which hashes the clock), the bytes
    /// allocated, and what change and add filters answer.
    type Snapshot = (
        Vec<(Entity, &'static str, Option<A>, Option<B>, Option<S>)>,
        u64,
        usize,
        Vec<Vec<Entity>>,
    );

    /// What `changed` and `added` filters of each component answer for every mark from 0 to
    /// the world's clock (in query order: rows of equal answers are equal worlds' answers).
    fn filter_answers(w: &World<Model>) -> Vec<Vec<Entity>> {
        use crate::query::{Added, Changed};
        let mut answers = Vec::new();
        for since in 0..=crate::storage::tick(w.locations.tick()) {
            answers.push(w.query_changed::<Entity, Changed<A>>(since).collect());
            answers.push(w.query_changed::<Entity, Changed<B>>(since).collect());
            answers.push(w.query_changed::<Entity, Changed<S>>(since).collect());
            answers.push(w.query_changed::<Entity, Added<A>>(since).collect());
            answers.push(w.query_changed::<Entity, Added<B>>(since).collect());
            answers.push(w.query_changed::<Entity, Added<S>>(since).collect());
        }
        answers
    }

    /// Everything a test can observe of a world: its entities in iteration order with their
    /// stores and values, its checksum (covering its clock, which `change_tick` would move on)
    /// and its statistics' allocated bytes.
    fn snapshot(w: &World<Model>) -> Snapshot {
        let rows = w
            .entities()
            .map(|e| {
                (
                    e,
                    w.signature_name_of(e).unwrap(),
                    w.get::<A>(e).copied(),
                    w.get::<B>(e).copied(),
                    w.get::<S>(e).copied(),
                )
            })
            .collect();
        (
            rows,
            w.checksum(),
            w.stats().stores.iter().map(|s| s.allocated_bytes).sum(),
            filter_answers(w),
        )
    }

    /// A small deterministic generator.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// One random operation on the world.
    fn step(w: &mut World<Model>, rng: &mut Rng, live: &mut Vec<Entity>) {
        let pick = |rng: &mut Rng, live: &[Entity]| live.get(rng.below(live.len().max(1))).copied();
        match rng.below(9) {
            0 | 1 => live.push(w.spawn(JustA(A(rng.below(100) as u32)))),
            2 => live.push(w.spawn(AB(A(1), B(rng.below(100) as u32)))),
            3 => {
                if let Some(e) = pick(rng, live) {
                    w.despawn(e);
                    live.retain(|&x| x != e);
                }
            }
            4 => {
                if let Some(e) = pick(rng, live) {
                    let _ = w.insert(e, B(7));
                }
            }
            5 => {
                if let Some(e) = pick(rng, live) {
                    let _ = w.remove::<B>(e);
                    let _ = w.insert(e, S(rng.below(9) as u32));
                }
            }
            6 => {
                if let Some(e) = pick(rng, live) {
                    if let Some(a) = w.get_mut::<A>(e) {
                        a.0 += 1;
                    }
                }
            }
            7 => {
                // A pass over B: stamps every row that holds one.
                for b in w.query_mut::<&mut B>().unwrap() {
                    b.0 += 1;
                }
            }
            _ => {
                w.locations.advance();
            }
        }
    }

    #[test]
    fn a_load_restores_ids_values_order_and_the_next_spawn() {
        let (mut w, es) = world();
        let mut state = WorldState::new();
        w.save_state(&mut state);
        let checksum = state.checksum().unwrap();
        assert_eq!(state.checksum(), Some(checksum));
        assert_eq!(checksum, w.checksum());
        let before = snapshot(&w);
        let next = w.spawn(JustA(A(9)));
        assert!(w.despawn(es[1]));
        w.insert(es[0], S(4)).unwrap();
        w.get_mut::<A>(es[3]).unwrap().0 = 50;
        assert_ne!(w.checksum(), checksum);
        w.load_state(&state).unwrap();
        assert_eq!(snapshot(&w), before);
        assert_eq!(w.checksum(), checksum);
        assert_eq!(w.check_invariants(), Ok(()));
        assert!(!w.is_alive(next));
        assert_eq!(
            w.spawn(JustA(A(9))),
            next,
            "the id the first timeline's spawn got"
        );
    }

    /// Saves and loads into reused states, incremental when they can be, agree with full
    /// saves into fresh states and with the world at every step.
    #[test]
    fn incremental_saves_and_loads_agree_with_full_ones() {
        let steps = if cfg!(miri) { 60 } else { 2_000 };
        let (mut w, mut live) = world();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut ring: Vec<WorldState> = (0..3).map(|_| WorldState::new()).collect();
        let mut saved: Vec<Option<(u64, Vec<Entity>, _)>> = vec![None, None, None];
        for _ in 0..steps {
            step(&mut w, &mut rng, &mut live);
            let k = rng.below(3);
            match rng.below(6) {
                0 => {
                    w.save_state(&mut ring[k]);
                    let c = ring[k].checksum().unwrap();
                    let mut fresh = WorldState::new();
                    w.save_state(&mut fresh);
                    assert_eq!(
                        fresh.checksum(),
                        Some(c),
                        "incremental and full saves hash alike"
                    );
                    assert_eq!(c, w.checksum());
                    saved[k] = Some((c, live.clone(), snapshot(&w)));
                }
                1 => {
                    if let Some((c, l, snap)) = &saved[k] {
                        // A world that shares nothing with the state loads it whole (the
                        // saved locations copied at once).
                        let mut other = World::<Model>::new();
                        other.load_state(&ring[k]).unwrap();
                        assert_eq!(other.check_invariants(), Ok(()));
                        assert_eq!((other.checksum(), &snapshot(&other).0), (*c, &snap.0));
                        w.load_state(&ring[k]).unwrap();
                        assert_eq!(w.checksum(), *c);
                        assert_eq!(&snapshot(&w), snap);
                        assert_eq!(w.check_invariants(), Ok(()));
                        live = l.clone();
                    }
                }
                _ => {}
            }
        }
    }

    /// A load restores what `changed` and `added` filters answer, over several chunks (pass
    /// stamps, row, cell and add records), and an incremental save after a load copies what
    /// changed since.
    #[test]
    fn a_load_restores_what_change_and_add_filters_answer() {
        let (n, steps): (usize, usize) = if cfg!(miri) { (300, 40) } else { (700, 400) };
        let mut w = World::<Model>::new();
        let es: Vec<Entity> = (0..n as u32).map(|i| w.spawn(JustA(A(i)))).collect();
        w.locations.advance();
        for &e in &es[..n / 2] {
            w.insert(e, B(1)).unwrap();
        }
        w.locations.advance();
        w.get_mut::<A>(es[n - 10]).unwrap().0 = 1;
        w.insert(es[5], S(2)).unwrap();
        w.locations.advance();
        let mut state = WorldState::new();
        w.save_state(&mut state);
        let saved = snapshot(&w);
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut live = es.clone();
        for _ in 0..steps {
            step(&mut w, &mut rng, &mut live);
        }
        assert_ne!(snapshot(&w).3, saved.3, "another timeline's answers");
        w.load_state(&state).unwrap();
        assert_eq!(snapshot(&w), saved);
        // Saves into a reused state copy only what changed since its last save.
        let mut reused = WorldState::new();
        w.save_state(&mut reused);
        let mut live = es.clone();
        for _ in 0..steps {
            step(&mut w, &mut rng, &mut live);
        }
        w.save_state(&mut reused);
        let at_save = snapshot(&w);
        let mut full = WorldState::new();
        w.save_state(&mut full);
        assert_eq!(full.checksum(), reused.checksum(), "as a full save");
        for _ in 0..steps / 4 {
            step(&mut w, &mut rng, &mut live);
        }
        w.load_state(&reused).unwrap();
        assert_eq!(snapshot(&w), at_save);
        w.load_state(&state).unwrap();
        assert_eq!(snapshot(&w), saved);
    }

    #[test]
    fn a_state_that_holds_no_complete_save_is_refused_and_changes_nothing() {
        let (mut w, _) = world();
        let before = w.checksum();
        assert_eq!(w.load_state(&WorldState::new()), Err(StateError::Empty));
        let mut state = WorldState::new();
        w.save_state(&mut state);
        state.complete = false;
        assert_eq!(w.load_state(&state), Err(StateError::Incomplete));
        assert_eq!(w.checksum(), before);
        assert_eq!(state.checksum(), None);
    }

    /// A state saved by another build of the same world type (its layout fingerprint differs)
    /// is refused, naming both models, and the world is unchanged.
    #[test]
    fn a_state_of_another_build_is_refused_and_changes_nothing() {
        let (mut w, es) = world();
        let mut state = WorldState::new();
        w.save_state(&mut state);
        w.despawn(es[3]);
        let before = snapshot(&w);
        if let Some(origin) = &mut state.origin {
            origin.fingerprint ^= 1;
        }
        let err = w.load_state(&state).unwrap_err();
        assert!(matches!(err, StateError::OtherWorld { .. }), "{err}");
        assert_eq!(snapshot(&w), before);
        assert!(!w.is_alive(es[3]));
        assert_eq!(w.check_invariants(), Ok(()));
    }

    /// When its epochs run out, a world becomes a new instance: states saved before load
    /// whole, and saves and loads go on agreeing.
    #[test]
    fn epochs_running_out_make_earlier_states_load_whole() {
        let (mut w, es) = world();
        let mut a = WorldState::new();
        w.save_state(&mut a);
        let first = a.checksum().unwrap();
        w.get_mut::<A>(es[0]).unwrap().0 = 77;
        let mut b = WorldState::new();
        w.save_state(&mut b);
        let second = b.checksum().unwrap();
        *w.keeping.epoch.get_mut() = EPOCH_LIMIT;
        let instance = w.keeping.instance;
        w.load_state(&a).unwrap();
        assert_ne!(w.keeping.instance, instance);
        assert_eq!(
            *w.keeping.epoch.get_mut(),
            2,
            "one epoch for what the load restored, one after"
        );
        assert_eq!(w.locations.tick() >> TICK_BITS, 2);
        assert_eq!(w.checksum(), first);
        w.load_state(&b).unwrap();
        assert_eq!((w.checksum(), w.get::<A>(es[0])), (second, Some(&A(77))));
        w.load_state(&a).unwrap();
        assert_eq!(w.checksum(), first);
        w.save_state(&mut b);
        assert_eq!(b.checksum(), Some(first));
    }

    /// A state's clone is the same state: it loads into the world it came from, whose
    /// checksum is the original's.
    #[test]
    fn a_cloned_state_loads_like_the_original() {
        let (mut w, es) = world();
        let mut state = WorldState::new();
        w.save_state(&mut state);
        let c = state.checksum().unwrap();
        let copy = state.clone();
        drop(state);
        w.despawn(es[2]);
        w.load_state(&copy).unwrap();
        assert_eq!(w.checksum(), c);
        assert!(w.is_alive(es[2]));
    }

    /// What a load plans to copy: after a load, loading the same state again restores only the
    /// chunks written since, and a state saved right after the load finds nothing to copy.
    #[test]
    fn loads_copy_only_the_chunks_written_since() {
        let mut w = World::<Model>::new();
        let es: Vec<Entity> = (0..2_000).map(|i| w.spawn(JustA(A(i)))).collect();
        let mut state = WorldState::new();
        w.save_state(&mut state);
        let rows = |w: &World<Model>, s: &WorldState| {
            let plan = w.stores[0].load_plan(&s.stores[0], Some(s.reference));
            let structural: usize = plan.structural.iter().map(|r| r.len()).sum();
            (
                structural,
                plan.columns[0].iter().map(|r| r.len()).sum::<usize>(),
            )
        };
        assert_eq!(rows(&w, &state), (0, 0), "nothing written since the save");
        w.get_mut::<A>(es[1_000]).unwrap().0 = 7;
        assert_eq!(rows(&w, &state), (0, 256), "one chunk of one column");
        w.load_state(&state).unwrap();
        assert_eq!(rows(&w, &state), (0, 256), "the chunk the load restored");
        let mut after = WorldState::new();
        w.save_state(&mut after);
        w.save_state(&mut after);
        assert_eq!(rows(&w, &after), (0, 0), "restored before that save");
        w.load_state(&state).unwrap();
        w.get_mut::<A>(es[10]).unwrap().0 = 8;
        assert_eq!(
            rows(&w, &after),
            (0, 512),
            "the chunks the second load restored and the write"
        );
        assert!(w.despawn(es[1_999]));
        assert_eq!(rows(&w, &after).0, 208, "the shortened last chunk, whole");
    }
}
