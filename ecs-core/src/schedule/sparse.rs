//! What a generated pass sees of the world's sparse components: a [`SparseView`] per sparse
//! component its systems take, looked up by the entity of each row. A pass visits each row
//! once, and the systems sharing a pass never write what another uses, so a row's value is
//! reached by one reference at a time: that is the contract of [`SparseSets::view`] (`unsafe`,
//! once per view and pass), which the generated loops uphold; the lookups are then safe calls.

use crate::entity::Entity;
use crate::storage::SparseSet;
use std::marker::PhantomData;

/// The world's sparse sets, lent to one pass (the generated passes' machinery).
#[doc(hidden)]
pub struct SparseSets<'w> {
    pub(crate) sets: &'w [SparseSet],
    /// Per component id, the index of its set (`u32::MAX` for a store component).
    pub(crate) index: &'w [u32],
    /// The pass's change stamp.
    pub(crate) tick: u64,
}

impl<'w> SparseSets<'w> {
    /// The values of sparse component `c`, of type `T`. A `mutable` view stamps the set as
    /// written by this pass (change filters see every value as changed, as for a column a
    /// pass takes mutably).
    ///
    /// # Panics
    /// When `c` is not a sparse component, or its values are not `T`s.
    ///
    /// # Safety
    /// For `'w`, the caller looks values up only for live entities, and never holds two
    /// references to one entity's value when one of them is mutable (across all views of `c`,
    /// the slices of [`SparseSets::values`] and all threads): a pass looks each of its rows up
    /// once, and `mutable` is false unless no other system of the pass uses `c`.
    pub unsafe fn view<T: 'static>(&self, c: u32, mutable: bool) -> SparseView<'w, T> {
        let set = self.set::<T>(c);
        if mutable {
            set.mark_written(self.tick);
        }
        let (values, slots) = set.raw();
        SparseView {
            values: values.cast(),
            slots: slots.as_ptr(),
            slots_len: slots.len(),
            _values: PhantomData,
        }
    }

    /// Set `c`, checked to hold `T`s.
    fn set<T: 'static>(&self, c: u32) -> &'w SparseSet {
        let set = self
            .index
            .get(c as usize)
            .and_then(|&i| self.sets.get(i as usize))
            .unwrap_or_else(|| panic!("component {c} is not a sparse component"));
        assert!(
            (set.ty().type_id)() == std::any::TypeId::of::<T>(),
            "sparse component {c} holds {}, not {}",
            (set.ty().type_name)(),
            std::any::type_name::<T>()
        );
        set
    }

    /// The packed values of sparse component `c`, of type `T`, with the entity of each: what
    /// the pass of a system whose components are all sparse walks.
    ///
    /// # Panics
    /// When `c` is not a sparse component, or its values are not `T`s.
    pub fn values<T: 'static>(&self, c: u32) -> (&'w [Entity], &'w [T]) {
        let set = self.set::<T>(c);
        let (values, _) = set.raw();
        // SAFETY: the set holds `len()` initialised `T`s (checked type) at its base, which
        // live as long as the world's borrow `'w`; writing them needs `values_mut` or a
        // mutable view, whose contracts rule out this reference.
        let values = unsafe { std::slice::from_raw_parts(values.cast::<T>(), set.len()) };
        (set.entities(), values)
    }

    /// [`SparseSets::values`], mutable; stamps the set as written by this pass.
    ///
    /// # Panics
    /// As [`SparseSets::values`].
    ///
    /// # Safety
    /// For `'w`, no other reference to `c`'s values exists: the caller makes no view of `c`,
    /// no other `values` or `values_mut` of `c`, and uses the slice alone (a pass of one
    /// system, which takes `c` once).
    pub unsafe fn values_mut<T: 'static>(&self, c: u32) -> (&'w [Entity], &'w mut [T]) {
        let set = self.set::<T>(c);
        set.mark_written(self.tick);
        let (values, _) = set.raw();
        // SAFETY: as in `values` for the `T`s; the caller guarantees that this is the only
        // reference to them.
        let values = unsafe { std::slice::from_raw_parts_mut(values.cast::<T>(), set.len()) };
        (set.entities(), values)
    }
}

/// One sparse component's values during a pass, found by entity. Named by generated passes
/// only.
#[doc(hidden)]
pub struct SparseView<'w, T> {
    values: *mut T,
    slots: *const u32,
    slots_len: usize,
    _values: PhantomData<&'w mut [T]>,
}

// SAFETY: the contract of `SparseSets::view` rules out aliasing across threads (each row, hence
// each entity, is looked up by one job); `T` is a component, `Send + Sync`.
unsafe impl<T: Send + Sync> Send for SparseView<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for SparseView<'_, T> {}

impl<'w, T> SparseView<'w, T> {
    /// The position of the value of the live entity `entity`, if it has one: its slot, which
    /// for a live entity's index can only be that entity's.
    #[inline]
    fn position(&self, entity: Entity) -> Option<usize> {
        let index = entity.index() as usize;
        if index >= self.slots_len {
            return None;
        }
        // SAFETY: `index < slots_len`, and the slots outlive `'w`.
        let slot = unsafe { *self.slots.add(index) } as usize;
        slot.checked_sub(1)
    }

    /// Does the live entity `entity` have a value? (For an entity that is not alive, the answer
    /// may be about another entity with the same index.)
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.position(entity).is_some()
    }

    /// The value of `entity`, if it has one.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<&'w T> {
        let at = self.position(entity)?;
        // SAFETY: by the view's contract `entity` is alive, so its slot is a value's position
        // below the set's length (initialised), and no mutable reference to it is live.
        Some(unsafe { &*self.values.add(at) })
    }

    /// The value of `entity`, mutable, if it has one.
    #[inline]
    pub fn get_mut(&self, entity: Entity) -> Option<&'w mut T> {
        let at = self.position(entity)?;
        // SAFETY: as in `get`; the view's contract rules out every other reference to the
        // value while this one lives.
        Some(unsafe { &mut *self.values.add(at) })
    }
}
