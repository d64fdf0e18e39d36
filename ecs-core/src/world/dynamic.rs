//! Dynamic stores: where an entity lives when its component set is one no signature declares.
//!
//! Declared signatures get generated, typed stores. An `insert` or `remove` (direct or through
//! [`Commands`](crate::Commands)) or a level spawn that leads to any other set places the entity
//! in the dynamic store of that exact set, made on first use from the same type-erased columns:
//! one column per component, in component id order (the `columns` layout). Dynamic stores are
//! packed like declared ones and share the store id space — ids `0..declared` are the declared
//! stores, dynamic ones follow in the order they were made — so a [`Location`] is the same two
//! words and every store-generic operation (despawn, get, queries, invariants) works on both.
//!
//! - **Moves** in and out of a dynamic store are byte-wise, along an [`Edge`] computed once per
//!   (store, component) and kept here; moves between two declared stores keep their typed
//!   functions.
//! - **Systems** visit the dynamic stores whose set matches them (the rule of `sigecs_rules::matches`): each
//!   system's list of matching dynamic stores is kept here, grown when a store is made, and a
//!   generated pass runs its typed per-system loop over their columns
//!   ([`crate::__private::DynamicStores`]).
//! - **Reports**: [`World::undeclared`] lists each dynamic store with its rows and moves and a
//!   ready-to-paste `#[derive(Signature)]` that moves those entities to the generated fast path.
//!
//! A dynamic store's description ([`StoreInfo`]) is interned per process and model: one per
//! distinct component set ever used, shared by every world of the model and never freed (as a
//! declared store's is a `static`).
//!
//! A strict world (`WorldModel::STRICT`) makes no dynamic store: the same operations are the
//! [`WorldError::UndeclaredSignature`] they always were.

use super::{Change, Location, World, WorldError};
use crate::entity::Entity;
use crate::model::{Edge, MoveBatch, Slot, StoreInfo, WorldModel};
use crate::plural::count;
use crate::rules::matches;
use crate::set::AnyComponentBits;
use crate::stats::Layout;
use crate::storage::{ColumnType, Store};
use rustc_hash::FxHashMap;
use std::any::TypeId;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// What a world keeps about its dynamic stores.
#[derive(Debug)]
pub(crate) struct Dynamic<S> {
    /// The dynamic store of each component set.
    by_mask: FxHashMap<S, u32>,
    /// Per dynamic store, by creation order: its component set.
    masks: Vec<S>,
    /// Per dynamic store, by creation order: how it was used.
    usage: Vec<Usage>,
    /// Per dynamic store, by creation order: the stamp of its creation. A world state saved
    /// before it knows nothing of its records (`world/state.rs`).
    born: Vec<u64>,
    /// Per system (declaration order): the dynamic stores it visits, ascending.
    matches: Vec<Vec<u32>>,
    /// Every move that starts or ends in a dynamic store (or leads from a declared store to an
    /// undeclared set), made on first use.
    edges: Vec<DynamicEdge>,
    /// The index in `edges` of the move of a component from a store, by [`edge_key`].
    edge_index: FxHashMap<u64, u32>,
    /// Recently used entries of `edge_index`, direct-mapped by key: a burst of the same insert
    /// or remove (a tag added to many entities) finds its edge without hashing.
    recent: [(u64, u32); RECENT],
}

/// Slots of [`Dynamic::recent`].
const RECENT: usize = 16;

/// A move along an [`Edge`], and the dynamic stores whose usage it changes.
#[derive(Debug)]
struct DynamicEdge {
    edge: Edge,
    /// The source's index among the dynamic stores, if it is one.
    from_dynamic: Option<u32>,
    /// The target's index among the dynamic stores, if it is one.
    to_dynamic: Option<u32>,
}

/// How a dynamic store was used.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    /// The most rows it held.
    peak: usize,
    /// Entities that moved in or out of it by an insert or remove.
    moves: u64,
}

/// The key of the move of component `c` from store `store`.
#[inline]
fn edge_key(store: u32, c: u32) -> u64 {
    (u64::from(store) << 32) | u64::from(c)
}

