//! A world of 200 components (four words of component bits): declared and dynamic stores with
//! components past id 128, a store of 130 columns, systems and queries over them, compared with
//! a plain-Rust reference after every frame, on one thread and with every pass split into jobs
//! of one row on two.

use sigecs::Entity;
use sigecs_fixtures::many_components::*;
use std::collections::BTreeMap;

/// The components the test reads and writes, by id (ids are name order: `W000` is 0).
const WATCHED: [u32; 9] = [0, 1, 2, 127, 128, 129, 150, 180, 199];

fn get(w: &World, e: Entity, id: u32) -> Option<u32> {
    match id {
        0 => w.get::<W000>(e).map(|c| c.0),
        1 => w.get::<W001>(e).map(|c| c.0),
        2 => w.get::<W002>(e).map(|c| c.0),
        127 => w.get::<W127>(e).map(|c| c.0),
        128 => w.get::<W128>(e).map(|c| c.0),
        129 => w.get::<W129>(e).map(|c| c.0),
        150 => w.get::<W150>(e).map(|c| c.0),
        180 => w.get::<W180>(e).map(|c| c.0),
        199 => w.get::<W199>(e).map(|c| c.0),
        _ => unreachable!("not watched"),
    }
}

/// One entity of the reference: its components' values by id.
type Row = BTreeMap<u32, u32>;

/// One frame of the systems, in declaration order (the schedule's stages keep that order for
/// systems that touch the same component).
fn frame(rows: &mut [Row]) {
    for r in rows.iter_mut() {
        if let (Some(&y), Some(x)) = (r.get(&199), r.get(&150)) {
            r.insert(150, x.wrapping_add(y));
        }
        if r.contains_key(&0) && r.contains_key(&1) && !r.contains_key(&150) {
            r.insert(0, r[&0].wrapping_mul(3));
        }
        if let (Some(&a), Some(&last)) = (r.get(&0), r.get(&129)) {
            r.insert(129, last.wrapping_add(a));
        }
        if let Some(&v) = r.get(&180) {
            let a = r.get(&0).copied().unwrap_or(0);
            r.insert(180, v.wrapping_add(1 + a));
        }
    }
}

/// Spawns the population: each declared signature, and entities moved into dynamic stores by
/// an insert of W180 (no signature has it) or a remove from `Broad` (130 → 129 components).
fn populate(w: &mut World) -> (Vec<Entity>, Vec<Row>) {
    let (mut es, mut rows) = (Vec::new(), Vec::new());
    for i in 0..6u32 {
        let low = w.spawn(Low {
            a: W000(i + 1),
            b: W001(10),
        });
        es.push(low);
        rows.push(Row::from([(0, i + 1), (1, 10)]));
        let high = w.spawn(High {
            x: W150(i),
            y: W199(100 + i),
        });
        es.push(high);
        rows.push(Row::from([(150, i), (199, 100 + i)]));
        let mixed = w.spawn(Mixed {
            a: W000(7),
            x: W150(1),
            y: W199(i),
        });
        es.push(mixed);
        rows.push(Row::from([(0, 7), (150, 1), (199, i)]));
        let b = w.spawn(Broad {
            c000: W000(i + 2),
            c001: W001(1),
            c127: W127(127),
            c128: W128(128),
            c129: W129(1000 * i),
            ..Default::default()
        });
        es.push(b);
        let mut row: Row = (0..130).map(|c| (c, 0)).collect();
        row.extend([(0, i + 2), (1, 1), (127, 127), (128, 128), (129, 1000 * i)]);
        rows.push(row);
    }
    // Into dynamic stores: {W000, W001, W180}, {W150, W180, W199}, and Broad without W001
    // (129 columns, W129 its column 128).
    for k in [0, 4, 8] {
        w.insert(es[k], W180(5)).unwrap();
        rows[k].insert(180, 5);
    }
    w.insert(es[1], W180(9)).unwrap();
    rows[1].insert(180, 9);
    for k in [3, 7] {
        assert_eq!(w.remove::<W001>(es[k]).unwrap(), W001(1));
        rows[k].remove(&1);
    }
    (es, rows)
}

fn check(w: &World, es: &[Entity], rows: &[Row], what: &str) {
    w.check_invariants().unwrap();
    assert_eq!(w.len(), es.len());
    for (&e, row) in es.iter().zip(rows) {
        let set = w.signature_of(e).expect("alive").bits();
        assert_eq!(
            set.ids().collect::<Vec<u32>>(),
            row.keys().copied().collect::<Vec<u32>>(),
            "{what}: the component set of {e:?}"
        );
        for id in WATCHED {
            assert_eq!(
                get(w, e, id),
                row.get(&id).copied(),
                "{what}: component {id} of {e:?}"
            );
        }
    }
}

