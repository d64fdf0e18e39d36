//! Change filters against a model that records every write and every add: random spawns,
//! despawns, writes by hand (`get_mut`, `insert` replacing a value), structural changes
//! (inserting and removing other components, which move rows between declared and dynamic
//! stores), a system that writes every position of the movers, one that writes the heat beside
//! the position in a `rows` store, a mutable query over the tagged entities' positions, the
//! change-filtered system `watch` and the add-filtered system `greet`. Every entity whose
//! position was written since `watch` last ran must be seen by it (no false negative), and so
//! must a `query_changed` from the tick taken then; what it sees besides is bounded: nothing
//! at all when nothing changed, and otherwise at most the rows of the chunks that a change
//! touched (a chunk of `CHUNK` rows is the unit) and the stores a pass wrote. Likewise every
//! entity that gained a tag since `greet` last ran must be seen by it and by `query_changed`
//! with `Added<Tag>`, and nothing else (adds are exact; a write is no add).

use proptest::prelude::*;
use sigecs::__private::CHUNK;
use sigecs::query::{Added, Changed, With};
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
    heat: Option<i64>,
}

#[derive(Clone, Debug)]
enum Op {
    /// Spawn `n` entities of a signature (0 Still, 1 Mover, 2 Tagged, 3 Hot).
    Spawn(usize, usize, i64),
    Despawn(usize),
    /// Despawn one of the oldest tagged entities (likely in a store's first chunk, so that a
    /// recent row from a later chunk fills its place).
    DespawnOld(usize),
    /// `get_mut::<Pos>` and write.
    Write(usize, i64),
    /// `insert(Pos)` replacing the value.
    Replace(usize, i64),
    /// Insert or remove a component other than `Pos` (0 Vel, 1 Moving, 2 Tag).
    Toggle(usize, usize),
    Integrate,
    /// `run_warm`: writes every heat, beside positions in a `rows` store.
    Warm,
    /// `query_filtered_mut::<&mut Pos, With<Tag>>().for_each`: adds `n` to every tagged
    /// entity's position (a mutable query stamps the columns it takes).
    QueryWrite(i64),
    Watch,
    Greet,
    /// `run_all` (integrate, warm, watch, greet, watch_all).
    Frame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..4usize, 1..600usize, -5i64..5).prop_map(|(s, n, p)| Op::Spawn(s, n, p)),
        2 => any::<usize>().prop_map(Op::Despawn),
        2 => (0..8usize).prop_map(Op::DespawnOld),
        3 => (any::<usize>(), any::<i64>()).prop_map(|(i, v)| Op::Write(i, v)),
        1 => (any::<usize>(), any::<i64>()).prop_map(|(i, v)| Op::Replace(i, v)),
        3 => (any::<usize>(), 0..3usize).prop_map(|(i, c)| Op::Toggle(i, c)),
        2 => Just(Op::Integrate),
        2 => Just(Op::Warm),
        2 => (-3i64..3).prop_map(Op::QueryWrite),
        3 => Just(Op::Watch),
        3 => Just(Op::Greet),
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
    /// Entities that gained a tag since `greet` last ran (and still have it).
    gained: BTreeSet<Entity>,
    /// Structural changes since `greet` last ran (spawns, despawns, moves), to bound what it
    /// may see besides.
    moves: usize,
    /// The tick before `greet` last ran, for `query_changed`.
    greet_since: u64,
}

impl State {
    fn pick(&self, i: usize) -> Option<Entity> {
        let n = self.live.len();
        (n > 0).then(|| *self.live.keys().nth(i % n).unwrap())
    }

    fn warm(&mut self) {
        for ent in self.live.values_mut() {
            if let Some(h) = ent.heat.as_mut() {
                *h = h.wrapping_add(1);
            }
        }
    }

    /// Checks what `greet` saw, then forgets the adds.
    fn greeted(&mut self) -> Result<(), String> {
        let seen = std::mem::take(&mut self.world.resource_mut::<Greeted>().entities);
        let set: BTreeSet<Entity> = seen.iter().copied().collect();
        if set.len() != seen.len() {
            return Err("an entity was greeted twice".into());
        }
        for e in &self.gained {
            if !set.contains(e) {
                return Err(format!("{e} gained a tag but was not greeted"));
            }
        }
        for e in &set {
            if !self.live.get(e).is_some_and(|ent| ent.tag) {
                return Err(format!("{e} was greeted but has no tag"));
            }
        }
        if let Some(e) = set.difference(&self.gained).next() {
            return Err(format!(
                "{e} was greeted but gained no tag ({} moves)",
                self.moves
            ));
        }
        self.gained.clear();
        self.moves = 0;
        Ok(())
    }

