//! The level tool (`sigecs_level::cli`) as a user runs it, through the bundled `sigecs`
//! binary: a good level compiles, verifies and inspects with exit code 0; a bad level, a missing
//! file and a malformed command line are a message on stderr and a nonzero exit code (1 for a
//! failed command, 2 for a malformed command line), never a panic.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `sigecs` with `args`.
fn sigecs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sigecs"))
        .args(args)
        .output()
        .expect("the sigecs binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

#[test]
fn a_good_level_compiles_verifies_and_inspects() {
    let dir = tempfile::tempdir().unwrap();
    let (json, bin) = (dir.path().join("l.json"), dir.path().join("l.bin"));
    std::fs::write(
        &json,
        r#"{"entities": [{"components": {"position": [1,2,3], "name": "b"}},
                         {"parent": 0, "components": {"position": [0,0,0], "name": "c"}}]}"#,
    )
    .unwrap();

    let o = sigecs(&["compile", path(&json), "-o", path(&bin)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 entities"), "{}", stdout(&o));
    assert!(bin.exists());

    let o = sigecs(&["verify", path(&bin)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("a valid level, 2 entities"),
        "{}",
        stdout(&o)
    );

    // A blob and its JSON inspect the same.
    let o = sigecs(&["inspect", path(&bin)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    assert!(
        report.contains("entities: 2 (1 roots, hierarchy depth 2)"),
        "{report}"
    );
    assert!(report.contains("per signature:"), "{report}");
    assert_eq!(stdout(&sigecs(&["inspect", path(&json)])), report);
}

#[test]
fn a_bad_level_or_command_line_is_a_message_and_a_nonzero_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let (json, bin) = (dir.path().join("bad.json"), dir.path().join("bad.bin"));
    // A position with two coordinates: the compile error names the JSON path.
    std::fs::write(
        &json,
        r#"{"entities": [{"components": {"position": [1,2]}}]}"#,
    )
    .unwrap();
    let o = sigecs(&["compile", path(&json), "-o", path(&bin)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("entities[0].components.position"),
        "{}",
        stderr(&o)
    );
    assert!(
        !bin.exists(),
        "nothing written for a level that does not compile"
    );

    // A truncated blob is refused by the verifier.
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"{"entities": [{"components": {"name": "a"}}]}"#).unwrap();
    assert!(sigecs(&["compile", path(&good), "-o", path(&bin)])
        .status
        .success());
    let blob = std::fs::read(&bin).unwrap();
    std::fs::write(&bin, &blob[..blob.len() - 1]).unwrap();
    for command in ["verify", "inspect"] {
        let o = sigecs(&[command, path(&bin)]);
        assert_eq!(o.status.code(), Some(1), "{command}");
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }

    let missing = dir.path().join("missing.bin");
    let o = sigecs(&["verify", path(&missing)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.bin"), "{}", stderr(&o));

    // Malformed command lines: exit code 2 and the usage.
    for args in [
        &["compile", path(&good)][..],
        &["compile", path(&good), "-o"],
        &["verify"],
        &["inspect", "a", "b"],
    ] {
        let o = sigecs(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("Usage:"), "{}", stderr(&o));
    }
}
