//! bevy_ecs (without bevy_app, default features off, `multi_threaded` on), as its
//! documentation recommends: `spawn_batch` for bulk spawns, a cached `QueryState` for queries
//! run every frame outside a schedule, `par_iter_mut` on the `ComputeTaskPool` for parallel
//! iteration, a `Schedule` (multi-threaded executor) of systems for the schedule workload, and
//! `EntityWorldMut::insert` / `take` for structural changes.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, SaveRestoreSteps, Workload};
use bevy_ecs::component::Mutable;
use bevy_ecs::prelude::*;
use bevy_platform::collections::HashMap;
use bevy_tasks::{ComputeTaskPool, TaskPool};

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
        let mut q = self
            .world
            .query::<(&Transform, &Position, &Rotation, &Velocity)>();
        let (count, sum) = count_sum(q.iter(&self.world), |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: a cached `QueryState<(&Velocity, &mut Position)>`.
pub struct SimpleIter {
    world: World,
    query: QueryState<(&'static Velocity, &'static mut Position)>,
}

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        let mut world = simple_world(n, data::simple_transform());
        let query = world.query();
        SimpleIter { world, query }
    }

    fn run(&mut self) {
        self.query
            .iter_mut(&mut self.world)
            .for_each(|(v, mut p)| p.0 += v.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.world.query::<(&Position, &Velocity)>();
        simple_iter_observation(q.iter(&self.world).map(|(p, v)| (&p.0, &v.0)))
    }
}

/// frag_iter: a cached `QueryState<&mut Data>` over 26 archetypes.
pub struct FragIter {
    world: World,
    query: QueryState<&'static mut Data>,
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
        let query = world.query();
        FragIter { world, query }
    }

    fn run(&mut self) {
        self.query
            .iter_mut(&mut self.world)
            .for_each(|mut d| d.0 *= 2.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.world.query::<&Data>();
        frag_observation(q.iter(&self.world).map(|d| d.0))
    }
}

/// The pool bevy's parallel queries and multi-threaded executor run on (bevy_app would set it
/// up; without it the user initializes it once).
fn compute_pool() {
    ComputeTaskPool::get_or_init(TaskPool::default);
}

/// heavy_compute: `par_iter_mut` of a cached `QueryState` on the `ComputeTaskPool`.
pub struct HeavyCompute {
    world: World,
    query: QueryState<(&'static mut Transform, &'static mut Position)>,
}

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        compute_pool();
        let mut world = simple_world(n, data::heavy_transform());
        let query = world.query();
        HeavyCompute { world, query }
    }

    fn run(&mut self) {
        self.query
            .par_iter_mut(&mut self.world)
            .for_each(|(mut t, mut p)| data::heavy_work(&mut t.0, &mut p.0));
    }

    fn observe(&mut self) -> Observation {
        let mut q = self.world.query::<(&Transform, &Position)>();
        heavy_observation(q.iter(&self.world).map(|(t, p)| (&t.0, &p.0)))
    }
}

