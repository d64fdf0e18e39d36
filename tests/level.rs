//! Levels in the bundled world: JSON → blob → verified → spawned (components, entity
//! references, hierarchy) → saved; the round trips blob → world → blob (byte-identical) and
//! world → blob → world (value-identical); prefab instances; atomic failures.

use glam::{Mat4, Vec3};
use sigecs::entity::{Entity, EntityBits};
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Body, Escort, Marker, Particle, Ship};
use sigecs_demo::{level_registry, World};
use sigecs_level::{
    verify, AnySet, EntityCompiler, LevelError, LevelWriter, LocalTransform, PathError,
    VerifiedLevel, VerifyOptions, WorldLevels, NO_ENTITY,
};

const LEVEL: &str = r#"{"entities": [
    {"components": {"position": [1, 2, 3], "velocity": [0, 0, 1], "acceleration": [0, 0, 0],
                    "mass": 10, "name": "flagship"}},
    {"parent": 0, "components": {"position": [4, 5, 6], "velocity": [1, 0, 0], "leader": 0,
                                 "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 4,5,6,1]}},
    {"parent": 1, "components": {"position": [7, 8, 9], "name": "buoy"}},
    {"components": {"position": [0, 0, 0], "velocity": [0, 1, 0], "lifetime": 2.5}},
    {"components": {"position": [1, 1, 1], "velocity": [0, 0, 0], "leader": 1073741823}},
    {"components": {"position": [2, 2, 2], "note": "a note longer than any name ✓"}}
]}"#;

/// `blob` verified against the registry alone, for any world's signatures (to inspect what a
/// save wrote, or to try spawning it where it does not belong).
fn verify_for_any_world(blob: &[u8]) -> VerifiedLevel<'static, &[u8]> {
    verify(
        blob,
        level_registry(),
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap()
}

fn compile(json: &str) -> Vec<u8> {
    EntityCompiler::new(level_registry())
        .compile_str(json)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_level_spawns_with_values_references_and_hierarchy() {
    let blob = compile(LEVEL);
    let res = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    let mut tm = TransformManager::new();
    let e = world.spawn_level_with(&res, &mut tm).unwrap();
    assert_eq!(e.len(), 6);
    assert_eq!(world.len(), 6);
    world.check_invariants().unwrap();

    assert_eq!(world.signature_name_of(e[0]), Some("Ship"));
    assert_eq!(world.signature_name_of(e[1]), Some("Escort"));
    assert_eq!(world.signature_name_of(e[2]), Some("Beacon"));
    assert_eq!(world.signature_name_of(e[3]), Some("Particle"));
    assert_eq!(world.signature_name_of(e[4]), Some("Escort"));
    assert_eq!(world.signature_name_of(e[5]), Some("Marker"));
    assert_eq!(
        world.get::<Note>(e[5]).unwrap().0,
        "a note longer than any name ✓"
    );
    assert_eq!(
        world.get::<Position>(e[0]),
        Some(&Position(Vec3::new(1.0, 2.0, 3.0)))
    );
    assert_eq!(world.get::<Mass>(e[0]), Some(&Mass(10.0)));
    assert_eq!(world.get::<DebugName>(e[0]).unwrap().0, "flagship");
    assert_eq!(world.get::<DebugName>(e[2]).unwrap().0, "buoy");
    assert_eq!(world.get::<Lifetime>(e[3]), Some(&Lifetime(2.5)));
    assert_eq!(
        world.get::<Velocity>(e[1]),
        Some(&Velocity(Vec3::new(1.0, 0.0, 0.0)))
    );
    // Entity references point at the spawned entities; NO_ENTITY stays.
    assert_eq!(world.get::<Leader>(e[1]), Some(&Leader(e[0])));
    assert_eq!(world.get::<Leader>(e[4]), Some(&Leader(NO_ENTITY)));

    // The hierarchy: 0 ← 1 ← 2, with 1's local matrix; 3 and 4 have no transform.
    let inst = |x: Entity| tm.lookup(x).unwrap();
    assert_eq!(tm.len(), 3);
    assert_eq!(tm.parent(inst(e[1])).unwrap(), Some(inst(e[0])));
    assert_eq!(tm.parent(inst(e[2])).unwrap(), Some(inst(e[1])));
    assert_eq!(tm.parent(inst(e[0])).unwrap(), None);
    assert_eq!(
        tm.local(inst(e[1])).unwrap(),
        Mat4::from_translation(Vec3::new(4.0, 5.0, 6.0))
    );
    assert_eq!(tm.local(inst(e[2])).unwrap(), Mat4::IDENTITY);
    assert!(tm.lookup(e[3]).is_none() && tm.lookup(e[4]).is_none());

    // Without a transform manager the components are the same.
    let mut plain = World::new();
    let f = plain.spawn_level(&res).unwrap();
    assert_eq!(plain.get::<Leader>(f[1]), Some(&Leader(f[0])));
    plain.check_invariants().unwrap();
}

#[test]
fn a_name_longer_than_its_inline_capacity_is_a_compile_error_at_its_path() {
    let json = r#"{"entities": [{"components": {"position": [0, 0, 0],
        "name": "a beacon name that is far too long"}}]}"#;
    let e = EntityCompiler::new(level_registry())
        .compile_str(json)
        .unwrap_err()
        .to_string();
    assert!(e.contains("entities[0].components.name"), "{e}");
    assert!(
        e.contains("a string of at most 23 bytes, found 34 bytes"),
        "{e}"
    );
}

