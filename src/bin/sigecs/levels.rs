//! The level the job spawns: the bundled one or a file (blob or JSON), verified against the bundled
//! world.

use crate::options::*;
use sigecs_demo::{level_registry, World};
use sigecs_level::{cli, AlignedBlob, VerifiedLevel, VerifyOptions, WorldLevels};
use std::path::Path;

/// The bundled level (`assets/level.bin`, made by `scripts/make_level.py` from
/// `assets/level.json`): 11,300 entities, hierarchy depth 3.
pub(crate) const BUNDLED_LEVEL: &[u8] = include_bytes!("../../../assets/level.bin");

/// A verified level, spawned into every fresh world (a prefab: verified once).
pub(crate) type Level = VerifiedLevel<'static, AlignedBlob>;

/// Reads a level: a compiled blob as it is, anything else compiled as JSON. `None`: the bundled
/// level.
pub(crate) fn read_level(path: Option<&Path>) -> Result<AlignedBlob, String> {
    let Some(path) = path else {
        return Ok(AlignedBlob::from_bytes(BUNDLED_LEVEL));
    };
    cli::read_level(path, level_registry()).map_err(|e| e.to_string())
}

/// Reads and verifies a level against the bundled world.
pub(crate) fn load_level(path: Option<&Path>) -> Result<Level, String> {
    let blob = read_level(path)?;
    let name = path.map_or("the bundled level".to_string(), |p| p.display().to_string());
    World::new()
        .verify_level(blob, level_registry(), &VerifyOptions::default())
        .map_err(|e| format!("{name}: {e}"))
}

/// Reads the options' level (as [`load_level`]) and checks that it and the generated entities
/// fit in one world with room to recycle particles: the entity manager keeps
/// `MINIMUM_FREE_INDICES` freed ids waiting before it reuses one, so a world fuller than
/// that margin could not respawn the particles it despawns.
pub(crate) fn load_level_for(opts: &Options) -> Result<Level, String> {
    use sigecs::entity::{MAX_ENTITIES, MINIMUM_FREE_INDICES};
    let level = load_level(opts.level.as_deref())?;
    let room = MAX_ENTITIES - MINIMUM_FREE_INDICES;
    let total = (level.num_entities() as usize).saturating_add(opts.entities);
    if total > room {
        return Err(format!(
            "the level's {} entities and --entities {} make {total}, more than a world can \
             hold while it recycles particles ({room}: {MAX_ENTITIES} ids less the \
             {MINIMUM_FREE_INDICES} freed ones that wait before reuse); lower --entities to \
             at most {}",
            level.num_entities(),
            opts.entities,
            room.saturating_sub(level.num_entities() as usize)
        ));
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::population::{fresh_world, particle};
    use sigecs::transform::TransformManager;
    use sigecs::Entity;
    use sigecs_demo::components::physics::{DebugName, Leader, Lifetime, Note};
    use sigecs_level::EntityCompiler;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_bundled_level_is_its_json_compiled() {
        let json =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/level.json"))
                .unwrap();
        let blob = EntityCompiler::new(level_registry())
            .compile_str(&json)
            .unwrap();
        assert!(
            blob == BUNDLED_LEVEL,
            "assets/level.bin is stale: run python3 scripts/make_level.py"
        );
        let level = load_level(None).unwrap();
        assert_eq!(level.num_entities(), 11_300);
        assert_eq!(level.depth(), 3);
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let e = world.spawn_level_with(&level, &mut tm).unwrap();
        world.check_invariants().unwrap();
        // Escorts (after the 500 ships) follow their ship, which is their parent.
        let escort = e[500];
        let leader = world.get::<Leader>(escort).unwrap().0;
        let parent = tm.parent(tm.lookup(escort).unwrap()).unwrap().unwrap();
        assert_eq!(tm.entity(parent).unwrap(), leader);
        assert_eq!(world.get::<DebugName>(leader).unwrap().0, "ship-0");
        // The markers' notes (postcard `String`s, after the 500 ships, 3,000 escorts, 3,000
        // exhaust particles and 800 beacons) come out whole, longer ones included.
        let note = |i: usize| world.get::<Note>(e[7_300 + i]).unwrap().0.clone();
        assert_eq!(note(0), "marker 0: hold here");
        assert_eq!(
            note(2),
            "marker 2: hold here until the convoy passes until the convoy passes"
        );
    }

    /// `--entities` values that pass the option check but, with the level's entities, do not
    /// fit are an error, not a panic in `spawn_batch`.
    #[test]
    fn a_level_and_entities_that_do_not_fit_are_an_error_not_a_panic() {
        use sigecs::entity::{MAX_ENTITIES, MINIMUM_FREE_INDICES};
        let level_n = load_level(None).unwrap().num_entities() as usize;
        let room = MAX_ENTITIES - MINIMUM_FREE_INDICES;
        let opts = |n: usize| {
            parse_args(args(&format!("--entities {n}")))
                .unwrap()
                .unwrap()
        };
        for n in [4_190_000, 4_183_005, room - level_n + 1, MAX_ENTITIES] {
            let e = load_level_for(&opts(n)).map(|_| ()).unwrap_err();
            assert!(e.contains("more than a world can hold"), "{n}: {e}");
            assert!(e.contains(&format!("at most {}", room - level_n)), "{e}");
        }
        assert!(load_level_for(&opts(room - level_n)).is_ok());
        // The largest accepted world spawns and recycles without running out of ids.
        let opts = Options {
            frames: 2,
            threads: 1,
            ..opts(room - level_n)
        };
        let (mut world, mut rng) = fresh_world(&opts, &load_level_for(&opts).unwrap());
        assert_eq!(world.len(), room);
        for _ in 0..3 {
            let expired: Vec<Entity> = world
                .query::<(Entity, &Lifetime)>()
                .map(|(e, _)| e)
                .take(3000)
                .collect();
            for e in &expired {
                world.despawn(*e);
            }
            world.spawn_batch((0..expired.len()).map(|_| particle(&mut rng)));
        }
        assert_eq!(world.len(), room);
    }
}
