//! Declarations: what one `#[derive(Component)]`, `#[derive(Signature)]`,
//! `#[derive(Resource)]`, `#[derive(Event)]` or `#[system]` item says, parsed and validated in
//! isolation.
//!
//! This is the one place that decides what a valid declaration is. `sigecs-derive` calls these
//! functions and turns an `Err` into a compile error at the offending token; the build script
//! (`sigecs-build`) calls the same functions on every scanned item, then does the whole-crate
//! checks (unknown names, duplicates, matching). It is a crate of its own so that a user's
//! runtime dependencies (`sigecs` → `sigecs-derive` → this) carry no code generator or
//! formatter.
//!
//! ```
//! let input: syn::DeriveInput = syn::parse_quote!(pub struct Position(pub f32););
//! let c = sigecs_decl::parse_component(&input).unwrap();
//! assert_eq!(c.ident, "Position");
//! assert!(!c.cold);
//! ```

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Fields, FnArg, GenericArgument, Ident, ItemFn, LitStr, PathArguments,
    ReturnType, Token, Type, Visibility,
};

/// A `#[derive(Component)]` type.
#[derive(Clone, Debug)]
pub struct ComponentDecl {
    /// The type's name.
    pub ident: Ident,
    /// `#[component(cold)]`.
    pub cold: bool,
    /// `#[component(sparse)]`: kept in a sparse set beside the stores.
    pub sparse: bool,
    /// `#[component(level = "name", ...)]`: the component can be stored in levels.
    pub level: Option<LevelOpt>,
    /// `#[component(no_rollback)]`: world states do not hold its values (a render or audio
    /// handle); a load keeps the values of the entities that stay (see `sigecs::state`).
    pub no_rollback: bool,
}

/// How an opted-in component's instances are stored in a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelEncoding {
    /// `encoding = "pod"` (the default): the value's bytes, read in place (`bytemuck::Pod`).
    Pod,
    /// `encoding = "serde"`: postcard, for components that are not plain old data.
    Serde,
    /// A struct without fields and no `encoding`: a tag, stored as the entities that hold it
    /// (nothing to derive; made with `Type {}` when spawned).
    Tag,
}

/// The level options of a component:
/// `#[component(level = "name", encoding = "serde", spawn_order = 1, map_entities)]`.
#[derive(Clone, Debug)]
pub struct LevelOpt {
    /// The level name: the key in a level's JSON `"components"` object.
    pub name: String,
    /// Where the name is written, for errors about it.
    pub span: Span,
    /// POD (default) or serde.
    pub encoding: LevelEncoding,
    /// `spawn_order = N` (default 0): component types spawn in ascending order.
    pub spawn_order: i32,
    /// `map_entities`: the component holds `Entity` values (it implements
    /// `sigecs_level::MapEntities`), remapped when spawned and saved.
    pub map_entities: bool,
}

/// Checks a level name: 1 to 64 characters of ASCII letters, digits and `_`, not starting
/// with a digit (it is a JSON key and part of messages and paths such as
/// `entities[3].components.velocity`).
fn check_level_name(name: &str) -> Result<(), String> {
    let ok_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if name.is_empty()
        || name.len() > 64
        || !ok_chars
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        Err(format!(
            "invalid level name \"{name}\": use 1 to 64 ASCII letters, digits and `_`, not \
             starting with a digit, as in `level = \"position\"`"
        ))
    } else {
        Ok(())
    }
}

/// Storage layout requested by `#[signature(layout = "...")]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutDecl {
    /// One column per component (the default).
    Columns,
    /// Row structs of the hot components plus a parallel array of the cold ones.
    Rows,
}

/// A `#[derive(Signature)]` struct: a named set of components.
#[derive(Clone, Debug)]
pub struct SignatureDecl {
    /// The struct's name.
    pub ident: Ident,
    /// The requested layout.
    pub layout: LayoutDecl,
    /// Fields in declaration order: (field name, component type name).
    pub fields: Vec<(Ident, Ident)>,
}

/// A `#[derive(Resource)]` type.
#[derive(Clone, Debug)]
pub struct ResourceDecl {
    /// The type's name.
    pub ident: Ident,
}

/// A `#[derive(Event)]` type.
#[derive(Clone, Debug)]
pub struct EventDecl {
    /// The type's name.
    pub ident: Ident,
}

/// How a system parameter borrows its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `&T`, `&mut T`, `Option<&T>` or `Option<&mut T>`: a component or a resource, resolved by
    /// the build script.
    Ref {
        /// The named type.
        ty: Ident,
        /// `&mut`.
        mutable: bool,
        /// Wrapped in `Option`.
        optional: bool,
    },
    /// The entity of the row.
    Entity,
    /// `&mut Commands`: deferred structural changes (and events sent).
    Commands,
    /// `&EventReader<E>`: the events of type `E` this system has not read yet.
    Events {
        /// The event type.
        ty: Ident,
    },
}

/// One parameter of a system.
#[derive(Clone, Debug)]
pub struct Param {
    /// What it borrows.
    pub kind: ParamKind,
    /// The parameter's span, for errors.
    pub span: Span,
}

