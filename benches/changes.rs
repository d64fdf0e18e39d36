//! Change filters: `changed_filter` runs a system over 1,000,000 rows of which 1% of the
//! chunks changed since its last run, with the filter (`watch`, `#[system(changed(Pos))]`) and
//! without (`watch_all`, the same body over every row). Each iteration writes one value in
//! every hundredth chunk (`get_mut`), then runs the system. Target: the filtered system at
//! least 20× faster.
//!
//! `python3 benches/ratios.py changed_filter` prints the medians and ratios after a run.

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, criterion_main, Criterion};
use sigecs::__private::CHUNK;
use sigecs::Entity;
use sigecs_fixtures::changes::{Pos, Seen, SeenAll, Still, World};
use std::hint::black_box;

const N: usize = 1_000_000;

fn world() -> (World, Vec<Entity>) {
    let mut w = World::new();
    let es = w.spawn_batch((0..N as i64).map(|i| Still { pos: Pos(i) }));
    // Both systems have run once: everything is old.
    w.run_watch();
    w.run_watch_all();
    w.resource_mut::<Seen>().entities.clear();
    w.resource_mut::<SeenAll>().entities.clear();
    (w, es)
}

/// Writes one value in every hundredth chunk.
fn touch(w: &mut World, es: &[Entity]) {
    for e in es.iter().step_by(100 * CHUNK) {
        w.get_mut::<Pos>(*e).unwrap().0 += 1;
    }
}

fn changed_filter(c: &mut Criterion) {
    let mut group = c.benchmark_group("changed_filter");
    let (mut w, es) = world();
    group.bench_function("filtered_1_percent", |b| {
        b.iter(|| {
            touch(&mut w, &es);
            black_box(&mut w).run_watch();
            w.resource_mut::<Seen>().entities.clear();
        })
    });
    // What the filter visits: 1% of the rows.
    touch(&mut w, &es);
    w.run_watch();
    let visited = w.resource::<Seen>().entities.len();
    assert_eq!(visited, N.div_ceil(100 * CHUNK) * CHUNK);
    w.resource_mut::<Seen>().entities.clear();
    group.bench_function("unfiltered", |b| {
        b.iter(|| {
            touch(&mut w, &es);
            black_box(&mut w).run_watch_all();
            w.resource_mut::<SeenAll>().entities.clear();
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = changed_filter
}
criterion_main!(benches);
