//! Structure-of-arrays component managers, in the classic data-oriented layout.
//!
//! A component manager owns every instance of one component type and stores each field in its
//! own column, so a loop that touches two fields streams through two arrays and nothing else.
//!
//! # Design
//!
//! - **A column per field.** `SoaBuffer` holds the entity column and one column per field,
//!   each its own allocation: the type-erased column of the world's stores
//!   (`storage/column.rs`), so growth, alignment and dropping are written once for both. The
//!   buffer keeps the length and grows every column together (the classic SoA manager's
//!   `allocate`, by `realloc`). Bitsquid's managers put all columns in one block instead; the
//!   layout does not change iteration (both hand out slices), only growth, where one block is
//!   the costlier: filling a manager of `(f32, [f32; 3], [f32; 3], [f32; 3])` with 1,000,000
//!   instances from empty and destroying half costs 368.0M instructions with a column per
//!   field (0.9M of them growing) against 396.7M in one block (17.1M growing), by callgrind
//!   over `benches/instructions.rs`'s `soa_churn` and `soa_churn_presized`.
//! - **Type-erased runtime, thin typed layer.** The buffer knows each column only by its
//!   `ColumnInfo` (element layout and drop function). `SoaStore<C, L>` adds the typed view:
//!   `C` is a tuple of field types (up to 16 fields; sealed trait `Columns`) and `L` the
//!   entity → instance `Lookup`. All `unsafe` code of the module lives in these two types and
//!   in the sealed `Columns` implementations for tuples. The managers `#[derive(SoaManager)]`
//!   generates wrap a store and add named, safe accessors; they contain no `unsafe`.
//! - **Lookup chosen at declaration** (`#[soa(lookup = "hash"|"dense")]`). `HashLookup` (the
//!   default, the classic hash index) keeps an `FxHashMap<Entity, u32>`; `DenseLookup` keeps
//!   the classic per-entity-index array with a nil value, for components nearly every entity
//!   has. Both check the full entity, generation included: a stale id never finds the instance
//!   of the entity that now uses its slot.
//! - **Instances.** A manager's `lookup` returns `Option<Instance>` instead of the classic SoA manager's nil
//!   instance, so a missing component cannot be read by mistake. An [`Instance`] is a row index:
//!   like a `Vec` index it stays valid until the next `create`, `destroy`, `gc` or
//!   `flush_destroyed`, which may move rows. Accessors panic on an out-of-range instance (never
//!   undefined behaviour).
//! - **Destroy** is the classic SoA manager's swap-erase: the last row moves into the hole and its entity's
//!   lookup entry is updated.
//! - **Clean-up of dead entities**, two ways, as Bitsquid's managers do. Lazily, a manager's `gc`
//!   picks random rows (seeded xorshift, deterministic) and destroys those whose entity is dead
//!   until it meets four live ones in a row; `gc_all` is the exhaustive version.
//!   Immediately, a manager registers a hook with [`EntityManager::on_destroy`]. The hook must be
//!   `Send + Sync + 'static`, so it cannot borrow the manager; it pushes the entity onto a shared
//!   [`DestroyQueue`] (an `Arc<Mutex<Vec<Entity>>>`) that the manager drains in its
//!   `flush_destroyed`. This keeps ownership simple — the manager is not shared, no
//!   `Weak` or lock guards its data, and the hot loops never touch the mutex — at the price that
//!   the components go away when you flush, not inside `EntityManager::destroy`. If a field's
//!   `Drop` panics during a flush, the entities the flush had not reached stay queued for the next
//!   one.
//!
//! # Files
//!
//! One concept per file: `buffer.rs` (`ColumnInfo`, `SoaBuffer`), `columns.rs` (the
//! `Columns` tuples), `lookup.rs` (`Lookup`, `HashLookup`, `DenseLookup`), `instance.rs`
//! ([`Instance`], [`SoaError`]), `queue.rs` ([`DestroyQueue`]), `store.rs` (`SoaStore`),
//! `manager.rs` ([`SoaManager`] and the macro behind `#[derive(SoaManager)]`). Unit tests sit
//! beside the code they test; the model-based test of derived managers is
//! `ecs-core/tests/soa_oracle.rs`.
//!
//! # Safety
//!
//! Invariants the `unsafe` code relies on, established in `SoaBuffer::new` and kept by every
//! method:
//!
//! - Every column has room for at least `capacity` elements, at a pointer aligned for its
//!   element type (the column's own invariant).
//! - Rows `0..len` of every column are initialized; rows `len..capacity` are not.
//! - Column 0 holds [`Entity`]; the typed `SoaStore<C, _>` built its buffer from
//!   `C`'s column infos, so column `k + 1` holds field `k` of `C`.
//!
//! Dropping a row first moves it out of `0..len` and then runs the drop functions, so a
//! panicking `Drop` can leak the rest of that row's fields but never drops anything twice
//! (bevy #2860); the remaining columns are still dropped while unwinding, as for a tuple.
//!
//! # Example
//!
//! ```
//! use sigecs::entity::EntityManager;
//! use sigecs::SoaManager;
//!
//! #[derive(SoaManager, Clone, Copy)]
//! #[soa(manager = "PointMassManager")]
//! pub struct PointMass {
//!     pub mass: f32,
//!     pub position: [f32; 2],
//!     pub velocity: [f32; 2],
//! }
//!
//! let mut em = EntityManager::new();
//! let mut masses = PointMassManager::new();
//! let a = em.create().unwrap();
//! let b = em.create().unwrap();
//! let pm = |x: f32| PointMass { mass: 1.0, position: [x, 0.0], velocity: [0.0, -10.0] };
//! masses.create(a, pm(0.0)).unwrap();
//! masses.create(b, pm(5.0)).unwrap();
//! assert!(masses.create(a, pm(1.0)).is_err(), "one instance per entity");
//!
//! // One lookup, then as many field accesses as needed.
//! let i = masses.lookup(a).unwrap();
//! masses.set_mass(i, 2.0);
//! assert_eq!(*masses.mass(i), 2.0);
//!
//! // A loop over two fields streams through two columns.
//! let columns = masses.columns_mut();
//! for (p, v) in columns.position.iter_mut().zip(columns.velocity.iter()) {
//!     p[1] += v[1] * 0.5;
//! }
//! assert_eq!(masses.position(masses.lookup(b).unwrap())[1], -5.0);
//!
//! // Lazy clean-up: the component of a dead entity goes away in `gc`.
//! em.destroy(a);
//! assert!(masses.lookup(a).is_some(), "still there until collected");
//! assert_eq!(masses.gc_all(&em), 1);
//! assert!(masses.lookup(a).is_none());
//!
//! // Immediate clean-up: a destroy hook queues the entity; `flush_destroyed` removes it.
//! masses.register_destroy_hook(&mut em);
//! em.destroy(b);
//! assert_eq!(masses.flush_destroyed(), 1);
//! assert!(masses.is_empty());
//! ```
//!
//! A manager for any field set is one derive away (the generated code names `::sigecs`):
//!
//! ```
//! use sigecs::SoaManager;
//! use sigecs::entity::EntityManager;
//!
//! #[derive(SoaManager)]
//! #[soa(manager = "HealthManager", lookup = "dense")]
//! pub struct Health {
//!     pub hp: i32,
//!     pub name: String,
//! }
//!
//! let mut em = EntityManager::new();
//! let e = em.create().unwrap();
//! let mut health = HealthManager::new();
//! let i = health.create(e, Health { hp: 10, name: "orc".into() }).unwrap();
//! *health.hp_mut(i) -= 3;
//! assert_eq!(health.hp_column(), &[7]);
//! assert_eq!(health.name(i), "orc");
//! ```
//!
//! [`Entity`]: crate::entity::Entity
//! [`EntityManager::on_destroy`]: crate::entity::EntityManager::on_destroy

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod buffer;
mod columns;
mod instance;
mod lookup;
mod manager;
mod queue;
mod store;

// The type-erased buffer is the stores' machinery, named in `Columns`' hidden methods only.
pub(crate) use buffer::{ColumnInfo, SoaBuffer};
#[doc(hidden)]
pub use columns::Columns;
pub use instance::{Instance, SoaError};
#[doc(hidden)]
pub use lookup::{DenseLookup, HashLookup, Lookup};
pub use manager::SoaManager;
pub use queue::DestroyQueue;
#[doc(hidden)]
pub use store::SoaStore;
pub use store::MAX_INSTANCES;

#[doc(hidden)]
pub use crate::__soa_manager;

/// A test id: `index` with generation `generation`.
#[cfg(test)]
fn ent(index: u32, generation: crate::entity::Generation) -> crate::entity::Entity {
    crate::entity::Entity::new(index, generation)
}
