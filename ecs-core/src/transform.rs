//! The transform hierarchy: a scene graph of entities whose world matrices are exact when read.
//!
//! A [`TransformManager`] gives entities a position in one world. The transform is optional per
//! entity, and every world owns its own manager, so the same [`Entity`] can have a transform in
//! several managers at different places (Bitsquid's pickaxe that lives both in the game world and
//! in the inventory world). Each instance stores its entity, a local matrix relative to its
//! parent, the resulting world matrix, and four instance links: `parent`, `first_child`,
//! `next_sibling` and `prev_sibling`. The children of a node are its `first_child` followed by the
//! `next_sibling` chain; `prev_sibling` makes unlinking O(1).
//!
//! # Layout
//!
//! The data is structure-of-arrays: one `Vec` per field (entity, local, world, and the four link
//! arrays), all of length [`TransformManager::len`], indexed by [`Instance`]. Bitsquid packs the
//! same arrays into one allocation; separate `Vec`s keep the code free of `unsafe` while giving the
//! same access pattern (each field is contiguous, a walk touches only the fields it needs). An
//! `FxHashMap<Entity, Instance>` maps entities to instances.
//!
//! # Convention
//!
//! glam uses column vectors (`p' = M * p`), so a point in a child's space reaches world space as
//! `parent_world * (local * p)`, and **`world = parent_world * local`**. A root's world matrix is
//! its local matrix. (Bitsquid writes `local * parent` because its engine uses row vectors; it is
//! the same transform.)
//!
//! # Exact world matrices
//!
//! [`TransformManager::world`] is always exact: no dirty flags for the caller, no stale
//! last-frame positions, no "force an update here" hacks. [`TransformManager::set_local`]
//! recomputes the world matrices of the node and its whole subtree before it returns (Bitsquid's
//! choice: hierarchies are shallow and rarely move all at once); the worst case (every node of a
//! chain of n moving) is O(n²) with one call per node, which [`TransformManager::set_local_many`]
//! brings back to O(n): it sets all locals first and then updates each affected subtree exactly
//! once (a node whose ancestor is also in the batch is updated only by the ancestor's pass).
//!
//! Parenting stays linear in the number of nodes whatever the depth. [`TransformManager::link`]
//! checks for a cycle by walking up from the parent and down the child's subtree in turns, so
//! it costs O(1) for a new leaf (a chain built from the root down, a level spawned parents first)
//! and for a new root (a chain built from the leaf up). A linked or unlinked subtree of a few
//! nodes is updated at once; a larger one is marked stale instead, and the first read of a world
//! matrix after that brings every stale subtree up to date in one pass (each node once), so
//! building a chain from its leaf up costs O(n) rather than the O(n²) of updating the growing
//! subtree at every link. The read is through `&self`: the update is written once, behind a
//! `OnceLock`, before any reader sees the matrices (see `Worlds`).
//!
//! The subtree walk is iterative, with an explicit stack kept in the manager and reused, so it
//! neither recurses (a chain of any depth is fine) nor allocates once the stack has grown.
//!
//! # Swapping instances
//!
//! Swapping two instances must keep every link that points at them right, which is hairy when the
//! two are related (parent and child, adjacent siblings). Following Bitsquid,
//! [`TransformManager::swap`] never does it in one go; it uses a spare slot at the end of the
//! arrays, index `size`, and three moves, each of which copies one slot and redirects every link
//! (and the entity map) that pointed at the source to the destination:
//!
//! 1. `[size] <- [A]`: afterwards nothing refers to `A`;
//! 2. `[A] <- [B]`: safe because nothing refers to `A`; afterwards nothing refers to `B`;
//! 3. `[B] <- [size]`: and the spare slot is dropped again.
//!
//! [`TransformManager::destroy`] is a swap-erase built from the same move (the last instance moves
//! into the hole), and [`TransformManager::sort_parents_first`] is a sequence of swaps that lays
//! every tree out in depth-first order: parents before children, each subtree contiguous, in the
//! same order the update walk visits them.
//!
//! Like Bitsquid's `Instance`, a handle is a plain array index: [`TransformManager::swap`],
//! [`TransformManager::destroy`] and [`TransformManager::sort_parents_first`] move instances, so
//! handles held across those calls must be looked up again with [`TransformManager::lookup`].
//!
//! # Errors
//!
//! Bad input is a [`TransformError`], never a panic, and a call that fails changes nothing: an
//! instance out of range, an entity that already has a transform here, a link of a node to
//! itself or to one of its own descendants (which would make a cycle).
//!
//! # Example
//!
//! ```
//! use sigecs::entity::EntityManager;
//! use sigecs::transform::{TransformError, TransformManager};
//! use glam::{Mat4, Vec3};
//!
//! let mut entities = EntityManager::new();
//! let car = entities.create().unwrap();
//! let wheel = entities.create().unwrap();
//!
//! let mut tm = TransformManager::new();
//! let c = tm.create(car, Mat4::from_translation(Vec3::new(10.0, 0.0, 0.0)))?;
//! let w = tm.create(wheel, Mat4::from_translation(Vec3::new(1.0, -0.5, 2.0)))?;
//! tm.link(w, c)?;
//! assert_eq!(tm.world(w)?.transform_point3(Vec3::ZERO), Vec3::new(11.0, -0.5, 2.0));
//!
//! // Moving the car moves the wheel at once.
//! tm.set_local(c, Mat4::from_translation(Vec3::new(20.0, 0.0, 0.0)))?;
//! assert_eq!(tm.world(w)?.transform_point3(Vec3::ZERO), Vec3::new(21.0, -0.5, 2.0));
//! assert_eq!(tm.children(c)?.collect::<Vec<_>>(), vec![w]);
//!
//! // A car cannot be linked below its own wheel.
//! assert!(matches!(tm.link(c, w), Err(TransformError::Cycle { .. })));
//! assert_eq!(tm.lookup(wheel), Some(w));
//! # Ok::<(), TransformError>(())
//! ```

use std::cell::UnsafeCell;
use std::fmt;
use std::iter::FusedIterator;
use std::sync::OnceLock;

use glam::Mat4;
use rustc_hash::FxHashMap;

use crate::entity::Entity;

/// The most instances one manager can hold. Index `u32::MAX` is [`Instance::NIL`] and one more
/// index is needed for the spare slot that [`TransformManager::swap`] moves through.
pub const MAX_INSTANCES: usize = u32::MAX as usize - 1;

/// A handle to one transform in a [`TransformManager`]: an index into its arrays.
///
/// Handles are positions, not identities: [`TransformManager::swap`],
/// [`TransformManager::destroy`] and [`TransformManager::sort_parents_first`] move instances, after
/// which an old handle may name another entity's transform. Keep [`Entity`] ids across those calls
/// and [`TransformManager::lookup`] them again.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Instance(u32);

impl Instance {
    /// The invalid instance, used for "no link". Every manager reports it out of range. The
    /// API says "none" with `Option<Instance>`; hidden, for the runtime and the level loader.
    #[doc(hidden)]
    pub const NIL: Instance = Instance(u32::MAX);

    /// An instance handle from an array index (checked when used, so any value is safe).
    #[inline]
    pub const fn new(index: u32) -> Self {
        Instance(index)
    }

    /// The array index of this instance.
    #[inline]
    pub const fn index(self) -> u32 {
        self.0
    }

    /// False for [`Instance::NIL`].
    #[inline]
    pub(crate) const fn is_valid(self) -> bool {
        self.0 != u32::MAX
    }

    /// The index as `usize`, for array access.
    #[inline]
    const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_valid() {
            write!(f, "Instance({})", self.0)
        } else {
            f.write_str("Instance(nil)")
        }
    }
}

impl fmt::Display for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_valid() {
            write!(f, "#{}", self.0)
        } else {
            f.write_str("#nil")
        }
    }
}

/// Why a [`TransformManager`] operation was refused. A refused operation changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransformError {
    /// The instance is [`Instance::NIL`] or not below [`TransformManager::len`].
    InvalidInstance {
        /// The instance that was passed.
        instance: Instance,
        /// The number of instances at the time.
        len: usize,
    },
    /// The entity already has a transform in this manager.
    AlreadyPresent {
        /// The entity that was passed.
        entity: Entity,
        /// Its existing instance.
        instance: Instance,
    },
    /// An instance cannot be its own parent.
    SelfParent {
        /// The instance linked to itself.
        instance: Instance,
    },
    /// The parent is a descendant of the child, so the link would make a cycle.
    Cycle {
        /// The instance that was to be linked.
        child: Instance,
        /// The requested parent, which lies in the child's subtree.
        parent: Instance,
        /// The child's entity.
        child_entity: Entity,
        /// The parent's entity.
        parent_entity: Entity,
    },
    /// The manager already holds [`MAX_INSTANCES`] instances.
    Full,
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransformError::InvalidInstance { instance, len } => write!(
                f,
                "transform instance {instance} is out of range: the manager holds {} (handles \
                 move on swap, destroy and sort; look the entity up again)",
                crate::plural::count(*len, "instance", "instances")
            ),
            TransformError::AlreadyPresent { entity, instance } => write!(
                f,
                "entity {entity} already has a transform in this manager (instance {instance}); \
                 use set_local to move it"
            ),
            TransformError::SelfParent { instance } => {
                write!(f, "cannot link transform instance {instance} to itself")
            }
            TransformError::Cycle {
                child,
                parent,
                child_entity,
                parent_entity,
            } => write!(
                f,
                "cannot make entity {parent_entity} (transform instance {parent}) the parent of \
                 entity {child_entity} (instance {child}): {parent_entity} is a descendant of \
                 {child_entity}, so the link would make a cycle; unlink {parent_entity} first"
            ),
            TransformError::Full => write!(
                f,
                "transform manager is full: it already holds {MAX_INSTANCES} instances"
            ),
        }
    }
}

