//! [`LevelWriter`]: builds a canonical blob from entities, parents and per-entity component
//! values — what the compiler uses, and what a world's save calls.
//!
//! Values may be pushed in any order (a world walks its stores, not its entities);
//! [`finish`](LevelWriter::finish) sorts each component type by entity index and lays records
//! out by identifier, so the same content always gives the same bytes.

use std::any::Any;
use std::collections::BTreeMap;
use std::ops::Range;

use super::error::{ComponentRef, LevelError};
use super::format::{
    self, pad_vec, CHECKSUM_OFFSET, DATA_ALIGN, HEADER_LEN, MAGIC, RECORD_ALIGN, ROOT,
    TOTAL_LEN_OFFSET, VERSION,
};
use super::hierarchy;
use super::registry::Registration;
use super::Encoding;

struct TypeBuf {
    component: ComponentRef,
    encoding: Encoding,
    /// (entity, length in `data`) of each instance, in the order they were pushed; their bytes
    /// are in `data` in the same order. Eight bytes an instance: a level of a million entities
    /// has millions of instances.
    entries: Vec<(u32, u32)>,
    data: Vec<u8>,
}

impl TypeBuf {
    /// Records the instance of `entity` whose bytes are `data[start..]`, or removes them if
    /// they are too many for the format's 32-bit sizes.
    fn add(&mut self, entity: u32, start: usize) -> Result<(), LevelError> {
        match u32::try_from(self.data.len() - start) {
            Ok(len) => {
                self.entries.push((entity, len));
                Ok(())
            }
            Err(_) => {
                self.data.truncate(start);
                Err(LevelError::TooLarge {
                    what: "a component type's instance data",
                })
            }
        }
    }
}

/// Builds a level blob.
///
/// ```
/// use sigecs_level::{verify, AnySet, Registration, Registry, LevelWriter, VerifyOptions};
/// let registry = Registry::new([Registration::pod::<f32>("mass")]).unwrap();
/// let mass = registry.by_name("mass").unwrap();
/// let mut w = LevelWriter::new();
/// let root = w.add_entity(None).unwrap();
/// let child = w.add_entity(Some(root)).unwrap();
/// w.push(mass, child, &2.5f32).unwrap();
/// w.push(mass, root, &1.0f32).unwrap();
/// let blob = w.finish().unwrap();
/// let res = verify(&blob[..], &registry, AnySet::default(), &VerifyOptions::default()).unwrap();
/// assert_eq!(res.num_entities(), 2);
/// assert_eq!(res.parent(1), Some(0));
/// ```
#[derive(Default)]
pub struct LevelWriter {
    parents: Vec<u32>,
    types: BTreeMap<u64, TypeBuf>,
}

impl LevelWriter {
    /// An empty level.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entities added so far.
    pub fn num_entities(&self) -> u32 {
        self.parents.len() as u32
    }

    /// Adds an entity with this parent (`None` for a root) and returns its index. The parent may
    /// be an entity added later; [`finish`](Self::finish) checks the forest.
    pub fn add_entity(&mut self, parent: Option<u32>) -> Result<u32, LevelError> {
        let index = self.parents.len();
        // ROOT (u32::MAX) is not an index; the entity index space is far smaller anyway.
        if index >= ROOT as usize {
            return Err(LevelError::TooLarge {
                what: "the entity count",
            });
        }
        self.parents.push(parent.unwrap_or(ROOT));
        Ok(index as u32)
    }

    /// Adds `n` root entities and returns their indices.
    pub fn add_entities(&mut self, n: u32) -> Result<Range<u32>, LevelError> {
        let start = self.num_entities();
        let end = start
            .checked_add(n)
            .filter(|&e| e < ROOT)
            .ok_or(LevelError::TooLarge {
                what: "the entity count",
            })?;
        self.parents.resize(end as usize, ROOT);
        Ok(start..end)
    }

    /// Sets an entity's parent (`None` for a root).
    pub fn set_parent(&mut self, entity: u32, parent: Option<u32>) -> Result<(), LevelError> {
        let n = self.num_entities();
        let slot = self
            .parents
            .get_mut(entity as usize)
            .ok_or(LevelError::NoSuchEntity {
                entity,
                num_entities: n,
            })?;
        *slot = parent.unwrap_or(ROOT);
        Ok(())
    }

