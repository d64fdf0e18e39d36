//! Components kept outside the signature stores in levels: a structure-of-arrays
//! manager's component (the fixtures' `PointMassManager` and one declared here, both derived)
//! spawns into its manager beside the transform hierarchy; spawners run in spawn order; a
//! spawner that refuses its instances leaves the world and every manager as they were; a
//! kept-outside component with no spawner is an error; and the round trips blob → world → blob
//! (byte-identical) and world → blob → world (values) hold for them.

use std::cell::RefCell;
use std::rc::Rc;

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};
use serde::{Deserialize, Serialize};
use sigecs::entity::Entity;
use sigecs::soa::SoaManager;
use sigecs::transform::TransformManager;
use sigecs::SoaManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Particle};
use sigecs_demo::{level_registry, World};
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use sigecs_level::{
    EntityCompiler, LevelError, OutsideSave, OutsideSpawn, OutsideStores, Registration, Registry,
    VerifiedLevel, VerifyOptions, WorldLevels,
};

// `registry()`: the bundled registry (which registers `heat`, declared with
// `#[soa(level = "heat")]`) plus `point_mass`, registered by hand; both kept outside the
// stores.
mod level_fuzz;
use level_fuzz::registry;

const LEVEL: &str = r#"{"entities": [
    {"components": {"position": [1, 2, 3], "name": "sun",
                    "point_mass": {"mass": 5, "position": [1, 2, 3], "velocity": [0, 0, 0],
                                   "acceleration": [0, 0, 0]},
                    "heat": {"celsius": 5000, "rate": -1}}},
    {"parent": 0, "components": {"position": [4, 5, 6], "name": "planet",
                                 "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 3,3,3,1],
                                 "point_mass": {"mass": 0.5, "position": [4, 5, 6],
                                                "velocity": [1, 0, 0],
                                                "acceleration": [0, -1, 0]}}},
    {"components": {"position": [0, 0, 0], "velocity": [0, 1, 0], "lifetime": 2.5}},
    {"parent": 1, "components": {"position": [7, 8, 9], "name": "moon",
                                 "heat": {"celsius": -20, "rate": 0.25}}}
]}"#;

