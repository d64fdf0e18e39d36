//! The traits that `#[derive(Component)]`, `#[derive(Signature)]` and `#[derive(Resource)]`
//! implement. They carry no ids: ids, bits and stores are assigned by the build script for the
//! whole crate at once (see `sigecs-build`), in the generated `crate::model` impls.

use crate::__private::FieldSink;

/// A piece of per-entity data. Implemented by `#[derive(Component)]`.
///
/// `Send + Sync` because systems run over components on rayon's pool.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component",
    label = "not a component",
    note = "derive it with `#[derive(Component)]`"
)]
pub trait Component: Send + Sync + 'static {
    /// Set by `#[component(cold)]`: in a `rows` signature the component lives in a parallel
    /// array, so loops over the hot row never pull it through the cache.
    const COLD: bool;
    /// Set by `#[component(sparse)]`: the component lives in a sparse set beside the stores,
    /// so adding or removing it moves no row (see [`crate::World::insert`]).
    const SPARSE: bool = false;
}

/// A declared set of components: the value spawned as one entity, and the unit of storage (one
/// packed store per signature). Implemented by `#[derive(Signature)]`.
pub trait Signature: Send + Sized + 'static {
    /// Number of components (fields).
    const LEN: usize;
    /// Moves the component values into `sink`, in field declaration order (for the runtime's
    /// spawns; the derive writes it).
    #[doc(hidden)]
    fn write_fields<S: FieldSink>(self, sink: &mut S);
}

/// A singleton owned by the world and handed to systems by `&R` or `&mut R`. Implemented by
/// `#[derive(Resource)]`; `Default` builds the world's initial value.
pub trait Resource: Send + Sync + 'static {
    /// The world's initial value: the type's `Default` (the derive writes it, and a type that
    /// is not `Default` is an error at its `#[derive(Resource)]`).
    #[doc(hidden)]
    fn __initial() -> Self;
}
