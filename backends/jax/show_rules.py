#!/usr/bin/env python3
"""Prints the bits JAX gives for the small programs that docs/jax-checklist.md cites for each
JAX / XLA:CPU rule (R1-R7). pmap over the first devices; floats as hex bit patterns.

Usage: show_rules.py  (needs XLA_FLAGS=--xla_force_host_platform_device_count=8, set here if
absent; with --x64 it shows the float64 lines only, under jax_enable_x64)
"""

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

lax = jax.lax
bf16, f16, f32 = jnp.bfloat16, np.float16, np.float32


def bits(a):
    a = np.asarray(a)
    view = {2: np.uint16, 4: np.uint32, 8: np.uint64}
    if a.dtype.kind == "f" or a.dtype == bf16:
        return " ".join(f"0x{v:0{2 * a.itemsize}x}" for v in a.view(view[a.itemsize]).ravel())
    return " ".join(str(v) for v in a.ravel().tolist()) + f" ({a.dtype})"


def show(label, run):
    try:
        result = run()
        text = "; ".join(bits(r) for r in result) if isinstance(result, tuple) else bits(result)
    except Exception as error:
        text = f"{type(error).__name__}: {str(error).splitlines()[0][:110]}"
    print(f"{label}: {text}")


def pm(f, n):
    """pmap over the first n devices; results come back as NumPy arrays, so that indexing them
    runs no XLA computation (slicing a jax.Array does, and flushes its subnormals)."""
    run = jax.pmap(f, "i", devices=jax.devices()[:n])
    return lambda *args: jax.tree.map(np.asarray, run(*args))


def rows(values, dtype):
    return np.array(values, dtype=dtype).reshape(len(values), 1)


