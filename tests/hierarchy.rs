//! The world-owned transform hierarchy: transforms and parents set directly and through
//! `Commands`, despawns that take the subtree along (directly, through commands, `clear`),
//! refusals that change nothing, levels that spawn into and save from the world's own
//! hierarchy, and the lazy garbage collection of a manager the world does not own.

use glam::{Mat4, Vec3};
use sigecs::transform::TransformManager;
use sigecs::WorldError;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::Beacon;
use sigecs_demo::level_registry;
use sigecs_fixtures::hierarchy::{Adoptions, Drone, DroneBody, Hull, Launch, Ship, World};
use sigecs_level::{EntityCompiler, VerifyOptions, WorldLevels};

fn at(x: f32, y: f32) -> Mat4 {
    Mat4::from_translation(Vec3::new(x, y, 0.0))
}

fn origin(m: Mat4) -> Vec3 {
    m.transform_point3(Vec3::ZERO)
}

fn ship(world: &mut World, hull: i32, launch: u32) -> sigecs::Entity {
    world.spawn(Ship {
        hull: Hull(hull),
        launch: Launch(launch),
    })
}

fn drone(world: &mut World, n: u32) -> sigecs::Entity {
    world.spawn(DroneBody { drone: Drone(n) })
}

#[test]
fn world_transforms_follow_parents_at_once() {
    let mut w = World::new();
    let s = ship(&mut w, 1, 0);
    let d = drone(&mut w, 0);
    assert_eq!(w.world_transform(s), None);
    w.set_transform(s, at(10.0, 0.0)).unwrap();
    w.set_transform(d, at(1.0, 2.0)).unwrap();
    w.set_parent(d, s).unwrap();
    assert_eq!(
        origin(w.world_transform(d).unwrap()),
        Vec3::new(11.0, 2.0, 0.0)
    );
    assert_eq!(w.parent(d), Some(s));
    assert_eq!(w.children(s), vec![d]);
    // Moving the parent moves the child before the call returns.
    w.set_transform(s, at(20.0, 0.0)).unwrap();
    assert_eq!(
        origin(w.world_transform(d).unwrap()),
        Vec3::new(21.0, 2.0, 0.0)
    );
    assert_eq!(w.local_transform(d), Some(at(1.0, 2.0)));
    // A batch: both move, each subtree updated once.
    let updated = w
        .set_transforms(&[(d, at(0.0, 5.0)), (s, at(1.0, 0.0))])
        .unwrap();
    assert_eq!(updated, 2);
    assert_eq!(
        origin(w.world_transform(d).unwrap()),
        Vec3::new(1.0, 5.0, 0.0)
    );
    w.remove_parent(d).unwrap();
    assert_eq!(w.parent(d), None);
    assert_eq!(
        origin(w.world_transform(d).unwrap()),
        Vec3::new(0.0, 5.0, 0.0)
    );
    w.check_invariants().unwrap();
}

#[test]
fn a_despawn_takes_the_whole_subtree_and_nothing_else() {
    let mut w = World::new();
    let a = ship(&mut w, 1, 0);
    let b = ship(&mut w, 1, 0);
    let kids: Vec<_> = (0..3).map(|n| drone(&mut w, n)).collect();
    let grandkid = drone(&mut w, 9);
    let other = drone(&mut w, 7);
    for &k in &kids {
        w.set_parent(k, a).unwrap();
    }
    w.set_parent(grandkid, kids[1]).unwrap();
    w.set_parent(other, b).unwrap();
    assert_eq!(w.hierarchy().len(), 7);

    assert!(w.despawn(a));
    for e in kids.iter().copied().chain([a, grandkid]) {
        assert!(!w.is_alive(e), "{e} went with its ancestor");
        assert_eq!(w.world_transform(e), None);
    }
    assert_eq!(w.len(), 2);
    assert!(w.is_alive(b) && w.is_alive(other));
    assert_eq!(w.parent(other), Some(b));
    assert_eq!(w.hierarchy().len(), 2);
    w.check_invariants().unwrap();
    // Despawning a child leaves its parent.
    assert!(w.despawn(other));
    assert!(w.is_alive(b));
    assert_eq!(w.children(b), Vec::<sigecs::Entity>::new());
    assert!(!w.despawn(other), "already gone");
    w.check_invariants().unwrap();
}

