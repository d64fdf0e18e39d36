//! One peer of the two-player game, over UDP on 127.0.0.1:
//!
//! ```text
//! cargo run -p rollback -- --local-port 7000 --remote 127.0.0.1:7001
//! cargo run -p rollback -- --local-port 7001 --remote 127.0.0.1:7000
//! ```
//!
//! Each plays its player's scripted inputs (the lower port is player 0), rolls back when the
//! other's inputs arrive late, and prints the checksum of every 60th frame once GGRS has
//! confirmed it: both print the same lines. Options: `--frames N` (default 600), `--threads N`
//! (rayon threads; default all).

use ggrs::{DesyncDetection, GgrsError, GgrsEvent, PlayerType, SessionBuilder, SessionState};
use rollback::{input, new_world, run_frame, GameConfig, LoopbackSocket};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Options {
    local_port: u16,
    remote: SocketAddr,
    frames: i32,
    threads: Option<usize>,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let (mut local_port, mut remote, mut frames, mut threads) = (None, None, 600, None);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--local-port" => {
                local_port = Some(value()?.parse().map_err(|e| format!("--local-port: {e}"))?)
            }
            "--remote" => remote = Some(value()?.parse().map_err(|e| format!("--remote: {e}"))?),
            "--frames" => frames = value()?.parse().map_err(|e| format!("--frames: {e}"))?,
            "--threads" => threads = Some(value()?.parse().map_err(|e| format!("--threads: {e}"))?),
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Options {
        local_port: local_port.ok_or("--local-port is required")?,
        remote: remote.ok_or("--remote is required")?,
        frames,
        threads,
    })
}

fn main() -> ExitCode {
    let opts = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\nusage: rollback --local-port PORT --remote 127.0.0.1:PORT [--frames N] [--threads N]");
            return ExitCode::from(2);
        }
    };
    if let Some(n) = opts.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .expect("the global pool is built once");
    }
    match play(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn play(opts: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let me = usize::from(opts.local_port > opts.remote.port());
    let socket = LoopbackSocket::bind(opts.local_port)?;
    let mut session = SessionBuilder::<GameConfig>::new()
        .with_num_players(2)?
        .with_input_delay(2)
        .with_max_prediction_window(8)
        .with_desync_detection_mode(DesyncDetection::On { interval: 10 })
        .add_player(PlayerType::Local, me)?
        .add_player(PlayerType::Remote(opts.remote), 1 - me)?
        .start_p2p_session(socket)?;
    let mut world = new_world();
    let mut checksums: BTreeMap<i32, u64> = BTreeMap::new();
    let mut printed = 0;
    let start = Instant::now();
    // Past the last frame, run a little longer so that the other peer confirms it too.
    let mut done_at: Option<Instant> = None;
    loop {
        if start.elapsed() > Duration::from_secs(60) {
            return Err("the other peer did not keep up within 60 s".into());
        }
        session.poll_remote_clients();
        for event in session.events() {
            if let GgrsEvent::DesyncDetected { frame, .. } = event {
                return Err(format!("desync detected at frame {frame}").into());
            }
            if let GgrsEvent::Disconnected { .. } = event {
                if done_at.is_some() {
                    return Ok(());
                }
                return Err("the other peer disconnected".into());
            }
        }
        if session.current_state() == SessionState::Running {
            let frame = session.current_frame();
            session.add_local_input(me, input(me, frame))?;
            match session.advance_frame() {
                Ok(requests) => {
                    let saved = sigecs_ggrs::handle_requests(&mut world, requests, |w, inputs| {
                        run_frame(w, [inputs[0].0, inputs[1].0])
                    })?;
                    checksums.extend(saved);
                }
                Err(GgrsError::PredictionThreshold) => {}
                Err(e) => return Err(e.into()),
            }
            // A frame's checksum is final once GGRS has both players' inputs for it (and the
            // frame was saved: the local inputs run `input_delay` frames ahead).
            let last = session.confirmed_frame().min(session.current_frame() - 1);
            while printed + 60 <= last.min(opts.frames) {
                printed += 60;
                println!("frame {printed} checksum {:016x}", checksums[&printed]);
            }
            checksums.retain(|&f, _| f > printed);
            if printed + 60 > opts.frames && done_at.is_none() {
                done_at = Some(Instant::now());
            }
        }
        if done_at.is_some_and(|t| t.elapsed() > Duration::from_millis(1500)) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
