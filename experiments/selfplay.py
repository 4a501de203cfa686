"""RLlib PPO self-play for Guandan: ``python -m experiments.selfplay``.

    python -m experiments.selfplay --config configs/default.yaml [key=value ...]
    python -m experiments.selfplay --resume runs/default [stop.time_s=2400 ...]
    python -m experiments.selfplay --config configs/default.yaml --address auto \\
        env_runners.num=16 env_runners.envs_per_runner=16

What it does (details in the README's "Self-play training" section):

* PPO on RLlib's new API stack (RLModule / Learner / EnvRunner). One trainable module,
  ``main`` (``agents.rllib_module.MaskedPPOModule``: illegal actions get probability 0).
* Training env ``experiments.selfplay_env.GuandanSelfPlayEnv``: single deals from random
  team levels and previous finishing orders (tribute and returns included). Each episode's
  opposing team is the current policy itself, a frozen league snapshot, ``random`` or
  ``heuristic``, drawn with ``env.opponents`` probabilities. Snapshots of ``main`` are taken
  every ``league.snapshot_every`` iterations and pushed to every env runner.
* Every ``eval.every`` iterations the current (greedy) policy plays duplicate deals against
  ``eval.opponents`` (``experiments.arena.evaluate``): win rate and mean level gain with 95%
  intervals. Every ``checkpoint.every`` iterations and at the end a checkpoint is written to
  ``runs/<name>/checkpoints/iter_NNNNNN`` (RLlib state + ``policy.pt`` + league + counters);
  ``agents.registry.make_agent("checkpoint:runs/<name>")`` plays the newest one.
* TensorBoard events, ``progress.csv``, ``eval.csv`` and the resolved ``config.yaml`` go to
  ``runs/<name>/``; one readable progress line per iteration goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from experiments.selfplay_config import DEFAULT_CONFIG_FILE, load_config, save_config
from experiments.selfplay_log import fmt_count, fmt_eval, progress_line

ENV_NAME = "guandan_selfplay"
MODULE_ID = "main"


def _ray_env() -> None:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")


def map_agent_to_main(agent_id, episode, **kwargs) -> str:
    """Every exposed seat is played by the one trainable module (opponents live in the env)."""
    return MODULE_ID


def register() -> None:
    """Register the training env with Ray Tune (needed before building or restoring)."""
    from ray.tune.registry import register_env

    from experiments.selfplay_env import GuandanSelfPlayEnv

    register_env(ENV_NAME, lambda cfg: GuandanSelfPlayEnv(cfg))


def make_callbacks_class():
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class SelfPlayCallbacks(RLlibCallback):
        """Logs game steps and the learner team's reward/win per opponent kind."""

        def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
            if metrics_logger is None:
                return
            infos = episode.get_infos(-1)
            info = next((v for v in infos.values() if v and "opponent" in v), None)
            if info is None:
                return
            metrics_logger.log_value("game_steps", info["game_steps"], reduce="sum")
            kind = info["opponent"]
            if kind != "self":
                r = float(info["team_reward"])
                metrics_logger.log_value(("reward_vs", kind), r, window=100)
                metrics_logger.log_value(("win_vs", kind), float(r > 0), window=100)
                metrics_logger.log_value("league_reward", r, window=100)

    return SelfPlayCallbacks


