//! `#[derive(SoaManager)]`: a structure-of-arrays component manager for a struct.
//!
//! ```text
//! #[derive(SoaManager)]
//! #[soa(manager = "PointMassManager", lookup = "hash")]   // both optional
//! pub struct PointMass { pub mass: f32, pub position: Vec3, ... }
//! ```
//!
//! `#[soa(level = "point_mass", spawn_order = 1)]` declares the struct a level
//! component kept outside the stores: the options are parsed by `sigecs_decl::parse_soa`, as the
//! build script parses them to generate the registration, and the expansion checks here, at the
//! level name, that the struct is `Pod`, and makes the manager a level spawner: an
//! `impl sigecs_level::OutsideStores` whose methods call the spawner written once in
//! `sigecs_level` (a blanket impl there over every `SoaManager` would conflict with its impl
//! for `TransformManager`).
//!
//! This module validates the struct and computes the names; the manager itself is written once,
//! in `sigecs::soa::__soa_manager!`, which the output invokes. Generated names for a field `f`: `f`, `f_mut`, `set_f`,
//! `f_column`, `f_column_mut` (with the field's visibility), plus the manager's own methods and the
//! `{Struct}Columns` / `{Struct}ColumnsMut` borrow structs.
//!
//! Every problem is reported as a spanned `compile_error!`, all at once; nothing panics.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident};

/// Field tuples up to this length have an `sigecs::soa::Columns` implementation.
const MAX_FIELDS: usize = 16;

/// Methods every generated manager has; a field must not generate one of these names.
const MANAGER_METHODS: &[&str] = &[
    "new",
    "with_capacity",
    "store",
    "len",
    "is_empty",
    "capacity",
    "reserve",
    "shrink_to_fit",
    "lookup",
    "contains",
    "entity",
    "entities",
    "instances",
    "create",
    "destroy",
    "destroy_entity",
    "clear",
    "gc",
    "gc_all",
    "destroy_queue",
    "register_destroy_hook",
    "flush_destroyed",
    "columns",
    "columns_mut",
];

/// Expands `#[derive(SoaManager)]`; errors become `compile_error!` invocations.
pub fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(|input| expand_input(&input)) {
        Ok(tokens) => tokens,
        Err(err) => err.to_compile_error(),
    }
}

/// Collects errors so that one compile reports all of them.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// One field of the struct, with the names generated for it.
struct FieldNames<'a> {
    field: &'a syn::Field,
    ident: &'a Ident,
    names: [Ident; 4],
}