/// A `#[system]` function.
#[derive(Clone, Debug)]
pub struct SystemDecl {
    /// The function's name.
    pub ident: Ident,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// `with(..)`: components the entity must have without the system reading them.
    pub with: Vec<Ident>,
    /// `without(..)`: components the entity must not have.
    pub without: Vec<Ident>,
    /// `min_chunk = N`: minimum rows per parallel chunk.
    pub min_chunk: Option<usize>,
    /// `after(a, b)`: systems this one runs after.
    pub after: Vec<Ident>,
    /// `before(c)`: systems this one runs before.
    pub before: Vec<Ident>,
    /// `changed(A, B)`: the system visits only the chunks of rows where one of these
    /// components changed since its last run.
    pub changed: Vec<Ident>,
    /// `added(C)`: the system visits only the chunks of rows where an entity gained one of
    /// these components since its last run.
    pub added: Vec<Ident>,
    /// The system may spawn through its `Commands` (see [`may_spawn`]).
    pub spawns: bool,
    /// `dynamic`: the system is meant to run over component sets no signature declares, so
    /// matching no declared signature is what it is for (no warning in an open world).
    pub dynamic: bool,
}

/// The options of `#[system(..)]`, as written: what the unknown-option error lists, and what
/// the `#[system]` documentation must name (a test of `sigecs-derive` checks it does).
pub const SYSTEM_OPTIONS: [&str; 8] = [
    "with(A, B)",
    "without(C)",
    "changed(D)",
    "added(E)",
    "after(s)",
    "before(s)",
    "min_chunk = N",
    "dynamic",
];

fn require_no_generics(generics: &syn::Generics, what: &str) -> syn::Result<()> {
    if generics.params.is_empty() && generics.where_clause.is_none() {
        Ok(())
    } else {
        Err(syn::Error::new_spanned(
            generics,
            format!(
                "{what} cannot be generic: the build script lays out concrete types; declare one \
                 concrete type per use"
            ),
        ))
    }
}

fn require_visible(vis: &Visibility, ident: &Ident, what: &str) -> syn::Result<()> {
    if matches!(vis, Visibility::Inherited) {
        Err(syn::Error::new(
            ident.span(),
            format!(
                "{what} `{ident}` must be `pub` or `pub(crate)`: the generated world names it \
                 from outside this module"
            ),
        ))
    } else {
        Ok(())
    }
}

/// Combines errors so that every problem of a declaration is reported at once.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    fn check(&mut self, r: syn::Result<()>) {
        if let Err(e) = r {
            self.push(e);
        }
    }
    fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}

/// Parses and validates a `#[derive(Component)]` input.
pub fn parse_component(input: &DeriveInput) -> syn::Result<ComponentDecl> {
    let mut errors = Errors::default();
    if let Data::Union(u) = &input.data {
        errors.push(syn::Error::new(
            u.union_token.span,
            "a component cannot be a union; use a struct or an enum",
        ));
    }
    errors.check(require_no_generics(&input.generics, "a component"));
    errors.check(require_visible(&input.vis, &input.ident, "component"));
    let mut cold = false;
    let mut no_rollback = false;
    let mut sparse: Option<Span> = None;
    let mut name: Option<LitStr> = None;
    let mut encoding: Option<(LevelEncoding, Span)> = None;
    let mut spawn_order: Option<(i32, Span)> = None;
    let mut map_entities: Option<Span> = None;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("component"))
    {
        let r = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("cold") {
                cold = true;
            } else if meta.path.is_ident("no_rollback") {
                no_rollback = true;
            } else if meta.path.is_ident("sparse") {
                sparse = Some(meta.path.span());
            } else if meta.path.is_ident("level") {
                name = Some(level_name(&meta)?);
            } else if meta.path.is_ident("encoding") {
                let lit: LitStr = meta.value()?.parse()?;
                let e = match lit.value().as_str() {
                    "pod" => LevelEncoding::Pod,
                    "serde" => LevelEncoding::Serde,
                    other => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!(
                                "unknown encoding \"{other}\"; use `encoding = \"pod\"` (plain \
                                 old data, the default) or `encoding = \"serde\"` (any serde type)"
                            ),
                        ))
                    }
                };
                encoding = Some((e, lit.span()));
            } else if meta.path.is_ident("spawn_order") {
                spawn_order = Some(spawn_order_value(&meta)?);
            } else if meta.path.is_ident("map_entities") {
                map_entities = Some(meta.path.span());
            } else {
                return Err(meta.error(
                    "unknown component option; the options are `cold`, `sparse`, \
                     `no_rollback`, `level = \"name\"`, `encoding = \"pod\"|\"serde\"`, \
                     `spawn_order = N` and `map_entities`",
                ));
            }
            Ok(())
        });
        errors.check(r);
    }
    // A struct without fields is a tag unless an encoding is asked for.
    let fieldless = matches!(&input.data, Data::Struct(s) if s.fields.is_empty());
    let default_encoding = if fieldless {
        LevelEncoding::Tag
    } else {
        LevelEncoding::Pod
    };
    let level = match &name {
        Some(lit) => Some(LevelOpt {
            name: lit.value(),
            span: lit.span(),
            encoding: encoding.map_or(default_encoding, |e| e.0),
            spawn_order: spawn_order.map_or(0, |o| o.0),
            map_entities: map_entities.is_some(),
        }),
        None => {
            let stray = [
                encoding.map(|e| ("encoding", e.1)),
                spawn_order.map(|o| ("spawn_order", o.1)),
                map_entities.map(|s| ("map_entities", s)),
            ];
            for (option, span) in stray.into_iter().flatten() {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "`{option}` is a level option: give the component's level name \
                         too, as in `#[component(level = \"position\", {option} ...)]`"
                    ),
                ));
            }
            None
        }
    };
    if let (Some(r), Some(span)) = (&level, map_entities) {
        if r.encoding == LevelEncoding::Tag {
            errors.push(syn::Error::new(
                span,
                "a tag (a struct without fields) holds no entity: drop `map_entities`",
            ));
        }
    }
    if let Some(span) = sparse {
        if cold {
            errors.push(syn::Error::new(
                span,
                "a component is `sparse` or `cold`, not both: `cold` places it in a `rows` \
                 store's cold array, and a sparse component is in no store",
            ));
        }
        if level.is_some() {
            errors.push(syn::Error::new(
                span,
                "a `sparse` component cannot be stored in levels (levels spawn rows into \
                 stores); drop `level = ...`, or make it a table component",
            ));
        }
    }
    errors.finish(ComponentDecl {
        ident: input.ident.clone(),
        cold,
        sparse: sparse.is_some(),
        level,
        no_rollback,
    })
}

