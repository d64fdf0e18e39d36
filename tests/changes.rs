//! Change filters against a model that records every write: random spawns, despawns, writes
//! by hand (`get_mut`, `insert` replacing a value), structural changes (inserting and removing
//! other components, which move rows between declared and dynamic stores), a system that
//! writes every position of the movers, a mutable query over the tagged entities' positions,
//! and the change-filtered system `watch`. Every entity
//! whose position was written since `watch` last ran must be seen by it (no false negative),
//! and so must a `query_changed` from the tick taken then; what it sees besides is bounded:
//! nothing at all when nothing changed, and otherwise at most the rows of the chunks that a
//! change touched (a chunk of `CHUNK` rows is the unit) and the stores a pass wrote.

use proptest::prelude::*;
use sigecs::__private::CHUNK;
use sigecs::query::{Changed, With};
use sigecs::Entity;
use sigecs_fixtures::changes::*;
use std::collections::{BTreeMap, BTreeSet};

#[cfg(not(miri))]
const CASES: u32 = 128;
#[cfg(miri)]
const CASES: u32 = 2;

/// The model of one entity.
#[derive(Clone, Debug, PartialEq)]
struct Ent {
    pos: i64,
    vel: Option<i64>,
    moving: bool,
    tag: bool,
}

#[derive(Clone, Debug)]
enum Op {
    /// Spawn `n` entities of a signature (0 Still, 1 Mover, 2 Tagged).
    Spawn(usize, usize, i64),
    Despawn(usize),
    /// `get_mut::<Pos>` and write.
    Write(usize, i64),
    /// `insert(Pos)` replacing the value.
    Replace(usize, i64),
    /// Insert or remove a component other than `Pos` (0 Vel, 1 Moving, 2 Tag).
    Toggle(usize, usize),
    Integrate,
    /// `query_filtered_mut::<&mut Pos, With<Tag>>().for_each`: adds `n` to every tagged
    /// entity's position (a mutable query stamps the columns it takes).
    QueryWrite(i64),
    Watch,
    /// `run_all` (integrate, watch, watch_all).
    Frame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize, 1..300usize, -5i64..5).prop_map(|(s, n, p)| Op::Spawn(s, n, p)),
        2 => any::<usize>().prop_map(Op::Despawn),
        3 => (any::<usize>(), any::<i64>()).prop_map(|(i, v)| Op::Write(i, v)),
        1 => (any::<usize>(), any::<i64>()).prop_map(|(i, v)| Op::Replace(i, v)),
        3 => (any::<usize>(), 0..3usize).prop_map(|(i, c)| Op::Toggle(i, c)),
        2 => Just(Op::Integrate),
        2 => (-3i64..3).prop_map(Op::QueryWrite),
        3 => Just(Op::Watch),
        2 => Just(Op::Frame),
    ]
}

struct State {
    world: World,
    live: BTreeMap<Entity, Ent>,
    /// Entities whose position was written since `watch` last ran.
    written: BTreeSet<Entity>,
    /// Changes of any kind since `watch` last ran (writes and structural changes), to bound
    /// what it may see besides.
    changes: usize,
    /// A pass wrote every position of the movers since `watch` last ran.
    pass_wrote: bool,
    /// The tick before `watch` last ran, for `query_changed`.
    since: u64,
}

impl State {
    fn pick(&self, i: usize) -> Option<Entity> {
        let n = self.live.len();
        (n > 0).then(|| *self.live.keys().nth(i % n).unwrap())
    }

    fn integrate(&mut self) {
        for (e, ent) in self.live.iter_mut() {
            if let (Some(v), true) = (ent.vel, ent.moving) {
                ent.pos = ent.pos.wrapping_add(v);
                self.written.insert(*e);
            }
        }
        self.pass_wrote = true;
    }

