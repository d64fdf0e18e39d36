//! Systems: per-store passes (sequential, or split into chunks across rayon's pool), the
//! `run_<system>` methods, the stages of the schedule as fused passes, and command application.

use super::*;

/// Resource bindings `r<id>` for the given systems: `&mut` if any of them writes the resource
/// (then it is the only user, since writers conflict with every other user).
fn resource_bindings(model: &Model, systems: &[usize]) -> TokenStream {
    let mut used: Vec<(usize, bool)> = Vec::new();
    for &s in systems {
        for p in &model.systems[s].params {
            if let Param::Resource { id, mutable } = *p {
                match used.iter_mut().find(|(r, _)| *r == id) {
                    Some(entry) => entry.1 |= mutable,
                    None => used.push((id, mutable)),
                }
            }
        }
    }
    let bindings = used.iter().map(|&(id, mutable)| {
        let b = format_ident!("r{}", id);
        let f = format_ident!("{}", snake_case(&model.resources[id].ident.to_string()));
        if mutable {
            quote!(let #b = &mut self.resources.#f;)
        } else {
            quote!(let #b = &self.resources.#f;)
        }
    });
    quote!(#(#bindings)*)
}

/// One vector a pass iterates: its path in the store, whether it is borrowed mutably, and the
/// per-row binding.
struct Source {
    vec: TokenStream,
    mutable: bool,
    binding: Ident,
}

/// `a.zip(b).zip(c)` with the pattern `((a, b), c)`.
fn zip(iters: Vec<TokenStream>, bindings: Vec<TokenStream>) -> (TokenStream, TokenStream) {
    let mut iter = iters[0].clone();
    let mut pat = bindings[0].clone();
    for (it, b) in iters.into_iter().zip(bindings).skip(1) {
        iter = quote!(#iter.zip(#it));
        pat = quote!((#pat, #b));
    }
    (iter, pat)
}

/// The smallest `min_chunk` of the systems (they share one pass), or the default.
fn min_chunk(model: &Model, systems: &[usize]) -> TokenStream {
    let set: Vec<usize> = systems
        .iter()
        .filter_map(|&s| model.systems[s].min_chunk)
        .collect();
    let default = quote!(::ecs_core::schedule::DEFAULT_MIN_CHUNK);
    match set.iter().min() {
        Some(&m) if set.len() == systems.len() => quote!(#m),
        Some(&m) => quote!(#default.min(#m)),
        None => default,
    }
}

/// One pass over the rows of `store`, running `systems` (all matching it, in declaration order)
/// on each row. Small stores run inline; larger ones are cut into chunks that rayon's threads
/// take, each chunk a plain sequential loop. Commands go into `pending`, in row order.
pub(super) fn gen_pass(model: &Model, systems: &[usize], store: usize) -> TokenStream {
    let sig = &model.signatures[store];
    let field = store_names(sig).field;
    let params = || systems.iter().flat_map(|&s| model.systems[s].params.iter());
    let uses =
        |id: usize| params().any(|p| matches!(p, Param::Component { id: c, .. } if *c == id));
    let writes = |id: usize| {
        params().any(|p| matches!(p, Param::Component { id: c, mutable: true, .. } if *c == id))
    };

    let mut sources: Vec<Source> = Vec::new();
    match sig.layout {
        LayoutDecl::Columns => {
            for (f, id) in &sig.fields {
                if uses(*id) {
                    sources.push(Source {
                        vec: quote!(store.#f),
                        mutable: writes(*id),
                        binding: value_binding(*id),
                    });
                }
            }
        }
        LayoutDecl::Rows => {
            for (cold, vec, binding) in [
                (false, quote!(store.rows), ident("row")),
                (true, quote!(store.cold), ident("cold")),
            ] {
                let part: Vec<usize> = sig
                    .fields
                    .iter()
                    .map(|(_, id)| *id)
                    .filter(|id| is_cold(model, sig, *id) == cold)
                    .collect();
                if part.iter().any(|id| uses(*id)) {
                    sources.push(Source {
                        vec,
                        mutable: part.iter().any(|id| writes(*id)),
                        binding,
                    });
                }
            }
        }
    }
    if params().any(|p| *p == Param::Entity) {
        sources.push(Source {
            vec: quote!(store.entities),
            mutable: false,
            binding: ident("entity"),
        });
    }

    let calls = systems.iter().map(|&s| {
        let system = &model.systems[s];
        let args = system.params.iter().map(|p| match *p {
            Param::Entity => quote!(*entity),
            Param::Commands => quote!(&mut commands),
            Param::Resource { id, mutable } => {
                let b = format_ident!("r{}", id);
                if mutable {
                    quote!(&mut *#b)
                } else {
                    quote!(#b)
                }
            }
            Param::Component {
                id,
                mutable,
                optional,
            } => {
                if !sig.has(id) {
                    return quote!(::core::option::Option::None);
                }
                let value = match sig.layout {
                    LayoutDecl::Columns => {
                        // Bound by `iter_mut` when some system of the pass writes the column
                        // (then this is its only user), by `iter` otherwise.
                        let b = value_binding(id);
                        match (mutable, writes(id)) {
                            (true, _) | (false, false) => quote!(#b),
                            (false, true) => quote!(&*#b),
                        }
                    }
                    LayoutDecl::Rows => {
                        let f = &sig.fields.iter().find(|(_, c)| *c == id).expect("held").0;
                        let holder = if is_cold(model, sig, id) {
                            ident("cold")
                        } else {
                            ident("row")
                        };
                        if mutable {
                            quote!(&mut #holder.#f)
                        } else {
                            quote!(&#holder.#f)
                        }
                    }
                };
                if optional {
                    quote!(::core::option::Option::Some(#value))
                } else {
                    value
                }
            }
        });
        let path = &system.path;
        quote!(#path(#(#args),*);)
    });
    let body = quote!(#(#calls)*);

    let has_commands = params().any(|p| *p == Param::Commands);
    let new_commands =
        has_commands.then(|| quote!(let mut commands = ::ecs_core::schedule::Commands::new();));
    let keep_commands = has_commands.then(|| quote!(pending.push(commands);));
    let bindings: Vec<TokenStream> = sources
        .iter()
        .map(|s| s.binding.to_token_stream())
        .collect();
    let (seq_iter, pat) = zip(
        sources
            .iter()
            .map(|s| {
                let v = &s.vec;
                if s.mutable {
                    quote!(#v.iter_mut())
                } else {
                    quote!(#v.iter())
                }
            })
            .collect(),
        bindings.clone(),
    );
    let sequential = quote! {
        #new_commands
        for #pat in #seq_iter { #body }
        #keep_commands
    };
    // A system that writes a resource runs sequentially.
    if systems.iter().any(|&s| model.systems[s].sequential()) {
        return quote!({ let store = &mut self.stores.#field; #sequential });
    }

    let chunk_bindings: Vec<Ident> = sources
        .iter()
        .map(|s| format_ident!("chunk_{}", s.binding))
        .collect();
    let (par_iter, chunk_pat) = zip(
        sources
            .iter()
            .map(|s| {
                let v = &s.vec;
                if s.mutable {
                    quote!(#v.par_chunks_mut(chunk))
                } else {
                    quote!(#v.par_chunks(chunk))
                }
            })
            .collect(),
        chunk_bindings.iter().map(|b| quote!(#b)).collect(),
    );
    let (chunk_iter, _) = zip(
        sources
            .iter()
            .zip(&chunk_bindings)
            .map(|(s, b)| {
                if s.mutable {
                    quote!(#b.iter_mut())
                } else {
                    quote!(#b.iter())
                }
            })
            .collect(),
        bindings,
    );
    let parallel = if has_commands {
        quote! {
            let buffers: ::std::vec::Vec<::ecs_core::schedule::Commands> = #par_iter
                .map(|#chunk_pat| { #new_commands for #pat in #chunk_iter { #body } commands })
                .collect();
            pending.extend(buffers);
        }
    } else {
        quote!(#par_iter.for_each(|#chunk_pat| { for #pat in #chunk_iter { #body } });)
    };
    let min_chunk = min_chunk(model, systems);
    quote! {
        {
            let store = &mut self.stores.#field;
            let len = store.len();
            let chunk = ::ecs_core::schedule::chunk_len(len, self.min_chunk.unwrap_or(#min_chunk));
            if chunk >= len {
                #sequential
            } else {
                use ::ecs_core::rayon::prelude::*;
                #parallel
            }
        }
    }
}

/// `run_<system>`: one pass per matching store, then the system's commands.
pub(super) fn gen_run_system(model: &Model, index: usize) -> TokenStream {
    let system = &model.systems[index];
    let name = &system.ident;
    let run = format_ident!("run_{}", name);
    let resources = resource_bindings(model, &[index]);
    let passes = system.matches.iter().map(|&s| gen_pass(model, &[index], s));
    let sigs: Vec<String> = system
        .matches
        .iter()
        .map(|&s| format!("`{}`", model.signatures[s].ident))
        .collect();
    let d = doc(format!(
        "Runs system `{name}` over every row of the matching signatures: {}. Commands it requests are applied at the end.",
        sigs.join(", ")
    ));
    quote! {
        #d
        pub fn #run(&mut self) {
            #[allow(unused_mut)]
            let mut pending: ::std::vec::Vec<::ecs_core::schedule::Commands> = ::std::vec::Vec::new();
            {
                #resources
                #(#passes)*
            }
            self.apply_commands(pending);
        }
    }
}

/// The stages: `run_stage_<k>` methods (one fused pass per store), `run_stage`,
/// `run_schedule`, and the printable plan.
pub(super) fn gen_stages(model: &Model) -> (TokenStream, TokenStream) {
    let mut methods = Vec::new();
    let mut plan = Vec::new();
    for (k, stage) in model.stages.iter().enumerate() {
        let run = format_ident!("run_stage_{}", k);
        let resources = resource_bindings(model, stage);
        let mut passes = Vec::new();
        let mut stores = Vec::new();
        for (s, sig) in model.signatures.iter().enumerate() {
            let here: Vec<usize> = stage
                .iter()
                .copied()
                .filter(|&i| model.systems[i].matches.contains(&s))
                .collect();
            if here.is_empty() {
                continue;
            }
            passes.push(gen_pass(model, &here, s));
            let name = sig.ident.to_string();
            let names: Vec<String> = here
                .iter()
                .map(|&i| model.systems[i].ident.to_string())
                .collect();
            stores.push(quote!((#name, &[#(#names),*])));
        }
        let names: Vec<String> = stage
            .iter()
            .map(|&i| model.systems[i].ident.to_string())
            .collect();
        let parallel = !stage.iter().any(|&i| model.systems[i].sequential());
        plan.push(quote!(::ecs_core::schedule::Stage { systems: &[#(#names),*], stores: &[#(#stores),*], parallel: #parallel }));
        let d = doc(format!(
            "Runs stage {k} of the schedule ({}) as one fused pass per store.",
            names.join(", ")
        ));
        methods.push(quote! {
            #d
            fn #run(&mut self) {
                #[allow(unused_mut)]
                let mut pending: ::std::vec::Vec<::ecs_core::schedule::Commands> = ::std::vec::Vec::new();
                {
                    #resources
                    #(#passes)*
                }
                self.apply_commands(pending);
            }
        });
    }
    let runs: Vec<Ident> = (0..model.stages.len())
        .map(|k| format_ident!("run_stage_{}", k))
        .collect();
    let ks: Vec<usize> = (0..model.stages.len()).collect();
    let methods = quote! {
        #(#methods)*

        /// Runs stage `k` of [`World::schedule`]; false when there is no such stage.
        pub fn run_stage(&mut self, k: usize) -> bool {
            match k {
                #( #ks => { self.#runs(); true } )*
                _ => false,
            }
        }

        /// Runs every system once, stage by stage: systems of a stage share no conflicting
        /// access and run as one fused pass per store, split across rayon's pool for large
        /// stores; commands apply at the end of each stage. Gives the same world as
        /// [`World::run_all`].
        pub fn run_schedule(&mut self) {
            #( self.#runs(); )*
        }

        /// The schedule: stages in order, with the stores each visits and the systems it runs
        /// on them. Printable.
        pub fn schedule() -> &'static ::ecs_core::schedule::Schedule {
            &SCHEDULE
        }
    };
    let statics = quote! {
        /// The generated schedule (see `World::schedule`).
        pub static SCHEDULE: ::ecs_core::schedule::Schedule = ::ecs_core::schedule::Schedule { stages: &[#(#plan),*] };
    };
    (methods, statics)
}

/// `apply_commands`: dispatches each deferred change on the type of its value.
pub(super) fn gen_apply_commands(model: &Model) -> TokenStream {
    let sig_paths: Vec<&syn::Path> = model.signatures.iter().map(|s| &s.path).collect();
    let comp_paths: Vec<&syn::Path> = model.components.iter().map(|c| &c.path).collect();
    quote! {
        #[allow(dead_code)]
        fn apply_commands(&mut self, buffers: ::std::vec::Vec<::ecs_core::schedule::Commands>) {
            for mut buffer in buffers {
                for change in buffer.drain() {
                    if let ::core::result::Result::Err(e) = self.apply_change(change) {
                        self.command_errors.push(e);
                    }
                }
            }
        }

        #[allow(dead_code, unused_variables, clippy::needless_return)]
        fn apply_change(&mut self, change: ::ecs_core::schedule::Command) -> ::core::result::Result<(), ::ecs_core::WorldError> {
            match change {
                ::ecs_core::schedule::Command::Despawn(entity) => {
                    self.despawn(entity);
                    Ok(())
                }
                ::ecs_core::schedule::Command::Spawn { value, type_name } => {
                    #(
                        let value = match value.downcast::<#sig_paths>() {
                            ::core::result::Result::Ok(v) => return self.try_spawn(*v).map(drop),
                            ::core::result::Result::Err(v) => v,
                        };
                    )*
                    drop(value);
                    Err(::ecs_core::WorldError::NotInWorld { kind: "signature", type_name })
                }
                ::ecs_core::schedule::Command::Insert { entity, value, type_name } => {
                    #(
                        let value = match value.downcast::<#comp_paths>() {
                            ::core::result::Result::Ok(v) => return self.insert(entity, *v).map(drop),
                            ::core::result::Result::Err(v) => v,
                        };
                    )*
                    drop(value);
                    Err(::ecs_core::WorldError::NotInWorld { kind: "component", type_name })
                }
                ::ecs_core::schedule::Command::Remove { entity, type_id, type_name } => {
                    #(
                        if type_id == ::core::any::TypeId::of::<#comp_paths>() {
                            return self.remove::<#comp_paths>(entity).map(drop);
                        }
                    )*
                    Err(::ecs_core::WorldError::NotInWorld { kind: "component", type_name })
                }
            }
        }

        /// Errors of commands that could not be applied (e.g. an insert leading to an
        /// undeclared signature), oldest first; the other commands were applied.
        pub fn take_command_errors(&mut self) -> ::std::vec::Vec<::ecs_core::WorldError> {
            ::core::mem::take(&mut self.command_errors)
        }

        /// Overrides every system's minimum rows per parallel chunk (`None`: each system's
        /// `#[system(min_chunk = N)]`, else `ecs_core::schedule::DEFAULT_MIN_CHUNK`).
        pub fn set_min_chunk(&mut self, min_chunk: ::core::option::Option<usize>) {
            self.min_chunk = min_chunk;
        }
    }
}
