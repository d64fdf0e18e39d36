//! Component sets: the components a store holds, a query or system needs, a borrow covers.
//!
//! A world's sets are exactly as wide as its components need: [`ComponentBits<W>`] is `W`
//! 64-bit words (bit `i % 64` of word `i / 64` is component `i`) and the generator picks `W`
//! from the component count (one word up to 64 components, two up to 128, sixteen for 1,024),
//! so there is no fixed component limit and a small world pays for one or two words. Every
//! operation is a loop over `W` words that the compiler unrolls. The runtime reaches a world's
//! width through [`WorldModel::Set`](crate::WorldModel::Set), bounded by [`AnyComponentBits`].
//!
//! The generated file also declares a named set type, `ComponentSet`, with one constant per
//! component (`ComponentSet::POSITION | ComponentSet::VELOCITY`), through
//! [`__component_set!`](crate::__component_set).

use std::fmt;
use std::hash::Hash;

/// A set of component ids below `64 * W`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentBits<const W: usize>([u64; W]);

impl<const W: usize> ComponentBits<W> {
    /// The empty set.
    pub const EMPTY: Self = ComponentBits([0; W]);
    /// How many component ids the set can hold (ids `0..CAPACITY`).
    pub const CAPACITY: u32 = 64 * W as u32;

    /// The set whose words are `words`.
    pub const fn from_words(words: [u64; W]) -> Self {
        ComponentBits(words)
    }

    /// The set's words: bit `i % 64` of word `i / 64` is component `i`.
    pub const fn words(&self) -> &[u64; W] {
        &self.0
    }

    /// Components `0..n` (all of them when `n` is at least the capacity).
    pub const fn first(n: u32) -> Self {
        let mut words = [0; W];
        let mut i = 0;
        while i < W {
            let below = n.saturating_sub(64 * i as u32);
            words[i] = if below >= 64 {
                u64::MAX
            } else {
                (1u64 << below) - 1
            };
            i += 1;
        }
        ComponentBits(words)
    }

    /// This set with component `id` added.
    ///
    /// # Panics
    /// When `id` is not below [`Self::CAPACITY`] (a component of a wider world).
    #[inline]
    pub const fn with(mut self, id: u32) -> Self {
        assert!(id < Self::CAPACITY, "component id beyond the set's width");
        self.0[(id / 64) as usize] |= 1 << (id % 64);
        self
    }

    /// This set without component `id` (unchanged when it lacks it).
    #[inline]
    pub const fn without(mut self, id: u32) -> Self {
        if id < Self::CAPACITY {
            self.0[(id / 64) as usize] &= !(1 << (id % 64));
        }
        self
    }

    /// Does the set hold component `id`?
    #[inline]
    pub const fn contains(&self, id: u32) -> bool {
        id < Self::CAPACITY && self.0[(id / 64) as usize] & (1 << (id % 64)) != 0
    }

    /// Components in either set.
    #[inline]
    pub const fn union(mut self, other: Self) -> Self {
        let mut i = 0;
        while i < W {
            self.0[i] |= other.0[i];
            i += 1;
        }
        self
    }

    /// Components in both sets.
    #[inline]
    pub const fn intersection(mut self, other: Self) -> Self {
        let mut i = 0;
        while i < W {
            self.0[i] &= other.0[i];
            i += 1;
        }
        self
    }

    /// Components in this set and not in `other`.
    #[inline]
    pub const fn difference(mut self, other: Self) -> Self {
        let mut i = 0;
        while i < W {
            self.0[i] &= !other.0[i];
            i += 1;
        }
        self
    }

    /// Does this set hold every component of `other`?
    #[inline]
    pub const fn is_superset(&self, other: &Self) -> bool {
        let mut i = 0;
        while i < W {
            if other.0[i] & !self.0[i] != 0 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Do the two sets share no component?
    #[inline]
    pub const fn is_disjoint(&self, other: &Self) -> bool {
        let mut i = 0;
        while i < W {
            if self.0[i] & other.0[i] != 0 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Is the set empty?
    #[inline]
    pub const fn is_empty(&self) -> bool {
        let mut i = 0;
        while i < W {
            if self.0[i] != 0 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// How many components the set holds.
    #[inline]
    pub const fn len(&self) -> usize {
        let (mut n, mut i) = (0, 0);
        while i < W {
            n += self.0[i].count_ones() as usize;
            i += 1;
        }
        n
    }

    /// How many of the set's components have ids below `id` (a component's place when the
    /// set's components are listed in id order).
    #[inline]
    pub fn rank(&self, id: u32) -> usize {
        let (word, bit) = ((id / 64) as usize, id % 64);
        let below: usize = self.0[..word.min(W)]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        match self.0.get(word) {
            Some(w) => below + (w & ((1u64 << bit) - 1)).count_ones() as usize,
            None => below,
        }
    }

    /// The set's component ids, ascending.
    pub fn ids(&self) -> Ids<'_> {
        Ids {
            words: &self.0,
            word: 0,
            bits: self.0.first().copied().unwrap_or(0),
        }
    }
}

impl<const W: usize> Default for ComponentBits<W> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const W: usize> AsRef<[u64]> for ComponentBits<W> {
    fn as_ref(&self) -> &[u64] {
        &self.0
    }
}

impl<const W: usize> fmt::Debug for ComponentBits<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.ids()).finish()
    }
}

impl<const W: usize> FromIterator<u32> for ComponentBits<W> {
    /// The set of the given ids.
    ///
    /// # Panics
    /// When an id is not below [`Self::CAPACITY`].
    fn from_iter<I: IntoIterator<Item = u32>>(ids: I) -> Self {
        ids.into_iter().fold(Self::EMPTY, Self::with)
    }
}

/// The component ids of a set, ascending (see [`ComponentBits::ids`]).
#[derive(Clone, Debug)]
pub struct Ids<'a> {
    words: &'a [u64],
    word: usize,
    bits: u64,
}

impl Iterator for Ids<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.word as u32 * 64 + bit)
    }
}