/// The slot index of component `c` in a dynamic store of set `mask`: its components are in id
/// order, one slot each.
#[inline]
pub(crate) fn dynamic_slot<S: AnyComponentBits>(mask: S, c: u32) -> Option<usize> {
    mask.contains(c).then(|| mask.rank(c))
}

/// How the dynamic store of the empty set, and an undeclared empty set, are named.
const NO_COMPONENTS: &str = "(no components)";

/// Marks a dynamic store's `StoreInfo::signature`: no signature type spawns into it.
struct DynamicSet;

/// The description of the dynamic store of set `mask` in model `M`, interned.
fn interned_info<M: WorldModel>(mask: M::Set) -> &'static StoreInfo {
    type Interned = FxHashMap<(TypeId, Box<[u64]>), &'static StoreInfo>;
    static INFOS: OnceLock<Mutex<Interned>> = OnceLock::new();
    let infos = INFOS.get_or_init(Default::default);
    let mut infos = infos
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    infos
        .entry((TypeId::of::<M>(), mask.as_ref().into()))
        .or_insert_with(|| Box::leak(Box::new(describe::<M>(mask))))
}

/// A dynamic store's description: one column per component of `mask`, in id order, named by
/// its set (`A | B`, or `(no components)`).
fn describe<M: WorldModel>(mask: M::Set) -> StoreInfo {
    let components = M::components();
    let ids: Vec<u32> = mask.ids().collect();
    let columns: Vec<ColumnType> = ids.iter().map(|&c| components[c as usize].ty).collect();
    let slots: Vec<Slot> = ids
        .iter()
        .enumerate()
        .map(|(k, &c)| Slot::new(c, k as u32, 0))
        .collect();
    let name = match super::set_names::<M>(mask) {
        empty if empty.is_empty() => NO_COMPONENTS.into(),
        set => set,
    };
    StoreInfo {
        name: Box::leak(name.into_boxed_str()),
        layout: Layout::Columns,
        columns: Box::leak(columns.into_boxed_slice()),
        slots: Box::leak(slots.into_boxed_slice()),
        signature: TypeId::of::<DynamicSet>,
    }
}

impl<S> Default for Dynamic<S> {
    fn default() -> Self {
        Dynamic {
            by_mask: FxHashMap::default(),
            masks: Vec::new(),
            usage: Vec::new(),
            born: Vec::new(),
            matches: Vec::new(),
            edges: Vec::new(),
            edge_index: FxHashMap::default(),
            // No key is `u64::MAX` (store ids and component ids are below `u32::MAX`).
            recent: [(u64::MAX, 0); RECENT],
        }
    }
}

impl<S: AnyComponentBits> Dynamic<S> {
    /// The index of the edge with key `key`, if it was made.
    #[inline]
    fn find(&mut self, key: u64) -> Option<u32> {
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % RECENT;
        let (k, i) = self.recent[slot];
        if k == key {
            return Some(i);
        }
        let i = *self.edge_index.get(&key)?;
        self.recent[slot] = (key, i);
        Some(i)
    }

    /// Per system (declaration order), the dynamic stores it visits, ascending.
    pub(crate) fn matches(&self) -> &[Vec<u32>] {
        &self.matches
    }

    /// The dynamic store of set `mask`, if the world made one.
    pub(crate) fn store_with_mask(&self, mask: S) -> Option<u32> {
        self.by_mask.get(&mask).copied()
    }

    /// The component set of dynamic store `index` (by creation order).
    #[inline]
    pub(crate) fn mask(&self, index: usize) -> S {
        self.masks[index]
    }

    /// Records that dynamic store `index` (by creation order) holds `rows` rows.
    fn note_rows(&mut self, index: usize, rows: usize) {
        let u = &mut self.usage[index];
        u.peak = u.peak.max(rows);
    }
}

impl<M: WorldModel> World<M> {
    /// The number of declared stores: store ids below it are declared, the rest dynamic.
    #[inline]
    pub(crate) fn declared(&self) -> usize {
        M::stores().len()
    }

