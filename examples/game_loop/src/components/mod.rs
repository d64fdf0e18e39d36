//! Everything the game declares: components, signatures, resources and systems. The build
//! script reads this module (and the files its `mod` lines name) and generates the `World`.

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};
use sigecs::glam::{Mat4, Vec3};
use sigecs::prelude::*;

/// Where the arena's hazard zone starts: anything at `x >= HAZARD_X` is scorched each frame.
pub const HAZARD_X: f32 = 10.0;

// ---- Components: plain data. ----

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Health(pub i32);

/// Frames a bullet has left.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Lifetime(pub u32);

/// A gun fires one bullet every `period` frames, the first one at once.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Gun {
    pub period: u32,
    pub cooldown: u32,
    pub bullet_speed: f32,
    pub range: u32,
}

/// A marker (zero-sized): the ship is on fire.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Burning;

/// A mothership's hull, from the level (`"hull": 100`); debris of every destroyed thing
/// costs it [`DEBRIS`].
#[derive(Component, Clone, Copy, Debug, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
#[component(level = "hull")]
#[repr(transparent)]
pub struct Hull(pub i32);

/// A cannon of the mothership, numbered in the level (`"cannon": 1`).
#[derive(Component, Clone, Copy, Debug, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
#[component(level = "cannon")]
#[repr(transparent)]
pub struct Cannon(pub u32);

/// A tag from the level (`"flagship": true`): no fields, so a level needs nothing but
/// `Component` and a level name (no `Pod`, no serde, no `repr`).
#[derive(Component)]
#[component(level = "flagship")]
pub struct Flagship;

/// Hull lost per destroyed thing.
pub const DEBRIS: i32 = 40;

// ---- Signatures: the component sets entities can have, one packed array each. ----

#[derive(Signature)]
pub struct Ship {
    pub position: Position,
    pub velocity: Velocity,
    pub health: Health,
}

/// What a `Ship` becomes when `Burning` is inserted: an insert moves the entity to the
/// declared signature with one more component.
#[derive(Signature)]
pub struct BurningShip {
    pub position: Position,
    pub velocity: Velocity,
    pub health: Health,
    pub burning: Burning,
}

#[derive(Signature)]
pub struct Bullet {
    pub position: Position,
    pub velocity: Velocity,
    pub lifetime: Lifetime,
}

#[derive(Signature)]
pub struct Turret {
    pub position: Position,
    pub gun: Gun,
}

/// A rock has health but no `{Position, Health, Burning}` signature: inserting `Burning` into
/// one moves it to the dynamic store of that set, which `scorch` and `burn` visit as well
/// (see `World::undeclared` at the end of `main`).
#[derive(Signature)]
pub struct Rock {
    pub position: Position,
    pub health: Health,
}

/// The mothership, spawned from the level with its cannons as children in the world's
/// transform hierarchy.
#[derive(Signature)]
pub struct Mothership {
    pub hull: Hull,
    pub flagship: Flagship,
}

#[derive(Signature)]
pub struct CannonMount {
    pub cannon: Cannon,
}

// ---- Events: sent through `Commands`, read by later systems (and the next frame). ----

/// Something burned out.
#[derive(Event, Clone, Copy, Debug, PartialEq)]
pub struct Destroyed;

// ---- Resources: one value each, owned by the world, `Default` at start. ----

#[derive(Resource, Default, Debug)]
pub struct Time {
    /// Seconds per frame.
    pub dt: f32,
}

/// The frame number, moved on by the `clock` system at the end of every frame.
#[derive(Resource, Default, Debug)]
pub struct Clock {
    pub frame: u32,
}

/// The mothership's hull, as `hull_report` saw it change: (frame, hull) pairs.
#[derive(Resource, Default, Debug)]
pub struct HullLog(pub Vec<(u32, i32)>);

#[derive(Resource, Default, Debug, PartialEq)]
pub struct Score {
    pub fired: u32,
    pub expired: u32,
    pub destroyed: u32,
}

