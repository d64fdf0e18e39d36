//! The contract with generated code, in one place: every item that exists only for the code
//! the build script and the derives write, and nothing a user calls. Not part of the public
//! API (hidden from the docs, may change without notice), but public, so every function here
//! is safe for any arguments or `unsafe` with its contract (`tests/public_api.rs` checks it).
//!
//! - **The model's tables** ([`ComponentInfo`], [`StoreInfo`], [`SystemInfo`], [`TypedMove`],
//!   [`EventInfo`], ..., defined in `model/tables.rs`) that a generated world describes itself
//!   with, and the store and entity-table types its moves name ([`Store`], [`EntityLocations`],
//!   [`Location`]).
//! - **A pass's scaffolding**, written once: [`pass`] borrows what a pass needs from the
//!   world; the pass's `Part` enum (declared with [`__pass!`](crate::__pass)) implements
//!   [`PassParts`], which says only what differs between passes (which stores it takes, and
//!   how it takes their columns); [`PassRun`] walks the declared and then the dynamic stores
//!   and runs the body inline or split into jobs (`schedule/parts.rs`, the pass runner).
//! - **Typed, checked access** to the columns of the stores a pass visits ([`StoresMut`],
//!   [`StoreColumns`]): every view is checked (column types, one mutable borrow per column) and
//!   no view can change a store's length or move a row. The one exception is
//!   [`StoresMut::trusted`], an `unsafe` promise by a generated pass that it takes each column
//!   as the type the model gives it, which drops the per-store type check.
//! - **The moves' shared half** ([`move_row`], [`RowMove`]), and running the passes from the
//!   world's tables ([`run_passes`], [`run_pass`]).
//! - [`FieldSink`], which `#[derive(Signature)]`'s `write_fields` writes the fields into.

/// Receives the component values of a signature, one call per field in declaration order
/// (`Signature::write_fields`, which `#[derive(Signature)]` writes).
pub trait FieldSink {
    /// Takes the next component value.
    fn put<C: crate::Component>(&mut self, value: C);
}

pub use crate::storage::CHUNK;

use crate::events::{typed, AnyEvents, Event, EventReader, Events};
use std::any::TypeId;
use std::fmt;

/// A declared event type, in the model's tables: its name, its type, and how to make its
/// queue.
#[derive(Debug)]
pub struct EventInfo {
    /// Its type name as declared.
    pub name: &'static str,
    /// Its `TypeId`.
    pub type_id: fn() -> TypeId,
    /// An empty queue of its type.
    pub(crate) queue: fn() -> Box<dyn AnyEvents>,
}

impl EventInfo {
    /// The entry of event type `E` named `name`.
    pub const fn of<E: Event>(name: &'static str) -> Self {
        EventInfo {
            name,
            type_id: TypeId::of::<E>,
            queue: || Box::new(Events::<E>::default()),
        }
    }
}

/// The world's event queues, as a generated pass reads them.
#[derive(Clone, Copy)]
pub struct EventQueues<'w>(pub(crate) &'w [Box<dyn AnyEvents>]);

impl fmt::Debug for EventQueues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EventQueues").field(&self.0.len()).finish()
    }
}

impl<'w> EventQueues<'w> {
    /// The events of type `E` (queue `id`) from `*cursor` on, and the cursor moved past
    /// them: a reading system's view, each event once.
    ///
    /// # Panics
    /// When queue `id` does not exist or is not of type `E`.
    pub fn read<E: Event>(&self, id: u32, cursor: &mut u64) -> EventReader<'w, E> {
        let queue = typed::<E>(self.0, id);
        let reader = queue.reader(*cursor);
        *cursor = queue.end();
        reader
    }
}

/// Hands `f` the rows of `part` that lie in `runs` (ascending, disjoint row ranges of the
/// part's store), one piece per run: how a change-filtered system visits only the chunks that
/// changed.
#[inline]
pub fn each_run<P: SplitRows>(part: P, runs: &[std::ops::Range<usize>], f: &mut impl FnMut(P)) {
    let mut rest = part;
    let mut at = 0;
    for run in runs {
        let (_, tail) = rest.split_at(run.start - at);
        let (piece, tail) = tail.split_at(run.end - run.start);
        f(piece);
        rest = tail;
        at = run.end;
    }
}
pub use crate::schedule::fields::{Fields, FieldsMut};
pub use crate::schedule::parts::{
    job_rows, plan, run_jobs, run_parts, run_parts_inline, Parts, PassCost, Pending, Plan,
    SplitRows, Timer, Weights,
};
pub use crate::schedule::rows_macro::{out_of_line, Columns, RowBlocks};
pub use crate::schedule::sparse::{SparseSets, SparseView};
pub use crate::schedule::Commands;

/// Runs a frame-level system's `body` (a system with no component or entity parameter) once,
/// with a command buffer reserving ids from `entities`; returns the commands it requested.
#[inline]
pub fn run_once<'e>(entities: &'e EntityManager, body: impl FnOnce(&mut Commands<'e>)) -> Pending {
    let mut commands = Commands::new(entities);
    body(&mut commands);
    Pending::of(commands)
}

// The tables a generated world describes itself with, and the types its moves name.
pub use crate::model::tables::{
    column_slots, column_types, sub_slice, ComponentInfo, CopyOp, Edge, MoveBatch, MoveFn, MoveRef,
    Slot, StoreInfo, SystemInfo, Tables, Transition, TypedMove, GAINED,
};
pub use crate::storage::{ColumnType, Store};
// World states: what an opted-in world's generated code names.
pub use crate::state::ops::{
    clone_saved, cloned, hash_value_bytes, hash_value_with, CloneNewFn, CloneOverFn,
    ComponentState, Copying, DefaultFn, EventState, HashFn, Restored, Saved, StateTables,
};
pub use crate::world::locations::{EntityLocations, Location};
pub(crate) use crate::world::moves::{erased_body, erased_move};
pub use crate::world::moves::{move_row, move_rows, RowMove};

use crate::entity::{Entity, EntityManager};
use crate::model::WorldModel;
use crate::storage::{column_base, field_index, Column, ColumnBase, Watch, HOT_COLUMNS};

/// A generated pass: one system's, or one stage's fused systems, over every store they
/// match; returns the commands its systems requested, which the runner applies.
pub type PassFn<M> = fn(&mut crate::World<M>) -> Pending;

/// Runs one pass and applies its commands; returns the commands that could not be applied.
#[inline]
pub fn run_one<M: WorldModel>(
    world: &mut crate::World<M>,
    pass: PassFn<M>,
) -> Vec<crate::WorldError> {
    let pending = pass(world);
    world.apply_commands(pending)
}