    /// The dynamic store of component set `mask`, made (empty) if the world has none yet.
    pub(crate) fn dynamic_store(&mut self, mask: M::Set) -> u32 {
        if let Some(&id) = self.dynamic.by_mask.get(&mask) {
            return id;
        }
        debug_assert!(!M::STRICT && self.tables.store_with_mask(mask).is_none());
        let id = u32::try_from(self.stores.len()).expect("fewer than 2^32 stores");
        self.stores.push(Store::new(
            interned_info::<M>(mask),
            M::components(),
            M::STATES,
        ));
        self.dynamic.by_mask.insert(mask, id);
        self.dynamic.masks.push(mask);
        self.dynamic.usage.push(Usage::default());
        self.dynamic.born.push(self.locations.stamp());
        let systems = M::systems();
        self.dynamic.matches.resize_with(systems.len(), Vec::new);
        for (s, system) in systems.iter().enumerate() {
            let (required, excluded) = self.tables.system_sets(s);
            if system.per_row && matches(mask.as_ref(), required.as_ref(), excluded.as_ref()) {
                self.dynamic.matches[s].push(id);
            }
        }
        id
    }

    /// The store of component set `mask`: the declared one, else the dynamic one (made if
    /// needed). `None` in a strict world when no signature declares it.
    pub(crate) fn store_of_set(&mut self, mask: M::Set) -> Option<u32> {
        match self.tables.store_with_mask(mask) {
            Some(id) => Some(id),
            None if M::STRICT => None,
            None => Some(self.dynamic_store(mask)),
        }
    }

    /// The move of component `c` from store `from` (a dynamic store, or a declared one whose
    /// neighbouring set is not declared), made on first use; its index. `None` in a strict
    /// world when the target set is not declared.
    #[inline]
    pub(crate) fn edge(&mut self, from: u32, c: u32) -> Option<u32> {
        let key = edge_key(from, c);
        match self.dynamic.find(key) {
            Some(i) => Some(i),
            None => self.make_edge(from, c, key),
        }
    }

    #[cold]
    #[inline(never)]
    fn make_edge(&mut self, from: u32, c: u32, key: u64) -> Option<u32> {
        let from_info = self.stores[from as usize].info();
        let mask = self.store_mask(from as usize);
        let to = self.store_of_set(if mask.contains(c) {
            mask.without(c)
        } else {
            mask.with(c)
        })?;
        let to_info = self.stores[to as usize].info();
        let declared = self.declared();
        let dynamic = |store: u32| (store as usize).checked_sub(declared).map(|i| i as u32);
        let i = self.dynamic.edges.len() as u32;
        self.dynamic.edges.push(DynamicEdge {
            edge: Edge::between(from_info, to, to_info, c, M::components()),
            from_dynamic: dynamic(from),
            to_dynamic: dynamic(to),
        });
        self.dynamic.edge_index.insert(key, i);
        Some(i)
    }

    /// Moves `entity` from `loc` along edge `i` (see [`MoveFn`](crate::model::tables::MoveFn) for
    /// `value`), and with a `batch`, each next item of it while its entity lives in the same
    /// store and the target has room; records the moves in the dynamic stores' usage and
    /// returns how many items moved.
    ///
    /// # Safety
    /// Edge `i` is an edge of `loc.store`, the live location of `entity`; `value` points to an
    /// owned value of the inserted component (which the caller then treats as moved), or to
    /// room for the removed one (which the caller then owns); a batch is as `MoveFn` says, its
    /// first item `entity` and `value`.
    #[inline]
    pub(crate) unsafe fn move_along(
        &mut self,
        entity: Entity,
        loc: Location,
        i: u32,
        value: *mut u8,
        batch: Option<&MoveBatch>,
    ) -> usize {
        let rows = self.run_room(loc, batch);
        let Dynamic { edges, usage, .. } = &mut self.dynamic;
        let edge = &edges[i as usize];
        let to = edge.edge.to;
        debug_assert_ne!(loc.store, to);
        // Room first: nothing may fail once values start to move.
        self.stores[to as usize].reserve(rows);
        // SAFETY: the edge was made from the two stores' slots (`Edge::between`) for a move of
        // its component from `loc.store`, where `entity` lives; the target has room for a row;
        // `value` and the batch are as the caller guarantees.
        let moved = unsafe {
            crate::__private::move_rows(
                self.stores.as_mut_ptr(),
                &mut self.locations,
                entity,
                loc,
                value,
                batch,
                || edge.edge.shape(loc.store),
                |m| crate::__private::erased_body(m, &edge.edge),
            )
        };
        if let Some(k) = edge.from_dynamic {
            usage[k as usize].moves += moved as u64;
        }
        if let Some(k) = edge.to_dynamic {
            let u = &mut usage[k as usize];
            u.moves += moved as u64;
            u.peak = u.peak.max(self.stores[to as usize].len());
        }
        moved
    }

