//! JSON level → compile → verify against the bundled world → spawn → save: whatever compiles
//! and verifies must spawn, and saving the spawned entities must give the blob back byte for
//! byte. The checks live in `tests/level_fuzz/mod.rs`, which `tests/level_corpus.rs`
//! replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/level_fuzz/mod.rs"]
mod level_fuzz;

fuzz_target!(|data: &[u8]| {
    level_fuzz::level_roundtrip(data);
});