/// How a `#[derive(SoaManager)]` manager finds an entity's instance: `lookup = "hash"|"dense"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoaLookup {
    /// A hash map (the default).
    Hash,
    /// An array indexed by entity index.
    Dense,
}

/// The struct-level options of a `#[derive(SoaManager)]` struct:
/// `#[soa(manager = "Name", lookup = "hash"|"dense", level = "name", spawn_order = N)]`.
#[derive(Clone, Debug)]
pub struct SoaDecl {
    /// The struct's name.
    pub ident: Ident,
    /// `manager = "Name"`: the manager type's name (default: the struct's name + `Manager`).
    pub manager: Option<Ident>,
    /// `lookup = …`.
    pub lookup: Option<SoaLookup>,
    /// `level = "name"` (with `spawn_order`): levels may hold the struct, kept
    /// outside the signature stores and spawned by the manager. Always plain old data.
    pub level: Option<LevelOpt>,
}

/// Parses the struct-level `#[soa(...)]` options of a `#[derive(SoaManager)]` input (the
/// derive checks the fields; this is what the build script needs too).
pub fn parse_soa(input: &DeriveInput) -> syn::Result<SoaDecl> {
    let mut errors = Errors::default();
    let mut decl = SoaDecl {
        ident: input.ident.clone(),
        manager: None,
        lookup: None,
        level: None,
    };
    let mut name: Option<LitStr> = None;
    let mut spawn_order: Option<(i32, Span)> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("soa")) {
        let r = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("manager") {
                let lit: LitStr = meta.value()?.parse()?;
                let m: Ident = lit.parse().map_err(|_| {
                    syn::Error::new(
                        lit.span(),
                        format!(
                            "`manager` must name a type, like `manager = \"{}Manager\"`; `{}` is \
                             not an identifier",
                            input.ident,
                            lit.value()
                        ),
                    )
                })?;
                if decl.manager.replace(m).is_some() {
                    return Err(meta.error("`manager` is given twice"));
                }
            } else if meta.path.is_ident("lookup") {
                let lit: LitStr = meta.value()?.parse()?;
                let kind = match lit.value().as_str() {
                    "hash" => SoaLookup::Hash,
                    "dense" => SoaLookup::Dense,
                    other => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!(
                                "unknown lookup `{other}`: use `lookup = \"hash\"` (the default, \
                                 a hash map) or `lookup = \"dense\"` (an array indexed by entity \
                                 index)"
                            ),
                        ))
                    }
                };
                if decl.lookup.replace(kind).is_some() {
                    return Err(meta.error("`lookup` is given twice"));
                }
            } else if meta.path.is_ident("level") {
                let lit = level_name(&meta)?;
                if name.replace(lit).is_some() {
                    return Err(meta.error("`level` is given twice"));
                }
            } else if meta.path.is_ident("spawn_order") {
                spawn_order = Some(spawn_order_value(&meta)?);
            } else {
                let option = meta
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect::<Vec<_>>()
                    .join("::");
                return Err(meta.error(format!(
                    "unknown soa option `{option}`; expected `manager = \"Name\"`, \
                     `lookup = \"hash\" | \"dense\"`, `level = \"name\"` or `spawn_order = N`"
                )));
            }
            Ok(())
        });
        errors.check(r);
    }
    match &name {
        Some(lit) => {
            decl.level = Some(LevelOpt {
                name: lit.value(),
                span: lit.span(),
                encoding: LevelEncoding::Pod,
                spawn_order: spawn_order.map_or(0, |o| o.0),
                map_entities: false,
            })
        }
        None => {
            if let Some((_, span)) = spawn_order {
                errors.push(syn::Error::new(
                    span,
                    "`spawn_order` is a level option: give the struct's level name \
                     too, as in `#[soa(level = \"point_mass\", spawn_order = 1)]`",
                ));
            }
        }
    }
    errors.finish(decl)
}

/// The value of `level = "name"`, checked.
fn level_name(meta: &syn::meta::ParseNestedMeta) -> syn::Result<LitStr> {
    let lit: LitStr = meta.value()?.parse()?;
    check_level_name(&lit.value()).map_err(|msg| syn::Error::new(lit.span(), msg))?;
    Ok(lit)
}

/// The value of `spawn_order = N`.
fn spawn_order_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<(i32, Span)> {
    let lit: syn::LitInt = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`spawn_order` takes an integer, as in `spawn_order = 1`",
        )
    })?;
    Ok((lit.base10_parse::<i32>()?, lit.span()))
}

