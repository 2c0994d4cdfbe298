#!/usr/bin/env bash
# An emulated cluster on this machine: real node boundaries for Open MPI
# (docs/cluster.md).  Each node is a network namespace with its own hostname
# and one veth on a bridge that lives in a namespace of its own: nothing is
# added to the machine's network, no node has a route out of the cluster's
# subnet.  Root and `ip netns` needed; without them every verb says so and
# exits 77 (a test's skip).
#
#   cluster.sh up NODES RANKS_PER_NODE   NODES equal nodes
#   cluster.sh up COUNTS                 ranks per node, e.g. 3,2,1 (filled in rank order)
#   cluster.sh mpirun MPIRUN_ARGS...     Open MPI's mpirun on node 0 across the cluster
#                                        (-np defaults to every rank; each default below
#                                        is an OMPI_MCA_ variable: --mca overrides it)
#   cluster.sh exec NODE CMD...          CMD on NODE (index or name)
#   cluster.sh status                    nodes, addresses, processes, qdiscs
#   cluster.sh shape --rate R [--delay D] | --clear
#                                        every node's egress: tbf for a rate, netem for
#                                        a delay where the kernel has them
#   cluster.sh down                      ends the processes inside the cluster's
#                                        namespaces, removes what up made (also after a
#                                        crashed run)
# CLUSTER_DIR (state; default /tmp/a2a-cluster), CLUSTER_PREFIX (namespace
# and host names; default a2a), CLUSTER_SUBNET (first three octets; default
# 10.77.0: node I is .I+1).
set -euo pipefail
dir=${CLUSTER_DIR:-/tmp/a2a-cluster}
prefix=${CLUSTER_PREFIX:-a2a}
subnet=${CLUSTER_SUBNET:-10.77.0}
switch=$prefix-sw
self=$(readlink -f "${BASH_SOURCE[0]}")

die() { echo "cluster.sh: $*" >&2; exit 1; }
skip() { echo "cluster.sh: $* (skipped)" >&2; exit 77; }
can_run() {
  [ "$(id -u)" = 0 ] || skip "needs root"
  command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || skip "needs ip netns (iproute2)"
  command -v unshare >/dev/null || skip "needs unshare (util-linux)"
}
ours() { ip netns list | awk '{print $1}' | grep -E "^$prefix-(sw|n[0-9]+)$" | sort -V || true; }
load() {
  [ -f "$dir/state" ] || die "no cluster up (cluster.sh up first)"
  # shellcheck disable=SC1091
  source "$dir/state"
}
node_name() {  # an index or a name
  if [[ $1 =~ ^[0-9]+$ ]]; then echo "$prefix-n$1"; else echo "$1"; fi
}

up() {
  local counts
  case $# in
    1) [[ $1 =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "up COUNTS: positive counts, comma-separated"
       counts=${1//,/ } ;;
    2) [[ $1 =~ ^[1-9][0-9]*$ && $2 =~ ^[1-9][0-9]*$ ]] || die "up NODES RANKS_PER_NODE: positive integers"
       counts=$(for ((i = 0; i < $1; i++)); do printf '%s ' "$2"; done) ;;
    *) die "usage: cluster.sh up NODES RANKS_PER_NODE | up COUNTS" ;;
  esac
  [ -f "$dir/state" ] && die "a cluster is up ($dir/state): cluster.sh down first"
  [ -n "$(ours)" ] && die "namespaces $prefix-* exist: cluster.sh down first"
  local n=0 ranks=0 c ns
  mkdir -p "$dir"
  ip netns add "$switch"
  ip netns exec "$switch" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
  ip -n "$switch" link add br0 type bridge stp_state 0 forward_delay 0
  ip -n "$switch" link set br0 up
  printf '127.0.0.1 localhost\n' >"$dir/hosts"
  : >"$dir/hostfile"
  for c in $counts; do
    ns=$prefix-n$n
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
    ip -n "$ns" link set lo up
    # Both ends made inside their namespaces: the machine's own gains nothing.
    ip link add "p$n" netns "$switch" type veth peer name eth0 netns "$ns"
    ip -n "$switch" link set "p$n" master br0 up
    ip -n "$ns" addr add "$subnet.$((n + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    echo "$subnet.$((n + 1)) $ns" >>"$dir/hosts"
    echo "$ns slots=$c" >>"$dir/hostfile"
    n=$((n + 1)) ranks=$((ranks + c))
  done
  printf 'nodes=%d\nranks=%d\ncounts="%s"\n' "$n" "$ranks" "${counts% }" >"$dir/state"
  # The launch agent as one executable (hydra's -launcher-exec takes no
  # arguments), this cluster's settings in it.
  printf '#!/bin/sh\nCLUSTER_DIR=%q CLUSTER_PREFIX=%q CLUSTER_SUBNET=%q exec bash %q agent "$@"\n' \
    "$dir" "$prefix" "$subnet" "$self" >"$dir/agent"
  chmod +x "$dir/agent"
  for ((i = 0; i < n; i++)); do  # carrier on every node before the first run
    for _ in $(seq 100); do
      ip -n "$prefix-n$i" link show eth0 | grep -q LOWER_UP && break
      sleep 0.02
    done
  done
  echo "cluster up: $n nodes ($(echo "$counts" | tr ' ' ',' | sed 's/,$//') ranks), $subnet.1-$subnet.$n"
}

