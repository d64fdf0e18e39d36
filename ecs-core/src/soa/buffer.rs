//! The type-erased storage of the structure-of-arrays managers: [`ColumnInfo`] describes a
//! column, [`SoaBuffer`] holds an entity column and one column per field. The columns are the
//! world's store columns (`storage/column.rs`), so growth, dropping and alignment are written
//! once for both. The invariants its `unsafe` code keeps are in the
//! [module docs](super#safety).

use std::alloc::Layout;
use std::fmt;
use std::iter;
use std::marker::PhantomData;
use std::mem;
use std::ptr;
use std::slice;

use crate::entity::Entity;
use crate::storage::{Column, ColumnType};

/// How one column stores its elements: the element [`Layout`] and, if the type needs dropping,
/// a function that drops elements in place. Only [`ColumnInfo::of`] builds one, so the drop
/// function always matches the layout. Named only in [`Columns`](super::Columns)' hidden
/// methods.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct ColumnInfo {
    ty: &'static ColumnType,
}

impl ColumnInfo {
    /// The description of a column of `T`.
    pub fn of<T: 'static>() -> Self {
        ColumnInfo {
            ty: const { &ColumnType::of::<T>() },
        }
    }

    /// Size and alignment of one element.
    pub fn layout(&self) -> Layout {
        Layout::from_size_align(self.ty.size, self.ty.align).expect("a type's own layout")
    }

    /// Does dropping an element run code?
    pub fn needs_drop(&self) -> bool {
        self.ty.drop_slice.is_some()
    }

    /// The element type's name, for debugging.
    pub fn type_name(&self) -> &'static str {
        (self.ty.type_name)()
    }
}

impl fmt::Debug for ColumnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnInfo")
            .field("type", &self.type_name())
            .field("size", &self.ty.size)
            .field("align", &self.ty.align)
            .field("needs_drop", &self.needs_drop())
            .finish()
    }
}

/// The type-erased structure-of-arrays storage of Bitsquid's component managers: an entity
/// column followed by one column per field, each its own allocation.
///
/// The safe API can read the entity column, reserve and reallocate, swap-remove and clear rows;
/// only [`SoaBuffer::push_entity`] (unsafe) adds a row, after the caller wrote its field values
/// through [`SoaBuffer::column_ptr`]. [`SoaStore`](super::SoaStore) is the typed wrapper that
/// does that. Named only in [`Columns`](super::Columns)' hidden methods.
#[doc(hidden)]
pub struct SoaBuffer {
    /// Column 0 is the entity column; column `k + 1` is field `k`. Each has room for at least
    /// `capacity` elements.
    columns: Box<[Column]>,
    len: usize,
    capacity: usize,
    /// The columns hold values of any type, `Send` or not: the typed `SoaStore` says when the
    /// buffer may cross threads.
    _not_send: PhantomData<*mut u8>,
}

