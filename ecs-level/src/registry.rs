//! [`Registration`] and [`Registry`]: the components a level may hold, each with its level
//! name, identifier, encoding, compile function and spawn order — Bitsquid's
//! `register_component_compiler(name, compile, spawn_order)`, as data.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::Serialize;
use sigecs::world::{ComponentRows, ComponentValue};

use super::codec::{self, describe_wire, CheckFn, CompileFn, EncodeFn, Encoding};
use super::entities::{LocalTransform, MapEntities, NO_ENTITY};
use super::error::{ComponentRef, LevelError};
use super::format::{
    component_identifier, u32_at, DATA_ALIGN, ENCODING_POD, ENCODING_POSTCARD, RECORD_ALIGN,
    RECORD_HEADER_LEN,
};
use sigecs::entity::Entity;

/// Writes a verified record's instances, in order, into the rows a spawn gives the component:
/// the spawner's way to fill store columns. Runs the component's own code (`Deserialize`, a
/// tag's constructor); decoding the verified bytes cannot fail unless that code is not
/// deterministic, which panics (the spawn then drops what was written).
pub(crate) type SpawnFn = fn(&Registration, &ComponentData<'_>, &mut ComponentRows<'_>);
/// Appends the encoding of a component value (the registered type).
pub(crate) type EncodeRawFn = fn(ComponentValue<'_>, &mut Vec<u8>) -> Result<(), String>;
/// An entity map, as the entity-remapping functions take it.
pub(crate) type EntityMapFn<'a> = &'a mut dyn FnMut(Entity) -> Entity;

/// Calls the map on every entity held by `count` stored instances of the registration.
pub(crate) type VisitFn =
    fn(&Registration, &[u8], u32, EntityMapFn<'_>) -> Result<(), (u32, String)>;

/// The entity-remapping functions of a component that holds entities (see [`MapEntities`]).
#[derive(Clone, Copy)]
pub(crate) struct EntityFns {
    /// Calls the map on every entity of the `count` stored instances (for the verifier's check).
    pub(crate) visit: VisitFn,
    /// Maps the entities of every value written into the rows, from level indices to the
    /// spawned entities (entity `i` of the level is `spawned[i]`; [`NO_ENTITY`] stays).
    pub(crate) map_rows: fn(&mut ComponentRows<'_>, &[Entity]),
    /// Clones the value, maps its entities and encodes it with the encode function.
    pub(crate) encode:
        fn(ComponentValue<'_>, EntityMapFn<'_>, EncodeFn, &mut Vec<u8>) -> Result<(), String>,
}

fn visit_entities<T: MapEntities + Serialize + DeserializeOwned + 'static>(
    reg: &Registration,
    data: &[u8],
    count: u32,
    map: EntityMapFn<'_>,
) -> Result<(), (u32, String)> {
    match reg.encoding {
        Encoding::Pod { size, .. } => {
            debug_assert_eq!(size, std::mem::size_of::<T>());
            if size == 0 {
                return Ok(());
            }
            // `Registration::pod` keeps its type's reader; `map_entities` checked `T` is it.
            let read = reg
                .read
                .as_ref()
                .and_then(|r| r.downcast_ref::<fn(&[u8]) -> T>())
                .expect("a plain-old-data registration keeps its reader");
            for chunk in data.chunks_exact(size) {
                read(chunk).map_entities(map);
            }
            Ok(())
        }
        Encoding::Postcard => codec::decode_postcard_each::<T>(data, count, |mut v, _| {
            v.map_entities(map);
        }),
    }
}

/// Maps the entities of every value written into `rows`.
///
/// # Panics
/// When a value holds an entity that is neither [`NO_ENTITY`] nor below `spawned.len()` (the
/// verifier checked the stored bytes; only a `Deserialize` that decodes differently from one
/// time to the next can get here).
fn map_rows<T: MapEntities + 'static>(rows: &mut ComponentRows<'_>, spawned: &[Entity]) {
    let mut map = |e: Entity| -> Entity {
        if e == NO_ENTITY {
            return e;
        }
        match spawned.get(e.to_bits() as usize) {
            Some(&mapped) => mapped,
            None => panic!(
                "entity {e} held by a spawned component is not an entity of the level \
                 (the verified bytes decoded differently)"
            ),
        }
    };
    rows.for_each_mut::<T>(|v| v.map_entities(&mut map));
}

fn encode_mapped<T: MapEntities + Clone + 'static>(
    value: ComponentValue<'_>,
    map: EntityMapFn<'_>,
    encode: EncodeFn,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut v: T = typed::<T>(value)?.clone();
    v.map_entities(map);
    encode(&v, out)
}

