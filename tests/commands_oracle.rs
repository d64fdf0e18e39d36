//! Model-based test of systems with commands. A random initial world and a
//! random sequence of steps drive, side by side:
//!
//! - a reference world running `run_all` (systems one by one in declaration order),
//! - three worlds running `run_schedule` on rayon pools of 1, 2 and 4 threads with a random
//!   small `min_chunk` (so passes really split),
//! - an independent oracle (a map of per-entity component options) that applies the fixture's
//!   system rules and command semantics itself, so a bug making `run_all` and `run_schedule`
//!   wrong the same way is caught too.
//!
//! Steps are frames and direct operations between frames (spawn, despawn, insert, remove, some
//! of them dropping an armed `Bomb` whose `Drop` panics, caught with `catch_unwind`). After
//! every step every world is compared with the oracle: live entity count, every entity's
//! signature and component values (entities the test spawned by logical id; entities spawned
//! by commands, whose ids depend on reservation order, as a sorted multiset of values, with a
//! `Link` compared through the value of the entity it refers to), the number of failed
//! commands, each direct operation's outcome, and `check_invariants`.

use sigecs_fixtures::commands;

use commands::*;
use proptest::prelude::*;
use sigecs::{Entity, WorldError};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

#[cfg(not(miri))]
const CASES: u32 = 256;
#[cfg(not(miri))]
const MAX_INITIAL: usize = 60;
#[cfg(not(miri))]
const MAX_STEPS: usize = 60;
#[cfg(miri)]
const CASES: u32 = 2;
#[cfg(miri)]
const MAX_INITIAL: usize = 6;
#[cfg(miri)]
const MAX_STEPS: usize = 6;

#[cfg(not(miri))]
const THREADS: &[usize] = &[1, 2, 4];
#[cfg(miri)]
const THREADS: &[usize] = &[2];

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const HP: u8 = 1;
const POS: u8 = 2;
const TIMER: u8 = 4;
const MARK: u8 = 8;
const NAME: u8 = 16;
const LINK: u8 = 32;
const BOMB: u8 = 64;

/// The fixture's signatures and their component sets.
const SIGNATURES: [(&str, u8); 6] = [
    ("Body", HP | POS | TIMER),
    ("MarkedBody", HP | POS | TIMER | MARK),
    ("Ghost", POS | TIMER),
    ("Spawner", POS | TIMER | LINK),
    ("Child", HP | NAME),
    ("Rigged", HP | BOMB),
];

/// The components by id (name order) as the world's `ComponentSet` names them, for the
/// names of undeclared sets.
const COMPONENTS: [(&str, u8); 7] = [
    ("BOMB", BOMB),
    ("HP", HP),
    ("LINK", LINK),
    ("MARK", MARK),
    ("NAME", NAME),
    ("POS", POS),
    ("TIMER", TIMER),
];

/// The name the world gives an entity of `set`: its signature's, or the set's (`MARK | POS`,
/// `(no components)` for the empty set) when no signature declares it and the entity lives in
/// a dynamic store.
fn signature_of(set: u8) -> String {
    match SIGNATURES.iter().find(|s| s.1 == set) {
        Some(s) => s.0.to_string(),
        None => {
            let names: Vec<&str> = COMPONENTS
                .iter()
                .filter(|c| set & c.1 != 0)
                .map(|c| c.0)
                .collect();
            match names.join(" | ") {
                empty if empty.is_empty() => "(no components)".into(),
                names => names,
            }
        }
    }
}

/// A oracle entity: its components. `link` refers to a oracle key.
#[derive(Clone, Debug, Default)]
struct Ent {
    hp: Option<i32>,
    pos: Option<i32>,
    timer: Option<u32>,
    mark: bool,
    name: Option<String>,
    link: Option<Option<u64>>,
    bomb: Option<(bool, u32)>,
}

impl Ent {
    fn set(&self) -> u8 {
        let mut s = 0;
        s |= if self.hp.is_some() { HP } else { 0 };
        s |= if self.pos.is_some() { POS } else { 0 };
        s |= if self.timer.is_some() { TIMER } else { 0 };
        s |= if self.mark { MARK } else { 0 };
        s |= if self.name.is_some() { NAME } else { 0 };
        s |= if self.link.is_some() { LINK } else { 0 };
        s |= if self.bomb.is_some() { BOMB } else { 0 };
        s
    }
}

