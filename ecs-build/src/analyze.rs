//! Whole-crate analysis: resolves names, assigns component ids and bits, builds signature and
//! system masks, and matches systems to signatures. The output, [`Analysis`], is everything the
//! generator needs; every cross-declaration error is reported here with a location and a fix.

use crate::decl::{ComponentDecl, LayoutDecl, ParamKind, ResourceDecl, SignatureDecl, SystemDecl};
use crate::diagnostic::{closest, crate_location, location, Diagnostic};
use crate::rules::{matches, Borrows};
use crate::scan::{Found, Scan};
use proc_macro2::{Ident, Span};
use std::collections::HashMap;
use std::path::Path;
use syn::ext::IdentExt;

/// A component with its id (its index in [`Analysis::components`]) and bit `1 << id`.
#[derive(Clone, Debug)]
pub struct Component {
    /// Type name.
    pub ident: Ident,
    /// Full path, e.g. `crate::components::Position`.
    pub path: syn::Path,
    /// `#[component(cold)]`.
    pub cold: bool,
    /// `#[component(sparse)]`: in a sparse set, never in a store.
    pub sparse: bool,
    /// `#[component(level = "…")]`: its level registration.
    pub level: Option<crate::decl::LevelOpt>,
    /// `#[component(no_rollback)]`: world states do not hold its values.
    pub no_rollback: bool,
    /// What its derives say (for world states).
    pub traits: Traits,
}

/// What a declared type's derives say about it, for world states: `Copy` types are copied as
/// bytes, `Pod`/`NoUninit` ones hashed as bytes, `Hash` ones through their impl.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traits {
    /// `#[derive(Copy)]`.
    pub copy: bool,
    /// `#[derive(Pod)]` or `#[derive(NoUninit)]` (bytemuck): every byte is initialised data.
    pub bytes: bool,
    /// `#[derive(Hash)]`.
    pub hash: bool,
}

impl Traits {
    /// The traits named by `derives` (last path segments).
    pub fn of(derives: &[String]) -> Self {
        let has = |name: &str| derives.iter().any(|d| d == name);
        Traits {
            copy: has("Copy"),
            bytes: has("Pod") || has("NoUninit"),
            hash: has("Hash"),
        }
    }
}

/// A signature with its store id (its index in [`Analysis::signatures`]).
#[derive(Clone, Debug)]
pub struct Signature {
    /// Struct name.
    pub ident: Ident,
    /// Full path of the struct.
    pub path: syn::Path,
    /// Storage layout.
    pub layout: LayoutDecl,
    /// (field name, component id) in declaration order.
    pub fields: Vec<(Ident, usize)>,
    /// Its components.
    pub mask: Bits,
}

impl Signature {
    /// Does this signature hold component `id`?
    pub fn has(&self, id: usize) -> bool {
        self.mask.contains(id)
    }
}

/// A resource, stored in a field of the generated `Resources` struct.
#[derive(Clone, Debug)]
pub struct Resource {
    /// Type name.
    pub ident: Ident,
    /// Full path.
    pub path: syn::Path,
    /// What its derives say (for world states).
    pub traits: Traits,
}

/// A `#[derive(Event)]` type.
#[derive(Clone, Debug)]
pub struct EventType {
    /// Its name.
    pub ident: Ident,
    /// Its path as the generated code names it.
    pub path: syn::Path,
    /// What its derives say (for world states).
    pub traits: Traits,
}

/// A resolved system parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A component by id.
    Component {
        /// Component id.
        id: usize,
        /// `&mut`.
        mutable: bool,
        /// `Option<..>`.
        optional: bool,
    },
    /// A resource by index.
    Resource {
        /// Resource index.
        id: usize,
        /// `&mut`.
        mutable: bool,
    },
    /// The row's entity.
    Entity,
    /// Deferred structural changes.
    Commands,
    /// `&EventReader<E>`: event type `event`, read through the world's cursor `reader`.
    Events {
        /// Event type index.
        event: usize,
        /// The reader's index among every reader of the world (its cursor).
        reader: usize,
    },
}

