//! The build-time schedule, as data the generated world exposes and prints.

use std::fmt;

/// One stage of a generated schedule: systems that share no conflicting access, run as one
/// fused pass over the stores they visit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage's systems, in declaration order.
    pub systems: &'static [&'static str],
    /// Per store the stage visits: the signature name and the systems that run on its rows.
    pub stores: &'static [(&'static str, &'static [&'static str])],
    /// False for the stage of a system that writes a resource: such a system runs alone in its
    /// stage, on one thread.
    pub parallel: bool,
}

/// The generated schedule: stages in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The stages.
    pub stages: &'static [Stage],
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, stage) in self.stages.iter().enumerate() {
            write!(f, "stage {i}: {}", stage.systems.join(", "))?;
            if !stage.parallel {
                write!(f, " (one thread: writes a resource)")?;
            }
            writeln!(f)?;
            for (store, systems) in stage.stores {
                writeln!(f, "  {store:<22} {}", systems.join(" + "))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_prints_stages_and_stores() {
        static S: Schedule = Schedule {
            stages: &[
                Stage {
                    systems: &["a", "b"],
                    stores: &[("Body", &["a", "b"]), ("Particle", &["b"])],
                    parallel: true,
                },
                Stage {
                    systems: &["c"],
                    stores: &[("Body", &["c"])],
                    parallel: false,
                },
            ],
        };
        let text = S.to_string();
        assert!(text.contains("stage 0: a, b\n"), "{text}");
        assert!(text.contains("Body                   a + b"), "{text}");
        assert!(
            text.contains("stage 1: c (one thread: writes a resource)"),
            "{text}"
        );
    }
}
