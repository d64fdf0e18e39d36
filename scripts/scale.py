#!/usr/bin/env python3
"""Scale benchmark for the generated world: lines, build time and memory by size.

For each size C x S x Y (components x signatures x systems) this script generates a complete
user crate, deterministic for a seed, under ``target/scale/<size>/``:

* ``Cargo.toml``: the README quick start's: ``sigecs`` as a path dependency and
  ``sigecs-build`` as a path build-dependency (this workspace), and its recommended optimised
  build script, ``[profile.dev.build-override]`` and ``[profile.release.build-override]`` with
  ``opt-level = 1`` (``--build-override LEVEL`` sets another level, ``--build-override none``
  leaves the sections out: cargo's default, an unoptimised build script); plus an empty
  ``[workspace]`` table (the crate lives inside this workspace's ``target/`` but is not a
  member), and a copy of the workspace ``Cargo.lock`` so the versions match;
* ``build.rs``: the README quick start's build script, with ``std::time::Instant`` around
  ``generate_or_exit()``; it writes the milliseconds to ``$OUT_DIR/scale_build_ms.txt``;
* ``src/components/``: ``mod.rs`` (``pub mod`` + ``pub use`` of every file), 8 component files
  (``#[derive(Component, Clone, Copy, Default)] pub struct C17(pub [f32; N]);``, N in 1..=4),
  8 signature files (2..=10 distinct components each, all component sets distinct, about one in
  eight ``#[signature(layout = "rows")]``), ``resources.rs`` (a handful of
  ``#[derive(Resource, Default)] pub struct R0(pub f32);``) and 8 system files: 1-3 component
  parameters taken from one declared signature (so every system matches at least one store), some
  ``#[system(without(Cx))]`` filters that the chosen signature satisfies, some ``Option<&C>``
  parameters, some resource reads, very few resource writes (sequential systems) and some
  ``entity: Entity, commands: &mut Commands`` systems;
* ``src/main.rs``: includes the world, spawns one entity of a few signatures and runs
  ``let _ = world.run_schedule();`` (works whether it returns ``()`` or a ``Result``).

It then measures, per size:

* the generated ``world.rs``: total lines, and lines per construct, found by name: the model
  tables (``static``/``const`` items such as ``COMPONENTS``, ``STORES``, ``SYSTEMS``,
  ``SCHEDULE``, with their doc comments and attributes), the ``fn system_<i>`` passes, the
  ``fn stage_<k>`` passes (stages of several systems; a stage of one runs its system's pass),
  and the rest;
* the model: sum of signature sizes, matched (system, store) pairs (computed here from the
  declarations: a system matches a signature holding all its non-``Option`` components and none
  of its ``without`` components), and the number of stages (``STAGE_PASSES``' length; the
  stage count predicted here from the README's rule is printed beside it in the progress lines);
* the build script's time (from the file it writes; debug profile, with the build-override
  above: its dependencies are compiled optimised once per target dir, in the stub build), and
  its process's CPU time (every thread, from ``/proc/self/stat``, 10 ms resolution): on a
  busy machine the CPU time moves less than the wall time, but with the generator's second
  thread it is the sum of both threads, more than the wall time on an idle machine;
* the crate's debug and release build times after a change to its component files, excluding
  dependencies. Per profile: the crate is first built with a one-component stub declaration set
  (this compiles and warms every dependency and the build script), then the real declarations
  and ``main.rs`` are written and only that rebuild is timed. It is the build a user waits for
  after changing a component file: the build script reruns and the crate compiles. In release it
  is the same as ``touch`` + rebuild (no incremental compilation). In debug, incremental
  compilation is on (cargo's default) and the stub's cache is useless for the real world, so it
  is a full compile of the crate; the column ``debug touch s`` is then ``touch`` of one
  component file + rebuild with the warm incremental cache (the best case);
* rustc's peak memory during the timed rebuilds (``VmHWM`` of the crate's rustc process, polled
  from ``/proc``), the maximum over debug and release.

Dependencies are shared between sizes through one ``CARGO_TARGET_DIR``
(``target/scale-target``), so they compile once. If a dependency is rebuilt inside a timed
build (another engineer edited the workspace meanwhile) the measurement is redone once and the
row is flagged otherwise. ``CARGO_BUILD_JOBS`` defaults to 2.

Finally it prints the table and fits, by least squares (normal equations solved by hand),

    generated lines = a * (sum of signature sizes) + b * (matched pairs) + c * (systems) + d

printing the law and the largest relative residual, and writes the table and law as markdown
to ``--out FILE`` if given.

Usage::

    python3 scripts/scale.py [--sizes 16x32x16,64x256x64,...] [--seed N] [--no-release]
                             [--out FILE] [--timeout SECONDS] [--mem-limit-gb GB]
                             [--build-override LEVEL] [--generate-only]

Default sizes: 16x32x16, 32x64x32, 64x256x64, 128x512x128, 128x1024x256. A build over
``--timeout`` seconds (default 1800) or whose rustc exceeds ``--mem-limit-gb`` (default 12) is
stopped and reported as such. A build that fails keeps its log in
``target/scale/<size>/build-<profile>.log``; its first errors are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKSPACE = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = "16x32x16,32x64x32,64x256x64,128x512x128,128x1024x256"
N_FILES = 8
N_RESOURCES = 4
START = time.monotonic()


def log(msg: str) -> None:
    """A progress line: elapsed time since the script started, load average, message."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"[{time.monotonic() - START:7.1f}s load {load:4.1f}] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# The declarations
