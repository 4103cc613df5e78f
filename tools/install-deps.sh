#!/usr/bin/env bash
# Installs every build and test dependency of spmdsim from Debian 12 packages.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  lld                         # the linker CMakeLists.txt picks when present: faster than GNU ld
  libboost-fiber-dev libboost-context-dev
  libeigen3-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  librapidcheck-dev
  nlohmann-json3-dev
  libcli11-dev
  libfmt-dev                  # {fmt}: formatting (GCC 12 has no <format>)
  gnuplot-nox                 # spmdsim scale: plots
  python3 python3-numpy python3-venv python3-pip
  openmpi-bin libopenmpi-dev  # backends/mpi: real mpirun
  libgloo-dev                 # backends/gloo
  clang-16 libclang-rt-16-dev # the asan preset and fuzz/: libFuzzer (Debian 12's clang 14 cannot read GCC 12's <ranges>)
)

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
