//! Expansion of the declaration macros. Parsing and validation live in `sigecs_decl`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use sigecs_decl as decl;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, ItemFn};

fn parse<T: syn::parse::Parse>(input: TokenStream) -> Result<T, TokenStream> {
    syn::parse2(input).map_err(|e| e.to_compile_error())
}

pub fn component(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match parse(input) {
        Ok(i) => i,
        Err(e) => return e,
    };
    match decl::parse_component(&input) {
        Ok(c) => {
            let ident = &c.ident;
            let cold = c.cold;
            let sparse = c.sparse.then(|| {
                quote!(
                    const SPARSE: bool = true;
                )
            });
            let level_check = c.level.as_ref().map(|r| level_check(ident, r));
            quote! {
                const _: () = {
                    impl ::sigecs::Component for #ident {
                        const COLD: bool = #cold;
                        #sparse
                    }
                    #level_check
                };
            }
        }
        Err(e) => e.to_compile_error(),
    }
}

pub fn signature(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match parse(input) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let sig = match decl::parse_signature(&input) {
        Ok(s) => s,
        Err(e) => return e.to_compile_error(),
    };
    let ident = &sig.ident;
    let Data::Struct(data) = &input.data else {
        unreachable!("parse_signature accepts structs only")
    };
    let Fields::Named(named) = &data.fields else {
        unreachable!("parse_signature accepts named fields only")
    };
    let names: Vec<_> = named
        .named
        .iter()
        .map(|f| f.ident.as_ref().unwrap())
        .collect();
    // Each field type must be a component: `put` requires it, and the call is spanned on the
    // field's type so the one error points there.
    let puts = named.named.iter().zip(&names).map(|(f, name)| {
        let ty = &f.ty;
        quote_spanned! {ty.span()=> __sink.put::<#ty>(self.#name); }
    });
    let n = names.len();
    quote! {
        const _: () = {
            impl ::sigecs::Signature for #ident {
                const LEN: usize = #n;
                #[inline]
                fn write_fields<__SigecsSink: ::sigecs::__private::FieldSink>(self, __sink: &mut __SigecsSink) {
                    #(#puts)*
                }
            }
        };
    }
}

pub fn event(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match parse(input) {
        Ok(i) => i,
        Err(e) => return e,
    };
    match decl::parse_event(&input) {
        Ok(e) => {
            let ident = &e.ident;
            quote! {
                const _: () = {
                    impl ::sigecs::Event for #ident {}
                };
            }
        }
        Err(e) => e.to_compile_error(),
    }
}

pub fn resource(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match parse(input) {
        Ok(i) => i,
        Err(e) => return e,
    };
    match decl::parse_resource(&input) {
        Ok(r) => {
            let ident = &r.ident;
            // Spanned at the name: a type that is not `Default` is an error there.
            let initial =
                quote::quote_spanned!(ident.span()=> <Self as ::core::default::Default>::default());
            quote! {
                const _: () = {
                    impl ::sigecs::Resource for #ident {
                        fn __initial() -> Self {
                            #initial
                        }
                    }
                };
            }
        }
        Err(e) => e.to_compile_error(),
    }
}

pub fn system(args: TokenStream, item: TokenStream) -> TokenStream {
    let f: ItemFn = match parse(item.clone()) {
        Ok(f) => f,
        Err(e) => return e,
    };
    match decl::parse_system(args, &f) {
        // The function is kept as written; the build script generates the loops that call it.
        // `#[inline]` lets the call melt into the generated loop.
        Ok(_) => quote!(#[inline] #f),
        // Keep the function so one mistake does not cascade into "cannot find function" errors.
        Err(e) => {
            let err = e.to_compile_error();
            quote!(#err #f)
        }
    }
}

/// The check that an opted-in type is registrable for levels (`Pod`, or serde, and
/// `MapEntities` when asked for; a tag needs nothing), spanned at `level = "…"` so that an
/// unmet bound is an error there, at the declaration, and not only in the generated registry.
/// It names `::sigecs_level`: a crate that declares level components depends on it.
pub(crate) fn level_check(ident: &proc_macro2::Ident, r: &decl::LevelOpt) -> TokenStream {
    // The type named with the level name's span.
    let name = ident.to_string();
    let ident = match name.strip_prefix("r#") {
        Some(raw) => proc_macro2::Ident::new_raw(raw, r.span),
        None => proc_macro2::Ident::new(&name, r.span),
    };
    let constructor = match r.encoding {
        decl::LevelEncoding::Pod => quote!(pod),
        decl::LevelEncoding::Serde => quote!(serde),
        decl::LevelEncoding::Tag => quote!(tag),
    };
    let map = r.map_entities.then(|| {
        quote_spanned! {r.span=>
            let _ = ::sigecs_level::Registration::map_entities::<#ident>;
        }
    });
    quote_spanned! {r.span=>
        #[allow(dead_code)]
        fn __sigecs_level_check() {
            let _ = ::sigecs_level::Registration::#constructor::<#ident>;
            #map
        }
    }
}