/// The value as the registered type `T`.
fn typed<T: 'static>(value: ComponentValue<'_>) -> Result<&T, String> {
    value
        .downcast::<T>()
        .ok_or_else(|| format!("expected a {}", std::any::type_name::<T>()))
}

/// Copies a plain-old-data record into the rows (one copy per run of a column; the record is
/// read in place when the blob is aligned).
fn spawn_pod<T: Pod>(_: &Registration, data: &ComponentData<'_>, rows: &mut ComponentRows<'_>) {
    let values = data
        .pod::<T>()
        .expect("verified as this registration's type");
    rows.extend_from_slice::<T>(&values);
}

/// Decodes a postcard record into the rows, value by value.
fn spawn_postcard<T: DeserializeOwned + 'static>(
    _: &Registration,
    data: &ComponentData<'_>,
    rows: &mut ComponentRows<'_>,
) {
    let mut rest = data.instance_data();
    for i in 0..data.len() {
        match postcard::take_from_bytes::<T>(rest) {
            Ok((value, after)) => {
                rows.push(value);
                rest = after;
            }
            // Only a `Deserialize` that decodes the verified bytes differently from one time
            // to the next gets here: like its panic, nothing is committed.
            Err(e) => panic!(
                "instance {i} of verified component {} did not decode: {e}",
                data.component_ref()
            ),
        }
    }
}

fn encode_raw_pod<T: Pod>(value: ComponentValue<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    out.extend_from_slice(bytemuck::bytes_of(typed::<T>(value)?));
    Ok(())
}

fn encode_raw_postcard<T: Serialize + 'static>(
    value: ComponentValue<'_>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    codec::encode_postcard(typed::<T>(value)?, out)
}

/// Makes one value of a tag per instance, with the registration's constructor.
fn spawn_tag<T: 'static>(
    reg: &Registration,
    data: &ComponentData<'_>,
    rows: &mut ComponentRows<'_>,
) {
    let make = reg
        .make
        .as_ref()
        .and_then(|m| m.downcast_ref::<fn() -> T>())
        .expect("a tag's registration holds its constructor");
    for _ in 0..data.len() {
        rows.push(make());
    }
}

/// A tag has no bytes: checks the value is one.
fn encode_raw_tag<T: 'static>(value: ComponentValue<'_>, _out: &mut Vec<u8>) -> Result<(), String> {
    typed::<T>(value).map(|_| ())
}

/// One component that levels can hold.
///
/// A generated registration is one call: `Registration::pod::<Position>("position")` for a
/// plain-old-data component, `Registration::serde::<Name>("name")` for any other serde type, with
/// `.spawn_order(n)` when it must be spawned before or after others.
#[derive(Clone)]
pub struct Registration {
    name: &'static str,
    identifier: u64,
    spawn_order: i32,
    encoding: Encoding,
    type_id: TypeId,
    type_name: &'static str,
    pub(crate) compile: CompileFn,
    pub(crate) check: CheckFn,
    pub(crate) encode: EncodeFn,
    pub(crate) spawn: SpawnFn,
    pub(crate) encode_raw: EncodeRawFn,
    pub(crate) entities: Option<EntityFns>,
    /// A tag's constructor, a `fn() -> T` ([`Registration::tag`]).
    make: Option<Arc<dyn Any + Send + Sync>>,
    /// A plain-old-data type's reader, a `fn(&[u8]) -> T` ([`Registration::pod`]), for the
    /// code that knows `T` but not that it is `Pod` (the entity check of `map_entities`).
    read: Option<Arc<dyn Any + Send + Sync>>,
    kept_outside: bool,
}

