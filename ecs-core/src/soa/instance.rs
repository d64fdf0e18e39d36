//! Handles and errors of the component managers: [`Instance`] and [`SoaError`].

use std::fmt;

use crate::entity::Entity;

/// Handle to a component instance: its row in the columns (the classic SoA manager's `Instance`). Valid until
/// the next operation that moves rows (`create`, `destroy`, `gc`, `flush_destroyed`, `clear`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instance(u32);

impl Instance {
    /// The instance at row `index` (the classic SoA manager's `make_instance`).
    #[inline]
    pub const fn new(index: u32) -> Self {
        Instance(index)
    }

    /// The row, usable as an index into the column slices.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Why a component manager refused an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoaError {
    /// The entity already has an instance (one instance per entity, as in Bitsquid's managers).
    AlreadyExists {
        /// The entity passed to `create`.
        entity: Entity,
        /// Its existing instance.
        instance: Instance,
    },
}

impl fmt::Display for SoaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoaError::AlreadyExists { entity, instance } => write!(
                f,
                "entity {entity} already has a component instance (row {}); destroy it first or \
                 update its fields",
                instance.index()
            ),
        }
    }
}

impl std::error::Error for SoaError {}
