#!/usr/bin/python3
"""The main job's verdict from `a2a bench` CSVs (and a2a-fft/a2a-closure
--compare outputs): per P and collective, the run's noise floor, auto over
the MPI library's call and the best a2a row over it (geometric mean over the
sizes and the worst size), the cells where auto lost beyond the floor, and
one VERDICT line.

Ratios.  A cell is one size of one run (P, collective, workload); a row's
ratio there is its time over the library's own MPI_Alltoall(v), called
directly (the CSV's `native` row): the median over iterations of each
iteration's ratio (`paired_to_native`: the rows run interleaved, back to
back, so phases of the machine longer than an iteration move both alike),
or, in CSVs without that column, the ratio of the medians.

The noise floor.  Each run carries the row `a2a/native`: a2a's `native`
spec through a2a's whole call path, which ends in the same library call, so
its ratio differs from 1 only by the measurement and by the path's per-call
cost (tens of ns, which shows at the smallest sizes and which auto pays
too).  A group's floor is the 90th percentile (nearest rank) of
|a2a/native - 1| over its sizes: noise differs from size to size, and the
largest is one hiccup's (a single size at 0.57 has been seen on 2 shared
cores), so the worst tenth of the sizes (one or two of 17-20) does not set
it, while it still covers the others.  A CSV without that row has no floor
(the tolerance alone).

Losses.  A cell is a loss where auto's ratio exceeds 1 + max(floor,
tolerance) (tolerance 5 % unless --tolerance says otherwise, the verdict's
rule before it measured its floor); by how much: the points of auto's
slowdown beyond that.  --losses FILE writes the losing cells, worst first
(ratio over threshold), at most --max-remeasure (12), as tab-separated
`procs collective workload bytes ratio threshold native_us ran` (workload
`-` for alltoall; ran: what auto ran), for scripts/bench.sh to re-measure: the same size only, more
iterations, interleaved with the library's call: auto, a2a/native and, as
a fixed row, what auto ran there in the first run (the size's trial alone
may choose otherwise than after the sweep's smaller sizes).  Given those
runs' CSVs (--remeasured), a re-measured cell is judged on its re-measured
ratio: auto's, or where auto alone ran something else, the worse of it and
that row's (a2a/native's where auto ran native), against 1 + max(floor,
tolerance, |a2a/native - 1| of the re-measurement); the verdict shows first
and re-measured numbers.  The applications' lines (the all-to-all time's
median over native's) keep the tolerance alone.

usage: verdict.py [--tolerance 0.05] BENCH.csv ... [--remeasured CSV ...]
                  [--losses FILE] [--max-remeasure 12] [--apps APP.txt ...]
"""
import argparse
import csv
import math
import re

QUANTILE = 0.9
FLOOR_ROW = "a2a/native"
LIBRARY_ROW = "native"


