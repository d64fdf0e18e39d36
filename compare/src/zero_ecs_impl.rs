//! zero_ecs (0.3), as its README recommends: each entity type a struct of its components
//! (`#[entity]`), a world of those types (`ecs_world!`, one `Vec` per field of each type), `create`
//! per entity (no bulk spawn), systems as `#[system_for_each(World)]` functions, which become
//! methods of the world iterating every entity type that holds the components they take, and
//! `make_query!` where a query is needed outside a system (`par_query_mut`, rayon, for
//! heavy_compute). zero_ecs has no scheduler: the schedule workload calls its three systems one
//! after another, as for hecs. Version 0.3 generates everything with proc macros (0.2's build
//! script, `zero_ecs_build`, is gone).
//!
//! add_remove is not implemented: an entity is an instance of one struct, fixed at compile time;
//! zero_ecs cannot add a component to an entity or remove one (its author: it never will, since
//! the archetypes are compiled, zero_ecs issue #8), and `destroy` returns nothing to re-create
//! the entity from in another type.
//!
//! `ecs_world!` always declares a `World` (and `Entity`, `Query`, …) in the module it is called in,
//! and queries match components by their bare identifiers: each world lives in a module of its
//! own with the workloads that use it.

pub use frag::FragIter;
pub use sched::Schedule;
pub use simple::{HeavyCompute, SimpleInsert, SimpleIter};

/// simple_insert, simple_iter and heavy_compute: one entity type of the four components.
mod simple {
    use crate::data::simple::{Position, Rotation, Transform, Velocity};
    use crate::data::{self, START};
    use crate::floor_vecs::{heavy_observation, simple_iter_observation};
    use crate::{Observation, Workload};
    use zero_ecs::*;

    #[entity]
    pub struct SimpleEntity {
        transform: Transform,
        position: Position,
        rotation: Rotation,
        velocity: Velocity,
    }

    ecs_world!(SimpleEntity);

    make_query!(InsertQuery, Transform, Position, Rotation, Velocity);
    make_query!(IterQuery, Position, Velocity);
    make_query!(HeavyQuery, mut Transform, mut Position);
    make_query!(HeavyObserved, Transform, Position);

    #[system_for_each(World)]
    fn simple_iter(position: &mut Position, velocity: &Velocity) {
        position.0 += velocity.0;
    }

    fn simple_world(n: usize, transform: glam::Mat4) -> World {
        let mut world = World::default();
        for _ in 0..n {
            world.create(SimpleEntity {
                transform: Transform(transform),
                position: Position(START),
                rotation: Rotation(START),
                velocity: Velocity(START),
            });
        }
        world
    }

    /// simple_insert: `World::default()`, then `create` per entity.
    pub struct SimpleInsert {
        n: usize,
        world: World,
    }

    impl Workload for SimpleInsert {
        fn new(n: usize) -> Self {
            SimpleInsert {
                n,
                world: World::default(),
            }
        }

        fn run(&mut self) {
            self.world = simple_world(self.n, data::simple_transform());
        }

        fn observe(&mut self) -> Observation {
            let (count, sum) = crate::count_sum(
                self.world.query::<InsertQuery>(),
                |InsertQuery(t, p, r, v)| data::insert_row(&t.0, &p.0, &r.0, &v.0),
            );
            vec![("entities", count), ("sum", sum)]
        }
    }

    /// simple_iter: the system `simple_iter(&mut Position, &Velocity)`.
    pub struct SimpleIter(World);

    impl Workload for SimpleIter {
        fn new(n: usize) -> Self {
            SimpleIter(simple_world(n, data::simple_transform()))
        }

        fn run(&mut self) {
            self.0.simple_iter();
        }

        fn observe(&mut self) -> Observation {
            simple_iter_observation(
                self.0
                    .query::<IterQuery>()
                    .map(|IterQuery(p, v)| (&p.0, &v.0)),
            )
        }
    }

    /// heavy_compute: `par_query_mut` (rayon) over `(&mut Transform, &mut Position)`.
    pub struct HeavyCompute(World);

    impl Workload for HeavyCompute {
        fn new(n: usize) -> Self {
            HeavyCompute(simple_world(n, data::heavy_transform()))
        }

        fn run(&mut self) {
            self.0
                .par_query_mut::<HeavyQuery>()
                .for_each(|HeavyQuery(t, p)| data::heavy_work(&mut t.0, &mut p.0));
        }

        fn observe(&mut self) -> Observation {
            heavy_observation(
                self.0
                    .query::<HeavyObserved>()
                    .map(|HeavyObserved(t, p)| (&t.0, &p.0)),
            )
        }
    }
}

/// frag_iter: 26 entity types of `Data` and one letter.
mod frag {
    use crate::data::frag::{
        Data, A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, R, S, T, U, V, W, X, Y, Z,
    };
    use crate::data::{self, LETTERS};
    use crate::floor_vecs::frag_observation;
    use crate::{Observation, Workload};
    use zero_ecs::*;

