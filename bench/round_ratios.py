"""The tables of bench/dtype_compare.sh and bench/compare.sh --against: busbw
of each variant (a data type, or a build) over the reference variant's in the
same round, per collective, configuration and size; the median over the
rounds, with the lowest round beside it.

    python3 bench/round_ratios.py RESULTS_DIR [REFERENCE [FLOOR]]

RESULTS_DIR holds cohort-perf --json files named r{round}_{transport}_{ranks}_
{variant}.json. With FLOOR, the cells whose median is below it are listed last
(and the exit status is 0 all the same: a table, not a test).
"""
import collections
import json
import pathlib
import re
import statistics
import sys


def load(folder):
    """{(round, transport, ranks, variant): {(collective, size): busbw}}"""
    runs = {}
    name = re.compile(r"r(\d+)_(\w+?)_(\d+)_(\w+)\.json$")
    for path in sorted(pathlib.Path(folder).glob("r*_*.json")):
        m = name.search(path.name)
        if not m:
            continue
        key = (int(m[1]), m[2], int(m[3]), m[4])
        rows = {}
        colls = json.loads(path.read_text())["collectives"]
        # In place only where a collective runs in place alone (a broadcast).
        apart = {c["kind"] for c in colls if not c.get("in_place")}
        for c in colls:
            if c.get("in_place") and c["kind"] in apart:
                continue
            for row in c["rows"]:
                rows[(c["kind"], row["size"])] = row["busbw"]
        runs[key] = rows
    return runs


def shown(size):
    for shift, unit in ((20, "M"), (10, "K")):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


def main():
    folder = sys.argv[1]
    reference = sys.argv[2] if len(sys.argv) > 2 else "float"
    floor = float(sys.argv[3]) if len(sys.argv) > 3 else None
    runs = load(folder)
    ratios = collections.defaultdict(list)  # (coll, config, variant, size) -> [ratio per round]
    for (rnd, transport, ranks, variant), rows in runs.items():
        if variant == reference:
            continue
        ref = runs.get((rnd, transport, ranks, reference))
        if ref is None:
            continue
        for (coll, size), busbw in rows.items():
            if ref.get((coll, size), 0) > 0:
                config = f"{transport}:{ranks}"
                ratios[(coll, config, variant, size)].append(busbw / ref[(coll, size)])
    if not ratios:
        print(f"no pairs of runs with {reference} in {folder}")
        return 1
    print(f"busbw of VARIANT / busbw of {reference}, same round; median (lowest) of the rounds")
    lowest, highest, below = {}, {}, []
    last = None
    for key in sorted(ratios):
        coll, config, variant, size = key
        if (coll, config, variant) != last:
            print(f"\n{coll} {config} {variant}:", end="")
            last = (coll, config, variant)
        med = statistics.median(ratios[key])
        where = f"{coll} {config} {shown(size)}"
        print(f"  {shown(size)} {med:.2f} ({min(ratios[key]):.2f})", end="")
        if variant not in lowest or med < lowest[variant][0]:
            lowest[variant] = (med, where)
        if variant not in highest or med > highest[variant][0]:
            highest[variant] = (med, where)
        if floor is not None and med < floor:
            below.append((variant, where, med))
    print("\n")
    for variant, (med, where) in sorted(lowest.items()):
        print(f"lowest median for {variant}: {med:.2f} at {where}")
        print(f"highest median for {variant}: {highest[variant][0]:.2f} at {highest[variant][1]}")
    if floor is not None:
        print(f"\n{len(below)} of {len(ratios)} cells below {floor:.2f}" + (":" if below else ""))
        for variant, where, med in below:
            print(f"  {variant} {where} {med:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
