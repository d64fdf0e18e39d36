//! What a recorded frame would take on more cores than this machine has, by list scheduling,
//! under two schedules: global stages (as `run_schedule` runs today: each stage's pass over all
//! its stores, split across the cores, then its commands, then the next stage) and a task graph
//! by store (a stage's work on store S waits only for earlier work on S; work that may touch
//! anything waits for, and is waited for by, everything).
//!
//! A job of a parallel stage splits into equal chunks of at least `MIN_JOB_WORK_NS` (the
//! runner's least work of one job), at most `CHUNKS_PER_THREAD` per core; commands, respawns
//! and the work of a stage that runs on one thread run whole. Under global stages the job that
//! splits is the stage's pass; under the task graph it is each store's share of it. (The
//! runner itself splits a pass of at least 20 µs into at least one job per thread however
//! small, which costs nothing here but a hand-off there: the same floor for both orders keeps
//! either from getting free parallelism. On 2 cores both rules cut this job's passes alike.)
//! threads cost nothing here, and no two jobs slow each other down (memory bandwidth): the
//! check against real runs says how far that holds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The least work of one chunk of a split job (the runner's, `schedule/parts.rs`).
const MIN_JOB_WORK_NS: u64 = 5_000;
/// Chunks per core of a split job, at most.
const CHUNKS_PER_THREAD: u64 = 4;

/// A stage of the schedule, as the simulation needs it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StageInfo {
    /// Its pass may split across cores (it writes no resource, may not spawn in a
    /// deterministic world, and visits stores). A stage that may not runs whole, and under
    /// the task graph waits for all earlier work and holds up all later work: it may touch
    /// any resource (or, for a frame-level system, anything).
    pub(crate) parallel: bool,
}

/// What a job of a recorded frame is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A stage's pass over one store (its name).
    Store(String),
    /// What a stage's pass spends outside its stores' loops (collecting its commands,
    /// a frame-level system's or a sparse walk's whole work).
    Rest,
    /// Applying a stage's commands: structural changes to any store.
    Commands,
    /// The frame loop's respawns after the last stage: structural changes too.
    Respawn,
}

/// One job of a recorded frame: its stage (`None` for the respawns), kind and cost.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Job {
    pub(crate) stage: Option<usize>,
    pub(crate) kind: Kind,
    pub(crate) ns: u64,
}

/// How a frame's jobs are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Every stage waits for the whole previous stage.
    Stages,
    /// A stage's work on store S waits only for earlier work on S.
    Graph,
}

/// A task of the list schedule: its work, the chunks it splits into, and the tasks it waits
/// for (earlier ones).
#[derive(Clone, Debug, PartialEq)]
struct Task {
    ns: u64,
    chunks: u64,
    after: Vec<usize>,
}

/// Chunks of `ns` of work on `cores` cores (see the module docs).
fn chunks(ns: u64, cores: usize, splits: bool) -> u64 {
    let cores = cores.max(1) as u64;
    if !splits || cores == 1 {
        return 1;
    }
    (ns / MIN_JOB_WORK_NS).clamp(1, CHUNKS_PER_THREAD * cores)
}