    /// Inserts `value` (of component `c`, at `value`) into the entity at `loc`, which lacks
    /// `c` and has no declared move with it: moves it to the store of its set plus `c`.
    ///
    /// # Safety
    /// `value` points to an owned value of component `c`, which is moved into the store (the
    /// caller then treats it as moved) unless this returns an error.
    pub(crate) unsafe fn insert_undeclared(
        &mut self,
        entity: Entity,
        loc: Location,
        c: u32,
        value: *mut u8,
    ) -> Result<(), WorldError> {
        let Some(i) = self.edge(loc.store, c) else {
            return Err(self.undeclared_error(entity, loc, Change::Insert, c));
        };
        // SAFETY: edge `i` is the move of `c` from `loc.store`; `value` as the caller
        // guarantees.
        unsafe { self.move_along(entity, loc, i, value, None) };
        Ok(())
    }

    /// Removes component `c` (which the entity at `loc` has, without a declared move) into
    /// `value`: moves the entity to the store of its set minus `c`.
    ///
    /// # Safety
    /// `value` points to room for a value of component `c`, which the caller owns after an
    /// `Ok`.
    pub(crate) unsafe fn remove_undeclared(
        &mut self,
        entity: Entity,
        loc: Location,
        c: u32,
        value: *mut u8,
    ) -> Result<(), WorldError> {
        let Some(i) = self.edge(loc.store, c) else {
            return Err(self.undeclared_error(entity, loc, Change::Remove, c));
        };
        // SAFETY: edge `i` is the move of `c` from `loc.store`; `value` as the caller
        // guarantees.
        unsafe { self.move_along(entity, loc, i, value, None) };
        Ok(())
    }

    /// Records that a dynamic store's rows grew (a batch of [`World::begin_spawn`] went there).
    pub(crate) fn note_dynamic_rows(&mut self, store: u32) {
        if let Some(index) = (store as usize).checked_sub(self.declared()) {
            let rows = self.stores[store as usize].len();
            self.dynamic.note_rows(index, rows);
        }
    }

    /// Every dynamic store: the component sets entities took that no signature declares, with
    /// how they were used and the declaration that would give them a generated store. Empty in
    /// a world whose entities all have declared sets (and always in a strict world).
    pub fn undeclared(&self) -> Vec<UndeclaredSet> {
        let declared = self.declared();
        let components = M::components();
        self.stores[declared..]
            .iter()
            .zip(&self.dynamic.usage)
            .map(|(store, usage)| {
                let info = store.info();
                UndeclaredSet {
                    components: info
                        .slots
                        .iter()
                        .map(|s| components[s.component as usize].name)
                        .collect(),
                    rows: store.len(),
                    peak_rows: usage.peak,
                    moves: usage.moves,
                }
            })
            .collect()
    }
}

/// A component set that entities took and no signature declares: one dynamic store
/// ([`World::undeclared`]). Its `Display` is a summary line (the set written as
/// the world's `ComponentSet` writes it: `HEALTH | LIFETIME`); [`UndeclaredSet::declaration`]
/// is the Rust to paste into a scanned file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndeclaredSet {
    /// Its components' names, in component id order.
    pub components: Vec<&'static str>,
    /// Entities in it now.
    pub rows: usize,
    /// The most entities it held.
    pub peak_rows: usize,
    /// Inserts and removes that moved an entity into or out of it.
    pub moves: u64,
}

