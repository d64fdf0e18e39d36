//! Command-line options of the main job and its subcommands.

use std::path::PathBuf;

pub(crate) const USAGE: &str = "\
Usage: sigecs [OPTIONS]
       sigecs compile LEVEL.json -o LEVEL.bin
       sigecs verify LEVEL             (a blob or JSON)
       sigecs inspect LEVEL            (a blob or JSON)
       sigecs save [--level LEVEL] [--entities N] [--frames N] [--seed N] -o OUT.bin
       sigecs simulate JOBS.csv [-o CURVES.csv]

Spawns a level (by default the bundled one, 11,300 entities with a
hierarchy) and generated entities of the bundled signatures (40% Particle, 30% Body, 20% Ship,
10% Beacon), runs the generated schedule once per frame, and prints a report: the level's
verify and spawn time, memory per signature, time per entity of each system, the schedule, its
speedup on N threads against 1 (and, in paired runs, that of the same systems written by hand
over one Vec per component), the cache efficiency of each pass, and a checksum of the final
world (the same for every thread count).

compile: JSON level to blob (verified against the bundled world's signatures).
verify:  checks a level against the bundled world's signatures.
inspect: counts per component type and per signature, hierarchy depth, bytes.
save:    the world after N frames (default 60; level plus --entities, default 0) to a blob.
simulate: the frame time of the jobs --record wrote on 1 to 64 cores, under global stages and
         under a task graph by store (list scheduling).

Options:
  --level FILE    the level to spawn: a compiled blob or JSON (default: the bundled level)
  --entities N    number of generated entities to spawn besides the level (default 100000)
  --frames N      number of frames to run (default 100)
  --threads N     rayon threads for the parallel run (default: the machine's cores)
  --min-chunk N   minimum rows per parallel chunk, for every system (default: per system)
  --seed N        seed of the initial values (default 1)
  --repeats N     runs on 1 and on N threads, alternated, and as many paired runs; the report
                  uses the median (default 3)
  --record FILE   after the report, runs the frames once more on 1 thread, timing each stage's
                  pass store by store, and writes those jobs, the schedule and the real frame
                  times to FILE for `simulate` (needs `--features record`)
  -h, --help      print this help";

/// Command-line options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub(crate) entities: usize,
    pub(crate) frames: usize,
    pub(crate) threads: usize,
    pub(crate) min_chunk: Option<usize>,
    pub(crate) seed: u64,
    pub(crate) repeats: usize,
    pub(crate) level: Option<PathBuf>,
    pub(crate) record: Option<PathBuf>,
}

pub(crate) fn parse_args(
    args: impl IntoIterator<Item = String>,
) -> Result<Option<Options>, String> {
    let mut opts = Options {
        entities: 100_000,
        frames: 100,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        min_chunk: None,
        seed: 1,
        repeats: 3,
        level: None,
        record: None,
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
        if name == "--record" {
            let v = inline.clone().or_else(|| args.next());
            opts.record = Some(v.ok_or("--record needs a value (a file to write)")?.into());
            continue;
        }
        match name.as_str() {
            "-h" | "--help" => return Ok(None),
            "--entities" => opts.entities = value("a number of entities")? as usize,
            "--frames" => opts.frames = value("a number of frames")? as usize,
            "--seed" => opts.seed = value("an integer seed")?,
            "--repeats" => match value("a number of runs")? {
                0 => return Err("--repeats must be at least 1".into()),
                n => opts.repeats = n as usize,
            },
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
    let max = sigecs::entity::MAX_ENTITIES;
    if opts.entities > max {
        return Err(format!(
            "--entities {} is more than a world can hold ({max})",
            opts.entities
        ));
    }
    Ok(Some(opts))
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
            "--entities 10 --frames=3 --seed 7 --threads 3 --min-chunk 64 --repeats 5",
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
                repeats: 5,
                level: None,
                record: None,
            }
        );
        let o = parse_args(args("--record jobs.csv")).unwrap().unwrap();
        assert_eq!(o.record, Some(PathBuf::from("jobs.csv")));
        assert_eq!(parse_args(args("--help")).unwrap(), None);
    }

    #[test]
    fn rejects_bad_options() {
        let e = parse_args(args("--entities lots")).unwrap_err();
        assert_eq!(e, "--entities expects a number of entities, got `lots`");
        let e = parse_args(args("--record")).unwrap_err();
        assert_eq!(e, "--record needs a value (a file to write)");
        let e = parse_args(args("--frames")).unwrap_err();
        assert_eq!(e, "--frames needs a value (a number of frames)");
        assert_eq!(
            parse_args(args("--fast")).unwrap_err(),
            "unknown option `--fast`"
        );
        assert!(parse_args(args("--entities 5000000"))
            .unwrap_err()
            .contains("more than a world can hold"));
        assert_eq!(
            parse_args(args("--repeats 0")).unwrap_err(),
            "--repeats must be at least 1"
        );
    }
}
