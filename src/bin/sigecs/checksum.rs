//! A checksum of every component value, so two runs (thread counts, commits) can be compared.

use glam::Vec3;
use sigecs::Entity;
use sigecs_demo::components::physics::*;
use sigecs_demo::World;

/// FNV-1a over every live entity (in id order) and each of its component values, so the result
/// does not depend on where rows sit in their stores.
pub(crate) fn checksum(world: &World) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut entities: Vec<Entity> = world.entities().collect();
    entities.sort();
    let vec = |v: Vec3| [v.x, v.y, v.z].map(f32::to_bits);
    for e in entities {
        eat(&e.to_bits().to_le_bytes());
        eat(world.signature_name_of(e).unwrap_or("?").as_bytes());
        let mut words: Vec<u32> = Vec::new();
        if let Some(p) = world.get::<Position>(e) {
            words.extend(vec(p.0));
        }
        if let Some(v) = world.get::<Velocity>(e) {
            words.extend(vec(v.0));
        }
        if let Some(a) = world.get::<Acceleration>(e) {
            words.extend(vec(a.0));
        }
        if let Some(m) = world.get::<Mass>(e) {
            words.push(m.0.to_bits());
        }
        if let Some(l) = world.get::<Lifetime>(e) {
            words.push(l.0.to_bits());
        }
        for w in words {
            eat(&w.to_le_bytes());
        }
        if let Some(n) = world.get::<DebugName>(e) {
            eat(n.0.as_bytes());
        }
        if let Some(n) = world.get::<Note>(e) {
            eat(n.0.as_bytes());
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levels::load_level;
    use crate::options::Options;
    use crate::population::{populate, Rng};
    use crate::report::run_frames;

    #[test]
    fn checksum_is_deterministic_and_sensitive() {
        let build = |seed| {
            let mut w = World::new();
            populate(&mut w, 1000, &mut Rng::new(seed));
            w
        };
        let (a, b) = (build(1), build(1));
        assert_eq!(checksum(&a), checksum(&b));
        assert_ne!(checksum(&a), checksum(&build(2)));
        let mut c = build(1);
        let e = c.entities().next().unwrap();
        c.get_mut::<Position>(e).unwrap().0.x += 1.0;
        assert_ne!(checksum(&a), checksum(&c));
    }

    #[test]
    fn checksum_does_not_depend_on_thread_count() {
        let opts = Options {
            entities: 3000,
            frames: 5,
            threads: 2,
            min_chunk: Some(16),
            seed: 9,
            repeats: 1,
            level: None,
            record: None,
        };
        let level = load_level(None).unwrap();
        let one = run_frames(&opts, &level, 1, None);
        assert_eq!(one.world.len(), 3000 + 11_300);
        for threads in [2, 4] {
            assert_eq!(
                checksum(&run_frames(&opts, &level, threads, None).world),
                checksum(&one.world)
            );
        }
    }
}
