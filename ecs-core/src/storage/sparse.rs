//! A sparse set: the values of one `#[component(sparse)]` component, packed, with a slot per
//! entity index that says where an entity's value is. Adding or removing the component sets
//! or clears one slot and moves at most one value (the last, into the hole); the entity's row
//! in its table store does not move. The price is a lookup per row when a query visits the
//! component.

use super::{copy_bytes, Column, ColumnType};
use crate::entity::Entity;
use std::sync::atomic::{AtomicU64, Ordering};

/// One sparse component's values, type-erased like a [`Column`].
pub(crate) struct SparseSet {
    /// Per entity index: 1 + the position of its value, or 0 when it has none.
    slots: Vec<u32>,
    /// The entity of each value, in value order.
    entities: Vec<Entity>,
    /// The values, `entities.len()` of them initialised.
    values: Column,
    /// The change stamp of each value (when it was inserted or last taken mutably).
    stamps: Vec<u64>,
    /// The stamp of the last mutable query over the set, which may have written every value.
    /// Atomic so that a query can stamp it through a shared borrow, as a column's.
    written: AtomicU64,
}

impl SparseSet {
    /// An empty set of values of type `ty`.
    pub(crate) fn new(ty: &'static ColumnType) -> Self {
        SparseSet {
            slots: Vec::new(),
            entities: Vec::new(),
            values: Column::new(ty),
            stamps: Vec::new(),
            written: AtomicU64::new(0),
        }
    }