/// A set of small integers (component or resource ids), of any size: a world may declare any
/// number of either. The words are those of `sigecs_rules` (bit `i % 64` of word `i / 64`), with
/// no zero word at the end, so equal sets are equal values (and hash alike).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// The set of `ids`.
    #[cfg(test)]
    pub fn of(ids: impl IntoIterator<Item = usize>) -> Bits {
        let mut b = Bits::default();
        for i in ids {
            b.insert(i);
        }
        b
    }

    /// Removes `i`.
    pub fn remove(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// Does the set hold `i`?
    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// The elements, ascending.
    pub fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| k * 64 + b)
        })
    }

    /// The words, for the rules shared with the runtime.
    pub fn words(&self) -> &[u64] {
        &self.0
    }

    /// Adds `i`.
    pub fn insert(&mut self, i: usize) {
        let (word, bit) = (i / 64, i % 64);
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << bit;
    }

    /// Do the sets share an element?
    pub fn intersects(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    /// The union.
    pub fn union(&self, other: &Bits) -> Bits {
        let n = self.0.len().max(other.0.len());
        Bits(
            (0..n)
                .map(|i| self.0.get(i).unwrap_or(&0) | other.0.get(i).unwrap_or(&0))
                .collect(),
        )
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

/// What a system reads and writes: bit `i` of a component mask is component `i`; resources
/// are a [`Bits`] set of resource indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Components read (`&C`, `Option<&C>`).
    pub reads: Bits,
    /// Components written (`&mut C`, `Option<&mut C>`).
    pub writes: Bits,
    /// Resources read (`&R`).
    pub res_reads: Bits,
    /// Resources written (`&mut R`).
    pub res_writes: Bits,
    /// Takes `&mut Commands`: its structural changes apply at the end of its stage.
    pub commands: bool,
    /// A frame-level system (no component or entity parameter): it runs once per call, in a
    /// stage of its own.
    pub frame: bool,
    /// A filtered system (`changed(..)`, `added(..)`): it visits only some chunks of its
    /// stores, so no other system can share its pass.
    pub filtered: bool,
    /// A system whose components are all sparse walks its lead component's set, not the
    /// stores ([`System::lead`]), so no other system can share its pass.
    pub walks: bool,
}

impl Access {
    /// Two systems conflict when one writes a component or resource the other reads or writes.
    pub fn conflicts(&self, other: &Access) -> bool {
        let r1 = self.res_reads.union(&self.res_writes);
        let r2 = other.res_reads.union(&other.res_writes);
        self.borrows().conflicts(&other.borrows())
            || self.res_writes.intersects(&r2)
            || other.res_writes.intersects(&r1)
    }

    /// The component borrows, for the rule shared with the runtime's queries.
    fn borrows(&self) -> Borrows<&[u64]> {
        Borrows {
            reads: self.reads.words(),
            writes: self.writes.words(),
        }
    }

    /// True when the system writes a resource: it runs alone in its stage, on one thread.
    pub fn exclusive(&self) -> bool {
        !self.res_writes.is_empty()
    }

    /// True when no other system can share its stage: it writes a resource, or it runs once
    /// per call (a frame-level system is not a pass over rows that others could join).
    pub fn alone(&self) -> bool {
        self.exclusive() || self.frame || self.filtered || self.walks
    }

    /// The access of a list of parameters.
    pub fn of(params: &[Param]) -> Access {
        let mut a = Access::default();
        for p in params {
            match *p {
                Param::Component { id, mutable, .. } => {
                    if mutable {
                        a.writes.insert(id)
                    } else {
                        a.reads.insert(id)
                    }
                }
                Param::Resource { id, mutable } => {
                    if mutable {
                        a.res_writes.insert(id)
                    } else {
                        a.res_reads.insert(id)
                    }
                }
                Param::Commands => a.commands = true,
                Param::Entity | Param::Events { .. } => {}
            }
        }
        a.frame = !params
            .iter()
            .any(|p| matches!(p, Param::Entity | Param::Component { .. }));
        a
    }
}

/// Places systems into stages so that running the stages in order, each as one fused pass with
/// its commands applied at its end, gives what running the systems one by one in declaration
/// order gives. Each system, in declaration order, goes into the first allowed stage at or
/// after its lower bound:
///
/// - after every earlier system it conflicts with, and after every earlier system with
///   `Commands` (whose changes it must see);
/// - a system with `Commands` no earlier than the last stage of any earlier system (its
///   changes apply at the end of its stage, which must come after every earlier system ran);
/// - a system that writes a resource runs alone in a stage of its own (it runs on one
///   thread), and so does a frame-level system (it runs once, not over rows); no other
///   system joins such a stage.
///
/// Returns the stage index of each system. (The builder then fuses consecutive stages whose
/// systems take only their rows: `fusion::fuse_stages`.)
pub fn place_in_stages(access: &[Access]) -> Vec<usize> {
    let mut stage_of: Vec<usize> = Vec::with_capacity(access.len());
    // Per stage: does it hold an exclusive (resource-writing) system; is it non-empty.
    let mut exclusive: Vec<bool> = Vec::new();
    for (i, a) in access.iter().enumerate() {
        let mut lower = (0..i)
            .filter(|&j| access[j].conflicts(a) || access[j].commands)
            .map(|j| stage_of[j] + 1)
            .max()
            .unwrap_or(0);
        if a.commands {
            lower = lower.max(stage_of.iter().copied().max().unwrap_or(0));
        }
        let stage = if a.alone() {
            lower.max(exclusive.len())
        } else {
            (lower..)
                .find(|&s| !exclusive.get(s).copied().unwrap_or(false))
                .expect("a free stage")
        };
        if exclusive.len() <= stage {
            exclusive.resize(stage + 1, false);
        }
        exclusive[stage] |= a.alone();
        stage_of.push(stage);
    }
    stage_of
}

/// The sparse component whose set a system walks ([`System::lead`]): the first sparse
/// component it requires, when every component it takes is sparse and it has no table filter
/// (`with`, `without`, `changed`, `added`), so the entities it visits are exactly that set's. (A
/// system that also excludes that component visits nothing; its store pass says so.)
fn lead_of(
    params: &[Param],
    components: &[Component],
    filters: (&Bits, &Bits, &Bits),
    sparse_without: &[usize],
) -> Option<usize> {
    let (required, excluded, changed) = filters;
    if !required.is_empty() || !excluded.is_empty() || !changed.is_empty() {
        return None;
    }
    let mut lead = None;
    for p in params {
        if let Param::Component { id, optional, .. } = *p {
            if !components[id].sparse {
                return None;
            }
            if !optional && lead.is_none() {
                lead = Some(id);
            }
        }
    }
    lead.filter(|id| !sparse_without.contains(id))
}

/// A system with its masks and the signatures it runs over.
#[derive(Clone, Debug)]
pub struct System {
    /// Function name.
    pub ident: Ident,
    /// Full path of the function.
    pub path: syn::Path,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Table components an entity must have (its stores hold them).
    pub required: Bits,
    /// Table components an entity must not have.
    pub excluded: Bits,
    /// Sparse components an entity must have: its parameters (not `Option`) and `with(..)`,
    /// checked row by row.
    pub sparse_with: Vec<usize>,
    /// Sparse components of `without(..)`: an entity with one is skipped, row by row.
    pub sparse_without: Vec<usize>,
    /// Ids of the matching signatures, ascending.
    pub matches: Vec<usize>,
    /// What it reads and writes.
    pub access: Access,
    /// `#[system(min_chunk = N)]`.
    pub min_chunk: Option<usize>,
    /// It may spawn through its `Commands` (`sigecs_decl::may_spawn`): in a deterministic
    /// world its pass runs on one thread.
    pub spawns: bool,
    /// Its stage in the schedule.
    pub stage: usize,
    /// Where it is declared: `file:line:column`.
    pub location: String,
    /// The order constraints it declares, as written: `after(a), before(b)`, or empty.
    pub constraints: String,
    /// `changed(..)`: component ids whose changes it keeps to.
    pub changed: Vec<usize>,
    /// `added(..)`: component ids whose adds it keeps to.
    pub added: Vec<usize>,
    /// For a system whose components are all sparse, with no table filter: the first sparse
    /// component it requires. Its pass walks that component's packed values (every entity
    /// with it, in the set's order) instead of every store, looking the others up.
    pub lead: Option<usize>,
}

impl System {
    /// True when the system writes a resource and so runs sequentially.
    pub fn sequential(&self) -> bool {
        self.access.exclusive()
    }

    /// True for a frame-level system: no component or entity parameter, run once per call.
    pub fn frame(&self) -> bool {
        self.access.frame
    }

    /// The indices of its event readers' cursors.
    pub fn readers(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.params.iter().filter_map(|p| match *p {
            Param::Events { event, reader } => Some((event, reader)),
            _ => None,
        })
    }
}

/// What the build script decided about a world: its components with their ids, its signatures
/// with their stores, its systems in run order with their stages, and the warnings of an open
/// world. The generated world is made from it; [`crate::Builder::analyze`] returns it so that
/// tools and tests can read these decisions (through its methods) without generating.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Components sorted by name; index = id.
    pub(crate) components: Vec<Component>,
    /// Signatures sorted by name; index = store id.
    pub(crate) signatures: Vec<Signature>,
    /// Resources sorted by name.
    pub(crate) resources: Vec<Resource>,
    /// Event types sorted by name; index = id.
    pub(crate) events: Vec<EventType>,
    /// Number of event readers (`&EventReader<E>` parameters) of all systems.
    pub(crate) readers: usize,
    /// Systems in the order `run_all` runs them: declaration order (depth-first at each `mod`
    /// line, as rustc reads the modules), rearranged only as `after(..)`/`before(..)` require.
    pub(crate) systems: Vec<System>,
    /// System indices per stage, in execution order; a stage's systems in run order.
    pub(crate) stages: Vec<Vec<usize>>,
    /// Per stage, the groups of systems it runs: one when its systems do not conflict, else
    /// the stages [`fusion::fuse_stages`] fused into it (each row goes through them in order).
    pub(crate) groups: Vec<Vec<Vec<usize>>>,
    /// Structs of `#[derive(SoaManager)]` managers that levels may hold (kept outside
    /// the stores), sorted by name.
    pub(crate) kept_outside: Vec<KeptOutside>,
    /// A strict world: a component set no signature declares is an error, at run time, and a
    /// system that matches no declared signature is one at build time.
    pub(crate) strict: bool,
    /// What the build script reports without failing: in an open world, each system that
    /// matches no declared signature (it runs over dynamic stores only).
    pub(crate) warnings: Vec<Diagnostic>,
    /// The world saves, loads and hashes its state (`Builder::rollback`).
    pub(crate) rollback: bool,
}

