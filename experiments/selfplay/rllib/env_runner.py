"""An RLlib ``EnvRunner`` over the batched engine: ~1,024 tables, one forward pass per policy.

``VectorEnvRunner`` owns a ``guandan_env.VectorGuandanEnv`` and plays every seat of every
table itself, in lockstep:

* per table and episode (one deal, random levels and tribute) it draws a matchup: all four
  seats are the learner (``self``), or the learner's team (0 or 1 at random) meets a frozen
  league member — a past snapshot or the behaviour-cloned warm start — drawn by prioritised
  fictitious self-play (weight ``(1 - win rate of the learner against it) ** pfsp_power``,
  the running win rate seen by this runner);
* per lockstep step it groups the tables by the policy to act and runs one batched
  ``CandidateNet`` forward per group (Gumbel-max sampling with the runner's numpy RNG);
* it keeps the learner's decisions only, bit-packed (``guandan_env.encoding.packing``), linked per
  (table, seat) trajectory; when a deal ends it closes the trajectories with the seat's
  reward (±1..3, R-6.3) and computes GAE (γ, λ) backwards along them with the values of the
  acting forward pass.

``sample()`` advances every table ``steps_per_call`` lockstep steps (then more only if fewer
than a quarter of that many learner decisions are complete, e.g. before the first deals end)
and returns the learner decisions of the deals that finished as one dict of arrays
(``SAMPLE_COLUMNS``); decisions of deals still open stay for the next call. A fixed amount of
work per call keeps the sampler's time steady (deal ends come in waves at first, as all
tables start together), so the learner, not the wait for a full batch, sets the pace.
``get_metrics()`` reports ``num_env_steps_sampled`` (learner decisions returned, what PPO
counts), ``num_game_steps`` (all decisions, opponents' included) and the learner's results per
opponent. Weights arrive through ``set_state`` (RLlib's ``sync_weights``); league members
through ``set_league``. Equal seeds give equal samples.

An *idle* runner (worker index ``>= idle_from``, from ``runners.idle``) runs under Linux
``SCHED_IDLE`` for its life, with ``idle_tables`` tables: it samples only on CPU time the
other runners and the learner leave (on 2 cores, the learner's waits for the main runner).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Collection
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.core import COMPONENT_RL_MODULE, DEFAULT_MODULE_ID
from ray.rllib.env.env_runner import EnvRunner
from ray.rllib.utils.checkpoints import Checkpointable
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED, WEIGHTS_SEQ_NO

from agents.candidate_inputs import upgrade_weights
from agents.candidate_net import CandidateNet, net_from_state, prepare_binary
from experiments.common.priority import enter_idle_priority
from experiments.selfplay.config import DEFAULTS, runner_config
from experiments.selfplay.rllib.heads import HIDDEN_DIM, HeadsConfig, TrainingHeads, hidden_hands
from experiments.selfplay.rllib.pruned_planning import AUDIT_EVERY, pruned_inputs
from guandan_env.core.config_keys import merge_known
from guandan_env.encoding.candidate_features import REST_DIM, STATE_DIM
from guandan_env.encoding.hand_plan import PlanCache
from guandan_env.encoding.packing import (
    BINARY,
    MASK_BYTES,
    OBS_BYTES,
    SCALAR_INDEX,
    pack_masks,
    unpack_masks,
)
from guandan_env.envs.vector import VectorGuandanEnv

MODULE_PREFIX = "net."  # the RLModule holds the CandidateNet as attribute ``net``
HEADS_PREFIX = "heads."  # ... and the training-only heads as ``heads`` (rllib.heads)
HEAD_COLUMNS = ("hidden", "outcome")  # shipped only when a training head is on
SAMPLE_COLUMNS = (
    "obs_bits",
    "obs_scalar",
    "mask_bits",
    "actions",
    "logp",
    "values",
    "advantages",
    "value_targets",
)
# the runner's keys and defaults: those of a self-play run (one source, selfplay_config)
DEFAULT_RUNNER_CONFIG: dict[str, Any] = runner_config(DEFAULTS)


def check_runner_config(cfg: dict | None) -> dict:
    out = merge_known(DEFAULT_RUNNER_CONFIG, cfg, "env runner config")
    if int(out["tables"]) < 1 or int(out["steps_per_call"]) < 1:
        raise ValueError("runner tables and steps_per_call must be >= 1")
    if int(out["plan_top_k"]) < 0 or int(out["plan_top_k"]) == 1:
        raise ValueError(
            f"plan_top_k must be 0 (plan every candidate) or >= 2, got {out['plan_top_k']}"
        )
    if not 0.0 <= float(out["skip_confident"]) < 1.0:
        raise ValueError(
            f"skip_confident must be 0 (off) or a probability in (0, 1), got "
            f"{out['skip_confident']}"
        )
    if not 0.0 <= float(out["self_share"]) <= 1.0:
        raise ValueError(f"self_share must be in [0, 1], got {out['self_share']}")
    if out["game"].get("mode", "deal") != "deal":
        raise ValueError("training runs on single deals (game.mode='deal')")
    return out


def take_rows(sample: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The decisions ``idx`` of a sample, each with its candidate rows (``cand_rest`` is
    ragged: ``cand_count`` rows per decision, in decision order)."""
    counts = sample["cand_count"].astype(np.int64)
    starts = np.cumsum(counts) - counts
    c = counts[idx]
    first = np.cumsum(c) - c
    take = np.repeat(starts[idx] - first, c) + np.arange(int(c.sum()))
    out = {k: v[idx] for k, v in sample.items() if k != "cand_rest"}
    out["cand_rest"] = sample["cand_rest"][take]
    return out


