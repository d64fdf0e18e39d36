//! Sparse components against a naive reference: random spawns, inserts and removes of table
//! and sparse components (removing `Pos` sends an entity to a dynamic store), despawns (some of them dropping a value whose `Drop` panics),
//! clears, writes through `get_mut`, and system runs whose commands add and remove sparse
//! components, applied to the `sparse` fixture world and to a model (one `Option` per
//! component per entity). After every step every entity ever spawned is compared component
//! by component (systems take sparse components as parameters and filters, on one thread and
//! split into one-row jobs on two), every query shape over sparse components (required, optional, `With`,
//! `Without`, mutable) is compared with the model, the count of live `Hp` values is exact (no
//! value lost or dropped twice), and the world's invariants hold.

use proptest::prelude::*;
use sigecs::query::{With, Without};
use sigecs::{Entity, WorldError};
use sigecs_fixtures::sparse::*;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(not(miri))]
const CASES: u32 = 1024;
#[cfg(not(miri))]
const MAX_OPS: usize = 120;
#[cfg(miri)]
const CASES: u32 = 1;
#[cfg(miri)]
const MAX_OPS: usize = 16;

/// What the model holds for a live entity.
#[derive(Clone, Debug, Default, PartialEq)]
struct Ent {
    /// `None` once removed: the entity then lives in a dynamic store.
    pos: Option<i32>,
    vel: Option<i32>,
    /// (value, armed)
    hp: Option<(i32, bool)>,
    marked: bool,
    wide: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Pos,
    Vel,
    Hp,
    Marked,
    Wide,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn(i32, Option<i32>),
    Insert(usize, Kind, i32),
    Remove(usize, Kind),
    Despawn(usize),
    Arm(usize, bool),
    Bump(usize, i32),
    /// Adds to the `Wide` of every entity with a `Wide` and `Marked` through a query of sparse
    /// components alone, which walks `Wide`'s set.
    WalkWrite(i32),
    Run(bool),
    Clear,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Pos),
        Just(Kind::Vel),
        Just(Kind::Hp),
        Just(Kind::Marked),
        Just(Kind::Wide)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (-20..20i32, prop::option::of(-3..3i32)).prop_map(|(p, v)| Op::Spawn(p, v)),
        6 => (any::<usize>(), kind(), -50..50i32).prop_map(|(i, k, v)| Op::Insert(i, k, v)),
        4 => (any::<usize>(), kind()).prop_map(|(i, k)| Op::Remove(i, k)),
        2 => any::<usize>().prop_map(Op::Despawn),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, a)| Op::Arm(i, a)),
        2 => (any::<usize>(), -5..5i32).prop_map(|(i, d)| Op::Bump(i, d)),
        1 => (-5..5i32).prop_map(Op::WalkWrite),
        2 => any::<bool>().prop_map(Op::Run),
        1 => Just(Op::Clear),
    ]
}

struct Case {
    world: World,
    /// Every entity ever spawned, live or not (ops pick from it, so stale ids are tried too).
    spawned: Vec<Entity>,
    model: BTreeMap<Entity, Ent>,
    /// What `tally` has added up.
    total: i64,
}

impl Case {
    fn pick(&self, i: usize) -> Option<Entity> {
        (!self.spawned.is_empty()).then(|| self.spawned[i % self.spawned.len()])
    }

