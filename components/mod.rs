//! The bundled world's declarations: the point mass of seed part 2 and friends.
//!
//! `build.rs` scans this directory with `ecs-codegen` and generates `sigecs::World` from what it
//! finds here: components, signatures (one store each), resources and systems.

pub mod physics;
pub mod resources;
pub mod signatures;