/// Parses and validates a `#[derive(Signature)]` input.
pub fn parse_signature(input: &DeriveInput) -> syn::Result<SignatureDecl> {
    let mut errors = Errors::default();
    errors.check(require_no_generics(&input.generics, "a signature"));
    errors.check(require_visible(&input.vis, &input.ident, "signature"));
    let mut layout = LayoutDecl::Columns;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("signature"))
    {
        let r = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("layout") {
                let lit: LitStr = meta.value()?.parse()?;
                layout = match lit.value().as_str() {
                    "columns" => LayoutDecl::Columns,
                    "rows" => LayoutDecl::Rows,
                    other => {
                        return Err(syn::Error::new(
                            lit.span(),
                            format!(
                                "unknown layout \"{other}\"; use `layout = \"columns\"` (the \
                                 default) or `layout = \"rows\"`"
                            ),
                        ))
                    }
                };
                Ok(())
            } else {
                Err(meta.error(
                    "unknown signature option; the only option is `layout = \"columns\"` or \
                     `layout = \"rows\"`",
                ))
            }
        });
        errors.check(r);
    }
    let mut fields = Vec::new();
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => {
                for f in &named.named {
                    let name = f.ident.clone().expect("named field");
                    match plain_type_name(&f.ty) {
                        Some(ty) => {
                            if let Some((first, _)) = fields.iter().find(|(_, t)| *t == ty) {
                                errors.push(syn::Error::new_spanned(
                                    &f.ty,
                                    format!(
                                        "component `{ty}` appears twice in signature `{}` (also \
                                         as field `{first}`); an entity holds one value per \
                                         component, so remove one field",
                                        input.ident
                                    ),
                                ));
                            } else {
                                fields.push((name, ty));
                            }
                        }
                        None => errors.push(syn::Error::new_spanned(
                            &f.ty,
                            "a signature field must name a component type, as in \
                             `position: Position` (no references, generics or tuples)",
                        )),
                    }
                }
                if named.named.is_empty() {
                    errors.push(syn::Error::new(
                        input.ident.span(),
                        "a signature needs at least one component field",
                    ));
                }
            }
            _ => errors.push(syn::Error::new(
                input.ident.span(),
                "a signature must be a struct with named fields, one per component, as in \
                 `struct Ship { position: Position, velocity: Velocity }`",
            )),
        },
        _ => errors.push(syn::Error::new(
            input.ident.span(),
            "a signature must be a struct with named fields, one per component",
        )),
    }
    errors.finish(SignatureDecl {
        ident: input.ident.clone(),
        layout,
        fields,
    })
}

/// Parses and validates a `#[derive(Resource)]` input.
pub fn parse_resource(input: &DeriveInput) -> syn::Result<ResourceDecl> {
    let mut errors = Errors::default();
    if let Data::Union(u) = &input.data {
        errors.push(syn::Error::new(
            u.union_token.span,
            "a resource cannot be a union; use a struct or an enum",
        ));
    }
    errors.check(require_no_generics(&input.generics, "a resource"));
    errors.check(require_visible(&input.vis, &input.ident, "resource"));
    errors.finish(ResourceDecl {
        ident: input.ident.clone(),
    })
}

/// Parses and validates a `#[derive(Event)]` input.
pub fn parse_event(input: &DeriveInput) -> syn::Result<EventDecl> {
    let mut errors = Errors::default();
    if let Data::Union(u) = &input.data {
        errors.push(syn::Error::new(
            u.union_token.span,
            "an event cannot be a union; use a struct or an enum",
        ));
    }
    errors.check(require_no_generics(&input.generics, "an event"));
    errors.check(require_visible(&input.vis, &input.ident, "event"));
    errors.finish(EventDecl {
        ident: input.ident.clone(),
    })
}

/// The arguments of `#[system(...)]`.
#[derive(Default)]
struct SystemArgs {
    with: Vec<Ident>,
    without: Vec<Ident>,
    min_chunk: Option<usize>,
    after: Vec<Ident>,
    before: Vec<Ident>,
    changed: Vec<Ident>,
    added: Vec<Ident>,
    dynamic: bool,
}

impl Parse for SystemArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = SystemArgs::default();
        let metas = Punctuated::<syn::Meta, Token![,]>::parse_terminated(input)?;
        for meta in metas {
            if meta.path().is_ident("dynamic") {
                if !matches!(meta, syn::Meta::Path(_)) {
                    return Err(syn::Error::new_spanned(
                        &meta,
                        "`dynamic` takes no arguments: write `#[system(dynamic)]`",
                    ));
                }
                args.dynamic = true;
                continue;
            }
            if let syn::Meta::NameValue(nv) = &meta {
                if nv.path.is_ident("min_chunk") {
                    let n = match &nv.value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(i),
                            ..
                        }) => i.base10_parse::<usize>()?,
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "`min_chunk` takes a positive integer, as in `min_chunk = 256`",
                            ))
                        }
                    };
                    if n == 0 {
                        return Err(syn::Error::new_spanned(
                            &nv.value,
                            "`min_chunk` must be at least 1",
                        ));
                    }
                    args.min_chunk = Some(n);
                    continue;
                }
            }
            let (list, what) = match &meta {
                syn::Meta::List(list) if list.path.is_ident("with") => {
                    (&mut args.with, "a component name, as in `with(Position)`")
                }
                syn::Meta::List(list) if list.path.is_ident("without") => (
                    &mut args.without,
                    "a component name, as in `without(Frozen)`",
                ),
                syn::Meta::List(list) if list.path.is_ident("changed") => (
                    &mut args.changed,
                    "a component name, as in `changed(Position)`",
                ),
                syn::Meta::List(list) if list.path.is_ident("added") => {
                    (&mut args.added, "a component name, as in `added(Enemy)`")
                }
                syn::Meta::List(list) if list.path.is_ident("after") => {
                    (&mut args.after, "a system's name, as in `after(movement)`")
                }
                syn::Meta::List(list) if list.path.is_ident("before") => {
                    (&mut args.before, "a system's name, as in `before(render)`")
                }
                _ => {
                    let options: Vec<String> =
                        SYSTEM_OPTIONS.iter().map(|o| format!("`{o}`")).collect();
                    return Err(syn::Error::new_spanned(
                        &meta,
                        format!(
                            "unknown system option; the options are {}",
                            options.join(", ")
                        ),
                    ));
                }
            };
            let syn::Meta::List(l) = &meta else {
                unreachable!()
            };
            let names = l.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)?;
            for p in names {
                match p.segments.last() {
                    Some(seg) if seg.arguments.is_none() => list.push(seg.ident.clone()),
                    _ => return Err(syn::Error::new(p.span(), format!("expected {what}"))),
                }
            }
        }
        Ok(args)
    }
}

