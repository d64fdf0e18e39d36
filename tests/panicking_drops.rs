//! A component whose `Drop` panics never breaks the world. In every operation that drops
//! values (despawn, clear, dropping the world, command application, a batch rolled back, an
//! insert refused), the panic continues only
//! once the world is consistent again; every other value of the row, and every other row, is
//! dropped exactly once; and no entity is left alive without a row.

use sigecs::entity::MAX_ENTITIES;
use sigecs::{Entity, WorldError};
use sigecs_fixtures::repro::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn reset() {
    BOMB_DROPS.with(|d| d.set(0));
    WITNESS_DROPS.with(|d| d.set(0));
}

/// (bombs dropped, witnesses dropped) since the last `reset`.
fn drops() -> (usize, usize) {
    (
        BOMB_DROPS.with(|d| d.get()),
        WITNESS_DROPS.with(|d| d.get()),
    )
}

fn bomb(armed: bool, value: u32) -> Bomb {
    Bomb { armed, value }
}

/// Spawns three entities of each bomb-and-witness signature, the middle one armed; returns
/// them as (columns store, rows store).
fn traps(w: &mut World) -> (Vec<Entity>, Vec<Entity>) {
    let columns = (0..3)
        .map(|i| {
            w.spawn(Trap {
                bomb: bomb(i == 1, i),
                witness: Witness(i),
            })
        })
        .collect();
    let rows = (0..3)
        .map(|i| {
            w.spawn(TrapRow {
                bomb: bomb(i == 1, 10 + i),
                witness: Witness(10 + i),
                tr: Tr(i),
            })
        })
        .collect();
    (columns, rows)
}

fn witness(w: &World, e: Entity) -> Option<u32> {
    w.get::<Witness>(e).map(|w| w.0)
}

#[test]
fn despawning_a_panicking_value_still_drops_its_row_mates() {
    for rows_layout in [false, true] {
        let mut w = World::new();
        let (columns, rows) = traps(&mut w);
        let es = if rows_layout { rows } else { columns };
        reset();
        let despawned = catch_unwind(AssertUnwindSafe(|| w.despawn(es[1])));
        assert!(despawned.is_err(), "the bomb's panic continues");
        // The columns store dropped the witness of the removed row although the bomb's column,
        // dropped first, panicked (it was leaked).
        assert_eq!(drops(), (1, 1), "rows layout: {rows_layout}");
        assert!(!w.is_alive(es[1]));
        assert_eq!(w.len(), 5);
        assert_eq!(w.check_invariants(), Ok(()));
        let base = if rows_layout { 10 } else { 0 };
        assert_eq!(witness(&w, es[0]), Some(base));
        assert_eq!(witness(&w, es[2]), Some(base + 2), "the last row moved in");
        // Disarm the rest before the world drops.
        for e in w.entities().collect::<Vec<_>>() {
            w.get_mut::<Bomb>(e).unwrap().armed = false;
        }
    }
}

#[test]
fn clearing_drops_every_value_once_when_one_panics() {
    let mut w = World::new();
    traps(&mut w);
    let unit = w.spawn(Unit {
        health: Health(1),
        lifetime: Lifetime(1),
    });
    reset();
    let cleared = catch_unwind(AssertUnwindSafe(|| w.clear()));
    assert!(cleared.is_err());
    // Six bombs (two of them armed: the first panics, the second drops while unwinding
    // without panicking) and six witnesses, each dropped once.
    assert_eq!(drops(), (6, 6));
    assert!(w.is_empty());
    assert!(!w.is_alive(unit));
    assert_eq!(w.check_invariants(), Ok(()));
    // The world is usable again.
    let (columns, _) = traps(&mut w);
    assert_eq!(w.len(), 6);
    assert_eq!(witness(&w, columns[2]), Some(2));
    for e in w.entities().collect::<Vec<_>>() {
        w.get_mut::<Bomb>(e).unwrap().armed = false;
    }
}

#[test]
fn dropping_the_world_drops_every_value_once_when_one_panics() {
    let mut w = World::new();
    traps(&mut w);
    reset();
    let dropped = catch_unwind(AssertUnwindSafe(move || drop(w)));
    assert!(dropped.is_err());
    assert_eq!(drops(), (6, 6));
}

