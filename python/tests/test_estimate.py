"""spmdsim.estimate with real JAX: a jitted shard_map program compiled for 8 devices in this
process and for 16 in a child process, its HLO run on a machine preset."""

import jax
import jax.numpy as jnp
import pytest

import jax_programs
import spmdsim

WEIGHTS = jax.ShapeDtypeStruct((256, 256), jnp.float32)


def batch(devices: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct((64 * devices, 256), jnp.float32)


def test_in_process_compile_reports_the_psum_and_a_positive_step_time():
    assert jax.device_count() == 8  # conftest.py's fake devices: compiled here
    result = spmdsim.estimate(jax_programs.data_parallel_step, WEIGHTS, batch(8),
                              machine="dgx-h100", devices=8)
    assert result.devices == 8 and result.step_time_s > 0
    assert result.memory_peak_bytes >= 256 * 256 * 4
    [psum] = [c for c in result.collectives if c.op == "psum"]
    assert psum.dtype == "float32" and psum.bytes == 256 * 256 * 4
    assert psum.groups == 1 and psum.group_size == 8 and psum.time_s > 0
    low, high = psum.time_range_s
    assert low < psum.time_s < high
    step_low, step_high = result.step_time_range_s
    assert step_low <= result.step_time_s <= step_high and step_low < step_high


def test_child_process_compile_for_more_devices_than_this_process_has():
    result = spmdsim.estimate(jax_programs.data_parallel_step, WEIGHTS, batch(16),
                              machine="hgx-h100", devices=16)
    assert result.devices == 16
    [psum] = [c for c in result.collectives if c.op == "psum"]
    assert psum.group_size == 16
    # Two nodes: the all-reduce crosses the NICs, slower than within the 8-GPU node.
    in_node = spmdsim.estimate(jax_programs.data_parallel_step, WEIGHTS, batch(8),
                               machine="hgx-h100", devices=8)
    [psum_in_node] = [c for c in in_node.collectives if c.op == "psum"]
    assert psum.time_s > psum_in_node.time_s


def test_a_function_that_is_not_jitted_is_a_value_error():
    with pytest.raises(ValueError, match="^fn: 'not_jitted' is not jitted"):
        spmdsim.estimate(jax_programs.not_jitted, WEIGHTS, devices=8)


def test_devices_the_mesh_does_not_have_is_a_value_error():
    with pytest.raises(ValueError, match="^devices: 16, but the compiled program runs on 8"):
        spmdsim.estimate(jax_programs.eight_device_psum, jax.ShapeDtypeStruct((16, 4), jnp.float32),
                         machine="hgx-h100", devices=16)


def test_a_local_function_without_cloudpickle_names_fn():
    @jax.jit
    def local(x):
        return x * 2
    try:
        import cloudpickle  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="^fn: .*cannot be imported by module:qualname"):
            spmdsim.estimate(local, jax.ShapeDtypeStruct((4,), jnp.float32), devices=16)
    else:
        assert spmdsim.estimate(local, jax.ShapeDtypeStruct((4,), jnp.float32), devices=16)


def test_an_unknown_machine_is_a_value_error():
    with pytest.raises(ValueError, match="^machine: "):
        spmdsim.estimate(jax_programs.data_parallel_step, WEIGHTS, batch(8), machine="dgx-z9",
                         devices=8)


def test_bf16_activation_all_reduce_is_timed_in_bf16_as_the_gpu_compile_moves_it():
    # XLA:CPU promotes the psum to float32 (64 MiB); the estimate keeps the program's bfloat16.
    import estimate_tensor_data_parallel as example
    x = jax.ShapeDtypeStruct((64, 1024, 2048), jnp.bfloat16)
    w_in = jax.ShapeDtypeStruct((2048, 8192), jnp.bfloat16)
    w_out = jax.ShapeDtypeStruct((8192, 2048), jnp.bfloat16)
    result = spmdsim.estimate(example.mlp_block, x, w_in, w_out, machine="hgx-h100", devices=64)
    [psum] = [c for c in result.collectives if c.op == "psum"]
    assert psum.dtype == "bfloat16"
    assert psum.bytes == 8 * 1024 * 2048 * 2  # 32 MiB, not 64
    assert psum.groups == 8 and psum.group_size == 8
