//! The verifier: the only way to a [`VerifiedLevel`], the one type a spawner accepts.
//!
//! [`verify`](fn@verify) reads the blob once, front to back, and refuses it (a [`LevelError`], never a
//! panic) unless all of this holds:
//!
//! - the header: magic, version, zero flags and reserved field, `total_len` equal to the bytes
//!   given, and the body's checksum;
//! - every count is capped by the bytes that remain *before* anything is allocated for it, and
//!   every offset and length is computed with checked arithmetic through one bounds-checked
//!   reader;
//! - the parent forest: every parent is [`ROOT`] or an entity of the level, and no chain of
//!   parents comes back to where it started (checked in O(n) without recursion);
//! - records in strictly ascending identifier order (one record per component type), known
//!   encodings, POD sizes that are `num_instances × element_size`, zero padding, no trailing bytes;
//! - every `entity_index < num_entities`, strictly ascending within a record: no entity holds one
//!   component type twice (the bug class of hecs #449 and #465, where a duplicate id from
//!   deserialization became an out-of-bounds write);
//! - a registered component is stored the way it is registered (encoding and POD size), and
//!   every postcard instance decodes to the registered type in its canonical encoding;
//! - an unknown component is skipped by size ([`UnknownComponents::Skip`], the default) or refused
//!   ([`UnknownComponents::Refuse`]);
//! - every entity's set of known components is a declared signature: the caller's
//!   [`Signatures`] is asked once per distinct set and gives a store id or the world's own error
//!   text (a world's check leaves components [kept outside](Registration::kept_outside) the
//!   stores out of the set; the plan gives them no rows).
//!
//! Having accepted a blob, it also plans its spawn once (see `level::plan`): each entity's
//! row among the level's rows of its store, as runs, so that every spawn of the level (a
//! level restart, each prefab instance) skips that per-entity work.
//!
//! Memory: besides the blob, the verifier allocates O(num_entities + num_instances +
//! num_component_types) words, each count already bounded by the blob's length.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::codec::describe_wire;
use super::entities::NO_ENTITY;
use super::error::{ComponentRef, LevelError};
use super::format::{
    checksum, u32_at, CHECKSUM_OFFSET, DATA_ALIGN, ENCODING_POD, ENCODING_POSTCARD, HEADER_LEN,
    MAGIC, RECORD_ALIGN, RECORD_HEADER_LEN, ROOT, VERSION,
};
use super::hierarchy;
use super::plan::{PlanRun, SpawnPlan};
use super::reader::Reader;
use super::registry::{ComponentData, Registration, Registry};
use sigecs::entity::Entity;

/// What the verifier does with a component type the registry does not know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownComponents {
    /// Jump over the whole record (Bitsquid's default): the entities are spawned without it.
    #[default]
    Skip,
    /// Refuse the blob with [`LevelError::UnknownComponent`].
    Refuse,
}

/// Options of [`verify`](fn@verify).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct VerifyOptions {
    /// Unknown component types: skipped (default) or refused.
    pub unknown: UnknownComponents,
}

impl VerifyOptions {
    /// Refuse unknown component types instead of skipping them.
    pub fn refuse_unknown(mut self) -> Self {
        self.unknown = UnknownComponents::Refuse;
        self
    }
}

/// Decides which store an entity with a given set of components goes to — implemented by the
/// world, with the same error text as its `insert` for a set that is no declared signature.
///
/// The verifier calls it once per distinct set of known components (an entity with no known
/// component asks for the empty set). Closures `FnMut(&[&Registration]) -> Result<u32, String>`
/// implement it.
pub trait Signatures {
    /// The store id of the signature that is exactly `components` (sorted by identifier), or why
    /// there is none.
    fn signature_of(&mut self, components: &[&Registration]) -> Result<u32, String>;
}

impl<F: FnMut(&[&Registration]) -> Result<u32, String>> Signatures for F {
    fn signature_of(&mut self, components: &[&Registration]) -> Result<u32, String> {
        self(components)
    }
}

