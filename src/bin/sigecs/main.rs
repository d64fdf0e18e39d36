//! The main job: spawn a level and generated entities of the bundled
//! signatures, run its systems for some frames, and report the level's spawn time, memory per
//! signature, memory efficiency, time per entity for each system, and a checksum of every
//! component value (so two runs can be compared). Also the level tools: `compile`,
//! `inspect` and `save`.

mod checksum;
mod level_tools;
mod levels;
mod options;
mod population;
mod report;

use crate::{level_tools::*, options::*, report::*};
use std::process::ExitCode;

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
