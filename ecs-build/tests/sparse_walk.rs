//! Which systems walk a sparse set instead of the stores: those whose components are all
//! `#[component(sparse)]` and that have no table filter. Such a system leads with its first
//! required sparse component, gets a stage of its own, and its pass takes that component's
//! packed values (`values` / `values_mut`) rather than any store.

use sigecs_build::Builder;

const COMPONENTS: &str = "\
use sigecs::prelude::*;
#[derive(Component)]
pub struct P(pub f32);
#[derive(Component)]
#[component(sparse)]
pub struct Hp(pub i32);
#[derive(Component)]
#[component(sparse)]
pub struct Mana(pub i32);
#[derive(Component)]
#[component(sparse)]
pub struct Frozen;
#[derive(Resource, Default)]
pub struct Total(pub i64);
#[derive(Signature)]
pub struct S { pub p: P }
";

/// The analysis and generated code of `systems` beside [`COMPONENTS`].
fn build(systems: &str) -> (sigecs_build::Analysis, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mod.rs"), format!("{COMPONENTS}{systems}")).unwrap();
    let builder = || {
        Builder::new()
            .scan(dir.path(), "crate::components")
            .rerun_if_changed(false)
    };
    let analysis = builder().analyze().unwrap_or_else(|e| panic!("{e}"));
    let code = builder()
        .generate_string()
        .unwrap_or_else(|e| panic!("{e}"));
    (analysis, code)
}

fn leads(analysis: &sigecs_build::Analysis) -> Vec<(String, Option<String>)> {
    analysis
        .systems()
        .into_iter()
        .map(|s| (s.name, s.walks))
        .collect()
}

#[test]
fn a_system_of_sparse_components_alone_leads_with_its_first_required_one() {
    let (analysis, _) = build(
        "#[system] pub fn heal(hp: &mut Hp) {}
         #[system] pub fn both(m: Option<&Mana>, hp: &Hp, e: Entity) {}
         #[system(with(Mana), without(Frozen))] pub fn filtered(hp: &Hp) {}
         #[system] pub fn mixed(p: &P, hp: &Hp) {}
         #[system(with(P))] pub fn table_filter(hp: &Hp) {}
         #[system(without(P))] pub fn table_exclusion(hp: &Hp) {}
         #[system] pub fn optional_only(hp: Option<&Hp>, e: Entity) {}
         #[system] pub fn summed(hp: &Hp, t: &mut Total) {}
         #[system(without(Hp))] pub fn contradictory(hp: &mut Hp) {}",
    );
    let name = |s: &str| s.to_string();
    assert_eq!(
        leads(&analysis),
        [
            (name("heal"), Some(name("Hp"))),
            (name("both"), Some(name("Hp"))),
            (name("filtered"), Some(name("Hp"))),
            (name("mixed"), None),
            (name("table_filter"), None),
            (name("table_exclusion"), None),
            (name("optional_only"), None),
            (name("summed"), Some(name("Hp"))),
            (name("contradictory"), None),
        ]
    );
}

#[test]
fn a_walking_system_has_a_stage_and_a_pass_of_its_own() {
    // `read_hp` and `read_mana` conflict with nothing, so without the walk they would share
    // stage 0 with `move_p`.
    let (analysis, code) = build(
        "#[system] pub fn move_p(p: &mut P) {}
         #[system] pub fn read_hp(hp: &Hp) {}
         #[system] pub fn read_mana(m: &mut Mana) {}",
    );
    let stages = analysis.stages();
    assert_eq!(stages, [vec!["move_p"], vec!["read_hp"], vec!["read_mana"]]);
    let components = analysis.components();
    let hp = components.iter().position(|c| c.name == "Hp").unwrap();
    let mana = components.iter().position(|c| c.name == "Mana").unwrap();
    assert!(
        code.contains(&format!(
            "pass.sparse.values::<crate::components::Hp>({hp}u32)"
        )),
        "read_hp walks Hp's values"
    );
    assert!(
        code.contains(&format!(
            "pass.sparse.values_mut::<crate::components::Mana>({mana}u32)"
        )),
        "read_mana walks Mana's values mutably"
    );
    assert_eq!(code.matches("pass.run.walk(").count(), 2);
}
