//! `run_schedule` gives the world `run_all` gives: a system with `Commands` applies them where
//! declaration order applies them (spawns, inserts and despawns), whatever the stages are and
//! however the passes split (`set_min_chunk`, up to `usize::MAX`, which never splits).

use sigecs::Entity;
use sigecs_fixtures::repro::*;

fn unit(health: i32, lifetime: u32) -> Unit {
    Unit {
        health: Health(health),
        lifetime: Lifetime(lifetime),
    }
}

/// A `Commands` system that conflicts with no earlier system is still placed after the earlier
/// systems' stages, so its commands apply after `take_damage` ran, as in `run_all` (Health(6);
/// applied in stage 0 they would give Health(11)).
#[test]
fn schedule_with_commands_equals_declaration_order() {
    let mut sequential = World::new();
    let mut staged = World::new();
    let a = sequential.spawn(unit(10, 1));
    let b = staged.spawn(unit(10, 1));
    sequential.run_all().unwrap();
    staged.run_schedule().unwrap();
    assert_eq!(sequential.get::<Health>(a), Some(&Health(6)));
    assert_eq!(
        staged.get::<Health>(b),
        Some(&Health(6)),
        "commands applied after take_damage"
    );
    assert_eq!(staged.signature_name_of(b), Some("DeadUnit"));
    let stages: Vec<&[&str]> = World::schedule().stages.iter().map(|s| s.systems).collect();
    assert_eq!(
        stages,
        [&["regen", "take_damage", "expire"][..], &["run_script"][..]],
        "expire follows take_damage; regen runs before it row by row"
    );
}

/// The same with `despawn`, over many entities and frames: every value matches.
#[test]
fn schedule_with_despawns_equals_declaration_order() {
    // Sized down under Miri (CI's time budget); every kind of frame still happens.
    let (entities, frames) = if cfg!(miri) { (60u32, 6) } else { (200, 8) };
    let build = || {
        let mut w = World::new();
        for i in 0..entities {
            if i % 3 == 0 {
                w.spawn(FragileUnit {
                    health: Health(i as i32),
                    lifetime: Lifetime(i % 5 + 1),
                    fragile: Fragile,
                });
            } else {
                w.spawn(unit(i as i32, i % 7 + 1));
            }
        }
        w
    };
    let (mut sequential, mut staged) = (build(), build());
    staged.set_min_chunk(Some(8));
    staged.set_deterministic(false);
    for _ in 0..frames {
        sequential.run_all().unwrap();
        staged.run_schedule().unwrap();
        let state = |w: &World| {
            let mut v: Vec<(Entity, i32, u32, bool)> = w
                .entities()
                .map(|e| {
                    (
                        e,
                        w.get::<Health>(e).unwrap().0,
                        w.get::<Lifetime>(e).unwrap().0,
                        w.get::<Dead>(e).is_some(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(state(&sequential), state(&staged));
        assert_eq!(staged.check_invariants(), Ok(()));
    }
}

/// `set_min_chunk(Some(usize::MAX))` means "never split" (the threshold `2 * min_chunk` saturates).
#[test]
fn min_chunk_of_usize_max_never_splits() {
    let mut w = World::new();
    w.spawn_batch((0..100).map(|i| unit(i, 5)));
    w.set_min_chunk(Some(usize::MAX));
    w.run_schedule().unwrap();
    w.set_min_chunk(Some(0));
    w.run_schedule().unwrap();
    assert_eq!(
        w.query::<&Health>().map(|h| h.0).sum::<i32>(),
        (0..100).sum::<i32>() - 8 * 100
    );
}