# --------------------------------------------------------------------------------------------


@dataclass
class System:
    name: str
    comps: list[int]  # component params; comps[0] is `&mut` unless writes_resource
    option: int | None = None  # an `Option<&C>` param
    without: int | None = None  # `#[system(without(C))]`
    reads_resource: int | None = None
    writes_resource: int | None = None
    commands: bool = False

    def reads(self) -> set[str]:
        r = {f"C{c}" for c in (self.comps if self.writes_resource is not None else self.comps[1:])}
        if self.option is not None:
            r.add(f"C{self.option}")
        if self.reads_resource is not None:
            r.add(f"R{self.reads_resource}")
        return r

    def writes(self) -> set[str]:
        w = set()
        if self.writes_resource is not None:
            w.add(f"R{self.writes_resource}")
        else:
            w.add(f"C{self.comps[0]}")
        return w


@dataclass
class Decls:
    n_components: int
    widths: list[int]  # N of `[f32; N]` per component
    signatures: list[list[int]]  # sorted component ids
    rows: list[bool]
    systems: list[System]

    def sig_size_sum(self) -> int:
        return sum(len(s) for s in self.signatures)

    def matches(self, y: System, sig: list[int]) -> bool:
        have = set(sig)
        return set(y.comps) <= have and (y.without is None or y.without not in have)

    def matched_pairs(self) -> int:
        return sum(1 for y in self.systems for s in self.signatures if self.matches(y, s))

    def predicted_stages(self) -> int:
        """The generator's rule (README "Schedule", `analyze::place_in_stages`): each system,
        in declaration order, goes into the first allowed stage after every earlier system it
        conflicts with (one writes a component or resource the other reads or writes) or that
        issues Commands; a Commands system no earlier than the last stage used so far; a
        resource writer alone in a stage of its own."""
        # Declaration order is the scan's: file by file (sys_0.rs holds y0, y8, y16, ...).
        order = sorted(self.systems, key=lambda y: (int(y.name[1:]) % N_FILES, int(y.name[1:])))
        stage: list[int] = []
        exclusive: list[bool] = []
        for i, y in enumerate(order):
            lower = 0
            for j in range(i):
                x = order[j]
                conflict = x.writes() & (y.reads() | y.writes()) or y.writes() & (x.reads() | x.writes())
                if conflict or x.commands:
                    lower = max(lower, stage[j] + 1)
            if y.commands:
                lower = max(lower, max(stage, default=0))
            if y.writes_resource is not None:
                k = max(lower, len(exclusive))
            else:
                k = lower
                while k < len(exclusive) and exclusive[k]:
                    k += 1
            if len(exclusive) <= k:
                exclusive += [False] * (k + 1 - len(exclusive))
            exclusive[k] = exclusive[k] or y.writes_resource is not None
            stage.append(k)
        return max(stage) + 1 if stage else 0


def make_decls(c: int, s: int, y: int, seed: int) -> Decls:
    rng = random.Random(f"sigecs-scale-{seed}-{c}x{s}x{y}")
    widths = [rng.randint(1, 4) for _ in range(c)]
    seen: set[tuple[int, ...]] = set()
    sigs: list[list[int]] = []
    max_size = min(10, c)
    if c < 2:
        raise SystemExit("need at least 2 components")
    attempts = 0
    while len(sigs) < s:
        attempts += 1
        if attempts > 1000 * s:
            raise SystemExit(f"cannot find {s} distinct signatures over {c} components")
        size = rng.randint(2, max_size)
        members = set()
        if len(sigs) < c:
            members.add(len(sigs))  # every component is in some signature
        while len(members) < size:
            members.add(rng.randrange(c))
        key = tuple(sorted(members))
        if key in seen:
            continue
        seen.add(key)
        sigs.append(list(key))
    rows = [rng.random() < 0.125 for _ in range(s)]

    systems: list[System] = []
    for j in range(y):
        sig = rng.choice(sigs)
        k = min(len(sig), rng.choice([1, 1, 2, 2, 2, 3, 3]))
        comps = rng.sample(sig, k)
        sy = System(name=f"y{j}", comps=comps)
        if j % 8 == 5:
            sy.commands = True
        if j % 29 == 11:
            sy.writes_resource = 1  # very few: a resource writer runs sequentially
        if rng.random() < 0.4:
            r = rng.randrange(N_RESOURCES)
            if r != sy.writes_resource:
                sy.reads_resource = r
        outside = [x for x in range(c) if x not in sig]
        if outside and rng.random() < 0.2:
            sy.without = rng.choice(outside)  # the chosen signature still matches
        others = [x for x in range(c) if x not in comps and x != sy.without]
        if others and rng.random() < 0.1:
            sy.option = rng.choice(others)
        systems.append(sy)
    return Decls(c, widths, sigs, rows, systems)


