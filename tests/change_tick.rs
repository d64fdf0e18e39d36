//! `World::change_tick` marks now: a write made before it is not reported by a change filter
//! given its value, and every write after it is, for table and sparse components, by hand and
//! by passes; and marking now takes no write away from a system's `changed(C)` filter, whose
//! own mark is its last run.

use sigecs::query::Changed;
use sigecs::Entity;
use sigecs_fixtures::changes::{Mover, Moving, Pos, Seen, Still, Vel, World};

fn changed_since(w: &World, since: u64) -> Vec<Entity> {
    w.query_changed::<Entity, Changed<Pos>>(since).collect()
}

#[test]
fn a_table_write_before_the_tick_is_not_reported_and_one_after_it_is() {
    let mut w = World::new();
    let e = w.spawn(Still { pos: Pos(1) });
    w.get_mut::<Pos>(e).unwrap().0 = 2;
    let now = w.change_tick();
    assert_eq!(changed_since(&w, now), [], "the write came before now");
    // Asking again marks a later now; still nothing.
    let later = w.change_tick();
    assert!(later > now);
    assert_eq!(changed_since(&w, later), []);
    w.get_mut::<Pos>(e).unwrap().0 = 3;
    assert_eq!(changed_since(&w, now), [e]);
    assert_eq!(changed_since(&w, later), [e]);
    // A spawn and an insert after now are changes too (`e`, in the same chunk of rows as the
    // spawned entity, comes along: a chunk is the unit).
    let now = w.change_tick();
    let f = w.spawn(Still { pos: Pos(4) });
    assert!(changed_since(&w, now).contains(&f));
    let now = w.change_tick();
    assert_eq!(changed_since(&w, now), []);
    w.insert(f, Vel(1)).unwrap();
    assert!(
        changed_since(&w, now).contains(&f),
        "the row moved to another store"
    );
}

#[test]
fn a_pass_after_the_tick_is_reported() {
    let mut w = World::new();
    let still = w.spawn(Still { pos: Pos(0) });
    let mover = w.spawn(Mover {
        pos: Pos(0),
        vel: Vel(1),
        moving: Moving,
    });
    w.run_all();
    let now = w.change_tick();
    assert_eq!(changed_since(&w, now), []);
    w.run_integrate();
    assert_eq!(
        changed_since(&w, now),
        [mover],
        "integrate wrote the mover only"
    );
    assert!(!changed_since(&w, now).contains(&still));
}

#[test]
fn marking_now_takes_no_write_away_from_a_system_filter() {
    let mut w = World::new();
    let e = w.spawn(Still { pos: Pos(1) });
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [e], "a spawn is a change");
    w.resource_mut::<Seen>().entities.clear();
    w.run_watch();
    assert_eq!(
        w.resource::<Seen>().entities,
        [],
        "nothing written since its last run"
    );
    // A write, then the tick marked (twice): the system still sees the write.
    w.get_mut::<Pos>(e).unwrap().0 = 5;
    let now = w.change_tick();
    w.change_tick();
    assert_eq!(changed_since(&w, now), []);
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [e]);
    // A write after the tick: both the query and the system see it.
    w.resource_mut::<Seen>().entities.clear();
    let now = w.change_tick();
    w.get_mut::<Pos>(e).unwrap().0 = 6;
    assert_eq!(changed_since(&w, now), [e]);
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [e]);
    w.resource_mut::<Seen>().entities.clear();
    w.change_tick();
    w.run_watch();
    assert_eq!(w.resource::<Seen>().entities, [], "seen once");
}

mod sparse {
    use sigecs::query::Changed;
    use sigecs::Entity;
    use sigecs_fixtures::faults::{Body, Cargo, Ledger, Pos, Site, Tag, Vel, World};

    fn changed_since(w: &World, since: u64) -> Vec<Entity> {
        let mut v: Vec<Entity> = w.query_changed::<Entity, Changed<Tag>>(since).collect();
        v.sort();
        v
    }

    #[test]
    fn a_sparse_write_before_the_tick_is_not_reported_and_one_after_it_is() {
        let ledger = Ledger::new(0);
        let mut w = World::new();
        let mut spawn = || {
            w.spawn(Body {
                pos: Pos(0),
                vel: Vel(0),
                cargo: Cargo(ledger.token(Site::ComponentDrop)),
            })
        };
        let (a, b) = (spawn(), spawn());
        w.insert(a, Tag(ledger.token(Site::SparseDrop))).unwrap();
        w.get_mut::<Tag>(a).unwrap();
        let now = w.change_tick();
        assert_eq!(
            changed_since(&w, now),
            [],
            "the insert and the write came before now"
        );
        w.insert(b, Tag(ledger.token(Site::SparseDrop))).unwrap();
        assert_eq!(changed_since(&w, now), [b]);
        let now = w.change_tick();
        assert_eq!(changed_since(&w, now), []);
        w.get_mut::<Tag>(a).unwrap();
        assert_eq!(changed_since(&w, now), [a]);
        let now = w.change_tick();
        let old = w.insert(b, Tag(ledger.token(Site::SparseDrop))).unwrap();
        assert!(old.is_some(), "replaced");
        assert_eq!(changed_since(&w, now), [b]);
    }
}
