//! [`EntityManager`]: issues and retires generational ids, runs destroy hooks, and reserves ids
//! through `&self` from many threads at once.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Entity, Generation, MAX_ENTITIES, MINIMUM_FREE_INDICES};

/// Why the entity manager could not create entities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityError {
    /// All 2^22 slots are in use (live, reserved, or freed but not yet reusable).
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

/// Issues and retires generational [`Entity`] ids.
///
/// ```
/// use sigecs::entity::EntityManager;
/// let mut em = EntityManager::new();
/// let e = em.create().unwrap();
/// assert!(em.alive(e));
/// assert!(em.destroy(e));
/// assert!(!em.alive(e));
/// assert!(!em.destroy(e), "destroying twice is refused");
///
/// // Reserve through `&self` (from any thread), then make the reserved ids alive.
/// let r = em.reserve().unwrap();
/// let mut placed = Vec::new();
/// em.flush_reserved(|e| placed.push(e));
/// assert_eq!(placed, [r]);
/// assert!(em.alive(r));
/// ```
#[derive(Default)]
pub struct EntityManager {
    /// Current generation of every slot ever issued.
    generation: Vec<Generation>,
    /// Freed indices, oldest first.
    free: VecDeque<u32>,
    /// One bit per slot: set while the slot is free. Keeps `destroy` exact for forged ids.
    free_bits: Vec<u64>,
    /// How many ids [`EntityManager::reserve`] handed out since the last flush. Reservation `k`
    /// is the id the `k`-th next create would issue ([`EntityManager::nth_issued`]); the state
    /// that mapping reads changes only through `&mut self`, which settles reservations first.
    reserved: AtomicUsize,
    hooks: Vec<(DestroyHookId, DestroyHook)>,
    next_hook: u32,
}

impl fmt::Debug for EntityManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntityManager")
            .field("slots", &self.generation.len())
            .field("free", &self.free.len())
            .field("live", &self.len())
            .field("reserved", &self.reserved_len())
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

