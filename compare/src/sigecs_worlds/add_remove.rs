//! add_remove: every entity has an `A`; the workload adds a `B` to each and removes it again,
//! so each entity moves between the two declared signatures.

use ecs_core::prelude::*;

/// The component every entity keeps.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f32);

/// The component that is added and removed.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f32);

/// An entity with only an `A`.
#[derive(Signature)]
pub struct JustA {
    pub a: A,
}

/// An entity with an `A` and a `B`: where `insert::<B>` moves a `JustA` entity.
#[derive(Signature)]
pub struct AWithB {
    pub a: A,
    pub b: B,
}

/// Not run by the workload; a world declares at least one system.
#[system]
pub fn bump_a(a: &mut A) {
    a.0 += 1.0;
}

include!(concat!(env!("OUT_DIR"), "/add_remove.rs"));
