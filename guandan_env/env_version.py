"""The environment's version: what a policy was trained on and a replay was recorded with.

``ENV_VERSION`` names the observation layout and the action table together (PettingZoo's
``metadata["name"]``). It is written into every ``policy.pt`` and replay file and checked when
one is loaded: a file of another version is refused with an error naming both.

Every version and what changed: docs/environments.md (Env versions).
"""

ENV_VERSION = "guandan_v1"


def check_env_version(found: str | None, what: str) -> None:
    """``ValueError`` if a file names another version (``None``: written before versions)."""
    if found is not None and found != ENV_VERSION:
        raise ValueError(
            f"{what} was made with {found}; this code is {ENV_VERSION} (observation layout "
            "and action table differ: see guandan_env/env_version.py)"
        )
