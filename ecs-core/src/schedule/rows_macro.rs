//! `__rows!`: the loop of a generated pass over one part's rows, written once. A store of 20
//! rows walked by a plain loop ends in a scalar tail: the compiler's vector loop takes 8 rows
//! at a time, so 4 of the 20 go one by one, and a pass over many small stores (an open world
//! with tags) spends most of its work in those tails. `__rows!` walks blocks of 4 rows, then
//! at most 3 rows one by one: each block is an array the compiler unrolls and vectorises
//! whole (`cargo bench --bench structural -- frag_iter`: 26 stores of 20 rows in 38 ns, 52
//! with the plain loop). Blocks of 8 first would vectorise large stores a little better, but
//! a body written three times is too large for the compiler to inline into a pass's line per
//! store.
//!
//! The blocks vectorise only where the compiler knows that the columns do not overlap, which
//! a loop learns from checks it adds at run time but a block cannot: so the loops run in a
//! closure that takes each column as an argument of its own ([`Columns`]), and a `&mut`
//! argument is known not to alias any other.

/// A column slice cut into blocks of `N` rows and the rows after the last block.
pub trait RowBlocks: Sized {
    /// The blocks: `&[[T; N]]` or `&mut [[T; N]]`.
    type Blocks<const N: usize>;
    /// Splits the slice into as many whole blocks of `N` rows as it holds, and the rest.
    fn blocks<const N: usize>(self) -> (Self::Blocks<N>, Self);
}

impl<'a, T> RowBlocks for &'a [T] {
    type Blocks<const N: usize> = &'a [[T; N]];
    #[inline(always)]
    fn blocks<const N: usize>(self) -> (&'a [[T; N]], Self) {
        self.as_chunks::<N>()
    }
}

impl<'a, T> RowBlocks for &'a mut [T] {
    type Blocks<const N: usize> = &'a mut [[T; N]];
    #[inline(always)]
    fn blocks<const N: usize>(self) -> (&'a mut [[T; N]], Self) {
        self.as_chunks_mut::<N>()
    }
}

/// A part's column slices (a tuple of 1 to 16) handed to a closure as arguments of their own.
pub trait Columns<F> {
    /// What the closure returns.
    type Output;
    /// Calls `f` with the tuple's elements as its arguments.
    fn call(self, f: F) -> Self::Output;
}

macro_rules! columns {
    ($($x:ident $i:tt),+) => {
        impl<$($x,)+ R, F: FnOnce($($x),+) -> R> Columns<F> for ($($x,)+) {
            type Output = R;
            #[inline(always)]
            fn call(self, f: F) -> R {
                f($(self.$i),+)
            }
        }
    };
}

columns!(A 0);
columns!(A 0, B 1);
columns!(A 0, B 1, C 2);
columns!(A 0, B 1, C 2, D 3);
columns!(A 0, B 1, C 2, D 3, E 4);
columns!(A 0, B 1, C 2, D 3, E 4, G 5);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11, N 12);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11, N 12, O 13);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11, N 12, O 13, P 14);
columns!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11, N 12, O 13, P 14, Q 15);

/// Runs `f` in a function of its own, never inlined: a generated pass's loop over a dynamic
/// store, which, inlined, would make the pass's body too large for the compiler to inline into
/// the line of each declared store.
#[inline(never)]
pub fn out_of_line<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `body` once per row of the part's column slices, in row order, each row's value of
/// column `c` bound to `b` (`&mut` for `mut`, `&` for `ref`):
///
/// ```text
/// __rows!([mut c0 => position, ref c1 => velocity] { advance(position, velocity); })
/// ```
///
/// Every column is cut to the first one's length first, so no access is bounds-checked. A
/// binding the body does not use is allowed (a dynamic store's part always takes its entities).
/// `body` is expanded twice (the blocks of 4, the last rows). At most 16 columns (the
/// generator's `MAX_ROWS_COLUMNS`).
#[macro_export]
#[doc(hidden)]
macro_rules! __rows {
    ([$($m:tt $c:ident => $b:ident),+ $(,)?] $body:block) => {
        $crate::__private::Columns::call(($($c,)+), |$($c),+| {
            let n = $crate::__rows!(@first $($c),+).len();
            $(let $c = $crate::__rows!(@ref $m $c[..n]);)+
            $crate::__rows!(@blocks 4 [$($m $c => $b),+] $body);
            for i in 0..$crate::__rows!(@first $($c),+).len() {
                $(#[allow(unused_variables)] let $b = $crate::__rows!(@ref $m $c[i]);)+
                $body
            }
        })
    };
    // Blocks of `$size` rows from the front of each column; the columns become their rest.
    (@blocks $size:literal [$($m:tt $c:ident => $b:ident),+] $body:block) => {
        $(let $c = $crate::__private::RowBlocks::blocks::<$size>($c);)+
        for j in 0..$crate::__rows!(@first $($c.0),+).len() {
            $(#[allow(unused_variables)] let $b = $crate::__rows!(@ref $m $c.0[j]);)+
            for k in 0..$size {
                $(#[allow(unused_variables)] let $b = $crate::__rows!(@ref $m $b[k]);)+
                $body
            }
        }
        $(let $c = $c.1;)+
    };
    (@first $a:expr $(, $rest:expr)*) => { $a };
    (@ref mut $e:expr) => { &mut $e };
    (@ref ref $e:expr) => { &$e };
}

#[cfg(test)]
mod tests {
    /// Every row once, in order, with the values of every column at that row, for every
    /// length around the block sizes.
    #[test]
    fn the_loop_visits_every_row_once_in_order_with_its_columns() {
        for n in 0..=40usize {
            let mut a: Vec<usize> = (0..n).collect();
            // Longer than `a`: the loop keeps to the first column's length.
            let b: Vec<usize> = (0..n + 5).map(|i| 1000 + i).collect();
            let mut seen = Vec::new();
            let (c0, c1) = (&mut a[..], &b[..]);
            crate::__rows!([mut c0 => x, ref c1 => y] {
                seen.push((*x, *y));
                *x += 100;
            });
            let expected: Vec<(usize, usize)> = (0..n).map(|i| (i, 1000 + i)).collect();
            assert_eq!(seen, expected, "n = {n}");
            assert_eq!(a, (0..n).map(|i| i + 100).collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    fn one_column_alone_is_walked_whole() {
        for n in [0usize, 3, 4, 7, 8, 12, 20, 23] {
            let mut a = vec![1u64; n];
            let c0 = &mut a[..];
            let mut rows = 0;
            crate::__rows!([mut c0 => x] {
                *x *= 3;
                rows += 1;
            });
            assert_eq!(rows, n);
            assert!(a.iter().all(|&x| x == 3), "n = {n}");
        }
    }
}
