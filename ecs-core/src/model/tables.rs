//! The static tables a generated world describes itself with ([`WorldModel`]'s), and the
//! tables the runtime derives from them once per process ([`Tables`]: component → slot per
//! store, the insert/remove transitions and their moves). For generated code only: reached
//! through `sigecs::__private`.

use super::WorldModel;
use crate::entity::Entity;
use crate::set::AnyComponentBits;
use crate::stats::Layout;
use crate::storage::ColumnType;
use crate::storage::Store;
use crate::world::{EntityLocations, Location};
use rustc_hash::FxHashMap;
use std::any::TypeId;

/// A declared component.
#[derive(Debug)]
pub struct ComponentInfo {
    /// Its type name as declared.
    pub name: &'static str,
    /// Its size, alignment, drop and `TypeId`.
    pub ty: ColumnType,
    /// `#[component(sparse)]`: kept in a sparse set beside the stores, never in a store.
    pub sparse: bool,
}

impl ComponentInfo {
    /// The entry of component type `T` named `name`.
    pub const fn of<T: crate::Component>(name: &'static str) -> Self {
        ComponentInfo {
            name,
            ty: ColumnType::of::<T>(),
            sparse: T::SPARSE,
        }
    }
}

/// Where a component lives in a store: a column, and a byte offset in the column's element
/// (0 in a `columns` store; the field offset in a `rows` store's row struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Component id.
    pub component: u32,
    /// Column index in the store.
    pub column: u32,
    /// Byte offset within the column's element.
    pub offset: u32,
}

impl Slot {
    /// Component `component` in column `column` at byte `offset` of its elements.
    pub const fn new(component: u32, column: u32, offset: usize) -> Self {
        Slot {
            component,
            column,
            offset: offset as u32,
        }
    }
}

/// The column type of each entry of `components` (component ids), from `infos`. A generated
/// world lists the components of all its `columns` stores in one array, store after store,
/// and derives their columns and slots from it with this and [`column_slots`] (in its
/// statics, at compile time), each store taking its run of them with [`sub_slice`], rather
/// than naming each column's type and slot again. Panics if an id is out of bounds.
pub const fn column_types<const N: usize>(
    infos: &[ComponentInfo],
    components: &[u32; N],
) -> [ColumnType; N] {
    let mut out = [ColumnType::of::<()>(); N];
    let mut k = 0;
    while k < N {
        out[k] = infos[components[k] as usize].ty;
        k += 1;
    }
    out
}

/// The slots of consecutive `columns` stores whose components are `components`, store after
/// store, the `k`th store having `counts[k]` of them: each component in its column of its
/// store (the first column is 0 in every store), at offset 0 (see [`column_types`]). Panics
/// unless `counts` adds up to `N`.
pub const fn column_slots<const N: usize>(components: &[u32; N], counts: &[u32]) -> [Slot; N] {
    let mut out = [Slot::new(0, 0, 0); N];
    let (mut at, mut store) = (0, 0);
    while store < counts.len() {
        let mut column = 0;
        while column < counts[store] {
            out[at] = Slot::new(components[at], column, 0);
            (at, column) = (at + 1, column + 1);
        }
        store += 1;
    }
    assert!(at == N, "the counts add up to the components");
    out
}

