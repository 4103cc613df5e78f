"""spmdsim.conform: the committed cases pass on the reference and the simulator; a case whose
expected bits are wrong fails; bad arguments are one-line ValueErrors."""

import json

import numpy as np
import pytest

import spmdsim
from conftest import CASES


def test_committed_cases_pass_on_the_reference():
    report = spmdsim.conform(CASES)
    assert report.passed, [case for case in report.cases if not case.passed]
    assert report.summary() == "41 passed, 0 failed"


def test_committed_cases_pass_on_the_simulator_with_each_algorithm():
    for algorithm in ("direct", "ring", "halving_doubling", "binary_tree"):
        report = spmdsim.conform(CASES, backend="sim", algorithm=algorithm, topology="switch")
        assert report.passed, (algorithm, report.summary())


def psum_case(expected_file: str) -> dict:
    return {
        "format": 1, "name": "psum_from_dict", "about": "psum over 4 devices",
        "mesh": {"shape": [4], "axis_names": ["i"]},
        "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
        "inputs": [{"file": "x.npy"}],
        "body": [{"op": "psum", "args": ["in0"], "axis_name": "i"}],
        "outputs": ["s0"],
        "expected": {"outputs": [{"file": expected_file}]},
    }


def test_a_case_given_as_a_dict_or_json_text_runs_and_a_wrong_expectation_fails(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "right.npy", np.broadcast_to(x.sum(axis=0), (4, 3)))
    np.save(tmp_path / "wrong.npy", np.broadcast_to(x.sum(axis=0) + 1, (4, 3)))
    assert spmdsim.conform(psum_case("right.npy"), base_dir=tmp_path).passed
    text = json.dumps(psum_case("wrong.npy"))
    report = spmdsim.conform(text, base_dir=tmp_path)
    assert not report.passed
    assert report.cases[0].failure != ""


@pytest.mark.parametrize("arguments, message", [
    ({"backend": "nccl"}, "backend: 'nccl', expected 'reference' or 'sim'"),
    ({"order": "fastest"}, "order: reduction algorithm 'fastest' is unknown"),
    ({"algorithm": "ring"}, "algorithm: 'ring' with backend 'reference', expected backend 'sim'"),
])
def test_bad_arguments_are_value_errors(arguments, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        spmdsim.conform(CASES, **arguments)


def test_a_missing_path_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="no-such-case"):
        spmdsim.conform(tmp_path / "no-such-case.json")


def test_jax_version_sets_the_rules_of_a_case_that_states_none():
    # all_to_all with negative axes: JAX 0.12 counts them from the end; 0.10.2 has no such call.
    case = json.loads((CASES / "smap_all_to_all_negative_axes.json").read_text())
    case.pop("jax_version", None)
    assert spmdsim.conform(case, base_dir=CASES).passed
    assert not spmdsim.conform(case, base_dir=CASES, jax_version="0.10").passed
    with pytest.raises(ValueError, match=r"^jax_version: \"0\.11\" is no JAX version"):
        spmdsim.conform(case, base_dir=CASES, jax_version="0.11")
