#!/usr/bin/env bash
# The trace of a 512-device run at scale (docs/simulator.md, "Traces at scale"): a transformer
# layer, 8-way model parallel, on 64 nodes of 8 (docs/machines/two-boxes.json rescaled), every
# message carried (--full-simulation), with the default arrows and with none. Prints for each
# the run's wall time, the trace's size and events, and the time Python's json module takes to
# read it (a lower bound on what a viewer's JSON importer needs).
# Usage: tools/measure-trace-at-scale.sh [SPMDSIM]   (SPMDSIM: default build/bin/spmdsim)
set -euo pipefail
cd "$(dirname "$0")/.."
spmdsim=${1:-build/bin/spmdsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for arrows in 200000 0; do
  start=$(date +%s.%N)
  "$spmdsim" run docs/machines/two-boxes.json -n 512 docs/workloads/transformer-layer.json \
      --full-simulation --trace-arrows "$arrows" --out "$out/$arrows" > "$out/$arrows.txt"
  end=$(date +%s.%N)
  grep -E '^trace: arrows' "$out/$arrows.txt" || true
  python3 - "$out/$arrows/trace.json" "$arrows" "$start" "$end" <<'PY'
import json, os, sys, time
path, arrows, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
began = time.perf_counter()
with open(path) as f:
    trace = json.load(f)
read_s = time.perf_counter() - began
events = trace["traceEvents"]
processes = sum(1 for e in events if e["ph"] == "M" and e["name"] == "process_name")
arrow_count = sum(1 for e in events if e["ph"] == "s")
print(f"--trace-arrows {arrows}: run {end - start:.1f} s; trace {os.path.getsize(path) / 2**20:.1f} MiB, "
      f"{len(events)} events, {processes} processes, {arrow_count} arrows; json.load {read_s:.1f} s")
PY
done
