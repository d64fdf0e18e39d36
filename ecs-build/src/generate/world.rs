//! The generated `World`: a wrapper of `sigecs::World<Model>` (whose methods it derefs to)
//! adding what needs the model's types: `run_<system>` per system, the schedule, and
//! `signature_of` returning the typed component set.

use super::*;
use crate::analyze::Param;

/// `run_<name>` for a system (raw identifiers lose their `r#`).
pub(super) fn run_method(name: &Ident) -> Ident {
    format_ident!("run_{}", name.to_string().trim_start_matches("r#"))
}

/// The private pass function of a system.
pub(super) fn system_fn(index: usize) -> Ident {
    format_ident!("system_{}", index)
}

/// The private pass function of stage `index`: its own fused pass, or the pass of its only
/// system (the same code, so it is not written twice).
pub(super) fn stage_fn(analysis: &Analysis, index: usize) -> Ident {
    match analysis.stages[index][..] {
        [only] => system_fn(only),
        _ => format_ident!("stage_{}", index),
    }
}

/// Does any of these systems take `&mut Commands`?
pub(super) fn has_commands(analysis: &Analysis, systems: &[usize]) -> bool {
    systems
        .iter()
        .any(|&s| analysis.systems[s].params.contains(&Param::Commands))
}

/// The return type and final expression of a run method that may report command failures.
fn outcome(with_commands: bool) -> (TokenStream, TokenStream) {
    if with_commands {
        (
            quote!(-> ::core::result::Result<(), ::sigecs::CommandErrors>),
            quote!(::sigecs::CommandErrors::into_result(errors)),
        )
    } else {
        (quote!(), quote!(::sigecs::__private::no_commands(errors)))
    }
}

pub(super) fn generate(analysis: &Analysis) -> TokenStream {
    let all: Vec<usize> = (0..analysis.systems.len()).collect();
    let any_commands = has_commands(analysis, &all);

    let runs = analysis.systems.iter().enumerate().map(|(i, s)| {
        let run = run_method(&s.ident);
        let f = system_fn(i);
        let (ret, end) = outcome(has_commands(analysis, &[i]));
        let sigs: Vec<String> = s
            .matches
            .iter()
            .map(|&m| format!("`{}`", analysis.signatures[m].ident))
            .collect();
        let d = doc(format!(
            "Runs system `{}` over every row of {}.{}",
            s.ident,
            sigs.join(", "),
            if has_commands(analysis, &[i]) {
                " Its commands are applied at the end; the ones that failed are returned."
            } else {
                ""
            }
        ));
        quote! {
            #d
            pub fn #run(&mut self) #ret {
                let errors = ::sigecs::__private::run_one(&mut self.0, #f);
                #end
            }
        }
    });
    let system_fns: Vec<Ident> = (0..analysis.systems.len()).map(system_fn).collect();
    let stage_fns: Vec<Ident> = (0..analysis.stages.len())
        .map(|k| stage_fn(analysis, k))
        .collect();
    let (systems, stages) = (
        Literal::usize_unsuffixed(system_fns.len()),
        Literal::usize_unsuffixed(stage_fns.len()),
    );
    let (ret, end) = outcome(any_commands);

    quote! {
        /// The pass of each system, by its index in [`SYSTEM_NAMES`].
        static SYSTEM_PASSES: [::sigecs::__private::PassFn<Model>; #systems] = [#(#system_fns),*];
        /// The pass of each stage of [`SCHEDULE`], in order.
        static STAGE_PASSES: [::sigecs::__private::PassFn<Model>; #stages] = [#(#stage_fns),*];

        /// The generated world: one packed store per declared signature, the entity locations and
        /// the resources. It dereferences to [`::sigecs::World`], which has the rest of the
        /// API (spawn, despawn, get, insert, remove, queries, resources, statistics).
        #[derive(Default)]
        pub struct World(::sigecs::World<Model>);

        impl ::core::ops::Deref for World {
            type Target = ::sigecs::World<Model>;
            #[inline]
            fn deref(&self) -> &Self::Target { &self.0 }
        }

        impl ::core::ops::DerefMut for World {
            #[inline]
            fn deref_mut(&mut self) -> &mut Self::Target { &mut self.0 }
        }

        impl ::core::fmt::Debug for World {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&self.0, f)
            }
        }

        impl World {
            /// An empty world whose resources have their `Default` values.
            pub fn new() -> Self { ::core::default::Default::default() }

            /// An empty world with the given resources.
            pub fn with_resources(resources: Resources) -> Self {
                World(::sigecs::World::with_resources(resources))
            }

            /// The schedule: stages in order, with the stores each visits and the systems it
            /// runs on them. Printable.
            pub fn schedule() -> &'static ::sigecs::schedule::Schedule { &SCHEDULE }

            #(#runs)*

            /// Runs every system once, sequentially, in declaration order.
            pub fn run_all(&mut self) #ret {
                let errors = ::sigecs::__private::run_passes(&mut self.0, &SYSTEM_PASSES);
                #end
            }

            /// Runs every system once, stage by stage: a stage is one fused pass in which each
            /// row goes through the stage's systems in order, split across rayon's pool when
            /// large enough; commands apply at the end of each stage. Gives the same world as
            /// [`World::run_all`].
            pub fn run_schedule(&mut self) #ret {
                let errors = ::sigecs::__private::run_passes(&mut self.0, &STAGE_PASSES);
                #end
            }

            /// Runs stage `k` of [`World::schedule`]; `Ok(false)` when there is no such stage,
            /// `Err` with the commands that could not be applied.
            pub fn run_stage(&mut self, k: usize) -> ::core::result::Result<bool, ::sigecs::CommandErrors> {
                ::sigecs::__private::run_pass(&mut self.0, &STAGE_PASSES, k)
            }

            /// Runs the system at `index` in [`SYSTEM_NAMES`]; `Ok(false)` when there is none,
            /// `Err` with the commands that could not be applied.
            pub fn run_system(&mut self, index: usize) -> ::core::result::Result<bool, ::sigecs::CommandErrors> {
                ::sigecs::__private::run_pass(&mut self.0, &SYSTEM_PASSES, index)
            }
        }
    }
}
