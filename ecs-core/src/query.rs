//! Run-time queries: `world.query::<(Entity, &Position, Option<&Velocity>)>()` (read-only,
//! through `&World`) and `world.query_mut::<(Entity, &mut Position)>()`.
//!
//! Generated systems are matched to stores at build time; queries are for tools, scripts and
//! one-off code that decide what to read at run time. A query call picks the stores to visit by
//! bitmask once, takes a (pointer, stride) view of each needed column of each matching store,
//! and then walks the rows with no per-row lookup. Items come store by store in store id order
//! (the declared signatures in name order, then the dynamic stores in the order they were
//! made), rows in order within a store.
//!
//! # Safety
//!
//! Column pointers come from the world's stores through the model's slot tables (see
//! [`crate::model::WorldModel`]): `ptr + row * stride` is a valid value of the component for
//! every row below the store's length. A read-only query borrows the world shared and yields
//! only shared references (its elements implement [`ReadOnly`]); a mutable query borrows it
//! exclusively for as long as items live. Before any pointer is dereferenced the query's
//! [`Access`] is checked: a component requested twice with at least one `&mut` is an
//! [`WorldError::AliasedQuery`], so two items never alias mutably. Rows are only read below
//! the store length recorded when the query started, which cannot change while the world is
//! borrowed.

use crate::entity::Entity;
use crate::model::{ComponentOf, WorldModel};
use crate::rules::{matches, Borrows};
use crate::set::AnyComponentBits;
use crate::world::{World, WorldError};
use std::marker::PhantomData;

pub(crate) use crate::storage::RawColumn;

/// How a query element reaches its component in one store: a column of the store (row `r` at
/// `ptr + r * stride`), or, for a sparse component, the component's sparse set through the
/// slot of each row's entity.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ColumnState {
    column: RawColumn,
    /// For a sparse component: the store's entity column (null for a store column).
    entities: *const Entity,
    /// For a sparse component: the set's slots, 1 + the position of an entity index's value.
    slots: *const u32,
    slots_len: usize,
}

impl ColumnState {
    /// Component `C` in store `store`: its column, or its sparse set; `None` when the store
    /// has no such column. A `written` column (or set) is stamped for change filters: a
    /// mutable element may write every value of it.
    fn of<M: WorldModel, C: ComponentOf<M>>(
        world: &World<M>,
        store: usize,
        written: bool,
    ) -> Option<Self> {
        if C::SPARSE {
            if written {
                world.mark_sparse_written(C::ID);
            }
            let (column, slots) = world.sparse_column(C::ID)?;
            Some(ColumnState {
                column,
                entities: world.store_entities(store).as_ptr(),
                slots: slots.as_ptr(),
                slots_len: slots.len(),
            })
        } else {
            Some(ColumnState {
                column: world.raw_column(store, C::ID, written)?,
                entities: std::ptr::null(),
                slots: std::ptr::null(),
                slots_len: 0,
            })
        }
    }

    /// Component `C` over the set of sparse component `lead` ([`Fetch::prepare_walk`]), row
    /// `r` being the set's `r`th value and entity: `lead`'s own values as a packed column,
    /// another sparse component through the slot of each of the set's entities; `None` for a
    /// store component. A `written` set is stamped for change filters.
    fn walk<M: WorldModel, C: ComponentOf<M>>(
        world: &World<M>,
        lead: u32,
        written: bool,
    ) -> Option<Self> {
        if !C::SPARSE {
            return None;
        }
        let (column, slots) = world.sparse_column(C::ID)?;
        let entities = world.sparse_entities(lead)?;
        if written {
            world.mark_sparse_written(C::ID);
        }
        if C::ID == lead {
            return Some(ColumnState {
                column,
                entities: std::ptr::null(),
                slots: std::ptr::null(),
                slots_len: 0,
            });
        }
        Some(ColumnState {
            column,
            entities: entities.as_ptr(),
            slots: slots.as_ptr(),
            slots_len: slots.len(),
        })
    }

    /// The value of `row`, if it has one (`sparse`: the state is of a sparse set, found
    /// through each row's entity unless it is the walked set's own values).
    ///
    /// # Safety
    /// `row` is below the length of the state's rows (its store's, or for a state from
    /// [`ColumnState::walk`] its set's), and the state came from [`ColumnState::of`] or
    /// [`ColumnState::walk`] under the borrow the value is used in.
    #[inline(always)]
    unsafe fn value(self, sparse: bool, row: usize) -> Option<*mut u8> {
        if !sparse || self.entities.is_null() {
            // SAFETY: `ptr + row * stride` is in the column's (or the walked set's values')
            // allocation for row < len.
            return Some(unsafe { self.column.ptr.add(row * self.column.stride) });
        }
        // SAFETY: the entity column has the store's length; `row` is below it.
        let index = unsafe { *self.entities.add(row) }.index() as usize;
        if index >= self.slots_len {
            return None;
        }
        // SAFETY: `index < slots_len`. A non-zero slot is the position + 1 of the value of
        // the live entity with that index (a set holds live entities only), which is this
        // row's entity: the value belongs to this row and to no other.
        let slot = unsafe { *self.slots.add(index) } as usize;
        let at = slot.checked_sub(1)?;
        // SAFETY: `at` is below the set's length, so in its allocation.
        Some(unsafe { self.column.ptr.add(at * self.column.stride) })
    }
}

impl ColumnState {
    /// Is row `r`'s value at `r` places of `C` after row 0's (a column of `C`s)?
    #[inline]
    fn packed<C>(&self) -> bool {
        self.entities.is_null() && self.column.stride == std::mem::size_of::<C>()
    }

