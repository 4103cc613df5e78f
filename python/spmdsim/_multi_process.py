"""JAX's multi-process (multi-host) array API, every process at once (docs/python.md,
docs/multi-process.md).

In JAX each host calls ``jax.make_array_from_process_local_data`` (or
``host_local_array_to_global_array``, ``make_array_from_callback``) with its own data; here one
call takes every process's argument, indexed by process, and returns the ``GlobalArray`` the
devices then hold. Replicas of a block may differ where hosts loaded different data, as in JAX;
``GlobalArray.device_blocks()`` shows what each device holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from ._arrays import WireArray, from_wire, to_wire
from ._collective import _axis_list, _request
from ._sharding import _spec_entries


class ProcessLayout:
    """Which process (host) owns which mesh devices: ``local_devices[p]`` is process p's device
    ids (row-major over the mesh shape). Every device belongs to exactly one process and every
    process has at least one device, else ValueError naming ``processes``."""

    def __init__(self, local_devices: Sequence[Sequence[int]]):
        try:
            devices = [[int(device) for device in process] for process in local_devices]
        except TypeError:
            raise ValueError(f"processes: {local_devices!r}, expected a list of each process's "
                             "device ids") from None
        count = sum(len(process) for process in devices)
        self._local_devices = [list(p) for p in _core.checked_processes(devices, count)]

    @classmethod
    def contiguous(cls, process_count: int, device_count: int) -> "ProcessLayout":
        """``process_count`` processes of equal size, each a run of consecutive ids (what
        ``jax.devices()`` on that many hosts, reshaped into the mesh, gives)."""
        if process_count < 1 or device_count % process_count != 0:
            raise ValueError(f"process_count: {process_count}, expected a positive divisor of "
                             f"the {device_count} devices")
        size = device_count // process_count
        return cls([list(range(p * size, (p + 1) * size)) for p in range(process_count)])

    @property
    def process_count(self) -> int:
        """``jax.process_count()``."""
        return len(self._local_devices)

    @property
    def device_count(self) -> int:
        return sum(len(devices) for devices in self._local_devices)

    def process_index(self, device: int) -> int:
        """The process owning ``device`` (``Device.process_index``)."""
        for process, devices in enumerate(self._local_devices):
            if device in devices:
                return process
        raise ValueError(f"device: {device}, expected a device id 0 to {self.device_count - 1}")

    def local_devices(self, process: int) -> list[int]:
        """Process ``process``'s devices in ascending id order (``jax.local_devices()``)."""
        if not 0 <= process < self.process_count:
            raise ValueError(f"process: {process}, expected 0 to {self.process_count - 1}")
        return list(self._local_devices[process])

    def as_lists(self) -> list[list[int]]:
        return [list(devices) for devices in self._local_devices]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProcessLayout) and self._local_devices == other._local_devices

    def __repr__(self) -> str:
        return f"ProcessLayout({self._local_devices})"


def _layout(processes: ProcessLayout | Sequence[Sequence[int]]) -> ProcessLayout:
    return processes if isinstance(processes, ProcessLayout) else ProcessLayout(processes)


def _mesh(mesh_shape: Sequence[int], axis_names: Sequence[str]) -> "_core.MeshRequest":
    mesh = _core.MeshRequest()
    try:
        mesh.mesh_shape = [int(size) for size in mesh_shape]
    except TypeError:
        raise ValueError(f"mesh_shape: {mesh_shape!r}, expected a sequence of ints") from None
    mesh.axis_names = [str(name) for name in axis_names]
    return mesh


def _spec(spec: Any, argument: str) -> list[list[str]]:
    """A PartitionSpec as axis-name lists, errors naming ``argument``."""
    try:
        return _spec_entries(spec)
    except ValueError as error:
        raise ValueError(f"{argument}{str(error).removeprefix('spec')}") from None
    except TypeError:
        raise ValueError(f"{argument}: {spec!r}, expected a PartitionSpec or a tuple of None, "
                         "axis names or tuples of them") from None


def _spec_tuple(entries: Sequence[Sequence[str]]) -> tuple:
    """Axis-name lists back as a PartitionSpec-like tuple: None, 'x' or ('x', 'y')."""
    return tuple(None if not e else e[0] if len(e) == 1 else tuple(e) for e in entries)


def _naming(argument: str, named: Sequence[str], call: Callable[[], Any]) -> Any:
    """``call()``, a ValueError that names none of ``named`` first prefixed with ``argument``."""
    try:
        return call()
    except ValueError as error:
        message = str(error)
        if any(message.startswith(name) for name in named):
            raise
        raise ValueError(f"{argument}: {message}") from None


def _per_process(values: Sequence[Any], layout: ProcessLayout, argument: str) -> list[Any]:
    values = list(values)
    if len(values) != layout.process_count:
        raise ValueError(f"{argument}: {len(values)} entries, expected one per process "
                         f"({layout.process_count})")
    return values


