//! # ecs-core: the sigecs runtime
//!
//! sigecs generates its storage at build time: a build script (with `ecs-codegen`) reads the
//! crate's `#[derive(Component)]`, `#[derive(Signature)]`, `#[derive(Resource)]` and `#[system]`
//! declarations and writes a `World` with one packed store per signature. This crate holds what
//! that generated code builds on, so the generated file stays thin:
//!
//! - [`entity`]: generational 32-bit entity ids (22 index bits, 8 generation bits) — seed part 1.
//! - [`world`]: the entity table (entity → store and row), the traits generated code implements,
//!   and [`WorldError`].
//! - [`component`]: the traits the derives implement.
//! - [`query`]: run-time queries over the stores chosen by bitmask.
//! - [`schedule`]: chunked parallel passes, [`Commands`](schedule::Commands), and the stage plan.
//! - [`stats`]: memory statistics and the memory-efficiency measure.
//! - [`soa`]: classic structure-of-arrays component managers — seed part 2.
//! - [`transform`]: the transform hierarchy — seed part 3.
//!
//! It also re-exports the derives and `#[system]` from `ecs-derive`, and the crates the generated
//! code names (`bitflags`, `rayon`), so a user crate depends on `ecs-core` alone (plus
//! `ecs-codegen` as a build-dependency).
//!
//! ```
//! use ecs_core::entity::EntityManager;
//! let mut entities = EntityManager::new();
//! let e = entities.create().unwrap();
//! assert!(entities.alive(e));
//! ```

pub mod component;
pub mod entity;
pub mod query;
pub mod schedule;
pub mod soa;
pub mod stats;
pub mod transform;
pub mod world;

pub use component::{Component, Resource, Signature};
pub use ecs_derive::{system, Component, Resource, Signature, SoaManager};
pub use entity::Entity;
pub use stats::{Layout, StoreStats, WorldStats};
pub use world::{Change, ComponentIn, EntityTable, Location, ResourceIn, SpawnIn, WorldError};

#[doc(hidden)]
pub use bitflags;
#[doc(hidden)]
pub use rayon;

/// Everything a components file and a `main` usually need.
pub mod prelude {
    pub use crate::query::{With, Without};
    pub use crate::schedule::Commands;
    pub use crate::{system, Component, Entity, Resource, Signature, WorldError};
}
