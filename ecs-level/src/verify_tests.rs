//! The verifier's checks one by one: each test breaks exactly one field of a valid blob, built
//! byte by byte from the layout in `format.rs`'s docs (not with `LevelWriter`,
//! so a writer bug cannot hide a verifier bug), and expects the exact error.

use super::*;
use crate::format::{component_identifier, reseal, ENCODING_POD, ENCODING_POSTCARD};
use serde::Serialize;
use sigecs::entity::EntityBits;

/// One component type record, field by field; `num_instances` and `size` default to what
/// `index` and `data` hold.
#[derive(Clone, Debug)]
struct RawRecord {
    id: u64,
    num_instances: Option<u32>,
    size: Option<u32>,
    encoding: u32,
    element_size: u32,
    index: Vec<u32>,
    data: Vec<u8>,
}

impl RawRecord {
    fn pod_u32(name: &str, index: &[u32], values: &[u32]) -> Self {
        RawRecord {
            id: component_identifier(name),
            num_instances: None,
            size: None,
            encoding: ENCODING_POD,
            element_size: 4,
            index: index.to_vec(),
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    fn postcard<T: Serialize>(name: &str, index: &[u32], values: &[T]) -> Self {
        let mut data = Vec::new();
        for v in values {
            data.extend(postcard::to_allocvec(v).unwrap());
        }
        RawRecord {
            id: component_identifier(name),
            num_instances: None,
            size: None,
            encoding: ENCODING_POSTCARD,
            element_size: 0,
            index: index.to_vec(),
            data,
        }
    }
}

/// A whole blob, field by field; `num_entities`, `num_types`, `total_len` and `checksum`
/// default to the true values.
#[derive(Clone, Debug)]
struct Raw {
    version: u32,
    flags: u32,
    reserved: u64,
    num_entities: Option<u32>,
    num_types: Option<u32>,
    parents: Vec<u32>,
    records: Vec<RawRecord>,
    trailing: Vec<u8>,
}

fn pad(out: &mut Vec<u8>, align: usize) {
    while !out.len().is_multiple_of(align) {
        out.push(0);
    }
}

impl Raw {
    fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; HEADER_LEN];
        let n = self.num_entities.unwrap_or(self.parents.len() as u32);
        let types = self.num_types.unwrap_or(self.records.len() as u32);
        out.extend(n.to_le_bytes());
        out.extend(types.to_le_bytes());
        for p in &self.parents {
            out.extend(p.to_le_bytes());
        }
        pad(&mut out, RECORD_ALIGN);
        for r in &self.records {
            assert_eq!(out.len() % RECORD_ALIGN, 0);
            out.extend(r.id.to_le_bytes());
            out.extend(
                r.num_instances
                    .unwrap_or(r.index.len() as u32)
                    .to_le_bytes(),
            );
            out.extend(r.size.unwrap_or(r.data.len() as u32).to_le_bytes());
            out.extend(r.encoding.to_le_bytes());
            out.extend(r.element_size.to_le_bytes());
            for e in &r.index {
                out.extend(e.to_le_bytes());
            }
            pad(&mut out, DATA_ALIGN);
            out.extend(&r.data);
            pad(&mut out, RECORD_ALIGN);
        }
        out.extend(&self.trailing);
        out[..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        out[12..16].copy_from_slice(&self.flags.to_le_bytes());
        let total = out.len() as u32;
        out[16..20].copy_from_slice(&total.to_le_bytes());
        out[24..32].copy_from_slice(&self.reserved.to_le_bytes());
        reseal(&mut out);
        out
    }
}

/// Four entities: 0 is a root with a child 1, whose child is 2; 3 is a root. Every entity has a
/// `pos` (u32 POD); 0 and 2 have a `name` (String, postcard); 1 has a `link` to entity 0.
fn base() -> Raw {
    let mut records = vec![
        RawRecord::pod_u32("pos", &[0, 1, 2, 3], &[10, 11, 12, 13]),
        RawRecord::postcard("name", &[0, 2], &["a".to_string(), "bb".to_string()]),
        RawRecord {
            id: component_identifier("link"),
            num_instances: None,
            size: None,
            encoding: ENCODING_POD,
            element_size: size_of::<Entity>() as u32,
            index: vec![1],
            data: (0 as EntityBits).to_le_bytes().to_vec(),
        },
    ];
    records.sort_by_key(|r| r.id);
    Raw {
        version: VERSION,
        flags: 0,
        reserved: 0,
        num_entities: None,
        num_types: None,
        parents: vec![ROOT, 0, 1, ROOT],
        records,
        trailing: Vec::new(),
    }
}

fn registry() -> Registry {
    Registry::new([
        Registration::pod::<u32>("pos"),
        Registration::serde::<String>("name"),
        Registration::pod::<Entity>("link").map_entities::<Entity>(),
    ])
    .unwrap()
}

/// Verifies `bytes` as any tool without a world would, expecting success.
fn accept<'a, 'r>(bytes: &'a [u8], registry: &'r Registry) -> VerifiedLevel<'r, &'a [u8]> {
    verify(
        bytes,
        registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap()
}

fn check(bytes: &[u8]) -> Result<(), LevelError> {
    verify_with(bytes, &VerifyOptions::default())
}

fn verify_with(bytes: &[u8], options: &VerifyOptions) -> Result<(), LevelError> {
    let registry = registry();
    verify(bytes, &registry, AnySet::default(), options).map(|_| ())
}

/// The record of component `name` in `raw`.
fn record<'a>(raw: &'a mut Raw, name: &str) -> &'a mut RawRecord {
    let id = component_identifier(name);
    raw.records.iter_mut().find(|r| r.id == id).unwrap()
}

