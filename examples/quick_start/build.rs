// build.rs
fn main() {
    ecs_codegen::Builder::new()
        .scan("src/components", "crate::components")
        .generate_or_exit();
}
