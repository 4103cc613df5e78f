#!/usr/bin/env python3
"""Writes multi-process conformance cases (docs/multi-process.md) whose expected outputs come from
real multi-process JAX on CPU: N processes on this host joined by jax.distributed.initialize on
127.0.0.1, each with K CPU devices (--xla_force_host_platform_device_count), CPU collectives
across processes over Gloo.

Each case: every process loads its own local data into a global array (make_array_from_process_
local_data, host_local_array_to_global_array or make_array_from_callback), runs one shard_map
program (psum, all_gather, psum_scatter, ppermute across processes) under jax.jit, and gathers the
outputs with process_allgather(tiled=True) (the case's `expected.outputs`) and
global_array_to_host_local_array (`expected.local_outputs`, one list per process). One pair of
cases runs the same program with each host loading its own rows and with each host loading the
global array's first rows (a data-loading bug): the script checks that JAX's results differ, and
the reference must reproduce both.

Usage: multi_process_cases.py --out DIR [--port P]
(The driver starts the worker processes itself: multi_process_cases.py --worker ...)
"""

import argparse
import json
import os
import socket
import subprocess
import sys

import numpy as np

# ---- The cases --------------------------------------------------------------------------------
# Each group runs in one set of worker processes: `processes` processes of `devices` devices.

ROWS = np.arange(8 * 3, dtype=np.float32).reshape(8, 3) * 1.5 - 7.0


def spread_floats(rng, shape):
    """Float32 values of spread magnitudes (rounding in sums shows)."""
    m = rng.integers(-(2 ** 24 - 1), 2 ** 24, size=shape).astype(np.float64)
    return np.ldexp(m, rng.integers(-30, -10, size=shape)).astype(np.float32)


def cases_two_hosts(rng):
    """2 processes of 2 devices."""
    grid = rng.integers(-50, 50, size=(8, 8)).astype(np.int32)
    floats = spread_floats(rng, (4, 6))
    host_copy = spread_floats(rng, (8, 2))
    psum_rows = {
        "mesh": {"shape": [4], "axis_names": ["x"]},
        "map": {"kind": "shard_map", "in_specs": [["x"]], "out_specs": [[], ["x"]]},
        "devices": [[0, 1], [2, 3]],
        "load": {"function": "make_array_from_process_local_data"},
        "body": [{"op": "psum", "args": ["in0"], "axis_name": "x"},
                 {"op": "mul", "args": ["in0", "in0"]}],
        "outputs": ["s0", "s1"],
    }
    return [
        dict(psum_rows, name="mp_local_rows_psum",
             about="each host loads its own rows of an (8, 3) array; psum across the hosts",
             local=[[ROWS[0:4]], [ROWS[4:8]]]),
        dict(psum_rows, name="mp_local_rows_psum_wrong_rows",
             about="the same program where every host loads the global array's first rows (a "
                   "data-loading bug): JAX's psum differs from the intended one",
             local=[[ROWS[0:4]], [ROWS[0:4]]]),
        {
            "name": "mp_host_local_all_gather_psum",
            "about": "host_local_array_to_global_array over a (2, 2) mesh, one row of hosts per "
                     "process; all_gather within a host, psum of floats across the hosts",
            "mesh": {"shape": [2, 2], "axis_names": ["p", "d"]},
            "map": {"kind": "shard_map", "in_specs": [["p", "d"]],
                    "out_specs": [[None, "d"], ["p", "d"]]},
            "devices": [[0, 1], [2, 3]],
            "load": {"function": "host_local_array_to_global_array"},
            "body": [{"op": "psum", "args": ["in0"], "axis_name": "p"},
                     {"op": "all_gather", "args": ["in0"], "axis_name": "d", "axis": 1,
                      "tiled": True}],
            "outputs": ["s0", "s1"],
            "local": [[floats[0:2]], [floats[2:4]]],
        },
        {
            "name": "mp_columns_global_shape_psum_scatter",
            "about": "processes own the mesh's columns ([0, 2] and [1, 3]); local data holds every "
                     "row and the process's columns, with an explicit global_shape; "
                     "psum_scatter of int32 over both axes",
            "mesh": {"shape": [2, 2], "axis_names": ["x", "y"]},
            "map": {"kind": "shard_map", "in_specs": [["x", "y"]], "out_specs": [[["x", "y"]]]},
            "devices": [[0, 2], [1, 3]],
            "load": {"function": "make_array_from_process_local_data",
                     "global_shapes": [[8, 8]]},
            "body": [{"op": "psum_scatter", "args": ["in0"], "axis_name": ["x", "y"],
                      "scatter_dimension": 1, "tiled": True}],
            "outputs": ["s0"],
            "local": [[grid[:, 0:4]], [grid[:, 4:8]]],
        },
        {
            "name": "mp_callback_ppermute_interleaved",
            "about": "make_array_from_callback with processes on alternate devices; host 1's copy of "
                     "the global data differs from host 0's, so devices 1 and 3 hold host 1's "
                     "rows; ppermute one step around the mesh",
            "mesh": {"shape": [4], "axis_names": ["x"]},
            "map": {"kind": "shard_map", "in_specs": [["x"]], "out_specs": [["x"]]},
            "devices": [[0, 2], [1, 3]],
            "load": {"function": "make_array_from_callback"},
            "body": [{"op": "ppermute", "args": ["in0"], "axis_name": "x",
                      "perm": [[0, 1], [1, 2], [2, 3], [3, 0]]}],
            "outputs": ["s0"],
            "local": [[host_copy], [host_copy + np.float32(100)]],
            # Alternate devices form no subcube of the mesh: global_array_to_host_local_array
            # raises (as the reference does), so only the gathered outputs are compared.
            "local_outputs": False,
        },
    ]


