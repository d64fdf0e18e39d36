//! # sigecs-level: levels and prefabs for sigecs worlds
//!
//! A level is JSON compiled to a binary blob that is verified once and then read as it is:
//! spawned into a world in batches, as often as wanted (a level restart, prefab instances), and
//! saved back, byte for byte. The format is Bitsquid's final `EntityResource` ("Building a
//! Data-Oriented Entity System", part 4) behind a checked header.
//!
//! The pieces:
//!
//! - [`Registry`] of [`Registration`]s: Bitsquid's `register_component_compiler(name, compile,
//!   spawn_order)`; a generated registration is one call, `Registration::pod::<T>("position")`,
//!   `Registration::serde::<T>("name")` or `Registration::tag("frozen", || Frozen {})`.
//! - [`EntityCompiler`]: JSON to blob, every error with its JSON path.
//! - [`verify`](fn@verify): the only constructor of [`VerifiedLevel`], the type a spawn accepts.
//! - [`WorldLevels`]: a world's level methods — [`verify_level`](WorldLevels::verify_level),
//!   [`spawn_level`](WorldLevels::spawn_level) (all or nothing), the `save_*` family.
//! - [`LevelWriter`]: builds a canonical blob from per-entity component values (what save uses).
//! - [`inspect`](fn@inspect): counts, hierarchy depth and bytes, as a printable [`LevelReport`].
//! - [`cli`]: the level tool (compile, verify, inspect) for a crate's own world.
//! - [`InlineStr`]: short text as plain old data, for names that spawn without decoding or
//!   allocating.
//! - [`MapEntities`], [`NO_ENTITY`]: components that hold entities (stored as level indices,
//!   remapped when spawned and saved); [`LocalTransform`]: the hierarchy's local matrix.
//! - [`OutsideStores`]: managers that keep components outside the signature stores and spawn
//!   and save them — the transform hierarchy and every structure-of-arrays manager of a level
//!   struct.
//!
//! ## In a generated world
//!
//! A component opts in at its declaration; the crate depends on `sigecs-level` (with
//! `bytemuck` and `serde` for the derives), and the build script generates `level_registry()`
//! beside `World`:
//!
//! ```ignore
//! #[derive(Component, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, serde::Serialize, serde::Deserialize)]
//! #[component(level = "position")]                 // plain old data (the default)
//! #[repr(transparent)]
//! pub struct Position(pub glam::Vec3);
//!
//! #[derive(Component, Clone, serde::Serialize, serde::Deserialize)]
//! #[component(level = "name", encoding = "serde", spawn_order = 1)]
//! pub struct Name(pub String);
//!
//! #[derive(Component)]
//! #[component(level = "frozen")]                   // a tag: no fields, nothing else to derive
//! pub struct Frozen;
//! ```
//!
//! Then, with [`WorldLevels`] in scope:
//!
//! ```ignore
//! let blob = EntityCompiler::new(level_registry()).compile_str(json)?;      // or a file
//! let level = world.verify_level(AlignedBlob::from_bytes(&blob), level_registry(), &VerifyOptions::default())?;
//! let entities = world.spawn_level(&level)?;           // the hierarchy into the world's own
//! let again = world.save_entities(&entities, level_registry(), None)?;
//! assert_eq!(again, blob);
//! ```
//!
//! Components of structure-of-arrays managers are kept outside the stores: declare the
//! manager's plain-old-data struct a level struct (`#[soa(level = "point_mass")]`) and pass
//! the manager beside the others:
//!
//! ```ignore
//! let entities = world.spawn_level_with_all(&level, &mut [&mut transforms, &mut masses])?;
//! let again = world.save_entities_with(&entities, level_registry(), &[&transforms, &masses])?;
//! ```
//!
//! ## Without the `transform` feature
//!
//! The crate does not need sigecs's transform hierarchy, so a world without one does not
//! compile glam. Compiling, verifying, inspecting and writing levels work the same either
//! way, and the format keeps `parent_index` and `local_transform`, so both builds read the same
//! blobs. Without `transform` a spawn refuses a level that holds a hierarchy
//! ([`LevelError::NeedsTransform`]: nothing is dropped silently) unless a spawner given takes
//! `local_transform`; the save functions that take a `TransformManager` are absent, and the
//! `_with` ones save no parents.
//!
//! ## Example
//!
//! Without a world: a registry, a compiled level read back, and the same bytes written again.
//!
//! ```
//! use sigecs_level::{verify, EntityCompiler, Registration, Registry, LevelWriter, VerifyOptions};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, serde::Deserialize)]
//! #[repr(C)]
//! struct Position { x: f32, y: f32 }
//!
//! let registry = Registry::new([
//!     Registration::pod::<Position>("position"),
//!     Registration::serde::<String>("name").spawn_order(1),
//! ])
//! .unwrap();
//! let blob = EntityCompiler::new(&registry)
//!     .compile_str(r#"{"entities": [
//!         {"components": {"position": {"x": 1, "y": 2}, "name": "ship"}},
//!         {"parent": 0, "components": {"position": {"x": 3, "y": 4}}}
//!     ]}"#)
//!     .unwrap();
//!
//! // The world passes its own signature check; here every set of components is declared.
//! let level = verify(
//!     &blob[..],
//!     &registry,
//!     |set: &[&Registration]| if set.is_empty() { Err("no components".to_string()) } else { Ok(set.len() as u32) },
//!     &VerifyOptions::default(),
//! )
//! .unwrap();
//! let positions = level.component("position").unwrap();
//! assert_eq!(positions.pod::<Position>().unwrap()[1], Position { x: 3.0, y: 4.0 });
//! assert_eq!(level.parent(1), Some(0));
//! assert_eq!(level.entity_store(0), Some(2));
//!
//! // Saving the same content gives the same bytes.
//! let mut w = LevelWriter::new();
//! let ship = w.add_entity(None).unwrap();
//! w.add_entity(Some(ship)).unwrap();
//! let (pos, name) = (registry.by_name("position").unwrap(), registry.by_name("name").unwrap());
//! w.push(pos, 1, &Position { x: 3.0, y: 4.0 }).unwrap();
//! w.push(pos, 0, &Position { x: 1.0, y: 2.0 }).unwrap();
//! w.push(name, 0, &"ship".to_string()).unwrap();
//! assert_eq!(w.finish().unwrap(), blob);
//! ```

