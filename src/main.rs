//! The main job: spawn a world of the bundled signatures, run its systems for some frames, and
//! report memory per signature, memory efficiency, time per entity for each system, and a
//! checksum of every component value (so two runs can be compared).

use glam::Vec3;
use sigecs::components::physics::*;
use sigecs::components::signatures::{Beacon, Body, Particle, Ship};
use sigecs::ecs_core::rayon;
use sigecs::ecs_core::schedule::parts::job_rows;
use sigecs::ecs_core::Entity;
use sigecs::{World, SYSTEM_NAMES};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "\
Usage: sigecs [OPTIONS]

Spawns entities of the bundled signatures (40% Particle, 30% Body, 20% Ship, 10% Beacon),
runs the generated schedule once per frame, and prints a report: memory per signature, time
per entity of each system, the schedule, its speedup on N threads against 1, and a checksum
of the final world (the same for every thread count).

Options:
  --entities N    number of entities to spawn (default 100000)
  --frames N      number of frames to run (default 100)
  --threads N     rayon threads for the parallel run (default: the machine's cores)
  --min-chunk N   minimum rows per parallel chunk, for every system (default: per system)
  --seed N        seed of the initial values (default 1)
  -h, --help      print this help";

/// Command-line options.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    entities: usize,
    frames: usize,
    threads: usize,
    min_chunk: Option<usize>,
    seed: u64,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut opts = Options {
        entities: 100_000,
        frames: 100,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        min_chunk: None,
        seed: 1,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<u64, String> {
            let v = inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value ({what})"))?;
            v.parse::<u64>()
                .map_err(|_| format!("{name} expects {what}, got `{v}`"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(None),
            "--entities" => opts.entities = value("a number of entities")? as usize,
            "--frames" => opts.frames = value("a number of frames")? as usize,
            "--seed" => opts.seed = value("an integer seed")?,
            "--threads" => match value("a number of threads")? {
                0 => return Err("--threads must be at least 1".into()),
                n => opts.threads = n as usize,
            },
            "--min-chunk" => match value("a number of rows")? {
                0 => return Err("--min-chunk must be at least 1".into()),
                n => opts.min_chunk = Some(n as usize),
            },
            _ => return Err(format!("unknown option `{arg}`")),
        }
    }
    let max = sigecs::ecs_core::entity::MAX_ENTITIES;
    if opts.entities > max {
        return Err(format!(
            "--entities {} is more than a world can hold ({max})",
            opts.entities
        ));
    }
    Ok(Some(opts))
}

/// Small deterministic generator for initial values (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }
    fn vec3(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32()) * 2.0 * scale - scale
    }
}

fn particle(rng: &mut Rng) -> Particle {
    Particle {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        lifetime: Lifetime(0.5 + 4.5 * rng.next_f32()),
    }
}

fn populate(world: &mut World, n: usize, rng: &mut Rng) {
    let (particles, bodies, ships) = (n * 4 / 10, n * 3 / 10, n * 2 / 10);
    let beacons = n - particles - bodies - ships;
    world.spawn_batch((0..particles).map(|_| particle(rng)));
    world.spawn_batch((0..bodies).map(|_| Body {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(1.0 + rng.next_f32()),
    }));
    world.spawn_batch((0..ships).map(|i| Ship {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(10.0 + rng.next_f32()),
        name: DebugName(format!("ship-{i}")),
    }));
    world.spawn_batch((0..beacons).map(|i| Beacon {
        position: Position(rng.vec3(100.0)),
        name: DebugName(format!("beacon-{i}")),
    }));
}

/// Particles whose lifetime ran out are despawned and replaced, keeping the count constant.
fn recycle_particles(world: &mut World, rng: &mut Rng) -> usize {
    let expired: Vec<Entity> = world
        .query::<(Entity, &Lifetime)>()
        .filter(|(_, l)| l.0 <= 0.0)
        .map(|(e, _)| e)
        .collect();
    for e in &expired {
        world.despawn(*e);
    }
    world.spawn_batch((0..expired.len()).map(|_| particle(rng)));
    expired.len()
}

