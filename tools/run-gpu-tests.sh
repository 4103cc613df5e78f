#!/usr/bin/env bash
# What a CI job on a machine with an NVIDIA GPU runs (docs/gpu-backends.md): installs the Debian
# packages, builds with the CUDA and NCCL backends forced on, and runs tools/check-gpu-build.sh:
# every GPU test and the conformance cases on the CUDA and NCCL backends, failing if any GPU test
# skipped. Ends with a row for the "GPU runs" table of docs/gpu-backends.md.
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
tools/check-gpu-build.sh build/bin