def build_algo_config(cfg: dict):
    """The ``PPOConfig`` of a run config."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import MaskedPPOModule

    er, p = cfg["env_runners"], cfg["ppo"]
    num_runners = int(er["num"])
    env_config = {
        "game": dict(cfg["env"]["game"]),
        "opponents": dict(cfg["env"]["opponents"]),
        "seed": None,  # RLlib seeds each env's first reset from debugging(seed)
    }
    rfl = er["rollout_fragment_length"]
    module = RLModuleSpec(module_class=MaskedPPOModule, model_config=dict(cfg["model"]))
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(
            num_env_runners=num_runners,
            num_envs_per_env_runner=int(er["envs_per_runner"]),
            num_cpus_per_env_runner=1 if num_runners else 0,
            rollout_fragment_length=rfl if rfl == "auto" else int(rfl),
            batch_mode="truncate_episodes",
            sample_timeout_s=float(er["sample_timeout_s"]),
        )
        .learners(num_learners=0)
        .multi_agent(
            policies={MODULE_ID},
            policy_mapping_fn=map_agent_to_main,
            policies_to_train=[MODULE_ID],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: module}))
        .training(
            lr=float(p["lr"]),
            gamma=float(p["gamma"]),
            lambda_=float(p["lambda"]),
            train_batch_size_per_learner=int(p["train_batch_size"]),
            minibatch_size=int(p["minibatch_size"]),
            num_epochs=int(p["num_epochs"]),
            clip_param=float(p["clip_param"]),
            vf_clip_param=float(p["vf_clip_param"]),
            vf_loss_coeff=float(p["vf_loss_coeff"]),
            entropy_coeff=float(p["entropy_coeff"]),
            use_kl_loss=bool(p["use_kl_loss"]),
            kl_coeff=float(p["kl_coeff"]),
            kl_target=float(p["kl_target"]),
            grad_clip=None if p["grad_clip"] is None else float(p["grad_clip"]),
        )
        .callbacks(make_callbacks_class())
        .debugging(seed=int(cfg["seed"]))
    )


def _np_state(state: dict) -> dict[str, np.ndarray]:
    out = {}
    for k, v in state.items():
        if hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        out[k] = np.array(v, copy=True)
    return out


def _peek(d: dict, *keys, default=None):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


class SelfPlayTrainer:
    """One run: builds the algorithm, trains, evaluates, checkpoints, logs."""

    def __init__(self, cfg: dict, run_dir: Path, resume: bool = False) -> None:
        self.cfg, self.run_dir, self.resume = cfg, run_dir, resume
        self.ckpt_root = run_dir / "checkpoints"
        self.iteration = 0
        self.env_steps = 0
        self.game_steps = 0
        self.elapsed = 0.0  # training-loop seconds over all sessions of this run
        self.league: list[tuple[str, dict[str, np.ndarray]]] = []
        self.last_evals: dict[str, dict] = {}
        self.last_checkpoint_iter = -1
        self.algo = None

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        import torch

        torch.set_num_threads(int(self.cfg["torch_threads"]))
        _ray_env()
        import ray

        rc = self.cfg["ray"]
        if not ray.is_initialized():
            if rc["address"]:
                ray.init(address=rc["address"], include_dashboard=False)
            else:
                ray.init(
                    address="local",  # a new instance, even if `ray start` ran on this machine
                    num_cpus=int(rc["num_cpus"]),
                    include_dashboard=False,
                    object_store_memory=int(rc["object_store_mb"]) * 2**20,
                )
        self._check_resources()
        register()
        self.algo = build_algo_config(self.cfg).build_algo()
        from agents.rllib_module import check_model_config

        self.model_config = check_model_config(self.cfg["model"])
        from experiments.selfplay_log import RunLogger

        resume_at = None
        if self.resume:
            self._restore()
            resume_at = (self.iteration, self.env_steps)
        self.log = RunLogger(self.run_dir, resume_at)

    def _check_resources(self) -> None:
        """Fail fast instead of hanging: RLlib waits forever for CPUs that don't exist."""
        import ray

        need = int(self.cfg["env_runners"]["num"])
        have = ray.cluster_resources().get("CPU", 0)
        if need > have:
            raise ValueError(
                f"env_runners.num={need} needs {need} CPUs but the Ray cluster has {have:g}; "
                "lower env_runners.num (or ray.num_cpus) or connect to a bigger cluster"
            )

    # ------------------------------------------------------------------ weights & league
    def main_state(self) -> dict[str, np.ndarray]:
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE

        comp = f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{MODULE_ID}"
        state = self.algo.learner_group.get_state(components=comp)
        return _np_state(state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][MODULE_ID])

    def net_state(self) -> dict[str, np.ndarray]:
        from agents.rllib_module import net_state_from_module_state

        return {k: v.numpy() for k, v in net_state_from_module_state(self.main_state()).items()}

    def current_agent(self):
        import torch

        from agents.checkpoint import CheckpointAgent
        from agents.rllib_module import GuandanNet
        from guandan_env.actions import NUM_ACTIONS
        from guandan_env.observation import OBS_DIM

        net = GuandanNet(OBS_DIM, NUM_ACTIONS, self.model_config)
        net.load_state_dict({k: torch.as_tensor(v) for k, v in self.net_state().items()})
        greedy = bool(self.cfg["eval"]["greedy"])
        return CheckpointAgent(net, seed=int(self.cfg["seed"]), greedy=greedy, name="current")

    def take_snapshot(self) -> None:
        name = f"iter_{self.iteration:06d}"
        self.league.append((name, self.net_state()))
        max_size = int(self.cfg["league"]["max_size"])
        if max_size > 0:
            self.league = self.league[-max_size:]
        self.push_league()

    def push_league(self) -> None:
        """Send the league's weights to every env runner (each builds the nets once)."""
        states = dict(self.league)
        model_config = dict(self.model_config)

        def install(env_runner):
            from experiments.selfplay_env import nets_from_states
            from guandan_env.actions import NUM_ACTIONS
            from guandan_env.observation import OBS_DIM

            env = getattr(env_runner, "env", None)
            if env is None:
                return 0
            nets = nets_from_states(states, OBS_DIM, NUM_ACTIONS, model_config)
            for e in env.envs:
                e.unwrapped.set_league(nets)
            return len(nets)

        self.algo.env_runner_group.foreach_env_runner(install, local_env_runner=True)

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        import torch

        from agents.checkpoint import save_policy

        path = self.ckpt_root / f"iter_{self.iteration:06d}"
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        self.algo.save_to_path(str(path.resolve()))
        meta = {
            "run": self.cfg["name"],
            "iteration": self.iteration,
            "env_steps": self.env_steps,
        }
        save_policy(path, self.net_state(), self.model_config, meta)
        torch.save({n: s for n, s in self.league}, path / "league.pt")
        state = {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "game_steps": self.game_steps,
            "elapsed": self.elapsed,
            "league": [n for n, _ in self.league],
        }
        # written last: its presence marks a complete checkpoint
        (path / "trainer_state.json").write_text(json.dumps(state, indent=2) + "\n")
        self.last_checkpoint_iter = self.iteration
        keep = int(self.cfg["checkpoint"]["keep"])
        if keep > 0:
            done = sorted(p for p in self.ckpt_root.glob("iter_*") if p.is_dir())
            for old in done[:-keep]:
                shutil.rmtree(old, ignore_errors=True)
        return path

    def _restore(self) -> None:
        import torch

        from agents.checkpoint import latest_checkpoint

        ckpt = latest_checkpoint(self.run_dir)
        if ckpt is None:
            raise FileNotFoundError(f"--resume {self.run_dir}: no finished checkpoint to resume")
        self.algo.restore_from_path(str(ckpt.resolve()))
        self._check_restored(ckpt)
        state = json.loads((ckpt / "trainer_state.json").read_text())
        self.iteration = int(state["iteration"])
        self.env_steps = int(state["env_steps"])
        self.game_steps = int(state["game_steps"])
        self.elapsed = float(state["elapsed"])
        league = torch.load(ckpt / "league.pt", weights_only=False)
        self.league = [(n, league[n]) for n in state["league"]]
        self.last_checkpoint_iter = self.iteration
        if self.league:
            self.push_league()
        print(f"resumed {self.run_dir} from {ckpt.name} (iteration {self.iteration})", flush=True)

    def _check_restored(self, ckpt: Path) -> None:
        """The learner's weights must equal the checkpoint's ``policy.pt`` after a restore."""
        import torch

        from agents.checkpoint import POLICY_FILE

        saved = torch.load(ckpt / POLICY_FILE, weights_only=True)["state_dict"]
        now = self.net_state()
        bad = [k for k in saved if k not in now or not np.array_equal(saved[k].numpy(), now[k])]
        if bad:
            raise RuntimeError(f"restoring {ckpt} did not restore the weights of {bad[:3]}")

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, pairs: int) -> dict[str, dict]:
        from experiments.arena import evaluate

        agent = self.current_agent()
        game = {k: v for k, v in self.cfg["env"]["game"].items() if k != "mode"}
        out = {}
        for opp in self.cfg["eval"]["opponents"]:
            stats = evaluate(
                agent,
                opp,
                n_pairs=pairs,
                seed=int(self.cfg["seed"]) + 7919,
                mode=self.cfg["env"]["game"].get("mode", "deal"),
                config=game,
            )
            stats = {k: v for k, v in stats.items() if k != "pair_gains"}
            out[opp] = stats
            self.log.evaluation(self.iteration, self.env_steps, opp, stats)
        return out

    # ------------------------------------------------------------------ loop
    def done(self) -> str | None:
        s = self.cfg["stop"]
        if s["iterations"] is not None and self.iteration >= int(s["iterations"]):
            return "iterations"
        if s["time_s"] is not None and self.elapsed >= float(s["time_s"]):
            return "time"
        if s["env_steps"] is not None and self.env_steps >= int(s["env_steps"]):
            return "env_steps"
        return None

    def train_once(self) -> tuple[dict[str, Any], dict[str, Any]]:
        t0 = time.perf_counter()
        result = self.algo.train()
        dt = time.perf_counter() - t0
        self.iteration += 1
        er = result.get("env_runners", {})
        ln = _peek(result, "learners", MODULE_ID, default={})
        steps = int(er.get("num_env_steps_sampled", 0) or 0)
        gsteps = int(er.get("game_steps", 0) or 0)
        self.env_steps += steps
        self.game_steps += gsteps
        row = {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "game_steps": self.game_steps,
            "iter_s": dt,
            "env_steps_per_s": steps / dt if dt > 0 else 0.0,
            "game_steps_per_s": gsteps / dt if dt > 0 else 0.0,
            "episode_reward_mean": er.get("league_reward"),
            "policy_loss": ln.get("policy_loss"),
            "vf_loss": ln.get("vf_loss"),
            "entropy": ln.get("entropy"),
            "kl": ln.get("mean_kl_loss"),
            "league_size": len(self.league),
            "load1": os.getloadavg()[0],  # machine load: throughput is shared with others
        }
        extra = {
            "loss/total": ln.get("total_loss"),
            "loss/vf_explained_var": ln.get("vf_explained_var"),
            "loss/kl_coeff": ln.get("curr_kl_coeff"),
            "train/episodes": er.get("num_episodes"),
            "train/episode_len_mean": er.get("episode_len_mean"),
        }
        for key in ("reward_vs", "win_vs"):
            for kind, v in (er.get(key) or {}).items():
                extra[f"train/{key}_{kind}"] = v
                if key == "reward_vs":
                    row[f"reward_vs_{kind}"] = v
        return row, extra

    def run(self) -> dict[str, Any]:
        self.setup()
        c = self.cfg
        print(
            f"run {self.run_dir}: {c['env_runners']['num']} env runners x "
            f"{c['env_runners']['envs_per_runner']} envs, batch {c['ppo']['train_batch_size']}, "
            f"model {self.model_config['hidden']}; stop {c['stop']}",
            flush=True,
        )
        reason = None
        try:
            while (reason := self.done()) is None:
                t_start = time.perf_counter()
                row, extra = self.train_once()
                it = self.iteration
                if c["league"]["snapshot_every"] and it % int(c["league"]["snapshot_every"]) == 0:
                    self.take_snapshot()
                    row["league_size"] = len(self.league)
                evals = {}
                if c["eval"]["every"] and it % int(c["eval"]["every"]) == 0:
                    evals = self.evaluate(int(c["eval"]["pairs"]))
                    self.last_evals = evals
                if c["checkpoint"]["every"] and it % int(c["checkpoint"]["every"]) == 0:
                    self.save_checkpoint()
                self.elapsed += time.perf_counter() - t_start
                row["time_s"] = self.elapsed
                self.log.iteration(row, extra)
                print(progress_line(row, evals), flush=True)
        finally:
            if self.algo is not None and self.iteration > 0:
                if self.last_checkpoint_iter != self.iteration:
                    path = self.save_checkpoint()
                    print(f"checkpoint {path}", flush=True)
        summary = {
            "run_dir": str(self.run_dir),
            "stopped_by": reason,
            "iterations": self.iteration,
            "env_steps": self.env_steps,
            "game_steps": self.game_steps,
            "train_seconds": round(self.elapsed, 1),
            "env_steps_per_s": round(self.env_steps / max(self.elapsed, 1e-9), 1),
            "checkpoint": str(self.ckpt_root / f"iter_{self.iteration:06d}"),
        }
        pairs = int(c["eval"]["final_pairs"])
        if pairs > 0:
            t = time.perf_counter()
            final = self.evaluate(pairs)
            summary["final_eval"] = final
            summary["final_eval_seconds"] = round(time.perf_counter() - t, 1)
            for opp, st in final.items():
                print("final " + fmt_eval(opp, st), flush=True)
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(
            f"done ({reason}): {self.iteration} iterations, {fmt_count(self.env_steps)} env steps "
            f"in {self.elapsed:.0f} s ({summary['env_steps_per_s']:.0f}/s); "
            f"checkpoint {summary['checkpoint']}",
            flush=True,
        )
        return summary

    def close(self) -> None:
        if getattr(self, "log", None) is not None:
            self.log.close()
        if self.algo is not None:
            self.algo.stop()