/// One component value for direct inserts.
#[derive(Clone, Debug)]
enum Comp {
    Hp(i32),
    Pos(i32),
    Timer(u32),
    Mark,
    Name(String),
    Bomb(bool, u32),
}

impl Comp {
    fn bit(&self) -> u8 {
        match self {
            Comp::Hp(_) => HP,
            Comp::Pos(_) => POS,
            Comp::Timer(_) => TIMER,
            Comp::Mark => MARK,
            Comp::Name(_) => NAME,
            Comp::Bomb(..) => BOMB,
        }
    }
}

/// What a direct operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Done,
    Replaced,
    NoSuchEntity,
    Missing,
    Undeclared,
    /// A `Bomb` went off (the operation's effect on the world happened first).
    Panicked,
    Dead,
}

/// A canonical row: everything observable of one entity, links resolved to the value of
/// their target (one level deep).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    tracked: Option<usize>,
    signature: String,
    hp: Option<i32>,
    pos: Option<i32>,
    timer: Option<u32>,
    mark: bool,
    name: Option<String>,
    bomb: Option<(bool, u32)>,
    link: Option<LinkTo>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LinkTo {
    Nothing,
    Dead,
    /// The target's row (its own link only as present or not).
    Alive(Box<Row>),
}

// ---------------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------------

/// A deferred command of the oracle.
enum Cmd {
    Spawn(u64, Ent),
    Despawn(u64),
    Insert(u64, Comp),
    Remove(u64, u8),
}

#[derive(Default)]
struct Oracle {
    ents: BTreeMap<u64, Ent>,
    /// Logical id → oracle key of the entities the test spawned (key = logical id).
    tracked: usize,
    next_spawned: u64,
}

const SPAWNED_BASE: u64 = 1 << 40;

impl Oracle {
    fn spawn_tracked(&mut self, e: Ent) -> usize {
        let id = self.tracked;
        self.tracked += 1;
        self.ents.insert(id as u64, e);
        id
    }

    /// Inserts `c` into `k`: the outcome and whether a bomb went off. A refused value is
    /// dropped with its panic caught: the refusal is the outcome, armed bomb or not.
    fn insert(&mut self, k: u64, c: Comp) -> Outcome {
        let Some(e) = self.ents.get_mut(&k) else {
            return Outcome::NoSuchEntity;
        };
        let had = e.set() & c.bit() != 0;
        let mut old_armed = false;
        match c {
            Comp::Hp(v) => e.hp = Some(v),
            Comp::Pos(v) => e.pos = Some(v),
            Comp::Timer(v) => e.timer = Some(v),
            Comp::Mark => e.mark = true,
            Comp::Name(s) => e.name = Some(s),
            Comp::Bomb(a, v) => old_armed = e.bomb.replace((a, v)).is_some_and(|b| b.0),
        }
        if old_armed {
            Outcome::Panicked
        } else if had {
            Outcome::Replaced
        } else {
            Outcome::Done
        }
    }

    fn remove(&mut self, k: u64, bit: u8) -> Outcome {
        let Some(e) = self.ents.get_mut(&k) else {
            return Outcome::NoSuchEntity;
        };
        if e.set() & bit == 0 {
            return Outcome::Missing;
        }
        match bit {
            HP => e.hp = None,
            POS => e.pos = None,
            TIMER => e.timer = None,
            MARK => e.mark = false,
            NAME => e.name = None,
            BOMB => {
                if e.bomb.take().is_some_and(|b| b.0) {
                    return Outcome::Panicked;
                }
            }
            _ => unreachable!(),
        }
        Outcome::Done
    }

    fn despawn(&mut self, k: u64) -> Outcome {
        match self.ents.remove(&k) {
            None => Outcome::Dead,
            Some(e) if e.bomb.is_some_and(|b| b.0) => Outcome::Panicked,
            Some(_) => Outcome::Done,
        }
    }

