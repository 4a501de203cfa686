"""Old name of ``experiments.examples.interop_torchrl`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
