#!/usr/bin/env python3
"""Sweep of malformed inputs against the spmdsim command line (issue 16: never crash, never lie).

Generates several hundred malformed inputs from the real seed files (docs/machines/*.json,
docs/workloads/*.json, tests/conformance/cases/ and order_cases/): every field set to wrong
types, negative, zero, huge, 2^31, 2^63, 1e400, NaN strings, empty strings; unknown fields,
missing fields, deep nesting, duplicate keys, truncated files, non-UTF-8 bytes; malformed .npy
files; bad paths (a directory, /proc/self/mem, /dev/zero, a symlink loop, a 5000-char path);
and bad values for every subcommand's options. Each runs in its own temporary folder under a
time limit and a 6 GiB address-space cap (as `timeout 60` and `ulimit -v 6291456`), and its
outcome is classified:

  clean     exit 2, exactly one non-empty error line that names the offending field or value
  fail      conform only: exit 1, one FAIL line (the case is well-formed but its program is
            rejected at run time or gives other outputs; docs/conformance-format.md)
  valid     exit 0 for a mutation in the allow-list VALID_MUTATIONS (a legitimately valid input)
  accepted  exit 0 for any other mutation: silently accepted, a human must judge
  unclear   an error, but not one clean line (several lines, no field or value named, a
            doubled path prefix, an echo longer than MAX_MESSAGE_CHARS, or an exit code other
            than 2, e.g. 3 for an internal invariant on bad input)
  crash     killed by a signal, exit 134 / 139 / 128+N, "terminate called", a sanitizer report
  hang      still running at the time limit
  memory    its peak resident memory (getrusage's ru_maxrss of the process) above --max-rss-gib
            (4 GiB): an input whose run cannot fit must be refused from an estimate before the
            memory is taken (issue 42), whatever its exit

Prints a table of counts per outcome, the largest peak resident memory of any case, and one line
per case that is not clean / fail / valid. Exits 1 if any case is crash, hang, memory, unclear or
accepted, so that it can run under CTest.

Usage: tools/sweep-malformed-inputs.py [--binary build/bin/spmdsim] [--jobs 2] [--only KIND]
       [--match TEXT] [--max-rss-gib 4]
Python 3 standard library only (the .npy files are written by hand).
"""

import argparse
import concurrent.futures
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADDRESS_SPACE_BYTES = 6291456 * 1024  # ulimit -v 6291456 (KiB)
MAX_RSS_GIB = 4.0  # issue 42: no process above 4 GiB (--max-rss-gib)
# A line longer than this echoes too much of its input. File readers cut what they echo to 60
# characters (docs/machine-format.md#limits); the CLI cuts any message to 2000 (cli/spmdsim.cc).
MAX_FILE_MESSAGE_CHARS = 600
MAX_FLAG_MESSAGE_CHARS = 2100
# The documented form of an arithmetic overflow names what overflowed and the values, not the
# field they came from (docs/machine-format.md#limits); it counts as naming the value.
# A simulated device running out of its memory is the program's outcome on that machine, named.
NAMED_OUTCOMES = ["is beyond the largest 64-bit integer", "out of memory on device"]

# Mutations whose exit 0 is right: the mutated input is valid. Each name is a case's name (see
# the printed lines); a trailing '*' matches a prefix. Keep a reason beside each.
VALID_MUTATIONS = {
    # any label is fine for a name or an about
    "machine/*/name=*": "name is any string",
    "workload/*/name=*": "name is any string",
    "conform/*/about=*": "about is any string",
    "conform/*/name=*": "the case's name is any string",
    "*/file=bom": "a UTF-8 byte order mark may be ignored (RFC 8259 section 8.1)",
    # optional fields (docs/machine-format.md, workload-format.md, conformance-format.md)
    "machine/*/(top)=missing:name": "optional", "machine/*/(top)=missing:memory": "optional",
    "machine/*/(top)=missing:compute": "optional", "machine/*/(top)=missing:algorithms": "optional",
    "machine/*/(top)=missing:pipeline_chunk": "optional", "machine/*/(top)=missing:link_sharing": "optional",
    "machine/*/(top)=missing:faults": "optional", "machine/*/compute=missing:*": "either field may be given",
    "machine/*/compute={}": "both fields optional", "machine/*/algorithms=missing:*": "absent is auto",
    "machine/*/algorithms={}": "all automatic", "machine/*/topology=missing:bidirectional": "default true",
    "machine/faults/faults=[]": "no faults", "machine/faults/faults=drop-last": "one fault fewer",
    "workload/*/(top)=missing:name": "optional", "workload/*/(top)=missing:dtype": "default float32",
    "workload/*/(top)=missing:steps": "default 1", "workload/*/calls[*]=missing:dtype": "default float32",
    "conform/*/(top)=missing:about": "optional",
    "conform/smap_all_gather_reversed_names/body[0]=missing:axis": "all_gather axis defaults to 0 as in JAX",
    # other valid quantities: a plain number is bytes / bytes per s / FLOP/s; 1.5 units are whole
    "machine/*.bandwidth=1": "plain number: bytes per second",
    "machine/*.memory_bandwidth=1": "plain number: bytes per second",
    "machine/*.peak_flops=1": "plain number: FLOP/s",
    "machine/*=1.5*": "1.5 of a unit is a whole number of bytes, ps or FLOP/s",
    "machine/*/memory=1.5GiB": "whole bytes", "machine/*/pipeline_chunk=1": "1 byte chunks",
    "machine/*.peak_flops=1e-30TFLOP/s": "any positive double (docs: compute rates)",
    "machine/*.peak_flops=2^63-1TFLOP/s": "any positive double", "machine/*.peak_flops=2^64TFLOP/s": "any positive double",
    "machine/*.latency=0us": "latency >= 0", "machine/*.latency=1us": "a duration",
    "machine/faults/faults[*].at=0us": "a time", "machine/faults/faults[*].at=1us": "a time",
    "machine/faults/faults[*].at=0ms": "a time", "machine/faults/faults[*].at=1ms": "a time",
    "machine/faults/faults[0].device=0": "device 0",
    "machine/faults/faults[0].factor=1e19": "factor >= 1", "machine/faults/faults[0].factor=2^31": "factor >= 1",
    "machine/faults/faults[0].factor=2^32+1": "factor >= 1", "machine/faults/faults[0].factor=2^63-1": "factor >= 1",
    "machine/faults/faults[0].factor=2^63": "factor >= 1", "machine/faults/faults[0].factor=2^64": "factor >= 1",
    "machine/ring8-big-workload/peak_flops=1FLOP/s": "the collectives workload charges no compute",
    "machine/ring8-big-workload/memory_bandwidth=1B/s": "the collectives workload charges no compute",
    "workload/collectives/calls=*": "any list of calls", "workload/collectives/calls[*].bytes=0*": "0 bytes moves nothing",
    "workload/collectives/calls[*].bytes=\"0\"": "0 bytes", "workload/collectives/calls[*].bytes=1": "a size",
    "workload/collectives/calls[*].bytes=1.5*": "a whole number of bytes",
    "workload/mlp-data-parallel/layers=drop-last": "3 widths, 2 layers", "workload/mlp-data-parallel/layers=twice": "more layers",
    "conform/*/body=twice": "the steps run twice, outputs name the first",
    "flags/perf  --link=1B/s,1us": "slow links, small sizes: a valid machine",
    "flags/perf --topology hierarchical:4 --inter-link=1B/s,1us": "slow links, small sizes",
    "flags/perf  -d=bool": "a dtype", "flags/perf  -f=2147483648": "a factor of at least 2",
    "flags/perf  -f=4294967297": "a factor of at least 2",
    "flags/* --algorithm=torus": "the note says torus cannot run it and ring was used",
    "flags/* --fault=straggler:device=0,factor=2,at=9223372036854775807ps": "a time far in the future",
    "flags/cases  --ring=0,1,2,3": "a ring", "flags/cases  --seed=0": "a seed",
    "flags/cases  --seed=2147483648": "a seed", "flags/cases  --seed=4294967297": "a seed",
    "flags/cases  --seed=9223372036854775808": "a seed below 2^64",
    "flags/cases  --ring=0": "a ring of one device",
    "flags/perf  -b=1KiB ": "sizes may end in spaces", "flags/perf  -e=1KiB ": "sizes may end in spaces",
    "flags/scale  --devices=8,,16": "CLI11 reads the list without the empty entry",
    "flags/sharding  --shape=16,6": "rows split over data, columns whole: a valid sharding",
    "flags/sharding  --spec=None": "P(None): replicated, valid",
    "machine/faults/faults[0].device=-0": "JSON -0 is the integer 0",
    # An error case passes when the runner rejects the program, whatever the reason
    # (docs/conformance-format.md, "expected"): a mutation that breaks it differently passes too.
    "conform/err_*": "an error case passes on any error of the program",
    # A chunk at least the data's size folds as one pipeline unit, as a missing one does.
    "conform/nccl_ring_*/order.nccl_chunk_bytes=*": "a chunk beyond the data: one unit",
    "conform/nccl_ring_*/order=missing:nccl_chunk_bytes": "the default chunk, beyond the data",
    # Negative axes and device indices count from the end, as in JAX (docs/jax-differences.md).
    "conform/*/body[0].split_axis=-1": "a negative axis counts from the end",
    "conform/*/body[0].perm[*]=-1": "a negative index counts from the end",
    # NumPy's own reader does not require the header's final newline.
    "npy/*/header-no-newline": "numpy.load reads it",
}

