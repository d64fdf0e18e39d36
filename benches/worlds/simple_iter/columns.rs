//! simple_iter in the `columns` layout.

use super::{Position, Rotation, Transform, Velocity};
use ecs_core::prelude::*;

/// One simple_iter entity.
#[derive(Signature)]

pub struct Data {
    pub transform: Transform,
    pub position: Position,
    pub rotation: Rotation,
    pub velocity: Velocity,
}

include!(concat!(env!("OUT_DIR"), "/simple_iter_columns.rs"));
