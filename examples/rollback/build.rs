//! Generates the game's world from `src/components/`, opted in to world states.

fn main() {
    sigecs_build::Builder::new()
        .scan("src/components", "crate::components")
        .rollback(true)
        // `recover` runs over stunned ships only, whose set no signature declares on purpose.
        .warn_dynamic_only(false)
        .generate_or_exit();
}