impl std::error::Error for TransformError {}

/// Mark states used by [`TransformManager::set_local_many`] (two low bits of a mark).
const MARK_BATCH: u32 = 1; // in the batch, not resolved yet
const MARK_DIRTY: u32 = 2; // in the batch (resolved) or below a batched node
const MARK_CLEAN: u32 = 3; // neither it nor any ancestor is in the batch
const MARK_STATE: u32 = 3;
const MARK_EPOCH_SHIFT: u32 = 2;
const MARK_EPOCH_MAX: u32 = u32::MAX >> MARK_EPOCH_SHIFT;

/// The transform manager of one world: local and world matrices of entities linked
/// into trees, with exact world matrices whenever they are read. See the [module docs](self)
/// for the design.
#[derive(Default)]
pub struct TransformManager {
    /// The entity owning each instance.
    entity: Vec<Entity>,
    /// Local transform with respect to the parent (or the world, for roots).
    local: Vec<Mat4>,
    /// World transforms (`world[parent] * local`, or `local` for roots), brought up to date
    /// for the `stale` subtrees when read.
    worlds: Worlds,
    /// Parent instance, or NIL.
    parent: Vec<Instance>,
    /// First child, or NIL.
    first_child: Vec<Instance>,
    /// Next sibling, or NIL.
    next_sibling: Vec<Instance>,
    /// Previous sibling, or NIL (always NIL for a first child).
    prev_sibling: Vec<Instance>,
    /// Entity → instance.
    map: FxHashMap<Entity, Instance>,
    /// Roots of subtrees whose world matrices may be behind their links: instances linked or
    /// unlinked (with their subtrees) since the matrices were last brought up to date. Every
    /// instance outside these subtrees has an exact world matrix. Duplicates and nested
    /// entries are allowed; an update skips them.
    stale: Vec<Instance>,
    /// State of the pseudo-random probe of [`TransformManager::gc`].
    gc_state: u32,
}

/// A link or unlink updates the moved subtree's world matrices at once when it has at most
/// this many nodes (and every matrix it depends on is exact); a larger subtree is marked
/// stale, and updated once when a matrix is next read. So linking costs O(1) whatever the
/// subtree, and a chain built from the leaves up stays linear.
const EAGER_NODES: usize = 64;

/// The world matrices and the scratch their updates use, behind a cell so that a read through
/// `&self` ([`TransformManager::world`], [`TransformManager::worlds`]) can bring the stale
/// subtrees up to date, once per change.
///
/// # Safety
///
/// The cell is written through a shared reference only inside `exact`'s initialisation:
/// `OnceLock` runs it at most once while `exact` is unset, on one thread, and blocks every
/// other caller of `get_or_init` until it ends. `exact` is unset, and the stale subtrees
/// changed, only through `&mut TransformManager`, which ends every shared borrow first. A
/// shared reference to the cell's contents is made only after that initialisation completed,
/// or when nothing is stale (then no initialisation can start before a `&mut` method runs).
#[derive(Default)]
struct Worlds {
    data: UnsafeCell<WorldData>,
    /// Set once the stale subtrees' matrices were brought up to date through `&self`; the
    /// stale list is then only a record to clear.
    exact: OnceLock<()>,
}

// SAFETY: see `Worlds`: writes through `&Worlds` are serialised by `exact`'s one-time
// initialisation and happen before every shared read of the cell's contents.
unsafe impl Sync for Worlds {}

/// What [`Worlds`] keeps in its cell.
#[derive(Clone, Default)]
struct WorldData {
    /// The world matrix of each instance.
    world: Vec<Mat4>,
    /// Reused work stack of the subtree walk and of the ancestor walk of batched updates.
    stack: Vec<Instance>,
    /// Per-instance marks of batched updates: `epoch << 2 | state`.
    marks: Vec<u32>,
    /// Epoch of the current batched update; marks of other epochs read as unseen.
    epoch: u32,
}

/// The [`Links`] of a `TransformManager` (a macro, so that the fields are borrowed one by one
/// beside a mutable borrow of its `worlds`).
macro_rules! links {
    ($tm:expr) => {
        Links {
            local: &$tm.local,
            parent: &$tm.parent,
            first_child: &$tm.first_child,
            next_sibling: &$tm.next_sibling,
        }
    };
}

/// The links and locals a world-matrix update reads.
#[derive(Clone, Copy)]
struct Links<'a> {
    local: &'a [Mat4],
    parent: &'a [Instance],
    first_child: &'a [Instance],
    next_sibling: &'a [Instance],
}

impl Clone for TransformManager {
    fn clone(&self) -> Self {
        TransformManager {
            entity: self.entity.clone(),
            local: self.local.clone(),
            worlds: Worlds {
                data: UnsafeCell::new(self.data().clone()),
                exact: OnceLock::new(),
            },
            parent: self.parent.clone(),
            first_child: self.first_child.clone(),
            next_sibling: self.next_sibling.clone(),
            prev_sibling: self.prev_sibling.clone(),
            map: self.map.clone(),
            stale: Vec::new(),
            gc_state: self.gc_state,
        }
    }
}

impl fmt::Debug for TransformManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransformManager")
            .field("len", &self.len())
            .field(
                "roots",
                &self.parent.iter().filter(|p| !p.is_valid()).count(),
            )
            .finish()
    }
}

