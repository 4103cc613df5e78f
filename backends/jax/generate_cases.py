#!/usr/bin/env python3
"""Generates random conformance cases (docs/conformance-format.md) by running them in JAX.

Each case is one collective, with random parameters, on a random mesh of up to 8 CPU devices
(pmap: one axis; shard_map: 1-3 axes), over random data of one dtype (float32, float16, bfloat16,
int32, int8, bool) with edge values (-0.0, NaN, +-inf, values whose sum overflows). JAX runs it as
jax.jit(jax.shard_map(...)) or jax.pmap (itself jit(shard_map) since 0.10, jax/_src/pmap.py;
shard_map is jitted as JAX's own shard_map tests and docs run it), and the case stores JAX's
outputs, or its error when JAX rejects the program.

With --rules N it also writes N cases for each of the JAX / XLA:CPU rules listed at "Rule cases"
below (ruleR_*.json): small programs of element-wise steps and collectives that pin one rule each.

Usage: generate_cases.py --out DIR [--count N] [--seed S] [--rules N]
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
JAX_RELEASE = tuple(int(part) for part in jax.__version__.split(".")[:2])
# JAX 0.11 and later take negative psum_scatter / all_to_all axes (0.10.2 fails to lower them).
NEGATIVE_SCATTER_AXES = JAX_RELEASE >= (0, 11)
# The case field `jax_version` (docs/conformance-format.md): the release whose rules the cases
# record, where the reference knows it.
CASE_JAX_VERSION = {(0, 10): "0.10", (0, 12): "0.12"}.get(JAX_RELEASE)


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
    """(source, destination) pairs: a random partial permutation, some sources written as s - n
    (JAX looks indices up Python-style in the group's device list: -n..n-1 are valid)."""
    sources = [int(i) for i in rng.permutation(n)[:int(rng.integers(1, n + 1))]]
    destinations = [int(i) for i in rng.permutation(n)[:len(sources)]]
    pairs = []
    for s, d in zip(sources, destinations):
        if rng.random() < 0.2:
            s -= n  # -1 means n-1, as in a Python list; out-of-range ones: rule cases
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
            d = int(rng.integers(0, rank))
            # Negative dimensions need JAX >= 0.11; the extra draw only there keeps 0.10's cases.
            step["scatter_dimension"] = d - rank if NEGATIVE_SCATTER_AXES and rng.random() < 0.3 \
                else d
            shape[d] = m * int(rng.integers(1, 3)) if step["tiled"] else m
            if not step["tiled"] and rank == 1:
                shape.append(2)  # keep the result's rank >= 1 so an out_spec can name its axes
        elif self.op == "all_to_all":
            step["tiled"] = bool(rng.random() < 0.5)
            split = int(rng.integers(0, rank))
            step["split_axis"] = split
            step["concat_axis"] = int(rng.integers(0, rank))
            if NEGATIVE_SCATTER_AXES and rng.random() < 0.3:
                step["split_axis"] -= rank
            if NEGATIVE_SCATTER_AXES and rng.random() < 0.3:
                step["concat_axis"] -= rank
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


# ---- Rule cases: programs that pin one JAX / XLA:CPU rule each --------------------------------
#
# Each rule has its own random stream (seed, rule), so the random cases above keep their values
# whatever --rules says. A rule case is a small program: inputs in0, in1, ...; element-wise steps
# (add sub mul neg convert) and collectives; several outputs. The rules (docs/jax-checklist.md):
#   1 ppermute / pshuffle indices: -n..n-1 valid (Python list indexing), others raise.
#   2 bool reductions: psum -> int32, pmean -> float32, pmax / pmin OR / AND, psum_scatter raises.
#   3 subnormals: float32 / bfloat16 arithmetic and reductions flush them (DAZ + FTZ); float16
#     does not; data movement, neg and convert keep the bits.
#   4 groups of one device fold from the identity; a whole 1-device program skips psum / pmean /
#     pmax / pmin but not psum_scatter.
#   5 bfloat16 excess precision: add / sub / mul feeding psum / pmean / psum_scatter (or convert
#     to float32) directly are not rounded to bfloat16 first.
#   7 pmax / pmin drop NaN (all-NaN gives the identity, -inf for pmax).

RULES = [1, 2, 3, 4, 5, 7]
FLOATS = ["float32", "bfloat16", "float16"]
# significand bits (with the hidden bit), exponent of the smallest normal
FLOAT_FORMAT = {"float32": (24, -126), "bfloat16": (8, -126), "float16": (11, -14)}


def as_dtype(values, dtype):
    """float64 values (exact in dtype) as dtype, converted by NumPy / ml_dtypes on the host (no
    XLA computation, which could flush subnormals)."""
    return np.asarray(values, dtype=np.float64).astype(jnp_dtype(dtype))


def random_signs(rng, shape):
    return np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)


