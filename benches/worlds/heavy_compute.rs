//! The ecs_bench_suite "heavy_compute" workload: 10,000 entities with a Mat4 (plus Position,
//! Rotation, Velocity); each matrix is inverted 100 times. The work per row is heavy (about
//! 2 µs), so the system lowers `min_chunk` to let rayon split even small stores. The data is
//! simple_iter's: `build.rs` scans its components and its `columns::Data` signature too.

use super::simple_iter::Transform;
use ecs_core::prelude::*;

/// Inverts the matrix 100 times.
#[system(min_chunk = 64)]
pub fn invert(transform: &mut Transform) {
    for _ in 0..100 {
        transform.0 = transform.0.inverse();
    }
}

include!(concat!(env!("OUT_DIR"), "/heavy_compute.rs"));
