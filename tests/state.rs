//! World states (`sigecs::state`) on the `rollback` fixture world, against what the world
//! showed when it was saved.
//!
//! The model-based test drives random worlds with random operations (spawns into declared
//! stores of both layouts, despawns, tags that lead to dynamic stores, sparse components,
//! writes, parents, events, resources, frames of the schedule) and saves into a ring of
//! reused states at random moments. At each save it records everything observable (every
//! entity in iteration order with its store and values, resources, events, statistics,
//! undeclared sets, hierarchy, checksum, which covers the clock, and what `changed` and
//! `added` filters answer), then the id the next spawn gets and the
//! checksum two frames later. At random moments it loads a state and compares all of it:
//! the world is the saved one, spawns the same next id, and runs the same next frames.
//! The other tests check the `no_rollback` rule, refused states, and panicking `Clone` and
//! `Drop` during saves and loads with counting witnesses (every value dropped exactly once).

use sigecs::query::{Added, Changed};
use sigecs::state::{StateError, StateRing, WorldState};
use sigecs::Entity;
use sigecs_fixtures::rollback::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Everything observable about a world, except the values of `no_rollback` components (only
/// whether an entity has one). The change clock is read through the checksum, which hashes it
/// (`World::change_tick` moves it on).
#[derive(Debug, PartialEq)]
struct Snapshot {
    rows: Vec<Row>,
    frame: Frame,
    log: Log,
    events: Vec<Bumped>,
    stats: String,
    undeclared: String,
    checksum: u64,
    len: usize,
    filters: Vec<(u64, [Vec<Entity>; 6])>,
}

#[derive(Debug, PartialEq)]
struct Row {
    entity: Entity,
    store: &'static str,
    position: Option<Position>,
    velocity: Option<Velocity>,
    label: Option<Label>,
    witness: Option<u32>,
    shield: Option<Shield>,
    frozen: bool,
    handle: bool,
    glow: bool,
    parent: Option<Entity>,
    children: Vec<Entity>,
}

fn snapshot(w: &World) -> Snapshot {
    let rows = w
        .entities()
        .map(|e| Row {
            entity: e,
            store: w.signature_name_of(e).unwrap(),
            position: w.get::<Position>(e).copied(),
            velocity: w.get::<Velocity>(e).copied(),
            label: w.get::<Label>(e).cloned(),
            witness: w.get::<Witness>(e).map(|x| x.value),
            shield: w.get::<Shield>(e).copied(),
            frozen: w.get::<Frozen>(e).is_some(),
            handle: w.get::<Handle>(e).is_some(),
            glow: w.get::<Glow>(e).is_some(),
            parent: w.parent(e),
            children: w.children(e),
        })
        .collect();
    Snapshot {
        rows,
        frame: *w.resource::<Frame>(),
        log: w.resource::<Log>().clone(),
        events: w.events::<Bumped>().iter().copied().collect(),
        stats: format!("{:?}", w.stats()),
        undeclared: format!("{:?}", w.undeclared()),
        checksum: w.checksum(),
        len: w.len(),
        filters: filter_answers(w),
    }
}

/// What `changed` and `added` filters (declared, dynamic and sparse storage) answer from marks
/// `since`: at powers of two and at each of the 64 marks below the first from which they all
/// answer nothing (they answer nothing from any later mark either).
fn filter_answers(w: &World) -> Vec<(u64, [Vec<Entity>; 6])> {
    let at = |since: u64| -> [Vec<Entity>; 6] {
        [
            w.query_changed::<Entity, Changed<Position>>(since)
                .collect(),
            w.query_changed::<Entity, Changed<Velocity>>(since)
                .collect(),
            w.query_changed::<Entity, Changed<Shield>>(since).collect(),
            w.query_changed::<Entity, Added<Position>>(since).collect(),
            w.query_changed::<Entity, Added<Frozen>>(since).collect(),
            w.query_changed::<Entity, Added<Shield>>(since).collect(),
        ]
    };
    let empty = |a: &[Vec<Entity>; 6]| a.iter().all(Vec::is_empty);
    let mut answers = Vec::new();
    let mut since = 0;
    loop {
        let a = at(since);
        if empty(&a) {
            break;
        }
        answers.push((since, a));
        since = (since * 2).max(1);
    }
    let (mut lo, mut hi) = (since / 2, since);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if empty(&at(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    for s in hi.saturating_sub(64)..=hi {
        answers.push((s, at(s)));
    }
    answers
}

/// A small deterministic generator.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
    fn pick(&mut self, live: &[Entity]) -> Option<Entity> {
        (!live.is_empty()).then(|| live[self.below(live.len())])
    }
}

fn spawn_any(w: &mut World, rng: &mut Rng) -> Entity {
    let n = rng.below(50);
    let v = n as f32;
    match rng.below(4) {
        0 => w.spawn(Body {
            position: Position(v),
            velocity: Velocity(rng.below(30) as f32),
        }),
        1 => w.spawn(Named {
            position: Position(v),
            label: Label(format!("n{n}")),
            witness: Witness::new(rng.below(1000) as u32),
        }),
        2 => w.spawn(Drawn {
            position: Position(v),
            handle: Handle::new(rng.below(9) as u32),
        }),
        _ => w.spawn(Ship {
            position: Position(v),
            velocity: Velocity(2.0),
            label: Label("ship".into()),
            handle: Handle::new(3),
        }),
    }
}

/// One random operation; keeps `live` the world's live entities.
fn step(w: &mut World, rng: &mut Rng, live: &mut Vec<Entity>) {
    match rng.below(12) {
        0 | 1 => {
            let e = spawn_any(w, rng);
            live.push(e);
        }
        2 => {
            if let Some(e) = rng.pick(live) {
                w.despawn(e);
            }
        }
        3 => {
            if let Some(e) = rng.pick(live) {
                let _ = w.insert(e, Frozen);
            }
        }
        4 => {
            if let Some(e) = rng.pick(live) {
                let _ = w.remove::<Frozen>(e);
            }
        }
        5 => {
            if let Some(e) = rng.pick(live) {
                let _ = w.insert(e, Shield(rng.below(4) as i32 + 1));
            }
        }
        6 => {
            if let Some(e) = rng.pick(live) {
                let _ = w.insert(e, Glow(rng.below(5) as u32));
            }
        }
        7 => {
            if let Some(e) = rng.pick(live) {
                if let Some(p) = w.get_mut::<Position>(e) {
                    p.0 += 1.0;
                }
            }
        }
        8 => {
            if let (Some(a), Some(b)) = (rng.pick(live), rng.pick(live)) {
                let _ = w.set_parent(a, b);
            }
        }
        9 => {
            if let Some(e) = rng.pick(live) {
                w.send_event(Bumped(e));
            }
            w.resource_mut::<Log>().0.push(rng.below(10) as u64);
        }
        _ => w.run_schedule().unwrap(),
    }
    live.retain(|&e| w.is_alive(e));
    // Spawned by systems: not tracked by `live`, but alive; pick them up.
    if live.len() < w.len() {
        *live = w.entities().collect();
    }
}

/// What a save recorded: the snapshot, the id the next spawn got, and the checksum two
/// frames after that spawn.
struct Saved {
    snapshot: Snapshot,
    next: Entity,
    later: u64,
    live: Vec<Entity>,
}

fn probe(w: &mut World) -> (Entity, u64) {
    let next = w.spawn(Body {
        position: Position(0.5),
        velocity: Velocity(0.5),
    });
    w.run_schedule().unwrap();
    w.run_schedule().unwrap();
    (next, w.checksum())
}

fn run_model(seed: u64, steps: usize) {
    let mut w = World::new();
    let mut rng = Rng(seed);
    let mut live = Vec::new();
    let mut states: Vec<WorldState> = (0..4).map(|_| WorldState::new()).collect();
    let mut saved: Vec<Option<Saved>> = (0..4).map(|_| None).collect();
    let mut loads = 0;
    for _ in 0..steps {
        step(&mut w, &mut rng, &mut live);
        assert_eq!(w.check_invariants(), Ok(()));
        let k = rng.below(states.len());
        match rng.below(8) {
            0 => {
                w.save_state(&mut states[k]);
                let checksum = states[k].checksum().unwrap();
                let snapshot = snapshot(&w);
                assert_eq!(
                    checksum, snapshot.checksum,
                    "the save's checksum is the world's"
                );
                let (next, later) = probe(&mut w);
                saved[k] = Some(Saved {
                    snapshot,
                    next,
                    later,
                    live: live.clone(),
                });
                live.retain(|&e| w.is_alive(e));
            }
            1 => {
                let Some(s) = &saved[k] else {
                    assert_eq!(w.load_state(&states[k]), Err(StateError::Empty));
                    continue;
                };
                w.load_state(&states[k]).unwrap();
                loads += 1;
                assert_eq!(w.check_invariants(), Ok(()));
                assert_eq!(snapshot(&w), s.snapshot);
                assert_eq!(states[k].checksum(), Some(s.snapshot.checksum));
                let (next, later) = probe(&mut w);
                assert_eq!(
                    next, s.next,
                    "the next spawn gets the id it got after the save"
                );
                assert_eq!(later, s.later, "the next frames run as they did");
                // Back to the saved state, to go on from there.
                w.load_state(&states[k]).unwrap();
                live = s.live.clone();
            }
            _ => {}
        }
    }
    assert!(loads > 0, "the run loaded states");
    drop(w);
    drop(states);
    assert_eq!(
        WITNESSES.with(|n| n.get()),
        0,
        "every witness dropped exactly once"
    );
    assert_eq!(
        HANDLES.with(|n| n.get()),
        0,
        "every handle dropped exactly once"
    );
}

#[test]
fn random_worlds_load_back_exactly_what_they_saved() {
    let (seeds, steps): (u64, usize) = if cfg!(miri) { (1, 60) } else { (12, 1_500) };
    for seed in 1..=seeds {
        run_model(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), steps);
    }
}

/// The `no_rollback` rule: values stay with entities alive in both states, go with entities
/// the load removes, and entities the load brings back get the default.
#[test]
fn no_rollback_values_stay_with_their_entities() {
    let mut w = World::new();
    let kept = w.spawn(Drawn {
        position: Position(1.0),
        handle: Handle::new(1),
    });
    let ship = w.spawn(Ship {
        position: Position(2.0),
        velocity: Velocity(0.0),
        label: Label("s".into()),
        handle: Handle::new(2),
    });
    let gone = w.spawn(Drawn {
        position: Position(3.0),
        handle: Handle::new(3),
    });
    w.insert(kept, Glow(10)).unwrap();
    w.insert(gone, Glow(30)).unwrap();
    let mut state = WorldState::new();
    w.save_state(&mut state);
    let checksum = state.checksum().unwrap();
    // After the save: new values on the kept entities, `gone` despawned, a new entity.
    w.get_mut::<Handle>(kept).unwrap().0 = 11;
    w.get_mut::<Handle>(ship).unwrap().0 = 22;
    w.get_mut::<Glow>(kept).unwrap().0 = 100;
    w.insert(kept, Frozen).unwrap(); // moves `kept` to a dynamic store
    w.despawn(gone);
    let new = w.spawn(Drawn {
        position: Position(4.0),
        handle: Handle::new(4),
    });
    w.insert(new, Glow(40)).unwrap();
    assert_eq!(HANDLES.with(|n| n.get()), 3);
    w.load_state(&state).unwrap();
    assert_eq!(
        w.checksum(),
        checksum,
        "no_rollback values are not in the checksum"
    );
    assert_eq!(
        w.get::<Handle>(kept).map(|h| h.0),
        Some(11),
        "kept, moved back with its entity"
    );
    assert_eq!(
        w.get::<Handle>(ship).map(|h| h.0),
        Some(22),
        "kept in a rows store"
    );
    assert_eq!(
        w.get::<Glow>(kept),
        Some(&Glow(100)),
        "kept in a sparse set"
    );
    assert_eq!(
        w.get::<Handle>(gone).map(|h| h.0),
        Some(0),
        "brought back: the default"
    );
    assert_eq!(
        w.get::<Glow>(gone),
        Some(&Glow(0)),
        "brought back: the default"
    );
    assert!(!w.is_alive(new));
    assert_eq!(
        HANDLES.with(|n| n.get()),
        3,
        "the new entity's handle was dropped"
    );
    assert_eq!(w.check_invariants(), Ok(()));
    drop(w);
    assert_eq!(HANDLES.with(|n| n.get()), 0);
}

#[test]
fn a_state_of_another_world_type_is_refused_and_changes_nothing() {
    let mut demo = sigecs_demo::World::new();
    demo.spawn(sigecs_demo::components::signatures::Beacon {
        position: sigecs_demo::components::physics::Position(Default::default()),
        name: sigecs_demo::components::physics::DebugName::new("b"),
    });
    let mut state = WorldState::new();
    demo.save_state(&mut state);
    let mut w = World::new();
    w.spawn(Body {
        position: Position(1.0),
        velocity: Velocity(1.0),
    });
    let before = w.checksum();
    let err = w.load_state(&state).unwrap_err();
    assert!(matches!(err, StateError::OtherWorld { .. }), "{err}");
    assert!(
        err.to_string().contains("saved by a world of model"),
        "{err}"
    );
    assert_eq!(w.checksum(), before);
    // Saving into it turns it into a state of this world.
    w.save_state(&mut state);
    let c = state.checksum().unwrap();
    assert_eq!(w.load_state(&state), Ok(()));
    assert_eq!(w.checksum(), c);
}

/// Rows of the witness world: more than two 256-row chunks natively, two under Miri (which
/// interprets every clone and takes a minute a test at 600).
const ROWS: u32 = if cfg!(miri) { 300 } else { 600 };

fn witness_world() -> (World, Vec<Entity>) {
    let mut w = World::new();
    let es = (0..ROWS)
        .map(|i| {
            w.spawn(Named {
                position: Position(i as f32),
                label: Label(i.to_string()),
                witness: Witness::new(i),
            })
        })
        .collect();
    (w, es)
}

/// A `Clone` that panics during a save: the world is untouched, the state unusable until
/// saved into again, and no value is lost or dropped twice.
#[test]
fn a_panicking_clone_during_a_save_leaves_the_world_and_spoils_only_the_state() {
    let (mut w, es) = witness_world();
    let mut state = WorldState::new();
    w.save_state(&mut state);
    w.get_mut::<Witness>(es[ROWS as usize / 2]).unwrap().value = 7_000;
    for e in &es[..10] {
        w.despawn(*e);
    }
    let before = snapshot(&w);
    PANIC_ON_CLONE.with(|p| p.set(Some(7_000)));
    let r = catch_unwind(AssertUnwindSafe(|| w.save_state(&mut state)));
    PANIC_ON_CLONE.with(|p| p.set(None));
    assert!(r.is_err());
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.load_state(&state), Err(StateError::Incomplete));
    w.save_state(&mut state);
    let c = state.checksum().unwrap();
    w.despawn(es[20]);
    w.load_state(&state).unwrap();
    assert_eq!(w.checksum(), c);
    assert_eq!(snapshot(&w), before);
    drop((w, state));
    assert_eq!(WITNESSES.with(|n| n.get()), 0);
}