fn compile(json: &str, reg: &Registry) -> Vec<u8> {
    EntityCompiler::new(reg)
        .compile_str(json)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn verified<'r>(blob: &[u8], reg: &'r Registry) -> VerifiedLevel<'r, Vec<u8>> {
    World::new()
        .verify_level(blob.to_vec(), reg, &VerifyOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn pm(mass: f32, p: [f32; 3], v: [f32; 3], a: [f32; 3]) -> PointMass {
    PointMass {
        mass,
        position: Vec3::from(p),
        velocity: Vec3::from(v),
        acceleration: Vec3::from(a),
    }
}

/// A manager's instance of `e`, as its struct.
fn point_mass(m: &PointMassManager, e: Entity) -> Option<PointMass> {
    m.lookup(e).map(|i| {
        pm(
            *m.mass(i),
            m.position(i).to_array(),
            m.velocity(i).to_array(),
            m.acceleration(i).to_array(),
        )
    })
}

fn heat(m: &HeatManager, e: Entity) -> Option<Heat> {
    m.lookup(e).map(|i| Heat {
        celsius: *m.celsius(i),
        rate: *m.rate(i),
    })
}

#[test]
fn a_level_spawns_soa_components_into_their_managers() {
    let reg = registry();
    let blob = compile(LEVEL, reg);
    let res = verified(&blob, reg);
    let mut world = World::new();
    // Something already there, so ids, rows and instances do not start at 0.
    let old = world.spawn(Beacon {
        position: Position(Vec3::ONE),
        name: DebugName::new("old"),
    });
    let mut tm = TransformManager::new();
    let mut masses = PointMassManager::new();
    masses
        .create(old, pm(9.0, [9.0; 3], [0.0; 3], [0.0; 3]))
        .unwrap();
    let mut heats = HeatManager::new();
    let e = world
        .spawn_level_with_all(&res, &mut [&mut tm, &mut masses, &mut heats])
        .unwrap();
    assert_eq!(e.len(), 4);
    assert_eq!(world.len(), 5);
    world.check_invariants().unwrap();

    // The stores hold only their own components.
    assert_eq!(world.signature_name_of(e[0]), Some("Beacon"));
    assert_eq!(world.signature_name_of(e[2]), Some("Particle"));
    assert_eq!(world.get::<DebugName>(e[3]).unwrap().0, "moon");

    // Point masses: entities 0 and 1, with their values; the old instance is untouched.
    assert_eq!(masses.len(), 3);
    assert_eq!(
        point_mass(&masses, e[0]),
        Some(pm(5.0, [1.0, 2.0, 3.0], [0.0; 3], [0.0; 3]))
    );
    assert_eq!(
        point_mass(&masses, e[1]),
        Some(pm(0.5, [4.0, 5.0, 6.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]))
    );
    assert_eq!(point_mass(&masses, e[2]), None);
    assert_eq!(point_mass(&masses, e[3]), None);
    assert_eq!(point_mass(&masses, old).unwrap().mass, 9.0);

    // Heat: entities 0 and 3.
    assert_eq!(heats.len(), 2);
    assert_eq!(
        heat(&heats, e[0]),
        Some(Heat {
            celsius: 5000.0,
            rate: -1.0
        })
    );
    assert_eq!(
        heat(&heats, e[3]),
        Some(Heat {
            celsius: -20.0,
            rate: 0.25
        })
    );
    assert!(heat(&heats, e[1]).is_none() && heat(&heats, e[2]).is_none());

    // The hierarchy, through the same mechanism: 0 ← 1 ← 3, 1's local matrix.
    assert_eq!(tm.len(), 3);
    let inst = |x: Entity| tm.lookup(x).unwrap();
    assert_eq!(tm.parent(inst(e[1])).unwrap(), Some(inst(e[0])));
    assert_eq!(tm.parent(inst(e[3])).unwrap(), Some(inst(e[1])));
    assert_eq!(
        tm.world(inst(e[3])).unwrap(),
        Mat4::from_translation(Vec3::splat(3.0))
    );
    assert!(tm.lookup(e[2]).is_none());

    // A second instance (a prefab) gets instances of its own.
    let f = world
        .spawn_level_with_all(&res, &mut [&mut heats, &mut masses, &mut tm])
        .unwrap();
    assert_eq!((masses.len(), heats.len(), tm.len()), (5, 4, 6));
    assert_eq!(point_mass(&masses, f[1]).unwrap().mass, 0.5);
    assert_eq!(heat(&heats, f[3]).unwrap().celsius, -20.0);

    // One manager at a time: `spawn_level_with` takes any spawner.
    let level = compile(
        r#"{"entities": [{"components": {"position": [0, 0, 0], "name": "x",
            "heat": {"celsius": 1, "rate": 2}}}]}"#,
        reg,
    );
    let level = verified(&level, reg);
    let mut only = HeatManager::new();
    let g = world.spawn_level_with(&level, &mut only).unwrap();
    assert_eq!(
        heat(&only, g[0]),
        Some(Heat {
            celsius: 1.0,
            rate: 2.0
        })
    );
}

/// A spawner that logs its calls and can be told to refuse, around a derived manager. Its
/// `prepare` changes the manager (a placeholder instance) so that `cancel` has something to
/// undo; `write` removes it before the real instances go in.
struct Logged<'a, M> {
    name: &'static str,
    manager: &'a mut M,
    log: Rc<RefCell<Vec<String>>>,
    refuse: bool,
}

impl<'a, M> Logged<'a, M> {
    fn new(
        name: &'static str,
        manager: &'a mut M,
        log: &Rc<RefCell<Vec<String>>>,
        refuse: bool,
    ) -> Self {
        Logged {
            name,
            manager,
            log: log.clone(),
            refuse,
        }
    }
}