/// The `len` items of `all` from index `at`: a store's run of the tables [`column_types`] and
/// [`column_slots`] make. Panics if they are out of bounds.
pub const fn sub_slice<T>(all: &'static [T], at: usize, len: usize) -> &'static [T] {
    all.split_at(at).1.split_at(len).0
}

/// A declared signature's store.
#[derive(Debug)]
pub struct StoreInfo {
    /// The signature's name.
    pub name: &'static str,
    /// Its layout.
    pub layout: Layout,
    /// The element type of each column.
    pub columns: &'static [ColumnType],
    /// One slot per component, in the signature's field declaration order.
    pub slots: &'static [Slot],
    /// The signature type's `TypeId` (for spawn commands).
    pub signature: fn() -> TypeId,
}

/// A system: its name, the declared stores it runs over, and the rule that says which dynamic
/// stores it runs over too.
#[derive(Debug)]
pub struct SystemInfo {
    /// The function's name.
    pub name: &'static str,
    /// Declared store ids it matches, ascending.
    pub stores: &'static [u32],
    /// Components a store must hold for the system to visit it (its `&C`/`&mut C` parameters
    /// and `with(..)` filters), by id.
    pub required: &'static [u32],
    /// Components a store must not hold (`without(..)` filters), by id.
    pub excluded: &'static [u32],
    /// False for a system that visits no store: a frame-level system (no component or entity
    /// parameter), or one whose components are all sparse (its pass walks a sparse set).
    pub per_row: bool,
}

/// The insert/remove moves of a batch's entities, each from its location to the end of the
/// transition's target store: copy every component the two stores share from the source row
/// to the target row (bitwise, as the transition's [`CopyOp`]s would); for an insert write the
/// new component's value from the item's value into the target row, for a remove move the
/// removed value out to it; fill the vacated source row from the source's last rows (a single
/// move at once, a batch's run once it is over); then update the two stores' entity ids and the
/// moved entities' locations, through [`move_rows`](crate::__private::move_rows), which all
/// moves share. It moves the first item, then each next one while that entity is live in the
/// same source store and the target has room, and returns how many it moved. Generated worlds write one with static types (and
/// constant store ids) per declared transition; any other transition uses a byte-wise one,
/// which finds the transition's [`CopyOp`]s by `component` (the caller passes a constant rather
/// than looking the transition up for every move, which a typed move does not need). The moves
/// run inside this one indirect call, with its arguments in registers, so that the caller
/// keeps nothing live across it.
///
/// # Safety
/// `stores` are the world's stores; `loc` is the live location of the batch's first entity in
/// the transition's source store; `component` is the inserted or removed component, whose move
/// from that store this is; the target store has room for one more row (its row `len()` is
/// within the capacity and unwritten); the batch's entities are readable, and each item's
/// value points to an owned value of the inserted component (which the caller treats as moved
/// for the items the move reports), or to room for the removed one (which the caller then
/// owns).
pub type MoveFn = unsafe fn(
    stores: *mut Store,
    locations: &mut EntityLocations,
    entity: Entity,
    loc: Location,
    value: *mut u8,
    component: u32,
    batch: Option<&MoveBatch>,
) -> usize;

/// The items of one move call: item `i`'s entity is at `entities + i * entity_stride`, and its
/// value at `values + i * value_stride` (the value to insert, or room for the removed one).
/// Strides let a batch read the entities and values of `(Entity, C)` pairs in place, or an
/// entity slice beside an output buffer. `vacated` is room for one source row per item: the
/// rows the run leaves, filled in one pass once it is over. Made only inside the crate; a
/// generated move passes it on to [`move_rows`](crate::__private::move_rows).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct MoveBatch {
    entities: *const u8,
    entity_stride: usize,
    values: *mut u8,
    value_stride: usize,
    vacated: *mut u32,
    len: usize,
}

impl MoveBatch {
    /// `len` items (at least one) laid out as the type's description says, with room for `len`
    /// rows in `vacated` (cleared); the pointers are only read or written by a move, under its
    /// contract.
    #[inline]
    pub(crate) fn new(
        entities: *const Entity,
        entity_stride: usize,
        values: *mut u8,
        value_stride: usize,
        vacated: &mut Vec<u32>,
        len: usize,
    ) -> Self {
        debug_assert!(len > 0);
        vacated.clear();
        vacated.reserve(len);
        MoveBatch {
            entities: entities.cast(),
            entity_stride,
            values,
            value_stride,
            vacated: vacated.as_mut_ptr(),
            len,
        }
    }

    /// The room for the source rows a run vacates, one per item.
    #[inline(always)]
    pub(crate) fn vacated(&self) -> *mut u32 {
        self.vacated
    }

    /// Item `i`'s entity.
    ///
    /// # Safety
    /// `i < len`, and the batch's entities are readable (the move's contract).
    #[inline(always)]
    pub(crate) unsafe fn entity(&self, i: usize) -> Entity {
        // SAFETY: item `i` exists and its entity is readable (the caller).
        unsafe {
            self.entities
                .add(i * self.entity_stride)
                .cast::<Entity>()
                .read_unaligned()
        }
    }

