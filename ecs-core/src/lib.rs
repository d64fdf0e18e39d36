//! # sigecs: the runtime
//!
//! sigecs generates its storage at build time: a build script (with `sigecs-build`) reads the
//! crate's `#[derive(Component)]`, `#[derive(Signature)]`, `#[derive(Resource)]` and `#[system]`
//! declarations and writes a `World` with one packed store per signature. The generated file
//! holds only what needs static types — the model's tables, the row structs of `rows`
//! signatures, and the system passes — and this crate holds everything else, once:
//!
//! - [`entity`]: generational 32-bit entity ids (22 index bits, 8 generation bits).
//! - [`world`]: [`World`], generic over a model: spawn, despawn, get, insert/remove moves,
//!   commands, statistics, invariants; and [`WorldError`].
//! - [`component`]: the traits the derives implement.
//! - [`events`]: events systems send through `Commands` and read with `&EventReader<E>`.
//! - [`query`]: run-time queries over the stores chosen by bitmask.
//! - [`schedule`]: parallel passes, [`Commands`], and the stage plan.
//! - [`stats`]: memory statistics and the memory-efficiency measure.
//! - [`state`]: world states: save, load and checksum a world's whole simulated state, for
//!   rollback networking (worlds that opt in with `Builder::rollback`).
//! - [`soa`]: classic structure-of-arrays component managers.
//! - `transform` (cargo feature `transform`): the transform hierarchy, with
//!   glam's matrices (glam is re-exported as `sigecs::glam`).
//!
//! Levels and prefabs (JSON compiled to verified binary blobs, spawned in batches) are the
//! crate `sigecs-level`, built on [`World::begin_spawn`] and [`World::components_of`]. Cargo
//! features `serde` and `bytemuck` give [`Entity`] the serde and `bytemuck::Pod` impls that
//! components holding entities need there.
//!
//! It also re-exports the derives and `#[system]` from `sigecs-derive`, so a user crate depends
//! on `sigecs` alone (plus `sigecs-build` as a build-dependency). What the generated file and
//! the derives call, and a user does not, is in one hidden module, `__private`: the model's
//! tables, the passes' shared scaffolding, the store views and the moves.
//!
//! ```
//! use sigecs::entity::EntityManager;
//! let mut entities = EntityManager::new();
//! let e = entities.create().unwrap();
//! assert!(entities.alive(e));
//! ```

#![warn(unreachable_pub)]

pub mod component;
pub mod entity;
pub mod events;
mod model;
mod prefetch;
pub mod query;
/// The store-matching and aliasing rules, shared with the build script (crate `sigecs-rules`).
use sigecs_rules as rules;
mod plural;
pub mod schedule;
pub mod set;
pub mod soa;
pub mod state;
pub mod stats;
#[doc(hidden)]
mod storage;
#[cfg(feature = "transform")]
pub mod transform;
pub mod world;

#[cfg(test)]
mod test_model;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use component::{Component, Resource, Signature};
pub use entity::Entity;
pub use events::{Event, EventReader};
pub use model::{ComponentOf, EventOf, ResourceOf, SignatureOf, WorldModel};
pub use schedule::Commands;
#[doc(hidden)]
pub use set::AnyComponentBits;
pub use set::ComponentBits;
pub use sigecs_derive::{system, Component, Event, Resource, Signature, SoaManager};
pub use stats::{CacheStats, Layout, StoreStats, WorldStats};
pub use world::{Change, CommandErrors, CommandFailure, UndeclaredSet, World, WorldError};

/// The named component sets' library: a world's `ComponentSet` implements [`bitflags::Flags`],
/// and [`bitflags::parser`] reads and writes sets as text.
pub use bitflags;
/// The math library of the transform hierarchy, so its matrices are the same type as yours.
#[cfg(feature = "transform")]
pub use glam;
#[doc(hidden)]
pub use rayon;

/// Everything a components file and a `main` usually need.
pub mod prelude {
    pub use crate::query::{With, Without};
    pub use crate::schedule::Commands;
    pub use crate::{
        system, CommandErrors, Component, Entity, Event, EventReader, Resource, Signature,
        UndeclaredSet, WorldError,
    };
    /// The named component set's methods (`contains`, `iter_names`, ...).
    pub use bitflags::Flags as _;
}