/// A `#[derive(SoaManager)]` struct declared with `#[soa(level = "…")]`.
#[derive(Clone, Debug)]
pub struct KeptOutside {
    /// The struct's path as the generated code names it.
    pub path: syn::Path,
    /// Its level options.
    pub level: crate::decl::LevelOpt,
}

impl Analysis {
    /// 64-bit words of the world's component-set type (`sigecs::ComponentBits<W>`): as
    /// many as its components need, at least one.
    pub(crate) fn set_words(&self) -> usize {
        self.components.len().div_ceil(64).max(1)
    }
}

/// Every declared move: (from store, component, to store) for each pair of signatures whose
/// sets differ by one component, both ways, sorted. Found from each signature's sets one
/// component smaller (as many lookups as the signatures' fields), not by trying every
/// component on every signature.
pub fn transitions(analysis: &Analysis) -> Vec<(usize, usize, usize)> {
    let by_mask: HashMap<&Bits, usize> = analysis
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.mask, i))
        .collect();
    let mut out = Vec::new();
    for (big, sig) in analysis.signatures.iter().enumerate() {
        for &(_, c) in &sig.fields {
            let mut smaller = sig.mask.clone();
            smaller.remove(c);
            if let Some(&small) = by_mask.get(&smaller) {
                out.push((small, c, big));
                out.push((big, c, small));
            }
        }
    }
    out.sort_unstable();
    out
}

