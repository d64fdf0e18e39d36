//! Two rules the build script and the runtime must agree on, written once. This file is part of
//! ecs-core and is also compiled into ecs-codegen through `#[path]` (the build-time crate must
//! not depend on the runtime), so it depends on nothing.
//!
//! - [`matches`]: which stores a system (at build time) or a query (at run time) visits.
//! - [`Borrows::conflicts`]: when two sets of component borrows alias — two systems that must
//!   not share a stage, or two elements of one query.

// Each crate uses the part it needs.
#![allow(dead_code)]

/// Does a store whose component set is `mask` match a system or query that needs every
/// component of `required` and none of `excluded` (bit `i` is component `i`)?
#[inline]
pub(crate) const fn matches(mask: u128, required: u128, excluded: u128) -> bool {
    mask & required == required && mask & excluded == 0
}

/// Shared and exclusive borrows of components: bit `i` is component `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Borrows {
    /// Components borrowed shared (`&C`, `Option<&C>`).
    pub(crate) reads: u128,
    /// Components borrowed exclusively (`&mut C`, `Option<&mut C>`).
    pub(crate) writes: u128,
}

impl Borrows {
    /// One borrow of component `id`.
    #[inline]
    pub(crate) const fn of(id: u32, mutable: bool) -> Borrows {
        let bit = 1u128 << id;
        if mutable {
            Borrows {
                reads: 0,
                writes: bit,
            }
        } else {
            Borrows {
                reads: bit,
                writes: 0,
            }
        }
    }

    /// Do the two alias: does one write a component the other reads or writes?
    #[inline]
    pub(crate) const fn conflicts(&self, other: &Borrows) -> bool {
        self.writes & (other.reads | other.writes) != 0
            || other.writes & (self.reads | self.writes) != 0
    }

    /// Both sets of borrows.
    #[inline]
    pub(crate) const fn union(&self, other: &Borrows) -> Borrows {
        Borrows {
            reads: self.reads | other.reads,
            writes: self.writes | other.writes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_matches_when_it_has_every_required_and_no_excluded_component() {
        assert!(matches(0b0111, 0b0011, 0b1000));
        assert!(!matches(0b0101, 0b0011, 0), "lacks a required component");
        assert!(
            !matches(0b1011, 0b0011, 0b1000),
            "has an excluded component"
        );
        assert!(matches(0b0001, 0, 0), "nothing required: every store");
    }

    #[test]
    fn borrows_alias_only_when_one_side_writes() {
        let (r0, w0, r1) = (
            Borrows::of(0, false),
            Borrows::of(0, true),
            Borrows::of(1, false),
        );
        assert!(!r0.conflicts(&r0), "two reads share");
        assert!(
            r0.conflicts(&w0) && w0.conflicts(&r0),
            "read and write alias, both ways"
        );
        assert!(w0.conflicts(&w0));
        assert!(!w0.conflicts(&r1), "different components");
        let both = r0.union(&Borrows::of(1, true));
        assert_eq!(
            both,
            Borrows {
                reads: 1,
                writes: 2
            }
        );
        assert!(both.conflicts(&r1) && !both.conflicts(&r0));
    }
}
