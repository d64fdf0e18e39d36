//! Declarations under `#[cfg(..)]` and `#[cfg_attr(..)]` follow the build: the build script
//! evaluates each condition as rustc does (`debug_assertions`, the target's cfgs), so a
//! `#[cfg(debug_assertions)]` system has its `run_` method in debug builds only, a component
//! under a true `cfg` is declared and one under a false `cfg` is not, and a `cfg_attr`, a field's
//! or a parameter's `cfg` change a declaration exactly when rustc applies them.

use sigecs::WorldModel;
use sigecs_fixtures::failures::*;

/// The fixture's systems and components under `#[cfg]` exist exactly when their condition holds.
#[test]
fn cfg_declarations_follow_the_build() {
    let mut world = World::new();
    let e = world.spawn(Counter { count: Count(0) });
    #[cfg(debug_assertions)]
    {
        world.run_debug_only();
        assert_eq!(world.get::<Count>(e), Some(&Count(1000)));
        assert!(SYSTEM_NAMES.contains(&"debug_only"));
        assert!(!SYSTEM_NAMES.contains(&"release_only"));
    }
    #[cfg(not(debug_assertions))]
    {
        world.run_release_only();
        assert_eq!(world.get::<Count>(e), Some(&Count(2000)));
        assert!(!SYSTEM_NAMES.contains(&"debug_only"));
    }
    #[cfg(target_pointer_width = "64")]
    {
        let w = world.spawn(WideCounter {
            count: Count(1),
            wide: Wide(u64::MAX),
        });
        assert_eq!(world.get::<Wide>(w), Some(&Wide(u64::MAX)));
        world.run_tick();
        assert_eq!(world.get::<Count>(w), Some(&Count(2)));
    }
    let names: Vec<&str> = Model::components().iter().map(|c| c.name).collect();
    #[cfg(target_pointer_width = "64")]
    assert_eq!(names, ["Count", "Fuse", "Wide"]);
    assert!(!names.contains(&"Nowhere"));
}

/// `#[cfg_attr]` on components, signatures, resources and systems and `#[cfg]` on fields and
/// parameters mean for the build script what they mean for rustc (it used to ignore both: a
/// component sparse through `cfg_attr` was a table column to it, and a signature field rustc
/// drops made every spawn of the signature panic).
mod cfg_attrs {
    use sigecs::prelude::*;
    use sigecs::{Layout, WorldModel};
    use sigecs_fixtures::cfg_attrs::*;

    #[test]
    fn a_component_sparse_through_cfg_attr_is_sparse() {
        let mut world = World::new();
        let e = world.spawn(Body { pos: Pos(1.0) });
        world.insert(e, Marked(3)).unwrap();
        world.insert(e, Marked(4)).unwrap();
        assert_eq!(world.get::<Marked>(e), Some(&Marked(4)));
        let marked: Vec<(Entity, u32)> = world
            .query::<(Entity, &Marked)>()
            .map(|(e, m)| (e, m.0))
            .collect();
        assert_eq!(marked, [(e, 4)], "one value, seen by queries");
        assert_eq!(world.query::<&Pos>().count(), 1);
        // A table component would have moved the entity to an undeclared set's store.
        assert!(world.undeclared().is_empty(), "{:?}", world.undeclared());
        let sparse: Vec<&str> = Model::components()
            .iter()
            .filter(|c| c.sparse)
            .map(|c| c.name)
            .collect();
        assert_eq!(sparse, ["Marked"]);
    }

    #[test]
    fn a_cfg_attr_that_fails_leaves_a_table_component() {
        let mut world = World::new();
        let e = world.spawn(TaggedBody {
            pos: Pos(2.0),
            tagged: Tagged(7),
        });
        assert_eq!(world.get::<Tagged>(e), Some(&Tagged(7)));
        assert_eq!(world.remove::<Tagged>(e), Ok(Tagged(7)));
        assert_eq!(world.get::<Pos>(e), Some(&Pos(2.0)));
    }

    #[test]
    fn a_field_rustc_drops_is_not_a_slot() {
        let mut world = World::new();
        let e = world.spawn(Body { pos: Pos(5.0) });
        assert_eq!(world.get::<Pos>(e), Some(&Pos(5.0)));
        assert_eq!(world.get::<Heat>(e), None);
        let w = world.spawn(Warm {
            pos: Pos(6.0),
            heat: Heat(1),
        });
        world.run_warm();
        assert_eq!(world.get::<Heat>(w), Some(&Heat(2)));
        let stores: Vec<(&str, Layout, usize)> = Model::stores()
            .iter()
            .map(|s| (s.name, s.layout, s.slots.len()))
            .collect();
        assert_eq!(
            stores,
            [
                ("Body", Layout::Columns, 1),
                ("Hot", Layout::Columns, 1),
                ("TaggedBody", Layout::Columns, 2),
                ("Warm", Layout::Rows, 2),
            ]
        );
    }

    #[test]
    fn cfg_attr_declarations_and_their_order_follow_rustc() {
        let names: Vec<&str> = Model::components().iter().map(|c| c.name).collect();
        assert_eq!(names, ["Heat", "Marked", "Pos", "Tagged"]);
        assert_eq!(SYSTEM_NAMES, ["warm", "first", "second"]);
        let mut world = World::new();
        let hot = world.spawn(Hot { heat: Heat(0) });
        world.run_all();
        assert_eq!(world.resource::<Log>().0, ["first", "second"]);
        assert_eq!(world.get::<Heat>(hot), Some(&Heat(1)));
    }
}
