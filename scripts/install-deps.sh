#!/usr/bin/env bash
# Installs the Debian 12 packages a2a builds, tests and plots with (only the
# missing ones; apt-get update only when something is missing).
set -euo pipefail
# hpcc and FFTW (libfftw3-mpi-dev lacks fftw3.h, hence libfftw3-dev): the
# applications the PMPI shim is tested under (tests/apps/).  clang and its
# libFuzzer runtime: scripts/fuzz.sh; valgrind: the valgrind.* tests.
# python3-mpi4py (on Open MPI): mpi4py's nonblocking all-to-all under the shim.
# iproute2 (ip netns, tc) and util-linux (unshare): scripts/cluster.sh's nodes.
# MPICH installs beside Open MPI (which keeps the higher alternatives
# priority, so mpicc and mpirun stay Open MPI's): the CMake preset mpich.
pkgs=(cmake g++ gfortran make pkg-config libopenmpi-dev openmpi-bin libgtest-dev libcli11-dev nlohmann-json3-dev
      python3 python3-matplotlib libbenchmark-dev libsimgrid-dev hpcc libfftw3-dev libfftw3-mpi-dev time clang libclang-rt-14-dev valgrind
      mpich libmpich-dev python3-mpi4py iproute2 util-linux)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