impl Registration {
    /// A plain-old-data component: stored as its in-memory bytes, read in place with no
    /// decoding, compiled from JSON with its `Deserialize` impl.
    ///
    /// ```
    /// use sigecs_level::Registration;
    /// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, serde::Deserialize)]
    /// #[repr(C)]
    /// struct Position { x: f32, y: f32 }
    /// let r = Registration::pod::<Position>("position");
    /// assert_eq!(r.name(), "position");
    /// ```
    pub fn pod<T: Pod + DeserializeOwned>(name: &'static str) -> Self {
        Registration {
            name,
            identifier: component_identifier(name),
            spawn_order: 0,
            encoding: Encoding::Pod {
                size: std::mem::size_of::<T>(),
                align: std::mem::align_of::<T>(),
            },
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            compile: codec::compile_pod::<T>,
            check: codec::check_nothing,
            encode: codec::encode_pod_any::<T>,
            spawn: spawn_pod::<T>,
            encode_raw: encode_raw_pod::<T>,
            entities: None,
            make: None,
            read: Some(Arc::new(
                bytemuck::pod_read_unaligned::<T> as fn(&[u8]) -> T,
            )),
            kept_outside: false,
        }
    }

    /// A component that is not plain old data (`String`, `Vec`, enums with data): encoded with
    /// postcard, compiled from JSON with its `Deserialize` impl. Two things such a type must not
    /// do: use `deserialize_any` (`#[serde(untagged)]`, `#[serde(flatten)]`, `serde_json::Value`
    /// fields), which postcard cannot decode, and be recursive (`Box<Self>`: postcard has no
    /// depth limit, so a crafted blob could overflow the stack).
    pub fn serde<T: Serialize + DeserializeOwned + 'static>(name: &'static str) -> Self {
        Registration {
            name,
            identifier: component_identifier(name),
            spawn_order: 0,
            encoding: Encoding::Postcard,
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            compile: codec::compile_postcard::<T>,
            check: codec::check_postcard::<T>,
            encode: codec::encode_postcard_any::<T>,
            spawn: spawn_postcard::<T>,
            encode_raw: encode_raw_postcard::<T>,
            entities: None,
            make: None,
            read: None,
            kept_outside: false,
        }
    }

    /// A tag: a component without data (a struct with no fields), stored as nothing but the
    /// entities that hold it. It needs no `Pod` and no serde: a spawn makes each value with
    /// `make` (a generated registration passes `|| Frozen {}`). In JSON its value is `true`,
    /// `{}` or `null`; anything else is an error at its path.
    ///
    /// ```
    /// use sigecs_level::{EntityCompiler, Registration, Registry};
    /// struct Frozen;
    /// let registry = Registry::new([Registration::tag("frozen", || Frozen)]).unwrap();
    /// let json = r#"{"entities": [{"components": {"frozen": true}}, {"components": {"frozen": {}}}]}"#;
    /// assert!(EntityCompiler::new(&registry).compile_str(json).is_ok());
    /// ```
    ///
    /// # Panics
    /// When `T` is not zero-sized.
    pub fn tag<T: 'static>(name: &'static str, make: fn() -> T) -> Self {
        assert!(
            std::mem::size_of::<T>() == 0,
            "`{}` is not zero-sized, so it is no tag: register it with `pod` or `serde`",
            std::any::type_name::<T>()
        );
        Registration {
            name,
            identifier: component_identifier(name),
            spawn_order: 0,
            encoding: Encoding::Pod {
                size: 0,
                align: std::mem::align_of::<T>(),
            },
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            compile: codec::compile_tag,
            check: codec::check_nothing,
            encode: codec::encode_tag_any::<T>,
            spawn: spawn_tag::<T>,
            encode_raw: encode_raw_tag::<T>,
            entities: None,
            make: Some(Arc::new(make)),
            read: None,
            kept_outside: false,
        }
    }

    /// Sets the spawn order (default 0): component types spawn in ascending order, ties by
    /// identifier. A component that looks at another one when it is created (Bitsquid's mesh
    /// looking for the transform) gets a larger number than the one it looks at.
    pub fn spawn_order(mut self, order: i32) -> Self {
        self.spawn_order = order;
        self
    }

    /// Marks the component as holding entities (`#[component(map_entities)]`): the verifier
    /// checks each is [`NO_ENTITY`](super::NO_ENTITY) or an entity of the level, the spawner
    /// maps level indices to the spawned entities, save maps them back (see
    /// [`MapEntities`]).
    ///
    /// # Panics
    /// When `T` is not the registered type (a bug in the registration, not in data).
    pub fn map_entities<T: MapEntities + Clone + Serialize + DeserializeOwned + 'static>(
        mut self,
    ) -> Self {
        assert!(
            self.is::<T>(),
            "map_entities::<{}> on the registration of {}",
            std::any::type_name::<T>(),
            self.type_name
        );
        self.entities = Some(EntityFns {
            visit: visit_entities::<T>,
            map_rows: map_rows::<T>,
            encode: encode_mapped::<T>,
        });
        self
    }

    /// Marks the component as kept outside the signature stores: its instances are taken by a
    /// manager (an [`OutsideStores`](super::OutsideStores) spawner: the transform hierarchy, a
    /// structure-of-arrays manager), never by a store. A world's signature check leaves it out of
    /// an entity's set, and a spawn hands its instances to the spawner that
    /// [takes](super::OutsideStores::takes) it.
    pub fn kept_outside(mut self) -> Self {
        self.kept_outside = true;
        self
    }

    /// Whether the component is kept outside the signature stores ([`Registration::kept_outside`]).
    pub fn is_kept_outside(&self) -> bool {
        self.kept_outside
    }

    /// The transform hierarchy's local matrix, [`LocalTransform`] as `"local_transform"`, kept
    /// outside the stores (a [`TransformManager`](sigecs::transform::TransformManager) takes it).
    pub fn local_transform() -> Self {
        Registration::pod::<LocalTransform>(LocalTransform::NAME).kept_outside()
    }

    /// Whether the component holds entities that are remapped ([`Registration::map_entities`]).
    pub fn maps_entities(&self) -> bool {
        self.entities.is_some()
    }

    /// The level name: the key in the JSON's `"components"` object.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The component identifier stored in blobs: [`component_identifier`] of the name.
    pub fn identifier(&self) -> u64 {
        self.identifier
    }

    /// The spawn order.
    pub fn order(&self) -> i32 {
        self.spawn_order
    }

    /// How instances are stored.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The registered Rust type's `TypeId`, so a world can map a registration to its own
    /// component id.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The registered Rust type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Whether `T` is the registered type.
    pub fn is<T: Any>(&self) -> bool {
        self.type_id == TypeId::of::<T>()
    }

    /// How errors name this component.
    pub fn component_ref(&self) -> ComponentRef {
        ComponentRef {
            identifier: self.identifier,
            name: Some(self.name),
        }
    }

    pub(crate) fn wrong_type<T>(&self) -> LevelError {
        LevelError::WrongType {
            component: self.component_ref(),
            expected: self.type_name,
            found: std::any::type_name::<T>(),
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("identifier", &format_args!("{:#018x}", self.identifier))
            .field("spawn_order", &self.spawn_order)
            .field("encoding", &self.encoding)
            .field("type_name", &self.type_name)
            .field("maps_entities", &self.entities.is_some())
            .field("kept_outside", &self.kept_outside)
            .finish()
    }
}

