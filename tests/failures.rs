//! How the world fails: a panic names the caller's line and happens nowhere else, a pass that
//! panics leaves no entity without a row, ids that run out are an error or a panic at the
//! caller, and every refused command is reported, saying which command it was, with its value
//! dropped without unwinding.

use sigecs_fixtures::failures::*;
use sigecs_fixtures::sched;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Panics on this thread and where the last one happened, recorded by [`hook`].
    static PANICS: Cell<usize> = const { Cell::new(0) };
    static LAST_PANIC: std::cell::RefCell<Option<(String, u32)>> = const { std::cell::RefCell::new(None) };
}

/// Installs (once, for every test of this file) a panic hook that records each panic in the
/// panicking thread's `PANICS` and `LAST_PANIC`, then prints it as before. Per thread, so tests
/// running side by side do not see each other's panics.
fn hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            let at = info.location().map(|l| (l.file().to_string(), l.line()));
            LAST_PANIC.with(|l| *l.borrow_mut() = at);
            previous(info);
        }));
    });
}

/// Runs `f` and returns how many panics happened on this thread meanwhile, caught or not.
fn count_panics(f: impl FnOnce()) -> usize {
    hook();
    let before = PANICS.with(Cell::get);
    f();
    PANICS.with(Cell::get) - before
}

/// Runs `f`, which must panic, and returns the file and line the panic names.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    hook();
    LAST_PANIC.with(|l| *l.borrow_mut() = None);
    assert!(catch_unwind(AssertUnwindSafe(f)).is_err(), "no panic");
    LAST_PANIC
        .with(|l| l.borrow_mut().take())
        .expect("the hook saw the panic")
}

/// A successful `spawn_batch` panics nowhere, not even in a panic caught inside (which would
/// print, and abort a program built with `panic = "abort"`).
#[test]
fn a_successful_spawn_batch_panics_nowhere() {
    let mut world = World::new();
    let panics = count_panics(|| {
        let es = world.spawn_batch((0..3).map(|i| Counter { count: Count(i) }));
        assert_eq!(es.len(), 3);
        assert_eq!(world.get::<Count>(es[2]), Some(&Count(2)));
        let es = world.spawn_batch(std::iter::empty::<Counter>());
        assert!(es.is_empty());
    });
    assert_eq!(panics, 0);
    assert_eq!(world.len(), 3);
}

/// The id a system reserved with `commands.spawn` before it panicked is retired: the next
/// direct spawn, despawn or run does not make it alive without a row.
#[test]
fn a_pass_that_panics_after_a_spawn_request_leaves_no_phantom_entity() {
    let mut world = World::new();
    world.spawn(Fused {
        count: Count(0),
        fuse: Fuse(false),
    });
    world.spawn(Fused {
        count: Count(1),
        fuse: Fuse(true),
    });
    let ran = catch_unwind(AssertUnwindSafe(|| world.run_spawn_then_panic()));
    assert!(ran.is_err(), "the lit fuse panics");
    let e = world.spawn(Counter { count: Count(5) });
    assert_eq!(world.len(), 3, "two fused entities and the direct spawn");
    assert_eq!(world.check_invariants(), Ok(()));
    assert_eq!(world.get::<Count>(e), Some(&Count(5)));
    world.run_tick();
    assert_eq!(
        world.query::<&Count>().map(|c| c.0).collect::<Vec<_>>(),
        [6, 1, 2]
    );
    world.clear();
    assert_eq!((world.len(), world.is_empty()), (0, true));
    assert_eq!(world.check_invariants(), Ok(()));
    // A despawn first, and a generated run first, retire the orphans too.
    for first in ["despawn", "run"] {
        let mut world = World::new();
        let keep = world.spawn(Counter { count: Count(7) });
        let fused = world.spawn(Fused {
            count: Count(1),
            fuse: Fuse(true),
        });
        let ran = catch_unwind(AssertUnwindSafe(|| world.run_spawn_then_panic()));
        assert!(ran.is_err());
        if first == "despawn" {
            assert!(world.despawn(fused));
        } else {
            world.run_tick();
        }
        assert_eq!(world.check_invariants(), Ok(()), "{first}");
        assert_eq!(
            world.len(),
            if first == "despawn" { 1 } else { 2 },
            "{first}"
        );
        assert_eq!(
            world.get::<Count>(keep).map(|c| c.0),
            Some(if first == "run" { 8 } else { 7 })
        );
    }
}

