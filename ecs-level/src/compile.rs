//! [`EntityCompiler`]: JSON levels and prefabs to blobs — Bitsquid's `EntityCompiler`, whose
//! registrations are the [`Registry`].
//!
//! The input's shape is in [`EntityCompiler`]'s docs.
//!
//! ## Memory
//!
//! The document is never held as a tree. [`EntityCompiler::compile_str`] reads the text twice:
//! a first pass checks that it is JSON with no key twice in an object and counts the entities
//! (so that parents and entity references are checked against the level's size as they are
//! read); the second reads the entities one by one, each component's value as a small
//! `serde_json::Value` that is compiled and dropped. What stays is what the blob needs: each
//! instance's bytes, 8 bytes of bookkeeping per instance and 4 per entity, then the blob,
//! which takes the component types' buffers over one by one. On a 1,005,700-entity level of the
//! bundled world (`scripts/make_level.py --scale 89`, 134 MB of JSON, a 68 MB blob), the
//! `compile` command's peak resident memory is 232 MB with the text it read: 1.7× the input
//! (a `Value` of the document made it 2.2 GB).

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashSet;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::error::LevelError;
use super::registry::{Registration, Registry};
use super::write::LevelWriter;

/// The most errors one compile reports.
const MAX_ERRORS: usize = 100;

/// One problem in a JSON level: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    /// The JSON path, e.g. `entities[3].components.velocity.x` (empty for the document itself).
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Why a JSON level did not compile: every problem found, each with its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// The problems, in entity order (at most [`CompileError::MAX_ERRORS`]).
    pub errors: Vec<PathError>,
    /// Problems found beyond [`CompileError::MAX_ERRORS`] and not listed.
    pub more: usize,
}

impl CompileError {
    /// The most errors one compile lists; it counts the others in [`CompileError::more`].
    pub const MAX_ERRORS: usize = MAX_ERRORS;

    fn one(path: impl Into<String>, message: impl Into<String>) -> Self {
        CompileError {
            errors: vec![PathError {
                path: path.into(),
                message: message.into(),
            }],
            more: 0,
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        if self.more > 0 {
            write!(f, "\n… and {} more", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for CompileError {}

/// Errors in the order they are listed: at most [`MAX_ERRORS`], the rest counted.
#[derive(Default)]
struct Errors {
    list: Vec<PathError>,
    more: usize,
}

impl Errors {
    fn push(&mut self, path: String, message: String) {
        self.push_error(PathError { path, message });
    }

    fn push_error(&mut self, e: PathError) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(e);
        } else {
            self.more += 1;
        }
    }
}

/// Errors found in an object in document order and listed in key order (how the compiler
/// listed them when it read a whole `serde_json::Value`, whose objects iterate in key order).
/// Keys are unique (the first pass refused a key twice). At most [`MAX_ERRORS`] are kept, the
/// first in key order; the others are only counted, since they could never be listed.
#[derive(Default)]
struct KeyOrdered {
    list: Vec<(String, PathError)>,
    dropped: usize,
}

impl KeyOrdered {
    fn push(&mut self, key: &str, path: String, message: String) {
        self.list
            .push((key.to_string(), PathError { path, message }));
        if self.list.len() >= 2 * MAX_ERRORS {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.list.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        self.dropped += self.list.len().saturating_sub(MAX_ERRORS);
        self.list.truncate(MAX_ERRORS);
    }

    /// Appends the errors, in key order, to `errors`.
    fn drain_into(mut self, errors: &mut Errors) {
        self.trim();
        for (_, e) in self.list {
            errors.push_error(e);
        }
        errors.more += self.dropped;
    }
}

/// An object key, borrowed from the text unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

/// Reads the rest of an array and ignores it.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Reads the rest of an object and ignores it.
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// For a visitor that expects one kind of JSON value and reports any other by its kind ("a
/// number", "an array") through its `other` method: the `visit_*` methods of the other kinds.
/// Arrays and objects are read to their end.
macro_rules! other_kinds {
    (scalars) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(self.other("a boolean"))
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(self.other("a number"))
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(self.other("a number"))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(self.other("a number"))
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(self.other("a string"))
        }
    };
    (null) => {
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(self.other("null"))
        }
    };
    (array) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            skip_seq(seq)?;
            Ok(self.other("an array"))
        }
    };
    (object) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            skip_map(map)?;
            Ok(self.other("an object"))
        }
    };
}

