"""Screenshots of the web table for the README: ``python -m experiments.hosts.web.screenshot``.

Starts a server on a free local port, sets up a deal in which your seat holds a wildcard
straight, plays a few moves with headless Chromium (Debian's ``chromium``), and saves
``docs/web_table.png`` (cards selected, both readings offered) and ``docs/web_replay.png``.
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.hosts.web.screenshot")
    p.add_argument("--out", default="docs")
    args = p.parse_args(argv)
    import json
    import urllib.request

    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    from .app import create_app
    from .guard import server_config

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = Path(tempfile.mkdtemp(prefix="web_shot_"))
    srv = uvicorn.Server(server_config(create_app(tmp, 0.0), "127.0.0.1", port))
    threading.Thread(target=srv.run, daemon=True).start()
    while not srv.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    fix = _deal_with(["H7", "H8", "H9", "HT", "HJ", "D3", "D3", "SQ", "SQ", "BJ"])
    body = {
        "seats": ["human", "heuristic", "heuristic", "heuristic"],
        "seed": 1,
        "options": {"hands": fix, "levels": ["7", "5"], "leveling_team": 0, "leader": 0},
    }
    req = urllib.request.Request(
        base + "/api/tables", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    table = json.loads(urllib.request.urlopen(req).read())["table"]
    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1200,980",
    ):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    out = Path(args.out)
    try:
        driver.get(f"{base}/table/{table}")
        time.sleep(1.0)
        # your lead: select a wildcard straight; the page offers each reading
        for c in ("H7", "H8", "H9", "HT", "HJ"):
            driver.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{c}"]').click()
        driver.find_element(By.CSS_SELECTOR, "#legal-list summary").click()
        time.sleep(0.3)
        out.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out / "web_table.png"))
        print(f"wrote {out / 'web_table.png'}")
    finally:
        driver.quit()
        srv.should_exit = True
    return 0


def _deal_with(wanted: list[str], seed: int = 5) -> list[str]:
    """A random deal (R-1.2) in which seat 0 holds the ``wanted`` cards."""
    import numpy as np

    from guandan_env.core.cards import face_text, full_deck, parse_card

    deck = np.random.default_rng(seed).permutation(full_deck())
    hands = [deck[27 * s : 27 * s + 27].tolist() for s in range(4)]
    want = [parse_card(c) for c in wanted]
    need = list(want)
    for f in hands[0][:]:
        if f in need:
            need.remove(f)
    for f in need:
        owner = next(s for s in (1, 2, 3) if f in hands[s])
        give = next(g for g in hands[0] if g not in want or hands[0].count(g) > want.count(g))
        hands[owner].remove(f)
        hands[owner].append(give)
        hands[0].remove(give)
        hands[0].append(f)
    return [" ".join(face_text(f) for f in h) for h in hands]


if __name__ == "__main__":
    raise SystemExit(main())
