//! Generates the bundled world from `components/`, the benchmark fixture worlds from
//! `benches/worlds/`, and the integration tests' fixture world from `tests/worlds/`.

use ecs_codegen::Builder;

fn main() {
    Builder::new()
        .scan("components", "crate::components")
        .generate_or_exit();

    let simple_iter = "crate::bench_worlds::simple_iter";
    for layout in ["columns", "rows"] {
        Builder::new()
            .scan("benches/worlds/simple_iter/mod.rs", simple_iter)
            .scan(
                format!("benches/worlds/simple_iter/{layout}.rs"),
                &format!("{simple_iter}::{layout}"),
            )
            .out_file(&format!("simple_iter_{layout}.rs"))
            .generate_or_exit();
    }

    for world in ["add_remove", "frag_iter", "schedule"] {
        Builder::new()
            .scan(
                format!("benches/worlds/{world}.rs"),
                &format!("crate::bench_worlds::{world}"),
            )
            .out_file(&format!("{world}.rs"))
            .generate_or_exit();
    }

    // heavy_compute reuses simple_iter's components and its columns signature.
    Builder::new()
        .scan("benches/worlds/simple_iter/mod.rs", simple_iter)
        .scan(
            "benches/worlds/simple_iter/columns.rs",
            &format!("{simple_iter}::columns"),
        )
        .scan(
            "benches/worlds/heavy_compute.rs",
            "crate::bench_worlds::heavy_compute",
        )
        .out_file("heavy_compute.rs")
        .generate_or_exit();

    Builder::new()
        .scan("tests/worlds/fixture.rs", "crate::fixture")
        .out_file("fixture_world.rs")
        .generate_or_exit();

    Builder::new()
        .scan("tests/worlds/sched.rs", "crate::sched")
        .out_file("sched_world.rs")
        .generate_or_exit();
}
