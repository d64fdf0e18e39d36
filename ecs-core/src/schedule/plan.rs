//! The build-time schedule, as data the generated world exposes and prints.

use std::fmt;

/// One stage of a generated schedule: systems run as one fused pass over the stores they
/// visit, each row going through them in the listed order (their run order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage's systems, in run order.
    pub systems: &'static [&'static str],
    /// Per store the stage visits: the signature name and the systems that run on its rows.
    pub stores: &'static [(&'static str, &'static [&'static str])],
    /// For the stage of a system whose components are all sparse: the component whose sparse
    /// set it walks (it visits no store).
    pub walks: Option<&'static str>,
    /// False for the stage of a system that writes a resource: such a system runs alone in its
    /// stage, on one thread.
    pub parallel: bool,
    /// True for the stage of a frame-level system (no component or entity parameter): it runs
    /// once, alone in its stage.
    pub frame: bool,
    /// True when one of its systems may spawn through `Commands`: in a deterministic world
    /// (see [`crate::World::set_deterministic`]) the stage runs on one thread.
    pub spawns: bool,
    /// True when some of its systems conflict (one writes what a later one reads or writes).
    /// They take only their row's components, its entity, and resources and events they
    /// read, so a row going through them in order gets what running them one after the other
    /// over all rows gives.
    pub ordered: bool,
}

/// The generated schedule: the systems in the order `run_all` runs them, and the stages
/// `run_schedule` runs, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Every system in run order: its name, where it is declared (`file:line:column`), and the
    /// order constraints it declares (`"after(a), before(b)"`, empty when none). The order is
    /// declaration order (depth-first at each `mod` line, as rustc reads the modules), with
    /// each system that declares `after(..)`/`before(..)` moved as far as they require and no
    /// further; the other systems keep their declared places. (Precisely: of the systems whose
    /// predecessors have run, the next is the one with the smallest key `(k, i)`, `i` being its
    /// declaration index and `k` the smallest declaration index among it and the systems it is
    /// declared `before`, directly or through their own `before`.)
    pub systems: &'static [(&'static str, &'static str, &'static str)],
    /// The stages.
    pub stages: &'static [Stage],
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "systems, in run order (declaration order; one declaring after/before moves just \
             as far as they require):"
        )?;
        let width = self.systems.iter().map(|s| s.0.len()).max().unwrap_or(0);
        for (i, (name, at, constraints)) in self.systems.iter().enumerate() {
            let line = format!("  {:>2}. {name:<width$}  {at}  {constraints}", i + 1);
            writeln!(f, "{}", line.trim_end())?;
        }
        for (i, stage) in self.stages.iter().enumerate() {
            write!(f, "stage {i}: {}", stage.systems.join(", "))?;
            let mut notes = Vec::new();
            if let Some(component) = stage.walks {
                notes.push(format!("walks the sparse set of {component}"));
            }
            if stage.frame {
                notes.push("once per run".to_string());
            } else if !stage.parallel {
                notes.push("one thread: writes a resource".to_string());
            } else if stage.spawns {
                notes.push("one thread in a deterministic world: may spawn".to_string());
            }
            if stage.ordered {
                notes.push("row by row, in this order".to_string());
            }
            if !notes.is_empty() {
                write!(f, " ({})", notes.join("; "))?;
            }
            writeln!(f)?;
            for (store, systems) in stage.stores {
                writeln!(f, "  {store:<22} {}", systems.join(" + "))?;
            }
        }
        writeln!(
            f,
            "after each stage: its commands apply in row order; world transforms are exact \
             once they have (a despawn takes the entity's hierarchy subtree along)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_prints_stages_and_stores() {
        static S: Schedule = Schedule {
            systems: &[
                ("a", "src/a.rs:3", ""),
                ("b", "src/a.rs:9", ""),
                ("clock", "src/b.rs:1", "after(b)"),
            ],
            stages: &[
                Stage {
                    systems: &["a", "b"],
                    stores: &[("Body", &["a", "b"]), ("Particle", &["b"])],
                    walks: None,
                    parallel: true,
                    frame: false,
                    spawns: false,
                    ordered: true,
                },
                Stage {
                    systems: &["c"],
                    stores: &[("Body", &["c"])],
                    walks: None,
                    parallel: false,
                    frame: false,
                    spawns: false,
                    ordered: false,
                },
                Stage {
                    systems: &["clock"],
                    stores: &[],
                    walks: None,
                    parallel: false,
                    frame: true,
                    spawns: false,
                    ordered: false,
                },
                Stage {
                    systems: &["hatch"],
                    stores: &[("Egg", &["hatch"])],
                    walks: None,
                    parallel: true,
                    frame: false,
                    spawns: true,
                    ordered: false,
                },
                Stage {
                    systems: &["heal"],
                    stores: &[],
                    walks: Some("Hp"),
                    parallel: true,
                    frame: false,
                    spawns: false,
                    ordered: false,
                },
            ],
        };
        let text = S.to_string();
        assert!(
            text.starts_with(
                "systems, in run order (declaration order; one declaring after/before moves \
                 just as far as they require):\n   1. a      src/a.rs:3\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("   3. clock  src/b.rs:1  after(b)\n"),
            "{text}"
        );
        assert!(text.contains("stage 2: clock (once per run)\n"), "{text}");
        assert!(
            text.contains("stage 0: a, b (row by row, in this order)\n"),
            "{text}"
        );
        assert!(text.ends_with("(a despawn takes the entity's hierarchy subtree along)\n"));
        assert!(text.contains("Body                   a + b"), "{text}");
        assert!(
            text.contains("stage 1: c (one thread: writes a resource)"),
            "{text}"
        );
        assert!(
            text.contains("stage 3: hatch (one thread in a deterministic world: may spawn)\n"),
            "{text}"
        );
        assert!(
            text.contains("stage 4: heal (walks the sparse set of Hp)\nafter each stage"),
            "{text}"
        );
    }
}
