#!/usr/bin/env bash
# A long fuzzing run of every libFuzzer target in a bundle (scripts/fuzz_bundle.sh): RUNS executions per target,
# spread over JOBS parallel workers that share one growing corpus; then a summary (summary.json, summary.md) with
# the executions, the time, the corpus growth and the crashes of each target, and the run's provenance.
# Usage: fuzz_long.sh BUNDLE OUT [RUNS=10000000] [JOBS=nproc] [GIT_SHA=unknown] [SECONDS_PER_TARGET=0: no limit]
# (a target stopped by the time limit reports the executions it reached; the summary says so).
# TARGETS (environment) picks targets; OUT gets summary.json, summary.md, fuzz.log (each target's last lines);
# CORPUS_OUT=1 also leaves each target's final corpus (corpus-TARGET.tar.gz), which CORPUS_IN=DIR starts from;
# SHARDED=1 splits the starting corpus among the workers (one replay of it in all, not one a worker).
# Exit status: 0 when no target crashed, 1 otherwise (the crashing inputs are in OUT/artifacts).
set -uo pipefail
bundle=$(cd "$1" && pwd)
out=$2
runs=${3:-10000000}
jobs=${4:-$(nproc)}
sha=${5:-unknown}
limit=${6:-0}
mkdir -p "$out/artifacts"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Leak checks stay on; ASAN_OPTIONS from the environment come first (e.g. malloc_context_size=5: shorter allocation
# stacks in reports, and faster allocations for the allocation-heavy readers).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
rows=()
table=()
status=0
# The command line's target runs twice: cli-parse with no subcommand run (parsing and checks alone), cli in full.
for target in ${TARGETS:-model-json onnx files cli-parse cli}; do
    work=$(mktemp -d)
    binary=$target
    if [[ $target == cli-parse ]]; then binary=cli; export ROOFPLAN_FUZZ_CLI_PARSE_ONLY=1; else unset ROOFPLAN_FUZZ_CLI_PARSE_ONLY; fi
    # A run continued from an earlier call (the device's calls end at 10 minutes): CORPUS_IN holds the corpus that
    # call left (corpus-TARGET.tar.gz, from CORPUS_OUT=1), so the two calls are one campaign.
    if [[ -n ${CORPUS_IN:-} && -f $CORPUS_IN/corpus-$target.tar.gz ]]; then
        mkdir "$work/corpus" && tar -xzf "$CORPUS_IN/corpus-$target.tar.gz" -C "$work/corpus"
    else
        cp -r "$bundle/corpus/$binary" "$work/corpus"
    fi
    seeds=$(ls "$work/corpus" | wc -l)
    start=$(date +%s)
    flags=(-runs=$(( (runs + jobs - 1) / jobs )) -max_total_time="$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$work/")
    if [[ -n ${SHARDED:-} ]]; then
        # SHARDED=1: each worker replays only its share of a large corpus before it fuzzes (with -jobs every worker
        # replays all of it: 3,342 inputs of whole commands took about 490 s a worker, a device call's whole time).
        # The workers are separate processes; the inputs they find go to one shared folder, which libFuzzer reloads,
        # so they still learn from each other; the final corpus is the shards and that folder.
        mkdir "$work/new"
        for ((i = 0; i < jobs; ++i)); do mkdir "$work/shard-$i"; done
        i=0
        for f in "$work/corpus"/*; do [[ -e $f ]] && mv "$f" "$work/shard-$(( i++ % jobs ))/"; done
        for ((i = 0; i < jobs; ++i)); do
            (cd "$work" && exec "$bundle/roofplan-fuzz-$binary" "${flags[@]}" new "shard-$i" > "fuzz-$i.log" 2>&1) &
        done
        wait
        # One mv per folder (no argument-list limit): an input found by two workers has one name (its SHA-1) in
        # two folders, which a single mv refuses to move twice ("will not overwrite just-created"); -f keeps one.
        for d in "$work"/shard-* "$work/new"; do find "$d" -maxdepth 1 -type f -exec mv -f -t "$work/corpus/" {} +; done
    else
        (cd "$work" && "$bundle/roofplan-fuzz-$binary" -jobs="$jobs" -workers="$jobs" "${flags[@]}" corpus >/dev/null 2>&1)
    fi
    seconds=$(( $(date +%s) - start ))
    done_runs=$(cat "$work"/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units:/ {s += $2} END {print s + 0}')
    crashes=$(ls "$work" | grep -cE '^(crash|leak|timeout|oom)-' || true)
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$out/artifacts/" 2>/dev/null || true
    { echo "== $target (worker 0, last lines)"; tail -n 30 "$work"/fuzz-0.log 2>/dev/null; } >> "$out/fuzz.log"
    corpus=$(ls "$work/corpus" | wc -l)
    [[ -z ${CORPUS_OUT:-} ]] || tar -czf "$out/corpus-$target.tar.gz" -C "$work/corpus" .
    rows+=("{\"target\": \"$target\", \"executions\": $done_runs, \"seconds\": $seconds, \"jobs\": $jobs, \"seed_inputs\": $seeds, \"corpus_after\": $corpus, \"crashes\": $crashes}")
    table+=("| $target | $done_runs | $seconds | $jobs | $seeds | $corpus | $crashes |")
    [[ $crashes -eq 0 ]] || status=1
    rm -rf "$work"
done
cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
{
    echo "{\"tool\": \"roofplan-fuzz-long\", \"provenance\": {\"date_utc\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"git_sha\": \"$sha\","
    echo "  \"host\": \"$(hostname) ($cpu, $(nproc) CPUs)\", \"command\": \"fuzz_long.sh BUNDLE OUT $runs $jobs $sha $limit\","
    echo "  \"sanitizers\": \"libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer (clang, -fno-sanitize-recover=undefined)\","
    echo "  \"asan_options\": \"$ASAN_OPTIONS\"},"
    echo " \"targets\": ["
    (IFS=$',\n'; echo "  ${rows[*]}")
    echo " ]}"
} > "$out/summary.json"
{
    echo "| target | executions | seconds | workers | seed inputs | corpus after | crashes |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${table[@]}"
} > "$out/summary.md"
cat "$out/summary.md"
exit $status