fn comp(name: &'static str) -> ComponentRef {
    ComponentRef {
        identifier: component_identifier(name),
        name: Some(name),
    }
}

/// Offset in `base().bytes()` of the record of `name`.
fn record_offset(name: &str) -> usize {
    let registry = registry();
    let bytes = base().bytes();
    let level = accept(&bytes, &registry);
    let offset = level.component(name).unwrap().offset();
    offset // `level` borrows `bytes`: the offset leaves before both drop
}

#[test]
fn the_base_blob_is_accepted_with_what_it_holds() {
    let registry = registry();
    let bytes = base().bytes();
    let level = accept(&bytes, &registry);
    assert!(std::ptr::eq(level.registry(), &registry));
    assert_eq!(level.bytes(), &bytes[..]);
    assert_eq!(level.num_entities(), 4);
    assert_eq!(level.roots(), 2);
    assert_eq!(level.depth(), 3);
    assert_eq!(
        (0..5).map(|e| level.depth_of(e)).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(2), Some(0), None]
    );
    assert_eq!(
        level.parents().collect::<Vec<_>>(),
        [None, Some(0), Some(1), None]
    );
    assert_eq!(level.parent(4), None);
    assert_eq!(level.parents_first(), [0, 3, 1, 2]);
    let pos = level.component("pos").unwrap();
    assert_eq!(pos.identifier(), component_identifier("pos"));
    assert_eq!(pos.name(), Some("pos"));
    assert_eq!(pos.component_ref(), comp("pos"));
    assert_eq!(pos.len(), 4);
    assert!(pos.is_pod() && !pos.is_empty());
    assert_eq!(pos.element_size(), 4);
    assert_eq!(pos.entity_indices().collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(pos.entity_index().as_ref(), [0, 1, 2, 3]);
    assert_eq!(pos.pod::<u32>().unwrap().as_ref(), [10, 11, 12, 13]);
    let mut out = vec![7u32];
    pos.extend_pod(&mut out).unwrap();
    assert_eq!(out, [7, 10, 11, 12, 13]);
    // 24 header bytes and 16 of indices, padded to 16 from the blob's start, then 16 of data.
    let pad = (pos.offset() + 40).next_multiple_of(16) - (pos.offset() + 40);
    assert_eq!(pos.record_bytes(), 56 + pad);
    let records: usize = level.component_types().map(|c| c.record_bytes()).sum();
    assert_eq!(56 + records, bytes.len());
    let name = level.component("name").unwrap();
    assert!(!name.is_pod());
    assert_eq!(name.decode::<String>().unwrap(), ["a", "bb"]);
    assert_eq!(
        name.instances().unwrap(),
        [&[1u8, b'a'][..], &[2u8, b'b', b'b'][..]]
    );
    let mut seen = Vec::new();
    name.decode_each::<String>(|e, v| seen.push((e, v)))
        .unwrap();
    assert_eq!(seen, [(0, "a".to_string()), (2, "bb".to_string())]);
    assert!(level.component("ghost").is_none());
    // Sets: {pos, name} for 0 and 2, {pos, link} for 1, {pos} for 3, in order of appearance.
    let sets: Vec<(String, u32, u32)> = level
        .sets()
        .map(|s| (s.to_string(), s.store, s.entities))
        .collect();
    let mut first = ["pos", "name"];
    first.sort_by_key(|n| component_identifier(n));
    let mut second = ["pos", "link"];
    second.sort_by_key(|n| component_identifier(n));
    assert_eq!(
        sets,
        [
            (format!("{{{}, {}}}", first[0], first[1]), 0, 2),
            (format!("{{{}, {}}}", second[0], second[1]), 1, 1),
            ("{pos}".to_string(), 2, 1),
        ]
    );
    assert_eq!(
        (0..5).map(|e| level.entity_store(e)).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(0), Some(2), None]
    );
    assert_eq!(level.store_counts(), [(0, 2), (1, 1), (2, 1)]);
    assert_eq!(level.component_types().len(), 3);
    assert_eq!(level.spawn_order().len(), 3);
}

