//! Levels: compile → verify → read back, compile errors with paths, and one
//! hand-made corruption per verifier check.

mod common;

use std::borrow::Cow;

use common::*;
use serde_json::json;
use sigecs_level::component_identifier;
use sigecs_level::{
    inspect, reseal, verify, AlignedBlob, AnySet, EntityCompiler, LevelError, LevelWriter,
    Registration, Registry, VerifiedLevel, VerifyOptions,
};

fn compile(registry: &Registry, models: &[EntityModel]) -> Vec<u8> {
    EntityCompiler::new(registry)
        .compile(&to_json(models))
        .expect("compiles")
}

fn check<'r>(
    registry: &'r Registry,
    blob: &[u8],
) -> Result<VerifiedLevel<'r, Vec<u8>>, LevelError> {
    // `registry` outlives the result; the blob is copied so tests can keep patching theirs.
    verify(
        blob.to_vec(),
        registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
}

fn put_u32(blob: &mut [u8], at: usize, v: u32) {
    blob[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(blob: &mut [u8], at: usize, v: u64) {
    blob[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Offsets of every record in a (valid) blob.
fn record_offsets(registry: &Registry, blob: &[u8]) -> Vec<(Option<&'static str>, usize, u32)> {
    let res = check(registry, blob).unwrap();
    res.component_types()
        .map(|c| (c.name(), c.offset(), c.len()))
        .collect()
}

fn record_of(registry: &Registry, blob: &[u8], name: &str) -> (usize, u32) {
    record_offsets(registry, blob)
        .into_iter()
        .find(|r| r.0 == Some(name))
        .map(|r| (r.1, r.2))
        .unwrap()
}

#[test]
fn compile_verify_read_back_and_save_identical() {
    let registry = registry();
    let models = sample_models();
    let blob = compile(&registry, &models);
    let res = check(&registry, &blob).unwrap();
    assert_eq!(read_back(&res).unwrap(), models);
    assert_consistent(&res);
    assert_eq!(res.num_entities(), 4);
    assert_eq!((res.roots(), res.depth()), (2, 3));
    // Saving the same entities through the writer gives the same bytes.
    assert_eq!(write_models(&registry, &models).unwrap(), blob);
    // Compiling twice gives the same bytes.
    assert_eq!(compile(&registry, &models), blob);
}

#[test]
fn spawn_order_follows_registrations() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let res = check(&registry, &blob).unwrap();
    let order: Vec<&str> = res.spawn_order().map(|c| c.name().unwrap()).collect();
    // name (-1) first, velocity (1) last, the rest (0) by identifier.
    assert_eq!(order.first(), Some(&"name"));
    assert_eq!(order.last(), Some(&"velocity"));
    assert_eq!(order.len(), 7);
    let blob_order: Vec<u64> = res.component_types().map(|c| c.identifier()).collect();
    assert!(blob_order.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn seed_hierarchy_example() {
    // parent_index {UINT_MAX, 0, 1, 1, 2}: A - B - C - E, B - D.
    let registry = registry();
    let mut w = LevelWriter::new();
    for p in [None, Some(0), Some(1), Some(1), Some(2)] {
        w.add_entity(p).unwrap();
    }
    let blob = w.finish().unwrap();
    let res = check(&registry, &blob).unwrap();
    assert_eq!(res.depth(), 4);
    assert_eq!(res.roots(), 1);
    assert_eq!(res.parents_first(), [0, 1, 2, 3, 4]);
    assert_eq!(res.depth_of(4), Some(3));
    assert_eq!(res.parent(0), None);
    assert_eq!(res.parent(9), None);

    // Parents after their children in index order: depth first, then index.
    let mut w = LevelWriter::new();
    for p in [Some(3), None, Some(0), None, Some(1)] {
        w.add_entity(p).unwrap();
    }
    let blob = w.finish().unwrap();
    let res = check(&registry, &blob).unwrap();
    assert_eq!(res.parents_first(), [1, 3, 0, 4, 2]);
}

#[test]
fn compile_errors_name_the_json_path() {
    let registry = registry();
    let c = EntityCompiler::new(&registry);
    let doc = json!({
        "entities": [
            {"components": {"position": {"x": 1, "y": 2, "z": 3}}},
            {"parent": 8},
            {"components": {"positon": {}}},
            {"components": {"velocity": {"x": "fast", "y": 0, "z": 0}}},
            {"components": {"inventory": {"items": ["a", 3], "gold": 1}}},
            {"components": {"health": {"hp": 1}}},
            {"colour": "red"},
            5
        ]
    });
    let err = c.compile(&doc).unwrap_err();
    let paths: Vec<&str> = err.errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "entities[1].parent",
            "entities[2].components.positon",
            "entities[3].components.velocity.x",
            "entities[4].components.inventory.items[1]",
            "entities[5].components.health",
            "entities[6].colour",
            "entities[7]",
        ]
    );
    let text = err.to_string();
    assert!(
        text.contains(
            "entities[3].components.velocity.x: invalid type: string \"fast\", expected f32"
        ),
        "{text}"
    );
    assert!(
        text.contains("unknown component `positon`; registered: "),
        "{text}"
    );
    assert!(text.contains("missing field `max`"), "{text}");
    assert!(
        text.contains("expected null or an entity index below 8, found 8"),
        "{text}"
    );

    let cycle = c
        .compile(&json!({"entities": [{"parent": 1}, {"parent": 0}]}))
        .unwrap_err();
    assert_eq!(cycle.errors[0].path, "entities[0].parent");
    assert!(cycle.to_string().contains("cycle"));
    let own = c
        .compile(&json!({"entities": [{"parent": 0}]}))
        .unwrap_err();
    assert!(own.to_string().contains("own parent"));
    assert!(c
        .compile_str("{")
        .unwrap_err()
        .to_string()
        .contains("not valid JSON"));
    assert!(c.compile(&json!([])).is_err());
    assert!(c
        .compile(&json!({}))
        .unwrap_err()
        .to_string()
        .contains("missing key \"entities\""));
    assert!(c.compile(&json!({"entities": 3})).unwrap_err().errors[0].path == "entities");
    // Empty and component-less levels compile.
    let empty = c.compile(&json!({"entities": []})).unwrap();
    assert_eq!(check(&registry, &empty).unwrap().num_entities(), 0);
    let bare = c
        .compile_str(r#"{"entities": [{}, {"parent": null, "components": null}]}"#)
        .unwrap();
    assert_eq!(check(&registry, &bare).unwrap().num_entities(), 2);
}

#[test]
fn compile_reports_at_most_max_errors() {
    let registry = registry();
    let many: Vec<serde_json::Value> = (0..150).map(|_| json!({"bad": 1})).collect();
    let err = EntityCompiler::new(&registry)
        .compile(&json!({ "entities": many }))
        .unwrap_err();
    assert_eq!(err.errors.len(), sigecs_level::CompileError::MAX_ERRORS);
    assert_eq!(err.more, 50);
    assert!(err.to_string().ends_with("… and 50 more"));
}

#[test]
fn undeclared_signature_carries_the_worlds_text() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let mut asked = Vec::new();
    let err = verify(
        &blob[..],
        &registry,
        |set: &[&Registration]| {
            let names: Vec<&str> = set.iter().map(|r| r.name()).collect();
            asked.push(names.join("+"));
            if names.contains(&"inventory") {
                Err("inserting would make an undeclared signature; declare it with #[derive(Signature)]".to_string())
            } else {
                Ok(asked.len() as u32)
            }
        },
        &VerifyOptions::default(),
    )
    .unwrap_err();
    match &err {
        LevelError::UndeclaredSignature {
            entity,
            components,
            message,
        } => {
            assert_eq!(*entity, 2);
            assert_eq!(components, "{inventory, kind}");
            assert!(message.contains("declare it"));
        }
        other => panic!("{other}"),
    }
    assert!(err
        .to_string()
        .contains("entity 2 has components {inventory, kind}"));
    // One call per distinct set, sets sorted by identifier.
    assert_eq!(asked.len(), 3);
}

#[test]
fn stores_come_from_the_signatures() {
    let registry = registry();
    let models = vec![
        EntityModel {
            position: Some(Position::default()),
            ..Default::default()
        };
        5
    ];
    let mut more = models.clone();
    more.push(EntityModel {
        name: Some(Name("n".into())),
        ..Default::default()
    });
    let blob = compile(&registry, &more);
    let res = verify(
        &blob[..],
        &registry,
        |set: &[&Registration]| Ok(if set[0].name() == "position" { 7 } else { 3 }),
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(res.store_counts(), [(3, 1), (7, 5)]);
    assert_eq!(res.entity_store(0), Some(7));
    assert_eq!(res.entity_store(5), Some(3));
    assert_eq!(res.entity_store(6), None);
    let sets: Vec<String> = res.sets().map(|s| format!("{s}:{}", s.entities)).collect();
    assert_eq!(sets, ["{position}:5", "{name}:1"]);
}

#[test]
fn unknown_components_are_skipped_or_refused() {
    let full = registry();
    let blob = compile(&full, &sample_models());
    let partial = Registry::new([
        Registration::pod::<Position>("position"),
        Registration::serde::<Name>("name"),
    ])
    .unwrap();
    let res = verify(
        &blob[..],
        &partial,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(res.component_types().count(), 7);
    assert_eq!(res.spawn_order().count(), 2);
    assert_consistent(&res);
    let unknown = res
        .component_types()
        .find(|c| c.registration().is_none())
        .unwrap();
    assert!(unknown.instances().is_ok() || !unknown.is_pod());
    let err = verify(
        &blob[..],
        &partial,
        AnySet::default(),
        &VerifyOptions::default().refuse_unknown(),
    )
    .unwrap_err();
    assert!(matches!(err, LevelError::UnknownComponent { .. }), "{err}");
    assert!(err.to_string().contains("unknown component 0x"), "{err}");
}

#[test]
fn layout_changes_are_refused() {
    // The same name registered with another type: the blob says 12-byte POD, the registry 8.
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let changed = Registry::new([Registration::pod::<Health>("position")]).unwrap();
    let err = verify(
        &blob[..],
        &changed,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap_err();
    match err {
        LevelError::EncodingMismatch {
            expected, found, ..
        } => {
            assert_eq!(expected, "pod, 8 bytes");
            assert_eq!(found, "pod, 12 bytes");
        }
        other => panic!("{other}"),
    }
    let to_serde = Registry::new([Registration::serde::<String>("position")]).unwrap();
    assert!(matches!(
        verify(
            &blob[..],
            &to_serde,
            AnySet::default(),
            &VerifyOptions::default()
        ),
        Err(LevelError::EncodingMismatch { .. })
    ));
}

#[test]
fn header_damage_is_refused() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let mut b = blob.clone();
    b[0] = b'P';
    assert_eq!(check(&registry, &b).unwrap_err(), LevelError::BadMagic);
    let mut b = blob.clone();
    put_u32(&mut b, 8, 2);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::UnsupportedVersion {
            found: 2,
            supported: 1
        })
    ));
    let mut b = blob.clone();
    put_u32(&mut b, 12, 1);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::ReservedNonZero { what: "flags", .. })
    ));
    let mut b = blob.clone();
    put_u32(&mut b, 28, 1);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::ReservedNonZero {
            what: "reserved",
            ..
        })
    ));
    let mut b = blob.clone();
    b.extend_from_slice(&[0; 8]);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::LengthMismatch { .. })
    ));
    let mut b = blob.clone();
    let last = b.len() - 9;
    b[last] ^= 0x10;
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        check(&registry, &blob[..5]),
        Err(LevelError::Truncated { what: "magic", .. })
    ));
    assert!(matches!(
        check(&registry, &blob[..20]),
        Err(LevelError::Truncated { what: "header", .. })
    ));
    assert!(check(&registry, &[]).is_err());
}