    /// Checks what `watch` saw, then forgets the changes.
    fn watched(&mut self) -> Result<(), String> {
        let seen = std::mem::take(&mut self.world.resource_mut::<Seen>().entities);
        let set: BTreeSet<Entity> = seen.iter().copied().collect();
        if set.len() != seen.len() {
            return Err("an entity was seen twice".into());
        }
        for e in &self.written {
            if !set.contains(e) {
                return Err(format!("{e} was written but not seen (a false negative)"));
            }
        }
        for e in &set {
            if !self.live.contains_key(e) {
                return Err(format!("{e} was seen but is not alive"));
            }
        }
        let extra = set.difference(&self.written).count();
        if self.changes == 0 && !self.pass_wrote && extra > 0 {
            return Err(format!("{extra} seen with nothing changed"));
        }
        let movers = if self.pass_wrote {
            self.live
                .values()
                .filter(|e| e.vel.is_some() && e.moving)
                .count()
        } else {
            0
        };
        // Each change stamps at most one chunk of one store (a move stamps two: where the
        // row goes, and the row that fills its place); a pass stamps its whole stores (the
        // movers', and the stores that hold rows like theirs).
        if !self.pass_wrote && extra > 2 * self.changes * CHUNK {
            return Err(format!("{extra} seen for {} changes", self.changes));
        }
        let _ = movers;
        self.written.clear();
        self.changes = 0;
        self.pass_wrote = false;
        Ok(())
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Spawn(kind, n, p) => {
                let es: Vec<Entity> = match kind {
                    0 => self.world.spawn_batch((0..n).map(|i| Still {
                        pos: Pos(p + i as i64),
                    })),
                    1 => self.world.spawn_batch((0..n).map(|i| Mover {
                        pos: Pos(p + i as i64),
                        vel: Vel(1),
                        moving: Moving,
                    })),
                    _ => self.world.spawn_batch((0..n).map(|i| Tagged {
                        pos: Pos(p + i as i64),
                        tag: Tag,
                    })),
                };
                for (i, e) in es.into_iter().enumerate() {
                    self.live.insert(
                        e,
                        Ent {
                            pos: p + i as i64,
                            vel: (kind == 1).then_some(1),
                            moving: kind == 1,
                            tag: kind == 2,
                        },
                    );
                    self.written.insert(e);
                    self.changes += 1;
                }
            }
            Op::Despawn(i) => {
                if let Some(e) = self.pick(i) {
                    assert!(self.world.despawn(e));
                    self.live.remove(&e);
                    self.written.remove(&e);
                    self.changes += 1;
                }
            }
            Op::Write(i, v) => {
                if let Some(e) = self.pick(i) {
                    self.world.get_mut::<Pos>(e).unwrap().0 = v;
                    self.live.get_mut(&e).unwrap().pos = v;
                    self.written.insert(e);
                    self.changes += 1;
                }
            }
            Op::Replace(i, v) => {
                if let Some(e) = self.pick(i) {
                    let old = self.world.insert(e, Pos(v)).unwrap();
                    let ent = self.live.get_mut(&e).unwrap();
                    if old != Some(Pos(ent.pos)) {
                        return Err(format!("{e}: replaced {old:?}, model {}", ent.pos));
                    }
                    ent.pos = v;
                    self.written.insert(e);
                    self.changes += 1;
                }
            }
            Op::Toggle(i, c) => {
                if let Some(e) = self.pick(i) {
                    let ent = self.live.get_mut(&e).unwrap();
                    let w = &mut self.world;
                    match c {
                        0 if ent.vel.is_some() => {
                            w.remove::<Vel>(e).unwrap();
                            ent.vel = None;
                        }
                        0 => {
                            w.insert(e, Vel(2)).unwrap();
                            ent.vel = Some(2);
                        }
                        1 if ent.moving => {
                            w.remove::<Moving>(e).unwrap();
                            ent.moving = false;
                        }
                        1 => {
                            w.insert(e, Moving).unwrap();
                            ent.moving = true;
                        }
                        _ if ent.tag => {
                            w.remove::<Tag>(e).unwrap();
                            ent.tag = false;
                        }
                        _ => {
                            w.insert(e, Tag).unwrap();
                            ent.tag = true;
                        }
                    }
                    self.changes += 1;
                }
            }
            Op::Integrate => {
                self.world.run_integrate();
                self.integrate();
            }
            Op::QueryWrite(n) => {
                self.world
                    .query_filtered_mut::<&mut Pos, With<Tag>>()
                    .unwrap()
                    .for_each(|p| p.0 = p.0.wrapping_add(n));
                for (e, ent) in self.live.iter_mut().filter(|(_, ent)| ent.tag) {
                    ent.pos = ent.pos.wrapping_add(n);
                    self.written.insert(*e);
                }
                // Like a pass, the query stamps whole columns.
                self.pass_wrote = true;
            }
            Op::Watch | Op::Frame => {
                // The query from the tick of the last watch sees what was written since.
                let since = self.since;
                let queried: BTreeSet<Entity> = self
                    .world
                    .query_changed::<Entity, Changed<Pos>>(since)
                    .collect();
                for e in &self.written {
                    if !queried.contains(e) {
                        return Err(format!("{e} was written but query_changed missed it"));
                    }
                }
                self.since = self.world.change_tick();
                if matches!(op, Op::Frame) {
                    // `run_all` runs `integrate` before `watch`.
                    self.integrate();
                    self.world.run_all();
                } else {
                    self.world.run_watch();
                }
                self.watched()?;
            }
        }
        // Every value is the model's.
        for (e, ent) in &self.live {
            let w = &self.world;
            if w.get::<Pos>(*e) != Some(&Pos(ent.pos)) || w.get::<Vel>(*e).map(|v| v.0) != ent.vel {
                return Err(format!("{e}: world differs from the model {ent:?}"));
            }
        }
        self.world.check_invariants()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn a_change_filter_sees_every_write(ops in prop::collection::vec(op(), 1..60)) {
        let mut s = State {
            world: World::new(),
            live: BTreeMap::new(),
            written: BTreeSet::new(),
            changes: 0,
            pass_wrote: false,
            since: 0,
        };
        for (i, op) in ops.iter().enumerate() {
            let r = s.step(op);
            prop_assert!(r.is_ok(), "op #{} {:?}: {}", i, op, r.unwrap_err());
        }
    }
}