def choose_run_dir(cfg: dict, named: bool) -> Path:
    """``runs_dir/name``; if it holds a run, an unnamed run moves on to ``name-2``, ``name-3``
    … (updating ``cfg["name"]``) and an explicitly named one is an error."""
    root = Path(cfg["runs_dir"])
    run_dir = root / cfg["name"]
    if not (run_dir / "checkpoints").exists():
        return run_dir
    if named:
        raise ValueError(f"{run_dir} already holds a run; use --resume {run_dir} or another name")
    k = 2
    while (root / f"{cfg['name']}-{k}").exists():
        k += 1
    cfg["name"] = f"{cfg['name']}-{k}"
    return root / cfg["name"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay",
        description="RLlib PPO self-play with a league of snapshots (see module docstring).",
    )
    p.add_argument("overrides", nargs="*", help="config overrides key=value (dotted keys)")
    p.add_argument(
        "--config", help="YAML config (default: configs/default.yaml; CI: configs/smoke.yaml)"
    )
    p.add_argument(
        "--resume", metavar="RUN_DIR", help="continue runs/<name> from its newest checkpoint"
    )
    p.add_argument("--address", help="connect to an existing Ray cluster ('auto' or host:port)")
    p.add_argument("--name", help="run name (directory under runs_dir)")
    args = p.parse_args(argv)
    try:
        if args.resume:
            if args.config:
                raise ValueError("--resume takes the run's saved config.yaml; drop --config")
            run_dir = Path(args.resume)
            if not (run_dir / "config.yaml").exists():
                raise ValueError(f"--resume {run_dir}: no config.yaml (not a self-play run)")
            cfg = load_config(run_dir / "config.yaml", args.overrides)
        else:
            path = args.config
            if path is None and DEFAULT_CONFIG_FILE.exists():
                path = DEFAULT_CONFIG_FILE
            cfg = load_config(path, args.overrides)
            named = args.name is not None or any(o.startswith("name=") for o in args.overrides)
            if args.name:
                cfg["name"] = args.name
            run_dir = choose_run_dir(cfg, named)
        if args.address:
            cfg["ray"]["address"] = args.address
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    trainer = SelfPlayTrainer(cfg, run_dir, resume=bool(args.resume))
    try:
        trainer.run()
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        trainer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
