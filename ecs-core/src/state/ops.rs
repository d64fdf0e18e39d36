//! What an opted-in world's generated code tells the runtime about copying and hashing its
//! types: one [`ComponentState`] per component, one [`EventState`] per event type, gathered in
//! its [`StateTables`]. Each entry holds type-erased functions instantiated for the declared
//! type, so the runtime copies and hashes values without knowing their types.
//!
//! The build script picks each entry from the type's derives: `#[derive(Copy)]` copies values
//! as bytes, any other type is copied with `Clone` (a type that is not `Clone` is a build error
//! naming it, through [`Saved`]), `#[component(no_rollback)]` is not copied at all (its values
//! stay with their entities; see [`crate::state`]). A checksum hashes a value's bytes when the
//! type derives bytemuck's `Pod` or `NoUninit` (no padding, no pointer: every byte is
//! initialised and means the value), else its `Hash` impl when it derives `Hash`, else nothing.

use super::hash::StateHasher;
use crate::events::Events;
use std::any::{Any, TypeId};
use std::hash::Hash;
use std::marker::PhantomData;

/// A type a world state copies with `Clone`: every component, resource and event type of a
/// world that opted in to world states, unless it is a `#[component(no_rollback)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be saved in a world state: it is not `Clone`",
    label = "not `Clone`",
    note = "this world opted in to world states (`Builder::rollback`): derive or implement `Clone` for `{Self}`, or, for a component that is not part of the simulation (a render or audio handle), mark it `#[component(no_rollback)]`"
)]
#[doc(hidden)]
pub trait Saved: Clone + Send + Sync + 'static {}
impl<T: Clone + Send + Sync + 'static> Saved for T {}

/// A `#[component(no_rollback)]` component: the value an entity that a load brings back gets
/// when it has none now is its `Default`.
#[diagnostic::on_unimplemented(
    message = "the `no_rollback` component `{Self}` must implement `Default`",
    label = "no `Default`",
    note = "a load gives an entity that it brings back `{Self}::default()` when the entity has no value now (see `sigecs::state`): derive or implement `Default`"
)]
#[doc(hidden)]
pub trait Restored: Default + Send + Sync + 'static {}
impl<T: Default + Send + Sync + 'static> Restored for T {}

/// Clones `n` values, each `src_stride` bytes after the last, into `n` uninitialised places,
/// each `dst_stride` bytes after the last. All or nothing: if a clone panics, the clones made
/// before it are dropped.
///
/// # Safety
/// `src` points to `n` initialised values of the entry's type, with that stride; `dst` to room
/// for `n` of them, with its stride; the two do not overlap. Strides keep values aligned.
#[doc(hidden)]
pub type CloneNewFn =
    unsafe fn(src: *const u8, src_stride: usize, dst: *mut u8, dst_stride: usize, n: usize);

/// Clones `n` values over `n` initialised ones (`clone_from`, which reuses their allocations).
/// If a clone panics, every destination still holds a valid value.
///
/// # Safety
/// As [`CloneNewFn`], with the destinations initialised.
#[doc(hidden)]
pub type CloneOverFn =
    unsafe fn(src: *const u8, src_stride: usize, dst: *mut u8, dst_stride: usize, n: usize);

/// Writes `n` default values into uninitialised places. All or nothing, as [`CloneNewFn`].
///
/// # Safety
/// `dst` has room for `n` values of the entry's type, `stride` bytes apart, aligned.
#[doc(hidden)]
pub type DefaultFn = unsafe fn(dst: *mut u8, stride: usize, n: usize);

/// Feeds `n` values into a checksum.
///
/// # Safety
/// `src` points to `n` initialised values of the entry's type, `stride` bytes apart.
#[doc(hidden)]
pub type HashFn = unsafe fn(src: *const u8, stride: usize, n: usize, hasher: &mut StateHasher);

