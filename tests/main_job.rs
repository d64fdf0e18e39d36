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
