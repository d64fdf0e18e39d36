//! World states: the whole simulated state of a world as a value that can be saved, loaded
//! back bit for bit and hashed, for rollback networking (GGRS), lockstep checks and replays.
//!
//! A world opts in with `sigecs_build::Builder::rollback(true)` (a world that does not has no
//! such methods and pays nothing). Then `world.save_state(&mut state)` copies the world into a
//! [`WorldState`] (`state.checksum()` hashes it), `world.load_state(&state)` makes the world that
//! state again, and `world.checksum()` hashes the world as it is. The README's "Rollback and
//! multiplayer" runs them (it is tested); `examples/rollback` is a two-player game on GGRS.
//!
//! # What a state holds
//!
//! Everything a frame changes: every declared and dynamic store (entity ids, row order,
//! component values, change records and capacities), the sparse sets, the entity ids
//! (generations, the free queue, pending reservations: the next spawn after a load returns
//! the id it returned after the save), the world's transform hierarchy (feature `transform`),
//! the resources, the event queues and every reader's cursor, the change clock and each
//! system's last run. After [`World::load_state`](crate::World) the world is the one that was
//! saved: same ids, iteration order, query and system results, [`stats`](crate::World::stats)
//! and [`undeclared`](crate::World::undeclared); its invariants hold. Settings are not state
//! and a load keeps them: `set_min_chunk`, `set_deterministic`, the measured pass costs, the
//! command time, the entity manager's destroy hooks (a load runs none).
//!
//! Values are copied with `Clone` (as bytes for a type that derives `Copy`); in an opted-in
//! world a component, resource or event type that is not `Clone` is a build error naming it.
//!
//! # `#[component(no_rollback)]`
//!
//! A component that is not part of the simulation (a render handle, a sound) can be marked
//! `no_rollback`: states do not hold its values, it needs `Default` instead of `Clone`, and a
//! load treats it so:
//!
//! - an entity that has it both now and in the loaded state **keeps the value it has now**
//!   (moved with the entity if its row changes);
//! - a value on an entity the load removes, or that has no such component in the loaded
//!   state, **is dropped**;
//! - an entity that has it in the loaded state but not now (it was despawned since the save,
//!   or the component removed) **gets `Default::default()`**.
//!
//! Its values enter no checksum. Simulation must not depend on them: a peer that rolled back
//! holds other values than one that did not.
//!
//! # Cost: incremental saves and loads
//!
//! A [`WorldState`] is a reusable buffer: saving into it again reuses its allocations (values
//! are `clone_from`ed over the old ones), and copies only what was written since that buffer
//! was last saved from this world, per column and chunk of 256
//! rows, using the change records the stores keep for change filters. A load into the world a
//! state was saved from copies only what changed since that save. Sparse sets, resources,
//! events, the entity ids and the hierarchy are copied whole. A state from another world of
//! the same type (or from a [`Clone`]) is loaded whole.
//!
//! GGRS keeps the states of its last few frames; [`StateRing`] is the same pattern for a game
//! of its own: one buffer per frame slot, each knowing what it last saved.
//!
//! # Checksum
//!
//! [`WorldState::checksum`] is a 64-bit XXH3 hash of the state saved;
//! [`World::checksum`](crate::World) computes the same without a state. A save hashes nothing:
//! the state's first checksum after it hashes the chunks that save copied and reuses the hashes
//! of the others, so a save and a checksum cost what was copied, and a save whose checksum
//! nobody asks for costs only its copy. It covers, in this order: the model's fingerprint, the
//! change clock, the entity ids, every store (row count, then per chunk the entity ids, each
//! hashable component's values, each component's change version and the chunk's add version:
//! what `changed` and `added` filters answer), the sparse sets, the resources, the event
//! queues, the readers' cursors, the systems' last runs and the hierarchy. A value is hashed as
//! its bytes when its type derives bytemuck's `Pod` or `NoUninit` (every byte initialised, no
//! padding, no pointer), else through its `Hash` impl when it derives `Hash` (a `String`
//! contributes its text, not its heap address), else not at all (a component of neither kind
//! still counts through its entity and store). The build script decides from the derives. Equal
//! states have equal checksums on any thread count (a deterministic world), in every run and
//! process of a build.
//!
//! # Errors and panics
//!
//! A load of a state saved by another world type, never saved, or whose save panicked is a
//! [`StateError`] and changes nothing. A panicking `Clone` during a save leaves the world as
//! it was and the state unusable (an error to load; the next save rewrites it whole). A
//! panicking `Clone` or `Default` during a load leaves the world as it was: the load clones
//! everything before it changes anything. A panicking `Drop` of a value a load replaces runs
//! once the load is complete; every value is dropped exactly once.

pub(crate) mod hash;
pub(crate) mod ops;

