//! A pass reaches its stores by a line of code per store, or, from `TABLE_FROM` stores, by a
//! table of store ids and column indices with one loop. Both forms must give the same world:
//! the `store_forms` fixture (40 stores of a few shapes, `rows` stores, an optional and a cold
//! component, a change filter, `Commands`, a fused stage) generated with the default
//! threshold, with a table for every pass and with a line per store for every pass, against a
//! plain-Rust model of its systems.

use sigecs_fixtures::store_forms::{
    self, default_form, per_store_form, strict_table_form, table_form, Values,
};

/// The model's frame: the systems in declaration order (`run_all`'s order; `run_schedule`
/// gives the same world), each entity's values in a plain `Vec`.
fn model_frame(entities: &mut Vec<Values>, total: &mut u64) {
    for e in entities.iter_mut() {
        e.pos += e.vel;
    }
    for e in entities.iter_mut().filter(|e| e.t0) {
        e.vel *= 0.5;
    }
    for e in entities.iter_mut() {
        if let Some(h) = &mut e.hits {
            *h += 1 + e.note.unwrap_or(0);
        }
    }
    // `react` visits only the chunks whose `Vel` changed, but what it writes depends on `Vel`
    // alone: the same as writing every row.
    for e in entities.iter_mut() {
        if let Some(s) = &mut e.seen {
            *s = e.vel.to_bits();
        }
    }
    let mut spawned = Vec::new();
    entities.retain(|e| {
        *total += u64::from(e.id) * 3 + u64::from(e.hits.unwrap_or(7));
        if e.pos > 40.0 {
            spawned.push(Values {
                signature: 0,
                id: e.id + 100_000,
                pos: 0.0,
                vel: 1.0,
                hits: Some(0),
                seen: Some(0),
                note: None,
                t0: false,
            });
            return false;
        }
        true
    });
    entities.extend(spawned);
}

/// Every entity of one of the three worlds, in the world's order, with its values; and the
/// `Total`.
macro_rules! snapshot {
    ($w:expr) => {{
        let w = &$w;
        let entities: Vec<_> = w
            .entities()
            .map(|e| {
                let name = w.signature_name_of(e).unwrap();
                let values = Values {
                    signature: name[1..].parse().unwrap(),
                    id: w.get::<store_forms::Id>(e).unwrap().0,
                    pos: w.get::<store_forms::Pos>(e).unwrap().0,
                    vel: w.get::<store_forms::Vel>(e).unwrap().0,
                    hits: w.get::<store_forms::Hits>(e).map(|h| h.0),
                    seen: w.get::<store_forms::Seen>(e).map(|s| s.0),
                    note: w.get::<store_forms::Note>(e).map(|n| n.0),
                    t0: w.get::<store_forms::T0>(e).is_some(),
                };
                (e, values)
            })
            .collect();
        (entities, w.resource::<store_forms::Total>().0)
    }};
}

fn sorted(mut v: Vec<Values>) -> Vec<Values> {
    v.sort_by_key(|v| v.id);
    v
}

/// The three worlds and the model, frame by frame, run by `run_schedule` or `run_all`, inline
/// or split into jobs of `min_chunk` rows.
fn compare(per_store: usize, frames: usize, schedule: bool, min_chunk: Option<usize>) {
    let mut model: Vec<Values> = (0..store_forms::SIGNATURES)
        .flat_map(|s| (0..per_store).map(move |k| store_forms::values(s, k)))
        .collect();
    let mut model_total = 0;
    let mut default = default_form::World::new();
    let mut tables = table_form::World::new();
    let mut per_store_world = per_store_form::World::new();
    default_form::populate(&mut default, per_store);
    table_form::populate(&mut tables, per_store);
    per_store_form::populate(&mut per_store_world, per_store);
    default.set_min_chunk(min_chunk);
    tables.set_min_chunk(min_chunk);
    per_store_world.set_min_chunk(min_chunk);
    for frame in 0..frames {
        if schedule {
            let _ = default.run_schedule();
            let _ = tables.run_schedule();
            let _ = per_store_world.run_schedule();
        } else {
            let _ = default.run_all();
            let _ = tables.run_all();
            let _ = per_store_world.run_all();
        }
        model_frame(&mut model, &mut model_total);
        let (a, b, c) = (
            snapshot!(default),
            snapshot!(tables),
            snapshot!(per_store_world),
        );
        assert_eq!(
            a, c,
            "frame {frame}: the default world and the per-store one"
        );
        assert_eq!(b, c, "frame {frame}: the table world and the per-store one");
        let values: Vec<Values> = c.0.iter().map(|(_, v)| *v).collect();
        assert_eq!(c.1, model_total, "frame {frame}: the total");
        assert_eq!(
            sorted(values),
            sorted(model.clone()),
            "frame {frame}: the model"
        );
    }
}

