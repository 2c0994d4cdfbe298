#!/usr/bin/env bash
# On an emulated cluster (scripts/cluster.sh up, CLUSTER_* in the
# environment): a2a bench with no A2A_NODE_* sees the real nodes, its data
# is right, and every node-aware row's inter-node messages (summed over the
# ranks) are what `a2a model --inter-node` says its schedule sends (on
# unequal nodes: clustered's).
# usage: cluster_counts.sh A2A_BINARY NODE_SIZES
set -euo pipefail
a2a=$1 sizes=$2
np=$(( ${sizes//,/+} ))
nodes=$(echo "$sizes" | tr ',' '\n' | wc -l)
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() {  # COLLECTIVE SPEC...
  local coll=$1; shift
  local args=()
  for spec in "$@"; do args+=(-a "$spec"); done
  bash "$here/scripts/cluster.sh" mpirun -np "$np" "$a2a" bench --collective "$coll" -m 1024:1024 -i 2 -x 1 -c \
    "${args[@]}" --csv "$out/$coll.csv" >"$out/$coll.txt"
  grep -q "^# layout: $nodes nodes" "$out/$coll.txt" || { echo "layout: $(grep layout "$out/$coll.txt")"; exit 1; }
  grep -q "^# wrong: 0 OK" "$out/$coll.txt" || { cat "$out/$coll.txt"; exit 1; }
  for spec in "$@"; do
    local want got
    want=$("$a2a" model --collective "$coll" --bytes 1024 --node-sizes "$sizes" --inter-node "$spec" | awk '{print $3}')
    got=$(python3 -c "
import csv
rows = [r for r in csv.DictReader(open('$out/$coll.csv')) if r['algorithm'] == '$spec']
print(rows[0]['inter_node_messages'] if rows else 'none')")
    echo "$coll $spec: inter-node messages $got, model $want"
    [ "$got" = "$want" ] || exit 1
  done
}
if [ "$(echo "$sizes" | tr ',' '\n' | sort -u | wc -l)" -eq 1 ]; then
  check alltoall tra:radix=2 tra:radix=3 tra2:radix-intra=2,radix-inter=2 clustered
  check alltoallv tuna-hier:variant=coalesced,radix=2 tuna-hier:variant=staggered,radix=2
else  # the trace writers model equal nodes; clustered's plan any
  check alltoall clustered
fi
echo "cluster counts: ok"
