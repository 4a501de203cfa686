"""Screenshots of the web table for the README: ``python -m experiments.hosts.web.screenshot``.

Starts a server on a free local port, sets up a deal in which your seat holds a wildcard
straight, leads a pair with headless Chromium (Debian's ``chromium``), lets the agents
answer, asks for a hint and saves the table in English and Chinese:
``docs/web_table_en.png`` and ``docs/web_table_zh.png`` (bombs and straight flushes grouped).
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
    hand = ["H7", "D3", "D3", "S8", "S9", "ST", "SJ", "SQ", "C5", "C5", "D5", "S5", "BJ", "RJ"]
    fix = _deal_with(hand)
    body = {
        "seats": ["human", "heuristic", "heuristic", "heuristic"],
        "seed": 1,
        "options": {"hands": fix, "levels": ["7", "5"], "leveling_team": 0, "leader": 0},
    }

    def req():
        data = json.dumps(body).encode()
        return urllib.request.Request(
            base + "/api/tables", data, {"Content-Type": "application/json"}
        )

    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,1150",
    ):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        for lang in ("en", "zh"):
            table = json.loads(urllib.request.urlopen(req()).read())["table"]
            driver.get(f"{base}/table/{table}?lang={lang}")
            your_turn = 'return document.body.dataset.yourTurn === "true"'
            _until(driver, your_turn)
            time.sleep(0.5)
            # lead a pair, let the agents answer, then ask for a hint and select a straight
            for k in (0, 1):
                threes = driver.find_elements(By.CSS_SELECTOR, '#hand .card[data-card="D3"]')
                click_card(driver, threes[k])
                time.sleep(0.1)
            v = driver.execute_script("return document.body.dataset.version")
            driver.find_element(By.CSS_SELECTOR, "#choices .choice").click()
            _until(driver, f'return document.body.dataset.version !== "{v}" && ' + your_turn[7:])
            if not driver.find_element(By.ID, "group").is_selected():
                driver.find_element(By.ID, "group").click()
            driver.find_element(By.ID, "hint").click()
            _until(driver, "return !!document.querySelector('#hint-text .hint-play')")
            time.sleep(0.3)
            path = out / f"web_table_{lang}.png"
            driver.save_screenshot(str(path))
            print(f"wrote {path}")
    finally:
        driver.quit()
        srv.should_exit = True
    return 0


def click_card(driver, card) -> None:
    """Click a card of the hand where a person does: its visible top strip (the cards of a
    column overlap; the strip shows its rank and suit)."""
    from selenium.webdriver.common.action_chains import ActionChains

    h = card.size["height"]
    ActionChains(driver).move_to_element_with_offset(card, 0, -h // 2 + 6).click().perform()


def _until(driver, script: str, timeout: float = 20.0) -> None:
    deadline = time.time() + timeout
    while not driver.execute_script(script):
        if time.time() > deadline:
            raise RuntimeError(f"timed out waiting for: {script}")
        time.sleep(0.05)


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
