#!/usr/bin/env bash
# What `spmdsim plan` under mpirun pays on this host (docs/plan.md, "On a cluster"): one plan
# command run three ways in turn, RUNS times each after one warm-up each, process start included:
#   one process on one thread (--threads 1), one process on its default thread pool, and
#   mpirun -np RANKS (each rank on its default share of the host's cores).
# Prints the medians of wall time and peak resident memory (/usr/bin/time; under mpirun the
# largest process's), the ratios of the medians, and whether the three printed the same bytes.
# Usage: tools/time-plan-split.sh [RUNS] [RANKS] [-- PLAN ARGUMENTS]
#   default: 5 runs, 2 ranks, DeepSeek-V3 on three machines at four device counts.
# SPMDSIM names the binary (default build/bin/spmdsim). Needs Open MPI's mpirun and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
ranks=${2:-2}
shift $(($# < 2 ? $# : 2))
[[ ${1:-} == -- ]] && shift
if (($# == 0)); then
  set -- --model docs/workloads/training/deepseek-v3.json \
    --machines gb200-nvl72,gb300-nvl72,hgx-b200 --devices 256,512,1024,2048
fi
spmdsim=$(realpath "${SPMDSIM:-build/bin/spmdsim}")
for tool in mpirun /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "time-plan-split: $tool not found" >&2; exit 2; }
done
mpirun_flags=(-np "$ranks")
[[ $(id -u) == 0 ]] && mpirun_flags+=(--allow-run-as-root)
(($(nproc) < ranks)) && mpirun_flags+=(--oversubscribe)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {  # LABEL COMMAND...: one run; its figures appended to $work/LABEL, its output kept
  local label=$1
  shift
  /usr/bin/time -a -o "$work/$label" -f "%e %M" "$@" >"$work/$label.out"
}
one_thread=("$spmdsim" plan "$@" --threads 1)
pool=("$spmdsim" plan "$@")
split=(mpirun "${mpirun_flags[@]}" "$spmdsim" plan "$@")
measure warmup "${one_thread[@]}"
measure warmup "${pool[@]}"
measure warmup "${split[@]}"
for ((run = 0; run < runs; ++run)); do
  measure one_thread "${one_thread[@]}"
  measure pool "${pool[@]}"
  measure split "${split[@]}"
done
python3 - "$work" "$ranks" <<'PY'
import statistics, sys
work, ranks = sys.argv[1], sys.argv[2]
labels = {"one_thread": "one process, --threads 1", "pool": "one process, default threads",
          "split": f"mpirun -np {ranks}"}
wall = {}
for label, text in labels.items():
    rows = [[float(x) for x in line.split()] for line in open(f"{work}/{label}") if line.strip()]
    walls = sorted(row[0] for row in rows)
    wall[label] = statistics.median(walls)
    peak = statistics.median(row[1] for row in rows) / 1024
    print(f"{text:30} wall {wall[label]:.3f} s (runs {walls[0]:.3f}-{walls[-1]:.3f}), "
          f"peak {peak:.0f} MiB ({len(rows)} runs)")
print(f"mpirun / one thread: {wall['split'] / wall['one_thread']:.2f}; "
      f"mpirun / default threads: {wall['split'] / wall['pool']:.2f}")
outputs = {label: open(f"{work}/{label}.out", "rb").read() for label in labels}
print("the same output: " + ("yes" if len(set(outputs.values())) == 1 else "NO"))
PY