/// Compiles JSON levels with a registry's compile functions.
///
/// # Input
///
/// ```json
/// {
///   "entities": [
///     { "components": { "position": { "x": 0, "y": 0, "z": 0 }, "name": "ship" } },
///     { "parent": 0, "components": { "position": { "x": 1, "y": 0, "z": 0 } } },
///     { "parent": null }
///   ]
/// }
/// ```
///
/// - The top level is an object with one key, `"entities"`: an array. An entity's index in it is
///   its index in the blob (errors from the verifier name the same indices).
/// - An entity is an object with two optional keys: `"parent"`, the index of another entity or
///   `null`/absent for a root (parents may come after their children), and `"components"`, an
///   object from level names to values; absent means no component.
/// - Each component value is whatever the registered type's `Deserialize` accepts (through
///   `serde_json`): a struct as an object, a newtype as its inner value, and so on. Two things
///   serde alone would let through are refused, in every registered type: a number that is
///   out of range for an `f32` field (it would become infinite), and an
///   [`Entity`](sigecs::entity::Entity) that is not an index of the level's entities (or
///   [`NO_ENTITY`](crate::NO_ENTITY)'s bits, for none). Each is an error at its path that says
///   what range is valid. A tag ([`Registration::tag`]) takes `true`, `{}` or `null`.
///
/// Unknown keys are errors, as are unregistered component names: a typo in a level is reported,
/// never silently dropped. A key twice in one object is refused with its line. Every other
/// error names its JSON path (`entities[3].components.velocity.x`) and what was expected; the
/// compiler reports all of them (up to [`CompileError::MAX_ERRORS`]), not only the first: in
/// entity order, and within an object in key order.
///
/// Each component is compiled on its own by its registration's compile function; the blob then
/// holds each component type's instances together, in canonical order. Spawn order is the
/// registrations' business, applied when spawning.
///
/// # Example
///
/// ```
/// use sigecs_level::{EntityCompiler, Registration, Registry};
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, serde::Deserialize)]
/// #[repr(C)]
/// struct Velocity { x: f32, y: f32 }
/// let registry = Registry::new([Registration::pod::<Velocity>("velocity")]).unwrap();
/// let compiler = EntityCompiler::new(&registry);
/// let err = compiler
///     .compile_str(r#"{"entities": [{}, {"components": {"velocity": {"x": "fast", "y": 0}}}]}"#)
///     .unwrap_err();
/// assert_eq!(err.errors[0].path, "entities[1].components.velocity.x");
/// assert!(err.to_string().contains("expected f32"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct EntityCompiler<'r> {
    registry: &'r Registry,
}

impl<'r> EntityCompiler<'r> {
    /// A compiler for the components of `registry`.
    pub fn new(registry: &'r Registry) -> Self {
        EntityCompiler { registry }
    }

    /// Parses `text` as JSON and compiles it (see the [type's docs](Self) for its shape). It
    /// reads the text twice and holds no document tree: a first pass checks it is JSON with no
    /// key twice and counts the entities, the second compiles one entity at a time.
    pub fn compile_str(&self, text: &str) -> Result<Vec<u8>, CompileError> {
        let count = first_pass(text)?;
        let mut writer = LevelWriter::new();
        let num_entities = match count.map_or(Ok(0), u32::try_from) {
            Ok(n) if writer.add_entities(n).is_ok() => n,
            _ => return Err(CompileError::one("entities", "too many entities")),
        };
        let mut state = State {
            registry: self.registry,
            num_entities,
            writer,
            scratch: Vec::new(),
            top_keys: KeyOrdered::default(),
            not_an_object: None,
            entities_error: None,
            errors: Errors::default(),
        };
        let mut de = serde_json::Deserializer::from_str(text);
        // The first pass read the same text without an error, so this one has none of its own.
        DocumentSeed(&mut state)
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .map_err(|e| CompileError::one("", format!("not valid JSON: {e}")))?;
        state.finish()
    }

