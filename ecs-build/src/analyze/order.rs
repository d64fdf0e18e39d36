//! The order `run_all` runs systems in: declaration order, with each system that declares
//! `after(..)` or `before(..)` moved as far as its constraints require and no further, and
//! every other system left in its declared place.
//!
//! The rule. Each system has a key `(k, i)`: `i` is its declaration index, and `k` the smallest
//! declaration index among the system itself and the systems it is declared `before`, directly
//! or through their own `before(..)`. The run order is the valid order (every `after`/`before`
//! holds) that is lexicographically smallest by key: at each step, of the systems whose
//! predecessors have all run, the one with the smallest key runs next. So `before(x)` moves a
//! system up to just before `x` (its key is `x`'s), `after(x)` keeps it waiting until `x` has
//! run (it runs at the first step after `x` where its key is the smallest), and a system that
//! declares neither keeps its place: its key is its own index, and the systems around it keep
//! theirs.

/// The run order of systems given in declaration order, from the constraints each declares:
/// `after[i]` and `before[i]` hold the indices system `i` names in its `after(..)` and
/// `before(..)`. `Err` holds a cycle of the constraints instead, in run order (each system
/// waits for the one before it, the last for the first), from its first declared system.
pub fn run_order(after: &[Vec<usize>], before: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let n = after.len();
    // `waits[i]`: the systems that must run before system i.
    let mut waits: Vec<Vec<usize>> = after.to_vec();
    for (i, targets) in before.iter().enumerate() {
        for &t in targets {
            waits[t].push(i);
        }
    }
    let key = keys(before);
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let ready = (0..n).filter(|&i| !placed[i] && waits[i].iter().all(|&j| placed[j]));
        match ready.min_by_key(|&i| (key[i], i)) {
            Some(i) => {
                placed[i] = true;
                order.push(i);
            }
            None => return Err(cycle(&waits, &placed)),
        }
    }
    Ok(order)
}

/// Each system's `k`: the smallest declaration index among itself and the systems it is
/// declared `before`, directly or transitively. Keys only fall, so this ends (also on a cycle,
/// which [`run_order`] reports).
fn keys(before: &[Vec<usize>]) -> Vec<usize> {
    let mut key: Vec<usize> = (0..before.len()).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (i, targets) in before.iter().enumerate() {
            for &t in targets {
                if key[t] < key[i] {
                    key[i] = key[t];
                    changed = true;
                }
            }
        }
    }
    key
}

