// build.rs
//! Generates the world from the declarations in `src/components/`.
fn main() {
    sigecs_build::Builder::new()
        .scan("src/components", "crate::components")
        .generate_or_exit();
}