    /// The value of `row` in a packed column of `C`s.
    ///
    /// # Safety
    /// `packed::<C>()` is true, `row` is below the store's length, and the state came from
    /// [`ColumnState::of`] for `C` under the borrow the value is used in.
    #[inline(always)]
    unsafe fn packed_value<C>(self, row: usize) -> *mut C {
        // SAFETY: for a packed column `ptr + row * stride` is `ptr + row * size_of::<C>()`,
        // in the column's allocation for row < len.
        unsafe { self.column.ptr.cast::<C>().add(row) }
    }
}

/// Components a query reads and writes, for the aliasing check, as sets of the world's width.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access<S> {
    borrows: Borrows<S>,
    conflict: Option<u32>,
}

impl<S: AnyComponentBits> Access<S> {
    /// Records a shared borrow of component `id`.
    ///
    /// # Panics
    /// When `id` is beyond the set's width (not a component of the world).
    pub fn read(&mut self, id: u32) {
        self.borrow(id, false);
    }

    /// Records a mutable borrow of component `id` (panics as [`Access::read`]).
    pub fn write(&mut self, id: u32) {
        self.borrow(id, true);
    }

    fn borrow(&mut self, id: u32, mutable: bool) {
        let one = S::EMPTY.with(id);
        let b = if mutable {
            Borrows {
                reads: S::EMPTY,
                writes: one,
            }
        } else {
            Borrows {
                reads: one,
                writes: S::EMPTY,
            }
        };
        if self.borrows.conflicts(&b) {
            self.conflict.get_or_insert(id);
        }
        self.borrows = Borrows {
            reads: self.borrows.reads.union(b.reads),
            writes: self.borrows.writes.union(b.writes),
        };
    }

    /// The first component borrowed in a way that would alias, if any.
    pub fn conflict(&self) -> Option<u32> {
        self.conflict
    }
}

/// One element of a query tuple: `&C`, `&mut C`, `Option<&C>`, `Option<&mut C>` or `Entity`.
///
/// # Safety
///
/// `fetch` must only produce items allowed by `access` and `required`: implementations rely on
/// the query's aliasing check and store selection. For a state that `packed` accepts,
/// `fetch_packed` must give the same item as `fetch`. A state from `prepare_walk` must make
/// `fetch` valid for every row below the length of `lead`'s set, each row being that set's
/// value and entity at that position.
pub unsafe trait Fetch<'w, M: WorldModel> {
    /// What the query yields for this element.
    type Item;
    /// Per-store state (column pointers).
    #[doc(hidden)]
    type State: Copy;
    #[doc(hidden)]
    /// Records the element's borrows.
    fn access(access: &mut Access<M::Set>);
    #[doc(hidden)]
    /// Component bits a store must have.
    fn required() -> M::Set;
    #[doc(hidden)]
    /// Component name used in errors for a missing required component.
    fn required_name() -> Option<&'static str>;
    #[doc(hidden)]
    /// Column state for `store`, which has every required component.
    fn prepare(world: &World<M>, store: usize) -> Self::State;
    #[doc(hidden)]
    /// The state over the set of sparse component `lead` instead of a store, row `r` being
    /// the set's `r`th value and entity: a query whose elements all have one walks that set.
    /// `None` (the default) when the element cannot be reached from there (a table
    /// component).
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<Self::State> {
        let _ = (world, lead);
        None
    }
    #[doc(hidden)]
    /// The item at `row`.
    ///
    /// # Safety
    /// `row` is below the length of the state's rows (its store's, or the walked set's), the
    /// state came from `prepare` or `prepare_walk` under the borrow the items live for, and
    /// the access check passed.
    unsafe fn fetch(state: Self::State, row: usize) -> Self::Item;
    #[doc(hidden)]
    /// Are the values of `state`'s store packed (row `r`'s value `r` places after row 0's: a
    /// column of the component's type, not a sparse set)? Then [`Fetch::fetch_packed`] gives
    /// the same items as `fetch` with a constant step, which a loop can vectorize.
    #[inline]
    fn packed(state: &Self::State) -> bool {
        let _ = state;
        false
    }
    #[doc(hidden)]
    /// [`Fetch::fetch`] for a packed state.
    ///
    /// # Safety
    /// As [`Fetch::fetch`], and [`Fetch::packed`] is true of `state`.
    #[inline]
    unsafe fn fetch_packed(state: Self::State, row: usize) -> Self::Item {
        // SAFETY: the caller's precondition includes `fetch`'s.
        unsafe { Self::fetch(state, row) }
    }
}

fn column_of<M: WorldModel, C: ComponentOf<M>>(
    world: &World<M>,
    store: usize,
    written: bool,
) -> ColumnState {
    ColumnState::of::<M, C>(world, store, written)
        .expect("store selection guarantees the store holds every required component")
}

/// The value of a required component at `row`.
///
/// # Safety
/// As [`ColumnState::value`]; the row has a `C` (the store's column, or the entity's value in
/// the sparse set, which the query's row selection checked).
#[inline(always)]
unsafe fn required_value<M: WorldModel, C: ComponentOf<M>>(
    state: ColumnState,
    row: usize,
) -> *mut u8 {
    // SAFETY: as the caller guarantees.
    match unsafe { state.value(C::SPARSE, row) } {
        Some(p) => p,
        // Unreachable by the row selection; a clear panic rather than a wild pointer.
        None => panic!("query row {row} has no {}", std::any::type_name::<C>()),
    }
}

