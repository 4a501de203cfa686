"""Write the worked-example notebooks, stored without outputs.

Run ``python notebooks/make_notebooks.py`` after editing the cells below.

The notebooks are generated so that their code is reviewed as plain Python here, and so that
they are stored without outputs or execution counts. ``tests/project/test_notebooks.py`` executes
them top to bottom. Sizes are small so they run in CI; each notebook says which numbers to
raise for real runs.

Outputs of notebooks 02 and 03 (``results/``, ``runs/``) go under the folder named by the
environment variable ``GUANDAN_WORKDIR`` (default: the repository root).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import os
from pathlib import Path

import guandan_env

ROOT = Path(guandan_env.__file__).resolve().parents[1]  # the repository
WORK = Path(os.environ.get("GUANDAN_WORKDIR", ROOT))  # where results/ and runs/ are written
WORK.mkdir(parents=True, exist_ok=True)
os.chdir(WORK)
print("working in", WORK)"""


def md(text: str):
    return new_markdown_cell(text.strip("\n"))


def code(text: str):
    return new_code_cell(text.strip("\n"))


# ---------------------------------------------------------------------- 01 quickstart
QUICKSTART = [
    md("""
# Guandan quickstart

This notebook walks through the environment: make it, look at a hand, read the action mask
and what each legal action means, then play a deal with the random and the rule-based
(heuristic) agents and render it. Rules: `RULES.md` (rule ids `R-…`).
"""),
    code("""
import numpy as np
import pandas as pd

import guandan_env
from guandan_env import NUM_ACTIONS, cards_for_action, declaration_text, describe_action
from guandan_env.core.cards import parse_rank"""),
    md("""
## Make the environment

`guandan_env.env(**config)` is a PettingZoo AEC environment with agents `player_0` …
`player_3` (seats 0 and 2 are one team). `mode="deal"` plays one deal per episode (a match's
first deal: both teams at 2, no tribute); `mode="match"` plays deals until a team passes A,
and `random_levels` / `random_tribute` start single deals from random levels and a random
previous finishing order (so tribute happens, R-7). One seed fixes the whole episode.
"""),
    code("""
env = guandan_env.env(mode="deal", render_mode="ansi")
env.reset(seed=7)
print(env.unwrapped.render_text())"""),
    md("""
## One seat's view

`env.last()` gives the observation of the agent to act: a flat float vector and the
`action_mask` over all 2,243 declared combinations. `info` carries the same facts in readable
form (`level`, the play on the table) and a structured `view` of what the seat may know
(R-8): its hand, cards left per seat, levels, the finishing order so far …
"""),
    code("""
agent = env.agent_selection
obs, reward, terminated, truncated, info = env.last()
print(agent, "| phase:", info["view"].phase, "| level:", info["level"], "| table:", info["table"])
print("observation", obs["observation"].shape, "mask", obs["action_mask"].shape, NUM_ACTIONS)
view = info["view"]
level = parse_rank(info["level"])
print("hand (level order, * = wildcard):", view.hand_text())
print("cards left per seat:", view.cards_left, "| team levels:", view.levels)"""),
    md("""
The observation is described slice by slice in the env's docstring
(`help(guandan_env.envs.aec)`); here are the slice names and sizes:
"""),
    code("""
from guandan_env.encoding.observation import OBS_SLICES

pd.DataFrame(
    [(name, s.start, s.stop - s.start) for name, s in OBS_SLICES.items()],
    columns=["slice", "start", "size"],
)"""),
    md("""
## The mask and what the legal actions mean

Every id is a declared combination (kind, compared key, natural cards, wildcards, suit for
straight flushes). `describe_action` and `declaration_text` say what an id means;
`cards_for_action` gives the physical cards the engine would play from this hand (the engine
picks suits by one documented rule). After a tribute the receiver's first decision is a
tribute *return* (the last 54 ids, R-7.1).
"""),
    code("""
legal = np.flatnonzero(obs["action_mask"])
hand_text = view.hand_text(mark_wild=False)
rows = []
for a in legal:
    d = describe_action(int(a), info["level"])
    rows.append(
        {
            "id": int(a),
            "kind": d["kind"],
            "declaration": declaration_text(int(a), info["level"]),
            "wilds": d["wilds"],
            "cards": " ".join(cards_for_action(hand_text, info["level"], int(a))),
        }
    )
legal_df = pd.DataFrame(rows)
print(len(legal_df), "legal actions;", legal_df["kind"].value_counts().to_dict())
legal_df.head(12)"""),
    md("""
### Wildcard readings are separate actions

With the ♥ level card as a wildcard the same cards can be declared in several ways (R-3.3):
`S3 S4 S5 S6 H2` at level 2 is a straight or a straight flush, 2-to-6 or 3-to-7. Each reading
is its own action id; the text helpers work on card strings directly.
"""),
    code("""
hand = "S3 S4 S5 S6 H2 DK"
for a in guandan_env.legal_actions(hand, "2"):
    cards = cards_for_action(hand, "2", a)
    if len(cards) == 5:
        print(f"{a:5d}  {declaration_text(a, '2'):40s} {' '.join(cards)}")"""),
    md("""
Following a play: pass `last` (the action on the table); pass (id 0) is then legal too.
"""),
    code("""
pair_of_fives = next(
    a for a in guandan_env.legal_actions("S5 D5", "2") if describe_action(a, "2")["kind"] == "pair"
)
answers = guandan_env.legal_actions("S3 S4 S5 S6 H2 DK", "2", last=pair_of_fives)
print([declaration_text(a, "2") for a in answers])"""),
    md("""
## Play a deal with agents

Agents follow one protocol: `reset(seed)` and `act(observation, info) -> action id`.
`agents.registry.make_agent` builds them from specs: `random`, `heuristic`,
`checkpoint:PATH`. Here the heuristic team (seats 0 and 2) plays the random team.
"""),
    code("""
from agents.registry import make_agent

seats = [make_agent(spec, seed=s) for s, spec in enumerate(["heuristic", "random"] * 2)]
for s, ag in enumerate(seats):
    ag.reset(seed=s)

env = guandan_env.env(mode="deal", render_mode="ansi")
env.reset(seed=3)
totals = dict.fromkeys(env.possible_agents, 0.0)
for name in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    totals[name] += reward
    if terminated or truncated:
        env.step(None)
        continue
    env.step(seats[int(name[-1])].act(obs, info))
print(env.render())
print("rewards:", totals)"""),
    md("""
Every move is in `env.unwrapped.log`, as text:
"""),
    code("""
print("\\n".join(env.unwrapped.log[:15]))
print("...")
print("\\n".join(env.unwrapped.log[-3:]))"""),
    md("""
## Save and replay a game

Any env game can be saved as a JSON replay (seed, scenario, actions and check values of the
final state). Replaying reproduces the game exactly; a replay that does not is refused. On
the command line: `python -m experiments.hosts.replay FILE` shows a replay step by step, and
`python -m experiments.hosts.play --save-replay FILE` saves a game you play in the terminal.
"""),
    code("""
import tempfile
from pathlib import Path

from guandan_env.core.cards import RANK_TEXT
from guandan_env.envs.replay import load, record_game, replay_game

rep = record_game(seats, seed=3, config={"mode": "deal"})
path = rep.save(Path(tempfile.mkdtemp()) / "deal.json")
game = replay_game(load(path))  # raises ValueError if the final state differs
print(len(rep.actions), "actions; finishing order", game.result.order)
print("team levels after the deal:", [RANK_TEXT[x] for x in rep.final["levels"]])"""),
    md("""
## A crafted scenario

`reset(options=...)` sets hands, levels, the leveling team, the previous finishing order
(tribute is applied), the leader and A-failures; missing keys come from the seed. Here team 1
plays at A after a deal in which seat 1 finished first and seat 2 last (single tribute).
"""),
    code("""
env = guandan_env.env(render_mode="ansi")
scenario = {"levels": ["9", "A"], "leveling_team": 1, "previous_order": [1, 0, 3, 2]}
env.reset(seed=1, options=scenario)
print(env.render())"""),
]


