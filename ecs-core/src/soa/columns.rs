//! Typed columns: the [`Columns`] tuples of field types, with the typed reads and writes a
//! `SoaStore` makes through its [`SoaBuffer`].

use std::slice;

use super::{ColumnInfo, SoaBuffer};

mod sealed {
    #[doc(hidden)]
    pub trait Sealed {}
}

/// A tuple of field types `(A, B, ...)` (0 to 16 fields), one column each. Implemented for
/// tuples only (sealed): the typed accessors of `SoaStore` trust these
/// implementations. Hidden with the store: a user names the fields, never the tuple.
#[doc(hidden)]
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
    #[doc(hidden)]
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

    /// A copy of row `row`'s fields, for a tuple of `Copy` field types.
    ///
    /// # Safety
    ///
    /// `buf` was built from [`Columns::column_infos`] of `Self`, and `row < buf.len()`.
    #[doc(hidden)]
    unsafe fn read_copy(buf: &SoaBuffer, row: usize) -> Self
    where
        Self: Copy;
}

macro_rules! impl_columns {
    ($(($k:tt $t:ident $v:ident))*) => {
        impl<$($t: 'static),*> sealed::Sealed for ($($t,)*) {}

        impl<$($t: 'static),*> Columns for ($($t,)*) {
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

            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn read_copy(buf: &SoaBuffer, row: usize) -> Self
            where
                Self: Copy,
            {
                ($(
                    // SAFETY: column `k + 1` holds `$t`, and `row < len`, so the slot is inside
                    // the column, aligned and initialized. `Self: Copy` means every field type is
                    // `Copy` (a tuple is `Copy` exactly when all its elements are), so the
                    // bitwise read is a copy: the stored value stays valid and nothing is
                    // dropped twice.
                    unsafe { buf.column_ptr($k + 1).cast::<$t>().add(row).read() },
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
