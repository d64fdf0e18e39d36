//! [`InlineStr`]: a short string stored inline, as plain old data.
//!
//! A `String` component has to be decoded and given a heap allocation for every instance a level
//! spawns; in the bundled level that was three quarters of the spawn time (1,300 names
//! cost 37 µs, against 12 µs for copying the whole blob and creating every entity). Short text
//! that names or tags things (a debug name, a spawn point's label) fits in a fixed number of
//! bytes, and as plain old data it is copied with its column, read in place, with no decoding
//! and no allocation — Bitsquid's point, and what data-oriented engines do for names.
//!
//! The bytes come from blobs as they are, so every bit pattern is a valid `InlineStr`: reading it
//! never panics, and a length or bytes that a corrupted blob made invalid read as the longest
//! valid prefix (see [`InlineStr::as_str`]).

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Up to [`InlineStr::CAPACITY`] (23) bytes of UTF-8 in 24 bytes: a length byte, then the text,
/// zero-filled.
///
/// Plain old data, so it makes a component a [`Registration::pod`](super::Registration::pod)
/// one: JSON gives it as a string, and a string that does not fit is a compile error naming its
/// JSON path.
///
/// ```
/// use sigecs_level::InlineStr;
/// let s = InlineStr::new("ship-7").unwrap();
/// assert_eq!(s, "ship-7");
/// assert!(InlineStr::new("a name longer than twenty-three bytes").is_err());
/// // 24 bytes: the é that would end at byte 24 is cut whole.
/// assert_eq!(InlineStr::truncated("the beacons at the café"), "the beacons at the caf");
/// ```
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub struct InlineStr {
    len: u8,
    bytes: [u8; InlineStr::CAPACITY],
}

/// [`InlineStr::new`] was given more than [`InlineStr::CAPACITY`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong {
    /// The length of the text given, in bytes.
    pub len: usize,
}

impl fmt::Display for TooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a string of at most {} bytes, found {} bytes",
            InlineStr::CAPACITY,
            self.len
        )
    }
}

impl std::error::Error for TooLong {}

impl InlineStr {
    /// The most bytes of text it holds.
    pub const CAPACITY: usize = 23;

    /// The empty string.
    pub const EMPTY: InlineStr = InlineStr {
        len: 0,
        bytes: [0; InlineStr::CAPACITY],
    };

    /// `text`, or [`TooLong`] when it has more than [`CAPACITY`](Self::CAPACITY) bytes.
    pub fn new(text: &str) -> Result<Self, TooLong> {
        if text.len() > Self::CAPACITY {
            return Err(TooLong { len: text.len() });
        }
        Ok(Self::fitting(text))
    }

    /// `text` cut to the longest prefix of whole characters that fits.
    pub fn truncated(text: &str) -> Self {
        let mut end = text.len().min(Self::CAPACITY);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Self::fitting(&text[..end])
    }

    /// `text`, which has at most [`CAPACITY`](Self::CAPACITY) bytes.
    fn fitting(text: &str) -> Self {
        let mut s = Self::EMPTY;
        s.bytes[..text.len()].copy_from_slice(text.as_bytes());
        s.len = text.len() as u8;
        s
    }

    /// The text. A length over the capacity counts as the capacity, and bytes that are not
    /// UTF-8 end the text where they start — both only come from a corrupted blob.
    pub fn as_str(&self) -> &str {
        let bytes = &self.bytes[..usize::from(self.len).min(Self::CAPACITY)];
        match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        }
    }
}

