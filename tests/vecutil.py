"""Checks shared by the vector-env tests."""

import numpy as np


def assert_same(a, b, path="") -> None:
    """Recursive bit equality of vector-env outputs (dicts, object arrays, arrays, scalars)."""
    if isinstance(a, tuple):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{k}]")
    elif isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            assert_same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        for x, y in zip(a, b, strict=True):
            assert (x is None) == (y is None), path
            if x is not None:
                assert_same(x, y, path)
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype, (path, a.dtype, b.dtype)
        assert np.array_equal(a, b), (path, a, b)