    /// Compiles a JSON document held as a [`Value`] (see the module docs (in the source) for its
    /// shape): writes it out as text and compiles that with
    /// [`compile_str`](Self::compile_str).
    pub fn compile(&self, json: &Value) -> Result<Vec<u8>, CompileError> {
        self.compile_str(&json.to_string())
    }
}

/// The first pass: reads the whole text as `serde_json::from_str::<Value>` would, without
/// building anything, refusing what is not JSON and an object with a key twice (JSON allows it
/// and a `Value` keeps the last; in a level it is almost always a mistake, two `position`s).
/// Returns the length of the top-level `"entities"` array, if there is one, so that the second
/// pass knows the valid entity indices from the first entity on.
fn first_pass(text: &str) -> Result<Option<usize>, CompileError> {
    let walk = |unique| {
        let mut de = serde_json::Deserializer::from_str(text);
        let count = Walk {
            unique,
            role: Role::Document,
        }
        .deserialize(&mut de)?;
        de.end().map(|()| count)
    };
    match walk(true) {
        Ok(count) => Ok(count),
        // A key twice (the walk's only error of its own): text that is not JSON further on is
        // reported instead, as when the text was parsed before keys were looked at.
        Err(twice) if twice.classify() == serde_json::error::Category::Data => match walk(false) {
            Err(e) => Err(CompileError::one("", format!("not valid JSON: {e}"))),
            Ok(_) => Err(CompileError::one("", twice.to_string())),
        },
        Err(e) => Err(CompileError::one("", format!("not valid JSON: {e}"))),
    }
}

/// Where a [`Walk`] is in the document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The document itself.
    Document,
    /// The top-level `"entities"` value: its length is counted.
    Entities,
    /// Any other value.
    Other,
}

/// Walks one JSON value and what it holds (see [`first_pass`]); its value is the length of
/// the `"entities"` array when it walks the document.
struct Walk {
    /// Refuse an object with a key twice.
    unique: bool,
    role: Role,
}

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<usize>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<usize>, A::Error> {
        let mut count = 0;
        let element = || Walk {
            unique: self.unique,
            role: Role::Other,
        };
        while seq.next_element_seed(element())?.is_some() {
            count += 1;
        }
        Ok((self.role == Role::Entities).then_some(count))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<usize>, A::Error> {
        let mut keys = KeySet::default();
        let mut count = None;
        while let Some(Key(key)) = map.next_key()? {
            let entities = self.role == Role::Document && key == "entities";
            if self.unique && !keys.insert(key) {
                // `insert` gave the key back.
                let key = keys.refused.take().unwrap_or_default();
                return Err(serde::de::Error::custom(format!(
                    "key `{key}` appears twice in one object"
                )));
            }
            let role = if entities {
                Role::Entities
            } else {
                Role::Other
            };
            let walked = map.next_value_seed(Walk {
                unique: self.unique,
                role,
            })?;
            if entities {
                count = walked;
            }
        }
        Ok(count)
    }
}

/// The keys of one object so far: a short list while the object is small (most are), a hash
/// set beyond.
#[derive(Default)]
struct KeySet<'de> {
    few: Vec<Cow<'de, str>>,
    many: FxHashSet<Cow<'de, str>>,
    /// The key `insert` refused.
    refused: Option<Cow<'de, str>>,
}

