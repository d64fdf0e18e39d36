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
mod state;
mod tables;
mod world;

use crate::analyze::{name, set_constant, Analysis, Signature};
use crate::decl::LayoutDecl;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

pub use crate::rules::{is_keyword, snake_case};

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

/// A doc comment of `text`, as `///` lines of at most [`DOC_WIDTH`] characters (a generated
/// item is at most a few blocks deep, so its docs stay within the printer's width). Each line
/// starts with a space, as a written `/// ` comment's does.
fn doc(text: String) -> TokenStream {
    let lines = wrap(&text, DOC_WIDTH)
        .into_iter()
        .map(|line| format!(" {line}"));
    quote!(#(#[doc = #lines])*)
}

/// The width of a generated doc comment's text.
const DOC_WIDTH: usize = 80;

/// `text`'s words in lines of at most `width` characters (a longer word on a line of its own).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The attribute that carries a `// SAFETY:` comment to the printer:
/// `#[__sigecs_safety = "why"]` right before a statement holding an `unsafe` block or before an
/// `unsafe impl`. Tokens hold no comments, so the generator, which knows why each `unsafe` it
/// emits is sound, attaches the reason where it emits it, and the printer writes it as the
/// comment (the attribute never reaches the file).
pub(crate) const SAFETY: &str = "__sigecs_safety";

/// The `// SAFETY:` comment `why` for the `unsafe` that follows (see [`SAFETY`]).
fn safety(why: &str) -> TokenStream {
    let marker = ident(SAFETY);
    quote!(#[#marker = #why])
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
fn row_fields(analysis: &Analysis, sig: &Signature, cold: bool) -> Vec<(Ident, usize)> {
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
    let state = state::generate(analysis);
    file(quote!(#tables #world #passes #levels #state))
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
