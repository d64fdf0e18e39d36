//! Model-based test of a strict (closed) world: random sequences of operations drive the
//! fixture's strict `World` (`Undeclared::Error`: a set no signature declares is an error) and a
//! naive
//! reference oracle (a hash map of per-entity component options) side by side. The oracle decides
//! every expected result from component sets alone; after every operation the whole world is
//! compared with the oracle, the world's invariants are checked, and `Counted` drops are counted
//! exactly.

use sigecs_fixtures::fixture;

use fixture::strict::{World, SYSTEM_NAMES};
use fixture::*;
use proptest::prelude::*;
use sigecs::query::{With, Without};
use sigecs::{Change, Entity, SignatureOf, WorldError, WorldModel};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

#[cfg(not(miri))]
const CASES: u32 = 256;
#[cfg(not(miri))]
const MAX_OPS: usize = 300;
#[cfg(miri)]
const CASES: u32 = 4;
#[cfg(miri)]
const MAX_OPS: usize = 30;

/// Component names by component id (the world numbers components in name order).
const NAMES: [&str; 6] = ["A", "Aligned", "B", "Counted", "Label", "Zst"];

const BIT_A: u32 = 1 << 0;
const BIT_ALIGNED: u32 = 1 << 1;
const BIT_B: u32 = 1 << 2;
const BIT_COUNTED: u32 = 1 << 3;
const BIT_LABEL: u32 = 1 << 4;
const BIT_ZST: u32 = 1 << 5;

/// The fixture's signatures, in declaration order, with their component sets. Checked against
/// the world's `STORE_NAMES` / `STORE_SETS` so this list cannot drift from the fixture.
const SIGNATURES: [(&str, u32); 7] = [
    ("JustA", BIT_A),
    ("AB", BIT_A | BIT_B),
    ("ABZst", BIT_A | BIT_B | BIT_ZST),
    ("ACounted", BIT_A | BIT_COUNTED),
    ("BAligned", BIT_B | BIT_ALIGNED),
    ("Labelled", BIT_A | BIT_ALIGNED | BIT_LABEL),
    (
        "Everything",
        BIT_A | BIT_B | BIT_ZST | BIT_COUNTED | BIT_ALIGNED | BIT_LABEL,
    ),
];

/// The fixture's systems, in declaration order.
const SYSTEMS: [&str; 6] = [
    "bump_a",
    "a_into_b",
    "double_b",
    "aligned_tick",
    "tally",
    "relabel",
];

/// Index of never-issued handles (far above anything a case can spawn, below 2^22).
const NEVER_BASE: u32 = 3_000_000;

thread_local! {
    static CASE: Cell<usize> = const { Cell::new(0) };
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

macro_rules! ensure_eq {
    ($world:expr, $oracle:expr, $($fmt:tt)+) => {{
        let (world, oracle) = (&$world, &$oracle);
        if world != oracle {
            return Err(format!(
                "{}: world gave {:?}, oracle expects {:?}",
                format!($($fmt)+),
                world,
                oracle
            ));
        }
    }};
}

// ---------------------------------------------------------------------------------------------
// Values and the reference oracle
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    A,
    Aligned,
    B,
    Counted,
    Label,
    Zst,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::A,
        Kind::Aligned,
        Kind::B,
        Kind::Counted,
        Kind::Label,
        Kind::Zst,
    ];

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

/// One component value; `Counted` is held as its `u32` (the real one is created on use).
#[derive(Clone, Debug, PartialEq)]
enum V {
    A(u32),
    Aligned(u64),
    B(f64),
    Counted(u32),
    Label(String),
    Zst,
}

impl V {
    fn kind(&self) -> Kind {
        match self {
            V::A(_) => Kind::A,
            V::Aligned(_) => Kind::Aligned,
            V::B(_) => Kind::B,
            V::Counted(_) => Kind::Counted,
            V::Label(_) => Kind::Label,
            V::Zst => Kind::Zst,
        }
    }
}

/// Values for spawning any signature: each signature takes the fields it has.
#[derive(Clone, Debug)]
struct Vals {
    a: u32,
    b: i16,
    aligned: u64,
    label: String,
    counted: u32,
}

impl Vals {
    fn b(&self) -> f64 {
        f64::from(self.b)
    }
}

/// The oracle of one live entity.
#[derive(Clone, Debug, Default)]
struct Ref {
    a: Option<u32>,
    aligned: Option<u64>,
    b: Option<f64>,
    counted: Option<u32>,
    label: Option<String>,
    zst: bool,
}

impl Ref {
    fn new(mask: u32, v: &Vals) -> Ref {
        Ref {
            a: (mask & BIT_A != 0).then_some(v.a),
            aligned: (mask & BIT_ALIGNED != 0).then_some(v.aligned),
            b: (mask & BIT_B != 0).then(|| v.b()),
            counted: (mask & BIT_COUNTED != 0).then_some(v.counted),
            label: (mask & BIT_LABEL != 0).then(|| v.label.clone()),
            zst: mask & BIT_ZST != 0,
        }
    }

    fn mask(&self) -> u32 {
        Kind::ALL
            .iter()
            .filter(|k| self.get(**k).is_some())
            .map(|k| k.bit())
            .sum()
    }

    fn has(&self, k: Kind) -> bool {
        self.get(k).is_some()
    }

    fn get(&self, k: Kind) -> Option<V> {
        match k {
            Kind::A => self.a.map(V::A),
            Kind::Aligned => self.aligned.map(V::Aligned),
            Kind::B => self.b.map(V::B),
            Kind::Counted => self.counted.map(V::Counted),
            Kind::Label => self.label.clone().map(V::Label),
            Kind::Zst => self.zst.then_some(V::Zst),
        }
    }

    fn set(&mut self, v: V) {
        match v {
            V::A(x) => self.a = Some(x),
            V::Aligned(x) => self.aligned = Some(x),
            V::B(x) => self.b = Some(x),
            V::Counted(x) => self.counted = Some(x),
            V::Label(x) => self.label = Some(x),
            V::Zst => self.zst = true,
        }
    }

