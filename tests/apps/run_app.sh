#!/usr/bin/env bash
# Runs an unchanged MPI application under the preloaded PMPI shim and judges
# it by its own numbers, not by its "passed" labels:
#   run_app.sh hpcc|fftw WORKDIR EXPECT -- mpirun ... -x A2A_VERBOSE=1 APP
# WORKDIR is wiped and used as the working directory (hpcc reads hpccinf.txt
# there and appends to hpccoutf.txt).  EXPECT is a space-separated list of
# algorithm names (e.g. "tra tuna") that the shim's A2A_VERBOSE=1 summary
# must show, and the only ones it may show (with any ":params" or
# "[decided-by]" suffix); "any" checks only that the shim served calls.
# These summary checks make the test fail when the shim is bypassed.
set -uo pipefail
kind=$1 dir=$2 expect=$3
shift 3
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "app check ($kind): FAIL: $*"; exit 1; }

[ -n "$dir" ] && rm -rf -- "$dir" && mkdir -p -- "$dir" && cd -- "$dir" || fail "no work directory '$dir'"
[ "$kind" = hpcc ] && cp "$here/hpccinf.txt" .
# The streams apart: the launcher forwards each as it comes, so one file for
# both could splice the application's lines into the shim's summary.
"$@" > app.out 2> app.err
rc=$?
cat app.out app.err | tee app.log
[ "$rc" -eq 77 ] && exit 77  # the launcher skipped (scripts/cluster.sh without root)
[ "$rc" -eq 0 ] || fail "the application exited with status $rc"

# Rank 0's summary: "a2a shim: communicator C: N calls, ... s; alg xN alg xN".
summary=$(grep '^a2a shim: communicator .* calls, ' app.err)
calls=$(awk '{for (i = 1; i < NF; ++i) if ($(i + 1) == "calls,") s += $i} END {print s + 0}' <<<"$summary")
[ "$calls" -gt 0 ] || fail "the shim served no MPI_Alltoall(v) call (is it preloaded, A2A_VERBOSE=1 passed?)"
algs=$(sed 's/.* s;//' <<<"$summary" | tr ' ' '\n' | grep -v -e '^x[0-9]*$' -e '^$' | sort -u)
if [ "$expect" != any ]; then
  for e in $expect; do
    grep -q -E "^$e([:[]|$)" <<<"$algs" || fail "the shim never ran '$e' (it ran: $(echo $algs))"
  done
  for a in $algs; do
    ok=0
    for e in $expect; do [[ $a == "$e" || $a == "$e:"* || $a == "$e["* ]] && ok=1; done
    [ "$ok" -eq 1 ] || fail "the shim ran '$a', not one of: $expect"
  done
fi

case $kind in
  hpcc)
    # MPIFFT and MPIRandomAccess move their data with MPI_Alltoall.
    [ -f hpccoutf.txt ] || fail "no hpccoutf.txt"
    ! grep '^Error in line' hpccoutf.txt || fail "hpcc could not read hpccinf.txt"
    grep -E '^(MPIFFT_N|MPIFFT_maxErr|MPIRandomAccess(_LCG)?_(N|Errors))=' hpccoutf.txt
    awk -F= '
      function num(k) { if (!(k in v) || v[k] !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) { print "missing or not a number: " k; bad = 1; return 1e300 } return v[k] + 0 }
      { v[$1] = $2 }
      END {
        if (num("MPIFFT_maxErr") >= 1e-10) { print "MPIFFT_maxErr too large"; bad = 1 }
        if (num("MPIRandomAccess_Errors") != 0) { print "MPIRandomAccess_Errors nonzero"; bad = 1 }
        if (num("MPIRandomAccess_LCG_Errors") != 0) { print "MPIRandomAccess_LCG_Errors nonzero"; bad = 1 }
        exit bad
      }' hpccoutf.txt || fail "hpccoutf.txt values"
    ;;
  fftw)
    grep -q '^fftw_roundtrip .*: ok ' app.log && ! grep -q FAIL app.log || fail "round trip"
    ;;
  *) fail "unknown kind" ;;
esac
echo "app check ($kind): ok, the shim served $calls calls: $(echo $algs)"
