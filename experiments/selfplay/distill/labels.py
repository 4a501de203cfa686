"""Search labels for distillation: self-play deals of a search agent, its searches recorded.

All four seats play ``search:[OPTIONS:]POLICY`` (``agents.search_agent``). Every decision
with a choice is recorded; where the agent searched, also the moves it tried, their mean
level gains and standard errors over the sampled deals, and its pick. Per decision, numpy
arrays of length ``n``:

==============  ===========================  ==============================================
``obs_bits``    ``uint8 (n, OBS_BYTES)``     the acting seat's observation, bits (``pack_obs``)
``obs_scalar``  ``float32 (n,)``             its scalar entry
``mask_bits``   ``uint8 (n, MASK_BYTES)``    legal actions (``pack_masks``)
``action``      ``int16 (n,)``               the move played (the search's pick, or the policy's)
``searched``    ``bool (n,)``                whether the decision was searched
``cand``        ``int16 (n, K)``             the moves tried (policy order; -1 past the last)
``gain``        ``float32 (n, K)``           their mean level gain for the seat's team
``stderr``      ``float32 (n, K)``           its standard error over the sampled deals
``deal``        ``int32 (n,)``               deal index (split train and held-out by it)
==============  ===========================  ==============================================

Deal ``d`` is played from env seed ``derive_seed(seed, d)``; worker ``w`` of ``W`` plays
deals ``w, w + W, …`` until its time budget ends. The deals use random levels and tribute,
like the evaluation suite; pick a ``seed`` other than the suite's so no evaluated deal is
trained on.

CLI: ``python -m experiments.selfplay.distill.labels pretrained:default --minutes 40 --workers 2
--out runs/labels_default``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import make_agent
from agents.search_agent import SearchAgent
from experiments.evaluation.duplicate import derive_seed
from guandan_env.encoding.packing import MASK_BYTES, OBS_BYTES, pack_masks, pack_obs
from guandan_env.envs.aec import AGENTS, raw_env

GAME: dict[str, Any] = dict(
    mode="deal", random_levels=True, random_tribute=True, info_view=True, illegal_action="raise"
)
DEFAULT_SEARCH = "worlds=32,candidates=8,margin=0.5"


def search_spec(policy: str, options: str = DEFAULT_SEARCH) -> str:
    return f"search:{options}:{policy}" if options else f"search:{policy}"


def play_deal(env: raw_env, agents: list[SearchAgent], deal: int, seed: int) -> dict:
    """Play deal ``deal`` with the search agents; the module's arrays of its decisions."""
    env_seed = derive_seed(seed, deal)
    env.reset(seed=env_seed)
    for s, agent in enumerate(agents):
        agent.reset(seed=derive_seed(env_seed, s))
    k = agents[0].params.candidates
    rows: dict[str, list] = {key: [] for key in ("obs", "mask", "action", "searched")}
    cand, gain, err = [], [], []
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            break
        agent = agents[AGENTS.index(name)]
        ob = env.observe(name)
        searched_before = agent.stats.searched
        a = int(agent.act(ob, env.infos[name]))
        if int(ob["action_mask"].sum()) > 1:
            searched = agent.stats.searched > searched_before
            rows["obs"].append(ob["observation"])
            rows["mask"].append(ob["action_mask"])
            rows["action"].append(a)
            rows["searched"].append(searched)
            c = np.full(k, -1, dtype=np.int16)
            g = np.zeros(k, dtype=np.float32)
            e = np.zeros(k, dtype=np.float32)
            if searched:
                rec = agent.last
                m = rec.candidates.size
                c[:m], g[:m], e[:m] = rec.candidates, rec.result.mean, rec.result.stderr
            cand.append(c)
            gain.append(g)
            err.append(e)
        env.step(a)
    n = len(rows["action"])
    if not n:
        return empty_labels(k)
    bits, scalar = pack_obs(np.stack(rows["obs"]).astype(np.float32))
    return {
        "obs_bits": bits,
        "obs_scalar": scalar,
        "mask_bits": pack_masks(np.stack(rows["mask"])),
        "action": np.asarray(rows["action"], dtype=np.int16),
        "searched": np.asarray(rows["searched"], dtype=bool),
        "cand": np.stack(cand),
        "gain": np.stack(gain),
        "stderr": np.stack(err),
        "deal": np.full(n, deal, dtype=np.int32),
    }