    /// The values' type.
    #[inline]
    pub(crate) fn ty(&self) -> &'static ColumnType {
        self.values.ty()
    }

    /// Number of values.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// The entity of each value, in value order.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The position of `entity`'s value, if it has one. A stale id with the same index finds
    /// nothing: the stored entity must match exactly.
    #[inline]
    pub(crate) fn position(&self, entity: Entity) -> Option<usize> {
        let slot = *self.slots.get(entity.index() as usize)?;
        let at = (slot as usize).checked_sub(1)?;
        (self.entities[at] == entity).then_some(at)
    }

    /// Pointer to the value at `at` (in bounds: `at < len`).
    #[inline]
    pub(crate) fn ptr_at(&self, at: usize) -> *mut u8 {
        debug_assert!(at < self.len());
        self.values.ptr_at(at)
    }

    /// The values' base pointer and the slots, for a query's per-row lookups: the value of
    /// the entity with index `i` is at `base + (slots[i] - 1) * size` when `slots[i] != 0`
    /// (the caller checks the entity is the live one of its row).
    #[inline]
    pub(crate) fn raw(&self) -> (*mut u8, &[u32]) {
        (self.values.base(), &self.slots)
    }

    /// Was the value at `at` written after `since`?
    #[inline]
    pub(crate) fn changed(&self, at: usize, since: u64) -> bool {
        self.stamps[at].max(self.written.load(Ordering::Relaxed)) > since
    }

    /// Records a write of the value at `at`.
    #[inline]
    pub(crate) fn mark(&mut self, at: usize, stamp: u64) {
        self.stamps[at] = stamp;
    }

    /// Records a possible write of every value (a mutable query).
    pub(crate) fn mark_written(&self, stamp: u64) {
        self.written.store(stamp, Ordering::Relaxed);
    }

    /// Appends `entity`'s value, moved from `value`.
    ///
    /// # Safety
    /// `value` points to an initialised value of the set's type, which the caller then treats
    /// as moved; `entity` has no value here (`position(entity)` is `None`).
    pub(crate) unsafe fn push(&mut self, entity: Entity, value: *const u8, stamp: u64) {
        let len = self.room_for(entity);
        // SAFETY: `len` is below the capacity; the caller guarantees `value`; the two
        // locations are distinct allocations.
        unsafe { copy_bytes(value, self.values.ptr_at(len), self.values.elem_size()) };
        self.link(entity, len, stamp);
    }

    /// [`SparseSet::push`] of a typed value: the path of `World::insert`, with a typed write
    /// instead of a copy of a run-time size.
    ///
    /// # Safety
    /// `T` is the set's type; `entity` has no value here.
    #[inline]
    pub(crate) unsafe fn push_typed<T>(&mut self, entity: Entity, value: T, stamp: u64) {
        let len = self.room_for(entity);
        // SAFETY: `len` is below the capacity; the set's values are `T`s (the caller).
        unsafe { self.values.ptr_at(len).cast::<T>().write(value) };
        self.link(entity, len, stamp);
    }

    /// Makes room for `entity`'s slot and one more value; returns where the value goes (the
    /// length).
    #[inline]
    fn room_for(&mut self, entity: Entity) -> usize {
        debug_assert!(self.position(entity).is_none());
        let index = entity.index() as usize;
        if self.slots.len() <= index {
            self.slots.resize(index + 1, 0);
        }
        let len = self.len();
        if len == self.values.capacity() {
            self.values.reserve(len, 1);
        }
        len
    }

    /// Lists `entity` with the value just written at position `len`.
    #[inline]
    fn link(&mut self, entity: Entity, len: usize, stamp: u64) {
        self.entities.push(entity);
        self.stamps.push(stamp);
        self.slots[entity.index() as usize] = len as u32 + 1;
    }

    /// [`SparseSet::take`] of a typed value (the path of `World::remove`).
    ///
    /// # Safety
    /// `at < len`; `T` is the set's type.
    #[inline]
    pub(crate) unsafe fn take_typed<T>(&mut self, at: usize) -> T {
        let last = self.len() - 1;
        let values = self.values.base().cast::<T>();
        // SAFETY: `at` and `last` are initialised values of type T (the caller); the value at
        // `at` is read out once, then the last one moved into its place.
        let value = unsafe {
            let value = values.add(at).read();
            if at != last {
                std::ptr::copy_nonoverlapping(values.add(last), values.add(at), 1);
            }
            value
        };
        self.unlink(at);
        value
    }

    /// Moves the value at `at` out to `out` and the last value into its place.
    ///
    /// # Safety
    /// `at < len`; `out` has room for a value of the set's type, which the caller then owns.
    pub(crate) unsafe fn take(&mut self, at: usize, out: *mut u8) {
        let size = self.values.elem_size();
        let last = self.len() - 1;
        // SAFETY: `at` is initialised and `out` is the caller's room, distinct from the set;
        // then distinct, initialised slots of one allocation (`at`'s value moved out).
        unsafe {
            copy_bytes(self.values.ptr_at(at), out, size);
            if at != last {
                copy_bytes(self.values.ptr_at(last), self.values.ptr_at(at), size);
            }
        }
        self.unlink(at);
    }

    /// Forgets the entity at `at`, whose value was moved out and replaced by the last one: the
    /// last entity and stamp follow their value, and the slots are updated.
    #[inline]
    fn unlink(&mut self, at: usize) {
        let entity = self.entities.swap_remove(at);
        self.stamps.swap_remove(at);
        if let Some(&moved) = self.entities.get(at) {
            self.slots[moved.index() as usize] = at as u32 + 1;
        }
        self.slots[entity.index() as usize] = 0;
    }

    /// Removes every value, dropping them after the set is empty.
    pub(crate) fn clear(&mut self) {
        let len = self.len();
        for e in self.entities.drain(..) {
            self.slots[e.index() as usize] = 0;
        }
        self.stamps.clear();
        // SAFETY: values `0..len` were initialised; the set no longer lists them.
        unsafe { self.values.drop_range(0, len) };
    }

    /// Every slot points at a value of its own entity index, and every value's entity has
    /// that slot. For [`crate::World::check_invariants`].
    pub(crate) fn check(&self) -> Result<(), String> {
        for (at, e) in self.entities.iter().enumerate() {
            if self.slots.get(e.index() as usize) != Some(&(at as u32 + 1)) {
                return Err(format!(
                    "sparse value {at} of entity {e} is not in its slot"
                ));
            }
        }
        let used = self.slots.iter().filter(|&&s| s != 0).count();
        if used != self.len() || self.stamps.len() != self.len() {
            use crate::plural::count;
            return Err(format!(
                "{} and {} for {}",
                count(used, "slot", "slots"),
                count(self.stamps.len(), "stamp", "stamps"),
                count(self.len(), "sparse value", "sparse values")
            ));
        }
        Ok(())
    }
}

impl Drop for SparseSet {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::mem::{ManuallyDrop, MaybeUninit};

    thread_local! {
        static DROPS: Cell<usize> = const { Cell::new(0) };
    }

