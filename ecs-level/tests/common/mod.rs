//! Components, a registry and a model shared by the level tests and the fuzz targets
//! (`fuzz/` includes this file by path).
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use sigecs_level::{
    AnySet, ComponentData, LevelError, LevelWriter, Registration, Registry, VerifiedLevel,
    VerifyOptions,
};

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    bytemuck::Pod,
    bytemuck::Zeroable,
    Serialize,
    Deserialize,
)]
#[repr(C)]
pub struct Position {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    bytemuck::Pod,
    bytemuck::Zeroable,
    Serialize,
    Deserialize,
)]
#[repr(C)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    bytemuck::Pod,
    bytemuck::Zeroable,
    Serialize,
    Deserialize,
)]
#[repr(C)]
pub struct Health {
    pub hp: u32,
    pub max: u32,
}

/// A zero-sized tag component.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    bytemuck::Pod,
    bytemuck::Zeroable,
    Serialize,
    Deserialize,
)]
#[repr(C)]
pub struct Marker;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Name(pub String);

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub items: Vec<String>,
    pub gold: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Kind {
    Static,
    Dynamic { mass: f32 },
    Scripted(String),
}

pub fn registry() -> Registry {
    Registry::new([
        Registration::pod::<Position>("position"),
        Registration::pod::<Velocity>("velocity").spawn_order(1),
        Registration::pod::<Health>("health"),
        Registration::pod::<Marker>("marker"),
        Registration::serde::<Name>("name").spawn_order(-1),
        Registration::serde::<Inventory>("inventory"),
        Registration::serde::<Kind>("kind"),
    ])
    .expect("test registry")
}

/// One entity of a level, as plain Rust values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntityModel {
    pub parent: Option<u32>,
    pub position: Option<Position>,
    pub velocity: Option<Velocity>,
    pub health: Option<Health>,
    pub marker: Option<Marker>,
    pub name: Option<Name>,
    pub inventory: Option<Inventory>,
    pub kind: Option<Kind>,
}

/// The JSON document the compiler reads for these entities.
pub fn to_json(entities: &[EntityModel]) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let list: Vec<Value> = entities
        .iter()
        .map(|e| {
            let mut c = Map::new();
            let mut put = |k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    c.insert(k.to_string(), v);
                }
            };
            put(
                "position",
                e.position.map(|v| serde_json::to_value(v).unwrap()),
            );
            put(
                "velocity",
                e.velocity.map(|v| serde_json::to_value(v).unwrap()),
            );
            put("health", e.health.map(|v| serde_json::to_value(v).unwrap()));
            put("marker", e.marker.map(|v| serde_json::to_value(v).unwrap()));
            put(
                "name",
                e.name.as_ref().map(|v| serde_json::to_value(v).unwrap()),
            );
            put(
                "inventory",
                e.inventory
                    .as_ref()
                    .map(|v| serde_json::to_value(v).unwrap()),
            );
            put(
                "kind",
                e.kind.as_ref().map(|v| serde_json::to_value(v).unwrap()),
            );
            json!({ "parent": e.parent, "components": c })
        })
        .collect();
    json!({ "entities": list })
}

/// Reads a verified level back into models (every component of the test registry).
pub fn read_back<B: AsRef<[u8]>>(
    res: &VerifiedLevel<'_, B>,
) -> Result<Vec<EntityModel>, LevelError> {
    let mut out: Vec<EntityModel> = (0..res.num_entities())
        .map(|e| EntityModel {
            parent: res.parent(e),
            ..Default::default()
        })
        .collect();
    fn pod<T: bytemuck::Pod>(
        c: &ComponentData<'_>,
        out: &mut [EntityModel],
        set: impl Fn(&mut EntityModel, T),
    ) -> Result<(), LevelError> {
        let values = c.pod::<T>()?;
        for (e, v) in c.entity_indices().zip(values.iter()) {
            set(&mut out[e as usize], *v);
        }
        Ok(())
    }
    for c in res.component_types() {
        match c.name() {
            Some("position") => pod::<Position>(&c, &mut out, |m, v| m.position = Some(v))?,
            Some("velocity") => pod::<Velocity>(&c, &mut out, |m, v| m.velocity = Some(v))?,
            Some("health") => pod::<Health>(&c, &mut out, |m, v| m.health = Some(v))?,
            Some("marker") => pod::<Marker>(&c, &mut out, |m, v| m.marker = Some(v))?,
            Some("name") => c.decode_each::<Name>(|e, v| out[e as usize].name = Some(v))?,
            Some("inventory") => {
                c.decode_each::<Inventory>(|e, v| out[e as usize].inventory = Some(v))?
            }
            Some("kind") => c.decode_each::<Kind>(|e, v| out[e as usize].kind = Some(v))?,
            _ => {}
        }
    }
    Ok(out)
}