# --------------------------------------------------------------------------------------------
# The crate
# --------------------------------------------------------------------------------------------

BUILD_RS = """\
// build.rs: the README quick start's build script, timed.
fn main() {
    let start = std::time::Instant::now();
    sigecs_build::Builder::new()
        .scan("src/components", "crate::components")
        .generate_or_exit();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let out = std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts");
    std::fs::write(
        std::path::Path::new(&out).join("scale_build_ms.txt"),
        format!("{ms:.3}"),
    )
    .expect("the build script can write into OUT_DIR");
    // CPU time of the whole process, every thread (utime + stime of /proc/self/stat, in
    // USER_HZ = 100 ticks per second), when there is one.
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        if let (Some(u), Some(s)) = (fields.get(11), fields.get(12)) {
            if let (Ok(u), Ok(s)) = (u.parse::<u64>(), s.parse::<u64>()) {
                let _ = std::fs::write(
                    std::path::Path::new(&out).join("scale_build_cpu_ms.txt"),
                    format!("{}", (u + s) * 10),
                );
            }
        }
    }
}
"""

STUB_MOD = """\
//! Stub declarations: the first build compiles the dependencies and the build script.
use sigecs::prelude::*;

#[derive(Component, Clone, Copy, Default)]
pub struct Stub(pub f32);

#[derive(Signature)]
pub struct StubSig {
    pub stub: Stub,
}

#[system]
pub fn stub_system(stub: &mut Stub) {
    stub.0 += 1.0;
}
"""

STUB_MAIN = """\
mod components;

include!(concat!(env!("OUT_DIR"), "/world.rs"));

fn main() {
    let mut world = World::new();
    let _ = world.spawn(components::StubSig { stub: components::Stub(1.0) });
    let _ = world.run_schedule();
}
"""


BUILD_OVERRIDE: str | None = "1"  # --build-override LEVEL; None: no build-override section


def cargo_toml(name: str) -> str:
    text = f"""\
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
sigecs = {{ path = "{WORKSPACE / 'ecs-core'}" }}

[build-dependencies]
sigecs-build = {{ path = "{WORKSPACE / 'ecs-build'}" }}

# Not a member of the sigecs workspace it sits under.
[workspace]
"""
    if BUILD_OVERRIDE is not None:
        text += f"""
# The README quick start's recommendation: an optimised build script.
[profile.dev.build-override]
opt-level = {BUILD_OVERRIDE}

[profile.release.build-override]
opt-level = {BUILD_OVERRIDE}
"""
    return text


def component_files(d: Decls) -> dict[str, str]:
    files = {}
    for f in range(N_FILES):
        out = ["//! Components (generated by scripts/scale.py).", "use sigecs::prelude::*;", ""]
        for i in range(f, d.n_components, N_FILES):
            out.append("#[derive(Component, Clone, Copy, Default)]")
            out.append(f"pub struct C{i}(pub [f32; {d.widths[i]}]);")
            out.append("")
        files[f"comp_{f}.rs"] = "\n".join(out)
    return files


def signature_files(d: Decls) -> dict[str, str]:
    files = {}
    for f in range(N_FILES):
        out = ["//! Signatures (generated by scripts/scale.py).", "use super::*;", "use sigecs::prelude::*;", ""]
        for i in range(f, len(d.signatures), N_FILES):
            out.append("#[derive(Signature)]")
            if d.rows[i]:
                out.append('#[signature(layout = "rows")]')
            out.append(f"pub struct S{i} {{")
            for c in d.signatures[i]:
                out.append(f"    pub c{c}: C{c},")
            out.append("}")
            out.append("")
        files[f"sig_{f}.rs"] = "\n".join(out)
    return files


def resources_file() -> str:
    out = ["//! Resources (generated by scripts/scale.py).", "use sigecs::prelude::*;", ""]
    for r in range(N_RESOURCES):
        out.append("#[derive(Resource, Default)]")
        out.append(f"pub struct R{r}(pub f32);")
        out.append("")
    return "\n".join(out)


def system_source(y: System) -> str:
    names = ["a", "b", "c"]
    params = []
    if y.commands:
        params.append("entity: Entity")
    for n, comp in zip(names, y.comps):
        mut = "&mut " if (n == "a" and y.writes_resource is None) else "&"
        params.append(f"{n}: {mut}C{comp}")
    if y.option is not None:
        params.append(f"o: Option<&C{y.option}>")
    if y.reads_resource is not None:
        params.append(f"r: &R{y.reads_resource}")
    if y.writes_resource is not None:
        params.append(f"w: &mut R{y.writes_resource}")
    if y.commands:
        params.append("commands: &mut Commands")
    terms = [f"{n}.0[0]" for n in names[1 : len(y.comps)]] or ["1.0"]
    rhs = " + ".join(terms)
    if y.reads_resource is not None:
        rhs = f"({rhs}) * r.0"
    body = []
    if y.writes_resource is not None:
        body.append(f"    w.0 += a.0[0] + {rhs};")
        target = None
    else:
        body.append(f"    a.0[0] += {rhs};")
        target = "a"
    if y.option is not None:
        if target:
            body.append(f"    if let Some(o) = o {{\n        a.0[0] += o.0[0];\n    }}")
        else:
            body.append(f"    if let Some(o) = o {{\n        w.0 += o.0[0];\n    }}")
    if y.commands:
        body.append("    if a.0[0] > 1e30 {\n        commands.despawn(entity);\n    }")
    attr = "#[system]" if y.without is None else f"#[system(without(C{y.without}))]"
    return f"{attr}\npub fn {y.name}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}\n"


