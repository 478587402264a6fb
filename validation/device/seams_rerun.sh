#!/usr/bin/env bash
# validation/device/seams_rerun.sh — on a GPU machine, from the repository root: builds the CUDA kernels (one
# harness, kernels/common/) and reruns the recorded suites with the recorded arguments, to show that the programs
# still measure what they measured: roofplan-bandwidth and roofplan-gemm as in validation/results/2026-11-21-h200/,
# and roofplan-nccl as in validation/results/2026-11-21-h200x2/ when two or more GPUs are visible.  The reports,
# logs and nvidia-smi's readings go to $OUT; a comparison with the recorded reports (compare_reports.py: per case
# new / recorded, median |difference|, fields missing) is printed last.
#
#   OUT=/tmp/out validation/device/seams_rerun.sh            # BUILD=dir to build elsewhere (default build-seams)
#
# Exit status: 0 when every program ran and verified and no recorded field is missing, else 1.
set -uo pipefail
: "${OUT:?set OUT to the folder for the reports and logs}"
mkdir -p "$OUT"
BUILD=${BUILD:-build-seams}
REC=validation/results
export NCCL_NVLS_ENABLE=0                                              # NVLink multicast stays off
ROOFPLAN_GIT_SHA=$(git rev-parse HEAD 2>/dev/null || echo unknown)     # provenance, not an argument
export ROOFPLAN_GIT_SHA
status=0
step() { printf '%s  %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# NCCL may come as a Python wheel (nvidia-nccl-cu13) rather than with the toolkit: CMake looks under $NCCL_HOME.
if [ -z "${NCCL_HOME:-}" ]; then
    NCCL_HOME=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
    [ -n "$NCCL_HOME" ] && export NCCL_HOME
fi

# ---- Build: the whole project where Boost, Eigen and nlohmann_json are installed, else the kernels alone.
step "configure ($BUILD)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90)
if ! cmake -S . -B "$BUILD" "${generator[@]}" "${common[@]}" -DROOFPLAN_BUILD_CUDA=ON -DROOFPLAN_BUILD_TOOLS=OFF \
        -DROOFPLAN_BUILD_TESTS=OFF -DROOFPLAN_BUILD_EXAMPLES=OFF -DROOFPLAN_BUILD_BENCHMARKS=OFF >"$OUT/configure.log" 2>&1; then
    step "the project does not configure here (see configure.log); configuring kernels/ alone"
    rm -rf "$BUILD"
    cmake -S kernels -B "$BUILD" "${generator[@]}" "${common[@]}" >>"$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
fi
grep 'roofplan kernels:' "$OUT/configure.log" | sed 's/^-- /  /'
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
targets=(roofplan-bandwidth roofplan-gemm)
[ "$ngpu" -ge 2 ] && grep -q 'building roofplan-nccl$' "$OUT/configure.log" && targets+=(roofplan-nccl)
step "build ${targets[*]}"
cmake --build "$BUILD" --target "${targets[@]}" -j "$(nproc)" >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
bin=$(dirname "$(find "$BUILD" -name roofplan-gemm -type f -perm -u+x | head -1)")

nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,ecc.mode.current \
    --format=csv >"$OUT/nvidia-smi.csv" 2>&1 || true

# ---- Runs, with the recorded command lines' arguments.
run() {  # run NAME PROGRAM ARGS...: stderr to $OUT/NAME.log
    local name=$1 start=$SECONDS rc
    shift
    step "$name: $*"
    "$@" 2>"$OUT/$name.log"
    rc=$?
    step "$name: exit $rc after $((SECONDS - start)) s"
    [ "$rc" -eq 0 ] || { status=1; tail -5 "$OUT/$name.log"; }
}
pairs=()
run bandwidth "$bin/roofplan-bandwidth" --seed 20261121 --json "$OUT/bandwidth_h200.json"
pairs+=("$OUT/bandwidth_h200.json" "$REC/2026-11-21-h200/bandwidth_h200.json")
run gemm "$bin/roofplan-gemm" --precision all --sizes 1024,2048,4096,8192 --shapes-file validation/shapes/zoo_gemm.txt \
    --seed 20261121 --json "$OUT/gemm_h200.json"
pairs+=("$OUT/gemm_h200.json" "$REC/2026-11-21-h200/gemm_h200.json")
if [ -x "$bin/roofplan-nccl" ]; then
    run nccl "$bin/roofplan-nccl" --gpus 2 --op all --sweep 1MB:1GB --seed 1 --json "$OUT/nccl_h200x2.json"
    pairs+=("$OUT/nccl_h200x2.json" "$REC/2026-11-21-h200x2/nccl_h200x2.json")
else
    step "nccl: skipped ($ngpu GPU(s) visible, or NCCL not found: see configure.log)"
fi

# ---- New vs recorded.
existing=()
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
    [ -s "${pairs[i]}" ] && existing+=("${pairs[i]}" "${pairs[i + 1]}")
done
[ ${#existing[@]} -gt 0 ] && { python3 validation/device/compare_reports.py "${existing[@]}" || status=1; }
step "done: status $status; reports and logs in $OUT"
exit "$status"
