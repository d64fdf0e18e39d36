//! One component of every row of a `rows` store, as a strided view: the component's field in
//! each of the column's row structs. A pass over many stores takes a `rows` store's components
//! this way, so that every store holding those components is one shape of the pass, whatever
//! its row struct (typed rows made each `rows` store a shape of its own: three quarters of the
//! shapes of the large passes of a 128 × 2048 × 512 world, each compiled in full).

use super::parts::SplitRows;
use std::marker::PhantomData;

/// The field of type `T` at one offset in each of `len` row structs `stride` bytes apart,
/// shared. Named by generated passes only.
#[doc(hidden)]
pub struct Fields<'w, T> {
    /// The field in the first row (an address computed with wrapping arithmetic: with no
    /// rows it may lie past the column's allocation, and is never read then).
    ptr: *mut T,
    len: usize,
    stride: usize,
    _borrow: PhantomData<&'w [T]>,
}

/// The field of type `T` at one offset in each of `len` row structs `stride` bytes apart,
/// borrowed mutably. Named by generated passes only.
#[doc(hidden)]
pub struct FieldsMut<'w, T> {
    /// The field in the first row (an address computed with wrapping arithmetic: with no
    /// rows it may lie past the column's allocation, and is never read then).
    ptr: *mut T,
    len: usize,
    stride: usize,
    _borrow: PhantomData<&'w mut [T]>,
}

// SAFETY: a `Fields` is a set of `&T` (one per row): sharing or sending it shares the `T`s.
unsafe impl<T: Sync> Send for Fields<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Fields<'_, T> {}
// SAFETY: a `FieldsMut` is a set of `&mut T` (one per row, disjoint): it is `Send` and `Sync`
// as `&mut [T]` is.
unsafe impl<T: Send> Send for FieldsMut<'_, T> {}
// SAFETY: as above; `&FieldsMut` hands out only `&T`.
unsafe impl<T: Sync> Sync for FieldsMut<'_, T> {}

macro_rules! fields_common {
    ($name:ident, $bound:ident) => {
        impl<'w, T> $name<'w, T> {
            /// The field at `ptr` in the first of `len` rows `stride` bytes apart.
            ///
            /// # Safety
            /// For every `i < len`, `ptr + i × stride` bytes is an initialised, aligned `T` in
            /// one allocation, valid and (for a `FieldsMut`) not otherwise accessed for `'w`.
            pub(crate) unsafe fn new(ptr: *mut T, len: usize, stride: usize) -> Self {
                $name {
                    ptr,
                    len,
                    stride,
                    _borrow: PhantomData,
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

            /// The field of row `i`.
            ///
            /// # Panics
            /// When `i` is not below [`Self::len`].
            #[inline]
            pub fn get(&self, i: usize) -> &T {
                assert!(i < self.len, "row {i} of {}", self.len);
                // SAFETY: in bounds (checked), an initialised `T` (`new`'s contract), shared
                // for the borrow of `self`.
                unsafe { &*self.at(i) }
            }

            /// Where the field of row `i` is (wrapping: row `len` may lie past the allocation).
            #[inline]
            fn at(&self, i: usize) -> *mut T {
                self.ptr.wrapping_byte_add(i.wrapping_mul(self.stride))
            }

            /// Rows `..mid` and `mid..`.
            ///
            /// # Panics
            /// When `mid` is above [`Self::len`].
            #[inline]
            fn split(self, mid: usize) -> (Self, Self) {
                assert!(mid <= self.len, "split at {mid} of {} rows", self.len);
                let tail = self.at(mid);
                // SAFETY: both halves hold rows of `self`'s, disjoint, for the same borrow.
                unsafe {
                    (
                        $name::new(self.ptr, mid, self.stride),
                        $name::new(tail, self.len - mid, self.stride),
                    )
                }
            }
        }

        impl<T> ::core::ops::Index<usize> for $name<'_, T> {
            type Output = T;
            #[inline]
            fn index(&self, i: usize) -> &T {
                self.get(i)
            }
        }

        impl<T: $bound> SplitRows for $name<'_, T> {
            #[inline]
            fn len(&self) -> usize {
                self.len
            }
            #[inline]
            fn split_at(self, mid: usize) -> (Self, Self) {
                self.split(mid)
            }
        }

        impl<T> ::core::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("len", &self.len)
                    .field("stride", &self.stride)
                    .finish()
            }
        }
    };
}

