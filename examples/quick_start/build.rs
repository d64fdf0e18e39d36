// build.rs
fn main() {
    sigecs_build::Builder::new()
        .scan("src/components", "crate::components")
        .generate_or_exit();
}
