//! The bundled world's declarations: point masses and friends.
//!
//! `build.rs` scans this directory with `sigecs-build` and generates `sigecs_demo::World` from what it
//! finds here: components, signatures (one store each), resources and systems.

pub mod physics;
pub mod resources;
pub mod signatures;
