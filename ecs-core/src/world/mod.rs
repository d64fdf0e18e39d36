//! The world: one packed [`Store`] per declared signature, one per undeclared component set
//! that entities took (its dynamic stores), the [`EntityLocations`] that says where each entity
//! lives, and the resources. Generic over a generated [`WorldModel`]; the generated `World`
//! wraps `World<Model>` and adds one `run_<system>` method per system.
//!
//! # Two kinds of store
//!
//! - **Declared**: each `#[derive(Signature)]` gets a store whose layout, moves and system
//!   loops are generated with static types: the fast path.
//! - **Dynamic**: an entity whose component set no signature declares (an `insert`, `remove`,
//!   command or level led there) lives in the dynamic store of that exact set, made at run
//!   time from the same type-erased columns (see `dynamic.rs`). Systems, queries and every
//!   operation visit both kinds; [`World::undeclared`] lists the dynamic stores with the
//!   declarations that would move their entities to the fast path. A strict world
//!   (`Builder::undeclared(Undeclared::Error)`) has no dynamic store: such an operation is a
//!   [`WorldError::UndeclaredSignature`].
//!
//! # Invariants
//!
//! For every live, placed entity `e`: `table.locate(e) == Some(loc)`, and row `loc.row` of
//! store `loc.store` holds `e`. Every store is packed (rows `0..len` are initialised in every
//! column). Stale, dead and never-issued ids locate to `None` (see [`crate::entity`] for the
//! exact limits of generational ids). Every operation either completes or leaves the world as
//! it was; a panicking `Drop` of a component runs only after the world is consistent again.

mod batch;
mod commands;
mod dynamic;
mod erased;
mod error;
#[cfg(feature = "transform")]
mod hierarchy;
mod invariants;
#[doc(hidden)]
pub(crate) mod locations;
pub(crate) mod moves;
mod sparse;
mod spawn;
mod state;
mod structural;

pub use commands::CommandErrors;
pub use dynamic::UndeclaredSet;
pub use erased::{ComponentRows, ComponentValue, ComponentValues, PendingSpawn, RowRun};
pub(crate) use error::set_names;
pub use error::{Change, CommandFailure, WorldError};
pub(crate) use locations::{EntityLocations, Location};

use crate::entity::{Entity, EntityManager};
use crate::model::{ComponentOf, EventOf, ResourceOf, SignatureOf, Tables, WorldModel};
use crate::set::AnyComponentBits;
use crate::stats::{CacheStats, StoreStats, WorldStats};
use crate::storage::Store;
use std::fmt;
use std::marker::PhantomData;

/// Every entity of a world, its components, resources and events, and the systems to run on
/// them: the runtime behind the `World` a build script generates (which derefs to this type,
/// with `M` its [`WorldModel`]).
///
/// Entities live in packed stores, one per component set; a declared signature's store is
/// generated with static types, and any other set gets a dynamic store made at run time.
/// Through the world a game spawns and despawns entities, reads and writes their components,
/// inserts and removes components (which moves the entity to the store of its new set),
/// queries, owns its resources and runs its systems (`run_all`, `run_schedule` and
/// `run_<system>` on the generated type).
///
/// ```
/// # use sigecs_fixtures::readme::*;
/// let mut world = World::new();
/// let ball = world.spawn(Ball {
///     position: Position { x: 0.0, y: 0.0 },
///     velocity: Velocity { x: 2.0, y: 0.0 },
/// });
/// world.resource_mut::<Time>().dt = 0.5;
/// world.run_all().unwrap(); // `movement`: position += velocity * dt
/// assert_eq!(world.get::<Position>(ball), Some(&Position { x: 1.0, y: 0.0 }));
///
/// world.insert(ball, Frozen).unwrap(); // now in the `FrozenBall` store
/// world.run_all().unwrap(); // `movement` skips frozen entities
/// assert_eq!(world.get::<Position>(ball), Some(&Position { x: 1.0, y: 0.0 }));
/// assert!(world.despawn(ball));
/// assert!(!world.is_alive(ball));
/// ```
pub struct World<M: WorldModel> {
    /// `M::tables()`, kept so the hot paths do not ask the `OnceLock` each time.
    tables: &'static Tables<M::Set>,
    locations: EntityLocations,
    /// The declared stores (ids `0..M::stores().len()`), then the dynamic ones.
    stores: Vec<Store>,
    dynamic: dynamic::Dynamic<M::Set>,
    /// The values of `#[component(sparse)]` components, beside the stores.
    sparse: sparse::Sparse<M::Set>,
    resources: M::Resources,
    min_chunk: Option<usize>,
    /// Passes of systems that may spawn run on one thread, so that the ids their spawns get
    /// do not depend on the thread count (see [`World::set_deterministic`]).
    deterministic: bool,
    /// Time spent applying systems' commands, in all (see [`World::command_time`]).
    command_time: std::time::Duration,
    /// What each generated pass measured of its cost in this world, for its split decision.
    costs: Box<[crate::__private::PassCost]>,
    /// One queue per declared event type, by id.
    events: Box<[Box<dyn crate::events::AnyEvents>]>,
    /// Per event reader (a system's `&EventReader<E>`), the sequence number of the next event
    /// it has not read.
    cursors: Box<[u64]>,
    /// Per system, the change stamp of its last run (for its change filter).
    last_run: Box<[u64]>,
    /// The transform hierarchy of the world's entities (see `hierarchy.rs`).
    #[cfg(feature = "transform")]
    hierarchy: crate::transform::TransformManager,
    /// What world states need of the world that is not state: its identity, its epoch and
    /// reusable buffers (see `state.rs`).
    keeping: state::Keeping,
    _model: PhantomData<fn() -> M>,
}

