//! Parallel execution: how a store's rows are split across rayon's pool, and the build-time
//! schedule of stages that the generated `World::run_schedule` follows.
//!
//! **Within a store**, a pass over the rows is cut into chunks of at least `min_chunk` rows
//! that rayon's threads take in turn; each chunk runs as a plain sequential loop over slices, so
//! the inner loop is exactly the single-threaded one. A store with fewer than `2 × min_chunk`
//! rows (or a pool of one thread) runs inline on the calling thread: splitting light work costs
//! more than it gains, and parallelism must never make a pass slower than a sequential loop.
//!
//! **Across systems**, the generator places systems into stages in declaration order: a
//! system goes into the first stage after every earlier system it conflicts with (one writes a
//! component or resource the other reads or writes). A stage runs as one fused pass per store:
//! each row runs every system of the stage that matches the store, reading the row once.
//! Structural changes requested through [`Commands`] are applied at the end of the stage in row
//! order, so a parallel run gives the same world as a sequential one.

use crate::component::{Component, Signature};
use crate::entity::Entity;
use std::any::{Any, TypeId};
use std::fmt;

/// Default minimum rows per parallel chunk, from `cargo bench --bench parallel` on the 2-core
/// development machine. Handing a pass to rayon costs a few µs, so a split pays only when the
/// pass is long enough, and the lightest systems need the longest passes: position += velocity
/// (about 0.75 ns per row, group `min_chunk`) already ran 1.6× faster split at 16,384 rows, but
/// the `schedule` workload (swapping two f32 per row, about 0.25 ns, over several small stores)
/// ran 1.44× *slower* on two threads than inline with this default at 4,096. At 16,384 (a store
/// is split from 32,768 rows on) it stays within 2% of the sequential loop. Heavier systems
/// lower it with `#[system(min_chunk = N)]`.
pub const DEFAULT_MIN_CHUNK: usize = 16_384;

/// Chunks handed out per thread, so uneven progress of threads still balances.
const CHUNKS_PER_THREAD: usize = 4;

/// Rows per chunk for a pass over `len` rows; `len` itself (one chunk: run inline) when the
/// pass is too small to split or the pool has one thread.
#[inline]
pub fn chunk_len(len: usize, min_chunk: usize) -> usize {
    let min_chunk = min_chunk.max(1);
    // The size test first: asking rayon for its thread count is not free (and starts its
    // global pool), and most stores are too small to split anyway.
    if len < 2 * min_chunk {
        return len.max(1);
    }
    let threads = rayon::current_num_threads();
    if threads <= 1 {
        return len;
    }
    len.div_ceil(threads * CHUNKS_PER_THREAD).max(min_chunk)
}

/// Structural changes requested by a system (`commands: &mut Commands`), applied by the world
/// at the end of the system's stage (or of `run_<system>`), in row order.
///
/// ```
/// use ecs_core::schedule::Commands;
/// use ecs_core::Entity;
/// let mut commands = Commands::new();
/// commands.despawn(Entity::new(3, 0));
/// assert_eq!(commands.len(), 1);
/// ```
#[derive(Default)]
pub struct Commands {
    ops: Vec<Command>,
}

impl fmt::Debug for Commands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.ops.len())
            .finish()
    }
}

impl Commands {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of requested changes.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when nothing was requested.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Spawns an entity of signature `S`.
    pub fn spawn<S: Signature + Send>(&mut self, value: S) {
        self.ops.push(Command::Spawn {
            value: Box::new(value),
            type_name: std::any::type_name::<S>(),
        });
    }

    /// Despawns `entity` (nothing happens if it is already gone).
    pub fn despawn(&mut self, entity: Entity) {
        self.ops.push(Command::Despawn(entity));
    }

    /// Inserts (or replaces) a component.
    pub fn insert<C: Component>(&mut self, entity: Entity, component: C) {
        self.ops.push(Command::Insert {
            entity,
            value: Box::new(component),
            type_name: std::any::type_name::<C>(),
        });
    }

    /// Removes a component.
    pub fn remove<C: Component>(&mut self, entity: Entity) {
        self.ops.push(Command::Remove {
            entity,
            type_id: TypeId::of::<C>(),
            type_name: std::any::type_name::<C>(),
        });
    }

