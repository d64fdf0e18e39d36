//! A world for the schedule tests: systems that conflict and systems that do not, a system
//! writing a resource (sequential), one with `Commands` (structural changes), optional
//! parameters and filters. `build.rs` generates its `World` into `sched_world.rs`.

#![allow(dead_code)]

use ecs_core::prelude::*;

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct P(pub f32);

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct V(pub f32);

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct W(pub f32);

#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Hp(pub i32);

/// Frames a wreck has existed.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Age(pub u32);

/// Marks entities that moved far; inserted and removed by commands.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Far;

#[derive(Signature, Clone, Debug)]
pub struct Mover {
    pub p: P,
    pub v: V,
}

#[derive(Signature, Clone, Debug)]
pub struct FarMover {
    pub p: P,
    pub v: V,
    pub far: Far,
}

#[derive(Signature, Clone, Debug)]
pub struct Heavy {
    pub p: P,
    pub v: V,
    pub w: W,
}

#[derive(Signature, Clone, Debug)]
#[signature(layout = "rows")]
pub struct Unit {
    pub p: P,
    pub v: V,
    pub hp: Hp,
}

#[derive(Signature, Clone, Debug)]
pub struct Wreck {
    pub hp: Hp,
    pub age: Age,
}

#[derive(Signature, Clone, Debug)]
pub struct Weight {
    pub w: W,
}

/// Summed by a sequential system.
#[derive(Resource, Default, Debug, PartialEq)]
pub struct Total {
    pub hp: i64,
    pub rows: u64,
}

#[derive(Resource, Debug, PartialEq)]
pub struct Drag(pub f32);

impl Default for Drag {
    fn default() -> Self {
        Drag(0.5)
    }
}

/// p += v
#[system]
pub fn advance(p: &mut P, v: &V) {
    p.0 += v.0;
}

/// w *= 1.5 (independent of advance: same stage)
#[system]
pub fn grow(w: &mut W) {
    w.0 = w.0 * 1.5 + 1.0;
}

/// v -= drag * v (+ w if present): reads V written... after advance read it → next stage.
#[system]
pub fn slow(v: &mut V, w: Option<&W>, drag: &Drag) {
    v.0 -= drag.0 * v.0 + w.map_or(0.0, |w| w.0 * 0.01);
}

/// hp -= 3 (units only)
#[system(without(Far))]
pub fn wear(hp: &mut Hp) {
    hp.0 -= 3;
}

/// Sums hp into a resource: sequential.
#[system]
pub fn total(hp: &Hp, total: &mut Total) {
    total.hp += i64::from(hp.0);
    total.rows += 1;
}

/// Structural changes: wrecks at hp <= 0 are despawned; units at hp in 0..3 spawn a wreck;
/// movers beyond |p| > 50 get `Far`, far movers back within 20 lose it.
#[system]
pub fn reap(e: Entity, p: Option<&P>, hp: Option<&Hp>, far: Option<&Far>, commands: &mut Commands) {
    if let Some(hp) = hp {
        if hp.0 <= 0 && p.is_none() {
            commands.despawn(e);
        } else if (0..3).contains(&hp.0) {
            commands.spawn(Wreck {
                hp: Hp(5),
                age: Age(0),
            });
        }
    }
    if let Some(p) = p {
        if far.is_none() && p.0.abs() > 50.0 && hp.is_none() {
            commands.insert(e, Far);
        } else if far.is_some() && p.0.abs() < 20.0 {
            commands.remove::<Far>(e);
        }
    }
}

/// After reap: reads P again, so it sees the changed entity set.
#[system(with(Far))]
pub fn pull_back(p: &mut P) {
    p.0 *= 0.5;
}

/// Declared after `reap` and touching nothing `reap` touches: it still runs in a later stage,
/// so it sees the wrecks `reap` spawned, as when the systems run one by one.
#[system]
pub fn rust(age: &mut Age) {
    age.0 += 1;
}

include!(concat!(env!("OUT_DIR"), "/sched_world.rs"));
