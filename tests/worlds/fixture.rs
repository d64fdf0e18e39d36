//! A world for the integration and model-based tests: components of awkward kinds (zero-sized,
//! drop-counting, 16-byte aligned, cold) in signatures of both layouts, and systems with
//! filters and optional parameters. `build.rs` generates its `World` into `fixture_world.rs`.

#![allow(dead_code)]

use ecs_core::prelude::*;
use std::cell::Cell;

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct A(pub u32);

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct B(pub f64);

/// Zero-sized.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Zst;

/// 16-byte aligned.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
#[repr(align(16))]
pub struct Aligned(pub u64);

/// Cold: kept apart from the hot row in `rows` signatures.
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[component(cold)]
pub struct Label(pub String);

thread_local! {
    /// `Counted` values alive on this thread: +1 on creation, -1 on drop.
    pub static LIVE_COUNTED: Cell<i64> = const { Cell::new(0) };
}

/// Counts its live instances, so tests can prove there is no leak and no double drop.
#[derive(Component, Debug, PartialEq)]
pub struct Counted(pub u32);

impl Counted {
    pub fn new(v: u32) -> Self {
        LIVE_COUNTED.with(|c| c.set(c.get() + 1));
        Counted(v)
    }
    pub fn live() -> i64 {
        LIVE_COUNTED.with(|c| c.get())
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.0)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE_COUNTED.with(|c| c.set(c.get() - 1));
    }
}

#[derive(Signature, Clone, Debug, PartialEq)]
pub struct JustA {
    pub a: A,
}

#[derive(Signature, Clone, Debug, PartialEq)]
pub struct AB {
    pub a: A,
    pub b: B,
}

#[derive(Signature, Clone, Debug, PartialEq)]
pub struct ABZst {
    pub a: A,
    pub b: B,
    pub zst: Zst,
}

#[derive(Signature, Clone, Debug, PartialEq)]
#[signature(layout = "rows")]
pub struct ACounted {
    pub a: A,
    pub counted: Counted,
}

#[derive(Signature, Clone, Debug, PartialEq)]
pub struct BAligned {
    pub b: B,
    pub aligned: Aligned,
}

#[derive(Signature, Clone, Debug, PartialEq)]
#[signature(layout = "rows")]
pub struct Labelled {
    pub a: A,
    pub aligned: Aligned,
    pub label: Label,
}

#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Everything {
    pub a: A,
    pub b: B,
    pub zst: Zst,
    pub counted: Counted,
    pub aligned: Aligned,
    pub label: Label,
}

/// How many rows the last run of `tally` visited.
#[derive(Resource, Default, Debug)]
pub struct Tally {
    pub rows: usize,
    pub sum: u64,
}

/// a += 1 everywhere.
#[system]
pub fn bump_a(a: &mut A) {
    a.0 = a.0.wrapping_add(1);
}

/// b += a, for entities with both.
#[system]
pub fn a_into_b(a: &A, b: &mut B) {
    b.0 += f64::from(a.0);
}

/// b *= 2, except for entities with a Zst.
#[system(without(Zst))]
pub fn double_b(b: &mut B) {
    b.0 *= 2.0;
}

/// aligned += a (or 1 without an A), for entities with an Aligned.
#[system(with(Aligned))]
pub fn aligned_tick(aligned: &mut Aligned, a: Option<&A>) {
    aligned.0 += a.map_or(1, |a| u64::from(a.0));
}

/// Counts rows with a Counted and sums their values and entity indices.
#[system]
pub fn tally(e: Entity, counted: &Counted, tally: &mut Tally) {
    tally.rows += 1;
    tally.sum += u64::from(counted.0) + u64::from(e.index());
}

/// Appends to labels of rows that also have an A (cold access from a rows signature).
#[system]
pub fn relabel(label: &mut Label, a: Option<&mut A>) {
    if let Some(a) = a {
        a.0 += 10;
        label.0.push('!');
    }
}

include!(concat!(env!("OUT_DIR"), "/fixture_world.rs"));
