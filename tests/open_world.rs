//! Reference-based test of an open world: random spawns, inserts, removes, despawns, clears and
//! system runs drive four copies of the `open` fixture world (twelve components, three
//! declared signatures, so most sets an entity reaches live in dynamic stores) and a naive
//! reference model (one `Option` per component per entity), and after every step every copy
//! is compared with the model: every component of every entity, its signature or set name, the
//! entity count, the resource a system writes, the live `Counted` values (exactly: no value is
//! lost or dropped twice, also when its `Drop` panics), the dynamic stores' rows, and the
//! world's invariants. The copies run the systems four ways: `run_all` and `run_schedule`, each
//! on one thread and on two with every pass split into jobs of at most one row
//! (`set_min_chunk(Some(1))`), so parallel passes over dynamic stores are checked too.

use proptest::prelude::*;
use sigecs::query::{With, Without};
use sigecs::{Entity, WorldError};
use sigecs_fixtures::open::*;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(not(miri))]
const CASES: u32 = 256;
#[cfg(not(miri))]
const MAX_OPS: usize = 200;
#[cfg(miri)]
const CASES: u32 = 1;
#[cfg(miri)]
const MAX_OPS: usize = 16;

// ---------------------------------------------------------------------------------------------
// Components, by id (the world numbers them in name order)
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum K {
    A,
    Al,
    B,
    Big,
    C,
    Counted,
    D,
    Link,
    Name,
    Tag1,
    Tag2,
    Tag3,
}

const KINDS: [K; 12] = [
    K::A,
    K::Al,
    K::B,
    K::Big,
    K::C,
    K::Counted,
    K::D,
    K::Link,
    K::Name,
    K::Tag1,
    K::Tag2,
    K::Tag3,
];

const NAMES: [&str; 12] = [
    "A", "Al", "B", "Big", "C", "Counted", "D", "Link", "Name", "Tag1", "Tag2", "Tag3",
];

impl K {
    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// The declared signatures and their sets.
fn declared(set: u16) -> Option<&'static str> {
    let base = K::A.bit() | K::B.bit();
    let named = K::A.bit() | K::Name.bit() | K::Tag1.bit();
    let heavy = K::Big.bit() | K::Al.bit() | K::C.bit();
    match set {
        s if s == base => Some("Base"),
        s if s == named => Some("Named"),
        s if s == heavy => Some("Heavy"),
        _ => None,
    }
}

/// The name the world gives an entity of `set`: its signature's, or `A | TAG2` (`(no
/// components)` for the empty set).
fn set_name(set: u16) -> String {
    match declared(set) {
        Some(name) => name.to_string(),
        None => {
            let names: Vec<String> = KINDS
                .iter()
                .filter(|k| set & k.bit() != 0)
                .map(|&k| NAMES[k as usize].to_uppercase())
                .collect();
            match names.join(" | ") {
                empty if empty.is_empty() => "(no components)".into(),
                names => names,
            }
        }
    }
}

/// One component value.
#[derive(Clone, Debug, PartialEq)]
enum V {
    A(u32),
    Al(u64),
    B(i64),
    Big([u64; 4]),
    C(i32),
    Counted(u32, bool),
    D(u16),
    Link(Option<Entity>),
    Name(String),
    Tag1,
    Tag2,
    Tag3,
}

impl V {
    fn kind(&self) -> K {
        match self {
            V::A(_) => K::A,
            V::Al(_) => K::Al,
            V::B(_) => K::B,
            V::Big(_) => K::Big,
            V::C(_) => K::C,
            V::Counted(..) => K::Counted,
            V::D(_) => K::D,
            V::Link(_) => K::Link,
            V::Name(_) => K::Name,
            V::Tag1 => K::Tag1,
            V::Tag2 => K::Tag2,
            V::Tag3 => K::Tag3,
        }
    }
}

/// An entity of the model: its components by kind.
type Ent = BTreeMap<K, V>;

