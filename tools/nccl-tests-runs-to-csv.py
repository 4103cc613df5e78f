#!/usr/bin/env python3
"""Other runs of a calibrated sweep, in the calibration format, for `spmdsim validate`.

A source of the calibration set often publishes several runs of one nccl-tests sweep (other
environment variables, library versions or days); the set holds one. This writes, for each run,
a CSV of the set's rows for the given config ids with time_us taken from that run's nccl-tests
table (the out-of-place time column) and algbw/busbw left empty, so that

    spmdsim validate OUT/RUN.csv

scores the model against it, and the spread between runs shows what the measurements repeat.

Usage: tools/nccl-tests-runs-to-csv.py CALIBRATION.csv CONFIG_PREFIX OUT_DIR TABLE.txt...
  CONFIG_PREFIX  rows whose config_id starts with it (e.g. gh200_)
  TABLE.txt      nccl-tests output files, one run and node count each; the run is the name of
                 the folder holding the file, the node count the N-<nodes> part of its name

Example (the GH200 runs; the source is named in the calibration file's `source` column):
  git clone https://github.com/boeschf/nccl-benchmark-on-alps-2025 /tmp/alps
  tools/nccl-tests-runs-to-csv.py ../shared/calibration/measurements.csv gh200_ /tmp/alps-csv \\
      /tmp/alps/results/*/job-n-*-N-*[0-9].txt
Bad input gets one line on stderr and exit status 2.
"""

import csv
import pathlib
import re
import sys


def fail(message):
    print(f"nccl-tests-runs-to-csv: {message}", file=sys.stderr)
    sys.exit(2)


def table_times(path):
    """{size in bytes: out-of-place time in us} from one nccl-tests output file."""
    times = {}
    try:
        text = path.read_text()
    except OSError as error:
        fail(f"{path}: cannot read it ({error.strerror}), expected an nccl-tests output file")
    for line in text.splitlines():
        fields = line.split()
        # size count type redop root time algbw busbw #wrong (then the in-place columns)
        if len(fields) >= 9 and fields[0].isdigit() and fields[1].isdigit():
            try:
                times[int(fields[0])] = float(fields[5])
            except ValueError:
                fail(f"{path}: time column '{fields[5]}', expected a number")
    if not times:
        fail(f"{path}: no nccl-tests table rows, expected lines of size, count, type, ... time")
    return times


def main(argv):
    if len(argv) < 5:
        fail("usage: CALIBRATION.csv CONFIG_PREFIX OUT_DIR TABLE.txt...")
    calibration, prefix, out_dir = pathlib.Path(argv[1]), argv[2], pathlib.Path(argv[3])
    try:
        with calibration.open(newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            for column in ("config_id", "nodes", "size_bytes", "time_us"):
                if column not in fields:
                    fail(f"{calibration}: no '{column}' column, expected the calibration format")
            rows = [row for row in reader if row["config_id"].startswith(prefix)]
    except OSError as error:
        fail(f"{calibration}: cannot read it ({error.strerror}), expected a calibration CSV")
    if not rows:
        fail(f"{calibration}: no config_id starts with '{prefix}'")
    runs = {}  # run name -> {(nodes, size): time}
    for name in argv[4:]:
        path = pathlib.Path(name)
        nodes = re.search(r"N-0*(\d+)", path.name)
        if not nodes:
            fail(f"{path}: file name has no N-<nodes> part")
        for size, time in table_times(path).items():
            runs.setdefault(path.parent.name, {})[(int(nodes.group(1)), size)] = time
    out_dir.mkdir(parents=True, exist_ok=True)
    for run in sorted(runs):
        written = 0
        with (out_dir / f"{run}.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            for row in rows:
                time = runs[run].get((int(row["nodes"]), int(row["size_bytes"])))
                if time is None:
                    continue
                writer.writerow(row | {"time_us": time, "algbw_GBps": "", "busbw_GBps": ""})
                written += 1
        print(f"{out_dir / (run + '.csv')}: {written} rows")


if __name__ == "__main__":
    main(sys.argv)
