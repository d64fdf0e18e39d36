//! The main job: spawn a level and generated entities of the bundled
//! signatures, run its systems for some frames, and report the level's spawn time, memory per
//! signature, memory efficiency, time per entity for each system, and a checksum of every
//! component value (so two runs can be compared). Also the level tools: `compile`, `verify`
//! and `inspect` (`sigecs_level::cli`, for the bundled world), `save`, and `simulate` (the
//! frame time of recorded jobs on more cores, under global stages and a task graph).

mod checksum;
mod hand;
mod jobs;
mod levels;
mod options;
mod population;
mod record;
mod report;
mod save;
mod simulate;

use crate::{options::*, report::*, save::*};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("compile" | "verify" | "inspect") => {
            return sigecs_level::cli::main::<sigecs_demo::Model>(sigecs_demo::level_registry());
        }
        Some("save") => {
            args.remove(0);
            save_cmd(args)
        }
        Some("simulate") => {
            args.remove(0);
            record::simulate_cmd(args)
        }
        _ => match parse_args(args) {
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
