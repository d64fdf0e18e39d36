//! Model-based tests of `#[derive(SoaManager)]` managers (`sigecs::soa`).
//!
//! Random operation sequences drive a derived manager and a naive reference (a `HashMap` from
//! entity to field values) with the same operations; after every operation the two must agree
//! exactly, for both lookup kinds. Entity ids come from an `EntityManager` (so GC and the destroy
//! hook see real liveness) and from a small grid of forged ids, which puts several generations of
//! one index in a manager at once (the dense lookup's displaced entries).

use std::collections::HashMap;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use glam::Vec3;
use proptest::prelude::*;
use sigecs::entity::{Entity, EntityManager, Generation};
use sigecs::soa::{Instance, SoaError};
use sigecs::SoaManager;

/// A 16-byte aligned field.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Wide(u64, u64);

/// A field that counts how many of its values are alive, to catch leaks and double drops.
#[derive(Debug)]
pub struct Live(Arc<AtomicIsize>);

impl Live {
    fn new(counter: &Arc<AtomicIsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Live(counter.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Hash-lookup manager under test.
#[derive(SoaManager)]
#[soa(manager = "HashModel", lookup = "hash")]
pub struct HashRow {
    /// Plain old data.
    pub id: u64,
    /// Owns heap memory.
    pub name: String,
    /// A vector.
    pub pos: Vec3,
    /// A 16-byte aligned value.
    pub wide: Wide,
    /// Zero-sized.
    pub tag: (),
    /// Counts its live copies (drop accounting).
    pub live: Live,
}

/// Dense-lookup manager under test (same fields).
#[derive(SoaManager)]
#[soa(manager = "DenseModel", lookup = "dense")]
pub struct DenseRow {
    /// Plain old data.
    pub id: u64,
    /// Owns heap memory.
    pub name: String,
    /// A vector.
    pub pos: Vec3,
    /// A 16-byte aligned value.
    pub wide: Wide,
    /// Zero-sized.
    pub tag: (),
    /// Counts its live copies (drop accounting).
    pub live: Live,
}

/// The reference's copy of one instance's fields.
#[derive(Clone, Debug, PartialEq)]
struct Value {
    id: u64,
    name: String,
    pos: Vec3,
    wide: Wide,
}

/// The operations both the manager and the reference understand.
trait Manager: Default {
    fn len(&self) -> usize;
    fn capacity(&self) -> usize;
    fn lookup(&self, e: Entity) -> Option<Instance>;
    fn entity(&self, i: Instance) -> Entity;
    fn entities(&self) -> &[Entity];
    fn create(
        &mut self,
        e: Entity,
        v: &Value,
        live: &Arc<AtomicIsize>,
    ) -> Result<Instance, SoaError>;
    fn get(&self, i: Instance) -> Value;
    fn set(&mut self, i: Instance, field: u8, v: &Value);
    fn destroy(&mut self, i: Instance);
    fn destroy_entity(&mut self, e: Entity) -> bool;
    fn gc(&mut self, em: &EntityManager) -> usize;
    fn gc_all(&mut self, em: &EntityManager) -> usize;
    fn flush_destroyed(&mut self) -> usize;
    fn register(&self, em: &mut EntityManager);
}

macro_rules! impl_manager {
    ($manager:ident, $row:ident) => {
        impl Manager for $manager {
            fn len(&self) -> usize {
                self.len()
            }
            fn capacity(&self) -> usize {
                self.capacity()
            }
            fn lookup(&self, e: Entity) -> Option<Instance> {
                self.lookup(e)
            }
            fn entity(&self, i: Instance) -> Entity {
                self.entity(i)
            }
            fn entities(&self) -> &[Entity] {
                self.entities()
            }
            fn create(
                &mut self,
                e: Entity,
                v: &Value,
                live: &Arc<AtomicIsize>,
            ) -> Result<Instance, SoaError> {
                self.create(
                    e,
                    $row {
                        id: v.id,
                        name: v.name.clone(),
                        pos: v.pos,
                        wide: v.wide,
                        tag: (),
                        live: Live::new(live),
                    },
                )
            }
            fn get(&self, i: Instance) -> Value {
                // Read through both the getters and the column slices.
                let columns = self.columns();
                assert_eq!(columns.entities[i.index()], self.entity(i));
                assert_eq!(columns.id[i.index()], *self.id(i));
                assert_eq!(self.wide_column()[i.index()], *self.wide(i));
                assert_eq!(columns.tag.len(), self.len());
                Value {
                    id: *self.id(i),
                    name: self.name(i).clone(),
                    pos: columns.pos[i.index()],
                    wide: *self.wide(i),
                }
            }
            fn set(&mut self, i: Instance, field: u8, v: &Value) {
                match field % 4 {
                    0 => self.set_id(i, v.id),
                    1 => *self.name_mut(i) = v.name.clone(),
                    2 => self.pos_column_mut()[i.index()] = v.pos,
                    _ => self.columns_mut().wide[i.index()] = v.wide,
                }
            }
            fn destroy(&mut self, i: Instance) {
                self.destroy(i)
            }
            fn destroy_entity(&mut self, e: Entity) -> bool {
                self.destroy_entity(e)
            }
            fn gc(&mut self, em: &EntityManager) -> usize {
                self.gc(em)
            }
            fn gc_all(&mut self, em: &EntityManager) -> usize {
                self.gc_all(em)
            }
            fn flush_destroyed(&mut self) -> usize {
                self.flush_destroyed()
            }
            fn register(&self, em: &mut EntityManager) {
                self.register_destroy_hook(em);
            }
        }
    };
}

impl_manager!(HashModel, HashRow);
impl_manager!(DenseModel, DenseRow);

/// Which entity an operation names.
#[derive(Clone, Copy, Debug)]
enum Pick {
    /// One the entity manager issued (live or destroyed), by position in the issue order.
    Issued(u8),
    /// A forged id from a 6 × 3 grid of indices and generations.
    Forged(u8, Generation),
}

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    Kill(Pick),
    Create(Pick, Value),
    Destroy(u16),
    DestroyEntity(Pick),
    Set(Pick, u8, Value),
    Gc,
    GcAll,
    Flush,
}

fn value() -> impl Strategy<Value = Value> {
    (any::<u64>(), 0u8..6, -3i8..3, any::<u64>()).prop_map(|(id, n, p, w)| Value {
        id,
        name: format!("name-{n}"),
        pos: Vec3::new(p.into(), 1.0, -f32::from(p)),
        wide: Wide(w, !w),
    })
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        3 => any::<u8>().prop_map(Pick::Issued),
        1 => (0u8..6, Generation::MIN..3).prop_map(|(i, g)| Pick::Forged(i, g)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Spawn),
        2 => pick().prop_map(Op::Kill),
        5 => (pick(), value()).prop_map(|(p, v)| Op::Create(p, v)),
        1 => any::<u16>().prop_map(Op::Destroy),
        2 => pick().prop_map(Op::DestroyEntity),
        2 => (pick(), any::<u8>(), value()).prop_map(|(p, f, v)| Op::Set(p, f, v)),
        1 => Just(Op::Gc),
        1 => Just(Op::GcAll),
        1 => Just(Op::Flush),
    ]
}

/// The world of one test case: the entity manager, the reference and the destroy queue the
/// reference expects the hook to have filled.
struct Harness<M: Manager> {
    em: EntityManager,
    issued: Vec<Entity>,
    manager: M,
    reference: HashMap<Entity, Value>,
    pending: Vec<Entity>,
    live: Arc<AtomicIsize>,
}

impl<M: Manager> Harness<M> {
    fn new() -> Self {
        let mut em = EntityManager::new();
        let manager = M::default();
        manager.register(&mut em);
        Harness {
            em,
            issued: Vec::new(),
            manager,
            reference: HashMap::new(),
            pending: Vec::new(),
            live: Arc::new(AtomicIsize::new(0)),
        }
    }

