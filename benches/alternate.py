#!/usr/bin/env python3
"""Times one workload of `benches/instructions.rs` as built at several commits, alternated, to
find which commit made it slower. On a shared machine a run of one build and then a run of
another can differ by more than the change being looked for; alternating the builds round by
round puts every build through the same moments, so their medians compare.

    python3 benches/alternate.py WORKLOAD ITERATIONS COMMIT [COMMIT ...] [--rounds N]

e.g. `python3 benches/alternate.py add_remove 20 HEAD~8 HEAD~4 HEAD`. Each commit is built once
in a worktree under `target/alternate/` (kept, so a later call with the same commit starts
at once); a commit without `benches/instructions.rs` or without the workload cannot be timed
and says so. Prints, per commit, the median, least and greatest time of one iteration over the
rounds (each round times `ITERATIONS` iterations minus a run of none, so building the world is
not counted) and, when valgrind is installed, callgrind's instructions per iteration. Bisect
with it: time a commit range's ends and its middle, then halve the half where the step is.
"""

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "alternate"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def build(commit: str) -> Path:
    """The instructions bench built at `commit`, copied to `target/alternate/bin/<hash>`."""
    sha = git("rev-parse", "--short=12", commit)
    exe = WORK / "bin" / sha
    if exe.exists():
        return exe
    tree = WORK / "tree"
    if not (tree / ".git").exists():
        git("worktree", "add", "--detach", str(tree), sha)
    subprocess.run(["git", "checkout", "-q", "--force", "--detach", sha], cwd=tree, check=True)
    print(f"building {sha} ...", flush=True)
    out = subprocess.run(
        ["cargo", "bench", "--bench", "instructions", "--no-run", "--message-format=json"],
        cwd=tree, capture_output=True, text=True)
    built = [Path(m.group(1)) for m in re.finditer(r'"executable":"([^"]+)"', out.stdout)
             if "instructions" in Path(m.group(1)).name]
    if out.returncode != 0 or not built:
        sys.exit(f"{sha}: the instructions bench does not build there:\n{out.stderr[-1500:]}")
    exe.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(built[-1], exe)
    return exe


def elapsed(exe: Path, workload: str, iterations: int) -> float:
    start = time.perf_counter()
    out = subprocess.run([str(exe), workload, str(iterations)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{exe.name} cannot run {workload}: {out.stderr.strip()[-300:]}")
    return time.perf_counter() - start


def instructions(exe: Path, workload: str, iterations: int):
    """Callgrind's instructions per iteration, or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None

    def count(n: int) -> int:
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              str(exe), workload, str(n)], capture_output=True, text=True)
        return int(re.search(r"Collected : (\d+)", out.stderr).group(1))

    # Callgrind runs about 50 times slower than the program: a thousand iterations at most.
    many = min(iterations, 1000)
    few = max(1, many // 10)
    return (count(many) - count(few)) / (many - few)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload")
    parser.add_argument("iterations", type=int)
    parser.add_argument("commits", nargs="+")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if args.iterations < 2:
        sys.exit("ITERATIONS must be at least 2")
    exes = [(c, build(c)) for c in args.commits]
    empty = {c: min(elapsed(e, args.workload, 0) for _ in range(3)) for c, e in exes}
    times = {c: [] for c, _ in exes}
    for r in range(args.rounds):
        # Every other round in reverse, so no build always runs right after another.
        for c, e in (exes if r % 2 == 0 else exes[::-1]):
            per = (elapsed(e, args.workload, args.iterations) - empty[c]) / args.iterations
            times[c].append(per * 1e9)
    print(f"{args.workload}: ns per iteration over {args.rounds} alternated rounds")
    for c, e in exes:
        t = sorted(times[c])
        ins = instructions(e, args.workload, args.iterations)
        count = f"  {ins:>12,.0f} instructions" if ins is not None else ""
        print(f"  {c:<14} {e.name}  median {statistics.median(t):>12,.1f}  "
              f"least {t[0]:>12,.1f}  greatest {t[-1]:>12,.1f}{count}")


if __name__ == "__main__":
    main()
