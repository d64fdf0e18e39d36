//! The spawn plan: the per-entity and per-instance bookkeeping of a spawn, done once by the
//! verifier instead of at every spawn.
//!
//! Which store each entity goes to, and therefore its row among the level's rows of that
//! store, depends only on the blob and on the store ids the verifier's
//! [`Signatures`](super::Signatures) gave (a spawner checks they are its world's). So the
//! verifier works it out once, as runs:
//!
//! - *blocks*: maximal runs of consecutive entities that go to one store (their rows there are
//!   consecutive too) — a spawner builds its level-order entity list with one copy per block;
//! - per component type, *runs* of consecutive instances whose entities have consecutive rows of
//!   one store — a spawner writes each run with one copy (plain old data) or one pass.
//!
//! A level grouped by signature has one block per signature and one run per (component type,
//! signature); an interleaved one has up to one per entity. Either way a spawn (a level
//! restart, every prefab instance) touches each entity only to create its id, place it, and
//! write its components. Memory: O(blocks + runs) words, at most O(num_entities +
//! num_instances).

/// Consecutive items (entities of a block, or instances of a component type) whose rows are
/// consecutive in one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlanRun {
    /// The first item: an entity index (a block) or an instance index within its record.
    pub(crate) start: u32,
    /// Number of items.
    pub(crate) len: u32,
    /// The store's position in [`SpawnPlan::stores`] (not its id).
    pub(crate) slot: u32,
    /// The first item's row among the level's rows of that store, from 0.
    pub(crate) row: u32,
}

/// The spawn plan of a verified level (see the [module docs](self)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpawnPlan {
    /// `(store id, entities)`, ascending by store id: each store the level spawns into, and
    /// how many rows it gets.
    pub(crate) stores: Vec<(u32, u32)>,
    /// Blocks of consecutive entities with one store, in entity order, covering every entity.
    pub(crate) blocks: Vec<PlanRun>,
    /// `runs[record_runs[r]..record_runs[r + 1]]` are record `r`'s runs (none for a record the
    /// registry does not know).
    record_runs: Vec<u32>,
    runs: Vec<PlanRun>,
}