/// The components a level may hold: Bitsquid's `EntityCompiler` registrations, checked once.
///
/// Registrations are kept in identifier order (a registration's index is its position in that
/// order). Building a registry refuses two registrations with one name, two names with one
/// identifier (an FNV-1a collision: rename one), one type under two names, and a POD type larger
/// than the format's 32-bit sizes.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    registrations: Vec<Registration>,
    by_name: FxHashMap<&'static str, usize>,
    by_type: FxHashMap<TypeId, usize>,
}

impl Registry {
    /// A registry of these components.
    pub fn new(registrations: impl IntoIterator<Item = Registration>) -> Result<Self, LevelError> {
        let mut registrations: Vec<Registration> = registrations.into_iter().collect();
        registrations.sort_by(|a, b| a.identifier.cmp(&b.identifier).then(a.name.cmp(b.name)));
        let mut by_name = FxHashMap::default();
        let mut by_type = FxHashMap::default();
        for (i, r) in registrations.iter().enumerate() {
            if let Encoding::Pod { size, .. } = r.encoding {
                if u32::try_from(size).is_err() {
                    return Err(LevelError::TooLarge {
                        what: "a plain-old-data component's size",
                    });
                }
            }
            if by_name.insert(r.name, i).is_some() {
                return Err(LevelError::DuplicateName { name: r.name });
            }
            if i > 0 && registrations[i - 1].identifier == r.identifier {
                return Err(LevelError::IdentifierCollision {
                    first: registrations[i - 1].name,
                    second: r.name,
                    identifier: r.identifier,
                });
            }
            if let Some(j) = by_type.insert(r.type_id, i) {
                return Err(LevelError::DuplicateType {
                    type_name: r.type_name,
                    first: registrations[j].name,
                    second: r.name,
                });
            }
        }
        Ok(Registry {
            registrations,
            by_name,
            by_type,
        })
    }

