//! Component sets: the components a store holds, a query or system needs, a borrow covers.
//!
//! A world's sets are exactly as wide as its components need: [`ComponentBits<W>`] is `W`
//! 64-bit words (bit `i % 64` of word `i / 64` is component `i`) and the generator picks `W`
//! from the component count (one word up to 64 components, two up to 128, sixteen for 1,024),
//! so there is no fixed component limit and a small world pays for one or two words. Every
//! operation is a loop over `W` words that the compiler unrolls. The runtime reaches a world's
//! width through [`WorldModel::Set`](crate::WorldModel::Set), bounded by [`AnyComponentBits`];
//! matching stores and systems works on these bits alone.
//!
//! The generated file also declares the world's named set type, `ComponentSet`, through
//! [`__component_set!`](crate::__component_set): a [`bitflags`] type over
//! `ComponentBits<W>` (which implements [`bitflags::Bits`]) with one constant per component,
//! named as bitflags names flags: the component's type name in SCREAMING_SNAKE_CASE
//! ([`sigecs_rules::constant_case`]: `HTTPServer` → `HTTP_SERVER`), so
//! `ComponentSet::POSITION | ComponentSet::VELOCITY`. Names, iteration (`iter_names`),
//! `Display` (`POSITION | VELOCITY`) and parsing (`FromStr`, or
//! [`bitflags::parser::from_str`]) are bitflags', with those names. Two components whose
//! constants would be the same (`HttpServer` and `HTTPServer`) are a build error. Its
//! [`Flags`](bitflags::Flags) trait is in scope wherever the world is glob-imported, and in
//! [`prelude`](crate::prelude).

use bitflags::parser::{ParseError, ParseHex, WriteHex};
use std::fmt;
use std::hash::Hash;
use std::ops::{BitAnd, BitOr, BitXor, Not};

/// A set of component ids below `64 * W`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentBits<const W: usize>([u64; W]);

// The set operations a person uses are bitflags' on the world's `ComponentSet`; these are the
// runtime's and the generated code's (const, for the generated tables).
#[doc(hidden)]
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

impl<const W: usize> BitOr for ComponentBits<W> {
    type Output = Self;
    #[inline]
    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl<const W: usize> BitAnd for ComponentBits<W> {
    type Output = Self;
    #[inline]
    fn bitand(self, other: Self) -> Self {
        self.intersection(other)
    }
}

impl<const W: usize> BitXor for ComponentBits<W> {
    type Output = Self;
    #[inline]
    fn bitxor(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a ^= b;
        }
        self
    }
}

impl<const W: usize> Not for ComponentBits<W> {
    type Output = Self;
    /// Every id below the capacity that the set lacks.
    #[inline]
    fn not(mut self) -> Self {
        for a in &mut self.0 {
            *a = !*a;
        }
        self
    }
}

/// The bits of a world's named set type (`bitflags::Flags<Bits = ComponentBits<W>>`).
impl<const W: usize> bitflags::Bits for ComponentBits<W> {
    const EMPTY: Self = Self::EMPTY;
    const ALL: Self = ComponentBits([u64::MAX; W]);
}

/// The set as one hexadecimal number (component `i` is bit `i`), without leading zeros: what
/// a named set's `Display` writes after `0x` for bits that name no component.
impl<const W: usize> WriteHex for ComponentBits<W> {
    fn write_hex<F: fmt::Write>(&self, mut out: F) -> fmt::Result {
        let Some(top) = self.0.iter().rposition(|&w| w != 0) else {
            return out.write_char('0');
        };
        write!(out, "{:x}", self.0[top])?;
        self.0[..top]
            .iter()
            .rev()
            .try_for_each(|w| write!(out, "{w:016x}"))
    }
}