impl SoaBuffer {
    /// An empty buffer with an entity column followed by the `fields` columns. Allocates nothing.
    pub fn new(fields: &[ColumnInfo]) -> Self {
        let columns = iter::once(ColumnInfo::of::<Entity>())
            .chain(fields.iter().copied())
            .map(|info| Column::new(info.ty))
            .collect();
        SoaBuffer {
            columns,
            len: 0,
            capacity: 0,
            _not_send: PhantomData,
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

    /// Number of rows the columns hold without reallocating.
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
        ColumnInfo {
            ty: self.columns[c].ty(),
        }
    }

    /// Bytes the columns have allocated (zero-sized fields take none).
    pub fn allocated_bytes(&self) -> usize {
        self.columns.iter().map(Column::allocated_bytes).sum()
    }

    /// Pointer to the first element of column `c`, aligned for its element type. Reading or
    /// writing through it is up to the caller: rows `0..len` are initialized, rows
    /// `len..capacity` are not. Panics if `c` is out of range.
    #[inline]
    pub fn column_ptr(&self, c: usize) -> *mut u8 {
        self.columns[c].base()
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

    /// The classic SoA manager's `allocate`: moves the rows to columns of exactly `capacity`
    /// rows (growing or shrinking). Panics if `capacity < len` or the size overflows.
    pub fn allocate(&mut self, capacity: usize) {
        assert!(
            capacity >= self.len,
            "cannot shrink an SoA buffer to {} below its {}",
            crate::plural::count(capacity, "row", "rows"),
            crate::plural::count(self.len, "row", "rows")
        );
        for column in self.columns.iter_mut() {
            column.set_capacity(self.len, capacity);
        }
        self.capacity = capacity;
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
        // SAFETY: `len < capacity` (caller), so row `len` of the entity column is inside its
        // allocation and aligned for `Entity`; it is uninitialized, so nothing is overwritten.
        unsafe {
            self.column_ptr(0)
                .cast::<Entity>()
                .add(self.len)
                .write(entity)
        };
        self.len += 1;
    }

    /// The classic SoA manager's swap-erase: moves the last row into `row` and drops the
    /// removed values. Panics if `row >= len`.
    pub fn swap_remove(&mut self, row: usize) {
        assert!(
            row < self.len,
            "row {row} out of range for an SoA buffer of {}",
            crate::plural::count(self.len, "row", "rows")
        );
        let last = self.len - 1;
        if row != last {
            for column in self.columns.iter() {
                let size = column.elem_size();
                // SAFETY: rows `row` and `last` are distinct rows below `len`, so both element
                // ranges are initialized, inside the column and disjoint. Swapping bytes swaps
                // the two values without dropping either.
                unsafe { ptr::swap_nonoverlapping(column.ptr_at(row), column.ptr_at(last), size) };
            }
        }
        // Take the removed row out of `0..len` before running any `Drop`.
        self.len = last;
        // SAFETY: row `last` is initialized in every column and now outside `0..len`, so nothing
        // else will read or drop it.
        unsafe { self.drop_rows(last, 1) };
    }

    /// Drops every row, keeping the allocations.
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
            let column = &self.columns[rest.next];
            rest.next += 1;
            if let Some(drop) = column.ty().drop_slice {
                // SAFETY: the caller guarantees `count` initialized elements of the column's
                // type from `row` on, never used again; `drop` was built by `ColumnType::of`
                // for that type.
                unsafe { drop(column.ptr_at(row), count) };
            }
        }
        mem::forget(rest);
    }

    /// Checks the layout invariants of the [module docs](super#safety).
    #[cfg(test)]
    pub(super) fn assert_invariants(&self) {
        assert!(self.len <= self.capacity);
        for (c, column) in self.columns.iter().enumerate() {
            assert!(column.capacity() >= self.capacity, "column {c} too small");
            assert_eq!(
                column.base() as usize % column.ty().align,
                0,
                "column {c} misaligned"
            );
        }
    }
}

impl Drop for SoaBuffer {
    fn drop(&mut self) {
        // The columns free their allocations when dropped, also while unwinding from a
        // panicking field `Drop` here.
        self.clear();
    }
}

impl fmt::Debug for SoaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaBuffer")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field(
                "columns",
                &(0..self.columns.len())
                    .map(|c| self.column_info(c))
                    .collect::<Vec<_>>(),
            )
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
    fn columns_keep_declaration_order_and_alignment() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(align(16))]
        struct A16([u8; 16]);
        let mut s: SoaStore<(u8, A16, (), u64, glam::Vec3A)> = SoaStore::new();
        s.assert_invariants();
        assert_eq!(s.capacity(), 0);
        assert_eq!(s.buffer().allocated_bytes(), 0, "nothing allocated yet");
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
        let names: Vec<&str> = (0..6).map(|c| buf.column_info(c).type_name()).collect();
        assert!(names[0].ends_with("Entity") && names[1] == "u8" && names[3] == "()");
        assert!(names[2].ends_with("A16") && names[4] == "u64" && names[5].ends_with("Vec3A"));
        // entity (4 bytes, or 8 with `wide-entity`), u8, A16, () (no bytes), u64, Vec3A.
        let e = std::mem::size_of::<Entity>();
        assert_eq!(buf.allocated_bytes(), (e + 1 + 16 + 8 + 16) * cap);
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
        assert_eq!((s.capacity(), s.buffer().allocated_bytes()), (0, 0));
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

        // Panic while dropping the whole store: every other value is dropped, the columns freed.
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
            s.buffer().allocated_bytes(),
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