/// How a state copies a component's values.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Copying {
    /// As bytes (a `Copy` type).
    Bits,
    /// With `Clone`.
    Clone {
        /// Clones into uninitialised places.
        new: CloneNewFn,
        /// Clones over existing values.
        over: CloneOverFn,
    },
    /// Not at all: a `no_rollback` component.
    NoRollback {
        /// The value an entity gets when a load brings it back and it has none now.
        default: DefaultFn,
    },
}

/// How a state copies and hashes one component type (in component id order in
/// [`StateTables::components`]).
#[doc(hidden)]
#[derive(Debug)]
pub struct ComponentState {
    /// The component type's `TypeId`, checked against the model's tables once.
    pub type_id: fn() -> TypeId,
    /// How values are copied.
    pub copying: Copying,
    /// How values enter a checksum; `None`: they do not (their entities still do).
    pub hash: Option<HashFn>,
    /// The values are hashed as their bytes (`hash_bytes`): every byte of a value is
    /// initialised, so a run of them can be hashed as one slice.
    pub plain: bool,
}

impl ComponentState {
    /// A `Copy` component: copied as bytes.
    pub const fn bits<T: Copy + Send + Sync + 'static>() -> Self {
        ComponentState {
            type_id: TypeId::of::<T>,
            copying: Copying::Bits,
            hash: None,
            plain: false,
        }
    }

    /// A component copied with `Clone`.
    pub const fn cloned<T: Saved>() -> Self {
        ComponentState {
            type_id: TypeId::of::<T>,
            copying: Copying::Clone {
                new: clone_new::<T>,
                over: clone_over::<T>,
            },
            hash: None,
            plain: false,
        }
    }

    /// A `#[component(no_rollback)]` component.
    pub const fn no_rollback<T: Restored>() -> Self {
        ComponentState {
            type_id: TypeId::of::<T>,
            copying: Copying::NoRollback {
                default: default_new::<T>,
            },
            hash: None,
            plain: false,
        }
    }

    /// This entry, hashing values as their bytes.
    pub const fn hash_bytes<T: bytemuck::NoUninit>(self) -> Self {
        ComponentState {
            hash: Some(hash_bytes::<T>),
            plain: true,
            ..self
        }
    }

    /// This entry, hashing values through their `Hash` impl.
    pub const fn hash_with<T: Hash + 'static>(self) -> Self {
        ComponentState {
            hash: Some(hash_with::<T>),
            plain: false,
            ..self
        }
    }
}

/// How a state copies and hashes one event type's queue (in event id order).
#[doc(hidden)]
#[derive(Debug)]
pub struct EventState {
    /// The event type's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Clones a queue (`&Events<E>`) into a state's slot, reusing the slot's queue.
    pub(crate) save: fn(&dyn Any, &mut Option<Box<dyn Any + Send + Sync>>),
    /// Clones a state's queue over a queue of the world (both `Events<E>`).
    pub(crate) restore: fn(&dyn Any, &mut dyn Any),
    /// Feeds a queue into a checksum: its sequence numbers and length, and its events when the
    /// type can be hashed.
    pub(crate) hash: fn(&dyn Any, &mut StateHasher),
}

impl EventState {
    /// An event type, copied with `Clone`.
    pub const fn cloned<E: crate::Event + Saved>() -> Self {
        EventState {
            type_id: TypeId::of::<E>,
            save: save_events::<E>,
            restore: restore_events::<E>,
            hash: hash_events::<E, Unhashed>,
        }
    }

    /// This entry, hashing events as their bytes.
    pub const fn hash_bytes<E: crate::Event + bytemuck::NoUninit>(self) -> Self {
        EventState {
            hash: hash_events::<E, Bytes>,
            ..self
        }
    }

    /// This entry, hashing events through their `Hash` impl.
    pub const fn hash_with<E: crate::Event + Hash>(self) -> Self {
        EventState {
            hash: hash_events::<E, Hashed>,
            ..self
        }
    }
}

/// What an opted-in world's generated code gives the runtime for its states.
#[doc(hidden)]
#[derive(Debug)]
pub struct StateTables {
    /// Per component id.
    pub components: &'static [ComponentState],
    /// Per event id.
    pub events: &'static [EventState],
    /// The model's fingerprint, computed once (`crate::world::state`).
    pub(crate) fingerprint: std::sync::OnceLock<u64>,
}

