//! The floor: one `Vec` per field, no entities, no library. Each workload written as the hand
//! loop over those `Vec`s that does the least work (rows in blocks of 4 where that lets the
//! compiler vectorise a row whole; rayon for heavy_compute); ratios are taken to it.

use crate::data::{self, LETTERS, SCHEDULE_START, START};
use crate::{count_sum, AddRemoveSteps, Observation, SaveRestoreSteps, Workload};
use glam::{Mat4, Vec3};
use rayon::prelude::*;

/// simple_insert / simple_iter / heavy_compute data: one `Vec` per field.
#[derive(Default)]
pub struct Fields {
    transform: Vec<Mat4>,
    position: Vec<Vec3>,
    rotation: Vec<Vec3>,
    velocity: Vec<Vec3>,
}

impl Fields {
    fn with(n: usize, transform: Mat4) -> Self {
        let mut f = Fields {
            transform: Vec::with_capacity(n),
            position: Vec::with_capacity(n),
            rotation: Vec::with_capacity(n),
            velocity: Vec::with_capacity(n),
        };
        for _ in 0..n {
            f.transform.push(transform);
            f.position.push(START);
            f.rotation.push(START);
            f.velocity.push(START);
        }
        f
    }
}

/// save_restore: the fields of [`data::state_row`] for `n` entities.
fn state_fields(n: usize) -> Fields {
    let mut f = Fields::default();
    for i in 0..n {
        let (t, p, r, v) = data::state_row(i);
        f.transform.push(t);
        f.position.push(p);
        f.rotation.push(r);
        f.velocity.push(v);
    }
    f
}

/// simple_insert: fresh `Vec`s, reserved, then pushed.
pub struct SimpleInsert {
    n: usize,
    fields: Fields,
}

impl Workload for SimpleInsert {
    fn new(n: usize) -> Self {
        SimpleInsert {
            n,
            fields: Fields::default(),
        }
    }

    fn run(&mut self) {
        self.fields = Fields::with(self.n, data::simple_transform());
    }

    fn observe(&mut self) -> Observation {
        let f = &self.fields;
        let (count, sum) = count_sum(0..f.position.len(), |i| {
            data::insert_row(
                &f.transform[i],
                &f.position[i],
                &f.rotation[i],
                &f.velocity[i],
            )
        });
        vec![("entities", count), ("sum", sum)]
    }
}

/// simple_iter: `position[i] += velocity[i]`.
pub struct SimpleIter(Fields);

impl Workload for SimpleIter {
    fn new(n: usize) -> Self {
        SimpleIter(Fields::with(n, data::simple_transform()))
    }

    fn run(&mut self) {
        advance_in_blocks(&mut self.0.position, &self.0.velocity);
    }

    fn observe(&mut self) -> Observation {
        simple_iter_observation(self.0.position.iter().zip(&self.0.velocity))
    }
}

/// position += velocity in blocks of 4 rows, which the compiler vectorises whole (sigecs's
/// passes walk rows so): the least work, where a plain zip of the two `Vec`s leaves each row
/// scalar. The slices are arguments of their own, so the compiler knows they do not overlap.
// Not inlined: inlined into a loop over one struct's fields, the slices lose their
// no-overlap guarantee and the blocks stay scalar.
#[inline(never)]
fn advance_in_blocks(positions: &mut [Vec3], velocities: &[Vec3]) {
    let velocities = &velocities[..positions.len()];
    let (p_blocks, p_rest) = positions.as_chunks_mut::<4>();
    let (v_blocks, v_rest) = velocities.as_chunks::<4>();
    for (p, v) in p_blocks.iter_mut().zip(v_blocks) {
        for k in 0..4 {
            p[k] += v[k];
        }
    }
    for (p, v) in p_rest.iter_mut().zip(v_rest) {
        *p += *v;
    }
}

/// The observation of simple_iter: entities with position and velocity, sums of their x.
pub fn simple_iter_observation<'a>(
    rows: impl Iterator<Item = (&'a Vec3, &'a Vec3)>,
) -> Observation {
    let mut count = 0.0;
    let (mut p_sum, mut v_sum) = (0.0, 0.0);
    for (p, v) in rows {
        count += 1.0;
        p_sum += p.x as f64;
        v_sum += v.x as f64;
    }
    vec![
        ("entities", count),
        ("position.x", p_sum),
        ("velocity.x", v_sum),
    ]
}