/// Parses and validates a `#[system(...)]` function; `args` are the attribute's arguments.
pub fn parse_system(args: TokenStream, item: &ItemFn) -> syn::Result<SystemDecl> {
    let mut errors = Errors::default();
    let args: SystemArgs = match syn::parse2(args) {
        Ok(a) => a,
        Err(e) => {
            errors.push(e);
            SystemArgs::default()
        }
    };
    let sig = &item.sig;
    errors.check(require_visible(&item.vis, &sig.ident, "system"));
    errors.check(require_no_generics(&sig.generics, "a system"));
    if let Some(a) = &sig.asyncness {
        errors.push(syn::Error::new(a.span, "a system cannot be `async`"));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(syn::Error::new(u.span, "a system cannot be `unsafe`"));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        let unit = matches!(&**ty, Type::Tuple(t) if t.elems.is_empty());
        if !unit {
            errors.push(syn::Error::new_spanned(
                ty,
                "a system returns nothing: it runs once per row and writes through `&mut` \
                 parameters",
            ));
        }
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.push(syn::Error::new_spanned(
                r,
                "a system is a free function; it cannot take `self`",
            )),
            FnArg::Typed(pt) => match parse_param(&pt.ty) {
                Ok(kind) => {
                    if let ParamKind::Ref { ty, mutable, .. } = &kind {
                        let clash = params.iter().find_map(|p: &Param| match &p.kind {
                            ParamKind::Ref {
                                ty: t, mutable: m, ..
                            } if t == ty => Some(*m),
                            _ => None,
                        });
                        if let Some(other_mut) = clash {
                            let msg = if *mutable || other_mut {
                                format!(
                                    "`{ty}` is borrowed twice in one system and at least once \
                                     mutably (`&mut {ty}` with `&{ty}`), which would alias; take \
                                     it once, as `&mut {ty}`"
                                )
                            } else {
                                format!("`&{ty}` appears twice; take it once")
                            };
                            errors.push(syn::Error::new_spanned(&pt.ty, msg));
                            continue;
                        }
                    }
                    if kind == ParamKind::Commands
                        && params.iter().any(|p: &Param| p.kind == ParamKind::Commands)
                    {
                        errors.push(syn::Error::new_spanned(
                            &pt.ty,
                            "`&mut Commands` appears twice; take it once",
                        ));
                        continue;
                    }
                    params.push(Param {
                        kind,
                        span: pt.ty.span(),
                    });
                }
                Err(e) => errors.push(e),
            },
        }
    }
    if let Some(itself) = args
        .after
        .iter()
        .chain(&args.before)
        .find(|s| **s == sig.ident)
    {
        errors.push(syn::Error::new(
            itself.span(),
            format!("system `{itself}` cannot run before or after itself"),
        ));
    }
    let spawns = sig.inputs.iter().any(|input| match input {
        FnArg::Typed(pt) if parse_param(&pt.ty).ok() == Some(ParamKind::Commands) => {
            may_spawn(&pt.pat, &item.block)
        }
        _ => false,
    });
    errors.finish(SystemDecl {
        spawns,
        ident: sig.ident.clone(),
        params,
        with: args.with,
        without: args.without,
        min_chunk: args.min_chunk,
        after: args.after,
        before: args.before,
        changed: args.changed,
        added: args.added,
        dynamic: args.dynamic,
    })
}

/// The methods of `Commands` that reserve no entity id.
const NON_SPAWNING: &[&str] = &[
    "despawn",
    "insert",
    "remove",
    "send",
    "set_transform",
    "set_parent",
    "remove_parent",
    "len",
    "is_empty",
];

/// Can a system whose `Commands` parameter is `pat` spawn, given its `body`? Spawns reserve
/// entity ids as they run, so a pass that spawns runs on one thread in a deterministic world;
/// one that only despawns, inserts, removes or sends can split. The answer is conservative:
/// no only when every mention of the parameter in the body (macros included) is a call of a
/// method of `Commands` that reserves no id (`commands.despawn(..)`), so a reborrow, a call
/// that passes `commands` on, a shadowing `let` or a `spawn` all count as spawning.
pub fn may_spawn(pat: &syn::Pat, body: &syn::Block) -> bool {
    let name = match pat {
        syn::Pat::Ident(p) if p.subpat.is_none() => p.ident.to_string(),
        syn::Pat::Wild(_) => return false,
        _ => return true,
    };
    /// Is the mention at `tokens[0]` a call of a method that reserves no id? `x.commands` or
    /// `path::commands` would be another thing named alike: still counted, to stay
    /// conservative.
    fn non_spawning_call(tokens: &[proc_macro2::TokenTree]) -> bool {
        use proc_macro2::{Delimiter, TokenTree};
        match tokens {
            [_, TokenTree::Punct(dot), TokenTree::Ident(method), next, ..] => {
                // `(args)`, or a turbofish (`remove::<C>(e)`): a call either way.
                let call = match next {
                    TokenTree::Group(g) => g.delimiter() == Delimiter::Parenthesis,
                    TokenTree::Punct(p) => p.as_char() == ':',
                    _ => false,
                };
                dot.as_char() == '.' && NON_SPAWNING.iter().any(|n| method == n) && call
            }
            _ => false,
        }
    }
    fn mentions(tokens: TokenStream, name: &str) -> bool {
        use proc_macro2::TokenTree;
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        tokens.iter().enumerate().any(|(i, t)| match t {
            TokenTree::Group(g) => mentions(g.stream(), name),
            TokenTree::Ident(id) => id == name && !non_spawning_call(&tokens[i..]),
            _ => false,
        })
    }
    mentions(quote::ToTokens::to_token_stream(body), &name)
}

