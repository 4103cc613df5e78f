#!/usr/bin/env bash
# What a CI job on a machine with an NVIDIA GPU runs (docs/gpu-backends.md): builds with the CUDA
# and NCCL backends forced on, runs every GPU test (CTest label "gpu") and the conformance cases
# on the CUDA and NCCL backends, and fails if any GPU test skipped, since on a GPU machine a skip
# means the GPU was not usable. Ends with a row for the "GPU runs" table of docs/gpu-backends.md.
# Needs the CUDA toolkit (nvcc) and NCCL (nccl.h, libnccl.so) under /usr/local/cuda or on the
# compiler's search paths, and the NVIDIA driver (nvidia-smi).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run-gpu-tests: nvidia-smi finds no GPU here; run this on a machine with an NVIDIA GPU" \
       "(elsewhere tools/run-tests.sh runs everything and the GPU tests skip)" >&2
  exit 2
fi
tools/install-deps.sh
cmake --preset ci -DSPMD_CUDA=ON -DSPMD_NCCL=ON
cmake --build --preset ci
gpus=$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1)
log=$(mktemp)
status=0
ctest --preset ci -L gpu --output-on-failure 2>&1 | tee "$log" || status=$?
build/bin/spmdsim conform --backend cuda tests/conformance/cases 2>&1 | tee -a "$log" || status=1
# NCCL runs one rank per GPU: the public cases whose mesh fits this machine's GPUs.
mapfile -t nccl_cases < <(python3 - "$gpus" tests/conformance/cases/*.json <<'PY'
import json, math, sys
gpus = int(sys.argv[1])
for path in sys.argv[2:]:
    if math.prod(json.load(open(path))["mesh"]["shape"]) <= gpus:
        print(path)
PY
)
echo "NCCL: ${#nccl_cases[@]} public cases fit $gpus GPUs"
if [ "${#nccl_cases[@]}" -gt 0 ]; then
  build/bin/spmdsim conform --backend nccl "${nccl_cases[@]}" 2>&1 | tee -a "$log" || status=1
fi
if grep -q "SKIPPED\|Not Run\|Skipped" "$log"; then
  echo "run-gpu-tests: a GPU test skipped on a machine with a GPU; see the reasons above" >&2
  status=1
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
nccl=$(grep -o "NCCL version [0-9.+a-z]*" "$log" | head -1 | cut -d' ' -f3)
result=$([ "$status" -eq 0 ] && echo "all GPU tests pass" || echo "FAILED (exit $status)")
echo
echo "Row for docs/gpu-backends.md, GPU runs ($(date -u +%F), commit $(git rev-parse --short HEAD)):"
echo "| $gpu x$gpus | $driver | ${nccl:-?} | ctest -L gpu; conform --backend cuda, nccl | as in the test table | $result |"
exit "$status"
