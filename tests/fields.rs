//! A `rows` store's components taken as fields of its row structs (`StoreColumns::field`), as
//! passes over many stores take them: each field reaches its component in every row, the
//! borrows are checked (per component, and against the whole column), and a type that does
//! not fit the field's place is refused.

use sigecs::__private::{pass, Fields, FieldsMut, SplitRows};
use sigecs_fixtures::bare::*;

use sigecs::{ComponentOf, SignatureOf};

/// Component ids in the `bare` world.
const MASS: u32 = <Mass as ComponentOf<Model>>::ID;
const TAG: u32 = <Tag as ComponentOf<Model>>::ID;

/// A `bare` world with three `Tagged` entities (masses 1, 2, 3; tags "a", "b", "c") and one
/// `Plain` (mass 10).
fn world() -> World {
    let mut w = World::new();
    for (m, t) in [(1.0, "a"), (2.0, "b"), (3.0, "c")] {
        w.spawn(Tagged {
            mass: Mass(m),
            tag: Tag(t.into()),
        });
    }
    w.spawn(Plain { mass: Mass(10.0) });
    w
}

/// The panic message of `f`, if it panics.
fn refusal(f: impl FnOnce()) -> Option<String> {
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    panicked.err().map(|p| match p.downcast::<String>() {
        Ok(message) => *message,
        Err(p) => p
            .downcast::<&str>()
            .map_or_else(|_| String::new(), |m| m.to_string()),
    })
}

/// A trusted view of one store's columns.
type View<'w> = sigecs::__private::StoreColumns<'w, true>;

/// A misuse of a view, with the refusal it must meet.
type Case = (&'static str, fn(&mut View<'_>));

/// Runs `f` on a trusted view of the `Tagged` store of a fresh world, and returns the world.
fn with_tagged(f: impl FnOnce(&mut View<'_>)) -> World {
    let mut w = world();
    let id = <Tagged as SignatureOf<Model>>::STORE;
    {
        let p = pass(&mut w);
        // SAFETY: the test takes every field as its component's type (`Mass`, `Tag`), as the
        // generated passes do; the refusal tests take a wrong type only where the view
        // refuses it before any access.
        let mut stores = unsafe { p.stores.trusted() };
        let mut view = stores.take(id);
        f(&mut view);
    }
    w
}

fn masses_and_tags(w: &World) -> Vec<(f32, String)> {
    let mut out: Vec<(f32, String)> = w
        .query::<(&Mass, &Tag)>()
        .map(|(m, t)| (m.0, t.0.clone()))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

#[test]
fn fields_reach_hot_and_cold_components_of_every_row() {
    let w = with_tagged(|s| {
        let mut mass: FieldsMut<'_, Mass> = s.field_mut(MASS);
        let tag: Fields<'_, Tag> = s.field(TAG);
        assert_eq!((mass.len(), tag.len()), (3, 3));
        for i in 0..mass.len() {
            mass[i].0 += tag[i].0.len() as f32 * 100.0;
        }
        // A second shared borrow of a field shared already.
        let again: Fields<'_, Tag> = s.field(TAG);
        assert_eq!(again.get(2).0, "c");
    });
    assert_eq!(
        masses_and_tags(&w),
        [
            (101.0, "a".to_string()),
            (102.0, "b".to_string()),
            (103.0, "c".to_string())
        ]
    );
    let all: f32 = w.query::<&Mass>().map(|m| m.0).sum();
    assert_eq!(all, 316.0, "the `Plain` entity's mass is untouched");
}

#[test]
fn fields_split_across_jobs_write_every_row_once() {
    let w = with_tagged(|s| {
        let tag: FieldsMut<'_, Tag> = s.field_mut(TAG);
        let (mut lo, mut hi) = tag.split_at(1);
        lo[0].0.push('0');
        for i in 0..hi.len() {
            hi[i].0.push('1');
        }
    });
    assert_eq!(
        masses_and_tags(&w),
        [
            (1.0, "a0".to_string()),
            (2.0, "b1".to_string()),
            (3.0, "c1".to_string())
        ]
    );
}

#[test]
fn field_borrows_are_checked() {
    let cases: [Case; 5] = [
        ("component 0 is borrowed mutably", |s| {
            let _a: FieldsMut<'_, Mass> = s.field_mut(MASS);
            let _b: FieldsMut<'_, Mass> = s.field_mut(MASS);
        }),
        ("component 1 is borrowed twice", |s| {
            let _a: Fields<'_, Tag> = s.field(TAG);
            let _b: FieldsMut<'_, Tag> = s.field_mut(TAG);
        }),
        ("component 1 is borrowed mutably", |s| {
            let _a: FieldsMut<'_, Tag> = s.field_mut(TAG);
            let _b: Fields<'_, Tag> = s.field(TAG);
        }),
        ("column 0 is borrowed whole", |s| {
            let _row: &mut [TaggedRow] = s.col_mut(0);
            let _m: Fields<'_, Mass> = s.field(MASS);
        }),
        ("column 0 is borrowed", |s| {
            let _m: Fields<'_, Mass> = s.field(MASS);
            let _row: &[TaggedRow] = s.col(0);
        }),
    ];
    for (expected, case) in cases {
        let mut message = None;
        with_tagged(|s| message = refusal(|| case(s)));
        let message = message.expect("the view refuses");
        assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    }
}

#[test]
fn a_type_that_does_not_fit_the_field_is_refused() {
    let mut message = None;
    with_tagged(|s| {
        // `Mass` is an f32 in the hot row; a `[u64; 4]` does not fit there.
        message = refusal(|| {
            let _: Fields<'_, [u64; 4]> = s.field(MASS);
        });
    });
    let message = message.expect("refused");
    assert!(
        message.contains("component 0 is not a [u64; 4] field of column 0"),
        "{message}"
    );
    let mut message = None;
    with_tagged(|s| {
        message = refusal(|| {
            let _: Fields<'_, Mass> = s.field(99);
        });
    });
    assert!(message
        .expect("refused")
        .contains("the store holds the component"));
}
