//! insert / remove: entities move between the stores of declared signatures through the
//! generated transition table, and to and from the dynamic stores of undeclared sets (or, in a
//! strict world, undeclared targets are errors); missing components and stale ids are errors
//! that leave the world exactly as it was.

use sigecs_fixtures::fixture;

use fixture::*;
use sigecs::{Change, ComponentOf, Entity, WorldError, WorldModel};
use sigecs_fixtures::fixture::strict;

/// Every (entity, signature, A, B) in the world (open or strict), for before/after
/// comparisons.
fn snapshot<M: WorldModel>(
    w: &sigecs::World<M>,
) -> Vec<(Entity, &'static str, Option<A>, Option<B>)>
where
    A: ComponentOf<M>,
    B: ComponentOf<M>,
{
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
    assert_eq!(w.is_declared(es[0]), Some(true));
    assert_eq!(w.check_invariants(), Ok(()));
}

/// A strict world refuses what an open one keeps in a dynamic store: an insert into, or a
/// remove out of, a set no signature declares, with the sets and the fix.
#[test]
fn a_strict_world_refuses_undeclared_sets() {
    let mut w = strict::World::new();
    let ba = w.spawn(BAligned {
        b: B(1.0),
        aligned: Aligned(7),
    });
    let err = w.insert(ba, A(9)).unwrap_err().to_string();
    assert!(
        err.contains("and `A | ALIGNED | B` is not a declared signature"),
        "{err}"
    );
    // From a rows store with a cold component: Labelled = {A, Aligned, Label}.
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
            current: "A | ALIGNED | LABEL".into(),
            missing: "A | ALIGNED".into(),
        }
    );
    assert!(w.undeclared().is_empty());
    assert_eq!(w.stats().dynamic().count(), 0);
    assert_eq!(w.check_invariants(), Ok(()));
}

/// An open world moves the entity to the dynamic store of the undeclared set, from a columns
/// store and from a rows store with a cold component, and back to a declared one.
#[test]
fn undeclared_sets_live_in_dynamic_stores() {
    let mut w = World::new();
    let ba = w.spawn(BAligned {
        b: B(1.0),
        aligned: Aligned(7),
    });
    assert_eq!(w.insert(ba, A(9)), Ok(None));
    assert_eq!(w.signature_name_of(ba), Some("A | ALIGNED | B"));
    assert_eq!(w.is_declared(ba), Some(false));
    assert_eq!(
        (w.get::<A>(ba), w.get::<B>(ba), w.get::<Aligned>(ba)),
        (Some(&A(9)), Some(&B(1.0)), Some(&Aligned(7)))
    );
    // Replacing a component in a dynamic store.
    assert_eq!(w.insert(ba, A(10)), Ok(Some(A(9))));
    let e = w.spawn(Labelled {
        a: A(1),
        aligned: Aligned(2),
        label: Label("l".into()),
    });
    assert_eq!(w.remove::<Label>(e), Ok(Label("l".into())));
    assert_eq!(w.signature_name_of(e), Some("A | ALIGNED"));
    assert_eq!(w.get::<Aligned>(e), Some(&Aligned(2)));
    // And back to declared signatures: {A, Aligned} + Label is Labelled again, {A, Aligned,
    // B} - A is BAligned.
    assert_eq!(w.insert(e, Label("m".into())), Ok(None));
    assert_eq!(w.signature_name_of(e), Some("Labelled"));
    assert_eq!(w.get::<Label>(e), Some(&Label("m".into())));
    assert_eq!(w.remove::<A>(ba), Ok(A(10)));
    assert_eq!(w.signature_name_of(ba), Some("BAligned"));
    assert_eq!(w.get::<Aligned>(ba), Some(&Aligned(7)));
    // Both dynamic stores stay (empty), with what they saw.
    let sets: Vec<String> = w.undeclared().iter().map(|u| u.to_string()).collect();
    assert_eq!(
        sets,
        [
            "A | ALIGNED | B: 0 entities now, 1 at most, 2 moves",
            "A | ALIGNED: 0 entities now, 1 at most, 2 moves"
        ]
    );
    assert_eq!(w.stats().dynamic().count(), 2);
    assert_eq!(w.check_invariants(), Ok(()));
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
    let mut w = strict::World::new();
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
            current: "A".into(),
            missing: "A | ZST".into(),
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

/// In an open world the last component can be removed too: the entity stays alive with no
/// component, in the dynamic store of the empty set, which no signature can declare.
#[test]
fn removing_the_last_component_leaves_an_entity_with_none() {
    let mut w = World::new();
    let e = w.spawn(JustA { a: A(1) });
    assert_eq!(w.remove::<A>(e), Ok(A(1)));
    assert!(w.is_alive(e));
    assert_eq!(w.signature_of(e), Some(ComponentSet::empty()));
    assert_eq!(w.signature_name_of(e), Some("(no components)"));
    assert_eq!(w.get::<A>(e), None);
    assert_eq!(w.query::<Entity>().collect::<Vec<_>>(), [e]);
    assert_eq!(w.undeclared()[0].declaration(), None);
    assert!(w.undeclared()[0]
        .to_string()
        .starts_with("(no components): 1 "));
    assert_eq!(w.insert(e, A(2)), Ok(None));
    assert_eq!(w.signature_name_of(e), Some("JustA"));
    assert!(w.despawn(e));
    assert_eq!(w.check_invariants(), Ok(()));
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
        // Into and out of a dynamic store ({B, Aligned, Counted}): nothing dropped, nothing
        // leaked.
        let e = w.spawn(BAligned {
            b: B(0.0),
            aligned: Aligned(0),
        });
        assert_eq!(w.insert(e, Counted::new(5)).unwrap(), None);
        assert_eq!(Counted::live() - before, 11);
        assert_eq!(w.remove::<Counted>(e).unwrap().0, 5);
        assert_eq!(Counted::live() - before, 10);
        assert_eq!(w.insert(e, Counted::new(6)).unwrap(), None);
    }
    assert_eq!(
        Counted::live(),
        before,
        "the world's drop dropped the dynamic store too"
    );
    // A refused insert drops the offered value and nothing else.
    {
        let mut w = strict::World::new();
        let e = w.spawn(BAligned {
            b: B(0.0),
            aligned: Aligned(0),
        });
        assert!(w.insert(e, Counted::new(5)).is_err());
        assert_eq!(Counted::live(), before);
    }
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
