#!/usr/bin/env python3
"""Predicts the GH200 all-reduce sweeps of boeschf/nccl-benchmark-on-alps-2025 and prints the error.

The source ran nccl-tests' all_reduce_perf on 1 to 512 nodes of 4 GH200 (Alps, Slingshot-11),
several times with different environment variables and plugin versions. For each node count and
size this takes the median out-of-place time of the runs with the default libfabric settings (the
runs whose directory does not start with FI_CXI, which tune the network provider), predicts it with
`spmdsim perf --machine gh200-quad --cost-only`, and prints per node count and overall the median
and p90 |error| and the number of sizes off by more than 25%.

Usage: tools/compare-alps-runs.py CLONE [SPMDSIM] [--run NAME] [--nodes N,N,...] [--per-size]
  CLONE: a checkout of github.com/boeschf/nccl-benchmark-on-alps-2025 (its results/ directory)
  SPMDSIM: default build/bin/spmdsim
  --run NAME: only the run in results/NAME (for example the one the published set takes its
    GH200 rows from, nccl-tests_nccl-2.23.4-1-aws-1.13.0-v0), whatever its settings
  --nodes: only these node counts (for example 2,8,32,128,512, those the published set lacks)
  --per-size: also a table of the signed error (%) of every size (a row) on every node count (a
    column), where a pattern across node counts shows apart from one size's noise
"""
import argparse
import pathlib
import re
import statistics
import subprocess
import sys

RUN_FILE = re.compile(r"job-n-\d+-N-(\d+)\.txt$")


def measured_medians(clone, run, node_counts):
    """{(nodes, bytes): median time in us} over the default-setting runs, or over `run` alone;
    only the node counts in `node_counts` unless it is None."""
    times = {}
    for path in sorted(pathlib.Path(clone, "results").glob("*/job-n-*-N-*.txt")):
        if run is not None and path.parent.name != run:
            continue
        if run is None and path.parent.name.startswith("FI_CXI"):
            continue
        nodes = int(RUN_FILE.search(path.name).group(1))
        if node_counts is not None and nodes not in node_counts:
            continue
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) > 6 and fields[0].isdigit():
                try:
                    times.setdefault((nodes, int(fields[0])), []).append(float(fields[5]))
                except ValueError:
                    pass  # a size whose time column nccl-tests did not fill
    return {key: statistics.median(values) for key, values in times.items()}


def predicted(spmdsim, nodes):
    """{bytes: predicted time in us} for an all-reduce on `nodes` nodes of 4 GH200."""
    out = subprocess.run([spmdsim, "perf", "--machine", "gh200-quad", "-n", str(4 * nodes),
                          "--op", "all_reduce", "-b", "8", "-e", "4G", "-f", "2", "--cost-only"],
                         check=True, capture_output=True, text=True).stdout
    return {int(f[0]): float(f[5]) for f in (l.split() for l in out.splitlines())
            if f and f[0].isdigit()}


def summary(errors):
    errors = sorted(errors)
    return (f"{len(errors):4d} sizes  median |error| {100 * errors[len(errors) // 2]:5.1f}%  "
            f"p90 {100 * errors[int(len(errors) * 0.9)]:5.1f}%  above 25%: "
            f"{sum(e > 0.25 for e in errors)}")


def print_per_size(errors_by_nodes):
    """Signed errors in %: a row per size, a column per node count; '.' where not measured."""
    node_counts = sorted(errors_by_nodes)
    sizes = sorted({size for errors in errors_by_nodes.values() for size in errors})
    print("size (B) / nodes " + "".join(f"{nodes:>7d}" for nodes in node_counts))
    for size in sizes:
        cells = (errors_by_nodes[nodes].get(size) for nodes in node_counts)
        print(f"{size:>16d} " + "".join("      ." if e is None else f"{100 * e:+7.0f}"
                                         for e in cells))


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def main():
    # The docstring has a '%' (the --per-size text), so it is the description, not the usage
    # string, which argparse formats with %.
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clone")
    parser.add_argument("spmdsim", nargs="?", default="build/bin/spmdsim")
    parser.add_argument("--run")
    parser.add_argument("--nodes", type=lambda text: {int(n) for n in text.split(",")})
    parser.add_argument("--per-size", action="store_true")
    args = parser.parse_args()
    medians = measured_medians(args.clone, args.run, args.nodes)
    if not medians:
        nodes_text = f" on {len(args.nodes)} node count(s) asked for" if args.nodes else ""
        fail(f"{args.clone}: no results/{args.run or '*'}/job-n-*-N-*.txt sizes{nodes_text}; "
             "expected a clone of boeschf/nccl-benchmark-on-alps-2025")
    every = []
    signed = {}  # nodes -> {size: signed error}
    for nodes in sorted({n for n, _ in medians}):
        signed[nodes] = {size: (time_us - medians[(nodes, size)]) / medians[(nodes, size)]
                         for size, time_us in predicted(args.spmdsim, nodes).items()
                         if (nodes, size) in medians}
        errors = [abs(e) for e in signed[nodes].values()]
        every += errors
        print(f"{nodes:4d} nodes: {summary(errors)}")
    if not every:
        fail(f"{args.clone}: no size measured on the nodes asked for")
    print(f" all nodes: {summary(every)}")
    if args.per_size:
        print_per_size(signed)


if __name__ == "__main__":
    main()