    /// `query_changed` with `Added<Tag>` from `greet`'s last run sees every gain since, and
    /// nothing else.
    fn query_added(&self) -> Result<(), String> {
        let queried: BTreeSet<Entity> = self
            .world
            .query_changed::<Entity, Added<Tag>>(self.greet_since)
            .collect();
        if queried != self.gained {
            return Err(format!(
                "query_changed saw {queried:?} as added; gained: {:?}",
                self.gained
            ));
        }
        Ok(())
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
                    2 => self.world.spawn_batch((0..n).map(|i| Tagged {
                        pos: Pos(p + i as i64),
                        tag: Tag,
                    })),
                    _ => self.world.spawn_batch((0..n).map(|i| Hot {
                        pos: Pos(p + i as i64),
                        heat: Heat(i as i64),
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
                            heat: (kind == 3).then_some(i as i64),
                        },
                    );
                    self.written.insert(e);
                    self.changes += 1;
                    self.moves += 1;
                    if kind == 2 {
                        self.gained.insert(e);
                    }
                }
            }
            Op::Despawn(_) | Op::DespawnOld(_) => {
                let e = match *op {
                    Op::DespawnOld(i) => {
                        let mut tagged = self.live.iter().filter(|(_, ent)| ent.tag);
                        tagged
                            .nth(i)
                            .or_else(|| self.live.iter().next())
                            .map(|(e, _)| *e)
                    }
                    Op::Despawn(i) => self.pick(i),
                    _ => unreachable!(),
                };
                if let Some(e) = e {
                    assert!(self.world.despawn(e));
                    self.live.remove(&e);
                    self.written.remove(&e);
                    self.gained.remove(&e);
                    self.changes += 1;
                    self.moves += 1;
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
                            self.gained.remove(&e);
                        }
                        _ => {
                            w.insert(e, Tag).unwrap();
                            ent.tag = true;
                            self.gained.insert(e);
                        }
                    }
                    self.changes += 1;
                    self.moves += 1;
                }
            }
            Op::Integrate => {
                self.world.run_integrate();
                self.integrate();
            }
            Op::Warm => {
                // Heats only: no position is written, so `watch` sees nothing new for it.
                self.world.run_warm();
                self.warm();
            }
            Op::Greet => {
                self.query_added()?;
                self.greet_since = self.world.change_tick();
                self.world.run_greet();
                self.greeted()?;
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
                if matches!(op, Op::Frame) {
                    self.query_added()?;
                }
                self.since = self.world.change_tick();
                if matches!(op, Op::Frame) {
                    // `run_all` runs `integrate` and `warm` before `watch`, and `greet`.
                    self.greet_since = self.since;
                    self.integrate();
                    self.warm();
                    self.world.run_all();
                    self.greeted()?;
                } else {
                    self.world.run_watch();
                }
                self.watched()?;
            }
        }
        // Every value is the model's.
        for (e, ent) in &self.live {
            let w = &self.world;
            if w.get::<Pos>(*e) != Some(&Pos(ent.pos))
                || w.get::<Vel>(*e).map(|v| v.0) != ent.vel
                || w.get::<Heat>(*e).map(|h| h.0) != ent.heat
            {
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
            gained: BTreeSet::new(),
            moves: 0,
            greet_since: 0,
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

/// In a `rows` store, a write of one hot component is not a change of another one in the
/// same row struct: by a pass, by hand and by a mutable query.
#[test]
fn a_write_of_another_component_in_the_row_is_not_a_change() {
    let mut w = World::new();
    let n = 4 * CHUNK;
    let es = w.spawn_batch((0..n as i64).map(|i| Hot {
        pos: Pos(i),
        heat: Heat(0),
    }));
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities.len(), n, "new once");
    w.resource_mut::<Seen>().entities.clear();
    let since = w.change_tick();
    w.run_warm();
    w.get_mut::<Heat>(es[7]).unwrap().0 = 5;
    w.query_mut::<&mut Heat>()
        .unwrap()
        .for_each(|h| h.0 = h.0.wrapping_add(1));
    assert_eq!(w.get::<Heat>(es[7]), Some(&Heat(6)));
    w.run_watch();
    assert_eq!(
        w.resource::<Seen>().entities.len(),
        0,
        "rows reported changed with no write of their position"
    );
    assert_eq!(
        w.query_changed::<Entity, Changed<Pos>>(since).count(),
        0,
        "query_changed: no write of a position"
    );
    assert_eq!(
        w.query_changed::<Entity, Changed<Heat>>(since).count(),
        n,
        "every heat was written"
    );
    // A write of a position: its chunk, exactly.
    w.get_mut::<Pos>(es[CHUNK + 3]).unwrap().0 = -1;
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, es[CHUNK..2 * CHUNK]);
}