    fn type_buf(&mut self, reg: &Registration, entity: u32) -> Result<&mut TypeBuf, LevelError> {
        let n = self.num_entities();
        if entity >= n {
            return Err(LevelError::NoSuchEntity {
                entity,
                num_entities: n,
            });
        }
        let buf = self
            .types
            .entry(reg.identifier())
            .or_insert_with(|| TypeBuf {
                component: reg.component_ref(),
                encoding: reg.encoding(),
                entries: Vec::new(),
                data: Vec::new(),
            });
        if buf.encoding != reg.encoding() || buf.component.name != Some(reg.name()) {
            return Err(LevelError::EncodingMismatch {
                component: reg.component_ref(),
                expected: buf.encoding.to_string(),
                found: reg.encoding().to_string(),
            });
        }
        Ok(buf)
    }

    /// Adds component `reg` with value `value` to `entity`. `T` must be the registered type.
    pub fn push<T: Any>(
        &mut self,
        reg: &Registration,
        entity: u32,
        value: &T,
    ) -> Result<(), LevelError> {
        if !reg.is::<T>() {
            return Err(reg.wrong_type::<T>());
        }
        let encode = reg.encode;
        let buf = self.type_buf(reg, entity)?;
        let start = buf.data.len();
        if let Err(message) = encode(value, &mut buf.data) {
            buf.data.truncate(start);
            return Err(LevelError::Encode {
                component: reg.component_ref(),
                message,
            });
        }
        buf.add(entity, start)
    }

    /// Adds component `reg` to many entities: `(entity, value)` pairs, in any order.
    pub fn push_all<'v, T: Any>(
        &mut self,
        reg: &Registration,
        items: impl IntoIterator<Item = (u32, &'v T)>,
    ) -> Result<(), LevelError> {
        for (entity, value) in items {
            self.push(reg, entity, value)?;
        }
        Ok(())
    }

    /// Adds component `reg` to `entity` from bytes already in its encoding: exactly the POD size,
    /// or one canonical postcard encoding (checked).
    pub fn push_encoded(
        &mut self,
        reg: &Registration,
        entity: u32,
        bytes: &[u8],
    ) -> Result<(), LevelError> {
        match reg.encoding() {
            Encoding::Pod { size, .. } if bytes.len() != size => {
                return Err(LevelError::SizeMismatch {
                    component: reg.component_ref(),
                    num_instances: 1,
                    element_size: size as u32,
                    size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
                })
            }
            Encoding::Pod { .. } => {}
            Encoding::Postcard => {
                (reg.check)(bytes, 1, &mut |_| {}).map_err(|(instance, message)| {
                    LevelError::Decode {
                        component: reg.component_ref(),
                        instance,
                        message,
                    }
                })?
            }
        }
        let buf = self.type_buf(reg, entity)?;
        let start = buf.data.len();
        buf.data.extend_from_slice(bytes);
        buf.add(entity, start)
    }

    /// [`push_encoded`](Self::push_encoded) for bytes a registration's own compile function just
    /// wrote: one instance in the registered encoding, so the check is skipped.
    pub(crate) fn push_compiled(
        &mut self,
        reg: &Registration,
        entity: u32,
        bytes: &[u8],
    ) -> Result<(), LevelError> {
        let buf = self.type_buf(reg, entity)?;
        let start = buf.data.len();
        buf.data.extend_from_slice(bytes);
        buf.add(entity, start)
    }

    /// The blob: checks the hierarchy (every parent exists, no cycle) and that no entity holds a
    /// component twice, then writes records in identifier order and instances in entity order.
    pub fn finish(self) -> Result<Vec<u8>, LevelError> {
        let n = self.num_entities();
        hierarchy::depths(n, |i| self.parents[i as usize])?;
        let num_types = u32::try_from(self.types.len()).map_err(|_| LevelError::TooLarge {
            what: "the component type count",
        })?;

        let mut out = Vec::with_capacity(self.size_hint());
        out.resize(HEADER_LEN, 0);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&num_types.to_le_bytes());
        for p in &self.parents {
            out.extend_from_slice(&p.to_le_bytes());
        }
        pad_vec(&mut out, RECORD_ALIGN);

