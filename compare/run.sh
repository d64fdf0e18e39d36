#!/usr/bin/env bash
# Runs the comparison suite: the consistency test, every benchmark, then the report
# (results.md, results.png and the tables in docs/comparison.md). Arguments go to criterion, e.g.
# `compare/run.sh frag_iter` runs only that group (the report then shows the others' last
# results).
set -euo pipefail
cd "$(dirname "$0")"
# 2-core machines shared with other work: one compiler job at a time unless told otherwise.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
cargo test --release --test consistency
cargo bench --bench compare -- "$@"
cargo run --release --bin report