    /// Applies commands in order; returns the number that failed.
    fn apply(&mut self, cmds: Vec<Cmd>) -> usize {
        let mut failed = 0;
        for c in cmds {
            let outcome = match c {
                Cmd::Spawn(k, e) => {
                    self.ents.insert(k, e);
                    Outcome::Done
                }
                Cmd::Despawn(k) => {
                    let o = self.despawn(k);
                    assert_ne!(o, Outcome::Panicked, "systems never drop armed bombs");
                    Outcome::Done
                }
                Cmd::Insert(k, c) => self.insert(k, c),
                Cmd::Remove(k, bit) => self.remove(k, bit),
            };
            assert_ne!(outcome, Outcome::Panicked, "systems never drop armed bombs");
            if !matches!(outcome, Outcome::Done | Outcome::Replaced) {
                failed += 1;
            }
        }
        failed
    }

    /// One frame of `run_all`, from the fixture's system rules. Returns the failed commands.
    fn frame(&mut self) -> usize {
        let mut failed = 0;
        // drift
        for e in self.ents.values_mut() {
            if let Some(p) = &mut e.pos {
                *p = p.wrapping_add(1);
            }
        }
        // damage, without(Mark)
        for e in self.ents.values_mut() {
            if let (Some(hp), false) = (&mut e.hp, e.mark) {
                *hp = hp.wrapping_sub(2 + e.pos.map_or(0, |p| p.rem_euclid(3)));
            }
        }
        // tick
        let mut cmds = Vec::new();
        for (&k, e) in self.ents.iter_mut() {
            if let Some(t) = &mut e.timer {
                *t = t.wrapping_add(1);
                if !e.mark && *t % 4 == 0 {
                    cmds.push(Cmd::Insert(k, Comp::Mark));
                } else if e.mark && *t % 4 == 2 {
                    cmds.push(Cmd::Remove(k, MARK));
                }
            }
        }
        failed += self.apply(cmds);
        // reap, without(Bomb)
        let mut cmds = Vec::new();
        for (&k, e) in self.ents.iter() {
            if let (Some(hp), None) = (e.hp, e.bomb) {
                if hp <= 0 {
                    cmds.push(Cmd::Despawn(k));
                } else if hp % 7 == 0 {
                    cmds.push(Cmd::Remove(k, HP));
                }
            }
        }
        failed += self.apply(cmds);
        // grow
        for e in self.ents.values_mut() {
            if let (Some(hp), Some(name)) = (&mut e.hp, &e.name) {
                *hp = hp.wrapping_add((name.len() % 3) as i32);
            }
        }
        // breed
        let mut cmds = Vec::new();
        for e in self.ents.values_mut() {
            let (Some(pos), Some(timer), Some(link)) = (e.pos, e.timer, &mut e.link) else {
                continue;
            };
            if timer % 3 != 0 {
                continue;
            }
            if let Some(old) = *link {
                if timer % 6 == 0 {
                    cmds.push(Cmd::Despawn(old));
                } else {
                    cmds.push(Cmd::Insert(old, Comp::Name("orphan".to_string())));
                }
            }
            let child = SPAWNED_BASE + self.next_spawned;
            self.next_spawned += 1;
            cmds.push(Cmd::Spawn(
                child,
                Ent {
                    hp: Some(pos.rem_euclid(7) + 1),
                    name: Some("new".to_string()),
                    ..Ent::default()
                },
            ));
            cmds.push(Cmd::Insert(child, Comp::Name(format!("c{pos}"))));
            *link = Some(child);
        }
        failed += self.apply(cmds);
        // age
        for e in self.ents.values_mut() {
            if let Some(name) = &mut e.name {
                if name.len() < 10 {
                    name.push('+');
                }
            }
        }
        failed
    }

