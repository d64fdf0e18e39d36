//! The generator: turns a [`Model`] into the Rust source of a world.
//!
//! The generated file holds only what needs static types (prost's rule): the model's tables as
//! data (`tables`: components, stores and their slots, systems, the schedule), the row
//! structs of `rows` signatures, the trait impls that tie the declared types to their ids, the
//! `World` wrapper (`world`) and one typed pass per system and per stage (`passes`).
//! Everything else — spawning, moves, queries, statistics, invariants — is `sigecs`'s, once.
//!
//! Every item lives in a module of its own, `sigecs_world`, re-exported with a glob import:
//! code next to the `include!` sees the public API only, never the world's internals.

pub mod levels;
mod passes;
pub use passes::TABLE_FROM;
mod tables;
mod world;

use crate::analyze::{name, Analysis, Signature};
use crate::decl::LayoutDecl;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

/// `PointMass` → `point_mass`, `ABZst` → `ab_zst`, `HTTPServer` → `http_server`: a word starts
/// at an uppercase letter that follows a lowercase one, or that precedes a lowercase one after
/// an uppercase run.
pub fn snake_case(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
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

/// True for words that cannot be an identifier (strict and reserved keywords, any edition).
pub fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
            | "union"
            | "_"
    )
}

/// The field of the generated `Resources` struct for each resource: its name in snake case,
/// with `_` appended to a keyword (`Type` → `type_`) and the resource index appended when two
/// resources' names snake-case alike (`HTTPServer`, `HttpServer` → `http_server`,
/// `http_server_1`).
pub fn resource_fields(analysis: &Analysis) -> Vec<Ident> {
    let mut taken = std::collections::HashSet::new();
    analysis
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut name = snake_case(&r.ident.to_string());
            if is_keyword(&name) {
                name.push('_');
            }
            if !taken.insert(name.clone()) {
                name = format!("{name}_{i}");
                taken.insert(name.clone());
            }
            ident(&name)
        })
        .collect()
}

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

fn doc(text: String) -> TokenStream {
    quote!(#[doc = #text])
}

/// The generated row struct of a `rows` signature (its hot components).
fn row_type(sig: &Signature) -> Ident {
    format_ident!("{}Row", sig.ident.to_string().trim_start_matches("r#"))
}

/// The generated struct of a `rows` signature's cold components.
fn cold_type(sig: &Signature) -> Ident {
    format_ident!("{}Cold", sig.ident.to_string().trim_start_matches("r#"))
}

/// Where a component lives in a rows store.
fn is_cold(analysis: &Analysis, sig: &Signature, id: usize) -> bool {
    sig.layout == LayoutDecl::Rows && analysis.components[id].cold
}

/// The fields of a `rows` signature in its hot (`cold == false`) or cold part.
fn part_fields(analysis: &Analysis, sig: &Signature, cold: bool) -> Vec<(Ident, usize)> {
    sig.fields
        .iter()
        .filter(|(_, id)| is_cold(analysis, sig, *id) == cold)
        .cloned()
        .collect()
}

/// The name of the module that holds the generated items.
pub const MODULE: &str = "sigecs_world";

/// The complete generated file, as tokens.
pub fn generate(analysis: &Analysis, table_from: usize) -> TokenStream {
    let tables = tables::generate(analysis);
    let world = world::generate(analysis);
    let passes = passes::generate(analysis, table_from);
    let levels = levels::generate(analysis);
    file(quote!(#tables #world #passes #levels))
}

/// The file around the module's items.
fn file(items: TokenStream) -> TokenStream {
    let module = ident(MODULE);
    quote! {
        /// The generated world: the tables of its model, its row structs and its system
        /// passes. Everything public here is re-exported below.
        #[allow(clippy::all, dead_code, unused_variables, unused_mut, unused_parens, non_upper_case_globals)]
        mod #module {
            #items
        }
        pub use self::#module::*;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(snake_case("r#Type"), "type");
        assert_eq!(snake_case("PointXY"), "point_xy", "a run ending the name");
        assert_eq!(snake_case("Body2D"), "body2_d");
    }

    #[test]
    fn keywords_are_keywords() {
        for k in [
            "crate", "box", "move", "type", "match", "self", "Self", "async", "gen",
        ] {
            assert!(is_keyword(k), "{k}");
        }
        assert!(!is_keyword("time") && !is_keyword("matches"));
    }
}
