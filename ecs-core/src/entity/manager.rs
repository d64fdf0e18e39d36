//! [`EntityManager`]: issues and retires ids (seed part 1) and runs destroy hooks.

use std::collections::VecDeque;
use std::fmt;

use super::{Entity, Generation, MAX_ENTITIES, MINIMUM_FREE_INDICES};

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
    generation: Vec<Generation>,
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

    /// Is `e` alive? One array read (see the module docs, "Collisions", for ids this manager
    /// never issued).
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
    ///
    /// If a hook panics, the entity is destroyed nonetheless and the other hooks still run;
    /// then the panic propagates (a second panicking hook aborts, as a second panic in a `Drop`
    /// does).
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
        run_hooks(&mut self.hooks, e);
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

/// Calls every hook with `e`. If one panics, the hooks after it still run while unwinding (a
/// second panic aborts), so no component manager misses the destruction.
fn run_hooks(hooks: &mut [(DestroyHookId, DestroyHook)], e: Entity) {
    /// On unwind, runs the hooks the loop has not reached.
    struct Rest<'a> {
        hooks: &'a mut [(DestroyHookId, DestroyHook)],
        entity: Entity,
    }
    impl Drop for Rest<'_> {
        fn drop(&mut self) {
            // Empty unless a hook panicked.
            if !self.hooks.is_empty() {
                run_hooks(std::mem::take(&mut self.hooks), self.entity);
            }
        }
    }
    let mut rest = Rest { hooks, entity: e };
    while let Some(((_, hook), tail)) = std::mem::take(&mut rest.hooks).split_first_mut() {
        rest.hooks = tail;
        hook(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// A manager with `live` entities alive and `queued` freed indices waiting in the queue
    /// (indices `live..live + queued`, oldest first), and its live ids.
    fn with_queue(live: usize, queued: usize) -> (EntityManager, Vec<Entity>) {
        let mut em = EntityManager::new();
        let live_ids = em.create_many(live).unwrap();
        for e in em.create_many(queued).unwrap() {
            assert!(em.destroy(e));
        }
        (em, live_ids)
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

    /// Destroys and recreates `original`'s slot `laps` times while 1,024 other freed indices
    /// wait in the queue, the fastest a slot can cycle: every create that does not return the
    /// watched slot is destroyed again at once, so the queue length stays constant and the
    /// watched slot comes back once per 1,025 creates. Calls `after_destroy(lap, em)` after
    /// each destroy of the watched slot. Returns the manager, the original id, the slot's
    /// last id and the number of creates.
    fn cycle_one_slot(
        laps: usize,
        mut after_destroy: impl FnMut(usize, &EntityManager, Entity),
    ) -> (EntityManager, Entity, Entity, usize) {
        let mut em = EntityManager::new();
        let original = em.create().unwrap();
        for e in em.create_many(MINIMUM_FREE_INDICES).unwrap() {
            em.destroy(e);
        }
        let mut current = original;
        let mut creates = 0usize;
        for lap in 1..=laps {
            assert!(em.destroy(current));
            after_destroy(lap, &em, original);
            loop {
                let e = em.create().unwrap();
                creates += 1;
                if e.index() == original.index() {
                    current = e;
                    break;
                }
                assert!(em.destroy(e));
            }
            if current != original {
                assert!(!em.alive(original), "id reappeared after {lap} laps");
            }
        }
        (em, original, current, creates)
    }

    #[test]
    #[cfg(not(feature = "wide-entity"))]
    #[cfg_attr(miri, ignore = "262,400 create/destroy cycles: too slow under Miri")]
    fn id_cannot_reappear_before_256_laps() {
        let (em, original, current, creates) = cycle_one_slot(256, |lap, em, original| {
            // The free slot's generation equals the stale id's from the 256th destroy on.
            assert_eq!(em.alive(original), lap == 256, "after destroy {lap}");
        });
        assert_eq!(current, original, "the id reappears on lap 256, not before");
        assert!(em.alive(original));
        assert_eq!(creates, 256 * (MINIMUM_FREE_INDICES + 1));
        assert!(
            creates > 255 * 1025,
            "the bound in the module docs: 255 × 1025 + 1"
        );
    }

    #[test]
    #[cfg(feature = "wide-entity")]
    #[cfg_attr(miri, ignore = "307,500 create/destroy cycles: too slow under Miri")]
    fn wide_ids_stay_stale_past_256_laps() {
        const LAPS: usize = 300;
        let (em, original, current, creates) = cycle_one_slot(LAPS, |lap, em, original| {
            assert!(!em.alive(original), "stale id alive after destroy {lap}");
        });
        assert_eq!(current.index(), original.index());
        assert_eq!(current.generation(), LAPS as Generation, "no wrap at 256");
        assert!(!em.alive(original));
        assert_eq!(creates, LAPS * (MINIMUM_FREE_INDICES + 1));
        assert!(creates > 256 * 1025);
    }

    #[test]
    fn a_generation_wraps_after_generation_max_plus_one_destroys() {
        // 256 destroys of a slot with the seed's layout, 2^32 with `wide-entity`; the slot is
        // driven to its last generation directly instead of by billions of cycles.
        let wrap = u64::from(Generation::MAX) + 1;
        assert_eq!(
            wrap,
            if cfg!(feature = "wide-entity") {
                1 << 32
            } else {
                256
            }
        );
        let (mut em, _) = with_queue(0, MINIMUM_FREE_INDICES + 2);
        let original = Entity::new(0, 0);
        // Slot 0 (at the front of the queue) as if destroyed `Generation::MAX` times since
        // `original` was issued.
        em.generation[0] = Generation::MAX;
        assert!(!em.alive(original));
        let last = em.create().unwrap();
        assert_eq!(last, Entity::new(0, Generation::MAX));
        assert!(!em.alive(original), "one destroy short of the wrap");
        // Destroy number `Generation::MAX + 1` wraps (no overflow panic) to the stale id's.
        assert!(em.destroy(last));
        assert!(em.alive(original), "the collision the module docs describe");
        assert!(
            !em.destroy(original),
            "but a free slot is never freed twice"
        );
        assert!(!em.alive(last));
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
    fn a_panicking_hook_does_not_skip_the_others() {
        let mut em = EntityManager::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for name in ["first", "bomb", "last"] {
            let seen = seen.clone();
            let mut armed = name == "bomb";
            em.on_destroy(move |e| {
                seen.lock().unwrap().push((name, e));
                if std::mem::take(&mut armed) {
                    panic!("hook {name} fails once");
                }
            });
        }
        let es = em.create_many(2).unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| em.destroy(es[0])));
        assert!(r.is_err(), "the hook's panic propagates");
        assert_eq!(
            *seen.lock().unwrap(),
            [("first", es[0]), ("bomb", es[0]), ("last", es[0])],
            "the hook after the panicking one still ran"
        );
        assert!(!em.alive(es[0]), "the entity was destroyed");
        assert_eq!(em.free_len(), 1);
        seen.lock().unwrap().clear();
        assert!(em.destroy(es[1]));
        assert_eq!(seen.lock().unwrap().len(), 3);
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
