//! # sigecs-rules: the rules sigecs's build script and runtime share
//!
//! Two rules the build-time generator (`sigecs-build`) and the runtime (`sigecs`) must agree
//! on, written once in a crate both depend on, so that a system matched to stores at build time
//! and a query matched at run time cannot disagree. It depends on nothing (the build-time crate
//! must not depend on the runtime). It is an implementation detail of sigecs: use sigecs through
//! `sigecs`.
//!
//! A component set is a slice of 64-bit words: bit `i % 64` of word `i / 64` is component `i`,
//! and a word past the end of a slice is zero, so sets of different widths compare as sets. The
//! runtime passes fixed-size arrays (its loops unroll), the generator vectors as wide as the
//! world needs: no width is fixed here.
//!
//! - [`matches()`]: which stores a system (at build time) or a query (at run time) visits.
//! - [`Borrows::conflicts`]: when two sets of component borrows alias — two systems that must
//!   not share a stage, or two elements of one query.
//! - [`snake_case()`] and [`is_keyword`]: how a type's name becomes a field's (the generated
//!   `Resources` struct's fields, the runtime's suggested `#[derive(Signature)]` declarations).
//! - [`constant_case()`]: how a component's name becomes its constant in the world's
//!   `ComponentSet` (`HTTPServer` → `HTTP_SERVER`).
//!
//! ```
//! use sigecs_rules::{matches, Borrows};
//! // A store holding components 0, 1 and 2 is visited by a query needing 0 and 1 without 3.
//! assert!(matches(&[0b0111], &[0b0011], &[0b1000]));
//! // Component 64 is bit 0 of the second word.
//! assert!(!matches(&[0b0111], &[0, 1], &[]));
//! // `&mut C0` and `&C0` alias; two `&C0` do not.
//! let (read, write) = (Borrows { reads: [1], writes: [0] }, Borrows { reads: [0], writes: [1] });
//! assert!(read.conflicts(&write));
//! assert!(!read.conflicts(&read));
//! ```

#![no_std]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

/// Word `i` of a set, zero past its end.
#[inline]
fn word(set: &[u64], i: usize) -> u64 {
    set.get(i).copied().unwrap_or(0)
}

/// Do two sets share no component?
#[inline]
pub fn disjoint(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x & y == 0)
}

/// Does a store whose component set is `mask` match a system or query that needs every
/// component of `required` and none of `excluded`?
#[inline]
pub fn matches(mask: &[u64], required: &[u64], excluded: &[u64]) -> bool {
    required
        .iter()
        .enumerate()
        .all(|(i, &r)| word(mask, i) & r == r)
        && disjoint(mask, excluded)
}

/// Shared and exclusive borrows of components, as two component sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Borrows<S> {
    /// Components borrowed shared (`&C`, `Option<&C>`).
    pub reads: S,
    /// Components borrowed exclusively (`&mut C`, `Option<&mut C>`).
    pub writes: S,
}

impl<S: AsRef<[u64]>> Borrows<S> {
    /// Do the two alias: does one write a component the other reads or writes?
    #[inline]
    pub fn conflicts<T: AsRef<[u64]>>(&self, other: &Borrows<T>) -> bool {
        let (r, w) = (self.reads.as_ref(), self.writes.as_ref());
        let (or, ow) = (other.reads.as_ref(), other.writes.as_ref());
        !(disjoint(w, or) && disjoint(w, ow) && disjoint(ow, r))
    }
}

/// A type's name as a field's: `PointMass` → `point_mass`, `ABZst` → `ab_zst`, `HTTPServer` →
/// `http_server`, `Vec3Data` → `vec3_data`. A word starts at an uppercase letter that follows a
/// lowercase letter or a digit, or that precedes a lowercase letter after an uppercase run; a
/// leading `r#` goes.
pub fn snake_case(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &ch) in chars.iter().enumerate() {
        if ch.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.extend(ch.to_lowercase());
    }
    out
}

/// A type's name as a constant's: [`snake_case()`] in uppercase. `PointMass` → `POINT_MASS`,
/// `HTTPServer` → `HTTP_SERVER`, `r#Type` → `TYPE`. Never a keyword (keywords are lowercase or
/// `Self`), so a constant needs no `r#`.
pub fn constant_case(name: &str) -> String {
    snake_case(name).to_uppercase()
}

