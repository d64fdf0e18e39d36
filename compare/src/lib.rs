//! # sigecs beside its peers
//!
//! The ecs_bench_suite workloads written for sigecs, hecs, bevy_ecs, legion, shipyard, specs,
//! sparsey, gecs and zero_ecs, each the way its documentation recommends, and for hand-written
//! floors: one `Vec` per field ([`floor_vecs`], the floor every ratio is taken to), one `Vec` of
//! row structs ([`floor_rows`]) and, for frag_iter, one `Vec` per component set
//! ([`floor_vecs::FragIterPerSet`]). sigecs has three more rows: `sigecs_batch` (add_remove
//! through `insert_batch` and `remove_batch`), `sigecs_dynamic` (add_remove through a dynamic
//! store, a component set no signature declares) and `sigecs_sparse` (add_remove and
//! frag_iter with the component stored sparsely, `#[component(sparse)]`).
//! One workload is not from ecs_bench_suite: save_restore, a world's state saved and restored
//! for rollback, which only sigecs, hecs, bevy_ecs and `floor_vecs` run.
//!
//! Every implementation of a workload is a type implementing [`Workload`]: `new` builds the
//! data (not timed), `run` is one timed iteration, `observe` reads the results back through the
//! library's own queries. `tests/consistency.rs` checks that every implementation observes the
//! same values after the same number of runs, so a query that silently matches nothing fails
//! there instead of producing a fast-looking number. `benches/compare.rs` times them, one
//! criterion group per workload; `src/bin/report.rs` turns criterion's estimates into
//! `results.md` and `results.png`.

// zero_ecs' `ecs_world!` expands one nested attribute macro per entity type: frag_iter's 26
// exceed the default limit of 128.
#![recursion_limit = "256"]

pub mod data;

pub mod bevy_impl;
pub mod floor_rows;
pub mod floor_vecs;
pub mod gecs_impl;
pub mod hecs_impl;
pub mod legion_impl;
pub mod shipyard_impl;
pub mod sigecs_impl;
pub mod sigecs_rollback;
pub mod sparsey_impl;
pub mod specs_impl;
pub mod zero_ecs_impl;

/// What an implementation reads back from its world: named values (entity counts, sums).
pub type Observation = Vec<(&'static str, f64)>;

/// One implementation of one workload.
pub trait Workload {
    /// Builds the data: `n` is the workload's size (see [`WORKLOADS`]). Not timed.
    fn new(n: usize) -> Self;
    /// One timed iteration.
    fn run(&mut self);
    /// Reads the results through the library's own queries.
    fn observe(&mut self) -> Observation;
}

/// add_remove in two halves, so that the consistency test can observe the world in between.
pub trait AddRemoveSteps: Workload {
    /// Adds a `B(i)` to the `i`-th entity, for every entity (`sigecs_dynamic`: an `Extra(i)`).
    fn add(&mut self);
    /// Removes the `B` of every entity again.
    fn remove(&mut self);
}

/// save_restore in steps, so that the consistency test can change the world between a save and
/// the restore that must undo the change.
pub trait SaveRestoreSteps: Workload {
    /// Saves the state of the world (every entity's values) the way the library's users do.
    fn save(&mut self);
    /// A frame after the save: [`data::state_change`] on every entity.
    fn change(&mut self);
    /// Restores the last save.
    fn restore(&mut self);
}

/// A workload as the report shows it: criterion group, size, what it measures.
pub struct WorkloadInfo {
    /// The criterion group name.
    pub group: &'static str,
    /// The `n` passed to [`Workload::new`].
    pub n: usize,
    /// Whether the workload is timed on one thread (the bench runs inside a one-thread rayon
    /// pool) or with every library's default parallelism.
    pub parallel: bool,
    /// One line for the results table.
    pub what: &'static str,
}

/// The workloads, in report order.
pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        group: "simple_insert",
        n: 10_000,
        parallel: false,
        what: "new world, then 10,000 entities of Transform (Mat4) + Position + Rotation + Velocity (Vec3)",
    },
    WorkloadInfo {
        group: "simple_iter_10k",
        n: 10_000,
        parallel: false,
        what: "10,000 of those entities: position += velocity",
    },
    WorkloadInfo {
        group: "simple_iter_1m",
        n: 1_000_000,
        parallel: false,
        what: "1,000,000 of those entities: position += velocity",
    },
    WorkloadInfo {
        group: "frag_iter",
        n: 20,
        parallel: false,
        what: "26 component sets (Data + one letter A..Z) × 20 entities: double every Data (f32)",
    },
    WorkloadInfo {
        group: "heavy_compute",
        n: 1_000,
        parallel: true,
        what: "1,000 entities: invert the Mat4 101 times and transform the position, in parallel",
    },
    WorkloadInfo {
        group: "schedule",
        n: 10_000,
        parallel: true,
        what: "10,000 each of (A,B), (A,B,C), (A,B,C,D), (A,B,C,E): 3 systems swap A-B, C-D, C-E, through each library's scheduler",
    },
    WorkloadInfo {
        group: "add_remove",
        n: 10_000,
        parallel: false,
        what: "10,000 entities of A: add a B to each, then remove it from each",
    },
    WorkloadInfo {
        group: "save_restore",
        n: 10_000,
        parallel: false,
        what: "10,000 entities of Transform (Mat4) + Position + Rotation + Velocity (Vec3), 1 MB of values: save the whole state, then restore it (one round trip, everything copied both ways)",
    },
];

