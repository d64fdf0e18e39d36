//! The runtime half of a generated `World`: the entity table (which entity lives in which store
//! row), the traits the generated code implements per component, signature and resource, and
//! the error type.
//!
//! # Invariants
//!
//! For every live entity `e`, `table.locate(e) == Some(loc)` and row `loc.row` of store
//! `loc.store` holds `e` in its entity column. Every store is packed: rows `0..len` are live.
//! Removing a row moves the store's last row into the hole (swap-remove) and the generated code
//! calls [`EntityTable::relocate`] for the moved entity, so the invariant holds after every
//! operation. Free slots hold [`Location::NONE`], which is what makes lookups of ids that were
//! never issued (or are stale) return `None` rather than another entity's data.

use crate::entity::{Entity, EntityError, EntityManager};
use std::fmt;

/// Where an entity's components live: a store (one per declared signature) and a row in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// Store id: the signature's index in the generated world.
    pub store: u32,
    /// Row within the store.
    pub row: u32,
}

impl Location {
    /// The location of a free slot.
    pub const NONE: Location = Location {
        store: u32::MAX,
        row: u32::MAX,
    };

    /// A location in `store` at `row`.
    #[inline]
    pub const fn new(store: u32, row: usize) -> Self {
        Location {
            store,
            row: row as u32,
        }
    }

    /// The row as an index.
    #[inline]
    pub const fn row(self) -> usize {
        self.row as usize
    }
}

/// Entity ids plus, per slot, the entity's location.
#[derive(Debug, Default)]
pub struct EntityTable {
    entities: EntityManager,
    locations: Vec<Location>,
}

impl EntityTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entity manager, e.g. to register destruction hooks.
    pub fn entities(&self) -> &EntityManager {
        &self.entities
    }

    /// Mutable access to the entity manager, e.g. to register destruction hooks.
    pub fn entities_mut(&mut self) -> &mut EntityManager {
        &mut self.entities
    }

    /// Number of live entities.
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// True when no entity is alive.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The location of a live entity; `None` for a dead, stale or never-issued id.
    #[inline]
    pub fn locate(&self, e: Entity) -> Option<Location> {
        if !self.entities.alive(e) {
            return None;
        }
        let loc = self.locations[e.index() as usize];
        (loc != Location::NONE).then_some(loc)
    }

    /// Issues a new entity placed at `loc`.
    #[inline]
    pub fn create_at(&mut self, loc: Location) -> Result<Entity, EntityError> {
        let e = self.entities.create()?;
        self.place(e, loc);
        Ok(e)
    }

    /// Issues `n` entities to be placed at consecutive rows `first_row..` of `store`,
    /// appending them to `out`. All or nothing.
    #[inline]
    pub fn create_run(
        &mut self,
        store: u32,
        first_row: usize,
        n: usize,
        out: &mut Vec<Entity>,
    ) -> Result<(), EntityError> {
        let start = out.len();
        self.entities.create_many_into(n, out)?;
        // Every issued index is below `slots()`: size the table once for the whole run.
        let slots = self.entities.slots();
        if self.locations.len() < slots {
            self.locations.resize(slots, Location::NONE);
        }
        for (i, e) in out[start..].iter().enumerate() {
            self.locations[e.index() as usize] = Location::new(store, first_row + i);
        }
        Ok(())
    }

    /// Records that `e` (just created) lives at `loc`.
    #[inline]
    fn place(&mut self, e: Entity, loc: Location) {
        let idx = e.index() as usize;
        if idx >= self.locations.len() {
            self.locations.resize(idx + 1, Location::NONE);
        }
        self.locations[idx] = loc;
    }

    /// Records that live entity `e` moved to `loc` (after a swap-remove or a signature change).
    #[inline]
    pub fn relocate(&mut self, e: Entity, loc: Location) {
        debug_assert!(self.entities.alive(e), "relocating dead entity {e}");
        self.locations[e.index() as usize] = loc;
    }

    /// Retires a live entity: its id becomes stale and its slot's location is cleared.
    /// Returns false when `e` was not alive.
    #[inline]
    pub fn destroy(&mut self, e: Entity) -> bool {
        if self.locate(e).is_none() {
            return false;
        }
        self.locations[e.index() as usize] = Location::NONE;
        self.entities.destroy(e)
    }
}

/// The entity id written into rows whose real id is not issued yet (batch spawns).
pub const PLACEHOLDER: Entity = Entity::from_bits(u32::MAX);

/// Undoes a partial change when dropped before [`Rollback::commit`], also during unwinding.
///
/// Batch spawns push rows first and issue ids afterwards; if the value iterator panics or the
/// index space is exhausted, the guard truncates the new rows away so the store never holds
/// rows without a live entity.
pub struct Rollback<'a, S, F: FnOnce(&mut S)> {
    target: Option<&'a mut S>,
    undo: Option<F>,
}

