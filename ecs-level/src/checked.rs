//! [`Checked`]: the deserializer a component's JSON value is read through, which refuses two
//! things serde would otherwise let through silently, whatever the registered type:
//!
//! - a number out of range for an `f32`: serde reads an `f32` as an `f64` and converts it with
//!   `as`, so `1e39` became `+inf` (only numbers beyond `f64`, like `1e400`, were refused, by the
//!   JSON parser). A finite number that rounds to infinity as an `f32` is now an error; one that
//!   rounds to a finite `f32` (`3.4028235e38`, how `f32::MAX` is written; `1e-50`, which rounds
//!   to zero) is read as before;
//! - an [`Entity`](sigecs::entity::Entity) that is no entity of the level: in a level an entity
//!   is an index into its `"entities"` array, or the bits of [`NO_ENTITY`] for none. Anything
//!   else (an index past the end, a negative or fractional number, a string) is an error that
//!   names the valid range. `Entity`'s `Deserialize` asks for a newtype struct named
//!   [`SERDE_NAME`], which is how this deserializer recognises one.
//!
//! The adapter wraps every deserializer, visitor, sequence, map and enum access it hands on, so
//! the checks apply at any depth (a field of a struct in a `Vec` in an enum variant). It sits
//! below `serde_path_to_error`, which names the path of whatever it refuses.
//!
//! What it cannot see: a type that reads its fields through `deserialize_any` into serde's
//! internal buffer (`#[serde(untagged)]`, `#[serde(flatten)]`) converts the buffered number
//! itself. Registered types do not do that (postcard cannot decode them; see
//! [`codec`](super::codec)).

use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

use super::entities::NO_ENTITY;
use sigecs::entity::{EntityBits, SERDE_NAME};

/// A deserializer that checks `f32` ranges and entity references (see the [module docs](self))
/// and otherwise hands everything to `de`.
pub(crate) struct Checked<D> {
    de: D,
    num_entities: u32,
}

impl<D> Checked<D> {
    /// Reads through `de`; entities are indices below `num_entities` (or [`NO_ENTITY`]).
    pub(crate) fn new(de: D, num_entities: u32) -> Self {
        Checked { de, num_entities }
    }
}

/// What the entity check says is valid, for its error.
fn expected_entity(num_entities: u32) -> String {
    format!(
        "expected an entity index below {num_entities} (or {} for none)",
        NO_ENTITY.to_bits()
    )
}

/// The value of an entity reference: an index of the level or [`NO_ENTITY`]'s bits, refused
/// otherwise with the valid range and what was found.
struct EntityIndex {
    num_entities: u32,
}

impl EntityIndex {
    fn refuse<E: serde::de::Error>(&self, found: impl fmt::Display) -> E {
        E::custom(format!(
            "{}, found {found}",
            expected_entity(self.num_entities)
        ))
    }
}

impl<'de> Visitor<'de> for EntityIndex {
    type Value = EntityBits;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&expected_entity(self.num_entities))
    }

    #[allow(
        clippy::useless_conversion,
        reason = "`EntityBits` is `u64` with `wide-entity`"
    )]
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<EntityBits, E> {
        let valid = v < u64::from(self.num_entities) || v == u64::from(NO_ENTITY.to_bits());
        match EntityBits::try_from(v) {
            Ok(bits) if valid => Ok(bits),
            _ => Err(self.refuse(v)),
        }
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<EntityBits, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(self.refuse(v)),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<EntityBits, E> {
        // As JSON writes it (`1.0`, `1e39`); a JSON number is always finite.
        match serde_json::Number::from_f64(v) {
            Some(n) => Err(self.refuse(n)),
            None => Err(self.refuse(v)),
        }
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<EntityBits, E> {
        Err(self.refuse(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EntityBits, E> {
        Err(self.refuse(serde_json::Value::from(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<EntityBits, E> {
        Err(self.refuse("null"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<EntityBits, A::Error> {
        Err(self.refuse("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<EntityBits, A::Error> {
        Err(self.refuse("an object"))
    }
}

/// Forwards the `deserialize_*` methods that take only a visitor.
macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method(Wrap::new(visitor, self.num_entities))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_bytes deserialize_byte_buf deserialize_option
        deserialize_unit deserialize_seq deserialize_map deserialize_identifier
        deserialize_ignored_any
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let mut wrap = Wrap::new(visitor, self.num_entities);
        wrap.f32_range = true;
        self.de.deserialize_f32(wrap)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_unit_struct(name, Wrap::new(visitor, self.num_entities))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if name == SERDE_NAME {
            let bits = self.de.deserialize_any(EntityIndex {
                num_entities: self.num_entities,
            })?;
            return visitor
                .visit_newtype_struct(IntoDeserializer::<'de, D::Error>::into_deserializer(bits));
        }
        self.de
            .deserialize_newtype_struct(name, Wrap::new(visitor, self.num_entities))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_tuple(len, Wrap::new(visitor, self.num_entities))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_tuple_struct(name, len, Wrap::new(visitor, self.num_entities))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_struct(name, fields, Wrap::new(visitor, self.num_entities))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_enum(name, variants, Wrap::new(visitor, self.num_entities))
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor that hands every nested deserializer on as a [`Checked`] one, and checks the range
/// of an `f32` read as an `f64` when `f32_range` is set.
struct Wrap<V> {
    visitor: V,
    num_entities: u32,
    f32_range: bool,
}

impl<V> Wrap<V> {
    fn new(visitor: V, num_entities: u32) -> Self {
        Wrap {
            visitor,
            num_entities,
            f32_range: false,
        }
    }
}

/// Forwards the `visit_*` methods that take a plain value.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    forward_visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<V::Value, E> {
        if self.f32_range && v.is_finite() && (v as f32).is_infinite() {
            return Err(E::custom(format!(
                "{v:e} is out of range for f32 (largest magnitude {:e})",
                f32::MAX
            )));
        }
        self.visitor.visit_f64(v)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Checked::new(d, self.num_entities))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor
            .visit_newtype_struct(Checked::new(d, self.num_entities))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(Access {
            inner: seq,
            num_entities: self.num_entities,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(Access {
            inner: map,
            num_entities: self.num_entities,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(Access {
            inner: data,
            num_entities: self.num_entities,
        })
    }
}

/// A sequence, map, enum or variant access whose values are read through [`Checked`].
struct Access<A> {
    inner: A,
    num_entities: u32,
}

/// A seed that deserializes through [`Checked`].
struct Seed<S> {
    seed: S,
    num_entities: u32,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Checked::new(d, self.num_entities))
    }
}

impl<A> Access<A> {
    fn seed<S>(&self, seed: S) -> Seed<S> {
        Seed {
            seed,
            num_entities: self.num_entities,
        }
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let seed = self.seed(seed);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let seed = self.seed(seed);
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.seed(seed);
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Access<A> {
    type Error = A::Error;
    type Variant = Access<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let num_entities = self.num_entities;
        let seed = self.seed(seed);
        let (value, variant) = self.inner.variant_seed(seed)?;
        Ok((
            value,
            Access {
                inner: variant,
                num_entities,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Access<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.seed(seed);
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.inner
            .tuple_variant(len, Wrap::new(visitor, self.num_entities))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.inner
            .struct_variant(fields, Wrap::new(visitor, self.num_entities))
    }
}