        for (identifier, t) in self.types {
            let TypeBuf {
                component,
                encoding,
                entries,
                data,
            } = t;
            // Pushed in entity order (as a compile does): the bytes are already in order.
            // Otherwise each instance's bytes are found and sorted by entity (stable).
            let sorted = if entries.windows(2).all(|w| w[0].0 < w[1].0) {
                None
            } else {
                let mut start = 0usize;
                let mut spans: Vec<(u32, usize, usize)> = entries
                    .iter()
                    .map(|&(entity, len)| {
                        let span = (entity, start, len as usize);
                        start += len as usize;
                        span
                    })
                    .collect();
                spans.sort_by_key(|e| e.0);
                if let Some(w) = spans.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Err(LevelError::DuplicateComponent {
                        component,
                        entity: w[0].0,
                    });
                }
                Some(spans)
            };
            let count = entries.len() as u32; // entity indices are distinct and < n.
            let size = u32::try_from(data.len()).map_err(|_| LevelError::TooLarge {
                what: "a component type's instance data",
            })?;
            out.extend_from_slice(&identifier.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&encoding.code().to_le_bytes());
            out.extend_from_slice(&(encoding.element_size() as u32).to_le_bytes());
            match &sorted {
                None => {
                    for &(entity, _) in &entries {
                        out.extend_from_slice(&entity.to_le_bytes());
                    }
                }
                Some(spans) => {
                    for &(entity, _, _) in spans {
                        out.extend_from_slice(&entity.to_le_bytes());
                    }
                }
            }
            pad_vec(&mut out, DATA_ALIGN);
            match sorted {
                None => out.extend_from_slice(&data),
                Some(spans) => {
                    for (_, start, len) in spans {
                        out.extend_from_slice(&data[start..start + len]);
                    }
                }
            }
            pad_vec(&mut out, RECORD_ALIGN);
        }

        let total =
            u32::try_from(out.len()).map_err(|_| LevelError::TooLarge { what: "the level" })?;
        out[..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&VERSION.to_le_bytes());
        out[TOTAL_LEN_OFFSET..TOTAL_LEN_OFFSET + 4].copy_from_slice(&total.to_le_bytes());
        let sum = format::checksum(&out[HEADER_LEN..]);
        out[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 4].copy_from_slice(&sum.to_le_bytes());
        Ok(out)
    }

    fn size_hint(&self) -> usize {
        let mut n = HEADER_LEN + 8 + 4 * self.parents.len() + RECORD_ALIGN;
        for t in self.types.values() {
            n = n.saturating_add(
                24 + 4 * t.entries.len() + DATA_ALIGN + t.data.len() + RECORD_ALIGN,
            );
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Registry;

    #[test]
    fn empty_level_is_header_plus_counts() {
        let blob = LevelWriter::new().finish().unwrap();
        assert_eq!(blob.len(), 40);
        assert_eq!(&blob[..8], &MAGIC);
        assert_eq!(u32::from_le_bytes(blob[16..20].try_into().unwrap()), 40);
    }

    /// A registry of a plain-old-data `u16` "a" and a postcard `String` "s".
    fn pod_and_text() -> Registry {
        Registry::new([
            Registration::pod::<u16>("a"),
            Registration::serde::<String>("s"),
        ])
        .unwrap()
    }

    #[test]
    fn order_of_pushes_does_not_matter() {
        let reg = pod_and_text();
        let (a, s) = (reg.by_name("a").unwrap(), reg.by_name("s").unwrap());
        let mut w1 = LevelWriter::new();
        w1.add_entities(3).unwrap();
        w1.push(a, 0, &1u16).unwrap();
        w1.push(a, 2, &3u16).unwrap();
        w1.push(s, 1, &"one".to_string()).unwrap();
        w1.push(s, 2, &"two".to_string()).unwrap();
        let mut w2 = LevelWriter::new();
        w2.add_entities(3).unwrap();
        w2.push(s, 2, &"two".to_string()).unwrap();
        w2.push(a, 2, &3u16).unwrap();
        w2.push(s, 1, &"one".to_string()).unwrap();
        w2.push(a, 0, &1u16).unwrap();
        assert_eq!(w1.finish().unwrap(), w2.finish().unwrap());
    }

    #[test]
    fn writer_refuses_bad_input() {
        let reg = Registry::new([Registration::pod::<u16>("a")]).unwrap();
        let a = reg.by_name("a").unwrap();
        let mut w = LevelWriter::new();
        w.add_entity(None).unwrap();
        assert!(matches!(
            w.push(a, 0, &1u32),
            Err(LevelError::WrongType { .. })
        ));
        assert!(matches!(
            w.push(a, 1, &1u16),
            Err(LevelError::NoSuchEntity { .. })
        ));
        assert!(matches!(
            w.push_encoded(a, 0, &[1]),
            Err(LevelError::SizeMismatch { .. })
        ));
        w.push(a, 0, &1u16).unwrap();
        w.push(a, 0, &2u16).unwrap();
        assert!(matches!(
            w.finish(),
            Err(LevelError::DuplicateComponent { entity: 0, .. })
        ));
        let mut w = LevelWriter::new();
        w.add_entity(Some(0)).unwrap();
        assert_eq!(
            w.finish(),
            Err(LevelError::ParentCycle {
                entity: 0,
                cycle: vec![0],
                len: 1
            })
        );
    }

    #[test]
    fn counts_stop_below_the_root_marker() {
        // `u32::MAX` marks a root, so it is no entity index: at most `u32::MAX` entities, and
        // the refusal comes before anything is allocated for them.
        let too_many = LevelError::TooLarge {
            what: "the entity count",
        };
        let mut w = LevelWriter::new();
        assert_eq!(w.add_entities(u32::MAX), Err(too_many.clone()));
        w.add_entity(None).unwrap();
        assert_eq!(w.add_entities(u32::MAX - 1), Err(too_many));
        assert_eq!(w.add_entities(2).unwrap(), 1..3);
        assert_eq!(w.num_entities(), 3);
        assert_eq!(
            w.set_parent(3, None),
            Err(LevelError::NoSuchEntity {
                entity: 3,
                num_entities: 3
            })
        );
    }

    #[test]
    fn one_name_stored_two_ways_is_refused() {
        // Two registries may register one level name differently; one blob cannot hold
        // both, whichever of encoding or type differs.
        let pod = Registry::new([Registration::pod::<u32>("a")]).unwrap();
        let text = Registry::new([Registration::serde::<String>("a")]).unwrap();
        let wide = Registry::new([Registration::pod::<i32>("a")]).unwrap();
        let mut w = LevelWriter::new();
        w.add_entities(3).unwrap();
        w.push(pod.by_name("a").unwrap(), 0, &1u32).unwrap();
        assert_eq!(
            w.push(text.by_name("a").unwrap(), 1, &"x".to_string()),
            Err(LevelError::EncodingMismatch {
                component: text.by_name("a").unwrap().component_ref(),
                expected: "pod, 4 bytes".into(),
                found: "postcard".into()
            })
        );
        // Same name, same encoding, another type: stored alike, accepted (the blob does not
        // record the Rust type).
        w.push(wide.by_name("a").unwrap(), 2, &-1i32).unwrap();
        let blob = w.finish().unwrap();
        let level = crate::verify(
            &blob[..],
            &pod,
            crate::AnySet::default(),
            &Default::default(),
        )
        .unwrap();
        let a = level.component("a").unwrap();
        assert_eq!(a.pod::<u32>().unwrap().as_ref(), [1, u32::MAX]);
    }

    /// `push_all` and `push_encoded` write what the same `push` calls write.
    #[test]
    fn every_way_of_pushing_writes_the_same_bytes() {
        let reg = pod_and_text();
        let (a, s) = (reg.by_name("a").unwrap(), reg.by_name("s").unwrap());
        let names = ["zero".to_string(), "two".to_string()];
        let mut one_by_one = LevelWriter::new();
        one_by_one.add_entities(3).unwrap();
        one_by_one.push(a, 0, &7u16).unwrap();
        one_by_one.push(a, 1, &8u16).unwrap();
        one_by_one.push(s, 0, &names[0]).unwrap();
        one_by_one.push(s, 2, &names[1]).unwrap();
        let expected = one_by_one.finish().unwrap();

        let mut all = LevelWriter::new();
        all.add_entities(3).unwrap();
        all.push_all(a, [(0, &7u16), (1, &8u16)]).unwrap();
        all.push_all(s, [(0, &names[0]), (2, &names[1])]).unwrap();
        assert_eq!(all.finish().unwrap(), expected);

        let mut encoded = LevelWriter::new();
        encoded.add_entities(3).unwrap();
        encoded.push_encoded(a, 0, &7u16.to_le_bytes()).unwrap();
        encoded.push_encoded(a, 1, &8u16.to_le_bytes()).unwrap();
        encoded.push_encoded(s, 0, b"\x04zero").unwrap();
        encoded.push_encoded(s, 2, b"\x03two").unwrap();
        assert_eq!(encoded.finish().unwrap(), expected);

        // The first refusal stops `push_all`, and says which entity.
        let mut w = LevelWriter::new();
        w.add_entities(1).unwrap();
        assert!(matches!(
            w.push_all(a, [(0, &1u16), (5, &2u16)]),
            Err(LevelError::NoSuchEntity { entity: 5, .. })
        ));
        // A postcard instance that does not decode (a length past its end) is refused.
        assert!(matches!(
            w.push_encoded(s, 0, b"\x05zero"),
            Err(LevelError::Decode { instance: 0, .. })
        ));
    }
}
