//! The entity locations: which store and row each live entity is in.
//!
//! # Invariants
//!
//! For every live entity `e`, `table.locate(e) == Some(loc)` and row `loc.row` of store
//! `loc.store` holds `e` in its entity column. Every store is packed: rows `0..len` are live.
//! Removing a row moves the store's last row into the hole (swap-remove) and the world calls
//! [`EntityLocations::relocate`] for the moved entity, so the invariant holds after every
//! operation. Free slots hold [`Location::NONE`], which is what makes lookups of ids that were
//! never issued (or are stale) return `None` rather than another entity's data.

use crate::entity::{Entity, EntityError, EntityManager};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where an entity's components live: a store (one per declared signature) and a row in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// Store id: the signature's index in the generated world.
    pub store: u32,
    /// Row within the store.
    pub row: u32,
}

impl Location {
    /// The location of a free slot.
    pub const NONE: Location = Location {
        store: u32::MAX,
        row: u32::MAX,
    };

    /// A location in `store` at `row`.
    #[inline]
    pub(crate) const fn new(store: u32, row: usize) -> Self {
        Location {
            store,
            row: row as u32,
        }
    }

    /// The row as an index.
    #[inline]
    pub(crate) const fn row(self) -> usize {
        self.row as usize
    }
}

/// Entity ids plus, per slot, the entity's location; and the world's change clock, which every
/// row write reads its stamp from (see `storage/versions.rs`).
#[derive(Debug, Default)]
pub struct EntityLocations {
    entities: EntityManager,
    locations: Vec<Location>,
    /// The change clock: the stamp of the last pass, or the last mark of
    /// `World::change_tick`. Writes outside passes are stamped one later, as the next pass's
    /// are, so that a system that ran before them, or a filter given the mark, sees them.
    /// Atomic only so that a world state's save (`&World`) can move its epoch bits on.
    tick: AtomicU64,
}

impl EntityLocations {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The stamp of a write made now (see the `tick` field).
    #[inline]
    pub(crate) fn stamp(&self) -> u64 {
        self.tick.load(Ordering::Relaxed) + 1
    }

    /// The clock's value: writes stamped after it are newer.
    #[inline]
    pub(crate) fn tick(&self) -> u64 {
        self.tick.load(Ordering::Relaxed)
    }

    /// Starts a pass (or marks now): the clock moves on, and the pass's writes are stamped
    /// with its new value.
    #[inline]
    pub(crate) fn advance(&mut self) -> u64 {
        let tick = self.tick.get_mut();
        *tick += 1;
        *tick
    }

    /// The entity manager, e.g. to register destruction hooks.
    pub(crate) fn entities(&self) -> &EntityManager {
        &self.entities
    }

    /// Mutable access to the entity manager, e.g. to register destruction hooks.
    #[cfg(test)]
    pub(crate) fn entities_mut(&mut self) -> &mut EntityManager {
        &mut self.entities
    }

    /// Number of live entities.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// True when no entity is alive.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Asks the processor to bring `e`'s slots (its generation and its location) into cache,
    /// for a lookup of `e` soon after: applying a frame's despawns spends most of its time
    /// waiting for these random reads. Only a hint: nothing changes, any id is fine.
    #[inline]
    pub(crate) fn prefetch(&self, e: Entity) {
        let i = e.index() as usize;
        if let Some(slot) = self.locations.get(i) {
            crate::prefetch::prefetch(slot);
        }
        self.entities.prefetch(e);
    }

    /// The location of a live entity; `None` for a dead, stale or never-issued id.
    #[inline]
    pub(crate) fn locate(&self, e: Entity) -> Option<Location> {
        if !self.entities.alive(e) {
            return None;
        }
        let loc = self.locations[e.index() as usize];
        (loc != Location::NONE).then_some(loc)
    }

    /// Issues a new entity placed at `loc`.
    #[inline]
    pub(crate) fn create_at(&mut self, loc: Location) -> Result<Entity, EntityError> {
        self.retire_orphans();
        let e = self.entities.create()?;
        self.place(e, loc);
        Ok(e)
    }

    /// Issues `n` entities to be placed at consecutive rows `first_row..` of `store`,
    /// appending them to `out`. All or nothing.
    #[inline]
    pub(crate) fn create_run(
        &mut self,
        store: u32,
        first_row: usize,
        n: usize,
        out: &mut Vec<Entity>,
    ) -> Result<(), EntityError> {
        self.create_runs(&[(store, first_row, n)], out)
    }