/// Runs a stage whose systems conflict, in an open world: `declared`, its pass over the
/// declared stores (each row through every system in run order), then when the world has
/// dynamic stores each of `groups`, the pass of a group of its systems that do not conflict
/// over the dynamic stores, in order. Returns their commands in that order, which is the
/// order the stage's systems gave them in (only the last group can have a system with
/// `Commands`, and a pass gives its declared stores' commands before its dynamic stores').
///
/// A pass takes each event reader's unseen events when it starts and moves its cursor past
/// them, so the group passes start from the readers' cursors as the stage found them: a
/// reader's rows in dynamic stores see the events its rows in declared stores saw (none is
/// sent during a stage: sends are commands).
pub fn run_groups<M: WorldModel>(
    world: &mut crate::World<M>,
    declared: PassFn<M>,
    groups: &[PassFn<M>],
) -> Pending {
    if !world.has_dynamic_stores() {
        return declared(world);
    }
    let cursors = world.reader_cursors();
    let mut pending = declared(world);
    world.set_reader_cursors(&cursors);
    for group in groups {
        pending.0.extend(group(world).0);
    }
    pending
}

/// Runs `passes` in order (every system, or every stage) as one frame: starts the frame for
/// the events, then runs each pass and applies its commands before the next runs; collects
/// the commands that could not be applied.
pub fn run_passes<M: WorldModel>(
    world: &mut crate::World<M>,
    passes: &[PassFn<M>],
) -> Vec<crate::WorldError> {
    world.update_events();
    let mut errors = Vec::new();
    for &pass in passes {
        errors.extend(run_one(world, pass));
    }
    errors
}

/// Runs pass `k` of `passes`: `Ok(false)` when there is none, `Err` with the commands that
/// could not be applied.
pub fn run_pass<M: WorldModel>(
    world: &mut crate::World<M>,
    passes: &[PassFn<M>],
    k: usize,
) -> Result<bool, crate::CommandErrors> {
    match passes.get(k) {
        Some(&pass) => crate::CommandErrors::into_result(run_one(world, pass)).map(|()| true),
        None => Ok(false),
    }
}

/// The end of a run of passes whose systems take no `Commands`: nothing can have failed.
#[inline]
pub fn no_commands(errors: Vec<crate::WorldError>) {
    debug_assert!(errors.is_empty(), "no command can fail without Commands");
}

/// What a generated pass borrows from `world` at once: its stores (as checked views), its
/// resources and its entity manager.
#[inline]
pub fn pass<M: WorldModel>(world: &mut crate::World<M>) -> Pass<'_, M> {
    world.pass()
}

/// What a generated pass borrows from the world at once. A pass reads its fields apart (its
/// body borrows the resources while [`Pass::run`] runs it).
pub struct Pass<'w, M: WorldModel> {
    /// The stores, handed out by id in ascending order.
    pub stores: StoresMut<'w>,
    /// The resources.
    pub resources: &'w mut M::Resources,
    /// The event queues, for readers.
    pub events: EventQueues<'w>,
    /// Each event reader's cursor, by reader index.
    pub cursors: &'w mut [u64],
    /// The change stamp of this pass (the world's clock, moved on for it): what its writes
    /// are stamped with, and what a change-filtered system records as its last run.
    pub tick: u64,
    /// Per system, the stamp of its last run, for its change filter.
    pub last_run: &'w mut [u64],
    /// The sparse components' values, for systems that take them.
    pub sparse: SparseSets<'w>,
    /// What running the pass's parts needs.
    pub run: PassRun<'w>,
}

/// What running a pass's parts borrows from the world: the dynamic stores, the entity manager
/// (for the commands' reservations), the world's split settings and its record of each pass's
/// cost.
pub struct PassRun<'w> {
    /// The dynamic stores each system visits.
    pub(crate) dynamic: DynamicStores<'w>,
    /// The entity manager, for [`Commands::spawn`]'s reservations.
    pub(crate) entities: &'w EntityManager,
    /// The world's `min_chunk` override.
    pub(crate) min_chunk: Option<usize>,
    /// The world wants ids independent of the thread count: a pass of systems with
    /// `Commands` runs on one thread.
    pub(crate) deterministic: bool,
    /// The world's record of each pass's cost, by pass index, for its split decision.
    pub(crate) costs: &'w mut [PassCost],
    /// The run is one system's alone ([`PassRun::only`]).
    pub(crate) only: Option<Only>,
}

/// One system of a fused stage, run alone through the stage's pass ([`PassRun::only`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Only {
    /// The system's place in the pass's [`PassParts::SYSTEMS`].
    position: usize,
    /// The index of the system's own record of costs (its system pass's index).
    cost: usize,
}

impl<'w> PassRun<'w> {
    /// Restricts the run to one system of a fused stage's pass: the one at `position` in the
    /// pass's [`PassParts::SYSTEMS`], whose split decision is recorded as pass `cost`'s (its
    /// own system pass's index). The pass then takes only that system's parts, declared
    /// ([`StoresMut::each_in`] with the pass's shapes' systems) and dynamic: so it takes,
    /// and stamps as changed, only the columns that system does. `None` runs every system.
    /// A pass of a large stage is a system's pass too this way, so a world compiles one pass
    /// for the stage and its systems rather than one for each.
    #[inline]
    pub fn only(mut self, only: Option<(usize, usize)>) -> Self {
        self.only = only.map(|(position, cost)| Only { position, cost });
        self
    }