// Plain-old-data components are stored as their in-memory bytes, which the format defines as
// little-endian; a big-endian target would need a byte swap per field that bytemuck cannot do.
#[cfg(target_endian = "big")]
compile_error!("sigecs levels assume a little-endian target (POD components are stored as their in-memory bytes)");

mod aligned;
mod checked;
pub mod cli;
mod codec;
mod compile;
mod entities;
mod error;
mod format;
mod hierarchy;
mod inline_str;
mod inspect;
mod outside;
mod plan;
mod reader;
mod registry;
mod save;
mod soa_spawner;
mod spawn;
#[cfg(feature = "transform")]
mod transform_spawner;
mod verify;
mod world;
mod write;

pub use aligned::AlignedBlob;
pub use codec::Encoding;
pub use compile::{CompileError, EntityCompiler, PathError};
pub use entities::{LocalTransform, MapEntities, NO_ENTITY};
pub use error::{ComponentRef, LevelError};
pub use format::component_identifier;
pub use inline_str::{InlineStr, TooLong};
pub use inspect::{inspect, ComponentReport, LevelReport, SetReport};
pub use outside::{OutsideSave, OutsideSpawn, OutsideStores};
pub use registry::{ComponentData, Registration, Registry};
pub use verify::{
    verify, AnySet, ComponentSet, Signatures, UnknownComponents, VerifiedLevel, VerifyOptions,
};
pub use world::WorldLevels;
pub use write::LevelWriter;

/// Recomputes and stores the checksum of a blob whose body was edited by hand (a test flipping
/// bits, a tool patching a field), so that the verifier's structural checks behind the
/// checksum are reached. Does nothing to a blob shorter than the header; makes nothing valid
/// that the verifier would otherwise refuse for its structure.
#[doc(hidden)]
pub fn reseal(blob: &mut [u8]) {
    format::reseal(blob)
}

/// The `bytemuck` that [`Registration::pod`] is bound by, for crates that do not depend on it
/// themselves (`#[bytemuck(crate = "sigecs_level::bytemuck")]`).
pub use bytemuck;
/// The `serde` the registrations are bound by (`#[serde(crate = "sigecs_level::serde")]`).
pub use serde;
/// The `serde_json` the compiler reads.
pub use serde_json;

/// What the `SoaManager` derive's expansion calls: the spawner of a structure-of-arrays
/// manager of a level struct, written once.
#[doc(hidden)]
pub mod __private {
    pub use crate::soa_spawner::{prepare_soa, save_soa, takes_soa, write_soa};
}
