//! Levels → compile → verify → decode → re-encode. Whatever compiles must verify, decode to
//! values that the writer encodes back to the very same bytes, and be consistent throughout.
//!
//! Two kinds of input: JSON text (any input not starting with a zero byte), which mostly
//! exercises the compiler's error paths, and, after a leading zero byte, bytes that
//! `arbitrary` turns into entities (finite floats, any strings and integers, a random forest),
//! which must compile and read back equal to what was generated.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use sigecs_level::{verify, AnySet, EntityCompiler, Registry, VerifyOptions};

#[path = "../../ecs-level/tests/common/mod.rs"]
mod level_common;
use level_common::*;

fn finite(u: &mut Unstructured<'_>) -> Result<f32> {
    let v: f32 = u.arbitrary()?;
    Ok(if v.is_finite() { v } else { 0.0 })
}

fn vec3(u: &mut Unstructured<'_>) -> Result<(f32, f32, f32)> {
    Ok((finite(u)?, finite(u)?, finite(u)?))
}

fn models(u: &mut Unstructured<'_>) -> Result<Vec<EntityModel>> {
    let n = u.int_in_range(0..=48usize)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let parent = if i > 0 && u.arbitrary()? {
            Some(u.int_in_range(0..=i - 1)? as u32)
        } else {
            None
        };
        let mut e = EntityModel {
            parent,
            ..Default::default()
        };
        if u.arbitrary()? {
            let (x, y, z) = vec3(u)?;
            e.position = Some(Position { x, y, z });
        }
        if u.arbitrary()? {
            let (x, y, z) = vec3(u)?;
            e.velocity = Some(Velocity { x, y, z });
        }
        if u.arbitrary()? {
            e.health = Some(Health {
                hp: u.arbitrary()?,
                max: u.arbitrary()?,
            });
        }
        if u.arbitrary()? {
            e.marker = Some(Marker);
        }
        if u.arbitrary()? {
            e.name = Some(Name(u.arbitrary()?));
        }
        if u.arbitrary()? {
            e.inventory = Some(Inventory {
                items: u.arbitrary()?,
                gold: u.arbitrary()?,
            });
        }
        if u.arbitrary()? {
            e.kind = Some(match u.int_in_range(0..=2u8)? {
                0 => Kind::Static,
                1 => Kind::Dynamic { mass: finite(u)? },
                _ => Kind::Scripted(u.arbitrary()?),
            });
        }
        out.push(e);
    }
    // Half the time, reverse the indices so that children come before their parents.
    if u.arbitrary()? {
        out.reverse();
        for e in &mut out {
            e.parent = e.parent.map(|p| n as u32 - 1 - p);
        }
    }
    Ok(out)
}

fn round_trip(registry: &Registry, blob: &[u8]) -> Vec<EntityModel> {
    let res = verify(blob, registry, AnySet::default(), &VerifyOptions::default())
        .unwrap_or_else(|e| panic!("a compiled blob was refused: {e}"));
    assert_consistent(&res);
    let models = read_back(&res).expect("decodes");
    let again = write_models(registry, &models).expect("re-encodes");
    assert_eq!(again, blob, "decode → re-encode changed the bytes");
    models
}

fuzz_target!(|data: &[u8]| {
    let registry = registry();
    if let Some((0, rest)) = data.split_first() {
        let Ok(generated) = models(&mut Unstructured::new(rest)) else {
            return;
        };
        let blob = EntityCompiler::new(&registry)
            .compile(&to_json(&generated))
            .unwrap_or_else(|e| panic!("a generated level did not compile: {e}"));
        assert_eq!(
            round_trip(&registry, &blob),
            generated,
            "read back differs from the level"
        );
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(blob) = EntityCompiler::new(&registry).compile_str(text) else {
        return;
    };
    round_trip(&registry, &blob);
});
