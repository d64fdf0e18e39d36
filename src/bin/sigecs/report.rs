//! The main job's run and report: level spawn times, memory, time per system, the frames on 1 and N
//! threads, parallel efficiency.

use crate::{checksum::*, hand::*, levels::*, options::*, population::*};
use sigecs::rayon;
use sigecs_level::{VerifyOptions, WorldLevels};
// The runner's own split rule, so the report says what a run does.
use sigecs::__private::job_rows;
use sigecs::transform::TransformManager;
use sigecs_demo::components::resources::{Gravity, Time};
use sigecs_demo::{level_registry, World, SYSTEM_NAMES};
use std::time::{Duration, Instant};

/// `n` with the noun that agrees (`1 frame`, `2 frames`), for printed counts.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(crate) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The bundled systems' only commands are `expire`'s despawns, which cannot fail.
const DESPAWNS_CANNOT_FAIL: &str = "a despawn command cannot fail";

/// What one run of the frames measured.
pub(crate) struct Run {
    pub(crate) world: World,
    /// Seconds spent in each stage, summed over frames (its commands included).
    pub(crate) stage_secs: Vec<f64>,
    /// Seconds each stage spent applying its commands (sequential).
    pub(crate) command_secs: Vec<f64>,
    /// Seconds spent respawning expired particles (sequential).
    pub(crate) respawn_secs: f64,
    pub(crate) total: Duration,
    pub(crate) recycled: usize,
    /// Seconds the hand-written floor's frames took beside the job's ([`HandWorld`]; 0
    /// without one).
    pub(crate) hand_secs: f64,
}

/// Runs the frames with `run_schedule`, stage by stage (timed), on a pool of `threads`. With
/// `hand` rows, a [`HandWorld`] of them runs a frame after each of the job's (timed apart, and
/// left out of the job's times), followed by as long a stretch on the calling thread as the
/// job's frame spent in commands and respawns: the two see the machine at the same moments.
pub(crate) fn run_frames(
    opts: &Options,
    level: &Level,
    threads: usize,
    hand: Option<(usize, usize, usize)>,
) -> Run {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts, level);
    let mut hand = hand.map(|(a, p, e)| HandWorld::new(a, p, e, opts.seed));
    let (time, gravity) = (Time::default(), Gravity::default());
    let (mut hand_secs, mut beside) = (0.0, Duration::ZERO);
    let stages = World::schedule().stages.len();
    let mut stage_secs = vec![0.0; stages];
    let mut command_secs = vec![0.0; stages];
    let mut recycled = 0;
    let mut respawn_secs = 0.0;
    let start = Instant::now();
    let mut last_report = Instant::now();
    pool.install(|| {
        for frame in 0..opts.frames {
            let alive = world.len();
            let mut sequential = Duration::ZERO;
            for k in 0..stages {
                let (t, applied) = (Instant::now(), world.command_time());
                world.run_stage(k).expect(DESPAWNS_CANNOT_FAIL);
                stage_secs[k] += t.elapsed().as_secs_f64();
                let commands = world.command_time() - applied;
                command_secs[k] += commands.as_secs_f64();
                sequential += commands;
            }
            let t = Instant::now();
            let expired = alive - world.len();
            respawn_particles(&mut world, expired, &mut rng);
            recycled += expired;
            let respawn = t.elapsed();
            respawn_secs += respawn.as_secs_f64();
            sequential += respawn;
            if let Some(hand) = hand.as_mut() {
                let start = Instant::now();
                hand.frame(&time, &gravity);
                let end = Instant::now();
                hand_secs += (end - start).as_secs_f64();
                // Busy, not asleep: as the job's thread is while it applies commands.
                while end.elapsed() < sequential {
                    std::hint::spin_loop();
                }
                beside += start.elapsed();
            }
            if last_report.elapsed() > Duration::from_secs(2) {
                println!(
                    "  {threads} thread(s): frame {}/{} ({:.1?})",
                    frame + 1,
                    opts.frames,
                    start.elapsed()
                );
                last_report = Instant::now();
            }
        }
    });
    Run {
        world,
        stage_secs,
        command_secs,
        respawn_secs,
        total: start.elapsed() - beside,
        recycled,
        hand_secs,
    }
}

/// The entities of the declared stores named `names`.
fn rows_of(stats: &sigecs::WorldStats, names: &[&str]) -> usize {
    stats
        .stores
        .iter()
        .filter(|s| names.contains(&s.name))
        .map(|s| s.entities)
        .sum()
}

