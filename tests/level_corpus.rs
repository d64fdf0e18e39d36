//! Replays the committed corpus of the spawn fuzz targets (`fuzz/corpus/spawn/`,
//! `fuzz/corpus/level_roundtrip/`) as a normal test: no input may panic, and the seeds that
//! must spawn do.

mod level_fuzz;

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
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
fn spawn_corpus() {
    let files = corpus("spawn");
    assert!(!files.is_empty());
    let mut spawned = 0;
    for (path, bytes) in &files {
        let n = level_fuzz::spawn_bytes(bytes);
        if path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("seed-")
        {
            assert!(n > 0, "{} does not spawn", path.display());
        }
        spawned += n;
    }
    assert!(spawned > 0);
}

#[test]
fn level_roundtrip_corpus() {
    let files = corpus("level_roundtrip");
    assert!(!files.is_empty());
    for (path, bytes) in &files {
        let ok = level_fuzz::level_roundtrip(bytes);
        if path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("seed-")
        {
            assert!(ok, "{} does not spawn", path.display());
        }
    }
}

/// The spawn target's `seed-*.bin` blobs are the level_roundtrip target's `seed-*.json` levels
/// compiled, so a change to a component's encoding cannot leave stale seeds behind:
/// `UPDATE_SEEDS=1 cargo test --test level_corpus` rewrites them.
#[test]
fn spawn_seeds_are_the_json_seeds_compiled() {
    use sigecs_level::EntityCompiler;
    let compiler = EntityCompiler::new(level_fuzz::registry());
    let mut checked = 0;
    for (path, bytes) in corpus("spawn") {
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(stem) = name
            .strip_prefix("seed-")
            .and_then(|n| n.strip_suffix(".bin"))
        else {
            continue;
        };
        let json = path
            .parent()
            .unwrap()
            .join(format!("../level_roundtrip/seed-{stem}.json"));
        let json =
            std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{}: {e}", json.display()));
        let compiled = compiler.compile_str(&json).unwrap();
        if std::env::var_os("UPDATE_SEEDS").is_some() {
            std::fs::write(&path, &compiled).unwrap();
        } else {
            assert!(
                compiled == bytes,
                "{} is stale: run UPDATE_SEEDS=1 cargo test --test level_corpus",
                path.display()
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 5, "the five seeds of the spawn target");
}