#[doc(hidden)]
pub use hash::StateHasher;
pub use ops::StateModel;

use crate::entity::EntityImage;
use crate::storage::{SparseImage, StoreImage};
use ops::StateTables;
use std::any::{Any, TypeId};
use std::fmt;
use std::sync::OnceLock;

/// Clones a state's resources (of the model that saved it).
pub(crate) type CloneResources = fn(&(dyn Any + Send + Sync)) -> Box<dyn Any + Send + Sync>;

/// Computes the checksum of a state (of the model that saved it).
pub(crate) type HashState = fn(&WorldState) -> u64;

/// The model a state was saved from.
#[derive(Clone, Copy)]
pub(crate) struct Origin {
    pub(crate) model: TypeId,
    pub(crate) name: &'static str,
    pub(crate) tables: &'static StateTables,
    pub(crate) fingerprint: u64,
}

/// The simulated state of a world, saved by `World::save_state` and loaded back by
/// `World::load_state` (see the [module docs](self)). A reusable buffer: save into the same
/// state again to reuse its allocations and copy only what changed.
pub struct WorldState {
    pub(crate) origin: Option<Origin>,
    /// The world it was last saved from (its instance number), 0 for none.
    pub(crate) source: u64,
    /// The stamp from which on a write is newer than this state.
    pub(crate) reference: u64,
    /// False until a save finishes, and after a save that panicked.
    pub(crate) complete: bool,
    /// The checksum, once asked for after the last save.
    pub(crate) checksum: OnceLock<u64>,
    /// How to compute it (set by the save).
    pub(crate) hash_state: Option<HashState>,
    pub(crate) tick: u64,
    pub(crate) entities: EntityImage,
    /// The location of every slot of `entities` (`World`'s table).
    pub(crate) locations: Vec<crate::world::Location>,
    pub(crate) stores: Vec<StoreImage>,
    /// Per dynamic store: (peak rows, moves).
    pub(crate) usage: Vec<(usize, u64)>,
    /// Per sparse component, in component id order.
    pub(crate) sparse: Vec<SparseImage>,
    pub(crate) resources: Option<Box<dyn Any + Send + Sync>>,
    pub(crate) clone_resources: Option<CloneResources>,
    pub(crate) events: Vec<Option<Box<dyn Any + Send + Sync>>>,
    pub(crate) cursors: Vec<u64>,
    pub(crate) last_run: Vec<u64>,
    #[cfg(feature = "transform")]
    pub(crate) hierarchy: crate::transform::TransformManager,
}

impl Default for WorldState {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for WorldState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorldState")
            .field("world", &self.origin.map(|o| o.name))
            .field("complete", &self.complete)
            .field("entities", &self.len())
            .field("checksum", &self.checksum.get().filter(|_| self.complete))
            .finish_non_exhaustive()
    }
}

impl WorldState {
    /// An empty state, to save into.
    pub fn new() -> Self {
        WorldState {
            origin: None,
            source: 0,
            reference: 0,
            complete: false,
            checksum: OnceLock::new(),
            hash_state: None,
            tick: 0,
            entities: EntityImage::default(),
            locations: Vec::new(),
            stores: Vec::new(),
            usage: Vec::new(),
            sparse: Vec::new(),
            resources: None,
            clone_resources: None,
            events: Vec::new(),
            cursors: Vec::new(),
            last_run: Vec::new(),
            #[cfg(feature = "transform")]
            hierarchy: Default::default(),
        }
    }

    /// The checksum of the saved state (the same as `World::checksum` of the world when it
    /// was saved), or `None` when it holds no complete save.
    ///
    /// The first call after a save hashes the chunks of rows that save copied (and what is
    /// copied whole: ids, sparse sets, resources, events, the hierarchy); the state keeps the
    /// hashes of the others from earlier calls, and the result until the next save.
    pub fn checksum(&self) -> Option<u64> {
        if !self.complete {
            return None;
        }
        let hash_state = self.hash_state?;
        Some(*self.checksum.get_or_init(|| hash_state(self)))
    }

    /// Does it hold a complete save (one that can be loaded)?
    pub fn is_saved(&self) -> bool {
        self.complete
    }

    /// The number of entities saved.
    pub fn len(&self) -> usize {
        self.stores.iter().map(StoreImage::len).sum()
    }

    /// True when it holds no entity.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of component values and entity ids it holds in its stores (what a save copies
    /// at most, apart from the sparse sets, resources, events and ids).
    pub fn store_bytes(&self) -> usize {
        self.stores.iter().map(StoreImage::bytes).sum()
    }

