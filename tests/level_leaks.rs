//! Spawning levels leaks nothing, counted by a global allocator: a world that spawned
//! a level (with its 100 decoded `String` notes) many times frees every allocation when it is
//! dropped, and a refused spawn (a transform conflict found after the ids were issued, a
//! structure-of-arrays manager refusing its instances, or a level verified for other
//! signatures) leaves nothing behind either.

use sigecs::entity::Entity;
use sigecs::transform::TransformManager;
use sigecs_demo::{level_registry, World};
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use sigecs_level::{
    verify, AlignedBlob, AnySet, EntityCompiler, LevelError, Registration, VerifyOptions,
    WorldLevels,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the live allocations made on each thread: the test compares its own thread's count
/// before and after, so an allocation of the test harness's other threads (which made the count
/// flaky when it was global) cannot change it.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: the allocator also runs while a thread's locals are being destroyed.
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(1);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-1);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Live allocations made on this thread.
fn live() -> isize {
    LIVE.with(Cell::get)
}

const LEVEL: &[u8] = include_bytes!("../assets/level.bin");

#[test]
fn spawns_and_refused_spawns_leak_nothing() {
    let blob = AlignedBlob::from_bytes(LEVEL);
    let level = World::new()
        .verify_level(&blob, level_registry(), &VerifyOptions::default())
        .unwrap();
    let n = level.num_entities() as usize;
    // Warm up lazily built tables (the model's, the registry's) so they are not counted.
    drop(World::new().spawn_level(&level).unwrap());

    let before = live();
    {
        let mut world = World::new();
        let mut tm = TransformManager::new();
        for _ in 0..5 {
            let e = world.spawn_level_with(&level, &mut tm).unwrap();
            assert_eq!(e.len(), n);
        }
        assert_eq!(world.len(), 5 * n);
        world.check_invariants().unwrap();
        assert!(
            live() >= before + 5 * 100,
            "the 100 notes of each copy are owned by the world"
        );
    }
    assert_eq!(
        live(),
        before,
        "a dropped world frees everything it spawned"
    );

    // A transform conflict: the ids are issued, then the hierarchy is refused.
    let before = live();
    {
        let mut world = World::new();
        let mut tm = TransformManager::new();
        tm.create(Entity::new(600, 0), glam::Mat4::IDENTITY)
            .unwrap();
        let err = world.spawn_level_with(&level, &mut tm).unwrap_err();
        assert!(err.to_string().contains("hierarchy"), "{err}");
        assert!(world.is_empty());
        assert_eq!(tm.len(), 1);
        world.check_invariants().unwrap();
    }
    assert_eq!(live(), before, "a refused spawn leaves nothing behind");

    // A structure-of-arrays manager refuses its instances (an issued id already has a point
    // mass) after the ids were issued and the transforms checked.
    let reg = level_registry()
        .with([Registration::pod::<PointMass>("point_mass").kept_outside()])
        .unwrap();
    let entities: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"{{"parent": {}, "components": {{"position": [0, 0, 0], "name": "n{i}",
                    "point_mass": {{"mass": {i}, "position": [0, 0, 0], "velocity": [0, 0, 0],
                                   "acceleration": [0, 0, 0]}}}}}}"#,
                if i == 0 {
                    "null".to_string()
                } else {
                    (i - 1).to_string()
                }
            )
        })
        .collect();
    let json = format!(r#"{{"entities": [{}]}}"#, entities.join(","));
    let masses_blob = EntityCompiler::new(&reg).compile_str(&json).unwrap();
    let masses_level = World::new()
        .verify_level(&masses_blob[..], &reg, &VerifyOptions::default())
        .unwrap();
    let before = live();
    {
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let mut masses = PointMassManager::new();
        masses
            .create(Entity::new(5, 0), PointMass::default())
            .unwrap();
        let err = world
            .spawn_level_with_all(&masses_level, &mut [&mut tm, &mut masses])
            .unwrap_err();
        assert!(matches!(err, LevelError::Outside { .. }), "{err}");
        assert!(world.is_empty() && tm.is_empty());
        assert_eq!(masses.len(), 1);
        world.check_invariants().unwrap();
    }
    assert_eq!(live(), before, "a refused spawn leaves nothing behind");

    // A level verified for other signatures.
    let other = verify(
        &blob,
        level_registry(),
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    let before = live();
    {
        let mut world = World::new();
        assert!(world.spawn_level(&other).is_err());
        assert!(world.is_empty());
    }
    assert_eq!(live(), before);
}
