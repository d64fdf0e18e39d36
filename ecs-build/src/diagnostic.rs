//! Build-time errors: each names the file, line and column of the offending declaration and
//! says how to fix it, in the style of rustc so editors and terminals pick the location up.

use proc_macro2::Span;
use std::fmt;
use std::path::{Path, PathBuf};

/// `file:line:col` of `span` in `file` (1-based column, as rustc prints it): where another
/// declaration is, in a message.
pub fn location(file: &Path, span: Span) -> String {
    let s = span.start();
    format!("{}:{}:{}", file.display(), s.line, s.column + 1)
}

/// `location`, with `file` relative to the crate being built (`CARGO_MANIFEST_DIR`, where
/// cargo runs the build script) when it lies under it: what generated code may embed, so the
/// output does not depend on where the crate was checked out.
pub fn crate_location(file: &Path, span: Span) -> String {
    match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(root) => match file.strip_prefix(&root) {
            Ok(relative) => location(relative, span),
            Err(_) => location(file, span),
        },
        None => location(file, span),
    }
}

/// One build error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file, as the build script named it.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when the message does not already say.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `span` in `file`.
    pub(crate) fn at(file: &Path, span: Span, message: impl Into<String>) -> Self {
        let start = span.start();
        Diagnostic {
            file: file.to_path_buf(),
            line: start.line,
            column: start.column + 1,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a fix hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Every error of a (possibly combined) `syn::Error`.
    pub(crate) fn from_syn(file: &Path, error: syn::Error) -> Vec<Self> {
        error
            .into_iter()
            .map(|e| Diagnostic::at(file, e.span(), e.to_string()))
            .collect()
    }

    /// The syntax errors of `source`, the text of `file`, where syn failed to parse it. Two
    /// kinds of syn error are mended here. One that ran out of input at the top level of the
    /// file (an item cut short, which syn reports at line 1, column 1) is put at the end of
    /// the last token. One from the lexer (an unbalanced delimiter or an unterminated
    /// literal, "cannot parse string into token stream") keeps the lexer's place and says what
    /// it means.
    pub(crate) fn from_syntax(file: &Path, source: &str, error: syn::Error) -> Vec<Self> {
        error
            .into_iter()
            .map(|e| {
                let mut d = Diagnostic::at(file, e.span(), e.to_string());
                let start = e.span().start();
                if d.message.starts_with("unexpected end of input") && start.line <= 1 && start.column == 0 {
                    if let Some((line, column)) = end_of_last_token(source) {
                        (d.line, d.column) = (line, column);
                        d.message = format!("{} (the file ends in the middle of an item)", d.message);
                    }
                } else if d.message == "cannot parse string into token stream" {
                    d.message = "unbalanced delimiter or unterminated literal: this `(`, `[`, `{`, \
                                 quote or comment is not closed (or this closing one was not opened)"
                        .into();
                }
                d
            })
            .collect()
    }
}

/// The 1-based line and column just after the last token of `source`, if it lexes.
fn end_of_last_token(source: &str) -> Option<(usize, usize)> {
    let tokens: proc_macro2::TokenStream = source.parse().ok()?;
    let end = tokens.into_iter().last()?.span().end();
    Some((end.line, end.column + 1))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error: {}\n  --> {}:{}:{}",
            self.message,
            self.file.display(),
            self.line,
            self.column
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n   = help: {help}")?;
        }
        Ok(())
    }
}

/// All errors of one build, reported together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// The individual errors, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.diagnostics {
            writeln!(f, "{d}\n")?;
        }
        write!(
            f,
            "sigecs: could not generate the world because of {} previous error{}",
            self.diagnostics.len(),
            if self.diagnostics.len() == 1 { "" } else { "s" }
        )
    }
}

impl std::error::Error for BuildError {}

/// The declared name closest to `name`, for "did you mean" hints.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 3).max(1))
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_rustc_like() {
        let d = Diagnostic {
            file: "components/a.rs".into(),
            line: 3,
            column: 5,
            message: "bad".into(),
            help: Some("fix it".into()),
        };
        assert_eq!(
            d.to_string(),
            "error: bad\n  --> components/a.rs:3:5\n   = help: fix it"
        );
        let e = BuildError {
            diagnostics: vec![d.clone(), d],
        };
        assert!(e.to_string().ends_with("because of 2 previous errors"));
    }

    #[test]
    fn closest_name() {
        assert_eq!(
            closest("Postion", ["Position", "Velocity"]),
            Some("Position")
        );
        assert_eq!(closest("Zebra", ["Position", "Velocity"]), None);
        // Two edits in a long name are still a typo (up to a third of its length).
        assert_eq!(
            closest("Aceleraton", ["Acceleration", "Position"]),
            Some("Acceleration")
        );
        assert_eq!(
            closest("Mas", ["Mass", "Max"]),
            Some("Mass"),
            "ties: the least name"
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("flaw", "lawn"), 2);
        assert_eq!(edit_distance("ab", ""), 2);
        assert_eq!(edit_distance("abc", "a"), 2, "two deletions");
        assert_eq!(edit_distance("a", "abc"), 2, "two insertions");
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
