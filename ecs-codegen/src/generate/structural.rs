//! Per-component access: get, get_mut, and insert/remove through the transition table.

use super::*;

/// Binding name of component `id`'s value while a row moves between stores.
pub(super) fn value_binding(id: usize) -> Ident {
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

pub(super) fn gen_component_access(model: &Model, comp_id: usize) -> TokenStream {
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
            #[inline]
            fn insert_in(self, world: &mut World, entity: ::ecs_core::Entity) -> ::core::result::Result<::core::option::Option<Self>, ::ecs_core::WorldError> {
                let loc = world.table.locate(entity).ok_or(::ecs_core::WorldError::NoSuchEntity(entity))?;
                match loc.store {
                    #(#insert_arms)*
                    _ => unreachable!("entity table points at store {} which does not exist", loc.store),
                }
            }
            #[allow(clippy::match_single_binding, unused_variables)]
            #[inline]
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