    /// Disarms `e`'s `Hp` in the world and the model (before a value is handed back to the
    /// test, which then drops it quietly).
    fn disarm(&mut self, e: Entity) {
        if let Some(hp) = self.world.get_mut::<Hp>(e) {
            hp.armed = false;
        }
        if let Some(Some((_, armed))) = self.model.get_mut(&e).map(|m| m.hp.as_mut()) {
            *armed = false;
        }
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Spawn(pos, vel) => {
                let e = match vel {
                    Some(v) => self.world.spawn(Moving {
                        pos: Pos(pos),
                        vel: Vel(v),
                    }),
                    None => self.world.spawn(Still { pos: Pos(pos) }),
                };
                self.spawned.push(e);
                self.model.insert(
                    e,
                    Ent {
                        pos: Some(pos),
                        vel,
                        ..Ent::default()
                    },
                );
            }
            Op::Insert(i, kind, v) => {
                let Some(e) = self.pick(i) else { return Ok(()) };
                self.disarm(e);
                let live = self.model.get_mut(&e);
                let expect_err = live.is_none();
                let r = match kind {
                    Kind::Pos => self.world.insert(e, Pos(v)).map(|o| o.map(|x| x.0 as i64)),
                    Kind::Vel => self.world.insert(e, Vel(v)).map(|o| o.map(|x| x.0 as i64)),
                    Kind::Hp => self
                        .world
                        .insert(e, Hp::new(v))
                        .map(|o| o.map(|x| x.value as i64)),
                    Kind::Marked => self.world.insert(e, Marked).map(|o| o.map(|_| 0)),
                    Kind::Wide => self
                        .world
                        .insert(e, Wide(v as u64))
                        .map(|o| o.map(|x| x.0 as i64)),
                };
                let Some(m) = self.model.get_mut(&e) else {
                    return match r {
                        Err(WorldError::NoSuchEntity(x)) if x == e && expect_err => Ok(()),
                        other => Err(format!("insert into dead {e}: {other:?}")),
                    };
                };
                let old = match kind {
                    Kind::Pos => m.pos.replace(v).map(i64::from),
                    Kind::Vel => m.vel.replace(v).map(i64::from),
                    Kind::Hp => m.hp.replace((v, false)).map(|h| i64::from(h.0)),
                    Kind::Marked => std::mem::replace(&mut m.marked, true).then_some(0),
                    Kind::Wide => m.wide.replace(v as u64).map(|w| w as i64),
                };
                if r != Ok(old) {
                    return Err(format!("insert {kind:?} into {e}: {r:?}, model {old:?}"));
                }
            }
            Op::Remove(i, kind) => {
                let Some(e) = self.pick(i) else { return Ok(()) };
                self.disarm(e);
                let r = match kind {
                    Kind::Pos => self.world.remove::<Pos>(e).map(|x| x.0 as i64),
                    Kind::Vel => self.world.remove::<Vel>(e).map(|x| x.0 as i64),
                    Kind::Hp => self.world.remove::<Hp>(e).map(|x| x.value as i64),
                    Kind::Marked => self.world.remove::<Marked>(e).map(|_| 0),
                    Kind::Wide => self.world.remove::<Wide>(e).map(|x| x.0 as i64),
                };
                let expected = self.model.get_mut(&e).map(|m| match kind {
                    Kind::Pos => m.pos.take().map(i64::from),
                    Kind::Vel => m.vel.take().map(i64::from),
                    Kind::Hp => m.hp.take().map(|h| i64::from(h.0)),
                    Kind::Marked => std::mem::take(&mut m.marked).then_some(0),
                    Kind::Wide => m.wide.take().map(|w| w as i64),
                });
                match (expected, r) {
                    (None, Err(WorldError::NoSuchEntity(x))) if x == e => {}
                    (Some(None), Err(WorldError::MissingComponent { entity, .. }))
                        if entity == e => {}
                    (Some(Some(v)), Ok(got)) if v == got => {}
                    (expected, r) => {
                        return Err(format!(
                            "remove {kind:?} from {e}: {r:?}, model {expected:?}"
                        ))
                    }
                }
            }
            Op::Despawn(i) => {
                let Some(e) = self.pick(i) else { return Ok(()) };
                let armed = self
                    .model
                    .get(&e)
                    .is_some_and(|m| m.hp.is_some_and(|h| h.1));
                let r = catch_unwind(AssertUnwindSafe(|| self.world.despawn(e)));
                let was_live = self.model.remove(&e).is_some();
                match r {
                    Ok(done) if !armed && done == was_live => {}
                    Err(_) if armed => {}
                    other => {
                        return Err(format!(
                            "despawn {e} (live {was_live}, armed {armed}): panicked {}",
                            other.is_err()
                        ))
                    }
                }
            }
            Op::Arm(i, armed) => {
                let Some(e) = self.pick(i) else { return Ok(()) };
                let got = self.world.get_mut::<Hp>(e).map(|hp| hp.armed = armed);
                let m = self.model.get_mut(&e).and_then(|m| m.hp.as_mut());
                if got.is_some() != m.is_some() {
                    return Err(format!("arm {e}: world has Hp {}", got.is_some()));
                }
                if let Some(h) = m {
                    h.1 = armed;
                }
            }
            Op::Bump(i, d) => {
                let Some(e) = self.pick(i) else { return Ok(()) };
                if let Some(w) = self.world.get_mut::<Wide>(e) {
                    w.0 = w.0.wrapping_add(d as u64);
                }
                if let Some(Some(w)) = self.model.get_mut(&e).map(|m| m.wide.as_mut()) {
                    *w = w.wrapping_add(d as u64);
                }
            }
            Op::WalkWrite(d) => {
                self.world
                    .query_filtered_mut::<&mut Wide, With<Marked>>()
                    .map_err(|e| e.to_string())?
                    .for_each(|w| w.0 = w.0.wrapping_add(d as u64));
                for m in self.model.values_mut() {
                    if let (Some(w), true) = (m.wide.as_mut(), m.marked) {
                        *w = w.wrapping_add(d as u64);
                    }
                }
            }
            Op::Run(staged) => {
                let r = if staged {
                    self.world.run_schedule()
                } else {
                    self.world.run_all()
                };
                let mut failures = 0;
                for m in self.model.values_mut() {
                    if let (Some(p), Some(v)) = (m.pos.as_mut(), m.vel) {
                        *p = p.wrapping_add(v);
                    }
                }
                for m in self.model.values_mut() {
                    if let (Some(v), Some(hp), true, None) =
                        (m.vel, m.hp.as_mut(), m.marked, m.wide)
                    {
                        hp.0 = hp.0.wrapping_add(v);
                    }
                    if let (Some(w), Some(p)) = (m.wide.as_mut(), m.pos) {
                        *w = w.wrapping_add(p as u64);
                    }
                }
                for m in self.model.values_mut() {
                    let Some(p) = m.pos else { continue };
                    if p % 3 == 0 {
                        m.marked = true;
                    }
                    if p % 5 == 0 && m.wide.take().is_none() {
                        failures += 1;
                    }
                }
                for m in self.model.values_mut() {
                    if let Some(hp) = m.hp.as_mut() {
                        hp.0 = hp.0.wrapping_sub(1);
                    }
                }
                for m in self.model.values_mut() {
                    if let (Some(w), false) = (m.wide.as_mut(), m.marked) {
                        *w = w.wrapping_add(m.hp.map_or(1, |h| h.0 as u64));
                        if *w % 4 == 0 {
                            m.marked = true;
                        }
                    }
                }
                let sum: i64 = self
                    .model
                    .values()
                    .filter_map(|m| m.hp)
                    .map(|h| h.0 as i64)
                    .sum();
                self.total = self.total.wrapping_add(sum);
                for m in self.model.values_mut() {
                    if let (true, Some(w)) = (m.marked, m.wide.as_mut()) {
                        *w ^= 1;
                    }
                }
                let got = r.err().map_or(0, |e| e.0.len());
                if got != failures {
                    return Err(format!("run: {got} command errors, model {failures}"));
                }
            }
            Op::Clear => {
                let armed = self.model.values().any(|m| m.hp.is_some_and(|h| h.1));
                let r = catch_unwind(AssertUnwindSafe(|| self.world.clear()));
                self.model.clear();
                if r.is_err() != armed {
                    return Err(format!("clear: panicked {}, armed {armed}", r.is_err()));
                }
            }
        }
        self.compare()
    }

    fn compare(&self) -> Result<(), String> {
        let w = &self.world;
        w.check_invariants()?;
        if w.resource::<HpTotal>().0 != self.total {
            let got = w.resource::<HpTotal>().0;
            return Err(format!("HpTotal {got}, model {}", self.total));
        }
        if w.len() != self.model.len() {
            return Err(format!("{} entities, model {}", w.len(), self.model.len()));
        }
        let alive = HP_ALIVE.with(|n| n.get());
        let in_model = self.model.values().filter(|m| m.hp.is_some()).count() as i64;
        if alive != in_model {
            return Err(format!("{alive} Hp values alive, model {in_model}"));
        }
        for &e in &self.spawned {
            let m = self.model.get(&e);
            let got = w.is_alive(e).then(|| Ent {
                pos: w.get::<Pos>(e).map(|p| p.0),
                vel: w.get::<Vel>(e).map(|v| v.0),
                hp: w.get::<Hp>(e).map(|h| (h.value, h.armed)),
                marked: w.get::<Marked>(e).is_some(),
                wide: w.get::<Wide>(e).map(|x| x.0),
            });
            if got.as_ref() != m {
                return Err(format!("{e}: world {got:?}, model {m:?}"));
            }
            if m.is_none() && (w.get::<Hp>(e).is_some() || w.get::<Marked>(e).is_some()) {
                return Err(format!("dead {e} still has a sparse component"));
            }
        }
        let sorted = |mut v: Vec<(Entity, i64)>| {
            v.sort();
            v
        };
        let hp = sorted(
            w.query::<(Entity, &Hp)>()
                .map(|(e, h)| (e, h.value as i64))
                .collect(),
        );
        // `fold` (`for_each`) walks a query's stores its own way: it must see what `next` does.
        let folded = w
            .query::<(Entity, &Pos, Option<&Wide>, Option<&Hp>)>()
            .fold(Vec::new(), |mut all, (e, p, x, h)| {
                all.push((e, p.0, x.map(|x| x.0), h.map(|h| h.value)));
                all
            });
        let stepped: Vec<_> = w
            .query::<(Entity, &Pos, Option<&Wide>, Option<&Hp>)>()
            .map(|(e, p, x, h)| (e, p.0, x.map(|x| x.0), h.map(|h| h.value)))
            .collect();
        if folded != stepped {
            return Err(format!("fold {folded:?}, next {stepped:?}"));
        }
        let expected = self
            .model
            .iter()
            .filter_map(|(&e, m)| m.hp.map(|h| (e, h.0 as i64)))
            .collect::<Vec<_>>();
        if hp != expected {
            return Err(format!("query (Entity, &Hp): {hp:?}, model {expected:?}"));
        }
        // Sparse components alone: the query walks `Hp`'s set, looks `Wide` up and filters on
        // `Marked`; `fold` must see what `next` does.
        let walk = || w.query_filtered::<(Entity, &Hp, Option<&Wide>), Without<Marked>>();
        let stepped: Vec<_> = walk()
            .map(|(e, h, x)| (e, h.value, x.map(|x| x.0)))
            .collect();
        let folded = walk().fold(Vec::new(), |mut all, (e, h, x)| {
            all.push((e, h.value, x.map(|x| x.0)));
            all
        });
        if folded != stepped {
            return Err(format!("walk: fold {folded:?}, next {stepped:?}"));
        }
        let mut walked = stepped;
        walked.sort();
        let expected: Vec<_> = self
            .model
            .iter()
            .filter(|(_, m)| !m.marked)
            .filter_map(|(&e, m)| m.hp.map(|h| (e, h.0, m.wide)))
            .collect();
        if walked != expected {
            return Err(format!(
                "query (Entity, &Hp, Option<&Wide>) Without<Marked>: {walked:?}, model {expected:?}"
            ));
        }
        let wide = sorted(
            w.query::<(Entity, &Pos, Option<&Wide>)>()
                .map(|(e, _, x)| (e, x.map_or(-1, |x| x.0 as i64)))
                .collect(),
        );
        let expected = self
            .model
            .iter()
            .filter(|(_, m)| m.pos.is_some())
            .map(|(&e, m)| (e, m.wide.map_or(-1, |x| x as i64)))
            .collect::<Vec<_>>();
        if wide != expected {
            return Err(format!("query Option<&Wide>: {wide:?}, model {expected:?}"));
        }
        let filtered = sorted(
            w.query_filtered::<(Entity, &Vel), (With<Marked>, Without<Wide>)>()
                .map(|(e, v)| (e, v.0 as i64))
                .collect(),
        );
        let expected = self
            .model
            .iter()
            .filter(|(_, m)| m.marked && m.wide.is_none())
            .filter_map(|(&e, m)| m.vel.map(|v| (e, v as i64)))
            .collect::<Vec<_>>();
        if filtered != expected {
            return Err(format!(
                "query (Entity, &Vel) With<Marked> Without<Wide>: {filtered:?}, model {expected:?}"
            ));
        }
        Ok(())
    }
}

