//! The world's invariants, checked on demand (tests, debugging, fuzzing).

use super::{Location, World};
use crate::model::WorldModel;
use std::collections::HashSet;

impl<M: WorldModel> World<M> {
    /// Checks the world's invariants: every row's entity is alive and located at that row; no
    /// entity is in two rows; the entity count matches the rows; every store is the one its
    /// model describes. Returns the first violation. O(entities); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut rows = 0usize;
        let mut seen = HashSet::new();
        for (s, store) in self.stores.iter().enumerate() {
            let info = store.info();
            if !std::ptr::eq(info, &M::stores()[s]) {
                return Err(format!(
                    "store {s} is not described by the model's store {s}"
                ));
            }
            for (row, &entity) in store.entities().iter().enumerate() {
                if !seen.insert(entity) {
                    return Err(format!("entity {entity} appears in two rows"));
                }
                let expected = Location::new(s as u32, row);
                let actual = self.table.locate(entity);
                if actual != Some(expected) {
                    return Err(format!(
                        "entity {entity} in store {} row {row} is located at {actual:?}",
                        info.name
                    ));
                }
            }
            rows += store.len();
        }
        if rows != self.table.len() {
            return Err(format!(
                "{rows} rows but {} live entities",
                self.table.len()
            ));
        }
        Ok(())
    }
}