/// The implementations, in report order; `floor_vecs` is the floor ratios are taken to.
/// `floor_per_set` runs frag_iter only, `sigecs_batch` and `sigecs_dynamic` add_remove only, `sigecs_sparse`
/// add_remove and frag_iter only, `gecs` and `zero_ecs` everything but add_remove (and
/// save_restore) (see [`NOTES`]).
pub const IMPLS: &[&str] = &[
    "floor_vecs",
    "floor_rows",
    "floor_per_set",
    "sigecs",
    "sigecs_batch",
    "sigecs_dynamic",
    "sigecs_sparse",
    "hecs",
    "bevy_ecs",
    "legion",
    "shipyard",
    "specs",
    "sparsey",
    "gecs",
    "zero_ecs",
];

/// The name ratios are taken to.
pub const FLOOR: &str = "floor_vecs";

/// What the report says about an implementation, for one workload (`Some`) or for all
/// (`None`): how it runs the workload where that is not the library's plain recommended way,
/// or why it does not run it.
pub struct Note {
    /// The implementation.
    pub implementation: &'static str,
    /// The workload the note is about; `None`: every workload.
    pub workload: Option<&'static str>,
    /// Whether the implementation runs the workload at all (a table cell says "n/a" if not).
    pub runs: bool,
    /// One line for the report.
    pub text: &'static str,
}