// ---- Systems: plain functions, called once per row of every signature that has their
// components. Declaration order is the order `run_all` runs them in. ----

/// Every entity with a Position and a Velocity (ships, burning ships, bullets) moves.
#[system]
pub fn movement(position: &mut Position, velocity: &Velocity, time: &Time) {
    position.x += velocity.x * time.dt;
    position.y += velocity.y * time.dt;
}

/// Turrets fire: spawning goes through `Commands` (applied after the pass), and the new
/// bullet's `Entity` is known at once.
#[system]
pub fn fire(position: &Position, gun: &mut Gun, score: &mut Score, commands: &mut Commands) {
    if gun.cooldown == 0 {
        commands.spawn(Bullet {
            position: *position,
            velocity: Velocity {
                x: 0.0,
                y: gun.bullet_speed,
            },
            lifetime: Lifetime(gun.range),
        });
        score.fired += 1;
        gun.cooldown = gun.period;
    }
    gun.cooldown -= 1;
}

/// Bullets age and are despawned when their time is up.
#[system]
pub fn expire(bullet: Entity, lifetime: &mut Lifetime, score: &mut Score, commands: &mut Commands) {
    lifetime.0 -= 1;
    if lifetime.0 == 0 {
        commands.despawn(bullet);
        score.expired += 1;
    }
}

/// Anything with health left in the hazard zone loses 10 a frame; when that takes it to 50 or
/// below it catches fire (the `Option` says whether it already burns).
#[system]
pub fn scorch(
    entity: Entity,
    position: &Position,
    health: &mut Health,
    burning: Option<&Burning>,
    commands: &mut Commands,
) {
    if position.x >= HAZARD_X && health.0 > 0 {
        health.0 -= 10;
        if health.0 <= 50 && health.0 + 10 > 50 && burning.is_none() {
            commands.insert(entity, Burning);
        }
    }
}

/// Burning things lose 5 more a frame and are destroyed at 0. `with(Burning)` is a filter: the
/// system does not read the marker, it only runs where it is.
#[system(with(Burning))]
pub fn burn(ship: Entity, health: &mut Health, score: &mut Score, commands: &mut Commands) {
    health.0 -= 5;
    if health.0 <= 0 {
        commands.despawn(ship);
        commands.send(Destroyed);
        score.destroyed += 1;
    }
}

/// The mothership drifts left half a unit a frame; its cannons, children in the hierarchy,
/// follow (their world transforms are exact once the commands apply).
#[system(with(Hull))]
pub fn drift(mothership: Entity, clock: &Clock, commands: &mut Commands) {
    let x = 20.0 - 0.5 * (clock.frame + 1) as f32;
    commands.set_transform(mothership, Mat4::from_translation(Vec3::new(x, 5.0, 0.0)));
}

/// Debris of each thing destroyed this frame hits the mothership (read in the frame it was
/// sent: this system is declared after `burn`). A hull at 0 or below sinks it, and its
/// cannons go down with it (a despawn takes the hierarchy subtree along).
#[system]
pub fn debris(
    mothership: Entity,
    hull: &Hull,
    destroyed: &EventReader<Destroyed>,
    commands: &mut Commands,
) {
    let hits = destroyed.len() as i32;
    if hits > 0 {
        let left = hull.0 - DEBRIS * hits;
        if left <= 0 {
            commands.despawn(mothership);
        } else {
            commands.insert(mothership, Hull(left));
        }
    }
}

/// Runs only over hulls that changed since its last run (spawned, or replaced by `debris`).
#[system(changed(Hull))]
pub fn hull_report(hull: &Hull, clock: &Clock, log: &mut HullLog) {
    log.0.push((clock.frame, hull.0));
}

/// Frame-level (no per-row parameter): runs once per frame, last.
#[system]
pub fn clock(clock: &mut Clock) {
    clock.frame += 1;
}