    fn take(&mut self, k: Kind) -> Option<V> {
        let old = self.get(k);
        match k {
            Kind::A => self.a = None,
            Kind::Aligned => self.aligned = None,
            Kind::B => self.b = None,
            Kind::Counted => self.counted = None,
            Kind::Label => self.label = None,
            Kind::Zst => self.zst = false,
        }
        old
    }
}

fn declared(mask: u32) -> bool {
    SIGNATURES.iter().any(|s| s.1 == mask)
}

fn sig_name(mask: u32) -> Option<&'static str> {
    SIGNATURES.iter().find(|s| s.1 == mask).map(|s| s.0)
}

/// `A | ALIGNED`: the components of `mask` in id order, as the world's `ComponentSet` writes
/// them (its constants: these one-word names in uppercase; nothing for the empty set).
fn set_string(mask: u32) -> String {
    let parts: Vec<String> = Kind::ALL
        .iter()
        .filter(|k| mask & k.bit() != 0)
        .map(|k| k.name().to_uppercase())
        .collect();
    parts.join(" | ")
}

/// Does system `name` visit an entity with these components?
fn system_matches(name: &str, r: &Ref) -> bool {
    match name {
        "bump_a" => r.a.is_some(),
        "a_into_b" => r.a.is_some() && r.b.is_some(),
        "double_b" => r.b.is_some() && !r.zst,
        "aligned_tick" => r.aligned.is_some(),
        "tally" => r.counted.is_some(),
        "relabel" => r.label.is_some(),
        _ => unreachable!("unknown system {name}"),
    }
}

#[derive(Default)]
struct Oracle {
    live: HashMap<Entity, Ref>,
    /// Despawned handles.
    dead: Vec<Entity>,
    /// Every handle the world ever issued.
    ever: HashSet<Entity>,
    tally_rows: usize,
    tally_sum: u64,
}

impl Oracle {
    fn sorted_live(&self) -> Vec<Entity> {
        let mut v: Vec<Entity> = self.live.keys().copied().collect();
        v.sort();
        v
    }

    fn get(&self, e: Entity, k: Kind) -> Option<V> {
        self.live.get(&e).and_then(|r| r.get(k))
    }

    fn counted_live(&self) -> i64 {
        self.live.values().filter(|r| r.counted.is_some()).count() as i64
    }

    fn signature(&self, e: Entity) -> &'static str {
        sig_name(self.live[&e].mask()).unwrap_or("<undeclared in the oracle>")
    }

    fn expect_insert(&self, e: Entity, v: &V) -> Result<Option<V>, WorldError> {
        let Some(r) = self.live.get(&e) else {
            return Err(WorldError::NoSuchEntity(e));
        };
        let k = v.kind();
        if let Some(old) = r.get(k) {
            return Ok(Some(old));
        }
        let (current, target) = (r.mask(), r.mask() | k.bit());
        if declared(target) {
            Ok(None)
        } else {
            Err(WorldError::UndeclaredSignature {
                entity: e,
                change: Change::Insert,
                component: k.name(),
                signature: self.signature(e),
                current: set_string(current),
                missing: set_string(target),
            })
        }
    }

    fn expect_remove(&self, e: Entity, k: Kind) -> Result<V, WorldError> {
        let Some(r) = self.live.get(&e) else {
            return Err(WorldError::NoSuchEntity(e));
        };
        let Some(old) = r.get(k) else {
            return Err(WorldError::MissingComponent {
                entity: e,
                signature: self.signature(e),
                component: k.name(),
            });
        };
        let (current, target) = (r.mask(), r.mask() & !k.bit());
        if declared(target) {
            Ok(old)
        } else {
            Err(WorldError::UndeclaredSignature {
                entity: e,
                change: Change::Remove,
                component: k.name(),
                signature: self.signature(e),
                current: set_string(current),
                missing: set_string(target),
            })
        }
    }

    /// A query's `MissingComponent` / `NoSuchEntity` for `e`, given its required components in
    /// query order; `None` when the entity has them all.
    fn expect_query_one(&self, e: Entity, required: &[Kind]) -> Option<WorldError> {
        let Some(r) = self.live.get(&e) else {
            return Some(WorldError::NoSuchEntity(e));
        };
        required
            .iter()
            .find(|k| !r.has(**k))
            .map(|k| WorldError::MissingComponent {
                entity: e,
                signature: self.signature(e),
                component: k.name(),
            })
    }

    /// What system `name` does, row by row, as its code in the fixture does it.
    fn run_system(&mut self, name: &str) {
        for (e, r) in self.live.iter_mut() {
            if !system_matches(name, r) {
                continue;
            }
            match name {
                "bump_a" => {
                    let a = r.a.as_mut().unwrap();
                    *a = a.wrapping_add(1);
                }
                "a_into_b" => *r.b.as_mut().unwrap() += f64::from(r.a.unwrap()),
                "double_b" => *r.b.as_mut().unwrap() *= 2.0,
                "aligned_tick" => *r.aligned.as_mut().unwrap() += r.a.map_or(1, u64::from),
                "tally" => {
                    self.tally_rows += 1;
                    self.tally_sum += u64::from(r.counted.unwrap()) + u64::from(e.index());
                }
                "relabel" => {
                    if let Some(a) = r.a.as_mut() {
                        *a += 10;
                        r.label.as_mut().unwrap().push('!');
                    }
                }
                _ => unreachable!(),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/// Which handle an operation targets, resolved against the oracle when the operation runs.
#[derive(Clone, Copy, Debug)]
enum Pick {
    /// A live entity (the i-th in id order).
    Live(usize),
    /// A despawned handle.
    Dead(usize),
    /// A live entity's index with another generation.
    OtherGen(usize, u8),
    /// A despawned handle's index with its slot's current (bumped) generation.
    FreedNextGen(usize),
    /// An index the world never issued.
    Never(u32, u8),
    /// The batch placeholder id, `Entity::from_bits(u32::MAX)`.
    Placeholder,
}

impl Pick {
    fn resolve(self, m: &Oracle) -> Entity {
        let never = Entity::new(NEVER_BASE, 0);
        match self {
            Pick::Live(i) => {
                let live = m.sorted_live();
                live.get(i % live.len().max(1)).copied().unwrap_or(never)
            }
            Pick::Dead(i) => m
                .dead
                .get(i % m.dead.len().max(1))
                .copied()
                .unwrap_or(never),
            Pick::OtherGen(i, g) => {
                let live = m.sorted_live();
                live.get(i % live.len().max(1)).map_or(never, |e| {
                    Entity::new(e.index(), e.generation().wrapping_add(g))
                })
            }
            Pick::FreedNextGen(i) => m.dead.get(i % m.dead.len().max(1)).map_or(never, |e| {
                Entity::new(e.index(), e.generation().wrapping_add(1))
            }),
            Pick::Never(i, g) => Entity::new(NEVER_BASE + i, g),
            Pick::Placeholder => Entity::from_bits(u32::MAX),
        }
    }
}

#[derive(Clone, Debug)]
enum QueryOp {
    /// `query::<(Entity, &A, Option<&B>)>`, read.
    ReadAOptB,
    /// `query_filtered::<(Entity, &mut B), Without<Zst>>`, b += k.
    AddToBWithoutZst(i16),
    /// `query_filtered::<(Entity, &Aligned, Option<&Label>), With<A>>`, read.
    AlignedWithA,
    /// `query::<(Entity, &mut Label, Option<&mut Counted>)>`: push a char, replace the Counted.
    LabelAndCounted(char, u32),
    /// `query_filtered::<(Entity, &mut Counted, Option<&Zst>), (With<A>, Without<B>)>`.
    CountedWithANotB(u32),
    /// `query::<(Entity, &Zst, &mut A)>`, a = x.
    SetAWithZst(u32),
    /// A 7-element query over every component.
    ReadEverything,
    /// `query::<Entity>` and `query_filtered::<Entity, ()>`.
    Entities,
    /// Aliasing queries are refused; shared double borrows are allowed.
    Aliased,
}

#[derive(Clone, Debug)]
enum OneOp {
    /// `query_one::<(&mut A, Option<&B>)>`, a = x.
    SetAReadB(u32),
    /// `query_one::<(Entity, &B, &Aligned)>`.
    BAligned,
    /// `query_one::<(Option<&mut Counted>, &mut Label)>`.
    LabelCounted(char, u32),
    /// `query_one::<Entity>`.
    Entity,
    /// `query_one::<(&mut A, &mut A)>` is refused whatever the entity.
    Aliased,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        sig: usize,
        vals: Vals,
        fallible: bool,
    },
    SpawnBatch {
        sig: usize,
        vals: Vec<Vals>,
        exact_size: bool,
        fallible: bool,
    },
    Despawn(Pick),
    Insert(Pick, V),
    Remove(Pick, Kind),
    /// An insert or remove chosen among those that lead the entity to a declared signature
    /// (the i-th of them), with `Vals` for the inserted value.
    Move(Pick, usize, Vals),
    GetMut(Pick, V),
    Get(Pick, Kind),
    Query(QueryOp),
    QueryOne(Pick, OneOp),
    RunSystem {
        system: usize,
        by_index: bool,
    },
    RunAll,
    RunMissingSystem(usize),
}

fn label_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::char::range('a', 'z'), 0..24).prop_map(String::from_iter)
}

