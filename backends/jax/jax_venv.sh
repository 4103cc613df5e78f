# Sourced by the scripts that run JAX (backends/jax/run_jax_conformance.sh,
# tests/hlo/check_jax_hlo.sh): ensure_jax_venv VENV VERSION PURPOSE makes VENV a virtual
# environment with the pinned jax and jaxlib CPU wheels from PyPI, unless it already has that
# version. Where PyPI cannot be reached it prints why PURPOSE is skipped and exits 77 (CTest:
# skipped).
# The scripts use BUILD_DIR/jax-venv, or SPMD_JAX_VENV where it is set: .ci/run shares one
# environment between its two build trees (an install takes over a minute and 600 MB).
#
# Which JAX: JAX 0.11 and later need Python >= 3.12. Sourcing this file looks for one
# (jax_python_at_least_3_12: python3, python3.13, python3.12 on PATH, then pyenv's versions) and
# sets
#   jax_cases_version      the JAX the tests install and generate cases with: 0.12.0.1 where such
#                          a Python was found, else 0.10.2 with python3 (Debian 12's is 3.11);
#   jax_reference_version  the matching `spmdsim conform --jax-version`: 0.12 or 0.10;
#   jax_python             the Python the environment is made with.
# SPMD_JAX_PYTHON names the Python to use instead of looking. ensure_jax_venv makes a 0.11-or-later
# environment with jax_python and an older one with python3, as before.

# Prints the first Python >= 3.12 that runs (pyenv's shims exist for versions it does not
# select; those fail to run and are skipped), or nothing.
jax_python_at_least_3_12() {
  local candidate candidates=(python3 python3.13 python3.12)
  local pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  if command -v pyenv >/dev/null 2>&1; then pyenv_root=$(pyenv root 2>/dev/null || echo "$pyenv_root"); fi
  # Newest 3.12.x first, then 3.13.x: 3.12 is the version the JAX tests are known to run on.
  for candidate in $(ls -d "$pyenv_root"/versions/3.12.* 2>/dev/null | sort -rV) \
                   $(ls -d "$pyenv_root"/versions/3.1[3-9].* 2>/dev/null | sort -V); do
    candidates+=("$candidate/bin/python3")
  done
  for candidate in "${candidates[@]}"; do
    if "$candidate" -c "import sys, venv; sys.exit(sys.version_info < (3, 12))" >/dev/null 2>&1; then
      "$candidate" -c "import sys; print(sys.executable)"
      return 0
    fi
  done
  return 0
}

if [ -n "${SPMD_JAX_PYTHON:-}" ]; then
  jax_python=$SPMD_JAX_PYTHON
else
  jax_python=$(jax_python_at_least_3_12)
fi
if [ -n "$jax_python" ] && "$jax_python" -c "import sys; sys.exit(sys.version_info < (3, 12))" 2>/dev/null; then
  jax_cases_version=0.12.0.1
  jax_reference_version=0.12
else
  jax_python=python3
  jax_cases_version=0.10.2
  jax_reference_version=0.10
fi

# One line for the test's log: which JAX and Python it runs, and why.
jax_choice_line() {
  local python_version
  python_version=$("$jax_python" -c "import platform; print(platform.python_version())" 2>/dev/null)
  if [ "$jax_reference_version" = 0.12 ]; then
    echo "JAX $jax_cases_version with Python $python_version ($jax_python); reference run with --jax-version $jax_reference_version"
  elif [ -n "${SPMD_JAX_PYTHON:-}" ]; then
    echo "JAX $jax_cases_version with Python $python_version ($jax_python): SPMD_JAX_PYTHON=$SPMD_JAX_PYTHON is older than 3.12, which JAX 0.11 and later need; reference run with --jax-version $jax_reference_version"
  else
    echo "JAX $jax_cases_version with Python $python_version ($jax_python): no Python >= 3.12 found, which JAX 0.11 and later need; reference run with --jax-version $jax_reference_version"
  fi
}

ensure_jax_venv() {
  local venv=$1 version=$2 purpose=$3
  if "$venv/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '$version')" 2>/dev/null; then
    return 0
  fi
  local python=python3
  case $version in
    0.[0-9].* | 0.10.* | 0.10) ;;
    *) python=$jax_python ;;
  esac
  if ! "$python" -c "import sys; sys.exit(sys.version_info < (3, 12))" 2>/dev/null \
      && [ "$python" = "$jax_python" ]; then
    echo "error: jax==$version needs Python >= 3.12 and none was found (python3, python3.12, python3.13, pyenv); $purpose needs it"
    exit 1
  fi
  if ! "$python" -c "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/jax/', timeout=15)" 2>/dev/null; then
    echo "SKIPPED: this machine cannot reach PyPI (https://pypi.org/simple/jax/), so jax==$version cannot be installed; $purpose needs it"
    exit 77
  fi
  echo "installing jax==$version jaxlib==$version into $venv (Python $("$python" -c "import platform; print(platform.python_version())"))"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "jax==$version" "jaxlib==$version"
}