/// The tasks of one frame's `jobs` (in the order they ran) under `order` on `cores` cores.
fn tasks(stages: &[StageInfo], jobs: &[Job], order: Order, cores: usize) -> Vec<Task> {
    let parallel = |stage: Option<usize>| {
        stage
            .and_then(|k| stages.get(k))
            .is_some_and(|s| s.parallel)
    };
    let mut tasks: Vec<Task> = Vec::new();
    match order {
        Order::Stages => {
            // A chain: each stage's pass (its stores' work together, split as one), its rest,
            // its commands; the respawns.
            let mut i = 0;
            while i < jobs.len() {
                let job = &jobs[i];
                let (ns, next) = if matches!(job.kind, Kind::Store(_)) {
                    let end = jobs[i..]
                        .iter()
                        .position(|j| j.stage != job.stage || !matches!(j.kind, Kind::Store(_)))
                        .map_or(jobs.len(), |n| i + n);
                    (jobs[i..end].iter().map(|j| j.ns).sum(), end)
                } else {
                    (job.ns, i + 1)
                };
                let splits = matches!(job.kind, Kind::Store(_)) && parallel(job.stage);
                let after = tasks.len().checked_sub(1).into_iter().collect();
                tasks.push(Task {
                    ns,
                    chunks: chunks(ns, cores, splits),
                    after,
                });
                i = next;
            }
        }
        Order::Graph => {
            // Per store, the last task on it; the last task everything waits for; the tasks
            // since it (what the next such task waits for).
            let mut last_on: Vec<(&str, usize)> = Vec::new();
            let mut barrier: Option<usize> = None;
            let mut since: Vec<usize> = Vec::new();
            let mut stage_of: Vec<Option<usize>> = Vec::new();
            for job in jobs {
                let index = tasks.len();
                let task = match &job.kind {
                    Kind::Store(store) if parallel(job.stage) => {
                        let on = last_on.iter_mut().find(|(s, _)| s == store);
                        let mut after: Vec<usize> = barrier.into_iter().collect();
                        match on {
                            Some((_, last)) => {
                                after.push(*last);
                                *last = index;
                            }
                            None => last_on.push((store, index)),
                        }
                        since.push(index);
                        Task {
                            ns: job.ns,
                            chunks: chunks(job.ns, cores, true),
                            after,
                        }
                    }
                    // The rest of a parallel stage's pass ends the pass: after its stores'
                    // work, and nothing but a barrier waits for it.
                    Kind::Rest if parallel(job.stage) => {
                        let after = since
                            .iter()
                            .copied()
                            .filter(|&t| stage_of[t] == job.stage)
                            .collect();
                        since.push(index);
                        Task {
                            ns: job.ns,
                            chunks: 1,
                            after,
                        }
                    }
                    _ => {
                        let mut after: Vec<usize> = std::mem::take(&mut since);
                        after.extend(barrier);
                        barrier = Some(index);
                        last_on.clear();
                        Task {
                            ns: job.ns,
                            chunks: 1,
                            after,
                        }
                    }
                };
                tasks.push(task);
                stage_of.push(job.stage);
            }
        }
    }
    tasks
}

/// The time from the first task's start to the last one's end when `cores` cores take, each
/// time one is free, a chunk whose task's predecessors have all ended: the one with the
/// longest chain of work after it (its own chunk included), the first task's on a tie.
/// Taking them in task order instead would run a long store's chunks before the short work
/// that later stages wait for, and leave cores idle at the end.
fn makespan(tasks: &[Task], cores: usize) -> u64 {
    let mut waiting: Vec<usize> = tasks.iter().map(|t| t.after.len()).collect();
    let mut followers: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, task) in tasks.iter().enumerate() {
        for &before in &task.after {
            followers[before].push(i);
        }
    }
    // Each task's longest chain of chunks to the end (tasks come after what they wait for).
    let chunk_ns = |t: &Task| t.ns.div_ceil(t.chunks.max(1));
    let mut chain = vec![0u64; tasks.len()];
    for i in (0..tasks.len()).rev() {
        let after = followers[i].iter().map(|&f| chain[f]).max().unwrap_or(0);
        chain[i] = chunk_ns(&tasks[i]) + after;
    }
    // Ready chunks, longest chain first; chunks still running of each task; running chunks
    // by end time.
    let mut ready: BinaryHeap<(u64, Reverse<(usize, u64)>)> = BinaryHeap::new();
    let mut unfinished: Vec<u64> = tasks.iter().map(|t| t.chunks.max(1)).collect();
    let mut running: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let release = |ready: &mut BinaryHeap<(u64, Reverse<(usize, u64)>)>, i: usize| {
        let n = tasks[i].chunks.max(1);
        for c in 0..n {
            ready.push((chain[i], Reverse((i, c))));
        }
    };
    for (i, _) in waiting.iter().enumerate().filter(|(_, &w)| w == 0) {
        release(&mut ready, i);
    }
    let (mut now, mut end) = (0u64, 0u64);
    let cores = cores.max(1);
    loop {
        while running.len() < cores {
            let Some((_, Reverse((i, c)))) = ready.pop() else {
                break;
            };
            // Equal chunks, the remainder spread over the first ones.
            let n = tasks[i].chunks.max(1);
            let ns = tasks[i].ns / n + u64::from(c < tasks[i].ns % n);
            running.push(Reverse((now + ns, i)));
        }
        let Some(Reverse((at, i))) = running.pop() else {
            break;
        };
        now = at;
        end = end.max(at);
        unfinished[i] -= 1;
        if unfinished[i] == 0 {
            for &f in &followers[i] {
                waiting[f] -= 1;
                if waiting[f] == 0 {
                    release(&mut ready, f);
                }
            }
        }
    }
    end
}

