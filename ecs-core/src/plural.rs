//! Counts in messages, with the noun that agrees: `1 entity`, `2 entities`, `0 moves`.

use std::fmt;

/// A count and its noun, displayed as `"{n} {noun}"` ([`count`]).
pub(crate) struct Count<'a> {
    n: usize,
    noun: &'a str,
}

/// `n` with `one` when it is 1, else with `many`.
pub(crate) fn count<'a>(n: usize, one: &'a str, many: &'a str) -> Count<'a> {
    Count {
        n,
        noun: if n == 1 { one } else { many },
    }
}

impl fmt::Display for Count<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.n, self.noun)
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "entity", "entities").to_string(), "1 entity");
        assert_eq!(count(0, "entity", "entities").to_string(), "0 entities");
        assert_eq!(count(2, "move", "moves").to_string(), "2 moves");
    }
}