    /// The registry of a generated world: `registrations` plus the transform hierarchy's
    /// [`LocalTransform`] ([`Registration::local_transform`]). The build script has already refused duplicate
    /// names and identifier collisions at their declarations.
    ///
    /// # Panics
    /// When [`Registry::new`] refuses the list (only a hand-written list can get here).
    pub fn generated(registrations: impl IntoIterator<Item = Registration>) -> Self {
        let all = registrations
            .into_iter()
            .chain([Registration::local_transform()]);
        Registry::new(all).unwrap_or_else(|e| panic!("the generated level registry: {e}"))
    }

    /// A registry of these registrations and `more` (e.g. a generated registry and the
    /// components of the world's structure-of-arrays managers), checked as [`Registry::new`]
    /// checks.
    ///
    /// ```
    /// use sigecs_level::{Registration, Registry};
    /// let base = Registry::new([Registration::pod::<f32>("mass")]).unwrap();
    /// let more = base.with([Registration::pod::<u32>("count").kept_outside()]).unwrap();
    /// assert!(more.by_name("count").unwrap().is_kept_outside());
    /// assert!(base.with([Registration::pod::<u64>("mass")]).is_err(), "one name twice");
    /// ```
    pub fn with(
        &self,
        more: impl IntoIterator<Item = Registration>,
    ) -> Result<Registry, LevelError> {
        Registry::new(self.registrations.iter().cloned().chain(more))
    }

    /// The registration of the type with this `TypeId`.
    pub fn by_type_id(&self, type_id: TypeId) -> Option<&Registration> {
        self.by_type.get(&type_id).map(|&i| &self.registrations[i])
    }

    /// The registrations, in identifier order.
    pub fn registrations(&self) -> &[Registration] {
        &self.registrations
    }

    /// Number of registrations.
    pub fn len(&self) -> usize {
        self.registrations.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.registrations.is_empty()
    }

    /// The index of the registration with this identifier.
    pub fn index_of(&self, identifier: u64) -> Option<usize> {
        self.registrations
            .binary_search_by_key(&identifier, |r| r.identifier)
            .ok()
    }

    /// The registration with this identifier.
    pub fn get(&self, identifier: u64) -> Option<&Registration> {
        self.index_of(identifier).map(|i| &self.registrations[i])
    }

    /// The registration with this level name.
    pub fn by_name(&self, name: &str) -> Option<&Registration> {
        self.by_name.get(name).map(|&i| &self.registrations[i])
    }

    /// The registration of the Rust type `T`.
    pub fn by_type<T: Any>(&self) -> Option<&Registration> {
        self.by_type
            .get(&TypeId::of::<T>())
            .map(|&i| &self.registrations[i])
    }

    /// How errors name the component with this identifier.
    pub fn component_ref(&self, identifier: u64) -> ComponentRef {
        ComponentRef {
            identifier,
            name: self.get(identifier).map(|r| r.name),
        }
    }

    /// The registered names, sorted, comma-separated (for "unknown component" messages).
    pub fn names(&self) -> String {
        let mut names: Vec<&str> = self.registrations.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.join(", ")
    }
}

/// One component type's instances in a verified level: Bitsquid's `ComponentTypeData`, the
/// `(num_instances, entity_index, data)` a component spawner takes.
#[derive(Clone, Copy, Debug)]
pub struct ComponentData<'a> {
    pub(crate) identifier: u64,
    pub(crate) registration: Option<&'a Registration>,
    pub(crate) num_instances: u32,
    pub(crate) code: u32,
    pub(crate) element_size: u32,
    pub(crate) offset: usize,
    pub(crate) entity_index: &'a [u8],
    pub(crate) data: &'a [u8],
}

impl<'a> ComponentData<'a> {
    /// The component identifier.
    pub fn identifier(&self) -> u64 {
        self.identifier
    }

