"""spmdsim.run_collective: one jax.lax collective on NumPy arrays, one per device, folded in a
named reduction order by the C++ reference (docs/python.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from ._arrays import from_wire, to_wire


def _axis_list(axis_name: str | Sequence[str]) -> list[str]:
    """``'i'`` or ``('x', 'y')`` as a list of names."""
    return [axis_name] if isinstance(axis_name, str) else list(axis_name)


def _mesh(device_count: int, mesh_shape: Sequence[int] | None,
          axis_names: Sequence[str] | None, axes: list[str]) -> tuple[list[int], list[str]]:
    """The mesh: given, or one axis over every device named as the collective's axis."""
    if mesh_shape is None and axis_names is None:
        if len(axes) != 1:
            raise ValueError(
                f"mesh_shape: None with axis_name {tuple(axes)}, expected mesh_shape and "
                "axis_names for a collective over several axes")
        return [device_count], axes
    if mesh_shape is None or axis_names is None:
        raise ValueError(
            f"mesh_shape: {mesh_shape!r} with axis_names {axis_names!r}, expected both or neither")
    return [int(size) for size in mesh_shape], [str(name) for name in axis_names]


def _request(op: str, axes: list[str], options: dict[str, Any]) -> "_core.CollectiveRequest":
    """The collective's parameters, with JAX's names (scatter_dimension is psum_scatter's axis)."""
    request = _core.CollectiveRequest()
    request.op = op
    request.axes = axes
    groups = options.pop("axis_index_groups", None)
    request.axis_index_groups = None if groups is None else [list(g) for g in groups]
    request.axis = int(options.pop("axis", options.pop("scatter_dimension", 0)))
    request.tiled = bool(options.pop("tiled", False))
    request.split_axis = int(options.pop("split_axis", 0))
    request.concat_axis = int(options.pop("concat_axis", 0))
    perm = options.pop("perm", ())
    if op == "pshuffle":
        request.shuffle = [int(source) for source in perm]
    else:
        request.perm = [(int(source), int(destination)) for source, destination in perm]
    if options:
        raise ValueError(
            f"{next(iter(options))}: not a parameter of {op}, expected axis_index_groups, axis, "
            "scatter_dimension, tiled, split_axis, concat_axis or perm")
    return request


def run_collective(arrays: Sequence[Any], op: str, order: str = "nccl_ring", *,
                   axis_name: str | Sequence[str] = "i",
                   mesh_shape: Sequence[int] | None = None,
                   axis_names: Sequence[str] | None = None,
                   ring: Sequence[int] = (),
                   dtype: str | None = None,
                   nccl_chunk_bytes: int | None = None,
                   gloo_max_segment_bytes: int | None = None,
                   torus_dims: Sequence[int] = (),
                   jax_version: str = "0.12",
                   **parameters: Any) -> list[np.ndarray]:
    """Every device's result of ``jax.lax.<op>`` over ``axis_name``, computed by the reference.

    Args:
      arrays: one array per device (device id = row-major index over the mesh), one dtype and
        shape on all.
      op: psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute or pshuffle.
      order: the reduction order float sums fold in (``reduction_orders()``; ``"xla_cpu"`` is
        what JAX on CPU computes, ``"nccl_ring"`` NCCL's ring, ...).
      axis_name: the mesh axis, or a tuple of them, the collective runs over.
      mesh_shape, axis_names: the mesh; by default one axis, ``axis_name``, over every array.
      ring: the order's ring as device ids (default 0, 1, ..., n-1).
      dtype: ``"bfloat16"`` to pass uint16 bit patterns as bfloat16.
      nccl_chunk_bytes, gloo_max_segment_bytes, torus_dims: the order's parameters
        (docs/reduction-orders.md).
      jax_version: whose rules the call is checked by: ``"0.12"`` (today's JAX) or ``"0.10"``
        (docs/jax-differences.md: e.g. 0.10 refuses a negative scatter_dimension).
      **parameters: the collective's own, with JAX's names: axis_index_groups, axis, tiled,
        scatter_dimension, split_axis, concat_axis, perm.

    Returns:
      One NumPy array per device, bit for bit what the order gives (bfloat16 as ml_dtypes'
      bfloat16 where ml_dtypes is installed, else uint16 bit patterns).

    Raises:
      ValueError: one line naming the argument, its value and what was expected.
    """
    axes = _axis_list(axis_name)
    shape, names = _mesh(len(arrays), mesh_shape, axis_names, axes)
    wires = [to_wire(array, dtype, f"arrays[{k}]") for k, array in enumerate(arrays)]
    results = _core.run_collective(
        wires, _request(op, axes, dict(parameters)), shape, names, order,
        [int(device) for device in ring], nccl_chunk_bytes, gloo_max_segment_bytes,
        [int(size) for size in torus_dims], jax_version)
    return [from_wire(result) for result in results]


def reduction_orders() -> list[str]:
    """The reduction order names run_collective takes."""
    return list(_core.reduction_order_names())


def collective_ops() -> list[str]:
    """The collectives run_collective runs."""
    return list(_core.collective_op_names())
