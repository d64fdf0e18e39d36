//! `insert_batch` and `remove_batch` against the same items applied one by one with `insert`
//! and `remove`: random worlds of the fixture's signatures, random batches (runs of one
//! signature, entities of several, duplicates, dead ids, entities that already have the
//! component, moves to and from dynamic stores), in an open and a strict world. The two worlds
//! must end with every entity in the same signature with the same values, the same first
//! refusal, the same removed values and no value lost or dropped twice. (A batch fills the rows
//! a run vacates once the run is over, so a store's rows may come in another order.)

use proptest::prelude::*;
use sigecs::{ComponentOf, Entity, WorldError, WorldModel};
use sigecs_fixtures::fixture::{self, strict, ABZst, ACounted, Counted, JustA, Zst, A, AB, B};

// Under Miri (which checks the moves' raw-pointer code), a few small cases.
#[cfg(not(miri))]
const CASES: u32 = 64;
#[cfg(miri)]
const CASES: u32 = 1;
#[cfg(not(miri))]
const LONG_RUN: u32 = 5000;
#[cfg(miri)]
const LONG_RUN: u32 = 40;

/// Every entity's row, by entity: its signature and values.
type Rows = Vec<(Entity, &'static str, u32, Option<B>, bool, Option<u32>)>;

fn rows<M: WorldModel>(w: &sigecs::World<M>) -> Rows
where
    A: ComponentOf<M>,
    B: ComponentOf<M>,
    Zst: ComponentOf<M>,
    Counted: ComponentOf<M>,
{
    let mut rows: Rows = w
        .entities()
        .map(|e| {
            (
                e,
                w.signature_name_of(e).unwrap(),
                w.get::<A>(e).unwrap().0,
                w.get::<B>(e).copied(),
                w.get::<Zst>(e).is_some(),
                w.get::<Counted>(e).map(|c| c.0),
            )
        })
        .collect();
    rows.sort_unstable_by_key(|r| r.0);
    rows
}

#[derive(Clone, Debug)]
enum Op {
    InsertB(Vec<usize>),
    RemoveB(Vec<usize>),
    InsertZst(Vec<usize>),
    RemoveZst(Vec<usize>),
    InsertCounted(Vec<usize>),
    RemoveCounted(Vec<usize>),
    Despawn(usize),
}

fn op() -> impl Strategy<Value = Op> {
    // Sorted index lists make long runs of one store; the shuffles mix stores and repeat ids.
    let picks = prop_oneof![
        prop::collection::vec(0usize..64, 0..40).prop_map(|mut v| {
            v.sort_unstable();
            v
        }),
        prop::collection::vec(0usize..64, 0..40),
    ];
    prop_oneof![
        picks.clone().prop_map(Op::InsertB),
        picks.clone().prop_map(Op::RemoveB),
        picks.clone().prop_map(Op::InsertZst),
        picks.clone().prop_map(Op::RemoveZst),
        picks.clone().prop_map(Op::InsertCounted),
        picks.prop_map(Op::RemoveCounted),
        (0usize..64).prop_map(Op::Despawn),
    ]
}

macro_rules! spawn_all {
    ($w:expr, $kinds:expr) => {
        $kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let a = A(i as u32);
                match k % 4 {
                    0 => $w.spawn(JustA { a }),
                    1 => $w.spawn(AB { a, b: B(i as f64) }),
                    2 => $w.spawn(ABZst {
                        a,
                        b: B(i as f64),
                        zst: Zst,
                    }),
                    _ => $w.spawn(ACounted {
                        a,
                        counted: Counted::new(i as u32),
                    }),
                }
            })
            .collect::<Vec<Entity>>()
    };
}

