#!/usr/bin/env python3
"""Issue 16's input-pipeline bar on the machine the tests run on: the rate of a data loader of W workers, predicted
by roofplan from this machine's own one-worker micro-benchmark, is within 15% of the rate W workers measure in
the same run (validation/host/decode_bench.py both times; W = the usable cores, at most 4; up to three pairs when
the machine is busy).

  check_decode_rate.py --python /usr/bin/python3 --roofplan build/tools/roofplan [--tolerance 0.15]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "validation", "host", "decode_bench.py")


def bench(python, folder, workers, name):
    out = os.path.join(folder, name)
    subprocess.run([python, BENCH, "--json", out, "--workers", str(workers), "--images", "96", "--rounds", "5"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--roofplan", required=True)
    ap.add_argument("--tolerance", type=float, default=0.15)
    a = ap.parse_args()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = max(1, min(4, usable))
    batch = 256
    # A pair of measurements is only as good as the machine is quiet: a load outside the test (the test runs
    # alone in ctest, RUN_SERIAL) takes cores from the workers.  Up to three pairs; every one is printed.
    errors = []
    for attempt in range(3):
        with tempfile.TemporaryDirectory(prefix="roofplan-decode-check-") as folder:
            per_core = bench(a.python, folder, 1, "one.json")["images_per_s"]
            measured = bench(a.python, folder, workers, "many.json")["images_per_s"]
        cmd = [a.roofplan, "predict", "-m", "resnet50", "-d", "h200", "-b", str(batch), "-p", "amp-bf16",
               "--input-source", "cpu-decode", "--loader-workers", str(workers), "--decode-rate", f"{per_core:.6g}",
               "--json"]
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        if out["input_workers"] != workers:
            sys.exit(f"roofplan used {out['input_workers']} workers, asked for {workers}")
        predicted = batch / out["input_pipeline_s"]
        error = measured / predicted - 1
        errors.append(error)
        print(f"pair {attempt + 1}: one worker {per_core:.1f} images/s per core; {workers} workers on {usable} usable "
              f"cores: measured {measured:.1f} images/s, roofplan {predicted:.1f} ({100 * error:+.1f}%, bound "
              f"{100 * a.tolerance:.0f}%)")
        if abs(error) <= a.tolerance:
            return
    sys.exit(f"the pipeline's rate is off by {', '.join(f'{100 * e:+.1f}%' for e in errors)} in three pairs "
             f"(bound {100 * a.tolerance:.0f}%)")


if __name__ == "__main__":
    main()