/// FNV-1a over every live entity (in id order) and each of its component values, so the result
/// does not depend on where rows sit in their stores.
fn checksum(world: &World) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut entities: Vec<Entity> = world.entities().collect();
    entities.sort();
    let vec = |v: Vec3| [v.x, v.y, v.z].map(f32::to_bits);
    for e in entities {
        eat(&e.to_bits().to_le_bytes());
        eat(world.signature_name_of(e).unwrap_or("?").as_bytes());
        let mut words: Vec<u32> = Vec::new();
        if let Some(p) = world.get::<Position>(e) {
            words.extend(vec(p.0));
        }
        if let Some(v) = world.get::<Velocity>(e) {
            words.extend(vec(v.0));
        }
        if let Some(a) = world.get::<Acceleration>(e) {
            words.extend(vec(a.0));
        }
        if let Some(m) = world.get::<Mass>(e) {
            words.push(m.0.to_bits());
        }
        if let Some(l) = world.get::<Lifetime>(e) {
            words.push(l.0.to_bits());
        }
        for w in words {
            eat(&w.to_le_bytes());
        }
        if let Some(n) = world.get::<DebugName>(e) {
            eat(n.0.as_bytes());
        }
    }
    h
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A world spawned from the options' seed: every run starts from the same state.
fn fresh_world(opts: &Options) -> (World, Rng) {
    let mut rng = Rng::new(opts.seed);
    let mut world = World::new();
    populate(&mut world, opts.entities, &mut rng);
    world.set_min_chunk(opts.min_chunk);
    (world, rng)
}

/// What one run of the frames measured.
struct Run {
    world: World,
    /// Seconds spent in each stage, summed over frames.
    stage_secs: Vec<f64>,
    total: Duration,
    recycled: usize,
}

/// Runs the frames with `run_schedule`, stage by stage (timed), on a pool of `threads`.
fn run_frames(opts: &Options, threads: usize) -> Run {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts);
    let stages = World::schedule().stages.len();
    let mut stage_secs = vec![0.0; stages];
    let mut recycled = 0;
    let start = Instant::now();
    let mut last_report = Instant::now();
    pool.install(|| {
        for frame in 0..opts.frames {
            for (k, secs) in stage_secs.iter_mut().enumerate() {
                let t = Instant::now();
                world
                    .run_stage(k)
                    .expect("the bundled systems issue no commands");
                *secs += t.elapsed().as_secs_f64();
            }
            recycled += recycle_particles(&mut world, &mut rng);
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
        total: start.elapsed(),
        recycled,
    }
}

/// Median ns per entity of each system, each run on its own for every frame.
fn time_systems(opts: &Options) -> Vec<(usize, f64)> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.frames); SYSTEM_NAMES.len()];
    pool.install(|| {
        for _ in 0..opts.frames {
            for (i, s) in samples.iter_mut().enumerate() {
                let rows = world.system_rows(i);
                let t = Instant::now();
                world
                    .run_system(i)
                    .expect("the bundled systems issue no commands");
                if rows > 0 {
                    s.push(t.elapsed().as_nanos() as f64 / rows as f64);
                }
            }
            recycle_particles(&mut world, &mut rng);
        }
    });
    samples
        .iter_mut()
        .enumerate()
        .map(|(i, s)| (world.system_rows(i), median(s)))
        .collect()
}