fn set_of(e: &Ent) -> u16 {
    e.keys().map(|k| k.bit()).fold(0, |a, b| a | b)
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Reference {
    live: BTreeMap<Entity, Ent>,
    dead: Vec<Entity>,
    tally: (u64, u64),
    /// Armed `Counted` values dropped (by the world or by this test), per copy.
    fuses: u64,
}

impl Reference {
    fn counted(&self) -> i64 {
        self.live
            .values()
            .filter(|e| e.contains_key(&K::Counted))
            .count() as i64
    }

    /// Runs system `name` as its code does, in declaration-order semantics: a system's
    /// commands apply after it ran over every row.
    fn system(&mut self, name: &str) {
        let has = |e: &Ent, k: K| e.contains_key(&k);
        match name {
            "grow" => {
                for e in self.live.values_mut() {
                    let b = match e.get(&K::B) {
                        Some(V::B(b)) => *b as u32,
                        _ => 0,
                    };
                    if let Some(V::A(a)) = e.get_mut(&K::A) {
                        *a = a.wrapping_add(1).wrapping_add(b);
                    }
                }
            }
            "heat" => {
                for e in self.live.values_mut() {
                    if !(has(e, K::Tag1) && !has(e, K::Tag2) && has(e, K::A)) {
                        continue;
                    }
                    let Some(V::A(a)) = e.get(&K::A).cloned() else {
                        unreachable!()
                    };
                    if let Some(V::C(c)) = e.get_mut(&K::C) {
                        *c = c.wrapping_add(a as i32);
                    }
                }
            }
            "link" => {
                for (&id, e) in self.live.iter_mut() {
                    let a = has(e, K::A);
                    if let Some(V::Link(l)) = e.get_mut(&K::Link) {
                        *l = a.then_some(id);
                    }
                }
            }
            "churn" => {
                for e in self.live.values_mut() {
                    let Some(V::Al(al)) = e.get(&K::Al).cloned() else {
                        continue;
                    };
                    if let Some(V::Big(big)) = e.get_mut(&K::Big) {
                        big[0] = big[0].wrapping_add(al);
                        big[3] ^= big[0];
                    }
                }
            }
            "rename" => {
                for e in self.live.values_mut() {
                    let Some(V::Name(n)) = e.get_mut(&K::Name) else {
                        continue;
                    };
                    if n.len() < 8 {
                        n.push('+');
                    }
                    if let Some(V::D(d)) = e.get_mut(&K::D) {
                        *d = d.wrapping_add(1);
                    }
                }
            }
            "toggle" => {
                let mut commands: Vec<(Entity, Result<V, K>)> = Vec::new();
                for (&id, e) in &self.live {
                    let Some(V::A(a)) = e.get(&K::A) else {
                        continue;
                    };
                    if !has(e, K::Tag2) && a % 5 == 0 {
                        commands.push((id, Ok(V::Tag2)));
                    } else if has(e, K::Tag2) && a % 7 == 0 {
                        commands.push((id, Err(K::Tag2)));
                    }
                    if has(e, K::D) {
                        if !has(e, K::Tag3) && a % 3 == 0 {
                            commands.push((id, Ok(V::Tag3)));
                        } else if has(e, K::Tag3) && a % 4 == 0 {
                            commands.push((id, Err(K::Tag3)));
                        }
                    }
                }
                for (id, c) in commands {
                    let e = self.live.get_mut(&id).unwrap();
                    match c {
                        Ok(v) => {
                            e.insert(v.kind(), v);
                        }
                        Err(k) => {
                            e.remove(&k);
                        }
                    }
                }
            }
            "tag3_only" => {
                for e in self.live.values_mut() {
                    if !has(e, K::Tag3) {
                        continue;
                    }
                    if let Some(V::D(d)) = e.get_mut(&K::D) {
                        *d = d.wrapping_add(2);
                    }
                }
            }
            "tally" => {
                for e in self.live.values() {
                    if let Some(V::Counted(v, _)) = e.get(&K::Counted) {
                        self.tally.0 += 1;
                        self.tally.1 += u64::from(*v);
                    }
                }
            }
            _ => unreachable!("unknown system {name}"),
        }
    }
}

const SYSTEMS: [&str; 8] = [
    "grow",
    "heat",
    "link",
    "churn",
    "rename",
    "toggle",
    "tag3_only",
    "tally",
];

// ---------------------------------------------------------------------------------------------
// The worlds
// ---------------------------------------------------------------------------------------------

/// One copy of the world and how it runs its systems.
struct Copy {
    world: World,
    staged: bool,
    pool: sigecs::rayon::ThreadPool,
}

impl Copy {
    fn new(staged: bool, threads: usize) -> Copy {
        let mut world = World::new();
        if threads > 1 {
            world.set_min_chunk(Some(1));
            // Split the pass with commands (`toggle`) too: it spawns nothing.
            world.set_deterministic(false);
        }
        Copy {
            world,
            staged,
            pool: sigecs::rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        }
    }

    fn what(&self) -> String {
        format!(
            "{} on {} thread(s)",
            if self.staged {
                "run_schedule"
            } else {
                "run_all"
            },
            self.pool.current_num_threads()
        )
    }
}

fn world_get(w: &World, e: Entity, k: K) -> Option<V> {
    match k {
        K::A => w.get::<A>(e).map(|x| V::A(x.0)),
        K::Al => w.get::<Al>(e).map(|x| V::Al(x.0)),
        K::B => w.get::<B>(e).map(|x| V::B(x.0)),
        K::Big => w.get::<Big>(e).map(|x| V::Big(x.0)),
        K::C => w.get::<C>(e).map(|x| V::C(x.0)),
        K::Counted => w.get::<Counted>(e).map(|x| V::Counted(x.value, x.armed)),
        K::D => w.get::<D>(e).map(|x| V::D(x.0)),
        K::Link => w.get::<Link>(e).map(|x| V::Link(x.0)),
        K::Name => w.get::<Name>(e).map(|x| V::Name(x.0.clone())),
        K::Tag1 => w.get::<Tag1>(e).map(|_| V::Tag1),
        K::Tag2 => w.get::<Tag2>(e).map(|_| V::Tag2),
        K::Tag3 => w.get::<Tag3>(e).map(|_| V::Tag3),
    }
}

/// What an insert or remove returned, with the removed or replaced value read out (and
/// dropped, which panics for an armed `Counted`: `Err(true)`).
type Outcome = Result<Option<V>, WorldError>;

/// Drops `value` and says whether its `Drop` panicked.
fn dropped<T>(value: T) -> bool {
    catch_unwind(AssertUnwindSafe(move || drop(value))).is_err()
}

fn world_insert(w: &mut World, e: Entity, v: &V) -> (Outcome, bool) {
    fn go<T: sigecs::ComponentOf<Model> + 'static>(
        w: &mut World,
        e: Entity,
        value: T,
        read: impl FnOnce(&T) -> V,
    ) -> (Outcome, bool) {
        match w.insert(e, value) {
            Ok(Some(old)) => {
                let v = read(&old);
                (Ok(Some(v)), dropped(old))
            }
            Ok(None) => (Ok(None), false),
            Err(err) => (Err(err), false),
        }
    }
    match v.clone() {
        V::A(x) => go(w, e, A(x), |o| V::A(o.0)),
        V::Al(x) => go(w, e, Al(x), |o| V::Al(o.0)),
        V::B(x) => go(w, e, B(x), |o| V::B(o.0)),
        V::Big(x) => go(w, e, Big(x), |o| V::Big(o.0)),
        V::C(x) => go(w, e, C(x), |o| V::C(o.0)),
        V::Counted(x, armed) => go(w, e, Counted::new(x, armed), |o| {
            V::Counted(o.value, o.armed)
        }),
        V::D(x) => go(w, e, D(x), |o| V::D(o.0)),
        V::Link(x) => go(w, e, Link(x), |o| V::Link(o.0)),
        V::Name(x) => go(w, e, Name(x), |o| V::Name(o.0.clone())),
        V::Tag1 => go(w, e, Tag1, |_| V::Tag1),
        V::Tag2 => go(w, e, Tag2, |_| V::Tag2),
        V::Tag3 => go(w, e, Tag3, |_| V::Tag3),
    }
}

