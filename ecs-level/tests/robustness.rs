//! Every single-bit flip and every truncation of a small compiled blob is an `Err` or a
//! consistent level, never a panic — both with the checksum left alone (flips are caught
//! there) and resealed after each flip, so the structural checks behind it are exercised too.

mod common;

use common::*;
use sigecs_level::{reseal, verify, EntityCompiler, LevelError, Registration, VerifyOptions};

fn small_blob() -> Vec<u8> {
    let registry = registry();
    EntityCompiler::new(&registry)
        .compile(&to_json(&sample_models()))
        .unwrap()
}

/// Verifies with a signature check that refuses one set, so that path runs too.
fn run(bytes: &[u8], refuse_unknown: bool) -> Result<(), LevelError> {
    let registry = registry();
    let options = if refuse_unknown {
        VerifyOptions::default().refuse_unknown()
    } else {
        VerifyOptions::default()
    };
    let res = verify(
        bytes,
        &registry,
        |set: &[&Registration]| {
            if set.len() > 5 {
                Err("too many components".to_string())
            } else {
                Ok(set.len() as u32)
            }
        },
        &options,
    )?;
    assert_consistent(&res);
    Ok(())
}

#[test]
fn every_bit_flip() {
    let blob = small_blob();
    assert!(
        blob.len() < 1024,
        "the blob stays small: {} bytes",
        blob.len()
    );
    let (mut ok_raw, mut ok_sealed, mut err_sealed) = (0, 0, 0);
    for bit in 0..blob.len() * 8 {
        let mut b = blob.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        // Without resealing no flip passes: CRC-32 detects every single-bit error in the body,
        // and every header field is checked on its own.
        if run(&b, false).is_ok() {
            ok_raw += 1;
        }
        reseal(&mut b);
        for refuse in [false, true] {
            match run(&b, refuse) {
                Ok(()) => ok_sealed += 1,
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    err_sealed += 1
                }
            }
        }
    }
    assert_eq!(ok_raw, 0, "every raw flip is caught");
    // Flips in float payloads and the like stay valid; flips in structure are refused.
    assert!(
        ok_sealed > 0 && err_sealed > 0,
        "ok {ok_sealed}, err {err_sealed}"
    );
}

#[test]
fn every_truncation_and_extension() {
    let blob = small_blob();
    for len in 0..blob.len() {
        assert!(run(&blob[..len], false).is_err(), "truncated to {len}");
        // Also with the header's length and checksum fixed up to claim the short blob is whole.
        let mut b = blob[..len].to_vec();
        if b.len() >= 20 {
            b[16..20].copy_from_slice(&(len as u32).to_le_bytes());
        }
        reseal(&mut b);
        let _ = run(&b, false);
    }
    for extra in 1..=16 {
        let mut b = blob.clone();
        b.resize(blob.len() + extra, 0);
        assert!(run(&b, false).is_err());
        let len = b.len() as u32;
        b[16..20].copy_from_slice(&len.to_le_bytes());
        reseal(&mut b);
        assert!(run(&b, false).is_err(), "{extra} trailing bytes");
    }
    run(&blob, false).unwrap();
}

#[test]
fn every_byte_value_at_every_structural_offset() {
    // Beyond single bits: each of the first 64 body bytes takes interesting values.
    let blob = small_blob();
    for at in 32..(blob.len().min(96)) {
        for v in [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff] {
            let mut b = blob.clone();
            b[at] = v;
            reseal(&mut b);
            let _ = run(&b, false);
        }
    }
}
