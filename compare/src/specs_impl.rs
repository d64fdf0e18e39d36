//! specs, as its book recommends: components registered with the storage the book suggests for
//! how many entities hold them (`VecStorage` for nearly all, `DenseVecStorage` otherwise),
//! entities built with `create_entity`, systems as `System` impls joining storages (run with
//! `run_now`), `par_join` (rayon) for parallel iteration, a `Dispatcher` for the schedule
//! workload, and `WriteStorage::insert` / `remove` for structural changes.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use specs::prelude::*;

fn simple_world(n: usize, transform: glam::Mat4) -> World {
    let mut world = World::new();
    world.register::<Transform>();
    world.register::<Position>();
    world.register::<Rotation>();
    world.register::<Velocity>();
    for _ in 0..n {
        world
            .create_entity()
            .with(Transform(transform))
            .with(Position(START))
            .with(Rotation(START))
            .with(Velocity(START))
            .build();
    }
    world
}

/// simple_insert: `World::new()`, `register`, then `create_entity` per entity.
pub struct SimpleInsert {
    n: usize,
    world: World,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            world: simple_world(0, data::simple_transform()),
        }
    }

    fn run(&mut self) {
        self.world = simple_world(self.n, data::simple_transform());
    }

    fn observe(&mut self) -> Observation {
        let (t, p, r, v) = self.world.system_data::<(
            ReadStorage<Transform>,
            ReadStorage<Position>,
            ReadStorage<Rotation>,
            ReadStorage<Velocity>,
        )>();
        let (count, sum) = count_sum((&t, &p, &r, &v).join(), |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// position += velocity.
struct Advance;

impl<'a> System<'a> for Advance {
    type SystemData = (WriteStorage<'a, Position>, ReadStorage<'a, Velocity>);

    fn run(&mut self, (mut positions, velocities): Self::SystemData) {
        for (p, v) in (&mut positions, &velocities).join() {
            p.0 += v.0;
        }
    }
}

/// simple_iter: the `Advance` system, `run_now`.
pub struct SimpleIter(World);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter(simple_world(n, data::simple_transform()))
    }

    fn run(&mut self) {
        Advance.run_now(&self.0);
    }

    fn observe(&mut self) -> Observation {
        let (p, v) = self
            .0
            .system_data::<(ReadStorage<Position>, ReadStorage<Velocity>)>();
        simple_iter_observation((&p, &v).join().map(|(p, v)| (&p.0, &v.0)))
    }
}

/// Doubles every `Data`.
struct Double;

impl<'a> System<'a> for Double {
    type SystemData = WriteStorage<'a, Data>;

    fn run(&mut self, mut data: Self::SystemData) {
        for d in (&mut data).join() {
            d.0 *= 2.0;
        }
    }
}

/// frag_iter: the `Double` system, `run_now`.
pub struct FragIter(World);

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        world.register::<Data>();
        macro_rules! spawn {
            ($l:ident) => {
                world.register::<frag::$l>();
                for _ in 0..n {
                    world
                        .create_entity()
                        .with(frag::$l(0.0))
                        .with(Data(data::FRAG_DATA))
                        .build();
                }
            };
        }
        crate::for_each_letter!(spawn);
        debug_assert_eq!(world.read_storage::<Data>().count(), LETTERS * n);
        FragIter(world)
    }

    fn run(&mut self) {
        Double.run_now(&self.0);
    }

    fn observe(&mut self) -> Observation {
        let d = self.0.read_storage::<Data>();
        frag_observation((&d).join().map(|d| d.0))
    }
}

/// The heavy_compute work, with `par_join`.
struct Invert;

impl<'a> System<'a> for Invert {
    type SystemData = (WriteStorage<'a, Transform>, WriteStorage<'a, Position>);

    fn run(&mut self, (mut transforms, mut positions): Self::SystemData) {
        (&mut transforms, &mut positions)
            .par_join()
            .for_each(|(t, p)| data::heavy_work(&mut t.0, &mut p.0));
    }
}