impl EntityManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of live entities. Reserved ids count once they are flushed.
    #[inline]
    pub fn len(&self) -> usize {
        self.generation.len() - self.free.len()
    }

    /// True when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[doc(hidden)]
    /// Number of slots ever issued (live and free): the length per-entity arrays need. Ids
    /// reserved and not yet flushed may lie beyond it.
    #[inline]
    pub fn slots(&self) -> usize {
        self.generation.len()
    }

    /// How many more entities can be created or reserved before the index space is exhausted.
    pub fn available(&self) -> usize {
        self.issuable().saturating_sub(self.reserved_len())
    }

    /// Asks the processor to bring `e`'s generation into cache, for a lookup soon after.
    #[inline]
    pub(crate) fn prefetch(&self, e: Entity) {
        if let Some(generation) = self.generation.get(e.index() as usize) {
            crate::prefetch::prefetch(generation);
        }
    }

    /// Is `e` alive? One array read (see the module docs, "Collisions", for ids this manager
    /// never issued and for reserved ids before their flush).
    #[inline]
    pub fn alive(&self, e: Entity) -> bool {
        self.generation.get(e.index() as usize) == Some(&e.generation())
    }

    /// Creates one entity, or fails when the 2^22 index space is exhausted. Pending
    /// reservations are made alive first (see [`EntityManager::reserve`]).
    #[inline]
    pub fn create(&mut self) -> Result<Entity, EntityError> {
        self.settle_reservations();
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
    /// when they would not fit, none are and the manager is unchanged (apart from pending
    /// reservations, which are made alive first: see [`EntityManager::reserve`]).
    #[inline]
    pub(crate) fn create_many_into(
        &mut self,
        n: usize,
        out: &mut Vec<Entity>,
    ) -> Result<(), EntityError> {
        self.settle_reservations();
        let available = self.available();
        if n > available {
            return Err(EntityError::Exhausted {
                requested: n,
                available,
            });
        }
        out.reserve(n);
        let (reused, fresh) = self.issue(n);
        // The reused indices as the queue's (at most two) slices, so the copy runs over
        // slices rather than a draining iterator's element-by-element `extend`.
        let (front, back) = self.free.as_slices();
        let from_front = reused.min(front.len());
        let generation = &self.generation;
        let reuse = |&idx: &u32| Entity::new(idx, generation[idx as usize]);
        out.extend(front[..from_front].iter().map(reuse));
        out.extend(back[..reused - from_front].iter().map(reuse));
        out.extend(fresh.map(|idx| Entity::new(idx, 0)));
        self.free.drain(..reused);
        Ok(())
    }

    /// Creates `n` entities at once. Either all `n` are created or, when they would not fit,
    /// none are and the manager is unchanged (apart from pending reservations, which are made
    /// alive first: see [`EntityManager::reserve`]).
    pub fn create_many(&mut self, n: usize) -> Result<Vec<Entity>, EntityError> {
        let mut out = Vec::new();
        self.create_many_into(n, &mut out)?;
        Ok(out)
    }

    /// Destroys `e`: bumps its slot's generation, queues the index for reuse and runs the
    /// destruction hooks. Returns false (and changes nothing) when `e` is not alive. Pending
    /// reservations are made alive first (see [`EntityManager::reserve`]).
    ///
    /// If a hook panics, the entity is destroyed nonetheless and the other hooks still run;
    /// then the panic propagates (a second panicking hook aborts, as a second panic in a `Drop`
    /// does).
    #[inline]
    pub fn destroy(&mut self, e: Entity) -> bool {
        self.settle_reservations();
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

    #[doc(hidden)]
    /// Reserves an id through `&self`, from any number of threads at once, in the spirit of
    /// hecs' `reserve_entity`: the id is not alive yet, but no create and no other reservation
    /// will issue it. [`EntityManager::flush_reserved`] makes every reserved id alive. Fails,
    /// changing nothing, when the index space is exhausted ([`EntityManager::available`] counts
    /// reservations).
    ///
    /// Reserved ids are the ids the next creates would issue, in reservation order: the reuse
    /// rule applies unchanged (a freed index is reused only while more than
    /// [`MINIMUM_FREE_INDICES`] wait). Each costs one atomic read-modify-write of a counter.
    ///
    /// While reservations are pending, [`create`](EntityManager::create),
    /// [`create_many_into`](EntityManager::create_many_into) and
    /// [`destroy`](EntityManager::destroy) first make them alive, exactly as
    /// `flush_reserved(|_| {})` would, so they can never issue a reserved id again and never
    /// panic because of one. A `World` that must place reserved entities therefore calls
    /// `flush_reserved` itself before any of them. Until its flush, a reserved id whose slot is
    /// reused reads alive in [`EntityManager::alive`] and a fresh one reads dead (the one-read
    /// check cannot tell a reserved slot from a free one). `destroy` of a reserved id settles
    /// first too, so the id becomes alive and is then destroyed like any other.
    ///
    /// ```
    /// use sigecs::entity::EntityManager;
    /// let em = EntityManager::new();
    /// let ids: Vec<_> = std::thread::scope(|s| {
    ///     let a = s.spawn(|| em.reserve().unwrap());
    ///     let b = s.spawn(|| em.reserve().unwrap());
    ///     vec![a.join().unwrap(), b.join().unwrap()]
    /// });
    /// assert_ne!(ids[0], ids[1]);
    /// let mut em = em;
    /// em.flush_reserved(|_| {});
    /// assert!(ids.iter().all(|&e| em.alive(e)));
    /// ```
    pub fn reserve(&self) -> Result<Entity, EntityError> {
        let issuable = self.issuable();
        // `Relaxed` is enough: the read-modify-write alone makes every `k` unique, and the
        // state `nth_issued` reads cannot change while `&self` is shared.
        match self
            .reserved
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                (k < issuable).then_some(k + 1)
            }) {
            Ok(k) => Ok(self.nth_issued(k)),
            Err(_) => Err(EntityError::Exhausted {
                requested: 1,
                available: 0,
            }),
        }
    }

    #[doc(hidden)]
    /// Makes every reserved id alive and calls `placed` with each, in reservation order, so the
    /// caller can place (or destroy) the new entities. Does nothing when nothing is reserved.
    ///
    /// The manager's state is updated before the first call: if `placed` panics, every
    /// reserved id is alive nonetheless, and none can be issued again.
    pub fn flush_reserved(&mut self, mut placed: impl FnMut(Entity)) {
        let n = std::mem::take(self.reserved.get_mut());
        if n == 0 {
            return;
        }
        let (reused, fresh) = self.issue(n);
        let generation = &self.generation;
        for idx in self.free.drain(..reused) {
            placed(Entity::new(idx, generation[idx as usize]));
        }
        for idx in fresh {
            placed(Entity::new(idx, 0));
        }
    }

    #[doc(hidden)]
    /// An id that is not alive now: the last slot's index with a generation that slot does
    /// not have. It is stale like a despawned entity's id, and follows the same rule: it can
    /// only come back once that slot's generation wraps around to it. What a reservation that
    /// failed hands out ([`crate::Commands::spawn`]), so a system that stores it never holds
    /// another entity.
    pub fn stale_id(&self) -> Entity {
        let index = (MAX_ENTITIES - 1) as u32;
        let generation = self
            .generation
            .get(index as usize)
            .map_or(0, |g| g.wrapping_add(1));
        Entity::new(index, generation)
    }

    #[doc(hidden)]
    /// Number of ids reserved and not yet flushed.
    #[inline]
    pub fn reserved_len(&self) -> usize {
        self.reserved.load(Ordering::Relaxed)
    }

    /// Registers a hook called with every entity as it is destroyed, for component managers
    /// that must release resources at once rather than by lazy garbage collection.
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

    #[doc(hidden)]
    /// Number of freed indices waiting for reuse.
    pub fn free_len(&self) -> usize {
        self.free.len()
    }

    /// Freed indices that a create may reuse now: those beyond the first
    /// [`MINIMUM_FREE_INDICES`] of the queue.
    #[inline]
    fn reusable(&self) -> usize {
        self.free.len().saturating_sub(MINIMUM_FREE_INDICES)
    }

    /// How many ids can still be issued, pending reservations included.
    #[inline]
    fn issuable(&self) -> usize {
        (MAX_ENTITIES - self.generation.len()) + self.reusable()
    }

    /// The id that the `k`-th next create would issue (`k < issuable()`): the `k`-th reusable
    /// index with its current generation, or else a fresh index past the issued slots.
    fn nth_issued(&self, k: usize) -> Entity {
        let reusable = self.reusable();
        if k < reusable {
            let idx = self.free[k];
            Entity::new(idx, self.generation[idx as usize])
        } else {
            // Below `MAX_ENTITIES` because `k < issuable()`.
            Entity::new((self.generation.len() + (k - reusable)) as u32, 0)
        }
    }

    /// Issues the next `n` ids (`n <= issuable()`, checked by the caller): the first `reused`
    /// indices of the free queue (oldest first, to be paired with their generation) and then
    /// the `fresh` range. Every one is alive when this returns, except that the reused indices
    /// are still in the queue: the caller drains them before anything can panic. (A draining
    /// iterator that is dropped early still removes them all.)
    fn issue(&mut self, n: usize) -> (usize, Range<u32>) {
        debug_assert!(n <= self.issuable());
        let reused = n.min(self.reusable());
        // Over the queue's (at most two) slices: a `VecDeque` range iterator checks for the
        // wrap at every element, which cost more than clearing the bits (a level restart
        // reuses 10,000 ids at once).
        let (front, back) = self.free.as_slices();
        let from_front = reused.min(front.len());
        let bits = &mut self.free_bits;
        for part in [&front[..from_front], &back[..reused - from_front]] {
            for &idx in part {
                bits[idx as usize / 64] &= !(1 << (idx % 64));
            }
        }
        let first = self.generation.len();
        self.generation.resize(first + (n - reused), 0);
        self.free_bits.resize(self.generation.len().div_ceil(64), 0);
        let fresh = first as u32..self.generation.len() as u32;
        (reused, fresh)
    }

    /// Makes pending reservations alive before an operation that could otherwise issue a
    /// reserved id again or change which id a reservation stands for.
    #[inline]
    fn settle_reservations(&mut self) {
        if *self.reserved.get_mut() != 0 {
            self.flush_reserved(|_| {});
        }
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
#[inline]
fn run_hooks(hooks: &mut [(DestroyHookId, DestroyHook)], e: Entity) {
    // Most managers have no hook: the guard below is not free (a `World::clear` of 10,000
    // entities spent a third of its time in it).
    if !hooks.is_empty() {
        run_hooks_guarded(hooks, e);
    }
}

fn run_hooks_guarded(hooks: &mut [(DestroyHookId, DestroyHook)], e: Entity) {
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

/// The manager's ids as a world state keeps them: every slot's generation, the free queue
/// (oldest first) and its bits, and the pending reservations. Destroy hooks are not state.
#[derive(Clone, Debug, Default)]
pub(crate) struct EntityImage {
    generation: Vec<Generation>,
    free: Vec<u32>,
    free_bits: Vec<u64>,
    reserved: usize,
}

impl EntityImage {
    /// Feeds the ids into a checksum: generations, the free queue in order, reservations.
    pub(crate) fn hash_into(&self, h: &mut crate::state::hash::StateHasher) {
        h.write_word(self.generation.len() as u64);
        h.write_bytes(bytemuck::cast_slice(&self.generation));
        h.write_word(self.free.len() as u64);
        h.write_bytes(bytemuck::cast_slice(&self.free));
        h.write_word(self.reserved as u64);
    }
}

/// Saving and loading the ids of a world state.
impl EntityManager {
    /// Copies the ids into `image`, reusing its allocations.
    pub(crate) fn save_image(&self, image: &mut EntityImage) {
        image.generation.clone_from(&self.generation);
        let (front, back) = self.free.as_slices();
        image.free.clear();
        image.free.extend_from_slice(front);
        image.free.extend_from_slice(back);
        image.free_bits.clone_from(&self.free_bits);
        image.reserved = self.reserved_len();
    }

    /// Makes the ids those of `image` (the next create issues what it issued after the save).
    /// Calls no hook.
    pub(crate) fn load_image(&mut self, image: &EntityImage) {
        self.generation.clone_from(&image.generation);
        self.free.clear();
        self.free.extend(image.free.iter().copied());
        self.free_bits.clone_from(&image.free_bits);
        *self.reserved.get_mut() = image.reserved;
    }

    /// Feeds the ids into a checksum, as [`EntityImage::hash_into`] does for an image.
    pub(crate) fn hash_into(&self, h: &mut crate::state::hash::StateHasher) {
        h.write_word(self.generation.len() as u64);
        h.write_bytes(bytemuck::cast_slice(&self.generation));
        h.write_word(self.free.len() as u64);
        let (front, back) = self.free.as_slices();
        h.write_bytes(bytemuck::cast_slice(front));
        h.write_bytes(bytemuck::cast_slice(back));
        h.write_word(self.reserved_len() as u64);
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
        // 256 destroys of a slot with the default layout, 2^32 with `wide-entity`; the slot is
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
    fn reservations_are_the_next_creates_ids_and_flush_in_order() {
        // Two reusable indices (1,026 queued), then fresh ones.
        let (mut em, live) = with_queue(3, MINIMUM_FREE_INDICES + 2);
        let (mut twin, _) = with_queue(3, MINIMUM_FREE_INDICES + 2);
        let (slots, available) = (em.slots(), em.available());
        let reserved: Vec<Entity> = (0..4).map(|_| em.reserve().unwrap()).collect();
        let created: Vec<Entity> = (0..4).map(|_| twin.create().unwrap()).collect();
        assert_eq!(reserved, created, "exactly what create would have issued");
        assert_eq!(
            reserved[0],
            Entity::new(3, 1),
            "the oldest freed index first"
        );
        assert_eq!(reserved[1], Entity::new(4, 1));
        assert_eq!(
            reserved[2],
            Entity::new(slots as u32, 0),
            "then fresh indices"
        );
        assert_eq!(reserved[3], Entity::new(slots as u32 + 1, 0));
        // Nothing is issued until the flush; reservations count against availability.
        assert_eq!((em.len(), em.slots(), em.reserved_len()), (3, slots, 4));
        assert_eq!(em.available(), available - 4);
        for e in &live {
            assert!(reserved.iter().all(|r| r.index() != e.index()));
        }
        let mut placed = Vec::new();
        em.flush_reserved(|e| placed.push(e));
        assert_eq!(placed, reserved, "placed in reservation order");
        assert!(reserved.iter().all(|&e| em.alive(e)));
        assert_eq!((em.len(), em.reserved_len()), (7, 0));
        assert_eq!(em.free_len(), MINIMUM_FREE_INDICES);
        assert_eq!(em.available(), available - 4);
        em.flush_reserved(|e| panic!("nothing pending, but {e} placed"));
        // The next create continues after the reserved ids.
        assert_eq!(em.create().unwrap(), twin.create().unwrap());
    }

    #[test]
    fn reservations_follow_the_reuse_threshold() {
        let (mut em, _) = with_queue(0, MINIMUM_FREE_INDICES);
        // Exactly MINIMUM_FREE_INDICES waiting: a fresh index.
        let fresh = em.reserve().unwrap();
        assert_eq!(fresh, Entity::new(MINIMUM_FREE_INDICES as u32, 0));
        assert!(
            !em.alive(fresh),
            "a fresh reserved id is not alive before its flush"
        );
        em.flush_reserved(|_| {});
        assert!(em.destroy(fresh));
        // Now 1,025 wait: the oldest is reused, with its next generation.
        let reused = em.reserve().unwrap();
        assert_eq!(reused, Entity::new(0, 1));
        assert!(
            em.alive(reused),
            "a reused reserved id reads alive (one-read design)"
        );
        assert_eq!(
            em.reserve().unwrap().index() as usize,
            MINIMUM_FREE_INDICES + 1
        );
    }

    #[test]
    fn create_and_destroy_settle_pending_reservations() {
        let (mut em, live) = with_queue(4, MINIMUM_FREE_INDICES + 1);
        let r1 = em.reserve().unwrap();
        let e = em.create().unwrap();
        assert_ne!(e, r1, "create never issues a reserved id");
        assert!(em.alive(r1) && em.alive(e));
        assert_eq!(em.reserved_len(), 0);

        let r2 = em.reserve().unwrap();
        let many = em.create_many(3).unwrap();
        assert!(!many.contains(&r2));
        assert!(em.alive(r2));

        let r3 = em.reserve().unwrap();
        assert!(em.destroy(live[0]));
        assert!(em.alive(r3), "destroy made the reservation alive first");

        // A reserved id is an ordinary live id once settled, so destroy applies to it.
        let r4 = em.reserve().unwrap();
        assert!(em.destroy(r4));
        assert!(!em.alive(r4));
        em.flush_reserved(|e| panic!("already settled, but {e} placed"));

        let ids: HashSet<Entity> = [r1, e, r2, r3].into_iter().chain(many).collect();
        assert_eq!(ids.len(), 7, "all distinct");
        assert_eq!(em.len(), 4 + 7 - 1);
    }

    #[test]
    fn a_panicking_placement_leaves_every_reserved_id_alive() {
        let (mut em, _) = with_queue(0, MINIMUM_FREE_INDICES + 2);
        let reserved: Vec<Entity> = (0..4).map(|_| em.reserve().unwrap()).collect();
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            em.flush_reserved(|_| {
                calls += 1;
                assert!(calls < 2, "placement fails");
            })
        }));
        assert!(r.is_err());
        assert!(reserved.iter().all(|&e| em.alive(e)));
        assert_eq!((em.reserved_len(), em.len(), em.free_len()), (0, 4, 1024));
        let next = em.create().unwrap();
        assert!(!reserved.contains(&next), "no reserved id is issued again");
    }

    #[test]
    fn reservations_from_many_threads_are_distinct() {
        const THREADS: usize = 4;
        let per_thread = if cfg!(miri) { 40 } else { 1000 };
        // 1,500 reusable indices, so threads take reused and fresh ids.
        let reusable = if cfg!(miri) { 60 } else { 1500 };
        let (mut em, live) = with_queue(500, MINIMUM_FREE_INDICES + reusable);
        let (mut twin, _) = with_queue(500, MINIMUM_FREE_INDICES + reusable);
        let reserved: Vec<Vec<Entity>> = std::thread::scope(|s| {
            let em = &em;
            let threads: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|_| em.reserve().unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let total = THREADS * per_thread;
        let all: HashSet<Entity> = reserved.iter().flatten().copied().collect();
        assert_eq!(all.len(), total, "no id reserved twice");
        let live_indices: HashSet<u32> = live.iter().map(|e| e.index()).collect();
        assert!(all.iter().all(|e| !live_indices.contains(&e.index())));
        assert_eq!(em.reserved_len(), total);

        let mut placed = Vec::new();
        em.flush_reserved(|e| placed.push(e));
        // Reservation order is the order of the counter: the ids `total` creates would issue.
        assert_eq!(placed, twin.create_many(total).unwrap());
        assert!(placed.iter().all(|&e| em.alive(e)));
        assert_eq!(em.len(), live.len() + total);
        assert!(live.iter().all(|&e| em.alive(e)));
    }

    #[test]
    #[cfg_attr(miri, ignore = "fills all 2^22 slots: too slow under Miri")]
    fn reservation_reports_exhaustion() {
        let mut em = EntityManager::new();
        let mut out = Vec::new();
        em.create_many_into(MAX_ENTITIES - 3, &mut out).unwrap();
        let last: Vec<Entity> = (0..3).map(|_| em.reserve().unwrap()).collect();
        assert_eq!(
            em.reserve(),
            Err(EntityError::Exhausted {
                requested: 1,
                available: 0
            })
        );
        assert_eq!((em.available(), em.reserved_len()), (0, 3));
        assert!(em.create().is_err(), "create settles the three, then fails");
        assert!(last.iter().all(|&e| em.alive(e)));
        assert_eq!(em.len(), MAX_ENTITIES);

        // From several threads at once, exactly the available ids are handed out.
        for e in out.iter().take(MINIMUM_FREE_INDICES + 5) {
            assert!(em.destroy(*e));
        }
        assert_eq!(em.available(), 5);
        let granted: usize = std::thread::scope(|s| {
            let em = &em;
            let threads: Vec<_> = (0..4)
                .map(|_| s.spawn(move || (0..10).filter(|_| em.reserve().is_ok()).count()))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(granted, 5);
        em.flush_reserved(|_| {});
        assert_eq!(
            (em.len(), em.available()),
            (MAX_ENTITIES - MINIMUM_FREE_INDICES, 0)
        );
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
        // Indices of `live` plus `pending`: no id may be issued or reserved on one of them.
        let mut used: HashSet<u32> = HashSet::new();
        let mut pending: Vec<Entity> = Vec::new();
        let mut dead: Vec<Entity> = Vec::new();
        fn issued(e: Entity, used: &mut HashSet<u32>) {
            assert!(used.insert(e.index()), "{e} issued on a slot in use");
        }
        let steps = if cfg!(miri) { 500 } else { 50_000 };
        for _ in 0..steps {
            let op = next() % 8;
            if op < 6 {
                // create, create_many and destroy make pending reservations alive first.
                live.append(&mut pending);
            }
            match op {
                0 | 1 => {
                    let e = em.create().unwrap();
                    issued(e, &mut used);
                    live.push(e);
                }
                2..=4 if !live.is_empty() => {
                    let i = (next() as usize) % live.len();
                    let e = live.swap_remove(i);
                    assert!(em.destroy(e));
                    used.remove(&e.index());
                    dead.push(e);
                }
                5 => {
                    let n = (next() % 8) as usize;
                    for e in em.create_many(n).unwrap() {
                        issued(e, &mut used);
                        live.push(e);
                    }
                }
                6 => {
                    for _ in 0..next() % 4 {
                        let e = em.reserve().unwrap();
                        issued(e, &mut used);
                        pending.push(e);
                    }
                }
                _ => {
                    let mut placed = Vec::new();
                    em.flush_reserved(|e| placed.push(e));
                    assert_eq!(placed, pending, "flushed in reservation order");
                    live.append(&mut pending);
                }
            }
            assert_eq!(em.reserved_len(), pending.len());
            assert_eq!(em.len(), live.len());
        }
        em.flush_reserved(|_| {});
        live.append(&mut pending);
        if !cfg!(miri) {
            assert!(
                live.iter().any(|e| e.generation() > 0),
                "reuse was exercised"
            );
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

    /// The private bookkeeping agrees with itself: one free bit per slot (no spare words), set
    /// exactly for the queued indices, and `len`/`is_empty` follow from the counts.
    fn check_bookkeeping(em: &EntityManager) {
        assert_eq!(
            em.free_bits.len(),
            em.generation.len().div_ceil(64),
            "one bit per slot"
        );
        let queued: HashSet<u32> = em.free.iter().copied().collect();
        assert_eq!(queued.len(), em.free.len(), "no index queued twice");
        for idx in 0..em.generation.len() as u32 {
            assert_eq!(
                em.is_free(idx),
                queued.contains(&idx),
                "free bit of slot {idx}"
            );
        }
        assert_eq!(em.len(), em.slots() - em.free_len());
        assert_eq!(
            em.is_empty(),
            em.slots() == em.free_len(),
            "is_empty agrees with the slots"
        );
    }

    #[test]
    fn free_bits_track_the_queue_exactly() {
        let mut em = EntityManager::new();
        assert!(em.is_empty());
        check_bookkeeping(&em);
        // One at a time across several 64-slot words, checking at every word boundary.
        let mut ids = Vec::new();
        for _ in 0..200 {
            ids.push(em.create().unwrap());
            check_bookkeeping(&em);
        }
        assert!(!em.is_empty());
        // Free slots at both ends of words, and in the middle.
        for &e in ids
            .iter()
            .filter(|e| matches!(e.index() % 64, 0 | 1 | 31 | 63))
        {
            assert!(em.destroy(e));
            check_bookkeeping(&em);
        }
        // Past the threshold, so creates and batches reuse queued indices.
        for e in em.create_many(MINIMUM_FREE_INDICES + 40).unwrap() {
            assert!(em.destroy(e));
        }
        check_bookkeeping(&em);
        let reused = em.create().unwrap();
        check_bookkeeping(&em);
        assert!(!em.is_free(reused.index()));
        let batch = em.create_many(20).unwrap();
        check_bookkeeping(&em);
        assert!(batch.iter().all(|e| em.alive(*e) && !em.is_free(e.index())));
        em.reserve().unwrap();
        em.reserve().unwrap();
        let mut placed = 0;
        em.flush_reserved(|_| placed += 1);
        assert_eq!(placed, 2);
        check_bookkeeping(&em);
    }

    #[test]
    fn hook_ids_are_distinct_and_removal_is_exact() {
        let mut em = EntityManager::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s1, s2) = (seen.clone(), seen.clone());
        let first = em.on_destroy(move |_| s1.lock().unwrap().push("first"));
        let second = em.on_destroy(move |_| s2.lock().unwrap().push("second"));
        assert_ne!(first, second);
        let es = em.create_many(2).unwrap();
        assert!(em.destroy(es[0]));
        assert_eq!(*seen.lock().unwrap(), ["first", "second"]);
        assert!(em.remove_hook(first));
        assert!(!em.remove_hook(first), "already removed");
        assert!(em.destroy(es[1]));
        assert_eq!(
            *seen.lock().unwrap(),
            ["first", "second", "second"],
            "removing one hook keeps the other"
        );
        assert!(em.remove_hook(second));
        assert!(!em.remove_hook(DestroyHookId(99)));
    }

    #[test]
    fn debug_output_reports_the_counts() {
        let mut em = EntityManager::new();
        let es = em.create_many(3).unwrap();
        em.destroy(es[0]);
        em.reserve().unwrap();
        em.on_destroy(|_| {});
        let text = format!("{em:?}");
        assert_eq!(
            text,
            "EntityManager { slots: 3, free: 1, live: 2, reserved: 1, hooks: 1 }"
        );
    }
}