def cases_three_hosts(rng):
    """3 processes of 2 devices: a float psum over all six devices (across hosts over Gloo)."""
    ints = rng.integers(-1000, 1000, size=(6, 4)).astype(np.float32)
    floats = spread_floats(rng, (6, 64))
    return [{
        "name": "mp_three_hosts_psum_all_gather",
        "about": "3 hosts of 2 devices on a (3, 2) mesh; psum of integer-valued floats over both "
                 "axes and all_gather across the hosts",
        "mesh": {"shape": [3, 2], "axis_names": ["h", "d"]},
        "map": {"kind": "shard_map", "in_specs": [["h", "d"]], "out_specs": [[], ["h", "d"]]},
        "devices": [[0, 1], [2, 3], [4, 5]],
        "load": {"function": "make_array_from_process_local_data"},
        "body": [{"op": "psum", "args": ["in0"], "axis_name": ["h", "d"]},
                 {"op": "all_gather", "args": ["in0"], "axis_name": "h", "axis": 0,
                  "tiled": True}],
        "outputs": ["s0", "s1"],
        "local": [[ints[2 * p:2 * p + 2]] for p in range(3)],
    }, {
        "name": "mp_three_hosts_float_psum",
        "about": "psum of float32 of spread magnitudes across 3 hosts, within each host, and over "
                 "all 6 devices: every collective of a multi-process CPU client runs over Gloo, "
                 "in its ring order",
        "mesh": {"shape": [3, 2], "axis_names": ["h", "d"]},
        "map": {"kind": "shard_map", "in_specs": [["h", "d"]],
                "out_specs": [[None, "d"], ["h"], []]},
        "devices": [[0, 1], [2, 3], [4, 5]],
        "load": {"function": "make_array_from_process_local_data"},
        "body": [{"op": "psum", "args": ["in0"], "axis_name": "h"},
                 {"op": "psum", "args": ["in0"], "axis_name": "d"},
                 {"op": "psum", "args": ["in0"], "axis_name": ["h", "d"]}],
        "outputs": ["s0", "s1", "s2"],
        "local": [[floats[2 * p:2 * p + 2]] for p in range(3)],
    }]


GROUPS = [(2, 2, cases_two_hosts), (3, 2, cases_three_hosts)]


# ---- Writing a case ---------------------------------------------------------------------------

