//! Structure-of-arrays component managers, following seed part 2.
//!
//! A component manager owns every instance of one component type and stores each field in its
//! own column, so a loop that touches two fields streams through two arrays and nothing else.
//!
//! # Design
//!
//! - **One allocation.** [`SoaBuffer`] holds the entity column followed by one column per field
//!   in a single heap block. Growing allocates a new block, copies each column's live prefix and
//!   frees the old block — part 2's `allocate`. Columns keep declaration order; each starts at
//!   the next multiple of its element alignment, and the block is aligned to the largest one, so
//!   any alignment works (tested up to 16). Zero-sized fields take no bytes.
//! - **Type-erased runtime, thin typed layer.** The buffer knows each column only by its
//!   [`ColumnInfo`] (element layout and drop function). [`SoaStore<C, L>`] adds the typed view:
//!   `C` is a tuple of field types (up to 16 fields; sealed trait [`Columns`]) and `L` the
//!   entity → instance [`Lookup`]. All `unsafe` code of the module lives in these two types. The
//!   managers — the bundled [`PointMassManager`] and those `#[derive(SoaManager)]` generates —
//!   wrap a store and add named, safe accessors; they contain no `unsafe`.
//! - **Lookup chosen at declaration.** [`HashLookup`] (the default, part 2's hash index) keeps an
//!   [`FxHashMap<Entity, u32>`](rustc_hash::FxHashMap); [`DenseLookup`] keeps part 2's
//!   per-entity-index array with a nil value, for components nearly every entity has. Both check
//!   the full entity, generation included: a stale id never finds the instance of the entity that
//!   now uses its slot.
//! - **Instances.** [`SoaStore::lookup`] returns `Option<Instance>` instead of part 2's nil
//!   instance, so a missing component cannot be read by mistake. An [`Instance`] is a row index:
//!   like a `Vec` index it stays valid until the next `create`, `destroy`, `gc` or
//!   `flush_destroyed`, which may move rows. Accessors panic on an out-of-range instance (never
//!   undefined behaviour).
//! - **Destroy** is part 2's swap-erase: the last row moves into the hole and its entity's
//!   lookup entry is updated.
//! - **Clean-up of dead entities**, two ways as in part 2. Lazily, [`SoaStore::gc`] picks random
//!   rows (seeded xorshift, deterministic) and destroys those whose entity is dead until it meets
//!   four live ones in a row; [`SoaStore::gc_all`] is the exhaustive version. Immediately, a
//!   manager registers a hook with [`EntityManager::on_destroy`]. The hook must be
//!   `Send + Sync + 'static`, so it cannot borrow the manager; it pushes the entity onto a shared
//!   [`DestroyQueue`] (an `Arc<Mutex<Vec<Entity>>>`) that the manager drains in
//!   [`SoaStore::flush_destroyed`]. This keeps ownership simple — the manager is not shared, no
//!   `Weak` or lock guards its data, and the hot loops never touch the mutex — at the price that
//!   the components go away when you flush, not inside `EntityManager::destroy`.
//!
//! # Safety
//!
//! Invariants the `unsafe` code relies on, established in [`SoaBuffer::new`] and kept by every
//! method:
//!
//! - `base` is either a block allocated with layout `block`, or (capacity 0) a dangling pointer
//!   aligned to `block.align()`; `block.align()` is the largest column alignment.
//! - Column `c` starts at `base + offsets[c]`, a multiple of its alignment, and spans
//!   `size_of(c) * capacity` bytes; the spans are disjoint and inside the block.
//! - Rows `0..len` of every column are initialized; rows `len..capacity` are not.
//! - Column 0 holds [`Entity`]; the typed [`SoaStore<C, _>`] built its buffer from
//!   `C`'s column infos, so column `k + 1` holds field `k` of `C`.
//!
//! Dropping a row first moves it out of `0..len` and then runs the drop functions, so a
//! panicking `Drop` can leak the rest of that row's fields but never drops anything twice
//! (bevy #2860); the remaining columns are still dropped while unwinding, as for a tuple.
//!
//! # Example
//!
//! ```
//! use ecs_core::entity::EntityManager;
//! use ecs_core::soa::{PointMass, PointMassManager};
//! use glam::Vec3;
//!
//! let mut em = EntityManager::new();
//! let mut masses = PointMassManager::new();
//! let a = em.create().unwrap();
//! let b = em.create().unwrap();
//! let pm = |x: f32| PointMass {
//!     mass: 1.0,
//!     position: Vec3::new(x, 0.0, 0.0),
//!     velocity: Vec3::ZERO,
//!     acceleration: Vec3::new(0.0, -10.0, 0.0),
//! };
//! masses.create(a, pm(0.0)).unwrap();
//! masses.create(b, pm(5.0)).unwrap();
//! assert!(masses.create(a, pm(1.0)).is_err(), "one instance per entity");
//!
//! // One lookup, then as many field accesses as needed.
//! let i = masses.lookup(a).unwrap();
//! masses.set_mass(i, 2.0);
//! assert_eq!(*masses.mass(i), 2.0);
//!
//! masses.simulate(0.5);
//! assert_eq!(masses.position(masses.lookup(b).unwrap()).y, -2.5);
//!
//! // Lazy clean-up: the component of a dead entity goes away in `gc`.
//! em.destroy(a);
//! assert!(masses.lookup(a).is_some(), "still there until collected");
//! assert_eq!(masses.gc_all(&em), 1);
//! assert!(masses.lookup(a).is_none());
//!
//! // Immediate clean-up: a destroy hook queues the entity; `flush_destroyed` removes it.
//! masses.register_destroy_hook(&mut em);
//! em.destroy(b);
//! assert_eq!(masses.flush_destroyed(), 1);
//! assert!(masses.is_empty());
//! ```
//!
//! A manager for any field set is one derive away (the generated code names `::ecs_core`):
//!
//! ```
//! use ecs_core::SoaManager;
//! use ecs_core::entity::EntityManager;
//!
//! #[derive(SoaManager)]
//! #[soa(manager = "HealthManager", lookup = "dense")]
//! pub struct Health {
//!     pub hp: i32,
//!     pub name: String,
//! }
//!
//! let mut em = EntityManager::new();
//! let e = em.create().unwrap();
//! let mut health = HealthManager::new();
//! let i = health.create(e, Health { hp: 10, name: "orc".into() }).unwrap();
//! *health.hp_mut(i) -= 3;
//! assert_eq!(health.hp_column(), &[7]);
//! assert_eq!(health.name(i), "orc");
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

use std::alloc::{self, Layout};
use std::fmt;
use std::iter;
use std::marker::PhantomData;
use std::mem;
use std::ptr::{self, NonNull};
use std::slice;
use std::sync::{Arc, Mutex, PoisonError};

use glam::Vec3;
use rustc_hash::FxHashMap;

use crate::entity::{DestroyHookId, Entity, EntityManager};

// ---------------------------------------------------------------------------------------------
// Column descriptions and the type-erased buffer
// ---------------------------------------------------------------------------------------------

/// How one column stores its elements: the element [`Layout`] and, if the type needs dropping,
/// a function that drops elements in place. Only [`ColumnInfo::of`] builds one, so the drop
/// function always matches the layout.
#[derive(Clone, Copy)]
pub struct ColumnInfo {
    layout: Layout,
    drop: Option<unsafe fn(*mut u8, usize)>,
    type_name: &'static str,
}