@dataclass(frozen=True, eq=False)
class GlobalArray:
    """A ``jax.Array`` as its devices hold it: the global shape, dtype, PartitionSpec, the mesh
    and its processes, and each device's block (by device id, row-major over the mesh)."""

    shape: tuple[int, ...]
    spec: tuple
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    processes: ProcessLayout
    _wire: tuple[list[int], list[list[str]], list[WireArray]]

    @property
    def dtype(self) -> np.dtype:
        return self.device_blocks()[0].dtype

    def device_blocks(self) -> list[np.ndarray]:
        """Each device's block, by device id (``[s.data for s in array.addressable_shards]``
        gathered over every process)."""
        return [from_wire(block) for block in self._wire[2]]

    def process_blocks(self, process: int) -> dict[int, np.ndarray]:
        """The blocks process ``process``'s devices hold, by device id."""
        blocks = self._wire[2]
        return {d: from_wire(blocks[d]) for d in self.processes.local_devices(process)}

    def value(self) -> np.ndarray:
        """The global value, each block read from its first holder in device id order, as
        ``np.asarray`` and ``process_allgather(x, tiled=True)`` read it."""
        return from_wire(_core.global_value(self._mesh(), self._wire))

    def _mesh(self) -> "_core.MeshRequest":
        return _mesh(self.mesh_shape, self.axis_names)


def _global(wire: Any, mesh: "_core.MeshRequest", layout: ProcessLayout) -> GlobalArray:
    shape, spec, blocks = wire
    return GlobalArray(shape=tuple(shape), spec=_spec_tuple(spec),
                       mesh_shape=tuple(mesh.mesh_shape), axis_names=tuple(mesh.axis_names),
                       processes=layout, _wire=(list(shape), [list(e) for e in spec], blocks))


def _check_global(array: Any, argument: str) -> GlobalArray:
    if not isinstance(array, GlobalArray):
        raise ValueError(f"{argument}: a {type(array).__name__}, expected a spmdsim.GlobalArray")
    return array


def make_array_from_process_local_data(mesh_shape: Sequence[int], axis_names: Sequence[str],
                                       spec: Any,
                                       processes: ProcessLayout | Sequence[Sequence[int]],
                                       local_data: Sequence[Any],
                                       global_shape: Sequence[int] | None = None) -> GlobalArray:
    """``jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local_data[p],
    global_shape)`` run on every process p.

    Args:
      mesh_shape, axis_names, spec: the sharding (``spec`` a PartitionSpec or a tuple).
      processes: a ``ProcessLayout``, or each process's device ids.
      local_data: one array per process: along each dimension either the global size (each
        device reads its slice) or the size of the distinct blocks its devices address.
      global_shape: inferred from the data, as JAX does, when the sharding is uniform.

    Raises:
      ValueError: one line naming the argument (``local_data[1]: shape (3, 3), expected 8 or 4
        in dimension 0 ...``).
    """
    layout = _layout(processes)
    mesh = _mesh(mesh_shape, axis_names)
    wires = [to_wire(data, None, f"local_data[{p}]")
             for p, data in enumerate(_per_process(local_data, layout, "local_data"))]
    shape = None if global_shape is None else [int(size) for size in global_shape]
    return _global(_core.make_array_from_process_local_data(
        mesh, _spec(spec, "sharding"), layout.as_lists(), wires, shape), mesh, layout)


def host_local_array_to_global_array(local_inputs: Sequence[Any], mesh_shape: Sequence[int],
                                     axis_names: Sequence[str], pspecs: Any,
                                     processes: ProcessLayout | Sequence[Sequence[int]]
                                     ) -> GlobalArray:
    """``multihost_utils.host_local_array_to_global_array(local_inputs[p], mesh, pspecs)`` on
    every process p: each process's array is laid over its local mesh (the subcube of the mesh
    its devices form) by ``pspecs``."""
    layout = _layout(processes)
    mesh = _mesh(mesh_shape, axis_names)
    wires = [to_wire(data, None, f"local_inputs[{p}]")
             for p, data in enumerate(_per_process(local_inputs, layout, "local_inputs"))]
    return _global(_naming("processes", ("local_inputs", "pspecs", "mesh_shape", "processes"),
                           lambda: _core.host_local_array_to_global_array(
                               mesh, _spec(pspecs, "pspecs"), layout.as_lists(), wires)),
                   mesh, layout)


def global_array_to_host_local_array(global_inputs: GlobalArray, mesh_shape: Sequence[int],
                                     axis_names: Sequence[str], pspecs: Any) -> list[np.ndarray]:
    """``multihost_utils.global_array_to_host_local_array(global_inputs, mesh, pspecs)``: each
    process's host-local array, by process (the array's own processes)."""
    array = _check_global(global_inputs, "global_inputs")
    mesh = _mesh(mesh_shape, axis_names)
    if (tuple(mesh.mesh_shape), tuple(mesh.axis_names)) != (array.mesh_shape, array.axis_names):
        raise ValueError(
            f"mesh_shape: {tuple(mesh.mesh_shape)} {tuple(mesh.axis_names)}, expected the "
            f"array's mesh {array.mesh_shape} {array.axis_names}")
    host_locals = _naming("global_inputs", ("pspecs", "mesh_shape"),
                      lambda: _core.global_array_to_host_local_array(
                          mesh, _spec(pspecs, "pspecs"), array.processes.as_lists(), array._wire))
    return [from_wire(local) for local in host_locals]