/// Writes models with the writer, pushing components in a scrambled order.
pub fn write_models(registry: &Registry, entities: &[EntityModel]) -> Result<Vec<u8>, LevelError> {
    let mut w = LevelWriter::new();
    w.add_entities(entities.len() as u32)?;
    for (i, e) in entities.iter().enumerate().rev() {
        let i = i as u32;
        w.set_parent(i, e.parent)?;
        let r = |n: &str| registry.by_name(n).unwrap();
        if let Some(v) = &e.kind {
            w.push(r("kind"), i, v)?;
        }
        if let Some(v) = &e.position {
            w.push(r("position"), i, v)?;
        }
        if let Some(v) = &e.velocity {
            w.push(r("velocity"), i, v)?;
        }
        if let Some(v) = &e.health {
            w.push(r("health"), i, v)?;
        }
        if let Some(v) = &e.marker {
            w.push(r("marker"), i, v)?;
        }
        if let Some(v) = &e.name {
            w.push(r("name"), i, v)?;
        }
        if let Some(v) = &e.inventory {
            w.push(r("inventory"), i, v)?;
        }
    }
    w.finish()
}

/// Rebuilds a verified level's blob from its parts with the writer (known components only).
pub fn rewrite<B: AsRef<[u8]>>(res: &VerifiedLevel<'_, B>) -> Result<Vec<u8>, LevelError> {
    let mut w = LevelWriter::new();
    for p in res.parents() {
        w.add_entity(p)?;
    }
    for c in res.component_types() {
        let Some(reg) = c.registration() else {
            continue;
        };
        for (e, bytes) in c.entity_indices().zip(c.instances()?) {
            w.push_encoded(reg, e, bytes)?;
        }
    }
    w.finish()
}

/// Checks everything a spawner relies on in a level the verifier accepted; panics (a test
/// failure) on any inconsistency.
pub fn assert_consistent<B: AsRef<[u8]>>(res: &VerifiedLevel<'_, B>) {
    let n = res.num_entities();
    let mut all_known = true;
    for c in res.component_types() {
        let idx: Vec<u32> = c.entity_indices().collect();
        assert_eq!(idx.len(), c.len() as usize);
        assert_eq!(&idx[..], &c.entity_index()[..]);
        assert!(idx.windows(2).all(|w| w[0] < w[1]), "entity indices ascend");
        assert!(idx.iter().all(|&e| e < n), "entity indices in range");
        if c.is_pod() {
            assert_eq!(
                c.instance_data().len(),
                c.len() as usize * c.element_size() as usize
            );
        }
        match c.registration() {
            Some(_) => assert_eq!(
                c.instances().expect("known instances split").len(),
                c.len() as usize
            ),
            None => all_known = false,
        }
    }
    let models = read_back(res).expect("a verified level decodes");
    assert_eq!(models.len(), n as usize);
    let mut stores = 0u64;
    for e in 0..n {
        let d = res.depth_of(e).unwrap();
        match res.parent(e) {
            None => assert_eq!(d, 0),
            Some(p) => {
                assert!(p < n);
                assert_eq!(d, res.depth_of(p).unwrap() + 1);
            }
        }
        assert!(res.entity_store(e).is_some());
    }
    for s in res.sets() {
        stores += s.entities as u64;
    }
    assert_eq!(stores, n as u64, "every entity is in exactly one set");
    let order = res.parents_first();
    let mut seen = vec![false; n as usize];
    for &e in &order {
        if let Some(p) = res.parent(e) {
            assert!(seen[p as usize], "parents first");
        }
        seen[e as usize] = true;
    }
    let _ = res.spawn_order().count();
    let _ = sigecs_level::LevelReport::of(res).to_string();
    let again = rewrite(res).expect("a verified level rewrites");
    if all_known {
        assert_eq!(again, res.bytes(), "verified blobs are canonical");
    } else {
        let reg = res.registry();
        sigecs_level::verify(
            &again[..],
            reg,
            AnySet::default(),
            &VerifyOptions::default(),
        )
        .expect("a rewritten level verifies");
    }
}

/// A small level with every kind of component and a three-level hierarchy.
pub fn sample_models() -> Vec<EntityModel> {
    vec![
        EntityModel {
            position: Some(Position {
                x: 1.0,
                y: 2.0,
                z: 3.0,
            }),
            velocity: Some(Velocity {
                x: 0.5,
                y: 0.0,
                z: -1.0,
            }),
            name: Some(Name("ship".into())),
            kind: Some(Kind::Dynamic { mass: 10.0 }),
            ..Default::default()
        },
        EntityModel {
            parent: Some(0),
            position: Some(Position {
                x: 0.0,
                y: 1.0,
                z: 0.0,
            }),
            health: Some(Health { hp: 80, max: 100 }),
            marker: Some(Marker),
            ..Default::default()
        },
        EntityModel {
            parent: Some(1),
            inventory: Some(Inventory {
                items: vec!["key".into(), "map".into()],
                gold: 300,
            }),
            kind: Some(Kind::Scripted("door.lua".into())),
            ..Default::default()
        },
        EntityModel {
            parent: None,
            position: Some(Position {
                x: -4.0,
                y: 0.0,
                z: 9.5,
            }),
            kind: Some(Kind::Static),
            name: Some(Name("rock".into())),
            ..Default::default()
        },
    ]
}
