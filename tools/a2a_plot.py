#!/usr/bin/python3
"""`a2a plot`: PNG figures from `a2a bench` CSV or JSON output.

  size     median time against bytes, one line per algorithm, log-log, one
           panel per collective (and workload) and P
  radix    median time against radix, one line per size, sqrt(P) marked, from
           `a2a bench --sweep-radix` rows (the TRA paper's figure 8)
  heatmap  the fastest radix over P and bytes, from sweep rows of several P
           (the TuNA paper's figure 9)

Files may mix collectives and P; a later row for the same (collective,
workload, P, bytes, algorithm) replaces an earlier one.  Prints the PNG paths.
"""
import argparse
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

SWEEP = re.compile(r"^(tra|tuna):radix=(\d+)$")  # a sweep row: explicit radix, no prefix


def load(path):
    with open(path, newline="") as f:
        text = f.read()
    raw = json.loads(text) if text.lstrip().startswith("[") else list(csv.DictReader(text.splitlines()))
    rows = []
    for r in raw:
        alg, ran = str(r["algorithm"]), str(r["resolved"])
        radix = int(r.get("radix") or -1)
        if radix < 2 and SWEEP.match(ran):  # CSVs written before the radix column
            radix = int(SWEEP.match(ran).group(2))
        rows.append(dict(collective=r.get("collective") or "alltoall", workload=r.get("workload") or "",
                         procs=int(r["procs"]), bytes=int(r["bytes"]), algorithm=alg, resolved=ran,
                         median=float(r["median_us"]), radix=radix,
                         sweep=radix >= 2 and SWEEP.match(alg) is not None))
    return rows


def label(r):
    if r["algorithm"] == "native":
        return r["resolved"]
    return r["algorithm"] if r["algorithm"] == r["resolved"] else f'{r["algorithm"]} ({r["resolved"]})'


def title(coll, workload, procs=None):
    return f"{coll}" + (f" {workload}" if workload else "") + (f", P = {procs}" if procs is not None else "")


def human_bytes(v, _=None):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if v >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}"


def plain_log_y(ax):
    """Plain numbers on a log y axis; minor ticks labelled at 2 and 5 only, so
    narrow ranges still read and wide ones do not crowd."""
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))


def panels(n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.8 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def plot_size(groups, out, dpi):
    fig, axes = panels(len(groups))
    colors = plt.cm.tab20.colors
    for ax, ((coll, work, procs), rows) in zip(axes, sorted(groups.items())):
        series = defaultdict(dict)
        for r in rows:
            series[label(r)][r["bytes"]] = r["median"]
        for k, (name, pts) in enumerate(sorted(series.items(), key=lambda kv: not kv[0].startswith("MPI_"))):
            x = sorted(pts)
            style = (dict(color="black", linewidth=2.5) if name.startswith("MPI_") else
                     dict(color=colors[k % len(colors)], linewidth=1, linestyle=["-", "--", ":"][k % 3]))
            ax.plot(x, [pts[s] for s in x], marker=".", label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(human_bytes))
        plain_log_y(ax)
        ax.set_xlabel("bytes per block" if coll == "alltoall" else "workload size (bytes)")
        ax.set_ylabel("median of per-iteration max time (us)")
        ax.set_title(title(coll, work, procs))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2 if len(series) > 12 else 1)
    fig.tight_layout()
    fig.savefig(out, dpi=dpi)
    plt.close(fig)


def plot_radix(groups, out, dpi):
    fig, axes = panels(len(groups))
    for ax, ((coll, work, procs), rows) in zip(axes, sorted(groups.items())):
        sweep, native = defaultdict(dict), {}
        for r in rows:
            if r["sweep"]:
                sweep[r["bytes"]][r["radix"]] = r["median"]
            elif r["algorithm"] == "native":
                native[r["bytes"]] = r["median"]
        cmap = plt.cm.viridis
        sizes = sorted(sweep)
        for k, s in enumerate(sizes):
            color = cmap(k / max(1, len(sizes) - 1))
            radices = sorted(sweep[s])
            times = [sweep[s][r] for r in radices]
            ax.plot(radices, times, marker=".", color=color, label=f"{human_bytes(s)} B")
            best = min(radices, key=sweep[s].get)
            ax.plot([best], [sweep[s][best]], marker="*", markersize=11, color=color)
            if s in native:  # the MPI library at this size, for reference
                ax.axhline(native[s], color=color, linestyle=":", linewidth=0.8)
        ax.axvline(math.sqrt(procs), color="red", linestyle="--", label=f"sqrt(P) = {math.sqrt(procs):.3g}")
        if procs > 32:
            ax.set_xscale("log", base=2)
        else:
            ax.set_xticks(range(2, procs + 1, 1 if procs <= 16 else 2))
        ax.set_yscale("log")
        plain_log_y(ax)
        ax.set_xlabel("radix")
        ax.set_ylabel("median of per-iteration max time (us)")
        ax.set_title(f"{'tra' if coll == 'alltoall' else 'tuna'}: {title(coll, work, procs)}\n"
                     "star: fastest radix; dotted: native")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2 if len(sizes) > 10 else 1)
    fig.tight_layout()
    fig.savefig(out, dpi=dpi)
    plt.close(fig)


