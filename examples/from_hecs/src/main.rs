//! A small hecs / bevy_ecs program written in sigecs: movers with a Position and a Velocity
//! and a static marker; each frame everything moves and whatever passed x = 5 leaves; after
//! three frames the marker gets a Velocity and starts moving too. README.md shows the same
//! program in hecs and in bevy_ecs, and what changes.
//!
//! `cargo run -p from_hecs`

mod components;
use components::*;
use sigecs::prelude::*;

include!(concat!(env!("OUT_DIR"), "/world.rs"));

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    let a = world.spawn(Mover {
        position: Position { x: 0.0, y: 0.0 },
        velocity: Velocity { x: 1.0, y: 0.0 },
    });
    world.spawn(Mover {
        position: Position { x: 2.0, y: 0.0 },
        velocity: Velocity { x: 2.0, y: 1.0 },
    });
    world.spawn(Mover {
        position: Position { x: 0.0, y: 1.0 },
        velocity: Velocity { x: 0.0, y: 0.5 },
    });
    let marker = world.spawn(Marker {
        position: Position { x: 3.0, y: 3.0 },
    });

    for frame in 1..=6 {
        // Both systems, in declaration order; the despawns of `leave` apply at its end.
        world.run_all()?;
        println!("frame {frame}: {} alive", world.len());
        if frame == 3 {
            // Moves the marker to the `Mover` array (an undeclared set would be an `Err`).
            world.insert(marker, Velocity { x: 1.0, y: 0.0 })?;
        }
    }

    // Random access by entity: `None` once it is gone.
    println!("a: {:?}", world.get::<Position>(a));
    // A run-time query, for code outside systems.
    for (entity, position) in world.query::<(Entity, &Position)>() {
        println!("{entity}: {position:?}");
    }
    Ok(())
}
