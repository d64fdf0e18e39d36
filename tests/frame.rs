//! Frame-level systems, events and deterministic worlds, in the `frame` fixture: a clock that
//! runs once per frame, deaths sent as events through `Commands` and read by a system declared
//! before the sender (a frame later) and one declared after it (the same frame), and spawns
//! whose ids are the same on any thread count, under `run_all` and `run_schedule`.

use sigecs::rayon::ThreadPoolBuilder;
use sigecs::Entity;
use sigecs_fixtures::frame::*;

/// A world of `n` units with hp 1..=`top` in turn.
fn units(n: usize, top: usize) -> World {
    let mut w = World::new();
    w.spawn_batch((0..n).map(|i| Unit {
        hp: Hp(1 + (i % top) as i32),
        child: Child(None),
    }));
    w
}

/// A world of `n` units with hp 1..=9 in turn.
fn world(n: usize) -> World {
    units(n, 9)
}

/// Runs `frames` frames of `w` on a pool of `threads`, staged or not.
fn run(w: &mut World, frames: u32, threads: usize, staged: bool) {
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        for _ in 0..frames {
            let r = if staged {
                w.run_schedule()
            } else {
                w.run_all()
            };
            r.unwrap();
        }
    });
}

/// One entity as `snapshot` sees it: (id, hp, child, born).
type Row = (Entity, Option<i32>, Option<Option<Entity>>, Option<u32>);