#[test]
fn tables_and_per_store_lines_run_the_schedule_alike() {
    compare(30, 8, true, None);
}

#[test]
fn tables_and_per_store_lines_run_every_system_alike() {
    compare(30, 8, false, None);
}

#[test]
fn tables_and_per_store_lines_split_into_jobs_alike() {
    compare(30, 6, true, Some(7));
}

/// `advance` and `age` share a stage whose pass (it has a table) is their own passes too:
/// run alone, each changes only its own component and stamps only the columns it writes, as
/// in the per-store world, where each has a pass of its own; in declared stores and in a
/// dynamic one, and in a strict world. (A `rows` store's components share one column, so there a write of `Pos`
/// stamps `Hits` too, in both worlds.)
#[test]
fn a_system_run_alone_through_its_stage_runs_and_stamps_only_itself() {
    use sigecs::query::Changed;
    use sigecs::Entity;
    use store_forms::{Hits, Id, Pos, Vel};
    macro_rules! check {
        ($form:ident) => {{
            let mut w = $form::World::new();
            let mut reference = per_store_form::World::new();
            $form::populate(&mut w, 30);
            per_store_form::populate(&mut reference, 30);
            // Every entity's `Pos`, `Vel` and `Hits`, in the world's order.
            macro_rules! state {
                ($w:expr) => {
                    $w.entities()
                        .map(|e| {
                            let pos = $w.get::<Pos>(e).map(|p| p.0);
                            let vel = $w.get::<Vel>(e).map(|v| v.0);
                            (e, pos, vel, $w.get::<Hits>(e).map(|h| h.0))
                        })
                        .collect::<Vec<_>>()
                };
            }
            // Runs one system in both worlds, then counts the entities whose `Pos` and whose
            // `Hits` a change query sees as written by it.
            macro_rules! step {
                ($run:ident) => {{
                    let (since, reference_since) = (w.change_tick(), reference.change_tick());
                    w.$run();
                    reference.$run();
                    assert_eq!(state!(w), state!(reference), stringify!($run));
                    let seen = (
                        w.query_changed::<Entity, Changed<Pos>>(since).count(),
                        w.query_changed::<Entity, Changed<Hits>>(since).count(),
                    );
                    let expected = (
                        reference
                            .query_changed::<Entity, Changed<Pos>>(reference_since)
                            .count(),
                        reference
                            .query_changed::<Entity, Changed<Hits>>(reference_since)
                            .count(),
                    );
                    assert_eq!(seen, expected, "{}: changed Pos, Hits", stringify!($run));
                    seen
                }};
            }
            let with_hits = w.entities().filter(|&e| w.get::<Hits>(e).is_some()).count();
            let entities = w.entities().count();
            step!(run_age);
            // `advance` writes `Pos` only: `Hits` beside it in a row struct is not changed.
            assert_eq!(step!(run_advance), (entities, 0));
            // And `age` writes `Hits` only: no `Pos` beside it is changed.
            assert_eq!(step!(run_age), (0, with_hits));
            // An entity without `Id` has a set no signature declares: a dynamic store, which
            // each system's part of the stage's pass visits alone too (a strict world
            // refuses the set).
            let e = w.entities().find(|&e| w.get::<Hits>(e).is_some()).unwrap();
            if w.remove::<Id>(e).is_ok() {
                reference.remove::<Id>(e).unwrap();
                assert_eq!(w.undeclared().len(), 1);
            }
            step!(run_age);
            step!(run_advance);
            step!(run_age);
        }};
    }
    check!(table_form);
    check!(default_form);
    check!(strict_table_form);
}