/// The exact behaviour on a fixed case: untouched chunks are skipped, a written row's chunk is
/// visited whole, a pass over a column makes its whole store visited, and a system does not
/// see its own writes (or anything) on its next run.
#[test]
fn chunks_are_the_unit_of_a_change() {
    let mut w = World::new();
    let n = 4 * CHUNK;
    let es = w.spawn_batch((0..n as i64).map(|i| Still { pos: Pos(i) }));
    w.run_watch();
    assert_eq!(
        w.resource::<Seen>().entities.len(),
        n,
        "everything is new once"
    );
    w.resource_mut::<Seen>().entities.clear();
    w.run_watch();
    assert!(
        w.resource::<Seen>().entities.is_empty(),
        "nothing changed since"
    );
    // One write in chunk 2: exactly chunk 2 is visited.
    w.get_mut::<Pos>(es[2 * CHUNK + 7]).unwrap().0 = -1;
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, es[2 * CHUNK..3 * CHUNK]);
    w.resource_mut::<Seen>().entities.clear();
    // Reading does not count.
    let _ = w.get::<Pos>(es[0]);
    w.run_watch();
    assert!(w.resource::<Seen>().entities.is_empty());
    // A mover's position column written by a pass: its whole store, and nothing else.
    let m = w.spawn(Mover {
        pos: Pos(0),
        vel: Vel(1),
        moving: Moving,
    });
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [m]);
    w.resource_mut::<Seen>().entities.clear();
    w.run_integrate();
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [m]);
    assert_eq!(w.get::<Pos>(m), Some(&Pos(1)));
}