const PARAM_HELP: &str = "a system parameter must be `&C`, `&mut C`, `Option<&C>`, \
    `Option<&mut C>` for a component C, `&R` or `&mut R` for a resource R, `Entity`, \
    `&mut Commands`, or `&EventReader<E>` for an event E";

fn parse_param(ty: &Type) -> syn::Result<ParamKind> {
    let unsupported =
        || syn::Error::new_spanned(ty, format!("unsupported parameter: {PARAM_HELP}"));
    match ty {
        Type::Reference(r) => {
            if r.lifetime.is_some() {
                return Err(syn::Error::new(
                    r.span(),
                    "system parameters take no explicit lifetimes; write `&C` or `&mut C`",
                ));
            }
            if let Some(event) = event_reader(&r.elem) {
                return if r.mutability.is_none() {
                    Ok(ParamKind::Events { ty: event })
                } else {
                    Err(syn::Error::new_spanned(
                        ty,
                        "take an event reader as `&EventReader<E>` (reading advances its own \
                         cursor)",
                    ))
                };
            }
            let name = plain_type_name(&r.elem).ok_or_else(unsupported)?;
            if name == "Commands" {
                return if r.mutability.is_some() {
                    Ok(ParamKind::Commands)
                } else {
                    Err(syn::Error::new_spanned(
                        ty,
                        "take commands as `&mut Commands`",
                    ))
                };
            }
            Ok(ParamKind::Ref {
                ty: name,
                mutable: r.mutability.is_some(),
                optional: false,
            })
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().ok_or_else(unsupported)?;
            if last.ident == "Entity" && last.arguments.is_none() {
                return Ok(ParamKind::Entity);
            }
            if last.ident == "Option" {
                if let PathArguments::AngleBracketed(a) = &last.arguments {
                    if let Some(GenericArgument::Type(Type::Reference(r))) = a.args.first() {
                        if a.args.len() == 1 && r.lifetime.is_none() {
                            let name = plain_type_name(&r.elem).ok_or_else(unsupported)?;
                            return Ok(ParamKind::Ref {
                                ty: name,
                                mutable: r.mutability.is_some(),
                                optional: true,
                            });
                        }
                    }
                }
            }
            Err(unsupported())
        }
        _ => Err(unsupported()),
    }
}

/// The event type `E` of `EventReader<E>` (by any path), if `ty` is one.
fn event_reader(ty: &Type) -> Option<Ident> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "EventReader" {
        return None;
    }
    let PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match a.args.iter().collect::<Vec<_>>()[..] {
        [GenericArgument::Type(t)] => plain_type_name(t),
        _ => None,
    }
}

