"""Helpers shared by the tests (``pythonpath = ["tests"]`` in ``pyproject.toml`` puts this
package on ``sys.path`` as ``helpers``; the test folders themselves are not packages).

* ``REPO``: the repository's root folder.
* ``rules``: crafted scenarios for the RULES.md tests (``make_game``, ``play`` …).
* ``reference_movegen``: the slow reference move generator, written from RULES.md alone.
* ``selfplay``: a small network config and running Ray in a subprocess with a timeout.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
