//! The transform hierarchy (`sigecs::transform`) used with a generated world: a sun, an
//! earth orbiting it, a moon orbiting the earth and a probe orbiting the moon. Each frame:
//!
//! 1. a system turns every body's `Orbit` (local state, in the world);
//! 2. the new local matrices go into the `TransformManager`, which chains each body's parent
//!    and writes world matrices at once; each body's `WorldPos` is copied back from them;
//! 3. a system reads the world-space positions (`track` computes the bounds of the system).
//!
//! At frame 10 the moon is destroyed: the probe is re-linked to the earth first, then the
//! moon leaves both the world and the hierarchy.
//!
//! `cargo run -p transform_world`

mod components;
use components::*;
use sigecs::glam::{Mat4, Vec2, Vec3};
use sigecs::prelude::*;
use sigecs::transform::{Instance, TransformManager};
use std::error::Error;

include!(concat!(env!("OUT_DIR"), "/world.rs"));

const FRAMES: u32 = 20;

fn main() -> Result<(), Box<dyn Error>> {
    let mut world = World::new();
    world.resource_mut::<Time>().dt = 0.1;
    // The world's entities have a transform here; the manager is keyed by `Entity`.
    let mut transforms = TransformManager::new();

    let sun = spawn_body(&mut world, &mut transforms, "sun", 0.0, 0.1, None)?;
    let earth = spawn_body(&mut world, &mut transforms, "earth", 10.0, 0.5, Some(sun))?;
    let moon = spawn_body(&mut world, &mut transforms, "moon", 2.0, 2.0, Some(earth))?;
    let probe = spawn_body(&mut world, &mut transforms, "probe", 0.5, 3.0, Some(moon))?;

    for frame in 1..=FRAMES {
        world.run_advance();
        sync_transforms(&mut world, &mut transforms)?;
        *world.resource_mut::<Bounds>() = Bounds::default();
        world.run_track();

        if frame % 5 == 0 {
            println!("frame {frame}");
            for body in [sun, earth, moon, probe] {
                // A despawned entity has no components: `get` is `None`.
                if let (Some(label), Some(position)) =
                    (world.get::<Label>(body), world.get::<WorldPos>(body))
                {
                    println!("  {:<10} {}", label.0, point(position.0.truncate()));
                }
            }
            let bounds = world.resource::<Bounds>();
            println!(
                "  {:<10} {} .. {}",
                "bounds",
                point(bounds.min),
                point(bounds.max)
            );
        }

        if frame == 10 {
            // The probe would become a root if its parent went first (its local matrix
            // would become its world matrix); link it to the earth instead: it keeps its local
            // matrix, now relative to the earth.
            let earth_at = transforms.lookup(earth).ok_or("earth has no transform")?;
            let probe_at = transforms.lookup(probe).ok_or("no probe")?;
            transforms.link(probe_at, earth_at)?;
            // Despawn in both places. `destroy` moves the last instance into the hole, so
            // instance handles are looked up again from entities, never kept.
            world.despawn(moon);
            transforms.destroy(transforms.lookup(moon).ok_or("moon has no transform")?)?;
            println!("frame {frame}: the moon is gone, the probe now orbits the earth");
        }
    }
    println!("bodies: {}, transforms: {}", world.len(), transforms.len());
    Ok(())
}

/// Spawns a body in the world and gives it a transform, linked below `parent`'s.
fn spawn_body(
    world: &mut World,
    transforms: &mut TransformManager,
    label: &'static str,
    radius: f32,
    speed: f32,
    parent: Option<Entity>,
) -> Result<Entity, Box<dyn Error>> {
    let orbit = Orbit {
        radius,
        angle: 0.0,
        speed,
    };
    let body = world.spawn(Body {
        orbit,
        world_pos: WorldPos::default(),
        label: Label(label),
    });
    let instance = transforms.create(body, orbit.local())?;
    if let Some(parent) = parent {
        let parent = transforms.lookup(parent).ok_or("parent has no transform")?;
        transforms.link(instance, parent)?;
    }
    Ok(body)
}

/// World → hierarchy → world: every body's local matrix goes into the manager (all at once,
/// so each moved subtree is updated once), then each body's `WorldPos` is read back.
fn sync_transforms(
    world: &mut World,
    transforms: &mut TransformManager,
) -> Result<(), Box<dyn Error>> {
    let mut batch: Vec<(Instance, Mat4)> = Vec::new();
    for (body, orbit) in world.query::<(Entity, &Orbit)>() {
        let instance = transforms.lookup(body).ok_or("body has no transform")?;
        batch.push((instance, orbit.local()));
    }
    transforms.set_local_many(&batch)?;
    for (body, position) in world.query_mut::<(Entity, &mut WorldPos)>()? {
        let instance = transforms.lookup(body).ok_or("body has no transform")?;
        position.0 = transforms.world(instance)?.transform_point3(Vec3::ZERO);
    }
    Ok(())
}

/// `(x, y)` with three decimals.
fn point(p: Vec2) -> String {
    format!("({:.3}, {:.3})", p.x, p.y)
}