    fn row(&self, k: u64, depth: u32) -> Row {
        let e = &self.ents[&k];
        Row {
            tracked: (k < SPAWNED_BASE).then_some(k as usize),
            signature: signature_of(e.set()),
            hp: e.hp,
            pos: e.pos,
            timer: e.timer,
            mark: e.mark,
            name: e.name.clone(),
            bomb: e.bomb,
            link: e.link.map(|l| match l {
                None => LinkTo::Nothing,
                Some(_) if depth > 0 => LinkTo::Nothing,
                Some(t) if !self.ents.contains_key(&t) => LinkTo::Dead,
                Some(t) => LinkTo::Alive(Box::new(self.row(t, depth + 1))),
            }),
        }
    }

    fn snapshot(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self.ents.keys().map(|&k| self.row(k, 0)).collect();
        rows.sort();
        rows
    }
}

// ---------------------------------------------------------------------------------------------
// The worlds
// ---------------------------------------------------------------------------------------------

/// A world and the ids of the entities the test spawned, by logical id.
struct Subject {
    world: World,
    tracked: Vec<Entity>,
    threads: usize,
}

fn world_row(w: &World, tracked: &BTreeMap<Entity, usize>, e: Entity, depth: u32) -> Row {
    Row {
        tracked: tracked.get(&e).copied(),
        signature: w.signature_name_of(e).expect("alive").to_string(),
        hp: w.get::<Hp>(e).map(|x| x.0),
        pos: w.get::<Pos>(e).map(|x| x.0),
        timer: w.get::<Timer>(e).map(|x| x.0),
        mark: w.get::<Mark>(e).is_some(),
        name: w.get::<Name>(e).map(|x| x.0.clone()),
        bomb: w.get::<Bomb>(e).map(|b| (b.armed, b.value)),
        link: w.get::<Link>(e).map(|l| match l.0 {
            None => LinkTo::Nothing,
            Some(_) if depth > 0 => LinkTo::Nothing,
            Some(t) if !w.is_alive(t) => LinkTo::Dead,
            Some(t) => LinkTo::Alive(Box::new(world_row(w, tracked, t, depth + 1))),
        }),
    }
}

impl Subject {
    fn snapshot(&self) -> Vec<Row> {
        let tracked: BTreeMap<Entity, usize> = self
            .tracked
            .iter()
            .enumerate()
            .filter(|(_, e)| self.world.is_alive(**e))
            .map(|(i, e)| (*e, i))
            .collect();
        let mut rows: Vec<Row> = self
            .world
            .entities()
            .map(|e| world_row(&self.world, &tracked, e, 0))
            .collect();
        rows.sort();
        rows
    }

    fn spawn(&mut self, s: &SpawnKind) {
        let e = match s.clone() {
            SpawnKind::Body(hp, pos, t) => self.world.spawn(Body {
                hp: Hp(hp),
                pos: Pos(pos),
                timer: Timer(t),
            }),
            SpawnKind::MarkedBody(hp, pos, t) => self.world.spawn(MarkedBody {
                hp: Hp(hp),
                pos: Pos(pos),
                timer: Timer(t),
                mark: Mark,
            }),
            SpawnKind::Ghost(pos, t) => self.world.spawn(Ghost {
                pos: Pos(pos),
                timer: Timer(t),
            }),
            SpawnKind::Spawner(pos, t) => self.world.spawn(Spawner {
                pos: Pos(pos),
                timer: Timer(t),
                link: Link(None),
            }),
            SpawnKind::Child(hp, name) => self.world.spawn(Child {
                hp: Hp(hp),
                name: Name(name),
            }),
            SpawnKind::Rigged(hp, armed, value) => self.world.spawn(Rigged {
                hp: Hp(hp),
                bomb: Bomb { armed, value },
            }),
        };
        self.tracked.push(e);
    }

    fn insert(&mut self, i: usize, c: &Comp) -> Outcome {
        let e = self.tracked[i];
        let w = &mut self.world;
        let r = catch_unwind(AssertUnwindSafe(|| -> Outcome {
            fn class<T>(r: Result<Option<T>, WorldError>) -> Outcome {
                match r {
                    Ok(None) => Outcome::Done,
                    Ok(Some(old)) => {
                        drop(old);
                        Outcome::Replaced
                    }
                    Err(e) => error_outcome(&e),
                }
            }
            match c.clone() {
                Comp::Hp(v) => class(w.insert(e, Hp(v))),
                Comp::Pos(v) => class(w.insert(e, Pos(v))),
                Comp::Timer(v) => class(w.insert(e, Timer(v))),
                Comp::Mark => class(w.insert(e, Mark)),
                Comp::Name(s) => class(w.insert(e, Name(s))),
                Comp::Bomb(armed, value) => class(w.insert(e, Bomb { armed, value })),
            }
        }));
        r.unwrap_or(Outcome::Panicked)
    }

