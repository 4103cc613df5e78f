#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs the main job (README command 1): only the packages the
# CLI needs and only the `spmdsim` target with its libraries (the `main` presets: no test program,
# no test framework). tools/run-tests.sh builds and runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --main
cmake --preset main
cmake --build --preset main
build/bin/spmdsim "$@"
