"""Measuring agents against each other: ``duplicate`` (pair seeds, seating, one game, the
pair loop, ``evaluate``), ``ratings`` (statistics and Bradley–Terry) and ``tournament/``
(resumable round robins: ``python -m experiments.evaluation.tournament``)."""