/// A second POD component with its own derived manager, so two logged spawners differ in type.
#[derive(SoaManager, Clone, Copy, Debug, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
#[soa(manager = "ChargeManager", level = "charge")]
#[repr(C)]
pub struct Charge {
    /// Electric charge.
    pub coulomb: f32,
}

/// The placeholder's entity: an id no test world issues.
const PLACEHOLDER: Entity = Entity::new(4_000_000, 0);

impl<M: OutsideStores + SoaManager> OutsideStores for Logged<'_, M>
where
    M::Row: Pod,
{
    fn takes(&self, registration: &Registration) -> bool {
        self.manager.takes(registration)
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
        self.log.borrow_mut().push(format!("prepare {}", self.name));
        if self.refuse {
            return Err(LevelError::Outside {
                component: spawn
                    .level()
                    .registry()
                    .by_type::<M::Row>()
                    .unwrap()
                    .component_ref(),
                message: format!("{} refuses", self.name),
            });
        }
        self.manager.prepare(spawn)?;
        let zero = M::row_into_columns(M::Row::zeroed());
        self.manager
            .soa_store_mut()
            .create(PLACEHOLDER, zero)
            .unwrap();
        Ok(())
    }

    fn cancel(&mut self, spawn: &OutsideSpawn<'_>) {
        self.log.borrow_mut().push(format!("cancel {}", self.name));
        assert!(self.manager.soa_store_mut().destroy_entity(PLACEHOLDER));
        self.manager.cancel(spawn);
    }

    fn write(&mut self, spawn: &OutsideSpawn<'_>) {
        self.log.borrow_mut().push(format!("write {}", self.name));
        assert!(self.manager.soa_store_mut().destroy_entity(PLACEHOLDER));
        self.manager.write(spawn);
    }

    fn save(&self, save: &mut OutsideSave<'_>) -> Result<(), LevelError> {
        self.manager.save(save)
    }
}

/// The bundled registry (with `heat` at its declared spawn order, 0) plus `charge` at
/// `charge`'s.
fn ordered_registry(charge: i32) -> Registry {
    level_registry()
        .with([Registration::pod::<Charge>("charge")
            .kept_outside()
            .spawn_order(charge)])
        .unwrap()
}

const CHARGED: &str = r#"{"entities": [
    {"components": {"position": [0, 0, 0], "name": "a", "heat": {"celsius": 1, "rate": 0},
                    "charge": {"coulomb": 2}}},
    {"parent": 0, "components": {"position": [1, 0, 0], "name": "b",
                                 "charge": {"coulomb": -3}}}
]}"#;

/// Spawns `CHARGED` with `charge` at spawn order `charge_order` (`heat` is at 0), the heat,
/// charge and transform spawners passed in that order; returns the log.
fn spawn_logged(charge_order: i32) -> Vec<String> {
    let reg = ordered_registry(charge_order);
    let blob = compile(CHARGED, &reg);
    let res = verified(&blob, &reg);
    let log = Rc::new(RefCell::new(Vec::new()));
    let (mut heats, mut charges, mut tm) = (
        HeatManager::new(),
        ChargeManager::new(),
        TransformManager::new(),
    );
    let mut h = Logged::new("heat", &mut heats, &log, false);
    let mut c = Logged::new("charge", &mut charges, &log, false);
    let mut world = World::new();
    let e = world
        .spawn_level_with_all(&res, &mut [&mut h, &mut c, &mut tm])
        .unwrap();
    assert_eq!(heats.len(), 1);
    assert_eq!(charges.len(), 2);
    assert_eq!(*charges.coulomb(charges.lookup(e[1]).unwrap()), -3.0);
    assert_eq!(tm.len(), 2);
    let log = log.borrow().clone();
    log
}

#[test]
fn spawners_run_in_spawn_order() {
    assert_eq!(
        spawn_logged(-1),
        [
            "prepare charge",
            "prepare heat",
            "write charge",
            "write heat"
        ]
    );
    assert_eq!(
        spawn_logged(1),
        [
            "prepare heat",
            "prepare charge",
            "write heat",
            "write charge"
        ]
    );
}

