//! Running systems: how a pass's rows are split across rayon's pool (`parts`), the
//! structural changes systems request ([`Commands`]), and the build-time schedule of stages
//! ([`Schedule`]).
//!
//! **Within a pass**, rows are cut into chunks of at least `min_chunk` rows; each chunk runs
//! as a plain sequential loop over slices, so the inner loop is exactly the single-threaded
//! one, and a pass with fewer than `2 × min_chunk` rows runs inline: splitting light work costs
//! more than it gains. A pass over many small stores counts all their rows, so it shares the
//! cores too.
//!
//! **Across systems**, the generator places systems into stages in declaration order, each in
//! the first stage after every earlier system it conflicts with (one writes a component or
//! resource the other reads or writes). A system with `Commands` goes no earlier than the last
//! stage of any earlier system, and every later system goes after it, so its changes apply
//! exactly where a sequential run would apply them. A system that writes a resource runs alone
//! in its stage, on one thread. A stage runs as one fused pass: each row runs every system of
//! the stage that matches its store, in run order, reading the row once. Then consecutive
//! stages fuse into one when their systems take only their row's components and resources
//! and events they read (none writes a resource, runs once per frame, is change-filtered or
//! takes a sparse component) and the earlier ones have no `Commands`: a system's
//! values for a row then depend on nothing another row's systems write, so a row going
//! through all their systems in order gets what the stages one after the other give, and its
//! work waits only for the earlier work on the same row instead of the whole previous stage
//! ([`Stage::ordered`]). So `run_schedule` gives the world that `run_all` (declaration order)
//! gives.

mod commands;
pub(crate) mod fields;
#[doc(hidden)]
pub(crate) mod parts;
mod pass_macro;
mod plan;
pub(crate) mod rows_macro;
// A measuring tool of the runner's cost model (the main job's `--record`), not an API for
// games: hidden.
#[cfg(feature = "record")]
#[doc(hidden)]
pub mod record;
pub(crate) mod sparse;

pub use commands::Commands;
pub(crate) use commands::{Command, RawSink, SpawnValue};
pub use plan::{Schedule, Stage};

/// Default minimum rows per parallel chunk, from `cargo bench --bench parallel` on the 2-core
/// development machine. Handing a pass to rayon costs a few µs, so a split pays only when the
/// pass is long enough, and the lightest systems need the longest passes: position += velocity
/// (about 0.75 ns per row, group `min_chunk`) already ran 1.6× faster split at 16,384 rows, but
/// the `schedule` workload (swapping two f32 per row, about 0.25 ns) ran 1.44× *slower* on two
/// threads than inline at 4,096. Heavier systems lower it with `#[system(min_chunk = N)]`.
pub const DEFAULT_MIN_CHUNK: usize = 16_384;
