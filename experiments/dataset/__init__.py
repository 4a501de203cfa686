"""Game datasets: the decisions of recorded games, for offline RL and imitation.

    python -m experiments.dataset heuristic random --pairs 100 --random-levels \\
        --random-tribute --out data/heuristic_vs_random.npz

``record_games`` plays the games of any agents (specs of ``agents.registry``) on the
tournament's duplicate schedule (``experiments.evaluation.tournament.schedule``; one spec:
it plays all four seats, one game per pair seed) and returns every decision as a
``"games"`` dataset (``guandan_env.envs.dataset``: bit-packed observations and masks,
actions, seats, rewards, deal and episode boundaries, and per game the seeds that replay it).
``docs/datasets.md`` documents the fields, dtypes and sizes; ``load`` reads a file back
(numpy arrays; ``guandan_env.envs.dataset.torch_dataset`` for torch).
"""

from guandan_env.envs.dataset import load_games as load

from .record import record_games, save

__all__ = ["record_games", "save", "load"]