/// What a test compares to see that a refused spawn changed nothing.
fn world_state(world: &World) -> (usize, usize, Vec<(String, usize)>) {
    (
        world.len(),
        world.entity_manager().len(),
        world
            .stats()
            .stores
            .iter()
            .map(|s| (s.name.to_string(), s.entities))
            .collect(),
    )
}

fn transform_state(tm: &TransformManager) -> Vec<(Entity, Mat4, Option<Entity>)> {
    tm.entities()
        .iter()
        .map(|&e| {
            let i = tm.lookup(e).unwrap();
            let parent = tm.parent(i).unwrap().map(|p| tm.entity(p).unwrap());
            (e, tm.local(i).unwrap(), parent)
        })
        .collect()
}

#[test]
fn a_refusing_spawner_leaves_the_world_and_every_manager_unchanged() {
    let reg = ordered_registry(1);
    let blob = compile(CHARGED, &reg);
    let res = verified(&blob, &reg);
    let mut world = World::new();
    let old = world.spawn(Particle {
        position: Position(Vec3::ZERO),
        velocity: Velocity(Vec3::X),
        lifetime: Lifetime(1.0),
    });
    let mut tm = TransformManager::new();
    tm.create(old, Mat4::from_translation(Vec3::Y)).unwrap();
    let mut heats = HeatManager::new();
    heats
        .create(
            old,
            Heat {
                celsius: 7.0,
                rate: 8.0,
            },
        )
        .unwrap();
    let mut charges = ChargeManager::new();
    let before = (world_state(&world), transform_state(&tm));
    let log = Rc::new(RefCell::new(Vec::new()));
    {
        // Heat (order 1) prepares, then charge (order 2) refuses: heat is cancelled.
        let mut h = Logged::new("heat", &mut heats, &log, false);
        let mut c = Logged::new("charge", &mut charges, &log, true);
        let err = world
            .spawn_level_with_all(&res, &mut [&mut tm, &mut h, &mut c])
            .unwrap_err();
        assert_eq!(
            err,
            LevelError::Outside {
                component: reg.by_name("charge").unwrap().component_ref(),
                message: "charge refuses".into()
            }
        );
    }
    assert_eq!(
        *log.borrow(),
        ["prepare heat", "prepare charge", "cancel heat"]
    );
    assert_eq!((world_state(&world), transform_state(&tm)), before);
    world.check_invariants().unwrap();
    assert!(charges.is_empty());
    assert_eq!(heats.len(), 1);
    assert_eq!(
        heat(&heats, old),
        Some(Heat {
            celsius: 7.0,
            rate: 8.0
        })
    );

    // The bundled SoA spawner refuses an entity that already has an instance: the fresh world
    // issues the next ids in order, so give the second one an instance first.
    let mut fresh = World::new();
    let squatter = Entity::new(1, 0);
    let mut charges = ChargeManager::new();
    charges.create(squatter, Charge { coulomb: 99.0 }).unwrap();
    let mut heats = HeatManager::new();
    let mut tm = TransformManager::new();
    let err = fresh
        .spawn_level_with_all(&res, &mut [&mut tm, &mut heats, &mut charges])
        .unwrap_err();
    let LevelError::Outside { component, message } = &err else {
        panic!("{err}")
    };
    assert_eq!(component.name, Some("charge"));
    assert!(
        message.contains("already has a component instance"),
        "{message}"
    );
    assert!(fresh.is_empty());
    assert_eq!(fresh.entity_manager().len(), 0);
    fresh.check_invariants().unwrap();
    assert!(tm.is_empty() && heats.is_empty());
    assert_eq!(charges.len(), 1);
    assert_eq!(*charges.coulomb(charges.lookup(squatter).unwrap()), 99.0);

    // The world still works, and the level spawns once the squatter is gone.
    charges.destroy_entity(squatter);
    let e = fresh
        .spawn_level_with_all(&res, &mut [&mut tm, &mut heats, &mut charges])
        .unwrap();
    assert_eq!(*charges.coulomb(charges.lookup(e[0]).unwrap()), 2.0);
    assert_eq!(fresh.len(), 2);
    fresh.check_invariants().unwrap();
}

