//! The scanner: reads a module tree with syn, following `mod` declarations from its root file
//! as rustc does, and collects the declarations, each with the path the generated code will
//! name it by (through a private module's glob re-export where there is one).

use crate::cfg::{self, Cfg};
use crate::decl::{
    self, ComponentDecl, EventDecl, ResourceDecl, SignatureDecl, SoaDecl, SystemDecl,
};
use crate::diagnostic::{location, Diagnostic};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::{Attribute, DeriveInput, Item};

/// A declaration and where it was found.
#[derive(Clone, Debug)]
pub struct Found<T> {
    /// The declaration.
    pub decl: T,
    /// Module path of the declaring module, e.g. `crate::components::physics`.
    pub module: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The traits its `#[derive(..)]`s name, by their last path segment (`Copy`, `Hash`,
    /// `Pod`, ...): how world states copy and hash it.
    pub derives: Vec<String>,
}

/// Everything found in the scanned sources.
#[derive(Default, Debug)]
pub struct Scan {
    /// `#[derive(Component)]` types.
    pub components: Vec<Found<ComponentDecl>>,
    /// `#[derive(Signature)]` structs.
    pub signatures: Vec<Found<SignatureDecl>>,
    /// `#[derive(Resource)]` types.
    pub resources: Vec<Found<ResourceDecl>>,
    /// `#[derive(Event)]` types.
    pub events: Vec<Found<EventDecl>>,
    /// `#[derive(SoaManager)]` structs declared as level components
    /// (`#[soa(level = "…")]`); the others are not the build script's concern.
    pub soa_levels: Vec<Found<SoaDecl>>,
    /// `#[system]` functions, in declaration order (modules in `mod` order, depth first).
    pub systems: Vec<Found<SystemDecl>>,
    /// Declarations skipped for their `#[cfg]`, for the errors that name them.
    pub skipped: Vec<Skipped>,
    /// Files read, for `cargo:rerun-if-changed`.
    pub read: Vec<PathBuf>,
}

/// A component, signature, resource or system left out because of its `#[cfg]`.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// Its name, without `r#`.
    pub name: String,
    /// What an error that misses it adds: where it is declared, under which `#[cfg]`, and
    /// why that left it out.
    pub explanation: String,
}

/// Where a module's items are named from outside it, and whether they can be.
#[derive(Clone, Debug)]
struct ModuleCtx {
    /// The path the generated code names the items by.
    path: String,
    /// When the module is private and not glob re-exported: the `mod` line that hides it (file,
    /// line, column) and the names its parent re-exports one by one.
    hidden: Option<Hidden>,
}

#[derive(Clone, Debug)]
struct Hidden {
    /// The parent module's path, through which re-exported items are named.
    parent: String,
    module: String,
    at: String,
    reexported: Vec<String>,
}

impl Scan {
    /// Scans the module whose root is `root` (a directory holding `mod.rs`, or a file) and
    /// whose path is `module`, following its `mod` declarations the way rustc does. Files that
    /// no `mod` line reaches are not part of the crate and are not read. Problems are appended
    /// to `diags`; the scan goes on past them.
    pub fn add_root(&mut self, root: &Path, module: &str, diags: &mut Vec<Diagnostic>) {
        let file = if root.is_dir() {
            let m = root.join("mod.rs");
            if !m.is_file() {
                diags.push(Diagnostic {
                    file: root.to_path_buf(),
                    line: 1,
                    column: 1,
                    message: format!("`{}` has no `mod.rs`", root.display()),
                    help: Some(
                        "pass the builder the module's root file (e.g. `src/components.rs`), or \
                         a directory with a `mod.rs` that declares its submodules with `mod`"
                            .into(),
                    ),
                });
                return;
            }
            m
        } else if root.is_file() {
            root.to_path_buf()
        } else {
            diags.push(Diagnostic {
                file: root.to_path_buf(),
                line: 1,
                column: 1,
                message: format!("`{}` does not exist", root.display()),
                help: Some(
                    "pass the build script a directory (or file) of declarations, relative to \
                     the package root, e.g. `Builder::new().scan(\"components\", \
                     \"crate::components\")`"
                        .into(),
                ),
            });
            return;
        };
        let ctx = ModuleCtx {
            path: module.to_string(),
            hidden: None,
        };
        // The root file's submodules live beside it (it is `mod.rs`, or a file included with
        // `#[path]`, which rustc treats the same way).
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        self.scan_file(&file, &dir, &ctx, diags);
    }

