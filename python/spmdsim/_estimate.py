"""spmdsim.estimate: a jitted JAX function compiled for N devices and its HLO run on a simulated
machine by the C++ HLO import (docs/hlo-import.md), without data: step time, memory, collectives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _compile, _core


@dataclass(frozen=True)
class CollectiveCost:
    """One collective of the step, as the simulator timed it (one per trip of a loop)."""

    op: str            # jax.lax name: psum, all_gather, psum_scatter, all_to_all, ppermute, ...
    dtype: str
    bytes: int         # nccl-tests' S: input per rank (all_gather: the gathered output)
    time_s: float
    groups: int        # replica groups it ran as
    group_size: int
    call: str          # "psum('devices', axis_index_groups=...)"
    shape: str
    algorithm: str
    busbw_bytes_per_s: float
    # (low, high) seconds from the spread of the collective timing's errors on published
    # nccl-tests runs of its kind (GPU generation, one node or several); None on a machine file
    # without a fabric.
    time_range_s: tuple[float, float] | None


@dataclass(frozen=True)
class Estimate:
    """What one step of the compiled program costs on the machine."""

    module: str
    machine: str
    devices: int
    step_time_s: float
    # (low, high) seconds: the collectives' ranges as far as their time is exposed; the compute
    # as the model gives it.
    step_time_range_s: tuple[float, float]
    compute_s: float
    exposed_communication_s: float
    memory_peak_bytes: int
    memory_per_device_bytes: int
    collectives: list[CollectiveCost]


def _device_count() -> int:
    import jax
    return jax.device_count()


def _hlo_text(fn: Any, args: tuple[Any, ...], devices: int, timeout_s: float) -> str:
    """The compiled module: here when this process has the devices, else in a child."""
    if _device_count() >= devices:
        return _compile.compile_in_process(fn, args)
    return _compile.compile_in_child(fn, args, devices, timeout_s)


def compiled_hlo(fn: Any, *args: Any, devices: int = 64, timeout_s: float = 600) -> str:
    """The SPMD-partitioned HLO text XLA compiles ``fn(*args)`` to on ``devices`` devices."""
    _compile.check_jitted(fn)
    if not isinstance(devices, int) or devices < 1:
        raise ValueError(f"devices: {devices!r}, expected a positive integer")
    return _hlo_text(fn, args, devices, timeout_s)


def estimate(fn: Any, *args: Any, machine: str = "hgx-h100", devices: int = 64,
             compute_efficiency: float | None = None, memory_efficiency: float | None = None,
             algorithm: str | None = None, timeout_s: float = 600) -> Estimate:
    """Compiles the jitted ``fn`` for ``devices`` devices and runs one step on ``machine``.

    Args:
      fn: a ``jax.jit`` function whose mesh has ``devices`` devices.
      *args: its arguments: arrays or ``jax.ShapeDtypeStruct`` (in tuples, lists, dicts); only
        their shapes and dtypes matter.
      machine: a preset (``machine_presets()``) or a machine file.
      devices: the device count to compile for and to simulate.
      compute_efficiency, memory_efficiency: the fractions of peak FLOP/s and memory bandwidth
        the HLO's ops reach (defaults: docs/hlo-import.md).
      algorithm: one collective algorithm for every collective (default: the machine's choice).
      timeout_s: how long a child compile may take.

    Raises:
      ValueError: one line naming the argument: fn not jitted or not compilable, devices that
        the program's mesh does not have, an unknown machine or algorithm.
    """
    hlo_text = compiled_hlo(fn, *args, devices=devices, timeout_s=timeout_s)
    options: dict[str, Any] = {"algorithm": algorithm}
    if compute_efficiency is not None:
        options["compute_efficiency"] = compute_efficiency
    if memory_efficiency is not None:
        options["memory_efficiency"] = memory_efficiency
    result = _core.estimate_hlo(hlo_text, machine, devices, **options)
    result["collectives"] = [CollectiveCost(**entry) for entry in result["collectives"]]
    return Estimate(**result)


def machine_presets() -> list[str]:
    """The machine presets estimate takes by name (docs/machine-presets.md)."""
    return list(_core.machine_preset_names())
