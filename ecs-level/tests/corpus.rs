//! Replays the committed cargo-fuzz corpus (`fuzz/corpus/`) as a normal test: every `verify`
//! input goes through the verifier (as given and with its checksum fixed up), every `roundtrip`
//! JSON input through compile → verify → decode → re-encode, and nothing may panic. (Roundtrip
//! inputs that start with a zero byte are the fuzz target's `arbitrary`-generated levels; they
//! are not JSON and only the fuzz target replays them.)

mod common;

use std::path::PathBuf;

use common::*;
use sigecs_level::{reseal, verify, EntityCompiler, Registration, VerifyOptions};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn verify_corpus() {
    let registry = registry();
    let files = corpus("verify");
    assert!(!files.is_empty());
    let mut ok = 0;
    for (path, bytes) in &files {
        // As the fuzz target does: verify as given, then with the checksum fixed up.
        let mut sealed = bytes.clone();
        reseal(&mut sealed);
        for b in [&bytes[..], &sealed[..]] {
            for options in [
                VerifyOptions::default(),
                VerifyOptions::default().refuse_unknown(),
            ] {
                let signatures = |set: &[&Registration]| {
                    if set.len() > 6 {
                        Err("too many".to_string())
                    } else {
                        Ok(set.len() as u32)
                    }
                };
                if let Ok(res) = verify(b, &registry, signatures, &options) {
                    assert_consistent(&res);
                    ok += 1;
                }
            }
        }
        let _ = path;
    }
    assert!(ok > 0, "the corpus holds some valid blobs");
}

#[test]
fn roundtrip_corpus() {
    let registry = registry();
    let files = corpus("roundtrip");
    assert!(!files.is_empty());
    let mut compiled = 0;
    for (path, bytes) in &files {
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        let Ok(blob) = EntityCompiler::new(&registry).compile_str(text) else {
            continue;
        };
        let res = verify(
            &blob[..],
            &registry,
            sigecs_level::AnySet::default(),
            &VerifyOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{}: compiled blob refused: {e}", path.display()));
        assert_consistent(&res);
        let models = read_back(&res).unwrap();
        assert_eq!(
            write_models(&registry, &models).unwrap(),
            blob,
            "{}",
            path.display()
        );
        compiled += 1;
    }
    assert!(compiled > 0, "the corpus holds some valid levels");
}