// SAFETY: reads component C only (recorded in `access`), from stores that hold it.
unsafe impl<'w, M: WorldModel, C: ComponentOf<M> + 'w> Fetch<'w, M> for &'w C {
    type Item = &'w C;
    type State = ColumnState;
    fn access(access: &mut Access<M::Set>) {
        access.read(C::ID);
    }
    fn required() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
    fn required_name() -> Option<&'static str> {
        Some(M::components()[C::ID as usize].name)
    }
    fn prepare(world: &World<M>, store: usize) -> ColumnState {
        column_of::<M, C>(world, store, false)
    }
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<ColumnState> {
        ColumnState::walk::<M, C>(world, lead, false)
    }
    #[inline]
    unsafe fn fetch(state: ColumnState, row: usize) -> &'w C {
        // SAFETY: by the model's slot tables (or the sparse set's slots, which the query's
        // row selection found for this row) the value is a valid, aligned C for row < len
        // (the caller's precondition), and the access check rules out a `&mut` to it.
        unsafe { &*(required_value::<M, C>(state, row) as *const C) }
    }
    #[inline]
    fn packed(state: &ColumnState) -> bool {
        state.packed::<C>()
    }
    #[inline]
    unsafe fn fetch_packed(state: ColumnState, row: usize) -> &'w C {
        // SAFETY: as `fetch`, at the same address (the state is packed).
        unsafe { &*state.packed_value::<C>(row) }
    }
}

// SAFETY: writes component C only (recorded in `access`), from stores that hold it.
unsafe impl<'w, M: WorldModel, C: ComponentOf<M> + 'w> Fetch<'w, M> for &'w mut C {
    type Item = &'w mut C;
    type State = ColumnState;
    fn access(access: &mut Access<M::Set>) {
        access.write(C::ID);
    }
    fn required() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
    fn required_name() -> Option<&'static str> {
        Some(M::components()[C::ID as usize].name)
    }
    fn prepare(world: &World<M>, store: usize) -> ColumnState {
        column_of::<M, C>(world, store, true)
    }
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<ColumnState> {
        ColumnState::walk::<M, C>(world, lead, true)
    }
    #[inline]
    unsafe fn fetch(state: ColumnState, row: usize) -> &'w mut C {
        // SAFETY: as for `&C`; the access check guarantees no other item borrows this C, and
        // each row is yielded once (and each row's sparse value is its entity's own), so this
        // is the only reference to the value.
        unsafe { &mut *(required_value::<M, C>(state, row) as *mut C) }
    }
    #[inline]
    fn packed(state: &ColumnState) -> bool {
        state.packed::<C>()
    }
    #[inline]
    unsafe fn fetch_packed(state: ColumnState, row: usize) -> &'w mut C {
        // SAFETY: as `fetch`, at the same address (the state is packed).
        unsafe { &mut *state.packed_value::<C>(row) }
    }
}

// SAFETY: reads C where present; stores without C yield None.
unsafe impl<'w, M: WorldModel, C: ComponentOf<M> + 'w> Fetch<'w, M> for Option<&'w C> {
    type Item = Option<&'w C>;
    type State = Option<ColumnState>;
    fn access(access: &mut Access<M::Set>) {
        access.read(C::ID);
    }
    fn required() -> M::Set {
        M::Set::EMPTY
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &World<M>, store: usize) -> Option<ColumnState> {
        ColumnState::of::<M, C>(world, store, false)
    }
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<Option<ColumnState>> {
        // A store component cannot be reached from a set's entities: no walk.
        ColumnState::walk::<M, C>(world, lead, false).map(Some)
    }
    #[inline]
    unsafe fn fetch(state: Option<ColumnState>, row: usize) -> Option<&'w C> {
        // SAFETY: as for `&C`, when the store (or the row's entity) has a C.
        unsafe { state?.value(C::SPARSE, row).map(|p| &*(p as *const C)) }
    }
    #[inline]
    fn packed(state: &Option<ColumnState>) -> bool {
        state.as_ref().is_none_or(ColumnState::packed::<C>)
    }
    #[inline]
    unsafe fn fetch_packed(state: Option<ColumnState>, row: usize) -> Option<&'w C> {
        // SAFETY: as `fetch`, at the same address (the state is packed).
        state.map(|s| unsafe { &*s.packed_value::<C>(row) })
    }
}

// SAFETY: writes C where present; stores without C yield None.
unsafe impl<'w, M: WorldModel, C: ComponentOf<M> + 'w> Fetch<'w, M> for Option<&'w mut C> {
    type Item = Option<&'w mut C>;
    type State = Option<ColumnState>;
    fn access(access: &mut Access<M::Set>) {
        access.write(C::ID);
    }
    fn required() -> M::Set {
        M::Set::EMPTY
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &World<M>, store: usize) -> Option<ColumnState> {
        ColumnState::of::<M, C>(world, store, true)
    }
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<Option<ColumnState>> {
        // A store component cannot be reached from a set's entities: no walk.
        ColumnState::walk::<M, C>(world, lead, true).map(Some)
    }
    #[inline]
    unsafe fn fetch(state: Option<ColumnState>, row: usize) -> Option<&'w mut C> {
        // SAFETY: as for `&mut C`, when the store (or the row's entity) has a C.
        unsafe { state?.value(C::SPARSE, row).map(|p| &mut *(p as *mut C)) }
    }
    #[inline]
    fn packed(state: &Option<ColumnState>) -> bool {
        state.as_ref().is_none_or(ColumnState::packed::<C>)
    }
    #[inline]
    unsafe fn fetch_packed(state: Option<ColumnState>, row: usize) -> Option<&'w mut C> {
        // SAFETY: as `fetch`, at the same address (the state is packed).
        state.map(|s| unsafe { &mut *s.packed_value::<C>(row) })
    }
}

// SAFETY: reads the entity column only, which no query can borrow mutably.
unsafe impl<'w, M: WorldModel> Fetch<'w, M> for Entity {
    type Item = Entity;
    type State = *const Entity;
    fn access(_: &mut Access<M::Set>) {}
    fn required() -> M::Set {
        M::Set::EMPTY
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &World<M>, store: usize) -> *const Entity {
        world.store_entities(store).as_ptr()
    }
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<*const Entity> {
        Some(world.sparse_entities(lead)?.as_ptr())
    }
    #[inline]
    unsafe fn fetch(state: *const Entity, row: usize) -> Entity {
        // SAFETY: the entity column is valid for row < len (store invariant).
        unsafe { *state.add(row) }
    }
    #[inline]
    fn packed(_: &*const Entity) -> bool {
        true
    }
}

