"""The frozen evaluation suites: what a suite version fixes, and nothing else.

A suite is a named, versioned protocol: duplicate single deals with random levels and tribute
(R-6 scoring), fixed pair seeds, a fixed opponent list and a fixed number of pairs per
opponent. Anything that would change a reported number (a seed, an opponent, the pairs, the
env config) changes the version: ``tests/evaluation/golden/suites.json`` holds each
version's definition and first pair seeds, and the test refuses a change without a new
version.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..duplicate import pair_games


@dataclass(frozen=True)
class Suite:
    name: str  # e.g. guandan-eval-v1 (what a citation names)
    opponents: tuple[str, ...]  # agent specs, fixed (pretrained models by exact name)
    anchor: str = "heuristic"  # its rating is fixed at ANCHOR_RATING
    pairs: int = 1000  # duplicate pairs per opponent; fewer are "not comparable"
    seed: int = 20261202  # the tournament seed: pair k plays pair_seed(seed, k) in every matchup
    mode: str = "deal"
    config: dict[str, Any] = field(
        default_factory=lambda: {"random_levels": True, "random_tribute": True}
    )
    # SHA-256 of each pretrained opponent's weights file: a re-exported model is refused
    weights: dict[str, str] = field(default_factory=dict)

    def check_weights(self) -> None:
        """``ValueError`` if a pretrained opponent's shipped weights are not the frozen ones."""
        from agents.zoo import weights_sha256

        for spec in self.opponents:
            if not spec.startswith("pretrained:"):
                continue
            name = spec.split(":", 1)[1]
            if self.weights.get(spec) != weights_sha256(name):
                raise ValueError(
                    f"{spec}'s shipped weights are not those {self.name} was frozen with: a "
                    "changed model needs a new suite version"
                )

    def pair_seeds(self, n: int) -> list[int]:
        """The deal seed of the first ``n`` pairs (both games of a pair share it)."""
        return [g.seed for g in pair_games(self.seed, n) if g.swap == 0]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["opponents"] = list(self.opponents)
        if not d["weights"]:
            del d["weights"]  # suites without pretrained opponents
        return d


ANCHOR_RATING = 1500.0

# SHA-256 of each shipped model's weights file when a suite was frozen with it (a model
# never changes under its name, so every suite naming it freezes the same file)
FROZEN_WEIGHTS: dict[str, str] = {
    "pretrained:default-v1": "0be2ae4f7031af57f177f02ac94f4fc3bc1473f0cc88a5b9eadd569213b70930",
    "pretrained:long-v1": "a66815de76ec23813c6cdf2f7f8040ae3895140f5f535dbd0272664756355d84",
    "pretrained:long-v2": "7cf99d30549613ddbd9a60ae5382f683bf70acaea92c209ec864ab4cbcc25898",
    "pretrained:long-v3": "f9e132261fb46b8f1f764acb468707dd36aa53a141c120bb8bd4583de3d82cfc",
    "pretrained:default-v2": "6d9ccc63df9085a1d8f79f00eb4f819f62a7fb608bbf5ffce6119a24b3faae64",
}


def _suite(name: str, *opponents: str) -> Suite:
    frozen = {o: FROZEN_WEIGHTS[o] for o in opponents if o.startswith("pretrained:")}
    return Suite(name=name, opponents=opponents, weights=frozen)


_V1_OPPONENTS = ("random", "heuristic", "pretrained:default-v1", "pretrained:long-v1")
SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        _suite("guandan-eval-v1", *_V1_OPPONENTS),
        # v2 adds long-v2 (the long recipe with a late learning-rate decay, 120 M samples);
        # v1's four opponents stay, so its matchups among them are replayed game for game
        _suite("guandan-eval-v2", *_V1_OPPONENTS, "pretrained:long-v2"),
        # v3 adds long-v3 (the long recipe continued to 3 hours, 188 M samples); v2's five
        # opponents stay, so their ten matchups are the same games
        _suite("guandan-eval-v3", *_V1_OPPONENTS, "pretrained:long-v2", "pretrained:long-v3"),
        # v4 adds default-v2 (the default recipe of 2026-12-04: the reply block, 27 minutes);
        # v3's six opponents stay, so their fifteen matchups are the same games
        _suite(
            "guandan-eval-v4",
            *_V1_OPPONENTS,
            "pretrained:long-v2",
            "pretrained:long-v3",
            "pretrained:default-v2",
        ),
    )
}
CURRENT = "guandan-eval-v4"


def get_suite(name: str | None = None) -> Suite:
    """A suite by name (default: the current one); ``ValueError`` naming the known ones."""
    name = name or CURRENT
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    return SUITES[name]
