//! [`EntityCompiler`]: JSON levels and prefabs to blobs — the seed's `EntityCompiler`, whose
//! registrations are the [`Registry`].
//!
//! ## Input
//!
//! ```json
//! {
//!   "entities": [
//!     { "components": { "position": { "x": 0, "y": 0, "z": 0 }, "name": "ship" } },
//!     { "parent": 0, "components": { "position": { "x": 1, "y": 0, "z": 0 } } },
//!     { "parent": null }
//!   ]
//! }
//! ```
//!
//! - The top level is an object with one key, `"entities"`: an array. An entity's index in it is
//!   its index in the blob (errors from the verifier name the same indices).
//! - An entity is an object with two optional keys: `"parent"`, the index of another entity or
//!   `null`/absent for a root (parents may come after their children), and `"components"`, an
//!   object from resource names to values; absent means no component.
//! - Each component value is whatever the registered type's `Deserialize` accepts (through
//!   `serde_json`): a struct as an object, a newtype as its inner value, and so on.
//!
//! Unknown keys are errors, as are unregistered component names: a typo in a level is reported,
//! never silently dropped. Every error names its JSON path (`entities[3].components.velocity.x`)
//! and what was expected; the compiler reports all of them (up to [`MAX_ERRORS`]), not only the
//! first.
//!
//! Each component is compiled on its own by its registration's compile function; the blob then
//! holds each component type's instances together, in canonical order (see
//! [`format`](mod@super::format)). Spawn order is the registrations' business, applied when spawning.

use std::fmt;

use serde_json::Value;

use super::error::ResourceError;
use super::registry::Registry;
use super::write::ResourceWriter;

/// The most errors one compile reports.
pub const MAX_ERRORS: usize = 100;

/// One problem in a JSON resource: where, and what was expected.
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

/// Why a JSON resource did not compile: every problem found, each with its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// The problems, in entity order (at most [`MAX_ERRORS`]).
    pub errors: Vec<PathError>,
    /// Problems found beyond [`MAX_ERRORS`] and not listed.
    pub more: usize,
}

impl CompileError {
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

struct Errors {
    list: Vec<PathError>,
    more: usize,
}

impl Errors {
    fn push(&mut self, path: String, message: String) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(PathError { path, message });
        } else {
            self.more += 1;
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Compiles JSON entity resources with a registry's compile functions.
///
/// ```
/// use ecs_core::resource::{EntityCompiler, Registration, Registry};
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

    /// Parses `text` as JSON and compiles it.
    pub fn compile_str(&self, text: &str) -> Result<Vec<u8>, CompileError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| CompileError::one("", format!("not valid JSON: {e}")))?;
        // JSON allows a key twice in an object and `Value` keeps the last; in a level that is
        // almost always a mistake (two `position`s), so it is refused, with its line.
        serde_json::from_str::<UniqueKeys>(text)
            .map_err(|e| CompileError::one("", e.to_string()))?;
        self.compile(&value)
    }

    /// Compiles a JSON document (see the [module docs](self) for its shape) to a blob.
    pub fn compile(&self, json: &Value) -> Result<Vec<u8>, CompileError> {
        let Some(top) = json.as_object() else {
            return Err(CompileError::one(
                "",
                format!(
                    "expected an object with an \"entities\" array, found {}",
                    kind(json)
                ),
            ));
        };
        let mut errors = Errors {
            list: Vec::new(),
            more: 0,
        };
        for key in top.keys().filter(|k| *k != "entities") {
            errors.push(
                key.clone(),
                "unknown key: expected only \"entities\"".into(),
            );
        }
        let entities = match top.get("entities") {
            Some(Value::Array(a)) => a.as_slice(),
            Some(other) => {
                errors.push(
                    "entities".into(),
                    format!("expected an array, found {}", kind(other)),
                );
                &[]
            }
            None => {
                errors.push(
                    String::new(),
                    "missing key \"entities\" (an array of entities)".into(),
                );
                &[]
            }
        };
        let mut writer = ResourceWriter::new();
        if u32::try_from(entities.len()).is_err()
            || writer.add_entities(entities.len() as u32).is_err()
        {
            return Err(CompileError::one("entities", "too many entities"));
        }
        let n = entities.len();
        let mut scratch = Vec::new();
        for (i, entity) in entities.iter().enumerate() {
            // Paths are formatted only for errors: a valid level builds no path strings.
            let at = || format!("entities[{i}]");
            let Some(obj) = entity.as_object() else {
                errors.push(
                    at(),
                    format!("expected an entity object, found {}", kind(entity)),
                );
                continue;
            };
            for key in obj.keys().filter(|k| *k != "parent" && *k != "components") {
                errors.push(
                    format!("{}.{key}", at()),
                    "unknown key: an entity has \"parent\" and \"components\"".into(),
                );
            }
            match obj.get("parent") {
                None | Some(Value::Null) => {}
                Some(p) => match p.as_u64() {
                    Some(p) if p < n as u64 && p != i as u64 => {
                        // In range, so it fits u32; the forest is checked below.
                        let _ = writer.set_parent(i as u32, Some(p as u32));
                    }
                    Some(p) if p == i as u64 => errors.push(
                        format!("{}.parent", at()),
                        "an entity cannot be its own parent".into(),
                    ),
                    _ => errors.push(
                        format!("{}.parent", at()),
                        format!("expected null or an entity index below {n}, found {p}"),
                    ),
                },
            }
            let components = match obj.get("components") {
                None | Some(Value::Null) => continue,
                Some(Value::Object(c)) => c,
                Some(other) => {
                    errors.push(
                        format!("{}.components", at()),
                        format!("expected an object of components, found {}", kind(other)),
                    );
                    continue;
                }
            };
            for (name, value) in components {
                let path = || format!("{}.components.{name}", at());
                let Some(reg) = self.registry.by_name(name) else {
                    errors.push(
                        path(),
                        format!(
                            "unknown component `{name}`; registered: {}",
                            self.registry.names()
                        ),
                    );
                    continue;
                };
                scratch.clear();
                match (reg.compile)(value, &mut scratch) {
                    Ok(()) => {
                        // The compile function wrote one canonical instance: no re-check.
                        if let Err(e) = writer.push_compiled(reg, i as u32, &scratch) {
                            errors.push(path(), e.to_string());
                        }
                    }
                    Err(e) => {
                        let path = if e.path.is_empty() {
                            path()
                        } else if e.path.starts_with('[') {
                            format!("{}{}", path(), e.path)
                        } else {
                            format!("{}.{}", path(), e.path)
                        };
                        errors.push(path, e.message);
                    }
                }
            }
        }
        if !errors.list.is_empty() {
            return Err(CompileError {
                errors: errors.list,
                more: errors.more,
            });
        }
        writer.finish().map_err(|e| match e {
            ResourceError::ParentCycle { entity } => CompileError::one(
                format!("entities[{entity}].parent"),
                "the chain of parents from this entity comes back to it (a cycle)",
            ),
            other => CompileError::one("", other.to_string()),
        })
    }
}

/// A JSON document walked only to refuse an object that has a key twice.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "key `{key}` appears twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
