"""Old name of ``experiments.hosts.web`` (``experiments._aliases``)."""

from experiments._aliases import forward

forward(__spec__.name, __name__)
