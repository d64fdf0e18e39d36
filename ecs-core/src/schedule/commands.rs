//! [`Commands`]: structural changes a system requests while it runs, applied by the world at
//! the end of the system's stage (or of `run_<system>`), in row order.

use crate::__private::FieldSink;
use crate::component::{Component, Signature};
use crate::entity::{Entity, EntityManager};
use crate::world::WorldError;
use std::any::{Any, TypeId};
use std::fmt;
use std::mem::ManuallyDrop;

/// Structural changes requested by a system (`commands: &mut Commands`). They are applied at
/// the end of the system's stage in row order, so a parallel run applies them in the same
/// order as a sequential one. Failures are returned by the `run_*` method.
///
/// [`Commands::spawn`] reserves the new entity at once, so the system can refer to it (store
/// it in a component, or `insert` into it in the same buffer).
///
/// A system cannot change a store while it runs over it: it asks for the change here, and the
/// change happens after its stage. A system of the README's world that despawns what has no
/// health left:
///
/// ```
/// # use sigecs_fixtures::readme::{Died, Graveyard, Health, Name, Player, Position, Velocity, World};
/// use sigecs::prelude::*;
///
/// #[system]
/// pub fn damage(e: Entity, health: &mut Health, commands: &mut Commands) {
///     health.0 -= 1;
///     if health.0 <= 0 {
///         commands.despawn(e); // applied after the stage, in row order
///         commands.send(Died(e));
///     }
/// }
///
/// let mut world = World::new();
/// let player = world.spawn(Player {
///     position: Position { x: 0.0, y: 0.0 },
///     velocity: Velocity { x: 0.0, y: 0.0 },
///     health: Health(1),
///     name: Name("ada".into()),
/// });
/// world.run_damage().unwrap(); // Err would name each command that failed
/// assert!(!world.is_alive(player));
/// world.run_bury(); // reads the `Died` event (no commands, so nothing to fail)
/// assert_eq!(world.resource::<Graveyard>().0, [player]);
/// ```
pub struct Commands<'w> {
    ops: Vec<Command>,
    entities: &'w EntityManager,
}

impl fmt::Debug for Commands<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.ops.len())
            .finish()
    }
}

impl<'w> Commands<'w> {
    /// An empty buffer reserving new entities from `entities`.
    pub(crate) fn new(entities: &'w EntityManager) -> Self {
        Commands {
            ops: Vec::new(),
            entities,
        }
    }

    /// Number of requested changes.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when nothing was requested.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Spawns an entity of signature `S` and returns its id at once. The entity is alive
    /// from when the commands are applied. If the entity index space is exhausted the
    /// returned id is a stale one (not alive, like a despawned entity's: see
    /// [`EntityManager::stale_id`]) and the run reports the error.
    pub fn spawn<S: Signature>(&mut self, value: S) -> Entity {
        match self.entities.reserve() {
            Ok(entity) => {
                self.ops.push(Command::Spawn {
                    entity,
                    value: Box::new(value),
                });
                entity
            }
            Err(e) => {
                self.ops.push(Command::Failed {
                    type_name: std::any::type_name::<S>(),
                    error: e.into(),
                });
                self.entities.stale_id()
            }
        }
    }

    /// Despawns `entity` (nothing happens if it is already gone).
    pub fn despawn(&mut self, entity: Entity) {
        self.ops.push(Command::Despawn(entity));
    }

    /// Inserts (or replaces) a component.
    pub fn insert<C: Component>(&mut self, entity: Entity, component: C) {
        self.ops.push(Command::Insert {
            entity,
            value: Box::new(component),
            type_name: std::any::type_name::<C>(),
        });
    }

    /// Sends an event: readers of `E` see it from when the commands are applied (the end of
    /// this system's stage), in request order (see [`crate::events`]).
    pub fn send<E: crate::Event>(&mut self, event: E) {
        self.ops.push(Command::Send {
            value: Box::new(event),
            type_name: std::any::type_name::<E>(),
        });
    }

    /// Removes a component (dropping it).
    pub fn remove<C: Component>(&mut self, entity: Entity) {
        self.ops.push(Command::Remove {
            entity,
            type_id: TypeId::of::<C>(),
            type_name: std::any::type_name::<C>(),
        });
    }

    /// Sets `entity`'s local transform in the world's hierarchy (see
    /// [`World::set_transform`](crate::World::set_transform)).
    #[cfg(feature = "transform")]
    pub fn set_transform(&mut self, entity: Entity, local: glam::Mat4) {
        self.ops.push(Command::SetTransform { entity, local });
    }