fn run(threads: usize, split: bool, schedule: bool) {
    let pool = sigecs::rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut w = World::new();
        if split {
            w.set_min_chunk(Some(1));
        }
        let (es, mut rows) = populate(&mut w);
        check(&w, &es, &rows, "spawned");
        for f in 0..4 {
            if schedule {
                w.run_schedule();
            } else {
                w.run_all();
            }
            frame(&mut rows);
            check(&w, &es, &rows, &format!("frame {f}"));
        }
    });
}

#[test]
fn systems_over_wide_sets_match_the_reference() {
    run(1, false, false);
    run(1, false, true);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "slow under Miri; the one-thread test covers the same stores"
)]
fn split_passes_over_wide_sets_match_the_reference() {
    run(2, true, true);
}

#[test]
fn the_named_set_and_queries_reach_every_word() {
    let mut w = World::new();
    let (es, rows) = populate(&mut w);
    assert_eq!(
        w.signature_of(es[2]),
        Some(ComponentSet::W000 | ComponentSet::W150 | ComponentSet::W199)
    );
    assert_eq!(
        format!("{:?}", w.signature_of(es[1]).unwrap()),
        "ComponentSet(W150 | W180 | W199)"
    );
    assert_eq!(ComponentSet::all().len(), 200);
    assert_eq!(<Model as sigecs::WorldModel>::Set::CAPACITY, 256);

    // A query needing components of the first and fourth words: Mixed and Broad are not all.
    let mut got: Vec<(u32, u32)> = w
        .query::<(&W000, &W199)>()
        .map(|(a, y)| (a.0, y.0))
        .collect();
    got.sort_unstable();
    let mut want: Vec<(u32, u32)> = rows
        .iter()
        .filter_map(|r| Some((*r.get(&0)?, *r.get(&199)?)))
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(got.len(), 6, "the Mixed entities");

    // Writes through a query to the 130th column, with a filter past id 128.
    for (last, _) in w.query_mut::<(&mut W129, &W128)>().unwrap() {
        last.0 += 1;
    }
    assert_eq!(w.get::<W129>(es[3]), Some(&W129(1)));
    assert_eq!(w.get::<W129>(es[7]), Some(&W129(1001)));

    // An aliasing query past id 128 is refused, not run.
    assert!(w.query_mut::<(&mut W150, &W150)>().is_err());

    // The dynamic stores: three undeclared sets.
    let undeclared = w.undeclared();
    let names: Vec<String> = undeclared.iter().map(|s| s.components.join(",")).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.contains(&"W000,W001,W180".to_string()));
    assert!(names.contains(&"W150,W180,W199".to_string()));
    assert!(undeclared.iter().any(|s| s.components.len() == 129));
}

#[test]
fn the_named_set_writes_and_reads_text_across_words() {
    let mut w = World::new();
    let (es, _) = populate(&mut w);
    // `Flags` comes into scope with the world's glob import.
    let set = w.signature_of(es[2]).unwrap();
    assert_eq!(set.to_string(), "W000 | W150 | W199");
    assert_eq!("W199 | W000 | W150".parse::<ComponentSet>().unwrap(), set);
    let names: Vec<&str> = set.iter_names().map(|(name, _)| name).collect();
    assert_eq!(names, ["W000", "W150", "W199"], "id order across words");
    assert_eq!(ComponentSet::all().iter_names().count(), 200);
    assert_eq!(
        ComponentSet::all()
            .to_string()
            .parse::<ComponentSet>()
            .unwrap(),
        ComponentSet::all()
    );

    // Bits past the 200 components (ids 200..256 of the fourth word) are written in hex.
    let wide = ComponentSet::from_bits_retain(sigecs::ComponentBits::first(256));
    let text = wide.to_string();
    let hex = format!("0xffffffffffffff00{}", "0".repeat(48));
    assert!(text.ends_with(&format!("W199 | {hex}")), "{text}");
    assert_eq!(text.parse::<ComponentSet>().unwrap(), wide);
    assert_eq!(!ComponentSet::empty(), ComponentSet::all());

    // Where the world shows a set to a person, it is this text.
    let stats = w.stats().to_string();
    assert!(stats.contains("\nW000 | W001 | W180 "), "{stats}");
    let undeclared: Vec<String> = w.undeclared().iter().map(|u| u.to_string()).collect();
    assert!(
        undeclared.contains(&"W150 | W180 | W199: 1 entity now, 1 at most, 1 move".into()),
        "{undeclared:?}"
    );
}