fn vals_strategy() -> impl Strategy<Value = Vals> {
    (
        0..1000u32,
        -100i16..100,
        0..1000u64,
        label_strategy(),
        any::<u32>(),
    )
        .prop_map(|(a, b, aligned, label, counted)| Vals {
            a,
            b,
            aligned,
            label,
            counted,
        })
}

fn value_strategy() -> impl Strategy<Value = V> {
    prop_oneof![
        (0..1000u32).prop_map(V::A),
        (0..1000u64).prop_map(V::Aligned),
        (-100i16..100).prop_map(|b| V::B(f64::from(b))),
        any::<u32>().prop_map(V::Counted),
        label_strategy().prop_map(V::Label),
        Just(V::Zst),
    ]
}

fn kind_strategy() -> impl Strategy<Value = Kind> {
    (0..Kind::ALL.len()).prop_map(|i| Kind::ALL[i])
}

fn pick_strategy() -> impl Strategy<Value = Pick> {
    prop_oneof![
        8 => any::<usize>().prop_map(Pick::Live),
        2 => any::<usize>().prop_map(Pick::Dead),
        1 => (any::<usize>(), 1..=255u8).prop_map(|(i, g)| Pick::OtherGen(i, g)),
        1 => any::<usize>().prop_map(Pick::FreedNextGen),
        1 => (0..1000u32, any::<u8>()).prop_map(|(i, g)| Pick::Never(i, g)),
        1 => Just(Pick::Placeholder),
    ]
}

fn query_strategy() -> impl Strategy<Value = QueryOp> {
    prop_oneof![
        Just(QueryOp::ReadAOptB),
        (-100i16..100).prop_map(QueryOp::AddToBWithoutZst),
        Just(QueryOp::AlignedWithA),
        (prop::char::range('a', 'z'), any::<u32>())
            .prop_map(|(c, k)| QueryOp::LabelAndCounted(c, k)),
        any::<u32>().prop_map(QueryOp::CountedWithANotB),
        (0..1000u32).prop_map(QueryOp::SetAWithZst),
        Just(QueryOp::ReadEverything),
        Just(QueryOp::Entities),
        Just(QueryOp::Aliased),
    ]
}

