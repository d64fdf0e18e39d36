//! Writes the generated tokens as Rust source: indented, one statement, field, match arm or
//! item per line, within [`WIDTH`] columns where a group, a generic argument list or a
//! statement's `=` allows a break, doc attributes as `///` comments, and the generator's
//! `// SAFETY:` markers ([`crate::generate::SAFETY`]) as comments.
//!
//! The generator's tokens are printed straight from the token tree. Formatting them through a
//! syntax tree (syn parsing the tokens again, then prettyplease) takes about three times as
//! long as this printer (0.93 s against 0.34 s for a world of 128 components, 2,048
//! signatures and 512 systems), which would nearly double the build script's time; this
//! printer is one pass over the tokens. It only decides spaces and line breaks, so the file
//! holds exactly the generated tokens but the markers (a test parses every fixture world's
//! text back and compares): where its rules guess wrong, a line is longer or a space is
//! missing, never a different program.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// Lines are broken to stay within this width where a group allows it.
const WIDTH: usize = 100;

/// The generated file, formatted, with the `// SAFETY:` comments.
pub(crate) fn print(tokens: TokenStream) -> String {
    let mut words = Words::default();
    let atoms = atoms(tokens, &mut words);
    let mut p = Printer {
        words: &words,
        out: String::new(),
        indent: 0,
        line_start: 0,
    };
    p.block(&atoms, true);
    p.newline();
    p.out
}

/// A token as the printer sees it: punctuation joined into operators (`::`, `=>`), and
/// lifetimes (`'a`) as words.
#[derive(Debug)]
enum Atom {
    /// An identifier, a literal or a lifetime: its text in [`Words`].
    Word(Span),
    /// An operator.
    Op(&'static str),
    Group(Delimiter, Vec<Atom>),
}

/// Where a word's text is in [`Words`].
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

/// The text of every word, one after another (one allocation for all of them).
#[derive(Default)]
struct Words(String);

impl Words {
    fn push(&mut self, word: impl std::fmt::Display) -> Span {
        use std::fmt::Write;
        let start = self.0.len() as u32;
        let _ = write!(self.0, "{word}");
        Span {
            start,
            end: self.0.len() as u32,
        }
    }

    fn get(&self, span: Span) -> &str {
        &self.0[span.start as usize..span.end as usize]
    }

    /// The text of `atom` if it is a word.
    fn of<'w>(&'w self, atom: Option<&Atom>) -> Option<&'w str> {
        match atom {
            Some(Atom::Word(span)) => Some(self.get(*span)),
            _ => None,
        }
    }
}

fn atoms(tokens: TokenStream, words: &mut Words) -> Vec<Atom> {
    let mut out = Vec::new();
    let mut joined = String::new();
    let mut lifetime = false;
    for tree in tokens {
        match tree {
            TokenTree::Punct(p) if p.as_char() == '\'' && p.spacing() == Spacing::Joint => {
                operators(&mut joined, &mut out);
                lifetime = true;
            }
            TokenTree::Punct(p) => {
                joined.push(p.as_char());
                if p.spacing() == Spacing::Alone {
                    operators(&mut joined, &mut out);
                }
            }
            other => {
                operators(&mut joined, &mut out);
                out.push(match other {
                    TokenTree::Ident(i) if lifetime => Atom::Word(words.push(format_args!("'{i}"))),
                    TokenTree::Ident(i) => Atom::Word(words.push(i)),
                    TokenTree::Literal(l) => Atom::Word(words.push(l)),
                    TokenTree::Group(g) => {
                        // Dropping the group first leaves its stream with one owner, so it
                        // is taken apart without a copy.
                        let (delimiter, stream) = (g.delimiter(), g.stream());
                        drop(g);
                        Atom::Group(delimiter, atoms(stream, words))
                    }
                    TokenTree::Punct(_) => unreachable!(),
                });
                lifetime = false;
            }
        }
    }
    operators(&mut joined, &mut out);
    out
}

/// Rust's operators, longest first.
const OPERATORS: [&str; 45] = [
    "<<=", ">>=", "...", "..=", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>", "..", "!", "#", "$", "%", "&", "*", "+", ",",
    "-", ".", "/", ":", ";", "<", "=", ">", "?", "@", "^", "|", "~",
];

/// Splits punctuation written together (`>::`, `&&`, `::<`) into Rust's operators, longest
/// first, and takes them out of `joined`.
fn operators(joined: &mut String, out: &mut Vec<Atom>) {
    let mut rest = joined.as_str();
    while !rest.is_empty() {
        let op = OPERATORS
            .iter()
            .find(|op| rest.starts_with(*op))
            .expect("proc-macro2 punctuation is one of Rust's operator characters");
        out.push(Atom::Op(op));
        rest = &rest[op.len()..];
    }
    joined.clear();
}

