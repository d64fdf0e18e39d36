//! Declarations under `#[cfg(..)]` follow the build: the build script evaluates each condition
//! as rustc does (`debug_assertions`, the target's cfgs), so a `#[cfg(debug_assertions)]`
//! system has its `run_` method in debug builds only, a component under a true `cfg` is
//! declared, and one under a false `cfg` is not.

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
