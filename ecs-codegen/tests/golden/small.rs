//! A world compiled under `#![no_implicit_prelude]`: the generated file names everything by
//! absolute path, so it needs neither the prelude nor any `use` (issue 11, item 5).

#![no_implicit_prelude]

#[derive(::ecs_core::Component, ::std::clone::Clone, ::std::marker::Copy)]
pub struct Mass(pub f32);

#[derive(::ecs_core::Component)]
#[component(cold)]
pub struct Tag(pub ::std::string::String);

#[derive(::ecs_core::Signature)]
pub struct Plain {
    pub mass: Mass,
}

#[derive(::ecs_core::Signature)]
#[signature(layout = "rows")]
pub struct Tagged {
    pub mass: Mass,
    pub tag: Tag,
}

#[derive(::ecs_core::Resource, ::std::default::Default)]
pub struct Scale(pub f32);

#[derive(::ecs_core::Resource, ::std::default::Default)]
pub struct Sum(pub f32);

#[::ecs_core::system]
pub fn scale(mass: &mut Mass, tag: ::std::option::Option<&Tag>, scale: &Scale) {
    mass.0 *= scale.0;
    let _ = tag;
}

#[::ecs_core::system]
pub fn total(entity: ::ecs_core::Entity, mass: &Mass, sum: &mut Sum, commands: &mut ::ecs_core::Commands) {
    sum.0 += mass.0;
    if mass.0 > 1000.0 {
        commands.despawn(entity);
    }
}