fn one_strategy() -> impl Strategy<Value = OneOp> {
    prop_oneof![
        (0..1000u32).prop_map(OneOp::SetAReadB),
        Just(OneOp::BAligned),
        (prop::char::range('a', 'z'), any::<u32>()).prop_map(|(c, k)| OneOp::LabelCounted(c, k)),
        Just(OneOp::Entity),
        Just(OneOp::Aliased),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..SIGNATURES.len(), vals_strategy(), any::<bool>())
            .prop_map(|(sig, vals, fallible)| Op::Spawn { sig, vals, fallible }),
        4 => (
            0..SIGNATURES.len(),
            prop::collection::vec(vals_strategy(), 0..10),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(sig, vals, exact_size, fallible)| Op::SpawnBatch {
                sig,
                vals,
                exact_size,
                fallible,
            }),
        6 => pick_strategy().prop_map(Op::Despawn),
        14 => (pick_strategy(), value_strategy()).prop_map(|(p, v)| Op::Insert(p, v)),
        10 => (pick_strategy(), kind_strategy()).prop_map(|(p, k)| Op::Remove(p, k)),
        8 => (pick_strategy(), any::<usize>(), vals_strategy())
            .prop_map(|(p, i, v)| Op::Move(p, i, v)),
        6 => (pick_strategy(), value_strategy()).prop_map(|(p, v)| Op::GetMut(p, v)),
        4 => (pick_strategy(), kind_strategy()).prop_map(|(p, k)| Op::Get(p, k)),
        8 => query_strategy().prop_map(Op::Query),
        5 => (pick_strategy(), one_strategy()).prop_map(|(p, q)| Op::QueryOne(p, q)),
        6 => (0..SYSTEMS.len(), any::<bool>())
            .prop_map(|(system, by_index)| Op::RunSystem { system, by_index }),
        1 => Just(Op::RunAll),
        1 => (0..100usize).prop_map(Op::RunMissingSystem),
    ]
}

// ---------------------------------------------------------------------------------------------
// The world side
// ---------------------------------------------------------------------------------------------

fn aligned_ok(a: &Aligned) -> bool {
    (a as *const Aligned as usize).is_multiple_of(16)
}

fn world_get(w: &World, e: Entity, k: Kind) -> Option<V> {
    match k {
        Kind::A => w.get::<A>(e).map(|c| V::A(c.0)),
        Kind::Aligned => w.get::<Aligned>(e).map(|c| V::Aligned(c.0)),
        Kind::B => w.get::<B>(e).map(|c| V::B(c.0)),
        Kind::Counted => w.get::<Counted>(e).map(|c| V::Counted(c.0)),
        Kind::Label => w.get::<Label>(e).map(|c| V::Label(c.0.clone())),
        Kind::Zst => w.get::<Zst>(e).map(|_| V::Zst),
    }
}

fn world_insert(w: &mut World, e: Entity, v: V) -> Result<Option<V>, WorldError> {
    match v {
        V::A(x) => w.insert(e, A(x)).map(|o| o.map(|c| V::A(c.0))),
        V::Aligned(x) => w.insert(e, Aligned(x)).map(|o| o.map(|c| V::Aligned(c.0))),
        V::B(x) => w.insert(e, B(x)).map(|o| o.map(|c| V::B(c.0))),
        V::Counted(x) => w
            .insert(e, Counted::new(x))
            .map(|o| o.map(|c| V::Counted(c.0))),
        V::Label(x) => w.insert(e, Label(x)).map(|o| o.map(|c| V::Label(c.0))),
        V::Zst => w.insert(e, Zst).map(|o| o.map(|_| V::Zst)),
    }
}

fn world_remove(w: &mut World, e: Entity, k: Kind) -> Result<V, WorldError> {
    match k {
        Kind::A => w.remove::<A>(e).map(|c| V::A(c.0)),
        Kind::Aligned => w.remove::<Aligned>(e).map(|c| V::Aligned(c.0)),
        Kind::B => w.remove::<B>(e).map(|c| V::B(c.0)),
        Kind::Counted => w.remove::<Counted>(e).map(|c| V::Counted(c.0)),
        Kind::Label => w.remove::<Label>(e).map(|c| V::Label(c.0)),
        Kind::Zst => w.remove::<Zst>(e).map(|_| V::Zst),
    }
}

/// Writes `v` through `get_mut`; false when there is nothing to write to.
fn world_set(w: &mut World, e: Entity, v: V) -> bool {
    match v {
        V::A(x) => w.get_mut::<A>(e).map(|c| c.0 = x).is_some(),
        V::Aligned(x) => w.get_mut::<Aligned>(e).map(|c| c.0 = x).is_some(),
        V::B(x) => w.get_mut::<B>(e).map(|c| c.0 = x).is_some(),
        V::Counted(x) => w
            .get_mut::<Counted>(e)
            .map(|c| *c = Counted::new(x))
            .is_some(),
        V::Label(x) => w.get_mut::<Label>(e).map(|c| c.0 = x).is_some(),
        V::Zst => w.get_mut::<Zst>(e).map(|c| *c = Zst).is_some(),
    }
}

fn spawn_one(w: &mut World, sig: usize, v: &Vals, fallible: bool) -> Result<Entity, String> {
    fn go<S: SignatureOf<fixture::strict::Model>>(
        w: &mut World,
        value: S,
        fallible: bool,
    ) -> Result<Entity, String> {
        if fallible {
            w.try_spawn(value)
                .map_err(|e| format!("try_spawn failed: {e}"))
        } else {
            Ok(w.spawn(value))
        }
    }
    let (a, b, aligned) = (A(v.a), B(v.b()), Aligned(v.aligned));
    match sig {
        0 => go(w, JustA { a }, fallible),
        1 => go(w, AB { a, b }, fallible),
        2 => go(w, ABZst { a, b, zst: Zst }, fallible),
        3 => go(
            w,
            ACounted {
                a,
                counted: Counted::new(v.counted),
            },
            fallible,
        ),
        4 => go(w, BAligned { b, aligned }, fallible),
        5 => go(
            w,
            Labelled {
                a,
                aligned,
                label: Label(v.label.clone()),
            },
            fallible,
        ),
        6 => go(
            w,
            Everything {
                a,
                b,
                zst: Zst,
                counted: Counted::new(v.counted),
                aligned,
                label: Label(v.label.clone()),
            },
            fallible,
        ),
        _ => unreachable!("signature {sig}"),
    }
}