impl TransformManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty manager with room for `capacity` instances (plus the spare slot of `swap`).
    pub fn with_capacity(capacity: usize) -> Self {
        let mut tm = Self::default();
        tm.reserve(capacity);
        tm
    }

    /// Reserves room for `additional` more instances (plus the spare slot of `swap`).
    pub fn reserve(&mut self, additional: usize) {
        let n = additional + 1;
        self.entity.reserve(n);
        self.local.reserve(n);
        self.worlds.data.get_mut().world.reserve(n);
        self.parent.reserve(n);
        self.first_child.reserve(n);
        self.next_sibling.reserve(n);
        self.prev_sibling.reserve(n);
        self.map.reserve(additional);
    }

    /// Instances the manager holds without reallocating, beside the spare slot of `swap`.
    pub fn capacity(&self) -> usize {
        [
            self.entity.capacity(),
            self.local.capacity(),
            self.data().world.capacity(),
            self.parent.capacity(),
            self.first_child.capacity(),
            self.next_sibling.capacity(),
            self.prev_sibling.capacity(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
        .saturating_sub(1)
        .min(self.map.capacity())
    }

    /// Number of instances.
    #[inline]
    pub fn len(&self) -> usize {
        self.entity.len()
    }

    /// True when the manager holds no instance.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entity.is_empty()
    }

    /// The instance of `e`'s transform in this manager, if it has one.
    #[inline]
    pub fn lookup(&self, e: Entity) -> Option<Instance> {
        self.map.get(&e).copied()
    }

    /// Gives `e` a transform: a new root instance whose world matrix is `local`.
    ///
    /// Fails with [`TransformError::AlreadyPresent`] when `e` already has one here (other
    /// managers are independent), or [`TransformError::Full`].
    pub fn create(&mut self, e: Entity, local: Mat4) -> Result<Instance, TransformError> {
        if let Some(&instance) = self.map.get(&e) {
            return Err(TransformError::AlreadyPresent {
                entity: e,
                instance,
            });
        }
        if self.len() >= MAX_INSTANCES {
            return Err(TransformError::Full);
        }
        Ok(self.create_checked(e, local))
    }

    /// [`TransformManager::create`] without its checks: the caller has checked that `e` has no
    /// instance here and that the manager is not full (`create` itself, and a level spawn's
    /// second phase).
    pub(crate) fn create_checked(&mut self, e: Entity, local: Mat4) -> Instance {
        debug_assert!(!self.map.contains_key(&e) && self.len() < MAX_INSTANCES);
        let i = Instance(self.len() as u32);
        self.entity.push(e);
        self.local.push(local);
        // A new root's world matrix is its local one, exact whatever else is stale.
        self.worlds.data.get_mut().world.push(local);
        self.parent.push(Instance::NIL);
        self.first_child.push(Instance::NIL);
        self.next_sibling.push(Instance::NIL);
        self.prev_sibling.push(Instance::NIL);
        self.map.insert(e, i);
        i
    }

    /// Removes instance `i` and returns its entity.
    ///
    /// `i` is unlinked from its parent. Its children are unlinked and become roots: each keeps its
    /// local matrix, which is now also its world matrix, and its subtree's world matrices are
    /// updated to match. (This is what [`TransformManager::unlink`] does to a single child; the
    /// alternative, keeping their world matrices by rewriting their locals, would silently change
    /// values the user set.) The slot is then filled by a swap-erase: the last instance moves
    /// into `i`, with every link to it redirected, so the handle of the last instance changes.
    pub fn destroy(&mut self, i: Instance) -> Result<Entity, TransformError> {
        let idx = self.check(i)?;
        // Slots move below: nothing may be left stale.
        self.settle();
        self.detach(idx);
        let mut c = self.first_child[idx];
        while c.is_valid() {
            let ci = c.idx();
            let next = self.next_sibling[ci];
            self.parent[ci] = Instance::NIL;
            self.prev_sibling[ci] = Instance::NIL;
            self.next_sibling[ci] = Instance::NIL;
            self.refresh(ci);
            c = next;
        }
        self.first_child[idx] = Instance::NIL;
        let e = self.entity[idx];
        self.map.remove(&e);
        let last = self.len() - 1;
        if idx != last {
            self.move_slot(last, idx);
        }
        self.pop_slot();
        Ok(e)
    }

    /// Removes every instance, keeping the memory for the next ones.
    pub fn clear(&mut self) {
        self.entity.clear();
        self.local.clear();
        self.worlds.data.get_mut().world.clear();
        self.worlds.exact.take();
        self.stale.clear();
        self.parent.clear();
        self.first_child.clear();
        self.next_sibling.clear();
        self.prev_sibling.clear();
        self.map.clear();
    }

    /// Appends the entities of `i`'s subtree to `out`, `i` first, each parent before its
    /// children (pre-order).
    pub(crate) fn subtree(&self, i: Instance, out: &mut Vec<Entity>) -> Result<(), TransformError> {
        let idx = self.check(i)?;
        out.push(self.entity[idx]);
        let mut stack = vec![self.first_child[idx]];
        while let Some(c) = stack.pop() {
            if !c.is_valid() {
                continue;
            }
            out.push(self.entity[c.idx()]);
            stack.push(self.next_sibling[c.idx()]);
            stack.push(self.first_child[c.idx()]);
        }
        Ok(())
    }

    /// Removes `i` and its whole subtree (leaves first, so no world matrix is recomputed), and
    /// appends their entities to `out` in pre-order (`i` first). Handles of other instances
    /// may change, as with [`TransformManager::destroy`].
    pub(crate) fn destroy_subtree(
        &mut self,
        i: Instance,
        out: &mut Vec<Entity>,
    ) -> Result<(), TransformError> {
        let start = out.len();
        self.subtree(i, out)?;
        for k in (start..out.len()).rev() {
            let instance = self.map[&out[k]];
            let destroyed = self.destroy(instance);
            debug_assert!(destroyed.is_ok(), "an instance of the subtree");
        }
        Ok(())
    }

    /// Lazy garbage collection (the entity manager's model: a manager outside the world does
    /// not hear of despawns, so it checks its own entities from time to time): looks at
    /// instances in a pseudo-random order and destroys those whose entity `alive` says is gone,
    /// until it has seen four live ones in a row. Cheap enough to call every frame; returns the
    /// number destroyed. [`TransformManager::gc_all`] sweeps every instance.
    pub fn gc(&mut self, mut alive: impl FnMut(Entity) -> bool) -> usize {
        let mut destroyed = 0;
        let mut alive_in_row = 0;
        while !self.is_empty() && alive_in_row < 4 {
            // xorshift32 over the manager's own state: deterministic, no shared RNG.
            let mut x = self.gc_state.max(1);
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            self.gc_state = x;
            let idx = x as usize % self.len();
            if alive(self.entity[idx]) {
                alive_in_row += 1;
            } else {
                alive_in_row = 0;
                let _ = self.destroy(Instance(idx as u32));
                destroyed += 1;
            }
        }
        destroyed
    }

    /// Destroys every instance whose entity `alive` says is gone (their children become roots,
    /// as with [`TransformManager::destroy`]); returns the number destroyed.
    pub fn gc_all(&mut self, mut alive: impl FnMut(Entity) -> bool) -> usize {
        let mut destroyed = 0;
        let mut idx = self.len();
        while idx > 0 {
            idx -= 1;
            // A destroy moves the last instance into `idx`; it was already looked at.
            if !alive(self.entity[idx]) {
                let _ = self.destroy(Instance(idx as u32));
                destroyed += 1;
            }
        }
        destroyed
    }

    /// Links `child` below `parent` (as its first child), unlinking it from any previous parent.
    ///
    /// The child keeps its local matrix, now relative to `parent`, and its subtree's world
    /// matrices follow (exact when next read). Linking a child to its current parent changes
    /// nothing. Fails with [`TransformError::SelfParent`] or [`TransformError::Cycle`] when
    /// `parent` is `child` or lies in its subtree.
    ///
    /// Cost: O(1) for a leaf child or a root parent (a chain or a level built in either
    /// direction), else O(min(depth of `parent`, size of `child`'s subtree)) for the cycle
    /// check; the subtree's matrices are updated at once only when it is small, else once
    /// when a matrix is next read.
    pub fn link(&mut self, child: Instance, parent: Instance) -> Result<(), TransformError> {
        let ci = self.check(child)?;
        let pi = self.check(parent)?;
        if ci == pi {
            return Err(TransformError::SelfParent { instance: child });
        }
        if self.parent[ci] == parent {
            return Ok(());
        }
        if self.in_subtree(pi, ci) {
            return Err(TransformError::Cycle {
                child,
                parent,
                child_entity: self.entity[ci],
                parent_entity: self.entity[pi],
            });
        }
        // The parent's world matrix is exact only if nothing is stale (or it was all brought
        // up to date): then a small subtree is updated at once.
        let exact = self.stale.is_empty() || self.worlds.exact.get().is_some();
        self.detach(ci);
        let old_first = self.first_child[pi];
        self.parent[ci] = parent;
        self.next_sibling[ci] = old_first;
        if old_first.is_valid() {
            self.prev_sibling[old_first.idx()] = child;
        }
        self.first_child[pi] = child;
        if exact {
            self.settle();
        }
        self.follow(ci, exact);
        Ok(())
    }

    /// Unlinks `child` from its parent, making it a root whose world matrix is its local matrix
    /// (its subtree follows, exact when next read). Unlinking a root changes nothing. O(1).
    pub fn unlink(&mut self, child: Instance) -> Result<(), TransformError> {
        let ci = self.check(child)?;
        if self.parent[ci].is_valid() {
            self.detach(ci);
            // A root depends on no other matrix: a small subtree is updated at once.
            self.follow(ci, true);
        }
        Ok(())
    }

    /// Sets the local matrix of `i` and immediately updates the world matrices of `i` and its
    /// whole subtree (iteratively, without allocating once the internal stack has grown).
    #[inline]
    pub fn set_local(&mut self, i: Instance, m: Mat4) -> Result<(), TransformError> {
        let idx = self.check(i)?;
        self.settle();
        self.local[idx] = m;
        self.refresh(idx);
        Ok(())
    }

    /// Sets many local matrices, then updates every affected subtree exactly once, and returns
    /// how many world matrices were recomputed.
    ///
    /// A node whose ancestor is also in the batch is updated only by that ancestor's pass, so a
    /// whole chain of n moving nodes costs O(n) instead of the O(n²) of n [`set_local`] calls.
    /// When an instance appears more than once its last matrix wins. All instances are checked
    /// before anything changes.
    ///
    /// [`set_local`]: TransformManager::set_local
    pub fn set_local_many(&mut self, batch: &[(Instance, Mat4)]) -> Result<usize, TransformError> {
        for &(i, _) in batch {
            self.check(i)?;
        }
        self.settle();
        for &(i, m) in batch {
            self.local[i.idx()] = m;
        }
        let links = links!(self);
        let roots = batch.iter().map(|&(i, _)| i);
        Ok(self.worlds.data.get_mut().update_many(links, roots))
    }

    /// The local matrix of `i` (relative to its parent).
    #[inline]
    pub fn local(&self, i: Instance) -> Result<Mat4, TransformError> {
        Ok(self.local[self.check(i)?])
    }

    /// The world matrix of `i`: `world(parent) * local(i)`, or `local(i)` for a root.
    ///
    /// Exact whenever it is read: the first read after links that left matrices behind
    /// brings them all up to date, in one pass over the subtrees they moved.
    #[inline]
    pub fn world(&self, i: Instance) -> Result<Mat4, TransformError> {
        Ok(self.data().world[self.check(i)?])
    }

    /// The entity owning `i`.
    #[inline]
    pub fn entity(&self, i: Instance) -> Result<Entity, TransformError> {
        Ok(self.entity[self.check(i)?])
    }

    /// The parent of `i`, or `None` for a root.
    #[inline]
    pub fn parent(&self, i: Instance) -> Result<Option<Instance>, TransformError> {
        Ok(valid(self.parent[self.check(i)?]))
    }

    /// The first child of `i`, or `None` for a leaf.
    #[inline]
    #[cfg(test)]
    pub(crate) fn first_child(&self, i: Instance) -> Result<Option<Instance>, TransformError> {
        Ok(valid(self.first_child[self.check(i)?]))
    }

    /// The next sibling of `i` in its parent's child list, or `None` for the last child or a root.
    #[inline]
    #[cfg(test)]
    pub(crate) fn next_sibling(&self, i: Instance) -> Result<Option<Instance>, TransformError> {
        Ok(valid(self.next_sibling[self.check(i)?]))
    }

    /// The previous sibling of `i`, or `None` for a first child or a root.
    #[inline]
    #[cfg(test)]
    pub(crate) fn prev_sibling(&self, i: Instance) -> Result<Option<Instance>, TransformError> {
        Ok(valid(self.prev_sibling[self.check(i)?]))
    }

    /// The children of `i`: its first child, then the next-sibling chain.
    pub fn children(&self, i: Instance) -> Result<Children<'_>, TransformError> {
        let idx = self.check(i)?;
        Ok(Children {
            next_sibling: &self.next_sibling,
            current: self.first_child[idx],
        })
    }

    /// The entities of all instances, indexed by instance.
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        &self.entity
    }

    /// The local matrices of all instances, indexed by instance.
    #[inline]
    #[cfg(test)]
    pub(crate) fn locals(&self) -> &[Mat4] {
        &self.local
    }

    /// The world matrices of all instances, indexed by instance (exact, as
    /// [`TransformManager::world`]'s).
    #[inline]
    pub fn worlds(&self) -> &[Mat4] {
        &self.data().world
    }

    /// Swaps the slots of `a` and `b`, keeping every link and the entity map right: afterwards
    /// handle `a` names what `b` named and vice versa. Uses Bitsquid's three moves through a spare
    /// slot at the end of the arrays (see the [module docs](self#swapping-instances)).
    pub fn swap(&mut self, a: Instance, b: Instance) -> Result<(), TransformError> {
        let ai = self.check(a)?;
        let bi = self.check(b)?;
        if ai != bi {
            self.settle();
            self.swap_slots(ai, bi);
        }
        Ok(())
    }

    /// Reorders the instances, by swaps, into depth-first order of each tree: every parent comes
    /// before its children, a first child right after its parent, and every subtree occupies a
    /// contiguous range, in the order the update walk of [`TransformManager::set_local`] visits it
    /// (so that walk writes memory front to back). Trees keep the relative order of their roots.
    /// Links, matrices and the entity map stay right; handles move. Returns the number of swaps.
    pub fn sort_parents_first(&mut self) -> usize {
        self.settle();
        let n = self.len();
        let mut order: Vec<u32> = Vec::with_capacity(n);
        for root in 0..n {
            if self.parent[root].is_valid() {
                continue;
            }
            // Pre-order walk along the links, no stack needed: down to the first child, else on
            // to the next sibling, else up until an ancestor below `root` has a next sibling.
            let mut node = root;
            'walk: loop {
                order.push(node as u32);
                let first = self.first_child[node];
                if first.is_valid() {
                    node = first.idx();
                    continue;
                }
                loop {
                    if node == root {
                        break 'walk;
                    }
                    let next = self.next_sibling[node];
                    if next.is_valid() {
                        node = next.idx();
                        break;
                    }
                    node = self.parent[node].idx();
                }
            }
        }
        debug_assert_eq!(order.len(), n, "every instance lies in exactly one tree");
        // pos_of[original index] = current slot; at[slot] = original index there.
        let mut pos_of: Vec<u32> = (0..n as u32).collect();
        let mut at = pos_of.clone();
        let mut swaps = 0;
        for (slot, &orig) in order.iter().enumerate() {
            let src = pos_of[orig as usize] as usize;
            if src != slot {
                let displaced = at[slot];
                self.swap_slots(slot, src);
                at[slot] = orig;
                at[src] = displaced;
                pos_of[orig as usize] = slot as u32;
                pos_of[displaced as usize] = src as u32;
                swaps += 1;
            }
        }
        swaps
    }

    /// Checks that `i` is in range and returns its index.
    #[inline]
    fn check(&self, i: Instance) -> Result<usize, TransformError> {
        let idx = i.idx();
        if idx < self.len() {
            Ok(idx)
        } else {
            Err(TransformError::InvalidInstance {
                instance: i,
                len: self.len(),
            })
        }
    }

    /// Does `node` lie in the subtree of `root` (below it)? Walks up from `node` and down
    /// `root`'s subtree in turns, one step each: the walk up answers (it meets `root`, or ends
    /// at a root), and the walk down ends it early with "no" once the subtree is exhausted. If
    /// `node` is in the subtree, the walk up meets `root` no later than the walk down could
    /// meet `node` (a node's depth below `root` is at most its pre-order position). The cost
    /// is O(min(depth of `node`, size of the subtree)): O(1) when `root` is a leaf or `node`
    /// a root.
    fn in_subtree(&self, node: usize, root: usize) -> bool {
        let mut up = self.parent[node];
        let mut down = valid(self.first_child[root]).map(Instance::idx);
        loop {
            match up {
                a if !a.is_valid() => return false,
                a if a.idx() == root => return true,
                a => up = self.parent[a.idx()],
            }
            let Some(d) = down else {
                return false;
            };
            down = self.next_in_subtree(d, root);
        }
    }

    /// The node after `d` in a pre-order walk of `root`'s subtree, or `None` at its end.
    #[inline]
    fn next_in_subtree(&self, mut d: usize, root: usize) -> Option<usize> {
        if let Some(first) = valid(self.first_child[d]) {
            return Some(first.idx());
        }
        while d != root {
            if let Some(next) = valid(self.next_sibling[d]) {
                return Some(next.idx());
            }
            d = self.parent[d].idx();
        }
        None
    }

    /// The subtree of `root` was moved (linked or unlinked): its world matrices are updated at
    /// once when the subtree is small and `exact` (every matrix it depends on is exact),
    /// else it is marked stale.
    #[inline]
    fn follow(&mut self, root: usize, exact: bool) {
        if exact && !self.first_child[root].is_valid() {
            // A leaf (a chain built from the root down, a level spawned parents first): one
            // product.
            let p = self.parent[root];
            let world = &mut self.worlds.data.get_mut().world;
            world[root] = if p.is_valid() {
                world[p.idx()] * self.local[root]
            } else {
                self.local[root]
            };
            return;
        }
        if exact {
            let links = links!(self);
            if self
                .worlds
                .data
                .get_mut()
                .refresh_within(links, root, EAGER_NODES)
                .is_some()
            {
                return;
            }
        }
        // Whatever the cell says now, a new stale subtree makes it behind again.
        self.worlds.exact.take();
        self.stale.push(Instance(root as u32));
    }

    /// The world matrices, up to date (see [`Worlds`]).
    #[inline]
    fn data(&self) -> &WorldData {
        if !self.stale.is_empty() {
            self.worlds.exact.get_or_init(|| {
                // SAFETY: this initialisation is the only writer through `&self` and runs
                // before any shared reference to the cell's contents is made while anything
                // is stale (see `Worlds`); nothing else refers to them now.
                let data = unsafe { &mut *self.worlds.data.get() };
                data.update_many(self.links(), self.stale.iter().copied());
            });
        }
        // SAFETY: the initialisation above, if any, has completed, and no other can start
        // while `&self` is borrowed (see `Worlds`); writes through `&mut self` end before.
        unsafe { &*self.worlds.data.get() }
    }

    /// Brings every world matrix up to date and empties the stale list: before anything that
    /// reads matrices through `&mut self` or moves slots.
    #[inline]
    fn settle(&mut self) {
        if self.stale.is_empty() {
            return;
        }
        if self.worlds.exact.take().is_none() {
            let links = links!(self);
            let stale = self.stale.iter().copied();
            self.worlds.data.get_mut().update_many(links, stale);
        }
        self.stale.clear();
    }

    /// The links and locals, for an update.
    #[inline]
    fn links(&self) -> Links<'_> {
        links!(self)
    }

    /// Recomputes the world matrix of `root` from its parent and those of its whole subtree
    /// (every matrix must be exact but the subtree's). Returns the number of nodes updated.
    #[inline]
    fn refresh(&mut self, root: usize) -> usize {
        debug_assert!(self.stale.is_empty());
        let links = links!(self);
        self.worlds.data.get_mut().refresh(links, root)
    }

    /// Removes `idx` from its parent's child list; it becomes a root (world not updated).
    #[inline]
    fn detach(&mut self, idx: usize) {
        let p = self.parent[idx];
        if !p.is_valid() {
            return;
        }
        let prev = self.prev_sibling[idx];
        let next = self.next_sibling[idx];
        if prev.is_valid() {
            self.next_sibling[prev.idx()] = next;
        } else {
            self.first_child[p.idx()] = next;
        }
        if next.is_valid() {
            self.prev_sibling[next.idx()] = prev;
        }
        self.parent[idx] = Instance::NIL;
        self.prev_sibling[idx] = Instance::NIL;
        self.next_sibling[idx] = Instance::NIL;
    }

    /// Bitsquid's three-step swap of two distinct, in-range slots via the spare slot `[size]`
    /// (nothing stale).
    fn swap_slots(&mut self, a: usize, b: usize) {
        let size = self.len();
        // [size] <- [A]; afterwards nothing refers to A.
        self.entity.push(self.entity[a]);
        self.local.push(self.local[a]);
        let world = &mut self.worlds.data.get_mut().world;
        world.push(world[a]);
        self.parent.push(self.parent[a]);
        self.first_child.push(self.first_child[a]);
        self.next_sibling.push(self.next_sibling[a]);
        self.prev_sibling.push(self.prev_sibling[a]);
        self.redirect(a, size);
        // [A] <- [B]; afterwards nothing refers to B.
        self.move_slot(b, a);
        // [B] <- [size]; then drop the spare slot.
        self.move_slot(size, b);
        self.pop_slot();
    }

    /// Copies slot `from` into slot `to` and redirects every reference to `from` to `to`.
    /// Nothing may refer to `to` beforehand (and nothing is stale).
    fn move_slot(&mut self, from: usize, to: usize) {
        self.entity[to] = self.entity[from];
        self.local[to] = self.local[from];
        let world = &mut self.worlds.data.get_mut().world;
        world[to] = world[from];
        self.parent[to] = self.parent[from];
        self.first_child[to] = self.first_child[from];
        self.next_sibling[to] = self.next_sibling[from];
        self.prev_sibling[to] = self.prev_sibling[from];
        self.redirect(from, to);
    }

    /// Rewrites the links of `to`'s neighbours (read from slot `to`) and the entity map so that
    /// everything that referred to `from` refers to `to`.
    fn redirect(&mut self, from: usize, to: usize) {
        let to_inst = Instance(to as u32);
        let p = self.parent[to];
        if p.is_valid() && self.first_child[p.idx()].idx() == from {
            self.first_child[p.idx()] = to_inst;
        }
        let prev = self.prev_sibling[to];
        if prev.is_valid() {
            self.next_sibling[prev.idx()] = to_inst;
        }
        let next = self.next_sibling[to];
        if next.is_valid() {
            self.prev_sibling[next.idx()] = to_inst;
        }
        let mut c = self.first_child[to];
        while c.is_valid() {
            self.parent[c.idx()] = to_inst;
            c = self.next_sibling[c.idx()];
        }
        if let Some(slot) = self.map.get_mut(&self.entity[to]) {
            *slot = to_inst;
        }
    }

    /// Drops the last slot of every array.
    fn pop_slot(&mut self) {
        self.entity.pop();
        self.local.pop();
        self.worlds.data.get_mut().world.pop();
        self.parent.pop();
        self.first_child.pop();
        self.next_sibling.pop();
        self.prev_sibling.pop();
    }
}

