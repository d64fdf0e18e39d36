//! GGRS's own determinism check on the game: a `SyncTestSession` with check distance 7 rolls
//! every frame back 7 frames and runs them again, comparing each frame's checksum with the
//! first run's (a mismatch is an error). 1,000 frames, on a rayon pool of 1 thread and of 2;
//! both end in the same state.

use ggrs::SessionBuilder;
use rollback::{input, new_world, run_frame, GameConfig};

/// Runs 1,000 frames on `threads` threads; returns the last frame's checksum and the score.
fn sync_test(threads: usize) -> (u64, [u32; 2]) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut session = SessionBuilder::<GameConfig>::new()
            .with_num_players(2)
            .unwrap()
            .with_check_distance(7)
            .with_max_prediction_window(8)
            .start_synctest_session()
            .unwrap();
        let mut world = new_world();
        let mut last = 0;
        for frame in 0..1_000 {
            for player in 0..2 {
                session
                    .add_local_input(player, input(player, frame))
                    .unwrap();
            }
            let requests = session.advance_frame().expect("no checksum mismatch");
            let saved = sigecs_ggrs::handle_requests(&mut world, requests, |w, inputs| {
                run_frame(w, [inputs[0].0, inputs[1].0])
            })
            .unwrap();
            if let Some(&(_, c)) = saved.last() {
                last = c;
            }
        }
        assert_eq!(world.check_invariants(), Ok(()));
        (last, world.resource::<rollback::components::Scores>().0)
    })
}

#[test]
fn sync_test_passes_on_one_and_two_threads_alike() {
    let one = sync_test(1);
    let two = sync_test(2);
    assert_eq!(one, two, "the same state on 1 and 2 threads");
    assert!(
        one.1.iter().sum::<u32>() > 0,
        "the game scored hits: {:?}",
        one.1
    );
}
