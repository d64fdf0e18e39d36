//! The generated world's API on the fixture world: spawn, despawn, get, stale ids, batches,
//! systems and their filters, resources, stats, and drop accounting.

use sigecs_fixtures::fixture;

use fixture::*;
use sigecs::entity::MINIMUM_FREE_INDICES;
use sigecs::{Entity, Layout, WorldModel};

fn everything(i: u32) -> Everything {
    Everything {
        a: A(i),
        b: B(f64::from(i) / 2.0),
        zst: Zst,
        counted: Counted::new(i),
        aligned: Aligned(u64::from(i) * 3),
        label: Label(format!("e{i}")),
    }
}

#[test]
fn spawn_and_get_every_component() {
    let mut w = World::new();
    let e = w.spawn(everything(7));
    assert!(w.is_alive(e));
    assert_eq!(w.len(), 1);
    assert_eq!(w.get::<A>(e), Some(&A(7)));
    assert_eq!(w.get::<B>(e), Some(&B(3.5)));
    assert_eq!(w.get::<Zst>(e), Some(&Zst));
    assert_eq!(w.get::<Counted>(e).map(|c| c.0), Some(7));
    assert_eq!(w.get::<Aligned>(e), Some(&Aligned(21)));
    assert_eq!(w.get::<Label>(e).map(|l| l.0.as_str()), Some("e7"));
    let aligned: *const Aligned = w.get::<Aligned>(e).unwrap();
    assert_eq!(
        aligned as usize % 16,
        0,
        "16-byte alignment is kept in storage"
    );

    let j = w.spawn(JustA { a: A(1) });
    assert_eq!(w.get::<B>(j), None, "missing component is None");
    assert_eq!(w.signature_of(j), Some(ComponentSet::A));
    assert_eq!(w.signature_name_of(j), Some("JustA"));
    assert_eq!(
        w.signature_of(e),
        Some(ComponentSet::all()),
        "Everything holds every component"
    );
}

#[test]
fn get_mut_writes_only_the_target() {
    let mut w = World::new();
    let es: Vec<Entity> = (0..4).map(|i| w.spawn(AB { a: A(i), b: B(0.0) })).collect();
    w.get_mut::<A>(es[2]).unwrap().0 = 99;
    let values: Vec<u32> = es.iter().map(|e| w.get::<A>(*e).unwrap().0).collect();
    assert_eq!(values, [0, 1, 99, 3]);
    assert!(w.get_mut::<Counted>(es[0]).is_none());
}

#[test]
fn despawn_is_swap_remove_and_keeps_locations_right() {
    let mut w = World::new();
    let es: Vec<Entity> = (0..5)
        .map(|i| {
            w.spawn(AB {
                a: A(i),
                b: B(f64::from(i)),
            })
        })
        .collect();
    assert!(w.despawn(es[1]));
    assert!(!w.despawn(es[1]), "second despawn is refused");
    assert!(!w.is_alive(es[1]));
    assert_eq!(w.get::<A>(es[1]), None);
    // The last row moved into row 1; every survivor still reads its own values.
    assert_eq!(w.store::<AB>().entities(), &[es[0], es[4], es[2], es[3]]);
    for (i, e) in es.iter().enumerate().filter(|(i, _)| *i != 1) {
        assert_eq!(w.get::<A>(*e), Some(&A(i as u32)));
        assert_eq!(w.get::<B>(*e), Some(&B(i as f64)));
    }
    // Removing the last row moves nothing.
    assert!(w.despawn(es[3]));
    assert_eq!(w.store::<AB>().entities(), &[es[0], es[4], es[2]]);
    assert_eq!(w.len(), 3);
}