    fn remove(&mut self, i: usize, bit: u8) -> Outcome {
        let e = self.tracked[i];
        let w = &mut self.world;
        let r = catch_unwind(AssertUnwindSafe(|| -> Outcome {
            fn class<T>(r: Result<T, WorldError>) -> Outcome {
                match r {
                    Ok(v) => {
                        drop(v);
                        Outcome::Done
                    }
                    Err(e) => error_outcome(&e),
                }
            }
            match bit {
                HP => class(w.remove::<Hp>(e)),
                POS => class(w.remove::<Pos>(e)),
                TIMER => class(w.remove::<Timer>(e)),
                MARK => class(w.remove::<Mark>(e)),
                NAME => class(w.remove::<Name>(e)),
                BOMB => class(w.remove::<Bomb>(e)),
                _ => unreachable!(),
            }
        }));
        r.unwrap_or(Outcome::Panicked)
    }

    fn despawn(&mut self, i: usize) -> Outcome {
        let e = self.tracked[i];
        let w = &mut self.world;
        let r = catch_unwind(AssertUnwindSafe(|| w.despawn(e)));
        match r {
            Ok(true) => Outcome::Done,
            Ok(false) => Outcome::Dead,
            Err(_) => Outcome::Panicked,
        }
    }

    /// Disarms every bomb, so that dropping the world cannot panic.
    fn disarm(&mut self) {
        let all: Vec<Entity> = self.world.entities().collect();
        for e in all {
            if let Some(b) = self.world.get_mut::<Bomb>(e) {
                b.armed = false;
            }
        }
    }
}

fn error_outcome(e: &WorldError) -> Outcome {
    match e {
        WorldError::NoSuchEntity(_) => Outcome::NoSuchEntity,
        WorldError::MissingComponent { .. } => Outcome::Missing,
        WorldError::UndeclaredSignature { .. } => Outcome::Undeclared,
        other => panic!("unexpected error {other}"),
    }
}

fn pools() -> &'static Vec<sigecs::rayon::ThreadPool> {
    static POOLS: OnceLock<Vec<sigecs::rayon::ThreadPool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        THREADS
            .iter()
            .map(|&n| {
                sigecs::rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .unwrap()
            })
            .collect()
    })
}