/// A `Clone` that panics during a load: the load clones before it changes anything, so the
/// world is as it was.
#[test]
fn a_panicking_clone_during_a_load_leaves_the_world_as_it_was() {
    let (mut w, es) = witness_world();
    let mut state = WorldState::new();
    w.save_state(&mut state);
    let saved = state.checksum().unwrap();
    for e in &es[ROWS as usize / 6..ROWS as usize * 2 / 3] {
        w.despawn(*e);
    }
    w.insert(es[0], Frozen).unwrap();
    let spawned = w.spawn(Body {
        position: Position(1.0),
        velocity: Velocity(1.0),
    });
    let before = snapshot(&w);
    PANIC_ON_CLONE.with(|p| p.set(Some(ROWS * 5 / 12)));
    let r = catch_unwind(AssertUnwindSafe(|| w.load_state(&state)));
    PANIC_ON_CLONE.with(|p| p.set(None));
    assert!(r.is_err());
    assert_eq!(snapshot(&w), before, "the world as it was");
    assert!(w.is_alive(spawned));
    assert_eq!(w.check_invariants(), Ok(()));
    w.load_state(&state).unwrap();
    assert_eq!(w.checksum(), saved);
    drop((w, state));
    assert_eq!(WITNESSES.with(|n| n.get()), 0);
}