    /// Counts its drops; panics when dropped if armed.
    struct Counted(u32, bool);
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
            if self.1 && !std::thread::panicking() {
                panic!("armed value {} dropped", self.0);
            }
        }
    }
    static COUNTED: ColumnType = ColumnType::of::<Counted>();

    fn push(s: &mut SparseSet, e: Entity, v: u32, armed: bool) {
        if e.index() % 2 == 0 {
            // SAFETY: the set holds Counted values; `e` is new to it.
            unsafe { s.push_typed(e, Counted(v, armed), 7) };
            return;
        }
        let value = ManuallyDrop::new(Counted(v, armed));
        // SAFETY: `value` is an owned Counted, not used again; `e` is new to the set.
        unsafe { s.push(e, (&*value as *const Counted).cast(), 7) };
    }

    fn get(s: &SparseSet, e: Entity) -> Option<u32> {
        // SAFETY: a position's value is an initialised Counted.
        s.position(e)
            .map(|at| unsafe { (*s.ptr_at(at).cast::<Counted>()).0 })
    }

    fn take(s: &mut SparseSet, e: Entity) -> Option<u32> {
        let at = s.position(e)?;
        if e.index() % 2 == 0 {
            // Both paths, typed and by bytes, alike.
            // SAFETY: `at` is a position; the set holds Counted values.
            let v = unsafe { s.take_typed::<Counted>(at) };
            let n = v.0;
            drop(v);
            return Some(n);
        }
        let mut out = MaybeUninit::<Counted>::uninit();
        // SAFETY: `at` is a position; `out` has room for a Counted, owned afterwards.
        let v = unsafe {
            s.take(at, out.as_mut_ptr().cast());
            out.assume_init()
        };
        let n = v.0;
        drop(v);
        Some(n)
    }

    #[test]
    fn values_are_found_by_their_exact_entity_and_removal_moves_the_last_into_the_hole() {
        let mut s = SparseSet::new(&COUNTED);
        let es: Vec<Entity> = (0..5).map(|i| Entity::new(i * 3, 1)).collect();
        for (i, &e) in es.iter().enumerate() {
            push(&mut s, e, i as u32 * 10, false);
        }
        assert_eq!(s.len(), 5);
        assert_eq!(get(&s, es[2]), Some(20));
        // Same index, other generation: not found.
        assert_eq!(get(&s, Entity::new(6, 2)), None);
        assert_eq!(get(&s, Entity::new(100, 1)), None);
        assert_eq!(take(&mut s, es[1]), Some(10));
        assert_eq!(s.entities(), &[es[0], es[4], es[2], es[3]]);
        assert_eq!(get(&s, es[4]), Some(40));
        assert_eq!(get(&s, es[1]), None);
        assert_eq!(take(&mut s, es[3]), Some(30), "the last value: no move");
        assert_eq!(s.check(), Ok(()));
        DROPS.with(|d| d.set(0));
        assert_eq!(take(&mut s, es[0]), Some(0));
        assert_eq!(take(&mut s, es[0]), None);
        assert_eq!(DROPS.with(|d| d.get()), 1);
        assert_eq!(s.entities(), &[es[2], es[4]]);
        assert_eq!(s.check(), Ok(()));
        drop(s);
        assert_eq!(
            DROPS.with(|d| d.get()),
            3,
            "dropping the set drops what it holds"
        );
    }

    #[test]
    fn a_panicking_drop_leaves_the_set_consistent() {
        let mut s = SparseSet::new(&COUNTED);
        let (a, b, c) = (Entity::new(0, 0), Entity::new(1, 0), Entity::new(2, 0));
        push(&mut s, a, 1, true);
        push(&mut s, b, 2, false);
        push(&mut s, c, 3, true);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| take(&mut s, a)));
        assert!(r.is_err(), "the taken value panics when dropped");
        assert_eq!(s.entities(), &[c, b]);
        assert_eq!(s.check(), Ok(()));
        DROPS.with(|d| d.set(0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.clear()));
        assert!(r.is_err());
        assert_eq!(
            DROPS.with(|d| d.get()),
            2,
            "the values after the panicking one drop too"
        );
        assert_eq!(s.len(), 0);
        assert_eq!(s.check(), Ok(()));
        assert_eq!(get(&s, b), None);
    }

    #[test]
    fn stamps_follow_their_values() {
        let mut s = SparseSet::new(&COUNTED);
        let (a, b) = (Entity::new(4, 0), Entity::new(9, 0));
        push(&mut s, a, 1, false);
        push(&mut s, b, 2, false);
        s.mark(1, 42);
        assert_eq!(take(&mut s, a), Some(1));
        assert_eq!(s.position(b), Some(0));
        assert!(s.changed(0, 41) && !s.changed(0, 42));
        s.mark_written(50);
        assert!(s.changed(0, 49) && !s.changed(0, 50));
    }
}