/// Keywords after which a group or operator is not a call, an index or a binary operand:
/// Rust's keywords but those that stand for a value, a type or a path (`self`, `Self`,
/// `crate`, `super`, `true`, `false`, `_`) and those used after one (`.await`, `union`).
fn is_keyword(word: &str) -> bool {
    crate::generate::is_keyword(word)
        && !matches!(
            word,
            "self" | "Self" | "crate" | "super" | "true" | "false" | "_" | "await" | "union"
        )
}

/// Keywords whose brace group (an item's body, a match, a loop) always takes its own lines.
fn opens_block(word: &str) -> bool {
    matches!(
        word,
        "fn" | "impl"
            | "struct"
            | "enum"
            | "mod"
            | "trait"
            | "union"
            | "match"
            | "loop"
            | "while"
            | "for"
            | "if"
            | "else"
    )
}

/// What was printed last on the current line, for the spacing of what follows.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Prev {
    /// The start of a line or of a group.
    Start,
    /// An identifier or literal (`keyword`: a keyword of [`is_keyword`]).
    Word { keyword: bool, lifetime: bool },
    /// An operator; `tight`: nothing follows it with a space (`.`, `::`, `#`, a prefix `&`).
    Op { tight: bool, macro_bang: bool },
    /// A closed group or a generic's `>`.
    Close,
}

/// The spacing state of one sequence of atoms (a group's content).
#[derive(Clone, Copy)]
struct Seq {
    prev: Prev,
    /// Open generic argument lists (`<` … `>`).
    generics: usize,
    /// The open generics are an `impl`'s parameters (a space follows their `>`).
    impl_generics: bool,
    /// Inside a closure's `|…|` parameters.
    closure: bool,
    /// The current statement has a keyword whose brace group takes its own lines.
    block_header: bool,
    /// The current statement starts with `unsafe` (its block gets a `// SAFETY:` line).
    unsafe_start: bool,
    /// A word before the previous atom was `fn` (so a following `<` opens generics).
    after_fn: bool,
}

impl Seq {
    fn new() -> Self {
        Seq {
            prev: Prev::Start,
            generics: 0,
            impl_generics: false,
            closure: false,
            block_header: false,
            unsafe_start: false,
            after_fn: false,
        }
    }

    /// A separator at this level, outside generics and closure parameters: `,`, and `;` in a
    /// block (in brackets it is an array's length).
    fn separates(&self, atom: &Atom, block: bool) -> bool {
        matches!(atom, Atom::Op(o) if (*o == "," || block && *o == ";")
            && self.generics == 0
            && !self.closure)
    }

    /// Whether a `<` here opens generic arguments rather than comparing.
    fn generic_open(&self, last_word: Option<&str>) -> bool {
        match self.prev {
            Prev::Word { keyword, .. } => {
                let w = last_word.unwrap_or("");
                keyword
                    || self.after_fn
                    || w.starts_with(|c: char| c.is_ascii_uppercase())
                    || w == "Self"
            }
            Prev::Close => false,
            _ => true,
        }
    }

    /// The text to put before `atom` and what follows it, updating the state.
    fn space_before(&mut self, atom: &Atom, word: Option<&str>, last_word: Option<&str>) -> bool {
        let prev = self.prev;
        let tight_prev = matches!(prev, Prev::Start | Prev::Op { tight: true, .. });
        match atom {
            Atom::Word(_) => {
                let w = word.unwrap_or("");
                let keyword = is_keyword(w);
                self.after_fn = matches!(prev, Prev::Word { .. }) && last_word == Some("fn");
                if opens_block(w) {
                    self.block_header = true;
                }
                if w == "unsafe" && prev == Prev::Start {
                    self.unsafe_start = true;
                }
                self.prev = Prev::Word {
                    keyword,
                    lifetime: w.starts_with('\''),
                };
                !tight_prev
            }
            Atom::Group(delim, _) => {
                self.after_fn = false;
                let space = match (delim, prev) {
                    (_, Prev::Start) => false,
                    (
                        Delimiter::Brace,
                        Prev::Op {
                            macro_bang: true, ..
                        },
                    ) => true,
                    (_, Prev::Op { tight: true, .. }) => false,
                    (Delimiter::Brace, _) => true,
                    (_, Prev::Word { keyword, lifetime }) => {
                        (keyword && last_word != Some("pub")) || lifetime
                    }
                    (_, Prev::Close) => false,
                    (_, Prev::Op { .. }) => true,
                };
                self.prev = Prev::Close;
                space
            }
            Atom::Op(o) => {
                let o = *o;
                let generic_open = self.generic_open(last_word);
                self.after_fn = false;
                let operand_before = matches!(prev, Prev::Close)
                    || matches!(prev, Prev::Word { keyword: false, .. });
                let (space, tight, next) = match o {
                    "," | ";" => (false, false, None),
                    "?" => (false, false, Some(Prev::Close)),
                    "." => (false, true, None),
                    ":" => (false, false, None),
                    "::" => (
                        matches!(
                            prev,
                            Prev::Op { tight: false, .. }
                                | Prev::Word { keyword: true, .. }
                                | Prev::Word { lifetime: true, .. }
                        ),
                        true,
                        None,
                    ),
                    "#" => (!tight_prev, true, None),
                    ".." | "..=" => (matches!(prev, Prev::Op { tight: false, .. }), true, None),
                    "!" if matches!(prev, Prev::Word { keyword: false, .. }) => {
                        self.prev = Prev::Op {
                            tight: true,
                            macro_bang: true,
                        };
                        return false;
                    }
                    "<" if generic_open => {
                        if self.generics == 0 {
                            self.impl_generics =
                                prev == (Prev::Word {
                                    keyword: true,
                                    lifetime: false,
                                }) && last_word == Some("impl");
                        }
                        self.generics += 1;
                        let space = match prev {
                            Prev::Op { tight: false, .. } => true,
                            Prev::Word { keyword: true, .. } => last_word != Some("impl"),
                            _ => false,
                        };
                        (space, true, None)
                    }
                    ">" | ">>" if self.generics > 0 => {
                        self.generics = self.generics.saturating_sub(o.len());
                        let after = if self.generics == 0 && self.impl_generics {
                            Prev::Word {
                                keyword: true,
                                lifetime: false,
                            }
                        } else {
                            Prev::Close
                        };
                        (false, false, Some(after))
                    }
                    "|" | "||" if !operand_before && !self.closure => {
                        // A closure's parameters open (`||`: it has none).
                        if o == "|" {
                            self.closure = true;
                        }
                        (!tight_prev, o == "|", None)
                    }
                    "|" if self.closure => {
                        self.closure = false;
                        (false, false, None)
                    }
                    "&" | "&&" | "*" | "-" | "!" if !operand_before => (!tight_prev, true, None),
                    _ => (!tight_prev, false, None),
                };
                self.prev = next.unwrap_or(Prev::Op {
                    tight,
                    macro_bang: false,
                });
                space
            }
        }
    }
}