/// frag_iter: one `Vec` of all 520 entities' `Data` (the physical floor: the values every
/// implementation doubles, packed in one array), one `Vec` per letter beside it (not read).
pub struct FragIter {
    data: Vec<f32>,
    _letters: Vec<Vec<f32>>,
}

impl Workload for FragIter {
    fn new(n: usize) -> Self {
        FragIter {
            data: vec![data::FRAG_DATA; LETTERS * n],
            _letters: (0..LETTERS).map(|_| vec![0.0; n]).collect(),
        }
    }

    fn run(&mut self) {
        for d in &mut self.data {
            *d *= 2.0;
        }
    }

    fn observe(&mut self) -> Observation {
        frag_observation(self.data.iter().copied())
    }
}

/// frag_iter, second floor: one `Vec` of `Data` per component set (26 `Vec`s of 20), a loop
/// over each in blocks of 4: the least an archetype design (one table per set) must do, without its per-table
/// bookkeeping. Ratios stay relative to the one-`Vec` floor ([`FragIter`]).
pub struct FragIterPerSet {
    data: Vec<Vec<f32>>,
}

impl Workload for FragIterPerSet {
    fn new(n: usize) -> Self {
        FragIterPerSet {
            data: (0..LETTERS).map(|_| vec![data::FRAG_DATA; n]).collect(),
        }
    }

    fn run(&mut self) {
        // Each set in blocks of 4 values: 20 values are 5 vector operations, where a plain
        // loop takes 16 in vectors and the last 4 one by one.
        for set in &mut self.data {
            let (blocks, rest) = set.as_chunks_mut::<4>();
            for block in blocks {
                for d in block {
                    *d *= 2.0;
                }
            }
            for d in rest {
                *d *= 2.0;
            }
        }
    }

    fn observe(&mut self) -> Observation {
        frag_observation(self.data.iter().flatten().copied())
    }
}

/// The observation of frag_iter: entities with a `Data`, and the sum of `Data`.
pub fn frag_observation(data: impl IntoIterator<Item = f32>) -> Observation {
    let (count, sum) = count_sum(data, |d| d as f64);
    vec![("entities", count), ("data", sum)]
}

/// heavy_compute: a rayon loop over the transform and position `Vec`s.
pub struct HeavyCompute(Fields);

impl Workload for HeavyCompute {
    fn new(n: usize) -> Self {
        HeavyCompute(Fields::with(n, data::heavy_transform()))
    }

    fn run(&mut self) {
        self.0
            .transform
            .par_iter_mut()
            .zip(self.0.position.par_iter_mut())
            .for_each(|(t, p)| data::heavy_work(t, p));
    }

    fn observe(&mut self) -> Observation {
        heavy_observation(self.0.transform.iter().zip(&self.0.position))
    }
}

/// The observation of heavy_compute: entities with transform and position, the sum of the
/// matrices' `y_axis.z` (the sine of their rotation angle) and of the positions' coordinates.
pub fn heavy_observation<'a>(rows: impl Iterator<Item = (&'a Mat4, &'a Vec3)>) -> Observation {
    let (mut count, mut sine, mut position) = (0.0, 0.0, 0.0);
    for (t, p) in rows {
        let (s, q) = data::heavy_row(t, p);
        count += 1.0;
        sine += s;
        position += q;
    }
    vec![("entities", count), ("sine", sine), ("position", position)]
}

/// schedule: one `Vec` per component over all 40,000 entities, in the order (A,B) × n,
/// (A,B,C) × n, (A,B,C,D) × n, (A,B,C,E) × n. `c[n..2n]` belongs to the (A,B,C,D) entities
/// and `c[2n..3n]` to the (A,B,C,E) ones.
pub struct Schedule {
    n: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    d: Vec<f32>,
    e: Vec<f32>,
}

fn swap_all(x: &mut [f32], y: &mut [f32]) {
    for (x, y) in x.iter_mut().zip(y) {
        std::mem::swap(x, y);
    }
}

impl Workload for Schedule {
    fn new(n: usize) -> Self {
        let [a, b, c, d, e] = SCHEDULE_START;
        Schedule {
            n,
            a: vec![a; 4 * n],
            b: vec![b; 4 * n],
            c: vec![c; 3 * n],
            d: vec![d; n],
            e: vec![e; n],
        }
    }

