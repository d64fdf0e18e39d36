//! sigecs runtime.
pub mod entity;
