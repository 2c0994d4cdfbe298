#!/usr/bin/env python3
"""auto against the best fixed choice, from `a2a bench` CSVs.

For every (collective, workload, P, size) row group: the best median among
the fixed algorithms (not auto, agree/ or plan/ rows, native included) and
auto's median from the same run, as a markdown table plus a summary line.
Usage: auto_vs_best.py LABEL=A.csv,B.csv [LABEL=...]  (one column group per
label, e.g. tuned=runs/parity/avb-tuned-p4.csv,... model=runs/parity/avb-model-p4.csv,...).
"""
import csv
import math
import sys
from collections import OrderedDict


def load(paths):
    groups = OrderedDict()
    for path in paths.split(","):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (int(row["procs"]), row["collective"], row["workload"] or "-", int(row["bytes"]))
                groups.setdefault(key, []).append(row)
    out = {}
    for key, rows in groups.items():
        fixed = [r for r in rows if not r["algorithm"].startswith(("auto", "agree/", "plan/"))]
        auto = [r for r in rows if r["algorithm"] == "auto"]
        if not fixed or not auto:
            continue
        best = min(fixed, key=lambda r: float(r["median_us"]))
        a = auto[0]
        out[key] = (best["resolved"], float(best["median_us"]), a["resolved"], float(a["median_us"]))
    return out


def main(args):
    runs = [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in args]
    keys = sorted(set().union(*[set(r) for _, r in runs]))
    head = "| P | collective | workload | bytes |"
    rule = "|---|---|---|---|"
    for label, _ in runs:
        head += f" best ({label} run) | auto ({label}) | auto/best |"
        rule += "---|---|---|"
    print(head)
    print(rule)
    ratios = {}
    for k in keys:
        line = f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} |"
        for label, r in runs:
            if k not in r:
                line += " | | |"
                continue
            best, best_us, auto, auto_us = r[k]
            ratio = auto_us / best_us
            ratios.setdefault((label, k[1]), []).append(ratio)
            line += f" {best} {best_us:.1f} us | {auto} {auto_us:.1f} us | {ratio:.2f} |"
        print(line)
    print()
    for (label, coll), rs in sorted(ratios.items()):
        gm = math.exp(sum(math.log(x) for x in rs) / len(rs))
        within = sum(1 for x in rs if x <= 1.25)
        print(f"- {label}, {coll}: {len(rs)} cases, auto/best geometric mean {gm:.2f}, worst {max(rs):.2f}, "
              f"{within} of {len(rs)} within 1.25x")


if __name__ == "__main__":
    main(sys.argv[1:])
