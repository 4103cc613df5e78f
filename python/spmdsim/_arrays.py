"""NumPy arrays to and from the (dtype name, shape, bytes) form the native module takes.

NumPy has no bfloat16: a bfloat16 array is either an ``ml_dtypes.bfloat16`` array (JAX installs
ml_dtypes) or a ``uint16`` array of bit patterns passed with ``dtype="bfloat16"``. Results come
back as ``ml_dtypes.bfloat16`` when ml_dtypes is importable, else as ``uint16`` bit patterns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

WireArray = tuple[str, list[int], bytes]

# The dtypes the reference has, by NumPy's name for them.
_NUMPY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int8", "uint8", "bool")


def _bfloat16_dtype() -> np.dtype | None:
    """ml_dtypes' bfloat16 where it is installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def dtype_name(array: np.ndarray, dtype: str | None, argument: str) -> str:
    """The reference's name for the array's dtype, or the one the caller gave for raw bits."""
    if dtype is not None:
        if dtype == "bfloat16" and array.dtype == np.uint16:
            return dtype
        if dtype != array.dtype.name:
            raise ValueError(
                f"dtype: {dtype!r} for {argument} of dtype {array.dtype.name}, expected the "
                "array's own dtype, or 'bfloat16' for uint16 bit patterns")
    name = array.dtype.name
    if name == "bfloat16" or name in _NUMPY_DTYPES:
        return name
    raise ValueError(
        f"{argument}: dtype {name}, expected one of {', '.join(_NUMPY_DTYPES)}, bfloat16")


def to_wire(value: Any, dtype: str | None, argument: str) -> WireArray:
    """One array as the native module takes it: C order, little-endian bytes."""
    array = np.asarray(value)
    name = dtype_name(array, dtype, argument)
    if name == "bfloat16":
        array = array.view(np.uint16)
    contiguous = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return name, list(contiguous.shape), contiguous.tobytes()


def from_wire(wire: WireArray) -> np.ndarray:
    """A native result as a NumPy array (bfloat16: ml_dtypes', else uint16 bit patterns)."""
    name, shape, data = wire
    if name == "bfloat16":
        bits = np.frombuffer(data, dtype="<u2").reshape(shape).copy()
        bfloat16 = _bfloat16_dtype()
        return bits.view(bfloat16) if bfloat16 is not None else bits
    return np.frombuffer(data, dtype=np.dtype(name).newbyteorder("<")).reshape(shape).copy()