struct Printer<'w> {
    words: &'w Words,
    out: String,
    indent: usize,
    /// Where the current line starts in `out`; nothing is written on it yet (not even its
    /// indentation, which comes with the first atom) while it is `out`'s end.
    line_start: usize,
}

impl<'w> Printer<'w> {
    /// Nothing is written on the current line yet.
    fn fresh(&self) -> bool {
        self.out.len() == self.line_start
    }

    fn newline(&mut self) {
        if self.fresh() {
            return;
        }
        let trimmed = self.out.trim_end_matches(' ').len();
        self.out.truncate(trimmed);
        self.out.push('\n');
        self.line_start = self.out.len();
    }

    fn write(&mut self, text: &str, space: bool) {
        if self.fresh() {
            for _ in 0..self.indent {
                self.out.push_str("    ");
            }
        } else if space {
            self.out.push(' ');
        }
        self.out.push_str(text);
    }

    fn column(&self) -> usize {
        if self.fresh() {
            self.indent * 4
        } else {
            self.out.len() - self.line_start
        }
    }

    /// `text` as `//` comment lines at the current indentation, within the width.
    fn comment(&mut self, text: &str) {
        let room = WIDTH.saturating_sub(self.indent * 4 + 3).max(40);
        for line in crate::generate::wrap(text, room) {
            self.write("//", false);
            self.out.push(' ');
            self.out.push_str(&line);
            self.newline();
        }
    }

    /// The content of a file or of a group broken over lines: a line per separator, item and
    /// attribute.
    fn block(&mut self, atoms: &[Atom], braced: bool) {
        let mut seq = Seq::new();
        let mut last_word: Option<&'w str> = None;
        // The statement went on on a new line after its `=`, one level in.
        let mut continued = false;
        let mut i = 0;
        while i < atoms.len() {
            if seq.prev == Prev::Start {
                if let Some(used) = self.attribute(&atoms[i..]) {
                    i += used;
                    continue;
                }
            }
            let atom = &atoms[i];
            let tail = line_tail(self.words, &atoms[i + 1..]);
            let generics = seq.generics;
            self.atom(atom, &mut seq, &mut last_word, tail);
            if generics == 0 && seq.generics == 1 {
                if let Some(list) = self.long_generics(&atoms[i + 1..]) {
                    // One argument to a line, the closing `>` back at the start's level.
                    self.indent += 1;
                    self.newline();
                    self.block(&atoms[i + 1..i + 1 + list], false);
                    self.newline();
                    self.indent -= 1;
                    i += 1 + list;
                    continue;
                }
            }
            if !continued
                && matches!(atom, Atom::Op("="))
                && seq.generics == 0
                && !seq.closure
                && self.column() + 1 + head_len(self.words, &atoms[i + 1..]) > WIDTH
            {
                self.indent += 1;
                self.newline();
                continued = true;
            }
            let next = atoms.get(i + 1);
            let ends_line = seq.separates(atom, braced)
                || matches!(atom, Atom::Group(Delimiter::Brace, _))
                    && seq.generics == 0
                    && match next {
                        None => false,
                        Some(Atom::Word(w)) => !matches!(self.words.get(*w), "else" | "as"),
                        Some(Atom::Op(o)) => *o == "#",
                        Some(Atom::Group(..)) => false,
                    };
            if ends_line {
                self.newline();
                if continued {
                    self.indent -= 1;
                    continued = false;
                }
                seq = Seq::new();
                last_word = None;
            }
            i += 1;
        }
        if continued {
            self.indent -= 1;
        }
    }