# ---------------------------------------------------------------------- 02 tournament
TOURNAMENT = [
    md("""
# Tournament analysis

Agents are compared in **duplicate** pairs: each seed is played twice with the same cards,
the two teams swapping seats, so card luck cancels within a pair
(`experiments/evaluation/duplicate.py`). `experiments.evaluation.tournament` runs a round
robin of such pairs and writes `results.jsonl` (one line per game),
`summary.json`/`summary.csv` (per matchup, with 95% bootstrap intervals over pairs),
`ratings.csv` (Bradley–Terry on the Elo scale) and two
plots. This notebook runs a small tournament, loads its files and plots ratings and
level-gain distributions. Raise `PAIRS` (hundreds to thousands) for real comparisons; the
command line equivalent is
`python -m experiments.evaluation.tournament heuristic random --pairs 1000 --random-tribute
--name h_vs_r`.
"""),
    code(SETUP),
    code("""
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.evaluation.tournament import format_tables, run_tournament

AGENTS = ["heuristic", "random"]  # any specs: random, heuristic, checkpoint:PATH
PAIRS = 12  # duplicate pairs per matchup: small for CI
OUT = Path("results/nb_tournament")

summary = run_tournament(
    AGENTS,
    pairs=PAIRS,
    seed=0,
    mode="deal",
    out=OUT,
    workers=1,
    config={"random_tribute": True},
    progress=False,
)
print(format_tables(summary))"""),
    md("""
## Load the results

Each line of `results.jsonl` is one game: the matchup (`a` vs `b`), the duplicate `pair`,
`swap` (0: A sits on seats 0/2, 1: on seats 1/3) and the game record with every deal's
finishing order and level gain. Flatten it to one row per deal, from A's side.
"""),
    code("""
rows = []
with open(OUT / "results.jsonl", encoding="utf-8") as f:
    for line in f:
        g = json.loads(line)
        team_a = g["swap"]  # swap 0: A is team 0; swap 1: A is team 1
        for d in g["record"]["deals"]:
            won = d["winner_team"] == team_a
            rows.append(
                {
                    "matchup": f"{g['a']} vs {g['b']}",
                    "pair": g["pair"],
                    "swap": g["swap"],
                    "a_won": won,
                    "a_gain": d["gain"] if won else -d["gain"],
                    "double_down": d["double_down"],
                    "steps": g["record"]["steps"],
                }
            )
deals = pd.DataFrame(rows)
print(len(deals), "deals")
deals.head()"""),
    code("""
pd.read_csv(OUT / "summary.csv").T  # one column per matchup"""),
    md("""
## Ratings

Bradley–Terry ratings fitted on the duplicate pair outcomes, with 95% intervals (they are
wide with few pairs).
"""),
    code("""
ratings = pd.read_csv(OUT / "ratings.csv")
fig, ax = plt.subplots(figsize=(6, 2.5))
ax.errorbar(
    ratings["rating"],
    ratings["agent"],
    xerr=[ratings["rating"] - ratings["rating_low"], ratings["rating_high"] - ratings["rating"]],
    fmt="o",
    capsize=4,
)
ax.set_xlabel("rating (Elo scale, 95% interval)")
ax.set_title(f"{PAIRS} duplicate pairs per matchup")
plt.show()
ratings"""),
    md("""
## Level-gain distributions

Per deal the winning team gains +3, +2 or +1 (partner 2nd, 3rd or last, R-6.3); from A's side
the gain is signed. The duplicate pair is the unit that cancels card luck: the second panel
shows A's gain per deal within each pair.
"""),
    code("""
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
values = np.arange(-3, 4)
for name, grp in deals.groupby("matchup"):
    counts = grp["a_gain"].value_counts().reindex(values, fill_value=0)
    axes[0].bar(values, counts / counts.sum(), alpha=0.6, label=name)
axes[0].set_xlabel("A's signed level gain per deal")
axes[0].set_ylabel("share of deals")
axes[0].legend()
per_pair = deals.groupby(["matchup", "pair"])["a_gain"].mean()
for name, grp in per_pair.groupby(level=0):
    axes[1].hist(grp.values, bins=np.arange(-3.25, 3.5, 0.5), alpha=0.6, label=name)
axes[1].set_xlabel("A's mean gain per deal in a duplicate pair")
axes[1].set_ylabel("pairs")
plt.tight_layout()
plt.show()"""),
    md("""
Both seatings of a pair, side by side: when A wins with the cards in one seating and loses
with the other seating's cards, the pair is a tie; the duplicate win rate counts pairs.
"""),
    code("""
by_swap = deals.pivot_table(index=["matchup", "pair"], columns="swap", values="a_gain")
by_swap.columns = ["gain, A on seats 0/2", "gain, A on seats 1/3"]
by_swap["pair total"] = by_swap.sum(axis=1)
by_swap.head(10)"""),
    md("""
The tournament also saved its own plots:
"""),
    code("""
from IPython.display import Image, display

display(Image(filename=str(OUT / "ratings.png")))
display(Image(filename=str(OUT / "level_gain_hist.png")))"""),
]