/// Runs `ops`; with `split`, every pass is split into jobs of one row on rayon's pool (the
/// machine's threads), so parallel lookups of sparse values are checked too.
fn run_case(ops: &[Op], split: bool) -> Result<(), String> {
    HP_ALIVE.with(|n| n.set(0));
    let mut world = World::new();
    if split {
        world.set_min_chunk(Some(1));
    }
    let mut case = Case {
        world,
        spawned: Vec::new(),
        model: BTreeMap::new(),
        total: 0,
    };
    for (i, op) in ops.iter().enumerate() {
        case.step(op).map_err(|e| format!("step {i} {op:?}: {e}"))?;
    }
    // Disarm before the world drops.
    for e in case.spawned.clone() {
        case.disarm(e);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]
    #[test]
    fn sparse_components_match_the_model(
        ops in prop::collection::vec(op(), 1..MAX_OPS),
        split in any::<bool>(),
    ) {
        run_case(&ops, split).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn a_mutable_query_writes_sparse_values_of_the_rows_it_visits_only() {
    let mut w = World::new();
    let a = w.spawn(Still { pos: Pos(1) });
    let b = w.spawn(Moving {
        pos: Pos(2),
        vel: Vel(1),
    });
    let c = w.spawn(Still { pos: Pos(3) });
    w.insert(a, Wide(10)).unwrap();
    w.insert(c, Wide(30)).unwrap();
    for (pos, wide) in w.query_mut::<(&Pos, &mut Wide)>().unwrap() {
        wide.0 += pos.0 as u64;
    }
    assert_eq!(w.get::<Wide>(a), Some(&Wide(11)));
    assert_eq!(w.get::<Wide>(b), None);
    assert_eq!(w.get::<Wide>(c), Some(&Wide(33)));
    // 16-byte alignment holds for every value in the set.
    for x in w.query::<&Wide>() {
        assert_eq!((x as *const Wide as usize) % 16, 0);
    }
}

#[test]
fn adding_a_sparse_component_keeps_the_signature_and_the_row() {
    let mut w = World::new();
    let es: Vec<Entity> = (0..4).map(|i| w.spawn(Still { pos: Pos(i) })).collect();
    w.insert(es[1], Marked).unwrap();
    w.insert(es[1], Hp::new(5)).unwrap();
    assert_eq!(w.signature_name_of(es[1]), Some("Still"));
    assert_eq!(w.store::<Still>().entities(), &es[..], "no row moved");
    assert_eq!(w.undeclared().len(), 0, "no dynamic store was made");
    drop(w);
    assert_eq!(
        HP_ALIVE.with(|n| n.get()),
        0,
        "dropping the world drops sparse values"
    );
}

#[test]
fn systems_read_sparse_components_in_declared_and_dynamic_stores_alike() {
    for split in [false, true] {
        let mut w = World::new();
        if split {
            w.set_min_chunk(Some(1));
        }
        // Four moving entities; the last two lose `Pos` and move to the dynamic store {Vel}.
        let es: Vec<Entity> = (0..4)
            .map(|i| {
                w.spawn(Moving {
                    pos: Pos(1),
                    vel: Vel(10 + i),
                })
            })
            .collect();
        for &e in &es[2..] {
            w.remove::<Pos>(e).unwrap();
        }
        assert_eq!(w.is_declared(es[3]), Some(false));
        // In each store: one marked entity with Hp, one with Hp but not marked; and a marked
        // one with Hp and Wide (`without(Wide)` skips it).
        for &e in &es {
            w.insert(e, Hp::new(0)).unwrap();
        }
        w.insert(es[0], Marked).unwrap();
        w.insert(es[3], Marked).unwrap();
        w.run_regen();
        let hp: Vec<i32> = es.iter().map(|&e| w.get::<Hp>(e).unwrap().value).collect();
        assert_eq!(hp, vec![10, 0, 0, 13], "split {split}");
        w.insert(es[3], Wide(0)).unwrap();
        w.run_regen();
        let hp: Vec<i32> = es.iter().map(|&e| w.get::<Hp>(e).unwrap().value).collect();
        assert_eq!(
            hp,
            vec![20, 0, 0, 13],
            "without(Wide) skips the last, split {split}"
        );
        // An optional sparse parameter: `None` for entities without the component.
        w.insert(es[0], Wide(5)).unwrap();
        w.run_widen();
        assert_eq!(w.get::<Wide>(es[0]), Some(&Wide(6)));
        assert_eq!(
            w.get::<Wide>(es[3]),
            Some(&Wide(0)),
            "no Pos: widen skips it"
        );
        for &e in &es {
            w.get_mut::<Hp>(e).unwrap().armed = false;
        }
    }
}

#[test]
fn the_schedule_shows_which_systems_walk_a_sparse_set() {
    let text = World::schedule().to_string();
    for line in [
        ": decay (walks the sparse set of Hp)\n",
        ": spread (walks the sparse set of Wide)\n",
        ": tally (walks the sparse set of Hp; one thread: writes a resource)\n",
        ": brace (walks the sparse set of Marked)\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // A walking system visits no store: its stage lists none.
    let walking = World::schedule()
        .stages
        .iter()
        .filter(|s| s.walks.is_some())
        .inspect(|s| assert!(s.stores.is_empty(), "{s:?}"))
        .count();
    assert_eq!(walking, 4);
}

#[test]
fn cache_statistics_list_no_store_for_a_system_that_walks_a_sparse_set() {
    let mut w = World::new();
    w.spawn(Moving {
        pos: Pos(1),
        vel: Vel(2),
    });
    let systems: Vec<&str> = w.cache_stats().iter().map(|c| c.system).collect();
    assert!(systems.contains(&"advance"), "{systems:?}");
    for walking in ["decay", "spread", "tally", "brace"] {
        assert!(!systems.contains(&walking), "{walking} in {systems:?}");
    }
}
