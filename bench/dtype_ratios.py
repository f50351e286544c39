"""The table of bench/dtype_compare.sh: busbw of each type over the reference
type's (float's) in the same round, per collective, configuration and size;
median over the rounds, with the lowest round beside it.

    python3 bench/dtype_ratios.py RESULTS_DIR [REFERENCE_TYPE]
"""
import collections
import json
import pathlib
import re
import statistics
import sys


def load(folder):
    """{(round, transport, ranks, type): {(collective, size): busbw}}"""
    runs = {}
    name = re.compile(r"r(\d+)_(\w+)_(\d+)_(\w+)\.json$")
    for path in sorted(pathlib.Path(folder).glob("r*_*.json")):
        m = name.search(path.name)
        if not m:
            continue
        key = (int(m[1]), m[2], int(m[3]), m[4])
        rows = {}
        for c in json.loads(path.read_text())["collectives"]:
            if c.get("in_place"):
                continue
            for row in c["rows"]:
                rows[(c["kind"], row["size"])] = row["busbw"]
        runs[key] = rows
    return runs


def main():
    folder = sys.argv[1]
    reference = sys.argv[2] if len(sys.argv) > 2 else "float"
    runs = load(folder)
    ratios = collections.defaultdict(list)  # (coll, config, type, size) -> [ratio per round]
    for (rnd, transport, ranks, dtype), rows in runs.items():
        if dtype == reference:
            continue
        ref = runs.get((rnd, transport, ranks, reference))
        if ref is None:
            continue
        for (coll, size), busbw in rows.items():
            if ref.get((coll, size), 0) > 0:
                config = f"{transport}:{ranks}"
                ratios[(coll, config, dtype, size)].append(busbw / ref[(coll, size)])
    if not ratios:
        print(f"no pairs of runs with {reference} in {folder}")
        return 1
    print(f"busbw of TYPE / busbw of {reference}, same round; median (lowest) of the rounds")
    worst = {}
    last = None
    for key in sorted(ratios, key=lambda k: (k[0], k[1], k[2], k[3])):
        coll, config, dtype, size = key
        if (coll, config, dtype) != last:
            print(f"\n{coll} {config} {dtype}:", end="")
            last = (coll, config, dtype)
        med = statistics.median(ratios[key])
        print(f"  {size // 1024}K {med:.2f} ({min(ratios[key]):.2f})", end="")
        if dtype not in worst or med < worst[dtype][0]:
            worst[dtype] = (med, f"{coll} {config} {size // 1024}K")
    print("\n")
    for dtype, (med, where) in sorted(worst.items()):
        print(f"lowest median for {dtype}: {med:.2f} at {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