#[test]
fn blob_to_world_to_blob_is_byte_identical() {
    let blob = compile(LEVEL);
    let res = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    // Something in the world already, so rows and ids do not start at 0.
    world.spawn(Beacon {
        position: Position(Vec3::ONE),
        name: DebugName::new("old"),
    });
    let mut tm = TransformManager::new();
    let e = world.spawn_level_with(&res, &mut tm).unwrap();
    let saved = world
        .save_entities(&e, level_registry(), Some(&tm))
        .unwrap();
    assert_eq!(saved, blob);
    // Saving the subtree of entity 0 gives entities 0, 1, 2 (with the leader kept).
    let sub = world.save_subtrees(&e[..1], level_registry(), &tm).unwrap();
    let sub = verify_for_any_world(&sub);
    assert_eq!(sub.num_entities(), 3);
    assert_eq!(sub.parent(2), Some(1));
    let leaders = sub.component("leader").unwrap();
    assert_eq!(
        leaders.pod::<Leader>().unwrap()[0],
        Leader(Entity::from_bits(0))
    );
    // Roots that overlap (a child before its ancestor) save each entity once.
    let overlap = world
        .save_subtrees(&[e[1], e[0], e[1]], level_registry(), &tm)
        .unwrap();
    let overlap = verify_for_any_world(&overlap);
    assert_eq!(overlap.num_entities(), 3);
}

#[test]
fn prefab_instances_reuse_one_verified_blob() {
    let blob = compile(LEVEL);
    let res = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    let mut tm = TransformManager::new();
    let copies: Vec<Vec<Entity>> = (0..50)
        .map(|_| world.spawn_level_with(&res, &mut tm).unwrap())
        .collect();
    assert_eq!(world.len(), 300);
    assert_eq!(tm.len(), 150);
    world.check_invariants().unwrap();
    for c in &copies {
        assert_eq!(world.get::<Leader>(c[1]), Some(&Leader(c[0])));
        let i = tm.lookup(c[2]).unwrap();
        assert_eq!(tm.entity(tm.parent(i).unwrap().unwrap()).unwrap(), c[1]);
        assert_eq!(world.get::<DebugName>(c[2]).unwrap().0, "buoy");
    }
}