#[test]
fn a_kept_outside_component_needs_exactly_one_spawner() {
    let reg = registry();
    let blob = compile(LEVEL, reg);
    let res = verified(&blob, reg);
    let point_mass = reg.by_name("point_mass").unwrap().component_ref();
    let mut world = World::new();
    let mut tm = TransformManager::new();
    let mut heats = HeatManager::new();

    // No spawner takes point_mass: refused before anything is issued.
    let err = world
        .spawn_level_with_all(&res, &mut [&mut tm, &mut heats])
        .unwrap_err();
    assert_eq!(
        err,
        LevelError::NoSpawner {
            component: point_mass
        }
    );
    assert!(
        err.to_string().contains("no spawner given takes it"),
        "{err}"
    );
    // `spawn_level_with` and one manager: the same.
    assert!(matches!(
        world.spawn_level_with(&res, &mut tm).unwrap_err(),
        LevelError::NoSpawner { .. }
    ));
    assert!(world.is_empty());
    assert_eq!(world.entity_manager().slots(), 0);
    assert!(tm.is_empty() && heats.is_empty());

    // Two spawners of one component.
    let (mut a, mut b) = (PointMassManager::new(), PointMassManager::new());
    let err = world
        .spawn_level_with_all(&res, &mut [&mut tm, &mut a, &mut heats, &mut b])
        .unwrap_err();
    assert_eq!(
        err,
        LevelError::TwoSpawners {
            component: point_mass
        }
    );
    assert!(a.is_empty() && b.is_empty() && world.is_empty());

    // A manager of a component registered for the stores.
    let plain = level_registry()
        .with([Registration::pod::<PointMass>("point_mass")])
        .unwrap();
    let blob = compile(
        r#"{"entities": [{"components": {"position": [0,0,0], "name": "x"}}]}"#,
        &plain,
    );
    let res_plain = verified(&blob, &plain);
    let err = world.spawn_level_with(&res_plain, &mut a).unwrap_err();
    assert!(matches!(err, LevelError::NotKeptOutside { .. }), "{err}");

    // `spawn_level` spawns the stores only, as it always did with `local_transform`.
    let e = world.spawn_level(&res).unwrap();
    assert_eq!(e.len(), 4);
    assert_eq!(world.get::<DebugName>(e[1]).unwrap().0, "planet");
    world.check_invariants().unwrap();
}

#[test]
fn blob_to_world_to_blob_is_byte_identical_with_soa_components() {
    let reg = registry();
    let blob = compile(LEVEL, reg);
    let res = verified(&blob, reg);
    let mut world = World::new();
    world.spawn(Beacon {
        position: Position(Vec3::ONE),
        name: DebugName::new("old"),
    });
    let (mut tm, mut masses, mut heats) = (
        TransformManager::new(),
        PointMassManager::new(),
        HeatManager::new(),
    );
    let e = world
        .spawn_level_with_all(&res, &mut [&mut masses, &mut tm, &mut heats])
        .unwrap();
    let saved = world
        .save_entities_with(&e, reg, &[&tm, &masses, &heats])
        .unwrap();
    assert_eq!(saved, blob);
    // Without the managers their components are not saved: another, smaller blob.
    let stores_only = world.save_entities_with(&e, reg, &[&tm]).unwrap();
    assert!(stores_only.len() < blob.len());
    let again = verified(&stores_only, reg);
    assert!(again.component("point_mass").is_none() && again.component("heat").is_none());
    assert_eq!(again.parent(3), Some(1));
    // The subtree of entity 0 (0 ← 1 ← 3) with its managers' components.
    let sub = world
        .save_subtrees_with(&e[..1], reg, &tm, &[&masses, &heats])
        .unwrap();
    let sub = verified(&sub, reg);
    assert_eq!(sub.num_entities(), 3);
    assert_eq!(sub.parent(2), Some(1));
    let masses_saved = sub.component("point_mass").unwrap();
    assert_eq!(masses_saved.entity_indices().collect::<Vec<_>>(), [0, 1]);
    assert_eq!(masses_saved.pod::<PointMass>().unwrap()[1].mass, 0.5);
    let heats_saved = sub.component("heat").unwrap();
    assert_eq!(heats_saved.entity_indices().collect::<Vec<_>>(), [0, 2]);
    assert_eq!(
        heats_saved.pod::<Heat>().unwrap()[1],
        Heat {
            celsius: -20.0,
            rate: 0.25
        }
    );
}

