"""One BLAS thread for numpy in this process (best effort, no dependency).

At batch 1 the candidate network's matrices are small: numpy's OpenBLAS splits them over
threads anyway, and on a busy machine (a self-play run beside, a tournament's workers) a
split product waits for a second core; measured on 2 cores with a run beside, the p90 time
per decision went from 4.9 ms to 1.4 ms with one thread (docs/zoo.md). ``torch`` agents do the
same with ``torch.set_num_threads(1)``. The environment variable ``OPENBLAS_NUM_THREADS``
does this before numpy loads; this helper does it after, through OpenBLAS's own setter.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)
_done = False


def single_thread_blas() -> bool:
    """Limit numpy's OpenBLAS to one thread; True if a setter was found (once per process)."""
    global _done
    if _done or os.environ.get("OPENBLAS_NUM_THREADS"):
        return True
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                _done = True
                return True
    return False