impl ColumnInfo {
    /// The description of a column of `T`.
    pub fn of<T>() -> Self {
        ColumnInfo {
            layout: Layout::new::<T>(),
            drop: if mem::needs_drop::<T>() {
                Some(drop_elements::<T>)
            } else {
                None
            },
            type_name: std::any::type_name::<T>(),
        }
    }

    /// Size and alignment of one element.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Does dropping an element run code?
    pub fn needs_drop(&self) -> bool {
        self.drop.is_some()
    }

    /// The element type's name, for debugging.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for ColumnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnInfo")
            .field("type", &self.type_name)
            .field("size", &self.layout.size())
            .field("align", &self.layout.align())
            .field("needs_drop", &self.needs_drop())
            .finish()
    }
}

/// Drops `count` values of `T` in place, starting at `ptr`.
///
/// # Safety
///
/// `ptr` must point to `count` initialized, aligned values of `T` that are not used afterwards.
unsafe fn drop_elements<T>(ptr: *mut u8, count: usize) {
    // SAFETY: the caller guarantees `count` initialized, aligned `T`s at `ptr`, never used again.
    // Dropping a slice keeps dropping the other elements if one of them panics.
    unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(ptr.cast::<T>(), count)) }
}

/// Computes the block layout for `capacity` rows and writes each column's byte offset into
/// `offsets`. `None` when the size overflows.
fn block_layout(columns: &[ColumnInfo], capacity: usize, offsets: &mut [usize]) -> Option<Layout> {
    let mut size = 0usize;
    let mut align = 1usize;
    for (column, offset) in columns.iter().zip(offsets.iter_mut()) {
        let a = column.layout.align();
        size = size.checked_next_multiple_of(a)?;
        *offset = size;
        size = size.checked_add(column.layout.size().checked_mul(capacity)?)?;
        align = align.max(a);
    }
    Layout::from_size_align(size, align).ok()
}

/// A non-null, unallocated pointer aligned to `align` (a power of two).
fn dangling(align: usize) -> NonNull<u8> {
    NonNull::new(ptr::without_provenance_mut(align)).expect("alignments are non-zero")
}

/// The type-erased structure-of-arrays storage of part 2: an entity column followed by one
/// column per field, all in a single allocation.
///
/// The safe API can read the entity column, reserve and reallocate, swap-remove and clear rows;
/// only [`SoaBuffer::push_entity`] (unsafe) adds a row, after the caller wrote its field values
/// through [`SoaBuffer::column_ptr`]. [`SoaStore`] is the typed wrapper that does that.
pub struct SoaBuffer {
    /// Column 0 is the entity column; column `k + 1` is field `k`.
    columns: Box<[ColumnInfo]>,
    /// Byte offset of each column in the block.
    offsets: Box<[usize]>,
    /// Start of the block (dangling while `capacity == 0`).
    base: NonNull<u8>,
    /// Layout of the current block; its size is zero exactly when nothing is allocated.
    block: Layout,
    /// The largest column alignment: the block's alignment.
    align: usize,
    len: usize,
    capacity: usize,
}

impl SoaBuffer {
    /// An empty buffer with an entity column followed by the `fields` columns. Allocates nothing.
    pub fn new(fields: &[ColumnInfo]) -> Self {
        let columns: Box<[ColumnInfo]> = iter::once(ColumnInfo::of::<Entity>())
            .chain(fields.iter().copied())
            .collect();
        let mut offsets = vec![0; columns.len()].into_boxed_slice();
        let block = block_layout(&columns, 0, &mut offsets).expect("an empty block always fits");
        SoaBuffer {
            base: dangling(block.align()),
            align: block.align(),
            columns,
            offsets,
            block,
            len: 0,
            capacity: 0,
        }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of rows the current block holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of columns, the entity column included.
    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// The description of column `c` (0 is the entity column). Panics if out of range.
    pub fn column_info(&self, c: usize) -> ColumnInfo {
        self.columns[c]
    }

    /// Byte offset of column `c` within the block. Panics if out of range.
    pub fn column_offset(&self, c: usize) -> usize {
        self.offsets[c]
    }

    /// Layout of the current block (size 0 when nothing is allocated).
    pub fn block_layout(&self) -> Layout {
        self.block
    }

    /// Pointer to the first element of column `c`, aligned for its element type. Reading or
    /// writing through it is up to the caller: rows `0..len` are initialized, rows
    /// `len..capacity` are not. Panics if `c` is out of range.
    #[inline]
    pub fn column_ptr(&self, c: usize) -> *mut u8 {
        // In bounds of the block (or zero for the dangling base): see the module invariants.
        self.base.as_ptr().wrapping_add(self.offsets[c])
    }

    /// The owning entity of every row.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        // SAFETY: column 0 holds `Entity` values (see `new`); its pointer is non-null and aligned
        // for `Entity`, and rows `0..len` are initialized. The shared borrow of `self` keeps the
        // rows from changing while the slice lives.
        unsafe { slice::from_raw_parts(self.column_ptr(0).cast::<Entity>(), self.len) }
    }

