//! `sigecs save`: the bundled world after some frames, saved to a level blob. (`compile`,
//! `verify` and `inspect` are `sigecs_level::cli`'s, shared with every crate's own world.)

use crate::{levels::*, options::*, population::*};
use sigecs::transform::TransformManager;
use sigecs_demo::{level_registry, World};
use sigecs_level::WorldLevels;
use std::path::PathBuf;
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
        let alive = world.len();
        world
            .run_schedule()
            .expect("the bundled systems' only commands, despawns, cannot fail");
        let expired = alive - world.len();
        respawn_particles(&mut world, expired, &mut rng);
    }
    let t = Instant::now();
    let blob = world
        .save_level(level_registry(), Some(&tm))
        .map_err(|e| e.to_string())?;
    let took = t.elapsed();
    std::fs::write(&out, &blob).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "saved {} after {} to {}: {} bytes (saved in {took:.2?})",
        crate::report::count(world.len(), "entity", "entities"),
        crate::report::count(frames, "frame", "frames"),
        out.display(),
        blob.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sigecs_level::cli;

    #[test]
    fn save_command() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("l.json");
        let bin = dir.path().join("l.bin");
        std::fs::write(
            &json,
            r#"{"entities": [{"components": {"position": [1,2,3], "name": "b"}},
                             {"parent": 0, "components": {"position": [0,0,0], "name": "c"}}]}"#,
        )
        .unwrap();
        let s = |p: &std::path::Path| p.display().to_string();
        let mut out = Vec::new();
        cli::run::<sigecs_demo::Model>(
            level_registry(),
            ["compile", &s(&json), "-o", &s(&bin)],
            &mut out,
        )
        .unwrap();
        let level = load_level(Some(&bin)).unwrap();
        assert_eq!(level.num_entities(), 2);
        assert_eq!(level.parent(1), Some(0));
        // JSON levels load too, to the same blob.
        assert_eq!(load_level(Some(&json)).unwrap().bytes(), level.bytes());
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
        let e = save_cmd(vec!["--frames".into(), "3".into()]).unwrap_err();
        assert_eq!(e, "missing -o OUTPUT");
        let e = load_level(Some(&dir.path().join("missing.bin"))).unwrap_err();
        assert!(e.contains("missing.bin"), "{e}");
    }
}
