#!/usr/bin/env bash
# Regenerates the scaling plot README.md shows (docs/images/scale-mlp-dgx-h100.png) with the
# command printed beside it there.
# Usage: tools/regenerate-scale-plot.sh [SPMDSIM]   (SPMDSIM: default build/bin/spmdsim)
set -euo pipefail
cd "$(dirname "$0")/.."
spmdsim=${1:-build/bin/spmdsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$spmdsim" scale --workload docs/workloads/mlp-data-parallel.json \
    --machine dgx-h100-x4 --devices 8,16,32,64,128,256 --out "$out"
cp "$out/scale.png" docs/images/scale-mlp-dgx-h100.png
echo "docs/images/scale-mlp-dgx-h100.png regenerated"
