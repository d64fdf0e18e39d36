//! README.md's "Using the world" shows declarations whose generated world its other blocks run
//! against (`fixtures/src/readme.rs`, through the root crate's doctests): every system a block
//! declares is declared the same way in that file, so what the README shows is what runs.

use std::path::Path;

/// The text without comments or indentation, one line per line of code.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split(" //").next().unwrap().trim())
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readme_declares_its_systems_as_its_world_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let fixture = code(&std::fs::read_to_string(root.join("fixtures/src/readme.rs")).unwrap());
    let mut checked = 0;
    for block in readme.split("```rust\n").skip(1) {
        let block = block.split_once("```").unwrap().0;
        if !block.starts_with("# use sigecs_fixtures::readme::{") {
            continue;
        }
        for item in block.split("\n\n").filter(|i| i.contains("#[system")) {
            assert!(
                fixture.contains(&code(item)),
                "README.md's system is not fixtures/src/readme.rs's:\n{item}"
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked, 6,
        "movement, track, welcome, damage, count_frames, bury"
    );
}