impl WorldData {
    /// Recomputes the world matrix of `root` from its parent and those of its whole subtree,
    /// in pre-order with the reused explicit stack. Returns the number of nodes updated.
    #[inline]
    fn refresh(&mut self, links: Links<'_>, root: usize) -> usize {
        self.walk::<false>(links, root, 0).expect("no limit")
    }

    /// [`WorldData::refresh`] that stops after `limit` nodes: `None` when the subtree is
    /// larger (its matrices are then partly updated).
    fn refresh_within(&mut self, links: Links<'_>, root: usize, limit: usize) -> Option<usize> {
        self.walk::<true>(links, root, limit)
    }

    /// The walk of [`WorldData::refresh`], stopping after `limit` nodes if `LIMITED` (a
    /// constant, so the unlimited walk has no test per node).
    #[inline(always)]
    fn walk<const LIMITED: bool>(
        &mut self,
        links: Links<'_>,
        root: usize,
        limit: usize,
    ) -> Option<usize> {
        let p = links.parent[root];
        self.world[root] = if p.is_valid() {
            self.world[p.idx()] * links.local[root]
        } else {
            links.local[root]
        };
        let first = links.first_child[root];
        if !first.is_valid() {
            return Some(1);
        }
        // The subtree walk below a node whose own world matrix is current. Each node's
        // parent is visited before it, so `world[parent]` is always current.
        let mut updated = 1;
        self.stack.clear();
        self.stack.push(first);
        while let Some(c) = self.stack.pop() {
            if LIMITED && updated >= limit {
                return None;
            }
            let ci = c.idx();
            self.world[ci] = self.world[links.parent[ci].idx()] * links.local[ci];
            updated += 1;
            let next = links.next_sibling[ci];
            if next.is_valid() {
                self.stack.push(next);
            }
            let child = links.first_child[ci];
            if child.is_valid() {
                self.stack.push(child);
            }
        }
        Some(updated)
    }

