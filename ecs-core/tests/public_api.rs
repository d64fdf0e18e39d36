//! The public API of sigecs, pinned: every item a user (or generated code) can name, listed
//! from the source with syn and compared with `tests/public-api.txt`, so that a new public
//! item, and above all a new safe entry point, is a visible change in review. The crate warns
//! on `unreachable_pub` (an error under CI's clippy), so every `pub` item in its files is
//! reachable and the list is the surface.
//!
//! It also checks two rules of the surface:
//! - hidden is not private: a `pub fn` named `__…` is `unsafe`, or the list says why not;
//! - every `pub unsafe fn` and `pub unsafe trait` documents its contract in a `# Safety`
//!   section.
//!
//! After an intended change: `UPDATE_PUBLIC_API=1 cargo test -p sigecs --test public_api`.

use quote::ToTokens;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use syn::{Attribute, Item, Visibility};

/// What the listing found.
#[derive(Default)]
struct Surface {
    lines: Vec<String>,
    problems: Vec<String>,
    /// Names of the hidden types (a first walk finds them): rustdoc hides the methods of a
    /// hidden type with it, wherever their `impl` is.
    hidden_types: std::collections::HashSet<String>,
    /// Names of the shown types: a name both shown and hidden counts as shown.
    shown_types: std::collections::HashSet<String>,
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn has_cfg_test(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream().to_string().contains("test"))
}

fn cfgs(attrs: &[Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(|a| format!(" #[{}]", a.meta.to_token_stream()))
        .collect()
}

fn hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc") && a.meta.to_token_stream().to_string().contains("hidden")
    })
}