    /// Makes `child` a child of `parent` in the world's hierarchy (see
    /// [`World::set_parent`](crate::World::set_parent)); either may be an entity this buffer
    /// spawned.
    #[cfg(feature = "transform")]
    pub fn set_parent(&mut self, child: Entity, parent: Entity) {
        self.ops.push(Command::SetParent { child, parent });
    }

    /// Makes `child` a root of the world's hierarchy (see
    /// [`World::remove_parent`](crate::World::remove_parent)).
    #[cfg(feature = "transform")]
    pub fn remove_parent(&mut self, child: Entity) {
        self.ops.push(Command::RemoveParent(child));
    }

    /// The requested changes, in request order.
    pub(crate) fn into_ops(self) -> Vec<Command> {
        self.ops
    }
}

/// A deferred structural change, type-erased: the world finds the component or signature by
/// the value's `TypeId`.
pub(crate) enum Command {
    /// Spawn a signature value as a reserved entity.
    Spawn {
        entity: Entity,
        value: Box<dyn SpawnValue>,
    },
    /// Despawn an entity.
    Despawn(Entity),
    /// Insert a component value.
    Insert {
        entity: Entity,
        value: Box<dyn Any + Send>,
        type_name: &'static str,
    },
    /// Remove a component.
    Remove {
        entity: Entity,
        type_id: TypeId,
        type_name: &'static str,
    },
    /// Send an event.
    Send {
        value: Box<dyn Any + Send>,
        type_name: &'static str,
    },
    /// Set a local transform.
    #[cfg(feature = "transform")]
    SetTransform { entity: Entity, local: glam::Mat4 },
    /// Parent an entity.
    #[cfg(feature = "transform")]
    SetParent { child: Entity, parent: Entity },
    /// Make an entity a root.
    #[cfg(feature = "transform")]
    RemoveParent(Entity),
    /// A spawn of a `type_name` that failed when it was requested (reported when applied).
    Failed {
        type_name: &'static str,
        error: WorldError,
    },
}

impl Command {
    /// The live entity applying the command looks up first: none for a spawn (its entity is
    /// reserved, not placed yet) or an event.
    #[inline]
    pub(crate) fn entity(&self) -> Option<Entity> {
        match self {
            Command::Despawn(e) => Some(*e),
            Command::Insert { entity, .. } | Command::Remove { entity, .. } => Some(*entity),
            #[cfg(feature = "transform")]
            Command::SetTransform { entity, .. } => Some(*entity),
            #[cfg(feature = "transform")]
            Command::SetParent { child, .. } | Command::RemoveParent(child) => Some(*child),
            Command::Spawn { .. } | Command::Send { .. } | Command::Failed { .. } => None,
        }
    }

    /// What was requested, for the error that reports a failure (`insert `Loot` into entity
    /// 5v0`): a few copied fields; the text is written only when the command failed.
    pub(crate) fn request(&self) -> impl std::fmt::Display + use<> {
        let (verb, type_name, link, entity) = match self {
            Command::Spawn { entity, value } => ("spawn", value.type_name(), "as", Some(*entity)),
            Command::Despawn(e) => ("despawn", "", "", Some(*e)),
            Command::Insert {
                entity, type_name, ..
            } => ("insert", *type_name, "into", Some(*entity)),
            Command::Remove {
                entity, type_name, ..
            } => ("remove", *type_name, "from", Some(*entity)),
            Command::Send { type_name, .. } => ("send", *type_name, "", None),
            Command::Failed { type_name, .. } => ("spawn", *type_name, "", None),
            #[cfg(feature = "transform")]
            Command::SetTransform { entity, .. } => ("set the transform of", "", "", Some(*entity)),
            #[cfg(feature = "transform")]
            Command::SetParent { child, parent } => {
                return Request {
                    verb: "set the parent of",
                    type_name: "",
                    link: "",
                    entity: Some(*child),
                    to: Some(*parent),
                }
            }
            #[cfg(feature = "transform")]
            Command::RemoveParent(e) => ("remove the parent of", "", "", Some(*e)),
        };
        Request {
            verb,
            type_name,
            link,
            entity,
            to: None,
        }
    }
}

