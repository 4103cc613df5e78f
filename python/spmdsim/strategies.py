"""Hypothesis strategies for SPMD programs: the Python counterparts of the RapidCheck generators
in testing/generators.h and testing/collective_call_generator.h (docs/testing.md).

Meshes, axis subsets, PartitionSpecs, dtypes, shapes, arrays whose float sums depend on the order
of addition, reduction orders and collective calls JAX accepts, so a property test can compare
its own shard_map code with ``spmdsim.run_collective``::

    @given(st.data())
    def test_my_psum(data):
        mesh = data.draw(strategies.meshes(max_devices=8))
        ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError:
    raise ImportError("spmdsim.strategies needs Hypothesis: pip install hypothesis") from None

from ._collective import reduction_orders as _all_orders
from ._collective import run_collective

# Axis names drawn without repetition, JAX-like (testing/generators.h).
AXIS_NAMES = ("i", "j", "x", "y", "z", "data", "model", "batch")
FLOAT_DTYPES = ("float32", "float16", "bfloat16")
INTEGER_DTYPES = ("int32", "int8", "uint8")
ALL_DTYPES = FLOAT_DTYPES + INTEGER_DTYPES + ("bool",)


@dataclass(frozen=True)
class MeshSpec:
    """A named device mesh: ``shape`` and ``axis_names``; device ids are row-major."""

    shape: tuple[int, ...]
    axis_names: tuple[str, ...]

    @property
    def device_count(self) -> int:
        return math.prod(self.shape)

    def axis_size(self, names: Sequence[str]) -> int:
        """Devices in each group of a collective over ``names``."""
        return math.prod(self.shape[self.axis_names.index(name)] for name in names)

    def to_jax(self) -> Any:
        """The jax.sharding.Mesh over the first ``device_count`` JAX devices."""
        import jax
        devices = np.array(jax.devices()[:self.device_count]).reshape(self.shape)
        return jax.sharding.Mesh(devices, self.axis_names)


def _factorizations(devices: int, axes: int) -> list[tuple[int, ...]]:
    """Every ordered way to write ``devices`` as a product of ``axes`` positive factors."""
    if axes == 1:
        return [(devices,)]
    return [(first,) + rest for first in range(1, devices + 1) if devices % first == 0
            for rest in _factorizations(devices // first, axes - 1)]


@st.composite
def meshes(draw: Any, min_axes: int = 1, max_axes: int = 3, max_devices: int = 16) -> MeshSpec:
    """1..max_devices devices factored into min_axes..max_axes axes (size-1 axes included)."""
    devices = draw(st.integers(1, max_devices))
    axes = draw(st.integers(min_axes, max_axes))
    shape = draw(st.sampled_from(_factorizations(devices, axes)))
    names = draw(st.permutations(AXIS_NAMES))[:axes]
    return MeshSpec(tuple(shape), tuple(names))


@st.composite
def axis_subsets(draw: Any, mesh: MeshSpec, min_count: int = 1) -> tuple[str, ...]:
    """A subset of the mesh's axis names, in random order."""
    count = draw(st.integers(min_count, len(mesh.axis_names)))
    return tuple(draw(st.permutations(mesh.axis_names))[:count])


@st.composite
def partition_specs(draw: Any, mesh: MeshSpec, rank: int) -> tuple[Any, ...]:
    """PartitionSpec entries for a rank-``rank`` array: each mesh axis left out or splitting one
    dimension (several on one dimension, first-listed major); trailing None kept or dropped.
    ``jax.sharding.PartitionSpec(*entries)`` makes the JAX object."""
    per_dimension: list[list[str]] = [[] for _ in range(rank)]
    for name in draw(st.permutations(mesh.axis_names)):
        if rank and draw(st.booleans()):
            per_dimension[draw(st.integers(0, rank - 1))].append(name)
    entries: list[Any] = [None if not names else names[0] if len(names) == 1 else tuple(names)
                          for names in per_dimension]
    while entries and entries[-1] is None and draw(st.booleans()):
        entries.pop()
    return tuple(entries)


def global_shape(block: Sequence[int], spec: Sequence[Any], mesh: MeshSpec) -> tuple[int, ...]:
    """The global shape whose blocks under ``spec`` on ``mesh`` have shape ``block``."""
    shape = list(block)
    for dimension, entry in enumerate(spec):
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        shape[dimension] *= mesh.axis_size(names)
    return tuple(shape)


def dtypes(kind: str = "all") -> st.SearchStrategy[str]:
    """Dtype names: ``"float"``, ``"integer"`` or ``"all"``."""
    choices = {"float": FLOAT_DTYPES, "integer": INTEGER_DTYPES, "all": ALL_DTYPES}[kind]
    return st.sampled_from(choices)


def shapes(min_rank: int = 0, max_rank: int = 3, max_dim: int = 3) -> st.SearchStrategy:
    """Shapes of rank min_rank..max_rank with dims 1..max_dim."""
    return st.lists(st.integers(1, max_dim), min_size=min_rank, max_size=max_rank).map(tuple)


