"""Benchmark guandan_env.encoding.hand_plan: speed per hand and accuracy against an exact search.

    nice -n 10 python -m experiments.bench.hand_plan [--repeats 7]
        [--deals 200] [--sub 400] [--out results/bench_hand_plan.json]

Speed: median over ``--repeats`` timed calls, per hand, at several batch sizes (hands are
real 27-card deals). Accuracy: real deals and random sub-hands (0..27 cards of a deal, as
left after plays) against an exact lowest-card-first search over the action table.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from statistics import median

import numpy as np

from experiments.bench import write_json
from guandan_env.core import actions as T
from guandan_env.encoding import hand_plan as hp


def deals(rng: np.random.Generator, n: int, sub: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Real deals (``sub``: a random 0..27-card part of each) and random levels."""
    deck = np.repeat(np.arange(54), 2)
    out = np.zeros((n, 54), dtype=np.uint8)
    for i in range(n):
        size = int(rng.integers(0, 28)) if sub else 27
        np.add.at(out[i], rng.permutation(deck)[:size], 1)
    return out, rng.integers(0, 13, size=n)


class ExactReference:
    """Fewest plays: cover the lowest remaining card with every play containing it."""

    def __init__(self) -> None:
        self.by: list[list[tuple]] = [[] for _ in range(15)]
        seen = set()
        for a in range(1, T.RETURN_BASE):
            if T.KIND[a] == T.STRAIGHT_FLUSH:
                continue
            nat = tuple((int(r), int(T.NAT[a, r])) for r in np.flatnonzero(T.NAT[a]))
            key = (nat, int(T.WILDS[a]))
            if nat and key not in seen:
                seen.add(key)
                for r, _ in nat:
                    self.by[r].append(key)
        self.memo: dict[tuple, int] = {}

    def __call__(self, c: tuple[int, ...], w: int) -> int:
        hit = self.memo.get((c, w))
        if hit is not None:
            return hit
        r = next((i for i in range(15) if c[i]), -1)
        res = (1 if w else 0) if r < 0 else 99
        for nat, pw in self.by[r] if r >= 0 else ():
            if pw <= w and all(c[q] >= k for q, k in nat):
                c2 = list(c)
                for q, k in nat:
                    c2[q] -= k
                res = min(res, 1 + self(tuple(c2), w - pw))
        if len(self.memo) > 3_000_000:
            self.memo.clear()
        self.memo[(c, w)] = res
        return res


def _timed(fn, repeats: int) -> float:
    fn()  # warm-up (lazy tables)
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return median(samples)


def bench_speed(repeats: int, sizes: list[int], dp_sizes: list[int]) -> dict:
    rng = np.random.default_rng(0)
    hands, levels = deals(rng, max(sizes + dp_sizes))
    nat, bj, rj, w = hp.rank_states(hands, levels)
    out: dict[str, dict[str, float]] = {}
    for n in sizes:
        h, lv = hands[:n], levels[:n]
        a = (nat[:n], bj[:n], rj[:n], w[:n])
        row = {
            "rank_states": _timed(lambda h=h, lv=lv: hp.rank_states(h, lv), repeats),
            "plays_needed_fast": _timed(lambda a=a: hp.plays_needed(*a), repeats),
            "plays_needed_groups_only": _timed(lambda a=a: hp.fast_plays(*a, rounds=0), repeats),
            "plan_features_fast": _timed(lambda a=a, lv=lv: hp.plan_features(*a, lv), repeats),
            "hand_plan_features": _timed(lambda h=h, lv=lv: hp.hand_plan_features(h, lv), repeats),
        }
        out[str(n)] = {k: v / n * 1e6 for k, v in row.items()}
    for n in dp_sizes:
        a = (nat[:n], bj[:n], rj[:n], w[:n])
        t = _timed(lambda a=a: hp.plays_needed(*a, method="dp"), max(1, repeats // 3))
        out.setdefault(str(n), {})["plays_needed_dp"] = t / n * 1e6
    return out


def bench_accuracy(n_deals: int, n_sub: int) -> dict:
    rng = np.random.default_rng(1)
    ref = ExactReference()
    res = {}
    for name, (hands, levels) in (
        ("real_deals", deals(rng, n_deals)),
        ("sub_hands", deals(rng, n_sub, sub=True)),
    ):
        nat, bj, rj, w = hp.rank_states(hands, levels)
        want = np.array(
            [
                ref(tuple(int(x) for x in nat[i]) + (int(bj[i]), int(rj[i])), int(w[i]))
                for i in range(len(w))
            ]
        )
        for method, got in (
            ("fast", hp.plays_needed(nat, bj, rj, w)),
            ("groups_only", hp.fast_plays(nat, bj, rj, w, rounds=0)),
            ("dp", hp.plays_needed(nat, bj, rj, w, method="dp")),
        ):
            d = got.astype(int) - want
            res[f"{name}/{method}"] = {
                "hands": int(len(d)),
                "exact_share": float((d == 0).mean()),
                "mean_error": float(d.mean()),
                "max_error": int(d.max()),
                "below_true_minimum": int((d < 0).sum()),
                "error_histogram": {
                    str(k): int(v) for k, v in zip(*np.unique(d, return_counts=True), strict=True)
                },
            }
    return res


def import_time_ms() -> float:
    code = (
        "import time, numpy, guandan_env.core.cards, guandan_env.core.actions; "
        "t = time.perf_counter(); import guandan_env.encoding.hand_plan; "
        "print((time.perf_counter() - t) * 1e3)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    return median(runs)


def table_bytes() -> int:
    total = sum(x.nbytes for x in hp._split_tables())
    tb = hp._tables(hp.MODELS["accurate"])
    total += sum(a.nbytes for lst in (tb.t_src, tb.t_cost, tb.pair_need) for a in lst)
    return int(total)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--deals", type=int, default=200, help="real deals for accuracy")
    ap.add_argument("--sub", type=int, default=400, help="sub-hands for accuracy")
    ap.add_argument("--out", default="results/bench_hand_plan.json")
    args = ap.parse_args()
    speed = bench_speed(args.repeats, [1024, 4096, 16384], [256, 1024])
    print("µs per hand (median):")
    for n, row in speed.items():
        print(f"  batch {n:>6}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()))
    acc = bench_accuracy(args.deals, args.sub)
    print("accuracy against the exact search:")
    for k, v in acc.items():
        print(
            f"  {k:<24} exact {v['exact_share']:.3f}  mean err {v['mean_error']:.3f}  "
            f"max err {v['max_error']}  below min {v['below_true_minimum']}  {v['error_histogram']}"
        )
    imp = import_time_ms()
    mem = table_bytes()
    print(f"import guandan_env.encoding.hand_plan: {imp:.1f} ms; lookup tables {mem / 1e6:.2f} MB")
    out = {
        "machine": {"python": platform.python_version(), "numpy": np.__version__},
        "repeats": args.repeats,
        "us_per_hand": speed,
        "accuracy": acc,
        "import_ms": imp,
        "table_bytes": mem,
    }
    write_json(out, args.out)


if __name__ == "__main__":
    main()
