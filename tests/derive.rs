//! Compile tests for the declaration macros (`#[derive(Component)]`, `#[derive(Signature)]`,
//! `#[derive(Resource)]`, `#[system]`): valid declarations compile, and each invalid one fails
//! with its message spanned on the offending token (see the `.stderr` files).
//!
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test derive`.

#[cfg_attr(miri, ignore)]
#[test]
fn derive() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
