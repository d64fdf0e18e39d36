//! Fusing consecutive stages into one pass that runs each row through all their systems.
//!
//! [`super::place_in_stages`] puts two systems that conflict (one writes what the other reads
//! or writes) in different stages, and each stage waits for the whole previous one on every
//! store. For most systems that wait is not needed: a system that takes only its row's
//! components, its entity, resources it reads and events it reads computes the same values
//! for a row whatever the other rows hold, and so does every later system of such a run. Two stages of such
//! systems, the first without commands (its changes would have to apply in between), give the
//! same world run one after the other over all rows as run row by row, each row going through
//! the first stage's systems and then the second's. So such stages fuse into one: a row's work
//! waits only for the earlier work on the same row, there is one pass over each store instead
//! of one per stage, and one hand-off to the pool less.
//!
//! A stage does not fuse with its neighbours when one of its systems writes a resource, runs
//! once per frame, is change-filtered or walks a sparse set (alone in its stage: the others'
//! rows are not its inputs) or takes a sparse component (found by entity, outside the row's
//! store); nor when the fused pass would visit
//! `table_from` stores or more (such passes take each store once per system), nor into a stage
//! that may spawn (in a deterministic world that stage runs on one thread, and so would the
//! fused one).

use super::{Analysis, Param, System};

/// Fuses each run of consecutive stages that may run row by row (see the module docs) into one
/// stage, its systems in run order. Each stage keeps the stages it was fused from as its
/// groups (`Analysis::groups`): systems of one group never conflict, so an open world's pass
/// over its dynamic stores, which takes each system's columns apart, runs group by group.
pub(crate) fn fuse_stages(analysis: &mut Analysis, table_from: usize) {
    let mut stages: Vec<Vec<Vec<usize>>> = Vec::new();
    for stage in std::mem::take(&mut analysis.stages) {
        match stages.last_mut() {
            Some(fused) if fuses(analysis, fused, &stage, table_from) => fused.push(stage),
            _ => stages.push(vec![stage]),
        }
    }
    analysis.stages = stages
        .iter()
        .map(|groups| {
            let mut systems: Vec<usize> = groups.concat();
            systems.sort_unstable();
            systems
        })
        .collect();
    for (k, stage) in analysis.stages.iter().enumerate() {
        for &i in stage {
            analysis.systems[i].stage = k;
        }
    }
    analysis.groups = stages;
}

/// Can `next` run row by row after the stages in `groups` (one fused stage)?
fn fuses(analysis: &Analysis, groups: &[Vec<usize>], next: &[usize], table_from: usize) -> bool {
    let before: Vec<&System> = groups
        .iter()
        .flatten()
        .map(|&i| &analysis.systems[i])
        .collect();
    let after: Vec<&System> = next.iter().map(|&i| &analysis.systems[i]).collect();
    let stores = (0..analysis.signatures.len())
        .filter(|s| {
            before
                .iter()
                .chain(&after)
                .any(|sys| sys.matches.contains(s))
        })
        .count();
    before.iter().chain(&after).all(|s| row_local(analysis, s))
        && !before.iter().any(|s| s.params.contains(&Param::Commands))
        && !after.iter().any(|s| s.spawns)
        && stores < table_from
}

/// A system whose values for a row depend only on that row and on what no system of its
/// stage can write: it takes no sparse component and is not alone in its stage. (The events
/// it reads are the same for every row: none is sent during a stage, and a fused stage's
/// passes over dynamic stores start from the readers' cursors as the stage found them.)
fn row_local(analysis: &Analysis, system: &System) -> bool {
    !system.access.alone()
        && !system
            .params
            .iter()
            .any(|p| matches!(*p, Param::Component { id, .. } if analysis.components[id].sparse))
}

#[cfg(test)]
mod tests {
    use crate::Builder;

    /// The stages and groups of a world of `P`, `V`, `Hp` and the given systems.
    fn fused(systems: &str, table_from: usize) -> (Vec<Vec<String>>, Vec<usize>) {
        built(systems, Builder::new().store_tables_from(table_from))
    }

