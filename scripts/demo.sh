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
echo
echo "== ResNet-50 training, batch 256 per GPU: V100 vs A100 vs H100 (eager PyTorch as roofplan lowers it, default profiles) =="
for precision in fp32 amp-fp16; do
    for device in v100-sxm2-32gb a100-sxm4-80gb h100-sxm; do
        build/tools/roofplan predict --model resnet50 --device "$device" --batch 256 --precision "$precision" \
            | sed -n '1p;4,6p;9,10p'
        echo
    done
done
echo "== The roofline chart of that H100 run: build/resnet50-h100.svg =="
build/tools/roofplan roofline --model resnet50 --device h100-sxm --batch 256 --precision amp-bf16 \
    --svg build/resnet50-h100.svg