impl<'a, S, F: FnOnce(&mut S)> Rollback<'a, S, F> {
    /// Guards `target`; `undo` runs on drop unless the guard is committed.
    pub fn new(target: &'a mut S, undo: F) -> Self {
        Rollback {
            target: Some(target),
            undo: Some(undo),
        }
    }

    /// Keeps the change and releases the target.
    pub fn commit(mut self) -> &'a mut S {
        self.undo = None;
        self.target
            .take()
            .expect("target is present until commit or drop")
    }
}

impl<S, F: FnOnce(&mut S)> std::ops::Deref for Rollback<'_, S, F> {
    type Target = S;
    fn deref(&self) -> &S {
        self.target
            .as_deref()
            .expect("target is present until commit or drop")
    }
}

impl<S, F: FnOnce(&mut S)> std::ops::DerefMut for Rollback<'_, S, F> {
    fn deref_mut(&mut self) -> &mut S {
        self.target
            .as_deref_mut()
            .expect("target is present until commit or drop")
    }
}

impl<S, F: FnOnce(&mut S)> Drop for Rollback<'_, S, F> {
    fn drop(&mut self) {
        if let (Some(target), Some(undo)) = (self.target.take(), self.undo.take()) {
            undo(target);
        }
    }
}

/// A structural change that [`WorldError::UndeclaredSignature`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// `insert`: the component would be added.
    Insert,
    /// `remove`: the component would be taken away.
    Remove,
}

/// Run-time errors of a generated world. Every refused operation leaves the world unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorldError {
    /// The entity index space is exhausted.
    Entity(EntityError),
    /// The entity is dead, stale (its slot was reused) or was never issued by this world.
    NoSuchEntity(Entity),
    /// The entity's signature has no such component.
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// Its signature.
        signature: &'static str,
        /// The component it lacks.
        component: &'static str,
    },
    /// An insert or remove would move the entity to a component set no signature declares.
    UndeclaredSignature {
        /// The entity, left as it was.
        entity: Entity,
        /// Insert or remove.
        change: Change,
        /// The component inserted or removed.
        component: &'static str,
        /// The entity's signature.
        signature: &'static str,
        /// Its component set, e.g. `{A, B}`.
        current: String,
        /// The set the change would lead to, which no signature declares.
        missing: String,
    },
    /// A command named a signature or component type this world does not declare.
    NotInWorld {
        /// "signature" or "component".
        kind: &'static str,
        /// The type's name.
        type_name: &'static str,
    },
    /// A run-time query asked for the same component twice with at least one `&mut`.
    AliasedQuery {
        /// The component requested twice.
        component: &'static str,
    },
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorldError::Entity(e) => e.fmt(f),
            WorldError::NoSuchEntity(e) => write!(
                f,
                "entity {e} is not alive in this world (despawned, stale after its slot was \
                 reused, or never spawned here)"
            ),
            WorldError::MissingComponent {
                entity,
                signature,
                component,
            } => write!(
                f,
                "entity {entity} (signature `{signature}`) has no `{component}` component"
            ),
            WorldError::UndeclaredSignature {
                entity,
                change,
                component,
                signature,
                current,
                missing,
            } => {
                let (verb, prep) = match change {
                    Change::Insert => ("insert", "into"),
                    Change::Remove => ("remove", "from"),
                };
                write!(
                    f,
                    "cannot {verb} `{component}` {prep} entity {entity}: its signature \
                     `{signature}` is {current}, and {missing} is not a declared signature; \
                     the entity is unchanged. Declare the set with `#[derive(Signature)]` (a \
                     struct with one field per component of {missing}) in a scanned file"
                )?;
                if missing == "{}" {
                    write!(
                        f,
                        ", or despawn the entity instead of removing its last component"
                    )?;
                }
                Ok(())
            }
            WorldError::NotInWorld { kind, type_name } => write!(
                f,
                "`{type_name}` is not a {kind} of this world; declare it in a file the world's \
                 build script scans"
            ),
            WorldError::AliasedQuery { component } => write!(
                f,
                "query borrows `{component}` twice and at least once mutably, which would \
                 alias; ask for it once (as `&mut {component}` if it is written)"
            ),
        }
    }
}

impl std::error::Error for WorldError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WorldError::Entity(e) => Some(e),
            _ => None,
        }
    }
}

/// `{A, B}`: the names of the components in `mask`, in id order.
pub fn set_names(mask: u128, names: &[&str]) -> String {
    let parts: Vec<&str> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1u128 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("{{{}}}", parts.join(", "))
}

impl From<EntityError> for WorldError {
    fn from(e: EntityError) -> Self {
        WorldError::Entity(e)
    }
}

/// A declared signature that can be spawned into world `W`. Implemented by the generated code.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a declared signature of this world",
    label = "not a signature of this world",
    note = "declare it with `#[derive(Signature)]` in a file the build script scans"
)]
pub trait SpawnIn<W>: Sized {
    /// Spawns one entity.
    fn spawn_in(self, world: &mut W) -> Result<Entity, WorldError>;
    /// Spawns every value of `batch` into one store, reserving space once. All or nothing on
    /// exhaustion of the index space for batches whose length is known up front.
    fn spawn_batch_in(
        batch: impl IntoIterator<Item = Self>,
        world: &mut W,
    ) -> Result<Vec<Entity>, WorldError>;
}

