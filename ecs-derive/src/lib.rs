//! sigecs proc macros.
mod soa;

/// Generates a structure-of-arrays component manager from a struct declaration (seed part 2).
#[proc_macro_derive(SoaManager, attributes(soa))]
pub fn derive_soa_manager(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    soa::expand(input.into()).into()
}