# ---------------------------------------------------------------------------------------------
# JSON building: raw text spliced in where Python's json cannot write it (1e400, deep nesting,
# duplicate keys).


class Raw:
    """JSON text written as is."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text if len(self.text) <= 40 else self.text[:30] + "...(%d chars)" % len(self.text)


def dumps(value):
    raws = []

    def strip(v):
        if isinstance(v, Raw):
            raws.append(v.text)
            return "@@RAW%d@@" % (len(raws) - 1)
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    text = json.dumps(strip(value), indent=1)
    for i, raw in enumerate(raws):
        text = text.replace('"@@RAW%d@@"' % i, raw, 1)
    return text


def duplicate_first_key(obj):
    """The object's text with its first key given twice."""
    items = list(obj.items())
    first_key, first_value = items[0]
    parts = [json.dumps(first_key) + ": " + dumps(first_value)]
    parts += [json.dumps(k) + ": " + dumps(v) for k, v in items]
    return Raw("{" + ", ".join(parts) + "}")


def leaves(value, path=()):
    """(path, value) for every value inside, containers included, outermost first."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, path + (i,))


def path_text(path):
    out = ""
    for p in path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + p
    return out


def replaced(doc, path, new):
    doc = json.loads(json.dumps(doc))
    if not path:
        return new
    target = doc
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = new
    return doc


def removed(doc, path):
    doc = json.loads(json.dumps(doc))
    target = doc
    for p in path[:-1]:
        target = target[p]
    del target[path[-1]]
    return doc


QUANTITY = re.compile(r"^\s*[0-9.]+(e[0-9]+)?\s*([A-Za-zµμ/]+)$")

BIG = "x" * 10_000_000  # 10 MB string: an error must not echo it


def bad_values(value, with_big):
    """(label, replacement) for a JSON value of this type."""
    out = []
    common = [("null", None), ("true", True), ("list", []), ("object", {}),
              ("nested", [[[1]]])]
    if isinstance(value, bool):
        out += [("1", 1), ('"true"', "true"), ("null", None), ("list", [])]
        return out
    if isinstance(value, (int, float)):
        out += [("-1", -1), ("0", 0), ("2^31", 2**31), ("2^32+1", 2**32 + 1),
                ("2^63-1", 2**63 - 1), ("2^63", 2**63), ("2^64", 2**64), ("-2^63-1", -2**63 - 1),
                ("1.5", 1.5), ("1e400", Raw("1e400")), ("-1e400", Raw("-1e400")),
                ("1e-400", Raw("1e-400")), ("-0", Raw("-0")), ('"NaN"', "NaN"),
                ('"4"', "4"), ('""', ""), ("1e19", Raw("1e19"))]
        out += common
        return out
    if isinstance(value, str):
        out += [('""', ""), ('"NaN"', "NaN"), ('"inf"', "inf"), ('"-1"', "-1"), ('"0"', "0"),
                ('"1e400"', "1e400"), ('" "', " "), ('"nul"', "a\u0000b"),
                ('"bogus"', "bogus"), ("1", 1), ("-1", -1), ("1e400", Raw("1e400"))]
        m = QUANTITY.match(value)
        if m:
            unit = m.group(2)
            out += [("0" + unit, "0" + unit), ("-1" + unit, "-1" + unit),
                    ("1e400" + unit, "1e400" + unit), ("NaN" + unit, "NaN" + unit),
                    ("2^64" + unit, "%d%s" % (2**64, unit)), ("2^63-1" + unit, "%d%s" % (2**63 - 1, unit)),
                    ("1e-30" + unit, "1e-30" + unit), ("1" + unit + "x", "1" + unit + "x"),
                    ("1.5" + unit, "1.5" + unit), ("1" + unit.lower(), "1" + unit.lower()),
                    ("1" + unit.upper(), "1" + unit.upper()), ("1e9999999999" + unit, "1e9999999999" + unit)]
        if with_big:
            out.append(('"x"*10MB', BIG))
        out += common
        return out
    if isinstance(value, list):
        out += [("[]", []), ('"x"', "x"), ("{}", {}), ("null", None),
                ("[[[]]]", [[[]]]), ("[null]", [None]), ("long", list(range(100000)))]
        if value:
            out.append(("twice", value + value))
        return out
    if isinstance(value, dict):
        out += [("{}", {}), ("[]", []), ('"x"', "x"), ("null", None)]
        if value:
            out.append(("duplicate-key", duplicate_first_key(value)))
        return out
    return out


def json_mutations(doc, with_big_at):
    """(label, hints, text) mutations of one JSON document."""
    for path, value in leaves(doc):
        ptext = path_text(path) or "(top)"
        last = [p for p in path if not isinstance(p, int)]
        hints = [ptext] + ([last[-1]] if last else [])
        for label, new in bad_values(value, with_big=(path == with_big_at)):
            same = (type(new) is type(value) and new == value) or (isinstance(new, Raw) and new.text == "-0" and value == 0)
            if same and not isinstance(value, bool):
                continue  # not a mutation
            if not path and not isinstance(new, Raw) and label != "duplicate-key":
                # the whole document replaced: a non-object file
                yield "%s=%s" % (ptext, label), ["expected", "object"], dumps(new)
                continue
            if new is BIG:  # built when the case runs, not held for the whole sweep
                text = (lambda d, p: lambda: dumps(replaced(d, p, BIG)))(doc, path)
            else:
                text = dumps(replaced(doc, path, new))
            yield "%s=%s" % (ptext, label), hints + ([str(new)[:20]] if not isinstance(new, (list, dict, Raw)) and new not in ("", None) else []), text
        if isinstance(value, dict):
            for k in value:
                yield "%s=missing:%s" % (ptext, k), [k], dumps(removed(doc, path + (k,)))
            extra = dict(value)
            extra["bogus_field"] = 1
            yield "%s=unknown-field" % ptext, ["bogus_field"], dumps(replaced(doc, path, extra))
        if isinstance(value, list) and value:
            yield "%s=drop-last" % ptext, hints, dumps(replaced(doc, path, value[:-1]))
    # file-level damage
    text = dumps(doc)
    yield "file=truncated-half", ["json", "JSON"], text[: len(text) // 2]
    yield "file=truncated-1", ["json", "JSON"], text.rstrip()[:-1]
    yield "file=empty", ["json", "JSON", "empty"], ""
    yield "file=non-utf8", ["json", "JSON", "UTF"], text.replace('"', '"\udcff', 1)
    yield "file=bom", ["json", "JSON"], "\ufeff" + text
    yield "file=trailing-garbage", ["json", "JSON"], text + "\n}"
    yield "file=two-documents", ["json", "JSON"], text + "\n" + text
    yield "file=nested-200000", ["json", "JSON", "deep", "nest"], "[" * 200000 + "]" * 200000
    yield "file=nested-257", ["json", "JSON", "deep", "nest"], (
        text[:-1].rstrip() + ', "deep": ' + "[" * 257 + "]" * 257 + "}")
    yield "file=comment", ["json", "JSON"], "// c\n" + text
    yield "file=duplicate-top-key", [list(doc)[0]], duplicate_first_key(doc).text
    yield "file=nan-literal", ["json", "JSON", "NaN"], text[:-1].rstrip() + ', "x": NaN}'
    yield "file=65MiB", ["64", "MiB", "large", "big", "size"], lambda: text[:-1].rstrip() + ', "pad": "' + "p" * (65 << 20) + '"}'


def encode(text):
    """The file's bytes, or a function giving them for the big ones."""
    if callable(text):
        return lambda: text().encode("utf-8", "surrogateescape")
    return text.encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------