def write_case(out, case):
    processes = []
    for p, arrays in enumerate(case["local"]):
        files = []
        for k, array in enumerate(arrays):
            name = f"{case['name']}.p{p}.in{k}.npy"
            np.save(os.path.join(out, name), np.asarray(array))
            files.append({"file": name})
        processes.append({"devices": case["devices"][p], "inputs": files})
    outputs = len(case["outputs"])
    expected = {"outputs": [{"file": f"{case['name']}.out{j}.npy"} for j in range(outputs)]}
    if case.get("local_outputs", True):
        expected["local_outputs"] = [
            [{"file": f"{case['name']}.p{p}.out{j}.npy"} for j in range(outputs)]
            for p in range(len(processes))]
    doc = {
        "format": 1,
        "name": case["name"],
        "about": case["about"],
        "mesh": case["mesh"],
        "map": case["map"],
        "processes": processes,
        "load": case["load"],
        "body": case["body"],
        "outputs": case["outputs"],
        "expected": expected,
        # JAX's CPU client with jax.distributed runs every collective over Gloo (all-reduce:
        # its ring algorithm), also among one process's own devices.
        "order": "gloo_ring",
    }
    with open(os.path.join(out, case["name"] + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


# ---- A worker: one JAX process ----------------------------------------------------------------

def spec_of(entries):
    from jax.sharding import PartitionSpec as P
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def axis_of(step):
    name = step["axis_name"]
    return tuple(name) if isinstance(name, list) else name


def body_function(doc):
    import jax
    lax = jax.lax

    def body(*inputs):
        steps = []

        def ref(r):
            return inputs[int(r[2:])] if r.startswith("in") else steps[int(r[1:])]

        for step in doc["body"]:
            op, args = step["op"], [ref(a) for a in step["args"]]
            if op == "psum":
                steps.append(lax.psum(args[0], axis_of(step)))
            elif op == "all_gather":
                steps.append(lax.all_gather(args[0], axis_of(step), axis=step.get("axis", 0),
                                            tiled=step.get("tiled", False)))
            elif op == "psum_scatter":
                steps.append(lax.psum_scatter(args[0], axis_of(step),
                                              scatter_dimension=step.get("scatter_dimension", 0),
                                              tiled=step.get("tiled", False)))
            elif op == "ppermute":
                steps.append(lax.ppermute(args[0], axis_of(step),
                                          perm=[tuple(p) for p in step["perm"]]))
            elif op == "mul":
                steps.append(args[0] * args[1])
            else:
                raise ValueError(f"{doc['name']}: op {op} is not in this script")
        return tuple(ref(o) for o in doc["outputs"])
    return body


def mesh_of(doc):
    """The case's mesh: mesh device i is the k-th local device (in id order) of the process whose
    k-th smallest device id in `processes` is i."""
    import jax
    by_process = {}
    for device in jax.devices():
        by_process.setdefault(device.process_index, []).append(device)
    flat = [None] * int(np.prod(doc["mesh"]["shape"]))
    for p, process in enumerate(doc["processes"]):
        local = sorted(by_process[p], key=lambda d: d.id)
        for k, position in enumerate(sorted(process["devices"])):
            flat[position] = local[k]
    devices = np.array(flat, dtype=object).reshape(doc["mesh"]["shape"])
    return jax.sharding.Mesh(devices, tuple(doc["mesh"]["axis_names"]))


def load_inputs(doc, folder, mesh, process):
    import jax
    from jax.experimental import multihost_utils
    specs = [spec_of(s) for s in doc["map"]["in_specs"]]
    files = doc["processes"][process]["inputs"]
    load = doc["load"]
    arrays = []
    for k, spec in enumerate(specs):
        local = np.load(os.path.join(folder, files[k]["file"]))
        sharding = jax.sharding.NamedSharding(mesh, spec)
        if load["function"] == "make_array_from_process_local_data":
            shapes = load.get("global_shapes")
            shape = tuple(shapes[k]) if shapes and shapes[k] is not None else None
            arrays.append(jax.make_array_from_process_local_data(sharding, local, shape))
        elif load["function"] == "host_local_array_to_global_array":
            arrays.append(multihost_utils.host_local_array_to_global_array(local, mesh, spec))
        else:
            arrays.append(jax.make_array_from_callback(local.shape, sharding,
                                                       lambda index, data=local: data[index]))
    return arrays


def worker(args):
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    from jax.experimental import multihost_utils
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{args.port}",
                               num_processes=args.processes, process_id=args.process)
    assert jax.process_index() == args.process and jax.process_count() == args.processes
    assert len(jax.local_devices()) == args.devices
    for name in args.names.split(","):
        with open(os.path.join(args.out, name + ".json")) as f:
            doc = json.load(f)
        mesh = mesh_of(doc)
        inputs = load_inputs(doc, args.out, mesh, args.process)
        out_specs = [spec_of(s) for s in doc["map"]["out_specs"]]
        function = jax.jit(jax.shard_map(body_function(doc), mesh=mesh,
                                         in_specs=tuple(spec_of(s) for s in doc["map"]["in_specs"]),
                                         out_specs=tuple(out_specs)))
        outputs = function(*inputs)
        for j, (out, spec) in enumerate(zip(outputs, out_specs)):
            gathered = multihost_utils.process_allgather(out, tiled=True)
            if args.process == 0:
                np.save(os.path.join(args.out, f"{name}.out{j}.npy"), np.asarray(gathered))
            if "local_outputs" in doc["expected"]:
                local = multihost_utils.global_array_to_host_local_array(out, mesh, spec)
                np.save(os.path.join(args.out, f"{name}.p{args.process}.out{j}.npy"),
                        np.asarray(local))
    jax.distributed.shutdown()


# ---- The driver -------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_group(out, processes, devices, names):
    port = free_port()
    workers = [subprocess.Popen(
        [sys.executable, __file__, "--worker", "--out", out, "--port", str(port),
         "--processes", str(processes), "--process", str(p), "--devices", str(devices),
         "--names", ",".join(names)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for p in range(processes)]
    failed = False
    for p, w in enumerate(workers):
        try:
            log, _ = w.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            w.kill()
            log, _ = w.communicate()
        if w.returncode != 0:
            failed = True
            print(f"worker {p} of {processes} failed (exit {w.returncode}):\n{log}")
    if failed:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--processes", type=int)
    parser.add_argument("--process", type=int)
    parser.add_argument("--devices", type=int)
    parser.add_argument("--names")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    count = 0
    for processes, devices, make in GROUPS:
        cases = make(rng)
        for case in cases:
            write_case(args.out, case)
        run_group(args.out, processes, devices, [c["name"] for c in cases])
        count += len(cases)
    right = np.load(os.path.join(args.out, "mp_local_rows_psum.out0.npy"))
    wrong = np.load(os.path.join(args.out, "mp_local_rows_psum_wrong_rows.out0.npy"))
    if np.array_equal(right, wrong):
        sys.exit("the hosts that load the wrong rows got the intended psum: the case shows nothing")
    print(f"wrote {count} multi-process cases computed by JAX {__import__('jax').__version__} "
          f"to {args.out}")


if __name__ == "__main__":
    main()