    fn scan_file(&mut self, file: &Path, dir: &Path, ctx: &ModuleCtx, diags: &mut Vec<Diagnostic>) {
        if self.read.iter().any(|p| p == file) {
            return;
        }
        self.read.push(file.to_path_buf());
        let source = match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                diags.push(io_error(file, &e));
                return;
            }
        };
        match syn::parse_file(&source) {
            Ok(parsed) => {
                // A `#[path]` on a file's own `mod` lines is relative to the file's directory
                // (rustc's rule, for `mod.rs` files and others alike).
                let here = file.parent().unwrap_or(Path::new("."));
                self.scan_items(&parsed.items, file, [dir, here], ctx, diags)
            }
            Err(e) => diags.extend(
                Diagnostic::from_syntax(file, &source, e)
                    .into_iter()
                    .map(|d| {
                        d.with_help("the file must be valid Rust; fix the syntax error first")
                    }),
            ),
        }
    }

    /// The context of child module `m` of a module in `ctx` whose items are `items`.
    fn child_ctx(m: &syn::ItemMod, items: &[Item], file: &Path, ctx: &ModuleCtx) -> ModuleCtx {
        let name = m.ident.to_string();
        let name = name.trim_start_matches("r#");
        let private = matches!(m.vis, syn::Visibility::Inherited);
        if !private {
            return ModuleCtx {
                path: format!("{}::{}", ctx.path, m.ident),
                hidden: ctx.hidden.clone(),
            };
        }
        let (glob, named) = reexports(items, name);
        if glob {
            // `pub use physics::*;`: the items are named through the parent.
            return ModuleCtx {
                path: ctx.path.clone(),
                hidden: ctx.hidden.clone(),
            };
        }
        ModuleCtx {
            path: format!("{}::{}", ctx.path, m.ident),
            hidden: Some(Hidden {
                parent: ctx.path.clone(),
                module: name.to_string(),
                at: location(file, m.mod_token.span),
                reexported: named,
            }),
        }
    }

    /// `dir` is where the items' submodules live, `path_dir` what their `#[path]`s are
    /// relative to.
    fn scan_items(
        &mut self,
        items: &[Item],
        file: &Path,
        [dir, path_dir]: [&Path; 2],
        ctx: &ModuleCtx,
        diags: &mut Vec<Diagnostic>,
    ) {
        for item in items {
            let attrs = match item {
                Item::Mod(m) => &m.attrs,
                Item::Struct(s) => &s.attrs,
                Item::Enum(e) => &e.attrs,
                Item::Fn(f) => &f.attrs,
                _ => continue,
            };
            let attrs = match cfg::expand(attrs, &cfg::process_env, &declares_meta) {
                Ok(attrs) => attrs,
                Err(undecided) => {
                    diags.push(undecided_cfg_attr(file, &undecided));
                    continue;
                }
            };
            match item {
                Item::Mod(m) if is_on(&attrs) => {
                    let child = Self::child_ctx(m, items, file, ctx);
                    let sub = m.ident.to_string();
                    let sub = sub.trim_start_matches("r#");
                    match &m.content {
                        Some((_, inner)) => {
                            // Inside an inline module both are its directory.
                            let inner_dir = dir.join(sub);
                            self.scan_items(inner, file, [&inner_dir, &inner_dir], &child, diags)
                        }
                        None => match module_file(m, &attrs, dir, path_dir) {
                            Ok((path, child_dir)) => {
                                self.scan_file(&path, &child_dir, &child, diags)
                            }
                            Err(tried) => diags.push(
                                Diagnostic::at(
                                    file,
                                    m.ident.span(),
                                    format!("no file for module `{sub}`: looked for {tried}"),
                                )
                                .with_help("create the file, or remove the `mod` line"),
                            ),
                        },
                    }
                }
                Item::Struct(s) if self.cfg_on(&attrs, &s.ident, file) => {
                    self.scan_type(attrs, || DeriveInput::from(s.clone()), file, ctx, diags)
                }
                Item::Enum(e) if self.cfg_on(&attrs, &e.ident, file) => {
                    self.scan_type(attrs, || DeriveInput::from(e.clone()), file, ctx, diags)
                }
                Item::Fn(f) if self.cfg_on(&attrs, &f.sig.ident, file) => {
                    let Some(attr) = attrs.iter().find(|a| last_ident_is(a.path(), "system"))
                    else {
                        continue;
                    };
                    let args = match &attr.meta {
                        syn::Meta::Path(_) => proc_macro2::TokenStream::new(),
                        syn::Meta::List(l) => l.tokens.clone(),
                        syn::Meta::NameValue(nv) => {
                            diags.push(Diagnostic::at(
                                file,
                                nv.eq_token.span,
                                "write `#[system]` or `#[system(with(A), without(B))]`",
                            ));
                            continue;
                        }
                    };
                    let Some(module) = reachable(ctx, &f.sig.ident, file, "system", diags) else {
                        continue;
                    };
                    let Some(f) = configured_params(f, file, diags) else {
                        continue;
                    };
                    match decl::parse_system(args, &f) {
                        Ok(decl) => self.systems.push(found(decl, &module, file, &[])),
                        Err(e) => diags.extend(Diagnostic::from_syn(file, e)),
                    }
                }
                _ => {}
            }
        }
    }

    /// [`is_on`], recording a skipped declaration for the errors that would name it.
    fn cfg_on(&mut self, attrs: &[Attribute], ident: &syn::Ident, file: &Path) -> bool {
        let (cfg, why) = match cfg::evaluate(attrs, &cfg::process_env) {
            Cfg::On => return true,
            Cfg::Off(c) => (c, "which is off in this build"),
            Cfg::Unknown(c) => (
                c,
                "which a build script cannot evaluate (it is skipped); declare it without that \
                 `#[cfg]`",
            ),
        };
        if declares(attrs) {
            let name = ident.to_string().trim_start_matches("r#").to_string();
            let at = location(file, ident.span());
            let explanation = format!("`{name}` is declared at {at} under `#[{cfg}]`, {why}");
            self.skipped.push(Skipped { name, explanation });
        }
        false
    }

    /// A type's declarations; `attrs` are its attributes with their `cfg_attr`s expanded.
    fn scan_type(
        &mut self,
        attrs: Vec<Attribute>,
        input: impl FnOnce() -> DeriveInput,
        file: &Path,
        ctx: &ModuleCtx,
        diags: &mut Vec<Diagnostic>,
    ) {
        let derives = derived(&attrs);
        if !derives.iter().any(|d| DERIVES.contains(&d.as_str())) {
            return;
        }
        // What the derives see: rustc expands `cfg_attr`s and drops the fields whose `#[cfg]`
        // fails before it runs a derive.
        let mut input = input();
        input.attrs = attrs;
        if !configure_fields(
            &mut input,
            derives.iter().any(|d| d == "Signature"),
            file,
            diags,
        ) {
            return;
        }
        let all = &derives;
        for d in derives.iter() {
            let kind = match d.as_str() {
                "Component" => "component",
                "Signature" => "signature",
                "Resource" => "resource",
                "Event" => "event",
                "SoaManager" => {
                    // Only one declared as a level component is named by the
                    // generated code (its registration); the derive checks the rest.
                    match decl::parse_soa(&input) {
                        Ok(soa) if soa.level.is_some() => {
                            if let Some(module) =
                                reachable(ctx, &input.ident, file, "level struct", diags)
                            {
                                self.soa_levels.push(found(soa, &module, file, all));
                            }
                        }
                        Ok(_) => {}
                        Err(e) => diags.extend(Diagnostic::from_syn(file, e)),
                    }
                    continue;
                }
                _ => continue,
            };
            let Some(module) = reachable(ctx, &input.ident, file, kind, diags) else {
                continue;
            };
            let module = module.as_str();
            let result = match d.as_str() {
                "Component" => decl::parse_component(&input)
                    .map(|c| self.components.push(found(c, module, file, all))),
                "Signature" => decl::parse_signature(&input)
                    .map(|s| self.signatures.push(found(s, module, file, all))),
                "Resource" => decl::parse_resource(&input)
                    .map(|r| self.resources.push(found(r, module, file, all))),
                "Event" => {
                    decl::parse_event(&input).map(|e| self.events.push(found(e, module, file, all)))
                }
                _ => Ok(()),
            };
            if let Err(e) = result {
                diags.extend(Diagnostic::from_syn(file, e));
            }
        }
    }
}

