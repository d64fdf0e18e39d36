//! One packed store per signature (columns or rows + cold), and spawning into it.

use super::*;

pub(super) fn gen_store(model: &Model, sig_id: usize, sig: &Signature) -> TokenStream {
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

    // Accessors every store has, whatever its layout.
    let common = quote! {
        /// Number of rows (entities).
        #[inline]
        pub fn len(&self) -> usize { self.entities.len() }
        /// True when the store holds no entity.
        #[inline]
        pub fn is_empty(&self) -> bool { self.entities.is_empty() }
        /// The entity of each row.
        #[inline]
        pub fn entities(&self) -> &[::ecs_core::Entity] { &self.entities }
    };

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
                    #common
                    #(#accessors)*
                    // Always inlined: the per-value call would cost more than the pushes.
                    #[inline(always)]
                    fn push(&mut self, entity: ::ecs_core::Entity, parts: <#sig_path as ::ecs_core::Signature>::Parts) {
                        let ( #(#all_fields,)* ) = parts;
                        self.entities.push(entity);
                        #( self.#all_fields.push(#all_fields); )*
                    }
                    #[inline]
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
                    #[inline]
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
                    #common
                    /// The hot part of each row.
                    #[inline]
                    pub fn rows(&self) -> &[#row_ty] { &self.rows }
                    /// The hot part of each row, mutable (its length cannot change).
                    #[inline]
                    pub fn rows_mut(&mut self) -> &mut [#row_ty] { &mut self.rows }
                    #cold_accessors
                    // Always inlined: the per-value call would cost more than the pushes.
                    #[inline(always)]
                    fn push(&mut self, entity: ::ecs_core::Entity, parts: <#sig_path as ::ecs_core::Signature>::Parts) {
                        let ( #(#all_fields,)* ) = parts;
                        self.entities.push(entity);
                        self.rows.push(#row_ty { #(#hot_f,)* });
                        #cold_push
                    }
                    #[inline]
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
                    #[inline]
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

pub(super) fn gen_spawn(sig_id: usize, sig: &Signature) -> TokenStream {
    let n = store_names(sig);
    let field = &n.field;
    let path = &sig.path;
    let id = sig_id as u32;
    let store_ty = &n.ty;
    quote! {
        impl ::ecs_core::SpawnIn<World> for #path {
            #[inline]
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
                {
                    let rows: &mut #store_ty = &mut store;
                    for value in batch {
                        rows.push(::ecs_core::world::PLACEHOLDER, ::ecs_core::Signature::into_parts(value));
                    }
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