/// Accepts every set, giving each distinct set its own store id (0, 1, 2, … in order of first
/// appearance): for tools that read levels without a world (inspect, tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct AnySet {
    next: u32,
}

impl Signatures for AnySet {
    fn signature_of(&mut self, _components: &[&Registration]) -> Result<u32, String> {
        let id = self.next;
        self.next = self.next.saturating_add(1);
        Ok(id)
    }
}

/// One component type record, as located by the verifier.
#[derive(Clone, Copy, Debug)]
struct Record {
    identifier: u64,
    registration: Option<u32>,
    num_instances: u32,
    code: u32,
    element_size: u32,
    offset: usize,
    index_offset: usize,
    data_offset: usize,
    size: usize,
}

#[derive(Clone, Copy, Debug)]
struct Set {
    start: u32,
    len: u32,
    store: u32,
    entities: u32,
}

/// A blob that [`verify`](fn@verify) accepted, with what it learned: where every record is, each entity's
/// depth and store, and the spawn order. Only [`verify`](fn@verify) constructs one.
///
/// `B` is the blob's storage (`&[u8]`, `Vec<u8>`, an [`AlignedBlob`](super::AlignedBlob), an
/// `Arc<[u8]>`…): a prefab is verified once and spawned many times from the same value.
///
/// A spawner of components kept outside the stores sees it as
/// `VerifiedLevel<'_, dyn AsRef<[u8]>>` (any storage, behind a reference): see
/// [`OutsideSpawn::level`](super::OutsideSpawn::level).
pub struct VerifiedLevel<'r, B: ?Sized> {
    registry: &'r Registry,
    num_entities: u32,
    depth: Vec<u32>,
    roots: u32,
    records: Vec<Record>,
    spawn_order: Vec<u32>,
    entity_set: Vec<u32>,
    sets: Vec<Set>,
    set_components: Vec<u32>,
    plan: SpawnPlan,
    /// [`VerifiedLevel::hierarchy_members`], worked out at the first spawn that needs it.
    hierarchy: OnceLock<Vec<u32>>,
    /// Last, so that a `&VerifiedLevel<'_, B>` coerces to `&VerifiedLevel<'_, dyn …>`.
    blob: B,
}

impl<B: ?Sized> fmt::Debug for VerifiedLevel<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifiedLevel")
            .field("num_entities", &self.num_entities)
            .field("component_types", &self.records.len())
            .field("sets", &self.sets.len())
            .finish_non_exhaustive()
    }
}

/// Verifies `blob` against `registry`, asking `signatures` for each entity's store. See the
/// module docs (in the source) for every check.
///
/// ```
/// use sigecs_level::{verify, AnySet, EntityCompiler, Registration, Registry, VerifyOptions};
/// let registry = Registry::new([Registration::serde::<String>("name")]).unwrap();
/// let blob = EntityCompiler::new(&registry)
///     .compile_str(r#"{"entities": [{"components": {"name": "root"}}, {"parent": 0}]}"#)
///     .unwrap();
/// let level = verify(blob, &registry, AnySet::default(), &VerifyOptions::default()).unwrap();
/// assert_eq!(level.num_entities(), 2);
/// let names: Vec<String> = level.component("name").unwrap().decode().unwrap();
/// assert_eq!(names, ["root"]);
/// ```
pub fn verify<'r, B: AsRef<[u8]>>(
    blob: B,
    registry: &'r Registry,
    mut signatures: impl Signatures,
    options: &VerifyOptions,
) -> Result<VerifiedLevel<'r, B>, LevelError> {
    let bytes = blob.as_ref();
    check_header(bytes)?;

    let mut r = Reader::new(bytes, HEADER_LEN);
    let num_entities = r.u32("num_entities")?;
    let num_types = r.u32("num_component_types")?;
    let parents = r.u32_array(num_entities, "parent_index")?;
    r.zero_pad(RECORD_ALIGN)?;
    if num_types as usize > r.remaining() / RECORD_HEADER_LEN {
        return Err(LevelError::CountTooLarge {
            what: "num_component_types",
            count: num_types as u64,
            offset: r.pos(),
            remaining: r.remaining(),
        });
    }
    let depth = hierarchy::depths(num_entities, |i| u32_at(parents, i as usize))?;
    let roots = (0..num_entities as usize)
        .filter(|&i| u32_at(parents, i) == ROOT)
        .count() as u32;

    let mut records = Vec::with_capacity(num_types as usize);
    let mut previous: Option<u64> = None;
    for _ in 0..num_types {
        records.push(read_record(
            &mut r,
            registry,
            options,
            num_entities,
            &mut previous,
        )?);
    }
    if r.remaining() != 0 {
        return Err(LevelError::TrailingBytes { offset: r.pos() });
    }

    let (entity_set, sets, set_components) =
        assign_sets(bytes, registry, num_entities, &records, &mut signatures)?;

    let spawn_order = spawn_order(registry, &records);
    let plan = spawn_plan(bytes, registry, &records, &entity_set, &sets);

    Ok(VerifiedLevel {
        registry,
        num_entities,
        depth,
        roots,
        records,
        spawn_order,
        entity_set,
        sets,
        set_components,
        plan,
        hierarchy: OnceLock::new(),
        blob,
    })
}

