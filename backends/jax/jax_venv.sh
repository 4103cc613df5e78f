# Sourced by the scripts that run JAX (backends/jax/run_jax_conformance.sh,
# tests/hlo/check_jax_hlo.sh): ensure_jax_venv VENV VERSION PURPOSE makes VENV a virtual
# environment with the pinned jax and jaxlib CPU wheels from PyPI, unless it already has that
# version. Where PyPI cannot be reached it prints why PURPOSE is skipped and exits 77 (CTest:
# skipped).
# The scripts use BUILD_DIR/jax-venv, or SPMD_JAX_VENV where it is set: .ci/run shares one
# environment between its two build trees (an install takes over a minute and 600 MB).

# The JAX that the random conformance cases are generated with: the version docs/jax-checklist.md
# targets (tag jax-v0.10.2).
jax_cases_version=0.10.2

ensure_jax_venv() {
  local venv=$1 version=$2 purpose=$3
  if "$venv/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '$version')" 2>/dev/null; then
    return 0
  fi
  if ! python3 -c "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/jax/', timeout=15)" 2>/dev/null; then
    echo "SKIPPED: this machine cannot reach PyPI (https://pypi.org/simple/jax/), so jax==$version cannot be installed; $purpose needs it"
    exit 77
  fi
  echo "installing jax==$version jaxlib==$version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "jax==$version" "jaxlib==$version"
}
