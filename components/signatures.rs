//! The bundled world's signatures: each is one packed store.

use super::physics::*;
use ecs_core::prelude::*;

/// A massless particle that drifts and expires.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Particle {
    pub position: Position,
    pub velocity: Velocity,
    pub lifetime: Lifetime,
}

/// The point mass of seed part 2.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Body {
    pub position: Position,
    pub velocity: Velocity,
    pub acceleration: Acceleration,
    pub mass: Mass,
}

/// A named point mass, stored as rows: systems touch every hot component, and the cold name
/// lives in a parallel array.
#[derive(Signature, Clone, Debug, PartialEq)]
#[signature(layout = "rows")]
pub struct Ship {
    pub position: Position,
    pub velocity: Velocity,
    pub acceleration: Acceleration,
    pub mass: Mass,
    pub name: DebugName,
}

/// A named landmark that does not move.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Beacon {
    pub position: Position,
    pub name: DebugName,
}