/// Reads and checks one component record (its header, entity index and data) at `r`;
/// `previous` is the last record's identifier (records ascend by identifier).
fn read_record(
    r: &mut Reader<'_>,
    registry: &Registry,
    options: &VerifyOptions,
    num_entities: u32,
    previous: &mut Option<u64>,
) -> Result<Record, LevelError> {
    let offset = r.pos();
    let identifier = r.u64("component_identifier")?;
    let component = registry.component_ref(identifier);
    match *previous {
        Some(p) if p == identifier => return Err(LevelError::DuplicateComponentType { component }),
        Some(p) if p > identifier => {
            return Err(LevelError::UnsortedComponentTypes {
                offset,
                previous: p,
                identifier,
            })
        }
        _ => {}
    }
    *previous = Some(identifier);
    let num_instances = r.u32("num_instances")?;
    let size = r.u32("size")?;
    let code = r.u32("encoding")?;
    let element_size = r.u32("element_size")?;
    match code {
        ENCODING_POD => {
            if num_instances as u64 * element_size as u64 != size as u64 {
                return Err(LevelError::SizeMismatch {
                    component,
                    num_instances,
                    element_size,
                    size,
                });
            }
        }
        ENCODING_POSTCARD if element_size == 0 => {}
        _ => {
            return Err(LevelError::BadEncoding {
                component,
                encoding: code,
                element_size,
            })
        }
    }
    let registration = registry.index_of(identifier);
    match registration {
        Some(i) => {
            let enc = registry.registrations()[i].encoding();
            if !enc.matches(code, element_size) {
                return Err(LevelError::EncodingMismatch {
                    component,
                    expected: enc.to_string(),
                    found: describe_wire(code, element_size),
                });
            }
        }
        None if options.unknown == UnknownComponents::Refuse => {
            return Err(LevelError::UnknownComponent { component })
        }
        None => {}
    }
    let index_offset = r.pos();
    let index = r.u32_array(num_instances, "entity_index")?;
    r.zero_pad(DATA_ALIGN)?;
    let data_offset = r.pos();
    let data = r.take(size as usize, "instance_data")?;
    r.zero_pad(RECORD_ALIGN)?;

    check_entity_index(index, num_instances, num_entities, component)?;
    if let Some(i) = registration {
        let reg = &registry.registrations()[i];
        (reg.check)(data, num_instances, &mut |_| {}).map_err(|(instance, message)| {
            LevelError::Decode {
                component,
                instance,
                message,
            }
        })?;
        if let Some(fns) = reg.entities {
            check_references(fns, reg, data, num_instances, num_entities, component)?;
        }
    }
    Ok(Record {
        identifier,
        registration: registration.map(|i| i as u32),
        num_instances,
        code,
        element_size,
        offset,
        index_offset,
        data_offset,
        size: size as usize,
    })
}

