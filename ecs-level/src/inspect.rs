//! [`inspect`](fn@inspect): what a blob holds — entities, hierarchy, counts and bytes per component type,
//! entities per component set — as a report that prints as a table.

use std::fmt;

use super::error::LevelError;
use super::format::HEADER_LEN;
use super::registry::Registry;
use super::verify::{verify, AnySet, VerifiedLevel, VerifyOptions};

/// One component type in a [`LevelReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentReport {
    /// The component identifier.
    pub identifier: u64,
    /// The level name, `None` for a component the registry does not know.
    pub name: Option<&'static str>,
    /// `pod, N bytes` or `postcard`.
    pub encoding: String,
    /// Instances (entities holding it).
    pub instances: u32,
    /// Bytes of instance data.
    pub data_bytes: usize,
    /// Bytes of the whole record (header, entity indices, data, padding).
    pub record_bytes: usize,
}

/// One distinct set of known components in a [`LevelReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetReport {
    /// The components' level names, sorted by identifier.
    pub components: Vec<&'static str>,
    /// The store id the world (or [`AnySet`]) gave the set.
    pub store: u32,
    /// Entities with exactly this set.
    pub entities: u32,
}

/// What [`inspect`](fn@inspect) finds in a blob. `Display` prints it as a small table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelReport {
    /// Bytes in the blob.
    pub total_bytes: usize,
    /// Bytes of the header.
    pub header_bytes: usize,
    /// Bytes of the counts, the parent array and its padding.
    pub hierarchy_bytes: usize,
    /// Entities.
    pub entities: u32,
    /// Root entities.
    pub roots: u32,
    /// Depth of the hierarchy (0 with no entity, 1 when all are roots).
    pub depth: u32,
    /// Component types in blob order; unknown ones included.
    pub component_types: Vec<ComponentReport>,
    /// Distinct sets of known components, in order of first appearance.
    pub sets: Vec<SetReport>,
}

impl LevelReport {
    /// The report of a verified level.
    pub fn of<B: AsRef<[u8]>>(res: &VerifiedLevel<'_, B>) -> Self {
        let component_types: Vec<ComponentReport> = res
            .component_types()
            .map(|c| ComponentReport {
                identifier: c.identifier(),
                name: c.name(),
                encoding: if c.is_pod() {
                    format!("pod, {} bytes", c.element_size())
                } else {
                    "postcard".to_string()
                },
                instances: c.len(),
                data_bytes: c.instance_data().len(),
                record_bytes: c.record_bytes(),
            })
            .collect();
        let total = res.bytes().len();
        let records: usize = component_types.iter().map(|c| c.record_bytes).sum();
        LevelReport {
            total_bytes: total,
            header_bytes: HEADER_LEN,
            hierarchy_bytes: total - HEADER_LEN - records,
            entities: res.num_entities(),
            roots: res.roots(),
            depth: res.depth(),
            component_types,
            sets: res
                .sets()
                .map(|s| SetReport {
                    components: s.components.iter().map(|r| r.name()).collect(),
                    store: s.store,
                    entities: s.entities,
                })
                .collect(),
        }
    }
}

/// Verifies `bytes` against `registry` (unknown components skipped, every component set
/// accepted) and reports what it holds.
///
/// ```
/// use sigecs_level::{inspect, EntityCompiler, Registration, Registry};
/// let registry = Registry::new([Registration::pod::<u32>("score")]).unwrap();
/// let blob = EntityCompiler::new(&registry)
///     .compile_str(r#"{"entities": [{"components": {"score": 7}}, {"parent": 0}]}"#)
///     .unwrap();
/// let report = inspect(&blob, &registry).unwrap();
/// assert_eq!((report.entities, report.depth), (2, 2));
/// assert_eq!(report.component_types[0].instances, 1);
/// println!("{report}");
/// ```
pub fn inspect(bytes: &[u8], registry: &Registry) -> Result<LevelReport, LevelError> {
    let res = verify(
        bytes,
        registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )?;
    Ok(LevelReport::of(&res))
}

impl fmt::Display for LevelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let records: usize = self.component_types.iter().map(|c| c.record_bytes).sum();
        writeln!(
            f,
            "level: {} bytes (header {}, hierarchy {}, components {})",
            self.total_bytes, self.header_bytes, self.hierarchy_bytes, records
        )?;
        writeln!(
            f,
            "entities: {} ({} roots, hierarchy depth {})",
            self.entities, self.roots, self.depth
        )?;
        writeln!(f, "component types: {}", self.component_types.len())?;
        let names: Vec<String> = self
            .component_types
            .iter()
            .map(|c| match c.name {
                Some(n) => n.to_string(),
                None => "(unknown)".to_string(),
            })
            .collect();
        let w = names.iter().map(|n| n.len()).chain([9]).max().unwrap_or(9);
        writeln!(
            f,
            "  {:<w$}  {:<18}  {:<15}  {:>10}  {:>12}  {:>12}",
            "component", "identifier", "encoding", "instances", "data bytes", "record bytes"
        )?;
        for (c, name) in self.component_types.iter().zip(&names) {
            writeln!(
                f,
                "  {:<w$}  {:#018x}  {:<15}  {:>10}  {:>12}  {:>12}",
                name, c.identifier, c.encoding, c.instances, c.data_bytes, c.record_bytes
            )?;
        }
        write!(f, "component sets: {}", self.sets.len())?;
        for s in &self.sets {
            write!(
                f,
                "\n  {}: {} {} (store {})",
                // As a world's `ComponentSet` writes a set: `LOCAL_TRANSFORM | POSITION`.
                s.components
                    .iter()
                    .map(|c| sigecs_rules::constant_case(c))
                    .collect::<Vec<_>>()
                    .join(" | "),
                s.entities,
                if s.entities == 1 {
                    "entity"
                } else {
                    "entities"
                },
                s.store
            )?;
        }
        Ok(())
    }
}