def subnormal_values(rng, dtype, shape):
    """Both signs of: subnormals, the smallest normals (their sums and differences can be
    subnormal), values near the square root of the smallest normal (their products can be
    subnormal), ordinary values and zeros."""
    p, emin = FLOAT_FORMAT[dtype]
    ulp = 2.0 ** (emin - p + 1)  # the smallest subnormal
    sub = rng.integers(1, 2 ** (p - 1), size=shape) * ulp
    near = rng.integers(2 ** (p - 1), 2 ** (p + 1), size=shape) * ulp
    root = np.ldexp(rng.integers(2 ** (p - 1), 2 ** p, size=shape).astype(np.float64),
                    emin // 2 - p + 1 + rng.integers(-2, 3, size=shape))
    ordinary = np.ldexp(rng.integers(1, 2 ** p, size=shape).astype(np.float64),
                        rng.integers(-6, 7, size=shape) - p)
    pick = rng.choice(5, size=shape, p=[0.4, 0.2, 0.15, 0.15, 0.1])
    values = np.choose(pick, [sub, near, root, ordinary, np.zeros(shape)])
    return as_dtype(values * random_signs(rng, shape), dtype)


def edge_values(rng, dtype, shape):
    """-0.0, +0.0, NaN, +-inf, subnormals of both signs and ordinary values."""
    p, emin = FLOAT_FORMAT[dtype]
    sub = rng.integers(1, 2 ** (p - 1), size=shape) * 2.0 ** (emin - p + 1)
    ordinary = np.ldexp(rng.integers(1, 2 ** p, size=shape).astype(np.float64),
                        rng.integers(-6, 7, size=shape) - p)
    pick = rng.choice(5, size=shape, p=[0.3, 0.2, 0.2, 0.1, 0.2])
    values = np.choose(pick, [np.zeros(shape), np.full(shape, np.nan), sub,
                              np.full(shape, np.inf), ordinary])
    return as_dtype(values * random_signs(rng, shape), dtype)


def nan_values(rng, dtype, shape):
    """Many NaNs (a column of NaN only, where there is more than one column), +-inf, +-0.0 and
    ordinary values."""
    p, _ = FLOAT_FORMAT[dtype]
    ordinary = np.ldexp(rng.integers(1, 2 ** p, size=shape).astype(np.float64),
                        rng.integers(-6, 7, size=shape) - p)
    pick = rng.choice(4, size=shape, p=[0.45, 0.1, 0.1, 0.35])
    values = np.choose(pick, [np.full(shape, np.nan), np.full(shape, np.inf), np.zeros(shape),
                              ordinary]) * random_signs(rng, shape)
    flat = values.reshape(shape[0], -1)
    if flat.shape[1] > 1:
        flat[:, int(rng.integers(0, flat.shape[1]))] = np.nan
    return as_dtype(flat.reshape(shape), dtype)


def excess_values(rng, shape, large):
    """bfloat16 values (8 significand bits) of spread magnitudes: sums and products of two need
    more bits than bfloat16 has, and large ones of both signs cancel across devices."""
    low, high = (2, 9) if large else (-6, 3)
    m = rng.integers(2 ** 7, 2 ** 8, size=shape).astype(np.float64)
    values = np.ldexp(m, rng.integers(low, high, size=shape) - 7) * random_signs(rng, shape)
    return as_dtype(values, "bfloat16")


def body_function(body, outputs):
    """A case body's per-device function (docs/conformance-format.md, "body"): each step with
    jax.lax / jax.numpy, its value named s<k>; the inputs are in<k>."""
    def run(*args):
        values = {f"in{k}": a for k, a in enumerate(args)}
        for k, step in enumerate(body):
            x = [values[r] for r in step["args"]]
            op = step["op"]
            if op in ("add", "sub", "mul"):
                value = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply}[op](*x)
            elif op == "neg":
                value = jnp.negative(x[0])
            elif op == "convert":
                value = jax.lax.convert_element_type(x[0], jnp_dtype(step["dtype"]))
            elif op == "axis_index":
                value = jax.lax.axis_index(step["axis_name"] if isinstance(step["axis_name"], str)
                                           else tuple(step["axis_name"]))
            else:
                value = jax_collective(step)(x[0])
            values[f"s{k}"] = value
        return tuple(values[r] for r in outputs)
    return run


