#!/usr/bin/env bash
# On an emulated cluster (CLUSTER_* in the environment): shape puts a tbf
# rate on every node's eth0 and clears it; a delay needs netem, which is
# applied where the kernel has it and refused with the reason elsewhere.
# usage: cluster_shape.sh NODES
set -euo pipefail
nodes=$1
c="bash $(cd "$(dirname "$0")/.." && pwd)/scripts/cluster.sh"
$c shape --rate 1gbit
[ "$($c status | grep -c 'qdisc tbf .* rate 1Gbit')" -eq "$nodes" ] || { $c status; exit 1; }
if out=$($c shape --delay 5us 2>&1); then
  [ "$($c status | grep -c 'qdisc netem')" -eq "$nodes" ] || { $c status; exit 1; }
else
  grep -q "no netem" <<<"$out" || { echo "$out"; exit 1; }
fi
$c shape --clear
[ "$($c status | grep -cE 'qdisc (tbf|netem)')" -eq 0 ] || { $c status; exit 1; }
echo "cluster shape: ok"