// A shared view splits as `&[T]` does (`T: Sync`), a mutable one as `&mut [T]` (`T: Send`).
fields_common!(Fields, Sync);
fields_common!(FieldsMut, Send);

impl<T> FieldsMut<'_, T> {
    /// The field of row `i`, mutably.
    ///
    /// # Panics
    /// When `i` is not below [`FieldsMut::len`].
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "row {i} of {}", self.len);
        // SAFETY: in bounds (checked), an initialised `T` that only this view reaches
        // (`new`'s contract), borrowed mutably for the borrow of `self`.
        unsafe { &mut *self.at(i) }
    }
}

impl<T> ::core::ops::IndexMut<usize> for FieldsMut<'_, T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Row {
        a: u64,
        b: u32,
        c: String,
    }

    fn rows() -> Vec<Row> {
        (0..5)
            .map(|i| Row {
                a: i,
                b: 10 + i as u32,
                c: format!("r{i}"),
            })
            .collect()
    }

    /// Views of fields `b` (mutably) and `c` of `rows`.
    fn views(rows: &mut [Row]) -> (FieldsMut<'_, u32>, Fields<'_, String>) {
        let base = rows.as_mut_ptr();
        let stride = std::mem::size_of::<Row>();
        // SAFETY: the fields of every row of `rows`, which the views borrow; `b` and `c` are
        // distinct fields, so the mutable view aliases nothing the shared one reaches.
        unsafe {
            (
                FieldsMut::new(std::ptr::addr_of_mut!((*base).b), rows.len(), stride),
                Fields::new(std::ptr::addr_of_mut!((*base).c), rows.len(), stride),
            )
        }
    }

    #[test]
    fn fields_reach_their_field_in_every_row() {
        let mut rows = rows();
        let (mut b, c) = views(&mut rows);
        assert_eq!((b.len(), c.len(), b.is_empty()), (5, 5, false));
        for i in 0..5 {
            b[i] += c[i].len() as u32 * 100;
        }
        assert_eq!(c.get(4), "r4");
        assert_eq!(
            rows.iter().map(|r| (r.a, r.b)).collect::<Vec<_>>(),
            [(0, 210), (1, 211), (2, 212), (3, 213), (4, 214)]
        );
    }

    #[test]
    fn fields_split_into_disjoint_halves() {
        let mut rows = rows();
        let (b, c) = views(&mut rows);
        let (mut lo, mut hi) = SplitRows::split_at(b, 2);
        let (c_lo, c_hi) = SplitRows::split_at(c, 5);
        assert_eq!((lo.len(), hi.len(), c_lo.len(), c_hi.len()), (2, 3, 5, 0));
        assert!(SplitRows::is_empty(&c_hi));
        lo[1] = 7;
        hi[0] = 8;
        *hi.get_mut(2) = 9;
        assert_eq!(c_lo[3], "r3");
        assert_eq!(
            rows.iter().map(|r| r.b).collect::<Vec<_>>(),
            [10, 7, 8, 13, 9]
        );
    }

    #[test]
    #[should_panic(expected = "row 5 of 5")]
    fn fields_refuse_a_row_out_of_range() {
        let mut rows = rows();
        let (_, c) = views(&mut rows);
        let _ = &c[5];
    }

    #[test]
    #[should_panic(expected = "row 3 of 3")]
    fn mutable_fields_refuse_a_row_out_of_range() {
        let mut rows = rows();
        let (b, _) = views(&mut rows);
        let (_, mut hi) = SplitRows::split_at(b, 2);
        hi[3] = 1;
    }

    #[test]
    #[should_panic(expected = "split at 6 of 5 rows")]
    fn fields_refuse_a_split_past_their_rows() {
        let mut rows = rows();
        let (b, _) = views(&mut rows);
        let _ = SplitRows::split_at(b, 6);
    }
}
