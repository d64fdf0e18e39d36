//! The JSON compiler's error paths, each with the exact path and message a level author sees,
//! and a valid level's values read back through the verifier.

use super::*;
use crate::{verify, AnySet, Registration, VerifyOptions, NO_ENTITY};

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, serde::Deserialize)]
#[repr(C)]
struct Pos {
    x: f32,
    y: f32,
}

fn registry() -> Registry {
    Registry::new([
        Registration::pod::<Pos>("pos"),
        Registration::serde::<String>("name"),
        Registration::serde::<Vec<u8>>("tags"),
    ])
    .unwrap()
}

/// The errors of compiling `json`, as `(path, message)` pairs.
fn errors(json: &str) -> Vec<(String, String)> {
    let registry = registry();
    let err = EntityCompiler::new(&registry)
        .compile_str(json)
        .expect_err("the level must not compile");
    assert_eq!(err.more, 0);
    err.errors
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

/// The one error of compiling `json`.
fn error(json: &str) -> (String, String) {
    let mut all = errors(json);
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

fn pair(path: &str, message: &str) -> (String, String) {
    (path.to_string(), message.to_string())
}

#[test]
fn a_valid_level_compiles_to_what_it_says() {
    let registry = registry();
    let json = r#"{"entities": [
        {"parent": 2, "components": {"pos": {"x": 1.5, "y": -2}, "name": "child"}},
        {"parent": null, "components": null},
        {"components": {"tags": [7, 8], "pos": {"x": 0, "y": 0}}},
        {}
    ]}"#;
    let blob = EntityCompiler::new(&registry).compile_str(json).unwrap();
    let level = verify(
        &blob[..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(level.num_entities(), 4);
    assert_eq!(
        level.parents().collect::<Vec<_>>(),
        [Some(2), None, None, None]
    );
    let pos = level.component("pos").unwrap();
    assert_eq!(pos.entity_indices().collect::<Vec<_>>(), [0, 2]);
    assert_eq!(
        pos.pod::<Pos>().unwrap().as_ref(),
        [Pos { x: 1.5, y: -2.0 }, Pos { x: 0.0, y: 0.0 }]
    );
    let names = level.component("name").unwrap();
    assert_eq!(names.entity_indices().collect::<Vec<_>>(), [0]);
    assert_eq!(names.decode::<String>().unwrap(), ["child"]);
    let tags = level.component("tags").unwrap();
    assert_eq!(tags.entity_indices().collect::<Vec<_>>(), [2]);
    assert_eq!(tags.decode::<Vec<u8>>().unwrap(), [vec![7, 8]]);
    // The same level compiles to the same bytes, whatever the key order.
    let reordered = r#"{"entities": [
        {"components": {"name": "child", "pos": {"y": -2, "x": 1.5}}, "parent": 2},
        {},
        {"components": {"pos": {"x": 0, "y": 0}, "tags": [7, 8]}},
        {"parent": null}
    ]}"#;
    assert_eq!(
        EntityCompiler::new(&registry)
            .compile_str(reordered)
            .unwrap(),
        blob
    );
}

