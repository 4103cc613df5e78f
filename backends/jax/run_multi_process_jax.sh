#!/usr/bin/env bash
# The multi-process differential test (docs/multi-process.md): real multi-process JAX on CPU (2
# and 3 processes on loopback, joined by jax.distributed, collectives over Gloo) computes the
# cases that backends/jax/multi_process_cases.py writes, among them hosts that load the wrong
# rows; `spmdsim conform` then runs them on the reference (in Gloo's order, as the cases say), on
# the simulator (in its own order, compared with the reference in that order) and on the Gloo
# backend. Exits 77 (CTest: skipped) with a message when this machine cannot reach PyPI.
# Usage: run_multi_process_jax.sh BUILD_DIR SPMDSIM
set -euo pipefail
build_dir=$1
spmdsim=$2
here=$(cd "$(dirname "$0")" && pwd)
venv=${SPMD_JAX_VENV:-$build_dir/jax-venv}
cases=$build_dir/jax-multi-process-cases

# shellcheck source=backends/jax/jax_venv.sh
source "$here/jax_venv.sh"
ensure_jax_venv "$venv" "$jax_cases_version" "the multi-process JAX differential test"

rm -rf "$cases"
"$venv/bin/python" "$here/multi_process_cases.py" --out "$cases"

failed=""
conform() {
  echo "spmdsim conform $* $cases"
  "$spmdsim" conform "$@" "$cases" || failed="$failed [$*]"
}
conform --backend reference
conform --backend sim --order xla_cpu
conform --backend gloo
if [ -n "$failed" ]; then
  echo "JAX multi-process differential failed on:$failed"
  exit 1
fi
count=$(find "$cases" -name '*.json' | wc -l)
echo "JAX multi-process differential: $count cases computed by multi-process JAX pass on the" \
  "reference, the sim and Gloo"
