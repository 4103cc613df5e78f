#!/usr/bin/env bash
# The real-data all-reduce of issue 42 beside SimGrid SMPI doing the same (docs/simulator.md,
# "With data"): 8 devices on a ring of 100 GB/s, 1 us links, one all-reduce of 64 MiB of float32
# per device with real data, process start included.
#   ours:    spmdsim perf --op all_reduce --devices 8 --topology ring --link 100GB/s,1us -b 64M -e 64M
#   SimGrid: smpirun -np 8 -platform ring8.xml -hostfile hosts8.txt --cfg=smpi/allreduce:lr
#            ./allreduce  (MPI_Allreduce of 64 MiB per rank, filled with data; its logical ring)
# Runs each RUNS times in turn after one warm-up each and prints, per command, the medians of wall
# time, system time, peak resident memory and minor page faults (/usr/bin/time), then SimGrid's
# median wall time over ours. Needs SimGrid's smpicc and smpirun (Debian: simgrid, libsimgrid-dev).
# Usage: tools/compare-simgrid-allreduce.sh [SPMDSIM] [RUNS]   (default build/bin/spmdsim, 9)
set -euo pipefail
cd "$(dirname "$0")/.."
spmdsim=$(realpath "${1:-build/bin/spmdsim}")
runs=${2:-9}
for tool in smpicc smpirun /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "compare-simgrid-allreduce: $tool not found" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/allreduce.c" <<'C'
/* 8 ranks, 64 MiB of float32 each, real data, one MPI_Allreduce(SUM). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long count = 64L * 1024 * 1024 / 4;
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  for (long i = 0; i < count; ++i) in[i] = (float)((i * (rank + 1)) & 1023) * (1.0f / 1024);
  double t0 = MPI_Wtime();
  MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  if (rank == 0) printf("simulated all-reduce: %.2f us, out[1] = %g\n", (t1 - t0) * 1e6, out[1]);
  free(in); free(out);
  MPI_Finalize();
  return 0;
}
C
# 8 hosts, link i joining host i and i + 1 (mod 8), each route the shorter way round (forward on
# a tie); Full routes are symmetric, so only src < dst is listed.
{
  echo '<?xml version="1.0"?>'
  echo '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
  echo '<platform version="4.1">'
  echo '  <zone id="ring" routing="Full">'
  for i in 0 1 2 3 4 5 6 7; do echo "    <host id=\"host$i\" speed=\"100Gf\"/>"; done
  for i in 0 1 2 3 4 5 6 7; do
    echo "    <link id=\"link$i\" bandwidth=\"100GBps\" latency=\"1us\"/>"
  done
  for ((i = 0; i < 8; ++i)); do
    for ((j = i + 1; j < 8; ++j)); do
      links=""
      if ((j - i <= 4)); then
        for ((k = i; k < j; ++k)); do links+="<link_ctn id=\"link$k\"/>"; done
      else
        for ((k = j; k != i; k = (k + 1) % 8)); do links+="<link_ctn id=\"link$k\"/>"; done
      fi
      echo "    <route src=\"host$i\" dst=\"host$j\">$links</route>"
    done
  done
  echo '  </zone>'
  echo '</platform>'
} > "$work/ring8.xml"
for i in 0 1 2 3 4 5 6 7; do echo "host$i"; done > "$work/hosts8.txt"
(cd "$work" && smpicc -O2 -o allreduce allreduce.c)

ours=("$spmdsim" perf --op all_reduce --devices 8 --topology ring --link 100GB/s,1us -b 64M -e 64M)
simgrid=(smpirun -np 8 -platform ring8.xml -hostfile hosts8.txt --cfg=smpi/allreduce:lr ./allreduce)
measure() {  # LABEL COMMAND...: one run, its figures appended to $work/LABEL
  local label=$1
  shift
  (cd "$work" && /usr/bin/time -a -o "$work/$label" -f "%e %S %M %R" "$@" >/dev/null 2>&1)
}
measure warmup "${ours[@]}"
measure warmup "${simgrid[@]}"
for ((run = 0; run < runs; ++run)); do
  measure ours "${ours[@]}"
  measure simgrid "${simgrid[@]}"
done
python3 - "$work/ours" "$work/simgrid" <<'PY'
import statistics, sys
medians = {}
for label, path in (("spmdsim perf", sys.argv[1]), ("SimGrid smpirun", sys.argv[2])):
    rows = [[float(x) for x in line.split()] for line in open(path) if line.strip()]
    wall, system, rss_kib, faults = (statistics.median(column) for column in zip(*rows))
    walls = sorted(row[0] for row in rows)
    medians[label] = wall
    print(f"{label:16} wall {wall:.2f} s (runs {walls[0]:.2f}-{walls[-1]:.2f}), system {system:.2f} s, "
          f"peak {rss_kib / 1024:.0f} MiB, {faults:,.0f} minor faults ({len(rows)} runs)")
ratio = medians["SimGrid smpirun"] / medians["spmdsim perf"]
print(f"SimGrid / spmdsim median wall time: {ratio:.2f}")
PY
