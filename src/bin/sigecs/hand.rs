//! The floor of the main job's parallel passes: the same systems called by hand over one `Vec`
//! per component, with the same rows in the schedule's one stage (each row through its
//! systems in order, in blocks of 4 rows as the passes walk them), one fork-join on rayon's
//! pool. The job runs a frame of it after each of its own, then as long a stretch of
//! work on the calling thread as its own frame's commands and respawns (while that lasts the
//! other threads go to sleep, and waking them costs the next stage some µs). So both meet the
//! machine at the same moments: on a shared machine, what N threads give moves from one
//! second to the next, and the job's speedup is read against the floor's.

use crate::population::Rng;
use sigecs::rayon::{self, prelude::*};
use sigecs_demo::components::physics::*;
use sigecs_demo::components::resources::{Gravity, Time};

/// Chunks per thread in each loop, as the runner's jobs.
const CHUNKS_PER_THREAD: usize = 4;

/// The components the job's passes that split visit, one `Vec` each.
pub(crate) struct HandWorld {
    /// The entities with acceleration (`Body` and `Ship`): `integrate`, `apply_gravity`.
    accelerated: (Vec<Position>, Vec<Velocity>, Vec<Acceleration>),
    /// `Particle`s: `age`, `drift`, `expire`.
    particles: (Vec<Position>, Vec<Velocity>, Vec<Lifetime>),
    /// `Escort`s: `drift`.
    escorts: (Vec<Position>, Vec<Velocity>),
}

impl HandWorld {
    /// `accelerated`, `particles` and `escorts` rows of seeded values.
    pub(crate) fn new(accelerated: usize, particles: usize, escorts: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut vec3s =
            |n: usize, scale: f32| -> Vec<glam::Vec3> { (0..n).map(|_| rng.vec3(scale)).collect() };
        let accelerated = (
            vec3s(accelerated, 100.0)
                .into_iter()
                .map(Position)
                .collect(),
            vec3s(accelerated, 5.0).into_iter().map(Velocity).collect(),
            vec3s(accelerated, 1.0)
                .into_iter()
                .map(Acceleration)
                .collect(),
        );
        let lifetimes = vec3s(particles, 1.0)
            .into_iter()
            .map(|v| Lifetime(2.5 + 2.0 * v.x))
            .collect();
        let particles = (
            vec3s(particles, 100.0).into_iter().map(Position).collect(),
            vec3s(particles, 5.0).into_iter().map(Velocity).collect(),
            lifetimes,
        );
        let escorts = (
            vec3s(escorts, 100.0).into_iter().map(Position).collect(),
            vec3s(escorts, 5.0).into_iter().map(Velocity).collect(),
        );
        HandWorld {
            accelerated,
            particles,
            escorts,
        }
    }

    /// One frame: the schedule's one stage, each row going through its systems in run order
    /// (`integrate` then `apply_gravity`; `drift`, `age` then `expire`), one fork-join over
    /// the three groups of rows. Returns how many particles `expire` would despawn (nothing is
    /// despawned).
    pub(crate) fn frame(&mut self, time: &Time, gravity: &Gravity) -> usize {
        let threads = rayon::current_num_threads();
        let chunk = |rows: usize| rows.div_ceil(threads * CHUNKS_PER_THREAD).max(1);
        let (pos, vel, acc) = &mut self.accelerated;
        let (ppos, pvel, life) = &mut self.particles;
        let (epos, evel) = &mut self.escorts;
        let ((), ((), expired)) = rayon::join(
            || {
                let c = chunk(pos.len());
                pos.par_chunks_mut(c)
                    .zip(vel.par_chunks_mut(c))
                    .zip(acc.par_chunks_mut(c))
                    .for_each(|((p, v), a)| accelerated_rows(p, v, a, time, gravity))
            },
            || {
                rayon::join(
                    || {
                        let c = chunk(epos.len());
                        epos.par_chunks_mut(c)
                            .zip(evel.par_chunks(c))
                            .for_each(|(p, v)| escort_rows(p, v, time))
                    },
                    || {
                        let c = chunk(ppos.len());
                        ppos.par_chunks_mut(c)
                            .zip(pvel.par_chunks(c))
                            .zip(life.par_chunks_mut(c))
                            .map(|((p, v), l)| particle_rows(p, v, l, time))
                            .sum::<usize>()
                    },
                )
            },
        );
        expired
    }
}