    /// Makes room for at least `additional` more rows, doubling the capacity (at least 4).
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len.checked_add(additional).expect("capacity overflow");
        if needed > self.capacity {
            self.allocate(needed.max(self.capacity * 2).max(4));
        }
    }

    /// Part 2's `allocate`: moves the rows to a new block of exactly `capacity` rows (growing or
    /// shrinking) and frees the old one. Panics if `capacity < len` or the size overflows.
    pub fn allocate(&mut self, capacity: usize) {
        assert!(
            capacity >= self.len,
            "cannot shrink an SoA buffer to {capacity} rows below its {} rows",
            self.len
        );
        let mut offsets = vec![0; self.columns.len()].into_boxed_slice();
        let block = block_layout(&self.columns, capacity, &mut offsets).expect("capacity overflow");
        let base = if block.size() == 0 {
            dangling(block.align())
        } else {
            // SAFETY: `block` has a non-zero size.
            let raw = unsafe { alloc::alloc(block) };
            NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(block))
        };
        for (c, column) in self.columns.iter().enumerate() {
            let bytes = column.layout.size() * self.len;
            // SAFETY: the old column holds `len` initialized elements at `column_ptr(c)`; the new
            // block has room for `capacity >= len` of them at `base + offsets[c]`, aligned the
            // same way. The blocks are distinct allocations, so the ranges do not overlap. A
            // bitwise copy is a move: the old block is freed below without dropping anything.
            unsafe {
                ptr::copy_nonoverlapping(self.column_ptr(c), base.as_ptr().add(offsets[c]), bytes);
            }
        }
        self.free_block();
        self.base = base;
        self.block = block;
        self.offsets = offsets;
        self.capacity = capacity;
    }

    /// Frees the block without dropping any element; leaves a dangling base and capacity 0
    /// (`len` is left as is: the caller has moved or dropped the rows).
    fn free_block(&mut self) {
        if self.block.size() != 0 {
            // SAFETY: a non-zero-sized `block` means `base` was allocated with exactly `block`
            // (`allocate`), and it has not been freed since: every free replaces `block`.
            unsafe { alloc::dealloc(self.base.as_ptr(), self.block) };
        }
        // With capacity 0 every column starts at offset 0.
        self.offsets.fill(0);
        self.block = Layout::from_size_align(0, self.align).expect("a valid alignment");
        self.base = dangling(self.align);
        self.capacity = 0;
    }

    /// Appends a row whose field values the caller has already written.
    ///
    /// # Safety
    ///
    /// `len < capacity`, and for every field column `c >= 1` the caller has written an
    /// initialized value of that column's type at row `len` (`column_ptr(c)` plus
    /// `len * size`).
    #[inline]
    pub unsafe fn push_entity(&mut self, entity: Entity) {
        debug_assert!(self.len < self.capacity);
        // SAFETY: `len < capacity` (caller), so row `len` of the entity column is inside the
        // block and aligned for `Entity`; it is uninitialized, so nothing is overwritten.
        unsafe {
            self.column_ptr(0)
                .cast::<Entity>()
                .add(self.len)
                .write(entity)
        };
        self.len += 1;
    }

    /// Part 2's swap-erase: moves the last row into `row` and drops the removed values.
    /// Panics if `row >= len`.
    pub fn swap_remove(&mut self, row: usize) {
        assert!(
            row < self.len,
            "row {row} out of range for an SoA buffer of {} rows",
            self.len
        );
        let last = self.len - 1;
        if row != last {
            for (c, column) in self.columns.iter().enumerate() {
                let size = column.layout.size();
                let p = self.column_ptr(c);
                // SAFETY: rows `row` and `last` are distinct rows below `len`, so both element
                // ranges are initialized, inside the column and disjoint. Swapping bytes swaps
                // the two values without dropping either.
                unsafe { ptr::swap_nonoverlapping(p.add(row * size), p.add(last * size), size) };
            }
        }
        // Take the removed row out of `0..len` before running any `Drop`.
        self.len = last;
        // SAFETY: row `last` is initialized in every column and now outside `0..len`, so nothing
        // else will read or drop it.
        unsafe { self.drop_rows(last, 1) };
    }

    /// Drops every row, keeping the block.
    pub fn clear(&mut self) {
        let len = self.len;
        self.len = 0;
        // SAFETY: rows `0..len` were initialized and are now outside `0..len`.
        unsafe { self.drop_rows(0, len) };
    }

    /// Drops rows `row..row + count` of every column, continuing with the remaining columns if a
    /// `Drop` panics (a second panic aborts, as for any value).
    ///
    /// # Safety
    ///
    /// The rows are initialized in every column and are never read or dropped again.
    unsafe fn drop_rows(&self, row: usize, count: usize) {
        // SAFETY: forwarded from the caller, starting with the first column.
        unsafe { self.drop_rows_from(row, count, 0) }
    }

    /// [`SoaBuffer::drop_rows`] for columns `first..`.
    ///
    /// # Safety
    ///
    /// As for [`SoaBuffer::drop_rows`], for columns `first..`.
    unsafe fn drop_rows_from(&self, row: usize, count: usize, first: usize) {
        /// On unwind, drops the columns the loop has not reached.
        struct Rest<'a> {
            buf: &'a SoaBuffer,
            row: usize,
            count: usize,
            next: usize,
        }
        impl Drop for Rest<'_> {
            fn drop(&mut self) {
                // SAFETY: `next` is the first column the panicking loop had not dropped yet; the
                // rows are still initialized there and nothing else will drop them.
                unsafe { self.buf.drop_rows_from(self.row, self.count, self.next) }
            }
        }
        let mut rest = Rest {
            buf: self,
            row,
            count,
            next: first,
        };
        while rest.next < self.columns.len() {
            let c = rest.next;
            rest.next += 1;
            if let Some(drop) = self.columns[c].drop {
                let size = self.columns[c].layout.size();
                // SAFETY: the caller guarantees `count` initialized elements of column `c`'s type
                // from `row` on, never used again; `drop` was built by `ColumnInfo::of` for that
                // type.
                unsafe { drop(self.column_ptr(c).add(row * size), count) };
            }
        }
        mem::forget(rest);
    }
}

impl Drop for SoaBuffer {
    fn drop(&mut self) {
        /// Frees the block even if a field's `Drop` panics.
        struct Free<'a>(&'a mut SoaBuffer);
        impl Drop for Free<'_> {
            fn drop(&mut self) {
                self.0.free_block();
            }
        }
        let guard = Free(self);
        guard.0.clear();
    }
}

impl fmt::Debug for SoaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaBuffer")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("columns", &self.columns)
            .field("offsets", &self.offsets)
            .finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Typed columns: tuples of field types
// ---------------------------------------------------------------------------------------------

mod sealed {
    pub trait Sealed {}
}

/// A tuple of field types `(A, B, ...)` (0 to 16 fields), one column each. Implemented for tuples
/// only (sealed): the typed accessors of [`SoaStore`] trust these implementations.
pub trait Columns: Sized + sealed::Sealed {
    /// A tuple of shared column slices, `(&'a [A], &'a [B], ...)`.
    type Slices<'a>
    where
        Self: 'a;
    /// A tuple of mutable column slices, `(&'a mut [A], &'a mut [B], ...)`.
    type SlicesMut<'a>
    where
        Self: 'a;

    /// The field column descriptions, in tuple order.
    fn column_infos() -> Vec<ColumnInfo>;

    /// Writes the fields into row `row`.
    ///
    /// # Safety
    ///
    /// `buf` was built from [`Columns::column_infos`] of `Self`, `row < buf.capacity()` and the
    /// row is uninitialized.
    #[doc(hidden)]
    unsafe fn write(self, buf: &mut SoaBuffer, row: usize);

    /// The field columns as slices of `buf.len()` elements.
    ///
    /// # Safety
    ///
    /// `buf` was built from [`Columns::column_infos`] of `Self`.
    #[doc(hidden)]
    unsafe fn slices(buf: &SoaBuffer) -> Self::Slices<'_>;

    /// The field columns as mutable slices of `buf.len()` elements.
    ///
    /// # Safety
    ///
    /// `buf` was built from [`Columns::column_infos`] of `Self`, and for `'a` nothing else reads
    /// or writes its field columns (the caller holds the buffer's owner mutably).
    #[doc(hidden)]
    unsafe fn slices_mut(buf: &SoaBuffer) -> Self::SlicesMut<'_>;
}

macro_rules! impl_columns {
    ($(($k:tt $t:ident $v:ident))*) => {
        impl<$($t),*> sealed::Sealed for ($($t,)*) {}

        impl<$($t),*> Columns for ($($t,)*) {
            type Slices<'a> = ($(&'a [$t],)*) where Self: 'a;
            type SlicesMut<'a> = ($(&'a mut [$t],)*) where Self: 'a;

            fn column_infos() -> Vec<ColumnInfo> {
                vec![$(ColumnInfo::of::<$t>()),*]
            }

            #[allow(unused_variables)]
            unsafe fn write(self, buf: &mut SoaBuffer, row: usize) {
                let ($($v,)*) = self;
                $(
                    // SAFETY: column `k + 1` holds `$t` (the buffer was built from
                    // `column_infos`), `row < capacity`, so the slot is inside the column and
                    // aligned; it is uninitialized, so nothing is overwritten.
                    unsafe { buf.column_ptr($k + 1).cast::<$t>().add(row).write($v) };
                )*
            }

            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn slices(buf: &SoaBuffer) -> Self::Slices<'_> {
                ($(
                    // SAFETY: column `k + 1` holds `len` initialized `$t`s at an aligned,
                    // non-null pointer (caller and buffer invariants); the borrow of `buf`
                    // keeps them from changing.
                    unsafe {
                        slice::from_raw_parts(buf.column_ptr($k + 1).cast::<$t>(), buf.len())
                    },
                )*)
            }

            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn slices_mut(buf: &SoaBuffer) -> Self::SlicesMut<'_> {
                ($(
                    // SAFETY: as in `slices`; in addition, the columns are disjoint byte ranges
                    // and the caller guarantees exclusive access, so the `&mut` slices alias
                    // nothing.
                    unsafe {
                        slice::from_raw_parts_mut(buf.column_ptr($k + 1).cast::<$t>(), buf.len())
                    },
                )*)
            }
        }
    };
}

