//! Run-time queries: stores chosen by bitmask, items in store id order, writes, optional
//! components, filters, both layouts, aliasing rejected before any reference exists.

use sigecs_fixtures::fixture;

use fixture::*;
use sigecs::prelude::*;

fn world() -> (World, Vec<Entity>) {
    let mut w = World::new();
    let es = vec![
        w.spawn(JustA { a: A(1) }),
        w.spawn(AB { a: A(2), b: B(2.0) }),
        w.spawn(ABZst {
            a: A(3),
            b: B(3.0),
            zst: Zst,
        }),
        w.spawn(BAligned {
            b: B(4.0),
            aligned: Aligned(4),
        }),
        w.spawn(Labelled {
            a: A(5),
            aligned: Aligned(5),
            label: Label("five".into()),
        }),
        w.spawn(AB { a: A(6), b: B(6.0) }),
    ];
    (w, es)
}

#[test]
fn visits_matching_stores_in_store_order() {
    let (w, es) = world();
    let got: Vec<(Entity, u32)> = w.query::<(Entity, &A)>().map(|(e, a)| (e, a.0)).collect();
    // Store ids follow signature names: AB, ABZst, JustA, Labelled (BAligned has no A).
    let expected = vec![(es[1], 2), (es[5], 6), (es[2], 3), (es[0], 1), (es[4], 5)];
    assert_eq!(got, expected);
    let order: Vec<&str> = got
        .iter()
        .map(|(e, _)| w.signature_name_of(*e).unwrap())
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "store id order is signature name order");
}

#[test]
fn writes_through_mutable_items() {
    let (mut w, es) = world();
    for (a, b) in w.query_mut::<(&mut A, &B)>().unwrap() {
        a.0 += b.0 as u32 * 10;
    }
    let values: Vec<u32> = es
        .iter()
        .map(|e| w.get::<A>(*e).map_or(0, |a| a.0))
        .collect();
    assert_eq!(values, [1, 22, 33, 0, 5, 66]);
}

#[test]
fn optional_components_and_filters() {
    let (w, es) = world();
    let got: Vec<(Entity, Option<f64>)> = w
        .query::<(Entity, &A, Option<&B>)>()
        .map(|(e, _, b)| (e, b.map(|b| b.0)))
        .collect();
    assert_eq!(got.len(), 5);
    for (e, b) in got {
        assert_eq!(
            b,
            w.get::<B>(e).map(|b| b.0),
            "Option matches the entity's signature"
        );
    }
    let without_zst: Vec<Entity> = w
        .query_filtered::<Entity, (With<B>, Without<Zst>)>()
        .collect();
    assert_eq!(without_zst, [es[1], es[5], es[3]]);
    let with_aligned: Vec<u64> = w
        .query_filtered::<&Aligned, With<A>>()
        .map(|a| a.0)
        .collect();
    assert_eq!(with_aligned, [5]);
    let zsts = w.query::<&Zst>().count();
    assert_eq!(zsts, 1);
}

#[test]
fn rows_layout_and_cold_components() {
    let (mut w, es) = world();
    for (label, aligned) in w.query_mut::<(&mut Label, &mut Aligned)>().unwrap() {
        label.0.push('!');
        assert_eq!(
            aligned as *mut Aligned as usize % 16,
            0,
            "alignment kept in rows"
        );
        aligned.0 *= 100;
    }
    assert_eq!(w.get::<Label>(es[4]).unwrap().0, "five!");
    assert_eq!(w.get::<Aligned>(es[4]).unwrap().0, 500);
    assert_eq!(
        w.get::<Aligned>(es[3]).unwrap().0,
        4,
        "BAligned has no Label: not visited"
    );
}

#[test]
fn aliasing_requests_are_rejected() {
    let (mut w, _) = world();
    let err = w.query_mut::<(&mut A, &A)>().err().unwrap();
    assert_eq!(err, WorldError::AliasedQuery { component: "A" });
    assert!(err.to_string().contains("borrows `A` twice"));
    assert!(w.query_mut::<(&B, &mut B)>().is_err());
    assert!(w.query_mut::<(&mut B, Option<&mut B>)>().is_err());
    assert_eq!(
        w.query::<(Entity, &A, &A)>().count(),
        w.query::<&A>().count(),
        "two shared borrows are fine"
    );
    assert!(w.query_mut::<(&A, &A)>().is_ok(), "also through query_mut");
}

#[test]
fn query_one_reads_one_entity() {
    let (mut w, es) = world();
    let (a, b) = w.query_one_mut::<(&mut A, Option<&B>)>(es[1]).unwrap();
    a.0 = 40;
    assert_eq!(b, Some(&B(2.0)));
    assert_eq!(w.get::<A>(es[1]), Some(&A(40)));
    assert_eq!(
        w.query_one::<(&A, &B)>(es[0]).err(),
        Some(WorldError::MissingComponent {
            entity: es[0],
            signature: "JustA",
            component: "B"
        })
    );
    w.despawn(es[0]);
    assert_eq!(
        w.query_one::<&A>(es[0]).err(),
        Some(WorldError::NoSuchEntity(es[0]))
    );
    assert_eq!(
        w.query_one_mut::<(&mut A, &mut A)>(es[1]).err(),
        Some(WorldError::AliasedQuery { component: "A" })
    );
}

#[test]
fn size_hint_is_exact_and_empty_stores_are_skipped() {
    let mut w = World::new();
    let es = w.spawn_batch((0..10).map(|i| AB { a: A(i), b: B(0.0) }));
    w.spawn_batch((0..5).map(|i| JustA { a: A(i) }));
    for e in &es {
        w.insert(*e, Zst).unwrap();
    }
    let mut q = w.query::<&A>();
    assert_eq!(q.len(), 15);
    q.next();
    assert_eq!(q.size_hint(), (14, Some(14)));
    let sum: u32 = q.map(|a| a.0).sum();
    assert_eq!(sum, (0..10).sum::<u32>() + (0..5).sum::<u32>());
}

