//! gecs (0.3), as its documentation recommends: every archetype declared at compile time in an
//! `ecs_world!` (dynamic capacity, `dyn`; `with_capacity` where the count is known), `create`
//! per entity (gecs has no bulk spawn), and `ecs_iter!` for queries, which gecs compiles into
//! one loop per archetype holding the queried components. gecs has no scheduler: the schedule
//! workload runs its three queries one after another, as for hecs. It has no parallel query
//! either: heavy_compute runs rayon over the archetype's component slices
//! (`get_all_slices_mut`), the one way to split gecs' storage across threads.
//!
//! add_remove is not implemented: gecs cannot add a component to an entity or remove one
//! ("Components may not be added or removed from entities at runtime", `ecs_world!`'s
//! documentation). An entity's archetype is its type (`Entity<ArchA>`); the only way to give
//! its values another component set is to `destroy` it and `create` a new entity, with a new
//! handle, in another archetype.
//!
//! The generated queries name the archetypes and components by their bare identifiers, so each
//! world lives in a module of its own with the workloads that use it (gecs' own advice: import
//! a world with everything it generates, by a glob).

pub use frag::FragIter;
pub use sched::Schedule;
pub use simple::{HeavyCompute, SimpleInsert, SimpleIter};

/// simple_insert, simple_iter and heavy_compute: one archetype of the four components.
mod simple {
    use crate::data::simple::{Position, Rotation, Transform, Velocity};
    use crate::data::{self, START};
    use crate::floor_vecs::{heavy_observation, simple_iter_observation};
    use crate::{Observation, Workload};
    use gecs::prelude::*;
    use rayon::prelude::*;

    ecs_world! {
        ecs_name!(SimpleWorld);
        ecs_archetype!(Simple, dyn, Transform, Position, Rotation, Velocity);
    }

    fn simple_world(n: usize, transform: glam::Mat4) -> SimpleWorld {
        let mut world = SimpleWorld::with_capacity(n);
        for _ in 0..n {
            world.create::<Simple>((
                Transform(transform),
                Position(START),
                Rotation(START),
                Velocity(START),
            ));
        }
        world
    }

    /// simple_insert: `SimpleWorld::with_capacity(n)`, then `create` per entity.
    pub struct SimpleInsert {
        n: usize,
        world: SimpleWorld,
    }

    impl Workload for SimpleInsert {
        fn new(n: usize) -> Self {
            SimpleInsert {
                n,
                world: SimpleWorld::new(),
            }
        }

        fn run(&mut self) {
            self.world = simple_world(self.n, data::simple_transform());
        }

        fn observe(&mut self) -> Observation {
            let (mut count, mut sum) = (0.0, 0.0);
            ecs_iter!(
                self.world,
                |t: &Transform, p: &Position, r: &Rotation, v: &Velocity| {
                    count += 1.0;
                    sum += data::insert_row(&t.0, &p.0, &r.0, &v.0);
                }
            );
            vec![("entities", count), ("sum", sum)]
        }
    }

    /// simple_iter: `ecs_iter!` over `(&mut Position, &Velocity)`.
    pub struct SimpleIter(SimpleWorld);

    impl Workload for SimpleIter {
        fn new(n: usize) -> Self {
            SimpleIter(simple_world(n, data::simple_transform()))
        }

        fn run(&mut self) {
            ecs_iter!(self.0, |p: &mut Position, v: &Velocity| {
                p.0 += v.0;
            });
        }

        fn observe(&mut self) -> Observation {
            let mut rows = Vec::new();
            ecs_iter!(self.0, |p: &Position, v: &Velocity| rows.push((p.0, v.0)));
            simple_iter_observation(rows.iter().map(|(p, v)| (p, v)))
        }
    }

    /// heavy_compute: gecs has no parallel query; rayon over the archetype's transform and
    /// position slices (`get_all_slices_mut`).
    pub struct HeavyCompute(SimpleWorld);

    impl Workload for HeavyCompute {
        fn new(n: usize) -> Self {
            HeavyCompute(simple_world(n, data::heavy_transform()))
        }

        fn run(&mut self) {
            let slices = self.0.archetype_mut::<Simple>().get_all_slices_mut();
            slices
                .transform
                .par_iter_mut()
                .zip(slices.position.par_iter_mut())
                .for_each(|(t, p)| data::heavy_work(&mut t.0, &mut p.0));
        }

        fn observe(&mut self) -> Observation {
            let mut rows = Vec::new();
            ecs_iter!(self.0, |t: &Transform, p: &Position| rows.push((t.0, p.0)));
            heavy_observation(rows.iter().map(|(t, p)| (t, p)))
        }
    }
}

/// frag_iter: 26 archetypes of `Data` and one letter.
// gecs generates `FragWorld::with_capacity` with one argument per archetype.
#[allow(clippy::too_many_arguments)]
mod frag {
    // `K` renamed: gecs' generated code has a generic parameter `K` (an entity key) that a
    // component named `K` collides with.
    use crate::data::frag::K as LetterK;
    use crate::data::frag::{
        Data, A, B, C, D, E, F, G, H, I, J, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z,
    };
    use crate::data::{self, LETTERS};
    use crate::floor_vecs::frag_observation;
    use crate::{Observation, Workload};
    use gecs::prelude::*;

