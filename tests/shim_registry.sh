#!/usr/bin/env bash
# Every host algorithm of the registry (`a2a list --sweep`) through the PMPI
# shim, paired alltoall with alltoallv, on virtual nodes of 2 ranks (one-node
# algorithms on the real layout), so that
# an algorithm added to the registry is run through the shim without a new
# test:  shim_registry.sh A2A_CLI CLIENT MPIEXEC [MPIEXEC ARGS...]
set -uo pipefail
cli=$1 client=$2
shift 2
# Algorithms for one node only (their summary says so) run on the real
# layout: on virtual nodes they fall back, and the client would see another name.
mapfile -t one_node < <("$cli" list | awk '/^  [a-z]/ && $2 == "one" && $3 == "node:" {print $1}' | sort -u)
mapfile -t uniform < <("$cli" list --sweep alltoall)
mapfile -t varying < <("$cli" list --sweep alltoallv)
[ ${#uniform[@]} -gt 5 ] && [ ${#varying[@]} -gt 5 ] || { echo "FAIL: no sweep from $cli"; exit 1; }
n=${#uniform[@]}
[ ${#varying[@]} -gt "$n" ] && n=${#varying[@]}
ok=${SHIM_REGISTRY_OK:-via a2a, alltoallv via a2a: ok}
fail=0
for ((i = 0; i < n; ++i)); do
  a=${uniform[i % ${#uniform[@]}]} v=${varying[i % ${#varying[@]}]}
  layout=A2A_NODE_SIZE=2
  for x in "${one_node[@]}"; do [[ $a == "$x" || $v == "$x" ]] && layout=A2A_NODE_SIZE=; done
  out=$(env "$layout" A2A_ALLTOALL=$a A2A_ALLTOALLV=$v CLIENT_EXPECT_A2A=1 "$@" "$client" 2>&1)
  if grep -qF "$ok" <<<"$out"; then
    echo "ok   $a | $v"
  else
    echo "FAIL $a | $v"
    echo "$out"
    fail=1
  fi
done
exit $fail
