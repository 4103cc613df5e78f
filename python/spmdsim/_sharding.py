"""spmdsim.visualize: which device holds which block of an array, as a text grid (the
counterpart of ``jax.debug.visualize_array_sharding``; ``spmdsim sharding`` on the command
line)."""

from __future__ import annotations

from typing import Any, Sequence

from . import _core


def _spec_entries(spec: Any) -> list[list[str]]:
    """A PartitionSpec (JAX's, or a tuple of None / axis name / tuple of names) as lists of
    axis names per dimension."""
    entries: list[list[str]] = []
    for position, entry in enumerate(tuple(spec)):
        if entry is None:
            entries.append([])
        elif isinstance(entry, str):
            entries.append([entry])
        elif isinstance(entry, (tuple, list)) and all(isinstance(name, str) for name in entry):
            entries.append(list(entry))
        else:
            raise ValueError(f"spec: entry {position} is {entry!r}, expected None, an axis name "
                             "or a tuple of axis names")
    return entries


def _from_jax_array(array: Any) -> tuple[list[int], list[str], Any, list[int]]:
    """The mesh shape, axis names, spec and shape of a JAX array with a NamedSharding."""
    sharding = array.sharding
    if not hasattr(sharding, "mesh") or not hasattr(sharding, "spec"):
        raise ValueError(f"array: its sharding is {type(sharding).__name__}, expected a "
                         "NamedSharding (a mesh and a PartitionSpec)")
    mesh = sharding.mesh
    return (list(mesh.devices.shape), list(mesh.axis_names), sharding.spec, list(array.shape))


def visualize(array_or_shape: Any, spec: Any = None, *, mesh_shape: Sequence[int] | None = None,
              axis_names: Sequence[str] | None = None) -> str:
    """The blocks of a rank-1 or rank-2 array and the devices holding each, as a text grid.

    Args:
      array_or_shape: a JAX array with a NamedSharding (its mesh, spec and shape are used), or
        the global array's shape.
      spec: with a shape, the PartitionSpec (JAX's, or a tuple such as ``("data", None)``).
      mesh_shape, axis_names: with a shape, the mesh.

    Returns:
      The grid's text, one box per block labelled with the mesh positions (row-major, as
      ``spmdsim sharding`` numbers devices) that hold it.

    Raises:
      ValueError: one line naming the argument, its value and what was expected (a spec longer
        than the array's rank, an axis the mesh lacks, a dimension its axes do not divide).
    """
    if hasattr(array_or_shape, "sharding") and hasattr(array_or_shape, "shape"):
        mesh_shape, axis_names, spec, shape = _from_jax_array(array_or_shape)
    else:
        if spec is None or mesh_shape is None or axis_names is None:
            raise ValueError("array_or_shape: a shape, expected spec=, mesh_shape= and "
                             "axis_names= beside it (or a JAX array with a NamedSharding)")
        try:
            shape = [int(size) for size in array_or_shape]
        except TypeError:
            raise ValueError(f"array_or_shape: {array_or_shape!r}, expected a JAX array or a "
                             "shape (a sequence of ints)") from None
    return _core.sharding_text([int(size) for size in mesh_shape], [str(n) for n in axis_names],
                               _spec_entries(spec), shape)