/// The mean time of a frame of `frames` (each the jobs of one recorded frame, in the order
/// they ran) under `order` on `cores` cores, in nanoseconds.
pub(crate) fn frame_ns(
    stages: &[StageInfo],
    frames: &[Vec<Job>],
    order: Order,
    cores: usize,
) -> f64 {
    let total: u64 = frames
        .iter()
        .map(|jobs| makespan(&tasks(stages, jobs, order, cores), cores))
        .sum();
    total as f64 / frames.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(stage: usize, name: &str, ns: u64) -> Job {
        Job {
            stage: Some(stage),
            kind: Kind::Store(name.into()),
            ns,
        }
    }

    fn other(stage: Option<usize>, kind: Kind, ns: u64) -> Job {
        Job { stage, kind, ns }
    }

    const PARALLEL: StageInfo = StageInfo { parallel: true };
    const ONE_THREAD: StageInfo = StageInfo { parallel: false };

    /// A long pass on one store beside short ones on others, a second stage on the short
    /// ones only, then commands and respawns: what a task graph overlaps.
    fn frame() -> Vec<Job> {
        vec![
            store(0, "Big", 100_000),
            store(0, "Small", 10_000),
            other(Some(0), Kind::Rest, 1_000),
            store(1, "Small", 10_000),
            store(1, "Other", 10_000),
            other(Some(1), Kind::Rest, 1_000),
            other(Some(1), Kind::Commands, 5_000),
            other(None, Kind::Respawn, 3_000),
        ]
    }

    #[test]
    fn one_core_takes_the_sum_of_the_work() {
        let stages = [PARALLEL, PARALLEL];
        let frames = [frame(), frame()];
        for order in [Order::Stages, Order::Graph] {
            assert_eq!(frame_ns(&stages, &frames, order, 1), 140_000.0, "{order:?}");
        }
    }

    #[test]
    fn stages_wait_for_the_whole_previous_stage() {
        let stages = [PARALLEL, PARALLEL];
        let jobs = frame();
        // Stage 0: 110 µs in 8 chunks of 13.75 µs on 2 cores = 55 µs; its rest 1 µs; stage 1:
        // 20 µs in 4 chunks = 10 µs; rest, commands and respawns 9 µs.
        assert_eq!(
            makespan(&tasks(&stages, &jobs, Order::Stages, 2), 2),
            75_000
        );
        // On 64 cores the stages are 22 and 4 chunks of 5 µs.
        let wide = makespan(&tasks(&stages, &jobs, Order::Stages, 64), 64);
        assert_eq!(wide, 5_000 + 1_000 + 5_000 + 1_000 + 5_000 + 3_000);
    }

    #[test]
    fn the_graph_overlaps_later_stages_with_a_long_store() {
        let stages = [PARALLEL, PARALLEL];
        let jobs = frame();
        let graph = tasks(&stages, &jobs, Order::Graph, 2);
        // Small in stage 1 waits for Small in stage 0 only; Other waits for nothing; the
        // commands wait for everything.
        assert_eq!(graph[3].after, [1]);
        assert!(graph[4].after.is_empty());
        assert_eq!(graph[5].after, [3, 4]);
        assert_eq!(graph[6].after, [0, 1, 2, 3, 4, 5]);
        assert_eq!(graph[7].after, [6]);
        // With cores to spare, the graph's frame is its longest chain: Small's two stages (5
        // µs each in two chunks), the rest of stage 1, commands and respawns; global stages
        // wait for stage 0's rest besides.
        let wide = makespan(&tasks(&stages, &jobs, Order::Graph, 64), 64);
        assert_eq!(wide, 5_000 + 5_000 + 1_000 + 5_000 + 3_000);
        assert!(wide < makespan(&tasks(&stages, &jobs, Order::Stages, 64), 64));
    }

    #[test]
    fn the_graph_runs_a_store_of_a_later_stage_beside_an_earlier_pass() {
        let stages = [PARALLEL, PARALLEL];
        let jobs = vec![
            store(0, "Big", 100_000),
            other(Some(0), Kind::Rest, 10_000),
            store(1, "Small", 15_000),
            other(Some(1), Kind::Rest, 0),
        ];
        // Stages: Big in 8 chunks on 2 cores (50 µs), its rest (10 µs), then Small in 3
        // chunks of 5 µs (10 µs).
        assert_eq!(
            makespan(&tasks(&stages, &jobs, Order::Stages, 2), 2),
            70_000
        );
        // Graph: Small waits for nothing, so two of its chunks run beside Big's rest.
        assert_eq!(makespan(&tasks(&stages, &jobs, Order::Graph, 2), 2), 65_000);
    }

    #[test]
    fn a_one_thread_stage_waits_for_everything_and_holds_up_everything() {
        let stages = [PARALLEL, ONE_THREAD, PARALLEL];
        let jobs = vec![
            store(0, "A", 50_000),
            store(1, "B", 1_000),
            store(2, "C", 50_000),
        ];
        let graph = tasks(&stages, &jobs, Order::Graph, 4);
        assert_eq!(graph[1].after, [0]);
        assert_eq!(graph[2].after, [1]);
        assert_eq!(graph[1].chunks, 1, "a one-thread stage does not split");
        assert_eq!(graph[2].chunks, 10, "50 µs: 10 chunks of 5 µs");
        assert_eq!(
            makespan(&graph, 4),
            makespan(&tasks(&stages, &jobs, Order::Stages, 4), 4)
        );
    }

    #[test]
    fn chunks_follow_the_runners_rule() {
        assert_eq!(chunks(9_999, 8, true), 1, "under two chunks' work: whole");
        assert_eq!(chunks(1_000_000, 1, true), 1, "one core");
        assert_eq!(chunks(1_000_000, 8, false), 1, "a one-thread stage");
        assert_eq!(chunks(20_000, 2, true), 4, "4 chunks of 5 µs");
        assert_eq!(chunks(20_000, 8, true), 4, "none under 5 µs");
        assert_eq!(chunks(1_000_000, 2, true), 8, "at most 4 per core");
    }

    /// Random frames: list scheduling is never faster than the work spread evenly or than the
    /// longest chain, never slower than one core, and keeps every job's work.
    #[test]
    fn random_frames_stay_within_the_bounds() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let names = ["A", "B", "C", "D"];
        for _ in 0..300 {
            let stages: Vec<StageInfo> = (0..1 + next(5))
                .map(|_| StageInfo {
                    parallel: next(4) != 0,
                })
                .collect();
            let mut jobs = Vec::new();
            for k in 0..stages.len() {
                for name in names {
                    if next(2) == 0 {
                        jobs.push(store(k, name, next(200_000)));
                    }
                }
                jobs.push(other(Some(k), Kind::Rest, next(2_000)));
                if next(3) == 0 {
                    jobs.push(other(Some(k), Kind::Commands, next(10_000)));
                }
            }
            jobs.push(other(None, Kind::Respawn, next(10_000)));
            let work: u64 = jobs.iter().map(|j| j.ns).sum();
            for order in [Order::Stages, Order::Graph] {
                for cores in [1, 2, 3, 8, 64] {
                    let tasks = tasks(&stages, &jobs, order, cores);
                    assert_eq!(tasks.iter().map(|t| t.ns).sum::<u64>(), work);
                    for (i, t) in tasks.iter().enumerate() {
                        assert!(t.after.iter().all(|&b| b < i), "only earlier tasks");
                    }
                    let span = makespan(&tasks, cores);
                    assert!(span <= work, "{span} > {work}");
                    assert!(span >= work / cores as u64, "{span} < {work}/{cores}");
                    // The longest chain, each task split as far as it may.
                    let mut chain = vec![0u64; tasks.len()];
                    for (i, t) in tasks.iter().enumerate() {
                        let before = t.after.iter().map(|&b| chain[b]).max().unwrap_or(0);
                        chain[i] = before + t.ns / t.chunks.max(1);
                    }
                    let longest = chain.iter().copied().max().unwrap_or(0);
                    assert!(span >= longest, "{span} < chain {longest}");
                    if cores == 1 {
                        assert_eq!(span, work);
                    }
                }
            }
        }
    }
}