#[test]
fn commands_after_a_panicking_drop_still_apply_and_no_reservation_is_left_alive() {
    let mut w = World::new();
    w.spawn(Scripted { director: Director });
    let (columns, rows) = traps(&mut w);
    let spawned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let out = spawned.clone();
    let (armed_column, armed_row, plain) = (columns[1], rows[1], columns[0]);
    w.resource::<Script>().push(move |c| {
        let mut out = out.lock().unwrap();
        out.push(c.spawn(Unit {
            health: Health(1),
            lifetime: Lifetime(5),
        }));
        // Panics while the command applies: the row is already gone.
        c.despawn(armed_column);
        out.push(c.spawn(Unit {
            health: Health(2),
            lifetime: Lifetime(5),
        }));
        // Replacing an armed bomb drops it inside the world: a second panic, whose payload is
        // dropped while the first one continues.
        c.insert(armed_row, bomb(false, 99));
        // Removing a disarmed bomb moves the entity to `Disarmed`.
        c.remove::<Bomb>(plain);
        out.push(c.spawn(Unit {
            health: Health(3),
            lifetime: Lifetime(5),
        }));
    });
    reset();
    let run = catch_unwind(AssertUnwindSafe(|| w.run_run_script()));
    let message = run.expect_err("the first bomb's panic continues");
    assert_eq!(
        message.downcast_ref::<String>().map(String::as_str),
        Some("bomb 1 went off"),
        "the first panic is the one that continues"
    );
    // The despawned row's bomb and witness, the replaced bomb, the removed bomb.
    assert_eq!(drops(), (3, 1));
    // Every command applied: three spawns placed, one despawn, one replace, one remove.
    let spawned = spawned.lock().unwrap().clone();
    assert_eq!(spawned.len(), 3);
    for (i, &e) in spawned.iter().enumerate() {
        assert_eq!(w.get::<Health>(e), Some(&Health(i as i32 + 1)), "spawn {i}");
    }
    assert!(!w.is_alive(armed_column));
    assert_eq!(w.get::<Bomb>(armed_row), Some(&bomb(false, 99)));
    assert_eq!(w.signature_name_of(plain), Some("Disarmed"));
    assert_eq!(w.len(), 1 + 6 - 1 + 3);
    assert_eq!(w.entity_manager().reserved_len(), 0);
    assert_eq!(w.check_invariants(), Ok(()));
    for e in w.entities().collect::<Vec<_>>() {
        if let Some(b) = w.get_mut::<Bomb>(e) {
            b.armed = false;
        }
    }
}

fn unit(health: i32, lifetime: u32) -> Unit {
    Unit {
        health: Health(health),
        lifetime: Lifetime(lifetime),
    }
}

fn rigged(armed: bool, value: u32) -> Rigged {
    Rigged {
        bomb: Bomb { armed, value },
        tr: Tr(value),
    }
}

/// Fills the entity index space, leaving `free` slots.
fn exhausted_world(free: usize) -> World {
    let mut w = World::new();
    w.spawn_batch((0..MAX_ENTITIES - free).map(|_| unit(0, 0)));
    assert_eq!(w.entity_manager().available(), free);
    w
}

/// With the entity space exhausted, `try_spawn_batch` of values whose first component panics
/// in `Drop` returns `Err`, leaves every column of the store the same length, and a later spawn
/// reads its own value, not a rolled-back one.
#[test]
#[cfg_attr(miri, ignore = "fills 2^22 entity slots")]
fn a_panicking_drop_during_a_batch_rollback_leaves_the_world_consistent() {
    let mut w = exhausted_world(2);
    BOMB_DROPS.with(|d| d.set(0));
    // Known length: refused before any value is taken.
    let r = w.try_spawn_batch((0..3).map(|i| rigged(true, 10 + i)));
    assert!(matches!(r, Err(WorldError::Entity(_))), "{r:?}");
    // Unknown length: rows are written, then rolled back; the bomb's panic is caught.
    let r = w.try_spawn_batch((0..3).map(|i| rigged(true, 10 + i)).filter(|_| true));
    assert!(matches!(r, Err(WorldError::Entity(_))), "{r:?}");
    assert_eq!(
        BOMB_DROPS.with(|d| d.get()),
        3,
        "the rolled-back values were dropped"
    );
    assert_eq!(w.store::<Rigged>().len(), 0);
    assert_eq!(w.check_invariants(), Ok(()));
    let e = w.spawn(rigged(false, 15));
    assert_eq!(
        w.get::<Tr>(e),
        Some(&Tr(15)),
        "not the rolled-back Some(10)"
    );
    assert_eq!(w.check_invariants(), Ok(()));
}