impl<M: WorldModel> Default for World<M> {
    fn default() -> Self {
        Self::with_resources(M::Resources::default())
    }
}

impl<M: WorldModel> fmt::Debug for World<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("entities", &self.len())
            .field("stores", &self.stores.len())
            .finish_non_exhaustive()
    }
}

/// A read-only view of one signature's store.
#[derive(Clone, Copy)]
pub struct StoreRef<'w> {
    store: &'w Store,
}

impl<'w> StoreRef<'w> {
    /// The signature's name.
    pub fn name(&self) -> &'static str {
        self.store.info().name
    }
    /// Number of rows (entities).
    pub fn len(&self) -> usize {
        self.store.len()
    }
    /// True when the store holds no entity.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
    /// The entity of each row, in row order.
    pub fn entities(&self) -> &'w [Entity] {
        self.store.entities()
    }
}

impl<M: WorldModel> World<M> {
    /// An empty world whose resources have their `Default` values.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty world with the given resources.
    pub fn with_resources(resources: M::Resources) -> Self {
        World {
            tables: M::tables(),
            locations: EntityLocations::new(),
            stores: M::stores()
                .iter()
                .map(|s| Store::new(s, M::components(), M::STATES))
                .collect(),
            dynamic: Default::default(),
            sparse: sparse::Sparse::new::<M>(),
            resources,
            min_chunk: None,
            deterministic: true,
            command_time: std::time::Duration::ZERO,
            costs: vec![Default::default(); M::PASSES].into_boxed_slice(),
            events: M::events().iter().map(|e| (e.queue)()).collect(),
            cursors: vec![0; M::READERS].into_boxed_slice(),
            last_run: vec![0; M::systems().len()].into_boxed_slice(),
            #[cfg(feature = "transform")]
            hierarchy: Default::default(),
            keeping: state::Keeping::new(),
            _model: PhantomData,
        }
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.locations.len()
    }

    /// True when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// Is `entity` alive in this world? False for dead and stale ids (and see
    /// [`crate::entity`] on ids from another world).
    #[inline]
    pub fn is_alive(&self, entity: Entity) -> bool {
        self.locations.locate(entity).is_some()
    }

    /// The component `C` of `entity`; `None` when the entity is not alive or its signature has
    /// no `C`.
    #[inline]
    pub fn get<C: ComponentOf<M>>(&self, entity: Entity) -> Option<&C> {
        if C::SPARSE {
            return self.get_sparse(entity);
        }
        let loc = self.locations.locate(entity)?;
        let k = self.slot_index(loc.store, C::ID)?;
        let store = &self.stores[loc.store as usize];
        let ptr = store.slot_ptr(store.info().slots[k], loc.row());
        // SAFETY: the entity is live, so `loc.row` is below the store's length; by the
        // WorldModel contract the slot holds a `C` (C::ID is its component id), initialised and
        // aligned; `&self` excludes writers.
        Some(unsafe { &*ptr.cast::<C>() })
    }