def minibatches(
    sample: dict[str, np.ndarray], size: int, rng: np.random.Generator, epochs: float = 1.0
):
    """Shuffled minibatches of a sample, each with its rows' candidate features (ragged).

    ``epochs`` passes: each whole pass a fresh shuffle of every decision; a fraction is one
    more shuffle cut after that share of the decisions (1.3: every decision once, then 30% of
    them again). A pass is cut into near-equal minibatches of at most ``size`` decisions, never
    a short tail: a tail of one decision has no advantage spread to normalise by (NaN)."""
    n = len(sample["actions"])
    whole, share = divmod(float(epochs), 1.0)
    passes = [n] * int(whole) + ([int(round(share * n))] if share > 0 else [])
    for take in passes:
        perm = rng.permutation(n)[:take]
        for part in np.array_split(perm, -(-take // size)):
            yield take_rows(sample, part)


def shards(minibatch: dict[str, np.ndarray], n: int) -> list[dict[str, np.ndarray]]:
    """``n`` near-equal parts of a minibatch, cut at decision boundaries (one per learner)."""
    rows = np.arange(len(minibatch["actions"]))
    return [take_rows(minibatch, part) for part in np.array_split(rows, n)]


def strip_prefix(state: dict[str, Any], prefix: str = MODULE_PREFIX) -> dict[str, Any]:
    """``CandidateNet`` weights from an RLModule state (keys ``net.*``; or another part's,
    ``prefix``). The training-only heads (``heads.*``) never come with the network's."""
    out = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
    if not out:
        raise ValueError(f"no '{prefix}*' weights in module state ({sorted(state)[:4]} …)")
    return out


ATTACHED_METRICS = "__metrics__"  # sample(attach_metrics=True): the runner's metrics


class _Store:
    """Learner decisions in growing arrays; ``prev`` links a trajectory backwards.

    Taking the finished decisions compacts the open ones (~45,000 decisions and ~900,000
    candidate rows at 1,024 tables) by gathering them into a spare set of arrays, which then
    becomes the store: no temporary arrays, so no fresh pages to fault in on every call (the
    copy-back through temporaries took 45-745 ms a call in one profile on this VM)."""

    def __init__(self, capacity: int, extra: tuple[str, ...] = ()) -> None:
        self.extra = extra  # columns shipped beside SAMPLE_COLUMNS
        self.n = 0
        self.m = 0  # candidates stored
        self._alloc(capacity)
        self.cand_rest = np.zeros((8 * capacity, REST_DIM), np.float32)
        self._spare_rest: np.ndarray | None = None

    def _alloc(self, cap: int) -> None:
        old = getattr(self, "cols", None)
        self.cap = cap
        self.cols = {
            "obs_bits": np.zeros((cap, OBS_BYTES), np.uint8),
            "obs_scalar": np.zeros(cap, np.float32),
            "mask_bits": np.zeros((cap, MASK_BYTES), np.uint8),
            "actions": np.zeros(cap, np.int64),
            "logp": np.zeros(cap, np.float32),
            "values": np.zeros(cap, np.float32),
            "advantages": np.zeros(cap, np.float32),
            "value_targets": np.zeros(cap, np.float32),
            "prev": np.full(cap, -1, np.int64),
            "state_feats": np.zeros((cap, STATE_DIM), np.float32),
            "cand_start": np.zeros(cap, np.int64),
            "cand_count": np.zeros(cap, np.int32),
            "complete": np.zeros(cap, bool),
        }
        if self.extra:  # training-only heads: their labels
            self.cols["hidden"] = np.zeros((cap, HIDDEN_DIM), np.uint8)  # the other hands
            self.cols["outcome"] = np.zeros(cap, np.int8)  # the deal's reward for the seat
        self._spare: dict[str, np.ndarray] | None = None
        if old is not None:
            for k, v in old.items():
                self.cols[k][: self.n] = v[: self.n]

    def append(self, state: np.ndarray, cand_rest: np.ndarray, cand_count) -> slice:
        """Room for ``len(state)`` decisions, their features stored (the acting pass's
        ``state`` and candidate ``rest`` blocks); the other columns are the caller's to fill."""
        count, m = state.shape[0], cand_rest.shape[0]
        if self.n + count > self.cap:
            self._alloc(max(2 * self.cap, self.n + count))
        if self.m + m > self.cand_rest.shape[0]:
            grown = np.zeros((max(2 * self.cand_rest.shape[0], self.m + m), REST_DIM), np.float32)
            grown[: self.m] = self.cand_rest[: self.m]
            self.cand_rest = grown
            self._spare_rest = None
        s = slice(self.n, self.n + count)
        c = self.cols
        c["complete"][s] = False
        c["state_feats"][s] = state
        c["cand_count"][s] = cand_count
        c["cand_start"][s] = self.m + np.cumsum(cand_count) - cand_count
        self.cand_rest[self.m : self.m + m] = cand_rest
        self.n += count
        self.m += m
        return s

    def _segments(self, idx: np.ndarray) -> np.ndarray:
        """Flat candidate indices of decisions ``idx``, in order."""
        counts = self.cols["cand_count"][idx].astype(np.int64)
        first = np.cumsum(counts) - counts
        return np.repeat(self.cols["cand_start"][idx] - first, counts) + np.arange(counts.sum())

    def take_complete(self, last: np.ndarray) -> dict[str, np.ndarray]:
        """Remove and return finished decisions; compact the open ones (relinking ``last``)."""
        c = self.cols
        done = c["complete"][: self.n]
        names = (*SAMPLE_COLUMNS, "state_feats", "cand_count", *self.extra)
        out = {k: c[k][: self.n][done] for k in names}
        out["cand_rest"] = self.cand_rest[self._segments(np.flatnonzero(done))]
        keep = np.flatnonzero(~done)
        kept = self._segments(keep)
        if self._spare_rest is None:
            self._spare_rest = np.empty_like(self.cand_rest)
        # mode="clip": unbuffered (the indices are in range)
        np.take(self.cand_rest, kept, axis=0, out=self._spare_rest[: kept.size], mode="clip")
        self.cand_rest, self._spare_rest = self._spare_rest, self.cand_rest
        self.m = kept.size
        newpos = np.full(self.n + 1, -1, np.int64)  # index -1 maps to -1
        newpos[keep] = np.arange(keep.size)
        if self._spare is None:
            self._spare = {k: np.empty_like(v) for k, v in c.items()}
        for k, v in c.items():
            np.take(v, keep, axis=0, out=self._spare[k][: keep.size], mode="clip")
        self.cols, self._spare = self._spare, c
        c = self.cols
        counts = c["cand_count"][: keep.size].astype(np.int64)
        c["cand_start"][: keep.size] = np.cumsum(counts) - counts
        prev = c["prev"][: keep.size]
        c["prev"][: keep.size] = np.where(prev >= 0, newpos[prev], -1)
        last[:] = np.where(last >= 0, newpos[last], -1)
        self.n = keep.size
        return out


class VectorEnvRunner(EnvRunner, Checkpointable):
    """See the module docstring. ``config.env_config`` holds ``DEFAULT_RUNNER_CONFIG`` keys."""

    def __init__(self, *, config, **kwargs) -> None:
        super().__init__(config=config, **kwargs)
        self.settings = check_runner_config(dict(self.config.env_config))
        torch.set_num_threads(1)
        self.worker_index = int(kwargs.get("worker_index") or 0)
        idle_from = int(self.settings["idle_from"])
        self.idle = bool(idle_from) and self.worker_index >= idle_from
        # an idle runner's actor process does nothing but sample, so it stays at SCHED_IDLE
        if self.idle and not enter_idle_priority():
            warnings.warn(
                f"env runner {self.worker_index}: this OS refused SCHED_IDLE; the idle runner "
                "samples at normal priority, sharing the CPUs with the learner",
                stacklevel=1,
            )
        self.seed = int(self.settings["seed"])
        self.rng = np.random.default_rng([self.seed, self.worker_index, 1])
        self.model_config = dict(self.settings["model"])
        self.net = CandidateNet(self.model_config).eval()
        self.heads_cfg = HeadsConfig.from_dict(self.settings["heads"])
        self.heads = (
            TrainingHeads(self.net.model_config["trunk"], self.heads_cfg).eval()
            if self.heads_cfg.any
            else None
        )
        self.league: list[tuple[str, CandidateNet]] = []
        self.league_stats: dict[str, list[float]] = {}  # name -> [games, wins] (decayed)
        self._active: np.ndarray | None = None  # league members new matchups draw from
        self._weights_seq_no = 0
        self.env: VectorGuandanEnv | None = None  # built on the first sample()
        self._counters = {
            "env_steps": 0,
            "game_steps": 0,
            "forced_steps": 0,
            "confident_steps": 0,  # learner decisions played but not kept (skip_confident)
            "candidates": 0,  # legal candidates of the decisions the network saw
            "candidates_planned": 0,  # of them, those planned in full (all without plan_top_k)
            "audit_decisions": 0,  # decisions scored in full as well (pruned_planning)
            "audit_mass_outside": 0.0,  # their policy mass outside the kept candidates
            "episodes": 0,
            "sample_s": 0.0,  # wall time in sample()
            "sample_cpu_s": 0.0,  # CPU time in sample(): below the wall time = CPU contention
        }
        self._vs: dict[str, list[float]] = {}  # per opponent: [games, reward sum, wins]
        self._steps = 0  # lockstep steps taken (the pruning audit's clock)
        self._plans = PlanCache(bits=20)  # hand plans repeat across steps (same answers, faster)

    # ------------------------------------------------------------------ RLlib contract
    def assert_healthy(self) -> None:
        assert self.net is not None

    def get_spaces(self):
        from ray.rllib.env import INPUT_ENV_SPACES

        spaces = (self.config.observation_space, self.config.action_space)
        return {INPUT_ENV_SPACES: spaces, DEFAULT_MODULE_ID: spaces}

    def stop(self) -> None:
        self.env = None

    def get_ctor_args_and_kwargs(self):
        return (), {"config": self.config}

    def get_checkpointable_components(self):
        return []

    def get_state(
        self,
        components: str | Collection[str] | None = None,
        *,
        not_components: str | Collection[str] | None = None,
        **kwargs,
    ) -> dict:
        weights = {MODULE_PREFIX + k: v.numpy() for k, v in self.net.state_dict().items()}
        if self.heads is not None:
            weights.update(
                {HEADS_PREFIX + k: v.numpy() for k, v in self.heads.state_dict().items()}
            )
        return {
            COMPONENT_RL_MODULE: {DEFAULT_MODULE_ID: weights},
            WEIGHTS_SEQ_NO: self._weights_seq_no,
        }

    def set_state(self, state: dict) -> None:
        if COMPONENT_RL_MODULE in state:
            seq = state.get(WEIGHTS_SEQ_NO, 0)
            if seq == 0 or self._weights_seq_no < seq:
                mstate = state[COMPONENT_RL_MODULE]
                if isinstance(mstate, ray.ObjectRef):  # sync_weights ships it by reference
                    mstate = ray.get(mstate)
                if isinstance(mstate, dict) and DEFAULT_MODULE_ID in mstate:
                    mstate = mstate[DEFAULT_MODULE_ID]
                weights = strip_prefix(mstate)
                weights = {k: torch.tensor(np.asarray(v)) for k, v in weights.items()}
                self.net.load_state_dict(weights)
                if self.heads is not None:
                    heads = strip_prefix(mstate, HEADS_PREFIX)
                    self.heads.load_state_dict(
                        {k: torch.tensor(np.asarray(v)) for k, v in heads.items()}
                    )
            if seq > 0:
                self._weights_seq_no = seq

    def set_main_weights(self, weights: dict) -> None:
        """Load ``CandidateNet`` weights into the learner's policy unconditionally (RLlib's
        ``sync_weights`` skips a state whose sequence number is not newer, as after a warm
        start or a restore, where the learner has not updated yet)."""
        weights = upgrade_weights(weights)
        self.net.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in weights.items()})

    def set_head_weights(self, weights: dict) -> None:
        """Load the training-only heads' weights unconditionally (after a restore)."""
        if self.heads is not None:
            self.heads.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in weights.items()})

    def set_league(self, members: list[tuple[str, dict]]) -> int:
        """Install frozen league members ``[(name, CandidateNet weights)]`` (same model)."""
        self.league = [(n, net_from_state(w, self.model_config)) for n, w in members]
        self._active = None
        for n, _ in self.league:
            self.league_stats.setdefault(n, [0.0, 0.0])
        return len(self.league)

    # ------------------------------------------------------------------ matchups
    def _pfsp_weights(self) -> np.ndarray:
        p = float(self.settings["pfsp_power"])
        w = []
        for name, _ in self.league:
            games, wins = self.league_stats[name]
            rate = (wins + 1.0) / (games + 2.0)  # prior: half
            w.append(max(1.0 - rate, 0.02) ** p)
        w = np.asarray(w, dtype=np.float64)
        return w / w.sum()

    def _pick_active(self) -> None:
        """The few league members new matchups draw from until the next ``sample()``: each
        policy at a table costs a forward pass per step, so fewer, larger batches."""
        k = int(self.settings["active_members"]) or len(self.league)
        k = min(k, len(self.league))
        self._active = (
            self.rng.choice(len(self.league), size=k, replace=False, p=self._pfsp_weights())
            if k
            else np.zeros(0, np.int64)
        )

    def _draw_matchups(self, tables: np.ndarray) -> None:
        """Controller per seat (0 = learner, k >= 1 = league member k - 1) for new episodes."""
        n = tables.size
        if n == 0:
            return
        ctrl = np.zeros((n, 4), dtype=np.int64)
        if self.league:
            if self._active is None:
                self._pick_active()
            league = self.rng.random(n) >= float(self.settings["self_share"])
            w = self._pfsp_weights()[self._active]
            member = self._active[self.rng.choice(self._active.size, size=n, p=w / w.sum())] + 1
            opp_team = self.rng.integers(0, 2, size=n)
            for s in range(4):
                ctrl[:, s] = np.where(league & (s % 2 == opp_team), member, 0)
        self._ctrl[tables] = ctrl

    # ------------------------------------------------------------------ sampling
    def _ensure_env(self) -> None:
        if self.env is not None:
            return
        b = int(self.settings["idle_tables" if self.idle else "tables"])
        self.env = VectorGuandanEnv(b, copy=False, **self.settings["game"])
        seed = int(np.random.SeedSequence([self.seed, self.worker_index, 2]).generate_state(1)[0])
        self._obs, self._mask, self._seat = self.env.reset(seed=seed)
        self._ctrl = np.zeros((b, 4), dtype=np.int64)
        self._draw_matchups(np.arange(b))
        self._last = np.full((b, 4), -1, dtype=np.int64)  # newest record per trajectory
        self._store = _Store(
            capacity=int(self.settings["steps_per_call"]) * b * 2 + 64 * b,
            extra=HEAD_COLUMNS if self.heads_cfg.labels else (),
        )
        self._ready = 0  # complete records in the store

    def sample(self, attach_metrics: bool = False, **kwargs) -> dict[str, np.ndarray]:
        """Learner decisions of the deals finished (module docstring); ``attach_metrics``:
        ``get_metrics()`` goes with them under ``ATTACHED_METRICS`` (one round trip, so a
        driver can keep several samples queued)."""
        wall, cpu = time.perf_counter(), time.process_time()
        self._ensure_env()
        if self.league:
            self._pick_active()
        steps = int(kwargs.get("num_steps") or self.settings["steps_per_call"])
        for _ in range(steps):
            self._step()
        while self._ready < steps * self.env.num_tables // 4:
            self._step()
        out = self._store.take_complete(self._last)
        self._ready = 0
        self._counters["env_steps"] += out["actions"].size
        self.num_env_steps_sampled_lifetime += out["actions"].size
        self._counters["sample_s"] += time.perf_counter() - wall
        self._counters["sample_cpu_s"] += time.process_time() - cpu
        if attach_metrics:
            out[ATTACHED_METRICS] = self.get_metrics()
        return out

    def _step(self) -> None:
        env, obs, mask, seat = self.env, self._obs, self._mask, self._seat
        b = env.num_tables
        tables = np.arange(b)
        who = self._ctrl[tables, seat]
        actions = np.empty(b, dtype=np.int64)
        bits = pack_masks(mask)
        binary = obs[:, BINARY] != 0  # computed once for every policy's rows
        obs_bits = np.packbits(binary, axis=1)
        choose = np.ones(b, dtype=bool)
        n_legal = mask.sum(axis=1, dtype=np.int32)
        if self.settings["skip_forced"]:
            # one legal action: no policy gradient, no network; the seat's trajectory (and
            # its GAE chain) goes on from its next decision with a choice
            forced = n_legal == 1
            actions[forced] = mask[forced].argmax(axis=1)
            choose = ~forced
            self._counters["forced_steps"] += int(forced.sum())
        for c in np.unique(who[choose]):
            rows = np.flatnonzero((who == c) & choose)
            net = self.net if c == 0 else self.league[c - 1][1]
            d, h, kept_bits = self._inputs(
                net, binary[rows], obs[rows, SCALAR_INDEX], bits[rows], audit=c == 0
            )
            self._counters["candidates"] += int(n_legal[rows].sum())
            hidden = None
            if c == 0 and self.heads_cfg.labels:
                hidden = hidden_hands(env.state.hands[rows], seat[rows])
            value_of = self._value_of(d, hidden) if c == 0 else None
            a, logp, v = net.act_batch(d, self.rng, value_of=value_of, h=h)
            actions[rows] = a
            if c == 0:
                keep = self._learner_samples(logp)
                self._record(rows, seat, obs, obs_bits, kept_bits, a, logp, v, d, keep)
                if hidden is not None:
                    kept = rows[keep]
                    self._store.cols["hidden"][self._last[kept, seat[kept]]] = hidden[keep]
        self._counters["game_steps"] += b
        self._steps += 1
        self._obs, self._mask, self._seat, rewards, done, _ = env.step(actions)
        ended = np.flatnonzero(done)
        if ended.size:
            self._close(ended, rewards[ended])
            self._draw_matchups(ended)

    def _inputs(self, net: CandidateNet, binary, scalar, bits, audit: bool = False):
        """``(decisions, trunk output or None, packed masks of the candidates they hold)``:
        every legal candidate, or with ``plan_top_k`` the kept ones (``pruned_planning``);
        ``audit``: on every ``AUDIT_EVERY``-th step, also measure the policy's mass outside
        the kept candidates."""
        k = int(self.settings["plan_top_k"])
        if k:
            d, h, kept_bits = pruned_inputs(net, binary, scalar, bits, k, self._plans)
        else:
            d = prepare_binary(binary, scalar, bits, net.features, cache=self._plans)
            h, kept_bits = None, bits
        self._counters["candidates_planned"] += int(d.rows.shape[0])
        if k and audit and self._steps % AUDIT_EVERY == 0:
            full = prepare_binary(binary, scalar, bits, net.features, cache=self._plans)
            _, p = net.probabilities(full)
            kept = unpack_masks(kept_bits)[full.rows.numpy(), full.ids.numpy()]
            self._counters["audit_decisions"] += full.n
            self._counters["audit_mass_outside"] += float(p[~kept].sum())
        return d, h, kept_bits

    def _value_of(self, d, hidden: np.ndarray | None):
        """The learner's value for GAE of the decisions ``d``: with the separate critic, its
        own; with the privileged critic, plus what the hidden hands add (never the policy's
        input); ``None``: the policy's value head."""
        if not (self.heads_cfg.separate or self.heads_cfg.privileged):
            return None
        net, heads = self.net, self.heads
        hid = None if hidden is None else torch.from_numpy(hidden)
        return lambda h: heads.value(net, d, h, hid)

    def _learner_samples(self, logp: np.ndarray) -> np.ndarray:
        """Which of the learner's decisions become samples: with ``skip_confident`` = p,
        those whose sampled action had probability below p (the others stay out of the
        store, so the GAE chain skips them like forced ones); all of them otherwise."""
        p = float(self.settings["skip_confident"])
        if p <= 0:
            return np.arange(logp.size)
        keep = np.flatnonzero(logp < np.log(p))
        self._counters["confident_steps"] += logp.size - keep.size
        return keep

    def _record(self, rows, seat, obs, obs_bits, mask_bits, actions, logp, values, d, keep):
        """Store the decisions ``keep`` (indices into ``rows``, the tables of ``d``'s
        decisions; ``obs``, ``obs_bits`` and ``seat`` are per table, the rest per decision),
        each linked into its seat's trajectory."""
        st = self._store
        counts = np.bincount(d.rows.numpy(), minlength=d.n)
        dense, rest = d.dense[:, 1:].numpy(), d.rest.numpy()
        if keep.size < d.n:
            kept = np.zeros(d.n, dtype=bool)
            kept[keep] = True
            dense, rest, counts = dense[keep], rest[kept[d.rows.numpy()]], counts[keep]
        rows, mask_bits, actions, logp, values = (
            x[keep] for x in (rows, mask_bits, actions, logp, values)
        )
        seats = seat[rows]
        s = st.append(dense, rest, counts)
        c = st.cols
        c["obs_bits"][s] = obs_bits[rows]
        c["obs_scalar"][s] = obs[rows, SCALAR_INDEX]
        c["mask_bits"][s] = mask_bits
        c["actions"][s] = actions
        c["logp"][s] = logp
        c["values"][s] = values
        idx = np.arange(s.start, s.stop)
        c["prev"][s] = self._last[rows, seats]
        self._last[rows, seats] = idx

    def _close(self, tables: np.ndarray, rewards: np.ndarray) -> None:
        """GAE backwards along every learner trajectory of the finished tables."""
        c = self._store.cols
        gamma, lam = float(self.settings["gamma"]), float(self.settings["lambda"])
        cur = self._last[tables].reshape(-1)
        reward = rewards.reshape(-1).astype(np.float32)
        has = cur >= 0
        cur, reward = cur[has], reward[has]
        ctrl = self._ctrl[tables]
        self._log_results(tables, ctrl, rewards)
        self._last[tables] = -1
        next_value = np.zeros(cur.size, np.float32)
        adv = np.zeros(cur.size, np.float32)
        r = final = reward
        labels = "outcome" in c
        while cur.size:
            if labels:
                c["outcome"][cur] = final
            v = c["values"][cur]
            delta = r + gamma * next_value - v
            adv = delta + gamma * lam * adv
            c["advantages"][cur] = adv
            c["value_targets"][cur] = adv + v
            c["complete"][cur] = True
            self._ready += cur.size
            nxt = c["prev"][cur]
            alive = nxt >= 0
            cur, next_value, adv, final = nxt[alive], v[alive], adv[alive], final[alive]
            r = np.zeros(cur.size, np.float32)

    def _log_results(self, tables: np.ndarray, ctrl: np.ndarray, rewards: np.ndarray) -> None:
        self._counters["episodes"] += tables.size
        for i in range(tables.size):
            opp = ctrl[i].max()
            if opp == 0:
                self._bump("self", float(rewards[i, 0]))
                continue
            learner_seat = int(np.flatnonzero(ctrl[i] == 0)[0])
            r = float(rewards[i, learner_seat])
            name = self.league[opp - 1][0]
            kind = "bc" if name.startswith("bc") else "snapshot"
            self._bump(kind, r)
            st = self.league_stats[name]
            st[0] = 0.99 * st[0] + 1.0
            st[1] = 0.99 * st[1] + float(r > 0)

    def _bump(self, kind: str, r: float) -> None:
        v = self._vs.setdefault(kind, [0.0, 0.0, 0.0])
        v[0] += 1
        v[1] += r
        v[2] += float(r > 0)

    def get_metrics(self) -> dict[str, Any]:
        """Counters since the last call (RLlib contract: ``num_env_steps_sampled``)."""
        out: dict[str, Any] = {
            NUM_ENV_STEPS_SAMPLED: self._counters["env_steps"],
            "num_game_steps": self._counters["game_steps"],
            "num_forced_steps": self._counters["forced_steps"],
            "num_confident_steps": self._counters["confident_steps"],
            "num_episodes": self._counters["episodes"],
            "plan_cache_hit_rate": self._plans.hit_rate,
            "num_candidates": self._counters["candidates"],
            "num_candidates_planned": self._counters["candidates_planned"],
            "audit_decisions": self._counters["audit_decisions"],
            "audit_mass_outside": self._counters["audit_mass_outside"],
            "sample_s": self._counters["sample_s"],
            "sample_cpu_s": self._counters["sample_cpu_s"],
            "idle": self.idle,
            # the learner's update count of the weights the last sample() acted with (they
            # change only between calls): the driver turns it into the policy lag
            WEIGHTS_SEQ_NO: self._weights_seq_no,
        }
        for kind, (games, total, wins) in self._vs.items():
            if kind != "self" and games:
                out[f"reward_vs_{kind}"] = total / games
                out[f"win_vs_{kind}"] = wins / games
                out[f"games_vs_{kind}"] = games
        out["league_win_rates"] = {
            n: (w + 1.0) / (g + 2.0) for n, (g, w) in self.league_stats.items()
        }
        self._counters = dict.fromkeys(self._counters, 0)
        self._vs = {}
        return out
