#!/usr/bin/env bash
# Installs spmdsim's build and test dependencies from Debian 12 packages.
#   tools/install-deps.sh          everything: the CLI's packages and the tests', sanitizers' and
#                                  fuzzers' (README command 2, CI)
#   tools/install-deps.sh --main   only what the CLI needs to build and run (README command 1,
#                                  the `main` preset: SPMD_TESTS=OFF needs no test framework)
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

main_packages=(
  build-essential cmake ninja-build pkg-config
  lld                         # the linker CMakeLists.txt picks when present: faster than GNU ld
  libboost-fiber-dev libboost-context-dev
  libeigen3-dev
  nlohmann-json3-dev
  libcli11-dev
  libfmt-dev                  # {fmt}: formatting (GCC 12 has no <format>)
  gnuplot-nox                 # spmdsim scale: plots
  openmpi-bin libopenmpi-dev  # backends/mpi: `conform --backend mpi`, real mpirun
  libgloo-dev                 # backends/gloo: `conform --backend gloo`
)
test_packages=(
  libgtest-dev libgmock-dev
  libbenchmark-dev
  librapidcheck-dev
  python3 python3-numpy python3-venv python3-pip  # tools/ scripts, the JAX cases' venv
  python3-dev                 # python/: the module spmdsim._core (SPMD_PYTHON, the ci preset)
  clang-16 libclang-rt-16-dev # the asan preset and fuzz/: libFuzzer (Debian 12's clang 14 cannot read GCC 12's <ranges>)
)

case "${1:-}" in
  --main) packages=("${main_packages[@]}") ;;
  "") packages=("${main_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: tools/install-deps.sh [--main]" >&2; exit 2 ;;
esac

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  sudo_if_needed apt-get update -qq
  sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
