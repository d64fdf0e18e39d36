//! hecs, as its documentation recommends: `spawn_batch` for bulk spawns, `PreparedQuery` for
//! queries run every frame, `iter_batched` with rayon for parallel iteration, `insert_one` /
//! `remove_one` for structural changes. hecs has no scheduler: the schedule workload runs its
//! three queries one after another.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, SaveRestoreSteps, Workload};
use hecs::{Component, Entity, PreparedQuery, World};
use rayon::prelude::*;

fn simple_world(n: usize, transform: glam::Mat4) -> World {
    let mut world = World::new();
    world.spawn_batch((0..n).map(|_| {
        (
            Transform(transform),
            Position(START),
            Rotation(START),
            Velocity(START),
        )
    }));
    world
}

/// simple_insert: `World::new()`, then `spawn_batch`.
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
        let mut query = self
            .world
            .query::<(&Transform, &Position, &Rotation, &Velocity)>();
        let (count, sum) = count_sum(query.iter(), |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: a prepared `(&mut Position, &Velocity)` query.
pub struct SimpleIter {
    world: World,
    query: PreparedQuery<(&'static mut Position, &'static Velocity)>,
}

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter {
            world: simple_world(n, data::simple_transform()),
            query: PreparedQuery::new(),
        }
    }

    fn run(&mut self) {
        for (p, v) in self.query.query_mut(&mut self.world) {
            p.0 += v.0;
        }
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.world.query::<(&Position, &Velocity)>();
        simple_iter_observation(q.iter().map(|(p, v)| (&p.0, &v.0)))
    }
}

/// frag_iter: a prepared `&mut Data` query over 26 archetypes.
pub struct FragIter {
    world: World,
    query: PreparedQuery<&'static mut Data>,
}

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        macro_rules! spawn {
            ($l:ident) => {
                world.spawn_batch((0..n).map(|_| (frag::$l(0.0), Data(data::FRAG_DATA))));
            };
        }
        crate::for_each_letter!(spawn);
        debug_assert_eq!(world.len() as usize, LETTERS * n);
        FragIter {
            world,
            query: PreparedQuery::new(),
        }
    }

    fn run(&mut self) {
        for d in self.query.query_mut(&mut self.world) {
            d.0 *= 2.0;
        }
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.world.query::<&Data>();
        frag_observation(q.iter().map(|d| d.0))
    }
}

/// heavy_compute: `iter_batched(64)` bridged into rayon, the parallel iteration hecs documents.
pub struct HeavyCompute(World);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute(simple_world(n, data::heavy_transform()))
    }

    fn run(&mut self) {
        self.0
            .query_mut::<(&mut Transform, &mut Position)>()
            .into_iter_batched(64)
            .par_bridge()
            .for_each(|batch| {
                for (t, p) in batch {
                    data::heavy_work(&mut t.0, &mut p.0);
                }
            });
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.0.query::<(&Transform, &Position)>();
        heavy_observation(q.iter().map(|(t, p)| (&t.0, &p.0)))
    }
}

/// schedule: three prepared queries, one after another (hecs has no scheduler).
pub struct Schedule {
    world: World,
    ab: PreparedQuery<(&'static mut A, &'static mut B)>,
    cd: PreparedQuery<(&'static mut C, &'static mut D)>,
    ce: PreparedQuery<(&'static mut C, &'static mut E)>,
}

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
        let mut world = World::new();
        world.spawn_batch((0..n).map(|_| (a, b)));
        world.spawn_batch((0..n).map(|_| (a, b, c)));
        world.spawn_batch((0..n).map(|_| (a, b, c, d)));
        world.spawn_batch((0..n).map(|_| (a, b, c, e)));
        Schedule {
            world,
            ab: PreparedQuery::new(),
            cd: PreparedQuery::new(),
            ce: PreparedQuery::new(),
        }
    }

    fn run(&mut self) {
        for (a, b) in self.ab.query_mut(&mut self.world) {
            std::mem::swap(&mut a.0, &mut b.0);
        }
        for (c, d) in self.cd.query_mut(&mut self.world) {
            std::mem::swap(&mut c.0, &mut d.0);
        }
        for (c, e) in self.ce.query_mut(&mut self.world) {
            std::mem::swap(&mut c.0, &mut e.0);
        }
    }

    fn observe(&mut self) -> Observation {
        let w = &self.world;
        let a = count_sum(w.query::<&A>().iter(), |x| x.0 as f64);
        let b = count_sum(w.query::<&B>().iter(), |x| x.0 as f64);
        let c = count_sum(w.query::<&C>().iter(), |x| x.0 as f64);
        let d = count_sum(w.query::<&D>().iter(), |x| x.0 as f64);
        let e = count_sum(w.query::<&E>().iter(), |x| x.0 as f64);
        schedule_observation([a, b, c, d, e])
    }
}

