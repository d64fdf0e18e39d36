#![allow(missing_docs)] // the game's data, named for what it is; the types say what they hold.

//! The game's declarations: two ships in an arena, each with a turret below it in the world's
//! hierarchy; projectiles the ships fire; power-ups (a sparse component); a stun tag that no
//! signature declares (a stunned ship lives in a dynamic store); a render handle that is not
//! part of the simulation (`no_rollback`); hits as events.

use bytemuck::{Pod, Zeroable};
use sigecs::glam::{Mat4, Vec3};
use sigecs::prelude::*;

/// The arena is the square from -ARENA to ARENA on both axes; leaving it wraps around.
pub const ARENA: f32 = 100.0;

#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

/// Which player a ship or turret belongs to (0 or 1).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Player(pub u8);

/// Frames until the ship can fire again.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cooldown(pub u16);

/// A turret's aim, in radians; its entity is a child of its ship in the hierarchy.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Turret {
    pub angle: f32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Projectile {
    pub owner: u8,
    /// Frames left.
    pub ttl: u16,
}

/// A power-up on a ship: faster for this many frames. Sparse: few ships have one.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[component(sparse)]
pub struct PowerUp(pub u16);

/// A hit ship cannot steer or fire for this many frames. No signature has it: a stunned
/// ship moves to a dynamic store and back.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stunned(pub u16);

/// A render handle: not part of the simulation, not in world states.
#[derive(Component, Debug, Default, PartialEq)]
#[component(no_rollback)]
pub struct Sprite(pub u32);

#[derive(Signature)]
pub struct Ship {
    pub position: Position,
    pub velocity: Velocity,
    pub player: Player,
    pub cooldown: Cooldown,
    pub sprite: Sprite,
}

#[derive(Signature)]
pub struct Gun {
    pub turret: Turret,
    pub player: Player,
}

#[derive(Signature)]
pub struct Shot {
    pub position: Position,
    pub velocity: Velocity,
    pub projectile: Projectile,
}

/// This frame's inputs, one byte per player (see `crate::input`).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Inputs(pub [u8; 2]);

#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Scores(pub [u32; 2]);

/// Frames run.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrameCount(pub u32);

/// Rows the change-filtered system saw, in all.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Moved(pub u64);

/// A projectile of player `by` hit `target`.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hit {
    pub target: Entity,
    pub by: u8,
}

/// Input bits.
pub const UP: u8 = 1;
pub const DOWN: u8 = 2;
pub const LEFT: u8 = 4;
pub const RIGHT: u8 = 8;
pub const FIRE: u8 = 16;
pub const TURN: u8 = 32;

#[system(without(Stunned))]
pub fn steer(player: &Player, velocity: &mut Velocity, inputs: &Inputs) {
    let input = inputs.0[player.0 as usize & 1];
    let axis = |plus: u8, minus: u8| {
        f32::from(u8::from(input & plus != 0)) - f32::from(u8::from(input & minus != 0))
    };
    velocity.x = (velocity.x * 0.95 + axis(RIGHT, LEFT) * 0.2).clamp(-2.0, 2.0);
    velocity.y = (velocity.y * 0.95 + axis(UP, DOWN) * 0.2).clamp(-2.0, 2.0);
}

/// A power-up doubles the ship's speed.
#[system(after(steer))]
pub fn boost(velocity: &mut Velocity, _power: &PowerUp) {
    velocity.x *= 1.02;
    velocity.y *= 1.02;
}

#[system(after(boost))]
pub fn movement(position: &mut Position, velocity: &Velocity) {
    let wrap = |v: f32| {
        if v > ARENA {
            v - 2.0 * ARENA
        } else if v < -ARENA {
            v + 2.0 * ARENA
        } else {
            v
        }
    };
    position.x = wrap(position.x + velocity.x);
    position.y = wrap(position.y + velocity.y);
}

/// Turrets turn while their player holds `TURN`; the hierarchy gets their rotation.
#[system]
pub fn aim(
    e: Entity,
    turret: &mut Turret,
    player: &Player,
    inputs: &Inputs,
    commands: &mut Commands,
) {
    if inputs.0[player.0 as usize & 1] & TURN != 0 {
        turret.angle = (turret.angle + 0.1) % std::f32::consts::TAU;
        commands.set_transform(e, Mat4::from_rotation_z(turret.angle));
    }
}

/// Ships carry their turrets: their transform follows their position.
#[system(after(movement))]
pub fn place(e: Entity, position: &Position, _player: &Player, commands: &mut Commands) {
    commands.set_transform(
        e,
        Mat4::from_translation(Vec3::new(position.x, position.y, 0.0)),
    );
}

/// A ship fires along its velocity (or to the right when still) when its player holds `FIRE`.
#[system(without(Stunned), after(movement))]
pub fn fire(
    player: &Player,
    position: &Position,
    velocity: &Velocity,
    cooldown: &mut Cooldown,
    inputs: &Inputs,
    commands: &mut Commands,
) {
    if cooldown.0 > 0 {
        cooldown.0 -= 1;
        return;
    }
    if inputs.0[player.0 as usize & 1] & FIRE == 0 {
        return;
    }
    cooldown.0 = 8;
    let speed = (velocity.x * velocity.x + velocity.y * velocity.y).sqrt();
    let (dx, dy) = if speed > 0.01 {
        (velocity.x / speed, velocity.y / speed)
    } else {
        (1.0, 0.0)
    };
    commands.spawn(Shot {
        position: Position {
            x: position.x + dx * 3.0,
            y: position.y + dy * 3.0,
        },
        velocity: Velocity {
            x: dx * 4.0,
            y: dy * 4.0,
        },
        projectile: Projectile {
            owner: player.0,
            ttl: 40,
        },
    });
}

#[system]
pub fn expire(e: Entity, projectile: &mut Projectile, commands: &mut Commands) {
    projectile.ttl = projectile.ttl.saturating_sub(1);
    if projectile.ttl == 0 {
        commands.despawn(e);
    }
}

/// A stun wears off; the ship goes back to its declared store.
#[system]
pub fn recover(e: Entity, stunned: &mut Stunned, commands: &mut Commands) {
    stunned.0 = stunned.0.saturating_sub(1);
    if stunned.0 == 0 {
        commands.remove::<Stunned>(e);
    }
}

#[system]
pub fn wear_off(e: Entity, power: &mut PowerUp, commands: &mut Commands) {
    power.0 = power.0.saturating_sub(1);
    if power.0 == 0 {
        commands.remove::<PowerUp>(e);
    }
}

/// Hits score and stun their target.
#[system]
pub fn score(hits: &EventReader<Hit>, scores: &mut Scores, commands: &mut Commands) {
    for hit in hits {
        scores.0[hit.by as usize & 1] += 1;
        commands.insert(hit.target, Stunned(20));
    }
}

/// Counts the rows whose position may have changed since its last run (a change filter).
#[system(changed(Position))]
pub fn track(_position: &Position, moved: &mut Moved) {
    moved.0 += 1;
}
