//! frag_iter: 26 signatures `SigA`..`SigZ` of 20 entities each, every one holding a `Data` and
//! its own letter component; one system doubles every `Data`, visiting 26 small stores.

use ecs_core::prelude::*;

/// The value every signature holds.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Data(pub f64);

/// Letter component `A`: makes signature `SigA` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct A(pub f64);

/// `Data` with `A`.
#[derive(Signature)]
pub struct SigA {
    pub data: Data,
    pub letter: A,
}

/// Letter component `B`: makes signature `SigB` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct B(pub f64);

/// `Data` with `B`.
#[derive(Signature)]
pub struct SigB {
    pub data: Data,
    pub letter: B,
}

/// Letter component `C`: makes signature `SigC` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct C(pub f64);

/// `Data` with `C`.
#[derive(Signature)]
pub struct SigC {
    pub data: Data,
    pub letter: C,
}

/// Letter component `D`: makes signature `SigD` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct D(pub f64);

/// `Data` with `D`.
#[derive(Signature)]
pub struct SigD {
    pub data: Data,
    pub letter: D,
}

/// Letter component `E`: makes signature `SigE` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct E(pub f64);

/// `Data` with `E`.
#[derive(Signature)]
pub struct SigE {
    pub data: Data,
    pub letter: E,
}

/// Letter component `F`: makes signature `SigF` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct F(pub f64);

/// `Data` with `F`.
#[derive(Signature)]
pub struct SigF {
    pub data: Data,
    pub letter: F,
}

/// Letter component `G`: makes signature `SigG` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct G(pub f64);

/// `Data` with `G`.
#[derive(Signature)]
pub struct SigG {
    pub data: Data,
    pub letter: G,
}

/// Letter component `H`: makes signature `SigH` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct H(pub f64);

/// `Data` with `H`.
#[derive(Signature)]
pub struct SigH {
    pub data: Data,
    pub letter: H,
}

/// Letter component `I`: makes signature `SigI` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct I(pub f64);

/// `Data` with `I`.
#[derive(Signature)]
pub struct SigI {
    pub data: Data,
    pub letter: I,
}

/// Letter component `J`: makes signature `SigJ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct J(pub f64);

/// `Data` with `J`.
#[derive(Signature)]
pub struct SigJ {
    pub data: Data,
    pub letter: J,
}

/// Letter component `K`: makes signature `SigK` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct K(pub f64);

/// `Data` with `K`.
#[derive(Signature)]
pub struct SigK {
    pub data: Data,
    pub letter: K,
}

/// Letter component `L`: makes signature `SigL` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct L(pub f64);

/// `Data` with `L`.
#[derive(Signature)]
pub struct SigL {
    pub data: Data,
    pub letter: L,
}

/// Letter component `M`: makes signature `SigM` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct M(pub f64);

/// `Data` with `M`.
#[derive(Signature)]
pub struct SigM {
    pub data: Data,
    pub letter: M,
}

/// Letter component `N`: makes signature `SigN` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct N(pub f64);

/// `Data` with `N`.
#[derive(Signature)]
pub struct SigN {
    pub data: Data,
    pub letter: N,
}

/// Letter component `O`: makes signature `SigO` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct O(pub f64);

/// `Data` with `O`.
#[derive(Signature)]
pub struct SigO {
    pub data: Data,
    pub letter: O,
}

/// Letter component `P`: makes signature `SigP` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct P(pub f64);

/// `Data` with `P`.
#[derive(Signature)]
pub struct SigP {
    pub data: Data,
    pub letter: P,
}

/// Letter component `Q`: makes signature `SigQ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Q(pub f64);

/// `Data` with `Q`.
#[derive(Signature)]
pub struct SigQ {
    pub data: Data,
    pub letter: Q,
}

/// Letter component `R`: makes signature `SigR` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct R(pub f64);

/// `Data` with `R`.
#[derive(Signature)]
pub struct SigR {
    pub data: Data,
    pub letter: R,
}

/// Letter component `S`: makes signature `SigS` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct S(pub f64);

/// `Data` with `S`.
#[derive(Signature)]
pub struct SigS {
    pub data: Data,
    pub letter: S,
}

/// Letter component `T`: makes signature `SigT` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct T(pub f64);

/// `Data` with `T`.
#[derive(Signature)]
pub struct SigT {
    pub data: Data,
    pub letter: T,
}

/// Letter component `U`: makes signature `SigU` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct U(pub f64);

/// `Data` with `U`.
#[derive(Signature)]
pub struct SigU {
    pub data: Data,
    pub letter: U,
}

/// Letter component `V`: makes signature `SigV` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct V(pub f64);

/// `Data` with `V`.
#[derive(Signature)]
pub struct SigV {
    pub data: Data,
    pub letter: V,
}

/// Letter component `W`: makes signature `SigW` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct W(pub f64);

/// `Data` with `W`.
#[derive(Signature)]
pub struct SigW {
    pub data: Data,
    pub letter: W,
}

/// Letter component `X`: makes signature `SigX` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct X(pub f64);

/// `Data` with `X`.
#[derive(Signature)]
pub struct SigX {
    pub data: Data,
    pub letter: X,
}

/// Letter component `Y`: makes signature `SigY` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Y(pub f64);

/// `Data` with `Y`.
#[derive(Signature)]
pub struct SigY {
    pub data: Data,
    pub letter: Y,
}

/// Letter component `Z`: makes signature `SigZ` distinct.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Z(pub f64);

/// `Data` with `Z`.
#[derive(Signature)]
pub struct SigZ {
    pub data: Data,
    pub letter: Z,
}

/// Doubles every `Data`: runs over all 26 stores.
#[system]
pub fn double(data: &mut Data) {
    data.0 *= 2.0;
}

include!(concat!(env!("OUT_DIR"), "/frag_iter.rs"));
