//! What a generated world tells the runtime about itself: the traits its generated file
//! implements. [`WorldModel`] for a marker type, with the static tables of its components, its
//! stores (one per declared signature) and how each store lays out its components (the
//! [`tables`] module, for generated code only); [`ComponentOf`], [`SignatureOf`],
//! [`EventOf`] and [`ResourceOf`] for the declared types, which user code names as bounds.
//! Everything else — spawning, despawning, moves between stores, queries, statistics,
//! invariant checks — is written once in this crate, generic over the model (prost's rule:
//! the generated code holds types and tables, the runtime holds the logic).
//!
//! # Safety
//!
//! The traits are `unsafe` to implement because the runtime reads and writes component memory
//! through raw pointers computed from these tables. Only the generator implements them.

use crate::set::AnyComponentBits;
use crate::Component;

#[doc(hidden)]
pub(crate) mod tables;

pub(crate) use tables::{
    ComponentInfo, Edge, MoveBatch, MoveRef, Slot, StoreInfo, SystemInfo, Tables, TypedMove,
};

/// The static description of a generated world. Implemented by generated code only.
///
/// # Safety
///
/// - `components()[i].ty` is the column type of the type whose [`ComponentOf::ID`] is `i`.
/// - `Set` is wide enough for every component id.
/// - For every store, `slots` has exactly one slot per component of its signature, in the
///   field order of the signature whose [`SignatureOf::STORE`] is the store's index; a slot's component, of type
///   `T`, lives at `offset` bytes into each element of column `column`, aligned for `T`, with
///   every byte of `T` inside the element; slots of one store do not overlap; every byte of a
///   column's element that is not padding belongs to some slot (so writing every slot
///   initialises the element). In a store whose `layout` is [`Layout::Columns`](crate::stats::Layout::Columns), every slot
///   is at offset 0 of a column whose elements are exactly its component's type.
/// - `tables()` returns `Tables::build::<Self>()` (computed once).
/// - Each entry of `moves()` is for a declared transition (the stores of sets `m` and `m`
///   with `component` added or removed both exist, `from` having set `m`), and its `run` does exactly
///   what [`TypedMove`] says, for the slots above.
pub unsafe trait WorldModel: Sized + 'static {
    /// The generated struct holding one value of each resource.
    type Resources: Default + Send + Sync + 'static;
    /// The world's component-set type: [`ComponentBits`](crate::ComponentBits) as wide as its
    /// components need.
    type Set: AnyComponentBits;
    /// The world's named set type, `ComponentSet`: a [`bitflags`] type over [`Self::Set`] with
    /// one flag per component, named as the component. How the runtime shows a set to a
    /// person (`POSITION | VELOCITY`).
    type ComponentSet: bitflags::Flags<Bits = Self::Set>
        + Copy
        + Eq
        + std::fmt::Debug
        + std::fmt::Display
        + Send
        + Sync;
    /// Strict worlds (`Builder::undeclared(Undeclared::Error)`) refuse a component set that no
    /// signature declares with [`WorldError::UndeclaredSignature`](crate::WorldError); open
    /// ones (the default) keep such entities in dynamic stores.
    const STRICT: bool = false;
    /// The world saves, loads and hashes its state (`Builder::rollback`): its stores keep
    /// what makes a state cheap to save (`storage::versions`).
    #[doc(hidden)]
    const STATES: bool = false;
    /// Number of generated passes (one per system, one per stage that fuses several): a world
    /// keeps one [`PassCost`](crate::__private::PassCost) for each.
    const PASSES: usize = 0;
    /// Components by id.
    #[doc(hidden)]
    fn components() -> &'static [ComponentInfo];
    /// Stores by id.
    #[doc(hidden)]
    fn stores() -> &'static [StoreInfo];
    /// Systems in declaration order.
    #[doc(hidden)]
    fn systems() -> &'static [SystemInfo];
    /// The derived lookup tables.
    #[doc(hidden)]
    fn tables() -> &'static Tables<Self::Set>;
    /// Moves written with static types for some declared transitions (all of them, in
    /// generated worlds); a transition without one moves through its [`CopyOp`]s.
    #[doc(hidden)]
    fn moves() -> &'static [TypedMove] {
        &[]
    }
    /// Event types by id.
    #[doc(hidden)]
    fn events() -> &'static [crate::__private::EventInfo] {
        &[]
    }
    /// Number of event readers (`&EventReader<E>` parameters of systems): a world keeps a
    /// cursor for each.
    const READERS: usize = 0;
}

/// A component of world model `M`. Implemented by generated code only.
///
/// # Safety
/// `ID` is the index of `Self`'s entry in `M::components()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component of this world",
    note = "declare it with `#[derive(Component)]` in a file the build script scans, and use it in a signature"
)]
pub unsafe trait ComponentOf<M: WorldModel>: Component {
    /// The component's id: its member in the world's component sets
    /// ([`ComponentBits`](crate::ComponentBits)).
    const ID: u32;
}

/// A declared signature of world model `M`. Implemented by generated code only.
///
/// # Safety
/// `STORE` is the index of the store whose slots list `Self`'s fields in declaration order, and
/// `Self::write_fields` puts exactly those components in that order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a declared signature of this world",
    label = "not a signature of this world",
    note = "declare it with `#[derive(Signature)]` in a file the build script scans"
)]
pub unsafe trait SignatureOf<M: WorldModel>: crate::Signature {
    /// The signature's store id.
    const STORE: u32;
}

/// An event type of world model `M`. Implemented by generated code only.
///
/// # Safety
/// `ID` is the index of `Self`'s entry in `M::events()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an event of this world",
    note = "declare it with `#[derive(Event)]` in a file the build script scans"
)]
pub unsafe trait EventOf<M: WorldModel>: crate::Event {
    /// The event type's id.
    const ID: u32;
}

/// A resource of world model `M`. Implemented by generated code only.
///
/// # Safety
/// None beyond Rust's: `unsafe` only so that every trait the generated code implements is.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource of this world",
    note = "declare it with `#[derive(Resource)]` in a file the build script scans"
)]
pub unsafe trait ResourceOf<M: WorldModel>: crate::Resource {
    /// The world's value.
    #[doc(hidden)]
    fn get(resources: &M::Resources) -> &Self;
    /// The world's value, mutable.
    #[doc(hidden)]
    fn get_mut(resources: &mut M::Resources) -> &mut Self;
}
