#!/usr/bin/env bash
# Installs a pinned JAX CPU wheel into a virtual environment under the build folder, generates
# random conformance cases with it (generate_cases.py), and runs them through `spmdsim conform` on
# the reference and on the simulator (direct algorithm). Exits 77 (CTest: skipped) with a message
# when this machine cannot reach PyPI.
# Usage: run_jax_conformance.sh BUILD_DIR SPMDSIM [CASE_COUNT]
set -euo pipefail
build_dir=$1
spmdsim=$2
case_count=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
jax_version=0.10.2  # the version docs/jax-checklist.md targets (tag jax-v0.10.2)
venv=$build_dir/jax-venv
cases=$build_dir/jax-cases

if ! "$venv/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '$jax_version')" 2>/dev/null; then
  if ! python3 -c "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/jax/', timeout=15)" 2>/dev/null; then
    echo "SKIPPED: this machine cannot reach PyPI (https://pypi.org/simple/jax/), so jax==$jax_version cannot be installed; the JAX differential test needs it"
    exit 77
  fi
  echo "installing jax==$jax_version jaxlib==$jax_version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "jax==$jax_version" "jaxlib==$jax_version"
fi

rm -rf "$cases"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
  "$venv/bin/python" "$here/generate_cases.py" --out "$cases" --count "$case_count" --seed 5

echo "spmdsim conform --backend reference $cases"
"$spmdsim" conform --backend reference "$cases"
echo "spmdsim conform --backend sim --algorithm direct $cases"
"$spmdsim" conform --backend sim --algorithm direct "$cases"
echo "JAX differential: $case_count generated cases pass on the reference and on the sim (direct)"