macro_rules! impl_columns_up_to {
    ([$($done:tt)*]) => {
        impl_columns!($($done)*);
    };
    ([$($done:tt)*] $next:tt $($rest:tt)*) => {
        impl_columns!($($done)*);
        impl_columns_up_to!([$($done)* $next] $($rest)*);
    };
}

impl_columns_up_to!([]
    (0 A a) (1 B b) (2 C c) (3 D d) (4 E e) (5 F f) (6 G g) (7 H h)
    (8 I i) (9 J j) (10 K k) (11 L l) (12 M m) (13 N n) (14 O o) (15 P p)
);

// ---------------------------------------------------------------------------------------------
// Entity -> instance lookups
// ---------------------------------------------------------------------------------------------

/// Instance value meaning "no instance" in [`DenseLookup`].
const NIL: u32 = u32::MAX;

mod sealed_lookup {
    pub trait Sealed {}
}

/// How a store maps an entity to its instance: [`HashLookup`] or [`DenseLookup`]. Sealed. Every
/// implementation matches the full entity, generation included.
pub trait Lookup: Default + sealed_lookup::Sealed {
    /// A short name for `Debug` output.
    const NAME: &'static str;

    /// The instance of `entity`, if it has one. `entities` is the store's entity column.
    #[doc(hidden)]
    fn find(&self, entity: Entity, entities: &[Entity]) -> Option<u32>;

    /// Records that `entity` (which has no entry) now owns instance `instance`.
    #[doc(hidden)]
    fn insert(&mut self, entity: Entity, instance: u32, entities: &[Entity]);

    /// Forgets `entity`, whose entry is `instance`.
    #[doc(hidden)]
    fn remove(&mut self, entity: Entity, instance: u32);

    /// `entity`'s instance moved from `from` to `to`.
    #[doc(hidden)]
    fn relocate(&mut self, entity: Entity, from: u32, to: u32);

    /// Forgets every entry.
    #[doc(hidden)]
    fn clear(&mut self);

    /// Prepares for `additional` more entries.
    #[doc(hidden)]
    fn reserve(&mut self, additional: usize);
}

/// Part 2's hash index, the default: an [`FxHashMap`] from the full entity to its instance. Uses
/// memory in proportion to the number of instances.
#[derive(Clone, Debug, Default)]
pub struct HashLookup {
    map: FxHashMap<Entity, u32>,
}

impl sealed_lookup::Sealed for HashLookup {}

impl Lookup for HashLookup {
    const NAME: &'static str = "hash";

    #[inline]
    fn find(&self, entity: Entity, _entities: &[Entity]) -> Option<u32> {
        self.map.get(&entity).copied()
    }

    fn insert(&mut self, entity: Entity, instance: u32, _entities: &[Entity]) {
        self.map.insert(entity, instance);
    }

    fn remove(&mut self, entity: Entity, _instance: u32) {
        self.map.remove(&entity);
    }

    fn relocate(&mut self, entity: Entity, _from: u32, to: u32) {
        self.map.insert(entity, to);
    }

    fn clear(&mut self) {
        self.map.clear();
    }

    fn reserve(&mut self, additional: usize) {
        self.map.reserve(additional);
    }
}

/// Part 2's direct map: one `u32` per entity index (nil when absent), for components almost
/// every entity has. A lookup is one array read plus a check of the entity column, so a stale
/// id (same index, older generation) finds nothing.
///
/// Part 2's array holds one instance per index, but with lazy GC a dead entity's component can
/// outlive the reuse of its index. The newest entity then takes the slot and the older one moves
/// to a side map (`displaced`, almost always empty), so every instance stays reachable.
#[derive(Clone, Debug, Default)]
pub struct DenseLookup {
    /// Instance per entity index, or `NIL`.
    slots: Vec<u32>,
    /// Instances of entities whose index slot holds another entity's instance. Invariant: a
    /// displaced entity's slot is not `NIL`.
    displaced: FxHashMap<Entity, u32>,
}

impl sealed_lookup::Sealed for DenseLookup {}

impl Lookup for DenseLookup {
    const NAME: &'static str = "dense";

    #[inline]
    fn find(&self, entity: Entity, entities: &[Entity]) -> Option<u32> {
        let i = *self.slots.get(entity.index() as usize)?;
        if i == NIL {
            None
        } else if entities.get(i as usize) == Some(&entity) {
            Some(i)
        } else if self.displaced.is_empty() {
            None
        } else {
            self.displaced.get(&entity).copied()
        }
    }

    fn insert(&mut self, entity: Entity, instance: u32, entities: &[Entity]) {
        let idx = entity.index() as usize;
        if idx >= self.slots.len() {
            self.slots.resize(idx + 1, NIL);
        }
        let held = self.slots[idx];
        if held != NIL {
            // Another generation of this index has an instance: move it aside.
            self.displaced.insert(entities[held as usize], held);
        }
        self.slots[idx] = instance;
    }

    fn remove(&mut self, entity: Entity, instance: u32) {
        let idx = entity.index() as usize;
        if self.slots.get(idx) == Some(&instance) {
            self.slots[idx] = NIL;
            if !self.displaced.is_empty() {
                // Keep the invariant: promote a displaced entity with the same index, if any.
                let promoted = self
                    .displaced
                    .iter()
                    .find(|(e, _)| e.index() as usize == idx)
                    .map(|(e, i)| (*e, *i));
                if let Some((e, i)) = promoted {
                    self.displaced.remove(&e);
                    self.slots[idx] = i;
                }
            }
        } else {
            self.displaced.remove(&entity);
        }
    }

    fn relocate(&mut self, entity: Entity, from: u32, to: u32) {
        let idx = entity.index() as usize;
        if self.slots.get(idx) == Some(&from) {
            self.slots[idx] = to;
        } else {
            self.displaced.insert(entity, to);
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.displaced.clear();
    }

    fn reserve(&mut self, _additional: usize) {}
}

// ---------------------------------------------------------------------------------------------
// Handles, errors, the destroy queue
// ---------------------------------------------------------------------------------------------

/// Handle to a component instance: its row in the columns (part 2's `Instance`). Valid until
/// the next operation that moves rows (`create`, `destroy`, `gc`, `flush_destroyed`, `clear`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instance(u32);

impl Instance {
    /// The instance at row `index` (part 2's `make_instance`).
    #[inline]
    pub const fn new(index: u32) -> Self {
        Instance(index)
    }

    /// The row, usable as an index into the column slices.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Why a component manager refused an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoaError {
    /// The entity already has an instance (one instance per entity, as in part 2).
    AlreadyExists {
        /// The entity passed to `create`.
        entity: Entity,
        /// Its existing instance.
        instance: Instance,
    },
}

impl fmt::Display for SoaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoaError::AlreadyExists { entity, instance } => write!(
                f,
                "entity {entity} already has a component instance (row {}); destroy it first or \
                 update its fields",
                instance.index()
            ),
        }
    }
}

impl std::error::Error for SoaError {}

/// Entities destroyed in an [`EntityManager`] whose components a manager should drop, shared
/// between the manager and its destroy hook (see [`SoaStore::register_destroy_hook`]).
/// Cloning gives another handle to the same queue.
#[derive(Clone, Debug, Default)]
pub struct DestroyQueue(Arc<Mutex<Vec<Entity>>>);

