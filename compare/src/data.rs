//! The workloads' data: initial values every implementation starts from, and the component
//! types of the peer libraries (one set shared by hecs, bevy_ecs, legion, shipyard, specs,
//! sparsey, gecs and zero_ecs; sigecs' come from the fixture worlds of this repository,
//! `sigecs_fixtures::bench`; the floors use plain glam and floats).

use glam::{Mat4, Vec3};

/// simple_insert / simple_iter: the transform every entity starts with.
pub fn simple_transform() -> Mat4 {
    Mat4::from_scale(Vec3::ONE)
}

/// simple_insert / simple_iter / heavy_compute: position, rotation and velocity start at
/// (1, 1, 1) (off the rotation axis of heavy_compute, so that its positions change every run).
pub const START: Vec3 = Vec3::ONE;

/// heavy_compute: the transform every entity starts with.
pub fn heavy_transform() -> Mat4 {
    Mat4::from_axis_angle(Vec3::X, 1.2)
}

/// heavy_compute: how many times each row's matrix is inverted per run: an odd count, so the
/// work cannot cancel out (see the fixture's constant, which sigecs's world runs).
pub const HEAVY_INVERSIONS: usize = sigecs_fixtures::bench::heavy_compute::COMPARISON_INVERSIONS;

/// heavy_compute: the work on one row ([`HEAVY_INVERSIONS`] inversions, then transform the
/// position).
#[inline]
pub fn heavy_work(transform: &mut Mat4, position: &mut Vec3) {
    for _ in 0..HEAVY_INVERSIONS {
        *transform = transform.inverse();
    }
    *position = transform.transform_vector3(*position);
}

/// frag_iter: the 26 letters.
pub const LETTERS: usize = 26;

/// frag_iter: every `Data` starts at 1 (doubling keeps sums exact).
pub const FRAG_DATA: f32 = 1.0;

/// schedule: the start values of A, B, C, D, E (distinct, so every swap shows in the sums).
pub const SCHEDULE_START: [f32; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];

/// add_remove: the `A` of the `i`-th entity, and the `B` added to it.
#[inline]
pub fn add_remove_value(i: usize) -> f32 {
    i as f32
}

/// Observation of simple_insert: entities with all four components; sum of
/// `transform.x_axis.x + position.x + rotation.x + velocity.x`.
pub fn insert_row(t: &Mat4, p: &Vec3, r: &Vec3, v: &Vec3) -> f64 {
    (t.x_axis.x + p.x + r.x + v.x) as f64
}

/// Observation of heavy_compute for one row: `y_axis.z` of the matrix (the sine of its
/// rotation angle, whose sign an inversion flips) and the sum of the position's coordinates.
pub fn heavy_row(t: &Mat4, p: &Vec3) -> (f64, f64) {
    (t.y_axis.z as f64, (p.x + p.y + p.z) as f64)
}

/// Declares a newtype component usable by every peer library: bevy_ecs and shipyard through
/// their derives, specs through its trait with the storage its book recommends, hecs, legion,
/// sparsey, gecs and zero_ecs need nothing.
macro_rules! component {
    ($(#[$meta:meta])* $name:ident($ty:ty), $storage:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, bevy_ecs::component::Component, shipyard::Component)]
        pub struct $name(pub $ty);

        impl specs::Component for $name {
            type Storage = specs::$storage<Self>;
        }
    };
}

/// simple_insert, simple_iter and heavy_compute components of the peers.
pub mod simple {
    use glam::{Mat4, Vec3};

    component!(
        /// A 4×4 transform.
        Transform(Mat4), VecStorage
    );
    component!(
        /// Position.
        Position(Vec3), VecStorage
    );
    component!(
        /// Rotation.
        Rotation(Vec3), VecStorage
    );
    component!(
        /// Velocity.
        Velocity(Vec3), VecStorage
    );
}

/// frag_iter components of the peers: `Data` on every entity, one letter on 20 each.
pub mod frag {
    component!(
        /// The value every entity holds.
        Data(f32), VecStorage
    );

    /// Calls `$m!(Letter)` for each of the 26 letters.
    #[macro_export]
    macro_rules! for_each_letter {
        ($m:ident) => {
            $m!(A);
            $m!(B);
            $m!(C);
            $m!(D);
            $m!(E);
            $m!(F);
            $m!(G);
            $m!(H);
            $m!(I);
            $m!(J);
            $m!(K);
            $m!(L);
            $m!(M);
            $m!(N);
            $m!(O);
            $m!(P);
            $m!(Q);
            $m!(R);
            $m!(S);
            $m!(T);
            $m!(U);
            $m!(V);
            $m!(W);
            $m!(X);
            $m!(Y);
            $m!(Z);
        };
    }

    macro_rules! letter {
        ($l:ident) => {
            component!(
                /// A letter component: makes its entities' component set distinct.
                $l(f32), DenseVecStorage
            );
        };
    }
    for_each_letter!(letter);
}

/// schedule components of the peers.
pub mod sched {
    component!(
        /// On every entity.
        A(f32), VecStorage
    );
    component!(
        /// On every entity.
        B(f32), VecStorage
    );
    component!(
        /// On three quarters of the entities.
        C(f32), VecStorage
    );
    component!(
        /// On a quarter of the entities.
        D(f32), DenseVecStorage
    );
    component!(
        /// On a quarter of the entities.
        E(f32), DenseVecStorage
    );
}

/// add_remove components of the peers.
pub mod addrem {
    component!(
        /// The component every entity keeps.
        A(f32), VecStorage
    );
    component!(
        /// The component that is added and removed.
        B(f32), DenseVecStorage
    );
}

/// save_restore: the values of the `i`-th entity: a transform translating by `i` along x,
/// position (i, 0, 0), rotation (0, i, 0), velocity (1, i, 0). Distinct on every entity, and
/// small integers, so that every sum the consistency test takes is exact.
pub fn state_row(i: usize) -> (Mat4, Vec3, Vec3, Vec3) {
    let i = i as f32;
    (
        Mat4::from_translation(Vec3::new(i, 0.0, 0.0)),
        Vec3::new(i, 0.0, 0.0),
        Vec3::new(0.0, i, 0.0),
        Vec3::new(1.0, i, 0.0),
    )
}

/// save_restore: what a frame after the save changes on one entity (the transform moves by
/// one, the position by the velocity; rotation and velocity stay), so that a restore has
/// something to undo.
#[inline]
pub fn state_change(transform: &mut Mat4, position: &mut Vec3, velocity: &Vec3) {
    transform.w_axis.x += 1.0;
    *position += *velocity;
}

/// Observation of save_restore: the entity count, one sum per component (`w_axis.x` of the
/// transform, `position.x`, `rotation.y`, `velocity.y`) and the sum over rows of
/// `w_axis.x · position.x + rotation.y · velocity.y`, which changes when values are restored
/// to the wrong rows.
pub fn state_observation<'a>(
    rows: impl Iterator<Item = (&'a Mat4, &'a Vec3, &'a Vec3, &'a Vec3)>,
) -> Vec<(&'static str, f64)> {
    let mut sums = [0.0f64; 6];
    for (t, p, r, v) in rows {
        let (t, p, r, v) = (t.w_axis.x as f64, p.x as f64, r.y as f64, v.y as f64);
        for (s, x) in sums.iter_mut().zip([1.0, t, p, r, v, t * p + r * v]) {
            *s += x;
        }
    }
    [
        "entities",
        "transform",
        "position",
        "rotation",
        "velocity",
        "rows",
    ]
    .into_iter()
    .zip(sums)
    .collect()
}