    /// How many items.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Where item `i`'s value is.
    #[inline(always)]
    pub(crate) fn value(&self, i: usize) -> *mut u8 {
        self.values.wrapping_add(i * self.value_stride)
    }
}

/// What a move needs to know of its transition besides the values: the source and target
/// store ids, per slot of the target which source slot's add the row keeps (or [`GAINED`]),
/// and the source's number of slots. A typed move returns literals from the closure it passes
/// to [`move_rows`](crate::__private::move_rows), so they are constants in every function the
/// closure's body is inlined into, the batch's own loop included.
pub(crate) type MoveShape<'a> = ([u32; 2], &'a [u32], usize);

/// A [`MoveFn`] for the transition from store `from` when `component` is inserted or removed.
#[derive(Clone, Copy, Debug)]
pub struct TypedMove {
    /// The source store.
    pub from: u32,
    /// The inserted or removed component.
    pub component: u32,
    /// The move.
    pub run: MoveFn,
}

const NONE: u32 = u32::MAX;

/// One copy of a row move: `size` bytes from (column, offset) of the source row to (column,
/// offset) of the target row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyOp {
    /// Source column.
    pub src_col: u32,
    /// Byte offset in the source column's element.
    pub src_off: u32,
    /// Target column.
    pub dst_col: u32,
    /// Byte offset in the target column's element.
    pub dst_off: u32,
    /// Bytes to copy (the component's size).
    pub size: u32,
}

/// A move between two stores: where an entity goes when a component is inserted or removed,
/// and the copies that carry every other component along, computed once so a move does no
/// lookup per component. The byte-wise description every move has; a declared move adds its
/// function ([`Transition`]).
#[derive(Debug)]
pub struct Edge {
    /// The target store.
    pub to: u32,
    /// One copy per component the two stores share.
    pub copies: Box<[CopyOp]>,
    /// The inserted component's slot in the target store, or the removed component's slot in
    /// the source store.
    pub changed: Slot,
    /// The changed component's size in bytes.
    pub changed_size: usize,
    /// True when the move inserts the changed component, false when it removes it.
    pub inserts: bool,
    /// Per slot of the target store, the source slot of the same component, or [`GAINED`] for
    /// the component the move inserts: how the row's adds carry over.
    pub carried: Box<[u32]>,
}

impl Edge {
    /// The edge's [`MoveShape`] from store `from`.
    #[inline]
    pub(crate) fn shape(&self, from: u32) -> MoveShape<'_> {
        ([from, self.to], &self.carried, self.from_width())
    }

    /// The source store's number of slots: one fewer than the target's for an insert.
    #[inline]
    pub fn from_width(&self) -> usize {
        if self.inserts {
            self.carried.len().saturating_sub(1)
        } else {
            self.carried.len() + 1
        }
    }
}

/// A slot of a move's target store whose component the move inserts (see [`Edge::carried`]).
pub const GAINED: u32 = u32::MAX;

/// Per slot of `to`, the slot of `from` that holds the same component, or [`GAINED`].
pub(crate) fn carried_slots(from: &[Slot], to: &[Slot]) -> Box<[u32]> {
    to.iter()
        .map(|t| {
            from.iter()
                .position(|f| f.component == t.component)
                .map_or(GAINED, |k| k as u32)
        })
        .collect()
}

impl Edge {
    /// The move of component `c` from the store `from` to the store `to` (whose sets differ
    /// by `c` alone): the copies, from the two stores' slots.
    pub(crate) fn between(
        from: &StoreInfo,
        to_id: u32,
        to: &StoreInfo,
        c: u32,
        components: &[ComponentInfo],
    ) -> Edge {
        let slot_in =
            |info: &StoreInfo, c: u32| info.slots.iter().copied().find(|s| s.component == c);
        let inserts = slot_in(from, c).is_none();
        let copies = to
            .slots
            .iter()
            .filter(|dst| dst.component != c)
            .map(|dst| {
                let src = slot_in(from, dst.component).expect("the stores share it");
                CopyOp {
                    src_col: src.column,
                    src_off: src.offset,
                    dst_col: dst.column,
                    dst_off: dst.offset,
                    size: components[dst.component as usize].ty.size as u32,
                }
            })
            .collect();
        let changed = slot_in(if inserts { to } else { from }, c)
            .expect("the changed component is in one of the stores");
        Edge {
            to: to_id,
            copies,
            changed,
            changed_size: components[c as usize].ty.size,
            inserts,
            carried: carried_slots(from.slots, to.slots),
        }
    }
}