impl DestroyQueue {
    /// Queues `entity`.
    pub fn push(&self, entity: Entity) {
        self.lock().push(entity);
    }

    /// Number of queued entities.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves the queued entities into `out` (which should be empty), emptying the queue.
    fn swap_into(&self, out: &mut Vec<Entity>) {
        mem::swap(&mut *self.lock(), out);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entity>> {
        // A panic while the lock is held cannot leave the Vec inconsistent (push/swap only).
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// ---------------------------------------------------------------------------------------------
// The typed store
// ---------------------------------------------------------------------------------------------

/// Seed of the GC's xorshift generator.
const GC_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// A part-2 component manager for the field tuple `C`, with entity lookup `L`: what the
/// generated managers wrap. Field `k` of `C` is column `k + 1` of the [`SoaBuffer`].
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

// SAFETY: the store owns its field values like a `Vec` of them would (the raw block pointer is
// the only reason the auto trait is missing); sending the store sends those values, so it is
// `Send` exactly when every field type (the tuple `C`) and the lookup are `Send`.
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

    /// The type-erased buffer, e.g. to inspect the memory layout.
    pub fn buffer(&self) -> &SoaBuffer {
        &self.buf
    }

    /// The instance of `entity`, or `None` if it has none (part 2 returns a nil instance here;
    /// an `Option` cannot be used by mistake). Stale ids find nothing.
    #[inline]
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.lookup.find(entity, self.buf.entities()).map(Instance)
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
        (0..self.len() as u32).map(Instance)
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

    /// Creates an instance for `entity` with field values `values` (in tuple order). Fails,
    /// dropping `values`, if `entity` already has one. Does not check that `entity` is alive.
    pub fn create(&mut self, entity: Entity, values: C) -> Result<Instance, SoaError> {
        if let Some(instance) = self.lookup(entity) {
            return Err(SoaError::AlreadyExists { entity, instance });
        }
        self.buf.reserve(1);
        let row = self.buf.len();
        // At most one instance per entity id and at most 2^30 ids, so rows fit in a `u32` and
        // never reach `NIL`.
        let instance = u32::try_from(row).expect("more than u32::MAX instances");
        self.lookup.insert(entity, instance, self.buf.entities());
        // SAFETY: `buf` was built from `C::column_infos()`; `reserve(1)` made `row < capacity`,
        // and row `len` is uninitialized. Writing the fields cannot panic, and then every
        // column of the row is initialized, as `push_entity` requires.
        unsafe {
            values.write(&mut self.buf, row);
            self.buf.push_entity(entity);
        }
        Ok(Instance(instance))
    }

    /// Destroys instance `i` by swap-erase (part 2): the last instance moves into its row and
    /// its lookup entry follows. Panics if `i` is out of range.
    pub fn destroy(&mut self, i: Instance) {
        let entities = self.buf.entities();
        let row = i.index();
        assert!(
            row < entities.len(),
            "instance {row} out of range for a manager of {} instances",
            entities.len()
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

    /// Part 2's lazy garbage collection: picks random instances and destroys those whose entity
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
            self.destroy(Instance(row as u32));
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
                self.destroy(Instance(row as u32));
                destroyed += 1;
            }
        }
        destroyed
    }

    /// A handle to this store's destroy queue, for a hook of your own.
    pub fn destroy_queue(&self) -> DestroyQueue {
        self.queue.clone()
    }

    /// Immediate clean-up (part 2's destruction callback): registers a hook with `em` that
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

    /// Destroys the instances of the entities queued by the destroy hook. Returns how many
    /// instances it destroyed.
    pub fn flush_destroyed(&mut self) -> usize {
        let mut drained = mem::take(&mut self.drained);
        self.queue.swap_into(&mut drained);
        let destroyed = drained.iter().filter(|e| self.destroy_entity(**e)).count();
        drained.clear();
        self.drained = drained;
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
}

// ---------------------------------------------------------------------------------------------
// Typed managers: the macro behind `#[derive(SoaManager)]`, and the bundled point-mass manager
// ---------------------------------------------------------------------------------------------

/// Expands to a named component manager over [`SoaStore`]. Used by `#[derive(SoaManager)]`
/// (which computes the names and validates the struct) and for [`PointMassManager`]; not meant
/// to be invoked by hand.
#[doc(hidden)]
#[macro_export]
macro_rules! __soa_manager {
    (
        $(#[$attr:meta])*
        manager: $vis:vis $manager:ident,
        row: $row:ident,
        columns: $columns:ident, $columns_mut:ident,
        lookup: $lookup:ty,
        fields: [$({
            $k:tt, $fvis:vis $field:ident: $ty:ty,
            $field_mut:ident, $set_field:ident, $field_column:ident, $field_column_mut:ident
        })*]
    ) => {
        $(#[$attr])*
        $vis struct $manager {
            store: $crate::soa::SoaStore<($($ty,)*), $lookup>,
        }

        #[doc = ::core::concat!(
            "Every column of a [`", ::core::stringify!($manager), "`], borrowed shared (from [`",
            ::core::stringify!($manager), "::columns`])."
        )]
        #[derive(::core::clone::Clone, ::core::marker::Copy)]
        $vis struct $columns<'a> {
            /// The owning entity of each instance.
            pub entities: &'a [$crate::entity::Entity],
            $(
                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` of each instance.")]
                $fvis $field: &'a [$ty],
            )*
        }

        #[doc = ::core::concat!(
            "Every column of a [`", ::core::stringify!($manager),
            "`], the fields borrowed mutably (from [`", ::core::stringify!($manager),
            "::columns_mut`]), for loops that update several fields."
        )]
        $vis struct $columns_mut<'a> {
            /// The owning entity of each instance (read-only: rows move only by create/destroy).
            pub entities: &'a [$crate::entity::Entity],
            $(
                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` of each instance.")]
                $fvis $field: &'a mut [$ty],
            )*
        }

        impl ::core::default::Default for $manager {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::core::fmt::Debug for $manager {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($manager))
                    .field("store", &self.store)
                    .finish()
            }
        }

        #[allow(dead_code, unused_variables)]
        impl $manager {
            /// An empty manager. Allocates nothing until the first `create`.
            pub fn new() -> Self {
                Self { store: $crate::soa::SoaStore::new() }
            }

            /// An empty manager with room for `capacity` instances.
            pub fn with_capacity(capacity: usize) -> Self {
                Self { store: $crate::soa::SoaStore::with_capacity(capacity) }
            }

            /// The underlying store (layout inspection, generic code).
            pub fn store(&self) -> &$crate::soa::SoaStore<($($ty,)*), $lookup> {
                &self.store
            }

            /// Number of instances.
            #[inline]
            pub fn len(&self) -> usize {
                self.store.len()
            }

            /// True when there are no instances.
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.store.is_empty()
            }

            /// Number of instances the current allocation holds.
            #[inline]
            pub fn capacity(&self) -> usize {
                self.store.capacity()
            }

            /// Makes room for at least `additional` more instances.
            pub fn reserve(&mut self, additional: usize) {
                self.store.reserve(additional)
            }

            /// Shrinks the allocation to the number of instances.
            pub fn shrink_to_fit(&mut self) {
                self.store.shrink_to_fit()
            }

            /// The instance of `entity`, or `None` (stale ids included).
            #[inline]
            pub fn lookup(&self, entity: $crate::entity::Entity)
                -> ::core::option::Option<$crate::soa::Instance>
            {
                self.store.lookup(entity)
            }

            /// Does `entity` have an instance?
            #[inline]
            pub fn contains(&self, entity: $crate::entity::Entity) -> bool {
                self.store.contains(entity)
            }

            /// The entity owning instance `i`. Panics if `i` is out of range.
            #[inline]
            pub fn entity(&self, i: $crate::soa::Instance) -> $crate::entity::Entity {
                self.store.entity(i)
            }

            /// The owner of every instance, in row order.
            #[inline]
            pub fn entities(&self) -> &[$crate::entity::Entity] {
                self.store.entities()
            }

            /// Every instance, in row order.
            pub fn instances(&self) -> impl ::core::iter::ExactSizeIterator<
                Item = $crate::soa::Instance,
            > + use<> {
                self.store.instances()
            }

            #[doc = ::core::concat!(
                "Creates an instance for `entity` from a [`", ::core::stringify!($row),
                "`]. Fails, dropping `values`, if `entity` already has one."
            )]
            pub fn create(
                &mut self,
                entity: $crate::entity::Entity,
                values: $row,
            ) -> ::core::result::Result<$crate::soa::Instance, $crate::soa::SoaError> {
                self.store.create(entity, ($(values.$field,)*))
            }

            /// Destroys instance `i` by swap-erase. Panics if `i` is out of range.
            pub fn destroy(&mut self, i: $crate::soa::Instance) {
                self.store.destroy(i)
            }

            /// Destroys `entity`'s instance; returns whether it had one.
            pub fn destroy_entity(&mut self, entity: $crate::entity::Entity) -> bool {
                self.store.destroy_entity(entity)
            }

            /// Destroys every instance, keeping the allocation.
            pub fn clear(&mut self) {
                self.store.clear()
            }

            /// Lazy GC (part 2): random probes until four live entities in a row. Returns how
            /// many instances it destroyed.
            pub fn gc(&mut self, em: &$crate::entity::EntityManager) -> usize {
                self.store.gc(em)
            }

            /// Destroys the instance of every dead entity. Returns how many.
            pub fn gc_all(&mut self, em: &$crate::entity::EntityManager) -> usize {
                self.store.gc_all(em)
            }

            /// A handle to the queue that the destroy hook fills.
            pub fn destroy_queue(&self) -> $crate::soa::DestroyQueue {
                self.store.destroy_queue()
            }

            /// Registers a destroy hook with `em` that queues destroyed entities for
            /// `flush_destroyed` (immediate clean-up).
            pub fn register_destroy_hook(
                &self,
                em: &mut $crate::entity::EntityManager,
            ) -> $crate::entity::DestroyHookId {
                self.store.register_destroy_hook(em)
            }

            /// Destroys the instances of the queued entities. Returns how many.
            pub fn flush_destroyed(&mut self) -> usize {
                self.store.flush_destroyed()
            }

            /// Every column as a shared slice.
            #[inline]
            pub fn columns(&self) -> $columns<'_> {
                let fields = self.store.fields();
                $columns { entities: self.store.entities(), $($field: fields.$k,)* }
            }

