//! What rollback costs the example game a frame: GGRS's `SyncTestSession` with check distance 7
//! (every frame is loaded back 7 frames and run again: 8 runs of the frame, 8 saves with
//! checksums and a load per frame) beside the same scripted frames without rollback.
//!
//! `cargo bench -p rollback --bench synctest`; `python3 benches/ratios.py rollback_synctest
//! plain` (from the workspace root) prints the ratio (about 8× is the expected cost).

#![allow(missing_docs)] // criterion's macros and bench-local items need no API docs

use criterion::{criterion_group, criterion_main, Criterion};
use ggrs::SessionBuilder;
use rollback::{input, new_world, run_frame, GameConfig};
use std::hint::black_box;

fn synctest(c: &mut Criterion) {
    let mut g = c.benchmark_group("rollback_synctest");
    g.sample_size(20);
    let mut plain = new_world();
    let mut frame = 0;
    g.bench_function("plain", |b| {
        b.iter(|| {
            run_frame(black_box(&mut plain), [input(0, frame), input(1, frame)]);
            frame += 1;
        })
    });
    let mut world = new_world();
    let mut session = SessionBuilder::<GameConfig>::new()
        .with_num_players(2)
        .unwrap()
        .with_check_distance(7)
        .with_max_prediction_window(8)
        .start_synctest_session()
        .unwrap();
    let mut frame = 0;
    g.bench_function("sync_test_distance_7", |b| {
        b.iter(|| {
            for player in 0..2 {
                session
                    .add_local_input(player, input(player, frame))
                    .unwrap();
            }
            let requests = session.advance_frame().expect("no checksum mismatch");
            sigecs_ggrs::handle_requests(&mut world, requests, |w, inputs| {
                run_frame(w, [inputs[0].0, inputs[1].0])
            })
            .unwrap();
            frame += 1;
        })
    });
    g.finish();
}

criterion_group!(benches, synctest);
criterion_main!(benches);