impl StateTables {
    /// The tables of a model's components and events (by id).
    pub const fn new(components: &'static [ComponentState], events: &'static [EventState]) -> Self {
        StateTables {
            components,
            events,
            fingerprint: std::sync::OnceLock::new(),
        }
    }
}

/// A world model whose worlds save, load and hash their state ([`crate::state`]). Implemented
/// by generated code only, for worlds whose build script calls `Builder::rollback(true)`.
///
/// # Safety
/// `state_tables().components[i]` describes the type of `M::components()[i]` and
/// `state_tables().events[i]` that of `M::events()[i]` (the runtime checks the `TypeId`s once
/// and panics on a mismatch, but relies on the functions matching them); `hash_resources`
/// reads only the resources.
#[diagnostic::on_unimplemented(
    message = "this world does not save its state",
    note = "opt in with `sigecs_build::Builder::new().rollback(true)` in the build script"
)]
pub unsafe trait StateModel: crate::WorldModel<Resources: Clone> {
    /// The copy and hash functions of the model's types.
    #[doc(hidden)]
    fn state_tables() -> &'static StateTables;
    /// Feeds the resources into a checksum (each resource that can be hashed, in name order).
    #[doc(hidden)]
    fn hash_resources(resources: &Self::Resources, hasher: &mut StateHasher);
}

/// Clones `from` over `into` (`Clone::clone_from`): how an opted-in world's resources are
/// copied, through the [`Saved`] bound so that a resource that is not `Clone` is named.
#[inline]
#[doc(hidden)]
pub fn clone_saved<T: Saved>(from: &T, into: &mut T) {
    into.clone_from(from)
}

/// A clone of `value` (see [`clone_saved`]).
#[inline]
#[doc(hidden)]
pub fn cloned<T: Saved>(value: &T) -> T {
    value.clone()
}

/// Feeds `value`'s bytes into a checksum.
#[inline]
#[doc(hidden)]
pub fn hash_value_bytes<T: bytemuck::NoUninit>(value: &T, hasher: &mut StateHasher) {
    hasher.write_bytes(bytemuck::bytes_of(value));
}

/// Feeds `value` into a checksum through its `Hash` impl.
#[inline]
#[doc(hidden)]
pub fn hash_value_with<T: Hash>(value: &T, hasher: &mut StateHasher) {
    value.hash(hasher);
}

/// On unwind, drops the `done` values already written at `dst` (the clones or defaults of a
/// call that panicked), so a failed call leaves nothing behind.
struct Written<T> {
    dst: *mut u8,
    stride: usize,
    done: usize,
    _type: PhantomData<T>,
}

impl<T> Drop for Written<T> {
    fn drop(&mut self) {
        for i in 0..self.done {
            // SAFETY: the first `done` places hold values written by this call, dropped once.
            unsafe { std::ptr::drop_in_place(self.dst.add(i * self.stride).cast::<T>()) };
        }
    }
}

/// [`CloneNewFn`] of `T`.
///
/// # Safety
/// As [`CloneNewFn`].
unsafe fn clone_new<T: Clone>(
    src: *const u8,
    src_stride: usize,
    dst: *mut u8,
    dst_stride: usize,
    n: usize,
) {
    let mut written = Written::<T> {
        dst,
        stride: dst_stride,
        done: 0,
        _type: PhantomData,
    };
    for i in 0..n {
        // SAFETY: the caller guarantees `n` values at `src` and room for `n` at `dst`, with
        // these strides, aligned and apart.
        unsafe {
            let value = (*src.add(i * src_stride).cast::<T>()).clone();
            dst.add(i * dst_stride).cast::<T>().write(value);
        }
        written.done += 1;
    }
    std::mem::forget(written);
}