def system_files(d: Decls) -> dict[str, str]:
    files = {}
    for f in range(N_FILES):
        out = ["//! Systems (generated by scripts/scale.py).", "use super::*;", "use sigecs::prelude::*;", ""]
        for i in range(f, len(d.systems), N_FILES):
            out.append(system_source(d.systems[i]))
        files[f"sys_{f}.rs"] = "\n".join(out)
    return files


def real_files(d: Decls) -> dict[str, str]:
    """Every file of src/components/ and src/main.rs, relative to the crate."""
    comp = {}
    comp.update(component_files(d))
    comp.update(signature_files(d))
    comp["resources.rs"] = resources_file()
    comp.update(system_files(d))
    mods = sorted(n[:-3] for n in comp)
    mod_rs = ["//! Declarations (generated by scripts/scale.py).", "#![allow(unused_imports)]", ""]
    mod_rs += [f"pub mod {m};" for m in mods]
    mod_rs.append("")
    mod_rs += [f"pub use {m}::*;" for m in mods]
    files = {f"src/components/{n}": t for n, t in comp.items()}
    files["src/components/mod.rs"] = "\n".join(mod_rs) + "\n"

    picks = list(range(min(4, len(d.signatures))))
    picks += [i for i, r in enumerate(d.rows) if r][:2]
    main = [
        "//! Uses the generated world a little (generated by scripts/scale.py).",
        "mod components;",
        "#[allow(unused_imports)]",
        "use components::*;",
        "",
        'include!(concat!(env!("OUT_DIR"), "/world.rs"));',
        "",
        "fn main() {",
        "    let mut world = World::new();",
    ]
    for i in dict.fromkeys(picks):
        fields = ", ".join(f"c{c}: C{c}([1.0; {d.widths[c]}])" for c in d.signatures[i])
        main.append(f"    let _ = world.spawn(S{i} {{ {fields} }});")
    main += [
        "    let _ = world.run_schedule();",
        '    println!("{}", world.stats());',
        "}",
        "",
    ]
    files["src/main.rs"] = "\n".join(main)
    return files


def write_tree(root: Path, files: dict[str, str], clear_components: bool = True) -> None:
    comp = root / "src" / "components"
    if clear_components and comp.exists():
        shutil.rmtree(comp)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def write_stub(root: Path) -> None:
    write_tree(root, {"src/components/mod.rs": STUB_MOD, "src/main.rs": STUB_MAIN})


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


@dataclass
class BuildResult:
    ok: bool
    seconds: float
    cpu_seconds: float = 0.0  # user + system time of cargo and everything it ran
    load: float = 0.0  # 1-minute load average when the build ended
    peak_rustc_kb: int = 0
    peak_script_kb: int = 0
    out_dir: str | None = None
    rebuilt_deps: list[str] = field(default_factory=list)
    error: str = ""
    stopped: str = ""  # "timeout" or "memory" when the guard stopped it


