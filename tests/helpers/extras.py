"""Blocking the extras: code that must run on the core install (``pip install guandan-env``)
runs in a subprocess after ``BLOCKER``, which makes every extra's import fail."""

# what only the extras install (pyproject.toml): train, analysis, interop, web
EXTRAS_ONLY = (
    "torch",
    "ray",
    "tensorboard",
    "yaml",
    "tqdm",
    "matplotlib",
    "pandas",
    "torchrl",
    "tianshou",
    "pyspiel",
    "websockets",
    "starlette",
    "uvicorn",
)
BLOCKER = f"""
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {EXTRAS_ONLY!r}:
            raise ModuleNotFoundError(f'No module named {{name!r}} (an extra)', name=name)
sys.meta_path.insert(0, _Blocked())
"""