# Cases


class Case:
    def __init__(self, kind, name, argv, files=None, hints=(), ok_rcs=(2,), links=None, dirs=()):
        self.kind = kind
        self.name = name
        self.argv = argv  # list of str; '{B}' is the binary
        self.files = files or {}  # relative name -> bytes
        self.links = links or {}  # relative name -> target
        self.dirs = dirs
        self.hints = [h for h in hints if h]
        self.ok_rcs = ok_rcs


def read(path):
    with open(os.path.join(REPO, path), "rb") as f:
        return f.read()


SMALL_WORKLOAD = json.dumps({"kind": "collectives", "calls": [{"op": "all_reduce", "bytes": "1KiB"}]})
RING8 = "docs/machines/ring8.json"


def machine_cases():
    seeds = {
        "ring8": json.loads(read("docs/machines/ring8.json")),
        "torus4x4": json.loads(read("docs/machines/torus4x4.json")),
        "two-boxes": json.loads(read("docs/machines/two-boxes.json")),
        "faults": {
            "name": "ring with every field", "devices": 8, "memory": "16GiB",
            "compute": {"peak_flops": "100TFLOP/s", "memory_bandwidth": "900GB/s"},
            "topology": {"kind": "ring", "link": {"bandwidth": "50GB/s", "latency": "2us"}},
            "algorithms": {"all_reduce": "ring"}, "pipeline_chunk": "2MiB", "link_sharing": "fifo",
            "faults": [{"kind": "straggler", "device": 3, "factor": 2, "at": "0us"},
                       {"kind": "degraded", "link": "0-1", "factor": 0.5, "at": "1ms"}]},
    }
    for seed, doc in seeds.items():
        for label, hints, text in json_mutations(doc, with_big_at=("name",) if seed == "ring8" else ("memory",)):
            yield Case("machine", "machine/%s/%s" % (seed, label),
                       ["{B}", "run", "m.json", "w.json", "--out", "out"],
                       {"m.json": encode(text), "w.json": SMALL_WORKLOAD.encode()}, hints + ["m.json"])
    # values from the issue, on the ring8 seed
    ring = seeds["ring8"]
    specials = [
        ("devices=2^31", ("devices",), 2**31), ("devices=1000000", ("devices",), 1000000),
        ("devices=100000", ("devices",), 100000),
        ("peak_flops=1FLOP/s", ("compute", "peak_flops"), "1FLOP/s"),
        ("memory_bandwidth=1B/s", ("compute", "memory_bandwidth"), "1B/s"),
        ("latency=2^63-1ps", ("topology", "link", "latency"), "%dps" % (2**63 - 1)),
        ("bandwidth=1B/s", ("topology", "link", "bandwidth"), "1B/s"),
        ("pipeline_chunk=1B", ("pipeline_chunk",), "1B"),
        ("memory=1B", ("memory",), "1B"),
    ]
    for label, path, new in specials:
        yield Case("machine", "machine/ring8-big-workload/%s" % label,
                   ["{B}", "run", "m.json", "w.json", "--out", "out"],
                   {"m.json": dumps(replaced(ring, path, new)).encode(), "w.json": read("docs/workloads/collectives.json")},
                   [path_text(path), path[-1], str(new)[:12], "overflow", "beyond", "largest", "memory"])
    # topology kinds with fields of another kind
    for kind in ["torus", "mesh", "fully_connected", "switch", "hierarchical", "bogus", ""]:
        doc = replaced(ring, ("topology", "kind"), kind)
        yield Case("machine", "machine/ring8/topology.kind=%s-with-ring-fields" % (kind or "empty"),
                   ["{B}", "run", "m.json", "w.json", "--out", "out"],
                   {"m.json": dumps(doc).encode(), "w.json": SMALL_WORKLOAD.encode()},
                   ["topology", "kind", "bidirectional", "dims", "link", "devices_per_node"])
    torus = seeds["torus4x4"]
    for label, dims in [("4x4x1x1", [4, 4, 1, 1]), ("16", [16]), ("0x16", [0, 16]),
                        ("2^31x1", [2**31, 1]), ("65536x65536", [65536, 65536]), ("-4x-4", [-4, -4]),
                        ("4294967300x1", [4294967300, 1])]:
        yield Case("machine", "machine/torus4x4/topology.dims=%s" % label,
                   ["{B}", "run", "m.json", "w.json", "--out", "out"],
                   {"m.json": dumps(replaced(torus, ("topology", "dims"), dims)).encode(),
                    "w.json": SMALL_WORKLOAD.encode()}, ["dims", str(dims[0])])


