//! The level tool a crate gives its own world in a few lines: compile JSON levels to blobs,
//! verify a level, and print what a level holds, all checked against the crate's signatures.
//!
//! ```no_run
//! # use sigecs::{level::Registry, WorldModel};
//! # fn levels_main<Model: WorldModel>(level_registry: fn() -> &'static Registry) -> std::process::ExitCode {
//! // src/bin/levels.rs of a crate whose build script generates `Model` and `level_registry()`:
//! // fn main() -> std::process::ExitCode {
//! sigecs::level::cli::main::<Model>(level_registry())
//! // }
//! # }
//! ```
//!
//! `cargo run --bin levels -- compile level.json -o level.bin`, then `verify level.bin` or
//! `inspect level.bin` ([`USAGE`] lists them). [`run`] is the same with the arguments and the
//! output given, for a binary with subcommands of its own. A failure is a message and exit code
//! 1; a malformed command line, exit code 2.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use super::{format::MAGIC, AlignedBlob, EntityCompiler, LevelReport, Registry, VerifyOptions};
use crate::model::WorldModel;
use crate::world::World;

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
    let result = run::<M>(
        registry,
        std::env::args_os().skip(1),
        &mut io::stdout().lock(),
    );
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
                let name = M::stores()
                    .get(store as usize)
                    .map_or("(undeclared set)", |s| s.name);
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
