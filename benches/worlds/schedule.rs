//! The ecs_bench_suite "schedule" workload: 10,000 entities each of (A, B), (A, B, C),
//! (A, B, C, D) and (A, B, C, E); three systems swap values of (A, B), (C, D) and (C, E).
//! The generator puts `ab` and `cd` in one stage (no shared component) and `ce` in the next.

use ecs_core::prelude::*;

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct C(pub f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct D(pub f32);
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct E(pub f32);

#[derive(Signature)]
pub struct Ab {
    pub a: A,
    pub b: B,
}

#[derive(Signature)]
pub struct Abc {
    pub a: A,
    pub b: B,
    pub c: C,
}

#[derive(Signature)]
pub struct Abcd {
    pub a: A,
    pub b: B,
    pub c: C,
    pub d: D,
}

#[derive(Signature)]
pub struct Abce {
    pub a: A,
    pub b: B,
    pub c: C,
    pub e: E,
}

/// Swaps A and B.
#[system]
pub fn ab(a: &mut A, b: &mut B) {
    std::mem::swap(&mut a.0, &mut b.0);
}

/// Swaps C and D.
#[system]
pub fn cd(c: &mut C, d: &mut D) {
    std::mem::swap(&mut c.0, &mut d.0);
}

/// Swaps C and E.
#[system]
pub fn ce(c: &mut C, e: &mut E) {
    std::mem::swap(&mut c.0, &mut e.0);
}

include!(concat!(env!("OUT_DIR"), "/schedule.rs"));
