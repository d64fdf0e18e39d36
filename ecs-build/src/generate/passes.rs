//! The system passes: one private function per system (`system_<i>`) and per stage of the
//! schedule that fuses several systems (`stage_<k>`); a stage of one system runs that
//! system's pass. A fused stage whose pass reaches its stores through a table is its
//! systems' passes too (`stage_<k>_for`, told which system to run alone; see [`hosts`]), so
//! a large world compiles one pass per stage and not one more per system.
//!
//! A pass declares an enum `Part` with one variant per store *shape* — the column types and
//! system calls a store needs; stores of one shape (most of a pass's stores) share it —
//! holding a store's typed column slices, and a body with one arm per shape that runs the
//! systems over a part with a plain loop (over several columns, an index loop over slices cut
//! to one length), so the inner loop is a hand-written one.
//!
//! A pass names only what differs between passes: its part types, its constants, and how each
//! declared store's columns are taken (a line each, as the store's variant, in a pass over
//! fewer than [`TABLE_FROM`] stores; from there a static table of store ids and column
//! indices that one loop in `sigecs` walks, so that a pass's code grows with its shapes and
//! not with its stores) and a dynamic store's; `sigecs::__pass!` writes the `Part` enum and
//! its `PassParts` impl around them. Everything else is written once in `sigecs`:
//! `PassStores` walks the declared and then the dynamic stores, and `PassRun::parts`
//! (instantiated once per pass) runs the body on each part in turn when the pass is small, or
//! cuts the parts into jobs for rayon's pool. So a generated pass is its types, its bindings
//! and its loops.
//!
//! A stage whose systems conflict (stages fused by `analyze::fusion`) runs each row through
//! them in order in one pass over its declared stores; in an open world its dynamic stores
//! then go through one pass per group of systems that do not conflict ([`fused_stage`]),
//! since a dynamic store's part is taken per system.
//!
//! Two kinds of system have passes of another form: a frame-level system is called once
//! ([`frame_pass`]), and a system whose components are all sparse walks the packed values of
//! its lead component's sparse set, one slice cut into jobs like a store ([`walk_pass`]).

use super::world::{stage_fn, system_fn};
use super::*;
use crate::analyze::{Param, System};

pub(super) fn generate(model: &Analysis, table_from: usize) -> TokenStream {
    let hosts = hosts(model, table_from);
    let systems = (0..model.systems.len()).map(|i| {
        let name = &model.systems[i].ident;
        if let Some((k, j)) = hosts[i] {
            let (f, host) = (system_fn(i), stage_for(k));
            let d = doc(format!(
                "The pass of system `{name}`: the pass of its stage ({k}), for it alone."
            ));
            return quote! {
                #d
                fn #f(world: &mut ::sigecs::World<Model>) -> ::sigecs::__private::Pending {
                    #host(world, ::core::option::Option::Some((#j, #i)))
                }
            };
        }
        let d = doc(format!("The pass of system `{name}`."));
        pass(
            model,
            &[i],
            system_fn(i),
            d,
            i,
            table_from,
            None,
            Visit::All,
        )
    });
    // A stage of one system runs that system's pass (see `stage_fn`).
    let stages = model
        .stages
        .iter()
        .enumerate()
        .filter(|(_, stage)| stage.len() > 1)
        .enumerate()
        .map(|(fused, (k, stage))| {
            let names: Vec<String> = stage
                .iter()
                .map(|&i| name(&model.systems[i].ident))
                .collect();
            let d = doc(format!(
                "Stage {k} of the schedule: {}, fused into one pass.",
                names.join(", ")
            ));
            let hosting = hosts.iter().any(|h| h.is_some_and(|(host, _)| host == k));
            let index = model.systems.len() + fused;
            let groups = &model.groups[k];
            let name = stage_fn(model, k);
            match (groups.len(), model.strict) {
                (1, _) => {
                    let host = hosting.then(|| stage_for(k));
                    pass(model, stage, name, d, index, table_from, host, Visit::All)
                }
                (_, true) => pass(
                    model,
                    stage,
                    name,
                    d,
                    index,
                    table_from,
                    None,
                    Visit::Declared,
                ),
                (_, false) => fused_stage(model, k, d, index, table_from),
            }
        });
    // The groups' passes over dynamic stores come last in the world's record of pass costs.
    let first = first_group_pass(model);
    let groups = dynamic_groups(model).enumerate().map(|(n, (k, g))| {
        let d = doc(format!(
            "Group {g} of stage {k} over the dynamic stores its systems match."
        ));
        let systems = &model.groups[k][g];
        let (name, index) = (group_fn(k, g), first + n);
        pass(
            model,
            systems,
            name,
            d,
            index,
            table_from,
            None,
            Visit::Dynamic,
        )
    });
    quote!(#(#systems)* #(#stages)* #(#groups)*)
}

/// Which stores a pass visits.
#[derive(Clone, Copy, PartialEq)]
enum Visit {
    /// The declared stores, then in an open world the dynamic ones.
    All,
    /// The declared stores only.
    Declared,
    /// The dynamic stores only.
    Dynamic,
}

/// The pass function of group `g` of fused stage `k` over the dynamic stores.
fn group_fn(k: usize, g: usize) -> Ident {
    format_ident!("stage_{}_group_{}", k, g)
}

/// The pass function of fused stage `k` over its declared stores.
fn rows_fn(k: usize) -> Ident {
    format_ident!("stage_{}_declared", k)
}

/// Each group (stage, group) of an open world's stages whose systems conflict, in order:
/// each has a pass over the dynamic stores ([`fused_stage`]).
fn dynamic_groups(model: &Analysis) -> impl Iterator<Item = (usize, usize)> + '_ {
    (0..model.stages.len())
        .filter(|&k| !model.strict && model.groups[k].len() > 1)
        .flat_map(|k| (0..model.groups[k].len()).map(move |g| (k, g)))
}

/// An open world's stage whose systems conflict (stages fused by
/// `analyze::fusion::fuse_stages`): one pass over the declared stores in which each row goes
/// through every system in run order, then each group's pass over the dynamic stores, group
/// after group. A dynamic store's part is taken per system, so systems that conflict cannot
/// share a pass over it; a group's systems never conflict.
fn fused_stage(
    model: &Analysis,
    k: usize,
    d: TokenStream,
    index: usize,
    table_from: usize,
) -> TokenStream {
    let stage = &model.stages[k];
    let (name, rows) = (stage_fn(model, k), rows_fn(k));
    let groups = (0..model.groups[k].len()).map(|g| group_fn(k, g));
    let rows_doc = doc(format!("Stage {k} over its declared stores."));
    let declared = pass(
        model,
        stage,
        rows.clone(),
        rows_doc,
        index,
        table_from,
        None,
        Visit::Declared,
    );
    quote! {
        #d
        fn #name(world: &mut ::sigecs::World<Model>) -> ::sigecs::__private::Pending {
            ::sigecs::__private::run_groups(world, #rows, &[#(#groups),*])
        }
        #declared
    }
}