fn spawn_many(
    w: &mut World,
    sig: usize,
    vals: &[Vals],
    exact_size: bool,
    fallible: bool,
) -> Result<Vec<Entity>, String> {
    fn go<S: SignatureOf<fixture::strict::Model> + 'static>(
        w: &mut World,
        values: Vec<S>,
        exact_size: bool,
        fallible: bool,
    ) -> Result<Vec<Entity>, String> {
        // A filtered iterator has no exact size hint: the store cannot reserve up front.
        let values: Box<dyn Iterator<Item = S>> = if exact_size {
            Box::new(values.into_iter())
        } else {
            Box::new(values.into_iter().filter(|_| true))
        };
        if fallible {
            w.try_spawn_batch(values)
                .map_err(|e| format!("try_spawn_batch failed: {e}"))
        } else {
            Ok(w.spawn_batch(values))
        }
    }
    let it = vals.iter();
    match sig {
        0 => go(
            w,
            it.map(|v| JustA { a: A(v.a) }).collect(),
            exact_size,
            fallible,
        ),
        1 => go(
            w,
            it.map(|v| AB {
                a: A(v.a),
                b: B(v.b()),
            })
            .collect(),
            exact_size,
            fallible,
        ),
        2 => go(
            w,
            it.map(|v| ABZst {
                a: A(v.a),
                b: B(v.b()),
                zst: Zst,
            })
            .collect(),
            exact_size,
            fallible,
        ),
        3 => go(
            w,
            it.map(|v| ACounted {
                a: A(v.a),
                counted: Counted::new(v.counted),
            })
            .collect(),
            exact_size,
            fallible,
        ),
        4 => go(
            w,
            it.map(|v| BAligned {
                b: B(v.b()),
                aligned: Aligned(v.aligned),
            })
            .collect(),
            exact_size,
            fallible,
        ),
        5 => go(
            w,
            it.map(|v| Labelled {
                a: A(v.a),
                aligned: Aligned(v.aligned),
                label: Label(v.label.clone()),
            })
            .collect(),
            exact_size,
            fallible,
        ),
        6 => go(
            w,
            it.map(|v| Everything {
                a: A(v.a),
                b: B(v.b()),
                zst: Zst,
                counted: Counted::new(v.counted),
                aligned: Aligned(v.aligned),
                label: Label(v.label.clone()),
            })
            .collect(),
            exact_size,
            fallible,
        ),
        _ => unreachable!("signature {sig}"),
    }
}