    /// [`fused`] with `builder`'s settings.
    fn built(systems: &str, builder: Builder) -> (Vec<Vec<String>>, Vec<usize>) {
        let decls = format!(
            "use sigecs::prelude::*;\n\
             #[derive(Component)] pub struct P(pub f32);\n\
             #[derive(Component)] pub struct V(pub f32);\n\
             #[derive(Component)] pub struct Hp(pub i32);\n\
             #[derive(Component)] #[component(sparse)] pub struct Mark;\n\
             #[derive(Resource, Default)] pub struct Gravity(pub f32);\n\
             #[derive(Signature)] pub struct Body {{ pub p: P, pub v: V }}\n\
             #[derive(Signature)] pub struct Unit {{ pub p: P, pub v: V, pub hp: Hp }}\n\
             {systems}"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mod.rs"), decls).unwrap();
        let analysis = builder
            .scan(dir.path(), "crate::components")
            .rerun_if_changed(false)
            .analyze()
            .unwrap();
        let groups = analysis.groups.iter().map(Vec::len).collect();
        (analysis.stages(), groups)
    }

    fn names(stages: &[&[&str]]) -> Vec<Vec<String>> {
        stages
            .iter()
            .map(|s| s.iter().map(|n| n.to_string()).collect())
            .collect()
    }

    const MOVE: &str = "#[system] pub fn integrate(p: &mut P, v: &V) {}\n\
                        #[system] pub fn gravity(v: &mut V, g: &Gravity) {}\n\
                        #[system] pub fn clamp(p: &mut P) {}\n";

    #[test]
    fn conflicting_row_local_stages_fuse_in_run_order() {
        let (stages, groups) = fused(MOVE, 32);
        assert_eq!(stages, names(&[&["integrate", "gravity", "clamp"]]));
        assert_eq!(
            groups,
            [2],
            "integrate; then gravity and clamp, which do not conflict"
        );
    }

    /// The generated form: in an open world the fused stage runs one pass over its declared
    /// stores, each row through both systems, then one pass per group over the dynamic stores;
    /// a strict world has the one pass.
    #[test]
    fn a_fused_stage_runs_its_groups_over_the_dynamic_stores() {
        let systems = "#[system] pub fn integrate(p: &mut P, v: &V) {}\n\
                       #[system] pub fn gravity(v: &mut V, g: &Gravity) {}\n";
        let generated = |undeclared: crate::Undeclared| {
            let dir = tempfile::tempdir().unwrap();
            let decls = format!(
                "use sigecs::prelude::*;\n\
                 #[derive(Component)] pub struct P(pub f32);\n\
                 #[derive(Component)] pub struct V(pub f32);\n\
                 #[derive(Resource, Default)] pub struct Gravity(pub f32);\n\
                 #[derive(Signature)] pub struct Body {{ pub p: P, pub v: V }}\n{systems}"
            );
            std::fs::write(dir.path().join("mod.rs"), decls).unwrap();
            Builder::new()
                .scan(dir.path(), "crate::components")
                .rerun_if_changed(false)
                .undeclared(undeclared)
                .generate_string()
                .unwrap()
        };
        let open = generated(crate::Undeclared::Dynamic);
        let count = |text: &str, what: &str| text.matches(what).count();
        assert_eq!(count(&open, "fn stage_0("), 1, "{open}");
        assert_eq!(
            count(&open, "::sigecs::__private::run_groups("),
            1,
            "{open}"
        );
        assert_eq!(count(&open, "fn stage_0_declared("), 1);
        assert_eq!(count(&open, "fn stage_0_group_0("), 1);
        assert_eq!(count(&open, "fn stage_0_group_1("), 1);
        // One loop over Body's rows calls both systems, `gravity` after `integrate`.
        let declared = &open[open.find("fn stage_0_declared(").unwrap()..];
        let declared = &declared[..declared.find("\n    }\n").unwrap()];
        let (i, g) = (
            declared.find("integrate(").unwrap(),
            declared.find("gravity(").unwrap(),
        );
        assert!(i < g, "{declared}");
        assert_eq!(count(declared, "dynamic(s)"), 0, "{declared}");
        let strict = generated(crate::Undeclared::Error);
        assert_eq!(count(&strict, "run_groups("), 0);
        assert_eq!(count(&strict, "_group_"), 0);
        assert_eq!(count(&strict, "fn stage_0("), 1);
    }

    #[test]
    fn the_builder_can_keep_stages_apart() {
        let (stages, groups) = built(MOVE, Builder::new().fuse_stages(false));
        assert_eq!(stages, names(&[&["integrate"], &["gravity", "clamp"]]));
        assert_eq!(groups, [1, 1]);
    }

    #[test]
    fn a_stage_with_commands_ends_a_fused_stage() {
        let systems = format!(
            "{MOVE}#[system] pub fn reap(e: Entity, hp: &Hp, commands: &mut Commands) \
             {{ commands.despawn(e); }}\n#[system] pub fn heal(hp: &mut Hp) {{}}\n"
        );
        let (stages, groups) = fused(&systems, 32);
        assert_eq!(
            stages,
            names(&[&["integrate", "gravity", "clamp", "reap"], &["heal"]]),
            "reap's stage joins the earlier one; heal must see its despawns"
        );
        assert_eq!(groups, [2, 1]);
    }

    #[test]
    fn a_stage_that_may_spawn_does_not_fuse() {
        let systems = format!(
            "{MOVE}#[system] pub fn split(hp: &Hp, commands: &mut Commands) \
             {{ commands.spawn(Body {{ p: P(0.0), v: V(0.0) }}); }}\n"
        );
        let (stages, _) = fused(&systems, 32);
        assert_eq!(
            stages,
            names(&[&["integrate"], &["gravity", "clamp", "split"]]),
            "one thread in a deterministic world: kept apart"
        );
    }

    #[test]
    fn an_event_reader_fuses() {
        let systems = "#[derive(Event)] pub struct Push(pub f32);\n\
             #[system] pub fn integrate(p: &mut P, v: &V) {}\n\
             #[system] pub fn push(v: &mut V, pushes: &EventReader<Push>) {}\n";
        let (stages, groups) = fused(systems, 32);
        assert_eq!(stages, names(&[&["integrate", "push"]]));
        assert_eq!(groups, [2]);
    }

    #[test]
    fn resource_writers_sparse_components_and_large_passes_do_not_fuse() {
        let systems = format!(
            "{MOVE}#[system] pub fn weigh(p: &P, g: &mut Gravity) {{}}\n\
             #[system] pub fn slow(v: &mut V) {{}}\n\
             #[system] pub fn mark(v: &mut V, m: Option<&Mark>) {{}}\n"
        );
        let (stages, _) = fused(&systems, 32);
        assert_eq!(
            stages,
            names(&[
                &["integrate", "gravity", "clamp"],
                &["weigh"],
                &["slow"],
                &["mark"]
            ])
        );
        let (stages, groups) = fused(MOVE, 2);
        assert_eq!(
            stages,
            names(&[&["integrate"], &["gravity", "clamp"]]),
            "two stores from a table on: not fused"
        );
        assert_eq!(groups, [1, 1]);
    }
}
