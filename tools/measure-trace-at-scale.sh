#!/usr/bin/env bash
# Traces of 512-device runs (docs/simulator.md, "Traces at scale"):
#   1. a training step of a 1T-parameter transformer (tensor 8, pipeline 64) on the hgx-a100
#      preset at 512 GPUs: 64 nodes, collectives timed as NCCL does (no link messages, no arrows);
#   2. a transformer layer, 8-way model parallel, on 64 nodes of 8 (docs/machines/two-boxes.json
#      rescaled), every message carried (--full-simulation), with the default arrows and none.
# Prints for each the run's wall time, the trace's size, events, processes and arrows, and the
# time Python's json module takes to read it (a lower bound on what a viewer's importer needs).
# Usage: tools/measure-trace-at-scale.sh [SPMDSIM]   (SPMDSIM: default build/bin/spmdsim)
set -euo pipefail
cd "$(dirname "$0")/.."
spmdsim=${1:-build/bin/spmdsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

measure() {  # NAME ARGS...: runs spmdsim ARGS --out DIR and describes DIR/trace.json
  local name=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$spmdsim" "$@" --out "$out/$name" > "$out/$name.txt"
  end=$(date +%s.%N)
  grep -E '^trace: arrows' "$out/$name.txt" || true
  python3 - "$out/$name/trace.json" "$name" "$start" "$end" <<'PY'
import json, os, sys, time
path, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
began = time.perf_counter()
with open(path) as f:
    trace = json.load(f)
read_s = time.perf_counter() - began
events = trace["traceEvents"]
processes = sum(1 for e in events if e["ph"] == "M" and e["name"] == "process_name")
threads = sum(1 for e in events if e["ph"] == "M" and e["name"] == "thread_name")
arrows = sum(1 for e in events if e["ph"] == "s")
print(f"{name}: run {end - start:.1f} s; trace {os.path.getsize(path) / 2**20:.1f} MiB, "
      f"{len(events)} events, {processes} processes, {threads} threads, {arrows} arrows; "
      f"json.load {read_s:.1f} s")
PY
}

measure transformer-1t-512 run hgx-a100 -n 512 docs/workloads/validation/korthikanti-1t-full.json
for arrows in 200000 0; do
  measure "layer-512-arrows-$arrows" run docs/machines/two-boxes.json -n 512 \
      docs/workloads/transformer-layer.json --full-simulation --trace-arrows "$arrows"
done
