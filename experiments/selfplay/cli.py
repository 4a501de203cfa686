"""The command line of ``python -m experiments.selfplay`` (the package docstring tells a
run's stages)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments.selfplay.config import (
    DEFAULT_CONFIG_FILE,
    RunConfig,
    config_help,
    default_config_text,
    load_config,
    save_config,
)
from experiments.selfplay.trainer import SelfPlayTrainer


def choose_run_dir(cfg: RunConfig, named: bool) -> tuple[Path, str | None]:
    """``runs_dir/name`` and a note; if it holds a run, an unnamed run moves on to
    ``name-2``, ``name-3`` … (updating ``cfg.name``); a named one is an error."""
    root = Path(cfg.runs_dir)
    run_dir = root / cfg.name
    if not (run_dir / "config.yaml").exists():
        return run_dir, None
    if named:
        raise ValueError(f"{run_dir} already holds a run; use --resume {run_dir} or another name")
    k = 2
    while (root / f"{cfg.name}-{k}").exists():
        k += 1
    cfg.name = f"{cfg.name}-{k}"
    note = (
        f"{run_dir} already holds a run (left untouched; continue it with --resume {run_dir}); "
        f"this run goes to {root / cfg.name}"
    )
    return root / cfg.name, note


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.selfplay",
        description="Self-play PPO over legal candidates, warm-started from the heuristic.",
    )
    p.add_argument("overrides", nargs="*", help="config overrides key=value (dotted keys)")
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    p.add_argument(
        "--resume", metavar="RUN_DIR", help="continue runs/<name> from its newest checkpoint"
    )
    p.add_argument("--address", help="connect to an existing Ray cluster ('auto' or host:port)")
    p.add_argument("--name", help="run name (directory under runs_dir)")
    p.add_argument(
        "--help-config", action="store_true", help="list every config key, its default and meaning"
    )
    p.add_argument(
        "--write-default-config",
        metavar="PATH",
        help="write the defaults, commented, as YAML (configs/default.yaml is this file)",
    )
    args = p.parse_args(argv)
    if args.help_config:
        print(config_help())
        return 0
    if args.write_default_config:
        Path(args.write_default_config).write_text(default_config_text(), encoding="utf-8")
        return 0
    try:
        if args.resume:
            if args.config:
                raise ValueError("--resume takes the run's saved config.yaml; drop --config")
            run_dir = Path(args.resume)
            if not (run_dir / "config.yaml").exists():
                raise ValueError(f"--resume {run_dir}: no config.yaml (not a self-play run)")
            if not any(p.is_dir() for p in (run_dir / "checkpoints").glob("iter_*")):
                raise ValueError(
                    f"--resume {run_dir}: no checkpoint to resume from (the run stopped before "
                    "its first one); start it again without --resume"
                )
            cfg = load_config(run_dir / "config.yaml", args.overrides)
            note = None
        else:
            path = args.config
            if path is None and DEFAULT_CONFIG_FILE.exists():
                path = DEFAULT_CONFIG_FILE
            cfg = load_config(path, args.overrides)
            named = args.name is not None or any(o.startswith("name=") for o in args.overrides)
            if args.name:
                cfg.name = args.name
            run_dir, note = choose_run_dir(cfg, named)
        if args.address:
            cfg.ray.address = args.address
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if note:
        print(note, flush=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    trainer = SelfPlayTrainer(cfg, run_dir, resume=bool(args.resume))
    try:
        trainer.run()
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # during setup or the final evaluation
        print("\ninterrupted", file=sys.stderr)
        return 0
    finally:
        try:
            trainer.close()
        except KeyboardInterrupt:  # a second Ctrl-C while shutting down
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
