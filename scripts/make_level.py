#!/usr/bin/env python3
"""Generates the bundled level, assets/level.json: 11,300 entities of the bundled world with a
three-level hierarchy, then compiles it to assets/level.bin with `sigecs compile`.

    python3 scripts/make_level.py            # writes assets/level.json and assets/level.bin
    python3 scripts/make_level.py --no-compile
    python3 scripts/make_level.py --scale 89 --out /tmp/big.json   # 1,005,700 entities, JSON only

The level (deterministic, seed 9):
  - 500 fleets: a Ship (a root, named) with 6 Escorts as children (each follows its ship:
    `leader` is the ship's index; `local_transform` places it around the ship), and one
    Particle (engine exhaust) below each escort: ship -> escort -> particle, 3 levels;
  - 200 beacon chains: a named Beacon root with 3 named Beacon children;
  - 100 Markers (roots) with notes of 20 to 60 bytes (the one `String` component);
  - 2,000 free Bodies and 1,900 free Particles (roots).
Entities are listed grouped by signature (ships, escorts, exhaust, beacons, markers, bodies,
particles): parents may come after their children, and a level whose entities of one signature
are contiguous spawns with one copy per component column.

`--scale K` multiplies every count by K (11,300·K entities, the same mix and hierarchy) and
`--out FILE` writes the JSON there instead, without compiling it: a large level to measure the
compiler with (`/usr/bin/time -v target/release/sigecs compile FILE -o OUT.bin`).
"""

import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEETS, ESCORTS, CHAINS, CHAIN_CHILDREN, MARKERS, BODIES, PARTICLES = 500, 6, 200, 3, 100, 2000, 1900


def option(name, default):
    if name not in sys.argv:
        return default
    i = sys.argv.index(name)
    if i + 1 >= len(sys.argv):
        sys.exit(f"{name} needs a value")
    return sys.argv[i + 1]


def main():
    scale = int(option("--scale", "1"))
    out_path = option("--out", None)
    fleets, chains, markers_n, bodies_n, particles_n = (
        n * scale for n in (FLEETS, CHAINS, MARKERS, BODIES, PARTICLES))
    rng = random.Random(9)

    def num(lo, hi):
        # Three decimals: short JSON, and values that survive f32 exactly enough to compare.
        return round(rng.uniform(lo, hi), 3)

    def vec(scale):
        return [num(-scale, scale) for _ in range(3)]

    def translation(v):
        return [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, v[0], v[1], v[2], 1]

    ships, escorts, exhaust, beacons, markers, bodies, particles = [], [], [], [], [], [], []
    # Indices are assigned after grouping; keep (kind, local id) references until then.
    for f in range(fleets):
        ships.append({"components": {
            "position": vec(500), "velocity": vec(5), "acceleration": [0, 0, 0],
            "mass": num(10, 20), "name": f"ship-{f}"}})
        for e in range(ESCORTS):
            offset = vec(10)
            escorts.append({"parent": ("ship", f), "components": {
                "position": vec(500), "velocity": vec(5), "leader": ("ship", f),
                "local_transform": translation(offset)}})
            exhaust.append({"parent": ("escort", len(escorts) - 1), "components": {
                "position": vec(500), "velocity": vec(2), "lifetime": num(0.5, 5)}})
    for c in range(chains):
        root = len(beacons)
        beacons.append({"components": {"position": vec(800), "name": f"beacon-{c}"}})
        for k in range(CHAIN_CHILDREN):
            beacons.append({"parent": ("beacon", root), "components": {
                "position": vec(800), "name": f"beacon-{c}.{k}"}})
    for m in range(markers_n):
        note = f"marker {m}: hold here" + " until the convoy passes" * (m % 3)
        markers.append({"components": {"position": vec(800), "note": note}})
    for _ in range(bodies_n):
        bodies.append({"components": {
            "position": vec(500), "velocity": vec(5), "acceleration": [0, 0, 0],
            "mass": num(1, 2)}})
    for _ in range(particles_n):
        particles.append({"components": {
            "position": vec(500), "velocity": vec(5), "lifetime": num(0.5, 5)}})

    groups = [("ship", ships), ("escort", escorts), ("exhaust", exhaust),
              ("beacon", beacons), ("marker", markers), ("body", bodies), ("particle", particles)]
    base, start = {}, 0
    for kind, items in groups:
        base[kind] = start
        start += len(items)

    def resolve(ref):
        kind, i = ref
        return base[kind] + i

    entities = []
    for _, items in groups:
        for e in items:
            if "parent" in e:
                e["parent"] = resolve(e["parent"])
            if "leader" in e["components"]:
                e["components"]["leader"] = resolve(e["components"]["leader"])
            entities.append(e)

    path = out_path or os.path.join(ROOT, "assets", "level.json")
    with open(path, "w") as out:
        out.write('{"entities": [\n')
        out.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in entities))
        out.write("\n]}\n")
    print(f"wrote {path}: {len(entities)} entities")

    if "--no-compile" not in sys.argv and out_path is None:
        subprocess.run(
            ["cargo", "run", "--release", "--quiet", "--", "compile", path,
             "-o", os.path.join(ROOT, "assets", "level.bin")],
            cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
