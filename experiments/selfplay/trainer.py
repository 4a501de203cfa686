"""The self-play trainer behind ``python -m experiments.selfplay`` (its docstring tells the
run's stages): warm start, the PPO loop over ``VectorEnvRunner``s, league snapshots,
evaluation beside training, checkpoints and resume.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import threading
import time
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED

from agents.atomic_file import write_json_atomic
from experiments.selfplay.config import RunConfig, lr_time_scale
from experiments.selfplay.log import (
    fmt_count,
    fmt_eval,
    fmt_time,
    learner_columns,
    progress_line,
)
from experiments.selfplay.rllib.algorithm import build_algo_config, init_ray
from experiments.selfplay.rllib.heads import HeadsConfig
from experiments.selfplay.throughput import fmt_throughput, read_progress, throughput

BC_ANCHOR = "bc"


def _played_agent(state: dict, model_config: dict, seed: int):
    """The greedy agent of a policy's weights, torch at one thread (inside a Ray task)."""
    import torch

    from agents.candidate_agent import CandidateAgent
    from agents.candidate_net import net_from_state

    torch.set_num_threads(1)
    return CandidateAgent(net_from_state(state, model_config), seed=seed, name="current")


def _evaluate_task(
    state: dict,
    model_config: dict,
    opponents: list[str],
    pairs: int,
    seed: int,
    game: dict,
    idle: bool = True,
) -> dict[str, dict]:
    """Duplicate evaluation of a policy's weights (runs as a Ray task beside training; with
    ``idle``, on CPU time the runner and the learner leave idle: ``idle_priority``)."""
    from experiments.common.priority import idle_priority
    from experiments.evaluation.duplicate import evaluate

    with idle_priority() if idle else nullcontext():
        agent = _played_agent(state, model_config, seed)
        config = {k: v for k, v in game.items() if k != "mode"}
        out = {}
        for opp in opponents:
            stats = evaluate(agent, opp, n_pairs=pairs, seed=seed, mode="deal", config=config)
            out[opp] = {k: v for k, v in stats.items() if k != "pair_gains"}
    return out


def _play_pairs_task(
    state: dict, model_config: dict, opponent: str, first: int, stop: int, seed: int, game: dict
) -> list:
    """Both games of pairs ``first..stop-1`` against one opponent (a chunk of the final
    evaluation; ``evaluate`` over all the pairs plays the same games)."""
    from experiments.evaluation.duplicate import play_pairs

    agent = _played_agent(state, model_config, seed)
    config = {k: v for k, v in game.items() if k != "mode"}
    return play_pairs(agent, opponent, range(first, stop), seed=seed, mode="deal", config=config)


FINAL_EVAL_CHUNK = 50  # pairs per task of the final evaluation