/// A world with every signature, references and a hierarchy, built with `spawn`.
fn random_world(n: usize, seed: u64) -> (World, TransformManager, Vec<Entity>) {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut f = || (next() % 1000) as f32 / 7.0;
    let mut world = World::new();
    let mut tm = TransformManager::new();
    let mut all = Vec::new();
    for i in 0..n {
        let v = Vec3::new(f(), f(), f());
        let e = match i % 6 {
            0 => world.spawn(Particle {
                position: Position(v),
                velocity: Velocity(-v),
                lifetime: Lifetime(f()),
            }),
            1 => world.spawn(Body {
                position: Position(v),
                velocity: Velocity(v * 2.0),
                acceleration: Acceleration(Vec3::Y),
                mass: Mass(f()),
            }),
            2 => world.spawn(Ship {
                position: Position(v),
                velocity: Velocity(v),
                acceleration: Acceleration(-v),
                mass: Mass(f()),
                name: DebugName::new(&format!("ship {i} ✓")),
            }),
            3 => world.spawn(Beacon {
                position: Position(v),
                name: DebugName::default(),
            }),
            4 => world.spawn(Marker {
                position: Position(v),
                note: Note("ahoy ".repeat(i % 9)),
            }),
            _ => {
                let leader = if all.is_empty() {
                    NO_ENTITY
                } else {
                    all[(f() as usize) % all.len()]
                };
                world.spawn(Escort {
                    position: Position(v),
                    velocity: Velocity(v),
                    leader: Leader(leader),
                })
            }
        };
        if i % 3 != 0 {
            // Some identity locals, on roots and on children: a root's must survive a round
            // trip (its instance), a child's is implied by its parent link.
            let local = if i % 11 == 1 {
                Mat4::IDENTITY
            } else {
                Mat4::from_translation(v)
            };
            let inst = tm.create(e, local).unwrap();
            // Parent: an earlier entity with a transform.
            if i > 3 && i % 2 == 0 {
                let p = all[(f() as usize * 31) % all.len()];
                if let Some(pi) = tm.lookup(p) {
                    tm.link(inst, pi).unwrap();
                }
            }
        }
        all.push(e);
    }
    // Despawn a few so ids and rows are not in spawn order.
    for k in (0..all.len()).step_by(17) {
        world.despawn(all[k]);
        if let Some(i) = tm.lookup(all[k]) {
            tm.destroy(i).unwrap();
        }
    }
    let live: Vec<Entity> = world.entities().collect();
    (world, tm, live)
}

/// Everything an entity holds, with entities (its leader, its parent) named by their position
/// in `order`.
fn snapshot(world: &World, tm: &TransformManager, order: &[Entity]) -> Vec<String> {
    let pos = |e: Entity| order.iter().position(|&x| x == e);
    order
        .iter()
        .map(|&e| {
            let parent = tm
                .lookup(e)
                .and_then(|i| tm.parent(i).unwrap())
                .map(|p| pos(tm.entity(p).unwrap()));
            let local = tm.lookup(e).map(|i| tm.local(i).unwrap());
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} leader={:?} parent={parent:?} local={local:?}",
                world.signature_name_of(e),
                world.get::<Position>(e),
                world.get::<Velocity>(e),
                world.get::<Acceleration>(e),
                world.get::<Mass>(e),
                world.get::<Lifetime>(e),
                world.get::<DebugName>(e),
                world.get::<Note>(e),
                // A dead leader is saved as NO_ENTITY.
                world.get::<Leader>(e).map(|l| pos(l.0)),
            )
        })
        .collect()
}

#[test]
fn world_to_blob_to_world_is_value_identical() {
    for seed in [1, 2, 3] {
        let (world, tm, order) = random_world(400, seed);
        let blob = world.save_level(level_registry(), Some(&tm)).unwrap();
        let res = World::new()
            .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
            .unwrap();
        let mut copy = World::new();
        let mut tm2 = TransformManager::new();
        let spawned = copy.spawn_level_with(&res, &mut tm2).unwrap();
        copy.check_invariants().unwrap();
        assert_eq!(copy.len(), world.len());
        let before = snapshot(&world, &tm, &order);
        let after = snapshot(&copy, &tm2, &spawned);
        assert_eq!(before.len(), after.len());
        for (k, (b, a)) in before.iter().zip(&after).enumerate() {
            assert_eq!(b, a, "seed {seed}, entity {k}");
        }
        // World coordinates follow the same hierarchy.
        for (a, b) in order.iter().zip(&spawned) {
            if let (Some(i), Some(j)) = (tm.lookup(*a), tm2.lookup(*b)) {
                assert_eq!(tm.world(i).unwrap(), tm2.world(j).unwrap());
            }
        }
        // And saving the copy gives the same bytes.
        assert_eq!(
            copy.save_entities(&spawned, level_registry(), Some(&tm2))
                .unwrap(),
            blob
        );
    }
}