#[test]
fn an_unparented_child_survives_its_old_parent() {
    let mut w = World::new();
    let s = ship(&mut w, 1, 0);
    let d = drone(&mut w, 0);
    w.set_parent(d, s).unwrap();
    w.set_transform(d, at(3.0, 0.0)).unwrap();
    w.remove_parent(d).unwrap();
    w.despawn(s);
    assert!(w.is_alive(d));
    assert_eq!(
        origin(w.world_transform(d).unwrap()),
        Vec3::new(3.0, 0.0, 0.0)
    );
    // Removing a transform keeps the entity; its children become roots.
    let e = drone(&mut w, 1);
    w.set_parent(e, d).unwrap();
    assert!(w.remove_transform(d));
    assert!(!w.remove_transform(d));
    assert!(w.is_alive(d) && w.parent(e).is_none());
    w.check_invariants().unwrap();
}

#[test]
fn refused_changes_change_nothing() {
    let mut w = World::new();
    let a = ship(&mut w, 1, 0);
    let b = drone(&mut w, 0);
    let dead = drone(&mut w, 1);
    w.despawn(dead);
    w.set_parent(b, a).unwrap();
    let before = w.hierarchy().len();

    assert_eq!(w.set_parent(a, dead), Err(WorldError::NoSuchEntity(dead)));
    assert_eq!(w.set_parent(dead, a), Err(WorldError::NoSuchEntity(dead)));
    assert_eq!(
        w.set_transform(dead, Mat4::IDENTITY),
        Err(WorldError::NoSuchEntity(dead))
    );
    assert_eq!(
        w.set_transforms(&[(a, at(1.0, 1.0)), (dead, Mat4::IDENTITY)]),
        Err(WorldError::NoSuchEntity(dead))
    );
    assert_eq!(w.local_transform(a), Some(Mat4::IDENTITY), "all or nothing");
    assert!(matches!(w.set_parent(a, a), Err(WorldError::Hierarchy(_))));
    let cycle = w.set_parent(a, b).unwrap_err();
    assert!(matches!(cycle, WorldError::Hierarchy(_)));
    assert!(cycle.to_string().contains("transform hierarchy"), "{cycle}");
    assert_eq!(w.remove_parent(dead), Err(WorldError::NoSuchEntity(dead)));
    assert_eq!(w.hierarchy().len(), before);
    assert_eq!(w.parent(b), Some(a));
    assert_eq!(w.parent(a), None);
    w.check_invariants().unwrap();
}

#[test]
fn systems_parent_spawned_entities_and_despawn_subtrees_through_commands() {
    for threads in [1, 2] {
        let pool = sigecs::rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut w = World::new();
            w.set_min_chunk(Some(1));
            let ships: Vec<_> = (0..40).map(|i| ship(&mut w, i % 3, 2)).collect();
            for (i, &s) in ships.iter().enumerate() {
                w.set_transform(s, at(100.0 * i as f32, 0.0)).unwrap();
            }
            // Two frames of launches: two drones per ship, at x = 1 then x = 0 in its frame.
            for _ in 0..2 {
                w.run_launch().unwrap();
            }
            assert_eq!(w.len(), 40 * 3);
            for (i, &s) in ships.iter().enumerate() {
                let kids = w.children(s);
                assert_eq!(kids.len(), 2);
                for k in kids {
                    let n = w.get::<Drone>(k).unwrap().0;
                    assert_eq!(
                        origin(w.world_transform(k).unwrap()),
                        Vec3::new(100.0 * i as f32 + n as f32, 0.0, 0.0)
                    );
                }
            }
            // Ships with hull 0 (every third) sink with their drones.
            w.run_sink().unwrap();
            let sunk = ships.iter().filter(|&&s| !w.is_alive(s)).count();
            assert_eq!(sunk, 14);
            assert_eq!(w.len(), (40 - 14) * 3);
            assert_eq!(w.hierarchy().len(), (40 - 14) * 3);
            w.check_invariants().unwrap();
        });
    }
}

