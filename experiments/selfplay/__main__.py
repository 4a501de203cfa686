"""``python -m experiments.selfplay``."""

from experiments.selfplay.cli import main

raise SystemExit(main())
