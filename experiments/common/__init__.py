"""Pieces every experiment package may use: typed configs (``typed_config``)."""
