//! Type-erased packed storage: [`Column`] (the values of one type, capacity only) and
//! [`Store`] (one signature's rows: entity ids plus columns of one shared length), and the
//! sparse sets of `#[component(sparse)]` components.
//!
//! The generated world describes each store's columns and where each component lives in them
//! ([`crate::model`]); this module moves bytes accordingly. Typed views for systems are taken
//! with a `TypeId` check per column and pass, never per row.

mod column;
mod sparse;
mod store;
mod versions;

pub use column::ColumnType;
pub(crate) use column::{copy_bytes, Column, RawColumn};
pub(crate) use sparse::SparseSet;
pub use store::Store;
pub use versions::CHUNK;