    /// Moves out every change, in request order, for the world to apply.
    pub fn drain(&mut self) -> impl Iterator<Item = Command> + '_ {
        self.ops.drain(..)
    }
}

/// A deferred structural change, type-erased: the world dispatches on the `TypeId` of the value
/// to its signatures and components.
pub enum Command {
    /// Spawn a value of some signature.
    Spawn {
        /// The signature value.
        value: Box<dyn Any + Send>,
        /// Its type's name, for errors.
        type_name: &'static str,
    },
    /// Despawn an entity.
    Despawn(Entity),
    /// Insert a component value.
    Insert {
        /// The entity.
        entity: Entity,
        /// The component value.
        value: Box<dyn Any + Send>,
        /// Its type's name, for errors.
        type_name: &'static str,
    },
    /// Remove a component.
    Remove {
        /// The entity.
        entity: Entity,
        /// The component's type.
        type_id: TypeId,
        /// Its type's name, for errors.
        type_name: &'static str,
    },
}

/// One stage of a generated schedule: systems that share no conflicting access, run as one
/// fused pass per store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage's systems, in declaration order.
    pub systems: &'static [&'static str],
    /// Per store the stage visits: the signature name and the systems that run on its rows.
    pub stores: &'static [(&'static str, &'static [&'static str])],
    /// False when a system of the stage writes a resource: the stage then runs sequentially.
    pub parallel: bool,
}

/// The generated schedule: stages in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The stages.
    pub stages: &'static [Stage],
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, stage) in self.stages.iter().enumerate() {
            writeln!(
                f,
                "stage {i}{}: {}",
                if stage.parallel {
                    ""
                } else {
                    " (sequential: writes a resource)"
                },
                stage.systems.join(", ")
            )?;
            for (store, systems) in stage.stores {
                writeln!(f, "  {store:<22} {}", systems.join(" + "))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_passes_run_inline() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            assert_eq!(chunk_len(100, 64), 100, "under 2 × min_chunk: one chunk");
            assert_eq!(chunk_len(0, 64), 1);
            let c = chunk_len(100_000, 1000);
            assert!((1000..100_000).contains(&c), "{c}");
            assert_eq!(c, 100_000usize.div_ceil(8));
            assert_eq!(chunk_len(10_000, 4000), 4000, "never below min_chunk");
            assert_eq!(
                chunk_len(10, 0),
                2,
                "min_chunk 0 acts as 1: 10 rows in 8 pieces"
            );
        });
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        one.install(|| assert_eq!(chunk_len(1_000_000, 1), 1_000_000));
    }

    #[test]
    fn commands_keep_request_order() {
        let mut c = Commands::new();
        c.despawn(Entity::new(1, 0));
        c.remove::<Marker>(Entity::new(2, 0));
        c.insert(Entity::new(3, 0), Marker);
        assert_eq!(c.len(), 3);
        let kinds: Vec<&str> = c
            .drain()
            .map(|a| match a {
                Command::Despawn(_) => "despawn",
                Command::Remove { type_id, .. } => {
                    assert_eq!(type_id, TypeId::of::<Marker>());
                    "remove"
                }
                Command::Insert { type_name, .. } => {
                    assert!(type_name.ends_with("Marker"));
                    "insert"
                }
                Command::Spawn { .. } => "spawn",
            })
            .collect();
        assert_eq!(kinds, ["despawn", "remove", "insert"]);
        assert!(c.is_empty());
    }

    struct Marker;
    impl Component for Marker {
        const COLD: bool = false;
    }

    #[test]
    fn schedule_prints_stages_and_stores() {
        static S: Schedule = Schedule {
            stages: &[
                Stage {
                    systems: &["a", "b"],
                    stores: &[("Body", &["a", "b"]), ("Particle", &["b"])],
                    parallel: true,
                },
                Stage {
                    systems: &["c"],
                    stores: &[("Body", &["c"])],
                    parallel: false,
                },
            ],
        };
        let text = S.to_string();
        assert!(text.contains("stage 0: a, b"), "{text}");
        assert!(text.contains("Body                   a + b"), "{text}");
        assert!(
            text.contains("stage 1 (sequential: writes a resource): c"),
            "{text}"
        );
    }
}
