//! `#[derive(SoaManager)]`: work in progress.
pub fn expand(_input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    proc_macro2::TokenStream::new()
}