/// True for words that cannot be an identifier (strict and reserved keywords, any edition).
pub fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
            | "union"
            | "_"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("PointMass"), "point_mass");
        assert_eq!(snake_case("Time"), "time");
        assert_eq!(snake_case("A"), "a");
        assert_eq!(snake_case("AB"), "ab");
        assert_eq!(snake_case("ABZst"), "ab_zst");
        assert_eq!(snake_case("ACounted"), "a_counted");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("Vec3Data"), "vec3_data");
        assert_eq!(snake_case("r#Type"), "type");
        assert_eq!(snake_case("PointXY"), "point_xy", "a run ending the name");
        assert_eq!(snake_case("Body2D"), "body2_d");
    }

    #[test]
    fn constant_case_names() {
        assert_eq!(constant_case("Position"), "POSITION");
        assert_eq!(constant_case("PointMass"), "POINT_MASS");
        assert_eq!(constant_case("HTTPServer"), "HTTP_SERVER");
        assert_eq!(
            constant_case("HttpServer"),
            "HTTP_SERVER",
            "collides with the one above"
        );
        assert_eq!(constant_case("Vec3Data"), "VEC3_DATA");
        assert_eq!(constant_case("W000"), "W000");
        assert_eq!(
            constant_case("r#move"),
            "MOVE",
            "no `r#`: not a keyword in uppercase"
        );
        assert_eq!(constant_case("r#Type"), "TYPE");
        for k in ["Self", "self", "move", "type", "crate"] {
            assert!(!is_keyword(&constant_case(k)), "{k}");
        }
    }

    #[test]
    fn keywords_are_keywords() {
        for k in [
            "crate", "box", "move", "type", "match", "self", "Self", "async", "gen",
        ] {
            assert!(is_keyword(k), "{k}");
        }
        assert!(!is_keyword("time") && !is_keyword("matches"));
    }

    /// Converting twice changes nothing, and the result is lowercase.
    #[test]
    fn snake_case_is_idempotent() {
        for name in [
            "HTTPServer",
            "PointMass",
            "ABZst",
            "Body2D",
            "LocalTransform",
            "X",
            "IOError",
        ] {
            let once = snake_case(name);
            assert_eq!(snake_case(&once), once, "{name}");
            assert_eq!(once, once.to_lowercase(), "{name}");
        }
        assert_eq!(snake_case("IOError"), "io_error");
        assert_eq!(snake_case("LocalTransform"), "local_transform");
    }

    #[test]
    fn a_store_matches_when_it_has_every_required_and_no_excluded_component() {
        assert!(matches(&[0b0111], &[0b0011], &[0b1000]));
        assert!(
            !matches(&[0b0101], &[0b0011], &[]),
            "lacks a required component"
        );
        assert!(
            !matches(&[0b1011], &[0b0011], &[0b1000]),
            "has an excluded component"
        );
        assert!(
            matches(&[0b0001], &[], &[]),
            "nothing required: every store"
        );
    }

    #[test]
    fn words_past_the_end_are_empty() {
        // Component 64 (word 1, bit 0) required of a one-word set: missing.
        assert!(!matches(&[1], &[0, 1], &[]));
        assert!(matches(&[1, 1], &[0, 1], &[]));
        // A zero word of the requirement beyond the mask asks for nothing.
        assert!(matches(&[1], &[1, 0, 0], &[]));
        // Exclusions beyond the mask's words exclude nothing it has.
        assert!(matches(&[1], &[1], &[0, 1]));
        assert!(!matches(&[1, 1], &[1], &[0, 1]));
        // Component 1000: word 15, bit 40.
        let mut wide = [0u64; 16];
        wide[15] = 1 << 40;
        assert!(matches(&wide, &wide, &[1]));
        assert!(!matches(&wide, &[0; 1], &wide));
    }

    #[test]
    fn borrows_alias_only_when_one_side_writes() {
        let b = |reads: u64, writes: u64| Borrows {
            reads: [reads, 0],
            writes: [writes, 0],
        };
        let (r0, w0, r1) = (b(1, 0), b(0, 1), b(2, 0));
        assert!(!r0.conflicts(&r0), "two reads share");
        assert!(
            r0.conflicts(&w0) && w0.conflicts(&r0),
            "read and write alias, both ways"
        );
        assert!(w0.conflicts(&w0));
        assert!(!w0.conflicts(&r1), "different components");
        let both = b(1, 2);
        assert!(both.conflicts(&r1) && !both.conflicts(&r0));
        // Different widths: a write of component 64 against a one-word read set.
        let wide = Borrows {
            reads: [0u64, 0],
            writes: [0u64, 1],
        };
        assert!(!wide.conflicts(&Borrows {
            reads: [u64::MAX, 0],
            writes: [0, 0]
        }));
        assert!(!wide.conflicts(&Borrows {
            reads: [0u64, 0, 1],
            writes: [0u64, 0, 1]
        }));
        assert!(wide.conflicts(&Borrows {
            reads: [0u64, 0, 0],
            writes: [0u64, 1, 0]
        }));
        assert!(wide.conflicts(&Borrows {
            reads: &[0u64, 1][..],
            writes: &[][..]
        }));
    }
}
