//! Tests written against surviving mutants of `ecs-core/src/world/*.rs` (see `mutants.md`):
//! each pins a value or a state that a mutant of the world's code would change.

use sigecs_fixtures::sched;

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
    use ecs_core::{Component, Signature, WorldError};
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
        fn write_parts<S: ecs_core::PartSink>(self, sink: &mut S) {
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
                "insert `mutants_world::refused_values::Foreign` into entity {unit}: `"
            )),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].to_string().starts_with(&format!(
                "spawn `mutants_world::refused_values::ForeignSig` as entity {ghost}: `"
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
    use ecs_core::entity::MAX_ENTITIES;
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
    use ecs_core::{CommandErrors, Entity, WorldError};
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
    assert_eq!(errors(0).to_string(), "0 command(s) could not be applied");
    assert_eq!(
        errors(10).to_string(),
        format!("10 command(s) could not be applied{ten}")
    );
    assert_eq!(
        errors(12).to_string(),
        format!("12 command(s) could not be applied{ten}\n  … and 2 more")
    );
    assert_eq!(CommandErrors::into_result(Vec::new()), Ok(()));
    assert_eq!(
        CommandErrors::into_result(vec![WorldError::NoSuchEntity(Entity::new(1, 0))]),
        Err(CommandErrors(vec![WorldError::NoSuchEntity(Entity::new(
            1, 0
        ))]))
    );
}
