//! The level tool a crate gives its own world in a few lines: compile JSON levels to blobs,
//! verify a level, and print what a level holds, all checked against the crate's signatures.
//!
//! The tool runs where the world is: in the game's own binary, as a subcommand. That works
//! whether the world is included in `main.rs` (the quick start's layout) or in a library crate
//! (then `main.rs` names `my_game::Model` and `my_game::level_registry`):
//!
//! ```no_run
//! # use sigecs::WorldModel;
//! # use sigecs_level::Registry;
//! # fn level_registry() -> &'static Registry {
//! #     Box::leak(Box::new(Registry::new([]).expect("an empty registry is valid")))
//! # }
//! # fn game<Model: WorldModel>() -> std::process::ExitCode {
//! // src/main.rs, where the world is included (`Model`, `level_registry()`):
//! // fn main() -> std::process::ExitCode {
//! if let Some(code) = sigecs_level::cli::subcommand::<Model>("level", level_registry()) {
//!     return code; // `cargo run -- level compile level.json -o level.bin`
//! }
//! // ... the game ...
//! # std::process::ExitCode::SUCCESS
//! // }
//! # }
//! ```
//!
//! `cargo run -- level compile level.json -o level.bin`, then `level verify level.bin` or
//! `level inspect level.bin` ([`USAGE`] lists them). [`main`] runs the tool on all of the
//! process's arguments (a binary that is only the tool); [`run`] takes the arguments and the
//! output. A failure is a message and exit code 1; a malformed command line, exit code 2.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use sigecs::{World, WorldModel};

use super::format::MAGIC;
use super::{AlignedBlob, EntityCompiler, LevelReport, Registry, VerifyOptions, WorldLevels};

/// The subcommands and their arguments.
pub const USAGE: &str = "\
compile LEVEL.json -o LEVEL.bin   compile a JSON level to a blob, verified against the world
verify LEVEL                      verify a level (a blob or JSON) against the world
inspect LEVEL                     entities, hierarchy depth, counts and bytes per component
                                  type, entities per signature";

/// Why the level tool stopped: a malformed command line (exit code 2) or a failure of the
/// command (a file that cannot be read or written, a level that does not compile or verify:
/// exit code 1). Prints as its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliError {
    message: String,
    usage: bool,
}

impl CliError {
    /// A malformed command line.
    fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            usage: true,
        }
    }

    /// A command that failed.
    fn failed(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            usage: false,
        }
    }

    /// Whether the command line was malformed (rather than the command failing).
    pub fn is_usage(&self) -> bool {
        self.usage
    }

    /// The process exit code: 2 for a malformed command line, 1 for a failure.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(if self.usage { 2 } else { 1 })
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Runs the level tool on the process's arguments (after the program name) for the world of
/// model `M`: prints the result on stdout, or the error (and [`USAGE`] for a malformed command
/// line) on stderr, and returns the exit code.
pub fn main<M: WorldModel>(registry: &Registry) -> ExitCode {
    report(run::<M>(
        registry,
        std::env::args_os().skip(1),
        &mut io::stdout().lock(),
    ))
}

/// The level tool as a subcommand named `name` of a game's binary: when the process's first
/// argument is `name`, runs the tool on the arguments after it (as [`main`] does) and returns
/// its exit code; otherwise `None`, and the game goes on.
pub fn subcommand<M: WorldModel>(name: &str, registry: &Registry) -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != *name {
        return None;
    }
    Some(report(run::<M>(registry, args, &mut io::stdout().lock())))
}

/// Prints a failure (with [`USAGE`] for a malformed command line) and gives the exit code.
fn report(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.is_usage() {
                eprintln!("error: {e}\n\nUsage:\n{USAGE}");
            } else {
                eprintln!("error: {e}");
            }
            e.exit_code()
        }
    }
}

