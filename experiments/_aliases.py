"""The module names of version 0.2, kept for one version (removed in 0.4).

``experiments/`` was flat in 0.2; its modules now live in packages by job. Each old name
below is a two-line module that forwards here: ``python -m experiments.play`` runs
``experiments.hosts.play`` (with a note on stderr), and ``import experiments.arena`` gives
``experiments.evaluation.duplicate`` itself.
"""

from __future__ import annotations

import importlib
import runpy
import sys

MOVED = {
    "experiments.ablation": "experiments.selfplay.ablation",
    "experiments.arena": "experiments.evaluation.duplicate",
    "experiments.bench_core": "experiments.bench.core",
    "experiments.bench_hand_plan": "experiments.bench.hand_plan",
    "experiments.bench_selfplay": "experiments.bench.selfplay",
    "experiments.bench_vector": "experiments.bench.vector",
    "experiments.interop_tianshou": "experiments.examples.interop_tianshou",
    "experiments.interop_torchrl": "experiments.examples.interop_torchrl",
    "experiments.play": "experiments.hosts.play",
    "experiments.plot_learning_curve": "experiments.selfplay.plot",
    "experiments.replay": "experiments.hosts.replay",
    "experiments.serve": "experiments.hosts.serve",
    "experiments.torch_loop_example": "experiments.examples.torch_loop",
    "experiments.tournament": "experiments.evaluation.tournament",
    "experiments.web": "experiments.hosts.web",
}


def forward(old: str, run_name: str) -> None:
    """Run (``python -m OLD``) or become (``import OLD``) the module ``OLD`` moved to."""
    new = MOVED[old]
    if run_name == "__main__":
        print(f"note: python -m {old} is now python -m {new}", file=sys.stderr)
        runpy.run_module(new, run_name="__main__", alter_sys=True)
        return
    sys.modules[old] = importlib.import_module(new)