    fn run(&mut self) {
        let n = self.n;
        swap_all(&mut self.a, &mut self.b);
        swap_all(&mut self.c[n..2 * n], &mut self.d);
        swap_all(&mut self.c[2 * n..3 * n], &mut self.e);
    }

    fn observe(&mut self) -> Observation {
        schedule_observation(
            [&self.a, &self.b, &self.c, &self.d, &self.e]
                .map(|col| count_sum(col.iter(), |&x| x as f64)),
        )
    }
}

/// The observation of schedule: count and sum of each of A, B, C, D, E.
pub fn schedule_observation(cols: [(f64, f64); 5]) -> Observation {
    const NAMES: [(&str, &str); 5] = [
        ("A count", "A sum"),
        ("B count", "B sum"),
        ("C count", "C sum"),
        ("D count", "D sum"),
        ("E count", "E sum"),
    ];
    let mut out = Vec::new();
    for ((count_name, sum_name), (count, sum)) in NAMES.into_iter().zip(cols) {
        out.push((count_name, count));
        out.push((sum_name, sum));
    }
    out
}

/// add_remove: `A` in a `Vec`, `B` in a `Vec<Option<_>>` indexed by entity: the data
/// movement itself, with no tables to move between.
pub struct AddRemove {
    a: Vec<f32>,
    b: Vec<Option<f32>>,
}

impl Workload for AddRemove {
    fn new(n: usize) -> Self {
        AddRemove {
            a: (0..n).map(data::add_remove_value).collect(),
            b: vec![None; n],
        }
    }

    fn run(&mut self) {
        self.add();
        self.remove();
    }

    fn observe(&mut self) -> Observation {
        add_remove_observation(
            self.a.iter().map(|&a| a as f64),
            self.b.iter().flatten().map(|&b| b as f64),
        )
    }
}

impl AddRemoveSteps for AddRemove {
    fn add(&mut self) {
        for (i, b) in self.b.iter_mut().enumerate() {
            *b = Some(data::add_remove_value(i));
        }
    }

    fn remove(&mut self) {
        for b in &mut self.b {
            std::hint::black_box(b.take());
        }
    }
}

/// The observation of add_remove: count and sum of A, count and sum of B.
pub fn add_remove_observation(
    a: impl IntoIterator<Item = f64>,
    b: impl IntoIterator<Item = f64>,
) -> Observation {
    let (a_count, a_sum) = count_sum(a, |x| x);
    let (b_count, b_sum) = count_sum(b, |x| x);
    vec![
        ("A count", a_count),
        ("A sum", a_sum),
        ("B count", b_count),
        ("B sum", b_sum),
    ]
}

/// save_restore: each field's `Vec` copied into a `Vec` kept between saves, and copied back:
/// a memcpy of the live bytes each way.
pub struct SaveRestore {
    live: Fields,
    saved: Fields,
}

impl Workload for SaveRestore {
    fn new(n: usize) -> Self {
        SaveRestore {
            live: state_fields(n),
            saved: Fields::default(),
        }
    }

    fn run(&mut self) {
        self.save();
        self.restore();
    }

    fn observe(&mut self) -> Observation {
        let f = &self.live;
        data::state_observation(
            (f.transform.iter().zip(&f.position))
                .zip(f.rotation.iter().zip(&f.velocity))
                .map(|((t, p), (r, v))| (t, p, r, v)),
        )
    }
}

impl SaveRestoreSteps for SaveRestore {
    fn save(&mut self) {
        fn copy<T: Copy>(from: &[T], to: &mut Vec<T>) {
            to.clear();
            to.extend_from_slice(from);
        }
        copy(&self.live.transform, &mut self.saved.transform);
        copy(&self.live.position, &mut self.saved.position);
        copy(&self.live.rotation, &mut self.saved.rotation);
        copy(&self.live.velocity, &mut self.saved.velocity);
    }

    fn change(&mut self) {
        let f = &mut self.live;
        for ((t, p), v) in f.transform.iter_mut().zip(&mut f.position).zip(&f.velocity) {
            data::state_change(t, p, v);
        }
    }

    fn restore(&mut self) {
        let (live, saved) = (&mut self.live, &self.saved);
        live.transform.copy_from_slice(&saved.transform);
        live.position.copy_from_slice(&saved.position);
        live.rotation.copy_from_slice(&saved.rotation);
        live.velocity.copy_from_slice(&saved.velocity);
    }
}