/// Runs one subcommand of [`USAGE`] (`args` starts with its name) for the world of model `M`
/// and the components of `registry`, writing its report to `out`. `help` (or `-h`, `--help`)
/// writes [`USAGE`].
pub fn run<M: WorldModel>(
    registry: &Registry,
    args: impl IntoIterator<Item = impl Into<OsString>>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut args = args.into_iter().map(Into::into);
    let Some(command) = args.next() else {
        return Err(CliError::usage("no command given"));
    };
    let rest: Vec<OsString> = args.collect();
    let written = |r: io::Result<()>| r.map_err(|e| CliError::failed(format!("output: {e}")));
    match command.to_str() {
        Some("compile") => compile::<M>(registry, rest, out),
        Some("verify") => {
            let path = one_path("verify", rest)?;
            let blob = read_level(&path, registry)?;
            let level = World::<M>::new()
                .verify_level(&blob, registry, &VerifyOptions::default())
                .map_err(|e| CliError::failed(format!("{}: {e}", path.display())))?;
            written(writeln!(
                out,
                "{}: a valid level, {} entities, {} bytes",
                path.display(),
                level.num_entities(),
                blob.len()
            ))
        }
        Some("inspect") => {
            let path = one_path("inspect", rest)?;
            let blob = read_level(&path, registry)?;
            let level = World::<M>::new()
                .verify_level(&blob, registry, &VerifyOptions::default())
                .map_err(|e| CliError::failed(format!("{}: {e}", path.display())))?;
            written(writeln!(out, "{}", LevelReport::of(&level)))?;
            written(writeln!(out, "per signature:"))?;
            for (store, count) in level.store_counts() {
                // Sets no signature declares get store ids past the declared ones.
                let name = World::<M>::signature_names()
                    .nth(store as usize)
                    .unwrap_or("(undeclared set)");
                written(writeln!(out, "  {name:<16} {count:>8} entities"))?;
            }
            Ok(())
        }
        Some("help" | "-h" | "--help") => written(writeln!(out, "{USAGE}")),
        _ => Err(CliError::usage(format!(
            "unknown command `{}` (expected compile, verify or inspect)",
            command.to_string_lossy()
        ))),
    }
}

/// `compile LEVEL.json -o LEVEL.bin`.
fn compile<M: WorldModel>(
    registry: &Registry,
    args: Vec<OsString>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut output = None;
    let mut inputs = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        match a.to_str() {
            Some("-o" | "--output") => {
                let v = args
                    .next()
                    .ok_or_else(|| CliError::usage("-o needs a file name"))?;
                output = Some(PathBuf::from(v));
            }
            Some(s) if s.starts_with("--output=") => {
                output = Some(PathBuf::from(&s["--output=".len()..]));
            }
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    let output = output.ok_or_else(|| CliError::usage("compile needs -o OUTPUT"))?;
    let [input] = inputs.as_slice() else {
        return Err(CliError::usage("compile takes one input file"));
    };
    let at = |e: &dyn fmt::Display| CliError::failed(format!("{}: {e}", input.display()));
    let text = std::fs::read_to_string(input).map_err(|e| at(&e))?;
    let started = Instant::now();
    let blob = EntityCompiler::new(registry)
        .compile_str(&text)
        .map_err(|e| at(&e))?;
    let took = started.elapsed();
    let level = World::<M>::new()
        .verify_level(
            AlignedBlob::from_bytes(&blob),
            registry,
            &VerifyOptions::default(),
        )
        .map_err(|e| at(&e))?;
    std::fs::write(&output, &blob)
        .map_err(|e| CliError::failed(format!("{}: {e}", output.display())))?;
    writeln!(
        out,
        "{} -> {}: {} entities, {} bytes (compiled in {took:.2?})",
        input.display(),
        output.display(),
        level.num_entities(),
        blob.len()
    )
    .map_err(|e| CliError::failed(format!("output: {e}")))
}

/// The one file argument of `command`.
fn one_path(command: &str, args: Vec<OsString>) -> Result<PathBuf, CliError> {
    match <[OsString; 1]>::try_from(args) {
        Ok([path]) => Ok(PathBuf::from(path)),
        Err(_) => Err(CliError::usage(format!("{command} takes one file"))),
    }
}

/// Reads a level file: a compiled blob as it is (it starts with the format's magic), anything
/// else compiled as JSON with `registry`. Not verified.
pub fn read_level(path: &Path, registry: &Registry) -> Result<AlignedBlob, CliError> {
    let at = |e: &dyn fmt::Display| CliError::failed(format!("{}: {e}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| at(&e))?;
    if bytes.starts_with(&MAGIC) {
        return Ok(AlignedBlob::from_bytes(&bytes));
    }
    let text = String::from_utf8(bytes).map_err(|_| at(&"neither a compiled level nor JSON"))?;
    let blob = EntityCompiler::new(registry)
        .compile_str(&text)
        .map_err(|e| at(&e))?;
    Ok(AlignedBlob::from_bytes(&blob))
}
