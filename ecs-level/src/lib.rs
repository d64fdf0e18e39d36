//! Levels (levels): levels and prefabs compiled from JSON to binary blobs that are verified once and then read as
//! they are.
//!
//! The pieces, one concept per file:
//!
//! - [`format`](mod@format): the blob's layout, byte by byte — Bitsquid's final `EntityResource`
//!   (`num_entities`, `num_component_types`, `parent_index[]`, then per component type its
//!   identifier, instance count, size, `entity_index[]` and `instance_data`), little-endian, behind
//!   a header with magic, version, length and checksum.
//! - [`codec`]: how one instance is stored — plain old data as its bytes (read in place), anything
//!   else with postcard (and why postcard).
//! - [`Registry`] of [`Registration`]s: Bitsquid's `register_component_compiler(name, compile,
//!   spawn_order)`; a generated registration is one call, `Registration::pod::<T>("position")`
//!   or `Registration::serde::<T>("name")`.
//! - [`EntityCompiler`]: JSON (the shape is in [`mod@compile`]) to blob, errors with JSON paths.
//! - [`verify`](fn@verify) (in [`mod@verify`]): the only constructor of [`VerifiedLevel`], the type a spawner accepts.
//! - [`LevelWriter`]: builds a canonical blob from per-entity component values (what save uses).
//! - [`inspect`](fn@inspect): counts, hierarchy depth and bytes, as a printable [`LevelReport`].
//! - [`cli`]: the level tool (compile, verify, inspect) for a crate's own world, as a `main`.
//! - [`InlineStr`]: short text as plain old data, for names that spawn without decoding or
//!   allocating.
//! - [`MapEntities`], [`NO_ENTITY`]: components that hold entities (stored as level indices,
//!   remapped when spawned and saved); [`LocalTransform`]: the hierarchy's local matrix.
//! - [`OutsideStores`] (in [`mod@outside`]): managers that keep components outside the signature
//!   stores and spawn and save them — the transform hierarchy (`transform_spawner.rs`, with the
//!   `transform` feature) and every structure-of-arrays manager of a plain-old-data struct
//!   (`soa_spawner.rs`).
//!
//! ## In a generated world
//!
//! A component opts in at its declaration, and the build script generates the registry:
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
//! #[derive(Component, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, serde::Serialize, serde::Deserialize)]
//! #[component(level = "leader", map_entities)]    // holds an Entity: implements MapEntities
//! #[repr(transparent)]
//! pub struct Leader(pub Entity);
//! ```
//!
//! `level_registry()` (generated next to `World`) lists them, plus `local_transform`. Then:
//!
//! ```ignore
//! let blob = EntityCompiler::new(level_registry()).compile_str(json)?;      // or a file
//! let level = world.verify_level(AlignedBlob::from_bytes(&blob), level_registry(), &VerifyOptions::default())?;
//! let entities = world.spawn_level_with(&level, &mut transforms)?;         // or spawn_level
//! let again = world.save_entities(&entities, level_registry(), Some(&transforms))?;
//! assert_eq!(again, blob);
//! ```
//!
//! Components of structure-of-arrays managers are kept outside the stores: register the
//! manager's plain-old-data struct with [`Registration::kept_outside`] and pass the manager
//! beside the transforms:
//!
//! ```ignore
//! let registry = level_registry().with([Registration::pod::<PointMass>("point_mass").kept_outside()])?;
//! let entities = world.spawn_level_with_all(&level, &mut [&mut transforms, &mut masses])?;
//! let again = world.save_entities_with(&entities, &registry, &[&transforms, &masses])?;
//! ```
//!
//! ## Spawning
//!
//! [`World::verify_level`](crate::World::verify_level) verifies against the world's own
//! [`Signatures`] ([`World::level_signatures`](crate::World::level_signatures): a set maps
//! to the store whose signature is exactly its components, those kept outside the stores aside;
//! any other set is refused with `insert`'s words).
//! [`World::spawn_level`](crate::World::spawn_level) (and `spawn_level_with` /
//! `spawn_level_with_all`, which also hand the components kept outside the stores to their
//! [`OutsideStores`] managers: a [`TransformManager`](crate::transform::TransformManager) links
//! `parent_index`) is Bitsquid's batched spawn:
//! create [`num_entities`](VerifiedLevel::num_entities) entities at once (one run per
//! store); reserve each store once ([`store_counts`](VerifiedLevel::store_counts)); then, for
//! each component type in [`spawn_order`](VerifiedLevel::spawn_order), write all its
//! instances — plain old data with one copy per run of consecutive rows, postcard instances
//! decoded straight into their rows — and map the entities components hold. Instances come in
//! ascending entity order, so each store's column fills in the order of its entities.
//! Verification has already checked everything that could fail, so a spawn checks the few
//! things left (the ids can be issued, the level was verified for this world, the managers
//! outside the stores accept their instances) before it writes anything, and either completes
//! or spawns nothing. One verified level spawns any number of times (prefab instances).
//!
//! ## Without the `transform` feature
//!
//! This module does not need sigecs's `transform` feature, so a world without a hierarchy does
//! not compile glam. Compiling, verifying, inspecting and writing levels work the same either
//! way, and the format keeps `parent_index` and `local_transform`, so both builds read the same
//! blobs. Without `transform` the world has no hierarchy to spawn parents and local matrices
//! into, so a spawn refuses a level that holds any ([`LevelError::NeedsTransform`]: nothing is
//! dropped silently) unless a spawner given takes `local_transform`; the save functions that
//! take a `TransformManager` (`save_entities`, `save_level`, `save_subtrees`) are absent, and
//! the `_with` ones save no parents.
//!
//! ## Saving
//!
//! [`World::save_entities`](crate::World::save_entities) (and `save_level`, every entity,
//! and `save_subtrees`, roots with their descendants) writes entities back with
//! [`LevelWriter`]: every registered component, parents and local matrices from a transform
//! manager (the `_with` variants: the components of any [`OutsideStores`] managers), entities
//! held in components as indices among the saved ones. Blob → world → blob
//! gives the same bytes (when the blob has no unknown component and no identity
//! `local_transform`, which save leaves out); world → blob → world gives the same values.
//!
//! ## Example
//!
//! ```
//! use sigecs::level::{verify, EntityCompiler, Registration, Registry, LevelWriter, VerifyOptions};
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
pub mod codec;
pub mod compile;
mod entities;
mod error;
pub mod format;
mod hierarchy;
mod inline_str;
pub mod inspect;
pub mod outside;
mod plan;
mod registry;
mod soa_spawner;
#[cfg(feature = "transform")]
mod transform_spawner;
pub mod verify;
mod write;

