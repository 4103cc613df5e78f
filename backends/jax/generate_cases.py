#!/usr/bin/env python3
"""Generates random conformance cases (docs/conformance-format.md) by running them in JAX.

Each case is one collective, with random parameters, on a random mesh of up to 8 CPU devices
(pmap: one axis; shard_map: 1-3 axes), over random data of one dtype (float32, float16, bfloat16,
int32, int8, bool) with edge values (-0.0, NaN, +-inf, values whose sum overflows). JAX runs it as
jax.jit(jax.shard_map(...)) or jax.pmap (itself jit(shard_map) since 0.10, jax/_src/pmap.py;
shard_map is jitted as JAX's own shard_map tests and docs run it), and the case stores JAX's
outputs, or its error when JAX rejects the program.

Usage: generate_cases.py --out DIR [--count N] [--seed S]
Needs XLA_FLAGS=--xla_force_host_platform_device_count=8 (set here if absent) and JAX on CPU.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

DTYPES = ["float32", "float16", "bfloat16", "int32", "int8", "bool"]
REDUCTIONS = ["psum", "pmean", "pmax", "pmin"]
COLLECTIVES = REDUCTIONS + ["all_gather", "psum_scatter", "all_to_all", "ppermute", "pshuffle",
                            "axis_index"]
AXIS_NAMES = ["x", "y", "z"]
MAX_DEVICES = 8


def jnp_dtype(name):
    return jnp.bfloat16 if name == "bfloat16" else np.dtype(name)


# ---- Random data with edge values ------------------------------------------------------------

def random_values(rng, dtype, shape):
    """Floats m * 2^k with spread exponents and some -0.0, NaN, +-inf and huge values (whose sums
    overflow); ints over their full range (sums wrap); bools at random."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in ("int32", "int8"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    significand_bits = {"float32": 24, "float16": 11, "bfloat16": 8}[dtype]
    m = rng.integers(-(2 ** significand_bits - 1), 2 ** significand_bits, size=shape)
    k = rng.integers(-12, 13, size=shape)
    values = np.ldexp(m.astype(np.float64), k - significand_bits)
    largest = {"float32": 3.0e38, "float16": 60000.0, "bfloat16": 3.0e38}[dtype]
    edges = np.array([-0.0, np.nan, np.inf, -np.inf, largest, -largest])
    pick = rng.random(size=shape) < 0.08
    values = np.where(pick, edges[rng.integers(0, len(edges), size=shape)], values)
    return np.asarray(jnp.asarray(values, dtype=jnp_dtype(dtype)))


def all_negative_zero(dtype, shape):
    return np.asarray(jnp.full(shape, -0.0, dtype=jnp_dtype(dtype)))


# ---- Meshes, groups and parameters -----------------------------------------------------------

def random_mesh(rng, kind):
    if kind == "pmap":
        return [int(rng.integers(1, MAX_DEVICES + 1))], ["i"]
    while True:
        axes = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 5)) for _ in range(axes)]
        if np.prod(shape) <= MAX_DEVICES:
            return shape, AXIS_NAMES[:axes]


def random_axis_names(rng, names):
    """A non-empty subset of the mesh axes in random order: a string for one, a list for more."""
    count = int(rng.integers(1, len(names) + 1))
    chosen = [str(a) for a in rng.permutation(names)[:count]]
    return chosen[0] if count == 1 else chosen


def group_size(mesh_shape, mesh_names, axis_name):
    names = [axis_name] if isinstance(axis_name, str) else axis_name
    return int(np.prod([mesh_shape[mesh_names.index(a)] for a in names]))


