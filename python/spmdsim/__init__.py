"""spmdsim for Python: the C++ reference and simulator over NumPy arrays and jitted JAX functions.

- ``run_collective``: a jax.lax collective on one NumPy array per device, folded in a named
  reduction order (XLA:CPU's, NCCL's ring, Gloo's, Open MPI's, ...), bit for bit.
- ``conform``: conformance cases run on the reference or the simulator.
- ``estimate``: a jitted function compiled for N devices, its HLO run on a modeled machine.
- ``strategies``: Hypothesis strategies (meshes, PartitionSpecs, arrays, collective calls); needs
  ``pip install hypothesis``, imported on first use.
- ``visualize``: which device holds which block of an array, as a text grid.
- Multi-process programs (docs/multi-process.md): ``ProcessLayout``,
  ``make_array_from_process_local_data``, ``host_local_array_to_global_array``,
  ``global_array_to_host_local_array``, ``make_array_from_callback``, ``process_allgather`` (every
  host's argument at once) give a ``GlobalArray`` whose device blocks show what each host loaded;
  ``shard_map_collective`` runs a collective on it.

JAX is needed only by ``estimate``. See docs/python.md.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._collective import collective_ops, reduction_orders, run_collective
from ._conform import CaseResult, ConformReport, conform
from ._estimate import CollectiveCost, Estimate, compiled_hlo, estimate, machine_presets
from ._multi_process import (GlobalArray, ProcessLayout, global_array_to_host_local_array,
                             host_local_array_to_global_array, make_array_from_callback,
                             make_array_from_process_local_data, process_allgather,
                             shard_map_collective)
from ._sharding import visualize

__all__ = [
    "CaseResult", "CollectiveCost", "ConformReport", "Estimate", "GlobalArray", "ProcessLayout",
    "collective_ops", "compiled_hlo", "conform", "estimate", "global_array_to_host_local_array",
    "host_local_array_to_global_array", "machine_presets", "make_array_from_callback",
    "make_array_from_process_local_data", "process_allgather", "reduction_orders",
    "run_collective", "shard_map_collective", "strategies", "visualize",
]


def __getattr__(name: str) -> Any:
    """``spmdsim.strategies`` is imported when first used: it needs Hypothesis."""
    if name == "strategies":
        return importlib.import_module(".strategies", __name__)
    raise AttributeError(f"module 'spmdsim' has no attribute {name!r}")
