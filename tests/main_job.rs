//! The main job as a user runs it (`cargo run --release`), here small and in debug: its report
//! names every measure it promises, and the runs on 1 and 2 threads end in the same world.

use std::process::Command;

/// The report of `sigecs` with `args`, which must succeed.
fn report(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sigecs"))
        .args(args)
        .output()
        .expect("the sigecs binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("a UTF-8 report")
}

/// The value after `key` on the line that starts with `start`.
fn after<'a>(report: &'a str, start: &str, key: &str) -> &'a str {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line {start:?} in\n{report}"));
    let rest = &line[line
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} in {line:?}"))
        + key.len()..];
    rest.split_whitespace().next().unwrap()
}

#[test]
fn the_report_gives_all_three_efficiencies_and_one_world_on_any_thread_count() {
    // `--min-chunk 64` makes the passes split, as the bundled 100,000 entities do.
    let r = report(&[
        "--entities",
        "2000",
        "--frames",
        "5",
        "--repeats",
        "1",
        "--threads",
        "2",
        "--min-chunk",
        "64",
    ]);
    let one = after(&r, "1 thread:", "checksum ");
    let two = after(&r, "2 threads:", "checksum ");
    assert_eq!(one, two, "the same world on 1 and 2 threads");
    assert_eq!(after(&r, "checksum:", "checksum: "), two);
    // Memory efficiency, parallel efficiency (with its floor on this machine), cache efficiency.
    assert!(r.contains("memory per signature:"), "{r}");
    assert!(after(&r, "total", "total").parse::<usize>().is_ok(), "{r}");
    let share = after(&r, "parallel efficiency:", "parallel efficiency: ");
    assert!(
        share.ends_with('%') && share != "0.0%",
        "passes split: {share}"
    );
    let machine = after(&r, "the machine at the same moments:", "), took ");
    assert!(machine.parse::<f64>().is_ok(), "{machine}");
    assert!(
        r.contains("the job's passes that split, in the same runs:"),
        "the floor is compared with the job's passes: {r}"
    );
    assert!(r.contains("cache efficiency:"), "{r}");
}

#[test]
fn without_passes_that_split_the_report_says_so() {
    let r = report(&[
        "--entities",
        "2000",
        "--frames",
        "3",
        "--repeats",
        "1",
        "--threads",
        "2",
    ]);
    assert!(r.contains("none of the job's passes split"), "{r}");
    assert!(r.contains("parallel efficiency: 0.0%"), "{r}");
}

#[test]
fn with_no_frames_the_report_times_nothing_and_claims_no_speedup() {
    let r = report(&["--entities", "500", "--frames", "0", "--repeats", "1"]);
    assert!(
        r.contains("ran 0 frames: the speedup and the comparison need --frames 1 or more"),
        "{r}"
    );
    assert!(!r.contains("measured speedup"), "{r}");
    assert!(!r.contains("the machine at the same moments"), "{r}");
    // No system was timed: a dash, not 0.000 ns.
    let line = r.lines().find(|l| l.starts_with("integrate")).unwrap();
    assert!(line.trim_end().ends_with(" -"), "{line}");
    // The layout's figures and the world's checksum are still there.
    assert!(r.contains("cache efficiency:"), "{r}");
    assert_eq!(after(&r, "checksum:", "checksum: ").len(), 16, "{r}");
}

/// `sigecs` with `args`, which must fail: its standard error.
fn failure(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sigecs"))
        .args(args)
        .output()
        .expect("the sigecs binary runs");
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8(out.stderr).expect("UTF-8 errors")
}

#[cfg(feature = "record")]
#[test]
fn recorded_jobs_are_simulated_and_one_core_takes_their_sum() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.csv");
    let jobs_arg = jobs.to_str().unwrap();
    let r = report(&[
        "--entities",
        "3000",
        "--frames",
        "4",
        "--repeats",
        "3",
        "--threads",
        "2",
        "--record",
        jobs_arg,
    ]);
    assert!(r.contains("| cores | global stages µs/frame |"), "{r}");
    let text = std::fs::read_to_string(&jobs).unwrap();
    // The job's one stage: its stages fuse (each row through its systems in order).
    assert!(
        text.contains("# stage,0,parallel,Body Escort Particle Ship\n"),
        "{text}"
    );
    assert!(!text.contains("# stage,1,"), "{text}");
    assert!(
        text.contains("\n# real,1,") && text.contains("\n# real,2,"),
        "{text}"
    );
    // Every frame has the stage's stores in the schedule's order, with their rows, then the
    // respawns.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .collect();
    let frame0: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("0,"))
        .collect();
    let stores: Vec<&str> = frame0
        .iter()
        .filter(|l| l.contains(",store,"))
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    assert_eq!(stores, ["Body", "Escort", "Particle", "Ship"]);
    assert!(
        frame0.last().unwrap().starts_with("0,-,respawn,"),
        "{frame0:?}"
    );
    let particle_rows: usize = frame0[2].split(',').nth(4).unwrap().parse().unwrap();
    assert!(particle_rows > 1000, "{frame0:?}");
    let total_ns: u64 = lines
        .iter()
        .map(|l| l.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum();

    let curves = dir.path().join("curves.csv");
    let sim = report(&["simulate", jobs_arg, "-o", curves.to_str().unwrap()]);
    assert!(sim.starts_with("4 frames of "), "{sim}");
    let curves = std::fs::read_to_string(&curves).unwrap();
    let rows: Vec<Vec<f64>> = curves
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let cores: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(cores, [1.0, 2.0, 4.0, 8.0, 16.0, 64.0]);
    // One core: a frame takes the mean of the frames' work, under either order.
    let mean = total_ns as f64 / 4.0;
    assert!((rows[0][1] - mean).abs() <= 1.0, "{} vs {mean}", rows[0][1]);
    assert_eq!(rows[0][1], rows[0][2]);
    for r in &rows[1..] {
        assert!(r[1] <= rows[0][1] && r[2] <= rows[0][2], "{curves}");
    }
}

#[cfg(not(feature = "record"))]
#[test]
fn record_without_the_feature_says_how_to_build_it() {
    let e = failure(&[
        "--entities",
        "100",
        "--frames",
        "1",
        "--record",
        "unwritten.csv",
    ]);
    assert!(e.contains("--features record"), "{e}");
    assert!(!std::path::Path::new("unwritten.csv").exists());
}

#[test]
fn simulate_refuses_a_missing_or_bad_file() {
    let e = failure(&["simulate"]);
    assert!(e.contains("simulate needs the file --record wrote"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "frame,stage,job,store,rows,ns\n0,3,store,Body,1,1\n").unwrap();
    let e = failure(&["simulate", bad.to_str().unwrap()]);
    assert!(e.contains("line 2: no such stage"), "{e}");
    let e = failure(&["--frames", "0", "--record", "x.csv"]);
    assert!(e.contains("--record"), "{e}");
}