/// The module path through which the generated world can name `ident`, declared in a module
/// in `ctx`; if there is none, reports why at the declaration and returns `None`.
fn reachable(
    ctx: &ModuleCtx,
    ident: &syn::Ident,
    file: &Path,
    kind: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some(hidden) = &ctx.hidden else {
        return Some(ctx.path.clone());
    };
    let name = ident.to_string();
    if hidden.reexported.contains(&name) {
        return Some(hidden.parent.clone());
    }
    diags.push(
        Diagnostic::at(
            file,
            ident.span(),
            format!(
                "{kind} `{name}` is in the private module `{}` (declared at {}), which the \
                 generated world cannot name",
                hidden.module, hidden.at
            ),
        )
        .with_help(format!(
            "make the module visible (`pub mod {0};` or `pub(crate) mod {0};`), or re-export \
             its items from the parent with `pub use {0}::*;`",
            hidden.module
        )),
    );
    None
}

/// `pub use <module>::*;` (or `self::<module>::*`) among `items`, and the names re-exported
/// one by one with `pub use <module>::{A, B}`.
fn reexports(items: &[Item], module: &str) -> (bool, Vec<String>) {
    let mut glob = false;
    let mut named = Vec::new();
    for item in items {
        let Item::Use(u) = item else { continue };
        let on = cfg::expand(&u.attrs, &cfg::process_env, &|_| false).is_ok_and(|a| is_on(&a));
        if matches!(u.vis, syn::Visibility::Inherited) || !on {
            continue;
        }
        collect_use(&u.tree, module, false, &mut glob, &mut named);
    }
    (glob, named)
}

