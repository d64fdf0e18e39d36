//! How one component instance becomes bytes and back: plain old data (`bytemuck::Pod`, stored as
//! its little-endian bytes and read in place), postcard (everything else), or nothing at all (a
//! tag, a component without data).
//!
//! ## Why postcard
//!
//! Components that are not plain old data (a `String`, a `Vec`, an enum with data) are encoded
//! with [postcard](https://docs.rs/postcard): its wire format is specified and stable for the
//! whole 1.x series (so the blob's own version is the only version
//! a reader has to check), it is compact (varint integers, no field names, no per-value tags),
//! it is self-delimiting (instances are simply concatenated), it has no dependency on `std`, and
//! it decodes from a byte slice without reading ahead. Decoding is bounded by the input: sequence
//! lengths only cap serde's pre-allocation (serde's "cautious" size hint), strings and byte
//! strings are checked against the bytes that remain.
//!
//! postcard accepts a few non-minimal encodings (an over-long varint), so the verifier decodes
//! each postcard instance and re-encodes it: an instance whose bytes are not exactly its own
//! canonical encoding is refused. Every verified blob is therefore canonical, and saving what it
//! spawned gives back the same bytes.
//!
//! Two limits of postcard a registered type must respect: it cannot use `deserialize_any`
//! (`#[serde(untagged)]`, `#[serde(flatten)]`, `serde_json::Value` fields), and it has no
//! recursion limit, so a registered type must not be recursive (a `Box<Self>` tree would let a
//! crafted blob nest deeply enough to overflow the stack).

use std::any::Any;
use std::fmt;

use bytemuck::Pod;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::checked::Checked;
use super::format::{ENCODING_POD, ENCODING_POSTCARD};

/// How a registered component's instances are stored in a blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Plain old data: `size` bytes per instance, the value's in-memory (little-endian) bytes.
    Pod {
        /// `size_of::<T>()`.
        size: usize,
        /// `align_of::<T>()`.
        align: usize,
    },
    /// One postcard encoding per instance, concatenated.
    Postcard,
}

impl Encoding {
    /// The record's `encoding` field for this encoding.
    pub fn code(self) -> u32 {
        match self {
            Encoding::Pod { .. } => ENCODING_POD,
            Encoding::Postcard => ENCODING_POSTCARD,
        }
    }

    /// The record's `element_size` field: the POD size, 0 for postcard.
    pub fn element_size(self) -> usize {
        match self {
            Encoding::Pod { size, .. } => size,
            Encoding::Postcard => 0,
        }
    }

    /// Whether a record with these `encoding` and `element_size` fields is stored this way.
    pub fn matches(self, code: u32, element_size: u32) -> bool {
        code == self.code() && element_size as usize == self.element_size()
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encoding::Pod { size, .. } => write!(f, "pod, {size} bytes"),
            Encoding::Postcard => f.write_str("postcard"),
        }
    }
}

/// Describes a record's `encoding` and `element_size` fields the way [`Encoding`] displays.
pub(crate) fn describe_wire(code: u32, element_size: u32) -> String {
    match code {
        ENCODING_POD => format!("pod, {element_size} bytes"),
        ENCODING_POSTCARD => "postcard".to_string(),
        other => format!("encoding {other}"),
    }
}

/// A compile function's error: the JSON path below the component (`x`, `items[2].name`; empty
/// for the component's own value) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueError {
    pub(crate) path: String,
    pub(crate) message: String,
}

/// Compiles one component's JSON: `fn(value, num_entities, out)` reads `value` (through
/// [`Checked`]: `f32` ranges, entities below `num_entities`) and appends the instance's bytes
/// to `out`.
pub(crate) type CompileFn = fn(&serde_json::Value, u32, &mut Vec<u8>) -> Result<(), ValueError>;
/// Checks `count` postcard instances in `data`, telling `len` each instance's length:
/// `Err((instance, message))` for the first bad one.
pub(crate) type CheckFn = fn(&[u8], u32, &mut dyn FnMut(usize)) -> Result<(), (u32, String)>;
/// Appends the encoding of a value given as `&dyn Any` (already known to be the right type).
pub(crate) type EncodeFn = fn(&dyn Any, &mut Vec<u8>) -> Result<(), String>;

fn deserialize_json<T: DeserializeOwned>(
    value: &serde_json::Value,
    num_entities: u32,
) -> Result<T, ValueError> {
    serde_path_to_error::deserialize::<_, T>(Checked::new(value, num_entities)).map_err(|e| {
        let path = if e.path().iter().next().is_none() {
            String::new()
        } else {
            e.path().to_string()
        };
        ValueError {
            path,
            message: e.into_inner().to_string(),
        }
    })
}

pub(crate) fn compile_pod<T: Pod + DeserializeOwned>(
    value: &serde_json::Value,
    num_entities: u32,
    out: &mut Vec<u8>,
) -> Result<(), ValueError> {
    let v: T = deserialize_json(value, num_entities)?;
    out.extend_from_slice(bytemuck::bytes_of(&v));
    Ok(())
}

pub(crate) fn compile_postcard<T: Serialize + DeserializeOwned>(
    value: &serde_json::Value,
    num_entities: u32,
    out: &mut Vec<u8>,
) -> Result<(), ValueError> {
    let v: T = deserialize_json(value, num_entities)?;
    encode_postcard(&v, out).map_err(|message| ValueError {
        path: String::new(),
        message,
    })
}