impl Default for InlineStr {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl TryFrom<&str> for InlineStr {
    type Error = TooLong;
    fn try_from(text: &str) -> Result<Self, TooLong> {
        Self::new(text)
    }
}

impl std::str::FromStr for InlineStr {
    type Err = TooLong;
    fn from_str(text: &str) -> Result<Self, TooLong> {
        Self::new(text)
    }
}

impl std::ops::Deref for InlineStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// Equal when the texts are: bytes past the length do not count.
impl PartialEq for InlineStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for InlineStr {}

impl std::hash::Hash for InlineStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for InlineStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for InlineStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for InlineStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for InlineStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for InlineStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for InlineStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = InlineStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a string of at most {} bytes", InlineStr::CAPACITY)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<InlineStr, E> {
                InlineStr::new(v).map_err(E::custom)
            }
        }
        d.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

    fn hash(s: InlineStr) -> u64 {
        BuildHasherDefault::<DefaultHasher>::default().hash_one(s)
    }

    #[test]
    fn holds_up_to_its_capacity_and_refuses_more() {
        let full = "x".repeat(InlineStr::CAPACITY);
        assert_eq!(InlineStr::new(&full).unwrap().as_str(), full);
        assert_eq!(InlineStr::new("").unwrap(), InlineStr::EMPTY);
        let over = "y".repeat(InlineStr::CAPACITY + 1);
        assert_eq!(InlineStr::new(&over), Err(TooLong { len: 24 }));
        assert_eq!(
            TooLong { len: 24 }.to_string(),
            "a string of at most 23 bytes, found 24 bytes"
        );
        assert_eq!(std::mem::size_of::<InlineStr>(), 24);
        assert_eq!(std::mem::align_of::<InlineStr>(), 1);
    }

    #[test]
    fn truncated_cuts_at_a_character_boundary() {
        // 22 ASCII bytes then a 2-byte 'é': the é would end at byte 24, so it is cut whole.
        let text = format!("{}é", "a".repeat(22));
        assert_eq!(InlineStr::truncated(&text), "a".repeat(22).as_str());
        // 21 ASCII bytes then 'é' ends exactly at the capacity and stays.
        let text = format!("{}é", "a".repeat(21));
        assert_eq!(InlineStr::truncated(&text).as_str(), text);
        assert_eq!(InlineStr::truncated("short"), "short");
    }

    #[test]
    fn every_bit_pattern_reads_without_panicking() {
        let mut raw = [0u8; 24];
        raw[0] = 200; // a length over the capacity reads as the capacity
        raw[1..].copy_from_slice(b"abcdefghijklmnopqrstuvw");
        let s: InlineStr = bytemuck::cast(raw);
        assert_eq!(s.as_str(), "abcdefghijklmnopqrstuvw");
        raw[0] = 5;
        raw[3] = 0xff; // not UTF-8: the text ends before it
        let s: InlineStr = bytemuck::cast(raw);
        assert_eq!(s.as_str(), "ab");
        raw[1] = 0xc3; // a lone lead byte first: empty
        let s: InlineStr = bytemuck::cast(raw);
        assert_eq!(s.as_str(), "");
    }

    #[test]
    fn equality_and_hash_ignore_bytes_past_the_length() {
        let mut raw: [u8; 24] = bytemuck::cast(InlineStr::new("ab").unwrap());
        raw[10] = 7;
        let dirty: InlineStr = bytemuck::cast(raw);
        let clean = InlineStr::new("ab").unwrap();
        assert_eq!(dirty, clean);
        assert_eq!(hash(dirty), hash(clean));
        assert_ne!(clean, InlineStr::new("abc").unwrap());
    }

    #[test]
    fn conversions_and_comparisons_follow_the_text() {
        let s = InlineStr::new("beacon").unwrap();
        let long = "z".repeat(30);
        assert_eq!(InlineStr::try_from("beacon"), Ok(s));
        assert_eq!(InlineStr::try_from(long.as_str()), Err(TooLong { len: 30 }));
        assert_eq!("beacon".parse::<InlineStr>(), Ok(s));
        assert_eq!(long.parse::<InlineStr>(), Err(TooLong { len: 30 }));
        assert!(s == *"beacon" && s != *"buoy" && s != *"beaco");
        assert!(s == "beacon" && s != "buoy");
        assert!(s != InlineStr::new("buoy").unwrap());
        assert_ne!(hash(s), hash(InlineStr::new("buoy").unwrap()));
    }

    #[test]
    fn json_gives_it_as_a_string_and_refuses_one_too_long() {
        let s: InlineStr = serde_json::from_str("\"ship-7\"").unwrap();
        assert_eq!(s, "ship-7");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"ship-7\"");
        let e = serde_json::from_str::<InlineStr>("\"a name longer than twenty-three bytes\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a string of at most 23 bytes, found 37 bytes"),
            "{e}"
        );
        let e = serde_json::from_str::<InlineStr>("7")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a string of at most 23 bytes"), "{e}");
        assert_eq!(format!("{s:?} {s}"), "\"ship-7\" ship-7");
        assert_eq!(&*s, "ship-7");
    }
}
