//! The type-erased structure-of-arrays storage of Bitsquid's component managers: [`ColumnInfo`]
//! describes a column, [`SoaBuffer`] holds an entity column and the field columns in one
//! allocation. The invariants its `unsafe` code keeps are in the [module docs](super#safety).

use std::alloc::{self, Layout};
use std::fmt;
use std::iter;
use std::mem;
use std::ptr::{self, NonNull};
use std::slice;

use crate::entity::Entity;

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

/// The type-erased structure-of-arrays storage of Bitsquid's component managers: an entity
/// column followed by one column per field, all in a single allocation.
///
/// The safe API can read the entity column, reserve and reallocate, swap-remove and clear rows;
/// only [`SoaBuffer::push_entity`] (unsafe) adds a row, after the caller wrote its field values
/// through [`SoaBuffer::column_ptr`]. [`SoaStore`](super::SoaStore) is the typed wrapper that
/// does that.
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

    /// The classic SoA manager's `allocate`: moves the rows to a new block of exactly `capacity` rows (growing or
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

    /// The classic SoA manager's swap-erase: moves the last row into `row` and drops the removed values.
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
    /// Checks the layout invariants of the [module docs](super#safety).
    #[cfg(test)]
    pub(super) fn assert_invariants(&self) {
        assert!(self.len <= self.capacity);
        assert_eq!(self.block.size() == 0, self.capacity == 0);
        assert_eq!(self.base.as_ptr() as usize % self.block.align(), 0);
        let mut end = 0;
        for (c, col) in self.columns.iter().enumerate() {
            let align = col.layout.align();
            assert_eq!(self.offsets[c] % align, 0, "column {c} misaligned");
            assert_eq!(self.column_ptr(c) as usize % align, 0);
            assert!(
                self.offsets[c] >= end,
                "column {c} overlaps the previous one"
            );
            end = self.offsets[c] + col.layout.size() * self.capacity;
            assert!(end <= self.block.size() || self.capacity == 0);
            assert!(align <= self.block.align());
        }
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use crate::entity::Entity;
    use crate::soa::{ent, DenseLookup, Instance, SoaStore};

    #[test]
    fn layout_is_one_aligned_block_in_declaration_order() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(align(16))]
        struct A16([u8; 16]);
        let mut s: SoaStore<(u8, A16, (), u64, glam::Vec3A)> = SoaStore::new();
        s.assert_invariants();
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
            s.assert_invariants();
        }
        let buf = s.buffer();
        assert_eq!(buf.column_count(), 6);
        let cap = buf.capacity();
        assert_eq!(cap, 64);
        assert_eq!(buf.block_layout().align(), 16);
        // entity (4 bytes, or 8 with `wide-entity`), u8, A16 at the next multiple of 16, ()
        // (no bytes), u64, Vec3A.
        let e = std::mem::size_of::<Entity>();
        assert_eq!(buf.column_offset(0), 0);
        assert_eq!(buf.column_offset(1), e * cap);
        assert_eq!(buf.column_offset(2), ((e + 1) * cap).next_multiple_of(16));
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
        s.assert_invariants();
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
        s.assert_invariants();
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
        let r = catch_unwind(AssertUnwindSafe(|| s.destroy(Instance::new(1))));
        assert!(r.is_err());
        assert_eq!(
            DROPS.with(Cell::get),
            2,
            "the second field was still dropped"
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s.lookup(ent(1, 0)), None);
        assert_eq!(s.lookup(ent(3, 0)), Some(Instance::new(1)));
        s.assert_invariants();
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
            std::mem::size_of::<Entity>() * s.capacity(),
            "only entities take bytes"
        );
        assert_eq!(s.fields().1.len(), 10);
        s.destroy(Instance::new(0));
        assert_eq!(DROPS.with(Cell::get), 1);
        s.assert_invariants();
        drop(s);
        assert_eq!(DROPS.with(Cell::get), 10);

        // No fields at all: an entity set.
        let mut tags: SoaStore<()> = SoaStore::new();
        tags.create(ent(4, 0), ()).unwrap();
        assert!(tags.contains(ent(4, 0)));
        assert!(!tags.contains(ent(4, 1)));
    }
}
