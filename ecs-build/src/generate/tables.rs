//! The model as data: the component-set flags, the resources struct, the row structs of `rows`
//! signatures, the static tables `sigecs` reads (components, stores with their columns and
//! slots, systems, the schedule), and the impls that give each declared type its id.

use super::*;
use proc_macro2::Literal;

pub(super) fn generate(analysis: &Analysis) -> TokenStream {
    let words = Literal::usize_unsuffixed(analysis.set_words());
    let set_and_resources = set_and_resources(analysis);
    let type_impls = type_impls(analysis);
    let rows_structs = analysis
        .signatures
        .iter()
        .filter(|s| s.layout == LayoutDecl::Rows)
        .map(|sig| row_structs(analysis, sig));

    let components = analysis.components.iter().map(|c| {
        let (name, path) = (name(&c.ident), &c.path);
        quote!(::sigecs::__private::ComponentInfo::of::<#path>(#name))
    });
    // The component of each column of every `columns` store, store after store, and their
    // numbers of columns: each store's columns and slots are its run of the tables derived
    // from them.
    let (mut column_ids, mut column_counts) = (Vec::new(), Vec::new());
    let stores: Vec<TokenStream> = analysis
        .signatures
        .iter()
        .map(|sig| store_info(analysis, sig, &mut column_ids, &mut column_counts))
        .collect();
    let (n_column_ids, n_columns_stores) = (column_ids.len(), column_counts.len());
    let column_ids = column_ids
        .into_iter()
        .map(|c| Literal::u32_unsuffixed(c as u32));
    let column_counts = column_counts.into_iter().map(Literal::u32_unsuffixed);
    let systems = analysis.systems.iter().map(|s| {
        let name = name(&s.ident);
        let ids = s.matches.iter().map(|&m| m as u32);
        let list = |set: &crate::analyze::Bits| {
            let ids = set.ids().map(|i| i as u32);
            quote!(&[#(#ids),*])
        };
        let (required, excluded) = (list(&s.required), list(&s.excluded));
        // A walking system visits no store, declared or dynamic.
        let per_row = !s.frame() && s.lead.is_none();
        quote!(::sigecs::__private::SystemInfo {
            name: #name,
            stores: &[#(#ids),*],
            required: #required,
            excluded: #excluded,
            per_row: #per_row,
        })
    });
    let system_names: Vec<String> = analysis.systems.iter().map(|s| name(&s.ident)).collect();
    let (n_comp, n_sig, n_sys) = (
        analysis.components.len(),
        analysis.signatures.len(),
        analysis.systems.len(),
    );
    let schedule = schedule(analysis);
    let (move_entries, move_fns) = typed_moves(analysis);
    let n_moves = move_entries.len();
    let strict = analysis.strict.then(|| {
        quote!(
            const STRICT: bool = true;
        )
    });
    let states = analysis.rollback.then(|| {
        quote!(
            const STATES: bool = true;
        )
    });
    let passes = Literal::usize_unsuffixed(super::passes::pass_count(analysis));
    let readers = Literal::usize_unsuffixed(analysis.readers);
    let n_events = Literal::usize_unsuffixed(analysis.events.len());
    let events = analysis.events.iter().map(|e| {
        let (name, path) = (name(&e.ident), &e.path);
        quote!(::sigecs::__private::EventInfo::of::<#path>(#name))
    });
    let model_safety = safety(
        "the tables list every component with its column type; each store's slots are its \
         signature's fields in declaration order, at their columns and offsets (`offset_of!` \
         into the row structs); `tables()` builds `Tables` of this model.",
    );
    quote! {
        #set_and_resources

        #(#rows_structs)*

        /// The model of this world: the tables `sigecs` reads.
        pub enum Model {}

        static COMPONENTS: [::sigecs::__private::ComponentInfo; #n_comp] = [#(#components),*];
        /// The component of each column of every `columns` store (in field order), store after
        /// store.
        static COLUMN_IDS: [u32; #n_column_ids] = [#(#column_ids),*];
        /// The number of columns of each `columns` store, in store order.
        static COLUMN_COUNTS: [u32; #n_columns_stores] = [#(#column_counts),*];
        static COLUMN_TYPES: [::sigecs::__private::ColumnType; #n_column_ids] =
            ::sigecs::__private::column_types(&COMPONENTS, &COLUMN_IDS);
        static COLUMN_SLOTS: [::sigecs::__private::Slot; #n_column_ids] =
            ::sigecs::__private::column_slots(&COLUMN_IDS, &COLUMN_COUNTS);
        static STORES: [::sigecs::__private::StoreInfo; #n_sig] = [#(#stores),*];
        static SYSTEMS: [::sigecs::__private::SystemInfo; #n_sys] = [#(#systems),*];

        /// The systems, in declaration order.
        pub static SYSTEM_NAMES: [&str; #n_sys] = [#(#system_names),*];

        /// The generated schedule (see `World::schedule`).
        pub static SCHEDULE: ::sigecs::schedule::Schedule = #schedule;

        static MOVES: [::sigecs::__private::TypedMove; #n_moves] = [#(#move_entries),*];
        #(#move_fns)*

        static EVENTS: [::sigecs::__private::EventInfo; #n_events] = [#(#events),*];

        #model_safety
        unsafe impl ::sigecs::WorldModel for Model {
            type Resources = Resources;
            type Set = ::sigecs::ComponentBits<#words>;
            type ComponentSet = ComponentSet;
            #strict
            #states
            const PASSES: usize = #passes;
            const READERS: usize = #readers;
            fn events() -> &'static [::sigecs::__private::EventInfo] { &EVENTS }
            fn components() -> &'static [::sigecs::__private::ComponentInfo] { &COMPONENTS }
            fn stores() -> &'static [::sigecs::__private::StoreInfo] { &STORES }
            fn systems() -> &'static [::sigecs::__private::SystemInfo] { &SYSTEMS }
            fn moves() -> &'static [::sigecs::__private::TypedMove] { &MOVES }
            fn tables() -> &'static ::sigecs::__private::Tables<Self::Set> {
                static TABLES: ::std::sync::OnceLock<::sigecs::__private::Tables<::sigecs::ComponentBits<#words>>> = ::std::sync::OnceLock::new();
                TABLES.get_or_init(::sigecs::__private::Tables::build::<Model>)
            }
        }

        #type_impls
    }
}

/// The named component-set type and the struct of the resources, with its `Default`.
fn set_and_resources(analysis: &Analysis) -> TokenStream {
    let words = Literal::usize_unsuffixed(analysis.set_words());
    let flags = analysis.components.iter().enumerate().map(|(i, c)| {
        let d = doc(format!("Component `{}` (id {i}).", name(&c.ident)));
        let constant = ident(&set_constant(&c.ident));
        let i = Literal::u32_unsuffixed(i as u32);
        quote!(#d #constant = #i,)
    });

    let res_fields = resource_fields(analysis);
    let res_types: Vec<&syn::Path> = analysis.resources.iter().map(|r| &r.path).collect();
    let res_docs = analysis
        .resources
        .iter()
        .map(|r| doc(format!("The world's `{}`.", r.ident)));

    quote! {
        ::sigecs::__component_set! {
            /// A set of this world's components, a `bitflags` type: one constant per component,
            /// its type's name in SCREAMING_SNAKE_CASE, ids in name order
            /// (`ComponentSet::POSITION | ComponentSet::VELOCITY`, as text `POSITION | VELOCITY`).
            pub struct ComponentSet: #words {
                #(#flags)*
            }
        }

        /// The world's resources, one field per `#[derive(Resource)]` type.
        pub struct Resources {
            #( #res_docs pub #res_fields: #res_types, )*
        }

        // Each initial value from its derive (the type's `Default`), so a resource that is not
        // `Default` is an error at its declaration only, not here too.
        impl ::core::default::Default for Resources {
            fn default() -> Self {
                Resources { #( #res_fields: <#res_types as ::sigecs::Resource>::__initial(), )* }
            }
        }
    }
}

/// The impls that give each declared component, signature, resource and event its id or
/// place, each with its `// SAFETY:` comment.
fn type_impls(analysis: &Analysis) -> TokenStream {
    let res_fields = resource_fields(analysis);
    let res_types: Vec<&syn::Path> = analysis.resources.iter().map(|r| &r.path).collect();
    let event_safety = safety("ID is the index of this type's entry in EVENTS.");
    let event_impls = analysis.events.iter().enumerate().map(|(i, e)| {
        let (path, id) = (&e.path, i as u32);
        quote!(#event_safety unsafe impl ::sigecs::EventOf<Model> for #path { const ID: u32 = #id; })
    });

    let component_safety = safety("ID is the index of this type's entry in COMPONENTS.");
    let component_impls = analysis.components.iter().enumerate().map(|(i, c)| {
        let (path, id) = (&c.path, i as u32);
        quote!(#component_safety unsafe impl ::sigecs::ComponentOf<Model> for #path { const ID: u32 = #id; })
    });
    let signature_safety = safety(
        "STORE is the index of the store whose slots are this signature's fields, in the order \
         its derived `write_fields` puts them.",
    );
    let signature_impls = analysis.signatures.iter().enumerate().map(|(i, s)| {
        let (path, id) = (&s.path, i as u32);
        quote!(#signature_safety unsafe impl ::sigecs::SignatureOf<Model> for #path { const STORE: u32 = #id; })
    });
    let resource_safety = safety(
        "no contract beyond Rust's (the trait is `unsafe` as every trait generated code \
         implements is); each resource has its own field.",
    );
    let resource_impls = res_types.iter().zip(&res_fields).map(|(path, field)| {
        quote! {
            #resource_safety
            unsafe impl ::sigecs::ResourceOf<Model> for #path {
                #[inline]
                fn get(resources: &Resources) -> &Self { &resources.#field }
                #[inline]
                fn get_mut(resources: &mut Resources) -> &mut Self { &mut resources.#field }
            }
        }
    });

    quote! {
        #(#component_impls)*
        #(#signature_impls)*
        #(#resource_impls)*
        #(#event_impls)*
    }
}

/// The hot row struct and the cold struct of a `rows` signature.
fn row_structs(analysis: &Analysis, sig: &Signature) -> TokenStream {
    let name = name(&sig.ident);
    let comp_ty = |id: usize| &analysis.components[id].path;
    let (row, cold) = (row_type(sig), cold_type(sig));
    let hot = row_fields(analysis, sig, false);
    let colds = row_fields(analysis, sig, true);
    let (hot_f, hot_t): (Vec<&Ident>, Vec<&syn::Path>) =
        hot.iter().map(|(f, id)| (f, comp_ty(*id))).unzip();
    let (cold_f, cold_t): (Vec<&Ident>, Vec<&syn::Path>) =
        colds.iter().map(|(f, id)| (f, comp_ty(*id))).unzip();
    let row_doc = doc(format!(
        "One row of `{name}`: its hot components, packed together."
    ));
    let cold_doc = doc(format!(
        "The cold components of one `{name}` row, kept apart so hot loops skip them."
    ));
    let cold_struct = (!colds.is_empty()).then(|| {
        quote! {
            #cold_doc
            #[repr(C)]
            pub struct #cold { #( #[allow(missing_docs)] pub #cold_f: #cold_t, )* }
        }
    });
    quote! {
        #row_doc
        #[repr(C)]
        pub struct #row { #( #[allow(missing_docs)] pub #hot_f: #hot_t, )* }
        #cold_struct
    }
}

/// A store's `StoreInfo`: its columns and the slot of each component, in field order. A
/// `columns` store's columns and slots are its run of `COLUMN_TYPES` and `COLUMN_SLOTS`,
/// derived from its components, which it appends to `column_ids` (and their number to
/// `column_counts`); a `rows` store's are written out.
fn store_info(
    analysis: &Analysis,
    sig: &Signature,
    column_ids: &mut Vec<usize>,
    column_counts: &mut Vec<u32>,
) -> TokenStream {
    let name = name(&sig.ident);
    let path = &sig.path;
    let (layout, columns, slots) = match sig.layout {
        LayoutDecl::Columns => {
            let at = Literal::usize_unsuffixed(column_ids.len());
            let n = Literal::usize_unsuffixed(sig.fields.len());
            column_ids.extend(sig.fields.iter().map(|(_, id)| *id));
            column_counts.push(sig.fields.len() as u32);
            (
                quote!(Columns),
                quote!(::sigecs::__private::sub_slice(&COLUMN_TYPES, #at, #n)),
                quote!(::sigecs::__private::sub_slice(&COLUMN_SLOTS, #at, #n)),
            )
        }
        LayoutDecl::Rows => {
            let columns = column_types(analysis, sig)
                .into_iter()
                .map(|t| quote!(::sigecs::__private::ColumnType::of::<#t>()));
            let (row, cold) = (row_type(sig), cold_type(sig));
            let slots = sig.fields.iter().map(|(f, id)| {
                let c = *id as u32;
                let (column, holder) = if is_cold(analysis, sig, *id) {
                    (1u32, &cold)
                } else {
                    (0u32, &row)
                };
                quote!(::sigecs::__private::Slot::new(#c, #column, ::core::mem::offset_of!(#holder, #f)))
            });
            (
                quote!(Rows),
                quote!(&[#(#columns),*]),
                quote!(&[#(#slots),*]),
            )
        }
    };
    quote! {
        ::sigecs::__private::StoreInfo {
            name: #name,
            layout: ::sigecs::Layout::#layout,
            columns: #columns,
            slots: #slots,
            signature: ::core::any::TypeId::of::<#path>,
        }
    }
}

/// The element type of each column of a store of `sig`: a component per column, or the row
/// struct and (when some component is cold) the cold struct.
fn column_types(analysis: &Analysis, sig: &Signature) -> Vec<TokenStream> {
    match sig.layout {
        LayoutDecl::Columns => sig
            .fields
            .iter()
            .map(|(_, id)| {
                let p = &analysis.components[*id].path;
                quote!(#p)
            })
            .collect(),
        LayoutDecl::Rows => {
            let (row, cold) = (row_type(sig), cold_type(sig));
            let has_cold = sig.fields.iter().any(|(_, id)| is_cold(analysis, sig, *id));
            let mut columns = vec![quote!(#row)];
            if has_cold {
                columns.push(quote!(#cold));
            }
            columns
        }
    }
}

/// The schedule as a static `Schedule` value.
fn schedule(analysis: &Analysis) -> TokenStream {
    let stages = analysis.stages.iter().enumerate().map(|(k, stage)| {
        let names: Vec<String> = stage
            .iter()
            .map(|&i| name(&analysis.systems[i].ident))
            .collect();
        let stores = analysis.signatures.iter().enumerate().filter_map(|(s, sig)| {
            let here: Vec<String> = stage
                .iter()
                .filter(|&&i| analysis.systems[i].lead.is_none())
                .filter(|&&i| analysis.systems[i].matches.contains(&s))
                .map(|&i| name(&analysis.systems[i].ident))
                .collect();
            let name = name(&sig.ident);
            (!here.is_empty()).then(|| quote!((#name, &[#(#here),*])))
        });
        // A walking system is alone in its stage.
        let walks = match stage.iter().find_map(|&i| analysis.systems[i].lead) {
            Some(c) => {
                let c = name(&analysis.components[c].ident);
                quote!(::core::option::Option::Some(#c))
            }
            None => quote!(::core::option::Option::None),
        };
        let parallel = !stage.iter().any(|&i| analysis.systems[i].sequential());
        let frame = stage.iter().any(|&i| analysis.systems[i].frame());
        let spawns = stage.iter().any(|&i| analysis.systems[i].spawns);
        let ordered = analysis.groups[k].len() > 1;
        quote!(::sigecs::schedule::Stage { systems: &[#(#names),*], stores: &[#(#stores),*], walks: #walks, parallel: #parallel, frame: #frame, spawns: #spawns, ordered: #ordered })
    });
    let order = analysis.systems.iter().map(|s| {
        let (name, at, constraints) = (name(&s.ident), &s.location, &s.constraints);
        quote!((#name, #at, #constraints))
    });
    quote!(::sigecs::schedule::Schedule { systems: &[#(#order),*], stages: &[#(#stages),*] })
}

/// Where component `id` lives in a store of `sig`: its column and its byte offset in the
/// column's element (as `store_info` lays it out), and that element's type.
fn slot(analysis: &Analysis, sig: &Signature, id: usize) -> (Literal, TokenStream, TokenStream) {
    match sig.layout {
        LayoutDecl::Columns => {
            let k = sig.fields.iter().position(|(_, c)| *c == id).expect("held");
            let p = &analysis.components[id].path;
            (Literal::usize_unsuffixed(k), quote!(0), quote!(#p))
        }
        LayoutDecl::Rows => {
            let f = &sig.fields.iter().find(|(_, c)| *c == id).expect("held").0;
            let (column, holder) = if is_cold(analysis, sig, id) {
                (1usize, cold_type(sig))
            } else {
                (0, row_type(sig))
            };
            (
                Literal::usize_unsuffixed(column),
                quote!(::core::mem::offset_of!(#holder, #f)),
                quote!(#holder),
            )
        }
    }
}

/// The insert/remove moves with static types: one function per declared transition (a pair of
/// signatures one component apart, each way) that copies each shared component from its slot
/// in one store to its slot in the other, moves the changed component in or out, and fills
/// the vacated source row from the source's last row column by column; and the table that
/// keys them by (store, component).
fn typed_moves(analysis: &Analysis) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let (mut entries, mut fns) = (Vec::new(), Vec::new());
    let move_safety = safety(
        "the two store ids, slots and column types are this transition's in STORES: each \
         shared component is copied once, the changed one moved in from or out to its value, and \
         each source column's last element fills the vacated row (the `MoveFn` contract the \
         caller upholds).",
    );
    for (s, c, t) in crate::analyze::transitions(analysis) {
        let (from, to) = (&analysis.signatures[s], &analysis.signatures[t]);
        let copies = to.fields.iter().filter(|(_, id)| *id != c).map(|(_, id)| {
            let ty = &analysis.components[*id].path;
            let ((sc, so, se), (dc, dof, de)) =
                (slot(analysis, from, *id), slot(analysis, to, *id));
            quote!(m.copy::<#ty, #se, #de>(#sc, #so, #dc, #dof);)
        });
        let ty = &analysis.components[c].path;
        let changed = if to.has(c) {
            let (dc, dof, de) = slot(analysis, to, c);
            quote!(m.insert::<#ty, #de>(#dc, #dof);)
        } else {
            let (sc, so, se) = slot(analysis, from, c);
            quote!(m.take::<#ty, #se>(#sc, #so);)
        };
        let fills = column_types(analysis, from)
            .into_iter()
            .enumerate()
            .map(|(k, ty)| {
                let k = Literal::usize_unsuffixed(k);
                quote!(m.fill::<#ty>(#k);)
            });
        let name = format_ident!("move_{}_{}", s, c);
        let d = doc(format!(
            "{} `{}`: `{}` to `{}`.",
            if to.has(c) { "Insert" } else { "Remove" },
            analysis.components[c].ident,
            from.ident,
            to.ident
        ));
        let (sid, cid, tid) = (s as u32, c as u32, t as u32);
        // Per slot of the target, the source slot of its component: how the row's adds carry.
        let carried =
            to.fields.iter().map(
                |(_, id)| match from.fields.iter().position(|(_, f)| f == id) {
                    Some(k) => {
                        let k = k as u32;
                        quote!(#k)
                    }
                    None => quote!(::sigecs::__private::GAINED),
                },
            );
        let from_width = from.fields.len();
        entries.push(
            quote!(::sigecs::__private::TypedMove { from: #sid, component: #cid, run: #name }),
        );
        fns.push(quote! {
            #d
            unsafe fn #name(
                stores: *mut ::sigecs::__private::Store,
                locations: &mut ::sigecs::__private::EntityLocations,
                entity: ::sigecs::Entity,
                loc: ::sigecs::__private::Location,
                value: *mut u8,
                _: u32,
                batch: ::core::option::Option<&::sigecs::__private::MoveBatch>,
            ) -> usize {
                #move_safety
                unsafe {
                    ::sigecs::__private::move_rows(
                        stores, locations, entity, loc, value, batch,
                        || ([#sid, #tid], &[#(#carried),*], #from_width),
                        |m| { #(#copies)* #changed #(#fills)* },
                    )
                }
            }
        });
    }
    (entries, fns)
}