/// A `Drop` that panics during a load (of a value the load replaces): the load is complete,
/// the panic goes on, every other value is dropped once.
#[test]
fn a_panicking_drop_during_a_load_comes_after_a_complete_load() {
    let (mut w, es) = witness_world();
    let mut state = WorldState::new();
    w.save_state(&mut state);
    let saved = state.checksum().unwrap();
    let snap = snapshot(&w);
    let extra = w.spawn(Named {
        position: Position(0.0),
        label: Label("extra".into()),
        witness: Witness::new(9_999),
    });
    w.get_mut::<Witness>(extra).unwrap().armed = true;
    w.get_mut::<Witness>(es[5]).unwrap().value = 55;
    let r = catch_unwind(AssertUnwindSafe(|| w.load_state(&state)));
    assert!(
        r.is_err(),
        "the armed witness panicked when the load dropped it"
    );
    assert_eq!(w.checksum(), saved, "the load completed");
    assert_eq!(snapshot(&w), snap);
    assert_eq!(w.check_invariants(), Ok(()));
    drop((w, state));
    assert_eq!(
        WITNESSES.with(|n| n.get()),
        0,
        "every value dropped exactly once"
    );
}

/// A `Drop` that panics while a save drops the rows the state has too many of: the world is
/// untouched and the state is saved into whole again next time.
#[test]
fn a_panicking_drop_during_a_save_spoils_only_the_state() {
    let (mut w, es) = witness_world();
    let mut state = WorldState::new();
    w.get_mut::<Witness>(es[ROWS as usize - 1]).unwrap().armed = true;
    w.save_state(&mut state);
    w.get_mut::<Witness>(es[ROWS as usize - 1]).unwrap().armed = false;
    w.despawn(es[ROWS as usize - 1]);
    let before = snapshot(&w);
    let r = catch_unwind(AssertUnwindSafe(|| w.save_state(&mut state)));
    assert!(
        r.is_err(),
        "the state's copy of the armed witness panicked when dropped"
    );
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.load_state(&state), Err(StateError::Incomplete));
    w.save_state(&mut state);
    let c = state.checksum().unwrap();
    w.load_state(&state).unwrap();
    assert_eq!(w.checksum(), c);
    drop((w, state));
    assert_eq!(WITNESSES.with(|n| n.get()), 0);
}

/// States of a ring are as good as separate states: each loads its frame, an overwritten
/// frame is an error.
#[test]
fn a_ring_keeps_the_last_frames() {
    let mut w = World::new();
    for i in 0..300 {
        w.spawn(Body {
            position: Position(i as f32),
            velocity: Velocity(1.0),
        });
    }
    let mut ring = StateRing::new(8);
    let mut checksums = Vec::new();
    for frame in 0..40 {
        checksums.push(ring.save(frame, &w).checksum().unwrap());
        w.run_schedule().unwrap();
        if frame % 9 == 4 {
            // Roll back three frames and run them again, as a late input would make GGRS do.
            ring.load(frame - 3, &mut w).unwrap();
            for f in frame - 3..=frame {
                assert_eq!(w.checksum(), checksums[f as usize]);
                if f > frame - 3 {
                    ring.save(f, &w);
                }
                w.run_schedule().unwrap();
            }
        }
    }
    ring.load(35, &mut w).unwrap();
    assert_eq!(w.checksum(), checksums[35]);
    assert_eq!(
        ring.load(31, &mut w),
        Err(StateError::NoFrame { frame: 31 })
    );
    assert!(ring.get(32).is_some() && ring.get(39).is_some() && ring.get(40).is_none());
}