/// A panicking `Drop` in `despawn` runs after the world is consistent again.
#[test]
fn a_panicking_drop_in_despawn_leaves_the_world_consistent() {
    let mut w = World::new();
    let a = w.spawn(rigged(true, 1));
    let b = w.spawn(rigged(false, 2));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.despawn(a)));
    assert!(r.is_err(), "the bomb went off");
    assert!(!w.is_alive(a));
    assert_eq!(w.get::<Tr>(b), Some(&Tr(2)));
    assert_eq!(w.check_invariants(), Ok(()));
}

/// `insert` into an undeclared signature (in a strict world) reports the error even when the
/// refused value panics when dropped, as the same refusal through `Commands` does.
#[test]
fn a_refused_insert_reports_the_error_even_if_the_value_panics_when_dropped() {
    let mut w = strict::World::new();
    let e = w.spawn(unit(10, 3));
    let before = BOMB_DROPS.with(|d| d.get());
    let r = w.insert(
        e,
        Bomb {
            armed: true,
            value: 7,
        },
    );
    assert!(
        matches!(r, Err(WorldError::UndeclaredSignature { .. })),
        "{r:?}"
    );
    assert_eq!(BOMB_DROPS.with(|d| d.get()) - before, 1, "dropped once");
    assert_eq!(w.get::<Health>(e), Some(&Health(10)), "entity unchanged");
    assert_eq!(w.check_invariants(), Ok(()));
    // Likewise for a dead entity.
    assert!(w.despawn(e));
    let r = w.insert(
        e,
        Bomb {
            armed: true,
            value: 8,
        },
    );
    assert!(
        matches!(r, Err(WorldError::NoSuchEntity(x)) if x == e),
        "{r:?}"
    );
    assert_eq!(BOMB_DROPS.with(|d| d.get()) - before, 2);
}

/// `clear` with a component whose `Drop` panics: the panic reaches the caller, and the world
/// is still consistent and empty: every id retired, every store emptied (the `Unit` store comes
/// after `Rigged` in store order, so it is emptied while unwinding).
#[test]
fn clear_with_a_panicking_drop_leaves_an_empty_consistent_world() {
    let mut w = World::new();
    let units: Vec<Entity> = w.spawn_batch((0..10).map(|i| unit(i, 1)));
    let bombs: Vec<Entity> = (0..5).map(|i| w.spawn(rigged(i == 2, i))).collect();
    let names: Vec<&str> = w.stats().stores.iter().map(|s| s.name).collect();
    let at = |n: &str| names.iter().position(|&s| s == n).unwrap();
    assert!(
        at("Rigged") < at("Unit"),
        "the test needs a store after the bomb's"
    );
    let drops = BOMB_DROPS.with(|d| d.get());

    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.clear()));
    assert!(caught.is_err(), "the armed bomb's panic reaches the caller");
    assert_eq!(w.len(), 0);
    assert!(units.iter().chain(&bombs).all(|&e| !w.is_alive(e)));
    assert!(w.stats().stores.iter().all(|s| s.entities == 0));
    assert_eq!(w.check_invariants(), Ok(()));
    // The bombs up to the armed one were dropped; the rest of that store leaked.
    assert!(BOMB_DROPS.with(|d| d.get()) - drops >= 3);
    let e = w.spawn(unit(7, 7));
    assert_eq!(w.get::<Health>(e), Some(&Health(7)));
    assert_eq!(w.check_invariants(), Ok(()));
}

