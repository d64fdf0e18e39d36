//! Arbitrary bytes → verify against the bundled world → spawn → save. Whatever verifies must
//! spawn (atomically, into empty and non-empty worlds, with and without a transform manager) to
//! a world that passes `check_invariants`, and save back to a blob that verifies; nothing may
//! panic. Each input is tried as given and with its checksum fixed up. The checks live in
//! `tests/resource_fuzz/mod.rs`, which `tests/resource_corpus.rs` replays on the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/resource_fuzz/mod.rs"]
mod resource_fuzz;

fuzz_target!(|data: &[u8]| {
    resource_fuzz::spawn_bytes(data);
});
