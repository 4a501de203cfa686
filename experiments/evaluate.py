"""``python -m experiments.evaluate``: the frozen evaluation suite
(``experiments.evaluation.suite``)."""

from experiments.evaluation.suite.__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())