fn docs(attrs: &[Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Token text without the spaces `to_string` puts around every token, for stable, readable
/// lines: `fn get<C: ComponentOf<M>>(&self, entity: Entity) -> Option<&C>`.
fn text(t: impl ToTokens) -> String {
    let s = t.to_token_stream().to_string();
    let mut out = String::new();
    let mut prev = "";
    for part in s.split(' ') {
        let glue_before = matches!(part, "," | ";" | ")" | "]" | ":" | "::" | "." | "?")
            || part.starts_with('(')
                && prev
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '>' || c == '_')
            || part.starts_with(')')
            || (part.starts_with('>') && prev != "->")
            || (part == "<"
                && prev
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_'));
        let glue_after =
            prev.ends_with(['(', '[', '<', '&', '!', '#', '*']) || prev.ends_with("::");
        if !out.is_empty() && !glue_before && !glue_after {
            out.push(' ');
        }
        out.push_str(part);
        prev = part;
    }
    // A trailing comma is formatting (rustfmt adds one to long signatures), not the API.
    out.replace(",)", ")").replace(" )", ")")
}

impl Surface {
    fn note_type(&mut self, ident: &syn::Ident, attrs: &[Attribute], hidden_module: bool) {
        let set = if hidden_module || hidden(attrs) {
            &mut self.hidden_types
        } else {
            &mut self.shown_types
        };
        set.insert(ident.to_string());
    }

    fn push(
        &mut self,
        module: &str,
        kind: &str,
        name: &str,
        detail: &str,
        attrs: &[Attribute],
        hidden_module: bool,
    ) {
        let mark = if hidden_module || hidden(attrs) {
            " [hidden]"
        } else {
            ""
        };
        let path = if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}::{name}")
        };
        self.lines
            .push(format!("{kind} {path}{detail}{mark}{}", cfgs(attrs)));
    }

    fn function(
        &mut self,
        module: &str,
        name: &str,
        sig: &syn::Signature,
        attrs: &[Attribute],
        hidden_module: bool,
    ) {
        let unsafety = sig.unsafety.is_some();
        if unsafety && !docs(attrs).contains("# Safety") {
            self.problems.push(format!(
                "`{module}::{name}` is a pub unsafe fn without a `# Safety` section"
            ));
        }
        if name
            .rsplit("::")
            .next()
            .is_some_and(|n| n.starts_with("__"))
            && !unsafety
        {
            self.problems.push(format!(
                "`{module}::{name}` is a safe pub fn with a hidden name: make it unsafe (with a \
                 `# Safety` section) or not public"
            ));
        }
        self.push(
            module,
            "fn",
            name,
            &format!(": {}", text(sig)),
            attrs,
            hidden_module,
        );
    }

    fn items(&mut self, items: &[Item], module: &str, dir: &Path, hidden_module: bool) {
        for item in items {
            match item {
                Item::Mod(m) if !has_cfg_test(&m.attrs) => {
                    let name = m.ident.to_string();
                    let child = if module.is_empty() {
                        name.clone()
                    } else {
                        format!("{module}::{name}")
                    };
                    let hidden_child = hidden_module || hidden(&m.attrs);
                    if is_pub(&m.vis) {
                        self.push(module, "mod", &name, "", &m.attrs, hidden_module);
                    }
                    match &m.content {
                        Some((_, inner)) => {
                            self.items(inner, &child, &dir.join(&name), hidden_child)
                        }
                        None => {
                            let path_attr = m.attrs.iter().find_map(|a| match &a.meta {
                                syn::Meta::NameValue(nv) if nv.path.is_ident("path") => {
                                    match &nv.value {
                                        syn::Expr::Lit(syn::ExprLit {
                                            lit: syn::Lit::Str(s),
                                            ..
                                        }) => Some(s.value()),
                                        _ => None,
                                    }
                                }
                                _ => None,
                            });
                            let (file, subdir) = match path_attr {
                                Some(p) => (dir.join(&p), dir.join(&name)),
                                None if dir.join(format!("{name}.rs")).exists() => {
                                    (dir.join(format!("{name}.rs")), dir.join(&name))
                                }
                                None => (dir.join(&name).join("mod.rs"), dir.join(&name)),
                            };
                            let parsed = parse(&file);
                            if hidden_child
                                || parsed.attrs.iter().any(|a| hidden(std::slice::from_ref(a)))
                            {
                                self.items(&parsed.items, &child, &subdir, true);
                            } else {
                                self.items(&parsed.items, &child, &subdir, false);
                            }
                        }
                    }
                }
                Item::Fn(f) if is_pub(&f.vis) && !has_cfg_test(&f.attrs) => self.function(
                    module,
                    &f.sig.ident.to_string(),
                    &f.sig,
                    &f.attrs,
                    hidden_module,
                ),
                Item::Struct(s) if is_pub(&s.vis) => {
                    self.note_type(&s.ident, &s.attrs, hidden_module);
                    let generics = text(&s.generics);
                    self.push(
                        module,
                        "struct",
                        &format!("{}{generics}", s.ident),
                        "",
                        &s.attrs,
                        hidden_module,
                    );
                    for (i, field) in s.fields.iter().enumerate() {
                        if is_pub(&field.vis) {
                            let name = field
                                .ident
                                .as_ref()
                                .map_or_else(|| i.to_string(), ToString::to_string);
                            self.push(
                                module,
                                "field",
                                &format!("{}.{name}", s.ident),
                                &format!(": {}", text(&field.ty)),
                                &field.attrs,
                                // A hidden struct's fields are hidden with it.
                                hidden_module || hidden(&s.attrs),
                            );
                        }
                    }
                }
                Item::Enum(e) if is_pub(&e.vis) => {
                    self.note_type(&e.ident, &e.attrs, hidden_module);
                    let variants: Vec<String> =
                        e.variants.iter().map(|v| v.ident.to_string()).collect();
                    self.push(
                        module,
                        "enum",
                        &format!("{}{}", e.ident, text(&e.generics)),
                        &format!(" {{ {} }}", variants.join(", ")),
                        &e.attrs,
                        hidden_module,
                    );
                }
                Item::Trait(t) if is_pub(&t.vis) => {
                    let unsafety = if t.unsafety.is_some() {
                        "unsafe trait"
                    } else {
                        "trait"
                    };
                    if t.unsafety.is_some() && !docs(&t.attrs).contains("# Safety") {
                        self.problems.push(format!(
                            "`{module}::{}` is a pub unsafe trait without a `# Safety` section",
                            t.ident
                        ));
                    }
                    self.push(
                        module,
                        unsafety,
                        &format!("{}{}", t.ident, text(&t.generics)),
                        "",
                        &t.attrs,
                        hidden_module,
                    );
                    for ti in &t.items {
                        if let syn::TraitItem::Fn(f) = ti {
                            if has_cfg_test(&f.attrs) {
                                continue;
                            }
                            let name = format!("{}::{}", t.ident, f.sig.ident);
                            self.push(
                                module,
                                "fn",
                                &name,
                                &format!(": {}", text(&f.sig)),
                                &f.attrs,
                                // A hidden trait's methods are hidden with it.
                                hidden_module || hidden(&t.attrs),
                            );
                        }
                    }
                }
                Item::Type(t) if is_pub(&t.vis) => self.push(
                    module,
                    "type",
                    &t.ident.to_string(),
                    &format!(" = {}", text(&t.ty)),
                    &t.attrs,
                    hidden_module,
                ),
                Item::Const(c) if is_pub(&c.vis) => self.push(
                    module,
                    "const",
                    &c.ident.to_string(),
                    &format!(": {}", text(&c.ty)),
                    &c.attrs,
                    hidden_module,
                ),
                Item::Static(s) if is_pub(&s.vis) => self.push(
                    module,
                    "static",
                    &s.ident.to_string(),
                    &format!(": {}", text(&s.ty)),
                    &s.attrs,
                    hidden_module,
                ),
                Item::Use(u) if is_pub(&u.vis) => {
                    self.push(module, "use", &text(&u.tree), "", &u.attrs, hidden_module)
                }
                Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
                    let name = m
                        .ident
                        .as_ref()
                        .map_or_else(String::new, ToString::to_string);
                    self.push("", "macro", &name, "", &m.attrs, hidden_module)
                }
                Item::Impl(i) if i.trait_.is_none() && !has_cfg_test(&i.attrs) => {
                    let ty = text(&i.self_ty);
                    let hidden_module = hidden_module
                        || matches!(&*i.self_ty, syn::Type::Path(p)
                        if p.path.segments.last().is_some_and(|s| {
                            self.hidden_types.contains(&s.ident.to_string())
                        }));
                    for ii in &i.items {
                        match ii {
                            syn::ImplItem::Fn(f) if is_pub(&f.vis) && !has_cfg_test(&f.attrs) => {
                                let mut attrs = f.attrs.clone();
                                attrs.extend(i.attrs.iter().cloned());
                                self.function(
                                    module,
                                    &format!("{ty}::{}", f.sig.ident),
                                    &f.sig,
                                    &attrs,
                                    hidden_module,
                                )
                            }
                            syn::ImplItem::Const(c) if is_pub(&c.vis) => {
                                // An item of a hidden `impl` is hidden with it.
                                let mut attrs = c.attrs.clone();
                                attrs.extend(i.attrs.iter().cloned());
                                self.push(
                                    module,
                                    "const",
                                    &format!("{ty}::{}", c.ident),
                                    &format!(": {}", text(&c.ty)),
                                    &attrs,
                                    hidden_module,
                                )
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn parse(file: &Path) -> syn::File {
    let source =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn surface() -> Surface {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = parse(&src.join("lib.rs"));
    let mut first = Surface::default();
    first.items(&lib.items, "", &src, false);
    let mut s = Surface {
        hidden_types: &first.hidden_types - &first.shown_types,
        ..Surface::default()
    };
    s.items(&lib.items, "", &src, false);
    s.lines.sort();
    s.lines.dedup();
    s
}

#[test]
fn the_public_api_is_the_listed_one() {
    let s = surface();
    assert!(s.problems.is_empty(), "{}", s.problems.join("\n"));
    let mut listed = String::from(
        "# sigecs's public items, one per line (kind, path by defining module, signature;\n\
         # [hidden]: #[doc(hidden)], for generated code). Written by tests/public_api.rs.\n",
    );
    for line in &s.lines {
        writeln!(listed, "{line}").unwrap();
    }
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/public-api.txt");
    if std::env::var_os("UPDATE_PUBLIC_API").is_some() {
        std::fs::write(&file, &listed).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&file).unwrap_or_default();
    if pinned != listed {
        let (old, new): (Vec<&str>, Vec<&str>) =
            (pinned.lines().collect(), listed.lines().collect());
        let added: Vec<&&str> = new.iter().filter(|l| !old.contains(l)).collect();
        let removed: Vec<&&str> = old.iter().filter(|l| !new.contains(l)).collect();
        panic!(
            "sigecs's public API changed.\nadded:\n  {}\nremoved:\n  {}\nIf intended, run \
             UPDATE_PUBLIC_API=1 cargo test -p sigecs --test public_api and commit \
             tests/public-api.txt.",
            added
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join("\n  "),
            removed
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
}