/// The length past which [`UndeclaredSet::suggested_name`] shortens a name.
const SUGGESTED_NAME_LEN: usize = 40;

impl UndeclaredSet {
    /// A name for the signature: its components' names joined (`HealthLifetimeBomb`). Past 40
    /// characters, the first names that fit, the count of the others and
    /// a tag from all of them (`AiBodyCargoAnd9More3F2A`), so that two long sets get two names.
    pub fn suggested_name(&self) -> String {
        if self.components.is_empty() {
            return "Empty".into();
        }
        let joined = self.components.concat();
        if joined.len() <= SUGGESTED_NAME_LEN {
            return joined;
        }
        let mut out = String::new();
        let mut kept = 0;
        for c in &self.components {
            if kept > 0 && out.len() + c.len() > SUGGESTED_NAME_LEN - 12 {
                break;
            }
            out.push_str(c);
            kept += 1;
        }
        // A stable tag (the same set gives the same name on every run of this build).
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        self.components.hash(&mut h);
        let rest = self.components.len() - kept;
        format!("{out}And{rest}More{:04X}", h.finish() & 0xFFFF)
    }

    /// A ready-to-paste declaration of the set, in the world's own component names; declaring
    /// it gives these entities a generated store at the next build, with no other change.
    /// `None` for the empty set, which no signature can declare.
    pub fn declaration(&self) -> Option<String> {
        if self.components.is_empty() {
            return None;
        }
        let mut out = format!(
            "#[derive(Signature)]\npub struct {} {{\n",
            self.suggested_name()
        );
        for c in &self.components {
            out.push_str(&format!("    pub {}: {c},\n", field_name(c)));
        }
        out.push('}');
        Some(out)
    }
}

impl fmt::Display for UndeclaredSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} now, {} at most, {}",
            match self.components.as_slice() {
                [] => NO_COMPONENTS.to_string(),
                names => names
                    .iter()
                    .map(|n| crate::rules::constant_case(n))
                    .collect::<Vec<_>>()
                    .join(" | "),
            },
            count(self.rows, "entity", "entities"),
            self.peak_rows,
            count(self.moves.try_into().unwrap_or(usize::MAX), "move", "moves")
        )
    }
}

/// A field name for component `name`: snake case (`LocalTransform` → `local_transform`), a
/// keyword made raw (`r#type`).
fn field_name(name: &str) -> String {
    // The generator's rule for names (`sigecs_rules::snake_case`); a keyword is written raw,
    // or with `_` where it cannot be (`self`, `super`, `crate`).
    let out = crate::rules::snake_case(name);
    match out.as_str() {
        "self" | "super" | "crate" => out + "_",
        word if crate::rules::is_keyword(word) => format!("r#{out}"),
        _ => out,
    }
}

/// The dynamic stores in world states (`world/state.rs`): their sets and usage are saved; a
/// load keeps the stores the saved world had too and remakes the others.
impl<S: AnyComponentBits> Dynamic<S> {
    /// Number of dynamic stores.
    pub(crate) fn len(&self) -> usize {
        self.masks.len()
    }

    /// The stamp at which dynamic store `index` was made.
    pub(crate) fn born(&self, index: usize) -> u64 {
        self.born[index]
    }

    /// Drops the epoch bits of the creation stamps (the world's epochs ran out).
    pub(crate) fn clear_epochs(&mut self) {
        for b in self.born.iter_mut() {
            *b = crate::storage::tick(*b);
        }
    }

    /// (peak rows, moves) of dynamic store `index`.
    pub(crate) fn usage_of(&self, index: usize) -> (usize, u64) {
        let u = self.usage[index];
        (u.peak, u.moves)
    }

    /// Sets the usage of dynamic store `index`.
    pub(crate) fn set_usage(&mut self, index: usize, (peak, moves): (usize, u64)) {
        self.usage[index] = Usage { peak, moves };
    }

