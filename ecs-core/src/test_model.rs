//! A hand-written two-store model for sigecs's unit tests: components `A` and `B` (a `u32`
//! each) and the sparse `S` (a `u32` in a sparse set, in no store), signatures `JustA` and `AB` in `columns` stores, no typed moves (so inserts and
//! removes take the byte-wise move), and a small world of four entities. Its worlds save their
//! state (every component copied as bytes).

use crate::__private::FieldSink;
use crate::component::{Component, Signature};
use crate::model::{
    ComponentInfo, ComponentOf, SignatureOf, Slot, StoreInfo, SystemInfo, Tables, WorldModel,
};
use crate::stats::Layout;
use crate::storage::ColumnType;
use crate::world::World;
use std::any::TypeId;
use std::sync::OnceLock;

pub(crate) struct Model;
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
pub(crate) struct A(pub(crate) u32);
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
pub(crate) struct B(pub(crate) u32);
impl Component for A {
    const COLD: bool = false;
}
impl Component for B {
    const COLD: bool = false;
}
#[derive(Clone, Copy, Debug, PartialEq, Hash)]
pub(crate) struct S(pub(crate) u32);
impl Component for S {
    const COLD: bool = false;
    const SPARSE: bool = true;
}
pub(crate) struct JustA(pub(crate) A);
pub(crate) struct AB(pub(crate) A, pub(crate) B);
impl Signature for JustA {
    const LEN: usize = 1;
    fn write_fields<S: FieldSink>(self, sink: &mut S) {
        sink.put(self.0);
    }
}
impl Signature for AB {
    const LEN: usize = 2;
    fn write_fields<S: FieldSink>(self, sink: &mut S) {
        sink.put(self.0);
        sink.put(self.1);
    }
}

static COMPONENTS: [ComponentInfo; 3] = [
    ComponentInfo::of::<A>("A"),
    ComponentInfo::of::<B>("B"),
    ComponentInfo::of::<S>("S"),
];
static STORES: [StoreInfo; 2] = [
    StoreInfo {
        name: "JustA",
        layout: Layout::Columns,
        columns: &[ColumnType::of::<A>()],
        slots: &[Slot::new(0, 0, 0)],
        signature: TypeId::of::<JustA>,
    },
    StoreInfo {
        name: "AB",
        layout: Layout::Columns,
        columns: &[ColumnType::of::<A>(), ColumnType::of::<B>()],
        slots: &[Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
        signature: TypeId::of::<AB>,
    },
];

crate::__component_set! {
    /// The model's named sets.
    pub(crate) struct Named: 1 { A = 0, B = 1, S = 2, }
}

// SAFETY: the tables above describe A, B, JustA and AB exactly (one u32 column per
// component, slot order = field order); `tables` is `Tables::build`.
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
// SAFETY: ids and stores as in the tables above.
unsafe impl ComponentOf<Model> for A {
    const ID: u32 = 0;
}
// SAFETY: as above.
unsafe impl ComponentOf<Model> for B {
    const ID: u32 = 1;
}
// SAFETY: as above.
unsafe impl ComponentOf<Model> for S {
    const ID: u32 = 2;
}
// SAFETY: as above.
unsafe impl SignatureOf<Model> for JustA {
    const STORE: u32 = 0;
}
// SAFETY: as above.
unsafe impl SignatureOf<Model> for AB {
    const STORE: u32 = 1;
}

static STATE_COMPONENTS: [crate::state::ops::ComponentState; 3] = [
    crate::state::ops::ComponentState::bits::<A>().hash_with::<A>(),
    crate::state::ops::ComponentState::bits::<B>().hash_with::<B>(),
    crate::state::ops::ComponentState::bits::<S>().hash_with::<S>(),
];
static STATE_TABLES: crate::state::ops::StateTables =
    crate::state::ops::StateTables::new(&STATE_COMPONENTS, &[]);

// SAFETY: one bits entry per component, of its type; no event; no resource to read.
unsafe impl crate::state::StateModel for Model {
    fn state_tables() -> &'static crate::state::ops::StateTables {
        &STATE_TABLES
    }
    fn hash_resources(_: &(), _: &mut crate::state::StateHasher) {}
}

pub(crate) fn world() -> (World<Model>, Vec<crate::entity::Entity>) {
    let mut w = World::<Model>::new();
    let es = vec![
        w.spawn(JustA(A(1))),
        w.spawn(AB(A(2), B(3))),
        w.spawn(JustA(A(4))),
        w.spawn(AB(A(5), B(6))),
    ];
    (w, es)
}