fn expand_input(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let row = &input.ident;

    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named.named.iter().collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(unnamed) => {
                errors.push(syn::Error::new(
                    unnamed.span(),
                    "`SoaManager` needs named fields: each field becomes a column with accessors \
                     named after it; write `struct Name { field: Type, ... }`",
                ));
                Vec::new()
            }
        },
        Data::Enum(data) => {
            errors.push(syn::Error::new(
                data.enum_token.span,
                "`SoaManager` can only be derived for a struct with named fields, not an enum",
            ));
            Vec::new()
        }
        Data::Union(data) => {
            errors.push(syn::Error::new(
                data.union_token.span,
                "`SoaManager` can only be derived for a struct with named fields, not a union",
            ));
            Vec::new()
        }
    };

    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        let span = if input.generics.params.is_empty() {
            input.generics.where_clause.span()
        } else {
            input.generics.span()
        };
        errors.push(syn::Error::new(
            span,
            "`SoaManager` does not support generic structs: a manager stores one concrete \
             column type per field; declare the struct with concrete types",
        ));
    }

    // The struct-level options, parsed as the build script parses them.
    let options = match sigecs_decl::parse_soa(input) {
        Ok(o) => o,
        Err(e) => {
            errors.push(e);
            sigecs_decl::SoaDecl {
                ident: input.ident.clone(),
                manager: None,
                lookup: None,
                level: None,
            }
        }
    };

    for field in &fields {
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("soa")) {
            errors.push(syn::Error::new(
                attr.span(),
                "`#[soa(...)]` has no field options; put `manager` and `lookup` on the struct",
            ));
        }
    }
    if let Some(extra) = fields.get(MAX_FIELDS) {
        errors.push(syn::Error::new(
            extra.span(),
            format!(
                "`SoaManager` supports at most {MAX_FIELDS} fields; split the component or group \
                 fields into structs"
            ),
        ));
    }

    let manager = options
        .manager
        .unwrap_or_else(|| format_ident!("{}Manager", row, span = row.span()));
    let columns = format_ident!("{}Columns", row);
    let columns_mut = format_ident!("{}ColumnsMut", row);
    if manager == *row {
        errors.push(syn::Error::new(
            manager.span(),
            format!("the manager cannot be called `{manager}`: that is the component's name"),
        ));
    } else if manager == columns || manager == columns_mut {
        errors.push(syn::Error::new(
            manager.span(),
            format!(
                "the manager cannot be called `{manager}`: that name is taken by the generated \
                 columns type"
            ),
        ));
    }

    // Generated method names must not collide with each other or with the manager's methods.
    let mut taken: HashMap<String, String> = MANAGER_METHODS
        .iter()
        .map(|m| (m.to_string(), "a manager method".to_string()))
        .collect();
    let mut named = Vec::new();
    for field in &fields {
        let Some(ident) = field.ident.as_ref() else {
            continue;
        };
        let names = [
            format_ident!("{}_mut", ident),
            format_ident!("set_{}", ident),
            format_ident!("{}_column", ident),
            format_ident!("{}_column_mut", ident),
        ];
        let plain = ident.unraw().to_string();
        for name in std::iter::once(plain.clone()).chain(names.iter().map(Ident::to_string)) {
            if let Some(owner) = taken.get(&name) {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!(
                        "field `{plain}` would generate the method `{name}`, which is already \
                         {owner}; rename the field"
                    ),
                ));
            } else {
                taken.insert(name, format!("generated for field `{plain}`"));
            }
        }
        named.push(FieldNames {
            field,
            ident,
            names,
        });
    }

    errors.finish()?;

    let vis = &input.vis;
    let lookup = match options.lookup.unwrap_or(sigecs_decl::SoaLookup::Hash) {
        sigecs_decl::SoaLookup::Hash => quote!(::sigecs::soa::HashLookup),
        sigecs_decl::SoaLookup::Dense => quote!(::sigecs::soa::DenseLookup),
    };
    let doc = format!(
        " Structure-of-arrays component manager for [`{row}`], generated by \
         `#[derive(SoaManager)]`: one column per field, {} entity lookup.",
        match options.lookup.unwrap_or(sigecs_decl::SoaLookup::Hash) {
            sigecs_decl::SoaLookup::Hash => "hash-map",
            sigecs_decl::SoaLookup::Dense => "dense-array",
        }
    );
    let field_specs = named.iter().enumerate().map(|(k, f)| {
        let k = syn::Index::from(k);
        let fvis = &f.field.vis;
        let ident = f.ident;
        let ty = &f.field.ty;
        let [field_mut, set_field, column, column_mut] = &f.names;
        quote! { { #k, #fvis #ident: #ty, #field_mut, #set_field, #column, #column_mut } }
    });
    // Declared as a level component (kept outside the stores): it must be `Pod`, and the
    // manager spawns and saves it (the logic is `sigecs_level`'s, written once).
    let level = options.level.as_ref().map(|r| {
        let check = crate::expand::level_check(row, r);
        quote! {
            const _: () = {
                #check
                impl ::sigecs_level::OutsideStores for #manager {
                    fn takes(&self, registration: &::sigecs_level::Registration) -> bool {
                        ::sigecs_level::__private::takes_soa(self, registration)
                    }
                    fn prepare(
                        &mut self,
                        spawn: &::sigecs_level::OutsideSpawn<'_>,
                    ) -> ::core::result::Result<(), ::sigecs_level::LevelError> {
                        ::sigecs_level::__private::prepare_soa(self, spawn)
                    }
                    fn write(&mut self, spawn: &::sigecs_level::OutsideSpawn<'_>) {
                        ::sigecs_level::__private::write_soa(self, spawn)
                    }
                    fn save(
                        &self,
                        save: &mut ::sigecs_level::OutsideSave<'_>,
                    ) -> ::core::result::Result<(), ::sigecs_level::LevelError> {
                        ::sigecs_level::__private::save_soa(self, save)
                    }
                }
            };
        }
    });
    Ok(quote! {
        #level
        ::sigecs::soa::__soa_manager! {
            #[doc = #doc]
            manager: #vis #manager,
            row: #row,
            columns: #columns, #columns_mut,
            lookup: #lookup,
            fields: [#(#field_specs)*]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(src: &str) -> String {
        let input: TokenStream = src.parse().expect("test input tokenizes");
        expand(input).to_string()
    }

    fn assert_error(src: &str, needles: &[&str]) {
        let out = expand_str(src);
        assert!(
            out.contains("compile_error"),
            "expected an error for {src}, got {out}"
        );
        for needle in needles {
            assert!(out.contains(needle), "missing `{needle}` in {out}");
        }
    }

    #[test]
    fn valid_struct_invokes_the_runtime_macro() {
        let out = expand_str(
            "#[soa(manager = \"PointMassManager\", lookup = \"dense\")] \
             pub struct PointMass { pub mass: f32, pub(crate) position: Vec3, r#type: u8 }",
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains(":: sigecs :: soa :: __soa_manager !"), "{out}");
        assert!(out.contains("manager : pub PointMassManager"), "{out}");
        assert!(out.contains(":: sigecs :: soa :: DenseLookup"), "{out}");
        assert!(
            out.contains(
                "{ 0 , pub mass : f32 , mass_mut , set_mass , mass_column , mass_column_mut }"
            ),
            "{out}"
        );
        assert!(out.contains("{ 1 , pub (crate) position : Vec3 ,"), "{out}");
        assert!(
            out.contains("r#type : u8 , type_mut , set_type , type_column"),
            "{out}"
        );
        assert!(
            out.contains("columns : PointMassColumns , PointMassColumnsMut"),
            "{out}"
        );
    }

    #[test]
    fn defaults_are_a_hash_lookup_and_a_manager_suffix() {
        let out = expand_str("struct Tag;");
        assert!(out.contains("manager : TagManager"), "{out}");
        assert!(out.contains(":: sigecs :: soa :: HashLookup"), "{out}");
        assert!(out.contains("fields : []"), "{out}");
    }

    #[test]
    fn invalid_shapes_are_spanned_errors() {
        assert_error("struct P(f32, f32);", &["needs named fields"]);
        assert_error("enum P { A }", &["not an enum"]);
        assert_error("union P { a: u32 }", &["not a union"]);
        assert_error("struct P<T> { a: T }", &["generic"]);
        assert_error("struct P where u8: Copy { a: u8 }", &["generic"]);
        assert_error("struct P { #[soa(x)] a: u8 }", &["no field options"]);
        let many: Vec<String> = (0..17).map(|i| format!("f{i}: u8")).collect();
        assert_error(
            &format!("struct P {{ {} }}", many.join(", ")),
            &["at most 16"],
        );
    }

    #[test]
    fn invalid_options_are_spanned_errors() {
        assert_error(
            "#[soa(mnager = \"M\")] struct P { a: u8 }",
            &["unknown soa option `mnager`"],
        );
        assert_error(
            "#[soa(lookup = \"btree\")] struct P { a: u8 }",
            &["unknown lookup `btree`"],
        );
        assert_error(
            "#[soa(manager = \"not a name\")] struct P { a: u8 }",
            &["not an identifier"],
        );
        assert_error(
            "#[soa(manager = M)] struct P { a: u8 }",
            &["expected string literal"],
        );
        assert_error(
            "#[soa(lookup = \"hash\")] #[soa(lookup = \"dense\")] struct P { a: u8 }",
            &["given twice"],
        );
        assert_error(
            "#[soa(manager = \"P\")] struct P { a: u8 }",
            &["the component's name"],
        );
        assert_error(
            "#[soa(manager = \"PColumns\")] struct P { a: u8 }",
            &["taken by the generated columns type"],
        );
        assert_error(
            "#[soa(level = \"a b\")] struct P { a: u8 }",
            &["invalid level name"],
        );
        assert_error(
            "#[soa(spawn_order = 1)] struct P { a: u8 }",
            &["level option"],
        );
        assert_error(
            "#[soa(level = \"p\", level = \"q\")] struct P { a: u8 }",
            &["`level` is given twice"],
        );
    }

    #[test]
    fn a_level_struct_is_checked_registrable_beside_its_manager() {
        let out =
            expand_str("#[soa(level = \"heat\", spawn_order = 2)] pub struct Heat { pub c: f32 }");
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains(":: sigecs_level :: Registration :: pod :: < Heat >"),
            "{out}"
        );
        assert!(
            out.contains("impl :: sigecs_level :: OutsideStores for HeatManager"),
            "{out}"
        );
        assert!(out.contains(":: sigecs :: soa :: __soa_manager !"), "{out}");
        let plain = expand_str("pub struct Heat { pub c: f32 }");
        assert!(
            !plain.contains("Registration") && !plain.contains("sigecs_level"),
            "{plain}"
        );
    }

    #[test]
    fn colliding_names_are_reported_all_at_once() {
        let out = expand_str("struct P { len: u8, a: u8, a_mut: u8, #[soa] b: u8 }");
        assert!(
            out.contains("`len`, which is already a manager method"),
            "{out}"
        );
        assert!(
            out.contains("`a_mut`, which is already generated for field `a`"),
            "{out}"
        );
        assert!(out.contains("no field options"), "{out}");
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
    }

    #[test]
    fn garbage_input_does_not_panic() {
        assert_error("fn f() {}", &["compile_error"]);
    }
}
