#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs the main job (README command 1).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset default
cmake --build --preset default
build/bin/spmdsim "$@"
