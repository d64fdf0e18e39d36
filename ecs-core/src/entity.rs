//! Generational entity ids and the entity manager, following seed part 1.
//!
//! An [`Entity`] is a 32-bit id: 22 bits of slot index and 8 bits of generation. The
//! [`EntityManager`] keeps one `u8` generation per slot, so [`EntityManager::alive`] is a single
//! array read. A destroyed slot's generation is bumped and its index queued; indices are reused
//! only while more than [`MINIMUM_FREE_INDICES`] wait in the queue.
//!
//! # The id-reuse guarantee
//!
//! A slot's index goes to the back of a FIFO queue when it is freed and is handed out again only
//! after more than [`MINIMUM_FREE_INDICES`] other indices were queued ahead of it. Its generation
//! is bumped once per destroy and wraps after 256. So an id can reappear only after its slot has
//! run 256 laps through the queue: at least 256 × 1024 destroy/create cycles. A stale id held for
//! less than that is reliably reported dead.
//!
//! Ids that this manager never issued (built with [`Entity::from_bits`]) are weak references like
//! any other: one whose generation equals a free slot's *next* generation reads as alive until
//! that slot is reused. [`EntityManager::destroy`] is exact regardless — it never frees a slot
//! twice — and the generated `World` guards lookups with its location table.

use std::collections::VecDeque;
use std::fmt;

/// Bits of an [`Entity`] that hold the slot index.
pub const INDEX_BITS: u32 = 22;
/// Bits of an [`Entity`] that hold the generation.
pub const GENERATION_BITS: u32 = 8;
/// Mask of the index bits.
pub const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
/// Mask of the generation bits (after shifting).
pub const GENERATION_MASK: u32 = (1 << GENERATION_BITS) - 1;
/// The largest number of slots (live or free) a manager can hold: 2^22.
pub const MAX_ENTITIES: usize = 1 << INDEX_BITS;
/// Freed indices are reused only while more than this many wait in the queue (seed part 1).
pub const MINIMUM_FREE_INDICES: usize = 1024;

/// A weak reference to an entity: a slot index and the generation the slot had when the id was
/// issued.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Entity(u32);

impl Entity {
    /// Builds an id from its parts. `index` is masked to [`INDEX_BITS`].
    #[inline]
    pub const fn new(index: u32, generation: u8) -> Self {
        Entity((index & INDEX_MASK) | ((generation as u32) << INDEX_BITS))
    }

    /// The slot index, usable as an index into per-entity arrays.
    #[inline]
    pub const fn index(self) -> u32 {
        self.0 & INDEX_MASK
    }

    /// The generation of the slot when this id was issued.
    #[inline]
    pub const fn generation(self) -> u8 {
        ((self.0 >> INDEX_BITS) & GENERATION_MASK) as u8
    }

    /// The raw 32-bit id, e.g. for serialization.
    #[inline]
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// Rebuilds an id from [`Entity::to_bits`]. The two spare high bits are cleared.
    #[inline]
    pub const fn from_bits(bits: u32) -> Self {
        Entity(bits & (INDEX_MASK | (GENERATION_MASK << INDEX_BITS)))
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({}v{})", self.index(), self.generation())
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

/// Why the entity manager could not create entities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityError {
    /// All 2^22 slots are in use (live, or freed but not yet reusable).
    Exhausted {
        /// How many entities were requested.
        requested: usize,
        /// How many more could have been created.
        available: usize,
    },
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntityError::Exhausted {
                requested,
                available,
            } => write!(
                f,
                "entity index space exhausted: requested {requested} new entities but only \
                 {available} of the {MAX_ENTITIES} slots can still be issued; destroy entities \
                 so that more than {MINIMUM_FREE_INDICES} freed indices wait for reuse"
            ),
        }
    }
}

impl std::error::Error for EntityError {}

/// Identifies a destruction hook registered with [`EntityManager::on_destroy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DestroyHookId(u32);

type DestroyHook = Box<dyn FnMut(Entity) + Send + Sync>;

