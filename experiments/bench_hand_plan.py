"""Old name of ``experiments.bench.hand_plan`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
