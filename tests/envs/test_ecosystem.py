"""The ecosystem's names (issue 28, item 2): PettingZoo's versioned module
``guandan_env.guandan_v1`` and the Gymnasium id ``guandan_env/SingleSeat-v1``, each run by the
library's own checker; the registration never imports Gymnasium early."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

GYM_ID = "guandan_env/SingleSeat-v1"


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def test_guandan_v1_passes_pettingzoo_api_test():
    from pettingzoo.test import api_test

    from guandan_env import guandan_v1

    env = guandan_v1.env(mode="deal", random_tribute=True)
    assert env.metadata["name"] == "guandan_v1"
    api_test(env, num_cycles=300, verbose_progress=False)
    raw = guandan_v1.raw_env()
    assert type(raw).__name__ == "raw_env" and env.unwrapped.__class__ is type(raw)


def test_gymnasium_make_after_import_guandan_env_passes_check_env():
    """In a fresh interpreter: ``import guandan_env`` leaves Gymnasium unloaded, then
    ``gymnasium.make`` finds the id; Gymnasium's ``check_env`` passes on the made env."""
    code = f"""
import sys, warnings
import guandan_env
assert "gymnasium" not in sys.modules
import gymnasium
from gymnasium.utils.env_checker import check_env
env = gymnasium.make({GYM_ID!r}, learner_seat=1, mode="deal", random_tribute=True)
with warnings.catch_warnings():
    warnings.simplefilter("error")  # check_env's findings are warnings: none allowed
    check_env(env.unwrapped, skip_render_check=True)
obs, info = env.reset(seed=5)
print(type(env.unwrapped).__name__, env.unwrapped.learner_seat, obs["observation"].shape[0],
      env.spec.id, {GYM_ID!r} in gymnasium.registry)
"""
    from guandan_env.encoding.observation import OBS_DIM

    assert _run(code).split() == ["SingleAgentEnv", "1", str(OBS_DIM), GYM_ID, "True"]


def test_gymnasium_imported_first_also_gets_the_id():
    code = f"import gymnasium, guandan_env; print({GYM_ID!r} in gymnasium.registry)"
    assert _run(code) == "True"


def test_made_env_plays_like_the_wrapper():
    """The id builds the same env as ``SingleAgentEnv`` with the same arguments."""
    import gymnasium

    import guandan_env  # noqa: F401
    from guandan_env.envs.wrappers import SingleAgentEnv

    made = gymnasium.make(GYM_ID, learner_seat=2, random_levels=True)
    direct = SingleAgentEnv(learner_seat=2, random_levels=True)
    rng = np.random.default_rng(0)
    for env in (made, direct):
        env.action_space.seed(0)
    (o1, _), (o2, _) = made.reset(seed=11), direct.reset(seed=11)
    for _ in range(30):
        assert np.array_equal(o1["observation"], o2["observation"])
        a = int(rng.choice(np.flatnonzero(direct.action_masks())))
        o1, r1, t1, _, _ = made.step(a)
        o2, r2, t2, _, _ = direct.step(a)
        assert (r1, t1) == (r2, t2)
        if t1:
            break