/// The records that spawn (registered ones), in spawn order: by the registration's order, then
/// by identifier.
fn spawn_order(registry: &Registry, records: &[Record]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..records.len() as u32)
        .filter(|&i| records[i as usize].registration.is_some())
        .collect();
    order.sort_by_key(|&i| {
        let rec = &records[i as usize];
        let reg = &registry.registrations()[rec.registration.unwrap_or(0) as usize];
        (reg.order(), rec.identifier)
    });

    order
}

/// The spawn plan: each entity's store, and the rows of each record kept in the stores.
fn spawn_plan(
    bytes: &[u8],
    registry: &Registry,
    records: &[Record],
    entity_set: &[u32],
    sets: &[Set],
) -> SpawnPlan {
    let entity_store: Vec<u32> = entity_set.iter().map(|&s| sets[s as usize].store).collect();
    let indices: Vec<Option<Cow<'_, [u32]>>> = records
        .iter()
        .map(|r| {
            // Components kept outside the stores have no rows to plan.
            let in_stores = |&i: &u32| !registry.registrations()[i as usize].is_kept_outside();
            r.registration.filter(in_stores).map(|_| {
                let index = &bytes[r.index_offset..r.index_offset + 4 * r.num_instances as usize];
                match bytemuck::try_cast_slice::<u8, u32>(index) {
                    Ok(s) => Cow::Borrowed(s),
                    Err(_) => Cow::Owned(
                        (0..r.num_instances as usize)
                            .map(|i| u32_at(index, i))
                            .collect(),
                    ),
                }
            })
        })
        .collect();
    SpawnPlan::new(&entity_store, indices.iter().map(|i| i.as_deref()))
}