/// Silences the expected "bomb went off" panics (caught), keeping every other message.
fn quiet_bombs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .unwrap_or("");
            if !msg.starts_with("bomb ") {
                default(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum SpawnKind {
    Body(i32, i32, u32),
    MarkedBody(i32, i32, u32),
    Ghost(i32, u32),
    Spawner(i32, u32),
    Child(i32, String),
    Rigged(i32, bool, u32),
}

impl SpawnKind {
    fn oracle(&self) -> Ent {
        match self.clone() {
            SpawnKind::Body(hp, pos, t) => Ent {
                hp: Some(hp),
                pos: Some(pos),
                timer: Some(t),
                ..Ent::default()
            },
            SpawnKind::MarkedBody(hp, pos, t) => Ent {
                hp: Some(hp),
                pos: Some(pos),
                timer: Some(t),
                mark: true,
                ..Ent::default()
            },
            SpawnKind::Ghost(pos, t) => Ent {
                pos: Some(pos),
                timer: Some(t),
                ..Ent::default()
            },
            SpawnKind::Spawner(pos, t) => Ent {
                pos: Some(pos),
                timer: Some(t),
                link: Some(None),
                ..Ent::default()
            },
            SpawnKind::Child(hp, name) => Ent {
                hp: Some(hp),
                name: Some(name),
                ..Ent::default()
            },
            SpawnKind::Rigged(hp, armed, v) => Ent {
                hp: Some(hp),
                bomb: Some((armed, v)),
                ..Ent::default()
            },
        }
    }
}

#[derive(Clone, Debug)]
enum Step {
    /// One frame: `run_all` on the reference, `run_schedule` on the others.
    Frame {
        min_chunk: usize,
    },
    Spawn(SpawnKind),
    /// Indices are taken modulo the number of tracked entities.
    Despawn(usize),
    Insert(usize, Comp),
    Remove(usize, u8),
}

fn spawn_strategy() -> impl Strategy<Value = SpawnKind> {
    let hp = -2i32..30;
    let pos = -50i32..50;
    let t = 0u32..12;
    prop_oneof![
        4 => (hp.clone(), pos.clone(), t.clone()).prop_map(|(a, b, c)| SpawnKind::Body(a, b, c)),
        2 => (hp.clone(), pos.clone(), t.clone()).prop_map(|(a, b, c)| SpawnKind::MarkedBody(a, b, c)),
        1 => (pos.clone(), t.clone()).prop_map(|(a, b)| SpawnKind::Ghost(a, b)),
        3 => (pos, t).prop_map(|(a, b)| SpawnKind::Spawner(a, b)),
        2 => (hp.clone(), "[a-z]{0,6}").prop_map(|(a, b)| SpawnKind::Child(a, b)),
        2 => (hp, any::<bool>(), 0u32..100).prop_map(|(a, b, c)| SpawnKind::Rigged(a, b, c)),
    ]
}

fn comp_strategy() -> impl Strategy<Value = Comp> {
    prop_oneof![
        (-2i32..30).prop_map(Comp::Hp),
        (-50i32..50).prop_map(Comp::Pos),
        (0u32..12).prop_map(Comp::Timer),
        Just(Comp::Mark),
        "[a-z]{0,6}".prop_map(Comp::Name),
        (any::<bool>(), 0u32..100).prop_map(|(a, v)| Comp::Bomb(a, v)),
    ]
}

fn bit_strategy() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(HP),
        Just(POS),
        Just(TIMER),
        Just(MARK),
        Just(NAME),
        Just(BOMB)
    ]
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1usize..16).prop_map(|min_chunk| Step::Frame { min_chunk }),
        2 => spawn_strategy().prop_map(Step::Spawn),
        2 => any::<usize>().prop_map(Step::Despawn),
        2 => (any::<usize>(), comp_strategy()).prop_map(|(i, c)| Step::Insert(i, c)),
        2 => (any::<usize>(), bit_strategy()).prop_map(|(i, b)| Step::Remove(i, b)),
    ]
}

