//! Runs the quick start and checks its output, and checks that this crate is the README's
//! quick start: every code block of README.md's "Quick start" section is the file it names,
//! and no block of the README is `ignore`d.

use std::path::Path;
use std::process::Command;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(path).unwrap()
}

/// The "Quick start" section's code blocks, each as (file named on its first line, content).
fn readme_blocks() -> Vec<(String, String)> {
    let readme = readme();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("README has a Quick start section");
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        // Rust files are `rs` blocks: highlighted as Rust, but not doctests of the root crate
        // (they need this crate's build script); this test is what checks them.
        if line == "```rs" || line == "```toml" {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            let name = body[0].trim_start_matches("// ").trim_start_matches("# ");
            blocks.push((name.to_string(), body.join("\n") + "\n"));
        }
    }
    blocks
}

#[test]
fn this_crate_is_the_readme_quick_start() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let blocks = readme_blocks();
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Cargo.toml",
            "build.rs",
            "src/components/mod.rs",
            "src/main.rs"
        ]
    );
    for (name, content) in &blocks {
        let ours = std::fs::read_to_string(dir.join(name)).unwrap();
        if name == "Cargo.toml" {
            // The package differs (name, `publish = false`); the dependencies must not. The
            // README's recommended build-script profile follows them: a workspace member's
            // profiles are ignored (the workspace root's apply), so this crate leaves it out;
            // `tests/new_user_crate.rs` builds the README's Cargo.toml whole, as a root.
            let after = content
                .split_once("\n[dependencies]")
                .expect("the README's Cargo.toml has dependencies")
                .1;
            let deps = after
                .split_once("\n# Recommended")
                .map_or(after, |(deps, _)| deps)
                .trim_end()
                .replace("/path/to/sigecs", "../..")
                + "\n";
            assert!(
                ours.ends_with(&deps),
                "examples/quick_start/Cargo.toml's dependencies differ from the README's:\n{deps}"
            );
        } else {
            assert_eq!(
                &ours, content,
                "examples/quick_start/{name} differs from the README's block"
            );
        }
    }
}

#[test]
fn quick_start_prints_what_the_readme_says() {
    let out = Command::new(env!("CARGO_BIN_EXE_quick_start"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();

    // One run of `movement` with dt = 0.5: position + velocity * dt.
    let dt = 0.5f32;
    let ball = (0.0 + 2.0 * dt, 0.0 + 1.0 * dt);
    let ada = (10.0 - dt, 0.0f32); // velocity (-1, 0)
    assert_eq!(
        lines[0],
        format!("ball at Position {{ x: {:?}, y: {:?} }}", ball.0, ball.1)
    );
    assert_eq!(
        lines[1],
        format!("ada at Position {{ x: {:?}, y: {:?} }}", ada.0, ada.1)
    );
    // The README's text quotes the same two lines.
    let readme = readme();
    assert!(readme.contains(&format!("`{}`", lines[0])));
    assert!(readme.contains(&format!("`{}`", lines[1])));

    // The memory table: the ball was despawned, ada is left in the `rows` store.
    let row = |name: &str| -> Vec<&str> {
        let line = lines.iter().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().collect()
    };
    assert_eq!(row("Ball")[1..3], ["columns", "0"]);
    assert_eq!(row("Player")[1..3], ["rows", "1"]);
    assert_eq!(row("total")[1], "1");
}

/// Every code block of the README compiles: `rust` blocks are doctests of the root crate,
/// `rs` blocks are this crate's files (checked above); none may be skipped with `ignore`, and
/// `rs` is only for the quick start's files. docs/levels.md, doctested too, holds one `rs`
/// block: the level tool's `main.rs`, which the root package's `tests/new_user_crate.rs`
/// builds.
#[test]
fn no_readme_block_is_ignored() {
    let readme = readme();
    let quick_start = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .unwrap();
    let levels_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/levels.md");
    let levels = std::fs::read_to_string(levels_path).unwrap();
    for (name, text) in [("README.md", &readme), ("docs/levels.md", &levels)] {
        for (i, line) in text.lines().enumerate() {
            if let Some(tag) = line.strip_prefix("```") {
                assert!(!tag.contains("ignore"), "{name}:{}: {line}", i + 1);
            }
        }
    }
    let rs = |text: &str| text.matches("\n```rs\n").count();
    assert_eq!(rs(quick_start), 3, "the quick start's three Rust files");
    assert_eq!(
        rs(&readme),
        3,
        "`rs` blocks outside the quick start are not compiled"
    );
    assert_eq!(rs(&levels), 1, "the level tool's main.rs");
}