    /// Sets slot `idx`'s location, growing the table (with NONE for any slot skipped).
    #[inline]
    fn set_location(&mut self, idx: usize, loc: Location) {
        if let Some(l) = self.locations.get_mut(idx) {
            *l = loc;
        } else {
            if idx > self.locations.len() {
                self.locations.resize(idx, Location::NONE);
            }
            self.locations.push(loc);
        }
    }

    /// Issues entities for several runs of consecutive rows with one `create_many` of their
    /// total, all or nothing: run `(store, first_row, n)` gets the next `n` ids, placed at rows
    /// `first_row..first_row + n` of `store`. The ids are appended to `out`, run after run.
    /// ([`World::begin_spawn`](super::World::begin_spawn)'s way to create its ids; `create_run` is
    /// one run.)
    pub(crate) fn create_runs(
        &mut self,
        runs: &[(u32, usize, usize)],
        out: &mut Vec<Entity>,
    ) -> Result<(), EntityError> {
        self.retire_orphans();
        let total = runs.iter().fold(0usize, |t, r| t.saturating_add(r.2));
        let start = out.len();
        self.entities.create_many_into(total, out)?;
        let slots = self.entities.slots();
        self.locations
            .reserve(slots.saturating_sub(self.locations.len()));
        // Reused ids come first, fresh ones last and ascending from `slots()` before the
        // create: when the first id is the table's next slot, every id is fresh and they are
        // consecutive, so each run's locations are appended as one vectorised extend (a
        // per-id branch and push cost more than the whole `create_many`).
        if out.get(start).map(|e| e.index() as usize) == Some(self.locations.len()) {
            for &(store, first_row, n) in runs {
                self.locations
                    .extend((first_row..first_row + n).map(|row| Location::new(store, row)));
            }
            debug_assert_eq!(self.locations.len(), slots);
            return Ok(());
        }
        // Reused ids (a level restart): their slots are scattered, so every slot gets its
        // entry first (NONE for reserved ids made alive and never placed) and each id's entry
        // is then written in place.
        if self.locations.len() < slots {
            self.locations.resize(slots, Location::NONE);
        }
        let locations = &mut self.locations[..];
        let mut ids = &out[start..];
        for &(store, first_row, n) in runs {
            let (run, rest) = ids.split_at(n);
            for (row, e) in (first_row..).zip(run) {
                locations[e.index() as usize] = Location::new(store, row);
            }
            ids = rest;
        }
        Ok(())
    }

    /// Records that `e` (just created) lives at `loc`.
    #[inline]
    fn place(&mut self, e: Entity, loc: Location) {
        self.set_location(e.index() as usize, loc);
    }

    /// Records that live entity `e` moved to `loc` (after a swap-remove or a signature change).
    #[inline]
    pub(crate) fn relocate(&mut self, e: Entity, loc: Location) {
        debug_assert!(self.entities.alive(e), "relocating dead entity {e}");
        self.locations[e.index() as usize] = loc;
    }

    /// Retires a live entity: its id becomes stale and its slot's location is cleared.
    /// Returns false when `e` was not alive.
    #[inline]
    pub(crate) fn destroy(&mut self, e: Entity) -> bool {
        self.retire_orphans();
        if self.locate(e).is_none() {
            return false;
        }
        self.locations[e.index() as usize] = Location::NONE;
        self.entities.destroy(e)
    }

    /// Retires ids reserved by a pass that never applied its commands (a system panicked):
    /// outside a pass's [`EntityLocations::flush_reserved`] no reservation is pending, so any found
    /// here is an orphan. Without this, the entity manager's next create or destroy would make
    /// them alive with no row (`len` counting entities that do not exist, their slots lost).
    #[inline]
    fn retire_orphans(&mut self) {
        if self.entities.reserved_len() != 0 {
            self.retire_orphans_slow();
        }
    }

    #[cold]
    fn retire_orphans_slow(&mut self) {
        let mut orphans = Vec::new();
        self.flush_reserved(&mut orphans);
        for e in orphans {
            self.destroy_unplaced(e);
        }
    }

    /// Reserves an id through a shared borrow (thread-safe), for [`crate::Commands::spawn`]:
    /// the id is distinct from every live and every other reserved id, and becomes alive at
    /// the next [`EntityLocations::flush_reserved`].
    #[inline]
    #[cfg(test)]
    pub(crate) fn reserve(&self) -> Result<Entity, EntityError> {
        self.entities.reserve()
    }

    /// Makes every reserved id alive, not yet placed in any store (`locate` is `None` until
    /// [`EntityLocations::place_reserved`]); appends them to `out` in reservation order.
    pub(crate) fn flush_reserved(&mut self, out: &mut Vec<Entity>) {
        self.entities.flush_reserved(|e| out.push(e));
        let slots = self.entities.slots();
        if self.locations.len() < slots {
            self.locations.resize(slots, Location::NONE);
        }
    }

