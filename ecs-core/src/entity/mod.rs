//! Generational entity ids and the entity manager.
//!
//! An [`Entity`] is a 32-bit id: 22 bits of slot index and 8 bits of generation. The
//! [`EntityManager`] keeps one `u8` generation per slot, so [`EntityManager::alive`] is a single
//! array read. A destroyed slot's generation is bumped and its index queued; indices are reused
//! only while more than [`MINIMUM_FREE_INDICES`] wait in the queue.
//!
//! With the `wide-entity` cargo feature an [`Entity`] is 64 bits instead: the same 22 index bits
//! (so [`MAX_ENTITIES`] is unchanged) and a 32-bit generation, with a `u32` generation per slot.
//! The API is the same under both; code that stores raw ids names [`EntityBits`] (`u32`, or
//! `u64` with the feature) and [`Generation`] (`u8`, or `u32`).
//!
//! - `id.rs`: [`Entity`], its bit layout and the constants that describe it.
//! - `manager.rs`: [`EntityManager`] (create, destroy, destroy hooks, reservation) and
//!   [`EntityError`].
//! - `external.rs`: [`Entity`]'s serde and `bytemuck` impls (cargo features `serde`,
//!   `bytemuck`).
//!
//! # The id-reuse guarantee
//!
//! A slot's index goes to the back of a FIFO queue when it is freed and is handed out again only
//! while more than [`MINIMUM_FREE_INDICES`] (1,024) indices wait in the queue. Once the queue has
//! served a reuse it never holds fewer than 1,024 indices, so between two reuses of one slot at
//! least 1,024 other indices are reissued ahead of it: every reuse of a slot after its first
//! costs at least 1,025 creates. A slot's generation is bumped once per destroy and wraps after
//! [`Generation::MAX`]` + 1` destroys: 256 by default, 2^32 with `wide-entity`.
//!
//! # Collisions
//!
//! An id is only a slot index and a generation, so two kinds of id can be mistaken for a live
//! entity.
//!
//! **A stale id held for very long.** Keep the id of a destroyed entity while its slot is
//! destroyed and reissued again and again, and the slot's generation eventually wraps around to
//! the id's own:
//!
//! - With the default 8-bit generation, [`EntityManager::alive`] reports the stale id alive
//!   again from the slot's 256th destroy after the id's own (the free slot's generation then
//!   equals the id's; see "Free slots" below), and the slot's 256th reissue *is* the stale id:
//!   from then on it names the new entity, and a `World` reads, writes and despawns that entity
//!   through it. Counted in creates anywhere in the manager, that takes at least
//!   254 × 1,025 + 1 = 260,351 creates for `alive` and 255 × 1,025 + 1 = 261,376 for the
//!   reissue (about 256 × 1024), whatever the pattern of creates and destroys. A stale id
//!   held for fewer creates is reliably dead.
//! - With the `wide-entity` feature the generation wraps after 2^32 destroys of the slot, which
//!   takes at least (2^32 − 2) × 1,025 + 1 ≈ 4.4 × 10^12 creates.
//!
//! For scale: a game that creates 10,000 entities per frame at 60 frames per second (600,000
//! creates per second) can meet a stale 32-bit id again after less than half a second of that
//! churn, and a 64-bit one after 85 days. Choose `wide-entity` when ids may be held across such
//! churn (references kept in long-lived data, network or save-game ids), at the price of 8-byte
//! ids and 4 bytes per slot instead of 1.
//!
//! Applications that keep ids of destroyed entities for long should drop them or check them
//! against their own data; the generation only makes a mistake unlikely, not impossible.
//!
//! **An id from another manager or `World`.** Ids carry no trace of the manager that issued them.
//! An id issued by another manager (another `World`), or built with [`Entity::from_bits`] or
//! [`Entity::new`], is taken at face value: if its index and generation equal those of one of
//! this manager's live entities, it *is* that entity, here and in the `World` built on it. This
//! is not detected in either layout: tagging every id with its world would take bits the 32-bit
//! layout does not have, and a check on every access that the one-read `alive` avoids. Keep ids
//! with the world that issued them.
//!
//! **Free slots.** A free slot's generation is already the one its next entity will get, so an
//! id with that generation (forged, or issued by [`EntityManager::reserve`] and not yet flushed)
//! reads alive in the one-read `alive` until the slot is reused. [`EntityManager::destroy`] is
//! exact regardless: it never frees a free slot, so such an id cannot destroy anything; the
//! generated `World` guards every lookup with its location table, which holds no location for a
//! free slot.
//!
//! # Reservation
//!
//! [`EntityManager::reserve`] hands out ids through `&self`, from any number of threads at once
//! (for example, from systems that spawn through `Commands`), and
//! [`EntityManager::flush_reserved`] later makes them alive, in reservation order. Reserved ids
//! are exactly the ids the next creates would have issued (the same reuse rule), distinct from
//! each other and from every live id. See [`EntityManager::reserve`] for how the other methods
//! treat pending reservations.

#[cfg(any(feature = "serde", feature = "bytemuck"))]
mod external;
mod id;
mod manager;

#[cfg(feature = "serde")]
#[doc(hidden)]
pub use external::SERDE_NAME;

pub use id::{
    Entity, EntityBits, Generation, GENERATION_BITS, INDEX_BITS, MAX_ENTITIES, MINIMUM_FREE_INDICES,
};
pub(crate) use manager::EntityImage;
pub use manager::{DestroyHookId, EntityError, EntityManager};