fn check_header(bytes: &[u8]) -> Result<(), LevelError> {
    if bytes.len() < MAGIC.len() {
        return Err(LevelError::Truncated {
            what: "magic",
            offset: 0,
            needed: MAGIC.len(),
            available: bytes.len(),
        });
    }
    if bytes[..8] != MAGIC {
        return Err(LevelError::BadMagic);
    }
    let mut r = Reader::new(bytes, 8);
    if bytes.len() < HEADER_LEN {
        return Err(LevelError::Truncated {
            what: "header",
            offset: 0,
            needed: HEADER_LEN,
            available: bytes.len(),
        });
    }
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(LevelError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let flags = r.u32("flags")?;
    if flags != 0 {
        return Err(LevelError::ReservedNonZero {
            what: "flags",
            value: flags as u64,
        });
    }
    let total = r.u32("total_len")?;
    if total as usize != bytes.len() {
        return Err(LevelError::LengthMismatch {
            header: total,
            actual: bytes.len(),
        });
    }
    debug_assert_eq!(r.pos(), CHECKSUM_OFFSET);
    let stored = r.u32("checksum")?;
    let reserved = r.u64("reserved")?;
    if reserved != 0 {
        return Err(LevelError::ReservedNonZero {
            what: "reserved",
            value: reserved,
        });
    }
    let computed = checksum(&bytes[HEADER_LEN..]);
    if stored != computed {
        return Err(LevelError::ChecksumMismatch { stored, computed });
    }
    Ok(())
}

/// Every entity held by a [`map_entities`](Registration::map_entities) component's instances is
/// [`NO_ENTITY`] or below `num_entities`.
fn check_references(
    fns: super::registry::EntityFns,
    reg: &Registration,
    data: &[u8],
    num_instances: u32,
    num_entities: u32,
    component: ComponentRef,
) -> Result<(), LevelError> {
    let mut bad: Option<u64> = None;
    (fns.visit)(reg, data, num_instances, &mut |e: Entity| {
        let bits = u64::from(e.to_bits());
        if e != NO_ENTITY && bits >= u64::from(num_entities) && bad.is_none() {
            bad = Some(bits);
        }
        e
    })
    .map_err(|(instance, message)| LevelError::Decode {
        component,
        instance,
        message,
    })?;
    match bad {
        Some(value) => Err(LevelError::ReferenceOutOfRange {
            component,
            value,
            num_entities,
        }),
        None => Ok(()),
    }
}

fn check_entity_index(
    index: &[u8],
    num_instances: u32,
    num_entities: u32,
    component: ComponentRef,
) -> Result<(), LevelError> {
    let mut prev: Option<u32> = None;
    for i in 0..num_instances {
        let entity = u32_at(index, i as usize);
        if entity >= num_entities {
            return Err(LevelError::EntityIndexOutOfRange {
                component,
                instance: i,
                entity,
                num_entities,
            });
        }
        match prev {
            Some(p) if p == entity => {
                return Err(LevelError::DuplicateComponent { component, entity })
            }
            Some(p) if p > entity => {
                return Err(LevelError::UnsortedInstances {
                    component,
                    instance: i,
                })
            }
            _ => {}
        }
        prev = Some(entity);
    }
    Ok(())
}

type SetTables = (Vec<u32>, Vec<Set>, Vec<u32>);

/// Groups entities by their set of known components (a CSR table of registry indices per
/// entity, then one hash lookup per entity) and asks `signatures` once per distinct set.
fn assign_sets(
    bytes: &[u8],
    registry: &Registry,
    num_entities: u32,
    records: &[Record],
    signatures: &mut impl Signatures,
) -> Result<SetTables, LevelError> {
    let n = num_entities as usize;
    let known = || {
        records
            .iter()
            .filter_map(|r| r.registration.map(|reg| (r, reg)))
    };
    let index_of =
        |r: &Record| &bytes[r.index_offset..r.index_offset + 4 * r.num_instances as usize];

    // offsets[e]..offsets[e + 1] is entity e's slice of `flat`. Totals are bounded by the blob's
    // length (4 bytes per instance), so u32 cannot overflow.
    let mut offsets = vec![0u32; n + 1];
    for (r, _) in known() {
        let index = index_of(r);
        for i in 0..r.num_instances as usize {
            offsets[u32_at(index, i) as usize + 1] += 1;
        }
    }
    for e in 0..n {
        offsets[e + 1] += offsets[e];
    }
    let mut cursor = offsets[..n].to_vec();
    let mut flat = vec![0u32; offsets[n] as usize];
    // Records ascend by identifier and registry indices follow identifiers: each entity's slice
    // comes out sorted.
    for (r, reg) in known() {
        let index = index_of(r);
        for i in 0..r.num_instances as usize {
            let e = u32_at(index, i) as usize;
            flat[cursor[e] as usize] = reg;
            cursor[e] += 1;
        }
    }
    drop(cursor);

    let mut entity_set = Vec::with_capacity(n);
    let mut sets: Vec<Set> = Vec::new();
    let mut set_components: Vec<u32> = Vec::new();
    let mut lookup: FxHashMap<&[u32], u32> = FxHashMap::default();
    let mut regs: Vec<&Registration> = Vec::new();
    for e in 0..n {
        let key = &flat[offsets[e] as usize..offsets[e + 1] as usize];
        let id = match lookup.get(key) {
            Some(&id) => id,
            None => {
                regs.clear();
                regs.extend(key.iter().map(|&i| &registry.registrations()[i as usize]));
                let store = signatures.signature_of(&regs).map_err(|message| {
                    LevelError::UndeclaredSignature {
                        entity: e as u32,
                        components: set_text(&regs),
                        message,
                    }
                })?;
                let id = sets.len() as u32;
                sets.push(Set {
                    start: set_components.len() as u32,
                    len: key.len() as u32,
                    store,
                    entities: 0,
                });
                set_components.extend_from_slice(key);
                lookup.insert(key, id);
                id
            }
        };
        sets[id as usize].entities += 1;
        entity_set.push(id);
    }
    Ok((entity_set, sets, set_components))
}

fn set_text(regs: &[&Registration]) -> String {
    let names: Vec<&str> = regs.iter().map(|r| r.name()).collect();
    format!("{{{}}}", names.join(", "))
}

/// One distinct set of known components in a verified level, with the store the
/// [`Signatures`] gave it and how many entities have it.
#[derive(Clone, Debug)]
pub struct ComponentSet<'r> {
    /// The components, sorted by identifier.
    pub components: Vec<&'r Registration>,
    /// The store id the world gave this set.
    pub store: u32,
    /// Entities with exactly this set.
    pub entities: u32,
}