/// A fold (`for_each`, `sum`, `collect`) after some `next()` calls goes on from the next row:
/// it neither restarts the current store nor skips one, so every row is yielded exactly once
/// and no two `&mut` items alias.
#[test]
fn fold_after_next_continues_where_next_stopped() {
    let (mut w, _) = world();
    let order: Vec<Entity> = w.query::<(Entity, &A)>().map(|(e, _)| e).collect();
    assert_eq!(order.len(), 5);
    // Stop inside the first store (AB holds two rows), at its end, and inside a later one.
    for taken in 0..=order.len() {
        let mut q = w.query_mut::<(Entity, &mut A)>().unwrap();
        let mut seen: Vec<Entity> = q.by_ref().take(taken).map(|(e, _)| e).collect();
        let rest = q.fold(Vec::new(), |mut v, (e, a)| {
            a.0 += 100;
            v.push(e);
            v
        });
        assert_eq!(rest.len(), order.len() - taken, "after {taken} items");
        seen.extend(rest);
        assert_eq!(seen, order, "after {taken} items");
    }
    // Each of the 6 folds wrote every row it visited once: row k was visited by the folds
    // that started before it.
    let bumps: Vec<u32> = order
        .iter()
        .map(|&e| w.get::<A>(e).unwrap().0 / 100)
        .collect();
    assert_eq!(bumps, [1, 2, 3, 4, 5]);
}

/// Every item of a query, taken with `next()` only (a `for` loop calls nothing else).
fn by_next<I: Iterator>(items: I) -> Vec<I::Item> {
    let mut all = Vec::new();
    for item in items {
        all.push(item);
    }
    all
}

/// `fold` and `for_each` walk a store whose values are packed (a column of the component's
/// type) with a constant step, and other stores (row structs: `Labelled`) value by value: both
/// yield what `next()` yields, in every layout, for zero-sized, over-aligned and optional
/// elements, and write the same rows.
#[test]
fn fold_yields_what_next_yields_in_every_layout() {
    let populated = || {
        let (mut w, es) = world();
        w.spawn_batch((10..40).map(|i| AB {
            a: A(i),
            b: B(i as f64),
        }));
        w.spawn_batch((50..53).map(|i| Labelled {
            a: A(i),
            aligned: Aligned(i as u64),
            label: Label(format!("l{i}")),
        }));
        (w, es)
    };
    let (mut w, es) = populated();
    macro_rules! same {
        ($q:ty, $item:expr) => {{
            let stepped: Vec<_> = by_next(w.query::<$q>()).into_iter().map($item).collect();
            let folded = w.query::<$q>().fold(Vec::new(), |mut all, item| {
                all.push($item(item));
                all
            });
            assert!(!stepped.is_empty(), stringify!($q));
            assert_eq!(folded, stepped, stringify!($q));
        }};
    }
    same!((Entity, &A), |(e, a): (Entity, &A)| (e, a.0));
    same!((&A, Option<&B>), |(a, b): (&A, Option<&B>)| (
        a.0,
        b.map(|b| b.0)
    ));
    same!((&A, &Aligned, &Label), |(a, x, l): (
        &A,
        &Aligned,
        &Label
    )| (a.0, x.0, l.0.clone()));
    same!((Entity, &Zst), |(e, _): (Entity, &Zst)| e);
    same!(Option<&Aligned>, |x: Option<&Aligned>| x.map(|x| x.0));

    // Writes: the same rows change, by the same amounts, whichever way the items are taken.
    let (mut stepped, _) = populated();
    w.query_mut::<(&mut A, Option<&mut Aligned>)>()
        .unwrap()
        .for_each(|(a, x)| {
            a.0 += 1000;
            if let Some(x) = x {
                assert_eq!(x as *mut Aligned as usize % 16, 0, "alignment kept");
                x.0 += 7;
            }
        });
    for (a, x) in by_next(
        stepped
            .query_mut::<(&mut A, Option<&mut Aligned>)>()
            .unwrap(),
    ) {
        a.0 += 1000;
        if let Some(x) = x {
            x.0 += 7;
        }
    }
    // One element alone: its own state decides the walk (a row struct's field is not packed
    // even where its size happens to divide the row's).
    w.query_mut::<&mut A>().unwrap().for_each(|a| a.0 += 10_000);
    for a in by_next(stepped.query_mut::<&mut A>().unwrap()) {
        a.0 += 10_000;
    }
    w.query_mut::<Option<&mut Aligned>>()
        .unwrap()
        .for_each(|x| x.into_iter().for_each(|x| x.0 += 3));
    for x in by_next(stepped.query_mut::<Option<&mut Aligned>>().unwrap()) {
        x.into_iter().for_each(|x| x.0 += 3);
    }
    let values = |w: &World| {
        w.query::<(Entity, &A, Option<&Aligned>)>()
            .map(|(e, a, x)| (e, a.0, x.map(|x| x.0)))
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&w), values(&stepped));
    let rows_of_labelled: Vec<(u32, u64)> = w
        .query::<(&A, &Aligned, &Label)>()
        .map(|(a, x, _)| (a.0, x.0))
        .collect();
    assert_eq!(
        rows_of_labelled,
        [(11_005, 15), (11_050, 60), (11_051, 61), (11_052, 62)],
        "every row of the row-struct store, once each"
    );
    assert_eq!(w.get::<A>(es[1]), Some(&A(11_002)), "a column");
}