#[test]
fn header_fields_are_checked_one_by_one() {
    let good = base().bytes();
    assert_eq!(
        check(&good[..7]),
        Err(LevelError::Truncated {
            what: "magic",
            offset: 0,
            needed: 8,
            available: 7
        })
    );
    let mut b = good.clone();
    b[3] ^= 0x20;
    assert_eq!(check(&b), Err(LevelError::BadMagic));
    // The magic alone: a header's worth is missing.
    assert_eq!(
        check(&good[..8]),
        Err(LevelError::Truncated {
            what: "header",
            offset: 0,
            needed: 32,
            available: 8
        })
    );
    assert_eq!(
        check(&good[..31]),
        Err(LevelError::Truncated {
            what: "header",
            offset: 0,
            needed: 32,
            available: 31
        })
    );
    // Exactly a header and nothing else: its length field says more.
    assert!(matches!(
        check(&good[..32]),
        Err(LevelError::LengthMismatch { actual: 32, .. })
    ));

    let mut raw = base();
    raw.version = 2;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::UnsupportedVersion {
            found: 2,
            supported: 1
        })
    );
    let mut raw = base();
    raw.flags = 1 << 31;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::ReservedNonZero {
            what: "flags",
            value: 1 << 31
        })
    );
    let mut raw = base();
    raw.reserved = 1 << 63;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::ReservedNonZero {
            what: "reserved",
            value: 1 << 63
        })
    );

    // One byte more or less than `total_len`, resealed.
    let mut b = good.clone();
    b.push(0);
    reseal(&mut b);
    assert_eq!(
        check(&b),
        Err(LevelError::LengthMismatch {
            header: good.len() as u32,
            actual: good.len() + 1
        })
    );
    let mut b = good.clone();
    b.pop();
    reseal(&mut b);
    assert_eq!(
        check(&b),
        Err(LevelError::LengthMismatch {
            header: good.len() as u32,
            actual: good.len() - 1
        })
    );

    // A changed body byte without a reseal: the stored checksum no longer matches.
    let mut b = good.clone();
    *b.last_mut().unwrap() ^= 1;
    let stored = u32::from_le_bytes(good[20..24].try_into().unwrap());
    assert_eq!(
        check(&b),
        Err(LevelError::ChecksumMismatch {
            stored,
            computed: checksum(&b[HEADER_LEN..])
        })
    );
}

