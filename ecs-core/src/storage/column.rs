//! A type-erased column: the values of one type for every row of a store, in one allocation.
//!
//! A [`Column`] knows its element type only through a [`ColumnType`] (size, alignment, drop
//! function, `TypeId`). It owns capacity, not length: the store it belongs to keeps one length
//! for all of its columns, so rows `0..len` of every column are initialised and nothing else is.
//! Typed views are taken by the system passes (`StoreColumns`), which check the `TypeId` once
//! per column and pass, so a wrong type is a panic, never a misread.
//!
//! The structure-of-arrays managers (`soa/buffer.rs`) keep their fields in columns of this type
//! too, with a length of their own.

use std::alloc::{self, Layout};
use std::any::TypeId;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a column needs to know about its element type. Built by [`ColumnType::of`].
#[derive(Clone, Copy, Debug)]
pub struct ColumnType {
    /// Size of one element in bytes (a multiple of `align`, possibly 0).
    pub size: usize,
    /// Alignment of the element type.
    pub align: usize,
    /// Drops `n` consecutive initialised elements starting at the pointer; `None` when the
    /// type needs no drop. Dropping continues past a panicking element, like a slice's drop.
    pub drop_slice: Option<unsafe fn(*mut u8, usize)>,
    /// The element type's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// The element type's name, for errors.
    pub type_name: fn() -> &'static str,
}

/// # Safety
/// `ptr` points to `n` initialised, aligned values of `T` that are not used again.
unsafe fn drop_slice<T>(ptr: *mut u8, n: usize) {
    // SAFETY: guaranteed by the caller; `drop_in_place` on a slice keeps dropping the remaining
    // elements if one of them panics.
    unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(ptr.cast::<T>(), n)) }
}

impl ColumnType {
    /// The column type of `T`.
    pub const fn of<T: 'static>() -> ColumnType {
        ColumnType {
            size: size_of::<T>(),
            align: align_of::<T>(),
            drop_slice: if std::mem::needs_drop::<T>() {
                Some(drop_slice::<T> as unsafe fn(*mut u8, usize))
            } else {
                None
            },
            type_id: TypeId::of::<T>,
            type_name: std::any::type_name::<T>,
        }
    }

    /// Is this the column type of `T`?
    #[inline]
    #[cfg(test)]
    pub(crate) fn is<T: 'static>(&self) -> bool {
        (self.type_id)() == TypeId::of::<T>()
    }
}

/// Capacity for `cap` elements of a type, without the length: the owning store keeps it.
pub(crate) struct Column {
    data: NonNull<u8>,
    cap: usize,
    /// `ty.size`, kept inline: every address computation needs it, and a move computes several.
    size: usize,
    ty: &'static ColumnType,
    /// `(ty.type_id)()`, kept so typed access compares ids without an indirect call.
    type_id: TypeId,
    /// The change stamp of the last pass that took the column mutably (every row of it; see
    /// `versions.rs`). Atomic only so that a pass can stamp it through a shared borrow.
    written: AtomicU64,
    /// For a column of several components (a `rows` store's row structs): per component, in
    /// slot order, the stamp of the last pass that wrote it alone. Empty otherwise.
    fields: Box<[AtomicU64]>,
}

// SAFETY: a column owns values of a type that is `Send + Sync` (components and generated row
// structs of components, which require both); it holds no shared state of its own.
unsafe impl Send for Column {}
// SAFETY: as above; `&Column` gives only shared access to the values.
unsafe impl Sync for Column {}

impl Column {
    /// An empty column of `ty`.
    pub(crate) fn new(ty: &'static ColumnType) -> Self {
        Column {
            data: dangling(ty.align),
            // Zero-sized types never allocate: every capacity is available.
            cap: if ty.size == 0 { usize::MAX } else { 0 },
            size: ty.size,
            ty,
            type_id: (ty.type_id)(),
            written: AtomicU64::new(0),
            fields: Box::new([]),
        }
    }

    /// The column holds `n` components (`n > 1`: a `rows` store's row structs), each with a
    /// pass stamp of its own.
    pub(crate) fn with_fields(mut self, n: usize) -> Self {
        if n > 1 {
            self.fields = (0..n).map(|_| AtomicU64::new(0)).collect();
        }
        self
    }

    /// A pass wrote component `i` of the column's elements (in slot order) in every row at
    /// `stamp`; the whole column when it holds one component.
    #[inline]
    pub(crate) fn mark_field(&self, i: usize, stamp: u64) {
        match self.fields.get(i) {
            Some(f) => f.store(stamp, Ordering::Relaxed),
            None => self.mark_written(stamp),
        }
    }