/// Reads [`WriteHex`]'s form (leading zeros allowed); an error for anything but hexadecimal
/// digits, or a bit at or beyond [`ComponentBits::CAPACITY`].
impl<const W: usize> ParseHex for ComponentBits<W> {
    fn parse_hex(input: &str) -> Result<Self, ParseError> {
        let invalid = || ParseError::invalid_hex_flag(input);
        if input.is_empty() || !input.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        let digits = input.trim_start_matches('0').as_bytes();
        if digits.len() > 16 * W {
            return Err(invalid());
        }
        let mut words = [0u64; W];
        for (word, chunk) in words.iter_mut().zip(digits.rchunks(16)) {
            // Only ASCII hexadecimal digits are left, so both steps succeed.
            let chunk = std::str::from_utf8(chunk).map_err(|_| invalid())?;
            *word = u64::from_str_radix(chunk, 16).map_err(|_| invalid())?;
        }
        Ok(ComponentBits(words))
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
    #[doc(hidden)]
    pub trait Sealed {}
    impl<const W: usize> Sealed for super::ComponentBits<W> {}
}

/// A [`ComponentBits`] of any width: what code generic over a world uses for its sets.
/// Implemented by [`ComponentBits<W>`] only; each method is the inherent one of that name.
#[doc(hidden)]
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
/// `ComponentBits<W>` with one constant per component, that implements [`bitflags::Flags`]
/// (names, iteration, `Display`, `FromStr` and the set methods are bitflags'). Written here,
/// once, so that the generated code stays one line per component: `NAME = id,`, where `NAME`
/// is both the constant and the flag's name in text. The operators and `Debug` are here because
/// bitflags writes them only for the types its own macro declares, which takes primitive bits
/// alone.
#[doc(hidden)]
#[macro_export]
macro_rules! __component_set {
    ($(#[$doc:meta])* $vis:vis struct $name:ident: $w:literal {
        $($(#[$cdoc:meta])* $c:ident = $id:literal,)*
    }) => {
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
        $vis struct $name($crate::ComponentBits<$w>);

        // bitflags' methods wherever the set is glob-imported (`use my_world::*;`).
        #[allow(unused_imports)]
        $vis use $crate::bitflags::Flags as _;

        // One constant per component; a world need not use them all.
        #[allow(dead_code)]
        impl $name {
            $( $(#[$cdoc])* $vis const $c: Self = Self($crate::ComponentBits::<$w>::EMPTY.with($id)); )*

            /// How many components the set holds.
            $vis const fn len(&self) -> usize {
                self.0.len()
            }
        }

        impl $crate::bitflags::Flags for $name {
            const FLAGS: &'static [$crate::bitflags::Flag<Self>] = &[
                $($crate::bitflags::Flag::new(::core::stringify!($c), Self::$c),)*
            ];
            type Bits = $crate::ComponentBits<$w>;
            #[inline]
            fn bits(&self) -> Self::Bits {
                self.0
            }
            #[inline]
            fn from_bits_retain(bits: Self::Bits) -> Self {
                Self(bits)
            }
            // A constant, not the union of `FLAGS` that bitflags computes by default, so that
            // `from_bits_truncate`, `complement` and `!` stay `W` word operations.
            #[inline]
            fn all() -> Self {
                const ALL: $crate::ComponentBits<$w> = $crate::ComponentBits::<$w>::EMPTY$(.with($id))*;
                Self(ALL)
            }
        }

        impl ::core::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, other: Self) -> Self {
                $crate::bitflags::Flags::union(self, other)
            }
        }
        impl ::core::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                $crate::bitflags::Flags::insert(self, other)
            }
        }
        impl ::core::ops::BitAnd for $name {
            type Output = Self;
            fn bitand(self, other: Self) -> Self {
                $crate::bitflags::Flags::intersection(self, other)
            }
        }
        impl ::core::ops::BitAndAssign for $name {
            fn bitand_assign(&mut self, other: Self) {
                *self = $crate::bitflags::Flags::intersection(*self, other)
            }
        }
        impl ::core::ops::BitXor for $name {
            type Output = Self;
            fn bitxor(self, other: Self) -> Self {
                $crate::bitflags::Flags::symmetric_difference(self, other)
            }
        }
        impl ::core::ops::BitXorAssign for $name {
            fn bitxor_assign(&mut self, other: Self) {
                $crate::bitflags::Flags::toggle(self, other)
            }
        }
        impl ::core::ops::Sub for $name {
            type Output = Self;
            fn sub(self, other: Self) -> Self {
                $crate::bitflags::Flags::difference(self, other)
            }
        }
        impl ::core::ops::SubAssign for $name {
            fn sub_assign(&mut self, other: Self) {
                $crate::bitflags::Flags::remove(self, other)
            }
        }
        impl ::core::ops::Not for $name {
            type Output = Self;
            fn not(self) -> Self {
                $crate::bitflags::Flags::complement(self)
            }
        }
        impl ::core::iter::Extend<$name> for $name {
            fn extend<I: ::core::iter::IntoIterator<Item = Self>>(&mut self, sets: I) {
                for set in sets {
                    $crate::bitflags::Flags::insert(self, set)
                }
            }
        }
        impl ::core::iter::FromIterator<$name> for $name {
            fn from_iter<I: ::core::iter::IntoIterator<Item = Self>>(sets: I) -> Self {
                let mut all = <Self as $crate::bitflags::Flags>::empty();
                ::core::iter::Extend::extend(&mut all, sets);
                all
            }
        }
        impl ::core::iter::IntoIterator for $name {
            type Item = Self;
            type IntoIter = $crate::bitflags::iter::Iter<Self>;
            fn into_iter(self) -> Self::IntoIter {
                $crate::bitflags::Flags::iter(&self)
            }
        }
        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                $crate::bitflags::parser::to_writer(self, f)
            }
        }
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::write!(f, "{}({})", ::core::stringify!($name), self)
            }
        }
        impl ::core::str::FromStr for $name {
            type Err = $crate::bitflags::parser::ParseError;
            fn from_str(text: &str) -> ::core::result::Result<Self, Self::Err> {
                $crate::bitflags::parser::from_str(text)
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

    crate::__component_set! {
        /// A named set over two words, with a gap, like a generated one.
        pub(crate) struct Named: 2 { A = 0, B = 1, MOVE = 2, Z = 100, }
    }

    fn bits(ids: &[u32]) -> ComponentBits<2> {
        ids.iter().copied().collect()
    }

    #[test]
    fn the_named_set_writes_and_reads_its_names() {
        let s = Named::A | Named::Z;
        assert_eq!(s.to_string(), "A | Z");
        assert_eq!(format!("{s:?}"), "Named(A | Z)");
        assert_eq!("A | Z".parse::<Named>().unwrap(), s);
        assert_eq!(
            " Z|A ".parse::<Named>().unwrap(),
            s,
            "any order, any spacing"
        );
        assert_eq!(bitflags::parser::from_str::<Named>("A | Z").unwrap(), s);
        assert_eq!(Named::MOVE.to_string(), "MOVE");
        assert_eq!("MOVE".parse::<Named>().unwrap(), Named::MOVE);
        assert!("move".parse::<Named>().is_err(), "names are case-sensitive");
        assert_eq!(Named::from_name("Z"), Some(Named::Z));
        assert_eq!(Named::from_name("z"), None, "names are case-sensitive");
        let err = "A | Q".parse::<Named>().unwrap_err();
        assert_eq!(err.to_string(), "unrecognized named flag `Q`");
        assert!("A |".parse::<Named>().is_err(), "an empty flag");
    }

    #[test]
    fn every_named_set_round_trips_through_text() {
        let flags = [Named::A, Named::B, Named::MOVE, Named::Z];
        for subset in 0u32..16 {
            let s: Named = (0..4)
                .filter(|i| subset & (1 << i) != 0)
                .map(|i| flags[i])
                .collect();
            let text = s.to_string();
            assert_eq!(text.parse::<Named>().unwrap(), s, "{text:?}");
            assert_eq!(text.split(" | ").filter(|n| !n.is_empty()).count(), s.len());
        }
    }

    #[test]
    fn names_come_in_id_order() {
        let s = Named::Z | Named::MOVE | Named::A;
        let names: Vec<&str> = s.iter_names().map(|(name, _)| name).collect();
        assert_eq!(names, ["A", "MOVE", "Z"]);
        let defined: Vec<&str> = Named::iter_defined_names().map(|(n, _)| n).collect();
        assert_eq!(defined, ["A", "B", "MOVE", "Z"]);
        let each: Vec<Named> = s.into_iter().collect();
        assert_eq!(each, [Named::A, Named::MOVE, Named::Z]);
        assert_eq!(each.into_iter().collect::<Named>(), s);
    }

    #[test]
    fn the_empty_set_is_empty_text() {
        assert_eq!(Named::empty().to_string(), "");
        assert_eq!(format!("{:?}", Named::empty()), "Named()");
        assert_eq!("".parse::<Named>().unwrap(), Named::empty());
        assert_eq!("  ".parse::<Named>().unwrap(), Named::empty());
        assert_eq!(Named::default(), Named::empty());
        assert!(Named::empty().is_empty() && Named::empty().len() == 0);
    }

    #[test]
    fn bits_past_the_named_ones_are_written_in_hex_and_read_back() {
        let s = Named::from_bits_retain(bits(&[1, 64, 127]));
        assert_eq!(s.to_string(), "B | 0x80000000000000010000000000000000");
        assert_eq!(s.to_string().parse::<Named>().unwrap(), s);
        let low = Named::from_bits_retain(bits(&[3, 100]));
        assert_eq!(low.to_string(), "Z | 0x8", "no leading zeros");
        assert_eq!("Z | 0x0008".parse::<Named>().unwrap(), low);
        assert!(low.contains_unknown_bits());
        assert_eq!(Named::from_bits_truncate(low.bits()), Named::Z);
        assert_eq!(Named::from_bits(low.bits()), None);
    }

    #[test]
    fn hex_text_past_the_width_or_not_hex_is_refused() {
        use bitflags::parser::ParseHex;
        let parse = <ComponentBits<2> as ParseHex>::parse_hex;
        assert_eq!(parse("0").unwrap(), ComponentBits::EMPTY);
        assert_eq!(parse(&"f".repeat(32)).unwrap(), !ComponentBits::EMPTY);
        assert_eq!(
            parse(&format!("000{}", "f".repeat(32))).unwrap(),
            !ComponentBits::EMPTY,
            "leading zeros do not count"
        );
        assert_eq!(parse("1aB").unwrap(), ComponentBits::from_words([0x1ab, 0]));
        for bad in [
            "",
            "1".repeat(33).as_str(),
            "+1",
            "-1",
            "0x1",
            "1 2",
            "g",
            "é",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!("A | 0x".parse::<Named>().is_err());
    }

    #[test]
    fn hex_text_round_trips_for_every_width() {
        use bitflags::parser::{ParseHex, WriteHex};
        fn round_trip<const W: usize>(set: ComponentBits<W>) {
            let mut text = String::new();
            set.write_hex(&mut text).unwrap();
            assert!(text == "0" || !text.starts_with('0'), "{text}");
            assert_eq!(ComponentBits::<W>::parse_hex(&text).unwrap(), set, "{text}");
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            round_trip(ComponentBits::<1>::from_words([x]));
            round_trip(ComponentBits::<3>::from_words([x, 0, x >> (x % 64)]));
            round_trip(ComponentBits::<16>::first((x % 1025) as u32));
        }
        round_trip(ComponentBits::<4>::EMPTY);
    }

    #[test]
    fn the_named_set_operators_are_bitflags_set_operations() {
        let (a, z) = (Named::A | Named::B, Named::B | Named::Z);
        assert_eq!(a & z, Named::B);
        assert_eq!(a ^ z, Named::A | Named::Z);
        assert_eq!(a - z, Named::A);
        assert_eq!(
            !a,
            Named::MOVE | Named::Z,
            "the complement stays within the names"
        );
        assert_eq!(!Named::empty(), Named::all());
        let mut m = a;
        m |= Named::Z;
        assert_eq!(m, Named::all() - Named::MOVE);
        m &= z;
        assert_eq!(m, z);
        m ^= Named::Z;
        assert_eq!(m, Named::B);
        m -= Named::B;
        assert!(m.is_empty());
        assert!(a.contains(Named::A) && !a.contains(z) && a.intersects(z));
        assert_eq!(Named::all().len(), 4, "every declared component, no more");
        assert_eq!(Named::all().bits(), bits(&[0, 1, 2, 100]));
        assert_eq!(
            Named::from_bits_truncate(ComponentBits::first(128)),
            Named::all()
        );
    }

    #[test]
    fn component_bits_operators() {
        let (a, b) = (bits(&[1, 70]), bits(&[70, 100]));
        assert_eq!(a | b, a.union(b));
        assert_eq!(a & b, bits(&[70]));
        assert_eq!(a ^ b, bits(&[1, 100]));
        assert_eq!((!a).len(), 126);
        assert_eq!(!!a, a);
        assert_eq!(
            <ComponentBits<2> as bitflags::Bits>::ALL,
            !ComponentBits::EMPTY
        );
    }
}
