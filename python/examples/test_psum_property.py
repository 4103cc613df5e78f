"""docs/python.md's property test: your shard_map psum against the reference, in JAX's order.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 pytest python/examples/test_psum_property.py
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import spmdsim  # noqa: E402
from spmdsim import strategies  # noqa: E402


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_my_psum_matches_the_reference(data):
    devices = 8
    dtype = data.draw(strategies.dtypes("float"))
    block = data.draw(strategies.shapes(min_rank=1, max_dim=4))
    arrays = [data.draw(strategies.order_sensitive_arrays(dtype, block)) for _ in range(devices)]
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:devices]), ("i",))
    mine = jax.jit(jax.shard_map(lambda x: jax.lax.psum(x, "i"), mesh=mesh, in_specs=P("i"),
                                 out_specs=P()))(np.concatenate(arrays))
    reference = spmdsim.run_collective(arrays, "psum", "xla_cpu")[0]
    assert np.asarray(mine).tobytes() == reference.tobytes()