fn collect_use(
    tree: &syn::UseTree,
    module: &str,
    inside: bool,
    glob: &mut bool,
    named: &mut Vec<String>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            let seg = p.ident.to_string();
            if !inside && seg == "self" {
                collect_use(&p.tree, module, false, glob, named);
            } else if !inside && seg.trim_start_matches("r#") == module {
                collect_use(&p.tree, module, true, glob, named);
            }
        }
        syn::UseTree::Glob(_) if inside => *glob = true,
        syn::UseTree::Name(n) if inside => named.push(n.ident.to_string()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use(t, module, inside, glob, named);
            }
        }
        _ => {}
    }
}

/// The file of `mod m;` declared in a file whose submodules live in `dir` and whose
/// `#[path]`s are relative to `path_dir`, and the directory of its own submodules; or the
/// candidates that were tried.
fn module_file(
    m: &syn::ItemMod,
    attrs: &[Attribute],
    dir: &Path,
    path_dir: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let name = m.ident.to_string();
    let name = name.trim_start_matches("r#");
    if let Some(path) = path_attr(attrs) {
        let file = path_dir.join(path);
        let child_dir = file.parent().unwrap_or(dir).to_path_buf();
        return if file.is_file() {
            Ok((file, child_dir))
        } else {
            Err(format!("`{}` (its #[path])", file.display()))
        };
    }
    let flat = dir.join(format!("{name}.rs"));
    let nested = dir.join(name).join("mod.rs");
    if flat.is_file() {
        Ok((flat, dir.join(name)))
    } else if nested.is_file() {
        Ok((nested, dir.join(name)))
    } else {
        Err(format!("`{}` and `{}`", flat.display(), nested.display()))
    }
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.path().is_ident("path"))
        .and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

