//! Runs the example and checks every printed position against the orbits worked out with
//! trigonometry (f64), without matrices: a body turned by the angles of all its ancestors and
//! its own sits `radius` out from its parent along that summed angle.

use std::process::Command;

/// Seconds per frame, and each body's (radius, speed in radians a second), as in `src/main.rs`.
const DT: f64 = 0.1;
const SUN: (f64, f64) = (0.0, 0.1);
const EARTH: (f64, f64) = (10.0, 0.5);
const MOON: (f64, f64) = (2.0, 2.0);
const PROBE: (f64, f64) = (0.5, 3.0);

/// The position of the last body of `chain` (root first) after `frame` frames.
fn position(chain: &[(f64, f64)], frame: u32) -> (f64, f64) {
    let t = DT * frame as f64;
    let (mut x, mut y, mut angle) = (0.0, 0.0, 0.0);
    for &(radius, speed) in chain {
        angle += speed * t;
        x += radius * angle.cos();
        y += radius * angle.sin();
    }
    (x, y)
}

/// The bodies printed at `frame`, with their expected positions.
fn expected(frame: u32) -> Vec<(&'static str, (f64, f64))> {
    let mut bodies = vec![
        ("sun", position(&[SUN], frame)),
        ("earth", position(&[SUN, EARTH], frame)),
    ];
    if frame <= 10 {
        bodies.push(("moon", position(&[SUN, EARTH, MOON], frame)));
        bodies.push(("probe", position(&[SUN, EARTH, MOON, PROBE], frame)));
    } else {
        // Re-linked below the earth after frame 10, with the same orbit.
        bodies.push(("probe", position(&[SUN, EARTH, PROBE], frame)));
    }
    bodies
}

/// The numbers in `(x, y)` groups of a line.
fn numbers(line: &str) -> Vec<f64> {
    line.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter(|s| !s.is_empty() && *s != ".." && *s != "-")
        .map(|s| s.parse().unwrap())
        .collect()
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() < 2e-3 // printed with 3 decimals; f32 matrices
}

#[test]
fn world_positions_follow_the_parent_chain() {
    let out = Command::new(env!("CARGO_BIN_EXE_transform_world"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();

    for frame in [5, 10, 15, 20] {
        assert_eq!(lines.next(), Some(format!("frame {frame}").as_str()));
        let bodies = expected(frame);
        for (name, (x, y)) in &bodies {
            let line = lines.next().unwrap();
            assert!(line.trim_start().starts_with(name), "{line}");
            let got = numbers(line);
            assert!(
                close(got[0], *x) && close(got[1], *y),
                "frame {frame}: {line}, expected ({x:.3}, {y:.3})"
            );
        }
        // The bounds are those of the printed bodies.
        let line = lines.next().unwrap();
        assert!(line.trim_start().starts_with("bounds"), "{line}");
        let got = numbers(line);
        let xs = bodies.iter().map(|b| b.1 .0);
        let ys = bodies.iter().map(|b| b.1 .1);
        let want = [
            xs.clone().fold(f64::INFINITY, f64::min),
            ys.clone().fold(f64::INFINITY, f64::min),
            xs.fold(f64::NEG_INFINITY, f64::max),
            ys.fold(f64::NEG_INFINITY, f64::max),
        ];
        for (g, w) in got.iter().zip(want) {
            assert!(close(*g, w), "frame {frame}: {line}, expected {want:?}");
        }
        if frame == 10 {
            assert!(lines.next().unwrap().contains("the moon is gone"));
        }
    }
    // The moon left the world and the hierarchy.
    assert_eq!(lines.next(), Some("bodies: 3, transforms: 3"));
    assert_eq!(lines.next(), None);
}