    /// Runs `body` over the parts `P` of `stores` and of the dynamic stores, inline or split
    /// into jobs ([`run_parts`]), recording the cost of pass [`PassParts::PASS`]; a
    /// change-filtered pass visits the rows changed after `since`.
    ///
    /// # Panics
    /// When [`PassParts::PASS`] is not a pass of the world's model.
    #[inline]
    pub fn parts<P: PassParts<'w>>(
        self,
        stores: StoresMut<'w, true>,
        since: u64,
        body: &(impl Fn(P, &mut Commands<'_>) + Sync),
    ) -> Pending {
        // Spawns reserve ids in row order only on one thread: in a deterministic world a pass
        // that may spawn never splits (its other commands apply in row order on any thread
        // count).
        let world_min_chunk = self.world_min_chunk(P::SPAWNS);
        let cost = self.only.map_or(P::PASS, |only| only.cost);
        run_parts(
            PassStores::<P>::new(stores, self.dynamic, since, self.only),
            world_min_chunk,
            P::MIN_CHUNK,
            &mut self.costs[cost],
            self.entities,
            body,
        )
    }

    /// [`PassRun::parts`] on the calling thread ([`run_parts_inline`]): the pass of a system
    /// that writes a resource.
    #[inline]
    pub fn inline<P: PassParts<'w>>(
        self,
        stores: StoresMut<'w, true>,
        since: u64,
        body: &mut impl FnMut(P, &mut Commands<'_>),
    ) -> Pending {
        run_parts_inline(
            PassStores::<P>::new(stores, self.dynamic, since, self.only),
            self.entities,
            body,
        )
    }

    /// Runs `body` over `part`: the packed values of the sparse component a system walks (one
    /// whose components are all sparse, [`SparseSets::values`]) with their entities, inline
    /// or split into jobs as [`PassRun::parts`] runs a pass's stores, recording the cost of
    /// pass `pass`. `min_chunk` and `spawns` are the pass's ([`PassParts::MIN_CHUNK`],
    /// [`PassParts::SPAWNS`]).
    ///
    /// # Panics
    /// When `pass` is not a pass of the world's model.
    #[inline]
    pub fn walk<P: SplitRows>(
        self,
        pass: usize,
        min_chunk: usize,
        spawns: bool,
        part: P,
        body: &(impl Fn(P, &mut Commands<'_>) + Sync),
    ) -> Pending {
        let world_min_chunk = self.world_min_chunk(spawns);
        run_parts(
            [part],
            world_min_chunk,
            min_chunk,
            &mut self.costs[pass],
            self.entities,
            body,
        )
    }

    /// The world's `min_chunk` override for a pass, `Some(usize::MAX)` (never split) for one
    /// that may spawn in a deterministic world.
    fn world_min_chunk(&self, spawns: bool) -> Option<usize> {
        if spawns && self.deterministic {
            Some(usize::MAX)
        } else {
            self.min_chunk
        }
    }

    /// [`PassRun::walk`] on the calling thread: the walk of a system that writes a resource.
    #[inline]
    pub fn walk_inline<P: SplitRows>(
        self,
        part: P,
        body: &mut impl FnMut(P, &mut Commands<'_>),
    ) -> Pending {
        run_parts_inline([part], self.entities, body)
    }

    /// Runs a frame-level system's `body` once ([`run_once`]).
    #[inline]
    pub fn once(self, body: impl FnOnce(&mut Commands<'w>)) -> Pending {
        run_once(self.entities, body)
    }
}

/// The parts of one generated pass: the pass's `Part` enum (a variant per store shape)
/// implements it, and [`PassRun::parts`] walks them. What a pass says here is what differs
/// between passes: which it is, how its declared stores' columns are taken, and how a dynamic
/// store's are.
pub trait PassParts<'a>: SplitRows + Sized {
    /// The pass's index in the world's record of pass costs.
    const PASS: usize;
    /// The smallest `min_chunk` of its systems.
    const MIN_CHUNK: usize = crate::schedule::DEFAULT_MIN_CHUNK;
    /// One of its systems may spawn through its `Commands` (the generator's conservative
    /// reading of its body: anything but `despawn`, `insert`, `remove`, `send` and the
    /// hierarchy's calls counts): in a deterministic world it runs on one thread.
    const SPAWNS: bool = false;
    /// Its systems (indices in the model), whose dynamic stores it visits after its declared
    /// ones; empty in a strict world.
    const SYSTEMS: &'static [u32] = &[];
    /// For a filtered system (alone in its pass): the components whose changes or adds it
    /// watches, each as `id << 1 | added` (`id` its component id), so that it visits only the
    /// changed runs of its dynamic stores.
    const WATCHED: &'static [u32] = &[];
    /// The pass visits dynamic stores (its `SYSTEMS` are given). A constant, so that a pass
    /// that does not (or that is not change-filtered) never compiles the code for it: rustc
    /// leaves out what an `if` on a constant cannot reach.
    const DYNAMIC: bool = !Self::SYSTEMS.is_empty();
    /// The pass is filtered (its `WATCHED` are given); a constant for the same reason.
    const FILTERED: bool = !Self::WATCHED.is_empty();

    /// Rows of the pass's declared stores.
    fn rows(stores: &StoresMut<'a, true>) -> usize;

    /// Hands `f` the parts of the declared stores in ascending id order; a change-filtered
    /// pass visits only the rows changed after `since`.
    fn each(stores: &mut StoresMut<'a, true>, since: u64, f: &mut impl FnMut(Self));

    /// The part of the `k`th of [`PassParts::SYSTEMS`] in a dynamic store it visits, taken
    /// from the store's checked view.
    ///
    /// # Panics
    /// When `k` is not an index of [`PassParts::SYSTEMS`] (the default: a pass with none).
    #[inline]
    fn dynamic(k: usize, view: &mut StoreColumns<'a, false>) -> Self {
        let _ = view;
        unreachable!("a pass without dynamic stores took part {k} of one")
    }
}

/// The stores of a pass whose parts are `P`: its declared stores (trusted views), then the
/// dynamic stores its systems visit, for a change-filtered pass from its last run on.
struct PassStores<'a, P> {
    stores: StoresMut<'a, true>,
    dynamic: DynamicStores<'a>,
    since: u64,
    /// The systems whose dynamic stores it visits: all the pass's, or the one it runs alone.
    systems: &'static [u32],
    /// The place of the first of `systems` in the pass's.
    first: usize,
    _parts: std::marker::PhantomData<fn() -> P>,
}

impl<'a, P: PassParts<'a>> PassStores<'a, P> {
    /// A run of one system alone (`only`) visits its dynamic stores, if the pass visits
    /// dynamic stores at all (a strict world's passes list no systems for them), and its table
    /// entries; a place that is none of the pass's systems' visits nothing.
    #[inline]
    fn new(
        mut stores: StoresMut<'a, true>,
        dynamic: DynamicStores<'a>,
        since: u64,
        only: Option<Only>,
    ) -> Self {
        let (systems, first) = match only {
            Some(only) => {
                stores.only = Some(only.position);
                let one = P::SYSTEMS.get(only.position..=only.position);
                (one.unwrap_or(&[]), only.position)
            }
            None => (P::SYSTEMS, 0),
        };
        PassStores {
            stores,
            dynamic,
            since,
            systems,
            first,
            _parts: std::marker::PhantomData,
        }
    }
}

impl<'a, P: PassParts<'a>> Parts for PassStores<'a, P> {
    type Part = P;

    // Inline wherever the pass's code lands: across codegen units a call of its own was about
    // 3% of `frag_iter`.
    #[inline]
    fn rows(&self) -> usize {
        let declared = P::rows(&self.stores);
        if !P::DYNAMIC {
            return declared;
        }
        declared + self.dynamic.rows(&self.stores, self.systems)
    }

    #[inline]
    fn each(mut self, f: &mut impl FnMut(P)) {
        P::each(&mut self.stores, self.since, f);
        if !P::DYNAMIC {
            return;
        }
        if P::FILTERED {
            self.dynamic.each_changed(
                &mut self.stores,
                P::SYSTEMS[0],
                P::WATCHED,
                self.since,
                |view, runs| each_run(P::dynamic(0, view), runs, f),
            );
        } else {
            let first = self.first;
            self.dynamic
                .each(&mut self.stores, self.systems, &mut |view, k| {
                    f(P::dynamic(first + k, view))
                });
        }
    }
}

impl<'w> StoresMut<'w> {
    /// Views of `stores`, each handed out once, for a pass stamped `tick`.
    pub(crate) fn new(stores: &'w mut [Store], tick: u64) -> Self {
        StoresMut {
            len: stores.len(),
            ptr: stores.as_mut_ptr(),
            tick,
            next: 0,
            only: None,
            _borrow: std::marker::PhantomData,
        }
    }
}

/// The dynamic stores a pass's systems visit (see `world/dynamic.rs`): per system, in
/// declaration order, the ids of the dynamic stores whose component set matches it, ascending.
/// A generated pass counts their rows with [`DynamicStores::rows`] and takes their columns in
/// [`DynamicStores::each`], after its declared stores.
#[derive(Clone, Copy, Debug)]
pub struct DynamicStores<'w> {
    matches: &'w [Vec<u32>],
}

impl<'w> DynamicStores<'w> {
    /// The lists of `matches` (per system, its dynamic stores).
    pub(crate) fn new(matches: &'w [Vec<u32>]) -> Self {
        DynamicStores { matches }
    }

    /// The dynamic stores of system `s` (none for a system index out of range).
    #[inline]
    fn of(&self, s: u32) -> &'w [u32] {
        self.matches.get(s as usize).map_or(&[], |m| &m[..])
    }

    /// True when none of `systems` visits a dynamic store (the common case: no allocation).
    #[inline]
    fn none(&self, systems: &[u32]) -> bool {
        // A world that never made a dynamic store has no list at all: one test.
        self.matches.is_empty() || systems.iter().all(|&s| self.of(s).is_empty())
    }

    /// Rows of the dynamic stores any of `systems` visits, each store counted once.
    #[inline]
    pub fn rows<const TRUSTED: bool>(
        &self,
        stores: &StoresMut<'w, TRUSTED>,
        systems: &[u32],
    ) -> usize {
        if self.none(systems) {
            return 0;
        }
        let mut rows = 0;
        self.merge(systems, &mut |id, _, first| {
            if first {
                rows += stores.len_of(id);
            }
        });
        rows
    }

    /// Calls `f(id, k, first)` for every pair of a dynamic store `id` and a system
    /// `systems[k]` that visits it, in ascending store order, then in the order of `systems`;
    /// `first` is true for the first pair of each store.
    ///
    /// Not generic (`f` is a `dyn` closure): compiled once, not once per pass.
    fn merge(&self, systems: &[u32], f: &mut dyn FnMut(u32, usize, bool)) {
        let mut cursors: Vec<&[u32]> = systems.iter().map(|&s| self.of(s)).collect();
        while let Some(id) = cursors.iter().filter_map(|c| c.first().copied()).min() {
            let mut first = true;
            for (k, c) in cursors.iter_mut().enumerate() {
                if c.first() == Some(&id) {
                    f(id, k, first);
                    first = false;
                    *c = &c[1..];
                }
            }
        }
    }

    /// [`DynamicStores::each`] for a filtered system (alone in its pass): each dynamic store
    /// it visits with the runs of rows where one of `watched` (component ids, as
    /// `id << 1 | added`) changed or was added after `since`; a store with none is not taken.
    #[inline]
    pub fn each_changed<const TRUSTED: bool>(
        &self,
        stores: &mut StoresMut<'w, TRUSTED>,
        system: u32,
        watched: &[u32],
        since: u64,
        mut f: impl FnMut(&mut StoreColumns<'w, false>, &[std::ops::Range<usize>]),
    ) {
        for &id in self.of(system) {
            let runs = stores.changed_components(id, watched, since);
            if !runs.is_empty() {
                f(&mut stores.take_checked(id), &runs);
            }
        }
    }

    /// Takes every dynamic store any of `systems` visits, in ascending id order, after every
    /// declared store the pass takes, and calls `f(view, k)` once for each system `systems[k]`
    /// that visits it, with the store's (checked) view.
    #[inline]
    pub fn each<const TRUSTED: bool>(
        &self,
        stores: &mut StoresMut<'w, TRUSTED>,
        systems: &[u32],
        f: &mut dyn FnMut(&mut StoreColumns<'w, false>, usize),
    ) {
        // The common case (no dynamic store) inline, without a call.
        if !self.none(systems) {
            self.each_merged(stores, systems, f);
        }
    }

    /// [`DynamicStores::each`] when some dynamic store is visited.
    #[inline(never)]
    fn each_merged<const TRUSTED: bool>(
        &self,
        stores: &mut StoresMut<'w, TRUSTED>,
        systems: &[u32],
        f: &mut dyn FnMut(&mut StoreColumns<'w, false>, usize),
    ) {
        let mut view = None;
        self.merge(systems, &mut |id, k, first| {
            if first {
                view = Some(stores.take_checked(id));
            }
            if let Some(view) = view.as_mut() {
                f(view, k);
            }
        });
    }
}

/// The stores a pass visits, as a `static` table of numbers written by the generator: `1 + W + K`
/// numbers a store, in ascending store id order: the store's id, `W` numbers that only the pass
/// reads (the store's shape when the pass has several, then the indices of the columns the
/// shape takes) and, for a filtered pass, the `K` components it watches (as
/// [`StoresMut::changed`] numbers them). How a
/// pass over many stores reaches them ([`StoresMut::each_in`]): a few numbers a store instead
/// of a line of code.
pub struct StoreTable<const W: usize, const K: usize = 0>(pub &'static [usize]);

/// Hands out stores by id, each at most once, in ascending id order. Holds the pass's
/// exclusive borrow of the stores as a pointer, so handing one out is a bounds check and an
/// address (a pass over many small stores takes one per store).
///
/// `TRUSTED` views (from [`StoresMut::trusted`]) do not check a column's type when it is
/// taken: for a pass over many small stores that check was most of the cost of a store
/// (`frag_iter`: 26 stores of 20 rows, 1.3× the hand loop with it, 1.0–1.1× without).
pub struct StoresMut<'w, const TRUSTED: bool = false> {
    ptr: *mut Store,
    len: usize,
    /// The pass's change stamp, for the columns it takes mutably.
    tick: u64,
    /// Every id below this was handed out (or skipped) already.
    next: usize,
    /// The pass runs only its system at this place in its systems ([`PassRun::only`]): the
    /// entries of a [`StoreTable`] whose shape is another system's are skipped.
    only: Option<usize>,
    _borrow: std::marker::PhantomData<&'w mut [Store]>,
}

// SAFETY: a `StoresMut` stands for the `&'w mut [Store]` it was made from, which is `Send`
// and `Sync` (stores hold `Send + Sync` values); it adds no shared state.
unsafe impl<const TRUSTED: bool> Send for StoresMut<'_, TRUSTED> {}
// SAFETY: as above; `&StoresMut` only reads store lengths.
unsafe impl<const TRUSTED: bool> Sync for StoresMut<'_, TRUSTED> {}

impl<'w> StoresMut<'w> {
    /// The same stores, handed out as views that do not check column types.
    ///
    /// # Safety
    /// The caller (a generated pass over a world of its own model) takes stores with ids that
    /// ascend strictly and are below the number of stores (the trusted view does not check
    /// them); it takes every column, in every store it takes with [`StoresMut::take`], by its
    /// index and as its type in that store's
    /// [`StoreInfo::columns`](crate::model::StoreInfo::columns), and every field
    /// ([`StoreColumns::field`]) as its component's type. (The columns of stores taken with
    /// [`StoresMut::take_checked`] are checked whatever the view.)
    #[inline]
    pub unsafe fn trusted(self) -> StoresMut<'w, true> {
        StoresMut {
            ptr: self.ptr,
            len: self.len,
            tick: self.tick,
            next: self.next,
            only: self.only,
            _borrow: std::marker::PhantomData,
        }
    }
}

impl<'w, const TRUSTED: bool> StoresMut<'w, TRUSTED> {
    /// Rows of the stores `ids` together: what a pass over them runs on, counted before it
    /// takes any store.
    ///
    /// # Panics
    /// When a store was taken already, or an id is out of range.
    #[inline]
    pub fn rows(&self, ids: &[u32]) -> usize {
        assert_eq!(self.next, 0, "rows are counted before any store is taken");
        // SAFETY: the pass holds the exclusive borrow of all `len` stores and has handed none
        // out (`next` is 0), so a shared view of them aliases nothing for this `&self` call.
        let stores = unsafe { std::slice::from_raw_parts(self.ptr.cast_const(), self.len) };
        // One range check for all ids (a pass's ids are constants, so this folds to one
        // comparison) instead of one per store: 26 stores' checks were about 50 instructions
        // and 52 branches of `frag_iter`'s pass.
        let top = ids.iter().copied().max().map_or(0, |id| id as usize + 1);
        let Some(stores) = stores.get(..top) else {
            panic!("store id {} is out of range ({} stores)", top - 1, self.len);
        };
        ids.iter().map(|&id| stores[id as usize].len()).sum()
    }

    /// [`StoresMut::rows`] of the stores of a pass's [`StoreTable`] (of the entries a run of
    /// one system visits, see [`StoresMut::each_in`]).
    ///
    /// # Panics
    /// When a store was taken already, or an id is out of range.
    #[inline]
    pub fn table_rows<const W: usize, const K: usize>(
        &self,
        table: &StoreTable<W, K>,
        systems: &[u32],
    ) -> usize {
        assert_eq!(self.next, 0, "rows are counted before any store is taken");
        // SAFETY: as in `rows`: no store was handed out, so this shared view aliases nothing.
        let stores = unsafe { std::slice::from_raw_parts(self.ptr.cast_const(), self.len) };
        table
            .0
            .chunks_exact(1 + W + K)
            .filter(|entry| self.visits(systems, &entry[1..]))
            .map(|entry| stores[entry[0]].len())
            .sum()
    }

    /// Whether a run visits a table entry (its numbers after the store id): every entry,
    /// unless the run is one system's alone ([`PassRun::only`]); then the entries whose shape
    /// (their first number) is that system's in `systems` (each shape's system, by shape).
    #[inline]
    fn visits(&self, systems: &[u32], rest: &[usize]) -> bool {
        match self.only {
            None => true,
            Some(only) => rest
                .first()
                .and_then(|&shape| systems.get(shape))
                .is_some_and(|&s| s as usize == only),
        }
    }

    /// Takes each store of a pass's [`StoreTable`] in turn and hands `f` its columns and the
    /// rest of its entry (the part's shape, the column indices the shape takes): how a pass
    /// over many stores reaches them, with one loop instead of a line of code per store. A
    /// store may have several entries in a row (a part per system of a stage): they share one
    /// view, so no column is taken mutably twice or both mutably and shared. `systems` gives
    /// each shape's system (its place in the pass's systems) for a run of one system alone
    /// ([`PassRun::only`]), which visits only that system's entries.
    ///
    /// # Panics
    /// As [`StoresMut::take`], when the ids do not ascend or one is out of range; as
    /// [`StoreColumns::col_mut`] when two parts of a store take a column in conflicting ways.
    #[inline]
    pub fn each_in<const W: usize>(
        &mut self,
        table: &StoreTable<W>,
        systems: &[u32],
        mut f: impl FnMut(&mut StoreColumns<'w, TRUSTED>, &[usize; W]),
    ) {
        let mut view: Option<(usize, StoreColumns<'w, TRUSTED>)> = None;
        for entry in table.0.chunks_exact(1 + W) {
            let id = entry[0];
            let rest: &[usize; W] = entry[1..].try_into().expect("W numbers after the id");
            if !self.visits(systems, rest) {
                continue;
            }
            let columns = match &mut view {
                Some((taken, columns)) if *taken == id => columns,
                _ => &mut view.insert((id, self.take(id as u32))).1,
            };
            f(columns, rest);
        }
    }

    /// [`StoresMut::each_in`] for a filtered pass: `f` gets only the stores where one of
    /// the entry's `K` watched components changed (or was added) after `since`, with the runs of rows to visit
    /// ([`StoresMut::changed`]).
    #[inline]
    pub fn each_changed_in<const W: usize, const K: usize>(
        &mut self,
        table: &StoreTable<W, K>,
        since: u64,
        mut f: impl FnMut(StoreColumns<'w, TRUSTED>, &[usize; W], &[std::ops::Range<usize>]),
    ) {
        for entry in table.0.chunks_exact(1 + W + K) {
            let id = entry[0] as u32;
            let runs = self.changed(id, &entry[1 + W..], since);
            if !runs.is_empty() {
                let rest: &[usize; W] = entry[1..1 + W].try_into().expect("W numbers");
                f(self.take(id), rest, &runs);
            }
        }
    }

    /// Rows of store `id`, before any store is taken (0 for an id out of range).
    fn len_of(&self, id: u32) -> usize {
        assert_eq!(self.next, 0, "rows are counted before any store is taken");
        if (id as usize) < self.len {
            // SAFETY: in range; no store was handed out, so this shared read aliases nothing.
            unsafe { (*self.ptr.add(id as usize)).len() }
        } else {
            0
        }
    }

    /// The store `id`, handed out once.
    ///
    /// # Panics
    /// When `id` is not above every id taken before, or out of range.
    #[inline]
    fn store(&mut self, id: u32, trusted: bool) -> &'w Store {
        let id = id as usize;
        let ascending = id >= self.next && id < self.len;
        if trusted {
            // Promised to `StoresMut::trusted` by the view's maker: a pass over many small
            // stores spent about 9 instructions a store on this check (`frag_iter`).
            debug_assert!(ascending, "a trusted pass takes ascending ids in range");
        } else {
            assert!(
                ascending,
                "stores are taken once each, in ascending id order, in range"
            );
        }
        self.next = id + 1;
        // SAFETY: in range, and handed out once (ids ascend strictly: checked above, or
        // promised to `StoresMut::trusted` when `trusted`); the pass holds the
        // exclusive borrow of every store for 'w, and the views made of it cannot change the
        // store's length or columns, only the values in them (through the checked column
        // views).
        unsafe { &*self.ptr.add(id) }
    }

    /// The columns of store `id`.
    ///
    /// # Panics
    /// When `id` is not above every id taken before, or out of range (a trusted view leaves
    /// that check to its maker, see [`StoresMut::trusted`]).
    #[inline]
    pub fn take(&mut self, id: u32) -> StoreColumns<'w, TRUSTED> {
        StoreColumns::of(self.store(id, TRUSTED), self.tick)
    }

    /// The columns of store `id` as a view that checks every column's type (a dynamic store,
    /// whose layout no generated pass knows).
    ///
    /// # Panics
    /// As [`StoresMut::take`].
    #[inline]
    pub fn take_checked(&mut self, id: u32) -> StoreColumns<'w, false> {
        StoreColumns::of(self.store(id, false), self.tick)
    }

    /// [`StoresMut::changed`] for components by id, each watched as `id << 1 | added` (a
    /// dynamic store's slots are found from its description). A component the store does not
    /// hold is watched nowhere.
    fn changed_components(
        &self,
        id: u32,
        components: &[u32],
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        assert!((id as usize) < self.len, "store id in range");
        // SAFETY: in range; only the store's description is read.
        let slots = unsafe { (*self.ptr.add(id as usize)).info().slots };
        let watched: Vec<usize> = components
            .iter()
            .filter_map(|&w| {
                let k = slots.iter().position(|s| s.component == w >> 1)?;
                Some(k << 1 | (w & 1) as usize)
            })
            .collect();
        self.changed(id, &watched, since)
    }

    /// The runs of rows of store `id` (not yet taken) in chunks where any of `watched`
    /// changed or was added after `since`: what a filtered system visits. Each watched
    /// component is one number, `slot << 1` for its changes (`changed(C)`), `slot << 1 | 1`
    /// for its adds (`added(C)`), where `slot` is its place in the store's
    /// [`StoreInfo::slots`](crate::model::StoreInfo::slots).
    ///
    /// # Panics
    /// When `id` is out of range, a store was taken already, or a slot is out of range.
    pub fn changed(&self, id: u32, watched: &[usize], since: u64) -> Vec<std::ops::Range<usize>> {
        assert!(
            (id as usize) >= self.next && (id as usize) < self.len,
            "a store's changes are read before it is taken"
        );
        // SAFETY: in range and not handed out yet, so this shared read aliases nothing.
        let store = unsafe { &*self.ptr.add(id as usize) };
        let slots = store.info().slots.len();
        assert!(
            watched.iter().all(|&w| w >> 1 < slots),
            "a watched slot of store {id}"
        );
        store.changed(watched.iter().map(|&w| Watch::from_number(w)), since)
    }
}

/// The component of a borrow of a whole column in [`StoreColumns`]'s list of rare borrows.
const WHOLE: u32 = u32::MAX;

/// Typed slices of one store's columns, each column borrowed mutably at most once (or shared
/// any number of times), checked; the column's type is checked too unless the view is
/// `TRUSTED` (see [`StoresMut::trusted`]).
pub struct StoreColumns<'w, const TRUSTED: bool = false> {
    len: usize,
    entities: &'w [Entity],
    columns: &'w [Column],
    /// The store's copies of its first columns' data addresses ([`HOT_COLUMNS`]).
    bases: &'w [ColumnBase; HOT_COLUMNS],
    slots: &'w [Slot],
    /// Columns `0..128` borrowed mutably and shared, one bit each.
    taken_mut: u128,
    taken_ref: u128,
    /// Borrows rare enough for a list, as (column, component, mutably): whole columns from
    /// 128 on (a store of more than 128 components; component `WHOLE`), and fields of row
    /// structs ([`StoreColumns::field`]), whose columns' bits are set in both `taken_mut` and
    /// `taken_ref` so that the whole column cannot be taken as well. One list, so that a view
    /// is no larger to make and drop for them (`frag_iter` makes one per store).
    taken_rare: Vec<(usize, u32, bool)>,
    /// The pass's change stamp: a component taken mutably is stamped with it.
    tick: u64,
}

impl<'w, const TRUSTED: bool> StoreColumns<'w, TRUSTED> {
    fn of(store: &'w Store, tick: u64) -> Self {
        StoreColumns {
            len: store.len(),
            entities: store.entities(),
            columns: store.columns(),
            bases: store.bases(),
            slots: store.info().slots,
            taken_mut: 0,
            taken_ref: 0,
            taken_rare: Vec::new(),
            tick,
        }
    }

    /// The column holding component `c` alone, if the store has `c`: a `columns` store's slot
    /// of `c` (a column of `c`'s at offset 0).
    ///
    /// # Panics
    /// When `c` lives in a row struct (a `rows` store), which no caller takes this way.
    #[inline]
    fn column_of(&self, c: u32) -> Option<usize> {
        let slot = self.slots.iter().find(|s| s.component == c)?;
        assert_eq!(slot.offset, 0, "component {c} is not a column of its own");
        Some(slot.column as usize)
    }

    /// Component `c`'s column as a shared slice of `T`, in a store that holds it.
    ///
    /// # Panics
    /// When the store has no column of `c` alone, `T` is not its type, or it is borrowed
    /// mutably.
    #[inline]
    pub fn component<T: Sync + 'static>(&mut self, c: u32) -> &'w [T] {
        let k = self.column_of(c).expect("the store holds the component");
        self.col(k)
    }

    /// Component `c`'s column as a mutable slice of `T` (see [`StoreColumns::component`]).
    #[inline]
    pub fn component_mut<T: Send + 'static>(&mut self, c: u32) -> &'w mut [T] {
        let k = self.column_of(c).expect("the store holds the component");
        self.col_mut(k)
    }

    /// Component `c`'s column as a shared slice of `T`, or `None` when the store lacks `c`.
    #[inline]
    pub fn optional<T: Sync + 'static>(&mut self, c: u32) -> Option<&'w [T]> {
        self.column_of(c).map(|k| self.col(k))
    }

    /// Component `c`'s column as a mutable slice of `T`, or `None` when the store lacks `c`.
    #[inline]
    pub fn optional_mut<T: Send + 'static>(&mut self, c: u32) -> Option<&'w mut [T]> {
        self.column_of(c).map(|k| self.col_mut(k))
    }

    #[inline]
    fn column<T: 'static>(&self, k: usize) -> &'w Column {
        if TRUSTED {
            debug_assert!(
                self.columns.get(k).is_some_and(Column::is_type::<T>),
                "a trusted pass took column {k} as {}, which it is not",
                std::any::type_name::<T>()
            );
            // SAFETY: the column exists and holds `T`s (`StoresMut::trusted`'s contract).
            return unsafe { self.columns.get_unchecked(k) };
        }
        let c = &self.columns[k];
        assert!(
            c.is_type::<T>(),
            "column {k} is not a column of {}",
            std::any::type_name::<T>()
        );
        c
    }

    /// Records a borrow of column `k`.
    ///
    /// # Panics
    /// When it aliases an earlier one: a column borrowed mutably, or borrowed before when
    /// `mutable`.
    #[inline]
    fn claim(&mut self, k: usize, mutable: bool) {
        if k >= 128 {
            return self.claim_wide(k, mutable);
        }
        let bit = 1u128 << k;
        if mutable {
            assert!(
                (self.taken_mut | self.taken_ref) & bit == 0,
                "column {k} is borrowed twice"
            );
            self.taken_mut |= bit;
        } else {
            assert!(self.taken_mut & bit == 0, "column {k} is borrowed mutably");
            self.taken_ref |= bit;
        }
    }

    #[cold]
    fn claim_wide(&mut self, k: usize, mutable: bool) {
        for &(taken, _, taken_mutably) in &self.taken_rare {
            if taken == k {
                assert!(!taken_mutably, "column {k} is borrowed mutably");
                assert!(!mutable, "column {k} is borrowed twice");
            }
        }
        self.taken_rare.push((k, WHOLE, mutable));
    }

    /// Column `k` as a shared slice of `T`.
    ///
    /// # Panics
    /// When `T` is not the column's type or the column is borrowed mutably.
    #[inline]
    pub fn col<T: Sync + 'static>(&mut self, k: usize) -> &'w [T] {
        self.claim(k, false);
        // The column's type check (or, trusted, its debug check).
        self.column::<T>(k);
        // SAFETY: the column holds `len` initialised T (store invariant; the type checked by
        // `column`, or promised to `StoresMut::trusted` by a trusted view's maker); no
        // mutable slice of it was handed out (checked), and the store's `&'w mut` borrow held
        // by the pass excludes every other access.
        unsafe {
            std::slice::from_raw_parts(
                column_base(self.bases, self.columns, k).cast::<T>(),
                self.len,
            )
        }
    }

    /// Column `k` as a mutable slice of `T`.
    ///
    /// # Panics
    /// When `T` is not the column's type or the column is already borrowed.
    #[inline]
    pub fn col_mut<T: Send + 'static>(&mut self, k: usize) -> &'w mut [T] {
        self.claim(k, true);
        let c = self.column::<T>(k);
        // Every row of the column is the pass's to write: one stamp for all its chunks.
        c.mark_written(self.tick);
        // SAFETY: as in `col`; this is the only slice of the column (checked), and the data is
        // a separate allocation from the `Column` struct the shared borrow points at.
        unsafe {
            std::slice::from_raw_parts_mut(
                column_base(self.bases, self.columns, k).cast::<T>(),
                self.len,
            )
        }
    }

    /// Column `k` (of a `rows` store's row structs) as a mutable slice of `T`, of which the
    /// pass writes only the components `writes`: only those are stamped as changed, not the
    /// rest of the row struct.
    ///
    /// # Panics
    /// As [`StoreColumns::col_mut`], and when a component of `writes` is not in column `k`.
    #[inline]
    pub fn rows_mut<T: Send + 'static>(&mut self, k: usize, writes: &[u32]) -> &'w mut [T] {
        self.claim(k, true);
        let c = self.column::<T>(k);
        for &w in writes {
            let slot = self
                .slots
                .iter()
                .position(|s| s.component == w && s.column as usize == k)
                .expect("a written component of the column");
            c.mark_field(field_index(self.slots, slot), self.tick);
        }
        // SAFETY: as in `col_mut`.
        unsafe {
            std::slice::from_raw_parts_mut(
                column_base(self.bases, self.columns, k).cast::<T>(),
                self.len,
            )
        }
    }

    /// Records a borrow of component `c`'s field in the row structs of column `k`.
    ///
    /// # Panics
    /// When the whole column is borrowed, or the field aliases an earlier borrow of it.
    fn claim_field(&mut self, k: usize, c: u32, mutable: bool) {
        assert!(k < 128, "a row struct column is one of a store's first 128");
        let bit = 1u128 << k;
        let fielded = self.taken_rare.iter().any(|f| f.0 == k);
        assert!(
            fielded || (self.taken_mut | self.taken_ref) & bit == 0,
            "column {k} is borrowed whole"
        );
        for &(_, _, was_mutable) in self.taken_rare.iter().filter(|f| f.0 == k && f.1 == c) {
            assert!(!was_mutable, "component {c} is borrowed mutably");
            assert!(!mutable, "component {c} is borrowed twice");
        }
        self.taken_rare.push((k, c, mutable));
        self.taken_mut |= bit;
        self.taken_ref |= bit;
        if mutable {
            let here = |s: &Slot| s.component == c && s.column as usize == k;
            if let Some(slot) = self.slots.iter().position(here) {
                self.columns[k].mark_field(field_index(self.slots, slot), self.tick);
            }
        }
    }

    /// Borrows component `c`'s field in this store's row structs (`claim_field`): the field
    /// in the first row (wrapping arithmetic: never read when there are no rows) and the
    /// distance between rows. Checked to hold a `T` within each element, so no view
    /// reaches past a row.
    ///
    /// # Panics
    /// When the store has no slot of `c`, a `T` at its offset would not fit the column's
    /// elements or would be misaligned, or the borrow aliases an earlier one.
    fn take_field<T>(&mut self, c: u32, mutable: bool) -> (*mut T, usize) {
        let slot = self
            .slots
            .iter()
            .find(|s| s.component == c)
            .expect("the store holds the component");
        let (k, offset) = (slot.column as usize, slot.offset as usize);
        let column = &self.columns[k];
        assert!(
            offset + std::mem::size_of::<T>() <= column.elem_size()
                && offset % std::mem::align_of::<T>() == 0
                && column
                    .elem_align()
                    .is_multiple_of(std::mem::align_of::<T>()),
            "component {c} is not a {} field of column {k}",
            std::any::type_name::<T>()
        );
        let at = (
            column.base().wrapping_add(offset).cast::<T>(),
            column.elem_size(),
        );
        self.claim_field(k, c, mutable);
        at
    }

    /// The entity of each row.
    #[inline]
    pub fn entities(&self) -> &'w [Entity] {
        self.entities
    }
}

impl<'w> StoreColumns<'w, true> {
    /// Component `c`'s field in the row structs of a `rows` store, shared: a pass over many
    /// stores takes a `rows` store's components this way, so that the store is not a shape of
    /// its own (see [`Fields`]). Trusted views only: the slot gives the field's column and
    /// offset, and the view's maker promised that the field is a `T`
    /// ([`StoresMut::trusted`]).
    ///
    /// # Panics
    /// When the store does not hold `c`, a `T` does not fit its place, or the field or its
    /// whole column is borrowed mutably.
    #[inline]
    pub fn field<T: Sync + 'static>(&mut self, c: u32) -> Fields<'w, T> {
        let (first, stride) = self.take_field::<T>(c, false);
        // SAFETY: row `i`'s field is at `first + i × stride`: within the column's `len`
        // initialised elements, a `T` (the trusted view's promise), aligned (checked in
        // `take_field`, with the column's alignment); no mutable borrow of it was handed out
        // (checked), and the pass's exclusive borrow of the store excludes other access.
        unsafe { Fields::new(first, self.len, stride) }
    }