    /// Places a flushed reserved entity that has no location yet.
    #[inline]
    pub(crate) fn place_reserved(&mut self, e: Entity, loc: Location) {
        debug_assert!(
            self.entities.alive(e) && self.locations[e.index() as usize] == Location::NONE
        );
        self.place(e, loc);
    }

    /// Is `e` alive but not placed in any store: a flushed reservation waiting for its spawn?
    #[inline]
    pub(crate) fn is_unplaced(&self, e: Entity) -> bool {
        self.entities.alive(e)
            && self
                .locations
                .get(e.index() as usize)
                .copied()
                .unwrap_or(Location::NONE)
                == Location::NONE
    }

    /// Retires an id that is alive but was never placed (a reserved entity whose spawn did
    /// not happen). Returns false when it is dead or placed.
    pub(crate) fn destroy_unplaced(&mut self, e: Entity) -> bool {
        self.is_unplaced(e) && self.entities.destroy(e)
    }
}

/// What a load of a world state changes in the locations (`world/state.rs`): it restores the ids
/// and the clock, and re-places the entities of the rows it restored.
impl EntityLocations {
    /// The entity manager, mutable, for a load.
    pub(crate) fn manager_mut(&mut self) -> &mut EntityManager {
        &mut self.entities
    }

    /// Sets the clock (a stamp: epoch and clock bits).
    pub(crate) fn set_tick(&mut self, tick: u64) {
        *self.tick.get_mut() = tick;
    }

    /// Gives the clock the epoch bits `epoch` (a save's: see `world/state.rs`), keeping its
    /// clock bits.
    pub(crate) fn set_epoch(&self, epoch: u64) {
        let tick = crate::storage::tick(self.tick.load(Ordering::Relaxed));
        self.tick.store(epoch | tick, Ordering::Relaxed);
    }

    /// Clears the locations of `entities`' slots (whatever their generation).
    pub(crate) fn unplace(&mut self, entities: &[Entity]) {
        for e in entities {
            if let Some(l) = self.locations.get_mut(e.index() as usize) {
                *l = Location::NONE;
            }
        }
    }

    /// The location of every slot (NONE for a free or unplaced one), for a world state.
    pub(crate) fn table(&self) -> &[Location] {
        &self.locations
    }

    /// Makes the locations `table` (a world state's, saved with the ids just loaded).
    pub(crate) fn load_table(&mut self, table: &[Location]) {
        self.locations.clear();
        self.locations.extend_from_slice(table);
    }

    /// Places the entities of rows `first..` of store `store` (slots of the entity manager:
    /// after [`EntityLocations::fit_locations`]).
    pub(crate) fn place_rows(&mut self, store: u32, first: usize, entities: &[Entity]) {
        let locations = &mut self.locations[..];
        for (row, e) in (first..).zip(entities) {
            locations[e.index() as usize] = Location::new(store, row);
        }
    }

