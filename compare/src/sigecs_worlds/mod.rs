//! sigecs' worlds, one per workload: each file declares its components, signatures and
//! systems, and includes the `World` that `compare/build.rs` generates from it with
//! `ecs_codegen::Builder` (`.out_file("<workload>.rs")`).

pub mod add_remove;
pub mod frag_iter;
pub mod heavy_compute;
pub mod schedule;
pub mod simple_insert;
pub mod simple_iter;