    /// Can a world of model `M` load it? `Ok` when it holds a complete save of `M`.
    pub(crate) fn check(&self, origin: &Origin) -> Result<(), StateError> {
        let Some(saved) = &self.origin else {
            return Err(StateError::Empty);
        };
        if saved.model != origin.model || saved.fingerprint != origin.fingerprint {
            return Err(StateError::OtherWorld {
                saved: saved.name,
                loading: origin.name,
            });
        }
        if !self.complete {
            return Err(StateError::Incomplete);
        }
        Ok(())
    }
}

impl Clone for WorldState {
    /// A deep copy: every value cloned. The copy is the same state as the original, so a
    /// world it was saved from loads it incrementally too.
    fn clone(&self) -> Self {
        let Some(origin) = self.origin else {
            return WorldState::new();
        };
        WorldState {
            origin: self.origin,
            source: self.source,
            reference: self.reference,
            complete: self.complete,
            checksum: self.checksum.clone(),
            hash_state: self.hash_state,
            tick: self.tick,
            entities: self.entities.clone(),
            locations: self.locations.clone(),
            stores: self.stores.iter().map(StoreImage::duplicate).collect(),
            usage: self.usage.clone(),
            sparse: self.sparse.iter().map(SparseImage::duplicate).collect(),
            resources: match (&self.resources, self.clone_resources) {
                (Some(r), Some(clone)) => Some(clone(&**r)),
                _ => None,
            },
            clone_resources: self.clone_resources,
            events: self
                .events
                .iter()
                .zip(origin.tables.events)
                .map(|(q, e)| {
                    let mut copy = None;
                    if let Some(q) = q {
                        (e.save)(&**q as &dyn Any, &mut copy);
                    }
                    copy
                })
                .collect(),
            cursors: self.cursors.clone(),
            last_run: self.last_run.clone(),
            #[cfg(feature = "transform")]
            hierarchy: {
                let mut h = crate::transform::TransformManager::default();
                self.hierarchy.save_into(&mut h);
                h
            },
        }
    }
}

/// Why a state could not be loaded. A failed load changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateError {
    /// The state was never saved into.
    Empty,
    /// Its last save panicked (a `Clone` panicked): it holds a mix of two saves.
    Incomplete,
    /// It was saved by a world of another type or build.
    OtherWorld {
        /// The model that saved it.
        saved: &'static str,
        /// The model of the world loading it.
        loading: &'static str,
    },
    /// A [`StateRing`] holds no state of this frame.
    NoFrame {
        /// The frame asked for.
        frame: i64,
    },
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Empty => write!(f, "the world state was never saved into"),
            StateError::Incomplete => write!(
                f,
                "the world state's last save did not finish (a `Clone` panicked): save into it again"
            ),
            StateError::OtherWorld { saved, loading } => write!(
                f,
                "the world state was saved by a world of model `{saved}`, not by this world's `{loading}` (or by another build of it)"
            ),
            StateError::NoFrame { frame } => {
                write!(f, "the state ring holds no state of frame {frame}")
            }
        }
    }
}

impl std::error::Error for StateError {}

/// A ring of world states, one per frame slot (`frame % len`), for rolling back up to `len - 1`
/// frames: each slot knows the frame it holds and, as any [`WorldState`], what it last saved,
/// so saving frame `f` copies only what changed since frame `f - len` (or since that slot's
/// last save).
///
#[derive(Clone, Debug)]
pub struct StateRing {
    slots: Vec<(Option<i64>, WorldState)>,
}

impl StateRing {
    /// A ring of `len` states (at least one).
    pub fn new(len: usize) -> Self {
        StateRing {
            slots: (0..len.max(1)).map(|_| (None, WorldState::new())).collect(),
        }
    }

    /// The number of states it holds.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Always false: a ring holds at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn slot(&self, frame: i64) -> usize {
        frame.rem_euclid(self.slots.len() as i64) as usize
    }

    /// Saves `world` as frame `frame`, in the slot of that frame; returns the state (whose
    /// [`WorldState::checksum`] hashes it).
    pub fn save<M: StateModel>(&mut self, frame: i64, world: &crate::World<M>) -> &WorldState {
        let k = self.slot(frame);
        let (held, state) = &mut self.slots[k];
        *held = None;
        world.save_state(state);
        *held = Some(frame);
        state
    }

    /// The state of frame `frame`, if the ring still holds it.
    pub fn get(&self, frame: i64) -> Option<&WorldState> {
        match &self.slots[self.slot(frame)] {
            (Some(f), state) if *f == frame => Some(state),
            _ => None,
        }
    }

    /// Loads frame `frame` into `world`.
    pub fn load<M: StateModel>(
        &self,
        frame: i64,
        world: &mut crate::World<M>,
    ) -> Result<(), StateError> {
        let state = self.get(frame).ok_or(StateError::NoFrame { frame })?;
        world.load_state(state)
    }
}
