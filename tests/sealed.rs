//! The entry points that exist for generated code are public (hidden from the docs), so they
//! must be safe for any arguments: a hand-written "pass" that misuses them gets errors or
//! panics, never undefined behaviour. (Which items are public at all is pinned by
//! `ecs-core/tests/public_api.rs`.)

use sigecs::__private::{run_one, run_parts, PassCost, Pending};
use sigecs::entity::EntityManager;
use sigecs::{Entity, WorldError};
use sigecs_fixtures::repro::*;

/// Spawns `n` units through commands whose ids are reserved from `manager`, which is not the
/// world's own entity manager.
fn foreign_pending(manager: &EntityManager, n: usize) -> Pending {
    let mut rows = vec![0u8; n];
    run_parts(
        [&mut rows[..]],
        None,
        usize::MAX,
        &mut PassCost::new(),
        manager,
        &|part: &mut [u8], commands: &mut sigecs::Commands<'_>| {
            for _ in part.iter() {
                commands.spawn(Unit {
                    health: Health(-1),
                    lifetime: Lifetime(1),
                });
            }
        },
    )
}

/// The runtime world the generated `World` wraps.
type Inner = sigecs::World<Model>;

thread_local! {
    static FOREIGN: EntityManager = {
        // Ids far beyond any the test world issues, and then the first ones.
        let mut m = EntityManager::new();
        for _ in 0..100 {
            m.create().unwrap();
        }
        m
    };
}

fn far_ids(_: &mut Inner) -> Pending {
    FOREIGN.with(|m| foreign_pending(m, 2))
}

fn first_ids(_: &mut Inner) -> Pending {
    foreign_pending(&EntityManager::new(), 3)
}

/// Ids reserved from another entity manager are refused when their spawns apply: before, the
/// world committed rows for ids it never issued, and after `clear` an entity could stay alive
/// "located" in an empty store (a use after free on `get`, a crash on `despawn`).
#[test]
fn spawns_reserved_from_another_entity_manager_are_refused() {
    let mut w = World::new();
    let mine: Vec<Entity> = (0..3)
        .map(|i| {
            w.spawn(Unit {
                health: Health(i),
                lifetime: Lifetime(1),
            })
        })
        .collect();
    for pass in [far_ids as fn(&mut Inner) -> Pending, first_ids] {
        let errors = run_one(&mut *w, pass);
        assert!(!errors.is_empty(), "every foreign spawn is refused");
        for e in &errors {
            assert!(
                matches!(e.reason(), WorldError::NoSuchEntity(_)),
                "{e}: refused as an id this world did not reserve"
            );
        }
        assert_eq!(w.len(), 3);
        assert_eq!(w.check_invariants(), Ok(()));
    }
    for (i, &e) in mine.iter().enumerate() {
        assert_eq!(w.get::<Health>(e), Some(&Health(i as i32)), "untouched");
    }
    // After a clear the slots are reused by real spawns only.
    w.clear();
    assert_eq!(run_one(&mut *w, first_ids).len(), 3);
    let fresh = w.spawn(Unit {
        health: Health(7),
        lifetime: Lifetime(1),
    });
    assert_eq!(w.len(), 1);
    assert_eq!(w.get::<Health>(fresh), Some(&Health(7)));
    assert!(w.despawn(fresh));
    assert_eq!(w.check_invariants(), Ok(()));
}

/// A `Commands::spawn` that finds the index space exhausted returns a stale id, not entity 0
/// nor any other live entity, and the run reports the failure.
#[test]
#[cfg_attr(miri, ignore = "fills 2^22 entity slots")]
fn a_spawn_command_without_free_ids_returns_a_stale_id() {
    use sigecs::entity::MAX_ENTITIES;
    let mut w = World::new();
    let first = w.spawn(Scripted { director: Director });
    w.spawn_batch((1..MAX_ENTITIES).map(|_| Unit {
        health: Health(0),
        lifetime: Lifetime(1),
    }));
    assert_eq!(w.entity_manager().available(), 0);
    let got = std::sync::Arc::new(std::sync::Mutex::new(None));
    let out = got.clone();
    w.resource::<Script>().push(move |c| {
        *out.lock().unwrap() = Some(c.spawn(Unit {
            health: Health(1),
            lifetime: Lifetime(1),
        }));
    });
    let errors = w.run_run_script().unwrap_err().0;
    let e = got.lock().unwrap().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(
        matches!(errors[0].reason(), WorldError::Entity(_)),
        "{}",
        errors[0]
    );
    assert!(!w.is_alive(e), "{e} is not alive");
    assert_ne!(e, first);
    assert_eq!(w.len(), MAX_ENTITIES);
    // Stale like a despawned id: the last slot is alive with another generation.
    let last = Entity::new(e.index(), e.generation().wrapping_sub(1));
    assert_eq!(e.index() as usize, MAX_ENTITIES - 1);
    assert!(w.is_alive(last));
    assert_eq!(w.get::<Health>(e), None);
}
