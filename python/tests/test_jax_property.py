"""Property tests with real JAX and Hypothesis: what JAX computes for a shard_map collective on 8
CPU devices equals, bit for bit, spmdsim.run_collective in XLA:CPU's order (the reference)."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

import spmdsim
from spmdsim import strategies

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def jax_per_device(fn, mesh: strategies.MeshSpec, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """fn run by jax.shard_map with device d holding arrays[d]: every device's result."""
    block = arrays[0].shape
    global_input = np.stack(arrays).reshape(mesh.shape + block)
    spec = P(*mesh.axis_names)
    lead = len(mesh.shape)

    def body(x):
        result = fn(x.reshape(block))
        return result.reshape((1,) * lead + result.shape)

    out = jax.jit(jax.shard_map(body, mesh=mesh.to_jax(), in_specs=spec, out_specs=spec))(
        global_input)
    out = np.asarray(out)
    return list(out.reshape((mesh.device_count,) + out.shape[lead:]))


@SETTINGS
@given(st.data())
def test_jax_psum_equals_the_reference_in_xla_cpu_order(data):
    mesh = data.draw(strategies.meshes(max_devices=8))
    axes = data.draw(strategies.axis_subsets(mesh))
    dtype = data.draw(strategies.dtypes("float"))
    shape = data.draw(strategies.shapes(min_rank=1, max_dim=5))
    arrays = [data.draw(strategies.order_sensitive_arrays(dtype, shape))
              for _ in range(mesh.device_count)]
    expected = jax_per_device(lambda x: jax.lax.psum(x, axes), mesh, arrays)
    got = spmdsim.run_collective(arrays, "psum", "xla_cpu", axis_name=axes,
                                 mesh_shape=mesh.shape, axis_names=mesh.axis_names)
    for device, (ours, theirs) in enumerate(zip(got, expected)):
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), (device, axes)


@SETTINGS
@given(st.data())
def test_generated_collective_calls_match_jax(data):
    mesh = data.draw(strategies.meshes(max_devices=8))
    dtype = data.draw(st.sampled_from(["float32", "bfloat16", "int32"]))
    shape = data.draw(strategies.shapes(min_rank=1, max_dim=4))
    call = data.draw(strategies.collective_calls(mesh, shape, dtype))
    arrays = [data.draw(strategies.order_sensitive_arrays(dtype, shape))
              for _ in range(mesh.device_count)]
    expected = jax_per_device(call.jax_fn(), mesh, arrays)
    got = call.run(arrays, mesh, order="xla_cpu")
    for device, (ours, theirs) in enumerate(zip(got, expected)):
        assert ours.shape == theirs.shape, (device, call)
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), (device, call)


def test_orders_other_than_jax_differ_somewhere():
    """The property above can fail: another order's bits differ from JAX's on the same data."""
    mesh = strategies.MeshSpec((8,), ("i",))
    generator = np.random.default_rng(1)
    arrays = [np.ldexp(generator.integers(-255, 256, 256), generator.integers(-12, 13, 256))
              .astype(np.float32) for _ in range(8)]
    expected = jax_per_device(lambda x: jax.lax.psum(x, "i"), mesh, arrays)
    ring = spmdsim.run_collective(arrays, "psum", "nccl_ring")
    assert ring[0].tobytes() != expected[0].tobytes()
    assert jnp.allclose(ring[0], expected[0], rtol=1e-5)
