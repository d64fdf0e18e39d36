//! What a caller of the build script can read of an [`Analysis`]: plain names and numbers, so
//! the crate's public interface holds no syn or proc-macro2 type.

use super::{name, Analysis};
use crate::decl::LayoutDecl;
use crate::Diagnostic;

/// A declared component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyzedComponent {
    /// Its type name (its id is its index in [`Analysis::components`]).
    pub name: String,
    /// `#[component(sparse)]`: kept in a sparse set beside the stores.
    pub sparse: bool,
    /// `#[component(cold)]`: apart from the hot row in `rows` stores.
    pub cold: bool,
}

/// A declared signature and its store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyzedSignature {
    /// Its struct name (its store id is its index in [`Analysis::signatures`]).
    pub name: String,
    /// `#[signature(layout = "rows")]`.
    pub rows: bool,
    /// Its components' names, in field order.
    pub components: Vec<String>,
}

/// A system, where the schedule puts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyzedSystem {
    /// Its function name.
    pub name: String,
    /// Where it is declared: `file:line:column`.
    pub location: String,
    /// The order constraints it declares, as written (`after(a), before(b)`), or empty.
    pub constraints: String,
    /// Its stage in `run_schedule`.
    pub stage: usize,
    /// The declared signatures whose stores it visits.
    pub signatures: Vec<String>,
    /// For a system whose components are all sparse: the component whose sparse set it walks.
    pub walks: Option<String>,
}

impl Analysis {
    /// The components, by id (sorted by name).
    pub fn components(&self) -> Vec<AnalyzedComponent> {
        self.components
            .iter()
            .map(|c| AnalyzedComponent {
                name: name(&c.ident),
                sparse: c.sparse,
                cold: c.cold,
            })
            .collect()
    }

    /// The signatures, by store id (sorted by name).
    pub fn signatures(&self) -> Vec<AnalyzedSignature> {
        self.signatures
            .iter()
            .map(|s| AnalyzedSignature {
                name: name(&s.ident),
                rows: s.layout == LayoutDecl::Rows,
                components: s
                    .fields
                    .iter()
                    .map(|&(_, c)| name(&self.components[c].ident))
                    .collect(),
            })
            .collect()
    }

    /// The resources' type names (sorted).
    pub fn resources(&self) -> Vec<String> {
        self.resources.iter().map(|r| name(&r.ident)).collect()
    }

    /// The systems, in the order `run_all` runs them.
    pub fn systems(&self) -> Vec<AnalyzedSystem> {
        self.systems
            .iter()
            .map(|s| AnalyzedSystem {
                name: name(&s.ident),
                location: s.location.clone(),
                constraints: s.constraints.clone(),
                stage: s.stage,
                signatures: s
                    .matches
                    .iter()
                    .map(|&k| name(&self.signatures[k].ident))
                    .collect(),
                walks: s.lead.map(|c| name(&self.components[c].ident)),
            })
            .collect()
    }

    /// The stages of `run_schedule`, in order, each its systems' names.
    pub fn stages(&self) -> Vec<Vec<String>> {
        self.stages
            .iter()
            .map(|stage| {
                stage
                    .iter()
                    .map(|&i| name(&self.systems[i].ident))
                    .collect()
            })
            .collect()
    }

    /// What the build reports without failing: in an open world, each system that matches no
    /// declared signature and is not marked `#[system(dynamic)]`.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }
}
