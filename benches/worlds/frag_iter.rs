//! The ecs_bench_suite "frag_iter" data: 26 signatures `SigA`..`SigZ`, each holding a `Data`
//! and its own letter component, so a system over `Data` visits 26 small stores.

use ecs_core::prelude::*;

/// The value every signature holds.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Data(pub f32);

/// Letter component `A`: makes signature `SigA` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f32);

/// Letter component `B`: makes signature `SigB` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f32);

/// Letter component `C`: makes signature `SigC` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct C(pub f32);

/// Letter component `D`: makes signature `SigD` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct D(pub f32);

/// Letter component `E`: makes signature `SigE` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct E(pub f32);

/// Letter component `F`: makes signature `SigF` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct F(pub f32);

/// Letter component `G`: makes signature `SigG` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct G(pub f32);

/// Letter component `H`: makes signature `SigH` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct H(pub f32);

/// Letter component `I`: makes signature `SigI` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct I(pub f32);

/// Letter component `J`: makes signature `SigJ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct J(pub f32);

/// Letter component `K`: makes signature `SigK` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct K(pub f32);

/// Letter component `L`: makes signature `SigL` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct L(pub f32);

/// Letter component `M`: makes signature `SigM` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct M(pub f32);

/// Letter component `N`: makes signature `SigN` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct N(pub f32);

/// Letter component `O`: makes signature `SigO` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct O(pub f32);

/// Letter component `P`: makes signature `SigP` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct P(pub f32);

/// Letter component `Q`: makes signature `SigQ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Q(pub f32);

/// Letter component `R`: makes signature `SigR` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct R(pub f32);

/// Letter component `S`: makes signature `SigS` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct S(pub f32);

/// Letter component `T`: makes signature `SigT` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct T(pub f32);

/// Letter component `U`: makes signature `SigU` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct U(pub f32);

/// Letter component `V`: makes signature `SigV` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct V(pub f32);

/// Letter component `W`: makes signature `SigW` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct W(pub f32);

/// Letter component `X`: makes signature `SigX` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct X(pub f32);

/// Letter component `Y`: makes signature `SigY` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Y(pub f32);

/// Letter component `Z`: makes signature `SigZ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Z(pub f32);

/// `Data` with `A`.
#[derive(Signature)]
pub struct SigA {
    pub data: Data,
    pub a: A,
}

/// `Data` with `B`.
#[derive(Signature)]
pub struct SigB {
    pub data: Data,
    pub b: B,
}

/// `Data` with `C`.
#[derive(Signature)]
pub struct SigC {
    pub data: Data,
    pub c: C,
}

/// `Data` with `D`.
#[derive(Signature)]
pub struct SigD {
    pub data: Data,
    pub d: D,
}

/// `Data` with `E`.
#[derive(Signature)]
pub struct SigE {
    pub data: Data,
    pub e: E,
}

/// `Data` with `F`.
#[derive(Signature)]
pub struct SigF {
    pub data: Data,
    pub f: F,
}

/// `Data` with `G`.
#[derive(Signature)]
pub struct SigG {
    pub data: Data,
    pub g: G,
}

/// `Data` with `H`.
#[derive(Signature)]
pub struct SigH {
    pub data: Data,
    pub h: H,
}

/// `Data` with `I`.
#[derive(Signature)]
pub struct SigI {
    pub data: Data,
    pub i: I,
}

/// `Data` with `J`.
#[derive(Signature)]
pub struct SigJ {
    pub data: Data,
    pub j: J,
}

/// `Data` with `K`.
#[derive(Signature)]
pub struct SigK {
    pub data: Data,
    pub k: K,
}

/// `Data` with `L`.
#[derive(Signature)]
pub struct SigL {
    pub data: Data,
    pub l: L,
}

/// `Data` with `M`.
#[derive(Signature)]
pub struct SigM {
    pub data: Data,
    pub m: M,
}

/// `Data` with `N`.
#[derive(Signature)]
pub struct SigN {
    pub data: Data,
    pub n: N,
}

/// `Data` with `O`.
#[derive(Signature)]
pub struct SigO {
    pub data: Data,
    pub o: O,
}

/// `Data` with `P`.
#[derive(Signature)]
pub struct SigP {
    pub data: Data,
    pub p: P,
}

/// `Data` with `Q`.
#[derive(Signature)]
pub struct SigQ {
    pub data: Data,
    pub q: Q,
}

/// `Data` with `R`.
#[derive(Signature)]
pub struct SigR {
    pub data: Data,
    pub r: R,
}

/// `Data` with `S`.
#[derive(Signature)]
pub struct SigS {
    pub data: Data,
    pub s: S,
}

/// `Data` with `T`.
#[derive(Signature)]
pub struct SigT {
    pub data: Data,
    pub t: T,
}

/// `Data` with `U`.
#[derive(Signature)]
pub struct SigU {
    pub data: Data,
    pub u: U,
}

/// `Data` with `V`.
#[derive(Signature)]
pub struct SigV {
    pub data: Data,
    pub v: V,
}

/// `Data` with `W`.
#[derive(Signature)]
pub struct SigW {
    pub data: Data,
    pub w: W,
}

/// `Data` with `X`.
#[derive(Signature)]
pub struct SigX {
    pub data: Data,
    pub x: X,
}

/// `Data` with `Y`.
#[derive(Signature)]
pub struct SigY {
    pub data: Data,
    pub y: Y,
}

/// `Data` with `Z`.
#[derive(Signature)]
pub struct SigZ {
    pub data: Data,
    pub z: Z,
}

/// Doubles every `Data`: runs over all 26 stores.
#[system]
pub fn double(data: &mut Data) {
    data.0 *= 2.0;
}

include!(concat!(env!("OUT_DIR"), "/frag_iter.rs"));