fn world_remove(w: &mut World, e: Entity, k: K) -> (Outcome, bool) {
    fn go<T: sigecs::ComponentOf<Model> + 'static>(
        w: &mut World,
        e: Entity,
        read: impl FnOnce(&T) -> V,
    ) -> (Outcome, bool) {
        match w.remove::<T>(e) {
            Ok(old) => {
                let v = read(&old);
                (Ok(Some(v)), dropped(old))
            }
            Err(err) => (Err(err), false),
        }
    }
    match k {
        K::A => go::<A>(w, e, |o| V::A(o.0)),
        K::Al => go::<Al>(w, e, |o| V::Al(o.0)),
        K::B => go::<B>(w, e, |o| V::B(o.0)),
        K::Big => go::<Big>(w, e, |o| V::Big(o.0)),
        K::C => go::<C>(w, e, |o| V::C(o.0)),
        K::Counted => go::<Counted>(w, e, |o| V::Counted(o.value, o.armed)),
        K::D => go::<D>(w, e, |o| V::D(o.0)),
        K::Link => go::<Link>(w, e, |o| V::Link(o.0)),
        K::Name => go::<Name>(w, e, |o| V::Name(o.0.clone())),
        K::Tag1 => go::<Tag1>(w, e, |_| V::Tag1),
        K::Tag2 => go::<Tag2>(w, e, |_| V::Tag2),
        K::Tag3 => go::<Tag3>(w, e, |_| V::Tag3),
    }
}