/// Issues and retires [`Entity`] ids (seed part 1).
///
/// ```
/// use ecs_core::entity::EntityManager;
/// let mut em = EntityManager::new();
/// let e = em.create().unwrap();
/// assert!(em.alive(e));
/// assert!(em.destroy(e));
/// assert!(!em.alive(e));
/// assert!(!em.destroy(e), "destroying twice is refused");
/// ```
#[derive(Default)]
pub struct EntityManager {
    /// Current generation of every slot ever issued.
    generation: Vec<u8>,
    /// Freed indices, oldest first.
    free: VecDeque<u32>,
    /// One bit per slot: set while the slot is free. Keeps `destroy` exact for forged ids.
    free_bits: Vec<u64>,
    hooks: Vec<(DestroyHookId, DestroyHook)>,
    next_hook: u32,
}

impl fmt::Debug for EntityManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntityManager")
            .field("slots", &self.generation.len())
            .field("free", &self.free.len())
            .field("live", &self.len())
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

impl EntityManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.generation.len() - self.free.len()
    }

    /// True when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of slots ever issued (live and free): the length per-entity arrays need.
    #[inline]
    pub fn slots(&self) -> usize {
        self.generation.len()
    }

    /// How many more entities can be created before the index space is exhausted.
    pub fn available(&self) -> usize {
        (MAX_ENTITIES - self.generation.len())
            + self.free.len().saturating_sub(MINIMUM_FREE_INDICES)
    }

    /// Is `e` alive? One array read (see the module docs for ids this manager never issued).
    #[inline]
    pub fn alive(&self, e: Entity) -> bool {
        self.generation.get(e.index() as usize) == Some(&e.generation())
    }

    /// Creates one entity, or fails when the 2^22 index space is exhausted.
    #[inline]
    pub fn create(&mut self) -> Result<Entity, EntityError> {
        if self.free.len() > MINIMUM_FREE_INDICES {
            let idx = self
                .free
                .pop_front()
                .expect("queue is longer than the threshold");
            self.set_free_bit(idx, false);
            return Ok(Entity::new(idx, self.generation[idx as usize]));
        }
        if self.generation.len() >= MAX_ENTITIES {
            return Err(EntityError::Exhausted {
                requested: 1,
                available: 0,
            });
        }
        let idx = self.generation.len() as u32;
        self.generation.push(0);
        if self.free_bits.len() * 64 < self.generation.len() {
            self.free_bits.push(0);
        }
        Ok(Entity::new(idx, 0))
    }

    /// Creates `n` entities at once, appending them to `out`. Either all `n` are created or,
    /// when they would not fit, none are and the manager is unchanged.
    #[inline]
    pub fn create_many_into(&mut self, n: usize, out: &mut Vec<Entity>) -> Result<(), EntityError> {
        let available = self.available();
        if n > available {
            return Err(EntityError::Exhausted {
                requested: n,
                available,
            });
        }
        out.reserve(n);
        let reused = n.min(self.free.len().saturating_sub(MINIMUM_FREE_INDICES));
        for _ in 0..reused {
            let idx = self.free.pop_front().expect("counted above");
            self.set_free_bit(idx, false);
            out.push(Entity::new(idx, self.generation[idx as usize]));
        }
        let fresh = n - reused;
        let first = self.generation.len() as u32;
        self.generation.resize(self.generation.len() + fresh, 0);
        self.free_bits.resize(self.generation.len().div_ceil(64), 0);
        out.extend((first..first + fresh as u32).map(|idx| Entity::new(idx, 0)));
        Ok(())
    }

    /// Creates `n` entities at once (see [`EntityManager::create_many_into`]).
    pub fn create_many(&mut self, n: usize) -> Result<Vec<Entity>, EntityError> {
        let mut out = Vec::new();
        self.create_many_into(n, &mut out)?;
        Ok(out)
    }

    /// Destroys `e`: bumps its slot's generation, queues the index for reuse and runs the
    /// destruction hooks. Returns false (and changes nothing) when `e` is not alive.
    #[inline]
    pub fn destroy(&mut self, e: Entity) -> bool {
        let idx = e.index();
        if !self.alive(e) || self.is_free(idx) {
            return false;
        }
        let g = &mut self.generation[idx as usize];
        *g = g.wrapping_add(1);
        self.free.push_back(idx);
        self.set_free_bit(idx, true);
        for (_, hook) in &mut self.hooks {
            hook(e);
        }
        true
    }

    /// Registers a hook called with every entity as it is destroyed, for component managers
    /// that must release resources at once rather than by lazy garbage collection (seed part 2).
    pub fn on_destroy(
        &mut self,
        hook: impl FnMut(Entity) + Send + Sync + 'static,
    ) -> DestroyHookId {
        let id = DestroyHookId(self.next_hook);
        self.next_hook += 1;
        self.hooks.push((id, Box::new(hook)));
        id
    }

    /// Removes a hook; returns false when it was not registered.
    pub fn remove_hook(&mut self, id: DestroyHookId) -> bool {
        let before = self.hooks.len();
        self.hooks.retain(|(h, _)| *h != id);
        self.hooks.len() != before
    }

    /// Number of freed indices waiting for reuse.
    pub fn free_len(&self) -> usize {
        self.free.len()
    }

    #[inline]
    fn is_free(&self, idx: u32) -> bool {
        self.free_bits[idx as usize / 64] & (1 << (idx % 64)) != 0
    }

    #[inline]
    fn set_free_bit(&mut self, idx: u32, free: bool) {
        let word = &mut self.free_bits[idx as usize / 64];
        if free {
            *word |= 1 << (idx % 64);
        } else {
            *word &= !(1 << (idx % 64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn entity_packs_index_and_generation() {
        let e = Entity::new(INDEX_MASK, 255);
        assert_eq!(e.index(), INDEX_MASK);
        assert_eq!(e.generation(), 255);
        assert_eq!(Entity::from_bits(e.to_bits()), e);
        assert_eq!(std::mem::size_of::<Entity>(), 4);
        assert_eq!(format!("{:?}", Entity::new(5, 2)), "Entity(5v2)");
        // Index bits beyond 22 do not leak into the generation.
        assert_eq!(Entity::new(1 << 22, 0), Entity::new(0, 0));
    }

    #[test]
    fn stale_id_is_dead_after_slot_reuse() {
        let mut em = EntityManager::new();
        let first = em.create().unwrap();
        assert!(em.destroy(first));
        // Fill the queue past the threshold so the first slot is reused.
        let others = em.create_many(MINIMUM_FREE_INDICES + 1).unwrap();
        for e in &others {
            assert!(em.destroy(*e));
        }
        let reused = em.create().unwrap();
        assert_eq!(
            reused.index(),
            first.index(),
            "oldest freed index comes back first"
        );
        assert_eq!(reused.generation(), 1);
        assert!(em.alive(reused));
        assert!(
            !em.alive(first),
            "the stale id must not alias the new entity"
        );
        assert!(
            !em.destroy(first),
            "a stale id cannot destroy the new entity"
        );
        assert!(em.alive(reused));
    }

    #[test]
    fn indices_not_reused_before_threshold() {
        let mut em = EntityManager::new();
        let es = em.create_many(MINIMUM_FREE_INDICES).unwrap();
        for e in &es {
            em.destroy(*e);
        }
        assert_eq!(em.free_len(), MINIMUM_FREE_INDICES);
        // Exactly MINIMUM_FREE_INDICES waiting: not more than it, so a fresh index is issued.
        let e = em.create().unwrap();
        assert_eq!(e.index() as usize, MINIMUM_FREE_INDICES);
        assert_eq!(e.generation(), 0);
        em.destroy(e);
        // Now 1025 wait: reuse begins, with the oldest.
        let e = em.create().unwrap();
        assert_eq!(e.index(), 0);
        assert_eq!(e.generation(), 1);
    }

    #[test]
    #[cfg_attr(miri, ignore = "262,144 create/destroy cycles: too slow under Miri")]
    fn id_cannot_reappear_before_256_laps() {
        // 1024 other indices wait in the queue; every create that does not return the watched
        // slot is destroyed again at once, so the queue length stays constant and the watched
        // slot comes back once per lap of 1025 creates.
        let mut em = EntityManager::new();
        let original = em.create().unwrap();
        for e in em.create_many(MINIMUM_FREE_INDICES).unwrap() {
            em.destroy(e);
        }
        let mut current = original;
        let mut cycles = 0usize;
        for lap in 1..=256usize {
            assert!(em.destroy(current));
            loop {
                let e = em.create().unwrap();
                cycles += 1;
                if e.index() == original.index() {
                    current = e;
                    break;
                }
                assert!(em.destroy(e));
            }
            assert_eq!(current.generation() as usize, lap % 256);
            if lap < 256 {
                assert!(!em.alive(original), "id reappeared after {lap} laps");
            }
        }
        assert_eq!(current, original, "the id reappears on lap 256, not before");
        assert!(cycles >= 256 * MINIMUM_FREE_INDICES, "only {cycles} cycles");
    }

    #[test]
    #[cfg_attr(miri, ignore = "fills all 2^22 slots: too slow under Miri")]
    fn exhaustion_is_an_error_not_a_wrap() {
        let mut em = EntityManager::new();
        let mut out = Vec::new();
        em.create_many_into(MAX_ENTITIES - 1, &mut out).unwrap();
        let last = em.create().unwrap();
        assert_eq!(last.index() as usize, MAX_ENTITIES - 1);
        assert_eq!(
            em.create(),
            Err(EntityError::Exhausted {
                requested: 1,
                available: 0
            })
        );
        // A batch that does not fit changes nothing.
        let before = em.len();
        let err = em.create_many(2).unwrap_err();
        assert_eq!(
            err,
            EntityError::Exhausted {
                requested: 2,
                available: 0
            }
        );
        assert_eq!(em.len(), before);
        assert!(err.to_string().contains("exhausted"));
        // Freed slots become available only past the threshold.
        for e in out.iter().take(MINIMUM_FREE_INDICES + 3) {
            em.destroy(*e);
        }
        assert_eq!(em.available(), 3);
        assert_eq!(em.create_many(3).unwrap().len(), 3);
        assert!(em.create().is_err());
    }

    #[test]
    fn forged_ids_cannot_double_free() {
        let mut em = EntityManager::new();
        let e = em.create().unwrap();
        em.destroy(e);
        // A forged id with the slot's next generation reads alive (one-read design) ...
        let forged = Entity::new(e.index(), 1);
        assert!(em.alive(forged));
        // ... but cannot free the slot a second time.
        assert!(!em.destroy(forged));
        assert_eq!(em.free_len(), 1);
        assert!(!em.alive(Entity::new(999, 0)), "out of range ids are dead");
        assert!(!em.destroy(Entity::new(999, 0)));
    }

    #[test]
    fn destroy_hooks_run_once_per_destroy() {
        let mut em = EntityManager::new();
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let id = em.on_destroy(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        });
        let es = em.create_many(3).unwrap();
        em.destroy(es[0]);
        em.destroy(es[0]);
        em.destroy(es[1]);
        assert_eq!(count.load(Ordering::SeqCst), 2);
        assert!(em.remove_hook(id));
        assert!(!em.remove_hook(id));
        em.destroy(es[2]);
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn randomized_against_a_set_model() {
        // Seeded xorshift so the run is reproducible without extra dependencies.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut em = EntityManager::new();
        let mut live: Vec<Entity> = Vec::new();
        let mut dead: Vec<Entity> = Vec::new();
        let steps = if cfg!(miri) { 500 } else { 50_000 };
        for _ in 0..steps {
            match next() % 4 {
                0 | 1 => {
                    let e = em.create().unwrap();
                    assert!(!live.contains(&e) || live.is_empty());
                    live.push(e);
                }
                2 if !live.is_empty() => {
                    let i = (next() as usize) % live.len();
                    let e = live.swap_remove(i);
                    assert!(em.destroy(e));
                    dead.push(e);
                }
                _ => {
                    let n = (next() % 8) as usize;
                    live.extend(em.create_many(n).unwrap());
                }
            }
        }
        let set: HashSet<Entity> = live.iter().copied().collect();
        assert_eq!(set.len(), live.len(), "no id issued twice while alive");
        assert_eq!(em.len(), live.len());
        for e in &live {
            assert!(em.alive(*e));
        }
        for e in &dead {
            // Fewer than 256 laps happened, so every dead id stays dead.
            assert!(!em.alive(*e) || set.contains(e));
        }
    }
}
