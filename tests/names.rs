//! Any declared name works. The `names` fixture world declares types whose
//! snake-case names are keywords (`Crate`, `Box`, `Type`, `Match`, `Loop`), raw identifiers
//! (`r#move`, `fn r#match`), names that snake-case alike (`HTTPClient`/`HttpClient`,
//! `HTTPServer`/`HttpServer`), fields named like generated internals (`entities`, `len`,
//! `row`, `cold`, `entity`, `columns`, `rows`, `stores`), signatures named `Stores` and
//! `Part` (a pass's local types), components in a private module re-exported with `pub use hidden::*;`, and a
//! file no `mod` line reaches. That the fixture crate compiles is half the test; this file
//! checks that each works.

use sigecs::WorldModel;
use sigecs_fixtures::names::keywords::{self as k, *};
use sigecs_fixtures::names::{Secret, Vault, World};

#[test]
fn every_awkward_name_spawns_runs_and_reads_back() {
    let mut w = World::new();
    let c = w.spawn(Crate {
        entities: Type(1),
        len: r#move(2),
    });
    let b = w.spawn(k::Box {
        row: Type(3),
        cold: Match("cold".into()),
        entity: Secret(4),
    });
    let h1 = w.spawn(HTTPClient { columns: Type(5) });
    let h2 = w.spawn(HttpClient {
        rows: Type(6),
        r#type: Match("t".into()),
    });
    let p = w.spawn(Part {
        stores: r#move(7),
        r#match: Match("m".into()),
    });
    let m = w.spawn(Stores {
        secret: Secret(8),
        m: r#move(9),
    });
    let v = w.spawn(Vault { secret: Secret(10) });
    w.resource_mut::<Loop>().0 = 100;
    w.run_match().unwrap();
    assert_eq!(w.get::<Type>(c), Some(&Type(101)));
    assert_eq!(w.get::<Type>(b), Some(&Type(103)));
    assert_eq!(w.get::<Type>(h1), Some(&Type(105)));
    assert_eq!(w.get::<Type>(h2), Some(&Type(106)));
    assert_eq!(w.signature_name_of(h1), Some("HTTPClient"));
    assert_eq!(w.signature_name_of(h2), Some("HttpClient"));
    w.run_serve();
    assert_eq!(w.resource::<HTTPServer>().0, 2 + 7 + 9);
    assert_eq!(w.resource::<HttpServer>().0, -(2 + 7 + 9));
    assert_eq!(
        w.resources().http_server.0,
        18,
        "the first keeps its snake-case name"
    );
    assert_eq!(
        w.resources().http_server_1.0,
        -18,
        "the second gets its index"
    );
    assert_eq!(w.resources().loop_.0, 100, "a keyword gains `_`");
    w.run_reveal();
    assert_eq!(w.get::<Secret>(b), Some(&Secret(5)));
    assert_eq!(w.get::<Secret>(m), Some(&Secret(9)));
    assert_eq!(w.get::<Secret>(v), Some(&Secret(11)));
    assert_eq!(w.get::<Match>(p).map(|m| m.0.as_str()), Some("m"));
    // Names in the tables are as declared, without `r#`.
    let names: Vec<&str> = sigecs_fixtures::names::Model::components()
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["Match", "Secret", "Type", "move"]);
    // So are the named set's flags: one name per component in code, text and messages.
    use sigecs::bitflags::Flags;
    use sigecs_fixtures::names::ComponentSet;
    let set = w.signature_of(m).unwrap();
    assert_eq!(set, ComponentSet::SECRET | ComponentSet::MOVE);
    assert_eq!(set.to_string(), "SECRET | MOVE");
    assert_eq!("MOVE | SECRET".parse::<ComponentSet>().unwrap(), set);
    let flags: Vec<&str> = ComponentSet::all().iter_names().map(|(n, _)| n).collect();
    assert_eq!(flags, ["MATCH", "SECRET", "TYPE", "MOVE"]);
    assert!(sigecs_fixtures::names::SYSTEM_NAMES.contains(&"match"));
    // Ten runs push `Type` past 1000 and the raw-named system despawns through its commands.
    for _ in 0..10 {
        w.run_match().unwrap();
    }
    assert!(!w.is_alive(c));
    assert_eq!(w.check_invariants(), Ok(()));
}

#[test]
fn the_hidden_module_is_named_through_its_reexport_and_the_orphan_is_not_scanned() {
    let names: Vec<&str> = sigecs_fixtures::names::Model::stores()
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            "Box",
            "Crate",
            "HTTPClient",
            "HttpClient",
            "Part",
            "Stores",
            "Vault"
        ]
    );
    let systems = sigecs_fixtures::names::SYSTEM_NAMES;
    assert_eq!(systems, ["reveal", "match", "serve"], "in `mod` order");
}

#[test]
fn a_world_without_the_prelude_runs() {
    use sigecs_fixtures::bare::*;
    let mut w = World::new();
    w.resource_mut::<Scale>().0 = 10.0;
    w.resource_mut::<Limit>().0 = 100.0;
    let a = w.spawn(Plain { mass: Mass(2.0) });
    let b = w.spawn(Tagged {
        mass: Mass(200.0),
        tag: Tag("heavy".into()),
    });
    let c = w.spawn(Tagged {
        mass: Mass(1.0),
        tag: Tag("light".into()),
    });
    let d = w.spawn(Plain { mass: Mass(0.5) });
    w.run_all().unwrap();
    assert_eq!(w.get::<Mass>(a).map(|m| m.0), Some(20.0));
    assert_eq!(w.resource::<Sum>().0, 2035.0);
    assert!(!w.is_alive(b), "despawned by the total system's commands");
    let tag = |w: &World, e| w.get::<Tag>(e).map(|t| t.0.clone());
    assert_eq!(tag(&w, c).as_deref(), Some("light!"), "renamed");
    assert_eq!(
        tag(&w, a).as_deref(),
        Some("marked"),
        "20 × 10 > 100: tagged"
    );
    assert_eq!(tag(&w, d), None, "5 × 10 ≤ 100");
    assert_eq!(SYSTEM_NAMES, ["scale", "total", "rename", "mark"]);
    assert_eq!(
        World::schedule().stages[2].systems,
        ["rename", "mark"],
        "rename and mark share the stage after total's commands"
    );
}
