#!/usr/bin/env bash
# Installs a pinned JAX CPU wheel into a virtual environment under the build folder (JAX
# 0.12.0.1 where a Python >= 3.12 is found, else 0.10.2: backends/jax/jax_venv.sh; the log's first
# line says which), checks that the public conformance cases (tests/conformance/cases) are what
# that JAX does (run_cases_in_jax.py; cases stating the other release are left to it), generates
# random conformance cases with it (generate_cases.py), plus RULE_COUNT cases for each JAX / XLA:CPU
# rule (--rules: ppermute indices, bool reductions, subnormals, groups of one, bfloat16 excess
# precision, NaN in pmax / pmin), and runs them through `spmdsim conform` on the reference, on the
# simulator with every algorithm and with ring on a torus, on Gloo in its ring order, and on Open
# MPI (8 ranks under mpirun) in its ring order, with the matching `--jax-version`. Exits 77 (CTest: skipped) with a message
# when this machine cannot reach PyPI.
# Usage: run_jax_conformance.sh BUILD_DIR SPMDSIM [CASE_COUNT [RULE_COUNT]]
set -euo pipefail
build_dir=$1
spmdsim=$2
case_count=${3:-200}
rule_count=${4:-40}
algorithms="direct ring bidirectional_ring halving_doubling binary_tree double_binary_tree"
here=$(cd "$(dirname "$0")" && pwd)
venv=${SPMD_JAX_VENV:-$build_dir/jax-venv}  # backends/jax/jax_venv.sh
cases=$build_dir/jax-cases

# shellcheck source=backends/jax/jax_venv.sh
source "$here/jax_venv.sh"
jax_choice_line
ensure_jax_venv "$venv" "$jax_cases_version" "the JAX differential test"

# Every run goes ahead even when one fails, so that one log shows them all.
failed=""
echo "run_cases_in_jax.py tests/conformance/cases"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
  "$venv/bin/python" "$here/run_cases_in_jax.py" "$here/../../tests/conformance/cases" \
  || failed="$failed [public cases in JAX]"

rm -rf "$cases"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
  "$venv/bin/python" "$here/generate_cases.py" --out "$cases" --count "$case_count" --seed 5 \
  --rules "$rule_count"

conform() {
  echo "spmdsim conform --jax-version $jax_reference_version $* $cases"
  "$spmdsim" conform --jax-version "$jax_reference_version" "$@" "$cases" || failed="$failed [$*]"
}
conform --backend reference
for algorithm in $algorithms; do
  conform --backend sim --algorithm "$algorithm"
done
conform --backend sim --algorithm ring --topology torus
conform --backend gloo --order gloo_ring
echo "mpirun -np 8 spmdsim conform --jax-version $jax_reference_version --backend mpi --order mpi_ring $cases"
mpirun --allow-run-as-root --oversubscribe -np 8 --mca mpi_yield_when_idle 1 \
  "$spmdsim" conform --jax-version "$jax_reference_version" --backend mpi --order mpi_ring \
  "$cases" || failed="$failed [--backend mpi]"
if [ -n "$failed" ]; then
  echo "JAX differential failed on:$failed"
  exit 1
fi
echo "JAX differential: $case_count generated cases and $rule_count per rule pass on the reference" \
  "and on the sim ($algorithms; ring on a torus), on Gloo (gloo_ring) and on Open MPI (mpi_ring)," \
  "generated with jax $jax_cases_version and run with --jax-version $jax_reference_version;" \
  "the public cases agree with that JAX"
