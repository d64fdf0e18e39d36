//! Build errors of `#[component(level = "…")]`, each at its declaration (file:line:col), and
//! the registrations generated for valid declarations.

use sigecs_build::{BuildError, Builder, Diagnostic};

/// Writes `files` (flat, with a `mod.rs` declaring them) and runs the builder.
fn build(files: &[(&str, &str)]) -> (tempfile::TempDir, Result<String, BuildError>) {
    let dir = tempfile::tempdir().unwrap();
    let mut decls = String::new();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
        decls.push_str(&format!("pub mod {};\n", name.trim_end_matches(".rs")));
    }
    std::fs::write(dir.path().join("mod.rs"), decls).unwrap();
    let r = Builder::new()
        .scan(dir.path(), "crate::components")
        .rerun_if_changed(false)
        .generate_string();
    (dir, r)
}

fn errors(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<Diagnostic>) {
    let (dir, r) = build(files);
    match r {
        Ok(src) => panic!("expected errors, generated:\n{src}"),
        Err(e) => (dir, e.diagnostics),
    }
}

const SIG: &str = "use sigecs::prelude::*;
#[derive(Signature)]
pub struct S { pub p: Position, pub n: Name }
";

/// `SIG`'s components, neither opted in.
const PLAIN: &str = "use sigecs::prelude::*;
#[derive(Component)]
pub struct Position(pub f32);
#[derive(Component)]
pub struct Name(pub String);
";

/// The generated text without whitespace and trailing commas (where lines break depends on
/// their length), and a test of whether it holds `s` written the same way.
fn flat(src: &str) -> impl Fn(&str) -> bool {
    let flat: String = src
        .split_whitespace()
        .collect::<String>()
        .replace(",>", ">")
        .replace(",)", ")");
    move |s: &str| flat.contains(&s.split_whitespace().collect::<String>())
}

#[test]
fn opted_in_components_are_registered() {
    let (_d, r) = build(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"position\")]
pub struct Position(pub f32);
#[derive(Component)]
#[component(cold, level = \"name\", encoding = \"serde\", spawn_order = 2, map_entities)]
pub struct Name(pub String);
#[derive(Component)]
pub struct Hidden(pub u8);
",
        ),
        ("b.rs", SIG),
    ]);
    let src = r.unwrap();
    let has = flat(&src);
    assert!(has(
        "pub fn level_registry() -> &'static ::sigecs_level::Registry"
    ));
    assert!(has(
        "Registration::pod::<crate::components::a::Position>(\"position\")"
    ));
    assert!(
        has("Registration::serde::<crate::components::a::Name>(\"name\").spawn_order(2i32).map_entities::<crate::components::a::Name>()"),
        "{src}"
    );
    assert!(
        !has("Registration::pod::<crate::components::a::Hidden>"),
        "only opted-in components are registered"
    );
}

#[test]
fn nothing_is_generated_without_opted_in_components() {
    let (_d, r) = build(&[("a.rs", PLAIN), ("b.rs", SIG)]);
    assert!(!r.unwrap().contains("level_registry"));
}

#[test]
fn bad_options_are_located() {
    let (dir, ds) = errors(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"pos ition\")]
pub struct Position(pub f32);
#[derive(Component)]
#[component(level = \"name\", encoding = \"json\")]
pub struct Name(pub String);
",
        ),
        ("b.rs", SIG),
    ]);
    assert_eq!(ds.len(), 2, "{ds:?}");
    assert_eq!(ds[0].file, dir.path().join("a.rs"));
    assert_eq!((ds[0].line, ds[0].column), (3, 21));
    assert!(
        ds[0].message.contains("invalid level name \"pos ition\""),
        "{}",
        ds[0]
    );
    assert_eq!((ds[1].line, ds[1].column), (6, 40));
    assert!(
        ds[1].message.contains("unknown encoding \"json\""),
        "{}",
        ds[1]
    );
}

#[test]
fn duplicate_and_reserved_names_are_located() {
    let (dir, ds) = errors(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"thing\")]
pub struct Position(pub f32);
#[derive(Component)]
#[component(level = \"local_transform\")]
pub struct Local(pub f32);
",
        ),
        (
            "c.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"thing\", encoding = \"serde\")]
pub struct Name(pub String);
",
        ),
        ("b.rs", SIG),
    ]);
    assert_eq!(ds.len(), 2, "{ds:?}");
    let reserved = ds.iter().find(|d| d.message.contains("reserved")).unwrap();
    assert_eq!(reserved.file, dir.path().join("a.rs"));
    assert_eq!((reserved.line, reserved.column), (6, 21));
    let dup = ds
        .iter()
        .find(|d| d.message.contains("is used by"))
        .unwrap();
    // Components are checked in name order: Name (c.rs) comes after... whichever is second.
    assert!(
        dup.message
            .contains("level name \"thing\" is used by `Name` and `Position`")
            || dup
                .message
                .contains("level name \"thing\" is used by `Position` and `Name`"),
        "{dup}"
    );
    assert_eq!(dup.line, 3);
    assert_eq!(dup.column, 21);
    assert!(dup.help.as_deref().unwrap().contains("rename one"));
}

const SOA: &str = "use sigecs::prelude::*;
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable, sigecs::SoaManager)]
#[repr(C)]
#[soa(level = \"spin\", spawn_order = -1, lookup = \"dense\")]
pub struct Spin { pub rate: f32, pub phase: f32 }
#[derive(sigecs::SoaManager)]
pub struct Unlisted { pub x: f32 }
";