    /// Gives one location per slot of the entity manager (new ones free).
    pub(crate) fn fit_locations(&mut self) {
        let slots = self.entities.slots();
        self.locations.resize(slots, Location::NONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_tracks_locations_and_rejects_stale_ids() {
        let mut t = EntityLocations::new();
        let a = t.create_at(Location::new(0, 0)).unwrap();
        let b = t.create_at(Location::new(0, 1)).unwrap();
        assert_eq!(t.locate(a), Some(Location::new(0, 0)));
        t.relocate(b, Location::new(0, 0));
        assert!(t.destroy(a));
        assert_eq!(t.locate(a), None);
        assert!(!t.destroy(a));
        assert_eq!(t.locate(b), Some(Location::new(0, 0)));
        // A forged id with the freed slot's next generation is not located.
        let forged = Entity::new(a.index(), a.generation().wrapping_add(1));
        assert_eq!(t.locate(forged), None);
        assert!(!t.destroy(forged));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn create_run_places_consecutive_rows() {
        let mut t = EntityLocations::new();
        let mut out = Vec::new();
        t.create_run(3, 10, 4, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        for (i, e) in out.iter().enumerate() {
            assert_eq!(t.locate(*e), Some(Location::new(3, 10 + i)));
        }
    }

    #[test]
    fn create_runs_places_each_run_after_one_create_many() {
        let mut t = EntityLocations::new();
        let old = t.create_at(Location::new(0, 0)).unwrap();
        assert!(t.destroy(old));
        let mut out = vec![old];
        t.create_runs(&[(2, 5, 2), (0, 0, 0), (1, 7, 3)], &mut out)
            .unwrap();
        assert_eq!(out.len(), 6, "appended after what `out` held");
        let want = [(2, 5), (2, 6), (1, 7), (1, 8), (1, 9)];
        for (e, (store, row)) in out[1..].iter().zip(want) {
            assert_eq!(t.locate(*e), Some(Location::new(store, row)));
        }
        assert_eq!(t.len(), 5);
        // A reservation pending at a create is an orphan (its pass never applied): retired,
        // not made alive; the run's ids are placed.
        let r = t.reserve().unwrap();
        let mut more = Vec::new();
        t.create_runs(&[(4, 0, 2)], &mut more).unwrap();
        assert!(!t.entities().alive(r) && t.locate(r).is_none());
        assert_eq!(t.entities().reserved_len(), 0);
        assert!(!more.contains(&r));
        assert_eq!(t.locate(more[0]), Some(Location::new(4, 0)));
        assert_eq!(t.locate(more[1]), Some(Location::new(4, 1)));
        assert!(!t.destroy_unplaced(r));
        assert!(t.destroy(more[0]) && t.destroy(more[1]));
        // Too many: nothing is issued.
        let err = t.create_runs(&[(0, 0, 1), (0, 1, usize::MAX)], &mut out);
        assert!(matches!(err, Err(EntityError::Exhausted { .. })));
        assert_eq!((t.len(), out.len()), (5, 6));
    }

    #[test]
    fn create_runs_places_reused_and_fresh_ids() {
        use crate::entity::MINIMUM_FREE_INDICES;
        let mut t = EntityLocations::new();
        let n = MINIMUM_FREE_INDICES + 8;
        let mut first = Vec::new();
        t.create_runs(&[(0, 0, n)], &mut first).unwrap();
        for &e in &first {
            assert!(t.destroy(e));
        }
        // 8 freed indices are reusable; the other 4 ids are fresh.
        let mut out = Vec::new();
        t.create_runs(&[(3, 0, 5), (1, 2, 7)], &mut out).unwrap();
        let reused = out.iter().filter(|e| (e.index() as usize) < n).count();
        assert_eq!(reused, 8);
        for (k, e) in out.iter().enumerate() {
            let want = if k < 5 {
                Location::new(3, k)
            } else {
                Location::new(1, 2 + k - 5)
            };
            assert_eq!(t.locate(*e), Some(want), "id {k}");
        }
        assert_eq!(t.len(), 12);
        for &e in &first {
            assert_eq!(t.locate(e), None, "stale");
        }
    }

    #[test]
    fn reserved_ids_are_placed_or_retired() {
        let mut t = EntityLocations::new();
        let live = t.create_at(Location::new(0, 0)).unwrap();
        let (r1, r2) = (t.reserve().unwrap(), t.reserve().unwrap());
        assert!(r1 != r2 && r1 != live && r2 != live);
        assert_eq!(t.locate(r1), None, "not alive before the flush");
        let mut flushed = Vec::new();
        t.flush_reserved(&mut flushed);
        assert_eq!(flushed, [r1, r2]);
        assert_eq!(t.locate(r1), None, "alive but not placed");
        t.place_reserved(r1, Location::new(1, 0));
        assert_eq!(t.locate(r1), Some(Location::new(1, 0)));
        assert!(!t.destroy_unplaced(r1), "placed: not retired this way");
        assert!(t.destroy_unplaced(r2));
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn location_row_and_accessors() {
        assert_eq!(Location::new(2, 7).row(), 7);
        assert_eq!(Location::new(0, 0).row(), 0);
        let mut t = EntityLocations::new();
        assert!(t.is_empty());
        assert_eq!(t.entities().len(), 0);
        let destroyed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = destroyed.clone();
        t.entities_mut()
            .on_destroy(move |e| seen.lock().unwrap().push(e));
        let a = t.create_at(Location::new(0, 0)).unwrap();
        let b = t.create_at(Location::new(0, 1)).unwrap();
        assert!(!t.is_empty());
        assert_eq!(
            (t.len(), t.entities().len(), t.entities().slots()),
            (2, 2, 2)
        );
        assert!(t.entities().alive(a) && t.entities().alive(b));
        assert!(t.destroy(a));
        assert_eq!(
            *destroyed.lock().unwrap(),
            [a],
            "the hook registered through entities_mut ran"
        );
        assert!(!t.entities().alive(a));
        assert!(t.destroy(b));
        assert!(t.is_empty());
    }
}
