//! A sparse set: the values of one `#[component(sparse)]` component, packed, with a slot per
//! entity index that says where an entity's value is. Adding or removing the component sets
//! or clears one slot and moves at most one value (the last, into the hole); the entity's row
//! in its table store does not move. The price is a lookup per row when a query visits the
//! component.

use super::{copy_bytes, Column, ColumnType};
use crate::entity::Entity;
use crate::state::hash::StateHasher;
use crate::state::ops::{Copying, HashFn};
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
    /// The add stamp of each value (when it was inserted).
    added: Vec<u64>,
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
            added: Vec::new(),
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
        let (value, all) = (self.stamps[at], self.written.load(Ordering::Relaxed));
        super::versions::tick(value).max(super::versions::tick(all)) > super::versions::tick(since)
    }

    /// Was the value at `at` inserted after `since`? (A write is not an insert.)
    #[inline]
    pub(crate) fn added(&self, at: usize, since: u64) -> bool {
        super::versions::tick(self.added[at]) > super::versions::tick(since)
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
        self.added.push(stamp);
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
        self.added.swap_remove(at);
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
        self.added.clear();
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
        if used != self.len() || self.stamps.len() != self.len() || self.added.len() != self.len() {
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

/// A sparse set's values as a world state keeps them: copied whole at every save (a sparse
/// component is on few entities; its values move on every removal, so chunk records would not
/// say which positions changed).
pub(crate) struct SparseImage {
    entities: Vec<Entity>,
    stamps: Vec<u64>,
    added: Vec<u64>,
    written: u64,
    /// The values, `entities.len()` of them, unless the component is `no_rollback` (none).
    values: Column,
    /// How values are copied (none for a no_rollback component).
    copying: Copying,
    saved: bool,
}

// SAFETY: as `SparseSet`: owned values of a `Send + Sync` type.
unsafe impl Send for SparseImage {}
// SAFETY: as above.
unsafe impl Sync for SparseImage {}

impl SparseImage {
    /// An empty image of a set of values of type `ty`, holding values unless `no_rollback`.
    pub(crate) fn new(ty: &'static ColumnType, copying: Copying) -> Self {
        SparseImage {
            entities: Vec::new(),
            stamps: Vec::new(),
            added: Vec::new(),
            written: 0,
            values: Column::new(ty),
            copying,
            saved: !matches!(copying, Copying::NoRollback { .. }),
        }
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// Feeds the image into a checksum, as [`SparseSet::hash_into`] feeds the set.
    pub(crate) fn hash_into(&self, hash: Option<HashFn>, h: &mut StateHasher) {
        let values = self.saved.then(|| self.values.base());
        hash_parts(
            &self.entities,
            [&self.stamps, &self.added],
            self.written,
            values,
            self.values.elem_size(),
            hash,
            h,
        );
    }

    /// A copy (cloning the values), for a state's `Clone`.
    pub(crate) fn duplicate(&self) -> SparseImage {
        let copying = self.copying;
        let mut copy = SparseImage::new(self.values.ty(), copying);
        let n = self.len();
        if self.saved {
            let size = self.values.elem_size();
            copy.values.reserve(0, n);
            match copying {
                // SAFETY: `n` initialised values here, room for `n` in the copy.
                Copying::Bits => unsafe {
                    copy_bytes(self.values.base(), copy.values.base(), n * size)
                },
                // SAFETY: as above; all or nothing.
                Copying::Clone { new, .. } => unsafe {
                    new(self.values.base(), size, copy.values.base(), size, n)
                },
                Copying::NoRollback { .. } => unreachable!("a saved image"),
            }
        }
        copy.entities = self.entities.clone();
        copy.stamps = self.stamps.clone();
        copy.added = self.added.clone();
        copy.written = self.written;
        copy
    }
}

impl Drop for SparseImage {
    fn drop(&mut self) {
        let n = if self.saved { self.entities.len() } else { 0 };
        self.entities.clear();
        // SAFETY: the first `n` values are initialised and owned by the image.
        unsafe { self.values.drop_range(0, n) };
    }
}

/// Feeds a set's parts into a checksum: its length, entities, change and add stamps (clock
/// bits) and, when they are held and can be hashed, its values.
fn hash_parts(
    entities: &[Entity],
    stamps: [&[u64]; 2],
    written: u64,
    values: Option<*mut u8>,
    size: usize,
    hash: Option<HashFn>,
    h: &mut StateHasher,
) {
    h.write_word(entities.len() as u64);
    h.write_bytes(super::store::entity_bytes(entities));
    for &s in stamps.into_iter().flatten() {
        h.write_word(super::versions::tick(s));
    }
    h.write_word(super::versions::tick(written));
    if let (Some(values), Some(hash)) = (values, hash) {
        // SAFETY: `entities.len()` initialised values of the hashed type, contiguous.
        unsafe { hash(values, size, entities.len(), h) };
    }
}

/// A sparse set rebuilt from an image for a load, before the world changes: the image's
/// entities and stamps, and its values cloned (a saved component) or, for a no_rollback
/// component, the defaults of the entities the world's set has no value for (the others are
/// moved over at the commit).
pub(crate) struct StagedSet {
    entities: Vec<Entity>,
    stamps: Vec<u64>,
    added: Vec<u64>,
    written: u64,
    values: Column,
    /// Positions of `values` holding a value (all when cloned).
    filled: Vec<usize>,
    /// (position here, position in the world's set) of the values to move over.
    carried: Vec<(usize, usize)>,
}

impl Drop for StagedSet {
    fn drop(&mut self) {
        if let Some(drop) = self.values.ty().drop_slice {
            for &i in &self.filled {
                // SAFETY: a filled position holds a value owned here, dropped once.
                unsafe { drop(self.values.ptr_at(i), 1) };
            }
        }
    }
}

impl SparseSet {
    /// Copies the set into `image` (the values with `copying`'s clone over the image's, or as
    /// bytes; none for a no_rollback component). A panicking `Clone` leaves the image valid.
    pub(crate) fn save_image(&self, image: &mut SparseImage, copying: Copying) {
        let (n, m) = (self.len(), image.len());
        if image.saved {
            if m > n {
                image.entities.truncate(n);
                // SAFETY: values n..m were initialised and are past the image's length now.
                unsafe { image.values.drop_range(n, m) };
            }
            let common = n.min(m);
            let size = self.values.elem_size();
            match copying {
                // SAFETY: values below both lengths are initialised, of one type.
                Copying::Bits => unsafe {
                    copy_bytes(self.values.base(), image.values.base(), common * size)
                },
                // SAFETY: as above; `over` keeps every value valid if a clone panics.
                Copying::Clone { over, .. } => unsafe {
                    over(self.values.base(), size, image.values.base(), size, common)
                },
                Copying::NoRollback { .. } => unreachable!("a saved image"),
            }
            image.entities[..common].copy_from_slice(&self.entities[..common]);
            if n > m {
                image.values.reserve(m, n - m);
                match copying {
                    // SAFETY: values m..n are initialised here; the image has room for them,
                    // unwritten.
                    Copying::Bits => unsafe {
                        copy_bytes(
                            self.values.ptr_at(m),
                            image.values.ptr_at(m),
                            (n - m) * size,
                        )
                    },
                    // SAFETY: as above; `new` is all or nothing.
                    Copying::Clone { new, .. } => unsafe {
                        new(
                            self.values.ptr_at(m),
                            size,
                            image.values.ptr_at(m),
                            size,
                            n - m,
                        )
                    },
                    Copying::NoRollback { .. } => unreachable!("a saved image"),
                }
                image.entities.extend_from_slice(&self.entities[m..]);
            }
        } else {
            image.entities.clone_from(&self.entities);
        }
        image.stamps.clone_from(&self.stamps);
        image.added.clone_from(&self.added);
        image.written = self.written.load(Ordering::Relaxed);
    }

    /// Feeds the set into a checksum (as an image saved from it would).
    pub(crate) fn hash_into(&self, copying: Copying, hash: Option<HashFn>, h: &mut StateHasher) {
        let values = (!matches!(copying, Copying::NoRollback { .. })).then(|| self.values.base());
        let written = self.written.load(Ordering::Relaxed);
        hash_parts(
            &self.entities,
            [&self.stamps, &self.added],
            written,
            values,
            self.values.elem_size(),
            hash,
            h,
        );
    }

    /// The set `image` describes, built apart (see [`StagedSet`]): all or nothing, this set
    /// untouched.
    pub(crate) fn stage_image(&self, image: &SparseImage, copying: Copying) -> StagedSet {
        let n = image.len();
        let mut values = Column::new(self.values.ty());
        values.reserve(0, n);
        let mut staged = StagedSet {
            entities: image.entities.clone(),
            stamps: image.stamps.clone(),
            added: image.added.clone(),
            written: image.written,
            values,
            filled: Vec::new(),
            carried: Vec::new(),
        };
        let size = self.values.elem_size();
        match copying {
            // SAFETY: `n` initialised values in the image, room for `n` here.
            Copying::Bits => unsafe {
                copy_bytes(image.values.base(), staged.values.base(), n * size)
            },
            // SAFETY: as above; all or nothing.
            Copying::Clone { new, .. } => unsafe {
                new(image.values.base(), size, staged.values.base(), size, n)
            },
            Copying::NoRollback { default } => {
                for (i, &e) in image.entities.iter().enumerate() {
                    match self.position(e) {
                        Some(at) => staged.carried.push((i, at)),
                        None => {
                            // SAFETY: position `i` is reserved and empty.
                            unsafe { default(staged.values.ptr_at(i), size, 1) };
                            staged.filled.push(i);
                        }
                    }
                }
                return staged;
            }
        }
        staged.filled = (0..n).collect();
        staged
    }

    /// Replaces this set by `staged` (calls no user code). Returns the old set, to be dropped
    /// once the world is consistent; for a no_rollback component the values `staged` carried
    /// over are no longer in it.
    pub(crate) fn commit_staged(&mut self, mut staged: StagedSet) -> SparseSet {
        let size = self.values.elem_size();
        let mut moved = vec![false; self.len()];
        for &(i, at) in &staged.carried {
            // SAFETY: position `at` of this set holds the entity's value, which moves to the
            // reserved, empty position `i`.
            unsafe { copy_bytes(self.values.ptr_at(at), staged.values.ptr_at(i), size) };
            moved[at] = true;
        }
        let mut slots = Vec::new();
        for (at, e) in staged.entities.iter().enumerate() {
            let index = e.index() as usize;
            if slots.len() <= index {
                slots.resize(index + 1, 0);
            }
            slots[index] = at as u32 + 1;
        }
        staged.filled.clear();
        let next = SparseSet {
            slots,
            entities: std::mem::take(&mut staged.entities),
            values: std::mem::replace(&mut staged.values, Column::new(self.values.ty())),
            stamps: std::mem::take(&mut staged.stamps),
            added: std::mem::take(&mut staged.added),
            written: AtomicU64::new(staged.written),
        };
        let mut old = std::mem::replace(self, next);
        if moved.iter().any(|&m| m) {
            // Keep only the values that did not move, packed, so the old set drops each once.
            let mut kept = 0;
            for (at, &was_moved) in moved.iter().enumerate() {
                if !was_moved {
                    if at != kept {
                        // SAFETY: distinct positions; `kept`'s value moved out already.
                        unsafe { copy_bytes(old.values.ptr_at(at), old.values.ptr_at(kept), size) };
                        old.entities[kept] = old.entities[at];
                    }
                    kept += 1;
                }
            }
            // (The old slots stay: dropping the set clears the kept entities' slots.)
            old.entities.truncate(kept);
            old.stamps.truncate(kept);
            old.added.truncate(kept);
        }
        old
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
        if e.index().is_multiple_of(2) {
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
        if e.index().is_multiple_of(2) {
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
