//! The `QueryTarget` impl behind run-time queries.

use super::*;

/// `QueryTarget`: per (store, component), the column's first value and stride.
pub(super) fn gen_query_target(model: &Model) -> TokenStream {
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
