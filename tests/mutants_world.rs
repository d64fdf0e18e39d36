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
    use ecs_core::__private::Pending;
    use ecs_core::{Commands, Component, Signature, WorldError};
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
        let mut w = World::new();
        let unit = w.spawn(Unit {
            health: Health(1),
            lifetime: Lifetime(2),
        });
        BOMB_DROPS.with(|d| d.set(0));
        FOREIGN_DROPS.with(|d| d.set(0));
        let mut c = Commands::__new(w.entity_manager());
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
        let ghost = c.spawn(ForeignSig(Foreign));
        let pending = Pending::of(c);
        let errors = w.__apply_commands(pending);
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
        assert_eq!(w.len(), 1);
        assert_eq!(w.check_invariants(), Ok(()));
    }
}

/// `Tables::build` on a hand-written model, checked entry by entry: every slot index, every
/// declared move (target, copies, changed slot and size), and every lookup by mask and type.
mod tables {
    use ecs_core::model::{
        ComponentInfo, CopyOp, Layout, MoveRef, Slot, StoreInfo, SystemInfo, Tables, WorldModel,
    };
    use ecs_core::storage::ColumnType;
    use std::any::TypeId;
    use std::sync::OnceLock;

    struct A(#[allow(dead_code)] u32);
    struct B(#[allow(dead_code)] u64);
    struct C(#[allow(dead_code)] u16);
    struct SigA;
    struct SigAB;
    struct SigABC;
    struct SigC;
    /// Store AB's row: B at offset 0, A at offset 8.
    #[repr(C)]
    struct RowAB(u64, u32);

    static COMPONENTS: [ComponentInfo; 3] = [
        ComponentInfo::of::<A>("A"),
        ComponentInfo::of::<B>("B"),
        ComponentInfo::of::<C>("C"),
    ];
    static STORES: [StoreInfo; 4] = [
        StoreInfo {
            name: "A",
            mask: 0b001,
            layout: Layout::Columns,
            columns: &[ColumnType::of::<A>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<SigA>,
        },
        StoreInfo {
            name: "AB",
            mask: 0b011,
            layout: Layout::Rows,
            columns: &[ColumnType::of::<RowAB>()],
            slots: &[Slot::new(0, 0, 8), Slot::new(1, 0, 0)],
            signature: TypeId::of::<SigAB>,
        },
        StoreInfo {
            name: "ABC",
            mask: 0b111,
            layout: Layout::Columns,
            columns: &[
                ColumnType::of::<A>(),
                ColumnType::of::<B>(),
                ColumnType::of::<C>(),
            ],
            // Field order C, A, B.
            slots: &[Slot::new(2, 2, 0), Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
            signature: TypeId::of::<SigABC>,
        },
        StoreInfo {
            name: "C",
            mask: 0b100,
            layout: Layout::Columns,
            columns: &[ColumnType::of::<C>()],
            slots: &[Slot::new(2, 0, 0)],
            signature: TypeId::of::<SigC>,
        },
    ];

    struct Model;
    // SAFETY: only `Tables::build` reads this model; no world is made of it.
    unsafe impl WorldModel for Model {
        type Resources = ();
        fn components() -> &'static [ComponentInfo] {
            &COMPONENTS
        }
        fn stores() -> &'static [StoreInfo] {
            &STORES
        }
        fn systems() -> &'static [SystemInfo] {
            &[]
        }
        fn tables() -> &'static Tables {
            static TABLES: OnceLock<Tables> = OnceLock::new();
            TABLES.get_or_init(Tables::build::<Model>)
        }
    }

    fn op(src_col: u32, src_off: u32, dst_col: u32, dst_off: u32, size: u32) -> CopyOp {
        CopyOp {
            src_col,
            src_off,
            dst_col,
            dst_off,
            size,
        }
    }

    fn check(m: MoveRef<'_>, to: u32, copies: &[CopyOp], changed: Slot, size: usize) {
        // The entry's copies of the target and the function are the transition's.
        let t = m.transition();
        assert_eq!(m.to, t.to);
        assert!(std::ptr::fn_addr_eq(m.run, t.run));
        assert_eq!(t.to, to);
        assert_eq!(&*t.copies, copies);
        assert_eq!(t.changed, changed);
        assert_eq!(t.changed_size, size);
    }

    #[test]
    fn slots_of_every_store_and_component() {
        let t = Model::tables();
        let expected: [[Option<usize>; 3]; 4] = [
            [Some(0), None, None],
            [Some(0), Some(1), None],
            [Some(1), Some(2), Some(0)],
            [None, None, Some(0)],
        ];
        for (s, row) in expected.iter().enumerate() {
            for (c, &k) in row.iter().enumerate() {
                assert_eq!(
                    t.slot_index(s as u32, c as u32),
                    k,
                    "store {s} component {c}"
                );
                if let Some(k) = k {
                    assert_eq!(t.slot_or_insert(s as u32, c as u32).ok(), Some(k));
                    assert!(t.insert_move(s as u32, c as u32).is_none());
                }
            }
        }
        assert_eq!(t.sizes(), &[4, 8, 2]);
    }

    #[test]
    fn every_declared_move_and_nothing_else() {
        let t = Model::tables();
        assert_eq!(t.transitions(), 4);
        // A + B -> AB.
        let m = t.slot_or_insert(0, 1).unwrap_err().unwrap();
        check(m, 1, &[op(0, 0, 0, 8, 4)], Slot::new(1, 0, 0), 8);
        assert!(std::ptr::eq(
            m.transition(),
            t.insert_move(0, 1).unwrap().transition()
        ));
        // AB - B -> A.
        let m = t.remove_move(1, 1).unwrap();
        check(m, 0, &[op(0, 8, 0, 0, 4)], Slot::new(1, 0, 0), 8);
        // AB + C -> ABC.
        let m = t.insert_move(1, 2).unwrap();
        check(
            m,
            2,
            &[op(0, 8, 0, 0, 4), op(0, 0, 1, 0, 8)],
            Slot::new(2, 2, 0),
            2,
        );
        // ABC - C -> AB.
        let m = t.remove_move(2, 2).unwrap();
        check(
            m,
            1,
            &[op(0, 0, 0, 8, 4), op(1, 0, 0, 0, 8)],
            Slot::new(2, 2, 0),
            2,
        );
        // Undeclared targets, and removes of absent components.
        assert!(matches!(t.slot_or_insert(0, 2), Err(None)));
        assert!(matches!(t.slot_or_insert(3, 0), Err(None)));
        assert!(matches!(t.slot_or_insert(3, 1), Err(None)));
        assert!(t.insert_move(0, 2).is_none());
        for (s, c) in [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (2, 0),
            (2, 1),
            (3, 2),
            (3, 0),
        ] {
            assert!(t.remove_move(s, c).is_none(), "remove {c} from store {s}");
        }
    }

    #[test]
    fn lookups_by_mask_and_type() {
        let t = Model::tables();
        assert_eq!(t.store_with_mask(0b001), Some(0));
        assert_eq!(t.store_with_mask(0b011), Some(1));
        assert_eq!(t.store_with_mask(0b111), Some(2));
        assert_eq!(t.store_with_mask(0b100), Some(3));
        assert_eq!(t.store_with_mask(0b110), None);
        assert_eq!(t.component_of_type(TypeId::of::<A>()), Some(0));
        assert_eq!(t.component_of_type(TypeId::of::<B>()), Some(1));
        assert_eq!(t.component_of_type(TypeId::of::<C>()), Some(2));
        assert_eq!(t.component_of_type(TypeId::of::<SigA>()), None);
        assert_eq!(t.store_of_type(TypeId::of::<SigA>()), Some(0));
        assert_eq!(t.store_of_type(TypeId::of::<SigAB>()), Some(1));
        assert_eq!(t.store_of_type(TypeId::of::<SigABC>()), Some(2));
        assert_eq!(t.store_of_type(TypeId::of::<SigC>()), Some(3));
        assert_eq!(t.store_of_type(TypeId::of::<A>()), None);
        assert_eq!(
            ComponentInfo::of::<B>("B").ty.size,
            8,
            "ComponentInfo::of records the type"
        );
        assert_eq!(COMPONENTS[2].name, "C");
    }

    /// A `columns` store whose column holds another type than its slot's component breaks
    /// the contract batch spawns rely on (stride = the component's size): refused when the
    /// tables are built, before any world exists.
    #[test]
    #[should_panic(expected = "store Bad breaks the columns layout contract")]
    fn a_columns_store_with_a_mistyped_column_is_refused() {
        static BAD: [StoreInfo; 1] = [StoreInfo {
            name: "Bad",
            mask: 0b001,
            layout: Layout::Columns,
            columns: &[ColumnType::of::<B>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<SigA>,
        }];
        struct BadModel;
        // SAFETY: only `Tables::build` reads this model, and it refuses it.
        unsafe impl WorldModel for BadModel {
            type Resources = ();
            fn components() -> &'static [ComponentInfo] {
                &COMPONENTS
            }
            fn stores() -> &'static [StoreInfo] {
                &BAD
            }
            fn systems() -> &'static [SystemInfo] {
                &[]
            }
            fn tables() -> &'static Tables {
                unreachable!("the test builds the tables itself")
            }
        }
        let _ = Tables::build::<BadModel>();
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