/// A declared move between two declared stores: its [`Edge`] and its function.
#[derive(Debug)]
pub struct Transition {
    /// The byte-wise description of the move.
    pub edge: Edge,
    /// The move: the model's, with static types, or a byte-wise one following the edge.
    pub run: MoveFn,
}

/// What the tables know of one (store, component) pair: the component's slot in the store,
/// and the declared move that adds it (when the store lacks it) or removes it (when the store
/// has it). One entry, so an `insert` or `remove` finds both with one load.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Index of the component's slot in the store's `slots`, or NONE.
    slot: u32,
    /// Index in `transitions` of the move that inserts (slot NONE) or removes it, or NONE.
    transition: u32,
    /// That move's target store and function, copied here so that a move's chain of
    /// dependent loads is one shorter (entry, then the stores) than through the transition.
    to: u32,
    run: Option<MoveFn>,
}

/// A declared move as `insert` and `remove` find it: the target store and the function, read
/// from the (store, component) entry itself. The transition is found only when asked for (a
/// typed move does not need it).
#[derive(Clone, Copy, Debug)]
pub struct MoveRef<'a> {
    /// The target store.
    pub to: u32,
    /// The move.
    pub run: MoveFn,
    transitions: &'a [Transition],
    transition: u32,
}

impl<'a> MoveRef<'a> {
    /// The transition the move follows.
    pub fn transition(&self) -> &'a Transition {
        &self.transitions[self.transition as usize]
    }
}

/// Lookup tables derived from a model's static description, built once per process.
///
/// They are dense (stores × components) because `insert`/`remove` and `get` index them on every
/// call; they are computed at run time rather than generated so that the generated file grows
/// with what is declared, not with components × signatures.
#[derive(Debug)]
pub struct Tables<S> {
    components: usize,
    /// Each declared store's component set.
    masks: Vec<S>,
    /// Each system's required and excluded sets.
    systems: Vec<(S, S)>,
    /// `store * components + c` → c's slot and move from that store.
    entries: Vec<Entry>,
    /// The declared moves (as many as pairs of signatures one component apart, twice).
    transitions: Vec<Transition>,
    /// Component sizes by id.
    sizes: Vec<usize>,
    by_mask: FxHashMap<S, u32>,
    component_by_type: FxHashMap<TypeId, u32>,
    store_by_type: FxHashMap<TypeId, u32>,
    event_by_type: FxHashMap<TypeId, u32>,
}

