//! Generates the sigecs world of the save_restore workload (`src/sigecs_rollback.rs`): the
//! other workloads run this repository's fixture worlds, none of which is built to save its
//! state with simple_iter's components.

use sigecs_build::Builder;

fn main() {
    Builder::new()
        .scan("src/sigecs_rollback.rs", "crate::sigecs_rollback")
        .rollback(true)
        .out_file("sigecs_rollback.rs")
        .generate_or_exit();
}
