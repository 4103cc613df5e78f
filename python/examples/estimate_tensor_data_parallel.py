"""docs/python.md's estimate example: one bf16 MLP block, tensor parallel over 8 devices
("model": the hidden layer split, the output psum'd, Megatron's row-parallel all-reduce) and data
parallel over 8 ("data": the batch split), estimated on 64 H100s (8 HGX nodes) from one CPU
process. The activation all-reduce moves bfloat16, 32 MiB on each device, as the program's GPU
compile does, though XLA:CPU promotes it to float32 (docs/hlo-import.md).

    python python/examples/estimate_tensor_data_parallel.py
"""

import time

start = time.perf_counter()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import spmdsim  # noqa: E402


@jax.jit
def mlp_block(x, w_in, w_out):
    devices = np.array(jax.devices()).reshape(8, 8)
    mesh = jax.sharding.Mesh(devices, ("data", "model"))

    def body(x, w_in, w_out):
        hidden = jax.nn.gelu(x @ w_in)
        return jax.lax.psum(hidden @ w_out, "model")

    return jax.shard_map(body, mesh=mesh,
                         in_specs=(P("data"), P(None, "model"), P("model", None)),
                         out_specs=P("data"))(x, w_in, w_out)


if __name__ == "__main__":
    x = jax.ShapeDtypeStruct((64, 1024, 2048), jnp.bfloat16)
    w_in = jax.ShapeDtypeStruct((2048, 8192), jnp.bfloat16)
    w_out = jax.ShapeDtypeStruct((8192, 2048), jnp.bfloat16)
    result = spmdsim.estimate(mlp_block, x, w_in, w_out, machine="hgx-h100", devices=64)
    low, high = result.step_time_range_s
    print(f"step time {result.step_time_s * 1e3:.3f} ms (range {low * 1e3:.3f}-{high * 1e3:.3f} "
          f"ms), memory peak {result.memory_peak_bytes / 2**20:.1f} MiB per device")
    for collective in result.collectives:
        print(f"{collective.op} {collective.dtype} {collective.shape} {collective.bytes / 2**20:.0f} "
              f"MiB in {collective.groups} groups of {collective.group_size}: "
              f"{collective.time_s * 1e6:.1f} us ({collective.algorithm})")
    print(f"from import to this report: {time.perf_counter() - start:.1f} s")
