//! Structure-of-arrays managers as [`OutsideStores`] spawners, written once for every
//! [`SoaManager`] whose instance struct is plain old data (`#[derive(SoaManager)]` on a
//! `#[repr(C)]` `bytemuck::Pod` struct).
//!
//! The manager takes the component registered with its instance struct's type
//! (`Registration::pod::<Row>(name).kept_outside()`). Spawning gives each entity of the level
//! that has the component one instance with the stored value; [`prepare`](OutsideStores::prepare)
//! refuses the spawn ([`LevelError::Outside`]) when one of those entities already has an
//! instance in the manager or the manager has no room, so [`write`](OutsideStores::write) cannot
//! fail. Saving writes the instance of every saved entity that has one.

use bytemuck::Pod;

use super::error::LevelError;
use super::outside::{OutsideSave, OutsideSpawn, OutsideStores};
use super::registry::Registration;
use crate::soa::{SoaError, SoaManager, MAX_INSTANCES};

impl<M> OutsideStores for M
where
    M: SoaManager,
    M::Row: Pod,
    M::Columns: Copy,
{
    fn takes(&self, registration: &Registration) -> bool {
        registration.is::<M::Row>()
    }

    fn prepare(&mut self, spawn: &OutsideSpawn<'_>) -> Result<(), LevelError> {
        let Some(data) = spawn.component_of::<M::Row>() else {
            return Ok(());
        };
        data.pod::<M::Row>()?;
        let store = self.soa_store();
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

    fn write(&mut self, spawn: &OutsideSpawn<'_>) {
        let Some(data) = spawn.component_of::<M::Row>() else {
            return;
        };
        let values = data.pod::<M::Row>().expect("checked in prepare");
        let spawned = spawn.spawned();
        let store = self.soa_store_mut();
        store.reserve(values.len());
        for (e, &row) in data.entity_indices().zip(values.iter()) {
            store
                .create(spawned[e as usize], M::row_into_columns(row))
                .expect("prepare checked that no spawned entity has an instance");
        }
    }

    fn save(&self, save: &mut OutsideSave<'_>) -> Result<(), LevelError> {
        let Some(reg) = save.registry().by_type::<M::Row>() else {
            return Ok(());
        };
        let store = self.soa_store();
        let entities = save.entities();
        for (i, &e) in entities.iter().enumerate() {
            if let Some(instance) = store.lookup(e) {
                let row = M::row_from_columns(store.copied(instance));
                save.writer().push(reg, i as u32, &row)?;
            }
        }
        Ok(())
    }
}
