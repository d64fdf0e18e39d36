//! # sigecs-derive: the sigecs declaration macros
//!
//! `#[derive(Component)]`, `#[derive(Signature)]`, `#[derive(Resource)]` and `#[system]`
//! validate a declaration where it is written and report errors spanned on the offending token.
//! What counts as valid is decided by `sigecs_decl`, which the build script uses too; this
//! crate only dispatches and expands. Ids, masks and stores are the build script's job.
//!
//! Use them through `sigecs` (which re-exports them), as in:
//!
//! ```
//! use sigecs::prelude::*;
//!
//! #[derive(Component)]
//! pub struct Position(pub [f32; 3]);
//!
//! #[derive(Component)]
//! #[component(cold)]
//! pub struct DebugName(pub String);
//!
//! #[derive(Signature)]
//! pub struct Named { pub position: Position, pub name: DebugName }
//!
//! #[derive(Resource, Default)]
//! pub struct Time { pub dt: f32 }
//!
//! #[system]
//! pub fn drift(position: &mut Position, time: &Time) {
//!     position.0[0] += time.dt;
//! }
//! # fn main() {}
//! ```

mod expand;
mod soa;

use proc_macro::TokenStream;

/// Declares a component. `#[component(cold)]` keeps it out of the hot row in `rows` signatures.
/// `#[component(sparse)]` keeps it in a sparse set beside the stores: adding or removing it
/// moves no row (tags and short-lived states toggled often). Systems and queries take it like
/// any component (looked up by each row's entity); a system or query whose components are all
/// sparse (and with no table filter) instead walks its first required one's packed values, one
/// loop over every entity that has it, in the set's order (a system's commands apply in that
/// order). A
/// signature cannot hold it and a system's `changed(..)` cannot name it (build errors say so).
/// `#[component(level = "name")]` lets levels hold it (the crate depends on `sigecs-level`):
/// stored as plain old data (`bytemuck::Pod`, the default), with `encoding = "serde"` with
/// postcard, or, for a struct without fields, as a tag that needs nothing more;
/// `spawn_order = N` orders its spawn among component types; `map_entities` remaps the
/// `Entity` values it holds (it implements `sigecs_level::MapEntities`).
#[proc_macro_derive(Component, attributes(component))]
pub fn derive_component(input: TokenStream) -> TokenStream {
    expand::component(input.into()).into()
}

/// Declares a signature: a named set of components, stored in one packed array.
/// `#[signature(layout = "rows")]` selects the rows layout (default `columns`).
#[proc_macro_derive(Signature, attributes(signature))]
pub fn derive_signature(input: TokenStream) -> TokenStream {
    expand::signature(input.into()).into()
}

/// Declares a resource: a `Default` singleton owned by the world, passed to systems by `&R` or
/// `&mut R`.
#[proc_macro_derive(Resource)]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    expand::resource(input.into()).into()
}

/// Declares an event: a value systems send through `Commands::send` and read with an
/// `&EventReader<E>` parameter (each reader sees each event once, during the frame it was sent
/// and the next).
#[proc_macro_derive(Event)]
pub fn derive_event(input: TokenStream) -> TokenStream {
    expand::event(input.into()).into()
}

/// Declares a system. With a component or `Entity` parameter it runs once per row of every
/// store that has its components; with none (only resources, `&mut Commands`, event readers)
/// it runs once per call, as frame-level logic. Parameters: `&C`, `&mut C`, `Option<&C>`,
/// `Option<&mut C>`, `&R`, `&mut R`, `Entity`, `&mut Commands`, `&EventReader<E>`.
///
/// Options, as in `#[system(with(A), without(B), after(s))]`:
///
/// - `with(A, B)`: only entities that also have these components (not passed to the system).
/// - `without(C)`: only entities that have none of these components.
/// - `changed(D)`: only rows whose `D` may have changed since the system's last run: `D` was
///   written (or taken as `&mut D`) or gained (a spawn or insert counts as a change), checked
///   per chunk of rows and per component (a write of another component of the row is none).
/// - `added(E)`: only rows whose entity gained `E` since the system's last run (a spawn with
///   `E`, an insert of `E`), exactly; a write is no add.
/// - `after(s)`: runs after system `s` (the system moves down; the others keep their order).
/// - `before(s)`: runs before system `s` (the system moves up to just before `s`).
/// - `min_chunk = N`: its pass splits into parallel jobs of at least `N` rows.
/// - `dynamic`: the system is meant to run over component sets no signature declares, so an
///   open world does not warn that it matches no declared signature (a strict world still
///   refuses it).
#[proc_macro_attribute]
pub fn system(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::system(args.into(), item.into()).into()
}

/// Generates a structure-of-arrays component manager from a struct declaration.
/// Options: `#[soa(manager = "Name", lookup = "hash"|"dense")]`. With `level = "name"` (and
/// optionally `spawn_order = N`), levels may hold the struct (it must be `Pod`, and
/// `Deserialize` for JSON levels; the crate depends on `sigecs-level`): in a file the build
/// script scans, `level_registry()` registers it kept outside the stores, and the manager is a
/// level spawner (`sigecs_level::OutsideStores`): a spawn hands it the struct's instances.
#[proc_macro_derive(SoaManager, attributes(soa))]
pub fn derive_soa_manager(input: TokenStream) -> TokenStream {
    soa::expand(input.into()).into()
}

#[cfg(test)]
mod tests {
    /// The `#[system]` documentation names every option the parser accepts.
    #[test]
    fn the_system_docs_list_every_option() {
        let source = include_str!("lib.rs");
        let start = source.find("/// Declares a system.").expect("the docs");
        let end = start
            + source[start..]
                .find("#[proc_macro_attribute]")
                .expect("the macro");
        let docs = &source[start..end];
        for option in sigecs_decl::SYSTEM_OPTIONS {
            assert!(
                docs.contains(&format!("- `{option}`")),
                "the `#[system]` docs do not list `{option}`"
            );
        }
        assert_eq!(
            docs.matches("\n/// - `").count(),
            sigecs_decl::SYSTEM_OPTIONS.len(),
            "every option listed is one the parser accepts"
        );
    }
}