    /// Component `c`'s field in the row structs of a `rows` store, mutably (see
    /// [`StoreColumns::field`]).
    ///
    /// # Panics
    /// As [`StoreColumns::field`], or when the field was borrowed before.
    #[inline]
    pub fn field_mut<T: Send + 'static>(&mut self, c: u32) -> FieldsMut<'w, T> {
        let (first, stride) = self.take_field::<T>(c, true);
        // SAFETY: as in `field`; this is the only borrow of the field (checked), and distinct
        // components are distinct fields of the row struct, which never overlap.
        unsafe { FieldsMut::new(first, self.len, stride) }
    }
}

#[cfg(test)]
mod tests {
    use super::StoreColumns;
    use crate::test_model::{world, Model, A, B};
    use crate::World;

    #[test]
    fn checked_views_hand_out_each_column_as_its_type() {
        let (mut w, es) = world();
        let mut stores = super::pass(&mut w).stores;
        assert_eq!(stores.rows(&[0, 1]), 4);
        assert_eq!(stores.rows(&[1]), 2);
        let mut just_a = stores.take(0);
        assert_eq!(just_a.entities(), [es[0], es[2]]);
        let a: &mut [A] = just_a.col_mut(0);
        a[1].0 = 40;
        let mut ab = stores.take(1);
        // Shared slices of one column, any number of them, beside a mutable one of another.
        let (a1, a2): (&[A], &[A]) = (ab.col(0), ab.col(0));
        let b: &mut [B] = ab.col_mut(1);
        b[0].0 = 30;
        assert_eq!(a1.iter().map(|a| a.0).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(a1.as_ptr(), a2.as_ptr());
        let got = |w: &World<Model>, e| (w.get::<A>(e).map(|a| a.0), w.get::<B>(e).map(|b| b.0));
        assert_eq!(got(&w, es[2]), (Some(40), None));
        assert_eq!(got(&w, es[1]), (Some(2), Some(30)));
    }

    /// The panic message of `take` on a fresh checked view of store `id`, if it panics.
    fn refusal(id: u32, take: impl FnOnce(&mut StoreColumns<'_>)) -> Option<String> {
        let (mut w, _) = world();
        let mut stores = super::pass(&mut w).stores;
        let mut view = stores.take(id);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| take(&mut view)));
        panicked.err().map(|p| match p.downcast::<String>() {
            Ok(message) => *message,
            Err(p) => p
                .downcast::<&str>()
                .map_or_else(|_| String::new(), |m| m.to_string()),
        })
    }

