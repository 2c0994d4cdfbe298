#!/usr/bin/env bash
# On an emulated cluster (scripts/cluster.sh up, CLUSTER_* in the
# environment): auto's machine measurement times the inter-node link
# across real nodes (a rank pair on different nodes), so its inter-node
# latency and 1 KiB message come out above the intra-node ones
# (A2A_VERBOSE=1 prints them; the per-byte costs are too close on 2
# cores to order reliably).
# usage: cluster_link.sh A2A_BINARY RANKS
set -euo pipefail
a2a=$1 np=$2
here=$(cd "$(dirname "$0")/.." && pwd)
# A timing comparison on 2 shared cores: up to 5 measurements, the first
# that orders them passes (on one node the two come out equal every time).
for attempt in 1 2 3 4 5; do
  [ "$attempt" = 1 ] || sleep 1  # a passing load on the machine
  out=$(A2A_VERBOSE=1 bash "$here/scripts/cluster.sh" mpirun -np "$np" "$a2a" bench -m 1024:1024 -i 2 -x 1 -c -a auto 2>&1)
  line=$(grep -m1 "machine measured" <<<"$out") || { echo "no machine measurement printed:"; echo "$out"; exit 1; }
  grep -q "^# wrong: 0 OK" <<<"$out" || { echo "$out"; exit 1; }
  echo "$line" | cut -c1-300
  python3 - "$line" <<'PY' && exit 0
import re, sys
line = sys.argv[1]
value = lambda key: float(re.search(key + r"=([0-9.e+-]+)", line).group(1))
intra_1k = float(re.search(r"intra messages 1K:([0-9.e+-]+)", line).group(1))
inter_1k = float(re.search(r"inter messages 1K:([0-9.e+-]+)", line).group(1))
checks = {"alpha": (value("alpha_intra"), value("alpha_inter")), "1 KiB message": (intra_1k, inter_1k)}
bad = [f"{k}: inter {b:g} <= intra {a:g}" for k, (a, b) in checks.items() if not b > a]
print("\n".join(bad) if bad else "cluster link: inter-node costs above intra-node: ok")
sys.exit(1 if bad else 0)
PY
done
exit 1
