//! Run-time queries: `world.query::<(Entity, &mut Position, Option<&Velocity>)>()`.
//!
//! Generated systems are matched to stores at build time; queries are for tools, scripts and
//! one-off code that decide what to read at run time. A query call picks the stores to visit by
//! bitmask once, takes a (pointer, stride) view of each needed column of each matching store,
//! and then walks the rows with no per-row lookup. Items come store by store in store id order
//! (signature name order), rows in order within a store.
//!
//! # Safety
//!
//! The world implements [`QueryTarget`], whose [`QueryTarget::column`] returns a pointer to the
//! first value of a component in a store and the distance between consecutive values (the
//! component size for `columns` stores, the row size for `rows` stores). The pointers are taken
//! from `Vec::as_mut_ptr` under a `&mut` borrow of the world that the returned iterator keeps,
//! so no other access to the world can happen while items are alive, and `as_mut_ptr` is
//! documented not to invalidate pointers taken earlier. Before any pointer is dereferenced the
//! query's [`Access`] is checked: a component requested twice with at least one `&mut` is an
//! [`WorldError::AliasedQuery`], so two items never alias mutably. Rows are only read below the
//! store length recorded when the query started, and the store cannot change length while the
//! world is borrowed.

use crate::entity::Entity;
use crate::world::{ComponentIn, Location, WorldError};
use std::marker::PhantomData;

/// A column of one component in one store: the first value and the step between values.
#[derive(Clone, Copy, Debug)]
pub struct RawColumn {
    /// Address of row 0's value (dangling but aligned for an empty store or a zero-sized type).
    pub ptr: *mut u8,
    /// Bytes between consecutive rows' values.
    pub stride: usize,
}

/// The view of a generated world that queries need. Implemented by the generated code.
///
/// # Safety
///
/// `column(store, c)` must return, exactly when store `store` holds component `c`, a column
/// whose `ptr + row * stride` is a valid, aligned value of that component for every
/// `row < store_len(store)`, derived without creating references to the column's memory (use
/// `Vec::as_mut_ptr`); `entities(store)` likewise for the store's entity ids; `store_mask` must
/// be the store's component set.
pub unsafe trait QueryTarget: Sized {
    /// Number of stores.
    fn store_count() -> usize;
    /// Component set of a store, one bit per component id.
    fn store_mask(store: usize) -> u128;
    /// Signature name of a store.
    fn store_name(store: usize) -> &'static str;
    /// Number of rows in a store.
    fn store_len(&self, store: usize) -> usize;
    /// The store's entity column.
    fn entities(&mut self, store: usize) -> *const Entity;
    /// A component's column in a store, if the store holds it.
    fn column(&mut self, store: usize, component: u32) -> Option<RawColumn>;
    /// Where a live entity is.
    fn locate_entity(&self, entity: Entity) -> Option<Location>;
}

/// Components a query reads and writes, for the aliasing check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access {
    reads: u128,
    writes: u128,
    conflict: Option<u32>,
}

impl Access {
    /// Records a shared borrow of component `id`.
    pub fn read(&mut self, id: u32) {
        let bit = 1u128 << id;
        if self.writes & bit != 0 {
            self.conflict.get_or_insert(id);
        }
        self.reads |= bit;
    }

    /// Records a mutable borrow of component `id`.
    pub fn write(&mut self, id: u32) {
        let bit = 1u128 << id;
        if (self.reads | self.writes) & bit != 0 {
            self.conflict.get_or_insert(id);
        }
        self.writes |= bit;
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
/// the query's aliasing check and store selection.
pub unsafe trait Fetch<'w, W: QueryTarget> {
    /// What the query yields for this element.
    type Item;
    /// Per-store state (column pointers).
    type State: Copy;
    /// Records the element's borrows.
    fn access(access: &mut Access);
    /// Component bits a store must have.
    fn required() -> u128;
    /// Component name used in errors for a missing required component.
    fn required_name() -> Option<&'static str>;
    /// Column state for `store`, which has every required component.
    fn prepare(world: &mut W, store: usize) -> Self::State;
    /// The item at `row`.
    ///
    /// # Safety
    /// `row` is below the store's length, the state came from `prepare` under the borrow the
    /// items live for, and the access check passed.
    unsafe fn fetch(state: Self::State, row: usize) -> Self::Item;
}

fn column_of<W: QueryTarget>(world: &mut W, store: usize, id: u32) -> RawColumn {
    world
        .column(store, id)
        .expect("store selection guarantees the store holds every required component")
}

// SAFETY: reads component C only (recorded in `access`), from stores that hold it.
unsafe impl<'w, W: QueryTarget, C: ComponentIn<W> + 'w> Fetch<'w, W> for &'w C {
    type Item = &'w C;
    type State = RawColumn;
    fn access(access: &mut Access) {
        access.read(C::ID);
    }
    fn required() -> u128 {
        1u128 << C::ID
    }
    fn required_name() -> Option<&'static str> {
        Some(C::NAME)
    }
    fn prepare(world: &mut W, store: usize) -> RawColumn {
        column_of(world, store, C::ID)
    }
    #[inline]
    unsafe fn fetch(state: RawColumn, row: usize) -> &'w C {
        // SAFETY: by QueryTarget's contract `ptr + row * stride` is a valid, aligned C for
        // row < len (the caller's precondition), and the access check rules out a `&mut` to it.
        unsafe { &*(state.ptr.add(row * state.stride) as *const C) }
    }
}

