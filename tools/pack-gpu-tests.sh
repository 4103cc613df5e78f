#!/usr/bin/env bash
# Packs the GPU checks for a GPU machine that cannot build them: no Debian packages and no
# network, but a driver, the CUDA 13 runtime and NCCL (for example from pip's nvidia-nccl-cu13).
# Builds the GPU targets here, with the CUDA and NCCL backends forced on, and copies spmdsim, the
# three GPU test binaries and the shared libraries they need that such a machine may lack into
# DIR/bin and DIR/lib; and generates random conformance cases with JAX into DIR/jax-cases
# (backends/jax/generate_cases.py, the JAX differential test's pinned JAX, from PyPI):
#
#   tools/pack-gpu-tests.sh DIR        ->  DIR/bin, DIR/lib, DIR/jax-cases
#
# Then, on the GPU machine, in a checkout of the same commit: tools/check-gpu-build.sh DIR/bin.
# The C library, libstdc++ and NCCL stay out (NCCL's library is over 200 MB); the binaries need
# glibc 2.34 and GLIBCXX_3.4.30 (GCC 12) or newer.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/pack-gpu-tests.sh DIR}
binaries=(spmdsim cuda_schedule_test cuda_backend_test nccl_ring_test)
cmake --preset ci -DSPMD_CUDA=ON -DSPMD_NCCL=ON >/dev/null
cmake --build --preset ci --target "${binaries[@]}"
mkdir -p "$out/bin" "$out/lib"
for binary in "${binaries[@]}"; do cp build/bin/"$binary" "$out/bin/"; done
ldd "${binaries[@]/#/build/bin/}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u \
  | grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libnccl)\.so' \
  | xargs -I{} cp -L {} "$out/lib/"
# shellcheck source=backends/jax/jax_venv.sh
source backends/jax/jax_venv.sh
ensure_jax_venv build/jax-venv "$jax_cases_version" "the random JAX cases of the GPU check"
rm -rf "$out/jax-cases"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu build/jax-venv/bin/python \
  backends/jax/generate_cases.py --out "$out/jax-cases" --count 400 --seed 11 --rules 40 | tail -1
echo "packed ${#binaries[@]} binaries, $(ls "$out/lib" | wc -l) libraries and" \
     "$(ls "$out"/jax-cases/*.json | wc -l) JAX cases into $out ($(du -sh "$out" | cut -f1))"