    /// For a generic argument list just opened (`atoms` follow its `<`): the number of atoms
    /// before its closing `>` when the list and what follows it on the line do not fit.
    fn long_generics(&self, atoms: &[Atom]) -> Option<usize> {
        let mut depth = 1;
        let close = atoms.iter().position(|a| {
            match a {
                Atom::Op("<") => depth += 1,
                Atom::Op(">") => depth -= 1,
                Atom::Op(">>") => depth -= 2,
                _ => {}
            }
            depth <= 0
        })?;
        // A `>>` that closes this list and an inner one cannot be split.
        if depth < 0 || close == 0 {
            return None;
        }
        let list = flat_len(self.words, &atoms[..close], false, WIDTH).unwrap_or(WIDTH);
        let after = line_tail(self.words, &atoms[close..]);
        (self.column() + list + after > WIDTH).then_some(close)
    }

    /// Prints an attribute that starts a line on its own line (a doc attribute as a `///`
    /// comment), returning how many atoms it took.
    fn attribute(&mut self, atoms: &[Atom]) -> Option<usize> {
        let Some(Atom::Op(hash)) = atoms.first() else {
            return None;
        };
        let inner_attr = matches!(atoms.get(1), Some(Atom::Op("!")));
        let used = 2 + usize::from(inner_attr);
        let Some(Atom::Group(Delimiter::Bracket, inner)) = atoms.get(used - 1) else {
            return None;
        };
        if *hash != "#" {
            return None;
        }
        if let (false, [Atom::Word(name), Atom::Op("="), Atom::Word(lit)]) =
            (inner_attr, &inner[..])
        {
            let name = self.words.get(*name);
            if name == "doc" {
                if let Some(text) = doc_text(self.words.get(*lit)) {
                    self.write("///", false);
                    self.out.push_str(&text);
                    self.newline();
                    return Some(2);
                }
            }
            if name == crate::generate::SAFETY {
                let why = doc_text(self.words.get(*lit)).expect("a one-line reason");
                self.comment(&format!("SAFETY: {why}"));
                return Some(2);
            }
        }
        let mut seq = Seq::new();
        let mut last = None;
        for atom in &atoms[..used] {
            self.atom(atom, &mut seq, &mut last, 0);
        }
        self.newline();
        Some(used)
    }

    /// One atom on the current line, a group broken over lines if it does not fit with the
    /// `tail` characters that must follow it on the line.
    fn atom(&mut self, atom: &Atom, seq: &mut Seq, last_word: &mut Option<&'w str>, tail: usize) {
        let header = seq.block_header;
        let unsafe_start = seq.unsafe_start;
        let words = self.words;
        let word = words.of(Some(atom));
        let space = seq.space_before(atom, word, *last_word);
        match atom {
            Atom::Word(_) => {
                let w = word.unwrap_or("");
                self.write(w, space);
                *last_word = Some(w);
            }
            Atom::Op(o) => self.write(o, space),
            Atom::Group(delim, inner) => {
                self.group(*delim, inner, space, header || unsafe_start, tail);
                if *delim == Delimiter::Brace {
                    seq.block_header = false;
                    seq.unsafe_start = false;
                }
                *last_word = None;
            }
        }
    }

    fn group(
        &mut self,
        delim: Delimiter,
        inner: &[Atom],
        space: bool,
        own_lines: bool,
        tail: usize,
    ) {
        let (open, close) = match delim {
            Delimiter::Parenthesis => ("(", ")"),
            Delimiter::Bracket => ("[", "]"),
            Delimiter::Brace => ("{", "}"),
            Delimiter::None => ("", ""),
        };
        if inner.is_empty() {
            self.write(open, space);
            self.out.push_str(close);
            return;
        }
        let room = WIDTH.saturating_sub(self.column() + usize::from(space) + 2 + tail);
        let braced = delim == Delimiter::Brace;
        let flat = if braced && own_lines {
            None
        } else {
            flat_len(self.words, inner, braced, room)
        };
        self.write(open, space);
        if let Some(_len) = flat {
            // Fits: on this line, `{ a }` with spaces inside braces.
            let mut seq = Seq::new();
            let mut last = None;
            if braced {
                self.out.push(' ');
            }
            for atom in inner {
                self.atom(atom, &mut seq, &mut last, 0);
            }
            if braced {
                self.out.push(' ');
            }
            self.out.push_str(close);
            return;
        }
        let one = !braced && !has_separator(self.words, inner, false);
        let head_room = WIDTH.saturating_sub(self.column() + usize::from(space) + 2);
        if delim == Delimiter::None || one && head_len(self.words, inner) <= head_room {
            // One element whose start fits: it hugs the delimiters and breaks inside (`f({` …
            // `})`). One that does not goes on a line of its own, like a list's elements.
            let mut seq = Seq::new();
            let mut last = None;
            for (i, atom) in inner.iter().enumerate() {
                let rest = line_tail(self.words, &inner[i + 1..]);
                self.atom(atom, &mut seq, &mut last, rest + close.len() + tail);
            }
            self.out.push_str(close);
            return;
        }
        self.indent += 1;
        self.newline();
        if !braced && is_list_of_words(inner) {
            self.fill(inner);
        } else {
            self.block(inner, braced);
        }
        self.newline();
        self.indent -= 1;
        self.write(close, false);
    }

