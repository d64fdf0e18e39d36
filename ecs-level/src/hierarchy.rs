//! The parent forest: every entity's depth, computed without recursion, refusing an out-of-range
//! parent and a cycle (bevy #4717: a cycle in a hierarchy overflowed the stack).

use super::error::LevelError;
use super::format::ROOT;

const UNSET: u32 = u32::MAX;
const VISITING: u32 = u32::MAX - 1;

/// Depth of every entity (0 for a root) given `parent(i)` for `i in 0..n`, in O(n) time whatever
/// the depth (each entity is walked at most twice), with one `Vec<u32>` of `n` entries and no
/// recursion. Errors: [`LevelError::ParentOutOfRange`] and [`LevelError::ParentCycle`] (a
/// self-parent is a cycle of one), which names the cycle's entities.
pub(crate) fn depths(n: u32, parent: impl Fn(u32) -> u32) -> Result<Vec<u32>, LevelError> {
    let mut depth = vec![UNSET; n as usize];
    for start in 0..n {
        if depth[start as usize] != UNSET {
            continue;
        }
        // Walk up, marking the path, until a root, an entity of known depth, or the path itself.
        let mut len: u32 = 0;
        let mut j = start;
        let base = loop {
            match depth[j as usize] {
                UNSET => {
                    depth[j as usize] = VISITING;
                    len += 1;
                    let p = parent(j);
                    if p == ROOT {
                        break 0;
                    }
                    if p >= n {
                        return Err(LevelError::ParentOutOfRange {
                            entity: j,
                            parent: p,
                            num_entities: n,
                        });
                    }
                    j = p;
                }
                VISITING => return Err(cycle_at(j, &parent)),
                // The path hangs below an entity of depth d: its topmost entity has depth d + 1.
                d => break d + 1,
            }
        };
        // Walk the path again, top of the path gets `base`, `start` gets `base + len - 1`.
        let mut j = start;
        for k in 0..len {
            depth[j as usize] = base + (len - 1 - k);
            j = parent(j);
        }
    }
    Ok(depth)
}

/// The cycle that `entity` lies on, followed once around (the error of a cycle).
fn cycle_at(entity: u32, parent: impl Fn(u32) -> u32) -> LevelError {
    let mut cycle = vec![entity];
    let mut len = 1u32;
    let mut j = parent(entity);
    while j != entity {
        if cycle.len() < LevelError::CYCLE_SHOWN {
            cycle.push(j);
        }
        len += 1;
        j = parent(j);
    }
    LevelError::ParentCycle { entity, cycle, len }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(parents: &[u32]) -> Result<Vec<u32>, LevelError> {
        depths(parents.len() as u32, |i| parents[i as usize])
    }

    #[test]
    fn seed_example() {
        // Bitsquid's {UINT_MAX, 0, 1, 1, 2}: A - B - C - E, B - D.
        assert_eq!(run(&[ROOT, 0, 1, 1, 2]).unwrap(), [0, 1, 2, 2, 3]);
    }

    #[test]
    fn children_before_parents() {
        assert_eq!(run(&[1, 2, ROOT, 0]).unwrap(), [2, 1, 0, 3]);
    }

    #[test]
    fn cycles_and_ranges() {
        assert_eq!(
            run(&[0]),
            Err(LevelError::ParentCycle {
                entity: 0,
                cycle: vec![0],
                len: 1
            })
        );
        let err = run(&[ROOT, 2, 3, 1]).unwrap_err();
        assert_eq!(
            err,
            LevelError::ParentCycle {
                entity: 1,
                cycle: vec![1, 2, 3],
                len: 3
            }
        );
        assert_eq!(
            err.to_string(),
            "the parent chain from entity 1 comes back to it: the hierarchy has a cycle \
             (1 -> 2 -> 3 -> 1)"
        );
        assert_eq!(
            run(&[ROOT, 7]),
            Err(LevelError::ParentOutOfRange {
                entity: 1,
                parent: 7,
                num_entities: 2
            })
        );
    }

    /// A cycle of a million entities below a chain: refused, naming its first entities.
    #[test]
    fn a_long_cycle_is_named_by_its_first_entities() {
        let n: u32 = if cfg!(miri) { 100 } else { 1_000_000 };
        // 0 <- 1 <- ... <- n-1, and 0's parent is n-1.
        let parents: Vec<u32> = (0..n).map(|i| if i == 0 { n - 1 } else { i - 1 }).collect();
        let LevelError::ParentCycle { entity, cycle, len } = run(&parents).unwrap_err() else {
            panic!("a cycle")
        };
        assert_eq!((entity, len), (0, n));
        assert_eq!(cycle, [0, n - 1, n - 2, n - 3, n - 4, n - 5, n - 6, n - 7]);
        let shown: String = cycle.iter().map(|e| format!("{e} -> ")).collect();
        let text = LevelError::ParentCycle { entity, cycle, len }.to_string();
        assert!(
            text.ends_with(&format!("({shown}… -> 0, {n} entities)")),
            "{text}"
        );
    }

    #[test]
    fn long_chain_has_no_recursion() {
        let n = if cfg!(miri) { 1_000 } else { 200_000 };
        let parents: Vec<u32> = (0..n).map(|i| if i == 0 { ROOT } else { i - 1 }).collect();
        let d = run(&parents).unwrap();
        assert_eq!(d[n as usize - 1], n - 1);
        let reversed: Vec<u32> = (0..n)
            .map(|i| if i == n - 1 { ROOT } else { i + 1 })
            .collect();
        assert_eq!(run(&reversed).unwrap()[0], n - 1);
    }
}