impl<'de> KeySet<'de> {
    /// Adds `key`; false (and the key kept in `refused`) if the object already had it.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        const FEW: usize = 8;
        if self.many.is_empty() {
            if self.few.contains(&key) {
                self.refused = Some(key);
                return false;
            }
            if self.few.len() < FEW {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        if self.many.contains(&key) {
            self.refused = Some(key);
            return false;
        }
        self.many.insert(key)
    }
}

/// The second pass's state: the blob being written and the errors found.
struct State<'r> {
    registry: &'r Registry,
    /// The length of the `"entities"` array (the first pass counted it).
    num_entities: u32,
    writer: LevelWriter,
    /// One component's compiled bytes.
    scratch: Vec<u8>,
    /// Unknown keys of the document, listed first.
    top_keys: KeyOrdered,
    /// The kind of the document when it is not an object.
    not_an_object: Option<&'static str>,
    /// `"entities"` missing or not an array, listed after `top_keys`.
    entities_error: Option<PathError>,
    /// The entities' errors, in entity order.
    errors: Errors,
}

impl State<'_> {
    /// Sets entity `i`'s parent, or says what is wrong with `p`.
    fn parent(&mut self, i: u32, p: &Value) -> Option<PathError> {
        let n = self.num_entities;
        let error = |message| {
            Some(PathError {
                path: format!("entities[{i}].parent"),
                message,
            })
        };
        match p {
            Value::Null => None,
            p => match p.as_u64() {
                Some(q) if q < u64::from(n) && q != u64::from(i) => {
                    // In range, so it fits u32; the forest is checked by `finish`.
                    let _ = self.writer.set_parent(i, Some(q as u32));
                    None
                }
                Some(q) if q == u64::from(i) => {
                    error("an entity cannot be its own parent".to_string())
                }
                _ => error(format!(
                    "expected null or an entity index below {n}, found {p}"
                )),
            },
        }
    }

    /// Compiles component `reg` of entity `i` (named `name` in the JSON) from its value; an
    /// error is added to `errors`.
    fn component(
        &mut self,
        reg: &Registration,
        i: u32,
        name: &str,
        value: &Value,
        errors: &mut KeyOrdered,
    ) {
        // Paths are formatted only for errors: a valid level builds no path strings.
        let path = || format!("entities[{i}].components.{name}");
        self.scratch.clear();
        match (reg.compile)(value, self.num_entities, &mut self.scratch) {
            Ok(()) => {
                // The compile function wrote one canonical instance: no re-check.
                if let Err(e) = self.writer.push_compiled(reg, i, &self.scratch) {
                    errors.push(name, path(), e.to_string());
                }
            }
            Err(e) => {
                let full = if e.path.is_empty() {
                    path()
                } else if e.path.starts_with('[') {
                    format!("{}{}", path(), e.path)
                } else {
                    format!("{}.{}", path(), e.path)
                };
                errors.push(name, full, e.message);
            }
        }
    }

    /// The blob, or every error in order: the document's keys, `"entities"`, then the
    /// entities'.
    fn finish(self) -> Result<Vec<u8>, CompileError> {
        if let Some(kind) = self.not_an_object {
            return Err(CompileError::one(
                "",
                format!("expected an object with an \"entities\" array, found {kind}"),
            ));
        }
        let mut all = Errors::default();
        self.top_keys.drain_into(&mut all);
        if let Some(e) = self.entities_error {
            all.push_error(e);
        }
        for e in self.errors.list {
            all.push_error(e);
        }
        all.more += self.errors.more;
        if !all.list.is_empty() {
            return Err(CompileError {
                errors: all.list,
                more: all.more,
            });
        }
        self.writer.finish().map_err(|e| match e {
            LevelError::ParentCycle { entity, cycle, len } => CompileError::one(
                format!("entities[{entity}].parent"),
                format!(
                    "the chain of parents from this entity comes back to it (a cycle: {})",
                    super::error::cycle_text(entity, &cycle, len)
                ),
            ),
            other => CompileError::one("", other.to_string()),
        })
    }
}

/// The document: an object with an `"entities"` array.
struct DocumentSeed<'s, 'r>(&'s mut State<'r>);

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl DocumentSeed<'_, '_> {
    fn other(self, kind: &'static str) {
        self.0.not_an_object = Some(kind);
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with an \"entities\" array")
    }

    other_kinds!(scalars);
    other_kinds!(null);
    other_kinds!(array);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let state = self.0;
        let mut entities = false;
        while let Some(Key(key)) = map.next_key()? {
            if key == "entities" {
                entities = true;
                map.next_value_seed(EntitiesSeed(&mut *state))?;
            } else {
                state.top_keys.push(
                    &key,
                    key.to_string(),
                    "unknown key: expected only \"entities\"".into(),
                );
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !entities {
            state.entities_error = Some(PathError {
                path: String::new(),
                message: "missing key \"entities\" (an array of entities)".into(),
            });
        }
        Ok(())
    }
}