def stop_like_ctrl_c() -> dict[int, Any]:
    """``kill`` (SIGTERM: a job scheduler's notice, ``timeout``) stops a run as Ctrl-C does,
    with a checkpoint to resume from; so does ``kill -INT`` on a run started in the
    background (``cmd &``), where the shell leaves SIGINT ignored and Python with it.
    Installed after ``ray.init``: Ray's driver handler for SIGTERM logs and aborts. Returns
    the handlers it replaced (none off the main thread, where signals can't be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    replaced = {signal.SIGTERM: signal.signal(signal.SIGTERM, interrupt)}
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        replaced[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    return replaced


class SelfPlayTrainer:
    """One run: warm start, PPO iterations, league, background evaluation, checkpoints."""

    def __init__(self, cfg: RunConfig, run_dir: Path, resume: bool = False) -> None:
        self.cfg, self.run_dir, self.resume = cfg, run_dir, resume
        self.ckpt_root = run_dir / "checkpoints"
        self.iteration = 0
        self.env_steps = 0
        # the schedules' clock (lr, entropy, anchor, the weight average): learner samples plus
        # the decisions runners.skip_confident kept out of them (equal without it)
        self.choices = 0
        self.game_steps = 0
        self.elapsed = 0.0  # seconds of this run over all its sessions (warm start included)
        self.warm_start_s = 0.0
        self.league: list[tuple[str, dict[str, np.ndarray]]] = []
        self.bc_state: dict[str, np.ndarray] | None = None
        self.last_evals: dict[str, dict] = {}
        self.ema: dict[str, np.ndarray] | None = None  # moving average of the weights
        self.last_checkpoint_iter = -1
        self.pending_eval = None  # (ray ref, iteration, env_steps, time_s)
        self.algo = None
        self.log = None
        self.model_config = cfg.model
        self._replaced_handlers: dict[int, Any] = {}  # signal handlers to put back on close

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        import torch

        torch.set_num_threads(self.cfg.torch_threads)
        self._session_start = time.perf_counter()
        init_ray(self.cfg.ray)
        self._replaced_handlers = stop_like_ctrl_c()  # after ray.init (see there)
        self._check_resources()
        from experiments.selfplay.log import RunLogger

        if self.resume:
            self._restore_trainer_state()
        else:
            self._warm_start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.disable(logging.WARNING)  # RLlib's new-API-stack and deprecation notices
            try:
                self.algo = build_algo_config(self.cfg).build_algo()
            finally:
                logging.disable(logging.NOTSET)
        if self.resume:
            self._restore_algo()
        elif self.bc_state is not None:
            self._set_main_weights(self.bc_state)
            if self.cfg.critic.separate:
                self._start_critic_from(self.bc_state)
        self._install_anchor()
        self._record_placement()
        self.algo.samples_lifetime = self.choices
        if self.ema is None and self.cfg.ema.half_life_samples > 0:
            self.ema = {k: v.astype(np.float32, copy=True) for k, v in self.main_state().items()}
        self.push_league()
        self.log = RunLogger(
            self.run_dir, (self.iteration, self.env_steps) if self.resume else None
        )

    def _record_placement(self) -> None:
        """``runners.json``: where this session's env runners run (the Ray node id, host and
        pid of each, and of the driver, whose learner updates unless ``learners.num > 0``);
        rewritten at every start or resume. One line of it goes to stdout."""

        def where(runner) -> dict[str, Any]:
            import os
            import socket

            import ray

            return {
                "worker_index": int(getattr(runner, "worker_index", 0)),
                "node_id": ray.get_runtime_context().get_node_id(),
                "host": socket.gethostname(),
                "pid": os.getpid(),
            }

        local = self.cfg.runners.num == 0  # sampling in the driver
        runners = self.algo.env_runner_group.foreach_env_runner(where, local_env_runner=local)
        runners = sorted(runners, key=lambda r: r["worker_index"])
        record = {
            "address": self.cfg.ray.address,
            "driver": where(None) | {"worker_index": None},
            "runners": runners,
            "nodes": sorted({r["node_id"] for r in runners}),
        }
        self.run_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_dir / "runners.json", record)
        short = ", ".join(f"{r['worker_index']}@{r['node_id'][:8]}" for r in runners)
        print(f"runners on {len(record['nodes'])} node(s): {short}", flush=True)

    def now(self) -> float:
        """Seconds of this run so far, earlier sessions included."""
        return self.elapsed + time.perf_counter() - self._session_start

    def _check_resources(self) -> None:
        """Fail fast instead of hanging: RLlib waits forever for CPUs that don't exist."""
        import ray

        r = self.cfg.runners
        learners = self.cfg.learners.num * self.cfg.learners.cpus_each
        need = r.num + r.idle + learners
        have = ray.cluster_resources().get("CPU", 0)
        if need > have:
            raise ValueError(
                f"runners.num={r.num}, runners.idle={r.idle} and learners.num × "
                f"cpus_each={learners:g} need {need:g} CPUs but the Ray cluster has "
                f"{have:g}; lower them (runners.idle=0 drops the idle runner), raise "
                "ray.num_cpus or connect to a bigger cluster"
            )

    def _warm_start(self) -> None:
        from agents.candidate_net import policy_state
        from agents.policy_file import save_policy
        from experiments.selfplay.warm_start.bc import warm_start

        ws = self.cfg.warm_start
        if ws.decisions <= 0:
            print("warm start: none (warm_start.decisions=0)", flush=True)
            return
        t0 = time.perf_counter()
        print(f"warm start: {ws.decisions:,} heuristic decisions, then BC", flush=True)
        net, record = warm_start(ws, self.model_config, self.cfg.seed, Path(self.cfg.cache_dir))
        self.bc_state = policy_state(net)
        out = self.run_dir / "bc"
        out.mkdir(parents=True, exist_ok=True)
        save_policy(out, net, self.model_config, {"bc": record})
        (out / "bc.json").write_text(json.dumps(record, indent=2) + "\n")
        self.warm_start_s = time.perf_counter() - t0
        best = next(h for h in record["history"] if h["epoch"] == record["best_epoch"])
        print(
            f"warm start done in {fmt_time(self.warm_start_s)}: held-out agreement "
            f"{best['agreement']:.1%} (data {record['data'].get('seconds', 0):.0f} s"
            f"{', cached' if record['data'].get('from_cache') else ''})",
            flush=True,
        )

    # ------------------------------------------------------------------ weights & league
    def _on_learners(self, fn) -> list:
        """``fn(learner)`` on every Learner (local or remote); their results."""
        return [r.get() for r in self.algo.learner_group.foreach_learner(fn)]

    def main_state(self, prefix: str | None = None) -> dict[str, np.ndarray]:
        """The learner's ``CandidateNet`` weights (or those of another part of its module,
        ``prefix``: ``heads.`` for the training-only heads)."""
        from experiments.selfplay.rllib.env_runner import MODULE_PREFIX, strip_prefix

        def get(learner):
            from ray.rllib.core import DEFAULT_MODULE_ID

            m = learner.module[DEFAULT_MODULE_ID].unwrapped()  # DDP wraps it (learners.num > 1)
            return {k: v.detach().cpu().numpy().copy() for k, v in m.state_dict().items()}

        return strip_prefix(self._on_learners(get)[0], prefix or MODULE_PREFIX)

    def _set_main_weights(self, state: dict[str, np.ndarray]) -> None:
        import torch

        from agents.candidate_inputs import upgrade_weights

        state = upgrade_weights(state)

        def put(learner):
            from ray.rllib.core import DEFAULT_MODULE_ID

            net = learner.module[DEFAULT_MODULE_ID].unwrapped().net
            net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})

        self._on_learners(put)
        self.algo.env_runner_group.foreach_env_runner(
            lambda runner: runner.set_main_weights(state), local_env_runner=True
        )

    def _start_critic_from(self, policy: dict[str, np.ndarray]) -> None:
        """The separate critic (``critic.separate``) starts as ``policy``'s encoder and value
        head, on the learners and the runners."""
        import torch

        from experiments.selfplay.rllib.heads import critic_state

        state = {k: torch.from_numpy(np.array(v)) for k, v in critic_state(policy).items()}

        def put(learner):
            from ray.rllib.core import DEFAULT_MODULE_ID

            learner.module[DEFAULT_MODULE_ID].unwrapped().heads.critic.load_state_dict(state)

        self._on_learners(put)
        self._push_heads()

    def _push_heads(self) -> None:
        """The learner's training-only heads to every runner, unconditionally (RLlib's weight
        sync skips a state whose sequence number is not newer: after a warm start or a
        restore, before the first update)."""
        heads = self.main_state("heads.")
        self.algo.env_runner_group.foreach_env_runner(
            lambda runner: runner.set_head_weights(heads), local_env_runner=True
        )

    def _install_anchor(self) -> None:
        """The warm start's policy as the KL anchor (its weight follows ``anchor.coeff``)."""
        state, mc = self.bc_state, dict(self.model_config)

        def put(learner):
            learner.set_anchor(state, mc)

        self._on_learners(put)

    def _average_weights(self, steps: int) -> None:
        """Move the weight average towards the learner's weights by the share of a
        half-life that ``steps`` new samples are."""
        half_life = self.cfg.ema.half_life_samples
        if half_life <= 0:
            return
        now = self.main_state()
        if self.ema is None:
            self.ema = {k: v.astype(np.float32, copy=True) for k, v in now.items()}
            return
        alpha = np.float32(1.0 - 0.5 ** (steps / half_life))
        for k, v in now.items():
            self.ema[k] += alpha * (v - self.ema[k])

    def played_state(self) -> dict[str, np.ndarray]:
        """The weights agents play: the average if there is one, else the learner's."""
        return self.ema if self.ema is not None else self.main_state()

    def league_members(self) -> list[tuple[str, dict]]:
        bc = [(BC_ANCHOR, self.bc_state)] if self.bc_state is not None else []
        return bc + self.league

    def take_snapshot(self) -> None:
        self.league.append((f"iter_{self.iteration:06d}", self.main_state()))
        keep = self.cfg.league.max_snapshots
        self.league = self.league[-keep:] if keep > 0 else []
        self.push_league()

    def push_league(self) -> None:
        members = self.league_members()
        if not members:
            return
        self.algo.push_league(members)

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        from agents.checkpoint import LEAGUE_FILE, mark_complete, save_league
        from agents.policy_file import save_policy

        path = self.ckpt_root / f"iter_{self.iteration:06d}"
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        self.algo.save_to_path(str(path.resolve()))
        meta = {"run": self.cfg.name, "iteration": self.iteration, "env_steps": self.env_steps}
        save_policy(path, self.main_state(), self.model_config, meta, ema_state=self.ema)
        save_league(path / LEAGUE_FILE, self.league_members())  # plain tensors
        state = {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "choices": self.choices,
            "game_steps": self.game_steps,
            "elapsed": self.now(),
            "warm_start_s": self.warm_start_s,
            "league": [n for n, _ in self.league],
            "bc": self.bc_state is not None,
        }
        mark_complete(path, state)  # last: its presence marks a complete checkpoint
        self.last_checkpoint_iter = self.iteration
        keep = self.cfg.checkpoint.keep
        if keep > 0:
            done = sorted(p for p in self.ckpt_root.glob("iter_*") if p.is_dir())
            for old in done[:-keep]:
                shutil.rmtree(old, ignore_errors=True)
        return path

    def _restore_trainer_state(self) -> None:
        from agents.checkpoint import LEAGUE_FILE, latest_checkpoint, load_league

        ckpt = latest_checkpoint(self.run_dir)
        if ckpt is None:
            raise FileNotFoundError(f"--resume {self.run_dir}: no finished checkpoint to resume")
        self._resume_ckpt = ckpt
        _check_resumable_width(ckpt)
        state = json.loads((ckpt / "trainer_state.json").read_text())
        self.iteration = int(state["iteration"])
        self.env_steps = int(state["env_steps"])
        self.choices = int(state.get("choices", self.env_steps))  # older runs: equal
        self.game_steps = int(state["game_steps"])
        self.elapsed = float(state["elapsed"])
        self.warm_start_s = float(state.get("warm_start_s", 0.0))
        saved = load_league(ckpt / LEAGUE_FILE)  # weights only: no code runs
        self.league = [(n, saved[n]) for n in state["league"]]
        self.bc_state = saved.get(BC_ANCHOR) if state.get("bc") else None
        self.last_checkpoint_iter = self.iteration

    def _restore_algo(self) -> None:
        import torch

        from agents.checkpoint import POLICY_FILE

        ckpt = self._resume_ckpt
        self.algo.restore_from_path(str(ckpt.resolve()))
        saved = torch.load(ckpt / POLICY_FILE, weights_only=True)["state_dict"]
        self._set_main_weights({k: v.numpy() for k, v in saved.items()})
        now = self.main_state()
        bad = [k for k in saved if not np.array_equal(saved[k].numpy(), now[k])]
        if bad:
            raise RuntimeError(f"restoring {ckpt} did not restore the weights of {bad[:3]}")
        if HeadsConfig.from_dict(self.cfg.critic.as_dict()).any:
            self._push_heads()  # the runners' copy (the critics' GAE values)
        from agents.policy_file import load_ema_state

        self.ema = load_ema_state(ckpt / POLICY_FILE)
        print(
            f"resumed {self.run_dir} from {ckpt.name}: iteration {self.iteration}, "
            f"{fmt_count(self.env_steps)} samples, {fmt_time(self.elapsed)} of "
            f"{fmt_time(self.cfg.stop.time_s or 0)} used",
            flush=True,
        )

    # ------------------------------------------------------------------ evaluation
    def in_run_opponents(self) -> list[str]:
        """The opponents of the evaluations beside training: ``eval.opponents`` without
        ``eval.final_only``."""
        e = self.cfg.eval
        return [o for o in e.opponents if o not in e.final_only]

    def start_eval(self, pairs: int):
        import ray

        # max_calls=1: the worker exits with the task, so no later task inherits SCHED_IDLE
        # (an unprivileged process may not leave it)
        task = ray.remote(num_cpus=0, max_calls=1)(_evaluate_task)
        return task.remote(
            self.played_state(),  # what agents of this run play (the average, if kept)
            dict(self.model_config),
            self.in_run_opponents(),
            int(pairs),
            self.cfg.seed + 7919,
            dict(self.cfg.game),
            bool(self.cfg.eval.idle),
        )

    def final_eval(self, pairs: int) -> dict[str, dict]:
        """The evaluation after training, in chunks of pairs on every CPU of the cluster
        (training is over; the evaluations beside it take no CPU of their own). Chunks are
        merged in pair order, so the result is that of one sequential ``evaluate``."""
        import ray

        from experiments.evaluation.ratings import matchup_stats

        task = ray.remote(num_cpus=0)(_play_pairs_task)
        seed, game = self.cfg.seed + 7919, dict(self.cfg.game)
        state = ray.put(self.played_state())
        jobs = [
            (opp, first, min(first + FINAL_EVAL_CHUNK, pairs))
            for opp in self.cfg.eval.opponents
            for first in range(0, pairs, FINAL_EVAL_CHUNK)
        ]
        width = max(1, int(ray.cluster_resources().get("CPU", 1)))
        sides: dict[tuple, list] = {}
        running: dict[Any, tuple] = {}
        t0, todo = time.perf_counter(), list(jobs)
        while todo or running:
            while todo and len(running) < width:
                job = todo.pop(0)
                ref = task.remote(state, dict(self.model_config), *job, seed, game)
                running[ref] = job
            (ref,), _ = ray.wait(list(running), num_returns=1)
            sides[running.pop(ref)] = ray.get(ref)
            done, dt = len(sides), time.perf_counter() - t0
            print(
                f"\rfinal evaluation: {done}/{len(jobs)} chunks of {FINAL_EVAL_CHUNK} pairs, "
                f"{fmt_time(dt)} elapsed, ~{fmt_time(dt / done * (len(jobs) - done))} left",
                end="\n" if done == len(jobs) else "",
                flush=True,
            )
        out = {}
        for opp in self.cfg.eval.opponents:
            merged = [s for job in jobs if job[0] == opp for s in sides[job]]
            stats = matchup_stats(merged, seed=seed)
            out[opp] = {k: v for k, v in stats.items() if k != "pair_gains"}
        return out

    def cancel_eval(self) -> None:
        """Stop an in-run evaluation still running (its worker is killed; nothing is logged)."""
        import ray

        if self.pending_eval is not None:
            ray.cancel(self.pending_eval[0], force=True)
            self.pending_eval = None

    def poll_eval(self, block: bool = False) -> dict[str, dict]:
        import ray

        if self.pending_eval is None:
            return {}
        ref, it, steps, t = self.pending_eval
        ready, _ = ray.wait([ref], timeout=None if block else 0)
        if not ready:
            return {}
        self.pending_eval = None
        out = ray.get(ref)
        for opp, stats in out.items():
            self.log.evaluation(it, steps, opp, stats, time_s=t)
        self.last_evals = out
        return out

    # ------------------------------------------------------------------ loop
    def done(self) -> str | None:
        s = self.cfg.stop
        if s.iterations is not None and self.iteration >= s.iterations:
            return "iterations"
        if s.time_s is not None and self.now() >= s.time_s:
            return "time"
        if s.env_steps is not None and self.env_steps >= s.env_steps:
            return "env_steps"
        return None

    def eval_overdue(self) -> bool:
        """An in-run evaluation is still running when the next one is due."""
        every = self.cfg.eval.every_s
        if self.pending_eval is None or not every:
            return False
        return self.now() - self.pending_eval[3] >= every

    def train_once(self) -> dict[str, Any]:
        if self.cfg.ppo.lr_decay_from is not None:
            scale = lr_time_scale(self.now(), self.cfg)
            self._on_learners(lambda learner: learner.set_lr_scale(scale))
        t0 = time.perf_counter()
        self.algo.train()
        dt = time.perf_counter() - t0
        self.iteration += 1
        info = self.algo.last_info
        steps = int(info["env_steps"])
        self.env_steps += steps
        rm = info["runner_metrics"]
        confident = int(info.get("confident_steps", 0))
        self.choices += steps + confident
        self._average_weights(steps + confident)
        main = [m for m in rm if not m.get("idle")]
        idle = [m for m in rm if m.get("idle")]
        lags = info.get("policy_lags") or [None] * len(rm)
        gsteps = sum(int(m.get("num_game_steps", 0)) for m in rm)
        forced = sum(int(m.get("num_forced_steps", 0)) for m in rm)
        cands = sum(int(m.get("num_candidates", 0)) for m in rm)
        planned = sum(int(m.get("num_candidates_planned", 0)) for m in rm)
        audited = sum(int(m.get("audit_decisions", 0)) for m in rm)
        audit_mass = sum(float(m.get("audit_mass_outside", 0.0)) for m in rm)
        self.game_steps += gsteps
        ln = info["learner"]
        row: dict[str, Any] = {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "choices": self.choices,
            "game_steps": self.game_steps,
            "iter_s": dt,
            "env_steps_per_s": steps / dt if dt > 0 else 0.0,
            "game_steps_per_s": gsteps / dt if dt > 0 else 0.0,
            "forced_share": forced / gsteps if gsteps else None,
            "confident_share": confident / gsteps if gsteps else None,
            "planned_share": planned / cands if cands else None,
            "pruned_mass": audit_mass / audited if audited else None,
            **learner_columns(ln),
            "league_size": len(self.league_members()),
            "sample_wait_s": info.get("sample_wait_s"),
            "eval_running": int(self.pending_eval is not None),  # it shares the CPUs
            "idle_held": int(self.algo.hold_idle_runners),  # (eval.overdue_holds_idle)
            "learn_s": info.get("learn_s"),
            # runner time inside sample(), summed over the runners at normal priority: wall
            # and CPU (the CPU time per iteration tells a slow machine from a fast one)
            "runner_sample_s": sum(float(m.get("sample_s", 0.0)) for m in main),
            "runner_sample_cpu_s": sum(float(m.get("sample_cpu_s", 0.0)) for m in main),
            "idle_share": (
                sum(int(m.get(NUM_ENV_STEPS_SAMPLED, 0)) for m in idle) / steps
                if idle and steps
                else (0.0 if self.cfg.runners.idle else None)
            ),
            "idle_runner_cpu_s": (
                sum(float(m.get("sample_cpu_s", 0.0)) for m in idle)
                if self.cfg.runners.idle
                else None
            ),
            "load1": os.getloadavg()[0],  # machine load: throughput is shared with others
            "policy_lag": _mean_lag(lags, rm, idle=False),
            "idle_policy_lag": _mean_lag(lags, rm, idle=True),
        }
        for kind in ("bc", "snapshot"):
            games = sum(m.get(f"games_vs_{kind}", 0) for m in rm)
            if games:
                row[f"reward_vs_{kind}"] = (
                    sum(
                        m[f"reward_vs_{kind}"] * m[f"games_vs_{kind}"]
                        for m in rm
                        if f"games_vs_{kind}" in m
                    )
                    / games
                )
        return row

    def run(self) -> dict[str, Any]:
        self.setup()
        c = self.cfg
        r = c.runners
        budget = c.stop.time_s
        print(
            f"run {self.run_dir}: {r.num} runner(s) x {r.tables} tables"
            f"{f' + {r.idle} idle x {r.idle_tables}' if r.idle and r.num else ''}, "
            f"{r.steps_per_call} steps/iteration, "
            f"model trunk {self.model_config['trunk']} cand {self.model_config['cand']}; "
            f"budget {fmt_time(budget) if budget else 'none'}",
            flush=True,
        )
        reason = None
        last_eval_t = self.now()
        try:
            while (reason := self.done()) is None:
                row = self.train_once()
                it = self.iteration
                if c.league.snapshot_every and it % c.league.snapshot_every == 0:
                    self.take_snapshot()
                    row["league_size"] = len(self.league_members())
                if c.checkpoint.every and it % c.checkpoint.every == 0:
                    self.save_checkpoint()
                evals = self.poll_eval()
                self.algo.hold_idle_runners = c.eval.overdue_holds_idle and self.eval_overdue()
                every = c.eval.every_s
                due = every and self.now() - last_eval_t >= every
                if due and self.pending_eval is None and self.in_run_opponents():
                    ref = self.start_eval(c.eval.pairs)
                    self.pending_eval = (ref, it, self.env_steps, self.now())
                    last_eval_t = self.now()
                row["time_s"] = self.now()
                self.log.iteration(row)
                print(progress_line(row, evals, budget), flush=True)
        except KeyboardInterrupt:
            reason = "interrupted"
            print("\ninterrupted: saving a checkpoint …", flush=True)
        finally:
            if self.algo is not None and self.iteration > 0:
                if self.last_checkpoint_iter != self.iteration:
                    path = self.save_checkpoint()
                    print(f"checkpoint {path}", flush=True)
        self.elapsed = self.now()
        self._session_start = time.perf_counter()
        summary = {
            "run_dir": str(self.run_dir),
            "stopped_by": reason,
            "iterations": self.iteration,
            "env_steps": self.env_steps,
            "choices": self.choices,
            "game_steps": self.game_steps,
            "train_seconds": round(self.elapsed, 1),
            "warm_start_seconds": round(self.warm_start_s, 1),
            "env_steps_per_s": round(
                self.env_steps / max(self.elapsed - self.warm_start_s, 1e-9), 1
            ),
            "checkpoint": str(self.ckpt_root / f"iter_{self.iteration:06d}"),
            "throughput": throughput(read_progress(self.run_dir)),
        }
        print(fmt_throughput(summary["throughput"]), flush=True)
        if reason == "interrupted":
            self._write_summary(summary)
            print(f"resume with: python -m experiments.selfplay --resume {self.run_dir}")
            return summary
        pairs = c.eval.final_pairs
        if pairs > 0 and self.iteration > 0:
            self.cancel_eval()  # the final evaluation supersedes it
            t = time.perf_counter()
            print(f"final evaluation: {pairs} duplicate pairs per opponent …", flush=True)
            final = self.final_eval(pairs)
            for opp, stats in final.items():
                self.log.evaluation(self.iteration, self.env_steps, opp, stats, self.elapsed)
                print("final " + fmt_eval(opp, stats), flush=True)
            summary["final_eval"] = final
            summary["final_eval_seconds"] = round(time.perf_counter() - t, 1)
        self._write_summary(summary)
        print(
            f"done ({reason}): {self.iteration} iterations, {fmt_count(self.env_steps)} samples "
            f"in {fmt_time(self.elapsed)} (warm start {fmt_time(self.warm_start_s)}; "
            f"{summary['env_steps_per_s']:.0f} samples/s after it); checkpoint "
            f"{summary['checkpoint']}",
            flush=True,
        )
        return summary

    def _write_summary(self, summary: dict) -> None:
        write_json_atomic(self.run_dir / "summary.json", summary)

    def close(self) -> None:
        for signum, handler in self._replaced_handlers.items():
            if handler is not None:  # None: installed outside Python (Ray's), not restorable
                signal.signal(signum, handler)
        self._replaced_handlers = {}
        if self.log is not None:
            self.log.close()
        if self.algo is not None:
            try:
                self.algo.stop()
            except Exception:  # noqa: BLE001 - shutting down; nothing left to save
                pass


