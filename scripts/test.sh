#!/usr/bin/env bash
# README command 2: set up, build with warnings as errors, run every test; then again under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# Each phase's start, in seconds since this script's: CI must stay under 45 minutes on 2 cores.
phase() { echo "== [${SECONDS} s] $*"; }

phase "set up and build, warnings as errors"
scripts/setup.sh build-ci -DROOFPLAN_WARNINGS_AS_ERRORS=ON -DROOFPLAN_REQUIRE_FEATURES=ON
phase "every header on its own"
cmake --build build-ci --target all_verify_interface_header_sets -j"$jobs"
phase "ctest"
(cd build-ci && ctest --output-on-failure -j"$jobs")

# The library's code paths under the sanitizers: the unit tests and the CLI (its commands, bad input, ONNX import,
# CSV, validate), not the examples and tools that add build time and no paths of their own (the goldens need the
# examples; the time limits of bad_input.time.* are for optimized builds: both ran above); -O0 (Debug) because the
# sanitized templates compile 2.5x faster than at -O2 -g, and the tests are short.
phase "AddressSanitizer + UndefinedBehaviorSanitizer: unit tests and the CLI"
ROOFPLAN_SETUP_TARGETS="roofplan-unit-tests roofplan-bad-input-tests roofplan-cli" scripts/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug \
    -DROOFPLAN_SANITIZE=ON -DROOFPLAN_WARNINGS_AS_ERRORS=ON -DROOFPLAN_BUILD_CUDA=OFF -DROOFPLAN_ORACLE_TESTS=OFF \
    -DROOFPLAN_BUILD_BENCHMARKS=OFF -DROOFPLAN_BUILD_EXAMPLES=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs" -R "^(unit|cli\.|bad_input\.|onnx\.|csv\.|validate\.)" -E "^bad_input\.time\.")

phase "libFuzzer: the JSON and ONNX model readers, the device/system/profile/report readers and the command line, 20 s each on the seed corpus"
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DROOFPLAN_FUZZ=ON \
    -DROOFPLAN_BUILD_TESTS=OFF -DROOFPLAN_BUILD_EXAMPLES=OFF -DROOFPLAN_BUILD_TOOLS=OFF -DROOFPLAN_BUILD_BENCHMARKS=OFF \
    -DROOFPLAN_BUILD_CUDA=OFF -DROOFPLAN_INSTALL=OFF -DROOFPLAN_WITH_ONNX=ON -DROOFPLAN_PYTHON=OFF >/dev/null
cmake --build build-fuzz -j"$jobs"
for reader in model-json onnx files cli; do
    corpus=build-fuzz/corpus-$reader
    rm -rf "$corpus" && mkdir -p "$corpus" && cp tests/fuzz/corpus/${reader#model-}/* "$corpus"/
    build-fuzz/tests/fuzz/roofplan-fuzz-$reader -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=build-fuzz/ "$corpus" 2>&1 | tail -n 3
done
phase "done"
