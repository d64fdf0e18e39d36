//! The one sigecs world of the comparison that is not a fixture world of this repository:
//! heavy_compute, whose workload (an odd number of inversions, then the position transformed)
//! differs from the `heavy_compute` fixture (100 inversions, the position left alone). It
//! includes the `World` that `compare/build.rs` generates from it with `ecs_codegen::Builder`.
//! The other workloads use `sigecs_fixtures::bench` (see `crate::sigecs_impl`).

pub mod heavy_compute;