/// A filter on the stores a query visits: `()`, [`With<C>`], [`Without<C>`], [`Changed<C>`],
/// [`Added<C>`], or a tuple.
pub trait Filter<M: WorldModel> {
    #[doc(hidden)]
    /// Components a store must have.
    fn required() -> M::Set;
    #[doc(hidden)]
    /// Components a store must not have.
    fn excluded() -> M::Set;
    #[doc(hidden)]
    /// Components whose changes the query keeps to: it visits only the chunks of rows where
    /// one of them changed (see [`World::query_changed`]).
    fn changed() -> M::Set {
        M::Set::EMPTY
    }
    /// Components whose adds the query keeps to: it visits only the chunks of rows where an
    /// entity gained one of them (see [`World::query_changed`]).
    fn added() -> M::Set {
        M::Set::EMPTY
    }
}

/// Visit only entities that have `C` (without borrowing it).
pub struct With<C>(PhantomData<fn() -> C>);
/// Visit only entities that do not have `C`.
pub struct Without<C>(PhantomData<fn() -> C>);
/// Visit only entities that have `C`, in chunks of rows where `C` changed since the tick given
/// to [`World::query_changed`] (a chunk of [`CHUNK`](crate::__private::CHUNK) rows is the unit:
/// the other rows of a changed chunk come too). Several `Changed` in a tuple visit the chunks
/// where any of them changed.
pub struct Changed<C>(PhantomData<fn() -> C>);
/// Visit only entities that gained `C` since the tick given to [`World::query_changed`]: they
/// were spawned with `C`, or `C` was inserted; a write of `C` is no add (a gain also counts as
/// a change, for [`Changed<C>`]), nor is a move for another component. Exact, per entity. In a
/// tuple with other `Changed` or `Added` filters, an entity any of them sees is visited (a
/// sparse component's filter is checked per entity, and every one must hold).
pub struct Added<C>(PhantomData<fn() -> C>);

impl<M: WorldModel> Filter<M> for () {
    fn required() -> M::Set {
        M::Set::EMPTY
    }
    fn excluded() -> M::Set {
        M::Set::EMPTY
    }
}

impl<M: WorldModel, C: ComponentOf<M>> Filter<M> for With<C> {
    fn required() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
    fn excluded() -> M::Set {
        M::Set::EMPTY
    }
}

impl<M: WorldModel, C: ComponentOf<M>> Filter<M> for Changed<C> {
    fn required() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
    fn excluded() -> M::Set {
        M::Set::EMPTY
    }
    fn changed() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
}

impl<M: WorldModel, C: ComponentOf<M>> Filter<M> for Added<C> {
    fn required() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
    fn excluded() -> M::Set {
        M::Set::EMPTY
    }
    fn added() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
}

impl<M: WorldModel, C: ComponentOf<M>> Filter<M> for Without<C> {
    fn required() -> M::Set {
        M::Set::EMPTY
    }
    fn excluded() -> M::Set {
        M::Set::EMPTY.with(C::ID)
    }
}

/// A query: a [`Fetch`] or a tuple of them (up to 8).
///
/// # Safety
/// As for [`Fetch`]; tuples combine their elements' access.
pub unsafe trait Query<'w, M: WorldModel> {
    /// What the query yields.
    type Item;
    /// Per-store state.
    #[doc(hidden)]
    type State: Copy;
    #[doc(hidden)]
    /// Records all borrows.
    fn access(access: &mut Access<M::Set>);
    #[doc(hidden)]
    /// Component bits a store must have.
    fn required() -> M::Set;
    #[doc(hidden)]
    /// Name of a required component missing from `mask`, for errors.
    fn first_missing(mask: M::Set) -> Option<&'static str>;
    #[doc(hidden)]
    /// Column state for `store`.
    fn prepare(world: &World<M>, store: usize) -> Self::State;
    #[doc(hidden)]
    /// The state over the set of sparse component `lead`, if every element has one
    /// ([`Fetch::prepare_walk`]; `None`, the default, walks no set).
    fn prepare_walk(world: &World<M>, lead: u32) -> Option<Self::State> {
        let _ = (world, lead);
        None
    }
    #[doc(hidden)]
    /// The item at `row`.
    ///
    /// # Safety
    /// As [`Fetch::fetch`].
    unsafe fn fetch(state: Self::State, row: usize) -> Self::Item;
    #[doc(hidden)]
    /// Is every element's state packed ([`Fetch::packed`])?
    fn packed(state: &Self::State) -> bool;
    #[doc(hidden)]
    /// [`Query::fetch`] for a packed state.
    ///
    /// # Safety
    /// As [`Fetch::fetch_packed`].
    unsafe fn fetch_packed(state: Self::State, row: usize) -> Self::Item;
}

