// The expansions name everything by absolute path, so they compile without the prelude.
#![no_implicit_prelude]
#![allow(dead_code)]

#[derive(::sigecs::Component)]
pub struct Position(pub f32);

#[derive(::sigecs::Component)]
#[component(cold)]
pub enum Tag {
    A,
    B,
}

#[derive(::sigecs::Signature)]
#[signature(layout = "rows")]
pub struct Tagged {
    pub position: Position,
    pub tag: Tag,
}

#[derive(::sigecs::Resource, ::std::default::Default)]
pub struct Time {
    pub dt: f32,
}

#[::sigecs::system(without(Tag))]
pub fn step(_entity: ::sigecs::Entity, position: &mut Position, time: &Time) {
    position.0 += time.dt;
}

fn main() {}