    /// A long list of words (`[1u32, 2u32, …]`), as many to a line as fit.
    fn fill(&mut self, inner: &[Atom]) {
        for atom in inner {
            match atom {
                Atom::Word(w) => {
                    let w = self.words.get(*w);
                    if !self.fresh() && self.column() + w.len() + 2 > WIDTH {
                        self.newline();
                    }
                    self.write(w, true);
                }
                _ => self.out.push(','),
            }
        }
    }
}

/// The width of what follows a group on its line: up to a separator or a block's `{`.
fn line_tail(words: &Words, atoms: &[Atom]) -> usize {
    let mut seq = Seq::new();
    let mut last = None;
    let mut len = 0;
    for atom in atoms {
        if seq.separates(atom, true) {
            return len + 1;
        }
        let word = words.of(Some(atom));
        seq.space_before(atom, word, last);
        last = word;
        len += match atom {
            Atom::Group(Delimiter::Brace, _) => return len + 2,
            Atom::Word(w) => words.get(*w).len() + 1,
            Atom::Op(o) => o.len() + 1,
            Atom::Group(_, inner) => 2 + line_tail(words, inner),
        };
        if len > WIDTH {
            break;
        }
    }
    len
}

/// The width of the start of what follows a statement's `=`: up to the opening delimiter of its
/// first group (which can break), or its end.
fn head_len(words: &Words, atoms: &[Atom]) -> usize {
    let mut len = 0;
    for atom in atoms {
        len += match atom {
            Atom::Group(..) => return len + 1,
            Atom::Op(";" | ",") => return len + 1,
            Atom::Op(o) => o.len(),
            Atom::Word(w) => words.get(*w).len() + 1,
        };
    }
    len
}

/// `a, b, c` with every element a single word.
fn is_list_of_words(inner: &[Atom]) -> bool {
    inner.iter().enumerate().all(|(i, a)| match a {
        Atom::Word(_) => i % 2 == 0,
        Atom::Op(o) => *o == "," && i % 2 == 1,
        Atom::Group(..) => false,
    })
}

/// A separator (`,` or `;`) at the top level of a group's content.
fn has_separator(words: &Words, inner: &[Atom], block: bool) -> bool {
    let mut seq = Seq::new();
    let mut last = None;
    for atom in inner {
        if seq.separates(atom, block) {
            return true;
        }
        let word = words.of(Some(atom));
        seq.space_before(atom, word, last);
        last = word;
    }
    false
}

/// The length of `atoms` on one line, or `None` if it is over `limit` or holds something
/// that takes its own lines (a statement's `;`, an attribute, an item or a match).
fn flat_len(words: &Words, atoms: &[Atom], braced: bool, limit: usize) -> Option<usize> {
    let mut len = 0;
    let mut header = false;
    for atom in atoms {
        len += match atom {
            Atom::Word(w) => {
                let w = words.get(*w);
                header |= opens_block(w);
                w.len() + 1
            }
            Atom::Op(o) if braced && *o == ";" || *o == "#" => return None,
            Atom::Op(o) => o.len() + 1,
            Atom::Group(Delimiter::Brace, _) if header => return None,
            Atom::Group(delim, inner) => {
                let braced = *delim == Delimiter::Brace;
                2 + flat_len(words, inner, braced, limit.checked_sub(len)?)?
            }
        };
        if len > limit {
            return None;
        }
    }
    Some(len)
}