# The launch agent in place of ssh (Open MPI's plm_rsh_agent): `agent HOST
# WORDS...` runs WORDS with sh -c, as ssh would; `agent --argv HOST CMD...`
# keeps argv.  The node's hostname is its own (a UTS namespace) and its
# /etc/hosts the cluster's (a bind mount in the private mount namespace of
# `ip netns exec`; the machine's file is untouched).
agent() {
  local mode=ssh host
  while [ $# -gt 0 ]; do
    case $1 in
      --argv) mode=argv; shift ;;
      -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;  # ssh options with a value
      -*) shift ;;
      *) break ;;
    esac
  done
  host=${1:?agent: no host}
  shift
  host=${host#*@}
  [ -e "/run/netns/$host" ] || { echo "cluster.sh: no node $host" >&2; exit 255; }
  exec ip netns exec "$host" unshare --uts -- /bin/sh -c '
    hostname "$1" && mount --bind "$2" /etc/hosts || exit 255
    mode=$3; shift 3
    if [ "$mode" = argv ]; then exec "$@"; else exec /bin/sh -c "$*"; fi' agent "$host" "$dir/hosts" "$mode" "$@"
}

run_mpirun() {
  load
  # Each daemon sees the machine's cores and its own ranks only: ranks that
  # busy-poll starve those of other nodes unless they yield, and every
  # daemon would bind its ranks to the same cores (docs/cluster.md).
  export OMPI_MCA_orte_default_hostfile=${OMPI_MCA_orte_default_hostfile:-$dir/hostfile}
  export OMPI_MCA_plm_rsh_agent=${OMPI_MCA_plm_rsh_agent:-$dir/agent}
  export OMPI_MCA_plm_rsh_no_tree_spawn=${OMPI_MCA_plm_rsh_no_tree_spawn:-1}
  export OMPI_MCA_oob_tcp_if_include=${OMPI_MCA_oob_tcp_if_include:-$subnet.0/24}
  export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-$subnet.0/24}
  export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
  export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
  export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CLUSTER_DIR=$dir
  local mpirun=${CLUSTER_MPIRUN:-mpirun.openmpi}
  command -v "$mpirun" >/dev/null || mpirun=mpirun
  agent --argv "$prefix-n0" "$mpirun" "$@"
}

status() {
  load
  echo "nodes $nodes, ranks $ranks ($counts), subnet $subnet.0/24"
  local ns
  for ns in $(ours); do
    printf '%-8s %3s processes  %s\n' "$ns" "$(ip netns pids "$ns" | wc -l)" \
      "$(ip -n "$ns" -br addr show | awk '$1 != "lo" {print $1, $3}' | tr '\n' ' ')"
    ip netns exec "$ns" tc qdisc show | grep -E 'tbf|netem' | sed 's/^/         /' || true
  done
}

shape() {
  load
  local rate="" delay="" clear=0 spec
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) rate=${2:?}; shift 2 ;;
      --delay) delay=${2:?}; shift 2 ;;
      --clear) clear=1; shift ;;
      *) die "shape: --rate R, --delay D or --clear" ;;
    esac
  done
  for ((i = 0; i < nodes; i++)); do ip netns exec "$prefix-n$i" tc qdisc del dev eth0 root 2>/dev/null || true; done
  if ((clear)) || [ -z "$rate$delay" ]; then echo "shape: cleared"; return; fi
  if [ -n "$delay" ]; then
    ip netns exec "$switch" tc qdisc add dev lo root netem delay 1us 2>/dev/null ||
      die "shape: this kernel has no netem (tc answers: qdisc kind unknown): no delay can be added; --rate alone uses tbf"
    ip netns exec "$switch" tc qdisc del dev lo root
    spec="netem delay $delay${rate:+ rate $rate} limit 100000"
  else
    spec="tbf rate $rate burst 256kb latency 50ms"
  fi
  for ((i = 0; i < nodes; i++)); do
    # shellcheck disable=SC2086
    ip netns exec "$prefix-n$i" tc qdisc add dev eth0 root $spec || die "shape: tc refused '$spec'"
  done
  echo "shape: $spec on every node's eth0"
}

down() {
  local nss ns pids
  nss=$(ours)
  for ns in $nss; do  # every process in them came through this cluster
    pids=$(ip netns pids "$ns" || true)
    [ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
  done
  for ns in $nss; do
    for _ in $(seq 50); do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
      sleep 0.1
    done
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns"
  done
  # What Open MPI left under the nodes' hostnames: session directories and
  # shared-memory segments.
  rm -rf /tmp/ompi."$prefix"-n[0-9]*.* /dev/shm/*."$prefix"-n[0-9]*.* 2>/dev/null || true
  rm -f "$dir/state" "$dir/hosts" "$dir/hostfile" "$dir/agent"
  echo "cluster down: removed $(echo $nss | wc -w) namespaces"
}

verb=${1:-}
[ $# -gt 0 ] && shift
case $verb in
  up) can_run
      ip netns add "$prefix-probe" 2>/dev/null && ip netns del "$prefix-probe" ||
        skip "cannot make network namespaces here (a container without CAP_SYS_ADMIN?)"
      up "$@" ;;
  mpirun) can_run; run_mpirun "$@" ;;
  exec) can_run; load; [ $# -ge 1 ] || die "usage: cluster.sh exec NODE CMD..."; n=$(node_name "$1"); shift
        agent --argv "$n" "$@" ;;
  agent) agent "$@" ;;
  status) can_run; status ;;
  shape) can_run; shape "$@" ;;
  down) can_run; down ;;
  *) sed -n '2,26p' "$self" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