    ecs_world! {
        ecs_name!(FragWorld);
        ecs_archetype!(FragA, dyn, Data, A);
        ecs_archetype!(FragB, dyn, Data, B);
        ecs_archetype!(FragC, dyn, Data, C);
        ecs_archetype!(FragD, dyn, Data, D);
        ecs_archetype!(FragE, dyn, Data, E);
        ecs_archetype!(FragF, dyn, Data, F);
        ecs_archetype!(FragG, dyn, Data, G);
        ecs_archetype!(FragH, dyn, Data, H);
        ecs_archetype!(FragI, dyn, Data, I);
        ecs_archetype!(FragJ, dyn, Data, J);
        ecs_archetype!(FragK, dyn, Data, LetterK);
        ecs_archetype!(FragL, dyn, Data, L);
        ecs_archetype!(FragM, dyn, Data, M);
        ecs_archetype!(FragN, dyn, Data, N);
        ecs_archetype!(FragO, dyn, Data, O);
        ecs_archetype!(FragP, dyn, Data, P);
        ecs_archetype!(FragQ, dyn, Data, Q);
        ecs_archetype!(FragR, dyn, Data, R);
        ecs_archetype!(FragS, dyn, Data, S);
        ecs_archetype!(FragT, dyn, Data, T);
        ecs_archetype!(FragU, dyn, Data, U);
        ecs_archetype!(FragV, dyn, Data, V);
        ecs_archetype!(FragW, dyn, Data, W);
        ecs_archetype!(FragX, dyn, Data, X);
        ecs_archetype!(FragY, dyn, Data, Y);
        ecs_archetype!(FragZ, dyn, Data, Z);
    }

    /// frag_iter: `ecs_iter!` over `&mut Data`, one loop per archetype.
    pub struct FragIter(FragWorld);

    impl Workload for FragIter {
        fn new(n: usize) -> Self {
            let mut world = FragWorld::new();
            macro_rules! spawn {
                ($arch:ident, $l:ident) => {
                    for _ in 0..n {
                        world.create::<$arch>((Data(data::FRAG_DATA), $l(0.0)));
                    }
                };
            }
            spawn!(FragA, A);
            spawn!(FragB, B);
            spawn!(FragC, C);
            spawn!(FragD, D);
            spawn!(FragE, E);
            spawn!(FragF, F);
            spawn!(FragG, G);
            spawn!(FragH, H);
            spawn!(FragI, I);
            spawn!(FragJ, J);
            spawn!(FragK, LetterK);
            spawn!(FragL, L);
            spawn!(FragM, M);
            spawn!(FragN, N);
            spawn!(FragO, O);
            spawn!(FragP, P);
            spawn!(FragQ, Q);
            spawn!(FragR, R);
            spawn!(FragS, S);
            spawn!(FragT, T);
            spawn!(FragU, U);
            spawn!(FragV, V);
            spawn!(FragW, W);
            spawn!(FragX, X);
            spawn!(FragY, Y);
            spawn!(FragZ, Z);
            debug_assert_eq!(FragWorld::num_archetypes(), LETTERS);
            FragIter(world)
        }

        fn run(&mut self) {
            ecs_iter!(self.0, |d: &mut Data| {
                d.0 *= 2.0;
            });
        }

        fn observe(&mut self) -> Observation {
            let mut values = Vec::new();
            ecs_iter!(self.0, |d: &Data| values.push(d.0));
            frag_observation(values)
        }
    }
}

/// schedule: the four archetypes (A,B), (A,B,C), (A,B,C,D), (A,B,C,E).
mod sched {
    use crate::data::sched::{A, B, C, D, E};
    use crate::data::SCHEDULE_START;
    use crate::floor_vecs::schedule_observation;
    use crate::{count_sum, Observation, Workload};
    use gecs::prelude::*;

    ecs_world! {
        ecs_name!(SchedWorld);
        ecs_archetype!(SchedAB, dyn, A, B);
        ecs_archetype!(SchedABC, dyn, A, B, C);
        ecs_archetype!(SchedABCD, dyn, A, B, C, D);
        ecs_archetype!(SchedABCE, dyn, A, B, C, E);
    }

    /// schedule: three `ecs_iter!` queries one after another (gecs has no scheduler).
    pub struct Schedule(SchedWorld);

    impl Workload for Schedule {
        fn new(n: usize) -> Self {
            let [a, b, c, d, e] = SCHEDULE_START;
            let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
            let mut world = SchedWorld::with_capacity(n, n, n, n);
            for _ in 0..n {
                world.create::<SchedAB>((a, b));
            }
            for _ in 0..n {
                world.create::<SchedABC>((a, b, c));
            }
            for _ in 0..n {
                world.create::<SchedABCD>((a, b, c, d));
            }
            for _ in 0..n {
                world.create::<SchedABCE>((a, b, c, e));
            }
            Schedule(world)
        }

        fn run(&mut self) {
            ecs_iter!(self.0, |a: &mut A, b: &mut B| {
                std::mem::swap(&mut a.0, &mut b.0);
            });
            ecs_iter!(self.0, |c: &mut C, d: &mut D| {
                std::mem::swap(&mut c.0, &mut d.0);
            });
            ecs_iter!(self.0, |c: &mut C, e: &mut E| {
                std::mem::swap(&mut c.0, &mut e.0);
            });
        }

        fn observe(&mut self) -> Observation {
            let mut cols: [Vec<f32>; 5] = Default::default();
            ecs_iter!(self.0, |x: &A| cols[0].push(x.0));
            ecs_iter!(self.0, |x: &B| cols[1].push(x.0));
            ecs_iter!(self.0, |x: &C| cols[2].push(x.0));
            ecs_iter!(self.0, |x: &D| cols[3].push(x.0));
            ecs_iter!(self.0, |x: &E| cols[4].push(x.0));
            schedule_observation(cols.map(|col| count_sum(col, |x| x as f64)))
        }
    }
}
