//! The checks of the spawn fuzz targets (`fuzz/fuzz_targets/{spawn,level_roundtrip}.rs`), shared
//! with the corpus replay test (`tests/level_corpus.rs`). A panic here is a finding.

#![allow(dead_code)]

use glam::{Mat4, Vec3};
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::{DebugName, Position};
use sigecs_demo::components::signatures::Beacon;
use sigecs_demo::{level_registry, World};
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use sigecs_level::{
    reseal, EntityCompiler, LocalTransform, Registration, Registry, VerifyOptions, WorldLevels,
};

/// The bundled registry, plus `point_mass` kept outside the stores (a `PointMassManager`), so
/// that the spawners of kept-outside components are fuzzed too.
pub fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        level_registry()
            .with([Registration::pod::<PointMass>("point_mass").kept_outside()])
            .unwrap()
    })
}

/// Instances of `point_mass` in a verified level.
fn masses_in<B: AsRef<[u8]>>(res: &sigecs_level::VerifiedLevel<'_, B>) -> usize {
    res.component("point_mass")
        .map_or(0, |c| c.entity_indices().count())
}

/// Arbitrary bytes, as given and with the checksum fixed up: verify against the bundled world;
/// whatever verifies must spawn (into an empty world and into one with entities, with and
/// without the transform and point-mass managers) to a world that passes its invariant check
/// and saves back to a blob that verifies. Returns how many of the two inputs spawned.
pub fn spawn_bytes(data: &[u8]) -> usize {
    let mut sealed = data.to_vec();
    reseal(&mut sealed);
    let mut ok = 0;
    for bytes in [data, &sealed[..]] {
        let reg = registry();
        let Ok(res) = World::new().verify_level(bytes, reg, &VerifyOptions::default()) else {
            continue;
        };
        ok += 1;
        for prefill in [0, 2] {
            let mut world = World::new();
            let (mut tm, mut masses) = (TransformManager::new(), PointMassManager::new());
            for i in 0..prefill {
                let e = world.spawn(Beacon {
                    position: Position(Vec3::splat(i as f32)),
                    name: DebugName::default(),
                });
                tm.create(e, Mat4::IDENTITY).unwrap();
                masses.create(e, PointMass::default()).unwrap();
            }
            let e = world
                .spawn_level_with_all(&res, &mut [&mut tm, &mut masses])
                .expect("a verified level spawns into a fresh world");
            world.check_invariants().unwrap();
            assert_eq!(world.len(), prefill + res.num_entities() as usize);
            assert_eq!(masses.len(), prefill + masses_in(&res));
            let saved = world.save_entities_with(&e, reg, &[&tm, &masses]).unwrap();
            World::new()
                .verify_level(&saved[..], reg, &VerifyOptions::default())
                .expect("a saved world verifies");
        }
        let mut plain = World::new();
        plain.spawn_level(&res).unwrap();
        plain.check_invariants().unwrap();
    }
    ok
}

/// JSON → blob → verify → spawn → save: whatever compiles and verifies must spawn, and saving
/// the spawned entities must give the blob back byte for byte (unless it holds an identity
/// `local_transform`, which save leaves out on entities with a parent or a child; then saving
/// is checked to be stable). Returns
/// whether the level spawned.
pub fn level_roundtrip(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let reg = registry();
    let Ok(blob) = EntityCompiler::new(reg).compile_str(text) else {
        return false;
    };
    let Ok(res) = World::new().verify_level(&blob[..], reg, &VerifyOptions::default()) else {
        return false;
    };
    let mut world = World::new();
    let (mut tm, mut masses) = (TransformManager::new(), PointMassManager::new());
    let e = world
        .spawn_level_with_all(&res, &mut [&mut tm, &mut masses])
        .expect("a verified level spawns");
    world.check_invariants().unwrap();
    assert_eq!(masses.len(), masses_in(&res));
    let saved = world.save_entities_with(&e, reg, &[&tm, &masses]).unwrap();
    let identity_local = res.component(LocalTransform::NAME).is_some_and(|d| {
        d.pod::<LocalTransform>()
            .unwrap()
            .iter()
            .any(|t| Mat4::from(*t) == Mat4::IDENTITY)
    });
    if !identity_local {
        assert!(saved == blob, "blob → world → blob changed the bytes");
    }
    // Saved blobs are stable: spawn and save again.
    let again = World::new()
        .verify_level(&saved[..], reg, &VerifyOptions::default())
        .unwrap();
    let mut w2 = World::new();
    let (mut tm2, mut masses2) = (TransformManager::new(), PointMassManager::new());
    let e2 = w2
        .spawn_level_with_all(&again, &mut [&mut tm2, &mut masses2])
        .unwrap();
    assert!(w2.save_entities_with(&e2, reg, &[&tm2, &masses2]).unwrap() == saved);
    true
}
