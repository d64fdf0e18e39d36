//! Level spawns in the `level_spawn` fixture world (columns `JustP {p}`, columns `PN {p, n}`,
//! rows `PL {p, l}`, `FrozenP {p, frozen}`): every value in its row, undeclared sets in dynamic
//! stores, a strict world's refusal, tags, and — counted with `N`'s live count — a
//! component's own code panicking mid-spawn: the world is as it was, every value decoded before
//! the panic is dropped exactly once, and the next spawn works.

use sigecs::Entity;
use sigecs_fixtures::level_spawn::{
    level_registry, strict, Frozen, FrozenP, JustP, Model, World, FAIL_ON_DECODE, L, LIVE_N, N, P,
    PANIC_ON_DECODE, PANIC_ON_MAP, PL, PN,
};
use sigecs_level::{EntityCompiler, LevelError, VerifiedLevel, VerifyOptions, WorldLevels};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::LocalKey;

fn compile(json: &str) -> Vec<u8> {
    EntityCompiler::new(level_registry())
        .compile_str(json)
        .unwrap()
}

fn verified(blob: &[u8]) -> VerifiedLevel<'static, &[u8]> {
    World::new()
        .verify_level(blob, level_registry(), &VerifyOptions::default())
        .unwrap()
}

/// A world holding two entities (one `PN`, one `JustP`) and one freed id slot.
fn prefilled() -> (World, Vec<Entity>) {
    let mut w = World::new();
    let a = w.spawn(PN {
        p: P(100),
        n: N::new("old"),
    });
    let gone = w.spawn(JustP { p: P(101) });
    let b = w.spawn(JustP { p: P(102) });
    assert!(w.despawn(gone));
    (w, vec![a, b])
}

/// Nine entities, interleaved across the three stores (with a gap in the middle of a `PL`
/// run), references forwards and backwards.
const LEVEL: &str = r#"{"entities": [
    {"components": {"p": 0, "n": "a"}},
    {"components": {"p": 1, "l": 8}},
    {"components": {"p": 2}},
    {"components": {"p": 3, "l": 0}},
    {"components": {"p": 4, "n": "b"}},
    {"components": {"p": 5, "n": "c"}},
    {"components": {"p": 6}},
    {"components": {"p": 7, "l": 3}},
    {"components": {"p": 8, "n": "z"}}
]}"#;

fn store_id(name: &str) -> u32 {
    sigecs::World::<Model>::signature_names()
        .position(|n| n == name)
        .unwrap() as u32
}

#[test]
fn interleaved_level_spawns_every_value_in_its_row() {
    let blob = compile(LEVEL);
    let res = verified(&blob);
    let mut counts = res.store_counts();
    counts.sort();
    let mut want = vec![
        (store_id("JustP"), 2),
        (store_id("PN"), 4),
        (store_id("PL"), 3),
    ];
    want.sort();
    assert_eq!(counts, want);
    let (mut w, old) = prefilled();
    let live = LIVE_N.get();
    let e = w.spawn_level(&res).unwrap();
    assert_eq!(LIVE_N.get(), live + 4, "four names decoded, none dropped");
    assert_eq!(e.len(), 9);
    assert_eq!(w.len(), 11);
    w.check_invariants().unwrap();
    for (i, &x) in e.iter().enumerate() {
        assert_eq!(w.get::<P>(x), Some(&P(i as u32)), "entity {i}");
    }
    for (i, name) in [(0, "a"), (4, "b"), (5, "c"), (8, "z")] {
        assert_eq!(w.get::<N>(e[i]).map(|n| n.0.as_str()), Some(name));
    }
    for (i, leader) in [(1, 8), (3, 0), (7, 3)] {
        assert_eq!(w.get::<L>(e[i]), Some(&L(e[leader])), "entity {i}");
    }
    for i in [2, 6] {
        assert!(w.get::<N>(e[i]).is_none() && w.get::<L>(e[i]).is_none());
    }
    // Rows follow the level's order after the rows that were there.
    assert_eq!(w.store::<PN>().entities(), [old[0], e[0], e[4], e[5], e[8]]);
    assert_eq!(w.store::<JustP>().entities(), [old[1], e[2], e[6]]);
    assert_eq!(w.store::<PL>().entities(), [e[1], e[3], e[7]]);
    assert_eq!(w.get::<P>(old[0]), Some(&P(100)));

    // A second instance maps to its own entities; saving gives the blob back.
    let f = w.spawn_level(&res).unwrap();
    assert_eq!(w.get::<L>(f[1]), Some(&L(f[8])));
    assert_eq!(w.len(), 20);
    w.check_invariants().unwrap();
    assert_eq!(w.save_entities(&f, level_registry(), None).unwrap(), blob);
    drop(w);
    assert_eq!(
        LIVE_N.get(),
        live - 1,
        "every name dropped once (the old one too)"
    );
}

