//! `--record FILE`: the frames run again on one thread, each stage's pass timed store by store
//! (`sigecs::schedule::record`), written with the real frame times of the run; and
//! `sigecs simulate FILE`: the frame time those jobs would take on 1 to 64 cores under global
//! stages and under a task graph by store.

use crate::jobs::Recording;
use crate::options::Options;
use crate::simulate::{frame_ns, Order};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The core counts the simulation reports.
pub(crate) const CORES: [usize; 6] = [1, 2, 4, 8, 16, 64];

/// Runs the frames on one thread as `run_frames` does, recording each job.
#[cfg(feature = "record")]
pub(crate) fn record_frames(
    opts: &Options,
    level: &crate::levels::Level,
) -> Result<Recording, String> {
    use crate::population::{fresh_world, respawn_particles};
    use crate::simulate::{Job, Kind, StageInfo};
    use sigecs::schedule::record::recording;
    use sigecs_demo::World;
    use std::time::Instant;

    let plan = World::schedule();
    let (mut world, mut rng) = fresh_world(opts, level);
    // Work that may split: the runner's rule for a deterministic world (which the job's is).
    let stages: Vec<(StageInfo, Vec<String>)> = plan
        .stages
        .iter()
        .map(|s| {
            let parallel = s.parallel && !s.frame && s.walks.is_none() && !s.spawns;
            let stores = s.stores.iter().map(|&(n, _)| n.to_string()).collect();
            (StageInfo { parallel }, stores)
        })
        .collect();
    let pool = sigecs::rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| e.to_string())?;
    let ns = |d: std::time::Duration| d.as_nanos().min(u64::MAX as u128) as u64;
    let mut frames = Vec::with_capacity(opts.frames);
    pool.install(|| -> Result<(), String> {
        for _ in 0..opts.frames {
            let alive = world.len();
            let mut jobs = Vec::new();
            for (k, (_, stores)) in stages.iter().enumerate() {
                let (t, applied) = (Instant::now(), world.command_time());
                let (ran, parts) = recording(|| world.run_stage(k));
                ran.map_err(|e| e.to_string())?;
                let stage = t.elapsed();
                let commands = world.command_time() - applied;
                let mut in_stores = std::time::Duration::ZERO;
                for (i, part) in parts.iter().enumerate() {
                    // Declared stores in the schedule's order, then dynamic ones.
                    let store = stores
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| format!("dynamic{}", i - stores.len()));
                    in_stores += part.time;
                    let job = Job {
                        stage: Some(k),
                        kind: Kind::Store(store),
                        ns: ns(part.time),
                    };
                    jobs.push((job, part.rows));
                }
                let rest = stage.saturating_sub(in_stores + commands);
                jobs.push((
                    Job {
                        stage: Some(k),
                        kind: Kind::Rest,
                        ns: ns(rest),
                    },
                    0,
                ));
                if !commands.is_zero() {
                    let job = Job {
                        stage: Some(k),
                        kind: Kind::Commands,
                        ns: ns(commands),
                    };
                    jobs.push((job, 0));
                }
            }
            let t = Instant::now();
            let expired = alive - world.len();
            respawn_particles(&mut world, expired, &mut rng);
            let job = Job {
                stage: None,
                kind: Kind::Respawn,
                ns: ns(t.elapsed()),
            };
            jobs.push((job, 0));
            frames.push(jobs);
        }
        Ok(())
    })?;
    Ok(Recording {
        stages,
        frames,
        real: Vec::new(),
    })
}

/// Without the `record` feature the runner does not time its parts.
#[cfg(not(feature = "record"))]
pub(crate) fn record_frames(
    _opts: &Options,
    _level: &crate::levels::Level,
) -> Result<Recording, String> {
    Err(NEEDS_FEATURE.into())
}

/// Why `--record` fails in a build without the feature.
pub(crate) const NEEDS_FEATURE: &str =
    "--record needs the runner's part timing: cargo run --release --features record -- --record FILE";

/// The simulated frame times of `rec` under both orders, per core count (nanoseconds).
pub(crate) fn curves(rec: &Recording) -> Vec<(usize, f64, f64)> {
    let (stages, jobs) = (rec.stage_infos(), rec.jobs());
    CORES
        .iter()
        .map(|&cores| {
            (
                cores,
                frame_ns(&stages, &jobs, Order::Stages, cores),
                frame_ns(&stages, &jobs, Order::Graph, cores),
            )
        })
        .collect()
}

/// The simulation's table (markdown), and its check against the real frame times.
pub(crate) fn table(rec: &Recording) -> String {
    let curves = curves(rec);
    let one = curves.first().map_or(0.0, |c| c.1).max(f64::MIN_POSITIVE);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| cores | global stages µs/frame | speedup | task graph µs/frame | speedup | graph vs stages |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|");
    for (cores, stages, graph) in &curves {
        let _ = writeln!(
            out,
            "| {cores} | {:.1} | {:.2}× | {:.1} | {:.2}× | {:.2}× |",
            stages / 1e3,
            one / stages,
            graph / 1e3,
            one / graph,
            stages / graph,
        );
    }
    for (threads, real) in &rec.real {
        let simulated = curves
            .iter()
            .find(|c| c.0 == *threads)
            .map(|c| {
                format!(
                    "{:.1} µs simulated (global stages), {:+.1}%",
                    c.1 / 1e3,
                    100.0 * (c.1 / real - 1.0)
                )
            })
            .unwrap_or_else(|| "not simulated".into());
        let _ = writeln!(
            out,
            "\nreal, {threads} thread(s): {:.1} µs/frame; {simulated}",
            real / 1e3
        );
    }
    out
}

/// `sigecs simulate FILE [-o CURVES.csv]`: prints the table; writes the curves as CSV
/// (`cores,stages_ns,graph_ns`) for the plot.
pub(crate) fn simulate_cmd(args: Vec<String>) -> Result<(), String> {
    let mut file: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => out = Some(it.next().ok_or("-o needs a file name")?.into()),
            _ if file.is_none() && !a.starts_with('-') => file = Some(a.into()),
            _ => return Err(format!("simulate: unexpected argument `{a}`")),
        }
    }
    let file = file.ok_or("simulate needs the file --record wrote")?;
    let rec = Recording::read(&file)?;
    if rec.frames.is_empty() {
        return Err(format!("{}: no frames", file.display()));
    }
    println!(
        "{} frames of {} ({} jobs), list-scheduled:\n",
        rec.frames.len(),
        file.display(),
        rec.frames.iter().map(Vec::len).sum::<usize>()
    );
    print!("{}", table(&rec));
    if let Some(out) = out {
        let mut csv = String::from("cores,stages_ns,graph_ns\n");
        for (cores, stages, graph) in curves(&rec) {
            let _ = writeln!(csv, "{cores},{stages:.0},{graph:.0}");
        }
        std::fs::write(&out, csv).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}