#[test]
fn a_panicking_drop_in_a_subtree_despawn_still_despawns_the_whole_subtree() {
    let mut w = World::new();
    let (columns, rows) = traps(&mut w);
    // columns[0] is the root; its children are the other five, the armed ones among them.
    for &child in columns[1..].iter().chain(&rows) {
        w.set_parent(child, columns[0]).unwrap();
    }
    let keep = w.spawn(Trap {
        bomb: bomb(false, 99),
        witness: Witness(99),
    });
    reset();
    let despawned = catch_unwind(AssertUnwindSafe(|| w.despawn(columns[0])));
    assert!(despawned.is_err(), "the first bomb's panic continues");
    // Every value of the six rows dropped once, the two armed bombs' own panicked drops
    // included (their drop counts as it starts).
    assert_eq!(drops(), (6, 6));
    assert_eq!(w.len(), 1);
    assert!(w.is_alive(keep));
    assert!(w.hierarchy().is_empty());
    assert_eq!(w.check_invariants(), Ok(()));
    assert_eq!(witness(&w, keep), Some(99));
}

mod model {
    //! Random operations over entities whose `Bomb` may panic when dropped, directly and
    //! through commands, against a model of what each entity holds: after every step the
    //! world matches the model, its invariants hold, and every value dropped so far was
    //! dropped exactly once (the panicking bomb counts: its drop ran). An operation panics
    //! exactly when it drops an armed bomb.
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        SpawnTrap(bool),
        SpawnTrapRow(bool),
        Despawn(usize),
        ReplaceBomb(usize, bool),
        InsertTr(usize),
        RemoveBombByCommand(usize),
        DespawnByCommand(usize),
        ReplaceByCommand(usize, bool),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        let i = 0usize..32;
        prop_oneof![
            4 => any::<bool>().prop_map(Op::SpawnTrap),
            3 => any::<bool>().prop_map(Op::SpawnTrapRow),
            2 => i.clone().prop_map(Op::Despawn),
            2 => (i.clone(), any::<bool>()).prop_map(|(e, a)| Op::ReplaceBomb(e, a)),
            2 => i.clone().prop_map(Op::InsertTr),
            2 => i.clone().prop_map(Op::RemoveBombByCommand),
            1 => i.clone().prop_map(Op::DespawnByCommand),
            1 => (i, any::<bool>()).prop_map(|(e, a)| Op::ReplaceByCommand(e, a)),
            1 => Just(Op::Clear),
        ]
    }

    /// What an entity holds: its bomb (armed, value), its witness, its `Tr`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Held {
        bomb: Option<(bool, u32)>,
        witness: u32,
        tr: Option<u32>,
    }

    #[derive(Default)]
    struct Model {
        held: BTreeMap<Entity, Held>,
        bombs_dropped: usize,
        witnesses_dropped: usize,
    }

    impl Model {
        /// Drops everything `e` holds; true when that panics (an armed bomb).
        fn despawn(&mut self, e: Entity) -> bool {
            match self.held.remove(&e) {
                Some(h) => {
                    self.witnesses_dropped += 1;
                    self.drop_bomb(h.bomb)
                }
                None => false,
            }
        }
        fn drop_bomb(&mut self, bomb: Option<(bool, u32)>) -> bool {
            match bomb {
                Some((armed, _)) => {
                    self.bombs_dropped += 1;
                    armed
                }
                None => false,
            }
        }
    }

    /// Runs `step` through the director's script (the one way commands reach a world).
    fn by_command(
        w: &mut World,
        step: impl FnOnce(&mut sigecs::Commands<'_>) + Send + 'static,
    ) -> bool {
        w.resource::<Script>().push(step);
        catch_unwind(AssertUnwindSafe(|| w.run_run_script())).is_err()
    }

    fn check(w: &World, m: &Model) -> Result<(), TestCaseError> {
        prop_assert_eq!(w.check_invariants(), Ok(()));
        prop_assert_eq!(
            w.len(),
            m.held.len() + 1,
            "the director and the model's entities"
        );
        prop_assert_eq!(drops(), (m.bombs_dropped, m.witnesses_dropped));
        for (&e, h) in &m.held {
            prop_assert_eq!(
                w.get::<Bomb>(e).map(|b| (b.armed, b.value)),
                h.bomb,
                "bomb of {}",
                e
            );
            prop_assert_eq!(w.get::<Witness>(e).map(|x| x.0), Some(h.witness));
            prop_assert_eq!(w.get::<Tr>(e).map(|t| t.0), h.tr);
        }
        Ok(())
    }

    proptest! {
        // Under Miri (CI runs this file there) a few cases: each step is slow, not different.
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 1 } else { 48 }))]
        #[test]
        fn panicking_drops_match_the_model(
            ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 80 })
        ) {
            let mut w = World::new();
            w.spawn(Scripted { director: Director });
            let mut m = Model::default();
            let mut ids: Vec<Entity> = Vec::new();
            let mut next = 0u32;
            reset();
            for op in ops {
                next += 1;
                let pick = |i: usize| ids.get(i % ids.len().max(1)).copied();
                let (panicked, expected) = match op {
                    Op::SpawnTrap(armed) => {
                        let e = w.spawn(Trap { bomb: bomb(armed, next), witness: Witness(next) });
                        m.held.insert(e, Held { bomb: Some((armed, next)), witness: next, tr: None });
                        ids.push(e);
                        (false, false)
                    }
                    Op::SpawnTrapRow(armed) => {
                        let e = w.spawn(TrapRow { bomb: bomb(armed, next), witness: Witness(next), tr: Tr(next) });
                        m.held.insert(e, Held { bomb: Some((armed, next)), witness: next, tr: Some(next) });
                        ids.push(e);
                        (false, false)
                    }
                    Op::Despawn(i) => {
                        let Some(e) = pick(i) else { continue };
                        let panicked = catch_unwind(AssertUnwindSafe(|| w.despawn(e))).is_err();
                        (panicked, m.despawn(e))
                    }
                    Op::ReplaceBomb(i, armed) => {
                        let Some(e) = pick(i) else { continue };
                        let result = catch_unwind(AssertUnwindSafe(|| w.insert(e, bomb(armed, next))));
                        let expected = match m.held.get(&e).copied() {
                            Some(h) => {
                                m.held.get_mut(&e).unwrap().bomb = Some((armed, next));
                                match result {
                                    // The old bomb comes back to the caller: its drop is ours.
                                    Ok(Ok(Some(mut old))) => {
                                        prop_assert_eq!(Some((old.armed, old.value)), h.bomb);
                                        old.armed = false;
                                        drop(old);
                                        m.drop_bomb(h.bomb);
                                    }
                                    Ok(Ok(None)) => prop_assert!(h.bomb.is_none()),
                                    other => prop_assert!(false, "insert into a live entity: {:?}", other.map(|r| r.is_ok())),
                                }
                                false
                            }
                            None => {
                                // Refused: the new bomb is dropped (disarmed or not, the
                                // error is what the caller sees).
                                prop_assert!(matches!(result, Ok(Err(_))));
                                m.drop_bomb(Some((false, next)));
                                false
                            }
                        };
                        (false, expected)
                    }
                    Op::InsertTr(i) => {
                        let Some(e) = pick(i) else { continue };
                        let ok = w.insert(e, Tr(next)).is_ok();
                        prop_assert_eq!(ok, m.held.contains_key(&e));
                        if let Some(h) = m.held.get_mut(&e) {
                            h.tr = Some(next);
                        }
                        (false, false)
                    }
                    Op::RemoveBombByCommand(i) => {
                        let Some(e) = pick(i) else { continue };
                        let panicked = by_command(&mut w, move |c| c.remove::<Bomb>(e));
                        let bomb = m.held.get_mut(&e).and_then(|h| h.bomb.take());
                        (panicked, m.drop_bomb(bomb))
                    }
                    Op::DespawnByCommand(i) => {
                        let Some(e) = pick(i) else { continue };
                        let panicked = by_command(&mut w, move |c| c.despawn(e));
                        (panicked, m.despawn(e))
                    }
                    Op::ReplaceByCommand(i, armed) => {
                        let Some(e) = pick(i) else { continue };
                        let value = next;
                        let panicked = by_command(&mut w, move |c| c.insert(e, bomb(armed, value)));
                        let expected = match m.held.get_mut(&e) {
                            Some(h) => {
                                let old = h.bomb.replace((armed, value));
                                m.drop_bomb(old)
                            }
                            // Refused: the new bomb is dropped inside the world, quietly (a
                            // panic of its drop is caught; the error is what the run reports).
                            None => {
                                m.bombs_dropped += 1;
                                false
                            }
                        };
                        (panicked, expected)
                    }
                    Op::Clear => {
                        let panicked = catch_unwind(AssertUnwindSafe(|| w.clear())).is_err();
                        let mut expected = false;
                        for e in m.held.keys().copied().collect::<Vec<_>>() {
                            expected |= m.despawn(e);
                        }
                        // The director went too: bring it back.
                        w.spawn(Scripted { director: Director });
                        (panicked, expected)
                    }
                };
                prop_assert_eq!(panicked, expected);
                check(&w, &m)?;
            }
            // Disarm what is left so the world's drop does not panic.
            for e in w.entities().collect::<Vec<_>>() {
                if let Some(b) = w.get_mut::<Bomb>(e) {
                    b.armed = false;
                }
            }
        }
    }
}

