//! The classic SoA manager's example component: [`PointMass`] and its manager [`PointMassManager`], an
//! invocation of the same macro `#[derive(SoaManager)]` expands to, plus `simulate`.

use glam::Vec3;

use super::HashLookup;

/// The point-mass component of part 2: the field values of one [`PointMassManager`] instance.
///
/// With the `level` feature it is plain old data (`#[repr(C)]`, no padding) and serde, so
/// levels can hold it: register it with `Registration::pod::<PointMass>("point_mass")
/// .kept_outside()` and spawn into a [`PointMassManager`] (an
/// [`OutsideStores`](crate::level::OutsideStores) spawner, as every manager of a POD struct).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(
    feature = "level",
    derive(
        bytemuck::Pod,
        bytemuck::Zeroable,
        serde::Serialize,
        serde::Deserialize
    )
)]
#[repr(C)]
pub struct PointMass {
    /// Mass of the object.
    pub mass: f32,
    /// The object's position.
    pub position: Vec3,
    /// The object's velocity.
    pub velocity: Vec3,
    /// The object's acceleration.
    pub acceleration: Vec3,
}

crate::__soa_manager! {
    /// The classic SoA manager's point-mass component manager: entity, mass, position, velocity and acceleration
    /// columns in one allocation, with a hash lookup. It is what
    /// `#[derive(SoaManager)] #[soa(manager = "PointMassManager")]` on [`PointMass`] generates,
    /// plus [`PointMassManager::simulate`].
    manager: pub PointMassManager,
    row: PointMass,
    columns: PointMassColumns, PointMassColumnsMut,
    lookup: HashLookup,
    fields: [
        { 0, pub mass: f32, mass_mut, set_mass, mass_column, mass_column_mut }
        { 1, pub position: Vec3, position_mut, set_position, position_column, position_column_mut }
        { 2, pub velocity: Vec3, velocity_mut, set_velocity, velocity_column, velocity_column_mut }
        {
            3, pub acceleration: Vec3,
            acceleration_mut, set_acceleration, acceleration_column, acceleration_column_mut
        }
    ]
}

impl PointMassManager {
    /// The classic SoA manager's `simulate`: `v += a * dt; p += v * dt` for every instance, one pass over three
    /// columns (zipped slice iterators: no bounds checks or lookups in the loop).
    pub fn simulate(&mut self, dt: f32) {
        let columns = self.columns_mut();
        for ((p, v), a) in columns
            .position
            .iter_mut()
            .zip(columns.velocity.iter_mut())
            .zip(columns.acceleration.iter())
        {
            *v += *a * dt;
            *p += *v * dt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::Entity;
    use crate::soa::ent;

    #[test]
    fn point_mass_manager_accessors_and_simulate() {
        let mut m = PointMassManager::with_capacity(3);
        assert_eq!(m.capacity(), 4);
        let es: Vec<Entity> = (0..3).map(|i| ent(i, 0)).collect();
        for (n, e) in es.iter().enumerate() {
            let n = n as f32;
            m.create(
                *e,
                PointMass {
                    mass: n,
                    position: Vec3::splat(n),
                    velocity: Vec3::X,
                    acceleration: Vec3::new(0.0, -2.0, 0.0),
                },
            )
            .unwrap();
        }
        let i = m.lookup(es[2]).unwrap();
        assert_eq!(m.entity(i), es[2]);
        m.set_mass(i, 9.0);
        *m.velocity_mut(i) = Vec3::ZERO;
        assert_eq!(*m.mass(i), 9.0);
        assert_eq!(m.mass_column(), &[0.0, 1.0, 9.0]);
        m.simulate(0.5);
        // v = v + a dt; p = p + v dt
        assert_eq!(*m.velocity(i), Vec3::new(0.0, -1.0, 0.0));
        assert_eq!(*m.position(i), Vec3::new(2.0, 1.5, 2.0));
        let j = m.lookup(es[0]).unwrap();
        assert_eq!(*m.position(j), Vec3::new(0.5, -0.5, 0.0));
        for v in m.velocity_column_mut() {
            *v = Vec3::ZERO;
        }
        m.acceleration_column_mut().fill(Vec3::ZERO);
        m.simulate(1.0);
        assert_eq!(*m.position(j), Vec3::new(0.5, -0.5, 0.0));
        let c = m.columns();
        assert_eq!(c.entities, &es[..]);
        assert_eq!(c.mass.len(), 3);
        assert_eq!(m.instances().map(|i| m.entity(i)).collect::<Vec<_>>(), es);
        assert!(format!("{m:?}").contains("PointMassManager"));
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<PointMassManager>();
    }
}
