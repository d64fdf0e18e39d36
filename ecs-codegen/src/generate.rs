//! The generator: turns a [`Model`] into the Rust source of a `World`.
//!
//! The generated file holds types and thin impls only: one store struct per signature, the
//! `World` that owns them, the `ComponentSet` bitflags, and per system one loop per matching
//! store. Entity bookkeeping, errors and statistics live in `ecs_core`.

use crate::analyze::{Model, Param, Signature, System};
use crate::decl::LayoutDecl;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

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

fn gen_store(model: &Model, sig_id: usize, sig: &Signature) -> TokenStream {
    let n = store_names(sig);
    let (ty, row_ty, cold_ty) = (&n.ty, &n.row, &n.cold);
    let sig_path = &sig.path;
    let sig_name = sig.ident.to_string();
    let comp_ty = |id: usize| &model.components[id].path;
    let all_fields: Vec<&Ident> = sig.fields.iter().map(|(f, _)| f).collect();
    let all_types: Vec<&syn::Path> = sig.fields.iter().map(|(_, id)| comp_ty(*id)).collect();
    let store_doc = doc(format!(
        "The packed store of signature [`{sig_name}`]({}) ({} layout), store id {sig_id}.",
        quote!(#sig_path).to_string().replace(' ', ""),
        match sig.layout {
            LayoutDecl::Columns => "columns",
            LayoutDecl::Rows => "rows",
        }
    ));
    let live_size = sum(all_types
        .iter()
        .map(|t| quote!(::core::mem::size_of::<#t>())));

    match sig.layout {
        LayoutDecl::Columns => {
            let column_bytes = sum(sig.fields.iter().map(|(f, id)| {
                let t = comp_ty(*id);
                quote!(self.#f.capacity() * ::core::mem::size_of::<#t>())
            }));
            let accessors = sig.fields.iter().map(|(f, id)| {
                let t = comp_ty(*id);
                let f_mut = format_ident!("{}_mut", f);
                let d = doc(format!("The `{f}` column, one value per row."));
                let dm = doc(format!(
                    "The `{f}` column, mutable (its length cannot change)."
                ));
                quote! {
                    #d
                    #[inline]
                    pub fn #f(&self) -> &[#t] { &self.#f }
                    #dm
                    #[inline]
                    pub fn #f_mut(&mut self) -> &mut [#t] { &mut self.#f }
                }
            });
            quote! {
                #store_doc
                #[derive(Default)]
                pub struct #ty {
                    entities: ::std::vec::Vec<::ecs_core::Entity>,
                    #( #all_fields: ::std::vec::Vec<#all_types>, )*
                }
                impl #ty {
                    /// Number of rows (entities).
                    #[inline]
                    pub fn len(&self) -> usize { self.entities.len() }
                    /// True when the store holds no entity.
                    #[inline]
                    pub fn is_empty(&self) -> bool { self.entities.is_empty() }
                    /// The entity of each row.
                    #[inline]
                    pub fn entities(&self) -> &[::ecs_core::Entity] { &self.entities }
                    #(#accessors)*
                    fn push(&mut self, entity: ::ecs_core::Entity, parts: <#sig_path as ::ecs_core::Signature>::Parts) {
                        let ( #(#all_fields,)* ) = parts;
                        self.entities.push(entity);
                        #( self.#all_fields.push(#all_fields); )*
                    }
                    fn reserve(&mut self, additional: usize) {
                        self.entities.reserve(additional);
                        #( self.#all_fields.reserve(additional); )*
                    }
                    fn truncate(&mut self, len: usize) {
                        self.entities.truncate(len);
                        #( self.#all_fields.truncate(len); )*
                    }
                    /// Removes `row` by moving the last row into it. Returns the entity that
                    /// moved (if any) and the removed values, which the caller drops once the
                    /// world is consistent again.
                    fn swap_remove(&mut self, row: usize) -> (::core::option::Option<::ecs_core::Entity>, <#sig_path as ::ecs_core::Signature>::Parts) {
                        self.entities.swap_remove(row);
                        let removed = ( #( self.#all_fields.swap_remove(row), )* );
                        (self.entities.get(row).copied(), removed)
                    }
                    fn columns_agree(&self) -> bool {
                        #( self.#all_fields.len() == self.entities.len() )&&*
                    }
                    fn stats(&self) -> ::ecs_core::StoreStats {
                        let component_bytes = #column_bytes;
                        ::ecs_core::StoreStats {
                            name: #sig_name,
                            layout: ::ecs_core::Layout::Columns,
                            entities: self.len(),
                            live_bytes: self.len() * (#live_size),
                            component_bytes,
                            allocated_bytes: component_bytes + self.entities.capacity() * ::core::mem::size_of::<::ecs_core::Entity>(),
                        }
                    }
                }
            }
        }
        LayoutDecl::Rows => {
            let hot = hot_fields(model, sig);
            let cold = cold_fields(model, sig);
            let hot_f: Vec<&Ident> = hot.iter().map(|(f, _)| f).collect();
            let hot_t: Vec<&syn::Path> = hot.iter().map(|(_, id)| comp_ty(*id)).collect();
            let cold_f: Vec<&Ident> = cold.iter().map(|(f, _)| f).collect();
            let cold_t: Vec<&syn::Path> = cold.iter().map(|(_, id)| comp_ty(*id)).collect();
            let has_cold = !cold.is_empty();
            let row_doc = doc(format!(
                "One row of `{sig_name}`: its hot components, packed together."
            ));
            let cold_doc = doc(format!(
                "The cold components of one `{sig_name}` row, kept apart so hot loops skip them."
            ));
            let cold_decl = has_cold.then(|| {
                quote! {
                    #cold_doc
                    pub struct #cold_ty { #( #[allow(missing_docs)] pub #cold_f: #cold_t, )* }
                }
            });
            let cold_field = has_cold.then(|| quote!(cold: ::std::vec::Vec<#cold_ty>,));
            let cold_accessors = has_cold.then(|| {
                quote! {
                    /// The cold part of each row.
                    #[inline]
                    pub fn cold(&self) -> &[#cold_ty] { &self.cold }
                    /// The cold part of each row, mutable.
                    #[inline]
                    pub fn cold_mut(&mut self) -> &mut [#cold_ty] { &mut self.cold }
                }
            });
            let cold_push = has_cold.then(|| quote!(self.cold.push(#cold_ty { #(#cold_f,)* });));
            let cold_reserve = has_cold.then(|| quote!(self.cold.reserve(additional);));
            let cold_truncate = has_cold.then(|| quote!(self.cold.truncate(len);));
            let cold_remove = if has_cold {
                quote!(let cold = self.cold.swap_remove(row);)
            } else {
                quote!()
            };
            let cold_parts = if has_cold {
                quote!(let #cold_ty { #(#cold_f,)* } = cold;)
            } else {
                quote!()
            };
            let cold_bytes = has_cold
                .then(|| quote!(+ self.cold.capacity() * ::core::mem::size_of::<#cold_ty>()));
            let cold_len_check = has_cold.then(|| quote!(&&self.cold.len() == self.entities.len()));
            quote! {
                #row_doc
                #[repr(C)]
                pub struct #row_ty { #( #[allow(missing_docs)] pub #hot_f: #hot_t, )* }
                #cold_decl
                #store_doc
                #[derive(Default)]
                pub struct #ty {
                    entities: ::std::vec::Vec<::ecs_core::Entity>,
                    rows: ::std::vec::Vec<#row_ty>,
                    #cold_field
                }
                impl #ty {
                    /// Number of rows (entities).
                    #[inline]
                    pub fn len(&self) -> usize { self.entities.len() }
                    /// True when the store holds no entity.
                    #[inline]
                    pub fn is_empty(&self) -> bool { self.entities.is_empty() }
                    /// The entity of each row.
                    #[inline]
                    pub fn entities(&self) -> &[::ecs_core::Entity] { &self.entities }
                    /// The hot part of each row.
                    #[inline]
                    pub fn rows(&self) -> &[#row_ty] { &self.rows }
                    /// The hot part of each row, mutable (its length cannot change).
                    #[inline]
                    pub fn rows_mut(&mut self) -> &mut [#row_ty] { &mut self.rows }
                    #cold_accessors
                    fn push(&mut self, entity: ::ecs_core::Entity, parts: <#sig_path as ::ecs_core::Signature>::Parts) {
                        let ( #(#all_fields,)* ) = parts;
                        self.entities.push(entity);
                        self.rows.push(#row_ty { #(#hot_f,)* });
                        #cold_push
                    }
                    fn reserve(&mut self, additional: usize) {
                        self.entities.reserve(additional);
                        self.rows.reserve(additional);
                        #cold_reserve
                    }
                    fn truncate(&mut self, len: usize) {
                        self.entities.truncate(len);
                        self.rows.truncate(len);
                        #cold_truncate
                    }
                    /// Removes `row` by moving the last row into it (see the columns stores).
                    fn swap_remove(&mut self, row: usize) -> (::core::option::Option<::ecs_core::Entity>, <#sig_path as ::ecs_core::Signature>::Parts) {
                        self.entities.swap_remove(row);
                        let #row_ty { #(#hot_f,)* } = self.rows.swap_remove(row);
                        #cold_remove
                        #cold_parts
                        (self.entities.get(row).copied(), ( #(#all_fields,)* ))
                    }
                    fn columns_agree(&self) -> bool {
                        self.rows.len() == self.entities.len() #cold_len_check
                    }
                    fn stats(&self) -> ::ecs_core::StoreStats {
                        let component_bytes = self.rows.capacity() * ::core::mem::size_of::<#row_ty>() #cold_bytes;
                        ::ecs_core::StoreStats {
                            name: #sig_name,
                            layout: ::ecs_core::Layout::Rows,
                            entities: self.len(),
                            live_bytes: self.len() * (#live_size),
                            component_bytes,
                            allocated_bytes: component_bytes + self.entities.capacity() * ::core::mem::size_of::<::ecs_core::Entity>(),
                        }
                    }
                }
            }
        }
    }
}

fn gen_spawn(sig_id: usize, sig: &Signature) -> TokenStream {
    let n = store_names(sig);
    let field = &n.field;
    let path = &sig.path;
    let id = sig_id as u32;
    let store_ty = &n.ty;
    quote! {
        impl ::ecs_core::SpawnIn<World> for #path {
            fn spawn_in(self, world: &mut World) -> ::core::result::Result<::ecs_core::Entity, ::ecs_core::WorldError> {
                let row = world.stores.#field.len();
                let entity = world.table.create_at(::ecs_core::Location::new(#id, row))?;
                world.stores.#field.push(entity, ::ecs_core::Signature::into_parts(self));
                Ok(entity)
            }
            fn spawn_batch_in(
                batch: impl ::core::iter::IntoIterator<Item = Self>,
                world: &mut World,
            ) -> ::core::result::Result<::std::vec::Vec<::ecs_core::Entity>, ::ecs_core::WorldError> {
                let batch = batch.into_iter();
                let first = world.stores.#field.len();
                world.stores.#field.reserve(batch.size_hint().0);
                // Rows first, with placeholder ids; if the iterator panics the guard truncates
                // them away, so the world never holds rows without entities.
                let mut store = ::ecs_core::world::Rollback::new(&mut world.stores.#field, move |s: &mut #store_ty| s.truncate(first));
                for value in batch {
                    store.push(::ecs_core::world::PLACEHOLDER, ::ecs_core::Signature::into_parts(value));
                }
                let count = store.len() - first;
                let mut entities = ::std::vec::Vec::with_capacity(count);
                // All or nothing: on exhaustion the guard drops the new rows.
                world.table.create_run(#id, first, count, &mut entities)?;
                let store = store.commit();
                store.entities[first..].copy_from_slice(&entities);
                Ok(entities)
            }
        }
    }
}

/// Binding name of component `id`'s value while a row moves between stores.
fn value_binding(id: usize) -> Ident {
    format_ident!("c{}", id)
}

/// Moves the row at `loc` of store `from` to the end of store `to`, with `extra` (bindings of
/// component values not in `from`) added; evaluates to nothing, leaves bindings of `from`'s
/// values that `to` does not take (for `remove`) in scope.
fn gen_move(model: &Model, from: usize, to: usize) -> TokenStream {
    let (fs, ts) = (&model.signatures[from], &model.signatures[to]);
    let (ff, tf) = (store_names(fs).field, store_names(ts).field);
    let from_vals: Vec<Ident> = fs.fields.iter().map(|(_, id)| value_binding(*id)).collect();
    let to_vals: Vec<Ident> = ts.fields.iter().map(|(_, id)| value_binding(*id)).collect();
    let to_id = to as u32;
    quote! {
        let (moved, parts) = world.stores.#ff.swap_remove(loc.row());
        if let ::core::option::Option::Some(moved) = moved { world.table.relocate(moved, loc); }
        let ( #(#from_vals,)* ) = parts;
        let row = world.stores.#tf.len();
        world.stores.#tf.push(entity, ( #(#to_vals,)* ));
        world.table.relocate(entity, ::ecs_core::Location::new(#to_id, row));
    }
}

fn gen_component_access(model: &Model, comp_id: usize) -> TokenStream {
    let path = &model.components[comp_id].path;
    let name = model.components[comp_id].ident.to_string();
    let id = comp_id as u32;
    let bit = 1u128 << comp_id;
    let by_mask = |mask: u128| model.signatures.iter().position(|s| s.mask == mask);
    let holders: Vec<(u32, &Signature)> = model
        .signatures
        .iter()
        .enumerate()
        .filter(|(_, s)| s.has(comp_id))
        .map(|(i, s)| (i as u32, s))
        .collect();
    let arms = |mutable: bool| {
        holders.iter().map(move |(i, sig)| {
            let field = store_names(sig).field;
            let store = quote!(world.stores.#field);
            let el = element(model, sig, comp_id, &store, &quote!(loc.row()));
            if mutable {
                quote!(#i => ::core::option::Option::Some(&mut #el),)
            } else {
                quote!(#i => ::core::option::Option::Some(&#el),)
            }
        })
    };
    let (get_arms, mut_arms) = (arms(false), arms(true));
    let value = value_binding(comp_id);
    let insert_arms = model.signatures.iter().enumerate().map(|(i, sig)| {
        let store_id = i as u32;
        if sig.has(comp_id) {
            let field = store_names(sig).field;
            let store = quote!(world.stores.#field);
            let el = element(model, sig, comp_id, &store, &quote!(loc.row()));
            quote!(#store_id => ::core::result::Result::Ok(::core::option::Option::Some(::core::mem::replace(&mut #el, self))),)
        } else if let Some(to) = by_mask(sig.mask | bit) {
            let mv = gen_move(model, i, to);
            quote!(#store_id => { let #value = self; #mv ::core::result::Result::Ok(::core::option::Option::None) })
        } else {
            quote!(#store_id => ::core::result::Result::Err(world.undeclared(entity, loc, ::ecs_core::Change::Insert, #id)),)
        }
    });
    let remove_arms = model.signatures.iter().enumerate().map(|(i, sig)| {
        let store_id = i as u32;
        if !sig.has(comp_id) {
            quote!(#store_id => ::core::result::Result::Err(::ecs_core::WorldError::MissingComponent {
                entity, signature: STORE_NAMES[#store_id as usize], component: #name,
            }),)
        } else if let Some(to) = by_mask(sig.mask & !bit) {
            let mv = gen_move(model, i, to);
            quote!(#store_id => { #mv ::core::result::Result::Ok(#value) })
        } else {
            quote!(#store_id => ::core::result::Result::Err(world.undeclared(entity, loc, ::ecs_core::Change::Remove, #id)),)
        }
    });
    quote! {
        impl ::ecs_core::ComponentIn<World> for #path {
            const ID: u32 = #id;
            const NAME: &'static str = #name;
            #[inline]
            #[allow(clippy::match_single_binding, unused_variables)]
            fn get_in(world: &World, loc: ::ecs_core::Location) -> ::core::option::Option<&Self> {
                match loc.store { #(#get_arms)* _ => ::core::option::Option::None }
            }
            #[inline]
            #[allow(clippy::match_single_binding, unused_variables)]
            fn get_mut_in(world: &mut World, loc: ::ecs_core::Location) -> ::core::option::Option<&mut Self> {
                match loc.store { #(#mut_arms)* _ => ::core::option::Option::None }
            }
            #[allow(clippy::match_single_binding, unused_variables)]
            fn insert_in(self, world: &mut World, entity: ::ecs_core::Entity) -> ::core::result::Result<::core::option::Option<Self>, ::ecs_core::WorldError> {
                let loc = world.table.locate(entity).ok_or(::ecs_core::WorldError::NoSuchEntity(entity))?;
                match loc.store {
                    #(#insert_arms)*
                    _ => unreachable!("entity table points at store {} which does not exist", loc.store),
                }
            }
            #[allow(clippy::match_single_binding, unused_variables)]
            fn remove_in(world: &mut World, entity: ::ecs_core::Entity) -> ::core::result::Result<Self, ::ecs_core::WorldError> {
                let loc = world.table.locate(entity).ok_or(::ecs_core::WorldError::NoSuchEntity(entity))?;
                match loc.store {
                    #(#remove_arms)*
                    _ => unreachable!("entity table points at store {} which does not exist", loc.store),
                }
            }
        }
    }
}

/// `QueryTarget`: per (store, component), the column's first value and stride.
fn gen_query_target(model: &Model) -> TokenStream {
    let mut column_arms = Vec::new();
    let mut len_arms = Vec::new();
    let mut entity_arms = Vec::new();
    for (i, sig) in model.signatures.iter().enumerate() {
        let n = store_names(sig);
        let (field, row_ty, cold_ty) = (&n.field, &n.row, &n.cold);
        len_arms.push(quote!(#i => self.stores.#field.len(),));
        entity_arms.push(quote!(#i => self.stores.#field.entities.as_ptr(),));
        for (f, id) in &sig.fields {
            let c = *id as u32;
            let ty = &model.components[*id].path;
            let column = match sig.layout {
                LayoutDecl::Columns => quote! {
                    ::ecs_core::query::RawColumn {
                        ptr: self.stores.#field.#f.as_mut_ptr().cast::<u8>(),
                        stride: ::core::mem::size_of::<#ty>(),
                    }
                },
                LayoutDecl::Rows => {
                    let (vec, holder) = if is_cold(model, sig, *id) {
                        (quote!(cold), cold_ty)
                    } else {
                        (quote!(rows), row_ty)
                    };
                    quote! {
                        ::ecs_core::query::RawColumn {
                            ptr: self.stores.#field.#vec.as_mut_ptr().cast::<u8>().wrapping_add(::core::mem::offset_of!(#holder, #f)),
                            stride: ::core::mem::size_of::<#holder>(),
                        }
                    }
                }
            };
            column_arms.push(quote!((#i, #c) => ::core::option::Option::Some(#column),));
        }
    }
    let n = model.signatures.len();
    quote! {
        // SAFETY: every column pointer comes from `Vec::as_mut_ptr` of the store's own vector
        // (no reference to its elements is created), offset within the row struct by
        // `offset_of!` for `rows` stores, with the stride of the vector's element type; so
        // `ptr + row * stride` is a valid value of the component for every row < len. Masks and
        // names are the generated tables.
        unsafe impl ::ecs_core::query::QueryTarget for World {
            fn store_count() -> usize { #n }
            fn store_mask(store: usize) -> u128 { STORE_SETS[store].bits() as u128 }
            fn store_name(store: usize) -> &'static str { STORE_NAMES[store] }
            #[allow(clippy::match_single_binding)]
            fn store_len(&self, store: usize) -> usize {
                match store { #(#len_arms)* _ => 0 }
            }
            #[allow(clippy::match_single_binding)]
            fn entities(&mut self, store: usize) -> *const ::ecs_core::Entity {
                match store { #(#entity_arms)* _ => ::core::ptr::null() }
            }
            #[allow(clippy::match_single_binding)]
            fn column(&mut self, store: usize, component: u32) -> ::core::option::Option<::ecs_core::query::RawColumn> {
                match (store, component) { #(#column_arms)* _ => ::core::option::Option::None }
            }
            fn locate_entity(&self, entity: ::ecs_core::Entity) -> ::core::option::Option<::ecs_core::Location> {
                self.table.locate(entity)
            }
        }
    }
}

/// The body of one system over one store: a zip of the needed columns (or rows), calling the
/// system once per row. Written as an iterator chain so a rayon split can replace it.
fn gen_system_loop(model: &Model, system: &System, sig: &Signature) -> TokenStream {
    let field = store_names(sig).field;
    let mut sources: Vec<(TokenStream, Ident)> = Vec::new();
    let mut args: Vec<TokenStream> = Vec::new();
    let row_mut = system.params.iter().any(|p| matches!(p, Param::Component { id, mutable: true, .. } if sig.has(*id) && !is_cold(model, sig, *id)));
    let cold_mut = system.params.iter().any(|p| matches!(p, Param::Component { id, mutable: true, .. } if sig.has(*id) && is_cold(model, sig, *id)));
    let needs = |cold: bool| {
        system.params.iter().any(|p| matches!(p, Param::Component { id, .. } if sig.has(*id) && is_cold(model, sig, *id) == cold))
    };
    let (row_b, cold_b) = (ident("row"), ident("cold"));
    if sig.layout == LayoutDecl::Rows {
        if needs(false) {
            let it = if row_mut {
                quote!(store.rows.iter_mut())
            } else {
                quote!(store.rows.iter())
            };
            sources.push((it, row_b.clone()));
        }
        if needs(true) {
            let it = if cold_mut {
                quote!(store.cold.iter_mut())
            } else {
                quote!(store.cold.iter())
            };
            sources.push((it, cold_b.clone()));
        }
    }
    for (i, p) in system.params.iter().enumerate() {
        let b = format_ident!("p{}", i);
        match *p {
            Param::Entity => {
                sources.push((quote!(store.entities.iter()), b.clone()));
                args.push(quote!(*#b));
            }
            Param::Resource { .. } => args.push(quote!(#b)),
            Param::Component {
                id,
                mutable,
                optional,
            } => {
                if !sig.has(id) {
                    args.push(quote!(::core::option::Option::None));
                    continue;
                }
                let value = match sig.layout {
                    LayoutDecl::Columns => {
                        let col = &sig.fields.iter().find(|(_, c)| *c == id).unwrap().0;
                        let it = if mutable {
                            quote!(store.#col.iter_mut())
                        } else {
                            quote!(store.#col.iter())
                        };
                        sources.push((it, b.clone()));
                        quote!(#b)
                    }
                    LayoutDecl::Rows => {
                        let f = &sig.fields.iter().find(|(_, c)| *c == id).unwrap().0;
                        let holder = if is_cold(model, sig, id) {
                            &cold_b
                        } else {
                            &row_b
                        };
                        if mutable {
                            quote!(&mut #holder.#f)
                        } else {
                            quote!(&#holder.#f)
                        }
                    }
                };
                args.push(if optional {
                    quote!(::core::option::Option::Some(#value))
                } else {
                    value
                });
            }
        }
    }
    let mut iter = sources[0].0.clone();
    let first = &sources[0].1;
    let mut pat = quote!(#first);
    for (it, b) in &sources[1..] {
        iter = quote!(#iter.zip(#it));
        pat = quote!((#pat, #b));
    }
    let path = &system.path;
    quote! {
        {
            let store = &mut self.stores.#field;
            for #pat in #iter {
                #path(#(#args),*);
            }
        }
    }
}

fn gen_system(model: &Model, system: &System) -> TokenStream {
    let name = &system.ident;
    let run = format_ident!("run_{}", name);
    let resources = system
        .params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match *p {
            Param::Resource { id, mutable } => {
                let b = format_ident!("p{}", i);
                let f = format_ident!("{}", snake_case(&model.resources[id].ident.to_string()));
                Some(if mutable {
                    quote!(let #b = &mut self.resources.#f;)
                } else {
                    quote!(let #b = &self.resources.#f;)
                })
            }
            _ => None,
        });
    let loops = system
        .matches
        .iter()
        .map(|&s| gen_system_loop(model, system, &model.signatures[s]));
    let sigs: Vec<String> = system
        .matches
        .iter()
        .map(|&s| format!("`{}`", model.signatures[s].ident))
        .collect();
    let d = doc(format!(
        "Runs system `{name}` over every row of the matching signatures: {}.",
        sigs.join(", ")
    ));
    quote! {
        #d
        pub fn #run(&mut self) {
            #(#resources)*
            #(#loops)*
        }
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
    let systems = model.systems.iter().map(|s| gen_system(model, s));
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
        }

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
                World { table: ::core::default::Default::default(), stores: ::core::default::Default::default(), resources }
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
                    #( #system_ids => self.#run_all(), )*
                    _ => return false,
                }
                true
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
