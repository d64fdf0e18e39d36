//! Random entities → JSON → compile → verify → read back equal; the writer, given the same
//! entities in another order, produces the same bytes.

mod common;

use common::*;
use proptest::prelude::*;
use sigecs_level::{verify, AnySet, EntityCompiler, VerifyOptions};

fn finite() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        Just(-0.0f32),
        -1.0e6f32..1.0e6f32,
        Just(f32::MAX),
        Just(f32::MIN_POSITIVE)
    ]
}

fn vec3() -> impl Strategy<Value = (f32, f32, f32)> {
    (finite(), finite(), finite())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z]{1,8}", "\\PC{0,12}"]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Static),
        finite().prop_map(|mass| Kind::Dynamic { mass }),
        text().prop_map(Kind::Scripted),
    ]
}

fn entity() -> impl Strategy<Value = EntityModel> {
    (
        proptest::option::of(vec3()),
        proptest::option::of(vec3()),
        proptest::option::of((any::<u32>(), any::<u32>())),
        any::<bool>(),
        proptest::option::of(text()),
        proptest::option::of((proptest::collection::vec(text(), 0..4), any::<u64>())),
        proptest::option::of(kind()),
    )
        .prop_map(|(p, v, h, m, n, inv, k)| EntityModel {
            parent: None,
            position: p.map(|(x, y, z)| Position { x, y, z }),
            velocity: v.map(|(x, y, z)| Velocity { x, y, z }),
            health: h.map(|(hp, max)| Health { hp, max }),
            marker: m.then_some(Marker),
            name: n.map(Name),
            inventory: inv.map(|(items, gold)| Inventory { items, gold }),
            kind: k,
        })
}

/// Entities with a random forest: each picks a parent among the entities before it (or none),
/// then the indices are permuted so children may come before their parents.
fn level() -> impl Strategy<Value = Vec<EntityModel>> {
    proptest::collection::vec((entity(), any::<Option<prop::sample::Index>>()), 0..24)
        .prop_flat_map(|es| {
            let n = es.len();
            (
                Just(es),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(es, perm)| {
            let mut out = vec![EntityModel::default(); es.len()];
            for (i, (mut e, parent)) in es.into_iter().enumerate() {
                e.parent = match parent {
                    Some(ix) if i > 0 => Some(perm[ix.index(i)] as u32),
                    _ => None,
                };
                out[perm[i]] = e;
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]

    #[test]
    fn compile_verify_read_back(models in level()) {
        let registry = registry();
        let blob = EntityCompiler::new(&registry).compile(&to_json(&models)).unwrap();
        let res = verify(&blob[..], &registry, AnySet::default(), &VerifyOptions::default()).unwrap();
        prop_assert_eq!(read_back(&res).unwrap(), models.clone());
        assert_consistent(&res);
        prop_assert_eq!(write_models(&registry, &models).unwrap(), blob);
    }
}