mod sealed {
    pub trait Sealed {}
    impl<const W: usize> Sealed for super::ComponentBits<W> {}
}

/// A [`ComponentBits`] of any width: what code generic over a world uses for its sets.
/// Implemented by [`ComponentBits<W>`] only; each method is the inherent one of that name.
pub trait AnyComponentBits:
    sealed::Sealed
    + Copy
    + Eq
    + Hash
    + Ord
    + Default
    + fmt::Debug
    + AsRef<[u64]>
    + Send
    + Sync
    + 'static
{
    /// The empty set.
    const EMPTY: Self;
    /// How many component ids the set can hold.
    const CAPACITY: u32;
    /// This set with component `id` added (panics when `id` is not below the capacity).
    fn with(self, id: u32) -> Self;
    /// This set without component `id`.
    fn without(self, id: u32) -> Self;
    /// Does the set hold component `id`?
    fn contains(&self, id: u32) -> bool;
    /// Components in either set.
    fn union(self, other: Self) -> Self;
    /// Components in both sets.
    fn intersection(self, other: Self) -> Self;
    /// Components in this set and not in `other`.
    fn difference(self, other: Self) -> Self;
    /// Does this set hold every component of `other`?
    fn is_superset(&self, other: &Self) -> bool;
    /// Is the set empty?
    fn is_empty(&self) -> bool;
    /// How many of the set's components have ids below `id`.
    fn rank(&self, id: u32) -> usize;
    /// The set's component ids, ascending.
    fn ids(&self) -> Ids<'_>;
}

impl<const W: usize> AnyComponentBits for ComponentBits<W> {
    const EMPTY: Self = Self::EMPTY;
    const CAPACITY: u32 = Self::CAPACITY;
    #[inline]
    fn with(self, id: u32) -> Self {
        Self::with(self, id)
    }
    #[inline]
    fn without(self, id: u32) -> Self {
        Self::without(self, id)
    }
    #[inline]
    fn contains(&self, id: u32) -> bool {
        Self::contains(self, id)
    }
    #[inline]
    fn union(self, other: Self) -> Self {
        Self::union(self, other)
    }
    #[inline]
    fn intersection(self, other: Self) -> Self {
        Self::intersection(self, other)
    }
    #[inline]
    fn difference(self, other: Self) -> Self {
        Self::difference(self, other)
    }
    #[inline]
    fn is_superset(&self, other: &Self) -> bool {
        Self::is_superset(self, other)
    }
    #[inline]
    fn is_empty(&self) -> bool {
        Self::is_empty(self)
    }
    #[inline]
    fn rank(&self, id: u32) -> usize {
        Self::rank(self, id)
    }
    #[inline]
    fn ids(&self) -> Ids<'_> {
        Self::ids(self)
    }
}

