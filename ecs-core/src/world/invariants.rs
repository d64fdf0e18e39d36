//! The world's invariants, checked on demand (tests, debugging, fuzzing).

use super::{Location, World};
use crate::model::WorldModel;
use std::collections::HashSet;

impl<M: WorldModel> World<M> {
    /// Checks the world's invariants: every row's entity is alive and located at that row; no
    /// entity is in two rows; the entity count matches the rows; every row keeps one add per
    /// component, none newer than its chunk's add record; every entity in the transform
    /// hierarchy and in a sparse set is alive, and every sparse set is consistent; every
    /// declared store is the one its model describes, and every dynamic store holds a set no
    /// signature declares, the one the world finds it by. Returns the first violation.
    /// O(entities × components); for tests and debugging.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut rows = 0usize;
        let mut seen = HashSet::new();
        let declared = M::stores();
        for (s, store) in self.stores.iter().enumerate() {
            let info = store.info();
            if let Some(model) = declared.get(s) {
                if !std::ptr::eq(info, model) {
                    return Err(format!(
                        "store {s} is not described by the model's store {s}"
                    ));
                }
            } else if self.tables.store_with_mask(self.store_mask(s)).is_some()
                || self.dynamic.store_with_mask(self.store_mask(s)) != Some(s as u32)
            {
                return Err(format!(
                    "dynamic store {s} {} is declared, or not the world's store of its set",
                    info.name
                ));
            }
            for (row, &entity) in store.entities().iter().enumerate() {
                if !seen.insert(entity) {
                    return Err(format!("entity {entity} appears in two rows"));
                }
                let expected = Location::new(s as u32, row);
                let actual = self.locations.locate(entity);
                if actual != Some(expected) {
                    return Err(format!(
                        "entity {entity} in store {} row {row} is located at {actual:?}",
                        info.name
                    ));
                }
            }
            store
                .check_adds()
                .map_err(|e| format!("store {}: {e}", info.name))?;
            store.check_bases()?;
            rows += store.len();
        }
        if rows != self.locations.len() {
            return Err(format!(
                "{} but {}",
                crate::plural::count(rows, "row", "rows"),
                crate::plural::count(self.locations.len(), "live entity", "live entities")
            ));
        }
        self.sparse.check(|e| self.locations.locate(e).is_some())?;
        #[cfg(feature = "transform")]
        for &e in self.hierarchy.entities() {
            if self.locations.locate(e).is_none() {
                return Err(format!("entity {e} has a transform but is not alive"));
            }
        }
        Ok(())
    }
}

/// Each check against a hand-written two-store model, and worlds made inconsistent on purpose
/// through crate-internal access.
#[cfg(test)]
mod violations {
    use super::super::{Location, World};
    use crate::test_model::{world, Model, A, AB, B};

    #[test]
    fn a_consistent_world_passes() {
        assert_eq!(World::<Model>::new().check_invariants(), Ok(()));
        let (mut w, es) = world();
        assert_eq!(w.check_invariants(), Ok(()));
        assert!(w.despawn(es[0]));
        assert_eq!(w.insert(es[2], B(7)), Ok(None));
        assert_eq!(w.remove::<B>(es[1]).map(|b| b.0), Ok(3));
        assert_eq!(w.check_invariants(), Ok(()));
        assert_eq!(w.len(), 3);
    }

    /// This model has no typed moves, so every insert and remove goes through the byte-wise
    /// `erased_move`; moving a row that is not its store's last one must carry every value
    /// along and fill the hole with the last row.
    #[test]
    fn byte_wise_moves_keep_every_value() {
        let (mut w, es) = world();
        // es[1] is row 0 of AB, es[3] its last row: the move fills row 0 with es[3].
        assert_eq!(w.remove::<B>(es[1]).map(|b| b.0), Ok(3));
        // es[0] is row 0 of JustA (rows: es[0], es[2], es[1]).
        assert_eq!(w.insert(es[0], B(8)), Ok(None));
        assert_eq!(w.check_invariants(), Ok(()));
        let a = |w: &World<Model>, e| w.get::<A>(e).map(|a| a.0);
        let b = |w: &World<Model>, e| w.get::<B>(e).map(|b| b.0);
        assert_eq!(
            es.iter().map(|&e| (a(&w, e), b(&w, e))).collect::<Vec<_>>(),
            [
                (Some(1), Some(8)),
                (Some(2), None),
                (Some(4), None),
                (Some(5), Some(6))
            ]
        );
    }

    /// Despawning a row that is not its store's last swaps the last row in whole: every byte
    /// of every column (values whose four bytes all differ), and the moved entity is found.
    #[test]
    fn despawn_moves_the_whole_last_row_into_the_hole() {
        let mut w = World::<Model>::new();
        let es: Vec<_> = (1..=3u32)
            .map(|i| w.spawn(AB(A(i * 0x0101_0101), B(i * 0x1010_1010))))
            .collect();
        assert!(w.despawn(es[0]));
        assert_eq!(w.check_invariants(), Ok(()));
        for (&e, i) in es[1..].iter().zip(2u32..) {
            assert_eq!(w.get::<A>(e), Some(&A(i * 0x0101_0101)));
            assert_eq!(w.get::<B>(e), Some(&B(i * 0x1010_1010)));
        }
        assert!(w.despawn(es[2]), "the moved entity, now at row 0");
        assert_eq!(w.get::<A>(es[1]), Some(&A(0x0202_0202)));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn each_violation_is_reported() {
        let (mut w, _) = world();
        w.stores.swap(0, 1);
        assert_eq!(
            w.check_invariants(),
            Err("store 0 is not described by the model's store 0".to_string())
        );

        let (mut w, es) = world();
        w.locations.relocate(es[2], Location::new(0, 0));
        let err = w.check_invariants().unwrap_err();
        assert!(
            err.starts_with(&format!(
                "entity {} in store JustA row 1 is located at Some(",
                es[2]
            )),
            "{err}"
        );

        let (mut w, _) = world();
        let extra = w.locations.create_at(Location::new(0, 9)).unwrap();
        assert!(w.locations.locate(extra).is_some());
        assert_eq!(
            w.check_invariants(),
            Err("4 rows but 5 live entities".to_string())
        );
    }
}