impl<S: AnyComponentBits> Tables<S> {
    /// Derives the tables of `M`.
    pub fn build<M: WorldModel<Set = S>>() -> Tables<S> {
        let comps = M::components();
        let stores = M::stores();
        let n = comps.len();
        assert!(
            n <= S::CAPACITY as usize,
            "the model's component set holds {} components, not {n}",
            S::CAPACITY
        );
        let set_of = |ids: &mut dyn Iterator<Item = u32>| ids.fold(S::EMPTY, S::with);
        let masks: Vec<S> = stores
            .iter()
            .map(|s| set_of(&mut s.slots.iter().map(|sl| sl.component)))
            .collect();
        let by_mask: FxHashMap<S, u32> = masks
            .iter()
            .enumerate()
            .map(|(i, &m)| (m, i as u32))
            .collect();
        assert_eq!(
            by_mask.len(),
            stores.len(),
            "two stores of one component set"
        );
        let empty = Entry {
            slot: NONE,
            transition: NONE,
            to: NONE,
            run: None,
        };
        let mut entries = vec![empty; stores.len() * n];
        let mut transitions = Vec::new();
        for (s, store) in stores.iter().enumerate() {
            for (k, slot) in store.slots.iter().enumerate() {
                entries[s * n + slot.component as usize].slot = k as u32;
                // The contract that batch spawns rely on, checked once.
                assert!(
                    store.layout != Layout::Columns
                        || (slot.offset == 0
                            && (store.columns[slot.column as usize].type_id)()
                                == (comps[slot.component as usize].ty.type_id)()),
                    "store {} breaks the columns layout contract",
                    store.name
                );
            }
        }
        let typed: FxHashMap<(u32, u32), MoveFn> = M::moves()
            .iter()
            .map(|m| ((m.from, m.component), m.run))
            .collect();
        // Every pair of stores one component apart, found from each store's sets one component
        // smaller (as many lookups as slots, not stores × components), both ways, in (store,
        // component) order.
        let mut pairs: Vec<(usize, u32, u32)> = Vec::new();
        for (big, store) in stores.iter().enumerate() {
            for slot in store.slots {
                let c = slot.component;
                if let Some(&small) = by_mask.get(&masks[big].without(c)) {
                    pairs.push((small as usize, c, big as u32));
                    pairs.push((big, c, small));
                }
            }
        }
        pairs.sort_unstable();
        let mut moves = Vec::new();
        for (s, c, t) in pairs {
            moves.push((s * n + c as usize, transitions.len() as u32));
            let run = typed
                .get(&(s as u32, c))
                .copied()
                .unwrap_or(crate::__private::erased_move::<M> as MoveFn);
            transitions.push(Transition {
                edge: Edge::between(&stores[s], t, &stores[t as usize], c, comps),
                run,
            });
        }
        for (at, t) in moves {
            let e = &mut entries[at];
            e.transition = t;
            e.to = transitions[t as usize].edge.to;
            e.run = Some(transitions[t as usize].run);
        }
        Tables {
            components: n,
            systems: M::systems()
                .iter()
                .map(|sys| {
                    (
                        set_of(&mut sys.required.iter().copied()),
                        set_of(&mut sys.excluded.iter().copied()),
                    )
                })
                .collect(),
            masks,
            entries,
            transitions,
            sizes: comps.iter().map(|c| c.ty.size).collect(),
            by_mask,
            component_by_type: comps
                .iter()
                .enumerate()
                .map(|(i, c)| ((c.ty.type_id)(), i as u32))
                .collect(),
            store_by_type: stores
                .iter()
                .enumerate()
                .map(|(i, s)| ((s.signature)(), i as u32))
                .collect(),
            event_by_type: M::events()
                .iter()
                .enumerate()
                .map(|(i, e)| ((e.type_id)(), i as u32))
                .collect(),
        }
    }

    #[inline]
    fn entry(&self, store: u32, c: u32) -> Entry {
        self.entries[store as usize * self.components + c as usize]
    }

    /// Component `c` in store `store`: `Ok(slot index)` when the store has it, else
    /// `Err(the move that inserts it)` (`None` when the target signature is not declared).
    #[inline]
    pub fn slot_or_insert(&self, store: u32, c: u32) -> Result<usize, Option<MoveRef<'_>>> {
        let e = self.entry(store, c);
        if e.slot != NONE {
            Ok(e.slot as usize)
        } else {
            Err(self.move_of(e))
        }
    }

    /// Index of component `c`'s slot in store `store`'s slot list.
    #[inline]
    pub fn slot_index(&self, store: u32, c: u32) -> Option<usize> {
        let k = self.entry(store, c).slot;
        (k != NONE).then_some(k as usize)
    }

    /// The move of an entity of `store` when `c` is inserted, if its target is declared.
    #[inline]
    pub fn insert_move(&self, store: u32, c: u32) -> Option<MoveRef<'_>> {
        self.slot_or_insert(store, c).err().flatten()
    }

    /// The move of an entity of `store` when `c` is removed, if the store has `c` and the
    /// target is declared.
    #[inline]
    pub fn remove_move(&self, store: u32, c: u32) -> Option<MoveRef<'_>> {
        let e = self.entry(store, c);
        if e.slot == NONE {
            return None;
        }
        self.move_of(e)
    }

    #[inline]
    fn move_of(&self, e: Entry) -> Option<MoveRef<'_>> {
        let run = e.run?;
        Some(MoveRef {
            to: e.to,
            run,
            transitions: &self.transitions,
            transition: e.transition,
        })
    }

    /// Number of declared moves.
    pub fn transitions(&self) -> usize {
        self.transitions.len()
    }

    /// Component sizes by id.
    #[inline]
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The store whose component set is `mask`.
    pub fn store_with_mask(&self, mask: S) -> Option<u32> {
        self.by_mask.get(&mask).copied()
    }

    /// The component set of declared store `store`.
    #[inline]
    pub fn store_mask(&self, store: usize) -> S {
        self.masks[store]
    }

    /// The required and excluded sets of system `system` (in declaration order).
    #[inline]
    pub fn system_sets(&self, system: usize) -> (S, S) {
        self.systems[system]
    }

    /// The id of the component type `t`.
    pub fn component_of_type(&self, t: TypeId) -> Option<u32> {
        self.component_by_type.get(&t).copied()
    }

    /// The store of the signature type `t`.
    pub fn store_of_type(&self, t: TypeId) -> Option<u32> {
        self.store_by_type.get(&t).copied()
    }

    /// The id of the event type `t`.
    pub fn event_of_type(&self, t: TypeId) -> Option<u32> {
        self.event_by_type.get(&t).copied()
    }
}

