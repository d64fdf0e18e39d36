//! Fault injection: the `faults` world (the main job's kinds of systems over ledger-counted
//! tokens) runs frame after frame while a seeded injector panics at random sites: a table or
//! sparse component's `Drop`, an event's `Drop`, a `Clone` in a system, a system's body.
//! Between frames the test also changes the world directly (despawns, inserts, removes,
//! parents, event updates), under the same faults. Every panic is caught; after each step the
//! world must be consistent (`check_invariants`), hold exactly the ledger's live tokens (each
//! value dropped exactly once: nothing leaked, nothing dropped twice) and run the next frame.
//!
//! `cargo test` injects a few hundred panics, half on one thread and half on two. The long run
//! is by hand: `FAULT_PANICS=10000 cargo test -p sigecs-demo --test fault_injection --
//! --nocapture` (it prints the panics caught, by site; `FAULT_SEED=N` draws other ones). A new kind of fault site (a `Clone` or
//! `Drop` of a saved world state, say) is a `Site` of the `faults` fixture, armed in `run`.

use sigecs::Entity;
use sigecs_fixtures::faults::{
    splitmix, Badge, Body, Cargo, Faults, Frozen, Injector, Ledger, Pos, Site, Tag, Vel, World,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Panics to inject before the run ends (`FAULT_PANICS` overrides).
const PANICS: u64 = if cfg!(miri) { 4 } else { 300 };

/// Entities the world starts with.
const START: i32 = if cfg!(miri) { 30 } else { 100 };

/// A seeded die for the test's own choices.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        splitmix(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Everything the world holds is live in the ledger and nothing else is; no token was dropped
/// twice; the world is consistent.
fn check(w: &World, ledger: &Ledger, step: &str) {
    ledger.injector.set_enabled(false);
    if let Err(e) = w.check_invariants() {
        panic!("{step}: invariants: {e}");
    }
    let errors = ledger.errors();
    assert!(errors.is_empty(), "{step}: {errors:?}");
    let mut live: Vec<u64> = ledger.live().into_iter().collect();
    live.sort_unstable();
    let held = w.tokens();
    if held != live {
        let leaked: Vec<u64> = live
            .iter()
            .filter(|id| !held.contains(id))
            .copied()
            .collect();
        let extra: Vec<u64> = held
            .iter()
            .filter(|id| !live.contains(id))
            .copied()
            .collect();
        panic!(
            "{step}: {} tokens leaked {leaked:?}, {} held but dropped or held twice {extra:?}",
            leaked.len(),
            extra.len()
        );
    }
    assert_eq!(
        ledger.created() - ledger.dropped(),
        live.len() as u64,
        "{step}"
    );
    ledger.injector.set_enabled(true);
}

fn body(ledger: &Arc<Ledger>, x: i32) -> Body {
    Body {
        pos: Pos(x),
        vel: Vel(1),
        cargo: Cargo(ledger.token(Site::ComponentDrop)),
    }
}

/// A live entity picked by the dice, if any.
fn pick(w: &World, dice: &mut Dice) -> Option<Entity> {
    let all: Vec<Entity> = w.entities().collect();
    (!all.is_empty()).then(|| all[dice.below(all.len() as u64) as usize])
}

/// The kinds of step, by the dice's face (`step`).
const STEPS: [&str; 16] = [
    "run_all",
    "run_all",
    "run_all",
    "run_all",
    "run_all",
    "run_all",
    "run_schedule",
    "run_schedule",
    "run_schedule",
    "run_schedule",
    "despawn",
    "insert",
    "remove",
    "set_parent",
    "update_events",
    "population",
];

/// One step of kind `STEPS[kind]`: a frame (either runner) or a direct change.
fn step(kind: u64, w: &mut World, ledger: &Arc<Ledger>, dice: &mut Dice) {
    match kind {
        0..=5 => {
            let _ = w.run_all();
        }
        6..=9 => {
            let _ = w.run_schedule();
        }
        10 => {
            if let Some(e) = pick(w, dice) {
                w.despawn(e);
            }
        }
        11 => {
            if let Some(e) = pick(w, dice) {
                let _ = match dice.below(4) {
                    0 => w.insert(e, Tag(ledger.token(Site::SparseDrop))).map(drop),
                    1 => w.insert(e, Badge(ledger.token(Site::SparseDrop))).map(drop),
                    2 => w
                        .insert(e, Cargo(ledger.token(Site::ComponentDrop)))
                        .map(drop),
                    _ => w.insert(e, Frozen).map(drop),
                };
            }
        }
        12 => {
            if let Some(e) = pick(w, dice) {
                let _ = match dice.below(4) {
                    0 => w.remove::<Tag>(e).map(drop),
                    1 => w.remove::<Badge>(e).map(drop),
                    2 => w.remove::<Cargo>(e).map(drop),
                    _ => w.remove::<Frozen>(e).map(drop),
                };
            }
        }
        13 => {
            if let (Some(c), Some(p)) = (pick(w, dice), pick(w, dice)) {
                let _ = w.set_parent(c, p);
            }
        }
        14 => {
            w.update_events();
        }
        _ => {
            // Keep the population between a few dozen and a few hundred.
            if w.len() < 40 {
                let x = dice.below(100) as i32;
                let spawned = w.spawn_batch((0..20).map(|i| body(ledger, x + i)));
                if !w.resource::<Faults>().anchor.is_some_and(|a| w.is_alive(a)) {
                    w.resource_mut::<Faults>().anchor = spawned.first().copied();
                }
            } else if w.len() > 300 {
                if dice.below(8) == 0 {
                    w.clear();
                } else {
                    for _ in 0..50 {
                        if let Some(e) = pick(w, dice) {
                            w.despawn(e);
                        }
                    }
                }
            }
        }
    }
}

/// Runs the world under faults until `panics` have been injected; returns (steps, panics
/// caught).
fn run(seed: u64, panics: u64, threads: usize) -> (u64, u64) {
    let ledger = Ledger::new(seed);
    // Chances per call: the per-row sites are called hundreds of times a frame.
    let rates: [(Site, u32); 5] = [
        (Site::ComponentDrop, Injector::ONE / 40),
        (Site::SparseDrop, Injector::ONE / 20),
        (Site::EventDrop, Injector::ONE / 20),
        (Site::Clone, Injector::ONE / 20),
        (Site::System, Injector::ONE / 600),
    ];
    let pool = sigecs::rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut dice = Dice(seed);
    let mut w = World::new();
    // Small chunks, so passes split on two threads.
    w.set_min_chunk(Some(8));
    w.resource_mut::<Faults>().ledger = Some(ledger.clone());
    let anchor = w.spawn(body(&ledger, 0));
    w.resource_mut::<Faults>().anchor = Some(anchor);
    w.spawn_batch((0..START).map(|i| body(&ledger, i)));
    for (site, rate) in rates {
        ledger.injector.arm(site, rate);
    }
    let (mut steps, mut caught) = (0u64, 0u64);
    while ledger.injector.total() < panics {
        steps += 1;
        let kind = dice.below(STEPS.len() as u64);
        let result = pool
            .install(|| catch_unwind(AssertUnwindSafe(|| step(kind, &mut w, &ledger, &mut dice))));
        let name = STEPS[kind as usize];
        if let Err(payload) = result {
            // Only injected faults may panic: anything else is the world failing.
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            assert!(
                message.starts_with("injected fault"),
                "step {steps} ({name}, seed {seed}): a panic that was not injected: {message}"
            );
            caught += 1;
        }
        check(&w, &ledger, &format!("step {steps} ({name}, seed {seed})"));
        assert!(steps < 100 * panics + 1000, "the injector stopped firing");
    }
    let fired: Vec<String> = Site::ALL
        .iter()
        .map(|&s| format!("{s:?} {}", ledger.injector.fired(s)))
        .collect();
    println!(
        "seed {seed}: {} entities, {} tokens made; panics by site: {}",
        w.len(),
        ledger.created(),
        fired.join(", ")
    );
    // Without faults, the world still runs, and dropping it drops every token.
    ledger.injector.set_enabled(false);
    // Command errors (a parent despawned meanwhile, a component already removed) are
    // reports, not faults.
    let _ = w.run_all();
    let _ = w.run_schedule();
    check(&w, &ledger, "the last frames");
    ledger.injector.set_enabled(false);
    w.resource_mut::<Faults>().ledger = None;
    drop(w);
    assert!(
        ledger.live().is_empty(),
        "dropping the world drops every token"
    );
    assert_eq!(ledger.errors(), Vec::<String>::new());
    (steps, caught)
}

#[test]
fn a_world_under_injected_panics_stays_consistent_and_loses_no_value() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let panics = env("FAULT_PANICS").unwrap_or(PANICS);
    let seed = env("FAULT_SEED").unwrap_or(1);
    // Quiet the default hook: each injected panic would print a message and a backtrace.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let injected = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|m| m.starts_with("injected fault"));
        if !injected {
            eprintln!("{info}");
        }
    }));
    let mut total = (0, 0);
    for (seed, threads) in [(seed, 1), (seed + 1, 2)] {
        let (steps, caught) = run(seed, panics / 2, threads);
        println!("seed {seed}, {threads} threads: {caught} panics caught in {steps} steps");
        assert!(caught > 0 && caught <= panics / 2 + 2);
        total = (total.0 + steps, total.1 + caught);
    }
    std::panic::set_hook(hook);
    println!("in all: {} panics caught in {} steps", total.1, total.0);
}