/// The pass function of fused stage `k` that takes which of its systems to run alone.
fn stage_for(k: usize) -> Ident {
    format_ident!("stage_{}_for", k)
}

/// For each system, the fused stage whose pass is its pass too (`PassRun::only` runs it
/// alone there) and its place in the stage; `None` for a system with a pass of its own.
///
/// A stage's pass hosts its systems when it reaches its stores through a table (there each
/// store has a part per system, so one system's parts take only its own columns, and stamp
/// only what it writes) and none of them reads events or takes a sparse component (their
/// views are made for every system of the pass when it starts). Large worlds' stages are such
/// passes: at 128 × 2048 × 512, 432 of 512 systems need no pass of their own.
fn hosts(model: &Analysis, table_from: usize) -> Vec<Option<(usize, usize)>> {
    let mut hosts = vec![None; model.systems.len()];
    for (k, stage) in model.stages.iter().enumerate() {
        if stage.len() < 2 || model.groups[k].len() > 1 {
            continue;
        }
        let stores = (0..model.signatures.len())
            .filter(|s| stage.iter().any(|&i| model.systems[i].matches.contains(s)))
            .count();
        let plain = stage.iter().all(|&i| {
            let system = &model.systems[i];
            !system.frame()
                && !system.access.filtered
                && system.readers().next().is_none()
                && sparse_used(model, &[i]).is_empty()
        });
        if stores >= table_from && plain {
            for (j, &i) in stage.iter().enumerate() {
                hosts[i] = Some((k, j));
            }
        }
    }
    hosts
}

/// Binding of component `id`'s value in a row.
fn value(id: usize) -> Ident {
    format_ident!("v{}", id)
}

/// Binding of resource `id`.
fn resource(id: usize) -> Ident {
    format_ident!("r{}", id)
}

/// One column a pass reads for a store: its index, the slice type, whether it is written, and
/// the per-row binding.
struct Source {
    /// The column's index; for a field, the component's id; `usize::MAX` for the entity column.
    column: usize,
    ty: TokenStream,
    mutable: bool,
    binding: Ident,
    /// A component's field in a `rows` store's row structs, taken as a strided view.
    field: bool,
    /// For a `rows` store's column of row structs taken mutably: the components in it that
    /// the systems write (only they are stamped as changed).
    writes: Vec<u32>,
}

/// How a part takes one of its columns.
#[derive(Clone, Copy, PartialEq)]
enum Take {
    /// A column of its own, by index.
    Column,
    /// The entity column.
    Entity,
    /// A component's field in a `rows` store's row structs, by component id.
    Field,
}

/// The default number of stores from which a pass reaches its stores through a table instead
/// of a line of code per store (see `docs/build-scale.md` for the measurements behind it).
pub const TABLE_FROM: usize = 32;

/// The number of pass functions: one per system, one per stage that fuses several, and one
/// per group of an open world's stage whose systems conflict ([`fused_stage`]).
pub(super) fn pass_count(model: &Analysis) -> usize {
    first_group_pass(model) + dynamic_groups(model).count()
}

/// The index of the first group's pass over dynamic stores: after one pass per system and one
/// per stage that fuses several.
fn first_group_pass(model: &Analysis) -> usize {
    model.systems.len() + model.stages.iter().filter(|s| s.len() > 1).count()
}