#[test]
fn the_document_shape_is_checked() {
    let (path, message) = error("{\"entities\": [");
    assert_eq!(path, "");
    assert!(message.starts_with("not valid JSON: "), "{message}");
    assert_eq!(
        error("[]"),
        pair(
            "",
            "expected an object with an \"entities\" array, found an array"
        )
    );
    assert_eq!(
        error("{}"),
        pair("", "missing key \"entities\" (an array of entities)")
    );
    assert_eq!(
        error(r#"{"entities": 3}"#),
        pair("entities", "expected an array, found a number")
    );
    assert_eq!(
        error(r#"{"entities": [], "levels": []}"#),
        pair("levels", "unknown key: expected only \"entities\"")
    );
    // An empty level is a level.
    let registry = registry();
    let blob = EntityCompiler::new(&registry)
        .compile_str(r#"{"entities": []}"#)
        .unwrap();
    let level = verify(
        &blob[..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(level.num_entities(), 0);
}

#[test]
fn entities_and_parents_are_checked() {
    assert_eq!(
        error(r#"{"entities": [{}, "ship"]}"#),
        pair("entities[1]", "expected an entity object, found a string")
    );
    assert_eq!(
        error(r#"{"entities": [{"parnet": 0}, {}]}"#),
        pair(
            "entities[0].parnet",
            "unknown key: an entity has \"parent\" and \"components\""
        )
    );
    assert_eq!(
        error(r#"{"entities": [{}, {"parent": 1}]}"#),
        pair("entities[1].parent", "an entity cannot be its own parent")
    );
    for (parent, found) in [("2", "2"), ("-1", "-1"), ("0.5", "0.5"), ("\"0\"", "\"0\"")] {
        assert_eq!(
            error(&format!(
                r#"{{"entities": [{{}}, {{"parent": {parent}}}]}}"#
            )),
            pair(
                "entities[1].parent",
                &format!("expected null or an entity index below 2, found {found}")
            )
        );
    }
    // The last entity may be a parent, also of an entity before it.
    let registry = registry();
    EntityCompiler::new(&registry)
        .compile_str(r#"{"entities": [{"parent": 1}, {}]}"#)
        .unwrap();
}

#[test]
fn a_cycle_names_its_entities() {
    let (path, message) =
        error(r#"{"entities": [{}, {"parent": 2}, {"parent": 3}, {"parent": 1}]}"#);
    assert_eq!(path, "entities[1].parent");
    assert_eq!(
        message,
        "the chain of parents from this entity comes back to it (a cycle: 1 -> 2 -> 3 -> 1)"
    );
}

#[test]
fn components_are_checked_with_their_paths() {
    assert_eq!(
        error(r#"{"entities": [{"components": [1]}]}"#),
        pair(
            "entities[0].components",
            "expected an object of components, found an array"
        )
    );
    let (path, message) = error(r#"{"entities": [{"components": {"position": {}}}]}"#);
    assert_eq!(path, "entities[0].components.position");
    assert!(message.starts_with("unknown component `position`; registered: "));
    for name in ["pos", "name", "tags"] {
        assert!(message.contains(name), "{message}");
    }
    // Inside a component: the field, a missing field, an element of a sequence.
    let (path, message) =
        error(r#"{"entities": [{}, {"components": {"pos": {"x": "fast", "y": 0}}}]}"#);
    assert_eq!(path, "entities[1].components.pos.x");
    assert!(message.contains("expected f32"), "{message}");
    let (path, message) = error(r#"{"entities": [{"components": {"pos": {"x": 1}}}]}"#);
    assert_eq!(path, "entities[0].components.pos");
    assert!(message.contains("missing field `y`"), "{message}");
    let (path, message) = error(r#"{"entities": [{"components": {"tags": [1, 300]}}]}"#);
    assert_eq!(path, "entities[0].components.tags[1]");
    assert!(message.contains("u8"), "{message}");
    let (path, _) = error(r#"{"entities": [{"components": {"name": 5}}]}"#);
    assert_eq!(path, "entities[0].components.name");
}

#[test]
fn every_error_is_reported_in_entity_order() {
    let found = errors(
        r#"{"entities": [
            {"components": {"pos": {"x": "a", "y": 0}}},
            {"parent": 9},
            {"components": {"nope": 1}},
            7
        ], "x": 1}"#,
    );
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "x",
            "entities[0].components.pos.x",
            "entities[1].parent",
            "entities[2].components.nope",
            "entities[3]"
        ]
    );
}

#[test]
fn errors_beyond_the_cap_are_counted_not_listed() {
    let registry = registry();
    let bad: Vec<&str> = vec!["1"; MAX_ERRORS + 50];
    let json = format!(r#"{{"entities": [{}]}}"#, bad.join(", "));
    let err = EntityCompiler::new(&registry)
        .compile_str(&json)
        .unwrap_err();
    assert_eq!(err.errors.len(), MAX_ERRORS);
    assert_eq!(err.more, 50);
    assert_eq!(err.errors[0].path, "entities[0]");
    assert_eq!(
        err.errors[MAX_ERRORS - 1].path,
        format!("entities[{}]", MAX_ERRORS - 1)
    );
    let text = err.to_string();
    assert_eq!(text.lines().count(), MAX_ERRORS + 1);
    assert!(text.starts_with("entities[0]: expected an entity object, found a number\n"));
    assert!(text.ends_with("\n… and 50 more"), "{text}");
    // Exactly at the cap: nothing counted beyond it, no "more" line.
    let json = format!(r#"{{"entities": [{}]}}"#, vec!["1"; MAX_ERRORS].join(", "));
    let err = EntityCompiler::new(&registry)
        .compile_str(&json)
        .unwrap_err();
    assert_eq!((err.errors.len(), err.more), (MAX_ERRORS, 0));
    assert!(!err.to_string().contains("more"));
}

#[test]
fn a_path_error_displays_its_path_first() {
    let e = PathError {
        path: "entities[2].parent".into(),
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "entities[2].parent: bad");
    let e = PathError {
        path: String::new(),
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "bad");
}

/// A key twice in one object once compiled, the last value winning
/// silently (`"pos"` twice gave the blob of the second).
#[test]
fn a_key_twice_in_one_object_is_refused_with_its_line() {
    assert_eq!(
        error("{\"entities\": [{\"components\": {\"pos\": [0, 0, 0],\n \"pos\": [1, 1, 1]}}]}"),
        pair(
            "",
            "key `pos` appears twice in one object at line 2 column 6"
        )
    );
    assert_eq!(
        error("{\"entities\": [], \"entities\": []}"),
        pair(
            "",
            "key `entities` appears twice in one object at line 1 column 27"
        )
    );
    // Deep inside a component's value, and in any object of an array.
    let (_, message) = error(
        "{\"entities\": [{\"components\": {\"name\": \"a\"}}, {\"components\": {\"tags\": [], \"name\": \"b\", \"tags\": [1]}}]}",
    );
    assert!(message.starts_with("key `tags` appears twice"), "{message}");
    // The same key in two objects is fine.
    let registry = registry();
    EntityCompiler::new(&registry)
        .compile_str("{\"entities\": [{\"components\": {\"name\": \"a\"}}, {\"components\": {\"name\": \"b\"}}]}")
        .unwrap();
}

/// A squad: entities inside a serde (postcard) component, below the component's own value.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Squad {
    members: Vec<sigecs::entity::Entity>,
}

impl crate::MapEntities for Squad {
    fn map_entities(
        &mut self,
        map: &mut dyn FnMut(sigecs::entity::Entity) -> sigecs::entity::Entity,
    ) {
        for m in &mut self.members {
            *m = map(*m);
        }
    }
}

/// A registry with entity references: `link`, plain old data, is one entity; `squad`, postcard,
/// holds a list of them.
fn registry_with_references() -> Registry {
    use sigecs::entity::Entity;
    Registry::new([
        Registration::pod::<Pos>("pos"),
        Registration::pod::<Entity>("link").map_entities::<Entity>(),
        Registration::serde::<Squad>("squad").map_entities::<Squad>(),
    ])
    .unwrap()
}

/// The errors of compiling `json` with [`registry_with_references`].
fn reference_errors(json: &str) -> Vec<PathError> {
    let registry = registry_with_references();
    EntityCompiler::new(&registry)
        .compile_str(json)
        .expect_err("the level must not compile")
        .errors
}

/// A reported problem: an entity reference was read as its low 30 bits, so `1073741824` (2^30)
/// became entity 0, `1073741825` entity 1 and `4294967295` "none" (NO_ENTITY), silently; the
/// same values in a blob are refused by the verifier. A value that is not an index of the
/// level's entities (or NO_ENTITY's bits, for none) is now refused at its path.
#[test]
fn an_entity_reference_outside_the_level_is_refused_at_its_path() {
    let expected = |found: &str| {
        format!(
            "expected an entity index below 4 (or {} for none), found {found}",
            NO_ENTITY.to_bits()
        )
    };
    for (value, found) in [
        ("4", "4"),
        ("1073741824", "1073741824"),
        ("1073741825", "1073741825"),
        ("4294967295", "4294967295"),
        ("4294967296", "4294967296"),
        ("18446744073709551615", "18446744073709551615"),
        ("18446744073709551616", "1.8446744073709552e+19"),
        ("-1", "-1"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("0.5", "0.5"),
        ("2.0", "2.0"),
        ("true", "true"),
        ("\"2\"", "\"2\""),
        ("null", "null"),
        ("{}", "an object"),
    ] {
        let json =
            format!(r#"{{"entities": [{{}}, {{}}, {{}}, {{"components": {{"link": {value}}}}}]}}"#);
        assert_eq!(
            reference_errors(&json),
            [PathError {
                path: "entities[3].components.link".into(),
                message: expected(found),
            }],
            "link {value}"
        );
    }
    // Inside a component's value: the path goes down to the element.
    assert_eq!(
        reference_errors(
            r#"{"entities": [{"components": {"squad": {"members": [1, 1073741825]}}}, {}]}"#
        ),
        [PathError {
            path: "entities[0].components.squad.members[1]".into(),
            message: format!(
                "expected an entity index below 2 (or {} for none), found 1073741825",
                NO_ENTITY.to_bits()
            ),
        }]
    );
    // Every error is reported, in entity order.
    let paths: Vec<String> = reference_errors(
        r#"{"entities": [{"components": {"link": 2}}, {"components": {"squad": {"members": [-1]}}}]}"#,
    )
    .into_iter()
    .map(|e| e.path)
    .collect();
    assert_eq!(
        paths,
        [
            "entities[0].components.link",
            "entities[1].components.squad.members[0]"
        ]
    );
}

#[test]
fn entity_references_of_the_level_compile() {
    use sigecs::entity::Entity;
    let registry = registry_with_references();
    // The last entity, an entity itself, "none", and references to entities further on.
    let none = NO_ENTITY.to_bits();
    let blob = EntityCompiler::new(&registry)
        .compile_str(&format!(
            r#"{{"entities": [
                {{"components": {{"link": 2, "squad": {{"members": [0, 1, 2, {none}]}}}}}},
                {{"components": {{"link": 1}}}},
                {{"parent": 0, "components": {{"link": {none}}}}}
            ]}}"#
        ))
        .unwrap();
    let level = verify(
        &blob[..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    let links = level.component("link").unwrap();
    assert_eq!(
        links.pod::<Entity>().unwrap().as_ref(),
        [Entity::from_bits(2), Entity::from_bits(1), NO_ENTITY]
    );
    assert_eq!(
        level.component("squad").unwrap().decode::<Squad>().unwrap(),
        [Squad {
            members: vec![
                Entity::from_bits(0),
                Entity::from_bits(1),
                Entity::from_bits(2),
                NO_ENTITY
            ]
        }]
    );
}

#[test]
fn a_parent_outside_the_level_is_refused() {
    // Parents never went through the 30-bit mask; these pin that every number that is not an
    // index of the level is refused, the largest included.
    for (parent, found) in [
        ("1073741824", "1073741824"),
        ("4294967295", "4294967295"),
        ("4294967296", "4294967296"),
        ("18446744073709551616", "1.8446744073709552e+19"),
    ] {
        assert_eq!(
            error(&format!(
                r#"{{"entities": [{{}}, {{"parent": {parent}}}]}}"#
            )),
            pair(
                "entities[1].parent",
                &format!("expected null or an entity index below 2, found {found}")
            )
        );
    }
    // serde_json reads `-0` as a float.
    assert_eq!(
        error(r#"{"entities": [{"parent": -0}, {}]}"#),
        pair(
            "entities[0].parent",
            "expected null or an entity index below 2, found -0.0"
        )
    );
}

/// Numbers for `f32`s: `Pos` (plain old data), a `Vec<f32>` (postcard), the hierarchy's matrix.
fn registry_with_floats() -> Registry {
    Registry::new([
        Registration::pod::<Pos>("pos"),
        Registration::serde::<Vec<f32>>("weights"),
        Registration::local_transform(),
        Registration::pod::<f64>("wide"),
        Registration::serde::<Option<f32>>("maybe"),
    ])
    .unwrap()
}

/// A reported problem: a number too large for an `f32` became `+inf` (`1e39`), silently, while
/// one too large for an `f64` (`1e400`) was refused. It is now an error at its path, for every
/// registered type that reads an `f32`.
#[test]
fn a_number_out_of_range_for_an_f32_is_refused_at_its_path() {
    let registry = registry_with_floats();
    let compile = |json: &str| EntityCompiler::new(&registry).compile_str(json);
    let out_of_range =
        |v: &str| format!("{v} is out of range for f32 (largest magnitude 3.4028235e38)");
    let err = compile(
        r#"{"entities": [
            {"components": {"pos": {"x": 1e39, "y": 0}}},
            {"components": {"pos": {"x": 0, "y": -1e39}}},
            {"components": {"weights": [1, 2, 3.4028236e38]}},
            {"components": {"local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,1e100,1]}},
            {"components": {"maybe": 1e300}},
            {"components": {"pos": {"x": 100000000000000000000000000000000000000000, "y": 0}}}
        ]}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.errors,
        [
            PathError {
                path: "entities[0].components.pos.x".into(),
                message: out_of_range("1e39"),
            },
            PathError {
                path: "entities[1].components.pos.y".into(),
                message: out_of_range("-1e39"),
            },
            PathError {
                path: "entities[2].components.weights[2]".into(),
                message: out_of_range("3.4028236e38"),
            },
            PathError {
                path: "entities[3].components.local_transform[14]".into(),
                message: out_of_range("1e100"),
            },
            PathError {
                path: "entities[4].components.maybe".into(),
                message: out_of_range("1e300"),
            },
            PathError {
                path: "entities[5].components.pos.x".into(),
                message: out_of_range("1e41"),
            },
        ]
    );
    // Beyond f64 it is not a JSON number serde_json reads, as before.
    assert_eq!(
        compile(r#"{"entities": [{"components": {"pos": {"x": 1e400, "y": 0}}}]}"#)
            .unwrap_err()
            .errors,
        [PathError {
            path: String::new(),
            message: "not valid JSON: number out of range at line 1 column 48".into()
        }]
    );
}

#[test]
fn numbers_that_round_to_an_f32_compile_as_before() {
    let registry = registry_with_floats();
    // `3.4028235e38` is how f32::MAX is written, and is slightly above it: it rounds to it.
    // Tiny numbers round to subnormals or zero. An f64 holds 1e39.
    let blob = EntityCompiler::new(&registry)
        .compile_str(
            r#"{"entities": [
                {"components": {"pos": {"x": 3.4028235e38, "y": -3.4028235e38}, "wide": 1e39}},
                {"components": {"pos": {"x": 1e-40, "y": -1e-50}, "weights": [1e-46, 0.1], "maybe": null}}
            ]}"#,
        )
        .unwrap();
    let level = verify(
        &blob[..],
        &registry,
        AnySet::default(),
        &VerifyOptions::default(),
    )
    .unwrap();
    let pos = level.component("pos").unwrap();
    let pos = pos.pod::<Pos>().unwrap();
    assert_eq!(
        pos[0],
        Pos {
            x: f32::MAX,
            y: -f32::MAX
        }
    );
    assert_eq!(pos[1].x, 1e-40_f32);
    assert!(pos[1].x.is_subnormal());
    assert_eq!(pos[1].y.to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        level
            .component("weights")
            .unwrap()
            .decode::<Vec<f32>>()
            .unwrap(),
        [vec![0.0, 0.1]]
    );
    assert_eq!(
        level.component("wide").unwrap().pod::<f64>().unwrap()[0],
        1e39
    );
    assert_eq!(
        level
            .component("maybe")
            .unwrap()
            .decode::<Option<f32>>()
            .unwrap(),
        [None]
    );
}

/// Orders, to reach every kind of place a value can sit in: enum variants of each shape, map
/// values, options, nested sequences.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Order {
    Hold,
    Move(f32),
    Follow(sigecs::entity::Entity, f32),
    Guard {
        at: Option<sigecs::entity::Entity>,
        radius: f32,
    },
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Orders {
    list: Vec<Order>,
    speeds: std::collections::BTreeMap<String, f32>,
    grid: Vec<(u8, [f32; 2])>,
}

#[test]
fn the_checks_reach_every_depth_of_a_component() {
    let registry = Registry::new([Registration::serde::<Orders>("orders")]).unwrap();
    let compile = |json: &str| EntityCompiler::new(&registry).compile_str(json);
    let at = |orders: &str| {
        format!(r#"{{"entities": [{{"components": {{"orders": {orders}}}}}, {{}}]}}"#)
    };
    let valid = r#"{"list": ["Hold", {"Move": 1}, {"Follow": [1, 2]}, {"Guard": {"at": 0, "radius": 3}}],
                    "speeds": {"slow": 1}, "grid": [[1, [0, 1]]]}"#;
    compile(&at(valid)).unwrap();
    let f32_error = "1e39 is out of range for f32 (largest magnitude 3.4028235e38)";
    let entity_error = format!(
        "expected an entity index below 2 (or {} for none), found 2",
        NO_ENTITY.to_bits()
    );
    for (orders, path, message) in [
        (
            valid.replace(r#"{"Move": 1}"#, r#"{"Move": 1e39}"#),
            "list[1].Move",
            f32_error.to_string(),
        ),
        (
            valid.replace("[1, 2]", "[2, 2]"),
            "list[2].Follow[0]",
            entity_error.clone(),
        ),
        (
            valid.replace("[1, 2]", "[1, 1e39]"),
            "list[2].Follow[1]",
            f32_error.to_string(),
        ),
        (
            valid.replace(r#""at": 0"#, r#""at": 2"#),
            "list[3].Guard.at",
            entity_error.clone(),
        ),
        (
            valid.replace(r#""radius": 3"#, r#""radius": 1e39"#),
            "list[3].Guard.radius",
            f32_error.to_string(),
        ),
        (
            valid.replace(r#""slow": 1"#, r#""slow": 1e39"#),
            "speeds.slow",
            f32_error.to_string(),
        ),
        (
            valid.replace("[0, 1]", "[0, 1e39]"),
            "grid[0][1][1]",
            f32_error.to_string(),
        ),
    ] {
        let err = compile(&at(&orders)).unwrap_err();
        assert_eq!(
            err.errors,
            [PathError {
                path: format!("entities[0].components.orders.{path}"),
                message,
            }]
        );
    }
}

/// The compiler reads the document as a stream, in document order, and lists the errors of an
/// object in key order, as it did when it read a whole `serde_json::Value` (whose objects
/// iterate in key order): the same level gives the same errors, the cap included.
#[test]
fn errors_are_listed_in_key_order_within_an_object() {
    assert_eq!(
        errors(
            r#"{"zz": 1, "entities": [
                {"components": {"tags": "x", "pos": 5, "nope": 1}, "zkey": 1, "parent": 7, "akey": 2},
                {"components": 3, "parent": -1}
            ], "aa": 2}"#
        ),
        [
            pair("aa", "unknown key: expected only \"entities\""),
            pair("zz", "unknown key: expected only \"entities\""),
            pair(
                "entities[0].akey",
                "unknown key: an entity has \"parent\" and \"components\""
            ),
            pair(
                "entities[0].zkey",
                "unknown key: an entity has \"parent\" and \"components\""
            ),
            pair(
                "entities[0].parent",
                "expected null or an entity index below 2, found 7"
            ),
            pair(
                "entities[0].components.nope",
                "unknown component `nope`; registered: name, pos, tags"
            ),
            pair(
                "entities[0].components.pos",
                "invalid type: integer `5`, expected struct Pos"
            ),
            pair(
                "entities[0].components.tags",
                "invalid type: string \"x\", expected a sequence"
            ),
            pair(
                "entities[1].parent",
                "expected null or an entity index below 2, found -1"
            ),
            pair(
                "entities[1].components",
                "expected an object of components, found a number"
            ),
        ]
    );
    // Many unknown keys in one entity, after a bad document key: the first ones in key order
    // are listed, the others counted.
    let registry = registry();
    let keys: Vec<String> = (0..3 * MAX_ERRORS)
        .rev()
        .map(|k| format!(r#""k{k:04}": {k}"#))
        .collect();
    let json = format!(
        r#"{{"entities": [{{{}}}, {{"parent": 5}}], "top": 1}}"#,
        keys.join(", ")
    );
    let err = EntityCompiler::new(&registry)
        .compile_str(&json)
        .unwrap_err();
    assert_eq!(err.errors.len(), MAX_ERRORS);
    assert_eq!(err.more, 3 * MAX_ERRORS + 2 - MAX_ERRORS);
    assert_eq!(err.errors[0].path, "top");
    assert_eq!(err.errors[1].path, "entities[0].k0000");
    assert_eq!(
        err.errors[MAX_ERRORS - 1].path,
        format!("entities[0].k{:04}", MAX_ERRORS - 2)
    );
}