/// Entities of the undeclared sets {P, N, L} and {N}, between declared ones, with references
/// into and out of them.
const UNDECLARED: &str = r#"{"entities": [
    {"components": {"p": 0, "n": "a", "l": 3}},
    {"components": {"p": 1}},
    {"components": {"n": "only"}},
    {"components": {"p": 3, "n": "b", "l": 0}},
    {"components": {"p": 4, "l": 2}}
]}"#;

#[test]
fn undeclared_sets_spawn_into_dynamic_stores_and_save_back() {
    let blob = compile(UNDECLARED);
    let res = verified(&blob);
    let (mut w, old) = prefilled();
    let e = w.spawn_level(&res).unwrap();
    w.check_invariants().unwrap();
    assert_eq!(w.signature_name_of(e[0]), Some("L | N | P"));
    assert_eq!(w.signature_name_of(e[2]), Some("N"));
    assert_eq!(w.signature_name_of(e[4]), Some("PL"));
    assert_eq!(w.get::<N>(e[3]).map(|n| n.0.as_str()), Some("b"));
    assert_eq!(w.get::<L>(e[0]), Some(&L(e[3])));
    assert_eq!(w.get::<L>(e[3]), Some(&L(e[0])));
    assert_eq!(w.get::<L>(e[4]), Some(&L(e[2])));
    assert_eq!(w.get::<P>(e[3]), Some(&P(3)));
    assert_eq!(w.get::<P>(e[2]), None);
    assert_eq!(w.get::<P>(old[0]), Some(&P(100)));
    let undeclared = w.undeclared();
    assert_eq!(undeclared.len(), 2);
    assert_eq!((undeclared[0].rows, undeclared[1].rows), (2, 1));
    let saved = w.save_entities_with(&e, level_registry(), &[]).unwrap();
    assert_eq!(saved, blob, "saved back byte-identical");
    // Moves out of and back into a dynamic store keep every value.
    assert_eq!(w.remove::<L>(e[0]), Ok(L(e[3])));
    assert_eq!(w.signature_name_of(e[0]), Some("PN"));
    assert_eq!(w.insert(e[0], L(e[1])), Ok(None));
    assert_eq!(w.signature_name_of(e[0]), Some("L | N | P"));
    assert_eq!(w.get::<N>(e[0]).map(|n| n.0.as_str()), Some("a"));
    w.check_invariants().unwrap();
}

#[test]
fn a_strict_world_refuses_undeclared_sets_with_inserts_words() {
    let blob = compile(UNDECLARED);
    let err = strict::World::new()
        .verify_level(
            &blob[..],
            strict::level_registry(),
            &VerifyOptions::default(),
        )
        .unwrap_err();
    let LevelError::UndeclaredSignature { message, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        message,
        "`L | N | P` is not a declared signature. Declare the set with \
         `#[derive(Signature)]` (a struct with one field per component of `L | N | P`) in a \
         scanned file"
    );
    // `insert` words the same set the same way.
    let mut w = strict::World::new();
    let e = w.spawn(PN {
        p: P(1),
        n: N::new("x"),
    });
    let text = w.insert(e, L(e)).unwrap_err().to_string();
    let (set, fix) = message.split_once(". ").unwrap();
    assert!(text.contains(set) && text.contains(fix), "{text}");
    assert!(w.undeclared().is_empty());
}

