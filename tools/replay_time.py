#!/usr/bin/env python3
"""The time of the traced call in a SimGrid replay of an `a2a trace` file.

Reads the replay's log on stdin (smpirun -replay ... --log=smpi_replay.thres:verbose
"--log=smpi_replay.fmt:%.12r;%m%n": every action's end, simulated seconds, then
"RANK ACTION ..."), and takes per rank the time from the end of its barrier to
the end of its last action: the call, as `a2a bench` times it (after a barrier,
the maximum over ranks).  Writes it to --csv as a2a bench's CSV, one row;
writes nothing where the replay did not run to its end.
"""
import argparse
import sys

HEADER = ("collective,workload,procs,bytes,algorithm,resolved,median_us,min_us,max_us,ratio_to_native,"
          "inter_node_messages,wrong,algbw_GBps,busbw_GBps,radix")


def call_seconds(lines, other):
    start, end = {}, {}
    for line in lines:
        stamp, sep, msg = line.partition(";")
        if not sep:
            other.append(line.rstrip())
            continue
        words = msg.split()
        if msg.startswith("Simulation time"):  # the replay's last line: it ran to the end
            other.append(msg.rstrip())
        if len(words) < 2 or not words[0].isdigit():
            continue
        try:
            t = float(stamp)
        except ValueError:
            continue
        rank = int(words[0])
        if words[1] == "barrier":
            start[rank] = t
        elif rank in start:
            end[rank] = t
    if not start:
        return None
    return max(end.get(r, t0) - t0 for r, t0 in start.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--collective", default="alltoall")
    ap.add_argument("--workload", default="")
    ap.add_argument("--procs", type=int, required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--algorithm", required=True)
    a = ap.parse_args()
    other = []
    seconds = call_seconds(sys.stdin, other)
    for line in other:  # SimGrid's own messages (an abort's reason), kept in the run's log
        if line and "Switch to algorithm" not in line:
            print("# smpi: " + line)
    if seconds is None or not any("Simulation time" in line for line in other):
        print("replay_time: the replay did not finish (no timed actions, or no \"Simulation time\")",
              file=sys.stderr)
        return 1
    us = seconds * 1e6
    total = a.bytes * a.procs * a.procs
    algbw = total / a.procs / seconds / 1e9 if seconds > 0 else 0
    radix = a.algorithm.split("radix=")[1].split(",")[0] if "radix=" in a.algorithm else "-1"
    row = [a.collective, f'"{a.workload}"', a.procs, a.bytes, f'"{a.algorithm}"', f'"replay:{a.algorithm}"',
           us, us, us, -1, -1, -1, algbw, algbw * (a.procs - 1) / a.procs, radix]
    with open(a.csv, "w") as f:
        f.write(HEADER + "\n" + ",".join(str(x) for x in row) + "\n")
    print(f"{a.bytes:>10}  {'replay:' + a.algorithm:<40} {us:12.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