/// The run with the median total of `runs` (not empty).
fn median_run(mut runs: Vec<Run>) -> Run {
    runs.sort_by_key(|r| r.total);
    let k = runs.len() / 2;
    runs.swap_remove(k)
}

/// Median ns per entity of each system, each run on its own for every frame (`None` when it
/// never had rows to time: no frames, or an empty store set).
pub(crate) fn time_systems(opts: &Options, level: &Level) -> Vec<(usize, Option<f64>)> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts, level);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.frames); SYSTEM_NAMES.len()];
    pool.install(|| {
        for _ in 0..opts.frames {
            let alive = world.len();
            for (i, s) in samples.iter_mut().enumerate() {
                let rows = world.system_rows(i);
                let t = Instant::now();
                world.run_system(i).expect(DESPAWNS_CANNOT_FAIL);
                if rows > 0 {
                    s.push(t.elapsed().as_nanos() as f64 / rows as f64);
                }
            }
            let expired = alive - world.len();
            respawn_particles(&mut world, expired, &mut rng);
        }
    });
    samples
        .iter_mut()
        .enumerate()
        .map(|(i, s)| (world.system_rows(i), (!s.is_empty()).then(|| median(s))))
        .collect()
}

/// Verifies and spawns the level a few times into fresh worlds (the hierarchy into the world's
/// own, then into a separate transform manager); prints the median times.
pub(crate) fn report_level_spawn(level: &Level) {
    let n = level.num_entities() as f64;
    let (mut verify, mut spawn, mut linked) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let again = World::new()
            .verify_level(level.bytes(), level_registry(), &VerifyOptions::default())
            .expect("verified before");
        verify.push(t.elapsed().as_secs_f64());
        let mut world = World::new();
        let t = Instant::now();
        world.spawn_level(&again).expect("a verified level spawns");
        spawn.push(t.elapsed().as_secs_f64());
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let t = Instant::now();
        world
            .spawn_level_with(&again, &mut tm)
            .expect("a verified level spawns");
        linked.push(t.elapsed().as_secs_f64());
    }
    let (v, s, l) = (median(&mut verify), median(&mut spawn), median(&mut linked));
    println!(
        "level: {} entities ({} roots, hierarchy depth {}), {} bytes: verify {:.0} us, spawn {:.0} us ({:.1} ns/entity; the hierarchy into the world's own), spawn with the hierarchy in a separate manager {:.0} us (median of 5)",
        level.num_entities(),
        level.roots(),
        level.depth(),
        level.bytes().len(),
        v * 1e6,
        s * 1e6,
        s * 1e9 / n.max(1.0),
        l * 1e6,
    );
}