    /// Mutable access to the component `C` of `entity` (see [`World::get`]).
    #[inline]
    pub fn get_mut<C: ComponentOf<M>>(&mut self, entity: Entity) -> Option<&mut C> {
        if C::SPARSE {
            return self.get_mut_sparse(entity);
        }
        let loc = self.locations.locate(entity)?;
        let k = self.slot_index(loc.store, C::ID)?;
        let stamp = self.locations.stamp();
        let store = &mut self.stores[loc.store as usize];
        let slot = store.info().slots[k];
        // Taken mutably: written, for change filters.
        store.mark_cell(k, loc.row(), stamp);
        let ptr = store.slot_ptr(slot, loc.row());
        // SAFETY: as in `get`; `&mut self` makes this the only reference.
        Some(unsafe { &mut *ptr.cast::<C>() })
    }

    /// The component set of `entity` (sparse components included), or `None` if it is not
    /// alive.
    pub fn signature_of(&self, entity: Entity) -> Option<M::ComponentSet> {
        self.set_of(entity)
            .map(<M::ComponentSet as bitflags::Flags>::from_bits_retain)
    }

    /// The ids of [`signature_of`](Self::signature_of)'s set.
    pub(crate) fn set_of(&self, entity: Entity) -> Option<M::Set> {
        let loc = self.locations.locate(entity)?;
        let mask = self.store_mask(loc.store as usize);
        if self.sparse.mask().is_empty() {
            return Some(mask);
        }
        Some(mask.union(self.sparse.of(entity)))
    }

