"""Statistics of duplicate results: bootstrap intervals per matchup and Bradley–Terry ratings.

Intervals are 95% percentile bootstraps over duplicate *pairs* (the pair is the unit that
cancels card luck), with a seeded generator so a table is reproducible.

Ratings: Bradley–Terry, ``P(i beats j) = 1 / (1 + exp(θ_j − θ_i))``, fitted by Newton's
method on the duplicate pair scores (a tie counts half a win each). A weak Gaussian prior
(``prior_precision``, default 0.01, i.e. a prior sd of 10 logits ≈ 1,700 Elo) keeps the fit
finite when one agent wins every pair, and centres the ratings (mean 0 logits, shown as mean
``ELO_BASE`` on the Elo scale, ``400 / ln 10`` Elo per logit). Standard errors come from the
observed Fisher information (projected to centred ratings); intervals are ±1.96 SE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

ELO_PER_LOGIT = 400.0 / np.log(10.0)
ELO_BASE = 1500.0
N_BOOT = 2000


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None = None,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the (weighted) mean and its 95% percentile interval.

    With ``weights`` the statistic is ``sum(values) / sum(weights)`` (a ratio such as gain
    per deal when pairs hold different numbers of deals); ``values`` are then per-pair sums.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
    if weights is None:
        est = float(v.mean())
    else:
        est = float(v.sum() / w.sum())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    boot = v[idx].sum(1) / w[idx].sum(1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return est, float(lo), float(hi)


def pair_score(side0: dict[str, Any], side1: dict[str, Any]) -> float:
    """Duplicate outcome for A from its two games, 1, 0.5 or 0 (the rule in
    ``experiments.evaluation.duplicate``'s module docstring)."""
    if side0["match_points"] is not None:
        mp = side0["match_points"] + side1["match_points"]
        if mp != 1.0:
            return 1.0 if mp > 1.0 else 0.0
    total = side0["gain"] + side1["gain"]
    return 1.0 if total > 0 else (0.0 if total < 0 else 0.5)


def matchup_stats(sides: list[tuple[dict[str, Any], dict[str, Any]]], seed: int = 0) -> dict:
    """Statistics of one matchup from team A's side of each duplicate pair.

    ``sides`` holds, per pair, A's view of its two games (``arena.team_view``: gain, deals,
    deals_won, match_points). Returns pair counts, ``dup_win_rate`` (ties count half),
    ``deal_win_rate`` (share of deals A's team won), ``mean_gain`` (A's signed level gain per
    deal), ``match_win_rate`` (match mode; capped draws count half), each with ``*_ci``.
    """
    if not sides:
        raise ValueError("no finished duplicate pairs to summarise")
    scores = np.array([pair_score(a, b) for a, b in sides], dtype=np.float64)
    gains = np.array([a["gain"] + b["gain"] for a, b in sides], dtype=np.float64)
    deals = np.array([a["deals"] + b["deals"] for a, b in sides], dtype=np.float64)
    won = np.array([a["deals_won"] + b["deals_won"] for a, b in sides], dtype=np.float64)
    out: dict[str, Any] = {
        "pairs": len(sides),
        "games": 2 * len(sides),
        "deals": int(deals.sum()),
        "dup_wins": int((scores == 1.0).sum()),
        "dup_ties": int((scores == 0.5).sum()),
        "dup_losses": int((scores == 0.0).sum()),
    }
    for name, vals, wts, k in (
        ("dup_win_rate", scores, None, 1),
        ("deal_win_rate", won, deals, 2),
        ("mean_gain", gains, deals, 3),
    ):
        est, lo, hi = bootstrap_ci(vals, wts, seed=seed + k)
        out[name], out[name + "_ci"] = est, [lo, hi]
    if sides[0][0]["match_points"] is not None:
        mp = np.array([a["match_points"] + b["match_points"] for a, b in sides]) / 2.0
        est, lo, hi = bootstrap_ci(mp, seed=seed + 4)
        out["match_win_rate"], out["match_win_rate_ci"] = est, [lo, hi]
    return out


def bradley_terry(
    n_agents: int,
    outcomes: Sequence[tuple[int, int, float]],
    prior_precision: float = 0.01,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit Bradley–Terry strengths (logits, centred) and their standard errors.

    ``outcomes`` lists ``(i, j, s)``: one comparison of agent i against agent j in which i
    scored ``s`` in [0, 1] (1 win, 0.5 tie, 0 loss).
    """
    theta, cov = _fit(n_agents, outcomes, prior_precision, max_iter, tol)
    centre = np.eye(n_agents) - 1.0 / n_agents
    se = np.sqrt(np.clip(np.diag(centre @ cov @ centre), 0.0, None))
    return theta - theta.mean(), se


def bradley_terry_anchored(
    n_agents: int, outcomes: Sequence[tuple[int, int, float]], anchor: int, **fit: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Strengths relative to agent ``anchor`` (its strength 0, standard error 0) and the
    standard errors of each difference to it."""
    theta, cov = _fit(n_agents, outcomes, **fit)
    var = np.diag(cov) + cov[anchor, anchor] - 2.0 * cov[:, anchor]
    return theta - theta[anchor], np.sqrt(np.clip(var, 0.0, None))


def _fit(
    n_agents: int,
    outcomes: Sequence[tuple[int, int, float]],
    prior_precision: float = 0.01,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """``(strengths, covariance)``: the penalised maximum-likelihood fit by Newton's method
    and the inverse of its observed information."""
    if n_agents < 1:
        raise ValueError("need at least one agent to rate")
    if prior_precision <= 0:
        raise ValueError("prior_precision must be > 0 (it keeps the fit finite)")
    wins = np.zeros((n_agents, n_agents), dtype=np.float64)
    games = np.zeros((n_agents, n_agents), dtype=np.float64)
    for i, j, s in outcomes:
        if i == j or not (0 <= i < n_agents and 0 <= j < n_agents):
            raise ValueError(f"bad comparison ({i}, {j}) for {n_agents} agents")
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"a comparison score must be in [0, 1], got {s}")
        wins[i, j] += s
        wins[j, i] += 1.0 - s
        games[i, j] += 1.0
        games[j, i] += 1.0
    theta = np.zeros(n_agents)
    lam = prior_precision

    def objective(t: np.ndarray) -> float:
        d = t[:, None] - t[None, :]
        return float((wins * -np.logaddexp(0.0, -d)).sum() - 0.5 * lam * (t @ t))

    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        grad = (wins - games * p).sum(1) - lam * theta
        w = games * p * (1.0 - p)
        hess = np.diag(w.sum(1)) - w + lam * np.eye(n_agents)
        step = np.linalg.solve(hess, grad)
        t_new, f_old = theta + step, objective(theta)
        while objective(t_new) < f_old - 1e-12 and np.abs(step).max() > 1e-12:
            step /= 2.0
            t_new = theta + step
        theta = t_new
        if np.abs(step).max() < tol:
            break
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    w = games * p * (1.0 - p)
    info = np.diag(w.sum(1)) - w + lam * np.eye(n_agents)
    return theta, np.linalg.inv(info)


def rating_against(
    opponents: Sequence[float], scores: Sequence[Sequence[float]], prior_precision: float = 0.01
) -> tuple[float, float]:
    """The Bradley–Terry strength (logits) of one agent against opponents of fixed
    strengths, and its standard error: ``scores[k]`` are its pair scores against opponent
    ``k``. A one-dimensional penalised maximum-likelihood fit (Newton), so rating a new agent
    never moves the others (a weak prior towards 0 keeps a clean sweep finite)."""
    t_opp = np.asarray(opponents, dtype=np.float64)
    wins = np.array([float(np.sum(s)) for s in scores])
    games = np.array([float(len(s)) for s in scores])
    theta = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(t_opp - theta))
        grad = float((wins - games * p).sum()) - prior_precision * theta
        info = float((games * p * (1.0 - p)).sum()) + prior_precision
        step = grad / info
        theta += float(np.clip(step, -2.0, 2.0))
        if abs(step) < 1e-10:
            break
    p = 1.0 / (1.0 + np.exp(t_opp - theta))
    info = float((games * p * (1.0 - p)).sum()) + prior_precision
    return theta, 1.0 / np.sqrt(info)


def elo_table(
    names: Sequence[str],
    outcomes: Sequence[tuple[int, int, float]],
    anchor: str | None = None,
    anchor_rating: float = ELO_BASE,
) -> list[dict]:
    """Ratings on the Elo scale with 95% intervals, best first: centred on ``ELO_BASE``, or
    with ``anchor``'s rating fixed at ``anchor_rating`` (intervals: of the difference to it)."""
    if anchor is None:
        theta, se = bradley_terry(len(names), outcomes)
        base = ELO_BASE
    else:
        theta, se = bradley_terry_anchored(len(names), outcomes, list(names).index(anchor))
        base = anchor_rating
    rows = []
    for k, name in enumerate(names):
        r, h = base + ELO_PER_LOGIT * theta[k], 1.96 * ELO_PER_LOGIT * se[k]
        rows.append(
            {
                "agent": name,
                "rating": float(r),
                "rating_ci": [float(r - h), float(r + h)],
                "se": float(ELO_PER_LOGIT * se[k]),
                "comparisons": int(sum(1 for i, j, _ in outcomes if k in (i, j))),
            }
        )
    rows.sort(key=lambda x: (-x["rating"], x["agent"]))
    return rows