/// A command, as [`Command::request`] describes it.
struct Request {
    verb: &'static str,
    type_name: &'static str,
    /// The word before the entity: `into`, `from`, `as` (none for a despawn).
    link: &'static str,
    entity: Option<Entity>,
    /// The second entity of a parenting (`to entity 3v0`).
    to: Option<Entity>,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.verb)?;
        if !self.type_name.is_empty() {
            write!(f, " `{}`", self.type_name)?;
        }
        match self.entity {
            Some(e) if self.link.is_empty() => write!(f, " entity {e}"),
            Some(e) => write!(f, " {} entity {e}", self.link),
            None => Ok(()),
        }?;
        match self.to {
            Some(parent) => write!(f, " to entity {parent}"),
            None => Ok(()),
        }
    }
}

/// Takes the bytes of a signature's parts whose types are known only by `TypeId`.
pub(crate) trait RawSink {
    /// Takes ownership of `size` bytes at `value`, a value of type `type_id`.
    ///
    /// # Safety
    /// `value` points to an initialised value of that type and size, which the caller will
    /// not use or drop again.
    unsafe fn put_raw(&mut self, type_id: TypeId, size: usize, value: *mut u8);
}

/// A signature value whose type is erased (spawn commands).
pub(crate) trait SpawnValue: Send {
    /// The signature type.
    fn signature_type(&self) -> TypeId;
    /// Its name, for errors.
    fn type_name(&self) -> &'static str;
    /// Moves every part into `sink`, in field order.
    fn write_into(self: Box<Self>, sink: &mut dyn RawSink);
}

struct Adapter<'a>(&'a mut dyn RawSink);

impl FieldSink for Adapter<'_> {
    fn put<C: Component>(&mut self, value: C) {
        let mut value = ManuallyDrop::new(value);
        // SAFETY: an initialised C, never used again (ManuallyDrop, not dropped here).
        unsafe {
            self.0.put_raw(
                TypeId::of::<C>(),
                size_of::<C>(),
                (&mut *value as *mut C).cast(),
            )
        }
    }
}

impl<S: Signature> SpawnValue for S {
    fn signature_type(&self) -> TypeId {
        TypeId::of::<S>()
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<S>()
    }
    fn write_into(self: Box<Self>, sink: &mut dyn RawSink) {
        (*self).write_fields(&mut Adapter(sink));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Marker;
    impl Component for Marker {
        const COLD: bool = false;
    }

    /// How a failed command is named in its error: verb, type, link word and entity.
    #[test]
    fn requests_name_the_command() {
        #[derive(Debug)]
        struct Boom;
        impl crate::Event for Boom {}
        let manager = EntityManager::new();
        let e = Entity::new(5, 0);
        let mut c = Commands::new(&manager);
        c.insert(e, Marker);
        c.remove::<Marker>(e);
        c.despawn(e);
        c.send(Boom);
        let spawned = c.spawn(());
        let texts: Vec<String> = c
            .into_ops()
            .iter()
            .map(|op| op.request().to_string())
            .collect();
        let marker = std::any::type_name::<Marker>();
        let boom = std::any::type_name::<Boom>();
        assert_eq!(
            texts,
            [
                format!("insert `{marker}` into entity 5v0"),
                format!("remove `{marker}` from entity 5v0"),
                "despawn entity 5v0".to_string(),
                format!("send `{boom}`"),
                format!("spawn `()` as entity {spawned}"),
            ]
        );
    }

    /// The entity each command looks up first, which applying a buffer asks for ahead.
    #[test]
    fn commands_name_the_entity_they_look_up() {
        #[derive(Debug)]
        struct Boom;
        impl crate::Event for Boom {}
        let manager = EntityManager::new();
        let (e, f) = (Entity::new(5, 0), Entity::new(7, 2));
        let mut c = Commands::new(&manager);
        c.insert(e, Marker);
        c.remove::<Marker>(f);
        c.despawn(e);
        c.send(Boom);
        c.spawn(());
        #[cfg(feature = "transform")]
        {
            c.set_transform(f, glam::Mat4::IDENTITY);
            c.set_parent(e, f);
            c.remove_parent(f);
        }
        let entities: Vec<_> = c.into_ops().iter().map(Command::entity).collect();
        let mut expected = vec![Some(e), Some(f), Some(e), None, None];
        if cfg!(feature = "transform") {
            expected.extend([Some(f), Some(e), Some(f)]);
        }
        assert_eq!(entities, expected);
    }

    /// A spawn that finds no free id returns a stale id (never entity 0 or another live one)
    /// and records the failure.
    #[test]
    #[cfg_attr(miri, ignore = "fills 2^22 entity slots")]
    fn a_spawn_without_free_ids_returns_a_stale_id_and_fails() {
        let mut manager = EntityManager::new();
        let all = manager.create_many(crate::entity::MAX_ENTITIES).unwrap();
        let mut c = Commands::new(&manager);
        let e = c.spawn(());
        assert!(!manager.alive(e), "{e} is not alive");
        assert!(!all.contains(&e));
        assert_eq!(e, manager.stale_id());
        let ops = c.into_ops();
        assert!(matches!(
            ops[..],
            [Command::Failed {
                error: WorldError::Entity(_),
                ..
            }]
        ));
    }

    #[test]
    fn commands_keep_request_order_and_reserve_distinct_ids() {
        let mut manager = EntityManager::new();
        let live = manager.create().unwrap();
        let mut c = Commands::new(&manager);
        c.despawn(Entity::new(1, 0));
        c.remove::<Marker>(Entity::new(2, 0));
        c.insert(Entity::new(3, 0), Marker);
        let (a, b) = (c.spawn(()), c.spawn(()));
        assert!(a != b && a != live && b != live);
        assert_eq!(c.len(), 5);
        let kinds: Vec<&str> = c
            .into_ops()
            .into_iter()
            .map(|op| match op {
                Command::Despawn(_) => "despawn",
                Command::Remove { type_id, .. } => {
                    assert_eq!(type_id, TypeId::of::<Marker>());
                    "remove"
                }
                Command::Insert { type_name, .. } => {
                    assert!(type_name.ends_with("Marker"));
                    "insert"
                }
                Command::Spawn { entity, value } => {
                    assert_eq!(value.signature_type(), TypeId::of::<()>());
                    assert!(entity == a || entity == b);
                    "spawn"
                }
                Command::Failed { .. } => "failed",
                Command::Send { .. } => "send",
                #[cfg(feature = "transform")]
                Command::SetTransform { .. }
                | Command::SetParent { .. }
                | Command::RemoveParent(_) => "hierarchy",
            })
            .collect();
        assert_eq!(kinds, ["despawn", "remove", "insert", "spawn", "spawn"]);
    }

    // `()` as a signature with no parts, for the tests above.
    impl Signature for () {
        const LEN: usize = 0;
        fn write_fields<S: FieldSink>(self, _: &mut S) {}
    }
}

/// How requests are recorded and named, value by value.
#[cfg(test)]
mod requests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Pos(u64);
    impl Component for Pos {
        const COLD: bool = false;
    }
    #[derive(Debug, PartialEq)]
    struct Tag(u8);
    impl Component for Tag {
        const COLD: bool = false;
    }