/// A single element is a query of one element. (Not a blanket impl over `Fetch`: that would
/// overlap the tuple impls under coherence rules.)
macro_rules! single_impls {
    ($(<$($g:ident),*> $ty:ty;)+) => {$(
        // SAFETY: forwards to the element's Fetch impl, which upholds the contract.
        unsafe impl<'w, M: WorldModel, $($g: ComponentOf<M> + 'w),*> Query<'w, M> for $ty {
            type Item = <$ty as Fetch<'w, M>>::Item;
            type State = <$ty as Fetch<'w, M>>::State;
            fn access(access: &mut Access<M::Set>) {
                <$ty as Fetch<'w, M>>::access(access)
            }
            fn required() -> M::Set {
                <$ty as Fetch<'w, M>>::required()
            }
            fn first_missing(mask: M::Set) -> Option<&'static str> {
                let required = <$ty as Fetch<'w, M>>::required();
                (!mask.is_superset(&required)).then(<$ty as Fetch<'w, M>>::required_name).flatten()
            }
            fn prepare(world: &World<M>, store: usize) -> Self::State {
                <$ty as Fetch<'w, M>>::prepare(world, store)
            }
            fn prepare_walk(world: &World<M>, lead: u32) -> Option<Self::State> {
                <$ty as Fetch<'w, M>>::prepare_walk(world, lead)
            }
            #[inline]
            unsafe fn fetch(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition.
                unsafe { <$ty as Fetch<'w, M>>::fetch(state, row) }
            }
            #[inline]
            fn packed(state: &Self::State) -> bool {
                <$ty as Fetch<'w, M>>::packed(state)
            }
            #[inline]
            unsafe fn fetch_packed(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition.
                unsafe { <$ty as Fetch<'w, M>>::fetch_packed(state, row) }
            }
        }
    )+};
}

single_impls! {
    <C> &'w C;
    <C> &'w mut C;
    <C> Option<&'w C>;
    <C> Option<&'w mut C>;
    <> Entity;
}

macro_rules! tuple_impls {
    ($($name:ident $idx:tt),+) => {
        // SAFETY: each element upholds Fetch's contract; `access` records all of them, so the
        // aliasing check covers the combination.
        unsafe impl<'w, M: WorldModel, $($name: Fetch<'w, M>),+> Query<'w, M> for ($($name,)+) {
            type Item = ($($name::Item,)+);
            type State = ($($name::State,)+);
            fn access(access: &mut Access<M::Set>) {
                $($name::access(access);)+
            }
            fn required() -> M::Set {
                M::Set::EMPTY $(.union($name::required()))+
            }
            fn first_missing(mask: M::Set) -> Option<&'static str> {
                $(
                    if !mask.is_superset(&$name::required()) {
                        return $name::required_name();
                    }
                )+
                None
            }
            fn prepare(world: &World<M>, store: usize) -> Self::State {
                ($($name::prepare(world, store),)+)
            }
            fn prepare_walk(world: &World<M>, lead: u32) -> Option<Self::State> {
                Some(($($name::prepare_walk(world, lead)?,)+))
            }
            #[inline]
            unsafe fn fetch(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition, element by element.
                unsafe { ($($name::fetch(state.$idx, row),)+) }
            }
            #[inline]
            fn packed(state: &Self::State) -> bool {
                true $(&& $name::packed(&state.$idx))+
            }
            #[inline]
            unsafe fn fetch_packed(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition: every element's state is packed.
                unsafe { ($($name::fetch_packed(state.$idx, row),)+) }
            }
        }

        impl<M: WorldModel, $($name: Filter<M>),+> Filter<M> for ($($name,)+) {
            fn required() -> M::Set {
                M::Set::EMPTY $(.union($name::required()))+
            }
            fn excluded() -> M::Set {
                M::Set::EMPTY $(.union($name::excluded()))+
            }
            fn changed() -> M::Set {
                M::Set::EMPTY $(.union($name::changed()))+
            }
            fn added() -> M::Set {
                M::Set::EMPTY $(.union($name::added()))+
            }
        }
    };
}

tuple_impls!(A 0);
tuple_impls!(A 0, B 1);
tuple_impls!(A 0, B 1, C 2);
tuple_impls!(A 0, B 1, C 2, D 3);
tuple_impls!(A 0, B 1, C 2, D 3, E 4);
tuple_impls!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_impls!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_impls!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

// SAFETY: shared borrow only.
unsafe impl<C> ReadOnly for &C {}
// SAFETY: shared borrow only.
unsafe impl<C> ReadOnly for Option<&C> {}
// SAFETY: the entity id is copied.
unsafe impl ReadOnly for Entity {}

macro_rules! read_only_tuples {
    ($($name:ident),+) => {
        // SAFETY: every element is read-only.
        unsafe impl<$($name: ReadOnly),+> ReadOnly for ($($name,)+) {}
    };
}
read_only_tuples!(A);
read_only_tuples!(A, B);
read_only_tuples!(A, B, C);
read_only_tuples!(A, B, C, D);
read_only_tuples!(A, B, C, D, E);
read_only_tuples!(A, B, C, D, E, F);
read_only_tuples!(A, B, C, D, E, F, G);
read_only_tuples!(A, B, C, D, E, F, G, H);

/// A query that only reads (`&C`, `Option<&C>`, `Entity`, and tuples of them), and so may run
/// through `&World`.
///
/// # Safety
/// Its items hold no mutable reference.
pub unsafe trait ReadOnly {}

/// Checks the query's borrows; `Err` names the component that would alias.
fn check_access<'w, M: WorldModel, Q: Query<'w, M>>() -> Result<(), WorldError> {
    let mut access = Access::<M::Set>::default();
    Q::access(&mut access);
    match access.conflict() {
        Some(id) => Err(WorldError::AliasedQuery {
            component: M::components()[id as usize].name,
        }),
        None => Ok(()),
    }
}

/// Iterator over a query's items: store by store in store id order, rows in order; for a
/// query of sparse components alone (and entities, with no table filter), in the order of its
/// first required sparse component's set, which it walks.
pub struct QueryIter<'w, M: WorldModel, Q: Query<'w, M>> {
    /// (state, rows) of each run of rows to visit, in store and row order: a matching
    /// non-empty store's rows, or (with a change filter) its changed chunks.
    runs: Vec<(Q::State, std::ops::Range<usize>)>,
    /// The next run to start.
    run: usize,
    /// The run being visited: its state, and its rows not yet yielded, `row..end` (empty when
    /// there is none). Kept apart from `runs` so that `next` reads no list per row.
    state: Option<Q::State>,
    row: usize,
    end: usize,
    _world: PhantomData<&'w M>,
}

