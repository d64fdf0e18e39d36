//! Generates the world from the declarations in `src/components/` into `OUT_DIR/world.rs`.

fn main() {
    sigecs_build::Builder::new()
        .scan("src/components", "crate::components")
        .generate_or_exit();
}