/// Runs one case; every world and the oracle must agree after every step.
fn check(initial: &[SpawnKind], steps: &[Step]) -> Result<(), String> {
    let mut oracle = Oracle::default();
    let mut reference = Subject {
        world: World::new(),
        tracked: Vec::new(),
        threads: 0,
    };
    let mut staged: Vec<Subject> = THREADS
        .iter()
        .map(|&threads| Subject {
            world: World::new(),
            tracked: Vec::new(),
            threads,
        })
        .collect();
    let result = (|| {
        for s in initial {
            oracle.spawn_tracked(s.oracle());
            reference.spawn(s);
            for w in &mut staged {
                w.spawn(s);
            }
        }
        compare(&oracle, &reference, &staged, "initial")?;
        for (n, step) in steps.iter().enumerate() {
            let at = format!("step {n} ({step:?})");
            match step {
                Step::Frame { min_chunk } => {
                    let expected = oracle.frame();
                    cover(|c| {
                        c.frames += 1;
                        c.failed_commands += expected;
                    });
                    let got = failures(reference.world.run_all());
                    if got != expected {
                        return Err(format!(
                            "{at}: run_all: {got} failed commands, oracle {expected}"
                        ));
                    }
                    for (w, pool) in staged.iter_mut().zip(pools()) {
                        w.world.set_min_chunk(Some(*min_chunk));
                        // Split the passes with commands too: their buffers must still apply
                        // in row order (spawned ids then depend on the thread count).
                        w.world.set_deterministic(false);
                        let got = pool.install(|| failures(w.world.run_schedule()));
                        if got != expected {
                            return Err(format!(
                                "{at}: run_schedule on {} threads: {got} failed commands, oracle {expected}",
                                w.threads
                            ));
                        }
                    }
                }
                Step::Spawn(s) => {
                    oracle.spawn_tracked(s.oracle());
                    reference.spawn(s);
                    for w in &mut staged {
                        w.spawn(s);
                    }
                }
                Step::Despawn(i) | Step::Insert(i, _) | Step::Remove(i, _) => {
                    if oracle.tracked == 0 {
                        continue;
                    }
                    let i = i % oracle.tracked;
                    let (expected, apply): (Outcome, DirectOp) = match step {
                        Step::Despawn(_) => (
                            oracle.despawn(i as u64),
                            Box::new(move |w: &mut Subject| w.despawn(i)),
                        ),
                        Step::Insert(_, c) => {
                            let c2 = c.clone();
                            (
                                oracle.insert(i as u64, c.clone()),
                                Box::new(move |w: &mut Subject| w.insert(i, &c2)),
                            )
                        }
                        Step::Remove(_, b) => {
                            let b = *b;
                            (
                                oracle.remove(i as u64, b),
                                Box::new(move |w: &mut Subject| w.remove(i, b)),
                            )
                        }
                        Step::Frame { .. } | Step::Spawn(_) => unreachable!(),
                    };
                    if expected == Outcome::Panicked {
                        cover(|c| c.bombs_went_off += 1);
                    }
                    for w in std::iter::once(&mut reference).chain(staged.iter_mut()) {
                        let got = apply(w);
                        if got != expected {
                            return Err(format!(
                                "{at}: world (threads {}) gave {got:?}, oracle {expected:?}",
                                w.threads
                            ));
                        }
                    }
                }
            }
            compare(&oracle, &reference, &staged, &at)?;
        }
        Ok(())
    })();
    reference.disarm();
    for w in &mut staged {
        w.disarm();
    }
    result
}

/// A direct operation applied to one world.
type DirectOp = Box<dyn Fn(&mut Subject) -> Outcome>;

fn failures(run: Result<(), sigecs::CommandErrors>) -> usize {
    run.err().map_or(0, |e| e.0.len())
}

fn compare(
    oracle: &Oracle,
    reference: &Subject,
    staged: &[Subject],
    at: &str,
) -> Result<(), String> {
    let expected = oracle.snapshot();
    cover(|c| {
        for r in &expected {
            match &r.link {
                Some(LinkTo::Alive(_)) => c.live_links += 1,
                Some(LinkTo::Dead) => c.dead_links += 1,
                _ => {}
            }
            c.orphans += usize::from(r.name.as_deref().is_some_and(|n| n.starts_with("orphan")));
            c.ghosts += usize::from(r.signature == "Ghost");
            c.marked += usize::from(r.signature == "MarkedBody");
        }
    });
    for w in std::iter::once(reference).chain(staged) {
        let who = if w.threads == 0 {
            "run_all world".to_string()
        } else {
            format!("run_schedule world on {} threads", w.threads)
        };
        if let Err(e) = w.world.check_invariants() {
            return Err(format!("{at}: {who}: invariants: {e}"));
        }
        if w.world.len() != expected.len() || w.world.entities().count() != expected.len() {
            return Err(format!(
                "{at}: {who}: {} live entities, oracle {}",
                w.world.len(),
                expected.len()
            ));
        }
        let got = w.snapshot();
        if got != expected {
            let diff: Vec<String> = got
                .iter()
                .filter(|r| !expected.contains(r))
                .map(|r| format!("  world only: {r:?}"))
                .chain(
                    expected
                        .iter()
                        .filter(|r| !got.contains(r))
                        .map(|r| format!("  oracle only: {r:?}")),
                )
                .take(12)
                .collect();
            return Err(format!(
                "{at}: {who} differs from the oracle:\n{}",
                diff.join("\n")
            ));
        }
    }
    Ok(())
}