/// Declares a world's named component-set type: a `ComponentSet` newtype over
/// `ComponentBits<W>` with one constant per component, set operators and a `Debug` that
/// prints names. The generated file invokes it once; it is written here so that the
/// generated code stays one line per component.
#[doc(hidden)]
#[macro_export]
macro_rules! __component_set {
    ($(#[$doc:meta])* pub struct $name:ident: $w:literal { $($(#[$cdoc:meta])* $c:ident = $id:literal,)* }) => {
        $(#[$doc])*
        #[derive(
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::cmp::PartialEq,
            ::core::cmp::Eq,
            ::core::hash::Hash,
            ::core::cmp::PartialOrd,
            ::core::cmp::Ord,
            ::core::default::Default,
        )]
        pub struct $name($crate::ComponentBits<$w>);

        #[allow(dead_code)]
        impl $name {
            $( $(#[$cdoc])* pub const $c: Self = Self($crate::ComponentBits::<$w>::EMPTY.with($id)); )*
            const NAMES: &'static [(u32, &'static str)] = &[$(($id, ::core::stringify!($c))),*];

            /// The empty set.
            pub const fn empty() -> Self {
                Self($crate::ComponentBits::<$w>::EMPTY)
            }
            /// Every component of the world.
            pub const fn all() -> Self {
                Self($crate::ComponentBits::<$w>::EMPTY$(.with($id))*)
            }
            /// The set's bits (bit `i` is component `i`).
            pub const fn bits(&self) -> $crate::ComponentBits<$w> {
                self.0
            }
            /// The set of the world's components among `bits` (others are dropped).
            pub const fn from_bits_truncate(bits: $crate::ComponentBits<$w>) -> Self {
                Self(bits.intersection(Self::all().0))
            }
            /// Does the set hold every component of `other`?
            pub const fn contains(&self, other: Self) -> bool {
                self.0.is_superset(&other.0)
            }
            /// Does the set share a component with `other`?
            pub const fn intersects(&self, other: Self) -> bool {
                !self.0.is_disjoint(&other.0)
            }
            /// Is the set empty?
            pub const fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
            /// How many components the set holds.
            pub const fn len(&self) -> usize {
                self.0.len()
            }
            /// The names of the set's components, in id order.
            pub fn names(&self) -> impl ::core::iter::Iterator<Item = &'static str> + '_ {
                ::core::iter::Iterator::map(
                    ::core::iter::Iterator::filter(Self::NAMES.iter(), |(id, _)| self.0.contains(*id)),
                    |&(_, name)| name,
                )
            }
        }

        impl ::core::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, other: Self) -> Self {
                Self(self.0.union(other.0))
            }
        }
        impl ::core::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                self.0 = self.0.union(other.0);
            }
        }
        impl ::core::ops::BitAnd for $name {
            type Output = Self;
            fn bitand(self, other: Self) -> Self {
                Self(self.0.intersection(other.0))
            }
        }
        impl ::core::ops::Sub for $name {
            type Output = Self;
            fn sub(self, other: Self) -> Self {
                Self(self.0.difference(other.0))
            }
        }
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(::core::concat!(::core::stringify!($name), "("))?;
                let mut first = true;
                for n in self.names() {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    first = false;
                    f.write_str(n)?;
                }
                f.write_str(")")
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_past_the_first_word_land_in_their_word() {
        let s = ComponentBits::<3>::EMPTY
            .with(0)
            .with(63)
            .with(64)
            .with(130);
        assert_eq!(s.words(), &[1 | 1 << 63, 1, 1 << 2]);
        assert_eq!(s.ids().collect::<Vec<_>>(), [0, 63, 64, 130]);
        assert_eq!(s.len(), 4);
        assert!(s.contains(64) && !s.contains(65) && !s.contains(500));
        assert_eq!(s.without(64).ids().collect::<Vec<_>>(), [0, 63, 130]);
        assert_eq!(
            s.without(999),
            s,
            "an id beyond the width is absent already"
        );
        assert_eq!(format!("{s:?}"), "{0, 63, 64, 130}");
    }

    #[test]
    fn rank_counts_the_members_below() {
        let s: ComponentBits<2> = [3, 5, 64, 100].into_iter().collect();
        assert_eq!(
            [0, 3, 4, 5, 6, 64, 65, 100, 101, 127].map(|id| s.rank(id)),
            [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
        );
        assert_eq!(s.rank(128), 4, "past the width: every member is below");
        assert_eq!(s.rank(10_000), 4);
    }

    #[test]
    fn set_algebra() {
        let a: ComponentBits<2> = [1, 70].into_iter().collect();
        let b: ComponentBits<2> = [70, 100].into_iter().collect();
        let ids = |s: ComponentBits<2>| s.ids().collect::<Vec<_>>();
        assert_eq!(ids(a.union(b)), [1, 70, 100]);
        assert_eq!(ids(a.intersection(b)), [70]);
        assert_eq!(ids(a.difference(b)), [1]);
        assert!(a.union(b).is_superset(&a) && !a.is_superset(&b));
        assert!(!a.is_disjoint(&b) && a.difference(b).is_disjoint(&b));
        assert!(ComponentBits::<2>::EMPTY.is_empty() && !a.is_empty());
        assert_eq!(ids(ComponentBits::<2>::first(66)).len(), 66);
        assert_eq!(ComponentBits::<2>::first(64).words(), &[u64::MAX, 0]);
        assert_eq!(ComponentBits::<2>::first(0), ComponentBits::EMPTY);
        assert_eq!(ComponentBits::<2>::first(500).len(), 128);
    }

    #[test]
    #[should_panic(expected = "beyond the set's width")]
    fn adding_an_id_beyond_the_width_panics() {
        let _ = ComponentBits::<1>::EMPTY.with(64);
    }

    #[test]
    #[allow(unreachable_pub)] // The macro's type is `pub`, as in a generated world.
    fn the_named_set_prints_names_and_combines() {
        crate::__component_set! {
            pub struct Named: 2 { A = 0, B = 1, Z = 100, }
        }
        let s = Named::A | Named::Z;
        assert_eq!(format!("{s:?}"), "Named(A | Z)");
        assert!(s.contains(Named::Z) && !s.contains(Named::B) && s.intersects(Named::A));
        assert_eq!(Named::all().len(), 3, "every declared component, no more");
        assert_eq!((Named::all() - s).names().collect::<Vec<_>>(), ["B"]);
        assert_eq!(
            Named::from_bits_truncate(ComponentBits::first(128)),
            Named::all()
        );
    }
}
