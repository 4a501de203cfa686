"""Runnable experiments on guandan-env, as packages by job. The order of imports inside
``experiments`` is ``common`` ← ``evaluation`` ← ``selfplay`` ← ``hosts``, ``bench``,
``examples``, ``dataset`` (``tests/project/test_layers.py`` enforces it):

* ``common/``: typed configs (``typed_config``).
* ``evaluation/``: ``duplicate`` (pair seeds, seating, one game, the pair loop,
  ``evaluate``), ``ratings``, ``tournament/``
  (``python -m experiments.evaluation.tournament``).
* ``selfplay/``: the self-play library and ``python -m experiments.selfplay``: ``config``,
  ``trainer``, ``rllib/`` (``algorithm``, ``learner``, ``env_runner``), ``warm_start/``
  (``data``, ``bc``), ``log``, ``ablation``, ``plot``.
* ``hosts/``: ``play`` (terminal game), ``replay`` (viewer), the protocol server
  (``serve``) and the web table (``web/``).
* ``bench/``: benchmark scripts (``python -m experiments.bench.core`` …).
* ``examples/``: the env from other code (``torch_loop``, ``interop_torchrl``,
  ``interop_tianshou``).
* ``dataset/``: game datasets (``python -m experiments.dataset``: any agents' games as
  bit-packed decisions; the format and its numpy reader are ``guandan_env.envs.dataset``,
  ``docs/datasets.md``).

The flat module names of 0.2 (``python -m experiments.play``, ``experiments.arena`` …) still
work until 0.4: ``experiments._aliases`` lists them.
"""
