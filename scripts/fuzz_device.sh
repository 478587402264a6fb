#!/usr/bin/env bash
# A long fuzzing run on the device machine (the device tool runs it over a copy of the tree, with the bundle carried):
# the host's description, then scripts/fuzz_long.sh on a bundle that scripts/fuzz_bundle.sh made here.
# Usage (on the device; $OUT is the folder that comes back):
#   scripts/fuzz_device.sh BUNDLE "TARGETS" LIMIT_S SHA NAME [CORPUS_IN_DIR]
# e.g. scripts/fuzz_device.sh build-fuzz/bundle-cli cli-parse 545 <sha> cliparse build-fuzz/corpus-in
# Results land in $OUT/NAME (summary.json, summary.md, fuzz.log, artifacts/); CORPUS_OUT=1 in the environment also
# leaves each target's corpus there, for the next call's CORPUS_IN (a run longer than one call: one campaign).
# ASan keeps two frames of each allocation's stack (about 25% more inputs a second; crash stacks are unchanged).
# The runner is this tree's scripts/fuzz_long.sh (not the bundle's copy), so its options reach bundles made before
# them: SHARDED=1 in the environment splits a large corpus among the workers (tests/fuzz/long-runs/2026-12-07d-devvm).
set -uo pipefail
bundle=$1; targets=$2; limit=$3; sha=$4; name=$5
lscpu > "$OUT/host.txt"; uname -a >> "$OUT/host.txt"; cat /etc/os-release >> "$OUT/host.txt"
date -u +%FT%TZ >> "$OUT/start.txt"
ASAN_OPTIONS=malloc_context_size=2 CORPUS_IN="${6:-}" TARGETS="$targets" \
    bash "$(dirname "$0")/fuzz_long.sh" "$bundle" "$OUT/$name" 10000000 16 "$sha" "$limit"
echo "fuzz_device: fuzz_long.sh exit $?"
ls "$OUT/$name" "$OUT/$name/artifacts"
