#!/usr/bin/python3
"""Plot `a2a bench` CSV files: time and ratio to native against block size.

usage: plot_bench.py OUT.png BENCH.csv [BENCH.csv ...]   (one column per file)
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    series = defaultdict(list)
    procs = coll = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            procs, coll = row["procs"], row.get("collective", "alltoall")
            name = row["resolved"] if "auto" not in row["algorithm"] else f'{row["algorithm"]} ({row["resolved"]})'
            series[name].append((int(row["bytes"]), float(row["median_us"]), float(row["ratio_to_native"])))
    return procs, coll, series


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, paths = sys.argv[1], sys.argv[2:]
    fig, axes = plt.subplots(2, len(paths), figsize=(7 * len(paths), 9), squeeze=False)
    for col, path in enumerate(paths):
        procs, coll, series = load(path)
        colors = plt.cm.tab20.colors
        for k, (name, pts) in enumerate(sorted(series.items())):
            pts.sort()
            x = [p[0] for p in pts]
            if name.startswith("MPI_Alltoall"):
                style = dict(linewidth=2.5, color="black")
            else:
                style = dict(linewidth=1, color=colors[k % len(colors)], linestyle=["-", "--", ":"][k % 3])
            axes[0][col].plot(x, [p[1] for p in pts], marker=".", label=name, **style)
            axes[1][col].plot(x, [p[2] for p in pts], marker=".", label=name, **style)
        for row, ylabel in enumerate(["median time (us)", "time / MPI library"]):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("bytes per block")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][col].set_title(f"a2a bench {coll}, P = {procs}")
        axes[1][col].axhline(1.0, color="black", linestyle="--", linewidth=1)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
