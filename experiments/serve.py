"""Old name of ``experiments.hosts.serve`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