impl SpawnPlan {
    /// Plans the spawn of `entity_store.len()` entities, entity `e` going to store id
    /// `entity_store[e]`; `records` gives each component type's ascending entity indices (all
    /// below the entity count), `None` for a type that is not spawned.
    pub(crate) fn new<'a>(
        entity_store: &[u32],
        records: impl IntoIterator<Item = Option<&'a [u32]>>,
    ) -> Self {
        let n = entity_store.len();
        // Blocks first (`slot` holds the store id until the stores are sorted).
        let mut blocks: Vec<PlanRun> = Vec::new();
        let mut e = 0;
        while e < n {
            let s = entity_store[e];
            let mut j = e + 1;
            while j < n && entity_store[j] == s {
                j += 1;
            }
            blocks.push(PlanRun {
                start: e as u32,
                len: (j - e) as u32,
                slot: s,
                row: 0,
            });
            e = j;
        }
        let mut stores: Vec<(u32, u32)> = Vec::new();
        for b in &blocks {
            // Few distinct stores: a linear search beats hashing. Sorted afterwards.
            match stores.iter_mut().find(|c| c.0 == b.slot) {
                Some(c) => c.1 += b.len,
                None => stores.push((b.slot, b.len)),
            }
        }
        stores.sort_unstable();
        let mut next = vec![0u32; stores.len()];
        // The block of each entity.
        let mut block_of = vec![0u32; n];
        for (k, b) in blocks.iter_mut().enumerate() {
            let slot = stores.partition_point(|c| c.0 < b.slot) as u32;
            b.slot = slot;
            b.row = next[slot as usize];
            next[slot as usize] += b.len;
            block_of[b.start as usize..(b.start + b.len) as usize].fill(k as u32);
        }

        let mut record_runs = vec![0u32];
        let mut runs: Vec<PlanRun> = Vec::new();
        for index in records {
            let index = index.unwrap_or(&[]);
            let first = runs.len();
            let mut i = 0;
            while i < index.len() {
                let e = index[i];
                let b = blocks[block_of[e as usize] as usize];
                let row = b.row + (e - b.start);
                // Indices ascend strictly: if instance i + k - 1 belongs to entity e + k - 1,
                // instances i..i + k are exactly entities e..e + k, all in e's block (one step
                // per block when the record holds all of it, the common case).
                let k = ((b.start + b.len - e) as usize).min(index.len() - i);
                let k = if index[i + k - 1] as usize == e as usize + k - 1 {
                    k
                } else {
                    1
                };
                match runs[first..].last_mut() {
                    Some(r) if r.slot == b.slot && r.row + r.len == row => r.len += k as u32,
                    _ => runs.push(PlanRun {
                        start: i as u32,
                        len: k as u32,
                        slot: b.slot,
                        row,
                    }),
                }
                i += k;
            }
            record_runs.push(runs.len() as u32);
        }
        SpawnPlan {
            stores,
            blocks,
            record_runs,
            runs,
        }
    }

    /// Record `r`'s runs, in instance order, covering all its instances.
    pub(crate) fn runs(&self, record: usize) -> &[PlanRun] {
        &self.runs[self.record_runs[record] as usize..self.record_runs[record + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: u32, len: u32, slot: u32, row: u32) -> PlanRun {
        PlanRun {
            start,
            len,
            slot,
            row,
        }
    }

    #[test]
    fn grouped_entities_make_one_block_and_one_run_per_store() {
        // Stores 7, 7, 7, 3, 3: store 3 is slot 0, store 7 slot 1.
        let stores = [7, 7, 7, 3, 3];
        let all: Vec<u32> = (0..5).collect();
        let plan = SpawnPlan::new(&stores, [Some(&all[..]), None, Some(&[1, 2, 3][..])]);
        assert_eq!(plan.stores, [(3, 2), (7, 3)]);
        assert_eq!(plan.blocks, [run(0, 3, 1, 0), run(3, 2, 0, 0)]);
        assert_eq!(plan.runs(0), [run(0, 3, 1, 0), run(3, 2, 0, 0)]);
        assert_eq!(plan.runs(1), []);
        // Entities 1 and 2 are rows 1, 2 of store 7; entity 3 is row 0 of store 3.
        assert_eq!(plan.runs(2), [run(0, 2, 1, 1), run(2, 1, 0, 0)]);
    }

    #[test]
    fn interleaved_entities_and_gaps_split_runs() {
        // Store 0, 1, 0, 1, 0: every entity is its own block.
        let stores = [0, 1, 0, 1, 0];
        let plan = SpawnPlan::new(&stores, [Some(&[0, 2, 4][..]), Some(&[0, 1, 4][..])]);
        assert_eq!(plan.stores, [(0, 3), (1, 2)]);
        assert_eq!(
            plan.blocks,
            [
                run(0, 1, 0, 0),
                run(1, 1, 1, 0),
                run(2, 1, 0, 1),
                run(3, 1, 1, 1),
                run(4, 1, 0, 2)
            ]
        );
        // Entities 0, 2, 4 are rows 0, 1, 2 of store 0: one run although not adjacent.
        assert_eq!(plan.runs(0), [run(0, 3, 0, 0)]);
        // Entity 0 (store 0 row 0), 1 (store 1 row 0), 4 (store 0 row 2, not row 1).
        assert_eq!(
            plan.runs(1),
            [run(0, 1, 0, 0), run(1, 1, 1, 0), run(2, 1, 0, 2)]
        );
    }

    #[test]
    fn partial_and_sparse_records_split_where_rows_break() {
        // Stores 5, 5, 5, 5, 9, 9, 5: blocks [0..4) store 5 rows 0..4, [4..6) store 9,
        // [6..7) store 5 row 4.
        let stores = [5, 5, 5, 5, 9, 9, 5];
        let plan = SpawnPlan::new(
            &stores,
            [
                Some(&[1, 2, 3, 6][..]), // rows 1, 2, 3 then 4 of store 5: one run
                Some(&[0, 2, 3, 5][..]), // row 0, rows 2-3, then store 9 row 1
                Some(&[3, 4][..]),       // last of one block, first of the next
            ],
        );
        assert_eq!(plan.stores, [(5, 5), (9, 2)]);
        assert_eq!(
            plan.blocks,
            [run(0, 4, 0, 0), run(4, 2, 1, 0), run(6, 1, 0, 4)]
        );
        assert_eq!(plan.runs(0), [run(0, 4, 0, 1)]);
        assert_eq!(
            plan.runs(1),
            [run(0, 1, 0, 0), run(1, 2, 0, 2), run(3, 1, 1, 1)]
        );
        assert_eq!(plan.runs(2), [run(0, 1, 0, 3), run(1, 1, 1, 0)]);
    }

    #[test]
    fn no_entities_no_runs() {
        let plan = SpawnPlan::new(&[], [Some(&[][..])]);
        assert_eq!(plan.stores, []);
        assert_eq!(plan.blocks, []);
        assert_eq!(plan.runs(0), []);
    }
}
