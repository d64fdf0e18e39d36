use sigecs::prelude::*;

#[derive(Signature)]
pub struct Nothing {}

fn main() {}