    /// Forgets the dynamic stores from `keep` on (their stores are gone from the world, whose
    /// first `declared` stores are declared), and every cached move, since one may lead to
    /// them.
    pub(crate) fn truncate(&mut self, keep: usize, declared: usize) {
        if keep >= self.masks.len() {
            return;
        }
        let end = (declared + keep) as u32;
        self.masks.truncate(keep);
        self.usage.truncate(keep);
        self.born.truncate(keep);
        self.by_mask.retain(|_, id| *id < end);
        for m in self.matches.iter_mut() {
            m.retain(|&id| id < end);
        }
        self.edges.clear();
        self.edge_index.clear();
        self.recent = [(u64::MAX, 0); RECENT];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_are_snake_case_and_never_keywords() {
        assert_eq!(field_name("LocalTransform"), "local_transform");
        assert_eq!(field_name("Hp"), "hp");
        assert_eq!(field_name("Type"), "r#type");
        assert_eq!(field_name("A"), "a");
        assert_eq!(field_name("HTTPServer"), "http_server");
        assert_eq!(field_name("Crate"), "crate_");
    }

    #[test]
    fn a_dynamic_slot_is_the_rank_of_its_component() {
        let set = crate::ComponentBits::<2>::from_words([0b1011, 0]);
        assert_eq!(dynamic_slot(set, 0), Some(0));
        assert_eq!(dynamic_slot(set, 1), Some(1));
        assert_eq!(dynamic_slot(set, 2), None);
        assert_eq!(dynamic_slot(set, 3), Some(2));
        let wide = crate::ComponentBits::<3>::from_words([1, 0, 1 << 63]);
        assert_eq!(dynamic_slot(wide, 191), Some(1));
        assert_eq!(dynamic_slot(wide, 190), None);
    }

    #[test]
    fn a_declaration_names_every_component() {
        let set = UndeclaredSet {
            components: vec!["Health", "Lifetime", "Type"],
            rows: 2,
            peak_rows: 5,
            moves: 9,
        };
        assert_eq!(
            set.declaration().unwrap(),
            "#[derive(Signature)]\npub struct HealthLifetimeType {\n    pub health: Health,\n    \
             pub lifetime: Lifetime,\n    pub r#type: Type,\n}"
        );
        assert_eq!(
            set.to_string(),
            "HEALTH | LIFETIME | TYPE: 2 entities now, 5 at most, 9 moves"
        );
        let empty = UndeclaredSet {
            components: vec![],
            rows: 1,
            peak_rows: 1,
            moves: 1,
        };
        assert_eq!(empty.declaration(), None);
        assert_eq!(
            empty.to_string(),
            "(no components): 1 entity now, 1 at most, 1 move"
        );
    }

    #[test]
    fn long_suggested_names_are_shortened_and_stay_distinct() {
        let set = |components: Vec<&'static str>| UndeclaredSet {
            components,
            rows: 0,
            peak_rows: 0,
            moves: 0,
        };
        let short = set(vec!["Health", "Lifetime"]);
        assert_eq!(short.suggested_name(), "HealthLifetime");
        let long = set(vec![
            "Position",
            "Velocity",
            "Acceleration",
            "Health",
            "Lifetime",
            "Target",
            "Faction",
        ]);
        let name = long.suggested_name();
        assert!(name.len() <= 40, "{name}");
        assert!(
            name.starts_with("PositionVelocityAccelerationAnd4More"),
            "{name}"
        );
        assert_eq!(name, long.suggested_name(), "the same set, the same name");
        let other = set(vec![
            "Position",
            "Velocity",
            "Acceleration",
            "Health",
            "Lifetime",
            "Target",
            "Squad",
        ]);
        assert_ne!(other.suggested_name(), name, "another set, another name");
        let declaration = long.declaration().unwrap();
        assert!(declaration.starts_with(&format!("#[derive(Signature)]\npub struct {name} {{")));
        assert_eq!(
            declaration.matches(": ").count(),
            7,
            "every component is a field"
        );
    }
}
