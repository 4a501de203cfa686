"""Self-play training on RLlib: ``python -m experiments.selfplay``.

    python -m experiments.selfplay [--config configs/default.yaml] [key=value ...]
    python -m experiments.selfplay --resume runs/default [stop.time_s=3600 ...]
    python -m experiments.selfplay --address auto runners.num=16 runners.idle=0  # a Ray cluster

One run, all inside ``stop.time_s`` (the warm start counts):

1. **Warm start.** The rule-based ``heuristic`` plays ``warm_start.decisions`` decisions
   (parallel Ray tasks, cached in ``cache_dir``) and a ``CandidateNet`` is behaviour-cloned on
   them (``warm_start.bc``). It initialises the learner, anchors it (a KL penalty towards
   the BC policy, weighted by the ``anchor.coeff`` schedule) and joins the league.
2. **PPO** (``rllib.algorithm.GuandanPPO``) fed by ``VectorEnvRunner``s: each runner
   plays ``runners.tables`` tables in lockstep, every seat with one batched forward pass per
   policy; a share ``league.self_share`` of the episodes (all, by default) is pure
   self-play, the rest meet a league member (frozen snapshots taken every
   ``league.snapshot_every`` iterations, and the BC net) drawn by prioritised fictitious
   self-play. With remote runners, sampling overlaps learning; ``learners.num`` spreads the
   update over Learner actors (``experiments.selfplay.rllib.algorithm``).
3. **Evaluation beside training**: every ``eval.every_s`` seconds a Ray task plays the
   current greedy policy against ``eval.opponents`` in duplicate deals; its result is logged
   when ready (tagged with the samples and time at which the weights were taken). After
   training, ``eval.final_pairs`` pairs per opponent.

Writes ``runs/<name>/``: ``config.yaml``, TensorBoard events, ``progress.csv``, ``eval.csv``,
``bc/`` (the warm-start policy and its record), ``checkpoints/iter_NNNNNN/`` (RLlib state,
``policy.pt``, ``league.pt``, ``trainer_state.json`` written last) and ``summary.json``.
Ctrl-C saves a checkpoint and the summary and prints how to resume.

Modules, by job:

* ``cli`` (the command line) and ``__main__``;
* ``config``: the typed run config (``RunConfig``), YAML files and overrides;
* ``trainer``: ``SelfPlayTrainer``, one run's loop, checkpoints and resume;
* ``rllib/``: RLlib's roles: ``algorithm`` (``GuandanPPO`` and its config), ``learner``
  (the RLModule and the PPO Learner), ``env_runner`` (``VectorEnvRunner``);
* ``warm_start/``: ``data`` (heuristic decisions, bit-packed) and ``bc`` (behaviour cloning);
* ``log`` (metrics, TensorBoard, CSV, progress line), ``ablation``, ``plot``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SelfPlayTrainer", "choose_run_dir", "main"]


def __getattr__(name: str) -> Any:  # lazy: importing a submodule needs neither Ray nor torch
    if name in __all__:
        from experiments.selfplay import cli

        return getattr(cli, name)
    raise AttributeError(f"module 'experiments.selfplay' has no attribute {name!r}")