/// Notes on implementations: which workloads they leave out and how they express the others.
pub const NOTES: &[Note] = &[
    Note {
        implementation: "floor_vecs",
        workload: Some("frag_iter"),
        runs: true,
        text: "one `Vec` of all 520 `Data` values, doubled in one loop: the physical floor",
    },
    Note {
        implementation: "floor_per_set",
        workload: Some("frag_iter"),
        runs: true,
        text: "26 `Vec`s of 20 `Data` values (one per component set), a loop over each in blocks of 4 values: what an archetype design must at least do",
    },
    Note {
        implementation: "floor_per_set",
        workload: None,
        runs: false,
        text: "a frag_iter floor only",
    },
    Note {
        implementation: "sigecs_batch",
        workload: Some("add_remove"),
        runs: true,
        text: "the same moves as `sigecs`, through `insert_batch` (the 10,000 `(entity, B)` pairs) and `remove_batch` (into a reused `Vec`): a run of entities of one signature moves in one call, the row's body in a loop",
    },
    Note {
        implementation: "sigecs_batch",
        workload: None,
        runs: false,
        text: "an add_remove variant only (the other workloads have no structural change)",
    },
    Note {
        implementation: "sigecs_dynamic",
        workload: Some("add_remove"),
        runs: true,
        text: "inserts and removes the fixture's `Extra` instead of `B`: no signature declares {A, Extra}, so every entity moves to and from a dynamic store",
    },
    Note {
        implementation: "sigecs_dynamic",
        workload: None,
        runs: false,
        text: "an add_remove variant only (the other workloads have no structural change)",
    },
    Note {
        implementation: "sigecs_sparse",
        workload: Some("add_remove"),
        runs: true,
        text: "inserts and removes the fixture's `SparseB`, a `#[component(sparse)]` copy of `B`: set and cleared in its sparse set, no row moves",
    },
    Note {
        implementation: "sigecs_sparse",
        workload: Some("frag_iter"),
        runs: true,
        text: "`Data` is a `#[component(sparse)]` (fixture `frag_iter_sparse`; the 26 signatures hold only their letter): the generated `double`, whose components are all sparse, walks its set's 520 packed values",
    },
    Note {
        implementation: "sigecs_sparse",
        workload: None,
        runs: false,
        text: "an add_remove and frag_iter variant only (sparse storage changes only those workloads' layout)",
    },
    Note {
        implementation: "floor_vecs",
        workload: Some("save_restore"),
        runs: true,
        text: "`extend_from_slice` of each field's `Vec` into a reused buffer, `copy_from_slice` back: a memcpy of the live bytes",
    },
    Note {
        implementation: "sigecs",
        workload: Some("save_restore"),
        runs: true,
        text: "`save_state` into a reused `WorldState`, `load_state` (a world built with `Builder::rollback(true)`): entities, ids, change records (each row's adds among them) and resources; no checksum (a state hashes itself only when asked, and the peers hash nothing). A save into a state last saved from the same world copies only the chunks written since, so the benchmark keeps two identical worlds and moves the state from one to the other: every save and every load copies everything, as after a frame that wrote every row",
    },
    Note {
        implementation: "hecs",
        workload: Some("save_restore"),
        runs: true,
        text: "per archetype, each component's column (`Archetype::get::<&T>()`) `extend_from_slice`d into a reused `Vec`, `clone_from_slice`d back through `get::<&mut T>()`: values only; a frame that spawned or despawned would need the archetypes rebuilt (`spawn_column_batch_at`, hecs' cloning example), and the entity allocator cannot be saved",
    },
    Note {
        implementation: "bevy_ecs",
        workload: Some("save_restore"),
        runs: true,
        text: "as bevy_ggrs' `CloneStrategy` snapshots: per component type, a new `HashMap` from each entity's `Rollback` id to a clone of its value; restored through a `(Entity, &Rollback, Option<&mut C>)` query, looking each entity up",
    },
    Note {
        implementation: "floor_rows",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "legion",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "shipyard",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "specs",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "sparsey",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "hecs",
        workload: Some("schedule"),
        runs: true,
        text: "hecs has no scheduler: three prepared queries one after another",
    },
    Note {
        implementation: "sparsey",
        workload: Some("schedule"),
        runs: true,
        text: "sparsey 0.13 has no scheduler: three queries one after another",
    },
    Note {
        implementation: "specs",
        workload: Some("simple_insert"),
        runs: true,
        text: "specs has no bulk spawn: `create_entity` per entity",
    },
    Note {
        implementation: "gecs",
        workload: Some("add_remove"),
        runs: false,
        text: "not possible: gecs archetypes are declared at compile time and components cannot be added to or removed from an entity at runtime (`ecs_world!` docs, gecs 0.3.0); the only way to change an entity's component set is `destroy` and `create` in another archetype, which makes a new entity with a new handle",
    },
    Note {
        implementation: "gecs",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "gecs",
        workload: Some("simple_insert"),
        runs: true,
        text: "gecs has no bulk spawn: `create` per entity, into a world made with `with_capacity(10_000)`",
    },
    Note {
        implementation: "gecs",
        workload: Some("heavy_compute"),
        runs: true,
        text: "gecs has no parallel query: rayon over the archetype's `Transform` and `Position` slices (`get_all_slices_mut`)",
    },
    Note {
        implementation: "gecs",
        workload: Some("schedule"),
        runs: true,
        text: "gecs has no scheduler: three `ecs_iter!` queries one after another",
    },
    Note {
        implementation: "zero_ecs",
        workload: Some("add_remove"),
        runs: false,
        text: "not possible: an entity is an instance of one `#[entity]` struct, fixed at compile time; zero_ecs 0.3.4 cannot add or remove a component (its author: it never will, zero_ecs issue #8), and `destroy` returns nothing to re-create the entity from",
    },
    Note {
        implementation: "zero_ecs",
        workload: Some("save_restore"),
        runs: false,
        text: "not measured: save_restore compares sigecs with hecs, bevy_ecs and the floor",
    },
    Note {
        implementation: "zero_ecs",
        workload: Some("simple_insert"),
        runs: true,
        text: "zero_ecs has no bulk spawn and no reserve: `create` per entity",
    },
    Note {
        implementation: "zero_ecs",
        workload: Some("schedule"),
        runs: true,
        text: "zero_ecs has no scheduler: three `#[system_for_each]` systems called one after another",
    },
];

