//! Arbitrary bytes → verify. The verifier must return `Err` or a level that is consistent in
//! every way a spawner relies on (checked by `assert_consistent`), never panic. Each input is
//! tried as given and with its checksum fixed up, so mutations reach the structural checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sigecs_level::{reseal, verify, Registration, VerifyOptions};

#[path = "../../ecs-level/tests/common/mod.rs"]
mod level_common;
use level_common::*;

fuzz_target!(|data: &[u8]| {
    let registry = registry();
    let mut sealed = data.to_vec();
    reseal(&mut sealed);
    for bytes in [data, &sealed[..]] {
        for options in [
            VerifyOptions::default(),
            VerifyOptions::default().refuse_unknown(),
        ] {
            let signatures = |set: &[&Registration]| {
                if set.len() > 6 {
                    Err("too many components".to_string())
                } else {
                    Ok(set.len() as u32)
                }
            };
            if let Ok(res) = verify(bytes, &registry, signatures, &options) {
                assert_consistent(&res);
            }
        }
    }
});