/// Applies `ops` to `batch` with the batch calls and to `single` one by one, checking after
/// every step that the two agree.
macro_rules! compare {
    ($batch:expr, $single:expr, $es:expr, $ops:expr) => {{
        let (batch, single, es) = (&mut $batch, &mut $single, &$es);
        let pick = |v: &[usize]| -> Vec<Entity> { v.iter().map(|&i| es[i % es.len()]).collect() };
        for (step, op) in $ops.iter().enumerate() {
            let tag = (step as u32 + 1) * 1000;
            match op {
                Op::InsertB(v) => {
                    let items: Vec<(Entity, B)> = pick(v)
                        .into_iter()
                        .enumerate()
                        .map(|(k, e)| (e, B(f64::from(tag) + k as f64)))
                        .collect();
                    let got = batch.insert_batch(items.iter().copied());
                    let want =
                        first_error(items.iter().map(|&(e, b)| single.insert(e, b).map(drop)));
                    assert_eq!(got, want, "step {step}: {op:?}");
                }
                Op::RemoveB(v) => {
                    let es = pick(v);
                    let (mut got_values, mut want_values) = (vec![B(-1.0)], vec![B(-1.0)]);
                    let got = batch.remove_batch::<B>(&es, &mut got_values);
                    let want = first_error(
                        es.iter()
                            .map(|&e| single.remove::<B>(e).map(|b| want_values.push(b))),
                    );
                    assert_eq!(got, want, "step {step}: {op:?}");
                    assert_eq!(got_values, want_values, "step {step}: {op:?}");
                }
                Op::InsertZst(v) => {
                    let es = pick(v);
                    let got = batch.insert_batch(es.iter().map(|&e| (e, Zst)));
                    let want = first_error(es.iter().map(|&e| single.insert(e, Zst).map(drop)));
                    assert_eq!(got, want, "step {step}: {op:?}");
                }
                Op::RemoveZst(v) => {
                    let es = pick(v);
                    let mut got_values = Vec::new();
                    let got = batch.remove_batch::<Zst>(&es, &mut got_values);
                    let mut n = 0;
                    let want =
                        first_error(es.iter().map(|&e| single.remove::<Zst>(e).map(|_| n += 1)));
                    assert_eq!(got, want, "step {step}: {op:?}");
                    assert_eq!(got_values.len(), n, "step {step}: {op:?}");
                }
                Op::InsertCounted(v) => {
                    let es = pick(v);
                    let got = batch.insert_batch(
                        es.iter()
                            .enumerate()
                            .map(|(k, &e)| (e, Counted::new(tag + k as u32))),
                    );
                    let want =
                        first_error(es.iter().enumerate().map(|(k, &e)| {
                            single.insert(e, Counted::new(tag + k as u32)).map(drop)
                        }));
                    assert_eq!(got, want, "step {step}: {op:?}");
                }
                Op::RemoveCounted(v) => {
                    let es = pick(v);
                    let (mut got_values, mut want_values) = (Vec::new(), Vec::new());
                    let got = batch.remove_batch::<Counted>(&es, &mut got_values);
                    let want = first_error(
                        es.iter()
                            .map(|&e| single.remove::<Counted>(e).map(|c| want_values.push(c))),
                    );
                    assert_eq!(got, want, "step {step}: {op:?}");
                    assert_eq!(got_values, want_values, "step {step}: {op:?}");
                }
                Op::Despawn(i) => {
                    let e = es[i % es.len()];
                    assert_eq!(batch.despawn(e), single.despawn(e));
                }
            }
            assert_eq!(rows(batch), rows(single), "step {step}: {op:?}");
            // The dynamic stores' records too: rows, peaks and moves.
            assert_eq!(
                batch.undeclared(),
                single.undeclared(),
                "step {step}: {op:?}"
            );
            batch.check_invariants().unwrap();
        }
    }};
}

fn first_error(results: impl Iterator<Item = Result<(), WorldError>>) -> Result<(), WorldError> {
    let mut first = Ok(());
    for r in results {
        if let (Err(e), Ok(())) = (r, &first) {
            first = Err(e);
        }
    }
    first
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn batches_in_an_open_world_match_one_by_one(
        kinds in prop::collection::vec(0usize..4, 1..48),
        ops in prop::collection::vec(op(), 1..12),
    ) {
        let live = Counted::live();
        {
            let mut batch = fixture::World::new();
            let mut single = fixture::World::new();
            let es = spawn_all!(batch, kinds);
            assert_eq!(spawn_all!(single, kinds), es);
            compare!(batch, single, es, ops);
        }
        // Every Counted made was dropped exactly once: by the worlds, the removed values, or
        // the batches' refusals.
        prop_assert_eq!(Counted::live(), live);
    }

    #[test]
    fn batches_in_a_strict_world_match_one_by_one(
        kinds in prop::collection::vec(0usize..4, 1..48),
        ops in prop::collection::vec(op(), 1..12),
    ) {
        let live = Counted::live();
        {
            let mut batch = strict::World::new();
            let mut single = strict::World::new();
            let es = spawn_all!(batch, kinds);
            assert_eq!(spawn_all!(single, kinds), es);
            compare!(batch, single, es, ops);
        }
        prop_assert_eq!(Counted::live(), live);
    }
}

/// A run longer than the target store's room: the store grows to take the run, with every
/// value where it belongs.
#[test]
fn a_long_run_grows_the_target_store() {
    let mut w = fixture::World::new();
    let es: Vec<Entity> = (0..LONG_RUN).map(|i| w.spawn(JustA { a: A(i) })).collect();
    w.insert_batch(es.iter().map(|&e| (e, B(f64::from(e.index()) / 2.0))))
        .unwrap();
    for &e in &es {
        assert_eq!(w.get::<B>(e), Some(&B(f64::from(e.index()) / 2.0)));
        assert_eq!(w.signature_name_of(e), Some("AB"));
    }
    let mut removed = Vec::new();
    w.remove_batch::<B>(&es, &mut removed).unwrap();
    assert_eq!(
        removed,
        es.iter()
            .map(|e| B(f64::from(e.index()) / 2.0))
            .collect::<Vec<_>>()
    );
    assert!(es.iter().all(|&e| w.signature_name_of(e) == Some("JustA")));
    w.check_invariants().unwrap();
}