    fn entity(&self, pick: Pick) -> Entity {
        match pick {
            Pick::Issued(k) if !self.issued.is_empty() => {
                self.issued[k as usize % self.issued.len()]
            }
            Pick::Issued(k) => Entity::new(u32::from(k) + 100, 0),
            Pick::Forged(i, g) => Entity::new(i.into(), g),
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Spawn => self.issued.push(self.em.create().unwrap()),
            Op::Kill(p) => {
                let e = self.entity(*p);
                if self.em.destroy(e) {
                    self.pending.push(e);
                }
            }
            Op::Create(p, v) => {
                let e = self.entity(*p);
                let result = self.manager.create(e, v, &self.live);
                match self.reference.get(&e) {
                    Some(_) => assert_eq!(
                        result,
                        Err(SoaError::AlreadyExists {
                            entity: e,
                            instance: self.manager.lookup(e).unwrap()
                        })
                    ),
                    None => {
                        let i = result.expect("create for an entity without an instance");
                        assert_eq!(self.manager.entity(i), e);
                        self.reference.insert(e, v.clone());
                    }
                }
            }
            Op::Destroy(k) => {
                let len = self.manager.len();
                if len > 0 {
                    let i = Instance::new(u32::from(*k) % len as u32);
                    let e = self.manager.entity(i);
                    self.manager.destroy(i);
                    assert!(self.reference.remove(&e).is_some());
                }
            }
            Op::DestroyEntity(p) => {
                let e = self.entity(*p);
                let had = self.reference.remove(&e).is_some();
                assert_eq!(self.manager.destroy_entity(e), had);
            }
            Op::Set(p, field, v) => {
                let e = self.entity(*p);
                match self.manager.lookup(e) {
                    Some(i) => {
                        self.manager.set(i, *field, v);
                        let r = self
                            .reference
                            .get_mut(&e)
                            .expect("manager has an extra entity");
                        match field % 4 {
                            0 => r.id = v.id,
                            1 => r.name = v.name.clone(),
                            2 => r.pos = v.pos,
                            _ => r.wide = v.wide,
                        }
                    }
                    None => assert!(!self.reference.contains_key(&e)),
                }
            }
            Op::Gc => {
                let n = self.manager.gc(&self.em);
                // Which instances went is random; that they were exactly dead ones is not.
                let gone: Vec<Entity> = self
                    .reference
                    .keys()
                    .filter(|e| self.manager.lookup(**e).is_none())
                    .copied()
                    .collect();
                assert_eq!(n, gone.len());
                for e in gone {
                    assert!(
                        !self.em.alive(e),
                        "gc destroyed the component of live {e:?}"
                    );
                    self.reference.remove(&e);
                }
            }
            Op::GcAll => {
                let n = self.manager.gc_all(&self.em);
                let before = self.reference.len();
                self.reference.retain(|e, _| self.em.alive(*e));
                assert_eq!(n, before - self.reference.len());
            }
            Op::Flush => {
                let n = self.manager.flush_destroyed();
                let expected = self
                    .pending
                    .drain(..)
                    .filter(|e| self.reference.remove(e).is_some())
                    .count();
                assert_eq!(n, expected);
            }
        }
    }