def workload_cases():
    for fname in ["collectives", "mlp-data-parallel", "transformer-data-parallel", "transformer-layer"]:
        doc = json.loads(read("docs/workloads/%s.json" % fname))
        for label, hints, text in json_mutations(doc, with_big_at=("name",) if fname == "collectives" else ("dtype",)):
            yield Case("workload", "workload/%s/%s" % (fname, label),
                       ["{B}", "run", os.path.join(REPO, RING8), "w.json", "--out", "out"],
                       {"w.json": encode(text)}, hints + ["w.json", "workload"])
    specials = [
        ("mlp-data-parallel", "steps=2147483648", ("steps",), 2**31),
        ("mlp-data-parallel", "steps=100000000", ("steps",), 100000000),
        ("mlp-data-parallel", "batch_per_device=2^62", ("batch_per_device",), 2**62),
        ("mlp-data-parallel", "batch_per_device=2^40", ("batch_per_device",), 2**40),
        ("mlp-data-parallel", "layers=2^31", ("layers", 0), 2**31 - 1),
        ("mlp-data-parallel", "layers=100000-entries", ("layers",), [2] * 100000),
        # issue 42: a million-entry list ran past 60 s
        ("mlp-data-parallel", "layers=1000000-entries", ("layers",), [2] * 1000000),
        ("transformer-layer", "model_parallel=4294967304", ("model_parallel",), 4294967304),
        ("transformer-layer", "sequence=2^40", ("sequence",), 2**40),
        ("transformer-layer", "d_model=2^31-1", ("d_model",), 2**31 - 1),
        ("collectives", "bytes=2^63-1", ("calls", 0, "bytes"), 2**63 - 1),
        ("collectives", "bytes=8EiB", ("calls", 0, "bytes"), "8388608TiB"),
        ("collectives", "calls=100000", ("calls",), [{"op": "ppermute", "bytes": 8}] * 100000),
    ]
    for fname, label, path, new in specials:
        doc = json.loads(read("docs/workloads/%s.json" % fname))
        yield Case("workload", "workload/%s/%s" % (fname, label),
                   ["{B}", "run", os.path.join(REPO, RING8), "w.json", "--out", "out"],
                   {"w.json": dumps(replaced(doc, path, new)).encode()},
                   [path_text(path), [p for p in path if isinstance(p, str)][-1], str(new)[:12], "overflow", "beyond", "memory"])


# --- training jobs (spmdsim train; the published-steps columns as a workload)

TRAINING_JOB = "docs/workloads/training/llama3-8b-h100-fsdp8.json"


def training_cases():
    doc = json.loads(read(TRAINING_JOB))
    # Many mutations of a job are other valid jobs (a field left out takes its default): these
    # must not crash, hang or fail unclearly, and exit 0 or 2.
    for label, hints, text in json_mutations(doc, with_big_at=("name",)):
        yield Case("training", "training/llama3-8b/%s" % label, ["{B}", "train", "w.json"],
                   {"w.json": encode(text)}, hints + ["w.json", "training"], ok_rcs=(0, 2))
    # Jobs that must be refused, each naming its field.
    specials = [
        ("tp=two", {"tp": "two"}, "tp"), ("tp=3", {"tp": 3}, "tp x pp x cp"),
        ("precision=nvfp4-on-H100", {"precision": "nvfp4"}, "nvfp4"),
        ("precision=mxfp8-on-H100", {"precision": "mxfp8"}, "mxfp8"),
        ("precision=int4", {"precision": "int4"}, "precision"),
        ("software=Caffe", {"software": "Caffe 1.0"}, "software"),
        ("layers=0", {"layers": 0}, "layers"), ("heads=0", {"heads": 0}, "heads"),
        ("kv_heads=5", {"kv_heads": 5}, "kv_heads"),
        ("moe_topk>experts", {"moe_experts": 8, "moe_topk": 9}, "moe_topk"),
        ("ep=3-without-experts", {"ep": 3}, "ep"),
        ("cp=3", {"cp": 3, "fsdp": 1}, "tp x pp x cp"),
        ("global_batch_seqs=12", {"global_batch_seqs": 12}, "global_batch_seqs"),
        ("gpus_total=2^31", {"gpus_total": 2**31}, "gpus_total"),
        ("seq_len=-8", {"seq_len": -8}, "seq_len"),
        ("gpu=Gaudi", {"gpu": "Gaudi 3"}, "Gaudi"),
        ("moe_imbalance=0.5", {"moe_experts": 8, "moe_topk": 2, "moe_imbalance": 0.5}, "moe_imbalance"),
        ("cp_comm_type=mesh", {"cp_comm_type": "mesh"}, "cp_comm_type"),
        ("kind=transformer", {"kind": "transformer"}, "kind"),
        ("tensor=2 (unknown field)", {"tensor": 2}, "tensor"),
    ]
    for label, fields, hint in specials:
        job = dict(doc)
        job.update(fields)
        yield Case("training", "training/llama3-8b-must-fail/%s" % label,
                   ["{B}", "train", "w.json"], {"w.json": dumps(job).encode()}, [hint])


# --- .npy files


