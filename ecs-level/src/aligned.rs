//! [`AlignedBlob`]: blob storage aligned to 16 bytes, so plain-old-data components are read in
//! place as `&[T]`.

use bytemuck::{Pod, Zeroable};

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(16))]
struct Chunk([u8; 16]);

/// A blob's bytes in memory aligned to 16 bytes. Every `instance_data` starts at a multiple of 16
/// from the blob's start, so in an `AlignedBlob` every POD component of alignment up to 16 is
/// read as a `&[T]` with no copy ([`ComponentData::pod`](super::ComponentData::pod) borrows).
///
/// ```
/// use sigecs_level::AlignedBlob;
/// let blob = AlignedBlob::from_bytes(&[1, 2, 3]);
/// assert_eq!(blob.as_ref(), &[1, 2, 3]);
/// assert_eq!(blob.as_ref().as_ptr() as usize % 16, 0);
/// ```
#[derive(Clone, Default)]
pub struct AlignedBlob {
    chunks: Vec<Chunk>,
    len: usize,
}

impl AlignedBlob {
    /// Copies `bytes` into aligned memory.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut chunks = vec![Chunk([0; 16]); bytes.len().div_ceil(16)];
        bytemuck::cast_slice_mut::<Chunk, u8>(&mut chunks)[..bytes.len()].copy_from_slice(bytes);
        AlignedBlob {
            chunks,
            len: bytes.len(),
        }
    }

    /// Reads everything from `reader` (a file) into aligned memory.
    pub fn read_from(mut reader: impl std::io::Read) -> std::io::Result<Self> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Self::from_bytes(&bytes))
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl AsRef<[u8]> for AlignedBlob {
    fn as_ref(&self) -> &[u8] {
        &bytemuck::cast_slice::<Chunk, u8>(&self.chunks)[..self.len]
    }
}

impl std::fmt::Debug for AlignedBlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBlob")
            .field("len", &self.len)
            .finish()
    }
}
