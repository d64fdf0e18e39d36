//! `#[cfg(..)]` on scanned items, evaluated the way rustc will evaluate it for the crate, from
//! what cargo tells a build script: `feature = "x"` from `CARGO_FEATURE_X`, every other
//! predicate from the target's `CARGO_CFG_*` (`unix`, `target_os = "linux"`,
//! `debug_assertions`, ...). So a system under `#[cfg(debug_assertions)]` or
//! `#[cfg(feature = "tools")]` gets its `run_` method exactly when rustc compiles it.
//!
//! `#[cfg_attr(predicate, attributes..)]` is expanded first, as rustc does ([`expand`]): the
//! attributes it wraps when the predicate holds, nothing when it does not. So
//! `#[cfg_attr(feature = "net", component(sparse))]` makes a component sparse exactly when
//! rustc does, and a `#[cfg]` on a field or a system parameter ([`Cfg`] of its attributes)
//! drops it exactly when rustc does.
//!
//! What cargo does not tell a build script cannot be decided: `test` (one build script output
//! serves the crate's test and non-test builds), `doc`, `doctest`, and anything at all when the
//! builder runs outside a build script (`CARGO_CFG_TARGET_OS` unset). An item under such a
//! `#[cfg]` is skipped, and an error that names one says so; a `cfg_attr` under one that wraps
//! a declaration attribute, and such a `#[cfg]` on a field or parameter the scanner reads, are
//! build errors (the declaration would differ between the builds the one output serves).

use proc_macro2::Span;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Attribute, Meta, Token};

/// The verdict on an item's `#[cfg]` attributes (all of them must hold).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cfg {
    /// No `#[cfg]`, or every one holds: the item is compiled.
    On,
    /// A `#[cfg]` does not hold: rustc will not compile the item. The predicate, as written.
    Off(String),
    /// A `#[cfg]` cannot be decided here. The predicate, as written.
    Unknown(String),
}

/// Looks up an environment variable (the process's, or a test's table).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, as cargo sets it for a build script.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A `#[cfg_attr]` whose predicate cannot be decided here, wrapping an attribute that decides
/// what a declaration is.
#[derive(Clone, Debug)]
pub struct Undecided {
    /// The predicate, as written.
    pub predicate: String,
    /// The wrapped attribute, as written.
    pub attribute: String,
    /// Where the `cfg_attr` is.
    pub span: Span,
}

