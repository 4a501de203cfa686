"""Self-play's parts in RLlib's roles: ``algorithm`` (``GuandanPPO``, its config, the Ray
start), ``learner`` (``CandidatePPOModule``, ``CandidatePPOLearner``), ``env_runner``
(``VectorEnvRunner``: lockstep tables, GAE, compact samples)."""