    struct Pair(Pos, Tag);
    impl Signature for Pair {
        const LEN: usize = 2;
        fn write_fields<S: FieldSink>(self, sink: &mut S) {
            sink.put(self.0);
            sink.put(self.1);
        }
    }

    /// Records every part put: its type, size and bytes.
    #[derive(Default)]
    struct Recorder(Vec<(TypeId, usize, Vec<u8>)>);
    impl RawSink for Recorder {
        unsafe fn put_raw(&mut self, type_id: TypeId, size: usize, value: *mut u8) {
            // SAFETY: the caller passes `size` initialised bytes (plain integers here).
            let bytes = unsafe { std::slice::from_raw_parts(value, size) }.to_vec();
            self.0.push((type_id, size, bytes));
        }
    }

    #[test]
    fn an_erased_spawn_value_names_its_type_and_moves_its_parts_in_order() {
        let value: Box<dyn SpawnValue> = Box::new(Pair(Pos(0x0102_0304_0506_0708), Tag(9)));
        assert_eq!(value.signature_type(), TypeId::of::<Pair>());
        assert_eq!(value.type_name(), std::any::type_name::<Pair>());
        assert!(value.type_name().ends_with("Pair"));
        let mut sink = Recorder::default();
        value.write_into(&mut sink);
        assert_eq!(
            sink.0,
            [
                (
                    TypeId::of::<Pos>(),
                    8,
                    0x0102_0304_0506_0708u64.to_ne_bytes().to_vec()
                ),
                (TypeId::of::<Tag>(), 1, vec![9]),
            ]
        );
    }

    #[test]
    fn len_and_is_empty_count_the_requests() {
        let manager = EntityManager::new();
        let mut c = Commands::new(&manager);
        assert!(c.is_empty());
        assert_eq!(c.len(), 0);
        assert_eq!(format!("{c:?}"), "Commands { len: 0 }");
        c.despawn(Entity::new(1, 0));
        assert!(!c.is_empty());
        assert_eq!(c.len(), 1);
        c.remove::<Tag>(Entity::new(1, 0));
        assert_eq!(c.len(), 2);
        assert_eq!(format!("{c:?}"), "Commands { len: 2 }");
    }
}