    /// The manager and the reference hold exactly the same instances and values.
    fn compare(&self) {
        let m = &self.manager;
        assert_eq!(m.len(), self.reference.len());
        assert!(m.capacity() >= m.len());
        assert_eq!(m.entities().len(), m.len());
        assert_eq!(
            self.live.load(Ordering::SeqCst),
            m.len() as isize,
            "every stored value is alive exactly once"
        );
        for (e, v) in &self.reference {
            let i = m
                .lookup(*e)
                .unwrap_or_else(|| panic!("{e:?} lost its instance"));
            assert_eq!(m.entity(i), *e);
            assert_eq!(&m.get(i), v, "values of {e:?}");
        }
        for (row, e) in m.entities().iter().enumerate() {
            assert!(self.reference.contains_key(e), "manager has extra {e:?}");
            assert_eq!(m.lookup(*e), Some(Instance::new(row as u32)));
        }
        let forged = (0..6).flat_map(|i| (0..4).map(move |g| Entity::new(i, g)));
        for e in self.issued.iter().copied().chain(forged) {
            assert_eq!(
                m.lookup(e).is_some(),
                self.reference.contains_key(&e),
                "{e:?}"
            );
        }
    }
}

fn run<M: Manager>(ops: &[Op]) {
    let mut h = Harness::<M>::new();
    h.compare();
    for op in ops {
        h.apply(op);
        h.compare();
    }
    let live = h.live.clone();
    drop(h);
    assert_eq!(
        live.load(Ordering::SeqCst),
        0,
        "dropping the manager drops every value"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 384 }, ..ProptestConfig::default() })]

    #[test]
    fn hash_manager_matches_the_reference(ops in proptest::collection::vec(op(), 1..80)) {
        run::<HashModel>(&ops);
    }

    #[test]
    fn dense_manager_matches_the_reference(ops in proptest::collection::vec(op(), 1..80)) {
        run::<DenseModel>(&ops);
    }
}

