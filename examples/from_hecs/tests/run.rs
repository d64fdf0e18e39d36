//! Runs the example and compares its output with the program worked out in plain Rust here,
//! and with what README.md says it prints; checks that README.md's sigecs blocks are the code
//! of this crate.

use std::path::Path;
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The program without an ECS: (spawn index, position, velocity) for each live entity.
fn expected() -> Vec<String> {
    type Body = (usize, (f32, f32), Option<(f32, f32)>);
    let mut bodies: Vec<Body> = vec![
        (0, (0.0, 0.0), Some((1.0, 0.0))),
        (1, (2.0, 0.0), Some((2.0, 1.0))),
        (2, (0.0, 1.0), Some((0.0, 0.5))),
        (3, (3.0, 3.0), None), // the marker
    ];
    let mut lines = Vec::new();
    for frame in 1..=6 {
        for (_, p, v) in &mut bodies {
            if let Some(v) = v {
                p.0 += v.0;
                p.1 += v.1;
            }
        }
        bodies.retain(|(_, p, _)| p.0 <= 5.0);
        lines.push(format!("frame {frame}: {} alive", bodies.len()));
        if frame == 3 {
            bodies.iter_mut().find(|b| b.0 == 3).unwrap().2 = Some((1.0, 0.0));
        }
    }
    assert!(!bodies.iter().any(|b| b.0 == 0), "a is gone");
    lines.push("a: None".to_string());
    // Ids are (index)v(generation); no slot was reused. (More than one survivor would be
    // listed in store order: `Marker`, then `Mover`.)
    for (index, p, _) in &bodies {
        lines.push(format!(
            "{index}v0: Position {{ x: {:?}, y: {:?} }}",
            p.0, p.1
        ));
    }
    lines
}

#[test]
fn prints_the_program_worked_out_by_hand() {
    let out = Command::new(env!("CARGO_BIN_EXE_from_hecs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let expected = expected();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
    assert_eq!(expected.last().unwrap(), "2v0: Position { x: 0.0, y: 4.0 }");

    // README.md quotes the output after "prints".
    let readme = readme();
    let quoted = readme
        .split_once("prints\n\n```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("README.md quotes the output")
        .0;
    assert_eq!(quoted, stdout);
}

#[test]
fn readme_sigecs_blocks_are_this_crate() {
    let readme = readme();
    let sigecs = readme
        .split_once("\n## sigecs\n")
        .unwrap()
        .1
        .split("\n## ")
        .next()
        .unwrap();
    let mut checked = 0;
    for block in sigecs.split("```rust\n").skip(1) {
        let block = block.split_once("```").unwrap().0;
        let (first, body) = block.split_once('\n').unwrap();
        let file = first.strip_prefix("// ").expect("a block names its file");
        let source =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        assert!(
            source.contains(body),
            "README.md's block is not part of {file}:\n{body}"
        );
        checked += 1;
    }
    assert_eq!(checked, 5);
}