#[test]
fn stale_and_foreign_ids_are_never_another_entity() {
    let mut w = World::new();
    let first = w.spawn(JustA { a: A(1) });
    w.despawn(first);
    // Cycle enough entities that the first slot is reused.
    let filler: Vec<Entity> = (0..=MINIMUM_FREE_INDICES as u32)
        .map(|i| w.spawn(JustA { a: A(i) }))
        .collect();
    for e in filler {
        w.despawn(e);
    }
    let reused = w.spawn(JustA { a: A(42) });
    assert_eq!(reused.index(), first.index());
    assert_ne!(reused, first);
    assert_eq!(w.get::<A>(first), None, "stale id reads nothing");
    assert!(w.get_mut::<A>(first).is_none());
    assert!(!w.despawn(first), "stale id cannot despawn the new entity");
    assert_eq!(w.get::<A>(reused), Some(&A(42)));
    // Ids this world never issued.
    for bogus in [
        Entity::new(1_000_000, 0),
        Entity::new(first.index() + 1, 200),
    ] {
        assert!(!w.is_alive(bogus));
        assert_eq!(w.get::<A>(bogus), None);
        assert!(!w.despawn(bogus));
    }
    assert_eq!(w.len(), 1);
}

#[test]
fn spawn_batch_places_every_value_in_order() {
    let mut w = World::new();
    w.spawn(AB {
        a: A(100),
        b: B(0.0),
    });
    // A filter makes the size hint inexact.
    let es = w.spawn_batch(
        (0..10)
            .filter(|i| i % 2 == 0)
            .map(|i| AB { a: A(i), b: B(1.0) }),
    );
    assert_eq!(es.len(), 5);
    for (e, i) in es.iter().zip([0, 2, 4, 6, 8]) {
        assert_eq!(w.get::<A>(*e), Some(&A(i)));
        assert_eq!(w.signature_name_of(*e), Some("AB"));
    }
    assert_eq!(w.store::<AB>().len(), 6);
    assert_eq!(w.len(), 6);
    let unique: std::collections::HashSet<_> = es.iter().collect();
    assert_eq!(unique.len(), 5, "no id issued twice in a batch");
    assert!(w.spawn_batch(std::iter::empty::<AB>()).is_empty());
}

#[test]
fn panicking_batch_iterator_leaves_the_world_unchanged() {
    let before = Counted::live();
    let mut w = World::new();
    let keep = w.spawn(ACounted {
        a: A(1),
        counted: Counted::new(1),
    });
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        w.spawn_batch((0..10).map(|i| {
            if i == 5 {
                panic!("value source failed");
            }
            ACounted {
                a: A(i),
                counted: Counted::new(i),
            }
        }));
    }));
    assert!(result.is_err());
    assert_eq!(w.len(), 1);
    assert_eq!(w.store::<ACounted>().len(), 1);
    assert_eq!(w.get::<A>(keep), Some(&A(1)));
    assert_eq!(
        Counted::live() - before,
        1,
        "the five pushed values were dropped"
    );
    drop(w);
    assert_eq!(Counted::live(), before);
}

#[test]
fn a_batch_that_grows_its_store_then_panics_drops_exactly_what_it_wrote() {
    let before = Counted::live();
    let mut w = World::new();
    let keep = w.spawn(ACounted {
        a: A(1),
        counted: Counted::new(1),
    });
    // No size hint: the store grows several times while the batch writes beyond its length.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        w.spawn_batch((0..100).filter(|_| true).map(|i| {
            if i == 70 {
                panic!("value source failed");
            }
            ACounted {
                a: A(i),
                counted: Counted::new(i),
            }
        }));
    }));
    assert!(result.is_err());
    assert_eq!(
        Counted::live() - before,
        1,
        "the 70 written values were dropped"
    );
    assert_eq!(w.store::<ACounted>().len(), 1);
    assert_eq!(w.get::<A>(keep), Some(&A(1)));
    w.check_invariants().unwrap();
    // The store is usable after the rollback, and its old row survived the moves.
    let es = w.spawn_batch((0..40).filter(|_| true).map(|i| ACounted {
        a: A(i),
        counted: Counted::new(i),
    }));
    assert_eq!(w.get::<A>(es[39]), Some(&A(39)));
    assert_eq!(w.get::<A>(keep), Some(&A(1)));
    assert_eq!(Counted::live() - before, 41);
    drop(w);
    assert_eq!(Counted::live(), before);
}