    /// Declares the entity type `$name` of `Data` and the letter `$l`.
    macro_rules! frag_entity {
        ($name:ident, $l:ident) => {
            #[entity]
            pub struct $name {
                data: Data,
                letter: $l,
            }
        };
    }
    frag_entity!(FragA, A);
    frag_entity!(FragB, B);
    frag_entity!(FragC, C);
    frag_entity!(FragD, D);
    frag_entity!(FragE, E);
    frag_entity!(FragF, F);
    frag_entity!(FragG, G);
    frag_entity!(FragH, H);
    frag_entity!(FragI, I);
    frag_entity!(FragJ, J);
    frag_entity!(FragK, K);
    frag_entity!(FragL, L);
    frag_entity!(FragM, M);
    frag_entity!(FragN, N);
    frag_entity!(FragO, O);
    frag_entity!(FragP, P);
    frag_entity!(FragQ, Q);
    frag_entity!(FragR, R);
    frag_entity!(FragS, S);
    frag_entity!(FragT, T);
    frag_entity!(FragU, U);
    frag_entity!(FragV, V);
    frag_entity!(FragW, W);
    frag_entity!(FragX, X);
    frag_entity!(FragY, Y);
    frag_entity!(FragZ, Z);

    ecs_world!(
        FragA, FragB, FragC, FragD, FragE, FragF, FragG, FragH, FragI, FragJ, FragK, FragL, FragM,
        FragN, FragO, FragP, FragQ, FragR, FragS, FragT, FragU, FragV, FragW, FragX, FragY, FragZ
    );

    make_query!(DataQuery, Data);

    #[system_for_each(World)]
    fn double(data: &mut Data) {
        data.0 *= 2.0;
    }

    /// frag_iter: the system `double(&mut Data)`, which walks the 26 entity types' `Data`
    /// vectors one after another.
    pub struct FragIter(World);

    impl Workload for FragIter {
        fn new(n: usize) -> Self {
            let mut world = World::default();
            macro_rules! spawn {
                ($name:ident, $l:ident) => {
                    for _ in 0..n {
                        world.create($name {
                            data: Data(data::FRAG_DATA),
                            letter: $l(0.0),
                        });
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
            spawn!(FragK, K);
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
            debug_assert_eq!(world.query::<DataQuery>().count(), LETTERS * n);
            FragIter(world)
        }

        fn run(&mut self) {
            self.0.double();
        }

        fn observe(&mut self) -> Observation {
            frag_observation(self.0.query::<DataQuery>().map(|DataQuery(d)| d.0))
        }
    }
}

/// schedule: the entity types (A,B), (A,B,C), (A,B,C,D), (A,B,C,E).
mod sched {
    use crate::data::sched::{A, B, C, D, E};
    use crate::data::SCHEDULE_START;
    use crate::floor_vecs::schedule_observation;
    use crate::{count_sum, Observation, Workload};
    use zero_ecs::*;

    #[entity]
    pub struct SchedAB {
        a: A,
        b: B,
    }

    #[entity]
    pub struct SchedABC {
        a: A,
        b: B,
        c: C,
    }

    #[entity]
    pub struct SchedABCD {
        a: A,
        b: B,
        c: C,
        d: D,
    }

    #[entity]
    pub struct SchedABCE {
        a: A,
        b: B,
        c: C,
        e: E,
    }

    ecs_world!(SchedAB, SchedABC, SchedABCD, SchedABCE);

    make_query!(QueryA, A);
    make_query!(QueryB, B);
    make_query!(QueryC, C);
    make_query!(QueryD, D);
    make_query!(QueryE, E);

    #[system_for_each(World)]
    fn swap_ab(a: &mut A, b: &mut B) {
        std::mem::swap(&mut a.0, &mut b.0);
    }

    #[system_for_each(World)]
    fn swap_cd(c: &mut C, d: &mut D) {
        std::mem::swap(&mut c.0, &mut d.0);
    }

    #[system_for_each(World)]
    fn swap_ce(c: &mut C, e: &mut E) {
        std::mem::swap(&mut c.0, &mut e.0);
    }

    /// schedule: the three systems called one after another (zero_ecs has no scheduler).
    pub struct Schedule(World);

    impl Workload for Schedule {
        fn new(n: usize) -> Self {
            let [a, b, c, d, e] = SCHEDULE_START;
            let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
            let mut world = World::default();
            for _ in 0..n {
                world.create(SchedAB { a, b });
            }
            for _ in 0..n {
                world.create(SchedABC { a, b, c });
            }
            for _ in 0..n {
                world.create(SchedABCD { a, b, c, d });
            }
            for _ in 0..n {
                world.create(SchedABCE { a, b, c, e });
            }
            Schedule(world)
        }

        fn run(&mut self) {
            self.0.swap_ab();
            self.0.swap_cd();
            self.0.swap_ce();
        }

        fn observe(&mut self) -> Observation {
            let w = &self.0;
            schedule_observation([
                count_sum(w.query::<QueryA>(), |QueryA(x)| x.0 as f64),
                count_sum(w.query::<QueryB>(), |QueryB(x)| x.0 as f64),
                count_sum(w.query::<QueryC>(), |QueryC(x)| x.0 as f64),
                count_sum(w.query::<QueryD>(), |QueryD(x)| x.0 as f64),
                count_sum(w.query::<QueryE>(), |QueryE(x)| x.0 as f64),
            ])
        }
    }
}
