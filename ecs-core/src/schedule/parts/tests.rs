//! Unit tests of the runner, the cutter, the cost model and the timer.

use super::cost::*;
use super::cutter::*;
use super::*;

#[test]
fn job_rows_follow_the_size_rule() {
    assert_eq!(job_rows(100, 64, 2), None, "under 2 × min_chunk: inline");
    assert_eq!(job_rows(1_000_000, 1, 1), None, "one thread: inline");
    assert_eq!(job_rows(100_000, 1000, 2), Some(100_000usize.div_ceil(8)));
    assert_eq!(
        job_rows(10_000, 4000, 2),
        Some(5000),
        "one equal job per thread, never below min_chunk"
    );
    assert_eq!(
        job_rows(60_000, 16_384, 2),
        Some(30_000),
        "balanced: a multiple of the thread count"
    );
    assert_eq!(
        job_rows(40_000, 16_384, 8),
        Some(20_000),
        "fewer jobs than threads rather than jobs under min_chunk"
    );
    for (total, min_chunk, threads) in [(100_000, 7, 3), (50_000, 16_384, 2), (999, 10, 4)] {
        let rows = job_rows(total, min_chunk, threads).unwrap();
        assert!(rows >= min_chunk, "{total} {min_chunk} {threads}: {rows}");
    }
    assert_eq!(job_rows(10, 0, 2), Some(2), "min_chunk 0 acts as 1");
    assert_eq!(
        job_rows(usize::MAX, usize::MAX, 2),
        None,
        "usize::MAX never splits"
    );
    assert_eq!(job_rows(usize::MAX - 1, usize::MAX / 2 + 1, 2), None);
    assert!(
        job_rows(usize::MAX - 1, usize::MAX / 2, 2).is_some(),
        "exactly 2 × min_chunk splits"
    );
}

#[test]
fn chunk_len_never_overflows() {
    assert_eq!(chunk_len(10, usize::MAX), 10);
    assert_eq!(chunk_len(0, usize::MAX), 1);
}

#[test]
fn passes_split_only_when_their_measured_work_is_large() {
    let mut cost = PassCost::new();
    assert!(
        !cost.worth_splitting(1_000_000),
        "unknown cost: run inline and measure"
    );
    cost.record_inline(std::time::Duration::from_micros(10), 40_000);
    assert_eq!(cost.ps_per_row(), None, "one measurement does not decide");
    assert!(!cost.worth_splitting(1_000_000));
    cost.record_inline(std::time::Duration::from_micros(11), 40_000);
    assert_eq!(cost.ps_per_row(), Some(250), "the cheaper of the two");
    assert!(!cost.worth_splitting(40_000), "10 µs of work: inline");
    assert!(cost.worth_splitting(80_000), "20 µs: split");
    cost.record_inline(std::time::Duration::ZERO, 0);
    assert_eq!(cost.ps_per_row(), Some(1), "never back to unknown");
}

#[test]
fn jobs_cut_and_group_parts_in_order() {
    let mut a: Vec<u32> = (0..10).collect();
    let mut b: Vec<u32> = (10..13).collect();
    let mut c: Vec<u32> = (13..30).collect();
    let parts = [&mut a[..], &mut b[..], &mut c[..]];
    let js = jobs(parts, 8);
    let flat: Vec<Vec<u32>> = js
        .iter()
        .map(|j| j.iter().flat_map(|p| p.iter().copied()).collect())
        .collect();
    assert_eq!(flat.len(), 4);
    assert_eq!(flat[0], (0..8).collect::<Vec<_>>());
    assert_eq!(
        flat[1],
        (8..16).collect::<Vec<_>>(),
        "small parts group together"
    );
    assert_eq!(flat[3], (24..30).collect::<Vec<_>>());
}

#[test]
fn pieces_are_handed_out_once_by_job() {
    let words: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
    let pieces = Pieces::new(words, JobRanges::new(vec![2, 2, 5], 5));
    assert_eq!(pieces.jobs.len(), 3);
    let mut got = Vec::new();
    pieces.take(2, &mut |w| got.push(w));
    assert_eq!(got, ["c", "d", "e"]);
    pieces.take(2, &mut |w| got.push(w));
    assert_eq!(got.len(), 3, "a job is taken once");
    pieces.take(1, &mut |w| got.push(w));
    assert_eq!(got.len(), 3, "an empty job holds nothing");
    pieces.take(9, &mut |w| got.push(w));
    assert_eq!(got.len(), 3, "no job 9");
    pieces.take(0, &mut |w| got.push(w));
    assert_eq!(got, ["c", "d", "e", "a", "b"]);
    // Dropping `pieces` frees the buffer and drops no piece again (Miri checks both).
}

#[test]
fn pieces_left_untaken_are_leaked_not_dropped_twice() {
    let words = vec![String::from("x"), String::from("y")];
    let pieces = Pieces::new(words, JobRanges::new(vec![1, 2], 2));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pieces.take(0, &mut |_| panic!("a body panics"));
    }));
    assert!(result.is_err());
    let mut rest = Vec::new();
    pieces.take(0, &mut |w| rest.push(w));
    pieces.take(1, &mut |w| rest.push(w));
    assert_eq!(rest, ["y"], "the panicking job is not run again");
}

#[test]
#[should_panic(expected = "job ends ascend within the pieces")]
fn pieces_refuse_job_ends_past_the_buffer() {
    let _ = JobRanges::new(vec![1, 3], 2);
}

#[test]
#[should_panic(expected = "jobs within the pieces")]
fn pieces_refuse_jobs_made_for_more_pieces() {
    let _ = Pieces::new(vec![1u8, 2], JobRanges::new(vec![3], 3));
}

#[test]
#[should_panic(expected = "job ends ascend within the pieces")]
fn pieces_refuse_descending_job_ends() {
    let _ = JobRanges::new(vec![2, 1], 2);
}

/// A cost with two inline runs of `elapsed` over `rows` rows recorded.
pub(super) fn measured(elapsed: std::time::Duration, rows: usize) -> PassCost {
    let mut cost = PassCost::new();
    cost.record_inline(elapsed, rows);
    cost.record_inline(elapsed, rows);
    cost
}

#[test]
fn run_parts_visits_every_row_once_on_any_pool() {
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let manager = EntityManager::new();
        let mut a: Vec<u64> = vec![1; 5000];
        let mut b: Vec<u64> = vec![1; 30];
        // A cost that makes the pass split whenever the pool allows.
        let mut cost = measured(std::time::Duration::from_secs(1), 1);
        pool.install(|| {
            let pending = run_parts(
                [&mut a[..], &mut b[..]],
                None,
                16,
                &mut cost,
                &manager,
                &|p, _| {
                    for x in p {
                        *x += 1;
                    }
                },
            );
            assert!(pending.0.iter().all(Vec::is_empty));
        });
        assert!(a.iter().chain(&b).all(|&x| x == 2), "{threads} threads");
    }
}
