//! The typed store: [`SoaStore`], a part-2 component manager over a [`SoaBuffer`] for a
//! [`Columns`] tuple, with swap-erase, lazy garbage collection and the destroy queue.

use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::sync::Arc;

use super::{Columns, DestroyQueue, HashLookup, Instance, Lookup, SoaBuffer, SoaError};
use crate::entity::{DestroyHookId, Entity, EntityManager};

/// Seed of the GC's xorshift generator.
const GC_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Most instances a store holds: rows are `u32`s below `u32::MAX`, the dense lookup's nil
/// value. With 30-bit ids (at most one instance each) they always fit; with 64-bit ids
/// (`wide-entity`) the entity column alone would need 32 GiB first.
pub const MAX_INSTANCES: usize = u32::MAX as usize;

/// A part-2 component manager for the field tuple `C`, with entity lookup `L`: what the
/// generated managers wrap. Field `k` of `C` is column `k + 1` of the type-erased buffer.
/// Hidden: a user works with the named manager the derive makes, which has every method of
/// the store under the same name, plus one accessor set per field.
#[doc(hidden)]
pub struct SoaStore<C: Columns, L: Lookup = HashLookup> {
    buf: SoaBuffer,
    lookup: L,
    rng: u64,
    queue: DestroyQueue,
    /// Reused by `flush_destroyed` to drain the queue without holding its lock.
    drained: Vec<Entity>,
    /// The store owns values of the field types (drop check, auto traits).
    _fields: PhantomData<C>,
}

// SAFETY: the store owns its field values like a `Vec` of them would (the buffer's raw column
// pointers are the only reason the auto trait is missing); sending the store sends those values,
// so it is `Send` exactly when every field type (the tuple `C`) and the lookup are `Send`.
unsafe impl<C: Columns + Send, L: Lookup + Send> Send for SoaStore<C, L> {}

// SAFETY: through `&SoaStore` only shared references to field values are handed out (and the
// queue is behind a mutex), so sharing the store is sound when every field type is `Sync`.
unsafe impl<C: Columns + Sync, L: Lookup + Sync> Sync for SoaStore<C, L> {}

impl<C: Columns, L: Lookup> Default for SoaStore<C, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Columns, L: Lookup> fmt::Debug for SoaStore<C, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaStore")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("lookup", &L::NAME)
            .field("queued", &self.queue.len())
            .finish()
    }
}

impl<C: Columns, L: Lookup> SoaStore<C, L> {
    /// An empty store. Allocates nothing until the first `create`.
    pub fn new() -> Self {
        SoaStore {
            buf: SoaBuffer::new(&C::column_infos()),
            lookup: L::default(),
            rng: GC_SEED,
            queue: DestroyQueue::default(),
            drained: Vec::new(),
            _fields: PhantomData,
        }
    }