impl<'w, M: WorldModel, Q: Query<'w, M>> QueryIter<'w, M, Q> {
    /// Selects the stores and prepares their columns; with a change filter in `F`, keeps the
    /// chunks that changed after `since`.
    ///
    /// # Safety
    /// The world stays borrowed as the items require for `'w`: shared when `Q` is
    /// [`ReadOnly`], exclusively otherwise.
    unsafe fn new<F: Filter<M>>(world: &World<M>, since: u64) -> Result<Self, WorldError> {
        check_access::<M, Q>()?;
        // Stores are chosen by their store components; sparse ones are checked per row.
        let sparse = world.sparse_mask();
        let filters = [
            Q::required().union(F::required()),
            F::excluded(),
            F::changed(),
            F::added(),
        ];
        let by_row = filters.map(|set| set.intersection(sparse));
        let [required, excluded, changed, added] = filters.map(|set| set.difference(sparse));
        let per_row = by_row.iter().any(|set| !set.is_empty());
        let watched = !changed.is_empty() || !added.is_empty();
        // A query of sparse components (and entities) alone, with no table filter, visits
        // every entity with its first required sparse component: it walks that set.
        let tables = !watched && required.is_empty() && excluded.is_empty();
        if let Some(lead) = by_row[0].ids().next().filter(|_| tables) {
            if let Some(state) = Q::prepare_walk(world, lead) {
                let mut walk = by_row;
                walk[0] = walk[0].without(lead);
                let runs = world
                    .walk_rows(lead, walk, since)
                    .into_iter()
                    .map(|rows| (state, rows))
                    .collect();
                return Ok(Self::over(runs));
            }
        }
        // Room for every store of a small world at once; a large one's list grows as needed.
        let mut runs = Vec::with_capacity(world.store_count().min(64));
        for s in 0..world.store_count() {
            let (mask, len) = (world.store_mask(s), world.store_entities(s).len());
            if !matches(mask.as_ref(), required.as_ref(), excluded.as_ref()) || len == 0 {
                continue;
            }
            if !watched && !per_row {
                // Every row: one run, and no list of runs to build.
                runs.push((Q::prepare(world, s), 0..len));
                continue;
            }
            let mut rows = if watched {
                world.changed_rows(s, changed, added, since)
            } else {
                std::iter::once(0..len).collect()
            };
            if per_row {
                rows = rows
                    .into_iter()
                    .flat_map(|rows| world.sparse_rows(s, rows, by_row, since))
                    .collect();
            }
            if !rows.is_empty() {
                let state = Q::prepare(world, s);
                runs.extend(rows.into_iter().map(|r| (state, r)));
            }
        }
        Ok(Self::over(runs))
    }

    /// An iterator over `runs`, none started.
    fn over(runs: Vec<(Q::State, std::ops::Range<usize>)>) -> Self {
        QueryIter {
            runs,
            run: 0,
            state: None,
            row: 0,
            end: 0,
            _world: PhantomData,
        }
    }

    /// Starts the next non-empty run; false when none is left.
    fn start_run(&mut self) -> bool {
        while let Some(&(state, ref rows)) = self.runs.get(self.run) {
            self.run += 1;
            if !rows.is_empty() {
                (self.state, self.row, self.end) = (Some(state), rows.start, rows.end);
                return true;
            }
        }
        (self.state, self.row, self.end) = (None, 0, 0);
        false
    }
}

