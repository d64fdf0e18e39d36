//! Generates sigecs' worlds, one per workload, from the declarations in `src/sigecs_worlds/`.

use ecs_codegen::Builder;

fn main() {
    for world in [
        "simple_insert",
        "simple_iter",
        "frag_iter",
        "heavy_compute",
        "schedule",
        "add_remove",
    ] {
        Builder::new()
            .scan(
                format!("src/sigecs_worlds/{world}.rs"),
                &format!("crate::sigecs_worlds::{world}"),
            )
            .out_file(&format!("{world}.rs"))
            .generate_or_exit();
    }
}