class Program:
    """A rule case: a mesh, a map, global inputs, a body and its outputs."""

    def __init__(self, name, mesh_shape, mesh_names, kind):
        self.name, self.mesh_shape, self.mesh_names, self.kind = name, mesh_shape, mesh_names, kind
        self.inputs, self.body, self.outputs = [], [], []
        self.devices = int(np.prod(mesh_shape))

    def step(self, op, *args, **parameters):
        """Appends a step; returns its ref (sK)."""
        self.body.append({"op": op, "args": list(args), **parameters})
        return f"s{len(self.body) - 1}"

    def add_input(self, make, local_shape):
        """Adds a global input made by make(shape): pmap stacks one block per device; shard_map
        splits dimension 0 over all mesh axes (every device its own block). Returns inN."""
        self.inputs.append(make([self.devices * local_shape[0]] + list(local_shape[1:]))
                           if self.kind == "shard_map" else make([self.devices] + local_shape))
        return f"in{len(self.inputs) - 1}"

    def spec(self):
        names = self.mesh_names
        return [names[0] if len(names) == 1 else list(names)]

    def jmap(self):
        if self.kind == "pmap":
            return {"kind": "pmap", "axis_name": "i", "in_axes": [0] * len(self.inputs),
                    "out_axes": [0] * len(self.outputs)}
        return {"kind": "shard_map", "in_specs": [self.spec() for _ in self.inputs],
                "out_specs": [self.spec() for _ in self.outputs]}

    def function(self):
        """The per-device function, stepping through the body with jax.lax / jax.numpy."""
        return body_function(self.body, self.outputs)

    def compiled(self):
        devices = jax.devices()[:self.devices]
        if self.kind == "pmap":
            return jax.pmap(self.function(), axis_name="i", devices=devices)
        mesh = Mesh(np.array(devices).reshape(self.mesh_shape), tuple(self.mesh_names))
        spec = spec_of(self.spec())
        return jax.jit(jax.shard_map(self.function(), mesh=mesh,
                                     in_specs=tuple(spec for _ in self.inputs),
                                     out_specs=tuple(spec for _ in self.outputs)))


