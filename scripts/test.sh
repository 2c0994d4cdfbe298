#!/usr/bin/env bash
# Builds and runs every test: a Release build, an install check
# (find_package(a2a) and pkg-config from a fresh prefix), the same tests
# under AddressSanitizer + UndefinedBehaviorSanitizer, every libFuzzer
# target for 10 s (scripts/fuzz.sh), then the SimGrid SMPI build (CMake
# preset smpi) and its simulated tests (ctest label sim).
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
bash scripts/fuzz.sh 10
cmake --preset smpi >/dev/null
cmake --build build-smpi -j "$jobs"
(cd build-smpi && ctest -L sim --output-on-failure)