// SAFETY: writes component C only (recorded in `access`), from stores that hold it.
unsafe impl<'w, W: QueryTarget, C: ComponentIn<W> + 'w> Fetch<'w, W> for &'w mut C {
    type Item = &'w mut C;
    type State = RawColumn;
    fn access(access: &mut Access) {
        access.write(C::ID);
    }
    fn required() -> u128 {
        1u128 << C::ID
    }
    fn required_name() -> Option<&'static str> {
        Some(C::NAME)
    }
    fn prepare(world: &mut W, store: usize) -> RawColumn {
        column_of(world, store, C::ID)
    }
    #[inline]
    unsafe fn fetch(state: RawColumn, row: usize) -> &'w mut C {
        // SAFETY: as for `&C`; the access check guarantees no other item borrows this C, and
        // each row is yielded once, so this is the only reference to the value.
        unsafe { &mut *(state.ptr.add(row * state.stride) as *mut C) }
    }
}

// SAFETY: reads C where present; stores without C yield None.
unsafe impl<'w, W: QueryTarget, C: ComponentIn<W> + 'w> Fetch<'w, W> for Option<&'w C> {
    type Item = Option<&'w C>;
    type State = Option<RawColumn>;
    fn access(access: &mut Access) {
        access.read(C::ID);
    }
    fn required() -> u128 {
        0
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &mut W, store: usize) -> Option<RawColumn> {
        world.column(store, C::ID)
    }
    #[inline]
    unsafe fn fetch(state: Option<RawColumn>, row: usize) -> Option<&'w C> {
        // SAFETY: as for `&C`, when the store holds C.
        state.map(|s| unsafe { &*(s.ptr.add(row * s.stride) as *const C) })
    }
}

// SAFETY: writes C where present; stores without C yield None.
unsafe impl<'w, W: QueryTarget, C: ComponentIn<W> + 'w> Fetch<'w, W> for Option<&'w mut C> {
    type Item = Option<&'w mut C>;
    type State = Option<RawColumn>;
    fn access(access: &mut Access) {
        access.write(C::ID);
    }
    fn required() -> u128 {
        0
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &mut W, store: usize) -> Option<RawColumn> {
        world.column(store, C::ID)
    }
    #[inline]
    unsafe fn fetch(state: Option<RawColumn>, row: usize) -> Option<&'w mut C> {
        // SAFETY: as for `&mut C`, when the store holds C.
        state.map(|s| unsafe { &mut *(s.ptr.add(row * s.stride) as *mut C) })
    }
}

// SAFETY: reads the entity column only, which no query can borrow mutably.
unsafe impl<'w, W: QueryTarget> Fetch<'w, W> for Entity {
    type Item = Entity;
    type State = *const Entity;
    fn access(_: &mut Access) {}
    fn required() -> u128 {
        0
    }
    fn required_name() -> Option<&'static str> {
        None
    }
    fn prepare(world: &mut W, store: usize) -> *const Entity {
        world.entities(store)
    }
    #[inline]
    unsafe fn fetch(state: *const Entity, row: usize) -> Entity {
        // SAFETY: the entity column is valid for row < len (QueryTarget's contract).
        unsafe { *state.add(row) }
    }
}

/// A filter on the stores a query visits: `()`, [`With<C>`], [`Without<C>`], or a tuple.
pub trait Filter<W> {
    /// Components a store must have.
    fn required() -> u128;
    /// Components a store must not have.
    fn excluded() -> u128;
}

