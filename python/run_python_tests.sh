#!/usr/bin/env bash
# The Python package's pytest suite (python/tests) on the module the build tree made
# (BUILD/python/spmdsim, SPMD_PYTHON=ON), with real JAX and Hypothesis: in the JAX virtual
# environment the other JAX tests use (backends/jax/jax_venv.sh: BUILD/jax-venv or
# SPMD_JAX_VENV), with pytest and Hypothesis added to it. Exits 77 (CTest: skipped) with a message
# when PyPI cannot be reached.
# Usage: run_python_tests.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
venv=${SPMD_JAX_VENV:-$build_dir/jax-venv}

# shellcheck source=backends/jax/jax_venv.sh
source "$here/../backends/jax/jax_venv.sh"
ensure_jax_venv "$venv" "$jax_cases_version" "the Python package's tests"

if ! ls "$build_dir"/python/spmdsim/_core.*.so >/dev/null 2>&1; then
  echo "SKIPPED: $build_dir/python/spmdsim has no _core module: configure found no Python headers, or no nanobind and pip could not install it from PyPI (its warning says which; python/CMakeLists.txt)"
  exit 77
fi
suffix=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
if [ ! -e "$build_dir/python/spmdsim/_core$suffix" ]; then
  echo "FAIL: $venv's Python imports _core$suffix, but the build made $(basename "$build_dir"/python/spmdsim/_core.*.so); configure with -DPython_EXECUTABLE= that Python"
  exit 1
fi
if ! "$venv/bin/python" -c "import pytest, hypothesis" 2>/dev/null; then
  if ! python3 -c "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/hypothesis/', timeout=15)" 2>/dev/null; then
    echo "SKIPPED: this machine cannot reach PyPI (https://pypi.org/simple/hypothesis/), so pytest and hypothesis cannot be installed; the Python package's tests need them"
    exit 77
  fi
  echo "installing pytest and hypothesis into $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check pytest hypothesis
fi

# Hypothesis keeps its example database in the working folder: the build tree's, not the source's.
cd "$build_dir/python"
PYTHONPATH="$build_dir/python" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests" "$here/examples"
