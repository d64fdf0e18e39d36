//! `#[cfg(..)]` on scanned items, evaluated the way rustc will evaluate it for the crate, from
//! what cargo tells a build script: `feature = "x"` from `CARGO_FEATURE_X`, every other
//! predicate from the target's `CARGO_CFG_*` (`unix`, `target_os = "linux"`,
//! `debug_assertions`, ...). So a system under `#[cfg(debug_assertions)]` or
//! `#[cfg(feature = "tools")]` gets its `run_` method exactly when rustc compiles it.
//!
//! What cargo does not tell a build script cannot be decided: `test` (one build script output
//! serves the crate's test and non-test builds), `doc`, `doctest`, and anything at all when the
//! builder runs outside a build script (`CARGO_CFG_TARGET_OS` unset). Such items are skipped,
//! and an error that names one says so.

use syn::{Attribute, Meta};

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

/// The verdict on `attrs`' `#[cfg(..)]`s under `env`.
pub fn evaluate(attrs: &[Attribute], env: Env<'_>) -> Cfg {
    let mut unknown = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        let text = quote::ToTokens::to_token_stream(&a.meta)
            .to_string()
            .replace(" (", "(")
            .replace("( ", "(")
            .replace(" )", ")");
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

    #[test]
    fn the_process_environment_is_read_as_it_is() {
        assert_eq!(process_env("PATH"), std::env::var("PATH").ok());
        assert_eq!(process_env("SIGECS_CFG_TEST_SURELY_UNSET"), None);
    }
}