def random_groups(rng, n):
    """axis_index_groups: equal-size groups (size dividing n, >= 2 groups) in random order."""
    sizes = [s for s in range(1, n) if n % s == 0 and n // s >= 2]
    if not sizes:
        return None
    size = int(rng.choice(sizes))
    order = [int(i) for i in rng.permutation(n)]
    return [order[g:g + size] for g in range(0, n, size)]


def random_perm(rng, n):
    """(source, destination) pairs: a random partial permutation, some indices written mod n."""
    sources = [int(i) for i in rng.permutation(n)[:int(rng.integers(1, n + 1))]]
    destinations = [int(i) for i in rng.permutation(n)[:len(sources)]]
    pairs = []
    for s, d in zip(sources, destinations):
        if rng.random() < 0.2:
            s -= n  # -1 means n-1: JAX takes indices modulo the group size
        pairs.append([s, d])
    return pairs


# ---- One case ---------------------------------------------------------------------------------

class Case:
    """A collective step with its parameters, the per-device input shape, and the map."""

    def __init__(self, rng, index):
        self.kind = "pmap" if rng.random() < 0.35 else "shard_map"
        self.mesh_shape, self.mesh_names = random_mesh(rng, self.kind)
        self.op = str(rng.choice(COLLECTIVES))
        self.dtype = str(rng.choice(DTYPES))
        if self.op == "psum_scatter" and self.dtype == "bool":
            # Unlike psum, psum_scatter does not turn bool into int32 first (lax/parallel.py),
            # so a bool sum is not meaningful: use int8.
            self.dtype = "int8"
        if self.op == "axis_index":
            self.dtype = "int32"  # added to the axis index, so its type decides the result's
        self.axis_name = (self.mesh_names[0] if self.kind == "pmap"
                          else random_axis_names(rng, self.mesh_names))
        self.n = group_size(self.mesh_shape, self.mesh_names, self.axis_name)
        self.check_vma = self.kind == "pmap" or rng.random() < 0.75
        self.step = {"op": self.op, "args": ["in0"], "axis_name": self.axis_name}
        self.local_shape = self.random_parameters(rng)
        self.name = f"jax_{index:04d}_{self.kind}_{self.op}_{self.dtype}"

    def random_parameters(self, rng):
        """Fills the step's parameters; returns the per-device input shape."""
        n, step = self.n, self.step
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 4)) for _ in range(rank)]
        if self.op in REDUCTIONS + ["all_gather", "psum_scatter", "all_to_all"]:
            if rng.random() < 0.3 and (self.kind == "pmap" or not self.check_vma or
                                       self.op != "psum"):
                groups = random_groups(rng, n)
                if groups is not None:
                    step["axis_index_groups"] = groups
        m = len(step.get("axis_index_groups", [])[0]) if "axis_index_groups" in step else n
        if self.op == "all_gather":
            step["tiled"] = bool(rng.random() < 0.5)
            step["axis"] = int(rng.integers(-rank if step["tiled"] else -rank - 1,
                                            rank if step["tiled"] else rank + 1))
        elif self.op == "psum_scatter":
            step["tiled"] = bool(rng.random() < 0.5)
            d = int(rng.integers(0, rank))  # negative dimensions need JAX >= 0.11
            step["scatter_dimension"] = d
            shape[d] = m * int(rng.integers(1, 3)) if step["tiled"] else m
            if not step["tiled"] and rank == 1:
                shape.append(2)  # keep the result's rank >= 1 so an out_spec can name its axes
        elif self.op == "all_to_all":
            step["tiled"] = bool(rng.random() < 0.5)
            split = int(rng.integers(0, rank))
            step["split_axis"] = split
            step["concat_axis"] = int(rng.integers(0, rank))
            shape[split] = m * int(rng.integers(1, 3)) if step["tiled"] else m
        elif self.op == "ppermute":
            step["perm"] = random_perm(rng, n)
        elif self.op == "pshuffle":
            step["perm"] = [int(i) for i in rng.permutation(n)]
        elif self.op == "axis_index":
            step["args"] = []
        return shape

    def out_rank(self):
        """The rank of the per-device result."""
        rank = len(self.local_shape)
        if self.op in ("all_gather", "psum_scatter") and not self.step["tiled"]:
            return rank + 1 if self.op == "all_gather" else rank - 1
        return rank

    # -- the map: specs / axes --

    def in_spec(self, rng):
        """Each mesh axis goes to a random input dimension or nowhere (replicated along it)."""
        spec = [[] for _ in self.local_shape]
        for a in self.mesh_names:
            d = int(rng.integers(-1, len(self.local_shape)))
            if d >= 0:
                spec[d].append(a)
        return [None if not s else (s[0] if len(s) == 1 else s) for s in spec]

    def out_spec(self, in_spec, out_rank):
        """Names every axis the result may vary over (check_vma), all on dimension 0."""
        varying = {a for s in in_spec if s is not None for a in ([s] if isinstance(s, str) else s)}
        names = [self.axis_name] if isinstance(self.axis_name, str) else self.axis_name
        if self.op in REDUCTIONS:
            varying -= set(names)
        else:
            varying |= set(names)
        ordered = [a for a in self.mesh_names if a in varying]
        if not ordered or out_rank == 0:
            return []
        return [ordered[0] if len(ordered) == 1 else ordered]