// Each chunk's rows in blocks of 4 then one by one, as the generated passes walk them (the
// compiler vectorises a block whole), in a function of its own: the slices are its arguments,
// so the compiler knows they do not overlap, which it cannot see once inlined.

/// `integrate` then `apply_gravity` over a chunk of `Body` and `Ship` rows.
#[inline(never)]
fn accelerated_rows(
    p: &mut [Position],
    v: &mut [Velocity],
    a: &mut [Acceleration],
    time: &Time,
    gravity: &Gravity,
) {
    let row = |p: &mut Position, v: &mut Velocity, a: &mut Acceleration| {
        integrate(p, v, a, time);
        apply_gravity(a, gravity);
    };
    let (pb, pr) = p.as_chunks_mut::<4>();
    let (vb, vr) = v.as_chunks_mut::<4>();
    let (ab, ar) = a.as_chunks_mut::<4>();
    for ((p, v), a) in pb.iter_mut().zip(vb).zip(ab) {
        for k in 0..4 {
            row(&mut p[k], &mut v[k], &mut a[k]);
        }
    }
    for ((p, v), a) in pr.iter_mut().zip(vr).zip(ar) {
        row(p, v, a);
    }
}

/// `drift` over a chunk of `Escort` rows.
#[inline(never)]
fn escort_rows(p: &mut [Position], v: &[Velocity], time: &Time) {
    let (pb, pr) = p.as_chunks_mut::<4>();
    let (vb, vr) = v.as_chunks::<4>();
    for (p, v) in pb.iter_mut().zip(vb) {
        for k in 0..4 {
            drift(&mut p[k], &v[k], time);
        }
    }
    for (p, v) in pr.iter_mut().zip(vr) {
        drift(p, v, time);
    }
}

/// `drift`, `age` and `expire`'s test over a chunk of `Particle` rows: how many expire.
#[inline(never)]
fn particle_rows(p: &mut [Position], v: &[Velocity], l: &mut [Lifetime], time: &Time) -> usize {
    let mut expired = 0;
    let mut row = |p: &mut Position, v: &Velocity, l: &mut Lifetime| {
        drift(p, v, time);
        age(l, time);
        expired += usize::from(l.0 <= 0.0);
    };
    let (pb, pr) = p.as_chunks_mut::<4>();
    let (vb, vr) = v.as_chunks::<4>();
    let (lb, lr) = l.as_chunks_mut::<4>();
    for ((p, v), l) in pb.iter_mut().zip(vb).zip(lb) {
        for k in 0..4 {
            row(&mut p[k], &v[k], &mut l[k]);
        }
    }
    for ((p, v), l) in pr.iter_mut().zip(vr).zip(lr) {
        row(p, v, l);
    }
    expired
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_frame_runs_the_systems_on_every_row_on_any_pool() {
        let (time, gravity) = (Time { dt: 0.5 }, Gravity::default());
        let frame = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut world = HandWorld::new(1000, 777, 33, 5);
            world.particles.2[3] = Lifetime(0.25);
            world.particles.2[500] = Lifetime(0.5);
            let a = &world.accelerated;
            let before = (a.0[999].0, a.1[999].0, a.2[999].0, world.escorts.0[32].0);
            let expired = pool.install(|| world.frame(&time, &gravity));
            (world, before, expired)
        };
        let (one, (p, v, a, e), expired) = frame(1);
        assert_eq!(expired, 2, "lifetimes at or under dt run out");
        assert_eq!(one.particles.2[3], Lifetime(0.0));
        assert_eq!(one.particles.2[500], Lifetime(0.0));
        // integrate ran before apply_gravity, so the last body moved by its own acceleration,
        // and now holds gravity; the last escort drifted.
        let v = v + a * time.dt;
        assert_eq!(one.accelerated.1[999].0, v);
        assert_eq!(one.accelerated.0[999].0, p + v * time.dt);
        assert!(one.accelerated.2.iter().all(|a| a.0 == gravity.0));
        assert_eq!(
            one.escorts.0[32].0,
            e + one.escorts.1[32].0 * time.dt,
            "drift"
        );
        let (two, _, expired_two) = frame(2);
        assert_eq!(expired_two, expired);
        assert_eq!(
            two.accelerated.0, one.accelerated.0,
            "the same on 2 threads"
        );
        assert_eq!(two.particles.0, one.particles.0);
        assert_eq!(two.particles.2, one.particles.2);
    }
}
