//! The traits that `#[derive(Component)]`, `#[derive(Signature)]` and `#[derive(Resource)]`
//! implement. They carry no ids: ids, bits and stores are assigned by the build script for the
//! whole crate at once (see `ecs-codegen`).

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
}

/// A declared set of components: the value spawned as one entity, and the unit of storage (one
/// packed store per signature). Implemented by `#[derive(Signature)]`.
///
/// A signature's components must be at least as visible as the signature itself (a `pub`
/// signature needs `pub` components), because [`Signature::Parts`] names them; rustc reports
/// E0446 "private type in public interface" otherwise.
pub trait Signature: Sized + 'static {
    /// The component values in field declaration order.
    type Parts;
    /// Moves the component values out, in field declaration order.
    fn into_parts(self) -> Self::Parts;
}

/// A singleton owned by the world and handed to systems by `&R` or `&mut R`. Implemented by
/// `#[derive(Resource)]`; `Default` builds the world's initial value.
pub trait Resource: Default + Send + Sync + 'static {}