#[test]
fn world_to_blob_to_world_keeps_soa_values() {
    let reg = registry();
    let mut world = World::new();
    let (mut tm, mut masses, mut heats) = (
        TransformManager::new(),
        PointMassManager::new(),
        HeatManager::new(),
    );
    let mut all = Vec::new();
    for i in 0..300u32 {
        let x = i as f32;
        let e = world.spawn(Beacon {
            position: Position(Vec3::splat(x)),
            name: DebugName::new(&format!("n{i}")),
        });
        if i % 2 == 0 {
            masses
                .create(e, pm(x, [x, -x, 1.0], [0.5 * x, 0.0, 2.0], [0.0, -9.8, x]))
                .unwrap();
        }
        if i % 3 == 0 {
            heats
                .create(
                    e,
                    Heat {
                        celsius: x * 1.5,
                        rate: -x,
                    },
                )
                .unwrap();
        }
        if i % 5 == 0 {
            let t = tm
                .create(e, Mat4::from_translation(Vec3::splat(x)))
                .unwrap();
            if i >= 10 {
                tm.link(t, tm.lookup(all[i as usize - 10]).unwrap())
                    .unwrap();
            }
        }
        all.push(e);
    }
    // Rows out of entity order: some destroyed, the managers' swap-erase moves rows.
    for k in (0..all.len()).step_by(7) {
        world.despawn(all[k]);
        masses.destroy_entity(all[k]);
        heats.destroy_entity(all[k]);
        if let Some(i) = tm.lookup(all[k]) {
            tm.destroy(i).unwrap();
        }
    }
    let order: Vec<Entity> = world.entities().collect();
    let blob = world.save_level_with(reg, &[&heats, &tm, &masses]).unwrap();
    let res = verified(&blob, reg);
    let mut copy = World::new();
    let (mut tm2, mut masses2, mut heats2) = (
        TransformManager::new(),
        PointMassManager::new(),
        HeatManager::new(),
    );
    let spawned = copy
        .spawn_level_with_all(&res, &mut [&mut tm2, &mut masses2, &mut heats2])
        .unwrap();
    assert_eq!(spawned.len(), order.len());
    assert_eq!(masses2.len(), masses.len());
    assert_eq!(heats2.len(), heats.len());
    assert_eq!(tm2.len(), tm.len());
    for (&a, &b) in order.iter().zip(&spawned) {
        assert_eq!(point_mass(&masses, a), point_mass(&masses2, b));
        assert_eq!(heat(&heats, a), heat(&heats2, b));
        assert_eq!(world.get::<DebugName>(a), copy.get::<DebugName>(b));
        match (tm.lookup(a), tm2.lookup(b)) {
            (Some(i), Some(j)) => assert_eq!(tm.world(i).unwrap(), tm2.world(j).unwrap()),
            (None, None) => {}
            other => panic!("transform {other:?}"),
        }
    }
    assert!(masses2.len() > 100 && heats2.len() > 60);
    // And the copy saves to the same bytes.
    assert_eq!(
        copy.save_entities_with(&spawned, reg, &[&masses2, &heats2, &tm2])
            .unwrap(),
        blob
    );
}
