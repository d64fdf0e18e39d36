//! # ecs-rules: the rules sigecs's build script and runtime share
//!
//! Two rules the build-time generator (`ecs-codegen`) and the runtime (`ecs-core`) must agree
//! on, written once in a crate both depend on, so that a system matched to stores at build time
//! and a query matched at run time cannot disagree. It depends on nothing (the build-time crate
//! must not depend on the runtime). It is an implementation detail of sigecs: use sigecs through
//! `ecs-core`.
//!
//! - [`matches()`]: which stores a system (at build time) or a query (at run time) visits.
//! - [`Borrows::conflicts`]: when two sets of component borrows alias — two systems that must
//!   not share a stage, or two elements of one query.
//!
//! ```
//! use ecs_rules::{matches, Borrows};
//! // A store holding components 0, 1 and 2 is visited by a query needing 0 and 1 without 3.
//! assert!(matches(0b0111, 0b0011, 0b1000));
//! // `&mut C0` and `&C0` alias; two `&C0` do not.
//! assert!(Borrows::of(0, true).conflicts(&Borrows::of(0, false)));
//! assert!(!Borrows::of(0, false).conflicts(&Borrows::of(0, false)));
//! ```

#![no_std]

/// Does a store whose component set is `mask` match a system or query that needs every
/// component of `required` and none of `excluded` (bit `i` is component `i`)?
#[inline]
pub const fn matches(mask: u128, required: u128, excluded: u128) -> bool {
    mask & required == required && mask & excluded == 0
}

/// Shared and exclusive borrows of components: bit `i` is component `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Borrows {
    /// Components borrowed shared (`&C`, `Option<&C>`).
    pub reads: u128,
    /// Components borrowed exclusively (`&mut C`, `Option<&mut C>`).
    pub writes: u128,
}

impl Borrows {
    /// One borrow of component `id`.
    #[inline]
    pub const fn of(id: u32, mutable: bool) -> Borrows {
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
    pub const fn conflicts(&self, other: &Borrows) -> bool {
        self.writes & (other.reads | other.writes) != 0
            || other.writes & (self.reads | self.writes) != 0
    }

    /// Both sets of borrows.
    #[inline]
    pub const fn union(&self, other: &Borrows) -> Borrows {
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
