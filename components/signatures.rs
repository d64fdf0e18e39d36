//! The bundled world's signatures: each is one packed store.

use super::physics::*;
use sigecs::prelude::*;

/// A massless particle that drifts and expires.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Particle {
    /// Where it is.
    pub position: Position,
    /// How fast it moves.
    pub velocity: Velocity,
    /// Seconds left to live.
    pub lifetime: Lifetime,
}

/// A point mass: position, velocity, acceleration and mass.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Body {
    /// Where it is.
    pub position: Position,
    /// How fast it moves.
    pub velocity: Velocity,
    /// How fast its velocity changes.
    pub acceleration: Acceleration,
    /// Its mass.
    pub mass: Mass,
}

/// A named point mass, stored as rows: systems touch every hot component, and the cold name
/// lives in a parallel array.
#[derive(Signature, Clone, Debug, PartialEq)]
#[signature(layout = "rows")]
pub struct Ship {
    /// Where it is.
    pub position: Position,
    /// How fast it moves.
    pub velocity: Velocity,
    /// How fast its velocity changes.
    pub acceleration: Acceleration,
    /// Its mass.
    pub mass: Mass,
    /// Its name, for debugging.
    pub name: DebugName,
}

/// A named landmark that does not move.
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Beacon {
    /// Where it is.
    pub position: Position,
    /// Its name, for debugging.
    pub name: DebugName,
}

/// A point that moves with another entity, its leader (for example a ship's escort).
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Escort {
    /// Where it is.
    pub position: Position,
    /// How fast it moves.
    pub velocity: Velocity,
    /// The entity it follows.
    pub leader: Leader,
}

/// A map marker: a place with a note of any length (the bundled world's `String` component).
#[derive(Signature, Clone, Debug, PartialEq)]
pub struct Marker {
    /// Where it is.
    pub position: Position,
    /// What it says.
    pub note: Note,
}