def size(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or b % 1024:
            return f"{b} {unit}"
        b //= 1024
    return f"{b} TiB"


class Group:
    """One `a2a bench` CSV: P, collective, workload and per size each row's ratio."""

    def __init__(self, path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        first = rows[0]
        self.path = path
        self.P = int(first["procs"])
        self.collective = first["collective"]
        self.workload = first["workload"]
        self.label = self.collective + (" " + self.workload.split(":")[0] if self.workload else "")
        median, paired, self.resolved = {}, {}, {}
        for r in rows:
            b = int(r["bytes"])
            self.resolved.setdefault(b, {})[r["algorithm"]] = r["resolved"]
            median.setdefault(b, {})[r["algorithm"]] = float(r["median_us"])
            p = float(r.get("paired_to_native") or -1)
            if p > 0:
                paired.setdefault(b, {})[r["algorithm"]] = p
        self.native_us = {b: v[LIBRARY_ROW] for b, v in median.items() if LIBRARY_ROW in v}
        self.ratios = {}  # bytes -> {row: ratio to the library's call}
        for b, v in sorted(median.items()):
            if LIBRARY_ROW not in v:
                continue
            self.ratios[b] = {a: paired.get(b, {}).get(a, t / v[LIBRARY_ROW]) for a, t in v.items() if a != LIBRARY_ROW}

    def key(self, b):
        return (self.P, self.collective, self.workload, b)

    def floor(self):
        """The 90th percentile (nearest rank) of |a2a/native - 1| over the sizes; None without that row."""
        devs = sorted(abs(v[FLOOR_ROW] - 1) for v in self.ratios.values() if FLOOR_ROW in v)
        if not devs:
            return None
        return devs[max(0, math.ceil(QUANTILE * len(devs)) - 1)]

    def cells(self):
        """[(bytes, auto ratio, best a2a ratio, best row)] where auto and the library both ran."""
        out = []
        for b, v in self.ratios.items():
            if "auto" not in v:
                continue
            others = {a: r for a, r in v.items() if a != FLOOR_ROW and not a.startswith("twin:")}
            best = min(others, key=others.get)
            out.append((b, v["auto"], others[best], best))
        return out


def app_rows(path):
    """(label, P, auto/native all-to-all time) from an application's --compare table."""
    with open(path) as f:
        text = f.read()
    procs = re.search(r"on (\d+) ranks|, (\d+) ranks", text)
    ratio = None
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] == "auto":
            ratio = float(cols[-1])  # a2a/nat: the all-to-all time's median over native's
    name = re.sub(r"-p\d+\.txt$", "", path.split("/")[-1])
    P = int(next(g for g in procs.groups() if g)) if procs else 0
    return name, P, ratio


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def pct(x):
    return f"{100 * x:.1f} %"


def judge(groups, remeasured, tolerance):
    """Every cell of every group, a dict: group, bytes, first (auto's ratio),
    ran (what auto ran), threshold, first_loss; where re-measured: again (the
    re-measured ratio of what auto ran in the first run), auto_again and
    ran_again (auto's own, in the run alone), nat_again (a2a/native's);
    ratio (again where re-measured, else first) and loss."""
    again = {}
    for g in remeasured:
        for b, v in g.ratios.items():
            if "auto" in v:
                again[g.key(b)] = (v, g.resolved[b])
    out = []
    for g in groups:
        floor = g.floor()
        base = max(floor or 0.0, tolerance)
        for b, r, _, _ in g.cells():
            ran = g.resolved[b].get("auto", "?")
            c = {"group": g, "bytes": b, "first": r, "ran": ran, "threshold": 1 + base, "first_loss": r > 1 + base,
                 "native_us": g.native_us.get(b, 0.0), "again": None}
            if g.key(b) in again:
                v, resolved = again[g.key(b)]
                c["auto_again"], c["ran_again"], c["nat_again"] = v["auto"], resolved.get("auto", "?"), v.get(FLOOR_ROW)
                # Where auto alone ran something else: the worse of it and what the first run's auto ran,
                # as a fixed row (native: a2a/native).
                pick = FLOOR_ROW if ran == "native" else ran
                c["again"], c["again_of"] = v["auto"], "auto"
                if c["ran_again"] != ran and pick in v and v[pick] > v["auto"]:
                    c["again"], c["again_of"] = v[pick], pick
                if c["nat_again"] is not None:
                    c["threshold"] = 1 + max(base, abs(c["nat_again"] - 1))
            c["ratio"] = c["again"] if c["again"] is not None else r
            c["loss"] = c["ratio"] > c["threshold"]
            out.append(c)
    return out


def where(c):
    g = c["group"]
    return f"P={g.P} {g.label} {size(c['bytes'])}"


def write_losses(path, cells, cap):
    """The first run's losing cells, worst first (ratio over threshold), at most cap."""
    first = sorted((c for c in cells if c["first_loss"]), key=lambda c: c["first"] / c["threshold"], reverse=True)
    with open(path, "w") as f:
        for c in first[:cap]:
            g = c["group"]
            f.write(f"{g.P}\t{g.collective}\t{g.workload or '-'}\t{c['bytes']}\t{c['first']:.4f}\t"
                    f"{c['threshold']:.4f}\t{c['native_us']:.3f}\t{c['ran']}\n")
    return first[:cap]


def beyond(c):
    return f"{100 * (c['ratio'] - c['threshold']):.1f} points beyond {c['threshold']:.3f}"


def render(groups, cells, apps, tolerance, cap, remeasured_given):
    """The verdict's text (a list of lines)."""
    lines = ["Ratios: a row's time over the MPI library's own call (the median of each iteration's ratio); "
             f"noise floor: the {round(QUANTILE * 100)}th percentile of |a2a/native - 1| over the sizes "
             f"(a2a's native spec: the same library call through a2a); a loss: auto above 1 + max(floor, "
             f"{pct(tolerance)}); auto's columns take re-measured cells at their re-measured ratio.",
             "",
             "| P | collective | noise floor | auto/MPI gm | auto worst (at) | best a2a/MPI gm | best worst (at) "
             "| losses beyond the floor |",
             "|---|---|---|---|---|---|---|---|"]
    for g in groups:
        gc = g.cells()
        mine = [c for c in cells if c["group"] is g]
        if not gc:
            continue
        aw = max(mine, key=lambda c: c["ratio"])
        bw = max(gc, key=lambda c: c[2])
        floor = g.floor()
        lost = sum(1 for c in mine if c["loss"])
        lines.append(f"| {g.P} | {g.label} | {pct(floor) if floor is not None else '-'} | "
                     f"{gm([c['ratio'] for c in mine]):.3f} | {aw['ratio']:.3f} ({size(aw['bytes'])}) | "
                     f"{gm([c[2] for c in gc]):.3f} | {bw[2]:.3f} ({size(bw[0])}) | {lost} of {len(gc)} |")
    app_losses, cases = [], len(cells)
    worst_app = None
    for name, P, r in apps:
        lines.append(f"| {P} | {name} (all-to-all time) | | {r:.3f} | | | | |")
        cases += 1
        worst_app = max(worst_app or (r, ""), (r, f"P={P} {name}"))
        if r > 1 + tolerance:
            app_losses.append((r, f"P={P} {name}"))
    again = sorted((c for c in cells if c["again"] is not None), key=lambda c: c["first"], reverse=True)
    if again:
        lines += ["", "Re-measured, paired (the size alone, more iterations, interleaved with the library's call: "
                      "auto, a2a/native and what auto ran in the first run; where auto alone ran something else, "
                      f"the worse of the two is the cell's; at most {cap} cells, worst first):", "",
                  "| cell | first: auto/MPI (ran) | re-measured | auto alone (ran) | a2a/native/MPI | threshold "
                  "| verdict |", "|---|---|---|---|---|---|---|"]
        for c in again:
            nat = f"{c['nat_again']:.3f}" if c["nat_again"] is not None else "-"
            of = "" if c["again_of"] == "auto" else f" ({c['again_of']})"
            lines.append(f"| {where(c)} | {c['first']:.3f} ({c['ran']}) | {c['again']:.3f}{of} | "
                         f"{c['auto_again']:.3f} ({c['ran_again']}) | {nat} | {c['threshold']:.3f} | "
                         f"{'loss, ' + beyond(c) if c['loss'] else 'within'} |")
    floors = [g.floor() for g in groups if g.floor() is not None]
    span = (f"noise floor {pct(min(floors))} .. {pct(max(floors))} (per P and collective, above)" if floors
            else "no noise floor (no a2a/native rows)")
    losses = sorted((c for c in cells if c["loss"]), key=lambda c: c["ratio"] - c["threshold"], reverse=True)
    parts = []
    for c in losses[:8]:
        if c["again"] is not None and c["again_of"] != "auto":
            note = (f"re-measured as {c['again_of']}, what auto ran here, first {c['first']:.3f}; auto alone ran "
                    f"{c['ran_again']}, {c['auto_again']:.3f}")
        elif c["again"] is not None:
            note = f"re-measured, first {c['first']:.3f}"
        else:
            note = "not re-measured" if remeasured_given else "first run"
        parts.append(f"{where(c)} {c['ratio']:.3f} ({note}; {beyond(c)})")
    if len(losses) > 8:
        parts.append(f"and {len(losses) - 8} more")
    parts += [f"{w} {r:.3f} (application, beyond {pct(tolerance)})" for r, w in sorted(app_losses, reverse=True)]
    note = ""
    if remeasured_given or again:
        first_losses = sum(1 for c in cells if c["first_loss"])
        note = (f"; the first run lost in {first_losses} cells, {len(again)} re-measured (at most {cap}, worst "
                f"first), {sum(1 for c in again if not c['loss'])} of those within the floor")
        if any(c["again"] is None for c in losses):
            note += f", {sum(1 for c in losses if c['again'] is None)} not re-measured"
    if losses or app_losses:
        lines.append(f"VERDICT: {span}; auto lost beyond it in {len(losses) + len(app_losses)} of {cases} cases: "
                     f"{', '.join(parts)}{note}")
    else:
        worst = max(cells, key=lambda c: c["ratio"] - c["threshold"], default=None)
        tail = f"; closest {where(worst)} {worst['ratio']:.3f} against {worst['threshold']:.3f}" if worst else ""
        if worst_app:
            tail += f"; the applications' worst {worst_app[0]:.3f} ({worst_app[1]})"
        lines.append(f"VERDICT: {span}; auto never lost beyond it in {cases} cases{tail}{note}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="*")
    ap.add_argument("--apps", nargs="*", default=[])
    ap.add_argument("--remeasured", nargs="*", default=[], help="CSVs of re-measured cells (a size each)")
    ap.add_argument("--losses", help="write the first run's losing cells here (tab-separated, worst first)")
    ap.add_argument("--max-remeasure", type=int, default=12)
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args(argv)
    groups = [g for g in (Group(p) for p in a.csv) if g.cells()]
    remeasured = [Group(p) for p in a.remeasured]
    cells = judge(groups, remeasured, a.tolerance)
    if a.losses:
        write_losses(a.losses, cells, a.max_remeasure)
    apps = [r for r in (app_rows(p) for p in a.apps) if r[2] is not None]
    lines = render(groups, cells, apps, a.tolerance, a.max_remeasure, bool(a.remeasured))
    print("\n".join(lines))
    return lines


if __name__ == "__main__":
    main()