/// A component stored somewhere in world `W`. Implemented by the generated code.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a component of this world",
    note = "declare it with `#[derive(Component)]` in a file the build script scans, and use it in a signature"
)]
pub trait ComponentIn<W>: Sized {
    /// The component's id in world `W` (its bit is `1 << ID`).
    const ID: u32;
    /// The component's name.
    const NAME: &'static str;
    /// The component of the entity at `loc`, if its store has one.
    fn get_in(world: &W, loc: Location) -> Option<&Self>;
    /// Mutable access to the component of the entity at `loc`, if its store has one.
    fn get_mut_in(world: &mut W, loc: Location) -> Option<&mut Self>;
    /// Adds the component to `entity` (moving it to the signature with it), or replaces the
    /// value it has, returning the old one.
    fn insert_in(self, world: &mut W, entity: Entity) -> Result<Option<Self>, WorldError>;
    /// Takes the component from `entity`, moving it to the signature without it.
    fn remove_in(world: &mut W, entity: Entity) -> Result<Self, WorldError>;
}

/// A resource owned by world `W`. Implemented by the generated code.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource of this world",
    note = "declare it with `#[derive(Resource)]` in a file the build script scans"
)]
pub trait ResourceIn<W>: Sized {
    /// The world's value of this resource.
    fn get_in(world: &W) -> &Self;
    /// Mutable access to the world's value of this resource.
    fn get_mut_in(world: &mut W) -> &mut Self;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_tracks_locations_and_rejects_stale_ids() {
        let mut t = EntityTable::new();
        let a = t.create_at(Location::new(0, 0)).unwrap();
        let b = t.create_at(Location::new(0, 1)).unwrap();
        assert_eq!(t.locate(a), Some(Location::new(0, 0)));
        t.relocate(b, Location::new(0, 0));
        assert!(t.destroy(a));
        assert_eq!(t.locate(a), None);
        assert!(!t.destroy(a));
        assert_eq!(t.locate(b), Some(Location::new(0, 0)));
        // A forged id with the freed slot's next generation is not located.
        let forged = Entity::new(a.index(), a.generation().wrapping_add(1));
        assert_eq!(t.locate(forged), None);
        assert!(!t.destroy(forged));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn create_run_places_consecutive_rows() {
        let mut t = EntityTable::new();
        let mut out = Vec::new();
        t.create_run(3, 10, 4, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        for (i, e) in out.iter().enumerate() {
            assert_eq!(t.locate(*e), Some(Location::new(3, 10 + i)));
        }
    }

    #[test]
    fn rollback_undoes_unless_committed() {
        let mut v = vec![1, 2];
        {
            let mut g = Rollback::new(&mut v, |v: &mut Vec<i32>| v.truncate(2));
            g.push(3);
            assert_eq!(g.len(), 3);
        }
        assert_eq!(v, [1, 2]);
        let g = Rollback::new(&mut v, |v: &mut Vec<i32>| v.truncate(2));
        g.commit().push(4);
        assert_eq!(v, [1, 2, 4]);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut g = Rollback::new(&mut v, |v: &mut Vec<i32>| v.truncate(1));
            g.push(5);
            panic!("iterator failed");
        }));
        assert!(r.is_err());
        assert_eq!(v, [1], "undo ran during unwinding");
    }

    #[test]
    fn set_names_in_id_order() {
        assert_eq!(set_names(0b101, &["A", "B", "C"]), "{A, C}");
        assert_eq!(set_names(0, &["A"]), "{}");
    }

    #[test]
    fn undeclared_signature_error_says_how_to_fix() {
        let e = WorldError::UndeclaredSignature {
            entity: Entity::new(4, 0),
            change: Change::Insert,
            component: "B",
            signature: "JustA",
            current: "{A}".into(),
            missing: "{A, B}".into(),
        };
        let text = e.to_string();
        assert!(
            text.starts_with("cannot insert `B` into entity 4v0"),
            "{text}"
        );
        assert!(text.contains("`JustA` is {A}, and {A, B} is not a declared signature"));
        assert!(text.contains("#[derive(Signature)]"));
        let e = WorldError::UndeclaredSignature {
            entity: Entity::new(4, 0),
            change: Change::Remove,
            component: "A",
            signature: "JustA",
            current: "{A}".into(),
            missing: "{}".into(),
        };
        assert!(e.to_string().contains("despawn the entity"));
    }

    #[test]
    fn errors_display_usefully() {
        let e = WorldError::NoSuchEntity(Entity::new(3, 1));
        assert!(e.to_string().contains("3v1"));
        let x: WorldError = EntityError::Exhausted {
            requested: 2,
            available: 1,
        }
        .into();
        assert!(x.to_string().contains("exhausted"));
    }
}
