use sigecs::prelude::*;

#[derive(Component)]
pub struct Hp(pub i32);

#[system(after(heal))]
pub fn heal(hp: &mut Hp) {
    hp.0 += 1;
}

fn main() {}