impl fmt::Display for ComponentSet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&set_text(&self.components))
    }
}

impl<B> VerifiedLevel<'_, B> {
    /// The blob's storage, given back.
    pub fn into_inner(self) -> B {
        self.blob
    }
}

impl<'r, B: AsRef<[u8]> + ?Sized> VerifiedLevel<'r, B> {
    /// The blob's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.blob.as_ref()
    }

    /// The registry it was verified against.
    pub fn registry(&self) -> &'r Registry {
        self.registry
    }

    /// Number of entities (`num_entities`).
    pub fn num_entities(&self) -> u32 {
        self.num_entities
    }

    /// The parent of entity `e`, `None` for a root or an index out of range.
    pub fn parent(&self, e: u32) -> Option<u32> {
        if e >= self.num_entities {
            return None;
        }
        let p = u32_at(&self.bytes()[HEADER_LEN + 8..], e as usize);
        (p != ROOT).then_some(p)
    }

    /// Every entity's parent, in entity order.
    pub fn parents(&self) -> impl ExactSizeIterator<Item = Option<u32>> + '_ {
        (0..self.num_entities).map(|e| self.parent(e))
    }

    /// Depth of entity `e` in the hierarchy (0 for a root), `None` out of range.
    pub fn depth_of(&self, e: u32) -> Option<u32> {
        self.depth.get(e as usize).copied()
    }

    /// Number of root entities.
    pub fn roots(&self) -> u32 {
        self.roots
    }

    /// Depth of the hierarchy, counted in generations: 0 with no entity, 1 when every entity
    /// is a root, 2 when the deepest entity has a parent and no grandparent.
    pub fn depth(&self) -> u32 {
        self.depth.iter().max().map_or(0, |d| d + 1)
    }

    /// Entity indices ordered so that every parent comes before its children (by depth, then
    /// index): the order in which a spawner links the hierarchy.
    pub fn parents_first(&self) -> Vec<u32> {
        // A counting sort by depth, in O(num_entities): entities of one depth keep index order.
        let depth = self.depth() as usize;
        let mut start = vec![0u32; depth + 1];
        for &d in &self.depth {
            start[d as usize + 1] += 1;
        }
        for l in 0..depth {
            start[l + 1] += start[l];
        }
        let mut order = vec![0u32; self.depth.len()];
        for (e, &d) in self.depth.iter().enumerate() {
            let slot = &mut start[d as usize];
            order[*slot as usize] = e as u32;
            *slot += 1;
        }
        order
    }

    /// The entities that get a transform instance when the level spawns — those with a
    /// `local_transform`, a parent or a child — parents first (the order of
    /// [`parents_first`](VerifiedLevel::parents_first)). Worked out once, at the first call,
    /// so every spawn of a prefab reuses it.
    pub fn hierarchy_members(&self) -> &[u32] {
        self.hierarchy.get_or_init(|| {
            let mut member = vec![false; self.num_entities as usize];
            let local = self
                .registry
                .by_type::<super::LocalTransform>()
                .and_then(|r| self.component(r.name()));
            if let Some(data) = local {
                for e in data.entity_indices() {
                    member[e as usize] = true;
                }
            }
            for (e, p) in self.parents().enumerate() {
                if let Some(p) = p {
                    member[e] = true;
                    member[p as usize] = true;
                }
            }
            let mut order = self.parents_first();
            order.retain(|&e| member[e as usize]);
            order
        })
    }

    /// The store id [`Signatures`] gave entity `e`'s set, `None` out of range.
    pub fn entity_store(&self, e: u32) -> Option<u32> {
        let set = *self.entity_set.get(e as usize)?;
        Some(self.sets[set as usize].store)
    }

    /// The first entity in a hierarchy (one with a parent or a `local_transform`), if any:
    /// without the `transform` feature a spawn has nowhere to put it, so it refuses the level
    /// instead of dropping the hierarchy.
    #[cfg(not(feature = "transform"))]
    pub(crate) fn first_in_hierarchy(&self) -> Option<u32> {
        let parented = self.parents().position(|p| p.is_some()).map(|e| e as u32);
        let local = self
            .registry()
            .by_type::<super::LocalTransform>()
            .and_then(|r| self.component(r.name()))
            .and_then(|d| d.entity_indices().next());
        parented.into_iter().chain(local).min()
    }

    /// The spawn plan: rows and runs worked out once (see `plan.rs`).
    pub(crate) fn plan(&self) -> &SpawnPlan {
        &self.plan
    }

    /// The distinct sets of known components, in order of first appearance.
    pub fn sets(&self) -> impl ExactSizeIterator<Item = ComponentSet<'r>> + '_ {
        let regs = self.registry.registrations();
        self.sets.iter().map(move |s| ComponentSet {
            components: self.set_components[s.start as usize..(s.start + s.len) as usize]
                .iter()
                .map(|&i| &regs[i as usize])
                .collect(),
            store: s.store,
            entities: s.entities,
        })
    }

    /// Entities per store id, sorted by store id: what a spawner reserves, once per store.
    pub fn store_counts(&self) -> Vec<(u32, u32)> {
        self.plan.stores.clone()
    }

    fn data(&self, rec: &Record) -> ComponentData<'_> {
        let bytes = self.bytes();
        ComponentData {
            identifier: rec.identifier,
            registration: rec
                .registration
                .map(|i| &self.registry.registrations()[i as usize]),
            num_instances: rec.num_instances,
            code: rec.code,
            element_size: rec.element_size,
            offset: rec.offset,
            entity_index: &bytes
                [rec.index_offset..rec.index_offset + 4 * rec.num_instances as usize],
            data: &bytes[rec.data_offset..rec.data_offset + rec.size],
        }
    }

    /// Every component type record, known or not, in the blob's (identifier) order.
    pub fn component_types(&self) -> impl ExactSizeIterator<Item = ComponentData<'_>> + '_ {
        self.records.iter().map(|r| self.data(r))
    }

    /// The known component types in spawn order: ascending [`Registration::order`], ties by
    /// identifier. Unknown (skipped) types are not in it.
    pub fn spawn_order(&self) -> impl ExactSizeIterator<Item = ComponentData<'_>> + '_ {
        self.spawn_order
            .iter()
            .map(|&i| self.data(&self.records[i as usize]))
    }

    /// [`VerifiedLevel::spawn_order`], each type with its runs in the
    /// [plan](VerifiedLevel::plan).
    pub(crate) fn spawn_runs(
        &self,
    ) -> impl ExactSizeIterator<Item = (ComponentData<'_>, &[PlanRun])> + '_ {
        self.spawn_order.iter().map(|&i| {
            (
                self.data(&self.records[i as usize]),
                self.plan.runs(i as usize),
            )
        })
    }

    /// The record of the component with this level name, if the blob has one.
    pub fn component(&self, name: &str) -> Option<ComponentData<'_>> {
        let id = super::format::component_identifier(name);
        let i = self
            .records
            .binary_search_by_key(&id, |r| r.identifier)
            .ok()?;
        Some(self.data(&self.records[i]))
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