/// `attrs` once rustc has expanded their `#[cfg_attr(..)]`s under `env`: each whose predicate
/// holds becomes the attributes it wraps (expanded in turn), each whose predicate does not hold
/// goes. One whose predicate cannot be decided keeps what the scanner can still follow exactly:
/// a wrapped `cfg(Q)` becomes `cfg(any(not(P), Q))` (the item is compiled when `P` fails or `Q`
/// holds), a wrapped `cfg_attr(P2, ..)` becomes `cfg_attr(all(P, P2), ..)`, and any other
/// wrapped attribute goes, unless `declares` says it decides what a declaration is: then the
/// result is `Err`.
pub fn expand(
    attrs: &[Attribute],
    env: Env<'_>,
    declares: &dyn Fn(&Meta) -> bool,
) -> Result<Vec<Attribute>, Undecided> {
    let mut out = Vec::with_capacity(attrs.len());
    for a in attrs {
        if a.path().is_ident("cfg_attr") {
            expand_meta(&a.meta, a, env, declares, &mut out)?;
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// Appends what attribute `meta` (written in `attr`) expands to.
fn expand_meta(
    meta: &Meta,
    attr: &Attribute,
    env: Env<'_>,
    declares: &dyn Fn(&Meta) -> bool,
    out: &mut Vec<Attribute>,
) -> Result<(), Undecided> {
    let as_attribute = |meta: Meta| Attribute {
        meta,
        ..attr.clone()
    };
    let Some((condition, wrapped)) = cfg_attr_parts(meta) else {
        // Not a `cfg_attr`, or a malformed one, which rustc reports.
        if !meta.path().is_ident("cfg_attr") {
            out.push(as_attribute(meta.clone()));
        }
        return Ok(());
    };
    match predicate(&condition, env) {
        Some(true) => {
            for m in &wrapped {
                expand_meta(m, attr, env, declares, out)?;
            }
        }
        Some(false) => {}
        None => {
            for m in &wrapped {
                if m.path().is_ident("cfg") {
                    let Meta::List(list) = m else { continue };
                    let q = &list.tokens;
                    out.push(as_attribute(
                        syn::parse_quote!(cfg(any(not(#condition), #q))),
                    ));
                } else if let Some((inner, rest)) = cfg_attr_parts(m) {
                    let both: Meta = syn::parse_quote!(all(#condition, #inner));
                    let nested: Meta = syn::parse_quote!(cfg_attr(#both, #(#rest),*));
                    expand_meta(&nested, attr, env, declares, out)?;
                } else if declares(m) {
                    return Err(Undecided {
                        predicate: text(&condition),
                        attribute: text(m),
                        span: attr.pound_token.span,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The predicate and the wrapped attributes of `cfg_attr(predicate, a, b)`.
fn cfg_attr_parts(meta: &Meta) -> Option<(Meta, Vec<Meta>)> {
    let Meta::List(list) = meta else { return None };
    if !list.path.is_ident("cfg_attr") {
        return None;
    }
    let parts = list
        .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
        .ok()?;
    let mut parts = parts.into_iter();
    let condition = parts.next()?;
    Some((condition, parts.collect()))
}

/// Tokens as written, without the spaces `to_string` puts inside parentheses.
fn text(tokens: &impl ToTokens) -> String {
    tokens
        .to_token_stream()
        .to_string()
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,", ",")
        .replace(" :: ", "::")
}

/// The verdict on `attrs`' `#[cfg(..)]`s under `env`.
pub fn evaluate(attrs: &[Attribute], env: Env<'_>) -> Cfg {
    let mut unknown = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        let text = text(&a.meta);
        let verdict = match &a.meta {
            Meta::List(list) => list
                .parse_args::<Meta>()
                .map_err(|_| ())
                .and_then(|m| predicate(&m, env).ok_or(())),
            _ => Err(()),
        };
        match verdict {
            Ok(true) => {}
            Ok(false) => return Cfg::Off(text),
            Err(()) => unknown = unknown.or(Some(text)),
        }
    }
    unknown.map_or(Cfg::On, Cfg::Unknown)
}

/// A configuration predicate's value, `None` when it cannot be decided. `all` is false as soon
/// as one part is false and `any` true as soon as one is true, whatever the undecided parts.
fn predicate(meta: &Meta, env: Env<'_>) -> Option<bool> {
    let in_build_script = env("CARGO_CFG_TARGET_OS").is_some();
    match meta {
        Meta::List(list) => {
            let name = list.path.get_ident()?.to_string();
            let parts = list
                .parse_args_with(
                    syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            let values: Vec<Option<bool>> = parts.iter().map(|m| predicate(m, env)).collect();
            match name.as_str() {
                "all" if values.contains(&Some(false)) => Some(false),
                "all" => values.iter().all(Option::is_some).then_some(true),
                "any" if values.contains(&Some(true)) => Some(true),
                "any" => values.iter().all(Option::is_some).then_some(false),
                "not" if values.len() == 1 => values[0].map(|v| !v),
                _ => None,
            }
        }
        Meta::NameValue(nv) => {
            let name = nv.path.get_ident()?.to_string();
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(value),
                ..
            }) = &nv.value
            else {
                return None;
            };
            if !in_build_script {
                return None;
            }
            let value = value.value();
            if name == "feature" {
                let var = format!("CARGO_FEATURE_{}", value.to_uppercase().replace('-', "_"));
                return Some(env(&var).is_some());
            }
            let var = format!("CARGO_CFG_{}", name.to_uppercase());
            Some(env(&var).is_some_and(|v| v.split(',').any(|v| v == value)))
        }
        Meta::Path(path) => {
            let name = path.get_ident()?.to_string();
            if !in_build_script || matches!(name.as_str(), "test" | "doc" | "doctest") {
                return None;
            }
            Some(env(&format!("CARGO_CFG_{}", name.to_uppercase())).is_some())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn verdict(attrs: &str, vars: &[(&str, &str)]) -> Cfg {
        let item: syn::ItemStruct = syn::parse_str(&format!("{attrs} struct S;")).unwrap();
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        evaluate(&item.attrs, &|name: &str| vars.get(name).cloned())
    }

    const LINUX: &[(&str, &str)] = &[
        ("CARGO_CFG_TARGET_OS", "linux"),
        ("CARGO_CFG_UNIX", ""),
        ("CARGO_CFG_TARGET_FEATURE", "fxsr,sse,sse2"),
        ("CARGO_CFG_DEBUG_ASSERTIONS", ""),
        ("CARGO_FEATURE_DEBUG_TOOLS", "1"),
    ];

    #[test]
    fn predicates_follow_what_cargo_sets() {
        assert_eq!(verdict("#[derive(Debug)]", LINUX), Cfg::On);
        assert_eq!(verdict("#[cfg(unix)]", LINUX), Cfg::On);
        assert_eq!(
            verdict("#[cfg(windows)]", LINUX),
            Cfg::Off("cfg(windows)".into())
        );
        assert_eq!(verdict("#[cfg(debug_assertions)]", LINUX), Cfg::On);
        assert_eq!(
            verdict("#[cfg(not(debug_assertions))]", LINUX),
            Cfg::Off("cfg(not(debug_assertions))".into())
        );
        assert_eq!(verdict("#[cfg(target_os = \"linux\")]", LINUX), Cfg::On);
        assert!(matches!(
            verdict("#[cfg(target_os = \"macos\")]", LINUX),
            Cfg::Off(_)
        ));
        assert_eq!(verdict("#[cfg(target_feature = \"sse2\")]", LINUX), Cfg::On);
        assert!(matches!(
            verdict(
                "#[cfg(target_feature = \"sse\")] #[cfg(target_feature = \"avx\")]",
                LINUX
            ),
            Cfg::Off(_)
        ));
        assert_eq!(verdict("#[cfg(feature = \"debug-tools\")]", LINUX), Cfg::On);
        assert!(matches!(
            verdict("#[cfg(feature = \"extra\")]", LINUX),
            Cfg::Off(_)
        ));
        assert_eq!(
            verdict("#[cfg(all(unix, feature = \"debug-tools\"))]", LINUX),
            Cfg::On
        );
        assert_eq!(verdict("#[cfg(any(windows, unix))]", LINUX), Cfg::On);
        assert!(matches!(verdict("#[cfg(any())]", LINUX), Cfg::Off(_)));
        assert_eq!(verdict("#[cfg(all())]", LINUX), Cfg::On);
    }

    #[test]
    fn what_a_build_script_cannot_know_is_unknown_unless_the_rest_decides() {
        assert_eq!(
            verdict("#[cfg(test)]", LINUX),
            Cfg::Unknown("cfg(test)".into())
        );
        assert!(matches!(
            verdict("#[cfg(not(doc))]", LINUX),
            Cfg::Unknown(_)
        ));
        assert!(matches!(
            verdict("#[cfg(all(test, windows))]", LINUX),
            Cfg::Off(_)
        ));
        assert_eq!(verdict("#[cfg(any(test, unix))]", LINUX), Cfg::On);
        assert!(matches!(
            verdict("#[cfg(any(test, windows))]", LINUX),
            Cfg::Unknown(_)
        ));
        assert!(matches!(
            verdict("#[cfg(weird(unix))]", LINUX),
            Cfg::Unknown(_)
        ));
        assert!(matches!(
            verdict("#[cfg(feature = 1)]", LINUX),
            Cfg::Unknown(_)
        ));
        // Outside a build script nothing is known, except what needs no environment.
        assert!(matches!(verdict("#[cfg(unix)]", &[]), Cfg::Unknown(_)));
        assert!(matches!(
            verdict("#[cfg(feature = \"x\")]", &[]),
            Cfg::Unknown(_)
        ));
        assert!(matches!(verdict("#[cfg(any())]", &[]), Cfg::Off(_)));
        assert_eq!(verdict("#[cfg(all())]", &[]), Cfg::On);
        // One attribute off decides, even beside an unknown one.
        assert!(matches!(
            verdict("#[cfg(test)] #[cfg(windows)]", LINUX),
            Cfg::Off(_)
        ));
        // `not` takes exactly one predicate.
        assert!(matches!(
            verdict("#[cfg(not(unix, windows))]", LINUX),
            Cfg::Unknown(_)
        ));
    }

    /// `attrs` expanded under LINUX, each written back as text; `Err` with the predicate and
    /// the attribute of an undecided `cfg_attr` wrapping a `component(..)`.
    fn expanded(attrs: &str, vars: &[(&str, &str)]) -> Result<Vec<String>, (String, String)> {
        let item: syn::ItemStruct = syn::parse_str(&format!("{attrs} struct S;")).unwrap();
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let declares = |m: &Meta| m.path().is_ident("component");
        expand(
            &item.attrs,
            &|name: &str| vars.get(name).cloned(),
            &declares,
        )
        .map(|attrs| attrs.iter().map(|a| text(&a.meta)).collect())
        .map_err(|u| (u.predicate, u.attribute))
    }

    #[test]
    fn cfg_attr_expands_as_rustc_expands_it() {
        let ok = |v: &[&str]| Ok(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            expanded("#[cfg_attr(all(), component(sparse))]", &[]),
            ok(&["component(sparse)"])
        );
        assert_eq!(
            expanded("#[cfg_attr(any(), component(sparse))]", &[]),
            ok(&[])
        );
        assert_eq!(
            expanded(
                "#[derive(A)] #[cfg_attr(unix, derive(B), component(cold))] #[repr(C)]",
                LINUX
            ),
            ok(&["derive(A)", "derive(B)", "component(cold)", "repr(C)"])
        );
        assert_eq!(
            expanded("#[cfg_attr(windows, component(cold))]", LINUX),
            ok(&[])
        );
        // Nested: both predicates must hold.
        assert_eq!(
            expanded("#[cfg_attr(unix, cfg_attr(all(), component(cold)))]", LINUX),
            ok(&["component(cold)"])
        );
        assert_eq!(
            expanded(
                "#[cfg_attr(unix, cfg_attr(windows, component(cold)))]",
                LINUX
            ),
            ok(&[])
        );
        // Undecided: a wrapped `cfg` is kept as the condition it amounts to, a wrapped
        // attribute that declares nothing goes, and one that declares is an error.
        assert_eq!(
            expanded("#[cfg_attr(test, cfg(unix), derive(Debug))]", LINUX),
            ok(&["cfg(any(not(test), unix))"])
        );
        assert_eq!(
            expanded("#[cfg_attr(test, component(sparse))]", LINUX),
            Err(("test".into(), "component(sparse)".into()))
        );
        assert_eq!(
            expanded(
                "#[cfg_attr(test, cfg_attr(unix, component(sparse)))]",
                LINUX
            ),
            Err(("all(test, unix)".into(), "component(sparse)".into()))
        );
        assert_eq!(
            expanded(
                "#[cfg_attr(test, cfg_attr(windows, component(sparse)))]",
                LINUX
            ),
            ok(&[]),
            "all(test, windows) is false whatever `test` is"
        );
        // What a wrapped `cfg` amounts to is decided where it can be.
        let item: syn::ItemStruct = syn::parse_str(
            "#[cfg_attr(test, cfg(windows))] #[cfg_attr(test, cfg(unix))] struct S;",
        )
        .unwrap();
        let env = |name: &str| {
            LINUX
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let attrs = expand(&item.attrs, &env, &|_| false).unwrap();
        assert!(matches!(evaluate(&attrs[..1], &env), Cfg::Unknown(_)));
        assert_eq!(evaluate(&attrs[1..], &env), Cfg::On);
    }

    #[test]
    fn the_process_environment_is_read_as_it_is() {
        assert_eq!(process_env("PATH"), std::env::var("PATH").ok());
        assert_eq!(process_env("SIGECS_CFG_TEST_SURELY_UNSET"), None);
    }
}