/// heavy_compute: the `Invert` system (`par_join`), `run_now`.
pub struct HeavyCompute(World);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute(simple_world(n, data::heavy_transform()))
    }

    fn run(&mut self) {
        Invert.run_now(&self.0);
    }

    fn observe(&mut self) -> Observation {
        let (t, p) = self
            .0
            .system_data::<(ReadStorage<Transform>, ReadStorage<Position>)>();
        heavy_observation((&t, &p).join().map(|(t, p)| (&t.0, &p.0)))
    }
}

/// Swaps the values of two components on every entity that has both.
macro_rules! swap_system {
    ($name:ident, $x:ident, $y:ident) => {
        struct $name;

        impl<'a> System<'a> for $name {
            type SystemData = (WriteStorage<'a, $x>, WriteStorage<'a, $y>);

            fn run(&mut self, (mut xs, mut ys): Self::SystemData) {
                for (x, y) in (&mut xs, &mut ys).join() {
                    std::mem::swap(&mut x.0, &mut y.0);
                }
            }
        }
    };
}

swap_system!(SwapAb, A, B);
swap_system!(SwapCd, C, D);
swap_system!(SwapCe, C, E);

/// schedule: a `Dispatcher` of three systems (it runs the ones that do not conflict in
/// parallel on its rayon pool).
pub struct Schedule {
    world: World,
    dispatcher: Dispatcher<'static, 'static>,
}

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let mut world = World::new();
        let mut dispatcher = DispatcherBuilder::new()
            .with(SwapAb, "ab", &[])
            .with(SwapCd, "cd", &[])
            .with(SwapCe, "ce", &[])
            .build();
        dispatcher.setup(&mut world);
        for _ in 0..n {
            world.create_entity().with(A(a)).with(B(b)).build();
        }
        for _ in 0..n {
            world
                .create_entity()
                .with(A(a))
                .with(B(b))
                .with(C(c))
                .build();
        }
        for _ in 0..n {
            world
                .create_entity()
                .with(A(a))
                .with(B(b))
                .with(C(c))
                .with(D(d))
                .build();
        }
        for _ in 0..n {
            world
                .create_entity()
                .with(A(a))
                .with(B(b))
                .with(C(c))
                .with(E(e))
                .build();
        }
        Schedule { world, dispatcher }
    }

    fn run(&mut self) {
        self.dispatcher.dispatch(&self.world);
    }

    fn observe(&mut self) -> Observation {
        let w = &self.world;
        let a = count_sum((&w.read_storage::<A>()).join(), |x| x.0 as f64);
        let b = count_sum((&w.read_storage::<B>()).join(), |x| x.0 as f64);
        let c = count_sum((&w.read_storage::<C>()).join(), |x| x.0 as f64);
        let d = count_sum((&w.read_storage::<D>()).join(), |x| x.0 as f64);
        let e = count_sum((&w.read_storage::<E>()).join(), |x| x.0 as f64);
        schedule_observation([a, b, c, d, e])
    }
}

/// add_remove: `WriteStorage::insert` and `WriteStorage::remove`.
pub struct AddRemove {
    world: World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        world.register::<addrem::A>();
        world.register::<addrem::B>();
        let entities = (0..n)
            .map(|i| {
                world
                    .create_entity()
                    .with(addrem::A(data::add_remove_value(i)))
                    .build()
            })
            .collect();
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        let w = &self.world;
        add_remove_observation(
            (&w.read_storage::<addrem::A>())
                .join()
                .map(|a| a.0 as f64)
                .collect::<Vec<_>>(),
            (&w.read_storage::<addrem::B>())
                .join()
                .map(|b| b.0 as f64)
                .collect::<Vec<_>>(),
        )
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        let mut b = self.world.write_storage::<addrem::B>();
        for (i, &e) in self.entities.iter().enumerate() {
            b.insert(e, addrem::B(data::add_remove_value(i)))
                .expect("a live entity");
        }
    }

    fn remove(&mut self) {
        let mut b = self.world.write_storage::<addrem::B>();
        for &e in &self.entities {
            std::hint::black_box(b.remove(e).expect("an entity with a B"));
        }
    }
}
