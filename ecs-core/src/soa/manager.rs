//! What `#[derive(SoaManager)]` makes: the [`SoaManager`] trait every generated manager
//! implements, and the macro behind the derive, a named manager over a
//! [`SoaStore`](super::SoaStore) with one accessor set per field. The macro names only `$crate`
//! and `::core` paths, so it expands the same in any crate. Exported at the crate root (as every
//! `macro_export` macro is) and re-exported as `sigecs::soa::__soa_manager`, the path the
//! derive uses.

use super::{Columns, Lookup, SoaStore};

/// A structure-of-arrays component manager made by `#[derive(SoaManager)]`: its instance struct, its store and the
/// conversions between the two, for code written once for every manager.
///
/// A manager whose plain-old-data struct is declared a level struct
/// (`#[soa(level = "name")]`) is also a level spawner: the derive implements
/// `sigecs_level::OutsideStores` for it, so levels can hold the struct.
pub trait SoaManager {
    /// The instance struct (the one the derive is on).
    type Row;
    /// The field types, as the store's `Columns` tuple.
    #[doc(hidden)]
    type Columns: Columns;
    /// The entity lookup.
    #[doc(hidden)]
    type Lookup: Lookup;

    /// The store.
    #[doc(hidden)]
    fn soa_store(&self) -> &SoaStore<Self::Columns, Self::Lookup>;

    /// The store, mutably.
    #[doc(hidden)]
    fn soa_store_mut(&mut self) -> &mut SoaStore<Self::Columns, Self::Lookup>;

    /// An instance struct as the store's field tuple (moves every field).
    #[doc(hidden)]
    fn row_into_columns(row: Self::Row) -> Self::Columns;

    /// A field tuple as the instance struct (moves every field).
    #[doc(hidden)]
    fn row_from_columns(columns: Self::Columns) -> Self::Row;
}