/// The pass function running `systems` (in declaration order) over every store any of them
/// matches; `index` is its place in the world's record of pass costs. A pass over
/// `table_from` stores or more reaches them through a table ([`table_form`]), a smaller one
/// with a line per store ([`per_store_form`]). With `host`, the pass is that function, which
/// takes which system to run alone ([`hosts`]), and `name` runs it for all. `visit` says
/// which stores it visits; only a pass over all of them, whose systems do not conflict, may
/// use a table. The pass's `Part` enum and its `PassParts` impl are written by
/// `sigecs::__pass!` from the part types, the constants and the column takes given here; the
/// pass itself is its bindings and its loops.
#[allow(clippy::too_many_arguments)]
fn pass(
    model: &Analysis,
    systems: &[usize],
    name: Ident,
    d: TokenStream,
    index: usize,
    table_from: usize,
    host: Option<Ident>,
    visit: Visit,
) -> TokenStream {
    if let [only] = systems {
        if model.systems[*only].frame() {
            return frame_pass(model, *only, name, d);
        }
        if let Some(lead) = model.systems[*only].lead {
            return walk_pass(model, *only, lead, name, d, index);
        }
    }
    let stores: Vec<usize> = (0..model.signatures.len())
        .filter(|s| {
            visit != Visit::Dynamic
                && systems
                    .iter()
                    .any(|&i| model.systems[i].matches.contains(s))
        })
        .collect();
    // A change-filtered system runs alone in its pass and visits only the changed chunks.
    let filtered: Option<usize> = match systems {
        [only] if model.systems[*only].access.filtered => Some(*only),
        _ => None,
    };
    // A table takes each store once per system: only for a pass whose systems do not
    // conflict (whatever `table_from` the stages were fused with), over declared stores.
    let table = visit == Visit::All && stores.len() >= table_from;
    let mut shapes = shapes(model, systems, &stores, table, filtered);
    let (static_table, each) = if table {
        let systems = if host.is_some() {
            &shapes.systems[..]
        } else {
            &[]
        };
        table_form(
            &shapes.columns,
            &shapes.entries,
            filtered.is_some(),
            systems,
        )
    } else {
        assert!(host.is_none(), "a pass hosting its systems has a table");
        per_store_form(&shapes.columns, &shapes.entries, filtered.is_some())
    };
    let sequential = systems.iter().any(|&i| model.systems[i].sequential());
    let mut consts = constants(model, systems, index, sequential);
    // An open world's pass also visits the dynamic stores its systems match: one part per
    // system (a typed loop over columns taken by component id), after the declared stores;
    // `sigecs` walks them (`PassStores`), the pass says how a part is taken.
    let dynamic = if model.strict || visit == Visit::Declared {
        quote!()
    } else {
        consts.extend(dynamic_constants(model, systems, filtered));
        let picks = systems.iter().enumerate().map(|(k, &i)| {
            let d = dynamic_part(model, i, k);
            shapes.variants.push(d.variant);
            shapes.arms.push(d.arm);
            d.take
        });
        let picks: Vec<TokenStream> = picks.collect();
        quote!(dynamic(s) { #(#picks)* })
    };
    let variants = &shapes.variants;
    let parts = quote! {
        ::sigecs::__pass! {
            enum Part<'a> { #(#variants,)* }
            #consts
            #each
            #dynamic
        }
        #static_table
    };
    run(
        model,
        systems,
        filtered,
        sequential,
        parts,
        &shapes.arms,
        host,
        name,
        d,
    )
}

/// What a pass writes for its declared stores: per store *shape* (the same column types and
/// the same calls: most stores of a pass) its `Part` variant, its body's arm (the typed loop)
/// and its columns; per store its entry (see [`Entries`]); per shape its system's place in
/// the pass (a table's shape runs one system).
struct PassShapes {
    variants: Vec<TokenStream>,
    arms: Vec<TokenStream>,
    columns: Vec<(Ident, Vec<Taken>)>,
    entries: Vec<(usize, usize, Vec<usize>, Vec<usize>)>,
    systems: Vec<u32>,
}

/// The shapes of a pass of `systems` over `stores` (see [`PassShapes`]).
///
/// What each part of a store runs: in a `table`, a store of a fused stage has a part per
/// system (the same store once for each, in a row), so its shapes are its systems' (a few
/// each) and not one per combination of systems (nearly one per store in a large stage). The
/// systems of a table's stage never write what another reads (a stage whose systems conflict
/// never takes a table), so running them one after the other over a store gives what running
/// them row by row does. In a table a `rows` store's
/// components are taken as fields of its row structs (strided views), so that it shares the
/// shape of every store holding the same components instead of being one of its own.
fn shapes(
    model: &Analysis,
    systems: &[usize],
    stores: &[usize],
    table: bool,
    filtered: Option<usize>,
) -> PassShapes {
    let mut keys: Vec<String> = Vec::new();
    let mut out = PassShapes {
        variants: Vec::new(),
        arms: Vec::new(),
        columns: Vec::new(),
        entries: Vec::new(),
        systems: Vec::new(),
    };
    let mut units: Vec<(usize, Vec<usize>)> = Vec::new();
    for &s in stores {
        let here: Vec<usize> = systems
            .iter()
            .copied()
            .filter(|&i| model.systems[i].matches.contains(&s))
            .collect();
        if table {
            units.extend(here.into_iter().map(|i| (s, vec![i])));
        } else {
            units.push((s, here));
        }
    }
    for (s, here) in units {
        let sources = sources(model, &here, s, table);
        let slices: Vec<Ident> = (0..sources.len())
            .map(|k| format_ident!("c{}", k))
            .collect();
        let calls: Vec<TokenStream> = here.iter().map(|&i| call(model, i, s, &sources)).collect();
        let body = row_loop(&sources, &slices, &calls);
        let part_type = part_type(&sources);
        let key = quote!(#part_type #body).to_string();
        let seen = keys.iter().position(|k| *k == key);
        let shape = seen.unwrap_or(keys.len());
        if seen.is_none() {
            let variant = format_ident!("Shape{}", keys.len());
            keys.push(key);
            let first = systems.iter().position(|&i| Some(&i) == here.first());
            out.systems.push(first.unwrap_or(0) as u32);
            // A mutable strided view is indexed through `IndexMut`, so its binding is `mut`.
            let slices = nest(
                slices
                    .iter()
                    .zip(&sources)
                    .map(|(c, src)| {
                        if src.field && src.mutable {
                            quote!(mut #c)
                        } else {
                            quote!(#c)
                        }
                    })
                    .collect(),
            );
            out.variants.push(quote!(#variant(#part_type)));
            out.arms.push(quote!(Part::#variant(#slices) => #body));
            out.columns.push((variant, taken(&sources)));
        }
        let watched = match filtered {
            Some(i) => watched(&model.systems[i])
                .map(|(c, added)| slot_of(model, s, c) << 1 | usize::from(added))
                .collect(),
            None => Vec::new(),
        };
        let columns = sources
            .iter()
            .map(|src| src.column)
            .filter(|&k| k != usize::MAX)
            .collect();
        out.entries.push((s, shape, columns, watched));
    }
    out
}

/// The type of a part holding `sources`: a (nested) tuple of column slices and strided views.
fn part_type(sources: &[Source]) -> TokenStream {
    let types = sources.iter().map(|src| {
        let ty = &src.ty;
        match (src.field, src.mutable) {
            (false, true) => quote!(&'a mut [#ty]),
            (false, false) => quote!(&'a [#ty]),
            (true, true) => quote!(::sigecs::__private::FieldsMut<'a, #ty>),
            (true, false) => quote!(::sigecs::__private::Fields<'a, #ty>),
        }
    });
    nest(types.collect())
}

/// How a shape takes each of `sources`, in order.
fn taken(sources: &[Source]) -> Vec<Taken> {
    sources
        .iter()
        .map(|src| {
            let take = if src.column == usize::MAX {
                Take::Entity
            } else if src.field {
                Take::Field
            } else {
                Take::Column
            };
            (take, src.mutable, src.writes.clone())
        })
        .collect()
}

/// The `PassParts` constants of pass `index` of `systems` that every pass may set: its index,
/// and unless it runs on the calling thread its smallest `min_chunk` and whether it spawns.
fn constants(model: &Analysis, systems: &[usize], index: usize, sequential: bool) -> TokenStream {
    let mut consts = quote!(const PASS: usize = #index;);
    if !sequential {
        if let Some(m) = min_chunk(model, systems) {
            consts.extend(quote!(const MIN_CHUNK: usize = #m;));
        }
        if systems.iter().any(|&s| model.systems[s].spawns) {
            consts.extend(quote!(
                const SPAWNS: bool = true;
            ));
        }
    }
    consts
}

/// The `PassParts` constants of an open world's pass: the systems whose dynamic stores it
/// visits, and for a `filtered` system the components it watches.
fn dynamic_constants(model: &Analysis, systems: &[usize], filtered: Option<usize>) -> TokenStream {
    let ids: Vec<u32> = systems.iter().map(|&i| i as u32).collect();
    let changed = filtered.map(|i| {
        let watched =
            watched(&model.systems[i]).map(|(c, added)| (c as u32) << 1 | u32::from(added));
        quote!(const WATCHED: &'static [u32] = &[#(#watched),*];)
    });
    quote! {
        const SYSTEMS: &'static [u32] = &[#(#ids),*];
        #changed
    }
}

/// The pass function around `parts` (the `__pass!` call): it borrows the world (`pass`), its
/// stores as trusted views, binds the resources, readers and sparse views, and runs the body
/// (`arms`, a typed loop per part) over the parts, on the calling thread when a system is
/// `sequential`. A `filtered` system visits what changed since its last run.
/// With `host`, the pass takes which system to run alone, and `name` runs it for all.
#[allow(clippy::too_many_arguments)]
fn run(
    model: &Analysis,
    systems: &[usize],
    filtered: Option<usize>,
    sequential: bool,
    parts: TokenStream,
    arms: &[TokenStream],
    host: Option<Ident>,
    name: Ident,
    d: TokenStream,
) -> TokenStream {
    // What changed since a change-filtered system's last run; this run is its new last one.
    let (since, since_value) = match filtered {
        Some(i) => (
            quote!(let since = ::core::mem::replace(&mut pass.last_run[#i], pass.tick);),
            quote!(since),
        ),
        None => (quote!(), quote!(0)),
    };
    let resources = resource_bindings(model, systems);
    let readers = reader_bindings(model, systems);
    let sparse_views = sparse_views(model, systems, None);
    // A hosting pass runs all its systems, or the one its caller names.
    let (runner, signature, wrapper, d) = match &host {
        Some(host) => (
            quote!(pass.run.only(only)),
            quote!(#host(world: &mut ::sigecs::World<Model>, only: ::core::option::Option<(usize, usize)>)),
            quote! {
                #d
                fn #name(world: &mut ::sigecs::World<Model>) -> ::sigecs::__private::Pending {
                    #host(world, ::core::option::Option::None)
                }
            },
            doc(format!(
                "The pass of `{name}`, for all its systems (`only`: `None`) or for one alone."
            )),
        ),
        None => (
            quote!(pass.run),
            quote!(#name(world: &mut ::sigecs::World<Model>)),
            quote!(),
            d,
        ),
    };
    let run = if sequential {
        // A system that writes a resource runs on the calling thread; its body holds the
        // resource's `&mut`.
        quote! {
            let mut body = |part: Part<'_>, commands: &mut ::sigecs::Commands<'_>| match part { #(#arms)* };
            #runner.inline::<Part>(stores, #since_value, &mut body)
        }
    } else {
        quote! {
            let body = |part: Part<'_>, commands: &mut ::sigecs::Commands<'_>| match part { #(#arms)* };
            #runner.parts::<Part>(stores, #since_value, &body)
        }
    };
    let trusted_safety = safety(
        "`__pass!` takes the stores in ascending id order, each column by its index and type in \
         STORES and each field as its component's type (one analysis wrote both).",
    );
    quote! {
        #wrapper
        #d
        fn #signature -> ::sigecs::__private::Pending {
            #parts
            let mut pass = ::sigecs::__private::pass(world);
            #trusted_safety
            let stores = unsafe { pass.stores.trusted() };
            #since
            #resources
            #readers
            #sparse_views
            #run
        }
    }
}

/// A pass's shapes: each one's variant of `Part` and its columns in order, as [`Taken`].
type Shapes = [(Ident, Vec<Taken>)];

/// How a part takes one column: the way, whether it is written, and for a `rows` store's
/// column of row structs the components written in it.
type Taken = (Take, bool, Vec<u32>);

/// The expression taking a column of a store's view `s` at `at` (a column index, or for a
/// field a component id); a column of row structs of which the pass `writes` some components
/// names them.
fn take_column(take: Take, mutable: bool, writes: &[u32], at: TokenStream) -> TokenStream {
    match (take, mutable) {
        (Take::Entity, _) => quote!(s.entities()),
        (Take::Column, true) if !writes.is_empty() => quote!(s.rows_mut(#at, &[#(#writes),*])),
        (Take::Column, true) => quote!(s.col_mut(#at)),
        (Take::Column, false) => quote!(s.col(#at)),
        (Take::Field, true) => quote!(s.field_mut(#at)),
        (Take::Field, false) => quote!(s.field(#at)),
    }
}

/// A pass's stores in id order: each one's id, shape, the indices of the columns its shape
/// takes (for a field, the component's id; the entity column left out) and those a change
/// filter watches.
type Entries = [(usize, usize, Vec<usize>, Vec<usize>)];

/// How a pass with fewer stores than [`TABLE_FROM`] reaches them: a line of code per store
/// that takes its columns by constant indices as its shape's variant (every store's part is
/// then a known variant where it is made, and the body's `match` folds away). Returns the
/// table (none) and the `__pass!` form taking the stores (`stores`, or `changed` with each
/// store's watched columns).
fn per_store_form(
    shapes: &Shapes,
    entries: &Entries,
    filtered: bool,
) -> (TokenStream, TokenStream) {
    let mut takes = Vec::new();
    for (store, shape, columns, watched) in entries {
        let (variant, sources) = &shapes[*shape];
        let mut next = columns.iter();
        let columns = sources.iter().map(|(take, mutable, writes)| {
            let (take, mutable) = (*take, *mutable);
            if take == Take::Entity {
                return take_column(take, mutable, writes, quote!());
            }
            let k = Literal::usize_unsuffixed(*next.next().expect("a column for every source"));
            take_column(take, mutable, writes, quote!(#k))
        });
        let columns = nest(columns.collect());
        let id = Literal::u32_unsuffixed(*store as u32);
        let watched = filtered.then(|| {
            let watched = watched.iter().copied().map(Literal::usize_unsuffixed);
            quote!([#(#watched),*])
        });
        takes.push(quote!(#id #watched => #variant(#columns),));
    }
    let form = if filtered {
        quote!(changed)
    } else {
        quote!(stores)
    };
    (quote!(), quote!(#form(s) { #(#takes)* }))
}

/// How a pass with [`TABLE_FROM`] stores or more reaches them: a `static` table of numbers,
/// each store's id, then its shape (when the pass has several), the indices of the columns its
/// shape takes (padded to the widest shape's) and those a change filter watches; and one loop
/// over it in `sigecs` (`StoresMut::each_in`, the `__pass!` form `table`) that takes each
/// store's columns by the indices in its entry, one `match` arm per shape. A store costs a few
/// numbers instead of lines of code; a filled array of integers is formatted a few stores a
/// line.
fn table_form(
    shapes: &Shapes,
    entries: &Entries,
    filtered: bool,
    shape_systems: &[u32],
) -> (TokenStream, TokenStream) {
    let tagged = shapes.len() > 1;
    let first = usize::from(tagged);
    let widest = entries.iter().map(|e| e.2.len()).max().unwrap_or(0);
    let watched = entries.first().map_or(0, |e| e.3.len());
    let width = first + widest;
    let mut numbers = Vec::new();
    for (store, shape, columns, watches) in entries {
        numbers.push(*store);
        if tagged {
            numbers.push(*shape);
        }
        numbers.extend(columns.iter().copied());
        numbers.extend(std::iter::repeat_n(0, widest - columns.len()));
        numbers.extend(watches.iter().copied());
    }
    let numbers = numbers.into_iter().map(Literal::usize_unsuffixed);
    let doc = doc(format!(
        "The stores of the pass, in id order, {} numbers each: the store's id{}, the indices of \
         the columns its shape takes{}.",
        1 + width + watched,
        if tagged { ", its shape" } else { "" },
        if filtered {
            ", the columns whose changes it watches"
        } else {
            ""
        },
    ));
    let (width_lit, watched_lit) = (
        Literal::usize_unsuffixed(width),
        Literal::usize_unsuffixed(watched),
    );
    let table = quote! {
        #doc
        static PASS_STORES: ::sigecs::__private::StoreTable<#width_lit, #watched_lit> =
            ::sigecs::__private::StoreTable(&[#(#numbers),*]);
    };
    let parts = shapes.iter().enumerate().map(|(k, (variant, sources))| {
        let mut next = first;
        let columns = sources.iter().map(|(take, mutable, writes)| {
            let (take, mutable) = (*take, *mutable);
            if take == Take::Entity {
                return take_column(take, mutable, writes, quote!());
            }
            let at = Literal::usize_unsuffixed(next);
            next += 1;
            if take == Take::Field {
                take_column(take, mutable, writes, quote!(e[#at] as u32))
            } else {
                take_column(take, mutable, writes, quote!(e[#at]))
            }
        });
        let columns = nest(columns.collect());
        let k = Literal::usize_unsuffixed(k);
        (k, quote!(Part::#variant(#columns)))
    });
    let part = if tagged {
        let arms = parts.map(|(k, part)| quote!(#k => #part,));
        quote!(match e[0] { #(#arms)* _ => ::core::unreachable!("a shape of the pass") })
    } else {
        parts
            .map(|(_, part)| part)
            .next()
            .expect("a store has a shape")
    };
    let form = if filtered {
        quote!(changed_table(s, e, PASS_STORES) { #part })
    } else {
        quote!(table(s, e, PASS_STORES, [#(#shape_systems),*]) { #part })
    };
    (table, form)
}

/// The pass of frame-level system `index` (no component or entity parameter): the system
/// called once, with its resources, event readers and a command buffer.
fn frame_pass(model: &Analysis, index: usize, name: Ident, d: TokenStream) -> TokenStream {
    let system = &model.systems[index];
    let resources = resource_bindings(model, &[index]);
    let readers = reader_bindings(model, &[index]);
    let args = system.params.iter().map(|p| match *p {
        Param::Commands => quote!(&mut *commands),
        Param::Resource { id, mutable } => {
            let r = resource(id);
            if mutable {
                quote!(&mut *#r)
            } else {
                quote!(#r)
            }
        }
        Param::Events { reader, .. } => {
            let e = reader_binding(reader);
            quote!(&#e)
        }
        Param::Entity | Param::Component { .. } => unreachable!("a frame-level system"),
    });
    let path = &system.path;
    quote! {
        #d
        fn #name(world: &mut ::sigecs::World<Model>) -> ::sigecs::__private::Pending {
            let mut pass = ::sigecs::__private::pass(world);
            #resources
            #readers
            pass.run.once(|commands| #path(#(#args),*))
        }
    }
}

/// The pass of system `index`, whose components are all sparse: it walks the packed values of
/// sparse component `lead` (every entity with it, in the set's order; a plain loop over one
/// slice, as fast as a hand-written one) instead of visiting the stores, and looks the others
/// up by entity. `pass_index` is its place in the world's record of pass costs.
fn walk_pass(
    model: &Analysis,
    index: usize,
    lead: usize,
    name: Ident,
    d: TokenStream,
    pass_index: usize,
) -> TokenStream {
    let system = &model.systems[index];
    let resources = resource_bindings(model, &[index]);
    let readers = reader_bindings(model, &[index]);
    let views = sparse_views(model, &[index], Some(lead));
    let mutable = system
        .params
        .iter()
        .any(|p| matches!(*p, Param::Component { id, mutable: true, .. } if id == lead));
    let (path, cid, b) = (&model.components[lead].path, lead as u32, value(lead));
    let mut lookups = Vec::new();
    let args: Vec<TokenStream> = system
        .params
        .iter()
        .map(|p| match *p {
            Param::Component { id, .. } if id == lead => quote!(#b),
            _ => row_arg(model, p, quote!(*entity), &mut lookups),
        })
        .collect();
    // The entities are walked beside the values only when a row needs its entity.
    let by_entity = system.params.iter().any(|p| match *p {
        Param::Entity => true,
        Param::Component { id, .. } => id != lead,
        _ => false,
    }) || !system.sparse_without.is_empty()
        || system.sparse_with.iter().any(|&id| id != lead);
    let call = guarded_call(model, index, &args, lookups, quote!(*entity));
    let (take, slice, iter) = if mutable {
        (
            {
                let why = safety(
                    "the pass is its system's alone, the system takes the walked component \
                     once and the pass makes no view of it, so the slice is its values' only \
                     reference.",
                );
                quote!(#why let lead = unsafe { pass.sparse.values_mut::<#path>(#cid) };)
            },
            quote!(&mut [#path]),
            quote!(values.iter_mut()),
        )
    } else {
        (
            quote!(let lead = pass.sparse.values::<#path>(#cid);),
            quote!(&[#path]),
            quote!(values.iter()),
        )
    };
    let (rows, entities) = if by_entity {
        (
            quote!(for (entity, #b) in entities.iter().zip(#iter) { #call }),
            quote!(entities),
        )
    } else {
        (quote!(for #b in #iter { #call }), quote!(_))
    };
    let part = quote!((#entities, values): (&[::sigecs::Entity], #slice));
    let run = if system.sequential() {
        quote! {
            let mut body = |#part, commands: &mut ::sigecs::Commands<'_>| { #rows };
            pass.run.walk_inline(lead, &mut body)
        }
    } else {
        let min_chunk = min_chunk(model, &[index])
            .unwrap_or_else(|| quote!(::sigecs::schedule::DEFAULT_MIN_CHUNK));
        let spawns = system.spawns;
        quote! {
            let body = |#part, commands: &mut ::sigecs::Commands<'_>| { #rows };
            pass.run.walk(#pass_index, #min_chunk, #spawns, lead, &body)
        }
    };
    quote! {
        #d
        fn #name(world: &mut ::sigecs::World<Model>) -> ::sigecs::__private::Pending {
            let mut pass = ::sigecs::__private::pass(world);
            #resources
            #readers
            #views
            #take
            #run
        }
    }
}

/// Binding of event reader `reader` in a pass.
fn reader_binding(reader: usize) -> Ident {
    format_ident!("e{}", reader)
}

/// The event readers of `systems`, each over the events it has not read yet; its cursor moves
/// past them.
fn reader_bindings(model: &Analysis, systems: &[usize]) -> TokenStream {
    let bindings = systems
        .iter()
        .flat_map(|&s| model.systems[s].readers())
        .map(|(event, reader)| {
            let (e, path, id) = (
                reader_binding(reader),
                &model.events[event].path,
                event as u32,
            );
            quote!(let #e = pass.events.read::<#path>(#id, &mut pass.cursors[#reader]);)
        });
    quote!(#(#bindings)*)
}

/// The columns a store's part holds for `systems`: for `columns` stores one per component any
/// of them uses, for `rows` stores the hot and/or cold column, or with `fields` one field per
/// component (in component order, like columns); plus the entity column when a system takes
/// `Entity` (column `usize::MAX`).
fn sources(model: &Analysis, systems: &[usize], store: usize, fields: bool) -> Vec<Source> {
    let sig = &model.signatures[store];
    let params = || systems.iter().flat_map(|&s| model.systems[s].params.iter());
    let uses =
        |id: usize| params().any(|p| matches!(p, Param::Component { id: c, .. } if *c == id));
    let writes = |id: usize| {
        params().any(|p| matches!(p, Param::Component { id: c, mutable: true, .. } if *c == id))
    };
    let mut sources = Vec::new();
    match sig.layout {
        LayoutDecl::Rows if fields => {
            let mut ids: Vec<usize> = sig.fields.iter().map(|(_, id)| *id).collect();
            ids.sort_unstable();
            for id in ids.into_iter().filter(|&id| uses(id)) {
                let path = &model.components[id].path;
                sources.push(Source {
                    column: id,
                    ty: quote!(#path),
                    mutable: writes(id),
                    binding: value(id),
                    field: true,
                    writes: Vec::new(),
                });
            }
        }
        LayoutDecl::Columns => {
            // In component order, whatever the columns' order: stores that hold the same
            // components in another order have one shape (their parts take the columns by
            // their own indices).
            let mut fields: Vec<(usize, &usize)> =
                sig.fields.iter().map(|(_, id)| id).enumerate().collect();
            fields.sort_by_key(|&(_, id)| *id);
            for (k, id) in fields {
                if uses(*id) {
                    let path = &model.components[*id].path;
                    sources.push(Source {
                        column: k,
                        ty: quote!(#path),
                        mutable: writes(*id),
                        binding: value(*id),
                        field: false,
                        writes: Vec::new(),
                    });
                }
            }
        }
        LayoutDecl::Rows => {
            for (column, cold) in [(0usize, false), (1, true)] {
                let part = row_fields(model, sig, cold);
                if part.iter().any(|(_, id)| uses(*id)) {
                    let ty = if cold { cold_type(sig) } else { row_type(sig) };
                    let written: Vec<u32> = part
                        .iter()
                        .filter(|(_, id)| writes(*id))
                        .map(|(_, id)| *id as u32)
                        .collect();
                    sources.push(Source {
                        column,
                        ty: quote!(#ty),
                        mutable: !written.is_empty(),
                        binding: ident(if cold { "cold" } else { "row" }),
                        field: false,
                        writes: written,
                    });
                }
            }
        }
    }
    // The entity column also when a system takes a sparse component: found by entity.
    if params().any(|p| *p == Param::Entity) || systems.iter().any(|&s| takes_sparse(model, s)) {
        sources.push(Source {
            column: usize::MAX,
            ty: quote!(::sigecs::Entity),
            mutable: false,
            binding: ident("entity"),
            field: false,
            writes: Vec::new(),
        });
    }
    sources
}

/// A tuple of `items`, nested so that no tuple has more than 12 elements (the parts' rows are
/// cut through `SplitRows`, implemented for tuples of up to 12): `(a, b, c,)`, or for more
/// `((a, .., l,), (m, ..,),)`. Types, patterns and values nest alike, so they match.
fn nest(items: Vec<TokenStream>) -> TokenStream {
    const MAX: usize = 12;
    if items.len() <= MAX {
        return quote!((#(#items,)*));
    }
    let chunks: Vec<TokenStream> = items.chunks(MAX).map(|c| quote!((#(#c,)*))).collect();
    nest(chunks)
}

/// What a pass writes for system `index` (its `k`th) over the dynamic stores it matches: the
/// part's variant (the entity column, then one column slice per component parameter,
/// `Option` for an optional one), the body's arm (a loop over the rows calling the system),
/// and the entry of `__pass!`'s `dynamic` form that takes the part from a store's checked view.
struct DynamicPart {
    variant: TokenStream,
    arm: TokenStream,
    take: TokenStream,
}

fn dynamic_part(model: &Analysis, index: usize, k: usize) -> DynamicPart {
    let system = &model.systems[index];
    let variant = format_ident!("Dynamic{}", k);
    // The store's component columns the system takes: `__rows!` takes slices, not optional
    // ones, and at most MAX_ROWS_COLUMNS of them (the entity column is one); otherwise an
    // index loop.
    let columns: Vec<bool> = system
        .params
        .iter()
        .filter_map(|p| match *p {
            Param::Component { id, optional, .. } if !model.components[id].sparse => Some(optional),
            _ => None,
        })
        .collect();
    let blocks = !columns.contains(&true) && columns.len() < MAX_ROWS_COLUMNS;
    let entity = if blocks {
        quote!(*entity)
    } else {
        quote!(entities[i])
    };
    let mut types = vec![quote!(&'a [::sigecs::Entity])];
    let mut bindings = vec![quote!(entities)];
    let mut takes = vec![quote!(s.entities())];
    let mut hoists = Vec::new();
    let mut rows = vec![quote!(ref entities => entity)];
    let mut column = 0usize;
    let mut lookups = Vec::new();
    let args: Vec<TokenStream> = system
        .params
        .iter()
        .map(|p| {
            let (id, mutable, optional) = match *p {
                Param::Component {
                    id,
                    mutable,
                    optional,
                } if !model.components[id].sparse => (id, mutable, optional),
                _ => return row_arg(model, p, entity.clone(), &mut lookups),
            };
            let path = &model.components[id].path;
            let c = format_ident!("d{}", column);
            let b = format_ident!("w{}", column);
            column += 1;
            let cid = id as u32;
            let (ty, take, hoist, arg) = match (mutable, optional) {
                (false, false) => (
                    quote!(&'a [#path]),
                    quote!(s.component(#cid)),
                    quote!(let #c = &#c[..n];),
                    quote!(&#c[i]),
                ),
                (true, false) => (
                    quote!(&'a mut [#path]),
                    quote!(s.component_mut(#cid)),
                    quote!(let #c = &mut #c[..n];),
                    quote!(&mut #c[i]),
                ),
                (false, true) => (
                    quote!(::core::option::Option<&'a [#path]>),
                    quote!(s.optional(#cid)),
                    quote!(let #c = ::core::option::Option::map(#c, |c| &c[..n]);),
                    quote!(::core::option::Option::map(#c, |c| &c[i])),
                ),
                (true, true) => (
                    quote!(::core::option::Option<&'a mut [#path]>),
                    quote!(s.optional_mut(#cid)),
                    quote!(let mut #c = ::core::option::Option::map(#c, |c| &mut c[..n]);),
                    quote!(::core::option::Option::map(::core::option::Option::as_deref_mut(&mut #c), |c| &mut c[i])),
                ),
            };
            types.push(ty);
            bindings.push(quote!(#c));
            takes.push(take);
            hoists.push(hoist);
            rows.push(if mutable {
                quote!(mut #c => #b)
            } else {
                quote!(ref #c => #b)
            });
            if blocks {
                quote!(#b)
            } else {
                arg
            }
        })
        .collect();
    let call = guarded_call(model, index, &args, lookups, entity);
    let (ty, pattern, take) = (nest(types), nest(bindings), nest(takes));
    let k = Literal::usize_unsuffixed(k);
    let rows = if blocks {
        quote!(::sigecs::__rows!([#(#rows),*] { #call });)
    } else {
        // Every column is cut to the entity column's length first, so the loop's indexing
        // needs no bounds check.
        quote! {
            let n = entities.len();
            #(#hoists)*
            for i in 0..n {
                #call
            }
        }
    };
    DynamicPart {
        variant: quote!(#variant(#ty)),
        // In a function of its own: inlined, a dynamic store's loop would make the pass's
        // body too large for the compiler to inline into each declared store's line.
        arm: quote! {
            Part::#variant(#pattern) => ::sigecs::__private::out_of_line(|| { #rows }),
        },
        take: quote!(#k => #variant(#take),),
    }
}

/// The components a filtered system watches, each with whether it keeps to its adds
/// (`added(..)`) rather than its changes (`changed(..)`).
fn watched(system: &System) -> impl Iterator<Item = (usize, bool)> + '_ {
    let changed = system.changed.iter().map(|&c| (c, false));
    changed.chain(system.added.iter().map(|&c| (c, true)))
}

/// The slot of component `c` in store `store`: its place among the signature's fields (the
/// order of the store's `StoreInfo::slots`).
fn slot_of(model: &Analysis, store: usize, c: usize) -> usize {
    model.signatures[store]
        .fields
        .iter()
        .position(|(_, id)| *id == c)
        .expect("the store holds the component")
}

/// The most column slices the runtime's `__rows!` takes (its `Columns` tuples: 1 to 16).
const MAX_ROWS_COLUMNS: usize = 16;

/// The loop of `calls` over the rows of a part whose column slices are `slices`, each row's
/// values bound as its source says: the runtime's `__rows!` (blocks of 4 rows, then the last
/// ones). A strided view of a `rows` store's field has no blocks, and `__rows!` takes at
/// most [`MAX_ROWS_COLUMNS`] slices: such a part takes an index loop over slices cut to the
/// first one's length, which optimizes as a zip does (the cut proves every index in bounds)
/// and compiles no iterator adapter per combination of column types.
fn row_loop(sources: &[Source], slices: &[Ident], calls: &[TokenStream]) -> TokenStream {
    if sources.iter().any(|src| src.field) || slices.len() > MAX_ROWS_COLUMNS {
        let first = &slices[0];
        let mut cuts = Vec::new();
        let mut rows = Vec::new();
        for (k, (src, c)) in sources.iter().zip(slices).enumerate() {
            let b = &src.binding;
            // A strided view cannot be cut like a slice; its accesses are bounds-checked.
            if k > 0 && !src.field {
                cuts.push(if src.mutable {
                    quote!(let #c = &mut #c[..n];)
                } else {
                    quote!(let #c = &#c[..n];)
                });
            }
            rows.push(if src.mutable {
                quote!(let #b = &mut #c[i];)
            } else {
                quote!(let #b = &#c[i];)
            });
        }
        return quote! {{
            let n = #first.len();
            #(#cuts)*
            for i in 0..n {
                #(#rows)*
                #(#calls)*
            }
        }};
    }
    let columns = sources.iter().zip(slices).map(|(src, c)| {
        let b = &src.binding;
        if src.mutable {
            quote!(mut #c => #b)
        } else {
            quote!(ref #c => #b)
        }
    });
    quote!({
        ::sigecs::__rows!([#(#columns),*] { #(#calls)* });
    })
}

/// The call of system `index` on one row of `store`.
fn call(model: &Analysis, index: usize, store: usize, sources: &[Source]) -> TokenStream {
    let sig = &model.signatures[store];
    let system = &model.systems[index];
    let mut lookups = Vec::new();
    let args: Vec<TokenStream> = system
        .params
        .iter()
        .map(|p| {
            let (id, mutable, optional) = match *p {
                Param::Component {
                    id,
                    mutable,
                    optional,
                } if !model.components[id].sparse => (id, mutable, optional),
                _ => return row_arg(model, p, quote!(*entity), &mut lookups),
            };
            if !sig.has(id) {
                return quote!(::core::option::Option::None);
            }
            let by_binding = sig.layout == LayoutDecl::Columns || sources.iter().any(|s| s.field);
            let v = match sig.layout {
                _ if by_binding => {
                    // Bound by `iter_mut` when a system of the pass writes the column, by
                    // `iter` otherwise. In a fused stage a later system may take the same
                    // value, so a writer's `Option` gets a reborrow (an argument of type
                    // `&mut` reborrows by itself).
                    let b = value(id);
                    let written = sources.iter().any(|s| s.binding == b && s.mutable);
                    match (mutable, written) {
                        (true, _) if optional => quote!(&mut *#b),
                        (true, _) | (false, false) => quote!(#b),
                        (false, true) => quote!(&*#b),
                    }
                }
                LayoutDecl::Columns => unreachable!("a `columns` store's values are bound"),
                LayoutDecl::Rows => {
                    let f = &sig.fields.iter().find(|(_, c)| *c == id).expect("held").0;
                    let holder = ident(if is_cold(model, sig, id) {
                        "cold"
                    } else {
                        "row"
                    });
                    if mutable {
                        quote!(&mut #holder.#f)
                    } else {
                        quote!(&#holder.#f)
                    }
                }
            };
            if optional {
                quote!(::core::option::Option::Some(#v))
            } else {
                v
            }
        })
        .collect();
    guarded_call(model, index, &args, lookups, quote!(*entity))
}

/// The argument for a parameter that is not a store component, in a loop whose row's entity is
/// `entity`: the entity, the commands, an event reader, a resource, or a sparse component.
fn row_arg(
    model: &Analysis,
    p: &Param,
    entity: TokenStream,
    lookups: &mut Vec<TokenStream>,
) -> TokenStream {
    match *p {
        Param::Component {
            id,
            mutable,
            optional,
        } => {
            debug_assert!(model.components[id].sparse, "store components are columns");
            sparse_arg(id, mutable, optional, entity, lookups)
        }
        Param::Entity => entity,
        Param::Commands => quote!(&mut *commands),
        Param::Events { reader, .. } => {
            let e = reader_binding(reader);
            quote!(&#e)
        }
        Param::Resource { id, mutable } => {
            let r = resource(id);
            if mutable {
                quote!(&mut *#r)
            } else {
                quote!(#r)
            }
        }
    }
}

/// The sparse components the systems take or filter on, each once, with whether one of them
/// writes it.
fn sparse_used(model: &Analysis, systems: &[usize]) -> Vec<(usize, bool)> {
    let mut used: Vec<(usize, bool)> = Vec::new();
    let mut note = |id: usize, mutable: bool| match used.iter_mut().find(|(c, _)| *c == id) {
        Some(entry) => entry.1 |= mutable,
        None => used.push((id, mutable)),
    };
    for &s in systems {
        let system = &model.systems[s];
        for p in &system.params {
            if let Param::Component { id, mutable, .. } = *p {
                if model.components[id].sparse {
                    note(id, mutable);
                }
            }
        }
        for &id in system.sparse_with.iter().chain(&system.sparse_without) {
            note(id, false);
        }
    }
    used.sort_unstable();
    used
}

/// Does system `index` take or filter on a sparse component (so its rows need their entity)?
fn takes_sparse(model: &Analysis, index: usize) -> bool {
    !sparse_used(model, &[index]).is_empty()
}

/// The view binding of sparse component `id` in a pass.
fn sparse_view(id: usize) -> Ident {
    format_ident!("sparse_{}", id)
}

/// One view per sparse component the pass's systems use (but `walked`, whose values a walk
/// takes whole): `let sparse_<id> = ...;`.
fn sparse_views(model: &Analysis, systems: &[usize], walked: Option<usize>) -> TokenStream {
    let views = sparse_used(model, systems)
        .into_iter()
        .filter(|&(id, _)| Some(id) != walked)
        .map(|(id, mutable)| {
            let (v, path, cid) = (sparse_view(id), &model.components[id].path, id as u32);
            let why = safety(
                "the pass looks each of its rows' entities (live) up once per view, and a view \
                 is mutable only when no other system of the pass uses its component, so no \
                 value is reached by two references of which one is mutable.",
            );
            quote!(#why let #v = unsafe { pass.sparse.view::<#path>(#cid, #mutable) };)
        });
    quote!(#(#views)*)
}

/// The argument for a sparse component parameter: for `Option<..>` the lookup itself; else a
/// binding that `lookups` makes (the call runs only when the entity has the component).
fn sparse_arg(
    id: usize,
    mutable: bool,
    optional: bool,
    entity: TokenStream,
    lookups: &mut Vec<TokenStream>,
) -> TokenStream {
    let v = sparse_view(id);
    let get = if mutable {
        quote!(get_mut)
    } else {
        quote!(get)
    };
    let lookup = quote!(#v.#get(#entity));
    if optional {
        return lookup;
    }
    let b = format_ident!("s{}", id);
    lookups.push(quote!(::core::option::Option::Some(#b) = #lookup));
    quote!(#b)
}

/// The call of system `index` with `args`, run only for rows whose entity has the sparse
/// components it requires (`lookups`, then its `with(..)`) and none of its `without(..)`.
fn guarded_call(
    model: &Analysis,
    index: usize,
    args: &[TokenStream],
    lookups: Vec<TokenStream>,
    entity: TokenStream,
) -> TokenStream {
    let system = &model.systems[index];
    let path = &system.path;
    let mut out = quote!(#path(#(#args),*););
    let taken = |id: usize| {
        system
            .params
            .iter()
            .any(|p| matches!(*p, Param::Component { id: c, optional: false, .. } if c == id))
    };
    let mut conditions: Vec<TokenStream> = Vec::new();
    for &id in system.sparse_with.iter().filter(|&&id| !taken(id)) {
        let v = sparse_view(id);
        conditions.push(quote!(#v.contains(#entity)));
    }
    for &id in &system.sparse_without {
        let v = sparse_view(id);
        conditions.push(quote!(!#v.contains(#entity)));
    }
    if !conditions.is_empty() {
        out = quote!(if #(#conditions)&&* { #out });
    }
    for lookup in lookups.into_iter().rev() {
        out = quote!(if let #lookup { #out });
    }
    out
}

/// Resource bindings `r<id>` for the given systems: `&mut` if one of them writes it (such a
/// system runs alone in its pass).
fn resource_bindings(model: &Analysis, systems: &[usize]) -> TokenStream {
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
    let fields = resource_fields(model);
    let bindings = used.iter().map(|&(id, mutable)| {
        let (b, f) = (resource(id), &fields[id]);
        if mutable {
            quote!(let #b = &mut pass.resources.#f;)
        } else {
            quote!(let #b = &pass.resources.#f;)
        }
    });
    quote!(#(#bindings)*)
}

/// The smallest `min_chunk` of the systems (they share one pass), when one of them sets it
/// (`PassParts::MIN_CHUNK` defaults to `sigecs::schedule::DEFAULT_MIN_CHUNK`).
fn min_chunk(model: &Analysis, systems: &[usize]) -> Option<TokenStream> {
    let set: Vec<usize> = systems
        .iter()
        .filter_map(|&s| model.systems[s].min_chunk)
        .collect();
    let default = quote!(::sigecs::schedule::DEFAULT_MIN_CHUNK);
    match set.iter().min() {
        Some(&m) if set.len() == systems.len() => Some(quote!(#m)),
        // A constant: `Ord::min` is not a `const fn`.
        Some(&m) => Some(quote!(if #m < #default { #m } else { #default })),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` columns of `f32`, every other one written.
    fn columns(n: usize) -> (Vec<Source>, Vec<Ident>) {
        let sources = (0..n)
            .map(|k| Source {
                column: k,
                ty: quote!(f32),
                mutable: k % 2 == 0,
                binding: format_ident!("v{}", k),
                field: false,
                writes: Vec::new(),
            })
            .collect();
        (sources, (0..n).map(|k| format_ident!("c{}", k)).collect())
    }

    #[test]
    fn a_part_of_up_to_16_columns_walks_blocks_and_a_wider_one_an_index_loop() {
        let call = [quote!(f();)];
        let (sources, slices) = columns(MAX_ROWS_COLUMNS);
        let blocks = row_loop(&sources, &slices, &call).to_string();
        assert!(blocks.contains("__rows !"), "{blocks}");
        assert!(blocks.contains("mut c0 => v0 , ref c1 => v1"), "{blocks}");
        let (sources, slices) = columns(MAX_ROWS_COLUMNS + 1);
        let index = row_loop(&sources, &slices, &call).to_string();
        assert!(!index.contains("__rows"), "{index}");
        assert!(index.contains("for i in 0 .. n"), "{index}");
        assert!(index.contains("let c16 = & mut c16 [.. n] ;"), "{index}");
    }

    #[test]
    fn a_strided_field_takes_an_index_loop() {
        let (mut sources, slices) = columns(2);
        sources[1].field = true;
        let index = row_loop(&sources, &slices, &[quote!(f();)]).to_string();
        assert!(!index.contains("__rows"), "{index}");
        assert!(index.contains("let v1 = & c1 [i] ;"), "{index}");
    }
}
