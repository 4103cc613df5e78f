#!/usr/bin/env bash
# Runs spmdsim's GPU checks from built binaries (docs/gpu-backends.md): the three GPU test
# binaries, `spmdsim conform --backend cuda` on the public cases and `--backend nccl` on those
# whose mesh fits the machine's GPUs; the same for the random JAX cases of a packed folder.
# Fails if any GPU test skipped, since on a machine with a GPU a skip means the GPU was not
# usable. Ends with a row for the "GPU runs" table.
#
#   tools/check-gpu-build.sh BIN_DIR [LOG_DIR]
#
# BIN_DIR holds spmdsim, cuda_schedule_test, cuda_backend_test and nccl_ring_test: build/bin, or
# the bin/ of a folder made by tools/pack-gpu-tests.sh, whose lib/ beside it is then searched
# first. A jax-cases/ beside BIN_DIR is run too: a packed folder's, or build/jax-cases, which the
# JAX differential test (backends/jax/run_jax_conformance.sh) leaves. LOG_DIR (default: a temporary folder) receives the
# whole log (all.log) and each test binary's gtest JSON report.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:?usage: tools/check-gpu-build.sh BIN_DIR [LOG_DIR]}")
logs=${2:-$(mktemp -d)}
mkdir -p "$logs"
cases=tests/conformance/cases
# cuda_backend_test reads the public cases from here, not from the checkout that built it.
export SPMD_CONFORMANCE_DIR="$PWD/$cases"

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "check-gpu-build: nvidia-smi finds no GPU here; run this on a machine with an NVIDIA GPU" >&2
  exit 2
fi
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH="$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A packed folder carries no NCCL (its library is over 200 MB): use the machine's, which may be
# the one pip installs for PyTorch or JAX (nvidia-nccl-cu13).
if ldd "$bin/nccl_ring_test" | grep -q "libnccl.so.2 => not found"; then
  nccl_dir=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)
  [ -n "$nccl_dir" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$nccl_dir"
fi
ldd "$bin/spmdsim" "$bin/nccl_ring_test" | grep "not found" && {
  echo "check-gpu-build: libraries above are missing; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >&2
  exit 2
}

gpus=$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1)
log=$logs/all.log
status=0
for test in cuda_schedule_test cuda_backend_test nccl_ring_test; do
  "$bin/$test" --gtest_output="json:$logs/$test.json" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
case_folders=("$cases")
[ -d "$bin/../jax-cases" ] && case_folders+=("$(realpath "$bin/../jax-cases")")
for folder in "${case_folders[@]}"; do
  echo "spmdsim conform --backend cuda $folder" | tee -a "$log"
  "$bin/spmdsim" conform --backend cuda "$folder" 2>&1 | tee -a "$log" || status=1
  # NCCL runs one rank per GPU: the cases whose mesh fits this machine's GPUs.
  mapfile -t nccl_cases < <(python3 - "$gpus" "$folder"/*.json <<'PY'
import json, math, sys
gpus = int(sys.argv[1])
for path in sys.argv[2:]:
    if math.prod(json.load(open(path))["mesh"]["shape"]) <= gpus:
        print(path)
PY
  )
  echo "NCCL: ${#nccl_cases[@]} cases of $folder fit $gpus GPUs" | tee -a "$log"
  if [ "${#nccl_cases[@]}" -gt 0 ]; then
    "$bin/spmdsim" conform --backend nccl "${nccl_cases[@]}" 2>&1 | tee -a "$log" || status=1
  fi
done
if grep -q "SKIPPED\|Not Run\|Skipped" "$log"; then
  echo "check-gpu-build: a GPU test skipped on a machine with a GPU; see the reasons above" >&2
  status=1
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
nccl=$(grep -oE "^NCCL [0-9]+\.[0-9.+a-z]*" "$log" | head -1 | cut -d' ' -f2)
result=$([ "$status" -eq 0 ] && echo "all GPU tests pass" || echo "FAILED (exit $status)")
echo
commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
echo "Row for docs/gpu-backends.md, GPU runs ($(date -u +%F), commit $commit):"
case_list="the public cases"
if [ "${#case_folders[@]}" -gt 1 ]; then
  case_list+=" and $(ls "${case_folders[1]}"/*.json | wc -l) random JAX cases"
fi
echo "| $gpu x$gpus | $driver | ${nccl:-?} | the GPU test binaries;" \
     "conform --backend cuda, nccl on $case_list | as in the test table | $result |"
exit "$status"
