//! The world's error type.

use crate::entity::{Entity, EntityError};
use std::fmt;

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
        /// Its component set, as the world's `ComponentSet` writes it (`A | B`).
        current: String,
        /// The set the change would lead to, which no signature declares (empty text for the
        /// empty set).
        missing: String,
    },
    /// A batch spawn ([`World::begin_spawn`](crate::World::begin_spawn)) named a component set
    /// that no signature declares, and the world is strict.
    NoSignature {
        /// The set, e.g. `{A, B}`.
        set: String,
    },
    /// A batch spawn named a component set with a sparse component, which lives in a sparse
    /// set beside the stores, never in one: insert it after the spawn.
    SparseInSet {
        /// The set, e.g. `{A, B}`.
        set: String,
        /// The sparse component.
        component: &'static str,
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
    /// A command a system requested could not be applied: which one, and why
    /// ([`WorldError::reason`]). Boxed: one pointer, so the error (returned by every
    /// `insert`/`remove`) keeps its size and layout.
    Command(Box<CommandFailure>),
    /// A change of the transform hierarchy was refused (a cycle, a node parented to itself).
    #[cfg(feature = "transform")]
    Hierarchy(crate::transform::TransformError),
}

/// A refused command: [`WorldError::Command`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFailure {
    /// The request, e.g. ``insert `game::Loot` into entity 5v0``.
    pub request: String,
    /// Why it was refused.
    pub error: WorldError,
}

impl WorldError {
    /// Why the operation failed: for a [`WorldError::Command`] the error of the command, else
    /// the error itself. Match on this to handle a command's failure by its kind.
    pub fn reason(&self) -> &WorldError {
        match self {
            WorldError::Command(failure) => failure.error.reason(),
            other => other,
        }
    }
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
                let (current, missing_set) = (shown(current), shown(missing));
                write!(
                    f,
                    "cannot {verb} `{component}` {prep} entity {entity}: its signature \
                     `{signature}` is {current}, and {missing_set} is not a declared signature; \
                     the entity is unchanged. Declare the set with `#[derive(Signature)]` (a \
                     struct with one field per component of {missing_set}) in a scanned file"
                )?;
                if missing.is_empty() {
                    write!(
                        f,
                        ", or despawn the entity instead of removing its last component"
                    )?;
                }
                Ok(())
            }
            WorldError::NoSignature { set } => {
                let set = shown(set);
                write!(
                    f,
                    "{set} is not a declared signature. Declare the set with \
                     `#[derive(Signature)]` (a struct with one field per component of {set}) in a \
                     scanned file"
                )
            }
            WorldError::SparseInSet { set, component } => write!(
                f,
                "{} holds `{component}`, a sparse component, which lives beside the stores: \
                 spawn the set without it and insert it afterwards",
                shown(set)
            ),
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
            WorldError::Command(failure) => write!(f, "{}: {}", failure.request, failure.error),
            #[cfg(feature = "transform")]
            WorldError::Hierarchy(e) => write!(f, "transform hierarchy: {e}"),
        }
    }
}

impl std::error::Error for WorldError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WorldError::Entity(e) => Some(e),
            WorldError::Command(failure) => Some(&failure.error),
            #[cfg(feature = "transform")]
            WorldError::Hierarchy(e) => Some(e),
            _ => None,
        }
    }
}

/// Component set `mask` of model `M` as text, as its `ComponentSet` writes it
/// (`POSITION | VELOCITY`; empty for the empty set) and reads it back (`FromStr`).
pub(crate) fn set_names<M: crate::WorldModel>(mask: M::Set) -> String {
    <M::ComponentSet as bitflags::Flags>::from_bits_retain(mask).to_string()
}

/// A set's text in a sentence: in backticks, or "the empty set".
pub(crate) fn shown(set: &str) -> String {
    if set.is_empty() {
        "the empty set".into()
    } else {
        format!("`{set}`")
    }
}

impl From<EntityError> for WorldError {
    fn from(e: EntityError) -> Self {
        WorldError::Entity(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_names_are_the_named_sets_text() {
        use crate::test_model::Model;
        let set = |ids: &[u32]| ids.iter().copied().collect::<crate::ComponentBits<1>>();
        assert_eq!(set_names::<Model>(set(&[2, 0])), "A | S");
        assert_eq!(set_names::<Model>(set(&[])), "");
        assert_eq!(
            set_names::<Model>(set(&[1, 40])),
            "B | 0x10000000000",
            "bits past the model's components stay visible"
        );
    }

    #[test]
    fn undeclared_signature_error_says_how_to_fix() {
        let e = WorldError::UndeclaredSignature {
            entity: Entity::new(4, 0),
            change: Change::Insert,
            component: "B",
            signature: "JustA",
            current: "A".into(),
            missing: "A | B".into(),
        };
        let text = e.to_string();
        assert!(
            text.starts_with("cannot insert `B` into entity 4v0"),
            "{text}"
        );
        assert!(
            text.contains("`JustA` is `A`, and `A | B` is not a declared signature"),
            "{text}"
        );
        assert!(
            text.contains("one field per component of `A | B`"),
            "{text}"
        );
        assert!(text.contains("#[derive(Signature)]"));
        assert!(!text.contains("despawn"), "{text}");
        let e = WorldError::UndeclaredSignature {
            entity: Entity::new(4, 0),
            change: Change::Remove,
            component: "A",
            signature: "JustA",
            current: "A".into(),
            missing: "".into(),
        };
        let text = e.to_string();
        assert!(
            text.contains("and the empty set is not a declared signature"),
            "{text}"
        );
        assert!(text.contains("despawn the entity"), "{text}");
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
