//! What a world that opted in to world states (`Builder::rollback`) adds: one state entry per
//! component and event type (how it is copied and hashed, chosen from its derives), `Clone`
//! for the resources, and `StateModel` for the model. The copy and hash functions are
//! sigecs's, instantiated for each type; a type that is not `Clone` fails the build at its
//! entry with a message naming it (`sigecs::__private::Saved`).

use super::{resource_fields, safety};
use crate::analyze::{Analysis, Traits};
use proc_macro2::TokenStream;
use quote::quote;

/// The `.hash_bytes::<T>()` or `.hash_with::<T>()` suffix of an entry, from `T`'s derives.
fn hashing(traits: Traits, path: &syn::Path) -> TokenStream {
    if traits.bytes {
        quote!(.hash_bytes::<#path>())
    } else if traits.hash {
        quote!(.hash_with::<#path>())
    } else {
        TokenStream::new()
    }
}

/// The hashing of one resource field, or nothing for a resource that cannot be hashed.
fn hash_resource(traits: Traits, field: &proc_macro2::Ident) -> TokenStream {
    if traits.bytes {
        quote!(::sigecs::__private::hash_value_bytes(&resources.#field, hasher);)
    } else if traits.hash {
        quote!(::sigecs::__private::hash_value_with(&resources.#field, hasher);)
    } else {
        TokenStream::new()
    }
}

pub(super) fn generate(model: &Analysis) -> TokenStream {
    if !model.rollback {
        return TokenStream::new();
    }
    let components = model.components.iter().map(|c| {
        let path = &c.path;
        if c.no_rollback {
            return quote!(::sigecs::__private::ComponentState::no_rollback::<#path>());
        }
        let copy = if c.traits.copy {
            quote!(::sigecs::__private::ComponentState::bits::<#path>())
        } else {
            quote!(::sigecs::__private::ComponentState::cloned::<#path>())
        };
        let hash = hashing(c.traits, path);
        quote!(#copy #hash)
    });
    let n = model.components.len();
    let events = model.events.iter().map(|e| {
        let path = &e.path;
        let hash = hashing(e.traits, path);
        quote!(::sigecs::__private::EventState::cloned::<#path>() #hash)
    });
    let e = model.events.len();
    let fields = resource_fields(model);
    let clones = fields
        .iter()
        .map(|f| quote!(#f: ::sigecs::__private::cloned(&self.#f)));
    let clone_froms = fields
        .iter()
        .map(|f| quote!(::sigecs::__private::clone_saved(&source.#f, &mut self.#f);));
    let hashes = model
        .resources
        .iter()
        .zip(&fields)
        .map(|(r, f)| hash_resource(r.traits, f));
    let model_safety = safety(
        "STATE_COMPONENTS and STATE_EVENTS list the model's components and events in id order, \
         each entry made for that type; `hash_resources` reads the resources only.",
    );
    quote! {
        /// How world states copy and hash each component, by id.
        static STATE_COMPONENTS: [::sigecs::__private::ComponentState; #n] = [#(#components),*];
        /// How world states copy and hash each event type, by id.
        static STATE_EVENTS: [::sigecs::__private::EventState; #e] = [#(#events),*];
        static STATE_TABLES: ::sigecs::__private::StateTables =
            ::sigecs::__private::StateTables::new(&STATE_COMPONENTS, &STATE_EVENTS);
        impl ::core::clone::Clone for Resources {
            fn clone(&self) -> Self {
                Resources { #(#clones),* }
            }
            fn clone_from(&mut self, source: &Self) {
                #(#clone_froms)*
            }
        }
        #model_safety
        unsafe impl ::sigecs::state::StateModel for Model {
            fn state_tables() -> &'static ::sigecs::__private::StateTables {
                &STATE_TABLES
            }
            fn hash_resources(resources: &Resources, hasher: &mut ::sigecs::state::StateHasher) {
                #(#hashes)*
            }
        }
    }
}
