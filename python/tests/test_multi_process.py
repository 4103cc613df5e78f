"""spmdsim's multi-process arrays (docs/multi-process.md): every host's data at once gives the
blocks JAX's devices hold; the committed multi-process conformance cases (computed by real
multi-process JAX) are reproduced bit for bit, single-process layouts are checked against JAX's
own functions, and bad arguments are one-line ValueErrors naming the argument."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding, PartitionSpec as P

import spmdsim
from conftest import REPOSITORY

MP_CASES = REPOSITORY / "tests" / "conformance" / "multi_process_cases"
TWO_HOSTS = [[0, 1], [2, 3]]  # 2 processes of 2 devices on mesh x of 4


def case_file(case: str, suffix: str) -> np.ndarray:
    return np.load(MP_CASES / f"{case}.{suffix}.npy")


def load_and_psum(case: str) -> tuple[spmdsim.GlobalArray, spmdsim.GlobalArray]:
    """The case's program: make_array_from_process_local_data under P('x'), psum over x."""
    local = [case_file(case, f"p{process}.in0") for process in (0, 1)]
    x = spmdsim.make_array_from_process_local_data([4], ["x"], P("x"), TWO_HOSTS, local)
    return x, spmdsim.shard_map_collective(x, "psum", axis_name="x", out_specs=P())


