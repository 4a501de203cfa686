"""Old name of ``experiments.examples.torch_loop`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