/// Values to spawn one of the declared signatures with.
#[derive(Clone, Debug)]
struct Vals {
    a: u32,
    b: i64,
    name: String,
    big: [u64; 4],
    al: u64,
    c: i32,
}

fn model_of(sig: usize, v: &Vals) -> Ent {
    let mut e = Ent::new();
    let mut put = |x: V| {
        e.insert(x.kind(), x);
    };
    match sig {
        0 => {
            put(V::A(v.a));
            put(V::B(v.b));
        }
        1 => {
            put(V::A(v.a));
            put(V::Name(v.name.clone()));
            put(V::Tag1);
        }
        _ => {
            put(V::Big(v.big));
            put(V::Al(v.al));
            put(V::C(v.c));
        }
    }
    e
}

fn spawn(w: &mut World, sig: usize, v: &Vals) -> Entity {
    match sig {
        0 => w.spawn(Base {
            a: A(v.a),
            b: B(v.b),
        }),
        1 => w.spawn(Named {
            a: A(v.a),
            name: Name(v.name.clone()),
            tag1: Tag1,
        }),
        _ => w.spawn(Heavy {
            big: Big(v.big),
            al: Al(v.al),
            c: C(v.c),
        }),
    }
}

fn spawn_batch(w: &mut World, sig: usize, vs: &[Vals]) -> Vec<Entity> {
    match sig {
        0 => w.spawn_batch(vs.iter().map(|v| Base {
            a: A(v.a),
            b: B(v.b),
        })),
        1 => w.spawn_batch(vs.iter().map(|v| Named {
            a: A(v.a),
            name: Name(v.name.clone()),
            tag1: Tag1,
        })),
        _ => w.spawn_batch(vs.iter().map(|v| Heavy {
            big: Big(v.big),
            al: Al(v.al),
            c: C(v.c),
        })),
    }
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/// Which handle an operation targets, resolved against the model when it runs.
#[derive(Clone, Copy, Debug)]
enum Pick {
    Live(usize),
    Dead(usize),
    Never(u32),
}

impl Pick {
    fn resolve(self, m: &Reference) -> Entity {
        let never = Entity::new(3_000_000, 0);
        match self {
            Pick::Live(i) => m
                .live
                .keys()
                .nth(i % m.live.len().max(1))
                .copied()
                .unwrap_or(never),
            Pick::Dead(i) => m
                .dead
                .get(i % m.dead.len().max(1))
                .copied()
                .unwrap_or(never),
            Pick::Never(i) => Entity::new(3_000_000 + i, 0),
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Spawn(usize, Vals),
    SpawnBatch(usize, Vec<Vals>),
    Insert(Pick, V),
    Remove(Pick, K),
    Despawn(Pick),
    /// Arms (or disarms) the entity's `Counted`, whose `Drop` then panics.
    Arm(Pick, bool),
    Run,
    RunSystem(usize),
    Clear,
}

fn vals() -> impl Strategy<Value = Vals> {
    (
        0..60u32,
        -5i64..5,
        "[a-z]{0,6}",
        any::<[u64; 4]>(),
        any::<u64>(),
        any::<i32>(),
    )
        .prop_map(|(a, b, name, big, al, c)| Vals {
            a,
            b,
            name,
            big,
            al,
            c,
        })
}

fn value() -> impl Strategy<Value = V> {
    prop_oneof![
        (0..60u32).prop_map(V::A),
        any::<u64>().prop_map(V::Al),
        (-5i64..5).prop_map(V::B),
        any::<[u64; 4]>().prop_map(V::Big),
        any::<i32>().prop_map(V::C),
        (any::<u32>(), prop::bool::weighted(0.2)).prop_map(|(v, a)| V::Counted(v, a)),
        any::<u16>().prop_map(V::D),
        Just(V::Link(None)),
        "[a-z]{0,6}".prop_map(V::Name),
        Just(V::Tag1),
        Just(V::Tag2),
        Just(V::Tag3),
    ]
}

fn kind() -> impl Strategy<Value = K> {
    (0..12usize).prop_map(|i| KINDS[i])
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        8 => any::<usize>().prop_map(Pick::Live),
        1 => any::<usize>().prop_map(Pick::Dead),
        1 => (0..10u32).prop_map(Pick::Never),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, vals()).prop_map(|(s, v)| Op::Spawn(s, v)),
        1 => (0..3usize, prop::collection::vec(vals(), 0..12)).prop_map(|(s, v)| Op::SpawnBatch(s, v)),
        8 => (pick(), value()).prop_map(|(p, v)| Op::Insert(p, v)),
        5 => (pick(), kind()).prop_map(|(p, k)| Op::Remove(p, k)),
        2 => pick().prop_map(Op::Despawn),
        1 => (pick(), any::<bool>()).prop_map(|(p, a)| Op::Arm(p, a)),
        3 => Just(Op::Run),
        1 => (0..8usize).prop_map(Op::RunSystem),
        1 => Just(Op::Clear),
    ]
}

// ---------------------------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------------------------

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// Every copy compared with the model.
fn compare(m: &Reference, copies: &[Copy]) -> Result<(), String> {
    let counted = m.counted() * copies.len() as i64;
    ensure!(
        Counted::live() == counted,
        "{} live Counted values, the model expects {counted}",
        Counted::live()
    );
    ensure!(
        FUSES_DROPPED.with(|f| f.get()) == m.fuses * copies.len() as u64,
        "armed values dropped {}, the model expects {}",
        FUSES_DROPPED.with(|f| f.get()),
        m.fuses * copies.len() as u64
    );
    for c in copies {
        let w = &c.world;
        let what = c.what();
        w.check_invariants().map_err(|e| format!("{what}: {e}"))?;
        ensure!(
            w.len() == m.live.len(),
            "{what}: {} entities, model {}",
            w.len(),
            m.live.len()
        );
        for (&e, ent) in &m.live {
            ensure!(w.is_alive(e), "{what}: {e} is not alive");
            let set = set_of(ent);
            let name = w.signature_name_of(e).unwrap_or_default();
            ensure!(
                name == set_name(set),
                "{what}: {e} is in {name}, model {}",
                set_name(set)
            );
            ensure!(
                w.is_declared(e) == Some(declared(set).is_some()),
                "{what}: {e} declared or not"
            );
            for k in KINDS {
                let got = world_get(w, e, k);
                let want = ent.get(&k).cloned();
                ensure!(
                    got == want,
                    "{what}: {e} {k:?}: world {got:?}, model {want:?}"
                );
            }
        }
        for &e in &m.dead {
            ensure!(
                !w.is_alive(e) && world_get(w, e, K::A).is_none(),
                "{what}: dead {e} alive"
            );
        }
        let tally = w.resource::<Tally>();
        ensure!(
            (tally.rows, tally.sum) == m.tally,
            "{what}: tally {:?}, model {:?}",
            (tally.rows, tally.sum),
            m.tally
        );
        // The dynamic stores hold exactly the entities of the undeclared sets.
        let mut rows: BTreeMap<String, usize> = BTreeMap::new();
        for ent in m.live.values() {
            let set = set_of(ent);
            if declared(set).is_none() {
                *rows.entry(set_name(set)).or_default() += 1;
            }
        }
        let dynamic: BTreeMap<String, usize> = w
            .undeclared()
            .iter()
            .filter(|u| u.rows > 0)
            .map(|u| {
                (
                    u.to_string().split(": ").next().unwrap().to_string(),
                    u.rows,
                )
            })
            .collect();
        ensure!(
            dynamic == rows,
            "{what}: dynamic stores {dynamic:?}, model {rows:?}"
        );
        // Queries visit dynamic stores like declared ones, with filters.
        let q: BTreeSet<(Entity, u32, Option<i64>)> = w
            .query::<(Entity, &A, Option<&B>)>()
            .map(|(e, a, b)| (e, a.0, b.map(|b| b.0)))
            .collect();
        let want: BTreeSet<(Entity, u32, Option<i64>)> = m
            .live
            .iter()
            .filter_map(|(&e, ent)| match (ent.get(&K::A), ent.get(&K::B)) {
                (Some(V::A(a)), b) => Some((
                    e,
                    *a,
                    b.map(|b| match b {
                        V::B(b) => *b,
                        _ => unreachable!(),
                    }),
                )),
                _ => None,
            })
            .collect();
        ensure!(q == want, "{what}: query (Entity, &A, Option<&B>)");
        let tagged: BTreeSet<Entity> = w
            .query_filtered::<Entity, (With<Tag1>, Without<Tag2>)>()
            .collect();
        let want: BTreeSet<Entity> = m
            .live
            .iter()
            .filter(|(_, e)| e.contains_key(&K::Tag1) && !e.contains_key(&K::Tag2))
            .map(|(&e, _)| e)
            .collect();
        ensure!(
            tagged == want,
            "{what}: query_filtered (With<Tag1>, Without<Tag2>)"
        );
    }
    Ok(())
}

/// Applies `op` to the model and to every copy, checking what each returned.
fn step(m: &mut Reference, copies: &mut [Copy], op: &Op) -> Result<(), String> {
    match op {
        Op::Spawn(sig, v) => {
            let mut ids = Vec::new();
            for c in copies.iter_mut() {
                ids.push(spawn(&mut c.world, *sig, v));
            }
            ensure!(
                ids.windows(2).all(|w| w[0] == w[1]),
                "copies spawned {ids:?}"
            );
            m.live.insert(ids[0], model_of(*sig, v));
        }
        Op::SpawnBatch(sig, vs) => {
            let mut all = Vec::new();
            for c in copies.iter_mut() {
                all.push(spawn_batch(&mut c.world, *sig, vs));
            }
            ensure!(
                all.windows(2).all(|w| w[0] == w[1]),
                "copies spawned {all:?}"
            );
            for (e, v) in all[0].iter().zip(vs) {
                m.live.insert(*e, model_of(*sig, v));
            }
        }
        Op::Insert(p, v) => {
            let e = p.resolve(m);
            let (want, fuse) = match m.live.get_mut(&e) {
                // The refused value is dropped (its panic caught: the error is what the caller
                // sees).
                None => (
                    Err(WorldError::NoSuchEntity(e)),
                    matches!(v, V::Counted(_, true)),
                ),
                Some(ent) => {
                    let old = ent.insert(v.kind(), v.clone());
                    let fuse = matches!(old, Some(V::Counted(_, true)));
                    (Ok(old), fuse)
                }
            };
            m.fuses += u64::from(fuse);
            for c in copies.iter_mut() {
                let (got, panicked) = world_insert(&mut c.world, e, v);
                ensure!(
                    got == want,
                    "{}: insert {v:?} into {e}: {got:?}, model {want:?}",
                    c.what()
                );
                ensure!(
                    panicked == (fuse && want.is_ok()),
                    "{}: the replaced value's drop",
                    c.what()
                );
            }
        }
        Op::Remove(p, k) => {
            let e = p.resolve(m);
            let want = match m.live.get_mut(&e) {
                None => Err(WorldError::NoSuchEntity(e)),
                Some(ent) => match ent.remove(k) {
                    Some(v) => Ok(Some(v)),
                    None => Err(WorldError::MissingComponent {
                        entity: e,
                        signature: "",
                        component: NAMES[*k as usize],
                    }),
                },
            };
            let fuse = matches!(want, Ok(Some(V::Counted(_, true))));
            m.fuses += u64::from(fuse);
            for c in copies.iter_mut() {
                let (got, panicked) = world_remove(&mut c.world, e, *k);
                let same = match (&got, &want) {
                    // The signature a missing component is reported in is the world's name.
                    (
                        Err(WorldError::MissingComponent {
                            entity, component, ..
                        }),
                        Err(WorldError::MissingComponent {
                            entity: e2,
                            component: c2,
                            ..
                        }),
                    ) => entity == e2 && component == c2,
                    _ => got == want,
                };
                ensure!(
                    same,
                    "{}: remove {k:?} from {e}: {got:?}, model {want:?}",
                    c.what()
                );
                ensure!(panicked == fuse, "{}: the removed value's drop", c.what());
            }
        }
        Op::Despawn(p) => {
            let e = p.resolve(m);
            let ent = m.live.remove(&e);
            let alive = ent.is_some();
            let fuse = matches!(
                ent.and_then(|mut x| x.remove(&K::Counted)),
                Some(V::Counted(_, true))
            );
            if alive {
                m.dead.push(e);
            }
            m.fuses += u64::from(fuse);
            for c in copies.iter_mut() {
                let r = catch_unwind(AssertUnwindSafe(|| c.world.despawn(e)));
                ensure!(
                    r.is_err() == fuse,
                    "{}: despawn {e} panicked: {}",
                    c.what(),
                    r.is_err()
                );
                if let Ok(got) = r {
                    ensure!(got == alive, "{}: despawn {e} gave {got}", c.what());
                }
            }
        }
        Op::Arm(p, armed) => {
            let e = p.resolve(m);
            if let Some(V::Counted(_, a)) = m.live.get_mut(&e).and_then(|x| x.get_mut(&K::Counted))
            {
                *a = *armed;
            }
            for c in copies.iter_mut() {
                if let Some(x) = c.world.get_mut::<Counted>(e) {
                    x.armed = *armed;
                }
            }
        }
        Op::Run => {
            for name in SYSTEMS {
                m.system(name);
            }
            for c in copies.iter_mut() {
                let (world, staged) = (&mut c.world, c.staged);
                let r = c.pool.install(|| {
                    if staged {
                        world.run_schedule()
                    } else {
                        world.run_all()
                    }
                });
                ensure!(r.is_ok(), "{}: {r:?}", c.what());
            }
        }
        Op::RunSystem(i) => {
            m.system(SYSTEMS[*i]);
            for c in copies.iter_mut() {
                let world = &mut c.world;
                let r = c.pool.install(|| world.run_system(*i));
                ensure!(r == Ok(true), "{}: run_system({i}): {r:?}", c.what());
            }
        }
        Op::Clear => {
            let fuses = m
                .live
                .values()
                .filter(|e| matches!(e.get(&K::Counted), Some(V::Counted(_, true))))
                .count() as u64;
            m.fuses += fuses;
            let ids: Vec<Entity> = std::mem::take(&mut m.live).into_keys().collect();
            m.dead.extend(ids);
            for c in copies.iter_mut() {
                let r = catch_unwind(AssertUnwindSafe(|| c.world.clear()));
                ensure!(
                    r.is_err() == (fuses > 0),
                    "{}: clear panicked: {}",
                    c.what(),
                    r.is_err()
                );
            }
        }
    }
    Ok(())
}

fn run_case(ops: &[Op]) -> Result<(), String> {
    let live = Counted::live();
    let fuses = FUSES_DROPPED.with(|f| f.get());
    LIVE.with(|l| l.set(0));
    FUSES_DROPPED.with(|f| f.set(0));
    let mut m = Reference::default();
    let mut copies = vec![
        Copy::new(false, 1),
        Copy::new(true, 1),
        Copy::new(true, 2),
        Copy::new(false, 2),
    ];
    let mut result = Ok(());
    for (i, op) in ops.iter().enumerate() {
        result = step(&mut m, &mut copies, op)
            .and_then(|()| compare(&m, &copies))
            .map_err(|e| format!("op #{i} {op:?}: {e}"));
        if result.is_err() {
            break;
        }
    }
    // Dropping the worlds drops every value once, an armed one panicking.
    let armed = m
        .live
        .values()
        .filter(|e| matches!(e.get(&K::Counted), Some(V::Counted(_, true))))
        .count() as u64;
    for c in copies {
        let r = catch_unwind(AssertUnwindSafe(move || drop(c)));
        if result.is_ok() && r.is_err() != (armed > 0) {
            result = Err(format!("dropping a world panicked: {}", r.is_err()));
        }
    }
    if result.is_ok() && Counted::live() != 0 {
        result = Err(format!("{} Counted values leaked", Counted::live()));
    }
    LIVE.with(|l| l.set(live));
    FUSES_DROPPED.with(|f| f.set(fuses));
    result
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn an_open_world_matches_the_model(ops in prop::collection::vec(op(), 1..MAX_OPS)) {
        let r = run_case(&ops);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// Reached sets: a long run of the systems over entities with every tag moves them through
/// many dynamic stores, and the report lists each with a declaration in the world's names.
#[test]
fn the_world_reports_each_undeclared_set_with_its_declaration() {
    let mut w = World::new();
    let e = w.spawn(Base { a: A(4), b: B(0) });
    w.insert(e, D(0)).unwrap();
    for _ in 0..6 {
        w.run_all().unwrap();
    }
    let report = w.undeclared();
    assert!(report.len() >= 2, "{report:?}");
    let here = report.iter().find(|u| u.rows == 1).unwrap();
    assert!(
        here.to_string().contains(": 1 entity now, 1 at most, "),
        "{here}"
    );
    assert_eq!(
        here.declaration().unwrap(),
        format!(
            "#[derive(Signature)]\npub struct {} {{\n{}}}",
            here.components.concat(),
            here.components
                .iter()
                .map(|c| format!("    pub {}: {c},\n", c.to_lowercase()))
                .collect::<String>()
        )
    );
    assert_eq!(report.iter().map(|u| u.rows).sum::<usize>(), 1);
    assert!(report.iter().all(|u| u.moves >= 1 && u.peak_rows == 1));
    // The statistics list the dynamic stores with the declared ones: totals over them are the
    // world's.
    let stats = w.stats();
    assert_eq!(stats.dynamic().count(), report.len());
    assert_eq!(
        stats.stores.iter().map(|s| s.entities).sum::<usize>(),
        w.len()
    );
    assert_eq!(stats.entities(), w.len());
    let here = stats.stores.iter().find(|s| s.entities == 1).unwrap();
    assert!(!here.declared, "{here:?}");
    assert!(stats
        .to_string()
        .contains("undeclared sets (dynamic stores, in the total):"));
}

/// Two thousand distinct undeclared sets: each entity is moved, insert by insert and remove by
/// remove, to a set of its own (through the sets on the way), and the systems visit all of
/// them.
#[test]
fn thousands_of_dynamic_stores_work() {
    let n = if cfg!(miri) { 24 } else { 2_000 };
    let value = |k: K, i: usize| match k {
        K::A => V::A(i as u32),
        K::Al => V::Al(i as u64),
        K::B => V::B(0),
        K::Big => V::Big([i as u64; 4]),
        K::C => V::C(1),
        K::Counted => V::Counted(i as u32, false),
        K::D => V::D(0),
        K::Link => V::Link(None),
        K::Name => V::Name(String::new()),
        K::Tag1 => V::Tag1,
        K::Tag2 => V::Tag2,
        K::Tag3 => V::Tag3,
    };
    let mut w = World::new();
    let mut es = Vec::new();
    for i in 0..n {
        // Set i + 1 (bit k: component k): every non-empty set up to 2,000.
        let set = (i + 1) as u16;
        let e = w.spawn(Base {
            a: A(i as u32),
            b: B(0),
        });
        for k in KINDS {
            if set & k.bit() != 0 && !matches!(k, K::A | K::B) {
                assert_eq!(world_insert(&mut w, e, &value(k, i)).0, Ok(None));
            }
        }
        for k in [K::A, K::B] {
            if set & k.bit() == 0 {
                assert!(world_remove(&mut w, e, k).0.is_ok());
            }
        }
        assert_eq!(w.signature_name_of(e), Some(set_name(set).as_str()));
        es.push(e);
    }
    let sets: BTreeSet<&str> = es
        .iter()
        .map(|&e| w.signature_name_of(e).unwrap())
        .collect();
    assert_eq!(sets.len(), n);
    assert!(
        w.stats().dynamic().count() >= n - 3,
        "all but the declared sets"
    );
    w.run_schedule().unwrap();
    w.check_invariants().unwrap();
    for (i, &e) in es.iter().enumerate() {
        let set = (i + 1) as u16;
        if set & K::Link.bit() != 0 {
            // `link` visited it.
            let want = (set & K::A.bit() != 0).then_some(e);
            assert_eq!(w.get::<Link>(e), Some(&Link(want)), "{i}");
        }
        let want = (set & K::Al.bit() != 0).then_some(i as u64);
        assert_eq!(w.get::<Al>(e).map(|a| a.0), want);
    }
    let tally = w.resource::<Tally>();
    let counted = (1..=n)
        .filter(|&s| s as u16 & K::Counted.bit() != 0)
        .count();
    assert_eq!(tally.rows as usize, counted);
    assert!(w.stats().allocated_bytes() > 0);
}

/// The whole entity index space, every entity moved into a dynamic store and visited there.
#[test]
#[cfg_attr(miri, ignore = "2^22 entities")]
fn the_whole_index_space_can_live_in_dynamic_stores() {
    use sigecs::entity::MAX_ENTITIES;
    let mut w = World::new();
    let es = w.spawn_batch((0..MAX_ENTITIES as u32).map(|i| Base { a: A(i), b: B(1) }));
    for &e in &es {
        w.insert(e, Tag3).unwrap();
    }
    assert_eq!(w.store::<Base>().len(), 0);
    let report = w.undeclared();
    assert_eq!(report.len(), 1);
    assert_eq!(
        (report[0].rows, report[0].peak_rows, report[0].moves),
        (MAX_ENTITIES, MAX_ENTITIES, MAX_ENTITIES as u64)
    );
    w.run_system(0).unwrap(); // grow: a += 1 + b
    assert_eq!(w.get::<A>(es[12_345]), Some(&A(12_347)));
    assert_eq!(
        w.get::<A>(*es.last().unwrap()),
        Some(&A(MAX_ENTITIES as u32 + 1))
    );
    assert_eq!(w.len(), MAX_ENTITIES);
}