/// A struct without fields is a tag: registered with a constructor, whatever its syntax, and
/// with nothing else to derive.
#[test]
fn fieldless_components_are_registered_as_tags() {
    let (_d, r) = build(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"position\")]
pub struct Position(pub f32);
#[derive(Component)]
#[component(level = \"frozen\")]
pub struct Frozen;
#[derive(Component)]
#[component(level = \"braced\")]
pub struct Braced {}
#[derive(Component)]
#[component(level = \"asked_pod\", encoding = \"pod\")]
pub struct AskedPod;
#[derive(Component)]
pub struct Name(pub String);
",
        ),
        ("b.rs", SIG),
    ]);
    let src = r.unwrap();
    let has = flat(&src);
    for (ty, name) in [("Frozen", "frozen"), ("Braced", "braced")] {
        assert!(
            has(&format!(
                "Registration::tag::<crate::components::a::{ty}>(\"{name}\", || crate::components::a::{ty} {{}})"
            )),
            "{src}"
        );
    }
    assert!(has(
        "Registration::pod::<crate::components::a::AskedPod>(\"asked_pod\")"
    ));
}

#[test]
fn soa_structs_declared_as_levels_are_registered_kept_outside() {
    let (_d, r) = build(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"position\")]
pub struct Position(pub f32);
#[derive(Component)]
pub struct Name(pub String);
",
        ),
        ("b.rs", SIG),
        ("s.rs", SOA),
    ]);
    let src = r.unwrap();
    let has = flat(&src);
    assert!(
        has("Registration::pod::<crate::components::s::Spin>(\"spin\").kept_outside().spawn_order(-1i32)"),
        "{src}"
    );
    assert!(has(
        "Registration::pod::<crate::components::a::Position>(\"position\")"
    ));
    assert!(!src.contains("Unlisted"), "only declared levels are named");

    // A SoA struct alone is enough for a registry.
    let (_d, r) = build(&[("a.rs", PLAIN), ("b.rs", SIG), ("s.rs", SOA)]);
    assert!(r.unwrap().contains("level_registry"));
}

#[test]
fn a_soa_level_name_a_component_uses_is_located() {
    let (dir, ds) = errors(&[
        (
            "a.rs",
            "use sigecs::prelude::*;
#[derive(Component)]
#[component(level = \"spin\")]
pub struct Position(pub f32);
#[derive(Component)]
pub struct Name(pub String);
",
        ),
        ("b.rs", SIG),
        (
            "s.rs",
            "#[derive(sigecs::SoaManager)]
#[soa(level = \"spin\")]
pub struct Spin { pub rate: f32 }
",
        ),
    ]);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0].file, dir.path().join("s.rs"));
    assert_eq!((ds[0].line, ds[0].column), (2, 15));
    assert!(
        ds[0]
            .message
            .contains("level name \"spin\" is used by `Position` and `Spin`"),
        "{}",
        ds[0]
    );
}

#[test]
fn soa_level_errors_are_located() {
    // A bad name, a stray `spawn_order`, an unknown option.
    let (dir, ds) = errors(&[
        ("b.rs", SIG),
        (
            "s.rs",
            "#[derive(sigecs::SoaManager)]
#[soa(level = \"9lives\")]
pub struct Cat { pub lives: u32 }
#[derive(sigecs::SoaManager)]
#[soa(spawn_order = 2)]
pub struct Dog { pub age: u32 }
#[derive(sigecs::SoaManager)]
#[soa(levels = \"x\")]
pub struct Eel { pub length: f32 }
",
        ),
    ]);
    let s = dir.path().join("s.rs");
    let at = |line: usize| {
        ds.iter()
            .find(|d| d.file == s && d.line == line)
            .unwrap_or_else(|| panic!("no error at s.rs:{line} in {ds:?}"))
    };
    assert!(at(2).message.contains("invalid level name \"9lives\""));
    assert_eq!(at(2).column, 15);
    assert!(at(5).message.contains("`spawn_order` is a level option"));
    assert!(at(8).message.contains("unknown soa option `levels`"));
    assert_eq!(ds.len(), 3, "{ds:?}");
}

#[test]
fn only_soa_managers_declared_as_levels_are_registered() {
    let (_d, r) = build(&[
        (
            "a.rs",
            &format!(
                "{PLAIN}#[derive(sigecs::SoaManager)]
#[soa(level = \"spin\")]
pub struct Spin {{ pub rate: f32 }}
mod inner {{
    // Not a level struct: the generated code never names it, so a private
    // module is fine.
    #[derive(sigecs::SoaManager)]
    pub struct Plain {{ pub rate: f32 }}
}}
"
            ),
        ),
        ("b.rs", SIG),
    ]);
    let src = r.unwrap();
    assert!(src.contains("components::a::Spin"), "{src}");
    assert!(!src.contains("Plain"), "not a level struct: {src}");
}

#[test]
fn a_soa_level_in_a_private_module_needs_a_reexport() {
    let (dir, ds) = errors(&[
        (
            "a.rs",
            &format!(
                "{PLAIN}mod inner {{
    #[derive(sigecs::SoaManager)]
    #[soa(level = \"spin\")]
    pub struct Spin {{ pub rate: f32 }}
}}
"
            ),
        ),
        ("b.rs", SIG),
    ]);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0].file, dir.path().join("a.rs"));
    assert_eq!(ds[0].line, 9);
    assert!(ds[0]
        .message
        .contains("level struct `Spin` is in the private module `inner`"));
}
