"""numpy arrays and scalars as tagged JSON data and back: dtype, shape and raw bytes (base64),
as LangGraph's serializer keeps them.

Only arrays of plain dtypes (bool, numbers, datetimes, bytes and str) are kept this way; an
object array or a structured one stays a repr. Reading never imports numpy: a process that
has not imported it gets an `UnloadedModel` of kind `"numpy"` holding the data, which is
saved again as it was read.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

from nbgraph.codec.placeholders import UnloadedModel

__all__ = ["NUMPY_TAG", "decode_numpy", "numpy_data"]

NUMPY_TAG = "numpy"
_TAG = "$type"
_KINDS = frozenset("biufcmMSU")  # dtype kinds whose bytes are the values (no pointers)
_KEYS = ("dtype", "shape", "base64")


def numpy_data(value: Any) -> dict[str, Any] | None:
    """`value` as tagged JSON data if it is a numpy array (exactly `ndarray`) or scalar of a
    plain dtype, else None.

    >>> import numpy as np
    >>> numpy_data(np.arange(2, dtype="<i2"))
    {'$type': 'numpy', 'dtype': '<i2', 'shape': [2], 'base64': 'AAABAA=='}
    """
    np = sys.modules.get("numpy")
    if np is None:
        return None
    scalar = isinstance(value, np.generic)
    if not (scalar or type(value) is np.ndarray):
        return None
    array = np.asarray(value)
    if array.dtype.kind not in _KINDS:
        return None
    raw = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")
    shape = None if scalar else list(array.shape)
    return {_TAG: NUMPY_TAG, "dtype": array.dtype.str, "shape": shape, "base64": raw}


def decode_numpy(data: dict[str, Any]) -> Any:
    """The array or scalar `numpy_data` made `data` from (an `UnloadedModel` if numpy is not
    imported in this process).

    Raises:
        ValueError, TypeError, KeyError: `data` is not what `numpy_data` makes.
    """
    dtype, shape, text = (data[key] for key in _KEYS)
    if type(dtype) is not str or type(text) is not str:
        raise TypeError(f"a numpy value's dtype and base64 should be str, found {data!r:.200}")
    if shape is not None and (
        type(shape) is not list or any(type(n) is not int or n < 0 for n in shape)
    ):
        raise TypeError(f"a numpy value's shape should be a list of sizes, found {shape!r:.200}")
    np = sys.modules.get("numpy")
    if np is None:
        return UnloadedModel("numpy:ndarray", {key: data[key] for key in _KEYS}, kind=NUMPY_TAG)
    try:
        kind = np.dtype(dtype)
    except Exception as error:  # (numpy parses some dtype texts with `ast`: a SyntaxError)
        raise ValueError(f"a numpy value's dtype {dtype!r:.60} is not a numpy dtype") from error
    if kind.kind not in _KINDS:
        raise ValueError(f"a numpy value's dtype {dtype!r} is not one nbgraph saves")
    array = np.frombuffer(base64.b64decode(text, validate=True), dtype=kind)
    if shape is None:
        return array.reshape(())[()]
    return array.reshape(shape).copy()  # (its own, writable memory)