fn found<T>(decl: T, module: &str, file: &Path, derives: &[String]) -> Found<T> {
    Found {
        decl,
        module: module.to_string(),
        file: file.to_path_buf(),
        derives: derives.to_vec(),
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> Diagnostic {
    Diagnostic {
        file: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!("cannot read `{}`: {e}", path.display()),
        help: None,
    }
}

/// Does rustc compile an item with these attributes (as far as the build script can tell,
/// see [`crate::cfg`])? Items whose `#[cfg]` is off or undecidable are skipped. `attrs` have
/// their `cfg_attr`s expanded ([`cfg::expand`]).
fn is_on(attrs: &[Attribute]) -> bool {
    cfg::evaluate(attrs, &cfg::process_env) == Cfg::On
}

/// Does attribute `meta` decide what a declaration is (so a `cfg_attr` that wraps it must be
/// decided)? The declaration attributes, a derive of a declaration kind, and a module's `path`.
fn declares_meta(meta: &syn::Meta) -> bool {
    let path = meta.path();
    if path.is_ident("derive") {
        let mut ours = false;
        let _ = meta.require_list().map(|list| {
            list.parse_nested_meta(|m| {
                ours |= m
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| DERIVES.contains(&s.ident.to_string().as_str()));
                Ok(())
            })
        });
        return ours;
    }
    path.is_ident("path")
        || ["component", "signature", "system", "soa"]
            .iter()
            .any(|name| last_ident_is(path, name))
}

/// The error for a `cfg_attr` the build script cannot decide that wraps a declaration
/// attribute.
fn undecided_cfg_attr(file: &Path, u: &cfg::Undecided) -> Diagnostic {
    Diagnostic::at(
        file,
        u.span,
        format!(
            "`#[cfg_attr({}, {})]`: the build script cannot tell whether `{}` holds, so it cannot \
             tell whether `{}` applies",
            u.predicate, u.attribute, u.predicate, u.attribute
        ),
    )
    .with_help(format!(
        "write `#[{}]` without `cfg_attr`, or under a condition cargo tells build scripts: a \
         feature (`feature = \"name\"`), the target (`unix`, `target_os = \"linux\"`, ...) or \
         `debug_assertions`",
        u.attribute
    ))
}

/// The error for a field or parameter under a `#[cfg]` the build script cannot decide.
fn undecided_cfg(file: &Path, span: proc_macro2::Span, what: &str, cfg: &str) -> Diagnostic {
    Diagnostic::at(
        file,
        span,
        format!(
            "{what} is under `#[{cfg}]`, which the build script cannot evaluate, so it cannot \
             tell whether rustc keeps it"
        ),
    )
    .with_help(
        "write it without that `#[cfg]`, or under a condition cargo tells build scripts: a \
         feature (`feature = \"name\"`), the target (`unix`, `target_os = \"linux\"`, ...) or \
         `debug_assertions`",
    )
}

/// The verdict on the `#[cfg]`s of a field's or parameter's attributes, `cfg_attr`s expanded.
fn cfg_of(attrs: &[Attribute], file: &Path, diags: &mut Vec<Diagnostic>) -> Option<Cfg> {
    match cfg::expand(attrs, &cfg::process_env, &|_| false) {
        Ok(attrs) => Some(cfg::evaluate(&attrs, &cfg::process_env)),
        Err(u) => {
            diags.push(undecided_cfg_attr(file, &u));
            None
        }
    }
}

/// Drops the fields of `input` that rustc drops for their `#[cfg]`, as it does before running a
/// derive. A field under a `#[cfg]` the build script cannot decide is an error in a signature
/// (whose fields the scanner reads), and is kept elsewhere. False when there was an error.
fn configure_fields(
    input: &mut DeriveInput,
    signature: bool,
    file: &Path,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let mut ok = true;
    let mut keep = |field: &syn::Field| match cfg_of(&field.attrs, file, diags) {
        Some(Cfg::On) => true,
        Some(Cfg::Off(_)) => false,
        Some(Cfg::Unknown(cfg)) => {
            if signature {
                let name = field
                    .ident
                    .as_ref()
                    .map_or("a".to_string(), |i| format!("`{i}`"));
                let what = format!("field {name} of signature `{}`", input.ident);
                diags.push(undecided_cfg(file, field.ty.span(), &what, &cfg));
                ok = false;
            }
            true
        }
        None => {
            ok = false;
            true
        }
    };
    let fields: Vec<&mut syn::Fields> = match &mut input.data {
        syn::Data::Struct(s) => vec![&mut s.fields],
        syn::Data::Enum(e) => e.variants.iter_mut().map(|v| &mut v.fields).collect(),
        syn::Data::Union(_) => Vec::new(),
    };
    for f in fields {
        let list = match f {
            syn::Fields::Named(n) => &mut n.named,
            syn::Fields::Unnamed(u) => &mut u.unnamed,
            syn::Fields::Unit => continue,
        };
        if list.iter().all(|field| field.attrs.is_empty()) {
            continue;
        }
        *list = std::mem::take(list)
            .into_iter()
            .filter(|field| keep(field))
            .collect();
    }
    ok
}

/// The function with the parameters rustc keeps for their `#[cfg]`s (a copy only when one has
/// an attribute); `None` after an error.
fn configured_params<'f>(
    f: &'f syn::ItemFn,
    file: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<std::borrow::Cow<'f, syn::ItemFn>> {
    let has_attrs = |arg: &syn::FnArg| match arg {
        syn::FnArg::Typed(p) => !p.attrs.is_empty(),
        syn::FnArg::Receiver(r) => !r.attrs.is_empty(),
    };
    if !f.sig.inputs.iter().any(has_attrs) {
        return Some(std::borrow::Cow::Borrowed(f));
    }
    let mut ok = true;
    let mut f = f.clone();
    let system = f.sig.ident.to_string();
    let inputs = std::mem::take(&mut f.sig.inputs);
    f.sig.inputs = inputs
        .into_iter()
        .filter(|arg| {
            let (attrs, span) = match arg {
                syn::FnArg::Typed(p) => (&p.attrs, p.ty.span()),
                syn::FnArg::Receiver(r) => (&r.attrs, r.self_token.span),
            };
            match cfg_of(attrs, file, diags) {
                Some(Cfg::On) => true,
                Some(Cfg::Off(_)) => false,
                Some(Cfg::Unknown(cfg)) => {
                    let what = format!("a parameter of system `{system}`");
                    diags.push(undecided_cfg(file, span, &what, &cfg));
                    ok = false;
                    true
                }
                None => {
                    ok = false;
                    true
                }
            }
        })
        .collect();
    ok.then_some(std::borrow::Cow::Owned(f))
}

/// The derives whose types the scanner reads.
const DERIVES: [&str; 5] = ["Component", "Signature", "Resource", "Event", "SoaManager"];

/// Is a declaration kind this scanner collects (a derive it reads, or `#[system]`)?
fn declares(attrs: &[Attribute]) -> bool {
    derived(attrs).iter().any(|d| DERIVES.contains(&d.as_str()))
        || attrs.iter().any(|a| last_ident_is(a.path(), "system"))
}

fn last_ident_is(path: &syn::Path, name: &str) -> bool {
    path.segments.last().is_some_and(|s| s.ident == name)
}

/// Names in `#[derive(..)]` attributes, by their last path segment.
fn derived(attrs: &[Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = a.parse_nested_meta(|meta| {
            if let Some(seg) = meta.path.segments.last() {
                out.push(seg.ident.to_string());
            }
            Ok(())
        });
    }
    out
}
