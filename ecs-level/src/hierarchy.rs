//! The parent forest: every entity's depth, computed without recursion, refusing an out-of-range
//! parent and a cycle (bevy #4717: a cycle in a hierarchy overflowed the stack).

use super::error::LevelError;
use super::format::ROOT;
#[cfg(not(feature = "transform"))]
use super::{entities::LocalTransform, verify::VerifiedLevel};

const UNSET: u32 = u32::MAX;
const VISITING: u32 = u32::MAX - 1;

/// Depth of every entity (0 for a root) given `parent(i)` for `i in 0..n`, in O(n) time with one
/// `Vec<u32>` of `n` entries and no recursion. Errors: [`LevelError::ParentOutOfRange`] and
/// [`LevelError::ParentCycle`] (a self-parent is a cycle of one).
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
                VISITING => return Err(LevelError::ParentCycle { entity: j }),
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

/// The first entity of `level` in a hierarchy (one with a parent or a `local_transform`), if
/// any: without the `transform` feature a spawn has nowhere to put it, so it refuses the level
/// instead of dropping the hierarchy.
#[cfg(not(feature = "transform"))]
pub(crate) fn first_in_hierarchy<B: AsRef<[u8]> + ?Sized>(
    level: &VerifiedLevel<'_, B>,
) -> Option<u32> {
    let parented = level.parents().position(|p| p.is_some()).map(|e| e as u32);
    let local = level
        .registry()
        .by_type::<LocalTransform>()
        .and_then(|r| level.component(r.name()))
        .and_then(|d| d.entity_indices().next());
    parented.into_iter().chain(local).min()
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
        assert_eq!(run(&[0]), Err(LevelError::ParentCycle { entity: 0 }));
        assert!(matches!(
            run(&[ROOT, 2, 3, 1]),
            Err(LevelError::ParentCycle { .. })
        ));
        assert_eq!(
            run(&[ROOT, 7]),
            Err(LevelError::ParentOutOfRange {
                entity: 1,
                parent: 7,
                num_entities: 2
            })
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

/// Without the `transform` feature, a level with a hierarchy is found and refused with
/// [`LevelError::NeedsTransform`]; one without is not.
#[cfg(all(test, not(feature = "transform")))]
mod without_transform {
    use super::first_in_hierarchy;
    use crate::level::{
        verify, AnySet, EntityCompiler, LevelError, Registration, Registry, VerifyOptions,
    };

    fn first(json: &str) -> Option<u32> {
        let registry = Registry::new([
            Registration::pod::<u32>("p"),
            Registration::local_transform(),
        ])
        .unwrap();
        let blob = EntityCompiler::new(&registry).compile_str(json).unwrap();
        let level = verify(
            &blob[..],
            &registry,
            AnySet::default(),
            &VerifyOptions::default(),
        )
        .unwrap();
        first_in_hierarchy(&level)
    }

    #[test]
    fn parents_and_local_transforms_make_a_hierarchy() {
        let flat = r#"{"entities": [{"components": {"p": 1}}, {"components": {"p": 2}}]}"#;
        assert_eq!(first(flat), None);
        let parented = r#"{"entities": [
            {"components": {"p": 1}}, {"components": {"p": 2}}, {"parent": 1, "components": {}}
        ]}"#;
        assert_eq!(first(parented), Some(2));
        let local = r#"{"entities": [
            {"components": {"p": 1}},
            {"components": {"local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 5,0,0,1]}}
        ]}"#;
        assert_eq!(first(local), Some(1));
    }

    #[test]
    fn the_error_names_the_feature() {
        let text = LevelError::NeedsTransform { entity: 2 }.to_string();
        assert_eq!(
            text,
            "the level has a hierarchy (entity 2 has a parent or a `local_transform`), and \
             spawning one needs sigecs's `transform` feature: enable it, or pass a spawner that \
             takes `local_transform`"
        );
    }
}