#[test]
fn counts_are_capped_by_the_bytes_that_remain() {
    let len = base().bytes().len();
    // parent_index: 4 bytes per entity, checked before anything is allocated.
    let mut raw = base();
    raw.num_entities = Some(u32::MAX);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::CountTooLarge {
            what: "parent_index",
            count: u32::MAX as u64,
            offset: 40,
            remaining: len - 40
        })
    );
    // One entity more than the parent array holds: the first record's identifier is read as a
    // parent and as padding, whose high half is not zero.
    let mut raw = base();
    raw.num_entities = Some(5);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::NonZeroPadding { offset: 60 })
    );

    // num_component_types: at least 24 bytes per record.
    let mut raw = base();
    raw.num_types = Some(u32::MAX);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::CountTooLarge {
            what: "num_component_types",
            count: u32::MAX as u64,
            offset: 56,
            remaining: len - 56
        })
    );
    // The cap is exact: one record more than 24-byte records could fill is refused as a count
    // before any record is read.
    let mut raw = base();
    let cap = (len - 56) / RECORD_HEADER_LEN;
    raw.num_types = Some(cap as u32 + 1);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::CountTooLarge {
            what: "num_component_types",
            count: cap as u64 + 1,
            offset: 56,
            remaining: len - 56
        })
    );
    // One record more than there is, within the cap: the reader runs out inside the missing one.
    let mut raw = base();
    raw.num_types = Some(4);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::Truncated {
            what: "component_identifier",
            offset: len,
            needed: 8,
            available: 0
        })
    );
    // num_instances: 4 bytes per instance.
    let mut raw = base();
    record(&mut raw, "pos").num_instances = Some(u32::MAX / 4 + 1);
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::SizeMismatch { .. })
    ));
    let mut raw = base();
    let name = record(&mut raw, "name");
    name.num_instances = Some(1 << 30);
    let offset = record_offset("name") + RECORD_HEADER_LEN;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::CountTooLarge {
            what: "entity_index",
            count: 1 << 30,
            offset,
            remaining: len - offset
        })
    );
    // size: the data must be there.
    let mut raw = base();
    record(&mut raw, "name").size = Some(1 << 20);
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::Truncated {
            what: "instance_data",
            needed: 0x10_0000,
            ..
        })
    ));
}

/// `base()` without entity 3: three parents end at byte 52, so 4 bytes of padding follow.
fn three() -> Raw {
    let mut raw = base();
    raw.parents = vec![ROOT, 0, 1];
    *record(&mut raw, "pos") = RawRecord::pod_u32("pos", &[0, 1, 2], &[10, 11, 12]);
    raw
}

#[test]
fn padding_must_be_zero_everywhere() {
    // After parent_index.
    let mut b = three().bytes();
    let reg = registry();
    let level = accept(&b, &reg);
    assert_eq!((level.roots(), level.depth()), (1, 3));
    drop(level);
    for offset in 52..56 {
        let mut b = b.clone();
        b[offset] = 1;
        reseal(&mut b);
        assert_eq!(check(&b), Err(LevelError::NonZeroPadding { offset }));
    }
    b[56] ^= 1; // the first record's identifier: not padding
    reseal(&mut b);
    assert!(!matches!(check(&b), Err(LevelError::NonZeroPadding { .. })));

    // Inside every record: between entity_index and instance_data (to 16), and after the data
    // (to 8). Every such byte of the base blob, one at a time.
    let good = base().bytes();
    let registry = registry();
    let level = accept(&good, &registry);
    let mut pads = Vec::new();
    for c in level.component_types() {
        let index_end = c.offset() + RECORD_HEADER_LEN + 4 * c.len() as usize;
        let data_start = index_end.next_multiple_of(DATA_ALIGN);
        let data_end = data_start + c.instance_data().len();
        let record_end = data_end.next_multiple_of(RECORD_ALIGN);
        assert_eq!(c.offset() + c.record_bytes(), record_end);
        pads.extend(index_end..data_start);
        pads.extend(data_end..record_end);
    }
    assert!(
        pads.len() >= 8,
        "the base blob has padding to test: {pads:?}"
    );
    for offset in pads {
        let mut b = good.clone();
        b[offset] = 0x80;
        reseal(&mut b);
        assert_eq!(check(&b), Err(LevelError::NonZeroPadding { offset }));
    }
}