/// Events, sparse components and the tokens of `faults`' ledger: every value is accounted for.
mod tokens {
    use sigecs_fixtures::faults::{Badge, Boom, Cargo, Chime, Ledger, Pos, Site, Tag, Vel, World};
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::Arc;

    /// The world holds exactly the ledger's live tokens, none was dropped twice, and the
    /// world is consistent.
    fn accounted(w: &World, ledger: &Ledger) {
        assert_eq!(w.check_invariants(), Ok(()));
        assert_eq!(ledger.errors(), Vec::<String>::new());
        let mut live: Vec<u64> = ledger.live().into_iter().collect();
        live.sort_unstable();
        assert_eq!(w.tokens(), live, "the world's tokens are the live ones");
        assert_eq!(ledger.created() - ledger.dropped(), live.len() as u64);
    }

    fn body(ledger: &Arc<Ledger>) -> sigecs_fixtures::faults::Body {
        sigecs_fixtures::faults::Body {
            pos: Pos(0),
            vel: Vel(1),
            cargo: Cargo(ledger.token(Site::ComponentDrop)),
        }
    }

    #[test]
    fn a_panicking_event_drop_leaves_the_world_running_frames() {
        let ledger = Ledger::new(1);
        let mut w = World::new();
        w.spawn(body(&ledger));
        w.send_event(Boom(ledger.armed(Site::EventDrop)));
        w.send_event(Boom(ledger.token(Site::EventDrop)));
        w.send_event(Chime(ledger.token(Site::EventDrop)));
        w.update_events(); // all three are the previous frame's now
        let updated = catch_unwind(AssertUnwindSafe(|| w.update_events()));
        assert!(updated.is_err(), "the armed event's panic continues");
        accounted(&w, &ledger);
        // Every queue moved on, also the one after the panicking queue.
        assert!(w.events::<Boom>().is_empty() && w.events::<Chime>().is_empty());
        assert_eq!(w.events::<Boom>().end(), 2);
        // The world runs the next frames, events and all.
        w.resource_mut::<sigecs_fixtures::faults::Faults>().ledger = Some(ledger.clone());
        for _ in 0..3 {
            w.run_all().unwrap();
            w.update_events();
            accounted(&w, &ledger);
        }
        w.run_schedule().unwrap();
        assert!(w.resource::<sigecs_fixtures::faults::Heard>().late > 0);
        accounted(&w, &ledger);
        w.resource_mut::<sigecs_fixtures::faults::Faults>().ledger = None;
        drop(w);
        assert!(
            ledger.live().is_empty(),
            "dropping the world drops every token"
        );
        assert_eq!(ledger.errors(), Vec::<String>::new());
    }

    #[test]
    fn a_panicking_sparse_value_does_not_leak_the_entity_s_other_values() {
        // Each of the two sparse values panics in turn: the other drops all the same.
        for armed_tag in [true, false] {
            let ledger = Ledger::new(2);
            let mut w = World::new();
            let keep = w.spawn(body(&ledger));
            let e = w.spawn(body(&ledger));
            let token = |armed| {
                if armed {
                    ledger.armed(Site::SparseDrop)
                } else {
                    ledger.token(Site::SparseDrop)
                }
            };
            w.insert(e, Tag(token(armed_tag))).unwrap();
            w.insert(e, Badge(token(!armed_tag))).unwrap();
            w.insert(keep, Tag(ledger.token(Site::SparseDrop))).unwrap();
            accounted(&w, &ledger);
            let despawned = catch_unwind(AssertUnwindSafe(|| w.despawn(e)));
            assert!(despawned.is_err(), "the armed value's panic continues");
            assert!(!w.is_alive(e));
            accounted(&w, &ledger);
            assert_eq!(w.get::<Tag>(keep).map(|t| t.0.id()), Some(4));
            assert_eq!(ledger.live().len(), 2, "the survivor's cargo and tag");
        }
    }
}