/// [`CloneOverFn`] of `T`.
///
/// # Safety
/// As [`CloneOverFn`].
unsafe fn clone_over<T: Clone>(
    src: *const u8,
    src_stride: usize,
    dst: *mut u8,
    dst_stride: usize,
    n: usize,
) {
    for i in 0..n {
        // SAFETY: the caller guarantees `n` initialised values at both, apart, with these
        // strides.
        unsafe {
            (*dst.add(i * dst_stride).cast::<T>()).clone_from(&*src.add(i * src_stride).cast::<T>())
        };
    }
}

/// [`DefaultFn`] of `T`.
///
/// # Safety
/// As [`DefaultFn`].
unsafe fn default_new<T: Default>(dst: *mut u8, stride: usize, n: usize) {
    let mut written = Written::<T> {
        dst,
        stride,
        done: 0,
        _type: PhantomData,
    };
    for i in 0..n {
        // SAFETY: the caller guarantees room for `n` values, `stride` apart.
        unsafe { dst.add(i * stride).cast::<T>().write(T::default()) };
        written.done += 1;
    }
    std::mem::forget(written);
}

/// [`HashFn`] of a `NoUninit` type: the values' bytes, which are all initialised and hold no
/// pointer.
///
/// # Safety
/// As [`HashFn`].
unsafe fn hash_bytes<T: bytemuck::NoUninit>(
    src: *const u8,
    stride: usize,
    n: usize,
    hasher: &mut StateHasher,
) {
    if stride == size_of::<T>() {
        // SAFETY: `n` consecutive initialised values of a type without padding.
        let values = unsafe { std::slice::from_raw_parts(src.cast::<T>(), n) };
        hasher.write_bytes(bytemuck::cast_slice(values));
    } else {
        for i in 0..n {
            // SAFETY: value `i` is initialised and aligned (the caller).
            let value = unsafe { &*src.add(i * stride).cast::<T>() };
            hasher.write_bytes(bytemuck::bytes_of(value));
        }
    }
}

/// [`HashFn`] of a `Hash` type.
///
/// # Safety
/// As [`HashFn`].
unsafe fn hash_with<T: Hash>(src: *const u8, stride: usize, n: usize, hasher: &mut StateHasher) {
    for i in 0..n {
        // SAFETY: value `i` is initialised and aligned (the caller).
        unsafe { (*src.add(i * stride).cast::<T>()).hash(hasher) };
    }
}

fn save_events<E: crate::Event + Clone>(
    from: &dyn Any,
    into: &mut Option<Box<dyn Any + Send + Sync>>,
) {
    let from = from
        .downcast_ref::<Events<E>>()
        .expect("the queue of its event type");
    match into.as_mut().and_then(|b| b.downcast_mut::<Events<E>>()) {
        Some(queue) => queue.clone_from_queue(from),
        None => *into = Some(Box::new(from.cloned_queue())),
    }
}

fn restore_events<E: crate::Event + Clone>(from: &dyn Any, into: &mut dyn Any) {
    let from = from
        .downcast_ref::<Events<E>>()
        .expect("the queue of its event type");
    let into = into
        .downcast_mut::<Events<E>>()
        .expect("the queue of its event type");
    into.clone_from_queue(from);
}

/// How one event is hashed.
trait HashOne<E> {
    fn hash_one(event: &E, hasher: &mut StateHasher);
}
struct Bytes;
struct Hashed;
struct Unhashed;
impl<E> HashOne<E> for Unhashed {
    fn hash_one(_: &E, _: &mut StateHasher) {}
}
impl<E: bytemuck::NoUninit> HashOne<E> for Bytes {
    fn hash_one(event: &E, hasher: &mut StateHasher) {
        hash_value_bytes(event, hasher);
    }
}
impl<E: Hash> HashOne<E> for Hashed {
    fn hash_one(event: &E, hasher: &mut StateHasher) {
        hash_value_with(event, hasher);
    }
}

