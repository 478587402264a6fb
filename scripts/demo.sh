#!/usr/bin/env bash
# README command 1: set up, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo
echo "== The paper's Table II beside roofplan's counts =="
build/examples/roofplan-example-table2
echo
echo "== The model zoo =="
build/tools/roofplan models
echo
echo "== ResNet-50, batch 256, mixed precision: where the work is (first and last layers) =="
build/tools/roofplan inspect --model resnet50 --batch 256 --precision amp-fp16 | sed -n '1,12p;/^total/,$p'
