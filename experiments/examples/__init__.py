"""Worked examples that use the env from other code: ``torch_loop`` (a plain PyTorch loop),
``interop_torchrl`` and ``interop_tianshou`` (other RL libraries)."""
