#!/usr/bin/env python3
"""Instruction-count guard: counts the instructions of one iteration of each guarded workload
of `benches/instructions.rs` under callgrind and compares them with the committed baseline,
`benches/instructions.baseline`. Counts do not move with the machine's load, so a few percent
is a real change where times on this shared machine would hide it.

    python3 benches/instructions.py            # check: exit 1 past +5% on any workload
    python3 benches/instructions.py --update   # re-measure and rewrite the baseline (on purpose)

One iteration's count is the difference between a run of `many` iterations and a run of
`few`, divided by the difference, so building the world is not counted. The baseline records
the rustc that compiled it: with another rustc the code differs, so the comparison is printed
but does not fail (refresh the baseline with the new compiler).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "benches" / "instructions.baseline"
LIMIT = 0.05  # fail past +5%
REFRESH = "python3 benches/instructions.py --update"

# workload: (few, many) iterations
WORKLOADS = {
    "frag_iter": (100, 1100),
    "schedule": (1, 11),
    "simple_iter": (1, 11),
    "add_remove": (1, 3),
    "add_remove_batch": (1, 3),
    "spawn": (1, 3),
}


def rustc_version() -> str:
    return subprocess.run(["rustc", "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def bench_binary() -> Path:
    out = subprocess.run(
        ["cargo", "bench", "--bench", "instructions", "--no-run", "--message-format=json"],
        cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"could not build the instructions bench:\n{out.stderr}")
    exe = None
    for line in out.stdout.splitlines():
        m = re.search(r'"executable":"([^"]+)"', line)
        if m and "instructions" in Path(m.group(1)).name:
            exe = Path(m.group(1))
    if exe is None:
        sys.exit("cargo built no instructions bench executable")
    return exe


def count(exe: Path, workload: str, iterations: int) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(exe), workload,
         str(iterations)],
        capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or m is None:
        sys.exit(f"callgrind failed on {workload} {iterations}:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def measure(exe: Path) -> dict:
    counts = {}
    for workload, (few, many) in WORKLOADS.items():
        per = (count(exe, workload, many) - count(exe, workload, few)) / (many - few)
        counts[workload] = round(per)
        print(f"  {workload:<12} {counts[workload]:>12,} instructions per iteration", flush=True)
    return counts


def read_baseline() -> tuple:
    compiler, counts = None, {}
    for line in BASELINE.read_text().splitlines():
        if line.startswith("# rustc:"):
            compiler = line.split(":", 1)[1].strip()
        elif line and not line.startswith("#"):
            name, value = line.split()
            counts[name] = int(value)
    return compiler, counts


def write_baseline(compiler: str, counts: dict) -> None:
    lines = [
        "# Instructions per iteration of each guarded workload (benches/instructions.rs),",
        f"# counted by callgrind. Refreshed on purpose with: {REFRESH}",
        f"# rustc: {compiler}",
    ]
    lines += [f"{name} {value}" for name, value in counts.items()]
    BASELINE.write_text("\n".join(lines) + "\n")


def main() -> int:
    update = "--update" in sys.argv[1:]
    if subprocess.run(["valgrind", "--version"], capture_output=True).returncode != 0:
        print("INSTRUCTION GUARD SKIPPED: valgrind is not installed")
        return 0
    compiler = rustc_version()
    exe = bench_binary()
    print(f"instruction counts ({compiler}):", flush=True)
    counts = measure(exe)
    if update or not BASELINE.exists():
        write_baseline(compiler, counts)
        print(f"wrote {BASELINE.relative_to(ROOT)}")
        return 0
    base_compiler, base = read_baseline()
    failed = []
    for name, value in counts.items():
        if name not in base:
            failed.append(f"{name}: no baseline")
            continue
        change = value / base[name] - 1
        mark = "REGRESSION" if change > LIMIT else ("faster" if change < -LIMIT else "ok")
        print(f"  {name:<12} {base[name]:>12,} -> {value:>12,}  {change:+.1%}  {mark}")
        if change > LIMIT:
            failed.append(f"{name}: {base[name]:,} -> {value:,} instructions ({change:+.1%})")
    if failed and base_compiler != compiler:
        print(f"note: the baseline was counted with {base_compiler}; with another compiler the "
              f"code differs, so this does not fail. Refresh it: {REFRESH}")
        return 0
    if failed:
        print(f"\nFAIL: more than +{LIMIT:.0%} instructions per iteration:")
        for f in failed:
            print(f"  {f}")
        print(f"If the cost is intended, refresh the baseline on purpose and commit it:\n  {REFRESH}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