def _proc_peak(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _watch(crate_name: str, stop: threading.Event, peaks: dict, limit_kb: int, proc, reason: list):
    """Polls /proc for the crate's rustc and build-script processes; records their peak RSS
    and stops the build (its own process group) if rustc exceeds the limit."""
    marker = f"--crate-name\0{crate_name}\0".encode()
    while not stop.is_set():
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            key = None
            if marker in cmd:
                key = "rustc"
            elif b"/build/" in cmd.split(b"\0", 1)[0] and b"build-script-build" in cmd.split(b"\0", 1)[0] \
                    and crate_name.replace("_", "-").encode() in cmd.split(b"\0", 1)[0]:
                key = "script"
            if key:
                kb = _proc_peak(int(entry))
                peaks[key] = max(peaks.get(key, 0), kb)
                if key == "rustc" and kb > limit_kb and not reason:
                    reason.append("memory")
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
        stop.wait(0.1)


def cargo_build(root: Path, crate_name: str, release: bool, target_dir: Path, log_path: Path,
                timeout: float, mem_limit_kb: int) -> BuildResult:
    args = ["cargo", "build", "--message-format=json-render-diagnostics"]
    if release:
        args.append("--release")
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(target_dir)
    env.setdefault("CARGO_BUILD_JOBS", "2")
    for k in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET_DIR"):
        env.pop(k, None)
    peaks: dict = {}
    reason: list = []
    stop = threading.Event()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    watcher = threading.Thread(target=_watch, args=(crate_name, stop, peaks, mem_limit_kb, proc, reason),
                               daemon=True)
    watcher.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        reason.append("timeout")
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    seconds = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    stop.set()
    watcher.join()
    out_text = stdout.decode(errors="replace")
    err_text = stderr.decode(errors="replace")
    log_path.write_text(err_text + "\n--- json ---\n" + out_text)
    res = BuildResult(ok=proc.returncode == 0 and not reason, seconds=seconds, cpu_seconds=cpu,
                      load=os.getloadavg()[0],
                      peak_rustc_kb=peaks.get("rustc", 0), peak_script_kb=peaks.get("script", 0),
                      stopped=reason[0] if reason else "")
    for line in out_text.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        reason_ = msg.get("reason")
        pkg = msg.get("package_id", "")
        ours = str(root) in pkg or crate_name.replace("_", "-") in pkg
        if reason_ == "build-script-executed" and ours:
            res.out_dir = msg.get("out_dir")
        if reason_ == "compiler-artifact" and not msg.get("fresh", True) and not ours:
            res.rebuilt_deps.append(msg.get("target", {}).get("name", pkg))
    if not res.ok:
        errs = [l for l in err_text.splitlines() if l.startswith("error") or l.lstrip().startswith("-->")]
        res.error = "\n".join(errs[:12]) or err_text[-2000:]
    return res


# --------------------------------------------------------------------------------------------
# Measuring world.rs
# --------------------------------------------------------------------------------------------

ITEM_RE = re.compile(
    r"^(?P<indent>\s*)(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?"
    r"(?:(?P<fn>fn)\s+(?P<fname>(?:system|stage)_\d+(?:_for)?)\b|(?P<kind>static|const)\s+(?P<sname>[A-Z][A-Z0-9_]*)\s*:)"
)


def classify_lines(text: str) -> dict[str, int]:
    """Lines of world.rs per construct: `tables` (static/const items with upper-case names, at
    any depth, but not the associated `const ID`-like items of impls), `systems` (fn system_i),
    `stages` (fn stage_k, and stage_k_for: a stage's pass that is its systems' passes too) and
    `other`. An item's doc comments, attributes and `//` comments just
    above it count with it. Relies on the generator's layout: an item ends at the first line
    with its own indentation that starts with a closing bracket."""
    lines = text.splitlines()
    owner = [None] * len(lines)
    i = 0
    while i < len(lines):
        m = ITEM_RE.match(lines[i])
        if not m or owner[i] is not None:
            i += 1
            continue
        if m.group("fn"):
            kind = "systems" if m.group("fname").startswith("system_") else "stages"
        else:
            # associated consts inside impls (`const ID: u32 = 0u32;`) are per-item impls, not tables
            if m.group("kind") == "const" and m.group("sname") in ("ID", "STORE"):
                i += 1
                continue
            kind = "tables"
        indent = m.group("indent")
        start = i
        while start > 0 and lines[start - 1].startswith(indent) and \
                lines[start - 1][len(indent):].lstrip() == lines[start - 1][len(indent):] and \
                lines[start - 1][len(indent):].startswith(("///", "#[", "//")):
            start -= 1
        end = i
        balance = sum(lines[i].count(o) - lines[i].count(c) for o, c in ("{}", "[]", "()"))
        if not (balance == 0 and lines[i].rstrip().endswith((";", "}"))):
            j = i + 1
            while j < len(lines):
                l = lines[j]
                rest = l[len(indent):]
                if l.startswith(indent) and (rest.startswith(("}", "]"))
                                             or (rest.startswith(")") and rest.rstrip().endswith(";"))):
                    break
                j += 1
            end = min(j, len(lines) - 1)
        for k in range(start, end + 1):
            if owner[k] is None:
                owner[k] = kind
        i = end + 1
    counts = {"total": len(lines), "tables": 0, "systems": 0, "stages": 0, "other": 0}
    for o in owner:
        counts[o or "other"] += 1
    counts["stage_fns"] = len(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?fn\s+stage_\d+\b", text, re.M))
    counts["system_fns"] = len(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?fn\s+system_\d+\b", text, re.M))
    # The schedule's stage count: the length of the STAGE_PASSES table (a stage of one system
    # has no `fn stage_<k>` of its own; it runs that system's pass).
    m = re.search(r"static\s+STAGE_PASSES:\s*\[[^;]*;\s*(\d+)\s*\]", text)
    counts["stage_count"] = int(m.group(1)) if m else 0
    return counts


# --------------------------------------------------------------------------------------------
# Fit
# --------------------------------------------------------------------------------------------


def solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None if singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-12 * max(1.0, max(abs(x) for row in m for x in row[:n])):
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= f * m[col][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def least_squares(xs: list[list[float]], ys: list[float]) -> list[float] | None:
    """Normal equations (X^T X) beta = X^T y, columns scaled to unit max for conditioning."""
    k = len(xs[0])
    scale = [max(abs(x[j]) for x in xs) or 1.0 for j in range(k)]
    xn = [[x[j] / scale[j] for j in range(k)] for x in xs]
    xtx = [[sum(r[i] * r[j] for r in xn) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * y for r, y in zip(xn, ys)) for i in range(k)]
    beta = solve(xtx, xty)
    if beta is None:
        return None
    return [b / s for b, s in zip(beta, scale)]


def fit_law(rows: list[dict]) -> tuple[str, float | None]:
    good = [r for r in rows if r.get("lines")]
    # Systems rather than stages: every system has a pass of its own (about 80 lines whatever
    # it matches), a stage of several systems one more, and the two counts move together.
    terms = [("sum of signature sizes", "sig_sum"), ("matched pairs", "pairs"), ("systems", "systems")]
    while True:
        k = len(terms) + 1
        if len(good) < k:
            if len(terms) == 0:
                return "no successful size: nothing to fit", None
            if len(good) >= 2 and len(terms) > 1:
                terms = terms[:-1]
                continue
            return f"need at least {k} successful sizes to fit (have {len(good)})", None
        xs = [[float(r[key]) for _, key in terms] + [1.0] for r in good]
        ys = [float(r["lines"]["total"]) for r in good]
        beta = least_squares(xs, ys)
        if beta is None:
            terms = terms[:-1]
            if not terms:
                return "degenerate sizes: cannot fit", None
            continue
        break
    parts = [f"{beta[i]:.2f}·({name})" for i, (name, _) in enumerate(terms)]
    law = "generated lines ≈ " + " + ".join(parts) + f" + {beta[-1]:.0f}"
    worst = 0.0
    for x, y in zip(xs, ys):
        pred = sum(b * v for b, v in zip(beta, x))
        worst = max(worst, abs(pred - y) / y)
    if len(good) == k:
        law += f"  (exact: {len(good)} sizes for {k} unknowns)"
    return law, worst


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def measure_profile(root: Path, crate: str, decls: Decls, release: bool, target_dir: Path,
                    timeout: float, mem_limit_kb: int, label: str) -> dict:
    prof = "release" if release else "debug"
    real = real_files(decls)
    out: dict = {}
    for attempt in (1, 2):
        log(f"{label}: {prof}: stub build (dependencies, build script){' (retry)' if attempt > 1 else ''}")
        write_stub(root)
        warm = cargo_build(root, crate, release, target_dir, root / f"build-{prof}-stub.log", timeout, mem_limit_kb)
        if not warm.ok:
            log(f"{label}: {prof}: stub build FAILED in {warm.seconds:.1f}s ({warm.stopped or 'error'}):\n{warm.error}")
            out["error"] = f"stub build failed (workspace or stub): {warm.error}"
            return out
        log(f"{label}: {prof}: stub build {warm.seconds:.1f}s; writing the declarations, timed rebuild")
        write_tree(root, real)
        res = cargo_build(root, crate, release, target_dir, root / f"build-{prof}.log", timeout, mem_limit_kb)
        if not res.ok:
            what = res.stopped or "compile error"
            log(f"{label}: {prof}: build FAILED after {res.seconds:.1f}s ({what}); log {root / f'build-{prof}.log'}\n{res.error}")
            out["error"] = f"{prof} build {what} after {res.seconds:.0f}s: {res.error}"
            out["peak_kb"] = res.peak_rustc_kb
            return out
        if res.rebuilt_deps and attempt == 1:
            log(f"{label}: {prof}: dependencies were rebuilt during the timed build ({', '.join(res.rebuilt_deps)}): redoing")
            continue
        break
    out["seconds"] = res.seconds
    out["cpu_seconds"] = res.cpu_seconds
    out["load"] = res.load
    out["peak_kb"] = res.peak_rustc_kb
    out["script_kb"] = res.peak_script_kb
    out["contaminated"] = res.rebuilt_deps
    if res.out_dir:
        od = Path(res.out_dir)
        ms = od / "scale_build_ms.txt"
        out["gen_ms"] = float(ms.read_text()) if ms.exists() else None
        cpu = od / "scale_build_cpu_ms.txt"
        out["gen_cpu_ms"] = float(cpu.read_text()) if cpu.exists() else None
        world = od / "world.rs"
        out["world"] = world if world.exists() else None
    log(f"{label}: {prof}: {res.seconds:.1f}s ({res.cpu_seconds:.1f}s CPU), rustc peak {res.peak_rustc_kb / 1024:.0f} MB, "
        f"build script {out.get('gen_ms') or float('nan'):.0f} ms ({out.get('gen_cpu_ms') or float('nan'):.0f} ms CPU)")
    if not release:
        victim = root / "src" / "components" / "comp_0.rs"
        for attempt in (1, 2):
            os.utime(victim)
            log(f"{label}: debug: touch {victim.name}, rebuild with the warm incremental cache")
            t = cargo_build(root, crate, False, target_dir, root / "build-debug-touch.log", timeout, mem_limit_kb)
            if not t.ok:
                log(f"{label}: debug touch rebuild FAILED: {t.error}")
                break
            if t.rebuilt_deps and attempt == 1:
                log(f"{label}: debug: dependencies were rebuilt during the touch rebuild "
                    f"({', '.join(t.rebuilt_deps)}): redoing")
                continue
            out["touch_seconds"] = t.seconds
            out["peak_kb"] = max(out["peak_kb"], t.peak_rustc_kb)
            out["contaminated"] = out["contaminated"] + t.rebuilt_deps
            log(f"{label}: debug touch rebuild {t.seconds:.1f}s")
            break
    return out


def run_size(size: str, seed: int, release: bool, target_dir: Path, timeout: float, mem_limit_kb: int) -> dict:
    c, s, y = (int(v) for v in size.lower().split("x"))
    t0 = time.monotonic()
    decls = make_decls(c, s, y, seed)
    crate = f"scale-{c}x{s}x{y}"
    root = WORKSPACE / "target" / "scale" / f"{c}x{s}x{y}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "Cargo.toml").write_text(cargo_toml(crate))
    shutil.copy(WORKSPACE / "Cargo.lock", root / "Cargo.lock")
    (root / "build.rs").write_text(BUILD_RS)
    row: dict = {
        "size": f"{c}x{s}x{y}",
        "sig_sum": decls.sig_size_sum(),
        "pairs": decls.matched_pairs(),
        "systems": y,
        "pred_stages": decls.predicted_stages(),
        "decl_lines": 0,
    }
    real = real_files(decls)
    row["decl_lines"] = sum(t.count("\n") for k, t in real.items() if k.startswith("src/components"))
    label = row["size"]
    log(f"{label}: crate {root} ({row['decl_lines']} lines of declarations), "
        f"sig-size sum {row['sig_sum']}, matched pairs {row['pairs']}")
    crate_name = crate.replace("-", "_")
    dbg = measure_profile(root, crate_name, decls, False, target_dir, timeout, mem_limit_kb, label)
    if "error" in dbg:
        row["error"] = dbg["error"]
        row["peak_kb"] = dbg.get("peak_kb", 0)
    else:
        row["debug_s"] = dbg["seconds"]
        row["debug_cpu_s"] = dbg["cpu_seconds"]
        row["load"] = dbg["load"]
        row["debug_touch_s"] = dbg.get("touch_seconds")
        row["gen_ms"] = dbg.get("gen_ms")
        row["gen_cpu_ms"] = dbg.get("gen_cpu_ms")
        row["peak_kb"] = dbg["peak_kb"]
        row["script_kb"] = dbg.get("script_kb", 0)
        row["contaminated"] = list(dbg["contaminated"])
        if dbg.get("world"):
            text = dbg["world"].read_text()
            row["lines"] = classify_lines(text)
            row["bytes"] = len(text.encode())
            row["stages"] = row["lines"]["stage_count"] or row["pred_stages"]
            log(f"{label}: world.rs {row['lines']['total']} lines ({row['bytes'] / 1e6:.2f} MB): tables "
                f"{row['lines']['tables']}, system passes {row['lines']['systems']} "
                f"({row['lines']['system_fns']} fns), stage passes {row['lines']['stages']} "
                f"({row['lines']['stage_fns']} fns for {row['lines']['stage_count']} stages; "
                f"{row['pred_stages']} predicted), other {row['lines']['other']}")
        if release:
            rel = measure_profile(root, crate_name, decls, True, target_dir, timeout, mem_limit_kb, label)
            if "error" in rel:
                row["error"] = rel["error"]
                row["peak_kb"] = max(row["peak_kb"], rel.get("peak_kb", 0))
            else:
                row["release_s"] = rel["seconds"]
                row["release_cpu_s"] = rel["cpu_seconds"]
                row["load"] = max(row["load"], rel["load"])
                row["release_gen_ms"] = rel.get("gen_ms")
                row["peak_kb"] = max(row["peak_kb"], rel["peak_kb"])
                row["contaminated"] += rel["contaminated"]
    row["wall_s"] = time.monotonic() - t0
    log(f"{label}: done in {row['wall_s']:.0f}s")
    return row


def fmt(v, spec: str, missing: str = "—") -> str:
    return missing if v is None else format(v, spec)


HEADER = ["size (C×S×Y)", "sig-size sum", "matched pairs", "stages", "lines total", "tables",
          "system passes", "stage passes", "other", "build script ms", "build script CPU ms", "debug s", "debug CPU s",
          "debug touch s", "release s", "release CPU s", "rustc peak MB", "load", "wall s"]


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        l = r.get("lines", {})
        flag = " *" if r.get("contaminated") else ""
        out.append([
            r["size"], str(r["sig_sum"]), str(r["pairs"]), fmt(r.get("stages"), "d"),
            fmt(l.get("total"), ",d"), fmt(l.get("tables"), ",d"), fmt(l.get("systems"), ",d"),
            fmt(l.get("stages"), ",d"), fmt(l.get("other"), ",d"), fmt(r.get("gen_ms"), ".0f"),
            fmt(r.get("gen_cpu_ms"), ".0f"),
            fmt(r.get("debug_s"), ".1f") + flag, fmt(r.get("debug_cpu_s"), ".1f"),
            fmt(r.get("debug_touch_s"), ".1f"), fmt(r.get("release_s"), ".1f") + flag,
            fmt(r.get("release_cpu_s"), ".1f"),
            fmt(r["peak_kb"] / 1024 if r.get("peak_kb") else None, ",.0f"), fmt(r.get("load"), ".1f"),
            fmt(r.get("wall_s"), ".0f"),
        ])
    return out


def print_table(rows: list[dict]) -> None:
    body = table_rows(rows)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(HEADER)]
    print("  ".join(h.rjust(w) for h, w in zip(HEADER, widths)))
    for b in body:
        print("  ".join(v.rjust(w) for v, w in zip(b, widths)))


def markdown(rows: list[dict], law: str, worst: float | None, args, commit: str) -> str:
    body = table_rows(rows)
    override = f", build-override opt-level {BUILD_OVERRIDE or 'none'}"
    md = [f"# Generated world scale ({time.strftime('%Y-%m-%d %H:%M')}, commit {commit}, seed {args.seed}{override})", ""]
    md.append("| " + " | ".join(HEADER) + " |")
    md.append("|" + "|".join("---:" if i else "---" for i in range(len(HEADER))) + "|")
    for b in body:
        md.append("| " + " | ".join(b) + " |")
    md.append("")
    md.append(f"Fit: {law}" + (f"; max relative residual {worst * 100:.2f}%" if worst is not None else ""))
    md.append("")
    md.append("Build times are after a change to the component files, dependencies excluded "
              "(`debug s`: full crate compile, incremental cache cold; `debug touch s`: `touch` of one "
              "component file with the incremental cache warm; `release s`: no incremental). "
              "`CPU s`: user + system time of the timed build (cargo, build script, rustc), "
              "less sensitive than wall time to other work on the machine. `load`: the 1-minute load "
              "average at the end of the timed builds (max). `rustc peak MB`: VmHWM of the crate's rustc, max over the timed builds. "
              f"CARGO_BUILD_JOBS={os.environ.get('CARGO_BUILD_JOBS', '2')}, {os.cpu_count()} CPUs; "
              "* = a dependency was rebuilt during the timed build (the time includes it).")
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("")
        md.append("Failures:")
        for r in errs:
            md.append(f"- {r['size']}: ```{r['error']}```")
    md.append("")
    return "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated CxSxY (default {DEFAULT_SIZES})")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-release", action="store_true", help="skip the release builds")
    ap.add_argument("--out", type=Path, help="write the table as markdown to this file")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per cargo build (default 1800)")
    ap.add_argument("--mem-limit-gb", type=float, default=12, help="stop a build whose rustc exceeds this (default 12)")
    ap.add_argument("--target-dir", type=Path, default=WORKSPACE / "target" / "scale-target")
    ap.add_argument("--generate-only", action="store_true", help="write the crates, build nothing")
    ap.add_argument("--build-override", metavar="LEVEL", default="1",
                    choices=["none", "0", "1", "2", "3", "s", "z"],
                    help="opt-level of each crate's [profile.dev.build-override] and "
                         "[profile.release.build-override] (default 1, the README quick start's "
                         "recommendation); none: no such section, the unoptimised build script "
                         "cargo builds by default")
    args = ap.parse_args()
    global BUILD_OVERRIDE
    if args.build_override == "none":
        BUILD_OVERRIDE = None
    elif args.build_override in ("s", "z"):
        BUILD_OVERRIDE = f'"{args.build_override}"'
    else:
        BUILD_OVERRIDE = args.build_override
    os.environ.setdefault("CARGO_BUILD_JOBS", "2")
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    for s in sizes:
        if not re.fullmatch(r"\d+[xX]\d+[xX]\d+", s):
            ap.error(f"bad size {s!r}: expected CxSxY, e.g. 64x256x64")
    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=WORKSPACE, capture_output=True,
                                text=True).stdout.strip() or "?"
    except OSError:
        commit = "?"
    if args.generate_only:
        for s in sizes:
            c, sg, y = (int(v) for v in s.lower().split("x"))
            d = make_decls(c, sg, y, args.seed)
            root = WORKSPACE / "target" / "scale" / f"{c}x{sg}x{y}"
            root.mkdir(parents=True, exist_ok=True)
            (root / "Cargo.toml").write_text(cargo_toml(f"scale-{c}x{sg}x{y}"))
            shutil.copy(WORKSPACE / "Cargo.lock", root / "Cargo.lock")
            (root / "build.rs").write_text(BUILD_RS)
            write_tree(root, real_files(d))
            log(f"{s}: wrote {root}: sig-size sum {d.sig_size_sum()}, matched pairs {d.matched_pairs()}, "
                f"predicted stages {d.predicted_stages()}")
        return 0
    log(f"sizes {', '.join(sizes)}; seed {args.seed}; release {'no' if args.no_release else 'yes'}; "
        f"build-override opt-level {BUILD_OVERRIDE or 'none (cargo default: unoptimised)'}; "
        f"target dir {args.target_dir}; CARGO_BUILD_JOBS={os.environ['CARGO_BUILD_JOBS']}; commit {commit}")
    rows = []
    for s in sizes:
        rows.append(run_size(s, args.seed, not args.no_release, args.target_dir, args.timeout,
                             int(args.mem_limit_gb * 1024 * 1024)))
        print_table(rows)
        if args.out:
            law, worst = fit_law(rows)
            args.out.write_text(markdown(rows, law, worst, args, commit))
    print()
    print_table(rows)
    law, worst = fit_law(rows)
    print()
    print(law)
    if worst is not None:
        print(f"max relative residual: {worst * 100:.2f}%")
    for r in rows:
        if r.get("error"):
            print(f"FAILED {r['size']}: {r['error']}")
    if args.out:
        args.out.write_text(markdown(rows, law, worst, args, commit))
        print(f"wrote {args.out}")
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