    /// The registration, `None` for an unknown (skipped) component.
    pub fn registration(&self) -> Option<&'a Registration> {
        self.registration
    }

    /// The level name, if registered.
    pub fn name(&self) -> Option<&'static str> {
        self.registration.map(|r| r.name())
    }

    /// How errors name this component.
    pub fn component_ref(&self) -> ComponentRef {
        ComponentRef {
            identifier: self.identifier,
            name: self.name(),
        }
    }

    /// `num_instances`.
    pub fn len(&self) -> u32 {
        self.num_instances
    }

    /// Whether there is no instance.
    pub fn is_empty(&self) -> bool {
        self.num_instances == 0
    }

    /// Whether instances are plain old data.
    pub fn is_pod(&self) -> bool {
        self.code == ENCODING_POD
    }

    /// Bytes per instance for POD, 0 for postcard.
    pub fn element_size(&self) -> u32 {
        self.element_size
    }

    /// Offset of the record in the blob.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Bytes of the whole record, header, indices, data and padding included.
    pub fn record_bytes(&self) -> usize {
        let end_of_index = self.offset + RECORD_HEADER_LEN + self.entity_index.len();
        let data_start = end_of_index.div_ceil(DATA_ALIGN) * DATA_ALIGN;
        (data_start + self.data.len()).div_ceil(RECORD_ALIGN) * RECORD_ALIGN - self.offset
    }

    /// The owning entity of each instance, ascending.
    pub fn entity_indices(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        let index = self.entity_index;
        (0..self.num_instances as usize).map(move |i| u32_at(index, i))
    }

    /// `entity_index` as a slice: borrowed from the blob when it is 4-aligned in memory, copied
    /// otherwise.
    pub fn entity_index(&self) -> Cow<'a, [u32]> {
        match bytemuck::try_cast_slice::<u8, u32>(self.entity_index) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(self.entity_indices().collect()),
        }
    }

    /// `instance_data`, as stored.
    pub fn instance_data(&self) -> &'a [u8] {
        self.data
    }

    /// Each instance's bytes: POD instances by size, postcard instances by decoding with the
    /// registered type (an unknown postcard component cannot be split: an error).
    pub fn instances(&self) -> Result<Vec<&'a [u8]>, LevelError> {
        if self.is_pod() {
            if self.element_size == 0 {
                return Ok(vec![&[][..]; self.num_instances as usize]);
            }
            return Ok(self.data.chunks_exact(self.element_size as usize).collect());
        }
        let reg = self.registration.ok_or(LevelError::UnknownComponent {
            component: self.component_ref(),
        })?;
        let mut lens = Vec::with_capacity(self.num_instances as usize);
        (reg.check)(self.data, self.num_instances, &mut |n| lens.push(n)).map_err(
            |(instance, message)| LevelError::Decode {
                component: self.component_ref(),
                instance,
                message,
            },
        )?;
        let mut rest = self.data;
        Ok(lens
            .into_iter()
            .map(|n| {
                let (head, tail) = rest.split_at(n);
                rest = tail;
                head
            })
            .collect())
    }

    fn check_type<T: 'static>(&self, pod: bool) -> Result<(), LevelError> {
        match self.registration {
            Some(reg) if !reg.is::<T>() => Err(reg.wrong_type::<T>()),
            Some(_) => Ok(()),
            None => {
                let ok = if pod {
                    self.is_pod() && self.element_size as usize == std::mem::size_of::<T>()
                } else {
                    self.code == ENCODING_POSTCARD
                };
                if ok {
                    Ok(())
                } else {
                    let expected = if pod {
                        Encoding::Pod {
                            size: std::mem::size_of::<T>(),
                            align: std::mem::align_of::<T>(),
                        }
                    } else {
                        Encoding::Postcard
                    };
                    Err(LevelError::EncodingMismatch {
                        component: self.component_ref(),
                        expected: expected.to_string(),
                        found: describe_wire(self.code, self.element_size),
                    })
                }
            }
        }
    }

    /// The instances as `&[T]`, read in place when the blob's memory is aligned for `T` (load it
    /// into an [`AlignedBlob`](super::AlignedBlob)), copied with unaligned reads otherwise. `T`
    /// must be the registered type (or, for an unknown component, a POD type of the stored size).
    pub fn pod<T: Pod>(&self) -> Result<Cow<'a, [T]>, LevelError> {
        self.check_type::<T>(true)?;
        if std::mem::size_of::<T>() == 0 {
            return Ok(Cow::Owned(vec![T::zeroed(); self.num_instances as usize]));
        }
        Ok(match bytemuck::try_cast_slice::<u8, T>(self.data) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(
                self.data
                    .chunks_exact(std::mem::size_of::<T>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect(),
            ),
        })
    }

    /// Appends the instances to `out` with one copy of the bytes, whatever the blob's alignment:
    /// the spawner's way to fill a store column.
    pub fn extend_pod<T: Pod>(&self, out: &mut Vec<T>) -> Result<(), LevelError> {
        self.check_type::<T>(true)?;
        let start = out.len();
        out.resize(start + self.num_instances as usize, T::zeroed());
        if std::mem::size_of::<T>() != 0 {
            bytemuck::cast_slice_mut::<T, u8>(&mut out[start..]).copy_from_slice(self.data);
        }
        Ok(())
    }

    /// Decodes every instance of a postcard component, calling `each(entity_index, value)` in
    /// entity order. `T` must be the registered type.
    pub fn decode_each<T: Serialize + DeserializeOwned + 'static>(
        &self,
        mut each: impl FnMut(u32, T),
    ) -> Result<(), LevelError> {
        self.check_type::<T>(false)?;
        let mut entities = self.entity_indices();
        codec::decode_postcard_each::<T>(self.data, self.num_instances, |v, _| {
            if let Some(e) = entities.next() {
                each(e, v);
            }
        })
        .map_err(|(instance, message)| LevelError::Decode {
            component: self.component_ref(),
            instance,
            message,
        })
    }

    /// Decodes every instance of a postcard component, in entity order.
    pub fn decode<T: Serialize + DeserializeOwned + 'static>(&self) -> Result<Vec<T>, LevelError> {
        let mut out = Vec::with_capacity(self.num_instances as usize);
        self.decode_each(|_, v| out.push(v))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_refused() {
        let e = Registry::new([Registration::pod::<u32>("a"), Registration::pod::<u64>("a")])
            .unwrap_err();
        assert_eq!(e, LevelError::DuplicateName { name: "a" });
        let e = Registry::new([Registration::pod::<u32>("a"), Registration::pod::<u32>("b")])
            .unwrap_err();
        assert!(matches!(e, LevelError::DuplicateType { .. }), "{e}");
    }

    #[test]
    fn lookups() {
        let r = Registry::new([
            Registration::pod::<u32>("a"),
            Registration::serde::<String>("name").spawn_order(2),
        ])
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r.by_name("name").unwrap().order(), 2);
        assert_eq!(r.by_type::<u32>().unwrap().name(), "a");
        assert_eq!(r.get(component_identifier("a")).unwrap().name(), "a");
        assert!(r.get(1).is_none());
        assert_eq!(r.names(), "a, name");
        assert!(r
            .registrations()
            .windows(2)
            .all(|w| w[0].identifier() < w[1].identifier()));
        assert!(!r.is_empty() && Registry::default().is_empty());
        let a = r.by_type_id(TypeId::of::<u32>()).unwrap();
        assert_eq!(a.name(), "a");
        assert!(r.by_type_id(TypeId::of::<u64>()).is_none());
        assert_eq!(a.type_name(), "u32");
        assert_eq!(
            r.by_name("name").unwrap().type_name(),
            "alloc::string::String"
        );
    }

    #[test]
    fn a_registration_describes_itself() {
        let link = Registration::pod::<Entity>("link").map_entities::<Entity>();
        assert!(link.maps_entities());
        assert!(!Registration::pod::<u32>("a").maps_entities());
        assert_eq!(
            format!("{link:?}"),
            format!(
                "Registration {{ name: \"link\", identifier: {:#018x}, spawn_order: 0, \
                 encoding: Pod {{ size: {1}, align: {1} }}, type_name: \"{2}\", maps_entities: true, \
                 kept_outside: false }}",
                component_identifier("link"),
                size_of::<Entity>(),
                std::any::type_name::<Entity>()
            )
        );
    }

    #[test]
    fn generated_and_extended_registries() {
        let g = Registry::generated([Registration::pod::<u32>("a")]);
        assert_eq!(g.len(), 2);
        assert!(g.by_name("a").is_some());
        assert!(g.by_type::<LocalTransform>().unwrap().is_kept_outside());
        let more = g.with([Registration::serde::<String>("name")]).unwrap();
        assert_eq!(more.len(), 3);
        assert_eq!(more.by_type::<String>().unwrap().name(), "name");
        assert_eq!(g.len(), 2, "the base is unchanged");
        assert_eq!(
            g.with([Registration::pod::<u64>("a")]).unwrap_err(),
            LevelError::DuplicateName { name: "a" }
        );
    }
}