    /// An empty store with room for `capacity` instances.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut store = Self::new();
        store.reserve(capacity);
        store
    }

    /// Number of instances.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when there are no instances.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Number of instances the current allocation holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Makes room for at least `additional` more instances.
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
        self.lookup.reserve(additional);
    }

    /// Shrinks the allocation to the number of instances.
    pub fn shrink_to_fit(&mut self) {
        self.buf.allocate(self.buf.len());
    }

    /// The type-erased buffer.
    #[cfg(test)]
    pub(crate) fn buffer(&self) -> &SoaBuffer {
        &self.buf
    }

    /// The instance of `entity`, or `None` if it has none (Bitsquid's manager returns a nil
    /// instance here; an `Option` cannot be used by mistake). Stale ids find nothing.
    #[inline]
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.lookup
            .find(entity, self.buf.entities())
            .map(Instance::new)
    }

    /// Does `entity` have an instance?
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.lookup(entity).is_some()
    }

    /// The entity owning instance `i`. Panics if `i` is out of range.
    #[inline]
    pub fn entity(&self, i: Instance) -> Entity {
        self.buf.entities()[i.index()]
    }

    /// The entity column: the owner of every instance, in row order.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        self.buf.entities()
    }

    /// Every instance, in row order.
    pub fn instances(&self) -> impl ExactSizeIterator<Item = Instance> + use<C, L> {
        (0..self.len() as u32).map(Instance::new)
    }

    /// The field columns as slices, in tuple order.
    #[inline]
    pub fn fields(&self) -> C::Slices<'_> {
        // SAFETY: `buf` was built from `C::column_infos()` in `new` and is never replaced.
        unsafe { C::slices(&self.buf) }
    }

    /// The field columns as mutable slices, in tuple order: several fields can be updated in
    /// one loop.
    #[inline]
    pub fn fields_mut(&mut self) -> C::SlicesMut<'_> {
        self.columns_mut().1
    }

    /// The entity column and the mutable field columns at once.
    #[inline]
    pub fn columns_mut(&mut self) -> (&[Entity], C::SlicesMut<'_>) {
        let buf = &self.buf;
        // SAFETY: `buf` was built from `C::column_infos()`. We hold `&mut self` for the returned
        // lifetime, so nothing else reads or writes the field columns; the entity column
        // (column 0) is a disjoint byte range that is only read.
        (buf.entities(), unsafe { C::slices_mut(buf) })
    }

    /// A copy of instance `i`'s fields, in tuple order (every field type is `Copy`). Panics if
    /// `i` is out of range.
    pub fn copied(&self, i: Instance) -> C
    where
        C: Copy,
    {
        let row = i.index();
        assert!(
            row < self.len(),
            "instance {row} out of range for a manager of {}",
            crate::plural::count(self.len(), "instance", "instances")
        );
        // SAFETY: `buf` was built from `C::column_infos()` in `new`; `row < len` was checked.
        unsafe { C::read_copy(&self.buf, row) }
    }

    /// Creates an instance for `entity` with field values `values` (in tuple order). Fails,
    /// dropping `values`, if `entity` already has one. Does not check that `entity` is alive.
    pub fn create(&mut self, entity: Entity, values: C) -> Result<Instance, SoaError> {
        if let Some(instance) = self.lookup(entity) {
            return Err(SoaError::AlreadyExists { entity, instance });
        }
        self.buf.reserve(1);
        let row = self.buf.len();
        assert!(row < MAX_INSTANCES, "at most {MAX_INSTANCES} instances");
        let instance = row as u32;
        self.lookup.insert(entity, instance, self.buf.entities());
        // SAFETY: `buf` was built from `C::column_infos()`; `reserve(1)` made `row < capacity`,
        // and row `len` is uninitialized. Writing the fields cannot panic, and then every
        // column of the row is initialized, as `push_entity` requires.
        unsafe {
            values.write(&mut self.buf, row);
            self.buf.push_entity(entity);
        }
        Ok(Instance::new(instance))
    }

    /// Destroys instance `i` by swap-erase (as Bitsquid's managers do): the last instance moves
    /// into its row and its lookup entry follows. Panics if `i` is out of range.
    pub fn destroy(&mut self, i: Instance) {
        let entities = self.buf.entities();
        let row = i.index();
        assert!(
            row < entities.len(),
            "instance {row} out of range for a manager of {}",
            crate::plural::count(entities.len(), "instance", "instances")
        );
        let last = entities.len() - 1;
        let (entity, moved) = (entities[row], entities[last]);
        // Fix the lookup first: if a field's `Drop` panics below, the store is consistent.
        self.lookup.remove(entity, row as u32);
        if row != last {
            self.lookup.relocate(moved, last as u32, row as u32);
        }
        self.buf.swap_remove(row);
    }

    /// Destroys `entity`'s instance, if it has one. Returns whether it had.
    pub fn destroy_entity(&mut self, entity: Entity) -> bool {
        match self.lookup(entity) {
            Some(i) => {
                self.destroy(i);
                true
            }
            None => false,
        }
    }

    /// Destroys every instance, keeping the allocation.
    pub fn clear(&mut self) {
        self.lookup.clear();
        self.buf.clear();
    }

    /// The classic SoA manager's lazy garbage collection: picks random instances and destroys those whose entity
    /// is dead, until it meets four live ones in a row. Cheap when nothing died (four probes);
    /// fast when much did. Returns how many instances it destroyed.
    pub fn gc(&mut self, em: &EntityManager) -> usize {
        let mut alive_in_row = 0;
        let mut destroyed = 0;
        while !self.is_empty() && alive_in_row < 4 {
            let row = self.random_below(self.len());
            if em.alive(self.buf.entities()[row]) {
                alive_in_row += 1;
                continue;
            }
            alive_in_row = 0;
            self.destroy(Instance::new(row as u32));
            destroyed += 1;
        }
        destroyed
    }

    /// Exhaustive garbage collection: destroys the instance of every dead entity, in one pass.
    /// Returns how many it destroyed.
    pub fn gc_all(&mut self, em: &EntityManager) -> usize {
        let mut destroyed = 0;
        let mut row = 0;
        while row < self.len() {
            if em.alive(self.buf.entities()[row]) {
                row += 1;
            } else {
                // The last row moves into `row`; look at it next.
                self.destroy(Instance::new(row as u32));
                destroyed += 1;
            }
        }
        destroyed
    }

    /// A handle to this store's destroy queue, for a hook of your own.
    pub fn destroy_queue(&self) -> DestroyQueue {
        self.queue.clone()
    }

    /// Immediate clean-up (the classic SoA manager's destruction callback): registers a hook with `em` that
    /// queues every destroyed entity; [`SoaStore::flush_destroyed`] then destroys their
    /// instances. Remove it with [`EntityManager::remove_hook`].
    ///
    /// The hook cannot hold `&mut self` (hooks are `Send + Sync + 'static`), hence the queue.
    /// It receives every destroyed entity, with or without an instance here; call
    /// `flush_destroyed` regularly to keep the queue short. The hook holds the queue weakly:
    /// once the store and every [`DestroyQueue`] handle are dropped, it does nothing.
    pub fn register_destroy_hook(&self, em: &mut EntityManager) -> DestroyHookId {
        let queue = Arc::downgrade(&self.queue.0);
        em.on_destroy(move |e| {
            if let Some(queue) = queue.upgrade() {
                DestroyQueue(queue).push(e);
            }
        })
    }

    /// Destroys the instances of the entities queued by the destroy hook, in queue order.
    /// Returns how many instances it destroyed.
    ///
    /// If a field's `Drop` panics, the panic propagates with the store consistent: the entity
    /// being destroyed has lost its instance, and the entities not reached yet are back at the
    /// front of the queue, so the next flush destroys them.
    pub fn flush_destroyed(&mut self) -> usize {
        /// Puts the entities the loop has not reached back into the queue if a `Drop` panics.
        struct Requeue {
            queue: DestroyQueue,
            entities: Vec<Entity>,
            next: usize,
        }
        impl Drop for Requeue {
            fn drop(&mut self) {
                let rest = self.entities.get(self.next..).unwrap_or_default();
                if !rest.is_empty() {
                    self.queue.requeue_front(rest);
                }
            }
        }
        let mut pending = Requeue {
            queue: self.queue.clone(),
            entities: mem::take(&mut self.drained),
            next: 0,
        };
        self.queue.swap_into(&mut pending.entities);
        let mut destroyed = 0;
        while let Some(&entity) = pending.entities.get(pending.next) {
            pending.next += 1;
            destroyed += usize::from(self.destroy_entity(entity));
        }
        // Every entity was reached: keep the buffer (cleared) for the next flush.
        self.drained = mem::take(&mut pending.entities);
        self.drained.clear();
        destroyed
    }

    /// xorshift64: a uniform-enough index in `0..n` for GC probes, without a dependency.
    fn random_below(&mut self, n: usize) -> usize {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        ((u128::from(x) * n as u128) >> 64) as usize
    }

    /// Checks the invariants of the [module docs](super#safety) and that every row's entity
    /// finds that row.
    #[cfg(test)]
    pub(super) fn assert_invariants(&self) {
        self.buf.assert_invariants();
        for (row, e) in self.entities().iter().enumerate() {
            assert_eq!(
                self.lookup(*e),
                Some(Instance::new(row as u32)),
                "{e:?} at row {row}"
            );
        }
        self.lookup.assert_invariants(self.entities());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::rc::Rc;

    use super::*;
    use crate::soa::ent;

    #[test]
    fn copied_reads_every_field_of_a_row() {
        // Mixed sizes and alignments, a zero-sized field, and rows moved by swap-erase.
        let mut s: SoaStore<(u8, u64, (), [u16; 3])> = SoaStore::new();
        let es: Vec<Entity> = (0..4).map(|i| ent(i, 0)).collect();
        for (n, e) in es.iter().enumerate() {
            let n = n as u16;
            s.create(*e, (n as u8, u64::MAX - n as u64, (), [n, n + 1, n + 2]))
                .unwrap();
        }
        s.destroy(Instance::new(0));
        let i = s.lookup(es[3]).unwrap();
        assert_eq!(i, Instance::new(0));
        assert_eq!(s.copied(i), (3, u64::MAX - 3, (), [3, 4, 5]));
        assert_eq!(
            s.copied(s.lookup(es[1]).unwrap()),
            (1, u64::MAX - 1, (), [1, 2, 3])
        );
        let empty: SoaStore<()> = SoaStore::new();
        assert!(catch_unwind(AssertUnwindSafe(|| empty.copied(Instance::new(0)))).is_err());
    }

    #[test]
    fn swap_erase_keeps_the_map_right() {
        let mut s: SoaStore<(u32,)> = SoaStore::new();
        let es: Vec<Entity> = (0..5).map(|i| ent(i, 3)).collect();
        for (n, e) in es.iter().enumerate() {
            assert_eq!(
                s.create(*e, (n as u32 * 10,)).unwrap(),
                Instance::new(n as u32)
            );
        }
        // Destroying row 1 moves the last row (entity 4) into it.
        s.destroy(Instance::new(1));
        assert_eq!(s.entities(), &[es[0], es[4], es[2], es[3]]);
        assert_eq!(s.lookup(es[4]), Some(Instance::new(1)));
        assert_eq!(s.fields().0, &[0, 40, 20, 30]);
        assert_eq!(s.lookup(es[1]), None);
        // Destroying the last row moves nothing.
        s.destroy(Instance::new(3));
        assert_eq!(s.entities(), &[es[0], es[4], es[2]]);
        s.assert_invariants();
        assert!(!s.destroy_entity(es[3]));
        assert!(s.destroy_entity(es[0]));
        assert_eq!(s.lookup(es[2]), Some(Instance::new(0)));
        assert_eq!(
            s.create(es[2], (7,)),
            Err(SoaError::AlreadyExists {
                entity: es[2],
                instance: Instance::new(0)
            })
        );
        assert!(s
            .create(es[2], (7,))
            .unwrap_err()
            .to_string()
            .contains("already has"));
        s.assert_invariants();
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn destroying_an_out_of_range_instance_panics() {
        let mut s: SoaStore<(u32,)> = SoaStore::new();
        s.create(ent(0, 0), (1,)).unwrap();
        s.destroy(Instance::new(1));
    }

    /// Counts drops per value id, to prove each value is dropped exactly once.
    #[derive(Debug)]
    struct Tracked {
        id: u32,
        drops: Rc<std::cell::RefCell<HashMap<u32, u32>>>,
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            *self.drops.borrow_mut().entry(self.id).or_default() += 1;
        }
    }

    #[test]
    fn every_value_is_dropped_exactly_once() {
        let drops = Rc::new(std::cell::RefCell::new(HashMap::new()));
        let t = |id| Tracked {
            id,
            drops: drops.clone(),
        };
        let total =
            |d: &Rc<std::cell::RefCell<HashMap<u32, u32>>>| d.borrow().values().sum::<u32>();
        {
            let mut s: SoaStore<(Tracked, u8, Tracked)> = SoaStore::new();
            for n in 0..20 {
                s.create(ent(n, 0), (t(n), 0, t(100 + n))).unwrap();
            }
            assert_eq!(total(&drops), 0, "growth moves without dropping");
            s.destroy(Instance::new(3));
            assert_eq!(drops.borrow().get(&3), Some(&1));
            assert_eq!(drops.borrow().get(&103), Some(&1));
            assert_eq!(total(&drops), 2);
            // A refused create drops its values.
            assert!(s.create(ent(0, 0), (t(500), 0, t(501))).is_err());
            assert_eq!(total(&drops), 4);
            s.fields_mut().0[0] = t(600);
            assert_eq!(
                drops.borrow().get(&0),
                Some(&1),
                "assignment drops the old value"
            );
            for n in 5..10 {
                s.destroy_entity(ent(n, 0));
            }
            assert_eq!(total(&drops), 15);
            let em = EntityManager::new(); // nothing alive
            let left = s.len();
            assert_eq!(s.gc(&em), left, "with nothing alive gc empties the store");
            assert!(s.is_empty());
            assert_eq!(total(&drops), 43);
            s.create(ent(1, 0), (t(700), 0, t(701))).unwrap();
            s.create(ent(2, 0), (t(702), 0, t(703))).unwrap();
            s.clear();
            assert_eq!(total(&drops), 47);
            s.create(ent(1, 0), (t(800), 0, t(801))).unwrap();
        } // dropping the store drops the rest
        assert_eq!(total(&drops), 49);
        assert!(
            drops.borrow().values().all(|&n| n == 1),
            "{:?}",
            drops.borrow()
        );
    }

    #[test]
    fn gc_destroys_only_dead_entities() {
        let mut em = EntityManager::new();
        let count = if cfg!(miri) { 60 } else { 500 };
        let es = em.create_many(count).unwrap();
        let mut s: SoaStore<(u32,)> = SoaStore::new();
        for e in &es {
            s.create(*e, (e.index(),)).unwrap();
        }
        assert_eq!(s.gc(&em), 0, "nothing dead: four probes, nothing destroyed");
        for e in es.iter().step_by(2) {
            em.destroy(*e);
        }
        let mut total = 0;
        let mut calls = 0;
        while s.entities().iter().any(|e| !em.alive(*e)) {
            let before = s.len();
            let n = s.gc(&em);
            assert_eq!(before - s.len(), n);
            total += n;
            calls += 1;
            assert!(s.entities().iter().filter(|e| em.alive(**e)).count() == count / 2);
            assert!(calls < 10_000, "gc never finishes");
        }
        assert_eq!(total, count / 2);
        assert_eq!(s.len(), count / 2);
        for e in &es {
            assert_eq!(s.contains(*e), em.alive(*e));
            if let Some(i) = s.lookup(*e) {
                assert_eq!(s.fields().0[i.index()], e.index());
            }
        }
        s.assert_invariants();
        // gc_all: exhaustive, one call.
        for e in es.iter().skip(1).step_by(4) {
            em.destroy(*e);
        }
        assert_eq!(s.gc_all(&em), count / 4);
        assert_eq!(s.gc_all(&em), 0);
        assert!(s.entities().iter().all(|e| em.alive(*e)));
        assert_eq!(s.len(), em.len());
        s.assert_invariants();
    }

    #[test]
    fn destroy_hook_and_flush() {
        let mut em = EntityManager::new();
        let mut s: SoaStore<(f32, u64)> = SoaStore::new();
        let hook = s.register_destroy_hook(&mut em);
        let es = em.create_many(6).unwrap();
        for e in &es[..4] {
            s.create(*e, (1.0, 2)).unwrap();
        }
        em.destroy(es[1]);
        em.destroy(es[5]); // has no component
        assert_eq!(s.destroy_queue().len(), 2);
        assert_eq!(s.len(), 4, "nothing happens before the flush");
        assert_eq!(s.flush_destroyed(), 1);
        assert!(s.destroy_queue().is_empty());
        assert_eq!(s.entities().len(), 3);
        assert!(!s.contains(es[1]));
        assert_eq!(s.flush_destroyed(), 0);
        assert!(em.remove_hook(hook));
        em.destroy(es[0]);
        assert_eq!(s.flush_destroyed(), 0, "hook removed");
        assert!(s.contains(es[0]));
        s.assert_invariants();
    }

    #[test]
    fn a_panicking_drop_leaves_the_rest_of_the_destroy_queue_queued() {
        thread_local!(static DROPS: std::cell::RefCell<Vec<u32>> = const {
            std::cell::RefCell::new(Vec::new())
        });
        /// Records its id when dropped; the one with `panics` set then panics.
        struct Fragile {
            id: u32,
            panics: bool,
        }
        impl Drop for Fragile {
            fn drop(&mut self) {
                DROPS.with(|d| d.borrow_mut().push(self.id));
                if self.panics {
                    panic!("Fragile {} refuses to go", self.id);
                }
            }
        }
        let drops = || DROPS.with(|d| d.borrow().clone());

        let mut em = EntityManager::new();
        let mut s: SoaStore<(Fragile, u32)> = SoaStore::new();
        s.register_destroy_hook(&mut em);
        let es = em.create_many(6).unwrap();
        for (n, e) in (0..).zip(&es) {
            s.create(
                *e,
                (
                    Fragile {
                        id: n,
                        panics: n == 2,
                    },
                    n,
                ),
            )
            .unwrap();
        }
        for e in &es[..5] {
            em.destroy(*e);
        }
        assert_eq!(s.destroy_queue().len(), 5);

        let r = catch_unwind(AssertUnwindSafe(|| s.flush_destroyed()));
        assert!(r.is_err(), "the Drop panic propagates");
        assert_eq!(drops(), [0, 1, 2], "entities 0, 1 and 2 were destroyed");
        assert_eq!(s.len(), 3);
        assert!(!s.contains(es[2]), "the panicking one lost its instance");
        assert!(s.contains(es[3]) && s.contains(es[4]) && s.contains(es[5]));
        assert_eq!(s.destroy_queue().len(), 2, "entities 3 and 4 stay queued");
        s.assert_invariants();

        // An entity destroyed after the panic queues behind the two that were put back.
        em.destroy(es[5]);
        assert_eq!(s.flush_destroyed(), 3);
        assert_eq!(
            drops(),
            [0, 1, 2, 3, 4, 5],
            "each value dropped exactly once"
        );
        assert!(s.is_empty());
        assert!(s.destroy_queue().is_empty());
        assert_eq!(s.flush_destroyed(), 0);
        s.assert_invariants();
    }
}