def jax_collective(step):
    """The per-device function of one step, calling jax.lax."""
    op, axis_name = step["op"], step["axis_name"]
    axes = axis_name if isinstance(axis_name, str) else tuple(axis_name)
    groups = step.get("axis_index_groups")
    lax = jax.lax
    if op in REDUCTIONS:
        return lambda x: getattr(lax, op)(x, axes, axis_index_groups=groups)
    if op == "all_gather":
        return lambda x: lax.all_gather(x, axes, axis_index_groups=groups, axis=step["axis"],
                                        tiled=step["tiled"])
    if op == "psum_scatter":
        return lambda x: lax.psum_scatter(x, axes, scatter_dimension=step["scatter_dimension"],
                                          axis_index_groups=groups, tiled=step["tiled"])
    if op == "all_to_all":
        return lambda x: lax.all_to_all(x, axes, step["split_axis"], step["concat_axis"],
                                        axis_index_groups=groups, tiled=step["tiled"])
    if op == "ppermute":
        return lambda x: lax.ppermute(x, axes, [tuple(p) for p in step["perm"]])
    if op == "pshuffle":
        return lambda x: lax.pshuffle(x, axes, step["perm"])
    if op == "axis_index":
        return lambda x: x + lax.axis_index(axes)
    raise ValueError(f"unknown op {op}")


def spec_of(entries):
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def run_in_jax(case, rng):
    """Returns (json map, global input, global output or None, error text or None)."""
    devices = np.array(jax.devices()[:int(np.prod(case.mesh_shape))]).reshape(case.mesh_shape)
    mesh = Mesh(devices, tuple(case.mesh_names))
    body = jax_collective(case.step)
    if case.kind == "pmap":
        n = case.mesh_shape[0]
        x = random_values(rng, case.dtype, [n] + case.local_shape)
        if rng.random() < 0.1 and case.dtype not in ("bool", "int32", "int8"):
            x = all_negative_zero(case.dtype, [n] + case.local_shape)
        jmap = {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]}
        run = jax.pmap(body, axis_name="i", devices=list(devices.flat))
        return jmap, x, run, None
    in_spec = case.in_spec(rng)
    global_shape = list(case.local_shape)
    for d, s in enumerate(in_spec):
        for a in ([] if s is None else [s] if isinstance(s, str) else s):
            global_shape[d] *= case.mesh_shape[case.mesh_names.index(a)]
    x = random_values(rng, case.dtype, global_shape)
    out_spec = case.out_spec(in_spec, case.out_rank())
    jmap = {"kind": "shard_map", "in_specs": [in_spec], "out_specs": [out_spec]}
    if not case.check_vma:
        jmap["check_vma"] = False
    run = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec_of(in_spec),
                                out_specs=spec_of(out_spec), check_vma=case.check_vma))
    return jmap, x, run, None


# ---- Files ------------------------------------------------------------------------------------

def save_array(out_dir, file_name, array):
    """Writes an .npy; bfloat16 as uint16 bit patterns. Returns the JSON entry naming it."""
    entry = {"file": file_name}
    array = np.asarray(array)
    if array.dtype == jnp.bfloat16:
        array = array.view(np.uint16)
        entry["dtype"] = "bfloat16"
    np.save(os.path.join(out_dir, file_name), np.ascontiguousarray(array))
    return entry


def one_line(error):
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text[:300]


def write_case(out_dir, case, rng):
    jmap, x, run, _ = run_in_jax(case, rng)
    document = {
        "format": 1,
        "name": case.name,
        "about": f"generated by backends/jax/generate_cases.py with jax {jax.__version__}",
        "mesh": {"shape": case.mesh_shape, "axis_names": case.mesh_names},
        "map": jmap,
        "body": [case.step] if case.op != "axis_index" else
                [case.step, {"op": "add", "args": ["in0", "s0"]}],
        "outputs": ["s0" if case.op != "axis_index" else "s1"],
    }
    if case.op == "axis_index":
        document["body"][0] = {"op": "axis_index", "args": [], "axis_name": case.axis_name}
    document["inputs"] = [save_array(out_dir, f"{case.name}.in0.npy", x)]
    try:
        result = np.asarray(run(x))
        document["expected"] = {"outputs": [save_array(out_dir, f"{case.name}.out0.npy", result)]}
    except Exception as error:  # JAX rejects the program: the case expects an error
        document["expected"] = {"error": one_line(error)}
    with open(os.path.join(out_dir, f"{case.name}.json"), "w") as f:
        json.dump(document, f, indent=1)
    return "error" in document["expected"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write NAME.json and .npy files to")
    parser.add_argument("--count", type=int, default=200, help="how many cases")
    parser.add_argument("--seed", type=int, default=5, help="random seed")
    args = parser.parse_args()
    if len(jax.devices()) < MAX_DEVICES:
        sys.exit(f"error: JAX has {len(jax.devices())} CPU devices, expected {MAX_DEVICES} "
                 "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    errors = 0
    for index in range(args.count):
        errors += write_case(args.out, Case(rng, index), rng)
    print(f"generated {args.count} cases with jax {jax.__version__} on {len(jax.devices())} "
          f"CPU devices ({errors} expect an error) in {args.out}")


if __name__ == "__main__":
    main()