fn run_world_system(w: &mut World, name: &str) {
    match name {
        "bump_a" => w.run_bump_a(),
        "a_into_b" => w.run_a_into_b(),
        "double_b" => w.run_double_b(),
        "aligned_tick" => w.run_aligned_tick(),
        "tally" => w.run_tally(),
        "relabel" => w.run_relabel(),
        _ => unreachable!("unknown system {name}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Running and comparing
// ---------------------------------------------------------------------------------------------

/// The fixture's declarations as the test writes them equal what the generated world reports.
fn check_declarations() -> Result<(), String> {
    let names: Vec<&str> = fixture::strict::Model::components()
        .iter()
        .map(|c| c.name)
        .collect();
    ensure_eq!(names, NAMES, "component names by id");
    ensure_eq!(SYSTEM_NAMES, SYSTEMS, "system names");
    let mut world: Vec<(&str, u32)> = fixture::strict::Model::stores()
        .iter()
        .map(|s| {
            let mask = s.slots.iter().fold(0u32, |m, sl| m | 1 << sl.component);
            (s.name, mask)
        })
        .collect();
    let mut ours = SIGNATURES.to_vec();
    world.sort();
    ours.sort();
    ensure_eq!(world, ours, "declared signatures");
    Ok(())
}

/// Live entities matching `pred`, in the order queries must visit them: store by store in
/// store id order, rows in order, which is the order of `World::entities`.
fn expected_order(w: &World, m: &Oracle, pred: impl Fn(&Ref) -> bool) -> Vec<Entity> {
    w.entities()
        .filter(|e| m.live.get(e).is_some_and(&pred))
        .collect()
}

fn insert_both(w: &mut World, m: &mut Oracle, e: Entity, v: V) -> Result<(), String> {
    let expected = m.expect_insert(e, &v);
    let got = world_insert(w, e, v.clone());
    ensure_eq!(got, expected, "insert({e:?}, {v:?})");
    if got.is_ok() {
        m.live.get_mut(&e).unwrap().set(v);
    }
    Ok(())
}

fn remove_both(w: &mut World, m: &mut Oracle, e: Entity, k: Kind) -> Result<(), String> {
    let expected = m.expect_remove(e, k);
    let got = world_remove(w, e, k);
    ensure_eq!(got, expected, "remove::<{}>({e:?})", k.name());
    if got.is_ok() {
        m.live.get_mut(&e).unwrap().take(k);
    }
    Ok(())
}

/// Applies one operation to both sides, checking what the world returns.
fn apply(w: &mut World, m: &mut Oracle, op: &Op, aligned_checks: &mut usize) -> Result<(), String> {
    match op {
        Op::Spawn {
            sig,
            vals,
            fallible,
        } => {
            let e = spawn_one(w, *sig, vals, *fallible)?;
            ensure!(
                !m.ever.contains(&e),
                "spawn returned {e:?}, which was issued before"
            );
            m.ever.insert(e);
            m.live.insert(e, Ref::new(SIGNATURES[*sig].1, vals));
        }
        Op::SpawnBatch {
            sig,
            vals,
            exact_size,
            fallible,
        } => {
            let es = spawn_many(w, *sig, vals, *exact_size, *fallible)?;
            ensure_eq!(es.len(), vals.len(), "batch returned entity count");
            for (e, v) in es.iter().zip(vals) {
                ensure!(
                    m.ever.insert(*e),
                    "spawn_batch returned {e:?} twice or issued before: {es:?}"
                );
                m.live.insert(*e, Ref::new(SIGNATURES[*sig].1, v));
            }
        }
        Op::Despawn(p) => {
            let e = p.resolve(m);
            let expected = m.live.contains_key(&e);
            ensure_eq!(w.despawn(e), expected, "despawn({e:?})");
            if expected {
                m.live.remove(&e);
                m.dead.push(e);
            }
        }
        Op::Insert(p, v) => insert_both(w, m, p.resolve(m), v.clone())?,
        Op::Remove(p, k) => remove_both(w, m, p.resolve(m), *k)?,
        Op::Move(p, i, vals) => {
            let e = p.resolve(m);
            let moves: Vec<Kind> = m.live.get(&e).map_or(Vec::new(), |r| {
                Kind::ALL
                    .into_iter()
                    .filter(|k| declared(r.mask() ^ k.bit()))
                    .collect()
            });
            // No declared neighbour (or no live entity): an insert of A, which replaces or fails.
            let k = moves
                .get(i % moves.len().max(1))
                .copied()
                .unwrap_or(Kind::A);
            if m.live.get(&e).is_some_and(|r| r.has(k)) {
                remove_both(w, m, e, k)?;
            } else {
                insert_both(w, m, e, Ref::new(k.bit(), vals).get(k).unwrap())?;
            }
        }
        Op::GetMut(p, v) => {
            let e = p.resolve(m);
            let expected = m.get(e, v.kind()).is_some();
            ensure_eq!(
                world_set(w, e, v.clone()),
                expected,
                "get_mut::<{}>({e:?}).is_some()",
                v.kind().name()
            );
            if expected {
                m.live.get_mut(&e).unwrap().set(v.clone());
            }
        }
        Op::Get(p, k) => {
            let e = p.resolve(m);
            ensure_eq!(w.is_alive(e), m.live.contains_key(&e), "is_alive({e:?})");
            ensure_eq!(
                world_get(w, e, *k),
                m.get(e, *k),
                "get::<{}>({e:?})",
                k.name()
            );
            let sig = m.live.get(&e).map(|r| sig_name(r.mask()).unwrap());
            ensure_eq!(w.signature_name_of(e), sig, "signature_name_of({e:?})");
            if let Some(a) = w.get::<Aligned>(e) {
                ensure!(
                    aligned_ok(a),
                    "get::<Aligned>({e:?}) is not 16-byte aligned"
                );
                *aligned_checks += 1;
            }
        }
        Op::Query(q) => apply_query(w, m, q, aligned_checks)?,
        Op::QueryOne(p, q) => {
            let e = p.resolve(m);
            apply_query_one(w, m, e, q, aligned_checks)?;
        }
        Op::RunSystem { system, by_index } => {
            let name = SYSTEMS[*system];
            let index = SYSTEM_NAMES
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| format!("no system named {name}"))?;
            let rows = m.live.values().filter(|r| system_matches(name, r)).count();
            ensure_eq!(w.system_rows(index), rows, "system_rows({index}) ({name})");
            if *by_index {
                ensure!(
                    w.run_system(index) == Ok(true),
                    "run_system({index}) did not run"
                );
            } else {
                run_world_system(w, name);
            }
            m.run_system(name);
        }
        Op::RunAll => {
            w.run_all();
            for name in SYSTEMS {
                m.run_system(name);
            }
        }
        Op::RunMissingSystem(k) => {
            let index = SYSTEM_NAMES.len() + k;
            ensure!(
                w.run_system(index) == Ok(false),
                "run_system({index}) ran something"
            );
            ensure_eq!(w.system_rows(index), 0, "system_rows({index})");
        }
    }
    Ok(())
}

fn apply_query(
    w: &mut World,
    m: &mut Oracle,
    q: &QueryOp,
    aligned_checks: &mut usize,
) -> Result<(), String> {
    let fail = |e: WorldError| format!("query refused: {e}");
    match q {
        QueryOp::ReadAOptB => {
            let order = expected_order(w, m, |r| r.a.is_some());
            let it = w.query::<(Entity, &A, Option<&B>)>();
            ensure_eq!(it.len(), order.len(), "len()");
            let got: Vec<(Entity, u32, Option<f64>)> =
                it.map(|(e, a, b)| (e, a.0, b.map(|b| b.0))).collect();
            let want: Vec<(Entity, u32, Option<f64>)> = order
                .iter()
                .map(|e| (*e, m.live[e].a.unwrap(), m.live[e].b))
                .collect();
            ensure_eq!(got, want, "items");
        }
        QueryOp::AddToBWithoutZst(k) => {
            let order = expected_order(w, m, |r| r.b.is_some() && !r.zst);
            let mut visited = Vec::new();
            let it = w
                .query_filtered_mut::<(Entity, &mut B), Without<Zst>>()
                .map_err(fail)?;
            ensure_eq!(it.len(), order.len(), "len()");
            for (e, b) in it {
                b.0 += f64::from(*k);
                visited.push(e);
            }
            ensure_eq!(visited, order, "visited entities");
            for e in &order {
                *m.live.get_mut(e).unwrap().b.as_mut().unwrap() += f64::from(*k);
            }
        }
        QueryOp::AlignedWithA => {
            let order = expected_order(w, m, |r| r.aligned.is_some() && r.a.is_some());
            let mut got = Vec::new();
            for (e, aligned, label) in
                w.query_filtered::<(Entity, &Aligned, Option<&Label>), With<A>>()
            {
                ensure!(
                    aligned_ok(aligned),
                    "&Aligned of {e:?} is not 16-byte aligned"
                );
                *aligned_checks += 1;
                got.push((e, aligned.0, label.map(|l| l.0.clone())));
            }
            let want: Vec<(Entity, u64, Option<String>)> = order
                .iter()
                .map(|e| {
                    let r = &m.live[e];
                    (*e, r.aligned.unwrap(), r.label.clone())
                })
                .collect();
            ensure_eq!(got, want, "items");
        }
        QueryOp::LabelAndCounted(ch, k) => {
            let order = expected_order(w, m, |r| r.label.is_some());
            let mut visited = Vec::new();
            for (e, label, counted) in w
                .query_mut::<(Entity, &mut Label, Option<&mut Counted>)>()
                .map_err(fail)?
            {
                label.0.push(*ch);
                let had = counted.map(|c| {
                    *c = Counted::new(c.0.wrapping_add(*k));
                });
                visited.push((e, had.is_some()));
            }
            let want: Vec<(Entity, bool)> = order
                .iter()
                .map(|e| (*e, m.live[e].counted.is_some()))
                .collect();
            ensure_eq!(visited, want, "visited (entity, has Counted)");
            for e in &order {
                let r = m.live.get_mut(e).unwrap();
                r.label.as_mut().unwrap().push(*ch);
                if let Some(c) = r.counted.as_mut() {
                    *c = c.wrapping_add(*k);
                }
            }
        }
        QueryOp::CountedWithANotB(k) => {
            let order = expected_order(w, m, |r| {
                r.counted.is_some() && r.a.is_some() && r.b.is_none()
            });
            let mut visited = Vec::new();
            for (e, counted, zst) in w
                .query_filtered_mut::<(Entity, &mut Counted, Option<&Zst>), (With<A>, Without<B>)>()
                .map_err(fail)?
            {
                *counted = Counted::new(counted.0 ^ k);
                visited.push((e, zst.is_some()));
            }
            let want: Vec<(Entity, bool)> = order.iter().map(|e| (*e, m.live[e].zst)).collect();
            ensure_eq!(visited, want, "visited (entity, has Zst)");
            for e in &order {
                *m.live.get_mut(e).unwrap().counted.as_mut().unwrap() ^= k;
            }
        }
        QueryOp::SetAWithZst(x) => {
            let order = expected_order(w, m, |r| r.zst && r.a.is_some());
            let mut visited = Vec::new();
            for (e, _, a) in w.query_mut::<(Entity, &Zst, &mut A)>().map_err(fail)? {
                a.0 = *x;
                visited.push(e);
            }
            ensure_eq!(visited, order, "visited entities");
            for e in &order {
                m.live.get_mut(e).unwrap().a = Some(*x);
            }
        }
        QueryOp::ReadEverything => {
            let order = expected_order(w, m, |r| r.mask() == SIGNATURES[6].1);
            type Item = (Entity, u32, f64, u32, u64, String);
            let mut got: Vec<Item> = Vec::new();
            for (e, a, b, _, c, al, l) in
                w.query::<(Entity, &A, &B, &Zst, &Counted, &Aligned, &Label)>()
            {
                ensure!(aligned_ok(al), "&Aligned of {e:?} is not 16-byte aligned");
                *aligned_checks += 1;
                got.push((e, a.0, b.0, c.0, al.0, l.0.clone()));
            }
            let want: Vec<Item> = order
                .iter()
                .map(|e| {
                    let r = &m.live[e];
                    (
                        *e,
                        r.a.unwrap(),
                        r.b.unwrap(),
                        r.counted.unwrap(),
                        r.aligned.unwrap(),
                        r.label.clone().unwrap(),
                    )
                })
                .collect();
            ensure_eq!(got, want, "items");
        }
        QueryOp::Entities => {
            let all: Vec<Entity> = w.entities().collect();
            let got: Vec<Entity> = w.query::<Entity>().collect();
            ensure_eq!(got, all, "query::<Entity>");
            let got: Vec<Entity> = w.query_filtered::<Entity, ()>().collect();
            ensure_eq!(got, all, "query_filtered::<Entity, ()>");
        }
        QueryOp::Aliased => {
            ensure_eq!(
                w.query_mut::<(&mut A, &A)>().err(),
                Some(WorldError::AliasedQuery { component: "A" }),
                "query::<(&mut A, &A)>"
            );
            ensure_eq!(
                w.query_filtered_mut::<(Entity, &B, Option<&mut B>), With<A>>()
                    .err(),
                Some(WorldError::AliasedQuery { component: "B" }),
                "query_filtered::<(Entity, &B, Option<&mut B>), With<A>>"
            );
            let labels = m.live.values().filter(|r| r.label.is_some()).count();
            let n = w.query::<(Entity, &Label, &Label)>().count();
            ensure_eq!(n, labels, "query::<(Entity, &Label, &Label)>().count()");
        }
    }
    Ok(())
}

fn apply_query_one(
    w: &mut World,
    m: &mut Oracle,
    e: Entity,
    q: &OneOp,
    aligned_checks: &mut usize,
) -> Result<(), String> {
    match q {
        OneOp::SetAReadB(x) => {
            let expected = match m.expect_query_one(e, &[Kind::A]) {
                Some(err) => Err(err),
                None => Ok(m.live[&e].b),
            };
            let got = w.query_one_mut::<(&mut A, Option<&B>)>(e).map(|(a, b)| {
                a.0 = *x;
                b.map(|b| b.0)
            });
            ensure_eq!(got, expected, "query_one::<(&mut A, Option<&B>)>({e:?})");
            if got.is_ok() {
                m.live.get_mut(&e).unwrap().a = Some(*x);
            }
        }
        OneOp::BAligned => {
            let expected = match m.expect_query_one(e, &[Kind::B, Kind::Aligned]) {
                Some(err) => Err(err),
                None => Ok((e, m.live[&e].b.unwrap(), m.live[&e].aligned.unwrap(), true)),
            };
            let got = w
                .query_one::<(Entity, &B, &Aligned)>(e)
                .map(|(e, b, al)| (e, b.0, al.0, aligned_ok(al)));
            if got.is_ok() {
                *aligned_checks += 1;
            }
            ensure_eq!(
                got,
                expected,
                "query_one::<(Entity, &B, &Aligned)>({e:?}) (last field: aligned address)"
            );
        }
        OneOp::LabelCounted(ch, k) => {
            let expected = match m.expect_query_one(e, &[Kind::Label]) {
                Some(err) => Err(err),
                None => Ok(m.live[&e].counted.is_some()),
            };
            let got = w
                .query_one_mut::<(Option<&mut Counted>, &mut Label)>(e)
                .map(|(c, l)| {
                    l.0.push(*ch);
                    c.map(|c| *c = Counted::new(*k)).is_some()
                });
            ensure_eq!(
                got,
                expected,
                "query_one::<(Option<&mut Counted>, &mut Label)>({e:?}) (Ok: has Counted)"
            );
            if got.is_ok() {
                let r = m.live.get_mut(&e).unwrap();
                r.label.as_mut().unwrap().push(*ch);
                if r.counted.is_some() {
                    r.counted = Some(*k);
                }
            }
        }
        OneOp::Entity => {
            let expected = match m.expect_query_one(e, &[]) {
                Some(err) => Err(err),
                None => Ok(e),
            };
            ensure_eq!(
                w.query_one::<Entity>(e),
                expected,
                "query_one::<Entity>({e:?})"
            );
        }
        OneOp::Aliased => {
            ensure_eq!(
                w.query_one_mut::<(&mut A, &mut A)>(e).err(),
                Some(WorldError::AliasedQuery { component: "A" }),
                "query_one::<(&mut A, &mut A)>({e:?})"
            );
            ensure_eq!(
                w.query_one_mut::<(Entity, Option<&mut Label>, &Label)>(e)
                    .err(),
                Some(WorldError::AliasedQuery { component: "Label" }),
                "query_one::<(Entity, Option<&mut Label>, &Label)>({e:?})"
            );
        }
    }
    Ok(())
}

/// The whole world against the oracle.
fn compare(w: &World, m: &Oracle, base: i64, aligned_checks: &mut usize) -> Result<(), String> {
    ensure_eq!(w.len(), m.live.len(), "len()");
    ensure_eq!(w.is_empty(), m.live.is_empty(), "is_empty()");
    let listed: Vec<Entity> = w.entities().collect();
    ensure_eq!(listed.len(), m.live.len(), "entities().count()");
    for e in &listed {
        ensure!(
            m.live.contains_key(e),
            "entities() lists {e:?}, which is not alive in the oracle"
        );
    }
    ensure!(
        listed.iter().collect::<HashSet<_>>().len() == listed.len(),
        "entities() lists an entity twice: {listed:?}"
    );
    for (e, r) in &m.live {
        let mask = r.mask();
        let name = sig_name(mask)
            .ok_or_else(|| format!("oracle bug: {e:?} has undeclared set {mask:#b}"))?;
        ensure!(
            w.is_alive(*e),
            "{e:?} is alive in the oracle, not in the world"
        );
        ensure_eq!(
            w.signature_name_of(*e),
            Some(name),
            "signature_name_of({e:?})"
        );
        ensure_eq!(
            w.signature_of(*e).map(|s| s.bits().words()[0]),
            Some(u64::from(mask)),
            "signature_of({e:?})"
        );
        for k in Kind::ALL {
            ensure_eq!(world_get(w, *e, k), r.get(k), "get::<{}>({e:?})", k.name());
        }
        if let Some(a) = w.get::<Aligned>(*e) {
            ensure!(
                aligned_ok(a),
                "get::<Aligned>({e:?}) is not 16-byte aligned"
            );
            *aligned_checks += 1;
        }
    }
    for e in &m.dead {
        ensure!(!w.is_alive(*e), "despawned {e:?} is alive");
        ensure_eq!(w.signature_of(*e), None, "signature_of(despawned {e:?})");
        for k in Kind::ALL {
            ensure_eq!(
                world_get(w, *e, k),
                None,
                "get::<{}>(despawned {e:?})",
                k.name()
            );
        }
    }
    w.check_invariants()
        .map_err(|msg| format!("check_invariants: {msg}"))?;
    ensure_eq!(
        Counted::live() - base,
        m.counted_live(),
        "live Counted values (world) vs live entities with a Counted (oracle)"
    );
    let tally = w.resource::<Tally>();
    ensure_eq!(
        (tally.rows, tally.sum),
        (m.tally_rows, m.tally_sum),
        "Tally (rows, sum)"
    );
    let stats = w.stats();
    ensure_eq!(stats.entities(), m.live.len(), "stats().entities()");
    for s in stats.declared() {
        let n = m
            .live
            .values()
            .filter(|r| sig_name(r.mask()) == Some(s.name))
            .count();
        ensure_eq!(s.entities, n, "stats() entities of store {}", s.name);
    }
    Ok(())
}

fn run_case(ops: &[Op]) -> Result<(), String> {
    check_declarations()?;
    let base = Counted::live();
    let mut w = World::new();
    let mut m = Oracle::default();
    let mut aligned_checks = 0;
    compare(&w, &m, base, &mut aligned_checks).map_err(|msg| format!("empty world: {msg}"))?;
    for (i, op) in ops.iter().enumerate() {
        apply(&mut w, &mut m, op, &mut aligned_checks)
            .map_err(|msg| format!("op #{i} {op:?}: {msg}"))?;
        compare(&w, &m, base, &mut aligned_checks)
            .map_err(|msg| format!("after op #{i} {op:?}: {msg}"))?;
    }
    // Every case fetches an `&Aligned` from each store that holds one at least once.
    let vals = Vals {
        a: 1,
        b: 2,
        aligned: 3,
        label: "end".into(),
        counted: 4,
    };
    for sig in [4, 5, 6] {
        let op = Op::Spawn {
            sig,
            vals: vals.clone(),
            fallible: false,
        };
        apply(&mut w, &mut m, &op, &mut aligned_checks)
            .map_err(|msg| format!("final {op:?}: {msg}"))?;
        compare(&w, &m, base, &mut aligned_checks)
            .map_err(|msg| format!("after final {op:?}: {msg}"))?;
    }
    ensure!(aligned_checks >= 3, "too few alignment checks");
    drop(w);
    ensure_eq!(
        Counted::live(),
        base,
        "live Counted values after dropping the world"
    );
    Ok(())
}

#[test]
fn declarations_match_the_fixture() {
    check_declarations().unwrap();
    let mut w = World::new();
    let vals = Vals {
        a: 1,
        b: 2,
        aligned: 3,
        label: "x".into(),
        counted: 4,
    };
    for (sig, (name, mask)) in SIGNATURES.iter().enumerate() {
        let e = spawn_one(&mut w, sig, &vals, false).unwrap();
        assert_eq!(w.signature_name_of(e), Some(*name));
        assert_eq!(
            w.signature_of(e).map(|s| s.bits().words()[0]),
            Some(u64::from(*mask))
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        // Shrunk failures are reported in the output; no regression file is written.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn world_matches_model(ops in prop::collection::vec(op_strategy(), 0..MAX_OPS)) {
        let case = CASE.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        if let Err(msg) = run_case(&ops) {
            return Err(TestCaseError::fail(format!(
                "run #{case} of this test (shrinking runs included), {} ops: {msg}",
                ops.len()
            )));
        }
    }
}