def empty_labels(k: int) -> dict[str, np.ndarray]:
    """Zero-length arrays of every field, ``k`` moves tried per search."""
    return {
        "obs_bits": np.zeros((0, OBS_BYTES), np.uint8),
        "obs_scalar": np.zeros(0, np.float32),
        "mask_bits": np.zeros((0, MASK_BYTES), np.uint8),
        "action": np.zeros(0, np.int16),
        "searched": np.zeros(0, bool),
        "cand": np.zeros((0, k), np.int16),
        "gain": np.zeros((0, k), np.float32),
        "stderr": np.zeros((0, k), np.float32),
        "deal": np.zeros(0, np.int32),
    }


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def save_labels(path: Path, labels: dict[str, np.ndarray]) -> None:
    """Write ``labels`` to ``path`` (``.npz``) atomically."""
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **labels)
    tmp.replace(path)


def load_labels(path: str | Path) -> dict[str, np.ndarray]:
    """The labels of a file, or of every ``shard_*.npz`` of a directory, concatenated."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no labels at {path} (a shard_*.npz directory or an .npz)")
    files = sorted(path.glob("shard_*.npz")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no label shards (shard_*.npz) in {path}")
    parts = []
    for f in files:
        with np.load(f, allow_pickle=False) as z:
            parts.append(check_labels({k: z[k] for k in z.files}, f))
    return concat(parts)


def check_labels(labels: dict[str, np.ndarray], where: object) -> dict[str, np.ndarray]:
    """``labels`` if they have the module's arrays with matching shapes; else a
    ``ValueError`` naming the file and the problem (a file made elsewhere is untrusted)."""
    expected = empty_labels(labels["cand"].shape[1] if "cand" in labels else 0)
    missing = sorted(set(expected) - set(labels))
    if missing:
        raise ValueError(f"{where}: not distillation labels, no {missing}")
    n = labels["action"].shape[0]
    for key, empty in expected.items():
        a = labels[key]
        if a.dtype != empty.dtype or a.shape[1:] != empty.shape[1:] or a.shape[0] != n:
            raise ValueError(
                f"{where}: {key} is {a.dtype} {a.shape}, expected {empty.dtype} "
                f"({n}, {', '.join(map(str, empty.shape[1:]))})"
            )
    return labels


def run_worker(
    spec: str, seed: int, worker: int, workers: int, seconds: float, max_deals: int, out: str
) -> dict[str, int]:
    """Play deals ``worker, worker + workers, …`` until ``seconds`` pass; save every deal."""
    agents = [make_agent(spec, seed=seed) for _ in AGENTS]
    env = raw_env(**GAME)
    t0 = time.monotonic()
    parts: list[dict[str, np.ndarray]] = []
    path = Path(out) / f"shard_{worker:02d}.npz"
    deal = worker
    while time.monotonic() - t0 < seconds and deal < max_deals:
        parts.append(play_deal(env, agents, deal, seed))
        save_labels(path, concat(parts))
        n = sum(p["action"].size for p in parts)
        s = sum(int(p["searched"].sum()) for p in parts)
        left = max(0.0, seconds - (time.monotonic() - t0))
        print(
            f"worker {worker}: {len(parts)} deals, {n} decisions, {s} searched "
            f"({time.monotonic() - t0:.0f} s, {left:.0f} s left)",
            file=sys.stderr,
            flush=True,
        )
        deal += workers
    return {"deals": len(parts), "decisions": sum(p["action"].size for p in parts)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay.distill.labels", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("policy", help="the policy searched over, e.g. pretrained:default")
    p.add_argument("--search", default=DEFAULT_SEARCH, help="search options (search_agent)")
    p.add_argument("--minutes", type=float, default=30.0, help="time budget per worker")
    p.add_argument("--max-deals", type=int, default=10**9)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", required=True, help="directory for the shards")
    a = p.parse_args(argv)
    if a.workers < 1 or a.minutes <= 0:
        p.error("--workers must be >= 1 and --minutes > 0")
    spec = search_spec(a.policy, a.search)
    make_agent(spec, seed=0)  # a bad spec fails here, before any worker starts
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"spec": spec, "seed": a.seed, "workers": a.workers, "minutes": a.minutes}
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    args = [
        (spec, a.seed, w, a.workers, a.minutes * 60, a.max_deals, str(out))
        for w in range(a.workers)
    ]
    if a.workers == 1:
        results = [run_worker(*args[0])]
    else:
        with mp.get_context("spawn").Pool(a.workers) as pool:
            results = pool.starmap(run_worker, args)
    meta["results"] = results
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