fn run(opts: &Options) {
    println!(
        "sigecs main job: {} entities, {} frames, {} thread(s), seed {}",
        opts.entities, opts.frames, opts.threads, opts.seed
    );
    let t = Instant::now();
    let (world, _) = fresh_world(opts);
    println!("spawned {} entities in {:.2?}\n", world.len(), t.elapsed());
    println!("memory per signature:\n{}\n", world.stats());
    drop(world);

    println!("schedule (stages run in order; each is one fused pass per store):");
    print!("{}", World::schedule());
    println!();

    println!("{:<24} {:>10} {:>14}", "system", "entities", "ns/entity");
    for (i, (rows, ns)) in time_systems(opts).into_iter().enumerate() {
        println!("{:<24} {:>10} {:>14.3}", SYSTEM_NAMES[i], rows, ns);
    }
    println!("(median over frames, each system run alone on 1 thread)\n");

    let single = run_frames(opts, 1);
    let parallel = if opts.threads == 1 {
        None
    } else {
        Some(run_frames(opts, opts.threads))
    };
    let final_run = parallel.as_ref().unwrap_or(&single);
    println!(
        "ran {} frames ({} particles expired and respawned)",
        opts.frames, final_run.recycled
    );
    // Amdahl: the share of 1-thread stage time that can run in parallel: a stage's pass splits
    // when the stage writes no resource and its stores hold enough rows in all (the runner's
    // own rule, `job_rows`).
    let plan = World::schedule();
    let min_chunk = opts
        .min_chunk
        .unwrap_or(sigecs::ecs_core::schedule::DEFAULT_MIN_CHUNK);
    let stats = final_run.world.stats();
    let rows_of = |name: &str| {
        stats
            .stores
            .iter()
            .find(|s| s.name == name)
            .map_or(0, |s| s.entities)
    };
    let total_secs: f64 = single.stage_secs.iter().sum();
    let parallel_secs: f64 = single
        .stage_secs
        .iter()
        .zip(plan.stages)
        .filter(|(_, s)| {
            let rows: usize = s.stores.iter().map(|(n, _)| rows_of(n)).sum();
            s.parallel && job_rows(rows, min_chunk, opts.threads).is_some()
        })
        .map(|(t, _)| t)
        .sum();
    // `+ 0.0`: an empty f64 sum is -0.0, which would print as "-0.0%".
    let share = if total_secs > 0.0 {
        parallel_secs / total_secs + 0.0
    } else {
        0.0
    };
    println!(
        "  1 thread:   {:>10.2?}  checksum {:016x}",
        single.total,
        checksum(&single.world)
    );
    if let Some(p) = &parallel {
        let n = opts.threads as f64;
        println!(
            "  {} threads: {:>10.2?}  checksum {:016x}",
            opts.threads,
            p.total,
            checksum(&p.world)
        );
        println!(
            "parallel efficiency: {:.1}% of system time is in passes large enough to split (min_chunk {}; Amdahl bound {:.2}x on {} threads); measured speedup {:.2}x",
            100.0 * share,
            min_chunk,
            1.0 / ((1.0 - share) + share / n),
            opts.threads,
            single.total.as_secs_f64() / p.total.as_secs_f64()
        );
        if checksum(&p.world) != checksum(&single.world) {
            eprintln!("error: the parallel run's world differs from the sequential one");
            std::process::exit(1);
        }
    } else {
        println!(
            "parallel efficiency: {:.1}% of system time is in passes large enough to split (min_chunk {})",
            100.0 * share,
            min_chunk
        );
    }
    println!("\nchecksum: {:016x}", checksum(&final_run.world));
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(Some(opts)) => {
            run(&opts);
            ExitCode::SUCCESS
        }
        Ok(None) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("error: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_options() {
        let o = parse_args(args(
            "--entities 10 --frames=3 --seed 7 --threads 3 --min-chunk 64",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            o,
            Options {
                entities: 10,
                frames: 3,
                threads: 3,
                min_chunk: Some(64),
                seed: 7
            }
        );
        assert_eq!(parse_args(args("--help")).unwrap(), None);
    }

    #[test]
    fn rejects_bad_options() {
        let e = parse_args(args("--entities lots")).unwrap_err();
        assert_eq!(e, "--entities expects a number of entities, got `lots`");
        let e = parse_args(args("--frames")).unwrap_err();
        assert_eq!(e, "--frames needs a value (a number of frames)");
        assert_eq!(
            parse_args(args("--fast")).unwrap_err(),
            "unknown option `--fast`"
        );
        assert!(parse_args(args("--entities 5000000"))
            .unwrap_err()
            .contains("more than a world can hold"));
    }

    #[test]
    fn checksum_is_deterministic_and_sensitive() {
        let build = |seed| {
            let mut w = World::new();
            populate(&mut w, 1000, &mut Rng::new(seed));
            w
        };
        let (a, b) = (build(1), build(1));
        assert_eq!(checksum(&a), checksum(&b));
        assert_ne!(checksum(&a), checksum(&build(2)));
        let mut c = build(1);
        let e = c.entities().next().unwrap();
        c.get_mut::<Position>(e).unwrap().0.x += 1.0;
        assert_ne!(checksum(&a), checksum(&c));
    }

    #[test]
    fn checksum_does_not_depend_on_thread_count() {
        let opts = Options {
            entities: 3000,
            frames: 5,
            threads: 2,
            min_chunk: Some(16),
            seed: 9,
        };
        let one = run_frames(&opts, 1);
        for threads in [2, 4] {
            assert_eq!(
                checksum(&run_frames(&opts, threads).world),
                checksum(&one.world)
            );
        }
    }

    #[test]
    fn population_is_spread_over_signatures() {
        let mut w = World::new();
        populate(&mut w, 1001, &mut Rng::new(3));
        let stats = w.stats();
        let count = |name: &str| {
            stats
                .stores
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .entities
        };
        assert_eq!(count("Particle"), 400);
        assert_eq!(count("Body"), 300);
        assert_eq!(count("Ship"), 200);
        assert_eq!(count("Beacon"), 101);
        assert_eq!(w.len(), 1001);
    }
}