#[test]
fn the_smallest_record_is_its_24_byte_header() {
    // No entity, one empty record at byte 40 (8 mod 16: no padding before its empty data), so
    // the body after the counts is exactly one record header: the count cap admits it.
    let raw = Raw {
        parents: Vec::new(),
        records: vec![RawRecord::pod_u32("pos", &[], &[])],
        ..base()
    };
    let bytes = raw.bytes();
    assert_eq!(bytes.len(), 40 + RECORD_HEADER_LEN);
    let registry = registry();
    let level = accept(&bytes, &registry);
    assert_eq!(level.num_entities(), 0);
    assert_eq!(level.depth(), 0);
    let pos = level.component("pos").unwrap();
    assert!(pos.is_empty());
    assert_eq!(pos.record_bytes(), RECORD_HEADER_LEN);
    assert_eq!(pos.pod::<u32>().unwrap().len(), 0);
    assert_eq!(level.sets().len(), 0);
}

#[test]
fn debug_output_names_the_counts() {
    let registry = registry();
    let bytes = base().bytes();
    let level = accept(&bytes, &registry);
    assert_eq!(
        format!("{level:?}"),
        "VerifiedLevel { num_entities: 4, component_types: 3, sets: 3, .. }"
    );
}

#[test]
fn trailing_bytes_are_refused() {
    let mut raw = base();
    raw.trailing = vec![0; 8];
    let len = base().bytes().len();
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::TrailingBytes { offset: len })
    );
}

#[test]
fn the_parent_forest_is_checked() {
    let mut raw = base();
    raw.parents[2] = 4;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::ParentOutOfRange {
            entity: 2,
            parent: 4,
            num_entities: 4
        })
    );
    // The last entity may be a parent: 3 is in range.
    let mut raw = base();
    raw.parents[0] = 3;
    check(&raw.bytes()).unwrap();
    let mut raw = base();
    raw.parents[0] = 2;
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::ParentCycle { .. })
    ));
    let mut raw = base();
    raw.parents[3] = 3;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::ParentCycle {
            entity: 3,
            cycle: vec![3],
            len: 1
        })
    );
}

#[test]
fn records_are_unique_and_in_identifier_order() {
    let mut raw = base();
    raw.records.swap(0, 1);
    let (a, b) = (raw.records[1].id, raw.records[0].id);
    let registry = registry();
    // The second record starts where a blob of the first alone ends.
    let offset = {
        let mut only_first = raw.clone();
        only_first.records.truncate(1);
        only_first.bytes().len()
    };
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::UnsortedComponentTypes {
            offset,
            previous: b,
            identifier: a
        })
    );
    let mut raw = base();
    let copy = raw.records[0].clone();
    raw.records.insert(1, copy);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::DuplicateComponentType {
            component: registry.component_ref(raw.records[0].id)
        })
    );
}

#[test]
fn encodings_and_sizes_are_checked() {
    // POD: size must be num_instances × element_size.
    let mut raw = base();
    record(&mut raw, "pos").size = Some(12);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::SizeMismatch {
            component: comp("pos"),
            num_instances: 4,
            element_size: 4,
            size: 12
        })
    );
    // An unknown code, and postcard with an element size.
    let mut raw = base();
    record(&mut raw, "pos").encoding = 2;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::BadEncoding {
            component: comp("pos"),
            encoding: 2,
            element_size: 4
        })
    );
    let mut raw = base();
    record(&mut raw, "name").element_size = 1;
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::BadEncoding {
            component: comp("name"),
            encoding: ENCODING_POSTCARD,
            element_size: 1
        })
    );
    // A registered component stored another way than registered.
    let mut raw = base();
    let pos = record(&mut raw, "pos");
    pos.element_size = 8;
    pos.data = (0..4u64).flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::EncodingMismatch {
            component: comp("pos"),
            expected: "pod, 4 bytes".into(),
            found: "pod, 8 bytes".into()
        })
    );
    let mut raw = base();
    *record(&mut raw, "name") = RawRecord::pod_u32("name", &[0, 2], &[1, 2]);
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::EncodingMismatch {
            component: comp("name"),
            expected: "postcard".into(),
            found: "pod, 4 bytes".into()
        })
    );
}