/// A level whose entities have sets no signature declares spawns them into the world's dynamic
/// stores of those sets (the world's `undeclared()` lists them), and saves back byte-identical.
/// (A strict world refuses such a level with `insert`'s words: `sigecs`'s `world::load` tests.)
#[test]
fn a_level_with_undeclared_sets_spawns_into_dynamic_stores_and_saves_back() {
    // Position + Lifetime, and Position + Velocity + Note, are no signature.
    let level = r#"{"entities": [
        {"components": {"position": [0,0,0], "lifetime": 1}},
        {"components": {"position": [1,2,3], "velocity": [0,0,1], "note": "odd one"}},
        {"components": {"position": [4,5,6], "name": "buoy"}},
        {"components": {"position": [7,8,9], "lifetime": 3}}
    ]}"#;
    let blob = compile(level);
    let res = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    let e = world.spawn_level(&res).unwrap();
    world.check_invariants().unwrap();
    assert_eq!(world.signature_name_of(e[0]), Some("LIFETIME | POSITION"));
    assert_eq!(world.signature_name_of(e[3]), Some("LIFETIME | POSITION"));
    assert_eq!(world.is_declared(e[0]), Some(false));
    assert_eq!(world.signature_name_of(e[2]), Some("Beacon"));
    assert_eq!(world.get::<Lifetime>(e[3]), Some(&Lifetime(3.0)));
    assert_eq!(
        world.get::<Position>(e[3]),
        Some(&Position(Vec3::new(7.0, 8.0, 9.0)))
    );
    assert_eq!(world.get::<Note>(e[1]).unwrap().0, "odd one");
    let sets: Vec<String> = world.undeclared().iter().map(|u| u.to_string()).collect();
    assert_eq!(sets.len(), 2, "{sets:?}");
    assert!(
        sets.contains(&"LIFETIME | POSITION: 2 entities now, 2 at most, 0 moves".to_string()),
        "{sets:?}"
    );
    let saved = world.save_entities(&e, level_registry(), None).unwrap();
    assert_eq!(saved, blob);
    // A second spawn of the same level uses the same dynamic stores.
    let again = world.spawn_level(&res).unwrap();
    assert_eq!(world.undeclared().len(), 2);
    assert_eq!(
        world.signature_name_of(again[0]),
        Some("LIFETIME | POSITION")
    );
    assert_eq!(world.len(), 8);
    world.check_invariants().unwrap();
}

#[test]
fn a_level_verified_elsewhere_is_refused_and_nothing_spawns() {
    let blob = compile(LEVEL);
    let res = verify_for_any_world(&blob);
    let mut world = World::new();
    let err = world.spawn_level(&res).unwrap_err();
    assert!(matches!(err, LevelError::NotThisWorld { .. }), "{err}");
    assert!(world.is_empty());
    assert_eq!(world.entity_manager().slots(), 0);
}

#[test]
fn a_failed_hierarchy_link_spawns_nothing() {
    let blob = compile(LEVEL);
    let res = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let mut world = World::new();
    // The fresh world issues ids 0v0, 1v0, …: give entity 1's id a transform already.
    let mut tm = TransformManager::new();
    let squatter = Entity::new(1, 0);
    tm.create(squatter, Mat4::IDENTITY).unwrap();
    let err = world.spawn_level_with(&res, &mut tm).unwrap_err();
    assert!(matches!(err, LevelError::Transform(_)), "{err}");
    assert!(world.is_empty());
    world.check_invariants().unwrap();
    assert_eq!(
        tm.len(),
        1,
        "the instances made before the failure are gone"
    );
    for s in ["Ship", "Escort", "Beacon", "Particle"] {
        assert_eq!(
            world
                .stats()
                .stores
                .iter()
                .find(|x| x.name == s)
                .unwrap()
                .entities,
            0
        );
    }
    // The world still works, and the level spawns into a fresh manager.
    let e = world
        .spawn_level_with(&res, &mut TransformManager::new())
        .unwrap();
    assert_eq!(world.get::<Leader>(e[1]), Some(&Leader(e[0])));
    world.check_invariants().unwrap();
}

