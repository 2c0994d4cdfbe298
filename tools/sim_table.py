#!/usr/bin/env python3
"""Simulated runs side by side: median us of each a2a row and of `native`
under each SMPI selector, from `a2a bench` CSVs named ...-SELECTOR.csv.
usage: sim_table.py MAIN.csv [OTHER-SELECTOR.csv ...]  (MAIN: all a2a rows)"""
import csv
import os
import sys


def load(path):
    return list(csv.DictReader(open(path, newline="")))


def main(paths):
    main_rows = load(paths[0])
    sizes = sorted({int(r["bytes"]) for r in main_rows})
    print("| algorithm (as run) | " + " | ".join(f"{s} B" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for path in paths:
        sel = os.path.splitext(os.path.basename(path))[0].rsplit("-", 1)[-1]
        nat = {int(r["bytes"]): float(r["median_us"]) for r in load(path) if r["algorithm"] == "native"}
        print(f"| native ({sel} selector) | " + " | ".join(f"{nat[s]:.1f}" for s in sizes) + " |")
    base = {int(r["bytes"]): float(r["median_us"]) for r in main_rows if r["algorithm"] == "native"}
    for alg in dict.fromkeys(r["algorithm"] for r in main_rows):
        if alg == "native":
            continue
        row = {int(r["bytes"]): r for r in main_rows if r["algorithm"] == alg}
        ran = row[sizes[-1]]["resolved"]
        name = alg if alg == ran else f"{alg} ({ran})"
        cells = [f"{float(row[s]['median_us']):.1f} ({float(row[s]['median_us']) / base[s]:.2f})" for s in sizes]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
