//! [`LevelError`]: everything that can be wrong with a blob, a registry or a writer's input.

use std::fmt;

/// A component as errors name it: its level name when the registry knows it, and always its
/// identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentRef {
    /// The component identifier (FNV-1a 64 of the level name).
    pub identifier: u64,
    /// The registered level name, if the registry knows the identifier.
    pub name: Option<&'static str>,
}

impl fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => write!(f, "`{name}`"),
            None => write!(f, "unknown component {:#018x}", self.identifier),
        }
    }
}

/// Why a blob was refused by the verifier, or why a registry or a writer could not be built.
///
/// Offsets are byte offsets from the blob's first byte; entity indices are the level's own
/// (`0..num_entities`, the order of `"entities"` in the JSON it was compiled from).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LevelError {
    /// The blob ended (or a length ran) past the bytes there are.
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Where it starts.
        offset: usize,
        /// Bytes it needs.
        needed: usize,
        /// Bytes that remain.
        available: usize,
    },
    /// A count claims more items than the remaining bytes could hold; refused before allocating.
    CountTooLarge {
        /// What is counted.
        what: &'static str,
        /// The count read.
        count: u64,
        /// Where the counted items would start.
        offset: usize,
        /// Bytes that remain.
        remaining: usize,
    },
    /// The first 8 bytes are not the format's magic (`\x89SGR\r\n\x1a\n`): not a level.
    BadMagic,
    /// A version this build does not read.
    UnsupportedVersion {
        /// Version in the header.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// A flag or reserved header field that must be zero is not.
    ReservedNonZero {
        /// The field.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// `total_len` in the header differs from the blob's length.
    LengthMismatch {
        /// `total_len` in the header.
        header: u32,
        /// Bytes actually given.
        actual: usize,
    },
    /// The body's checksum differs from the header's: the blob was damaged.
    ChecksumMismatch {
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the body as given.
        computed: u32,
    },
    /// A padding byte is not zero.
    NonZeroPadding {
        /// Offset of the first nonzero padding byte.
        offset: usize,
    },
    /// Bytes follow the last component type record.
    TrailingBytes {
        /// Offset of the first extra byte.
        offset: usize,
    },
    /// A parent index is neither `0xffffffff` (a root) nor an entity of the level.
    ParentOutOfRange {
        /// The child.
        entity: u32,
        /// Its parent index.
        parent: u32,
        /// Entities in the level.
        num_entities: u32,
    },
    /// Following parents from an entity comes back to it: the hierarchy is not a forest.
    ParentCycle {
        /// An entity on the cycle (the first one found).
        entity: u32,
        /// The cycle's entities from `entity`, each followed by its parent: all of them, or
        /// the first [`CYCLE_SHOWN`](Self::CYCLE_SHOWN) of a longer cycle.
        cycle: Vec<u32>,
        /// How many entities the cycle has.
        len: u32,
    },
    /// Component type records are not in strictly ascending identifier order.
    UnsortedComponentTypes {
        /// Offset of the out-of-order record.
        offset: usize,
        /// The identifier of the record before it.
        previous: u64,
        /// Its identifier.
        identifier: u64,
    },
    /// One component type has two records.
    DuplicateComponentType {
        /// The component.
        component: ComponentRef,
    },
    /// A record's `encoding` field is neither POD (0) nor postcard (1), or a postcard record has a
    /// nonzero `element_size`.
    BadEncoding {
        /// The component.
        component: ComponentRef,
        /// The `encoding` field.
        encoding: u32,
        /// The `element_size` field.
        element_size: u32,
    },
    /// A POD record's `size` is not `num_instances × element_size`.
    SizeMismatch {
        /// The component.
        component: ComponentRef,
        /// `num_instances`.
        num_instances: u32,
        /// `element_size`.
        element_size: u32,
        /// `size`.
        size: u32,
    },
    /// The record's encoding or element size is not the registered component's: the component
    /// changed since the blob was compiled, or another component has the same level name.
    EncodingMismatch {
        /// The component.
        component: ComponentRef,
        /// What the registry says, e.g. `pod, 12 bytes`.
        expected: String,
        /// What the record says.
        found: String,
    },
    /// An instance names an entity the level does not have.
    EntityIndexOutOfRange {
        /// The component.
        component: ComponentRef,
        /// The instance's position in its record.
        instance: u32,
        /// The entity index it names.
        entity: u32,
        /// Entities in the level.
        num_entities: u32,
    },
    /// An entity holds one component type twice (two instances name it).
    DuplicateComponent {
        /// The component.
        component: ComponentRef,
        /// The entity.
        entity: u32,
    },
    /// A record's entity indices are not strictly ascending (canonical order).
    UnsortedInstances {
        /// The component.
        component: ComponentRef,
        /// The instance whose entity index is below its predecessor's.
        instance: u32,
    },
    /// The registry does not know this component and the options refuse unknown components.
    UnknownComponent {
        /// The component.
        component: ComponentRef,
    },
    /// An instance of a postcard component does not decode, is not canonical, or the record has
    /// bytes left after its last instance.
    Decode {
        /// The component.
        component: ComponentRef,
        /// The instance.
        instance: u32,
        /// What went wrong.
        message: String,
    },
    /// An entity's set of components is not a declared signature: the message is the world's own
    /// (the same text as its `insert`).
    UndeclaredSignature {
        /// The first entity with this set.
        entity: u32,
        /// The set, e.g. `{position, velocity}`.
        components: String,
        /// The world's explanation.
        message: String,
    },
    /// A component that holds entities refers to one that is neither
    /// [`NO_ENTITY`](super::NO_ENTITY) nor an entity of the level.
    ReferenceOutOfRange {
        /// The component.
        component: ComponentRef,
        /// The entity's bits as stored.
        value: u64,
        /// Entities in the level.
        num_entities: u32,
    },
    /// The world could not issue the level's entities (its index space is exhausted); nothing
    /// was spawned.
    Entities(sigecs::entity::EntityError),
    /// The transform manager refused an instance or a link; nothing was spawned.
    #[cfg(feature = "transform")]
    Transform(sigecs::transform::TransformError),
    /// The level holds a hierarchy (an entity with a parent or a `local_transform`) and this
    /// build has no transform hierarchy to spawn it into (sigecs's `transform` feature is off),
    /// nor was a spawner given that takes `local_transform`; nothing was spawned.
    NeedsTransform {
        /// The first entity in the hierarchy.
        entity: u32,
    },
    /// The level holds instances of a component kept outside the stores
    /// ([`Registration::kept_outside`](super::Registration::kept_outside)) and none of the
    /// spawners given takes it; nothing was spawned.
    NoSpawner {
        /// The component.
        component: ComponentRef,
    },
    /// Two of the spawners given take one component; nothing was spawned.
    TwoSpawners {
        /// The component.
        component: ComponentRef,
    },
    /// A spawner given takes a component that is not registered as kept outside the stores (it
    /// would live in a store too); nothing was spawned.
    NotKeptOutside {
        /// The component.
        component: ComponentRef,
    },
    /// A spawner of components kept outside the stores refused the level's instances (for
    /// example an entity that already has an instance in its manager); nothing was spawned.
    Outside {
        /// The component.
        component: ComponentRef,
        /// The spawner's reason.
        message: String,
    },
    /// The level was verified against other signatures than this world's (another world's,
    /// or [`AnySet`](super::AnySet)): verify it with the world's own check.
    NotThisWorld {
        /// The component set, e.g. `{position, velocity}`.
        components: String,
        /// Why this world refuses it, or which store it would use instead.
        message: String,
    },
    /// Save was given an entity that is not alive.
    NotAlive {
        /// Its position in the list given.
        position: u32,
    },
    /// Save was given one entity twice.
    DuplicateEntity {
        /// The position of its second occurrence in the list given.
        position: u32,
    },
    /// A value does not fit the format's 32-bit sizes (more than 4 GiB, or 2³² items).
    TooLarge {
        /// What overflowed.
        what: &'static str,
    },
    /// The writer was given an entity index it does not have.
    NoSuchEntity {
        /// The index.
        entity: u32,
        /// Entities added so far.
        num_entities: u32,
    },
    /// A value was pushed or read as a Rust type that is not the registered component's type.
    WrongType {
        /// The component.
        component: ComponentRef,
        /// The registered type.
        expected: &'static str,
        /// The type used.
        found: &'static str,
    },
    /// A value could not be encoded (postcard refused it: for example a map of unknown length).
    Encode {
        /// The component.
        component: ComponentRef,
        /// postcard's message.
        message: String,
    },
    /// Two registrations share a level name.
    DuplicateName {
        /// The name.
        name: &'static str,
    },
    /// Two different level names hash to one identifier: rename one of them.
    IdentifierCollision {
        /// The first name.
        first: &'static str,
        /// The second name.
        second: &'static str,
        /// Their identifier.
        identifier: u64,
    },
    /// One Rust type is registered under two level names.
    DuplicateType {
        /// The type.
        type_name: &'static str,
        /// The first name.
        first: &'static str,
        /// The second name.
        second: &'static str,
    },
}

impl fmt::Display for LevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LevelError::*;
        match self {
            Truncated { what, offset, needed, available } => write!(
                f,
                "truncated level: {what} at byte {offset} needs {needed} bytes but only {available} remain"
            ),
            CountTooLarge { what, count, offset, remaining } => write!(
                f,
                "{what} at byte {offset} claims {count} items, more than the {remaining} remaining bytes can hold"
            ),
            BadMagic => f.write_str(
                "not a sigecs level: the first 8 bytes are not the magic \\x89SGR\\r\\n\\x1a\\n (compile JSON levels first)",
            ),
            UnsupportedVersion { found, supported } => write!(
                f,
                "level version {found} is not supported (this build reads version {supported}); recompile it from its JSON"
            ),
            ReservedNonZero { what, value } => {
                write!(f, "header field `{what}` must be 0 in this version but is {value:#x}")
            }
            LengthMismatch { header, actual } => write!(
                f,
                "the header says the level is {header} bytes long but {actual} bytes were given (truncated or padded file?)"
            ),
            ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch: the header says {stored:#010x}, the body's CRC-32 is {computed:#010x}; the level is damaged"
            ),
            NonZeroPadding { offset } => write!(f, "padding byte at {offset} is not zero"),
            TrailingBytes { offset } => write!(f, "unexpected bytes after the last component type, from byte {offset}"),
            ParentOutOfRange { entity, parent, num_entities } => write!(
                f,
                "entity {entity} has parent {parent}, but the level has {num_entities} entities (use {:#x} for a root)",
                u32::MAX
            ),
            ParentCycle { entity, cycle, len } => write!(
                f,
                "the parent chain from entity {entity} comes back to it: the hierarchy has a cycle ({})",
                cycle_text(*entity, cycle, *len)
            ),
            UnsortedComponentTypes { offset, previous, identifier } => write!(
                f,
                "component type record at byte {offset} ({identifier:#018x}) follows {previous:#018x}: records must be in ascending identifier order"
            ),
            DuplicateComponentType { component } => write!(f, "component {component} has two records"),
            BadEncoding { component, encoding, element_size } => write!(
                f,
                "component {component} has encoding {encoding} with element size {element_size}; expected 0 (POD) or 1 (postcard, element size 0)"
            ),
            SizeMismatch { component, num_instances, element_size, size } => write!(
                f,
                "component {component}: {num_instances} instances of {element_size} bytes do not make {size} bytes"
            ),
            EncodingMismatch { component, expected, found } => write!(
                f,
                "component {component} is registered as {expected} but the level stores it as {found}; recompile the level"
            ),
            EntityIndexOutOfRange { component, instance, entity, num_entities } => write!(
                f,
                "instance {instance} of component {component} belongs to entity {entity}, but the level has {num_entities} entities"
            ),
            DuplicateComponent { component, entity } => {
                write!(f, "entity {entity} holds component {component} twice")
            }
            UnsortedInstances { component, instance } => write!(
                f,
                "instance {instance} of component {component} is out of order: entity indices must ascend"
            ),
            UnknownComponent { component } => write!(
                f,
                "{component} is not registered, and unknown components are refused by the options"
            ),
            Decode { component, instance, message } => {
                write!(f, "instance {instance} of component {component} does not decode: {message}")
            }
            UndeclaredSignature { entity, components, message } => write!(
                f,
                "entity {entity} has components {components}, which is no declared signature: {message}"
            ),
            ReferenceOutOfRange { component, value, num_entities } => write!(
                f,
                "component {component} refers to entity {value}, but the level has {num_entities} entities (use {} for no entity)",
                super::NO_ENTITY.to_bits()
            ),
            Entities(e) => write!(f, "cannot spawn the level: {e}"),
            #[cfg(feature = "transform")]
            Transform(e) => write!(f, "cannot link the level's hierarchy: {e}"),
            NeedsTransform { entity } => write!(
                f,
                "the level has a hierarchy (entity {entity} has a parent or a `local_transform`), and spawning one needs sigecs-level's `transform` feature: enable it, or pass a spawner that takes `local_transform`"
            ),
            NoSpawner { component } => write!(
                f,
                "the level holds component {component}, which is kept outside the stores, and no spawner given takes it: pass its manager (or use spawn_level, which spawns the stores' components only)"
            ),
            TwoSpawners { component } => write!(f, "two of the spawners given take component {component}; pass one"),
            NotKeptOutside { component } => write!(
                f,
                "a spawner given takes component {component}, which is registered for the signature stores: register it with `.kept_outside()`"
            ),
            Outside { component, message } => {
                write!(f, "cannot spawn the level's component {component}: {message}")
            }
            NotThisWorld { components, message } => write!(
                f,
                "the level was verified against other signatures than this world's: for {components}, {message}; verify it with the world's own signature check"
            ),
            NotAlive { position } => write!(f, "entity {position} of the list to save is not alive"),
            DuplicateEntity { position } => write!(f, "entity {position} of the list to save appears twice"),
            TooLarge { what } => write!(f, "{what} does not fit the format's 32-bit sizes"),
            NoSuchEntity { entity, num_entities } => write!(
                f,
                "entity index {entity} does not exist (the level has {num_entities} entities)"
            ),
            WrongType { component, expected, found } => write!(
                f,
                "component {component} is registered with type {expected}, not {found}"
            ),
            Encode { component, message } => write!(f, "component {component} could not be encoded: {message}"),
            DuplicateName { name } => write!(f, "level name `{name}` is registered twice"),
            IdentifierCollision { first, second, identifier } => write!(
                f,
                "level names `{first}` and `{second}` hash to the same identifier {identifier:#018x}; rename one"
            ),
            DuplicateType { type_name, first, second } => write!(
                f,
                "type {type_name} is registered twice, as `{first}` and as `{second}`"
            ),
        }
    }
}

impl std::error::Error for LevelError {}

impl LevelError {
    /// The most entities of a cycle that [`LevelError::ParentCycle`] lists.
    pub const CYCLE_SHOWN: usize = 8;
}

/// `3 -> 7 -> 3`, or `3 -> 4 -> … -> 3 (1000 entities)` for a cycle longer than it shows.
pub(crate) fn cycle_text(entity: u32, cycle: &[u32], len: u32) -> String {
    let mut text: String = cycle.iter().map(|e| format!("{e} -> ")).collect();
    if cycle.len() < len as usize {
        text.push_str(&format!("… -> {entity}, {len} entities"));
    } else {
        text.push_str(&entity.to_string());
    }
    text
}