/// Everything observable: each live entity with its components, in id order, and the log.
fn snapshot(w: &World) -> (Vec<Row>, String) {
    let mut rows: Vec<_> = w
        .entities()
        .map(|e| {
            (
                e,
                w.get::<Hp>(e).map(|h| h.0),
                w.get::<Child>(e).map(|c| c.0),
                w.get::<Born>(e).map(|b| b.0),
            )
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    (rows, format!("{:?}", w.resource::<Log>()))
}

#[test]
fn a_frame_level_system_runs_once_per_frame_alone_in_its_stage() {
    let mut w = world(10);
    run(&mut w, 4, 1, true);
    assert_eq!(w.resource::<Clock>().frame, 4);
    // Run one by one, it runs once per call too.
    w.run_clock().unwrap();
    assert_eq!(w.resource::<Clock>().frame, 5);
    let schedule = World::schedule();
    let stage = schedule
        .stages
        .iter()
        .find(|s| s.systems.contains(&"clock"))
        .unwrap();
    assert_eq!(stage.systems, ["clock"]);
    assert!(stage.frame && stage.stores.is_empty());
    assert!(schedule.to_string().contains("clock (once per run)"));
    // `clock` is ordered after `early`, and before the rest as declared.
    let order: Vec<&str> = schedule.systems.iter().map(|s| s.0).collect();
    assert_eq!(order, ["early", "clock", "damage", "late", "fade"]);
    assert!(
        schedule.systems[1].1.ends_with("src/frame.rs:66:8"),
        "{:?}",
        schedule.systems[1]
    );
}

#[test]
fn each_reader_sees_each_event_once_the_same_frame_or_the_next() {
    let mut w = world(18);
    run(&mut w, 12, 1, false);
    let log = w.resource::<Log>();
    // Two units of each hp 1..=9 die at frame hp (their hp reaches 0 then).
    let mut deaths: Vec<(u32, Died)> = log.late.clone();
    assert_eq!(deaths.len(), 18);
    for &(read, d) in &deaths {
        assert_eq!(read, d.frame, "read by `late` in the frame it was sent");
    }
    // `early` runs before the sender: it reads each death one frame later, the last frame's
    // deaths not yet.
    assert!(log.early.iter().all(|&(read, d)| read == d.frame + 1));
    let early: Vec<Died> = log.early.iter().map(|e| e.1).collect();
    deaths.retain(|(_, d)| d.frame < 12);
    assert_eq!(early, deaths.iter().map(|e| e.1).collect::<Vec<_>>());
    // Every tick once, in the frame it was sent (the clock runs before `late`).
    assert_eq!(log.ticks, (1..=12).map(|f| (f, f)).collect::<Vec<_>>());
    // The queue keeps the current and the previous frame only.
    assert!(w.events::<Tick>().iter().map(|t| t.0).eq([11, 12]));
}

#[test]
fn events_sent_from_outside_are_read_and_kept_two_frames() {
    let mut w = world(0);
    let ghost = Entity::new(99, 0);
    w.send_event(Died {
        entity: ghost,
        frame: 0,
    });
    run(&mut w, 1, 1, true);
    let log = w.resource::<Log>();
    assert_eq!(
        log.early,
        [(
            1,
            Died {
                entity: ghost,
                frame: 0
            }
        )]
    );
    assert_eq!(log.late, log.early, "both readers see it, once each");
    run(&mut w, 1, 1, true);
    let log = w.resource::<Log>();
    assert_eq!((log.early.len(), log.late.len()), (1, 1));
    // After two frames it is gone.
    assert!(w.events::<Died>().is_empty());
}

/// A world that spawns through `Commands` ends bit-identical, ids included, under `run_all`
/// and `run_schedule` on 1, 2 and 4 threads, with every pass asked to split into jobs of a
/// row: a deterministic world (the default) runs the spawning pass on one thread anyway.
#[test]
fn spawned_ids_do_not_depend_on_the_thread_count() {
    let n = if cfg!(miri) { 60 } else { 100_000 };
    // Most units outlive the nine frames, keeping the ids of the sparks they spawned.
    let mut reference = units(n, 40);
    run(&mut reference, 9, 1, false);
    let expected = snapshot(&reference);
    let sparks = expected.0.iter().filter(|r| r.3.is_some()).count();
    let linked = expected
        .0
        .iter()
        .filter(|r| matches!(r.2, Some(Some(_))))
        .count();
    assert!(
        sparks > n / 10 && linked > n / 10,
        "the test spawns many: {sparks}, {linked}"
    );
    for (threads, staged) in [(1, true), (2, false), (2, true), (4, true)] {
        let mut w = units(n, 40);
        w.set_min_chunk(Some(1));
        run(&mut w, 9, threads, staged);
        assert!(w.is_deterministic());
        assert!(
            snapshot(&w) == expected,
            "{threads} threads, staged {staged}: the world differs"
        );
    }
}

/// A pass whose systems take `Commands` but never spawn (`fade` only despawns) splits across
/// threads in a deterministic world, and its despawns still apply in row order; a pass that
/// may spawn (`damage`'s) is marked to stay on one thread.
#[test]
fn a_pass_that_only_despawns_splits_in_a_deterministic_world() {
    let n: usize = if cfg!(miri) { 64 } else { 4096 };
    let mut w = World::new();
    let embers = w.spawn_batch((0..n).map(|i| Ember {
        glow: Glow(1 + (i % 3) as u32),
        worker: Worker(usize::MAX),
    }));
    w.set_min_chunk(Some(8));
    assert!(w.is_deterministic());
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| w.run_fade()).unwrap();
    let workers: std::collections::BTreeSet<usize> = w.query::<&Worker>().map(|k| k.0).collect();
    assert_eq!(workers.len(), 2, "rows ran on threads {workers:?}");
    for (i, &e) in embers.iter().enumerate() {
        let glow = w.get::<Glow>(e).map(|g| g.0);
        let expected = (i % 3 != 0).then_some(i as u32 % 3);
        assert_eq!(glow, expected, "ember {i}");
    }
    assert_eq!(w.len(), n - n.div_ceil(3));
    assert_eq!(w.check_invariants(), Ok(()));
    let stage_of = |name: &str| {
        *World::schedule()
            .stages
            .iter()
            .find(|s| s.systems.contains(&name))
            .unwrap()
    };
    assert!(stage_of("damage").spawns && !stage_of("fade").spawns);
}
