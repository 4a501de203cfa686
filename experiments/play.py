"""Old name of ``experiments.hosts.play`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
