//! The conflict analysis behind the schedule agrees with a naive oracle: two systems conflict
//! exactly when some component or resource is used by both and written by at least one, in
//! whatever order the parameters are written.

use super::{place_in_stages, Access, Param};
use proptest::prelude::*;

fn param() -> impl Strategy<Value = Param> {
    prop_oneof![
        (0usize..6, any::<bool>(), any::<bool>()).prop_map(|(id, mutable, optional)| {
            Param::Component {
                id,
                mutable,
                optional,
            }
        }),
        (0usize..3, any::<bool>()).prop_map(|(id, mutable)| Param::Resource { id, mutable }),
        Just(Param::Entity),
        Just(Param::Commands),
    ]
}

/// (is a resource, id, writes) for every borrowing parameter.
fn borrows(params: &[Param]) -> Vec<(bool, usize, bool)> {
    params
        .iter()
        .filter_map(|p| match *p {
            Param::Component { id, mutable, .. } => Some((false, id, mutable)),
            Param::Resource { id, mutable } => Some((true, id, mutable)),
            _ => None,
        })
        .collect()
}

fn oracle(a: &[Param], b: &[Param]) -> bool {
    borrows(a).iter().any(|&(ra, ia, wa)| {
        borrows(b)
            .iter()
            .any(|&(rb, ib, wb)| ra == rb && ia == ib && (wa || wb))
    })
}

proptest! {
    #[test]
    fn conflicts_match_the_oracle_in_any_parameter_order(
        a in prop::collection::vec(param(), 0..6),
        b in prop::collection::vec(param(), 0..6),
        seed in any::<u64>(),
    ) {
        let expected = oracle(&a, &b);
        prop_assert_eq!(Access::of(&a).conflicts(&Access::of(&b)), expected);
        prop_assert_eq!(Access::of(&b).conflicts(&Access::of(&a)), expected, "symmetric");
        // Reversed and rotated parameter lists give the same answer.
        let mut ra = a.clone();
        ra.reverse();
        let mut rb = b.clone();
        if !rb.is_empty() {
            let k = (seed as usize) % rb.len();
            rb.rotate_left(k);
        }
        prop_assert_eq!(Access::of(&ra).conflicts(&Access::of(&rb)), expected);
    }

    #[test]
    fn stages_give_declaration_order(systems in prop::collection::vec(prop::collection::vec(param(), 1..5), 1..10)) {
        let access: Vec<Access> = systems.iter().map(|p| Access::of(p)).collect();
        let stage = place_in_stages(&access);
        let commands = |i: usize| systems[i].contains(&Param::Commands);
        let writes_resource = |i: usize| systems[i].iter().any(|p| matches!(p, Param::Resource { mutable: true, .. }));
        // A resource writer, or a frame-level system (no component or entity parameter).
        let alone = |i: usize| {
            writes_resource(i)
                || !systems[i].iter().any(|p| matches!(p, Param::Entity | Param::Component { .. }))
        };
        for i in 0..systems.len() {
            for j in 0..i {
                if oracle(&systems[j], &systems[i]) {
                    prop_assert!(stage[j] < stage[i], "conflicting systems {} and {} keep their order", j, i);
                }
                if commands(j) {
                    prop_assert!(stage[j] < stage[i], "{} runs after the commands of {} applied", i, j);
                }
                if commands(i) {
                    prop_assert!(stage[j] <= stage[i], "the commands of {} apply after {} ran", i, j);
                }
                if alone(i) || alone(j) {
                    prop_assert!(stage[j] != stage[i], "a resource writer or frame-level system runs alone");
                }
            }
            // Each system is as early as the rules allow: at its lower bound, or at the first
            // stage after it that holds no system that runs alone (for one that runs alone:
            // no system at all).
            let mut lower = (0..i)
                .filter(|&j| oracle(&systems[j], &systems[i]) || commands(j))
                .map(|j| stage[j] + 1)
                .max()
                .unwrap_or(0);
            if commands(i) {
                lower = lower.max((0..i).map(|j| stage[j]).max().unwrap_or(0));
            }
            let taken = |s: usize, alone_only: bool| (0..i).any(|j| stage[j] == s && (!alone_only || alone(j)));
            let expected = (lower..)
                .find(|&s| !taken(s, !alone(i)))
                .unwrap();
            prop_assert_eq!(stage[i], expected, "system {} placed as early as allowed", i);
        }
    }
}