/// Expands to a named component manager over [`SoaStore`](crate::soa::SoaStore). Used by
/// `#[derive(SoaManager)]`, which computes the names and validates the struct; not meant to be
/// invoked by hand.
#[doc(hidden)]
#[macro_export]
macro_rules! __soa_manager {
    (
        $(#[$attr:meta])*
        manager: $vis:vis $manager:ident,
        row: $row:ident,
        columns: $columns:ident, $columns_mut:ident,
        lookup: $lookup:ty,
        fields: [$({
            $k:tt, $fvis:vis $field:ident: $ty:ty,
            $field_mut:ident, $set_field:ident, $field_column:ident, $field_column_mut:ident
        })*]
    ) => {
        $(#[$attr])*
        $vis struct $manager {
            store: $crate::soa::SoaStore<($($ty,)*), $lookup>,
        }

        #[doc = ::core::concat!(
            "Every column of a [`", ::core::stringify!($manager), "`], borrowed shared (from [`",
            ::core::stringify!($manager), "::columns`])."
        )]
        #[derive(::core::clone::Clone, ::core::marker::Copy)]
        $vis struct $columns<'a> {
            /// The owning entity of each instance.
            pub entities: &'a [$crate::entity::Entity],
            $(
                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` of each instance.")]
                $fvis $field: &'a [$ty],
            )*
        }

        #[doc = ::core::concat!(
            "Every column of a [`", ::core::stringify!($manager),
            "`], the fields borrowed mutably (from [`", ::core::stringify!($manager),
            "::columns_mut`]), for loops that update several fields."
        )]
        $vis struct $columns_mut<'a> {
            /// The owning entity of each instance (read-only: rows move only by create/destroy).
            pub entities: &'a [$crate::entity::Entity],
            $(
                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` of each instance.")]
                $fvis $field: &'a mut [$ty],
            )*
        }

        impl ::core::default::Default for $manager {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::core::fmt::Debug for $manager {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($manager))
                    .field("store", &self.store)
                    .finish()
            }
        }

        impl $crate::soa::SoaManager for $manager {
            type Row = $row;
            type Columns = ($($ty,)*);
            type Lookup = $lookup;

            #[inline]
            fn soa_store(&self) -> &$crate::soa::SoaStore<($($ty,)*), $lookup> {
                &self.store
            }

            #[inline]
            fn soa_store_mut(&mut self) -> &mut $crate::soa::SoaStore<($($ty,)*), $lookup> {
                &mut self.store
            }

            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn row_into_columns(row: $row) -> ($($ty,)*) {
                ($(row.$field,)*)
            }

            #[inline]
            #[allow(unused_variables)]
            fn row_from_columns(columns: ($($ty,)*)) -> $row {
                $row { $($field: columns.$k,)* }
            }
        }

        #[allow(dead_code, unused_variables)]
        impl $manager {
            /// An empty manager. Allocates nothing until the first `create`.
            pub fn new() -> Self {
                Self { store: $crate::soa::SoaStore::new() }
            }

            /// An empty manager with room for `capacity` instances.
            pub fn with_capacity(capacity: usize) -> Self {
                Self { store: $crate::soa::SoaStore::with_capacity(capacity) }
            }

            /// Number of instances.
            #[inline]
            pub fn len(&self) -> usize {
                self.store.len()
            }

            /// True when there are no instances.
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.store.is_empty()
            }

            /// Number of instances the current allocation holds.
            #[inline]
            pub fn capacity(&self) -> usize {
                self.store.capacity()
            }

            /// Makes room for at least `additional` more instances.
            pub fn reserve(&mut self, additional: usize) {
                self.store.reserve(additional)
            }

            /// Shrinks the allocation to the number of instances.
            pub fn shrink_to_fit(&mut self) {
                self.store.shrink_to_fit()
            }

            /// The instance of `entity`, or `None` (stale ids included).
            #[inline]
            pub fn lookup(&self, entity: $crate::entity::Entity)
                -> ::core::option::Option<$crate::soa::Instance>
            {
                self.store.lookup(entity)
            }

            /// Does `entity` have an instance?
            #[inline]
            pub fn contains(&self, entity: $crate::entity::Entity) -> bool {
                self.store.contains(entity)
            }

            /// The entity owning instance `i`. Panics if `i` is out of range.
            #[inline]
            pub fn entity(&self, i: $crate::soa::Instance) -> $crate::entity::Entity {
                self.store.entity(i)
            }

            /// The owner of every instance, in row order.
            #[inline]
            pub fn entities(&self) -> &[$crate::entity::Entity] {
                self.store.entities()
            }

            /// Every instance, in row order.
            pub fn instances(&self) -> impl ::core::iter::ExactSizeIterator<
                Item = $crate::soa::Instance,
            > + use<> {
                self.store.instances()
            }

            #[doc = ::core::concat!(
                "Creates an instance for `entity` from a [`", ::core::stringify!($row),
                "`]. Fails, dropping `values`, if `entity` already has one."
            )]
            pub fn create(
                &mut self,
                entity: $crate::entity::Entity,
                values: $row,
            ) -> ::core::result::Result<$crate::soa::Instance, $crate::soa::SoaError> {
                self.store.create(entity, ($(values.$field,)*))
            }

            /// Destroys instance `i` by swap-erase. Panics if `i` is out of range.
            pub fn destroy(&mut self, i: $crate::soa::Instance) {
                self.store.destroy(i)
            }

            /// Destroys `entity`'s instance; returns whether it had one.
            pub fn destroy_entity(&mut self, entity: $crate::entity::Entity) -> bool {
                self.store.destroy_entity(entity)
            }

            /// Destroys every instance, keeping the allocation.
            pub fn clear(&mut self) {
                self.store.clear()
            }

            /// Lazy GC: random probes until four live entities in a row. Returns how
            /// many instances it destroyed.
            pub fn gc(&mut self, em: &$crate::entity::EntityManager) -> usize {
                self.store.gc(em)
            }

            /// Destroys the instance of every dead entity. Returns how many.
            pub fn gc_all(&mut self, em: &$crate::entity::EntityManager) -> usize {
                self.store.gc_all(em)
            }

            /// A handle to the queue that the destroy hook fills.
            pub fn destroy_queue(&self) -> $crate::soa::DestroyQueue {
                self.store.destroy_queue()
            }

            /// Registers a destroy hook with `em` that queues destroyed entities for
            /// `flush_destroyed` (immediate clean-up).
            pub fn register_destroy_hook(
                &self,
                em: &mut $crate::entity::EntityManager,
            ) -> $crate::entity::DestroyHookId {
                self.store.register_destroy_hook(em)
            }

            /// Destroys the instances of the queued entities. Returns how many.
            pub fn flush_destroyed(&mut self) -> usize {
                self.store.flush_destroyed()
            }

            /// Every column as a shared slice.
            #[inline]
            pub fn columns(&self) -> $columns<'_> {
                let fields = self.store.fields();
                $columns { entities: self.store.entities(), $($field: fields.$k,)* }
            }

            /// The entity column and every field column as a mutable slice, for loops that
            /// update several fields at once.
            #[inline]
            pub fn columns_mut(&mut self) -> $columns_mut<'_> {
                let (entities, fields) = self.store.columns_mut();
                $columns_mut { entities, $($field: fields.$k,)* }
            }

            $(
                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field),
                    "` of instance `i`. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $field(&self, i: $crate::soa::Instance) -> &$ty {
                    &self.store.fields().$k[i.index()]
                }

                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field),
                    "` of instance `i`, mutably. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $field_mut(&mut self, i: $crate::soa::Instance) -> &mut $ty {
                    &mut self.store.fields_mut().$k[i.index()]
                }

                #[doc = ::core::concat!(
                    "Sets the `", ::core::stringify!($field),
                    "` of instance `i`, dropping the old value. Panics if `i` is out of range."
                )]
                #[inline]
                $fvis fn $set_field(&mut self, i: $crate::soa::Instance, value: $ty) {
                    self.store.fields_mut().$k[i.index()] = value;
                }

                #[doc = ::core::concat!(
                    "The `", ::core::stringify!($field), "` column: one value per instance."
                )]
                #[inline]
                $fvis fn $field_column(&self) -> &[$ty] {
                    self.store.fields().$k
                }

                #[doc = ::core::concat!("The `", ::core::stringify!($field), "` column, mutably.")]
                #[inline]
                $fvis fn $field_column_mut(&mut self) -> &mut [$ty] {
                    self.store.fields_mut().$k
                }
            )*
        }
    };
}
