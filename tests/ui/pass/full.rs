// Every kind of declaration the macros accept, in one file.
#![allow(dead_code)]
use sigecs::prelude::*;

#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Position(pub [f32; 3]);

#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Velocity {
    pub v: [f32; 3],
}

#[derive(Component, Clone, Copy, Debug, Default)]
pub struct Mass(pub f32);

// `pub(crate)` is visible enough for a component, a signature and a system.
#[derive(Component, Clone, Copy, Debug, Default)]
pub(crate) struct Charge(pub f32);

#[derive(Component)]
pub struct Frozen;

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub enum Team {
    Red,
    Blue,
}

#[derive(Component, Clone, Debug, Default)]
#[component(cold)]
pub struct DebugName(pub String);

#[derive(Signature)]
pub struct Body {
    pub position: Position,
    pub velocity: Velocity,
    pub mass: Mass,
}

#[derive(Signature)]
#[signature(layout = "rows")]
pub struct Unit {
    pub position: Position,
    pub team: Team,
    pub name: DebugName,
}

#[derive(Signature)]
#[signature(layout = "columns")]
pub struct Statue {
    pub position: Position,
    pub frozen: Frozen,
}

#[derive(Signature)]
pub(crate) struct Particle {
    pub(crate) position: Position,
    pub(crate) charge: Charge,
}

#[derive(Resource, Default)]
pub struct Time {
    pub dt: f32,
}

#[derive(Resource, Default)]
pub struct Tally(pub u64);

#[system]
pub fn integrate(position: &mut Position, velocity: &Velocity, time: &Time) {
    for i in 0..3 {
        position.0[i] += velocity.v[i] * time.dt;
    }
}

#[system(with(Mass), without(Frozen))]
pub fn count(entity: Entity, _position: &Position, tally: &mut Tally) {
    let _ = entity;
    tally.0 += 1;
}

#[system(with(Position, Team))]
pub fn rename(name: Option<&mut DebugName>, team: Option<&Team>) {
    if let (Some(name), Some(Team::Red)) = (name, team) {
        name.0.push_str(" (red)");
    }
}

#[system(without(Frozen, Charge))]
pub(crate) fn damp(velocity: &mut Velocity) {
    for c in &mut velocity.v {
        *c *= 0.5;
    }
}

fn assert_component<T: Component>() {}
fn assert_signature<T: Signature>() {}
fn assert_resource<T: Resource>() {}

fn main() {
    assert_component::<Team>();
    assert_component::<DebugName>();
    assert_signature::<Body>();
    assert_signature::<Unit>();
    assert_signature::<Statue>();
    assert_signature::<Particle>();
    assert_component::<Charge>();
    assert_resource::<Time>();
    const { assert!(DebugName::COLD) };
    const { assert!(!Position::COLD) };

    // A system is still an ordinary function.
    let mut position = Position([0.0; 3]);
    let velocity = Velocity { v: [1.0, 2.0, 3.0] };
    integrate(&mut position, &velocity, &Time { dt: 0.5 });
    assert_eq!(position.0, [0.5, 1.0, 1.5]);

    // A signature hands its parts out in field order.
    struct Names(Vec<&'static str>);
    impl sigecs::__private::FieldSink for Names {
        fn put<C: Component>(&mut self, _: C) {
            self.0.push(std::any::type_name::<C>().rsplit("::").next().unwrap());
        }
    }
    let mut names = Names(Vec::new());
    Unit {
        position,
        team: Team::Blue,
        name: DebugName("u".into()),
    }
    .write_fields(&mut names);
    assert_eq!(names.0, ["Position", "Team", "DebugName"]);
    assert_eq!(<Unit as Signature>::LEN, 3);
}
