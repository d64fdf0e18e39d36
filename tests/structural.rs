//! insert / remove: entities move between the stores of declared signatures through the
//! generated transition table; undeclared targets, missing components and stale ids are errors
//! that leave the world exactly as it was.

use sigecs_fixtures::fixture;

use ecs_core::{Change, Entity, WorldError};
use fixture::*;

/// Every (entity, signature, A, B) in the world, for before/after comparisons.
fn snapshot(w: &World) -> Vec<(Entity, &'static str, Option<A>, Option<B>)> {
    let mut v: Vec<_> = w
        .entities()
        .map(|e| {
            (
                e,
                w.signature_name_of(e).unwrap(),
                w.get::<A>(e).copied(),
                w.get::<B>(e).copied(),
            )
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

#[test]
fn insert_moves_to_the_signature_with_the_component() {
    let mut w = World::new();
    let es: Vec<Entity> = (0..3).map(|i| w.spawn(JustA { a: A(i) })).collect();
    assert_eq!(w.insert(es[0], B(2.5)), Ok(None));
    assert_eq!(w.signature_name_of(es[0]), Some("AB"));
    assert_eq!(w.get::<A>(es[0]), Some(&A(0)));
    assert_eq!(w.get::<B>(es[0]), Some(&B(2.5)));
    // The entity that filled its old row still reads its own values.
    assert_eq!(w.store::<JustA>().entities(), &[es[2], es[1]]);
    assert_eq!(w.get::<A>(es[2]), Some(&A(2)));
    assert_eq!(w.get::<A>(es[1]), Some(&A(1)));
    // Into a rows store with a cold component: Labelled = {A, Aligned, Label}.
    let ba = w.spawn(BAligned {
        b: B(1.0),
        aligned: Aligned(7),
    });
    let err = w.insert(ba, A(9)).unwrap_err().to_string();
    assert!(
        err.contains("and {A, Aligned, B} is not a declared signature"),
        "{err}"
    );
    let e = w.spawn(Labelled {
        a: A(1),
        aligned: Aligned(2),
        label: Label("l".into()),
    });
    assert_eq!(
        w.remove::<Label>(e).unwrap_err(),
        WorldError::UndeclaredSignature {
            entity: e,
            change: Change::Remove,
            component: "Label",
            signature: "Labelled",
            current: "{A, Aligned, Label}".into(),
            missing: "{A, Aligned}".into(),
        }
    );
}

#[test]
fn inserting_a_present_component_replaces_it() {
    let mut w = World::new();
    let e = w.spawn(AB { a: A(1), b: B(1.0) });
    assert_eq!(w.insert(e, A(5)), Ok(Some(A(1))));
    assert_eq!(w.get::<A>(e), Some(&A(5)));
    assert_eq!(w.signature_name_of(e), Some("AB"));
}

#[test]
fn remove_moves_back_and_returns_the_value() {
    let mut w = World::new();
    let e = w.spawn(AB { a: A(3), b: B(4.0) });
    let other = w.spawn(AB { a: A(8), b: B(9.0) });
    assert_eq!(w.remove::<B>(e), Ok(B(4.0)));
    assert_eq!(w.signature_name_of(e), Some("JustA"));
    assert_eq!(w.get::<A>(e), Some(&A(3)));
    assert_eq!(w.get::<B>(e), None);
    assert_eq!(w.get::<B>(other), Some(&B(9.0)));
    assert_eq!(
        w.remove::<B>(e),
        Err(WorldError::MissingComponent {
            entity: e,
            signature: "JustA",
            component: "B"
        })
    );
}

#[test]
fn undeclared_targets_leave_the_entity_exactly_as_it_was() {
    let mut w = World::new();
    let e = w.spawn(JustA { a: A(1) });
    let f = w.spawn(AB { a: A(2), b: B(2.0) });
    let before = snapshot(&w);
    let err = w.insert(e, Zst).unwrap_err();
    assert_eq!(
        err,
        WorldError::UndeclaredSignature {
            entity: e,
            change: Change::Insert,
            component: "Zst",
            signature: "JustA",
            current: "{A}".into(),
            missing: "{A, Zst}".into(),
        }
    );
    let text = err.to_string();
    assert!(text.contains("cannot insert `Zst` into entity"), "{text}");
    assert!(text.contains("#[derive(Signature)]"), "{text}");
    // Removing the last component would leave an empty set.
    let err = w.remove::<A>(e).unwrap_err();
    assert!(err.to_string().contains("despawn the entity"), "{err}");
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.store::<JustA>().entities(), &[e]);
    assert_eq!(w.store::<AB>().entities(), &[f]);
}

#[test]
fn stale_ids_are_errors_and_write_nothing() {
    let mut w = World::new();
    let e = w.spawn(JustA { a: A(1) });
    w.despawn(e);
    let f = w.spawn(JustA { a: A(2) });
    let before = snapshot(&w);
    assert_eq!(w.insert(e, B(1.0)), Err(WorldError::NoSuchEntity(e)));
    assert_eq!(w.insert(e, A(7)), Err(WorldError::NoSuchEntity(e)));
    assert_eq!(w.remove::<A>(e), Err(WorldError::NoSuchEntity(e)));
    let never = Entity::new(500, 3);
    assert_eq!(w.insert(never, A(7)), Err(WorldError::NoSuchEntity(never)));
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.get::<A>(f), Some(&A(2)));
}

#[test]
fn moves_keep_drop_counts_exact() {
    let before = Counted::live();
    {
        let mut w = World::new();
        let es: Vec<Entity> = (0..20).map(|i| w.spawn(JustA { a: A(i) })).collect();
        for (i, e) in es.iter().enumerate() {
            assert_eq!(w.insert(*e, Counted::new(i as u32)).unwrap(), None);
        }
        assert_eq!(Counted::live() - before, 20);
        assert_eq!(w.store::<ACounted>().len(), 20);
        // Replacing returns the old value; dropping it leaves one live per entity.
        let old = w.insert(es[0], Counted::new(100)).unwrap().unwrap();
        assert_eq!(old.0, 0);
        drop(old);
        assert_eq!(Counted::live() - before, 20);
        for e in &es[..10] {
            let c = w.remove::<Counted>(*e).unwrap();
            assert!(c.0 < 20 || c.0 == 100);
        }
        assert_eq!(
            Counted::live() - before,
            10,
            "removed values were handed out and dropped"
        );
        for (i, e) in es.iter().enumerate() {
            assert_eq!(w.get::<A>(*e), Some(&A(i as u32)));
            assert_eq!(w.get::<Counted>(*e).is_some(), i >= 10);
        }
        // A refused insert drops the offered value and nothing else.
        let e = w.spawn(BAligned {
            b: B(0.0),
            aligned: Aligned(0),
        });
        assert!(w.insert(e, Counted::new(5)).is_err());
        assert_eq!(Counted::live() - before, 10);
    }
    assert_eq!(Counted::live(), before);
}

#[test]
fn round_trips_preserve_every_value() {
    let mut w = World::new();
    let es = w.spawn_batch((0..100).map(|i| JustA { a: A(i) }));
    for e in &es {
        w.insert(*e, B(f64::from(e.index()))).unwrap();
    }
    assert_eq!(w.store::<AB>().len(), 100);
    assert!(w.store::<JustA>().is_empty());
    for e in es.iter().rev() {
        assert_eq!(w.remove::<B>(*e), Ok(B(f64::from(e.index()))));
    }
    for (i, e) in es.iter().enumerate() {
        assert_eq!(w.get::<A>(*e), Some(&A(i as u32)));
        assert_eq!(w.signature_name_of(*e), Some("JustA"));
    }
}

#[test]
fn clear_despawns_everything_and_keeps_the_memory() {
    // Smaller under Miri (this test is run there in CI), the same paths.
    let (n, k) = if cfg!(miri) { (12, 4) } else { (300, 50) };
    let before = Counted::live();
    let mut w = World::new();
    let plain: Vec<Entity> = w.spawn_batch((0..n).map(|i| JustA { a: A(i) }));
    let counted: Vec<Entity> = (0..k)
        .map(|i| {
            let e = w.spawn(JustA { a: A(1000 + i) });
            w.insert(e, Counted::new(i)).unwrap();
            e
        })
        .collect();
    assert_eq!(Counted::live() - before, i64::from(k));
    let allocated: Vec<usize> = w.stats().stores.iter().map(|s| s.allocated_bytes).collect();

    w.clear();
    assert_eq!(w.len(), 0);
    assert!(w.is_empty());
    assert_eq!(Counted::live(), before, "every component was dropped, once");
    assert!(plain.iter().chain(&counted).all(|&e| !w.is_alive(e)));
    assert!(counted.iter().all(|&e| w.get::<A>(e).is_none()));
    assert!(w.stats().stores.iter().all(|s| s.entities == 0));
    assert_eq!(
        w.stats()
            .stores
            .iter()
            .map(|s| s.allocated_bytes)
            .collect::<Vec<_>>(),
        allocated,
        "the stores keep their memory"
    );
    assert_eq!(w.check_invariants(), Ok(()));
    assert!(!w.despawn(plain[0]), "a stale id despawns nothing");

    // The world works as new: spawns get fresh ids (never a stale one back) and values.
    let again: Vec<Entity> = w.spawn_batch((0..n).map(|i| JustA { a: A(i * 2) }));
    assert_eq!(w.len(), n as usize);
    assert!(again
        .iter()
        .all(|e| !plain.contains(e) && !counted.contains(e)));
    assert!(again
        .iter()
        .enumerate()
        .all(|(i, &e)| w.get::<A>(e) == Some(&A(i as u32 * 2))));
    w.clear();
    w.clear();
    assert_eq!(w.len(), 0);
    assert_eq!(w.check_invariants(), Ok(()));
}
