#!/usr/bin/env bash
# JAX really compiles the HLO the importer reads: installs the pinned JAX CPU wheel into the build
# folder's virtual environment (as backends/jax/run_jax_conformance.sh does: JAX 0.12.0.1 where a
# Python >= 3.12 is found, else 0.10.2; backends/jax/jax_venv.sh), compiles the five
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
echo "HLO import: $(ls "$fresh"/*.hlo | wc -l) programs compiled by jax $jax_version match the committed summaries and run"