# ---------------------------------------------------------------------- 03 training
TRAINING = [
    md("""
# Self-play training

A smoke-sized self-play run (`python -m experiments.selfplay` with `configs/smoke.yaml`: a
small behaviour-cloning warm start from the heuristic, then PPO over legal candidates with
sampling in the driver, a tiny model, a few iterations), then its TensorBoard event files
read back and the learning curve plotted, and the checkpoint used as an agent. The numbers
mean nothing at this size; for a real run use `configs/default.yaml` (and `stop.time_s`,
`runners.num` …, see the README) and follow it live with `tensorboard --logdir runs`.
"""),
    code(SETUP),
    code("""
import shutil
import subprocess
import sys

ITERATIONS = 6  # smoke size; real runs train for hours
RUN = Path("runs/nb_smoke")
shutil.rmtree(RUN, ignore_errors=True)  # this notebook's own run: start fresh each time

cmd = [
    sys.executable, "-m", "experiments.selfplay",
    "--config", str(ROOT / "configs" / "smoke.yaml"),
    "--name", RUN.name,
    f"stop.iterations={ITERATIONS}", "eval.every_s=0.001", "eval.pairs=4", "checkpoint.every=3",
]
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
print(proc.stdout)
if proc.returncode != 0:
    raise RuntimeError(f"self-play failed ({proc.returncode}):\\n{proc.stderr[-3000:]}")
sorted(p.name for p in RUN.iterdir())"""),
    md("""
## Read the TensorBoard logs

The run directory holds TensorBoard event files (`events.out.tfevents.*`), the same numbers
as `progress.csv`/`eval.csv`, the resolved `config.yaml` and `checkpoints/`. TensorBoard's
`EventAccumulator` reads the scalars back (x axis: learner env steps).
"""),
    code("""
import matplotlib.pyplot as plt
import pandas as pd
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

events = EventAccumulator(str(RUN))
events.Reload()
tags = events.Tags()["scalars"]
scalars = pd.DataFrame(
    [(tag, e.step, e.value) for tag in tags for e in events.Scalars(tag)],
    columns=["tag", "env_steps", "value"],
)
print(len(tags), "scalar tags:", ", ".join(tags[:8]), "…")
curves = scalars.pivot_table(index="env_steps", columns="tag", values="value")
shown = [t for t in ("train/reward_vs_bc", "loss/entropy", "loss/value") if t in curves]
curves[shown]"""),
    md("""
## The learning curve

Training reward of the learner's team against the behaviour-cloned league member (level gain
per deal, ±1..3; only when the league plays, `league.self_share < 1`: the smoke config has
it, the default config is pure self-play), the policy's entropy, and the duplicate
evaluations against the baselines with their 95% intervals (run beside training; the final
one after it).
"""),
    code("""
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5))
if "train/reward_vs_bc" in curves:
    curves["train/reward_vs_bc"].dropna().plot(ax=axes[0], marker="o")
    axes[0].set_title("training reward vs the BC net")
else:
    curves["loss/value"].dropna().plot(ax=axes[0], marker="o")
    axes[0].set_title("value loss")
curves["loss/entropy"].dropna().plot(ax=axes[1], marker="o")
axes[1].set_title("policy entropy")
for opp in ("random", "heuristic"):
    tag = f"eval/{opp}/mean_level_gain"
    if tag not in curves:
        continue
    ev = curves[[tag, tag + "_ci_low", tag + "_ci_high"]].dropna()
    axes[2].plot(ev.index, ev[tag], marker="o", label=f"vs {opp}")
    axes[2].fill_between(ev.index, ev[tag + "_ci_low"], ev[tag + "_ci_high"], alpha=0.2)
axes[2].axhline(0, color="grey", linewidth=0.8)
axes[2].set_title("eval: mean level gain per deal (95% CI)")
axes[2].legend()
for ax in axes:
    ax.set_xlabel("learner env steps")
plt.tight_layout()
plt.show()"""),
    code("""
pd.read_csv(RUN / "eval.csv")"""),
    md("""
## The checkpoint as an agent

`checkpoint:PATH` (a run directory means its newest checkpoint) is an agent spec like
`random` or `heuristic`: use it in tournaments, `experiments.evaluation.duplicate.evaluate`, or play
against it with `python -m experiments.hosts.play --opponents checkpoint:runs/nb_smoke`.
"""),
    code("""
from agents.registry import make_agent
from experiments.evaluation.duplicate import evaluate

trained = make_agent(f"checkpoint:{RUN}", seed=0)
stats = evaluate(trained, "random", n_pairs=4, seed=1)
print(f"duplicate win rate vs random: {stats['dup_win_rate']:.2f} {stats['dup_win_rate_ci']}")
print(f"mean level gain per deal: {stats['mean_gain']:+.2f} {stats['mean_gain_ci']}")"""),
]


def build() -> dict[str, nbformat.NotebookNode]:
    """The notebooks by file name, without outputs."""
    books = {
        "01_quickstart.ipynb": QUICKSTART,
        "02_tournament_analysis.ipynb": TOURNAMENT,
        "03_training.ipynb": TRAINING,
    }
    out = {}
    for name, cells in books.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"cell-{i:02d}"  # stable ids: regenerating gives identical files
        nbformat.validate(nb)
        out[name] = nb
    return out


def main(out_dir: Path = HERE) -> None:
    for name, nb in build().items():
        nbformat.write(nb, out_dir / name)
        print("wrote", out_dir / name)


if __name__ == "__main__":
    main()