def _numpy_dtype(dtype: str) -> np.dtype:
    if dtype == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


@st.composite
def order_sensitive_arrays(draw: Any, dtype: str, shape: Sequence[int],
                           max_exponent: int = 12) -> np.ndarray:
    """An array of ``dtype`` and ``shape``: floats m * 2^k with k in [-12, max_exponent] (a sum
    folded in another order gives other bits); integers and bool uniform bit patterns.
    bfloat16 needs ml_dtypes (JAX installs it)."""
    count = math.prod(shape)
    seed = draw(st.integers(0, 2**63 - 1))
    generator = np.random.default_rng(seed)
    if dtype in FLOAT_DTYPES:
        if dtype == "float16":
            max_exponent = min(max_exponent, 7)  # 255 * 2^7 stays below float16's 65504
        mantissa = generator.integers(-255, 256, size=count).astype(np.float64)
        exponent = generator.integers(-12, max_exponent + 1, size=count)
        values = np.ldexp(mantissa, exponent)
        return values.astype(_numpy_dtype(dtype)).reshape(shape)
    if dtype == "bool":
        return generator.integers(0, 2, size=count).astype(np.bool_).reshape(shape)
    info = np.iinfo(dtype)
    return generator.integers(info.min, info.max, size=count, endpoint=True,
                              dtype=dtype).reshape(shape)


def reduction_orders(group_size: int | None = None) -> st.SearchStrategy[str]:
    """Order names whose fold is modelled (not in_switch; gloo_bcube only for a group of a power
    of two or 3 devices, where it is defined)."""
    names = [name for name in _all_orders() if name != "in_switch"]
    if group_size is not None and not (group_size & (group_size - 1) == 0 or group_size == 3):
        names.remove("gloo_bcube")
    return st.sampled_from(names)


@dataclass(frozen=True)
class CollectiveCallSpec:
    """A jax.lax collective call: op, axis_name and its parameters, with JAX's names."""

    op: str
    axis_name: tuple[str, ...]
    parameters: dict[str, Any] = field(default_factory=dict)

    def jax_fn(self) -> Any:
        """``lambda x: jax.lax.<op>(x, axis_name, **parameters)``, for a shard_map body."""
        import jax
        lax_op = getattr(jax.lax, self.op)
        return lambda x: lax_op(x, self.axis_name, **self.parameters)

    def run(self, arrays: Sequence[Any], mesh: MeshSpec, order: str = "xla_cpu",
            **options: Any) -> list[np.ndarray]:
        """Every device's result on the reference (spmdsim.run_collective)."""
        return run_collective(arrays, self.op, order, axis_name=self.axis_name,
                              mesh_shape=mesh.shape, axis_names=mesh.axis_names,
                              **self.parameters, **options)


def _valid_ops(shape: Sequence[int], group: int, dtype: str) -> list[str]:
    ops = ["psum", "pmean", "pmax", "pmin", "all_gather", "ppermute"]
    if any(size % group == 0 for size in shape) and dtype != "bool":
        ops.append("psum_scatter")
    if any(size % group == 0 for size in shape):
        ops.append("all_to_all")
    return ops


@st.composite
def _permutation_pairs(draw: Any, group: int) -> list[tuple[int, int]]:
    """ppermute's perm: (source, destination) pairs, each source and destination once."""
    destinations = draw(st.permutations(range(group)))
    sources = draw(st.lists(st.integers(0, group - 1), unique=True, max_size=group))
    return [(source, destinations[source]) for source in sorted(sources)]


@st.composite
def collective_calls(draw: Any, mesh: MeshSpec, shape: Sequence[int],
                     dtype: str = "float32") -> CollectiveCallSpec:
    """A collective call JAX accepts on a per-device operand of ``shape`` and ``dtype``: over a
    random subset of the mesh's axes, tiled and untiled forms (no axis_index_groups)."""
    axes = draw(axis_subsets(mesh))
    group = mesh.axis_size(axes)
    op = draw(st.sampled_from(_valid_ops(shape, group, dtype)))
    rank = len(shape)
    if op == "all_gather":
        tiled = rank > 0 and draw(st.booleans())
        axis = draw(st.integers(0, rank - 1 if tiled else rank))
        return CollectiveCallSpec(op, axes, {"axis": axis, "tiled": tiled})
    if op in ("psum_scatter", "all_to_all"):
        divisible = [k for k, size in enumerate(shape) if size % group == 0]
        split = draw(st.sampled_from(divisible))
        if op == "psum_scatter":
            return CollectiveCallSpec(op, axes, {"scatter_dimension": split, "tiled": True})
        concat = draw(st.integers(0, rank - 1))
        return CollectiveCallSpec(op, axes, {"split_axis": split, "concat_axis": concat,
                                             "tiled": True})
    if op == "ppermute":
        # JAX 0.12 refuses a ppermute whose axes are out of the mesh's order.
        in_mesh_order = tuple(name for name in mesh.axis_names if name in axes)
        return CollectiveCallSpec(op, in_mesh_order, {"perm": draw(_permutation_pairs(group))})
    return CollectiveCallSpec(op, axes)
