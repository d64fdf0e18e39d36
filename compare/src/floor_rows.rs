//! The second floor: one `Vec` of row structs per workload, no entities, no library (the
//! array-of-structures layout a hand-written game loop often starts from).

use crate::data::{self, LETTERS, SCHEDULE_START, START};
use crate::floor_vecs::{
    add_remove_observation, frag_observation, heavy_observation, schedule_observation,
    simple_iter_observation,
};
use crate::{count_sum, AddRemoveSteps, Observation, Workload};
use glam::{Mat4, Vec3};
use rayon::prelude::*;

/// One simple_insert / simple_iter / heavy_compute entity.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Row {
    transform: Mat4,
    position: Vec3,
    rotation: Vec3,
    velocity: Vec3,
}

fn rows(n: usize, transform: Mat4) -> Vec<Row> {
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        rows.push(Row {
            transform,
            position: START,
            rotation: START,
            velocity: START,
        });
    }
    rows
}

/// simple_insert: a fresh `Vec`, reserved, then pushed.
pub struct SimpleInsert {
    n: usize,
    rows: Vec<Row>,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            rows: Vec::new(),
        }
    }

    fn run(&mut self) {
        self.rows = rows(self.n, data::simple_transform());
    }

    fn observe(&mut self) -> Observation {
        let (count, sum) = count_sum(&self.rows, |r| {
            data::insert_row(&r.transform, &r.position, &r.rotation, &r.velocity)
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: `row.position += row.velocity`.
pub struct SimpleIter(Vec<Row>);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter(rows(n, data::simple_transform()))
    }

    fn run(&mut self) {
        for r in &mut self.0 {
            r.position += r.velocity;
        }
    }

    fn observe(&mut self) -> Observation {
        simple_iter_observation(self.0.iter().map(|r| (&r.position, &r.velocity)))
    }
}

/// One frag_iter entity: its `Data`, which letter it has, and the letter's value.
#[derive(Clone, Copy)]
pub struct FragRow {
    data: f32,
    letter: u8,
    letter_value: f32,
}

/// frag_iter: one `Vec` of every entity's row.
pub struct FragIter(Vec<FragRow>);

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        FragIter(
            (0..LETTERS)
                .flat_map(|letter| {
                    (0..n).map(move |_| FragRow {
                        data: data::FRAG_DATA,
                        letter: letter as u8,
                        letter_value: 0.0,
                    })
                })
                .collect(),
        )
    }

    fn run(&mut self) {
        for r in &mut self.0 {
            r.data *= 2.0;
        }
    }

    fn observe(&mut self) -> Observation {
        debug_assert!(self.0.iter().all(|r| r.letter_value == 0.0));
        debug_assert!(self.0.iter().all(|r| (r.letter as usize) < LETTERS));
        frag_observation(self.0.iter().map(|r| r.data))
    }
}

/// heavy_compute: a rayon loop over the rows.
pub struct HeavyCompute(Vec<Row>);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute(rows(n, data::heavy_transform()))
    }

    fn run(&mut self) {
        self.0
            .par_iter_mut()
            .for_each(|r| data::heavy_work(&mut r.transform, &mut r.position));
    }

    fn observe(&mut self) -> Observation {
        heavy_observation(self.0.iter().map(|r| (&r.transform, &r.position)))
    }
}

const HAS_C: u8 = 1;
const HAS_D: u8 = 2;
const HAS_E: u8 = 4;

/// One schedule entity: every component's slot, and which of C, D, E it has.
#[derive(Clone, Copy)]
pub struct ScheduleRow {
    a: f32,
    b: f32,
    c: f32,
    d: f32,
    e: f32,
    has: u8,
}

/// schedule: one `Vec` of rows, one pass that runs the three swaps where they apply.
pub struct Schedule(Vec<ScheduleRow>);

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        let kinds = [0, HAS_C, HAS_C | HAS_D, HAS_C | HAS_E];
        Schedule(
            kinds
                .into_iter()
                .flat_map(|has| (0..n).map(move |_| ScheduleRow { a, b, c, d, e, has }))
                .collect(),
        )
    }

    fn run(&mut self) {
        for r in &mut self.0 {
            std::mem::swap(&mut r.a, &mut r.b);
            if r.has & (HAS_C | HAS_D) == HAS_C | HAS_D {
                std::mem::swap(&mut r.c, &mut r.d);
            }
            if r.has & (HAS_C | HAS_E) == HAS_C | HAS_E {
                std::mem::swap(&mut r.c, &mut r.e);
            }
        }
    }

    fn observe(&mut self) -> Observation {
        let rows = &self.0;
        let col = |flag: u8, get: fn(&ScheduleRow) -> f32| {
            count_sum(rows.iter().filter(|r| r.has & flag == flag), |r| {
                get(r) as f64
            })
        };
        schedule_observation([
            col(0, |r| r.a),
            col(0, |r| r.b),
            col(HAS_C, |r| r.c),
            col(HAS_D, |r| r.d),
            col(HAS_E, |r| r.e),
        ])
    }
}

/// One add_remove entity.
#[derive(Clone, Copy)]
pub struct AddRemoveRow {
    a: f32,
    b: Option<f32>,
}

/// add_remove: one `Vec` of rows whose `B` slot is set, then cleared.
pub struct AddRemove(Vec<AddRemoveRow>);

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        AddRemove(
            (0..n)
                .map(|i| AddRemoveRow {
                    a: data::add_remove_value(i),
                    b: None,
                })
                .collect(),
        )
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        add_remove_observation(
            self.0.iter().map(|r| r.a as f64),
            self.0.iter().filter_map(|r| r.b).map(|b| b as f64),
        )
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, r) in self.0.iter_mut().enumerate() {
            r.b = Some(data::add_remove_value(i));
        }
    }

    fn remove(&mut self) {
        for r in &mut self.0 {
            std::hint::black_box(r.b.take());
        }
    }
}