/// The text of a doc attribute's string literal, for a `///` comment; `None` when it cannot
/// be one (a line break or an escape it does not read).
fn doc_text(literal: &str) -> Option<String> {
    let text = if let Some(raw) = literal.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        raw[hashes..]
            .strip_prefix('"')?
            .strip_suffix(&raw[..hashes])?
            .strip_suffix('"')?
            .to_string()
    } else {
        let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
        let mut text = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                text.push(c);
                continue;
            }
            text.push(match chars.next()? {
                '\\' => '\\',
                '"' => '"',
                '\'' => '\'',
                't' => '\t',
                _ => return None,
            });
        }
        text
    };
    // `////` would be a plain comment: such a text stays an attribute.
    (!text.contains(['\n', '\r']) && !text.starts_with('/')).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Literal;
    use quote::quote;
    use std::path::Path;
    use std::str::FromStr;

    /// The tokens of `text` as the printer's input, flattened: groups as their delimiters,
    /// literals as their values (a `///` comment reads back as a `doc` string), and whether
    /// each punctuation character is joined to the next.
    fn flatten(tokens: TokenStream, out: &mut Vec<String>) {
        let value = |l: &Literal| {
            syn::parse_str::<syn::LitStr>(&l.to_string()).map_or(l.to_string(), |s| s.value())
        };
        let mut trees = tokens.into_iter().peekable();
        while let Some(tree) = trees.next() {
            // A `// SAFETY:` marker is printed as a comment, which lexes as nothing.
            if let (TokenTree::Punct(p), Some(TokenTree::Group(g))) = (&tree, trees.peek()) {
                let marker = g.stream().into_iter().next().is_some_and(
                    |t| matches!(t, TokenTree::Ident(i) if i == crate::generate::SAFETY),
                );
                if p.as_char() == '#' && marker {
                    trees.next();
                    continue;
                }
            }
            match tree {
                TokenTree::Ident(i) => out.push(i.to_string()),
                TokenTree::Literal(l) => out.push(format!("lit {}", value(&l))),
                TokenTree::Punct(p) => {
                    // Spacing matters only between two punctuation characters: `= =` and
                    // `==` are other tokens.
                    let joined = p.spacing() == Spacing::Joint
                        && matches!(trees.peek(), Some(TokenTree::Punct(_)));
                    out.push(format!("{}{}", p.as_char(), if joined { "+" } else { "" }));
                }
                TokenTree::Group(g) => {
                    out.push(format!("{:?}", g.delimiter()));
                    flatten(g.stream(), out);
                    out.push("end".into());
                }
            }
        }
    }

    fn flat(tokens: TokenStream) -> Vec<String> {
        let mut out = Vec::new();
        flatten(tokens, &mut out);
        out
    }

    /// Two punctuation characters the printer joins where the generator did not, or the
    /// reverse, must still lex as the same operators.
    fn same_tokens(generated: TokenStream, printed: &str) {
        let (a, b) = (
            flat(generated),
            flat(TokenStream::from_str(printed).expect("the printed text lexes")),
        );
        assert_eq!(a.len(), b.len(), "token counts differ");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let (x0, y0) = (x.trim_end_matches('+'), y.trim_end_matches('+'));
            assert_eq!(
                x0,
                y0,
                "token {i} differs: {:?}",
                &b[i.saturating_sub(8)..i + 1]
            );
            if x != y {
                // Joined in one and not the other: allowed where the two characters start
                // no operator (`>` `,`), and for `& &x` and generics' `> >`, which the
                // parser splits.
                let pair = format!("{x0}{}", a[i + 1].trim_end_matches('+'));
                let operator = OPERATORS.iter().any(|op| op.starts_with(&pair));
                assert!(
                    !operator || pair == "&&" || pair == ">>",
                    "token {i} ({pair}) is joined differently: {:?}",
                    &b[i.saturating_sub(8)..i + 2]
                );
            }
        }
    }

    /// Every fixture world of the workspace (every layout, commands, events, resources,
    /// levels, keyword names) prints to text that parses as a Rust file and holds exactly
    /// the generated tokens.
    #[test]
    fn fixture_worlds_print_exactly_their_tokens() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/src");
        let worlds: &[&[(&str, &str)]] = &[
            &[("bare.rs", "crate::bare")],
            &[("fixture.rs", "crate::fixture")],
            &[("sched.rs", "crate::sched")],
            &[("commands.rs", "crate::commands")],
            &[("repro.rs", "crate::repro")],
            &[("names", "crate::names")],
            &[("bench/add_remove.rs", "crate::bench::add_remove")],
            &[("bench/frag_iter.rs", "crate::bench::frag_iter")],
            &[("bench/many_stores.rs", "crate::bench::many_stores")],
            &[("store_forms.rs", "crate::store_forms")],
            &[("../../components", "crate::components")],
            &[
                ("bench/simple_iter.rs", "crate::bench::simple_iter"),
                (
                    "bench/simple_iter_rows.rs",
                    "crate::bench::simple_iter_rows",
                ),
            ],
        ];
        for world in worlds {
            let mut builder = crate::Builder::new().rerun_if_changed(false);
            for (path, module) in *world {
                builder = builder.scan(fixtures.join(path), module);
            }
            let analysis = builder.analyze().unwrap();
            for table_from in [0, crate::TABLE_FROM] {
                let tokens = crate::generate::generate(&analysis, table_from);
                let text = print(tokens.clone());
                if let Err(e) = syn::parse_file(&text) {
                    panic!("{world:?}: the printed text does not parse: {e}\n{text}");
                }
                same_tokens(tokens, &text);
                assert!(
                    text.lines().all(|l| !l.ends_with(' ')),
                    "{world:?}: trailing space"
                );
                let longest = text.lines().max_by_key(|l| l.len()).unwrap_or("");
                assert!(longest.len() <= WIDTH, "{world:?}: a long line: {longest}");
                every_unsafe_has_its_safety_comment(&text);
                for line in text.lines().map(str::trim_start) {
                    let doc = line.strip_prefix("///");
                    assert!(
                        doc.is_none_or(|d| d.is_empty() || d.starts_with(' ')),
                        "{world:?}: a doc comment without its space, or a plain comment: {line}"
                    );
                }
            }
        }
    }

    /// Each `unsafe` block and `unsafe impl` of `text` has a `// SAFETY:` comment right above
    /// its line (the comment's last line being the one above), and each comment has one.
    fn every_unsafe_has_its_safety_comment(text: &str) {
        let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
        let (mut unsafes, mut comments) = (0, 0);
        for (k, line) in lines.iter().enumerate() {
            if line.starts_with("// SAFETY: ") {
                comments += 1;
            }
            if line.contains("unsafe {") || line.starts_with("unsafe impl") {
                unsafes += 1;
                let start = lines[..k]
                    .iter()
                    .rposition(|l| !l.starts_with("// ") || l.starts_with("// SAFETY: "));
                assert!(
                    start.is_some_and(|s| lines[s].starts_with("// SAFETY: ")),
                    "no SAFETY comment above line {}: {line}",
                    k + 1
                );
            }
        }
        assert_eq!(
            unsafes, comments,
            "a SAFETY comment for each unsafe, and no other"
        );
    }

    fn printed(tokens: TokenStream) -> String {
        let text = print(tokens.clone());
        same_tokens(tokens, &text);
        text
    }

    #[test]
    fn spaces_follow_what_the_tokens_are() {
        let cases = [
            (quote!(let a = b < c;), "let a = b < c;\n"),
            (
                quote!(let v: Vec<Vec<u8>> = Vec::<u8>::new();),
                "let v: Vec<Vec<u8>> = Vec::<u8>::new();\n",
            ),
            (
                quote!(
                    fn f<'a>(x: &'a [u8], y: &'static ::m::T) -> &'a u8 {}
                ),
                "fn f<'a>(x: &'a [u8], y: &'static ::m::T) -> &'a u8 {}\n",
            ),
            (
                quote!(let f = |a, b| a - -b * *c;),
                "let f = |a, b| a - -b * *c;\n",
            ),
            (
                quote!(let g = || !x && &y == z;),
                "let g = || !x && &y == z;\n",
            ),
            (
                quote!(let r = &mut x[..n]; let s = 0..n;),
                "let r = &mut x[..n];\nlet s = 0..n;\n",
            ),
            (
                quote!(
                    impl<'a> ::m::Tr<'a> for X<'a> {}
                ),
                "impl<'a> ::m::Tr<'a> for X<'a> {}\n",
            ),
            (
                quote!(let x = <T as ::m::Tr>::C as u32;),
                "let x = <T as ::m::Tr>::C as u32;\n",
            ),
            (
                quote!(
                    pub(crate) struct S(pub u8);
                ),
                "pub(crate) struct S(pub u8);\n",
            ),
            (quote!(m!(a); n! { b }), "m!(a);\nn! { b }\n"),
            (
                quote!(let a = x?.y; let b = [0u8; 4];),
                "let a = x?.y;\nlet b = [0u8; 4];\n",
            ),
            (
                quote!(let c = f(x) < y && a > b;),
                "let c = f(x) < y && a > b;\n",
            ),
            (quote!(let m = A | B | c;), "let m = A | B | c;\n"),
            (
                quote!(let t = y as <T as Tr>::Out;),
                "let t = y as <T as Tr>::Out;\n",
            ),
            (quote!(let s = S { a, ..d };), "let s = S { a, ..d };\n"),
        ];
        for (tokens, want) in cases {
            assert_eq!(printed(tokens), want);
        }
    }

    #[test]
    fn blocks_items_and_attributes_take_their_own_lines() {
        let text = printed(quote! {
            #[doc = r" One."]
            #[inline]
            fn f(x: u8) -> u8 { let y = x; match y { 0 => 1, _ => { g(); 2 } } }
            static A: [u8; 2] = [1, 2];
            struct S { a: u8, b: u8 }
            let z = unsafe { w() };
            #[__sigecs_safety = "v is sound here: the marker's text, wrapped to the width of the printer when it is longer than a line."]
            unsafe { v() }
        });
        assert_eq!(
            text,
            "/// One.\n#[inline]\nfn f(x: u8) -> u8 {\n    let y = x;\n    match y {\n        0 => 1,\n        \
             _ => {\n            g();\n            2\n        }\n    }\n}\nstatic A: [u8; 2] = [1, 2];\n\
             struct S {\n    a: u8,\n    b: u8\n}\nlet z = unsafe { w() };\n\
             // SAFETY: v is sound here: the marker's text, wrapped to the width of the printer when it is \
             longer\n// than a line.\n\
             unsafe {\n    v()\n}\n"
        );
    }

    #[test]
    fn long_groups_break_one_element_to_a_line_and_words_fill_lines() {
        let long: Vec<_> = (0..40u32)
            .map(|i| quote::format_ident!("element_{i}"))
            .collect();
        let text = printed(quote!(call(#(#long.len()),*);));
        assert_eq!(text.lines().count(), 42, "{text}");
        assert!(text.starts_with("call(\n    element_0.len(),\n    element_1.len(),\n"));
        assert!(text.ends_with("    element_39.len()\n);\n"), "{text}");
        let numbers: Vec<u32> = (0..200).collect();
        let text = printed(quote!(static N: [u32; 200] = [#(#numbers),*];));
        assert!(text.lines().count() < 20, "{text}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        // The width counts the indentation, also for a group that starts its line: these 89
        // characters fit at column 0 (and 7) but not three blocks in (12).
        let mut args: Vec<_> = (0..7u32)
            .map(|i| quote::format_ident!("argument{i}"))
            .collect();
        args.push(quote::format_ident!("last"));
        let flat = printed(quote!((#(#args),*)));
        assert_eq!(flat.lines().count(), 1, "{flat}");
        let deep = printed(quote!(fn f() { fn g() { fn h() { (#(#args),*) } } }));
        assert!(
            deep.contains("            (\n                argument0, argument1,"),
            "{deep}"
        );
        // One element hugs its delimiters and breaks inside.
        let text = printed(quote!(f({
            let a = 1;
            a
        })));
        assert_eq!(text, "f({\n    let a = 1;\n    a\n})\n");
        // One element whose start does not fit goes on a line of its own.
        let text = printed(quote!(
            static EVENTS: [Info; 1] = [::sigecs::__private::EventInfo::of::<
                crate::long::module::path::Event,
            >("Event")];
        ));
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert!(
            text.contains("= [\n    ::sigecs::__private::EventInfo::of::<"),
            "{text}"
        );
    }

    /// A generic argument list or a statement's right side that does not fit breaks: the
    /// arguments one to a line, the right side on the next line, one level in.
    #[test]
    fn long_generic_lists_and_statements_break() {
        let text = printed(quote! {
            fn f() {
                m.copy::<crate::components::physics::Acceleration, ShipRow, crate::components::physics::Acceleration>(0, 0, 1, 16);
                static TABLES: ::std::sync::OnceLock<::sigecs::__private::Tables<::sigecs::ComponentBits<1>>> = ::std::sync::OnceLock::new();
                static COLUMN_TYPES: [::sigecs::__private::ColumnType; 14usize] = ::sigecs::__private::column_types(&COMPONENTS, &IDS);
                let short = Vec::<u8>::new();
            }
        });
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert_eq!(
            text,
            "fn f() {\n    m.copy::<\n        crate::components::physics::Acceleration,\n        ShipRow,\n        \
             crate::components::physics::Acceleration\n    >(0, 0, 1, 16);\n    \
             static TABLES: ::std::sync::OnceLock<\n        ::sigecs::__private::Tables<::sigecs::ComponentBits<1>>\n    \
             > = ::std::sync::OnceLock::new();\n    \
             static COLUMN_TYPES: [::sigecs::__private::ColumnType; 14usize] =\n        \
             ::sigecs::__private::column_types(&COMPONENTS, &IDS);\n    \
             let short = Vec::<u8>::new();\n}\n"
        );
    }

    #[test]
    fn doc_attributes_become_comments_only_when_one_line_says_the_same() {
        assert_eq!(doc_text(r#"r" A `b`.""#).as_deref(), Some(" A `b`."));
        assert_eq!(
            doc_text(r##"r#" quote "x""#"##).as_deref(),
            Some(r#" quote "x""#)
        );
        assert_eq!(
            doc_text(r#""say \"hi\" \\ now""#).as_deref(),
            Some(r#"say "hi" \ now"#)
        );
        assert_eq!(doc_text(r#""two\nlines""#), None);
        // `////` would be a plain comment, and the doc lost.
        assert_eq!(doc_text(r#"r"/ path""#), None);
        let text = printed(quote!(
            #[doc = "/ a path"]
            #[doc = " a doc"]
            struct S;
        ));
        assert_eq!(text, "#[doc = \"/ a path\"]\n/// a doc\nstruct S;\n");
        assert_eq!(doc_text(r#""\u{41}""#), None);
        let text = printed(quote!(
            #[doc = "two\nlines"]
            struct S;
        ));
        assert!(
            text.starts_with("#[doc = \"two\\nlines\"]\nstruct S;"),
            "{text}"
        );
    }
}