impl<'w, M: WorldModel, Q: Query<'w, M>> Iterator for QueryIter<'w, M, Q> {
    type Item = Q::Item;

    #[inline]
    fn next(&mut self) -> Option<Q::Item> {
        if self.row >= self.end && !self.start_run() {
            return None;
        }
        let row = self.row;
        self.row += 1;
        // SAFETY: row < len of a store selected for the query (`row < end`, the end of a run
        // of it), state prepared under the borrow 'w that this iterator holds, access checked
        // in `new`, and each row is yielded once (runs are disjoint).
        self.state.map(|state| unsafe { Q::fetch(state, row) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest: usize = self.runs[self.run..].iter().map(|r| r.1.len()).sum();
        let n = rest + (self.end - self.row);
        (n, Some(n))
    }

    fn fold<B, G: FnMut(B, Q::Item) -> B>(mut self, init: B, mut g: G) -> B {
        // Run by run, as a plain counted loop: the fast path of `for_each` and `sum`. First
        // the rest of the run `next` was in, then the runs not started.
        let mut acc = init;
        let current = self.state.map(|state| (state, self.row..self.end));
        for (state, rows) in current.into_iter().chain(self.runs.drain(self.run..)) {
            // `state` is a copy: the items' writes cannot change it, so its pointers stay in
            // registers through the loop.
            let (start, end) = (rows.start, rows.end);
            if Q::packed(&state) {
                // A constant step: the loop can be vectorized.
                for row in start..end {
                    // SAFETY: as in `next`; the state is packed.
                    acc = g(acc, unsafe { Q::fetch_packed(state, row) });
                }
            } else {
                for row in start..end {
                    // SAFETY: as in `next`.
                    acc = g(acc, unsafe { Q::fetch(state, row) });
                }
            }
        }
        acc
    }
}

impl<'w, M: WorldModel, Q: Query<'w, M>> ExactSizeIterator for QueryIter<'w, M, Q> {}

/// # Safety
/// As [`QueryIter::new`].
unsafe fn query_one<'w, M: WorldModel, Q: Query<'w, M>>(
    world: &World<M>,
    entity: Entity,
) -> Result<Q::Item, WorldError> {
    check_access::<M, Q>()?;
    let Some(loc) = world.locate(entity) else {
        return Err(WorldError::NoSuchEntity(entity));
    };
    let store = loc.store as usize;
    let mask = world.set_of(entity).unwrap_or(M::Set::EMPTY);
    if let Some(component) = Q::first_missing(mask) {
        return Err(WorldError::MissingComponent {
            entity,
            signature: world.signature_name_of(entity).unwrap_or_default(),
            component,
        });
    }
    let state = Q::prepare(world, store);
    // SAFETY: the entity's row is below its store's length (the entity locations invariant), the
    // store holds every required component (checked above), access checked, one item.
    Ok(unsafe { Q::fetch(state, loc.row()) })
}

impl<M: WorldModel> World<M> {
    /// A read-only query over every entity that has the query's components, e.g.
    /// `world.query::<(Entity, &Position, Option<&Velocity>)>()`. Stores are chosen by
    /// bitmask once per call; items come store by store in store id order, rows in order.
    pub fn query<'w, Q: Query<'w, M> + ReadOnly>(&'w self) -> QueryIter<'w, M, Q> {
        // SAFETY: read-only items under a shared borrow; a read-only query cannot alias.
        unsafe { QueryIter::new::<()>(self, 0) }.expect("read-only queries never alias")
    }

    /// [`World::query`] with a filter: `With<C>`, `Without<C>` or a tuple of them.
    pub fn query_filtered<'w, Q: Query<'w, M> + ReadOnly, F: Filter<M>>(
        &'w self,
    ) -> QueryIter<'w, M, Q> {
        // SAFETY: as in `query`.
        unsafe { QueryIter::new::<F>(self, 0) }.expect("read-only queries never alias")
    }

    /// A query that may write: `world.query_mut::<(Entity, &mut Position, &Velocity)>()`.
    /// Asking for one component twice with a `&mut` is an error.
    pub fn query_mut<'w, Q: Query<'w, M>>(&'w mut self) -> Result<QueryIter<'w, M, Q>, WorldError> {
        // SAFETY: the exclusive borrow lasts as long as the items.
        unsafe { QueryIter::new::<()>(self, 0) }
    }

    /// [`World::query_mut`] with a filter.
    pub fn query_filtered_mut<'w, Q: Query<'w, M>, F: Filter<M>>(
        &'w mut self,
    ) -> Result<QueryIter<'w, M, Q>, WorldError> {
        // SAFETY: as in `query_mut`.
        unsafe { QueryIter::new::<F>(self, 0) }
    }

    /// [`World::query_filtered`] that keeps to what changed after `since` (a value of
    /// [`World::change_tick`] taken earlier): the filter's [`Changed<C>`] elements visit only
    /// the chunks of rows where `C` was written (or gained) after it, its [`Added<C>`]
    /// elements the entities that gained `C` after it; without either this is
    /// `query_filtered`.
    pub fn query_changed<'w, Q: Query<'w, M> + ReadOnly, F: Filter<M>>(
        &'w self,
        since: u64,
    ) -> QueryIter<'w, M, Q> {
        // SAFETY: as in `query`.
        unsafe { QueryIter::new::<F>(self, since) }.expect("read-only queries never alias")
    }

    /// [`World::query_changed`] for a query that may write.
    pub fn query_changed_mut<'w, Q: Query<'w, M>, F: Filter<M>>(
        &'w mut self,
        since: u64,
    ) -> Result<QueryIter<'w, M, Q>, WorldError> {
        // SAFETY: as in `query_mut`.
        unsafe { QueryIter::new::<F>(self, since) }
    }

    /// The read-only query's items for one entity; an error if it is not alive or lacks a
    /// required component.
    pub fn query_one<'w, Q: Query<'w, M> + ReadOnly>(
        &'w self,
        entity: Entity,
    ) -> Result<Q::Item, WorldError> {
        // SAFETY: read-only items under a shared borrow.
        unsafe { query_one::<M, Q>(self, entity) }
    }

    /// The query's items for one entity, possibly mutable.
    pub fn query_one_mut<'w, Q: Query<'w, M>>(
        &'w mut self,
        entity: Entity,
    ) -> Result<Q::Item, WorldError> {
        // SAFETY: the exclusive borrow lasts as long as the item.
        unsafe { query_one::<M, Q>(self, entity) }
    }
}

#[cfg(test)]
mod tests {
    use super::Access;
    use crate::entity::Entity;
    use crate::test_model::{world, A, B};

