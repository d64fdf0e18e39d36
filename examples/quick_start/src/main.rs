// src/main.rs
//! A ball and a player move for one step.
mod components;
use components::*;

include!(concat!(env!("OUT_DIR"), "/world.rs"));

fn main() {
    let mut world = World::new();
    world.resource_mut::<Time>().dt = 0.5;
    let ball = world.spawn(Ball {
        position: Position { x: 0.0, y: 0.0 },
        velocity: Velocity { x: 2.0, y: 1.0 },
    });
    let player = world.spawn(Player {
        position: Position { x: 10.0, y: 0.0 },
        velocity: Velocity { x: -1.0, y: 0.0 },
        name: Name("ada".into()),
    });
    world.run_movement();
    assert_eq!(
        world.get::<Position>(ball),
        Some(&Position { x: 1.0, y: 0.5 })
    );
    println!("ball at {:?}", world.get::<Position>(ball).unwrap());
    println!(
        "{} at {:?}",
        world.get::<Name>(player).unwrap().0,
        world.get::<Position>(player).unwrap()
    );
    world.despawn(ball);
    println!("{}", world.stats());
}