/// `Tables::build` on a hand-written model, checked entry by entry: every slot index, every
/// declared move (target, copies, changed slot and size), and every lookup by mask and type.
#[cfg(test)]
mod tests {
    use super::{
        ComponentInfo, CopyOp, Layout, MoveRef, Slot, StoreInfo, SystemInfo, Tables, WorldModel,
    };
    use crate::storage::ColumnType;
    use std::any::TypeId;
    use std::sync::OnceLock;

    struct A(#[allow(dead_code)] u32);
    struct B(#[allow(dead_code)] u64);
    struct C(#[allow(dead_code)] u16);
    impl crate::Component for A {
        const COLD: bool = false;
    }
    impl crate::Component for B {
        const COLD: bool = false;
    }
    impl crate::Component for C {
        const COLD: bool = false;
    }
    struct SigA;
    struct SigAB;
    struct SigABC;
    struct SigC;
    /// Store AB's row: B at offset 0, A at offset 8.
    #[repr(C)]
    struct RowAB(u64, u32);

    static COMPONENTS: [ComponentInfo; 3] = [
        ComponentInfo::of::<A>("A"),
        ComponentInfo::of::<B>("B"),
        ComponentInfo::of::<C>("C"),
    ];
    static STORES: [StoreInfo; 4] = [
        StoreInfo {
            name: "A",
            layout: Layout::Columns,
            columns: &[ColumnType::of::<A>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<SigA>,
        },
        StoreInfo {
            name: "AB",
            layout: Layout::Rows,
            columns: &[ColumnType::of::<RowAB>()],
            slots: &[Slot::new(0, 0, 8), Slot::new(1, 0, 0)],
            signature: TypeId::of::<SigAB>,
        },
        StoreInfo {
            name: "ABC",
            layout: Layout::Columns,
            columns: &[
                ColumnType::of::<A>(),
                ColumnType::of::<B>(),
                ColumnType::of::<C>(),
            ],
            // Field order C, A, B.
            slots: &[Slot::new(2, 2, 0), Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
            signature: TypeId::of::<SigABC>,
        },
        StoreInfo {
            name: "C",
            layout: Layout::Columns,
            columns: &[ColumnType::of::<C>()],
            slots: &[Slot::new(2, 0, 0)],
            signature: TypeId::of::<SigC>,
        },
    ];

    crate::__component_set! {
        /// The models' named sets.
        pub(crate) struct Named: 1 { A = 0, B = 1, C = 2, }
    }

    struct Model;
    // SAFETY: only `Tables::build` reads this model; no world is made of it.
    unsafe impl WorldModel for Model {
        type Resources = ();
        type Set = crate::ComponentBits<1>;
        type ComponentSet = Named;
        fn components() -> &'static [ComponentInfo] {
            &COMPONENTS
        }
        fn stores() -> &'static [StoreInfo] {
            &STORES
        }
        fn systems() -> &'static [SystemInfo] {
            &[]
        }
        fn tables() -> &'static Tables<Self::Set> {
            static TABLES: OnceLock<Tables<crate::ComponentBits<1>>> = OnceLock::new();
            TABLES.get_or_init(Tables::build::<Model>)
        }
    }

    /// Two `columns` stores derived as a generated world derives them: store A, then a store
    /// of fields C, A, B (a column per field, in field order).
    #[test]
    fn columns_stores_derived_from_their_component_ids() {
        use super::{column_slots, column_types, sub_slice};
        static IDS: [u32; 4] = [0, 2, 0, 1];
        static TYPES: [ColumnType; 4] = column_types(&COMPONENTS, &IDS);
        static SLOTS: [Slot; 4] = column_slots(&IDS, &[1, 3]);
        let (a, cab) = (sub_slice(&SLOTS, 0, 1), sub_slice(&SLOTS, 1, 3));
        assert_eq!(a, &[Slot::new(0, 0, 0)]);
        assert_eq!(
            cab,
            &[Slot::new(2, 0, 0), Slot::new(0, 1, 0), Slot::new(1, 2, 0)]
        );
        let ids = |t: &[ColumnType]| t.iter().map(|t| (t.type_id)()).collect::<Vec<_>>();
        let of = |c: &[u32]| {
            c.iter()
                .map(|&c| (COMPONENTS[c as usize].ty.type_id)())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(sub_slice(&TYPES, 0, 1)), of(&[0]));
        assert_eq!(ids(sub_slice(&TYPES, 1, 3)), of(&[2, 0, 1]));
        assert_eq!(
            (TYPES[1].size, TYPES[2].size, TYPES[3].size),
            (2, 4, 8),
            "C, A, B"
        );
    }

    /// Counts that do not add up to the components are refused.
    #[test]
    #[should_panic(expected = "the counts add up to the components")]
    fn column_slots_refuse_counts_that_do_not_add_up() {
        let _ = super::column_slots(&[0, 1, 2], &[1, 1]);
    }

    fn op(src_col: u32, src_off: u32, dst_col: u32, dst_off: u32, size: u32) -> CopyOp {
        CopyOp {
            src_col,
            src_off,
            dst_col,
            dst_off,
            size,
        }
    }

    fn check(m: MoveRef<'_>, to: u32, copies: &[CopyOp], changed: Slot, size: usize) {
        // The entry's copies of the target and the function are the transition's.
        let t = m.transition();
        assert_eq!(m.to, t.edge.to);
        assert!(std::ptr::fn_addr_eq(m.run, t.run));
        let e = &t.edge;
        assert_eq!(e.to, to);
        assert_eq!(&*e.copies, copies);
        assert_eq!(e.changed, changed);
        assert_eq!(e.changed_size, size);
    }

    #[test]
    fn slots_of_every_store_and_component() {
        let t = Model::tables();
        let expected: [[Option<usize>; 3]; 4] = [
            [Some(0), None, None],
            [Some(0), Some(1), None],
            [Some(1), Some(2), Some(0)],
            [None, None, Some(0)],
        ];
        for (s, row) in expected.iter().enumerate() {
            for (c, &k) in row.iter().enumerate() {
                assert_eq!(
                    t.slot_index(s as u32, c as u32),
                    k,
                    "store {s} component {c}"
                );
                if let Some(k) = k {
                    assert_eq!(t.slot_or_insert(s as u32, c as u32).ok(), Some(k));
                    assert!(t.insert_move(s as u32, c as u32).is_none());
                }
            }
        }
        assert_eq!(t.sizes(), &[4, 8, 2]);
    }

    #[test]
    fn every_declared_move_and_nothing_else() {
        let t = Model::tables();
        assert_eq!(t.transitions(), 4);
        // A + B -> AB.
        let m = t.slot_or_insert(0, 1).unwrap_err().unwrap();
        check(m, 1, &[op(0, 0, 0, 8, 4)], Slot::new(1, 0, 0), 8);
        assert!(std::ptr::eq(
            m.transition(),
            t.insert_move(0, 1).unwrap().transition()
        ));
        // AB - B -> A.
        let m = t.remove_move(1, 1).unwrap();
        check(m, 0, &[op(0, 8, 0, 0, 4)], Slot::new(1, 0, 0), 8);
        // AB + C -> ABC.
        let m = t.insert_move(1, 2).unwrap();
        check(
            m,
            2,
            &[op(0, 8, 0, 0, 4), op(0, 0, 1, 0, 8)],
            Slot::new(2, 2, 0),
            2,
        );
        // ABC - C -> AB.
        let m = t.remove_move(2, 2).unwrap();
        check(
            m,
            1,
            &[op(0, 0, 0, 8, 4), op(1, 0, 0, 0, 8)],
            Slot::new(2, 2, 0),
            2,
        );
        // Undeclared targets, and removes of absent components.
        assert!(matches!(t.slot_or_insert(0, 2), Err(None)));
        assert!(matches!(t.slot_or_insert(3, 0), Err(None)));
        assert!(matches!(t.slot_or_insert(3, 1), Err(None)));
        assert!(t.insert_move(0, 2).is_none());
        for (s, c) in [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (2, 0),
            (2, 1),
            (3, 2),
            (3, 0),
        ] {
            assert!(t.remove_move(s, c).is_none(), "remove {c} from store {s}");
        }
    }

    #[test]
    fn lookups_by_mask_and_type() {
        let t = Model::tables();
        assert_eq!(
            t.store_with_mask(crate::ComponentBits::from_words([0b001])),
            Some(0)
        );
        assert_eq!(
            t.store_with_mask(crate::ComponentBits::from_words([0b011])),
            Some(1)
        );
        assert_eq!(
            t.store_with_mask(crate::ComponentBits::from_words([0b111])),
            Some(2)
        );
        assert_eq!(
            t.store_with_mask(crate::ComponentBits::from_words([0b100])),
            Some(3)
        );
        assert_eq!(
            t.store_with_mask(crate::ComponentBits::from_words([0b110])),
            None
        );
        assert_eq!(t.component_of_type(TypeId::of::<A>()), Some(0));
        assert_eq!(t.component_of_type(TypeId::of::<B>()), Some(1));
        assert_eq!(t.component_of_type(TypeId::of::<C>()), Some(2));
        assert_eq!(t.component_of_type(TypeId::of::<SigA>()), None);
        assert_eq!(t.store_of_type(TypeId::of::<SigA>()), Some(0));
        assert_eq!(t.store_of_type(TypeId::of::<SigAB>()), Some(1));
        assert_eq!(t.store_of_type(TypeId::of::<SigABC>()), Some(2));
        assert_eq!(t.store_of_type(TypeId::of::<SigC>()), Some(3));
        assert_eq!(t.store_of_type(TypeId::of::<A>()), None);
        assert_eq!(
            ComponentInfo::of::<B>("B").ty.size,
            8,
            "ComponentInfo::of records the type"
        );
        assert_eq!(COMPONENTS[2].name, "C");
    }

    /// A `columns` store whose column holds another type than its slot's component breaks
    /// the contract batch spawns rely on (stride = the component's size): refused when the
    /// tables are built, before any world exists.
    #[test]
    #[should_panic(expected = "store Bad breaks the columns layout contract")]
    fn a_columns_store_with_a_mistyped_column_is_refused() {
        static BAD: [StoreInfo; 1] = [StoreInfo {
            name: "Bad",
            layout: Layout::Columns,
            columns: &[ColumnType::of::<B>()],
            slots: &[Slot::new(0, 0, 0)],
            signature: TypeId::of::<SigA>,
        }];
        struct BadModel;
        // SAFETY: only `Tables::build` reads this model, and it refuses it.
        unsafe impl WorldModel for BadModel {
            type Resources = ();
            type Set = crate::ComponentBits<1>;
            type ComponentSet = Named;
            fn components() -> &'static [ComponentInfo] {
                &COMPONENTS
            }
            fn stores() -> &'static [StoreInfo] {
                &BAD
            }
            fn systems() -> &'static [SystemInfo] {
                &[]
            }
            fn tables() -> &'static Tables<Self::Set> {
                unreachable!("the test builds the tables itself")
            }
        }
        let _ = Tables::build::<BadModel>();
    }
}
