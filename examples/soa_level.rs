//! A level whose entities have components in three places: the bundled world's signature
//! stores (`position`, `name`), the transform hierarchy (`local_transform`, `parent`) and a
//! structure-of-arrays manager (`point_mass`, kept outside the stores). One spawn fills all
//! three, atomically; after a few simulation steps, save writes all three back.
//!
//! `cargo run --example soa_level`

use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::DebugName;
use sigecs_demo::{level_registry, World};
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use sigecs_level::{EntityCompiler, Registration, VerifyOptions, WorldLevels};
use std::error::Error;

const LEVEL: &str = r#"{"entities": [
    {"components": {"position": [0, 10, 0], "name": "crate",
                    "point_mass": {"mass": 2, "position": [0, 10, 0], "velocity": [1, 0, 0],
                                   "acceleration": [0, -9.8, 0]}}},
    {"parent": 0, "components": {"position": [0, 11, 0], "name": "lid",
                                 "local_transform": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1]}}
]}"#;

fn main() -> Result<(), Box<dyn Error>> {
    // The generated registry, plus the manager's struct, kept outside the stores.
    let registry =
        level_registry().with([Registration::pod::<PointMass>("point_mass").kept_outside()])?;
    let blob = EntityCompiler::new(&registry).compile_str(LEVEL)?;
    let mut world = World::new();
    let level = world.verify_level(&blob[..], &registry, &VerifyOptions::default())?;

    let mut transforms = TransformManager::new();
    let mut masses = PointMassManager::new();
    let e = world.spawn_level_with_all(&level, &mut [&mut transforms, &mut masses])?;
    for &x in &e {
        let name = &world.get::<DebugName>(x).ok_or("a name")?.0;
        let mass = masses.lookup(x).map(|i| *masses.mass(i));
        let parent = transforms
            .lookup(x)
            .and_then(|i| transforms.parent(i).ok().flatten());
        println!("{name}: point mass {mass:?}, transform parent {parent:?}");
    }

    masses.simulate(0.5);
    let saved = world.save_entities_with(&e, &registry, &[&transforms, &masses])?;
    let again = world.verify_level(&saved[..], &registry, &VerifyOptions::default())?;
    let moved: Vec<PointMass> = again
        .component("point_mass")
        .ok_or("point masses saved")?
        .pod::<PointMass>()?
        .into_owned();
    println!(
        "saved {} bytes; the crate is now at {}",
        saved.len(),
        moved[0].position
    );
    let now = masses.lookup(e[0]).ok_or("the crate's point mass")?;
    assert_eq!(moved[0].position, *masses.position(now));
    Ok(())
}
