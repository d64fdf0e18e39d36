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
pub(crate) use sparse::{SparseImage, SparseSet, StagedSet};
pub use store::Store;
pub(crate) use store::{column_base, ColumnBase, HOT_COLUMNS};
pub(crate) use store::{
    field_index, slot_plans, Graveyard, LoadPlan, SlotPlan, Staged, StoreImage,
};
pub use versions::CHUNK;
pub(crate) use versions::{tick, TICK_BITS};
pub(crate) use versions::{RunRecords, Watch};
