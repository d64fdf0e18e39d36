//! Every single-bit flip and every truncation of a small blob of the bundled world goes through
//! the verifier and, when it passes, the spawner (with and without spawners of components kept
//! outside the stores — a transform manager and a structure-of-arrays manager — into an empty
//! world and into one that already holds entities) and save: each is an `Err` or a valid
//! world — one that passes `check_invariants`, holds exactly the level's entities more (and
//! the managers exactly its instances more), and saves back to a blob that verifies — never a
//! panic.

use glam::{Mat4, Vec3};
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::Beacon;
use sigecs_demo::World;
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use sigecs_level::{reseal, EntityCompiler, VerifyOptions, WorldLevels};

// `registry()`: the bundled registry plus `point_mass` kept outside the stores.
mod level_fuzz;
use level_fuzz::registry;

const LEVEL: &str = r#"{"entities": [
    {"components": {"position": [1, 2, 3], "velocity": [0, 0, 1], "acceleration": [0, 0, 0],
                    "mass": 10, "name": "flagship"}},
    {"parent": 0, "components": {"position": [4, 5, 6], "velocity": [1, 0, 0], "leader": 0,
                                 "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 4,5,6,1]}},
    {"parent": 1, "components": {"position": [7, 8, 9], "name": "buoy"}},
    {"components": {"position": [0, 0, 0], "velocity": [0, 1, 0], "lifetime": 2.5,
                    "point_mass": {"mass": 2, "position": [0, 0, 0], "velocity": [0, 1, 0],
                                   "acceleration": [0, 0, 0]}}},
    {"parent": 3, "components": {"position": [1, 1, 1], "velocity": [0, 0, 0], "leader": 2}},
    {"components": {"position": [2, 2, 2], "note": "a note ✓"}}
]}"#;

fn blob() -> Vec<u8> {
    EntityCompiler::new(registry()).compile_str(LEVEL).unwrap()
}

/// Verifies, spawns and saves `bytes` every way; `Ok(true)` when it spawned.
fn run(bytes: &[u8]) -> Result<bool, String> {
    let reg = registry();
    let res = World::new()
        .verify_level(bytes, reg, &VerifyOptions::default())
        .map_err(|e| e.to_string())?;
    let n = res.num_entities() as usize;
    let masses_in_level = res
        .component("point_mass")
        .map_or(0, |c| c.entity_indices().count());
    for prefill in [false, true] {
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let mut masses = PointMassManager::new();
        if prefill {
            for i in 0..3 {
                let e = world.spawn(Beacon {
                    position: Position(Vec3::splat(i as f32)),
                    name: DebugName::new(&format!("old {i}")),
                });
                tm.create(e, Mat4::IDENTITY).unwrap();
                masses.create(e, PointMass::default()).unwrap();
            }
        }
        let (before, masses_before) = (world.len(), masses.len());
        let spawned = world
            .spawn_level_with_all(&res, &mut [&mut tm, &mut masses])
            .map_err(|e| e.to_string())?;
        world.check_invariants()?;
        assert_eq!(spawned.len(), n);
        assert_eq!(world.len(), before + n);
        assert_eq!(masses.len(), masses_before + masses_in_level);
        assert!(spawned.iter().all(|&e| world.is_alive(e)));
        // Every leader is a spawned entity or none; every new point mass is a spawned entity's.
        for &e in &spawned {
            if let Some(l) = world.get::<Leader>(e) {
                assert!(spawned.contains(&l.0) || !world.is_alive(l.0));
            }
        }
        let with_mass = spawned
            .iter()
            .filter(|&&e| masses.lookup(e).is_some())
            .count();
        assert_eq!(with_mass, masses_in_level);
        let saved = world
            .save_entities_with(&spawned, reg, &[&tm, &masses])
            .map_err(|e| e.to_string())?;
        World::new()
            .verify_level(&saved[..], reg, &VerifyOptions::default())
            .map_err(|e| format!("a saved world does not verify: {e}"))?;
        let mut plain = World::new();
        plain.spawn_level(&res).map_err(|e| e.to_string())?;
        plain.check_invariants()?;
    }
    Ok(true)
}

#[test]
fn the_blob_spawns_and_saves_back_identically() {
    let b = blob();
    assert_eq!(run(&b), Ok(true));
    let res = World::new()
        .verify_level(&b[..], registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    let (mut tm, mut masses) = (TransformManager::new(), PointMassManager::new());
    let e = world
        .spawn_level_with_all(&res, &mut [&mut tm, &mut masses])
        .unwrap();
    assert_eq!(masses.len(), 1);
    assert_eq!(*masses.mass(masses.lookup(e[3]).unwrap()), 2.0);
    assert_eq!(
        world
            .save_entities_with(&e, registry(), &[&tm, &masses])
            .unwrap(),
        b
    );
}

#[test]
fn every_bit_flip_is_an_error_or_a_valid_world() {
    let b = blob();
    assert!(b.len() < 1024, "{} bytes", b.len());
    let (mut spawned, mut refused) = (0, 0);
    for bit in 0..b.len() * 8 {
        let mut x = b.clone();
        x[bit / 8] ^= 1 << (bit % 8);
        // As given: the checksum catches every single-bit flip.
        assert!(run(&x).is_err(), "bit {bit} passed without a reseal");
        reseal(&mut x);
        match run(&x) {
            Ok(_) => spawned += 1,
            Err(e) => {
                assert!(!e.is_empty());
                refused += 1
            }
        }
    }
    // Flips in float payloads stay valid; flips in structure are refused.
    assert!(
        spawned > 100 && refused > 100,
        "{spawned} spawned, {refused} refused"
    );
}

#[test]
fn every_truncation_is_an_error() {
    let b = blob();
    for len in 0..b.len() {
        let mut x = b[..len].to_vec();
        assert!(run(&x).is_err(), "truncated to {len} passed");
        reseal(&mut x);
        assert!(run(&x).is_err(), "truncated to {len} and resealed passed");
    }
}