/// Whether `implementation` runs `workload` (see [`NOTES`]).
pub fn runs(implementation: &str, workload: &str) -> bool {
    let note = |w: Option<&str>| {
        NOTES
            .iter()
            .find(|n| n.implementation == implementation && n.workload == w)
    };
    note(Some(workload))
        .or_else(|| note(None))
        .is_none_or(|n| n.runs)
}

/// Calls `$m!(name, path::Type)` for every implementation of workload type `$ty`, in
/// [`IMPLS`] order: every library and floor, plus `floor_per_set` and `sigecs_sparse` for
/// `FragIter`, `sigecs_batch`, `sigecs_dynamic` and `sigecs_sparse` for `AddRemove`, less `gecs` and
/// `zero_ecs` for `AddRemove`; only `floor_vecs`, `sigecs`, `hecs` and `bevy_ecs` for
/// `SaveRestore`.
#[macro_export]
macro_rules! for_each_impl {
    ($m:ident, SaveRestore) => {
        $m!("floor_vecs", $crate::floor_vecs::SaveRestore);
        $m!("sigecs", $crate::sigecs_impl::SaveRestore);
        $m!("hecs", $crate::hecs_impl::SaveRestore);
        $m!("bevy_ecs", $crate::bevy_impl::SaveRestore);
    };
    ($m:ident, $ty:ident) => {
        $m!("floor_vecs", $crate::floor_vecs::$ty);
        $m!("floor_rows", $crate::floor_rows::$ty);
        $crate::for_each_impl!(@per_set $m, $ty);
        $m!("sigecs", $crate::sigecs_impl::$ty);
        $crate::for_each_impl!(@dynamic $m, $ty);
        $m!("hecs", $crate::hecs_impl::$ty);
        $m!("bevy_ecs", $crate::bevy_impl::$ty);
        $m!("legion", $crate::legion_impl::$ty);
        $m!("shipyard", $crate::shipyard_impl::$ty);
        $m!("specs", $crate::specs_impl::$ty);
        $m!("sparsey", $crate::sparsey_impl::$ty);
        $crate::for_each_impl!(@generated $m, $ty);
    };
    (@per_set $m:ident, FragIter) => {
        $m!("floor_per_set", $crate::floor_vecs::FragIterPerSet);
    };
    (@per_set $m:ident, $ty:ident) => {};
    (@dynamic $m:ident, AddRemove) => {
        $m!("sigecs_batch", $crate::sigecs_impl::AddRemoveBatch);
        $m!("sigecs_dynamic", $crate::sigecs_impl::AddRemoveDynamic);
        $m!("sigecs_sparse", $crate::sigecs_impl::AddRemoveSparse);
    };
    (@dynamic $m:ident, FragIter) => {
        $m!("sigecs_sparse", $crate::sigecs_impl::FragIterSparse);
    };
    (@dynamic $m:ident, $ty:ident) => {};
    (@generated $m:ident, AddRemove) => {};
    (@generated $m:ident, $ty:ident) => {
        $m!("gecs", $crate::gecs_impl::$ty);
        $m!("zero_ecs", $crate::zero_ecs_impl::$ty);
    };
}

/// A rayon pool of one thread: sequential workloads are timed inside it, so that no library
/// (sigecs splits big stores across rayon by default) parallelizes where the others do not.
pub fn one_thread_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread rayon pool")
}

/// Sums `f` over `items` as `f64`, counting them: `(count, sum)`.
pub fn count_sum<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> f64) -> (f64, f64) {
    let mut count = 0.0;
    let mut sum = 0.0;
    for item in items {
        count += 1.0;
        sum += f(item);
    }
    (count, sum)
}
