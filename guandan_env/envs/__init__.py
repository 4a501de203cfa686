"""Environments over the core and encoders: the PettingZoo AEC env, the batched vector env,
Gymnasium wrappers, scenarios, replays, interop adapters, OpenSpiel, and the conformance
harness (``testing``)."""
