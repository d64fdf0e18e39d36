//! # sigecs
//!
//! An entity–component system whose storage is generated at build time: one packed array per
//! declared signature, systems matched to arrays by bitmask before the crate compiles. This
//! crate is the bundled world — the declarations in `components/`, the `World` that `build.rs`
//! generates from them, and the main job in `src/bin/sigecs/`. The runtime is `sigecs`, the
//! macros `sigecs_derive`, the generator `sigecs_build`.
//!
//! ```
//! use sigecs_demo::components::physics::*;
//! use sigecs_demo::components::signatures::Body;
//! use sigecs_demo::World;
//! use glam::Vec3;
//!
//! let mut world = World::new();
//! let e = world.spawn(Body {
//!     position: Position(Vec3::ZERO),
//!     velocity: Velocity(Vec3::X),
//!     acceleration: Acceleration(Vec3::ZERO),
//!     mass: Mass(1.0),
//! });
//! world.run_integrate();
//! let dt = world.resource::<sigecs_demo::components::resources::Time>().dt;
//! assert_eq!(world.get::<Position>(e).unwrap().0, Vec3::X * dt);
//! assert!(world.despawn(e));
//! assert!(world.get::<Position>(e).is_none());
//! ```

#[path = "../components/mod.rs"]
pub mod components;

pub use sigecs;

include!(concat!(env!("OUT_DIR"), "/world.rs"));

/// README.md's code blocks, compiled and run as this crate's doctests (`cargo test -p sigecs-demo
/// --doc`). The quick start's files are `rs` blocks, checked instead by
/// `examples/quick_start/tests/run.rs` against the crate that holds them.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// docs/levels.md's code blocks, as doctests (the level tool's `rs` block is built by
/// `tests/new_user_crate.rs`).
#[cfg(doctest)]
#[doc = include_str!("../docs/levels.md")]
pub struct LevelsDoctests;