pub use aligned::AlignedBlob;
pub use codec::Encoding;
pub use compile::{CompileError, EntityCompiler, PathError};
pub use entities::{LocalTransform, MapEntities, NO_ENTITY};
pub use error::{ComponentRef, LevelError};
pub use format::{component_identifier, reseal};
#[cfg(not(feature = "transform"))]
pub(crate) use hierarchy::first_in_hierarchy;
pub use inline_str::{InlineStr, TooLong};
pub use inspect::{inspect, ComponentReport, LevelReport, SetReport};
pub use outside::{OutsideSave, OutsideSpawn, OutsideStores};
pub(crate) use registry::RunTarget;
pub use registry::{Registration, Registry};
pub use verify::{
    verify, AnySet, ComponentData, ComponentSet, Signatures, UnknownComponents, VerifiedLevel,
    VerifyOptions,
};
pub use write::LevelWriter;

/// The `bytemuck` this module's [`Registration::pod`] is bound by, for crates that do not depend
/// on it themselves (`#[bytemuck(crate = "sigecs::level::bytemuck")]`).
pub use bytemuck;
/// The `serde` this module's registrations are bound by (`#[serde(crate = "sigecs::level::serde")]`).
pub use serde;
/// The `serde_json` the compiler reads.
pub use serde_json;