    /// The name of `entity`'s signature, or of its undeclared component set (`A | B`), or
    /// `None` if it is not alive.
    pub fn signature_name_of(&self, entity: Entity) -> Option<&'static str> {
        self.locations
            .locate(entity)
            .map(|loc| self.stores[loc.store as usize].info().name)
    }

    /// Is `entity` in a store its model declares? `Some(false)` when it lives in a dynamic
    /// store (its set is undeclared: see [`World::undeclared`]), `None` if it is not alive.
    pub fn is_declared(&self, entity: Entity) -> Option<bool> {
        self.locations
            .locate(entity)
            .map(|loc| (loc.store as usize) < self.declared())
    }

    /// Index of component `c`'s slot in store `store`, if the store holds it: from the
    /// model's tables for a declared store, by rank for a dynamic one.
    #[inline]
    pub(crate) fn slot_index(&self, store: u32, c: u32) -> Option<usize> {
        if (store as usize) < self.declared() {
            self.tables.slot_index(store, c)
        } else {
            dynamic::dynamic_slot(self.store_mask(store as usize), c)
        }
    }

    /// The store of signature `S`.
    pub fn store<S: SignatureOf<M>>(&self) -> StoreRef<'_> {
        StoreRef {
            store: &self.stores[S::STORE as usize],
        }
    }

    /// The resource `R`.
    #[inline]
    pub fn resource<R: ResourceOf<M>>(&self) -> &R {
        R::get(&self.resources)
    }

    /// Mutable access to the resource `R`.
    #[inline]
    pub fn resource_mut<R: ResourceOf<M>>(&mut self) -> &mut R {
        R::get_mut(&mut self.resources)
    }

    /// Sends an event from outside the systems: readers of `E` see it from now on (see
    /// [`crate::events`] for how long it is kept).
    pub fn send_event<E: EventOf<M>>(&mut self, event: E) {
        crate::events::typed_mut::<E>(&mut self.events, E::ID).send(event);
    }

    /// The events of type `E` the world keeps (the current frame's and the previous one's),
    /// oldest first: what a reader that has read nothing would see.
    pub fn events<E: EventOf<M>>(&self) -> &crate::events::Events<E> {
        crate::events::typed::<E>(&self.events, E::ID)
    }

    /// Starts a frame for the events: the previous frame's are dropped (see
    /// [`crate::events`]). `run_all` and `run_schedule` call it first; call it between frames
    /// when running systems one by one. An event whose `Drop` panics stops nothing: every
    /// queue moves on and drops its old events, then the first panic continues.
    pub fn update_events(&mut self) {
        let mut panic = None;
        for queue in self.events.iter_mut() {
            let updated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.update()));
            if let Err(payload) = updated {
                match panic {
                    None => panic = Some(payload),
                    Some(_) => spawn::drop_quietly(payload),
                }
            }
        }
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }

    /// All resources.
    pub fn resources(&self) -> &M::Resources {
        &self.resources
    }

    /// All resources, mutable.
    pub fn resources_mut(&mut self) -> &mut M::Resources {
        &mut self.resources
    }

    /// Marks now on the world's change clock and returns the mark: a change filter given it
    /// ([`World::query_changed`]) reports exactly what is written from this call on, and
    /// nothing written before. The clock moves on (hence `&mut`); a `#[system(changed(C))]`
    /// keeps its own mark, its last run, so marking now takes nothing from what it sees.
    pub fn change_tick(&mut self) -> u64 {
        crate::storage::tick(self.locations.advance())
    }

    #[doc(hidden)]
    /// The entity manager, e.g. to check ids or count slots.
    pub fn entity_manager(&self) -> &EntityManager {
        self.locations.entities()
    }

    /// Every live entity, store by store in store id order, rows in order.
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.stores
            .iter()
            .flat_map(|s| s.entities().iter().copied())
    }

    /// Cache efficiency of every system over every declared store it visits (see
    /// [`CacheStats`]), in system order, then store order.
    pub fn cache_stats(&self) -> Vec<CacheStats> {
        let sizes = self.tables.sizes();
        let mut out = Vec::new();
        for (s, system) in M::systems().iter().enumerate().filter(|(_, s)| s.per_row) {
            let (required, _) = self.tables.system_sets(s);
            for &id in system.stores {
                let store = &self.stores[id as usize];
                let info = store.info();
                let mut columns: Vec<usize> = info
                    .slots
                    .iter()
                    .filter(|sl| required.contains(sl.component))
                    .filter(|sl| sizes[sl.component as usize] > 0)
                    .map(|sl| sl.column as usize)
                    .collect();
                columns.sort_unstable();
                columns.dedup();
                out.push(CacheStats {
                    system: system.name,
                    store: info.name,
                    rows: store.len(),
                    arrays: columns.len(),
                    loaded: columns.iter().map(|&c| info.columns[c].size).sum(),
                    used: info
                        .slots
                        .iter()
                        .filter(|sl| required.contains(sl.component))
                        .map(|sl| sizes[sl.component as usize])
                        .sum(),
                });
            }
        }
        out
    }

    /// Memory statistics of every store, in store id order: the declared ones, then the
    /// dynamic ones (see [`StoreStats::declared`]).
    pub fn stats(&self) -> WorldStats {
        let sizes = self.tables.sizes();
        let declared = self.declared();
        let of = |(id, s): (usize, &Store)| {
            let info = s.info();
            let row_bytes: usize = info
                .slots
                .iter()
                .map(|sl| sizes[sl.component as usize])
                .sum();
            let component_bytes = s.component_bytes();
            StoreStats {
                name: info.name,
                layout: info.layout,
                declared: id < declared,
                entities: s.len(),
                live_bytes: s.len() * row_bytes,
                component_bytes,
                allocated_bytes: component_bytes + s.entity_bytes(),
            }
        };
        WorldStats {
            stores: self.stores.iter().enumerate().map(of).collect(),
        }
    }

    #[doc(hidden)]
    /// Number of rows system `index` (declaration order) visits: the entities of its stores.
    pub fn system_rows(&self, index: usize) -> usize {
        let Some(system) = M::systems().get(index) else {
            return 0;
        };
        let dynamic = self
            .dynamic
            .matches()
            .get(index)
            .map_or(&[][..], |m| &m[..]);
        system
            .stores
            .iter()
            .chain(dynamic)
            .map(|&st| self.stores[st as usize].len())
            .sum()
    }

    /// Overrides every system's minimum rows per parallel chunk (`None`: each system's
    /// `#[system(min_chunk = N)]`, else [`crate::schedule::DEFAULT_MIN_CHUNK`]). Any value
    /// works: `Some(usize::MAX)` means "never split", `Some(0)` acts as 1.
    pub fn set_min_chunk(&mut self, min_chunk: Option<usize>) {
        self.min_chunk = min_chunk;
    }

    /// The override set by [`World::set_min_chunk`].
    pub fn min_chunk(&self) -> Option<usize> {
        self.min_chunk
    }

    /// Whether the world ends bit-identical, entity ids included, whatever the thread count
    /// (default: yes). Every command is applied in row order either way; what the thread count
    /// could change is which id a `Commands::spawn` returns, since jobs running side by side
    /// reserve ids in the order they reach them. A deterministic world runs the passes of
    /// systems that may spawn on one thread, so spawns reserve ids in row order, whatever
    /// [`World::set_min_chunk`] says. The build script reads each system's body: one whose
    /// `Commands` parameter is only ever the receiver of `despawn`, `insert`, `remove`, `send`,
    /// `set_parent`, `remove_parent`, `set_transform`, `len` or `is_empty` calls cannot spawn,
    /// and its pass still splits; any other use (a `spawn`, passing `commands` to a function)
    /// counts as spawning. `false` lets every pass split, for throughput, when no component
    /// keeps a spawned `Entity` whose value matters (lockstep and replays need determinism).
    pub fn set_deterministic(&mut self, deterministic: bool) {
        self.deterministic = deterministic;
    }

    /// The setting of [`World::set_deterministic`].
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    #[doc(hidden)]
    /// The time this world has spent applying its systems' commands, in all: after each pass
    /// that issued any, on the calling thread, one command after another. It is the part of a
    /// frame that no thread count speeds up, so profiles and Amdahl bounds count it apart from
    /// the passes (the main job's report does).
    pub fn command_time(&self) -> std::time::Duration {
        self.command_time
    }

    /// The name of component `id` (for messages).
    fn component_name(id: u32) -> &'static str {
        M::components()[id as usize].name
    }

    /// The stores, the resources and the entity manager at once, for generated system passes
    /// ([`crate::__private::pass`]).
    pub(crate) fn pass(&mut self) -> crate::__private::Pass<'_, M> {
        let tick = self.locations.advance();
        crate::__private::Pass {
            stores: crate::__private::StoresMut::new(&mut self.stores, tick),
            resources: &mut self.resources,
            events: crate::__private::EventQueues(&self.events),
            cursors: &mut self.cursors,
            tick,
            last_run: &mut self.last_run,
            sparse: self.sparse.pass_view(tick),
            run: crate::__private::PassRun {
                dynamic: crate::__private::DynamicStores::new(self.dynamic.matches()),
                entities: self.locations.entities(),
                min_chunk: self.min_chunk,
                deterministic: self.deterministic,
                costs: &mut self.costs,
                only: None,
            },
        }
    }

    /// Where a live entity is.
    #[inline]
    pub(crate) fn locate(&self, entity: Entity) -> Option<Location> {
        self.locations.locate(entity)
    }

    /// Where each event reader of the model stands in its queue.
    pub(crate) fn reader_cursors(&self) -> Box<[u64]> {
        self.cursors.clone()
    }

    /// Puts each event reader back where [`World::reader_cursors`] found it.
    pub(crate) fn set_reader_cursors(&mut self, cursors: &[u64]) {
        self.cursors.copy_from_slice(cursors);
    }

    /// The world has made a store for a component set no signature declares.
    #[inline]
    pub(crate) fn has_dynamic_stores(&self) -> bool {
        self.dynamic.len() > 0
    }

    /// Number of stores, declared and dynamic.
    #[inline]
    pub(crate) fn store_count(&self) -> usize {
        self.stores.len()
    }

    /// The runs of rows of store `store` in chunks where a component of `changed` changed
    /// or one of `added` was added after `since`.
    pub(crate) fn changed_rows(
        &self,
        store: usize,
        changed: M::Set,
        added: M::Set,
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        let watched: Vec<crate::storage::Watch> = [(changed, false), (added, true)]
            .into_iter()
            .flat_map(|(set, added)| {
                set.ids()
                    .filter_map(|c| self.slot_index(store as u32, c))
                    .map(move |slot| crate::storage::Watch { slot, added })
                    .collect::<Vec<_>>()
            })
            .collect();
        self.stores[store].changed(watched.iter().copied(), since)
    }

    /// The component set of store `store`.
    #[inline]
    pub(crate) fn store_mask(&self, store: usize) -> M::Set {
        match store.checked_sub(self.declared()) {
            None => self.tables.store_mask(store),
            Some(index) => self.dynamic.mask(index),
        }
    }

    /// The entity column of store `store`.
    #[inline]
    pub(crate) fn store_entities(&self, store: usize) -> &[Entity] {
        self.stores[store].entities()
    }

    /// Component `c`'s column in store `store` as (first value, stride), if the store holds
    /// it. The pointer is derived from the column's allocation without a reference to it. A
    /// `written` component is stamped for change filters (a mutable query may write every
    /// row).
    pub(crate) fn raw_column(
        &self,
        store: usize,
        c: u32,
        written: bool,
    ) -> Option<crate::storage::RawColumn> {
        let k = self.slot_index(store as u32, c)?;
        let s = &self.stores[store];
        let slot = s.info().slots[k];
        let column = &s.columns()[slot.column as usize];
        if written {
            s.mark_pass(k, self.locations.stamp());
        }
        Some(crate::storage::RawColumn {
            ptr: column.base().wrapping_add(slot.offset as usize),
            stride: column.ty().size,
        })
    }
}
