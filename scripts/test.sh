#!/usr/bin/env bash
# Builds and runs every test: a Release build, its tests on one node and
# across the nodes of an emulated cluster (root only), an install check
# (find_package(a2a) and pkg-config from a fresh prefix), the same tests
# under AddressSanitizer + UndefinedBehaviorSanitizer, every libFuzzer
# target on the same inputs each run (scripts/fuzz.sh --runs), the SimGrid
# SMPI build (CMake preset smpi) and its simulated tests (ctest label sim),
# then the build against MPICH (preset mpich) and its test preset (what
# differs there, see docs/testing.md).  Ends with each phase's seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# Each MPI test holds one ctest slot per rank (PROCESSORS, from its .npN
# name); Open MPI's oversubscribed ranks yield while they wait, so a budget
# of 4 ranks per core keeps the cores busy, and a test of more ranks runs
# alone: two of 12-16 ranks side by side took longer than one after the
# other (docs/testing.md).  MPICH's ranks busy-poll instead: its preset
# runs with one slot per core, so one MPI test at a time.
test_jobs=$((4 * jobs))
took=()
phase() {  # phase NAME COMMAND...: runs it, keeps its time for the summary
  local name=$1 t0=$SECONDS; shift
  "$@"
  took+=("$(printf '%-16s %5d s' "$name" $((SECONDS - t0)))")
}
configure_and_build() {  # DIR CMAKE-CONFIGURE-ARGS...
  local dir=$1; shift
  cmake "$@" >/dev/null && cmake --build "$dir" -j "$jobs"
}
trap 'printf "%s\n" "${took[@]}" "$(printf "%-16s %5d s" total $SECONDS)"' EXIT

phase deps bash scripts/install-deps.sh
source scripts/env.sh
phase build configure_and_build build -S . -B build -DCMAKE_BUILD_TYPE=Release
phase tests ctest --test-dir build -LE cluster -j "$test_jobs" --output-on-failure
# Real node boundaries: each shape an emulated cluster of its own
# (scripts/cluster.sh, network namespaces); root only, elsewhere every
# test of the label exits 77 and ctest lists it as skipped.
[ "$(id -u)" = 0 ] || echo "cluster: not root, so the cluster label's tests are skipped"
phase cluster ctest --test-dir build -L cluster -j "$jobs" --output-on-failure
phase install-check bash scripts/check-install.sh build
# Line tables only (-g1): the reports' stacks keep file and line, and the
# build spends less on debug information (test TUs 15-20 % faster).
phase build-sanitize configure_and_build build-sanitize -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DA2A_SANITIZE=ON \
  -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1
phase tests-sanitize ctest --test-dir build-sanitize -LE cluster -j "$test_jobs" --output-on-failure
phase fuzz bash scripts/fuzz.sh --runs 300000
phase build-smpi configure_and_build build-smpi --preset smpi
# SMPI runs a simulation in one thread: one per core.
phase tests-smpi ctest --test-dir build-smpi -L sim -j "$jobs" --output-on-failure
phase build-mpich configure_and_build build-mpich --preset mpich
phase tests-mpich ctest --preset mpich -j "$jobs"
phase install-mpich bash scripts/check-install.sh build-mpich
