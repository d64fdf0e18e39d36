//! legion, as its documentation recommends: `World::extend` with structure-of-arrays input
//! (`into_soa`, the documented fast path for bulk inserts), queries constructed once and kept
//! (they cache their archetype matches), `par_for_each_mut` for parallel iteration, a
//! `Schedule` of `#[system(for_each)]` systems for the schedule workload, and `Entry::
//! add_component` / `remove_component` for structural changes.

use crate::data::frag::{self, Data};
use crate::data::sched::{A, B, C, D, E};
use crate::data::simple::{Position, Rotation, Transform, Velocity};
use crate::data::{self, addrem, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use legion::query::Query;
use legion::storage::IntoSoa;
use legion::{system, Entity, IntoQuery, Resources, World};

fn simple_world(n: usize, transform: glam::Mat4) -> World {
    let mut world = World::default();
    world.extend(
        (
            vec![Transform(transform); n],
            vec![Position(START); n],
            vec![Rotation(START); n],
            vec![Velocity(START); n],
        )
            .into_soa(),
    );
    world
}

/// simple_insert: `World::default()`, then `extend` with `into_soa`.
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
        let mut q = <(&Transform, &Position, &Rotation, &Velocity)>::query();
        let (count, sum) = count_sum(q.iter(&self.world), |(t, p, r, v)| {
            data::insert_row(&t.0, &p.0, &r.0, &v.0)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: a kept `(&Velocity, &mut Position)` query.
pub struct SimpleIter {
    world: World,
    query: Query<(&'static Velocity, &'static mut Position)>,
}

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter {
            world: simple_world(n, data::simple_transform()),
            query: <(&Velocity, &mut Position)>::query(),
        }
    }

    fn run(&mut self) {
        self.query
            .for_each_mut(&mut self.world, |(v, p)| p.0 += v.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = <(&Position, &Velocity)>::query();
        simple_iter_observation(q.iter(&self.world).map(|(p, v)| (&p.0, &v.0)))
    }
}

/// frag_iter: a kept `&mut Data` query over 26 archetypes.
pub struct FragIter {
    world: World,
    query: Query<&'static mut Data>,
}

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        let mut world = World::default();
        macro_rules! spawn {
            ($l:ident) => {
                world.extend((vec![frag::$l(0.0); n], vec![Data(data::FRAG_DATA); n]).into_soa());
            };
        }
        crate::for_each_letter!(spawn);
        debug_assert_eq!(world.len(), LETTERS * n);
        FragIter {
            world,
            query: <&mut Data>::query(),
        }
    }

    fn run(&mut self) {
        self.query.for_each_mut(&mut self.world, |d| d.0 *= 2.0);
    }

    fn observe(&mut self) -> Observation {
        let mut q = <&Data>::query();
        frag_observation(q.iter(&self.world).map(|d| d.0))
    }
}

/// heavy_compute: `par_for_each_mut` of a kept query (rayon).
pub struct HeavyCompute {
    world: World,
    query: Query<(&'static mut Transform, &'static mut Position)>,
}

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute {
            world: simple_world(n, data::heavy_transform()),
            query: <(&mut Transform, &mut Position)>::query(),
        }
    }

    fn run(&mut self) {
        self.query.par_for_each_mut(&mut self.world, |(t, p)| {
            data::heavy_work(&mut t.0, &mut p.0)
        });
    }

    fn observe(&mut self) -> Observation {
        let mut q = <(&Transform, &Position)>::query();
        heavy_observation(q.iter(&self.world).map(|(t, p)| (&t.0, &p.0)))
    }
}

#[system(for_each)]
fn ab(a: &mut A, b: &mut B) {
    std::mem::swap(&mut a.0, &mut b.0);
}

#[system(for_each)]
fn cd(c: &mut C, d: &mut D) {
    std::mem::swap(&mut c.0, &mut d.0);
}

#[system(for_each)]
fn ce(c: &mut C, e: &mut E) {
    std::mem::swap(&mut c.0, &mut e.0);
}

/// schedule: a legion `Schedule` of three `#[system(for_each)]` systems.
pub struct Schedule {
    world: World,
    resources: Resources,
    schedule: legion::Schedule,
}

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let (a, b, c, d, e) = (A(a), B(b), C(c), D(d), E(e));
        let mut world = World::default();
        world.extend((vec![a; n], vec![b; n]).into_soa());
        world.extend((vec![a; n], vec![b; n], vec![c; n]).into_soa());
        world.extend((vec![a; n], vec![b; n], vec![c; n], vec![d; n]).into_soa());
        world.extend((vec![a; n], vec![b; n], vec![c; n], vec![e; n]).into_soa());
        let schedule = legion::Schedule::builder()
            .add_system(ab_system())
            .add_system(cd_system())
            .add_system(ce_system())
            .build();
        Schedule {
            world,
            resources: Resources::default(),
            schedule,
        }
    }

    fn run(&mut self) {
        self.schedule.execute(&mut self.world, &mut self.resources);
    }

    fn observe(&mut self) -> Observation {
        let w = &self.world;
        let a = count_sum(<&A>::query().iter(w), |x| x.0 as f64);
        let b = count_sum(<&B>::query().iter(w), |x| x.0 as f64);
        let c = count_sum(<&C>::query().iter(w), |x| x.0 as f64);
        let d = count_sum(<&D>::query().iter(w), |x| x.0 as f64);
        let e = count_sum(<&E>::query().iter(w), |x| x.0 as f64);
        schedule_observation([a, b, c, d, e])
    }
}

/// add_remove: `entry(e).add_component(B)` and `entry(e).remove_component::<B>()`.
pub struct AddRemove {
    world: World,
    entities: Vec<Entity>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        let mut world = World::default();
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
        let a: Vec<f64> = <&addrem::A>::query().iter(w).map(|a| a.0 as f64).collect();
        let b: Vec<f64> = <&addrem::B>::query().iter(w).map(|b| b.0 as f64).collect();
        add_remove_observation(a, b)
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, &e) in self.entities.iter().enumerate() {
            self.world
                .entry(e)
                .expect("a live entity")
                .add_component(addrem::B(data::add_remove_value(i)));
        }
    }

    fn remove(&mut self) {
        for &e in &self.entities {
            self.world
                .entry(e)
                .expect("a live entity")
                .remove_component::<addrem::B>();
        }
    }
}