#[test]
fn a_command_on_a_dead_entity_is_reported_with_both_entities() {
    let mut w = World::new();
    let s = ship(&mut w, 1, 0);
    let dead = drone(&mut w, 0);
    w.despawn(dead);
    let d = drone(&mut w, 1);
    w.resource_mut::<Adoptions>().pairs = vec![(dead, s), (d, s)];
    let errors = w.run_adopt().unwrap_err();
    assert_eq!(errors.0.len(), 1, "{errors}");
    assert_eq!(w.parent(d), Some(s), "the other command applied");
    let text = errors.to_string();
    assert!(text.contains("set the parent of entity"), "{text}");
    assert!(text.contains(&format!("to entity {s}")), "{text}");
    w.check_invariants().unwrap();
}

#[test]
fn clear_empties_the_hierarchy() {
    let mut w = World::new();
    let s = ship(&mut w, 1, 0);
    let d = drone(&mut w, 0);
    w.set_parent(d, s).unwrap();
    w.clear();
    assert!(w.hierarchy().is_empty());
    let again = ship(&mut w, 1, 0);
    assert_eq!(w.world_transform(again), None);
    w.check_invariants().unwrap();
}

const LEVEL: &str = r#"{"entities": [
    {"components": {"position": [1, 2, 3], "name": "flagship",
                    "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 10,0,0,1]}},
    {"parent": 0, "components": {"position": [4, 5, 6], "name": "turret",
                                 "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1]}},
    {"parent": 0, "components": {"position": [7, 8, 9], "name": "turret"}},
    {"components": {"position": [0, 0, 0], "name": "buoy"}}
]}"#;

#[test]
fn levels_spawn_into_and_save_from_the_world_hierarchy() {
    let blob = EntityCompiler::new(level_registry())
        .compile_str(LEVEL)
        .unwrap();
    let mut world = sigecs_demo::World::new();
    world.spawn(Beacon {
        position: Position(Vec3::ONE),
        name: DebugName::new("old"),
    });
    let res = world
        .verify_level(&blob[..], level_registry(), &VerifyOptions::default())
        .unwrap();
    let e = world.spawn_level(&res).unwrap();
    assert_eq!(world.parent(e[1]), Some(e[0]));
    assert_eq!(world.parent(e[2]), Some(e[0]));
    assert_eq!(world.parent(e[3]), None);
    assert_eq!(
        origin(world.world_transform(e[1]).unwrap()),
        Vec3::new(10.0, 2.0, 0.0)
    );
    // No manager passed: the save reads the world's own hierarchy, byte for byte.
    let saved = world.save_entities(&e, level_registry(), None).unwrap();
    assert_eq!(saved, blob);
    // The ship's despawn takes its turrets.
    world.despawn(e[0]);
    assert!(!world.is_alive(e[1]) && !world.is_alive(e[2]) && world.is_alive(e[3]));
    world.check_invariants().unwrap();
    // A manager passed by hand still takes the hierarchy instead of the world's.
    let mut tm = TransformManager::new();
    let f = world.spawn_level_with(&res, &mut tm).unwrap();
    assert_eq!(tm.len(), 3);
    assert_eq!(world.parent(f[1]), None);
    assert_eq!(
        world
            .save_entities(&f, level_registry(), Some(&tm))
            .unwrap(),
        blob
    );
}

#[test]
fn an_outside_manager_collects_its_dead_entities() {
    let mut w = World::new();
    let es: Vec<_> = (0..200).map(|n| drone(&mut w, n)).collect();
    let mut tm = TransformManager::new();
    for &e in &es {
        tm.create(e, Mat4::IDENTITY).unwrap();
    }
    for &e in es.iter().step_by(2) {
        w.despawn(e);
    }
    // The lazy collection destroys dead instances until it meets four live ones in a row;
    // repeated, it gets them all.
    let mut destroyed = 0;
    for _ in 0..10_000 {
        destroyed += tm.gc(|e| w.is_alive(e));
        if tm.len() == 100 {
            break;
        }
    }
    assert_eq!(destroyed, 100);
    assert!(tm.entities().iter().all(|&e| w.is_alive(e)));
    // The full sweep finds everything at once.
    for &e in es.iter().skip(1).step_by(4) {
        w.despawn(e);
    }
    assert_eq!(tm.gc_all(|e| w.is_alive(e)), 50);
    assert_eq!(tm.len(), 50);
    assert!(tm.entities().iter().all(|&e| w.is_alive(e)));
    assert_eq!(tm.gc_all(|e| w.is_alive(e)), 0);
}

mod model {
    //! Random hierarchy operations, directly and through commands, against a naive model: a
    //! parent map and translations, where a world position is the sum of the translations up
    //! the chain and a despawn removes every descendant.
    use super::*;
    use proptest::prelude::*;
    use sigecs::Entity;
    use sigecs::WorldError;
    use sigecs_fixtures::hierarchy::Doomed;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Spawn,
        SetTransform(usize, i8, i8),
        SetParent(usize, usize),
        RemoveParent(usize),
        Despawn(usize),
        ParentByCommand(usize, usize),
        DespawnByCommand(usize),
        RemoveTransform(usize),
        /// `len` new drones parented into a chain, from the root down or from the leaf up,
        /// directly or through commands, its root then parented under a picked entity.
        Chain {
            len: u32,
            bottom_up: bool,
            by_command: bool,
            under: usize,
        },
        /// A picked entity parented under one of its own descendants (the deepest when the
        /// second number is 0): refused as a cycle that names both.
        IntoOwnSubtree(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let i = 0usize..64;
        prop_oneof![
            3 => Just(Op::Spawn),
            2 => (i.clone(), any::<i8>(), any::<i8>()).prop_map(|(e, x, y)| Op::SetTransform(e, x, y)),
            4 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::SetParent(a, b)),
            1 => i.clone().prop_map(Op::RemoveParent),
            1 => i.clone().prop_map(Op::Despawn),
            2 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::ParentByCommand(a, b)),
            1 => i.clone().prop_map(Op::DespawnByCommand),
            1 => i.clone().prop_map(Op::RemoveTransform),
            1 => (0..150u32, any::<bool>(), any::<bool>(), i.clone()).prop_map(
                |(len, bottom_up, by_command, under)| Op::Chain { len, bottom_up, by_command, under }
            ),
            1 => (i.clone(), 0..4usize).prop_map(|(a, b)| Op::IntoOwnSubtree(a, b)),
        ]
    }

    /// A live entity: `Some(translation)` once it has a transform, and its parent.
    type Node = (Option<(f32, f32)>, Option<Entity>);

    #[derive(Default)]
    struct Model {
        nodes: BTreeMap<Entity, Node>,
    }

    impl Model {
        fn is_below(&self, a: Entity, ancestor: Entity) -> bool {
            let mut at = Some(a);
            while let Some(e) = at {
                if e == ancestor {
                    return true;
                }
                at = self.nodes[&e].1;
            }
            false
        }
        fn set_parent(&mut self, c: Entity, p: Entity) -> bool {
            if !self.nodes.contains_key(&c) || !self.nodes.contains_key(&p) || self.is_below(p, c) {
                return false;
            }
            for e in [c, p] {
                let node = self.nodes.get_mut(&e).unwrap();
                node.0.get_or_insert((0.0, 0.0));
            }
            self.nodes.get_mut(&c).unwrap().1 = Some(p);
            true
        }
        fn despawn(&mut self, e: Entity) {
            if !self.nodes.contains_key(&e) {
                return;
            }
            let gone: Vec<Entity> = self
                .nodes
                .keys()
                .copied()
                .filter(|&x| self.is_below(x, e))
                .collect();
            for x in gone {
                self.nodes.remove(&x);
            }
        }
        /// Every world position, memoized (linear however deep the chains).
        fn worlds(&self) -> BTreeMap<Entity, Option<(f32, f32)>> {
            let mut done: BTreeMap<Entity, Option<(f32, f32)>> = BTreeMap::new();
            for &e in self.nodes.keys() {
                let mut path = vec![e];
                let mut at = self.nodes[&e].1;
                while let Some(p) = at {
                    if done.contains_key(&p) {
                        break;
                    }
                    path.push(p);
                    at = self.nodes[&p].1;
                }
                let mut acc = at.and_then(|p| done[&p]).unwrap_or((0.0, 0.0));
                for &n in path.iter().rev() {
                    let world = self.nodes[&n].0.map(|t| {
                        acc = (acc.0 + t.0, acc.1 + t.1);
                        acc
                    });
                    done.insert(n, world);
                }
            }
            done
        }
        /// `e`'s descendants (not `e`).
        fn below(&self, e: Entity) -> Vec<Entity> {
            self.nodes
                .keys()
                .copied()
                .filter(|&x| x != e && self.is_below(x, e))
                .collect()
        }
    }

    /// Compares the world with the model; world positions too when `worlds` (reading them
    /// brings deferred updates up to date, so most steps leave them be).
    fn check(w: &World, m: &Model, worlds: bool) -> Result<(), TestCaseError> {
        prop_assert_eq!(w.len(), m.nodes.len());
        w.check_invariants().map_err(TestCaseError::fail)?;
        let expected = if worlds { m.worlds() } else { BTreeMap::new() };
        for (&e, &(t, p)) in &m.nodes {
            prop_assert!(w.is_alive(e));
            prop_assert_eq!(w.parent(e), p, "parent of {}", e);
            prop_assert_eq!(w.local_transform(e).is_some(), t.is_some());
            if worlds {
                let world = w.world_transform(e).map(|m| {
                    let o = origin(m);
                    (o.x, o.y)
                });
                prop_assert_eq!(world, expected[&e], "world position of {}", e);
            }
            let mut kids = w.children(e);
            kids.sort();
            let expected: Vec<Entity> = m
                .nodes
                .iter()
                .filter(|(_, n)| n.1 == Some(e))
                .map(|(&c, _)| c)
                .collect();
            prop_assert_eq!(kids, expected);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn hierarchy_operations_match_the_model(
            ops in proptest::collection::vec((op(), proptest::bool::weighted(0.3)), 1..120),
        ) {
            let mut w = World::new();
            let mut m = Model::default();
            // Every id ever issued, so operations also name dead entities.
            let mut ids: Vec<Entity> = Vec::new();
            let pick = |ids: &[Entity], i: usize| ids.get(i % ids.len().max(1)).copied();
            for (op, look) in ops {
                match op {
                    Op::Spawn => {
                        let e = drone(&mut w, ids.len() as u32);
                        ids.push(e);
                        m.nodes.insert(e, (None, None));
                    }
                    Op::SetTransform(i, x, y) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        let ok = w.set_transform(e, at(x as f32, y as f32)).is_ok();
                        prop_assert_eq!(ok, m.nodes.contains_key(&e));
                        if let Some(node) = m.nodes.get_mut(&e) {
                            node.0 = Some((x as f32, y as f32));
                        }
                    }
                    Op::SetParent(a, b) => {
                        let (Some(c), Some(p)) = (pick(&ids, a), pick(&ids, b)) else { continue };
                        let ok = w.set_parent(c, p).is_ok();
                        prop_assert_eq!(ok, m.set_parent(c, p), "set_parent({}, {})", c, p);
                    }
                    Op::RemoveParent(i) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        prop_assert_eq!(w.remove_parent(e).is_ok(), m.nodes.contains_key(&e));
                        if let Some(node) = m.nodes.get_mut(&e) {
                            node.1 = None;
                        }
                    }
                    Op::Despawn(i) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        prop_assert_eq!(w.despawn(e), m.nodes.contains_key(&e));
                        m.despawn(e);
                    }
                    Op::ParentByCommand(a, b) => {
                        let (Some(c), Some(p)) = (pick(&ids, a), pick(&ids, b)) else { continue };
                        w.resource_mut::<Adoptions>().pairs = vec![(c, p)];
                        let ok = w.run_adopt().is_ok();
                        prop_assert_eq!(ok, m.set_parent(c, p), "command set_parent({}, {})", c, p);
                    }
                    Op::RemoveTransform(i) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        let had = m.nodes.get(&e).is_some_and(|n| n.0.is_some());
                        prop_assert_eq!(w.remove_transform(e), had);
                        if had {
                            m.nodes.insert(e, (None, None));
                            for node in m.nodes.values_mut() {
                                if node.1 == Some(e) {
                                    node.1 = None;
                                }
                            }
                        }
                    }
                    Op::DespawnByCommand(i) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        w.resource_mut::<Doomed>().entities = vec![e];
                        prop_assert!(w.run_doom().is_ok());
                        m.despawn(e);
                    }
                    Op::Chain { len, bottom_up, by_command, under } => {
                        let chain: Vec<Entity> = (0..len)
                            .map(|k| drone(&mut w, ids.len() as u32 + k))
                            .collect();
                        for (k, &e) in chain.iter().enumerate() {
                            ids.push(e);
                            let t = (1.0, (k % 3) as f32);
                            w.set_transform(e, at(t.0, t.1)).unwrap();
                            m.nodes.insert(e, (Some(t), None));
                        }
                        let mut pairs: Vec<(Entity, Entity)> =
                            chain.windows(2).map(|p| (p[1], p[0])).collect();
                        if bottom_up {
                            pairs.reverse();
                        }
                        if let (Some(&root), Some(p)) = (chain.first(), pick(&ids, under)) {
                            pairs.push((root, p));
                        }
                        if by_command {
                            w.resource_mut::<Adoptions>().pairs = pairs.clone();
                            let result = w.run_adopt();
                            let refused = result.err().map_or(0, |e| e.0.len());
                            let mut model_refused = 0;
                            for (c, p) in pairs {
                                model_refused += usize::from(!m.set_parent(c, p));
                            }
                            prop_assert_eq!(refused, model_refused);
                        } else {
                            for (c, p) in pairs {
                                let ok = w.set_parent(c, p).is_ok();
                                prop_assert_eq!(ok, m.set_parent(c, p), "set_parent({}, {})", c, p);
                            }
                        }
                    }
                    Op::IntoOwnSubtree(i, k) => {
                        let Some(e) = pick(&ids, i) else { continue };
                        if !m.nodes.contains_key(&e) {
                            continue;
                        }
                        let below = m.below(e);
                        let Some(&d) = (if k == 0 { below.last() } else { below.get(k % below.len().max(1)) }) else { continue };
                        let message = match w.set_parent(e, d) {
                            Err(WorldError::Hierarchy(err)) => err.to_string(),
                            other => return Err(TestCaseError::fail(format!("{other:?}"))),
                        };
                        prop_assert!(
                            message.contains(&e.to_string()) && message.contains(&d.to_string()),
                            "the refusal names both entities: {}", message
                        );
                    }
                }
                check(&w, &m, look)?;
            }
            check(&w, &m, true)?;
        }
    }
}

#[test]
fn a_soa_manager_outside_the_world_collects_against_the_world_entities() {
    use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
    let mut w = World::new();
    let es: Vec<_> = (0..100).map(|n| drone(&mut w, n)).collect();
    let mut masses = PointMassManager::new();
    for &e in &es {
        masses
            .create(
                e,
                PointMass {
                    mass: 1.0,
                    position: Vec3::ZERO,
                    velocity: Vec3::ZERO,
                    acceleration: Vec3::ZERO,
                },
            )
            .unwrap();
    }
    // Despawned through the world (directly and as a subtree): the manager does not hear of
    // it; its garbage collection against the world's entity manager finds them.
    w.set_parent(es[1], es[0]).unwrap();
    w.despawn(es[0]);
    for &e in &es[50..] {
        w.despawn(e);
    }
    assert_eq!(masses.gc_all(w.entity_manager()), 52);
    assert_eq!(masses.len(), 48);
    assert!(masses.entities().iter().all(|&e| w.is_alive(e)));
}