            /// The entity column and every field column as a mutable slice, for loops that
            /// update several fields at once.
            #[inline]
            pub fn columns_mut(&mut self) -> $columns_mut<'_> {
                let (entities, fields) = self.store.columns_mut();
                $columns_mut { entities, $($field: fields.$k,)* }
            }

            $(
                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field),
                    "` of instance `i`. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $field(&self, i: $crate::soa::Instance) -> &$ty {
                    &self.store.fields().$k[i.index()]
                }

                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field),
                    "` of instance `i`, mutably. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $field_mut(&mut self, i: $crate::soa::Instance) -> &mut $ty {
                    &mut self.store.fields_mut().$k[i.index()]
                }

                #[doc = ::core::concat!(
                    "Sets the `", ::core::stringify!($field),
                    "` of instance `i`, dropping the old value. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $set_field(&mut self, i: $crate::soa::Instance, value: $ty) {
                    self.store.fields_mut().$k[i.index()] = value;
                }

                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field), "` column: one value per instance."
                )]
                #[inline]
                $fvis fn $field_column(&self) -> &[$ty] {
                    self.store.fields().$k
                }

                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` column, mutably.")]
                #[inline]
                $fvis fn $field_column_mut(&mut self) -> &mut [$ty] {
                    self.store.fields_mut().$k
                }
            )*
        }
    };
}

#[doc(hidden)]
pub use crate::__soa_manager;

/// The point-mass component of part 2: the field values of one [`PointMassManager`] instance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointMass {
    /// Mass of the object.
    pub mass: f32,
    /// The object's position.
    pub position: Vec3,
    /// The object's velocity.
    pub velocity: Vec3,
    /// The object's acceleration.
    pub acceleration: Vec3,
}

crate::__soa_manager! {
    /// Part 2's point-mass component manager: entity, mass, position, velocity and acceleration
    /// columns in one allocation, with a hash lookup. It is what
    /// `#[derive(SoaManager)] #[soa(manager = "PointMassManager")]` on [`PointMass`] generates,
    /// plus [`PointMassManager::simulate`].
    manager: pub PointMassManager,
    row: PointMass,
    columns: PointMassColumns, PointMassColumnsMut,
    lookup: HashLookup,
    fields: [
        { 0, pub mass: f32, mass_mut, set_mass, mass_column, mass_column_mut }
        { 1, pub position: Vec3, position_mut, set_position, position_column, position_column_mut }
        { 2, pub velocity: Vec3, velocity_mut, set_velocity, velocity_column, velocity_column_mut }
        {
            3, pub acceleration: Vec3,
            acceleration_mut, set_acceleration, acceleration_column, acceleration_column_mut
        }
    ]
}