/// Visit only entities that have `C` (without borrowing it).
pub struct With<C>(PhantomData<fn() -> C>);
/// Visit only entities that do not have `C`.
pub struct Without<C>(PhantomData<fn() -> C>);

impl<W> Filter<W> for () {
    fn required() -> u128 {
        0
    }
    fn excluded() -> u128 {
        0
    }
}

impl<W, C: ComponentIn<W>> Filter<W> for With<C> {
    fn required() -> u128 {
        1u128 << C::ID
    }
    fn excluded() -> u128 {
        0
    }
}

impl<W, C: ComponentIn<W>> Filter<W> for Without<C> {
    fn required() -> u128 {
        0
    }
    fn excluded() -> u128 {
        1u128 << C::ID
    }
}

/// A query: a [`Fetch`] or a tuple of them (up to 8).
///
/// # Safety
/// As for [`Fetch`]; tuples combine their elements' access.
pub unsafe trait Query<'w, W: QueryTarget> {
    /// What the query yields.
    type Item;
    /// Per-store state.
    type State: Copy;
    /// Records all borrows.
    fn access(access: &mut Access);
    /// Component bits a store must have.
    fn required() -> u128;
    /// Name of a required component missing from `mask`, for errors.
    fn first_missing(mask: u128) -> Option<&'static str>;
    /// Column state for `store`.
    fn prepare(world: &mut W, store: usize) -> Self::State;
    /// The item at `row`.
    ///
    /// # Safety
    /// As [`Fetch::fetch`].
    unsafe fn fetch(state: Self::State, row: usize) -> Self::Item;
}

