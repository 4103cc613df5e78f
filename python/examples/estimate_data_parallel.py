"""docs/python.md's estimate example: a data-parallel matmul step, its gradient-like product
psum'd over every device, estimated on 64 H100s (8 HGX nodes) from one CPU process.

    python python/examples/estimate_data_parallel.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import spmdsim


@jax.jit
def step(weights, batch):
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))

    def body(w, x):
        return jax.lax.psum(x.T @ (x @ w), "data")

    return jax.shard_map(body, mesh=mesh, in_specs=(P(), P("data")), out_specs=P())(weights, batch)


if __name__ == "__main__":
    weights = jax.ShapeDtypeStruct((4096, 4096), jnp.bfloat16)
    batch = jax.ShapeDtypeStruct((64 * 1024, 4096), jnp.bfloat16)
    result = spmdsim.estimate(step, weights, batch, machine="hgx-h100", devices=64)
    print(f"step time {result.step_time_s * 1e3:.3f} ms, memory peak "
          f"{result.memory_peak_bytes / 2**20:.1f} MiB per device")
    for collective in result.collectives:
        print(f"{collective.op} {collective.dtype} {collective.bytes} B over "
              f"{collective.groups} group(s) of {collective.group_size}: "
              f"{collective.time_s * 1e6:.1f} us ({collective.algorithm})")
