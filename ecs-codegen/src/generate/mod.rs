//! The generator: turns a [`Model`] into the Rust source of a `World`.
//!
//! The generated file holds types and thin impls only: one store struct per signature, the
//! `World` that owns them, the `ComponentSet` bitflags, and per system one loop per matching
//! store. Entity bookkeeping, errors and statistics live in `ecs_core`.

use crate::analyze::{Model, Param, Signature};

mod query;
mod store;
mod structural;
mod systems;

use crate::decl::LayoutDecl;
use proc_macro2::{Ident, Span, TokenStream};
use query::gen_query_target;
use quote::{format_ident, quote, ToTokens};
use store::{gen_spawn, gen_store};
use structural::{gen_component_access, value_binding};
use systems::{gen_apply_commands, gen_run_system, gen_stages};

/// `PointMass` → `point_mass`, `ABZst` → `ab_zst`, `HTTPServer` → `http_server`: a word starts
/// at an uppercase letter that follows a lowercase one, or that precedes a lowercase one after
/// an uppercase run.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &ch) in chars.iter().enumerate() {
        if ch.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.extend(ch.to_lowercase());
    }
    out
}

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

/// `a + b + c`; the terms are never empty (a signature has at least one field).
fn sum(terms: impl IntoIterator<Item = TokenStream>) -> TokenStream {
    let terms: Vec<TokenStream> = terms.into_iter().collect();
    quote!(#(#terms)+*)
}

fn doc(text: String) -> TokenStream {
    quote!(#[doc = #text])
}

/// Names the generated code uses for one signature's store.
struct StoreNames {
    /// Field of `Stores`.
    field: Ident,
    /// The store type.
    ty: Ident,
    /// Row struct (rows layout).
    row: Ident,
    /// Cold struct (rows layout).
    cold: Ident,
}

fn store_names(sig: &Signature) -> StoreNames {
    let name = sig.ident.to_string();
    StoreNames {
        field: format_ident!("{}", snake_case(&name)),
        ty: format_ident!("{}Store", name),
        row: format_ident!("{}Row", name),
        cold: format_ident!("{}Cold", name),
    }
}

/// Where a component lives in a rows store.
fn is_cold(model: &Model, sig: &Signature, id: usize) -> bool {
    sig.layout == LayoutDecl::Rows && model.components[id].cold
}

fn hot_fields(model: &Model, sig: &Signature) -> Vec<(Ident, usize)> {
    sig.fields
        .iter()
        .filter(|(_, id)| !is_cold(model, sig, *id))
        .cloned()
        .collect()
}

fn cold_fields(model: &Model, sig: &Signature) -> Vec<(Ident, usize)> {
    sig.fields
        .iter()
        .filter(|(_, id)| is_cold(model, sig, *id))
        .cloned()
        .collect()
}

/// Access path to component `id` at row `row` of a store bound to `store`.
fn element(
    model: &Model,
    sig: &Signature,
    id: usize,
    store: &TokenStream,
    row: &TokenStream,
) -> TokenStream {
    let field = &sig
        .fields
        .iter()
        .find(|(_, c)| *c == id)
        .expect("signature holds the component")
        .0;
    match sig.layout {
        LayoutDecl::Columns => quote!(#store.#field[#row]),
        LayoutDecl::Rows if is_cold(model, sig, id) => quote!(#store.cold[#row].#field),
        LayoutDecl::Rows => quote!(#store.rows[#row].#field),
    }
}

/// The complete generated file, as tokens.
pub fn generate(model: &Model) -> TokenStream {
    let width = format_ident!("u{}", model.mask_width());
    let flags = model.components.iter().enumerate().map(|(i, c)| {
        let name = format_ident!("{}", snake_case(&c.ident.to_string()).to_uppercase());
        let d = doc(format!("Component `{}` (id {i}).", c.ident));
        quote!(#d const #name = 1 << #i;)
    });
    let stores = model
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| gen_store(model, i, s));
    let names: Vec<StoreNames> = model.signatures.iter().map(store_names).collect();
    let store_fields: Vec<&Ident> = names.iter().map(|n| &n.field).collect();
    let store_types: Vec<&Ident> = names.iter().map(|n| &n.ty).collect();
    let store_docs = model
        .signatures
        .iter()
        .map(|s| doc(format!("Store of signature `{}`.", s.ident)));
    let store_ids: Vec<u32> = (0..model.signatures.len() as u32).collect();
    let sig_masks = model.signatures.iter().map(|s| {
        let m = proc_macro2::Literal::u128_unsuffixed(s.mask);
        quote!(ComponentSet::from_bits_retain(#m))
    });
    let sig_names: Vec<String> = model
        .signatures
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let n_sigs = model.signatures.len();
    let res_fields: Vec<Ident> = model
        .resources
        .iter()
        .map(|r| format_ident!("{}", snake_case(&r.ident.to_string())))
        .collect();
    let res_types: Vec<&syn::Path> = model.resources.iter().map(|r| &r.path).collect();
    let res_docs = model
        .resources
        .iter()
        .map(|r| doc(format!("The world's `{}`.", r.ident)));
    let spawns = model
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| gen_spawn(i, s));
    let access = (0..model.components.len()).map(|c| gen_component_access(model, c));
    let systems = (0..model.systems.len()).map(|i| gen_run_system(model, i));
    let (stage_methods, schedule_static) = gen_stages(model);
    let apply_commands = gen_apply_commands(model);
    let query_target = gen_query_target(model);
    let run_all: Vec<Ident> = model
        .systems
        .iter()
        .map(|s| format_ident!("run_{}", s.ident))
        .collect();
    let system_names: Vec<String> = model.systems.iter().map(|s| s.ident.to_string()).collect();
    let n_systems = model.systems.len();
    let n_components = model.components.len();
    let component_names: Vec<String> = model
        .components
        .iter()
        .map(|c| c.ident.to_string())
        .collect();
    let system_matches = model.systems.iter().map(|s| {
        let ids = s.matches.iter().map(|&m| m as u32);
        quote!(&[#(#ids),*])
    });
    let system_ids: Vec<usize> = (0..n_systems).collect();
    let entities_iter = if n_sigs == 0 {
        quote!(::core::iter::empty())
    } else {
        let first = &store_fields[0];
        let rest = &store_fields[1..];
        quote!(self.stores.#first.entities.iter().copied() #( .chain(self.stores.#rest.entities.iter().copied()) )*)
    };

    quote! {
        ::ecs_core::bitflags::bitflags! {
            /// A set of components, one bit per component (ids in name order).
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub struct ComponentSet: #width {
                #(#flags)*
            }
        }

        #(#stores)*

        /// Every store of the world, one per declared signature.
        #[derive(Default)]
        pub struct Stores {
            #( #store_docs pub #store_fields: #store_types, )*
        }

        /// The world's resources, one field per `#[derive(Resource)]` type.
        #[derive(Default)]
        pub struct Resources {
            #( #res_docs pub #res_fields: #res_types, )*
        }

        /// The component set of each store, by store id.
        pub const STORE_SETS: [ComponentSet; #n_sigs] = [#(#sig_masks),*];
        /// The signature name of each store, by store id.
        pub const STORE_NAMES: [&str; #n_sigs] = [#(#sig_names),*];
        /// The component names, by component id.
        pub const COMPONENT_NAMES: [&str; #n_components] = [#(#component_names),*];
        /// The systems, in declaration order.
        pub const SYSTEM_NAMES: [&str; #n_systems] = [#(#system_names),*];
        /// The store ids each system runs over, by system index.
        pub const SYSTEM_STORES: [&[u32]; #n_systems] = [#(#system_matches),*];

        /// The generated world: one packed store per declared signature, the entity table, and
        /// the resources.
        #[derive(Default)]
        pub struct World {
            table: ::ecs_core::EntityTable,
            stores: Stores,
            resources: Resources,
            min_chunk: ::core::option::Option<usize>,
            command_errors: ::std::vec::Vec<::ecs_core::WorldError>,
        }

        #schedule_static

        impl ::core::fmt::Debug for World {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct("World").field("entities", &self.len()).finish_non_exhaustive()
            }
        }

        impl World {
            /// An empty world whose resources have their `Default` values.
            pub fn new() -> Self { Self::default() }

            /// An empty world with the given resources.
            pub fn with_resources(resources: Resources) -> Self {
                World { resources, ..::core::default::Default::default() }
            }

            /// Number of live entities.
            #[inline]
            pub fn len(&self) -> usize { self.table.len() }

            /// True when no entity is alive.
            #[inline]
            pub fn is_empty(&self) -> bool { self.table.is_empty() }

            /// Is `entity` alive in this world?
            #[inline]
            pub fn is_alive(&self, entity: ::ecs_core::Entity) -> bool { self.table.locate(entity).is_some() }

            /// Spawns one entity from a value of a declared signature.
            ///
            /// # Panics
            /// When all 2^22 entity slots are in use; see [`World::try_spawn`].
            pub fn spawn<S: ::ecs_core::SpawnIn<World>>(&mut self, value: S) -> ::ecs_core::Entity {
                match value.spawn_in(self) { Ok(e) => e, Err(e) => panic!("{e}") }
            }

            /// Spawns one entity, or returns an error when the entity index space is exhausted.
            pub fn try_spawn<S: ::ecs_core::SpawnIn<World>>(&mut self, value: S) -> ::core::result::Result<::ecs_core::Entity, ::ecs_core::WorldError> {
                value.spawn_in(self)
            }

            /// Spawns one entity per value, all into one store, reserving space once.
            ///
            /// # Panics
            /// When the entity index space is exhausted; see [`World::try_spawn_batch`].
            pub fn spawn_batch<S: ::ecs_core::SpawnIn<World>>(&mut self, values: impl ::core::iter::IntoIterator<Item = S>) -> ::std::vec::Vec<::ecs_core::Entity> {
                match S::spawn_batch_in(values, self) { Ok(e) => e, Err(e) => panic!("{e}") }
            }

            /// Spawns one entity per value; all or nothing when the index space is exhausted.
            pub fn try_spawn_batch<S: ::ecs_core::SpawnIn<World>>(&mut self, values: impl ::core::iter::IntoIterator<Item = S>) -> ::core::result::Result<::std::vec::Vec<::ecs_core::Entity>, ::ecs_core::WorldError> {
                S::spawn_batch_in(values, self)
            }

            /// Despawns `entity`, dropping its components. The last row of its store moves into
            /// the hole. Returns false for a dead, stale or foreign entity.
            pub fn despawn(&mut self, entity: ::ecs_core::Entity) -> bool {
                let Some(loc) = self.table.locate(entity) else { return false };
                self.table.destroy(entity);
                match loc.store {
                    #(
                        #store_ids => {
                            // The removed values drop at the end of this arm, after the table
                            // is consistent again, so a panicking Drop cannot corrupt the world.
                            let (moved, _removed) = self.stores.#store_fields.swap_remove(loc.row());
                            if let Some(moved) = moved { self.table.relocate(moved, loc); }
                        }
                    )*
                    _ => unreachable!("entity table points at store {} which does not exist", loc.store),
                }
                true
            }

            /// The component `C` of `entity`; `None` when the entity is not alive or its
            /// signature has no `C`.
            #[inline]
            pub fn get<C: ::ecs_core::ComponentIn<World>>(&self, entity: ::ecs_core::Entity) -> ::core::option::Option<&C> {
                C::get_in(self, self.table.locate(entity)?)
            }

            /// Mutable access to the component `C` of `entity` (see [`World::get`]).
            #[inline]
            pub fn get_mut<C: ::ecs_core::ComponentIn<World>>(&mut self, entity: ::ecs_core::Entity) -> ::core::option::Option<&mut C> {
                let loc = self.table.locate(entity)?;
                C::get_mut_in(self, loc)
            }

            /// Adds `component` to `entity`, moving the entity to the declared signature that
            /// has its components plus this one (O(size of the row); the move is a generated
            /// table entry, no search). If the entity already has a `C`, the value is replaced
            /// and the old one returned. On error the entity is unchanged and `component` is
            /// dropped.
            pub fn insert<C: ::ecs_core::ComponentIn<World>>(&mut self, entity: ::ecs_core::Entity, component: C) -> ::core::result::Result<::core::option::Option<C>, ::ecs_core::WorldError> {
                component.insert_in(self, entity)
            }

            /// Takes the `C` of `entity`, moving the entity to the declared signature without
            /// it. On error the entity is unchanged.
            pub fn remove<C: ::ecs_core::ComponentIn<World>>(&mut self, entity: ::ecs_core::Entity) -> ::core::result::Result<C, ::ecs_core::WorldError> {
                C::remove_in(self, entity)
            }

            #[cold]
            fn undeclared(&self, entity: ::ecs_core::Entity, loc: ::ecs_core::Location, change: ::ecs_core::Change, component: u32) -> ::ecs_core::WorldError {
                let current = STORE_SETS[loc.store as usize].bits() as u128;
                let bit = 1u128 << component;
                let missing = match change {
                    ::ecs_core::Change::Insert => current | bit,
                    ::ecs_core::Change::Remove => current & !bit,
                };
                ::ecs_core::WorldError::UndeclaredSignature {
                    entity,
                    change,
                    component: COMPONENT_NAMES[component as usize],
                    signature: STORE_NAMES[loc.store as usize],
                    current: ::ecs_core::world::set_names(current, &COMPONENT_NAMES),
                    missing: ::ecs_core::world::set_names(missing, &COMPONENT_NAMES),
                }
            }

            /// A run-time query over every entity that has the query's components, e.g.
            /// `world.query::<(Entity, &mut Position, Option<&Velocity>)>()`. Stores are chosen
            /// by bitmask once per call; items come store by store in store id order, rows in
            /// order. Asking for one component twice with a `&mut` is an error.
            pub fn query<'w, Q: ::ecs_core::query::Query<'w, World>>(&'w mut self) -> ::core::result::Result<::ecs_core::query::QueryIter<'w, World, Q>, ::ecs_core::WorldError> {
                ::ecs_core::query::QueryIter::new::<()>(self, &|c| COMPONENT_NAMES[c as usize])
            }

            /// [`World::query`] with a filter: `With<C>`, `Without<C>` or a tuple of them.
            pub fn query_filtered<'w, Q: ::ecs_core::query::Query<'w, World>, F: ::ecs_core::query::Filter<World>>(&'w mut self) -> ::core::result::Result<::ecs_core::query::QueryIter<'w, World, Q>, ::ecs_core::WorldError> {
                ::ecs_core::query::QueryIter::new::<F>(self, &|c| COMPONENT_NAMES[c as usize])
            }

            /// The query's items for one entity; an error if it is not alive or lacks a
            /// required component.
            pub fn query_one<'w, Q: ::ecs_core::query::Query<'w, World>>(&'w mut self, entity: ::ecs_core::Entity) -> ::core::result::Result<Q::Item, ::ecs_core::WorldError> {
                ::ecs_core::query::query_one::<World, Q>(self, entity, &|c| COMPONENT_NAMES[c as usize])
            }

            /// The component set of `entity`'s signature, or `None` if it is not alive.
            pub fn signature_of(&self, entity: ::ecs_core::Entity) -> ::core::option::Option<ComponentSet> {
                self.table.locate(entity).map(|loc| STORE_SETS[loc.store as usize])
            }

            /// The name of `entity`'s signature, or `None` if it is not alive.
            pub fn signature_name_of(&self, entity: ::ecs_core::Entity) -> ::core::option::Option<&'static str> {
                self.table.locate(entity).map(|loc| STORE_NAMES[loc.store as usize])
            }

            /// The resource `R`.
            #[inline]
            pub fn resource<R: ::ecs_core::ResourceIn<World>>(&self) -> &R { R::get_in(self) }

            /// Mutable access to the resource `R`.
            #[inline]
            pub fn resource_mut<R: ::ecs_core::ResourceIn<World>>(&mut self) -> &mut R { R::get_mut_in(self) }

            /// All resources.
            pub fn resources(&self) -> &Resources { &self.resources }

            /// All resources, mutable.
            pub fn resources_mut(&mut self) -> &mut Resources { &mut self.resources }

            /// Every store, read-only: mutate through systems and [`World::get_mut`].
            pub fn stores(&self) -> &Stores { &self.stores }

            /// The entity manager, e.g. to check ids or count slots.
            pub fn entity_manager(&self) -> &::ecs_core::entity::EntityManager { self.table.entities() }

            /// Every live entity, store by store in store id order, rows in order.
            pub fn entities(&self) -> impl ::core::iter::Iterator<Item = ::ecs_core::Entity> + '_ {
                #entities_iter
            }

            /// Checks the world's invariants, for tests: every store's columns have one length;
            /// every row's entity is alive and located at that row; no entity is in two rows;
            /// the entity count matches the rows. Returns the first violation.
            pub fn check_invariants(&self) -> ::core::result::Result<(), ::std::string::String> {
                let mut rows = 0usize;
                let mut seen = ::std::collections::HashSet::new();
                #(
                    let store = &self.stores.#store_fields;
                    if !store.columns_agree() {
                        return Err(::std::format!("store {} has columns of different lengths", STORE_NAMES[#store_ids as usize]));
                    }
                    for (row, entity) in store.entities.iter().enumerate() {
                        if !seen.insert(*entity) {
                            return Err(::std::format!("entity {} appears in two rows", entity));
                        }
                        let expected = ::ecs_core::Location::new(#store_ids, row);
                        if self.table.locate(*entity) != ::core::option::Option::Some(expected) {
                            return Err(::std::format!("entity {} in store {} row {} is located at {:?}", entity, STORE_NAMES[#store_ids as usize], row, self.table.locate(*entity)));
                        }
                    }
                    rows += store.len();
                )*
                if rows != self.table.len() {
                    return Err(::std::format!("{} rows but {} live entities", rows, self.table.len()));
                }
                Ok(())
            }

            /// Memory statistics of every store.
            pub fn stats(&self) -> ::ecs_core::WorldStats {
                ::ecs_core::WorldStats { stores: ::std::vec![ #( self.stores.#store_fields.stats(), )* ] }
            }

            /// Runs the system at `index` in [`SYSTEM_NAMES`]; returns false when there is none.
            pub fn run_system(&mut self, index: usize) -> bool {
                match index {
                    #( #system_ids => { self.#run_all(); true } )*
                    _ => false,
                }
            }

            /// Number of rows system `index` visits: the entities of its matching stores.
            pub fn system_rows(&self, index: usize) -> usize {
                let stats = self.stats();
                SYSTEM_STORES.get(index).map_or(0, |ids| ids.iter().map(|&s| stats.stores[s as usize].entities).sum())
            }

            /// Runs every system once, sequentially, in declaration order.
            pub fn run_all(&mut self) {
                #( self.#run_all(); )*
            }

            #(#systems)*

            #stage_methods

            #apply_commands
        }

        #(#spawns)*

        #(#access)*

        #query_target

        #(
            impl ::ecs_core::ResourceIn<World> for #res_types {
                #[inline]
                fn get_in(world: &World) -> &Self { &world.resources.#res_fields }
                #[inline]
                fn get_mut_in(world: &mut World) -> &mut Self { &mut world.resources.#res_fields }
            }
        )*
    }
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("PointMass"), "point_mass");
        assert_eq!(snake_case("Time"), "time");
        assert_eq!(snake_case("A"), "a");
        assert_eq!(snake_case("AB"), "ab");
        assert_eq!(snake_case("ABZst"), "ab_zst");
        assert_eq!(snake_case("ACounted"), "a_counted");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("Vec3Data"), "vec3_data");
    }
}
