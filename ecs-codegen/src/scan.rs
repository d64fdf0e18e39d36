//! The scanner: reads every `.rs` file under the given directories with syn and collects the
//! declarations, each with the module path the generated code will name it by.

use crate::decl::{self, ComponentDecl, ResourceDecl, SignatureDecl, SystemDecl};
use crate::diagnostic::Diagnostic;
use std::path::{Path, PathBuf};
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
    /// `#[system]` functions, in scan order (files sorted by path, items in file order).
    pub systems: Vec<Found<SystemDecl>>,
    /// Files and directories read, for `cargo:rerun-if-changed`.
    pub read: Vec<PathBuf>,
}

impl Scan {
    /// Scans `root` (a directory, scanned recursively, or a single file) whose module is
    /// `module`. Problems are appended to `diags`; the scan goes on past them.
    pub fn add_root(&mut self, root: &Path, module: &str, diags: &mut Vec<Diagnostic>) {
        if root.is_dir() {
            self.read.push(root.to_path_buf());
            self.scan_dir(root, module, diags);
        } else if root.is_file() {
            self.scan_file(root, module, diags);
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
        }
    }

    fn scan_dir(&mut self, dir: &Path, module: &str, diags: &mut Vec<Diagnostic>) {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => {
                diags.push(io_error(dir, &e));
                return;
            }
        };
        // Sorted, so ids and declaration order do not depend on the file system.
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if is_ident(name) {
                    self.read.push(path.clone());
                    self.scan_dir(&path, &format!("{module}::{name}"), diags);
                }
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let m = if matches!(stem, "mod" | "lib" | "main") {
                    module.to_string()
                } else {
                    format!("{module}::{stem}")
                };
                self.scan_file(&path, &m, diags);
            }
        }
    }

    fn scan_file(&mut self, file: &Path, module: &str, diags: &mut Vec<Diagnostic>) {
        self.read.push(file.to_path_buf());
        let source = match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                diags.push(io_error(file, &e));
                return;
            }
        };
        match syn::parse_file(&source) {
            Ok(parsed) => self.scan_items(&parsed.items, file, module, diags),
            Err(e) => {
                diags.extend(Diagnostic::from_syn(file, e).into_iter().map(|d| {
                    d.with_help("the file must be valid Rust; fix the syntax error first")
                }))
            }
        }
    }

    fn scan_items(
        &mut self,
        items: &[Item],
        file: &Path,
        module: &str,
        diags: &mut Vec<Diagnostic>,
    ) {
        for item in items {
            match item {
                Item::Mod(m) if !has_cfg(&m.attrs) => {
                    if let Some((_, inner)) = &m.content {
                        self.scan_items(inner, file, &format!("{module}::{}", m.ident), diags);
                    }
                }
                Item::Struct(s) if !has_cfg(&s.attrs) => self.scan_type(
                    &s.attrs,
                    || DeriveInput::from(s.clone()),
                    file,
                    module,
                    diags,
                ),
                Item::Enum(e) if !has_cfg(&e.attrs) => self.scan_type(
                    &e.attrs,
                    || DeriveInput::from(e.clone()),
                    file,
                    module,
                    diags,
                ),
                Item::Fn(f) if !has_cfg(&f.attrs) => {
                    let Some(attr) = f.attrs.iter().find(|a| last_ident_is(a.path(), "system"))
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
                    match decl::parse_system(args, f) {
                        Ok(decl) => self.systems.push(found(decl, module, file)),
                        Err(e) => diags.extend(Diagnostic::from_syn(file, e)),
                    }
                }
                _ => {}
            }
        }
    }

    fn scan_type(
        &mut self,
        attrs: &[Attribute],
        input: impl FnOnce() -> DeriveInput,
        file: &Path,
        module: &str,
        diags: &mut Vec<Diagnostic>,
    ) {
        let derives = derived(attrs);
        let wanted = ["Component", "Signature", "Resource"];
        if !derives.iter().any(|d| wanted.contains(&d.as_str())) {
            return;
        }
        let input = input();
        for d in derives {
            let result = match d.as_str() {
                "Component" => decl::parse_component(&input)
                    .map(|c| self.components.push(found(c, module, file))),
                "Signature" => decl::parse_signature(&input)
                    .map(|s| self.signatures.push(found(s, module, file))),
                "Resource" => decl::parse_resource(&input)
                    .map(|r| self.resources.push(found(r, module, file))),
                _ => Ok(()),
            };
            if let Err(e) = result {
                diags.extend(Diagnostic::from_syn(file, e));
            }
        }
    }
}

fn found<T>(decl: T, module: &str, file: &Path) -> Found<T> {
    Found {
        decl,
        module: module.to_string(),
        file: file.to_path_buf(),
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

/// Items under `#[cfg(..)]` are skipped: the build script cannot evaluate the condition, and a
/// world whose layout changed with features would be surprising.
fn has_cfg(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg"))
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

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
