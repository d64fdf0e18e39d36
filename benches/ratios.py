#!/usr/bin/env python3
"""Prints the median time of every benchmark of a criterion group, and ratios to a baseline.

Usage: python3 benches/ratios.py GROUP [BASELINE_PREFIX]
Reads $CARGO_TARGET_DIR/criterion/GROUP/*/*/new/estimates.json after `cargo bench` (the
repository's target/ when CARGO_TARGET_DIR is unset; a relative one is taken from the current
directory, as cargo takes it). For each parameter (e.g. an entity count), every function's
median is divided by the median of the function whose name starts with BASELINE_PREFIX
(default: "hand_"; the fastest such one is used).
"""
import json
import os
import pathlib
import sys


def target_dir():
    """Where cargo writes: CARGO_TARGET_DIR if set, else the workspace's target/."""
    configured = os.environ.get("CARGO_TARGET_DIR")
    if configured:
        return pathlib.Path(configured).resolve()
    return pathlib.Path(__file__).resolve().parent.parent / "target"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    group = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else "hand_"
    root = target_dir() / "criterion" / group
    if not root.is_dir():
        sys.exit(f"no results in {root}: run `cargo bench` first")
    results = {}
    for est in sorted(root.glob("*/*/new/estimates.json")):
        function, param = est.parts[-4], est.parts[-3]
        median = json.loads(est.read_text())["median"]["point_estimate"]
        results.setdefault(param, {})[function] = median
    for est in sorted(root.glob("*/new/estimates.json")):
        function = est.parts[-3]
        median = json.loads(est.read_text())["median"]["point_estimate"]
        results.setdefault("-", {})[function] = median
    for param, funcs in sorted(results.items(), key=lambda kv: (len(kv[0]), kv[0])):
        base = [v for k, v in funcs.items() if k.startswith(prefix)]
        base = min(base) if base else None
        print(f"{group} / {param}")
        for name, median in sorted(funcs.items(), key=lambda kv: kv[1]):
            ratio = f"{median / base:6.3f}x" if base else ""
            print(f"  {name:<28} {median / 1e3:12.2f} µs   {ratio}")


if __name__ == "__main__":
    main()