pub(crate) fn run(opts: &Options) -> Result<(), String> {
    if opts.record.is_some() && !cfg!(feature = "record") {
        return Err(crate::record::NEEDS_FEATURE.into());
    }
    if opts.record.is_some() && opts.frames == 0 {
        return Err("--record needs --frames 1 or more".into());
    }
    let level = load_level_for(opts)?;
    println!(
        "sigecs main job: level {} + {}, {}, {}, seed {}",
        opts.level
            .as_deref()
            .map_or("assets/level.bin (bundled)".to_string(), |p| p
                .display()
                .to_string()),
        count(opts.entities, "generated entity", "generated entities"),
        count(opts.frames, "frame", "frames"),
        count(opts.threads, "thread", "threads"),
        opts.seed
    );
    report_level_spawn(&level);
    let t = Instant::now();
    let (world, _) = fresh_world(opts, &level);
    println!(
        "spawned {} (level and generated) in {:.2?}\n",
        count(world.len(), "entity", "entities"),
        t.elapsed()
    );
    let stats = world.stats();
    println!("memory per signature:\n{stats}\n");
    drop(world);
    // The rows the hand-written floor of the passes visits, as the job's stores hold them.
    let hand_rows = (
        rows_of(&stats, &["Body", "Ship"]),
        rows_of(&stats, &["Particle"]),
        rows_of(&stats, &["Escort"]),
    );

    println!("schedule (stages run in order; each is one fused pass per store):");
    print!("{}", World::schedule());
    println!();

    println!("{:<24} {:>10} {:>14}", "system", "entities", "ns/entity");
    for (i, (rows, ns)) in time_systems(opts, &level).into_iter().enumerate() {
        match ns {
            Some(ns) => println!("{:<24} {:>10} {:>14.3}", SYSTEM_NAMES[i], rows, ns),
            None => println!("{:<24} {:>10} {:>14}", SYSTEM_NAMES[i], rows, "-"),
        }
    }
    println!("(median over frames, each system run alone on 1 thread; -: no rows to time)\n");
    if opts.frames == 0 {
        // Nothing to time on 1 or N threads: the layout's figures only.
        println!("ran 0 frames: the speedup and the comparison need --frames 1 or more");
        let (world, _) = fresh_world(opts, &level);
        print_layout_and_checksum(&world);
        return Ok(());
    }

    // Runs on 1 and N threads, alternated, `repeats` times each: the report uses the run with
    // the median total of each (a shared machine's noise hits single runs). With N threads,
    // each repeat also runs both again with the hand-written floor's frames between the job's
    // (which evict some of the job's cache, so these runs give only the comparison).
    let (mut singles, mut parallels) = (Vec::new(), Vec::new());
    let (mut paired_singles, mut paired_parallels) = (Vec::new(), Vec::new());
    // With --record, each repeat also records the jobs (on 1 thread), so the recordings see the
    // machine at the same moments as the real runs they are checked against.
    let mut recordings = Vec::new();
    for _ in 0..opts.repeats {
        if opts.record.is_some() {
            recordings.push(crate::record::record_frames(opts, &level)?);
        }
        singles.push(run_frames(opts, &level, 1, None));
        if opts.threads > 1 {
            parallels.push(run_frames(opts, &level, opts.threads, None));
            paired_singles.push(run_frames(opts, &level, 1, Some(hand_rows)));
            paired_parallels.push(run_frames(opts, &level, opts.threads, Some(hand_rows)));
        }
    }
    let single = median_run(singles);
    let parallel = (!parallels.is_empty()).then(|| median_run(parallels));
    let final_run = parallel.as_ref().unwrap_or(&single);
    println!(
        "ran {} ({} expired and respawned)",
        count(opts.frames, "frame", "frames"),
        count(final_run.recycled, "particle", "particles")
    );
    // Amdahl: the share of the whole 1-thread run that can run in parallel: the passes of
    // stages that split (the stage writes no resource, may not spawn in this deterministic
    // world, and its stores hold enough rows: the runner's own rule, `job_rows`). Everything
    // else is sequential: the commands every stage applies after its pass, stages that do not
    // split, respawning particles, and the frame loop's own bookkeeping (the rest).
    let plan = World::schedule();
    let min_chunk = opts
        .min_chunk
        .unwrap_or(sigecs::schedule::DEFAULT_MIN_CHUNK);
    let stats = final_run.world.stats();
    let splits = |s: &sigecs::schedule::Stage| {
        let names: Vec<&str> = s.stores.iter().map(|&(n, _)| n).collect();
        let rows = rows_of(&stats, &names);
        s.parallel && !s.spawns && job_rows(rows, min_chunk, opts.threads).is_some()
    };
    // A run's time in passes that split and in passes that do not (each stage's time less
    // its commands).
    let passes = |run: &Run| {
        let (mut split, mut inline) = (0.0, 0.0);
        for ((stage, commands), s) in run
            .stage_secs
            .iter()
            .zip(&run.command_secs)
            .zip(plan.stages)
        {
            let pass = (stage - commands).max(0.0);
            if splits(s) {
                split += pass;
            } else {
                inline += pass;
            }
        }
        (split, inline)
    };
    let (parallel_secs, inline_secs) = passes(&single);
    let command_secs: f64 = single.command_secs.iter().sum();
    let stage_secs: f64 = single.stage_secs.iter().sum();
    let total_secs = single.total.as_secs_f64();
    let other_secs = (total_secs - stage_secs - single.respawn_secs).max(0.0);
    let share = if total_secs > 0.0 {
        parallel_secs / total_secs
    } else {
        0.0
    };
    let ms = |secs: f64| secs * 1e3;
    println!(
        "  1 thread:   {:>10.2?}  checksum {:016x}  (passes that split {:.2} ms; sequential: commands {:.2} ms, passes that do not split {:.2} ms, respawns {:.2} ms, the rest {:.2} ms)",
        single.total,
        checksum(&single.world),
        ms(parallel_secs),
        ms(command_secs),
        ms(inline_secs),
        ms(single.respawn_secs),
        ms(other_secs),
    );
    if let Some(p) = &parallel {
        let n = opts.threads as f64;
        let (split_secs, _) = passes(p);
        // How much faster the passes that split ran: what the hand-offs to rayon's threads and
        // uneven jobs leave of `n`.
        let pass_speedup = if split_secs > 0.0 {
            parallel_secs / split_secs
        } else {
            1.0
        };
        println!(
            "  {} threads: {:>10.2?}  checksum {:016x}  (passes that split {:.2} ms, {:.2}x faster)",
            opts.threads,
            p.total,
            checksum(&p.world),
            ms(split_secs),
            pass_speedup,
        );
        let amdahl = |speedup: f64| 1.0 / ((1.0 - share) + share / speedup);
        println!(
            "parallel efficiency: {:.1}% of the 1-thread run is in passes that split (min_chunk {}; the rest is sequential); Amdahl bound {:.2}x on {} threads, {:.2}x with the passes' own {:.2}x; measured speedup {:.2}x (median of {} runs each)",
            100.0 * share,
            min_chunk,
            amdahl(n),
            opts.threads,
            amdahl(pass_speedup),
            pass_speedup,
            single.total.as_secs_f64() / p.total.as_secs_f64(),
            opts.repeats,
        );
        // The paired runs: the job's passes and the floor's, frame after frame.
        let (one, many) = (median_run(paired_singles), median_run(paired_parallels));
        let (hand_single, hand_parallel) = (one.hand_secs, many.hand_secs);
        let hand_speedup = hand_single / hand_parallel.max(f64::MIN_POSITIVE);
        let against = if parallel_secs > 0.0 {
            let paired = passes(&one).0 / passes(&many).0.max(f64::MIN_POSITIVE);
            format!(
                "; the job's passes that split, in the same runs: {:.2}x, {:.0}% of that",
                paired,
                100.0 * paired / hand_speedup
            )
        } else {
            "; none of the job's passes split".to_string()
        };
        println!(
            "the machine at the same moments: the same systems written by hand over one Vec per component ({} + {} + {} rows, one rayon fork-join), a frame after each of the job's in paired runs (median of {} on 1 thread and on {}), took {:.2} ms and {:.2} ms: {:.2}x{against}",
            hand_rows.0,
            hand_rows.1,
            hand_rows.2,
            opts.repeats,
            opts.threads,
            ms(hand_single),
            ms(hand_parallel),
            hand_speedup,
        );
        if checksum(&p.world) != checksum(&single.world) {
            eprintln!("error: the parallel run's world differs from the sequential one");
            std::process::exit(1);
        }
    } else {
        println!(
            "parallel efficiency: {:.1}% of the 1-thread run is in passes that split (min_chunk {})",
            100.0 * share,
            min_chunk
        );
    }
    if let Some(path) = &opts.record {
        let per_frame = |run: &Run| run.total.as_secs_f64() * 1e9 / opts.frames as f64;
        // The recording whose frames took the median total.
        recordings.sort_by_key(crate::jobs::Recording::total_ns);
        let mut rec = recordings.swap_remove(recordings.len() / 2);
        rec.real.push((1, per_frame(&single)));
        if let Some(p) = &parallel {
            rec.real.push((opts.threads, per_frame(p)));
        }
        let about = format!(
            "jobs of the sigecs main job, recorded on 1 thread: {} frames, {} generated entities, seed {}; the recording of median total of {} alternated with the real runs\nregenerate: cargo run --release --features record -- --frames {} --entities {} --seed {} --threads {} --repeats {} --record FILE",
            opts.frames, opts.entities, opts.seed, opts.repeats, opts.frames, opts.entities, opts.seed, opts.threads, opts.repeats
        );
        std::fs::write(path, rec.to_csv(&about)).map_err(|e| format!("{}: {e}", path.display()))?;
        println!(
            "\nrecorded {} jobs to {}; list-scheduled on more cores (`sigecs simulate {}`):\n{}",
            rec.frames.iter().map(Vec::len).sum::<usize>(),
            path.display(),
            path.display(),
            crate::record::table(&rec)
        );
    }
    print_layout_and_checksum(&final_run.world);
    Ok(())
}

/// The cache efficiency of each pass over `world`'s stores, its undeclared sets and its
/// checksum: the report's last lines.
fn print_layout_and_checksum(world: &World) {
    println!(
        "\ncache efficiency per system and store (arrays streamed at once, bytes per row):\n{}",
        sigecs::CacheStats::table(&world.cache_stats())
    );
    print_undeclared(world);
    println!("\nchecksum: {:016x}", checksum(world));
}

/// The component sets entities took that no signature declares, with the declarations that
/// would give them generated stores.
pub(crate) fn print_undeclared(world: &World) {
    let sets = world.undeclared();
    if sets.is_empty() {
        println!("\nevery entity's component set is a declared signature");
        return;
    }
    println!("\ncomponent sets no signature declares (dynamic stores); to promote one, declare:");
    for set in sets {
        println!("  {set}");
        if let Some(declaration) = set.declaration() {
            for line in declaration.lines() {
                println!("    {line}");
            }
        }
    }
}