/// add_remove: `insert_one` and `remove_one`.
pub struct AddRemove {
    world: World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        let entities = world
            .spawn_batch((0..n).map(|i| (addrem::A(data::add_remove_value(i)),)))
            .collect();
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        let a: Vec<f64> = self
            .world
            .query::<&addrem::A>()
            .iter()
            .map(|a| a.0 as f64)
            .collect();
        let b: Vec<f64> = self
            .world
            .query::<&addrem::B>()
            .iter()
            .map(|b| b.0 as f64)
            .collect();
        add_remove_observation(a, b)
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.world
                .insert_one(e, addrem::B(data::add_remove_value(i)))
                .expect("a live entity");
        }
    }

    fn remove(&mut self) {
        for &e in &self.entities {
            std::hint::black_box(
                self.world
                    .remove_one::<addrem::B>(e)
                    .expect("an entity with a B"),
            );
        }
    }
}

/// Appends the `T` column of every archetype that has one to `saved` (cleared first, its
/// allocation kept).
fn save_column<T: Component + Clone>(world: &World, saved: &mut Vec<T>) {
    saved.clear();
    for archetype in world.archetypes() {
        if let Some(column) = archetype.get::<&T>() {
            saved.extend_from_slice(&column);
        }
    }
}

/// Writes `saved` back over the `T` columns, archetype by archetype in the order
/// [`save_column`] read them (the archetypes and their rows as they were at the save).
fn restore_column<T: Component + Clone>(world: &World, saved: &[T]) {
    let mut at = 0;
    for archetype in world.archetypes() {
        if let Some(mut column) = archetype.get::<&mut T>() {
            let len = column.len();
            column.clone_from_slice(&saved[at..at + len]);
            at += len;
        }
    }
    assert_eq!(at, saved.len(), "the archetypes changed since the save");
}

/// save_restore: per archetype, each component's column copied into a `Vec` kept between
/// saves (`Archetype::get::<&T>()`), and copied back through `get::<&mut T>()`. This restores
/// values, not structure: a frame that spawned or despawned would need the archetypes rebuilt
/// (`spawn_column_batch_at`, as hecs' cloning example does).
pub struct SaveRestore {
    world: World,
    transform: Vec<Transform>,
    position: Vec<Position>,
    rotation: Vec<Rotation>,
    velocity: Vec<Velocity>,
}

impl Workload for SaveRestore {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..n).map(|i| {
            let (t, p, r, v) = data::state_row(i);
            (Transform(t), Position(p), Rotation(r), Velocity(v))
        }));
        SaveRestore {
            world,
            transform: Vec::new(),
            position: Vec::new(),
            rotation: Vec::new(),
            velocity: Vec::new(),
        }
    }

    fn run(&mut self) {
        self.save();
        self.restore();
    }

    fn observe(&mut self) -> Observation {
        let mut query = self
            .world
            .query::<(&Transform, &Position, &Rotation, &Velocity)>();
        data::state_observation(query.iter().map(|(t, p, r, v)| (&t.0, &p.0, &r.0, &v.0)))
    }
}

impl SaveRestoreSteps for SaveRestore {
    fn save(&mut self) {
        save_column(&self.world, &mut self.transform);
        save_column(&self.world, &mut self.position);
        save_column(&self.world, &mut self.rotation);
        save_column(&self.world, &mut self.velocity);
    }

    fn change(&mut self) {
        let query = self
            .world
            .query_mut::<(&mut Transform, &mut Position, &Velocity)>();
        for (t, p, v) in query {
            data::state_change(&mut t.0, &mut p.0, &v.0);
        }
    }

    fn restore(&mut self) {
        restore_column(&self.world, &self.transform);
        restore_column(&self.world, &self.position);
        restore_column(&self.world, &self.rotation);
        restore_column(&self.world, &self.velocity);
    }
}
