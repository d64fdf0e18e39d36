//! Level registrations: one `Registration` per component declared with
//! `#[component(level = "name")]`, and one per `#[derive(SoaManager)]` struct declared with
//! `#[soa(level = "name")]` (kept outside the stores), as a list in `level_registry()`. The
//! registry's logic (checks, lookups, the built-in `local_transform`) is
//! `sigecs_level::Registry`'s; the generated code is only the list, naming `::sigecs_level`
//! paths. Nothing is generated when no component opts in, so a world without levels never
//! compiles the `sigecs-level` crate.

use super::*;
use crate::decl::{ComponentDecl, LevelEncoding, SoaDecl};
use crate::diagnostic::Diagnostic;
use crate::scan::Found;
use std::collections::HashMap;

/// FNV-1a 64 of a level name: `sigecs_level::component_identifier`, computed here too
/// so that two names with one identifier are a build error at their declaration.
fn identifier(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Whole-crate checks of the level names of components and of SoA-managed structs: each is
/// used by one type, `local_transform` is the runtime's own, and no two names share an
/// identifier.
pub fn check(comps: &[Found<ComponentDecl>], soa: &[Found<SoaDecl>], diags: &mut Vec<Diagnostic>) {
    let mut by_name: HashMap<String, String> = HashMap::new();
    let mut by_id: HashMap<u64, String> = HashMap::new();
    let declared = comps
        .iter()
        .map(|f| (&f.file, &f.decl.ident, &f.decl.level))
        .chain(soa.iter().map(|f| (&f.file, &f.decl.ident, &f.decl.level)));
    for (file, ident, r) in declared {
        let Some(r) = r else { continue };
        if r.name == "local_transform" {
            diags.push(
                Diagnostic::at(file, r.span, "level name \"local_transform\" is reserved")
                    .with_help(
                        "it is the transform hierarchy's local matrix, registered by sigecs; \
                         choose another name",
                    ),
            );
            continue;
        }
        if let Some(other) = by_name.get(&r.name) {
            diags.push(
                Diagnostic::at(
                    file,
                    r.span,
                    format!(
                        "level name \"{}\" is used by `{other}` and `{}`",
                        r.name, ident
                    ),
                )
                .with_help("a level name picks one component type in a level; rename one"),
            );
            continue;
        }
        let id = identifier(&r.name);
        if let Some(other) = by_id.get(&id) {
            diags.push(
                Diagnostic::at(
                    file,
                    r.span,
                    format!(
                        "level names \"{other}\" and \"{}\" hash to the same identifier {id:#018x}",
                        r.name
                    ),
                )
                .with_help("rename one of them"),
            );
            continue;
        }
        by_name.insert(r.name.clone(), ident.to_string());
        by_id.insert(id, r.name.clone());
    }
}

pub(super) fn generate(model: &Analysis) -> TokenStream {
    let registrations: Vec<TokenStream> = model
        .components
        .iter()
        .filter_map(|c| {
            let r = c.level.as_ref()?;
            let (path, name) = (&c.path, &r.name);
            let mut reg = match r.encoding {
                LevelEncoding::Pod => {
                    quote!(::sigecs_level::Registration::pod::<#path>(#name))
                }
                LevelEncoding::Serde => {
                    quote!(::sigecs_level::Registration::serde::<#path>(#name))
                }
                // A struct without fields: `#path {}` makes one, whichever way it is written.
                LevelEncoding::Tag => {
                    quote!(::sigecs_level::Registration::tag::<#path>(#name, || #path {}))
                }
            };
            if r.spawn_order != 0 {
                let order = r.spawn_order;
                reg = quote!(#reg.spawn_order(#order));
            }
            if r.map_entities {
                reg = quote!(#reg.map_entities::<#path>());
            }
            Some(reg)
        })
        .chain(model.kept_outside.iter().map(|k| {
            // A struct of a `#[derive(SoaManager)]` manager: plain old data, spawned and saved
            // by the manager (its `OutsideStores` implementation), not by the stores.
            let (path, name) = (&k.path, &k.level.name);
            let mut reg = quote!(::sigecs_level::Registration::pod::<#path>(#name).kept_outside());
            if k.level.spawn_order != 0 {
                let order = k.level.spawn_order;
                reg = quote!(#reg.spawn_order(#order));
            }
            reg
        }))
        .collect();
    if registrations.is_empty() {
        return TokenStream::new();
    }
    quote! {
        /// The components that levels and prefabs may hold: those declared
        /// with `#[component(level = "…")]`, plus the transform hierarchy's
        /// `local_transform`. Built once.
        pub fn level_registry() -> &'static ::sigecs_level::Registry {
            static REGISTRY: ::std::sync::OnceLock<::sigecs_level::Registry> = ::std::sync::OnceLock::new();
            REGISTRY.get_or_init(|| ::sigecs_level::Registry::generated([#(#registrations),*]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::identifier;

    #[test]
    fn identifier_is_fnv1a_64() {
        // The FNV-1a 64 test vectors.
        assert_eq!(identifier(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(identifier("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
