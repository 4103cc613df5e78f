#!/usr/bin/env bash
# JAX really compiles the HLO the importer reads: installs the pinned JAX CPU wheel into the build
# folder's virtual environment (as backends/jax/run_jax_conformance.sh does: JAX 0.12.0.1 where a
# Python >= 3.12 is found, else 0.10.2; backends/jax/jax_venv.sh), compiles the six
# programs of make_hlo_programs.py again on 8 fake CPU devices, checks that their collectives and
# memory_analysis() equal the committed summaries (tests/hlo/programs/*.json), and runs
# `spmdsim run dgx-h100` on every freshly compiled module. Exits 77 (CTest: skipped) with a message
# when this machine cannot reach PyPI.
# Usage: check_jax_hlo.sh BUILD_DIR SPMDSIM
set -euo pipefail
build_dir=$1
spmdsim=$2
here=$(cd "$(dirname "$0")" && pwd)
venv=${SPMD_JAX_VENV:-$build_dir/jax-venv}  # backends/jax/jax_venv.sh
fresh=$build_dir/hlo-programs

# shellcheck source=backends/jax/jax_venv.sh
source "$here/../../backends/jax/jax_venv.sh"
# The committed programs were compiled with 0.10.2; 0.12.0.1 gives the same collectives and
# memory_analysis (docs/jax-differences.md), so either JAX checks them.
jax_version=$jax_cases_version
jax_choice_line
ensure_jax_venv "$venv" "$jax_version" "the HLO import check"

rm -rf "$fresh"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
  "$venv/bin/python" "$here/make_hlo_programs.py" --out "$fresh"

python3 - "$here/programs" "$fresh" <<'PY'
import json, pathlib, sys
committed, fresh = map(pathlib.Path, sys.argv[1:])
failed = False
for path in sorted(committed.glob("*.json")):
    old, new = json.loads(path.read_text()), json.loads((fresh / path.name).read_text())
    for field in ("collectives", "memory_analysis"):
        if old[field] != new[field]:
            print(f"FAIL {path.name}: {field} differs: committed {old[field]}, compiled now {new[field]}")
            failed = True
sys.exit(1 if failed else 0)
PY

for module in "$fresh"/*.hlo; do
  echo "spmdsim run dgx-h100 $module"
  "$spmdsim" run dgx-h100 "$module" --out "$fresh/run-$(basename "$module" .hlo)" | grep -E "^(spmdsim run|collectives|time):"
done
# The bf16 program: XLA:CPU promoted its collectives to f32; the import times them in bf16 (the
# activations' psum over model: bf16[8,64], 1 KiB), and in f32 with --keep-cpu-promotion.
bf16_run() {
  "$spmdsim" run dgx-h100 "$fresh/bf16_tensor_data_parallel.hlo" --out "$fresh/run-bf16" "$@"
}
model_psum="psum('devices', axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]])"
bf16_run | grep -qF "$model_psum bfloat16[8,64] 1 KiB" ||
  { echo "FAIL bf16_tensor_data_parallel: expected its psum over model as bfloat16[8,64] 1 KiB"; bf16_run; exit 1; }
bf16_run | grep -qF "cpu promotion: 5 collectives XLA:CPU promoted from bf16 to f32, timed in bf16" ||
  { echo "FAIL bf16_tensor_data_parallel: expected 5 promoted collectives timed in bf16"; exit 1; }
bf16_run --keep-cpu-promotion | grep -qF "$model_psum float32[8,64] 2 KiB" ||
  { echo "FAIL bf16_tensor_data_parallel --keep-cpu-promotion: expected float32[8,64] 2 KiB"; exit 1; }
echo "bf16 program compiled for CPU: collectives timed in bf16 (f32 with --keep-cpu-promotion)"
echo "HLO import: $(ls "$fresh"/*.hlo | wc -l) programs compiled by jax $jax_version match the committed summaries and run"