/// A declared name as users write it in messages and tables: without `r#`.
pub(crate) fn name(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// A component's constant in the world's `ComponentSet`: its name in SCREAMING_SNAKE_CASE
/// (`HTTPServer` → `HTTP_SERVER`), which is also the set's text (`POSITION | VELOCITY`).
pub(crate) fn set_constant(ident: &Ident) -> String {
    crate::rules::constant_case(&name(ident))
}

/// Refuses a component whose `ComponentSet` constant another component has already
/// (`HttpServer` and `HTTPServer` are both `HTTP_SERVER`), at the second declaration in scan
/// order. A name declared twice is left to [`unique_by_name`]'s error.
fn refuse_colliding_set_constants(comps: &[Found<ComponentDecl>], diags: &mut Vec<Diagnostic>) {
    let mut constants: HashMap<String, (String, String)> = HashMap::new();
    for f in comps {
        let (ident, name) = (&f.decl.ident, name(&f.decl.ident));
        let constant = set_constant(ident);
        match constants.get(&constant) {
            Some((other, _)) if *other == name => {}
            Some((other, at)) => diags.push(
                diag(f, ident.span(), format!(
                    "components `{other}` (at {at}) and `{name}` have the same constant in the world's component set, `ComponentSet::{constant}`"
                ))
                .with_help("a component's constant is its name in SCREAMING_SNAKE_CASE, and names that differ only in case or word breaks collide; rename one"),
            ),
            None => {
                constants.insert(constant, (name, location(&f.file, ident.span())));
            }
        }
    }
}

/// The path of `ident` in `module` as the generated code names it. The generated items live in
/// a module one level below the `include!`, so a path relative to the including module
/// (`self::…`, `super::…`, or a bare module name) gains one `super::`.
fn full_path(module: &str, ident: &Ident) -> syn::Path {
    let first = module.split("::").next().unwrap_or_default();
    let module = match first {
        "crate" => module.to_string(),
        "self" => format!("super{}", &module[4..]),
        _ if module.starts_with("::") => module.to_string(),
        _ => format!("super::{module}"),
    };
    syn::parse_str(&format!("{module}::{ident}")).unwrap_or_else(|_| ident.clone().into())
}

/// A system's order constraints as written in its `#[system(..)]`: `after(a, b), before(c)`.
fn constraints_text(d: &SystemDecl) -> String {
    let list = |kind: &str, names: &[Ident]| {
        (!names.is_empty()).then(|| {
            let names: Vec<String> = names.iter().map(|n| n.unraw().to_string()).collect();
            format!("{kind}({})", names.join(", "))
        })
    };
    [list("after", &d.after), list("before", &d.before)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}

/// `changed(S)` or `added(S)` (`what`) of a sparse component: change filters of systems work
/// per chunk of a store's rows, and a sparse component is in no store.
fn sparse_changed<T>(f: &Found<T>, ty: &Ident, system: &Ident, what: &str) -> Diagnostic {
    let filter = if what == "added" { "Added" } else { "Changed" };
    diag(
        f,
        ty.span(),
        format!("`{what}({ty})` of system `{system}`: `{ty}` is a sparse component, and systems filter changes by chunks of store rows"),
    )
    .with_help(format!(
        "read what changed with a query (`world.query_changed::<&{ty}, {filter}<{ty}>>(tick)`), which checks each value; or drop `sparse` from `{ty}`'s `#[component(..)]`"
    ))
}

fn diag<T>(f: &Found<T>, span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::at(&f.file, span, msg)
}

/// Sorts by name and reports every name declared twice (among `all_names`, which spans kinds).
fn unique_by_name<T: Clone>(
    items: &[Found<T>],
    ident: impl Fn(&T) -> &Ident,
    kind: &str,
    taken: &mut HashMap<String, (String, String)>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Found<T>> {
    let mut kept = Vec::new();
    for f in items {
        let id = ident(&f.decl);
        let name = id.unraw().to_string();
        if let Some((other_kind, at)) = taken.get(&name) {
            diags.push(
                diag(f, id.span(), format!("`{name}` is declared twice: as a {other_kind} at {at} and as a {kind} here"))
                    .with_help("names of components, signatures and resources must be unique across the scanned files, because the generated world names them without their module; rename one"),
            );
        } else {
            taken.insert(name, (kind.to_string(), location(&f.file, id.span())));
            kept.push(f.clone());
        }
    }
    kept.sort_by_key(|f| ident(&f.decl).to_string());
    kept
}

/// Refuses a component, signature or resource named like a type the generated file exports
/// (`pub use self::sigecs_world::*;`): next to the `include!`, a user's `use components::*;`
/// (the quick start's layout) makes the two globs ambiguous, and every use of the name fails
/// with E0659 in the user's code. `World`, `Model`, `Resources`, `ComponentSet`, and a
/// `rows` signature's `<Name>Row` and `<Name>Cold`.
fn refuse_exported_names(
    comps: &[Found<ComponentDecl>],
    sigs: &[Found<SignatureDecl>],
    ress: &[Found<ResourceDecl>],
    diags: &mut Vec<Diagnostic>,
) {
    let mut exported: Vec<(String, String)> = [
        ("World", "the world type"),
        ("Model", "the world's model type"),
        ("Resources", "the struct of the world's resources"),
        ("ComponentSet", "the world's component-set type"),
    ]
    .iter()
    .map(|(n, what)| (n.to_string(), what.to_string()))
    .collect();
    for sig in sigs.iter().filter(|s| s.decl.layout == LayoutDecl::Rows) {
        let name = sig.decl.ident.to_string();
        let name = name.trim_start_matches("r#");
        exported.push((
            format!("{name}Row"),
            format!("the hot row of `rows` signature `{name}`"),
        ));
        exported.push((
            format!("{name}Cold"),
            format!("the cold row of `rows` signature `{name}`"),
        ));
    }
    let mut check = |f_file: &Path, ident: &Ident, kind: &str| {
        let name = ident.to_string();
        let name = name.trim_start_matches("r#");
        if let Some((_, what)) = exported.iter().find(|(n, _)| n == name) {
            diags.push(
                Diagnostic::at(f_file, ident.span(), format!(
                    "{kind} `{name}` has the name of a type the generated world exports ({what}); beside `include!` and `use components::*;` the two names are ambiguous"
                ))
                .with_help(format!("rename the {kind} (for example `{name}Data`)")),
            );
        }
    };
    for f in comps {
        check(&f.file, &f.decl.ident, "component");
    }
    for f in sigs {
        check(&f.file, &f.decl.ident, "signature");
    }
    for f in ress {
        check(&f.file, &f.decl.ident, "resource");
    }
}

/// The declared names declarations refer to, by name without `r#`, and what an error about a
/// name that is none of them says.
struct Names<'a> {
    scan: &'a Scan,
    components: &'a [Component],
    component: HashMap<String, usize>,
    resource: HashMap<String, usize>,
    event: HashMap<String, usize>,
}

impl<'a> Names<'a> {
    fn new(
        scan: &'a Scan,
        components: &'a [Component],
        resources: &[Resource],
        events: &[EventType],
    ) -> Self {
        let index = |idents: Vec<&Ident>| -> HashMap<String, usize> {
            idents
                .into_iter()
                .enumerate()
                .map(|(i, ident)| (ident.unraw().to_string(), i))
                .collect()
        };
        Names {
            scan,
            components,
            component: index(components.iter().map(|c| &c.ident).collect()),
            resource: index(resources.iter().map(|r| &r.ident).collect()),
            event: index(events.iter().map(|e| &e.ident).collect()),
        }
    }

    /// The help for `ty`, which names no component: why a declaration of it was skipped, or
    /// the closest component name.
    fn unknown_component(&self, ty: &Ident) -> String {
        let bare = ty.unraw().to_string();
        if let Some(skipped) = self.scan.skipped.iter().find(|k| k.name == bare) {
            return skipped.explanation.clone();
        }
        let names: Vec<String> = self
            .components
            .iter()
            .map(|c| c.ident.to_string())
            .collect();
        let hint = match closest(&ty.to_string(), names.iter().map(String::as_str)) {
            Some(c) => format!("did you mean `{c}`? "),
            None => String::new(),
        };
        format!(
            "{hint}declare `{ty}` with `#[derive(Component)]` in a scanned file, or fix the name (the build script reads the declarations as written: not ones a macro expands to)"
        )
    }
}

/// Analyses the scanned declarations, or returns every error found. `strict`: see
/// [`Analysis::strict`]. The phases: unique names, components (ids by name), signatures
/// (stores), systems (parameters, filters, matched stores), their order, and their stages.
pub fn analyze(scan: &Scan, strict: bool) -> Result<Analysis, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut taken = HashMap::new();
    let comps = unique_by_name(
        &scan.components,
        |c| &c.ident,
        "component",
        &mut taken,
        &mut diags,
    );
    let sigs = unique_by_name(
        &scan.signatures,
        |s| &s.ident,
        "signature",
        &mut taken,
        &mut diags,
    );
    let ress = unique_by_name(
        &scan.resources,
        |r| &r.ident,
        "resource",
        &mut taken,
        &mut diags,
    );
    let evts = unique_by_name(&scan.events, |e| &e.ident, "event", &mut taken, &mut diags);
    refuse_colliding_set_constants(&scan.components, &mut diags);
    refuse_exported_names(&comps, &sigs, &ress, &mut diags);
    crate::generate::levels::check(&comps, &scan.soa_levels, &mut diags);
    let mut kept_outside: Vec<KeptOutside> = scan
        .soa_levels
        .iter()
        .filter_map(|f| {
            Some(KeptOutside {
                path: full_path(&f.module, &f.decl.ident),
                level: f.decl.level.clone()?,
            })
        })
        .collect();
    kept_outside.sort_by(|a, b| a.level.name.cmp(&b.level.name));
    let components: Vec<Component> = comps
        .iter()
        .map(|f| Component {
            ident: f.decl.ident.clone(),
            path: full_path(&f.module, &f.decl.ident),
            cold: f.decl.cold,
            sparse: f.decl.sparse,
            level: f.decl.level.clone(),
            no_rollback: f.decl.no_rollback,
            traits: Traits::of(&f.derives),
        })
        .collect();
    let resources: Vec<Resource> = ress
        .iter()
        .map(|f| Resource {
            ident: f.decl.ident.clone(),
            path: full_path(&f.module, &f.decl.ident),
            traits: Traits::of(&f.derives),
        })
        .collect();
    let events: Vec<EventType> = evts
        .iter()
        .map(|f| EventType {
            ident: f.decl.ident.clone(),
            path: full_path(&f.module, &f.decl.ident),
            traits: Traits::of(&f.derives),
        })
        .collect();
    let names = Names::new(scan, &components, &resources, &events);
    let signatures = signatures(&sigs, &names, &mut diags);
    let mut warnings = Vec::new();
    let (systems, found) = systems(scan, &names, &signatures, strict, &mut diags, &mut warnings);
    let systems = match order_systems(systems, &found) {
        Ok(systems) => systems,
        Err(mut errors) => {
            diags.append(&mut errors);
            Vec::new()
        }
    };
    let (systems, readers, stages) = schedule(systems);
    if diags.is_empty() {
        Ok(Analysis {
            components,
            signatures,
            resources,
            events,
            readers,
            systems,
            groups: stages.iter().map(|stage| vec![stage.clone()]).collect(),
            stages,
            kept_outside,
            strict,
            warnings,
            rollback: false,
        })
    } else {
        diags.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        Err(diags)
    }
}

/// The signatures whose components all resolve, each with its component set; a set declared
/// twice is an error at the second.
fn signatures(
    sigs: &[Found<SignatureDecl>],
    names: &Names,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Signature> {
    let mut signatures = Vec::new();
    let mut by_mask: HashMap<Bits, (String, String)> = HashMap::new();
    for f in sigs {
        let mut fields = Vec::new();
        let mut mask = Bits::default();
        let mut ok = true;
        for (field, ty) in &f.decl.fields {
            match names.component.get(&ty.unraw().to_string()) {
                Some(&id) if names.components[id].sparse => {
                    ok = false;
                    diags.push(
                        diag(f, ty.span(), format!(
                            "`{ty}` is a sparse component: it lives beside the stores, so it cannot be a field of signature `{}`",
                            f.decl.ident
                        ))
                        .with_help(format!("spawn the entity without it, then add it with `world.insert(entity, ..)` or `commands.insert(entity, ..)`; or drop `sparse` from `{ty}`'s `#[component(..)]`")),
                    );
                }
                Some(&id) => {
                    fields.push((field.clone(), id));
                    mask.insert(id);
                }
                None => {
                    ok = false;
                    let msg = if names.resource.contains_key(&ty.unraw().to_string()) {
                        format!(
                            "`{ty}` in signature `{}` is a resource, not a component",
                            f.decl.ident
                        )
                    } else {
                        format!("unknown component `{ty}` in signature `{}`", f.decl.ident)
                    };
                    diags.push(diag(f, ty.span(), msg).with_help(names.unknown_component(ty)));
                }
            }
        }
        if !ok {
            continue;
        }
        if let Some((other, at)) = by_mask.get(&mask) {
            diags.push(
                diag(f, f.decl.ident.span(), format!(
                    "signature `{}` has the same component set as signature `{other}` (at {at})",
                    f.decl.ident
                ))
                .with_help("each component set gets exactly one store; remove one of the two signatures, or spawn both through one of them"),
            );
            continue;
        }
        by_mask.insert(
            mask.clone(),
            (
                f.decl.ident.to_string(),
                location(&f.file, f.decl.ident.span()),
            ),
        );
        signatures.push(Signature {
            ident: f.decl.ident.clone(),
            path: full_path(&f.module, &f.decl.ident),
            layout: f.decl.layout,
            fields,
            mask,
        });
    }

    signatures
}

/// The systems whose declarations resolve, in declaration order, with their declarations; a
/// name declared twice or taken by a generated method is an error.
fn systems<'s>(
    scan: &'s Scan,
    names: &Names,
    signatures: &[Signature],
    strict: bool,
    diags: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> (Vec<System>, Vec<&'s Found<SystemDecl>>) {
    let mut systems = Vec::new();
    // Per system kept: its declaration, for the order constraints.
    let mut found_systems = Vec::new();
    let mut system_names: HashMap<String, String> = HashMap::new();
    for f in &scan.systems {
        let d = &f.decl;
        if let Some(at) = system_names.get(&d.ident.to_string()) {
            diags.push(
                diag(f, d.ident.span(), format!("system `{}` is declared twice (also at {at})", d.ident))
                    .with_help("the world generates one `run_<system>` method per system, so system names must be unique; rename one"),
            );
            continue;
        }
        system_names.insert(d.ident.to_string(), location(&f.file, d.ident.span()));
        let bare = d.ident.to_string();
        let bare = bare.trim_start_matches("r#");
        if matches!(bare, "all" | "schedule" | "stage" | "system") {
            diags.push(
                diag(f, d.ident.span(), format!(
                    "system `{bare}` would be run by `run_{bare}`, which the generated world already has (it runs {})",
                    match bare {
                        "all" => "every system in declaration order",
                        "schedule" => "the staged schedule",
                        "stage" => "one stage by index",
                        _ => "one system by index",
                    }
                ))
                .with_help("rename the system, e.g. `update_all`"),
            );
            continue;
        }
        if let Some(system) = system(f, names, signatures, strict, diags, warnings) {
            systems.push(system);
            found_systems.push(f);
        }
    }
    (systems, found_systems)
}

/// A system's parameters and filters, resolved to component and resource ids.
#[derive(Default)]
struct Resolved {
    params: Vec<Param>,
    /// Table components it requires (parameters that are not `Option`, and `with`).
    required: Bits,
    /// Table components of `without`.
    excluded: Bits,
    /// Components of `changed` (store components only).
    changed: Bits,
    /// Components of `added` (table components only).
    added: Bits,
    /// Sparse components it requires.
    sparse_with: Vec<usize>,
    /// Sparse components of `without`.
    sparse_without: Vec<usize>,
}

/// Resolves the parameters and filters of system `f`; `None` after an error.
fn resolve(f: &Found<SystemDecl>, names: &Names, diags: &mut Vec<Diagnostic>) -> Option<Resolved> {
    let d = &f.decl;
    let mut r = Resolved::default();
    let (params, required, sparse_with) = (&mut r.params, &mut r.required, &mut r.sparse_with);
    let mut ok = true;
    for p in &d.params {
        match &p.kind {
            ParamKind::Entity => params.push(Param::Entity),
            ParamKind::Commands => params.push(Param::Commands),
            ParamKind::Events { ty } => match names.event.get(&ty.unraw().to_string()) {
                // The reader's index is given once the order is known.
                Some(&event) => params.push(Param::Events { event, reader: 0 }),
                None => {
                    ok = false;
                    diags.push(
                        diag(f, ty.span(), format!("unknown event `{ty}` in system `{}`", d.ident))
                            .with_help(format!("declare `{ty}` with `#[derive(Event)]` in a scanned file, or fix the name")),
                    );
                }
            },
            ParamKind::Ref {
                ty,
                mutable,
                optional,
            } => {
                let name = ty.unraw().to_string();
                if let Some(&id) = names.component.get(&name) {
                    if !optional {
                        if names.components[id].sparse {
                            sparse_with.push(id);
                        } else {
                            required.insert(id);
                        }
                    }
                    params.push(Param::Component {
                        id,
                        mutable: *mutable,
                        optional: *optional,
                    });
                } else if let Some(&id) = names.resource.get(&name) {
                    if *optional {
                        ok = false;
                        diags.push(diag(f, p.span, format!("resource `{ty}` cannot be optional: the world always holds one"))
                            .with_help(format!("take it as `&{ty}` or `&mut {ty}`")));
                    } else {
                        params.push(Param::Resource {
                            id,
                            mutable: *mutable,
                        });
                    }
                } else {
                    ok = false;
                    diags.push(
                        diag(
                            f,
                            ty.span(),
                            format!(
                                "unknown component or resource `{ty}` in system `{}`",
                                d.ident
                            ),
                        )
                        .with_help(format!(
                            "{} (or `#[derive(Resource)]` for a singleton)",
                            names.unknown_component(ty)
                        )),
                    );
                }
            }
        }
    }
    let (excluded, changed, added, sparse_without) = (
        &mut r.excluded,
        &mut r.changed,
        &mut r.added,
        &mut r.sparse_without,
    );
    for (list, mask, what) in [
        (&d.with, &mut *required, "with"),
        (&d.without, &mut *excluded, "without"),
        (&d.changed, &mut *changed, "changed"),
        (&d.added, &mut *added, "added"),
    ] {
        for ty in list {
            match names.component.get(&ty.unraw().to_string()) {
                Some(&id) if names.components[id].sparse => match what {
                    "with" => sparse_with.push(id),
                    "without" => sparse_without.push(id),
                    _ => {
                        ok = false;
                        diags.push(sparse_changed(f, ty, &d.ident, what));
                    }
                },
                Some(&id) => mask.insert(id),
                None => {
                    ok = false;
                    diags.push(
                        diag(
                            f,
                            ty.span(),
                            format!(
                                "unknown component `{ty}` in `{what}(..)` of system `{}`",
                                d.ident
                            ),
                        )
                        .with_help(names.unknown_component(ty)),
                    );
                }
            }
        }
    }
    ok.then_some(r)
}

/// System `f` resolved, matched to the signatures, with its access; `None` after an error. A
/// system that matches no signature is an error in a strict world and, unless it is marked
/// `dynamic`, a warning in an open one.
fn system(
    f: &Found<SystemDecl>,
    names: &Names,
    signatures: &[Signature],
    strict: bool,
    diags: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> Option<System> {
    let d = &f.decl;
    let Resolved {
        params,
        mut required,
        excluded,
        changed,
        added,
        sparse_with,
        sparse_without,
    } = resolve(f, names, diags)?;
    let watched = changed.union(&added);
    required = required.union(&watched);
    let mut access = Access::of(&params);
    // A change filter reads the versions of its components: after their writers.
    access.reads = access.reads.union(&watched);
    access.filtered = !watched.is_empty();
    let lead = lead_of(
        &params,
        names.components,
        (&required, &excluded, &watched),
        &sparse_without,
    );
    access.walks = lead.is_some();
    if access.frame && d.dynamic {
        diags.push(
            diag(f, d.ident.span(), format!("system `{}` is marked `dynamic` but has no component or entity parameter", d.ident))
                .with_help("a system without one runs once per call, over no store, declared or not; drop `dynamic`"),
        );
        return None;
    }
    if access.frame && (!d.with.is_empty() || !d.without.is_empty() || !watched.is_empty()) {
        diags.push(
            diag(f, d.ident.span(), format!("system `{}` has filters but no component or entity parameter", d.ident))
                .with_help("a system without one runs once per call, not over rows, so `with(..)`/`without(..)` select nothing; take a component, or drop the filters"),
        );
        return None;
    }
    let matches: Vec<usize> = if access.frame {
        Vec::new()
    } else {
        signatures
            .iter()
            .enumerate()
            .filter(|(_, s)| matches(s.mask.words(), required.words(), excluded.words()))
            .map(|(i, _)| i)
            .collect()
    };
    if matches.is_empty() && !access.frame {
        let names = |m: &Bits| {
            m.ids()
                .map(|i| names.components[i].ident.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut msg = format!(
            "system `{}` matches no signature: no declared signature has all of {{{}}}",
            d.ident,
            names(&required)
        );
        if !excluded.is_empty() {
            msg.push_str(&format!(" and none of {{{}}}", names(&excluded)));
        }
        if strict {
            let mut help = "declare a signature with these components (`#[derive(Signature)]`), or change the system's parameters or filters".to_string();
            if d.dynamic {
                help.push_str(" (`dynamic` does not apply: a strict world has no undeclared sets)");
            }
            diags.push(diag(f, d.ident.span(), msg).with_help(help));
            return None;
        }
        if !d.dynamic {
            warnings.push(diag(f, d.ident.span(), msg).with_help(
                "it runs only over entities whose undeclared component sets match it (dynamic stores); declare a signature with these components (`#[derive(Signature)]`) to give them a generated store, or mark the system `#[system(dynamic)]` if that is what it is for",
            ));
        }
    }
    Some(System {
        ident: d.ident.clone(),
        path: full_path(&f.module, &d.ident),
        access,
        params,
        required,
        excluded,
        sparse_with,
        sparse_without,
        matches,
        min_chunk: d.min_chunk,
        spawns: d.spawns,
        stage: 0,
        location: crate_location(&f.file, d.ident.span()),
        constraints: constraints_text(d),
        changed: changed.ids().collect(),
        added: added.ids().collect(),
        lead,
    })
}

/// Numbers the event readers of `systems` (in run order) and places the systems in stages:
/// the systems, the number of readers, and each stage's systems.
fn schedule(mut systems: Vec<System>) -> (Vec<System>, usize, Vec<Vec<usize>>) {
    let mut readers = 0;
    for system in &mut systems {
        for p in &mut system.params {
            if let Param::Events { reader, .. } = p {
                *reader = readers;
                readers += 1;
            }
        }
    }
    let stage_of = place_in_stages(&systems.iter().map(|s| s.access.clone()).collect::<Vec<_>>());
    let mut stages: Vec<Vec<usize>> = vec![Vec::new(); stage_of.iter().max().map_or(0, |m| m + 1)];
    for (i, &st) in stage_of.iter().enumerate() {
        systems[i].stage = st;
        stages[st].push(i);
    }
    (systems, readers, stages)
}

/// `systems` (given in declaration order, with their declarations) in the order `run_all` runs
/// them ([`order::run_order`]). A constraint naming no system, and constraints that form a
/// cycle, are errors at their lines.
fn order_systems(
    systems: Vec<System>,
    found: &[&Found<SystemDecl>],
) -> Result<Vec<System>, Vec<Diagnostic>> {
    let index: HashMap<String, usize> = systems
        .iter()
        .enumerate()
        .map(|(i, s)| (s.ident.unraw().to_string(), i))
        .collect();
    let mut diags = Vec::new();
    let (mut after, mut before) = (
        vec![Vec::new(); systems.len()],
        vec![Vec::new(); systems.len()],
    );
    for (i, f) in found.iter().enumerate() {
        let d = &f.decl;
        for (list, is_after) in [(&d.after, true), (&d.before, false)] {
            for name in list {
                match index.get(&name.unraw().to_string()) {
                    Some(&j) if is_after => after[i].push(j),
                    Some(&j) => before[i].push(j),
                    None => {
                        let names: Vec<String> =
                            systems.iter().map(|s| s.ident.to_string()).collect();
                        let hint =
                            match closest(&name.to_string(), names.iter().map(String::as_str)) {
                                Some(c) => format!("did you mean `{c}`? "),
                                None => String::new(),
                            };
                        diags.push(
                            diag(
                                f,
                                name.span(),
                                format!(
                                    "system `{}` is ordered {} `{name}`, which is not a system",
                                    d.ident,
                                    if is_after { "after" } else { "before" }
                                ),
                            )
                            .with_help(format!(
                                "{hint}name a `#[system]` function of a scanned file"
                            )),
                        );
                    }
                }
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let order = order::run_order(&after, &before).map_err(|cycle| {
        let names: Vec<String> = cycle
            .iter()
            .map(|&i| format!("`{}`", systems[i].ident))
            .collect();
        let first = found[cycle[0]];
        vec![diag(
            first,
            first.decl.ident.span(),
            format!(
                "the systems' order constraints form a cycle: {} then {} again",
                names.join(" then "),
                names[0]
            ),
        )
        .with_help("remove one of the `after(..)`/`before(..)` that close the cycle")]
    })?;
    let mut slots: Vec<Option<System>> = systems.into_iter().map(Some).collect();
    Ok(order
        .into_iter()
        .map(|i| slots[i].take().expect("placed once"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(reads: u128, writes: u128) -> Access {
        let of = |m: u128| Bits::of((0..128).filter(|&i| m & (1u128 << i) != 0));
        Access {
            reads: of(reads),
            writes: of(writes),
            ..Access::default()
        }
    }

    fn bits(items: &[usize]) -> Bits {
        let mut b = Bits::default();
        for &i in items {
            b.insert(i);
        }
        b
    }

    #[test]
    fn bits_hold_any_index_in_its_own_word_and_bit() {
        let b = bits(&[0, 63, 64, 200]);
        assert_eq!(b.0, [1 | 1 << 63, 1, 0, 1 << 8], "word i / 64, bit i % 64");
        assert!(Bits::default().is_empty() && bits(&[]).is_empty());
        assert!(!bits(&[130]).is_empty());
        assert!(bits(&[3, 200]).intersects(&bits(&[200])));
        assert!(!bits(&[3, 200]).intersects(&bits(&[4, 201])));
        assert!(
            !bits(&[8]).intersects(&bits(&[200])),
            "same bit, other word"
        );
        assert_eq!(
            bits(&[1, 70]).union(&bits(&[1, 2, 200])),
            bits(&[1, 2, 70, 200])
        );
        assert_eq!(
            bits(&[1]).union(&bits(&[1])),
            bits(&[1]),
            "an element of both stays"
        );
    }

    #[test]
    fn paths_relative_to_the_including_module_gain_one_super() {
        let path = |module: &str| {
            let p = full_path(module, &syn::parse_str("Position").unwrap());
            quote::quote!(#p).to_string().replace(' ', "")
        };
        assert_eq!(path("crate::components"), "crate::components::Position");
        assert_eq!(path("::physics::parts"), "::physics::parts::Position");
        assert_eq!(path("self"), "super::Position");
        assert_eq!(path("self::parts"), "super::parts::Position");
        assert_eq!(path("super::parts"), "super::super::parts::Position");
        assert_eq!(path("components"), "super::components::Position");
    }

    #[test]
    fn conflicts_need_a_write() {
        assert!(!acc(0b11, 0).conflicts(&acc(0b01, 0)), "readers share");
        assert!(acc(0b01, 0).conflicts(&acc(0, 0b01)), "read vs write");
        assert!(acc(0, 0b01).conflicts(&acc(0, 0b01)), "write vs write");
        assert!(!acc(0, 0b01).conflicts(&acc(0b10, 0b100)));
        let mut r = Access::default();
        r.res_writes.insert(0);
        let mut read = Access::default();
        read.res_reads.insert(0);
        assert!(r.conflicts(&read));
        let mut far = Access::default();
        far.res_reads.insert(200);
        assert!(!r.conflicts(&far), "resources past 128 are their own");
        far.res_writes.insert(0);
        assert!(r.conflicts(&far));
        assert!(
            !r.conflicts(&acc(1, 1)),
            "resources and components are separate spaces"
        );
    }

    #[test]
    fn more_than_128_resources_stay_independent() {
        // Resource bits past 128 must not wrap onto the first resources.
        let mut decls = String::from(
            "#[derive(Component)]\npub struct Position(pub f32);\n\
             #[derive(Component)]\npub struct Velocity(pub f32);\n",
        );
        for i in 0..130 {
            decls.push_str(&format!(
                "#[derive(Resource, Default)]\npub struct R{i:03};\n"
            ));
        }
        decls.push_str(
            "#[derive(Signature)]\npub struct S { pub p: Position, pub v: Velocity }\n\
             #[system]\npub fn first(p: &Position, r: &mut R000) {}\n\
             #[system]\npub fn last(v: &Velocity, r: &mut R129) {}\n\
             #[system]\npub fn reader(v: &Velocity, r: &R129) {}\n",
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mod.rs"), decls).unwrap();
        let analysis = crate::Builder::new()
            .scan(dir.path(), "crate::components")
            .rerun_if_changed(false)
            .analyze()
            .unwrap();
        assert_eq!(analysis.resources.len(), 130);
        let [first, last, reader] = [0, 1, 2].map(|i| &analysis.systems[i].access);
        assert!(
            !first.conflicts(last),
            "R000 and R129 are different resources"
        );
        assert!(last.conflicts(reader), "R129 written and read");
        assert!(!first.conflicts(reader));
    }

    #[test]
    fn stages_keep_conflicting_systems_in_order() {
        // a writes 0; b reads 1; c reads 0 (after a); d writes 1 (after b); e independent.
        let s = place_in_stages(&[acc(0, 1), acc(2, 0), acc(1, 0), acc(0, 2), acc(4, 0)]);
        assert_eq!(s, [0, 0, 1, 1, 0]);
        // A chain of writers of one component gets one stage each.
        assert_eq!(
            place_in_stages(&[acc(0, 1), acc(0, 1), acc(0, 1)]),
            [0, 1, 2]
        );
        // A later system after two conflicting ones goes after the later of them.
        assert_eq!(
            place_in_stages(&[acc(0, 1), acc(1, 2), acc(2, 0)]),
            [0, 1, 2]
        );
        // Systems after one with commands see its changes: a later stage. Earlier ones share.
        let cmd = Access {
            commands: true,
            ..acc(1, 0)
        };
        assert_eq!(
            place_in_stages(&[acc(2, 0), cmd.clone(), acc(4, 0), acc(8, 0)]),
            [0, 0, 1, 1]
        );
        // A commands system declared after two conflicting writers goes no
        // earlier than the later of them, so its changes apply after both ran.
        let expire = Access {
            commands: true,
            ..acc(0, 4)
        };
        assert_eq!(place_in_stages(&[acc(0, 1), acc(0, 1), expire]), [0, 1, 1]);
        // A resource writer runs alone; a later independent system does not join it.
        let mut writer = acc(0, 0);
        writer.res_writes.insert(0);
        assert_eq!(
            place_in_stages(&[acc(0, 1), writer, acc(0, 2), acc(0, 1)]),
            [0, 1, 0, 2]
        );
    }
}

#[cfg(test)]
mod conflict_oracle;
pub(crate) mod fusion;
mod order;
mod report;
pub use report::{AnalyzedComponent, AnalyzedSignature, AnalyzedSystem};