/// What the cases exercised, summed over all cases: the test asserts each is non-zero, so it
/// cannot pass vacuously.
#[derive(Debug, Default)]
struct Coverage {
    frames: usize,
    failed_commands: usize,
    bombs_went_off: usize,
    live_links: usize,
    dead_links: usize,
    orphans: usize,
    ghosts: usize,
    marked: usize,
}

thread_local! {
    static COVERAGE: std::cell::RefCell<Coverage> = std::cell::RefCell::new(Coverage::default());
}

fn cover(f: impl FnOnce(&mut Coverage)) {
    COVERAGE.with(|c| f(&mut c.borrow_mut()));
}

#[test]
fn systems_with_commands_match_the_model_at_any_thread_count() {
    quiet_bombs();
    let strategy = (
        prop::collection::vec(spawn_strategy(), 0..MAX_INITIAL),
        prop::collection::vec(step_strategy(), 1..MAX_STEPS),
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let r = runner.run(&strategy, |(initial, steps)| {
        check(&initial, &steps).map_err(TestCaseError::fail)
    });
    if let Err(e) = r {
        panic!("{e}");
    }
    COVERAGE.with(|c| {
        let c = c.borrow();
        eprintln!("coverage: {c:?}");
        #[cfg(not(miri))]
        for (what, n) in [
            ("frames", c.frames),
            ("failed commands", c.failed_commands),
            ("bombs that went off", c.bombs_went_off),
            ("links to live children", c.live_links),
            ("links to dead children", c.dead_links),
            ("orphans", c.orphans),
            ("ghosts", c.ghosts),
            ("marked bodies", c.marked),
        ] {
            assert!(n > 0, "no {what} in any case: {c:?}");
        }
    });
}

/// The stages the test relies on: `tick` shares a stage with `damage`, which reads the
/// entities it marks; `breed` shares one with `grow`, which reads the children it renames;
/// `drift` runs row by row before `damage` in their stage.
#[test]
fn commands_systems_share_stages_with_earlier_readers() {
    let stages: Vec<Vec<&str>> = World::schedule()
        .stages
        .iter()
        .map(|s| s.systems.to_vec())
        .collect();
    assert_eq!(
        stages,
        [
            vec!["drift", "damage", "tick"],
            vec!["reap"],
            vec!["grow", "breed"],
            vec!["age"]
        ]
    );
}

/// A fixed scenario: a spawner's link resolves to the child it spawned, the renaming command
/// issued right after the spawn applies, and a stale link's rename fails.
#[test]
fn a_spawned_entity_stored_in_a_component_resolves() {
    quiet_bombs();
    for staged in [false, true] {
        let mut w = World::new();
        let s = w.spawn(Spawner {
            pos: Pos(4),
            timer: Timer(2),
            link: Link(None),
        });
        let run = |w: &mut World| {
            if staged {
                w.run_schedule()
            } else {
                w.run_all()
            }
        };
        // timer 3: breeds (tick inserts Mark into the spawner only at % 4 == 0).
        run(&mut w).unwrap();
        let child = w.get::<Link>(s).unwrap().0.expect("linked");
        assert!(w.is_alive(child));
        assert_eq!(w.signature_name_of(child), Some("Child"));
        assert_eq!(
            w.get::<Name>(child).unwrap().0,
            "c5+",
            "renamed after the spawn, then aged"
        );
        assert_eq!(w.get::<Hp>(child), Some(&Hp(6)));
        w.despawn(child);
        // timer 4: Spawner + Mark is undeclared: the spawner moves to its dynamic store, where
        // the systems still visit it.
        run(&mut w).unwrap();
        assert_eq!(w.signature_name_of(s), Some("LINK | MARK | POS | TIMER"));
        run(&mut w).unwrap();
        // timer 6: Mark removed (back to Spawner); despawns the (already dead) old child: no
        // error; spawns a new one.
        run(&mut w).unwrap();
        assert_eq!(w.signature_name_of(s), Some("Spawner"));
        assert_eq!(w.get::<Timer>(s), Some(&Timer(6)));
        let second = w.get::<Link>(s).unwrap().0.unwrap();
        assert!(second != child && w.is_alive(second));
        assert_eq!(w.check_invariants(), Ok(()));
    }
}
