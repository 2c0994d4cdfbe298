#!/usr/bin/env bash
# Installs a built tree into a fresh prefix and builds a consumer against it
# twice: with find_package(a2a) / a2a::a2a, and with pkg-config a2a and the
# plain C compiler (so a2a.pc alone must name the MPI the library was built
# with; a2aConfig.cmake likewise), then runs both with that MPI's launcher.  Works for the Open MPI
# build (build/) and the MPICH one (build-mpich/).
set -euo pipefail
build=${1:-build}
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
mpiexec=$(cached MPIEXEC_EXECUTABLE)
# A consumer and liba2a must load the one MPI library the build used.
mpi_of() { LD_LIBRARY_PATH="$libdir" ldd "$1" | grep -oE 'lib(mpi|mpich)\.so[^ ]*' | sort -u; }
same_mpi() {
  [ -n "$(mpi_of "$libdir/liba2a.so")" ] && [ "$(mpi_of "$1")" = "$(mpi_of "$libdir/liba2a.so")" ] ||
    { echo "$1 links $(mpi_of "$1"), liba2a $(mpi_of "$libdir/liba2a.so")"; exit 1; }
}
flags=()
# Not `--version | grep -q`: grep's early exit can kill mpiexec with SIGPIPE,
# and pipefail then takes MPICH's Hydra for Open MPI.
version=$("$mpiexec" --version 2>&1 || true)
[[ $version == *HYDRA* ]] || flags=(--oversubscribe)
launch=("$mpiexec" "${flags[@]}")
[ -n "${CHECK_INSTALL_LAUNCHER:-}" ] && read -r -a launch <<<"$CHECK_INSTALL_LAUNCHER"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name a2a.pc)")/..
mkdir -p "$work/consumer"
cat >"$work/consumer/main.c" <<'C'
#include <a2a/a2a.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int s[64], r[64];
  for (int i = 0; i < size; ++i) s[i] = rank * 100 + i;
  int rc = A2A_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD, "tra:radix=2");
  int bad = rc != MPI_SUCCESS;
  for (int i = 0; i < size; ++i) bad |= r[i] != i * 100 + rank;
  A2A_Stats st;
  A2A_Last_stats(&st);
  if (rank == 0) printf("consumer: %s %s\n", st.algorithm, bad ? "WRONG" : "ok");
  MPI_Finalize();
  return bad;
}
C
cat >"$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(a2a REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE a2a::a2a)
CM
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
same_mpi "$work/consumer/build/consumer"
"${launch[@]}" -np 3 "$work/consumer/build/consumer"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc "$work/consumer/main.c" $(pkg-config --cflags --libs a2a) -o "$work/consumer/pc"
same_mpi "$work/consumer/pc"
LD_LIBRARY_PATH="$libdir" "${launch[@]}" -np 2 "$work/consumer/pc"
"$work/prefix/bin/a2a" model --procs 11 --radix 3 >/dev/null
echo "install check ok (${CHECK_INSTALL_LAUNCHER:-$(basename "$mpiexec")}): find_package(a2a) and pkg-config consumers ran on $(mpi_of "$libdir/liba2a.so")"