def npy(descr, shape, data, fortran=False, version=(1, 0), header_override=None):
    header = header_override if header_override is not None else (
        "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape))
    magic = b"\x93NUMPY" + bytes(version)
    pad = 64 - (len(magic) + 2 + len(header) + 1) % 64
    body = header.encode("latin-1") + b" " * (pad % 64) + b"\n"
    return magic + len(body).to_bytes(2, "little") + body + data


def npy_mutations(good):
    """(label, bytes) damaged versions of one .npy file."""
    header_len = int.from_bytes(good[8:10], "little")
    data = good[10 + header_len:]
    yield "empty", b""
    yield "magic-only", good[:6]
    yield "bad-magic", b"\x93NUMPX" + good[6:]
    yield "truncated-header", good[: 10 + header_len // 2]
    yield "truncated-data", good[:-1]
    yield "no-data", good[: 10 + header_len]
    yield "extra-data", good + b"\0\0\0\0"
    yield "version-2.0", good[:6] + b"\x02\x00" + good[8:]  # v2 has a 4-byte length
    yield "version-3.0", good[:6] + b"\x03\x00" + good[8:]
    yield "header-len-65535", good[:8] + b"\xff\xff" + good[10:]
    yield "descr-big-endian", npy(">i4", "(4, 2, 3)", data)
    yield "descr-f128", npy("<f16", "(4, 2, 3)", data)
    yield "descr-object", npy("|O", "(4, 2, 3)", data)
    yield "descr-complex", npy("<c8", "(4, 2, 3)", data)
    yield "descr-structured", npy("[('a', '<i4')]", "(4, 2, 3)", data)
    yield "descr-empty", npy("", "(4, 2, 3)", data)
    yield "fortran", npy("<i4", "(4, 2, 3)", data, fortran=True)
    yield "shape-huge", npy("<i4", "(1099511627776,)", data)
    yield "shape-2^63", npy("<i4", "(9223372036854775807, 2)", data)
    yield "shape-overflow-product", npy("<i4", "(4294967296, 4294967296, 4)", data)
    yield "shape-negative", npy("<i4", "(-4, 2, 3)", data)
    yield "shape-float", npy("<i4", "(4.0, 2, 3)", data)
    yield "shape-2^31", npy("<i4", "(2147483648,)", data)
    yield "shape-1e400", npy("<i4", "(1e400,)", data)
    yield "shape-deep", npy("<i4", "(" * 10000 + ")" * 10000, data)
    yield "shape-many-dims", npy("<i4", "(" + "1, " * 10000 + ")", data)
    yield "header-not-dict", npy("", "", data, header_override="[1, 2, 3]")
    yield "header-missing-shape", npy("", "", data, header_override="{'descr': '<i4', 'fortran_order': False, }")
    yield "header-extra-key", npy("", "", data, header_override="{'descr': '<i4', 'fortran_order': False, 'shape': (4, 2, 3), 'x': 1, }")
    yield "header-duplicate-key", npy("", "", data, header_override="{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (4, 2, 3), }")
    yield "header-non-ascii", npy("", "", data, header_override="{'descr': '<i4\xff', 'fortran_order': False, 'shape': (4, 2, 3), }")
    yield "header-no-newline", good[:9 + header_len] + b" " + data
    yield "random", bytes(range(256)) * 4


def conform_cases():
    casedir = "tests/conformance/cases"
    seeds = ["pmap_axis_index", "pmap_psum_axis_index_groups", "pmap_ppermute_ring", "pmap_all_to_all_tiled",
             "smap_all_gather_reversed_names", "pmap_out_axes_none", "err_smap_not_divisible"]
    order_seed = ("tests/conformance/order_cases", "nccl_ring_n4_bfloat16_at_128")
    for folder, seed in [(casedir, s) for s in seeds] + [order_seed]:
        names = sorted(f for f in os.listdir(os.path.join(REPO, folder)) if f.startswith(seed + "."))
        files = {f: read(os.path.join(folder, f)) for f in names}
        doc = json.loads(files[seed + ".json"])
        for label, hints, text in json_mutations(doc, with_big_at=("about",)):
            f = dict(files)
            f[seed + ".json"] = encode(text)
            yield Case("conform", "conform/%s/%s" % (seed, label), ["{B}", "conform", seed + ".json"], f,
                       hints + [seed + ".json"], ok_rcs=(2, 1))
        # damaged .npy files, each of the case's arrays
        for npyname in [n for n in names if n.endswith(".npy")]:
            for label, data in npy_mutations(files[npyname]):
                f = dict(files)
                f[npyname] = data
                yield Case("npy", "npy/%s/%s" % (npyname, label), ["{B}", "conform", seed + ".json"], f,
                           [npyname], ok_rcs=(2, 1) if ".out" in npyname else (2,))
    # file names in a case: paths as an attacker would give them
    seed = "pmap_axis_index"
    files = {f: read(os.path.join(casedir, f)) for f in os.listdir(os.path.join(REPO, casedir)) if f.startswith(seed + ".")}
    doc = json.loads(files[seed + ".json"])
    for label, target in bad_paths():
        for where in [("inputs", 0, "file"), ("expected", "outputs", 0, "file")]:
            f = dict(files)
            f[seed + ".json"] = dumps(replaced(doc, where, target["path"])).encode()
            yield Case("npy", "npy/path/%s=%s" % (path_text(where), label), ["{B}", "conform", seed + ".json"],
                       f, [path_text(where), target["path"][:20], "file"], links=target.get("links"),
                       dirs=target.get("dirs", ()), ok_rcs=(2, 1) if where[0] == "expected" else (2,))
    # mesh sizes the issue named
    for label, shape in [("1000000", [1000000]), ("2^31-1", [2**31 - 1]), ("4294967300", [4294967300]),
                         ("65536x65536", [65536, 65536]), ("0", [0]), ("-4", [-4])]:
        f = dict(files)
        f[seed + ".json"] = dumps(replaced(doc, ("mesh", "shape"), shape)).encode()
        yield Case("conform", "conform/%s/mesh.shape=%s" % (seed, label), ["{B}", "conform", seed + ".json"],
                   f, ["mesh.shape", "shape", str(shape[0])], ok_rcs=(2, 1))
    # issue 42: references by their exact names only ("s00" ran as "s0"), to values defined
    # before them; each is the file's error, naming the op or the outputs and the reference
    two_steps = replaced(doc, ("body",), [{"op": "axis_index", "args": [], "axis_name": "i"},
                                          {"op": "neg", "args": ["s0"]}])
    two_steps["outputs"] = ["s1"]
    for ref in ["s00", "in00", "s01", "s0x", "s+0", " s0", "s0 ", "s1", "s2", "s-1", "s1e0", "S0",
                "s" + "0" * 20, "s99999999999999999999"]:
        f = dict(files)
        f[seed + ".json"] = dumps(replaced(two_steps, ("body", 1, "args", 0), ref)).encode()
        yield Case("conform", "conform/%s/body[1].args[0]=%r" % (seed, ref), ["{B}", "conform", seed + ".json"],
                   f, [ref.strip()[:20], "neg"], ok_rcs=(2,))
        if ref == "s1":
            continue  # the outputs' own reference
        f = dict(files)
        f[seed + ".json"] = dumps(replaced(two_steps, ("outputs", 0), ref)).encode()
        yield Case("conform", "conform/%s/outputs[0]=%r" % (seed, ref), ["{B}", "conform", seed + ".json"],
                   f, [ref.strip()[:20], "outputs"], ok_rcs=(2,))
    # issue 42: in_axes / out_axes of another length than the inputs / outputs are the program's
    # error, which JAX raises at the call: a case expecting an error passes (exit 0), one
    # expecting outputs fails (exit 1, one FAIL line); neither is a malformed file
    for field, value in [("in_axes", [0, 0]), ("in_axes", []), ("in_axes", [0, None, 1]),
                         ("out_axes", []), ("out_axes", [0, 0])]:
        wrong = replaced(doc, ("map", field), value)
        f = dict(files)
        f[seed + ".json"] = dumps(wrong).encode()
        yield Case("conform", "conform/%s/map.%s=%s-expecting-outputs" % (seed, field, json.dumps(value)),
                   ["{B}", "conform", seed + ".json"], f, [field], ok_rcs=(1,))
        f = dict(files)
        f[seed + ".json"] = dumps(replaced(wrong, ("expected",), {"error": "ValueError: pytree structure error"})).encode()
        yield Case("conform", "conform/%s/map.%s=%s-expecting-the-error" % (seed, field, json.dumps(value)),
                   ["{B}", "conform", seed + ".json"], f, [], ok_rcs=(0,))
    # a folder of cases with one bad case among good ones: one ERROR line, no crash
    f = {"cases/" + n: read(os.path.join(casedir, n)) for n in os.listdir(os.path.join(REPO, casedir))}
    f["cases/zz_bad.json"] = b'{"format": 1, "name": '
    yield Case("conform", "conform/folder-with-one-bad-case", ["{B}", "conform", "cases"], f, ["zz_bad.json"])


def bad_paths():
    """(label, {path, links, dirs}) paths that are not readable files."""
    return [
        ("missing", {"path": "no-such-file.json"}),
        ("empty", {"path": ""}),
        ("directory", {"path": "adir", "dirs": ["adir"]}),
        ("dot", {"path": "."}),
        ("proc-self-mem", {"path": "/proc/self/mem"}),
        ("dev-zero", {"path": "/dev/zero"}),
        ("dev-urandom", {"path": "/dev/urandom"}),
        ("dev-null", {"path": "/dev/null"}),
        ("fifo-like-stdin", {"path": "/dev/stdin"}),
        ("symlink-loop", {"path": "loop", "links": {"loop": "loop"}}),
        ("dangling-symlink", {"path": "dangle", "links": {"dangle": "nowhere"}}),
        ("path-5000", {"path": "a" * 5000}),
        ("path-deep", {"path": "/".join(["d"] * 3000)}),
        ("nul-in-path", {"path": "a\u0000b"}),
        ("parent-escape", {"path": "../../../../../../etc/passwd"}),
    ]


# --- flags


def flag_cases():
    ring8 = os.path.join(REPO, RING8)
    coll = os.path.join(REPO, "docs/workloads/collectives.json")
    mlp = os.path.join(REPO, "docs/workloads/mlp-data-parallel.json")
    cases_dir = os.path.join(REPO, "tests/conformance/cases")
    generic = ["", "-1", "0", "2147483648", "4294967297", "9223372036854775808", "1e400", "NaN", "abc",
               "x" * 100000, "\udcff"]
    base = {
        "perf": ["{B}", "perf", "-b", "8", "-e", "1KiB"],
        "run": ["{B}", "run", ring8, coll, "--out", "out"],
        "scale": ["{B}", "scale", "--workload", coll, "--devices", "8", "--no-plot", "--out", "out"],
        "conform": ["{B}", "conform", cases_dir],
        "conform-sim": ["{B}", "conform", "--backend", "sim", cases_dir],
        "cases": ["{B}", "cases", "--order", "nccl_ring", "--out", "out"],
        "demo": ["{B}", "demo", "--steps", "1", "--out", "out"],
        "examples": ["{B}", "examples"],
        "sharding": ["{B}", "sharding", "--mesh", "2x4", "--names", "data,model", "--spec", "data,None",
                     "--shape", "16,8"],
    }
    links = ["1B/s,1us", "0GB/s,1us", "100GB/s", "100GB/s,1", "100GB/s,-1us", ",", "100GB/s,1us,5",
             "1e400GB/s,1us", "100GB/s,9223372036854775807ps", "100GB/s,1e400us", "-100GB/s,1us", "NaNGB/s,1us"]
    topologies = ["ring:5", "switch:4", "torus:0x4", "torus:3x3", "torus:2147483648x2", "torus:4294967297x1",
                  "hierarchical:0", "hierarchical:3", "hierarchical:", "hierarchical:-8", "mesh:1x1x1x8",
                  "torus:", "torus:x", "ring-uni:2", "bogus", "fully_connected:8"]
    faults = ["straggler:device=99,factor=2,at=0us", "straggler:device=-1,factor=2,at=0us",
              "straggler:device=0,factor=0,at=0us", "straggler:device=0,factor=NaN,at=0us",
              "straggler:device=0,factor=1e400,at=0us", "straggler:device=0,factor=inf,at=0us",
              "straggler:device=0,factor=2,at=-1us", "straggler:device=0,factor=2,at=1e400s",
              "straggler:device=4294967297,factor=2,at=0us", "straggler:device=0,factor=2,at=9223372036854775807ps",
              "degraded:link=0-99,factor=0.5,at=0us", "degraded:link=0-0,factor=0.5,at=0us",
              "degraded:link=0-1,factor=2,at=0us", "degraded:link=0-1,factor=0,at=0us",
              "degraded:link=0-1,factor=1e-400,at=0us", "degraded:link=4294967297-1,factor=0.5,at=0us",
              "failed_link:link=a-b,at=0us", "failed_link:link=0-1-2,at=0us", "failed_link:link=0-1",
              "bogus:x=1", "straggler", "straggler:", "straggler:device=0,device=1,factor=2,at=0us",
              "straggler:device=0,factor=2,at=0us,extra=1", "failed_device:device=99,at=0us",
              "straggler:device=0,factor=2,at=0", ":", "straggler:=,=,="]
    placements = ["devices:0,0,1,2,3,4,5,6", "devices:", "devices:99,1,2,3,4,5,6,7", "devices:0,1", "data=q",
                  "a=x:0", "a=x:4294967297", "row-major,", "bogus", "devices:-1,1,2,3,4,5,6,7",
                  "i=x+x", "=x", "i=", "devices:4294967296,1,2,3,4,5,6,7"]
    sizes = ["-1", "0", "1.5B", "17179869185G", "1e400", "18446744073709551616", "9223372036854775807",
             "abc", "1KiB ", "8EiB", "NaN", "1e19"]
    out_paths = ["/dev/full", "", "afile", "/proc/no/such", "a" * 5000, "/dev/null", "/proc/self/mem"]

    def without(argv, flags):
        """argv less each valued flag in flags and its value."""
        out, skip = [], False
        for i, a in enumerate(argv):
            if skip:
                skip = False
            elif a in flags and i >= 2:
                skip = True
            else:
                out.append(a)
        return out

    def opt(sub, flag, values, hint=None, extra=(), ok=(2,)):
        for v in dict.fromkeys(values):
            argv = without(base[sub], {flag} | set(extra[::2])) + list(extra) + [flag, v]
            yield Case("flags", "flags/%s %s %s%s" % (sub, " ".join(extra), flag, "=" + _short(v)), argv,
                       {"afile": b"x"}, [hint or flag.lstrip("-"), flag, v[:20]], ok_rcs=ok)

    out = []
    # perf
    out += opt("perf", "--op", generic + ["psum", "ALL_REDUCE"])
    out += opt("perf", "--machine", generic + ["dgx", "m.json"])
    out += opt("perf", "-n", generic + ["1000000", "100000", "1.5"], hint="devices")
    out += opt("perf", "--topology", generic + topologies)
    out += opt("perf", "--link", generic + links)
    out += opt("perf", "--link", ["1B/s,1us"], extra=["-e", "17179869184G"])
    out += opt("perf", "--inter-link", generic + links, extra=["--topology", "hierarchical:4"])
    out += opt("perf", "--link-sharing", generic + ["maxmin"])
    out += opt("perf", "--algorithm", generic + ["torus", "auto", "bogus"])
    out += opt("perf", "--fault", generic + faults)
    out += opt("perf", "-b", generic + sizes, hint="minbytes")
    out += opt("perf", "-e", generic + sizes, hint="maxbytes")
    out += opt("perf", "-f", generic + ["1", "1.5"], hint="stepfactor")
    out += opt("perf", "-d", generic + ["float128", "bool", "complex64"], hint="dtype")
    out += opt("perf", "--placement", generic + placements)
    out += opt("perf", "-e", ["17179869185G", "1TiB"], extra=["--cost-only"], hint="maxbytes")
    out += opt("perf", "-n", ["1048576", "2147483647"], extra=["--cost-only"], hint="devices")
    # issue 42: refused from the estimate before the memory is taken (7.9 GB, 4.8 GB before);
    # a flag without a value goes last in `extra`, whose even entries are the flags it replaces
    out += opt("perf", "-n", ["1000000000", "100000000", "10000000"], extra=["-b", "8", "-e", "8", "--cost-only"],
               hint="devices")
    out += opt("perf", "-n", ["1000000000", "1000000", "100000"], extra=["-b", "8", "-e", "8"], hint="devices")
    out += opt("perf", "-n", ["100000"], extra=["-b", "8", "-e", "8", "--topology", "switch"], hint="devices")
    # run
    out += opt("run", "--out", out_paths)
    out += opt("run", "--algorithm", generic + ["torus", "bogus"])
    out += opt("run", "--placement", generic + placements)
    out += opt("run", "--link-sharing", generic + ["maxmin"])
    out += opt("run", "--fault", generic + faults)
    # scale
    out += opt("scale", "--devices", generic + ["1048577", "8,0", "1048576", "262144", "8,-8", "8,,16"])
    # issue 42: a count given twice ran twice without a word
    out += opt("scale", "--devices", ["8,8,8", "8,16,8", "16,8,16,32"])
    out += opt("scale", "--machine", generic + ["dgx"])
    out += opt("scale", "--topology", generic + topologies)
    out += opt("scale", "--link", generic + links)
    out += opt("scale", "--link-sharing", generic + ["maxmin"])
    out += opt("scale", "--algorithm", generic + ["torus", "bogus"])
    out += opt("scale", "--fault", generic + faults)
    out += opt("scale", "--placement", generic + placements)
    out += opt("scale", "--out", out_paths)
    out += opt("scale", "--out", ["/dev/full", "afile"], extra=["--devices", "8"])
    # conform: every bad flag is one error before any case runs
    out += opt("conform", "--backend", generic + ["bogus", "Reference"])
    out += opt("conform", "--backend-plugin", generic + ["afile", "/dev/zero", "/proc/self/mem", "."])
    out += opt("conform", "--plugin-timeout-s", generic + ["inf", "-0"])
    out += opt("conform", "--order", generic + ["bogus", "nccl-ring"])
    out += opt("conform", "--ring", ["0,1,2,3"])
    out += opt("conform", "--ring", generic + ["0,0,1,2", "0,1,2,99", "a", "0,1,2,4294967297", "0,1,2,3,4,5,6,7,8",
                                              "-1,0,1,2"], extra=["--order", "nccl_ring"])
    out += opt("conform-sim", "--algorithm", generic + ["bogus", "torus"])
    out += opt("conform-sim", "--topology", generic + topologies)
    out += opt("conform", "--algorithm", ["ring"])
    out += opt("conform", "--topology", ["torus"])
    out += opt("conform", "--jax-version", generic + ["0.11", "0.12.1", "v0.12", "0.1"])
    # sharding (issue 44): a grid from a mesh, names, spec and shape
    out += opt("sharding", "--mesh", generic + ["0x4", "2x", "x", "2x4x", "40000x40000", "65536x65536", "2,4"])
    out += opt("sharding", "--names", generic + ["data", "data,data", "data,None", ",", "data,model,x"])
    out += opt("sharding", "--spec", generic + ["x", "data,data", "(data", "data,None,None", "(data,model),model",
                                                "None", "(,)"])
    out += opt("sharding", "--shape", generic + ["16,6", "16,8,2", "1,1", "-16,8", "16,", "1099511627777"])
    out += opt("sharding", "--devices", generic + ["7", "9"])
    # cases
    out += opt("cases", "--order", generic + ["bogus", "all,"])
    out += opt("cases", "--out", out_paths)
    out += opt("cases", "--seed", generic + ["18446744073709551616"])
    out += opt("cases", "--ring", generic + ["0,0", "0", "0,1,2,99", "2147483648,0"])
    out += opt("cases", "--ring", ["0,1,2,3"], extra=[], hint="ring")
    out += opt("cases", "--nccl-chunk-bytes", generic + ["1", "3", "9223372036854775807"])
    out += opt("cases", "--gloo-max-segment-bytes", ["64"])
    out += opt("cases", "--torus-dims", generic + ["0,2", "2147483648,2", "1000,1000", "2", "2,2,2,2"])
    # demo, examples
    out += opt("demo", "--steps", generic + ["100001", "1.5"])
    out += opt("demo", "--placement", generic + ["devices:0,0,1,2,3,4,5,6"])
    out += opt("demo", "--out", out_paths)
    for v in ["bogus", "", "x" * 100000]:
        out.append(Case("flags", "flags/examples NAME=%s" % _short(v), ["{B}", "examples", v], {}, ["example", "NAME", v[:20]]))
    # unknown flags and stray positionals
    for sub in ["perf", "run", "scale", "conform", "cases", "demo", "examples", "sharding"]:
        out.append(Case("flags", "flags/%s --bogus" % sub, list(base[sub]) + ["--bogus"], {}, ["bogus"]))
    out.append(Case("flags", "flags/bogus-subcommand", ["{B}", "bogus"], {}, ["bogus"]))
    # paths as positionals and --machine / --workload
    for label, target in bad_paths():
        p = target["path"]
        kw = dict(links=target.get("links"), dirs=target.get("dirs", ()))
        out.append(Case("paths", "paths/run MACHINE=%s" % label, ["{B}", "run", p, coll, "--out", "out"], {},
                        ["machine", p[:20], "MACHINE"], **kw))
        out.append(Case("paths", "paths/run WORKLOAD=%s" % label, ["{B}", "run", ring8, p, "--out", "out"], {},
                        ["workload", p[:20], "WORKLOAD"], **kw))
        out.append(Case("paths", "paths/perf --machine=%s" % label, ["{B}", "perf", "--machine", p, "-e", "1KiB"], {},
                        ["machine", p[:20]], **kw))
        out.append(Case("paths", "paths/scale --workload=%s" % label,
                        ["{B}", "scale", "--workload", p, "--devices", "8", "--no-plot", "--out", "out"], {},
                        ["workload", p[:20]], **kw))
        out.append(Case("paths", "paths/conform PATH=%s" % label, ["{B}", "conform", p], {}, ["PATH", p[:20]], **kw))
    # a workload file that is valid but needs more devices than the machine has
    out.append(Case("flags", "flags/run mlp on ring8 --placement devices:7,6,5,4,3,2,1,0",
                    ["{B}", "run", ring8, mlp, "--out", "out", "--placement", "devices:7,6,5,4,3,2,1,0"], {}, [],
                    ok_rcs=(0,)))
    return out


def _short(v):
    return v if len(v) <= 80 else "%s...(%d chars)" % (v[:20], len(v))


KINDS = {
    "machine": machine_cases,
    "workload": workload_cases,
    "training": training_cases,
    "conform": lambda: [c for c in conform_cases() if c.kind == "conform"],
    "npy": lambda: [c for c in conform_cases() if c.kind == "npy"],
    "flags": lambda: [c for c in flag_cases() if c.kind == "flags"],
    "paths": lambda: [c for c in flag_cases() if c.kind == "paths"],
}

# ---------------------------------------------------------------------------------------------
# Running and classifying


def limit_resources():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class MeasuredPopen(subprocess.Popen):
    """A Popen that keeps the child's peak resident memory (ru_maxrss, KiB) from wait4."""

    max_rss_kib = 0

    def _try_wait(self, wait_flags):  # CPython's Popen waits here (os.waitpid)
        try:
            pid, status, usage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return (self.pid, 0)  # reaped elsewhere, as Popen's own _try_wait allows
        if pid == self.pid:
            self.max_rss_kib = usage.ru_maxrss
        return (pid, status)


def run_case(case, binary, timeout_s):
    with tempfile.TemporaryDirectory(prefix="spmdsim-sweep-") as tmp:
        for name, data in case.files.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data() if callable(data) else data)
        for name, target in (case.links or {}).items():
            os.symlink(target, os.path.join(tmp, name))
        for d in case.dirs:
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        argv = [binary if a == "{B}" else a for a in case.argv]
        if any("\0" in a for a in argv):
            return "skip", None, "", "", 0
        argv = [a.encode("utf-8", "surrogateescape") for a in argv]
        proc = MeasuredPopen(argv, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=limit_resources, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return "hang", None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.max_rss_kib
        return None, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.max_rss_kib


# spmdsim reports running out of memory as a bad-input error naming std::bad_alloc (exit 2);
# that is not a crash, so bad_alloc is no marker here.
CRASH_MARKERS = ["terminate called", "Assertion", "AddressSanitizer", "runtime error:", "Segmentation fault",
                 "LeakSanitizer", "UndefinedBehaviorSanitizer", "core dumped"]


PROGRESS_LINE = re.compile(r"^\w+: \d+/\d+ done$")  # cli/progress.h, on stderr by design


def message_lines(case, out, err):
    lines = [line for line in err.splitlines() if line.strip() and not PROGRESS_LINE.match(line)]
    if case.argv[1] == "conform":
        lines += [line for line in out.splitlines() if line.startswith(("ERROR", "FAIL"))]
    return lines


def matches(pattern, name):
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else pattern == name


def allowed(name):
    for pattern in VALID_MUTATIONS:
        parts = pattern.split("*")
        regex = ".*".join(re.escape(p) for p in parts)
        if re.fullmatch(regex, name, flags=re.S):
            return True
    return False


def classify(case, status, rc, out, err, max_rss_kib=0, max_rss_gib=MAX_RSS_GIB):
    """(outcome, reason)."""
    if status == "hang":
        return "hang", "no exit within the time limit"
    text = out + err
    if rc < 0 or rc in (134, 139) or rc > 128 or any(m in text for m in CRASH_MARKERS):
        return "crash", "signal %d" % -rc if rc < 0 else "exit %d" % rc
    if max_rss_kib > max_rss_gib * (1 << 20):
        return "memory", "peak resident memory %.2f GiB" % (max_rss_kib / (1 << 20))
    lines = message_lines(case, out, err)
    if rc == 0:
        if 0 in case.ok_rcs:
            return "valid", ""
        return ("valid", "") if allowed(case.name) else ("accepted", "exit 0")
    if rc not in case.ok_rcs:
        return "unclear", "exit %d" % rc
    if rc == 1:
        fails = [line for line in lines if line.startswith("FAIL")]
        if len(lines) == 1 and fails:
            return "fail", ""
        return "unclear", "exit 1 with %d message lines" % len(lines)
    if len(lines) != 1:
        return "unclear", "%d error lines" % len(lines)
    line = lines[0]
    most = MAX_FLAG_MESSAGE_CHARS if case.kind in ("flags", "paths") else MAX_FILE_MESSAGE_CHARS
    if len(line) > most:
        return "unclear", "error line of %d chars" % len(line)
    for f in ("m.json", "w.json"):
        if line.count(f + ":") > 1:
            return "unclear", "doubled path prefix"
    low = line.lower()
    # a hint with undecodable bytes appears in the message as U+FFFD
    hints = [h.encode("utf-8", "surrogateescape").decode("utf-8", "replace").lower() for h in case.hints]
    if case.hints and not any(m in line for m in NAMED_OUTCOMES) and not any(h in low for h in hints):
        return "unclear", "names none of: " + ", ".join(_short(h) for h in case.hints[:4])
    return "clean", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="build/bin/spmdsim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", choices=sorted(KINDS), action="append",
                    help="run only this kind of input (repeatable)")
    ap.add_argument("--match", help="run only cases whose name contains this")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    ap.add_argument("--list", action="store_true", help="print the cases' names and exit")
    ap.add_argument("--max-rss-gib", type=float, default=MAX_RSS_GIB,
                    help="peak resident memory above which a case is 'memory' (default 4)")
    args = ap.parse_args()
    binary = args.binary
    if not os.path.exists(binary) and os.path.exists(os.path.join(REPO, binary)):
        binary = os.path.join(REPO, binary)
    binary = os.path.abspath(binary)
    if not args.list and not os.access(binary, os.X_OK):
        sys.exit("sweep: --binary %s is not an executable" % binary)

    cases = []
    for kind in args.only or sorted(KINDS):
        cases += list(KINDS[kind]())
    if args.match:
        cases = [c for c in cases if args.match in c.name]
    if args.list:
        for c in cases:
            print(c.name)
        return 0

    results = []
    peak = [0, ""]  # the largest peak resident memory (KiB) and its case
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_case, c, binary, args.timeout): c for c in cases}
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            c = futures[fut]
            status, rc, out, err, max_rss_kib = fut.result()
            if status == "skip":
                continue
            outcome, reason = classify(c, status, rc, out, err, max_rss_kib, args.max_rss_gib)
            lines = message_lines(c, out, err) or [line for line in out.splitlines() if line.strip()]
            first = lines[0] if lines else ""
            results.append((c, outcome, reason, rc, first))
            if max_rss_kib > peak[0]:
                peak[:] = [max_rss_kib, c.name]
            if done % 200 == 0:
                print("sweep: %d of %d run" % (done, len(cases)), file=sys.stderr, flush=True)

    order = ["clean", "fail", "valid", "accepted", "unclear", "crash", "hang", "memory"]
    counts = {o: 0 for o in order}
    for _, outcome, *_ in results:
        counts[outcome] += 1
    print("%-10s %6s" % ("outcome", "count"))
    for o in order:
        print("%-10s %6d" % (o, counts[o]))
    print("%-10s %6d" % ("total", len(results)))
    print("largest peak resident memory: %.2f GiB (%s)" % (peak[0] / (1 << 20), peak[1]))
    results.sort(key=lambda r: (order.index(r[1]), r[0].name))
    for c, outcome, reason, rc, first in results:
        if outcome in ("clean", "fail", "valid"):
            continue
        argv = " ".join(_short(a) if a != "{B}" else "spmdsim" for a in c.argv)
        print("%-8s %s | %s | rc=%s (%s) | %s" % (outcome.upper(), c.name, argv, rc, reason, _short_line(first)))
    bad = sum(counts[o] for o in ("accepted", "unclear", "crash", "hang", "memory"))
    return 1 if bad else 0


def _short_line(line):
    return line if len(line) <= 240 else line[:200] + "...(%d chars)" % len(line)


if __name__ == "__main__":
    sys.exit(main())