/// The name of a plain path type such as `Position` or `physics::Position`; `None` for
/// anything with generics, references, tuples and so on.
pub fn plain_type_name(ty: &Type) -> Option<Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            if p.path.segments.iter().any(|s| !s.arguments.is_none()) {
                return None;
            }
            p.path.segments.last().map(|s| s.ident.clone())
        }
        Type::Group(g) => plain_type_name(&g.elem),
        Type::Paren(p) => plain_type_name(&p.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn derive(tokens: TokenStream) -> DeriveInput {
        syn::parse2(tokens).unwrap()
    }

    fn system(args: TokenStream, f: TokenStream) -> syn::Result<SystemDecl> {
        parse_system(args, &syn::parse2(f).unwrap())
    }

    fn all_messages(e: syn::Error) -> Vec<String> {
        e.into_iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn component_options() {
        let c = parse_component(&derive(
            quote! { #[component(cold)] pub struct Name(String); },
        ))
        .unwrap();
        assert!(c.cold);
        assert_eq!(c.ident, "Name");
        assert!(c.level.is_none());
        let c = parse_component(&derive(quote! { #[component(sparse)] pub struct A; })).unwrap();
        assert!(c.sparse && !c.cold);
        let e = parse_component(&derive(quote! { #[component(sparse, cold)] pub struct A; }))
            .unwrap_err();
        assert!(
            e.to_string().contains("`sparse` or `cold`, not both"),
            "{e}"
        );
        let e = parse_component(&derive(
            quote! { #[component(sparse, level = "a")] pub struct A; },
        ))
        .unwrap_err();
        assert!(e.to_string().contains("cannot be stored in levels"), "{e}");
        let e = parse_component(&derive(quote! { #[component(hot)] pub struct A; })).unwrap_err();
        assert!(e.to_string().contains("unknown component option"), "{e}");
        let e = parse_component(&derive(quote! { pub struct A<T>(T); })).unwrap_err();
        assert!(e.to_string().contains("cannot be generic"), "{e}");
        let e = parse_component(&derive(quote! { struct A; })).unwrap_err();
        assert!(
            e.to_string().contains("must be `pub` or `pub(crate)`"),
            "{e}"
        );
    }

    /// A struct without fields is a tag, however it is written, unless an encoding is asked
    /// for; a tag holds no entity to map.
    #[test]
    fn a_fieldless_level_component_is_a_tag() {
        let encoding = |tokens| {
            parse_component(&derive(tokens))
                .unwrap()
                .level
                .unwrap()
                .encoding
        };
        for tag in [
            quote! { #[component(level = "t")] pub struct T; },
            quote! { #[component(level = "t")] pub struct T {} },
            quote! { #[component(level = "t")] pub struct T(); },
        ] {
            assert_eq!(encoding(tag), LevelEncoding::Tag);
        }
        assert_eq!(
            encoding(quote! { #[component(level = "t", encoding = "pod")] pub struct T; }),
            LevelEncoding::Pod
        );
        assert_eq!(
            encoding(quote! { #[component(level = "t")] pub enum T { A } }),
            LevelEncoding::Pod
        );
        let e = parse_component(&derive(
            quote! { #[component(level = "t", map_entities)] pub struct T; },
        ))
        .unwrap_err();
        assert!(e.to_string().contains("holds no entity"), "{e}");
    }

    #[test]
    fn component_level_options() {
        let c = parse_component(&derive(quote! {
            #[component(cold, level = "name", encoding = "serde", spawn_order = -2)]
            #[component(map_entities)]
            pub struct Name(String);
        }))
        .unwrap();
        let r = c.level.unwrap();
        assert_eq!(r.name, "name");
        assert_eq!(r.encoding, LevelEncoding::Serde);
        assert_eq!(r.spawn_order, -2);
        assert!(r.map_entities && c.cold);
        let c = parse_component(&derive(
            quote! { #[component(level = "position")] pub struct P(f32); },
        ))
        .unwrap();
        let r = c.level.unwrap();
        assert_eq!(
            (r.encoding, r.spawn_order, r.map_entities),
            (LevelEncoding::Pod, 0, false)
        );

        let msg = |tokens| parse_component(&derive(tokens)).unwrap_err().to_string();
        assert!(msg(quote! { #[component(level = "")] pub struct A; })
            .contains("invalid level name \"\""));
        assert!(msg(quote! { #[component(level = "a b")] pub struct A; })
            .contains("invalid level name"));
        assert!(msg(quote! { #[component(level = "1a")] pub struct A; })
            .contains("not starting with a digit"));
        assert!(
            msg(quote! { #[component(level = "a", encoding = "json")] pub struct A; })
                .contains("unknown encoding \"json\"")
        );
        assert!(
            msg(quote! { #[component(level = "a", spawn_order = "x")] pub struct A; })
                .contains("takes an integer")
        );
        assert!(msg(quote! { #[component(encoding = "pod")] pub struct A; })
            .contains("give the component's level name too"));
        assert!(msg(quote! { #[component(level = 3)] pub struct A; })
            .contains("expected string literal"));
    }

    #[test]
    fn signature_fields_and_layout() {
        let s = parse_signature(&derive(quote! {
            #[signature(layout = "rows")]
            pub struct Ship { pub p: physics::Position, v: Velocity }
        }))
        .unwrap();
        assert_eq!(s.layout, LayoutDecl::Rows);
        let names: Vec<String> = s.fields.iter().map(|(f, t)| format!("{f}:{t}")).collect();
        assert_eq!(names, ["p:Position", "v:Velocity"]);

        let e = parse_signature(&derive(quote! {
            #[signature(layout = "diagonal")] pub struct S { a: A }
        }))
        .unwrap_err();
        assert!(e.to_string().contains("unknown layout \"diagonal\""), "{e}");

        let e = parse_signature(&derive(
            quote! { pub struct S { a: A, b: A, c: &'static B } },
        ))
        .unwrap_err();
        let msgs = all_messages(e);
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert!(msgs[0].contains("appears twice"));
        assert!(msgs[0].contains("(also as field `a`)"), "{}", msgs[0]);
        assert!(msgs[1].contains("must name a component type"));

        let e = parse_signature(&derive(quote! { pub struct S(A); })).unwrap_err();
        assert!(e.to_string().contains("named fields"), "{e}");
        let e = parse_signature(&derive(quote! { pub struct S {} })).unwrap_err();
        assert!(e.to_string().contains("at least one component"), "{e}");
    }

    #[test]
    fn system_parameters() {
        let s = system(
            quote! { with(Mass), without(Frozen) },
            quote! {
                pub fn integrate(e: Entity, p: &mut Position, v: &Velocity,
                                 a: Option<&Acceleration>, n: Option<&mut Name>, t: &Time) {}
            },
        )
        .unwrap();
        assert_eq!(s.with[0], "Mass");
        assert_eq!(s.without[0], "Frozen");
        let kinds: Vec<String> = s
            .params
            .iter()
            .map(|p| match &p.kind {
                ParamKind::Entity => "entity".to_string(),
                ParamKind::Commands => "commands".to_string(),
                ParamKind::Events { ty } => format!("events of {ty}"),
                ParamKind::Ref {
                    ty,
                    mutable,
                    optional,
                } => format!(
                    "{ty}{}{}",
                    if *mutable { "!" } else { "" },
                    if *optional { "?" } else { "" }
                ),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "entity",
                "Position!",
                "Velocity",
                "Acceleration?",
                "Name!?",
                "Time"
            ]
        );
    }

    #[test]
    fn system_errors() {
        let e = system(
            quote! {},
            quote! { pub fn f(p: &mut Position, q: &Position) {} },
        )
        .unwrap_err();
        assert!(e.to_string().contains("would alias"), "{e}");
        let e = system(quote! {}, quote! { pub fn f(p: Position) {} }).unwrap_err();
        assert!(e.to_string().contains("unsupported parameter"), "{e}");
        let e = system(quote! {}, quote! { pub fn f(p: Vec<&Position>) {} }).unwrap_err();
        assert!(e.to_string().contains("unsupported parameter"), "{e}");
        let e = system(quote! { sometimes(A) }, quote! { pub fn f(p: &A) {} }).unwrap_err();
        assert!(e.to_string().contains("unknown system option"), "{e}");
        let e = system(quote! {}, quote! { fn f(p: &A) {} }).unwrap_err();
        assert!(e.to_string().contains("must be `pub`"), "{e}");
        let e = system(quote! {}, quote! { pub fn f(p: &A) -> u32 { 0 } }).unwrap_err();
        assert!(e.to_string().contains("returns nothing"), "{e}");
        // A system with no parameter at all is frame-level logic: valid.
        assert!(system(quote! {}, quote! { pub fn f() {} }).is_ok());
        let e = system(quote! { after(f) }, quote! { pub fn f(p: &A) {} }).unwrap_err();
        assert!(
            e.to_string().contains("cannot run before or after itself"),
            "{e}"
        );
        let e = system(quote! {}, quote! { pub fn f(r: &mut EventReader<Died>) {} }).unwrap_err();
        assert!(e.to_string().contains("as `&EventReader<E>`"), "{e}");
        let s = system(
            quote! { after(a, m::b), before(c) },
            quote! { pub fn f(r: &EventReader<Died>, t: &mut Time, c: &mut Commands) {} },
        )
        .unwrap();
        assert_eq!(s.after, ["a", "b"]);
        assert_eq!(s.before, ["c"]);
        assert!(matches!(&s.params[0].kind, ParamKind::Events { ty } if ty == "Died"));
        let s = system(quote! { dynamic, with(A) }, quote! { pub fn f(p: &B) {} }).unwrap();
        assert!(s.dynamic && s.with == ["A"]);
        assert!(
            !system(quote! {}, quote! { pub fn f(p: &B) {} })
                .unwrap()
                .dynamic
        );
        let e = system(quote! { dynamic(A) }, quote! { pub fn f(p: &B) {} }).unwrap_err();
        assert!(
            e.to_string().contains("`dynamic` takes no arguments"),
            "{e}"
        );
        let e = system(quote! { dynamic = true }, quote! { pub fn f(p: &B) {} }).unwrap_err();
        assert!(
            e.to_string().contains("`dynamic` takes no arguments"),
            "{e}"
        );
        let e = system(quote! { sometimes }, quote! { pub fn f(p: &B) {} }).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "the options are `with(A, B)`, `without(C)`, `changed(D)`, `added(E)`, \
                 `after(s)`, `before(s)`, `min_chunk = N`, `dynamic`"
            ),
            "{e}"
        );
        let e = system(quote! {}, quote! { pub fn f<T>(p: &T) {} }).unwrap_err();
        assert!(e.to_string().contains("cannot be generic"), "{e}");
        // Several problems are reported together.
        let e = system(quote! {}, quote! { fn f(a: A, b: B) {} }).unwrap_err();
        assert_eq!(all_messages(e).len(), 3);
    }

    /// Only a body whose every mention of the `Commands` parameter calls a method that
    /// reserves no id may split; anything else counts as spawning.
    #[test]
    fn systems_that_may_spawn() {
        let spawns = |f: TokenStream| system(quote! {}, f).unwrap().spawns;
        // No commands at all, or an unused one.
        assert!(!spawns(quote! { pub fn f(a: &A) {} }));
        assert!(!spawns(quote! { pub fn f(_: &mut Commands) {} }));
        assert!(!spawns(quote! { pub fn f(c: &mut Commands) {} }));
        // Despawns, inserts, removes and events, in macros and closures too.
        assert!(!spawns(quote! {
            pub fn f(e: Entity, l: &Life, commands: &mut Commands) {
                if l.0 <= 0.0 { commands.despawn(e); } else { commands.insert(e, Hot); }
                commands.remove::<Cold>(e);
                commands.send(Died(e));
                let n = commands.len();
                debug_assert!(commands.is_empty() || n > 0, "{}", commands.len());
            }
        }));
        // Spawns, directly or inside another call's arguments.
        assert!(spawns(
            quote! { pub fn f(commands: &mut Commands) { commands.spawn(S); } }
        ));
        assert!(spawns(quote! {
            pub fn f(e: Entity, c: &mut Commands) { c.insert(e, Link(c.spawn(S))); }
        }));
        assert!(spawns(quote! {
            pub fn f(c: &mut Commands) { if false { vec![c.spawn(S)]; } }
        }));
        // Passed on, reborrowed, called by path, or bound otherwise: it may spawn.
        assert!(spawns(quote! { pub fn f(c: &mut Commands) { helper(c); } }));
        assert!(spawns(
            quote! { pub fn f(c: &mut Commands) { let d = &mut *c; d.despawn(E); } }
        ));
        assert!(spawns(
            quote! { pub fn f(c: &mut Commands) { Commands::despawn(c, E); } }
        ));
        assert!(spawns(quote! { pub fn f(c: &mut Commands) { c.despawn; } }));
        assert!(spawns(quote! { pub fn f(mut c @ _: &mut Commands) {} }));
        assert!(spawns(
            quote! { pub fn f(c: &mut Commands) { let f = || c; f().despawn(E); } }
        ));
    }
}
