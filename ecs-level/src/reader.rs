//! The bounds-checked reader every part of the crate reads a blob with: each read checks the
//! remaining length first and reports what it was reading and where, as a [`LevelError`].

use super::error::LevelError;
use super::format::align_up;

/// A bounds-checked little-endian reader over a blob. Every read checks the remaining length
/// first and reports what it was reading and where; nothing here can panic or allocate.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at `pos` in `bytes`.
    pub(crate) fn new(bytes: &'a [u8], pos: usize) -> Self {
        Reader { bytes, pos }
    }

    /// Offset of the next byte to read.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// The next `len` bytes.
    pub(crate) fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], LevelError> {
        let truncated = LevelError::Truncated {
            what,
            offset: self.pos,
            needed: len,
            available: self.remaining(),
        };
        let end = self.pos.checked_add(len).ok_or(truncated.clone())?;
        let slice = self.bytes.get(self.pos..end).ok_or(truncated)?;
        self.pos = end;
        Ok(slice)
    }

    /// The next 4 bytes as a little-endian `u32`.
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, LevelError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The next 8 bytes as a little-endian `u64`.
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, LevelError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// An array of `count` `u32`s, as bytes. `count` is checked against the remaining bytes
    /// before anything else happens.
    pub(crate) fn u32_array(
        &mut self,
        count: u32,
        what: &'static str,
    ) -> Result<&'a [u8], LevelError> {
        let len = (count as usize)
            .checked_mul(4)
            .ok_or(LevelError::CountTooLarge {
                what,
                count: count as u64,
                offset: self.pos,
                remaining: self.remaining(),
            })?;
        if len > self.remaining() {
            return Err(LevelError::CountTooLarge {
                what,
                count: count as u64,
                offset: self.pos,
                remaining: self.remaining(),
            });
        }
        self.take(len, what)
    }

    /// Skips zero padding up to the next multiple of `align` (from the blob's start).
    pub(crate) fn zero_pad(&mut self, align: usize) -> Result<(), LevelError> {
        let start = self.pos;
        let end = align_up(start, align).ok_or(LevelError::Truncated {
            what: "padding",
            offset: start,
            needed: align,
            available: self.remaining(),
        })?;
        let pad = self.take(end - start, "padding")?;
        if let Some(i) = pad.iter().position(|&b| b != 0) {
            return Err(LevelError::NonZeroPadding { offset: start + i });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_never_reads_past_the_end() {
        let bytes = [1u8, 0, 0, 0, 2];
        let mut r = Reader::new(&bytes, 0);
        assert_eq!(r.u32("a").unwrap(), 1);
        assert!(matches!(r.u32("b"), Err(LevelError::Truncated { .. })));
        assert!(matches!(
            r.u32_array(u32::MAX, "c"),
            Err(LevelError::CountTooLarge { .. })
        ));
        let mut r = Reader::new(&bytes, usize::MAX);
        assert!(r.take(1, "d").is_err());
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn padding_must_be_zero() {
        let bytes = [0u8, 0, 0, 1, 0, 0, 0, 0];
        let mut r = Reader::new(&bytes, 1);
        assert_eq!(r.zero_pad(8), Err(LevelError::NonZeroPadding { offset: 3 }));
        let mut r = Reader::new(&bytes, 4);
        r.zero_pad(8).unwrap();
        assert_eq!(r.pos(), 8);
    }
}