def _mean_lag(lags: list, metrics: list[dict], idle: bool) -> float | None:
    """Mean policy lag (iterations) of the samples of the main or the idle runners."""
    got = [lag for lag, m in zip(lags, metrics, strict=True) if bool(m.get("idle")) == idle]
    got = [lag for lag in got if lag is not None]
    return float(np.mean(got)) if got else None


def _check_resumable_width(ckpt: Path) -> None:
    """Refuse, before anything loads, a checkpoint whose network predates a block of the
    candidate rows (``beat`` 2026-12-03, ``reply`` 2026-12-04): its optimizer state has the
    old width. Its ``policy.pt``
    still plays (``checkpoint:`` agents pad it); resuming needs the commit that made it."""
    import torch

    from agents.checkpoint import POLICY_FILE
    from guandan_env.encoding.candidate_features import CAND_DIM

    if not (ckpt / POLICY_FILE).is_file():
        return  # nothing to compare; restoring the RLlib state reports what is missing
    payload = torch.load(ckpt / POLICY_FILE, weights_only=True)
    saved = payload.get("state_dict", {}) if isinstance(payload, dict) else {}
    weight = saved.get("cand_proj.weight")
    width = weight.shape[1] if isinstance(weight, torch.Tensor) and weight.ndim == 2 else None
    if width is not None and width != CAND_DIM:
        raise ValueError(
            f"--resume {ckpt}: its network reads {width} candidate columns, this version "
            f"{CAND_DIM} (blocks added: beat 2026-12-03, reply 2026-12-04); resume it with "
            "the commit that made it (its config.yaml), or play it as checkpoint:RUN"
        )
