//! Structure-of-arrays managers as [`OutsideStores`](crate::OutsideStores) spawners, written once for every
//! [`SoaManager`] whose instance struct is plain old data: `#[derive(SoaManager)]` on a
//! `#[repr(C)]` `bytemuck::Pod` struct declared a level struct (`#[soa(level = "heat")]`)
//! implements [`OutsideStores`](crate::OutsideStores) for its manager by calling these functions.
//!
//! (The derive implements the trait for each manager because a blanket implementation over
//! every `SoaManager` would conflict with the one for `TransformManager`: both types come from
//! sigecs, which could implement `SoaManager` for `TransformManager` some day.)
//!
//! The manager takes the component registered with its instance struct's type
//! (`Registration::pod::<Row>(name).kept_outside()`, what the build script generates). Spawning gives each entity of the level
//! that has the component one instance with the stored value; [`prepare`](crate::OutsideStores::prepare)
//! refuses the spawn ([`LevelError::Outside`]) when one of those entities already has an
//! instance in the manager or the manager has no room, so [`write`](crate::OutsideStores::write) cannot
//! fail. Saving writes the instance of every saved entity that has one.

use bytemuck::Pod;

use super::error::LevelError;
use super::outside::{OutsideSave, OutsideSpawn};
use super::registry::Registration;
use sigecs::soa::{SoaError, SoaManager, MAX_INSTANCES};

/// [`OutsideStores::takes`](crate::OutsideStores::takes) of manager `M`: the registration of its struct.
pub fn takes_soa<M: SoaManager>(_manager: &M, registration: &Registration) -> bool
where
    M::Row: 'static,
{
    registration.is::<M::Row>()
}

/// [`OutsideStores::prepare`](crate::OutsideStores::prepare) of manager `M`: refuses an entity that already has an
/// instance, and more instances than the manager has room for.
pub fn prepare_soa<M: SoaManager>(manager: &M, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError>
where
    M::Row: Pod,
{
    let Some(data) = spawn.component_of::<M::Row>() else {
        return Ok(());
    };
    data.pod::<M::Row>()?;
    let store = manager.soa_store();
    let refuse = |message: String| LevelError::Outside {
        component: data.component_ref(),
        message,
    };
    if data.len() as usize > MAX_INSTANCES - store.len() {
        return Err(refuse(format!(
            "the manager holds {} instances and has room for {} more, not {}",
            store.len(),
            MAX_INSTANCES - store.len(),
            data.len()
        )));
    }
    if store.is_empty() {
        return Ok(()); // It holds none of the spawned entities.
    }
    let spawned = spawn.spawned();
    for e in data.entity_indices() {
        let entity = spawned[e as usize];
        if let Some(instance) = store.lookup(entity) {
            return Err(refuse(
                SoaError::AlreadyExists { entity, instance }.to_string(),
            ));
        }
    }
    Ok(())
}

/// [`OutsideStores::write`](crate::OutsideStores::write) of manager `M`: one instance per entity that has the struct.
pub fn write_soa<M: SoaManager>(manager: &mut M, spawn: &OutsideSpawn<'_>)
where
    M::Row: Pod,
    M::Columns: Copy,
{
    let Some(data) = spawn.component_of::<M::Row>() else {
        return;
    };
    let values = data.pod::<M::Row>().expect("checked in prepare");
    let spawned = spawn.spawned();
    let store = manager.soa_store_mut();
    store.reserve(values.len());
    for (e, &row) in data.entity_indices().zip(values.iter()) {
        store
            .create(spawned[e as usize], M::row_into_columns(row))
            .expect("prepare checked that no spawned entity has an instance");
    }
}

/// [`OutsideStores::save`](crate::OutsideStores::save) of manager `M`: the instance of every saved entity that has one.
pub fn save_soa<M: SoaManager>(manager: &M, save: &mut OutsideSave<'_>) -> Result<(), LevelError>
where
    M::Row: Pod,
    M::Columns: Copy,
{
    let Some(reg) = save.registry().by_type::<M::Row>() else {
        return Ok(());
    };
    let store = manager.soa_store();
    let entities = save.entities();
    for (i, &e) in entities.iter().enumerate() {
        if let Some(instance) = store.lookup(e) {
            let row = M::row_from_columns(store.copied(instance));
            save.writer().push(reg, i as u32, &row)?;
        }
    }
    Ok(())
}
