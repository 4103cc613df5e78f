"""docs/python.md's multi-process example: two hosts of two devices each load float32[8,3] under
P('x') with make_array_from_process_local_data; when both load rows 0-3 (a data-loading bug) the
psum changes, as in multi-process JAX (tests/conformance/multi_process_cases)."""

import numpy as np
from jax.sharding import PartitionSpec as P

import spmdsim

ROWS = np.arange(-7, 29, 1.5, dtype=np.float32).reshape(8, 3)  # the cases' global input
HOSTS = spmdsim.ProcessLayout([[0, 1], [2, 3]])


def psum_of(local_data: list[np.ndarray]) -> tuple[spmdsim.GlobalArray, np.ndarray]:
    x = spmdsim.make_array_from_process_local_data([4], ["x"], P("x"), HOSTS, local_data)
    total = spmdsim.shard_map_collective(x, "psum", axis_name="x", out_specs=P())
    return x, total.value()


def main() -> None:
    _, right = psum_of([ROWS[0:4], ROWS[4:8]])
    x, wrong = psum_of([ROWS[0:4], ROWS[0:4]])
    print("hosts load their own rows, psum:", right.tolist())
    print("both hosts load rows 0-3,  psum:", wrong.tolist())
    for device, block in enumerate(x.device_blocks()):
        print(f"device {device} (process {HOSTS.process_index(device)}) holds", block.tolist())


if __name__ == "__main__":
    main()