fn hash_events<E: crate::Event, H: HashOne<E>>(queue: &dyn Any, hasher: &mut StateHasher) {
    let queue = queue
        .downcast_ref::<Events<E>>()
        .expect("the queue of its event type");
    let (first, frame) = queue.sequence();
    hasher.write_words(&[first, frame, queue.len() as u64]);
    for event in queue.iter() {
        H::hash_one(event, hasher);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::mem::MaybeUninit;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    thread_local!(static LIVE: Cell<i64> = const { Cell::new(0) });

    /// Counts live values; its clone panics when armed.
    struct Witness(u32, bool);
    impl Clone for Witness {
        fn clone(&self) -> Self {
            if self.1 {
                panic!("armed witness {} cloned", self.0);
            }
            LIVE.with(|l| l.set(l.get() + 1));
            Witness(self.0, false)
        }
    }
    impl Drop for Witness {
        fn drop(&mut self) {
            LIVE.with(|l| l.set(l.get() - 1));
        }
    }
    fn witness(v: u32, armed: bool) -> Witness {
        LIVE.with(|l| l.set(l.get() + 1));
        Witness(v, armed)
    }
    fn live() -> i64 {
        LIVE.with(Cell::get)
    }

    #[test]
    fn clone_new_is_all_or_nothing() {
        let src = [witness(1, false), witness(2, false), witness(3, true)];
        let mut dst: [MaybeUninit<Witness>; 3] = [const { MaybeUninit::uninit() }; 3];
        let before = live();
        let r = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: three values and room for three, contiguous, apart.
            unsafe { clone_new::<Witness>(src.as_ptr().cast(), 8, dst.as_mut_ptr().cast(), 8, 3) }
        }));
        assert!(r.is_err());
        assert_eq!(
            live(),
            before,
            "the two clones made before the panic were dropped"
        );
        // SAFETY: two values and room for two.
        unsafe { clone_new::<Witness>(src.as_ptr().cast(), 8, dst.as_mut_ptr().cast(), 8, 2) };
        assert_eq!(live(), before + 2);
        // SAFETY: initialised just above.
        let got: Vec<u32> = dst[..2]
            .iter()
            .map(|w| unsafe { w.assume_init_ref() }.0)
            .collect();
        assert_eq!(got, [1, 2]);
        for w in &mut dst[..2] {
            // SAFETY: initialised, dropped once.
            unsafe { w.assume_init_drop() };
        }
        drop(src);
        assert_eq!(live(), 0);
    }

    #[test]
    fn clone_over_keeps_every_value_valid_when_a_clone_panics() {
        let src = [witness(1, false), witness(2, true)];
        let mut dst = [witness(7, false), witness(8, false)];
        let r = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: two values at both, contiguous, apart.
            unsafe { clone_over::<Witness>(src.as_ptr().cast(), 8, dst.as_mut_ptr().cast(), 8, 2) }
        }));
        assert!(r.is_err());
        assert_eq!((dst[0].0, dst[1].0), (1, 8));
        drop((src, dst));
        assert_eq!(live(), 0);
    }

    #[test]
    fn strided_defaults_and_hashes() {
        #[derive(Default, Clone, Copy, Hash, bytemuck::NoUninit)]
        #[repr(C)]
        struct P(u32, u32);
        // Values 16 bytes apart, as in a row struct.
        let mut rows = [[0u32; 4]; 3];
        // SAFETY: room for three P, 16 bytes apart, aligned.
        unsafe { default_new::<P>(rows.as_mut_ptr().cast(), 16, 3) };
        rows[1][0] = 5;
        let digest = |f: HashFn, stride, ptr: *const u8| {
            let mut h = StateHasher::new();
            // SAFETY: three initialised P values `stride` apart.
            unsafe { f(ptr, stride, 3, &mut h) };
            h.digest()
        };
        let packed = [P(0, 0), P(5, 0), P(0, 0)];
        let strided = digest(hash_bytes::<P>, 16, rows.as_ptr().cast());
        assert_eq!(strided, digest(hash_bytes::<P>, 8, packed.as_ptr().cast()));
        assert_ne!(
            strided,
            digest(hash_bytes::<P>, 8, [P(0, 0); 3].as_ptr().cast())
        );
        assert_eq!(
            digest(hash_with::<P>, 16, rows.as_ptr().cast()),
            digest(hash_with::<P>, 8, packed.as_ptr().cast())
        );
    }
}