/// A single element is a query of one element. (Not a blanket impl over `Fetch`: that would
/// overlap the tuple impls under coherence rules.)
macro_rules! single_impls {
    ($(<$($g:ident),*> $ty:ty;)+) => {$(
        // SAFETY: forwards to the element's Fetch impl, which upholds the contract.
        unsafe impl<'w, W: QueryTarget, $($g: ComponentIn<W> + 'w),*> Query<'w, W> for $ty {
            type Item = <$ty as Fetch<'w, W>>::Item;
            type State = <$ty as Fetch<'w, W>>::State;
            fn access(access: &mut Access) {
                <$ty as Fetch<'w, W>>::access(access)
            }
            fn required() -> u128 {
                <$ty as Fetch<'w, W>>::required()
            }
            fn first_missing(mask: u128) -> Option<&'static str> {
                let required = <$ty as Fetch<'w, W>>::required();
                (required & !mask != 0).then(<$ty as Fetch<'w, W>>::required_name).flatten()
            }
            fn prepare(world: &mut W, store: usize) -> Self::State {
                <$ty as Fetch<'w, W>>::prepare(world, store)
            }
            #[inline]
            unsafe fn fetch(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition.
                unsafe { <$ty as Fetch<'w, W>>::fetch(state, row) }
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
        unsafe impl<'w, W: QueryTarget, $($name: Fetch<'w, W>),+> Query<'w, W> for ($($name,)+) {
            type Item = ($($name::Item,)+);
            type State = ($($name::State,)+);
            fn access(access: &mut Access) {
                $($name::access(access);)+
            }
            fn required() -> u128 {
                0 $(| $name::required())+
            }
            fn first_missing(mask: u128) -> Option<&'static str> {
                $(
                    if $name::required() & !mask != 0 {
                        return $name::required_name();
                    }
                )+
                None
            }
            fn prepare(world: &mut W, store: usize) -> Self::State {
                ($($name::prepare(world, store),)+)
            }
            #[inline]
            unsafe fn fetch(state: Self::State, row: usize) -> Self::Item {
                // SAFETY: forwarded precondition, element by element.
                unsafe { ($($name::fetch(state.$idx, row),)+) }
            }
        }

        impl<W, $($name: Filter<W>),+> Filter<W> for ($($name,)+) {
            fn required() -> u128 {
                0 $(| $name::required())+
            }
            fn excluded() -> u128 {
                0 $(| $name::excluded())+
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

/// Checks the query's borrows; `Err` names the component that would alias.
fn check_access<'w, W: QueryTarget, Q: Query<'w, W>>(
    names: &dyn Fn(u32) -> &'static str,
) -> Result<(), WorldError> {
    let mut access = Access::default();
    Q::access(&mut access);
    match access.conflict() {
        Some(id) => Err(WorldError::AliasedQuery {
            component: names(id),
        }),
        None => Ok(()),
    }
}

/// Iterator over a query's items: store by store in store id order, rows in order.
pub struct QueryIter<'w, W: QueryTarget, Q: Query<'w, W>> {
    /// (state, length) of each matching non-empty store, in store order.
    stores: Vec<(Q::State, usize)>,
    store: usize,
    row: usize,
    _world: PhantomData<&'w mut W>,
}

impl<'w, W: QueryTarget, Q: Query<'w, W>> QueryIter<'w, W, Q> {
    /// Builds the iterator; used by the generated `World::query_filtered`.
    ///
    /// `names` maps component ids to names for errors.
    pub fn new<F: Filter<W>>(
        world: &'w mut W,
        names: &dyn Fn(u32) -> &'static str,
    ) -> Result<Self, WorldError> {
        check_access::<W, Q>(names)?;
        let required = Q::required() | F::required();
        let excluded = F::excluded();
        let mut stores = Vec::with_capacity(W::store_count());
        for s in 0..W::store_count() {
            let mask = W::store_mask(s);
            let len = world.store_len(s);
            if mask & required == required && mask & excluded == 0 && len > 0 {
                stores.push((Q::prepare(world, s), len));
            }
        }
        Ok(QueryIter {
            stores,
            store: 0,
            row: 0,
            _world: PhantomData,
        })
    }
}

impl<'w, W: QueryTarget, Q: Query<'w, W>> Iterator for QueryIter<'w, W, Q> {
    type Item = Q::Item;

    #[inline]
    fn next(&mut self) -> Option<Q::Item> {
        loop {
            let &(state, len) = self.stores.get(self.store)?;
            if self.row < len {
                let row = self.row;
                self.row += 1;
                // SAFETY: row < len of a store selected for the query, state prepared under the
                // borrow 'w that this iterator holds, access checked in `new`, and each row is
                // yielded once.
                return Some(unsafe { Q::fetch(state, row) });
            }
            self.store += 1;
            self.row = 0;
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest: usize = self
            .stores
            .iter()
            .skip(self.store)
            .map(|s| s.1)
            .sum::<usize>();
        let n = rest.saturating_sub(if self.store < self.stores.len() {
            self.row
        } else {
            0
        });
        (n, Some(n))
    }

    fn fold<B, G: FnMut(B, Q::Item) -> B>(mut self, init: B, mut g: G) -> B {
        // Store by store, as a plain counted loop: the fast path of `for_each` and `sum`.
        let mut acc = init;
        for (i, &(state, len)) in self.stores.iter().enumerate().skip(self.store) {
            let start = if i == self.store { self.row } else { 0 };
            for row in start..len {
                // SAFETY: as in `next`.
                acc = g(acc, unsafe { Q::fetch(state, row) });
            }
        }
        self.store = self.stores.len();
        acc
    }
}

impl<'w, W: QueryTarget, Q: Query<'w, W>> ExactSizeIterator for QueryIter<'w, W, Q> {}

/// The items of one entity; used by the generated `World::query_one`.
pub fn query_one<'w, W: QueryTarget, Q: Query<'w, W>>(
    world: &'w mut W,
    entity: Entity,
    names: &dyn Fn(u32) -> &'static str,
) -> Result<Q::Item, WorldError> {
    check_access::<W, Q>(names)?;
    let loc = world
        .locate_entity(entity)
        .ok_or(WorldError::NoSuchEntity(entity))?;
    let store = loc.store as usize;
    let mask = W::store_mask(store);
    if let Some(component) = Q::first_missing(mask) {
        return Err(WorldError::MissingComponent {
            entity,
            signature: W::store_name(store),
            component,
        });
    }
    let state = Q::prepare(world, store);
    // SAFETY: the entity's row is below its store's length (the entity table invariant), the
    // store holds every required component (checked above), access checked, one item.
    Ok(unsafe { Q::fetch(state, loc.row()) })
}

#[cfg(test)]
mod tests {
    use super::Access;

    #[test]
    fn access_detects_aliasing_regardless_of_order() {
        let mut a = Access::default();
        a.read(1);
        a.read(1);
        a.write(2);
        assert_eq!(a.conflict(), None, "shared twice is fine");
        a.read(2);
        assert_eq!(a.conflict(), Some(2));
        let mut b = Access::default();
        b.write(3);
        b.write(3);
        assert_eq!(b.conflict(), Some(3));
        let mut c = Access::default();
        c.read(4);
        c.write(4);
        assert_eq!(c.conflict(), Some(4));
    }
}
