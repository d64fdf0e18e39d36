//! Arbitrary bytes → verify against the bundled world → spawn → save. Whatever verifies must
//! spawn (atomically, into empty and non-empty worlds, with and without a transform manager) to
//! a world that passes `check_invariants`, and save back to a blob that verifies; nothing may
//! panic. Each input is tried as given and with its checksum fixed up. The checks live in
//! `tests/level_fuzz/mod.rs`, which `tests/level_corpus.rs` replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/level_fuzz/mod.rs"]
mod level_fuzz;

fuzz_target!(|data: &[u8]| {
    level_fuzz::spawn_bytes(data);
});