def plot_heatmap(groups, out, dpi):
    by_coll = defaultdict(dict)  # (collective, workload) -> {P: rows}
    for (coll, work, procs), rows in groups.items():
        by_coll[(coll, work)][procs] = rows
    fig, axes = panels(len(by_coll))
    for ax, ((coll, work), per_p) in zip(axes, sorted(by_coll.items())):
        procs = sorted(per_p)
        sizes = sorted({r["bytes"] for rows in per_p.values() for r in rows if r["sweep"]})
        best = [[math.nan] * len(sizes) for _ in procs]
        for i, p in enumerate(procs):
            for j, s in enumerate(sizes):
                cand = [(r["median"], r["radix"]) for r in per_p[p] if r["sweep"] and r["bytes"] == s]
                if cand:
                    best[i][j] = min(cand)[1]
        logs = [[math.log2(v) if v == v else math.nan for v in row] for row in best]
        # One colour scale from radix 2 to the largest P, so colours compare across rows.
        img = ax.imshow(logs, cmap="viridis", aspect="auto", origin="lower", vmin=1, vmax=math.log2(max(procs + [4])))
        for i, row in enumerate(best):
            for j, v in enumerate(row):
                if v == v:
                    dark = img.norm(logs[i][j]) < 0.5  # viridis is dark at the low end
                    ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=8,
                            color="white" if dark else "black")
        ax.set_xticks(range(len(sizes)), [human_bytes(s) for s in sizes], fontsize=7)
        ax.set_yticks(range(len(procs)), [f"{p} (sqrt {math.sqrt(p):.3g})" for p in procs], fontsize=7)
        ax.set_xlabel("bytes per block" if coll == "alltoall" else "workload size (bytes)")
        ax.set_ylabel("P")
        ax.set_title(f"fastest {'tra' if coll == 'alltoall' else 'tuna'} radix: {title(coll, work)}")
        bar = fig.colorbar(img, ax=ax, format=FuncFormatter(lambda v, _: f"{2 ** v:.0f}"))
        bar.set_ticks(sorted({math.log2(v) for row in best for v in row if v == v} | {1.0, math.log2(max(procs))}))
        bar.set_label("best radix (log scale)")
    fig.tight_layout()
    fig.savefig(out, dpi=dpi)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(prog="a2a plot", description=__doc__.split("\n\n")[0],
                                 epilog="e.g. a2a plot --out plots p4.csv p8.json --kind radix")
    ap.add_argument("inputs", nargs="+", help="a2a bench --csv or --json files")
    ap.add_argument("--out", default=".", help="directory for the PNGs (created; default .)")
    ap.add_argument("--prefix", default="a2a-", help="file name prefix (default a2a-): PREFIXsize.png, ...")
    ap.add_argument("--kind", choices=["size", "radix", "heatmap", "all"], default="all", help="figures (default all)")
    ap.add_argument("--dpi", type=int, default=110)
    args = ap.parse_args()

    rows = {}
    for path in args.inputs:
        try:
            loaded = load(path)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"a2a plot: {path}: not readable as a2a bench CSV/JSON ({type(e).__name__}: {e})")
        for r in loaded:
            rows[(r["collective"], r["workload"], r["procs"], r["bytes"], r["algorithm"])] = r
    groups, sweeps = defaultdict(list), defaultdict(list)
    for r in rows.values():
        key = (r["collective"], r["workload"], r["procs"])
        groups[key].append(r)
    for key, rs in groups.items():
        if any(r["sweep"] for r in rs):
            sweeps[key] = rs
    if not groups:
        sys.exit("a2a plot: no rows in the inputs")

    os.makedirs(args.out, exist_ok=True)
    kinds = ["size", "radix", "heatmap"] if args.kind == "all" else [args.kind]
    status = 0
    for kind in kinds:
        data = groups if kind == "size" else sweeps
        if not data:
            print(f"a2a plot: no tra/tuna radix rows (a2a bench --sweep-radix) for the {kind} figure",
                  file=sys.stderr)
            status = status or (1 if args.kind != "all" else 0)
            continue
        out = os.path.join(args.out, f"{args.prefix}{kind}.png")
        {"size": plot_size, "radix": plot_radix, "heatmap": plot_heatmap}[kind](data, out, args.dpi)
        print(out)
    return status


if __name__ == "__main__":
    sys.exit(main())
