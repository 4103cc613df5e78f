"""spmdsim.run_collective: bits in each order, the collectives' shapes, and the errors."""

import numpy as np
import pytest

import spmdsim


def order_sensitive(devices: int, count: int, seed: int = 0) -> list[np.ndarray]:
    """float32 m * 2^k, k in [-12, 12]: sums folded in other orders give other bits."""
    generator = np.random.default_rng(seed)
    return [np.ldexp(generator.integers(-255, 256, count), generator.integers(-12, 13, count))
            .astype(np.float32) for _ in range(devices)]


ORDER_SENSITIVE = order_sensitive(8, 64)


def sum_in_order(values: list[np.ndarray], ranks: list[int]) -> np.ndarray:
    """A float32 fold from +0.0 in the given rank order, rounding after every addition."""
    total = np.zeros_like(values[0])
    for rank in ranks:
        total = (total + values[rank]).astype(np.float32)
    return total


def test_xla_cpu_order_folds_in_rank_order():
    results = spmdsim.run_collective(ORDER_SENSITIVE, "psum", "xla_cpu")
    expected = sum_in_order(ORDER_SENSITIVE, list(range(8)))
    for result in results:
        assert result.tobytes() == expected.tobytes()


def test_orders_give_different_bits_on_order_sensitive_data():
    bits = {order: spmdsim.run_collective(ORDER_SENSITIVE, "psum", order)[0].tobytes()
            for order in ("xla_cpu", "nccl_ring", "binary_tree", "mpi_recursive_doubling")}
    assert len(set(bits.values())) > 1


def test_ring_argument_changes_the_nccl_fold():
    default = spmdsim.run_collective(ORDER_SENSITIVE, "psum", "nccl_ring")[0]
    reversed_ring = spmdsim.run_collective(ORDER_SENSITIVE, "psum", "nccl_ring",
                                           ring=list(range(7, -1, -1)))[0]
    assert default.tobytes() != reversed_ring.tobytes()


def test_integer_psum_is_exact_in_every_order():
    arrays = [np.arange(6, dtype=np.int32).reshape(2, 3) * (k + 1) for k in range(4)]
    for order in spmdsim.reduction_orders():
        for result in spmdsim.run_collective(arrays, "psum", order):
            np.testing.assert_array_equal(result, sum(arrays))


def test_all_gather_psum_scatter_all_to_all_ppermute_shapes():
    arrays = [np.full((4, 2), k, np.float32) for k in range(4)]
    gathered = spmdsim.run_collective(arrays, "all_gather", axis=0)
    assert gathered[0].shape == (4, 4, 2)
    np.testing.assert_array_equal(gathered[3][:, 0, 0], [0, 1, 2, 3])
    tiled = spmdsim.run_collective(arrays, "all_gather", axis=1, tiled=True)
    assert tiled[0].shape == (4, 8)
    scattered = spmdsim.run_collective(arrays, "psum_scatter", scatter_dimension=0, tiled=True)
    assert scattered[2].shape == (1, 2) and scattered[2][0, 0] == 6
    swapped = spmdsim.run_collective(arrays, "all_to_all", split_axis=0, concat_axis=0, tiled=True)
    np.testing.assert_array_equal(swapped[1][:, 0], [0, 1, 2, 3])
    shifted = spmdsim.run_collective(arrays, "ppermute", perm=[(k, (k + 1) % 4) for k in range(4)])
    assert shifted[0][0, 0] == 3 and shifted[1][0, 0] == 0


def test_two_axis_mesh_groups_by_the_named_axis():
    arrays = [np.array([k], np.int32) for k in range(8)]
    results = spmdsim.run_collective(arrays, "psum", axis_name="y", mesh_shape=(2, 4),
                                     axis_names=("x", "y"))
    assert [int(r[0]) for r in results] == [6, 6, 6, 6, 22, 22, 22, 22]


def test_bfloat16_bits_in_and_out():
    import ml_dtypes  # JAX's dependency: the test environment has it
    arrays = [np.array([1.0, 2.0**-8], ml_dtypes.bfloat16) for _ in range(2)]
    result = spmdsim.run_collective(arrays, "psum", "nccl_ring")[0]
    assert result.dtype == ml_dtypes.bfloat16
    bits = [a.view(np.uint16) for a in arrays]
    from_bits = spmdsim.run_collective(bits, "psum", "nccl_ring", dtype="bfloat16")[0]
    assert from_bits.tobytes() == result.tobytes()
    np.testing.assert_array_equal(result.astype(np.float32), [2.0, 2.0**-7])


@pytest.mark.parametrize("call, message", [
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE, "psum", "fastest"),
     "order: reduction algorithm 'fastest' is unknown, expected one of: xla_cpu"),
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE, "psumm"),
     'op: collective "psumm" is not known, expected one of psum'),
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE[:7] + [np.zeros(3, np.float32)], "psum"),
     "arrays[7]: float32[3], expected float32[64] as arrays[0]"),
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE, "psum", ring=[0, 1]),
     "ring: "),
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE, "psum", axis_name="j", mesh_shape=(8,),
                                    axis_names=("i",)),
     "unbound axis name: j"),
    (lambda: spmdsim.run_collective([np.zeros(2, np.complex64)] * 2, "psum"),
     "arrays[0]: dtype complex64, expected one of"),
    (lambda: spmdsim.run_collective(ORDER_SENSITIVE, "psum", axes=0),
     "axes: not a parameter of psum"),
])
def test_bad_input_is_one_line_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_jax_version_sets_the_rules_a_call_is_checked_by():
    # A negative scatter_dimension: JAX 0.12 counts it from the end, 0.10.2 refuses it.
    arrays = [np.arange(8, dtype=np.float32).reshape(4, 2) + k for k in range(4)]
    today = spmdsim.run_collective(arrays, "psum_scatter", "xla_cpu", scatter_dimension=-2,
                                   tiled=True)
    counted = spmdsim.run_collective(arrays, "psum_scatter", "xla_cpu", scatter_dimension=0,
                                     tiled=True)
    assert all(np.array_equal(a, b) for a, b in zip(today, counted))
    with pytest.raises(ValueError, match="scatter_dimension"):
        spmdsim.run_collective(arrays, "psum_scatter", "xla_cpu", scatter_dimension=-2,
                               tiled=True, jax_version="0.10")
    with pytest.raises(ValueError, match=r"^jax_version: "):
        spmdsim.run_collective(arrays, "psum", "xla_cpu", jax_version="0.9")
