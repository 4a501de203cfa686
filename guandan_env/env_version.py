"""The environment's version: what a policy was trained on and a replay was recorded with.

``ENV_VERSION`` names the observation layout and the action table together (PettingZoo's
``metadata["name"]``). It is written into every ``policy.pt`` and replay file and checked when
one is loaded: a file of another version is refused with an error naming both.

Version history:

* ``guandan_v1`` (2026-11-29): observation of 1,652 floats. ``cards_left`` is a one-hot of
  0..28 per seat (a tribute receiver holds 28 cards until its return, R-7.1; 28 used to spill
  into the next slice). Action table of 2,243 ids (2,189 plays, 54 returns).
* ``guandan_v0`` (2026-11): observation of 1,640, then 1,648 floats, same action table.
  Files without a version field were written by v1 code if their observation size is 1,652
  (checked separately).
"""

ENV_VERSION = "guandan_v1"


def check_env_version(found: str | None, what: str) -> None:
    """``ValueError`` if a file names another version (``None``: written before versions)."""
    if found is not None and found != ENV_VERSION:
        raise ValueError(
            f"{what} was made with {found}; this code is {ENV_VERSION} (observation layout "
            "and action table differ: see guandan_env/env_version.py)"
        )