/// `spawn` and `spawn_batch` panic when the ids run out, at the caller's line (not a line of
/// sigecs).
#[test]
fn spawn_panics_at_the_callers_line_when_ids_run_out() {
    use sigecs::entity::MAX_ENTITIES;
    let mut world = World::new();
    world.spawn_batch((0..MAX_ENTITIES).map(|i| Counter {
        count: Count(i as u32),
    }));
    let line = line!() + 2;
    let at = panic_location(|| {
        let _ = world.spawn(Counter { count: Count(0) });
    });
    assert_eq!(at, (file!().to_string(), line));
    let line = line!() + 1;
    let at = panic_location(|| drop(world.spawn_batch([Counter { count: Count(0) }])));
    assert_eq!(at, (file!().to_string(), line));
    assert_eq!(world.len(), MAX_ENTITIES);
}

/// Two refused commands on a dead entity are two errors, each saying which command it was.
#[test]
fn a_refused_command_says_which_command_it_was() {
    let mut world = World::new();
    world.spawn(Fused {
        count: Count(0),
        fuse: Fuse(false),
    });
    let dead = world.spawn(Counter { count: Count(1) });
    assert!(world.despawn(dead));
    world.resource_mut::<Target>().0 = Some(dead);
    let errors = world.run_poke().unwrap_err();
    let shown: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
    let not_alive = format!("entity {dead} is not alive in this world");
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!(
            "insert `sigecs_fixtures::failures::Count` into entity {dead}: {not_alive}"
        )),
        "{}",
        shown[0]
    );
    assert!(
        shown[1].starts_with(&format!(
            "remove `sigecs_fixtures::failures::Fuse` from entity {dead}: {not_alive}"
        )),
        "{}",
        shown[1]
    );
    // Matching by kind goes through `reason`.
    for e in &errors.0 {
        assert_eq!(e.reason(), &sigecs::WorldError::NoSuchEntity(dead));
        assert!(std::error::Error::source(e).is_some());
    }
    assert!(errors
        .to_string()
        .contains("2 commands could not be applied"));
}

/// An id reserved through the entity manager, outside any command buffer, is retired by the
/// next system run even when that run requested nothing (`__apply_commands` must not skip
/// the flush just because the pending commands are empty).
#[test]
fn a_run_without_commands_retires_ids_reserved_outside_commands() {
    let mut w = sched::World::new();
    let unit = w.spawn(sched::Unit {
        p: sched::P(0.0),
        v: sched::V(0.0),
        hp: sched::Hp(10),
    });
    let reserved = w.entity_manager().reserve().unwrap();
    assert_eq!(w.entity_manager().reserved_len(), 1);
    w.run_reap().unwrap();
    assert_eq!(w.entity_manager().reserved_len(), 0, "flushed and retired");
    assert!(!w.is_alive(reserved));
    assert!(!w.entity_manager().alive(reserved));
    assert!(w.is_alive(unit));
    assert_eq!(w.len(), 1);
    assert_eq!(w.check_invariants(), Ok(()));
    // The retired id's slot is reused with a new generation, never as `reserved` again.
    let next = w.spawn(sched::Wreck {
        hp: sched::Hp(1),
        age: sched::Age(0),
    });
    assert_ne!(next, reserved);
    assert!(!w.is_alive(reserved));
}

/// Refused command values are dropped with their `Drop` panic caught (`drop_quietly`): the
/// run reports the error instead of unwinding. Commands are built by hand here, as the
/// generated `run_*` methods do.
mod refused_values {
    use sigecs::{Component, Signature, WorldError};
    use sigecs_fixtures::repro::*;

