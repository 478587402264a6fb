#!/usr/bin/env bash
# Installs what roofplan needs on a fresh Debian machine (if missing) and builds it.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build libeigen3-dev doctest-dev libboost-dev libcli11-dev nlohmann-json3-dev
          libbenchmark-dev python3-torch python3-torchvision python3-pil python3-numpy librsvg2-bin libopenmpi-dev
          libonnx-dev libprotobuf-dev python3-onnx clang libclang-rt-14-dev python3-dev pybind11-dev python3-pytest)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "roofplan setup: installing ${missing[*]}"
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${1:-build}
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROOFPLAN_WITH_ONNX=ON "$@" >/dev/null
# ROOFPLAN_SETUP_TARGETS (environment): build only these targets (scripts/test.sh's sanitizer stage).
targets=()
for t in ${ROOFPLAN_SETUP_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
