"""The warm start: ``data`` (heuristic decisions, bit-packed and cached) and ``bc``
(behaviour cloning of a ``CandidateNet`` on them)."""
