#!/usr/bin/env bash
# Sets up a fresh machine, builds with warnings as errors, and runs every test (README command 2).
# RapidCheck properties run 1000 cases each unless RC_PARAMS says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset ci
cmake --build --preset ci
export RC_PARAMS="${RC_PARAMS:-max_success=1000}"
ctest --preset ci -j "$(nproc)" --output-on-failure