    /// Recomputes the world matrices of the subtrees of `roots` (whose other matrices are
    /// exact), each node once, and returns how many were recomputed. A root whose ancestor is
    /// also among `roots` is updated by that ancestor's pass; the ancestor walks that find it
    /// out are memoized, so they cost O(nodes visited) in all.
    fn update_many(
        &mut self,
        links: Links<'_>,
        roots: impl Iterator<Item = Instance> + Clone,
    ) -> usize {
        let mut roots = roots.peekable();
        let Some(first) = roots.next() else {
            return 0;
        };
        if roots.peek().is_none() {
            return self.refresh(links, first.idx());
        }
        let roots = std::iter::once(first).chain(roots);
        let n = links.parent.len();
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        if self.epoch >= MARK_EPOCH_MAX {
            self.marks.fill(0);
            self.epoch = 0;
        }
        self.epoch += 1;
        let tag = self.epoch << MARK_EPOCH_SHIFT;
        for i in roots.clone() {
            self.marks[i.idx()] = tag | MARK_BATCH;
        }
        let mut updated = 0;
        let mut path = std::mem::take(&mut self.stack);
        for i in roots {
            let idx = i.idx();
            if self.marks[idx] != tag | MARK_BATCH {
                continue; // resolved already (a duplicate)
            }
            // Is any proper ancestor a root too? Walk up until the answer is known, memoizing
            // it for every node passed, so the walks of all roots cost O(nodes visited).
            path.clear();
            let mut a = links.parent[idx];
            let covered = loop {
                if !a.is_valid() {
                    break false;
                }
                let mark = self.marks[a.idx()];
                if mark >> MARK_EPOCH_SHIFT == self.epoch {
                    break mark & MARK_STATE != MARK_CLEAN;
                }
                path.push(a);
                a = links.parent[a.idx()];
            };
            let state = if covered { MARK_DIRTY } else { MARK_CLEAN };
            for a in &path {
                self.marks[a.idx()] = tag | state;
            }
            self.marks[idx] = tag | MARK_DIRTY;
            if !covered {
                self.stack = std::mem::take(&mut path);
                updated += self.refresh(links, idx);
                path = std::mem::take(&mut self.stack);
            }
        }
        self.stack = path;
        updated
    }
}

#[inline]
fn valid(i: Instance) -> Option<Instance> {
    i.is_valid().then_some(i)
}

/// Iterator over the children of an instance, from [`TransformManager::children`].
#[derive(Clone)]
pub struct Children<'a> {
    next_sibling: &'a [Instance],
    current: Instance,
}

impl fmt::Debug for Children<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("next", &self.current)
            .finish()
    }
}

impl Iterator for Children<'_> {
    type Item = Instance;

    #[inline]
    fn next(&mut self) -> Option<Instance> {
        let c = valid(self.current)?;
        self.current = self.next_sibling[c.idx()];
        Some(c)
    }
}

impl FusedIterator for Children<'_> {}

/// The world-owned hierarchy in world states (`crate::state`).
impl TransformManager {
    /// Makes `into` a copy of this manager, reusing its allocations (the instances, their
    /// links and matrices, the entity map, and what `set_local_many` and `gc` keep between
    /// calls; not the scratch of a call).
    pub(crate) fn save_into(&self, into: &mut TransformManager) {
        into.entity.clone_from(&self.entity);
        into.local.clone_from(&self.local);
        // The copy's matrices are all exact: the stale subtrees are brought up to date first.
        let data = self.data();
        let copy = into.worlds.data.get_mut();
        copy.world.clone_from(&data.world);
        copy.marks.clone_from(&data.marks);
        copy.epoch = data.epoch;
        into.worlds.exact.take();
        into.stale.clear();
        into.parent.clone_from(&self.parent);
        into.first_child.clone_from(&self.first_child);
        into.next_sibling.clone_from(&self.next_sibling);
        into.prev_sibling.clone_from(&self.prev_sibling);
        into.map.clone_from(&self.map);
        into.gc_state = self.gc_state;
    }

