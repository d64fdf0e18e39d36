//! schedule: 10,000 entities each of (A, B), (A, B, C), (A, B, C, D), (A, B, C, E); three
//! systems swap (A, B), (C, D) and (C, E). `run_schedule` runs the build-time stages.

use ecs_core::prelude::*;

/// Component A.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f32);
/// Component B.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f32);
/// Component C.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct C(pub f32);
/// Component D.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct D(pub f32);
/// Component E.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct E(pub f32);

/// (A, B).
#[derive(Signature)]
pub struct Ab {
    pub a: A,
    pub b: B,
}

/// (A, B, C).
#[derive(Signature)]
pub struct Abc {
    pub a: A,
    pub b: B,
    pub c: C,
}

/// (A, B, C, D).
#[derive(Signature)]
pub struct Abcd {
    pub a: A,
    pub b: B,
    pub c: C,
    pub d: D,
}

/// (A, B, C, E).
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