#[test]
fn drops_are_exact() {
    let before = Counted::live();
    {
        let mut w = World::new();
        let es = w.spawn_batch((0..50).map(everything));
        w.spawn_batch((0..30).map(|i| ACounted {
            a: A(i),
            counted: Counted::new(i),
        }));
        assert_eq!(Counted::live() - before, 80);
        for e in es.iter().step_by(2) {
            assert!(w.despawn(*e));
        }
        assert_eq!(
            Counted::live() - before,
            55,
            "each despawn drops exactly once"
        );
        for e in es.iter().step_by(2) {
            assert!(!w.despawn(*e));
        }
        assert_eq!(Counted::live() - before, 55, "no double drop");
    }
    assert_eq!(Counted::live(), before, "dropping the world drops the rest");
}

#[test]
fn systems_visit_exactly_the_matching_rows() {
    let mut w = World::new();
    let just = w.spawn(JustA { a: A(1) });
    let ab = w.spawn(AB { a: A(2), b: B(1.0) });
    let abz = w.spawn(ABZst {
        a: A(3),
        b: B(1.0),
        zst: Zst,
    });
    let ba = w.spawn(BAligned {
        b: B(1.0),
        aligned: Aligned(0),
    });
    let lab = w.spawn(Labelled {
        a: A(5),
        aligned: Aligned(0),
        label: Label("x".into()),
    });
    let all = w.spawn(everything(6));

    w.run_bump_a();
    let a = |w: &World, e| w.get::<A>(e).unwrap().0;
    assert_eq!(
        [a(&w, just), a(&w, ab), a(&w, abz), a(&w, lab), a(&w, all)],
        [2, 3, 4, 6, 7]
    );

    w.run_a_into_b();
    let b = |w: &World, e| w.get::<B>(e).unwrap().0;
    assert_eq!(
        [b(&w, ab), b(&w, abz), b(&w, ba), b(&w, all)],
        [4.0, 5.0, 1.0, 10.0]
    );

    // without(Zst): ABZst and Everything are skipped.
    w.run_double_b();
    assert_eq!(
        [b(&w, ab), b(&w, abz), b(&w, ba), b(&w, all)],
        [8.0, 5.0, 2.0, 10.0]
    );

    // with(Aligned) and Option<&A>: BAligned has no A, so it adds 1.
    w.run_aligned_tick();
    let al = |w: &World, e| w.get::<Aligned>(e).unwrap().0;
    assert_eq!([al(&w, ba), al(&w, lab), al(&w, all)], [1, 6, 18 + 7]);

    // Cold access in a rows store, with an optional mutable hot component.
    w.run_relabel();
    assert_eq!(w.get::<Label>(lab).unwrap().0, "x!");
    assert_eq!(a(&w, lab), 16);
    assert_eq!(w.get::<Label>(all).unwrap().0, "e6!");

    // Entity parameter and a mutable resource.
    w.spawn(ACounted {
        a: A(0),
        counted: Counted::new(100),
    });
    w.run_tally();
    let t = w.resource::<Tally>();
    assert_eq!(t.rows, 2);
    let expected: u64 = w
        .entities()
        .filter_map(|e| {
            w.get::<Counted>(e)
                .map(|c| u64::from(c.0) + u64::from(e.index()))
        })
        .sum();
    assert_eq!(t.sum, expected);
}

#[test]
fn run_system_by_index_and_metadata() {
    let mut w = World::new();
    w.spawn(AB { a: A(1), b: B(0.0) });
    w.spawn(JustA { a: A(1) });
    let i = SYSTEM_NAMES.iter().position(|n| *n == "bump_a").unwrap();
    assert_eq!(w.run_system(i), Ok(true));
    assert_eq!(w.run_system(SYSTEM_NAMES.len()), Ok(false));
    assert_eq!(w.system_rows(i), 2);
    let j = SYSTEM_NAMES.iter().position(|n| *n == "a_into_b").unwrap();
    assert_eq!(w.system_rows(j), 1);
    let names: Vec<&str> = Model::systems()[j]
        .stores
        .iter()
        .map(|&s| Model::stores()[s as usize].name)
        .collect();
    assert_eq!(names, ["AB", "ABZst", "Everything"]);
    assert_eq!(w.entities().count(), 2);
}

#[test]
fn resources_are_owned_by_the_world() {
    let mut w = World::with_resources(Resources {
        tally: Tally { rows: 5, sum: 0 },
    });
    assert_eq!(w.resource::<Tally>().rows, 5);
    w.resource_mut::<Tally>().sum = 9;
    assert_eq!(w.resources().tally.sum, 9);
    w.run_tally();
    assert_eq!(w.resource::<Tally>().rows, 5, "no Counted rows: untouched");
}