    /// Sets the pass stamp of component `i` of the column's elements (none for a column of
    /// one component): a world state's load.
    pub(crate) fn set_field_written(&self, i: usize, stamp: u64) {
        if let Some(f) = self.fields.get(i) {
            f.store(stamp, Ordering::Relaxed);
        }
    }

    /// Drops the epoch bits of the pass stamps (see `versions.rs`).
    pub(crate) fn clear_epochs(&self) {
        for f in self.fields.iter().chain(std::iter::once(&self.written)) {
            f.store(super::tick(f.load(Ordering::Relaxed)), Ordering::Relaxed);
        }
    }

    /// The stamp of the last pass that wrote component `i` of the column's elements alone (0
    /// for a column of one component).
    #[inline]
    pub(crate) fn field_written(&self, i: usize) -> u64 {
        self.fields.get(i).map_or(0, |f| f.load(Ordering::Relaxed))
    }

    /// A pass wrote every row of the column at `stamp`.
    #[inline]
    pub(crate) fn mark_written(&self, stamp: u64) {
        self.written.store(stamp, Ordering::Relaxed);
    }

    /// The stamp of the last pass that wrote every row of the column.
    #[inline]
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// The element type.
    #[inline]
    pub(crate) fn ty(&self) -> &'static ColumnType {
        self.ty
    }

    /// Size of one element in bytes.
    #[inline]
    pub(crate) fn elem_size(&self) -> usize {
        self.size
    }

    /// Alignment of the element type.
    #[inline]
    pub(crate) fn elem_align(&self) -> usize {
        self.ty.align
    }

    /// Elements that fit without reallocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Bytes allocated.
    pub(crate) fn allocated_bytes(&self) -> usize {
        if self.ty.size == 0 {
            0
        } else {
            self.cap * self.ty.size
        }
    }

    /// Makes room for `len + additional` elements, moving the `len` initialised ones.
    /// Grows at least geometrically, like `Vec`.
    pub(crate) fn reserve(&mut self, len: usize, additional: usize) {
        let needed = len
            .checked_add(additional)
            .expect("column capacity overflow");
        if needed <= self.cap {
            return;
        }
        self.set_capacity(len, needed.max(self.cap.saturating_mul(2)).max(4));
    }

    /// Moves the `len` initialised elements to an allocation of exactly `cap` elements,
    /// growing or shrinking (0 frees it). Zero-sized types keep their unbounded capacity.
    ///
    /// # Panics
    /// When `cap < len`, or the size overflows.
    pub(crate) fn set_capacity(&mut self, len: usize, cap: usize) {
        assert!(
            cap >= len,
            "a column of {len} elements cannot hold only {cap}"
        );
        if self.ty.size == 0 || cap == self.cap {
            return;
        }
        if cap == 0 {
            self.free();
            return;
        }
        let new_layout = array_layout(self.ty, cap);
        // SAFETY: the layout has a non-zero size (size > 0 and cap > 0 here). For a first
        // allocation `alloc`; otherwise `realloc` of the block allocated with
        // `array_layout(ty, self.cap)`, which keeps the first `min(self.cap, cap) >= len`
        // elements.
        let ptr = unsafe {
            if self.cap == 0 {
                alloc::alloc(new_layout)
            } else {
                alloc::realloc(
                    self.data.as_ptr(),
                    array_layout(self.ty, self.cap),
                    new_layout.size(),
                )
            }
        };
        self.data = NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(new_layout));
        self.cap = cap;
    }

    /// Pointer to element `row` (in bounds of the capacity, or one past for a write).
    #[inline]
    pub(crate) fn ptr_at(&self, row: usize) -> *mut u8 {
        // `wrapping_add`: computing the address needs no in-bounds proof; callers that
        // dereference it uphold `row < capacity`.
        self.data.as_ptr().wrapping_add(row * self.size)
    }

    /// The base pointer.
    #[inline]
    pub(crate) fn base(&self) -> *mut u8 {
        self.data.as_ptr()
    }

    /// Is `T` the element type?
    #[inline]
    pub(crate) fn is_type<T: 'static>(&self) -> bool {
        self.type_id == TypeId::of::<T>()
    }

    /// The first `len` elements as a slice of `T`.
    ///
    /// # Panics
    /// When `T` is not the column's type.
    ///
    /// # Safety
    /// Elements `0..len` are initialised (the owning store's length).
    #[inline]
    #[cfg(test)]
    pub(crate) unsafe fn as_slice<T: 'static>(&self, len: usize) -> &[T] {
        assert!(
            self.type_id == TypeId::of::<T>(),
            "column of {} read as {}",
            (self.ty.type_name)(),
            std::any::type_name::<T>()
        );
        // SAFETY: the type matches, the pointer is aligned and non-null, and the caller
        // guarantees `len` initialised elements.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<T>(), len) }
    }

    /// Drops elements `from..to` in place.
    ///
    /// # Safety
    /// They are initialised and are not used again (the owning store's length is already
    /// below `from`, so a panicking `Drop` leaves the store consistent).
    pub(crate) unsafe fn drop_range(&mut self, from: usize, to: usize) {
        if let Some(drop) = self.ty.drop_slice {
            if to > from {
                // SAFETY: guaranteed by the caller.
                unsafe { drop(self.ptr_at(from), to - from) }
            }
        }
    }

    /// Copies element `from` over element `to` (bitwise move; `from` is then logically
    /// uninitialised).
    ///
    /// # Safety
    /// Both are below the capacity, `from` is initialised, `to`'s old value was moved out or
    /// dropped.
    #[inline]
    #[cfg(test)]
    pub(crate) unsafe fn move_within(&mut self, from: usize, to: usize) {
        if from != to {
            // SAFETY: distinct, in-bounds elements of one allocation.
            unsafe { copy_bytes(self.ptr_at(from), self.ptr_at(to), self.size) }
        }
    }

    /// Frees the allocation without dropping elements (the store dropped them).
    fn free(&mut self) {
        if self.ty.size != 0 && self.cap != 0 {
            // SAFETY: allocated with this layout by `reserve`.
            unsafe { alloc::dealloc(self.data.as_ptr(), array_layout(self.ty, self.cap)) };
            self.cap = 0;
            self.data = dangling(self.ty.align);
        }
    }
}