fn ab(mut q: Query<(&mut A, &mut B)>) {
    q.iter_mut()
        .for_each(|(mut a, mut b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn cd(mut q: Query<(&mut C, &mut D)>) {
    q.iter_mut()
        .for_each(|(mut c, mut d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn ce(mut q: Query<(&mut C, &mut E)>) {
    q.iter_mut()
        .for_each(|(mut c, mut e)| std::mem::swap(&mut c.0, &mut e.0));
}

/// schedule: a `Schedule` of three systems; the multi-threaded executor runs `ab` beside the
/// others.
pub struct Schedule {
    world: World,
    schedule: bevy_ecs::schedule::Schedule,
}

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        compute_pool();
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
        let mut world = World::new();
        world.spawn_batch((0..n).map(|_| (a, b)));
        world.spawn_batch((0..n).map(|_| (a, b, c)));
        world.spawn_batch((0..n).map(|_| (a, b, c, d)));
        world.spawn_batch((0..n).map(|_| (a, b, c, e)));
        let mut schedule = bevy_ecs::schedule::Schedule::default();
        schedule.add_systems((ab, cd, ce));
        schedule
            .initialize(&mut world)
            .expect("a schedule that builds");
        Schedule { world, schedule }
    }

    fn run(&mut self) {
        self.schedule.run(&mut self.world);
    }

    fn observe(&mut self) -> Observation {
        let w = &mut self.world;
        let a = count_sum(w.query::<&A>().iter(w), |x| x.0 as f64);
        let b = count_sum(w.query::<&B>().iter(w), |x| x.0 as f64);
        let c = count_sum(w.query::<&C>().iter(w), |x| x.0 as f64);
        let d = count_sum(w.query::<&D>().iter(w), |x| x.0 as f64);
        let e = count_sum(w.query::<&E>().iter(w), |x| x.0 as f64);
        schedule_observation([a, b, c, d, e])
    }
}

/// add_remove: `entity_mut(e).insert(B)` and `entity_mut(e).take::<B>()`.
pub struct AddRemove {
    world: World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        let entities = world
            .spawn_batch((0..n).map(|i| addrem::A(data::add_remove_value(i))))
            .collect();
        AddRemove { world, entities }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        let w = &mut self.world;
        let a: Vec<f64> = w
            .query::<&addrem::A>()
            .iter(w)
            .map(|a| a.0 as f64)
            .collect();
        let b: Vec<f64> = w
            .query::<&addrem::B>()
            .iter(w)
            .map(|b| b.0 as f64)
            .collect();
        add_remove_observation(a, b)
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.world
                .entity_mut(e)
                .insert(addrem::B(data::add_remove_value(i)));
        }
    }

    fn remove(&mut self) {
        for &e in &self.entities {
            std::hint::black_box(
                self.world
                    .entity_mut(e)
                    .take::<addrem::B>()
                    .expect("an entity with a B"),
            );
        }
    }
}

/// save_restore: the id bevy_ggrs gives each entity it rolls back (its `Rollback` component),
/// the key of its snapshots.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rollback(u32);

/// One registered component's snapshot, as bevy_ggrs' `ComponentSnapshotPlugin` with
/// `CloneStrategy` keeps it: a new map from rollback id to a clone of the value at each save,
/// written back entity by entity at a load (removed where the snapshot has none, inserted
/// where the entity has none).
struct Snapshot<C: Component<Mutability = Mutable>> {
    saving: QueryState<(&'static Rollback, &'static C)>,
    loading: QueryState<(Entity, &'static Rollback, Option<&'static mut C>)>,
    values: HashMap<Rollback, C>,
}

impl<C: Component<Mutability = Mutable> + Clone> Snapshot<C> {
    fn new(world: &mut World) -> Self {
        Snapshot {
            saving: world.query(),
            loading: world.query(),
            values: HashMap::default(),
        }
    }

    fn save(&mut self, world: &World) {
        self.values = self
            .saving
            .iter(world)
            .map(|(&rollback, c)| (rollback, c.clone()))
            .collect();
    }

    fn load(&mut self, world: &mut World) {
        let mut removed = Vec::new();
        let mut inserted = Vec::new();
        for (entity, rollback, component) in self.loading.iter_mut(world) {
            match (component, self.values.get(rollback)) {
                (Some(mut component), Some(saved)) => *component = saved.clone(),
                (Some(_), None) => removed.push(entity),
                (None, Some(saved)) => inserted.push((entity, saved.clone())),
                (None, None) => {}
            }
        }
        for entity in removed {
            world.entity_mut(entity).remove::<C>();
        }
        for (entity, value) in inserted {
            world.entity_mut(entity).insert(value);
        }
    }
}

/// save_restore: each entity carries a `Rollback` id; every registered component is cloned
/// per entity into a map keyed by it and written back through a query, as bevy_ggrs does.
pub struct SaveRestore {
    world: World,
    transform: Snapshot<Transform>,
    position: Snapshot<Position>,
    rotation: Snapshot<Rotation>,
    velocity: Snapshot<Velocity>,
}

impl Workload for SaveRestore {
    fn new(n: usize) -> Self {
        let mut world = World::new();
        world.spawn_batch((0..n).map(|i| {
            let (t, p, r, v) = data::state_row(i);
            (
                Transform(t),
                Position(p),
                Rotation(r),
                Velocity(v),
                Rollback(i as u32),
            )
        }));
        SaveRestore {
            transform: Snapshot::new(&mut world),
            position: Snapshot::new(&mut world),
            rotation: Snapshot::new(&mut world),
            velocity: Snapshot::new(&mut world),
            world,
        }
    }

    fn run(&mut self) {
        self.save();
        self.restore();
    }

    fn observe(&mut self) -> Observation {
        let mut q = self
            .world
            .query::<(&Transform, &Position, &Rotation, &Velocity)>();
        data::state_observation(
            q.iter(&self.world)
                .map(|(t, p, r, v)| (&t.0, &p.0, &r.0, &v.0)),
        )
    }
}

impl SaveRestoreSteps for SaveRestore {
    fn save(&mut self) {
        self.transform.save(&self.world);
        self.position.save(&self.world);
        self.rotation.save(&self.world);
        self.velocity.save(&self.world);
    }

    fn change(&mut self) {
        let mut q = self
            .world
            .query::<(&mut Transform, &mut Position, &Velocity)>();
        for (mut t, mut p, v) in q.iter_mut(&mut self.world) {
            data::state_change(&mut t.0, &mut p.0, &v.0);
        }
    }

    fn restore(&mut self) {
        self.transform.load(&mut self.world);
        self.position.load(&mut self.world);
        self.rotation.load(&mut self.world);
        self.velocity.load(&mut self.world);
    }
}
