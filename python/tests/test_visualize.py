"""spmdsim.visualize: the same grid as `spmdsim sharding`, from a shape and spec or from a JAX
array's NamedSharding; bad arguments are one-line ValueErrors."""

import pathlib
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import spmdsim
from conftest import REPOSITORY


def cli_grid(*flags: str) -> str:
    binary = pathlib.Path(spmdsim.__file__).resolve().parents[2] / "bin" / "spmdsim"
    if not binary.exists():
        binary = REPOSITORY / "build" / "bin" / "spmdsim"
    return subprocess.run([str(binary), "sharding", *flags], check=True, capture_output=True,
                          text=True).stdout


def test_a_shape_and_spec_draw_what_the_cli_draws():
    text = spmdsim.visualize((16, 8), ("data", None), mesh_shape=(2, 4),
                             axis_names=("data", "model"))
    printed = cli_grid("--mesh", "2x4", "--names", "data,model", "--spec", "data,None",
                       "--shape", "16,8")
    assert printed.startswith("array 16x8, P('data', None) on Mesh('data': 2, 'model': 4):\n")
    assert text == printed.split("\n", 1)[1]  # the grid below the CLI's heading
    # Rows are the data axis' halves; each is held by the four model positions of its row.
    assert "0,1,2,3" in text and "4,5,6,7" in text


def test_a_jax_array_is_drawn_from_its_named_sharding():
    mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    array = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P(None, "model")))
    assert spmdsim.visualize(array) == spmdsim.visualize(
        (16, 8), P(None, "model"), mesh_shape=(2, 4), axis_names=("data", "model"))


@pytest.mark.parametrize("arguments, message", [
    (dict(spec=("data", None, None)), r"^spec: .*rank"),
    (dict(spec=("expert", None)), r"^spec: .*expert"),
    (dict(spec=(3, None)), r"^spec: entry 0 is 3, expected None, an axis name"),
    (dict(axis_names=("data",)), r"^axis_names: 1 names for a mesh_shape of 2 axes"),
])
def test_bad_arguments_are_one_line_value_errors(arguments, message):
    call = dict(spec=("data", None), mesh_shape=(2, 4), axis_names=("data", "model"))
    call.update(arguments)
    with pytest.raises(ValueError, match=message) as error:
        spmdsim.visualize((16, 8), **call)
    assert "\n" not in str(error.value)


def test_a_shape_without_its_mesh_is_an_error():
    with pytest.raises(ValueError, match=r"^array_or_shape: a shape, expected spec="):
        spmdsim.visualize((16, 8), ("data", None))
