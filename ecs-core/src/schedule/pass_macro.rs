//! `__pass!`: the part of a generated pass that is the same in every pass, written once. A
//! generated pass names its part types, its constants and how each store's columns are taken;
//! the macro writes the `Part` enum, its [`SplitRows`](crate::__private::SplitRows) impl and
//! its [`PassParts`](crate::__private::PassParts) impl around them. The macro writes no
//! `unsafe`: what it expands to is safe code over the views it names, whatever it is given.

/// Declares a pass's part enum and its [`PassParts`](crate::__private::PassParts) impl:
///
/// ```text
/// __pass! {
///     enum Part<'a> { Shape0((&'a mut [A],)), Dynamic0((&'a [Entity], &'a mut [A],)) }
///     const PASS: usize = 0;
///     const SYSTEMS: &'static [u32] = &[0];
///     stores(s) { 0 => Shape0((s.col_mut(0),)), 2 => Shape0((s.col_mut(1),)) }
///     dynamic(s) { 0 => Dynamic0((s.entities(), s.component_mut(0))) }
/// }
/// ```
///
/// The enum has one variant per store shape (a tuple of column slices); the constants are the
/// pass's [`PassParts`](crate::__private::PassParts) constants. Then how the declared stores
/// are taken, one of:
///
/// - `stores(s) { id => Variant(columns), .. }`: each store by id (ascending), its part made
///   from its view `s`;
/// - `changed(s) { id [watched, ..] => Variant(columns), .. }`: the same, each store's runs
///   of rows whose watched columns changed since the filtered system's last run;
/// - `table(s, e, TABLE, [systems]) { part }`: the stores of a
///   [`StoreTable`](crate::__private::StoreTable), each one's part made from its view `s`
///   and its entry `e`; `systems` are the shapes' systems when the pass runs one system alone
///   ([`PassRun::only`](crate::__private::PassRun::only)), else empty;
/// - `changed_table(s, e, TABLE) { part }`: a table's changed runs.
///
/// Last, in an open world, `dynamic(s) { k => Variant(columns), .. }`: the part of the `k`th
/// of the pass's systems in a dynamic store, from its checked view `s`.
#[macro_export]
#[doc(hidden)]
macro_rules! __pass {
    // One arm per form, so that the constants before it parse without ambiguity.
    (enum $name:ident<$lt:lifetime> $variants:tt $(const $c:ident: $t:ty = $v:expr;)*
        stores $($rest:tt)*) => {
        $crate::__pass!(@pass $name $lt $variants { $(const $c: $t = $v;)* } stores $($rest)*);
    };
    (enum $name:ident<$lt:lifetime> $variants:tt $(const $c:ident: $t:ty = $v:expr;)*
        changed $($rest:tt)*) => {
        $crate::__pass!(@pass $name $lt $variants { $(const $c: $t = $v;)* } changed $($rest)*);
    };
    (enum $name:ident<$lt:lifetime> $variants:tt $(const $c:ident: $t:ty = $v:expr;)*
        table $($rest:tt)*) => {
        $crate::__pass!(@pass $name $lt $variants { $(const $c: $t = $v;)* } table $($rest)*);
    };
    (enum $name:ident<$lt:lifetime> $variants:tt $(const $c:ident: $t:ty = $v:expr;)*
        changed_table $($rest:tt)*) => {
        $crate::__pass!(
            @pass $name $lt $variants { $(const $c: $t = $v;)* } changed_table $($rest)*
        );
    };
    (
        @pass $name:ident $lt:lifetime { $($variant:ident($ty:ty)),* $(,)? } { $($consts:tt)* }
        $form:ident $args:tt $each:tt $(dynamic $d:tt $dynamic:tt)?
    ) => {
        enum $name<$lt> { $($variant($ty)),* }
        impl $crate::__private::SplitRows for $name<'_> {
            #[inline]
            fn len(&self) -> usize {
                match self { $($name::$variant(c) => $crate::__private::SplitRows::len(c),)* }
            }
            #[inline]
            fn split_at(self, mid: usize) -> (Self, Self) {
                match self {
                    $($name::$variant(c) => {
                        let (a, b) = $crate::__private::SplitRows::split_at(c, mid);
                        ($name::$variant(a), $name::$variant(b))
                    })*
                }
            }
        }
        impl<$lt> $crate::__private::PassParts<$lt> for $name<$lt> {
            $($consts)*
            $crate::__pass!(@each $name $lt $form $args $each);
            $($crate::__pass!(@dynamic $name $lt $d $dynamic);)?
        }
    };
    (@each $name:ident $lt:lifetime stores($s:ident) {
        $($id:literal => $v:ident $columns:tt),* $(,)?
    }) => {
        #[inline]
        fn rows(stores: &$crate::__private::StoresMut<$lt, true>) -> usize {
            stores.rows(&[$($id),*])
        }
        #[inline]
        fn each(
            stores: &mut $crate::__private::StoresMut<$lt, true>,
            _since: u64,
            f: &mut impl ::core::ops::FnMut(Self),
        ) {
            $(f({
                #[allow(unused_mut)]
                let mut $s = stores.take($id);
                $name::$v $columns
            });)*
        }
    };
    (@each $name:ident $lt:lifetime changed($s:ident) {
        $($id:literal [$($watched:literal),*] => $v:ident $columns:tt),* $(,)?
    }) => {
        #[inline]
        fn rows(stores: &$crate::__private::StoresMut<$lt, true>) -> usize {
            stores.rows(&[$($id),*])
        }
        #[inline]
        fn each(
            stores: &mut $crate::__private::StoresMut<$lt, true>,
            since: u64,
            f: &mut impl ::core::ops::FnMut(Self),
        ) {
            $({
                let runs = stores.changed($id, &[$($watched),*], since);
                if !runs.is_empty() {
                    #[allow(unused_mut)]
                    let mut $s = stores.take($id);
                    $crate::__private::each_run($name::$v $columns, &runs, f);
                }
            })*
        }
    };
    (@each $name:ident $lt:lifetime table($s:ident, $e:ident, $table:ident, [$($system:literal),*])
        { $part:expr }
    ) => {
        #[inline]
        fn rows(stores: &$crate::__private::StoresMut<$lt, true>) -> usize {
            stores.table_rows(&$table, &[$($system),*])
        }
        #[inline]
        fn each(
            stores: &mut $crate::__private::StoresMut<$lt, true>,
            _since: u64,
            f: &mut impl ::core::ops::FnMut(Self),
        ) {
            stores.each_in(&$table, &[$($system),*], |$s, $e| f($part));
        }
    };
    (@each $name:ident $lt:lifetime changed_table($s:ident, $e:ident, $table:ident) { $part:expr }) => {
        #[inline]
        fn rows(stores: &$crate::__private::StoresMut<$lt, true>) -> usize {
            stores.table_rows(&$table, &[])
        }
        #[inline]
        fn each(
            stores: &mut $crate::__private::StoresMut<$lt, true>,
            since: u64,
            f: &mut impl ::core::ops::FnMut(Self),
        ) {
            stores.each_changed_in(&$table, since, |mut $s, $e, runs| {
                $crate::__private::each_run($part, runs, f)
            });
        }
    };
    (@dynamic $name:ident $lt:lifetime ($s:ident) { $($k:literal => $v:ident $columns:tt),* $(,)? }) => {
        #[inline]
        fn dynamic(k: usize, $s: &mut $crate::__private::StoreColumns<$lt>) -> Self {
            match k {
                $($k => $name::$v $columns,)*
                _ => ::core::unreachable!("a system of the pass"),
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::__private::{pass, StoreTable};
    use crate::test_model::{world, A, B};
    use crate::Commands;

    /// What a pass saw: per row, its store, its `A` after the pass added 10, its `B` if any.
    type Seen = Vec<(u32, u32, Option<u32>)>;

    #[test]
    fn a_pass_with_a_line_per_store_visits_them_in_id_order_with_their_columns() {
        let (mut w, es) = world();
        crate::__pass! {
            enum Part<'a> { Shape0((&'a mut [A],)), Shape1((&'a mut [A], &'a [B],)) }
            const PASS: usize = 0;
            stores(s) { 0 => Shape0((s.col_mut(0),)), 1 => Shape1((s.col_mut(0), s.col(1),)) }
        }
        let mut seen: Seen = Vec::new();
        let pass = pass(&mut w);
        // SAFETY: the parts take the test model's columns by their indices and types in STORES
        // (store 0: `A`; store 1: `A`, `B`), in ascending store order.
        let stores = unsafe { pass.stores.trusted() };
        let mut body = |part: Part<'_>, _: &mut Commands<'_>| match part {
            Part::Shape0((a,)) => a.iter_mut().for_each(|a| {
                a.0 += 10;
                seen.push((0, a.0, None));
            }),
            Part::Shape1((a, b)) => a.iter_mut().zip(b).for_each(|(a, b)| {
                a.0 += 10;
                seen.push((1, a.0, Some(b.0)));
            }),
        };
        let pending = pass.run.inline::<Part>(stores, 0, &mut body);
        assert!(w.apply_commands(pending).is_empty());
        assert_eq!(
            seen,
            [
                (0, 11, None),
                (0, 14, None),
                (1, 12, Some(3)),
                (1, 15, Some(6))
            ]
        );
        assert_eq!(w.get::<A>(es[3]), Some(&A(15)));
    }

    #[test]
    fn a_pass_over_a_store_table_takes_each_stores_columns_by_its_entry() {
        let (mut w, es) = world();
        /// Per store: its id, its shape, the column of `A`, the column of `B` (padded).
        static TABLE: StoreTable<3> = StoreTable(&[0, 0, 0, 0, 1, 1, 0, 1]);
        crate::__pass! {
            enum Part<'a> { Shape0((&'a mut [A],)), Shape1((&'a [A], &'a mut [B],)) }
            const PASS: usize = 0;
            table(s, e, TABLE, []) {
                match e[0] {
                    0 => Part::Shape0((s.col_mut(e[1]),)),
                    _ => Part::Shape1((s.col(e[1]), s.col_mut(e[2]),)),
                }
            }
        }
        let mut seen: Seen = Vec::new();
        let pass = pass(&mut w);
        // SAFETY: TABLE gives each store's columns as the test model's STORES types them, and
        // lists the stores in ascending order.
        let stores = unsafe { pass.stores.trusted() };
        let mut body = |part: Part<'_>, _: &mut Commands<'_>| match part {
            Part::Shape0((a,)) => a.iter_mut().for_each(|a| {
                a.0 += 10;
                seen.push((0, a.0, None));
            }),
            Part::Shape1((a, b)) => a.iter().zip(b).for_each(|(a, b)| {
                b.0 += a.0;
                seen.push((1, a.0, Some(b.0)));
            }),
        };
        let pending = pass.run.inline::<Part>(stores, 0, &mut body);
        assert!(w.apply_commands(pending).is_empty());
        assert_eq!(
            seen,
            [
                (0, 11, None),
                (0, 14, None),
                (1, 2, Some(5)),
                (1, 5, Some(11))
            ]
        );
        assert_eq!(w.get::<B>(es[3]), Some(&B(11)));
    }
}