    /// Not a component of the repro world; its `Drop` panics.
    struct Foreign;
    impl Component for Foreign {
        const COLD: bool = false;
    }
    impl Drop for Foreign {
        fn drop(&mut self) {
            FOREIGN_DROPS.with(|d| d.set(d.get() + 1));
            panic!("foreign value dropped");
        }
    }
    thread_local! {
        static FOREIGN_DROPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    /// Not a signature of the repro world.
    struct ForeignSig(Foreign);
    impl Signature for ForeignSig {
        const LEN: usize = 1;
        fn write_fields<S: sigecs::__private::FieldSink>(self, sink: &mut S) {
            sink.put(self.0);
        }
    }

    #[test]
    fn refused_values_with_panicking_drops_are_reported_not_thrown() {
        let mut w = strict::World::new();
        let unit = w.spawn(Unit {
            health: Health(1),
            lifetime: Lifetime(2),
        });
        BOMB_DROPS.with(|d| d.set(0));
        FOREIGN_DROPS.with(|d| d.set(0));
        w.spawn(Scripted { director: Director });
        let ghost = std::sync::Arc::new(std::sync::Mutex::new(None));
        let reserved = ghost.clone();
        w.resource::<Script>().push(move |c| {
            // {Health, Lifetime, Bomb} is not declared: refused, the bomb dropped quietly.
            c.insert(
                unit,
                Bomb {
                    armed: true,
                    value: 7,
                },
            );
            // Not a component of this world: refused, dropped quietly.
            c.insert(unit, Foreign);
            // Not a signature of this world: refused, dropped quietly.
            *reserved.lock().unwrap() = Some(c.spawn(ForeignSig(Foreign)));
        });
        let errors = w.run_run_script().unwrap_err().0;
        let ghost = ghost.lock().unwrap().unwrap();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            matches!(&errors[0], WorldError::UndeclaredSignature { entity, component: "Bomb", .. } if *entity == unit),
            "{errors:?}"
        );
        assert!(
            matches!(errors[1].reason(), WorldError::NotInWorld { kind: "component", type_name } if type_name.ends_with("Foreign")),
            "{errors:?}"
        );
        assert!(
            matches!(errors[2].reason(), WorldError::NotInWorld { kind: "signature", type_name } if type_name.ends_with("ForeignSig")),
            "{errors:?}"
        );
        assert!(
            errors[1].to_string().starts_with(&format!(
                "insert `failures::refused_values::Foreign` into entity {unit}: `"
            )),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].to_string().starts_with(&format!(
                "spawn `failures::refused_values::ForeignSig` as entity {ghost}: `"
            )),
            "{}",
            errors[2]
        );
        assert_eq!(BOMB_DROPS.with(|d| d.get()), 1);
        assert_eq!(FOREIGN_DROPS.with(|d| d.get()), 2);
        assert!(!w.is_alive(ghost));
        assert_eq!(w.entity_manager().reserved_len(), 0);
        assert_eq!(w.signature_name_of(unit), Some("Unit"));
        assert_eq!(w.get::<Health>(unit), Some(&Health(1)));
        assert_eq!(w.len(), 2);
        assert_eq!(w.check_invariants(), Ok(()));
    }
}

/// A batch of known length that fits the free slots exactly is spawned, not refused
/// (`lower > available`, not `>=`).
#[test]
#[cfg_attr(miri, ignore = "fills 2^22 entity slots")]
fn a_batch_that_exactly_fills_the_index_space_is_spawned() {
    use sigecs::entity::MAX_ENTITIES;
    use sigecs_fixtures::repro::{Health, Lifetime, Unit, World};
    let unit = |h| Unit {
        health: Health(h),
        lifetime: Lifetime(1),
    };
    let mut w = World::new();
    w.spawn_batch((0..MAX_ENTITIES - 2).map(|_| unit(0)));
    assert_eq!(w.entity_manager().available(), 2);
    let es = w.try_spawn_batch([unit(1), unit(2)]).unwrap();
    assert_eq!(es.len(), 2);
    assert_eq!(w.get::<Health>(es[1]), Some(&Health(2)));
    assert_eq!(w.entity_manager().available(), 0);
    assert_eq!(w.len(), MAX_ENTITIES);
    assert!(w.try_spawn_batch([unit(3)]).is_err());
}

/// `CommandErrors`' message: the count, the first ten errors numbered, then how many more.
#[test]
fn command_errors_list_the_first_ten() {
    use sigecs::{CommandErrors, Entity, WorldError};
    let errors = |n: u32| {
        CommandErrors(
            (0..n)
                .map(|i| WorldError::NoSuchEntity(Entity::new(i, 0)))
                .collect(),
        )
    };
    let line = |i: u32| {
        format!(
            "\n  {}: {}",
            i + 1,
            WorldError::NoSuchEntity(Entity::new(i, 0))
        )
    };
    let ten: String = (0..10).map(line).collect();
    assert_eq!(errors(0).to_string(), "0 commands could not be applied");
    assert_eq!(
        errors(1).to_string(),
        format!("1 command could not be applied{}", line(0))
    );
    assert_eq!(
        errors(10).to_string(),
        format!("10 commands could not be applied{ten}")
    );
    assert_eq!(
        errors(12).to_string(),
        format!("12 commands could not be applied{ten}\n  … and 2 more")
    );
    assert_eq!(CommandErrors::into_result(Vec::new()), Ok(()));
    assert_eq!(
        CommandErrors::into_result(vec![WorldError::NoSuchEntity(Entity::new(1, 0))]),
        Err(CommandErrors(vec![WorldError::NoSuchEntity(Entity::new(
            1, 0
        ))]))
    );
}