/// GC takes exactly the components of dead entities, never a live one: repeated lazy `gc`
/// until none is left, and `gc_all` in one call.
fn gc_takes_exactly_the_dead<M: Manager>() {
    let live = Arc::new(AtomicIsize::new(0));
    let mut em = EntityManager::new();
    let es = em.create_many(if cfg!(miri) { 100 } else { 2000 }).unwrap();
    let value = |e: Entity| Value {
        id: e.index().into(),
        name: e.to_string(),
        pos: Vec3::splat(e.index() as f32),
        wide: Wide(e.index().into(), 7),
    };
    let mut lazy = M::default();
    let mut full = M::default();
    for e in &es {
        lazy.create(*e, &value(*e), &live).unwrap();
        full.create(*e, &value(*e), &live).unwrap();
    }
    // Kill a pseudo-random 30%.
    let mut state = 0x1234_5678_9ABC_DEF1u64;
    for e in &es {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state % 10 < 3 {
            em.destroy(*e);
        }
    }
    let alive: Vec<Entity> = es.iter().copied().filter(|e| em.alive(*e)).collect();
    let dead = es.len() - alive.len();
    assert!(dead > es.len() / 5, "{dead}");

    assert_eq!(full.gc_all(&em), dead);
    let mut total = 0;
    let mut calls = 0;
    while lazy.entities().iter().any(|e| !em.alive(*e)) {
        total += lazy.gc(&em);
        calls += 1;
        assert!(calls < 100_000, "lazy gc does not converge");
        assert_eq!(lazy.len(), es.len() - total);
    }
    assert_eq!(total, dead);
    assert_eq!(lazy.gc(&em), 0);
    for m in [&lazy, &full] {
        assert_eq!(m.len(), alive.len());
        for e in &alive {
            let i = m.lookup(*e).expect("a live entity lost its component");
            assert_eq!(m.get(i), value(*e));
        }
        for e in es.iter().filter(|e| !em.alive(**e)) {
            assert_eq!(m.lookup(*e), None);
        }
    }
    assert_eq!(live.load(Ordering::SeqCst), 2 * alive.len() as isize);
    drop((lazy, full));
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn hash_gc_takes_exactly_the_dead() {
    gc_takes_exactly_the_dead::<HashModel>();
}

#[test]
fn dense_gc_takes_exactly_the_dead() {
    gc_takes_exactly_the_dead::<DenseModel>();
}

/// A dead entity's component outlives the reuse of its index (lazy GC): both generations keep
/// their own instance, and GC then removes only the old one.
#[test]
fn index_reuse_before_gc() {
    let live = Arc::new(AtomicIsize::new(0));
    let mut em = EntityManager::new();
    let first = em.create().unwrap();
    let mut dense = DenseModel::new();
    let mut hash = HashModel::new();
    let v = |id| Value {
        id,
        name: String::new(),
        pos: Vec3::ZERO,
        wide: Wide(0, 0),
    };
    Manager::create(&mut dense, first, &v(1), &live).unwrap();
    Manager::create(&mut hash, first, &v(1), &live).unwrap();
    em.destroy(first);
    for e in em.create_many(1100).unwrap() {
        em.destroy(e);
    }
    let reused = em.create().unwrap();
    assert_eq!(reused.index(), first.index());
    Manager::create(&mut dense, reused, &v(2), &live).unwrap();
    Manager::create(&mut hash, reused, &v(2), &live).unwrap();
    assert_eq!(Manager::get(&dense, dense.lookup(reused).unwrap()).id, 2);
    assert_eq!(Manager::get(&dense, dense.lookup(first).unwrap()).id, 1);
    assert_eq!(dense.gc_all(&em), 1);
    assert_eq!(hash.gc_all(&em), 1);
    assert_eq!(dense.lookup(first), None);
    assert_eq!(Manager::get(&dense, dense.lookup(reused).unwrap()).id, 2);
    assert_eq!(Manager::get(&hash, hash.lookup(reused).unwrap()).id, 2);
}

mod shapes {
    //! Derive edge cases: private fields and manager, raw identifiers, no fields, 16 fields.
    use sigecs::entity::Entity;
    use sigecs::SoaManager;

    #[derive(SoaManager)]
    struct Private {
        r#type: u8,
        pub(crate) weight: f64,
    }

    #[derive(SoaManager)]
    #[soa(lookup = "dense")]
    pub struct Marker;

    #[derive(SoaManager)]
    #[soa(manager = "Sixteen")]
    pub struct Sixteen16 {
        pub a0: u8,
        pub a1: u16,
        pub a2: u32,
        pub a3: u64,
        pub a4: u128,
        pub a5: i8,
        pub a6: i16,
        pub a7: i32,
        pub a8: i64,
        pub a9: f32,
        pub a10: f64,
        pub a11: bool,
        pub a12: char,
        pub a13: String,
        pub a14: Vec<u8>,
        pub a15: Option<Box<u8>>,
    }

    #[test]
    fn derived_shapes_work() {
        let e = Entity::new(3, 1);
        let mut p = PrivateManager::new();
        let i = p
            .create(
                e,
                Private {
                    r#type: 4,
                    weight: 0.5,
                },
            )
            .unwrap();
        p.set_type(i, 9);
        assert_eq!(*p.r#type(i), 9);
        assert_eq!(p.weight_column(), &[0.5]);
        let c = p.columns();
        assert_eq!((c.entities, c.r#type), (&[e][..], &[9u8][..]));

        let mut m = MarkerManager::default();
        m.create(e, Marker).unwrap();
        assert!(m.contains(e));
        assert!(!m.contains(Entity::new(3, 2)));
        assert_eq!(m.columns().entities, &[e]);

        let mut s = Sixteen::with_capacity(1);
        let row = Sixteen16 {
            a0: 0,
            a1: 1,
            a2: 2,
            a3: 3,
            a4: 4,
            a5: 5,
            a6: 6,
            a7: 7,
            a8: 8,
            a9: 9.0,
            a10: 10.0,
            a11: true,
            a12: 'c',
            a13: "thirteen".into(),
            a14: vec![14],
            a15: Some(Box::new(15)),
        };
        let i = s.create(e, row).unwrap();
        assert_eq!(*s.a4(i), 4);
        assert_eq!(s.a13(i), "thirteen");
        assert_eq!(**s.a15(i).as_ref().unwrap(), 15);
        s.a14_mut(i).push(1);
        assert_eq!(s.columns_mut().a14[0], [14, 1]);
        assert!(s.destroy_entity(e));
        assert!(s.is_empty());
    }
}

/// The generated code names only absolute paths: it compiles without the prelude.
#[no_implicit_prelude]
mod hygiene {
    #[derive(::sigecs::SoaManager)]
    #[soa(manager = "BareManager", lookup = "dense")]
    pub struct Bare {
        pub a: u8,
        pub b: ::std::string::String,
    }

    #[test]
    fn derive_needs_no_prelude() {
        let mut m = BareManager::new();
        let e = ::sigecs::entity::Entity::new(1, 0);
        let i = m.create(
            e,
            Bare {
                a: 1,
                b: ::std::string::ToString::to_string("b"),
            },
        );
        let i = ::std::result::Result::unwrap(i);
        ::std::assert_eq!(*m.a(i), 1);
        ::std::assert_eq!(m.b_column().len(), 1);
    }
}

/// A destroy hook outliving its manager does nothing (it holds the queue weakly).
#[test]
fn hook_outliving_its_manager_is_harmless() {
    let mut em = EntityManager::new();
    let m = HashModel::new();
    let e = em.create().unwrap();
    m.register_destroy_hook(&mut em);
    let queue = m.destroy_queue();
    drop(m);
    em.destroy(e);
    assert_eq!(queue.len(), 1, "a live handle still receives entities");
    drop(queue);
    let e = em.create().unwrap();
    em.destroy(e);
}
