//! The README quick start, proven: the code blocks of README.md's "Quick start" section are
//! written into a fresh crate in a temporary directory (path dependencies pointing at this
//! workspace), which is then built and run with cargo, as a new user would. Likewise the
//! level tool of docs/levels.md, in a game whose world is in `main.rs` and in one whose world
//! is in a library crate.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The quick start's code blocks, each as (file path, content). A block names its file on its
/// first line: `# Cargo.toml` or `// src/main.rs`.
fn quick_start_files(readme: &str) -> Vec<(String, String)> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("README has a Quick start section");
    let mut files = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if !(line.starts_with("```rs") || line.starts_with("```toml")) {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let first = body.first().copied().unwrap_or_default();
        let name = first
            .strip_prefix("// ")
            .or_else(|| first.strip_prefix("# "))
            .unwrap_or_else(|| panic!("quick start block does not name its file: {first:?}"));
        files.push((name.trim().to_string(), body.join("\n") + "\n"));
    }
    files
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo(dir: &Path, target: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    cmd.output().expect("cargo runs")
}

#[test]
fn readme_quick_start_builds_and_runs_in_a_new_crate() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let files = quick_start_files(&readme);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Cargo.toml",
            "build.rs",
            "src/components/mod.rs",
            "src/main.rs"
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let root = workspace();
    for (name, content) in &files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let content = content.replace("/path/to/sigecs", &root.display().to_string());
        std::fs::write(path, content).unwrap();
    }
    // Same dependency versions as the workspace, so the build needs nothing new.
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    // A target dir of its own (kept between runs) so it never waits on the outer build's lock.
    let target = root.join("target").join("new-user-crate");

    let out = cargo(dir.path(), &target, &["run", "--quiet"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the quick start failed:\n{stderr}\n{stdout}"
    );
    assert!(
        stdout.contains("ball at Position { x: 1.0, y: 0.5 }"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ada at Position { x: 9.5, y: 0.0 }"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Ball") && stdout.contains("Player") && stdout.contains("rows"),
        "{stdout}"
    );
    assert!(
        !stderr.contains("warning"),
        "the quick start compiles without warnings:\n{stderr}"
    );

    // The runtime tree of a user crate holds no code generator, no math library and no level
    // machinery it does not use (glam comes only with the `transform` feature, serde and
    // postcard only with `sigecs-level`).
    let out = cargo(
        dir.path(),
        &target,
        &["tree", "--edges", "normal", "--prefix", "none"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("sigecs v"), "{tree}");
    for unwanted in [
        "sigecs-build",
        "glam",
        "sigecs-level",
        "serde",
        "postcard",
        "crc32fast",
    ] {
        assert!(
            !tree.lines().any(|l| l.starts_with(unwanted)),
            "the quick start's runtime tree has {unwanted}:\n{tree}"
        );
    }

    // A mistake in a declaration fails the build with the file, line and column.
    let components = dir.path().join("src/components/mod.rs");
    let good = std::fs::read_to_string(&components).unwrap();
    let bad = good.replacen("pub velocity: Velocity,\n}", "pub velocity: Velocty,\n}", 1);
    assert_ne!(good, bad);
    std::fs::write(&components, &bad).unwrap();
    let out = cargo(dir.path(), &target, &["build", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let line = bad.lines().position(|l| l.contains("Velocty")).unwrap() + 1;
    assert!(
        stderr.contains(&format!("src/components/mod.rs:{line}:19")),
        "error lacks its location:\n{stderr}"
    );
    assert!(
        stderr.contains("unknown component `Velocty` in signature `Ball`"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `Velocity`?"), "{stderr}");
    std::fs::write(&components, &good).unwrap();

    // Code next to the `include!` cannot reach the world's internals (it could push rows into
    // a store and make a query read out of bounds).
    let main = dir.path().join("src/main.rs");
    let good_main = std::fs::read_to_string(&main).unwrap();
    let poke = good_main.replacen(
        "    world.despawn(ball);",
        "    let _inner = &mut world.0;\n    world.despawn(ball);",
        1,
    );
    assert_ne!(good_main, poke);
    std::fs::write(&main, &poke).unwrap();
    let out = cargo(dir.path(), &target, &["build", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the world's inner field is private");
    assert!(
        stderr.contains("field `0` of struct `sigecs_world::World` is private"),
        "{stderr}"
    );
    std::fs::write(&main, &good_main).unwrap();

    // A resource that is not `Default` was an error at its declaration and a second one
    // inside the generated file. Now it is one, at the derive.
    let bad = good.replacen(
        "#[derive(Resource, Default)]\npub struct Time {",
        "#[derive(Resource)]\npub struct Time {",
        1,
    );
    assert_ne!(good, bad);
    std::fs::write(&components, &bad).unwrap();
    let out = cargo(dir.path(), &target, &["build", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let line = bad.lines().position(|l| l == "pub struct Time {").unwrap() + 1;
    assert!(
        stderr.contains("the trait bound `components::Time: Default` is not satisfied")
            && stderr.contains(&format!("src/components/mod.rs:{line}:12")),
        "{stderr}"
    );
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert!(!stderr.contains("world.rs"), "{stderr}");
    std::fs::write(&components, &good).unwrap();

    // A type of the user's own named like one the generated file exports (`Model`): with the
    // world included in a module of its own (the README's advice), no warning points into the
    // generated file, and the user's type is the one its module sees.
    let include = r#"include!(concat!(env!("OUT_DIR"), "/world.rs"));"#;
    assert!(good_main.contains(include));
    let own = good_main.replacen(
        include,
        &format!("mod world {{ {include} }}\nuse world::*;"),
        1,
    ) + "#[allow(dead_code)]\nstruct Model;\n";
    std::fs::write(&main, &own).unwrap();
    let out = cargo(dir.path(), &target, &["build"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    std::fs::write(&main, &good_main).unwrap();

    // A world that opts in to world states needs every component and resource to be
    // `Clone`: one that is not (the quick start derives no `Clone`) is an error naming it and
    // saying what to do.
    let build = dir.path().join("build.rs");
    let good_build = std::fs::read_to_string(&build).unwrap();
    let rollback = good_build.replacen(".scan(", ".rollback(true)\n        .scan(", 1);
    assert_ne!(good_build, rollback);
    std::fs::write(&build, &rollback).unwrap();
    let out = cargo(dir.path(), &target, &["build", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    for name in ["Position", "Velocity", "Name", "Time"] {
        assert!(
            stderr.contains(&format!(
                "`components::{name}` cannot be saved in a world state: it is not `Clone`"
            )),
            "{name}: {stderr}"
        );
    }
    assert!(stderr.contains("#[component(no_rollback)]"), "{stderr}");
    std::fs::write(&build, &good_build).unwrap();
}

/// docs/levels.md's `rs` block (the level tool in `src/main.rs`) and its toml block (the
/// dependencies a crate with levels adds).
fn level_tool_blocks(section: &str) -> (String, String) {
    let block = |fence: &str| {
        let start = section.find(fence).expect("the block") + fence.len() + 1;
        let len = section[start..].find("```").unwrap();
        section[start..start + len].to_string()
    };
    (block("```rs"), block("```toml"))
}

/// The level tool as docs/levels.md writes it, in two games that differ only in where their world
/// is: `in_main` includes it in `main.rs` (the quick start's layout), `in_lib` in its library
/// crate, whose `main.rs` imports `Model` and `level_registry` as the docs say. Both build in
/// one workspace (one build of the dependencies), compile a JSON level with a tag, verify and
/// inspect it, and run the game when no subcommand is given.
#[test]
fn documented_level_tool_works_for_a_world_in_main_and_in_a_library() {
    let levels = std::fs::read_to_string(workspace().join("docs/levels.md")).unwrap();
    let (main_block, deps) = level_tool_blocks(&levels);
    assert!(main_block.starts_with("// src/main.rs\n"), "{main_block}");
    let root = workspace();
    let deps = deps.replace("/path/to/sigecs", &root.display().to_string());
    let components = r#"use sigecs::prelude::*;

#[derive(Component, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, serde::Serialize, serde::Deserialize)]
#[component(level = "mass")]
#[repr(transparent)]
pub struct Mass(pub f32);

#[derive(Component)]
#[component(level = "frozen")]
pub struct Frozen;

#[derive(Signature)]
pub struct Body {
    pub mass: Mass,
}

#[derive(Signature)]
pub struct FrozenBody {
    pub mass: Mass,
    pub frozen: Frozen,
}
"#;
    let include = "mod components;\ninclude!(concat!(env!(\"OUT_DIR\"), \"/world.rs\"));\n";
    let lib = "pub mod components;\ninclude!(concat!(env!(\"OUT_DIR\"), \"/world.rs\"));\n";
    let build = "fn main() {\n    sigecs_build::Builder::new()\n        .scan(\"src/components\", \"crate::components\")\n        .generate_or_exit();\n}\n";
    let manifest = |name: &str| {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nsigecs = {{ path = \"{root}/ecs-core\" }}\n{deps}\n\
             [build-dependencies]\nsigecs-build = {{ path = \"{root}/ecs-build\" }}\n",
            root = root.display()
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"in_main\", \"in_lib\"]\nresolver = \"2\"\n\n\
         [profile.dev]\ndebug = false\n\n[profile.dev.build-override]\nopt-level = 1\n",
    );
    for name in ["in_main", "in_lib"] {
        write(&format!("{name}/Cargo.toml"), &manifest(name));
        write(&format!("{name}/build.rs"), build);
        write(&format!("{name}/src/components/mod.rs"), components);
    }
    write("in_main/src/main.rs", &format!("{include}\n{main_block}"));
    write("in_lib/src/lib.rs", lib);
    write(
        "in_lib/src/main.rs",
        &format!("use in_lib::{{level_registry, Model}};\n\n{main_block}"),
    );
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    write(
        "level.json",
        r#"{"entities": [{"components": {"mass": 2.0, "frozen": true}}, {"components": {"mass": 1.0}}]}"#,
    );
    let target = root.join("target").join("new-user-crate");

    let out = cargo(dir.path(), &target, &["build", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the level tool did not build:\n{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    for name in ["in_main", "in_lib"] {
        let run = |args: &[&str]| {
            let out = Command::new(target.join("debug").join(name))
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{name} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            text
        };
        let bin = format!("{name}.bin");
        let out = run(&["level", "compile", "level.json", "-o", &bin]);
        assert!(out.contains("2 entities"), "{name}: {out}");
        let out = run(&["level", "verify", &bin]);
        assert!(out.contains("a valid level, 2 entities"), "{name}: {out}");
        let out = run(&["level", "inspect", &bin]);
        assert!(
            out.contains("FrozenBody") && out.contains("Body"),
            "{name}: {out}"
        );
        assert_eq!(run(&[]), "", "{name}: the game runs without a subcommand");
    }
}