impl Drop for Column {
    fn drop(&mut self) {
        self.free();
    }
}

fn dangling(align: usize) -> NonNull<u8> {
    // An aligned, non-null address that is never dereferenced for more than 0 bytes.
    NonNull::new(std::ptr::without_provenance_mut(align)).expect("alignment is non-zero")
}

fn array_layout(ty: &ColumnType, n: usize) -> Layout {
    let size = ty.size.checked_mul(n).expect("column capacity overflow");
    Layout::from_size_align(size, ty.align).expect("column layout")
}

/// Copies `n` bytes between non-overlapping locations. Small sizes (the common component
/// sizes) are copied with fixed-size moves instead of a call to `memcpy`: moves between stores
/// copy a handful of bytes per component, and the call would cost more than the copy. The
/// moves are of `MaybeUninit` byte arrays, never integers: a component's padding bytes (a
/// `#[repr(align(16))]` wrapper of a `u64`, say) are uninitialised, and reading them as an
/// integer would be undefined behaviour.
///
/// # Safety
/// `src` is readable and `dst` writable for `n` bytes, and they do not overlap.
#[inline]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    /// Moves `N` bytes, initialised or not.
    ///
    /// # Safety
    /// As `copy_bytes`, for `N` bytes.
    #[inline(always)]
    unsafe fn fixed<const N: usize>(src: *const u8, dst: *mut u8) {
        type Bytes<const N: usize> = std::mem::MaybeUninit<[u8; N]>;
        // SAFETY: the caller guarantees `N` readable and writable, non-overlapping bytes;
        // unaligned accesses need no alignment, and `MaybeUninit` holds any bytes.
        unsafe {
            dst.cast::<Bytes<N>>()
                .write_unaligned(src.cast::<Bytes<N>>().read_unaligned())
        }
    }
    // SAFETY: in every arm, the caller guarantees `n` readable/writable, non-overlapping bytes.
    unsafe {
        match n {
            0 => {}
            4 => fixed::<4>(src, dst),
            8 => fixed::<8>(src, dst),
            12 => fixed::<12>(src, dst),
            16 => fixed::<16>(src, dst),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    static U32: ColumnType = ColumnType::of::<u32>();
    static UNIT: ColumnType = ColumnType::of::<()>();
    static STRING: ColumnType = ColumnType::of::<String>();

    #[test]
    fn column_types_describe_their_type() {
        assert_eq!((U32.size, U32.align), (4, 4));
        assert!(U32.drop_slice.is_none());
        assert!(STRING.drop_slice.is_some());
        assert!(U32.is::<u32>() && !U32.is::<i32>());
        assert_eq!((U32.type_name)(), "u32");
    }

    #[test]
    fn reserve_keeps_values_and_grows_geometrically() {
        let mut c = Column::new(&U32);
        let mut len = 0;
        for i in 0..100u32 {
            c.reserve(len, 1);
            // SAFETY: reserved above.
            unsafe { c.ptr_at(len).cast::<u32>().write(i * 3) };
            len += 1;
        }
        assert!(c.capacity() >= 100 && c.capacity() < 400);
        // SAFETY: 100 initialised u32.
        let s = unsafe { c.as_slice::<u32>(len) };
        assert_eq!(s[0], 0);
        assert_eq!(s[99], 297);
        assert_eq!(c.allocated_bytes(), c.capacity() * 4);
    }

    #[test]
    fn set_capacity_shrinks_to_exactly_the_rows_kept_and_frees_at_zero() {
        let mut c = Column::new(&U32);
        c.reserve(0, 50);
        for i in 0..10u32 {
            // SAFETY: 50 reserved.
            unsafe { c.ptr_at(i as usize).cast::<u32>().write(i + 7) };
        }
        c.set_capacity(10, 10);
        assert_eq!((c.capacity(), c.allocated_bytes()), (10, 40));
        // SAFETY: the 10 values written above survive the reallocation.
        let kept = unsafe { c.as_slice::<u32>(10) };
        assert_eq!(kept, &(7..17).collect::<Vec<_>>()[..]);
        c.set_capacity(0, 0);
        assert_eq!((c.capacity(), c.allocated_bytes()), (0, 0));
        c.reserve(0, 1);
        assert_eq!(c.capacity(), 4, "a freed column grows again from empty");
    }

    #[test]
    #[should_panic(expected = "cannot hold only")]
    fn set_capacity_below_the_length_panics() {
        let mut c = Column::new(&U32);
        c.reserve(0, 8);
        c.set_capacity(8, 4);
    }

    #[test]
    fn zero_sized_columns_never_allocate() {
        let mut c = Column::new(&UNIT);
        c.reserve(0, 1_000_000);
        assert_eq!(c.allocated_bytes(), 0);
        // SAFETY: ZST values need no initialisation.
        assert_eq!(unsafe { c.as_slice::<()>(5) }.len(), 5);
    }

    #[test]
    #[should_panic(expected = "column of u32 read as i32")]
    fn wrong_type_panics() {
        let c = Column::new(&U32);
        // SAFETY: zero elements.
        let _ = unsafe { c.as_slice::<i32>(0) };
    }

    #[test]
    fn drop_range_and_move_within() {
        let mut c = Column::new(&STRING);
        c.reserve(0, 3);
        for (i, s) in ["a", "b", "c"].into_iter().enumerate() {
            // SAFETY: in capacity.
            unsafe { c.ptr_at(i).cast::<String>().write(s.to_string()) };
        }
        // SAFETY: drop "a" then move "c" into its place: rows 0..2 are then "c", "b".
        unsafe {
            c.drop_range(0, 1);
            c.move_within(2, 0);
            assert_eq!(c.as_slice::<String>(2), ["c", "b"]);
            c.drop_range(0, 2);
        }
    }

    thread_local!(static DROPS: Cell<u32> = const { Cell::new(0) });
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
            if self.0 {
                panic!("bomb");
            }
        }
    }
    static BOMB: ColumnType = ColumnType::of::<Bomb>();

    #[test]
    fn a_panicking_drop_still_drops_the_rest() {
        let mut c = Column::new(&BOMB);
        c.reserve(0, 3);
        for (i, b) in [false, true, false].into_iter().enumerate() {
            // SAFETY: in capacity.
            unsafe { c.ptr_at(i).cast::<Bomb>().write(Bomb(b)) };
        }
        DROPS.with(|d| d.set(0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: three initialised values, never used again.
            unsafe { c.drop_range(0, 3) }
        }));
        assert!(r.is_err());
        assert_eq!(DROPS.with(Cell::get), 3);
    }

    #[test]
    fn copy_bytes_copies_values_with_padding() {
        /// Eight bytes of value and eight of padding, which are never initialised.
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(align(16))]
        struct Padded(u64);
        let src = Padded(7);
        let mut dst = std::mem::MaybeUninit::<Padded>::uninit();
        // SAFETY: 16 bytes each, distinct; the copy makes `dst` a `Padded` (its padding needs
        // no value).
        let copied = unsafe {
            copy_bytes((&raw const src).cast(), dst.as_mut_ptr().cast(), 16);
            dst.assume_init()
        };
        assert_eq!(copied, Padded(7));
    }

    #[test]
    fn copy_bytes_copies_every_size() {
        for n in [0usize, 1, 3, 4, 8, 12, 16, 24, 33] {
            let src: Vec<u8> = (0..n as u8).collect();
            let mut dst = vec![0xAAu8; n];
            // SAFETY: n bytes each, separate vectors.
            unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr(), n) };
            assert_eq!(src, dst, "size {n}");
        }
    }
}

/// A column of one component in one store: the first value and the step between values (a
/// column of the component's type, or a field of a row struct).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawColumn {
    /// Address of row 0's value (dangling but aligned for an empty store or a zero-sized type).
    pub(crate) ptr: *mut u8,
    /// Bytes between consecutive rows' values.
    pub(crate) stride: usize,
}
