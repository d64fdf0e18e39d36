#!/usr/bin/env python3
"""Gives the workspace's crates the product's name.

    ecs-core     -> sigecs         (the runtime a game depends on; directory sigecs/)
    ecs-codegen  -> sigecs-build   (the build script's generator; directory sigecs-build/)
    ecs-derive   -> sigecs-derive
    ecs-decl     -> sigecs-decl
    ecs-rules    -> sigecs-rules
    sigecs (the root package: bundled world, main job, tests, benchmarks)
                 -> sigecs-demo    (publish = false; its binary is still `sigecs`)

Run from the repository root, without arguments: ``python3 scripts/rename_crates.py``.

The renaming is by rules, not by a list of places, so it applies to any commit of the tree:

1. The crate directories move with ``git mv`` (a directory is named after its crate).
2. Every text file git tracks is rewritten:
   - first, while the root package is still called ``sigecs``, the places that name the root
     package (its library's paths ``sigecs::...`` in Rust code and docs, ``-p sigecs`` and
     similar cargo arguments, its ``[package]`` name in Cargo.toml, its entries in Cargo.lock,
     a dependency on it, the README's crate table) become ``sigecs-demo`` / ``sigecs_demo``;
   - then every old crate name, in its package form (``ecs-core``, in manifests, paths,
     commands and prose) and its Rust form (``ecs_core``, in paths, ``quote!`` output and
     generated code), becomes the new one. A name counts only as a whole word, so ``specs-derive``
     or ``bevy_ecs_core`` would stay as they are.
3. Cargo re-sorts the lock files (``cargo metadata``), rustfmt re-wraps lines whose length
   changed, and the snapshots that hold compiler or generator output (the generator's golden
   file, the runtime's public API list, the trybuild ``.stderr`` files) are regenerated; the
   script then checks that each regenerated snapshot differs from its text-rewritten form only in
   layout (wrapping, underline markers and columns, the order of sorted lines), and lists any
   that do not.

Running it again on its own output changes nothing: the root package is renamed only while it
is still called ``sigecs``, and no old name is left for the second step to find.
Set ``RENAME_SKIP_CARGO=1`` to do only steps 1 and 2.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path.cwd()
SELF = Path(__file__).resolve()

# Old package name -> new package name. The directory of each crate is its package name.
CRATES = {
    "ecs-core": "sigecs",
    "ecs-codegen": "sigecs-build",
    "ecs-derive": "sigecs-derive",
    "ecs-decl": "sigecs-decl",
    "ecs-rules": "sigecs-rules",
}

ROOT_OLD = "sigecs"
ROOT_NEW = "sigecs-demo"
ROOT_DESCRIPTION = (
    "The bundled world of sigecs: its declarations, the main job (the `sigecs` binary), "
    "the integration tests and the benchmarks."
)

# Packages whose output holds compiler or generator text, regenerated after the rewrite:
# (environment variable, cargo arguments, files written).
SNAPSHOTS = [
    ("UPDATE_GOLDEN", ["-p", "sigecs-build", "--test", "golden"], ["sigecs-build/tests/golden"]),
    ("UPDATE_PUBLIC_API", ["-p", "sigecs", "--test", "public_api"], ["sigecs/tests/public-api.txt"]),
    ("TRYBUILD", ["-p", ROOT_NEW, "--test", "derive"], ["tests/ui"]),
]

WORD = r"[A-Za-z0-9_]"


def crate_rules() -> list[tuple[re.Pattern, str]]:
    """Old crate names -> new ones, as package names (with '-') and as Rust names (with '_')."""
    rules = []
    for old, new in CRATES.items():
        # A package name: not part of a longer name (`specs-derive`, `ecs-core2`).
        rules.append((re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(old)}(?!{WORD})"), new))
        old_rs, new_rs = old.replace("-", "_"), new.replace("-", "_")
        rules.append((re.compile(rf"(?<!{WORD}){re.escape(old_rs)}(?!{WORD})"), new_rs))
    return rules


# Wording the rules above would leave awkward, rewritten once more.
FIXUPS = [
    # The root package re-exports the runtime (`sigecs_demo::sigecs`); its own targets depend
    # on the runtime directly, so they name it directly.
    (re.compile(r"(?<![A-Za-z0-9_$-])sigecs_demo::sigecs::"), "sigecs::"),
    # The runtime's crate-level heading (it was "ecs-core: the sigecs runtime").
    (re.compile(r"# sigecs: the sigecs runtime"), "# sigecs: the runtime"),
]


def root_rules() -> list[tuple[re.Pattern, str]]:
    """Places that name the root package `sigecs` (valid only before the runtime takes the name)."""
    demo_rs = ROOT_NEW.replace("-", "_")
    return [
        # The root library's paths: `sigecs::World`, `use sigecs::{..}`.
        (re.compile(rf"(?<![A-Za-z0-9_$-]){ROOT_OLD}::"), f"{demo_rs}::"),
        # The root library renamed in a use (`# use sigecs as my_game;` in the README).
        (re.compile(rf"(?<=\buse ){ROOT_OLD}(?= as )"), demo_rs),
        # Cargo arguments naming the package.
        (
            re.compile(rf"(?<=(?:-p |-p=))({ROOT_OLD})(?![A-Za-z0-9_-])"),
            ROOT_NEW,
        ),
        (
            re.compile(
                rf"(?<=--package[ =]|--exclude[ =])({ROOT_OLD})(?![A-Za-z0-9_-])"
            ),
            ROOT_NEW,
        ),
        (re.compile(rf"(--test-package[ =]){ROOT_OLD}(?![A-Za-z0-9_-])"), rf"\g<1>{ROOT_NEW}"),
        # The README's table of crates.
        (re.compile(rf"`{ROOT_OLD}` \(root\)"), f"`{ROOT_NEW}` (root)"),
    ]


def manifest_root_rules(path: Path, text: str) -> str:
    """Cargo.toml / Cargo.lock entries of the root package."""
    name = path.name
    if name == "Cargo.lock":
        text = re.sub(rf'(?m)^name = "{ROOT_OLD}"$', f'name = "{ROOT_NEW}"', text)
        text = re.sub(rf'(?m)^ "{ROOT_OLD}( [^"]*)?",$', rf' "{ROOT_NEW}\1",', text)
        return text
    if name != "Cargo.toml":
        return text
    # A dependency on the root package (fuzz/): `sigecs = { path = ".." }`.
    text = re.sub(rf"(?m)^{ROOT_OLD}(\s*=)", rf"{ROOT_NEW}\1", text)
    text = re.sub(rf'"{ROOT_OLD}/', f'"{ROOT_NEW}/', text)
    text = re.sub(rf'"dep:{ROOT_OLD}"', f'"dep:{ROOT_NEW}"', text)
    if path.resolve() == (ROOT / "Cargo.toml").resolve():
        text = rename_root_package(text)
    return text


def sections(text: str) -> list[tuple[str, str]]:
    """The manifest split at its table headers: (header as written, `[package]` or `[[bin]]`,
    or '' before the first; body including the header)."""
    parts = re.split(r"(?m)^(?=\[)", text)
    out = []
    for part in parts:
        m = re.match(r"\[\[?[^\]]*\]\]?", part)
        out.append((m.group(0).replace(" ", "") if m else "", part))
    return out


# The root package's binary keeps the name `sigecs`, so that `cargo run --release` runs the main
# job; declared explicitly to leave it out of `cargo doc` (see the comment it carries).
BIN_TABLE = f"""\
# The main job. Named like the runtime, so its documentation would take the runtime's place in
# target/doc/: `cargo doc` documents the runtime only.
[[bin]]
name = "{ROOT_OLD}"
path = "src/bin/{ROOT_OLD}/main.rs"
doc = false