def rule_map(rng, devices=None, shard_map_share=0.4):
    """(kind, mesh shape, mesh names, axis name over all mesh axes) for a random map."""
    if rng.random() < shard_map_share:
        shape, names = random_mesh(rng, "shard_map")
        if devices is not None:
            shape, names = ([devices], ["x"]) if rng.random() < 0.5 else \
                (([devices // 2, 2], ["x", "y"]) if devices % 2 == 0 else ([1, devices], ["x", "y"]))
        axis = names[0] if len(names) == 1 else random_axis_names(rng, names)
        return "shard_map", shape, names, axis
    n = devices if devices is not None else int(rng.integers(1, MAX_DEVICES + 1))
    return "pmap", [n], ["i"], "i"


def singleton_axes(shape, names):
    return [a for a, s in zip(names, shape) if s == 1]


def rule1_case(rng, index):
    """ppermute with indices -n..n-1 (valid), out of range (IndexError) or repeated once
    normalized (ValueError); pshuffle with a negative or out-of-range entry (ValueError), or a
    permutation of 0..k-1 with k < n (valid: the other devices get zeros)."""
    kind, shape, names, axis = rule_map(rng)
    n = group_size(shape, names, axis)
    dtype = str(rng.choice(["float32", "int32"]))
    variant = str(rng.choice(["valid", "out_of_range", "out_of_range", "duplicate", "pshuffle"]))
    prog = Program(f"rule1_{index:03d}_{kind}_{variant}", shape, names, kind)
    x = prog.add_input(lambda s: random_values(rng, dtype, s), [int(rng.integers(1, 3))])
    if variant == "pshuffle":
        perm = [int(i) for i in rng.permutation(n)]
        how = int(rng.integers(0, 3)) if n > 1 else int(rng.integers(0, 2))
        if how == 0:
            k = int(rng.integers(0, n))
            perm[k] -= n if rng.random() < 0.5 else -n  # -n..-1 or n..2n-1
        elif how == 1:
            perm[int(rng.integers(0, n))] = int(rng.choice([n, n + 1, -n - 1]))
        else:
            perm = [int(i) for i in rng.permutation(int(rng.integers(1, n)))]
        prog.outputs = [prog.step("pshuffle", x, axis_name=axis, perm=perm)]
        return prog
    count = int(rng.integers(1, n + 1))
    sources = [int(i) for i in rng.permutation(n)[:count]]
    destinations = [int(i) for i in rng.permutation(n)[:count]]
    pairs = [[s - n if rng.random() < 0.4 else s, d - n if rng.random() < 0.4 else d]
             for s, d in zip(sources, destinations)]
    if variant == "out_of_range":
        bad = int(rng.choice([n, n + int(rng.integers(1, 4)), -n - 1, -n - int(rng.integers(2, 5))]))
        pairs[int(rng.integers(0, count))][int(rng.integers(0, 2))] = bad
    elif variant == "duplicate":
        s, d = pairs[int(rng.integers(0, count))]
        if rng.random() < 0.5:  # the same source written the other way, to a new destination
            other = s + n if s < 0 else s - n
            pairs.append([other, (d + 1) % n if count < n else d])
        else:
            other = d + n if d < 0 else d - n
            pairs.append([(s + 1) % n if count < n else s, other])
    prog.outputs = [prog.step("ppermute", x, axis_name=axis, perm=pairs)]
    return prog


def rule2_case(rng, index):
    """psum (int32), pmean (float32), pmax (OR), pmin (AND) and psum_scatter (TypeError) of bool,
    sometimes with axis_index_groups (pmap)."""
    kind, shape, names, axis = rule_map(rng)
    n = group_size(shape, names, axis)
    op = str(rng.choice(REDUCTIONS + ["psum_scatter"]))
    prog = Program(f"rule2_{index:03d}_{kind}_{op}_bool", shape, names, kind)
    parameters = {"axis_name": axis}
    m = n
    if kind == "pmap" and rng.random() < 0.3:
        groups = random_groups(rng, n)
        if groups is not None:
            parameters["axis_index_groups"], m = groups, len(groups[0])
    local = [int(rng.integers(1, 3)), int(rng.integers(1, 4))]
    if op == "psum_scatter":
        parameters["scatter_dimension"] = 1
        parameters["tiled"] = bool(rng.random() < 0.5)
        local[1] = m * (int(rng.integers(1, 3)) if parameters["tiled"] else 1)
    x = prog.add_input(lambda s: random_values(rng, "bool", s), local)
    prog.outputs = [prog.step(op, x, **parameters)]
    return prog


def reduction_parameters(rng, op, local, m):
    """psum_scatter's parameters (scatter over dimension 1, sized for a group of m); sets local."""
    if op != "psum_scatter":
        return {}
    tiled = bool(rng.random() < 0.5)
    local[1] = m * (int(rng.integers(1, 3)) if tiled else 1)
    return {"scatter_dimension": 1, "tiled": tiled}


def rule3_case(rng, index):
    """Subnormals of float32 / bfloat16 / float16 (with normals, both signs) through a reduction,
    through add / sub / mul of two runtime inputs then a collective, or through data movement,
    neg and convert (bits kept)."""
    dtype = str(rng.choice(FLOATS))
    kind, shape, names, axis = rule_map(rng, devices=int(rng.integers(2, MAX_DEVICES + 1)))
    n = group_size(shape, names, axis)
    variant = str(rng.choice(["reduce", "elementwise", "elementwise", "movement"]))
    local = [int(rng.integers(1, 3)), int(rng.integers(2, 5))]
    make = lambda s: subnormal_values(rng, dtype, s)  # noqa: E731
    if variant == "movement":
        op = str(rng.choice(["all_gather", "ppermute", "all_to_all", "neg", "convert"]))
        parameters = {}
        if op in ("all_gather", "ppermute", "all_to_all"):
            parameters["axis_name"] = axis
        if op == "all_gather":
            parameters.update(axis=0, tiled=bool(rng.random() < 0.5))
        elif op == "ppermute":
            parameters["perm"] = random_perm(rng, n)
        elif op == "all_to_all":
            parameters.update(split_axis=1, concat_axis=0, tiled=True)
            local[1] = n
        elif op == "convert":
            parameters["dtype"] = str(rng.choice([d for d in FLOATS if d != dtype]))
        prog = Program(f"rule3_{index:03d}_{kind}_{op}_{dtype}", shape, names, kind)
        x = prog.add_input(make, local)
        prog.outputs = [prog.step(op, x, **parameters)]
        return prog
    op = str(rng.choice(REDUCTIONS + ["psum_scatter"]))
    parameters = {"axis_name": axis, **reduction_parameters(rng, op, local, n)}
    if variant == "reduce":
        prog = Program(f"rule3_{index:03d}_{kind}_{op}_{dtype}", shape, names, kind)
        prog.outputs = [prog.step(op, prog.add_input(make, local), **parameters)]
        return prog
    element = str(rng.choice(["add", "sub", "mul"]))
    prog = Program(f"rule3_{index:03d}_{kind}_{element}_{op}_{dtype}", shape, names, kind)
    a, b = prog.add_input(make, local), prog.add_input(make, local)
    s = prog.step(element, a, b)
    prog.outputs = [s, prog.step(op, s, **parameters)]
    return prog


def rule4_case(rng, index):
    """Groups of one device with -0.0, NaN, +-inf and subnormals: axis_index_groups of singletons
    (pmap), a shard_map mesh axis of size 1, or a whole 1-device program."""
    dtype = str(rng.choice(FLOATS))
    variant = str(rng.choice(["singletons", "mesh_axis_of_one", "one_device"]))
    op = str(rng.choice(REDUCTIONS + ["psum_scatter", "all_gather"]))
    local = [int(rng.integers(1, 3)), int(rng.integers(2, 5))]
    parameters = reduction_parameters(rng, op, local, 1)
    if op == "all_gather":
        parameters = {"axis": 0, "tiled": bool(rng.random() < 0.5)}
    if variant == "singletons":
        n = int(rng.integers(2, MAX_DEVICES + 1))
        kind, shape, names, axis = "pmap", [n], ["i"], "i"
        parameters["axis_index_groups"] = [[int(i)] for i in rng.permutation(n)]
    elif variant == "mesh_axis_of_one":
        kind = "shard_map"
        while True:
            shape, names = random_mesh(rng, "shard_map")
            if 1 in shape and np.prod(shape) > 1:
                break
        ones = singleton_axes(shape, names)
        axis = ones[0] if len(ones) == 1 or rng.random() < 0.5 else ones
    else:
        kind = "pmap" if rng.random() < 0.5 else "shard_map"
        shape, names = ([1], ["i"]) if kind == "pmap" else \
            (([1], ["x"]) if rng.random() < 0.5 else ([1, 1], ["x", "y"]))
        axis = names[0] if len(names) == 1 else random_axis_names(rng, names)
    prog = Program(f"rule4_{index:03d}_{kind}_{variant}_{op}_{dtype}", shape, names, kind)
    x = prog.add_input(lambda s: edge_values(rng, dtype, s), local)
    prog.outputs = [prog.step(op, x, axis_name=axis, **parameters)]
    return prog


RULE5_CHAINS = ["psum", "pmean", "psum_scatter", "all_gather", "pmax", "pmin", "to_float32",
                "to_float16", "to_bfloat16_psum", "then_add_psum", "neg_psum", "psum_add_psum",
                "ppermute_psum"]


def rule5_case(rng, index):
    """bfloat16 add / sub / mul of two runtime inputs, then: a sum (psum / pmean / psum_scatter,
    excess precision kept), data movement or pmax / pmin (rounded), a convert, a second add then
    psum, neg then psum, psum then add then psum, ppermute then psum."""
    kind, shape, names, axis = rule_map(rng, devices=int(rng.integers(2, MAX_DEVICES + 1)),
                                        shard_map_share=0.3)
    n = group_size(shape, names, axis)
    element = str(rng.choice(["add", "sub", "mul"]))
    chain = str(rng.choice(RULE5_CHAINS))
    local = [int(rng.integers(1, 3)), int(rng.integers(2, 5))]
    op = {"pmean": "pmean", "psum_scatter": "psum_scatter", "all_gather": "all_gather",
          "pmax": "pmax", "pmin": "pmin"}.get(chain, "psum")
    parameters = {"axis_name": axis, **reduction_parameters(rng, op, local, n)}
    if op == "all_gather":
        parameters.update(axis=0, tiled=bool(rng.random() < 0.5))
    prog = Program(f"rule5_{index:03d}_{kind}_{element}_{chain}", shape, names, kind)
    large = element != "mul"
    a = prog.add_input(lambda s: excess_values(rng, s, large), local)
    b = prog.add_input(lambda s: excess_values(rng, s, False), local)
    s = prog.step(element, a, b)
    if chain.startswith("to_float"):
        out = prog.step("convert", s, dtype=chain[3:])
    elif chain == "to_bfloat16_psum":
        out = prog.step("psum", prog.step("convert", s, dtype="bfloat16"), axis_name=axis)
    elif chain == "then_add_psum":
        out = prog.step("psum", prog.step("add", s, b), axis_name=axis)
    elif chain == "neg_psum":
        out = prog.step("psum", prog.step("neg", s), axis_name=axis)
    elif chain == "psum_add_psum":
        out = prog.step("psum", prog.step("add", prog.step("psum", s, axis_name=axis), b),
                        axis_name=axis)
    elif chain == "ppermute_psum":
        out = prog.step("psum", prog.step("ppermute", s, axis_name=axis,
                                          perm=[[i, (i + 1) % n] for i in range(n)]),
                        axis_name=axis)
    else:
        out = prog.step(op, s, **parameters)
    prog.outputs = [out, s] if rng.random() < 0.3 else [out]
    return prog


def rule7_case(rng, index):
    """pmax / pmin of float32 / bfloat16 / float16 data with many NaNs (some all-NaN), +-inf and
    +-0.0, sometimes with axis_index_groups (pmap)."""
    dtype = str(rng.choice(FLOATS))
    kind, shape, names, axis = rule_map(rng, devices=int(rng.integers(2, MAX_DEVICES + 1)))
    n = group_size(shape, names, axis)
    op = str(rng.choice(["pmax", "pmin"]))
    parameters = {"axis_name": axis}
    if kind == "pmap" and rng.random() < 0.3:
        groups = random_groups(rng, n)
        if groups is not None:
            parameters["axis_index_groups"] = groups
    prog = Program(f"rule7_{index:03d}_{kind}_{op}_{dtype}", shape, names, kind)
    x = prog.add_input(lambda s: nan_values(rng, dtype, s),
                       [int(rng.integers(1, 3)), int(rng.integers(2, 5))])
    prog.outputs = [prog.step(op, x, **parameters)]
    return prog


RULE_CASES = {1: rule1_case, 2: rule2_case, 3: rule3_case, 4: rule4_case, 5: rule5_case,
              7: rule7_case}


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
        **({"jax_version": CASE_JAX_VERSION} if CASE_JAX_VERSION else {}),
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


def write_program(out_dir, prog, rule):
    """Writes a rule case; returns True when JAX rejects it (the case expects an error)."""
    document = {
        "format": 1,
        "name": prog.name,
        "about": f"rule {rule} (docs/jax-checklist.md); generated by backends/jax/generate_cases.py "
                 f"--rules with jax {jax.__version__}",
        **({"jax_version": CASE_JAX_VERSION} if CASE_JAX_VERSION else {}),
        "mesh": {"shape": prog.mesh_shape, "axis_names": prog.mesh_names},
        "map": prog.jmap(),
        "inputs": [save_array(out_dir, f"{prog.name}.in{k}.npy", x)
                   for k, x in enumerate(prog.inputs)],
        "body": prog.body,
        "outputs": prog.outputs,
    }
    try:
        results = [np.asarray(r) for r in prog.compiled()(*prog.inputs)]
        document["expected"] = {"outputs": [save_array(out_dir, f"{prog.name}.out{k}.npy", r)
                                             for k, r in enumerate(results)]}
    except Exception as error:  # JAX rejects the program: the case expects an error
        document["expected"] = {"error": one_line(error)}
    with open(os.path.join(out_dir, f"{prog.name}.json"), "w") as f:
        json.dump(document, f, indent=1)
    return "error" in document["expected"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write NAME.json and .npy files to")
    parser.add_argument("--count", type=int, default=200, help="how many cases")
    parser.add_argument("--seed", type=int, default=5, help="random seed")
    parser.add_argument("--rules", type=int, default=0, metavar="N",
                        help="also write N cases for each rule (1 2 3 4 5 7, named ruleR_*), each "
                             "rule from its own random stream (seed, R)")
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
    for rule in RULES if args.rules > 0 else []:
        rule_rng = np.random.default_rng([args.seed, rule])
        errors = sum(write_program(args.out, RULE_CASES[rule](rule_rng, index), rule)
                     for index in range(args.rules))
        print(f"generated {args.rules} cases for rule {rule} ({errors} expect an error)")


if __name__ == "__main__":
    main()
