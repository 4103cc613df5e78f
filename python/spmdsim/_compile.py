"""Compiling a jitted function for N devices to its SPMD-partitioned HLO text.

In the calling process when it has N JAX devices; otherwise in a child Python process on N fake
CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N), which imports the function by
``module:qualname``, loads it from the caller's main script (a top-level function of
``python script.py``), or unpickles it with cloudpickle where that is installed, and compiles it
for abstract arguments of the same shapes and dtypes (their shardings stay behind: the program's
own shard_map / in_shardings place them).
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import pickle
import subprocess
import sys
from typing import Any


def check_jitted(fn: Any) -> None:
    """A jax.jit function has .lower(); anything else cannot be compiled to HLO."""
    if not callable(getattr(fn, "lower", None)):
        raise ValueError(f"fn: {getattr(fn, '__name__', fn)!r} is not jitted, expected a "
                         "jax.jit function (fn = jax.jit(f))")


def abstract(value: Any) -> Any:
    """Arrays and ShapeDtypeStructs as {"shape", "dtype"}, inside tuples, lists and dicts."""
    if isinstance(value, (tuple, list)):
        return {"sequence": type(value).__name__, "items": [abstract(item) for item in value]}
    if isinstance(value, dict):
        return {"dict": {str(key): abstract(item) for key, item in value.items()}}
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        raise ValueError(f"args: {type(value).__name__} value, expected arrays or "
                         "jax.ShapeDtypeStruct (in tuples, lists or dicts)")
    return {"shape": [int(size) for size in shape], "dtype": str(dtype)}


def concrete(description: Any) -> Any:
    """abstract()'s description as jax.ShapeDtypeStructs again (in the child)."""
    import jax
    if "sequence" in description:
        items = [concrete(item) for item in description["items"]]
        return tuple(items) if description["sequence"] == "tuple" else items
    if "dict" in description:
        return {key: concrete(item) for key, item in description["dict"].items()}
    return jax.ShapeDtypeStruct(tuple(description["shape"]), description["dtype"])


def compile_in_process(fn: Any, args: tuple[Any, ...]) -> str:
    return fn.lower(*args).compile().as_text()


def _importable_reference(fn: Any) -> str | None:
    """``module:qualname`` when importing it gives back this very function."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<locals>" in qualname:
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return f"{module}:{qualname}" if found is fn else None


def _main_script_reference(fn: Any) -> dict[str, str] | None:
    """A top-level function of the script being run (``python script.py``): the child loads the
    script as a module under another name, so its ``if __name__ == "__main__":`` part stays out."""
    qualname = getattr(fn, "__qualname__", "")
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if getattr(fn, "__module__", None) != "__main__" or not script or "<locals>" in qualname:
        return None
    return {"script": os.path.abspath(script), "qualname": qualname}


def _function_payload(fn: Any) -> dict[str, str]:
    """How the child finds the function: by reference, from the main script, or cloudpickled."""
    reference = _importable_reference(fn)
    if reference is not None:
        return {"reference": reference}
    script = _main_script_reference(fn)
    if script is not None:
        return script
    try:
        import cloudpickle
    except ImportError:
        raise ValueError(
            f"fn: {getattr(fn, '__qualname__', fn)!r} cannot be imported by module:qualname, "
            "expected a function defined at the top level of an importable module (or install "
            "cloudpickle)") from None
    return {"pickled": base64.b64encode(cloudpickle.dumps(fn)).decode("ascii")}


def compile_in_child(fn: Any, args: tuple[Any, ...], devices: int, timeout_s: float) -> str:
    """Compiles in a fresh Python on `devices` fake CPU devices; the child's error as ValueError."""
    request = {"function": _function_payload(fn), "args": [abstract(arg) for arg in args]}
    environment = dict(os.environ)
    environment["XLA_FLAGS"] = (environment.get("XLA_FLAGS", "") +
                                f" --xla_force_host_platform_device_count={devices}").strip()
    environment["JAX_PLATFORMS"] = "cpu"
    environment["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
    child = subprocess.run([sys.executable, "-m", "spmdsim._compile"], input=json.dumps(request),
                           capture_output=True, text=True, env=environment, timeout=timeout_s)
    if child.returncode != 0:
        lines = child.stderr.strip().splitlines() or ["no message"]
        raise ValueError(f"fn: compiling for {devices} devices failed: {lines[-1]}")
    return child.stdout


def _load_script(path: str) -> Any:
    """The caller's main script as a module named spmdsim_caller_script."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("spmdsim_caller_script", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _child_function(payload: dict[str, str]) -> Any:
    if "pickled" in payload:
        return pickle.loads(base64.b64decode(payload["pickled"]))
    if "script" in payload:
        found, qualname = _load_script(payload["script"]), payload["qualname"]
    else:
        module, qualname = payload["reference"].split(":")
        found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _child_main() -> int:
    """The child: reads the request on stdin, writes the HLO text on stdout."""
    request = json.loads(sys.stdin.read())
    fn = _child_function(request["function"])
    args = [concrete(arg) for arg in request["args"]]
    sys.stdout.write(compile_in_process(fn, tuple(args)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_child_main())
    except Exception as error:  # one line for the parent's ValueError
        print(f"{type(error).__name__}: {' '.join(str(error).split())}", file=sys.stderr)
        sys.exit(2)