"""


def rename_root_package(text: str) -> str:
    out = []
    bin_declared = False
    for header, body in sections(text):
        if header == "[[bin]]" and re.search(rf'(?m)^name = "{ROOT_OLD}"$', body):
            bin_declared = True
            if not re.search(r"(?m)^doc\s*=", body):
                body = re.sub(rf'(?m)^(name = "{ROOT_OLD}"\n)', r"\1doc = false\n", body)
        if header == "[package]":
            body = re.sub(rf'(?m)^name = "{ROOT_OLD}"$', f'name = "{ROOT_NEW}"', body)
            body = re.sub(
                r'(?m)^description = ".*"$',
                lambda _: f'description = "{ROOT_DESCRIPTION}"',
                body,
            )
        out.append(body)
    if not bin_declared and (ROOT / f"src/bin/{ROOT_OLD}/main.rs").is_file():
        # After the [package] table and the comments that follow it.
        i = next(i for i, (h, _) in enumerate(sections(text)) if h == "[package]")
        out.insert(i + 1, BIN_TABLE)
    return "".join(out)


def root_package_name() -> str | None:
    manifest = (ROOT / "Cargo.toml").read_text()
    for header, body in sections(manifest):
        if header == "[package]":
            m = re.search(r'(?m)^name = "([^"]+)"', body)
            return m.group(1) if m else None
    return None


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def tracked_files() -> list[Path]:
    files = git("ls-files", "-z").split("\0")
    return [ROOT / f for f in files if f and (ROOT / f).is_file()]


def move_directories() -> None:
    for old, new in CRATES.items():
        src, dst = ROOT / old, ROOT / new
        if src.is_dir() and not dst.exists():
            git("mv", old, new)
            print(f"moved {old}/ -> {new}/")
        elif src.is_dir():
            sys.exit(f"both {old}/ and {new}/ exist: move or remove one by hand")


def rewrite_files(rename_root: bool) -> list[Path]:
    crates = crate_rules()
    roots = root_rules() if rename_root else []
    changed = []
    for path in tracked_files():
        if path.resolve() == SELF:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (levels, corpora, images)
        new = text
        if rename_root:
            new = manifest_root_rules(path, new)
            for pattern, repl in roots:
                new = pattern.sub(repl, new)
        for pattern, repl in crates + FIXUPS:
            new = pattern.sub(repl, new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def run(args: list[str], cwd: Path, env: dict | None = None) -> None:
    print("+", " ".join(args), f"(in {cwd.relative_to(ROOT) or '.'})", flush=True)
    subprocess.run(args, cwd=cwd, check=True, env={**os.environ, **(env or {})})


def workspaces() -> list[Path]:
    """The root workspace and the separate ones beside it (fuzz/, compare/)."""
    out = [ROOT]
    for manifest in sorted(ROOT.glob("*/Cargo.toml")):
        text = manifest.read_text()
        if "[workspace]" in text and (manifest.parent / "Cargo.lock").exists():
            out.append(manifest.parent)
    return out


def snapshot_files() -> dict[Path, str]:
    files = {}
    for _, _, paths in SNAPSHOTS:
        for p in paths:
            p = ROOT / p
            for f in [p] if p.is_file() else sorted(p.rglob("*")):
                if f.is_file():
                    files[f] = f.read_text(encoding="utf-8")
    return files


def only_layout(a: str, b: str) -> bool:
    """Whether two snapshots differ only in layout: whitespace and line wrapping, rustc's
    underline markers and columns (a renamed path is shorter or longer), the order of sorted
    lines (the public API list is sorted by path)."""
    strip = re.compile(r"[\s^\-|~]+")
    column = re.compile(r"(\.rs:\d+):\d+")

    def lines(text: str) -> list[str]:
        text = column.sub(r"\1", text)
        return sorted(filter(None, (strip.sub("", line) for line in text.splitlines())))

    return strip.sub("", a) == strip.sub("", b) or lines(a) == lines(b)


def regenerate() -> None:
    for ws in workspaces():
        # Re-sorts Cargo.lock after the renames (no version changes: offline where possible).
        args = ["cargo", "metadata", "--format-version", "1", "--offline"]
        if subprocess.run(args, cwd=ws, capture_output=True).returncode != 0:
            args.remove("--offline")
            subprocess.run(args, cwd=ws, check=True, capture_output=True)
        run(["cargo", "fmt", "--all"], ws)
    before = snapshot_files()
    for var, args, _ in SNAPSHOTS:
        value = "overwrite" if var == "TRYBUILD" else "1"
        run(["cargo", "test", *args], ROOT, {var: value})
    after = snapshot_files()
    odd = [
        f.relative_to(ROOT)
        for f in sorted(set(before) | set(after))
        if not only_layout(before.get(f, ""), after.get(f, ""))
    ]
    if odd:
        print("regenerated snapshots that differ in more than layout (check them):")
        for f in odd:
            print(f"  {f}")
    else:
        print("regenerated snapshots differ from the rewritten text only in layout")


def main() -> None:
    if not (ROOT / "Cargo.toml").is_file() or "[workspace]" not in (ROOT / "Cargo.toml").read_text():
        sys.exit("run from the repository root: python3 scripts/rename_crates.py")
    rename_root = root_package_name() == ROOT_OLD
    move_directories()
    changed = rewrite_files(rename_root)
    print(f"rewrote {len(changed)} files" + (" (root package renamed)" if rename_root else ""))
    if os.environ.get("RENAME_SKIP_CARGO"):
        return
    regenerate()


if __name__ == "__main__":
    main()
