"""One BLAS thread for numpy while a pretrained agent acts (best effort, no dependency).

At batch 1 the candidate network's matrices are small: numpy's OpenBLAS splits them over
threads anyway, and on a busy machine (a self-play run beside, a tournament's workers) a
split product waits for a second core; measured on 2 cores with a run beside, the p90 time
per decision went from 4.9 ms to 1.4 ms with one thread (docs/zoo.md). ``one_blas_thread()``
sets OpenBLAS's thread count to one for the duration of a decision, through OpenBLAS's own
setter, and puts it back after, so the rest of the process keeps its threads.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

_NAMES = (  # (setter, getter) of the OpenBLAS builds numpy ships
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)
_found: tuple | None = None


def _controls() -> tuple | None:
    """``(set, get)`` of numpy's OpenBLAS, or ``()`` where none is found (then a no-op)."""
    global _found
    if _found is not None:
        return _found
    _found = ()
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _NAMES:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                _found = (setter, getter)
                return _found
    return _found


@contextmanager
def one_blas_thread() -> Iterator[None]:
    controls = _controls()
    if not controls:
        yield
        return
    setter, getter = controls
    before = int(getter())
    if before != 1:
        setter(1)
    try:
        yield
    finally:
        if before != 1:
            setter(before)