/// A level of `names` `PN` entities (names `n0`, `n1`, …) and, after them, `leaders` `PL`
/// entities each holding the entity before it.
fn named_level(names: usize, leaders: usize) -> String {
    let mut entities: Vec<String> = (0..names)
        .map(|i| format!(r#"{{"components": {{"p": {i}, "n": "n{i}"}}}}"#))
        .collect();
    for k in 0..leaders {
        let i = names + k;
        entities.push(format!(r#"{{"components": {{"p": {i}, "l": {}}}}}"#, i - 1));
    }
    format!(r#"{{"entities": [{}]}}"#, entities.join(","))
}

/// Spawns `level` with `counter` armed to fire on its `at`th event, expecting a panic: no
/// value decoded before it is left alive (each is dropped exactly once: a double drop would
/// take the live count below where it was), the world is as it was, and it spawns the level
/// again.
fn panics_and_drops_what_it_decoded(
    json: &str,
    counter: &'static LocalKey<Cell<Option<u32>>>,
    at: u32,
) {
    let blob = compile(json);
    let res = verified(&blob);
    let (mut w, old) = prefilled();
    let live = LIVE_N.get();
    counter.set(Some(at));
    let r = catch_unwind(AssertUnwindSafe(|| w.spawn_level(&res)));
    let fired = counter.get().is_none();
    counter.set(None);
    assert!(fired && r.is_err(), "the spawn panicked at event {at}");
    assert_eq!(
        LIVE_N.get(),
        live,
        "every value decoded before the panic is dropped, once"
    );
    w.check_invariants().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(w.entities().count(), 2);
    assert_eq!(w.get::<P>(old[0]), Some(&P(100)));
    assert_eq!(w.get::<N>(old[0]).map(|n| n.0.as_str()), Some("old"));
    assert_eq!(w.get::<P>(old[1]), Some(&P(102)));
    assert!(w.undeclared().is_empty());
    let e = w.spawn_level(&res).unwrap();
    assert_eq!(w.len(), 2 + e.len());
    w.check_invariants().unwrap();
    assert_eq!(w.save_entities(&e, level_registry(), None).unwrap(), blob);
    drop(w);
    assert_eq!(LIVE_N.get(), live - 1, "every value dropped once");
}

/// Miri interprets every step (a 300-entity spawn takes a minute there); the panic paths are
/// the same at a tenth of the size.
const SCALE: usize = if cfg!(miri) { 10 } else { 1 };

#[test]
fn a_deserialize_panicking_midway_drops_every_value_before_it() {
    // The 150th of 300 names (15th of 30 under Miri).
    let names = 300 / SCALE;
    panics_and_drops_what_it_decoded(&named_level(names, 0), &PANIC_ON_DECODE, names as u32 / 2);
}

#[test]
fn an_entity_mapping_panicking_drops_every_value_decoded() {
    // `L` spawns after `N`: its first mapping panics once all 500 (50) names are decoded.
    let names = 500 / SCALE;
    panics_and_drops_what_it_decoded(&named_level(names, 20), &PANIC_ON_MAP, 1);
    // And one mapping in: the values `L` wrote are dropped too.
    panics_and_drops_what_it_decoded(&named_level(names, 20), &PANIC_ON_MAP, 7);
}

#[test]
fn a_deserialize_that_fails_after_verification_panics_and_drops_what_it_decoded() {
    panics_and_drops_what_it_decoded(&named_level(40, 3), &FAIL_ON_DECODE, 25);
    // The interleaved level: the first name and the last.
    panics_and_drops_what_it_decoded(LEVEL, &FAIL_ON_DECODE, 1);
    panics_and_drops_what_it_decoded(LEVEL, &FAIL_ON_DECODE, 4);
    panics_and_drops_what_it_decoded(LEVEL, &PANIC_ON_DECODE, 2);
    panics_and_drops_what_it_decoded(LEVEL, &PANIC_ON_MAP, 2);
}

/// A tag needs `#[derive(Component)]` and a level name only; its JSON value is `true`, `{}` or
/// `null`, anything else is an error at its path.
#[test]
fn tags_spawn_from_true_empty_object_or_null() {
    let json = r#"{"entities": [
        {"components": {"p": 0, "frozen": true}},
        {"components": {"p": 1, "frozen": {}}},
        {"components": {"p": 2, "frozen": null}},
        {"components": {"p": 3}}
    ]}"#;
    let blob = compile(json);
    let mut w = World::new();
    let e = w.spawn_level(&verified(&blob)).unwrap();
    for (i, &x) in e.iter().enumerate() {
        let frozen = i < 3;
        assert_eq!(w.get::<Frozen>(x).is_some(), frozen, "entity {i}");
        let store = if frozen { "FrozenP" } else { "JustP" };
        assert_eq!(w.signature_name_of(x), Some(store));
    }
    assert_eq!(w.store::<FrozenP>().len(), 3);
    w.check_invariants().unwrap();
    assert_eq!(
        w.save_level_with(level_registry(), &[]).unwrap().len(),
        blob.len()
    );
    assert_eq!(
        w.save_entities_with(&e, level_registry(), &[]).unwrap(),
        blob
    );

    for (value, found) in [
        ("3", "3"),
        ("false", "false"),
        (r#""yes""#, r#""yes""#),
        ("[]", "[]"),
        (r#"{"a": 1}"#, r#"{"a":1}"#),
    ] {
        let json = format!(r#"{{"entities": [{{"components": {{"p": 0, "frozen": {value}}}}}]}}"#);
        let err = EntityCompiler::new(level_registry())
            .compile_str(&json)
            .unwrap_err();
        assert_eq!(err.errors.len(), 1, "{err}");
        assert_eq!(err.errors[0].path, "entities[0].components.frozen");
        assert_eq!(
            err.errors[0].message,
            format!(
                "a tag holds no data: write `true`, `{{}}` or `null` (or leave the component \
                 out), not {found}"
            )
        );
    }
}

/// The world's batch spawn, dropped before its commit (what a panicking spawn does), drops
/// each value it was given once, and the world is as it was.
#[test]
fn an_abandoned_batch_spawn_drops_each_value_once() {
    use sigecs::world::RowRun;
    use sigecs::WorldModel;
    use std::any::TypeId;
    type W = sigecs::World<Model>;
    let id = |t: TypeId| W::component_id(t).unwrap();
    let (p, n) = (id(TypeId::of::<P>()), id(TypeId::of::<N>()));
    let set = <Model as WorldModel>::Set::EMPTY.with(p).with(n);
    let (mut w, old) = prefilled();
    let live = LIVE_N.get();
    let mut spawn = w.begin_spawn(&[(set, 3)]).unwrap();
    let all = [RowRun {
        batch: 0,
        row: 0,
        len: 3,
    }];
    spawn.rows(p, &all).extend_from_slice(&[P(1), P(2), P(3)]);
    let mut names = spawn.rows(n, &all);
    names.push(N::new("x"));
    names.push(N::new("y"));
    drop(names);
    assert_eq!(LIVE_N.get(), live + 2);
    drop(spawn);
    assert_eq!(LIVE_N.get(), live, "both names dropped, once");
    w.check_invariants().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(w.store::<PN>().entities(), [old[0]]);
}
