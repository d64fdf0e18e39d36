//! sigecs runtime.
pub mod entity;
pub mod soa;
pub mod transform;
