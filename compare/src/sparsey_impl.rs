//! sparsey (0.13), as its README and docs recommend: a `World` built with `World::builder()`,
//! registering every component and grouping the components a workload iterates together
//! (`add_group`: grouped components are kept in order at the front of their sparse sets, so
//! the query walks dense arrays), `extend` for bulk spawns, `for_each` / `query_all` for
//! queries, `par_for_each` (the `parallel` feature, rayon) for parallel iteration, and
//! `insert` / `remove` for structural changes. sparsey 0.13 has no scheduler (its systems and
//! resources left the crate in 0.13): the schedule workload runs its three queries one after
//! another, as for hecs.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use sparsey::{Entity, World};

/// The simple_insert / simple_iter world: the four components registered, `Position` and
/// `Velocity` grouped (the pair simple_iter's query reads).
fn simple_layout() -> World {
    World::builder()
        .register::<Transform>()
        .register::<Rotation>()
        .add_group::<(Position, Velocity)>()
        .build()
}

fn spawn_simple(world: &mut World, n: usize, transform: glam::Mat4) {
    world.extend((0..n).map(|_| {
        (
            Transform(transform),
            Position(START),
            Rotation(START),
            Velocity(START),
        )
    }));
}

/// simple_insert: a new world of the simple_iter layout, then `extend`.
pub struct SimpleInsert {
    n: usize,
    world: World,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            world: simple_layout(),
        }
    }

    fn run(&mut self) {
        let mut world = simple_layout();
        spawn_simple(&mut world, self.n, data::simple_transform());
        self.world = world;
    }

    fn observe(&mut self) -> Observation {
        let mut q = self
            .world
            .query_all::<(&Transform, &Position, &Rotation, &Velocity)>();
        let (count, sum) = count_sum(q.iter(), |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: `for_each::<(&mut Position, &Velocity)>` over the (Position, Velocity) group.
pub struct SimpleIter(World);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        let mut world = simple_layout();
        spawn_simple(&mut world, n, data::simple_transform());
        SimpleIter(world)
    }

    fn run(&mut self) {
        self.0
            .for_each::<(&mut Position, &Velocity)>(|(p, v)| p.0 += v.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.0.query_all::<(&Position, &Velocity)>();
        simple_iter_observation(q.iter().map(|(p, v)| (&p.0, &v.0)))
    }
}

/// frag_iter: `for_each::<&mut Data>` over the one sparse set of `Data` (a single component
/// is always iterated densely; no group applies).
pub struct FragIter(World);

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut builder = World::builder();
        builder.register::<Data>();
        macro_rules! register {
            ($l:ident) => {
                builder.register::<frag::$l>();
            };
        }
        crate::for_each_letter!(register);
        let mut world = builder.build();
        macro_rules! spawn {
            ($l:ident) => {
                world.extend((0..n).map(|_| (frag::$l(0.0), Data(data::FRAG_DATA))));
            };
        }
        crate::for_each_letter!(spawn);
        debug_assert_eq!(world.entities().len(), LETTERS * n);
        FragIter(world)
    }

    fn run(&mut self) {
        self.0.for_each::<&mut Data>(|d| d.0 *= 2.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.0.query_all::<&Data>();
        frag_observation(q.iter().map(|d| d.0))
    }
}

/// heavy_compute: `par_for_each::<(&mut Transform, &mut Position)>` (rayon) over the
/// (Transform, Position) group.
pub struct HeavyCompute(World);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        let mut world = World::builder()
            .register::<Rotation>()
            .register::<Velocity>()
            .add_group::<(Transform, Position)>()
            .build();
        spawn_simple(&mut world, n, data::heavy_transform());
        HeavyCompute(world)
    }

    fn run(&mut self) {
        self.0
            .par_for_each::<(&mut Transform, &mut Position)>(|(t, p)| {
                data::heavy_work(&mut t.0, &mut p.0)
            });
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.0.query_all::<(&Transform, &Position)>();
        heavy_observation(q.iter().map(|(t, p)| (&t.0, &p.0)))
    }
}

/// schedule: three `for_each` queries one after another (no scheduler in sparsey 0.13). The
/// (A, B) and (C, D) pairs are grouped; (C, E) cannot be grouped as well (group families may
/// not share a component unless one group contains the other), so `ce` joins the sparse sets.
pub struct Schedule(World);

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
        let mut world = World::builder()
            .add_group::<(A, B)>()
            .add_group::<(C, D)>()
            .register::<E>()
            .build();
        world.extend((0..n).map(|_| (a, b)));
        world.extend((0..n).map(|_| (a, b, c)));
        world.extend((0..n).map(|_| (a, b, c, d)));
        world.extend((0..n).map(|_| (a, b, c, e)));
        Schedule(world)
    }

    fn run(&mut self) {
        let w = &self.0;
        w.for_each::<(&mut A, &mut B)>(|(a, b)| std::mem::swap(&mut a.0, &mut b.0));
        w.for_each::<(&mut C, &mut D)>(|(c, d)| std::mem::swap(&mut c.0, &mut d.0));
        w.for_each::<(&mut C, &mut E)>(|(c, e)| std::mem::swap(&mut c.0, &mut e.0));
    }

    fn observe(&mut self) -> Observation {
        let w = &self.0;
        schedule_observation([
            count_sum(w.query_all::<&A>().iter(), |x| x.0 as f64),
            count_sum(w.query_all::<&B>().iter(), |x| x.0 as f64),
            count_sum(w.query_all::<&C>().iter(), |x| x.0 as f64),
            count_sum(w.query_all::<&D>().iter(), |x| x.0 as f64),
            count_sum(w.query_all::<&E>().iter(), |x| x.0 as f64),
        ])
    }
}

/// add_remove: `insert(e, (B,))` and `remove::<(B,)>(e)`; `A` and `B` registered, not grouped
/// (the workload never iterates them together, and a group would add reordering to every
/// insert and remove).
pub struct AddRemove {
    world: World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::builder()
            .register::<addrem::A>()
            .register::<addrem::B>()
            .build();
        let entities = world
            .extend((0..n).map(|i| (addrem::A(data::add_remove_value(i)),)))
            .to_vec();
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        let w = &self.world;
        let a: Vec<f64> = w
            .query_all::<&addrem::A>()
            .iter()
            .map(|a| a.0 as f64)
            .collect();
        let b: Vec<f64> = w
            .query_all::<&addrem::B>()
            .iter()
            .map(|b| b.0 as f64)
            .collect();
        add_remove_observation(a, b)
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            let added = self
                .world
                .insert(e, (addrem::B(data::add_remove_value(i)),));
            assert!(added, "a live entity");
        }
    }

    fn remove(&mut self) {
        for &e in &self.entities {
            let (b,) = self.world.remove::<(addrem::B,)>(e);
            std::hint::black_box(b.expect("an entity with a B"));
        }
    }
}