/// A cycle among the systems not `placed`, every one of which waits for another one of them.
fn cycle(waits: &[Vec<usize>], placed: &[bool]) -> Vec<usize> {
    let start = (0..placed.len())
        .find(|&i| !placed[i])
        .expect("a system is left");
    let mut cycle = vec![start];
    let mut at = start;
    loop {
        at = *waits[at]
            .iter()
            .find(|&&j| !placed[j])
            .expect("it waits for one");
        if let Some(k) = cycle.iter().position(|&c| c == at) {
            cycle.drain(..k);
            break;
        }
        cycle.push(at);
    }
    // In run order (each waits for the one before it), from its first declared.
    cycle.reverse();
    let k = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
    cycle.rotate_left(k);
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Systems `0..n` with `(system, "after" | "before", other)` constraints.
    fn constraints(n: usize, list: &[(usize, &str, usize)]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let (mut after, mut before) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for &(s, kind, other) in list {
            match kind {
                "after" => after[s].push(other),
                _ => before[s].push(other),
            }
        }
        (after, before)
    }

    fn order(n: usize, list: &[(usize, &str, usize)]) -> Result<Vec<usize>, Vec<usize>> {
        let (after, before) = constraints(n, list);
        run_order(&after, &before)
    }

    #[test]
    fn a_constraint_moves_the_system_that_declares_it() {
        // first, second, third, hoisted(before(first)).
        assert_eq!(order(4, &[(3, "before", 0)]), Ok(vec![3, 0, 1, 2]));
        // a(after(c)), b, c, d: `a` moves down to just after `c`.
        assert_eq!(order(4, &[(0, "after", 2)]), Ok(vec![1, 2, 0, 3]));
        // a, b, c, d(before(b)): `d` moves up to just before `b`.
        assert_eq!(order(4, &[(3, "before", 1)]), Ok(vec![0, 3, 1, 2]));
        // A chain of `before`s moves together: e before d before a.
        assert_eq!(
            order(5, &[(3, "before", 0), (4, "before", 3)]),
            Ok(vec![4, 3, 0, 1, 2])
        );
        // No constraint: declaration order.
        assert_eq!(order(3, &[]), Ok(vec![0, 1, 2]));
        // A cycle, from its first declared system, in run order.
        assert_eq!(
            order(3, &[(0, "after", 2), (1, "after", 0), (2, "after", 1)]),
            Err(vec![0, 1, 2])
        );
        assert_eq!(
            order(2, &[(0, "before", 1), (0, "after", 1)]),
            Err(vec![0, 1])
        );
    }

    /// A small deterministic generator (xorshift), so a failure is reproducible by its seed.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Every permutation of `0..n`, by Heap's algorithm.
    fn permutations(n: usize) -> Vec<Vec<usize>> {
        fn heap(k: usize, items: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if k <= 1 {
                out.push(items.clone());
                return;
            }
            for i in 0..k {
                heap(k - 1, items, out);
                let j = if k.is_multiple_of(2) { i } else { 0 };
                items.swap(j, k - 1);
            }
        }
        let mut out = Vec::new();
        heap(n, &mut (0..n).collect(), &mut out);
        out
    }

    /// The rule of the module docs, by brute force: every permutation that keeps every
    /// constraint, compared by its sequence of keys, each key computed from the transitive
    /// closure of the `before` declarations.
    fn oracle(after: &[Vec<usize>], before: &[Vec<usize>]) -> Option<Vec<usize>> {
        let n = after.len();
        let mut reach = vec![vec![false; n]; n];
        for (i, targets) in before.iter().enumerate() {
            reach[i][i] = true;
            for &t in targets {
                reach[i][t] = true;
            }
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    reach[i][j] |= reach[i][k] && reach[k][j];
                }
            }
        }
        let key = |i: usize| ((0..n).filter(|&j| reach[i][j]).min().unwrap(), i);
        permutations(n)
            .into_iter()
            .filter(|p| {
                let pos = |s: usize| p.iter().position(|&x| x == s).unwrap();
                (0..n).all(|i| {
                    after[i].iter().all(|&a| pos(a) < pos(i))
                        && before[i].iter().all(|&b| pos(i) < pos(b))
                })
            })
            .min_by_key(|p| p.iter().map(|&i| key(i)).collect::<Vec<_>>())
    }

    #[test]
    fn the_order_is_the_smallest_valid_one_by_key_on_random_graphs() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut cycles = 0;
        for case in 0..1500 {
            let n = 1 + rng.below(7);
            let (mut after, mut before) = (vec![Vec::new(); n], vec![Vec::new(); n]);
            for _ in 0..rng.below(n + 2) {
                let (s, other) = (rng.below(n), rng.below(n));
                if s != other {
                    let list = if rng.below(2) == 0 {
                        &mut after
                    } else {
                        &mut before
                    };
                    list[s].push(other);
                }
            }
            let got = run_order(&after, &before);
            match oracle(&after, &before) {
                Some(want) => assert_eq!(got, Ok(want), "case {case}: {after:?} {before:?}"),
                None => {
                    cycles += 1;
                    let cycle = got.expect_err("no valid order: a cycle");
                    // Each waits for the one before it (and the first for the last).
                    for (k, &s) in cycle.iter().enumerate() {
                        let prev = cycle[(k + cycle.len() - 1) % cycle.len()];
                        assert!(
                            after[s].contains(&prev) || before[prev].contains(&s),
                            "case {case}: {cycle:?} is not a cycle of {after:?} {before:?}"
                        );
                    }
                }
            }
        }
        assert!(
            cycles > 50 && cycles < 1000,
            "both kinds of case: {cycles} cycles"
        );
    }
}