    /// Each element kind of a query, over the test model's two stores (`JustA`: es[0], es[2];
    /// `AB`: es[1], es[3]): the stores it needs, the values it reads and writes, and the names
    /// in its errors.
    #[test]
    fn every_element_kind_selects_reads_and_names() {
        use super::{With, Without};
        use crate::world::WorldError;
        let (mut w, es) = world();
        let a = |w: &crate::World<_>| w.query::<&A>().map(|a| a.0).collect::<Vec<u32>>();
        assert_eq!(a(&w), [1, 4, 2, 5]);
        // `&mut B` requires B: only the AB store.
        for b in w.query_mut::<&mut B>().unwrap() {
            b.0 += 100;
        }
        let b: Vec<u32> = w.query::<&B>().map(|b| b.0).collect();
        assert_eq!(b, [103, 106]);
        // Options visit every store with A, and read B where it is.
        let ab: Vec<(u32, Option<u32>)> = w
            .query::<(&A, Option<&B>)>()
            .map(|(a, b)| (a.0, b.map(|b| b.0)))
            .collect();
        assert_eq!(ab, [(1, None), (4, None), (2, Some(103)), (5, Some(106))]);
        for (_, b) in w.query_mut::<(&A, Option<&mut B>)>().unwrap() {
            if let Some(b) = b {
                b.0 += 1;
            }
        }
        assert_eq!(w.get::<B>(es[3]), Some(&B(107)));
        // Entity alone visits every store.
        assert_eq!(w.query::<Entity>().count(), 4);
        // Filters: With<B> and Without<B> split the stores.
        let with: Vec<Entity> = w.query_filtered::<Entity, With<B>>().collect();
        let without: Vec<Entity> = w.query_filtered::<Entity, Without<B>>().collect();
        assert_eq!((with, without), (vec![es[1], es[3]], vec![es[0], es[2]]));
        let none: Vec<Entity> = w
            .query_filtered::<Entity, (With<A>, Without<A>)>()
            .collect();
        assert!(none.is_empty());
        assert_eq!(w.query_filtered::<&A, ()>().count(), 4);
        // The component a one-entity query lacks is named.
        let missing = |e| w.query_one::<(Entity, &A, &B)>(e).err();
        assert_eq!(
            missing(es[0]),
            Some(WorldError::MissingComponent {
                entity: es[0],
                signature: "JustA",
                component: "B"
            })
        );
        assert_eq!(missing(es[1]), None);
        assert_eq!(
            w.query_one::<(Option<&B>, &B)>(es[0]).err(),
            Some(WorldError::MissingComponent {
                entity: es[0],
                signature: "JustA",
                component: "B"
            }),
            "an Option names nothing; the required element does"
        );
        assert_eq!(
            w.query_one_mut::<&mut B>(es[2]).err(),
            Some(WorldError::MissingComponent {
                entity: es[2],
                signature: "JustA",
                component: "B"
            })
        );
        // Aliasing requests are refused, whichever element kinds alias.
        let aliased = |e: Result<(), WorldError>| {
            assert_eq!(e, Err(WorldError::AliasedQuery { component: "B" }))
        };
        aliased(w.query_mut::<(&B, &mut B)>().map(drop));
        aliased(w.query_mut::<(&mut B, Option<&B>)>().map(drop));
        aliased(w.query_mut::<(Option<&mut B>, &B)>().map(drop));
        aliased(w.query_mut::<(Option<&mut B>, Option<&mut B>)>().map(drop));
        assert!(w.query_mut::<(&A, Option<&A>, &mut B)>().is_ok());
    }

    /// Elements that require nothing (an `Option`, the entity, a `Without`) visit a store
    /// without component 0 too: an entity left with only `B` lives in a dynamic store.
    #[test]
    fn optional_elements_visit_stores_without_the_first_component() {
        use super::Without;
        let (mut w, es) = world();
        assert_eq!(w.remove::<A>(es[3]), Ok(A(5)));
        assert_eq!(w.query::<Entity>().count(), 4);
        let b: Vec<Option<u32>> = w.query::<Option<&B>>().map(|b| b.map(|b| b.0)).collect();
        assert_eq!(b, [None, None, Some(3), Some(6)]);
        for b in w.query_mut::<Option<&mut B>>().unwrap().flatten() {
            b.0 += 1;
        }
        assert_eq!(w.get::<B>(es[3]), Some(&B(7)));
        let only_b: Vec<Entity> = w.query_filtered::<Entity, Without<A>>().collect();
        assert_eq!(only_b, [es[3]]);
        assert_eq!(w.query_filtered::<&B, ()>().count(), 2);
    }

    /// The size hint is exact at every step, across stores.
    #[test]
    fn the_size_hint_is_exact_at_every_step() {
        let (w, _) = world();
        let mut q = w.query::<&A>();
        for left in (0..=4).rev() {
            assert_eq!(q.size_hint(), (left, Some(left)));
            assert_eq!(q.len(), left);
            let next = q.next();
            assert_eq!(next.is_some(), left > 0);
        }
        assert_eq!(q.size_hint(), (0, Some(0)));
    }

    /// A fold after some `next()` calls goes on from the next row, in every store: it neither
    /// restarts the current store nor skips one (either would hand out a second `&mut` to a
    /// row already yielded).
    #[test]
    fn fold_after_next_continues_where_next_stopped() {
        let (mut w, es) = world();
        // Store order: JustA (es[0], es[2]), then AB (es[1], es[3]).
        let order = [es[0], es[2], es[1], es[3]];
        for taken in 0..=order.len() {
            let mut q = w.query_mut::<(Entity, &mut A)>().unwrap();
            let mut seen: Vec<Entity> = q.by_ref().take(taken).map(|(e, _)| e).collect();
            let folded = q.fold(Vec::new(), |mut v, (e, a)| {
                a.0 += 10;
                v.push(e);
                v
            });
            assert_eq!(folded.len(), order.len() - taken, "after {taken}");
            seen.extend(folded);
            assert_eq!(seen, order, "after {taken}");
        }
        // Row k was visited by the folds that started before it: k + 1 of them.
        let a: Vec<u32> = order.iter().map(|&e| w.get::<A>(e).unwrap().0).collect();
        assert_eq!(a, [1 + 10, 4 + 20, 2 + 30, 5 + 40]);
        // And through `for_each` and `sum` (folds too), a read-only query.
        let mut q = w.query::<&B>();
        assert_eq!(q.next().map(|b| b.0), Some(3));
        assert_eq!(q.map(|b| b.0).sum::<u32>(), 6);
    }

    #[test]
    fn access_detects_aliasing_regardless_of_order() {
        let mut a = Access::<crate::ComponentBits<2>>::default();
        a.read(1);
        a.read(1);
        a.write(2);
        assert_eq!(a.conflict(), None, "shared twice is fine");
        a.read(2);
        assert_eq!(a.conflict(), Some(2));
        let mut b = Access::<crate::ComponentBits<2>>::default();
        b.write(3);
        b.write(3);
        assert_eq!(b.conflict(), Some(3));
        let mut c = Access::<crate::ComponentBits<2>>::default();
        c.read(4);
        c.write(4);
        assert_eq!(c.conflict(), Some(4));
    }
}