impl PointMassManager {
    /// Part 2's `simulate`: `v += a * dt; p += v * dt` for every instance, one pass over three
    /// columns (zipped slice iterators: no bounds checks or lookups in the loop).
    pub fn simulate(&mut self, dt: f32) {
        let columns = self.columns_mut();
        for ((p, v), a) in columns
            .position
            .iter_mut()
            .zip(columns.velocity.iter_mut())
            .zip(columns.acceleration.iter())
        {
            *v += *a * dt;
            *p += *v * dt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::rc::Rc;

    fn ent(index: u32, generation: u8) -> Entity {
        Entity::new(index, generation)
    }

    /// Checks the lookup and layout invariants the module docs state.
    fn check<C: Columns, L: Lookup>(store: &SoaStore<C, L>) {
        let buf = &store.buf;
        assert!(buf.len <= buf.capacity);
        assert_eq!(buf.block.size() == 0, buf.capacity == 0);
        assert_eq!(buf.base.as_ptr() as usize % buf.block.align(), 0);
        let mut end = 0;
        for (c, col) in buf.columns.iter().enumerate() {
            let align = col.layout.align();
            assert_eq!(buf.offsets[c] % align, 0, "column {c} misaligned");
            assert_eq!(buf.column_ptr(c) as usize % align, 0);
            assert!(
                buf.offsets[c] >= end,
                "column {c} overlaps the previous one"
            );
            end = buf.offsets[c] + col.layout.size() * buf.capacity;
            assert!(end <= buf.block.size() || buf.capacity == 0);
            assert!(align <= buf.block.align());
        }
        for (row, e) in store.entities().iter().enumerate() {
            assert_eq!(
                store.lookup(*e),
                Some(Instance(row as u32)),
                "{e:?} at row {row}"
            );
        }
    }

    fn check_dense<C: Columns>(store: &SoaStore<C, DenseLookup>) {
        check(store);
        let d = &store.lookup;
        let es = store.entities();
        let mut reached = 0;
        for (idx, &i) in d.slots.iter().enumerate() {
            if i != NIL {
                assert_eq!(es[i as usize].index() as usize, idx);
                reached += 1;
            }
        }
        for (e, &i) in &d.displaced {
            assert_eq!(es[i as usize], *e);
            assert_ne!(
                d.slots[e.index() as usize],
                NIL,
                "displaced entity with a free slot"
            );
            assert_ne!(d.slots[e.index() as usize], i);
        }
        assert_eq!(reached + d.displaced.len(), es.len());
    }

    #[test]
    fn layout_is_one_aligned_block_in_declaration_order() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(align(16))]
        struct A16([u8; 16]);
        let mut s: SoaStore<(u8, A16, (), u64, glam::Vec3A)> = SoaStore::new();
        check(&s);
        assert_eq!(s.capacity(), 0);
        assert_eq!(s.buffer().block_layout().size(), 0, "nothing allocated yet");
        for n in 0..37u8 {
            s.create(
                ent(n.into(), 0),
                (
                    n,
                    A16([n; 16]),
                    (),
                    u64::from(n) << 40,
                    glam::Vec3A::splat(n.into()),
                ),
            )
            .unwrap();
            check(&s);
        }
        let buf = s.buffer();
        assert_eq!(buf.column_count(), 6);
        let cap = buf.capacity();
        assert_eq!(cap, 64);
        assert_eq!(buf.block_layout().align(), 16);
        // entity (4 bytes), u8, A16 at the next multiple of 16, () (no bytes), u64, Vec3A.
        assert_eq!(buf.column_offset(0), 0);
        assert_eq!(buf.column_offset(1), 4 * cap);
        assert_eq!(buf.column_offset(2), (5 * cap).next_multiple_of(16));
        assert_eq!(buf.column_offset(3), buf.column_offset(2) + 16 * cap);
        assert_eq!(buf.column_offset(4), buf.column_offset(3));
        assert_eq!(buf.column_offset(5), buf.column_offset(4) + 8 * cap);
        assert_eq!(buf.block_layout().size(), buf.column_offset(5) + 16 * cap);
        let (a, b, _, d, v) = s.fields();
        for n in 0..37u8 {
            assert_eq!(a[n as usize], n);
            assert_eq!(b[n as usize], A16([n; 16]));
            assert_eq!(d[n as usize], u64::from(n) << 40);
            assert_eq!(v[n as usize], glam::Vec3A::splat(n.into()));
        }
        assert_eq!(b.as_ptr() as usize % 16, 0);
        assert_eq!(v.as_ptr() as usize % 16, 0);
    }