/// Appends the canonical postcard encoding of `value` to `out`.
pub(crate) fn encode_postcard<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let buf = std::mem::take(out);
    match postcard::to_extend(value, buf) {
        Ok(buf) => {
            *out = buf;
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A tag's JSON value: `true`, `{}` or `null` (the tag is there); it compiles to no bytes.
pub(crate) fn compile_tag(
    value: &serde_json::Value,
    _num_entities: u32,
    _out: &mut Vec<u8>,
) -> Result<(), ValueError> {
    use serde_json::Value;
    match value {
        Value::Bool(true) | Value::Null => Ok(()),
        Value::Object(fields) if fields.is_empty() => Ok(()),
        other => Err(ValueError {
            path: String::new(),
            message: format!(
                "a tag holds no data: write `true`, `{{}}` or `null` (or leave the component \
                 out), not {other}"
            ),
        }),
    }
}

/// A tag's value: no bytes, once it is known to be one.
pub(crate) fn encode_tag_any<T: 'static>(
    value: &dyn Any,
    _out: &mut Vec<u8>,
) -> Result<(), String> {
    match value.downcast_ref::<T>() {
        Some(_) => Ok(()),
        None => Err(format!("expected a {}", std::any::type_name::<T>())),
    }
}

pub(crate) fn check_nothing(
    _data: &[u8],
    _count: u32,
    _len: &mut dyn FnMut(usize),
) -> Result<(), (u32, String)> {
    Ok(())
}

/// Decodes `count` instances of `T` from `data`, calling `each` with every value; checks that
/// each instance is its own canonical encoding and that nothing follows the last one.
pub(crate) fn decode_postcard_each<T: Serialize + DeserializeOwned>(
    data: &[u8],
    count: u32,
    mut each: impl FnMut(T, usize),
) -> Result<(), (u32, String)> {
    let mut rest = data;
    let mut scratch = Vec::new();
    for i in 0..count {
        let (value, after) =
            postcard::take_from_bytes::<T>(rest).map_err(|e| (i, e.to_string()))?;
        let used = &rest[..rest.len() - after.len()];
        scratch.clear();
        encode_postcard(&value, &mut scratch).map_err(|e| (i, e))?;
        if scratch != used {
            return Err((
                i,
                format!(
                    "its {} bytes are not the canonical postcard encoding ({} bytes)",
                    used.len(),
                    scratch.len()
                ),
            ));
        }
        each(value, used.len());
        rest = after;
    }
    if !rest.is_empty() {
        return Err((
            count,
            format!("{} bytes remain after the last instance", rest.len()),
        ));
    }
    Ok(())
}

pub(crate) fn check_postcard<T: Serialize + DeserializeOwned>(
    data: &[u8],
    count: u32,
    len: &mut dyn FnMut(usize),
) -> Result<(), (u32, String)> {
    decode_postcard_each::<T>(data, count, |_, n| len(n))
}

pub(crate) fn encode_pod_any<T: Pod>(value: &dyn Any, out: &mut Vec<u8>) -> Result<(), String> {
    let v = value
        .downcast_ref::<T>()
        .ok_or_else(|| format!("expected a {}", std::any::type_name::<T>()))?;
    out.extend_from_slice(bytemuck::bytes_of(v));
    Ok(())
}

pub(crate) fn encode_postcard_any<T: Serialize + 'static>(
    value: &dyn Any,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let v = value
        .downcast_ref::<T>()
        .ok_or_else(|| format!("expected a {}", std::any::type_name::<T>()))?;
    encode_postcard(v, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_canonical_varints_are_refused() {
        // 5u32 is one byte; 0x85 0x00 is an over-long encoding postcard itself accepts.
        assert!(postcard::from_bytes::<u32>(&[0x85, 0x00]).is_ok());
        assert!(check_postcard::<u32>(&[5], 1, &mut |_| {}).is_ok());
        let err = check_postcard::<u32>(&[0x85, 0x00], 1, &mut |_| {}).unwrap_err();
        assert_eq!(err.0, 0);
        assert!(err.1.contains("canonical"), "{}", err.1);
    }

    #[test]
    fn leftover_bytes_are_refused() {
        let err = check_postcard::<u8>(&[1, 2, 3], 2, &mut |_| {}).unwrap_err();
        assert_eq!(err.0, 2);
    }

    #[test]
    fn strings_round_trip() {
        let mut out = Vec::new();
        encode_postcard("hi", &mut out).unwrap();
        encode_postcard("there", &mut out).unwrap();
        let mut got = Vec::new();
        decode_postcard_each::<String>(&out, 2, |s, _| got.push(s)).unwrap();
        assert_eq!(got, ["hi", "there"]);
        // A string length past the end is an error, not an allocation.
        assert!(check_postcard::<String>(&[0xff, 0xff, 0xff, 0xff, 0x0f], 1, &mut |_| {}).is_err());
    }

    #[test]
    fn json_errors_carry_the_path_below_the_component() {
        #[derive(serde::Deserialize, serde::Serialize)]
        struct P {
            #[allow(dead_code)]
            x: f32,
        }
        let mut out = Vec::new();
        let e = compile_postcard::<P>(&serde_json::json!({"x": "no"}), 0, &mut out).unwrap_err();
        assert_eq!(e.path, "x");
        assert!(e.message.contains("expected f32"), "{}", e.message);
        let e = compile_postcard::<P>(&serde_json::json!(3), 0, &mut out).unwrap_err();
        assert_eq!(e.path, "");
    }
}
