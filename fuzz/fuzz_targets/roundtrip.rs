//! JSON text → compile → verify → decode → re-encode. Whatever compiles must verify, decode to
//! values that the writer encodes back to the very same bytes, and be consistent throughout.
#![no_main]

use ecs_core::resource::{verify, AnySet, EntityCompiler, VerifyOptions};
use libfuzzer_sys::fuzz_target;

#[path = "../../ecs-core/tests/resource_common/mod.rs"]
mod resource_common;
use resource_common::*;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let registry = registry();
    let Ok(blob) = EntityCompiler::new(&registry).compile_str(text) else {
        return;
    };
    let res = verify(
        &blob[..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap_or_else(|e| panic!("a compiled blob was refused: {e}"));
    assert_consistent(&res);
    let models = read_back(&res).expect("decodes");
    let again = write_models(&registry, &models).expect("re-encodes");
    assert_eq!(again, blob, "decode → re-encode changed the bytes");
});