    #[test]
    fn growth_and_shrink_preserve_values() {
        let mut s: SoaStore<(u16, String, [u64; 3])> = SoaStore::new();
        let mut caps = Vec::new();
        for n in 0..1000u32 {
            s.create(ent(n, 1), (n as u16, n.to_string(), [n.into(); 3]))
                .unwrap();
            if caps.last() != Some(&s.capacity()) {
                caps.push(s.capacity());
            }
        }
        assert_eq!(caps, [4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        for n in (0..1000).step_by(3) {
            assert!(s.destroy_entity(ent(n, 1)));
        }
        s.shrink_to_fit();
        assert_eq!(s.capacity(), s.len());
        check(&s);
        for (row, e) in s.entities().iter().enumerate() {
            let n = e.index();
            assert_ne!(n % 3, 0);
            let (a, b, c) = s.fields();
            assert_eq!(
                (a[row], b[row].as_str(), c[row]),
                (n as u16, &*n.to_string(), [u64::from(n); 3])
            );
        }
        s.clear();
        assert!(s.is_empty());
        s.shrink_to_fit();
        assert_eq!((s.capacity(), s.buffer().block_layout().size()), (0, 0));
        check(&s);
    }

    #[test]
    fn swap_erase_keeps_the_map_right() {
        let mut s: SoaStore<(u32,)> = SoaStore::new();
        let es: Vec<Entity> = (0..5).map(|i| ent(i, 3)).collect();
        for (n, e) in es.iter().enumerate() {
            assert_eq!(s.create(*e, (n as u32 * 10,)).unwrap(), Instance(n as u32));
        }
        // Destroying row 1 moves the last row (entity 4) into it.
        s.destroy(Instance(1));
        assert_eq!(s.entities(), &[es[0], es[4], es[2], es[3]]);
        assert_eq!(s.lookup(es[4]), Some(Instance(1)));
        assert_eq!(s.fields().0, &[0, 40, 20, 30]);
        assert_eq!(s.lookup(es[1]), None);
        // Destroying the last row moves nothing.
        s.destroy(Instance(3));
        assert_eq!(s.entities(), &[es[0], es[4], es[2]]);
        check(&s);
        assert!(!s.destroy_entity(es[3]));
        assert!(s.destroy_entity(es[0]));
        assert_eq!(s.lookup(es[2]), Some(Instance(0)));
        assert_eq!(
            s.create(es[2], (7,)),
            Err(SoaError::AlreadyExists {
                entity: es[2],
                instance: Instance(0)
            })
        );
        assert!(s
            .create(es[2], (7,))
            .unwrap_err()
            .to_string()
            .contains("already has"));
        check(&s);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn destroying_an_out_of_range_instance_panics() {
        let mut s: SoaStore<(u32,)> = SoaStore::new();
        s.create(ent(0, 0), (1,)).unwrap();
        s.destroy(Instance(1));
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
            s.destroy(Instance(3));
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
    fn a_panicking_drop_never_double_drops() {
        thread_local!(static DROPS: Cell<u32> = const { Cell::new(0) });
        struct Bomb(bool);
        impl Drop for Bomb {
            fn drop(&mut self) {
                DROPS.with(|d| d.set(d.get() + 1));
                if self.0 {
                    panic!("boom");
                }
            }
        }
        let mut s: SoaStore<(Bomb, Bomb), DenseLookup> = SoaStore::new();
        for n in 0..4 {
            s.create(ent(n, 0), (Bomb(n == 1), Bomb(false))).unwrap();
        }
        let r = catch_unwind(AssertUnwindSafe(|| s.destroy(Instance(1))));
        assert!(r.is_err());
        assert_eq!(
            DROPS.with(Cell::get),
            2,
            "the second field was still dropped"
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s.lookup(ent(1, 0)), None);
        assert_eq!(s.lookup(ent(3, 0)), Some(Instance(1)));
        check_dense(&s);
        drop(s);
        assert_eq!(DROPS.with(Cell::get), 8);

        // Panic while dropping the whole store: every other value is dropped, the block freed.
        DROPS.with(|d| d.set(0));
        let mut s: SoaStore<(Bomb, Bomb)> = SoaStore::new();
        for n in 0..4 {
            s.create(ent(n, 0), (Bomb(n == 2), Bomb(false))).unwrap();
        }
        assert!(catch_unwind(AssertUnwindSafe(move || drop(s))).is_err());
        assert_eq!(DROPS.with(Cell::get), 8);
    }

    #[test]
    fn zero_sized_fields_are_stored_and_dropped() {
        thread_local!(static DROPS: Cell<u32> = const { Cell::new(0) });
        #[derive(Debug, PartialEq)]
        struct Marker;
        impl Drop for Marker {
            fn drop(&mut self) {
                DROPS.with(|d| d.set(d.get() + 1));
            }
        }
        let mut s: SoaStore<((), Marker)> = SoaStore::new();
        for n in 0..10 {
            s.create(ent(n, 0), ((), Marker)).unwrap();
        }
        assert_eq!(
            s.buffer().block_layout().size(),
            4 * s.capacity(),
            "only entities take bytes"
        );
        assert_eq!(s.fields().1.len(), 10);
        s.destroy(Instance(0));
        assert_eq!(DROPS.with(Cell::get), 1);
        check(&s);
        drop(s);
        assert_eq!(DROPS.with(Cell::get), 10);

        // No fields at all: an entity set.
        let mut tags: SoaStore<()> = SoaStore::new();
        tags.create(ent(4, 0), ()).unwrap();
        assert!(tags.contains(ent(4, 0)));
        assert!(!tags.contains(ent(4, 1)));
    }

    #[test]
    fn stale_ids_find_nothing_in_either_lookup() {
        fn run<L: Lookup>(s: &mut SoaStore<(u32,), L>) {
            let old = ent(7, 0);
            let new = ent(7, 1);
            s.create(old, (1,)).unwrap();
            assert_eq!(s.lookup(new), None, "same index, other generation");
            assert_eq!(s.lookup(ent(8, 0)), None);
            assert_eq!(s.lookup(ent(100_000, 0)), None, "beyond the dense array");
            // The old entity died but was not collected; its index is reused.
            s.create(new, (2,)).unwrap();
            assert_eq!(s.lookup(old), Some(Instance(0)));
            assert_eq!(s.lookup(new), Some(Instance(1)));
            assert_eq!(s.fields().0[s.lookup(new).unwrap().index()], 2);
            assert!(s.destroy_entity(old));
            assert_eq!(s.lookup(old), None);
            assert_eq!(s.lookup(new), Some(Instance(0)));
            s.create(old, (3,)).unwrap();
            assert!(s.destroy_entity(new));
            assert_eq!(s.lookup(new), None);
            assert_eq!(s.lookup(old), Some(Instance(0)));
            assert_eq!(s.fields().0, &[3]);
        }
        let mut h: SoaStore<(u32,), HashLookup> = SoaStore::new();
        run(&mut h);
        check(&h);
        let mut d: SoaStore<(u32,), DenseLookup> = SoaStore::new();
        run(&mut d);
        check_dense(&d);
    }

    #[test]
    fn dense_and_hash_lookups_agree_on_random_operations() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut h: SoaStore<(u64,), HashLookup> = SoaStore::new();
        let mut d: SoaStore<(u64,), DenseLookup> = SoaStore::new();
        let mut model: HashMap<Entity, u64> = HashMap::new();
        let steps: u64 = if cfg!(miri) { 300 } else { 20_000 };
        for step in 0..steps {
            // Few indices, several generations: lots of displaced entries.
            let e = ent(next(12) as u32, next(4) as u8);
            match next(3) {
                0 => {
                    let expect_ok = !model.contains_key(&e);
                    assert_eq!(h.create(e, (step,)).is_ok(), expect_ok);
                    assert_eq!(d.create(e, (step,)).is_ok(), expect_ok);
                    model.entry(e).or_insert(step);
                }
                1 => {
                    let had = model.remove(&e).is_some();
                    assert_eq!(h.destroy_entity(e), had);
                    assert_eq!(d.destroy_entity(e), had);
                }
                _ if !h.is_empty() => {
                    let row = next(h.len() as u64) as u32;
                    let victim = h.entity(Instance(row));
                    h.destroy(Instance(row));
                    d.destroy_entity(victim);
                    model.remove(&victim);
                }
                _ => {}
            }
            assert_eq!(h.len(), model.len());
            assert_eq!(d.len(), model.len());
            for idx in 0..12 {
                for g in 0..4 {
                    let e = ent(idx, g);
                    let want = model.get(&e).copied();
                    assert_eq!(h.lookup(e).map(|i| h.fields().0[i.index()]), want);
                    assert_eq!(d.lookup(e).map(|i| d.fields().0[i.index()]), want);
                }
            }
            if step % 64 == 0 {
                check(&h);
                check_dense(&d);
            }
        }
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
        check(&s);
        // gc_all: exhaustive, one call.
        for e in es.iter().skip(1).step_by(4) {
            em.destroy(*e);
        }
        assert_eq!(s.gc_all(&em), count / 4);
        assert_eq!(s.gc_all(&em), 0);
        assert!(s.entities().iter().all(|e| em.alive(*e)));
        assert_eq!(s.len(), em.len());
        check(&s);
    }

    #[test]
    fn destroy_hook_and_flush() {
        let mut em = EntityManager::new();
        let mut m = PointMassManager::new();
        let hook = m.register_destroy_hook(&mut em);
        let es = em.create_many(6).unwrap();
        for e in &es[..4] {
            m.create(*e, PointMass::default()).unwrap();
        }
        em.destroy(es[1]);
        em.destroy(es[5]); // has no component
        assert_eq!(m.destroy_queue().len(), 2);
        assert_eq!(m.len(), 4, "nothing happens before the flush");
        assert_eq!(m.flush_destroyed(), 1);
        assert!(m.destroy_queue().is_empty());
        assert_eq!(m.entities().len(), 3);
        assert!(!m.contains(es[1]));
        assert_eq!(m.flush_destroyed(), 0);
        assert!(em.remove_hook(hook));
        em.destroy(es[0]);
        assert_eq!(m.flush_destroyed(), 0, "hook removed");
        assert!(m.contains(es[0]));
        check(m.store());
    }

    #[test]
    fn point_mass_manager_accessors_and_simulate() {
        let mut m = PointMassManager::with_capacity(3);
        assert_eq!(m.capacity(), 4);
        let es: Vec<Entity> = (0..3).map(|i| ent(i, 0)).collect();
        for (n, e) in es.iter().enumerate() {
            let n = n as f32;
            m.create(
                *e,
                PointMass {
                    mass: n,
                    position: Vec3::splat(n),
                    velocity: Vec3::X,
                    acceleration: Vec3::new(0.0, -2.0, 0.0),
                },
            )
            .unwrap();
        }
        let i = m.lookup(es[2]).unwrap();
        assert_eq!(m.entity(i), es[2]);
        m.set_mass(i, 9.0);
        *m.velocity_mut(i) = Vec3::ZERO;
        assert_eq!(*m.mass(i), 9.0);
        assert_eq!(m.mass_column(), &[0.0, 1.0, 9.0]);
        m.simulate(0.5);
        // v = v + a dt; p = p + v dt
        assert_eq!(*m.velocity(i), Vec3::new(0.0, -1.0, 0.0));
        assert_eq!(*m.position(i), Vec3::new(2.0, 1.5, 2.0));
        let j = m.lookup(es[0]).unwrap();
        assert_eq!(*m.position(j), Vec3::new(0.5, -0.5, 0.0));
        for v in m.velocity_column_mut() {
            *v = Vec3::ZERO;
        }
        m.acceleration_column_mut().fill(Vec3::ZERO);
        m.simulate(1.0);
        assert_eq!(*m.position(j), Vec3::new(0.5, -0.5, 0.0));
        let c = m.columns();
        assert_eq!(c.entities, &es[..]);
        assert_eq!(c.mass.len(), 3);
        assert_eq!(m.instances().map(|i| m.entity(i)).collect::<Vec<_>>(), es);
        assert!(format!("{m:?}").contains("PointMassManager"));
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<PointMassManager>();
    }
}