#[test]
fn references_outside_the_level_are_refused_by_the_verifier() {
    // The compiler refuses such a level (see `references_outside_the_level_are_refused_by_the
    // _compiler`), so the blob is written directly.
    let reg = level_registry();
    let mut w = LevelWriter::new();
    w.add_entity(None).unwrap();
    w.push(reg.by_name("position").unwrap(), 0, &Position(Vec3::ZERO))
        .unwrap();
    w.push(reg.by_name("velocity").unwrap(), 0, &Velocity(Vec3::ZERO))
        .unwrap();
    w.push(
        reg.by_name("leader").unwrap(),
        0,
        &Leader(Entity::from_bits(5)),
    )
    .unwrap();
    let blob = w.finish().unwrap();
    let err = World::new()
        .verify_level(&blob[..], reg, &VerifyOptions::default())
        .unwrap_err();
    assert_eq!(
        err,
        LevelError::ReferenceOutOfRange {
            component: reg.by_name("leader").unwrap().component_ref(),
            value: 5,
            num_entities: 1
        }
    );
    assert_eq!(NO_ENTITY.to_bits(), (1 << 30) - 1 as EntityBits);
}

/// A reported problem: the compiler read an entity reference as its low 30 bits, so
/// `"leader": 1073741824` (2^30) became entity 0, 1073741825 entity 1, and 4294967295 "none",
/// while the verifier refuses those values in a blob. Every value that is not an index of the
/// level (or `NO_ENTITY`'s bits, for none) is now refused at its path, with the valid range.
#[test]
fn references_outside_the_level_are_refused_by_the_compiler() {
    let level = |leader: &str| {
        format!(
            r#"{{"entities": [
                {{"components": {{"position": [0,0,0], "velocity": [0,0,0]}}}},
                {{"parent": 0, "components": {{"position": [0,0,0], "velocity": [0,0,0], "leader": {leader}}}}}
            ]}}"#
        )
    };
    for (leader, found) in [
        ("2", "2"),
        ("1073741824", "1073741824"),
        ("1073741825", "1073741825"),
        ("4294967295", "4294967295"),
        ("18446744073709551615", "18446744073709551615"),
        ("-1", "-1"),
        ("0.5", "0.5"),
        ("1.0", "1.0"),
        ("1e39", "1e+39"),
        ("\"0\"", "\"0\""),
        ("null", "null"),
        ("[0]", "an array"),
    ] {
        let err = EntityCompiler::new(level_registry())
            .compile_str(&level(leader))
            .unwrap_err();
        assert_eq!(
            err.errors,
            [PathError {
                path: "entities[1].components.leader".into(),
                message: format!(
                    "expected an entity index below 2 (or 1073741823 for none), found {found}"
                ),
            }],
            "leader {leader}"
        );
    }
    // The valid values: an entity of the level, itself included, and none.
    for (leader, expected) in [("0", Some(0)), ("1", Some(1)), ("1073741823", None)] {
        let blob = compile(&level(leader));
        let res = verify_for_any_world(&blob);
        let leaders = res.component("leader").unwrap();
        let value = leaders.pod::<Leader>().unwrap()[0].0;
        assert_eq!(
            value,
            expected.map_or(NO_ENTITY, Entity::from_bits),
            "leader {leader}"
        );
    }
}

#[test]
fn save_refuses_dead_and_repeated_entities() {
    let mut world = World::new();
    let a = world.spawn(Beacon {
        position: Position(Vec3::ZERO),
        name: DebugName::new("a"),
    });
    let reg = level_registry();
    assert_eq!(
        world.save_entities(&[a, a], reg, None).unwrap_err(),
        LevelError::DuplicateEntity { position: 1 }
    );
    world.despawn(a);
    assert_eq!(
        world.save_entities(&[a], reg, None).unwrap_err(),
        LevelError::NotAlive { position: 0 }
    );
    assert!(reg.by_type::<LocalTransform>().is_some());
}
