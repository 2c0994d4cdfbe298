#!/usr/bin/env bash
# Builds and runs every test: a Release build, an install check
# (find_package(a2a) and pkg-config from a fresh prefix), the same tests
# under AddressSanitizer + UndefinedBehaviorSanitizer, every libFuzzer
# target on the same 300,000 inputs each run (scripts/fuzz.sh --runs), the
# SimGrid SMPI build (CMake preset smpi) and its simulated tests (ctest label
# sim), then the build against MPICH (preset mpich) and 269 of its 302
# tests (test preset mpich: all but the 25 that crawl there, see README).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
source scripts/env.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest -j "$jobs" --output-on-failure)
bash scripts/check-install.sh build
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DA2A_SANITIZE=ON >/dev/null
cmake --build build-sanitize -j "$jobs"
(cd build-sanitize && ctest -j "$jobs" --output-on-failure)
bash scripts/fuzz.sh --runs 300000
cmake --preset smpi >/dev/null
cmake --build build-smpi -j "$jobs"
(cd build-smpi && ctest -L sim --output-on-failure)
cmake --preset mpich >/dev/null
cmake --build build-mpich -j "$jobs"
ctest --preset mpich -j "$jobs"
bash scripts/check-install.sh build-mpich