def make_array_from_callback(shape: Sequence[int], mesh_shape: Sequence[int],
                             axis_names: Sequence[str], spec: Any,
                             processes: ProcessLayout | Sequence[Sequence[int]],
                             data_callback: Callable[[tuple[slice, ...]], Any]
                             | Sequence[Callable[[tuple[slice, ...]], Any]]) -> GlobalArray:
    """``jax.make_array_from_callback(shape, NamedSharding(mesh, spec), data_callback)`` on every
    process: each process calls its callback with the index (a tuple of slices) of each of its
    devices' blocks. ``data_callback`` is one callable for every process, or one per process
    (hosts whose data differ)."""
    layout = _layout(processes)
    mesh = _mesh(mesh_shape, axis_names)
    callbacks = (list(data_callback) if isinstance(data_callback, (list, tuple))
                 else [data_callback] * layout.process_count)
    callbacks = _per_process(callbacks, layout, "data_callback")

    def block(process: int, index: list[tuple[int, int]]) -> WireArray:
        slices = tuple(slice(start, stop) for start, stop in index)
        return to_wire(callbacks[process](slices), None, f"data_callback (process {process})")

    try:
        shape_list = [int(size) for size in shape]
    except TypeError:
        raise ValueError(f"shape: {shape!r}, expected a sequence of ints") from None
    return _global(_core.make_array_from_callback(
        mesh, shape_list, _spec(spec, "sharding"), layout.as_lists(), block), mesh, layout)


def process_allgather(in_tree: GlobalArray | Sequence[Any], tiled: bool = False, *,
                      processes: ProcessLayout | Sequence[Sequence[int]] | None = None
                      ) -> np.ndarray:
    """``multihost_utils.process_allgather(in_tree, tiled)``: what every process gets.

    ``in_tree`` is a ``GlobalArray`` (across several processes only ``tiled=True``, giving its
    global value) or one host value per process with ``processes=`` (stacked on a new axis 0,
    or concatenated along axis 0 when ``tiled``).
    """
    if isinstance(in_tree, GlobalArray):
        if not tiled and in_tree.processes.process_count > 1:
            raise ValueError(
                "tiled: False, expected True for a GlobalArray across processes (JAX: "
                "ValueError: Gathering global non-fully-addressable arrays only supports "
                "tiled=True)")
        return from_wire(_core.process_allgather_global(
            in_tree._mesh(), in_tree.processes.as_lists(), in_tree._wire, bool(tiled)))
    if processes is None:
        raise ValueError("processes: None with host values, expected the ProcessLayout (or each "
                         "process's device ids) the values come from")
    layout = _layout(processes)
    wires = [to_wire(value, None, f"in_tree[{p}]")
             for p, value in enumerate(_per_process(in_tree, layout, "in_tree"))]
    return from_wire(_core.process_allgather_values(layout.as_lists(), wires, bool(tiled)))


def shard_map_collective(x: GlobalArray, op: str, *, axis_name: str | Sequence[str],
                         out_specs: Any, in_specs: Any = None, order: str = "gloo_ring",
                         ring: Sequence[int] = (), check_vma: bool = True,
                         **parameters: Any) -> GlobalArray:
    """``shard_map(lambda b: jax.lax.<op>(b, axis_name, ...), mesh, in_specs, out_specs)(x)``:
    each device runs the collective on the block it holds, so replicas that hosts loaded
    differently change the result as in JAX.

    Args:
      x: the global array; resharded from its value first where ``in_specs`` differs from its
        spec (default: its spec).
      op, axis_name, **parameters: the collective, as ``run_collective`` takes it.
      out_specs: the output's PartitionSpec.
      order: the reduction order float sums fold in; ``"gloo_ring"`` is multi-process JAX on CPU.
      check_vma: JAX's shard_map check that outputs are replicated where out_specs say so.
    """
    array = _check_global(x, "x")
    request = _core.ShardMapCollectiveRequest()
    request.in_spec = _spec(array.spec if in_specs is None else in_specs, "in_specs")
    request.out_spec = _spec(out_specs, "out_specs")
    request.check_vma = bool(check_vma)
    request.order = order
    request.ring = [int(device) for device in ring]
    mesh = array._mesh()
    collective = _request(op, _axis_list(axis_name), dict(parameters))
    try:
        wire = _core.shard_map_collective(mesh, array._wire, collective, request)
    except ValueError as error:
        message = str(error)
        named = ("op", "in_specs", "out_specs", "order", "ring")
        if any(message.startswith(name) for name in named):
            raise
        # The collective's checks quote JAX; name the argument they are about.
        argument = ("out_specs" if "out_specs" in message
                    else "axis_name" if "axis name" in message else "op")
        raise ValueError(f"{argument}: {message}") from None
    return _global(wire, mesh, array.processes)
