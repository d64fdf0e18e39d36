// The expansions name everything by absolute path, so they compile without the prelude.
#![no_implicit_prelude]
#![allow(dead_code)]

#[derive(::ecs_core::Component)]
pub struct Position(pub f32);

#[derive(::ecs_core::Component)]
#[component(cold)]
pub enum Tag {
    A,
    B,
}

#[derive(::ecs_core::Signature)]
#[signature(layout = "rows")]
pub struct Tagged {
    pub position: Position,
    pub tag: Tag,
}

#[derive(::ecs_core::Resource, ::std::default::Default)]
pub struct Time {
    pub dt: f32,
}

#[::ecs_core::system(without(Tag))]
pub fn step(_entity: ::ecs_core::Entity, position: &mut Position, time: &Time) {
    position.0 += time.dt;
}

fn main() {}