def main():
    if "--x64" in sys.argv:
        jax.config.update("jax_enable_x64", True)
        x = rows([5e-324, 5e-324], np.float64)
        show("R3 float64 psum [5e-324, 5e-324]", lambda: pm(lambda v: lax.psum(v, "i"), 2)(x))
        show("R3 float64 add(x, x), x = 5e-324", lambda: pm(lambda a, b: a + b, 2)(x, x))
        show("R3 float64 all_gather [5e-324, 5e-324] (device 0)",
             lambda: pm(lambda v: lax.all_gather(v, "i"), 2)(x)[:1])
        return
    x = rows([10, 11, 12, 13], f32)
    for perm in ([(-1, 0)], [(1, 4)], [(-5, 0)], [(-1, 0), (3, 1)]):
        show(f"R1 ppermute {perm} of [10, 11, 12, 13]",
             lambda: pm(lambda v: lax.ppermute(v, "i", perm), 4)(x))
    for perm in ([-1, 0, 1, 2], [0, 1, 2, 4], [0, 1, 2]):
        show(f"R1 pshuffle {perm} of [10, 11, 12, 13]",
             lambda: pm(lambda v: lax.pshuffle(v, "i", perm), 4)(x))

    b = np.array([[True, False]] * 3 + [[False, False]])
    for op in ("psum", "pmean", "pmax", "pmin"):
        show(f"R2 bool {op} of rows [T F] [T F] [T F] [F F]",
             lambda: pm(lambda v: getattr(lax, op)(v, "i"), 4)(b)[0])
    show("R2 bool psum_scatter", lambda: pm(lambda v: lax.psum_scatter(v, "i"), 2)(b[:2]))

    tiny = rows([1e-45, 1e-45], f32)
    show("R3 float32 psum [1e-45, 1e-45]", lambda: pm(lambda v: lax.psum(v, "i"), 2)(tiny))
    show("R3 float32 pmax [1e-45, 3e-45]",
         lambda: pm(lambda v: lax.pmax(v, "i"), 2)(rows([1e-45, 3e-45], f32)))
    show("R3 float32 pmin [-1e-45, 1.0]",
         lambda: pm(lambda v: lax.pmin(v, "i"), 2)(rows([-1e-45, 1.0], f32)))
    show("R3 float32 add(1.5e-38, -1.4e-38) (a subnormal result)",
         lambda: pm(lambda a, c: a + c, 1)(rows([1.5e-38], f32), rows([-1.4e-38], f32)))
    show("R3 float32 mul(1e-45, 1.0), both inputs",
         lambda: pm(lambda a, c: a * c, 1)(rows([1e-45], f32), rows([1.0], f32)))
    show("R3 float32 x * ones_like(x), x = 1e-45",
         lambda: pm(lambda a: a * jnp.ones_like(a), 1)(rows([1e-45], f32)))
    show("R3 bfloat16 psum [1e-39, 1e-39]",
         lambda: pm(lambda v: lax.psum(v, "i"), 2)(rows([1e-39, 1e-39], bf16)))
    show("R3 float16 psum [6e-8, 6e-8]",
         lambda: pm(lambda v: lax.psum(v, "i"), 2)(rows([6e-8, 6e-8], f16)))
    show("R3 float32 all_gather / neg of [1e-45, 1e-45] (device 0)",
         lambda: tuple(r[:1] for r in pm(lambda v: (lax.all_gather(v, "i"), -v), 2)(tiny)))
    show("R3 float32 1e-39 converted to bfloat16",
         lambda: pm(lambda v: v.astype(bf16), 1)(rows([1e-39], f32)))

    edge = rows([-0.0, 1e-45, np.nan, -1e-45], f32)
    singles = [[0], [1], [2], [3]]
    for op in ("psum", "pmean", "pmax", "pmin", "psum_scatter"):
        show(f"R4 {op} groups {singles} of [-0.0, 1e-45, NaN, -1e-45]",
             lambda: pm(lambda v: getattr(lax, op)(v, "i", axis_index_groups=singles), 4)(edge))
    mesh = Mesh(np.array(jax.devices()[:2]).reshape(2, 1), ("x", "y"))
    for op in ("psum", "pmax"):
        show(f"R4 shard_map mesh (2, 1): {op} over 'y' of [-0.0, NaN]",
             lambda: np.asarray(jax.jit(jax.shard_map(
                 lambda v: getattr(lax, op)(v, "y"), mesh=mesh, in_specs=P("x"),
                 out_specs=P("x")))(np.array([-0.0, np.nan], f32))))
    one = np.array([[-0.0, np.nan, 1e-45, -1e-45]], f32)
    for op in ("psum", "pmax"):
        show(f"R4 pmap over 1 device: {op} of [-0.0, NaN, 1e-45, -1e-45]",
             lambda: pm(lambda v: getattr(lax, op)(v, "i"), 1)(one))
    show("R4 pmap over 1 device: psum_scatter (tiled) of [-0.0, NaN, 1e-45, -1e-45]",
         lambda: pm(lambda v: lax.psum_scatter(v, "i", tiled=True), 1)(one))

    a, c = rows([256, -256], bf16), rows([1, 0], bf16)
    chains = {
        "psum(a + b)": lambda a, c: lax.psum(a + c, "i"),
        "pmean(a + b)": lambda a, c: lax.pmean(a + c, "i"),
        "psum(a - (-b))": lambda a, c: lax.psum(a - (-c), "i"),
        "all_gather(a + b)": lambda a, c: lax.all_gather(a + c, "i"),
        "pmax(a + b)": lambda a, c: lax.pmax(a + c, "i"),
        "a + b": lambda a, c: a + c,
        "convert(a + b, float32)": lambda a, c: (a + c).astype(f32),
        "convert(a + b, float16)": lambda a, c: (a + c).astype(f16),
        "psum(convert(a + b, bfloat16))": lambda a, c: lax.psum((a + c).astype(bf16), "i"),
        "psum((a + b) + b)": lambda a, c: lax.psum((a + c) + c, "i"),
        "psum(-(a + b))": lambda a, c: lax.psum(-(a + c), "i"),
        "psum(ppermute(a + b))": lambda a, c: lax.psum(lax.ppermute(a + c, "i", [(0, 1), (1, 0)]),
                                                       "i"),
    }
    for label, f in chains.items():
        show(f"R5 bfloat16 a = [256, -256], b = [1, 0]: {label} (device 0)",
             lambda: pm(f, 2)(a, c)[0])
    m = rows([1 + 2 ** -7, -1.0], bf16), rows([1 + 2 ** -7, 1 + 2 ** -6], bf16)
    show("R5 bfloat16 a = [1 + 2^-7, -1], b = [1 + 2^-7, 1 + 2^-6]: psum(a * b) (device 0)",
         lambda: pm(lambda a, c: lax.psum(a * c, "i"), 2)(*m)[0])

    for values in ([np.nan, 1.0, np.nan, 2.0], [np.nan] * 4):
        show(f"R7 pmax / pmin of {values} (device 0)",
             lambda: tuple(r[0] for r in pm(lambda v: (lax.pmax(v, "i"), lax.pmin(v, "i")), 4)(
                 rows(values, f32))))


if __name__ == "__main__":
    main()