#[test]
fn stats_measure_memory_efficiency() {
    let mut w = World::new();
    let es = w.spawn_batch((0..100).map(|i| AB { a: A(i), b: B(0.0) }));
    let s = w.stats();
    let ab = s.stores.iter().find(|s| s.name == "AB").unwrap();
    assert_eq!(ab.layout, Layout::Columns);
    assert_eq!(ab.entities, 100);
    assert_eq!(ab.live_bytes, 100 * (4 + 8));
    assert!(ab.component_bytes >= ab.live_bytes);
    assert!(ab.allocated_bytes >= ab.component_bytes + 100 * 4);
    let full = ab.efficiency();
    for e in &es[..50] {
        w.despawn(*e);
    }
    let ab = w
        .stats()
        .stores
        .into_iter()
        .find(|s| s.name == "AB")
        .unwrap();
    assert_eq!(ab.live_bytes, 50 * 12);
    assert!(
        ab.efficiency() < full,
        "despawned rows leave capacity unused"
    );
    let rows = w
        .stats()
        .stores
        .into_iter()
        .find(|s| s.name == "Labelled")
        .unwrap();
    assert_eq!(rows.layout, Layout::Rows);
    assert_eq!(w.stats().entities(), 50);
}

#[test]
fn invariants_hold_after_every_kind_of_change() {
    let mut w = World::new();
    assert_eq!(w.check_invariants(), Ok(()));
    let es = w.spawn_batch((0..20).map(everything));
    w.spawn_batch((0..20).map(|i| AB { a: A(i), b: B(0.0) }));
    for e in es.iter().step_by(3) {
        w.despawn(*e);
    }
    assert_eq!(w.check_invariants(), Ok(()));
    let e = w.spawn(JustA { a: A(0) });
    w.insert(e, B(1.0)).unwrap();
    w.remove::<B>(e).unwrap();
    w.run_all();
    assert_eq!(w.check_invariants(), Ok(()));
}

#[test]
fn cache_stats_count_the_arrays_and_bytes_each_pass_streams() {
    // The bundled world: `Body` is a columns store, `Ship` a rows store (position, velocity,
    // acceleration, mass in one 40-byte row struct; its name in a cold column).
    let w = sigecs_demo::World::new();
    let stats = w.cache_stats();
    let find = |system: &str, store: &str| {
        stats
            .iter()
            .find(|p| p.system == system && p.store == store)
            .unwrap_or_else(|| panic!("{system} over {store}"))
            .clone()
    };
    // integrate: position, velocity, acceleration (12 bytes each).
    let body = find("integrate", "Body");
    assert_eq!((body.arrays, body.loaded, body.used), (3, 36, 36));
    assert_eq!(body.efficiency(), 1.0);
    let ship = find("integrate", "Ship");
    assert_eq!((ship.arrays, ship.loaded, ship.used), (1, 40, 36));
    assert_eq!(ship.efficiency(), 0.9);
    // apply_gravity: acceleration, and mass through its `with(Mass)` filter (12 + 4 bytes).
    let gravity = find("apply_gravity", "Ship");
    assert_eq!((gravity.arrays, gravity.loaded, gravity.used), (1, 40, 16));
    assert_eq!(w.cache_stats().iter().map(|p| p.rows).sum::<usize>(), 0);
    // The table weighs each pass by rows × bytes loaded: no rows, nothing loaded, 100%.
    let table = sigecs::CacheStats::table(&stats);
    assert!(table.contains("integrate"), "{table}");
    assert!(
        table.ends_with(
            "cache efficiency: 100.0% of the bytes the passes stream are bytes they use"
        ),
        "{table}"
    );
    let weighted = sigecs::CacheStats::table(&[
        sigecs::CacheStats { rows: 10, ..body },
        sigecs::CacheStats { rows: 30, ..ship },
    ]);
    // (10 × 36 + 30 × 36) / (10 × 36 + 30 × 40) = 1440 / 1560
    assert!(
        weighted
            .ends_with("cache efficiency: 92.3% of the bytes the passes stream are bytes they use"),
        "{weighted}"
    );
}
