"""Registers the ``alone`` marker's turn-taking between the xdist workers
(``helpers.alone``)."""

from helpers.alone import pytest_runtest_protocol  # noqa: F401  (a hook, found by name)