#[test]
fn entity_indices_are_in_range_ascending_and_unique() {
    let mut raw = base();
    record(&mut raw, "pos").index = vec![0, 1, 2, 4];
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::EntityIndexOutOfRange {
            component: comp("pos"),
            instance: 3,
            entity: 4,
            num_entities: 4
        })
    );
    let mut raw = base();
    record(&mut raw, "name").index = vec![2, 2];
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::DuplicateComponent {
            component: comp("name"),
            entity: 2
        })
    );
    let mut raw = base();
    record(&mut raw, "name").index = vec![2, 0];
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::UnsortedInstances {
            component: comp("name"),
            instance: 1
        })
    );
    // The last entity is in range, and a component may be on no entity at all.
    let mut raw = base();
    record(&mut raw, "link").index = vec![3];
    check(&raw.bytes()).unwrap();
    let mut raw = base();
    let empty = record(&mut raw, "link");
    empty.index.clear();
    empty.data.clear();
    check(&raw.bytes()).unwrap();
}

#[test]
fn postcard_instances_must_decode_canonically_and_fill_the_data() {
    // Invalid UTF-8 in the second name.
    let mut raw = base();
    record(&mut raw, "name").data = vec![1, b'a', 2, 0xff, 0xfe];
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::Decode { component, instance: 1, .. }) if component == comp("name")
    ));
    // Bytes after the last instance.
    let mut raw = base();
    record(&mut raw, "name").data = vec![1, b'a', 2, b'b', b'b', 0];
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::Decode { instance: 2, ref message, .. }) if message.contains("remain")
    ));
    // A length written in two varint bytes where one is canonical.
    let mut raw = base();
    record(&mut raw, "name").data = vec![1, b'a', 0x82, 0x00, b'b', b'b'];
    assert!(matches!(
        check(&raw.bytes()),
        Err(LevelError::Decode { instance: 1, ref message, .. }) if message.contains("canonical")
    ));
}

#[test]
fn entity_references_stay_inside_the_level() {
    let mut raw = base();
    record(&mut raw, "link").data = (4 as EntityBits).to_le_bytes().to_vec();
    assert_eq!(
        check(&raw.bytes()),
        Err(LevelError::ReferenceOutOfRange {
            component: comp("link"),
            value: 4,
            num_entities: 4
        })
    );
    for ok in [3 as EntityBits, NO_ENTITY.to_bits()] {
        let mut raw = base();
        record(&mut raw, "link").data = ok.to_le_bytes().to_vec();
        check(&raw.bytes()).unwrap();
    }
}

