//! The order systems run in: declaration order, which across files is rustc's module order
//! (depth-first at each `mod` line: a `mod` declared at the top of a file runs its systems
//! before the file's own), except that a system declaring `#[system(after(..), before(..))]`
//! moves as far as its constraints require, and every other system keeps its place; a
//! constraint naming no system, or constraints in a cycle, are build errors at their lines.

use sigecs_build::{BuildError, Builder};

/// The analysis of `files` (written into a fresh directory with a `mod.rs` of `root`).
fn analysis(files: &[(&str, &str)]) -> Result<sigecs_build::Analysis, BuildError> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    Builder::new()
        .scan(dir.path(), "crate::components")
        .rerun_if_changed(false)
        .analyze()
}

fn order(files: &[(&str, &str)]) -> Vec<String> {
    let a = analysis(files).unwrap_or_else(|e| panic!("{e}"));
    a.systems().into_iter().map(|s| s.name).collect()
}

const COMPONENTS: &str = "\
use sigecs::prelude::*;
#[derive(Component)]
pub struct P(pub f32);
#[derive(Signature)]
pub struct S { pub p: P }
";

fn system(name: &str, options: &str) -> String {
    format!("#[system{options}]\npub fn {name}(p: &mut P) {{}}\n")
}

#[test]
fn declaration_order_is_rustcs_module_order() {
    // mod.rs: its own `a`, then `mod render` (whose `sprite` module is declared at the top of
    // render/mod.rs, so `sprite_draw` comes before render's own `render_frame`), then `z`.
    let root = format!(
        "{COMPONENTS}{}pub mod render;\n{}pub mod physics;\n",
        system("a", ""),
        system("z", "")
    );
    let render = format!("pub mod sprite;\n{}", system("render_frame", ""));
    let sprite = system("sprite_draw", "");
    let physics = format!("{}{}", system("step", ""), system("collide", ""));
    let files = [
        ("mod.rs", root.as_str()),
        ("render/mod.rs", render.as_str()),
        ("render/sprite.rs", sprite.as_str()),
        ("physics.rs", physics.as_str()),
    ];
    assert_eq!(
        order(&files),
        ["a", "sprite_draw", "render_frame", "z", "step", "collide"]
    );
    // The schedule names each system's place.
    let systems = analysis(&files).unwrap().systems();
    let at: Vec<&str> = systems.iter().map(|s| s.location.as_str()).collect();
    assert!(at[0].ends_with("mod.rs:7:8"), "{at:?}");
    assert!(at[1].ends_with("render/sprite.rs:2:8"), "{at:?}");
    assert!(at[5].ends_with("physics.rs:4:8"), "{at:?}");
}

#[test]
fn a_system_waits_for_what_its_constraints_name() {
    let files = |options: [&str; 4]| {
        let names = ["a", "b", "c", "d"];
        let text: String = names
            .iter()
            .zip(options)
            .map(|(n, o)| system(n, o))
            .collect();
        order(&[("mod.rs", &format!("{COMPONENTS}{text}"))])
    };
    assert_eq!(files(["", "", "", ""]), ["a", "b", "c", "d"]);
    // `a` after `c`: b and c keep their places, a follows c.
    assert_eq!(files(["(after(c))", "", "", ""]), ["b", "c", "a", "d"]);
    // `d` before `b`: d moves up to just before b; a, b and c keep their order.
    assert_eq!(files(["", "", "", "(before(b))"]), ["a", "d", "b", "c"]);
    // Both, and a chain: b is hoisted before a, which waits for d, which waits for c.
    assert_eq!(
        files(["(after(d))", "(before(a))", "", "(after(c))"]),
        ["b", "c", "d", "a"]
    );
}

/// A system declared last with `before(first)` runs first; the systems it does not name keep
/// their declared order (they used to run before it, `first` being pushed behind them).
#[test]
fn before_moves_the_system_that_declares_it() {
    let text = format!(
        "{COMPONENTS}{}{}{}{}",
        system("first", ""),
        system("second", ""),
        system("third", ""),
        system("hoisted", "(before(first))")
    );
    assert_eq!(
        order(&[("mod.rs", &text)]),
        ["hoisted", "first", "second", "third"]
    );
    // The schedule names the constraint beside the system that declares it.
    let systems = analysis(&[("mod.rs", &text)]).unwrap().systems();
    let constraints: Vec<&str> = systems.iter().map(|s| s.constraints.as_str()).collect();
    assert_eq!(constraints, ["before(first)", "", "", ""]);
}

#[test]
fn an_unknown_system_or_a_cycle_is_an_error_at_its_line() {
    let text = format!(
        "{COMPONENTS}{}{}",
        system("a", "(after(movment))"),
        system("movement", "")
    );
    let err = analysis(&[("mod.rs", &text)]).unwrap_err();
    let d = &err.diagnostics[0];
    assert_eq!((d.line, d.column), (6, 16), "{d}");
    assert_eq!(
        d.message,
        "system `a` is ordered after `movment`, which is not a system"
    );
    assert!(d
        .help
        .as_deref()
        .unwrap()
        .contains("did you mean `movement`?"));

    let text = format!(
        "{COMPONENTS}{}{}{}",
        system("a", "(after(c))"),
        system("b", "(after(a))"),
        system("c", "(after(b))")
    );
    let err = analysis(&[("mod.rs", &text)]).unwrap_err();
    let d = &err.diagnostics[0];
    assert!(
        d.message
            .starts_with("the systems' order constraints form a cycle: "),
        "{d}"
    );
    assert_eq!(
        d.message,
        "the systems' order constraints form a cycle: `a` then `b` then `c` then `a` again"
    );
    assert_eq!(d.line, 7, "at the first declared system of the cycle: {d}");
}
