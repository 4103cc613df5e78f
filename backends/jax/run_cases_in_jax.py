#!/usr/bin/env python3
"""Runs conformance cases (docs/conformance-format.md) in the installed JAX and checks that JAX
gives their expected outputs bit for bit (NaN payloads aside), or rejects the ones that expect an
error: the public cases' expectations are what JAX really does.

A case that states a `jax_version` other than the installed JAX's release is not JAX's to judge
here and is counted as left to the other release (named in the summary); the others all run.

Usage: run_cases_in_jax.py PATH...   (case files or folders)
Needs XLA_FLAGS=--xla_force_host_platform_device_count=8 (set here if absent) and JAX on CPU.
Exits 1 when a case disagrees with JAX.
"""

import json
import pathlib
import subprocess
import sys

import numpy as np

from generate_cases import CASE_JAX_VERSION, body_function, spec_of
import jax  # noqa: E402  (generate_cases set XLA_FLAGS and JAX_PLATFORMS first)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh  # noqa: E402


def load_array(folder, entry):
    array = np.load(folder / entry["file"])
    if entry.get("dtype") == "bfloat16":
        array = array.view(jnp.bfloat16)
    return array


def compiled(case):
    """The case's program as JAX runs it: jax.pmap, or jax.jit(jax.shard_map(...))."""
    jmap, mesh = case["map"], case["mesh"]
    devices = jax.devices()[:int(np.prod(mesh["shape"]))]
    if jmap["kind"] == "pmap":
        return jax.pmap(body_function(case["body"], case["outputs"]), axis_name=jmap["axis_name"], devices=devices,
                        in_axes=tuple(jmap["in_axes"]), out_axes=tuple(jmap["out_axes"]))
    jax_mesh = Mesh(np.array(devices).reshape(mesh["shape"]), tuple(mesh["axis_names"]))
    return jax.jit(jax.shard_map(body_function(case["body"], case["outputs"]), mesh=jax_mesh,
                                 in_specs=tuple(spec_of(s) for s in jmap["in_specs"]),
                                 out_specs=tuple(spec_of(s) for s in jmap["out_specs"]),
                                 check_vma=jmap.get("check_vma", True)))


def same_bits(got, expected):
    """Bit for bit, NaN payloads aside; an int64 file compared as JAX's int32 where it fits (as
    `spmdsim conform` does)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if expected.dtype != got.dtype:
        if not (np.issubdtype(expected.dtype, np.integer) and np.issubdtype(got.dtype, np.integer)
                and np.array_equal(expected.astype(got.dtype), expected)):
            return f"dtype {got.dtype}, expected {expected.dtype}"
        expected = expected.astype(got.dtype)
    if got.dtype.kind == "f" or got.dtype == jnp.bfloat16:
        nan = np.isnan(got.astype(np.float32))
        if not np.array_equal(nan, np.isnan(expected.astype(np.float32))):
            return "NaN in other places"
        got, expected = np.where(nan, 0, got).astype(got.dtype), \
            np.where(nan, 0, expected).astype(got.dtype)
    if got.tobytes() != expected.tobytes():
        return f"values differ: got {got.ravel()[:8]}, expected {expected.ravel()[:8]}"
    return None


def check(path):
    """None when JAX agrees with the case, else one line saying how not."""
    case = json.loads(path.read_text())
    folder = path.parent
    inputs = [load_array(folder, entry) for entry in case["inputs"]]
    expected = case["expected"]
    try:
        got = compiled(case)(*inputs)
    except Exception as error:  # JAX rejects the program
        if "error" in expected:
            return None
        return f"JAX raised {type(error).__name__}: {str(error).splitlines()[0][:200]}"
    if "error" in expected:
        return f"JAX ran it, the case expects the error: {expected['error'][:120]}"
    for k, (g, entry) in enumerate(zip(got, expected["outputs"])):
        difference = same_bits(g, load_array(folder, entry))
        if difference:
            return f"output {k}: {difference}"
    return None


def worker():
    """--worker: reads case paths from stdin, writes one line per case: OK or FAIL reason."""
    for line in sys.stdin:
        difference = check(pathlib.Path(line.strip()))
        answer = "OK" if difference is None else f"FAIL {difference}"
        print(f"{ANSWER}{answer}", flush=True)


ANSWER = "run_cases_in_jax answer: "  # marks the worker's lines among what JAX may print


class Worker:
    """Cases run in a child process: JAX 0.12 aborts the whole process on some programs it
    rejects (an XLA check, e.g. a mesh with an axis name twice); a child that dies on a case is
    that case's rejection, and a new child takes the next one."""

    def __init__(self):
        self.process = None

    def check(self, path):
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        answer = ""
        for line in self.process.stdout:
            if line.startswith(ANSWER):
                answer = line[len(ANSWER):].strip()
                break
        if answer:
            return None if answer == "OK" else answer[len("FAIL "):]
        stderr = self.process.stderr.read().strip().splitlines()
        self.process.wait()
        self.process = None
        reason = next((line for line in stderr if "Check failed" in line),
                      stderr[-1] if stderr else "no message")
        if "error" in json.loads(path.read_text())["expected"]:
            return None  # JAX rejects it by ending the process
        return f"JAX aborted: {reason[:200]}"

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait()


def main():
    if sys.argv[1:] == ["--worker"]:
        worker()
        return
    files = []
    for argument in sys.argv[1:]:
        path = pathlib.Path(argument)
        files += sorted(path.rglob("*.json")) if path.is_dir() else [path]
    if not files:
        sys.exit("usage: run_cases_in_jax.py PATH... (case files or folders)")
    agreed, other_release, failed = 0, [], 0
    child = Worker()
    for path in files:
        stated = json.loads(path.read_text()).get("jax_version")
        if stated is not None and stated != CASE_JAX_VERSION:
            other_release.append(f"{path.stem} ({stated})")
            continue
        difference = child.check(path)
        if difference:
            print(f"FAIL {path.name}: {difference}")
            failed += 1
        else:
            agreed += 1
    child.close()
    print(f"jax {jax.__version__}: {agreed} cases agree with JAX, {failed} disagree; "
          f"{len(other_release)} state another JAX release: {', '.join(other_release) or 'none'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