def test_hosts_loading_their_own_rows_give_jaxs_psum():
    x, total = load_and_psum("mp_local_rows_psum")
    assert x.shape == (8, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(total.value(), [[26, 32, 38], [44, 50, 56]])
    assert total.value().tobytes() == case_file("mp_local_rows_psum", "out0").tobytes()
    global_value = np.concatenate([case_file("mp_local_rows_psum", "p0.in0"),
                                   case_file("mp_local_rows_psum", "p1.in0")])
    np.testing.assert_array_equal(x.value(), global_value)


def test_hosts_loading_the_first_rows_change_the_psum_as_in_jax():
    x, total = load_and_psum("mp_local_rows_psum_wrong_rows")
    np.testing.assert_array_equal(total.value(), [[-10, -4, 2], [8, 14, 20]])
    assert total.value().tobytes() == case_file("mp_local_rows_psum_wrong_rows", "out0").tobytes()
    # What each host loaded shows in its devices' blocks: devices 2 and 3 hold rows 0-3 too.
    rows = case_file("mp_local_rows_psum_wrong_rows", "p0.in0")
    blocks = x.device_blocks()
    np.testing.assert_array_equal(blocks[2], rows[0:2])
    np.testing.assert_array_equal(blocks[3], rows[2:4])
    assert list(x.process_blocks(1)) == [2, 3]
    # psum's replicated output: every device holds the same block.
    assert all(np.array_equal(b, total.device_blocks()[0]) for b in total.device_blocks())


def test_each_host_gets_back_what_it_loaded():
    local = [case_file("mp_local_rows_psum", f"p{process}.in0") for process in (0, 1)]
    x = spmdsim.make_array_from_process_local_data([4], ["x"], P("x"), TWO_HOSTS, local)
    back = spmdsim.global_array_to_host_local_array(x, [4], ["x"], P("x"))
    for process in (0, 1):
        assert back[process].tobytes() == local[process].tobytes()
    np.testing.assert_array_equal(spmdsim.process_allgather(x, tiled=True), x.value())


@pytest.mark.parametrize("spec, global_shape", [
    (P("a", None), (8, 3)),       # rows by host, replicated within it
    (P("a", "b"), (8, 6)),        # rows by host, columns by local device
    (P(None, "b"), (4, 6)),       # hosts hold the same columns: the global array is one host's
    (P(("a", "b")), (16, 3)),     # rows over all four devices
])
def test_host_local_arrays_round_trip_through_the_global_array(spec, global_shape):
    layout = spmdsim.ProcessLayout.contiguous(2, 4)  # process = mesh row a
    local_shape = (global_shape[0] // 2 if spec[0] else global_shape[0], global_shape[1])
    rng = np.random.default_rng(7)
    if spec[0] is None:  # replicated across hosts: both hosts load the same data
        local = [rng.standard_normal(local_shape, dtype=np.float32)] * 2
    else:
        local = [rng.standard_normal(local_shape, dtype=np.float32) for _ in range(2)]
    x = spmdsim.host_local_array_to_global_array(local, [2, 2], ["a", "b"], spec, layout)
    assert x.shape == global_shape
    back = spmdsim.global_array_to_host_local_array(x, [2, 2], ["a", "b"], spec)
    for process in (0, 1):
        assert back[process].tobytes() == local[process].tobytes()
    if spec[0] is not None:
        np.testing.assert_array_equal(x.value(), np.concatenate(local))


def test_a_callback_per_host_fills_that_hosts_devices():
    """Hosts whose copies differ: the value reads each block from its first holder."""
    truth = np.arange(8, dtype=np.int32).reshape(4, 2)
    callbacks = [lambda index: truth[index], lambda index: -truth[index]]
    layout = spmdsim.ProcessLayout([[0, 2], [1, 3]])  # processes on alternate devices
    x = spmdsim.make_array_from_callback((4, 2), [2, 2], ["a", "b"], P("a"), layout, callbacks)
    blocks = x.device_blocks()
    np.testing.assert_array_equal(blocks[0], truth[0:2])   # process 0
    np.testing.assert_array_equal(blocks[1], -truth[0:2])  # process 1, a replica of block 0
    np.testing.assert_array_equal(x.value(), truth)
    summed = spmdsim.shard_map_collective(x, "psum", axis_name="b", out_specs=P("a"))
    np.testing.assert_array_equal(summed.value(), np.zeros((4, 2)))  # truth + (-truth)


def test_process_layout_answers_as_jax_does():
    layout = spmdsim.ProcessLayout([[3, 1], [0, 2]])
    assert layout.process_count == 2
    assert [layout.process_index(d) for d in range(4)] == [1, 0, 1, 0]
    assert layout.local_devices(0) == [1, 3]  # ascending, as jax.local_devices()
    assert spmdsim.ProcessLayout.contiguous(2, 4) == spmdsim.ProcessLayout(TWO_HOSTS)


def test_process_allgather_stacks_or_concatenates_host_values():
    values = [np.array([1, 2], np.int32), np.array([3, 4], np.int32)]
    np.testing.assert_array_equal(spmdsim.process_allgather(values, processes=TWO_HOSTS),
                                  [[1, 2], [3, 4]])
    np.testing.assert_array_equal(
        spmdsim.process_allgather(values, tiled=True, processes=TWO_HOSTS), [1, 2, 3, 4])


# ---- One process of 8 devices: JAX's own functions compute the blocks.

def jax_blocks(array: jax.Array) -> list[np.ndarray]:
    by_device = {shard.device.id: np.asarray(shard.data) for shard in array.addressable_shards}
    return [by_device[device.id] for device in array.sharding.mesh.devices.flat]


@pytest.mark.parametrize("spec", [P("data", None), P(None, "model"), P("model", "data"), P()])
def test_one_process_gives_jaxs_blocks(spec):
    mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    sharding = NamedSharding(mesh, spec)
    data = np.arange(64, dtype=np.float32).reshape(8, 8) * 0.5
    one_process = [list(range(8))]
    cases = [
        (jax.make_array_from_process_local_data(sharding, data),
         spmdsim.make_array_from_process_local_data([2, 4], ["data", "model"], spec,
                                                    one_process, [data])),
        (multihost_utils.host_local_array_to_global_array(data, mesh, spec),
         spmdsim.host_local_array_to_global_array([data], [2, 4], ["data", "model"], spec,
                                                  one_process)),
        (jax.make_array_from_callback(data.shape, sharding, lambda index: data[index]),
         spmdsim.make_array_from_callback(data.shape, [2, 4], ["data", "model"], spec,
                                          one_process, lambda index: data[index])),
    ]
    for expected, ours in cases:
        assert ours.shape == expected.shape
        for theirs, mine in zip(jax_blocks(expected), ours.device_blocks(), strict=True):
            assert theirs.tobytes() == mine.tobytes()
    expected_gather = multihost_utils.process_allgather(jnp.asarray(data))
    np.testing.assert_array_equal(spmdsim.process_allgather(cases[0][1]), expected_gather)


# ---- Bad arguments: one line naming the argument.

def test_bad_arguments_are_one_line_value_errors_naming_the_argument():
    x, _ = load_and_psum("mp_local_rows_psum")
    rows = np.zeros((4, 3), np.float32)
    bad_calls = {
        "local_data[1]: shape (3, 3), expected 8 or 4 in dimension 0":
            lambda: spmdsim.make_array_from_process_local_data(
                [4], ["x"], P("x"), TWO_HOSTS, [rows, np.zeros((3, 3))], global_shape=(8, 3)),
        "local_data: 1 entries, expected one per process (2)":
            lambda: spmdsim.make_array_from_process_local_data(
                [4], ["x"], P("x"), TWO_HOSTS, [rows]),
        "processes[1].devices: device 1 is also in processes[0].devices":
            lambda: spmdsim.ProcessLayout([[0, 1], [1, 2]]),
        "processes: mesh device 3 is in no process":
            lambda: spmdsim.make_array_from_process_local_data(
                [4], ["x"], P("x"), [[0, 1], [2]], [rows, rows]),
        "sharding: Resource axis: y":
            lambda: spmdsim.make_array_from_process_local_data(
                [4], ["x"], P("y"), TWO_HOSTS, [rows, rows]),
        "processes: process 0's devices [0, 3]":
            lambda: spmdsim.host_local_array_to_global_array(
                [rows, rows], [2, 2], ["a", "b"], P("a"), [[0, 3], [1, 2]]),
        "data_callback (process 0): block [0:2, 0:2] for device 0 has shape (3, 2)":
            lambda: spmdsim.make_array_from_callback(
                (4, 2), [2, 2], ["a", "b"], P("a"), TWO_HOSTS, lambda index: np.zeros((3, 2))),
        "tiled: False, expected True":
            lambda: spmdsim.process_allgather(x),
        "in_tree[1]: float32[3], expected float32[2]":
            lambda: spmdsim.process_allgather([np.ones(2), np.ones(3)], processes=[[0], [1]]),
        "global_inputs: a ndarray, expected a spmdsim.GlobalArray":
            lambda: spmdsim.global_array_to_host_local_array(rows, [4], ["x"], P("x")),
        "mesh_shape: (2, 2) ('a', 'b'), expected the array's mesh (4,) ('x',)":
            lambda: spmdsim.global_array_to_host_local_array(x, [2, 2], ["a", "b"], P("a")),
        "axis_name: NameError: Found an unbound axis name: q":
            lambda: spmdsim.shard_map_collective(x, "psum", axis_name="q", out_specs=P()),
        "out_specs: shard_map applied to the function":
            lambda: spmdsim.shard_map_collective(x, "all_gather", axis_name="x",
                                                 out_specs=P(), tiled=True),
        "order: ":
            lambda: spmdsim.shard_map_collective(x, "psum", axis_name="x", out_specs=P(),
                                                 order="sideways"),
    }
    for expected, call in bad_calls.items():
        with pytest.raises(ValueError) as raised:
            call()
        message = str(raised.value)
        assert message.startswith(expected), message
        assert "\n" not in message


def test_the_docs_example_prints_jaxs_psums(capsys):
    import multi_process_wrong_rows as example

    np.testing.assert_array_equal(
        example.ROWS, np.concatenate([case_file("mp_local_rows_psum", "p0.in0"),
                                      case_file("mp_local_rows_psum", "p1.in0")]))
    example.main()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "hosts load their own rows, psum: [[26.0, 32.0, 38.0], [44.0, 50.0, 56.0]]"
    assert printed[1] == "both hosts load rows 0-3,  psum: [[-10.0, -4.0, 2.0], [8.0, 14.0, 20.0]]"
    assert printed[4] == "device 2 (process 1) holds [[-7.0, -5.5, -4.0], [-2.5, -1.0, 0.5]]"
