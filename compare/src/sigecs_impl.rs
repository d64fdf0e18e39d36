//! sigecs, as its README recommends: a world generated at build time per workload
//! (`compare/build.rs`, declarations in [`crate::sigecs_worlds`]), `spawn_batch` for bulk
//! spawns, `#[system]` functions run with `run_<system>()`, the staged `run_schedule()`,
//! `insert`/`remove` for structural changes, and run-time `query` to read results back.

use crate::data::{self, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::sigecs_worlds::{add_remove as ar, frag_iter as fi, heavy_compute as hc};
use crate::sigecs_worlds::{schedule as sc, simple_insert as si, simple_iter as it};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use ecs_core::Entity;

/// simple_insert: `World::new()`, then `spawn_batch`.
pub struct SimpleInsert {
    n: usize,
    world: si::World,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            world: si::World::new(),
        }
    }

    fn run(&mut self) {
        let mut world = si::World::new();
        world.spawn_batch((0..self.n).map(|_| si::Body {
            transform: si::Transform(data::simple_transform()),
            position: si::Position(START),
            rotation: si::Rotation(START),
            velocity: si::Velocity(START),
        }));
        self.world = world;
    }

    fn observe(&mut self) -> Observation {
        let query = self
            .world
            .query::<(&si::Transform, &si::Position, &si::Rotation, &si::Velocity)>();
        let (count, sum) = count_sum(query, |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: the generated `advance` system.
pub struct SimpleIter(it::World);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        let mut world = it::World::new();
        world.spawn_batch((0..n).map(|_| it::Body {
            transform: it::Transform(data::simple_transform()),
            position: it::Position(START),
            rotation: it::Rotation(START),
            velocity: it::Velocity(START),
        }));
        SimpleIter(world)
    }

    fn run(&mut self) {
        self.0.run_advance();
    }

    fn observe(&mut self) -> Observation {
        let query = self.0.query::<(&it::Position, &it::Velocity)>();
        simple_iter_observation(query.map(|(p, v)| (&p.0, &v.0)))
    }
}

/// frag_iter: the generated `double` system over the 26 stores.
pub struct FragIter(fi::World);

macro_rules! spawn_letter {
    ($world:expr, $n:expr, $sig:ident, $letter:ident) => {
        $world.spawn_batch((0..$n).map(|_| fi::$sig {
            data: fi::Data(data::FRAG_DATA),
            letter: fi::$letter(0.0),
        }));
    };
}

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut w = fi::World::new();
        spawn_letter!(w, n, SigA, A);
        spawn_letter!(w, n, SigB, B);
        spawn_letter!(w, n, SigC, C);
        spawn_letter!(w, n, SigD, D);
        spawn_letter!(w, n, SigE, E);
        spawn_letter!(w, n, SigF, F);
        spawn_letter!(w, n, SigG, G);
        spawn_letter!(w, n, SigH, H);
        spawn_letter!(w, n, SigI, I);
        spawn_letter!(w, n, SigJ, J);
        spawn_letter!(w, n, SigK, K);
        spawn_letter!(w, n, SigL, L);
        spawn_letter!(w, n, SigM, M);
        spawn_letter!(w, n, SigN, N);
        spawn_letter!(w, n, SigO, O);
        spawn_letter!(w, n, SigP, P);
        spawn_letter!(w, n, SigQ, Q);
        spawn_letter!(w, n, SigR, R);
        spawn_letter!(w, n, SigS, S);
        spawn_letter!(w, n, SigT, T);
        spawn_letter!(w, n, SigU, U);
        spawn_letter!(w, n, SigV, V);
        spawn_letter!(w, n, SigW, W);
        spawn_letter!(w, n, SigX, X);
        spawn_letter!(w, n, SigY, Y);
        spawn_letter!(w, n, SigZ, Z);
        debug_assert_eq!(w.len(), LETTERS * n);
        FragIter(w)
    }

    fn run(&mut self) {
        self.0.run_double();
    }

    fn observe(&mut self) -> Observation {
        let query = self.0.query::<&fi::Data>();
        frag_observation(query.map(|d| d.0))
    }
}

/// heavy_compute: the generated `invert` system (`min_chunk = 64`), split across rayon's
/// global pool.
pub struct HeavyCompute(hc::World);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        let mut world = hc::World::new();
        world.spawn_batch((0..n).map(|_| hc::Body {
            transform: hc::Transform(data::heavy_transform()),
            position: hc::Position(START),
            rotation: hc::Rotation(START),
            velocity: hc::Velocity(START),
        }));
        HeavyCompute(world)
    }

    fn run(&mut self) {
        self.0.run_invert();
    }

    fn observe(&mut self) -> Observation {
        let query = self.0.query::<(&hc::Transform, &hc::Position)>();
        heavy_observation(query.map(|(t, p)| (&t.0, &p.0)))
    }
}

/// schedule: `run_schedule()`, the stages the generator planned at build time.
pub struct Schedule(sc::World);

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (sc::A(a), sc::B(b), sc::C(c), sc::D(d), sc::E(e));
        let mut w = sc::World::new();
        w.spawn_batch((0..n).map(|_| sc::Ab { a, b }));
        w.spawn_batch((0..n).map(|_| sc::Abc { a, b, c }));
        w.spawn_batch((0..n).map(|_| sc::Abcd { a, b, c, d }));
        w.spawn_batch((0..n).map(|_| sc::Abce { a, b, c, e }));
        Schedule(w)
    }

    fn run(&mut self) {
        self.0.run_schedule();
    }

    fn observe(&mut self) -> Observation {
        let w = &mut self.0;
        let a = count_sum(w.query::<&sc::A>(), |x| x.0 as f64);
        let b = count_sum(w.query::<&sc::B>(), |x| x.0 as f64);
        let c = count_sum(w.query::<&sc::C>(), |x| x.0 as f64);
        let d = count_sum(w.query::<&sc::D>(), |x| x.0 as f64);
        let e = count_sum(w.query::<&sc::E>(), |x| x.0 as f64);
        schedule_observation([a, b, c, d, e])
    }
}

/// add_remove: `insert` and `remove` through the generated transition table.
pub struct AddRemove {
    world: ar::World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = ar::World::new();
        let entities = world.spawn_batch((0..n).map(|i| ar::JustA {
            a: ar::A(data::add_remove_value(i)),
        }));
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        let a: Vec<f64> = self.world.query::<&ar::A>().map(|a| a.0 as f64).collect();
        let b: Vec<f64> = self.world.query::<&ar::B>().map(|b| b.0 as f64).collect();
        add_remove_observation(a, b)
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.world
                .insert(e, ar::B(data::add_remove_value(i)))
                .expect("a declared target set");
        }
    }

    fn remove(&mut self) {
        for &e in &self.entities {
            std::hint::black_box(self.world.remove::<ar::B>(e).expect("an entity with a B"));
        }
    }
}
