//! The main job: spawn a level (entity resource) and generated entities of the bundled
//! signatures, run its systems for some frames, and report the level's spawn time, memory per
//! signature, memory efficiency, time per entity for each system, and a checksum of every
//! component value (so two runs can be compared). Also the entity-resource tools: `compile`,
//! `inspect` and `save`.

use glam::Vec3;
use sigecs::components::physics::*;
use sigecs::components::signatures::{Beacon, Body, Particle, Ship};
use sigecs::ecs_core::rayon;
use sigecs::ecs_core::resource::{
    format::MAGIC, AlignedBlob, EntityCompiler, ResourceReport, VerifiedResource, VerifyOptions,
};
use sigecs::ecs_core::schedule::parts::job_rows;
use sigecs::ecs_core::transform::TransformManager;
use sigecs::ecs_core::Entity;
use sigecs::{resource_registry, World, SYSTEM_NAMES};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The bundled level (`assets/level.bin`, made by `scripts/make_level.py` from
/// `assets/level.json`): 11,300 entities, a 3-level hierarchy.
const BUNDLED_LEVEL: &[u8] = include_bytes!("../assets/level.bin");

const USAGE: &str = "\
Usage: sigecs [OPTIONS]
       sigecs compile LEVEL.json -o LEVEL.bin
       sigecs inspect LEVEL            (a blob or JSON)
       sigecs save [--level LEVEL] [--entities N] [--frames N] [--seed N] -o OUT.bin

Spawns a level (entity resource; by default the bundled one, 11,300 entities with a
hierarchy) and generated entities of the bundled signatures (40% Particle, 30% Body, 20% Ship,
10% Beacon), runs the generated schedule once per frame, and prints a report: the level's
verify and spawn time, memory per signature, time per entity of each system, the schedule, its
speedup on N threads against 1, and a checksum of the final world (the same for every thread
count).

compile: JSON level to blob (verified against the bundled world's signatures).
inspect: counts per component type and per signature, hierarchy depth, bytes.
save:    the world after N frames (default 60; level plus --entities, default 0) to a blob.

Options:
  --level FILE    the level to spawn: a compiled blob or JSON (default: the bundled level)
  --entities N    number of generated entities to spawn besides the level (default 100000)
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
    level: Option<PathBuf>,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut opts = Options {
        entities: 100_000,
        frames: 100,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        min_chunk: None,
        seed: 1,
        level: None,
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
        if name == "--level" {
            let v = inline.clone().or_else(|| args.next());
            opts.level = Some(v.ok_or("--level needs a value (a level file)")?.into());
            continue;
        }
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
        name: DebugName::new(&format!("ship-{i}")),
    }));
    world.spawn_batch((0..beacons).map(|i| Beacon {
        position: Position(rng.vec3(100.0)),
        name: DebugName::new(&format!("beacon-{i}")),
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
        if let Some(n) = world.get::<Note>(e) {
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

/// A verified level, spawned into every fresh world (a prefab: verified once).
type Level = VerifiedResource<'static, AlignedBlob>;

/// Reads a level: a compiled blob as it is, anything else compiled as JSON. `None`: the bundled
/// level.
fn read_level(path: Option<&Path>) -> Result<AlignedBlob, String> {
    let Some(path) = path else {
        return Ok(AlignedBlob::from_bytes(BUNDLED_LEVEL));
    };
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.starts_with(&MAGIC) {
        return Ok(AlignedBlob::from_bytes(&bytes));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{}: neither a compiled level nor JSON", path.display()))?;
    let blob = EntityCompiler::new(resource_registry())
        .compile_str(&text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(AlignedBlob::from_bytes(&blob))
}

/// Reads and verifies a level against the bundled world.
fn load_level(path: Option<&Path>) -> Result<Level, String> {
    let blob = read_level(path)?;
    let name = path.map_or("the bundled level".to_string(), |p| p.display().to_string());
    World::new()
        .verify_resource(blob, resource_registry(), &VerifyOptions::default())
        .map_err(|e| format!("{name}: {e}"))
}

/// Reads the options' level (as [`load_level`]) and checks that it and the generated entities
/// fit in one world with room to recycle particles: the entity manager keeps
/// `MINIMUM_FREE_INDICES` freed ids waiting before it reuses one, so a world fuller than
/// that margin could not respawn the particles it despawns.
fn load_level_for(opts: &Options) -> Result<Level, String> {
    use sigecs::ecs_core::entity::{MAX_ENTITIES, MINIMUM_FREE_INDICES};
    let level = load_level(opts.level.as_deref())?;
    let room = MAX_ENTITIES - MINIMUM_FREE_INDICES;
    let total = (level.num_entities() as usize).saturating_add(opts.entities);
    if total > room {
        return Err(format!(
            "the level's {} entities and --entities {} make {total}, more than a world can \
             hold while it recycles particles ({room}: {MAX_ENTITIES} ids less the \
             {MINIMUM_FREE_INDICES} freed ones that wait before reuse); lower --entities to \
             at most {}",
            level.num_entities(),
            opts.entities,
            room.saturating_sub(level.num_entities() as usize)
        ));
    }
    Ok(level)
}

/// A world spawned from the level and the options' seed: every run starts from the same state.
fn fresh_world(opts: &Options, level: &Level) -> (World, Rng) {
    let mut rng = Rng::new(opts.seed);
    let mut world = World::new();
    world
        .spawn_resource_with(level, &mut TransformManager::new())
        .expect("a verified level spawns into an empty world");
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
fn run_frames(opts: &Options, level: &Level, threads: usize) -> Run {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts, level);
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
fn time_systems(opts: &Options, level: &Level) -> Vec<(usize, f64)> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let (mut world, mut rng) = fresh_world(opts, level);
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

/// Verifies and spawns the level a few times into fresh worlds (the hierarchy into the world's
/// own, then into a separate transform manager); prints the median times.
fn report_level_spawn(level: &Level) {
    let n = level.num_entities() as f64;
    let (mut verify, mut spawn, mut linked) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let again = World::new()
            .verify_resource(
                level.bytes(),
                resource_registry(),
                &VerifyOptions::default(),
            )
            .expect("verified before");
        verify.push(t.elapsed().as_secs_f64());
        let mut world = World::new();
        let t = Instant::now();
        world
            .spawn_resource(&again)
            .expect("a verified level spawns");
        spawn.push(t.elapsed().as_secs_f64());
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let t = Instant::now();
        world
            .spawn_resource_with(&again, &mut tm)
            .expect("a verified level spawns");
        linked.push(t.elapsed().as_secs_f64());
    }
    let (v, s, l) = (median(&mut verify), median(&mut spawn), median(&mut linked));
    println!(
        "level: {} entities ({} roots, {} hierarchy levels), {} bytes: verify {:.0} us, spawn {:.0} us ({:.1} ns/entity; the hierarchy into the world's own), spawn with the hierarchy in a separate manager {:.0} us (median of 5)",
        level.num_entities(),
        level.roots(),
        level.levels(),
        level.bytes().len(),
        v * 1e6,
        s * 1e6,
        s * 1e9 / n.max(1.0),
        l * 1e6,
    );
}

fn run(opts: &Options) -> Result<(), String> {
    let level = load_level_for(opts)?;
    println!(
        "sigecs main job: level {} + {} generated entities, {} frames, {} thread(s), seed {}",
        opts.level
            .as_deref()
            .map_or("assets/level.bin (bundled)".to_string(), |p| p
                .display()
                .to_string()),
        opts.entities,
        opts.frames,
        opts.threads,
        opts.seed
    );
    report_level_spawn(&level);
    let t = Instant::now();
    let (world, _) = fresh_world(opts, &level);
    println!(
        "spawned {} entities (level and generated) in {:.2?}\n",
        world.len(),
        t.elapsed()
    );
    println!("memory per signature:\n{}\n", world.stats());
    drop(world);

    println!("schedule (stages run in order; each is one fused pass per store):");
    print!("{}", World::schedule());
    println!();

    println!("{:<24} {:>10} {:>14}", "system", "entities", "ns/entity");
    for (i, (rows, ns)) in time_systems(opts, &level).into_iter().enumerate() {
        println!("{:<24} {:>10} {:>14.3}", SYSTEM_NAMES[i], rows, ns);
    }
    println!("(median over frames, each system run alone on 1 thread)\n");

    let single = run_frames(opts, &level, 1);
    let parallel = if opts.threads == 1 {
        None
    } else {
        Some(run_frames(opts, &level, opts.threads))
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
    print_undeclared(&final_run.world);
    println!("\nchecksum: {:016x}", checksum(&final_run.world));
    Ok(())
}

/// The component sets entities took that no signature declares, with the declarations that
/// would give them generated stores.
fn print_undeclared(world: &World) {
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

/// The value of `-o FILE` among `args`, and the other arguments.
fn take_output(args: Vec<String>) -> Result<(PathBuf, Vec<String>), String> {
    let mut out = None;
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "-o" || a == "--output" {
            out = Some(it.next().ok_or("-o needs a file name")?);
        } else if let Some(v) = a.strip_prefix("--output=") {
            out = Some(v.to_string());
        } else {
            rest.push(a);
        }
    }
    Ok((out.ok_or("missing -o OUTPUT")?.into(), rest))
}

/// `sigecs compile LEVEL.json -o LEVEL.bin`.
fn compile_cmd(args: Vec<String>) -> Result<(), String> {
    let (out, rest) = take_output(args)?;
    let [input] = rest.as_slice() else {
        return Err("compile takes one input file".into());
    };
    let text = std::fs::read_to_string(input).map_err(|e| format!("{input}: {e}"))?;
    let t = Instant::now();
    let blob = EntityCompiler::new(resource_registry())
        .compile_str(&text)
        .map_err(|e| format!("{input}: {e}"))?;
    let took = t.elapsed();
    let level = World::new()
        .verify_resource(&blob[..], resource_registry(), &VerifyOptions::default())
        .map_err(|e| format!("{input}: {e}"))?;
    std::fs::write(&out, &blob).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "{input} -> {}: {} entities, {} bytes (compiled in {took:.2?})",
        out.display(),
        level.num_entities(),
        blob.len()
    );
    Ok(())
}

/// `sigecs inspect LEVEL`.
fn inspect_cmd(args: Vec<String>) -> Result<(), String> {
    let [input] = args.as_slice() else {
        return Err("inspect takes one file".into());
    };
    let level = load_level(Some(Path::new(input)))?;
    println!("{}", ResourceReport::of(&level));
    let world = World::new();
    let stats = world.stats();
    println!("per signature:");
    for (store, count) in level.store_counts() {
        println!(
            "  {:<12} {:>8} entities",
            stats.stores[store as usize].name, count
        );
    }
    Ok(())
}

/// `sigecs save`: the world after some frames, back to a blob.
fn save_cmd(args: Vec<String>) -> Result<(), String> {
    let (out, rest) = take_output(args)?;
    let mut frames_given = None;
    let mut rest2 = Vec::new();
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        if a == "--frames" {
            let v = it
                .next()
                .ok_or("--frames needs a value (a number of frames)")?;
            frames_given = Some(
                v.parse::<usize>()
                    .map_err(|_| format!("--frames expects a number, got `{v}`"))?,
            );
        } else {
            rest2.push(a);
        }
    }
    let has_entities = rest2.iter().any(|a| a.starts_with("--entities"));
    let mut opts = parse_args(rest2)?.ok_or("see sigecs --help")?;
    if !has_entities {
        opts.entities = 0;
    }
    let frames = frames_given.unwrap_or(60);
    let level = load_level_for(&opts)?;
    let mut rng = Rng::new(opts.seed);
    let mut world = World::new();
    let mut tm = TransformManager::new();
    world
        .spawn_resource_with(&level, &mut tm)
        .map_err(|e| e.to_string())?;
    populate(&mut world, opts.entities, &mut rng);
    for _ in 0..frames {
        world.run_schedule();
        recycle_particles(&mut world, &mut rng);
    }
    let t = Instant::now();
    let blob = world
        .save_resource(resource_registry(), Some(&tm))
        .map_err(|e| e.to_string())?;
    let took = t.elapsed();
    std::fs::write(&out, &blob).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "saved {} entities after {frames} frames to {}: {} bytes (saved in {took:.2?})",
        world.len(),
        out.display(),
        blob.len()
    );
    Ok(())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.first().map(String::as_str) {
        Some(c @ ("compile" | "inspect" | "save")) => Some(c.to_string()),
        _ => None,
    };
    let result = match command.as_deref() {
        Some(c) => {
            args.remove(0);
            match c {
                "compile" => compile_cmd(args),
                "inspect" => inspect_cmd(args),
                _ => save_cmd(args),
            }
        }
        None => match parse_args(args) {
            Ok(Some(opts)) => run(&opts),
            Ok(None) => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            Err(msg) => {
                eprintln!("error: {msg}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
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
                seed: 7,
                level: None,
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

    /// `--entities` values that pass the option check but, with the level's entities, do not
    /// fit are an error, not a panic in `spawn_batch`.
    #[test]
    fn a_level_and_entities_that_do_not_fit_are_an_error_not_a_panic() {
        use sigecs::ecs_core::entity::{MAX_ENTITIES, MINIMUM_FREE_INDICES};
        let level_n = load_level(None).unwrap().num_entities() as usize;
        let room = MAX_ENTITIES - MINIMUM_FREE_INDICES;
        let opts = |n: usize| {
            parse_args(args(&format!("--entities {n}")))
                .unwrap()
                .unwrap()
        };
        for n in [4_190_000, 4_183_005, room - level_n + 1, MAX_ENTITIES] {
            let e = load_level_for(&opts(n)).map(|_| ()).unwrap_err();
            assert!(e.contains("more than a world can hold"), "{n}: {e}");
            assert!(e.contains(&format!("at most {}", room - level_n)), "{e}");
        }
        assert!(load_level_for(&opts(room - level_n)).is_ok());
        // The largest accepted world spawns and recycles without running out of ids.
        let opts = Options {
            frames: 2,
            threads: 1,
            ..opts(room - level_n)
        };
        let (mut world, mut rng) = fresh_world(&opts, &load_level_for(&opts).unwrap());
        assert_eq!(world.len(), room);
        for _ in 0..3 {
            let expired: Vec<Entity> = world
                .query::<(Entity, &Lifetime)>()
                .map(|(e, _)| e)
                .take(3000)
                .collect();
            for e in &expired {
                world.despawn(*e);
            }
            world.spawn_batch((0..expired.len()).map(|_| particle(&mut rng)));
        }
        assert_eq!(world.len(), room);
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
            level: None,
        };
        let level = load_level(None).unwrap();
        let one = run_frames(&opts, &level, 1);
        assert_eq!(one.world.len(), 3000 + 11_300);
        for threads in [2, 4] {
            assert_eq!(
                checksum(&run_frames(&opts, &level, threads).world),
                checksum(&one.world)
            );
        }
    }

    #[test]
    fn the_bundled_level_is_its_json_compiled() {
        let json =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/level.json"))
                .unwrap();
        let blob = EntityCompiler::new(resource_registry())
            .compile_str(&json)
            .unwrap();
        assert!(
            blob == BUNDLED_LEVEL,
            "assets/level.bin is stale: run python3 scripts/make_level.py"
        );
        let level = load_level(None).unwrap();
        assert_eq!(level.num_entities(), 11_300);
        assert_eq!(level.levels(), 3);
        let mut world = World::new();
        let mut tm = TransformManager::new();
        let e = world.spawn_resource_with(&level, &mut tm).unwrap();
        world.check_invariants().unwrap();
        // Escorts (after the 500 ships) follow their ship, which is their parent.
        let escort = e[500];
        let leader = world.get::<Leader>(escort).unwrap().0;
        let parent = tm.parent(tm.lookup(escort).unwrap()).unwrap().unwrap();
        assert_eq!(tm.entity(parent).unwrap(), leader);
        assert_eq!(world.get::<DebugName>(leader).unwrap().0, "ship-0");
        // The markers' notes (postcard `String`s, after the 500 ships, 3,000 escorts, 3,000
        // exhaust particles and 800 beacons) come out whole, longer ones included.
        let note = |i: usize| world.get::<Note>(e[7_300 + i]).unwrap().0.clone();
        assert_eq!(note(0), "marker 0: hold here");
        assert_eq!(
            note(2),
            "marker 2: hold here until the convoy passes until the convoy passes"
        );
    }

    #[test]
    fn compile_inspect_and_save_commands() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("l.json");
        let bin = dir.path().join("l.bin");
        std::fs::write(
            &json,
            r#"{"entities": [{"components": {"position": [1,2,3], "name": "b"}},
                             {"parent": 0, "components": {"position": [0,0,0], "name": "c"}}]}"#,
        )
        .unwrap();
        let s = |p: &Path| p.display().to_string();
        compile_cmd(vec![s(&json), "-o".into(), s(&bin)]).unwrap();
        let level = load_level(Some(&bin)).unwrap();
        assert_eq!(level.num_entities(), 2);
        assert_eq!(level.parent(1), Some(0));
        // JSON levels load too, to the same blob.
        assert_eq!(load_level(Some(&json)).unwrap().bytes(), level.bytes());
        inspect_cmd(vec![s(&bin)]).unwrap();
        let saved = dir.path().join("saved.bin");
        save_cmd(vec![
            "--level".into(),
            s(&bin),
            "--frames".into(),
            "3".into(),
            "-o".into(),
            s(&saved),
        ])
        .unwrap();
        // Beacons do not move: the world saved after 3 frames is the level.
        assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&bin).unwrap());
        let e = compile_cmd(vec![s(&json)]).unwrap_err();
        assert_eq!(e, "missing -o OUTPUT");
        std::fs::write(
            &json,
            r#"{"entities": [{"components": {"position": [1,2]}}]}"#,
        )
        .unwrap();
        let e = compile_cmd(vec![s(&json), "-o".into(), s(&bin)]).unwrap_err();
        assert!(e.contains("entities[0].components.position"), "{e}");
        let e = load_level(Some(&dir.path().join("missing.bin"))).unwrap_err();
        assert!(e.contains("missing.bin"), "{e}");
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
