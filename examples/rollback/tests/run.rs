//! Runs the game as two processes over UDP on 127.0.0.1, as a player would start them, and
//! checks that both print the same checksums for the same frames.

use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn peer(local: u16, remote: u16, threads: usize) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rollback"))
        .args([
            "--local-port",
            &local.to_string(),
            "--remote",
            &format!("127.0.0.1:{remote}"),
            "--frames",
            "300",
            "--threads",
            &threads.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` at most until `deadline`, killing it past that.
fn finish(mut child: Child, deadline: Instant) -> (bool, String, String) {
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn two_processes_print_the_same_checksums() {
    let (a, b) = (free_port(), free_port());
    // One peer on one thread, the other on two: a deterministic world gives the same state.
    let (pa, pb) = (peer(a, b, 1), peer(b, a, 2));
    let deadline = Instant::now() + Duration::from_secs(90);
    let (ok_a, out_a, err_a) = finish(pa, deadline);
    let (ok_b, out_b, err_b) = finish(pb, deadline);
    assert!(ok_a && ok_b, "peer a: {err_a}\npeer b: {err_b}");
    let lines: Vec<&str> = out_a.lines().collect();
    assert_eq!(lines.len(), 5, "frames 60 to 300: {out_a}");
    for (line, frame) in lines.iter().zip((60..=300).step_by(60)) {
        assert!(
            line.starts_with(&format!("frame {frame} checksum ")),
            "{line}"
        );
    }
    assert_eq!(out_a, out_b, "both peers reach the same states");
}