#[test]
fn unknown_components_are_skipped_or_refused() {
    let mut raw = base();
    raw.records
        .push(RawRecord::pod_u32("ghost", &[1, 3], &[5, 6]));
    raw.records.sort_by_key(|r| r.id);
    let bytes = raw.bytes();
    let ghost = ComponentRef {
        identifier: component_identifier("ghost"),
        name: None,
    };
    assert_eq!(
        verify_with(&bytes, &VerifyOptions::default().refuse_unknown()),
        Err(LevelError::UnknownComponent { component: ghost })
    );
    let registry = registry();
    let level = accept(&bytes, &registry);
    assert_eq!(level.component_types().len(), 4);
    assert_eq!(level.spawn_order().len(), 3);
    assert!(level.spawn_order().all(|c| c.registration().is_some()));
    let skipped = level
        .component_types()
        .find(|c| c.registration().is_none())
        .unwrap();
    assert_eq!(skipped.component_ref(), ghost);
    assert_eq!(skipped.name(), None);
    // Read as raw POD of the stored size, not as another size, and never as postcard.
    assert_eq!(skipped.pod::<u32>().unwrap().as_ref(), [5, 6]);
    assert!(matches!(
        skipped.pod::<u64>(),
        Err(LevelError::EncodingMismatch { .. })
    ));
    assert!(matches!(
        skipped.decode::<String>(),
        Err(LevelError::EncodingMismatch { .. })
    ));
    assert_eq!(
        skipped.instances().unwrap(),
        [&5u32.to_le_bytes()[..], &6u32.to_le_bytes()[..]]
    );
    // The skipped component does not count in the entities' sets: the same three sets.
    assert_eq!(level.sets().len(), 3);
}

#[test]
fn a_refused_set_names_the_entity_and_its_components() {
    let registry = registry();
    let bytes = base().bytes();
    let refuse_link = |regs: &[&Registration]| {
        if regs.iter().any(|r| r.name() == "link") {
            Err("no such signature".to_string())
        } else {
            Ok(7)
        }
    };
    let err = verify(
        &bytes[..],
        &registry,
        refuse_link,
        &VerifyOptions::default(),
    )
    .unwrap_err();
    let mut names = ["pos", "link"];
    names.sort_by_key(|n| component_identifier(n));
    assert_eq!(
        err,
        LevelError::UndeclaredSignature {
            entity: 1,
            components: format!("{{{}, {}}}", names[0], names[1]),
            message: "no such signature".into()
        }
    );
    // Asked once per distinct set, in order of first appearance.
    let mut asked = Vec::new();
    let record_sets = |regs: &[&Registration]| {
        asked.push(regs.len());
        Ok(asked.len() as u32 - 1)
    };
    verify(
        &bytes[..],
        &registry,
        record_sets,
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(asked, [2, 2, 1]);
}

#[test]
fn typed_reads_check_the_registered_type() {
    let registry = registry();
    let bytes = base().bytes();
    let level = accept(&bytes, &registry);
    let pos = level.component("pos").unwrap();
    assert!(matches!(
        pos.pod::<i32>(),
        Err(LevelError::WrongType { .. })
    ));
    assert!(matches!(
        pos.extend_pod::<f32>(&mut Vec::new()),
        Err(LevelError::WrongType { .. })
    ));
    let name = level.component("name").unwrap();
    assert!(matches!(
        name.decode::<Vec<u8>>(),
        Err(LevelError::WrongType { .. })
    ));
}

#[test]
fn the_writer_writes_the_documented_layout() {
    // The base blob's content through `LevelWriter`, pushed out of order: the same bytes as
    // the layout built by hand above.
    let registry = registry();
    let reg = |name| registry.by_name(name).unwrap();
    let mut w = crate::LevelWriter::new();
    w.add_entities(4).unwrap();
    w.set_parent(2, Some(1)).unwrap();
    w.set_parent(1, Some(0)).unwrap();
    w.push(reg("name"), 2, &"bb".to_string()).unwrap();
    for e in [3, 1, 0, 2] {
        w.push(reg("pos"), e, &(10 + e)).unwrap();
    }
    w.push(reg("link"), 1, &Entity::from_bits(0)).unwrap();
    w.push_encoded(reg("name"), 0, &[1, b'a']).unwrap();
    assert_eq!(w.finish().unwrap(), base().bytes());
}

/// Without the `transform` feature, a level with a hierarchy is found (and a spawn refuses it
/// with [`LevelError::NeedsTransform`]); one without is not.
#[cfg(not(feature = "transform"))]
mod without_transform {
    use crate::{
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
        level.first_in_hierarchy()
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
             spawning one needs sigecs-level's `transform` feature: enable it, or pass a \
             spawner that takes `local_transform`"
        );
    }
}