/// `added(Tag)` sees exactly the rows whose entity gained a tag (a spawn with it, an insert,
/// also into a dynamic store) and no write; an add follows its row when the row moves.
#[test]
fn an_add_is_a_gain_and_not_a_write() {
    let mut w = World::new();
    let n = 4 * CHUNK;
    let tagged = w.spawn_batch((0..n as i64).map(|i| Tagged {
        pos: Pos(i),
        tag: Tag,
    }));
    let still = w.spawn_batch((0..3).map(|i| Still { pos: Pos(i) }));
    let greeted = |w: &mut World| std::mem::take(&mut w.resource_mut::<Greeted>().entities);
    w.run_greet();
    assert_eq!(greeted(&mut w), tagged, "spawned with a tag: added once");
    w.run_greet();
    assert!(greeted(&mut w).is_empty(), "nothing gained since");

    // Writes are no adds: of the tag itself (an insert replacing it), of the position.
    let since = w.change_tick();
    assert_eq!(w.insert(tagged[5], Tag), Ok(Some(Tag)));
    w.get_mut::<Pos>(tagged[300]).unwrap().0 = 9;
    w.run_integrate();
    w.run_greet();
    assert!(greeted(&mut w).is_empty(), "writes only");
    assert_eq!(w.query_changed::<Entity, Added<Tag>>(since).count(), 0);
    assert_eq!(
        w.query_changed::<Entity, Changed<Tag>>(since).count(),
        CHUNK,
        "but a change: the chunk of the replaced tag"
    );

    // An insert moves a still entity into the tagged store, at its end (chunk 4); then a
    // despawn in chunk 0 moves it into the freed row: its add comes along.
    let since = w.change_tick();
    w.insert(still[0], Tag).unwrap();
    assert_eq!(
        w.query_changed::<Entity, Added<Tag>>(since)
            .collect::<Vec<_>>(),
        [still[0]]
    );
    let changed: Vec<Entity> = w.query_changed::<Entity, Changed<Pos>>(since).collect();
    assert!(changed.contains(&still[0]), "an insert is a change too");
    assert_eq!(
        changed.len(),
        3,
        "and so is the row that filled its place in the still store (with its chunk)"
    );
    assert!(w.despawn(tagged[3]));
    let seen: Vec<Entity> = w.query_changed::<Entity, Added<Tag>>(since).collect();
    assert_eq!(seen, [still[0]], "the add moved with its row, alone");
    w.run_greet();
    assert_eq!(greeted(&mut w), seen);

    // Into dynamic stores: one entity gains a velocity, another a tag and a heat, each in a
    // set no signature declares. What an entity already had is not added again.
    w.run_greet();
    greeted(&mut w);
    let since = w.change_tick();
    w.insert(tagged[10], Vel(1)).unwrap();
    w.insert(still[1], Tag).unwrap();
    w.insert(still[1], Heat(2)).unwrap();
    assert_eq!(
        w.stats().dynamic().count(),
        2,
        "two dynamic stores hold them"
    );
    let added = |w: &World| -> [BTreeSet<Entity>; 3] {
        [
            w.query_changed::<Entity, Added<Vel>>(since).collect(),
            w.query_changed::<Entity, Added<Heat>>(since).collect(),
            w.query_changed::<Entity, Added<Tag>>(since).collect(),
        ]
    };
    let [vel, heat, tag] = added(&w);
    assert_eq!(vel, BTreeSet::from([tagged[10]]));
    assert_eq!(heat, BTreeSet::from([still[1]]));
    assert_eq!(
        tag,
        BTreeSet::from([still[1]]),
        "a velocity gained is no tag gained"
    );
    w.run_greet();
    let seen: BTreeSet<Entity> = greeted(&mut w).into_iter().collect();
    assert_eq!(seen, tag);

    // A removal adds nothing: the row moves back with the adds it had, all older.
    let since = w.change_tick();
    w.remove::<Vel>(tagged[10]).unwrap();
    assert_eq!(w.query_changed::<Entity, Added<Tag>>(since).count(), 0);
    assert!(w
        .query_changed::<Entity, Changed<Tag>>(since)
        .any(|e| e == tagged[10]));

    // But a removal carries the adds the row had: an entity spawned since, moved by a removal
    // into a store whose rows were all added before, is still added.
    let old = w.spawn(Still { pos: Pos(0) });
    w.insert(old, Vel(1)).unwrap();
    let since = w.change_tick();
    let fresh = w.spawn(Mover {
        pos: Pos(0),
        vel: Vel(1),
        moving: Moving,
    });
    w.remove::<Moving>(fresh).unwrap();
    assert_eq!(w.signature_of(fresh), w.signature_of(old), "beside it");
    let added: Vec<Entity> = w.query_changed::<Entity, Added<Pos>>(since).collect();
    assert_eq!(added, [fresh], "its spawn moved with it");
}