    /// Feeds the hierarchy into a checksum: every instance's entity, matrices and links, in
    /// instance order.
    pub(crate) fn hash_into(&self, h: &mut crate::state::hash::StateHasher) {
        h.write_word(self.len() as u64);
        for e in &self.entity {
            h.write_word(u64::from(e.to_bits()));
        }
        h.write_bytes(bytemuck::cast_slice(&self.local));
        h.write_bytes(bytemuck::cast_slice(self.worlds()));
        for links in [
            &self.parent,
            &self.first_child,
            &self.next_sibling,
            &self.prev_sibling,
        ] {
            for i in links {
                h.write_bytes(&i.0.to_le_bytes());
            }
        }
    }
}

/// The model-based test against a naive hierarchy.
#[cfg(test)]
mod oracle_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn e(n: u32) -> Entity {
        Entity::new(n, 0)
    }

    fn t(x: f32, y: f32, z: f32) -> Mat4 {
        Mat4::from_translation(Vec3::new(x, y, z))
    }

    fn origin(m: Mat4) -> Vec3 {
        m.transform_point3(Vec3::ZERO)
    }

    /// Checks every structural invariant and that world matrices match a from-scratch
    /// recomputation; panics with a description otherwise.
    fn assert_integrity(tm: &TransformManager) {
        let n = tm.len();
        for v in [
            tm.local.len(),
            tm.worlds().len(),
            tm.parent.len(),
            tm.first_child.len(),
            tm.next_sibling.len(),
            tm.prev_sibling.len(),
        ] {
            assert_eq!(v, n, "array lengths differ");
        }
        assert_eq!(tm.map.len(), n, "entity map size");
        let mut listed = vec![0usize; n];
        for i in 0..n {
            assert_eq!(tm.map[&tm.entity[i]], Instance(i as u32), "map points back");
            let mut prev = Instance::NIL;
            let mut c = tm.first_child[i];
            let mut count = 0;
            while c.is_valid() {
                assert!(c.idx() < n);
                assert_eq!(tm.parent[c.idx()], Instance(i as u32), "child's parent");
                assert_eq!(tm.prev_sibling[c.idx()], prev, "prev_sibling of {c:?}");
                listed[c.idx()] += 1;
                prev = c;
                c = tm.next_sibling[c.idx()];
                count += 1;
                assert!(count <= n, "sibling list loops");
            }
            let p = tm.parent[i];
            if p.is_valid() {
                assert!(p.idx() < n);
            } else {
                assert!(!tm.prev_sibling[i].is_valid() && !tm.next_sibling[i].is_valid());
            }
        }
        // Worlds from scratch: walk up to the nearest node already computed (memoized, so a deep
        // chain stays linear), then multiply back down.
        let mut fresh: Vec<Option<Mat4>> = vec![None; n];
        for i in 0..n {
            let mut chain = vec![i];
            let mut a = tm.parent[i];
            while a.is_valid() && fresh[a.idx()].is_none() {
                chain.push(a.idx());
                assert!(chain.len() <= n, "cycle");
                a = tm.parent[a.idx()];
            }
            let mut acc = if a.is_valid() {
                fresh[a.idx()].unwrap()
            } else {
                Mat4::IDENTITY
            };
            for &k in chain.iter().rev() {
                acc *= tm.local[k];
                fresh[k] = Some(acc);
            }
            let w = fresh[i].unwrap();
            assert!(
                w.abs_diff_eq(tm.worlds()[i], 1e-3),
                "world of {i}: {w} vs {}",
                tm.worlds()[i]
            );
        }
        for (i, (&count, p)) in listed.iter().zip(&tm.parent).enumerate() {
            let expected = usize::from(p.is_valid());
            assert_eq!(count, expected, "instance {i} listed by its parent once");
        }
    }

    /// A manager holding the tree
    /// ```text
    /// 0 ─┬─ 1 ─┬─ 3
    ///    │     └─ 4 ── 6
    ///    └─ 2 ── 5
    /// 7 (root)
    /// ```
    fn sample() -> TransformManager {
        let mut tm = TransformManager::new();
        for n in 0..8 {
            tm.create(e(n), t(n as f32, 1.0, 0.0)).unwrap();
        }
        let link = |tm: &mut TransformManager, c: u32, p: u32| {
            tm.link(Instance(c), Instance(p)).unwrap();
        };
        link(&mut tm, 2, 0);
        link(&mut tm, 1, 0);
        link(&mut tm, 4, 1);
        link(&mut tm, 3, 1);
        link(&mut tm, 5, 2);
        link(&mut tm, 6, 4);
        assert_integrity(&tm);
        tm
    }

    fn worlds_by_entity(tm: &TransformManager) -> Vec<(Entity, Mat4, Option<Entity>)> {
        let mut v: Vec<_> = (0..tm.len())
            .map(|i| {
                let p = tm.parent[i];
                (
                    tm.entity[i],
                    tm.worlds()[i],
                    p.is_valid().then(|| tm.entity[p.idx()]),
                )
            })
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }

    #[test]
    fn transform_create_lookup_and_duplicate() {
        let mut tm = TransformManager::new();
        let a = tm.create(e(1), t(1.0, 2.0, 3.0)).unwrap();
        assert_eq!(tm.lookup(e(1)), Some(a));
        assert_eq!(tm.lookup(e(2)), None);
        assert_eq!(tm.world(a).unwrap(), t(1.0, 2.0, 3.0));
        assert_eq!(tm.parent(a).unwrap(), None);
        assert_eq!(tm.entity(a).unwrap(), e(1));
        let err = tm.create(e(1), Mat4::IDENTITY).unwrap_err();
        assert_eq!(
            err,
            TransformError::AlreadyPresent {
                entity: e(1),
                instance: a
            }
        );
        assert!(err.to_string().contains("already has a transform"));
        assert_eq!(tm.len(), 1);
        assert_eq!(tm.local(a).unwrap(), t(1.0, 2.0, 3.0));
    }

    #[test]
    fn reserved_room_covers_the_instances_and_the_spare_slot() {
        assert_eq!(TransformManager::new().capacity(), 0);
        let mut tm = TransformManager::with_capacity(100);
        assert!(tm.capacity() >= 100, "{}", tm.capacity());
        for n in 0..100 {
            tm.create(e(n), Mat4::IDENTITY).unwrap();
        }
        assert!(tm.capacity() >= 100);
        tm.reserve(50);
        assert!(tm.capacity() >= 150, "{}", tm.capacity());
        // Every array has the spare slot: a swap through it does not exceed the capacity.
        assert!(tm.entity.capacity() > 150 && tm.prev_sibling.capacity() > 150);
    }

    #[test]
    fn transform_same_entity_in_two_managers() {
        let mut game = TransformManager::new();
        let mut inventory = TransformManager::new();
        game.create(e(9), Mat4::IDENTITY).unwrap();
        let g = game.create(e(1), t(100.0, 0.0, 0.0)).unwrap();
        let i = inventory.create(e(1), t(0.0, 5.0, 0.0)).unwrap();
        assert_eq!(origin(game.world(g).unwrap()), Vec3::new(100.0, 0.0, 0.0));
        assert_eq!(
            origin(inventory.world(i).unwrap()),
            Vec3::new(0.0, 5.0, 0.0)
        );
        assert_ne!(g, i);
        inventory.set_local(i, t(0.0, 6.0, 0.0)).unwrap();
        assert_eq!(origin(game.world(g).unwrap()), Vec3::new(100.0, 0.0, 0.0));
        game.destroy(g).unwrap();
        assert_eq!(game.lookup(e(1)), None);
        assert_eq!(inventory.lookup(e(1)), Some(i));
    }

    #[test]
    fn transform_world_is_parent_times_local() {
        let mut tm = TransformManager::new();
        let rot = Mat4::from_quat(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2));
        let p = tm.create(e(0), t(10.0, 0.0, 0.0) * rot).unwrap();
        let c = tm.create(e(1), t(1.0, 0.0, 0.0)).unwrap();
        tm.link(c, p).unwrap();
        // The child's offset (1,0,0) is rotated by the parent into (0,1,0), then translated.
        let o = origin(tm.world(c).unwrap());
        assert!(o.abs_diff_eq(Vec3::new(10.0, 1.0, 0.0), 1e-5), "{o}");
        // Locals are kept on link and unlink.
        assert_eq!(tm.local(c).unwrap(), t(1.0, 0.0, 0.0));
        tm.unlink(c).unwrap();
        assert_eq!(tm.world(c).unwrap(), t(1.0, 0.0, 0.0));
        tm.unlink(c).unwrap();
        assert_eq!(tm.parent(c).unwrap(), None);
        assert_integrity(&tm);
    }

    #[test]
    fn transform_set_local_updates_subtree_immediately() {
        let mut tm = sample();
        tm.set_local(Instance(0), t(100.0, 0.0, 0.0)).unwrap();
        // 6 hangs below 4 below 1 below 0: x = 100 + 1 + 4 + 6, y = 0 + 1 + 1 + 1.
        assert_eq!(
            origin(tm.world(Instance(6)).unwrap()),
            Vec3::new(111.0, 3.0, 0.0)
        );
        assert_eq!(
            origin(tm.world(Instance(7)).unwrap()),
            Vec3::new(7.0, 1.0, 0.0)
        );
        assert_integrity(&tm);
        tm.set_local(Instance(4), Mat4::IDENTITY).unwrap();
        assert_eq!(
            origin(tm.world(Instance(6)).unwrap()),
            Vec3::new(107.0, 2.0, 0.0)
        );
        assert_integrity(&tm);
    }

    #[test]
    fn transform_children_and_sibling_links() {
        let tm = sample();
        let kids: Vec<_> = tm.children(Instance(0)).unwrap().collect();
        assert_eq!(kids, vec![Instance(1), Instance(2)]);
        let kids: Vec<_> = tm.children(Instance(1)).unwrap().collect();
        assert_eq!(kids, vec![Instance(3), Instance(4)]);
        assert_eq!(tm.children(Instance(7)).unwrap().count(), 0);
        assert_eq!(tm.first_child(Instance(1)).unwrap(), Some(Instance(3)));
        assert_eq!(tm.next_sibling(Instance(3)).unwrap(), Some(Instance(4)));
        assert_eq!(tm.prev_sibling(Instance(4)).unwrap(), Some(Instance(3)));
        assert_eq!(tm.prev_sibling(Instance(3)).unwrap(), None);
        assert_eq!(tm.parent(Instance(6)).unwrap(), Some(Instance(4)));
    }

    #[test]
    fn transform_bad_input_is_an_error_and_changes_nothing() {
        let mut tm = sample();
        let before = worlds_by_entity(&tm);
        let oob = Instance(8);
        let invalid = TransformError::InvalidInstance {
            instance: oob,
            len: 8,
        };
        assert_eq!(tm.world(oob), Err(invalid.clone()));
        assert_eq!(tm.local(Instance::NIL).unwrap_err().to_string(), {
            let s = TransformError::InvalidInstance {
                instance: Instance::NIL,
                len: 8,
            }
            .to_string();
            assert!(s.contains("#nil") && s.contains("out of range"), "{s}");
            s
        });
        assert_eq!(tm.set_local(oob, Mat4::IDENTITY), Err(invalid.clone()));
        assert_eq!(tm.link(oob, Instance(0)), Err(invalid.clone()));
        assert_eq!(tm.link(Instance(0), oob), Err(invalid.clone()));
        assert_eq!(tm.unlink(oob), Err(invalid.clone()));
        assert_eq!(tm.destroy(oob), Err(invalid.clone()));
        assert_eq!(tm.swap(Instance(0), oob), Err(invalid.clone()));
        assert_eq!(tm.entity(oob), Err(invalid.clone()));
        assert_eq!(tm.parent(oob), Err(invalid.clone()));
        assert!(tm.children(oob).is_err());
        // A batch with one bad instance changes nothing, not even the good entries.
        assert_eq!(
            tm.set_local_many(&[(Instance(0), t(9.0, 9.0, 9.0)), (oob, Mat4::IDENTITY)]),
            Err(invalid)
        );
        let err = tm.link(Instance(3), Instance(3)).unwrap_err();
        assert_eq!(
            err,
            TransformError::SelfParent {
                instance: Instance(3)
            }
        );
        assert!(err.to_string().contains("itself"));
        for (child, parent) in [(0, 6), (0, 1), (1, 6), (4, 6), (2, 5)] {
            let err = tm.link(Instance(child), Instance(parent)).unwrap_err();
            assert_eq!(
                err,
                TransformError::Cycle {
                    child: Instance(child),
                    parent: Instance(parent),
                    child_entity: e(child),
                    parent_entity: e(parent),
                }
            );
            assert!(err.to_string().contains("cycle"));
        }
        assert_eq!(worlds_by_entity(&tm), before);
        assert_eq!(tm.local(Instance(0)).unwrap(), t(0.0, 1.0, 0.0));
        assert_integrity(&tm);
    }

    #[test]
    fn transform_relink_moves_subtree() {
        let mut tm = sample();
        tm.link(Instance(1), Instance(7)).unwrap();
        assert_eq!(tm.parent(Instance(1)).unwrap(), Some(Instance(7)));
        assert_eq!(
            tm.children(Instance(0)).unwrap().collect::<Vec<_>>(),
            vec![Instance(2)]
        );
        // 6: 7 + 1 + 4 + 6 = 18 in x.
        assert_eq!(
            origin(tm.world(Instance(6)).unwrap()),
            Vec3::new(18.0, 4.0, 0.0)
        );
        // Re-linking to the current parent keeps the order.
        tm.link(Instance(3), Instance(1)).unwrap();
        assert_eq!(
            tm.children(Instance(1)).unwrap().collect::<Vec<_>>(),
            vec![Instance(3), Instance(4)]
        );
        // Linking a middle sibling elsewhere repairs both neighbours.
        tm.link(Instance(5), Instance(0)).unwrap();
        tm.link(Instance(1), Instance(0)).unwrap();
        assert_eq!(
            tm.children(Instance(0)).unwrap().collect::<Vec<_>>(),
            vec![Instance(1), Instance(5), Instance(2)]
        );
        tm.link(Instance(5), Instance(7)).unwrap();
        assert_eq!(
            tm.children(Instance(0)).unwrap().collect::<Vec<_>>(),
            vec![Instance(1), Instance(2)]
        );
        assert_integrity(&tm);
    }

    #[test]
    fn transform_every_swap_keeps_links_and_values() {
        let base = sample();
        let expected = worlds_by_entity(&base);
        for a in 0..8u32 {
            for b in 0..8u32 {
                let mut tm = base.clone();
                tm.swap(Instance(a), Instance(b)).unwrap();
                assert_integrity(&tm);
                assert_eq!(worlds_by_entity(&tm), expected, "swap({a}, {b})");
                assert_eq!(tm.entity(Instance(a)).unwrap(), e(b));
                assert_eq!(tm.entity(Instance(b)).unwrap(), e(a));
                assert_eq!(tm.lookup(e(a)), Some(Instance(b)));
                // Swapping back restores the exact arrays.
                tm.swap(Instance(a), Instance(b)).unwrap();
                assert_eq!(tm.entity, base.entity);
                assert_eq!(tm.parent, base.parent);
                assert_eq!(tm.first_child, base.first_child);
                assert_eq!(tm.next_sibling, base.next_sibling);
                assert_eq!(tm.prev_sibling, base.prev_sibling);
            }
        }
    }

    #[test]
    fn transform_destroy_orphans_children_and_swap_erases() {
        for victim in 0..8u32 {
            let mut tm = sample();
            let kids: Vec<Entity> = tm
                .children(Instance(victim))
                .unwrap()
                .map(|c| tm.entity[c.idx()])
                .collect();
            assert_eq!(tm.destroy(Instance(victim)).unwrap(), e(victim));
            assert_eq!(tm.len(), 7);
            assert_eq!(tm.lookup(e(victim)), None);
            assert_integrity(&tm);
            for k in kids {
                let i = tm.lookup(k).unwrap();
                assert_eq!(tm.parent(i).unwrap(), None);
                assert_eq!(tm.world(i).unwrap(), tm.local(i).unwrap());
            }
            if victim != 7 {
                // The last instance moved into the hole.
                assert_eq!(tm.lookup(e(7)), Some(Instance(victim)));
            }
        }
        let mut tm = sample();
        while !tm.is_empty() {
            tm.destroy(Instance(0)).unwrap();
            assert_integrity(&tm);
        }
    }

    #[test]
    fn transform_set_local_many_updates_each_subtree_once() {
        let mut tm = sample();
        let mut reference = sample();
        let batch = [
            (Instance(4), t(0.0, 0.0, 4.0)),
            (Instance(0), t(0.0, 0.0, 1.0)),
            (Instance(6), t(0.0, 0.0, 6.0)),
            (Instance(7), t(0.0, 0.0, 7.0)),
            (Instance(4), t(0.0, 0.0, 44.0)),
        ];
        // 0's subtree (7 nodes: 0..=6) and 7: 8 updates, though 4 and 6 are also in the batch
        // and 4 appears twice.
        assert_eq!(tm.set_local_many(&batch).unwrap(), 8);
        for (i, m) in batch {
            reference.set_local(i, m).unwrap();
        }
        assert_eq!(tm.local(Instance(4)).unwrap(), t(0.0, 0.0, 44.0));
        assert_eq!(tm.worlds(), reference.worlds());
        assert_integrity(&tm);
        assert_eq!(
            tm.set_local_many(&[(Instance(5), Mat4::IDENTITY), (Instance(3), Mat4::IDENTITY)])
                .unwrap(),
            2
        );
        assert_eq!(tm.set_local_many(&[]).unwrap(), 0);
        assert_eq!(
            tm.set_local_many(&[(Instance(1), Mat4::IDENTITY)]).unwrap(),
            4
        );
        assert_integrity(&tm);
    }

    #[test]
    fn transform_set_local_many_epoch_wrap() {
        let mut tm = sample();
        tm.worlds.data.get_mut().epoch = MARK_EPOCH_MAX - 1;
        let batch = [
            (Instance(6), t(1.0, 0.0, 0.0)),
            (Instance(1), Mat4::IDENTITY),
        ];
        for _ in 0..3 {
            assert_eq!(tm.set_local_many(&batch).unwrap(), 4);
        }
        assert!(tm.worlds.data.get_mut().epoch < 4);
        assert_integrity(&tm);
    }

    #[test]
    fn transform_sort_parents_first_gives_depth_first_order() {
        let mut tm = sample();
        // Scramble: put children before parents.
        tm.swap(Instance(0), Instance(6)).unwrap();
        tm.swap(Instance(1), Instance(5)).unwrap();
        tm.swap(Instance(2), Instance(7)).unwrap();
        let expected = worlds_by_entity(&tm);
        let swaps = tm.sort_parents_first();
        assert!(swaps > 0);
        assert_integrity(&tm);
        assert_eq!(worlds_by_entity(&tm), expected);
        for i in 0..tm.len() {
            if let Some(p) = tm.parent(Instance(i as u32)).unwrap() {
                assert!(p.index() < i as u32);
            }
            if let Some(c) = tm.first_child(Instance(i as u32)).unwrap() {
                assert_eq!(c.index(), i as u32 + 1);
            }
        }
        // Already sorted: no swaps, and the order is a fixed point.
        let entities = tm.entities().to_vec();
        assert_eq!(tm.sort_parents_first(), 0);
        assert_eq!(tm.entities(), &entities[..]);
    }

    #[test]
    fn transform_deep_chain_has_no_recursion() {
        const DEPTH: u32 = if cfg!(miri) { 40 } else { 10_000 };
        let mut tm = TransformManager::with_capacity(DEPTH as usize);
        // Built leaf-first, so every child sits before its parent.
        for n in 0..DEPTH {
            tm.create(e(n), t(1.0, 0.0, 0.0)).unwrap();
        }
        for n in 0..DEPTH - 1 {
            tm.link(Instance(n), Instance(n + 1)).unwrap();
        }
        let leaf = Instance(0);
        let root = Instance(DEPTH - 1);
        assert_eq!(
            origin(tm.world(leaf).unwrap()),
            Vec3::new(DEPTH as f32, 0.0, 0.0)
        );
        tm.set_local(root, t(5.0, 0.0, 0.0)).unwrap();
        assert_eq!(
            origin(tm.world(leaf).unwrap()),
            Vec3::new(DEPTH as f32 + 4.0, 0.0, 0.0)
        );
        assert_eq!(
            tm.link(root, leaf),
            Err(TransformError::Cycle {
                child: root,
                parent: leaf,
                child_entity: tm.entity(root).unwrap(),
                parent_entity: tm.entity(leaf).unwrap(),
            })
        );
        let batch: Vec<_> = (0..DEPTH)
            .map(|n| (Instance(n), t(2.0, 0.0, 0.0)))
            .collect();
        assert_eq!(tm.set_local_many(&batch).unwrap(), DEPTH as usize);
        assert_eq!(
            origin(tm.world(leaf).unwrap()),
            Vec3::new(2.0 * DEPTH as f32, 0.0, 0.0)
        );
        assert_eq!(tm.sort_parents_first(), DEPTH as usize / 2);
        assert_eq!(tm.entity(Instance(0)).unwrap(), e(DEPTH - 1));
        let leaf = tm.lookup(e(0)).unwrap();
        assert_eq!(leaf, Instance(DEPTH - 1));
        assert_eq!(
            origin(tm.world(leaf).unwrap()),
            Vec3::new(2.0 * DEPTH as f32, 0.0, 0.0)
        );
        tm.destroy(Instance(DEPTH / 2)).unwrap();
        assert_eq!(tm.len(), DEPTH as usize - 1);
        assert_integrity(&tm);
        drop(tm);
    }

    /// A chain linked from the leaf up whose locals turn and step: its matrices are left
    /// behind by the links and exact when read.
    fn leaf_up_chain(depth: u32) -> TransformManager {
        let mut tm = TransformManager::new();
        for n in 0..depth {
            let turn = Mat4::from_quat(Quat::from_rotation_z(0.001 * (n % 11) as f32));
            tm.create(e(n), t(1.0, 0.5, 0.0) * turn).unwrap();
        }
        for n in (1..depth).rev() {
            tm.link(Instance(n), Instance(n - 1)).unwrap();
        }
        tm
    }

    #[test]
    fn links_from_the_leaf_up_defer_the_update_and_any_read_sees_exact_matrices() {
        let depth = if cfg!(miri) {
            3 * EAGER_NODES as u32
        } else {
            5_000
        };
        let tm = leaf_up_chain(depth);
        assert!(
            !tm.stale.is_empty(),
            "the long subtrees' updates were deferred"
        );
        assert!(tm.worlds.exact.get().is_none());
        // Two threads read at once: one brings the matrices up to date, both see them exact.
        let leaf = Instance(depth - 1);
        let reads: Vec<Mat4> = std::thread::scope(|scope| {
            let readers: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| tm.world(leaf).unwrap()))
                .collect();
            readers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(reads[0], reads[1]);
        assert!(tm.worlds.exact.get().is_some());
        assert_integrity(&tm);
        // The same product, from the root down, as a manager that updated at once computes.
        let mut eager = TransformManager::new();
        for n in 0..depth {
            let i = eager.create(e(n), tm.local(Instance(n)).unwrap()).unwrap();
            if n > 0 {
                eager.link(i, Instance(n - 1)).unwrap();
            }
        }
        assert!(eager.stale.is_empty(), "links of leaves update at once");
        assert_eq!(eager.worlds(), tm.worlds(), "bit for bit");
    }

    #[test]
    fn a_change_after_a_read_and_a_clone_keep_the_matrices_exact() {
        let depth = if cfg!(miri) {
            2 * EAGER_NODES as u32
        } else {
            1_000
        };
        let mut tm = leaf_up_chain(depth);
        let copy = tm.clone();
        assert!(copy.stale.is_empty(), "a clone is brought up to date");
        assert_eq!(copy.worlds(), tm.worlds());
        // Read (up to date through `&self`), then moved: the root's move reaches the leaf.
        let leaf = Instance(depth - 1);
        let before = tm.world(leaf).unwrap();
        tm.set_local(Instance(0), t(100.0, 0.0, 0.0)).unwrap();
        assert!(tm.stale.is_empty());
        assert_ne!(tm.world(leaf).unwrap(), before);
        assert_integrity(&tm);
        // A stale subtree unlinked, another linked under it, then a swap: each settles or
        // defers as it must.
        let mid = Instance(depth / 2);
        tm.unlink(mid).unwrap();
        let extra = tm.create(e(depth), t(0.0, 2.0, 0.0)).unwrap();
        tm.link(extra, leaf).unwrap();
        tm.link(Instance(1), extra).unwrap();
        assert_integrity(&tm);
        tm.swap(Instance(0), leaf).unwrap();
        assert_integrity(&tm);
        tm.clear();
        assert!(tm.stale.is_empty() && tm.worlds().is_empty());
    }

    #[test]
    fn transform_display_and_debug() {
        assert_eq!(format!("{:?}", Instance(3)), "Instance(3)");
        assert_eq!(format!("{:?}", Instance::NIL), "Instance(nil)");
        assert!(!Instance::NIL.is_valid());
        assert_eq!(Instance::new(4).index(), 4);
        let tm = sample();
        assert_eq!(format!("{tm:?}"), "TransformManager { len: 8, roots: 2 }");
        let first = tm.first_child(Instance(0)).unwrap().unwrap();
        assert_eq!(
            format!("{:?}", tm.children(Instance(0)).unwrap()),
            format!("Children {{ next: {first:?} }}")
        );
        let s = TransformError::Cycle {
            child: Instance(1),
            parent: Instance(2),
            child_entity: e(11),
            parent_entity: e(12),
        }
        .to_string();
        assert!(s.contains("#1") && s.contains("#2"), "{s}");
        assert!(
            s.contains("entity 11v0") && s.contains("entity 12v0"),
            "{s}"
        );
        assert!(TransformError::Full.to_string().contains("full"));
    }
}
