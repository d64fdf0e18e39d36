//! The level subcommands: `compile`, `inspect` and `save`.

use crate::{levels::*, options::*, population::*};
use sigecs::ecs_core::level::{EntityCompiler, LevelReport, VerifyOptions};
use sigecs::ecs_core::transform::TransformManager;
use sigecs::{level_registry, World};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The value of `-o FILE` among `args`, and the other arguments.
pub(crate) fn take_output(args: Vec<String>) -> Result<(PathBuf, Vec<String>), String> {
    let mut out = None;
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "-o" || a == "--output" {
            out = Some(it.next().ok_or("-o needs a file name")?);
        } else if let Some(v) = a.strip_prefix("--output=") {
            out = Some(v.to_string());
        } else {
            rest.push(a);
        }
    }
    Ok((out.ok_or("missing -o OUTPUT")?.into(), rest))
}

/// `sigecs compile LEVEL.json -o LEVEL.bin`.
pub(crate) fn compile_cmd(args: Vec<String>) -> Result<(), String> {
    let (out, rest) = take_output(args)?;
    let [input] = rest.as_slice() else {
        return Err("compile takes one input file".into());
    };
    let text = std::fs::read_to_string(input).map_err(|e| format!("{input}: {e}"))?;
    let t = Instant::now();
    let blob = EntityCompiler::new(level_registry())
        .compile_str(&text)
        .map_err(|e| format!("{input}: {e}"))?;
    let took = t.elapsed();
    let level = World::new()
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .map_err(|e| format!("{input}: {e}"))?;
    std::fs::write(&out, &blob).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "{input} -> {}: {} entities, {} bytes (compiled in {took:.2?})",
        out.display(),
        level.num_entities(),
        blob.len()
    );
    Ok(())
}

/// `sigecs inspect LEVEL`.
pub(crate) fn inspect_cmd(args: Vec<String>) -> Result<(), String> {
    let [input] = args.as_slice() else {
        return Err("inspect takes one file".into());
    };
    let level = load_level(Some(Path::new(input)))?;
    println!("{}", LevelReport::of(&level));
    let world = World::new();
    let stats = world.stats();
    println!("per signature:");
    for (store, count) in level.store_counts() {
        println!(
            "  {:<12} {:>8} entities",
            stats.stores[store as usize].name, count
        );
    }
    Ok(())
}

/// `sigecs save`: the world after some frames, back to a blob.
pub(crate) fn save_cmd(args: Vec<String>) -> Result<(), String> {
    let (out, rest) = take_output(args)?;
    let mut frames_given = None;
    let mut rest2 = Vec::new();
    let mut it = rest.into_iter();
    while let Some(a) = it.next() {
        if a == "--frames" {
            let v = it
                .next()
                .ok_or("--frames needs a value (a number of frames)")?;
            frames_given = Some(
                v.parse::<usize>()
                    .map_err(|_| format!("--frames expects a number, got `{v}`"))?,
            );
        } else {
            rest2.push(a);
        }
    }
    let has_entities = rest2.iter().any(|a| a.starts_with("--entities"));
    let mut opts = parse_args(rest2)?.ok_or("see sigecs --help")?;
    if !has_entities {
        opts.entities = 0;
    }
    let frames = frames_given.unwrap_or(60);
    let level = load_level_for(&opts)?;
    let mut rng = Rng::new(opts.seed);
    let mut world = World::new();
    let mut tm = TransformManager::new();
    world
        .spawn_level_with(&level, &mut tm)
        .map_err(|e| e.to_string())?;
    populate(&mut world, opts.entities, &mut rng);
    for _ in 0..frames {
        world.run_schedule();
        recycle_particles(&mut world, &mut rng);
    }
    let t = Instant::now();
    let blob = world
        .save_level(level_registry(), Some(&tm))
        .map_err(|e| e.to_string())?;
    let took = t.elapsed();
    std::fs::write(&out, &blob).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "saved {} entities after {frames} frames to {}: {} bytes (saved in {took:.2?})",
        world.len(),
        out.display(),
        blob.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_inspect_and_save_commands() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("l.json");
        let bin = dir.path().join("l.bin");
        std::fs::write(
            &json,
            r#"{"entities": [{"components": {"position": [1,2,3], "name": "b"}},
                             {"parent": 0, "components": {"position": [0,0,0], "name": "c"}}]}"#,
        )
        .unwrap();
        let s = |p: &Path| p.display().to_string();
        compile_cmd(vec![s(&json), "-o".into(), s(&bin)]).unwrap();
        let level = load_level(Some(&bin)).unwrap();
        assert_eq!(level.num_entities(), 2);
        assert_eq!(level.parent(1), Some(0));
        // JSON levels load too, to the same blob.
        assert_eq!(load_level(Some(&json)).unwrap().bytes(), level.bytes());
        inspect_cmd(vec![s(&bin)]).unwrap();
        let saved = dir.path().join("saved.bin");
        save_cmd(vec![
            "--level".into(),
            s(&bin),
            "--frames".into(),
            "3".into(),
            "-o".into(),
            s(&saved),
        ])
        .unwrap();
        // Beacons do not move: the world saved after 3 frames is the level.
        assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&bin).unwrap());
        let e = compile_cmd(vec![s(&json)]).unwrap_err();
        assert_eq!(e, "missing -o OUTPUT");
        std::fs::write(
            &json,
            r#"{"entities": [{"components": {"position": [1,2]}}]}"#,
        )
        .unwrap();
        let e = compile_cmd(vec![s(&json), "-o".into(), s(&bin)]).unwrap_err();
        assert!(e.contains("entities[0].components.position"), "{e}");
        let e = load_level(Some(&dir.path().join("missing.bin"))).unwrap_err();
        assert!(e.contains("missing.bin"), "{e}");
    }
}
