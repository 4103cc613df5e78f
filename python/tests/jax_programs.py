"""Jitted programs for test_estimate.py, importable by module:qualname so that estimate can
compile them in a child process for a device count this process does not have."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def _mesh() -> jax.sharding.Mesh:
    """Every device of the process compiling it, on one axis (an Auto axis: the arguments come
    as shapes without shardings, and shard_map places them)."""
    return jax.sharding.Mesh(np.array(jax.devices()), ("devices",))


@jax.jit
def data_parallel_step(weights: jax.Array, batch: jax.Array) -> jax.Array:
    """A matmul per device on its batch shard, the gradient-like product psum'd over devices."""
    def body(w, x):
        return jax.lax.psum(x.T @ (x @ w), "devices")
    return jax.shard_map(body, mesh=_mesh(), in_specs=(P(), P("devices")), out_specs=P())(
        weights, batch)


@jax.jit
def eight_device_psum(x: jax.Array) -> jax.Array:
    """A psum over a mesh of exactly 8 devices, whatever the process has."""
    mesh = jax.sharding.Mesh(jax.devices()[:8], ("i",))
    return jax.shard_map(lambda block: jax.lax.psum(block, "i"), mesh=mesh, in_specs=P("i"),
                         out_specs=P())(x)


def not_jitted(x: jax.Array) -> jax.Array:
    return jnp.sum(x)
