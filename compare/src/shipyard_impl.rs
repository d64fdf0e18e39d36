//! shipyard, as its guide recommends: `bulk_add_entity` for bulk spawns, systems as functions
//! of views run with `World::run`, `par_iter` (rayon) for parallel iteration, a `Workload` for
//! the schedule workload, and `Entities::add_component` / `ViewMut::remove` inside systems for
//! structural changes.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use rayon::prelude::*;
use shipyard::{
    EntitiesView, EntityId, IntoIter, IntoWorkload, Remove, View, ViewMut,
    Workload as ShipWorkload, World,
};

fn simple_world(n: usize, transform: glam::Mat4) -> World {
    let mut world = World::new();
    world.bulk_add_entity((0..n).map(|_| {
        (
            Transform(transform),
            Position(START),
            Rotation(START),
            Velocity(START),
        )
    }));
    world
}

/// simple_insert: `World::new()`, then `bulk_add_entity`.
pub struct SimpleInsert {
    n: usize,
    world: World,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            world: World::new(),
        }
    }

    fn run(&mut self) {
        self.world = simple_world(self.n, data::simple_transform());
    }

    fn observe(&mut self) -> Observation {
        self.world.run(
            |t: View<Transform>, p: View<Position>, r: View<Rotation>, v: View<Velocity>| {
                let (count, sum) = count_sum((&t, &p, &r, &v).iter(), |(t, p, r, v)| {
                    data::insert_row(&t.0, &p.0, &r.0, &v.0)
                });
                vec![("entities", count), ("sum", sum)]
            },
        )
    }
}

fn advance(mut positions: ViewMut<Position>, velocities: View<Velocity>) {
    for (p, v) in (&mut positions, &velocities).iter() {
        p.0 += v.0;
    }
}

/// simple_iter: the `advance` system, run with `World::run`.
pub struct SimpleIter(World);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter(simple_world(n, data::simple_transform()))
    }

    fn run(&mut self) {
        self.0.run(advance);
    }

    fn observe(&mut self) -> Observation {
        self.0.run(|p: View<Position>, v: View<Velocity>| {
            simple_iter_observation((&p, &v).iter().map(|(p, v)| (&p.0, &v.0)))
        })
    }
}

fn double(mut data: ViewMut<Data>) {
    for d in (&mut data).iter() {
        d.0 *= 2.0;
    }
}

/// frag_iter: the `double` system over the one sparse set of `Data`.
pub struct FragIter(World);

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        macro_rules! spawn {
            ($l:ident) => {
                world.bulk_add_entity((0..n).map(|_| (frag::$l(0.0), Data(data::FRAG_DATA))));
            };
        }
        crate::for_each_letter!(spawn);
        debug_assert_eq!(world.run(|d: View<Data>| d.len()), LETTERS * n);
        FragIter(world)
    }

    fn run(&mut self) {
        self.0.run(double);
    }

    fn observe(&mut self) -> Observation {
        self.0
            .run(|d: View<Data>| frag_observation(d.iter().map(|d| d.0)))
    }
}

fn invert(mut transforms: ViewMut<Transform>, mut positions: ViewMut<Position>) {
    (&mut transforms, &mut positions)
        .par_iter()
        .for_each(|(t, p)| data::heavy_work(&mut t.0, &mut p.0));
}

/// heavy_compute: the `invert` system with `par_iter` (rayon).
pub struct HeavyCompute(World);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute(simple_world(n, data::heavy_transform()))
    }

    fn run(&mut self) {
        self.0.run(invert);
    }

    fn observe(&mut self) -> Observation {
        self.0.run(|t: View<Transform>, p: View<Position>| {
            heavy_observation((&t, &p).iter().map(|(t, p)| (&t.0, &p.0)))
        })
    }
}

fn ab(mut a: ViewMut<A>, mut b: ViewMut<B>) {
    for (a, b) in (&mut a, &mut b).iter() {
        std::mem::swap(&mut a.0, &mut b.0);
    }
}

fn cd(mut c: ViewMut<C>, mut d: ViewMut<D>) {
    for (c, d) in (&mut c, &mut d).iter() {
        std::mem::swap(&mut c.0, &mut d.0);
    }
}

fn ce(mut c: ViewMut<C>, mut e: ViewMut<E>) {
    for (c, e) in (&mut c, &mut e).iter() {
        std::mem::swap(&mut c.0, &mut e.0);
    }
}

fn swaps() -> ShipWorkload {
    (ab, cd, ce).into_workload()
}

/// schedule: a `Workload` of three systems, run with `run_workload` (shipyard runs the
/// systems that do not conflict in parallel).
pub struct Schedule(World);

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
        let mut world = World::new();
        world.bulk_add_entity((0..n).map(|_| (a, b)));
        world.bulk_add_entity((0..n).map(|_| (a, b, c)));
        world.bulk_add_entity((0..n).map(|_| (a, b, c, d)));
        world.bulk_add_entity((0..n).map(|_| (a, b, c, e)));
        world.add_workload(swaps);
        Schedule(world)
    }

    fn run(&mut self) {
        self.0.run_workload(swaps).expect("the workload runs");
    }

    fn observe(&mut self) -> Observation {
        self.0.run(
            |a: View<A>, b: View<B>, c: View<C>, d: View<D>, e: View<E>| {
                schedule_observation([
                    count_sum(a.iter(), |x| x.0 as f64),
                    count_sum(b.iter(), |x| x.0 as f64),
                    count_sum(c.iter(), |x| x.0 as f64),
                    count_sum(d.iter(), |x| x.0 as f64),
                    count_sum(e.iter(), |x| x.0 as f64),
                ])
            },
        )
    }
}

/// add_remove: `Entities::add_component` and `ViewMut::remove` in systems.
pub struct AddRemove {
    world: World,
    entities: Vec<EntityId>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        let entities = world
            .bulk_add_entity((0..n).map(|i| (addrem::A(data::add_remove_value(i)),)))
            .collect();
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        self.world.run(|a: View<addrem::A>, b: View<addrem::B>| {
            add_remove_observation(a.iter().map(|a| a.0 as f64), b.iter().map(|b| b.0 as f64))
        })
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        let entities = &self.entities;
        self.world
            .run(|all: EntitiesView, mut b: ViewMut<addrem::B>| {
                for (i, &e) in entities.iter().enumerate() {
                    all.add_component(e, &mut b, addrem::B(data::add_remove_value(i)));
                }
            });
    }

    fn remove(&mut self) {
        let entities = &self.entities;
        self.world.run(|mut b: ViewMut<addrem::B>| {
            for &e in entities {
                std::hint::black_box(b.remove(e).expect("an entity with a B"));
            }
        });
    }
}
