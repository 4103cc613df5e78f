#!/usr/bin/env bash
# Packs the GPU checks for a GPU machine that cannot build them: no Debian packages and no
# network, but a driver, the CUDA 13 runtime and NCCL (for example from pip's nvidia-nccl-cu13).
# Builds the GPU targets here, with the CUDA and NCCL backends forced on, and copies spmdsim, the
# three GPU test binaries and the shared libraries they need that such a machine may lack into
#
#   tools/pack-gpu-tests.sh DIR        ->  DIR/bin, DIR/lib
#
# Then, on the GPU machine, in a checkout of the same commit: tools/check-gpu-build.sh DIR/bin.
# The C library, libstdc++ and NCCL stay out (NCCL's library is over 200 MB); the binaries need
# glibc 2.34 and GLIBCXX_3.4.30 (GCC 12) or newer. cuda_backend_test reads the conformance cases
# from this checkout's absolute path, so the GPU machine's checkout must be reachable there too.
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
echo "packed $(ls "$out/lib" | wc -l) libraries and ${#binaries[@]} binaries into $out ($(du -sh "$out" | cut -f1))"