    #[test]
    fn checked_views_refuse_wrong_columns_and_second_borrows() {
        let refused = |id, take: fn(&mut StoreColumns<'_>), expected: &str| {
            let message = refusal(id, take).expect("the view refuses");
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        };
        refused(
            1,
            |s| {
                s.col::<A>(1);
            },
            "column 1 is not a column of sigecs::test_model::A",
        );
        refused(
            0,
            |s| {
                s.col::<A>(1);
            },
            "index out of bounds",
        );
        refused(
            0,
            |s| {
                s.col_mut::<A>(0);
                s.col_mut::<A>(0);
            },
            "column 0 is borrowed twice",
        );
        refused(
            0,
            |s| {
                s.col::<A>(0);
                s.col_mut::<A>(0);
            },
            "column 0 is borrowed twice",
        );
        refused(
            1,
            |s| {
                s.col::<B>(1);
                s.col_mut::<B>(1);
            },
            "column 1 is borrowed twice",
        );
        refused(
            0,
            |s| {
                s.col_mut::<A>(0);
                s.col::<A>(0);
            },
            "column 0 is borrowed mutably",
        );
        // Shared borrows of one column, and a mutable borrow of each of two, are fine.
        let shared_twice = |s: &mut StoreColumns<'_>| {
            s.col::<A>(0);
            s.col::<A>(0);
        };
        let two_columns = |s: &mut StoreColumns<'_>| {
            s.col_mut::<A>(0);
            s.col_mut::<B>(1);
        };
        assert_eq!(refusal(1, shared_twice), None);
        assert_eq!(refusal(1, two_columns), None);
    }

    #[test]
    fn stores_are_taken_once_each_in_ascending_order() {
        let taking = |ids: &'static [u32]| {
            std::panic::catch_unwind(move || {
                let (mut w, _) = world();
                let mut stores = super::pass(&mut w).stores;
                for &id in ids {
                    stores.take(id);
                }
            })
            .is_ok()
        };
        assert!(taking(&[0, 1]));
        assert!(taking(&[1]));
        assert!(!taking(&[1, 0]));
        assert!(!taking(&[0, 0]));
        assert!(!taking(&[2]));
        // Rows are counted before any store is taken.
        let (mut w, _) = world();
        let mut stores = super::pass(&mut w).stores;
        stores.take(0);
        let counted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stores.rows(&[1])));
        assert!(counted.is_err());
    }

    #[test]
    fn rows_counts_any_ids_in_range_and_refuses_one_out_of_range() {
        let (mut w, _) = world();
        let stores = super::pass(&mut w).stores;
        assert_eq!(stores.rows(&[]), 0);
        // The single range check uses the largest id, wherever it stands.
        assert_eq!(stores.rows(&[1, 0]), 4);
        assert_eq!(stores.rows(&[1, 1]), 4);
        for ids in [&[2u32][..], &[0, 2], &[2, 0], &[u32::MAX]] {
            let counted =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stores.rows(ids)));
            let message = *counted
                .expect_err("out of range")
                .downcast::<String>()
                .unwrap();
            assert!(message.contains("out of range (2 stores)"), "{message}");
        }
    }

    #[test]
    fn trusted_views_hand_out_the_same_columns() {
        let (mut w, es) = world();
        // SAFETY: the columns are taken as their types in the test model's STORES.
        let mut stores = unsafe { super::pass(&mut w).stores.trusted() };
        assert_eq!(stores.rows(&[0, 1]), 4);
        let mut just_a = stores.take(0);
        assert_eq!(just_a.entities(), [es[0], es[2]]);
        let a: &mut [A] = just_a.col_mut(0);
        assert_eq!(a.iter().map(|a| a.0).collect::<Vec<_>>(), [1, 4]);
        a[0].0 = 10;
        let mut ab = stores.take(1);
        let b: &mut [B] = ab.col_mut(1);
        assert_eq!(b.iter().map(|b| b.0).collect::<Vec<_>>(), [3, 6]);
        b[1].0 = 60;
        assert_eq!(w.get::<A>(es[0]), Some(&A(10)));
        assert_eq!(w.get::<B>(es[3]), Some(&B(60)));
    }

    /// A trusted view still refuses a second mutable borrow: only the type check is dropped.
    #[test]
    #[should_panic(expected = "column 1 is borrowed twice")]
    fn a_trusted_view_still_checks_borrows() {
        let (mut w, _) = world();
        // SAFETY: the columns are taken as their types in the test model's STORES.
        let mut stores = unsafe { super::pass(&mut w).stores.trusted() };
        let mut ab = stores.take(1);
        let _: &mut [B] = ab.col_mut(1);
        let _: &mut [B] = ab.col_mut(1);
    }

    /// In debug builds a trusted view checks the type anyway, so a generator bug is caught
    /// by the tests (the assertion fires before any access).
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a trusted pass took column 1 as sigecs::test_model::A")]
    fn debug_builds_check_a_trusted_views_types() {
        let (mut w, _) = world();
        // SAFETY: not upheld on purpose; the debug assertion fires before the column is used.
        let mut stores = unsafe { super::pass(&mut w).stores.trusted() };
        let _: &[A] = stores.take(1).col(1);
    }
}