#[test]
fn body_damage_is_refused_even_with_a_valid_checksum() {
    let registry = registry();
    let models = vec![
        EntityModel {
            position: Some(Position {
                x: 1.0,
                y: 1.0,
                z: 1.0,
            }),
            ..Default::default()
        },
        EntityModel {
            parent: Some(0),
            position: Some(Position {
                x: 2.0,
                y: 2.0,
                z: 2.0,
            }),
            ..Default::default()
        },
        EntityModel {
            parent: Some(1),
            ..Default::default()
        },
    ];
    let blob = compile(&registry, &models);
    let (rec, n) = record_of(&registry, &blob, "position");
    assert_eq!(n, 2);
    let idx = rec + 24;
    let patched = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = blob.clone();
        f(&mut b);
        reseal(&mut b);
        check(&registry, &b).map(|_| ())
    };
    // The same entity holds the component twice (hecs #449/#465's bug class).
    assert!(matches!(
        patched(&|b| put_u32(b, idx + 4, 0)),
        Err(LevelError::DuplicateComponent { entity: 0, .. })
    ));
    assert!(matches!(
        patched(&|b| {
            put_u32(b, idx, 1);
            put_u32(b, idx + 4, 0)
        }),
        Err(LevelError::UnsortedInstances { instance: 1, .. })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, idx + 4, 3)),
        Err(LevelError::EntityIndexOutOfRange {
            entity: 3,
            num_entities: 3,
            ..
        })
    ));
    // Parents: out of range, a self-parent, a cycle.
    assert!(matches!(
        patched(&|b| put_u32(b, 40 + 8, 3)),
        Err(LevelError::ParentOutOfRange {
            entity: 2,
            parent: 3,
            ..
        })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, 40 + 8, 2)),
        Err(LevelError::ParentCycle { .. })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, 40, 2)),
        Err(LevelError::ParentCycle { .. })
    ));
    // Counts larger than the bytes that remain are refused before allocating.
    assert!(matches!(
        patched(&|b| put_u32(b, 32, u32::MAX)),
        Err(LevelError::CountTooLarge {
            what: "parent_index",
            ..
        })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, 36, u32::MAX)),
        Err(LevelError::CountTooLarge {
            what: "num_component_types",
            ..
        })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, rec + 8, u32::MAX)),
        Err(LevelError::SizeMismatch { .. })
    ));
    assert!(matches!(
        patched(&|b| {
            put_u32(b, rec + 8, 1 << 30);
            put_u32(b, rec + 12, 12 << 30)
        }),
        Err(LevelError::SizeMismatch { .. })
    ));
    assert!(matches!(
        patched(&|b| {
            put_u32(b, rec + 8, 1 << 20);
            put_u32(b, rec + 12, 12 << 20)
        }),
        Err(LevelError::CountTooLarge {
            what: "entity_index",
            ..
        })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, rec + 16, 7)),
        Err(LevelError::BadEncoding { encoding: 7, .. })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, rec + 20, 4)),
        Err(LevelError::SizeMismatch { .. })
    ));
    assert!(matches!(
        patched(&|b| put_u32(b, rec + 16, 1)),
        Err(LevelError::BadEncoding {
            encoding: 1,
            element_size: 12,
            ..
        })
    ));
    // Padding (after the three parents, bytes 52..56) and trailing bytes.
    assert!(matches!(
        patched(&|b| b[40 + 12] = 1),
        Err(LevelError::NonZeroPadding { offset: 52 })
    ));
    assert!(matches!(
        patched(&|b| {
            b.extend_from_slice(&[0; 8]);
            let len = b.len() as u32;
            put_u32(b, 16, len)
        }),
        Err(LevelError::TrailingBytes { .. })
    ));
    assert!(matches!(
        patched(&|b| {
            b.truncate(b.len() - 8);
            let len = b.len() as u32;
            put_u32(b, 16, len)
        }),
        Err(LevelError::Truncated { .. })
    ));
}