/// The `"entities"` array: each entity is compiled as it is read.
struct EntitiesSeed<'s, 'r>(&'s mut State<'r>);

impl<'de> DeserializeSeed<'de> for EntitiesSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl EntitiesSeed<'_, '_> {
    fn other(self, kind: &'static str) {
        self.0.entities_error = Some(PathError {
            path: "entities".into(),
            message: format!("expected an array, found {kind}"),
        });
    }
}

impl<'de> Visitor<'de> for EntitiesSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of entities")
    }

    other_kinds!(scalars);
    other_kinds!(null);
    other_kinds!(object);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let state = self.0;
        let mut index = 0u32;
        while seq
            .next_element_seed(EntitySeed {
                state: &mut *state,
                index,
            })?
            .is_some()
        {
            // Below the count of the first pass, which fits u32.
            index = index.wrapping_add(1);
        }
        Ok(())
    }
}

/// One entity: `"parent"` and `"components"`.
struct EntitySeed<'s, 'r> {
    state: &'s mut State<'r>,
    index: u32,
}

impl<'de> DeserializeSeed<'de> for EntitySeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl EntitySeed<'_, '_> {
    fn other(self, kind: &'static str) {
        self.state.errors.push(
            format!("entities[{}]", self.index),
            format!("expected an entity object, found {kind}"),
        );
    }
}

impl<'de> Visitor<'de> for EntitySeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity object")
    }

    other_kinds!(scalars);
    other_kinds!(null);
    other_kinds!(array);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (state, i) = (self.state, self.index);
        // Listed as before: unknown keys, the parent, the components.
        let mut unknown = KeyOrdered::default();
        let mut parent = None;
        let mut components = KeyOrdered::default();
        while let Some(Key(key)) = map.next_key()? {
            match &*key {
                "parent" => {
                    let p: Value = map.next_value()?;
                    parent = state.parent(i, &p);
                }
                "components" => map.next_value_seed(ComponentsSeed {
                    state: &mut *state,
                    index: i,
                    errors: &mut components,
                })?,
                _ => {
                    unknown.push(
                        &key,
                        format!("entities[{i}].{key}"),
                        "unknown key: an entity has \"parent\" and \"components\"".into(),
                    );
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        unknown.drain_into(&mut state.errors);
        if let Some(e) = parent {
            state.errors.push_error(e);
        }
        components.drain_into(&mut state.errors);
        Ok(())
    }
}

/// An entity's `"components"` object: each component is compiled as it is read.
struct ComponentsSeed<'s, 'r, 'e> {
    state: &'s mut State<'r>,
    index: u32,
    errors: &'e mut KeyOrdered,
}

impl<'de> DeserializeSeed<'de> for ComponentsSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl ComponentsSeed<'_, '_, '_> {
    fn other(self, kind: &'static str) {
        self.errors.push(
            "",
            format!("entities[{}].components", self.index),
            format!("expected an object of components, found {kind}"),
        );
    }
}

impl<'de> Visitor<'de> for ComponentsSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of components")
    }

    other_kinds!(scalars);
    other_kinds!(array);

    /// `null`: no component.
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let registry = self.state.registry;
        while let Some(Key(name)) = map.next_key()? {
            if let Some(reg) = registry.by_name(&name) {
                // One component's value at a time, never the document's tree.
                let value: Value = map.next_value()?;
                self.state
                    .component(reg, self.index, &name, &value, self.errors);
            } else {
                map.next_value::<IgnoredAny>()?;
                self.errors.push(
                    &name,
                    format!("entities[{}].components.{name}", self.index),
                    format!(
                        "unknown component `{name}`; registered: {}",
                        registry.names()
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