#[test]
fn record_order_is_checked() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let recs = record_offsets(&registry, &blob);
    let (first, second) = (recs[0].1, recs[1].1);
    let first_id = u64::from_le_bytes(blob[first..first + 8].try_into().unwrap());
    let mut b = blob.clone();
    put_u64(&mut b, second, first_id);
    reseal(&mut b);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::DuplicateComponentType { .. })
    ));
    let mut b = blob.clone();
    put_u64(&mut b, second, first_id - 1);
    reseal(&mut b);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::UnsortedComponentTypes { .. })
    ));
}

#[test]
fn non_canonical_postcard_is_refused() {
    let registry = Registry::new([Registration::serde::<u32>("count")]).unwrap();
    let blob = EntityCompiler::new(&registry)
        .compile(&json!({"entities": [{"components": {"count": 5}}]}))
        .unwrap();
    let res = check(&registry, &blob).unwrap();
    let c = res.component("count").unwrap();
    assert_eq!(c.decode::<u32>().unwrap(), [5]);
    let data = c.instance_data().as_ptr() as usize - res.bytes().as_ptr() as usize;
    let rec = c.offset();
    let mut b = blob.clone();
    put_u32(&mut b, rec + 12, 2);
    b[data] = 0x85;
    b[data + 1] = 0x00;
    reseal(&mut b);
    let err = check(&registry, &b).unwrap_err();
    assert!(
        matches!(err, LevelError::Decode { instance: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("canonical"), "{err}");
    // Garbage that does not decode at all.
    let mut b = blob.clone();
    b[data] = 0xff;
    reseal(&mut b);
    assert!(matches!(
        check(&registry, &b),
        Err(LevelError::Decode { .. })
    ));
}

#[test]
fn pod_is_read_in_place_from_an_aligned_blob() {
    let registry = registry();
    let models = sample_models();
    let blob = compile(&registry, &models);
    let aligned = AlignedBlob::from_bytes(&blob);
    let res = verify(
        &aligned,
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    let pos = res.component("position").unwrap();
    assert!(matches!(pos.pod::<Position>().unwrap(), Cow::Borrowed(_)));
    assert!(matches!(pos.entity_index(), Cow::Borrowed(_)));
    assert_eq!(
        pos.pod::<Position>().unwrap()[0],
        models[0].position.unwrap()
    );
    // The same blob one byte off alignment: copied, same values.
    let mut shifted = vec![0u8; blob.len() + 1];
    shifted[1..].copy_from_slice(&blob);
    let res2 = verify(
        &shifted[1..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    let pos2 = res2.component("position").unwrap();
    assert!(matches!(pos2.pod::<Position>().unwrap(), Cow::Owned(_)));
    assert_eq!(
        pos2.pod::<Position>().unwrap(),
        pos.pod::<Position>().unwrap()
    );
    assert_eq!(pos2.entity_index(), pos.entity_index());
    let mut column = vec![Position::default()];
    pos2.extend_pod(&mut column).unwrap();
    assert_eq!(&column[1..], &pos.pod::<Position>().unwrap()[..]);
    // Wrong types are errors.
    assert!(matches!(
        pos.pod::<Velocity>(),
        Err(LevelError::WrongType { .. })
    ));
    assert!(matches!(
        pos.decode::<Name>(),
        Err(LevelError::WrongType { .. })
    ));
    let mut markers: Vec<Marker> = Vec::new();
    res.component("marker")
        .unwrap()
        .extend_pod(&mut markers)
        .unwrap();
    assert_eq!(markers, [Marker]);
    // A prefab is verified once and read any number of times.
    for _ in 0..3 {
        assert_eq!(read_back(&res).unwrap(), models);
    }
    let blob_back = res.into_inner();
    assert_eq!(blob_back.as_ref(), &blob[..]);
}

#[test]
fn inspect_reports_counts_depth_and_bytes() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let report = inspect(&blob, &registry).unwrap();
    assert_eq!(report.total_bytes, blob.len());
    assert_eq!((report.entities, report.roots, report.depth), (4, 2, 3));
    assert_eq!(report.component_types.len(), 7);
    let pos = report
        .component_types
        .iter()
        .find(|c| c.name == Some("position"))
        .unwrap();
    assert_eq!(
        (pos.instances, pos.data_bytes, pos.encoding.as_str()),
        (3, 36, "pod, 12 bytes")
    );
    assert_eq!(pos.identifier, component_identifier("position"));
    let sum: usize = report.component_types.iter().map(|c| c.record_bytes).sum();
    assert_eq!(
        report.header_bytes + report.hierarchy_bytes + sum,
        blob.len()
    );
    assert_eq!(report.sets.iter().map(|s| s.entities).sum::<u32>(), 4);
    let text = report.to_string();
    assert!(
        text.contains("entities: 4 (2 roots, hierarchy depth 3)"),
        "{text}"
    );
    assert!(text.contains("pod, 12 bytes"), "{text}");
    assert!(text.contains("component sets: 4"), "{text}");
    // Each set as a world's `ComponentSet` writes it, with its entities.
    let sets: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("component sets"))
        .skip(1)
        .collect();
    assert_eq!(sets.len(), 4, "{text}");
    assert!(
        sets.iter()
            .all(|l| l.starts_with("  ") && l.contains(": 1 entity (store ")),
        "{text}"
    );
    assert!(sets.iter().any(|l| l.contains("POSITION")), "{text}");
    assert!(inspect(&blob[..10], &registry).is_err());
}

#[test]
fn errors_display_usefully() {
    let registry = registry();
    let blob = compile(&registry, &sample_models());
    let e = check(&registry, &blob[..blob.len() - 1]).unwrap_err();
    assert!(e.to_string().contains("says the level is"), "{e}");
    let e =
        Registry::new([Registration::pod::<u8>("a"), Registration::pod::<u16>("a")]).unwrap_err();
    assert_eq!(e.to_string(), "level name `a` is registered twice");
}
